"""Kierki wire format: the eight messages, their text form, and ``\\r\\n`` line framing.

Pure: no sockets, no clocks. :func:`parse_message` turns one line (without its terminator) into
a message object and raises :class:`CodecError` saying what is wrong; :func:`format_message` /
:func:`encode` write the exact form the spec gives (tens as ``10``, seats ``N E S W``).
:class:`LineBuffer` cuts a byte stream into lines: many messages per read, lines split across
reads, and a length limit so a peer that never sends ``\\r\\n`` cannot make us buffer forever.

Liberal in what we accept (real C++ peers differ): keywords, seats and cards in any case,
surrounding blanks ignored, a bare ``\\n`` ends a line too, and the seat lists of ``BUSY``,
``SCORE`` and ``TOTAL`` in any order. Exact in what we write.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from moonshot.core.cards import Card, CardError, format_card, parse_card
from moonshot.core.cards import Notation as _Notation

SEAT_LETTERS = "NESW"
MAX_LINE = 1024  # the longest real message (DEAL) is 45 bytes; SCORE with huge totals stays far below
TERMINATOR = b"\r\n"


class CodecError(ValueError):
    """A line that is not a well-formed Kierki message; the text says what is wrong."""


def seat_letter(seat: int) -> str:
    return SEAT_LETTERS[seat]


def parse_seat(text: str) -> int:
    i = SEAT_LETTERS.find(text.upper()) if len(text) == 1 else -1
    if i < 0:
        raise CodecError(f"not a seat: {text!r} (expected N, E, S or W)")
    return i


def format_cards(cards: tuple[Card, ...] | list[Card]) -> str:
    return "".join(format_card(c, _Notation.KIERKI) for c in cards)


def split_cards(text: str) -> tuple[Card, ...]:
    """Split a run-together card list (``"10C2DQH"``); every card at most once."""
    out: list[Card] = []
    i, n = 0, len(text)
    while i < n:
        j = i + 3 if text.startswith("10", i) else i + 2
        if j > n:
            raise CodecError(f"cut-off card {text[i:]!r} in {text!r}")
        try:
            c = parse_card(text[i:j])
        except CardError:
            raise CodecError(f"not a card: {text[i:j]!r} in {text!r}") from None
        if c in out:
            raise CodecError(f"card {format_card(c, _Notation.KIERKI)} appears twice in {text!r}")
        out.append(c)
        i = j
    return tuple(out)


# ----------------------------------------------------------------------------- messages
@dataclass(frozen=True, slots=True)
class Iam:
    """Client → server: the seat the client wants."""

    seat: int


@dataclass(frozen=True, slots=True)
class Busy:
    """Server → client: the wanted seat is taken; ``seats`` are the occupied ones. Then close."""

    seats: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Deal:
    """Server → client: a deal starts: contract 1..7, the seat that leads, the client's 13 cards."""

    kind: int
    leader: int
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class Trick:
    """Server → client: your turn, with the 0..3 cards on the table (play order).
    Client → server: the one card played."""

    number: int
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class Wrong:
    """Server → client: the last message was not acceptable now (in trick ``number``)."""

    number: int


@dataclass(frozen=True, slots=True)
class Taken:
    """Server → client: trick ``number`` (four cards from the leader's on) went to ``winner``."""

    number: int
    cards: tuple[Card, ...]
    winner: int


@dataclass(frozen=True, slots=True)
class Score:
    """Server → client: each seat's points of the deal just ended (indexed by seat N, E, S, W)."""

    points: tuple[int, int, int, int]


@dataclass(frozen=True, slots=True)
class Total:
    """Server → client: each seat's total points so far (indexed by seat)."""

    points: tuple[int, int, int, int]


Message = Iam | Busy | Deal | Trick | Wrong | Taken | Score | Total

_KEYWORDS = ("IAM", "BUSY", "DEAL", "TRICK", "WRONG", "TAKEN", "SCORE", "TOTAL")
_NUMBER = re.compile(r"[1-9][0-9]?")
_SEAT_POINTS = re.compile(r"([NESW])(-?[0-9]+)")


def _trick_number(text: str) -> int:
    if not _NUMBER.fullmatch(text) or not 1 <= int(text) <= 13:
        raise CodecError(f"not a trick number: {text!r} (expected 1..13 without leading zeros)")
    return int(text)


