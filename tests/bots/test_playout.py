"""The lean deal simulator against the engine: same deal, same plays → same legal moves, trick
winners and deal points, in every variant (Turbo's nines and charged cards, Kierki's early end)."""

from __future__ import annotations

import random

import pytest

from moonshot.bots.playout import ROLLOUT_POLICIES, Deal, DealRules, quick_deal, start_of_play, weighted_deal
from moonshot.bots.random import RandomBot
from moonshot.core.actions import Charge, Expose, Play
from moonshot.core.cards import ALL_CARDS, SUIT_MASKS
from moonshot.core.engine import Game, Phase
from moonshot.core.events import DealEnded, TrickEnded
from moonshot.core.variants import VARIANTS
from moonshot.core.views import seat_view


def _to_play(game: Game, rng: random.Random, charge_bias: bool) -> None:
    """Advance ``game`` through passing/charging/exposing with random choices."""
    bot = RandomBot()
    while game.phase is not Phase.PLAY:
        seat = game.to_act()[0]
        view = seat_view(game, seat)
        if charge_bias and game.phase in (Phase.CHARGE, Phase.EXPOSE):
            # charge/expose everything often, so the charged-card rule and doubling get exercised
            cls = Charge if game.phase is Phase.CHARGE else Expose
            full = max(view.legal, key=lambda a: a.cards.bit_count())  # type: ignore[attr-defined]
            action = full if rng.random() < 0.6 else cls(seat, 0)
        else:
            action = bot.act(view, rng)
        game.apply(action)


def _deal_from_game(game: Game) -> Deal:
    doubled = charged = 0
    for s in range(4):
        doubled |= game.charged[s] | game.exposed[s]
        charged |= game.charged[s]
    return start_of_play(game.rules, game.deal_kind, list(game.hands), game.turn, doubled, charged)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_same_plays_same_tricks_and_points(variant: str) -> None:
    base = VARIANTS[variant]
    rng = random.Random(variant)
    for seed in range(14):
        # every Kierki contract (a game's first deal is always the first kind in the cycle)
        kinds = base.deal_kinds
        rules = base.replace(deal_kinds=(kinds[seed % len(kinds)],))
        game = Game(rules, seed)
        deal_index = game.deal_index
        _to_play(game, rng, charge_bias=seed % 2 == 0)
        deal = _deal_from_game(game)
        assert deal.turn == game.turn
        while game.deal_index == deal_index and not game.over:
            assert not deal.done
            assert deal.turn == game.turn
            legal = game.legal_play_mask(game.turn)
            assert deal.legal() == legal
            card = rng.choice([c for c in range(52) if legal >> c & 1])
            trick_no = game.trick_no
            events = game.apply(Play.of(game.turn, card))
            deal.play(card)
            for e in events:
                if isinstance(e, TrickEnded):
                    assert e.trick == trick_no
                    assert deal.done or deal.turn == e.winner
                if isinstance(e, DealEnded):
                    assert deal.done
                    assert deal.scores() == e.points
                    assert tuple(deal.taken) == e.taken
        assert deal.done


def test_kierki_deals_end_early_once_the_points_are_gone() -> None:
    early = 0
    for seed in range(14):
        game = Game(VARIANTS["kierki"].replace(deal_kinds=(2 + seed % 6,)), seed)
        deal = _deal_from_game(game)
        rng = random.Random(seed)
        while not deal.done:
            legal = deal.legal()
            deal.play(rng.choice([c for c in range(52) if legal >> c & 1]))
        early += deal.played.bit_count() < 52
    assert early > 0


@pytest.mark.parametrize("policy", sorted(ROLLOUT_POLICIES))
@pytest.mark.parametrize("variant", ["standard", "turbo", "kierki", "trend", "omnibus"])
def test_rollout_policies_only_play_legal_cards(policy: str, variant: str) -> None:
    rules = VARIANTS[variant]
    pol = ROLLOUT_POLICIES[policy]
    rng = random.Random(1)
    for seed in range(20):
        game = Game(rules, seed)
        _to_play(game, rng, charge_bias=False)
        deal = _deal_from_game(game)
        while not deal.done:
            legal = deal.legal()
            c = pol(deal, deal.turn, legal, rng)
            assert legal >> c & 1
            deal.play(c)
        costs = deal.costs()
        sign = -1 if rules.negative_scores else 1
        assert tuple(sign * x for x in costs) == deal.scores()


