"""``search-learned``: the search bot over only the learned policy's best cards.

Apart from :mod:`moonshot.bots.learned` because it is a :class:`~moonshot.bots.search.SearchBot`,
and the search bot reads its prior network (``prior.npz``, :func:`~moonshot.bots.learned.default_prior`) itself.
"""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np

from moonshot.bots.learned import Policy, card_features, default_prior
from moonshot.bots.search import Clock, SearchBot
from moonshot.core.cards import card_list
from moonshot.core.views import SeatView


class PriorSearchBot(SearchBot):
    """``search`` with the learned policy as a prior: only the network's ``top`` cards are searched.

    Every world costs one playout per option, so a budget of ``simulations`` playouts sees about
    ``legal / top`` times as many worlds for the options kept (the network's score costs about
    0.1 ms, a few playouts). The rest (passing, charges, claims) is ``search``'s.
    """

    name = "search-learned"

    def __init__(
        self,
        top: int = 3,
        think_ms: int | None = 200,
        simulations: int | None = None,
        rollout: str = "heuristic",
        inference: bool = False,
        clock: Clock | None = None,
        policy: Policy | None = None,
    ) -> None:
        super().__init__(think_ms=think_ms, simulations=simulations, rollout=rollout, inference=inference, clock=clock)
        self.top = top
        self.prior = policy or default_prior()

    def _choose_card(self, view: SeatView, rng: random.Random) -> tuple[int, float]:
        cards = card_list(view.legal_plays)
        if len(cards) > self.top:
            scores = self.prior.scores(card_features(view, cards))
            keep = sorted(np.argsort(-scores, kind="stable")[: self.top].tolist())
            view = replace(view, legal_plays=sum(1 << cards[i] for i in keep))
        return super()._choose_card(view, rng)


__all__ = ["PriorSearchBot"]
