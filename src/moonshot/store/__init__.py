"""The game store: games and their action logs in SQL (SQLite file by default, PostgreSQL by URL).

A game is ``(rules, seed, actions)``, so that is what is kept: a ``games`` row (variant, seed,
players, status, times, final totals) and an append-only ``actions`` log, one row per action in
order, written as it happens. Replaying the actions gives back every event, so a server killed
mid-game restores its tables from here, and ``moonshot replay GAME_ID`` checks a finished game.

:class:`Store` is the async repository (SQLAlchemy 2 Core, aiosqlite / asyncpg).
:class:`StoreRecorder` is the table-side writer: tables call it without waiting (it is a
:class:`~moonshot.runtime.table.Recorder`), it queues the rows and one task writes them in order,
one transaction per batch (what was queued while the last write ran: group commit), then tells
each table how many of its actions are durable; a table shows nobody an action before that, so
a killed server loses nothing a player was shown. A store that cannot be written is retried with
capped, jittered backoff while the tables pause (``store_unavailable`` / ``store_recovered``).
SQLite runs in WAL mode.

URLs: :func:`store_url` turns what people type (``sqlite:///PATH``, ``postgresql://…``,
``postgres://…``) into the async-driver form SQLAlchemy needs, and :class:`StoreError` says in
one line why a store cannot be used (unknown scheme, missing driver, unreachable server,
unwritable path): the CLI shows it as a ``--db`` usage error. A SQLite file, and its ``-wal`` and
``-shm`` files, are private to the user (0600): they hold every running game's seed, so every hand.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import importlib
import importlib.util
import json
import logging
import os
import random
import socket
import stat
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

from sqlalchemy import (
    create_engine,
    delete,
    event,
    insert,
    select,
    update,
)
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, DataError, DBAPIError, IntegrityError, OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import StaticPool

from moonshot.bots.registry import spec_of
from moonshot.core.actions import Action, action_from_dict, action_to_dict
from moonshot.core.engine import DealSpec, Game, replay
from moonshot.store import ratings as _ratings
from moonshot.store.schema import actions, games, kv, metadata, register_rules, rules_named

log = logging.getLogger("moonshot.store")

DEFAULT_URL = "sqlite+aiosqlite:///moonshot.db"
# the format of a game's fixed deals in ``meta.deals`` (Kierki's game file), found by name as the
# rules a protocol defines are (store.schema), so the store imports no protocol
FIXED_DEALS_FORMAT = ("moonshot.protocols.kierki.gamefile", "parse_game")
PG_CONNECT_TIMEOUT = 10.0  # seconds: an unreachable PostgreSQL server is reported, not waited on for a minute


class StoreError(Exception):
    """A game store that cannot be used; the message says why in one line (shown for ``--db``)."""


# backend -> (the async driver moonshot uses, where it comes from)
_ASYNC_DRIVERS = {
    "sqlite": ("aiosqlite", "a moonshot dependency: reinstall moonshot"),
    "postgresql": ("asyncpg", "pip install 'moonshot[postgres]'"),
}
_BACKEND_ALIASES = {"sqlite": "sqlite", "postgresql": "postgresql", "postgres": "postgresql"}


def store_url(url: str) -> str:
    """The URL with its async driver: ``sqlite:///F`` -> ``sqlite+aiosqlite:///F``,
    ``postgresql://…`` and ``postgres://…`` -> ``postgresql+asyncpg://…``; explicit async forms
    are kept. Raises :class:`StoreError` for anything else (no I/O is done)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        hint = f"; for a SQLite file write sqlite:///{url}" if url else ""
        raise StoreError(f"{url!r} is not a database URL (expected sqlite:///FILE or postgresql://USER@HOST/DB){hint}")
    backend_name, _, driver = scheme.lower().partition("+")
    backend = _BACKEND_ALIASES.get(backend_name)
    if backend is None:
        raise StoreError(f"unknown database {scheme!r} in {_shown(url)}: moonshot stores games in sqlite or postgresql")
    wanted, source = _ASYNC_DRIVERS[backend]
    if driver and driver != wanted:
        raise StoreError(f"driver {driver!r} is not supported: {backend} runs on {wanted} ({backend}+{wanted}://…)")
    if importlib.util.find_spec(wanted) is None:
        raise StoreError(f"{backend} needs the {wanted} driver, which is not installed: {source}")
    full = f"{backend}+{wanted}://{rest}"
    try:
        make_url(full)
    except (ArgumentError, ValueError) as e:  # ValueError: a port that is not a number
        raise StoreError(f"cannot read the database URL {scheme}://…: {e}") from None
    return full


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL (None: not SQLite, or an in-memory database)."""
    u = make_url(url)
    if u.get_backend_name() != "sqlite" or not u.database or u.database == ":memory:":
        return None
    if u.query.get("uri") or u.database.startswith("file:"):
        return None  # SQLite URI filenames: the path is SQLite's to resolve
    return Path(u.database)


def _shown(url: str) -> str:
    """The URL for messages, password hidden."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "the given URL"


