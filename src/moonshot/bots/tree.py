"""Perfect-information Monte Carlo with a UCT tree in every sampled world.

The card decision of :class:`~moonshot.bots.pimc.PimcBot` and of ``search:root=tree`` (an
option of :class:`~moonshot.bots.search.SearchBot`, over its own root cards and sampler):
sample ``worlds`` deals of the hidden cards consistent with what the seat knows, grow one UCT
tree per world over the rest of the deal with every hand visible (each seat choosing, at its own
nodes, by UCB1 on its own relative cost), finish each iteration with a rollout, and play the card
whose mean value over the worlds' root children is best.

The worlds are grown round-robin, one iteration at a time, so the search is anytime: under a
time budget it stops when the time is spent with every world about equally deep; under a
playout budget it runs exactly that many iterations (deterministic given the rng).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from moonshot.core.cards import CardSet, to_set

from .playout import Deal, Policy


class Node:
    """A tree node: the position after its card; ``total`` is the cost sum for the seat that played it."""

    __slots__ = ("children", "n", "total", "untried")

    def __init__(self) -> None:
        self.n = 0
        self.total = 0.0
        self.untried = -1  # legal cards not yet expanded (-1: not looked at yet)
        self.children: dict[int, Node] = {}


def pick(mask: int, rng: random.Random) -> int:
    """A uniformly random card of ``mask``."""
    k = rng.randrange(mask.bit_count())
    while k:
        mask &= mask - 1
        k -= 1
    return (mask & -mask).bit_length() - 1


def relative_all(costs: tuple[int, ...] | list[int], scale: float) -> list[float]:
    """Each seat's cost minus the mean of the other three, divided by ``scale``."""
    total = sum(costs)
    return [(c - (total - c) / 3.0) / scale for c in costs]


def grow_trees(
    cards: list[int],
    world: Callable[[random.Random], Deal],
    policy: Policy,
    spent: Callable[[int], bool],
    n_worlds: int,
    exploration: float,
    rng: random.Random,
    scale: float,
    penalty: Callable[[Deal], float] | None = None,
    choices: Callable[[Deal], CardSet] | None = None,
    per_world: int = 0,
    affordable: Callable[[int], int] | None = None,
    keep: list[object] | None = None,
) -> tuple[int, float]:
    """The best of ``cards`` (the root's choices) and its mean value in points.

    ``world(rng)`` deals one world (the position to move in, every hand filled in); up to
    ``n_worlds`` are dealt, one more for each iteration until there are that many, then grown
    round-robin. ``spent(iterations)`` is asked after each iteration. ``penalty(deal)`` (points,
    optional) is added to the root seat's cost of a finished playout. ``choices(deal)`` (optional)
    is the cards a tree node below the root expands (default: every legal card). With
    ``per_world`` (and ``affordable(done)``: the iterations the whole decision can afford, judged
    from the ``done`` so far), once the first ``n_worlds`` have one iteration each, more worlds are
    dealt: one for every ``per_world`` iterations the decision can afford (never fewer than
    ``n_worlds``). ``keep`` (optional) is handed the trees, for the caller to free them when it
    has time: freeing thousands of nodes takes milliseconds, which after the budget is spent
    would make the decision late."""
    root_cards: CardSet = to_set(cards)
    roots: list[tuple[Deal, Node]] = []
    done = 0
    i = 0
    while done == 0 or not spent(done):
        if len(roots) < n_worlds:
            node = Node()
            node.untried = root_cards
            roots.append((world(rng), node))
        deal, root = roots[i % len(roots)]
        _iterate(deal, root, policy, exploration, rng, scale, penalty, choices)
        i += 1
        done += 1
        if per_world and affordable is not None and done == n_worlds:
            n_worlds = max(n_worlds, affordable(done) // per_world)
    totals = [0.0] * len(cards)
    for _, root in roots:
        for k, c in enumerate(cards):
            child = root.children.get(c)
            # an unvisited card counts as the mean of what was tried (no evidence either way)
            totals[k] += child.total / child.n if child is not None and child.n else root.total / max(1, root.n)
    best = min(range(len(cards)), key=lambda k: (totals[k], k))
    if keep is not None:
        keep.append(roots)
    return cards[best], totals[best] * scale / len(roots)


def _iterate(
    root_deal: Deal,
    root: Node,
    policy: Policy,
    c_explore: float,
    rng: random.Random,
    scale: float,
    penalty: Callable[[Deal], float] | None,
    choices: Callable[[Deal], CardSet] | None,
) -> None:
    d = root_deal.copy()
    node = root
    path: list[tuple[Node, int]] = []
    while not d.done:
        if node.untried < 0:
            node.untried = d.legal() if choices is None else choices(d)
        mover = d.turn
        if node.untried:
            c = pick(node.untried, rng)
            node.untried &= ~(1 << c)
            child = Node()
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
    costs = d.finish(policy, rng) if not d.done else d.costs()
    rel = relative_all(costs, scale)
    me = root_deal.turn
    if penalty is not None:
        rel[me] += penalty(d) / scale
    root.n += 1
    root.total += rel[me]
    for child, mover in path:
        child.n += 1
        child.total += rel[mover]


__all__ = ["Node", "grow_trees", "pick", "relative_all"]
