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

``search:root=ismcts,puct=C`` grows the same shared tree by :func:`grow_puct_tree`: at every node
the seat to play chooses by PUCT, its mean relative cost against C times the policy network's
prior of the card (scored once a node, from what that seat would see in the first world that
chooses there: :func:`mover_view`), so the network guides every seat's choice, not only the cut
of the root cards. ``leaf_batch=K`` sends K walks down (each leaving a virtual loss on its path)
before their leaves go through the value network in one call; ``tree_exact`` values a leaf late
in the deal by the exact solver, as the flat search values its root cards there.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from moonshot.core.cards import CardSet, card_list
from moonshot.core.views import SeatView

from .endgame import _distinct, _to_trick_end, _valued, exact_value
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


def check_tree_options(root: str | None, puct: object, leaf_batch: object, tree_exact: object) -> None:
    """Refuse ``search``'s PUCT options (``puct``, ``leaf_batch``, ``tree_exact``) where they are
    not a number, a count and a flag, or where they cannot apply (not ``root=ismcts``; batches and
    the exact leaves without ``puct``), when the bot is made rather than at its first card."""
    if not (isinstance(puct, (int, float)) and not isinstance(puct, bool) and 0 <= puct < math.inf):
        raise ValueError(f"puct must be 0 (off) or a positive exploration constant, not {puct!r}")
    if type(leaf_batch) is not int or leaf_batch < 1:
        raise ValueError(f"leaf_batch must be a whole number of at least 1, not {leaf_batch!r}")
    if not isinstance(tree_exact, bool):
        raise ValueError(f"tree_exact must be true or false, not {tree_exact!r}")
    if (puct or leaf_batch > 1 or tree_exact) and root != "ismcts":
        raise ValueError("puct, leaf_batch and tree_exact apply to root=ismcts only")
    if (leaf_batch > 1 or tree_exact) and not puct:
        raise ValueError("leaf_batch and tree_exact apply to the PUCT tree: give puct too")


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


class PuctNode:
    """A node of the PUCT tree: ``total`` is the cost sum of the seat that played its card (with
    the virtual losses of the walks still waiting for their leaf's value), ``odds`` the policy
    network's unnormalised probability of each card its seat to play held here in the first world
    that chose at it (one network call a node; a card of another world takes the odds of these
    cards' mean score)."""

    __slots__ = ("children", "n", "odds", "other", "total")

    def __init__(self) -> None:
        self.n = 0
        self.total = 0.0
        self.children: dict[int, PuctNode] = {}
        self.odds: dict[int, float] = {}  # exp(logit - the best logit) of each card scored here
        self.other = 1.0  # the odds of a card not scored here (uniform where nothing is)

    def score(self, logits: dict[int, float]) -> None:
        """Take the policy network's ``logits`` of the cards at this node."""
        top = max(logits.values())
        self.odds = {c: math.exp(x - top) for c, x in logits.items()}
        self.other = math.exp(sum(logits.values()) / len(logits) - top)


# what a walk waiting for its leaf's value adds to each node it passed, in relative cost over the
# deal's points (a loss: the next walks of the batch lean to other cards)
VIRTUAL_LOSS = 1.0

# the policy network's scores of the seat to play's ``cards`` in a world (the deal, the suits each
# seat has shown void in): one logit each
Prior = Callable[[Deal, list[int], list[int]], list[float]]