def _prepare_sqlite_file(path: Path, create: bool) -> None:
    """Create the file 0600 before SQLite opens it (SQLite would create it 0644, and gives its
    -wal/-shm files the database file's mode), or check an existing one; tighten older files."""
    if path.is_dir():
        raise StoreError(f"{path} is a directory, not a database file")
    if not path.exists():
        if not create:
            raise StoreError(f"no game store at {path}: the file does not exist")
        parent = path.parent
        if not parent.is_dir():
            why = "is not a directory" if parent.exists() else "does not exist"
            raise StoreError(f"cannot create {path}: {parent} {why}")
        try:
            os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
        except FileExistsError:
            pass  # created meanwhile by another process: checked below like any existing file
        except OSError as e:
            raise StoreError(f"cannot create {path}: {e.strerror or e}") from None
    if not os.access(path, os.R_OK | os.W_OK):
        raise StoreError(f"{path} is not readable and writable by this user")
    if not os.access(path.parent, os.W_OK | os.X_OK):
        raise StoreError(f"cannot write in {path.parent}: SQLite keeps its -wal and -shm files beside {path.name}")
    _make_private(path)


def _make_private(path: Path) -> None:
    """Take group and other permissions off the database and its companion files (ours only)."""
    for p in (path, *(path.with_name(path.name + suffix) for suffix in ("-wal", "-shm", "-journal"))):
        try:
            st = p.stat()
            if st.st_uid == os.getuid() and st.st_mode & 0o077:
                os.chmod(p, stat.S_IMODE(st.st_mode) & 0o600)
        except FileNotFoundError:
            continue
        except OSError as e:
            log.warning("event=store_chmod_failed path=%s error=%s", p, e)


def _reason(e: BaseException) -> str:
    """One line saying why opening failed (the driver's own error, not SQLAlchemy's wrapping)."""
    orig: BaseException = e.orig if isinstance(e, DBAPIError) and e.orig is not None else e
    while orig.__cause__ is not None:  # SQLAlchemy's adapters wrap the driver's own exception
        orig = orig.__cause__
    if isinstance(orig, ConnectionRefusedError):
        return "connection refused (is the server running, on that host and port?)"
    if isinstance(orig, TimeoutError):
        return f"no answer within {PG_CONNECT_TIMEOUT:g} s"
    if isinstance(orig, socket.gaierror):
        return f"cannot resolve the host name ({orig.strerror or orig})"
    text = str(orig).strip().splitlines()
    return f"{type(orig).__name__}: {text[0]}" if text else type(orig).__name__


_INSERT_ACTIONS = insert(actions)


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
        """The fixed deals a game played (a Kierki game file's text in ``meta.deals``), else None:
        the seed dealt every hand."""
        text = self.meta.get("deals") if isinstance(self.meta, dict) else None
        if not isinstance(text, str):
            return None
        module, attr = FIXED_DEALS_FORMAT
        parse: Any = getattr(importlib.import_module(module), attr)
        return cast("list[DealSpec]", parse(text))


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
            _prepare_sqlite_file(path, create)
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
            raise StoreError(f"cannot load the database driver for {_shown(url)}: {e}") from None
        if url.startswith("sqlite"):
            # WAL: `moonshot games` can read while the server writes; NORMAL sync survives a
            # killed process (not a power cut) without an fsync per batch
            event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        try:
            async with engine.begin() as conn:
                await conn.run_sync(metadata.create_all)
        except Exception as e:
            await engine.dispose()
            raise StoreError(f"cannot open the game store {_shown(url)}: {_reason(e)}") from e
        if path is not None:
            _make_private(path)  # the -wal/-shm files WAL mode just made (SQLite gives them the file's mode)
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
                    log.debug("event=store_fast_write_failed error=%s", _reason(e))
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
            log.warning("event=store_checkpoint_failed error=%s", _reason(e))
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
            yield insert(games).values(**values), None
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


class _Op:
    """One queued write; ``table``/``ticket``: after it commits, the table's first ``ticket``
    actions are durable (the ``game`` row counts as ticket 0)."""

    __slots__ = ("kind", "table", "ticket", "values")

    def __init__(self, kind: str, values: dict[str, Any], table: Any = None, ticket: int = -1) -> None:
        self.kind = kind
        self.values = values
        self.table = table
        self.ticket = ticket


def backoff_delay(attempt: int, base: float, cap: float, rng: random.Random) -> float:
    """Seconds before retry ``attempt`` (0, 1, ...): ``base * 2**attempt``, at most ``cap``, and
    then a random 50-100% of that, so processes that failed together do not retry together."""
    return min(cap, base * float(2 ** min(attempt, 60))) * rng.uniform(0.5, 1.0)


