"""The game store on SQLite and on the real PostgreSQL server: games, the action log, restore data."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import random
import socket
import stat
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from moonshot.bots.random import RandomBot
from moonshot.core.engine import DealSpec, replay
from moonshot.core.variants import find_variant
from moonshot.runtime.table import BotSeat, Table, TableStatus
from moonshot.store import Store, StoreError, StoreRecorder, rules_named, store_url

PG_URL = os.environ.get("MOONSHOT_TEST_PG_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")
RULES = find_variant("standard").replace(score_limit=40)
pytestmark = pytest.mark.asyncio


async def pg_schema() -> str | None:
    """A fresh schema on the test server, or None when it cannot be reached."""
    try:
        import asyncpg  # type: ignore[import-untyped]

        conn = await asyncio.wait_for(asyncpg.connect(PG_URL.replace("+asyncpg", "")), 3)
    except Exception:
        return None
    schema = f"moonshot_{uuid.uuid4().hex[:12]}"
    await conn.execute(f"CREATE SCHEMA {schema}")
    await conn.close()
    return schema


async def drop_schema(schema: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(PG_URL.replace("+asyncpg", ""))
    await conn.execute(f"DROP SCHEMA {schema} CASCADE")
    await conn.close()


@pytest_asyncio.fixture(params=["sqlite", "postgresql"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    if request.param == "sqlite":
        s = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'g.db'}")
        yield s
        await s.close()
        return
    schema = await pg_schema()
    if schema is None:
        pytest.skip(
            f"PostgreSQL not reachable at {PG_URL}: start it (trust auth, database `test`) "
            "or set MOONSHOT_TEST_PG_URL=postgresql+asyncpg://USER@HOST:PORT/DB"
        )
    s = await Store.open(PG_URL, schema=schema)
    yield s
    await s.close()
    await drop_schema(schema)


def bots() -> list[BotSeat]:
    return [BotSeat(RandomBot(), random.Random(i)) for i in range(4)]


async def test_a_played_game_is_stored_action_by_action_and_replays(store: Store) -> None:
    rec = StoreRecorder(store, protocol="test")
    rec.start()
    t = Table(RULES, bots(), seed=99, recorder=rec, table_id=f"g-{uuid.uuid4().hex[:8]}")
    t.start()
    assert await asyncio.wait_for(t.done, 30) is TableStatus.FINISHED
    await rec.close()
    (row,) = await store.list_games("finished")
    assert row["id"] == t.id and row["seed"] == 99 and row["variant"] == RULES.name
    assert row["totals"] == list(t.game.totals) and row["winners"] == list(t.game.winners)
    assert [p["kind"] for p in row["players"]] == ["bot"] * 4
    loaded = await store.load(t.id)
    assert loaded is not None and loaded.actions == t.game.actions and not any(loaded.forced)
    g = replay(RULES, 99, loaded.actions)
    assert g.totals == t.game.totals
    assert await store.list_games("running") == []


async def test_an_interrupted_game_is_listed_as_unfinished_with_its_actions(store: Store) -> None:
    rec = StoreRecorder(store)
    rec.start()
    t = Table(RULES, bots(), seed=5, recorder=rec)
    t.start()
    while len(t.game.actions) < 30:
        await asyncio.sleep(0)
    t.stop()
    await t.done
    await rec.close()
    (unfinished,) = await store.unfinished()
    assert unfinished.id == t.id and unfinished.actions == t.game.actions
    assert unfinished.rebuild().version == t.game.version


async def test_a_bad_row_does_not_lose_the_others(store: Store) -> None:
    rec = StoreRecorder(store)
    rec.start()
    t = Table(RULES, bots(), seed=6, recorder=rec, table_id="dup")
    rec.game_started(t)
    rec.game_started(t)  # a duplicate primary key in the same batch
    t.start()
    await t.done
    await rec.close()
    loaded = await store.load("dup")
    assert loaded is not None and loaded.actions == t.game.actions and loaded.status == "finished"
    assert rec.errors >= 1


async def test_fixed_deals_are_stored_as_data_and_rebuild_the_game(store: Store) -> None:
    kierki = find_variant("kierki")
    deck = list(range(52))
    random.Random(3).shuffle(deck)
    hands = tuple(sum(1 << c for c in deck[13 * s : 13 * s + 13]) for s in range(4))
    deals = [DealSpec((hands[0], hands[1], hands[2], hands[3]), kind, kind % 4) for kind in range(1, 8)]
    rec = StoreRecorder(store)
    rec.start()
    t = Table(kierki, bots(), seed=8, recorder=rec, deals=deals)
    t.start()
    assert await asyncio.wait_for(t.done, 60) is TableStatus.FINISHED
    await rec.close()
    loaded = await store.load(t.id)
    assert loaded is not None and loaded.deals() == deals  # no protocol's parser is needed
    assert loaded.rebuild().totals == t.game.totals


async def test_deals_kept_only_as_game_file_text_need_the_registered_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    import moonshot.store.repository as store_module

    deal = DealSpec((0x1FFF, 0x1FFF << 13, 0x1FFF << 26, 0x1FFF << 39), 1, 0)
    rec = store_module.GameRecord(
        "old", "kierki", 1, "kierki", [], "finished", None, None, None, None, {"deals": "x"}, [], []
    )  # type: ignore[arg-type]
    monkeypatch.setattr(store_module, "_game_file_parser", None)
    with pytest.raises(StoreError, match="no parser is registered"):
        rec.deals()
    store_module.register_game_file_parser(lambda text: [deal] if text == "x" else [])
    assert rec.deals() == [deal]
    assert store_module.deal_from_json(store_module.deal_to_json(deal)) == deal


async def test_rules_by_name() -> None:
    assert rules_named("standard") == find_variant("standard")
    assert rules_named("sessions").name == "sessions"
    with pytest.raises(KeyError):
        rules_named("nope")


# ----------------------------------------------------------------------------- URLs people type
@pytest.mark.parametrize(
    ("typed", "used"),
    [
        ("sqlite:///games.db", "sqlite+aiosqlite:///games.db"),
        ("sqlite:////var/lib/m/g.db", "sqlite+aiosqlite:////var/lib/m/g.db"),
        ("sqlite+aiosqlite:///games.db", "sqlite+aiosqlite:///games.db"),
        ("SQLite:///games.db", "sqlite+aiosqlite:///games.db"),
        ("sqlite://", "sqlite+aiosqlite://"),
        ("postgresql://me@db.example:5433/hearts", "postgresql+asyncpg://me@db.example:5433/hearts"),
        ("postgres://me:pw@db.example/hearts", "postgresql+asyncpg://me:pw@db.example/hearts"),
        ("postgresql+asyncpg://me@db.example/hearts", "postgresql+asyncpg://me@db.example/hearts"),
    ],
)
async def test_the_urls_people_type_get_the_async_drivers(typed: str, used: str) -> None:
    assert store_url(typed) == used


@pytest.mark.parametrize(
    ("typed", "words"),
    [
        ("mysql://me@host/db", "unknown database 'mysql'"),
        ("games.db", "write sqlite:///games.db"),
        ("", "not a database URL"),
        ("postgresql+psycopg2://me@host/db", "driver 'psycopg2' is not supported: postgresql runs on asyncpg"),
        ("sqlite+pysqlite:///g.db", "driver 'pysqlite' is not supported"),
        ("postgresql://me@host:notaport/db", "cannot read the database URL"),
    ],
)
async def test_a_bad_url_says_why_in_one_line(typed: str, words: str) -> None:
    with pytest.raises(StoreError) as e:
        store_url(typed)
    assert words in str(e.value) and "\n" not in str(e.value)


async def test_a_missing_driver_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "asyncpg" else real(name, *a))
    with pytest.raises(StoreError, match=r"postgresql needs the asyncpg driver.*moonshot\[postgres\]"):
        await Store.open("postgresql://me@127.0.0.1/db")


async def test_a_password_is_never_shown(tmp_path: Path) -> None:
    with pytest.raises(StoreError) as e:
        await Store.open(f"postgresql://me:hunter2@127.0.0.1:{free_port()}/db")
    assert "hunter2" not in str(e.value) and "***" in str(e.value)


# ----------------------------------------------------------------------------- SQLite files
def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@contextlib.contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


async def test_the_sqlite_file_and_its_wal_files_are_private(tmp_path: Path) -> None:
    """They hold every running game's seed: 0600 even under a permissive umask, WAL files after writes."""
    path = tmp_path / "g.db"
    with umask(0o000):
        s = await Store.open(f"sqlite:///{path}")  # the plain URL
        try:
            rec = StoreRecorder(s)
            rec.start()
            t = Table(RULES, bots(), seed=3, recorder=rec)
            t.start()
            while len(t.game.actions) < 40:
                await asyncio.sleep(0)
            t.stop()
            await t.done
            await rec.close()
            assert len((await s.unfinished())[0].actions) >= 40  # written, through the WAL
            files = [path, path.with_name("g.db-wal"), path.with_name("g.db-shm")]
            assert all(f.exists() for f in files)  # still open: SQLite keeps its WAL files
            assert {f.name: mode(f) for f in files} == {f.name: 0o600 for f in files}
        finally:
            await s.close()
    assert mode(path) == 0o600


