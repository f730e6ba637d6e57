"""The store writer when the store cannot be written: retried with backoff, in order, never
dropped; tables told when their actions are durable, paused while the store is away and resumed
when it is back. Faults: a store whose writes fail for a while (a wrapper), and the test-only
fault file (``MOONSHOT_TEST_STORE_FAULTS``) that fails writes or opens the store read-only."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from sqlalchemy.exc import IntegrityError, OperationalError

from moonshot.core.actions import Play
from moonshot.store import FAULTS_ENV, Store, StoreRecorder, _Op, backoff_delay, now, transient

from .test_init import PG_URL, drop_schema, pg_schema


async def open_store(kind: str, tmp_path: Path) -> tuple[Store, str | None]:
    if kind == "sqlite":
        return await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'g.db'}"), None
    schema = await pg_schema()
    if schema is None:
        pytest.skip(f"PostgreSQL not reachable at {PG_URL}")
    return await Store.open(PG_URL, schema=schema), schema


@pytest_asyncio.fixture(params=["sqlite", "postgresql"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    s, schema = await open_store(request.param, tmp_path)
    yield s
    await s.close()
    if schema is not None:
        await drop_schema(schema)


class Flaky:
    """Wraps a store: while ``down`` is set, every write fails as a lost disk or server would."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.down = False
        self.failures = 0
        self.committed: list[list[tuple[str, dict[str, Any]]]] = []

    async def write_batch(self, ops: Sequence[tuple[str, dict[str, Any]]]) -> None:
        if self.down:
            self.failures += 1
            raise OperationalError("INSERT", None, OSError(5, "disk I/O error (test)"))
        await self.store.write_batch(ops)
        self.committed.append(list(ops))


class FakeTable:
    """What the recorder reads of a table, and what it tells one."""

    def __init__(self, tid: str) -> None:
        self.id = tid
        self.acked: list[int] = []
        self.notes: list[str] = []

    def durable(self, count: int) -> None:
        self.acked.append(count)

    def storage_paused(self, reason: str) -> None:
        self.notes.append("paused")

    def storage_resumed(self, seconds: float) -> None:
        self.notes.append(f"resumed {seconds:.1f}")


def game_row(gid: str) -> dict[str, Any]:
    return {
        "id": gid,
        "variant": "standard",
        "seed": 1,
        "protocol": "",
        "players": [],
        "status": "running",
        "created_at": now(),
        "meta": {},
    }


