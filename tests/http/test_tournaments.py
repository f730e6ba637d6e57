"""``/api/tournaments`` against the ASGI app: bad requests, create, status, results, play."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from test_api import Env, close_env, make_env

from moonshot.runtime.table import TablePolicy
from moonshot.runtime.tournament import TournamentHost

pytestmark = pytest.mark.asyncio


@pytest_asyncio.fixture
async def env(tmp_path: Path) -> AsyncIterator[Env]:
    e = await make_env(tmp_path)
    e.lobby.tournaments = TournamentHost(
        policy=TablePolicy(decision_timeout=0.2, max_consecutive_timeouts=2), recorder=e.recorder, show_up=0.2
    )
    yield e
    await e.lobby.tournaments.close()
    await close_env(e)


async def test_bad_requests_say_what_is_wrong(env: Env) -> None:
    async with env.client("org") as c:
        for body, words in [
            ({"bots": "random"}, "bots must be a list of strings"),
            ({"bots": ["random"] * 41}, "at most 40 bots"),
            ({"bots": ["random", "random"], "sets": 0}, "sets must be an integer 1..1000"),
            ({"bots": ["random", "random"], "sets": True}, "sets must be an integer"),
            ({"bots": ["random", "random"], "variant": "chess"}, "variant"),
            ({"bots": ["random", "search --think-ms x y"]}, "expected --option"),
            ({"bots": ["random"]}, "at least two entrants"),
        ]:
            r = await c.post("/api/tournaments", json=body)
            assert r.status_code == 400 and words in r.json()["error"], (body, r.text)
        anonymous = await env.client().__aenter__()
        r = await anonymous.post("/api/tournaments", json={"bots": ["random", "random"]})
        assert r.status_code == 401
        await anonymous.aclose()
        assert (await c.get("/api/tournaments/t0")).status_code == 404
        r = await c.post("/api/tournaments/play", json={"token": "nobody's"})
        assert r.status_code == 403 and "no tournament entrant has that token" in r.json()["error"]
        r = await c.post("/api/tournaments/play", json={})
        assert r.status_code == 400


async def test_create_follow_and_export(env: Env) -> None:
    async with env.client("org") as c:
        body = {"variant": "standard", "sets": 1, "deals_per_set": 1,
                "bots": ["random", "heuristic", "x=random"], "externals": ["late"]}  # fmt: skip
        # with an external entrant the seed is the server's secret: none may be given
        r = await c.post("/api/tournaments", json={**body, "seed": 3})
        assert r.status_code == 400 and "secret seed" in r.json()["error"]
        r = await c.post("/api/tournaments", json=body)
        assert r.status_code == 201, r.text
        made = r.json()
        assert made["games_total"] == 4 and set(made["tokens"]) == {"late"}
        t = env.lobby.tournaments.tournaments[made["id"]]
        # the external entrant asks for a game over HTTP and is seated at the first one
        r = await c.post("/api/tournaments/play", json={"token": made["tokens"]["late"], "wait": 5})
        assert r.status_code == 200, r.text
        seat = r.json()
        assert seat["url"] == f"/game#{seat['game']}" and seat["game"] in env.lobby.games
        await asyncio.wait_for(asyncio.shield(t.task), 60)
        status = (await c.get(f"/api/tournaments/{t.id}")).json()
        assert status["status"] == "finished" and status["seed"] == t.spec.seed  # revealed at the end
        late = next(e for e in status["standings"]["entrants"] if e["entrant"] == "late")
        # it never answered in the first game (two timeouts, then the policy), never came to the rest
        assert late["no_shows"] == 3 and late["games_substituted"] == 4 and late["timeouts"] == 2
        r = await c.post("/api/tournaments/play", json={"token": made["tokens"]["late"], "wait": 0})
        assert r.status_code == 409 and "is over" in r.json()["error"]
        csv = await c.get(f"/api/tournaments/{t.id}/results", params={"format": "csv"})
        assert csv.headers["content-type"].startswith("text/csv") and csv.text.startswith("rank,entrant")
        # each game is stored and replays on the history page, its chairs named by bot
        await env.recorder.flush()
        game = (await c.get(f"/api/games/{t.results[-1].game_id}")).json()
        assert game["variant"] == "standard-1deals" and game["status"] == "finished" and game["events"]
        listing = (await c.get("/api/tournaments")).json()
        assert [x["id"] for x in listing] == [t.id] and listing[0]["games_played"] == 4


async def test_a_caller_gets_a_fair_share(env: Env) -> None:
    """Anyone who reaches the port may ask for a tournament: one running a name, a few a server,
    and bounded bot budgets, so no request takes the CPU the other tables need."""
    from moonshot.runtime import tournament as tmod

    async with env.client("org") as c, env.client("other") as d:
        r = await c.post("/api/tournaments", json={"bots": ["random", "search --think-ms 5000"]})
        assert r.status_code == 400 and "--think-ms is at most 1000" in r.json()["error"], r.text
        # nor an exact endgame from more cards than the default's (one solve from thirteen would
        # never end, whatever the budget)
        r = await c.post("/api/tournaments", json={"bots": ["random", "search --endgame 13"]})
        assert r.status_code == 400 and "--endgame is at most 4" in r.json()["error"], r.text
        # nor may a request name a file on the server (a weights file: /dev/stdin would stall the
        # server) or hand a bot what only Python code can
        for bad in (
            "search --network /dev/stdin",
            "learned --network /etc/passwd",
            "search --clock now",
            "search --value /dev/stdin",  # the value network's file, likewise
            "search --belief /dev/stdin",  # and the belief network's
        ):
            r = await c.post("/api/tournaments", json={"bots": ["random", bad]})
            assert r.status_code == 400 and "is not taken over the network" in r.json()["error"], r.text
        r = await c.post("/api/tournaments", json={"bots": ["random", "r2=random"], "sets": 1000})
        assert r.status_code == 201, r.text
        first = r.json()["id"]
        r = await c.post("/api/tournaments", json={"bots": ["random", "r2=random"]})
        assert r.status_code == 429 and "org already runs a tournament" in r.json()["error"], r.text
        old = tmod.MAX_RUNNING
        tmod.MAX_RUNNING = 1
        try:
            r = await d.post("/api/tournaments", json={"bots": ["random", "r2=random"]})
            assert r.status_code == 429 and "at most 1" in r.json()["error"], r.text
        finally:
            tmod.MAX_RUNNING = old
        r = await d.post("/api/tournaments", json={"bots": ["random", "r2=random"], "sets": 1})
        assert r.status_code == 201, r.text
        assert (await c.get(f"/api/tournaments/{first}")).json()["status"] == "running"
