"""Cards and card sets, and every text notation the protocols use for them.

A card is an ``int`` in ``0..51``: ``suit * 13 + rank`` with suits in bridge order
(clubs 0, diamonds 1, hearts 2, spades 3) and ranks ``0`` (two) to ``12`` (ace).
A set of cards is an ``int`` bit mask (bit ``card`` set when the card is in the set), so
hands, tricks and "cards seen" are plain integers and set algebra is a few machine ops.

Notations:

* ``"TH"`` (``Notation.UPPER``): Trend, Sessions and Turbo; the ten is ``T``.
* ``"Th"`` (``Notation.GYM``): Gym Hearts; rank upper case, suit lower case.
* ``"10H"`` (``Notation.KIERKI``): Kierki; the ten is ``10``.

:func:`parse_card` accepts all of them (and either case), so codecs can be liberal in
what they accept and exact in what they write.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from enum import Enum
from typing import Final

try:
    from mypy_extensions import i64
except ImportError:  # pragma: no cover - without mypy nothing is compiled, and count never needs it
    i64 = int  # type: ignore[misc]

Card = int
CardSet = int

# Final constants: compiled with mypyc (make compile) they are C constants, not dict lookups.
# Tuples are typed tuple[X, ...]: indexing a fixed-length tuple type by a variable would box a
# new tuple object on every lookup.
CLUBS: Final = 0
DIAMONDS: Final = 1
HEARTS: Final = 2
SPADES: Final = 3
SUITS: Final[tuple[int, ...]] = (CLUBS, DIAMONDS, HEARTS, SPADES)
SUIT_LETTERS: Final = "CDHS"
RANK_LETTERS: Final = "23456789TJQKA"
SUIT_NAMES: Final[tuple[str, ...]] = ("clubs", "diamonds", "hearts", "spades")

FULL_SUIT: Final = (1 << 13) - 1
CLUBS_MASK: Final = FULL_SUIT
DIAMONDS_MASK: Final = FULL_SUIT << 13
HEARTS_MASK: Final = FULL_SUIT << 26
SPADES_MASK: Final = FULL_SUIT << 39
SUIT_MASKS: Final[tuple[CardSet, ...]] = (CLUBS_MASK, DIAMONDS_MASK, HEARTS_MASK, SPADES_MASK)
ALL_CARDS: Final = (1 << 52) - 1


class CardError(ValueError):
    """Text that does not name a card (or a set of distinct cards)."""


def card(rank: int, suit: int) -> Card:
    """The card of ``rank`` (0 = two .. 12 = ace) in ``suit``."""
    return suit * 13 + rank


def suit_of(c: Card) -> int:
    return c // 13


def rank_of(c: Card) -> int:
    return c % 13


class Notation(Enum):
    UPPER = "upper"  # TH, 2C, QS
    GYM = "gym"  # Th, 2c, Qs
    KIERKI = "kierki"  # 10H, 2C, QS


_RANK_FROM_TEXT = {ch: i for i, ch in enumerate(RANK_LETTERS)}
_RANK_FROM_TEXT["10"] = 8
_SUIT_FROM_TEXT = {ch: i for i, ch in enumerate(SUIT_LETTERS)}


def parse_card(text: str) -> Card:
    """Parse ``TH``, ``Th``, ``th``, ``10H`` or ``10h``; raise :class:`CardError` naming the text."""
    t = text.strip().upper()
    if 2 <= len(t) <= 3:
        rank = _RANK_FROM_TEXT.get(t[:-1])
        suit = _SUIT_FROM_TEXT.get(t[-1])
        if rank is not None and suit is not None:
            return suit * 13 + rank
    raise CardError(f"not a card: {text!r} (expected a rank 2-9, T/10, J, Q, K, A and a suit C, D, H, S)")


def format_card(c: Card, notation: Notation = Notation.UPPER) -> str:
    if not 0 <= c < 52:
        raise CardError(f"not a card number: {c!r} (expected 0..51)")
    rank, suit = RANK_LETTERS[c % 13], SUIT_LETTERS[c // 13]
    if notation is Notation.GYM:
        return rank + suit.lower()
    if notation is Notation.KIERKI and rank == "T":
        return "10" + suit
    return rank + suit


def cards_in(cards: CardSet) -> Iterator[Card]:
    """The cards of a set, lowest first (clubs 2 .. spades ace)."""
    while cards:
        low = cards & -cards
        yield low.bit_length() - 1
        cards ^= low


def card_list(cards: CardSet) -> list[Card]:
    """The cards of a set as a list, lowest first."""
    out = []
    while cards:
        low = cards & -cards
        out.append(low.bit_length() - 1)
        cards ^= low
    return out


def to_set(cards: Iterable[Card]) -> CardSet:
    """A card set from cards; raises :class:`CardError` on a repeated card."""
    result = 0
    for c in cards:
        bit = 1 << c
        if result & bit:
            raise CardError(f"card {format_card(c)} appears twice")
        result |= bit
    return result


def count(cards: CardSet) -> int:
    """How many cards ``cards`` holds (``cards.bit_count()``).

    Compiled (mypyc), ``int.bit_count`` is a method looked up by name on a boxed number, about
    three times the cost of counting the bits of a 64-bit word in registers; the bots count
    cards a dozen times a decision. As Python, the method is the fastest way."""
    if _NATIVE and 0 <= cards < _SMALL:
        return int(_popcount64(i64(cards)))
    return cards.bit_count()


def _popcount64(v: i64) -> i64:
    # the bits of each 2, 4 and 8-bit field summed in place, then the eight bytes summed
    v = v - ((v >> 1) & 0x5555555555555555)
    v = (v & 0x3333333333333333) + ((v >> 2) & 0x3333333333333333)
    v = (v + (v >> 4)) & 0x0F0F0F0F0F0F0F0F
    return ((v * 0x0101010101010101) >> 56) & 0xFF


# True when this module runs compiled: a compiled module's file is its extension module
_NATIVE: Final = not __file__.endswith(".py")
# below 2**62: compiled, such a number is held in the machine word itself (a bigger one is an
# object, and comparing with it would be a generic call)
_SMALL: Final = 1 << 61


def parse_cards(texts: Iterable[str]) -> list[Card]:
    return [parse_card(t) for t in texts]


def parse_card_set(texts: Iterable[str]) -> CardSet:
    """Parse distinct cards into a set; a repeated card is an error."""
    return to_set(parse_cards(texts))


def format_cards(cards: CardSet | Iterable[Card], notation: Notation = Notation.UPPER) -> list[str]:
    """Format a set (lowest first) or a sequence of cards (in its order)."""
    seq = cards_in(cards) if isinstance(cards, int) else cards
    return [format_card(c, notation) for c in seq]


def split_kierki_cards(text: str) -> list[Card]:
    """Split Kierki's run-together card list (``"10C2DQH"``) into cards."""
    out: list[Card] = []
    i, n = 0, len(text)
    while i < n:
        j = i + 3 if text.startswith("10", i) else i + 2
        if j > n:
            raise CardError(f"cut-off card list: {text!r} (left over: {text[i:]!r})")
        out.append(parse_card(text[i:j]))
        i = j
    return out


