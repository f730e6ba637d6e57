"""Domain events: what happened in a game, each carrying who may see it.

Every event has an ``audience``: a seat mask (bit ``s`` = seat ``s`` may see it).
A seat outside the audience sees :meth:`Event.redacted` instead: a version without the secret
(how many cards were passed, not which), or nothing at all. A spectator of a running game is the
viewer :data:`SPECTATOR`, outside every audience: it sees only what every seat sees (cards played,
hand sizes, scores, a claimer's shown hand). ``None`` as viewer is the whole record (a finished
game's replay, an open-hands table). Redaction happens here, once, so no protocol adapter can leak
a hand by forgetting to filter.

The classes are dataclasses (equality, ``repr``, ``replace``) with hand-written ``__init__``
methods and ``kind`` properties: compiled with mypyc (``make compile``) a dataclass-generated
``__init__`` stays interpreted and costs four times as much, and a class-level default would
turn into a field. The engine builds about a hundred events a deal, so this is its hot path.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from moonshot.core.cards import CardSet
from moonshot.core.rules import PassDirection

# the viewer who sits in no chair (bit 4 of an audience): it sees what every seat sees
SPECTATOR = 4
EVERYONE = 0b11111  # the four seats and the spectators


def seat_bit(seat: int) -> int:
    return 1 << seat


@dataclass(slots=True)
class Event:
    """Base class. ``audience`` says who sees the event as is: a mask of seats (bits 0-3) and
    :data:`SPECTATOR` (bit 4, set only for what every seat sees)."""

    @property
    def kind(self) -> str:
        return "event"

    @property
    def audience(self) -> int:
        return EVERYONE

    def redacted(self) -> Event | None:
        """What a seat outside the audience sees (``None``: nothing)."""
        return None

    def __reduce__(self) -> tuple[object, ...]:
        # compiled, a class without a default constructor pickles only through its fields
        return (type(self), tuple(getattr(self, f.name) for f in fields(self)))

    def for_viewer(self, seat: int | None) -> Event | None:
        """The event as ``seat`` sees it: a chair 0-3, :data:`SPECTATOR` (what is public), or
        ``None`` (everything: a finished game's record, an open-hands table)."""
        if seat is None or self.audience >> seat & 1:
            return self
        return self.redacted()


@dataclass(slots=True, init=False)
class GameStarted(Event):
    """The game begins. ``seed`` deals every hand, so nobody sees it while the game runs (the
    redacted copy has ``None``); ``commitment`` is the table's published commitment to the deals
    (:mod:`moonshot.core.fairness`), filled in by the server as the event goes out."""

    variant: str
    seed: int | None
    commitment: str

    def __init__(self, variant: str, seed: int | None, commitment: str = "") -> None:
        self.variant = variant
        self.seed = seed
        self.commitment = commitment

    @property
    def kind(self) -> str:
        return "game_started"

    @property
    def audience(self) -> int:
        return 0

    def redacted(self) -> Event | None:
        return replace(self, seed=None)


@dataclass(slots=True, init=False)
class DealStarted(Event):
    deal: int  # from 0
    direction: PassDirection
    deal_kind: int  # Kierki's contract 1..7; 0 elsewhere
    first_leader: int | None  # given by the game definition, else the 2C holder (known to all)

    def __init__(self, deal: int, direction: PassDirection, deal_kind: int, first_leader: int | None) -> None:
        self.deal = deal
        self.direction = direction
        self.deal_kind = deal_kind
        self.first_leader = first_leader

    @property
    def kind(self) -> str:
        return "deal_started"


@dataclass(slots=True, init=False)
class HandDealt(Event):
    seat: int
    cards: CardSet

    def __init__(self, seat: int, cards: CardSet) -> None:
        self.seat = seat
        self.cards = cards

    @property
    def kind(self) -> str:
        return "hand_dealt"

    @property
    def audience(self) -> int:
        return 1 << self.seat


@dataclass(slots=True, init=False)
class PassSent(Event):
    """``seat`` passed ``cards`` to ``to`` (``to == seat``: into the keeper pile)."""

    seat: int
    to: int
    cards: CardSet | None  # None in the redacted copy
    count: int

    def __init__(self, seat: int, to: int, cards: CardSet | None, count: int) -> None:
        self.seat = seat
        self.to = to
        self.cards = cards
        self.count = count

    @property
    def kind(self) -> str:
        return "pass_sent"

    @property
    def audience(self) -> int:
        return 1 << self.seat

    def redacted(self) -> Event | None:
        return replace(self, cards=None)


@dataclass(slots=True, init=False)
class PassReceived(Event):
    seat: int
    source: int  # the seat that sent them (== seat for the keeper pile)
    cards: CardSet | None
    count: int

    def __init__(self, seat: int, source: int, cards: CardSet | None, count: int) -> None:
        self.seat = seat
        self.source = source
        self.cards = cards
        self.count = count

    @property
    def kind(self) -> str:
        return "pass_received"

    @property
    def audience(self) -> int:
        return 1 << self.seat

    def redacted(self) -> Event | None:
        return replace(self, cards=None)


@dataclass(slots=True, init=False)
class ChargingStarted(Event):
    first_charger: int | None  # None when anyone may charge

    def __init__(self, first_charger: int | None) -> None:
        self.first_charger = first_charger

    @property
    def kind(self) -> str:
        return "charging_started"


@dataclass(slots=True, init=False)
class Charged(Event):
    """A charge (``cards`` empty: a pass). In blind orders only the charger sees the cards."""

    seat: int
    cards: CardSet | None
    count: int
    blind: bool
    done: int  # 4-bit mask of seats done after this charge
    next_charger: int | None

    def __init__(
        self, seat: int, cards: CardSet | None, count: int, blind: bool, done: int, next_charger: int | None
    ) -> None:
        self.seat = seat
        self.cards = cards
        self.count = count
        self.blind = blind
        self.done = done
        self.next_charger = next_charger

    @property
    def kind(self) -> str:
        return "charged"

    @property
    def audience(self) -> int:
        return 1 << self.seat if self.blind else EVERYONE

    def redacted(self) -> Event | None:
        return replace(self, cards=None)


@dataclass(slots=True, init=False)
class ChargesRevealed(Event):
    charges: tuple[CardSet, CardSet, CardSet, CardSet]

    def __init__(self, charges: tuple[CardSet, CardSet, CardSet, CardSet]) -> None:
        self.charges = charges

    @property
    def kind(self) -> str:
        return "charges_revealed"


@dataclass(slots=True, init=False)
class ChargingEnded(Event):
    charges: tuple[CardSet, CardSet, CardSet, CardSet]

    def __init__(self, charges: tuple[CardSet, CardSet, CardSet, CardSet]) -> None:
        self.charges = charges

    @property
    def kind(self) -> str:
        return "charging_ended"


@dataclass(slots=True, init=False)
class Exposed(Event):
    """The exposure decision of ``seat`` (``cards`` empty: declined)."""

    seat: int
    cards: CardSet

    def __init__(self, seat: int, cards: CardSet) -> None:
        self.seat = seat
        self.cards = cards

    @property
    def kind(self) -> str:
        return "exposed"


@dataclass(slots=True, init=False)
class TrickStarted(Event):
    trick: int  # from 1
    leader: int

    def __init__(self, trick: int, leader: int) -> None:
        self.trick = trick
        self.leader = leader

    @property
    def kind(self) -> str:
        return "trick_started"


@dataclass(slots=True, init=False)
class CardPlayed(Event):
    seat: int
    card: int
    trick: int

    def __init__(self, seat: int, card: int, trick: int) -> None:
        self.seat = seat
        self.card = card
        self.trick = trick

    @property
    def kind(self) -> str:
        return "card_played"


@dataclass(slots=True, init=False)
class TrickEnded(Event):
    trick: int
    winner: int
    cards: tuple[int, ...]  # in play order
    seats: tuple[int, ...]  # who played each card
    points: int  # points the trick carried (before multipliers)

    def __init__(self, trick: int, winner: int, cards: tuple[int, ...], seats: tuple[int, ...], points: int) -> None:
        self.trick = trick
        self.winner = winner
        self.cards = cards
        self.seats = seats
        self.points = points

    @property
    def kind(self) -> str:
        return "trick_ended"


@dataclass(slots=True, init=False)
class ClaimMade(Event):
    seat: int
    hand: CardSet

    def __init__(self, seat: int, hand: CardSet) -> None:
        self.seat = seat
        self.hand = hand

    @property
    def kind(self) -> str:
        return "claim_made"


@dataclass(slots=True, init=False)
class ClaimAnswered(Event):
    claimer: int
    seat: int
    accepted: bool

    def __init__(self, claimer: int, seat: int, accepted: bool) -> None:
        self.claimer = claimer
        self.seat = seat
        self.accepted = accepted

    @property
    def kind(self) -> str:
        return "claim_answered"


@dataclass(slots=True, init=False)
class ClaimSucceeded(Event):
    """All three accepted: the claimer takes every card not yet taken."""

    claimer: int
    cards: CardSet

    def __init__(self, claimer: int, cards: CardSet) -> None:
        self.claimer = claimer
        self.cards = cards

    @property
    def kind(self) -> str:
        return "claim_succeeded"


@dataclass(slots=True, init=False)
class DealEnded(Event):
    deal: int
    points: tuple[int, ...]  # this deal's score per seat
    totals: tuple[int, ...]  # game totals after it
    moon: int | None  # the seat that shot the moon
    taken: tuple[CardSet, ...]  # cards each seat took
    tricks: int  # tricks played (fewer than 13 after an early end, nines or a claim)
    early: bool  # ended before all cards were played (points exhausted or a claim)

    def __init__(
        self,
        deal: int,
        points: tuple[int, ...],
        totals: tuple[int, ...],
        moon: int | None,
        taken: tuple[CardSet, ...],
        tricks: int,
        early: bool,
    ) -> None:
        self.deal = deal
        self.points = points
        self.totals = totals
        self.moon = moon
        self.taken = taken
        self.tricks = tricks
        self.early = early

    @property
    def kind(self) -> str:
        return "deal_ended"


@dataclass(slots=True, init=False)
class GameEnded(Event):
    """The game is over. ``seed`` and ``salt`` reveal what the game's commitment was made of
    (:mod:`moonshot.core.fairness`): the server fills them in as the event goes out; the engine's own
    copy leaves them empty."""

    totals: tuple[int, ...]
    winners: tuple[int, ...]
    deals: int
    seed: int | None
    salt: str

    def __init__(
        self, totals: tuple[int, ...], winners: tuple[int, ...], deals: int, seed: int | None = None, salt: str = ""
    ) -> None:
        self.totals = totals
        self.winners = winners
        self.deals = deals
        self.seed = seed
        self.salt = salt

    @property
    def kind(self) -> str:
        return "game_ended"


__all__ = [
    "EVERYONE",
    "SPECTATOR",
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
