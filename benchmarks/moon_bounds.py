"""What seeing every hand would buy `search` against shooters: moons conceded, with and without sight.

    python benchmarks/moon_bounds.py [--deals 1000] [--seed 0] [--simulations 50] [--workers 2]
                                     [--sighted-from TRICK] [--candidate SPEC ...]

The target: `search` concedes half as many moons to a field of three `shooter` as it did without a defence.
This measures how far information alone can take each search: every candidate plays the arena's
duplicate deals (standard, no passing, the arena's seeds and random streams, so its rows are
`moonshot arena --candidate SPEC --field shooter --simulations S --no-passing` exactly) once as
itself and once *sighted*: its sampler deals every world as the cards really lie (the anchor: a
player that cannot be fooled about the hands; no honest player has it). Everything else (the
playouts, the networks, the budget) is the candidate's own.

A diagnostic, not a player: the sighted bot exists only inside this script.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import moonshot

moonshot.one_blas_thread()  # as the moonshot command does, before NumPy loads (small matrices)

from moonshot.bots.search import SearchBot
from moonshot.core.cards import CardSet
from moonshot.core.engine import Game
from moonshot.core.events import DealEnded
from moonshot.core.variants import find_variant
from moonshot.core.views import SeatView, seat_view
from moonshot.play.arena import ArenaConfig, DealResult, arena_bot, deal_rules, summarise


def sighted(bot: SearchBot, game: Game, from_trick: int = 1) -> SearchBot:
    """``bot``, its card decisions' worlds all the real deal of ``game`` (read at each decision)
    from trick ``from_trick`` on; before it, its own sampler's."""
    own = bot._sampler

    def sampler(view: SeatView) -> Callable[[random.Random], list[CardSet]]:
        if view.trick_no < from_trick:
            return own(view)
        hands = list(game.hands)
        return lambda rng: list(hands)

    bot._sampler = sampler  # type: ignore[method-assign]
    return bot


def play(args: tuple[ArenaConfig, int, int]) -> DealResult:
    """Arena deal ``index`` in every seating, as :func:`moonshot.play.arena.play_deal` plays it; the
    candidate sighted from trick ``see`` on (0: not at all)."""
    config, index, see = args
    rules = deal_rules(find_variant(config.variant), index, config.passing)
    seed = config.seed + index
    result = DealResult(index, seed, rules.pass_cycle[0].value, rules.deal_kinds[0], [], [], [])
    for k, seating in enumerate(config.seatings()):
        game = Game(rules, seed)
        bots = {name: arena_bot(name, config) for name in {config.candidate, config.field}}
        cand = bots[config.candidate]
        if see and isinstance(cand, SearchBot):
            sighted(cand, game, see)
        rngs = [random.Random(f"moonshot-arena:{seed}:{k}:{s}") for s in range(4)]
        while not game.over:
            seat = game.to_act()[0]
            game.apply(bots[seating[seat]].act(seat_view(game, seat), rngs[seat]))
        end = next(e for e in reversed(game.log) if isinstance(e, DealEnded))
        result.seatings.append(seating)
        result.points.append(tuple(end.points))
        result.moons.append(end.moon)
    return result


def run(config: ArenaConfig, see: int, workers: int) -> tuple[Any, float]:
    start = time.perf_counter()
    tasks = [(config, i, see) for i in range(config.deals)]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            results = list(pool.map(play, tasks, chunksize=8))
    else:
        results = [play(t) for t in tasks]
    return summarise(results, config), time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=1000, help="duplicate deals (each in four seatings)")
    parser.add_argument("--seed", type=int, default=0, help="deal i is dealt from seed + i, as in the arena")
    parser.add_argument("--simulations", type=int, default=50, help="the candidate's playouts a move")
    parser.add_argument("--workers", type=int, default=2, help="processes")
    parser.add_argument(
        "--sighted-from", type=int, default=1, metavar="TRICK", help="the sighted runs see the cards from this trick on"
    )
    parser.add_argument(
        "--candidate",
        action="append",
        help="a search spec (repeatable; default: search, search:value=off, search:prior=0)",
    )
    args = parser.parse_args()
    specs = args.candidate or ["search", "search:value=off", "search:prior=0"]
    print(
        f"standard, {args.deals} duplicate deals from seed {args.seed}, no passing, v three shooter, "
        f"--simulations {args.simulations}"
    )
    print(
        f"{'candidate':<22} {'sight':<8} {'pts/deal':>8} {'field':>7} {'paired [95% CI]':>26} "
        f"{'shot':>5} {'conceded':>8} {'s':>6}"
    )
    for spec in specs:
        for see in (0, args.sighted_from):
            config = ArenaConfig(
                deals=args.deals,
                seed=args.seed,
                candidate=spec,
                field="shooter",
                simulations=args.simulations,
                passing=False,
            )
            s, took = run(config, see, args.workers)
            sight = "as is" if not see else "sighted" if see == 1 else f"from {see}"
            ci = f"{s.difference:+.3f} [{s.ci_low:+.3f}, {s.ci_high:+.3f}]"
            print(
                f"{spec:<22} {sight:<8} {s.candidate_mean:>8.3f} {s.field_mean:>7.3f} "
                f"{ci:>26} {s.moons_shot:>5} {s.moons_conceded:>8} {took:>6.0f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
