"""The lean WebSocket listener of ``moonshot serve --trend-port``: an asyncio ``Protocol`` over
the ``websockets`` library's sans-I/O :class:`~websockets.server.ServerProtocol`, no ASGI.

Why: under uvicorn every frame a table sends a chair went through ASGI (a ``send`` coroutine, a
message dict, a queue and a writer task a socket) and every frame read came back the same way;
at 500 tables that path was most of what a decision cost the server. Here a table step's frames
for a chair are framed with the chair's other frames and written in **one** ``transport.write``
(one ``call_soon`` a step writes every chair's frames), and a frame read goes straight from
``data_received`` to the chair's reply, with no task a socket.

What it keeps of the ASGI listener's behaviour (uvicorn with websockets-sansio, the settings
:class:`~moonshot.protocols.trend.server.TrendService` used):

* the handshake by ``websockets`` (``ServerProtocol.accept``) at ``/`` (a query string is
  allowed); a WebSocket at any other path gets HTTP 403 and a plain HTTP request 404, as under
  Starlette; a bad upgrade request gets ``websockets``' answer (400, 426); no per-message
  deflate (none is offered back);
* messages up to 64 KiB (``MAX_FRAME``) reach the Trend layer; a longer one closes the socket
  with 1009 (``websockets``' limit, read from the frame header: the payload is never buffered),
  and the address is penalised as for a flood; fragmented messages are put together;
  text and binary both go to the parser (invalid UTF-8 is ignored as "not JSON", never a close);
* the flood limit (a close with 1008) and bad input handling of
  :class:`~moonshot.protocols.trend.seat.PeerBase`;
* per-address shares (:class:`~moonshot.runtime.limits.ClientGuard`, when given): an address over
  its connections gets HTTP 429 with ``Retry-After`` to its handshake, and a connection from an
  address just dropped for flooding (1008, 1009) is read only after the address's penalty;
* ``close(code, reason)`` sends what is queued, then the close frame with the reason;
* keepalive: a client not heard from for ``PING_INTERVAL`` seconds gets a ping; one silent for
  ``PING_INTERVAL + PING_TIMEOUT`` seconds is closed with 1011 (uvicorn's 20 s and 20 s); a
  connection that has not finished its handshake after ``OPEN_TIMEOUT`` seconds is dropped;
  pings from the client are answered (by ``websockets``);
* a client that stops reading: frames wait while the transport's buffer is full, and once
  ``max_queue`` of them wait the socket is closed with 1008, as before.

Data frames are written with their header built here (``0x81`` and the length: a server's frames
are not masked and no extension is negotiated), the same bytes ``websockets`` would write; control
frames (close, ping, pong) and the handshake are ``websockets``' own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import struct
from collections.abc import Callable
from typing import Any

from websockets.frames import Frame, Opcode
from websockets.http11 import Request
from websockets.protocol import State
from websockets.server import ServerProtocol
from websockets.typing import BytesLike

from moonshot.protocols.trend import codec as tc
from moonshot.protocols.trend.seat import PeerBase
from moonshot.runtime.clients import peer_ip
from moonshot.runtime.limits import ClientGuard, Hold, address_of

log = logging.getLogger("moonshot.trend")

PING_INTERVAL = 20.0  # seconds without a frame from the client before it is pinged
PING_TIMEOUT = 20.0  # further seconds of silence before it is closed (1011)
OPEN_TIMEOUT = 10.0  # seconds for the opening handshake
CLOSE_TIMEOUT = 10.0  # seconds the client has to close the TCP connection after the close frames
MAX_MESSAGE = tc.MAX_FRAME  # longer messages close the socket (1009)
SWEEP = 5.0  # seconds between keepalive checks (one timer for all the listener's sockets)
SLICE = 4096  # input is parsed this many bytes at a time

_OPEN = State.OPEN
_TEXT, _BINARY, _CONT, _CLOSE = Opcode.TEXT, Opcode.BINARY, Opcode.CONT, Opcode.CLOSE
_H16 = struct.Struct("!BBH")
_H64 = struct.Struct("!BBQ")


def text_frame_header(n: int) -> bytes:
    """The header of an unmasked, final text frame of ``n`` bytes (RFC 6455 5.2)."""
    if n < 126:
        return bytes((0x81, n))
    if n < 65536:
        return _H16.pack(0x81, 126, n)
    return _H64.pack(0x81, 127, n)


def _short_reason(reason: str) -> str:
    """A close reason that fits a close frame (123 bytes of UTF-8 at most)."""
    return reason.encode()[:120].decode(errors="ignore")


class WirePeer(PeerBase, asyncio.Protocol):
    """One Trend client's TCP connection: the WebSocket and the peer the chair talks to."""

    def __init__(self, listener: WireListener) -> None:
        super().__init__(max_queue=listener.max_queue, flood_rate=listener.flood_rate)
        self.listener = listener
        self.loop = listener.loop
        self.conn = ServerProtocol(max_size=MAX_MESSAGE)
        self.transport: asyncio.Transport | None = None
        self.opened = False  # the handshake is done and the peer was handed to the service
        self.born = self.heard = self.loop.time()
        self.pinged = False
        self._out: list[str] = []  # frames of this step, written together by _flush
        self._on_sent: list[Callable[[float], None]] = []  # told when this step's frames are written
        self._scheduled = False
        self._paused = False
        self._parts: list[BytesLike] | None = None  # a fragmented message so far
        self._lost = False
        self._close_timer: asyncio.TimerHandle | None = None
        self.ip = "?"
        self.hold: Hold | None = None  # its share of the address's connections
        self.refusal: str | None = None  # over the address's connections: its handshake gets 429
        self.dropped_for_abuse = False  # closed for a flood or an over-long frame: nothing more is read
        self.via_proxy: str | None = None  # the trusted proxy it came through (the client is in the headers)
        self.on_flood = listener.flooded

    # ------------------------------------------------------------ asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        peer = transport.get_extra_info("peername")
        if isinstance(peer, tuple) and len(peer) >= 2:
            self.addr = f"{peer[0]}:{peer[1]}"
        self.ip = address_of(peer)
        self.listener.conns.add(self)
        guard = self.listener.guard
        if guard is not None and guard.proxies.trusts(peer_ip(peer)):
            # a trusted proxy: the client is named by its handshake's headers, admitted there
            self.via_proxy = peer_ip(peer)
        elif guard is not None:
            self.hold, wait, self.refusal = guard.admit(self.ip)
            if self.refusal is not None:
                log.warning("event=connection_refused peer=%s reason=%s", self.addr, self.refusal.replace(" ", "_"))
            elif wait > 0:  # dropped for flooding a moment ago: its next connections wait
                log.info("event=connection_slowed peer=%s wait=%.1f", self.addr, wait)
                transport.pause_reading()
                self.loop.call_later(wait, self._resume_reading)

    def _resume_reading(self) -> None:
        if self.transport is not None and not self._lost and not self.transport.is_closing():
            self.transport.resume_reading()

    def data_received(self, data: bytes) -> None:
        # parsed a slice at a time: a flood of tiny frames is closed after its first slice, and
        # what it sent after that is never parsed (a 64 KiB read can hold 9,000 frames)
        for k in range(0, len(data), SLICE):
            if self.dropped_for_abuse:
                return
            self._receive(data[k : k + SLICE])

    def _receive(self, data: bytes) -> None:
        now = self.loop.time()
        self.heard = now
        self.pinged = False
        conn = self.conn
        conn.receive_data(data)
        messages: list[BytesLike] = []
        client_closed = False
        for ev in conn.events_received():
            if not isinstance(ev, Frame):
                if isinstance(ev, Request):
                    self._handshake(ev)
                continue
            op = ev.opcode
            if op is _TEXT or op is _BINARY:
                if ev.fin:
                    messages.append(ev.data)
                else:
                    self._parts = [ev.data]
            elif op is _CONT:
                if self._parts is not None:
                    self._parts.append(ev.data)
                    if ev.fin:
                        messages.append(b"".join(self._parts))
                        self._parts = None
            elif op is _CLOSE:
                client_closed = True  # what came before the close frame is still read
        if self.opened:
            for m in messages:
                if self.closed:  # closed by the server meanwhile (a refused join): no more input
                    break
                self.received(m if isinstance(m, bytes) else bytes(m), now)
        # the handshake's answer, pongs, the close frame's answer (frames the messages produced
        # go out at the end of the step, after these)
        sent = conn.close_sent
        if sent is not None and sent.code == 1009 and not self.closed:  # over MAX_FRAME
            self.closed = True
            log.warning("event=frame_too_long peer=%s limit=%d", self.addr, MAX_MESSAGE)
            self.listener.flooded(self)
        self._write_protocol_data()
        if client_closed:
            self.closed = True  # nothing more goes out but the close frame's answer

    def eof_received(self) -> bool | None:
        self.conn.receive_eof()
        self._write_protocol_data()
        return None  # the transport closes itself

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        if self._out and not self._scheduled:
            self._scheduled = True
            self.listener.dirty(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        self.closed = True
        if self.hold is not None:
            self.hold.release()
        self._out.clear()
        self._on_sent.clear()
        if self._close_timer is not None:
            self._close_timer.cancel()
        self.listener.conns.discard(self)
        if self.opened:
            self.opened = False
            self.listener.on_gone(self)

    # ------------------------------------------------------------ the peer the chair talks to
    def send(self, message: dict[str, Any], on_sent: Callable[[float], None] | None = None) -> None:
        if self.closed:
            return
        if len(self._out) >= self.max_queue:
            log.warning("event=slow_client peer=%s queued=%d", self.addr, len(self._out))
            self.close(1008, "too many frames waiting: the client does not read")
            return
        self._out.append(tc.encode_frame(message))
        if on_sent is not None:
            self._on_sent.append(on_sent)
        if not self._scheduled and not self._paused:
            self._scheduled = True
            self.listener.dirty(self)

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Close after what is queued (a refused join, a slow client, shutdown)."""
        if self.closed or self._lost:
            return
        self.closed = True
        self._flush(force=True)
        if self.conn.state is _OPEN:
            self.conn.send_close(code, _short_reason(reason))
            self._write_protocol_data()
            self._close_timer = self.loop.call_later(CLOSE_TIMEOUT, self.abort)
        elif self.transport is not None:
            self.transport.close()

    def abort(self) -> None:
        if self.transport is not None and not self._lost:
            self.transport.abort()

    # ------------------------------------------------------------ inside
    def _from_proxy(self, request: Request) -> None:
        """The handshake of a connection from a trusted proxy: the real client (``Forwarded``,
        ``X-Forwarded-For``) takes the address's share, or is refused (429) as a direct one is."""
        guard = self.listener.guard
        assert guard is not None and self.via_proxy is not None
        proxy = self.addr
        client = guard.proxies.resolve(self.via_proxy, request.headers.raw_items())
        self.addr = f"{client.ip}:{client.port}"
        self.ip = client.key
        log.info("event=forwarded peer=%s proxy=%s scheme=%s", self.addr, proxy, client.scheme or "ws")
        self.hold, wait, self.refusal = guard.admit(self.ip)
        if self.refusal is None and wait > 0:  # just dropped for flooding: nothing is read for a while
            if self.hold is not None:
                self.hold.release()
                self.hold = None
            self.refusal = f"dropped for flooding a moment ago: try again in {wait:.0f} s"

    def _handshake(self, request: Request) -> None:
        conn = self.conn
        if self.via_proxy is not None and self.hold is None and self.refusal is None:
            self._from_proxy(request)
        # what the ASGI listener answered: plain HTTP 404, a WebSocket at another path 403
        if "websocket" not in request.headers.get("Upgrade", "").lower():
            response = conn.reject(404, "Not Found")
        elif request.path.split("?", 1)[0] != "/":
            response = conn.reject(403, "Forbidden: the Trend WebSocket is at /\n")
        elif self.refusal is not None:
            response = conn.reject(429, f"Too Many Requests: {self.refusal}\n")
            response.headers["Retry-After"] = "10"
        else:
            response = conn.accept(request)
        conn.send_response(response)
        if conn.state is _OPEN:
            self.opened = True
            self.listener.on_open(self)
        else:
            log.info("event=handshake_refused peer=%s status=%d", self.addr, response.status_code)

    def _flush(self, force: bool = False) -> None:
        """This step's frames, framed together, in one write (the listener calls it once a step)."""
        self._scheduled = False
        out = self._out
        if not out or (self._paused and not force) or self._lost or self.transport is None:
            return
        if self.conn.state is not _OPEN:
            out.clear()
            self._on_sent.clear()
            return
        chunks = [d for d in self.conn.data_to_send() if d]
        for text in out:
            b = text.encode()
            chunks.append(text_frame_header(len(b)))
            chunks.append(b)
        out.clear()
        self.transport.write(b"".join(chunks))
        if self._on_sent:  # requests in this write: their deadlines run from now
            sent, self._on_sent = self._on_sent, []
            now = self.loop.time()
            for cb in sent:
                cb(now)

    def _write_protocol_data(self) -> None:
        """What ``websockets`` has to send (the handshake's answer, pongs, close frames); an end
        of stream closes the TCP connection (a server closes first)."""
        if self.transport is None or self._lost:
            return
        eof = False
        chunks = []
        for d in self.conn.data_to_send():
            if d:
                chunks.append(d)
            else:
                eof = True
        if chunks:
            self.transport.write(b"".join(chunks))
        if eof:
            self.closed = True
            self.transport.close()

    def keepalive(self, now: float) -> None:
        """The listener's sweep: ping a quiet client, close a silent one."""
        if self._lost or self.transport is None:
            return
        if not self.opened:
            if self.conn.state is State.CONNECTING and now - self.born > OPEN_TIMEOUT:
                self.transport.abort()
            return
        if self.conn.state is not _OPEN:
            return
        quiet = now - self.heard
        if quiet > PING_INTERVAL + PING_TIMEOUT:
            log.info("event=keepalive_timeout peer=%s", self.addr)
            self.closed = True
            self.conn.fail(1011, "keepalive ping timeout")
            self._write_protocol_data()
            self._close_timer = self.loop.call_later(CLOSE_TIMEOUT, self.abort)
        elif quiet > PING_INTERVAL and not self.pinged:
            self.pinged = True
            self._flush(force=True)
            self.conn.send_ping(b"")
            self._write_protocol_data()


class WireListener:
    """A TCP server of :class:`WirePeer` s; ``on_open`` when a WebSocket is open, ``on_gone``
    when an open one is gone."""

    def __init__(
        self,
        on_open: Callable[[WirePeer], None],
        on_gone: Callable[[WirePeer], None],
        *,
        max_queue: int = 5000,
        flood_rate: float = 200.0,
        guard: ClientGuard | None = None,
    ) -> None:
        self.on_open = on_open
        self.guard = guard  # per-address shares and penalties; None: none
        self.on_gone = on_gone
        self.max_queue = max_queue
        self.flood_rate = flood_rate
        self.loop = asyncio.get_running_loop()
        self.conns: set[WirePeer] = set()
        self.server: asyncio.Server | None = None
        self._sweeper: asyncio.TimerHandle | None = None
        self._dirty: list[WirePeer] = []  # peers with frames to write at the end of this step

    def flooded(self, peer: PeerBase) -> None:
        """``peer`` was closed for flooding (1008) or an over-long frame (1009): nothing more it
        sends is read, its TCP connection ends once the close frame is out, and its address's
        next connections wait."""
        if not isinstance(peer, WirePeer):
            return
        peer.dropped_for_abuse = True
        peer._write_protocol_data()
        if peer.transport is not None:
            peer.transport.close()  # after what is buffered (the close frame)
        if self.guard is not None:
            wait = self.guard.dropped(peer.ip)
            log.info("event=penalty peer=%s wait=%.1f", peer.addr, wait)

    def dirty(self, peer: WirePeer) -> None:
        """``peer`` has frames to write: one callback writes every such peer's, each in one write."""
        if not self._dirty:
            self.loop.call_soon(self._flush_all)
        self._dirty.append(peer)

    def _flush_all(self) -> None:
        dirty, self._dirty = self._dirty, []
        for peer in dirty:
            try:
                peer._flush()
            except Exception:  # one socket's trouble costs the others nothing
                log.exception("event=write_failed peer=%s", peer.addr)

    async def start(self, host: str, port: int, reuse_port: bool = False) -> int:
        """Listen; ``reuse_port``: share the port with other processes (SO_REUSEPORT)."""
        self.server = await self.loop.create_server(
            lambda: WirePeer(self), host, port, backlog=2048, reuse_port=reuse_port or None
        )
        self._sweeper = self.loop.call_later(SWEEP, self._sweep)
        return int(self.server.sockets[0].getsockname()[1])

    def _sweep(self) -> None:
        now = self.loop.time()
        for c in list(self.conns):
            try:
                c.keepalive(now)
            except Exception:  # one socket's trouble never stops the others' keepalive
                log.exception("event=keepalive_failed peer=%s", c.addr)
        self._sweeper = self.loop.call_later(SWEEP, self._sweep)

    async def close(self, code: int = 1001, reason: str = "server shutting down") -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
        if self.server is not None:
            self.server.close()
        for c in list(self.conns):
            if c.opened:
                c.close(code, reason)
            elif c.transport is not None:
                c.transport.close()
        deadline = self.loop.time() + 2.0
        while self.conns and self.loop.time() < deadline:
            await asyncio.sleep(0.02)
        for c in list(self.conns):
            c.abort()
        if self.server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.server.wait_closed(), 2.0)


__all__ = ["MAX_MESSAGE", "PING_INTERVAL", "PING_TIMEOUT", "WireListener", "WirePeer", "text_frame_header"]
