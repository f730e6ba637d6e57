"""Domain events: what happened in a game, each carrying who may see it.

Every event has an ``audience``: a 4-bit seat mask (bit ``s`` = seat ``s`` may see it).
Spectators see everything (the unredacted stream, as Turbo Hearts serves it). A seat outside
the audience sees :meth:`Event.redacted` instead: a version without the secret (how many
cards were passed, not which), or nothing at all. Redaction happens here, once, so no
protocol adapter can leak a hand by forgetting to filter.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from moonshot.cards import CardSet
from moonshot.rules import PassDirection

EVERYONE = 0b1111


def seat_bit(seat: int) -> int:
    return 1 << seat


@dataclass(slots=True)
class Event:
    """Base class. ``audience`` says who sees the event as is."""

    kind: ClassVar[str] = "event"

    @property
    def audience(self) -> int:
        return EVERYONE

    def redacted(self) -> Event | None:
        """What a seat outside the audience sees (``None``: nothing)."""
        return None

    def for_viewer(self, seat: int | None) -> Event | None:
        """The event as ``seat`` sees it; ``None`` as viewer means a spectator (sees all)."""
        if seat is None or self.audience >> seat & 1:
            return self
        return self.redacted()


@dataclass(slots=True)
class GameStarted(Event):
    kind: ClassVar[str] = "game_started"
    variant: str
    seed: int


@dataclass(slots=True)
class DealStarted(Event):
    kind: ClassVar[str] = "deal_started"
    deal: int  # from 0
    direction: PassDirection
    deal_kind: int  # Kierki's contract 1..7; 0 elsewhere
    first_leader: int | None  # given by the game definition, else the 2C holder (known to all)


@dataclass(slots=True)
class HandDealt(Event):
    kind: ClassVar[str] = "hand_dealt"
    seat: int
    cards: CardSet

    @property
    def audience(self) -> int:
        return 1 << self.seat


@dataclass(slots=True)
class PassSent(Event):
    """``seat`` passed ``cards`` to ``to`` (``to == seat``: into the keeper pile)."""

    kind: ClassVar[str] = "pass_sent"
    seat: int
    to: int
    cards: CardSet | None  # None in the redacted copy
    count: int

    @property
    def audience(self) -> int:
        return 1 << self.seat

    def redacted(self) -> Event | None:
        return replace(self, cards=None)


@dataclass(slots=True)
class PassReceived(Event):
    kind: ClassVar[str] = "pass_received"
    seat: int
    source: int  # the seat that sent them (== seat for the keeper pile)
    cards: CardSet | None
    count: int

    @property
    def audience(self) -> int:
        return 1 << self.seat

    def redacted(self) -> Event | None:
        return replace(self, cards=None)


@dataclass(slots=True)
class ChargingStarted(Event):
    kind: ClassVar[str] = "charging_started"
    first_charger: int | None  # None when anyone may charge


@dataclass(slots=True)
class Charged(Event):
    """A charge (``cards`` empty: a pass). In blind orders only the charger sees the cards."""

    kind: ClassVar[str] = "charged"
    seat: int
    cards: CardSet | None
    count: int
    blind: bool
    done: int  # 4-bit mask of seats done after this charge
    next_charger: int | None

    @property
    def audience(self) -> int:
        return 1 << self.seat if self.blind else EVERYONE

    def redacted(self) -> Event | None:
        return replace(self, cards=None)


@dataclass(slots=True)
class ChargesRevealed(Event):
    kind: ClassVar[str] = "charges_revealed"
    charges: tuple[CardSet, CardSet, CardSet, CardSet]


@dataclass(slots=True)
class ChargingEnded(Event):
    kind: ClassVar[str] = "charging_ended"
    charges: tuple[CardSet, CardSet, CardSet, CardSet]


@dataclass(slots=True)
class Exposed(Event):
    """The exposure decision of ``seat`` (``cards`` empty: declined)."""

    kind: ClassVar[str] = "exposed"
    seat: int
    cards: CardSet


@dataclass(slots=True)
class TrickStarted(Event):
    kind: ClassVar[str] = "trick_started"
    trick: int  # from 1
    leader: int


@dataclass(slots=True)
class CardPlayed(Event):
    kind: ClassVar[str] = "card_played"
    seat: int
    card: int
    trick: int


@dataclass(slots=True)
class TrickEnded(Event):
    kind: ClassVar[str] = "trick_ended"
    trick: int
    winner: int
    cards: tuple[int, ...]  # in play order
    seats: tuple[int, ...]  # who played each card
    points: int  # points the trick carried (before multipliers)


@dataclass(slots=True)
class ClaimMade(Event):
    kind: ClassVar[str] = "claim_made"
    seat: int
    hand: CardSet


@dataclass(slots=True)
class ClaimAnswered(Event):
    kind: ClassVar[str] = "claim_answered"
    claimer: int
    seat: int
    accepted: bool


@dataclass(slots=True)
class ClaimSucceeded(Event):
    """All three accepted: the claimer takes every card not yet taken."""

    kind: ClassVar[str] = "claim_succeeded"
    claimer: int
    cards: CardSet


@dataclass(slots=True)
class DealEnded(Event):
    kind: ClassVar[str] = "deal_ended"
    deal: int
    points: tuple[int, ...]  # this deal's score per seat
    totals: tuple[int, ...]  # game totals after it
    moon: int | None  # the seat that shot the moon
    taken: tuple[CardSet, ...]  # cards each seat took
    tricks: int  # tricks played (fewer than 13 after an early end, nines or a claim)
    early: bool  # ended before all cards were played (points exhausted or a claim)


@dataclass(slots=True)
class GameEnded(Event):
    kind: ClassVar[str] = "game_ended"
    totals: tuple[int, ...]
    winners: tuple[int, ...]
    deals: int


__all__ = [
    "EVERYONE",
    "CardPlayed",
    "Charged",
    "ChargesRevealed",
    "ChargingEnded",
    "ChargingStarted",
    "ClaimAnswered",
    "ClaimMade",
    "ClaimSucceeded",
    "DealEnded",
    "DealStarted",
    "Event",
    "Exposed",
    "GameEnded",
    "GameStarted",
    "HandDealt",
    "PassReceived",
    "PassSent",
    "TrickEnded",
    "TrickStarted",
    "seat_bit",
]
