"""The bot interface: a pure policy from a seat's view (and a seeded RNG) to an action.

Every bot has ``act``. A bot may also judge claims with ``answer_claim`` (:class:`ClaimJudge`):
under concurrent claims (``ClaimFlow.CONCURRENT``, Turbo) the game never asks anyone to answer
a claim, so whoever runs a bot asks it through :func:`answer_claim` when another seat claims.
"""

from __future__ import annotations

import random
from typing import Protocol, runtime_checkable

from moonshot.bots.heuristic import claim_is_sure
from moonshot.core.actions import Action
from moonshot.core.views import SeatView


@runtime_checkable
class Bot(Protocol):
    """A policy. ``act`` must return one of ``view.legal``; it may keep no hidden global state."""

    name: str

    def act(self, view: SeatView, rng: random.Random) -> Action: ...


@runtime_checkable
class ClaimJudge(Protocol):
    """A bot that judges claims itself (moonshot's own bots all do)."""

    def answer_claim(self, view: SeatView, claimer: int, rng: random.Random) -> bool:
        """True to accept ``claimer``'s open claim (its hand is ``view.revealed[claimer]``)."""
        ...


def answer_claim(bot: Bot, view: SeatView, claimer: int, rng: random.Random) -> bool:
    """Whether ``bot``, sitting at ``view.seat``, accepts ``claimer``'s open claim.

    The bot's own ``answer_claim`` when it has one; otherwise accept exactly the claims that are
    sure to win every remaining trick whatever the others hold (:func:`claim_is_sure`).
    """
    if isinstance(bot, ClaimJudge):
        return bot.answer_claim(view, claimer, rng)
    return claim_is_sure(view, claimer, view.revealed[claimer] & ~view.played)


__all__ = ["Bot", "ClaimJudge", "answer_claim"]
