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

from moonshot.cli.main import main


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
        "--kierki-port",
        "--kierki-timeout",
        "--kierki-game",
        "--kierki-abandon",
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
        [sys.executable, "-m", "moonshot.cli.main", *args],
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


# ----------------------------------------------------------------------------- --db as people type it
def closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def bad_db_cases(command: str, tmp_path: Path) -> dict[str, str]:
    (tmp_path / "plain.txt").write_text("notes, not a database\n")
    cases = {
        "mysql://me@127.0.0.1/db": "unknown database 'mysql'",
        "games.db": "write sqlite:///games.db",
        "postgresql+psycopg2://me@127.0.0.1/db": "driver 'psycopg2' is not supported",
        f"postgresql://postgres@127.0.0.1:{closed_port()}/test": "connection refused",
        f"sqlite:///{tmp_path}/plain.txt": "cannot open the game store",  # a file that is not a database
    }
    if command == "serve":  # creates its store
        cases[f"sqlite:///{tmp_path}/plain.txt/g.db"] = "plain.txt is not a directory"
        cases[f"sqlite:///{tmp_path}/no/such/dir/g.db"] = "does not exist"
    if command == "games":  # only reads: a missing file is not created
        cases[f"sqlite:///{tmp_path}/no/such/dir/g.db"] = "no game store at"
    return cases


@pytest.mark.parametrize("command", ["serve", "games", "replay"])
def test_a_bad_db_is_a_one_line_usage_error(command: str, tmp_path: Path) -> None:
    extras = {
        "serve": ["--sessions-port", "0", "--no-http", "--log-level", "error"],
        "games": [],
        "replay": ["some-game-id"],
    }
    extra = extras[command]
    for db, words in bad_db_cases(command, tmp_path).items():
        result = CliRunner().invoke(main, [command, *extra, "--db", db])
        assert result.exit_code == 2, (db, result.output)
        errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1 and "'--db'" in errors[0] and words in errors[0], (db, result.output)
        assert "Traceback" not in result.output


def test_a_missing_driver_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "asyncpg" else real(name, *a))
    code, text = run("games", "--db", "postgresql://postgres@127.0.0.1/test")
    assert code == 2 and "pip install 'moonshot[postgres]'" in text


def test_serve_on_an_unusable_db_exits_2_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "plain.txt").write_text("x")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "moonshot.cli.main",
            "serve",
            "--sessions-port",
            "0",
            "--no-http",
            "--db",
            f"sqlite:///{tmp_path}/plain.txt/g.db",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "Error: Invalid value for '--db': cannot create" in proc.stderr


def test_games_on_a_missing_sqlite_file_does_not_create_it(tmp_path: Path) -> None:
    code, text = run("games", "--db", f"sqlite:///{tmp_path / 'typo.db'}")
    assert code == 2 and "no game store at" in text
    assert not (tmp_path / "typo.db").exists()


QUICK = ["--fill-wait", "0.1", "--bot", "random", "--log-level", "error", "--no-http"]


def test_serve_on_the_plain_sqlite_url_keeps_its_files_private(tmp_path: Path) -> None:
    """A real server on `sqlite:///PATH`: after games are written, the file and its WAL files are 0600."""
    import os
    import stat

    path = tmp_path / "games.db"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "moonshot.cli.main",
            "serve",
            "--sessions-port",
            "0",
            "--db",
            f"sqlite:///{path}",
            *QUICK,
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        m = re.search(r"tcp://([\d.]+:\d+)", proc.stdout.readline())
        assert m
        assert "sqlite+aiosqlite:///" in proc.stdout.readline()  # the driver it uses, as announced
        assert "engine" in proc.stdout.readline()
        assert proc.stdout.readline() == "moonshot: 0 unfinished games restored from the store\n"
        code, text = run("bot", "--connect", m.group(1), "--policy", "random", "--sessions", "1", "--games", "1")
        assert code == 0, text
        for _ in range(50):
            if run("games", "--db", f"sqlite:///{path}", "--json")[1].strip():
                break
            time.sleep(0.1)
        files = [path, path.with_name("games.db-wal"), path.with_name("games.db-shm")]
        assert {f.name: stat.S_IMODE(os.stat(f).st_mode) for f in files} == {f.name: 0o600 for f in files}
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0