def _number_and_cards(body: str, counts: range, what: str) -> tuple[int, tuple[Card, ...]]:
    """Split ``<trick number><cards>``: try a one- and a two-digit number, keep the reading that parses.

    Unambiguous in practice: a card list never starts with a suit letter, so at most one reading
    leaves a valid list (``TRICK110H`` is trick 1 with ``10H``; ``TRICK12`` is trick 12, no cards).
    """
    readings: list[tuple[int, tuple[Card, ...]]] = []
    problems: list[tuple[int, str]] = []  # (how telling, what): the most telling one is reported
    for k in (1, 2):
        if len(body) < k or not body[:k].isdigit():
            continue
        try:
            number = _trick_number(body[:k])
        except CodecError as e:
            problems.append((3, str(e)))
            continue
        try:
            cards = split_cards(body[k:])
        except CodecError as e:
            problems.append((k, str(e)))
            continue
        if len(cards) not in counts:
            problems.append((0, f"{what} with {len(cards)} card(s) (expected {_describe(counts)})"))
            continue
        readings.append((number, cards))
    if not readings:
        why = min(problems)[1] if problems else "it does not start with a trick number"
        raise CodecError(f"bad {what} {body!r}: {why}")
    return readings[0]


def _describe(counts: range) -> str:
    lo, hi = counts.start, counts.stop - 1
    return str(lo) if lo == hi else f"{lo} to {hi}"


def _seat_points(body: str, what: str) -> tuple[int, int, int, int]:
    points: list[int | None] = [None, None, None, None]
    pos = 0
    for m in _SEAT_POINTS.finditer(body):
        if m.start() != pos:
            break
        seat = SEAT_LETTERS.index(m.group(1))
        if points[seat] is not None:
            raise CodecError(f"{what}: seat {m.group(1)} appears twice in {body!r}")
        points[seat] = int(m.group(2))
        pos = m.end()
    if pos != len(body):
        raise CodecError(f"{what}: cannot read {body[pos:]!r} (expected <seat><points> four times)")
    missing = [SEAT_LETTERS[s] for s, p in enumerate(points) if p is None]
    if missing:
        raise CodecError(f"{what}: no points for seat(s) {', '.join(missing)}")
    n, e, s, w = (p if p is not None else 0 for p in points)
    return (n, e, s, w)


def parse_message(line: str) -> Message:
    """Parse one line (terminator already removed). Raises :class:`CodecError`."""
    text = line.strip().upper()
    if not text:
        raise CodecError("empty message")
    keyword = next((k for k in _KEYWORDS if text.startswith(k)), None)
    if keyword is None:
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise CodecError(f"unknown message {shown!r} (expected one of {', '.join(_KEYWORDS)})")
    body = text[len(keyword) :]
    if keyword == "IAM":
        return Iam(parse_seat(body))
    if keyword == "BUSY":
        seats = tuple(parse_seat(ch) for ch in body)
        if len(set(seats)) != len(seats):
            raise CodecError(f"BUSY lists a seat twice: {body!r}")
        return Busy(seats)
    if keyword == "DEAL":
        if len(body) < 2 or not body[0].isdigit() or not 1 <= int(body[0]) <= 7:
            raise CodecError(f"bad DEAL {body!r}: expected a deal type 1..7, a seat and 13 cards")
        cards = split_cards(body[2:])
        if len(cards) != 13:
            raise CodecError(f"bad DEAL: {len(cards)} cards instead of 13")
        return Deal(int(body[0]), parse_seat(body[1]), cards)
    if keyword == "TRICK":
        number, cards = _number_and_cards(body, range(4), "TRICK")
        return Trick(number, cards)
    if keyword == "WRONG":
        return Wrong(_trick_number(body))
    if keyword == "TAKEN":
        if not body:
            raise CodecError("bad TAKEN: empty")
        number, cards = _number_and_cards(body[:-1], range(4, 5), "TAKEN")
        return Taken(number, cards, parse_seat(body[-1]))
    if keyword == "SCORE":
        return Score(_seat_points(body, "SCORE"))
    return Total(_seat_points(body, "TOTAL"))


def format_message(msg: Message) -> str:
    """The message's exact text, without the terminator."""
    if isinstance(msg, Iam):
        return "IAM" + seat_letter(msg.seat)
    if isinstance(msg, Busy):
        return "BUSY" + "".join(seat_letter(s) for s in msg.seats)
    if isinstance(msg, Deal):
        return f"DEAL{msg.kind}{seat_letter(msg.leader)}{format_cards(msg.cards)}"
    if isinstance(msg, Trick):
        return f"TRICK{msg.number}{format_cards(msg.cards)}"
    if isinstance(msg, Wrong):
        return f"WRONG{msg.number}"
    if isinstance(msg, Taken):
        return f"TAKEN{msg.number}{format_cards(msg.cards)}{seat_letter(msg.winner)}"
    word = "SCORE" if isinstance(msg, Score) else "TOTAL"
    return word + "".join(f"{seat_letter(s)}{p}" for s, p in enumerate(msg.points))


