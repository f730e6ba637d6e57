"""One bot's passing with another's card play: ``pass_by`` as an option of any bot.

``make_bot(name, pass_by=other)`` seats ``name`` for every decision but the pass (card play,
charges, exposure, claims and their answers), and ``other`` for the pass (the pass of the
variant's direction, and Turbo's keeper pile). Two such bots that share their card play and differ
only in ``pass_by`` measure passing alone: ``moonshot arena --head-to-head
"search:think_ms=5,pass_by=search:think_ms=40" "search:think_ms=5,pass_by=pimc:classic"``.
Which decisions are a pass is read from the view's phase, so it holds in every variant.
"""

from __future__ import annotations

import random

from moonshot.bots.base import Bot, answer_claim
from moonshot.core.actions import Action
from moonshot.core.engine import Game, Phase
from moonshot.core.views import SeatView

PASS_PHASES = (Phase.PASS, Phase.PILE)


class PassingBy:
    """``cards`` for every decision but the pass, ``passer`` for the pass."""

    def __init__(self, cards: Bot, passer: Bot) -> None:
        self.cards = cards
        self.passer = passer
        self.name = cards.name
        # what a table asks of a bot (moonshot.runtime.table.BotSeat): either half may be slow
        self.slow = bool(getattr(cards, "slow", False) or getattr(passer, "slow", False))
        self.uses_kernel = bool(getattr(cards, "uses_kernel", False) or getattr(passer, "uses_kernel", False))

    def answer_claim(self, view: SeatView, claimer: int, rng: random.Random) -> bool:
        return answer_claim(self.cards, view, claimer, rng)

    def watch(self, game: Game | None) -> None:
        """Hand the watched game on to either half that watches one (the arena's oracle)."""
        for half in (self.cards, self.passer):
            watch = getattr(half, "watch", None)
            if watch is not None:
                watch(game)

    def act(self, view: SeatView, rng: random.Random) -> Action:
        if view.phase in PASS_PHASES:
            return self.passer.act(view, rng)
        return self.cards.act(view, rng)


__all__ = ["PASS_PHASES", "PassingBy"]
