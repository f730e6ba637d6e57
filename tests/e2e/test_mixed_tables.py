"""Mixed tables: players from different protocols at one table, met through one lobby code (the
HTTP game id). A person in the browser, two Sessions SDK bots and a moonshot bot play a whole
standard game; a person and three Trend WebSocket bots a whole trend game; a protocol that cannot
express a game's rules is refused with the reason."""

from __future__ import annotations

import asyncio
import json
import random
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets

from e2e.webkit import Person, act_if_asked, chromium, web_server
from moonshot.bots.registry import make_bot
from moonshot.protocols.sessions.client import BotPlayer, Client, GameResult, ProtocolError
from trend_sdk import SdkBot

pytestmark = [pytest.mark.asyncio, pytest.mark.browser]


async def play_whole_game(person: Person) -> dict[str, Any]:
    """Make every decision the page asks for until the game-over dialog; score sheets between
    hands are closed as a person would."""
    page = person.page
    for _ in range(20000):
        state = await person.state()
        if state["complete"]:
            return state
        sheet = page.locator(".dialog-scores [data-action=close-sheet]")
        if await sheet.count():
            await sheet.click()
            continue
        if not await act_if_asked(person):
            await page.wait_for_timeout(30)
    raise AssertionError("the game did not finish")


def lobby(app: Any, name: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}", cookies={"name": name}, timeout=30)


async def test_a_person_two_sessions_bots_and_a_moonshot_bot_play_a_standard_game(tmp_path: Path) -> None:
    async with web_server(tmp_path, sessions_port=0, move_timeout=30.0) as app, chromium() as browser:
        alice = await Person.open(browser, f"http://127.0.0.1:{app.http_port}", "alice")
        await alice.enter_lobby()
        game_id = await alice.create_game("standard")
        # the lobby row shows the code the programs join with
        code = alice.page.locator(f"#games li[data-id='{game_id}'] .join-code code")
        assert await code.inner_text() == game_id
        await alice.add_bots(game_id, "random", 1)

        sessions: list[dict[str, Any]] = []

        async def sessions_bot(k: int) -> GameResult:
            async with await Client.connect("127.0.0.1", app.sessions_port or 0) as client:
                original = client._route

                def record(msg: dict[str, Any]) -> None:  # every message this bot's client read
                    sessions.append({"bot": k, **msg})
                    original(msg)

                client._route = record  # type: ignore[method-assign]
                return await client.play(BotPlayer(make_bot("heuristic"), random.Random(k)), lobby_code=game_id)

        bots = [asyncio.create_task(sessions_bot(k)) for k in (1, 2)]
        row = alice.page.locator(f"#games li[data-id='{game_id}']")
        await row.locator(".chip:not(.empty)").nth(3).wait_for()
        await alice.open_table(game_id)
        state = await play_whole_game(alice)
        results = await asyncio.wait_for(asyncio.gather(*bots), 60)
        totals = sorted(state["totals"].values())
        assert len(results) == 2 and max(totals) >= 100
        # every Sessions bot saw the same final scores as the browser, and as many hands
        for r in results:
            assert sorted(r.scores.values()) == totals and r.rounds == len(state["handScores"])
        # each Sessions bot was dealt only its own hand, in its own protocol's words
        for k in (1, 2):
            rounds = [m for m in sessions if m["bot"] == k and m.get("type") == "start_round"]
            assert len(rounds) == len(state["handScores"]) and all(len(m["cards"]) == 13 for m in rounds)
        assert alice.errors == []
        await alice.close()

        await app.recorder.flush()  # type: ignore[union-attr]
        rec = await app.store.load(game_id)  # type: ignore[union-attr]
        assert rec is not None and rec.status == "finished" and rec.variant == "standard"
        assert sorted(p["protocol"] for p in rec.players) == ["http", "server", "sessions", "sessions"]
        assert rec.meta.get("mixed") is True


async def test_a_person_and_three_trend_bots_play_a_trend_game(tmp_path: Path) -> None:
    async with web_server(tmp_path, trend_port=0, move_timeout=30.0) as app, chromium() as browser:
        erin = await Person.open(browser, f"http://127.0.0.1:{app.http_port}", "erin")
        await erin.enter_lobby()
        game_id = await erin.create_game("trend")
        url = f"ws://127.0.0.1:{app.trend_port}/"
        bots = [SdkBot(url, n, f"ai{n}", games=1, seed=n, lobby_code=game_id) for n in (2, 3, 4)]
        threads = [threading.Thread(target=b.run, daemon=True) for b in bots]
        for t in threads:
            t.start()
        row = erin.page.locator(f"#games li[data-id='{game_id}']")
        await row.locator(".chip:not(.empty)").nth(3).wait_for()
        await erin.open_table(game_id)
        state = await play_whole_game(erin)
        assert len(state["handScores"]) == 4  # a trend game is four deals
        for t in threads:
            await asyncio.to_thread(t.join, 60)
        for b in bots:
            assert b.errors == [] and len(b.seen) == 1 and b.seen[0].deals == 4
            assert "erin" in b.seen[0].scores
        assert erin.errors == []
        await erin.close()
        await app.recorder.flush()  # type: ignore[union-attr]
        rec = await app.store.load(game_id)  # type: ignore[union-attr]
        assert rec is not None and rec.status == "finished"
        assert sorted(p["protocol"] for p in rec.players) == ["http", "trend", "trend", "trend"]


async def test_a_protocol_that_cannot_express_the_rules_is_refused_with_the_reason(tmp_path: Path) -> None:
    async with web_server(tmp_path, sessions_port=0, trend_port=0) as app:
        async with lobby(app, "host") as web:
            turbo_id = (await web.post("/lobby/new", json={"variant": "turbo"})).json()
            kierki_id = (await web.post("/lobby/new", json={"variant": "kierki"})).json()
        async with await Client.connect("127.0.0.1", app.sessions_port or 0) as client:
            with pytest.raises(ProtocolError, match="Sessions protocol cannot express the 'turbo' rules"):
                await client.open_session("bot", lobby_code=turbo_id)
        async with websockets.connect(f"ws://127.0.0.1:{app.trend_port}/") as ws:
            join = {"playerNumber": 1, "playerName": "t", "token": "12345678", "lobbyCode": kierki_id}
            await ws.send(json.dumps({"eventName": "join", "data": join}))
            frame = json.loads(await asyncio.wait_for(ws.recv(), 10))
            assert "Trend protocol cannot express the 'kierki' rules" in json.dumps(frame)
        # a standard game takes a Sessions bot, and a full game refuses the next one
        async with lobby(app, "host2") as web:
            std_id = (await web.post("/lobby/new", json={"variant": "standard"})).json()
        async with await Client.connect("127.0.0.1", app.sessions_port or 0) as client:
            for k in range(3):
                await client.open_session(f"b{k}", lobby_code=std_id)
            with pytest.raises(ProtocolError, match=r"already started|full"):
                await client.open_session("b4", lobby_code=std_id)
