"""Rules as data: the knobs' helpers and score_deal, checked against hand-computed scores."""

from __future__ import annotations

import pytest

from gamekit import cs
from moonshot.core.cards import HEARTS_MASK, QUEEN_SPADES
from moonshot.core.rules import (
    HEARTS_AND_QUEEN,
    ChargingOrder,
    MoonRule,
    PassDirection,
    Rules,
    Scoring,
    card_points,
    score_deal,
)
from moonshot.core.variants import KIERKI, OMNIBUS, STANDARD, TREND, TURBO

ALL_HEARTS = "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH"


def score(
    rules: Rules,
    n: str = "",
    e: str = "",
    s: str = "",
    w: str = "",
    doubled: str = "",
    kind: int = 0,
    trick_numbers: tuple[tuple[int, ...], ...] = ((), (), (), ()),
    tricks: tuple[int, int, int, int] = (0, 0, 0, 0),
) -> tuple[tuple[int, ...], int | None]:
    taken = [cs(x) for x in (n, e, s, w)]
    numbers = [sum(1 << k for k in ks) for ks in trick_numbers]
    return score_deal(rules, kind, taken, numbers, tricks, cs(doubled))


# ---------------------------------------------------------------- standard and omnibus
def test_standard_plain_deal() -> None:
    # N 5 hearts = 5; E QS 13 + 3 hearts = 16; S 5 hearts = 5; W nothing. 5 + 16 + 5 = 26.
    pts, moon = score(STANDARD, n="2H 3H 4H 5H 6H 2C", e="QS 7H 8H 9H", s="TH JH QH KH AH", w="AS KS")
    assert (pts, moon) == ((5, 16, 5, 0), None)


def test_standard_moon_gives_the_others_26() -> None:
    # N took all 13 hearts and QS: N 0, each other seat +26 (total 78).
    pts, moon = score(STANDARD, n=ALL_HEARTS + " QS 2C", e="3C")
    assert (pts, moon) == ((0, 26, 26, 26), 0)


def test_all_hearts_without_the_queen_is_no_moon() -> None:
    # W 13 hearts = 13, E QS = 13.
    assert score(STANDARD, w=ALL_HEARTS, e="QS") == ((0, 13, 0, 13), None)


def test_shooter_minus_knob() -> None:
    # S shoots: S -26, the others unchanged (0).
    rules = STANDARD.replace(moon=MoonRule.SHOOTER_MINUS)
    assert score(rules, s=ALL_HEARTS + " QS") == ((0, 0, -26, 0), 2)


def test_moon_points_knob_and_no_moon_rule() -> None:
    assert score(STANDARD.replace(moon_points=13), e=ALL_HEARTS + " QS") == ((13, 0, 13, 13), 1)
    # no moon rule: the 26 points stay with the taker
    assert score(STANDARD.replace(moon=MoonRule.NONE), e=ALL_HEARTS + " QS") == ((0, 26, 0, 0), None)


def test_omnibus_jack_of_diamonds_is_minus_ten() -> None:
    # N 5 hearts - 10 (JD) = -5; E QS + 3 hearts = 16; S 5 hearts = 5; W 0.
    pts, _ = score(OMNIBUS, n="2H 3H 4H 5H 6H JD", e="QS 7H 8H 9H", s="TH JH QH KH AH")
    assert pts == (-5, 16, 5, 0)


def test_omnibus_moon_with_the_jack() -> None:
    # N shoots and holds JD: moon part 0, JD -10 -> N -10; others +26 each.
    assert score(OMNIBUS, n=ALL_HEARTS + " QS JD") == ((-10, 26, 26, 26), 0)
    # the shooter without JD: E's JD still counts -10 for E: 26 - 10 = 16
    assert score(OMNIBUS, n=ALL_HEARTS + " QS", e="JD") == ((0, 16, 26, 26), 0)


# ---------------------------------------------------------------- trend
def test_trend_plain_deal_scores_negative() -> None:
    # N 5 hearts -> -5; E QS + 3 hearts -> -16; S 5 hearts -> -5; W took TC but 0 x 2 = 0.
    pts, _ = score(TREND, n="2H 3H 4H 5H 6H", e="QS 7H 8H 9H", s="TH JH QH KH AH", w="TC")
    assert pts == (-5, -16, -5, 0)


