"""The arena: duplicate seatings, per-deal rules, paired statistics, and the `moonshot arena` command."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from moonshot.cli.main import main
from moonshot.core.rules import EndRule, PassDirection
from moonshot.core.variants import find_variant
from moonshot.play.arena import (
    RESULTS_FORMAT,
    ArenaConfig,
    DealResult,
    bot_options,
    deal_rules,
    mean_ci,
    paired_differences,
    play_deal,
    running_difference,
    summarise,
)


def test_each_deal_is_one_deal_with_the_cycles_direction_and_contract() -> None:
    std = find_variant("standard")
    dirs = [deal_rules(std, i).pass_cycle[0] for i in range(5)]
    assert dirs == [
        PassDirection.LEFT,
        PassDirection.RIGHT,
        PassDirection.ACROSS,
        PassDirection.HOLD,
        PassDirection.LEFT,
    ]
    assert deal_rules(std, 7).end is EndRule.DEALS and deal_rules(std, 7).deals == 1
    assert deal_rules(find_variant("turbo"), 3).pass_cycle[0] is PassDirection.KEEPER
    kierki = find_variant("kierki")
    assert [deal_rules(kierki, i).deal_kinds for i in range(8)] == [(k,) for k in (1, 2, 3, 4, 5, 6, 7, 1)]


def test_the_candidate_sits_in_every_seat_or_two_v_two_both_ways() -> None:
    seats = ArenaConfig(candidate="a", field="b").seatings()
    assert seats == [("a", "b", "b", "b"), ("b", "a", "b", "b"), ("b", "b", "a", "b"), ("b", "b", "b", "a")]
    assert ArenaConfig(candidate="a", field="b", head_to_head=True).seatings() == [
        ("a", "b", "a", "b"),
        ("b", "a", "b", "a"),
    ]


def test_budget_options_reach_only_bots_that_take_them() -> None:
    config = ArenaConfig(think_ms=50, simulations=9)
    assert bot_options("search", config) == {"think_ms": 50, "simulations": 9}
    assert bot_options("random", config) == {}


def test_mean_and_interval() -> None:
    m, lo, hi = mean_ci([1.0, 2.0, 3.0, 4.0])
    assert m == 2.5
    half = 1.96 * math.sqrt((1.5**2 + 0.5**2 + 0.5**2 + 1.5**2) / 3 / 4)
    assert lo == pytest.approx(2.5 - half) and hi == pytest.approx(2.5 + half)
    assert math.isnan(mean_ci([1.0])[1])


def _result(points: list[tuple[int, ...]], moons: list[int | None]) -> DealResult:
    seatings = ArenaConfig(candidate="a", field="b").seatings()
    return DealResult(0, 0, "left", 0, list(seatings), points, moons, {"a": 1.0, "b": 0.3}, {"a": 10, "b": 30})


def test_paired_difference_lowest_rate_and_moons() -> None:
    # seating r puts the candidate "a" in seat r
    r1 = _result([(0, 13, 13, 0), (26, 0, 0, 0), (5, 5, 5, 11), (0, 26, 26, 26)], [None, None, None, 0])
    r2 = _result([(2, 8, 8, 8), (8, 2, 8, 8), (8, 8, 2, 8), (8, 8, 8, 2)], [None] * 4)
    # r1: a scores 0, 0, 5, 26 -> mean 7.75; b's 12 scores sum 13+13+0+26+0+0+5+5+11+0+26+26 = 125
    diffs = paired_differences([r1, r2], "a")
    assert diffs[0] == pytest.approx(7.75 - 125 / 12)
    assert diffs[1] == pytest.approx(2 - 8)
    s = summarise([r1, r2], ArenaConfig(candidate="a", field="b"))
    assert s.deals == 2
    assert s.candidate_mean == pytest.approx((7.75 + 2) / 2)
    assert s.difference == pytest.approx(sum(diffs) / 2)
    assert s.ci_low < s.difference < s.ci_high
    # r1: a ties with one seat at 0 (a half), with two at 0 (a third), with two at 5 (a third), and
    # scores 26 when seat 0 shoots the moon (a concedes it); r2: a is best all 4 times
    assert s.lowest_rate == pytest.approx((0.5 + 1 / 3 + 1 / 3 + 0 + 4) / 8)
    assert (s.moons_shot, s.moons_conceded) == (0, 1)
    assert s.ms_per_move == {"a": pytest.approx(1000 * 2 / 20), "b": pytest.approx(1000 * 0.6 / 60)}
    n, m, lo, hi = running_difference([r1, r2], "a")[-1]
    assert (n, m, lo, hi) == (2, pytest.approx(s.difference), pytest.approx(s.ci_low), pytest.approx(s.ci_high))


def test_a_deal_is_played_in_every_seating_on_the_same_cards() -> None:
    config = ArenaConfig(candidate="random", field="random", deals=1, seed=4)
    r = play_deal(config, 2)
    assert r.seed == 6 and r.direction == "across"
    assert len(r.points) == 4 and all(sum(p) in (26, 78) for p in r.points)
    assert play_deal(config, 2).points == r.points  # reproducible
    assert r.moves["random"] > 4 * 13


def test_search_against_random_in_the_arena() -> None:
    config = ArenaConfig(candidate="search", field="random", deals=1, simulations=8)
    r = play_deal(config, 0, clock=iter(range(10**6)).__next__)
    assert r.think_s["search"] > 0 and r.moves["search"] >= 4 * 13
    assert len(r.points) == 4


def test_arena_command_prints_the_table_and_writes_json_and_plot(tmp_path: Path) -> None:
    results = tmp_path / "r.json"
    plot = tmp_path / "p.png"
    out = CliRunner().invoke(
        main,
        [
            "arena", "--variant", "turbo", "--deals", "2", "--candidate", "search", "--field", "random",
            "--simulations", "6", "--results", str(results), "--plot", str(plot), "--quiet",
        ],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    assert "paired difference" in out.output and "95% CI" in out.output and "ms/move" in out.output
    data = json.loads(results.read_text())
    assert data["format"] == RESULTS_FORMAT
    assert data["summary"]["deals"] == 2 and len(data["deals"]) == 2
    assert plot.read_bytes()[:4] == b"\x89PNG"


def test_arena_head_to_head_and_bad_names() -> None:
    runner = CliRunner()
    args = ["arena", "--deals", "3", "--head-to-head", "random", "heuristic", "--workers", "2", "-q"]
    out = runner.invoke(main, args)
    assert out.exit_code == 0, out.output
    assert "head to head" in out.output
    bad = runner.invoke(main, ["arena", "--deals", "1", "--field", "nobody"])
    assert bad.exit_code != 0 and "nobody" in bad.output


def test_no_passing_worlds_and_the_bots_clock() -> None:
    std = find_variant("standard")
    assert all(deal_rules(std, i, passing=False).pass_cycle == (PassDirection.HOLD,) for i in range(4))
    config = ArenaConfig(think_ms=5, worlds=7, cpu_time=True)
    assert bot_options("pimc", config) == {"think_ms": 5, "worlds": 7}

    def tick() -> float:
        return 0.0

    # (search takes worlds too: its trees use them with root=tree)
    assert bot_options("search", config, clock=tick) == {"think_ms": 5, "worlds": 7, "clock": tick}
    assert bot_options("heuristic", config, clock=tick) == {}
    ticks = iter(range(10**6))
    config = ArenaConfig(candidate="pimc", field="heuristic", deals=1, think_ms=3, passing=False)
    r = play_deal(config, 1, bot_clock=lambda: next(ticks) / 1000.0)
    assert r.direction == "hold" and len(r.points) == 4


def test_arena_command_no_passing_cpu_time() -> None:
    args = ["arena", "--deals", "1", "--candidate", "pimc", "--field", "shooter", "--think-ms", "2"]
    out = CliRunner().invoke(main, [*args, "--worlds", "3", "--no-passing", "--cpu-time", "-q"])
    assert out.exit_code == 0, out.output
    assert "pimc CPU ms/move" in out.output  # (--cpu-time: the moves are timed in CPU time too)


def test_bot_specs_carry_options() -> None:
    from moonshot.bots.search import SearchBot
    from moonshot.play.arena import arena_bot, bot_spec

    assert bot_spec("search:rollout=alert,inference=false,others-weight=0.5,endgame=2") == (
        "search",
        {"rollout": "alert", "inference": False, "others_weight": 0.5, "endgame": 2},
    )
    assert bot_spec("heuristic") == ("heuristic", {})
    with pytest.raises(ValueError):
        bot_spec("search:rollout")
    bot = arena_bot("search:inference=false", ArenaConfig(simulations=5))
    assert isinstance(bot, SearchBot) and not bot.inference and bot.simulations == 5


def test_arena_command_refuses_one_bot_on_both_sides() -> None:
    out = CliRunner().invoke(main, ["arena", "--deals", "1", "--candidate", "random", "--field", "random", "-q"])
    assert out.exit_code != 0 and "random:" in out.output
    # a spec with options (a preset) is told apart another way, and the spelling offered works
    same = ["arena", "--deals", "1", "--candidate", "pimc:worlds=1", "--field", "pimc:worlds=1", "--simulations", "4"]
    out = CliRunner().invoke(main, [*same, "-q"])
    assert out.exit_code != 0 and "'pimc:worlds=1,'" in out.output
    out = CliRunner().invoke(main, [*same[:4], "pimc:worlds=1,", *same[5:], "-q"])
    assert out.exit_code == 0, out.output


def test_a_level_is_a_seat_spec_of_its_own(tmp_path: Path) -> None:
    """``level:N`` in --head-to-head, --candidate and --field: the arena hands it no budget (a
    level is measured as it is), and an unknown level is a usage error that names the levels."""
    from moonshot.play.arena import bot_spec

    assert bot_spec("level:3") == ("level:3", {})
    assert bot_options("level:6", ArenaConfig(simulations=3)) == {}
    results = tmp_path / "r.json"
    runner = CliRunner()
    args = ["arena", "-n", "2", "--no-passing", "--head-to-head", "level:2", "level:1", "--results", str(results), "-q"]
    out = runner.invoke(main, args)
    assert out.exit_code == 0, out.output
    assert "level:2 − level:1" in out.output
    assert json.loads(results.read_text())["summary"]["candidate"] == "level:2"
    out = runner.invoke(main, ["arena", "-n", "1", "--candidate", "level:1", "--field", "level:3", "-q"])
    assert out.exit_code == 0, out.output
    bad = runner.invoke(main, ["arena", "-n", "1", "--candidate", "level:99"])
    assert bad.exit_code == 2 and "unknown level level:99" in bad.output and "level:1 Beginner" in bad.output