async def until(pred: Any, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not pred():
        assert loop.time() < end, "condition never held"
        await asyncio.sleep(0.01)


def test_backoff_doubles_up_to_the_cap_with_jitter() -> None:
    rng = random.Random(0)
    for attempt in range(12):
        ideal = min(2.0, 0.05 * 2**attempt)
        d = backoff_delay(attempt, 0.05, 2.0, rng)
        assert ideal * 0.5 <= d <= ideal
    assert backoff_delay(10**6, 0.05, 2.0, rng) <= 2.0  # no overflow for a very long outage
    # jitter: two writers that failed together do not wait the same time
    assert len({round(backoff_delay(5, 0.05, 2.0, rng), 6) for _ in range(20)}) > 10


def test_what_counts_as_the_store_being_away() -> None:
    assert transient(OperationalError("x", None, OSError("attempt to write a readonly database")))
    assert transient(OSError(28, "No space left on device"))
    assert transient(ConnectionRefusedError())
    assert not transient(IntegrityError("x", None, Exception("UNIQUE constraint failed")))
    assert not transient(TypeError("not JSON serializable"))


@pytest.mark.asyncio
async def test_writes_that_fail_for_a_while_are_retried_in_order_and_none_is_lost(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    flaky = Flaky(store)
    rec = StoreRecorder(flaky, retry_base=0.01, retry_cap=0.05)  # type: ignore[arg-type]
    rec.start()
    t = FakeTable("g1")
    rec.subscribe(t)
    caplog.set_level(logging.INFO, "moonshot.store")
    rec._put(_Op("game", game_row("g1"), t, 0))
    for i in range(5):
        rec._put(_Op("action", action_row("g1", i), t, i + 1))
    await until(lambda: t.acked and t.acked[-1] == 5)
    flaky.down = True
    for i in range(5, 40):
        rec._put(_Op("action", action_row("g1", i), t, i + 1))
    await until(lambda: flaky.failures >= 4)
    assert t.acked[-1] == 5  # nothing written while the store is away is acknowledged
    assert t.notes == ["paused"] and not rec.available
    flaky.down = False
    await until(lambda: t.acked[-1] == 40)
    assert t.notes[-1].startswith("resumed")
    assert rec.available and rec.errors == 0 and rec.outages == 1
    await rec.close()
    stored = await store.load("g1")
    assert stored is not None
    assert [a.card for a in stored.actions] == [i % 52 for i in range(40)]  # type: ignore[attr-defined]
    text = caplog.text
    assert "event=store_unavailable" in text and "event=store_recovered paused_s=" in text
    assert "store_write_failed" not in text


def action_row(gid: str, i: int) -> dict[str, Any]:
    from moonshot.core.actions import action_to_dict

    return {"game_id": gid, "idx": i, "action": action_to_dict(Play(i % 4, i % 52)), "forced": False, "at": now()}


@pytest.mark.asyncio
async def test_acknowledgements_come_after_the_commit_one_per_table(store: Store) -> None:
    gate = asyncio.Event()
    committed: list[int] = []

    class Slow:
        async def write_batch(self, ops: Sequence[tuple[str, dict[str, Any]]]) -> None:
            await gate.wait()
            await store.write_batch(ops)
            committed.append(len(ops))

    rec = StoreRecorder(Slow())  # type: ignore[arg-type]
    rec.start()
    a, b = FakeTable("a"), FakeTable("b")
    for t in (a, b):
        rec._put(_Op("game", game_row(t.id), t, 0))
        for i in range(3):
            rec._put(_Op("action", action_row(t.id, i), t, i + 1))
    await asyncio.sleep(0.05)
    assert a.acked == [] and b.acked == []  # not yet committed: nothing acknowledged
    gate.set()
    await until(lambda: a.acked and b.acked)
    assert a.acked == [3] and b.acked == [3]  # group commit: one call per table for the whole batch
    assert committed == [8]
    await rec.close()


@pytest.mark.asyncio
async def test_a_row_the_database_refuses_is_skipped_alone_without_a_pause(store: Store) -> None:
    rec = StoreRecorder(store)
    rec.start()
    t = FakeTable("g")
    rec.subscribe(t)
    rec._put(_Op("game", game_row("g"), t, 0))
    await until(lambda: t.acked == [0])
    rec._put(_Op("game", game_row("g"), None))  # the same primary key again: refused
    for i in range(3):
        rec._put(_Op("action", action_row("g", i), t, i + 1))
    await until(lambda: t.acked[-1] == 3)
    assert rec.errors == 1 and t.notes == [] and rec.available
    await rec.close()
    stored = await store.load("g")
    assert stored is not None and len(stored.actions) == 3


@pytest.mark.asyncio
async def test_close_gives_up_on_a_store_that_stays_away(store: Store, caplog: pytest.LogCaptureFixture) -> None:
    flaky = Flaky(store)
    flaky.down = True
    rec = StoreRecorder(flaky, retry_base=0.01, retry_cap=0.02)  # type: ignore[arg-type]
    rec.start()
    rec._put(_Op("game", game_row("g"), None))
    await rec.close(timeout=0.3)
    assert "event=store_unwritten ops=" in caplog.text


@pytest.mark.asyncio
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
async def test_the_fault_file_fails_writes_or_opens_the_store_read_only(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    control = tmp_path / "fault"
    monkeypatch.setenv(FAULTS_ENV, str(control))
    s, schema = await open_store(kind, tmp_path)
    try:
        await s.write_batch([("game", game_row("g"))])
        control.write_text("fail")
        with pytest.raises(OperationalError, match="injected store fault"):
            await s.write_batch([("action", action_row("g", 0))])
        control.write_text("readonly")
        with pytest.raises(Exception) as err:
            await s.write_batch([("action", action_row("g", 0))])
        assert transient(err.value)
        assert "read" in str(err.value).lower()  # the database's own refusal: read-only
        rec = await s.load("g")  # reads still work
        assert rec is not None and rec.actions == []
        control.write_text("")
        await s.write_batch([("action", action_row("g", 0))])
        rec = await s.load("g")
        assert rec is not None and len(rec.actions) == 1
    finally:
        await s.close()
        if schema is not None:
            await drop_schema(schema)


@pytest.mark.asyncio
async def test_a_stream_of_rows_is_committed_at_most_once_an_interval_and_close_writes_the_rest(store: Store) -> None:
    """Group commit over time: the first row after a quiet spell is written at once; a row that
    comes right after waits for the interval (with whatever else comes meanwhile), and nothing
    is acknowledged before its commit; ``close`` writes what is queued without waiting for it."""
    commits: list[int] = []

    class Counting:
        async def write_batch(self, ops: Sequence[tuple[str, dict[str, Any]]]) -> None:
            await store.write_batch(ops)
            commits.append(len(ops))

    rec = StoreRecorder(Counting(), commit_interval=3600.0)  # type: ignore[arg-type]
    rec.start()
    t = FakeTable("g")
    rec._put(_Op("game", game_row("g"), t, 0))
    await until(lambda: t.acked == [0])  # at once: the writer had been quiet
    for i in range(3):
        rec._put(_Op("action", action_row("g", i), t, i + 1))
    for _ in range(50):
        await asyncio.sleep(0)
    assert commits == [1] and t.acked == [0]  # within the interval: queued, not acknowledged
    await asyncio.wait_for(rec.close(), 10)  # long before the interval ends
    assert commits == [1, 3] and t.acked == [0, 3]
    stored = await store.load("g")
    assert stored is not None and len(stored.actions) == 3
