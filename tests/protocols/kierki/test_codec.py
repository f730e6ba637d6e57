"""Kierki wire format: every message both ways, lenient reading, clear errors, line framing."""

from __future__ import annotations

from datetime import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from moonshot.core.cards import parse_card
from moonshot.protocols.kierki.codec import (
    MAX_LINE,
    Busy,
    CodecError,
    Deal,
    Iam,
    LineBuffer,
    OverlongLine,
    Score,
    Taken,
    Total,
    Trick,
    Wrong,
    encode,
    format_address,
    format_message,
    parse_message,
    printable,
    report_line,
)


def cards(*names: str) -> tuple[int, ...]:
    return tuple(parse_card(n) for n in names)


HAND = cards("10H", "2H", "8H", "4H", "6C", "QS", "KC", "QH", "5H", "7C", "3H", "9D", "10C")


@pytest.mark.parametrize(
    ("text", "msg"),
    [
        ("IAMN", Iam(0)),
        ("IAMW", Iam(3)),
        ("BUSYNS", Busy((0, 2))),
        ("DEAL3E10H2H8H4H6CQSKCQH5H7C3H9D10C", Deal(3, 1, HAND)),
        ("TRICK1", Trick(1, ())),
        ("TRICK110H", Trick(1, cards("10H"))),
        ("TRICK12", Trick(12, ())),
        ("TRICK1310H", Trick(13, cards("10H"))),
        ("TRICK12C3C", Trick(1, cards("2C", "3C"))),
        ("TRICK1110C10DAS", Trick(11, cards("10C", "10D", "AS"))),
        ("WRONG7", Wrong(7)),
        ("TAKEN19H10HAHJHS", Taken(1, cards("9H", "10H", "AH", "JH"), 2)),
        ("TAKEN1310H2H3H4HN", Taken(13, cards("10H", "2H", "3H", "4H"), 0)),
        ("SCOREN0E0S18W0", Score((0, 0, 18, 0))),
        ("TOTALN46E54S82W18", Total((46, 54, 82, 18))),
    ],
)
def test_parses_and_writes_the_spec_forms(text: str, msg: object) -> None:
    assert parse_message(text) == msg
    assert format_message(parse_message(text)) == text
    assert encode(parse_message(text)) == text.encode() + b"\r\n"


@pytest.mark.parametrize(
    ("text", "msg"),
    [
        ("SCOREE0N0S18W0", Score((0, 0, 18, 0))),  # seat lists in any order
        ("TOTALW85S8N45E18", Total((45, 18, 8, 85))),
        ("BUSYENSW", Busy((1, 0, 2, 3))),
        ("trick110h", Trick(1, cards("10H"))),  # any case
        ("  IAMs \t", Iam(2)),  # surrounding blanks
        ("TRICK1qs", Trick(1, cards("QS"))),
    ],
)
def test_accepts_liberally(text: str, msg: object) -> None:
    assert parse_message(text) == msg


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "empty"),
        ("HELLO", "unknown message"),
        ("IAMX", "not a seat"),
        ("IAM", "not a seat"),
        ("TRICK0", "trick number"),
        ("TRICK14", "TRICK"),
        ("TRICK01", "trick number"),
        ("TRICK1XX", "not a card"),
        ("TRICK11H", "not a card"),
        ("TRICK1AHAH", "twice"),
        ("TRICK12C3C4C5C", "4 card"),
        ("TRICK1 10H", "not a card"),
        ("WRONG", "trick number"),
        ("DEAL8N2C", "deal type"),
        ("DEAL1N2C3C", "13"),
        ("TAKEN12C3C4CN", "3 card"),
        ("TAKEN", "empty"),
        ("SCOREN1E2", "no points for seat(s) S, W"),
        ("SCOREN1N2E3S4W5", "twice"),
        ("TOTALN1E2S3W4X", "cannot read"),
        ("BUSYNN", "twice"),
    ],
)
def test_rejects_with_a_clear_reason(text: str, words: str) -> None:
    with pytest.raises(CodecError) as e:
        parse_message(text)
    assert words in str(e.value)


card_lists = st.lists(st.integers(0, 51), unique=True)
seats = st.integers(0, 3)
numbers = st.integers(1, 13)
points = st.tuples(*[st.integers(0, 10_000)] * 4)
messages = st.one_of(
    st.builds(Iam, seats),
    st.builds(Busy, st.lists(seats, unique=True, max_size=4).map(tuple)),
    st.builds(Deal, st.integers(1, 7), seats, st.permutations(range(52)).map(lambda p: tuple(p[:13]))),
    st.builds(Trick, numbers, card_lists.map(lambda c: tuple(c[:3]))),
    st.builds(Wrong, numbers),
    st.builds(Taken, numbers, st.permutations(range(52)).map(lambda p: tuple(p[:4])), seats),
    st.builds(Score, points),
    st.builds(Total, points),
)


@given(messages)
def test_every_message_round_trips(msg: object) -> None:
    text = format_message(msg)  # type: ignore[arg-type]
    assert "\r" not in text and "\n" not in text and " " not in text
    assert parse_message(text) == msg


