"""Passing by search: the candidate passes of a hand, and choosing among them in sampled worlds.

:func:`pass_danger` ranks a hand's cards by how dangerous they are to keep; the best-ranked
passes are the candidates (:func:`pass_candidates`) and the ranking's own pass is what the other
seats pass inside a world (:func:`heuristic_pass`). :func:`choose_pass` deals the unseen cards,
passes every candidate in the same world (common random numbers) and values what follows:

- ``net=None``: each candidate's deal is played out to its end by the rollout policy (one
  playout a world and candidate);
- a value network: the first trick is played by the rollout policy, then the network estimates
  where the deal ends (the card search's leaf, :mod:`moonshot.bots.value`), every candidate of a
  few worlds in one batch. The network was trained on positions between tricks from the second
  on, so the first trick is played rather than valued at the lead.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from itertools import combinations
from math import comb
from typing import Any

from moonshot.core.cards import ALL_CARDS, QUEEN_SPADES, SPADES_MASK, SUIT_MASKS, CardSet, card_list, to_set
from moonshot.core.engine import Phase
from moonshot.core.rules import PassDirection, Rules
from moonshot.core.views import SeatView

from .endgame import _to_trick_end, _valued, relative
from .playout import Deal, Policy, start_of_play
from .sampling import sample_hands

PASS_BATCH_WORLDS = 4  # worlds whose candidates the value network scores in one call


def pass_danger(hand: CardSet, rules: Rules) -> list[tuple[float, int]]:
    """(danger, card) for each card of ``hand``, most dangerous first: the ranking used for
    candidate passes and for the other seats' passes inside simulations."""
    sc = rules.scoring_for(0)
    cp = sc.card_points
    spades = hand & SPADES_MASK
    low_spades = (spades & ((1 << QUEEN_SPADES) - 1)).bit_count()
    out = []
    for c in card_list(hand):
        suit, rank = divmod(c, 13)
        length = (hand & SUIT_MASKS[suit]).bit_count()
        d = rank * 3.0 + (6.0 if length <= 3 else 0.0) - length
        if cp[c] < 0:
            d = -50.0  # the jack of diamonds: keep it
        elif c == QUEEN_SPADES and cp[c] > 0:
            d = 100.0 if low_spades < 4 else 15.0
        elif suit == 3 and rank > 10 and not hand >> QUEEN_SPADES & 1:
            d = (90.0 if rank == 12 else 85.0) if low_spades < 4 else 20.0
        elif suit == 2 and cp[c] > 0:
            d += 10.0 + rank
        out.append((d, c))
    out.sort(reverse=True)
    return out


def heuristic_pass(hand: CardSet, rules: Rules) -> CardSet:
    """The ranking's own pass: the ``pass_count`` most dangerous cards."""
    return to_set([c for _, c in pass_danger(hand, rules)[: rules.pass_count]])


def pass_candidates(hand: CardSet, rules: Rules, limit: int) -> list[CardSet]:
    """Up to ``limit`` passes from the most dangerous cards, best-ranked first."""
    ranked = pass_danger(hand, rules)
    k = rules.pass_count
    size = k + 4  # (the pool grows past the 4 cards beyond the pass only when more candidates are asked)
    while size < len(ranked) and comb(size, k) < limit:
        size += 1
    pool = ranked[: min(len(ranked), size)]
    combos = sorted(combinations(pool, k), key=lambda cs: -sum(d for d, _ in cs))
    return [to_set([c for _, c in cs]) for cs in combos[:limit]]


def after_passing(
    hands: list[CardSet],
    passes: list[CardSet],
    direction: PassDirection,
    pile_order: list[int],
    k: int,
) -> list[CardSet]:
    """The hands once every seat's pass has reached its receiver (``pile_order``: the shuffle of
    a pile pass, where every seat draws ``k`` of the pooled cards)."""
    out = [hands[s] & ~passes[s] for s in range(4)]
    if pile_order:
        pile = card_list(passes[0] | passes[1] | passes[2] | passes[3])
        shuffled = [pile[j] for j in pile_order]
        for s in range(4):
            out[s] |= to_set(shuffled[k * s : k * s + k])
        return out
    off = direction.offset
    for s in range(4):
        out[(s + off) % 4] |= passes[s]
    return out


