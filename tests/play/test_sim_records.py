"""Same seeds, same games: every variant and bot plays exactly the games stored in the fixtures.

The fixtures (tests/fixtures/sim_*.jsonl) were written by tests/sim_records.py before the
simulator was sped up; speed work (cheaper views, lazy legal actions, compiled bots) must not
change a single decision, so each game's exported actions must hash the same.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest

import sim_records

FIXTURES = pathlib.Path(__file__).parents[1] / "fixtures"


def _load(name: str) -> list[dict[str, Any]]:
    with open(FIXTURES / name, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


RECORDS = _load("sim_records.jsonl")


def test_the_fixture_covers_every_variant_and_bot() -> None:
    from moonshot.core.variants import VARIANTS

    assert {r["variant"] for r in RECORDS} == set(VARIANTS)
    assert {r["seating"] for r in RECORDS} == set(sim_records.SEATINGS)
    assert [(r["variant"], r["seating"], r["seed"], r["rotation"]) for r in RECORDS] == list(sim_records.cases())


@pytest.mark.parametrize("want", RECORDS, ids=lambda r: f"{r['variant']}-{r['seating']}-{r['seed']}")
def test_play_game_gives_the_stored_records(want: dict[str, Any]) -> None:
    got = sim_records.record(want["variant"], want["seating"], want["seed"], want["rotation"])
    assert got == want


def test_simulate_export_gives_the_stored_records(tmp_path: pathlib.Path) -> None:
    assert list(sim_records.cli_records(str(tmp_path))) == _load("sim_cli_records.jsonl")


def test_arena_gives_the_stored_results() -> None:
    got = [json.loads(json.dumps(r)) for r in sim_records.arena_records()]
    assert got == _load("sim_arena_records.jsonl")
