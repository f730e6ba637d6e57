"""A Trend player's WebSocket and its chair: :class:`Peer` (one socket, an output queue, input
limits) and :class:`TrendSeat` (the table :class:`~moonshot.runtime.table.Seat` that turns the
chair's events into Trend events with a :class:`~moonshot.protocols.trend.codec.TrendCodec`).

Both the one-table node (``moonshot trend-node``) and ``moonshot serve --trend-port`` use them.

What a misbehaving client gets: a frame that is not JSON, names an unknown event or has wrong
types is ignored, counted and logged; a reply with the wrong ``dealNumber``/``roundNumber`` is
dropped; a wrong card makes the table play a random one (``serverRandom``, ``errorCount``). A
frame over 64 KiB (``MAX_FRAME``; Trend's largest frame is about 2 KB) closes the socket with
1009, and more than ``flood_rate`` frames a second (beyond a burst of as many) close it with 1008
(policy violation): ``on_flood`` is told, and the server makes the address's next connections
wait (SDK bots reconnect at once on a close, so a penalty, not the close, is what slows them). A
refused token closes the socket with the reason. A client that stops reading is cut off once
``max_queue`` frames wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect
from websockets.exceptions import InvalidState

from moonshot.core.rules import Rules
from moonshot.core.variants import TREND
from moonshot.protocols.trend import codec as tc
from moonshot.runtime.limits import address_of
from moonshot.runtime.table import DecisionRequest, Seat, SeatKind, Table, TableEvent, TableNotice, TableStatus

log = logging.getLogger("moonshot.trend")

# one cache of player entries a table: its four chairs (and event after event) share each entry
# and its JSON (an entry's key is everything it is made of); it goes with the table
_ENTRIES: weakref.WeakKeyDictionary[Table, tc.EntryCache] = weakref.WeakKeyDictionary()


def entry_cache(table: Table) -> tc.EntryCache:
    """The player entries the chairs of ``table`` share."""
    cache = _ENTRIES.get(table)
    if cache is None:
        cache = _ENTRIES[table] = tc.EntryCache()
    return cache


def chair_status(table: Table) -> tuple[list[int], list[tuple[int, int]]]:
    """Each chair's Trend ``status`` and (``timeoutCount``, ``errorCount``) now, read from the
    table's :class:`~moonshot.runtime.table.TableState` (a table owned by another process of a
    cluster keeps the owner's, sent with the events it goes with)."""
    status, counts = [], []
    for c in table.snapshot().chairs:
        if c.occupant == "empty":
            status.append(tc.OFFLINE)
        elif c.timed_out:
            status.append(tc.TIMED_OUT)
        else:
            status.append(tc.ONLINE)
        counts.append((c.timeouts, c.errors))
    return status, counts


def uvicorn_connection(ws: WebSocket) -> Any | None:
    """uvicorn's websockets-sansio connection behind ``ws``, when that is what serves it (both
    Trend listeners run uvicorn with it), else None.

    A Trend table sends a chair several frames at once (a ``turn_end``, a ``round_end``, a
    ``new_round`` and its ``your_turn``); through ASGI each frame is one ``send`` and one socket
    write, a large part of what a decision costs the server. :func:`write_frames` frames them with
    the same ``websockets`` protocol object that uvicorn's ``send`` uses, so the bytes are the
    same, and writes them to the socket in one write."""
    proto = getattr(getattr(ws, "_receive", None), "__self__", None)
    if type(proto).__name__ != "WebSocketsSansIOProtocol":
        return None
    needed = ("conn", "transport", "writable", "disconnected", "handshake_complete", "close_sent", "initial_response")
    return proto if all(hasattr(proto, a) for a in needed) else None


