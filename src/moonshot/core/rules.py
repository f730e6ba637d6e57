"""Rules as data: every difference between Hearts variants is a field of :class:`Rules`.

The engine reads these knobs and never asks which variant it is playing. A new house rule
is a new field (with a default that keeps every existing variant unchanged) or a new value.

Scoring lives here too (:func:`score_deal`), because the scoring table is part of the rules:
it turns the cards each seat took in a deal, and which cards were charged or exposed, into
that deal's points.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import Enum
from typing import TypeVar

from moonshot.core.cards import (
    ACE_HEARTS,
    HEARTS_MASK,
    JACK_DIAMONDS,
    QUEEN_SPADES,
    TEN_CLUBS,
    TWO_CLUBS,
    CardSet,
)


class PassDirection(Enum):
    """Where a deal's passed cards go. ``offset`` is the receiver's seat minus the sender's."""

    LEFT = "left"
    RIGHT = "right"
    ACROSS = "across"
    HOLD = "hold"  # no passing
    KEEPER = "keeper"  # Turbo's fourth hand: charge; if nobody charged, a 3-card pile is shuffled back

    @property
    def offset(self) -> int:
        return _OFFSETS[self]


_OFFSETS = {
    PassDirection.LEFT: 1,
    PassDirection.RIGHT: 3,
    PassDirection.ACROSS: 2,
    PassDirection.HOLD: 0,
    PassDirection.KEEPER: 0,
}


class ChargingOrder(Enum):
    """Turbo Hearts' charging rules: who may charge when, and whether charges are hidden."""

    CLASSIC = "classic"
    BLIND = "blind"
    BRIDGE = "bridge"
    CHAIN = "chain"
    BLIND_BRIDGE = "blind-bridge"
    BLIND_CHAIN = "blind-chain"

    @property
    def blind(self) -> bool:
        """Charges are shown only to the charger until the charging round ends."""
        return self in (ChargingOrder.BLIND, ChargingOrder.BLIND_BRIDGE, ChargingOrder.BLIND_CHAIN)

    @property
    def in_seat_order(self) -> bool:
        """Seats charge one at a time, clockwise (otherwise anyone not done may charge)."""
        return self not in (ChargingOrder.CLASSIC, ChargingOrder.BLIND)

    @property
    def chain(self) -> bool:
        """After any charge all four must pass again (otherwise all but the charger)."""
        return self in (ChargingOrder.CHAIN, ChargingOrder.BLIND_CHAIN)


class MoonRule(Enum):
    """What happens when one seat takes every heart and the queen of spades."""

    NONE = "none"
    OTHERS_PLUS = "others-plus"  # shooter scores 0 for them, each other seat +moon_points
    SHOOTER_MINUS = "shooter-minus"  # shooter scores -moon_points, others unchanged
    TREND = "trend"  # the shooter's hearts+QS points turn positive and are multiplied by 4
    NEGATE = "negate"  # Turbo: the shooter's hearts+QS subtotal is negated


class ClaimFlow(Enum):
    """How a claim ("I take every remaining trick") is answered, where ``Rules.claims`` allows them.

    ``BLOCKING``: play stops until the three others have answered; one claim is open at a time,
    any reject ends it, and the rejected claimer may not claim again until another card is played.

    ``CONCURRENT`` (Turbo Hearts' own server): play goes on while claims are open, and several
    seats may have one open at once (a seat at most one). Accepts are remembered until the claim
    ends; any reject ends it, the claimer's own withdrawing it; once the other three have all
    accepted, the hand ends. Open claims last until the hand ends, and a seat whose claim was
    rejected may claim again at once.
    """

    BLOCKING = "blocking"
    CONCURRENT = "concurrent"


class EndRule(Enum):
    DEALS = "deals"  # a fixed number of deals (Rules.deals, or the game definition's deals)
    SCORE = "score"  # until a total reaches (or exceeds) Rules.score_limit


