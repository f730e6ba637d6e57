"""`moonshot store backup` of a server's SQLite store while bots play at it, `moonshot store
restore` into a fresh path (refused while a server has the store open), a server started on the
restored store finishes the game that was under way, and `moonshot store export` of the result
verifies line by line."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sqlite3
import sys
from pathlib import Path

import pytest

from moonshot.cli.commands import verify_record
from moonshot.core.engine import replay
from moonshot.protocols.sessions.client import Client
from moonshot.protocols.sessions.codec import SESSIONS_RULES
from sessionskit import Slow

from .test_sessions_restart import start_server, wait_for

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(600)]


async def moonshot(*args: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "moonshot.cli.main",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 300)
    assert proc.returncode is not None
    return proc.returncode, out.decode()


def actions_in(path: Path) -> int:
    c = sqlite3.connect(path)
    try:
        return int(c.execute("SELECT count(*) FROM actions").fetchone()[0])
    finally:
        c.close()


async def test_backup_while_playing_then_restore_and_finish_the_game(tmp_path: Path) -> None:
    live = tmp_path / "live.db"
    db = f"sqlite:///{live}"
    proc, port = await start_server(db)
    client = await Client.connect("127.0.0.1", port)
    players = asyncio.gather(*(client.play(Slow(0.002), lobby_code="b") for _ in range(4)), return_exceptions=True)
    backup = tmp_path / "backups" / "moonshot.db"
    backup.parent.mkdir()
    try:
        await wait_for(db, lambda r: len(r.actions) >= 60)
        code, out = await moonshot("store", "backup", str(backup), "--db", db, "-q")
        assert code == 0, out
        assert "backed up" in out and "1 running" in out, out
        taken = actions_in(backup)
        assert taken >= 60
        await wait_for(db, lambda r: len(r.actions) > taken + 20)  # the game went on during and after
        assert not players.done()

        code, out = await moonshot("store", "backup", str(backup), "--db", db, "-q")
        assert code == 1 and "exists: give --force" in out
        code, out = await moonshot("store", "restore", str(backup), "--db", db, "--force", "-q")
        assert code == 1 and "in use" in out and "stop the server first" in out, out
    finally:
        proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), 120)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    await asyncio.wait_for(players, 120)
    await client.close()

    fresh = tmp_path / "restored" / "moonshot.db"
    fresh.parent.mkdir()
    code, out = await moonshot("store", "restore", str(backup), "--db", f"sqlite:///{fresh}", "-q")
    assert code == 0 and "restored" in out and "1 running" in out, out
    before = await wait_for(f"sqlite:///{fresh}", lambda r: True)
    assert before.status == "running" and len(before.actions) == taken

    proc2, _ = await start_server(f"sqlite:///{fresh}")
    try:
        after = await wait_for(f"sqlite:///{fresh}", lambda r: r.status == "finished")
    finally:
        proc2.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc2.wait(), 120) == 0
    assert after.id == before.id and after.actions[:taken] == before.actions  # resumed from the backup
    final = replay(SESSIONS_RULES, after.seed, after.actions)
    assert final.over and list(final.totals) == after.totals

    out_file = tmp_path / "games.jsonl"
    code, out = await moonshot("store", "export", "--db", f"sqlite:///{fresh}", "--out", str(out_file))
    assert code == 0 and "exported 1 finished games" in out, out
    (line,) = out_file.read_text().splitlines()
    record = json.loads(line)
    assert record["id"] == after.id and verify_record(record, None, []) == []
    record_file = tmp_path / "record.json"
    record_file.write_text(line)
    code, out = await moonshot("verify", "--record", str(record_file))
    assert code == 0 and "verified" in out, out
