"""The ``duck`` bot: the simple player Turbo Hearts' server seated as ``duck`` in the seed's era.

It never takes a trick it can avoid and gets rid of its high cards:

- **pass** (and the keeper pile): the worst card three times over, the hand shrinking each time.
  A card's badness is its rank first (an ace is the worst), then how short its suit is in what
  is left of the hand (of two equal ranks, the one from the shorter suit goes);
- **charge** and **expose**: nothing, ever;
- **lead**: a random legal card;
- **follow**: the highest card of the led suit that stays under the trick's winning card (it
  ducks); when every card it may play beats the winner, the highest of them;
- **discard** (void in the led suit): the worst card by the same badness as the pass, over the
  hand it holds;
- **claims**: rejects every claim, as Turbo's bots did.

Nothing here reads a variant's name: the cards it may play come from the view, and the same
policy plays every variant (Kierki's contracts, Trend's exposure, Turbo's nines).
"""

from __future__ import annotations

import random

from moonshot.bots.random import choose_card
from moonshot.core.actions import Action, Charge, Expose, Pass, Play, RejectClaim
from moonshot.core.cards import SUIT_MASKS, CardSet, cards_in, count, highest, rank_of, suit_of
from moonshot.core.engine import Phase
from moonshot.core.views import SeatView


def badness(c: int, hand: CardSet) -> int:
    """How much the bot wants rid of ``c`` in ``hand``: rank first, then the shorter suit."""
    return 14 * rank_of(c) + 13 - count(hand & SUIT_MASKS[suit_of(c)])


def worst(cards: CardSet, hand: CardSet) -> int:
    """The card of ``cards`` (not empty) with the highest badness in ``hand``; of equals, the
    highest-numbered (the later suit in C, D, H, S)."""
    best, best_score = -1, -1
    for c in cards_in(cards):
        score = badness(c, hand)
        if score >= best_score:
            best, best_score = c, score
    return best


def duck_pass(hand: CardSet, k: int) -> CardSet:
    """The ``k`` cards the bot passes from ``hand``: the worst, then the worst of the rest..."""
    out = 0
    for _ in range(k):
        c = worst(hand, hand)
        out |= 1 << c
        hand &= ~(1 << c)
    return out


def duck_play(view: SeatView, rng: random.Random) -> int:
    """The card the bot plays now (``view.legal_plays`` not empty)."""
    legal = view.legal_plays
    if not view.trick:
        return choose_card(legal, rng)
    led = SUIT_MASKS[suit_of(view.trick[0][1])]
    follow = legal & led
    if not follow:
        return worst(legal, view.hand)
    winner = highest(sum(1 << c for _, c in view.trick) & led)
    under = follow & ((1 << winner) - 1)
    return highest(under) if under else highest(follow)


class DuckBot:
    """Turbo's ``duck``: passes its high cards, never charges, ducks every trick it can."""

    name = "duck"

    def answer_claim(self, view: SeatView, claimer: int, rng: random.Random) -> bool:
        return False

    def act(self, view: SeatView, rng: random.Random) -> Action:
        phase = view.phase
        seat = view.seat
        if phase is Phase.PLAY and view.legal_plays:
            return Play.of(seat, duck_play(view, rng))
        if phase is Phase.PASS or phase is Phase.PILE:
            return Pass(seat, duck_pass(view.hand, view.rules.pass_count))
        if phase is Phase.CHARGE:
            return Charge(seat, 0)
        if phase is Phase.EXPOSE:
            return Expose(seat, 0)
        if view.claimer is not None:  # a blocking claim waits for our answer
            return RejectClaim(seat, view.claimer)
        raise ValueError(f"seat {seat} has nothing to do in phase {phase.value}")


__all__ = ["DuckBot", "badness", "duck_pass", "duck_play", "worst"]
