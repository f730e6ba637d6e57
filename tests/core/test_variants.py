"""The named variants: lookup, options, and the knobs each one must carry."""

from __future__ import annotations

import pytest

from gamekit import cs
from moonshot.core.cards import HEARTS_MASK, QUEEN_SPADES
from moonshot.core.rules import ChargingOrder, EndRule, MoonRule, PassDirection
from moonshot.core.variants import GYM, KIERKI, STANDARD, TREND, TURBO_VARIANTS, VARIANTS, UnknownVariant, find_variant

ALL_NAMES = [
    "standard",
    "omnibus",
    "trend",
    "kierki",
    "gym",
    "turbo",
    "turbo-blind",
    "turbo-bridge",
    "turbo-chain",
    "turbo-blind-bridge",
    "turbo-blind-chain",
]


def test_every_variant_is_registered_under_its_name() -> None:
    assert sorted(VARIANTS) == sorted(ALL_NAMES)
    for name in ALL_NAMES:
        assert find_variant(name).name == name


def test_lookup_ignores_case_spaces_and_underscores() -> None:
    assert find_variant(" Turbo_Blind_Chain ") is VARIANTS["turbo-blind-chain"]


def test_unknown_variant_names_the_input_and_the_known_ones() -> None:
    with pytest.raises(UnknownVariant) as err:
        find_variant("spades")
    assert "'spades'" in str(err.value) and "standard" in str(err.value)


def test_gym_max_score_sets_a_limit_that_must_be_exceeded() -> None:
    rules = find_variant("gym", max_score=30)
    assert (rules.score_limit, rules.limit_inclusive) == (30, False)
    assert find_variant("gym").score_limit == 100
    assert find_variant("standard", max_score=50).limit_inclusive is True


@pytest.mark.parametrize("bad", [0, -5])
def test_max_score_must_be_positive(bad: int) -> None:
    with pytest.raises(ValueError, match="positive"):
        find_variant("gym", max_score=bad)


@pytest.mark.parametrize("name", ["trend", "kierki", "turbo"])
def test_max_score_is_refused_for_fixed_length_games(name: str) -> None:
    with pytest.raises(ValueError, match="number of deals"):
        find_variant(name, max_score=50)


def test_standard_and_gym_differ_only_in_name_limit_rule_and_text() -> None:
    assert GYM.replace(name="standard", limit_inclusive=True, description=STANDARD.description) == STANDARD


def test_trend_knobs() -> None:
    assert TREND.pass_cycle == (PassDirection.LEFT, PassDirection.RIGHT, PassDirection.ACROSS, PassDirection.HOLD)
    assert (TREND.moon, TREND.ten_of_clubs_multiplier, TREND.negative_scores, TREND.lowest_wins) == (
        MoonRule.TREND,
        2,
        True,
        False,
    )
    assert (TREND.exposable, TREND.end, TREND.deals) == (cs("AH"), EndRule.DEALS, 4)


@pytest.mark.parametrize("order", list(ChargingOrder))
def test_turbo_knobs_for_each_charging_order(order: ChargingOrder) -> None:
    rules = TURBO_VARIANTS[order]
    assert rules.charging is order
    assert rules.name == ("turbo" if order is ChargingOrder.CLASSIC else "turbo-" + order.value)
    assert rules.pass_cycle[3] is PassDirection.KEEPER and rules.pass_cycle[:3] == STANDARD.pass_cycle[:3]
    assert rules.chargeable == cs("QS AH JD TC")
    assert rules.first_trick_forbidden == HEARTS_MASK | cs("QS JD")
    assert rules.first_trick_forced_order[:2] == (cs("JD").bit_length() - 1, QUEEN_SPADES)
    assert rules.nines and rules.claims and rules.charged_card_rule
    assert (rules.moon, rules.end, rules.deals) == (MoonRule.NEGATE, EndRule.DEALS, 4)


def test_kierki_knobs() -> None:
    assert KIERKI.pass_cycle == (PassDirection.HOLD,)
    assert not KIERKI.two_of_clubs_leads and not KIERKI.hearts_must_be_broken
    assert KIERKI.first_trick_forbidden == 0 and KIERKI.early_end and KIERKI.moon is MoonRule.NONE
    assert KIERKI.deal_kinds == (1, 2, 3, 4, 5, 6, 7)
    assert [KIERKI.scoring_for(k).name for k in range(1, 8)][-1] == "robber"


@pytest.mark.parametrize("name", ALL_NAMES)
def test_every_variant_has_a_description(name: str) -> None:
    assert VARIANTS[name].description
