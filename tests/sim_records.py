"""Reference games for the same-seeds-same-records check (tests/play/test_sim_records.py).

``CASES`` lists games: a variant (with options that keep it short), the seat policies and a seed.
Each game is summarised by a digest of its exported record (every action, in order) plus the
scores, so a stored fixture stays small while any change in any decision shows. Regenerate
the fixture only when a change to the games is intended:

    python tests/sim_records.py > tests/fixtures/sim_records.jsonl
    python tests/sim_records.py cli > tests/fixtures/sim_cli_records.jsonl
    python tests/sim_records.py arena > tests/fixtures/sim_arena_records.jsonl
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from typing import Any

from moonshot.bots.pimc import PimcBot
from moonshot.bots.registry import make_bot
from moonshot.bots.search import SearchBot
from moonshot.core.variants import VARIANTS, find_variant
from moonshot.play.sim import play_game

# games to a low score limit where the variant ends at a score, so the fixture is quick to check
SHORT = {"standard": 40, "omnibus": 40, "gym": 40}
SEATINGS: dict[str, tuple[str, ...]] = {
    "random": ("random", "random", "random", "random"),
    "heuristic": ("heuristic", "heuristic", "heuristic", "heuristic"),
    "mixed": ("heuristic", "random", "heuristic", "random"),
    "search": ("search", "heuristic", "random", "heuristic"),
    # pimc and search:root=tree share bots/tree.py's trees
    "pimc": ("pimc", "heuristic", "random", "heuristic"),
    "tree": ("search:root=tree", "heuristic", "random", "heuristic"),
}
SEEDS = {"random": (1, 2), "heuristic": (3,), "mixed": (4,), "search": (5,), "pimc": (6,), "tree": (7,)}


def cases() -> Iterator[tuple[str, str, int, int]]:
    """(variant, seating, seed, rotation)"""
    for variant in VARIANTS:
        for seating, seeds in SEEDS.items():
            for seed in seeds:
                yield variant, seating, seed, seed % 4


def _bots(seating: str, rotation: int) -> list[Any]:
    names = SEATINGS[seating]
    rotated = [names[(i - rotation) % 4] for i in range(4)]
    made: dict[str, Callable[[], Any]] = {
        "search": lambda: SearchBot(think_ms=None, simulations=6),
        "pimc": lambda: PimcBot(think_ms=None, simulations=6, worlds=3),
        "search:root=tree": lambda: SearchBot(think_ms=None, simulations=6, root="tree", worlds=3),
    }
    return [made[n]() if n in made else make_bot(n) for n in rotated]


def record(variant: str, seating: str, seed: int, rotation: int) -> dict[str, Any]:
    options = {"max_score": SHORT[variant]} if variant in SHORT else {}
    rules = find_variant(variant, **options)
    rec = play_game(rules, seed, SEATINGS[seating], rotation, bots=_bots(seating, rotation), options=options)
    data = rec.to_json()
    text = json.dumps(data["actions"], separators=(",", ":"), sort_keys=True)
    return {
        "variant": variant,
        "seating": seating,
        "seed": seed,
        "rotation": rotation,
        "deals": rec.deals,
        "actions": len(rec.actions),
        "scores": list(rec.scores),
        "digest": hashlib.sha256(text.encode()).hexdigest()[:32],
    }


# `moonshot simulate --export` runs: (variant, seats, first seed, games, duplicate)
CLI_RUNS: list[tuple[str, str, int, int, bool]] = [
    ("standard", "random", 20, 3, False),
    ("turbo", "heuristic,random", 21, 2, True),
    ("kierki", "random,heuristic", 22, 1, False),
]


def cli_args(variant: str, seats: str, seed: int, games: int, duplicate: bool) -> list[str]:
    extra = ["--max-score", "40"] if variant in SHORT else []
    dup = ["--duplicate"] if duplicate else []
    return ["simulate", "-v", variant, "--seats", seats, "-s", str(seed), "-n", str(games), "-q", *dup, *extra]


def digest_line(line: str) -> dict[str, Any]:
    """A summary of one exported record (one line of ``--export``)."""
    data = json.loads(line)
    text = json.dumps(data["actions"], separators=(",", ":"), sort_keys=True)
    return {
        "seed": data["seed"],
        "rotation": data["rotation"],
        "deals": data["deals"],
        "scores": data["scores"],
        "digest": hashlib.sha256(text.encode()).hexdigest()[:32],
    }


def cli_records(tmp: str) -> Iterator[dict[str, Any]]:
    from click.testing import CliRunner

    from moonshot.cli.main import main

    for i, run in enumerate(CLI_RUNS):
        path = f"{tmp}/run{i}.jsonl"
        result = CliRunner().invoke(main, [*cli_args(*run), "--export", path])
        assert result.exit_code == 0, result.output
        with open(path, encoding="utf-8") as f:
            for line in f:
                yield {"run": i, **digest_line(line)}


ARENA_VARIANTS = ("standard", "trend", "kierki", "turbo", "turbo-blind-chain")


def arena_records() -> Iterator[dict[str, Any]]:
    """Arena deals with the search bot (a small playout budget) against heuristic."""
    from moonshot.play.arena import ArenaConfig, play_deal

    for variant in ARENA_VARIANTS:
        config = ArenaConfig(variant=variant, deals=2, candidate="search", field="heuristic", seed=30, simulations=6)
        for i in range(config.deals):
            r = play_deal(config, i)
            points = [list(p) for p in r.points]
            yield {"variant": variant, "index": i, "points": points, "moons": r.moons, "moves": r.moves}


if __name__ == "__main__":
    import sys
    import tempfile

    if sys.argv[1:] == ["arena"]:
        for row in arena_records():
            print(json.dumps(row, separators=(",", ":"), sort_keys=True))
    elif sys.argv[1:] == ["cli"]:
        with tempfile.TemporaryDirectory() as tmp:
            for row in cli_records(tmp):
                print(json.dumps(row, separators=(",", ":")))
    else:
        for case in cases():
            print(json.dumps(record(*case), separators=(",", ":")))
