"""moonshot.cluster.node: nodes of one cluster in one event loop, on the real Redis.

Each test uses its own key prefix and removes its keys; skipped (with the reason) when Redis is
not at 127.0.0.1:6379 or the redis package is missing. The multi-process behaviour (kill -9,
SO_REUSEPORT, PostgreSQL) is in tests/e2e/test_cluster.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import pickle
import secrets
from collections.abc import AsyncIterator, Callable

import pytest
import pytest_asyncio

from moonshot.cluster import messages as wire
from moonshot.cluster.node import ClusterError
from moonshot.cluster.writer import WRITE_LUA as _WRITE_LUA
from moonshot.core.engine import Game
from moonshot.protocols.sessions.client import Client, RandomPlayer
from moonshot.protocols.sessions.codec import SESSIONS_RULES
from moonshot.runtime.table import TableEvent, TableStatus
from moonshot.server.app import ServerApp
from moonshot.server.config import ServerConfig

REDIS_URL = os.environ.get("MOONSHOT_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")

async_test = pytest.mark.asyncio


def test_messages_carry_table_events_and_nothing_else() -> None:
    game = Game(SESSIONS_RULES, 5)
    events = [TableEvent(i + 1, e, forced=i == 2) for i, e in enumerate(game.log)]
    msg = wire.decode(wire.encode(wire.Events(table="T", binding="B", events=events, state=None)))
    assert isinstance(msg, wire.Events) and msg.events == events
    evil = pickle.dumps({"k": "ev", "e": os.system})
    with pytest.raises(wire.WireError):
        wire.decode(evil)


@pytest_asyncio.fixture
async def redis_prefix() -> AsyncIterator[str]:
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
    prefix = f"moonshot-unit-{secrets.token_hex(4)}:"
    yield prefix
    keys = [k async for k in r.scan_iter(match=f"{prefix}*")]
    if keys:
        await r.delete(*keys)
    await r.aclose()


async def node(prefix: str, **options: object) -> ServerApp:
    config = ServerConfig(
        sessions_port=0,
        db_url=None,
        bot="random",
        move_timeout=10.0,
        fill_wait=None,
        redis_url=REDIS_URL,
        cluster_prefix=prefix,
        lease=2.5,  # a loaded machine stalls an event loop for a second or more: no lease lost to that
    )
    for k, v in options.items():
        setattr(config, k, v)
    app = ServerApp(config)
    await app.start()
    return app


async def eventually(check: Callable[[], bool], timeout: float = 60.0) -> None:
    end = asyncio.get_running_loop().time() + timeout
    while not check():
        if asyncio.get_running_loop().time() > end:
            raise TimeoutError("never happened")
        await asyncio.sleep(0.05)


@async_test
async def test_a_write_batch_is_fenced_per_table_and_keeps_any_text(redis_prefix: str) -> None:
    import redis.asyncio as aioredis

    r = aioredis.Redis.from_url(REDIS_URL)
    p = redis_prefix
    name = wire.encode(wire.Notice(table="T", binding="B", notice="paused", cause="x", text='Zoë "ü" \\ 🂡'))
    ops = [
        ("", "s", f"{p}lease:T", "me", ""),
        (f"{p}lease:T", "x", f"{p}in:n", name, ""),
        (f"{p}lease:T", "r", f"{p}log:T", "kept", ""),
        (f"{p}lease:U", "r", f"{p}log:U", "never written: the lease is not ours", ""),
    ]
    try:
        lost = await r.eval(_WRITE_LUA, 0, "me", 100, json.dumps(ops))
        assert [k.decode() for k in lost] == [f"{p}lease:U"]
        ((_, fields),) = await r.xrange(f"{p}in:n")
        assert wire.decode(fields[b"m"]) == wire.decode(name)
        assert await r.lrange(f"{p}log:T", 0, -1) == [b"kept"] and not await r.exists(f"{p}log:U")
    finally:
        await r.aclose()


@async_test
async def test_an_unreachable_redis_is_one_clear_error() -> None:
    pytest.importorskip("redis")
    app = ServerApp(ServerConfig(sessions_port=None, db_url=None, redis_url="redis://127.0.0.1:1/0"))
    with pytest.raises(ClusterError, match="cannot reach Redis"):
        await app.start()


@async_test
async def test_a_lone_player_gets_bots_from_the_node_it_waits_on(redis_prefix: str) -> None:
    a = await node(redis_prefix, fill_wait=0.2)
    b = await node(redis_prefix, fill_wait=0.2)
    try:
        assert a.sessions_port is not None
        client = await Client.connect("127.0.0.1", a.sessions_port)
        result = await asyncio.wait_for(client.play(RandomPlayer(), lobby_code="alone"), 60)
        await client.close()
        assert sum(1 for tag in result.scores if tag.startswith("moonshot_random")) == 3
        assert a.cluster.formed == 1 and b.cluster.formed == 0
    finally:
        await a.stop()
        await b.stop()


@async_test
async def test_players_on_two_nodes_meet_and_leaving_the_pool_empties_it(redis_prefix: str) -> None:
    a = await node(redis_prefix)
    b = await node(redis_prefix)
    try:
        assert a.sessions_port is not None and b.sessions_port is not None
        leaver = await Client.connect("127.0.0.1", b.sessions_port)
        await leaver.open_session("leaver", lobby_code="pool")
        r = a.cluster.redis
        pool = f"{redis_prefix}lobby:" + '["sessions", "any", "pool"]'
        await eventually(lambda: len(b.cluster.tickets) == 1)
        await leaver.close()
        await eventually(lambda: not b.cluster.tickets)
        await asyncio.sleep(0.2)
        assert await r.llen(pool) == 0
        ca = await Client.connect("127.0.0.1", a.sessions_port)
        cb = await Client.connect("127.0.0.1", b.sessions_port)
        games = [c.play(RandomPlayer(), lobby_code="pool") for c in (ca, cb, ca, cb)]
        results = await asyncio.wait_for(asyncio.gather(*games), 90)
        assert all(res.scores == results[0].scores for res in results)
        assert a.cluster.formed + b.cluster.formed == 1
        await ca.close()
        await cb.close()
    finally:
        await a.stop()
        await b.stop()


class Paced(RandomPlayer):
    async def play(self, view: object) -> str:  # type: ignore[override]
        await asyncio.sleep(0.01)
        card = super().play(view)  # type: ignore[arg-type]
        assert card is not None
        return card


@async_test
async def test_a_table_pause_reaches_the_players_on_every_node(redis_prefix: str) -> None:
    a = await node(redis_prefix)
    b = await node(redis_prefix)
    try:
        assert a.sessions_port is not None and b.sessions_port is not None
        ca = await Client.connect("127.0.0.1", a.sessions_port)
        cb = await Client.connect("127.0.0.1", b.sessions_port)
        games = asyncio.gather(*(c.play(Paced(), lobby_code="notice") for c in (ca, cb, ca, cb)))
        await eventually(lambda: len(a.tables) + len(b.tables) == 1)
        table = next(iter({**a.tables, **b.tables}.values()))
        await eventually(lambda: len(table.game.actions) >= 8)
        table.storage_paused("test")  # as the store writer does when the store cannot be written
        table.storage_resumed(0.1)
        results = await asyncio.wait_for(games, 90)
        for res in results:  # two players on the table's node, two reached through Redis
            notices = [e for e in res.errors if "game store" in e]
            assert len(notices) == 2 and "paused" in notices[0] and "resumed" in notices[1], res.errors
        await ca.close()
        await cb.close()
    finally:
        await a.stop()
        await b.stop()


@async_test
async def test_hostile_stream_entries_are_dropped_with_a_log_line_and_the_node_serves_on(
    redis_prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    a = await node(redis_prefix, fill_wait=0.2)
    b = await node(redis_prefix, fill_wait=0.2)
    try:
        assert b.sessions_port is not None
        r = a.cluster.redis
        stream = f"{redis_prefix}in:{b.cluster.node}"
        hostile = [
            {"m": pickle.dumps({"k": "ev", "e": os.system})},  # the old format, with a function in it
            {"m": b"\xff\xfe not json"},
            {"m": b'{"kind": "rm", "table": "x"}'},
            {"m": b'{"kind": "seat.events", "table": "T", "binding": "B", "events": [[1, false, "__import__", "os"]]}'},
            {
                "m": b'{"kind": "table.submit", "table": "nope", "binding": "x", "chair": 9, '
                b'"action": {"type": "play"}, "request": null}'
            },  # valid, no such table
            {"other": b"no m field"},
        ]
        with caplog.at_level("WARNING", logger="moonshot.cluster"):
            for fields in hostile:
                await r.xadd(stream, fields)
            await eventually(lambda: caplog.text.count("event=cluster_bad_message") >= 5)
        client = await Client.connect("127.0.0.1", b.sessions_port)
        result = await asyncio.wait_for(client.play(RandomPlayer(), lobby_code="after-garbage"), 60)
        await client.close()
        assert len(result.scores) == 4
    finally:
        await a.stop()
        await b.stop()


@async_test
async def test_a_node_that_lost_its_lease_stops_the_table(redis_prefix: str) -> None:
    a = await node(redis_prefix)
    try:
        assert a.sessions_port is not None
        client = await Client.connect("127.0.0.1", a.sessions_port)
        for i in range(4):  # humans_only: the table waits for passes that never come
            await client.open_session(f"p{i}", game_type="humans_only", lobby_code="lease", kind="human")
        await eventually(lambda: len(a.cluster.owned) == 1)
        (table,) = a.cluster.owned.values()
        await a.cluster.drain()  # the lease is written
        assert (await a.cluster.redis.get(f"{redis_prefix}lease:{table.id}")).decode() == a.cluster.node
        await a.cluster.redis.set(f"{redis_prefix}lease:{table.id}", "another-node")
        await asyncio.wait_for(table.done, 10)
        assert table.status is TableStatus.STOPPED
        await client.close()
    finally:
        await a.stop()


@async_test
async def test_a_tournament_runs_on_one_node_and_passes_on_when_that_node_is_gone(redis_prefix: str) -> None:
    a = await node(redis_prefix)
    b = await node(redis_prefix)
    try:
        assert a.cluster is not None and b.cluster is not None
        assert await a.cluster.claim_job("tournament:t1")
        assert await a.cluster.claim_job("tournament:t1")  # its own: still its
        assert not await b.cluster.claim_job("tournament:t1")  # a live node holds it
        assert await b.cluster.claim_job("tournament:t2")
        await a.stop()
        # once a's heartbeat is gone, the next node to look takes its tournament
        for _ in range(100):
            if await b.cluster.claim_job("tournament:t1"):
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("b never took the tournament of the stopped node")
    finally:
        await b.stop()
        await a.stop()
