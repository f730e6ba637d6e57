"""PimcBot: a UCT tree per sampled world; legal in every variant, deterministic with a playout budget."""

from __future__ import annotations

import random

import pytest

from moonshot.bots.base import Bot
from moonshot.bots.heuristic import HeuristicBot
from moonshot.bots.pimc import PimcBot
from moonshot.bots.registry import make_bot
from moonshot.core.actions import Play
from moonshot.core.cards import format_card, parse_card, parse_card_set
from moonshot.core.engine import DealSpec, Game
from moonshot.core.rules import EndRule, PassDirection
from moonshot.core.variants import STANDARD, VARIANTS
from moonshot.core.views import seat_view


def test_registered_with_its_options() -> None:
    bot = make_bot("pimc", simulations=50, worlds=5)
    assert isinstance(bot, PimcBot) and isinstance(bot, Bot) and bot.name == "pimc"
    assert bot.worlds == 5
    with pytest.raises(ValueError):
        PimcBot(worlds=0)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_plays_a_legal_deal_in_every_variant(variant: str) -> None:
    rules = VARIANTS[variant].replace(end=EndRule.DEALS, deals=1)
    game = Game(rules, 5)
    bots: list[Bot] = [PimcBot(simulations=40, worlds=4), HeuristicBot(), PimcBot(simulations=40), HeuristicBot()]
    rng = random.Random(1)
    for _ in range(400):
        if game.over:
            break
        seat = game.to_act()[0]
        view = seat_view(game, seat)
        action = bots[seat].act(view, rng)
        assert action in view.legal, (variant, action)
        game.apply(action)
    assert game.over


def test_deterministic_with_simulations() -> None:
    game = Game(STANDARD, 9)
    bots = [HeuristicBot()] * 4
    rng = random.Random(0)
    while game.phase.value != "play" or game.trick_no < 3:
        s = game.to_act()[0]
        game.apply(bots[s].act(seat_view(game, s), rng))
    view = seat_view(game, game.to_act()[0])
    a = PimcBot(simulations=120, worlds=6).act(view, random.Random(3))
    b = PimcBot(simulations=120, worlds=6).act(view, random.Random(3))
    assert a == b and a in view.legal


def test_dumps_the_queen_on_a_sure_trick_when_void() -> None:
    hands = (
        parse_card_set(["QS", "2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "10D", "JD", "QD", "KD"]),
        parse_card_set(["2C", "3C", "4C", "5C", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "10S"]),
        parse_card_set(["6C", "7C", "8C", "9C", "10C", "JS", "KS", "AS", "JH", "QH", "KH", "AH", "AD"]),
        parse_card_set(["AC", "KC", "QC", "JC", "2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "10H"]),
    )
    rules = STANDARD.replace(pass_cycle=(PassDirection.HOLD,))
    game = Game(rules, 0, [DealSpec(hands)] * 8)
    for text in ["2C", "10C", "AC", "2D", "KC"]:
        game.apply(Play.of(game.turn, parse_card(text)))
    view = seat_view(game, 0)
    action = PimcBot(simulations=200, worlds=10).act(view, random.Random(0))
    assert isinstance(action, Play) and format_card(action.card) == "QS"


def test_prior_grows_the_roots_over_the_networks_best_cards_only() -> None:
    """``prior=K``: the trees' roots hold only the learned network's K best cards, so every card
    played is one of them (``prior=1``: always its best); the default searches every card."""
    assert PimcBot().prior_top == 0 and make_bot("pimc", prior=3).prior_top == 3  # type: ignore[attr-defined]
    for seed in range(6):
        game = Game(STANDARD.replace(end=EndRule.DEALS, deals=1), seed)
        rng = random.Random(seed)
        checked = 0
        while not game.over:
            seat = game.to_act()[0]
            view = seat_view(game, seat)
            if view.phase.value == "play" and view.legal_plays.bit_count() > 3:
                bot = PimcBot(simulations=30, worlds=3, prior=1)
                (best,) = bot._prior_cards(view, [c for c in range(52) if view.legal_plays >> c & 1])
                action = bot.act(view, rng)
                assert isinstance(action, Play) and action.card == best
                checked += 1
            else:
                action = HeuristicBot().act(view, rng)
            game.apply(action)
        assert checked
