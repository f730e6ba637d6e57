"""CPU a pass decision: each bot spec's pass on the same hands, mean / p50 / p99 / max in ms.

    python benchmarks/pass_time.py "search:think_ms=40" pimc:classic [--deals 50] [--seed 70000]
        [--variant standard] [--think-ms T] [--simulations S]

Deal ``i`` is the arena's deal ``seed + i`` (its direction from the variant's cycle; deals that
hold their cards are skipped), and each of its four seats' pass views is handed to every spec in
turn, so the specs see the same hands and about the same machine load. Specs are arena specs,
made as the arena makes them with ``--cpu-time`` (budgets count the process's CPU time), and the
time is the process's CPU time around ``act``. Say how loaded the machine was: the load average is
printed with the table.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time

import moonshot

moonshot.one_blas_thread()  # as the moonshot command does, before NumPy loads (small matrices)

from moonshot.core.engine import Game, Phase
from moonshot.core.variants import find_variant
from moonshot.core.views import seat_view
from moonshot.play.arena import ArenaConfig, arena_bot, deal_rules


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("specs", nargs="+", help="arena bot specs (search:think_ms=40, pimc:classic, ...)")
    ap.add_argument("--deals", type=int, default=50)
    ap.add_argument("--seed", type=int, default=70000)
    ap.add_argument("--variant", default="standard")
    ap.add_argument("--think-ms", type=int, default=None)
    ap.add_argument("--simulations", type=int, default=None)
    args = ap.parse_args()
    config = ArenaConfig(variant=args.variant, think_ms=args.think_ms, simulations=args.simulations, cpu_time=True)
    bots = {spec: arena_bot(spec, config, time.process_time) for spec in args.specs}
    times: dict[str, list[float]] = {spec: [] for spec in args.specs}
    base = find_variant(args.variant)
    for i in range(args.deals):
        rules = deal_rules(base, i)
        game = Game(rules, args.seed + i)
        if game.phase not in (Phase.PASS, Phase.PILE):
            continue
        for seat in range(4):
            view = seat_view(game, seat)
            for spec, bot in bots.items():
                rng = random.Random(f"pass-time:{args.seed + i}:{seat}")
                t0 = time.process_time()
                bot.act(view, rng)
                times[spec].append(1000.0 * (time.process_time() - t0))
    print(f"load average {os.getloadavg()[0]:.2f}; {len(times[args.specs[0]])} pass decisions each")
    print("| spec | mean | p50 | p99 | max (CPU ms) |\n|---|---:|---:|---:|---:|")
    for spec, ts in times.items():
        ts.sort()
        p99 = ts[min(len(ts) - 1, int(0.99 * len(ts)))]
        print(f"| `{spec}` | {statistics.fmean(ts):.1f} | {statistics.median(ts):.1f} | {p99:.1f} | {ts[-1]:.1f} |")


if __name__ == "__main__":
    main()
