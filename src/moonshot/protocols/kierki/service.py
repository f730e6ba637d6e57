"""Kierki inside ``moonshot serve`` (``--kierki-port``): many Kierki tables on the shared runtime.

Unchanged Kierki clients connect, say ``IAM<seat>`` within the timeout and are seated:

Every ``IAM<seat>`` is a candidate of the lobby the service is given (protocol ``kierki``, an
*exact-chair* candidate that takes a running table's free chair first: :class:`Reseat`); the
service does not know whether that lobby is one process's or a cluster's, where the chair may be
at a table another process runs:

* **A seat left vacant in a running table comes first.** A client that lost its connection (or
  whose server was restarted) reconnects with ``IAM<seat>`` and takes that seat back: ``DEAL``
  with its cards of this deal, ``TAKEN`` for each trick so far, then ``TRICK`` if it is its turn,
  exactly as the spec describes reconnection. When several running tables have that seat free,
  the one whose seat has been free longest is taken.
* **Otherwise it waits.** One first-come queue per seat letter; a table of the ``kierki``
  variant forms as soon as N, E, S and W are all waiting. A second ``N`` is not ``BUSY``: it
  waits for the next table (the spec's ``BUSY`` is about the one game its server runs; here a
  seat letter is taken only at one table). ``BUSY<seats>`` is still sent when ``max_waiting``
  clients already wait for that letter (the seats listed: those someone waits for).
* **No bots, no fill.** The spec starts a game "after four clients have gathered" and, when one
  disconnects, "pauses the game waiting for the client to reconnect to an empty position". So a
  Kierki table is never filled with server bots and never hands a lost seat to one: it waits
  (table policy ``pause`` on disconnect), and nobody is sent ``TRICK`` while a seat is empty (the
  table's state says it waits; when every seat is taken again it tells the seats, which send the
  ``TRICK`` they held back).
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
from typing import Any

from moonshot.core.events import HandDealt
from moonshot.protocols.kierki.codec import SEAT_LETTERS, Busy, printable
from moonshot.protocols.kierki.gamefile import CardOrder, parse_game_in_order
from moonshot.protocols.kierki.server import (
    Connection,
    InputLimits,
    KierkiListener,
    KierkiSeat,
    close_connections,
    order_cards,
)
from moonshot.runtime.lobby import Candidate, GameType, Lobby, LobbyError, Reseat
from moonshot.runtime.table import Seat, Table

log = logging.getLogger("moonshot.kierki")

DEFAULT_TIMEOUT = 5.0  # the spec's default -t
DEFAULT_ABANDON = 600.0


class Side:
    """The Kierki side of one seat's table: paused as the table's state says (a chair is empty;
    a table on another process: its owner's state), the game file's card order for ``DEAL``."""

    def __init__(self, orders: Sequence[CardOrder] = ()) -> None:
        self.orders = tuple(orders)
        self.table: Table | None = None

    @property
    def paused(self) -> bool:
        return self.table is not None and self.table.snapshot().paused

    def card_order(self, deal: int, e: HandDealt) -> tuple[int, ...]:
        return order_cards(self.orders, deal, e)


class KierkiService(KierkiListener):
    """Kierki connections on one port, seated by the lobby (a running table's free seat first)."""

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
        # what the lobby keeps of a Kierki table: its seats offered again, given up when all stay empty
        self.reseat = Reseat(abandon_after, on_abandoned)
        self.max_waiting = max_waiting
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
        if self.lobby is None or self.waiting_for[want] >= self.max_waiting:
            busy = tuple(c for c in range(4) if self.waiting_for[c])
            conn.send(Busy(busy))
            conn.close(f"{self.waiting_for[want]} clients already wait for seat {letter}")
            log.warning("event=kierki_busy peer=%s seat=%s waiting=%d", conn.peer, letter, self.waiting_for[want])
            return None
        side = Side(self.orders)
        seat = KierkiSeat(conn, want, resuming=False, game=side)

        def matched(table: Table, chair: int) -> None:
            self._unwait(seat)
            side.table = table
            side.orders = self._orders(table)
            seat.table = table
            seat.resuming = True  # a seat taken back: its first events replay the game, keep this deal's
            log.info("event=kierki_seated peer=%s table=%s seat=%s", conn.peer, table.id, letter)

        cand = Candidate(
            seat,
            GameType.ANY,
            None,
            matched,
            protocol="kierki",
            chair=want,
            exact_chair=True,
            reseat=self.reseat,
            address=conn.key or None,  # the table rate's share
        )
        self.waiting[seat] = cand
        self.waiting_for[want] += 1
        try:
            self.lobby.join(cand)  # may seat it at once (a free seat, or the fourth letter)
        except LobbyError as e:
            self._unwait(seat)
            conn.close(str(e))
            return None
        if seat in self.waiting:
            log.info("event=kierki_waiting peer=%s seat=%s waiting=%s", conn.peer, letter, self.waiting_for)
        return seat

    def left(self, seat: KierkiSeat) -> None:
        cand = self._unwait(seat)
        if cand is not None:
            if self.lobby is not None:
                self.lobby.leave(cand)
            return
        table = seat.table
        if table is None or table.done.done():
            return
        table.detach(seat.seat, seat, "disconnected")  # the lobby offers the seat again; the table waits
        log.info(
            "event=kierki_seat_left table=%s seat=%s peer=%s (the table waits for IAM%s)",
            table.id,
            SEAT_LETTERS[seat.seat],
            seat.conn.peer,
            SEAT_LETTERS[seat.seat],
        )

    def _orders(self, table: Table) -> tuple[CardOrder, ...]:
        """DEAL's card order: the game file's; a server started without one learns it from a
        restored table's own deals (kept in its meta)."""
        text = getattr(table, "meta", {}).get("deals")
        if self.orders or not isinstance(text, str):
            return self.orders
        with contextlib.suppress(ValueError):
            return tuple(parse_game_in_order(text)[1])
        return self.orders

    def _unwait(self, seat: KierkiSeat) -> Candidate | None:
        cand = self.waiting.pop(seat, None)
        if cand is not None:
            self.waiting_for[seat.seat] -= 1
        return cand

    # ------------------------------------------------------------ tables
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
        log.info("event=kierki_table table=%s players=%s", table.id, table.seat_names())
        return table

    def adopt(self, table: Table) -> None:
        """A table restored from the store: every seat empty, waiting for ``IAM<seat>``."""
        assert self.lobby is not None
        self.lobby.reopen(table, ("kierki", GameType.ANY, None), self.reseat)


def start_data(placed: Sequence[tuple[Seat, object]]) -> dict[str, Any]:
    """What a cluster keeps of a new Kierki table's players (the store's record of them, should
    the table's process die before writing it): clients, never bots, with no credential."""
    return {"players": [{"name": s.name, "kind": s.kind.value, "protocol": "kierki"} for s, _ in placed]}


__all__ = ["DEFAULT_ABANDON", "DEFAULT_TIMEOUT", "KierkiService", "Side", "start_data"]
