"""A Trend chair's status from the table, and the flood limit of a socket."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from moonshot.bots.random import RandomBot
from moonshot.protocols.trend import codec as tc
from moonshot.protocols.trend.seat import Peer, chair_status, uvicorn_connection
from moonshot.server.table import BotSeat, Table
from moonshot.variants import TREND


class FakeSocket:
    client = None


@pytest.mark.asyncio
async def test_chair_status_and_counts() -> None:
    t = Table(TREND, [BotSeat(RandomBot()), None, BotSeat(RandomBot()), BotSeat(RandomBot())], seed=1)
    t.chairs[2].stats.timeouts, t.chairs[2].stats.timeouts_in_a_row, t.chairs[3].stats.illegal = 2, 1, 3
    status, counts = chair_status(t)
    assert status == [tc.ONLINE, tc.OFFLINE, tc.TIMED_OUT, tc.ONLINE]
    assert counts == [(0, 0), (0, 0), (2, 0), (0, 3)]


@pytest.mark.asyncio
async def test_the_flood_limit_lets_a_burst_through_then_the_rate() -> None:
    peer = Peer(FakeSocket(), flood_rate=10)  # type: ignore[arg-type]
    allowed = sum(peer.allow(0.0) for _ in range(50))
    assert allowed == 10
    assert peer.allow(0.05) is False  # half a frame earned
    assert peer.allow(0.2) is True
    sent: list[Any] = []
    peer.queue = asyncio.Queue()
    peer.max_queue = 2
    for _ in range(3):
        peer.send({"eventName": "x", "data": {}})
        sent.append(peer.queue.qsize())
    assert peer.closed  # a client that does not read is cut off, with the reason queued last


def test_a_socket_without_uvicorn_behind_it_is_written_through_asgi() -> None:
    assert uvicorn_connection(FakeSocket()) is None  # type: ignore[arg-type]


@pytest.mark.asyncio
async def test_frames_written_together_arrive_one_by_one_as_sent() -> None:
    """Frames a table queues at once go out in one socket write under uvicorn, each still its own
    WebSocket message with the same text; then a queued close goes out with its reason."""
    import contextlib

    import uvicorn
    import websockets
    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute
    from starlette.websockets import WebSocket

    frames = [
        {"eventName": "turn_end", "data": {"n": i, "name": 'café ☕ \\ " \n', "big": "x" * (i * 5000)}}
        for i in range(30)
    ]
    direct: list[object] = []

    async def endpoint(ws: WebSocket) -> None:
        await ws.accept()
        peer = Peer(ws)
        direct.append(uvicorn_connection(ws))
        peer.send_many(frames)  # queued before the writer runs: one batch
        peer.close(4000, "bye")
        await peer.run()

    server = uvicorn.Server(
        uvicorn.Config(Starlette(routes=[WebSocketRoute("/", endpoint)]), port=0, log_level="error", lifespan="off")
    )
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    task = asyncio.get_running_loop().create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    got = []
    async with websockets.connect(f"ws://127.0.0.1:{port}/", max_size=None) as client:
        with contextlib.suppress(websockets.ConnectionClosed):
            async for message in client:
                got.append(message)
        assert client.close_code == 4000 and client.close_reason == "bye"
    server.should_exit = True
    await task
    assert direct and direct[0] is not None  # the uvicorn fast path was taken
    assert got == [tc.encode_frame(f) for f in frames]
