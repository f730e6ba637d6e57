"""The examples run: the training script's smoke mode learns nothing much but must work end to end."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_train_policy_quick_run(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "train_policy.py"), "--quick", "--save", str(tmp_path / "p.npz")],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    assert "after behaviour cloning" in out and "after self-play part 2" in out
    assert (tmp_path / "p.npz").exists()
