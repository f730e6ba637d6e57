"""How fast search's pieces are, next to the engine: full deals per second, solver and move times.

    python benchmarks/search_speed.py [--seconds 2] [--kernel-only]

The anchor is the engine playing uniformly random full deals (``Game`` + ``legal_play_mask``);
the lean playout simulator must be several times faster for search to see enough worlds.

The rollout rows are per CPU second of this process (``time.process_time``): the Python playout
(``bots/playout.py``) and the rules kernel (:mod:`moonshot.kernel`, compiled by numba) each play
random deals from the first lead to the end, next to OpenSpiel's C++ loop (``pyspiel.evaluate_bots``
with four uniform random bots, dealing and passing included) in the same run, each the best of
``--rounds`` interleaved rounds; then the ratio of the kernel's greedy rollouts to OpenSpiel's
deals (target: 10x). ``pimc:classic``'s CPU a card decision closes the table.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import Any

import moonshot

moonshot.one_blas_thread()  # as the moonshot command does, before NumPy loads (small matrices)

from moonshot import kernel
from moonshot.bots.pimc import PimcBot
from moonshot.bots.playout import ROLLOUT_POLICIES, greedy_policy, kernel_state, start_of_play
from moonshot.bots.search import SearchBot, solve
from moonshot.core.actions import Play
from moonshot.core.engine import Game, Phase
from moonshot.core.rules import PassDirection
from moonshot.core.variants import find_variant
from moonshot.core.views import seat_view


def _deal(rng: random.Random) -> list[int]:
    deck = list(range(52))
    rng.shuffle(deck)
    return [sum(1 << c for c in deck[13 * s : 13 * s + 13]) for s in range(4)]


def engine_deals(seconds: float) -> float:
    rules = find_variant("standard").replace(pass_cycle=(PassDirection.HOLD,))
    rng = random.Random(0)
    n, start, seed = 0, time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        game = Game(rules, seed)
        seed += 1
        while game.phase is Phase.PLAY and game.deal_index == 0:
            legal = game.legal_play_mask(game.turn)
            cards = [c for c in range(52) if legal >> c & 1]
            game.apply(Play.of(game.turn, rng.choice(cards)))
        n += 1
    return n / (time.perf_counter() - start)


def playout_deals(policy: str, seconds: float) -> float:
    rules = find_variant("standard")
    rng = random.Random(0)
    pol = ROLLOUT_POLICIES[policy]
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        start_of_play(rules, 0, _deal(rng), 0).finish(pol, rng)
        n += 1
    return n / (time.perf_counter() - start)


def _cpu_rate(work: Callable[[], int], seconds: float) -> float:
    """Units of ``work()`` per CPU second over about ``seconds``."""
    n, start = 0, time.process_time()
    while time.process_time() - start < seconds:
        n += work()
    return n / (time.process_time() - start)


def playout_rollouts(policy: str) -> Callable[[], int]:
    rules = find_variant("standard")
    rng = random.Random(0)
    pol = ROLLOUT_POLICIES[policy]

    def work() -> int:
        for _ in range(20):
            start_of_play(rules, 0, _deal(rng), 0).finish(pol, rng)
        return 20

    return work


def kernel_rollouts(policy: str) -> Callable[[], int]:
    import numpy as np

    from moonshot.kernel import _core

    rt = kernel.rules_table(find_variant("standard"), 0)
    gen = kernel.seed_rng(random.Random(0))
    out = np.zeros((2000, 4), dtype=np.int64)
    code, eps32 = kernel.POLICIES[policy], kernel.epsilon32(0.1)
    kernel.warm_up()

    def work() -> int:
        _core.random_deals(rt, 2000, code, eps32, gen, out)
        return 2000

    return work


def openspiel_deals() -> Callable[[], int] | None:
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("hearts")
    bots = [pyspiel.make_uniform_random_bot(p, 1000 + p) for p in range(4)]
    seed = [0]

    def work() -> int:
        for _ in range(50):
            seed[0] += 1
            pyspiel.evaluate_bots(game.new_initial_state(), bots, seed[0])
        return 50

    return work


def rollout_rows(seconds: float, rounds: int) -> list[tuple[str, str]]:
    """Rollouts per CPU second, Python playout and kernel, beside OpenSpiel's C++ loop (best of
    ``rounds`` interleaved rounds of ``seconds`` each)."""
    works: dict[str, Callable[[], int] | None] = {
        "playout (Python): greedy rollouts/CPU s": playout_rollouts("greedy"),
        "playout (Python): random rollouts/CPU s": playout_rollouts("random"),
        "kernel: greedy rollouts/CPU s": kernel_rollouts("greedy"),
        "kernel: epsilon-greedy (0.1) rollouts/CPU s": kernel_rollouts("noisy"),
        "kernel: random rollouts/CPU s": kernel_rollouts("random"),
        "OpenSpiel evaluate_bots (C++), random bots: deals/CPU s": openspiel_deals(),
    }
    best = dict.fromkeys(works, 0.0)
    for _ in range(rounds):
        for name, work in works.items():
            if work is not None:
                best[name] = max(best[name], _cpu_rate(work, seconds))
    rows = [
        (name, f"{rate:,.0f}" if works[name] is not None else "(pyspiel not installed)") for name, rate in best.items()
    ]
    spiel = best["OpenSpiel evaluate_bots (C++), random bots: deals/CPU s"]
    if spiel:
        for name in ("kernel: greedy rollouts/CPU s", "kernel: random rollouts/CPU s"):
            rows.append((f"ratio: {name.split(' rollouts')[0]} / OpenSpiel", f"{best[name] / spiel:.1f}x"))
    rows.append(
        (
            "ratio: kernel greedy / playout greedy",
            f"{best['kernel: greedy rollouts/CPU s'] / best['playout (Python): greedy rollouts/CPU s']:.1f}x",
        )
    )
    return rows


def card_decisions(bot: Any, deals: int, count: Callable[[], int] = lambda: 0) -> tuple[float, int, int]:
    """``bot`` in seat 0 of ``deals`` standard deals, heuristic bots in the others: the CPU seconds
    of its card decisions with a choice, their number, and how much ``count`` grew over them."""
    from moonshot.bots.heuristic import HeuristicBot

    rules = find_variant("standard").replace(deals=1)
    other = HeuristicBot()
    total, moves, counted = 0.0, 0, 0
    for seed in range(deals):
        game = Game(rules, seed)
        rng = random.Random(seed)
        while game.deal_index == 0 and not game.over:
            seat = game.to_act()[0]
            view = seat_view(game, seat)
            if seat != 0:
                game.apply(other.act(view, rng))
                continue
            before = count()
            t = time.process_time()
            action = bot.act(view, rng)
            if view.phase is Phase.PLAY and view.legal_plays & (view.legal_plays - 1):
                total += time.process_time() - t
                moves += 1
                counted += count() - before
            game.apply(action)
    return total, moves, counted


def endgame_decision_ms(deals: int = 40, think_ms: int = 30) -> str:
    """The CPU milliseconds of ``search``'s card decisions with a choice once every hand has four
    cards or fewer, at ``think_ms`` of CPU (all four seats ``search``), p99 / max: how far a small
    budget runs over where the exact endgame starts. With the kernel loaded the solve runs there,
    else in Python; run it before anything loads the kernel to see the Python solver's."""
    bot = SearchBot(think_ms=think_ms, clock=time.process_time)
    rules = find_variant("standard").replace(deals=1)
    times = []
    for seed in range(deals):
        game = Game(rules, seed)
        rng = random.Random(seed)
        while game.deal_index == 0 and not game.over:
            view = seat_view(game, game.to_act()[0])
            t = time.process_time()
            action = bot.act(view, rng)
            spent = 1000 * (time.process_time() - t)
            if view.phase is Phase.PLAY and view.legal_plays & (view.legal_plays - 1) and max(view.cards_left) <= 4:
                times.append(spent)
            game.apply(action)
    times.sort()
    return f"{times[min(len(times) - 1, len(times) * 99 // 100)]:.1f} / {times[-1]:.1f} ({len(times)} decisions)"


