"""Card play's small rules over plain ints: one source for the rules kernel and the search deal.

Which card takes a trick, which card breaks hearts, whether a trick takes another card, whether a
deal has ended. :mod:`moonshot.kernel` compiles these functions with numba (into its rollouts and
the batched env's loops, where they inline); :class:`moonshot.bots.playout.Deal` calls them as
they are, compiled with mypyc in the real build. So they take and return ints and bools only,
and read no module state but int constants.

(Kept outside the ``kernel`` package so that importing them does not import numba.)
"""

from __future__ import annotations

from typing import Final

from moonshot.core.cards import ALL_CARDS, NINES, QUEEN_SPADES

NINE_RANK: Final = NINES[0]  # the nine of suit s is card 13 * s + NINE_RANK


def beats(c: int, best: int) -> bool:
    """Card ``c``, played to a trick whose winning card so far is ``best``, takes it over: it
    follows ``best``'s suit (the led suit) and ranks higher. The first card of a trick is its
    ``best`` to start with."""
    return c // 13 == best // 13 and c > best


def breaks_hearts(c: int, queen_breaks: int) -> bool:
    """Playing ``c`` breaks hearts: a heart, or the queen of spades where the rules say so."""
    return c // 13 == 2 or (c == QUEEN_SPADES and queen_breaks != 0)


def led_nine(c: int, led_card: int) -> bool:
    """``c`` is the nine of the suit ``led_card`` led (Turbo's nines)."""
    return c == led_card // 13 * 13 + NINE_RANK


def trick_goes_on(n: int, next_hand: int, nine_in_first_four: bool) -> bool:
    """After the trick's ``n``-th card, the next seat (holding ``next_hand``) plays to it too.

    Four cards make a trick; with the nines rule a nine of the led suit among the first four makes
    it eight (``nine_in_first_four``: the caller's check, made only where the rules have nines),
    cut short where the next seat has no card left."""
    if n < 4:
        return True
    if n >= 8 or next_hand == 0:
        return False
    return n > 4 or nine_in_first_four


def deal_ends(played: int, trick_no: int, early_end: int, per_trick: int, point_cards: int, last_numbered: int) -> bool:
    """The deal ends after trick ``trick_no`` (``played``: every card played so far): every card is
    out, or, with the early-end rule and no points per trick, every card with points is, and no
    later trick number carries points."""
    if played == ALL_CARDS:
        return True
    return early_end != 0 and per_trick == 0 and (point_cards & ~played) == 0 and last_numbered <= trick_no
