"""Where a search's points against shooters come from: the moons it stopped, the moons it let in, the rest.

    moonshot arena --deals 1000 --seed 0 --no-passing --simulations 50 --field shooter \\
        --candidate search --results base.json
    moonshot arena ... --candidate search-defend --results defend.json
    python benchmarks/moon_split.py base.json defend.json [more.json ...]

Each file is an arena ``--results`` file of one candidate against a field, on the same deals as
the first (the anchor). Per run it prints the paired difference against the anchor (per game,
with its 95% interval over the deals) split by the games where the field shot the moon: in the
anchor's game only (moons the run stopped), in the run's only (moons it let in), in both (a moon
costs the candidate the same 26 in each, so nothing), and in neither (the price of the defence
in the games without a moon). A conceded moon costs the candidate 8.67 points against the
field's mean (26 against 0, 26 and 26), whoever plays.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import moonshot

moonshot.one_blas_thread()  # as the moonshot command does, before NumPy loads (small matrices)

from moonshot.play.arena import mean_ci

# (deal seed, candidate minus the field's mean, a field seat shot the moon: not another candidate seat, head to head)
Game = tuple[int, float, bool]


def games(path: Path) -> tuple[str, list[Game]]:
    """The candidate's name and, game by game, its difference from the field's mean."""
    data: dict[str, Any] = json.loads(path.read_text())
    candidate = data["config"]["candidate"]
    out: list[Game] = []
    for deal in data["deals"]:
        for seating, points, moon in zip(deal["seatings"], deal["points"], deal["moons"], strict=True):
            for seat, name in enumerate(seating):
                if name != candidate:
                    continue
                field = [p for s, p in enumerate(points) if seating[s] != candidate]
                conceded = moon is not None and seating[moon] != candidate
                out.append((deal["seed"], points[seat] - sum(field) / len(field), conceded))
    return candidate, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("anchor", type=Path, help="arena --results file of the anchor (today's search, say)")
    parser.add_argument("runs", type=Path, nargs="+", help="arena --results files on the same deals")
    args = parser.parse_args(argv)
    try:
        anchor_name, anchor = games(args.anchor)
        runs = [(path, *games(path)) for path in args.runs]
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"error: not an arena --results file: {e}", file=sys.stderr)
        return 2
    if not anchor:
        print(f"error: {args.anchor} holds no games", file=sys.stderr)
        return 2
    print(f"anchor {anchor_name}: {sum(c for *_, c in anchor)} moons conceded in {len(anchor)} games")
    print(f"{'run':44s} {'conceded':>8s} {'v anchor [95% CI] a game':>27s} {'stopped':>8s} {'let in':>7s} {'rest':>7s}")
    for path, name, run in runs:
        if [g[0] for g in run] != [g[0] for g in anchor]:
            print(f"error: {path} is not on the anchor's deals (their seeds differ)", file=sys.stderr)
            return 2
        n = len(run)
        stopped = sum(r[1] - a[1] for a, r in zip(anchor, run, strict=True) if a[2] and not r[2]) / n
        let_in = sum(r[1] - a[1] for a, r in zip(anchor, run, strict=True) if r[2] and not a[2]) / n
        rest = sum(r[1] - a[1] for a, r in zip(anchor, run, strict=True) if not a[2] and not r[2]) / n
        per_deal: dict[int, list[float]] = {}
        for a, r in zip(anchor, run, strict=True):
            per_deal.setdefault(a[0], []).append(r[1] - a[1])
        m, lo, hi = mean_ci([sum(d) / len(d) for d in per_deal.values()])
        conceded = sum(c for *_, c in run)
        print(f"{name:44s} {conceded:8d} {m:+8.3f} [{lo:+.3f}, {hi:+.3f}] {stopped:+8.3f} {let_in:+7.3f} {rest:+7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
