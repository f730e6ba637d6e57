"""How the Kierki automatic client's policy scores against random players (engine-level, no sockets).

The automatic client (``kierki-client -a``) plays with :class:`moonshot.bots.heuristic.HeuristicBot`
on the view it rebuilds from the wire, which is the engine's view exactly (tests/protocols/kierki/
test_auto.py checks it turn by turn), so engine-level play measures the real client.

For each of N random game files (seven deals, one per contract, random leaders) the heuristic
plays at one seat against three random bots, once from each seat (rotation), so every game file
is played four times and seat luck cancels out. Prints the mean points per game of the heuristic
and of a random player in the same games, per contract and in all.

    nice python benchmarks/kierki_auto.py --games 100
"""

from __future__ import annotations

import argparse
import random
import statistics

from moonshot.bots.heuristic import HeuristicBot
from moonshot.bots.random import RandomBot
from moonshot.core.engine import Game
from moonshot.core.events import DealEnded
from moonshot.core.variants import KIERKI
from moonshot.core.views import seat_view
from moonshot.protocols.kierki.gamefile import random_deals

NAMES = {1: "no tricks", 2: "no hearts", 3: "no queens", 4: "no K/J", 5: "no KH", 6: "7th+last", 7: "robber"}


def play(deals: list, hero_seat: int, rng: random.Random, hero: object, others: object) -> list[tuple[int, ...]]:
    game = Game(KIERKI, 0, deals)
    per_deal: list[tuple[int, ...]] = []
    while not game.over:
        seat = game.to_act()[0]
        bot = hero if seat == hero_seat else others
        for e in game.apply(bot.act(seat_view(game, seat), rng)):  # type: ignore[attr-defined]
            if isinstance(e, DealEnded):
                per_deal.append(e.points)
    return per_deal


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    hero, rnd = HeuristicBot(), RandomBot()
    hero_pts: dict[int, list[int]] = {k: [] for k in NAMES}
    rand_pts: dict[int, list[float]] = {k: [] for k in NAMES}
    hero_games: list[int] = []
    rand_games: list[float] = []
    wins = 0
    for g in range(args.games):
        deals = random_deals(random.Random(f"kierki-bench:{args.seed}:{g}"))
        for seat in range(4):
            per_deal = play(deals, seat, random.Random(f"{args.seed}:{g}:{seat}"), hero, rnd)
            totals = [sum(p[s] for p in per_deal) for s in range(4)]
            hero_games.append(totals[seat])
            rand_games.append(sum(totals[s] for s in range(4) if s != seat) / 3)
            wins += totals[seat] == min(totals)
            for d, p in zip(deals, per_deal):
                hero_pts[d.kind].append(p[seat])
                rand_pts[d.kind].append(sum(p[s] for s in range(4) if s != seat) / 3)
    n = len(hero_games)
    print(f"{args.games} game files x 4 seats = {n} games; heuristic at one seat vs 3 random (lower is better)")
    print(f"{'contract':<12} {'heuristic':>10} {'random':>10} {'total':>7}")
    for k, name in NAMES.items():
        h, r = statistics.mean(hero_pts[k]), statistics.mean(rand_pts[k])
        print(f"{k} {name:<10} {h:>10.2f} {r:>10.2f} {KIERKI.scoring[k].total:>7}")
    h, r = statistics.mean(hero_games), statistics.mean(rand_games)
    se = statistics.stdev(hero_games) / n**0.5
    print(f"{'game':<12} {h:>10.2f} {r:>10.2f} {'':>7}  (heuristic ±{se:.2f} s.e.)")
    print(f"heuristic has the lowest total (ties count) in {wins}/{n} games ({100 * wins / n:.1f}%; 25% = no skill)")


if __name__ == "__main__":
    main()
