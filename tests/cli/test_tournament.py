"""``moonshot tournament create|status|results``: a local run into a store, reading it back, and
the same commands against a running server."""

from __future__ import annotations

import asyncio
import csv
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from moonshot.cli.main import main
from moonshot.server.app import ServerApp
from moonshot.server.config import ServerConfig


def test_a_local_tournament_of_bots_is_played_stored_and_read_back(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 't.db'}"
    runner = CliRunner()
    out = runner.invoke(
        main,
        ["tournament", "create", "--sets", "1", "--deals-per-set", "1", "--seed", "3", "--bot", "random",
         "--bot", "fast=heuristic", "--bot", "search --simulations 4", "--db", db, "-q",
         "--csv", str(tmp_path / "s.csv"), "--results", str(tmp_path / "r.json"), "--plot", str(tmp_path / "p.png")],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    assert "finished, 4/4 games" in out.output and "fast" in out.output
    tid = re.search(r"tournament (t[0-9a-f]+)", out.output).group(1)  # type: ignore[union-attr]
    rows = list(csv.DictReader((tmp_path / "s.csv").open()))
    assert {r["entrant"] for r in rows} == {"random", "fast", "search(simulations=4)"}
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["games_played"] == 4 and len(data["games"]) == 4
    assert (tmp_path / "p.png").read_bytes().startswith(b"\x89PNG")

    status = runner.invoke(main, ["tournament", "status", tid, "--db", db, "--json"])
    assert status.exit_code == 0, status.output
    assert json.loads(status.output)["status"] == "finished"
    results = runner.invoke(main, ["tournament", "results", tid, "--db", db])
    assert results.exit_code == 0 and "paired differences" in results.output
    missing = runner.invoke(main, ["tournament", "status", "tnope", "--db", db])
    assert missing.exit_code == 1 and "no tournament tnope" in missing.output


def test_mistakes_get_one_line_errors() -> None:
    runner = CliRunner()
    out = runner.invoke(main, ["tournament", "create", "--bot", "random", "--external", "alice"])
    assert out.exit_code == 2 and "--server" in out.output
    out = runner.invoke(main, ["tournament", "create", "--bot", "random"])
    assert out.exit_code == 2 and "at least two entrants" in out.output
    out = runner.invoke(main, ["tournament", "create", "--bot", "random", "--bot", "chess-engine"])
    assert out.exit_code == 2 and "unknown bot" in out.output
    out = runner.invoke(main, ["tournament", "create", "--server", "x:1", "--bot", "random", "--csv", "s.csv"])
    assert out.exit_code == 2 and "for a local run" in out.output
    out = runner.invoke(main, ["tournament", "status", "t1"])
    assert out.exit_code == 2 and "--server URL or --db URL" in out.output
    out = runner.invoke(main, ["tournament", "status", "t1", "--server", "127.0.0.1:9"])
    assert out.exit_code == 1 and "cannot reach" in out.output


@pytest.mark.asyncio
async def test_the_commands_drive_a_running_server(tmp_path: Path) -> None:
    app = ServerApp(ServerConfig(sessions_port=None, http_port=0, db_url=None, seed=1, secret="cli", show_up=0.1))
    await app.start()
    try:
        server = f"127.0.0.1:{app.http_port}"
        runner = CliRunner()
        args = ["tournament", "create", "--server", server, "--sets", "1", "--deals-per-set", "1",
                "--bot", "random", "--bot", "heuristic", "--external", "zed"]  # fmt: skip
        out = await asyncio.to_thread(runner.invoke, main, args)
        assert out.exit_code == 0, out.output
        tid = re.search(r"tournament (t[0-9a-f]+)", out.output).group(1)  # type: ignore[union-attr]
        assert re.search(r"external zed: token \S{20,}", out.output)
        t = app.tournaments.tournaments[tid]  # type: ignore[union-attr]
        await asyncio.wait_for(asyncio.shield(t.task), 60)  # type: ignore[arg-type]
        out = await asyncio.to_thread(runner.invoke, main, ["tournament", "status", tid, "--server", server])
        assert out.exit_code == 0 and "finished" in out.output and "zed" in out.output
        bad = await asyncio.to_thread(runner.invoke, main, ["tournament", "create", "--server", server, "--bot", "x"])
        assert bad.exit_code == 1 and "the server refused" in bad.output
    finally:
        await app.stop()


def test_levels_are_entrants_and_fillers(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 't.db'}"
    runner = CliRunner()
    out = runner.invoke(
        main,
        ["tournament", "create", "--sets", "1", "--deals-per-set", "1", "--seed", "3", "--bot", "level:1",
         "--bot", "casual=level:3", "--bot", "level:2", "--filler", "level:4", "--db", db, "-q",
         "--results", str(tmp_path / "r.json")],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["games_played"] >= 1
    assert {"level:1", "casual", "level:2"} <= set(out.output.split()) | {w.strip("│ ") for w in out.output.split("│")}
    bad = runner.invoke(main, ["tournament", "create", "--bot", "level:1", "--bot", "level:77"])
    assert bad.exit_code == 2 and "unknown level level:77" in bad.output
