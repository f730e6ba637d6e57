"""A store that cannot be written during play loses nothing: `moonshot serve` with four real
Sessions players over TCP; the store is made unwritable for a while (its writes fail, or it is
opened again read-only), then writable; the server is killed with SIGKILL and started again.

The fault is the server's test-only fault file (``MOONSHOT_TEST_STORE_FAULTS``): the tests run
as root, where a chmod stops no write. ``readonly`` opens the SQLite file with ``mode=ro`` (the
PostgreSQL session with ``default_transaction_read_only``), so the database itself refuses the
writes; ``fail`` fails them as a lost disk or server would.

Checked: the players are told the table paused and resumed, nobody is timed out for the pause,
the stored log has no gap, the restart restores the game (no ``restore_failed``), every player
resumes, and each one's replay holds every move it had been shown, in order.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from moonshot.protocols.sessions.client import Client
from moonshot.store import FAULTS_ENV, GameRecord, Store
from sessionskit import Slow

PG_URL = os.environ.get("MOONSHOT_TEST_PG_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")
pytestmark = pytest.mark.asyncio


class Recording(Client):
    """A client that keeps every message each session got, in order."""

    seen: dict[int, list[dict[str, Any]]]

    def _route(self, msg: dict[str, Any]) -> None:
        sid = msg.get("session_id")
        if isinstance(sid, int):
            self.seen.setdefault(sid, []).append(msg)
        super()._route(msg)


async def connect(port: int) -> Recording:
    client = await Recording.connect("127.0.0.1", port)
    assert isinstance(client, Recording)
    client.seen = {}
    return client


class Server:
    def __init__(self, db: str, control: Path, log: Path) -> None:
        self.db = db
        self.control = control
        self.log = log
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> int:
        env = dict(os.environ, **{FAULTS_ENV: str(self.control)})
        with self.log.open("ab") as err:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "moonshot.cli.main",
                "serve",
                "--sessions-port",
                "0",
                "--no-http",
                "--db",
                self.db,
                "--move-timeout",
                "2",
                "--fill-wait",
                "60",
                "--restore-grace",
                "120",
                "--bot",
                "random",
                "--log-level",
                "info",
                stdout=asyncio.subprocess.PIPE,
                stderr=err,
                env=env,
            )
        assert self.proc.stdout is not None
        line = (await asyncio.wait_for(self.proc.stdout.readline(), 240)).decode()
        m = re.search(r"tcp://[\d.]+:(\d+)", line)
        assert m, line
        return int(m.group(1))

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    async def kill(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        assert await asyncio.wait_for(self.proc.wait(), 120) == -signal.SIGKILL

    async def stop(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 120)
            except TimeoutError:
                self.proc.kill()


async def until(pred: Any, what: str, timeout: float = 240.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not pred():
        if loop.time() > end:
            raise TimeoutError(f"never happened: {what}")
        await asyncio.sleep(0.02)


async def stored(db: str) -> GameRecord | None:
    store = await Store.open(db)
    try:
        games = await store.list_games(None)
        return await store.load(games[0]["id"]) if games else None
    finally:
        await store.close()


async def actions_stored(db: str) -> int:
    rec = await stored(db)
    return len(rec.actions) if rec is not None else 0


async def until_stored(db: str, n: int, timeout: float = 240.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while await actions_stored(db) < n:
        if loop.time() > end:
            raise TimeoutError(f"the store never held {n} actions")
        await asyncio.sleep(0.05)


def moves(msgs: list[dict[str, Any]], replayed: bool) -> list[tuple[str, str]]:
    return [
        (str(m["player_tag"]), str(m["card"]))
        for m in msgs
        if m.get("type") == "move_report" and bool(m.get("replayed")) == replayed
    ]


def notices(msgs: list[dict[str, Any]]) -> list[str]:
    return [str(m["about"]) for m in msgs if m.get("type") == "error" and m.get("about") in ("paused", "resumed")]


@pytest_asyncio.fixture(params=["sqlite", "postgresql"])
async def db(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'games.db'}"
        return
    import asyncpg  # type: ignore[import-untyped]

    name = f"moonshot_faults_{uuid.uuid4().hex[:10]}"
    try:
        admin = await asyncio.wait_for(asyncpg.connect(PG_URL.replace("+asyncpg", "")), 3)
    except Exception:
        pytest.skip(f"PostgreSQL not reachable at {PG_URL}")
    await admin.execute(f"CREATE DATABASE {name}")
    try:
        yield PG_URL.rsplit("/", 1)[0] + "/" + name
    finally:
        await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        await admin.close()


@pytest.mark.parametrize("fault", ["readonly", "fail"])
async def test_an_unwritable_store_pauses_play_and_a_kill_9_then_loses_nothing(
    db: str, fault: str, tmp_path: Path
) -> None:
    control = tmp_path / "fault"
    server = Server(db, control, tmp_path / "server.log")
    port = await server.start()
    client = await connect(port)
    players = asyncio.gather(*(client.play(Slow(0.003), lobby_code="faults") for _ in range(4)), return_exceptions=True)
    try:
        await until_stored(db, 40)
        # the store becomes unwritable during play
        control.write_text(fault)
        await until(lambda: "event=store_unavailable" in server.text(), "store_unavailable logged")
        await until(
            lambda: len(client.seen) == 4 and all(notices(m) == ["paused"] for m in client.seen.values()),
            "every player told the table paused",
        )
        await asyncio.sleep(0.2)  # what was on its way before the pause arrives
        shown = {sid: len(moves(m, False)) for sid, m in client.seen.items()}
        frozen = await actions_stored(db)
        await asyncio.sleep(3.0)  # longer than a move's 2 s deadline
        assert {sid: len(moves(m, False)) for sid, m in client.seen.items()} == shown  # play stopped
        assert await actions_stored(db) == frozen
        # writable again: play goes on where it stopped
        control.write_text("")
        await until(lambda: "event=store_recovered paused_s=" in server.text(), "store_recovered logged")
        await until(
            lambda: all(notices(m) == ["paused", "resumed"] for m in client.seen.values()),
            "every player told the table resumed",
        )
        await until_stored(db, frozen + 40)
        ids = sorted(client.sessions)
        secrets = dict(client.session_secrets)
        await server.kill()
    finally:
        await server.stop()
    results = await asyncio.wait_for(players, 120)
    assert all(isinstance(r, Exception) for r in results)  # the server went away mid-game
    await client.close()
    before = await stored(db)
    assert before is not None and before.status == "running"
    assert not any(before.forced)  # nobody was timed out, for the pause or otherwise
    before.rebuild()  # the stored log replays: no gap, no move out of turn
    shown_before = {sid: moves(client.seen[sid], False) for sid in ids}
    log1 = server.text()
    assert "event=table_paused" in log1 and "event=table_resumed" in log1
    assert "store_write_failed" not in log1

    # restart on the same store: the game is restored and every player resumes
    control.write_text("")
    server2 = Server(db, control, tmp_path / "server2.log")
    port2 = await server2.start()
    try:
        back = await connect(port2)
        done = await asyncio.wait_for(
            asyncio.gather(*(back.resume(sid, Slow(0.003), secrets[sid]) for sid in ids)), 120
        )
        await back.close()
        await until(lambda: "event=finished" in server2.text(), "the game finished")
    finally:
        await server2.stop()
    log2 = server2.text()
    assert "event=restored game=" in log2 and "restore_failed" not in log2
    assert all(r.scores == done[0].scores for r in done)
    after = await stored(db)
    assert after is not None and after.status == "finished"
    n = len(before.actions)
    assert after.actions[:n] == before.actions
    assert after.rebuild().over
    for sid in ids:
        replay = moves(back.seen[sid], True)
        # every move it had been shown is in its replay, in the same order
        assert replay[: len(shown_before[sid])] == shown_before[sid], sid