def grow_puct_tree(
    cards: list[int],
    root_logits: dict[int, float] | None,
    base: Deal,
    deal_world: Callable[[random.Random], list[CardSet]],
    policy: Policy,
    spent: Callable[[int], bool],
    c_puct: float,
    rng: random.Random,
    scale: float,
    net: Any,
    value_cards: int,
    matters: CardSet,
    voids: tuple[int, ...],
    prior: Prior | None = None,
    batch: int = 1,
    exact_cards: int = 0,
    keep: list[object] | None = None,
) -> tuple[int, float]:
    """:func:`grow_shared_tree` with PUCT: the best of ``cards`` and its mean value in points.

    At every node the seat to play chooses among the cards it holds in the walk's world by its
    mean relative cost minus ``c_puct`` times the policy prior of the card (the softmax of
    ``prior``'s scores over those cards; ``root_logits`` at the root; uniform where ``prior`` is
    None) times sqrt(visits of those cards + 1) / (1 + the card's visits); a card not yet visited
    counts as cost 0 (the others' mean). ``batch`` walks go down before their leaves are valued,
    each leaving a virtual loss on its path, so the value network scores ``batch`` leaves in one
    call. ``exact_cards`` > 0: a leaf where no hand holds more cards than that is valued by the
    exact solver (``me`` against the other three: they take minus a third of its relative cost
    each). ``voids``: the suits each seat has shown void in at the decision."""
    from .value import leaf_costs

    root = PuctNode()
    if root_logits:
        root.score(root_logits)
    root_set = _set(cards)
    me = base.turn
    done = 0
    while done == 0 or not spent(done):
        walks: list[tuple[list[tuple[PuctNode, int]], list[float] | int]] = []
        leaves: list[Deal] = []
        for _ in range(batch):
            d = base.copy()
            d.hands = deal_world(rng)
            node = root
            path: list[tuple[PuctNode, int]] = []
            shown = list(voids)
            while not d.done:
                if node is root:
                    options = root_set
                else:
                    legal = d.legal()
                    options = legal if not legal & (legal - 1) else _set(_distinct(d, legal, matters))
                mover = d.turn
                opts = card_list(options)
                if len(opts) == 1:
                    c = opts[0]
                else:
                    if prior is not None and not node.odds:
                        node.score(dict(zip(opts, prior(d, opts, shown))))  # (once a node)
                    c = _select(node, opts, c_puct)
                if d.trick and c // 13 != d.trick[0] // 13:
                    shown[mover] |= 1 << (d.trick[0] // 13)
                d.play(c)
                child = node.children.get(c)
                fresh = child is None
                if child is None:
                    child = node.children[c] = PuctNode()
                child.n += 1
                child.total += VIRTUAL_LOSS
                path.append((child, mover))
                node = child
                if fresh:
                    break
            root.n += 1
            # the leaf's relative costs over the deal's points, or its place in the batch of leaves
            if d.done:
                walks.append((path, _relative_all(d.costs(), scale)))
            elif exact_cards and max(h.bit_count() for h in d.hands) <= exact_cards:
                v = exact_value(d, me) / scale
                rel = [-v / 3.0] * 4  # (the three others against me: they share what I lose)
                rel[me] = v
                walks.append((path, rel))
            elif net is not None:
                _to_trick_end(d, policy, rng)
                if _valued(d, value_cards):
                    walks.append((path, len(leaves)))
                    leaves.append(d)
                else:
                    walks.append((path, _relative_all(finish_costs(d, policy, rng), scale)))
            else:
                walks.append((path, _relative_all(finish_costs(d, policy, rng), scale)))
        valued = leaf_costs(net, leaves) if leaves else []
        for path, got in walks:
            rel = _relative_all(valued[got], scale) if isinstance(got, int) else got
            root.total += rel[me]
            for child, mover in path:
                child.total += rel[mover] - VIRTUAL_LOSS
        done += len(walks)
    if keep is not None:
        keep.append(root)
    tried = [c for c in cards if c in root.children and root.children[c].n]
    best = max(tried, key=lambda c: (root.children[c].n, -root.children[c].total / root.children[c].n, -c))
    child = root.children[best]
    return best, child.total / child.n * scale


def _select(node: PuctNode, opts: list[int], c_puct: float) -> int:
    """The PUCT choice among ``opts`` at ``node`` (the lowest score; ties: the lower card)."""
    odds = node.odds
    other = node.other
    children = node.children
    visits = 0
    norm = 0.0
    for x in opts:
        ch = children.get(x)
        if ch is not None:
            visits += ch.n
        norm += odds.get(x, other)
    explore = c_puct * math.sqrt(visits + 1) / norm
    best_c, best_v = opts[0], math.inf
    for x in opts:
        ch = children.get(x)
        p = odds.get(x, other)
        v = -explore * p if ch is None else ch.total / ch.n - explore * p / (1 + ch.n)
        if v < best_v:
            best_c, best_v = x, v
    return best_c


def _relative_all(costs: Any, scale: float) -> list[float]:
    total = sum(costs)
    return [(c - (total - c) / 3.0) / scale for c in costs]


def mover_view(view: SeatView, d: Deal, voids: list[int]) -> SeatView:
    """What the seat to play in ``d`` would see there, as far as the policy network reads it: the
    decision's ``view`` with that seat's hand in this world and the play since (``voids``: the
    suits each seat has shown void in). What the seat was passed or saw claimed stays the deciding
    seat's: the network's features do not read it."""
    seat = d.turn
    return replace(
        view,
        seat=seat,
        hand=d.hands[seat],
        trick=tuple(zip(d.tseats, d.trick)),
        trick_no=d.trick_no,
        leader=d.tseats[0] if d.tseats else seat,
        played=d.played,
        led_suits=d.led_suits,
        hearts_broken=d.broken,
        voids=tuple(voids),
        taken=tuple(d.taken),
        tricks_won=tuple(d.tricks_won),
        points=tuple(d.pts),
        legal_plays=d.legal(),
    )


def network_prior(view: SeatView, network: Any) -> Prior:
    """:data:`Prior` by the policy network ``network`` (:class:`moonshot.bots.learned.Policy`),
    each seat judged by what it would see (:func:`mover_view`)."""
    from .learned import card_features

    def prior(d: Deal, cards: list[int], voids: list[int]) -> list[float]:
        scores: list[float] = network.scores(card_features(mover_view(view, d, voids), cards)).tolist()
        return scores

    return prior


def _set(cards: list[int]) -> CardSet:
    out = 0
    for c in cards:
        out |= 1 << c
    return out


__all__ = [
    "PuctNode",
    "SharedNode",
    "check_tree_options",
    "grow_puct_tree",
    "grow_shared_tree",
    "mover_view",
    "network_prior",
]
