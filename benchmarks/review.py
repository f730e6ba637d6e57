"""The game review's speed and its costs' spread (docs/review.md).

    python benchmarks/review.py                    # time one seat's review of a whole standard game
    python benchmarks/review.py --spread 5         # costs of search's and heuristic's decisions

Speed: a seeded standard game of ``search`` (its shipped budget, 200 ms a decision, at North)
against three ``heuristic`` is played, then North's decisions are reviewed with the default budget
(:data:`moonshot.bots.review.DEFAULT_WORLDS` worlds a decision) in this one process. The anchors:
the 60 s target for one seat's review of a whole game, and the time ``search`` itself spent
deciding North's moves in the same game.

Spread (``--spread N``): N games of ``search`` (200 playouts a decision) at North and South against
``heuristic`` at East and West; every seat's decisions reviewed with the default budget, the costs
summed up per bot (percentiles, share of decisions at or above each threshold), and the noise of the
estimate: the same decisions reviewed again with another seed, the mean absolute change of a cost.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import moonshot

moonshot.one_blas_thread()  # as the moonshot command does, before NumPy loads

from moonshot.bots.heuristic import HeuristicBot
from moonshot.bots.review import BLUNDER, DEFAULT_WORLDS, INACCURACY, MISTAKE, load_kernel
from moonshot.bots.search import SearchBot
from moonshot.core.actions import Action
from moonshot.core.engine import Game
from moonshot.core.variants import find_variant
from moonshot.core.views import seat_view
from moonshot.play.review import review_game

TARGET_S = 60.0
# the costs' shares printed by --spread: the thresholds and a few around them
CUTS = sorted({0.05, 0.5, 1.0, 2.0, INACCURACY, MISTAKE, BLUNDER})


def play(seed: int, bots: list[object]) -> tuple[list[Action], list[float], int]:
    """A standard game: its actions, the seconds each seat spent deciding, its deals."""
    game = Game(find_variant("standard"), seed)
    rng = random.Random(seed)
    spent = [0.0] * 4
    while not game.over:
        seat = game.to_act()[0]
        view = seat_view(game, seat)
        t = time.perf_counter()
        action = bots[seat].act(view, rng)  # type: ignore[attr-defined]
        spent[seat] += time.perf_counter() - t
        game.apply(action)
    return list(game.actions), spent, game.deal_index + 1


def speed(seed: int) -> None:
    rules = find_variant("standard")
    t = time.perf_counter()
    load_kernel()
    kernel_s = time.perf_counter() - t
    actions, spent, deals = play(seed, [SearchBot(), HeuristicBot(), HeuristicBot(), HeuristicBot()])
    t, cpu = time.perf_counter(), time.process_time()
    review = review_game(rules, seed, actions, 0)
    took, cpu = time.perf_counter() - t, time.process_time() - cpu
    n = len(review.decisions)
    print(f"standard game, seed {seed}: {deals} deals, North (search, 200 ms) reviewed with {DEFAULT_WORLDS} worlds")
    print(f"{'what':44} {'seconds':>8} {'decisions':>9} {'ms each':>8}")
    print(f"{'the review of North (this run)':44} {took:8.1f} {n:9d} {1000 * took / max(1, n):8.1f}")
    print(f"{'  its CPU time (the machine may be shared)':44} {cpu:8.1f} {n:9d} {1000 * cpu / max(1, n):8.1f}")
    print(f"{'anchor: the target for one seat':44} {TARGET_S:8.1f}")
    print(f"{'anchor: search deciding North in the game':44} {spent[0]:8.1f}")
    print(f"{'(loading the rules kernel, once a process)':44} {kernel_s:8.1f}")
    print(f"review / target {took / TARGET_S:.2f}; review / search's own thinking {took / spent[0]:.2f}")


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else 0.0


def spread(games: int, seed: int, simulations: int | None) -> None:
    rules = find_variant("standard")
    load_kernel()
    costs: dict[str, list[float]] = {"search": [], "heuristic": []}
    noise: list[float] = []
    deals = 0
    t0 = time.perf_counter()
    for g in range(seed, seed + games):
        bots = [SearchBot(think_ms=None, simulations=200), HeuristicBot(), SearchBot(think_ms=None, simulations=200)]
        bots.append(HeuristicBot())
        actions, _, n = play(g, bots)
        deals += n
        for seat in range(4):
            review = review_game(rules, g, actions, seat, simulations=simulations)
            name = "search" if seat % 2 == 0 else "heuristic"
            costs[name] += [d.cost for d in review.decisions]
            if seat < 2:  # the noise: the same decisions, other worlds
                other = review_game(rules, g, actions, seat, simulations=simulations, review_seed=1)
                noise += [abs(a.cost - b.cost) for a, b in zip(review.decisions, other.decisions)]
    took = time.perf_counter() - t0
    print(f"{games} games ({deals} deals), seeds {seed}-{seed + games - 1}, {simulations or DEFAULT_WORLDS} worlds")
    head = f"{'bot':10} {'decisions':>9} {'mean':>6} {'p50':>6} {'p75':>6} {'p90':>6} {'p95':>6} {'p99':>6} {'max':>6}"
    print(head + "".join(f" {'>=' + str(t):>7}" for t in CUTS))
    for name, xs in costs.items():
        n = len(xs)
        qs = " ".join(f"{_pct(xs, q):6.2f}" for q in (0.5, 0.75, 0.9, 0.95, 0.99))
        shares = " ".join(f"{sum(x >= t for x in xs) / n:7.1%}" for t in CUTS)
        print(f"{name:10} {n:9d} {statistics.fmean(xs):6.2f} {qs} {max(xs):6.2f} {shares}")
    print(
        f"noise: |cost(seed 0) - cost(seed 1)| over {len(noise)} decisions: mean {statistics.fmean(noise):.3f}, "
        f"p90 {_pct(noise, 0.9):.3f}, p99 {_pct(noise, 0.99):.3f}, max {max(noise):.3f}"
    )
    print(f"({took:.0f} s in all)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--spread", type=int, default=0, metavar="GAMES", help="measure the costs' spread instead")
    ap.add_argument("--simulations", type=int, default=None, help="worlds a decision for --spread")
    args = ap.parse_args()
    if args.spread:
        spread(args.spread, args.seed, args.simulations)
    else:
        speed(args.seed)


if __name__ == "__main__":
    main()
