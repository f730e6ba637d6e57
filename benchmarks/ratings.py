"""Do OpenSkill ratings order the bots? search > heuristic > random, with sigma shrinking.

Plays real games (``moonshot.play.sim.play_game``) among three rated bots, ``search --simulations S``,
``heuristic`` and ``random``: each game seats all three plus a fourth drawn from them, in a
shuffled order (seed-derived, so the run is reproducible), and rates it the way the server does
(``moonshot.play.ratings``). It prints the leaderboard at checkpoints, then stores every game in a
scratch SQLite store exactly as the server's writer does (one ``rate`` op per finished game) and
checks that ``moonshot ratings --rebuild``'s path gives the same ratings.

This measures strength, not speed: the anchor is the order the arena found (docs/search.md).

    python benchmarks/ratings.py [--games 300] [--simulations 100] [--max-score 50] [--workers 2]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from moonshot.bots.registry import make_bot
from moonshot.core.variants import find_variant
from moonshot.play.ratings import Ledger, PlayerId
from moonshot.play.sim import GameRecord, play_game

_STATE: dict[str, Any] = {}


def lineup(seed: int, players: list[PlayerId]) -> list[PlayerId]:
    pick = random.Random(f"ratings-lineup:{seed}")
    seats = [*players, pick.choice(players)]
    pick.shuffle(seats)
    return seats


def _init(max_score: int, simulations: int) -> None:
    _STATE["rules"] = find_variant("standard", max_score=max_score)
    _STATE["simulations"] = simulations


def _play(task: tuple[int, list[PlayerId]]) -> GameRecord:
    seed, seats = task
    sims = _STATE["simulations"]
    bots = [make_bot("search", simulations=sims) if p.name.startswith("search") else make_bot(p.name) for p in seats]
    return play_game(_STATE["rules"], seed, [p.name for p in seats], bots=bots)


async def _store_and_rebuild(games: list[tuple[list[PlayerId], GameRecord]]) -> tuple[dict[Any, Any], dict[Any, Any]]:
    from moonshot.store import Store, now

    with tempfile.TemporaryDirectory() as tmp:
        store = await Store.open(f"sqlite:///{Path(tmp) / 'ratings.db'}")
        try:
            for i, (seats, rec) in enumerate(games):
                gid = f"g{i:05d}"
                players = [{"name": p.name, "kind": "bot", "bot": p.name} for p in seats]
                at = now()
                row = {"id": gid, "variant": rec.variant, "seed": rec.seed, "protocol": "sim", "players": players}
                row |= {"status": "running", "created_at": at, "meta": {}}
                done = {"id": gid, "status": "finished", "finished_at": at, "totals": list(rec.scores)}
                done["winners"] = list(rec.winners)
                await store.write_batch([("game", row), ("status", done), ("rate", {"id": gid})])
            incremental = await store.leaderboard(None, 100)
            await store.rebuild_ratings()
            rebuilt = await store.leaderboard(None, 100)
        finally:
            await store.close()
    return incremental, rebuilt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=300)
    ap.add_argument("--simulations", type=int, default=100, help="search playouts per decision")
    ap.add_argument("--max-score", type=int, default=50, help="games end at this score (short games)")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--every", type=int, default=50, help="print the leaderboard every N games")
    args = ap.parse_args()
    search = PlayerId(f"search --simulations {args.simulations}", True)
    heuristic, rnd = PlayerId("heuristic", True), PlayerId("random", True)
    players = [search, heuristic, rnd]
    tasks = [(seed, lineup(seed, players)) for seed in range(args.games)]
    ledger = Ledger()
    played: list[tuple[list[PlayerId], GameRecord]] = []
    start = time.perf_counter()
    print(f"{args.games} games of standard to {args.max_score}, search at {args.simulations} playouts per decision")
    print(f"{'games':>6} {'seconds':>8}  " + "  ".join(f"{p!s:>34}" for p in players))
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(args.workers, initializer=_init, initargs=(args.max_score, args.simulations)) as pool:
        for (_, seats), rec in zip(tasks, pool.imap(_play, tasks)):
            ledger.apply(rec.variant, seats, rec.scores)
            played.append((seats, rec))
            n = len(played)
            if n % args.every == 0 or n == args.games:
                cells = []
                for p in players:
                    r = ledger.get("standard", p)
                    cells.append(f"{r.ordinal:7.2f} (mu {r.mu:5.2f}, sigma {r.sigma:4.2f})")
                row = "  ".join(f"{c:>34}" for c in cells)
                print(f"{n:>6} {time.perf_counter() - start:>8.0f}  {row}", flush=True)
    order = [p for p, _ in ledger.leaderboard("standard")]
    print("order by ordinal:", " > ".join(str(p) for p in order))
    print("search > heuristic > random:", order == [search, heuristic, rnd])
    incremental, rebuilt = asyncio.run(_store_and_rebuild(played))
    same = incremental == rebuilt
    ledger_rows = [(p.name, round(r.mu, 9), round(r.sigma, 9)) for p, r in ledger.leaderboard("standard")]
    store_rows = [(r["player"], round(r["mu"], 9), round(r["sigma"], 9)) for r in rebuilt.get("standard", [])]
    print("store: incremental == rebuilt:", same, "| store == in-memory ledger:", ledger_rows == store_rows)


if __name__ == "__main__":
    main()
