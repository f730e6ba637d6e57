"""Who a client is, attacked: forwarding headers and PROXY headers from peers that are not trusted
proxies change nothing, and a trusted proxy's clients get a share each. A real ``ServerApp`` on
127.0.0.1 with every protocol; the trusted proxy is the loopback alias 127.0.0.2 (Linux routes all
of 127/8 to lo), everyone else connects from 127.0.0.1 or 127.0.0.3, and each per-address limit
is lowered to one so a second share would show."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from websockets.exceptions import InvalidStatus

from moonshot.http.identity import SESSION_COOKIE
from moonshot.runtime.limits import ClientLimits
from moonshot.runtime.proxyproto import encode_v1, encode_v2
from moonshot.server.app import ServerApp
from security.attack import serve

pytestmark = pytest.mark.asyncio

PROXY = "127.0.0.2"  # the trusted proxy
OTHER = "127.0.0.3"  # a client that is not one
ONE_EACH = ClientLimits(streams_per_address=1, connections_per_address=1, tarpit=0.0)


async def until(cond: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.01)


def client_from(app: ServerApp, source: str) -> httpx.AsyncClient:
    transport = httpx.AsyncHTTPTransport(local_address=source)
    return httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}", transport=transport, timeout=30)


@contextlib.asynccontextmanager
async def streams(client: httpx.AsyncClient, *forwarded: str) -> AsyncIterator[list[int]]:
    """Lobby streams opened at once, one a ``X-Forwarded-For`` value; their statuses, held open."""
    async with contextlib.AsyncExitStack() as stack:
        statuses = []
        for i, xff in enumerate(forwarded):
            headers = {"X-Forwarded-For": xff, "Cookie": f"name=s{i}"}
            resp = await stack.enter_async_context(client.stream("GET", "/lobby/subscribe", headers=headers))
            statuses.append(resp.status_code)
        yield statuses


async def test_spoofed_forwarding_headers_from_an_untrusted_peer_change_nothing(tmp_path: Path) -> None:
    # no proxy trusted (the default): loopback's headers are ignored too, as every other peer's
    async with serve(tmp_path, trend_port=0, limits=ONE_EACH) as app, client_from(app, "127.0.0.1") as c:
        async with streams(c, "198.51.100.1", "198.51.100.2") as got:
            assert got == [200, 429]  # one address, one share, whatever the headers say
        spoof = {
            "X-Forwarded-For": "203.0.113.1",
            "X-Forwarded-Proto": "https",
            "Forwarded": "for=1.2.3.4;proto=https",
        }
        resp = await c.get("/api/me", headers=spoof | {"Cookie": "name=alice"})
        assert resp.status_code == 200
        assert "secure" not in resp.headers["set-cookie"].lower()  # https is not taken on its word
    # a trusted proxy is trusted alone: the same headers from another peer are still ignored
    async with serve(tmp_path, trend_port=0, limits=ONE_EACH, trusted_proxies=(PROXY,)) as app:
        async with client_from(app, OTHER) as c, streams(c, "198.51.100.1", "198.51.100.2") as got:
            assert got == [200, 429]
        await until(lambda: app.guard.streams_by_address.counts == {})  # its share back once it ended
        url = f"ws://127.0.0.1:{app.trend_port}/"
        first = await websockets.connect(
            url, additional_headers={"X-Forwarded-For": "198.51.100.1"}, local_addr=(OTHER, 0)
        )
        try:
            with pytest.raises(InvalidStatus) as refused:
                await websockets.connect(
                    url, additional_headers={"X-Forwarded-For": "198.51.100.2"}, local_addr=(OTHER, 0)
                )
            assert refused.value.response.status_code == 429
            assert app.guard.connections.count(OTHER) == 1
        finally:
            await first.close()


async def test_a_trusted_proxy_gives_each_of_its_clients_a_share(tmp_path: Path) -> None:
    async with serve(tmp_path, trend_port=0, limits=ONE_EACH, trusted_proxies=(PROXY,)) as app:
        async with client_from(app, PROXY) as c:
            # what the client itself put left of the proxy's entry is not believed: the third is
            # 198.51.100.1 again, whatever it claims before
            async with streams(c, "198.51.100.1", "198.51.100.2", "203.0.113.66, 198.51.100.1") as got:
                assert got == [200, 200, 429]
                assert set(app.guard.streams_by_address.counts) == {"198.51.100.1", "198.51.100.2"}
            # IPv6 clients: one share a /64
            async with streams(c, "2001:db8:1:2::1", "2001:db8:1:3::1", "2001:db8:1:2::ffff") as got:
                assert got == [200, 200, 429]
            resp = await c.get("/api/me", headers={"X-Forwarded-Proto": "https", "Cookie": "name=alice"})
            cookie = resp.headers["set-cookie"]
            assert cookie.startswith(SESSION_COOKIE) and "secure" in cookie.lower()
            resp = await c.get("/api/me", headers={"X-Forwarded-Proto": "http", "Cookie": "name=bob"})
            assert "secure" not in resp.headers["set-cookie"].lower()
        url = f"ws://127.0.0.1:{app.trend_port}/"
        a = await websockets.connect(url, additional_headers={"X-Forwarded-For": "198.51.100.1"}, local_addr=(PROXY, 0))
        b = await websockets.connect(url, additional_headers={"X-Forwarded-For": "198.51.100.2"}, local_addr=(PROXY, 0))
        try:
            with pytest.raises(InvalidStatus) as refused:
                await websockets.connect(
                    url, additional_headers={"X-Forwarded-For": "198.51.100.1"}, local_addr=(PROXY, 0)
                )
            assert refused.value.response.status_code == 429
            assert app.guard.connections.count(PROXY) == 0
        finally:
            await a.close()
            await b.close()


def tcp(port: int, source: str, first: bytes) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), source_address=(source, 0), timeout=30)
    if first:
        s.sendall(first)
    return s


async def closed_without_a_word(s: socket.socket) -> bool:
    data = await asyncio.to_thread(s.recv, 4096)
    return data == b""


async def test_proxy_protocol_is_honoured_only_from_a_trusted_proxy(tmp_path: Path) -> None:
    async with serve(tmp_path, kierki_port=0, limits=ONE_EACH, trusted_proxies=(PROXY,)) as app:
        assert app.sessions_port is not None and app.kierki_port is not None
        for port in (app.sessions_port, app.kierki_port):
            # through the proxy: one share per real client, v1 or v2
            a = tcp(port, PROXY, encode_v1("198.51.100.1", 5000, "127.0.0.1", port))
            b = tcp(port, PROXY, encode_v2("198.51.100.2", 5001, "127.0.0.1", port))
            await until(lambda: app.guard.connections.counts == {"198.51.100.1": 1, "198.51.100.2": 1})
            c = tcp(port, PROXY, encode_v2("198.51.100.1", 5002, "127.0.0.1", port))
            c.settimeout(30)
            refused = await asyncio.to_thread(c.recv, 4096)
            assert port == app.kierki_port or b"too many connections" in refused
            for s in (a, b, c):
                s.close()
            await until(lambda: app.guard.connections.counts == {})
            # a trusted peer that sends no header, a malformed one, or an oversized one: closed
            for first in (b'{"message": "join"}\n', b"PROXY TCP4 1.2.3.4 nope 1 2\r\n", b"PROXY UNKNOWN " + b"x" * 500):
                s = tcp(port, PROXY, first)
                assert await closed_without_a_word(s)
                s.close()
            assert app.guard.connections.counts == {}
            # from anyone else a PROXY header names nobody: the peer's own address holds the share
            admitted: list[str] = []
            admit = app.guard.admit

            def recording(addr: str, admitted: list[str] = admitted, admit: Any = admit) -> Any:
                admitted.append(addr)
                return admit(addr)

            app.guard.admit = recording  # type: ignore[method-assign]
            s = tcp(port, OTHER, encode_v1("198.51.100.9", 5000, "127.0.0.1", port))
            await until(lambda admitted=admitted: admitted == [OTHER])
            s.close()
            app.guard.admit = admit  # type: ignore[method-assign]
            await until(lambda: app.guard.connections.counts == {})


async def test_proxy_protocol_header_read_deadline(tmp_path: Path) -> None:
    async with serve(tmp_path, trusted_proxies=(PROXY,)) as app:
        assert app.sessions is not None and app.sessions_port is not None
        app.sessions.options.proxy_timeout = 0.2
        s = tcp(app.sessions_port, PROXY, b"PROXY TCP4 1.2.3")  # half a header, then nothing
        assert await closed_without_a_word(s)
        s.close()


async def test_a_spoofed_sessions_proxy_header_is_garbage_as_before(tmp_path: Path) -> None:
    async with serve(tmp_path, trusted_proxies=(PROXY,)) as app:
        assert app.sessions_port is not None
        s = tcp(app.sessions_port, "127.0.0.1", encode_v1("198.51.100.9", 5000, "127.0.0.1", 1))
        s.sendall(json.dumps({"message": "nonsense"}).encode() + b"\n")
        s.settimeout(30)
        got = await asyncio.to_thread(s.recv, 4096)
        assert b"error" in got  # the codec's answer to bad input, not a close
        assert "198.51.100.9" not in app.guard.connections.counts
        s.close()
