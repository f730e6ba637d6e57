"""The pure tournament module: entrants, the duplicate schedule, statistics and exports."""

from __future__ import annotations

import csv
import io
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moonshot.core.engine import Game
from moonshot.core.events import HandDealt
from moonshot.play.tournament import (
    CSV_COLUMNS,
    GameResult,
    SeatResult,
    TournamentError,
    held_hands,
    make_spec,
    pair_meetings,
    parse_bot,
    parse_entrant,
    schedule,
    set_seed,
    standings,
    standings_csv,
    token_digest,
)


def test_bot_specs_read_like_the_command_line() -> None:
    assert parse_bot("search --think-ms 200") == ("search", {"think_ms": 200})
    assert parse_bot("search --simulations=40 --rollout random") == ("search", {"simulations": 40, "rollout": "random"})
    assert parse_entrant("fast=search --think-ms 5") == ("fast", "search", {"think_ms": 5})
    assert parse_entrant("heuristic") == (None, "heuristic", {})
    with pytest.raises(TournamentError, match="expected --option"):
        parse_bot("search 200")
    with pytest.raises(TournamentError, match="needs a bot"):
        parse_bot("  ")


def test_specs_name_entrants_uniquely_and_keep_only_token_digests() -> None:
    spec = make_spec("standard", 2, ["random", "random", "search --think-ms 5"], ["alice"], tokens=["s3cret"])
    names = [e.name for e in spec.entrants]
    assert names == ["random", "random#2", "search(think_ms=5)", "alice"]
    alice = spec.entrants[-1]
    assert alice.external and alice.token_digest == token_digest("s3cret")
    assert "s3cret" not in repr(spec.to_json()) and "token_digest" not in spec.to_json()["entrants"][-1]
    with pytest.raises(TournamentError, match="at least two"):
        make_spec("standard", 1, ["random"])
    with pytest.raises(TournamentError, match=r"unknown variant|no variant"):
        make_spec("chess", 1, ["random", "random"])
    with pytest.raises(TournamentError, match="two entrants are named"):
        make_spec("standard", 1, ["random"], ["random"], tokens=["x"])


def test_a_deal_set_deals_the_same_cards_in_every_rotation() -> None:
    spec = make_spec("standard", 1, ["random"] * 4, deals_per_set=4)
    rules = spec.rules()
    assert rules.deals == 4 and rules.name == "standard-4deals"
    seed = set_seed(0, 0)
    assert seed == set_seed(0, 0) != set_seed(0, 1) != set_seed(1, 0)
    a, b = Game(rules, seed), Game(rules, seed)
    hands_a = [e for e in a.log if isinstance(e, HandDealt)]
    hands_b = [e for e in b.log if isinstance(e, HandDealt)]
    assert hands_a == hands_b and hands_a


@pytest.mark.parametrize("n", [2, 4, 5, 6, 8, 12])
def test_every_entrant_holds_every_hand_of_every_set_once(n: int) -> None:
    spec = make_spec("standard", 5, ["random"] * n, seed=3)
    games = schedule(spec)
    seated = len(spec.seated())
    assert seated % 4 == 0 and seated >= n
    assert len(games) == 5 * (seated // 4) * 4
    for s in range(5):
        in_set = [g for g in games if g.set_index == s]
        assert {g.seed for g in in_set} == {set_seed(3, s)}  # every table of a set: the same cards
        for e in range(seated):
            chairs = sorted(c for g in in_set for c, x in enumerate(g.seats) if x == e)
            assert chairs == [0, 1, 2, 3]
            # and against the same three opponents at each rotation
            tables = {g.table for g in in_set if e in g.seats}
            assert len(tables) == 1


def test_pairs_meet_about_equally_often() -> None:
    spec = make_spec("standard", 14, ["random"] * 8, seed=11)
    meets = pair_meetings(schedule(spec), 8)
    counts = [meets[a][b] for a, b in itertools.combinations(range(8), 2)]
    # 14 sets x 2 tables x 6 pairs = 168 meetings over 28 pairs: 6 each when perfectly even
    assert sum(counts) == 168
    assert max(counts) - min(counts) <= 2, counts


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 16), st.integers(1, 6), st.integers(0, 2**32))
def test_the_schedule_is_a_function_of_the_seed(n: int, sets: int, seed: int) -> None:
    spec = make_spec("standard", sets, ["random"] * n, seed=seed)
    assert schedule(spec) == schedule(spec)
    for (e, _), chairs in held_hands(_fake_results(spec), sets).items():
        assert chairs == [0, 1, 2, 3], e


def _fake_results(spec, points=None):  # type: ignore[no-untyped-def]
    out = []
    for g in schedule(spec):
        seats = []
        for chair, e in enumerate(g.seats):
            pts = points(g, chair, e) if points else [chair, 13 - chair]
            seats.append(SeatResult(e, pts, sum(pts), 1.0 if chair == 0 else 0.0))
        out.append(GameResult(g.number, g.set_index, g.table, g.rotation, f"g{g.number}", seats))
    return out


def test_standings_rank_by_points_per_deal_with_paired_differences() -> None:
    spec = make_spec("standard", 2, ["a=random", "b=random", "c=random", "d=random"], deals_per_set=2)

    def points(g, chair, e):  # type: ignore[no-untyped-def]
        return [e, e]  # entrant e takes e points every deal, whatever its hand

    table = standings(spec, _fake_results(spec, points))
    rows = table["entrants"]
    assert [r["entrant"] for r in rows] == ["a", "b", "c", "d"] and table["lower_is_better"]
    assert rows[0]["mean_points_per_deal"] == 0 and rows[3]["mean_points_per_deal"] == 3
    assert rows[0]["deals"] == 2 * 4 * 2 and rows[0]["games"] == 8
    pair = next(p for p in table["paired"] if p["entrant"] == "d" and p["opponent"] == "a")
    assert pair["difference"] == 3 and pair["deals"] == 4  # 2 sets x 2 deals, shared
    text = standings_csv(table)
    parsed = list(csv.DictReader(io.StringIO(text)))
    assert tuple(parsed[0]) == CSV_COLUMNS and parsed[0]["entrant"] == "a"


def test_trend_ranks_the_highest_score_first() -> None:
    spec = make_spec("trend", 1, ["a=random", "b=random", "c=random", "d=random"])
    table = standings(spec, _fake_results(spec, lambda g, chair, e: [-e * 10]))
    assert not table["lower_is_better"]
    assert [r["entrant"] for r in table["entrants"]] == ["a", "b", "c", "d"]
