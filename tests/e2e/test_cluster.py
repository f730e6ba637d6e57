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
from typing import Any

import httpx
import pytest
import pytest_asyncio

from moonshot.core.engine import replay
from moonshot.core.variants import find_variant
from moonshot.protocols.sessions.client import Client, RandomPlayer
from moonshot.protocols.sessions.codec import SESSIONS_RULES
from moonshot.store import GameRecord, Store
from protocols.turbo.sse import SseReader
from sessionskit import Slow

from .test_turbo_play import Person, check_game

# messages a game stream sends live and never replays (no SSE id): the clock's countdowns and the
# replay's end marker; a stream resumed after adoption is compared without them
LIVE_ONLY = {"end_replay", "clock"}

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(600)]

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
    http_port: int | None = None

    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    async def kill9(self) -> None:
        """``kill -9`` the process, and wait until it is gone."""
        os.kill(self.proc.pid, signal.SIGKILL)
        await self.proc.wait()


async def last_event_id(web: httpx.AsyncClient, gid: str) -> str:
    """The id of the last game event a fresh stream of ``gid`` replays: where a browser resumes from."""
    async with web.stream("GET", f"/game/subscribe/{gid}") as resp:
        past = await SseReader(resp).until("end_replay")
    last_id = past[-2].id
    assert last_id
    return last_id


async def resume_stream(web: httpx.AsyncClient, gid: str, last_id: str, timeout: float = 180) -> list[Any]:
    """Reconnect to ``gid``'s stream with ``Last-Event-ID``: the events missed, up to ``end_replay``."""
    async with web.stream("GET", f"/game/subscribe/{gid}", headers={"Last-Event-ID": last_id}) as resp:
        assert resp.status_code == 200
        return await asyncio.wait_for(SseReader(resp).until("end_replay"), timeout)


async def start_node(
    c: Cluster, port: int, name: str, *extra: str, workers: int = 1, http_port: int | None = None, lease: float = 1
) -> Node:
    log = c.tmp / f"{name}.log"
    http = ["--no-http"] if http_port is None else ["--http-port", str(http_port)]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "moonshot.cli.main",
        "serve",
        "--sessions-port",
        str(port),
        *http,
        "--db",
        c.db,
        "--redis",
        c.redis_url,
        "--cluster-prefix",
        c.prefix,
        "--lease",
        str(lease),
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
        line = (await asyncio.wait_for(proc.stdout.readline(), 240)).decode()
        assert line, f"{name} exited: {log.read_text(errors='replace')[-3000:]}"
        if re.search(r"Sessions protocol on tcp://[\d.]+:(\d+)", line):
            seen += 1
    return Node(proc, port, log, http_port)


async def stop_node(node: Node) -> None:
    if node.proc.returncode is None:
        node.proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(node.proc.wait(), 120)
        except TimeoutError:
            node.proc.kill()


async def stored(db: str, predicate: object, timeout: float = 300) -> GameRecord:
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
        await nodes[owner].kill9()
        # the dead process's players lose their connection; they come back on the survivor
        lost = [g for i, g in enumerate(games) if ("a", "b", "a", "b")[i] == owner]
        kept = [g for i, g in enumerate(games) if ("a", "b", "a", "b")[i] == survivor]
        for g in lost:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(g, 120)
        back = await Client.connect("127.0.0.1", nodes[survivor].port)
        # the rest of a whole game, each action stored before anyone sees it: minutes on a busy machine
        resumed = await asyncio.wait_for(
            asyncio.gather(*(back.resume(sid, Slow(), secrets_[sid]) for sid in lost_ids)), 400
        )
        results = list(resumed) + list(await asyncio.wait_for(asyncio.gather(*kept), 400))
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


# ---------------------------------------------------------------- Turbo HTTP + SSE across processes
async def new_http_game(c: httpx.AsyncClient) -> str:
    """A standard game (dealt by the server's secret seed: others join it)."""
    r = await c.post("/lobby/new", json={"variant": "standard"})
    assert r.status_code == 200, r.text
    return str(r.json())


