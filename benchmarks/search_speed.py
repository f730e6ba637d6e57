"""How fast search's pieces are, next to the engine: full deals per second, solver and move times.

    python benchmarks/search_speed.py [--seconds 2]

The anchor is the engine playing uniformly random full deals (``Game`` + ``legal_play_mask``);
the lean playout simulator must be several times faster for search to see enough worlds.
"""

from __future__ import annotations

import argparse
import random
import time

from moonshot.bots.pimc import PimcBot
from moonshot.bots.playout import ROLLOUT_POLICIES, greedy_policy, start_of_play
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


def solver_ms(cards_each: int, positions: int = 20) -> float:
    rules = find_variant("standard")
    rng = random.Random(cards_each)
    total = 0.0
    for _ in range(positions):
        deal = start_of_play(rules, 0, _deal(rng), 0)
        while max(h.bit_count() for h in deal.hands) > cards_each or deal.trick:
            deal.play(greedy_policy(deal, deal.turn, deal.legal(), rng))
        t = time.perf_counter()
        solve(deal, deal.turn)
        total += time.perf_counter() - t
    return 1000 * total / positions


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seconds", type=float, default=2.0)
    args = ap.parse_args()
    rows = [
        ("engine: random full deals/s (anchor)", f"{engine_deals(args.seconds):.0f}"),
        ("playout: random full deals/s", f"{playout_deals('random', args.seconds):.0f}"),
        ("playout: greedy (rollout) full deals/s", f"{playout_deals('greedy', args.seconds):.0f}"),
        ("solver: ms per 3-card endgame", f"{solver_ms(3):.1f}"),
        ("solver: ms per 4-card endgame", f"{solver_ms(4):.1f}"),
        ("search: ms/move, 100 playouts", f"{search_ms(100, None):.1f}"),
        ("search: ms/move, 300 playouts", f"{search_ms(300, None):.1f}"),
        ("search: ms/move, think_ms=200", f"{search_ms(None, 200):.1f}"),
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
    width = max(len(r[0]) for r in rows)
    print(f"{'measure'.ljust(width)}  value")
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")


if __name__ == "__main__":
    main()
