"""Ratings in the store, on SQLite and on the real PostgreSQL server: every finished game is rated
as the writer stores it, a rebuild from the stored games gives the same ratings exactly, and a
rating that cannot be computed never costs a game its result."""

from __future__ import annotations

import asyncio
import random
import threading
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from moonshot.bots.registry import make_bot
from moonshot.core.variants import find_variant
from moonshot.runtime.table import BotSeat, Table, TableStatus
from moonshot.store import Store, StoreRecorder, now
from moonshot.store import ratings as store_ratings
from store.test_init import PG_URL, drop_schema, pg_schema

RULES = find_variant("standard").replace(score_limit=40)
pytestmark = pytest.mark.asyncio


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
    s.test_schema = schema  # type: ignore[attr-defined]  # for a second writer in another thread
    yield s
    await s.close()
    await drop_schema(schema)


def bot_seat(spec: str, i: int) -> BotSeat:
    name, _, sims = spec.partition(" --simulations ")
    bot = make_bot(name, simulations=int(sims)) if sims else make_bot(name)
    return BotSeat(bot, random.Random(i), name=f"moonshot_{name}_{i}")


async def play(rec: StoreRecorder, seats: list[Any], seed: int, meta: dict[str, Any] | None = None) -> str:
    t = Table(RULES, seats, seed=seed, recorder=rec, table_id=f"g-{uuid.uuid4().hex[:10]}", meta=meta or {})
    t.start()
    assert await asyncio.wait_for(t.done, 60) is TableStatus.FINISHED
    return t.id


async def play_many(store: Store, n: int) -> list[str]:
    rec = StoreRecorder(store, protocol="sessions")
    rec.start()
    pick = random.Random(3)
    ids = []
    for seed in range(n):
        specs = ["heuristic", "heuristic", "random", "random"]
        pick.shuffle(specs)
        ids.append(await play(rec, [bot_seat(s, i) for i, s in enumerate(specs)], seed))
    await rec.close()
    return ids


async def snapshot(store: Store) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    from sqlalchemy import select

    async with store.engine.connect() as conn:
        board = [dict(r._mapping) for r in await conn.execute(select(store_ratings.ratings))]
        hist = [dict(r._mapping) for r in await conn.execute(select(store_ratings.rating_games))]
    key = lambda r: (r.get("game_id", ""), r["pool"], r["player"], r["bot"])  # noqa: E731
    return sorted(board, key=key), sorted(hist, key=key)


async def test_finished_games_are_rated_and_a_rebuild_gives_the_same_ratings(store: Store) -> None:
    ids = await play_many(store, 12)
    board = (await store.leaderboard())["standard"]
    assert sorted((r["player"], r["bot"], r["games"]) for r in board) == [("heuristic", True, 12), ("random", True, 12)]
    assert all(r["sigma"] < 8.3 and r["ordinal"] == pytest.approx(r["mu"] - 3 * r["sigma"]) for r in board)
    assert [r["rank"] for r in board] == [1, 2]
    games = await store.player_games("standard", "heuristic", bot=True)
    assert [g["game_id"] for g in games] == ids[::-1]  # newest first
    assert all(1 <= g["rank"] <= 4 and len(g["seats"]) == 2 and len(g["players"]) == 4 for g in games)

    incremental = await snapshot(store)
    assert await store.rebuild_ratings() == 12
    assert await snapshot(store) == incremental  # exactly: the same floats, the same rows


async def stored_game(store: Store, gid: str, protocol: str, players: list[dict[str, Any]], totals: list[int]) -> None:
    """A finished game as the writer stores it (game row, finish, rate), whatever its protocol."""
    at = now()
    row = {"id": gid, "variant": "standard", "seed": 1, "protocol": protocol, "players": players}
    row |= {"status": "running", "created_at": at, "meta": {}}
    done = {
        "id": gid,
        "status": "finished",
        "finished_at": at,
        "totals": totals,
        "winners": [totals.index(min(totals))],
    }
    await store.write_batch([("game", row), ("status", done), ("rate", {"id": gid})])