async def test_an_http_game_made_on_one_process_is_played_and_streamed_through_another(cluster: Cluster) -> None:
    a = await start_node(cluster, free_port(), "a", http_port=free_port(), lease=3)
    b = await start_node(cluster, free_port(), "b", http_port=free_port(), lease=3)
    try:
        async with (
            httpx.AsyncClient(base_url=a.url(), cookies={"name": "ann"}, timeout=60) as ann_a,
            httpx.AsyncClient(base_url=b.url(), cookies={"name": "bob"}, timeout=60) as bob_b,
        ):
            gid = await new_http_game(ann_a)
            # B forwards the join to A, which hosts the game; B's lobby knows the game
            assert (await bob_b.post("/lobby/join", json={"id": gid})).status_code == 200
            async with bob_b.stream("GET", "/lobby/subscribe") as resp:
                state = await SseReader(resp).next_event()
            assert state is not None and [p["name"] for p in state.data["games"][gid][:2]] == ["ann", "bob"]
            for _ in range(2):
                r = await bob_b.post("/lobby/add_bot", json={"id": gid, "algorithm": "random"})
                assert r.status_code == 200, r.text
            # someone else calling themselves ann on B gets a cookie there, but A, where ann
            # sits, keeps her binding: the impostor cannot act for her seat
            async with httpx.AsyncClient(base_url=b.url(), cookies={"name": "ann"}, timeout=60) as impostor:
                assert (await impostor.get("/api/me")).status_code == 200
                await asyncio.sleep(0.5)  # the binding's broadcast has reached A
                r = await impostor.post("/game/pass", json={"id": gid, "cards": ["2C", "3C", "4C"]})
                assert r.status_code == 403, r.text
            # ann's cookie, made by A, works on B: she plays through B, bob through A
            ann_b = httpx.AsyncClient(base_url=b.url(), cookies=dict(ann_a.cookies), timeout=60)
            bob_a = httpx.AsyncClient(base_url=a.url(), cookies=dict(bob_b.cookies), timeout=60)
            try:
                assert (await ann_b.get("/api/me")).json()["name"] == "ann"
                people = [Person(ann_b, gid, "ann", seed=1), Person(bob_a, gid, "bob", seed=2)]
                streams = await asyncio.wait_for(asyncio.gather(*(p.play() for p in people)), 150)
            finally:
                await ann_b.aclose()
                await bob_a.aclose()
        assert all(p.errors == [] for p in people)
        for events in streams:
            check_game(events, "standard")
        assert [e for e in streams[0] if e["type"] == "game_complete"] == [
            e for e in streams[1] if e["type"] == "game_complete"
        ]
        rec = await stored(cluster.db, lambda r: r.status == "finished")
        assert rec.id == gid and rec.protocol == "turbo"
        final = replay(find_variant("standard"), rec.seed, rec.actions)
        assert final.over and list(final.totals) == rec.totals
    finally:
        await stop_node(a)
        await stop_node(b)
    assert "event=new_game" in a.text() and "event=new_game" not in b.text()


async def test_kill_9_of_an_http_games_process_the_game_is_adopted_and_its_stream_resumes(cluster: Cluster) -> None:
    a = await start_node(cluster, free_port(), "a", http_port=free_port(), lease=3)
    b = await start_node(cluster, free_port(), "b", http_port=free_port(), lease=3)
    try:
        async with httpx.AsyncClient(base_url=a.url(), cookies={"name": "ann"}, timeout=60) as ann_a:
            gid = await new_http_game(ann_a)
            for _ in range(3):
                r = await ann_a.post("/lobby/add_bot", json={"id": gid, "algorithm": "random"})
                assert r.status_code == 200, r.text
            cookies = dict(ann_a.cookies)
        ann = httpx.AsyncClient(base_url=b.url(), cookies=cookies, timeout=60)
        try:
            before = await asyncio.wait_for(Person(ann, gid, "ann", seed=5).play(stop_after=6), 300)
            last_id = await last_event_id(ann, gid)  # through B, from A
            await a.kill9()
            # the browser reconnects with Last-Event-ID: B waits for the adoption, then resumes
            missed = await resume_stream(ann, gid, last_id)
            assert missed[-1].data["type"] == "end_replay"
            person = Person(ann, gid, "ann", seed=6)
            after = await asyncio.wait_for(person.play(), 150)
            assert person.errors == []
        finally:
            await ann.aclose()
        game_before = [e for e in before if e["type"] not in LIVE_ONLY]
        game_after = [e for e in after if e["type"] not in LIVE_ONLY]
        assert game_after[: len(game_before)] == game_before  # the same game, replayed by the adopter
        check_game(after, "standard")
        rec = await stored(cluster.db, lambda r: r.status == "finished")
        assert rec.id == gid
        final = replay(find_variant("standard"), rec.seed, rec.actions)
        assert final.over and list(final.totals) == rec.totals
        assert "event=adopted" in b.text()
    finally:
        await stop_node(a)
        await stop_node(b)


