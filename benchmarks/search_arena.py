"""The issue's acceptance suite for the search bot, as one table (duplicate arena deals).

    python benchmarks/search_arena.py --deals 2000 --think-ms 200 --workers 8
    python benchmarks/search_arena.py --deals 50 --simulations 300 --workers 2   # a quick look

Rows: search v three random, heuristic v three random (the anchor), search v three heuristic on
standard deals, then search v three heuristic on trend, turbo and kierki deals. Each row prints the
candidate's and the field's mean points per deal, the paired difference with its 95% interval, and
milliseconds per decision. ``--think-ms`` makes the numbers machine- and load-dependent;
``--simulations`` makes them reproducible anywhere.
"""

from __future__ import annotations

import argparse
import multiprocessing
import time

import moonshot

moonshot.one_blas_thread()  # as the moonshot command does, before NumPy loads (small matrices)

from moonshot.play.arena import ArenaConfig, DealResult, play_deal, summarise

SUITE = [
    ("standard", "search", "random"),
    ("standard", "heuristic", "random"),
    ("standard", "search", "heuristic"),
    ("trend", "search", "heuristic"),
    ("turbo", "search", "heuristic"),
    ("kierki", "search", "heuristic"),
]


def _play(args: tuple[ArenaConfig, int]) -> DealResult:
    config, index = args
    return play_deal(config, index, clock=time.perf_counter)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--deals", type=int, default=50)
    ap.add_argument("--think-ms", type=int, default=None)
    ap.add_argument("--simulations", type=int, default=None)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", help="comma-separated row numbers (1-based) to run")
    args = ap.parse_args()
    rows = list(enumerate(SUITE, 1))
    if args.only:
        keep = {int(x) for x in args.only.split(",")}
        rows = [r for r in rows if r[0] in keep]
    print(f"{'#':>2} {'variant':9} {'candidate v field':22} {'cand':>7} {'field':>7} {'diff':>7}", end="")
    print(f" {'95% CI':>18} {'ms/move':>8}")
    for number, (variant, cand, fld) in rows:
        config = ArenaConfig(variant, args.deals, cand, fld, args.seed, False, args.think_ms, args.simulations)
        todo = [(config, i) for i in range(args.deals)]
        if args.workers > 1:
            with multiprocessing.get_context("fork").Pool(args.workers) as pool:
                results = list(pool.imap(_play, todo, chunksize=1))
        else:
            results = [_play(t) for t in todo]
        s = summarise(results, config)
        ci = f"[{s.ci_low:+.2f}, {s.ci_high:+.2f}]"
        print(
            f"{number:>2} {variant:9} {cand + ' v ' + fld:22} {s.candidate_mean:7.3f} {s.field_mean:7.3f} "
            f"{s.difference:+7.3f} {ci:>18} {s.ms_per_move.get(cand, float('nan')):8.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
