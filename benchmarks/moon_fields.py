"""What moon defence costs against each kind of field: `search` and `search-defend` against three `shooter`,
three `search` and three `pimc`, on the same duplicate deals.

    python benchmarks/moon_fields.py [--deals 300] [--seed 0] [--simulations 50 | --think-ms 20]
                                     [--workers 2] [--field NAME ...] [--candidate SPEC]

The target: `search` concedes half as many moons to a field that tries to shoot. `search-defend`
does against three `shooter`; this asks what the same defence does against fields that shoot for
other reasons. Each row plays the arena's duplicate deals (standard, no passing, the arena's seeds
and random streams: a row is `moonshot arena --candidate SPEC --field FIELD --no-passing` with the
budget given) once with the anchor, `search`, and once with the candidate, and prints the moons each
conceded and the candidate's paired difference minus the anchor's, deal by deal (negative: the
candidate did better against that field than `search` did). With `--think-ms` every bot's budget
counts its process's CPU time (the arena's `--cpu-time`).
"""

from __future__ import annotations

import argparse
import time

import moonshot

moonshot.one_blas_thread()  # as the moonshot command does, before NumPy loads (small matrices)

from moonshot.play.arena import ArenaConfig, DealResult, mean_ci, paired_differences, summarise
from moonshot.play.batch import make_backend, plan_arena, run_arena_task

ANCHOR = "search"


def run(config: ArenaConfig, workers: int) -> list[DealResult]:
    """The run's deals, played and timed as ``moonshot arena --workers`` plays them, in deal order."""
    backend = make_backend(workers, None)
    try:
        return [r for task in backend.map(run_arena_task, plan_arena(config, per_task=4)) for r in task]
    finally:
        backend.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=300, help="duplicate deals (each in four seatings)")
    parser.add_argument("--seed", type=int, default=0, help="deal i is dealt from seed + i, as in the arena")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--simulations", type=int, help="playouts a move for every search bot (default 50)")
    budget.add_argument("--think-ms", type=int, help="CPU milliseconds a move for every search bot")
    parser.add_argument("--workers", type=int, default=2, help="processes")
    parser.add_argument("--field", action="append", help="a field bot (repeatable; default: shooter, search, pimc)")
    parser.add_argument("--candidate", default="search-defend", help="the bot measured against the anchor, search")
    args = parser.parse_args()
    if args.deals < 1 or args.workers < 1:
        parser.error("--deals and --workers must be at least 1")
    simulations = args.simulations if args.simulations or args.think_ms else 50
    fields = args.field or ["shooter", "search", "pimc"]
    how = f"--think-ms {args.think_ms} --cpu-time" if args.think_ms else f"--simulations {simulations}"
    print(f"standard, {args.deals} duplicate deals from seed {args.seed}, no passing, {how}, {args.workers} workers")
    print(
        f"{'field':<10} {'anchor conceded':>15} {'candidate conceded':>18} {'share':>6} "
        f"{'candidate - anchor [95% CI]':>30} {'ms/move a/c':>12} {'s':>6}"
    )
    for field in fields:
        diffs: list[list[float]] = []
        conceded: list[int] = []
        ms: list[float] = []
        start = time.perf_counter()
        for spec in (ANCHOR, args.candidate):
            # the arena tells a policy by its spec: a field of the candidate's own bot is written with
            # an empty option list ("search:"), the same bot under another name
            seat_field = field + ":" if field == spec else field
            config = ArenaConfig(
                deals=args.deals,
                seed=args.seed,
                candidate=spec,
                field=seat_field,
                simulations=simulations if not args.think_ms else None,
                think_ms=args.think_ms,
                cpu_time=bool(args.think_ms),
                passing=False,
            )
            results = run(config, args.workers)
            summary = summarise(results, config)
            diffs.append(paired_differences(results, spec))
            conceded.append(summary.moons_conceded)
            ms.append(summary.ms_per_move.get(spec, float("nan")))
        m, lo, hi = mean_ci([c - a for a, c in zip(diffs[0], diffs[1])])
        share = f"{conceded[1] / conceded[0]:.0%}" if conceded[0] else "-"
        print(
            f"{field:<10} {conceded[0]:>15} {conceded[1]:>18} {share:>6} "
            f"{f'{m:+.3f} [{lo:+.3f}, {hi:+.3f}]':>30} {f'{ms[0]:.1f}/{ms[1]:.1f}':>12} "
            f"{time.perf_counter() - start:>6.0f}",
            flush=True,
        )
    print(f"(the candidate: {args.candidate}; moons conceded are counted over {4 * args.deals} games a run)")


if __name__ == "__main__":
    main()
