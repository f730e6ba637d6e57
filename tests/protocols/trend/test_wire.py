"""The lean WebSocket listener of ``serve --trend-port``: real sockets, a real ``websockets``
client (and a raw TCP one where a client must misbehave)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
import websockets
from websockets.exceptions import ConnectionClosed, InvalidStatus

from moonshot.protocols.trend import codec as tc
from moonshot.protocols.trend import wire
from moonshot.protocols.trend.wire import WireListener, WirePeer, text_frame_header

pytestmark = pytest.mark.asyncio


class Echo:
    """A service: records what each peer sends and answers a ``join`` with frames."""

    def __init__(self) -> None:
        self.opened: list[WirePeer] = []
        self.gone: list[WirePeer] = []
        self.got: list[tc.ClientEvent] = []

    def on_open(self, peer: WirePeer) -> None:
        self.opened.append(peer)
        peer.on_message = lambda m: self.message(peer, m)

    def on_gone(self, peer: WirePeer) -> None:
        self.gone.append(peer)

    def message(self, peer: WirePeer, m: tc.ClientEvent) -> None:
        self.got.append(m)
        if isinstance(m, tc.Join):
            # several frames in one step, of every header size
            for size in (10, 200, 70_000):
                peer.send({"eventName": "new_peer", "data": {"pad": "x" * size}})


@pytest_asyncio.fixture
async def listener() -> AsyncIterator[tuple[WireListener, Echo, str]]:
    echo = Echo()
    lst = WireListener(echo.on_open, echo.on_gone, flood_rate=50)
    port = await lst.start("127.0.0.1", 0)
    yield lst, echo, f"ws://127.0.0.1:{port}/"
    await lst.close()


JOIN = json.dumps({"eventName": "join", "data": {"playerNumber": "1", "playerName": "a"}})


async def until(cond: Any, timeout: float = 5.0) -> None:
    for _ in range(int(timeout / 0.01)):
        if cond():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("timed out")


async def test_the_text_frame_header_is_rfc_6455() -> None:
    assert text_frame_header(5) == b"\x81\x05"
    assert text_frame_header(126) == b"\x81\x7e\x00\x7e"
    assert text_frame_header(70_000) == b"\x81\x7f" + (70_000).to_bytes(8, "big")


async def test_frames_written_together_arrive_one_by_one(listener: tuple[WireListener, Echo, str]) -> None:
    lst, echo, url = listener
    async with websockets.connect(url + "?x=1", compression=None, max_size=None) as ws:
        await ws.send(JOIN)
        sizes = [len(json.loads(await ws.recv())["data"]["pad"]) for _ in range(3)]
    assert sizes == [10, 200, 70_000]
    assert isinstance(echo.got[0], tc.Join) and echo.got[0].name == "a"
    await until(lambda: len(echo.gone) == 1)
    assert echo.gone == echo.opened and not lst.conns


async def test_another_path_or_plain_http_is_refused(listener: tuple[WireListener, Echo, str]) -> None:
    _, echo, url = listener
    with pytest.raises(InvalidStatus) as e:
        async with websockets.connect(url + "elsewhere"):
            pass
    assert e.value.response.status_code == 403  # what Starlette answered
    host, port = url[5:-1].split(":")
    r, w = await asyncio.open_connection(host, int(port))
    w.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert (await r.readline()).startswith(b"HTTP/1.1 404")
    w.close()
    assert echo.opened == []


async def test_bad_input_is_ignored_and_counted_and_the_socket_stays(listener: tuple[WireListener, Echo, str]) -> None:
    _, echo, url = listener
    async with websockets.connect(url, max_size=None, compression=None) as ws:
        await ws.send("not json")
        await ws.send(b"\xff\xfe binary junk")
        await ws.send("[" + "x" * (tc.MAX_FRAME - 10) + "]")  # within 64 KiB, not JSON: ignored
        await ws.send(['{"eventName": "jo', 'in", "data": {"playerNumber": 2, "playerName": "frag"}}'])
        assert json.loads(await ws.recv())["eventName"] == "new_peer"  # the fragmented join arrived
        peer = echo.opened[0]
        assert peer.ignored == 3 and not peer.closed
    assert [j.name for j in echo.got if isinstance(j, tc.Join)] == ["frag"]


async def test_a_frame_over_64_kib_closes_the_socket_with_1009(listener: tuple[WireListener, Echo, str]) -> None:
    _, echo, url = listener
    assert wire.MAX_MESSAGE == tc.MAX_FRAME == 64 * 1024
    async with websockets.connect(url, max_size=None, compression=None) as ws:
        await ws.send(JOIN)
        await ws.recv()
        await ws.send("x" * (wire.MAX_MESSAGE + 1))  # over the limit: closed with 1009
        with pytest.raises(ConnectionClosed) as e:
            for _ in range(10):
                await ws.recv()
        assert e.value.rcvd is not None and e.value.rcvd.code == 1009
    assert echo.opened[0].closed


async def test_a_flood_closes_the_socket_with_1008(listener: tuple[WireListener, Echo, str]) -> None:
    _, echo, url = listener
    async with websockets.connect(url, compression=None) as ws:
        with pytest.raises(ConnectionClosed) as e:
            for _ in range(200):
                await ws.send('{"eventName": "stop_game"}')
            for _ in range(10):
                await ws.recv()
        assert e.value.rcvd is not None and e.value.rcvd.code == 1008
        assert "frames a second" in e.value.rcvd.reason
    await until(lambda: echo.opened and echo.opened[0].closed)
    assert 50 <= len(echo.got) < 200  # a burst of flood_rate got through, then the close


async def test_close_sends_what_is_queued_then_the_reason(listener: tuple[WireListener, Echo, str]) -> None:
    _, echo, url = listener
    async with websockets.connect(url, compression=None) as ws:
        await until(lambda: echo.opened)
        peer = echo.opened[0]
        peer.send(tc.error_frame("wrong token"))
        peer.close(1008, "wrong token for player 1 " + "é" * 100)
        peer.send({"eventName": "late"})  # after the close: not sent
        assert json.loads(await ws.recv())["eventName"] == "error"
        with pytest.raises(ConnectionClosed) as e:
            await ws.recv()
    assert e.value.rcvd is not None and e.value.rcvd.code == 1008
    assert e.value.rcvd.reason.startswith("wrong token for player 1 é")


async def test_a_client_that_does_not_read_is_cut_off(listener: tuple[WireListener, Echo, str]) -> None:
    _, echo, url = listener
    async with websockets.connect(url, compression=None) as ws:
        await until(lambda: echo.opened)
        peer = echo.opened[0]
        peer.max_queue = 3
        peer.pause_writing()  # what the transport says when its buffer is full
        for _ in range(4):
            peer.send({"eventName": "x"})
        assert peer.closed
        frames = []
        with pytest.raises(ConnectionClosed) as e:
            while True:
                frames.append(await ws.recv())
    assert len(frames) == 3 and e.value.rcvd is not None and e.value.rcvd.code == 1008


async def test_listener_close_says_the_server_shuts_down() -> None:
    echo = Echo()
    lst = WireListener(echo.on_open, echo.on_gone)
    port = await lst.start("127.0.0.1", 0)
    async with websockets.connect(f"ws://127.0.0.1:{port}/", compression=None) as ws:
        await until(lambda: echo.opened)
        await lst.close()
        with pytest.raises(ConnectionClosed) as e:
            await ws.recv()
    assert e.value.rcvd is not None and e.value.rcvd.code == 1001
    assert echo.gone == echo.opened


async def test_a_silent_client_is_pinged_then_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wire, "PING_INTERVAL", 0.2)
    monkeypatch.setattr(wire, "PING_TIMEOUT", 0.2)
    monkeypatch.setattr(wire, "SWEEP", 0.05)
    echo = Echo()
    lst = WireListener(echo.on_open, echo.on_gone)
    port = await lst.start("127.0.0.1", 0)
    try:
        # a client that answers pings (websockets does) stays
        async with websockets.connect(f"ws://127.0.0.1:{port}/", ping_interval=None) as ok:
            # a raw client that never answers
            r, w = await asyncio.open_connection("127.0.0.1", port)
            key = base64.b64encode(os.urandom(16)).decode()
            w.write(
                f"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
            )
            assert (await r.readline()).startswith(b"HTTP/1.1 101")
            while (await r.readline()) != b"\r\n":
                pass
            got = await asyncio.wait_for(r.read(), 5)  # until the server closes the TCP connection
            assert got[0] == 0x89  # a ping
            close = got[got.index(b"\x88") :]
            assert int.from_bytes(close[2:4], "big") == 1011
            await ok.send('{"eventName": "stop_game"}')
            assert ok.state.name == "OPEN"
        await until(lambda: len(echo.gone) == 2)
    finally:
        await lst.close()


def _masked(opcode: int, payload: bytes) -> bytes:
    mask = os.urandom(4)
    assert len(payload) < 126
    return bytes((0x80 | opcode, 0x80 | len(payload))) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


async def test_a_frame_sent_with_the_close_frame_is_still_read(listener: tuple[WireListener, Echo, str]) -> None:
    _, echo, url = listener
    host, port = url[5:-1].split(":")
    r, w = await asyncio.open_connection(host, int(port))
    key = base64.b64encode(os.urandom(16)).decode()
    w.write(
        f"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    assert (await r.readline()).startswith(b"HTTP/1.1 101")
    w.write(_masked(0x1, b'{"eventName": "stop_game"}') + _masked(0x8, (1000).to_bytes(2, "big")))
    rest = await asyncio.wait_for(r.read(), 5)  # the server answers the close and closes the TCP connection
    assert b"\x88\x02\x03\xe8" in rest
    await until(lambda: echo.gone)
    assert isinstance(echo.got[0], tc.StopGame)


async def test_a_frame_is_reported_sent_when_it_is_written_not_when_queued(
    listener: tuple[WireListener, Echo, str],
) -> None:
    """A request's deadline starts at its write: while the socket's buffer is full (the
    transport paused writing) a queued request is not reported; it is once written."""
    _, echo, url = listener
    async with websockets.connect(url, compression=None) as ws:
        await until(lambda: echo.opened)
        peer = echo.opened[0]
        told: list[float] = []
        peer.pause_writing()  # what the transport says when its buffer is full
        peer.send({"eventName": "your_turn", "data": {}}, told.append)
        for _ in range(5):
            await asyncio.sleep(0)
        assert not told
        before = asyncio.get_running_loop().time()
        peer.resume_writing()
        await until(lambda: told)
        assert told[0] >= before
        assert json.loads(await ws.recv())["eventName"] == "your_turn"
