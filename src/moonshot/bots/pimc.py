"""The PIMC bot: perfect-information Monte Carlo with a UCT tree in every sampled world.

This is the design of the classic computer Hearts players, built here as the strong opponent to
measure :class:`~moonshot.bots.search.SearchBot` against. For each card decision it samples
``worlds`` deals of the hidden cards consistent with what the seat knows (the same sampler as
``search``), grows one UCT tree per world over the rest of the deal with every hand visible
(each seat choosing, at its own nodes, by UCB1 on its own relative cost), finishes each iteration
with a rollout, and plays the card whose mean value over the worlds' root children is best
(:func:`moonshot.bots.tree.grow_trees`, which ``search:root=tree`` shares).

The worlds are grown round-robin, one iteration at a time, so the search is anytime: under
``think_ms`` it stops when the time is spent with every world about equally deep. Under
``simulations`` it runs exactly that many iterations in all (deterministic given the rng).
Unlike ``search``'s tree, every legal card is a root choice (no run of equivalent cards is
merged), the worlds come from the classic sampler, and there is no exact endgame.
Passing, charging, exposing and claims are ``search``'s (the class derives from it); only card
play differs.

Options: ``PimcBot(think_ms=200, simulations=None, worlds=20, exploration=0.7,
rollout="heuristic", clock=None, prior=0, network=None)``. ``prior=K`` grows the trees' roots over
the learned network's ``K`` best cards only (as ``search`` does; where the network plays), 0:
every card; ``network=PATH``: the network in that weights file instead of the packaged one.
"""

from __future__ import annotations

import random

from moonshot.core.cards import card_list
from moonshot.core.views import SeatView

from .search import Clock, SearchBot, deal_from_view, point_scale, sample_view
from .tree import grow_trees


class PimcBot(SearchBot):
    """Perfect-information Monte Carlo: a UCT tree per sampled world, values averaged over worlds."""

    name = "pimc"
    slow = True

    def __init__(
        self,
        think_ms: int | None = 200,
        simulations: int | None = None,
        worlds: int = 20,
        exploration: float = 0.7,
        rollout: str = "heuristic",
        clock: Clock | None = None,
        prior: int = 0,
        network: str | None = None,
    ) -> None:
        super().__init__(
            think_ms=think_ms,
            simulations=simulations,
            rollout=rollout,
            endgame=0,
            clock=clock,
            prior=prior,
            network=network,
            worlds=worlds,
            exploration=exploration,
        )

    def _choose_card(self, view: SeatView, rng: random.Random) -> tuple[int, float]:
        cards = card_list(view.legal_plays)
        spent = self._budget()
        if self.prior_top and len(cards) > self.prior_top:
            cards = self._prior_cards(view, cards)
            spent.lap()
        return grow_trees(
            cards,
            lambda rng: deal_from_view(view, sample_view(view, rng)),
            self.policy,
            spent,
            self._tree_worlds(len(cards)),
            self.exploration,
            rng,
            point_scale(view),
            keep=self._spent_trees,
        )


__all__ = ["PimcBot"]