@given(st.lists(messages, min_size=1, max_size=20), st.data())
def test_line_buffer_reassembles_any_split(msgs: list[object], data: st.DataObject) -> None:
    stream = b"".join(encode(m) for m in msgs)  # type: ignore[arg-type]
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    buf = LineBuffer()
    got: list[str | OverlongLine] = []
    prev = 0
    for cut in [*cuts, len(stream)]:
        got += buf.feed(stream[prev:cut])
        prev = cut
    assert [parse_message(line) for line in got if isinstance(line, str)] == msgs
    assert buf.pending == 0


def test_line_buffer_many_messages_in_one_read_and_a_partial_one() -> None:
    buf = LineBuffer()
    assert buf.feed(b"SCOREN0E0S0W18\r\nTOTALN0E0S0W18\r\nDEAL3E9H") == ["SCOREN0E0S0W18", "TOTALN0E0S0W18"]
    assert buf.feed(b"5DKS8CQC3S10D7H2DJD6S4CAC\r\nTRICK1\r\n") == ["DEAL3E9H5DKS8CQC3S10D7H2DJD6S4CAC", "TRICK1"]


def test_line_buffer_accepts_a_bare_newline_and_keeps_blank_lines() -> None:
    assert LineBuffer().feed(b"IAMN\nTRICK1\r\n\r\n") == ["IAMN", "TRICK1", ""]


def test_a_megabyte_line_is_reported_once_and_never_buffered() -> None:
    buf = LineBuffer()
    out: list[str | OverlongLine] = []
    for _ in range(1024):
        out += buf.feed(b"A" * 1024)
        assert buf.pending <= MAX_LINE + 1
    out += buf.feed(b"AAA\r\nTRICK3\r\n")
    assert len(out) == 2
    assert isinstance(out[0], OverlongLine) and out[0].head.startswith("AAAA")
    assert out[1] == "TRICK3"


def test_a_line_exactly_at_the_limit_passes() -> None:
    buf = LineBuffer(max_line=10)
    assert buf.feed(b"0123456789\r\n") == ["0123456789"]
    over = buf.feed(b"0123456789A\r\nok\r\n")
    assert isinstance(over[0], OverlongLine) and over[1:] == ["ok"]


def test_non_ascii_bytes_make_a_malformed_line_not_a_crash() -> None:
    (line,) = LineBuffer().feed(b"IAM\xff\r\n")
    assert isinstance(line, str)
    with pytest.raises(CodecError):
        parse_message(line)


def test_report_line_format() -> None:
    when = datetime(2026, 11, 21, 10, 23, 58, 73000)
    line = report_line("127.0.0.1:53818", "127.0.0.1:36176", when, "TRICK14C")
    assert line == "[127.0.0.1:53818,127.0.0.1:36176,2026-11-21T10:23:58.073] TRICK14C"


@pytest.mark.parametrize(
    ("sent", "shown"),
    [
        ("TRICK14C", "TRICK14C"),
        ("IAM\x1b[2J", "IAM\\x1b[2J"),  # ESC: erase the screen
        ("TRICK1\rforged line", "TRICK1\\rforged line"),  # CR: overwrite the line on a terminal
        ("A\x00B\x07C\x7fD", "A\\x00B\\x07C\\x7fD"),  # NUL, BEL, DEL
        ("\x9b31m\x85", "\\x9b31m\\x85"),  # C1: CSI, NEL
        ("IAM\ufffd", "IAM\\ufffd"),  # a byte above 0x7F, as LineBuffer decodes it
        ("back\\slash", "back\\\\slash"),  # escaped too, so `\\x1b` in the report is never ambiguous
        ("tab\there\nnewline", "tab\\there\\nnewline"),
    ],
)
def test_the_report_escapes_what_a_terminal_would_act_on(sent: str, shown: str) -> None:
    assert printable(sent) == shown
    when = datetime(2026, 11, 21, 10, 23, 58, 73000)
    assert report_line("1.2.3.4:5", "6.7.8.9:10", when, sent).endswith("] " + shown)


@given(st.text())
def test_printable_is_one_line_of_printable_ascii_and_says_exactly_what_came(text: str) -> None:
    shown = printable(text)
    assert shown.isascii() and shown.isprintable()
    assert shown.encode("ascii").decode("unicode_escape") == text


@given(st.binary(max_size=300))
def test_any_bytes_from_a_client_report_as_one_clean_line(data: bytes) -> None:
    for line in LineBuffer().feed(data + b"\r\n"):
        text = line.head if isinstance(line, OverlongLine) else line
        shown = report_line("a:1", "b:2", datetime(2026, 1, 1), text)
        assert shown.isascii() and shown.isprintable()


def test_addresses_show_mapped_ipv4_plainly() -> None:
    assert format_address(("::ffff:127.0.0.1", 5000, 0, 0)) == "127.0.0.1:5000"
    assert format_address(("::1", 5000, 0, 0)) == "::1:5000"
    assert format_address(("10.0.0.1", 80)) == "10.0.0.1:80"
    assert format_address(None) == "?"
