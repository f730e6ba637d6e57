"""`moonshot serve`, `moonshot bot`, `moonshot games` and `moonshot replay GAME_ID` as a user runs them."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from moonshot.cli import main


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_serve_help_documents_every_option() -> None:
    code, text = run("serve", "--help")
    assert code == 0
    for opt in (
        "--host",
        "--sessions-port",
        "--no-sessions",
        "--trend-port",
        "--http-port",
        "--no-http",
        "--open-names",
        "--secret",
        "--db",
        "--no-db",
        "--move-timeout",
        "--fill-wait",
    ):
        assert opt in text


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str]]:
    db = f"sqlite+aiosqlite:///{tmp_path / 'g.db'}"
    args = [
        "serve",
        "--sessions-port",
        "0",
        "--http-port",
        "0",
        "--db",
        db,
        "--fill-wait",
        "0.1",
        "--bot",
        "random",
        "--log-level",
        "error",
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "moonshot.cli", *args],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    m = re.search(r"tcp://([\d.]+:\d+)", line)
    assert m, line
    http_line = proc.stdout.readline()
    assert re.search(r"open http://127\.0\.0\.1:\d+/lobby in a browser", http_line), http_line
    yield m.group(1), db
    proc.send_signal(signal.SIGINT)
    assert proc.wait(30) == 0


def test_bot_plays_then_games_lists_and_replay_verifies(served: tuple[str, str]) -> None:
    address, db = served
    code, text = run("bot", "--connect", address, "--policy", "random", "--sessions", "2", "--games", "2")
    assert code == 0, text
    assert re.search(r"│\s+2\s+│", text)  # two games in the results table
    for _ in range(50):  # the store writes in batches a few ms after the game ends
        code, text = run("games", "--db", db, "--json")
        assert code == 0, text
        rows = [json.loads(x) for x in text.splitlines()]
        if rows:
            break
        time.sleep(0.1)
    # both sessions asked for `any` on the public pool: one table, filled with two server bots
    assert 1 <= len(rows) <= 2 and all(r["status"] == "finished" for r in rows)
    code, text = run("replay", rows[0]["id"], "--db", db)
    assert code == 0, text
    assert "ok" in text and rows[0]["id"] in text


def test_replay_of_an_unknown_game_fails_clearly(tmp_path: Path) -> None:
    code, text = run("replay", "no-such-game", "--db", f"sqlite+aiosqlite:///{tmp_path / 'empty.db'}")
    assert code == 1 and "no stored game" in text


def test_bot_against_no_server_fails_clearly() -> None:
    code, text = run("bot", "--connect", "127.0.0.1:1", "--policy", "random", "--games", "1")
    assert code == 1 and "cannot play" in text
