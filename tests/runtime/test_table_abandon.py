"""No table runs for nobody: a table whose remote players have all left asks nobody anything, and
ends (``ABANDONED``, recorded as aborted, never finished) unless one comes back in time."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from moonshot.runtime.table import OnDisconnect, Table, TablePolicy, TableStatus
from runtime.test_table import RULES, Remote, bots

pytestmark = pytest.mark.asyncio


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def game_started(self, table: Table) -> None:
        self.calls.append(("started", table.id))

    def action_applied(self, table: Table, index: int, action: Any, forced: bool) -> None:
        pass

    def game_finished(self, table: Table) -> None:
        self.calls.append(("finished", table.id))

    def game_failed(self, table: Table, reason: str) -> None:
        self.calls.append(("failed", reason))

    def game_aborted(self, table: Table, reason: str) -> None:
        self.calls.append(("aborted", reason))


async def until(cond: Any, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        assert loop.time() < end, "timed out"
        await asyncio.sleep(0.005)


def policy(after: float | None) -> TablePolicy:
    return TablePolicy(decision_timeout=30.0, on_disconnect=OnDisconnect.BOT, abandon_after=after)


async def test_a_bot_filled_table_left_by_its_player_stops_and_is_abandoned_not_finished() -> None:
    rec = Recorder()
    me = Remote("silent")  # the game waits for it: it cannot end before it leaves
    t = Table(RULES, [me, *bots(3)], seed=3, policy=policy(0.05), recorder=rec)
    t.start()
    await until(lambda: bool(me.requests))
    before = Table.abandoned_total
    t.detach(0, me)
    status = await asyncio.wait_for(asyncio.shield(t.done), 30)
    assert status is TableStatus.ABANDONED and not t.game.over
    assert Table.abandoned_total == before + 1
    assert ("aborted", "abandoned") in rec.calls and not any(c[0] == "finished" for c in rec.calls)


async def test_a_deserted_table_asks_nobody_and_goes_on_when_a_player_comes_back() -> None:
    me = Remote("silent")
    t = Table(RULES, [me, *bots(3)], seed=4, policy=policy(3600.0))
    t.start()
    await until(lambda: bool(me.requests))
    t.detach(0, me)
    await until(lambda: t._deserted is not None)
    stopped_at = t.version
    for _ in range(50):  # the loop turns, and the bots (and the substitute) are asked nothing
        await asyncio.sleep(0)
    assert t.version <= stopped_at + 1  # at most a bot's answer already on its way
    back = Remote(name="back")
    t.attach(0, back)
    assert await asyncio.wait_for(asyncio.shield(t.done), 60) is TableStatus.FINISHED  # played to the end
    assert back.requests


async def test_a_table_with_a_remote_player_left_plays_on_and_without_the_policy_bots_finish() -> None:
    a, b = Remote(name="a"), Remote(name="b")
    t = Table(RULES, [a, b, *bots(2)], seed=5, policy=policy(0.0))
    t.start()
    await until(lambda: t.version > 10)
    t.detach(0, a)  # b is still there: the game goes on with a substitute for a
    await until(lambda: t.version > 60)
    assert t._deserted is None
    t.stop()
    await t.done
    me = Remote()
    t = Table(RULES, [me, *bots(3)], seed=6, policy=policy(None))  # no abandon_after: bots play on
    t.start()
    await until(lambda: t.version > 5)
    t.detach(0, me)
    assert await asyncio.wait_for(asyncio.shield(t.done), 60) is TableStatus.FINISHED
