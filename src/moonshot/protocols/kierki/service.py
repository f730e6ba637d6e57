"""Kierki inside ``moonshot serve`` (``--kierki-port``): many Kierki tables on the shared runtime.

Unchanged Kierki clients connect, say ``IAM<seat>`` within the timeout and are seated:

* **A seat left vacant in a running table comes first.** A client that lost its connection (or
  whose server was restarted) reconnects with ``IAM<seat>`` and takes that seat back: ``DEAL``
  with its cards of this deal, ``TAKEN`` for each trick so far, then ``TRICK`` if it is its turn,
  exactly as the spec describes reconnection. When several running tables have that seat free,
  the one whose seat has been free longest is taken.
* **Otherwise the lobby.** The client waits in the shared lobby (protocol ``kierki``, an
  *exact-chair* candidate: one first-come queue per seat letter) and a table of the ``kierki``
  variant forms as soon as N, E, S and W are all waiting. A second ``N`` is not ``BUSY``: it
  waits for the next table (the spec's ``BUSY`` is about the one game its server runs; here a
  seat letter is taken only at one table). ``BUSY<seats>`` is still sent when ``max_waiting``
  clients already wait for that letter (the seats listed: those someone waits for).
* **No bots, no fill.** The spec starts a game "after four clients have gathered" and, when one
  disconnects, "pauses the game waiting for the client to reconnect to an empty position". So a
  Kierki table is never filled with server bots and never hands a lost seat to one: it waits
  (table policy ``pause`` on disconnect), and nobody is sent ``TRICK`` while a seat is empty.
  A table whose four seats have all been empty for ``abandon_after`` seconds is stopped and
  stored as ``aborted`` (it would otherwise be kept, and restored at every start, forever).
* Timeouts, ``WRONG``, ``TAKEN``, ``SCORE``, ``TOTAL`` are the standalone server's own
  (:class:`~moonshot.protocols.kierki.server.KierkiSeat`, policy ``retry``), and so are the
  connection handling and input limits (:class:`~moonshot.protocols.kierki.server.KierkiListener`).

Deals come from the table's seed (the seven contracts in order, one deal each, leaders N, E, S,
W, N, E, S), or from one game file for every table (``--kierki-game``; the file's text is kept
in the stored game's ``meta.deals``, so a restart and ``moonshot replay`` rebuild the same deals).
The game report the standalone server prints goes to the ``moonshot.kierki`` logger at debug
level (``--log-level debug``), one line per message.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence

from moonshot.core.events import HandDealt
from moonshot.protocols.kierki.codec import SEAT_LETTERS, Busy, printable
from moonshot.protocols.kierki.gamefile import CardOrder
from moonshot.protocols.kierki.server import (
    Connection,
    InputLimits,
    KierkiListener,
    KierkiSeat,
    close_connections,
    order_cards,
)
from moonshot.runtime.lobby import Candidate, GameType, Lobby, LobbyError
from moonshot.runtime.table import Seat, Table

log = logging.getLogger("moonshot.kierki")

DEFAULT_TIMEOUT = 5.0  # the spec's default -t
DEFAULT_ABANDON = 600.0


class Side:
    """One running Kierki table as its seats see it: who sits where, when each seat was left."""

    def __init__(self, table: Table, seats: Sequence[Seat | None], orders: Sequence[CardOrder] = ()) -> None:
        self.table = table
        self.orders = tuple(orders)
        self.seats: list[KierkiSeat | None] = [s if isinstance(s, KierkiSeat) else None for s in seats]
        now = asyncio.get_running_loop().time()
        self.left_at = [now, now, now, now]  # when each seat was last left empty
        self.abandon: asyncio.TimerHandle | None = None

    @property
    def paused(self) -> bool:
        return not self.table.done.done() and any(s is None for s in self.seats)

    def card_order(self, deal: int, e: HandDealt) -> tuple[int, ...]:
        return order_cards(self.orders, deal, e)

    def empty(self) -> bool:
        return all(s is None for s in self.seats)


class _Waiting:
    """A seat in the lobby, before its table exists: never paused, low-to-high cards."""

    paused = False

    def card_order(self, deal: int, e: HandDealt) -> tuple[int, ...]:
        return order_cards((), deal, e)


_WAITING = _Waiting()


class KierkiService(KierkiListener):
    """Kierki connections on one port, seated back at their vacant seats or matched by the lobby."""

    def __init__(
        self,
        make_table: Callable[[list[Seat]], Table],
        *,
        lobby: Lobby | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        orders: Sequence[CardOrder] = (),
        abandon_after: float | None = DEFAULT_ABANDON,
        on_abandoned: Callable[[Table], None] | None = None,
        max_waiting: int = 256,
        limits: InputLimits | None = None,
    ) -> None:
        super().__init__(timeout, limits)
        self.make_table = make_table  # builds, stores and starts a table for four seats (the app)
        self.lobby = lobby
        self.orders = tuple(orders)  # the game file's card order, for DEAL (every new table)
        self.abandon_after = abandon_after
        self.on_abandoned = on_abandoned
        self.max_waiting = max_waiting
        self.sides: dict[str, Side] = {}
        self.waiting: dict[KierkiSeat, Candidate] = {}
        self.waiting_for = [0, 0, 0, 0]
        self.stopping = False
        self.port: int | None = None
        self._servers: list[asyncio.AbstractServer] = []

    # ------------------------------------------------------------ listening
    async def start(self, host: str, port: int, reuse_port: bool = False) -> int:
        server = await asyncio.start_server(
            self.handle, host, port, reuse_address=True, reuse_port=reuse_port or None, backlog=1024
        )
        self._servers.append(server)
        self.port = int(server.sockets[0].getsockname()[1])
        return self.port

    def stop_listening(self) -> None:
        self.stopping = True
        for s in self._servers:
            s.close()

    async def close(self) -> None:
        self.stop_listening()
        for side in self.sides.values():
            if side.abandon is not None:
                side.abandon.cancel()
        await close_connections(self.conns, "the server is stopping")
        for s in self._servers:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(s.wait_closed(), 2)

    # ------------------------------------------------------------ the listener's hooks
    def report(self, sender: str, receiver: str, text: str) -> None:
        if log.isEnabledFor(logging.DEBUG):
            log.debug("event=kierki_message from=%s to=%s text=%s", sender, receiver, printable(text))

    def log(self, text: str) -> None:
        # per-line diagnostics (WRONG and why, closes): debug, so a flood of junk is no flood of logs
        log.debug("event=kierki_note text=%s", printable(text))

    def refusing(self) -> str | None:
        return "the server is stopping" if self.stopping else None

    def take_seat(self, conn: Connection, want: int) -> KierkiSeat | None:
        letter = SEAT_LETTERS[want]
        if self.stopping:
            conn.close("the server is stopping")
            return None
        side = self.vacant(want)
        if side is not None:
            seat = KierkiSeat(conn, want, resuming=True, game=side)
            self._take_back(side, seat)
            return seat
        if self.lobby is None or self.waiting_for[want] >= self.max_waiting:
            busy = tuple(c for c in range(4) if self.waiting_for[c])
            conn.send(Busy(busy))
            conn.close(f"{self.waiting_for[want]} clients already wait for seat {letter}")
            log.warning("event=kierki_busy peer=%s seat=%s waiting=%d", conn.peer, letter, self.waiting_for[want])
            return None
        seat = KierkiSeat(conn, want, resuming=False, game=_WAITING)
        cand = Candidate(seat, GameType.ANY, None, protocol="kierki", chair=want, exact_chair=True)
        self.waiting[seat] = cand
        self.waiting_for[want] += 1
        try:
            self.lobby.join(cand)  # may form the table at once (start_table)
        except LobbyError as e:
            self._unwait(seat)
            conn.close(str(e))
            return None
        if seat in self.waiting:
            log.info("event=kierki_waiting peer=%s seat=%s waiting=%s", conn.peer, letter, self.waiting_for)
        return seat

    def _take_back(self, side: Side, seat: KierkiSeat) -> None:
        """Seat ``seat`` in its empty chair at ``side``'s table: the chair's view of this deal is
        replayed (DEAL, TAKEN...), and once no seat is empty the held-back TRICK goes out."""
        seat.game = side
        seat.resuming = True
        side.seats[seat.seat] = seat
        if side.abandon is not None:
            side.abandon.cancel()
            side.abandon = None
        side.table.attach(seat.seat, seat)
        log.info(
            "event=kierki_seat_taken_back peer=%s table=%s seat=%s",
            seat.conn.peer,
            side.table.id,
            SEAT_LETTERS[seat.seat],
        )
        if not side.paused:
            for other in side.seats:
                if other is not None and other is not seat:
                    other.resume()

    def left(self, seat: KierkiSeat) -> None:
        cand = self._unwait(seat)
        if cand is not None:
            if self.lobby is not None:
                self.lobby.leave(cand)
            return
        side = seat.game
        if not isinstance(side, Side) or side.seats[seat.seat] is not seat:
            return
        side.seats[seat.seat] = None
        side.left_at[seat.seat] = asyncio.get_running_loop().time()
        if side.table.done.done():
            return
        side.table.detach(seat.seat, seat, "disconnected")
        log.info(
            "event=kierki_seat_left table=%s seat=%s peer=%s (the table waits for IAM%s)",
            side.table.id,
            SEAT_LETTERS[seat.seat],
            seat.conn.peer,
            SEAT_LETTERS[seat.seat],
        )
        # a client already waiting in the lobby for this letter (it came back before its old
        # connection was seen to die, say) takes the seat at once
        for waiting, cand in self.waiting.items():
            if waiting.seat == seat.seat and not waiting.conn.closed:
                self._unwait(waiting)
                if self.lobby is not None:
                    self.lobby.leave(cand)
                self._take_back(side, waiting)
                return
        if side.empty():
            self._arm_abandon(side)

    def _unwait(self, seat: KierkiSeat) -> Candidate | None:
        cand = self.waiting.pop(seat, None)
        if cand is not None:
            self.waiting_for[seat.seat] -= 1
        return cand

    # ------------------------------------------------------------ tables
    def vacant(self, want: int) -> Side | None:
        """The running table whose seat ``want`` has been empty longest, if any."""
        best: Side | None = None
        for side in self.sides.values():
            free = side.seats[want] is None and not side.table.done.done()
            if free and (best is None or side.left_at[want] < best.left_at[want]):
                best = side
        return best

    def start_table(self, seats: list[Seat]) -> Table:
        """The lobby's starter for protocol ``kierki``: four waiting clients become a table."""
        try:
            table = self.make_table(seats)
        except Exception:
            for gone in seats:
                if isinstance(gone, KierkiSeat):
                    self._unwait(gone)
                    gone.conn.close("the table could not be started")
            raise
        side = Side(table, seats, self.orders)
        for ks in side.seats:
            if ks is not None:
                self._unwait(ks)
                ks.game = side
        self._register(side)
        log.info("event=kierki_table table=%s players=%s", table.id, table.seat_names())
        return table

    def adopt(self, table: Table, orders: Sequence[CardOrder] = ()) -> Side:
        """A table restored from the store: every seat empty, waiting for ``IAM<seat>``."""
        side = Side(table, [None, None, None, None], orders)
        self._register(side)
        self._arm_abandon(side)
        return side

    def _register(self, side: Side) -> None:
        tid = side.table.id
        self.sides[tid] = side

        def done(_: object) -> None:
            if self.sides.get(tid) is side:
                del self.sides[tid]
            if side.abandon is not None:
                side.abandon.cancel()
                side.abandon = None

        side.table.done.add_done_callback(done)

    def _arm_abandon(self, side: Side) -> None:
        if self.abandon_after is None or side.abandon is not None:
            return
        side.abandon = asyncio.get_running_loop().call_later(self.abandon_after, self._abandon, side)

    def _abandon(self, side: Side) -> None:
        side.abandon = None
        if not side.empty() or side.table.done.done():
            return
        log.warning("event=kierki_abandoned table=%s after_s=%s", side.table.id, self.abandon_after)
        if self.on_abandoned is not None:
            self.on_abandoned(side.table)
        side.table.stop("abandoned: every seat empty")


__all__ = ["DEFAULT_ABANDON", "DEFAULT_TIMEOUT", "KierkiService", "Side"]
