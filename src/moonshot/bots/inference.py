"""What the play so far says about the hidden hands: hard facts and soft evidence for the sampler.

The engine's views already carry the facts everyone sees (voids shown by not following, cards
passed, charges, claims). This module reads the tricks for more, once per decision:

- **Hard facts** (:func:`inferred_voids`): a card that the rules allowed only because its player
  held nothing of some suit proves that void. Leading a heart before hearts were broken, leading
  a charged card to its suit's first trick, or playing a point card to the first trick are legal
  only without the alternatives; each such play is tested against the engine's own
  :func:`~moonshot.core.engine.legal_plays` with every card of the other suit the player could have held,
  so a void is inferred only when *any* card of that suit would have made the play illegal. The
  rules only ever restrict more when a hand holds more, so the inference is sound: a seat is
  never declared void in a suit it holds.
- **Soft evidence** (:func:`soft_weights`): likelihood factors (0..1) on a seat holding a card.
  A seat that discarded something else while void (and past the first trick) probably holds no
  bigger point card (it would have dumped it), and ducked high point cards of the led suit: a
  seat that followed low under a higher card than the queen probably holds no queen. These are
  habits of nearly every player, not rules, so they only weigh the deal; they never forbid it.

:func:`sample_inferred` deals the hidden cards with both: the hard voids go to
:func:`~moonshot.bots.search.sample_hands` as voids, and the softly weighted cards are placed
first, each to a seat chosen in proportion to its room times its weight (a dead end falls back
to the unweighted sampler, so a consistent world is always found).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from moonshot.core.cards import ALL_CARDS, QUEEN_SPADES, SUIT_MASKS, CardSet, card_list
from moonshot.core.engine import Phase, legal_plays
from moonshot.core.rules import Rules
from moonshot.core.views import SeatView

from .sampling import Inconsistent, quick_hands, sample_hands

DISCARD_BIG = 0.2  # a void seat that dumped something else holds a big (5+ point) card this much less often
DISCARD_SMALL = 0.7  # ... and a bigger small point card
DUCK_BIG = 0.25  # a seat that followed low under a card above a big point card of the suit holds it this much less


@dataclass(frozen=True)
class Inference:
    """What one seat can tell about the others' hands: hard voids and soft weights per card."""

    voids: tuple[int, int, int, int]  # 4-bit suit masks: the view's voids and those inferred
    soft: dict[int, tuple[float, float, float, float]]  # card -> likelihood factor per seat


def _history(view: SeatView) -> list[tuple[int, list[int], list[int]]]:
    """(trick number, cards, seats) of every trick of the deal so far, the current one last."""
    out = [(t.trick, list(t.cards), list(t.seats)) for t in view.tricks]
    if view.trick:
        out.append((view.trick_no, [c for _, c in view.trick], [s for s, _ in view.trick]))
    return out