def test_workers_need_redis_a_shared_store_and_a_fixed_port(tmp_path: Path) -> None:
    code, text = run("serve", "--workers", "2", "--no-http")
    assert code == 2 and "needs --redis" in text
    code, text = run("serve", "--workers", "2", "--redis", "redis://127.0.0.1:6379/0", "--no-http")
    assert code == 2 and "PostgreSQL" in text
    code, text = run(
        "serve", "--workers", "2", "--redis", "redis://127.0.0.1:6379/0", "--no-db", "--sessions-port", "0"
    )
    assert code == 2 and "--sessions-port" in text
    code, text = run("serve", "--workers", "2", "--redis", "redis://127.0.0.1:6379/0", "--no-db", "--http-port", "0")
    assert code == 2 and "--http-port" in text
    code, text = run(
        "serve", "--workers", "2", "--redis", "redis://127.0.0.1:6379/0", "--no-db", "--no-http", "--trend-port", "0"
    )
    assert code == 2 and "--trend-port" in text


def test_each_worker_gets_its_own_operator_port_so_each_can_be_scraped() -> None:
    from moonshot.cli.commands import _worker_argv

    argv = ["--workers", "2", "--operator-address", "127.0.0.1:9380", "--redis", "redis://r/0"]
    assert _worker_argv(argv, 0, ("127.0.0.1", 9380))[-2:] == ["--operator-address", "127.0.0.1:9380"]
    second = _worker_argv(argv, 1, ("::1", 9380))
    assert second.count("--operator-address") == 1 and second[-2:] == ["--operator-address", "[::1]:9381"]
    assert _worker_argv(argv, 3, ("127.0.0.1", 0))[-1] == "127.0.0.1:0"  # any free port stays any


def test_a_worker_of_the_default_operator_address_runs_on_when_its_port_is_busy() -> None:
    """Where nobody named the address, a worker whose port another server holds is not fatal (a
    restart would find the port as busy, and the supervisor would restart it for ever)."""
    from moonshot.cli.commands import _worker_argv

    argv = ["--workers", "2", "--redis", "redis://r/0"]
    default = _worker_argv(argv, 1, ("127.0.0.1", 9380), explicit=False)
    assert default[-3:] == ["--operator-address", "127.0.0.1:9381", "--operator-optional"]
    assert "--operator-optional" not in _worker_argv(argv, 1, ("127.0.0.1", 9380), explicit=True)


def test_serve_refuses_a_malformed_operator_address() -> None:
    for bad in ("9380", "127.0.0.1:http", "127.0.0.1:70000"):
        code, text = run("serve", "--operator-address", bad, "--no-db")
        assert code == 2 and "--operator-address" in text, (bad, text)


def test_each_worker_runs_serve_alone_on_the_shared_ports_every_protocol_on_all() -> None:
    from moonshot.cli.commands import _worker_argv

    argv = ["--workers", "3", "--redis", "redis://r/0", "--http-port", "8000", "--trend-port=9000", "--no-db"]
    argv += ["--kierki-port", "7000"]
    first = _worker_argv(argv, 0)
    assert first == [
        "--redis",
        "redis://r/0",
        "--http-port",
        "8000",
        "--trend-port=9000",
        "--no-db",
        "--kierki-port",
        "7000",
        "--workers",
        "1",
        "--reuse-port",
        "--operator-address",
        "none",
    ]
    other = _worker_argv(argv, 1)
    assert other == [
        "--redis",
        "redis://r/0",
        "--http-port",
        "8000",
        "--trend-port=9000",
        "--no-db",
        "--kierki-port",
        "7000",
        "--workers",
        "1",
        "--reuse-port",
        "--operator-address",
        "none",
    ]


def test_workers_need_a_kierki_port_number() -> None:
    code, text = run("serve", "--workers", "2", "--redis", "redis://r/0", "--no-db", "--kierki-port", "0")
    assert code == 2 and "--kierki-port" in text


def test_an_unreachable_redis_is_a_usage_error() -> None:
    pytest.importorskip("redis")
    code, text = run("serve", "--no-http", "--no-db", "--sessions-port", "0", "--redis", "redis://127.0.0.1:1/0")
    assert code == 2 and "cannot reach Redis" in text


def test_a_bad_kierki_game_file_is_a_usage_error_naming_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "game.txt"
    bad.write_text("8N\n")
    code, text = run("serve", "--kierki-port", "0", "--kierki-game", str(bad), "--no-db")
    assert code == 2 and "--kierki-game" in text and "line 1: unknown deal type '8'" in text
