"""Benchmark: what the operator's metrics cost a table's hot path, against the anchor, the table
as it was before the hooks (bots' decisions not timed, the no-op meter of ``runtime/meter.py``).

Two measurements, interleaved rounds, best of the rounds (CPU time, ``process_time``):

* each hook alone, ns per call, with the Prometheus meter and the no-op one: an action applied
  (``decided``), an answer's round trip (``answered``: one histogram observation), a bot's CPU
  (``bot_thought``), and the two clock reads around a server bot's decision (``thread_time`` in a
  worker thread, ``perf_counter`` on the event loop);
* whole games: tables of four in-process bots (``random``, the cheapest, so the hooks weigh the
  most; ``--bot heuristic`` is the server's default filler), one at a time on one event loop, µs
  of CPU per decision: with a protocol's Prometheus meter, with the no-op meter (the bots still
  timed), and the anchor.

    python benchmarks/operator_hooks.py [--games 40] [--rounds 5] [--bot random]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
import timeit
from pathlib import Path
from types import SimpleNamespace

# benchmarks/http.py would shadow the standard library's http (prometheus_client needs it)
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from moonshot.bots.registry import make_bot
from moonshot.core.actions import Action
from moonshot.core.variants import find_variant
from moonshot.runtime.limits import ClientGuard
from moonshot.runtime.meter import NO_METER, TableMeter
from moonshot.runtime.table import BotSeat, DecisionRequest, Table
from moonshot.server.metrics import ServerMetrics


def _metrics() -> ServerMetrics:
    server = SimpleNamespace(tables={}, finished=0, recorder=None, guard=ClientGuard(), cluster=None, draining=False)
    return ServerMetrics(server)


def _per_call(stmt: str, names: dict[str, object], number: int = 200_000) -> float:
    timer = timeit.Timer(stmt, globals=names, timer=time.process_time)
    return timer.timeit(number) / number * 1e9


class _Untimed(BotSeat):
    """A bot seat as it was before its decisions were timed."""

    def act_now(self, table: Table, request: DecisionRequest) -> Action | None:
        return None if self.in_executor else self.bot.act(request.view, self.rng)


async def _games(meter: TableMeter, games: int, seed: int, bot: str, seat: type[BotSeat]) -> tuple[float, int]:
    rules = find_variant("standard")
    spent, decisions = 0.0, 0
    for g in range(games):
        seats = [seat(make_bot(bot), random.Random(seed + 4 * g + i)) for i in range(4)]
        table = Table(rules, seats, seed=seed + g)
        table.meter = meter
        start = time.process_time()
        table.start()
        await table.done
        spent += time.process_time() - start
        decisions += len(table.game.actions)
    return spent, decisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=40, help="games per meter per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--bot", default="random", help="the bot in every seat (random, heuristic, ...)")
    args = parser.parse_args()

    meter = _metrics().table_meter("sessions")
    names: dict[str, object] = {"m": meter, "no": NO_METER, "tt": time.thread_time, "pc": time.perf_counter}
    hooks = [
        ("decided()", "m.decided()", "no.decided()"),
        ("answered(s)", "m.answered(0.01)", "no.answered(0.01)"),
        ("bot_thought(s)", "m.bot_thought(0.0001)", "no.bot_thought(0.0001)"),
        ("2x thread_time()", "tt(); tt()", "pass"),  # (a bot in a worker thread)
        ("2x perf_counter()", "pc(); pc()", "pass"),  # (a bot on the event loop)
    ]
    best: dict[str, list[float]] = {name: [float("inf"), float("inf")] for name, _, _ in hooks}
    variants = [
        ("with metrics", lambda: _metrics().table_meter("sessions"), BotSeat),
        ("no-op meter", lambda: NO_METER, BotSeat),
        ("before (anchor)", lambda: NO_METER, _Untimed),
    ]
    per_decision = [float("inf")] * len(variants)
    for r in range(args.rounds):
        for name, measured, anchor in hooks:
            best[name][0] = min(best[name][0], _per_call(measured, names))
            best[name][1] = min(best[name][1], _per_call(anchor, names))
        for i, (_, make_meter, seat) in enumerate(variants):
            spent, decisions = asyncio.run(_games(make_meter(), args.games, 1000 * r, args.bot, seat))
            per_decision[i] = min(per_decision[i], spent / decisions * 1e6)
    print(f"{'hook':<18} {'metrics ns':>11} {'no-op ns':>9}")
    for name, (measured, anchor) in best.items():
        print(f"{name:<18} {measured:>11.0f} {anchor:>9.0f}")
    print(f"\n{args.bot} games, CPU µs per decision (best of {args.rounds} rounds of {args.games} games)")
    anchor = per_decision[-1]
    for (name, _, _), cost in zip(variants, per_decision, strict=True):
        print(f"{name:<18} {cost:>11.2f} {(cost / anchor - 1) * 100:>+8.1f}%")


if __name__ == "__main__":
    main()