async def write_frames(proto: Any, texts: Sequence[str]) -> bool:
    """What uvicorn's ``send`` does for each ``websocket.send`` text, the frames in one socket
    write; False (nothing sent) when the connection is not simply open: the caller then sends
    through ASGI, which raises what uvicorn raises in that state."""
    await proto.writable.wait()  # uvicorn's flow control: the transport's buffer is not full
    if proto.disconnected or not proto.handshake_complete or proto.close_sent or proto.initial_response is not None:
        return False
    conn = proto.conn
    try:
        for text in texts:
            conn.send_text(text.encode())
    except InvalidState as e:
        raise RuntimeError("the WebSocket is closing") from e
    proto.transport.write(b"".join(conn.data_to_send()))
    return True


class PeerBase(ABC):
    """What both kinds of Trend socket share: the counters, the flood limit and what a frame
    from the client becomes (:meth:`received`). :class:`Peer` is a socket under an ASGI server
    (the node); :class:`moonshot.protocols.trend.wire.WirePeer` is the lean listener of
    ``moonshot serve --trend-port``."""

    addr = "?"
    ip = "?"  # its address's share key (moonshot.runtime.clients.share_key)

    def __init__(self, *, max_queue: int = 5000, flood_rate: float = 200.0) -> None:
        self.max_queue = max_queue
        self.closed = False
        self.ignored = 0  # frames ignored: malformed, unknown, too long, flood
        self.dropped = 0  # replies dropped: wrong deal/round number, nothing asked
        self.flood_rate = flood_rate
        self._allowance = flood_rate
        self._last = 0.0
        self.on_message: Callable[[tc.ClientEvent], None] = lambda m: None
        self.on_flood: Callable[[PeerBase], None] = lambda peer: None  # closed for flooding

    @abstractmethod
    def send(self, message: dict[str, Any], on_sent: Callable[[float], None] | None = None) -> None:
        """Send one frame to the client (each kind of socket does it its own way); ``on_sent``
        is called with the loop time once the frame is written to the socket (never, when it is
        dropped: a closed socket)."""

    def send_many(self, messages: Sequence[dict[str, Any]]) -> None:
        for m in messages:
            self.send(m)

    @abstractmethod
    def close(self, code: int = 1000, reason: str = "") -> None:
        """Close the socket with ``code`` and ``reason``."""

    def allow(self, now: float) -> bool:
        """Token bucket: ``flood_rate`` frames a second, bursts up to as many."""
        self._allowance = min(self.flood_rate, self._allowance + (now - self._last) * self.flood_rate)
        self._last = now
        if self._allowance < 1.0:
            return False
        self._allowance -= 1.0
        return True

    def received(self, data: str | bytes, now: float) -> None:
        """One frame from the client: the flood limit, parsing, then ``on_message``."""
        if self.closed:
            return
        if not self.allow(now):
            self.ignored += 1
            log.warning("event=flood_dropped peer=%s limit=%g_frames/s", self.addr, self.flood_rate)
            self.close(1008, f"more than {self.flood_rate:g} frames a second")
            try:
                self.on_flood(self)
            except Exception:
                log.exception("event=flood_hook_failed peer=%s", self.addr)
            return
        event = tc.parse_frame(data)
        if isinstance(event, tc.Malformed) and event.event_name is None:
            self.ignored += 1
            log.info("event=bad_input peer=%s ignored=%d reason=%s", self.addr, self.ignored, event.reason)
            return
        try:
            self.on_message(event)
        except Exception:  # a bug here must cost this socket at most, never the table
            log.exception("event=handler_error peer=%s", self.addr)