def inferred_voids(view: SeatView) -> tuple[int, int, int, int]:
    """The view's voids plus the voids that plays legal only without some suit prove."""
    voids = list(view.voids)
    if view.phase is not Phase.PLAY:
        return (voids[0], voids[1], voids[2], voids[3])
    rules = view.rules
    me = view.seat
    mine_ever = view.dealt | (view.received or 0)  # cards I held at some point: no other seat's
    charged = 0
    for s in range(4):
        charged |= view.charged[s]
    played = 0
    broken = False
    led_suits = 0
    for trick_no, cards, seats in _history(view):
        trick: list[int] = []
        for c, s in zip(cards, seats):
            if s != me:
                led = trick[0] // 13 if trick else -1
                for su in range(4):
                    if su == c // 13 or su == led or voids[s] >> su & 1:
                        continue
                    could = SUIT_MASKS[su] & ~played & ~mine_ever
                    if could and _proves_void(rules, c, could, trick, trick_no, broken, charged, led_suits):
                        voids[s] |= 1 << su
            trick.append(c)
            played |= 1 << c
            if c // 13 == 2 or (c == QUEEN_SPADES and rules.queen_breaks_hearts):
                broken = True
        if len(trick) >= 4:
            led_suits |= 1 << (trick[0] // 13)
    return (voids[0], voids[1], voids[2], voids[3])


def _proves_void(
    rules: Rules, c: int, could: CardSet, trick: list[int], trick_no: int, broken: bool, charged: CardSet, led: int
) -> bool:
    """Playing ``c`` was illegal with any one card of ``could`` beside it (so none was held)."""
    bit = 1 << c
    # quick test: legal with all of them beside it means no inference (the rules are monotone)
    if legal_plays(rules, bit | could, trick, trick_no, broken, charged, led) & bit:
        return False
    for y in card_list(could):
        if legal_plays(rules, bit | 1 << y, trick, trick_no, broken, charged, led) & bit:
            return False
    return True


def soft_weights(view: SeatView) -> dict[int, tuple[float, float, float, float]]:
    """Likelihood factors per card and seat from discards and ducks (see the module's doc)."""
    if view.phase is not Phase.PLAY:
        return {}
    me = view.seat
    cp = view.rules.scoring_for(view.deal_kind).card_points
    hidden = ALL_CARDS & ~view.played & ~view.hand
    for s in range(4):
        hidden &= ~view.known_cards[s]
    bad = [y for y in card_list(hidden) if cp[y] > 0]
    if not bad:
        return {}
    w: dict[int, list[float]] = {}

    def scale(y: int, s: int, f: float) -> None:
        row = w.setdefault(y, [1.0, 1.0, 1.0, 1.0])
        row[s] *= f

    for trick_no, cards, seats in _history(view):
        if trick_no <= 1:
            continue  # first-trick rules often forbid dumping points
        led = cards[0] // 13
        win = cards[0]
        for c, s in zip(cards, seats):
            if s != me and len(cards) and c != cards[0]:
                if c // 13 != led:  # a discard: it kept every bigger point card it may hold
                    for y in bad:
                        if cp[y] > cp[c]:
                            scale(y, s, DISCARD_BIG if cp[y] >= 5 else DISCARD_SMALL)
                elif c < win:  # followed under the winner: a big card of the suit would have gone
                    for y in bad:
                        if y // 13 == led and cp[y] >= 5 and cp[c] < cp[y] and y < win:
                            scale(y, s, DUCK_BIG)
            if c // 13 == led and c > win:
                win = c
    return {y: (r[0], r[1], r[2], r[3]) for y, r in w.items()}


def infer(view: SeatView) -> Inference:
    """Everything the sampler uses about ``view``'s hidden cards (computed once per decision)."""
    return Inference(inferred_voids(view), soft_weights(view))


def sample_inferred(view: SeatView, inference: Inference, rng: random.Random, fast: bool = False) -> list[CardSet]:
    """Four hands consistent with ``view`` and the hard facts of ``inference``, weighted by its soft
    evidence. ``fast``: the unweighted cards are dealt by the compiled
    :func:`~moonshot.bots.search.quick_hands`."""
    me = view.seat
    if view.phase is Phase.PASS or view.phase is Phase.PILE:
        unseen = ALL_CARDS & ~view.dealt
        return sample_hands(me, view.dealt, unseen, (13, 13, 13, 13), (0, 0, 0, 0), (0, 0, 0, 0), rng)
    unseen = ALL_CARDS & ~view.hand & ~view.played
    counts = view.cards_left
    voids = inference.voids
    deal = quick_hands if fast else sample_hands
    if not inference.soft:
        return deal(me, view.hand, unseen, counts, view.known_cards, voids, rng)
    known = list(view.known_cards)
    try:
        known = _place_soft(me, unseen, counts, known, voids, inference.soft, rng)
        return deal(me, view.hand, unseen, counts, known, voids, rng)
    except Inconsistent:
        return deal(me, view.hand, unseen, counts, view.known_cards, voids, rng)


def _place_soft(
    me: int,
    unseen: CardSet,
    counts: Sequence[int],
    known: list[CardSet],
    voids: Sequence[int],
    soft: dict[int, tuple[float, float, float, float]],
    rng: random.Random,
) -> list[CardSet]:
    taken = 0
    for s in range(4):
        taken |= known[s]
    room = [0 if s == me else counts[s] - (known[s] & unseen).bit_count() for s in range(4)]
    cards = [c for c in soft if unseen >> c & 1 and not taken >> c & 1]
    rng.shuffle(cards)
    for c in cards:
        ws = soft[c]
        su = c // 13
        weights = [room[s] * ws[s] if s != me and room[s] > 0 and not voids[s] >> su & 1 else 0.0 for s in range(4)]
        total = sum(weights)
        if total <= 0.0:
            raise Inconsistent("no seat left for a weighted card")
        x = rng.random() * total
        pick = 3
        for s in range(4):
            if x < weights[s]:
                pick = s
                break
            x -= weights[s]
        while weights[pick] <= 0.0:  # (rounding at the top end)
            pick -= 1
        known[pick] |= 1 << c
        room[pick] -= 1
    return known


__all__ = ["Inference", "infer", "inferred_voids", "sample_inferred", "soft_weights"]
