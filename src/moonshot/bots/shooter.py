"""The shooter: the heuristic player that goes for the moon whenever its hand allows.

:class:`ShooterBot` is :class:`~moonshot.bots.heuristic.HeuristicBot` with a much bolder idea
of when to shoot: it turns to taking every trick as soon as its remaining hand is strong (few
cards that anything unseen outranks) and nobody else has taken a heart or the queen of spades,
without waiting for the hearts to come to it first; and with a strong hand as dealt it passes its
lowest cards instead of its dangerous ones. It is the field to measure moon defence against
(``moonshot arena --field shooter``): it shoots far more often than ``heuristic`` does, and
plays like it otherwise. Pure and deterministic, like the heuristic.
"""

from __future__ import annotations

import random

from moonshot.bots.heuristic import HeuristicBot, Weights, _Eval
from moonshot.core.actions import Action, Pass
from moonshot.core.cards import ALL_CARDS, HEARTS_MASK, QUEEN_SPADES, SUIT_MASKS, CardSet, cards_in
from moonshot.core.engine import Phase
from moonshot.core.rules import MoonRule, Rules
from moonshot.core.views import SeatView

_MOON_CARDS = HEARTS_MASK | (1 << QUEEN_SPADES)


def losers(hand: CardSet, out: CardSet, slack: int = 0) -> int:
    """Cards of ``hand`` that more than ``slack`` cards of ``out`` outrank in their suit, less the
    long-suit cards that the others run out of (a suit of mine longer than theirs: its tail wins)."""
    n = 0
    for s in range(4):
        mine = hand & SUIT_MASKS[s]
        if not mine:
            continue
        theirs = out & SUIT_MASKS[s]
        lost = 0
        for c in cards_in(mine):
            above = theirs & ~((2 << c) - 1)
            if above.bit_count() > slack:
                lost += 1
        # once the others' cards of the suit are gone, my remaining cards of it all win
        spare = mine.bit_count() - theirs.bit_count()
        n += max(0, lost - max(0, spare)) if spare > 0 else lost
    return n


def high_card_points(hand: CardSet) -> int:
    """Ace 4, king 3, queen 2, jack 1 (the bridge count)."""
    return sum(max(0, c % 13 - 8) for c in cards_in(hand))


def moon_hand(hand: CardSet, rules: Rules, kind: int = 0) -> bool:
    """A hand worth trying to shoot with from the start: high cards, and hearts led by an honour."""
    if rules.moon is MoonRule.NONE or rules.scoring_for(kind).card_points[QUEEN_SPADES] <= 0:
        return False
    hearts = hand & HEARTS_MASK
    top_hearts = (hearts >> 36 & 0b111).bit_count()  # of AH, KH, QH (bits 38, 37, 36)
    if hearts.bit_count() < 3 or top_hearts < 1:
        return False
    return high_card_points(hand) + hearts.bit_count() >= 18 or losers(hand, ALL_CARDS & ~hand, slack=1) <= 5


class _ShooterEval(_Eval):
    def _can_shoot(self, view: SeatView, vals: list[float], w: Weights) -> bool:
        if view.rules.moon is MoonRule.NONE or vals[QUEEN_SPADES] <= 0:
            return False
        me = view.seat
        if any(view.taken[s] & _MOON_CARDS for s in range(4) if s != me):
            return False  # someone else has a point card: no moon
        got = view.taken[me] & _MOON_CARDS
        out = view.unseen
        n = view.hand.bit_count()
        if (got & HEARTS_MASK).bit_count() >= 3 or got >> QUEEN_SPADES & 1:
            # already on the way: keep going unless the hand has collapsed
            return losers(view.hand, out) <= max(2, n // 2)
        if view.trick_no <= 3 and moon_hand(view.hand | (got & ~HEARTS_MASK), view.rules, view.deal_kind):
            return True
        return losers(view.hand, out, slack=1) <= max(3, n // 3) and (view.hand & HEARTS_MASK).bit_count() >= 2


class ShooterBot(HeuristicBot):
    """The heuristic player, bent on shooting the moon whenever its hand allows it."""

    name = "shooter"

    def __init__(self, weights: Weights | None = None) -> None:
        super().__init__(weights or Weights(shoot_trick=4.0))

    def evaluator(self, view: SeatView) -> _ShooterEval:
        return _ShooterEval(view, self.weights)

    def act(self, view: SeatView, rng: random.Random) -> Action:
        ph = view.phase
        if (ph is Phase.PASS or ph is Phase.PILE) and moon_hand(view.hand, view.rules, view.deal_kind):
            k = view.rules.pass_count
            # keep the hearts and the high cards: pass the lowest non-hearts (then the lowest hearts)
            ranked = sorted(cards_in(view.hand), key=lambda c: (c // 13 == 2, c % 13, c))
            return Pass(view.seat, sum(1 << c for c in ranked[:k]))
        return super().act(view, rng)


__all__ = ["ShooterBot", "high_card_points", "losers", "moon_hand"]