def test_copy_is_independent() -> None:
    game = Game(VARIANTS["standard"], 3)
    _to_play(game, random.Random(0), charge_bias=False)
    deal = _deal_from_game(game)
    twin = deal.copy()
    deal.finish(ROLLOUT_POLICIES["greedy"], random.Random(0))
    assert twin.played == 0 and not twin.done
    assert twin.finish(ROLLOUT_POLICIES["greedy"], random.Random(0)) == deal.costs()


def test_deal_rules_are_cached_per_rules_and_kind() -> None:
    rules = VARIANTS["kierki"]
    assert DealRules.of(rules, 3) is DealRules.of(rules, 3)
    assert DealRules.of(rules, 3).bad_cards != DealRules.of(rules, 2).bad_cards


# ---------------------------------------------------------------------- the fast sampler
def _constrained_position(rng: random.Random) -> tuple[list[int], int, list[int], list[int], list[int]]:
    """A true deal with some cards gone, random voids the truth allows and random known cards."""
    deck = list(range(52))
    rng.shuffle(deck)
    truth = [sum(1 << c for c in deck[13 * s : 13 * s + 13]) for s in range(4)]
    gone = 0
    for s in range(1, 4):
        cards = [c for c in range(52) if truth[s] >> c & 1]
        for c in rng.sample(cards, rng.randrange(10)):
            gone |= 1 << c
            truth[s] &= ~(1 << c)
    voids = [0, 0, 0, 0]
    known = [0, 0, 0, 0]
    for s in range(1, 4):
        for suit in range(4):
            if not truth[s] & SUIT_MASKS[suit] and rng.random() < 0.7:
                voids[s] |= 1 << suit
        known[s] = sum(1 << c for c in range(52) if truth[s] >> c & 1 and rng.random() < 0.1)
    return truth, gone, voids, known, [h.bit_count() for h in truth]


@pytest.mark.parametrize("seed", range(300))
def test_quick_deal_respects_hand_sizes_voids_and_known_cards(seed: int) -> None:
    rng = random.Random(seed)
    truth, gone, voids, known, counts = _constrained_position(rng)
    unseen = ALL_CARDS & ~truth[0] & ~gone
    hands = quick_deal(0, truth[0], unseen, counts, known, voids, rng)
    if hands is None:  # a dead end 8 times over (the caller falls back to the exact sampler)
        return
    assert hands[0] == truth[0]
    assert hands[1] | hands[2] | hands[3] == unseen
    assert not (hands[1] & hands[2] or hands[1] & hands[3] or hands[2] & hands[3])
    for s in range(1, 4):
        assert hands[s].bit_count() == counts[s]
        assert hands[s] & known[s] == known[s]
        for suit in range(4):
            if voids[s] >> suit & 1:
                assert not hands[s] & SUIT_MASKS[suit]


@pytest.mark.parametrize("seed", range(200))
def test_weighted_deal_respects_hand_sizes_voids_and_known_cards_whatever_the_odds(seed: int) -> None:
    rng = random.Random(seed)
    truth, gone, voids, known, counts = _constrained_position(rng)
    unseen = ALL_CARDS & ~truth[0] & ~gone
    weights = [rng.choice((0.01, 0.5, 1.0, 7.0)) for _ in range(208)]
    hands = weighted_deal(0, truth[0], unseen, counts, known, voids, weights, rng)
    if hands is None:
        return
    assert hands[0] == truth[0] and hands[1] | hands[2] | hands[3] == unseen
    assert not (hands[1] & hands[2] or hands[1] & hands[3] or hands[2] & hands[3])
    for s in range(1, 4):
        assert hands[s].bit_count() == counts[s] and hands[s] & known[s] == known[s]
        for suit in range(4):
            if voids[s] >> suit & 1:
                assert not hands[s] & SUIT_MASKS[suit]


