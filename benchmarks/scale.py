"""Games per second against workers / CPUs: the process pool (`--workers`) and Ray (`--ray`), one run.

Every row plays the same games (``simulate``'s tasks: seeds split into tasks of ``--per-task``
seeds, the default seats heuristic v three random) through one backend; the anchor is the same
tasks played in this process. Ray rows start a fresh local runtime with ``num_cpus`` CPUs; its
start-up is reported apart and not counted in games/s. Then the cost of a task itself: empty
tasks (no games) through each backend give the dispatch cost per task, and the driver's own cost
per game (a JSON line and the statistics) bounds what one driver can take in. The last table
projects a 64-core cluster from those figures (docs/scaling.md explains the model).

    python benchmarks/scale.py [--games 200] [--per-task 10] [--variant standard] [--cpus 1,2]
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

# benchmarks/http.py would shadow the standard library's http (Ray needs it): not on the path here
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import moonshot
from moonshot.bots.registry import parse_seats
from moonshot.play.batch import Backend, ProcessPool, RayCluster, Serial, SimTask, plan_sim, run_sim_task
from moonshot.play.sim import summarise


def timed(backend: Backend, plan: Sequence[SimTask]) -> tuple[float, list[Any]]:
    t0 = time.perf_counter()
    out = list(backend.map(run_sim_task, plan))
    return time.perf_counter() - t0, out


def empty_tasks(plan: Sequence[SimTask], n: int) -> list[SimTask]:
    t = plan[0]
    return [SimTask(k, t.variant, t.options, t.seats, 0, 0, False, 0) for k in range(n)]


def plan_games(plan: Sequence[SimTask]) -> range:
    return range(sum(t.games for t in plan))


def ray_backend(cpus: int) -> tuple[RayCluster | None, float]:
    try:
        import ray
    except ImportError:
        return None, float("nan")
    if ray.is_initialized():
        ray.shutdown()
    t0 = time.perf_counter()
    backend = RayCluster(num_cpus=cpus)
    list(backend.map(run_sim_task, empty_tasks([_probe_task()], cpus * 2)))  # workers started and warm
    return backend, time.perf_counter() - t0


def _probe_task() -> SimTask:
    return SimTask(0, "standard", (), ("random",) * 4, 0, 0, False, 0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=200, help="seeds to play per row")
    ap.add_argument("--per-task", type=int, default=10, help="seeds per task")
    ap.add_argument("--variant", default="standard")
    ap.add_argument("--seats", default="heuristic,random,random,random")
    ap.add_argument("--cpus", default="1,2", help="worker / CPU counts to measure")
    ap.add_argument("--empty", type=int, default=400, help="empty tasks for the dispatch cost")
    ap.add_argument("--rounds", type=int, default=2, help="rounds over every backend; each row keeps its best")
    args = ap.parse_args()
    cpus = [int(x) for x in args.cpus.split(",")]
    seats = parse_seats(args.seats)
    plan = plan_sim(args.variant, {}, seats, 0, args.games, False, 1, args.per_task, lines=True, actions=False)
    empty = empty_tasks(plan, args.empty)
    compiled = "compiled core" if moonshot.compiled_modules() else "pure Python"
    print(
        f"# {args.variant}, {args.seats}: {args.games} games in {len(plan)} tasks of {args.per_task}; "
        f"{compiled}; {os.cpu_count()} CPUs on this machine"
    )

    # rows are measured in rounds (each backend in turn) and each keeps its best round: on a shared,
    # loaded machine the fastest round is the closest to what the backend costs
    best: dict[tuple[str, int], tuple[float, float, str]] = {}  # (backend, CPUs) -> wall, ms/empty task, note
    results: list[Any] = []
    want: list[str] = []

    def keep(key: tuple[str, int], wall: float, e_wall: float, note: str) -> None:
        old = best.get(key)
        if old is None or wall < old[0]:
            best[key] = (wall, 1000 * e_wall / len(empty), note)
        elif e_wall * 1000 / len(empty) < old[1]:
            best[key] = (old[0], 1000 * e_wall / len(empty), old[2])

    def check(res: list[Any]) -> None:
        assert [line for x in res for line in x.lines] == want, "a backend played other games"

    cpu_ms = float("inf")  # CPU time per game in this process: what a core costs, whatever the load
    for _ in range(args.rounds):
        c0 = time.process_time()
        wall, results = timed(Serial(), plan)
        cpu_ms = min(cpu_ms, 1000 * (time.process_time() - c0) / len(plan_games(plan)))
        want = want or [line for x in results for line in x.lines]
        check(results)
        keep(("in process (anchor)", 1), wall, timed(Serial(), empty)[0], "")
        for n in cpus:
            pool = ProcessPool(n)
            wall, res = timed(pool, plan)
            check(res)
            keep(("--workers", n), wall, timed(pool, empty)[0], "pool start-up included")
        for n in cpus:
            ray_b, start = ray_backend(n)
            if ray_b is None:
                continue
            wall, res = timed(ray_b, plan)
            check(res)
            keep(("--ray local", n), wall, timed(ray_b, empty)[0], f"start-up {start:.1f} s")
            ray_b.close()
    games = len(want)
    rows = [(name, n, w, games / w, ms, note) for (name, n), (w, ms, note) in best.items()]
    serial_rate = rows[0][3]

    # the driver, per game, as `simulate --export` runs it: take in a task's result (unpickle: the
    # records without their actions, the JSON lines encoded by the worker), add up the statistics,
    # write the lines. Then the same when the records keep their actions and the driver encodes them.
    blobs = [pickle.dumps(r) for r in results]
    full = [pickle.dumps(x) for x in timed(Serial(), [replace(t, lines=False, actions=True) for t in plan])[1]]
    driver_ms = driver_old_ms = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        got = [pickle.loads(b) for b in blobs]
        summarise([r for x in got for r in x.records])
        with open(os.devnull, "w", encoding="utf-8") as sink:
            for x in got:
                sink.writelines(line + "\n" for line in x.lines)
        driver_ms = min(driver_ms, 1000 * (time.perf_counter() - t0) / games)
        t0 = time.perf_counter()
        got = [pickle.loads(b) for b in full]
        summarise([r for x in got for r in x.records])
        for x in got:
            for rec in x.records:
                json.dumps(rec.to_json(), separators=(",", ":"))
        driver_old_ms = min(driver_old_ms, 1000 * (time.perf_counter() - t0) / games)

    print(f"\n{'backend':22} {'CPUs':>4} {'wall s':>7} {'games/s':>8} {'per CPU':>8} {'speed-up':>8} ", end="")
    print(f"{'ms/empty task':>13}  note")
    for name, n, w, rate, ms, note in rows:
        print(f"{name:22} {n:4} {w:7.2f} {rate:8.1f} {rate / n:8.1f} {rate / serial_rate:7.2f}x {ms:13.2f}  {note}")

    wall_ms = 1000 / max(rate for _, n, _, rate, _, _ in rows if n == 1)  # best one-CPU row
    game_ms = min(wall_ms, cpu_ms)
    print(f"\nper game, one core: {wall_ms:.1f} ms wall (best one-CPU row), {cpu_ms:.1f} ms CPU in process")
    print(f"driver per game (--export): {driver_ms:.3f} ms ", end="")
    print(f"(records with their actions, encoded by the driver: {driver_old_ms:.3f} ms)")
    ray_rows = [r for r in rows if r[0] == "--ray local"]
    task_ms = min(r[4] for r in ray_rows) if ray_rows else float("nan")
    print(f"Ray dispatch per task (driver, empty tasks): {task_ms:.2f} ms")
    project(game_ms, task_ms, driver_ms)


def project(game_ms: float, task_ms: float, driver_ms: float, cores: int = 64) -> None:
    """games/s on ``cores`` cores: each core pays the game plus its share of the task overhead; one
    driver takes in at most 1000 / (driver_ms + task_ms / k) games/s with k games per task."""
    print(f"\nprojection, {cores} cores, Ray: {game_ms:.1f} ms/game, {task_ms:.2f} ms/task, ", end="")
    print(f"driver {driver_ms:.3f} ms/game")
    print(f"{'games/task':>10} {'per core':>9} {f'{cores} cores':>10} {'driver max':>11} {'expected':>9}")
    for k in (1, 10, 100, 1000):
        per_core = 1000 * k / (k * game_ms + task_ms)
        driver_max = 1000 / (driver_ms + task_ms / k)
        expected = min(cores * per_core, driver_max)
        print(f"{k:10} {per_core:9.1f} {cores * per_core:10.0f} {driver_max:11.0f} {expected:9.0f}")


if __name__ == "__main__":
    main()
