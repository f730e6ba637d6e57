"""Backups and restores of the game store: SQLite's online backup under a writer in another
process, the in-use check that guards a restore, and pg_dump / pg_restore against the real
PostgreSQL server (a fresh database per test, dropped after)."""

from __future__ import annotations

import asyncio
import os
import random
import secrets
import shutil
import sqlite3
import stat
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from moonshot.bots.random import RandomBot
from moonshot.core.variants import find_variant
from moonshot.runtime.table import BotSeat, Table, TableStatus
from moonshot.store import Store, StoreRecorder
from moonshot.store.backup import (
    BackupError,
    backup_postgres,
    backup_sqlite,
    postgres_in_use,
    restore_postgres,
    restore_sqlite,
    sqlite_in_use,
)

PG_ADMIN = os.environ.get("MOONSHOT_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test").replace("+asyncpg", "")
RULES = find_variant("standard").replace(score_limit=40)

# a writer that keeps inserting running games into the store until killed, as a server would
WRITER = """
import sqlite3, sys, json, itertools
c = sqlite3.connect(sys.argv[1], timeout=30)
c.execute("PRAGMA journal_mode=WAL")
c.execute("PRAGMA synchronous=NORMAL")
print("ready", flush=True)
for i in itertools.count():
    c.execute(
        "INSERT INTO games (id, variant, seed, protocol, players, status, created_at, meta)"
        " VALUES (?, 'standard', ?, 'test', '[]', 'running', '2026-12-07 05:00:00', ?)",
        (f"w{i}", i, json.dumps({"pad": "x" * 3000})),
    )
    c.commit()
"""


async def play_games(url: str, n: int) -> list[str]:
    store = await Store.open(url)
    rec = StoreRecorder(store, protocol="test")
    rec.start()
    ids = []
    for g in range(n):
        t = Table(RULES, [BotSeat(RandomBot(), random.Random(g * 4 + s)) for s in range(4)], seed=g, recorder=rec)
        t.start()
        assert await asyncio.wait_for(t.done, 60) is TableStatus.FINISHED
        ids.append(t.id)
    await rec.close()
    await store.close()
    return ids


async def same_games(a: str, b: str, ids: list[str]) -> None:
    """Both stores hold the games ``ids``, finished, with the same actions and result."""
    first, second = await Store.open(a, create=False), await Store.open(b, create=False)
    try:
        for gid in ids:
            x, y = await first.load(gid), await second.load(gid)
            assert x is not None and y is not None and x.status == y.status == "finished"
            assert x.actions == y.actions and x.totals == y.totals and x.seed == y.seed and x.actions
    finally:
        await first.close()
        await second.close()


