"""moonshot.runtime.moderation: the operator's decisions kept a row each in a real store (SQLite),
written by two nodes' writers at once, lifted row by row, migrated from the whole copy an older
server kept, and re-read (the safety net under the cluster's messages)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from moonshot.runtime import moderation
from moonshot.runtime.controls import Ban, Controls
from moonshot.runtime.moderation import (
    AUDIT_PREFIX,
    BAN_PREFIX,
    GRACE,
    LEGACY_AUDIT,
    LEGACY_CONTROLS,
    MUTE_PREFIX,
    ModerationRows,
    ban_key,
)
from moonshot.store import Store, StoreRecorder

pytestmark = pytest.mark.asyncio


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest_asyncio.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    s = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'games.db'}")
    yield s
    await s.close()


class Node:
    """One node's controls and rows, its own writer on the shared store."""

    def __init__(self, store: Store, name: str, clock: Clock, mono: Clock | None = None) -> None:
        self.controls = Controls(clock)
        self.recorder = StoreRecorder(store)
        self.recorder.start()
        self.rows = ModerationRows(self.controls, store, self.recorder, name, monotonic=mono or Clock(0.0))

    def ban(self, kind: str, value: str, seconds: float | None = None) -> Ban:
        b = self.controls.ban(kind, value, seconds, "why", "ops")
        self.rows.banned(b)
        return b

    async def close(self) -> None:
        await self.recorder.close()


@contextlib.asynccontextmanager
async def two_nodes(store: Store, clock: Clock, mono: Clock | None = None) -> AsyncIterator[tuple[Node, Node]]:
    """Nodes "a" and "b" on one store, closed on the way out."""
    a, b = Node(store, "a", clock, mono), Node(store, "b", clock, mono)
    try:
        yield a, b
    finally:
        await a.close()
        await b.close()


async def test_two_nodes_ban_at_once_and_both_bans_are_kept_each_in_its_row(store: Store) -> None:
    clock = Clock()
    async with two_nodes(store, clock) as (a, b):
        a.ban("name", "mallory")
        b.ban("address", "198.51.100.0/24")
        a.rows.record({"at": clock(), "by": "ops", "action": "ban"})
        b.rows.record({"at": clock(), "by": "ops", "action": "ban"})
        assert await a.rows.written(10) and await b.rows.written(10)
        rows = await store.values(BAN_PREFIX)
        assert sorted(r["value"] for r in rows.values()) == ["198.51.100.0/24", "mallory"]
        assert len(await store.values(AUDIT_PREFIX)) == 2  # neither node's entry replaced the other's
        fresh = Node(store, "c", clock)  # a node that starts now holds both
        await fresh.rows.load()
        assert fresh.controls.name_ban("Mallory") is not None
        assert fresh.controls.address_ban("198.51.100.9") is not None
        await fresh.close()


async def test_a_lift_deletes_its_own_row_only(store: Store) -> None:
    clock = Clock()
    async with two_nodes(store, clock) as (a, b):
        a.ban("name", "mallory")
        b.ban("name", "trudy")
        m = a.controls.mute("eve", 60)
        a.rows.muted(m)
        await a.rows.written(10)
        await b.rows.written(10)
        b.controls.keep(a.controls.name_ban("mallory"))  # b heard of a's ban; its operator lifts it
        lifted = b.controls.unban("name", "MALLORY")
        assert lifted is not None
        b.rows.unbanned(lifted)
        a.rows.unmuted(a.controls.unmute("eve"))  # type: ignore[arg-type]
        await b.rows.written(10)
        await a.rows.written(10)
        assert [r["value"] for r in (await store.values(BAN_PREFIX)).values()] == ["trudy"]
        assert await store.values(MUTE_PREFIX) == {}


async def test_the_old_whole_copy_is_migrated_once_into_rows(store: Store) -> None:
    clock = Clock()
    old = Controls(clock)
    old.ban("name", "mallory", None, "cheating")
    old.ban("address", "203.0.113.0/28", 3600)
    old.mute("trudy", 600, "spam")
    old.ban("name", "newer", None, "old reason")
    await store.put_value(LEGACY_CONTROLS, old.to_json())
    trail = [{"at": 10.0, "by": "ops", "action": "ban"}, "junk", {"at": 11.0, "action": "mute"}]
    await store.put_value(LEGACY_AUDIT, trail)
    newer = Ban("name", "newer", None, "new reason", "ops", clock())  # a row written since: kept
    await store.put_value(ban_key(newer), newer.to_json())
    node = Node(store, "a", clock)
    try:
        await node.rows.load()
        c = node.controls
        assert c.name_ban("mallory") is not None and c.address_ban("203.0.113.5") is not None
        assert c.muted("Trudy") is not None and c.name_ban("newer") == newer
        assert await store.get_value(LEGACY_CONTROLS) is None and await store.get_value(LEGACY_AUDIT) is None
        assert len(await store.values(BAN_PREFIX)) == 3 and len(await store.values(MUTE_PREFIX)) == 1
        assert [e["action"] for e in await node.rows.trail(10)] == ["ban", "mute"]
        again = Node(store, "b", clock)  # a second start migrates nothing more
        await again.rows.load()
        assert len(await store.values(BAN_PREFIX)) == 3 and len(await again.rows.trail(10)) == 2
        await again.close()
    finally:
        await node.close()


