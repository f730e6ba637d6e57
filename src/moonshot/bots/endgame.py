"""One known deal, played out exactly or to the end of its trick: the pieces every search mode
shares once a world is dealt.

It owns the relative cost a seat minimises (:func:`relative`: its own cost minus the others'
mean), the exact endgame solver (:func:`solve`, paranoid alpha-beta over the perfect-information
deal, with :func:`exact_value` taking the rules kernel's compiled copy when it is loaded and
:func:`minimax` as the unpruned reference), the cards worth trying (:func:`_distinct`: one of each
run of cards nothing unplayed separates), and finishing the trick under way by a playout policy
or by the value network's choice (:func:`_to_trick_end`, :func:`_reply_to_trick_end`,
:func:`_valued`). :mod:`moonshot.bots.search`, :mod:`moonshot.bots.ismcts` and
:mod:`moonshot.bots.lookahead` build on it; it imports none of them.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from moonshot.core.cards import ALL_CARDS, TEN_CLUBS, CardSet, card_list

from .playout import Deal, Policy, finish_costs, kernel_ready, kernel_state

NINES_MASK = sum(1 << (s * 13 + 7) for s in range(4))


def relative(costs: Sequence[float], me: int, weight: float = 1.0) -> float:
    """My cost minus ``weight`` times the others' mean cost (lower is better)."""
    return costs[me] - weight * (costs[0] + costs[1] + costs[2] + costs[3] - costs[me]) / 3.0


def solve(deal: Deal, me: int, weight: float = 1.0) -> float:
    """The exact value of ``deal`` for ``me`` when every other seat plays against it.

    Paranoid minimax with alpha-beta pruning over the perfect-information deal: ``me`` minimises
    :func:`relative` cost at the end of the deal, the others maximise it. Two exact shortcuts:
    once the cards left carry nothing the score depends on, the deal's value is already fixed;
    and of two cards in one hand that nothing unplayed separates (same suit, same points, no
    special role), only one needs trying.
    """
    return _alphabeta(deal, me, -1e9, 1e9, _matters(deal), weight)


def exact_value(deal: Deal, me: int, weight: float = 1.0) -> float:
    """:func:`solve`'s value, found in the rules kernel once it is loaded in this process and plays
    ``deal``'s rules (:func:`moonshot.kernel.solve`, the same search compiled: the same value, tens
    of times sooner), else by :func:`solve`."""
    if kernel_ready(deal.rules.rules):
        from moonshot import kernel

        rt, st = kernel_state(deal)
        return kernel.solve(rt, st, me, weight)
    return solve(deal, me, weight)


def _matters(deal: Deal) -> CardSet:
    """Cards whose fate can still change the score (besides who wins which trick)."""
    r = deal.rules
    rules = r.rules
    m = r.point_cards | deal.doubled
    if rules.ten_of_clubs_multiplier != 1:
        m |= 1 << TEN_CLUBS
    return m


def _settled(deal: Deal, matters: CardSet) -> bool:
    r = deal.rules
    if r.per_trick or r.last_numbered_trick >= deal.trick_no:
        return False
    left = ALL_CARDS & ~deal.played
    for c in deal.trick:
        left |= 1 << c
    return not left & matters


def _distinct(deal: Deal, legal: CardSet, matters: CardSet) -> list[int]:
    """The legal cards, less those equivalent to a lower one kept (see :func:`solve`)."""
    r = deal.rules
    special = matters & ~r.point_cards | deal.charged
    if r.nines:
        special |= NINES_MASK
    cp = r.card_points
    gone = deal.played
    for c in deal.trick:
        gone &= ~(1 << c)
    hand = deal.hands[deal.turn]
    out: list[int] = []
    prev = -1
    for c in card_list(legal):
        if prev >= 0 and prev // 13 == c // 13 and cp[prev] == cp[c] and not (special >> c & 1 or special >> prev & 1):
            between = ((1 << c) - 1) & ~((2 << prev) - 1)
            if between & ~(gone | hand) == 0:
                prev = c
                continue
        out.append(c)
        prev = c
    return out


