"""``moonshot ratings``: the leaderboard from the store, as tables or JSON, a player's games, and
``--rebuild``; a store that is not there is a one-line ``--db`` error."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from moonshot.cli.main import main
from moonshot.store import Store, now


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def make_store(path: Path) -> str:
    url = f"sqlite:///{path}"

    async def fill() -> None:
        store = await Store.open(url)
        bot = {"name": "ada", "kind": "bot", "bot": "heuristic"}
        for i in range(4):
            players = [{"name": "carol", "kind": "human"}, bot, {"name": "basil", "kind": "bot", "bot": "random"}, bot]
            totals = [10 + i, 0, 60, 30] if i % 2 else [0, 20, 70, 40]
            at = now()
            row = {"id": f"g{i}", "variant": "turbo-blind", "seed": i, "protocol": "turbo", "players": players}
            row |= {"status": "running", "created_at": at, "meta": {}}
            done = {"id": f"g{i}", "status": "finished", "finished_at": at, "totals": totals, "winners": [0]}
            await store.write_batch([("game", row), ("status", done), ("rate", {"id": f"g{i}"})])
        await store.close()

    asyncio.run(fill())
    return url


def test_the_leaderboard_lists_players_by_ordinal(tmp_path: Path) -> None:
    url = make_store(tmp_path / "g.db")
    out = run("ratings", "--db", url)
    assert out.exit_code == 0, out.output
    assert "turbo: top 3 by ordinal" in out.output
    lines = [line for line in out.output.splitlines() if "heuristic" in line or "carol" in line or "random" in line]
    assert "carol" in lines[0] and "(bot)" not in lines[0]
    assert any("heuristic (bot)" in line for line in lines)
    rows = [json.loads(line) for line in run("ratings", "--db", url, "--json").output.splitlines()]
    assert [r["rank"] for r in rows] == [1, 2, 3] and {r["variant"] for r in rows} == {"turbo"}
    assert rows[0]["player"] == "carol" and not rows[0]["bot"] and rows[0]["games"] == 4
    assert {(r["player"], r["bot"]) for r in rows[1:]} == {("heuristic", True), ("random", True)}
    assert all(r["ordinal"] == r["mu"] - 3 * r["sigma"] for r in rows)
    # the Turbo charging rules share one leaderboard; --limit cuts it
    one = [
        json.loads(line) for line in run("ratings", "--db", url, "-v", "turbo", "--json", "-n", "1").output.splitlines()
    ]
    assert len(one) == 1


def test_a_players_games_and_the_rebuild(tmp_path: Path) -> None:
    url = make_store(tmp_path / "g.db")
    before = run("ratings", "--db", url, "--json").output
    games = run("ratings", "--db", url, "-v", "turbo", "--player", "carol", "--json")
    assert [json.loads(line)["game_id"] for line in games.output.splitlines()] == ["g3", "g2", "g1", "g0"]
    table = run("ratings", "--db", url, "-v", "turbo", "--player", "heuristic", "--bot")
    assert "heuristic (bot): last 4 rated turbo games" in table.output and "g0" in table.output
    rebuilt = run("ratings", "--db", url, "--rebuild", "-q")
    assert rebuilt.exit_code == 0 and "4 finished games rated" in rebuilt.output
    assert run("ratings", "--db", url, "--json").output == before


def test_errors_are_one_line(tmp_path: Path) -> None:
    out = run("ratings", "--db", f"sqlite:///{tmp_path / 'none.db'}")
    assert out.exit_code == 2 and "no game store at" in out.output
    out = run("ratings", "--db", f"sqlite:///{tmp_path / 'x.db'}", "--player", "carol")
    assert out.exit_code == 2 and "--player needs --variant" in out.output
    empty = tmp_path / "empty.db"
    asyncio.run(_open_close(f"sqlite:///{empty}"))
    assert "no rated games yet" in run("ratings", "--db", f"sqlite:///{empty}").output


async def _open_close(url: str) -> None:
    await (await Store.open(url)).close()


def test_arena_files_are_rated_in_memory(tmp_path: Path) -> None:
    runs = []
    for n, (a, b) in enumerate((("mid", "low"), ("high", "mid"))):
        deal = {"seatings": [[a, b, a, b], [b, a, b, a]], "points": [[0, 13, 0, 13], [13, 0, 13, 0]]}
        run_ = {
            "format": "moonshot.play.arena/1",
            "config": {"variant": "standard"},
            "summary": {},
            "deals": [deal] * 20,
        }
        path = tmp_path / f"r{n}.json"
        path.write_text(json.dumps(run_))
        runs.append(str(path))
    out = run("ratings", "--arena", runs[0], "--arena", runs[1], "--json")
    assert out.exit_code == 0, out.output
    rows = [json.loads(line) for line in out.output.splitlines()]
    assert [r["player"] for r in rows] == ["high", "mid", "low"] and rows[0]["variant"] == "standard"
    assert rows[1]["games"] == 80
    (tmp_path / "bad.json").write_text("{}")
    bad = run("ratings", "--arena", str(tmp_path / "bad.json"))
    assert bad.exit_code == 2 and "not an arena results file" in bad.output
    both = run("ratings", "--arena", runs[0], "--rebuild")
    assert both.exit_code == 2 and "--arena rates arena files alone" in both.output
