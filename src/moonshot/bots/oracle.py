"""The oracle: ``search`` that sees every card, a measuring stick for the arena only.

``oracle`` is :class:`~moonshot.bots.search.SearchBot` whose card decisions have one world, the
deal as it really lies: each card decision's sampler deals the hidden hands as the game holds them.
No honest player has that sight, so it says how much of ``search``'s loss is the sampling of hidden
hands (what better inference could at most buy back) and how much is the search itself (what the
search does with a world it knows): with perfect information, does more time still help?

The oracle reads the hands from the :class:`~moonshot.core.engine.Game` it is *watching*
(:meth:`OracleBot.watch`), which only the arena hands it (:func:`moonshot.play.arena.play_deal`).
It is not in :data:`~moonshot.bots.registry.BOT_REGISTRY`, so no server, lobby, tournament or
client can seat it by name (``make_bot("oracle")`` is an unknown bot), and a bot watching no game
refuses to play a card rather than guess. Its card play is measured with ``--no-passing``: with
passing on, the hands it would see are settled only once every seat has passed.

Its pass sees the four hands as dealt (every world of the pass decision is the real deal; the other
seats' passes are still modelled by the danger ranking, as they are decided beside it), so
``heuristic:pass_by=oracle`` says how much a pass could gain from knowing where every card lies
with ``search``'s valuation of passes.

Every option is ``search``'s (``oracle:think_ms=10``, ``oracle:root=tree,worlds=1``). One world
and a greedy rollout that draws no random numbers make the flat root deterministic: every world
is the same world, so past the first the budget buys it nothing; ``root=tree`` grows one tree in
the known world deeper as time allows.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from moonshot.core.cards import CardSet
from moonshot.core.engine import Game, Phase
from moonshot.core.views import SeatView

from .search import SearchBot


class Blind(RuntimeError):
    """An oracle asked for a card decision while watching no game (or another game than the view's)."""


class OracleBot(SearchBot):
    """``search`` whose card decisions see the real hands of the game it watches (arena only)."""

    name = "oracle"
    _game: Game | None = None  # (search's constructor as it is: the arena reads its options)

    def watch(self, game: Game | None) -> None:
        """Read the hidden hands from ``game`` from now on (None: from no game)."""
        self._game = game

    def _sampler(self, view: SeatView) -> Callable[[random.Random], list[CardSet]]:
        if view.phase is not Phase.PLAY:  # (passing: the deal before the passes, search's own sampler)
            return super()._sampler(view)
        game = self._game
        if game is None or game.hands[view.seat] != view.hand or game.played != view.played:
            raise Blind("an oracle plays only in the arena, watching the game it is asked about")
        hands = list(game.hands)
        return lambda rng: list(hands)

    def _pass_hands(self, view: SeatView) -> Callable[[random.Random], list[CardSet]] | None:
        game = self._game
        if game is None or game.hands[view.seat] != view.hand:
            raise Blind("an oracle passes only in the arena, watching the game it is asked about")
        # (the hands as dealt: a seat that has passed already holds its hand less its pass)
        hands = [game.hands[s] | (game.passed[s] or 0) for s in range(4)]
        return lambda rng: list(hands)


__all__ = ["Blind", "OracleBot"]