async def test_people_are_rated_by_name_and_sessions_tags_are_dropped(store: Store) -> None:
    bot = {"name": "moonshot_heuristic(3)", "kind": "bot", "bot": "heuristic"}
    for i in range(3):
        # the same person over Sessions (a new session id each time), then over HTTP
        alice = {"name": f"alice({40 + i})" if i < 2 else "alice", "kind": "human"}
        bob = {"name": "bob", "kind": "bot"}  # a client program: rated by its name, not as a moonshot bot
        await stored_game(store, f"p{i}", "sessions" if i < 2 else "turbo", [alice, bob, bot, bot], [10, 20, 30, 40])
    board = {(r["player"], r["bot"]): r for r in (await store.leaderboard("standard"))["standard"]}
    assert set(board) == {("alice", False), ("bob", False), ("heuristic", True)}
    assert board["alice", False]["games"] == 3 and board["alice", False]["rank"] == 1
    games = await store.player_games("standard", "alice")
    assert [g["game_id"] for g in games] == ["p2", "p1", "p0"]
    assert games[0]["rank"] == 1 and games[0]["total"] == 10 and games[0]["change"] > 0
    assert [p["name"] for p in games[1]["players"]] == ["alice", "bob", "heuristic", "heuristic"]
    assert games[1]["players"][0]["seated"] == "alice(41)" and games[1]["players"][2]["bot"]


async def test_a_person_named_like_a_bot_is_not_that_bot(store: Store) -> None:
    bot = {"name": "ada", "kind": "bot", "bot": "random"}
    fake = {"name": "random", "kind": "human"}
    await stored_game(store, "x", "turbo", [fake, bot, bot, bot], [0, 50, 60, 70])
    board = (await store.leaderboard())["standard"]
    assert [(r["player"], r["bot"]) for r in board] == [("random", False), ("random", True)]


async def test_a_rating_that_fails_never_loses_the_game(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(conn: Any, game_id: str) -> list[Any]:
        raise RuntimeError("boom")

    monkeypatch.setattr(store_ratings, "rate_stored_game", broken)
    rec = StoreRecorder(store, protocol="test")
    rec.start()
    gid = await play(rec, [bot_seat(s, i) for i, s in enumerate(["heuristic", "random", "random", "random"])], 5)
    await rec.close()
    assert rec.errors == 1
    stored = await store.load(gid)
    assert stored is not None and stored.status == "finished" and stored.totals
    assert await store.leaderboard() == {}
    monkeypatch.undo()
    assert await store.rebuild_ratings() == 1  # the rebuild catches up
    assert {r["player"] for r in (await store.leaderboard())["standard"]} == {"heuristic", "random"}


async def test_a_game_is_rated_once_even_when_its_batch_is_written_again(store: Store) -> None:
    rec = StoreRecorder(store, protocol="test")
    rec.start()
    gid = await play(rec, [bot_seat(s, i) for i, s in enumerate(["heuristic", "random", "random", "random"])], 6)
    await rec.close()
    await store.write_batch([("rate", {"id": gid})])
    assert {r["games"] for r in (await store.leaderboard())["standard"]} == {1}


async def test_a_rebuild_while_a_server_finishes_games_rates_each_game_once(store: Store) -> None:
    await play_many(store, 4)
    url, schema = store.url, getattr(store, "test_schema", None)

    def another_server_finishes_a_game() -> None:
        async def go() -> None:  # its own loop, its own connections: another process, in effect
            other = await Store.open(url, schema=schema)
            rec = StoreRecorder(other, protocol="sessions")
            rec.start()
            await play(rec, [bot_seat(s, i) for i, s in enumerate(["heuristic", "random", "random", "heuristic"])], 77)
            await rec.close()
            await other.close()

        asyncio.run(go())

    calls = 0

    def progress(done: int, total: int) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:  # after the rebuild read its snapshot: a game finishes and its writer rates it
            t = threading.Thread(target=another_server_finishes_a_game)
            t.start()
            t.join(60)

    assert await store.rebuild_ratings(progress) == 5  # the four of the snapshot and the late one
    after = await snapshot(store)
    assert len({r["game_id"] for r in after[1]}) == 5
    assert await store.rebuild_ratings() == 5
    assert await snapshot(store) == after  # the same as a rebuild with nobody writing