@dataclass(frozen=True)
class Scoring:
    """Points one deal kind awards. Positive points are bad (penalties) unless a variant says so."""

    card_points: tuple[int, ...]  # 52 entries, points each card carries
    per_trick: int = 0  # points for each trick taken
    trick_number_points: tuple[tuple[int, int], ...] = ()  # (trick number from 1, points)
    name: str = ""

    def __post_init__(self) -> None:
        if len(self.card_points) != 52:
            raise ValueError("card_points needs 52 entries")

    def __reduce__(self) -> tuple[type[Scoring], tuple[object, ...]]:
        return _rebuild(self)

    @property
    def cards_with_points(self) -> CardSet:
        return sum(1 << c for c, p in enumerate(self.card_points) if p)

    @property
    def total(self) -> int:
        """All points of a deal of 13 tricks (used for 'all points are taken' and invariants)."""
        return sum(self.card_points) + 13 * self.per_trick + sum(p for _, p in self.trick_number_points)


_Frozen = TypeVar("_Frozen", "Scoring", "Rules")


def _rebuild(value: _Frozen) -> tuple[type[_Frozen], tuple[object, ...]]:
    # pickle and copy rebuild a value through its constructor: compiled with mypyc (make compile)
    # a frozen dataclass has no __dict__ that they could fill in behind its back
    return type(value), tuple(getattr(value, f.name) for f in dataclasses.fields(value))


def card_points(points: dict[int, int]) -> tuple[int, ...]:
    return tuple(points.get(c, 0) for c in range(52))


HEARTS_AND_QUEEN = Scoring(
    card_points({**{c: 1 for c in range(26, 39)}, QUEEN_SPADES: 13}), name="hearts and the queen"
)
OMNIBUS_SCORING = Scoring(
    card_points({**{c: 1 for c in range(26, 39)}, QUEEN_SPADES: 13, JACK_DIAMONDS: -10}),
    name="hearts, queen, jack of diamonds",
)


@dataclass(frozen=True)
class Rules:
    """Every knob of a Hearts variant. Defaults are standard Hearts."""

    name: str = "standard"
    # passing
    pass_cycle: tuple[PassDirection, ...] = (
        PassDirection.LEFT,
        PassDirection.RIGHT,
        PassDirection.ACROSS,
        PassDirection.HOLD,
    )
    pass_count: int = 3
    # first trick
    two_of_clubs_leads: bool = True  # else the deal's given leader leads any card
    first_trick_forbidden: CardSet = HEARTS_MASK | (1 << QUEEN_SPADES)  # unless nothing else is held
    first_trick_forced_order: tuple[int, ...] = ()  # when forced: the first of these held must go
    # leading hearts
    hearts_must_be_broken: bool = True
    queen_breaks_hearts: bool = False
    # scoring
    scoring: tuple[Scoring, ...] = (HEARTS_AND_QUEEN,)  # indexed by the deal's kind
    moon: MoonRule = MoonRule.OTHERS_PLUS
    moon_points: int = 26
    ten_of_clubs_multiplier: int = 1  # the taker of TC has the deal's score multiplied
    negative_scores: bool = False  # report penalties as negative numbers (Trend)
    lowest_wins: bool = True
    # exposure (Trend) and charging (Turbo): a charged/exposed card doubles its effect
    exposable: CardSet = 0
    chargeable: CardSet = 0
    charging: ChargingOrder | None = None
    charged_card_rule: bool = False  # a charged card may not go on the first trick of its suit
    # Turbo's nines: a 9 of the led suit among the first four cards makes an eight-card trick
    nines: bool = False
    claims: bool = False
    claim_flow: ClaimFlow = ClaimFlow.BLOCKING  # how claims are answered (where claims is True)
    # end of a deal / of the game
    early_end: bool = False  # a deal stops once no points remain to be taken
    end: EndRule = EndRule.SCORE
    deals: int = 0  # for EndRule.DEALS; 0 = as many as the game definition gives
    score_limit: int = 100
    limit_inclusive: bool = True  # the game ends when a total reaches (True) or exceeds the limit
    # where deals come from: False = shuffled from the seed; True = a game definition may give them
    deal_kinds: tuple[int, ...] = (0,)  # kinds cycled when deals are generated (Kierki: 1..7)
    description: str = ""
    extra: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    def replace(self, **changes: object) -> Rules:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    def __reduce__(self) -> tuple[type[Rules], tuple[object, ...]]:
        return _rebuild(self)

    def pass_direction(self, deal_index: int) -> PassDirection:
        return self.pass_cycle[deal_index % len(self.pass_cycle)]

    def scoring_for(self, kind: int) -> Scoring:
        return self.scoring[kind] if len(self.scoring) > 1 else self.scoring[0]

    @property
    def doubling_cards(self) -> CardSet:
        return self.exposable | self.chargeable


