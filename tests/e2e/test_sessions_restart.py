"""`moonshot serve` killed mid-game (SIGKILL) or stopped (SIGTERM), then started again on the
same store: the game resumes from the stored state and completes, played by its players when
they come back with `resume_session`, else by bots once the restore grace is over.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
from pathlib import Path

import pytest

from moonshot.core.engine import replay
from moonshot.protocols.sessions.client import Client
from moonshot.protocols.sessions.codec import SESSIONS_RULES
from moonshot.store import GameRecord, Store
from sessionskit import Slow

pytestmark = pytest.mark.asyncio


async def start_server(db: str, grace: float = 0.3) -> tuple[asyncio.subprocess.Process, int]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "moonshot.cli.main",
        "serve",
        "--sessions-port",
        "0",
        "--no-http",
        "--db",
        db,
        "--move-timeout",
        "5",
        "--fill-wait",
        "60",
        "--restore-grace",
        str(grace),
        "--bot",
        "random",
        "--log-level",
        "warning",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    line = (await asyncio.wait_for(proc.stdout.readline(), 120)).decode()
    m = re.search(r"tcp://[\d.]+:(\d+)", line)
    assert m, line
    return proc, int(m.group(1))


async def wait_for(db: str, predicate: object, timeout: float = 300) -> GameRecord:
    store = await Store.open(db)
    try:
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            games = await store.list_games(None)
            if games:
                rec = await store.load(games[0]["id"])
                if rec is not None and predicate(rec):  # type: ignore[operator]
                    return rec
            if loop.time() > end:
                raise TimeoutError("the store never reached the expected state")
            await asyncio.sleep(0.05)
    finally:
        await store.close()


async def interrupt_and_restart(tmp_path: Path, sig: signal.Signals) -> None:
    db = f"sqlite+aiosqlite:///{tmp_path / 'games.db'}"
    proc, port = await start_server(db)
    client = await Client.connect("127.0.0.1", port)
    players = asyncio.gather(*(client.play(Slow(0.002), lobby_code="k") for _ in range(4)), return_exceptions=True)
    try:
        await wait_for(db, lambda r: len(r.actions) >= 120)
        os.kill(proc.pid, sig)
        assert await asyncio.wait_for(proc.wait(), 120) == (-signal.SIGKILL if sig is signal.SIGKILL else 0)
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    results = await asyncio.wait_for(players, 120)
    assert all(isinstance(r, Exception) for r in results)  # the server went away mid-game
    await client.close()

    before = await wait_for(db, lambda r: True)
    assert before.status == "running" and not before.rebuild().over
    stored_state = before.rebuild()

    proc2, _ = await start_server(db)
    try:
        after = await wait_for(db, lambda r: r.status == "finished")
    finally:
        proc2.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc2.wait(), 120) == 0
    assert after.id == before.id and after.seed == before.seed
    n = len(before.actions)
    assert after.actions[:n] == before.actions  # it went on from the stored state
    assert not any(after.forced[:n])
    assert all(after.forced[n:])  # the absent players' chairs were played by bots
    final = replay(SESSIONS_RULES, after.seed, after.actions)
    assert final.over and list(final.totals) == after.totals and max(final.totals) > 100
    # the restored game passed through exactly the stored state
    resumed = replay(SESSIONS_RULES, after.seed, after.actions[:n])
    assert resumed.log == stored_state.log


async def test_sigkill_mid_game_then_restart_resumes_and_completes(tmp_path: Path) -> None:
    await interrupt_and_restart(tmp_path, signal.SIGKILL)


async def test_sigterm_stops_gracefully_and_loses_no_game(tmp_path: Path) -> None:
    await interrupt_and_restart(tmp_path, signal.SIGTERM)


async def test_players_resume_their_sessions_after_a_sigkill(tmp_path: Path) -> None:
    db = f"sqlite+aiosqlite:///{tmp_path / 'games.db'}"
    proc, port = await start_server(db)
    client = await Client.connect("127.0.0.1", port)
    players = asyncio.gather(*(client.play(Slow(0.002), lobby_code="k") for _ in range(4)), return_exceptions=True)
    try:
        await wait_for(db, lambda r: len(r.actions) >= 120)
        ids = sorted(client.sessions)
        os.kill(proc.pid, signal.SIGKILL)
        await asyncio.wait_for(proc.wait(), 120)
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    await asyncio.wait_for(players, 120)
    await client.close()
    before = await wait_for(db, lambda r: True)
    assert len(ids) == 4

    proc2, port2 = await start_server(db, grace=60)
    try:
        back = await Client.connect("127.0.0.1", port2)
        secrets = client.session_secrets
        results = await asyncio.wait_for(asyncio.gather(*(back.resume(i, Slow(0.002), secrets[i]) for i in ids)), 300)
        await back.close()
        after = await wait_for(db, lambda r: r.status == "finished")
    finally:
        proc2.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc2.wait(), 120) == 0
    n = len(before.actions)
    assert after.actions[:n] == before.actions and len(after.actions) > n
    assert not any(after.forced)  # the players themselves played every card, before and after
    assert all(r.scores == results[0].scores for r in results)
    first = results[0]
    assert [first.scores[tag] for tag in first.player_order] == after.totals  # player_order is seat order