def classic_cpu_ms(deals: int = 2) -> float:
    """``pimc:classic``'s CPU milliseconds a card decision with a choice (standard, the other seats heuristic)."""
    total, moves, _ = card_decisions(PimcBot(preset="classic"), deals)
    return 1000 * total / moves


def solver_ms(cards_each: int, positions: int = 20, compiled: bool = False) -> str:
    """CPU milliseconds an exact endgame from ``cards_each`` cards a hand takes (at a trick's start,
    the seat to lead solving), median and p99 over ``positions`` deals: :func:`moonshot.bots.search.solve`
    on the search deal, or with ``compiled`` the rules kernel's :func:`moonshot.kernel.solve` (the
    same search and value)."""
    rules = find_variant("standard")
    rng = random.Random(cards_each)
    times = []
    for _ in range(positions):
        deal = start_of_play(rules, 0, _deal(rng), 0)
        while max(h.bit_count() for h in deal.hands) > cards_each or deal.trick:
            deal.play(greedy_policy(deal, deal.turn, deal.legal(), rng))
        if compiled:
            rt, st = kernel_state(deal)
            t = time.process_time()
            kernel.solve(rt, st, deal.turn)
        else:
            t = time.process_time()
            solve(deal, deal.turn)
        times.append(1000 * (time.process_time() - t))
    times.sort()
    return f"{times[len(times) // 2]:.3f} / {times[min(len(times) - 1, len(times) * 99 // 100)]:.2f}"


