"""The moonshot command: simulate, replay, variants, demo, and their errors."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from moonshot.cli.main import main


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_simulate_export_and_replay(tmp_path: Path) -> None:
    out = tmp_path / "games.jsonl"
    code, text = run("simulate", "--seats", "random", "-n", "3", "--duplicate", "--export", str(out), "-q")
    assert code == 0, text
    assert "points/deal" in text and "random" in text
    lines = out.read_text().splitlines()
    assert len(lines) == 12
    assert [json.loads(x)["rotation"] for x in lines[:4]] == [0, 1, 2, 3]
    code, text = run("replay", str(out))
    assert code == 0, text
    assert "12 games verified, 0 failed" in text


def test_workers_give_the_same_export(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert run("simulate", "--seats", "random", "-n", "4", "-v", "kierki", "--export", str(a), "-q")[0] == 0
    assert run("simulate", "--seats", "random", "-n", "4", "-v", "kierki", "-j", "2", "--export", str(b), "-q")[0] == 0
    assert a.read_text() == b.read_text()


def test_replay_reports_a_corrupt_file(tmp_path: Path) -> None:
    good = tmp_path / "g.jsonl"
    assert run("simulate", "--seats", "random", "-n", "1", "--export", str(good), "-q")[0] == 0
    record = json.loads(good.read_text())
    record["scores"][0] += 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.read_text() + json.dumps(record) + "\n{not json\n")
    code, text = run("replay", str(bad))
    assert code == 1
    assert "1 games verified, 2 failed" in text
    assert "MISMATCH" in text and "not JSON" in text


def test_bad_options_are_usage_errors() -> None:
    code, text = run("simulate", "--variant", "bridge")
    assert code == 2 and "unknown variant 'bridge'" in text
    code, text = run("simulate", "--seats", "random,shark")
    assert code == 2 and "unknown bot 'shark'" in text
    code, text = run("simulate", "-v", "trend", "--max-score", "50")
    assert code == 2 and "ends after a number of deals" in text


def test_variants_lists_every_variant() -> None:
    code, text = run("variants")
    assert code == 0
    for name in ("standard", "omnibus", "trend", "turbo-blind-chain", "kierki", "gym"):
        assert name in text


def test_help_lists_every_command_without_loading_the_server() -> None:
    """`moonshot --help` names the lazy commands from their kept one-line help (importing them
    all took half a second), and that help is each command's own."""
    import importlib
    import subprocess
    import sys

    from moonshot.cli.main import _LAZY_COMMANDS

    for name, (target, short) in _LAZY_COMMANDS.items():
        module, _, attr = target.partition(":")
        assert getattr(importlib.import_module(module), attr).get_short_help_str(10**6) == short, name
    code = (
        "import sys; sys.argv = ['moonshot', '--help']\n"
        "from moonshot.cli.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = ('moonshot.server', 'moonshot.protocols', 'numpy')\n"
        "print('LOADED', sorted(m for m in sys.modules if m.startswith(heavy)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "LOADED []" in out
    for name in _LAZY_COMMANDS:
        assert f"  {name} " in out


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc")
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: BLAS starts no second thread anyway")
def test_commands_multiply_on_one_blas_thread_unless_told() -> None:
    """The networks' matrices are small: a second BLAS thread only spins, and a CPU-time budget
    charges its spinning to the bot. The command sets one thread before a command's module (here
    train-value's) imports NumPy, and leaves a count the environment gives alone."""
    import subprocess
    import sys

    from moonshot import BLAS_THREAD_VARIABLES

    code = (
        "import os, sys; sys.argv = ['moonshot', 'train-value', '--help']\n"
        "from moonshot.cli.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "loaded = 'numpy' in sys.modules\n"  # by the command's module, after the command began
        "import numpy as np\n"
        "np.ones((256, 256)) @ np.ones((256, 256))\n"
        "print('THREADS', loaded, len(os.listdir('/proc/self/task')))"
    )
    env = {k: v for k, v in os.environ.items() if k not in BLAS_THREAD_VARIABLES}

    def threads(**given: str) -> str:
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**env, **given})
        assert run.returncode == 0, run.stderr
        return run.stdout.split("THREADS ")[1].strip()

    assert threads() == "True 1"
    assert threads(OPENBLAS_NUM_THREADS="2") == "True 2"
