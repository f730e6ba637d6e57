"""The Sessions protocol TCP server: bytes in, codec, lobby and tables, bytes out.

One :class:`SessionsConnection` (an ``asyncio.Protocol``) per TCP connection; it may open any
number of sessions (one chair each), spread over any number of tables. Each session is a
:class:`SessionSeat`, a table :class:`~moonshot.runtime.table.Seat` that turns the table's
events into Sessions messages with its :class:`~moonshot.protocols.sessions.codec.SessionCodec`.

What a misbehaving client gets (it never affects another session, connection or table):

* garbage between messages, a malformed object, an unknown type: an ``error`` reply (no
  ``seq_num``; it is outside the session sequence), the connection stays open;
* an over-long message (``max_message``, 64 KiB): an ``error`` reply; the message is dropped as
  it streams in, never buffered; the connection stays open;
* half a message and then silence for ``resync_idle`` seconds: the half is dropped with an
  ``error`` reply, so the stream resynchronises (else it would swallow the next messages);
* an illegal card, a duplicate or wrong-sized pass, a malformed ``decided_move`` or
  ``donated_cards``, or a wrong ``seq_num`` on one of them: the move is forfeited at once; the
  server plays a random legal card (or pass) for the session, reported with ``move_source:
  "server"`` to all four sessions; a wrong ``seq_num`` also gets an ``error`` reply;
* no answer within the move timeout: the same random card; after ``max_timeouts`` in a row the
  session counts as gone and a substitute bot plays its chair until the game ends;
* a disconnect: a substitute bot plays the chair at once; a client that stops reading is
  disconnected when its output backlog passes ``max_backlog`` bytes.

* more than ``max_bytes_per_s`` bytes or ``max_messages_per_s`` messages a second on one
  connection, beyond a burst allowance (token buckets): an ``error`` reply saying which limit,
  a ``flood_dropped`` warning in the log, and the connection is closed (its sessions go to bots).
  The decoder's work per byte is constant, so even a flood costs the others little until then.
  The address is remembered (:class:`~moonshot.runtime.limits.ClientGuard`): its next connections
  are read only after a penalty that doubles with each drop;
* more connections, open sessions or sessions waiting for a table from one address than the
  server's :class:`~moonshot.runtime.limits.ClientLimits` allow: an ``error`` with ``about:
  "rate_limit"`` and the connection closed (connections), or a ``game_session_response`` with
  ``status: "error"`` (sessions), the connection kept.

Seats belong to their owners. Session ids are random (48 bits, never one in use or held by a
restored game) and each session gets a secret (``secrets.token_urlsafe(32)``, 256 bits) in its
``game_session_response`` (the extension field ``session_secret``); the table keeps only its
SHA-256 (:attr:`~moonshot.runtime.table.Seat.credential`), and so does the store. The seed gives
no way to resume a session on a new connection. moonshot adds one message, ``resume_session
{session_id, session_secret}``: on any connection, it takes back the chair of a session whose
game is still on (restored after a restart, or played by a substitute since a disconnect or
``max_timeouts``), if the secret matches (``hmac.compare_digest``); server bot chairs have no
secret and are never resumable. The reply is ``resume_session_response {session_id, seq_num: 1,
status}``; the game so far follows as the session saw it, every message marked ``"replayed":
true`` (not to be answered), and then play goes on live (a ``start_round`` is sent again, live,
if the session still owes its pass). A session whose chair goes to a server bot while its
connection is open (timeouts) is told so: an ``error`` with ``about: "substituted"``; one whose
chair is taken back on another connection gets ``about: "replaced"``.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import hashlib
import hmac
import json
import logging
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from moonshot.core.actions import Pass, Play
from moonshot.core.engine import Phase
from moonshot.protocols.sessions import codec as sc
from moonshot.runtime.clients import peer_ip, share_key
from moonshot.runtime.limits import ClientGuard, Hold, address_of
from moonshot.runtime.lobby import Candidate, ChairRejoin, GameType, Lobby, LobbyError
from moonshot.runtime.proxyproto import ProxyError, ProxyHeaderParser
from moonshot.runtime.ratelimit import AttemptLimiter, TokenBucket
from moonshot.runtime.table import DecisionRequest, Seat, SeatKind, Table, TableEvent, TableNotice, TableStatus

log = logging.getLogger("moonshot.sessions")


@dataclass
class SessionsOptions:
    max_message: int = sc.MAX_MESSAGE
    max_backlog: int = 4 * 1024 * 1024  # bytes queued to a client that does not read
    resync_idle: float = 5.0  # seconds of silence after which half a message is dropped
    max_sessions: int = 1000  # open sessions per connection
    max_depth: int = sc.MAX_DEPTH  # brace nesting of one message
    # input limits per connection (token buckets): beyond them the connection is dropped. A
    # busy client (hundreds of sessions on one connection) sends well under 100 KB/s
    max_bytes_per_s: float = 1024 * 1024
    burst_bytes: float = 4 * 1024 * 1024
    max_messages_per_s: float = 10_000
    burst_messages: float = 20_000
    # resume_session: wrong secrets a session id, or an address, may try within the window
    rejoin_limit: int = 5
    rejoin_window: float = 60.0
    # seconds a trusted proxy's connection has to send its whole PROXY header (then it is closed)
    proxy_timeout: float = 5.0


SLICE = 4096  # input is decoded this many bytes at a time, so a flood is caught between slices
# what one connection's input may take of one turn of the event loop: bytes decoded and messages
# handled (whole slices); the rest waits for the next turn, its socket not read meanwhile, so a
# flood (a 256 KiB read of braces is milliseconds of scanning, 300 joins are tens) is paid in
# slices between everyone else's I/O, and at the pace the server takes it
TURN_BYTES = 32 * 1024
TURN_MESSAGES = 64
# a lost connection's sessions are handed to their tables this many a loop turn: each table
# reacts in its own task, and hundreds at once (one client's abandoned sessions) would all run
# in the next turn, ahead of everyone's I/O
DETACH_PER_TURN = 32
SESSION_ID_BITS = 48  # random session ids: below 2**53, so JavaScript clients read them exactly


def new_secret() -> tuple[str, str]:
    """A session secret (256 bits, URL-safe text) and its credential (what the server keeps)."""
    secret = secrets.token_urlsafe(32)
    return secret, credential_of(secret)


def credential_of(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def secret_matches(secret: str, credential: str | None) -> bool:
    """Does ``secret`` prove ownership of a chair with ``credential``? (Constant time.)"""
    if credential is None:
        return False
    return hmac.compare_digest(credential_of(secret), credential)


class SessionSeat(Seat):
    """One session: a chair at a table, played by a remote client over a shared connection."""

    protocol = "sessions"

    @property
    def gone(self) -> bool:
        return self.conn.closed

    @property
    def client_key(self) -> object | None:  # type: ignore[override]
        """Its connection, while open: a finished table's next game is asked for on the connection
        that played the chair (nobody else holds it), by a ``game_session_request`` with the same
        ``lobby_code`` (moonshot.http.rematch)."""
        return None if self.conn.closed else self.conn

    reports_sent = True  # a request's deadline runs from when its message is written

    def __init__(self, conn: SessionsConnection, session_id: int, tag: str, kind: SeatKind, request_seq: int) -> None:
        self.conn = conn
        self.session_id = session_id
        self.base_tag = tag
        self.name = sc.tag_with_id(tag, session_id)
        self.kind = kind
        self.wants_view = False  # a move_request carries only the legal moves
        self.codec = sc.SessionCodec(session_id, request_seq)
        self.table: Table | None = None
        self.seat = -1
        self.request: DecisionRequest | None = None
        self.candidate: Candidate | None = None
        self.closed = False
        self.resuming = False  # the next on_events is the replay of a resumed session
        self.owes_pass = False  # resumed mid-round: the round's start_round goes out again, live
        # a pass that came before its request: at a table on another node (a cluster), the
        # request may still be on its way when the client, told start_round, passes unprompted
        self.early: sc.DonatedCards | None = None
        self.credential: str | None = None  # set when it sits down (see SessionsConnection)
        self.hold: Hold | None = None  # its share of the address's open sessions
        self.waiting: Hold | None = None  # ... and of its sessions waiting for a table

    # table callbacks (run in the table's task; never block)
    def matched(self, table: Table, seat: int) -> None:
        self.table = table
        self.seat = seat
        self.candidate = None
        if self.waiting is not None:
            self.waiting.release()
        self.codec.seat_at(seat, table.seat_names())

    def joined_mid_game(self) -> None:
        """Seated in a game restored from its actions (a tournament's, after a restart): what
        happened so far comes as a replay, and the round's pass is asked for, as on a resume."""
        self.resuming = self.owes_pass = True

    def on_events(self, table: Table, events: Sequence[TableEvent]) -> None:
        replayed, self.resuming = self.resuming, False
        frames, types = self.codec.frames([(te.event, te.forced) for te in events], replayed)
        if "start_round" in types:
            self.early = None  # a new round: an earlier unclaimed pass is stale
            if not replayed:
                self.owes_pass = False
        self.conn.send_frames(frames)

    def on_request(self, table: Table, request: DecisionRequest) -> None:
        self.request = request
        early, self.early = self.early, None
        if early is not None and request.phase is not Phase.PLAY:
            self.answer(early)  # the client passed already, before this request arrived
            return
        if request.phase is Phase.PLAY:
            self.owes_pass = False
            self.conn.send_frames([self.codec.move_request_frame(request.legal_plays)])
        elif self.owes_pass:
            self.owes_pass = False
            self.conn.send(self.codec.pass_request(request.view.hand))
        # passing: start_round already told the client; it sends donated_cards unprompted.
        # Either way the deadline runs from when that message is written
        seat, rid = self.seat, request.request_id
        self.conn.when_written(lambda at: table.sent(seat, rid, at))

    def on_rejected(self, table: Table, request: DecisionRequest, action: object, reason: str) -> None:
        if self.request is request:
            self.request = None

    def on_notice(self, table: Table, notice: TableNotice) -> None:
        """A table pause or resume: an ``error`` naming the session, ``about: paused``/``resumed``
        (not fatal: the session and its open request stay)."""
        self.conn.send(sc.error_message(f"session {self.session_id}: {notice.text}", self.session_id, notice.kind))

    def on_closed(self, table: Table, reason: str) -> None:
        self.closed = True
        self.request = None
        self.table = None  # no cycle left for the garbage collector: refcounts free the game
        if table.status is TableStatus.RUNNING:  # the game goes on without this session: say why
            if reason == "replaced":
                msg = f"session {self.session_id} was taken back on another connection"
                self.conn.send(sc.error_message(msg, self.session_id, "replaced"))
            else:
                self.conn.send(sc.substituted_message(self.session_id, reason))
            log.info("event=session_substituted session=%d reason=%s peer=%s", self.session_id, reason, self.conn.peer)
        elif table.status is TableStatus.CLOSED:  # the operator ended the game: ``about: closed`` says why
            sid = self.session_id
            self.conn.send(sc.error_message(f"session {sid}: {reason}", sid, "closed"))
        self._forget(reason)

    def end_session(self, reason: str) -> None:
        """The server forgot this session (``about: closed``; the SDK raises ``SessionLost``)."""
        if self.closed:
            return
        self.closed = True
        self.request = None
        self.table = None
        self.candidate = None
        sid = self.session_id
        self.conn.send(sc.error_message(f"session {sid}: {reason}", sid, "closed"))
        self._forget(reason)

    def _forget(self, reason: str) -> None:
        self.release()
        self.conn.session_ended(self, reason)
        if self.conn.server.active.get(self.session_id) is self:
            del self.conn.server.active[self.session_id]

    def release(self) -> None:
        for h in (self.hold, self.waiting):
            if h is not None:
                h.release()

    # client messages
    def answer(self, msg: sc.DonatedCards | sc.DecidedMove) -> None:
        table, req = self.table, self.request
        if table is None or req is None:
            if isinstance(msg, sc.DonatedCards) and table is not None and not isinstance(table, Table):
                self.early = msg  # the pass request is on its way from the table's node: kept for it
                return
            self.conn.send(sc.error_message("not waiting for a move from this session", self.session_id))
            return
        if not self.codec.accept_seq(msg.seq_num):
            self.request = None
            self.conn.send(
                sc.error_message(
                    f"wrong seq_num {msg.seq_num}, expected {self.codec.next_seq}: the server plays for you",
                    self.session_id,
                )
            )
            table.reject(self.seat, req.request_id, f"wrong seq_num {msg.seq_num}")
            return
        self.request = None
        if isinstance(msg, sc.DecidedMove):
            if req.phase is not Phase.PLAY:
                table.reject(self.seat, req.request_id, "decided_move while passing")
                return
            table.submit(self.seat, Play.of(self.seat, msg.card), req.request_id)
            return
        if req.phase not in (Phase.PASS, Phase.PILE):
            table.reject(self.seat, req.request_id, "donated_cards while playing")
            return
        need = table.rules.pass_count
        if msg.count != need or msg.cards.bit_count() != need:
            table.reject(self.seat, req.request_id, f"pass {need} different cards")
            return
        self.codec.passing(msg.order)
        table.submit(self.seat, Pass(self.seat, msg.cards), req.request_id)


class SessionsConnection(asyncio.Protocol):
    def __init__(self, server: SessionsServer) -> None:
        self.server = server
        opts = server.options
        self.decoder = sc.StreamDecoder(opts.max_message, opts.max_depth)
        self.byte_bucket = TokenBucket(opts.max_bytes_per_s, opts.burst_bytes)
        self.message_bucket = TokenBucket(opts.max_messages_per_s, opts.burst_messages)
        self.flooded = False
        self.transport: asyncio.Transport | None = None
        self.sessions: dict[int, SessionSeat] = {}
        self.joining: dict[int, Candidate] = {}  # sessions whose join waits for its answer
        self.backlog: collections.deque[sc.GameSessionRequest] = collections.deque()  # joins after it
        self.peer = "?"
        self.addr = "?"
        self.hold: Hold | None = None  # its share of the address's connections
        self.proxy_header: ProxyHeaderParser | None = None  # from a trusted proxy: its PROXY header so far
        self._proxy_timer: asyncio.TimerHandle | None = None
        self.closed = False
        self._resync: asyncio.TimerHandle | None = None
        self._out: list[bytes] = []
        self._written: list[Callable[[float], None]] = []  # told when ``_out`` is written
        self._flush_pending = False
        self._held: list[bytes] = []  # input beyond this turn's share (TURN_BYTES, TURN_MESSAGES)
        self._paused_for_turn = False

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        peer = transport.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        self.addr = address_of(peer)
        self.server.connections.add(self)
        guard = self.server.guard
        if guard is not None and guard.proxies.trusts(peer_ip(peer)):
            # a trusted load balancer: the PROXY header that must open the stream names the client
            self.proxy_header = ProxyHeaderParser()
            loop = asyncio.get_running_loop()
            self._proxy_timer = loop.call_later(self.server.options.proxy_timeout, self._proxy_refused, "timeout")
            return
        self._admit()

    def _admit(self, rest: bytes = b"") -> None:
        """The client's share of its address's connections (or a refusal, or its penalty first);
        ``rest``: what it sent after a PROXY header, read once it is admitted."""
        guard = self.server.guard
        transport = self.transport
        assert transport is not None
        if guard is not None:
            self.hold, wait, why = guard.admit(self.addr)
            if why is not None:
                log.warning("event=connection_refused peer=%s reason=%s", self.peer, why.replace(" ", "_"))
                self.flooded = True  # nothing it sends is read
                self.send(sc.error_message(f"{why}: connection closed", about="rate_limit"))
                self._flush()
                transport.close()
                return
            if wait > 0:  # dropped for flooding a moment ago: its next connections wait
                log.info("event=connection_slowed peer=%s wait=%.1f", self.peer, wait)
                transport.pause_reading()
                asyncio.get_running_loop().call_later(wait, self._resume_reading, rest)
                rest = b""
        log.info("event=connected peer=%s", self.peer)
        if rest:
            self.data_received(rest)

    def _proxy_received(self, data: bytes) -> None:
        """Bytes from a trusted proxy before its PROXY header is whole."""
        assert self.proxy_header is not None
        try:
            header = self.proxy_header.feed(data)
        except ProxyError as e:
            self._proxy_refused(str(e))
            return
        if header is None:
            return
        rest = self.proxy_header.rest
        self.proxy_header = None
        if self._proxy_timer is not None:
            self._proxy_timer.cancel()
        if header.source is not None:  # else the proxy's own connection (a health check)
            proxy = self.peer
            self.peer = f"{header.source}:{header.source_port}"
            self.addr = share_key(header.source)
            log.info("event=proxied peer=%s proxy=%s version=%d", self.peer, proxy, header.version)
        self._admit(rest)

    def _proxy_refused(self, reason: str) -> None:
        """A trusted proxy's connection without a well-formed PROXY header in time: closed."""
        self.proxy_header = None
        log.warning("event=proxy_header_refused peer=%s reason=%s", self.peer, json.dumps(reason))
        self.flooded = True  # nothing more is read
        if self.transport is not None:
            self.transport.close()

    def _resume_reading(self, rest: bytes = b"") -> None:
        if self.transport is not None and not self.closed and not self.transport.is_closing():
            self.transport.resume_reading()
            if rest:
                self.data_received(rest)

    def data_received(self, data: bytes) -> None:
        if self.flooded or self.closed:
            return
        if self.proxy_header is not None:
            self._proxy_received(data)
            return
        if self._resync is not None:
            self._resync.cancel()
            self._resync = None
        opts = self.server.options
        now = asyncio.get_running_loop().time()
        if not self.byte_bucket.take(len(data), now):
            self.drop_flood(f"more than {opts.max_bytes_per_s:.0f} bytes/s")
            return
        if self._held:  # earlier input still waits for its turn: this comes after it
            self._held.append(data)
            return
        self._consume(data)

    def _consume(self, data: bytes) -> None:
        """Decode and handle ``data``, up to this turn's share; the rest waits for the next turn."""
        opts = self.server.options
        now = asyncio.get_running_loop().time()
        budget, messages = TURN_BYTES, TURN_MESSAGES
        try:
            for k in range(0, len(data), SLICE):
                if budget <= 0 or messages <= 0:
                    self._hold(data[k:])
                    return
                items = self.decoder.feed(data[k : k + SLICE])
                budget -= SLICE
                if items and not self.message_bucket.take(len(items), now):
                    self.drop_flood(f"more than {opts.max_messages_per_s:.0f} messages/s")
                    return
                messages -= len(items)
                for item in items:
                    if isinstance(item, sc.FrameProblem):
                        log.info("event=bad_input peer=%s reason=%s", self.peer, item.reason)
                        self.send(sc.error_message(item.reason))
                    else:
                        self.handle(sc.parse_client_message(item))
                if self.closed:
                    return
        except Exception:  # a bug here must cost this connection at most
            log.exception("event=connection_error peer=%s", self.peer)
            self.close()
            return
        if self.decoder.partial and not self.closed:
            loop = asyncio.get_running_loop()
            self._resync = loop.call_later(self.server.options.resync_idle, self._drop_partial)

    def _hold(self, rest: bytes) -> None:
        """Keep ``rest`` for the next turn of the loop, and stop reading the socket till then."""
        self._held.insert(0, rest)
        if not self._paused_for_turn and self.transport is not None:
            self._paused_for_turn = True
            with contextlib.suppress(NotImplementedError, RuntimeError):
                self.transport.pause_reading()
        asyncio.get_running_loop().call_soon(self._next_turn)

    def _next_turn(self) -> None:
        held, self._held = self._held, []
        if self.closed or self.flooded or self.transport is None:
            return
        self._consume(b"".join(held))
        if not self._held and self._paused_for_turn:
            self._paused_for_turn = False
            if not self.transport.is_closing():
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    self.transport.resume_reading()

    def drop_flood(self, limit: str) -> None:
        """The client sends faster than its limits: tell it, log it, close (after the reply)."""
        self.flooded = True
        log.warning(
            "event=flood_dropped peer=%s limit=%s sessions=%d", self.peer, limit.replace(" ", "_"), len(self.sessions)
        )
        self.send(sc.error_message(f"input rate limit exceeded ({limit}): connection closed", about="rate_limit"))
        if self.server.guard is not None:
            wait = self.server.guard.dropped(self.addr)
            log.info("event=penalty peer=%s wait=%.1f", self.peer, wait)
        self._flush()
        if self.transport is not None:
            self.transport.close()

    def _drop_partial(self) -> None:
        self._resync = None
        dropped = self.decoder.discard_partial()
        if dropped:
            log.info("event=partial_dropped peer=%s chars=%d", self.peer, dropped)
            self.send(sc.error_message(f"incomplete message dropped after {self.server.options.resync_idle}s"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._proxy_timer is not None:
            self._proxy_timer.cancel()
        if self.hold is not None:
            self.hold.release()
        for sid, s in list(self.sessions.items()):
            s.release()
            if self.server.active.get(sid) is s:
                del self.server.active[sid]
        if self._resync is not None:
            self._resync.cancel()
        self.server.connections.discard(self)
        for cand in list(self.joining.values()):
            if isinstance(cand.seat, SessionSeat):
                cand.seat.release()
            self.server.lobby.leave(cand)
        self.joining.clear()
        self.backlog.clear()
        seated: list[tuple[Table, int, SessionSeat]] = []
        for s in list(self.sessions.values()):
            if s.candidate is not None:
                self.server.lobby.leave(s.candidate)
            if s.table is not None and not s.closed:
                seated.append((s.table, s.seat, s))
        self.sessions.clear()
        _detach_in_turns(seated)
        log.info("event=disconnected peer=%s", self.peer)

    # messages
    def handle(self, msg: sc.ClientMessage) -> None:
        if isinstance(msg, sc.DecidedMove | sc.DonatedCards):
            s = self.sessions.get(msg.session_id)
            if s is None:
                self.send(sc.error_message(f"unknown session_id {msg.session_id}", msg.session_id))
                return
            s.answer(msg)
        elif isinstance(msg, sc.ConnectionRequest):
            self.send(sc.connection_response())
        elif isinstance(msg, sc.GameSessionRequest):
            self.open_session(msg)
        elif isinstance(msg, sc.ResumeSession):
            self.resume_session(msg.session_id, msg.secret)
        else:
            # a malformed message changes nothing: the session may still answer correctly
            log.info(
                "event=malformed peer=%s type=%s reason=%s", self.peer, sc.show(msg.type), sc.show(msg.reason, 200)
            )
            self.send(sc.error_message(msg.reason, msg.session_id, msg.type))

    def open_session(self, msg: sc.GameSessionRequest) -> None:
        if len(self.sessions) + len(self.joining) + len(self.backlog) >= self.server.options.max_sessions:
            limit = self.server.options.max_sessions
            self.send(sc.error_message(f"at most {limit} open sessions per connection", about=msg.__class__.__name__))
            return
        if self.joining or self.backlog:
            # an earlier join waits for its answer: the client reads the answers in the order it
            # asked, so this one is handled after it
            self.backlog.append(msg)
            return
        self._join(msg)

    def _next_join(self) -> None:
        while self.backlog and not self.joining and not self.closed:
            self._join(self.backlog.popleft())

    def _join(self, msg: sc.GameSessionRequest) -> None:
        sid = self.server.new_session_id()
        kind = SeatKind.HUMAN if msg.kind is sc.PlayerKind.HUMAN else SeatKind.BOT
        seat = SessionSeat(self, sid, msg.player_tag, kind, msg.seq_num)
        secret, seat.credential = new_secret()
        why = self._take_shares(seat, waiting=True)
        if why is not None:
            self._join_refused(sid, why)
            return
        cand = Candidate(seat, GameType(msg.game_type.value), msg.lobby_code, seat.matched, address=self.addr)
        # the answer may come later: a code naming a table another process of a cluster hosts
        cand.settle = functools.partial(self._settled, sid, seat, cand, secret)
        try:
            self.server.lobby.join(cand)
        except LobbyError as e:
            seat.release()
            self._join_refused(sid, str(e))
            return
        if cand.pending:
            self.joining[sid] = cand
            return
        self._opened(sid, seat, cand, secret)

    def _join_refused(self, sid: int, reason: str) -> None:
        self.send(
            {"type": "game_session_response", "status": "error", "reason": reason, "session_id": sid, "seq_num": 1}
        )

    def _opened(self, sid: int, seat: SessionSeat, cand: Candidate, secret: str) -> None:
        # the response goes out before start_game even when the table started at once: the
        # table task has not run yet
        self.sessions[sid] = seat
        self.server.active[sid] = seat
        seat.candidate = cand if seat.table is None else None
        self.send(seat.codec.session_response(secret))

    def _settled(self, sid: int, seat: SessionSeat, cand: Candidate, secret: str, why: str | None) -> None:
        """The late answer to a pending join (``Candidate.settle``)."""
        cand.pending = False
        if self.joining.pop(sid, None) is None or self.closed:
            return  # the connection went meanwhile (its candidate left the lobby)
        if why is not None:
            seat.release()
            self._join_refused(sid, why)
        else:
            self._opened(sid, seat, cand, secret)
        self._next_join()

    def _take_shares(self, seat: SessionSeat, waiting: bool) -> str | None:
        """The session's share of its address's open sessions (and of those waiting for a
        table); the reason when the address holds its limit already."""
        guard = self.server.guard
        if guard is None:
            return None
        seat.hold = guard.sessions.acquire(self.addr)
        if seat.hold is None:
            guard.refused += 1
            return guard.sessions.refusal()
        if waiting:
            seat.waiting = guard.waiting.acquire(self.addr)
            if seat.waiting is None:
                seat.hold.release()
                guard.refused += 1
                return guard.waiting.refusal()
        return None

    def resume_session(self, sid: int, secret: str) -> None:
        """Take back the chair of session ``sid`` (its game was restored, or its connection lost),
        if ``secret`` is the one the session was given."""
        server = self.server
        now = time.monotonic()
        keys = (("session", sid), ("address", self.addr))
        if server.rejoins.blocked(now, *keys):
            # too many wrong secrets for this session or from this address: refused unread, with
            # the same answer as any refusal
            log.info("event=resume_limited session=%d peer=%s", sid, self.peer)
            self._refuse_resume(sid)
            return
        live = server.active.get(sid)
        found = server.find_chair(sid, secret) if server.find_chair is not None else None
        busy = live is not None and not live.closed and not live.conn.closed
        if found is None and not busy and server.remote_rejoin is not None:
            # a cluster: the chair may be on another node; a try counts against the limit only
            # once no node gave the chair back (a right secret for a chair elsewhere is no failure)
            def refused() -> None:
                server.rejoins.failed(time.monotonic(), *keys)
                self._refuse_resume(sid)

            server.remote_rejoin(
                f"sessions:{sid}",
                functools.partial(secret_matches, secret),
                "sessions",
                functools.partial(self._resumed, sid),
                lambda: self.closed,
                refused,
            )
            return
        if found is None and not busy:
            server.rejoins.failed(now, *keys)
        if busy or found is None:
            self._refuse_resume(sid)
            return
        table, chair = found
        name = table.seat_names()[chair]
        seat = SessionSeat(self, sid, name[: name.rindex("(")], SeatKind.BOT, 0)
        seat.name = name
        seat.credential = table.credentials[chair]
        why = self._take_shares(seat, waiting=False)
        if why is not None:
            self.send(sc.error_message(why, sid, "resume_session"))
            return
        self.sessions[sid] = seat
        server.active[sid] = seat
        self.send(seat.codec.resume_response())
        seat.matched(table, chair)
        seat.resuming = seat.owes_pass = True
        table.attach(chair, seat, replay=True)
        log.info("event=session_resumed session=%d table=%s seat=%d peer=%s", sid, table.id, chair, self.peer)

    def _refuse_resume(self, sid: int) -> None:
        # one answer for every refusal: a stranger learns nothing about which sessions exist
        log.info("event=resume_refused session=%d peer=%s", sid, self.peer)
        self.send(
            sc.error_message(f"no game is waiting for session {sid} with that session_secret", sid, "resume_session")
        )

    def _resumed(self, sid: int, table: Table, chair: int) -> SessionSeat:
        """A cluster gave session ``sid`` its chair back, at a table owned by any process; the
        table's replay follows."""
        server = self.server
        name = table.names[chair]
        seat = SessionSeat(self, sid, name[: name.rindex("(")], SeatKind.BOT, 0)
        seat.name = name
        seat.credential = table.credentials[chair]
        old = server.active.get(sid)
        if old is not None:
            old.closed = True
        self.sessions[sid] = seat
        server.active[sid] = seat
        self.send(seat.codec.resume_response())
        seat.matched(table, chair)
        seat.resuming = seat.owes_pass = True
        log.info("event=session_resumed session=%d table=%s seat=%d peer=%s", sid, table.id, chair, self.peer)
        return seat

    def session_ended(self, seat: SessionSeat, reason: str) -> None:
        self.sessions.pop(seat.session_id, None)

    # output: buffered per connection and written once per loop turn (one send() for many
    # messages: a connection carries many sessions, and a table turn emits several messages)
    def send(self, msg: dict[str, Any]) -> None:
        if self.transport is None or self.closed or self.transport.is_closing():
            return
        self._out.append(sc.encode(msg))
        self._schedule_flush()

    def when_written(self, callback: Callable[[float], None]) -> None:
        """``callback(loop time)`` once what is queued now is written (at once when nothing
        is): a request's deadline runs from then."""
        if self._out:
            self._written.append(callback)
        elif self.transport is not None and not self.closed and not self.transport.is_closing():
            callback(asyncio.get_running_loop().time())

    def send_many(self, msgs: list[dict[str, Any]]) -> None:
        if self.transport is None or self.closed or not msgs or self.transport.is_closing():
            return
        self._out.extend(sc.encode(m) for m in msgs)
        self._schedule_flush()

    def send_frames(self, frames: list[bytes]) -> None:
        """Messages encoded already (``SessionCodec.frames``)."""
        if self.transport is None or self.closed or not frames or self.transport.is_closing():
            return
        self._out.extend(frames)
        self._schedule_flush()

    def _schedule_flush(self) -> None:
        if not self._flush_pending:
            self._flush_pending = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_pending = False
        if not self._out or self.transport is None or self.transport.is_closing():
            self._out.clear()
            self._written.clear()
            return
        data = b"".join(self._out)
        self._out.clear()
        self.transport.write(data)
        if self._written:
            told, self._written = self._written, []
            now = asyncio.get_running_loop().time()
            for cb in told:
                cb(now)
        self._check_backlog()

    def _check_backlog(self) -> None:
        assert self.transport is not None
        if self.transport.get_write_buffer_size() > self.server.options.max_backlog:
            log.warning("event=slow_client peer=%s backlog=%d", self.peer, self.transport.get_write_buffer_size())
            self.close()

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.abort()


def _detach_in_turns(seated: list[tuple[Table, int, SessionSeat]]) -> None:
    """Tell each table its session left, DETACH_PER_TURN of them a loop turn."""
    for table, chair, seat in seated[:DETACH_PER_TURN]:
        table.detach(chair, seat, "disconnected")
    if len(seated) > DETACH_PER_TURN:
        asyncio.get_running_loop().call_soon(_detach_in_turns, seated[DETACH_PER_TURN:])


class SessionsServer:
    """Listens for Sessions clients and hands their sessions to the lobby."""

    def __init__(
        self,
        lobby: Lobby,
        options: SessionsOptions | None = None,
        reserved_ids: set[int] | None = None,
        find_chair: Callable[[int, str], tuple[Table, int] | None] | None = None,
        guard: ClientGuard | None = None,
    ) -> None:
        self.lobby = lobby
        self.guard = guard  # per-address shares (connections, sessions, penalties); None: none
        # (session id, secret) -> the chair waiting for it (a restored game, a lost connection),
        # if the secret matches the chair's credential: the app's
        self.find_chair = find_chair
        self.active: dict[int, SessionSeat] = {}  # open sessions by id, over all connections
        self.options = options or SessionsOptions()
        # ids used before that may still come back (restored games' sessions and bots): never reissued
        self.reserved: set[int] = set(reserved_ids or ())
        self.connections: set[SessionsConnection] = set()
        # wrong session secrets, per session and per address (resume_session)
        self.rejoins = AttemptLimiter(self.options.rejoin_limit, self.options.rejoin_window)
        # a cluster's re-join (moonshot.cluster.node): asked when no chair here waits for the session
        self.remote_rejoin: ChairRejoin | None = None
        self._server: asyncio.base_events.Server | None = None

    def new_session_id(self) -> int:
        """A random id, not in use and not held by a restored game: ids cannot be guessed, and a
        restart does not hand out the ids of the games it restored."""
        while True:
            sid = secrets.randbits(SESSION_ID_BITS)
            if sid not in self.active and sid not in self.reserved:
                return sid

    def bot_tag(self, name: str) -> str:
        """Server bots need Sessions-style tags too: ``name(id)`` with an id no session uses."""
        return sc.tag_with_id(name, self.new_session_id())

    async def start(self, host: str = "127.0.0.1", port: int = sc.DEFAULT_PORT, reuse_port: bool = False) -> int:
        """Listen; ``reuse_port``: share the port with other processes (SO_REUSEPORT, Linux)."""
        loop = asyncio.get_running_loop()
        factory: Callable[[], SessionsConnection] = lambda: SessionsConnection(self)  # noqa: E731
        self._server = await loop.create_server(factory, host, port, reuse_port=reuse_port or None)
        sock = self._server.sockets[0]
        return int(sock.getsockname()[1])

    def stop_listening(self) -> None:
        """No new connections; the open ones keep playing (the app stops tables first)."""
        if self._server is not None:
            self._server.close()

    async def close(self) -> None:
        self.stop_listening()
        for c in list(self.connections):
            c.close()
        if self._server is not None:
            await self._server.wait_closed()


def chair_keys(table: Table) -> list[tuple[int, str]]:
    """Every chair of a Sessions player at ``table`` (its name ends with ``(session id)``, and a
    credential it proves), whatever the table's protocol, under the key a ``resume_session`` in a
    cluster looks it up by (:attr:`SessionsServer.remote_rejoin`)."""
    found = []
    for chair, (name, cred) in enumerate(zip(table.names, table.credentials)):
        if cred is not None and name.endswith(")") and "(" in name:
            with contextlib.suppress(ValueError):
                found.append((chair, f"sessions:{int(name[name.rindex('(') + 1 : -1])}"))
    return found


__all__ = ["SessionSeat", "SessionsConnection", "SessionsOptions", "SessionsServer", "chair_keys"]
