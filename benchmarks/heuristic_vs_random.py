"""Heuristic bot vs three random bots, duplicate over seats: mean points per deal with a 95% CI.

Each seed's game is played four times with the heuristic rotated through every seat (the
deals are the same each time), so seat and deal luck cancel. Points are each deal's raw
penalties as the scoring table gives them (Trend's negative scores are flipped back to
penalties). Usage: ``python benchmarks/heuristic_vs_random.py [--deals-standard N] [--deals N]``.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time

from moonshot.bots.heuristic import HeuristicBot
from moonshot.bots.random import RandomBot
from moonshot.engine import Game
from moonshot.events import DealEnded
from moonshot.variants import find_variant
from moonshot.views import seat_view


def play(variant: str, seed: int, hero_seat: int, max_deals: int) -> tuple[list[float], list[float], float]:
    rules = find_variant(variant)
    game = Game(rules, seed)
    bots = [RandomBot() for _ in range(4)]
    hero = HeuristicBot()
    rng = random.Random(seed * 4 + hero_seat)
    sign = -1 if rules.negative_scores else 1
    hero_pts: list[float] = []
    rand_pts: list[float] = []
    think = 0.0
    seen = 0
    while not game.over and len(hero_pts) < max_deals:
        for s in game.to_act():
            view = seat_view(game, s)
            if s == hero_seat:
                t0 = time.perf_counter()
                action = hero.act(view, rng)
                think += time.perf_counter() - t0
            else:
                action = bots[s].act(view, rng)
            game.apply(action)
            break
        for e in game.log[seen:]:
            if isinstance(e, DealEnded):
                pts = [sign * p for p in e.points]
                hero_pts.append(pts[hero_seat])
                rand_pts.append(sum(p for i, p in enumerate(pts) if i != hero_seat) / 3)
        seen = len(game.log)
    return hero_pts, rand_pts, think


def ci(xs: list[float]) -> str:
    m = statistics.fmean(xs)
    h = 1.96 * statistics.stdev(xs) / math.sqrt(len(xs)) if len(xs) > 1 else float("nan")
    return f"{m:6.2f} ± {h:4.2f}"


def run(variant: str, deals: int) -> None:
    hero: list[float] = []
    rand: list[float] = []
    diffs: list[float] = []
    think = 0.0
    seed = 0
    t0 = time.perf_counter()
    while len(hero) < deals:
        for seat in range(4):
            h, r, t = play(variant, seed, seat, max_deals=8)
            hero += h
            rand += r
            diffs += [a - b for a, b in zip(h, r)]
            think += t
        seed += 1
    wall = time.perf_counter() - t0
    us = 1e6 * think / len(hero)
    print(f"| {variant:10} | {len(hero):6} | {ci(hero)} | {ci(rand)} | {ci(diffs)} | {us:8.0f} | {wall:6.1f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--deals-standard", type=int, default=2000)
    ap.add_argument("--deals", type=int, default=400)
    ap.add_argument("--variants", default="standard,omnibus,trend,turbo,kierki")
    args = ap.parse_args()
    print("| variant    |  deals | heuristic pts/deal | random pts/deal | heur - rand | hero us/deal | wall s |")
    print("|------------|--------|--------------------|-----------------|-------------|--------------|--------|")
    for v in args.variants.split(","):
        run(v, args.deals_standard if v == "standard" else args.deals)


if __name__ == "__main__":
    main()