async def test_a_re_read_takes_new_rows_drops_lifted_ones_and_spares_recent_changes(store: Store) -> None:
    clock, mono = Clock(), Clock(0.0)
    async with two_nodes(store, clock, mono) as (a, b):
        await b.rows.load()
        banned = a.ban("name", "mallory")
        a.rows.muted(a.controls.mute("eve", None))
        await a.rows.written(10)
        new = await b.rows.refresh()  # b never heard the message: the re-read finds the rows
        assert new == [banned] and b.controls.name_ban("mallory") == banned and b.controls.muted("eve")
        assert await b.rows.refresh() == []  # held already: not new again
        a.rows.unbanned(a.controls.unban("name", "mallory"))  # type: ignore[arg-type]
        await a.rows.written(10)
        await b.rows.refresh()
        assert b.controls.name_ban("mallory") is None  # the lift's row is gone: so is the ban
        # b hears of a ban whose row is not written yet: a re-read now does not undo it
        late = Ban("name", "late", None, "", "ops", clock())
        b.controls.keep(late)
        b.rows.heard(ban_key(late))
        await b.rows.refresh()
        assert b.controls.name_ban("late") == late
        mono.now += GRACE + 1  # long after, the rows are the truth again
        await b.rows.refresh()
        assert b.controls.name_ban("late") is None


async def test_ended_rows_and_old_audit_rows_go_at_start_and_long_names_fit_the_key(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    a = Node(store, "a", clock)
    try:
        a.ban("name", "short", 10)
        long_name = "x" * 500
        b = a.ban("name", long_name)
        assert len(ban_key(b)) <= 200
        for i in range(5):
            a.rows.record({"at": clock() + i, "by": "ops", "action": f"act{i}"})
        await a.rows.written(10)
        clock.now += 60
        monkeypatch.setattr(moderation, "AUDIT_KEEP", 3)
        fresh = Node(store, "b", clock)
        await fresh.rows.load()
        assert [r["value"] for r in (await store.values(BAN_PREFIX)).values()] == [long_name]
        assert fresh.controls.name_ban(long_name) is not None
        assert [e["action"] for e in await fresh.rows.trail(10)] == ["act2", "act3", "act4"]
        await fresh.close()
    finally:
        await a.close()


@pytest.mark.parametrize(
    "raw",
    [
        "ban",
        {"kind": "name"},
        {"kind": "planet", "value": "x", "until": None},
        {"kind": "name", "value": "x", "until": "soon"},
        {"kind": "address", "value": "example.com", "until": None},
        {"kind": "name", "value": "x", "until": None, "evil": "__import__('os')"},
        {"kind": "name", "value": "x", "until": None, "at": True},
    ],
)
async def test_a_damaged_row_is_skipped(store: Store, raw: Any) -> None:
    await store.put_value(f"{BAN_PREFIX}name:x", raw)
    node = Node(store, "a", Clock())
    try:
        await node.rows.load()
        assert node.controls.bans == {}
        assert await store.values(BAN_PREFIX) == {}  # and deleted
    finally:
        await node.close()


async def test_ended_and_old_rows_are_pruned_while_the_server_runs_not_only_at_start(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock, mono = Clock(), Clock(0.0)
    a = Node(store, "a", clock, mono)
    pruning = None
    try:
        await a.rows.load()
        a.ban("name", "brief", 10)
        a.ban("name", "forever")
        for i in range(5):
            a.rows.record({"at": clock() + i, "by": "ops", "action": f"act{i}"})
        await a.rows.written(10)
        monkeypatch.setattr(moderation, "AUDIT_KEEP", 3)
        clock.now += 60  # the brief ban has ended, but this node wrote it just now: spared
        assert await a.rows.prune() == 2
        await a.rows.written(10)
        assert len(await store.values(BAN_PREFIX)) == 2
        mono.now += GRACE
        pruning = asyncio.get_running_loop().create_task(a.rows.prune_forever(0.01))
        for _ in range(1000):
            if len(await store.values(BAN_PREFIX)) == 1:
                break
            await asyncio.sleep(0.01)
        assert [r["value"] for r in (await store.values(BAN_PREFIX)).values()] == ["forever"]
        assert [e["action"] for e in await a.rows.trail(10)] == ["act2", "act3", "act4"]
        assert not pruning.done()  # it goes on
    finally:
        if pruning is not None:
            pruning.cancel()
        await a.close()
