"""moonshot.cluster.mixed, in one event loop on the real Redis: what a burst of Sessions
joins with lobby codes costs a node (each code is looked up in Redis, in case another node hosts
a table by that name). The mixed tables themselves, across real processes, are in
tests/e2e/test_cluster_mixed.py."""

from __future__ import annotations

import asyncio
import gc
import json
import random
import weakref

import pytest

from moonshot.bots.random import RandomBot
from moonshot.play.tournament import make_spec, token_digest
from moonshot.runtime.lobby import Candidate, GameType
from moonshot.runtime.table import BotSeat

from .test_node import eventually, node, redis_prefix  # noqa: F401  (a fixture)

pytestmark = pytest.mark.timeout(600)


async def join_and_wait_for_the_table(port: int, code: str) -> list[str]:
    """One raw Sessions connection, one join with ``code``: the types of what comes back, until
    the game starts."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    join = {"type": "game_session_request", "player_tag": "p", "lobby_code": code, "seq_num": 0}
    writer.write(json.dumps({"type": "connection_request"}).encode() + json.dumps(join).encode())
    await writer.drain()
    decoder = json.JSONDecoder()
    buf, seen = "", []
    try:
        while "start_game" not in seen:
            data = await reader.read(65536)
            assert data, f"closed after {seen}"
            buf += data.decode()
            while buf:
                buf = buf.lstrip()
                try:
                    msg, end = decoder.raw_decode(buf)
                except ValueError:
                    break
                buf = buf[end:]
                seen.append(msg["type"])
                if msg["type"] == "game_session_response":
                    assert msg["status"] == "success", msg
    finally:
        writer.close()
    return seen


@pytest.mark.asyncio
async def test_a_burst_of_joins_with_codes_is_matched_without_running_out_of_redis_connections(
    redis_prefix: str,  # noqa: F811
) -> None:
    # more joins at once than a node has Redis connections (64): every one must be looked up,
    # queued and matched; before the lookups were bounded, the pool ran out and some players
    # were never seated
    app = await node(redis_prefix)
    try:
        assert app.sessions_port is not None
        port = app.sessions_port
        runs = [join_and_wait_for_the_table(port, f"burst-{i // 4}") for i in range(160)]
        seen = await asyncio.wait_for(asyncio.gather(*runs), 90)
        assert all("start_game" in s for s in seen)
        assert app.cluster is not None and app.cluster.formed == 40
    finally:
        await app.stop()


@pytest.mark.asyncio
async def test_an_entrant_whose_tournament_this_node_takes_over_while_it_waits_is_seated_here(
    redis_prefix: str,  # noqa: F811
) -> None:
    # The race a busy machine showed: an entrant told to join again (its tournament's node died)
    # asks before any node has taken the tournament over, so the token's index still names the
    # dead node and the join waits; then this very node takes the tournament over. The entrant
    # must be seated in the tournament here, not pooled under its token as a private code.
    app = await node(redis_prefix)
    try:
        host, mixed, cluster = app.tournaments, app.mixed, app.cluster
        assert host is not None and mixed is not None and cluster is not None and cluster.redis is not None
        spec = make_spec("standard", 1, ["random", "heuristic"], ["ext"], deals_per_set=1, tokens=["-"])
        t, tokens = host.create(spec)
        token, index = tokens["ext"], cluster.key("tourtoken")
        for _ in range(200):  # the node's own index entry is written by its ordered writer
            if await cluster.redis.hget(index, token_digest(token)) is not None:
                break
            await asyncio.sleep(0.02)
        # as it was on the node that died: the index names a node with no heartbeat, and this
        # node does not hold the tournament yet
        await cluster.redis.hset(index, token_digest(token), "a-node-that-died")
        here = host.claim
        host.claim = lambda c: False  # type: ignore[method-assign]
        seated: list[str] = []
        settled: list[str | None] = []
        seat = BotSeat(RandomBot(), random.Random(1), name="entrant")
        c = Candidate(seat, GameType.ANY, token, lambda table, chair: seated.append(table.id), protocol="sessions")
        c.settle = settled.append
        pooled: list[Candidate] = []
        mixed.queues["sessions"] = pooled.append
        assert app.claim(c) and c.pending  # waiting for a live node to take the tournament over
        await asyncio.sleep(0.5)
        assert not settled and not pooled
        # the takeover: this node holds the tournament and indexes its token again
        host.claim = here  # type: ignore[method-assign]
        await cluster.redis.hset(index, token_digest(token), cluster.node)
        await eventually(lambda: bool(seated) or bool(pooled), timeout=60)
        assert settled == [None] and not pooled
        assert seated and seated[0].startswith(t.id)
    finally:
        await app.stop()


def test_a_client_key_on_the_wire_is_the_same_only_for_the_same_client() -> None:
    """A claim's client key (a finished table's rematch): a value key (a Trend name and token
    digest) reads back as the local seats have it, through any node; an object key (a Sessions
    connection) is one random token per object, which no other object (nor node) gets."""
    from moonshot.cluster.mixed import key_from_wire, key_on_wire

    class Conn:
        pass

    tokens: weakref.WeakKeyDictionary[object, str] = weakref.WeakKeyDictionary()
    value = ("trend", "ai2", "ab" * 32)
    assert key_from_wire(key_on_wire(value, tokens, "n1")) == value
    assert key_on_wire(value, tokens, "n1") == key_on_wire(value, weakref.WeakKeyDictionary(), "n2")
    one, two = Conn(), Conn()
    k1 = key_on_wire(one, tokens, "n1")
    assert k1 is not None and k1 == key_on_wire(one, tokens, "n1") and key_from_wire(k1) == k1
    assert key_on_wire(two, tokens, "n1") != k1
    assert key_on_wire(one, weakref.WeakKeyDictionary(), "n1") != k1  # another node's tokens
    assert key_on_wire(None, tokens, "n1") is None and key_on_wire([1], tokens, "n1") is None
    # a token never reads as a value key, and a malformed value key is nobody's
    assert key_from_wire('["trend", 1]') is None and key_from_wire("[oops") is None
    del one
    gc.collect()
    assert len(tokens) == 1  # a closed connection's token goes with it
