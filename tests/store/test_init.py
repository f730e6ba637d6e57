"""The game store on SQLite and on the real PostgreSQL server: games, the action log, restore data."""

from __future__ import annotations

import asyncio
import os
import random
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from moonshot.bots.random import RandomBot
from moonshot.engine import replay
from moonshot.server.table import BotSeat, Table, TableStatus
from moonshot.store import Store, StoreRecorder, rules_named
from moonshot.variants import find_variant

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


async def test_rules_by_name() -> None:
    assert rules_named("standard") == find_variant("standard")
    assert rules_named("sessions").name == "sessions"
    with pytest.raises(KeyError):
        rules_named("nope")