def _first_trick(deal: Deal, policy: Policy, rng: random.Random) -> None:
    """Play ``deal``'s first trick (from its lead) with ``policy``."""
    legal = deal.legal()
    deal.play(policy(deal, deal.turn, legal, rng) if legal & (legal - 1) else legal.bit_length() - 1)
    _to_trick_end(deal, policy, rng)


def choose_pass(
    view: SeatView,
    candidates: Sequence[CardSet],
    spent: Callable[[int], bool],
    finish: Callable[[Deal, random.Random], Sequence[float]],
    rng: random.Random,
    others_weight: float = 1.0,
    net: Any = None,
    policy: Policy | None = None,
    deal_hands: Callable[[random.Random], list[CardSet]] | None = None,
) -> CardSet:
    """The candidate with the best mean relative cost over sampled worlds, until ``spent(valued)``
    (called after each world with the candidates valued so far) says stop.

    ``finish(deal, rng)`` plays a deal to its end (the costs of every seat); with ``net`` (a value
    network) and ``policy``, a candidate's deal is its first trick played by ``policy`` and then
    the network's estimate (``finish`` still values a deal the network does not: one decided
    within the first trick). ``deal_hands(rng)`` deals a world's four hands before the passes
    (default: the unseen cards dealt uniformly to the other seats). Ties, and differences within
    the noise floor of 0.05 a deal, go to the better-ranked candidate."""
    rules = view.rules
    me = view.seat
    pile = view.phase is Phase.PILE
    totals = [0.0] * len(candidates)
    worlds = 0
    done = 0
    unseen = ALL_CARDS & ~view.hand
    pending: list[tuple[int, Deal]] = []

    def flush() -> None:
        if pending:
            from .value import leaf_costs  # (NumPy: only where a network values the passes)

            for (i, _), costs in zip(pending, leaf_costs(net, [d for _, d in pending])):
                totals[i] += relative(costs, me, others_weight)
            pending.clear()

    while worlds == 0 or not spent(done):
        if deal_hands is None:
            hands = sample_hands(me, view.hand, unseen, (13, 13, 13, 13), (0, 0, 0, 0), (0, 0, 0, 0), rng)
        else:
            hands = deal_hands(rng)
            if (
                hands[me] != view.hand
                or sum(h.bit_count() for h in hands) != 52
                or (hands[0] | hands[1] | hands[2] | hands[3]) != ALL_CARDS
            ):  # (a deal that is not one would never end in the playouts)
                raise ValueError("deal_hands must deal the whole deck, this seat's hand as it holds it")
        passes = [heuristic_pass(hands[s], rules) if s != me else 0 for s in range(4)]
        pile_order = rng.sample(range(4 * rules.pass_count), 4 * rules.pass_count) if pile else []
        for i, mine in enumerate(candidates):
            passes[me] = mine
            after = after_passing(hands, passes, view.direction, pile_order, rules.pass_count)
            deal = start_of_play(rules, view.deal_kind, after, view.leader)
            if net is not None and policy is not None:
                _first_trick(deal, policy, rng)
                if _valued(deal, 2):
                    pending.append((i, deal))
                    continue
            totals[i] += relative(finish(deal, rng), me, others_weight)
        worlds += 1
        done += len(candidates)
        if len(pending) >= PASS_BATCH_WORLDS * len(candidates):
            flush()
    flush()
    best = min(range(len(candidates)), key=lambda i: (totals[i] / worlds + 0.05 * i, i))
    return candidates[best]


__all__ = ["after_passing", "choose_pass", "heuristic_pass", "pass_candidates", "pass_danger"]