def test_weighted_deal_follows_its_odds() -> None:
    rng = random.Random(1)
    mine = SUIT_MASKS[3]
    unseen = ALL_CARDS & ~mine
    ones = [1.0] * 208
    assert weighted_deal(0, mine, unseen, [13, 13, 13, 12], [0] * 4, [0] * 4, ones, rng) is None
    assert weighted_deal(0, mine, unseen, [13] * 4, [0] * 4, [0, 1, 1, 1], ones, rng) is None
    # the seven of clubs four times likelier in seat 2 than in 1 or 3; a weight of 0 rules a seat out
    odds = ones[:]
    odds[4 * 5 + 2] = 4.0
    odds[4 * 6 + 3] = 0.0
    hits = [0, 0, 0, 0]
    n = 3000
    for _ in range(n):
        hands = weighted_deal(0, mine, unseen, [13] * 4, [0] * 4, [0] * 4, odds, rng)
        assert hands is not None and not hands[3] >> 6 & 1
        for s in range(1, 4):
            hits[s] += hands[s] >> 5 & 1
    assert abs(hits[2] / n - 4 / 6) < 0.04 and abs(hits[1] / n - 1 / 6) < 0.04
    # every seat with room at 0 for a card: no deal
    dead = ones[:]
    for s in range(4):
        dead[4 * 7 + s] = 0.0
    assert weighted_deal(0, mine, unseen, [13] * 4, [0] * 4, [0] * 4, dead, rng) is None


def test_quick_deal_refuses_an_inconsistent_position_and_deals_uniformly_without_voids() -> None:
    rng = random.Random(0)
    mine = SUIT_MASKS[3]
    assert quick_deal(0, mine, ALL_CARDS & ~mine, [13, 13, 13, 12], [0] * 4, [0] * 4, rng) is None
    assert quick_deal(0, mine, ALL_CARDS & ~mine, [13] * 4, [0] * 4, [0, 1, 1, 1], rng) is None
    # no voids: every unseen card lands in each seat in proportion to its hand size (13:13:13 here)
    hits = [0, 0, 0, 0]
    n = 3000
    for _ in range(n):
        hands = quick_deal(0, mine, ALL_CARDS & ~mine, [13] * 4, [0] * 4, [0] * 4, rng)
        assert hands is not None
        for s in range(1, 4):
            hits[s] += hands[s] >> 5 & 1  # the seven of clubs
    for s in range(1, 4):
        assert abs(hits[s] / n - 1 / 3) < 0.04


@pytest.mark.parametrize("variant", ["standard", "omnibus", "trend", "turbo", "kierki"])
def test_greedy_rollouts_in_the_kernel_give_the_python_costs(variant: str) -> None:
    """Once the rules kernel is loaded, the greedy rollouts of search (and of the trees) run there: the same costs as
    ``Deal.finish`` from any position, and no draw from the decision's rng."""
    from moonshot import kernel
    from moonshot.bots.playout import finish_costs, greedy_policy, kernel_ready, start_of_play

    kernel.warm_up()
    rules = VARIANTS[variant]
    for seed in range(30):
        rng = random.Random(seed)
        deck = list(range(52))
        rng.shuffle(deck)
        hands = [sum(1 << c for c in deck[13 * s : 13 * s + 13]) for s in range(4)]
        deal = start_of_play(rules, rules.deal_kinds[seed % len(rules.deal_kinds)], hands, seed % 4)
        for _ in range(rng.randrange(45)):
            if deal.done:
                break
            legal = deal.legal()
            deal.play(rng.choice([c for c in range(52) if legal >> c & 1]))
        assert kernel_ready(rules) == kernel.NUMBA
        state = rng.getstate()
        got = finish_costs(deal.copy(), greedy_policy, rng)
        assert rng.getstate() == state
        assert got == deal.finish(greedy_policy, rng)