async def test_an_existing_readable_store_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    s = await Store.open(f"sqlite:///{path}")
    await s.close()
    os.chmod(path, 0o644)
    s = await Store.open(f"sqlite+aiosqlite:///{path}")
    await s.close()
    assert mode(path) == 0o600


async def test_a_relative_path_is_created_where_the_server_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    s = await Store.open("sqlite:///here.db")
    await s.close()
    assert mode(tmp_path / "here.db") == 0o600


async def test_unusable_sqlite_paths_say_why(tmp_path: Path) -> None:
    (tmp_path / "plain.txt").write_text("not a directory")
    cases = {
        f"sqlite:///{tmp_path}/missing/g.db": "does not exist",
        f"sqlite:///{tmp_path}/plain.txt/g.db": "plain.txt is not a directory",
        f"sqlite:///{tmp_path}": "is a directory, not a database file",
        f"sqlite:///{tmp_path}/plain.txt": "cannot open the game store",  # not a database
    }
    for url, words in cases.items():
        with pytest.raises(StoreError) as e:
            await Store.open(url)
        assert words in str(e.value) and "\n" not in str(e.value), url
    assert not (tmp_path / "missing").exists()


async def test_reading_commands_do_not_create_a_store(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"no game store at .*nothere\.db"):
        await Store.open(f"sqlite:///{tmp_path / 'nothere.db'}", create=False)
    assert not (tmp_path / "nothere.db").exists()


