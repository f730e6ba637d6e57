"""What `moonshot simulate` spends besides playing: the progress bar, statistics and ``--export``,
and what ``--workers 2`` costs in CPU, measured as pairs of runs so a machine whose load changes
treats both alike.

``benchmarks/engine.py`` rates each CLI path by deals per CPU second pooled over its rounds; on a
loaded machine one 300-game run varies by half from the next, so the cost of the bar (a few
percent) drowns. Here each pair runs the anchor and the contender back to back, alternating which
goes first, and the table gives the median of the pairs' ratios of CPU seconds (the subprocess
and its workers; start-up included):

* ``-q`` (the anchor) against the same run with the progress bar drawn as on a terminal and
  ``--export FILE``: their cost as a share of the quiet run (target: < 10%);
* ``-q`` against ``-q --workers 2``: the extra CPU two workers spend, per run and per task
  (pool start-up, sending tasks and results), and the speed-up two idle cores would give,
  ``2 × CPU(1 worker) / CPU(2 workers)`` (target: >= 1.8x; the wall clock cannot show it on a
  machine whose cores are busy with other jobs).

    python benchmarks/simulate_costs.py [--pairs 8] [--games 300] [--seats random,random,random,random]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

from moonshot.play.batch import task_size


def run_cli(games: int, seed: int, seats: str, *extra: str) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one ``moonshot simulate`` subprocess, its workers included."""
    with tempfile.TemporaryDirectory() as tmp:
        argv = [a if a != "FILE" else os.path.join(tmp, "games.jsonl") for a in extra]
        code = "from moonshot.cli.main import main; main()"
        cmd = [sys.executable, "-c", code, "simulate", "-n", str(games), "-s", str(seed), "--seats", seats, *argv]
        # the progress bar draws as on a terminal (to a pipe nobody reads but us)
        env = {**os.environ, "TTY_INTERACTIVE": "1", "FORCE_COLOR": "1", "COLUMNS": "120"}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, env=env, check=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def pairs(n: int, games: int, seats: str, anchor: list[str], other: list[str]) -> list[tuple[float, float]]:
    """``n`` pairs of (anchor CPU s, other CPU s), the same seeds in a pair, the order alternating."""
    out = []
    for i in range(n):
        seed = 1000 * i
        if i % 2:
            b, a = run_cli(games, seed, seats, *other)[0], run_cli(games, seed, seats, *anchor)[0]
        else:
            a, b = run_cli(games, seed, seats, *anchor)[0], run_cli(games, seed, seats, *other)[0]
        out.append((a, b))
    return out


