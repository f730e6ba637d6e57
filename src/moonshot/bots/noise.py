"""Noise as an option of any bot: with probability ``epsilon`` a decision is the random bot's.

``make_bot(name, epsilon=p)`` wraps whatever bot ``name`` makes (``heuristic --epsilon 0.5``), so
a strength between two bots is a setting of one, not a new bot. The draw comes from the seat's
seeded RNG, so a noisy bot's game is as reproducible as any other. Claims are judged by the bot
itself: a noisy player still does not concede points for nothing.
"""

from __future__ import annotations

import random

from moonshot.bots.base import Bot, answer_claim
from moonshot.bots.random import RandomBot
from moonshot.core.actions import Action
from moonshot.core.views import SeatView

_RANDOM = RandomBot()


class NoisyBot:
    """``bot`` that, each decision, acts as the uniform random bot with probability ``epsilon``."""

    def __init__(self, bot: Bot, epsilon: float) -> None:
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must be between 0 and 1, got {epsilon!r}")
        self.bot = bot
        self.epsilon = float(epsilon)
        self.name = bot.name
        # what a table asks of a bot (moonshot.runtime.table.BotSeat): a slow bot stays off the loop
        self.slow = bool(getattr(bot, "slow", False))
        self.uses_kernel = bool(getattr(bot, "uses_kernel", False))

    def answer_claim(self, view: SeatView, claimer: int, rng: random.Random) -> bool:
        return answer_claim(self.bot, view, claimer, rng)

    def act(self, view: SeatView, rng: random.Random) -> Action:
        if view.claimer is None and rng.random() < self.epsilon:
            return _RANDOM.act(view, rng)
        return self.bot.act(view, rng)


__all__ = ["NoisyBot"]
