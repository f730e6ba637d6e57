"""``moonshot review``: a stored game and a public record reviewed, --json's shape, the rich table,
and clear errors for a running game, an unknown id and wrong options."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from moonshot.bots.heuristic import HeuristicBot
from moonshot.cli.main import main
from moonshot.core.actions import action_to_dict
from moonshot.core.engine import Game
from moonshot.core.variants import find_variant
from moonshot.core.views import seat_view
from moonshot.runtime.table import BotSeat, Table, TableStatus
from moonshot.store import Store, StoreRecorder

STANDARD = find_variant("standard")


def run(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(main, list(args), env=env)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A SQLite store with a finished game ``done`` and a running one ``open``."""
    path = tmp_path_factory.mktemp("review") / "games.db"
    url = f"sqlite:///{path}"

    async def fill() -> None:
        store = await Store.open(url)
        rec = StoreRecorder(store, protocol="test")
        rec.start()
        seats = [BotSeat(HeuristicBot(), random.Random(i)) for i in range(4)]
        t = Table(STANDARD, seats, seed=3, recorder=rec, table_id="done")
        t.start()
        assert await asyncio.wait_for(t.done, 60) is TableStatus.FINISHED
        await rec.close()
        await store.create_game("open", "standard", 1, [])
        await store.close()

    asyncio.run(fill())
    return url


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished game's record as ``moonshot simulate --export`` writes it (one JSON line)."""
    game = Game(STANDARD, 8)
    bot = HeuristicBot()
    rng = random.Random(0)
    while not game.over:
        seat = game.to_act()[0]
        game.apply(bot.act(seat_view(game, seat), rng))
    path = tmp_path_factory.mktemp("review") / "game.jsonl"
    line = {
        "format": "moonshot.game/2",
        "variant": "standard",
        "seed": 8,
        "actions": [action_to_dict(a) for a in game.actions],
    }
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return path


def test_json_of_a_stored_game(db: str) -> None:
    result = run("review", "done", "--db", db, "--seat", "1", "--simulations", "10", "--seed", "3", "--json", "-q")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["format"] == "moonshot-review/1" and data["game_id"] == "done" and data["seat"] == 1
    assert data["budget"] == {"simulations": 10, "think_ms": None, "seed": 3}
    assert set(data) == {"format", "game_id", "seat", "variant", "budget", "thresholds", "decisions", "summary"}
    assert set(data["summary"]) == {"decisions", "points_given_up", "accuracy", "by_grade", "biggest", "deals"}
    d = data["decisions"][0]
    assert set(d) >= {"index", "action_index", "deal", "trick", "kind", "hand", "trick_cards", "pass_direction"}
    assert set(d) >= {"chosen", "options", "complete", "best", "cost", "grade"}
    assert set(d["options"][0]) == {"label", "expected", "moon_for", "moon_against", "worlds"}
    # reproducible: the same seed prints the same JSON
    again = run("review", "done", "--db", db, "--seat", "1", "--simulations", "10", "--seed", "3", "--json", "-q")
    assert again.output == result.output


def test_the_rich_table_of_a_record(record: Path) -> None:
    result = run("review", "--record", str(record), "--seat", "2", "--simulations", "10")
    assert result.exit_code == 0, result.output
    assert "accuracy" in result.output and "by deal" in result.output
    assert "seat 2 (S)" in result.output


def test_the_table_lists_flagged_decisions_unless_all(record: Path) -> None:
    from moonshot.cli.review import _compact_hand

    assert _compact_hand(["2C", "QS", "TH", "AS", "9C"]) == "S:AQ H:T C:92"
    args = ("review", "--record", str(record), "--seat", "2", "--simulations", "10", "-q", "--json")
    data = json.loads(run(*args).output)
    flagged = [d for d in data["decisions"] if d["grade"] in ("inaccuracy", "mistake", "blunder")]
    calm = [d for d in data["decisions"] if d["grade"] in ("best", "good")]
    assert calm, "a whole game has decisions graded best"
    wide = {"COLUMNS": "200"}
    short = run(*args[:-1], env=wide).output
    every = run(*args[:-1], "--all", env=wide).output
    cells = [line.split("│") for line in short.splitlines() + every.splitlines()]
    assert any(len(c) > 8 for c in cells), "the decisions are a table"

    def rows(out: str) -> set[int]:  # a row's index (a long row goes on in lines whose index is blank)
        split = (line.split("│") for line in out.splitlines())
        return {int(c[1]) for c in split if len(c) > 8 and c[1].strip().isdigit()}

    assert rows(short) == {d["index"] for d in flagged}
    assert rows(every) == {d["index"] for d in data["decisions"]}


def test_a_running_game_is_refused(db: str) -> None:
    result = run("review", "open", "--db", db)
    assert result.exit_code == 1
    assert "game open is running: only a finished game can be reviewed" in result.output


def test_an_unknown_game_is_refused(db: str, tmp_path: Path) -> None:
    result = run("review", "nope", "--db", db)
    assert result.exit_code == 1 and "no stored game called 'nope'" in result.output
    missing = f"sqlite:///{tmp_path / 'none.db'}"
    result = run("review", "nope", "--db", missing)
    assert result.exit_code == 1 and "there is no game store" in result.output
    assert not (tmp_path / "none.db").exists()


def test_a_record_cut_short_is_not_over(record: Path, tmp_path: Path) -> None:
    data = json.loads(record.read_text(encoding="utf-8"))
    data["actions"] = data["actions"][:30]
    short = tmp_path / "short.json"
    short.write_text(json.dumps(data, indent=2), encoding="utf-8")  # (one object over many lines)
    result = run("review", "--record", str(short))
    assert result.exit_code == 1 and "the game is not over" in result.output


def test_a_record_of_a_running_game_is_refused(record: Path, tmp_path: Path) -> None:
    data = json.loads(record.read_text(encoding="utf-8"))
    data["status"] = "running"
    running = tmp_path / "running.json"
    running.write_text(json.dumps(data), encoding="utf-8")
    result = run("review", "--record", str(running))
    assert result.exit_code == 1 and "the game is running" in result.output


def test_usage_errors(record: Path) -> None:
    result = run("review")
    assert result.exit_code == 2 and "give a GAME_ID" in result.output
    result = run("review", "--record", str(record), "--simulations", "5", "--think-ms", "5")
    assert result.exit_code == 2 and "not both" in result.output
    result = run("review", "--record", str(record), "--seat", "4")
    assert result.exit_code == 2
    result = run("--help")
    assert "review" in result.output
