"""The Trend node's Human seat under a clock (``--human-clock``): the person is timed by the table's
one deadline mechanism; when the clock runs out the node's substitute plays for them, and two
timeouts in a row hand the seat to it until the person acts again. The Dummy seats and the
seed's own rules (its per-phase timeouts and server-random card for an AI) are untouched."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence

import pytest

from moonshot.core.engine import Phase
from moonshot.core.events import CardPlayed, PassSent
from moonshot.runtime.clock import Countdown
from moonshot.runtime.table import OnBadAnswer, Table, TableEvent
from moonshot.server.trend_node import HumanSeat, NodeConfig, TrendNode, parse_seats

pytestmark = pytest.mark.asyncio

CLOCK = 1.0
SLACK = 6.0


class Watcher:
    def __init__(self) -> None:
        self.events: list[tuple[float, TableEvent]] = []
        self.countdowns: list[Countdown] = []

    def on_events(self, table: Table, events: Sequence[TableEvent]) -> None:
        now = asyncio.get_running_loop().time()
        self.events.extend((now, te) for te in events)

    def on_clock(self, table: Table, countdown: Countdown) -> None:
        self.countdowns.append(countdown)


async def until(cond, what: str, timeout: float = 40.0) -> None:  # type: ignore[no-untyped-def]
    end = asyncio.get_running_loop().time() + timeout
    while not cond():
        assert asyncio.get_running_loop().time() < end, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


async def test_a_person_at_a_human_seat_is_played_for_after_the_clock() -> None:
    cfg = NodeConfig(
        port=0,
        seed=5,
        seats=parse_seats("human,dummy,dummy,dummy", "random"),
        substitute="random",
        round_interval=0,
        deal_interval=0,
        command_interval=0,
        human_clock=CLOCK,
    )
    node = TrendNode(cfg)
    policy = node.policy()
    # the seed's rules for the AIs are kept: per-phase deadlines, a server-random card
    assert policy.on_timeout is OnBadAnswer.RANDOM and policy.timeout_for(Phase.PLAY) == cfg.pick_timeout
    assert policy.clock == CLOCK
    person = HumanSeat("ann")
    assert node.attach_human(1, person) is None
    await until(lambda: node.table is not None, "the match to start")
    table = node.table
    assert table is not None
    watcher = Watcher()
    table.watch(watcher)  # type: ignore[arg-type]
    chair = next(i for i, c in enumerate(table.chairs) if c.occupant is person)
    try:
        # the person does nothing: the clock runs out, the substitute passes and plays for them
        await until(lambda: table.stats()[chair].timeouts >= 2, "two timeouts")
        await until(lambda: table.snapshot().chairs[chair].away, "the hand-over")
        forced = [
            (t, te)
            for t, te in watcher.events
            if te.forced and isinstance(te.event, CardPlayed | PassSent) and te.event.seat == chair
        ]
        assert forced, "nothing was played for the person"
        # the others never waited much longer than the clock for the person's decisions
        times = [t for t, _ in watcher.events]
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert max(gaps) <= CLOCK + SLACK, max(gaps)
        assert any(c.running and c.running[0][0] == chair for c in watcher.countdowns)
        # "I'm back": the seat is the person's again
        table.back(chair)
        await until(lambda: not table.snapshot().chairs[chair].away or table.game.over, "back")
    finally:
        table.stop()
        await table.done
