"""A table shows nothing that is not durable: events, requests and submit replies wait for the
recorder's acknowledgement; while the store is away the table asks nobody, its clocks stop and
its seats are told, and it goes on where it stopped when the store is back."""

from __future__ import annotations

import asyncio
import itertools
import os
import random
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moonshot.bots.random import RandomBot
from moonshot.core.actions import Action
from moonshot.core.engine import replay
from moonshot.core.variants import find_variant
from moonshot.runtime.table import (
    BotSeat,
    DecisionRequest,
    OnBadAnswer,
    Seat,
    SeatKind,
    Table,
    TableEvent,
    TableNotice,
    TablePolicy,
    TableStatus,
)
from moonshot.store import Store, StoreRecorder

RULES = find_variant("standard").replace(score_limit=30)  # short games
PG_URL = os.environ.get("MOONSHOT_TEST_PG_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")


async def pg_schema() -> str | None:
    """A fresh schema on the test server, or None when it cannot be reached."""
    try:
        import asyncpg  # type: ignore[import-untyped]

        conn = await asyncio.wait_for(asyncpg.connect(PG_URL.replace("+asyncpg", "")), 3)
    except Exception:
        return None
    schema = f"moonshot_{uuid.uuid4().hex[:12]}"
    await conn.execute(f"CREATE SCHEMA {schema}")
    await conn.close()
    return schema


