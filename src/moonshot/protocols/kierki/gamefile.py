"""Kierki game-definition files: parse them into :class:`~moonshot.core.engine.DealSpec` lists, write them.

A file is a sequence of deals, each five lines::

    <deal type 1-7><leading seat N|E|S|W>
    <13 cards of N>
    <13 cards of E>
    <13 cards of S>
    <13 cards of W>

Cards are run together (``10H2C...``). Parsing is pure (text in, deals out) and every error names
the line and what is wrong with it. Accepted leniently: ``\\r\\n`` line ends, blanks around a line,
blank lines between deals, lower-case letters. :func:`random_deals` / :func:`format_game` write
files for tests and measurements.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from moonshot.core.cards import Notation as _Notation
from moonshot.core.cards import card_list, format_card
from moonshot.core.engine import DealSpec
from moonshot.protocols.kierki.codec import SEAT_LETTERS, CodecError, format_cards, split_cards

DEAL_TYPES = range(1, 8)


class GameFileError(ValueError):
    """A game file that cannot be played; the text names the line and the problem."""

    def __init__(self, line: int | None, problem: str) -> None:
        self.line = line
        self.problem = problem
        super().__init__(f"line {line}: {problem}" if line is not None else problem)


def _is_header(text: str) -> bool:
    return len(text) == 2 and text[0] in "1234567" and text[1].upper() in SEAT_LETTERS


CardOrder = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def parse_game(text: str) -> list[DealSpec]:
    """Parse a whole game file. Raises :class:`GameFileError`."""
    return parse_game_in_order(text)[0]


def parse_game_in_order(text: str) -> tuple[list[DealSpec], list[CardOrder]]:
    """Parse a game file, also keeping each hand's cards in the order the file gives them
    (the server deals them in that order, as the reference server does)."""
    lines = [(i + 1, raw.strip()) for i, raw in enumerate(text.splitlines())]
    lines = [(no, t) for no, t in lines if t]
    if not lines:
        raise GameFileError(None, "the game file has no deals (it is empty)")
    deals: list[DealSpec] = []
    orders: list[CardOrder] = []
    pos = 0
    while pos < len(lines):
        no, header = lines[pos]
        kind, leader = _parse_header(no, header)
        hands: list[tuple[int, ...]] = []
        seen: dict[int, int] = {}  # card -> line it was first given on
        for seat in range(4):
            pos += 1
            if pos >= len(lines):
                raise GameFileError(
                    no + seat + 1,
                    f"missing line: the cards of {SEAT_LETTERS[seat]} for the deal of line {no} "
                    f"(a deal is a header line and four lines of 13 cards: N, E, S, W)",
                )
            hno, htext = lines[pos]
            hands.append(_parse_hand(hno, htext, SEAT_LETTERS[seat], seen))
        pos += 1
        masks = [sum(1 << c for c in h) for h in hands]
        deals.append(DealSpec((masks[0], masks[1], masks[2], masks[3]), kind, leader))
        orders.append((hands[0], hands[1], hands[2], hands[3]))
    return deals, orders


def _parse_header(no: int, text: str) -> tuple[int, int]:
    if _is_header(text):
        return int(text[0]), SEAT_LETTERS.index(text[1].upper())
    if len(text) >= 1 and text[0].isdigit() and text[0] not in "1234567":
        raise GameFileError(no, f"unknown deal type {text[0]!r} in {text!r} (types are 1 to 7)")
    if len(text) == 2 and text[0] in "1234567":
        raise GameFileError(no, f"unknown seat {text[1]!r} in {text!r} (seats are N, E, S, W)")
    if len(text) > 2 and text[0] in "1234567" and text[1].upper() in SEAT_LETTERS:
        raise GameFileError(no, f"trailing garbage after the deal header: {text!r} (expected e.g. '3N')")
    raise GameFileError(no, f"expected a deal header <type 1-7><seat N|E|S|W> (e.g. '3N'), found {_show(text)}")


def _parse_hand(no: int, text: str, seat: str, seen: dict[int, int]) -> tuple[int, ...]:
    if _is_header(text):
        raise GameFileError(no, f"missing line: expected the 13 cards of {seat}, found a deal header {text!r}")
    try:
        cards = split_cards(text)
    except CodecError as e:
        raise GameFileError(no, f"bad card list for {seat}: {e}") from None
    if len(cards) != 13:
        raise GameFileError(no, f"{seat} has {len(cards)} card{'' if len(cards) == 1 else 's'}, not 13: {_show(text)}")
    for c in cards:
        if c in seen:
            where = "earlier on this line" if seen[c] == no else f"already on line {seen[c]}"
            raise GameFileError(no, f"card {format_card(c, _Notation.KIERKI)} given twice ({where})")
        seen[c] = no
    return cards


def _show(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:60] + "...")


def load_game(path: str) -> list[DealSpec]:
    """Read and parse a game file (I/O at the edge: the parser itself is :func:`parse_game`)."""
    return load_game_in_order(path)[0]


def load_game_in_order(path: str) -> tuple[list[DealSpec], list[CardOrder]]:
    """:func:`load_game`, keeping the file's card order (see :func:`parse_game_in_order`)."""
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise GameFileError(None, f"cannot read game file {path!r}: {e.strerror or e}") from None
    return parse_game_in_order(text)


