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
rollout="heuristic", clock=None, prior=0, network=None, preset=None)``. ``prior=K`` grows the
trees' roots over the prior network's ``K`` best cards only (``search``'s prior, as ``search`` does; where the network
plays), 0: every card; ``network=PATH``: the network in that weights file instead of the packaged one.

``preset="classic"`` (the spec ``pimc:classic``) is the classic configuration of the programs
moonshot measures itself against, and fixes every budget option: 30 sampled worlds, a UCT tree of
333 iterations in each (9,990 playouts a move), exploration 0.4, rollouts by the greedy policy with
a random card 10% of the time, no time limit. Its trees, rollouts and the playouts of its passing,
charging and claims run in the rules kernel (:mod:`moonshot.kernel`: whole trees as machine code
where numba is installed), with the kernel's own random numbers seeded from the decision's ``rng``,
so it is reproducible for a seed. Rules the kernel cannot play fall back to the Python trees.
"""

from __future__ import annotations

import random
from typing import Any

from moonshot.core.cards import card_list
from moonshot.core.views import SeatView

from .playout import Deal
from .search import Clock, SearchBot, deal_from_view, point_scale, sample_view
from .tree import grow_trees

CLASSIC_WORLDS = 30
CLASSIC_ITERATIONS = 333  # UCT iterations in each world's tree
# the classic configuration: everything but the sampler and the passing rules, which are search's
PRESETS: dict[str, dict[str, Any]] = {
    "classic": {
        "think_ms": None,
        "simulations": CLASSIC_WORLDS * CLASSIC_ITERATIONS,
        "worlds": CLASSIC_WORLDS,
        "exploration": 0.4,
        "rollout": "noisy",
        "prior": 0,
    }
}
CLASSIC_EPSILON = 0.1  # the "noisy" rollout: greedy, with a uniformly random card this often


class PimcBot(SearchBot):
    """Perfect-information Monte Carlo: a UCT tree per sampled world, values averaged over worlds."""

    name = "pimc"
    slow = True
    presets = tuple(PRESETS)  # the arena's spec "pimc:classic"

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
        preset: str | None = None,
    ) -> None:
        self.preset = preset
        if preset is not None:
            if preset not in PRESETS:
                raise ValueError(f"unknown pimc preset {preset!r}; known: {', '.join(PRESETS)}")
            fixed = PRESETS[preset]
            think_ms, simulations, worlds = fixed["think_ms"], fixed["simulations"], fixed["worlds"]
            exploration, rollout, prior = fixed["exploration"], fixed["rollout"], fixed["prior"]
            # (its trees run in the rules kernel: whoever runs it loads that first, off any event
            # loop, as for search; making it never does, and its first move would load it)
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
        if self.preset is not None:
            from moonshot import kernel

            if kernel.covers(view.rules):
                return self._kernel_trees(view, rng)
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

    def _kernel_trees(self, view: SeatView, rng: random.Random) -> tuple[int, float]:
        """The card decision in the rules kernel: one UCT tree per sampled world, grown world after
        world (each ``simulations // worlds`` iterations), each root card's mean value averaged
        over the worlds (an unvisited card counts as its world's mean), the lowest cost played."""
        from moonshot import kernel

        cards = card_list(view.legal_plays)
        rt = kernel.rules_table(view.rules, view.deal_kind)
        gen = kernel.seed_rng(rng)
        scale = point_scale(view)
        iterations = max(1, (self.simulations or 0) // self.worlds)
        totals = [0.0] * len(cards)
        for _ in range(self.worlds):
            st = _kernel_state(rt, deal_from_view(view, sample_view(view, rng)))
            n, total, root = kernel.uct(
                rt, st, view.legal_plays, iterations, self.exploration, self.rollout, gen, scale, CLASSIC_EPSILON
            )
            for k, c in enumerate(cards):
                totals[k] += total[c] / n[c] if n[c] else root / iterations
        best = min(range(len(cards)), key=lambda k: (totals[k], k))
        return cards[best], totals[best] * scale / self.worlds

    def _finish(self, deal: Deal, rng: random.Random) -> tuple[int, ...]:
        if self.preset is None:
            return super()._finish(deal, rng)
        from moonshot import kernel

        rt = kernel.rules_table(deal.rules.rules, deal.rules.kind)
        out = kernel.rollouts(rt, _kernel_state(rt, deal), 1, self.rollout, kernel.seed_rng(rng), CLASSIC_EPSILON)
        return (int(out[0, 0]), int(out[0, 1]), int(out[0, 2]), int(out[0, 3]))


def _kernel_state(rt: Any, deal: Deal) -> Any:
    """``deal`` as a rules-kernel state."""
    from moonshot import kernel

    return kernel.new_state(
        rt,
        deal.hands,
        turn=deal.turn,
        trick_no=deal.trick_no,
        trick=deal.trick,
        tseats=deal.tseats,
        played=deal.played,
        led_suits=deal.led_suits,
        broken=deal.broken,
        taken=deal.taken,
        tricks_won=deal.tricks_won,
        trick_numbers_won=deal.tnw,
        charged=deal.charged,
        doubled=deal.doubled,
    )


__all__ = ["CLASSIC_ITERATIONS", "CLASSIC_WORLDS", "PRESETS", "PimcBot"]