# ----------------------------------------------------------------------------- PostgreSQL
def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_an_unreachable_server_is_one_line() -> None:
    with pytest.raises(StoreError) as e:
        await Store.open(f"postgresql://postgres@127.0.0.1:{free_port()}/test")
    assert "connection refused" in str(e.value) and "\n" not in str(e.value)


async def test_the_plain_postgresql_url_opens_the_real_server() -> None:
    schema = await pg_schema()
    if schema is None:
        pytest.skip(f"PostgreSQL not reachable at {PG_URL}: start it (trust auth, database `test`)")
    try:
        s = await Store.open(PG_URL.replace("+asyncpg", ""), schema=schema)
        assert s.url.startswith("postgresql+asyncpg://")
        await s.create_game("plain", "standard", 1, [])
        assert [r["id"] for r in await s.list_games("running")] == ["plain"]
        await s.close()
        with pytest.raises(StoreError, match='database "no_such_db_here" does not exist'):
            await Store.open(PG_URL.rsplit("/", 1)[0] + "/no_such_db_here")
    finally:
        await drop_schema(schema)


async def test_action_rows_are_stored_alike_by_the_fast_path_and_by_sqlalchemy(tmp_path: Path) -> None:
    """On SQLite a batch of action rows alone skips SQLAlchemy's execution (one executemany on
    the driver's connection): the file holds the very text SQLAlchemy writes, and it reads back."""
    import sqlite3

    from moonshot.core.actions import Pass, Play, action_to_dict
    from moonshot.store.repository import now

    path = tmp_path / "g.db"
    store = await Store.open(f"sqlite+aiosqlite:///{path}")
    acts = [Pass(0, 0b111), Play(1, 12), Play(2, 51)]
    at = now()

    def game(gid: str) -> tuple[str, dict[str, object]]:
        values = {"id": gid, "variant": RULES.name, "seed": 1, "players": [{"name": 'ä"b', "kind": "bot"}]}
        return "game", {**values, "status": "running", "created_at": at, "meta": {}}

    def rows(gid: str) -> list[tuple[str, dict[str, object]]]:
        return [
            ("action", {"game_id": gid, "idx": i, "action": action_to_dict(a), "forced": i == 1, "at": at})
            for i, a in enumerate(acts)
        ]

    await store.write_batch([game("fast"), rows("fast")[0]])  # game and action rows alone: the fast path
    for op in rows("fast")[1:]:
        await store.write_batch([op])
    await store.write_batch([game("slow"), *rows("slow"), ("kv_set", {"key": "k", "value": 1})])  # SQLAlchemy
    fast, slow = await store.load("fast"), await store.load("slow")
    assert fast is not None and slow is not None
    assert fast.actions == slow.actions == acts and fast.forced == slow.forced == [False, True, False]
    await store.close()
    with contextlib.closing(sqlite3.connect(path)) as db:
        q = "SELECT idx, action, forced, at FROM actions WHERE game_id = ? ORDER BY idx"
        assert db.execute(q, ("fast",)).fetchall() == db.execute(q, ("slow",)).fetchall()
        q = "SELECT variant, seed, protocol, players, status, created_at, finished_at, totals, meta FROM games"
        q += " WHERE id = ?"
        assert db.execute(q, ("fast",)).fetchall() == db.execute(q, ("slow",)).fetchall()


async def test_a_duplicate_action_row_on_the_fast_path_is_refused_and_the_next_batch_written(tmp_path: Path) -> None:
    from moonshot.core.actions import Play, action_to_dict
    from moonshot.store.repository import now

    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'g.db'}")
    row = {"game_id": "g", "idx": 0, "action": action_to_dict(Play(0, 3)), "forced": False, "at": now()}
    await store.write_batch([("action", row)])
    with pytest.raises(Exception, match="UNIQUE"):
        await store.write_batch([("action", {**row, "idx": 1}), ("action", row)])
    await store.write_batch([("action", {**row, "idx": 1})])  # nothing of the refused batch was kept
    async with store.engine.connect() as conn:
        from sqlalchemy import text

        assert [r[0] for r in await conn.execute(text("SELECT idx FROM actions ORDER BY idx"))] == [0, 1]
    await store.close()
