"""CPU time per card decision of the ``learned`` bot, against the ``heuristic`` anchor, interleaved.

    python benchmarks/learned_speed.py [--deals 200] [--rounds 3] [--network PATH]

Collects the views of every card decision with more than one legal card in ``--deals`` standard
deals (four heuristic seats), then times each bot deciding all of them (``time.process_time``:
CPU, not the wall clock, so a loaded machine changes it less), alternating the bots for
``--rounds`` rounds, best round reported. The learned bot's time splits into the features
(which include the heuristic's own estimates) and the network. ``--network PATH``: the network in
that weights file (``moonshot train-learned --out``) instead of the packaged one.
"""

from __future__ import annotations

import argparse
import os
import random
import time

import moonshot

moonshot.one_blas_thread()  # as the moonshot command does, before NumPy loads (small matrices)

from moonshot.bots.heuristic import HeuristicBot
from moonshot.bots.learned import LearnedBot, card_features
from moonshot.core.cards import card_list
from moonshot.core.engine import Game, Phase
from moonshot.core.variants import find_variant
from moonshot.core.views import SeatView, seat_view


def views(deals: int) -> list[SeatView]:
    out = []
    bot = HeuristicBot()
    rules = find_variant("standard").replace(score_limit=1)
    for seed in range(deals):
        game = Game(rules, seed)
        rng = random.Random(seed)
        while not game.over and game.deal_index == 0:
            seat = game.to_act()[0]
            view = seat_view(game, seat)
            if view.phase is Phase.PLAY and view.legal_plays & (view.legal_plays - 1):
                out.append(view)
            game.apply(bot.act(view, rng))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--deals", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--network", default=None, help="a weights file to time instead of the packaged network")
    args = ap.parse_args()
    vs = views(args.deals)
    learned, heuristic = LearnedBot(network=args.network), HeuristicBot()
    rng = random.Random(0)

    def heur() -> None:
        for v in vs:
            heuristic._play(v)

    def lrn() -> None:
        for v in vs:
            learned.act(v, rng)

    def feats() -> None:
        for v in vs:
            card_features(v, card_list(v.legal_plays))

    best: dict[str, float] = {}
    for _ in range(args.rounds):
        for name, fn in (("heuristic (anchor)", heur), ("learned", lrn), ("learned: features only", feats)):
            t0 = time.process_time()
            fn()
            ms = (time.process_time() - t0) * 1000 / len(vs)
            best[name] = min(best.get(name, ms), ms)
    load = os.getloadavg()
    print(f"{len(vs)} card decisions with a choice, {args.deals} standard deals; load average {load[0]:.1f}")
    print("| bot | CPU ms per decision (best of rounds) |")
    print("|---|---:|")
    for name, ms in best.items():
        print(f"| {name} | {ms:.3f} |")
    print(f"| learned: the network alone | {best['learned'] - best['learned: features only']:.3f} |")


if __name__ == "__main__":
    main()
