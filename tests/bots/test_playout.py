"""The lean deal simulator against the engine: same deal, same plays → same legal moves, trick
winners and deal points, in every variant (Turbo's nines and charged cards, Kierki's early end)."""

from __future__ import annotations

import random

import pytest

from moonshot.actions import Charge, Expose, Play
from moonshot.bots.playout import ROLLOUT_POLICIES, Deal, DealRules, start_of_play
from moonshot.bots.random import RandomBot
from moonshot.engine import Game, Phase
from moonshot.events import DealEnded, TrickEnded
from moonshot.variants import VARIANTS
from moonshot.views import seat_view


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
