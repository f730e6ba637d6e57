"""``moonshot simulate --export-decisions``: the simulated games' decisions, as a dataset.

(Kept beside the RL tests so that tests/cli/test_main.py stays the lead's; it tests src/moonshot/cli/main.py.)
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from moonshot.cli.main import main
from moonshot.rl.datasets import read_decisions


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_simulate_exports_one_row_per_decision(tmp_path: Path, suffix: str) -> None:
    games = tmp_path / "games.jsonl"
    out = tmp_path / f"decisions{suffix}"
    args = ["simulate", "--seats", "random", "-n", "2", "--duplicate", "--max-score", "30", "-q"]
    result = CliRunner().invoke(main, [*args, "--export", str(games), "--export-decisions", str(out)])
    assert result.exit_code == 0, result.output
    data = read_decisions(out)
    # rich wraps long lines (even inside the path): compare with every space and line break taken out
    assert "".join(f"decisions of 8 games to {out}".split()) in "".join(result.output.split())
    assert sorted(set(data["game_id"].tolist())) == list(range(8))
    assert set(data["rotation"].tolist()) == {0, 1, 2, 3}
    records = [json.loads(line) for line in games.read_text().splitlines()]
    for gid, rec in enumerate(records):
        rows = data["game_id"] == gid
        plays = [a["c"] for a in rec["actions"] if a["t"] == "play"]
        assert int((data["phase"][rows] == "play").sum()) == len(plays)
        per_seat = [float(data["reward"][rows & (data["seat"] == s)].sum()) for s in range(4)]
        assert per_seat == [-float(x) for x in rec["scores"]]
    assert data["legal_mask"][np.arange(len(data["action"])), data["action"]].all()


def test_unknown_decision_format_is_a_usage_error(tmp_path: Path) -> None:
    args = ["simulate", "--seats", "random", "-n", "1", "-q"]
    result = CliRunner().invoke(main, [*args, "--export-decisions", str(tmp_path / "x.csv")])
    assert result.exit_code == 2
    assert "parquet" in result.output
