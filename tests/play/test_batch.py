"""Batch work: the task unit, the backends, decision shards, and `--ray` giving what `--workers` gives.

The tests marked ``ray`` share one local Ray runtime (2 CPUs) for the module; the pure-Python pass
(`make unit-pure`) skips them.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from moonshot.cli.main import main
from moonshot.core.variants import find_variant
from moonshot.play.arena import ArenaConfig, play_deal
from moonshot.play.batch import (
    CRASH_ONCE_ENV,
    MANIFEST,
    ProcessPool,
    Serial,
    make_backend,
    plan_arena,
    plan_sim,
    record_line,
    run_arena_task,
    run_sim_task,
    write_manifest,
)
from moonshot.play.sim import play_game, tasks


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


# ----------------------------------------------------------------------------- the task unit
@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(-5, 50),
    seeds=st.integers(1, 200),
    duplicate=st.booleans(),
    parallelism=st.integers(1, 64),
    per_task=st.one_of(st.none(), st.integers(1, 40)),
)
def test_a_plan_covers_every_game_once_in_order_in_whole_duplicate_blocks(
    seed: int, seeds: int, duplicate: bool, parallelism: int, per_task: int | None
) -> None:
    plan = plan_sim("standard", {}, ("random",) * 4, seed, seeds, duplicate, parallelism, per_task)
    assert [t.index for t in plan] == list(range(len(plan)))
    assert plan[0].start == seed and plan[-1].stop == seed + seeds
    assert all(a.stop == b.start for a, b in itertools.pairwise(plan))  # seed ranges: rotations stay together
    assert [t.first_game for t in plan] == [sum(t.games for t in plan[:k]) for k in range(len(plan))]
    assert sum(t.games for t in plan) == seeds * (4 if duplicate else 1)
    if per_task is not None:
        assert all(t.stop - t.start <= per_task for t in plan)


def test_a_task_plays_the_games_the_simulator_plays() -> None:
    rules = find_variant("standard", max_score=40)
    plan = plan_sim("standard", {"max_score": 40}, ("heuristic", "random", "random", "random"), 3, 2, True, 1, 1)
    got = [rec for t in plan for rec in run_sim_task(t).records]
    want = [
        play_game(rules, s, ("heuristic", "random", "random", "random"), r, options={"max_score": 40})
        for s, r in tasks(range(3, 5), True)
    ]
    assert [g.to_json() for g in got] == [w.to_json() for w in want]


def test_arena_tasks_play_the_deals_in_order() -> None:
    config = ArenaConfig(candidate="random", field="random", deals=5, seed=2)
    plan = plan_arena(config, per_task=2)
    assert [(t.start, t.stop) for t in plan] == [(0, 2), (2, 4), (4, 5)]
    got = [r for t in plan for r in run_arena_task(t)]
    assert [r.points for r in got] == [play_deal(config, i).points for i in range(5)]


def _square(x: int) -> int:
    return x * x


def test_backends_return_results_in_task_order() -> None:
    items = list(range(40))
    assert list(Serial().map(_square, items)) == [x * x for x in items]
    assert list(ProcessPool(2).map(_square, items)) == [x * x for x in items]
    assert isinstance(make_backend(1, None), Serial) and isinstance(make_backend(3, None), ProcessPool)


# ----------------------------------------------------------------------------- decision shards
def test_decision_shards_read_back_like_one_file(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    from moonshot.rl.datasets import read_decisions

    shards, single = tmp_path / "shards", tmp_path / "one.parquet"
    args = ("simulate", "--seats", "heuristic,random", "-n", "5", "--max-score", "30", "-q")
    code, text = run(*args, "--per-task", "2", "--export-decisions", str(shards))
    assert code == 0, text
    assert "3 shards" in text
    assert run(*args, "--export-decisions", str(single))[0] == 0
    manifest = json.loads((shards / MANIFEST).read_text())
    assert manifest["complete"] and manifest["games"] == 5
    assert [s["file"] for s in manifest["shards"]] == ["part-00000.parquet", "part-00001.parquet", "part-00002.parquet"]
    assert [s["first_game"] for s in manifest["shards"]] == [0, 2, 4]
    assert sorted(p.name for p in shards.iterdir()) == [MANIFEST, *(s["file"] for s in manifest["shards"])]
    a, b = read_decisions(shards), read_decisions(single)
    assert manifest["rows"] == len(a["action"]) == len(b["action"]) > 0
    for k in a:
        assert np.array_equal(a[k], b[k]), k


def test_decision_shards_are_readable_by_pyarrow_dataset(tmp_path: Path) -> None:
    ds = pytest.importorskip("pyarrow.dataset")
    out = tmp_path / "d"
    assert (
        run("simulate", "--seats", "random", "-n", "3", "--per-task", "1", "--export-decisions", str(out), "-q")[0] == 0
    )
    table = ds.dataset(str(out), format="parquet").to_table()  # _manifest.json is skipped as a "_" file
    manifest = json.loads((out / MANIFEST).read_text())
    assert table.num_rows == manifest["rows"]
    assert sorted(set(table.column("game_id").to_pylist())) == [0, 1, 2]


def test_shards_need_a_new_or_empty_directory_and_ray_needs_shards(tmp_path: Path) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x.parquet").write_bytes(b"")
    code, text = run("simulate", "-n", "1", "--export-decisions", str(tmp_path / "full"), "-q")
    assert code == 2 and "not empty" in text
    code, text = run("simulate", "-n", "1", "--ray", "--export-decisions", str(tmp_path / "d.parquet"), "-q")
    assert code == 2 and "--export-decisions takes a directory" in text


def test_an_interrupted_run_keeps_the_shards_its_manifest_lists(tmp_path: Path) -> None:
    for name in ("part-00000.parquet", "part-00002.parquet", ".part-00001.77.tmp.parquet"):
        (tmp_path / name).write_bytes(b"x")
    first = {"file": "part-00000.parquet", "first_game": 0, "games": 2, "seeds": [0, 2], "rows": 10}
    write_manifest(tmp_path, {"variant": "standard"}, [first], complete=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == [MANIFEST, "part-00000.parquet"]
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    assert manifest["complete"] is False and manifest["games"] == 2 and manifest["rows"] == 10


def test_ray_missing_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    for cmd in (["simulate", "-n", "1"], ["arena", "--deals", "1", "--candidate", "heuristic", "--field", "random"]):
        code, text = run(*cmd, "--ray", "-q")
        assert code == 2, text
        assert "pip install 'moonshot[ray]'" in text


# ----------------------------------------------------------------------------- on Ray
@pytest.fixture(scope="module")
def ray_runtime() -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.mark.ray
def test_simulate_on_ray_writes_what_workers_write(ray_runtime: Any, tmp_path: Path) -> None:
    for extra in ((), ("--duplicate", "-v", "kierki")):
        a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
        args = ("simulate", "--seats", "heuristic,random", "-n", "9", *extra)
        code, text = run(*args, "--workers", "2", "--export", str(a), "-q")
        assert code == 0, text
        code, text = run(*args, "--ray", "--export", str(b))
        assert code == 0, text
        games = 9 * (4 if extra else 1)
        assert f"{games}/{games}" in text  # the progress bar ran to the end
        assert a.read_bytes() == b.read_bytes()
        assert len(a.read_text().splitlines()) == games


def _without_timings(data: dict[str, Any]) -> dict[str, Any]:
    """An arena's results less what the clock measured (seconds deciding, ms per move)."""
    for deal in data["deals"]:
        del deal["think_s"]
    del data["summary"]["ms_per_move"]
    return data


