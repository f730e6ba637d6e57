"""How well ``search``'s root decision rule spends a small budget: regret against a big-budget reference.

    python benchmarks/search_root.py [--positions 150] [--reference 300] [--budget 50] [--repeats 4]

Positions are the card decisions (two or more legal cards) of heuristic games, standard rules, no
passing. The reference values every legal card of a position with ``--reference`` common worlds
(the same evaluator as ``search``: greedy playouts, the exact solver at three cards each). Each
root rule then decides every position ``--repeats`` times with ``--budget`` playouts, and its
*regret* is the reference value of its card minus the best card's (points per deal, lower is
better); the anchor is ``flat`` (every card on every world, the rule before `distinct`). The root
rules run with no prior and the solver from three cards each (as the reference); ``--rules`` also
takes bot specs (``search``, ``search:prior=2``), which run with their own options.
Deterministic: no clock is read. It measures only how the budget is spent, not the evaluator.
"""

from __future__ import annotations

import argparse
import random
import statistics

import moonshot

moonshot.one_blas_thread()  # as the moonshot command does, before NumPy loads (small matrices)

from moonshot.bots.heuristic import HeuristicBot
from moonshot.bots.playout import greedy_policy
from moonshot.bots.registry import make_bot
from moonshot.bots.search import ROOT_RULES, SearchBot, deal_from_view, relative, sample_view, solve
from moonshot.core.cards import card_list
from moonshot.core.engine import Game
from moonshot.core.rules import EndRule, PassDirection
from moonshot.core.variants import find_variant
from moonshot.core.views import SeatView, seat_view
from moonshot.play.arena import bot_spec


def positions(count: int, variant: str) -> list[SeatView]:
    rules = find_variant(variant).replace(end=EndRule.DEALS, deals=1, pass_cycle=(PassDirection.HOLD,))
    bot = HeuristicBot()
    out: list[SeatView] = []
    seed = 0
    while len(out) < count:
        game = Game(rules, 10_000 + seed)
        seed += 1
        rng = random.Random(seed)
        n = 0
        while not game.over:
            seat = game.to_act()[0]
            view = seat_view(game, seat)
            plays = view.legal_plays
            if plays & (plays - 1) and n % 3 == seed % 3:
                out.append(view)
            n += 1
            game.apply(bot.act(view, rng))
    return out[:count]


def reference(view: SeatView, worlds: int, rng: random.Random) -> dict[int, float]:
    cards = card_list(view.legal_plays)
    totals = dict.fromkeys(cards, 0.0)
    exact = max(view.cards_left) <= 3
    for _ in range(worlds):
        deal = deal_from_view(view, sample_view(view, rng))
        for c in cards:
            child = deal.copy()
            child.play(c)
            totals[c] += solve(child, view.seat) if exact else relative(child.finish(greedy_policy, rng), view.seat)
    return {c: t / worlds for c, t in totals.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--positions", type=int, default=150)
    ap.add_argument("--reference", type=int, default=300)
    ap.add_argument("--budget", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=4)
    ap.add_argument("--variant", default="standard")
    ap.add_argument("--rules", default=",".join(ROOT_RULES), help="root rules, or bot specs (search-learned:top=3)")
    args = ap.parse_args()
    views = positions(args.positions, args.variant)
    refs = [reference(v, args.reference, random.Random(i)) for i, v in enumerate(views)]
    print(f"{len(views)} positions, reference {args.reference} worlds, budget {args.budget} playouts")
    print("| root rule | mean regret (pts/decision) | best card found | positions with regret > 1 |")
    print("|---|---:|---:|---:|")
    rows: dict[str, list[float]] = {}
    for rule in args.rules.split(","):
        if rule in ROOT_RULES:
            bot = SearchBot(simulations=args.budget, root=rule, prior=0, endgame=3)
        else:
            name, options = bot_spec(rule)
            bot = make_bot(name, simulations=args.budget, **options)
        regrets: list[float] = []
        for i, (v, ref) in enumerate(zip(views, refs)):
            best = min(ref.values())
            for r in range(args.repeats):
                card, _ = bot._choose_card(v, random.Random(1000 * i + r))
                regrets.append(ref[card] - best)
        rows[rule] = regrets
        found = sum(1 for x in regrets if x < 1e-9) / len(regrets)
        big = sum(1 for x in regrets if x > 1.0) / len(regrets)
        print(f"| {rule} | {statistics.fmean(regrets):.3f} | {found:.1%} | {big:.1%} |")
    print("(a bot spec's name stands for itself)")
    if "flat" in rows:
        for rule, regrets in rows.items():
            if rule == "flat":
                continue
            d = [a - b for a, b in zip(regrets, rows["flat"])]
            se = statistics.stdev(d) / len(d) ** 0.5
            print(f"{rule} minus flat: {statistics.fmean(d):+.3f} ± {1.96 * se:.3f}")


if __name__ == "__main__":
    main()
