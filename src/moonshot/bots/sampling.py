"""Dealing the cards a seat cannot see, consistently with everything it knows: the worlds the search
bot (:mod:`moonshot.bots.search`) and the inference (:mod:`moonshot.bots.inference`) play out.

A world fits the cards seen, the cards the seat passed, voids shown, charges, exposures, claimed
hands and hand sizes; :class:`Inconsistent` says no world does (a bug in the caller's view).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from moonshot.core.cards import ALL_CARDS, CardSet, card_list, to_set
from moonshot.core.engine import Phase
from moonshot.core.views import SeatView

from .playout import quick_deal


class Inconsistent(ValueError):
    """No deal of the hidden cards fits what the seat knows (a bug in the caller's view)."""


# ---------------------------------------------------------------------- the sampler
def sample_hands(
    me: int,
    my_hand: CardSet,
    unseen: CardSet,
    counts: Sequence[int],
    known: Sequence[CardSet],
    voids: Sequence[int],
    rng: random.Random,
) -> list[CardSet]:
    """Deal ``unseen`` to the three other seats: seat ``s`` gets ``counts[s]`` cards, all of
    ``known[s]``, and nothing in a suit of ``voids[s]`` (a 4-bit suit mask).

    Cards are dealt most-constrained first, each to a random seat that can take it, weighted by
    the room it has left (with no voids this is a uniform deal). A dead end (possible when voids
    interlock) is retried, then resolved by an exact construction that checks Hall's condition
    before every placement, so a consistent deal is always found when one exists.
    """
    others = [s for s in range(4) if s != me]
    hands = [0, 0, 0, 0]
    hands[me] = my_hand
    need = [0, 0, 0, 0]
    free = unseen
    for s in others:
        k = known[s] & unseen
        hands[s] = k
        free &= ~k
        need[s] = counts[s] - k.bit_count()
        if need[s] < 0:
            raise Inconsistent(f"seat {s} holds more known cards than it has cards")
    if sum(need[s] for s in others) != free.bit_count():
        raise Inconsistent("hand sizes do not add up to the unseen cards")
    # eligible seats per suit (4-bit seat masks)
    elig = [0, 0, 0, 0]
    for suit in range(4):
        for s in others:
            if not voids[s] >> suit & 1:
                elig[suit] |= 1 << s
    if not any(voids[s] for s in others):
        cards = card_list(free)
        rng.shuffle(cards)
        i = 0
        for s in others:
            hands[s] |= to_set(cards[i : i + need[s]])
            i += need[s]
        return hands
    groups: list[list[int]] = [[] for _ in range(4)]
    for c in card_list(free):
        groups[c // 13].append(c)
    suits = sorted(range(4), key=lambda su: (elig[su].bit_count(), su))
    for _attempt in range(8):
        result = _greedy_fill(hands, need, groups, suits, elig, rng)
        if result is not None:
            return result
    return _exact_fill(hands, need, groups, suits, elig, rng)


def _greedy_fill(
    hands: list[CardSet],
    need: list[int],
    groups: list[list[int]],
    suits: list[int],
    elig: list[int],
    rng: random.Random,
) -> list[CardSet] | None:
    out = hands[:]
    room = need[:]
    for su in suits:
        cards = groups[su][:]
        rng.shuffle(cards)
        for c in cards:
            total = 0
            for s in range(4):
                if elig[su] >> s & 1:
                    total += room[s]
            if total == 0:
                return None
            pick = rng.randrange(total)
            for s in range(4):
                if elig[su] >> s & 1 and room[s]:
                    if pick < room[s]:
                        out[s] |= 1 << c
                        room[s] -= 1
                        break
                    pick -= room[s]
    return out


def _feasible(room: list[int], left: list[int], elig: list[int]) -> bool:
    """Hall's condition: every set of seats has room for the cards only it can take."""
    for subset in range(1, 16):
        cap = sum(room[s] for s in range(4) if subset >> s & 1)
        must = sum(left[su] for su in range(4) if elig[su] and elig[su] & ~subset == 0)
        if must > cap:
            return False
    return True


def _exact_fill(
    hands: list[CardSet],
    need: list[int],
    groups: list[list[int]],
    suits: list[int],
    elig: list[int],
    rng: random.Random,
) -> list[CardSet]:
    out = hands[:]
    room = need[:]
    left = [len(g) for g in groups]
    if any(left[su] and not elig[su] for su in range(4)) or not _feasible(room, left, elig):
        raise Inconsistent("no seat can hold some unseen card")
    for su in suits:
        cards = groups[su][:]
        rng.shuffle(cards)
        for c in cards:
            left[su] -= 1
            options = [s for s in range(4) if elig[su] >> s & 1 and room[s]]
            rng.shuffle(options)
            for s in options:
                room[s] -= 1
                if _feasible(room, left, elig):
                    out[s] |= 1 << c
                    break
                room[s] += 1
            else:  # pragma: no cover - _feasible held before this card, so some seat fits
                raise Inconsistent("sampler dead end")
    return out


def sample_view(view: SeatView, rng: random.Random) -> list[CardSet]:
    """Four hands consistent with what ``view``'s seat knows (its own hand as it is).

    While cards are being passed (some passes are in transit) the deal before passing is
    sampled instead: the seat's hand as dealt and thirteen unknown cards for each other seat.
    """
    me = view.seat
    if view.phase is Phase.PASS or view.phase is Phase.PILE:
        unseen = ALL_CARDS & ~view.dealt
        return sample_hands(me, view.dealt, unseen, (13, 13, 13, 13), (0, 0, 0, 0), (0, 0, 0, 0), rng)
    unseen = ALL_CARDS & ~view.hand & ~view.played
    return sample_hands(me, view.hand, unseen, view.cards_left, view.known_cards, view.voids, rng)


def quick_sample_view(view: SeatView, rng: random.Random) -> list[CardSet]:
    """:func:`sample_view` for card play, dealt by the compiled :func:`~moonshot.bots.playout.quick_deal`
    (several times faster; the same rule, a different random stream); the exact sampler where it
    finds no deal, and :func:`sample_view` itself while cards are being passed."""
    if view.phase is Phase.PASS or view.phase is Phase.PILE:
        return sample_view(view, rng)
    unseen = ALL_CARDS & ~view.hand & ~view.played
    return quick_hands(view.seat, view.hand, unseen, view.cards_left, view.known_cards, view.voids, rng)


def quick_hands(
    me: int,
    my_hand: CardSet,
    unseen: CardSet,
    counts: Sequence[int],
    known: Sequence[CardSet],
    voids: Sequence[int],
    rng: random.Random,
) -> list[CardSet]:
    """:func:`sample_hands`'s deal by the compiled :func:`~moonshot.bots.playout.quick_deal` (the
    same rule, another random stream), or by :func:`sample_hands` itself where that finds none."""
    hands = quick_deal(me, my_hand, unseen, list(counts), list(known), list(voids), rng)
    if hands is None:
        return sample_hands(me, my_hand, unseen, counts, known, voids, rng)
    return hands


# ---------------------------------------------------------------------- worlds and values


__all__ = ["Inconsistent", "quick_hands", "quick_sample_view", "sample_hands", "sample_view"]