def transient(e: BaseException) -> bool:
    """An error that says the store cannot be written now (retry it), not that the row is bad.

    A database that refuses the row itself (a constraint, a value it cannot hold) or a value
    that cannot even be sent (``StatementError`` around a ``TypeError``) will refuse it again:
    that is a bug, logged and skipped. Everything else the driver raises (a read-only file, a
    full disk, a lost connection, a locked database, a server in recovery) and any ``OSError``
    is the store being away, and the write is retried until it goes through."""
    if isinstance(e, (IntegrityError, DataError)):
        return False
    return isinstance(e, (DBAPIError, OSError))


class StoreRecorder:
    """Queues tables' history for the store; one task writes it in order (group commit) and
    tells each table which of its actions are durable (see :meth:`Table.durable`).

    While the store cannot be written, the batch is retried with capped, jittered exponential
    backoff, in order, never dropped; every subscribed table is paused (``storage_paused``) and
    resumed once a write goes through again (``storage_resumed``)."""

    acknowledges = True  # tables wait for ``durable`` before they show an action to anyone

    def __init__(
        self,
        store: Store,
        protocol: str = "",
        batch_delay: float = 0.0,
        retry_base: float = 0.05,
        retry_cap: float = 2.0,
        max_batch: int = 500,
    ) -> None:
        self.store = store
        self.protocol = protocol
        self.batch_delay = batch_delay  # seconds to gather more rows before a write (0: group commit only)
        self.retry_base = retry_base
        self.retry_cap = retry_cap
        self.max_batch = max_batch
        self._queue: collections.deque[_Op] = collections.deque()
        self._wake = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None
        self._tables: weakref.WeakSet[Any] = weakref.WeakSet()  # told of pauses and recoveries
        self._rng = random.Random()
        self.written = 0
        self.errors = 0
        self.retries = 0
        self.available = True
        self.unavailable_since: float | None = None  # loop time of the first failed write of an outage
        self.outages = 0
        self._why = ""
        self._busy = False
        self._last_finish: datetime | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="store-writer")

    async def close(self, timeout: float = 30.0) -> None:
        """Write everything queued, then stop. A store still away after ``timeout`` seconds gets
        nothing more: what is left was never acknowledged (no table showed it), and a restart
        replays what was written."""
        if self._task is None:
            return
        self._closing = True
        self._wake.set()
        try:
            await asyncio.wait_for(asyncio.shield(self._task), timeout)
        except TimeoutError:
            log.error("event=store_unwritten ops=%d reason=the store stayed unavailable at shutdown", len(self._queue))
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._task = None

    async def flush(self) -> None:
        """Wait until everything queued so far is written (however long the store is away)."""
        while self._queue or self._busy:
            await asyncio.sleep(0.005)

    def subscribe(self, table: Any) -> None:
        """``table`` hears ``storage_paused``/``storage_resumed`` (it is told at once if the store is away)."""
        self._tables.add(table)
        if not self.available:
            table.storage_paused(self._why)

    def unsubscribe(self, table: Any) -> None:
        self._tables.discard(table)

    def _put(self, op: _Op) -> None:
        self._queue.append(op)
        self._wake.set()

    async def _run(self) -> None:
        while True:
            if not self._queue:
                if self._closing:
                    return
                self._wake.clear()
                await self._wake.wait()
                continue
            self._busy = True
            if self.batch_delay:
                await asyncio.sleep(self.batch_delay)
            # rows queued while the last write ran go in this one: one commit for all of them
            n = min(len(self._queue), self.max_batch)
            ops = [self._queue.popleft() for _ in range(n)]
            await self._write(ops)
            self._acknowledge(ops)
            self._busy = False

    async def _write(self, ops: list[_Op]) -> None:
        """Write ``ops`` in one transaction, retrying while the store is away; a batch the
        database refuses as invalid is written op by op, and only the invalid op is skipped."""
        attempt = 0
        while True:
            try:
                await self.store.write_batch([(op.kind, op.values) for op in ops])
            except asyncio.CancelledError:
                raise
            except Exception as e:
                if transient(e):
                    self._unavailable(e)
                    delay = backoff_delay(attempt, self.retry_base, self.retry_cap, self._rng)
                    attempt += 1
                    self.retries += 1
                    log.debug("event=store_retry attempt=%d delay=%.3f error=%s", attempt, delay, _reason(e))
                    await asyncio.sleep(delay)
                    continue
                if len(ops) > 1:
                    log.warning("event=store_batch_refused ops=%d error=%s", len(ops), _reason(e))
                    for op in ops:
                        await self._write([op])
                    return
                self.errors += 1
                log.error("event=store_write_failed op=%s error=%s", ops[0].kind, _reason(e))
                return
            self.written += len(ops)
            if not self.available:
                self._recovered()
            return

    def _unavailable(self, e: BaseException) -> None:
        if not self.available:
            return
        self.available = False
        self.outages += 1
        self.unavailable_since = asyncio.get_running_loop().time()
        self._why = _reason(e)
        log.error("event=store_unavailable queued=%d error=%s", len(self._queue), self._why)
        for table in list(self._tables):
            table.storage_paused(self._why)

    def _recovered(self) -> None:
        since = self.unavailable_since
        paused = asyncio.get_running_loop().time() - since if since is not None else 0.0
        self.available = True
        self.unavailable_since = None
        log.warning("event=store_recovered paused_s=%.3f queued=%d retries=%d", paused, len(self._queue), self.retries)
        for table in list(self._tables):
            table.storage_resumed(paused)

    def _acknowledge(self, ops: list[_Op]) -> None:
        """Tell each table how many of its actions are now durable (one call per table)."""
        best: dict[int, tuple[Any, int]] = {}
        for op in ops:
            if op.table is not None:
                key = id(op.table)
                seen = best.get(key)
                if seen is None or op.ticket > seen[1]:
                    best[key] = (op.table, op.ticket)
        for table, ticket in best.values():
            durable = getattr(table, "durable", None)
            if durable is not None:
                durable(ticket)

    # Recorder (called from table tasks; never blocks)
    def game_started(self, table: Any) -> None:
        players = [
            {"name": n, "kind": _kind(c), "protocol": _protocol(c)} for n, c in zip(table.seat_names(), table.chairs)
        ]
        # a moonshot bot the server runs is rated under its spec (``search --simulations 200``)
        for player, chair in zip(players, table.chairs):
            bot = getattr(chair.occupant, "bot", None)
            if bot is not None:
                player["bot"] = spec_of(bot)
        # the hash of each chair's secret (never the secret): a restored chair can be resumed
        for player, credential in zip(players, getattr(table, "credentials", ())):
            if credential is not None:
                player["credential"] = credential
        values = {
            "id": table.id,
            "variant": table.rules.name,
            "seed": table.seed,
            "protocol": table.meta.get("protocol", self.protocol),
            "players": players,
            "status": "running",
            "created_at": now(),
            "meta": {k: v for k, v in table.meta.items() if isinstance(v, (str, int, float, bool))},
        }
        self._put(_Op("game", values, table, 0))

    def action_applied(self, table: Any, index: int, action: Action, forced: bool) -> None:
        values = {"game_id": table.id, "idx": index, "action": action_to_dict(action), "forced": forced, "at": now()}
        self._put(_Op("action", values, table, index + 1))

    def game_finished(self, table: Any) -> None:
        g = table.game
        # strictly increasing finish times: ratings are rebuilt in (finished_at, id) order, which
        # is then the order this writer rated the games in
        at = now()
        if self._last_finish is not None and at <= self._last_finish:
            at = self._last_finish + timedelta(microseconds=1)
        self._last_finish = at
        values = {"id": table.id, "status": "finished", "finished_at": at, "totals": list(g.totals)}
        values["winners"] = list(g.winners)
        self._put(_Op("status", values))
        self._put(_Op("rate", {"id": table.id}))  # a separate op: a failure loses no result

    def game_failed(self, table: Any, reason: str) -> None:
        self._put(_Op("status", {"id": table.id, "status": "failed", "finished_at": now()}))

    def game_aborted(self, table: Any, reason: str) -> None:
        """Given up unfinished (a Kierki table nobody came back to): never restored."""
        self._put(_Op("status", {"id": table.id, "status": "aborted", "finished_at": now()}))

    # named values (Store.put_value) written by the same task, in order with the game rows: one
    # writer, so SQLite never sees two transactions at once
    def put_value(self, key: str, value: Any) -> None:
        self._put(_Op("kv_set", {"key": key, "value": value}))

    def delete_value(self, key: str) -> None:
        self._put(_Op("kv_delete", {"key": key}))


def _kind(chair: Any) -> str:
    occ = chair.occupant or chair.substitute
    return occ.kind.value if occ is not None else "empty"


def _protocol(chair: Any) -> str:
    """The protocol the chair's player came over (mixed tables): sessions, trend, http, server."""
    occ = chair.occupant or chair.substitute
    return str(getattr(occ, "protocol", "server")) if occ is not None else "empty"


__all__ = [
    "DEFAULT_URL",
    "GameRecord",
    "Store",
    "StoreError",
    "StoreRecorder",
    "actions",
    "backoff_delay",
    "games",
    "kv",
    "register_rules",
    "rules_named",
    "sqlite_path",
    "store_url",
    "transient",
]
