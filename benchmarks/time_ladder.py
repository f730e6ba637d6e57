"""The time ladder: what ten times the CPU a move buys ``search``, head to head, step by step.

    python benchmarks/time_ladder.py [--budgets 1,10,100] [--deals 1000] [--chunk 250]
        [--seed 90000] [--bot search] [--workers 2] [--dir time-ladder] [--no-play]

For each step from one budget to the next (1 → 10 ms, 10 → 100 ms of CPU a move), the
``moonshot`` command itself plays the longer budget against the shorter, two seats each in both
seatings, on ``--deals`` duplicate deals without passing, ``--cpu-time`` (so a loaded machine
changes the wall clock, not what a move buys):

    moonshot arena -n CHUNK --head-to-head "search:think_ms=10" "search:think_ms=1" --cpu-time
        --no-passing -s SEED -j W --results DIR/ladder-10-1-SEED.json

Step ``k`` plays the deals from ``--seed + 1000 k`` (fresh deals for each step), in chunks of
``--chunk`` deals, each chunk its own results file. A rerun reuses every results file already in
``DIR`` (whatever its chunk size) and plays only the deals none of them covers: delete them to
measure again. ``--no-play``: play nothing, only the table and plot of the files there (a step
with fewer deals than ``--deals`` says how many it has).

Printed: a row per step (deals, CPU ms a move of each side, the longer budget's points a deal
minus the shorter's with its 95% interval, over every deal of the step). Written, with the
``plot`` extra (matplotlib): ``DIR/ladder.png``, points a deal relative to the shortest budget
against CPU ms a move (log scale), the steps' differences added up (their standard errors
combined), with the line a ladder of 0.5 a deal a step would follow.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from learning_curve import per_deal  # (this folder: the arena's paired difference of each deal)


def moonshot_cmd() -> list[str]:
    found = shutil.which("moonshot")
    return [found] if found else [sys.executable, "-m", "moonshot"]


def per_deal_by_seed(results: dict[str, Any]) -> dict[int, float]:
    """Head to head: the first bot's mean minus the second's, each deal of a results file, by the
    deal's seed (so the files of one step pool)."""
    return {results["config"]["seed"] + i: d for i, d in per_deal(results).items()}


def mean_se(xs: list[float]) -> tuple[float, float]:
    return float(np.mean(xs)), float(np.std(xs, ddof=1)) / math.sqrt(len(xs)) if len(xs) > 1 else math.inf


def step_files(directory: Path, hi: int, lo: int) -> list[Path]:
    return sorted(directory.glob(f"ladder-{hi}-{lo}-*.json"))


def covered(files: list[Path]) -> set[int]:
    seeds: set[int] = set()
    for f in files:
        config = json.loads(f.read_text())["config"]
        seeds.update(range(config["seed"], config["seed"] + config["deals"]))
    return seeds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budgets", default="1,10,100", help="CPU ms a move, shortest first")
    ap.add_argument("--deals", type=int, default=1000, help="deals a step")
    ap.add_argument("--chunk", type=int, default=250, help="deals a results file")
    ap.add_argument("--seed", type=int, default=90000, help="step k plays the deals from seed + 1000 k")
    ap.add_argument("--bot", default="search", help="the bot spec the budgets are given to (options after a colon)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--dir", type=Path, default=Path("time-ladder"))
    ap.add_argument("--no-play", action="store_true", help="play nothing: the table and plot of the files in --dir")
    args = ap.parse_args()
    budgets = [int(x) for x in args.budgets.split(",")]
    if len(budgets) < 2 or budgets != sorted(budgets):
        ap.error("--budgets: two or more budgets, shortest first")
    args.dir.mkdir(parents=True, exist_ok=True)
    sep = "," if ":" in args.bot else ":"
    rows = []
    for k, (lo, hi) in enumerate(itertools.pairwise(budgets)):
        start = args.seed + 1000 * k
        have = covered(step_files(args.dir, hi, lo))
        for c in range(start, start + args.deals, args.chunk):
            n = min(args.chunk, start + args.deals - c)
            if args.no_play or set(range(c, c + n)) <= have:
                continue
            cmd = [
                *moonshot_cmd(),
                "arena",
                "-n",
                str(n),
                "--head-to-head",
                f"{args.bot}{sep}think_ms={hi}",
                f"{args.bot}{sep}think_ms={lo}",
                "--cpu-time",
                "--no-passing",
                "-s",
                str(c),
                "-j",
                str(args.workers),
                "-q",
                "--results",
                str(args.dir / f"ladder-{hi}-{lo}-{c}.json"),
            ]
            print("$ " + " ".join(cmd), flush=True)
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            print(f"  ({time.perf_counter() - t0:.0f} s)", flush=True)
        diffs: dict[int, float] = {}
        ms: dict[str, list[float]] = {}
        for f in step_files(args.dir, hi, lo):
            results = json.loads(f.read_text())
            for seed, d in per_deal_by_seed(results).items():
                if start <= seed < start + args.deals:
                    diffs[seed] = d
            for name, v in results["summary"]["ms_per_move"].items():
                ms.setdefault(name.rsplit("=", 1)[-1], []).append(v)
        if not diffs:
            sys.exit(f"no results for {lo} → {hi} ms in {args.dir}")
        m, se = mean_se(list(diffs.values()))
        ms_lo, ms_hi = (float(np.mean(ms.get(str(b), [math.nan]))) for b in (lo, hi))
        rows.append((lo, hi, len(diffs), ms_lo, ms_hi, m, se))
    print(f"\n{args.bot}: the longer budget minus the shorter, points a deal (lower is better), no passing")
    print("| step | deals | CPU ms a move (short / long) | long − short [95% CI] |")
    print("|---|---:|---|---|")
    for lo, hi, n, ms_lo, ms_hi, m, se in rows:
        ci = f"[{m - 1.96 * se:+.3f}, {m + 1.96 * se:+.3f}]"
        print(f"| {lo} → {hi} ms | {n} | {ms_lo:.1f} / {ms_hi:.1f} | {m:+.3f} {ci} |")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        print("(no plot: pip install 'moonshot[plot]')")
        return
    xs = [rows[0][3]] + [r[4] for r in rows]
    ys, errs = [0.0], [0.0]
    for _, _, _, _, _, m, se in rows:
        ys.append(ys[-1] + m)
        errs.append(math.sqrt(errs[-1] ** 2 + se**2))
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    ax.errorbar(xs, ys, yerr=[1.96 * e for e in errs], marker="o", capsize=4, label=f"{args.bot}, measured")
    ax.plot(xs, [-0.5 * i for i in range(len(xs))], linestyle="--", color="grey", label="0.5 a deal a step (the aim)")
    for x, y, b in zip(xs, ys, budgets):
        ax.annotate(f"{b} ms", (x, y), textcoords="offset points", xytext=(6, 6))
    ax.set_xscale("log")
    ax.set_xticks(xs, [f"{x:.1f}" for x in xs])
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel("CPU ms a move (log scale)")
    ax.set_ylabel(f"points a deal relative to {budgets[0]} ms (lower is better)")
    ax.set_title(f"Time ladder: {min(r[2] for r in rows)}+ duplicate deals a step, head to head")
    ax.axhline(0, color="black", linewidth=0.5)
    ax.legend()
    fig.tight_layout()
    out = args.dir / "ladder.png"
    fig.savefig(out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
