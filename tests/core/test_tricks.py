"""Card play's small rules over plain ints (the kernel compiles them; the search deal calls them)."""

from __future__ import annotations

from moonshot.core.cards import ALL_CARDS, HEARTS_MASK, NINES, QUEEN_SPADES, TWO_CLUBS, card
from moonshot.core.tricks import beats, breaks_hearts, deal_ends, led_nine, trick_goes_on


def test_beats_follows_the_led_suit_higher() -> None:
    assert beats(TWO_CLUBS + 5, TWO_CLUBS)
    assert not beats(TWO_CLUBS, TWO_CLUBS + 5)
    assert not beats(QUEEN_SPADES, TWO_CLUBS)  # another suit never takes the trick


def test_hearts_break_on_a_heart_and_on_the_queen_where_the_rules_say() -> None:
    assert breaks_hearts(card(0, 2), 0)
    assert not breaks_hearts(QUEEN_SPADES, 0)
    assert breaks_hearts(QUEEN_SPADES, 1)


def test_a_nine_of_the_led_suit_makes_an_eight_card_trick() -> None:
    assert led_nine(NINES[1], card(3, 1)) and not led_nine(NINES[2], card(3, 1))
    assert trick_goes_on(3, 0, False)
    assert not trick_goes_on(4, 1, False)
    assert trick_goes_on(4, 1, True) and trick_goes_on(6, 1, False)
    assert not trick_goes_on(4, 0, True)  # the next seat has no card left
    assert not trick_goes_on(8, 1, True)


def test_a_deal_ends_with_its_cards_or_early_when_the_points_are_out() -> None:
    assert deal_ends(ALL_CARDS, 13, 0, 0, HEARTS_MASK, 0)
    out = HEARTS_MASK | 1 << QUEEN_SPADES
    assert not deal_ends(out, 7, 0, 0, out, 0)
    assert deal_ends(out, 7, 1, 0, out, 0)
    assert not deal_ends(out, 7, 1, 1, out, 0)  # points per trick: every trick counts
    assert not deal_ends(out, 7, 1, 0, out, 13)  # the last trick carries points
