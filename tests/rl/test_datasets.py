"""Decision datasets: rows per decision, rewards that add up, Parquet and JSONL round trips."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from moonshot.bots.random import RandomBot
from moonshot.core.actions import Play
from moonshot.core.engine import Game
from moonshot.core.variants import find_variant
from moonshot.core.views import seat_view
from moonshot.rl.datasets import (
    COLUMNS,
    DecisionWriter,
    iter_decisions,
    play_decisions,
    read_decisions,
    record_decisions,
    write_decisions,
)
from moonshot.rl.decisions import Decisions, answer_claim
from moonshot.rl.observation import N_ACTIONS, OBS_SIZE


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_write_read_round_trip(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"d{suffix}"
    rows = write_decisions(path, games=2, policies="random", variant="standard", seed=10, progress=False)
    data = read_decisions(path)
    assert set(data) == set(COLUMNS)
    assert len(data["action"]) == rows
    assert data["observation"].shape == (rows, OBS_SIZE) and data["observation"].dtype == np.float32
    assert data["legal_mask"].shape == (rows, N_ACTIONS)
    # every action was legal, and the rows are the ones play_decisions makes
    assert data["legal_mask"][np.arange(rows), data["action"]].all()
    direct = [r for g in (10, 11) for r in play_decisions("standard", g, ["random"] * 4)]
    assert np.array_equal(np.stack([r["observation"] for r in direct]), data["observation"])
    assert data["action"].tolist() == [r["action"] for r in direct]
    assert set(data["game_id"].tolist()) == {0, 1}
    assert set(data["seed"].tolist()) == {10, 11} and not data["rotation"].any()
    assert set(data["phase"].tolist()) == {"pass", "play"}


@pytest.mark.parametrize("variant", ["standard", "trend", "turbo-chain"])
def test_rows_replay_to_the_game_and_rewards_add_up_to_its_scores(tmp_path: Path, variant: str) -> None:
    path = tmp_path / "d.parquet"
    write_decisions(path, games=1, policies="random", variant=variant, seed=3, progress=False)
    data = read_decisions(path)
    game = Game(find_variant(variant), 3)
    dec = Decisions(game)
    for seat, action in zip(data["seat"].tolist(), data["action"].tolist()):
        while game.claimer is not None:  # random bots never claim, so this never runs
            answer_claim(game, game.to_act()[0])
        assert dec.next_seat() == seat
        dec.apply(seat, action)
    assert game.over
    sign = -1 if game.rules.lowest_wins else 1
    per_seat = [float(data["reward"][data["seat"] == s].sum()) for s in range(4)]
    assert per_seat == [sign * t for t in game.totals]
    assert data["done"].sum() == 4


def test_bot_passes_become_three_rows_and_charges_end_with_done(tmp_path: Path) -> None:
    rows = list(play_decisions("turbo", 2, ["random"] * 4))
    first_seat0 = [r for r in rows if r["seat"] == 0][:3]
    assert [r["phase"] for r in first_seat0] == ["pass"] * 3
    charges = [r for r in rows if r["phase"] == "charge"]
    assert charges and charges[-1]["action"] == 52


def test_policies_can_be_functions_and_progress_can_be_a_callback(tmp_path: Path) -> None:
    seen: list[int] = []

    def lowest(obs: dict[str, np.ndarray]) -> int:
        return int(np.flatnonzero(obs["action_mask"])[0])

    n = write_decisions(
        tmp_path / "x.jsonl", games=2, policies=[lowest, "random", "random", "random"], progress=seen.append
    )
    assert seen == [1, 2] and n > 0
    batches = list(iter_decisions(tmp_path / "x.jsonl", batch_rows=100))
    assert sum(len(b["action"]) for b in batches) == n
    assert {"lowest", "random"} == set(np.concatenate([b["policy"] for b in batches]).tolist())


def test_max_score_and_trick_shaping() -> None:
    rows = list(play_decisions("standard", 5, ["random"] * 4, max_score=40, shaping="trick"))
    totals = [-sum(r["reward"] for r in rows if r["seat"] == s) for s in range(4)]
    assert sum(totals) % 26 == 0 and 40 <= max(totals) < 40 + 26 * 3
    # shaping pays during a deal, not only at its end
    assert any(r["reward"] < 0 and r["phase"] == "play" for r in rows[:40])


def test_unknown_format_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="parquet"):
        write_decisions(tmp_path / "x.csv", games=1, progress=False)


@pytest.mark.parametrize("variant", ["standard", "turbo-blind-chain", "trend"])
def test_record_decisions_turns_a_played_game_into_rows(tmp_path: Path, variant: str) -> None:
    rules = find_variant(variant)
    game = Game(rules, 9)
    bots = [RandomBot() for _ in range(4)]
    rng = random.Random(9)
    while not game.over:
        seat = game.to_act()[0]
        game.apply(bots[seat].act(seat_view(game, seat), rng))
    rows = record_decisions(rules, 9, game.actions, ("a", "b", "c", "d"), game_id=5, rotation=2)
    assert all(r["game_id"] == 5 and r["rotation"] == 2 and r["seed"] == 9 for r in rows)
    assert {r["policy"] for r in rows if r["seat"] == 1} == {"b"}
    plays = [a for a in game.actions if isinstance(a, Play)]
    assert [r["action"] for r in rows if r["phase"] == "play"] == [a.card for a in plays]
    sign = -1 if rules.lowest_wins else 1
    assert [sum(r["reward"] for r in rows if r["seat"] == s) for s in range(4)] == [sign * t for t in game.totals]
    with DecisionWriter(tmp_path / "r.parquet") as w:
        w.write(rows)
    assert w.rows == len(rows) and len(read_decisions(tmp_path / "r.parquet")["action"]) == len(rows)


def test_record_decisions_refuses_an_unfinished_game() -> None:
    with pytest.raises(ValueError, match="finish"):
        record_decisions(find_variant("standard"), 0, [])
