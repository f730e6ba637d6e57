"""A cluster's Trend tables: Trend on two nodes of one cluster in one event loop, on the
real Redis: bots whose sockets reach different nodes meet at one table (chairs by playerNumber),
and a player who left takes its chair back through the other node.

Skipped (with the reason) when Redis is not at 127.0.0.1:6379 or the redis package is missing.
The multi-process behaviour (kill -9 of the owner, PostgreSQL) is in tests/e2e/test_cluster_trend.py.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import websocket

from moonshot.protocols.trend.server import credential, seat_key
from moonshot.server.app import ServerApp
from trend_sdk import SdkBot

from .test_node import REDIS_URL, eventually, node, redis_prefix  # noqa: F401 (a fixture)

async_test = pytest.mark.asyncio
pytestmark = pytest.mark.timeout(600)


async def trend_node(prefix: str, **options: object) -> ServerApp:
    return await node(prefix, sessions_port=None, trend_port=0, **options)


def url(app: ServerApp) -> str:
    return f"ws://127.0.0.1:{app.trend_port}/"


def test_the_index_keeps_digests_only() -> None:
    assert credential("t0ken") != credential("t0ken2") and "t0ken" not in credential("t0ken")
    assert len(credential("")) == 64
    assert seat_key(1, "ann") != seat_key(2, "ann") and seat_key(1, "ann") == seat_key(1, "ann")


@async_test
async def test_trend_bots_on_two_nodes_meet_at_one_table_in_the_chairs_they_asked_for(
    redis_prefix: str,  # noqa: F811
) -> None:
    a = await trend_node(redis_prefix)
    b = await trend_node(redis_prefix)
    try:
        apps = (a, b, a, b)
        bots = [SdkBot(url(apps[i]), i + 1, f"n{i + 1}", games=1, seed=i, lobby_code="meet") for i in range(4)]
        await asyncio.wait_for(asyncio.gather(*(asyncio.to_thread(x.run) for x in bots)), 90)
        for x in bots:
            assert x.errors == [] and len(x.seen) == 1 and x.seen[0].deals == 4
        assert all(x.seen[0].scores == bots[0].seen[0].scores for x in bots)
        first = next(f for f in bots[0].frames if f["eventName"] == "new_game")["data"]["players"]
        assert [p["playerName"] for p in first] == ["n1", "n2", "n3", "n4"]
        assert [p["playerNumber"] for p in first] == ["1", "2", "3", "4"]
        await eventually(lambda: a.finished + b.finished >= 1)
    finally:
        await a.stop()
        await b.stop()


@async_test
async def test_a_lone_trend_player_gets_the_lobbys_trend_bots(redis_prefix: str) -> None:  # noqa: F811
    a = await trend_node(redis_prefix, fill_wait=0.2)
    b = await trend_node(redis_prefix, fill_wait=0.2)
    try:
        bot = SdkBot(url(b), 3, "alone", games=1, seed=1, lobby_code="alone")
        await asyncio.wait_for(asyncio.to_thread(bot.run), 60)
        assert bot.errors == [] and len(bot.seen) == 1
        first = next(f for f in bot.frames if f["eventName"] == "new_game")["data"]["players"]
        names = [p["playerName"] for p in first]
        assert names[2] == "alone" and all(n.startswith("moonshot_random") for i, n in enumerate(names) if i != 2)
        assert b.cluster.formed >= 1 and a.cluster.formed == 0  # the node the player waits on
    finally:
        await a.stop()
        await b.stop()


@async_test
async def test_a_player_who_left_takes_its_chair_back_through_the_other_node(redis_prefix: str) -> None:  # noqa: F811
    a = await trend_node(redis_prefix)
    b = await trend_node(redis_prefix)
    got: list[dict[str, Any]] = []

    def play() -> None:
        def join(ws: websocket.WebSocket) -> None:
            data = {"playerNumber": 2, "playerName": "phoenix", "token": "t0ken", "lobbyCode": "back"}
            ws.send(json.dumps({"eventName": "join", "data": data}))

        ws = websocket.create_connection(url(a), timeout=20)
        join(ws)
        while json.loads(ws.recv())["eventName"] != "your_turn":
            pass
        ws.close()  # gone mid-game: a bot plays the chair
        ws = websocket.create_connection(url(b), timeout=20)
        join(ws)
        for _ in range(3):
            got.append(json.loads(ws.recv()))
        ws.close()  # a bot plays the chair to the end
        # a wrong token is a new player in the lobby (of another code here: nobody comes), not the chair
        ws = websocket.create_connection(url(b), timeout=20)
        data = {"playerNumber": 2, "playerName": "phoenix", "token": "wrong", "lobbyCode": "elsewhere"}
        ws.send(json.dumps({"eventName": "join", "data": data}))
        ws.settimeout(1.0)
        with pytest.raises(websocket.WebSocketTimeoutException):
            ws.recv()
        ws.close()

    try:
        others = [
            SdkBot(url((a, b, a)[i]), n, f"slow{n}", games=1, seed=n, think=0.02, lobby_code="back")
            for i, n in enumerate((1, 3, 4))
        ]
        await asyncio.wait_for(asyncio.gather(asyncio.to_thread(play), *(asyncio.to_thread(x.run) for x in others)), 40)
        assert [m["eventName"] for m in got] == ["new_game", "new_deal", "new_round"], got
        deal = got[1]["data"]
        assert deal["self"]["playerName"] == "phoenix" and deal["self"]["cardsCount"] < 13  # the same game, later
        assert [p["playerName"] for p in got[0]["data"]["players"]] == ["slow1", "phoenix", "slow3", "slow4"]
        for x in others:
            assert x.errors == [] and len(x.seen) == 1
        assert a.trend.remote_rejoins + b.trend.remote_rejoins == 1
        await eventually(lambda: a.finished + b.finished >= 1)
        # the finished game's chairs left the index (read with a client of the test's own)
        import redis.asyncio as aioredis

        key = f"{redis_prefix}chair:{seat_key(2, 'phoenix')}"
        r = aioredis.Redis.from_url(REDIS_URL, socket_timeout=5, socket_connect_timeout=5)
        try:
            for _ in range(50):
                if not await asyncio.wait_for(r.exists(key), 10):
                    break
                await asyncio.sleep(0.1)
            assert not await asyncio.wait_for(r.exists(key), 10)
        finally:
            await r.aclose()
    finally:
        await a.stop()
        await b.stop()
