"""The Turbo seat: a person playing through HTTP. What the person sees comes from the game's
stream (:mod:`moonshot.http.streams`), what they do comes back through ``POST /game/*``.
"""

from __future__ import annotations

from collections.abc import Sequence

from moonshot.runtime.table import (
    DecisionRequest,
    OnBadAnswer,
    OnDisconnect,
    Seat,
    SeatKind,
    Table,
    TableEvent,
    TablePolicy,
)


# ---------------------------------------------------------------- hosted games
class TurboSeat(Seat):
    """A person playing through HTTP. The table needs an occupant in the chair; what the person
    sees comes from the game's stream, and what they do comes back through ``POST /game/*``."""

    wants_view = False
    protocol = "http"
    # a person: the protocol's deadlines for programs never apply; only the table's clock
    # (TablePolicy.clock, a game option) times them, and the table's bot plays when it runs out
    patient = True

    def __init__(self, name: str) -> None:
        self.name = name
        self.kind = SeatKind.HUMAN

    def on_events(self, table: Table, events: Sequence[TableEvent]) -> None:
        pass

    def on_request(self, table: Table, request: DecisionRequest) -> None:
        pass


PEOPLE_POLICY = TablePolicy(
    decision_timeout=None,
    on_timeout=OnBadAnswer.PAUSE,
    on_illegal=OnBadAnswer.PAUSE,
    on_disconnect=OnDisconnect.PAUSE,
)


__all__ = ["PEOPLE_POLICY", "TurboSeat"]