@pytest.mark.ray
def test_arena_on_ray_gives_what_workers_give(ray_runtime: Any, tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    args = ("arena", "--deals", "7", "--candidate", "heuristic", "--field", "random", "-v", "turbo", "-q")
    code, text = run(*args, "--workers", "2", "--results", str(a))
    assert code == 0, text
    code, text = run(*args, "--ray", "--per-task", "3", "--results", str(b))
    assert code == 0, text
    ra, rb = json.loads(a.read_text()), json.loads(b.read_text())
    assert [d["index"] for d in rb["deals"]] == list(range(7))
    assert _without_timings(ra) == _without_timings(rb)


@pytest.mark.ray
def test_decision_shards_on_ray_are_the_bytes_workers_write(ray_runtime: Any, tmp_path: Path) -> None:
    a, b = tmp_path / "workers", tmp_path / "ray"
    args = ("simulate", "--seats", "heuristic,random", "-n", "6", "--max-score", "40", "--duplicate", "-q")
    assert run(*args, "--workers", "2", "--export-decisions", str(a))[0] == 0
    code, text = run(*args, "--ray", "--export-decisions", str(b))
    assert code == 0, text
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir()) and len(names) > 2
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


@pytest.mark.ray
@pytest.mark.parametrize("shards", [False, True], ids=["records", "shards"])
def test_a_worker_killed_mid_task_is_retried_and_the_output_is_exact(
    ray_runtime: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shards: bool
) -> None:
    """The hook kills a task's worker after its games are played (with shards: after the shard is
    written under its temporary name); Ray runs the task again and the output is the failure-free one."""
    args = ("simulate", "--seats", "heuristic,random", "-n", "6", "--per-task", "2", "--max-score", "40", "-q")
    want, got = tmp_path / "want", tmp_path / "got"
    for out in (want, got):
        out.mkdir()
    more = ("--export-decisions", str(want / "d")) if shards else ()
    assert run(*args, "--export", str(want / "games.jsonl"), *more)[0] == 0
    marker = tmp_path / "died"
    monkeypatch.setenv(CRASH_ONCE_ENV, str(marker))
    more = ("--export-decisions", str(got / "d")) if shards else ()
    code, text = run(*args, "--ray", "--export", str(got / "games.jsonl"), *more)
    assert code == 0, text
    assert marker.exists()  # a task's worker process did die (os._exit) ...
    names = sorted(str(p.relative_to(want)) for p in want.rglob("*"))  # ... no half-written shard is left,
    assert names == sorted(str(p.relative_to(got)) for p in got.rglob("*"))
    for name in names:  # ... and the rerun gave the same games and decisions
        if (want / name).is_file():
            assert (want / name).read_bytes() == (got / name).read_bytes(), name


