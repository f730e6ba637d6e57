"""Time control: how long ``search`` (and ``pimc``) take per decision under ``--think-ms``, p50 to p99.

    python benchmarks/search_time.py [--think-ms 200] [--decisions 150] [--variant standard]

Decisions are the non-forced moves of heuristic games (passes, charges, cards). Each is given to
the current ``SearchBot`` and to the anchor, the same bot with the old stopping rule (look at the
clock after each batch, stop once past the deadline), one after the other in alternating order,
so both see the same machine load. The table gives the wall-clock time per decision: the target is
a 99th percentile at or barely above the budget on a loaded machine. The load average is printed
with it: run it as you found the machine, and say how loaded it was.
"""

from __future__ import annotations

import argparse
import os
import random
import time

import moonshot

moonshot.one_blas_thread()  # as the moonshot command does, before NumPy loads (small matrices)

from moonshot.bots.heuristic import HeuristicBot
from moonshot.bots.pimc import PimcBot
from moonshot.bots.search import Budget, SearchBot
from moonshot.core.engine import Game
from moonshot.core.rules import EndRule
from moonshot.core.variants import find_variant
from moonshot.core.views import SeatView, seat_view


class AnchorBudget(Budget):
    """The stopping rule before the time control work: stop at the first check past the deadline."""

    def __call__(self, n: int) -> bool:
        return self.clock() >= self.deadline

    def overdue(self) -> bool:
        return False


class AnchorSearchBot(SearchBot):
    def _budget(self) -> Budget:
        return AnchorBudget(self.clock, self.think_ms, None)


def decisions(variant: str, count: int) -> list[SeatView]:
    rules = find_variant(variant).replace(end=EndRule.DEALS, deals=1)
    bot = HeuristicBot()
    out: list[SeatView] = []
    seed = 0
    while len(out) < count:
        game = Game(rules, seed)
        seed += 1
        rng = random.Random(seed)
        while not game.over:
            seat = game.to_act()[0]
            view = seat_view(game, seat)
            plays = view.legal_plays
            if len(view.legal) > 1 and (not plays or plays & (plays - 1)):
                out.append(view)
            game.apply(bot.act(view, rng))
    return out[:count]


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--think-ms", type=int, default=200)
    ap.add_argument("--decisions", type=int, default=150)
    ap.add_argument("--variant", default="standard")
    args = ap.parse_args()
    views = decisions(args.variant, args.decisions)
    bots = {
        "search (now)": SearchBot(think_ms=args.think_ms),
        "pimc": PimcBot(think_ms=args.think_ms),
        "anchor: search, old stopping rule": AnchorSearchBot(think_ms=args.think_ms),
    }
    times: dict[str, list[float]] = {k: [] for k in bots}
    load0 = os.getloadavg()[0]
    for i, view in enumerate(views):
        order = list(bots) if i % 2 == 0 else list(reversed(bots))
        for name in order:
            t0 = time.perf_counter()
            bots[name].act(view, random.Random(i))
            times[name].append(1000.0 * (time.perf_counter() - t0))
    load1 = os.getloadavg()[0]
    head = f"{args.variant}, --think-ms {args.think_ms}, {len(views)} decisions each"
    print(f"{head}; load average {load0:.1f} → {load1:.1f}")
    print("| bot | p50 ms | p90 ms | p99 ms | max ms | over budget |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, xs in times.items():
        over = sum(1 for x in xs if x > args.think_ms) / len(xs)
        cells = [pct(xs, 50), pct(xs, 90), pct(xs, 99), max(xs)]
        print(f"| {name} | " + " | ".join(f"{x:.1f}" for x in cells) + f" | {100 * over:.0f}% |")


if __name__ == "__main__":
    main()