class Peer(PeerBase):
    """One WebSocket under an ASGI server: frames out through a queue and a writer task, frames
    in with limits."""

    def __init__(self, ws: WebSocket, *, max_queue: int = 5000, flood_rate: float = 200.0) -> None:
        super().__init__(max_queue=max_queue, flood_rate=flood_rate)
        self.ws = ws
        client = ws.client
        self.addr = f"{client.host}:{client.port}" if client is not None else "?"
        self.ip = address_of(client.host) if client is not None else "?"  # the real client behind a trusted proxy
        self.queue: asyncio.Queue[str | tuple[int, str]] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None
        # frames whose sending someone waits to hear of (a request: the table starts its clock)
        self._on_sent: dict[int, Callable[[float], None]] = {}
        self._queued = 0  # frames queued so far (the key of ``_on_sent``)
        self._written = 0  # frames written so far

    def send(self, message: dict[str, Any], on_sent: Callable[[float], None] | None = None) -> None:
        if self.closed:
            return
        if self.queue.qsize() >= self.max_queue:
            log.warning("event=slow_client peer=%s queued=%d", self.addr, self.queue.qsize())
            self.close(1008, "too many frames waiting: the client does not read")
            return
        self.queue.put_nowait(tc.encode_frame(message))
        self._queued += 1
        if on_sent is not None:
            self._on_sent[self._queued] = on_sent

    def _wrote(self, frames: int) -> None:
        """``frames`` more frames are on the socket: tell whoever waits for one of them."""
        first, self._written = self._written, self._written + frames
        if self._on_sent:
            now = asyncio.get_running_loop().time()
            for n in range(first + 1, self._written + 1):
                cb = self._on_sent.pop(n, None)
                if cb is not None:
                    cb(now)

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Close after what is queued (only a refused join does this)."""
        if not self.closed:
            self.closed = True
            self.queue.put_nowait((code, reason))

    async def _write(self) -> None:
        direct = uvicorn_connection(self.ws)
        try:
            while True:
                item = await self.queue.get()
                if isinstance(item, tuple):
                    with contextlib.suppress(Exception):
                        await self.ws.close(item[0], item[1][:120])
                    return
                if direct is None:
                    await self.ws.send_text(item)
                    self._wrote(1)
                    continue
                batch, closing = [item], None
                while not self.queue.empty():  # what the table queued in the same step
                    more = self.queue.get_nowait()
                    if isinstance(more, tuple):
                        closing = more
                        break
                    batch.append(more)
                if not await write_frames(direct, batch):
                    for text in batch:  # not simply open now: the ASGI path does what it must
                        await self.ws.send_text(text)
                self._wrote(len(batch))
                if closing is not None:
                    with contextlib.suppress(Exception):
                        await self.ws.close(closing[0], closing[1][:120])
                    return
        except (WebSocketDisconnect, RuntimeError, OSError):
            self.closed = True
        except Exception:  # a send failure costs this socket at most
            log.exception("event=send_failed peer=%s", self.addr)
            self.closed = True

    async def run(self) -> None:
        """Read frames until the client goes; every frame goes to ``on_message``."""
        self._writer = asyncio.get_running_loop().create_task(self._write())
        loop = asyncio.get_running_loop()
        try:
            while True:
                msg = await self.ws.receive()
                if msg["type"] == "websocket.disconnect":
                    break
                data = msg.get("text")
                if data is None:
                    data = msg.get("bytes") or b""
                self.received(data, loop.time())
        except (WebSocketDisconnect, RuntimeError, OSError):
            pass
        finally:
            self.closed = True
            if self._writer is not None and not self._writer.done():
                self._writer.cancel()


class TrendSeat(Seat):
    """A chair played by a Trend client. Callbacks run in the table's task and never block."""

    protocol = "trend"

    @property
    def gone(self) -> bool:
        return self.peer.closed

    reports_sent = True  # a request's deadline runs from when its frame is written

    def __init__(
        self,
        peer: PeerBase,
        chair: int = -1,
        players: Sequence[tc.PlayerInfo] = (),
        on_closed: Callable[[TrendSeat, str], None] | None = None,
        name: str = "",
    ) -> None:
        self.peer = peer
        self.chair = chair
        self.name = name
        self.kind = SeatKind.BOT
        self.wants_view = False  # the codec keeps the chair's hand from its own events
        self.codec = tc.TrendCodec(0, [tc.PlayerInfo(i + 1, "") for i in range(4)])
        if players:
            self.seated(chair, players)
        self.table: Table | None = None
        self.request: DecisionRequest | None = None
        self.catching_up = False  # the next on_events is the replay for a rejoined chair
        self._on_closed = on_closed

    def joined_mid_game(self) -> None:
        """Seated in a game restored from its actions (a tournament's, after a restart): the
        first events are a catch-up, as for a rejoined chair."""
        self.catching_up = True

    def seated(self, chair: int, players: Sequence[tc.PlayerInfo], rules: Rules | None = None) -> None:
        """The chair and the four players are known (before the table's first event); ``rules``:
        the table's, when not Trend's own (a mixed table, a tournament)."""
        self.chair = chair
        self.name = players[chair].name
        self.codec = tc.TrendCodec(chair, players, rules or TREND)

    # ------------------------------------------------------------ table callbacks
    def on_events(self, table: Table, events: Sequence[TableEvent]) -> None:
        self.table = table
        if self.codec.cache is None:
            self.codec.cache = entry_cache(table)
        status, counts = chair_status(table)
        frames = self.codec.events([(te.event, te.forced) for te in events], status, counts)
        if self.catching_up:
            self.catching_up = False
            frames = self.codec.catch_up()
        self.peer.send_many(frames)

    def on_request(self, table: Table, request: DecisionRequest) -> None:
        self.table = table
        if self.codec.cache is None:
            self.codec.cache = entry_cache(table)
        self.request = request
        out = self.codec.request(request.phase, request.legal_plays)
        chair, rid = self.chair, request.request_id
        if out is not None:
            self.peer.send(out, lambda at: table.sent(chair, rid, at))
        else:  # nothing to write: the clock runs from now
            table.sent(chair, rid)

    def on_rejected(self, table: Table, request: DecisionRequest, action: object, reason: str) -> None:
        if self.request is request:
            self.request = None
            self.codec.answered()

    def on_notice(self, table: Table, notice: TableNotice) -> None:
        """A table pause or resume: moonshot's ``error`` event (SDK bots ignore it; the socket stays)."""
        if not self.peer.closed:
            self.peer.send(tc.error_frame(notice.text))

    def on_closed(self, table: Table, reason: str) -> None:
        if table.status is TableStatus.CLOSED and not self.peer.closed:  # the operator ended it: say why
            self.peer.send(tc.error_frame(reason))
        self.request = None
        self.table = None
        if self._on_closed is not None:
            self._on_closed(self, reason)

    def end_session(self, reason: str) -> None:
        """The chair is gone for good (its game's host died): an error frame says why; the socket
        stays open for a new join."""
        if not self.peer.closed:
            self.peer.send(tc.error_frame(reason))
        self.request = None
        self.table = None
        if self._on_closed is not None:
            self._on_closed(self, reason)

    # ------------------------------------------------------------ the client's replies
    def reply(self, msg: tc.PassMyCards | tc.ExposeMyCards | tc.PickCard | tc.Malformed) -> None:
        table, req = self.table, self.request
        if table is None or req is None:
            self.peer.dropped += 1
            log.info("event=reply_dropped peer=%s seat=%d reason=not_asked", self.peer.addr, self.chair)
            return
        answer = self.codec.answer(msg)
        if isinstance(answer, tc.Dropped):
            self.peer.dropped += 1
            log.info("event=reply_dropped peer=%s seat=%d reason=%r", self.peer.addr, self.chair, answer.reason)
            return
        self.request = None
        self.codec.answered()
        if isinstance(answer, tc.Wrong):
            log.info("event=wrong_reply peer=%s seat=%d reason=%r", self.peer.addr, self.chair, answer.reason)
            table.reject(self.chair, req.request_id, answer.reason)
        else:
            table.submit(self.chair, answer, req.request_id)


__all__ = ["Peer", "PeerBase", "TrendSeat", "chair_status", "entry_cache", "uvicorn_connection", "write_frames"]
