"""``moonshot trend-node``: the seed's options with their defaults and units, and a real start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from moonshot.cli.main import main


def test_help_lists_the_seed_options_with_their_defaults() -> None:
    result = CliRunner().invoke(main, ["trend-node", "--help"])
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    for option, default in (
        ("--port", "8080"),
        ("--pass-cards-timeout", "3000"),
        ("--expose-cards-timeout", "3000"),
        ("--pick-card-timeout", "1000"),
        ("--round-interval", "2000"),
        ("--deal-interval", "2000"),
        ("--command-interval", "500"),
        ("--auto-cycle", "0"),
        ("--host", "127.0.0.1"),
        ("--seats", "empty,empty,empty,empty"),
    ):
        assert option in text and f"default: {default}" in text, option
    for option in ("--version", "--tokens", "--dummy-bot", "--seed", "milliseconds"):
        assert option in text


def test_version_and_bad_options() -> None:
    result = CliRunner().invoke(main, ["trend-node", "--version"])
    assert result.exit_code == 0 and "1.0.0-alpha.4" in result.output
    result = CliRunner().invoke(main, ["trend-node", "--seats", "empty,robot,empty,empty"])
    assert result.exit_code == 2 and "unknown seat" in result.output


def test_the_node_starts_prints_its_addresses_and_stops_on_sigterm(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "moonshot.cli.main", "trend-node", "--port", "0", "--seats", "dummy,dummy,dummy,empty"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(4)]
        assert lines[0].startswith("Trend Hearts Poker Node is running, listening on port ")
        port = int(lines[0].split()[-1])
        assert lines[1].strip() == f"seat page: http://localhost:{port}/"
        assert lines[2].startswith(f"WebSocket: ws://localhost:{port}/")
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=10) as r:
            state = json.loads(r.read())
        assert [s["kind"] for s in state["seats"]] == ["dummy", "dummy", "dummy", "empty"]
    finally:
        proc.terminate()
        start = time.monotonic()
        code = proc.wait(timeout=20)
    assert code == 0 and time.monotonic() - start < 20
