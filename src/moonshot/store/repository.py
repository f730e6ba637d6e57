"""The games store: games and their action logs in SQL (SQLite file by default, PostgreSQL by URL).

A game is ``(rules, seed, actions)``, so that is what is kept: a ``games`` row (variant, seed,
players, status, times, final totals) and an append-only ``actions`` log, one row per action in
order, written as it happens. Replaying the actions gives back every event, so a server killed
mid-game restores its tables from here, and ``moonshot replay GAME_ID`` checks a finished game.

:class:`Store` is the async repository (SQLAlchemy 2 Core, aiosqlite / asyncpg): it opens the
database (SQLite in WAL mode), reads games (:class:`GameRecord`) and named values (``kv``), and
applies a batch of queued writes in one transaction (:meth:`Store.write_batch`). It does not queue,
retry or acknowledge writes (the writer, :mod:`moonshot.store.writer`, does) and keeps no ratings
math (:mod:`moonshot.store.ratings` reads and writes those rows).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import (
    create_engine,
    delete,
    event,
    insert,
    select,
    update,
)
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import StaticPool

from moonshot.core.actions import Action, action_from_dict
from moonshot.core.cards import format_cards, parse_card_set
from moonshot.core.engine import DealSpec, Game, replay
from moonshot.store import ratings as _ratings
from moonshot.store.schema import actions, games, kv, metadata, rules_named
from moonshot.store.urls import (
    DEFAULT_URL,
    PG_CONNECT_TIMEOUT,
    StoreError,
    make_private,
    prepare_sqlite_file,
    shown,
    sqlite_path,
    store_url,
    why_failed,
)

log = logging.getLogger("moonshot.store")


_INSERT_ACTIONS = insert(actions)
_INSERT_GAMES = insert(games)


def now() -> datetime:
    return datetime.now(UTC)


@dataclass
class GameRecord:
    id: str
    variant: str
    seed: int
    protocol: str
    players: list[dict[str, Any]]
    status: str
    created_at: datetime
    finished_at: datetime | None
    totals: list[int] | None
    winners: list[int] | None
    meta: dict[str, Any]
    actions: list[Action]
    forced: list[bool]

    def rebuild(self) -> Game:
        """Replay the stored actions (raises IllegalAction if the log is corrupt)."""
        return replay(rules_named(self.variant), self.seed, self.actions, self.deals())

    def deals(self) -> list[DealSpec] | None:
        """The fixed deals a game played (``meta.fixed_deals``, written when it started), else
        None: the seed dealt every hand."""
        meta = self.meta if isinstance(self.meta, dict) else {}
        stored = meta.get("fixed_deals")
        if isinstance(stored, list):
            return [deal_from_json(d) for d in stored]
        text = meta.get("deals")
        if isinstance(text, str):  # stored before the deals were kept as data: the game file's text
            if _game_file_parser is None:
                raise StoreError(f"game {self.id} keeps its deals as a game file's text, and no parser is registered")
            return _game_file_parser(text)
        return None


# Parses the game-file text older records keep in ``meta.deals`` (Kierki's format); the protocol's
# parser is registered by whoever composes the program (the server, the CLI): the store imports no
# protocol.
_game_file_parser: Callable[[str], list[DealSpec]] | None = None


def register_game_file_parser(parse: Callable[[str], list[DealSpec]]) -> None:
    """How to read the fixed deals of records that keep them as a game file's text."""
    global _game_file_parser
    _game_file_parser = parse


def deal_to_json(d: DealSpec) -> dict[str, Any]:
    """A fixed deal as the store keeps it in a game's ``meta.fixed_deals``: the hands' cards (N, E,
    S, W), the deal's kind (a Kierki contract; 0: none) and who leads (None: the two of clubs)."""
    return {"hands": [" ".join(format_cards(h)) for h in d.hands], "kind": d.kind, "leader": d.leader}


def deal_from_json(v: Any) -> DealSpec:
    hands = tuple(parse_card_set(str(h).split()) for h in v["hands"])
    leader = v.get("leader")
    return DealSpec(
        (hands[0], hands[1], hands[2], hands[3]), int(v.get("kind", 0)), None if leader is None else int(leader)
    )


