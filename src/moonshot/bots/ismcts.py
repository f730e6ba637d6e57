"""One search tree over the card play that every sampled world shares (information-set MCTS).

``search:root=ismcts``: where ``search``'s flat root and ``root=tree`` judge each sampled world
on its own (and, deeper than the root, let every seat choose as if it saw that world's hands),
this grows a single tree keyed by the cards played from the decision on, which every seat sees.
Each iteration deals a fresh world, walks down the tree choosing, at each seat's turn, among the
cards that seat holds *in this world* by UCB1 on that seat's own relative cost (a card's
exploration term counts the iterations in which it was available, not the parent's), adds one
node, finishes the trick with the rollout policy and takes the value network's estimate of the
rest (a playout to the end where the network does not play). A seat's choice at a node is one
statistic across all the worlds it cannot tell apart, so more time buys a deeper tree, not only
more samples of a fixed-depth estimate (docs/search.md, "Why more time buys little").

The root's choices are ``search``'s root cards (the network's best, one per run of equivalent
cards); below it one card of each run of equivalent cards. The card played is the root child
with the most visits (ties: the better mean). Deterministic under a playout budget: the worlds and
the expansions draw from the decision's rng.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

from moonshot.core.cards import CardSet

from .endgame import _distinct, _to_trick_end, _valued
from .playout import Deal, Policy, finish_costs
from .tree import pick


class SharedNode:
    """A node of the shared tree: ``total`` is the cost sum of the seat that played its card,
    ``avail`` the iterations in which that card could be played at its parent."""

    __slots__ = ("avail", "children", "n", "total")

    def __init__(self) -> None:
        self.n = 0
        self.total = 0.0
        self.avail = 0
        self.children: dict[int, SharedNode] = {}


def grow_shared_tree(
    cards: list[int],
    base: Deal,
    deal_world: Callable[[random.Random], list[CardSet]],
    policy: Policy,
    spent: Callable[[int], bool],
    exploration: float,
    rng: random.Random,
    scale: float,
    net: Any,
    value_cards: int,
    matters: CardSet,
    keep: list[object] | None = None,
) -> tuple[int, float]:
    """The best of ``cards`` (the root's choices, ``base``'s seat to play) and its mean value in
    points; ``deal_world(rng)`` deals the hidden hands of one world, ``spent(iterations)`` is
    asked after each iteration, ``net`` values a position at a trick's end (None: playouts)."""
    from .value import leaf_costs

    root = SharedNode()
    root_set = 0
    for c in cards:
        root_set |= 1 << c
    me = base.turn
    done = 0
    while done == 0 or not spent(done):
        d = base.copy()
        d.hands = deal_world(rng)
        node = root
        path: list[tuple[SharedNode, int]] = []
        while not d.done:
            if node is root:
                options = root_set
            else:
                legal = d.legal()
                options = legal if not legal & (legal - 1) else _set(_distinct(d, legal, matters))
            mover = d.turn
            untried = options
            for c, ch in node.children.items():
                if options >> c & 1:
                    ch.avail += 1
                    untried &= ~(1 << c)
            if untried:
                c = pick(untried, rng)
                child = node.children[c] = SharedNode()
                child.avail = 1
                d.play(c)
                path.append((child, mover))
                break
            best_c, best_v = -1, math.inf
            for c, ch in node.children.items():
                if options >> c & 1:
                    v = ch.total / ch.n - exploration * math.sqrt(math.log(ch.avail) / ch.n)
                    if v < best_v:
                        best_c, best_v = c, v
            node = node.children[best_c]
            d.play(best_c)
            path.append((node, mover))
        if d.done:
            costs: Any = d.costs()
        elif net is not None:
            _to_trick_end(d, policy, rng)
            costs = leaf_costs(net, [d])[0] if _valued(d, value_cards) else finish_costs(d, policy, rng)
        else:
            costs = finish_costs(d, policy, rng)
        total = sum(costs)  # (the value network's costs are floats: not tree.relative_all, compiled for ints)
        rel = [(c - (total - c) / 3.0) / scale for c in costs]
        root.n += 1
        root.total += rel[me]
        for child, mover in path:
            child.n += 1
            child.total += rel[mover]
        done += 1
    if keep is not None:
        keep.append(root)
    tried = [c for c in cards if c in root.children and root.children[c].n]
    best = max(tried, key=lambda c: (root.children[c].n, -root.children[c].total / root.children[c].n, -c))
    child = root.children[best]
    return best, child.total / child.n * scale


def _set(cards: list[int]) -> CardSet:
    out = 0
    for c in cards:
        out |= 1 << c
    return out


__all__ = ["SharedNode", "grow_shared_tree"]
