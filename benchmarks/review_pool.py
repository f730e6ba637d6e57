"""Does the review pool slow the server's event loop? Its lag, quiet and with reviews running.

    python benchmarks/review_pool.py                 # 15 s quiet, 15 s with 20 reviews queued, 15 s after
    python benchmarks/review_pool.py --seconds 5     # a smoke run

Writes a few finished standard games of four random bots to a temporary SQLite store, then runs
an event loop whose only work is a probe: sleep 5 ms, record how late it woke (the lag every
coroutine of a server, a table's included, would see). Phases: quiet (the anchor), then 20 reviews
queued in a :class:`~moonshot.play.review_pool.ReviewPool` of one worker (the server's default) as
``GET /api/games/<id>/review`` queues them (``moonshot.http.review.review_stored``: the worker
reads the game from the store itself, 1,000 worlds a decision), then the same while the pool goes
on. It prints each phase's lag p50/p99/max and the p99 as a ratio of the quiet one. Target: the
ratio within 2 (the worker runs at nice 19: the loop's process must not notice it).

The server's main module is imported first, as in ``moonshot serve``: a review worker imports it
again when it starts.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

# this folder goes last on the path: its http.py (a benchmark) must not hide the standard library's
HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE] + [str(HERE)]

from abuse import stored_games

import moonshot.cli.main  # noqa: F401  (the server's main module: see the docstring)
from moonshot.http.review import review_stored
from moonshot.play.review_pool import ReviewPool


def pct(xs: list[float], q: int) -> float:
    return statistics.quantiles(xs, n=100)[q - 1] if len(xs) > 1 else float("nan")


async def probe(out: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        t = time.perf_counter()
        await asyncio.sleep(0.005)
        out.append(time.perf_counter() - t - 0.005)


async def run(url: str, games: list[str], seconds: float) -> list[tuple[str, list[float], int]]:
    pool = ReviewPool(1, max_jobs=100, per_name=100)
    rows = []
    try:
        for phase in ("quiet", "20 reviews queued", "after"):
            out: list[float] = []
            stop = asyncio.Event()
            task = asyncio.create_task(probe(out, stop))
            if phase != "quiet" and not pool.jobs and pool.started == 0:
                for i in range(20):
                    pool.submit(
                        (i,), "bench", review_stored, (url, games[i % len(games)], i % 4), {"simulations": 1000}
                    )
            await asyncio.sleep(seconds)
            stop.set()
            await task
            rows.append((phase, out, pool.started))
    finally:
        pool.close()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=15.0, help="each phase's length")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{tmp}/games.db"
        games = stored_games(url, 5)
        rows = asyncio.run(run(url, games, args.seconds))
    quiet = pct(rows[0][1], 99)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"\n{when}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; {args.seconds:.0f} s a phase")
    print("| phase | probes | lag p50 ms | lag p99 ms | p99 / quiet | max ms | reviews started |")
    print("|---|---|---|---|---|---|---|")
    for phase, out, started in rows:
        p99 = pct(out, 99)
        print(
            f"| {phase} | {len(out)} | {pct(out, 50) * 1e3:.2f} | {p99 * 1e3:.2f} | {p99 / quiet:.2f} "
            f"| {max(out) * 1e3:.1f} | {started} |"
        )


if __name__ == "__main__":
    main()
