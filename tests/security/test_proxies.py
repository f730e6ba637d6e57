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


def trend_socket(app: ServerApp, source: str, forwarded: str, **options: Any) -> Any:
    """A Trend WebSocket to ``app`` from the address ``source``, its ``X-Forwarded-For`` ``forwarded``."""
    url = f"ws://127.0.0.1:{app.trend_port}/"
    return websockets.connect(url, additional_headers={"X-Forwarded-For": forwarded}, local_addr=(source, 0), **options)


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
        first = await trend_socket(app, OTHER, "198.51.100.1")
        try:
            with pytest.raises(InvalidStatus) as refused:
                await trend_socket(app, OTHER, "198.51.100.2")
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
        a = await trend_socket(app, PROXY, "198.51.100.1")
        b = await trend_socket(app, PROXY, "198.51.100.2")
        try:
            with pytest.raises(InvalidStatus) as refused:
                await trend_socket(app, PROXY, "198.51.100.1")
            assert refused.value.response.status_code == 429
            assert app.guard.connections.count(PROXY) == 0
        finally:
            await a.close()
            await b.close()


async def test_behind_a_trusted_proxy_each_client_has_its_own_rate_of_streams_names_and_tables(
    tmp_path: Path,
) -> None:
    """The rates that pace one address (streams opened, new names, tables started) count the real
    clients a trusted proxy names: one of them over its rate does not hold back the other."""
    limits = ClientLimits(
        streams_opened_per_s=0.01, streams_opened_burst=1, names_per_s=0.01, names_burst=2,
        tables_per_s=0.01, tables_burst=1, tarpit=0.0,
    )  # fmt: skip
    async with serve(tmp_path, limits=limits, trusted_proxies=(PROXY,), fill_wait=0.05) as app:
        async with client_from(app, PROXY) as c:
            async with streams(c, "198.51.100.1", "198.51.100.1", "198.51.100.2") as got:
                assert got == [200, 429, 200]  # the first client's second stream is over its rate
            assert set(app.guard.streams_opened.buckets) == {"198.51.100.1", "198.51.100.2"}
            one = {"X-Forwarded-For": "198.51.100.1"}
            # s0 was bound by its stream; a second new name, then the first client is out of names
            assert (await c.get("/api/me", headers=one | {"Cookie": "name=n1"})).status_code == 200
            assert (await c.get("/api/me", headers=one | {"Cookie": "name=n2"})).status_code == 429
            two = {"X-Forwarded-For": "198.51.100.2"}
            assert (await c.get("/api/me", headers=two | {"Cookie": "name=n3"})).status_code == 200
        assert app.sessions_port is not None and app.lobby is not None
        port, lobby = app.sessions_port, app.lobby
        a = tcp(port, PROXY, encode_v1("198.51.100.1", 5000, "127.0.0.1", port))
        for i in range(2):
            a.sendall(json.dumps({"type": "game_session_request", "seq_num": i, "player_tag": "p",
                                  "game_type": "any", "lobby_code": f"c{i}"}).encode() + b"\n")  # fmt: skip
        await until(lambda: lobby.matched == 1 and lobby.paced >= 1)  # its second table waits
        b = tcp(port, PROXY, encode_v2("198.51.100.2", 5001, "127.0.0.1", port))
        b.sendall(json.dumps({"type": "game_session_request", "seq_num": 0, "player_tag": "p",
                              "game_type": "any", "lobby_code": "b"}).encode() + b"\n")  # fmt: skip
        await until(lambda: lobby.matched == 2)  # the other client's table is not held back
        assert lobby.waiting() == 1
        for s in (a, b):
            s.close()
        await until(lambda: lobby.waiting() == 0)


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


async def test_wrong_trend_tokens_lock_out_the_guesser_behind_a_proxy_not_its_other_clients(tmp_path: Path) -> None:
    """The re-join limit counts wrong tokens per chair and per address: behind a trusted proxy
    the address is the real client's, so one guesser no longer locks every player out."""
    from trend_sdk import SdkBot

    async with serve(tmp_path, trend_port=0, trusted_proxies=(PROXY,), move_timeout=30.0) as app:
        assert app.trend is not None and app.trend_port is not None
        url = f"ws://127.0.0.1:{app.trend_port}/"

        async def join(number: int, name: str, token: str, client: str) -> Any:
            ws = await trend_socket(app, PROXY, client, compression=None)
            data = {"playerNumber": str(number), "playerName": name, "token": token, "lobbyCode": "proxy"}
            await ws.send(json.dumps({"eventName": "join", "data": data}))
            return ws

        async def frames_until(ws: Any, event: str) -> list[dict[str, Any]]:
            got: list[dict[str, Any]] = []
            while not got or got[-1]["eventName"] not in (event, "error"):
                got.append(json.loads(await asyncio.wait_for(ws.recv(), 60)))
            return got

        # two thinking bots keep the game going while the others are away (direct, not proxied)
        others = [SdkBot(url, n, f"slow{n}", games=1, lobby_code="proxy", think=0.2) for n in (3, 4)]
        threads = [asyncio.create_task(asyncio.to_thread(b.run)) for b in others]
        try:
            alice = await join(1, "alice", "token-alice", "198.51.100.1")
            bob = await join(2, "bob", "token-bob", "198.51.100.2")
            for ws in (alice, bob):
                await frames_until(ws, "new_deal")
                await ws.close()  # both drop: bots play their chairs until they come back
            await until(lambda: len(app.trend.away) == 2)  # type: ignore[union-attr]
            rejoins = app.trend.rejoins  # type: ignore[union-attr]
            for guess in range(rejoins.limit):  # a guesser behind the proxy tries alice's chair
                ws = await join(1, "alice", f"{guess:08d}", "198.51.100.66")
                await until(lambda n=guess + 1: len(rejoins._fails.get(("address", "198.51.100.66"), ())) >= n)
                await ws.close()
            assert rejoins.blocked(time.monotonic(), ("address", "198.51.100.66"))
            assert not rejoins.blocked(time.monotonic(), ("address", PROXY))
            # bob, behind the same proxy, takes his chair back with his token
            back = await join(2, "bob", "token-bob", "198.51.100.2")
            seen = await frames_until(back, "new_game")
            assert seen[-1]["eventName"] == "new_game", seen
            await back.close()
        finally:
            for t in threads:
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(t, 240)