def search_ms(simulations: int | None, think_ms: int | None, deals: int = 2) -> float:
    rules = find_variant("standard").replace(deals=1)
    bot = SearchBot(think_ms=think_ms, simulations=simulations)
    total, moves = 0.0, 0
    for seed in range(deals):
        game = Game(rules, seed)
        rng = random.Random(seed)
        while game.deal_index == 0 and not game.over:
            seat = game.to_act()[0]
            view = seat_view(game, seat)
            t = time.perf_counter()
            action = bot.act(view, rng)
            total += time.perf_counter() - t
            moves += 1
            game.apply(action)
    return 1000 * total / moves


def search_playouts(simulations: int, deals: int = 2, bot: SearchBot | None = None) -> float:
    """Playouts (tree iterations for ``pimc`` and ``root=tree``) per second of CPU of the search
    bot's card decisions (those with a choice to make)."""
    rules = find_variant("standard").replace(deals=1)
    if bot is None:
        bot = SearchBot(think_ms=None, simulations=simulations)
    total, searched = 0.0, 0
    for seed in range(deals):
        game = Game(rules, seed)
        rng = random.Random(seed)
        while game.deal_index == 0 and not game.over:
            seat = game.to_act()[0]
            view = seat_view(game, seat)
            t = time.process_time()
            action = bot.act(view, rng)
            if view.phase is Phase.PLAY and view.legal_plays & (view.legal_plays - 1):
                total += time.process_time() - t
                searched += 1
            game.apply(action)
    return simulations * searched / total


def search_worlds(think_ms: int, deals: int = 3) -> tuple[float, float]:
    """Worlds a card decision with a choice samples, and its CPU milliseconds, at ``think_ms`` of
    CPU time (``--cpu-time`` in the arena: what the budget buys, whatever the machine's load)."""
    worlds = [0]

    class Counted(SearchBot):
        def _card_sampler(self, view: Any) -> Any:
            sample = super()._card_sampler(view)

            def counted(rng: random.Random) -> Any:
                worlds[0] += 1
                return sample(rng)

            return counted

    bot = Counted(think_ms=think_ms, clock=time.process_time)
    total, moves, counted = card_decisions(bot, deals, lambda: worlds[0])
    return counted / moves, 1000 * total / moves


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the rollout rows (best of)")
    ap.add_argument("--kernel-only", action="store_true", help="only the rollout rows and pimc:classic")
    args = ap.parse_args()
    rows = rollout_rows(args.seconds / 2, args.rounds)
    if not args.kernel_only:  # (before pimc:classic loads the kernel: the Python solver)
        rows.append(("search: CPU ms p99 / max at <= 4 cards each, 30 ms (Python solver)", endgame_decision_ms()))
    rows.append(("pimc:classic: CPU ms per card decision (9,990 playouts)", f"{classic_cpu_ms():.1f}"))
    if args.kernel_only:
        _print(rows)
        return
    rows += [
        ("engine: random full deals/s (anchor)", f"{engine_deals(args.seconds):.0f}"),
        ("playout: random full deals/s", f"{playout_deals('random', args.seconds):.0f}"),
        ("playout: greedy (rollout) full deals/s", f"{playout_deals('greedy', args.seconds):.0f}"),
        ("solver: CPU ms per 3-card endgame, median / p99 (search deal)", solver_ms(3, 100)),
        ("solver: CPU ms per 4-card endgame, median / p99 (search deal)", solver_ms(4, 100)),
        ("search: CPU ms p99 / max at <= 4 cards each, 30 ms (kernel)", endgame_decision_ms()),
        ("solver: CPU ms per 4-card endgame, median / p99 (kernel)", solver_ms(4, 400, compiled=True)),
        ("solver: CPU ms per 5-card endgame, median / p99 (kernel)", solver_ms(5, 400, compiled=True)),
        ("solver: CPU ms per 6-card endgame, median / p99 (kernel)", solver_ms(6, 100, compiled=True)),
        ("search: ms/move, 100 playouts", f"{search_ms(100, None):.1f}"),
        ("search: ms/move, 300 playouts", f"{search_ms(300, None):.1f}"),
        ("search: ms/move, think_ms=200", f"{search_ms(None, 200):.1f}"),
        ("search: worlds a card decision (CPU ms), think_ms=30 of CPU", "{:.0f} ({:.1f})".format(*search_worlds(30))),
        ("search: playouts/s per core, 100 per move (to the trick's end + network)", f"{search_playouts(100):.0f}"),
        (
            "search:value=off: playouts/s per core, 100 per move (to the deal's end)",
            f"{search_playouts(100, bot=SearchBot(think_ms=None, simulations=100, value='off')):.0f}",
        ),
        (
            "search:root=tree: iterations/s per core, 300 per move",
            f"{search_playouts(300, bot=SearchBot(think_ms=None, simulations=300, root='tree')):.0f}",
        ),
        ("pimc: iterations/s per core, 300 per move", f"{search_playouts(300, bot=PimcBot(None, 300)):.0f}"),
    ]
    _print(rows)


def _print(rows: list[tuple[str, str]]) -> None:
    width = max(len(r[0]) for r in rows)
    print(f"{'measure'.ljust(width)}  value")
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")


if __name__ == "__main__":
    main()