def _alphabeta(deal: Deal, me: int, alpha: float, beta: float, matters: CardSet, weight: float) -> float:
    if deal.done or _settled(deal, matters):
        # (when settled, the cards still out carry nothing: the taken cards fix the score)
        return relative(deal.costs(), me, weight)
    cards = _distinct(deal, deal.legal(), matters)
    if deal.turn == me:
        best = 1e9
        for c in cards:
            child = deal.copy()
            child.play(c)
            v = _alphabeta(child, me, alpha, beta, matters, weight)
            if v < best:
                best = v
                if v < beta:
                    beta = v
                    if alpha >= beta:
                        break
        return best
    best = -1e9
    for c in reversed(cards):
        child = deal.copy()
        child.play(c)
        v = _alphabeta(child, me, alpha, beta, matters, weight)
        if v > best:
            best = v
            if v > alpha:
                alpha = v
                if alpha >= beta:
                    break
    return best


def minimax(deal: Deal, me: int, weight: float = 1.0) -> float:
    """The same value as :func:`solve` by exhaustive search (no pruning): the reference."""
    if deal.done:
        return relative(deal.costs(), me, weight)
    values = []
    for c in card_list(deal.legal()):
        child = deal.copy()
        child.play(c)
        values.append(minimax(child, me, weight))
    return min(values) if deal.turn == me else max(values)


def _to_trick_end(deal: Deal, policy: Policy, rng: random.Random) -> None:
    """Play ``deal`` with ``policy`` until no card is on the table (the trick under way is over)."""
    while deal.trick and not deal.done:
        legal = deal.legal()
        deal.play(policy(deal, deal.turn, legal, rng) if legal & (legal - 1) else legal.bit_length() - 1)


Choice = tuple[
    Deal, int, list[int], list[Deal]
]  # a deal, its seat to play, the cards tried, each played to the trick's end


def _choice(d: Deal, policy: Policy, rng: random.Random, matters: CardSet) -> Choice | None:
    """The seat to play's distinct cards in ``d``, each tried in a copy played to the trick's end
    by ``policy``; a seat with one such card plays it in ``d`` at once (None)."""
    legal = d.legal()
    cards = _distinct(d, legal, matters) if legal & (legal - 1) else [legal.bit_length() - 1]
    if len(cards) == 1:
        d.play(cards[0])
        return None
    after = []
    for c in cards:
        g = d.copy()
        g.play(c)
        _to_trick_end(g, policy, rng)
        after.append(g)
    return d, d.turn, cards, after


def _play_best(
    choices: list[Choice], net: Any, policy: Policy, rng: random.Random, weight: float, value_cards: int
) -> None:
    """Each choice's seat plays the card of lowest :func:`relative` cost: by the value network
    (one call for every choice's valued positions) where it applies, else by a playout to the end."""
    from .value import leaf_costs

    netted = [g for _, _, _, after in choices for g in after if _valued(g, value_cards)]
    costs = dict(zip(map(id, netted), leaf_costs(net, netted) if netted else ()))
    for d, seat, cards, after in choices:
        best, best_v = cards[0], math.inf
        for c, g in zip(cards, after):
            v = relative(costs[id(g)] if id(g) in costs else finish_costs(g, policy, rng), seat, weight)
            if v < best_v:
                best, best_v = c, v
        d.play(best)


def _reply_to_trick_end(
    deals: list[Deal], net: Any, policy: Policy, rng: random.Random, weight: float, value_cards: int, matters: CardSet
) -> None:
    """Finish the trick under way in each of ``deals``, every seat to play choosing the card with
    its lowest :func:`relative` cost by the value network, after the rest of the trick is played
    by ``policy`` (a playout to the end where the network does not apply: fewer than
    ``value_cards`` cards each). One network call a seat to play, for all of ``deals`` at once."""
    while True:
        choices: list[Choice] = []
        for d in deals:
            if d.done or not d.trick:
                continue
            choice = _choice(d, policy, rng, matters)
            if choice is not None:
                choices.append(choice)
        if not choices:
            if all(d.done or not d.trick for d in deals):
                return
            continue
        _play_best(choices, net, policy, rng, weight, value_cards)


def _valued(deal: Deal, value_cards: int) -> bool:
    """Whether the value network values ``deal`` (a position between tricks): the seat to lead
    holds at least ``value_cards`` cards."""
    return not deal.done and deal.hands[deal.turn].bit_count() >= value_cards
