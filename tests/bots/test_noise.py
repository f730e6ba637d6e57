"""``epsilon``, noise as an option of any bot: at 0 the bot itself, at 1 the random bot, in
between each decision one or the other from the seat's RNG; named in the bot's spec."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moonshot.bots.noise import NoisyBot
from moonshot.bots.random import RandomBot
from moonshot.bots.registry import make_bot, spec_of
from moonshot.core.engine import Game
from moonshot.core.variants import VARIANTS
from moonshot.core.views import seat_view


def _play(bots: list, seed: int, variant: str = "standard") -> list:
    game = Game(VARIANTS[variant], seed)
    rngs = [random.Random(seed * 4 + s) for s in range(4)]
    actions = []
    while not game.over and game.deal_index == 0:
        seat = game.to_act()[0]
        view = seat_view(game, seat)
        action = bots[seat].act(view, rngs[seat])
        assert action in view.legal
        actions.append(action)
        game.apply(action)
    return actions


def test_epsilon_is_named_in_the_spec_and_checked() -> None:
    bot = make_bot("heuristic", epsilon=0.3)
    assert isinstance(bot, NoisyBot) and bot.name == "heuristic"
    assert spec_of(bot) == "heuristic --epsilon 0.3"
    with pytest.raises(ValueError, match="between 0 and 1"):
        make_bot("heuristic", epsilon=1.5)
    assert not isinstance(make_bot("heuristic"), NoisyBot)


def test_at_one_it_is_the_random_bot_and_at_zero_the_bot_itself() -> None:
    # the noisy bot draws once a decision, so compare decisions, not whole RNG streams
    game = Game(VARIANTS["standard"], 3)
    while game.to_act():
        seat = game.to_act()[0]
        view = seat_view(game, seat)
        rng_a, rng_b = random.Random(9), random.Random(9)
        noisy = make_bot("heuristic", epsilon=1.0).act(view, rng_a)
        rng_b.random()  # the draw that chose the random bot
        assert noisy == RandomBot().act(view, rng_b)
        assert make_bot("heuristic", epsilon=0.0).act(view, random.Random(1)) == make_bot("heuristic").act(
            view, random.Random(1)
        )
        game.apply(noisy)
        if game.deal_index > 0 or game.over:
            break


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), eps=st.sampled_from([0.2, 0.5]), variant=st.sampled_from(sorted(VARIANTS)))
def test_a_noisy_bot_plays_legal_reproducible_deals_in_every_variant(seed: int, eps: float, variant: str) -> None:
    first = _play([make_bot("heuristic", epsilon=eps) for _ in range(4)], seed, variant)
    again = _play([make_bot("heuristic", epsilon=eps) for _ in range(4)], seed, variant)
    assert first == again
