"""The `learned` network's learning curve: its points a deal against a field as its training games grow.

    python benchmarks/learning_curve.py --games-file ei.jsonl.gz [--sizes 500,1000,2000,4000,8000]
        [--teacher search:prior=3] [--simulations 300] [--games-seed 4000000]
        [--field pimc:classic] [--deals 300] [--seed 80000] [--workers 2]
        [--baseline learned] [--hidden 64,32] [--also-hidden 256,128] [--dir learning-curve]

What people run, step by step, as subprocesses of the ``moonshot`` command:

1. ``moonshot train-learned --games N --games-file F --out DIR/N.npz`` for each size ``N``,
   the largest first: if ``F`` does not exist, that run plays its games (``--teacher`` at
   ``--simulations`` playouts a decision, self-play, deal i from ``--games-seed + i``) and keeps
   them there; every smaller size trains on the file's first ``N`` games.
   ``--also-hidden 256,128`` trains one more network of that shape on the largest size
   (``DIR/N-256x128.npz``): a bigger network's point beside the curve.
2. ``moonshot arena -n D --candidate learned:network=DIR/N.npz --field FIELD --no-passing
   --cpu-time -s SEED -j W --results DIR/N.json`` for each network, and once for ``--baseline``
   (a bot spec: the ``learned`` bot as installed by default), on the same deals.

Printed: a row per size (the teacher's decisions it learned from, its held-out agreement with the
teacher, its points a deal against the field with the 95% interval, and its difference from the
baseline deal by deal on the same deals with that interval). Written: ``DIR/curve.csv`` and, with
the ``plot`` extra (matplotlib), ``DIR/curve.png``: points a deal against the field by training
games, with the intervals, the baseline's and the field's own level (zero) as lines. A rerun
reuses every weights and results file already in ``DIR``: delete them to measure again.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np


def moonshot_cmd() -> list[str]:
    found = shutil.which("moonshot")
    return [found] if found else [sys.executable, "-m", "moonshot"]


def run(args: list[str]) -> None:
    print("$ " + " ".join(args), flush=True)
    start = time.perf_counter()
    subprocess.run(moonshot_cmd() + args, check=True)
    print(f"  ({time.perf_counter() - start:.0f} s)", flush=True)


def per_deal(results: dict[str, Any]) -> dict[int, float]:
    """The paired difference (candidate's mean minus the field's mean) of each deal of an arena
    results file, by deal index."""
    cand = results["config"]["candidate"]
    out = {}
    for deal in results["deals"]:
        mine: list[int] = []
        theirs: list[int] = []
        for seating, points in zip(deal["seatings"], deal["points"]):
            for name, p in zip(seating, points):
                (mine if name == cand else theirs).append(p)
        out[deal["index"]] = sum(mine) / len(mine) - sum(theirs) / len(theirs)
    return out


def mean_ci(xs: list[float]) -> tuple[float, float, float]:
    m = float(np.mean(xs))
    half = 1.96 * float(np.std(xs, ddof=1)) / math.sqrt(len(xs)) if len(xs) > 1 else math.inf
    return m, m - half, m + half


def weights_meta(path: Path) -> dict[str, Any]:
    with np.load(path) as arrays:
        return dict(json.loads(str(arrays["meta"]))) if "meta" in arrays else {}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games-file", type=Path, required=True, help="the teacher's games (played into it if missing)")
    ap.add_argument("--sizes", default="500,1000,2000,4000,8000", help="training games of each point")
    ap.add_argument("--teacher", default="search:prior=3")
    ap.add_argument("--simulations", type=int, default=300)
    ap.add_argument("--games-seed", type=int, default=4_000_000)
    ap.add_argument("--hidden", default="64,32", help="the curve's network shape")
    ap.add_argument("--also-hidden", default=None, help="one more shape, trained on the largest size only")
    ap.add_argument("--field", default="pimc:classic")
    ap.add_argument("--deals", type=int, default=300)
    ap.add_argument("--seed", type=int, default=80000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--baseline", default="learned", help="the bot every network is compared with, deal by deal")
    ap.add_argument("--baseline-label", default=None, help="the baseline's name on the plot (default: its spec)")
    ap.add_argument("--dir", type=Path, default=Path("learning-curve"))
    args = ap.parse_args()
    sizes = sorted({int(s) for s in args.sizes.split(",")}, reverse=True)
    args.dir.mkdir(parents=True, exist_ok=True)

    plan = [(str(n), n, args.hidden) for n in sizes]
    if args.also_hidden:
        plan.append((f"{sizes[0]}-{args.also_hidden.replace(',', 'x')}", sizes[0], args.also_hidden))
    for key, n, hidden in plan:
        weights = args.dir / f"{key}.npz"
        if not weights.exists():
            games = ["--games", str(n), "--games-file", str(args.games_file), "--seed", str(args.games_seed)]
            teacher = ["--teacher", args.teacher, "--simulations", str(args.simulations)]
            shape = ["--hidden", hidden, "--out", str(weights)]
            run(["train-learned", *games, *teacher, *shape, "--workers", str(args.workers), "--quiet"])
    arena = ["arena", "-n", str(args.deals), "--field", args.field, "--no-passing", "--cpu-time"]
    arena += ["-s", str(args.seed), "-j", str(args.workers)]
    runs = {key: args.dir / f"{key}.json" for key, _, _ in plan}
    runs["baseline"] = args.dir / "baseline.json"
    for key, path in runs.items():
        if not path.exists():
            spec = args.baseline if key == "baseline" else f"learned:network={args.dir / (key + '.npz')}"
            run([*arena, "--candidate", spec, "--results", str(path)])

    loaded = {k: json.loads(p.read_text()) for k, p in runs.items()}
    base = per_deal(loaded["baseline"])
    bm, blo, bhi = mean_ci(list(base.values()))
    rows = []
    for key, n, hidden in sorted(plan, key=lambda p: (p[2] != args.hidden, p[1])):
        meta = weights_meta(args.dir / f"{key}.npz")
        mine = per_deal(loaded[key])
        m, lo, hi = mean_ci(list(mine.values()))
        shared = sorted(set(mine) & set(base))
        d, dlo, dhi = mean_ci([mine[i] - base[i] for i in shared])
        ms = loaded[key]["summary"]["ms_per_move"]
        rows.append(
            {
                "games": n,
                "hidden": hidden,
                "decisions": meta.get("decisions", ""),
                "held_out_agreement": meta.get("validation_agreement", ""),
                "difference": round(m, 3),
                "ci_low": round(lo, 3),
                "ci_high": round(hi, 3),
                "minus_baseline": round(d, 3),
                "minus_baseline_low": round(dlo, 3),
                "minus_baseline_high": round(dhi, 3),
                "cpu_ms_a_move": round(ms.get(loaded[key]["config"]["candidate"], float("nan")), 3),
            }
        )
    load = os.getloadavg()[0]
    print(
        f"\n`learned` networks v 3 {args.field}, {args.deals} deals from seed {args.seed}, no passing "
        f"(lower is better; load average {load:.1f})"
    )
    print(f"baseline {args.baseline}: {bm:+.3f} [{blo:+.3f}, {bhi:+.3f}]")
    print(
        "| games | network | decisions | held-out agreement | − field [95% CI] "
        "| − baseline, deal by deal | CPU ms a move |"
    )
    print("|---:|---|---:|---:|---|---|---:|")
    for r in rows:
        agree = f"{r['held_out_agreement']:.1%}" if r["held_out_agreement"] != "" else ""
        print(
            f"| {r['games']:,} | {r['hidden']} | {r['decisions']:,} | {agree} | {r['difference']:+.3f} "
            f"[{r['ci_low']:+.3f}, {r['ci_high']:+.3f}] | {r['minus_baseline']:+.3f} "
            f"[{r['minus_baseline_low']:+.3f}, {r['minus_baseline_high']:+.3f}] | {r['cpu_ms_a_move']} |"
        )
    with (args.dir / "curve.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {args.dir / 'curve.csv'}")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no plot: matplotlib is missing (pip install 'moonshot[plot]')")
        return
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    for shape, style, color, shift in (
        (args.hidden, "o-", "tab:blue", 1.0),
        (args.also_hidden, "s", "tab:green", 1.08),
    ):
        pts = [r for r in rows if r["hidden"] == shape]
        if pts:
            ys = [r["difference"] for r in pts]
            err = [[r["difference"] - r["ci_low"] for r in pts], [r["ci_high"] - r["difference"] for r in pts]]
            label = f"{shape.replace(',', '-')} network, trained on the first N games"
            xs_ = [r["games"] * shift for r in pts]  # (a second shape beside the first, not on it)
            ax.errorbar(xs_, ys, yerr=err, fmt=style, color=color, capsize=4, label=label)
    xs = sorted({r["games"] for r in rows})
    ax.axhline(bm, color="tab:orange", linestyle="--", label=f"{args.baseline_label or args.baseline}: {bm:+.2f}")
    ax.axhline(0.0, color="grey", linewidth=0.8, label=f"{args.field} (the field's own level)")
    ax.set_xscale("log")
    ax.minorticks_off()
    ax.set_xticks(xs, [f"{x:,}" for x in xs])
    ax.set_xlabel(f"training games ({args.teacher} at {args.simulations} playouts, self-play)")
    ax.set_ylabel(f"points a deal − {args.field}\n(lower is better, 95% CI)")
    ax.set_title(f"learned v 3 {args.field}: {args.deals} duplicate deals, no passing")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.dir / "curve.png")
    print(f"wrote {args.dir / 'curve.png'}")


if __name__ == "__main__":
    main()