def highest(cards: CardSet) -> Card:
    """The highest-numbered card of a non-empty set (within one suit: the highest rank)."""
    return cards.bit_length() - 1


def lowest(cards: CardSet) -> Card:
    return (cards & -cards).bit_length() - 1


def describe(cards: CardSet) -> str:
    """Human-readable set, by suit: ``"C: 2 5 K | D: - | H: A | S: Q"``."""
    parts = []
    for s in SUITS:
        ranks = [RANK_LETTERS[c % 13] for c in cards_in(cards & SUIT_MASKS[s])]
        parts.append(f"{SUIT_LETTERS[s]}: {' '.join(ranks) or '-'}")
    return " | ".join(parts)


TWO_CLUBS: Final = 0  # card(0, CLUBS)
NINE_CLUBS: Final = 7  # card(7, CLUBS)
TEN_CLUBS: Final = 8  # card(8, CLUBS)
JACK_DIAMONDS: Final = 22  # card(9, DIAMONDS)
QUEEN_SPADES: Final = 49  # card(10, SPADES)
KING_HEARTS: Final = 37  # card(11, HEARTS)
ACE_HEARTS: Final = 38  # card(12, HEARTS)

NINES: Final[tuple[int, ...]] = tuple(card(7, s) for s in SUITS)
QUEENS_MASK: Final = sum(1 << card(10, s) for s in SUITS)
KINGS_MASK: Final = sum(1 << card(11, s) for s in SUITS)
JACKS_MASK: Final = sum(1 << card(9, s) for s in SUITS)