@pytest.fixture
def writer(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    db = tmp_path / "live.db"
    asyncio.run(play_games(f"sqlite:///{db}", 2))
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(db)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    yield db, proc
    proc.kill()
    proc.wait()


def count(path: Path, status: str) -> int:
    c = sqlite3.connect(path)
    try:
        return int(c.execute("SELECT count(*) FROM games WHERE status = ?", (status,)).fetchone()[0])
    finally:
        c.close()


def test_a_backup_taken_under_writes_is_one_consistent_private_snapshot(
    writer: tuple[Path, subprocess.Popen[str]], tmp_path: Path
) -> None:
    db, proc = writer
    while count(db, "running") < 50:  # the writer is well under way
        pass
    dest = tmp_path / "copy.db"
    seen: list[tuple[int, int]] = []
    summary = backup_sqlite(f"sqlite:///{db}", dest, progress=lambda done, total: seen.append((done, total)), step=8)
    assert proc.poll() is None  # the writer never stopped
    assert summary.games["running"] >= 50
    while count(db, "running") <= summary.games["running"]:  # and it goes on writing after the snapshot
        assert proc.poll() is None
    assert summary.games["finished"] == 2 and summary.size == dest.stat().st_size
    assert stat.S_IMODE(dest.stat().st_mode) == 0o600
    c = sqlite3.connect(dest)
    assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    # one snapshot: the rows are exactly w0..wN-1, none torn away from the ones before it
    ids = {r[0] for r in c.execute("SELECT id FROM games WHERE status = 'running'")}
    assert ids == {f"w{i}" for i in range(len(ids))}
    c.close()
    totals = {t for _, t in seen}
    assert len(totals) == 1 and seen[-1][0] == seen[-1][1]  # never restarted, reached the end
    assert not list(tmp_path.glob(".*.partial"))


def test_a_backup_never_overwrites_without_force(writer: tuple[Path, subprocess.Popen[str]], tmp_path: Path) -> None:
    db, _ = writer
    dest = tmp_path / "copy.db"
    dest.write_text("keep me")
    with pytest.raises(BackupError, match="exists: give --force"):
        backup_sqlite(f"sqlite:///{db}", dest)
    assert dest.read_text() == "keep me"
    backup_sqlite(f"sqlite:///{db}", dest, force=True)
    assert count(dest, "finished") == 2


def test_restore_refuses_a_store_a_process_has_open(writer: tuple[Path, subprocess.Popen[str]], tmp_path: Path) -> None:
    db, proc = writer
    dest = tmp_path / "copy.db"
    backup_sqlite(f"sqlite:///{db}", dest)
    assert sqlite_in_use(db) is not None
    with pytest.raises(BackupError, match=r"in use .*stop the server first"):
        restore_sqlite(f"sqlite:///{db}", dest, force=True)
    proc.kill()
    proc.wait()
    assert sqlite_in_use(db) is None  # the lock went with the process
    with pytest.raises(BackupError, match=r"already holds .* games: give --force"):
        restore_sqlite(f"sqlite:///{db}", dest)
    restore_sqlite(f"sqlite:///{db}", dest, force=True)
    assert count(db, "running") == count(dest, "running") and count(db, "finished") == 2


@pytest.mark.asyncio
async def test_a_restored_store_holds_the_backed_up_games_and_takes_new_ones(tmp_path: Path) -> None:
    src = tmp_path / "a.db"
    ids = await play_games(f"sqlite:///{src}", 2)
    copy = tmp_path / "backup.db"
    backup_sqlite(f"sqlite:///{src}", copy)
    target = tmp_path / "fresh" / "b.db"
    target.parent.mkdir()
    summary = restore_sqlite(f"sqlite:///{target}", copy)
    assert summary.games == {"finished": 2}
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    await same_games(f"sqlite:///{src}", f"sqlite:///{target}", ids)
    assert len(await play_games(f"sqlite:///{target}", 1)) == 1  # a working store, not a read-only copy


def test_restore_drops_a_stale_wal_of_the_store_it_replaces(tmp_path: Path) -> None:
    src = tmp_path / "a.db"
    asyncio.run(play_games(f"sqlite:///{src}", 1))
    copy = tmp_path / "backup.db"
    backup_sqlite(f"sqlite:///{src}", copy)
    target = tmp_path / "b.db"
    shutil.copy(src, target)
    (tmp_path / "b.db-wal").write_bytes(b"\0" * 4096)  # left by a crashed server
    restore_sqlite(f"sqlite:///{target}", copy, force=True)
    assert not (tmp_path / "b.db-wal").exists()
    assert count(target, "finished") == 1


def test_a_file_that_is_not_a_store_is_not_restored(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(BackupError, match="not a moonshot game store"):
        restore_sqlite(f"sqlite:///{tmp_path / 't.db'}", junk)
    assert not (tmp_path / "t.db").exists()


# ----------------------------------------------------------------------------- PostgreSQL
@pytest_asyncio.fixture
async def pg_databases() -> AsyncIterator[tuple[str, str]]:
    """Two fresh databases on the test server (source and target), dropped after."""
    if shutil.which("pg_dump") is None or shutil.which("pg_restore") is None or shutil.which("psql") is None:
        pytest.skip("pg_dump, pg_restore or psql is missing (Debian: apt-get install postgresql-client)")
    try:
        import asyncpg  # type: ignore[import-untyped]

        admin = await asyncio.wait_for(asyncpg.connect(PG_ADMIN), 3)
    except Exception as e:
        pytest.skip(f"PostgreSQL not reachable at {PG_ADMIN} ({e}); set MOONSHOT_TEST_PG_URL")
    names = [f"moonshot_backup_{secrets.token_hex(4)}" for _ in range(2)]
    for name in names:
        await admin.execute(f"CREATE DATABASE {name}")
    base = PG_ADMIN.rsplit("/", 1)[0]
    try:
        yield f"{base}/{names[0]}", f"{base}/{names[1]}"
    finally:
        for name in names:
            await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        await admin.close()


@pytest.mark.asyncio
async def test_pg_dump_and_pg_restore_carry_every_game(pg_databases: tuple[str, str], tmp_path: Path) -> None:
    source, target = pg_databases
    ids = await play_games(source, 2)
    dump = tmp_path / "store.dump"
    summary = await asyncio.to_thread(backup_postgres, source, dump)
    assert summary.games == {"finished": 2} and dump.read_bytes()[:5] == b"PGDMP"  # pg_dump's custom format
    assert stat.S_IMODE(dump.stat().st_mode) == 0o600
    with pytest.raises(BackupError, match="exists: give --force"):
        await asyncio.to_thread(backup_postgres, source, dump)

    held = await Store.open(target)  # a server on the target: its pool stays connected
    try:
        assert await asyncio.to_thread(postgres_in_use, target) is not None
        with pytest.raises(BackupError, match=r"in use .*stop the server first"):
            await asyncio.to_thread(restore_postgres, target, dump, True)
    finally:
        await held.close()
    assert await asyncio.to_thread(postgres_in_use, target) is None
    restored = await asyncio.to_thread(restore_postgres, target, dump)
    assert restored.games == {"finished": 2}
    with pytest.raises(BackupError, match="already holds 2 games: give --force"):
        await asyncio.to_thread(restore_postgres, target, dump)

    await same_games(source, target, ids)
