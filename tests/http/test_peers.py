"""moonshot.http.peers: two nodes in one event loop on the real Redis, each with its
own HTTP port; requests for a game hosted by the other node are forwarded there.

Skipped (with the reason) when Redis is not at 127.0.0.1:6379 or the redis package is missing.
Adoption after kill -9 is in tests/e2e/test_cluster.py.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from cluster.test_node import eventually, node, redis_prefix  # noqa: F401 (a fixture)
from moonshot.server.app import ServerApp
from protocols.turbo.sse import SseReader

async_test = pytest.mark.asyncio


async def http_node(prefix: str) -> ServerApp:
    return await node(prefix, sessions_port=None, http_port=0, secret=None)


@async_test
async def test_a_game_on_one_node_is_joined_streamed_and_left_through_the_other(redis_prefix: str) -> None:  # noqa: F811
    a = await http_node(redis_prefix)
    b = await http_node(redis_prefix)
    try:
        url_a, url_b = f"http://127.0.0.1:{a.http_port}", f"http://127.0.0.1:{b.http_port}"
        async with (
            httpx.AsyncClient(base_url=url_a, cookies={"name": "ann"}, timeout=30) as ann,
            httpx.AsyncClient(base_url=url_b, cookies={"name": "bob"}, timeout=30) as bob,
        ):
            gid = (await ann.post("/lobby/new", json={"variant": "standard"})).json()
            assert b.turbo is not None and a.turbo is not None and gid not in b.turbo.games
            # B's lobby heard of the game; B forwards the join to A
            await eventually(lambda: gid in b.turbo.lobby_state()["games"])  # type: ignore[union-attr]
            r = await bob.post("/lobby/join", json={"id": gid})
            assert r.status_code == 200 and r.json() == ["ann", "bob"]
            assert "moonshot_session" in r.headers.get("set-cookie", "")  # A's cookie, through B
            # A's errors come back as they are
            r = await bob.post("/lobby/join", json={"id": gid})
            assert r.status_code == 409 and "already in this game" in r.json()["error"]
            # a stream of A's game read through B, until the browser goes away
            async with bob.stream("GET", f"/game/subscribe/{gid}") as resp:
                assert resp.status_code == 200
                assert resp.headers["content-type"].startswith("text/event-stream")
                assert (await SseReader(resp).next_event()) is not None
                stream = a.turbo.games[gid].stream
                assert stream is not None and len(stream.subscribers) == 1
            await eventually(lambda: not stream.subscribers)  # B told A ("hx")
            # a page of another origin cannot act through the node that forwards either
            r = await bob.post("/lobby/leave", json={"id": gid}, headers={"Origin": "http://127.0.0.1:1"})
            assert r.status_code == 403 and "origin" in r.json()["error"]
            leave = b'{"id": "' + gid.encode() + b'"}'
            r = await bob.post("/lobby/leave", content=leave, headers={"Content-Type": "text/plain"})
            assert r.status_code == 403
            assert [m.name for m in a.turbo.games[gid].members] == ["ann", "bob"]
            assert (await bob.post("/lobby/leave", json={"id": gid})).status_code == 200
            assert [m.name for m in a.turbo.games[gid].members] == ["ann"]
            # games nobody hosts, and oversized bodies, are answered by the node itself
            assert (await bob.post("/lobby/join", json={"id": "no-such-game"})).status_code == 404
            big = b'{"id": "' + b"x" * 70_000 + b'"}'
            r = await bob.post("/game/play", content=big, headers={"content-type": "application/json"})
            assert r.status_code == 413
        assert b.turbo.peers is not None and b.turbo.peers.forwarded >= 4
    finally:
        await a.stop()
        await b.stop()


@async_test
async def test_every_node_signs_cookies_with_one_key(redis_prefix: str) -> None:  # noqa: F811
    a = await http_node(redis_prefix)
    b = await http_node(redis_prefix)
    try:
        assert a.turbo is not None and b.turbo is not None
        token = a.turbo.identity.session_for("cleo")
        assert b.turbo.identity._nonce(token, "cleo") is not None
    finally:
        await a.stop()
        await b.stop()
    await asyncio.sleep(0)


@async_test
async def test_a_node_that_lost_a_games_lease_ends_its_streams(redis_prefix: str) -> None:  # noqa: F811
    a = await http_node(redis_prefix)
    b = await http_node(redis_prefix)
    try:
        assert a.turbo is not None
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{a.http_port}", cookies={"name": "ann"}) as ann:
            gid = (await ann.post("/lobby/new", json={"variant": "standard"})).json()
            for _ in range(3):  # started: the table waits for ann's pass (under the rated game's clock)
                assert (await ann.post("/lobby/add_bot", json={"id": gid})).status_code == 200
        await a.cluster.drain()
        async with (
            httpx.AsyncClient(
                base_url=f"http://127.0.0.1:{b.http_port}", cookies=dict(ann.cookies), timeout=30
            ) as through_b,
            through_b.stream("GET", f"/game/subscribe/{gid}") as resp,
        ):
            reader = SseReader(resp)
            assert (await reader.until("end_replay"))[-1].data["type"] == "end_replay"
            await a.cluster.redis.set(f"{redis_prefix}lease:{gid}", "another-node", px=60_000)
            # A finds the lease gone at its next renewal: the table stops, its stream ends,
            # and B ends the browser's response (which would reconnect to the new host)
            # (a live clock message, the countdown of ann's pass, may come before the end)
            rest = await asyncio.wait_for(reader.rest(), 10)
            assert all(e.data["type"] == "clock" and e.id is None for e in rest), rest
        assert gid not in a.turbo.games
    finally:
        await a.stop()
        await b.stop()


@async_test
async def test_a_new_game_is_found_by_the_next_request_whichever_node_it_reaches(redis_prefix: str) -> None:  # noqa: F811
    # the browser's next request may reach another process at once (no kept-alive connection):
    # /lobby/new answers only once the game's host is in Redis, however slow the writes are
    a = await http_node(redis_prefix)
    b = await http_node(redis_prefix)
    try:
        assert a.cluster is not None and a.cluster.redis is not None
        real = a.cluster.redis.evalsha

        async def slow_evalsha(*args: object, **kwargs: object) -> object:
            await asyncio.sleep(0.2)  # a busy Redis: every batch of A's writes lands late
            return await real(*args, **kwargs)  # type: ignore[arg-type]

        a.cluster.redis.evalsha = slow_evalsha  # type: ignore[method-assign]
        url_a, url_b = f"http://127.0.0.1:{a.http_port}", f"http://127.0.0.1:{b.http_port}"
        # one browser (one cookie jar: cookies do not care about the port), two processes
        async with httpx.AsyncClient(cookies={"name": "ann"}, timeout=30) as ann:
            for _ in range(3):
                gid = (await ann.post(f"{url_a}/lobby/new", json={"variant": "standard"})).json()
                r = await ann.post(f"{url_b}/lobby/add_bot", json={"id": gid, "algorithm": "random"})
                assert r.status_code == 200, r.text
    finally:
        await a.stop()
        await b.stop()


@async_test
async def test_a_lobby_call_is_not_acknowledged_while_redis_refuses_its_writes(
    redis_prefix: str,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Redis refuses A's writes: /lobby/new answers 503 with Retry-After (not 200 with a game no
    # other process can find); the writes stay queued, in order, and land once Redis answers, and
    # then the game is found through B
    from moonshot.cluster import writer as cluster_node

    monkeypatch.setattr(cluster_node, "WRITTEN_TIMEOUT", 0.5)
    a = await http_node(redis_prefix)
    b = await http_node(redis_prefix)
    try:
        assert a.cluster is not None and a.cluster.redis is not None
        real = a.cluster.redis.evalsha
        down = True

        async def flaky_evalsha(*args: object, **kwargs: object) -> object:
            if down:
                raise ConnectionError("Redis is down (injected)")
            return await real(*args, **kwargs)  # type: ignore[arg-type]

        a.cluster.redis.evalsha = flaky_evalsha  # type: ignore[method-assign]
        url_a, url_b = f"http://127.0.0.1:{a.http_port}", f"http://127.0.0.1:{b.http_port}"
        async with httpx.AsyncClient(cookies={"name": "ann"}, timeout=30) as ann:
            r = await ann.post(f"{url_a}/lobby/new", json={"variant": "standard"})
            assert r.status_code == 503, r.text
            assert r.headers["retry-after"] == "2" and "Redis" in r.json()["error"]
            assert "event=cluster_write_failed" in caplog.text
            down = False
            await a.cluster.written()  # the queued writes land once Redis answers
            assert "event=cluster_write_recovered" in caplog.text
            (gid,) = list(a.turbo.games)  # type: ignore[union-attr]
            r = await ann.post(f"{url_b}/lobby/add_bot", json={"id": gid, "algorithm": "random"})
            assert r.status_code == 200, r.text
    finally:
        await a.stop()
        await b.stop()