def format_deal(spec: DealSpec) -> str:
    leader = spec.leader if spec.leader is not None else 0
    lines = [f"{spec.kind}{SEAT_LETTERS[leader]}"]
    lines += [format_cards(card_list(h)) for h in spec.hands]
    return "\n".join(lines) + "\n"


def format_game(specs: Sequence[DealSpec]) -> str:
    return "".join(format_deal(s) for s in specs)


def random_deal(rng: random.Random, kind: int, leader: int | None = None) -> DealSpec:
    deck = list(range(52))
    rng.shuffle(deck)
    hands = [sum(1 << c for c in deck[13 * s : 13 * s + 13]) for s in range(4)]
    return DealSpec((hands[0], hands[1], hands[2], hands[3]), kind, rng.randrange(4) if leader is None else leader)


def random_deals(rng: random.Random, kinds: Sequence[int] = tuple(DEAL_TYPES)) -> list[DealSpec]:
    """One random deal per entry of ``kinds`` (default: the seven contracts in order), random leaders."""
    return [random_deal(rng, k) for k in kinds]


def format_game_shuffled(specs: Sequence[DealSpec], rng: random.Random) -> str:
    """Like :func:`format_game` but each hand's cards in random order (parsers must not rely on order)."""
    out = []
    for spec in specs:
        leader = spec.leader if spec.leader is not None else 0
        out.append(f"{spec.kind}{SEAT_LETTERS[leader]}\n")
        for h in spec.hands:
            cards = card_list(h)
            rng.shuffle(cards)
            out.append(format_cards(cards) + "\n")
    return "".join(out)


__all__ = [
    "DEAL_TYPES",
    "GameFileError",
    "format_deal",
    "format_game",
    "format_game_shuffled",
    "load_game",
    "load_game_in_order",
    "parse_game",
    "parse_game_in_order",
    "random_deal",
    "random_deals",
]


def _main(argv: Sequence[str] | None = None) -> int:
    """``python -m moonshot.protocols.kierki.gamefile [--seed N] [--types 1234567]``: a random game file."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m moonshot.protocols.kierki.gamefile", description=_main.__doc__)
    ap.add_argument("--seed", type=int, default=None, help="random seed (default: a fresh one)")
    ap.add_argument("--types", default="1234567", help="deal types in order, e.g. 7777 (default 1234567)")
    args = ap.parse_args(argv)
    if not args.types or any(ch not in "1234567" for ch in args.types):
        ap.error("--types takes digits 1..7")
    print(format_game(random_deals(random.Random(args.seed), [int(ch) for ch in args.types])), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
