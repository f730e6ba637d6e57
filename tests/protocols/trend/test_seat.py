"""A Trend chair's status from the table, and the flood limit of a socket."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from moonshot.bots.random import RandomBot
from moonshot.core.variants import TREND
from moonshot.protocols.trend import codec as tc
from moonshot.protocols.trend.seat import Peer, PeerBase, TrendSeat, chair_status, uvicorn_connection
from moonshot.runtime.table import BotSeat, Table, TablePolicy


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


class DelayedPeer(PeerBase):
    """A socket whose frames wait until the test writes them (a busy loop, a full buffer)."""

    def __init__(self) -> None:
        super().__init__()
        self.queued: list[tuple[dict[str, Any], Any]] = []
        self.written: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any], on_sent: Any = None) -> None:
        self.queued.append((message, on_sent))

    def close(self, code: int = 1000, reason: str = "") -> None:
        self.closed = True

    def write_all(self, at: float) -> None:
        for message, on_sent in self.queued:
            self.written.append(message)
            if on_sent is not None:
                on_sent(at)
        self.queued.clear()


async def until(cond: Any, timeout: float = 30.0) -> None:
    for _ in range(int(timeout / 0.005)):
        if cond():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("timed out")


@pytest.mark.asyncio
async def test_a_trend_request_is_timed_from_when_its_frame_is_written() -> None:
    """``pass_cards`` / ``your_turn`` are timed from their write, not from when the table asked:
    the peer holds the frames and writes them at a loop time the test picks."""
    peer = DelayedPeer()
    seat = TrendSeat(peer, 0, [tc.PlayerInfo(i + 1, f"p{i + 1}") for i in range(4)])
    assert seat.reports_sent
    policy = TablePolicy(decision_timeout=1000.0, send_grace=7.0)
    t = Table(TREND, [seat, *(BotSeat(RandomBot()) for _ in range(3))], seed=2, policy=policy)
    t.start()
    await until(lambda: any(m["eventName"] == "pass_cards" for m, _ in peer.queued))
    pending = t._pending[0]
    asked = pending.request.deadline
    # the timer is armed at the earliest the deadline can be; when it fires (called here, as the
    # table's inbox would) it moves on: send_grace more while the frame is unwritten, then to the
    # deadline counted from the write
    assert asked is not None and pending.timer is not None and pending.timer.when() == asked
    pending.timer.cancel()
    assert t._moved_on(pending, asked) and pending.timer.when() == asked + 7.0
    at = asked + 250.0
    peer.write_all(at)
    await until(lambda: pending.request.deadline == at + 1000.0)
    pending.timer.cancel()
    assert t._moved_on(pending, asked + 7.0) and pending.timer.when() == at + 1000.0
    assert not t._moved_on(pending, at + 1000.0)  # due: it expires then
    assert t.stats()[0].timeouts == 0
    t.stop()
    await t.done


@pytest.mark.asyncio
async def test_the_asgi_peer_reports_a_frame_once_it_is_written() -> None:
    """:class:`Peer` writes from its own task: a frame's ``on_sent`` comes after the write, with
    the frames before it written too, and never for a frame still queued."""
    sent: list[str] = []
    told: list[tuple[str, float]] = []

    class Socket(FakeSocket):
        async def send_text(self, text: str) -> None:
            sent.append(text)

    peer = Peer(Socket())  # type: ignore[arg-type]
    peer.send({"eventName": "new_deal", "data": {}})
    peer.send({"eventName": "your_turn", "data": {}}, lambda at: told.append((sent[-1], at)))
    assert not told  # queued, not written
    writer = asyncio.get_running_loop().create_task(peer._write())
    await until(lambda: told)
    assert len(sent) == 2 and told[0][0] == sent[1] and '"your_turn"' in sent[1]
    writer.cancel()
