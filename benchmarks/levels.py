"""What each bot level costs: CPU milliseconds a decision, and decisions one core makes a second.

    python benchmarks/levels.py [--deals 20] [--seed 0] [--variant standard] [--levels 1,2,6]

Each level plays ``--deals`` deals in all four seats (no passing: every decision is a card), one
level at a time in this one process; a decision's cost is the CPU time (``time.process_time``) of
its ``act``, so other work on the machine slows the wall clock, not the figure. The anchor is
level 1 (the random bot) in the same run. The levels table (``moonshot.bots.levels``) keeps the
``ms/decision`` column of a run of this script; ``docs/bots.md`` says which.
"""

from __future__ import annotations

import argparse
import random
import time

import moonshot

moonshot.one_blas_thread()  # as the moonshot command does, before NumPy loads (small matrices)

from moonshot.bots.levels import LEVELS, Level
from moonshot.bots.registry import make_bot
from moonshot.core.engine import Game
from moonshot.core.rules import PassDirection
from moonshot.core.variants import find_variant
from moonshot.core.views import seat_view


def cost(level: Level, deals: int, seed: int, variant: str) -> tuple[float, int]:
    """(CPU seconds deciding, decisions) over ``deals`` deals of four ``level`` bots."""
    rules = find_variant(variant).replace(pass_cycle=(PassDirection.HOLD,))
    bots = [make_bot(level.key) for _ in range(4)]
    warm = Game(rules, seed - 1)  # the first decision loads networks and compiles the kernel
    bots[0].act(seat_view(warm, warm.to_act()[0]), random.Random(0))
    spent, decisions = 0.0, 0
    for d in range(deals):
        game = Game(rules, seed + d)
        rngs = [random.Random(f"levels:{seed + d}:{s}") for s in range(4)]
        start_deal = game.deal_index
        while not game.over and game.deal_index == start_deal:
            seat = game.to_act()[0]
            view = seat_view(game, seat)
            t = time.process_time()
            action = bots[seat].act(view, rngs[seat])
            spent += time.process_time() - t
            decisions += 1
            game.apply(action)
    return spent, decisions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deals", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--variant", default="standard")
    ap.add_argument("--levels", default="", help="comma-separated level numbers (default: all)")
    args = ap.parse_args()
    wanted = {int(n) for n in args.levels.split(",") if n.strip()}
    print(f"{args.variant}, {args.deals} deals a level, four seats, no passing; CPU time of each decision")
    print(f"{'level':<22} {'spec':<28} {'decisions':>9} {'ms/decision':>12} {'decisions/core-s':>17} {'v level 1':>10}")
    anchor = None
    for level in LEVELS:
        if wanted and level.number not in wanted and level.number != 1:
            continue
        spent, n = cost(level, args.deals, args.seed, args.variant)
        ms = 1000 * spent / max(n, 1)
        anchor = anchor if anchor is not None else ms
        rate = 1000 / ms if ms > 0 else float("inf")
        times = ms / anchor if anchor > 0 else float("inf")
        name = f"{level.number} {level.name}"
        print(f"{name:<22} {level.spec:<28} {n:>9} {ms:>12.4f} {rate:>17,.0f} {times:>9.0f}x")


if __name__ == "__main__":
    main()
