"""The PIMC bot: perfect-information Monte Carlo with a UCT tree in every sampled world.

This is the design of the classic computer Hearts players, built here as the strong opponent to
measure :class:`~moonshot.bots.search.SearchBot` against. For each card decision it samples
``worlds`` deals of the hidden cards consistent with what the seat knows (the same sampler as
``search``), grows one UCT tree per world over the rest of the deal with every hand visible
(each seat choosing, at its own nodes, by UCB1 on its own relative cost), finishes each iteration
with a rollout, and plays the card whose mean value over the worlds' root children is best.

The worlds are grown round-robin, one iteration at a time, so the search is anytime: under
``think_ms`` it stops when the time is spent with every world about equally deep. Under
``simulations`` it runs exactly that many iterations in all (deterministic given the rng).
Passing, charging, exposing and claims are ``search``'s (the class derives from it); only card
play differs.

Options: ``PimcBot(think_ms=200, simulations=None, worlds=20, exploration=0.7,
rollout="heuristic", clock=None, prior=0)``. ``prior=K`` grows the trees' roots over the learned
network's ``K`` best cards only (as ``search`` does; where the network plays), 0: every card.
"""

from __future__ import annotations

import math
import random

from moonshot.cards import card_list, to_set
from moonshot.views import SeatView

from .playout import Deal
from .search import Clock, SearchBot, deal_from_view, relative, sample_view


class _Node:
    """A tree node: the position after its card; ``total`` is the cost sum for the seat that played it."""

    __slots__ = ("children", "n", "total", "untried")

    def __init__(self) -> None:
        self.n = 0
        self.total = 0.0
        self.untried = -1  # legal cards not yet expanded (-1: not looked at yet)
        self.children: dict[int, _Node] = {}


def _pick(mask: int, rng: random.Random) -> int:
    """A uniformly random card of ``mask``."""
    k = rng.randrange(mask.bit_count())
    while k:
        mask &= mask - 1
        k -= 1
    return (mask & -mask).bit_length() - 1


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
    ) -> None:
        super().__init__(
            think_ms=think_ms, simulations=simulations, rollout=rollout, endgame=0, clock=clock, prior=prior
        )
        if worlds < 1:
            raise ValueError("worlds must be at least 1")
        self.worlds = worlds
        self.exploration = exploration

    def _choose_card(self, view: SeatView, rng: random.Random) -> tuple[int, float]:
        cards = card_list(view.legal_plays)
        spent = self._budget()
        if self.prior_top and len(cards) > self.prior_top:
            cards = self._prior_cards(view, cards)
            spent.lap()
        root_cards = to_set(cards)
        sc = view.rules.scoring_for(view.deal_kind)
        scale = float(sum(abs(p) for p in sc.card_points) + 13 * abs(sc.per_trick)) or 1.0
        n_worlds = self.worlds
        if self.simulations is not None:
            n_worlds = max(1, min(n_worlds, self.simulations // max(1, len(cards))))
        roots: list[tuple[Deal, _Node]] = []
        done = 0
        i = 0
        while done == 0 or not spent(done):
            if len(roots) < n_worlds:
                node = _Node()
                node.untried = root_cards  # (the prior's cards only, when it plays)
                roots.append((deal_from_view(view, sample_view(view, rng)), node))
            deal, root = roots[i % len(roots)]
            self._iterate(deal, root, rng, scale)
            i += 1
            done += 1
        totals = [0.0] * len(cards)
        for _, root in roots:
            for k, c in enumerate(cards):
                child = root.children.get(c)
                # an unvisited card counts as the mean of what was tried (no evidence either way)
                totals[k] += child.total / child.n if child is not None and child.n else root.total / max(1, root.n)
        best = min(range(len(cards)), key=lambda k: (totals[k], k))
        return cards[best], totals[best] * scale / len(roots)

    def _iterate(self, root_deal: Deal, root: _Node, rng: random.Random, scale: float) -> None:
        d = root_deal.copy()
        node = root
        path: list[tuple[_Node, int]] = []
        c_explore = self.exploration
        while not d.done:
            if node.untried < 0:
                node.untried = d.legal()
            mover = d.turn
            if node.untried:
                c = _pick(node.untried, rng)
                node.untried &= ~(1 << c)
                child = _Node()
                node.children[c] = child
                d.play(c)
                path.append((child, mover))
                break
            # every card tried: UCB1, the mover minimising its own cost
            log_n = math.log(node.n) if node.n > 1 else 0.0
            best_c, best_v = -1, math.inf
            for c, ch in node.children.items():
                v = ch.total / ch.n - c_explore * math.sqrt(log_n / ch.n)
                if v < best_v:
                    best_c, best_v = c, v
            d.play(best_c)
            node = node.children[best_c]
            path.append((node, mover))
        costs = d.finish(self.policy, rng) if not d.done else d.costs()
        rel = [relative(costs, s) / scale for s in range(4)]
        root.n += 1
        root.total += rel[root_deal.turn]
        for child, mover in path:
            child.n += 1
            child.total += rel[mover]


__all__ = ["PimcBot"]
