"""A tournament on a real server: eight entrants, two of them external clients (a Sessions SDK
client and a Trend WebSocket bot) that connect with their tokens; fairness and the exports."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import os
import random
import re
import signal
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import pytest_asyncio

from moonshot.bots.registry import make_bot
from moonshot.play.tournament import CSV_COLUMNS, GameResult, held_hands
from moonshot.protocols.sessions.client import BotPlayer, Client, ProtocolError
from moonshot.runtime.tournament import KEY_PREFIX
from moonshot.server.app import ServerApp
from moonshot.server.config import ServerConfig
from moonshot.store import Store
from trend_sdk import SdkBot

pytestmark = pytest.mark.asyncio


@pytest_asyncio.fixture
async def app(tmp_path: Path) -> AsyncIterator[ServerApp]:
    server = ServerApp(
        ServerConfig(
            sessions_port=0,
            trend_port=0,
            http_port=0,
            db_url=f"sqlite+aiosqlite:///{tmp_path / 'games.db'}",
            bot="random",
            seed=5,
            move_timeout=10.0,
            show_up=20.0,
            secret="tournament-tests",
        )
    )
    await server.start()
    yield server
    await server.stop()


def http(app: ServerApp, name: str = "organiser") -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}", cookies={"name": name}, timeout=30)


async def test_eight_entrants_with_two_external_clients_play_a_fair_tournament(app: ServerApp) -> None:
    bots = ["random", "heuristic", "search --simulations 6", "search --think-ms 3", "h2=heuristic", "r2=random"]
    async with http(app) as web:
        r = await web.post(
            "/api/tournaments",
            json={"variant": "standard", "sets": 1, "deals_per_set": 2, "bots": bots,
                  "externals": ["sessions-sdk", "trend-sdk"]},
        )  # fmt: skip
        assert r.status_code == 201, r.text
        created = r.json()
        tid, tokens = created["id"], created["tokens"]
        assert set(tokens) == {"sessions-sdk", "trend-sdk"}
        games_each = 4  # one set: every entrant plays the set's four rotations
        assert created["games_total"] == 8

        # the external entrants come over their own protocols with their tokens
        async def sessions_entrant() -> list[int]:
            async with await Client.connect("127.0.0.1", app.sessions_port or 0) as client:
                results = await client.play_games(
                    lambda: BotPlayer(make_bot("heuristic"), random.Random(1)),
                    sessions=1,
                    games=games_each,
                    lobby_code=tokens["sessions-sdk"],
                )
            return [res.my_score for res in results]

        trend = SdkBot(f"ws://127.0.0.1:{app.trend_port}/", 1, "trend-sdk", token=tokens["trend-sdk"], games=games_each)
        thread = threading.Thread(target=trend.run, daemon=True)
        thread.start()
        scores = await asyncio.wait_for(sessions_entrant(), 240)
        assert len(scores) == games_each
        host = app.tournaments
        assert host is not None
        t = host.tournaments[tid]
        assert t.task is not None
        await asyncio.wait_for(asyncio.shield(t.task), 120)
        await asyncio.to_thread(thread.join, 60)
        assert t.status == "finished", t.error
        assert trend.errors == [] and len(trend.seen) == games_each

        # fairness: every entrant held every hand (chair) of the set once
        results = [GameResult.from_json(g) for g in t.state()["results"]]
        assert len(results) == 8
        hands = held_hands(results, 1)
        assert len(hands) == 8 and all(chairs == [0, 1, 2, 3] for chairs in hands.values())
        for g in results:
            assert all(len(s.points) == 2 for s in g.seats)

        # the standings, over HTTP: every entrant, the externals played (not no-shows)
        status = (await web.get(f"/api/tournaments/{tid}")).json()
        assert status["status"] == "finished" and status["games_played"] == 8
        rows = {row["entrant"]: row for row in status["standings"]["entrants"]}
        assert set(rows) == {"random", "heuristic", "search(simulations=6)", "search(think_ms=3)", "h2", "r2",
                             "sessions-sdk", "trend-sdk"}  # fmt: skip
        for name in ("sessions-sdk", "trend-sdk"):
            assert rows[name]["kind"] == "external" and rows[name]["no_shows"] == 0 and rows[name]["games"] == 4
            assert rows[name]["deals"] == 8
        assert all(r["mean_points_per_deal"] is not None and r["ci_low"] is not None for r in rows.values())
        full = (await web.get(f"/api/tournaments/{tid}/results")).json()
        assert len(full["games"]) == 8 and len(full["running"]) == 8
        assert len(full["standings"]["paired"]) == 8 * 7
        text = (await web.get(f"/api/tournaments/{tid}/results", params={"format": "csv"})).text
        table = list(csv.DictReader(io.StringIO(text)))
        assert tuple(table[0]) == CSV_COLUMNS and len(table) == 8
        png = await web.get(f"/api/tournaments/{tid}/standings.png")
        assert png.status_code == 200 and png.content.startswith(b"\x89PNG")
        listing = (await web.get("/api/tournaments")).json()
        assert listing[0]["id"] == tid and listing[0]["games_played"] == 8

        # the store: the state (no tokens in it) and every game, with who came over which protocol
        await app.recorder.flush()  # type: ignore[union-attr]
        assert app.store is not None
        stored = await app.store.get_value(KEY_PREFIX + tid)
        assert stored["status"] == "finished" and len(stored["results"]) == 8
        assert not any(tok in str(stored) for tok in tokens.values())
        rec = await app.store.load(results[0].game_id)
        assert rec is not None and rec.status == "finished"
        protocols = {p["protocol"] for g in results for p in (await app.store.load(g.game_id)).players}  # type: ignore[union-attr]
        assert protocols == {"server", "sessions", "trend"}

        # a token after the end is refused with the reason, not queued forever
        async with await Client.connect("127.0.0.1", app.sessions_port or 0) as late:
            with pytest.raises(ProtocolError, match="is over"):
                await late.open_session("late", lobby_code=tokens["sessions-sdk"])


async def test_an_external_entrant_that_never_comes_is_played_by_the_policy_and_counted(tmp_path: Path) -> None:
    server = ServerApp(
        ServerConfig(sessions_port=0, http_port=0, db_url=None, bot="random", seed=9, show_up=0.2, secret="x")
    )
    await server.start()
    try:
        async with http(server) as web:
            body = {"variant": "standard", "sets": 1, "deals_per_set": 1, "bots": ["random", "heuristic"],
                    "externals": ["ghost"]}  # fmt: skip
            created = (await web.post("/api/tournaments", json=body)).json()
            t = server.tournaments.tournaments[created["id"]]  # type: ignore[union-attr]
            await asyncio.wait_for(asyncio.shield(t.task), 240)
            status = (await web.get(f"/api/tournaments/{t.id}")).json()
        ghost = next(r for r in status["standings"]["entrants"] if r["entrant"] == "ghost")
        assert ghost["no_shows"] == 4 and ghost["games_substituted"] == 4 and ghost["forced"] >= 4 * 13
        # one house bot filled the table: it is not ranked
        assert len(status["standings"]["entrants"]) == 3
    finally:
        await server.stop()


async def test_a_protocol_that_cannot_express_the_variant_is_refused_with_the_reason(app: ServerApp) -> None:
    async with http(app) as web:
        body = {"variant": "trend", "sets": 1, "bots": ["random"], "externals": ["x"]}
        created = (await web.post("/api/tournaments", json=body)).json()
        token = created["tokens"]["x"]
        async with await Client.connect("127.0.0.1", app.sessions_port or 0) as client:
            with pytest.raises(ProtocolError, match="Sessions protocol cannot express the 'trend-4deals' rules"):
                await client.open_session("x", lobby_code=token)
        bad = await web.post("/api/tournaments", json={"variant": "standard", "bots": ["nonsense", "random"]})
        assert bad.status_code == 400 and "unknown bot" in bad.json()["error"]
        bad = await web.post("/api/tournaments", json={"variant": "standard", "sets": 0, "bots": ["random"] * 2})
        assert bad.status_code == 400
        assert (await web.get("/api/tournaments/nope")).status_code == 404
        await app.tournaments.close()  # type: ignore[union-attr]


async def start_serve(db: str) -> tuple[asyncio.subprocess.Process, str]:
    """`moonshot serve` as a process (HTTP only), and its base URL."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "moonshot.cli.main", "serve", "--no-sessions", "--http-port", "0", "--db", db,
        "--secret", "restart-tests", "--show-up", "1", "--log-level", "warning",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.stdout is not None
    while True:
        line = (await asyncio.wait_for(proc.stdout.readline(), 240)).decode()
        assert line, "the server exited before it listened"
        if m := re.search(r"open (http://[\d.]+:\d+)/lobby", line):
            return proc, m.group(1)


