"""Opponents for the single-agent environments: moonshot bots chosen by name or given as objects.

Names come from the simulator's registry (:data:`moonshot.bots.registry.BOT_REGISTRY`: ``random``,
``heuristic``, ``search``), so every bot the simulator knows can sit in an env too. Any object with
``name`` and ``act(view, rng)`` (the :class:`~moonshot.bots.base.Bot` protocol) is accepted as well.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from moonshot.bots.base import Bot
from moonshot.bots.random import RandomBot
from moonshot.bots.registry import UnknownBot
from moonshot.bots.registry import make_bot as named_bot
from moonshot.core.actions import Play
from moonshot.core.engine import Game, Phase
from moonshot.core.events import Event
from moonshot.core.views import seat_view


def make_bot(spec: str | Bot) -> Bot:
    """A bot from a name in the simulator's registry (``random``, ``heuristic``, ``search``) or a
    bot object (returned as is)."""
    if not isinstance(spec, str):
        return spec
    try:
        return named_bot(spec.strip().lower())
    except UnknownBot as e:
        raise ValueError(f"unknown opponent {spec!r}: {e}") from e


def make_bots(spec: str | Bot | Sequence[str | Bot], n: int = 3) -> list[Bot]:
    """``n`` bots from one spec (each seat gets its own instance) or a sequence of ``n`` specs."""
    if isinstance(spec, (str, Bot)) or not isinstance(spec, Sequence):
        return [make_bot(spec) for _ in range(n)]
    if len(spec) != n:
        raise ValueError(f"expected {n} opponents, got {len(spec)}")
    return [make_bot(s) for s in spec]


def bot_act(bot: Bot, game: Game, seat: int, rng: random.Random) -> list[Event]:
    """Let ``bot`` make ``seat``'s decision and apply it."""
    ph = game.phase
    if type(bot) is RandomBot and ph is Phase.PLAY and game.claimer is None:
        # the choice RandomBot makes (rng.choice over the legal cards, lowest first: the same draw
        # from the same stream), without building a seat view or a card list
        legal = game.legal_play_mask(seat)
        for _ in range(rng.randrange(legal.bit_count())):
            legal &= legal - 1
        return game.apply(Play.of(seat, (legal & -legal).bit_length() - 1))
    view = seat_view(game, seat, with_legal=ph is not Phase.PASS and ph is not Phase.PILE)
    return game.apply(bot.act(view, rng))


__all__ = ["bot_act", "make_bot", "make_bots"]
