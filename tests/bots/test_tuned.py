"""Bots keyed by rules, not names: networks and tuned settings follow the rules' play fields."""

from __future__ import annotations

import dataclasses
import io
import random
from typing import Any

import pytest

np = pytest.importorskip("numpy")

from moonshot.bots.belief import BeliefNet, default_belief  # noqa: E402
from moonshot.bots.heuristic import HeuristicBot  # noqa: E402
from moonshot.bots.learned import LearnedBot, Policy, default_policy, load_policy  # noqa: E402
from moonshot.bots.pimc import PimcBot  # noqa: E402
from moonshot.bots.search import PRIOR_WEIGHT, TIMED_PRIOR_WEIGHT, SearchBot  # noqa: E402
from moonshot.bots.tuned import (  # noqa: E402
    FAST_SAMPLER_RULES,
    NOT_PLAY_FIELDS,
    PRIOR_WEIGHT_RULES,
    SHIPPED,
    STANDARD_FIELDS,
    TREND_FIELDS,
    TUNED_RULES,
    RulesSet,
    endgame_cards,
    fingerprint,
    play_fields,
    rules_of,
)
from moonshot.bots.value import ValueNet, default_value  # noqa: E402
from moonshot.core.engine import Game, Phase  # noqa: E402
from moonshot.core.rules import Rules  # noqa: E402
from moonshot.core.variants import STANDARD, TREND, VARIANTS, find_variant  # noqa: E402
from moonshot.core.views import SeatView, seat_view  # noqa: E402
from moonshot.play.arena import deal_rules  # noqa: E402
from moonshot.play.sim import play_game_actions  # noqa: E402

RENAMED = dataclasses.replace(STANDARD, name="renamed", description="a copy of standard")
# standard's name, but another game: the queen breaks hearts
OTHER = STANDARD.replace(queen_breaks_hearts=True)


def test_the_table_holds_the_fields_of_the_rules_it_was_measured_in() -> None:
    assert play_fields(STANDARD) == STANDARD_FIELDS == play_fields(VARIANTS["gym"]) == {}
    assert play_fields(TREND) == TREND_FIELDS
    assert fingerprint(STANDARD) == "44136fa355b3678a" and fingerprint(TREND) == "d9c3ad42408706b6"
    # the shipped networks and search's tuned defaults, by variant (what the name sets said before)
    expected = {
        "learned.npz": {"standard", "gym", "trend"},
        "prior.npz": {"standard", "gym", "trend"},
        "value.npz": {"standard", "gym", "trend"},
        "belief.npz": {"standard", "gym"},
    }
    for resource, names in expected.items():
        assert {n for n, r in VARIANTS.items() if r in SHIPPED[resource]} == names
    assert {n for n, r in VARIANTS.items() if r in TUNED_RULES} == {"standard", "gym", "trend"}
    assert {n for n, r in VARIANTS.items() if r in PRIOR_WEIGHT_RULES} == {"standard", "gym", "trend"}
    assert {n for n, r in VARIANTS.items() if r in FAST_SAMPLER_RULES} == {"standard", "gym"}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_a_variant_keeps_its_fingerprint_in_every_arena_deal_and_under_any_name(name: str) -> None:
    rules = VARIANTS[name]
    same = [
        dataclasses.replace(rules, name="renamed", description="", extra={"x": "y"}),
        *(deal_rules(rules, i, passing) for i in range(8) for passing in (True, False)),
    ]
    if name in ("standard", "gym", "omnibus"):
        same.append(find_variant(name, max_score=50))
    assert {fingerprint(r) for r in same} == {fingerprint(rules)}
    others = {fingerprint(r) for n, r in VARIANTS.items() if play_fields(r) != play_fields(rules)}
    assert fingerprint(rules) not in others


def test_only_the_documented_fields_are_left_out() -> None:
    fields = {f.name for f in dataclasses.fields(Rules)}
    assert fields >= NOT_PLAY_FIELDS
    # every other field counts: changing it changes the fingerprint
    changed = {
        "pass_count": 4,
        "two_of_clubs_leads": False,
        "first_trick_forbidden": 0,
        "first_trick_forced_order": (1,),
        "hearts_must_be_broken": False,
        "queen_breaks_hearts": True,
        "scoring": TREND.scoring + VARIANTS["omnibus"].scoring,
        "moon": TREND.moon,
        "moon_points": 20,
        "ten_of_clubs_multiplier": 2,
        "negative_scores": True,
        "lowest_wins": False,
        "exposable": 1,
        "chargeable": 1,
        "charging": VARIANTS["turbo"].charging,
        "charged_card_rule": True,
        "nines": True,
        "claims": True,
        "claim_flow": VARIANTS["turbo"].claim_flow,
        "early_end": True,
    }
    assert set(changed) == fields - NOT_PLAY_FIELDS
    for key, value in changed.items():
        assert fingerprint(STANDARD.replace(**{key: value})) != fingerprint(STANDARD), key


def _one_deal(rules: Rules, seed: int, bots: list[Any]) -> list[Any]:
    _, actions = play_game_actions(deal_rules(rules, seed, True), seed, ("a", "b", "c", "d"), bots=bots)
    return actions


