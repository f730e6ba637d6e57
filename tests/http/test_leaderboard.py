"""GET /leaderboard and /leaderboard/games on the Turbo HTTP app: a finished HTTP game rates its
person and its bots (by spec), the JSON a client reads, the page a browser gets at the same
address, and clear 400s for bad queries."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from test_api import Env, close_env, make_env, new_game

pytestmark = pytest.mark.asyncio


@pytest_asyncio.fixture
async def env(tmp_path: Path) -> AsyncIterator[Env]:
    e = await make_env(tmp_path)
    (tmp_path / "static" / "leaderboard.html").write_text("<html>leaderboard page</html>")
    yield e
    await close_env(e)


async def finish_a_game(env: Env) -> str:
    """ann against two random bots and a heuristic bot, over HTTP, played to the end."""
    async with env.client("ann") as ann:
        gid = await new_game(ann, variant="standard")
        for alg in ("random", "heuristic", "random"):
            r = await ann.post("/lobby/add_bot", json={"id": gid, "rules": "classic", "algorithm": alg})
            assert r.status_code == 200, r.text
        hosted = env.lobby.games[gid].hosted
        assert hosted is not None
        table, seat, rng = hosted.table, hosted.seat_of("ann"), random.Random(1)
        assert seat is not None
        while not table.done.done():
            if seat in table._pending:
                await hosted.act(seat, rng.choice(table.game.legal_actions(seat)))
            await asyncio.sleep(0)
        await env.recorder.flush()
    return gid


async def test_a_finished_http_game_is_on_the_leaderboard(env: Env) -> None:
    async with env.client() as anon:
        empty = await anon.get("/leaderboard")
        assert empty.status_code == 200 and empty.json() == {"variant": None, "leaderboards": {}}
        gid = await finish_a_game(env)
        board = (await anon.get("/leaderboard")).json()["leaderboards"]["standard"]
        assert {(r["player"], r["bot"]) for r in board} == {("ann", False), ("random", True), ("heuristic", True)}
        assert [r["rank"] for r in board] == [1, 2, 3] and all(r["games"] == 1 for r in board)
        assert board == sorted(board, key=lambda r: -r["ordinal"])
        one = (await anon.get("/leaderboard?variant=standard&limit=1")).json()
        assert one["variant"] == "standard" and len(one["leaderboards"]["standard"]) == 1
        assert (await anon.get("/leaderboard?variant=trend")).json()["leaderboards"] == {}

        games = (await anon.get("/leaderboard/games?variant=standard&player=ann")).json()
        assert games["player"] == "ann" and not games["bot"]
        (g,) = games["games"]
        assert (
            g["game_id"] == gid
            and g["players"][0] == {"name": "ann", "bot": False, "seated": "ann"}
            and 1 <= g["rank"] <= 4
        )
        bots = (await anon.get("/leaderboard/games?variant=standard&player=random&bot=1")).json()
        assert bots["bot"] and len(bots["games"][0]["seats"]) == 2
        assert (await anon.get("/leaderboard/games?variant=standard&player=random")).json()["games"] == []


async def test_a_browser_gets_the_page_at_the_same_address(env: Env) -> None:
    async with env.client() as anon:
        html = await anon.get("/leaderboard", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
        assert html.status_code == 200 and "leaderboard page" in html.text
        assert html.headers["vary"] == "Accept"
        js = await anon.get("/leaderboard?format=json", headers={"Accept": "text/html"})
        assert js.json()["leaderboards"] == {}
        assert (
            (await anon.get("/leaderboard", headers={"Accept": "*/*"}))
            .headers["content-type"]
            .startswith("application/json")
        )


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("/leaderboard?limit=0", "limit must be 1..500"),
        ("/leaderboard?limit=x", "limit must be an integer"),
        ("/leaderboard?variant=" + "v" * 65, "variant is too long"),
        ("/leaderboard/games?variant=standard", "player is required"),
        ("/leaderboard/games?player=ann", "variant is required"),
        ("/leaderboard/games?variant=standard&player=ann&bot=maybe", "bot must be 1 or 0"),
    ],
)
async def test_bad_queries_say_why(env: Env, query: str, words: str) -> None:
    async with env.client() as anon:
        r = await anon.get(query)
        assert r.status_code == 400 and words in r.json()["error"]