def test_trend_exposed_ace_of_hearts_doubles_every_heart() -> None:
    # hearts x2: N 5*2 = -10; E 13 + 3*2 = -19; S took TC: (5*2) * 2 = -20; W 0.
    pts, _ = score(TREND, n="2H 3H 4H 5H 6H", e="QS 7H 8H 9H", s="TH JH QH KH AH TC", doubled="AH")
    assert pts == (-10, -19, -20, 0)


def test_trend_ten_of_clubs_doubles_the_takers_deal_score_last() -> None:
    # E: (QS 13 + 3 hearts) = 16, x2 = 32 -> -32
    pts, _ = score(TREND, n="2H 3H 4H 5H 6H", e="QS 7H 8H 9H TC", s="TH JH QH KH AH")
    assert pts == (-5, -32, -5, 0)


def test_trend_moon_is_positive_times_four() -> None:
    # N: 13 hearts + 13 = 26, x4 = +104; others 0.
    assert score(TREND, n=ALL_HEARTS + " QS") == ((104, 0, 0, 0), 0)
    # AH exposed: 26 + 13 = 39, x4 = 156; N also took TC: x2 = +312.
    assert score(TREND, n=ALL_HEARTS + " QS TC", doubled="AH") == ((312, 0, 0, 0), 0)


# ---------------------------------------------------------------- turbo
def test_turbo_plain_hand() -> None:
    # N 4 hearts - 10 (JD) = -6; E 13 + 5 hearts = 18; S 4 hearts, TC: 4*2 = 8; W 0.
    pts, _ = score(TURBO, n="2H 3H 4H 5H JD", e="QS 6H 7H 8H 9H TH", s="JH QH KH AH TC")
    assert pts == (-6, 18, 8, 0)


def test_turbo_every_card_charged_doubles_its_own_effect() -> None:
    # AH: hearts x2; QS: 26; JD: -20; TC: x4.
    # N 4*2 - 20 = -12; E 26 + 5*2 = 36; S (4*2) * 4 = 32; W 0.
    pts, _ = score(TURBO, n="2H 3H 4H 5H JD", e="QS 6H 7H 8H 9H TH", s="JH QH KH AH TC", doubled="AH QS JD TC")
    assert pts == (-12, 36, 32, 0)


def test_turbo_ten_of_clubs_multiplies_a_negative_score() -> None:
    # W: JD -10, TC x2 -> -20; charged TC x4 -> -40.
    assert score(TURBO, w="JD TC")[0] == (0, 0, 0, -20)
    assert score(TURBO, w="JD TC", doubled="TC")[0] == (0, 0, 0, -40)
    assert score(TURBO, w="JD TC", doubled="TC JD")[0] == (0, 0, 0, -80)


def test_turbo_moon_negates_then_jack_then_ten() -> None:
    # E: hearts 13 + QS 13 = 26, negated -26; JD -10 -> -36; TC x2 -> -72.
    assert score(TURBO, e=ALL_HEARTS + " QS JD TC") == ((0, -72, 0, 0), 1)
    # all charged: (26 + 26) -> -52; JD -20 -> -72; TC x4 -> -288.
    assert score(TURBO, e=ALL_HEARTS + " QS JD TC", doubled="AH QS JD TC") == ((0, -288, 0, 0), 1)
    # moon while another seat takes TC (x2 of 0) and JD (-10 x 2 = -20)
    assert score(TURBO, e=ALL_HEARTS + " QS", n="JD TC") == ((-20, -26, 0, 0), 1)


# ---------------------------------------------------------------- kierki contracts
def test_kierki_contract_totals() -> None:
    # 13 tricks; 13 hearts; 4 queens x5; 8 kings/jacks x2; KH 18; 7th + 13th x10; robber = all.
    totals = [KIERKI.scoring_for(k).total for k in range(1, 8)]
    assert totals == [13, 13, 20, 16, 18, 20, 13 + 13 + 20 + 16 + 18 + 20]
    assert totals[-1] == 100