def _field() -> list[Any]:
    # search with the learned prior, the value network and the belief network on; the learned bot; pimc
    return [
        SearchBot(simulations=40, belief="default"),
        LearnedBot(),
        PimcBot(simulations=20),
        SearchBot(simulations=40),
    ]


@pytest.mark.parametrize("seed", [0, 1])
def test_standard_renamed_plays_move_for_move_like_standard(seed: int) -> None:
    assert RENAMED in TUNED_RULES and RENAMED in default_policy().rules
    assert _one_deal(RENAMED, seed, _field()) == _one_deal(STANDARD, seed, _field())


def test_trend_renamed_plays_like_trend() -> None:
    renamed = dataclasses.replace(TREND, name="my-trend")
    bots = [SearchBot(simulations=30), LearnedBot(), SearchBot(simulations=30), LearnedBot()]
    again = [SearchBot(simulations=30), LearnedBot(), SearchBot(simulations=30), LearnedBot()]
    assert _one_deal(renamed, 3, bots) == _one_deal(TREND, 3, again)


def _play_view(rules: Rules, seed: int = 5) -> SeatView:
    """A card decision of the second trick or later with several legal cards."""
    game = Game(rules, seed)
    rng = random.Random(seed)
    bots = [HeuristicBot() for _ in range(4)]
    while True:
        seat = game.to_act()[0]
        view = seat_view(game, seat)
        if view.phase is Phase.PLAY and view.trick_no >= 2 and view.legal_plays.bit_count() >= 3:
            return view
        game.apply(bots[seat].act(view, rng))


def test_rules_with_other_play_fields_get_no_network_and_no_tuning_even_named_standard() -> None:
    assert OTHER.name == "standard" and OTHER not in TUNED_RULES
    bot = SearchBot(simulations=40, belief="default")
    for rules, tuned in ((STANDARD, True), (RENAMED, True), (OTHER, False)):
        view = _play_view(rules)
        cards = sorted(c for c in range(52) if view.legal_plays >> c & 1)
        assert (bot._prior_scores(view, cards) is not None) is tuned
        assert (bot._value_net(view) is not None) is tuned
        assert (bot._belief_net(view) is not None) is tuned
        assert bot._prior_weight(view) == (PRIOR_WEIGHT if tuned else 0.0)
    # on a time budget the weight is TIMED_PRIOR_WEIGHT in standard's rules, by their fields
    timed = SearchBot(think_ms=20)
    weights = ((STANDARD, TIMED_PRIOR_WEIGHT), (RENAMED, TIMED_PRIOR_WEIGHT), (TREND, PRIOR_WEIGHT), (OTHER, 0.0))
    for rules, weight in weights:
        assert timed._prior_weight(_play_view(rules)) == weight
    assert SearchBot(think_ms=20, prior_weight=4)._prior_weight(_play_view(STANDARD)) == 4
    # the learned bot plays the heuristic's card where its network does not play
    learned, heuristic = LearnedBot(), HeuristicBot()
    for seed in range(6):
        view = _play_view(OTHER, seed)
        assert learned._play(view) == heuristic._play(view)


def test_a_weights_file_records_its_rules_and_the_bot_follows_them() -> None:
    policy = default_policy()
    # the shipped file records none: the compatibility table gives its rules
    assert policy.rules == SHIPPED["learned.npz"]
    kierki = VARIANTS["kierki"]
    mine = dataclasses.replace(policy, rules=RulesSet.of(kierki, OTHER))
    buf = io.BytesIO()
    np.savez(buf, **mine.to_arrays())
    buf.seek(0)
    back = load_policy(buf)
    assert back.rules == mine.rules and STANDARD not in back.rules
    assert dataclasses.replace(kierki, name="renamed") in back.rules and OTHER in back.rules
    bot, heuristic = LearnedBot(policy=back), HeuristicBot()
    view = _play_view(STANDARD)
    assert bot._play(view) == heuristic._play(view)  # not its rules: the heuristic's card
    assert LearnedBot(policy=back, everywhere=True)._play(view) in range(52)
    for net, cls in ((default_value(), ValueNet), (default_belief(), BeliefNet)):
        arrays = net.to_arrays()
        assert cls.from_arrays(arrays).rules == net.rules
        assert cls.from_arrays({k: v for k, v in arrays.items() if k != "rules"}).rules == net.rules
    with pytest.raises(ValueError, match="rules entry"):
        rules_of({"rules": np.array("{not json")}, "learned.npz")


def test_policy_rules_default_to_the_shipped_table() -> None:
    p = Policy(np.zeros(1), np.ones(1), ())
    assert p.rules == SHIPPED["learned.npz"]


def test_the_exact_endgame_starts_by_the_rules_fields_and_the_budget() -> None:
    # on a time budget from four cards in standard's rules (a renamed copy too), from two on a
    # budget of playouts, where a solve counts as one playout; Trend two, other rules three
    for rules in (STANDARD, find_variant("gym"), RENAMED):
        assert (endgame_cards(rules), endgame_cards(rules, timed=False)) == (4, 2)
    assert (endgame_cards(TREND), endgame_cards(TREND, timed=False)) == (2, 2)
    for name in ("turbo", "kierki", "omnibus"):
        assert (endgame_cards(find_variant(name)), endgame_cards(find_variant(name), timed=False)) == (3, 3)
