"""Where `search`'s thinking time goes, and whether more of it changes the card it plays.

    python benchmarks/search_scaling.py [--deals 12] [--seed 50000] [--budgets 1,3,10,30,100]
                                        [--reference 400] [--every 3] [--profile 10,100]

Positions: the card decisions with a choice (more than one card left to search after the
network's cut) of ``--deals`` standard deals, no passing, four ``search --simulations 100`` seats,
every ``--every``-th one. At each position ``search`` (its defaults, a CPU-time budget) decides
once at every budget of ``--budgets`` CPU ms and twice at ``--reference`` ms (two random streams:
the noise floor), and the oracle (:mod:`moonshot.bots.oracle`: the real hands as its one world)
decides at 10 ms. Printed per budget: the CPU a decision used, the worlds it dealt, and how often
its card is the reference's and the oracle's. A card that stops changing as the budget grows is
a search that has converged: more time can only confirm it.

``--search root=ismcts,puct=1`` plays the budget rows with those options (the reference and
``--profile`` stay the defaults); for ``root=ismcts`` the worlds a decision deals are its tree's
iterations (one world a walk); the column ``tree walks`` is the mean iterations of the decisions
that grew a shared tree (late in the deal the exact flat search decides instead), with their count.

``--option prior=13`` (repeatable) plays ``search`` with those options at the reference budget
(the reference's random streams) and prints how often its card is the reference's.

``--profile`` runs cProfile over every position's decision at those budgets and prints where the
time went, by the parts of a decision (dealing worlds, the playout to the trick's end, the value
network, the exact solver, the network's prior, the rest).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import moonshot

moonshot.one_blas_thread()  # as the moonshot command does, before NumPy loads (small matrices)

from moonshot import kernel
from moonshot.bots.ismcts import PuctNode, SharedNode
from moonshot.bots.oracle import OracleBot
from moonshot.bots.search import SearchBot
from moonshot.core.cards import CardSet
from moonshot.core.engine import Game, Phase
from moonshot.core.variants import find_variant
from moonshot.core.views import SeatView, seat_view
from moonshot.play.arena import deal_rules


class Counting(SearchBot):
    """``search`` that counts the worlds its card decisions deal."""

    worlds_dealt = 0

    def _card_sampler(self, view: SeatView) -> Callable[[random.Random], list[CardSet]]:
        base = super()._card_sampler(view)

        def deal(rng: random.Random) -> list[CardSet]:
            self.worlds_dealt += 1
            return base(rng)

        return deal


def positions(deals: int, seed: int, every: int) -> list[tuple[SeatView, Game]]:
    """Card decisions with a choice, each with a frozen copy of its game (for the oracle)."""
    import copy

    base = find_variant("standard")
    bot = SearchBot(simulations=100)
    out: list[tuple[SeatView, Game]] = []
    k = 0
    for i in range(deals):
        game = Game(deal_rules(base, i, passing=False), seed + i)
        rngs = [random.Random(f"scaling:{seed + i}:{s}") for s in range(4)]
        while not game.over:
            seat = game.to_act()[0]
            view = seat_view(game, seat)
            if view.phase is Phase.PLAY and view.legal_plays & (view.legal_plays - 1):
                k += 1
                if k % every == 0:
                    out.append((view, copy.deepcopy(game)))
            game.apply(bot.act(view, rngs[seat]))
    return out


def decide(bot: SearchBot, view: SeatView, seed: str) -> tuple[int, float]:
    """The card ``bot`` chooses at ``view`` and the CPU seconds it took."""
    t0 = time.process_time()
    card, _ = bot._choose_card(view, random.Random(seed))
    return card, time.process_time() - t0


PARTS = {
    "deal worlds (sampler)": ("quick_sample_view", "sample_view", "quick_hands", "quick_deal", "sample_hands"),
    "playout to the trick's end": ("_to_trick_end",),
    "value network (batched leaves)": ("leaf_costs",),
    "exact solver": ("exact_value",),
    "copies of the world, root cards played": ("copy", "play"),
}


def profile(views: list[tuple[SeatView, Game]], budget: int) -> None:
    bot = SearchBot(think_ms=budget, clock=time.process_time)
    prof = cProfile.Profile(time.process_time)  # (CPU time: on a loaded machine wall time lands on syscalls)
    prof.enable()
    for n, (view, _) in enumerate(views):
        bot._choose_card(view, random.Random(f"profile:{n}"))
    prof.disable()
    stats: Any = pstats.Stats(prof).stats  # (file, line, name) -> (cc, nc, tottime, cumtime, callers)
    total = sum(tt for (_, _, tt, _, _) in stats.values())
    print(f"\nprofile at {budget} ms of CPU, CPU seconds ({len(views)} decisions, {total:.2f} s profiled):")
    every = {name for names in PARTS.values() for name in names}
    parted = 0.0
    for part, names in PARTS.items():
        cum = 0.0
        for (path, _, name), (_, _, _, _, callers) in stats.items():
            if name in names and "moonshot" in path:
                # a function's time counts once: only its calls from outside every part
                cum += sum(callers[c][3] for c in callers if c[2] not in every)
        parted += cum
        print(f"  {part:<40} {cum:7.2f} s  {100 * cum / total:5.1f}%")
    rest = total - parted
    print(f"  {'the rest (the loop, budget, prior)':<40} {rest:7.2f} s  {100 * rest / total:5.1f}%")
    print("  the functions with the most time of their own:")
    top = sorted(stats.items(), key=lambda kv: -kv[1][2])[:12]
    for (path, line, name), (_, nc, tt, _, _) in top:
        where = path.rsplit("/", 2)[-1] if "/" in path else path
        print(f"    {tt:6.2f} s  {100 * tt / total:5.1f}%  {nc:>8} calls  {name} ({where}:{line})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=12)
    parser.add_argument("--seed", type=int, default=50000)
    parser.add_argument("--every", type=int, default=3, help="keep every n-th decision with a choice")
    parser.add_argument("--budgets", default="1,3,10,30,100", help="CPU ms a decision, comma-separated")
    parser.add_argument("--reference", type=int, default=400, help="the reference's CPU ms (run twice)")
    parser.add_argument("--profile", default="", help="budgets to profile, comma-separated (e.g. 10,100)")
    parser.add_argument("--search", default="", help="options of the budget rows' search (root=ismcts,puct=1)")
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        help="search options (prior=13) played at the reference budget against the reference (repeatable)",
    )
    args = parser.parse_args()
    kernel.warm_up()
    views = positions(args.deals, args.seed, args.every)
    budgets = [int(b) for b in args.budgets.split(",") if b]
    print(f"{len(views)} card decisions with a choice ({args.deals} deals from seed {args.seed}, every {args.every})")
    if budgets or args.option:  # (neither: the profile alone)
        table(views, budgets, args.reference, args.option, args.search)
    for b in [int(x) for x in args.profile.split(",") if x]:
        profile(views, b)


def table(
    views: list[tuple[SeatView, Game]], budgets: list[int], reference_ms: int, options: list[str], search: str = ""
) -> None:
    from moonshot.play.arena import bot_spec

    _, rows_given = bot_spec(f"search:{search}")
    reference = SearchBot(think_ms=reference_ms, clock=time.process_time)
    ref = [decide(reference, v, f"ref:{n}")[0] for n, (v, _) in enumerate(views)]
    ref2 = [decide(reference, v, f"ref2:{n}")[0] for n, (v, _) in enumerate(views)]
    oracle_cards = []
    for n, (v, g) in enumerate(views):
        o = OracleBot(think_ms=10, clock=time.process_time)
        o.watch(g)
        oracle_cards.append(decide(o, v, f"oracle:{n}")[0])
    same = sum(a == b for a, b in zip(ref, ref2)) / len(views)
    print(f"reference {reference_ms} ms against itself (another random stream): {100 * same:.1f}% the same card")
    head = f"{'CPU ms budget':>13} {'CPU ms used':>11} {'worlds':>8} {'= reference':>12} {'= oracle':>9}"
    print(f"{head} {'tree walks':>14}")
    for b in [*budgets, reference_ms]:
        used, worlds, agree, orc = [], [], 0, 0
        walks: list[int] = []
        for n, (v, _) in enumerate(views):
            bot = Counting(**{"think_ms": b, "clock": time.process_time, **rows_given})
            card, t = decide(bot, v, f"b{b}:{n}")
            used.append(1000 * t)
            roots = [r for r in bot._spent_trees if isinstance(r, (SharedNode, PuctNode))]
            walks += [r.n for r in roots]
            worlds.append(bot.worlds_dealt)
            agree += card == ref[n]
            orc += card == oracle_cards[n]
        print(
            f"{b:>13} {statistics.mean(used):>11.1f} {statistics.mean(worlds):>8.0f} "
            f"{100 * agree / len(views):>11.1f}% {100 * orc / len(views):>8.1f}% "
            + (f"{statistics.mean(walks):>8.0f} ({len(walks)})" if walks else f"{'-':>14}"),
            flush=True,
        )
    for text in options:
        _, given = bot_spec(f"search:{text}")
        bot = SearchBot(**{"think_ms": reference_ms, "clock": time.process_time, **given})
        same = sum(decide(bot, v, f"ref:{n}")[0] == ref[n] for n, (v, _) in enumerate(views))
        print(f"search:{text} at {reference_ms} ms: the reference's card in {100 * same / len(views):.1f}%", flush=True)


if __name__ == "__main__":
    main()
