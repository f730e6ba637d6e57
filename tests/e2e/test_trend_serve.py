"""``moonshot serve --trend-port``: SDK-style bots matched by the lobby on Trend tables, many
tables at once, chairs by playerNumber, a reconnect mid-game, and Sessions unchanged beside it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import websocket

from e2e.conftest import sessions_server
from moonshot.protocols.sessions.client import Client, RandomPlayer
from moonshot.server.app import ServerApp
from trend_sdk import SdkBot

pytestmark = pytest.mark.asyncio


@pytest_asyncio.fixture
async def app(tmp_path: Path) -> AsyncIterator[ServerApp]:
    server = await sessions_server(tmp_path, trend_port=0, fill_wait=0.3, seed=2, move_timeout=10.0)
    yield server
    await server.stop()


def url(app: ServerApp) -> str:
    return f"ws://127.0.0.1:{app.trend_port}/"


async def test_trend_bots_play_games_on_shared_tables_filled_by_the_lobby(app: ServerApp) -> None:
    bots = [SdkBot(url(app), n, f"ai{n}", games=2, seed=n, send_stop_game=n == 1) for n in (1, 2, 3)]
    await asyncio.wait_for(asyncio.gather(*(asyncio.to_thread(b.run) for b in bots)), 120)
    for b in bots:
        assert b.errors == [] and len(b.seen) == 2 and all(g.deals == 4 for g in b.seen)
    # playerNumber picked the chair: ai1 North, ai2 East, ai3 South, the lobby's bot West
    first = next(f for f in bots[0].frames if f["eventName"] == "new_game")["data"]["players"]
    assert [p["playerName"] for p in first[:3]] == ["ai1", "ai2", "ai3"]
    assert first[3]["playerName"].startswith("moonshot_random")
    assert [p["playerNumber"] for p in first] == ["1", "2", "3", "4"]
    assert app.finished == 2
    await app.recorder.flush()  # type: ignore[union-attr]
    rows = await app.store.list_games("finished")  # type: ignore[union-attr]
    assert {r["variant"] for r in rows} == {"trend"} and {r["protocol"] for r in rows} == {"trend"}


async def test_under_uvicorn_and_starlette_the_same_bots_play_the_same_games(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # MOONSHOT_TREND_ASGI=1: the Trend port served by uvicorn inside the server's loop, on the
    # socket every uvicorn listener binds (runtime/listening.py), instead of the lean listener
    monkeypatch.setenv("MOONSHOT_TREND_ASGI", "1")
    server = await sessions_server(tmp_path, trend_port=0, fill_wait=0.3, seed=2, move_timeout=10.0)
    try:
        assert server.trend is not None and server.trend.asgi
        bots = [SdkBot(url(server), n, f"ai{n}", games=1, seed=n) for n in (1, 2, 3)]
        await asyncio.wait_for(asyncio.gather(*(asyncio.to_thread(b.run) for b in bots)), 120)
        for b in bots:
            assert b.errors == [] and len(b.seen) == 1 and b.seen[0].deals == 4
    finally:
        await server.stop()


async def test_many_trend_tables_at_once_beside_sessions(app: ServerApp) -> None:
    bots = [SdkBot(url(app), 1 + i % 4, f"b{i}", games=1, seed=i) for i in range(16)]
    assert app.sessions_port is not None
    sessions = await Client.connect("127.0.0.1", app.sessions_port)
    session_game = asyncio.create_task(sessions.play(RandomPlayer()))
    await asyncio.wait_for(asyncio.gather(*(asyncio.to_thread(b.run) for b in bots)), 180)
    for b in bots:
        assert b.errors == [] and len(b.seen) == 1
    tables = {tuple(sorted(b.seen[0].scores)) for b in bots}
    assert len(tables) >= 4  # four players a table, four chairs asked for each number
    result = await asyncio.wait_for(session_game, 120)
    assert result is not None
    await sessions.close()


async def test_a_trend_player_takes_its_chair_back_after_a_disconnect(app: ServerApp) -> None:
    got: list[dict[str, Any]] = []

    def play() -> None:
        def join(ws: websocket.WebSocket) -> None:
            data = {"playerNumber": 2, "playerName": "phoenix", "token": "t0ken"}
            ws.send(json.dumps({"eventName": "join", "data": data}))

        ws = websocket.create_connection(url(app), timeout=20)
        join(ws)
        while json.loads(ws.recv())["eventName"] != "your_turn":
            pass
        ws.close()  # gone mid-game: a bot plays the chair
        ws = websocket.create_connection(url(app), timeout=20)
        join(ws)
        for _ in range(3):
            got.append(json.loads(ws.recv()))
        ws.close()

    others = [SdkBot(url(app), n, f"slow{n}", games=1, seed=n, think=0.03) for n in (1, 3, 4)]
    await asyncio.wait_for(asyncio.gather(asyncio.to_thread(play), *(asyncio.to_thread(b.run) for b in others)), 120)
    assert [m["eventName"] for m in got] == ["new_game", "new_deal", "new_round"]
    deal = got[1]["data"]
    # the same game, later: past its pass (the catch-up holds what is stored; the substitute's card,
    # played a moment before the join, follows as soon as it is)
    assert deal["self"]["playerName"] == "phoenix" and deal["self"]["receivedCards"]
    assert [p["playerNumber"] for p in got[0]["data"]["players"]] == [1, 2, 3, 4]
    assert [p["playerName"] for p in got[0]["data"]["players"]] == ["slow1", "phoenix", "slow3", "slow4"]