async def test_workers_share_one_http_port_and_any_of_them_answers_for_a_game(cluster: Cluster) -> None:
    http_port = free_port()
    node = await start_node(cluster, free_port(), "w", workers=2, http_port=http_port, lease=3)
    try:
        # no kept-alive connections: every request is a new connection, which the kernel gives
        # to either worker
        fresh = httpx.Limits(max_keepalive_connections=0)
        async with httpx.AsyncClient(base_url=node.url(), cookies={"name": "ann"}, timeout=60, limits=fresh) as ann:
            gid = await new_http_game(ann)
            for _ in range(3):
                r = await ann.post("/lobby/add_bot", json={"id": gid, "algorithm": "random"})
                assert r.status_code == 200, r.text
            person = Person(ann, gid, "ann", seed=8)
            events = await asyncio.wait_for(person.play(), 150)
        assert person.errors == []
        check_game(events, "standard")
        rec = await stored(cluster.db, lambda r: r.status == "finished")
        assert rec.id == gid
    finally:
        await stop_node(node)
    text = node.text()
    assert len(set(re.findall(r"event=cluster_joined node=(\S+)", text))) == 2
    assert text.count("event=listening protocol=http") == 2


async def test_kill_9_of_an_open_http_games_process_another_takes_the_game_at_once(cluster: Cluster) -> None:
    a = await start_node(cluster, free_port(), "a", http_port=free_port(), lease=2)
    b = await start_node(cluster, free_port(), "b", http_port=free_port(), lease=2)
    try:
        async with httpx.AsyncClient(base_url=a.url(), cookies={"name": "ann"}, timeout=60) as ann_a:
            gid = await new_http_game(ann_a)
            r = await ann_a.post("/lobby/add_bot", json={"id": gid, "algorithm": "random"})
            assert r.status_code == 200, r.text  # two of four: the game is open, not started
            cookies = dict(ann_a.cookies)
        await asyncio.sleep(0.5)  # the store's writer has the open game
        await a.kill9()
        # no process is started again: B notices that A is gone and takes the open game
        async with httpx.AsyncClient(base_url=b.url(), cookies={"name": "bob"}, timeout=60) as bob:
            deadline = asyncio.get_running_loop().time() + 30
            while True:
                r = await bob.post("/lobby/join", json={"id": gid})
                if r.status_code == 200 or asyncio.get_running_loop().time() > deadline:
                    break
                await asyncio.sleep(0.5)
            assert r.status_code == 200, r.text
            names = r.json()
            assert len(names) == 3 and names[0] == "ann" and names[2] == "bob"  # the stored game, with its bot
            r = await bob.post("/lobby/add_bot", json={"id": gid, "algorithm": "random"})
            assert r.status_code == 200, r.text
            ann = httpx.AsyncClient(base_url=b.url(), cookies=cookies, timeout=60)
            try:
                people = [Person(ann, gid, "ann", seed=3), Person(bob, gid, "bob", seed=4)]
                streams = await asyncio.wait_for(asyncio.gather(*(p.play() for p in people)), 150)
            finally:
                await ann.aclose()
        assert all(p.errors == [] for p in people)
        for events in streams:
            check_game(events, "standard")
        rec = await stored(cluster.db, lambda r: r.status == "finished")
        assert rec.id == gid
        assert "event=adopted_open game=" + gid in b.text()
    finally:
        await stop_node(a)
        await stop_node(b)


async def test_kill_9_of_a_tournaments_process_another_goes_on_with_it_at_once(cluster: Cluster) -> None:
    a = await start_node(cluster, free_port(), "a", http_port=free_port(), lease=2)
    b = await start_node(cluster, free_port(), "b", http_port=free_port(), lease=2)
    try:
        async with httpx.AsyncClient(base_url=a.url(), cookies={"name": "organiser"}, timeout=30) as web:
            body = {"variant": "standard", "sets": 1, "deals_per_set": 2, "seed": 13,
                    "bots": ["a=search --think-ms 25", "b=heuristic", "c=random", "d=random"]}  # fmt: skip
            r = await web.post("/api/tournaments", json=body)
            assert r.status_code == 201, r.text
            tid = r.json()["id"]
            while (await web.get(f"/api/tournaments/{tid}")).json()["games_played"] < 1:
                await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)  # the second game under way
        await a.kill9()
        # nobody starts a process again: B sees A gone and takes the tournament over
        async with httpx.AsyncClient(base_url=b.url(), timeout=30) as web:
            deadline = asyncio.get_running_loop().time() + 120
            while asyncio.get_running_loop().time() < deadline:
                r = await web.get(f"/api/tournaments/{tid}")
                if r.status_code == 200 and r.json()["status"] != "running":
                    break
                await asyncio.sleep(0.2)
            st = r.json()
            assert st["status"] == "finished" and st["games_played"] == st["games_total"] == 4, st
            full = (await web.get(f"/api/tournaments/{tid}/results")).json()
        assert sorted(g["number"] for g in full["games"]) == [0, 1, 2, 3]
        assert "event=tournaments_taken_over count=1" in b.text()
    finally:
        await stop_node(a)
        await stop_node(b)