KIERKI_TAKEN = {
    "n": "2H 3H QC QD KC",  # 2 hearts, 2 queens, 1 king
    "e": "KH JD JS",  # KH (a heart, a king), 2 jacks
    "s": "QH QS " + " ".join(r + "H" for r in "456789TJA"),  # 10 hearts (QH, JH among them), 2 queens, a jack
    "w": "KS KD JC",  # 2 kings, 1 jack
}


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        (1, (4, 3, 3, 3)),  # one per trick
        (2, (2, 1, 10, 0)),  # one per heart
        (3, (10, 0, 10, 0)),  # five per queen: N QC QD; S QH QS
        (4, (2, 6, 2, 6)),  # two per K/J: N KC; E KH JD JS; S JH; W KS KD JC
        (5, (0, 18, 0, 0)),  # KH
        (6, (10, 0, 0, 10)),  # N took trick 7, W took trick 13
    ],
)
def test_kierki_contracts(kind: int, expected: tuple[int, ...]) -> None:
    pts, moon = score(
        KIERKI,
        kind=kind,
        tricks=(4, 3, 3, 3),
        trick_numbers=((7,), (), (), (13,)),
        **KIERKI_TAKEN,
    )
    assert (pts, moon) == (expected, None)


def test_kierki_robber_adds_every_contract() -> None:
    # N: 4 tricks + 2 hearts + 10 queens + 2 king + 10 (7th) = 28
    # E: 3 tricks + 1 heart + 6 (KH, JD, JS) + 18 (KH) = 28
    # S: 3 tricks + 10 hearts + 10 queens + 2 (JH) = 25
    # W: 3 tricks + 6 (KS, KD, JC) + 10 (13th) = 19;  sum 28 + 28 + 25 + 19 = 100
    pts, _ = score(KIERKI, kind=7, tricks=(4, 3, 3, 3), trick_numbers=((7,), (), (), (13,)), **KIERKI_TAKEN)
    assert pts == (28, 28, 25, 19)
    assert sum(pts) == 100


def test_kierki_has_no_moon() -> None:
    assert score(KIERKI, kind=2, n=ALL_HEARTS + " QS") == ((13, 0, 0, 0), None)


# ---------------------------------------------------------------- the knobs' helpers
def test_pass_cycle_and_offsets() -> None:
    assert [STANDARD.pass_direction(d) for d in range(6)] == [
        PassDirection.LEFT,
        PassDirection.RIGHT,
        PassDirection.ACROSS,
        PassDirection.HOLD,
        PassDirection.LEFT,
        PassDirection.RIGHT,
    ]
    assert TURBO.pass_direction(3) is PassDirection.KEEPER
    assert [d.offset for d in PassDirection] == [1, 3, 2, 0, 0]


@pytest.mark.parametrize(
    ("order", "blind", "in_seat_order", "chain"),
    [
        (ChargingOrder.CLASSIC, False, False, False),
        (ChargingOrder.BLIND, True, False, False),
        (ChargingOrder.BRIDGE, False, True, False),
        (ChargingOrder.CHAIN, False, True, True),
        (ChargingOrder.BLIND_BRIDGE, True, True, False),
        (ChargingOrder.BLIND_CHAIN, True, True, True),
    ],
)
def test_charging_order_properties(order: ChargingOrder, blind: bool, in_seat_order: bool, chain: bool) -> None:
    assert (order.blind, order.in_seat_order, order.chain) == (blind, in_seat_order, chain)


def test_scoring_needs_52_entries_and_reports_its_point_cards() -> None:
    with pytest.raises(ValueError, match="52"):
        Scoring((1, 2, 3))
    assert HEARTS_AND_QUEEN.cards_with_points == HEARTS_MASK | 1 << QUEEN_SPADES
    assert HEARTS_AND_QUEEN.total == 26
    assert card_points({0: 5})[:2] == (5, 0)


def test_single_scoring_serves_every_kind_and_replace_keeps_the_rest() -> None:
    assert STANDARD.scoring_for(5) is HEARTS_AND_QUEEN
    r = STANDARD.replace(score_limit=50)
    assert (r.score_limit, r.pass_cycle, STANDARD.score_limit) == (50, STANDARD.pass_cycle, 100)
    assert TURBO.doubling_cards == cs("QS AH JD TC")
    assert TREND.doubling_cards == cs("AH")