async def drop_schema(schema: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(PG_URL.replace("+asyncpg", ""))
    await conn.execute(f"DROP SCHEMA {schema} CASCADE")
    await conn.close()


async def until(pred: Any, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not pred():
        assert loop.time() < end, "condition never held"
        await asyncio.sleep(0.005)


class Manual:
    """An acknowledging recorder that says an action is durable only when the test says so,
    and remembers how long the event log was after each action (to check what seats saw)."""

    acknowledges = True

    def __init__(self) -> None:
        self.table: Table | None = None
        self.ends: list[int] = []  # ends[k]: events in the log once k actions are applied
        self.acked = -1
        self.subscribed = False

    def subscribe(self, table: Table) -> None:
        self.subscribed = True

    def unsubscribe(self, table: Table) -> None:
        self.subscribed = False

    def game_started(self, table: Table) -> None:
        self.table = table
        self.ends = [len(table.game.log)]

    def action_applied(self, table: Table, index: int, action: Action, forced: bool) -> None:
        assert index == len(self.ends) - 1  # in order, no gap
        self.ends.append(len(table.game.log))

    def game_finished(self, table: Table) -> None:
        pass

    def game_failed(self, table: Table, reason: str) -> None:
        pass

    def ack(self, count: int | None = None) -> None:
        assert self.table is not None
        self.acked = len(self.ends) - 1 if count is None else count
        self.table.durable(self.acked)

    def shown_limit(self) -> int:
        """How many events may have been shown so far."""
        return self.ends[self.acked] if self.acked >= 0 else 0


class Watcher(Seat):
    """A remote seat that checks, as it is told things, that they are durable."""

    def __init__(self, rec: Manual, answer: bool = True, delay: float = 0.0) -> None:
        self.rec = rec
        self.answer = answer
        self.delay = delay
        self.name = "watcher"
        self.kind = SeatKind.HUMAN
        self.events: list[TableEvent] = []
        self.requests: list[DecisionRequest] = []
        self.notices: list[TableNotice] = []
        self.violations: list[str] = []
        self.rng = random.Random(3)

    def on_events(self, table: Table, events: Sequence[TableEvent]) -> None:
        if max(e.version for e in events) > self.rec.shown_limit():  # (a callback that raises is detached)
            self.violations.append(f"shown event {max(e.version for e in events)} of {self.rec.shown_limit()}")
        self.events.extend(events)

    def on_request(self, table: Table, request: DecisionRequest) -> None:
        if self.rec.acked < len(table.game.actions):  # asked only about a durable state
            self.violations.append(f"asked at {len(table.game.actions)} actions, {self.rec.acked} stored")
        self.requests.append(request)
        if self.answer:
            action = RandomBot().act(request.view, self.rng)
            asyncio.get_running_loop().call_later(self.delay, table.submit, request.seat, action, request.request_id)

    def on_notice(self, table: Table, notice: TableNotice) -> None:
        self.notices.append(notice)


def bots(n: int) -> list[Seat]:
    return [BotSeat(RandomBot(), random.Random(i)) for i in range(n)]


@pytest.mark.asyncio
async def test_nothing_is_shown_or_asked_before_the_recorder_says_it_is_durable() -> None:
    rec = Manual()
    seats = [Watcher(rec) for _ in range(2)]
    t = Table(RULES, [seats[0], *bots(1), seats[1], *bots(1)], seed=4, recorder=rec)
    t.start()
    await until(lambda: rec.table is not None)
    await asyncio.sleep(0.05)
    assert all(not s.events and not s.requests for s in seats)  # not even the deal: no game row yet
    acker = asyncio.get_running_loop().create_task(ack_now_and_then(rec))
    status = await asyncio.wait_for(t.done, 60)
    acker.cancel()
    assert status is TableStatus.FINISHED
    for s in seats:
        assert s.violations == []
        assert s.events[-1].version == len(t.game.log)  # everything came, in the end
        versions = [e.version for e in s.events]
        assert versions == sorted(versions) and len(set(versions)) == len(versions)
    assert replay(RULES, 4, t.game.actions).totals == t.game.totals
    assert not rec.subscribed  # the table unsubscribed as it ended


async def ack_now_and_then(rec: Manual) -> None:
    rng = random.Random(1)
    while True:
        await asyncio.sleep(rng.choice((0, 0.001, 0.003)))
        rec.ack()


@pytest.mark.asyncio
async def test_the_end_of_the_game_waits_for_its_last_action_to_be_stored() -> None:
    rec = Manual()
    t = Table(RULES, bots(4), seed=9, recorder=rec)
    t.start()
    await until(lambda: rec.table is not None and t.game.over)  # bots run ahead of the store
    await asyncio.sleep(0.05)
    assert not t.done.done()
    rec.ack(len(t.game.actions) - 1)
    await asyncio.sleep(0.05)
    assert not t.done.done()
    rec.ack()
    assert await asyncio.wait_for(t.done, 10) is TableStatus.FINISHED


@pytest.mark.asyncio
async def test_a_submit_reply_comes_once_the_action_is_stored() -> None:
    rec = Manual()
    w = Watcher(rec, answer=False)
    t = Table(RULES, [w, *bots(3)], seed=2, recorder=rec, policy=TablePolicy(decision_timeout=None))
    t.start()
    await until(lambda: rec.table is not None)
    rec.ack()
    await until(lambda: bool(w.requests) or (rec.ack() is None and False))
    req = w.requests[-1]
    reply: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
    t.submit(0, req.legal[0], req.request_id, reply)
    await until(lambda: len(rec.ends) - 1 > rec.acked)  # applied ...
    await asyncio.sleep(0.05)
    assert not reply.done()  # ... but not acknowledged
    rec.ack(len(t.game.actions))
    assert await asyncio.wait_for(reply, 5) is None
    t.stop()
    await t.done


@pytest.mark.asyncio
async def test_a_storage_pause_stops_the_clocks_and_nobody_is_timed_out_for_it() -> None:
    rec = Manual()
    w = Watcher(rec, answer=False)
    policy = TablePolicy(decision_timeout=0.3, on_timeout=OnBadAnswer.RANDOM)
    t = Table(RULES, [w, *bots(3)], seed=2, recorder=rec, policy=policy)
    t.start()
    await until(lambda: rec.table is not None)
    rec.ack()
    await until(lambda: bool(w.requests))  # the pass: every seat is asked at once
    t.storage_paused("disk I/O error")
    await until(lambda: bool(w.notices))
    assert w.notices[0].kind == "paused" and w.notices[0].cause == "storage"
    loop = asyncio.get_running_loop()
    paused_at = loop.time()
    await asyncio.sleep(0.8)  # well past the 0.3 s deadline
    assert t.stats()[0].timeouts == 0 and len(w.requests) == 1
    actions = len(t.game.actions)
    rec.ack()
    await asyncio.sleep(0.05)
    assert len(t.game.actions) == actions  # nobody, not even a bot, is asked while paused
    t.storage_resumed(loop.time() - paused_at)
    await until(lambda: len(w.notices) == 2)
    resumed_at = loop.time()
    assert w.notices[1].kind == "resumed"
    await until(lambda: t.stats()[0].timeouts == 1)  # the same request, with a fresh deadline
    assert loop.time() - resumed_at >= 0.25
    t.stop()
    await t.done


@pytest.mark.asyncio
async def test_a_seat_that_comes_back_during_a_pause_is_told_and_replayed_only_what_is_stored() -> None:
    rec = Manual()
    t = Table(RULES, [None, *bots(3)], seed=5, recorder=rec, policy=TablePolicy(decision_timeout=None))
    t.start()
    await until(lambda: rec.table is not None)
    rec.ack(0)
    await until(lambda: len(rec.ends) > 8)  # the substitute and the bots play on, ahead of the store
    rec.ack(4)
    t.storage_paused("read-only")
    await asyncio.sleep(0.02)
    w = Watcher(rec, answer=False)
    t.attach(0, w)
    await until(lambda: bool(w.notices))
    assert w.notices[0].kind == "paused"
    assert w.events and w.events[-1].version <= rec.ends[4] and w.violations == []
    t.stop()
    await t.done


class Flaky:
    """A store whose writes fail while ``down`` is set."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.down = False
        self.failures = 0

    async def write_batch(self, ops: Any) -> None:
        if self.down:
            self.failures += 1
            from sqlalchemy.exc import OperationalError

            raise OperationalError("INSERT", None, OSError(30, "Read-only file system (test)"))
        await self.store.write_batch(ops)


class Player(Seat):
    """A remote player over a real store: answers after a little thought."""

    def __init__(self, seat: int) -> None:
        self.name = f"p{seat}"
        self.kind = SeatKind.HUMAN
        self.rng = random.Random(seat)
        self.events: list[TableEvent] = []
        self.notices: list[str] = []

    def on_events(self, table: Table, events: Sequence[TableEvent]) -> None:
        self.events.extend(events)

    def on_request(self, table: Table, request: DecisionRequest) -> None:
        action = RandomBot().act(request.view, self.rng)
        asyncio.get_running_loop().call_later(0.002, table.submit, request.seat, action, request.request_id)

    def on_notice(self, table: Table, notice: TableNotice) -> None:
        self.notices.append(notice.kind)


@pytest.mark.asyncio
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
async def test_a_game_through_a_store_outage_is_stored_whole_and_finishes(kind: str, tmp_path: Path) -> None:
    schema = None
    if kind == "sqlite":
        store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'g.db'}")
    else:
        schema = await pg_schema()
        if schema is None:
            pytest.skip(f"PostgreSQL not reachable at {PG_URL}")
        store = await Store.open(PG_URL, schema=schema)
    try:
        flaky = Flaky(store)
        rec = StoreRecorder(flaky, retry_base=0.01, retry_cap=0.1)  # type: ignore[arg-type]
        rec.start()
        players = [Player(s) for s in range(4)]
        t = Table(RULES, players, seed=12, recorder=rec, policy=TablePolicy(decision_timeout=0.5))
        t.start()
        await until(lambda: len(t.game.actions) >= 30)
        flaky.down = True
        await until(lambda: flaky.failures >= 3 and not rec.available)
        seen = [len(p.events) for p in players]
        await asyncio.sleep(0.7)  # longer than a decision's deadline
        assert [len(p.events) for p in players] == seen  # nothing more shown while the store is away
        flaky.down = False
        assert await asyncio.wait_for(t.done, 120) is TableStatus.FINISHED
        await rec.close()
        stored = await store.load(t.id)
        assert stored is not None
        assert stored.actions == t.game.actions  # every action, in order, no gap
        assert not any(stored.forced) and all(s.timeouts == 0 for s in t.stats())
        assert stored.rebuild().totals == t.game.totals
        for p in players:
            assert p.notices == ["paused", "resumed"]
            assert p.events[-1].version == len(t.game.log)
    finally:
        await store.close()
        if schema is not None:
            await drop_schema(schema)


@settings(max_examples=15, deadline=None)
@given(
    st.lists(st.sampled_from(["ack", "ack", "ack", "wait", "pause", "resume"]), min_size=5, max_size=40),
    st.integers(0, 2**16),
)
def test_whatever_the_acks_and_pauses_nothing_unstored_is_shown_and_the_game_ends_whole(
    schedule: list[str], seed: int
) -> None:
    """Acknowledgements late or early, pauses and resumes in any order: every seat is only ever
    shown stored events and asked about a stored state, nobody is timed out, and once the store
    keeps up the game ends with every event delivered."""

    async def run() -> None:
        rec = Manual()
        seats = [Watcher(rec, delay=0.001), *bots(1), Watcher(rec, delay=0.002), *bots(1)]
        policy = TablePolicy(decision_timeout=5.0)
        t = Table(RULES, seats, seed=seed, recorder=rec, policy=policy)
        t.start()
        await until(lambda: rec.table is not None)
        for step in schedule:
            if step == "ack":
                rec.ack()
            elif step == "pause":
                t.storage_paused("test")
            elif step == "resume":
                t.storage_resumed(0.0)
            await asyncio.sleep(0.002)
        t.storage_resumed(0.0)
        while not t.done.done():
            rec.ack()
            await asyncio.sleep(0.001)
        assert t.done.result() is TableStatus.FINISHED
        assert all(s.timeouts == 0 for s in t.stats())
        for w in seats:
            if isinstance(w, Watcher):
                assert w.events[-1].version == len(t.game.log)
                kinds = [n.kind for n in w.notices]
                assert all(a != b for a, b in itertools.pairwise(kinds))  # paused, resumed, paused...
                assert w.violations == []

    asyncio.run(run())
