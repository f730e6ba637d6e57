"""Cards: every notation parses and formats, set helpers, and errors that name the bad text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from moonshot.core.cards import (
    ACE_HEARTS,
    ALL_CARDS,
    HEARTS_MASK,
    JACK_DIAMONDS,
    QUEEN_SPADES,
    SUIT_MASKS,
    TEN_CLUBS,
    TWO_CLUBS,
    CardError,
    Notation,
    card,
    card_list,
    count,
    describe,
    format_card,
    format_cards,
    highest,
    lowest,
    parse_card,
    parse_card_set,
    rank_of,
    split_kierki_cards,
    suit_of,
    to_set,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2C", 0),
        ("AC", 12),
        ("2D", 13),
        ("JD", 22),
        ("TH", 34),
        ("Th", 34),
        ("th", 34),
        ("10H", 34),
        ("10h", 34),
        ("AH", 38),
        ("QS", 49),
        ("qs", 49),
        ("Qs", 49),
        ("AS", 51),
        ("  KD\t", 24),
        ("\n9c ", 7),
    ],
)
def test_parse_card_accepts_every_notation(text: str, expected: int) -> None:
    assert parse_card(text) == expected


def test_named_cards_are_where_the_layout_says() -> None:
    named = (TWO_CLUBS, TEN_CLUBS, JACK_DIAMONDS, ACE_HEARTS, QUEEN_SPADES)
    assert named == tuple(parse_card(t) for t in ("2C", "TC", "JD", "AH", "QS"))
    assert card(10, 3) == QUEEN_SPADES
    assert (suit_of(QUEEN_SPADES), rank_of(QUEEN_SPADES)) == (3, 10)
    assert HEARTS_MASK == SUIT_MASKS[2] == sum(1 << parse_card(r + "H") for r in "23456789TJQKA")


@pytest.mark.parametrize("bad", ["", "1H", "11H", "XC", "AX", "A", "QSS", "10", "T", "0H", "H2", "100H", "2 C"])
def test_parse_card_rejects_and_names_the_text(bad: str) -> None:
    with pytest.raises(CardError) as err:
        parse_card(bad)
    assert repr(bad) in str(err.value)


@pytest.mark.parametrize(
    ("notation", "ten", "queen", "two"),
    [
        (Notation.UPPER, "TH", "QS", "2C"),
        (Notation.GYM, "Th", "Qs", "2c"),
        (Notation.KIERKI, "10H", "QS", "2C"),
    ],
)
def test_format_card_in_each_notation(notation: Notation, ten: str, queen: str, two: str) -> None:
    assert format_card(parse_card("TH"), notation) == ten
    assert format_card(QUEEN_SPADES, notation) == queen
    assert format_card(TWO_CLUBS, notation) == two


def test_format_card_defaults_to_upper() -> None:
    assert format_card(parse_card("10c")) == "TC"


@pytest.mark.parametrize("bad", [-1, 52, 100])
def test_format_card_rejects_numbers_outside_the_deck(bad: int) -> None:
    with pytest.raises(CardError, match=str(bad)):
        format_card(bad)


@given(st.integers(0, 51), st.sampled_from(list(Notation)), st.booleans())
def test_every_card_round_trips_through_every_notation(c: int, notation: Notation, lower: bool) -> None:
    text = format_card(c, notation)
    assert parse_card(text.lower() if lower else text) == c


def test_all_52_cards_have_distinct_texts() -> None:
    for notation in Notation:
        assert len({format_card(c, notation) for c in range(52)}) == 52


def test_sets_list_lowest_first_and_keep_sequences_in_order() -> None:
    hand = parse_card_set(["AS", "2C", "th", "10D"])
    assert card_list(hand) == [0, 21, 34, 51]
    assert format_cards(hand) == ["2C", "TD", "TH", "AS"]
    assert format_cards([51, 0], Notation.KIERKI) == ["AS", "2C"]
    assert format_cards(hand, Notation.GYM) == ["2c", "Td", "Th", "As"]
    assert count(hand) == 4
    assert (lowest(hand), highest(hand)) == (0, 51)
    assert highest(hand & SUIT_MASKS[2]) == parse_card("TH")


def test_a_repeated_card_is_an_error_naming_it() -> None:
    with pytest.raises(CardError, match="QS"):
        parse_card_set(["QS", "2C", "qs"])
    with pytest.raises(CardError, match="2C"):
        to_set([0, 0])


def test_set_parsing_names_the_bad_card() -> None:
    with pytest.raises(CardError, match="'ZZ'"):
        parse_card_set(["2C", "ZZ"])


@given(st.integers(0, ALL_CARDS))
def test_card_list_and_to_set_are_inverse(mask: int) -> None:
    assert to_set(card_list(mask)) == mask
    assert count(mask) == len(card_list(mask))


@pytest.mark.parametrize(
    ("text", "cards"),
    [
        ("10C2DQH", ["TC", "2D", "QH"]),
        ("2C3C4C5C6C7C8C9C10CJCQCKCAC", [r + "C" for r in "23456789TJQKA"]),
        ("10H10S", ["TH", "TS"]),
        ("AS", ["AS"]),
        ("", []),
    ],
)
def test_kierki_run_together_lists(text: str, cards: list[str]) -> None:
    assert split_kierki_cards(text) == [parse_card(t) for t in cards]


@pytest.mark.parametrize(("text", "named"), [("10C2", "'2'"), ("QHX", "'X'"), ("10", "'10'"), ("1C2D", "'1C'")])
def test_kierki_lists_report_the_bad_piece(text: str, named: str) -> None:
    with pytest.raises(CardError) as err:
        split_kierki_cards(text)
    assert named in str(err.value)


@given(st.lists(st.integers(0, 51), unique=True, max_size=13))
def test_kierki_lists_round_trip(cards: list[int]) -> None:
    text = "".join(format_card(x, Notation.KIERKI) for x in cards)
    assert split_kierki_cards(text) == cards


def test_describe_groups_by_suit() -> None:
    assert describe(parse_card_set(["2C", "5C", "KC", "AH", "QS"])) == "C: 2 5 K | D: - | H: A | S: Q"


@given(st.integers(min_value=-(1 << 70), max_value=1 << 70))
def test_count_is_bit_count_for_any_int(x: int) -> None:
    """Compiled, count takes another way for card sets (a popcount of a machine word): the same answers."""
    assert count(x) == x.bit_count()


def test_count_at_the_edges_of_a_machine_word() -> None:
    for x in (0, 1, (1 << 52) - 1, (1 << 61) - 1, 1 << 61, (1 << 62) - 1, (1 << 63) - 1, 1 << 63, -1):
        assert count(x) == x.bit_count()