def encode(msg: Message) -> bytes:
    return format_message(msg).encode("ascii") + TERMINATOR


# ----------------------------------------------------------------------------- framing
@dataclass(frozen=True, slots=True)
class OverlongLine:
    """A line longer than the limit: dropped; ``head`` is its start (for the log), ``length`` the bytes seen."""

    head: str
    length: int


class LineBuffer:
    """Cuts a byte stream into lines ending in ``\\r\\n`` (or a bare ``\\n``).

    ``feed`` returns every complete line (terminator removed, decoded as ASCII with bad bytes
    replaced) and keeps the unfinished rest. A line growing past ``max_line`` bytes is reported
    once as :class:`OverlongLine` and the rest of it is skipped up to its terminator, so memory
    stays bounded whatever the peer sends.
    """

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self.max_line = max_line
        self._buf = bytearray()
        self._skipping = False  # inside an overlong line, waiting for its end

    @property
    def pending(self) -> int:
        """Bytes of an unfinished line held now."""
        return len(self._buf)

    def feed(self, data: bytes) -> list[str | OverlongLine]:
        out: list[str | OverlongLine] = []
        start = 0
        n = len(data)
        while start < n:
            nl = data.find(b"\n", start)
            end = n if nl < 0 else nl
            chunk = data[start:end]
            if not self._skipping:
                self._buf += chunk
                if len(self._buf) > self.max_line + 1:  # +1: a trailing '\r' may still come
                    # reported at once (not at its end, which may never come); the rest is skipped
                    out.append(OverlongLine(bytes(self._buf[:40]).decode("ascii", "replace"), len(self._buf)))
                    self._skipping = True
                    self._buf.clear()
            if nl < 0:
                break
            if self._skipping:
                self._skipping = False
            else:
                line = bytes(self._buf)
                self._buf.clear()
                if line.endswith(b"\r"):
                    line = line[:-1]
                if len(line) > self.max_line:
                    out.append(OverlongLine(line[:40].decode("ascii", "replace"), len(line)))
                else:
                    out.append(line.decode("ascii", "replace"))
            start = nl + 1
        return out


# ----------------------------------------------------------------------------- game report
def format_address(sockaddr: tuple[object, ...] | None) -> str:
    """``ip:port`` of a socket address; IPv4-mapped IPv6 addresses (dual-stack) shown as plain IPv4."""
    if not sockaddr or len(sockaddr) < 2:
        return "?"
    host = str(sockaddr[0])
    if host.startswith("::ffff:") and "." in host:
        host = host[len("::ffff:") :]
    return f"{host}:{sockaddr[1]}"


def printable(text: str) -> str:
    """``text`` with every byte a terminal could act on escaped as in a Python string literal.

    Unescaped, a client's line would reach stdout as it came: raw ESC, CR, NUL or C1 bytes would let
    it move the cursor, rewrite earlier report lines or forge new ones. Control characters (C0,
    DEL, C1) and anything outside printable ASCII are shown as ``\\x1b``, ``\\r``, ``\\x00``,
    ``\\ufffd``, and a backslash as ``\\\\``, so the report is one line per message and
    unambiguous (bytes above 0x7F reach it as U+FFFD from :class:`LineBuffer`'s ASCII decoding:
    ``\\ufffd``). Valid Kierki messages are printable ASCII without backslashes: unchanged.
    """
    if text.isascii() and text.isprintable() and "\\" not in text:
        return text
    return text.encode("unicode_escape").decode("ascii")


def report_line(sender: str, receiver: str, when: datetime, text: str) -> str:
    """One game-report line: ``[<sender ip:port>,<receiver ip:port>,<ISO time with ms>] <message>``
    (the message made :func:`printable`)."""
    return f"[{sender},{receiver},{when.isoformat(timespec='milliseconds')}] {printable(text)}"


__all__ = [
    "MAX_LINE",
    "SEAT_LETTERS",
    "Busy",
    "CodecError",
    "Deal",
    "Iam",
    "LineBuffer",
    "Message",
    "OverlongLine",
    "Score",
    "Taken",
    "Total",
    "Trick",
    "Wrong",
    "encode",
    "format_address",
    "format_cards",
    "format_message",
    "parse_message",
    "parse_seat",
    "printable",
    "report_line",
    "seat_letter",
    "split_cards",
]
