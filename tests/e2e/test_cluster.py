"""Several `moonshot serve` processes as one cluster (Redis + PostgreSQL, both real).

* Sessions players connected to different processes meet at one table, and the game is stored
  once, by the process that owns the table.
* `kill -9` of the process that owns a running table: another process adopts it (lease expiry,
  replay), the players who were connected to the dead process resume on a live one, the game
  finishes, every player ends with the same scores, and the stored record replays to them.
* `--workers 2`: two processes share one port (SO_REUSEPORT) and every player gets its game.

Skipped, with the reason, when Redis (127.0.0.1:6379) or PostgreSQL (127.0.0.1:5432, trust
auth, database `test`) is not there. Each test uses its own Redis key prefix and its own
PostgreSQL database, and removes both.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import secrets
import signal
import socket
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio

from moonshot.client import Client, RandomPlayer, View
from moonshot.engine import replay
from moonshot.protocols.sessions.codec import SESSIONS_RULES
from moonshot.store import GameRecord, Store

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(240)]

REDIS_URL = os.environ.get("MOONSHOT_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
PG_ADMIN = os.environ.get("MOONSHOT_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test").replace("+asyncpg", "")


@dataclass
class Cluster:
    redis_url: str
    prefix: str
    db: str
    tmp: Path


async def _redis() -> object:
    try:
        import redis.asyncio as aioredis
    except ImportError:
        pytest.skip("the redis package is missing: pip install -e '.[scale]'")
    r = aioredis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
    try:
        await r.ping()
    except Exception as e:
        await r.aclose()
        pytest.skip(f"Redis not reachable at {REDIS_URL} ({e}); set MOONSHOT_TEST_REDIS_URL")
    return r


@pytest_asyncio.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    r = await _redis()
    try:
        import asyncpg
    except ImportError:
        pytest.skip("asyncpg is missing: pip install -e '.[postgres]'")
    try:
        admin = await asyncpg.connect(PG_ADMIN, timeout=3)
    except Exception as e:
        await r.aclose()  # type: ignore[attr-defined]
        pytest.skip(f"PostgreSQL not reachable at {PG_ADMIN} ({e}); set MOONSHOT_TEST_PG_URL")
    name = f"moonshot_cluster_{secrets.token_hex(4)}"
    await admin.execute(f"CREATE DATABASE {name}")
    base = PG_ADMIN.rsplit("/", 1)[0]
    prefix = f"moonshot-test-{secrets.token_hex(4)}:"
    try:
        yield Cluster(REDIS_URL, prefix, f"{base}/{name}", tmp_path)
    finally:
        keys = [k async for k in r.scan_iter(match=f"{prefix}*")]  # type: ignore[attr-defined]
        if keys:
            await r.delete(*keys)  # type: ignore[attr-defined]
        await r.aclose()  # type: ignore[attr-defined]
        await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        await admin.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Node:
    proc: asyncio.subprocess.Process
    port: int
    log: Path

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


async def start_node(c: Cluster, port: int, name: str, *extra: str, workers: int = 1) -> Node:
    log = c.tmp / f"{name}.log"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "moonshot.cli",
        "serve",
        "--sessions-port",
        str(port),
        "--no-http",
        "--db",
        c.db,
        "--redis",
        c.redis_url,
        "--cluster-prefix",
        c.prefix,
        "--lease",
        "1",
        "--move-timeout",
        "10",
        "--fill-wait",
        "60",
        "--restore-grace",
        "60",
        "--bot",
        "random",
        "--workers",
        str(workers),
        *extra,
        stdout=asyncio.subprocess.PIPE,
        stderr=log.open("wb"),
    )
    assert proc.stdout is not None
    want = workers if workers > 1 else 1
    seen = 0
    while seen < want:
        line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
        assert line, f"{name} exited: {log.read_text(errors='replace')[-3000:]}"
        if re.search(r"Sessions protocol on tcp://[\d.]+:(\d+)", line):
            seen += 1
    return Node(proc, port, log)


async def stop_node(node: Node) -> None:
    if node.proc.returncode is None:
        node.proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(node.proc.wait(), 30)
        except TimeoutError:
            node.proc.kill()


class Slow(RandomPlayer):
    """Random cards at a human-ish pace, so a game is still on when a process is killed."""

    def __init__(self, delay: float = 0.01) -> None:
        super().__init__()
        self.delay = delay

    async def play(self, view: View) -> str:  # type: ignore[override]
        await asyncio.sleep(self.delay)
        return super().play(view)


async def stored(db: str, predicate: object, timeout: float = 90) -> GameRecord:
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
            await asyncio.sleep(0.1)
    finally:
        await store.close()


def check_record(rec: GameRecord, scores: dict[str, int]) -> None:
    """The stored game replays (so no action is doubled or missing: each one was legal where it
    stands) to the totals every player was told."""
    assert rec.status == "finished"
    final = replay(SESSIONS_RULES, rec.seed, rec.actions)
    assert final.over and list(final.totals) == rec.totals
    by_seat = [scores[p["name"]] for p in rec.players]
    assert by_seat == rec.totals


async def test_players_on_different_processes_meet_at_one_table(cluster: Cluster) -> None:
    a = await start_node(cluster, free_port(), "a")
    b = await start_node(cluster, free_port(), "b")
    try:
        ca = await Client.connect("127.0.0.1", a.port)
        cb = await Client.connect("127.0.0.1", b.port)
        results = await asyncio.wait_for(
            asyncio.gather(
                ca.play(RandomPlayer(), lobby_code="meet"),
                cb.play(RandomPlayer(), lobby_code="meet"),
                ca.play(RandomPlayer(), lobby_code="meet"),
                cb.play(RandomPlayer(), lobby_code="meet"),
            ),
            120,
        )
        await ca.close()
        await cb.close()
        assert all(r.scores == results[0].scores for r in results)
        assert len(results[0].scores) == 4 and not any("moonshot_" in t for t in results[0].scores)
        rec = await stored(cluster.db, lambda r: r.status == "finished")
        check_record(rec, results[0].scores)
        assert not any(rec.forced)  # every card was its player's own
    finally:
        await stop_node(a)
        await stop_node(b)
    assert "event=cluster_matched" in a.text() + b.text()


async def test_kill_9_of_the_owner_the_game_is_adopted_and_finishes(cluster: Cluster) -> None:
    import redis.asyncio as aioredis

    nodes = {n: await start_node(cluster, free_port(), n) for n in ("a", "b")}
    clients = {n: await Client.connect("127.0.0.1", node.port) for n, node in nodes.items()}
    games = [asyncio.ensure_future(clients[n].play(Slow(), lobby_code="kill")) for n in ("a", "b", "a", "b")]
    r = aioredis.Redis.from_url(cluster.redis_url)
    try:
        before = await stored(cluster.db, lambda rec: len(rec.actions) >= 60)
        owner_node = (await r.hget(f"{cluster.prefix}tables", before.id)).decode()
        owner = next(n for n, node in nodes.items() if f"-{node.proc.pid}-" in owner_node)
        survivor = next(n for n in nodes if n != owner)
        lost_ids = sorted(clients[owner].sessions)
        secrets_ = dict(clients[owner].session_secrets)
        assert len(lost_ids) == 2
        os.kill(nodes[owner].proc.pid, signal.SIGKILL)
        await nodes[owner].proc.wait()
        # the dead process's players lose their connection; they come back on the survivor
        lost = [g for i, g in enumerate(games) if ("a", "b", "a", "b")[i] == owner]
        kept = [g for i, g in enumerate(games) if ("a", "b", "a", "b")[i] == survivor]
        for g in lost:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(g, 30)
        back = await Client.connect("127.0.0.1", nodes[survivor].port)
        resumed = await asyncio.wait_for(
            asyncio.gather(*(back.resume(sid, Slow(), secrets_[sid]) for sid in lost_ids)), 150
        )
        results = list(resumed) + list(await asyncio.wait_for(asyncio.gather(*kept), 150))
        await back.close()
        for c in clients.values():
            await c.close()
        assert all(res.scores == results[0].scores for res in results)
        rec = await stored(cluster.db, lambda rec: rec.status == "finished")
        assert rec.id == before.id and rec.actions[: len(before.actions)] == before.actions
        check_record(rec, results[0].scores)
        assert "event=adopted" in nodes[survivor].text()
        assert (await r.hget(f"{cluster.prefix}tables", rec.id)) is None  # the directory forgot it
    finally:
        for g in games:
            g.cancel()
        await r.aclose()
        for node in nodes.values():
            await stop_node(node)


async def test_workers_share_one_port(cluster: Cluster) -> None:
    port = free_port()
    node = await start_node(cluster, port, "w", workers=2)
    try:
        clients = [await Client.connect("127.0.0.1", port) for _ in range(8)]
        results = await asyncio.wait_for(
            asyncio.gather(*(c.play(RandomPlayer(), lobby_code="w") for c in clients)), 150
        )
        for c in clients:
            await c.close()
        tables = {tuple(sorted(r.scores)) for r in results}
        assert len(tables) == 2  # eight players, two tables of four, whichever process they reached
    finally:
        await stop_node(node)
    text = node.text()
    assert len(set(re.findall(r"event=cluster_joined node=(\S+)", text))) == 2
