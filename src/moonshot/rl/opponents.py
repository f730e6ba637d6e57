"""Opponents for the single-agent environments: moonshot bots chosen by name, imported lazily.

``"heuristic"`` is :class:`moonshot.bots.heuristic.HeuristicBot` when that module exists; when it does
not (yet), :func:`make_bot` falls back to ``"random"`` and says so with a warning. Any object with
``name`` and ``act(view, rng)`` (the :class:`~moonshot.bots.base.Bot` protocol) is accepted too.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Sequence
from importlib import import_module
from typing import Any

from moonshot.actions import Play
from moonshot.bots.base import Bot
from moonshot.bots.random import RandomBot
from moonshot.engine import Game, Phase
from moonshot.events import Event
from moonshot.views import seat_view

_BOTS = {
    "random": ("moonshot.bots.random", "RandomBot"),
    "heuristic": ("moonshot.bots.heuristic", "HeuristicBot"),
}


def heuristic_available() -> bool:
    try:
        import_module("moonshot.bots.heuristic")
    except ImportError:
        return False
    return True


def make_bot(spec: str | Bot) -> Bot:
    """A bot from a name (``random``, ``heuristic``) or a bot object (returned as is)."""
    if not isinstance(spec, str):
        return spec
    name = spec.strip().lower()
    if name not in _BOTS:
        raise ValueError(f"unknown opponent {spec!r}; known: {', '.join(_BOTS)}")
    module, cls = _BOTS[name]
    try:
        bot: Any = getattr(import_module(module), cls)()
    except (ImportError, AttributeError):
        if name != "heuristic":
            raise
        warnings.warn("moonshot.bots.heuristic is not available; using random opponents", stacklevel=3)
        bot = RandomBot()
    return bot  # type: ignore[no-any-return]


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


__all__ = ["bot_act", "heuristic_available", "make_bot", "make_bots"]
