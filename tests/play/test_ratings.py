"""Ratings from game results: ranks with ties, OpenSkill updates, who is rated, and the proof that
real games order the bots (heuristic above random) while the uncertainty shrinks."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from moonshot.core.variants import find_variant
from moonshot.play.ratings import START_MU, START_SIGMA, Ledger, PlayerId, Rating, player_id, pool, ranks, rate
from moonshot.play.sim import play_game

A, B, C, D = (PlayerId(n) for n in "abcd")


def test_lower_totals_rank_first_and_ties_share_a_rank() -> None:
    assert ranks([30, 50, 30, 0]) == [2, 4, 2, 1]
    assert ranks([10, 10, 10, 10]) == [1, 1, 1, 1]
    assert ranks([30, 50, 30, 0], lowest_wins=False) == [2, 1, 2, 4]


@given(st.lists(st.integers(-200, 200), min_size=4, max_size=4), st.booleans())
def test_ranks_are_competition_ranks(totals: list[int], lowest_wins: bool) -> None:
    r = ranks(totals, lowest_wins)
    assert min(r) == 1
    for i in range(4):
        better = sum(1 for t in totals if (t < totals[i] if lowest_wins else t > totals[i]))
        assert r[i] == better + 1
        for j in range(4):
            assert (r[i] == r[j]) == (totals[i] == totals[j])


def test_the_winner_gains_the_last_loses_and_everyone_is_surer() -> None:
    changes = {c.player: c for c in rate({}, [A, B, C, D], [0, 26, 40, 60])}
    assert changes[A].after.mu > START_MU > changes[D].after.mu
    assert changes[A].rank == 1 and changes[D].rank == 4 and changes[D].total == 60
    assert all(c.after.sigma < START_SIGMA and c.after.games == 1 for c in changes.values())
    assert changes[A].after.ordinal > changes[B].after.ordinal > changes[C].after.ordinal > changes[D].after.ordinal


def test_equal_totals_give_equal_ratings() -> None:
    changes = {c.player: c.after for c in rate({}, [A, B, C, D], [10, 30, 30, 50])}
    assert changes[B] == changes[C]
    assert changes[A].mu > changes[B].mu > changes[D].mu


def test_one_player_in_several_seats_gets_the_mean_of_its_seats() -> None:
    bot = PlayerId("heuristic", bot=True)
    seats = [A, bot, bot, bot]
    changes = {c.player: c for c in rate({}, seats, [80, 10, 20, 30])}
    assert set(changes) == {A, bot}
    assert changes[bot].seats == (1, 2, 3) and changes[bot].rank == 1 and changes[bot].total == 10
    assert changes[bot].after.games == 1
    assert changes[A].after.mu < START_MU < changes[bot].after.mu


def test_a_game_against_oneself_is_not_rated() -> None:
    bot = PlayerId("random", bot=True)
    assert rate({}, [bot] * 4, [10, 20, 30, 40]) == []


def test_a_known_player_starts_from_its_rating() -> None:
    strong = Rating(35.0, 2.0, 40)
    fresh = {c.player: c for c in rate({A: strong}, [A, B, C, D], [0, 10, 20, 30])}
    assert fresh[A].before == strong and fresh[A].after.games == 41
    assert fresh[A].after.mu - 35.0 < fresh[B].before.mu  # an expected win moves little
    assert fresh[B].before == Rating()


def test_who_is_rated() -> None:
    assert player_id({"name": "moonshot_heuristic(7)", "kind": "bot", "bot": "heuristic"}) == PlayerId(
        "heuristic", True
    )
    assert player_id({"name": "alice(12)", "kind": "human"}, "sessions") == PlayerId("alice")
    assert player_id({"name": "alice(12)", "kind": "human"}, "turbo") == PlayerId("alice(12)")
    assert player_id({"name": "", "kind": "empty"}) is None
    assert str(PlayerId("search --simulations 200", True)) == "search --simulations 200 (bot)"


def test_turbo_charging_orders_share_one_pool() -> None:
    assert pool("turbo-blind-chain") == pool("turbo") == "turbo"
    assert pool("standard") == "standard" and pool("sessions") == "sessions"


def test_real_games_rate_heuristic_above_random_with_shrinking_uncertainty() -> None:
    """240 real games (short: to 50 points) between heuristic and random bots, seated at random
    each game, two of one kind and two of the other: the ratings order the bots, sigma shrinks."""
    rules = find_variant("standard", max_score=50)
    h, r = PlayerId("heuristic", True), PlayerId("random", True)
    ledger = Ledger()
    pick = random.Random(5)
    sigmas = []
    for seed in range(240):
        seats = [h, h, r, r]
        pick.shuffle(seats)
        names = tuple(p.name for p in seats)
        rec = play_game(rules, seed, names)
        ledger.apply(rules.name, seats, rec.scores, rules.lowest_wins)
        sigmas.append(ledger.get(rules.name, h).sigma)
    board = ledger.leaderboard(rules.name)
    assert [p for p, _ in board] == [h, r]
    assert board[0][1].ordinal > board[1][1].ordinal + 3
    assert sigmas[239] < sigmas[59] < sigmas[9] < START_SIGMA
    assert ledger.get(rules.name, h).games == 240


@given(st.lists(st.integers(0, 130), min_size=4, max_size=4))
def test_from_equal_ratings_a_better_place_never_gives_a_lower_rating(totals: list[int]) -> None:
    """Strictly higher without ties. With ties only "not lower": openskill 6's Plackett-Luce lets
    tied players gain as if each had beaten the other (reported to openskill), so with places 1, 1, 3, 4
    the third ends level with the two winners."""
    changes = {c.player: c for c in rate({}, [A, B, C, D], totals)}
    tied = len(set(totals)) < 4
    for p in (A, B, C, D):
        for q in (A, B, C, D):
            if changes[p].rank < changes[q].rank:
                assert changes[p].after.mu >= changes[q].after.mu
                if not tied:
                    assert changes[p].after.mu > changes[q].after.mu
            if changes[p].rank == changes[q].rank:
                assert changes[p].after == changes[q].after
        assert changes[p].after.sigma < START_SIGMA


def _arena_run(candidate: str, field: str, deals: list[tuple[list[int], list[int]]]) -> dict:
    """An arena results file of head-to-head deals: the points of the two seatings of each deal."""
    a, b = candidate, field
    return {
        "format": "moonshot.play.arena/1",
        "config": {"variant": "standard", "candidate": a, "field": b},
        "summary": {"higher_is_better": False},
        "deals": [{"seatings": [[a, b, a, b], [b, a, b, a]], "points": [p, q]} for p, q in deals],
    }


def test_arena_runs_rate_a_ladder_through_its_shared_players() -> None:
    from moonshot.play.ratings import arena_ledger

    # mid always beats low, high always beats mid; low and high never meet
    low_mid = _arena_run("mid", "low", [([0, 13, 0, 13], [13, 0, 13, 0])] * 30)
    mid_high = _arena_run("high", "mid", [([0, 13, 0, 13], [13, 0, 13, 0])] * 30)
    ledger = arena_ledger([low_mid, mid_high])
    board = [p.name for p, _ in ledger.leaderboard("standard")]
    assert board == ["high", "mid", "low"]
    assert ledger.get("standard", PlayerId("mid", bot=True)).games == 120  # both runs' games
    same = arena_ledger([low_mid, mid_high])
    assert same.ratings == ledger.ratings  # no randomness


def test_arena_ledger_refuses_what_is_not_an_arena_run() -> None:
    import pytest

    from moonshot.play.ratings import arena_ledger

    with pytest.raises(ValueError, match="not an arena results file"):
        arena_ledger([{"format": "something else"}])
