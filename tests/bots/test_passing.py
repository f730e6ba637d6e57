"""Passing by search: candidates, what a pass does to the hands, and valuing passes by playouts
or by the value network."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moonshot.bots import value as value_module
from moonshot.bots.passing import (
    PASS_BATCH_WORLDS,
    after_passing,
    choose_pass,
    heuristic_pass,
    pass_candidates,
)
from moonshot.bots.registry import make_bot
from moonshot.bots.search import SearchBot
from moonshot.core.actions import Pass
from moonshot.core.cards import ALL_CARDS, parse_card_set
from moonshot.core.engine import Game, Phase
from moonshot.core.rules import PassDirection
from moonshot.core.variants import find_variant
from moonshot.core.views import seat_view


def _hands(rng: random.Random) -> list[int]:
    deck = list(range(52))
    rng.shuffle(deck)
    return [sum(1 << c for c in deck[13 * s : 13 * s + 13]) for s in range(4)]


def test_candidates_are_three_of_the_hand_and_the_most_dangerous_come_first() -> None:
    rules = find_variant("standard")
    hand = parse_card_set(["QS", "KS", "AS", "2C", "3C", "4C", "5D", "6D", "7D", "2H", "3H", "4H", "5H"])
    cands = pass_candidates(hand, rules, 10)
    assert cands[0] == parse_card_set(["QS", "KS", "AS"]) == heuristic_pass(hand, rules)
    assert len(set(cands)) == len(cands) == 10
    assert all(c & hand == c and c.bit_count() == 3 for c in cands)


def test_more_candidates_widen_the_pool_past_the_seven_most_dangerous_cards() -> None:
    rules = find_variant("standard")
    hand = parse_card_set(["QS", "KS", "AS", "2C", "3C", "4C", "5D", "6D", "7D", "2H", "3H", "4H", "5H"])
    assert pass_candidates(hand, rules, 10) == pass_candidates(hand, rules, 35)[:10]  # (the default's as before)
    every = pass_candidates(hand, rules, 286)
    assert len(set(every)) == len(every) == 286  # every pass of three of thirteen cards
    assert every[0] == heuristic_pass(hand, rules)
    assert len(pass_candidates(hand, rules, 1000)) == 286


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from([PassDirection.LEFT, PassDirection.RIGHT, PassDirection.ACROSS]),
    st.booleans(),
)
def test_a_pass_moves_exactly_the_passed_cards(seed: int, direction: PassDirection, pile: bool) -> None:
    rng = random.Random(seed)
    rules = find_variant("standard")
    hands = _hands(rng)
    passes = [heuristic_pass(h, rules) for h in hands]
    order = rng.sample(range(12), 12) if pile else []
    after = after_passing(hands, passes, direction, order, 3)
    assert [h.bit_count() for h in after] == [13] * 4
    assert after[0] | after[1] | after[2] | after[3] == ALL_CARDS
    for s in range(4):
        kept = hands[s] & ~passes[s]
        assert after[s] & kept == kept, "a seat keeps what it did not pass"
        assert (after[s] & ~kept).bit_count() == 3
        if not pile:
            assert after[(s + direction.offset) % 4] & passes[s] == passes[s], "the receiver holds the pass"
    if pile:
        pooled = passes[0] | passes[1] | passes[2] | passes[3]
        assert all(after[s] & ~(hands[s] & ~passes[s]) & ~pooled == 0 for s in range(4)), "draws come from the pool"


def _pass_view(seed: int = 5) -> Any:
    game = Game(find_variant("standard"), seed)
    assert game.phase is Phase.PASS
    return seat_view(game, 0)


def _pass(bot: SearchBot, seed: int = 5) -> int:
    action = bot.act(_pass_view(seed), random.Random(7))
    assert isinstance(action, Pass)
    return action.cards


def test_the_network_values_every_candidate_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    batches: list[int] = []
    real = value_module.leaf_costs

    def spy(net: Any, deals: Any) -> Any:
        batches.append(len(deals))
        for d in deals:  # a leaf is a position between tricks: the first trick has been played
            assert not d.trick and d.trick_no == 2
            assert all(h.bit_count() == 12 for h in d.hands)
        return real(net, deals)

    monkeypatch.setattr(value_module, "leaf_costs", spy)
    view = _pass_view()
    cands = pass_candidates(view.hand, view.rules, 10)
    bot = SearchBot(simulations=200, pass_value="network")
    chosen = _pass(bot)
    assert chosen in cands and chosen & view.hand == chosen
    assert sum(batches) == 200  # 20 worlds of 10 candidates, each valued once
    assert max(batches) <= PASS_BATCH_WORLDS * len(cands)


def test_without_a_network_the_pass_is_the_playouts_one(monkeypatch: pytest.MonkeyPatch) -> None:
    def never(net: Any, deals: Any) -> Any:
        raise AssertionError("no network was asked for")

    monkeypatch.setattr(value_module, "leaf_costs", never)
    for seed in (1, 5, 9):
        playouts = _pass(SearchBot(simulations=100), seed)
        assert _pass(SearchBot(simulations=100, pass_value="network", value="off"), seed) == playouts


def test_the_network_pass_is_seeded_and_goes_through_the_spec() -> None:
    a = _pass(SearchBot(simulations=150, pass_value="network"))
    assert _pass(SearchBot(simulations=150, pass_value="network")) == a
    bot = make_bot("search", simulations=150, pass_value="network")
    assert isinstance(bot, SearchBot) and bot.pass_value == "network"
    assert _pass(bot) == a


def test_an_unknown_valuation_is_refused() -> None:
    with pytest.raises(ValueError, match="pass_value"):
        SearchBot(simulations=10, pass_value="oracle")


def test_choose_pass_stops_when_the_budget_says_so() -> None:
    view = _pass_view()
    cands = pass_candidates(view.hand, view.rules, 4)
    calls: list[int] = []

    def spent(done: int) -> bool:
        calls.append(done)
        return done >= 12

    costs = (1.0, 2.0, 3.0, 4.0)
    chosen = choose_pass(view, cands, spent, lambda deal, rng: costs, random.Random(1))
    assert calls == [4, 8, 12]
    assert chosen == cands[0]  # every candidate equal: the best-ranked one


def test_a_world_that_is_not_a_deal_is_refused_not_played() -> None:
    view = _pass_view()
    cands = pass_candidates(view.hand, view.rules, 4)
    others = [h for s, h in enumerate(_hands(random.Random(1))) if s != view.seat]  # (another deal)
    bad = [view.hand if s == view.seat else others[min(s, 2)] for s in range(4)]
    for hands in (bad, [0, 0, 0, 0]):
        with pytest.raises(ValueError, match="whole deck"):
            choose_pass(
                view,
                cands,
                lambda done: True,
                lambda d, r: (0.0,) * 4,
                random.Random(1),
                deal_hands=lambda r, h=hands: h,
            )
