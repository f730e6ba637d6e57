"""moonshot.server.cluster_mixed, in one event loop on the real Redis: what a burst of Sessions
joins with lobby codes costs a node (each code is looked up in Redis, in case another node hosts
a table by that name). The mixed tables themselves, across real processes, are in
tests/e2e/test_cluster_mixed.py."""

from __future__ import annotations

import asyncio
import json

import pytest

from .test_cluster import node, redis_prefix  # noqa: F401  (a fixture)

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(120)]


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
