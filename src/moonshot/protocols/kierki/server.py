"""``kierki-server -p <port> -f <file> [-t <timeout>]``: Kierki on the shared table runtime.

The game is a :class:`~moonshot.runtime.table.Table` (the shared runtime: one task owns the engine,
deadlines, pause on disconnect, a reconnecting chair gets its view replayed) playing the game
file's deals; each TCP client is a :class:`KierkiSeat`, the adapter that turns table events into
``DEAL``/``TAKEN``/``SCORE``/``TOTAL``, decision requests into ``TRICK`` and the client's lines
into plays. This module adds what is Kierki's own:

* a connection must say ``IAM<seat>`` within the timeout, or anything else first: it is closed;
* a wanted seat that is occupied (and, once the game is over, any seat) gets ``BUSY<occupied>``
  and a close; during a full game that is every newcomer;
* the table starts when four clients are seated (``DEAL`` to all, ``TRICK`` to the leader);
* policy ``retry``: a silent seat is sent ``TRICK`` again every ``timeout`` seconds; an illegal
  card gets ``WRONG<trick>`` and the client answers again (no new ``TRICK``, as real servers do);
  a malformed line, a wrong trick number, a message other than ``TRICK`` or a card played
  without being asked gets ``WRONG`` from the adapter itself; blank lines are ignored;
* a disconnect frees the seat and pauses the game: the runtime (``pause``) waits at the empty
  seat, and the adapters send no ``TRICK`` meanwhile, neither new nor repeated (a card already
  asked for is still accepted); a
  client taking the free seat gets ``DEAL`` with its cards of this deal, ``TAKEN`` for each trick
  so far, then ``TRICK`` if it is its turn (the replayed log is cut to the current deal), and a
  seat whose ``TRICK`` was held back gets it then;
* after the last deal's ``SCORE``/``TOTAL`` every connection is closed and the server exits 0.

By default it listens on every interface, on one dual-stack socket (``::`` with ``IPV6_V6ONLY``
off; IPv4 only where the host has no IPv6): the spec gives the server no address, and its clients
may force IPv4 (``-4``) or IPv6 (``-6``). ``--host ADDR`` (moonshot's extension) listens on that
address only, or on every address a host name resolves to (``localhost``: ``::1`` and
``127.0.0.1``), all on the same port. ``--trusted-proxy CIDR`` (repeatable; moonshot's extension,
as ``moonshot serve`` has it) names the load balancers whose connections open with a PROXY
protocol header (v1 or v2): the client it names is the one the report shows and whose share of
connections counts; from any other peer such a header is just a bad line. The game report goes
to stdout, one line per message sent or received, client bytes escaped
(:func:`~moonshot.protocols.kierki.codec.printable`); diagnostics go to stderr. Bad network
input never raises out of a connection handler, and each connection's input is limited
(:class:`InputLimits`: lines and bytes per second; a flood is not read until its budget
refills, so TCP slows its sender down; a peer that never reads is closed).

The connection handling (:class:`KierkiListener`) and the seat adapter (:class:`KierkiSeat`) are
shared with ``moonshot serve --kierki-port`` (:mod:`moonshot.protocols.kierki.service`), which
runs many such tables at once; this module's :class:`KierkiServer` is the one-game listener.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import math
import socket
import sys
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, TextIO

from moonshot import one_blas_thread
from moonshot.core.actions import Action, Play
from moonshot.core.cards import card_list
from moonshot.core.engine import DealSpec
from moonshot.core.events import DealEnded, DealStarted, HandDealt, TrickEnded, TrickStarted
from moonshot.core.variants import KIERKI
from moonshot.protocols.kierki.codec import (
    SEAT_LETTERS,
    Busy,
    CodecError,
    Deal,
    Iam,
    LineBuffer,
    Message,
    OverlongLine,
    Score,
    Taken,
    Total,
    Trick,
    Wrong,
    encode,
    format_address,
    format_message,
    parse_message,
    report_line,
)
from moonshot.protocols.kierki.gamefile import CardOrder, GameFileError, load_game_in_order
from moonshot.runtime.clients import Proxies, parse_cidr, peer_ip, share_key
from moonshot.runtime.limits import ClientGuard, Hold, address_of
from moonshot.runtime.proxyproto import ProxyError, ProxyHeader, ProxyHeaderParser
from moonshot.runtime.ratelimit import TokenBucket
from moonshot.runtime.table import (
    SEATED,
    DecisionRequest,
    OnBadAnswer,
    OnDisconnect,
    Seat,
    SeatKind,
    Table,
    TableEvent,
    TableNotice,
    TablePolicy,
)

log = logging.getLogger("moonshot.kierki")

PROXY_TIMEOUT = 5.0  # seconds a trusted proxy's connection has to send its whole PROXY header


async def read_proxy_header(reader: asyncio.StreamReader, timeout: float = PROXY_TIMEOUT) -> ProxyHeader:
    """The PROXY header that opens a stream from a trusted proxy, read to its last byte and no
    further (the client's own bytes stay in ``reader``); ProxyError when it is malformed,
    oversized, cut short or late."""
    parser = ProxyHeaderParser()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        try:
            data = await asyncio.wait_for(reader.readexactly(parser.need), max(0.0, deadline - loop.time()))
        except TimeoutError:
            raise ProxyError(f"no whole PROXY header within {timeout:g} s") from None
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            raise ProxyError("the connection ended inside its PROXY header") from None
        header = parser.feed(data)
        if header is not None:
            return header


USAGE = "usage: kierki-server -p <port> -f <file> [-t <timeout>] [--host <address>] [--trusted-proxy <cidr>]..."
DEFAULT_TIMEOUT = 5.0
HELP = f"""{USAGE}

Serves one Kierki game file: four players connect, each asks for a seat, and the game's deals
are played in order (docs/kierki.md).

  -p <port>              the TCP port (0: any free port, printed at start)
  -f <file>              the game file: one line a deal, its type 1-7 and who leads
  -t <timeout>           seconds a player has to answer (default {DEFAULT_TIMEOUT:g})
  --host <address>       listen on this address only (default: every interface, IPv6 and IPv4)
  --trusted-proxy <cidr> a TCP load balancer whose PROXY protocol header names the client
                         (repeatable; none by default)
  --help                 this text"""


class UsageError(Exception):
    pass


class HelpAsked(Exception):
    """``--help`` stood where a parameter goes: print :data:`HELP` and exit 0."""


@dataclass
class ServerOptions:
    port: int = 0
    file: str = ""
    timeout: float = DEFAULT_TIMEOUT
    host: str | None = None  # None: every interface, IPv6 and IPv4
    trusted_proxies: list[str] = field(default_factory=list)  # whose PROXY headers name the client


def parse_args(argv: Sequence[str]) -> ServerOptions:
    """Parameters in any order; a repeated one: the last wins (``--trusted-proxy``: each one
    counts). Raises :class:`UsageError`."""
    opts = ServerOptions()
    have_file = False
    i = 0
    while i < len(argv):
        flag = argv[i]
        if flag == "--help":
            raise HelpAsked
        if flag not in ("-p", "-f", "-t", "--host", "--trusted-proxy"):
            raise UsageError(f"unknown parameter {flag!r}")
        if i + 1 >= len(argv):
            raise UsageError(f"{flag} needs a value")
        value = argv[i + 1]
        if flag == "-p":
            if not value.isdigit() or not 0 <= int(value) <= 65535:
                raise UsageError(f"bad port {value!r}: expected a number 0..65535 (0: any free port)")
            opts.port = int(value)
        elif flag == "-f":
            if not value:
                raise UsageError("-f needs a file name")
            opts.file, have_file = value, True
        elif flag == "--trusted-proxy":
            try:
                parse_cidr(value)
            except ValueError as e:
                raise UsageError(f"bad --trusted-proxy: {e}") from None
            opts.trusted_proxies.append(value)
        elif flag == "--host":
            host = value[1:-1] if value.startswith("[") and value.endswith("]") else value
            if not host or not host.isprintable() or any(c.isspace() for c in host):
                raise UsageError(f"bad --host {value!r}: expected an IP address or a host name")
            opts.host = host
        else:
            try:
                t = float(value)
            except ValueError:
                raise UsageError(f"bad timeout {value!r}: expected a positive number of seconds") from None
            if not math.isfinite(t) or t <= 0:
                raise UsageError(f"bad timeout {value!r}: expected a positive number of seconds")
            opts.timeout = t
        i += 2
    if not have_file:
        raise UsageError("the game file (-f <file>) is required")
    return opts


def make_listening_sockets(port: int, host: str | None = None) -> list[socket.socket]:
    """The sockets to listen on: every interface (one dual-stack socket) when ``host`` is None,
    else one per address ``host`` resolves to, all on one port (port 0: the first one's)."""
    if host is None:
        return [make_listening_socket(port)]
    try:
        infos = socket.getaddrinfo(host, port, socket.AF_UNSPEC, socket.SOCK_STREAM, 0, socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as e:
        raise OSError(errno.EADDRNOTAVAIL, f"cannot resolve {host!r}: {getattr(e, 'strerror', None) or e}") from None
    socks: list[socket.socket] = []
    seen: set[tuple[int, str]] = set()
    try:
        for family, _, _, _, addr in infos:
            if (family, addr[0]) in seen or family not in (socket.AF_INET, socket.AF_INET6):
                continue
            seen.add((family, str(addr[0])))
            sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
            socks.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                with contextlib.suppress(OSError, AttributeError):
                    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)  # this address only
            sock.bind((addr[0], port, *addr[2:]))
            sock.listen(64)
            sock.setblocking(False)
            if port == 0:
                port = sock.getsockname()[1]  # the other addresses share it
    except OSError:
        for sock in socks:
            sock.close()
        raise
    if not socks:
        raise OSError(errno.EADDRNOTAVAIL, f"{host!r} has no IPv4 or IPv6 address")
    return socks


def make_listening_socket(port: int) -> socket.socket:
    """One socket for IPv6 and IPv4 (dual stack); IPv4 only where the host has no IPv6."""
    failure: OSError | None = None
    for family, host in ((socket.AF_INET6, "::"), (socket.AF_INET, "0.0.0.0")):
        try:
            sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        except OSError as e:
            failure = e
            continue
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                with contextlib.suppress(OSError, AttributeError):
                    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            sock.bind((host, port))
            sock.listen(64)
            sock.setblocking(False)
            return sock
        except OSError as e:
            sock.close()
            if e.errno == errno.EADDRINUSE:
                raise  # the port is taken: listening on IPv4 alone would not help
            failure = e
    assert failure is not None
    raise failure


class Listeners:
    """The game's listening servers (one per address), closed together; used as ``asyncio.Server``."""

    def __init__(self, servers: Sequence[asyncio.Server]) -> None:
        self.servers = tuple(servers)

    def close(self) -> None:
        for server in self.servers:
            server.close()

    async def wait_closed(self) -> None:
        for server in self.servers:
            await server.wait_closed()

    async def __aenter__(self) -> Listeners:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()
        await self.wait_closed()


@dataclass(frozen=True)
class InputLimits:
    """What one connection may send: a flood is slowed down (its socket is simply not read until
    its bucket refills, so TCP pushes back on the sender), never allowed to crowd out other
    connections; a peer that does not read what it is sent is closed once ``max_backlog`` bytes
    wait for it."""

    bytes_per_s: float = 1024 * 1024
    burst_bytes: float = 4 * 1024 * 1024
    lines_per_s: float = 500.0  # a real client sends about one line per card
    burst_lines: float = 1000.0
    max_backlog: int = 256 * 1024


def order_cards(orders: Sequence[CardOrder], deal: int, e: HandDealt) -> tuple[int, ...]:
    """A hand as DEAL lists it: in the game file's order when known, else low to high."""
    if deal < len(orders):
        order = orders[deal][e.seat]
        if sum(1 << c for c in order) == e.cards:
            return order
    return tuple(card_list(e.cards))


def kierki_policy(timeout: float) -> TablePolicy:
    """Kierki's rules for a silent or wrong seat: ask again (TRICK / WRONG); wait for a lost one."""
    return TablePolicy(
        decision_timeout=timeout,
        on_timeout=OnBadAnswer.RETRY,
        on_illegal=OnBadAnswer.RETRY,
        on_disconnect=OnDisconnect.PAUSE,
        max_consecutive_timeouts=None,
        tell_seated=True,  # the TRICK held back while a seat was empty goes out when it is taken
    )


class Host(Protocol):
    """Who owns the connections: where the report and the diagnostics go."""

    limits: InputLimits

    def report(self, sender: str, receiver: str, text: str) -> None: ...

    def log(self, text: str) -> None: ...


class GameSide(Protocol):
    """The Kierki side of one table, as its seats see it."""

    @property
    def paused(self) -> bool:
        """The game has started, is not over, and a seat is empty (nobody is sent TRICK)."""
        ...

    def card_order(self, deal: int, e: HandDealt) -> tuple[int, ...]: ...


class Connection:
    """One TCP connection: writes messages and prints them (and what it reads) in the game report."""

    def __init__(self, server: Host, writer: asyncio.StreamWriter) -> None:
        self.server = server
        self.writer = writer
        self.local = format_address(writer.get_extra_info("sockname"))
        self.peer = format_address(writer.get_extra_info("peername"))
        self.key = ""  # the client's share key (its address; behind a trusted proxy, the client's)
        self.closed = False
        self.buffer = LineBuffer()

    def send(self, msg: Message) -> None:
        if self.closed:
            return
        self.writer.write(encode(msg))
        self.server.report(self.local, self.peer, format_message(msg))
        if self.writer.transport.get_write_buffer_size() > self.server.limits.max_backlog:
            self.close("it does not read what it is sent")

    def received(self, line: str | OverlongLine) -> None:
        if isinstance(line, OverlongLine):
            shown = f"{line.head}... ({line.length}+ bytes, too long, dropped)"
        else:
            shown = line
        self.server.report(self.peer, self.local, shown)

    def close(self, reason: str) -> None:
        if self.closed:
            return
        self.closed = True
        self.writer.close()  # what was written still goes out first
        self.server.log(f"closing {self.peer}: {reason}")


class KierkiSeat(Seat):
    """A Kierki client in a chair: table events become DEAL/TAKEN/SCORE/TOTAL, requests become TRICK,
    and the client's lines become plays (or WRONG)."""

    kind = SeatKind.HUMAN
    protocol = "kierki"

    @property
    def gone(self) -> bool:
        return self.conn.closed

    def __init__(self, conn: Connection, seat: int, resuming: bool, game: GameSide | None = None) -> None:
        self.conn = conn
        self.seat = seat
        # the table's Kierki side (paused?, the file's card order): the standalone server itself
        self.game: GameSide = game if game is not None else conn.server  # type: ignore[assignment]
        self.name = f"kierki-{SEAT_LETTERS[seat]}@{conn.peer}"
        self.resuming = resuming  # the first events are a replay of the whole game: keep this deal's
        self.table: Table | None = None
        self.request: DecisionRequest | None = None
        self.quiet_retry = False  # after WRONG the client answers again unasked: no new TRICK
        self.owed = False  # a repetition held back while the game was paused
        self.trick_no = 1
        self.asked = Trick(1, ())  # the TRICK of the open request
        self.deal = 0
        self.deal_kind = 0
        self.deal_leader = 0

    # ---------------------------------------------------------- table callbacks (never block)
    def on_events(self, table: Table, events: Sequence[TableEvent]) -> None:
        self.table = table
        evs = [te.event for te in events]
        if self.resuming:
            self.resuming = False
            starts = [i for i, e in enumerate(evs) if isinstance(e, DealStarted)]
            evs = evs[starts[-1] :] if starts else evs
        for e in evs:
            if isinstance(e, DealStarted):
                self.deal = e.deal
                self.deal_kind = e.deal_kind
                self.deal_leader = e.first_leader if e.first_leader is not None else 0
            elif isinstance(e, HandDealt) and e.seat == self.seat:
                self.conn.send(Deal(self.deal_kind, self.deal_leader, self.game.card_order(self.deal, e)))
            elif isinstance(e, TrickStarted):
                self.trick_no = e.trick
            elif isinstance(e, TrickEnded):
                self.conn.send(Taken(e.trick, tuple(e.cards), e.winner))
            elif isinstance(e, DealEnded):
                p, t = e.points, e.totals
                self.conn.send(Score((p[0], p[1], p[2], p[3])))
                self.conn.send(Total((t[0], t[1], t[2], t[3])))

    def on_request(self, table: Table, request: DecisionRequest) -> None:
        self.table = table
        self.request = request
        view = request.view  # read now: the runtime may build it lazily, valid until the game moves
        self.trick_no = view.trick_no
        self.asked = Trick(view.trick_no, view.trick_cards)
        if self.quiet_retry:
            self.quiet_retry = False
            return
        if self.game.paused:
            self.owed = True  # nobody is asked (or asked again) while a seat is empty: sent on resume
            return
        self.conn.send(self.asked)

    def on_rejected(self, table: Table, request: DecisionRequest, action: Action | None, reason: str) -> None:
        self.request = None
        if reason == "timeout":
            return  # the runtime asks again at once: TRICK is repeated
        self.quiet_retry = True
        self._wrong(reason)

    def on_notice(self, table: Table, notice: TableNotice) -> None:
        """Kierki has no line for a table notice: the server's log says it (the TRICK waits).
        Every seat taken again (cause :data:`~moonshot.runtime.table.SEATED`, told by the table,
        here or on another process): the TRICK held back goes out."""
        if notice.kind == "resumed" and notice.cause == SEATED:
            self.resume()
            return
        self.conn.server.log(f"{self.conn.peer} ({SEAT_LETTERS[self.seat]}): {notice.text}")

    def resume(self) -> None:
        """The game goes on after a pause: send the TRICK held back meanwhile."""
        if self.owed and self.request is not None:
            self.owed = False
            self.conn.send(self.asked)

    def on_closed(self, table: Table, reason: str) -> None:
        self.request = None
        self.conn.close(reason)

    # ---------------------------------------------------------- the client's lines
    def _wrong(self, why: str) -> None:
        self.conn.send(Wrong(self.trick_no))
        self.conn.server.log(f"{self.conn.peer} ({SEAT_LETTERS[self.seat]}): WRONG: {why}")

    def on_line(self, line: str | OverlongLine) -> None:
        if isinstance(line, OverlongLine):
            self._wrong(f"a line of {line.length}+ bytes")
            return
        if not line.strip():
            return  # a blank line carries nothing
        try:
            msg = parse_message(line)
        except CodecError as e:
            self._wrong(f"malformed: {e}")
            return
        if not isinstance(msg, Trick):
            self._wrong(f"unexpected {type(msg).__name__.upper()} from a seated client")
            return
        req, table = self.request, self.table
        if req is None or table is None:
            self._wrong("a card played without being asked")
            return
        if msg.number != self.asked.number:
            self._wrong(f"trick number {msg.number}, the trick is {self.asked.number}")
            return
        if len(msg.cards) != 1:
            self._wrong(f"{len(msg.cards)} cards instead of one")
            return
        self.request = None  # a second answer before the verdict is unprompted
        table.submit(self.seat, Play.of(self.seat, msg.cards[0]), req.request_id)


class KierkiListener(ABC):
    """Accepts Kierki connections: ``IAM<seat>`` within the timeout (anything else first: closed),
    then the seat's lines, read within the connection's :class:`InputLimits`. Subclasses decide
    where an ``IAM`` sits (:meth:`take_seat`) and what a seat's departure does (:meth:`left`)."""

    # per-address shares (moonshot serve's ClientGuard): an address over its connections is
    # closed at once; one just dropped for flooding waits its penalty before it is read
    guard: ClientGuard | None = None

    def __init__(self, timeout: float, limits: InputLimits | None = None) -> None:
        self.timeout = timeout
        self.limits = limits or InputLimits()
        self.conns: set[Connection] = set()

    @abstractmethod
    def report(self, sender: str, receiver: str, text: str) -> None:
        """One message sent or received, for the game report."""

    @abstractmethod
    def log(self, text: str) -> None:
        """A line about the server's own doings (refusals, errors)."""

    def refusing(self) -> str | None:
        """Why a new connection is closed at once (the game is over), else None."""
        return None

    @abstractmethod
    def take_seat(self, conn: Connection, seat: int) -> KierkiSeat | None:
        """Seat a client that said ``IAM<seat>``; None when it was refused (and closed)."""

    @abstractmethod
    def left(self, seat: KierkiSeat) -> None:
        """A seated client's connection ended."""

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            # small request/answer messages: Nagle + delayed ACK would stall every turn ~40 ms
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = Connection(self, writer)
        self.conns.add(conn)
        seat: KierkiSeat | None = None
        lim = self.limits
        byte_bucket = TokenBucket(lim.bytes_per_s, lim.burst_bytes)
        line_bucket = TokenBucket(lim.lines_per_s, lim.burst_lines)
        hold: Hold | None = None
        try:
            why = self.refusing()
            peer = writer.get_extra_info("peername")
            addr = address_of(peer)
            if why is None and self.guard is not None and self.guard.proxies.trusts(peer_ip(peer)):
                # a trusted load balancer: the PROXY header that must open the stream names the client
                try:
                    header = await read_proxy_header(reader)
                except ProxyError as e:
                    log.warning("event=proxy_header_refused peer=%s reason=%s", conn.peer, json.dumps(str(e)))
                    conn.close(f"a bad PROXY header: {e}")
                    return
                if header.source is not None:  # else the proxy's own connection (a health check)
                    log.info("event=proxied peer=%s:%d proxy=%s", header.source, header.source_port, conn.peer)
                    conn.peer = format_address((header.source, header.source_port))
                    addr = share_key(header.source)
            conn.key = addr
            if why is None and self.guard is not None:
                hold, wait, why = self.guard.admit(addr)
                if why is None and wait > 0:
                    await asyncio.sleep(wait)  # the address was just dropped: its penalty
            if why is not None:
                conn.close(why)
                return
            seat, rest = await self._welcome(conn, reader)
            if seat is None:
                return
            await self._lines(conn, seat, rest, line_bucket)
            while not conn.closed:
                try:
                    data = await reader.read(65536)
                except (ConnectionError, OSError):
                    break
                if not data:
                    break
                await _take(byte_bucket, len(data))
                await self._lines(conn, seat, conn.buffer.feed(data), line_bucket)
        except Exception as e:  # one connection's trouble never takes the server down
            self.log(f"{conn.peer}: internal error {e!r}")
        finally:
            if hold is not None:
                hold.release()
            conn.close("disconnected")
            self.conns.discard(conn)
            if seat is not None:
                self.left(seat)

    @staticmethod
    async def _lines(
        conn: Connection, seat: KierkiSeat, lines: Sequence[str | OverlongLine], bucket: TokenBucket
    ) -> None:
        for line in lines:
            if conn.closed:
                break
            await _take(bucket, 1)
            conn.received(line)
            seat.on_line(line)

    async def _welcome(
        self, conn: Connection, reader: asyncio.StreamReader
    ) -> tuple[KierkiSeat | None, list[str | OverlongLine]]:
        """IAM within the timeout, then a seat (or BUSY). Returns the seat and lines already read after IAM."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        while True:
            left = deadline - loop.time()
            if left <= 0:
                conn.close("no IAM within the timeout")
                return None, []
            try:
                data = await asyncio.wait_for(reader.read(65536), left)
            except TimeoutError:
                conn.close("no IAM within the timeout")
                return None, []
            except (ConnectionError, OSError):
                return None, []
            if not data:
                return None, []
            lines = conn.buffer.feed(data)
            for i, line in enumerate(lines):
                conn.received(line)
                if isinstance(line, str) and not line.strip():
                    continue
                return self._seat(conn, line), lines[i + 1 :]

    def _seat(self, conn: Connection, line: str | OverlongLine) -> KierkiSeat | None:
        if isinstance(line, OverlongLine):
            conn.close(f"expected IAM<seat>, got a line of {line.length}+ bytes")
            return None
        try:
            msg = parse_message(line)
        except CodecError as e:
            conn.close(f"expected IAM<seat>: {e}")
            return None
        if not isinstance(msg, Iam):
            conn.close(f"expected IAM<seat>, got {line.strip()[:40]!r}")
            return None
        return self.take_seat(conn, msg.seat)


async def _take(bucket: TokenBucket, n: int) -> None:
    """Take ``n`` tokens, waiting (not reading the socket) until the bucket has them."""
    loop = asyncio.get_running_loop()
    n = min(n, int(bucket.burst))
    while not bucket.take(n, loop.time()):
        await asyncio.sleep(max(0.001, (n - bucket.tokens) / bucket.rate))


class KierkiServer(KierkiListener):
    """One game: accept, seat clients by IAM, run the table, print the report, stop at the end."""

    def __init__(
        self,
        deals: Sequence[DealSpec],
        timeout: float,
        out: TextIO | None = None,
        orders: Sequence[CardOrder] = (),
        limits: InputLimits | None = None,
        proxies: Proxies | None = None,
    ) -> None:
        if not deals:
            raise ValueError("a Kierki game needs at least one deal")
        super().__init__(timeout, limits)
        if proxies:  # --trusted-proxy: their connections open with a PROXY header (see the module)
            self.guard = ClientGuard(proxies=proxies)
        self.deals = tuple(deals)
        self.orders = tuple(orders)  # each hand's cards as the game file lists them
        self.seats: list[KierkiSeat | None] = [None, None, None, None]
        self.table: Table | None = None
        self.over = False
        self.done = asyncio.Event()
        self.port = 0
        self.addresses: list[str] = []
        self._out = out if out is not None else sys.stdout

    def report(self, sender: str, receiver: str, text: str) -> None:
        print(report_line(sender, receiver, datetime.now(), text), file=self._out, flush=True)

    def log(self, text: str) -> None:
        # diagnostics go to stderr: stdout carries the game report
        print(f"kierki-server: {text}", file=sys.stderr, flush=True)

    def card_order(self, deal: int, e: HandDealt) -> tuple[int, ...]:
        """A hand as DEAL lists it: in the game file's order when known, else low to high."""
        return order_cards(self.orders, deal, e)

    @property
    def paused(self) -> bool:
        """The game has started, is not over, and a seat is empty."""
        return self.table is not None and not self.over and any(s is None for s in self.seats)

    def occupied(self) -> tuple[int, ...]:
        return tuple(s for s in range(4) if self.seats[s] is not None)

    async def start(self, port: int, host: str | None = None) -> Listeners:
        socks = make_listening_sockets(port, host)
        self.port = socks[0].getsockname()[1]
        self.addresses = [format_address(sock.getsockname()) for sock in socks]
        try:
            return Listeners([await asyncio.start_server(self.handle, sock=sock) for sock in socks])
        except BaseException:
            for sock in socks:
                sock.close()
            raise

    async def serve(self, port: int, host: str | None = None) -> None:
        server = await self.start(port, host)
        where = "" if host is None else f" ({', '.join(self.addresses)})"
        print(f"kierki-server listening on port {self.port}{where}", file=self._out, flush=True)
        async with server:
            await self.done.wait()
            server.close()
            await self.shutdown()

    async def shutdown(self) -> None:
        await close_connections(self.conns, "the game is over")

    def _game_over(self, _: object = None) -> None:
        self.over = True
        self.done.set()

    def refusing(self) -> str | None:
        return "the game is over" if self.over else None

    def left(self, seat: KierkiSeat) -> None:
        if self.seats[seat.seat] is seat:
            self.seats[seat.seat] = None
            if self.table is not None and not self.over:
                self.log(f"{SEAT_LETTERS[seat.seat]} left: the game waits for a client to take the seat")
                self.table.detach(seat.seat, seat, "disconnected")

    def take_seat(self, conn: Connection, want: int) -> KierkiSeat | None:
        if self.over or self.seats[want] is not None:
            conn.send(Busy(self.occupied()))
            conn.close(f"seat {SEAT_LETTERS[want]} is taken")
            return None
        seat = KierkiSeat(conn, want, resuming=self.table is not None)
        self.seats[want] = seat
        if self.table is not None:
            self.table.attach(want, seat)
            if not self.paused:
                self.log(f"{conn.peer} takes seat {SEAT_LETTERS[want]}: the game goes on")
                for other in self.seats:
                    if other is not None and other is not seat:
                        other.resume()
        elif all(s is not None for s in self.seats):
            self.table = Table(
                KIERKI,
                list(self.seats),
                seed=0,
                policy=kierki_policy(self.timeout),
                meta={"protocol": "kierki"},
                deals=self.deals,
            )
            self.table.start()
            self.table.done.add_done_callback(self._game_over)
        return seat


async def close_connections(conns: set[Connection], reason: str) -> None:
    """Close every connection; what was written still goes out (2 s at most for a peer that never reads)."""
    for c in list(conns):
        c.close(reason)
    waits = [c.writer.wait_closed() for c in list(conns)]
    if waits:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.gather(*waits, return_exceptions=True), 2)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        opts = parse_args(args)
    except HelpAsked:
        print(HELP, flush=True)
        return 0
    except UsageError as e:
        print(f"kierki-server: {e}\n{USAGE}", flush=True)
        return 1
    try:
        deals, orders = load_game_in_order(opts.file)
    except GameFileError as e:
        print(f"kierki-server: bad game file {opts.file}: {e}", flush=True)
        return 1

    async def run() -> None:
        proxies = Proxies(opts.trusted_proxies)
        await KierkiServer(deals, opts.timeout, orders=orders, proxies=proxies).serve(opts.port, opts.host)

    try:
        asyncio.run(run())
    except OSError as e:
        where = "" if opts.host is None else f" of {opts.host}"
        print(f"kierki-server: cannot listen on port {opts.port}{where}: {e.strerror or e}", flush=True)
        return 1
    except KeyboardInterrupt:
        print("kierki-server: interrupted", flush=True)
        return 1
    return 0


def entry() -> None:
    one_blas_thread()  # its bots' networks: small matrices (see moonshot.one_blas_thread)
    sys.exit(main())


if __name__ == "__main__":
    entry()
