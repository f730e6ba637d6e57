"""Kierki game files: round trips, lenient layout, and errors that name the line and the problem."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from moonshot.core.cards import parse_card
from moonshot.protocols.kierki.gamefile import (
    GameFileError,
    _main,
    format_game,
    format_game_shuffled,
    load_game,
    parse_game,
    parse_game_in_order,
    random_deals,
)

N = "2C3C4C5C6C7C8C9C10CJCQCKCAC"
E = "2D3D4D5D6D7D8D9D10DJDQDKDAD"
S = "2H3H4H5H6H7H8H9H10HJHQHKHAH"
W = "2S3S4S5S6S7S8S9S10SJSQSKSAS"
DEAL = f"5N\n{N}\n{E}\n{S}\n{W}\n"


def test_parses_a_deal() -> None:
    (d,) = parse_game(DEAL)
    assert d.kind == 5 and d.leader == 0
    assert d.hands[2] >> parse_card("KH") & 1
    assert d.hands[0] >> parse_card("10C") & 1


@given(st.integers(0, 2**32), st.lists(st.integers(1, 7), min_size=1, max_size=9))
def test_written_games_parse_back(seed: int, kinds: list[int]) -> None:
    deals = random_deals(random.Random(seed), kinds)
    assert parse_game(format_game(deals)) == deals
    assert parse_game(format_game_shuffled(deals, random.Random(seed))) == deals


def test_the_files_card_order_is_kept() -> None:
    text = DEAL.replace(N, "AC" + N[:-2])
    (spec,), (order,) = parse_game_in_order(text)
    assert [c for c in order[0][:2]] == [parse_card("AC"), parse_card("2C")]
    assert sum(1 << c for c in order[0]) == spec.hands[0]


def test_lenient_layout() -> None:
    text = "\r\n" + DEAL.replace("\n", "\r\n").replace("5N", " 5n ") + "\n\n" + DEAL.lower() + "\n"
    assert len(parse_game(text)) == 2


def _error(text: str) -> GameFileError:
    with pytest.raises(GameFileError) as e:
        parse_game(text)
    return e.value


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        (DEAL.replace("5N", "8N"), 1, "unknown deal type '8'"),
        (DEAL.replace("5N", "0N"), 1, "unknown deal type '0'"),
        (DEAL.replace("5N", "5X"), 1, "unknown seat 'X'"),
        (DEAL.replace("5N", "5NX"), 1, "trailing garbage"),
        (DEAL.replace("5N", "hello"), 1, "expected a deal header"),
        (DEAL.replace(N, N[:-2]), 2, "N has 12 cards, not 13"),
        (DEAL.replace(E, E + "AS"), 3, "E has 14 cards"),
        (DEAL.replace(S, S.replace("AH", "2H")), 4, "card 2H appears twice"),
        (DEAL.replace(W, W.replace("AS", "AH")), 5, "card AH given twice (already on line 4)"),
        (DEAL.replace(W, W.replace("AS", "1S")), 5, "not a card"),
        (DEAL.replace(f"{W}\n", ""), 5, "missing line: the cards of W"),
        (DEAL + "3S\n" + N + "\n", 8, "missing line: the cards of E"),
        (DEAL.replace(f"{S}\n", ""), 5, "missing line: the cards of W"),  # W's line was read as S's
        (DEAL + "garbage\n", 6, "expected a deal header"),
    ],
)
def test_errors_name_the_line_and_the_problem(text: str, line: int, words: str) -> None:
    e = _error(text)
    assert e.line == line, str(e)
    assert words in str(e), str(e)
    assert str(e).startswith(f"line {line}: ")


def test_a_header_where_cards_belong_is_a_missing_line() -> None:
    e = _error(f"1N\n{N}\n{E}\n2S\n{S}\n{W}\n")
    assert e.line == 4 and "found a deal header '2S'" in str(e)


def test_an_empty_file_is_an_error() -> None:
    assert "empty" in str(_error("\n \n"))


def test_load_game_reports_an_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(GameFileError) as e:
        load_game(str(tmp_path / "nope.txt"))
    assert "cannot read game file" in str(e.value)
    (tmp_path / "g.txt").write_text(DEAL)
    assert len(load_game(str(tmp_path / "g.txt"))) == 1


def test_generator_writes_a_playable_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert _main(["--seed", "5", "--types", "7134"]) == 0
    deals = parse_game(capsys.readouterr().out)
    assert [d.kind for d in deals] == [7, 1, 3, 4]
