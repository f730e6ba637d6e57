"""The named variants: each is a :class:`~moonshot.core.rules.Rules` value, nothing more.

``standard`` is the common game; ``omnibus`` adds the jack of diamonds; ``trend`` is the 2018
Trend Micro AI competition's game; ``turbo`` is Turbo Hearts with one of six charging orders
(``turbo``, ``turbo-blind``, ``turbo-bridge``, ...); ``kierki`` is the Polish seven-contract game
of the networks course; ``gym`` is Gym Hearts (standard scoring, a ``max_score`` limit that must
be exceeded).
"""

from __future__ import annotations

from moonshot.core.cards import (
    ACE_HEARTS,
    HEARTS_MASK,
    JACK_DIAMONDS,
    JACKS_MASK,
    KING_HEARTS,
    KINGS_MASK,
    QUEEN_SPADES,
    QUEENS_MASK,
    TEN_CLUBS,
)
from moonshot.core.rules import (
    HEARTS_AND_QUEEN,
    OMNIBUS_SCORING,
    ChargingOrder,
    ClaimFlow,
    EndRule,
    MoonRule,
    PassDirection,
    Rules,
    Scoring,
    card_points,
)

L, R, A, H, K = (
    PassDirection.LEFT,
    PassDirection.RIGHT,
    PassDirection.ACROSS,
    PassDirection.HOLD,
    PassDirection.KEEPER,
)

STANDARD = Rules(
    name="standard",
    description="pass L/R/A/hold, 2C leads, hearts 1 + QS 13, moon: others +26, ends at 100",
)

OMNIBUS = STANDARD.replace(
    name="omnibus",
    scoring=(OMNIBUS_SCORING,),
    description="standard + the jack of diamonds is -10",
)

TREND = Rules(
    name="trend",
    pass_cycle=(L, R, A, H),
    scoring=(HEARTS_AND_QUEEN,),
    moon=MoonRule.TREND,
    ten_of_clubs_multiplier=2,
    negative_scores=True,
    lowest_wins=False,
    exposable=1 << ACE_HEARTS,
    end=EndRule.DEALS,
    deals=4,
    description="Trend Micro 2018: 4 deals, AH exposure doubles hearts, TC doubles the deal, "
    "moon positive x4, scores negative, highest wins",
)


def _turbo(order: ChargingOrder) -> Rules:
    suffix = "" if order is ChargingOrder.CLASSIC else "-" + order.value
    return Rules(
        name="turbo" + suffix,
        pass_cycle=(L, R, A, K),
        first_trick_forbidden=HEARTS_MASK | (1 << QUEEN_SPADES) | (1 << JACK_DIAMONDS),
        first_trick_forced_order=(JACK_DIAMONDS, QUEEN_SPADES),
        scoring=(OMNIBUS_SCORING,),
        moon=MoonRule.NEGATE,
        ten_of_clubs_multiplier=2,
        chargeable=(1 << QUEEN_SPADES) | (1 << ACE_HEARTS) | (1 << JACK_DIAMONDS) | (1 << TEN_CLUBS),
        charging=order,
        charged_card_rule=True,
        nines=True,
        claims=True,
        claim_flow=ClaimFlow.CONCURRENT,  # as Turbo's own server: play goes on while claims are open
        end=EndRule.DEALS,
        deals=4,
        description=f"Turbo Hearts, {order.value} charging: 4 hands L/R/A/keeper, charge QS AH JD TC, "
        "nines, JD -10, TC x2, moon negates",
    )


TURBO_VARIANTS = {o: _turbo(o) for o in ChargingOrder}
TURBO = TURBO_VARIANTS[ChargingOrder.CLASSIC]


def _kierki_scoring() -> tuple[Scoring, ...]:
    hearts = {c: 1 for c in range(52) if HEARTS_MASK >> c & 1}
    queens = {c: 5 for c in range(52) if QUEENS_MASK >> c & 1}
    kings_jacks = {c: 2 for c in range(52) if (KINGS_MASK | JACKS_MASK) >> c & 1}
    seventh_last = ((7, 10), (13, 10))
    all_cards: dict[int, int] = {}
    for table in (hearts, queens, kings_jacks, {KING_HEARTS: 18}):
        for c, p in table.items():
            all_cards[c] = all_cards.get(c, 0) + p
    none = card_points({})
    return (
        Scoring(none, name="unused"),  # kinds are 1..7
        Scoring(none, per_trick=1, name="no tricks"),
        Scoring(card_points(hearts), name="no hearts"),
        Scoring(card_points(queens), name="no queens"),
        Scoring(card_points(kings_jacks), name="no kings or jacks"),
        Scoring(card_points({KING_HEARTS: 18}), name="no king of hearts"),
        Scoring(none, trick_number_points=seventh_last, name="no 7th or last trick"),
        Scoring(card_points(all_cards), per_trick=1, trick_number_points=seventh_last, name="robber"),
    )


KIERKI = Rules(
    name="kierki",
    pass_cycle=(H,),
    two_of_clubs_leads=False,
    first_trick_forbidden=0,
    hearts_must_be_broken=False,
    scoring=_kierki_scoring(),
    moon=MoonRule.NONE,
    early_end=True,
    end=EndRule.DEALS,
    deals=0,
    deal_kinds=(1, 2, 3, 4, 5, 6, 7),
    description="Kierki: 7 contracts (tricks, hearts, queens, kings/jacks, KH, 7th+last, robber), "
    "no passing, the given seat leads any card, a deal ends once its points are gone",
)

GYM = STANDARD.replace(
    name="gym",
    limit_inclusive=False,
    description="Gym Hearts: standard, game over when a total exceeds max_score (default 100)",
)

VARIANTS: dict[str, Rules] = {r.name: r for r in (STANDARD, OMNIBUS, TREND, KIERKI, GYM, *TURBO_VARIANTS.values())}


class UnknownVariant(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


def find_variant(name: str, **options: int) -> Rules:
    """The named variant; ``max_score=N`` sets the score limit (gym, standard, omnibus)."""
    key = name.strip().lower().replace("_", "-")
    if key not in VARIANTS:
        raise UnknownVariant(f"unknown variant {name!r}; known: {', '.join(sorted(VARIANTS))}")
    rules = VARIANTS[key]
    if "max_score" in options:
        if rules.end is not EndRule.SCORE:
            raise ValueError(f"variant {rules.name} ends after a number of deals, not at a score")
        if options["max_score"] <= 0:
            raise ValueError("max_score must be positive")
        rules = rules.replace(score_limit=options["max_score"])
    return rules


__all__ = ["GYM", "KIERKI", "OMNIBUS", "STANDARD", "TREND", "TURBO", "TURBO_VARIANTS", "VARIANTS", "find_variant"]