# Test-only fault injection: the path of a control file. While it holds ``fail``, every write of
# the store's writer fails as a disk or a lost connection would; while it holds ``readonly``, the
# store is opened again read-only (SQLite: ``mode=ro``; PostgreSQL: ``default_transaction_read_only``),
# so the database itself refuses the writes; empty or absent: normal. Tests run as root, where a
# chmod stops no write: this is how they make a store unwritable for a while.
FAULTS_ENV = "MOONSHOT_TEST_STORE_FAULTS"
CHECKPOINT_ROWS = 4000  # SQLite: rows the loop writes between WAL checkpoints (done in a thread)


class Store:
    def __init__(self, engine: AsyncEngine, url: str, engine_kwargs: dict[str, Any] | None = None) -> None:
        self.engine = engine
        self.url = url
        self._engine_kwargs = dict(engine_kwargs or {})
        self._writable = engine  # the read-write engine (self.engine is another while a fault makes it read-only)
        self._read_only: AsyncEngine | None = None
        self._writer: AsyncConnection | None = None  # write_batch's connection
        self._sync_engine: Engine | None = None  # SQLite: write_batch's own thread and connection
        self._sync_conn: Connection | None = None
        if url.startswith("sqlite") and sqlite_path(url) is not None:
            # a locked file fails at once (the batch then goes the async way, which waits in a thread)
            self._sync_engine = create_engine(
                make_url(url).set(drivername="sqlite"), connect_args={"timeout": 0}, poolclass=StaticPool
            )
            event.listen(self._sync_engine, "connect", _sqlite_writer_pragmas)
        # SQLite: the fast path's inserts, by table and columns (see _write_sync)
        self._binds: dict[tuple[str, tuple[str, ...]], _InsertBinds] = {}
        self._since_checkpoint = 0  # rows written in the loop since the last WAL checkpoint
        self._checkpoint: asyncio.Task[None] | None = None
        self._write_lock = asyncio.Lock()
        faults = os.environ.get(FAULTS_ENV)
        self._faults = Path(faults) if faults else None

    def _fault(self) -> str:
        assert self._faults is not None
        try:
            return self._faults.read_text().strip()
        except OSError:
            return ""

    async def _inject_faults(self) -> None:
        """Apply the fault the control file names (see ``FAULTS_ENV``) before a write."""
        mode = self._fault()
        if mode == "fail":
            raise OperationalError("write_batch", None, OSError(5, f"injected store fault ({FAULTS_ENV})"))
        if mode == "readonly" and self._read_only is None:
            self._read_only = self._open_read_only()
            self.engine = self._read_only
            log.warning("event=store_fault mode=readonly")
        elif mode != "readonly" and self._read_only is not None:
            self.engine = self._writable
            await self._read_only.dispose()
            self._read_only = None
            log.warning("event=store_fault mode=none")

    def _open_read_only(self) -> AsyncEngine:
        u = make_url(self.url)
        kwargs = dict(self._engine_kwargs)
        if u.get_backend_name() == "sqlite":
            u = u.set(database=f"file:{u.database}", query={"mode": "ro", "uri": "true"})
        else:
            connect_args = dict(kwargs.get("connect_args", {}))
            settings = dict(connect_args.get("server_settings", {}))
            settings["default_transaction_read_only"] = "on"
            connect_args["server_settings"] = settings
            kwargs["connect_args"] = connect_args
        return create_async_engine(u, **kwargs)

    @classmethod
    async def open(cls, url: str = DEFAULT_URL, schema: str | None = None, create: bool = True) -> Store:
        """Open (creating the tables if needed). ``url`` as :func:`store_url` takes it; ``schema``:
        a PostgreSQL schema to use (tests); ``create=False``: a missing SQLite file is an error
        (commands that only read). Raises :class:`StoreError` when the store cannot be used."""
        url = store_url(url)
        path = sqlite_path(url)
        if path is not None:
            prepare_sqlite_file(path, create)
        kwargs: dict[str, Any] = {}
        if url.startswith("postgresql"):
            kwargs["pool_pre_ping"] = True
            connect_args: dict[str, Any] = {"timeout": PG_CONNECT_TIMEOUT}
            if schema:
                connect_args["server_settings"] = {"search_path": schema}
            kwargs["connect_args"] = connect_args
        try:
            engine = create_async_engine(url, **kwargs)
        except ImportError as e:  # store_url found the driver, but it does not import
            raise StoreError(f"cannot load the database driver for {shown(url)}: {e}") from None
        if url.startswith("sqlite"):
            # WAL: `moonshot games` can read while the server writes; NORMAL sync survives a
            # killed process (not a power cut) without an fsync per batch
            event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        try:
            async with engine.begin() as conn:
                await conn.run_sync(metadata.create_all)
        except Exception as e:
            await engine.dispose()
            raise StoreError(f"cannot open the game store {shown(url)}: {why_failed(e)}") from e
        if path is not None:
            make_private(path)  # the -wal/-shm files WAL mode just made (SQLite gives them the file's mode)
        return cls(engine, url, kwargs)

    async def close(self) -> None:
        if self._checkpoint is not None:
            await self._checkpoint
        self._close_sync()
        if self._writer is not None:
            with contextlib.suppress(Exception):
                await self._writer.close()
            self._writer = None
        if self._read_only is not None:
            await self._read_only.dispose()
        await self._writable.dispose()

    async def create_game(
        self,
        game_id: str,
        variant: str,
        seed: int,
        players: list[dict[str, Any]],
        protocol: str = "",
        meta: dict[str, Any] | None = None,
    ) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(
                insert(games).values(
                    id=game_id,
                    variant=variant,
                    seed=seed,
                    protocol=protocol,
                    players=players,
                    status="running",
                    created_at=now(),
                    meta=meta or {},
                )
            )

    async def write_batch(self, ops: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Apply queued writes in order, in one transaction, on the writer's own connection
        (kept open between batches: no pool round trip per commit; dropped after any error, so
        the next batch connects again)."""
        async with self._write_lock:
            if self._faults is not None:
                await self._inject_faults()
            if self._sync_engine is not None and self.engine is self._writable and all(op != "rate" for op, _ in ops):
                try:
                    self._write_sync(ops)
                except OperationalError as e:  # locked, read-only, full...: the async way says which
                    log.debug("event=store_fast_write_failed error=%s", why_failed(e))
                else:
                    self._since_checkpoint += len(ops)
                    if self._since_checkpoint >= CHECKPOINT_ROWS and self._checkpoint is None:
                        self._since_checkpoint = 0
                        self._checkpoint = asyncio.get_running_loop().create_task(self._wal_checkpoint())
                    return
            conn = self._writer
            if conn is None or conn.engine is not self.engine:
                if conn is not None:
                    self._writer = None
                    with contextlib.suppress(Exception):
                        await conn.close()
                conn = self._writer = await self.engine.connect()
            try:
                async with conn.begin():
                    await self._write_ops(conn, ops)
            except BaseException:
                self._writer = None
                with contextlib.suppress(Exception):
                    await conn.invalidate()
                raise

    async def _write_ops(self, conn: AsyncConnection, ops: Sequence[tuple[str, dict[str, Any]]]) -> None:
        for stmt, params in _statements(ops):
            if isinstance(stmt, str):  # "rate": the ratings module's own reads and writes
                await _ratings.rate_stored_game(conn, params)
            elif params is None:
                await conn.execute(stmt)
            else:
                await conn.execute(stmt, params)

    # SQLite: the writer's batches run in the event loop on a plain sqlite3 connection (a WAL commit
    # without fsync takes tens of microseconds; aiosqlite hands each statement to its thread four
    # times a batch, and each hand-off waits for the GIL while the loop is busy). That connection
    # never checkpoints (the fsync); a task does, in aiosqlite's thread, every CHECKPOINT_ROWS rows.
    def _write_sync(self, ops: Sequence[tuple[str, dict[str, Any]]]) -> None:
        assert self._sync_engine is not None
        conn = self._sync_conn
        if conn is None:
            conn = self._sync_conn = self._sync_engine.connect()
        try:
            if all(op in _FAST_OPS for op, _ in ops):
                # most batches: action rows (and new games' rows) only. An executemany per run of
                # like rows and one commit on the driver's own connection, each value bound as
                # SQLAlchemy binds it (the same text in the file), with no execution context built
                dbapi = conn.connection.dbapi_connection
                assert dbapi is not None
                try:
                    for op, keys, rows in _runs(ops):
                        binds = self._binds.get((op, keys))
                        if binds is None:
                            binds = self._binds[op, keys] = _InsertBinds(_FAST_OPS[op], keys, conn.dialect)
                        dbapi.executemany(binds.sql, [binds.row(values) for values in rows])
                    dbapi.commit()
                except BaseException:
                    with contextlib.suppress(Exception):
                        dbapi.rollback()
                    raise
                return
            with conn.begin():
                for stmt, params in _statements(ops):
                    assert not isinstance(stmt, str)
                    conn.execute(stmt) if params is None else conn.execute(stmt, params)
        except BaseException:
            self._sync_conn = None
            with contextlib.suppress(Exception):
                conn.invalidate()
            raise

    async def _wal_checkpoint(self) -> None:
        try:
            async with self._writable.connect() as conn:
                await conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")
        except Exception as e:
            log.warning("event=store_checkpoint_failed error=%s", why_failed(e))
        finally:
            self._checkpoint = None

    def _close_sync(self) -> None:
        if self._sync_conn is not None:
            with contextlib.suppress(Exception):
                self._sync_conn.close()
            self._sync_conn = None
        if self._sync_engine is not None:
            self._sync_engine.dispose()

    async def list_games(self, status: str | None = None, limit: int = 100, offset: int = 0) -> list[dict[str, Any]]:
        q = select(games).order_by(games.c.created_at.desc()).limit(limit).offset(offset)
        if status is not None:
            q = q.where(games.c.status == status)
        async with self.engine.connect() as conn:
            return [dict(r._mapping) for r in await conn.execute(q)]

    async def load(self, game_id: str) -> GameRecord | None:
        async with self.engine.connect() as conn:
            row = (await conn.execute(select(games).where(games.c.id == game_id))).first()
            if row is None:
                return None
            acts = await conn.execute(select(actions).where(actions.c.game_id == game_id).order_by(actions.c.idx))
            alist = list(acts)
        g = row._mapping
        return GameRecord(
            id=g["id"],
            variant=g["variant"],
            seed=int(g["seed"]),
            protocol=g["protocol"],
            players=list(g["players"] or []),
            status=g["status"],
            created_at=g["created_at"],
            finished_at=g["finished_at"],
            totals=g["totals"],
            winners=g["winners"],
            meta=dict(g["meta"] or {}),
            actions=[action_from_dict(_json(a._mapping["action"])) for a in alist],
            forced=[bool(a._mapping["forced"]) for a in alist],
        )

    async def unfinished(self) -> list[GameRecord]:
        async with self.engine.connect() as conn:
            ids = [r[0] for r in await conn.execute(select(games.c.id).where(games.c.status == "running"))]
        out = []
        for gid in ids:
            rec = await self.load(gid)
            if rec is not None:
                out.append(rec)
        return out

    async def put_value(self, key: str, value: Any) -> None:
        """Set the named JSON value ``key`` (insert or replace)."""
        async with self.engine.begin() as conn:
            await conn.execute(delete(kv).where(kv.c.key == key))
            await conn.execute(insert(kv).values(key=key, value=value))

    async def get_value(self, key: str) -> Any:
        async with self.engine.connect() as conn:
            row = (await conn.execute(select(kv.c.value).where(kv.c.key == key))).first()
        return None if row is None else row[0]

    async def delete_value(self, key: str) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(delete(kv).where(kv.c.key == key))

    async def values(self, prefix: str) -> dict[str, Any]:
        """Every named value whose key starts with ``prefix``."""
        async with self.engine.connect() as conn:
            rows = await conn.execute(select(kv).where(kv.c.key.startswith(prefix, autoescape=True)))
            return {r._mapping["key"]: r._mapping["value"] for r in rows}

    async def mark(self, game_id: str, status: str) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(update(games).where(games.c.id == game_id).values(status=status))

    # ratings (moonshot.store.ratings): kept up to date by the writer as games finish
    async def leaderboard(self, variant: str | None = None, limit: int = 50) -> dict[str, list[dict[str, Any]]]:
        """Each rating pool's best ``limit`` players by ordinal (only ``variant``'s pool if given)."""
        return await _ratings.leaderboard(self.engine, variant, limit)

    async def player_games(self, variant: str, player: str, bot: bool = False, limit: int = 50) -> list[dict[str, Any]]:
        """A player's rated games in ``variant``'s pool, newest first."""
        return await _ratings.player_games(self.engine, variant, player, bot, limit)

    async def rated_people(self) -> set[str]:
        """Every rated person (not a moonshot bot), by name as rated."""
        return await _ratings.rated_people(self.engine)

    async def rated_in(self, game_id: str) -> list[str]:
        """The people a finished game was rated for ([] when it was not rated)."""
        return await _ratings.rated_in(self.engine, game_id)

    async def rebuild_ratings(self, progress: Any = None) -> int:
        """Rate every finished game again, in finish order (same result as rating them as they
        finished); returns how many games were rated."""
        return await _ratings.rebuild(self.engine, progress)


def _statements(ops: Sequence[tuple[str, dict[str, Any]]]) -> Iterator[tuple[Any, Any]]:
    """The statements that carry out queued ops, in order: ``(statement, params or None)``, or
    ``("rate", game_id)`` for a rating (async only). Consecutive actions are one executemany."""
    rows: list[dict[str, Any]] = []
    for op, values in ops:
        if op == "action":
            rows.append(values)
            continue
        if rows:
            yield _INSERT_ACTIONS, rows
            rows = []
        if op == "game":
            yield _INSERT_GAMES, [values]
        elif op == "kv_set":
            yield delete(kv).where(kv.c.key == values["key"]), None
            yield insert(kv).values(key=values["key"], value=values["value"]), None
        elif op == "kv_delete":
            yield delete(kv).where(kv.c.key == values["key"]), None
        elif op == "status":
            values = dict(values)  # kept intact: a failed batch is written again op by op
            gid = values.pop("id")
            yield update(games).where(games.c.id == gid).values(**values), None
        elif op == "rate":
            yield "rate", values["id"]
    if rows:
        yield _INSERT_ACTIONS, rows


_FAST_OPS = {"action": actions, "game": games}  # ops the SQLite fast path writes, and their tables


def _runs(ops: Sequence[tuple[str, dict[str, Any]]]) -> Iterator[tuple[str, tuple[str, ...], list[dict[str, Any]]]]:
    """Consecutive ops of one kind and the same columns, in order: ``(op, columns, values)``."""
    run: list[dict[str, Any]] = []
    kind = ""
    keys: tuple[str, ...] = ()
    for op, values in ops:
        k = tuple(values)
        if run and (op != kind or k != keys):
            yield kind, keys, run
            run = []
        kind, keys = op, k
        run.append(values)
    if run:
        yield kind, keys, run


class _InsertBinds:
    """An insert of ``columns`` into ``table`` as the SQLite driver takes it: the statement
    SQLAlchemy compiles for it, each value bound by its column type's own bind processor (JSON
    text, the dialect's datetime text, 0/1), and a column left out given its default as
    SQLAlchemy would, so a row written this way reads back as any other."""

    def __init__(self, table: Any, columns: tuple[str, ...], dialect: Any) -> None:
        unknown = set(columns) - set(table.c.keys())
        if unknown:
            raise KeyError(f"no columns {sorted(unknown)} in {table.name}")
        # in the table's order, as SQLAlchemy compiles the VALUES
        cols = [c for c in table.c if c.name in columns or (c.default is not None and c.default.is_scalar)]
        self.sql = str(insert(table).values({c.name: None for c in cols}).compile(dialect=dialect))
        self.names = [c.name for c in cols]
        self.defaults = [None if c.default is None else c.default.arg for c in cols]
        self.procs = [c.type._cached_bind_processor(dialect) for c in cols]
        head = self.sql[self.sql.index("(") + 1 : self.sql.index(")")]
        assert [n.strip() for n in head.split(",")] == self.names, self.sql  # positional, in this order

    def row(self, values: dict[str, Any]) -> tuple[Any, ...]:
        out = []
        for name, default, proc in zip(self.names, self.defaults, self.procs):
            v = values.get(name, default)
            out.append(proc(v) if proc is not None else v)
        return tuple(out)


def _sqlite_writer_pragmas(dbapi_connection: Any, _record: Any) -> None:
    _sqlite_pragmas(dbapi_connection, _record)
    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA wal_autocheckpoint=0")  # its checkpoints run in a thread (Store._wal_checkpoint)
    cur.close()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def _json(v: Any) -> Any:
    return json.loads(v) if isinstance(v, str) else v
