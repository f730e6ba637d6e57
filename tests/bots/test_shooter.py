"""ShooterBot: legal in every variant, and it shoots the moon far more often than the heuristic."""

from __future__ import annotations

import random

import pytest

from moonshot.bots.base import Bot
from moonshot.bots.heuristic import HeuristicBot
from moonshot.bots.random import RandomBot
from moonshot.bots.registry import make_bot
from moonshot.bots.shooter import ShooterBot, losers, moon_hand
from moonshot.core.cards import ALL_CARDS, parse_card_set
from moonshot.core.engine import Game
from moonshot.core.rules import EndRule
from moonshot.core.variants import STANDARD, VARIANTS
from moonshot.core.views import seat_view
from moonshot.play.arena import ArenaConfig, play_deal


def play_out(rules: object, seed: int, bots: list[Bot]) -> Game:
    game = Game(rules, seed)  # type: ignore[arg-type]
    rng = random.Random(seed)
    for _ in range(4000):
        if game.over:
            break
        seat = game.to_act()[0]
        view = seat_view(game, seat)
        action = bots[seat].act(view, rng)
        assert action in view.legal, (view.rules.name, action)
        game.apply(action)
    return game


def test_registered() -> None:
    bot = make_bot("shooter")
    assert isinstance(bot, ShooterBot) and isinstance(bot, Bot) and bot.name == "shooter"


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_full_games_are_legal_in_every_variant(variant: str) -> None:
    rules = VARIANTS[variant]
    if rules.end is EndRule.SCORE:
        rules = rules.replace(score_limit=40)
    s = ShooterBot()
    assert play_out(rules, 11, [s, HeuristicBot(), s, RandomBot()]).over


def test_moon_hand() -> None:
    strong = parse_card_set(["AH", "KH", "QH", "JH", "10H", "AS", "KS", "AC", "KC", "QC", "AD", "KD", "QD"])
    weak = parse_card_set(["2H", "3H", "4H", "5H", "6H", "2S", "3S", "2C", "3C", "4C", "2D", "3D", "4D"])
    assert moon_hand(strong, STANDARD)
    assert not moon_hand(weak, STANDARD)
    assert losers(strong, ALL_CARDS & ~strong) == 0  # every card is the best of its suit left
    assert losers(weak, ALL_CARDS & ~weak) == 13


def test_shoots_more_often_than_the_heuristic() -> None:
    def moons(candidate: str) -> int:
        config = ArenaConfig("standard", 40, candidate, "heuristic", seed=500)
        shot = 0
        for i in range(config.deals):
            r = play_deal(config, i)
            shot += sum(1 for seating, m in zip(r.seatings, r.moons) if m is not None and seating[m] == candidate)
        return shot

    assert moons("shooter") > 2 * max(1, moons("heuristic"))