async def test_a_tournament_goes_on_after_the_server_is_killed_mid_game(tmp_path: Path) -> None:
    db = f"sqlite+aiosqlite:///{tmp_path / 'games.db'}"
    proc, base = await start_serve(db)
    try:
        async with httpx.AsyncClient(base_url=base, cookies={"name": "organiser"}, timeout=30) as web:
            body = {"variant": "standard", "sets": 1, "deals_per_set": 2, "seed": 11,
                    "bots": ["a=search --think-ms 25", "b=heuristic", "c=random", "d=random"]}  # fmt: skip
            r = await web.post("/api/tournaments", json=body)
            assert r.status_code == 201, r.text
            tid = r.json()["id"]
            # kill -9 once the first game has its result and the second is well under way
            store = await Store.open(db)
            try:
                while True:
                    st = (await web.get(f"/api/tournaments/{tid}")).json()
                    rec = await store.load(f"{tid}-g2")
                    if st["games_played"] >= 1 and rec is not None and len(rec.actions) >= 20:
                        break
                    await asyncio.sleep(0.02)
            finally:
                await store.close()
        os.kill(proc.pid, signal.SIGKILL)
        await asyncio.wait_for(proc.wait(), 120)
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()

    store = await Store.open(db)
    try:
        cut = {g["id"]: await store.load(g["id"]) for g in await store.list_games(None)}
        state = await store.get_value(KEY_PREFIX + tid)
    finally:
        await store.close()
    assert state["status"] == "running"  # nobody said it stopped: it just died
    unfinished = [rec for rec in cut.values() if rec is not None and rec.status == "running"]
    assert len(unfinished) == 1 and unfinished[0].actions

    proc2, base2 = await start_serve(db)
    try:
        async with httpx.AsyncClient(base_url=base2, timeout=30) as web:
            for _ in range(1200):
                st = (await web.get(f"/api/tournaments/{tid}")).json()
                if st["status"] != "running":
                    break
                await asyncio.sleep(0.1)
            assert st["status"] == "finished" and st["games_played"] == st["games_total"] == 4
            full = (await web.get(f"/api/tournaments/{tid}/results")).json()
    finally:
        proc2.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc2.wait(), 120) == 0
    # every game once, under its own id; the cut one went on from what was stored and replays
    assert sorted(g["number"] for g in full["games"]) == [0, 1, 2, 3]
    store = await Store.open(db)
    try:
        games = [g for g in await store.list_games(None) if g["id"].startswith(tid)]
        assert sorted(g["id"] for g in games) == [f"{tid}-g{n}" for n in range(1, 5)]
        done = await store.load(unfinished[0].id)
    finally:
        await store.close()
    assert done is not None and done.status == "finished"
    assert done.actions[: len(unfinished[0].actions)] == unfinished[0].actions
    assert not any(done.forced)  # the entrants' own bots played on, not substitutes
    final = done.rebuild()
    assert final.over and list(final.totals) == done.totals
    row = next(g for g in full["games"] if g["game_id"] == done.id)
    assert sorted(s["total"] for s in row["seats"]) == sorted(done.totals)  # its result is the stored game's