def score_deal(
    rules: Rules,
    kind: int,
    taken: list[int] | tuple[int, ...],
    trick_numbers_won: list[int] | tuple[int, ...],
    tricks_won: list[int] | tuple[int, ...],
    doubled: CardSet = 0,
) -> tuple[tuple[int, ...], int | None]:
    """Points each seat scores for one deal, and the seat that shot the moon (if any).

    ``taken[s]``: cards seat ``s`` took; ``trick_numbers_won[s]``: bit ``n`` set when ``s`` won
    trick ``n`` (from 1); ``tricks_won[s]``: how many tricks ``s`` took; ``doubled``: the cards
    charged or exposed this deal (each doubles its own effect: AH all hearts, QS and JD their
    points, TC its multiplier).
    """
    sc = rules.scoring_for(kind)
    heart_mult = 2 if doubled >> ACE_HEARTS & 1 else 1
    qs_mult = 2 if doubled >> QUEEN_SPADES & 1 else 1
    jd_mult = 2 if doubled >> JACK_DIAMONDS & 1 else 1
    tc_mult = rules.ten_of_clubs_multiplier * (2 if doubled >> TEN_CLUBS & 1 else 1)
    cp = sc.card_points
    qs_bit, tc_bit = 1 << QUEEN_SPADES, 1 << TEN_CLUBS

    # "moon" points: hearts and the queen (the subtotal the moon rules act on)
    moon_part = [0, 0, 0, 0]
    other = [0, 0, 0, 0]
    for s in range(4):
        t = taken[s]
        hearts = sum(cp[c] for c in range(26, 39) if t >> c & 1) * heart_mult
        qs = cp[QUEEN_SPADES] * qs_mult if t & qs_bit else 0
        moon_part[s] = hearts + qs
        rest = t & ~HEARTS_MASK & ~qs_bit
        pts = 0
        while rest:
            low = rest & -rest
            c = low.bit_length() - 1
            pts += cp[c] * (jd_mult if c == JACK_DIAMONDS else 1)
            rest ^= low
        pts += sc.per_trick * tricks_won[s]
        for number, p in sc.trick_number_points:
            if trick_numbers_won[s] >> number & 1:
                pts += p
        other[s] = pts

    shooter = None
    if rules.moon is not MoonRule.NONE:
        for s in range(4):
            if taken[s] & HEARTS_MASK == HEARTS_MASK and taken[s] & qs_bit:
                shooter = s
    if shooter is not None:
        if rules.moon is MoonRule.OTHERS_PLUS:
            for s in range(4):
                moon_part[s] = 0 if s == shooter else rules.moon_points
        elif rules.moon is MoonRule.SHOOTER_MINUS:
            moon_part[shooter] = -rules.moon_points
        elif rules.moon is MoonRule.TREND:
            moon_part[shooter] = -4 * moon_part[shooter]
        else:  # NEGATE
            moon_part[shooter] = -moon_part[shooter]

    scores = []
    for s in range(4):
        total = moon_part[s] + other[s]
        if tc_mult != 1 and taken[s] & tc_bit:
            total *= tc_mult
        scores.append(-total if rules.negative_scores else total)
    return tuple(scores), shooter


__all__ = [
    "HEARTS_AND_QUEEN",
    "OMNIBUS_SCORING",
    "TWO_CLUBS",
    "ChargingOrder",
    "ClaimFlow",
    "EndRule",
    "MoonRule",
    "PassDirection",
    "Rules",
    "Scoring",
    "card_points",
    "score_deal",
]
