"""Heuristic bot vs three random bots, duplicate over seats: mean points per deal with 95% CIs.

Each seed's game is played four times with the heuristic rotated through every seat, and once
more per seat with a random bot in that seat (the "random in seat" baseline, an all-random
table). Deals depend only on (seed, deal index), so every row compares the same deals and
seat luck cancels. Points are each deal's penalties as scored (Trend's negative scores are
flipped back to penalties; JD and moons included), so lower is better.

Columns: the heuristic's points per deal; the random seat's points on the same deals at an
all-random table; the mean of the three random opponents at the heuristic's table; the
paired difference heuristic minus random-in-seat; the heuristic's mean and max think time
per decision (max is dominated by scheduler noise on a shared machine).

Usage: ``python benchmarks/heuristic_vs_random.py [--deals-standard 2000] [--deals 400]``.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time

from moonshot.bots.base import Bot
from moonshot.bots.heuristic import HeuristicBot
from moonshot.bots.random import RandomBot
from moonshot.core.engine import Game
from moonshot.core.events import DealEnded
from moonshot.core.variants import find_variant
from moonshot.core.views import seat_view

DEALS_PER_GAME = 8  # the first deals of each game; games ending at a score end sooner


def play(variant: str, seed: int, hero_seat: int, hero: Bot) -> tuple[list[float], list[float], list[float]]:
    """(hero's points per deal, the other three's mean per deal, hero's think times)."""
    rules = find_variant(variant)
    game = Game(rules, seed)
    bots: list[Bot] = [RandomBot(), RandomBot(), RandomBot(), RandomBot()]
    bots[hero_seat] = hero
    rng = random.Random(seed * 4 + hero_seat)
    sign = -1 if rules.negative_scores else 1
    mine: list[float] = []
    others: list[float] = []
    think: list[float] = []
    seen = 0
    while not game.over and len(mine) < DEALS_PER_GAME:
        s = game.to_act()[0]
        view = seat_view(game, s)
        t0 = time.perf_counter()
        action = bots[s].act(view, rng)
        if s == hero_seat:
            think.append(time.perf_counter() - t0)
        game.apply(action)
        for e in game.log[seen:]:
            if isinstance(e, DealEnded):
                pts = [sign * p for p in e.points]
                mine.append(pts[hero_seat])
                others.append((sum(pts) - pts[hero_seat]) / 3)
        seen = len(game.log)
    return mine, others, think


def ci(xs: list[float]) -> str:
    m = statistics.fmean(xs)
    h = 1.96 * statistics.stdev(xs) / math.sqrt(len(xs)) if len(xs) > 1 else float("nan")
    return f"{m:6.2f} ± {h:4.2f}"


def run(variant: str, deals: int) -> None:
    hero: list[float] = []
    seat_rand: list[float] = []
    opponents: list[float] = []
    diffs: list[float] = []
    think: list[float] = []
    seed = 0
    t0 = time.perf_counter()
    while len(hero) < deals:
        for seat in range(4):
            h, o, t = play(variant, seed, seat, HeuristicBot())
            r, _, _ = play(variant, seed, seat, RandomBot())
            n = min(len(h), len(r))
            hero += h
            opponents += o
            seat_rand += r
            diffs += [h[i] - r[i] for i in range(n)]
            think += t
        seed += 1
    wall = time.perf_counter() - t0
    cols = [f"{variant:8}", f"{len(hero):5}", f"{ci(hero):13}", f"{ci(seat_rand):13}", f"{ci(opponents):13}"]
    cols += [f"{ci(diffs):13}", f"{1e6 * statistics.fmean(think):6.0f}", f"{1e6 * max(think):6.0f}", f"{wall:6.1f}"]
    print("| " + " | ".join(cols) + " |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description="heuristic bot vs random bots, duplicate over seats")
    ap.add_argument("--deals-standard", type=int, default=2000)
    ap.add_argument("--deals", type=int, default=400)
    ap.add_argument("--variants", default="standard,omnibus,trend,turbo,kierki")
    args = ap.parse_args()
    names = ["variant ", "deals", "heuristic    ", "random, seat ", "random opps  ", "heur - random"]
    names += ["us/act", "max us", "wall s"]
    print("| " + " | ".join(names) + " |")
    print("|" + "|".join("-" * (len(n) + 2) for n in names) + "|")
    for v in args.variants.split(","):
        run(v, args.deals_standard if v == "standard" else args.deals)


if __name__ == "__main__":
    main()
