"""A chair whose player is connected to another node (or this one), whatever its protocol: the
owner's side (:class:`RemoteSeat`: the table's callbacks become messages on the player's node's
stream) and the connection's side (:class:`RemoteTable`, the stand-in the protocol's own seat
adapter plays against, with :class:`RemoteRequest` and :class:`Binding`), and how a chair given
by a table's owner becomes a stand-in (:func:`stand_in`, :func:`tell_matched`).

It speaks to its node only through :class:`Link` (send a message, drop a binding): it reads
no Redis key, decides nothing about the lobby or leases and imports no protocol.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

from moonshot.cluster import messages as wire
from moonshot.core.actions import Action, action_to_dict
from moonshot.core.engine import Phase
from moonshot.core.rules import Rules
from moonshot.core.views import SeatView
from moonshot.runtime.table import (
    ChairState,
    DecisionRequest,
    Seat,
    SeatKind,
    Table,
    TableEvent,
    TableNotice,
    TableState,
    TableStatus,
)
from moonshot.store import rules_named

log = logging.getLogger("moonshot.cluster")


class Link(Protocol):
    """What a remote seat and a stand-in need of their node (the cluster's node state)."""

    node: str
    served: dict[str, Table]  # tables run outside the directory (a tournament's): not fenced
    bindings: dict[str, Binding]  # this node's connections' holds on chairs, by binding
    rules: Rules | None  # what a seat at a table whose rules have no stored name is told it plays

    def send(self, node: str, msg: wire.Message, fence: str | None = None) -> None: ...

    def unbind(self, table_id: str, seat: RemoteSeat) -> None: ...


# ------------------------------------------------------------------ the owner's side
class RemoteSeat(Seat):
    """A chair whose player is connected to some node (maybe this one), whatever its protocol:
    the table's callbacks become messages on that node's stream, tagged with the binding (one
    connection's hold on the chair). Events go with the table's state (:class:`TableState`)
    whenever it changed, so the player's adapter reads the owner's chairs and counts."""

    wants_view = False

    def __init__(
        self,
        cluster: Link,
        node: str,
        binding: str,
        name: str,
        kind: SeatKind,
        credential: str | None,
        protocol: str,
    ) -> None:
        self.cluster = cluster
        self.node = node
        self.binding = binding
        self.name = name
        self.kind = kind
        self.credential = credential
        self.protocol = protocol  # the player's protocol, as the store records the chair
        self._state: TableState | None = None  # the last state sent

    def _send(self, table: Table, msg: wire.Message) -> None:
        # fenced by the table's lease; a tournament's table, served here outside the directory
        # (:attr:`Cluster.served`), has none
        self.cluster.send(self.node, msg, fence=None if table.id in self.cluster.served else table.id)

    def on_events(self, table: Table, events: Sequence[TableEvent]) -> None:
        msg = wire.Events(table=table.id, binding=self.binding, events=list(events), state=self._changed(table))
        self._send(table, msg)

    def _changed(self, table: Table) -> TableState | None:
        state = table.snapshot()
        if state == self._state:
            return None
        self._state = state
        return state

    def on_request(self, table: Table, request: DecisionRequest) -> None:
        game = table.game  # as the request was asked: this runs when the table asks
        self._send(
            table,
            wire.Request(
                table=table.id,
                binding=self.binding,
                chair=request.seat,
                request=request.request_id,
                version=request.version,
                phase=request.phase,
                legal=request.legal_plays,
                hand=game.hands[request.seat],
                trick=game.trick_no,
                trick_cards=tuple(game.trick_cards),
                state=self._changed(table),
            ),
        )

    def on_rejected(self, table: Table, request: DecisionRequest, action: Action | None, reason: str) -> None:
        self._send(
            table, wire.Rejected(table=table.id, binding=self.binding, request=request.request_id, reason=reason)
        )

    def on_notice(self, table: Table, notice: TableNotice) -> None:
        self._send(
            table,
            wire.Notice(table=table.id, binding=self.binding, notice=notice.kind, cause=notice.cause, text=notice.text),
        )

    def on_closed(self, table: Table, reason: str) -> None:
        if table.status is TableStatus.STOPPED:
            return  # this node stops (shutdown, lease lost): the table goes on on another node
        self._send(table, wire.Closed(table=table.id, binding=self.binding, reason=reason, status=table.status))
        self.cluster.unbind(table.id, self)


# ------------------------------------------------------------------ the connection's side
class _RemoteView:
    """What a protocol adapter with ``wants_view = False`` reads of a remote request's view: the
    snapshot the request carried."""

    __slots__ = ("hand", "trick_cards", "trick_no")

    def __init__(self, hand: int, trick_no: int, trick_cards: tuple[int, ...]) -> None:
        self.hand = hand
        self.trick_no = trick_no
        self.trick_cards = trick_cards


class RemoteRequest(DecisionRequest):
    """A decision request that came from the owner node, with its view's snapshot."""

    __slots__ = ("hand",)

    def __init__(
        self,
        table_id: str,
        seat: int,
        request_id: int,
        version: int,
        phase: Phase,
        legal: int,
        hand: int,
        trick_no: int = 0,
        trick_cards: tuple[int, ...] = (),
    ):
        self.table_id = table_id
        self.seat = seat
        self.request_id = request_id
        self.version = version
        self.phase = phase
        self.legal_plays = legal
        self.deadline = None
        self.hand = hand
        self._game = None
        self._view = cast(SeatView, _RemoteView(hand, trick_no, trick_cards))


class RemoteTable:
    """What a protocol's seat adapter on the connection's node sees of a table owned elsewhere:
    ``submit``, ``reject`` and ``detach`` become messages on the owner's stream, ``snapshot``
    is the owner's table state as last sent, ``done`` says whether the table ended."""

    def __init__(
        self,
        cluster: Link,
        table_id: str,
        owner: str,
        binding: str,
        chair: int,
        names: list[str],
        rules: Rules,
        credential: str | None,
    ) -> None:
        self.cluster = cluster
        self.id = table_id
        self.owner = owner
        self.binding = binding
        self.chair = chair
        self.names = names
        self.rules = rules
        self.credentials: list[str | None] = [None, None, None, None]
        self.credentials[chair] = credential
        self.status = TableStatus.RUNNING
        self.state = TableState((ChairState("human", False, 0, 0),) * 4, False)
        self.done = _Ended(self)
        self.restored = False  # a restored game, joined mid-game

    def snapshot(self) -> TableState:
        return self.state

    def seat_names(self) -> list[str]:
        return list(self.names)

    def submit(self, seat: int, action: Action, request_id: int | None = None, reply: object = None) -> None:
        msg = wire.Submit(
            table=self.id, binding=self.binding, chair=self.chair, action=action_to_dict(action), request=request_id
        )
        self.cluster.send(self.owner, msg)

    def reject(self, seat: int, request_id: int | None, reason: str) -> None:
        msg = wire.Unreadable(table=self.id, binding=self.binding, chair=self.chair, request=request_id, reason=reason)
        self.cluster.send(self.owner, msg)

    def sent(self, seat: int, request_id: int, at: float | None = None) -> None:
        """A request's frame left (``Seat.reports_sent``): the owner's deadline runs from when
        it asked (its chair is a :class:`RemoteSeat`, which does not report sends), so nothing
        goes back."""

    def detach(self, seat: int, occupant: object = None, reason: str = "disconnected") -> None:
        self.cluster.bindings.pop(self.binding, None)
        self.cluster.send(self.owner, wire.Detach(table=self.id, binding=self.binding, chair=self.chair, reason=reason))


class _Ended:
    """``table.done`` of a remote table, as an adapter reads it."""

    def __init__(self, table: RemoteTable) -> None:
        self.table = table

    def done(self) -> bool:
        return self.table.status is not TableStatus.RUNNING


@dataclass
class Binding:
    """One connection's hold on a chair of a (possibly remote) table."""

    id: str
    seat: Any  # the protocol's seat adapter (Sessions', Trend's, Kierki's)
    table: RemoteTable
    last_version: int = 0


# ------------------------------------------------------------------ chairs given by an owner
def ticket_seat(link: Link, ticket: Mapping[str, Any], protocol: str) -> RemoteSeat:
    """The chair of a pool's ticket: its player on the ticket's node, under a new binding."""
    kind, cred = SeatKind(ticket["kind"]), ticket.get("cred")
    return RemoteSeat(link, ticket["node"], secrets.token_hex(8), ticket["name"], kind, cred, protocol)


def tell_matched(link: Link, table: Table, chair: int, seat: RemoteSeat, ticket: str) -> None:
    """``seat.matched`` to the node of the ticket's (or claim's) player, seated in ``chair`` here."""
    matched = wire.Matched(
        table=table.id,
        binding=seat.binding,
        ticket=ticket,
        chair=chair,
        owner=link.node,
        names=table.seat_names(),
        rules=table.rules.name,
        credential=seat.credential,
        restored=table.restored,
    )
    link.send(seat.node, matched, fence=None if table.id in link.served else table.id)


def stand_in(
    link: Link,
    msg: wire.Matched | wire.Attached,
    credential: str | None,
    restored: bool,
    seated: Callable[[Table, int], Seat | None],
    gone: str,
) -> None:
    """A chair of a table owned elsewhere, given to this node: its stand-in, and the seat
    adapter ``seated`` makes for it; none (the player left), the chair goes back (``gone``)."""
    try:
        rules = rules_named(msg.rules)
    except (KeyError, ValueError):  # a tournament's own rules: the adapter reads only the pass count
        rules = link.rules or rules_named("standard")
    rt = RemoteTable(link, msg.table, msg.owner, msg.binding, msg.chair, list(msg.names), rules, credential)
    rt.restored = restored
    seat = seated(cast(Table, rt), rt.chair)
    if seat is None:
        rt.detach(rt.chair, None, gone)
    else:
        link.bindings[rt.binding] = Binding(rt.binding, seat, rt)