@pytest.mark.ray
@pytest.mark.slow  # Ray Data's start-up alone takes tens of seconds here
def test_ray_data_reads_decision_shards(ray_runtime: Any, tmp_path: Path) -> None:
    pytest.importorskip("pandas")  # Ray Data needs ray[data]'s dependencies, not in the dev extra
    ray_data = pytest.importorskip("ray.data")
    out = tmp_path / "d"
    code, text = run(
        "simulate", "--seats", "random", "-n", "3", "--per-task", "1", "--ray", "--export-decisions", str(out)
    )
    assert code == 0, text
    manifest = json.loads((out / MANIFEST).read_text())
    ds = ray_data.read_parquet(str(out))
    assert ds.count() == manifest["rows"]
    assert sorted({r["game_id"] for r in ds.select_columns(["game_id"]).take_all()}) == [0, 1, 2]


@pytest.mark.parametrize("variant", ["standard", "trend", "kierki", "turbo", "turbo-blind-chain"])
def test_export_lines_are_the_records_json(variant: str) -> None:
    from moonshot.core.variants import find_variant
    from moonshot.play.sim import play_game

    for seed in range(2):
        rec = play_game(find_variant(variant), seed, ("heuristic", "random", "heuristic", "random"))
        assert record_line(rec) == json.dumps(rec.to_json(), separators=(",", ":"))


@pytest.mark.parametrize("variant", ["standard", "trend", "kierki", "turbo", "turbo-blind-chain"])
def test_export_lines_from_the_games_actions_are_the_same_text(variant: str) -> None:
    from moonshot.play.sim import play_game_actions

    rules = find_variant(variant)
    for seed in range(2):
        seats = ("heuristic", "random", "heuristic", "random")
        rec, played = play_game_actions(rules, seed, seats)
        assert rec.actions == []
        assert record_line(rec, played) == record_line(play_game(rules, seed, seats))