def in_process(games: int, seats: str) -> dict[str, float]:
    """CPU ms of the parts of a run, measured here: playing the games (records without actions),
    writing their ``--export`` lines, the statistics table, importing rich.progress, and drawing
    the bar for as long as the quiet run takes at 4 redraws a second (``progress_bar``'s rate)."""
    import io

    from rich.console import Console

    from moonshot.bots.registry import parse_seats
    from moonshot.cli import main as cli
    from moonshot.cli import progress
    from moonshot.core.variants import find_variant
    from moonshot.play.batch import record_line
    from moonshot.play.sim import play_game_actions

    rules, names = find_variant("standard"), parse_seats(seats)

    def cpu_ms(fn: Callable[[], object]) -> float:
        runs = []
        for _ in range(5):
            t = time.process_time()
            fn()
            runs.append(1000 * (time.process_time() - t))
        return statistics.median(runs)

    played = [play_game_actions(rules, seed, names) for seed in range(games)]
    play = cpu_ms(lambda: [play_game_actions(rules, seed, names) for seed in range(games)])
    export = cpu_ms(lambda: [record_line(rec, actions) for rec, actions in played])
    records = [rec for rec, _ in played]
    cli.console = Console(file=io.StringIO(), width=120)  # the table drawn, to nowhere
    stats = cpu_ms(lambda: cli._print_summary(records, "standard", False, False, 1.0))
    t = time.process_time()
    import rich.progress  # noqa: F401

    imported = 1000 * (time.process_time() - t)
    progress.err_console = Console(file=io.StringIO(), width=120, force_terminal=True)
    with progress.progress_bar(False) as bar:
        task_id = bar.add_task("standard", total=games, status="")
        t = time.process_time()
        for i in range(40):
            bar.update(task_id, advance=1, status=f"{i} deals, 3000 deals/s")
            bar.refresh()
        per_refresh = 1000 * (time.process_time() - t) / 40
    drawing = per_refresh * 4 * play / 1000  # 4 redraws per second of a run as long as the play
    return {
        "play (the anchor)": play,
        "--export lines": export,
        "statistics (the summary table; also in -q runs)": stats,
        "import rich.progress (not in -q runs)": imported,
        f"progress bar: {per_refresh:.2f} ms a redraw, 4 a second": drawing,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=8, help="pairs of runs per comparison")
    ap.add_argument("--games", type=int, default=300, help="games per run")
    ap.add_argument("--seats", default="random,random,random,random")
    args = ap.parse_args(argv)

    run_cli(20, 0, args.seats, "-q")  # warm-up: the file cache, .pyc files
    quiet = ["-q"]
    full = ["--export", "FILE"]
    two = ["-q", "--workers", "2"]
    extras = pairs(args.pairs, args.games, args.seats, quiet, full)
    workers = pairs(args.pairs, args.games, args.seats, quiet, two)
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    tasks = len(range(0, args.games, task_size(args.games, 2, None)))

    cost = [100 * (b / a - 1) for a, b in extras]
    extra_cpu = [b - a for a, b in workers]
    speedup = [2 * a / b for a, b in workers]
    med = statistics.median
    print(f"moonshot simulate -n {args.games} --seats {args.seats}: {args.pairs} pairs of runs")
    print(f"load average {' '.join(load)}")
    print(f"CPU seconds of a quiet run (-q): median {med(a for a, _ in extras + workers):.3f}")
    print()
    print(f"{'measure':<58} {'median':>9} {'pairs':>20}")
    print(f"{'-' * 58} {'-' * 9} {'-' * 20}")
    print(
        f"{'bar + statistics + --export, % of a quiet run':<58} {med(cost):>8.1f}% "
        f"{min(cost):>8.1f}% to {max(cost):.1f}%"
    )
    print(
        f"{'--workers 2: extra CPU per run (s)':<58} {med(extra_cpu):>9.3f} "
        f"{min(extra_cpu):>8.3f} to {max(extra_cpu):.3f}"
    )
    per_task = [1000 * x / tasks for x in extra_cpu]
    print(
        f"{f'--workers 2: extra CPU per task (ms, {tasks} tasks)':<58} {med(per_task):>9.2f} "
        f"{min(per_task):>8.2f} to {max(per_task):.2f}"
    )
    print(
        f"{'--workers 2 on two idle cores: 2 x CPU(1) / CPU(2)':<58} {med(speedup):>8.2f}x "
        f"{min(speedup):>7.2f}x to {max(speedup):.2f}x"
    )
    parts = in_process(args.games, args.seats)
    play = parts["play (the anchor)"]
    print(f"\nin this process, CPU ms for {args.games} games (medians of 5; the play is the anchor):")
    for name, ms in parts.items():
        print(f"  {name:<56} {ms:>9.1f} {100 * ms / play:>8.1f}%")
    verdict = "met" if med(cost) < 10 else "NOT met"
    print(f"\ntarget: bar + statistics + --export < 10% of a run: {med(cost):.1f}%: {verdict}")
    verdict = "met" if med(speedup) >= 1.8 else "NOT met"
    print(f"target: --workers 2 >= 1.8x one worker on 2 idle cores (by CPU): {med(speedup):.2f}x: {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
