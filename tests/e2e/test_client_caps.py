"""Fair shares per client, tried as an attacker would: a real ``ServerApp`` on 127.0.0.1 port 0,
every protocol, limits lowered so a test reaches them. The attacker connects from another
loopback address (127.0.0.2, 127.0.0.3: Linux routes all of 127/8 to lo), so the tests also
show that one address's caps and penalties leave another's clients alone."""

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
import pytest_asyncio
import websockets
from websockets.exceptions import ConnectionClosed, InvalidStatus

from moonshot.protocols.sessions.codec import StreamDecoder, encode
from moonshot.runtime.limits import ClientLimits
from moonshot.runtime.table import Table, TableStatus
from moonshot.server.app import ServerApp
from moonshot.server.config import ServerConfig

pytestmark = pytest.mark.asyncio

ATTACKER = "127.0.0.2"
OTHER = "127.0.0.3"
LIMITS = ClientLimits(
    connections_per_address=4,
    waiting_per_address=3,
    streams_per_address=5,
    streams_per_name=2,
    open_games_per_name=2,
    open_games_per_address=3,
    chat_per_s=0.01,
    chat_burst=3,
    penalty=1.5,
    game_expiry=0.5,
    lobby_idle=60.0,
    abandon_after=0.2,
)


async def until(cond: Any, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.01)


async def start(tmp_path: Path, limits: ClientLimits = LIMITS, **options: Any) -> ServerApp:
    options.setdefault("fill_wait", 0.2)
    app = ServerApp(
        ServerConfig(
            sessions_port=0,
            http_port=0,
            trend_port=0,
            kierki_port=0,
            db_url=f"sqlite+aiosqlite:///{tmp_path / 'games.db'}",
            bot="random",
            seed=1,
            limits=limits,
            **options,
        )
    )
    await app.start()
    return app


@pytest_asyncio.fixture
async def app(tmp_path: Path) -> AsyncIterator[ServerApp]:
    a = await start(tmp_path)
    yield a
    await a.stop()


class Sessions:
    """A raw Sessions client from a chosen loopback address."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.dec = StreamDecoder()
        self.got: list[dict[str, Any]] = []

    @classmethod
    async def connect(cls, port: int, source: str = "127.0.0.1") -> Sessions:
        r, w = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
        return cls(r, w)

    def send(self, msg: dict[str, Any]) -> None:
        self.writer.write(encode(msg))

    async def next(self, timeout: float = 30.0) -> dict[str, Any] | None:
        """The next message; None when the server closed the connection."""
        while not self.got:
            data = await asyncio.wait_for(self.reader.read(65536), timeout)
            if not data:
                return None
            self.got.extend(m for m in self.dec.feed(data) if isinstance(m, dict))
        return self.got.pop(0)

    async def until_type(self, kind: str) -> dict[str, Any]:
        while True:
            m = await self.next()
            assert m is not None, f"closed before {kind}"
            if m["type"] == kind:
                return m

    def close(self) -> None:
        self.writer.close()


def join(code: str, kind: str = "human") -> dict[str, Any]:
    return {
        "type": "game_session_request",
        "seq_num": 1,
        "player_tag": "p",
        "player_kind": kind,
        "game_type": "any",
        "lobby_code": code,
    }


# ---------------------------------------------------------------- Sessions
async def test_sessions_connections_per_address_are_capped_and_others_unaffected(app: ServerApp) -> None:
    assert app.sessions_port is not None
    held = [await Sessions.connect(app.sessions_port, ATTACKER) for _ in range(4)]
    for c in held:  # all four are served
        c.send({"type": "connection_request"})
        assert (await c.next()) == {"type": "connection_response", "status": "success"}
    fifth = await Sessions.connect(app.sessions_port, ATTACKER)
    refusal = await fifth.next()
    assert refusal is not None and refusal["type"] == "error" and refusal["about"] == "rate_limit"
    assert "at most 4" in refusal["reason"]
    assert await fifth.next() is None  # closed
    other = await Sessions.connect(app.sessions_port, OTHER)  # another address: its own share
    other.send({"type": "connection_request"})
    assert (await other.next()) == {"type": "connection_response", "status": "success"}
    held[0].close()
    await until(lambda: app.guard.connections.count(ATTACKER) == 3)
    again = await Sessions.connect(app.sessions_port, ATTACKER)  # a share freed: in again
    again.send({"type": "connection_request"})
    assert (await again.next()) == {"type": "connection_response", "status": "success"}
    for c in [*held[1:], fifth, other, again]:
        c.close()


async def test_sessions_waiting_for_a_table_are_capped_per_address_over_connections(tmp_path: Path) -> None:
    app = await start(tmp_path, fill_wait=None)
    try:
        assert app.sessions_port is not None
        a = await Sessions.connect(app.sessions_port, ATTACKER)
        b = await Sessions.connect(app.sessions_port, ATTACKER)
        for i, c in enumerate((a, a, b)):
            c.send(join(f"code-{i}"))
        oks = [await a.until_type("game_session_response"), await a.until_type("game_session_response")]
        oks.append(await b.until_type("game_session_response"))
        assert all(m["status"] == "success" for m in oks)
        b.send(join("code-3"))  # a fourth from the same address, on either connection: refused
        refused = await b.until_type("game_session_response")
        assert refused["status"] == "error" and "waiting for a table" in refused["reason"]
        c = await Sessions.connect(app.sessions_port, OTHER)
        c.send(join("code-4"))
        assert (await c.until_type("game_session_response"))["status"] == "success"
        a.close()  # its two waiting sessions leave: their shares come back
        await until(lambda: app.guard.waiting.count(ATTACKER) == 1)
        b.send(join("code-5"))
        assert (await b.until_type("game_session_response"))["status"] == "success"
        b.close()
        c.close()
    finally:
        await app.stop()


async def test_a_flooder_dropped_cannot_come_straight_back_but_others_can(app: ServerApp) -> None:
    assert app.sessions_port is not None
    flooder = await Sessions.connect(app.sessions_port, ATTACKER)
    junk = b'{"a":' + b'"' * (1 << 20)
    closed_by_server = False
    try:
        for _ in range(64):  # well past the 4 MiB burst of 1 MiB/s
            flooder.writer.write(junk)
            await flooder.writer.drain()
    except (ConnectionError, OSError):
        closed_by_server = True
    if not closed_by_server:
        with contextlib.suppress(ConnectionError, OSError):
            msg = await flooder.next()
            while msg is not None and msg.get("about") != "rate_limit":
                msg = await flooder.next()
    await until(lambda: app.guard.penalties.wait(ATTACKER) > 0)
    # straight back: connected, but nothing it sends is read until the penalty has passed
    t0 = time.monotonic()
    back = await Sessions.connect(app.sessions_port, ATTACKER)
    back.send({"type": "connection_request"})
    other = await Sessions.connect(app.sessions_port, OTHER)  # meanwhile another address at once
    other.send({"type": "connection_request"})
    assert (await other.next()) == {"type": "connection_response", "status": "success"}
    other_took = time.monotonic() - t0
    assert (await back.next()) == {"type": "connection_response", "status": "success"}
    back_took = time.monotonic() - t0
    assert back_took >= 1.0 > other_took or back_took >= other_took + 1.0
    # a second drop doubles the penalty
    assert app.guard.dropped(ATTACKER) >= 3.0
    for c in (flooder, back, other):
        c.close()


async def test_a_bot_filled_table_left_by_its_only_player_is_abandoned_not_rated(app: ServerApp) -> None:
    assert app.sessions_port is not None and app.store is not None and app.recorder is not None
    before = Table.abandoned_total
    c = await Sessions.connect(app.sessions_port, ATTACKER)
    c.send(join("lonely"))
    await c.until_type("game_session_response")
    await c.until_type("start_game")  # filled with three server bots
    (table,) = [t for t in app.tables.values() if "lonely" not in t.id]
    c.close()
    await asyncio.wait_for(asyncio.shield(table.done), 120)
    assert table.status is TableStatus.ABANDONED and Table.abandoned_total == before + 1
    version = table.version
    await app.recorder.flush()
    rec = await app.store.load(table.id)
    assert rec is not None and rec.status == "aborted" and table.version == version
    assert all(r.id != table.id for r in await app.store.unfinished())  # never restored


# ---------------------------------------------------------------- HTTP
def http(app: ServerApp, name: str | None, source: str = ATTACKER) -> httpx.AsyncClient:
    cookies = {"name": name} if name else {}
    return httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{app.http_port}",
        cookies=cookies,
        transport=httpx.AsyncHTTPTransport(local_address=source),
        timeout=30,
    )


async def test_a_body_over_the_limit_is_refused_at_its_length(app: ServerApp) -> None:
    async with http(app, "ann") as c:
        r = await c.post("/lobby/new", content=b"x" * (64 * 1024 + 1), headers={"content-type": "application/json"})
        assert r.status_code == 413


async def test_a_chunked_body_is_refused_once_it_passes_the_limit_never_read_to_the_end(app: ServerApp) -> None:
    r, w = await asyncio.open_connection("127.0.0.1", app.http_port, local_addr=(ATTACKER, 0))
    w.write(
        b"POST /lobby/new HTTP/1.1\r\nHost: x\r\nCookie: name=ann\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    chunk = b"%x\r\n%s\r\n" % (16 * 1024, b"x" * 16 * 1024)
    for _ in range(5):  # 80 KiB: past the limit, and the body never ends
        w.write(chunk)
    await w.drain()
    status = await asyncio.wait_for(r.readline(), 120)
    assert status.startswith(b"HTTP/1.1 413")
    w.close()


async def test_sse_streams_are_capped_per_name_and_per_address(app: ServerApp) -> None:
    async with (
        http(app, "a1") as a1,
        http(app, "a2") as a2,
        http(app, "a3") as a3,
        http(app, "b", OTHER) as other,
    ):
        opened: list[Any] = []

        async def stream(c: httpx.AsyncClient) -> httpx.Response:
            cm = c.stream("GET", "/lobby/subscribe")
            resp = await cm.__aenter__()
            opened.append(cm)
            return resp

        try:
            assert (await stream(a1)).status_code == 200
            assert (await stream(a1)).status_code == 200
            third = await stream(a1)  # a third under one name
            assert third.status_code == 429 and third.headers["retry-after"] == "10"
            assert "under this name" in json.loads(await third.aread())["error"]
            assert (await stream(a2)).status_code == 200
            assert (await stream(a2)).status_code == 200
            assert (await stream(a3)).status_code == 200  # five from this address, under three names
            sixth = await stream(a3)  # a sixth under yet another name: the address's cap
            assert sixth.status_code == 429 and "from this address" in json.loads(await sixth.aread())["error"]
            assert (await stream(other)).status_code == 200  # another address is not held back
        finally:
            for cm in reversed(opened):
                await cm.__aexit__(None, None, None)
        await until(lambda: app.guard.streams_by_address.count(ATTACKER) == 0)


async def test_streams_and_new_names_from_one_address_are_paced_and_another_address_is_not(tmp_path: Path) -> None:
    limits = LIMITS.replace(
        streams_per_address=64, streams_per_name=8, streams_opened_per_s=0.01, streams_opened_burst=3,
        names_per_s=0.01, names_burst=5, tarpit=0.0,
    )  # fmt: skip
    app = await start(tmp_path, limits)
    opened: list[Any] = []

    async def stream(c: httpx.AsyncClient) -> httpx.Response:
        cm = c.stream("GET", "/lobby/subscribe")
        resp = await cm.__aenter__()
        opened.append(cm)
        return resp

    try:
        clients = [http(app, f"flood{i}") for i in range(8)]
        got = [(await stream(c)).status_code for c in clients[:4]]
        assert got == [200, 200, 200, 429]  # a burst of streams, then the rate
        # names: the three streams bound three; two more new names, then 429 with when to retry
        statuses = [(await c.get("/api/me")).status_code for c in clients[3:6]]
        assert statuses == [200, 200, 429]
        again = await clients[6].get("/api/me")
        assert again.status_code == 429 and int(again.headers["retry-after"]) >= 1
        assert again.json()["code"] == "rate_limited" and "new names" in again.json()["error"]
        assert (await clients[0].get("/api/me")).status_code == 200  # a name it has is no new name
        async with http(app, "neighbour", OTHER) as other:  # another address has its own rates
            assert (await stream(other)).status_code == 200
            assert (await other.get("/api/me")).status_code == 200
        assert app.guard.streams_opened.refused == 1 and app.guard.names_by_address.refused >= 2
        for c in clients:
            await c.aclose()
    finally:
        for cm in reversed(opened):
            await cm.__aexit__(None, None, None)
        await app.stop()


async def test_a_stream_opened_past_the_rate_waits_its_turn_instead_of_a_refusal(tmp_path: Path) -> None:
    """A browser reopening its tabs: past the burst its streams are set up at the rate, late but
    open; only one whose turn is further than ``streams_opened_wait`` gets the 429."""
    limits = LIMITS.replace(
        streams_per_address=64, streams_per_name=16, streams_opened_per_s=5.0, streams_opened_burst=1,
        streams_opened_wait=0.5, tarpit=0.0,
    )  # fmt: skip
    app = await start(tmp_path, limits)
    opened: list[Any] = []

    async def stream(c: httpx.AsyncClient) -> int:
        cm = c.stream("GET", "/lobby/subscribe")
        status = (await cm.__aenter__()).status_code
        opened.append(cm)
        return status

    try:
        async with http(app, "tabs") as c:
            began = time.monotonic()
            assert [await stream(c) for _ in range(3)] == [200, 200, 200]  # one by one: each its turn
            assert time.monotonic() - began >= 0.35  # the second and third waited 1/5 s each
            statuses = await asyncio.gather(*(stream(c) for _ in range(5)))  # five at once
            assert statuses.count(200) in (2, 3) and statuses.count(429) == 5 - statuses.count(200)
            assert app.guard.streams_opened.refused == statuses.count(429)
    finally:
        for cm in reversed(opened):
            await cm.__aexit__(None, None, None)
        await app.stop()


async def test_tables_one_address_asks_for_start_a_burst_then_at_the_rate(tmp_path: Path) -> None:
    limits = LIMITS.replace(waiting_per_address=50, connections_per_address=8, tables_per_s=0.01, tables_burst=2)
    app = await start(tmp_path, limits, fill_wait=0.05)
    try:
        assert app.sessions_port is not None and app.lobby is not None
        lobby = app.lobby
        a = await Sessions.connect(app.sessions_port, ATTACKER)
        for i in range(6):
            a.send(join(f"flood-{i}"))
        started = [(await a.until_type("start_game")) for _ in range(2)]
        assert len(started) == 2
        await until(lambda: lobby.paced >= 4)  # the other four wait for the address's rate
        assert lobby.waiting() == 4 and app.guard.tables_by_address.refused >= 4
        c = await Sessions.connect(app.sessions_port, OTHER)
        c.send(join("mine"))
        await c.until_type("start_game")  # another address's table starts as before
        a.close()  # the waiting four leave: no table is ever started for them
        await until(lambda: lobby.waiting() == 0)
        c.close()
    finally:
        await app.stop()


async def test_open_games_are_capped_per_name_and_address_and_chat_is_rate_limited(app: ServerApp) -> None:
    async with http(app, "g1") as g1, http(app, "g2") as g2:
        assert (await g1.post("/lobby/new", json={"rules": "classic"})).status_code == 200
        assert (await g1.post("/lobby/new", json={"rules": "classic"})).status_code == 200
        r = await g1.post("/lobby/new", json={"rules": "classic"})
        assert r.status_code == 429 and r.headers["retry-after"] == "10" and "under this name" in r.json()["error"]
        assert (await g2.post("/lobby/new", json={"rules": "classic"})).status_code == 200
        r = await g2.post("/lobby/new", json={"rules": "classic"})  # a fourth from the address
        assert r.status_code == 429 and "from this address" in r.json()["error"]
        for _ in range(3):
            assert (await g2.post("/lobby/chat", json={"message": "hi"})).status_code == 200
        r = await g2.post("/lobby/chat", json={"message": "hi"})
        assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1


async def test_unfinished_tournaments_are_capped_per_address(tmp_path: Path) -> None:
    app = await start(tmp_path, limits=LIMITS.replace(tournaments_per_address=1))
    body = {"variant": "standard", "sets": 1, "deals_per_set": 1, "bots": ["random", "random"], "externals": ["x"]}
    try:
        async with http(app, "t1") as t1, http(app, "t2") as t2, http(app, "t3", OTHER) as t3:
            assert (await t1.post("/api/tournaments", json=body)).status_code == 201  # waits for "x"
            r = await t2.post("/api/tournaments", json=body)  # another name, the same address
            assert r.status_code == 429 and "from this address" in r.json()["error"] and r.headers["retry-after"]
            assert (await t3.post("/api/tournaments", json=body)).status_code == 201
    finally:
        await app.stop()


async def test_a_lobby_subscriber_gets_the_state_once_then_only_changes(app: ServerApp) -> None:
    async with (
        http(app, "watcher", OTHER) as w,
        http(app, "newcomer") as n,
        w.stream("GET", "/lobby/subscribe") as resp,
    ):
        lines = resp.aiter_lines()

        async def event() -> dict[str, Any]:
            async for line in lines:
                if line.startswith("data: "):
                    return dict(json.loads(line[6:]))
            raise AssertionError("stream ended")

        assert (await event())["type"] == "lobby_state"
        async with n.stream("GET", "/lobby/subscribe"):
            assert await event() == {"type": "join_lobby", "player": "newcomer", "name": "newcomer"}
        assert await event() == {"type": "leave_lobby", "player": "newcomer", "name": "newcomer"}


async def test_open_games_nobody_joins_expire_and_do_not_come_back(tmp_path: Path) -> None:
    app = await start(tmp_path)
    try:
        assert app.turbo is not None and app.store is not None
        async with http(app, "early") as c:
            gid = (await c.post("/lobby/new", json={"rules": "classic"})).json()
        await until(lambda: gid not in app.turbo.games)  # type: ignore[union-attr]
        assert app.guard.games_by_name.count("early") == 0  # its share came back
        await app.turbo.flush()
        assert await app.store.get_value(f"turbo:open:{gid}") is None
    finally:
        await app.stop()
    # a game that expired while the server was down is dropped at the start
    app = await start(tmp_path, limits=LIMITS.replace(game_expiry=3600.0))
    try:
        assert app.turbo is not None and app.store is not None
        async with http(app, "late") as c:
            gid = (await c.post("/lobby/new", json={"rules": "classic"})).json()
        await app.turbo.flush()
    finally:
        await app.stop()
    app = await start(tmp_path, limits=LIMITS.replace(game_expiry=1e-3))
    try:
        assert app.turbo is not None and gid not in app.turbo.games
        await app.turbo.flush()
        assert await app.store.get_value(f"turbo:open:{gid}") is None  # type: ignore[union-attr]
    finally:
        await app.stop()


async def test_idle_lobby_streams_are_ended(tmp_path: Path) -> None:
    app = await start(tmp_path, limits=LIMITS.replace(lobby_idle=0.3))
    try:
        async with http(app, "idler") as c, c.stream("GET", "/lobby/subscribe") as resp:
            async for _ in resp.aiter_lines():
                pass  # the stream ends by itself
        assert app.turbo is not None and "idler" not in app.turbo.subscribers
    finally:
        await app.stop()


# ---------------------------------------------------------------- Trend and Kierki
async def test_trend_connections_are_capped_and_a_flooder_is_closed_and_slowed(app: ServerApp) -> None:
    url = f"ws://127.0.0.1:{app.trend_port}/"
    held = [await websockets.connect(url, compression=None) for _ in range(4)]
    with pytest.raises(InvalidStatus) as e:
        async with websockets.connect(url, compression=None):
            pass
    assert e.value.response.status_code == 429 and e.value.response.headers["Retry-After"]
    for ws in held:
        await ws.close()
    await until(lambda: app.guard.connections.count("127.0.0.1") == 0)
    async with websockets.connect(url, compression=None) as ws:
        with pytest.raises(ConnectionClosed) as closed:
            for _ in range(1000):
                await ws.send('{"eventName": "stop_game"}')
            for _ in range(10):
                await ws.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
    assert app.guard.penalties.wait("127.0.0.1") > 0


async def test_kierki_connections_are_capped_per_address(app: ServerApp) -> None:
    conns = []
    for _ in range(4):
        s = socket.create_connection(("127.0.0.1", app.kierki_port), source_address=(ATTACKER, 0))
        conns.append(s)
    await until(lambda: app.guard.connections.count(ATTACKER) == 4)
    extra = socket.create_connection(("127.0.0.1", app.kierki_port), source_address=(ATTACKER, 0))
    extra.settimeout(30)
    got = await asyncio.to_thread(extra.recv, 100)
    assert got == b""  # closed at once
    for s in [*conns, extra]:
        s.close()


async def test_trend_players_waiting_for_a_table_are_capped_per_address(tmp_path: Path) -> None:
    app = await start(tmp_path, fill_wait=None, limits=LIMITS.replace(waiting_per_address=2))
    url = f"ws://127.0.0.1:{app.trend_port}/"

    def join(n: int) -> str:
        data = {"playerNumber": str(n), "playerName": f"w{n}", "lobbyCode": f"code-{n}"}
        return json.dumps({"eventName": "join", "data": data})

    try:
        waiting = [await websockets.connect(url, compression=None) for _ in range(2)]
        for i, ws in enumerate(waiting):
            await ws.send(join(i + 1))
        await until(lambda: app.guard.waiting.count("127.0.0.1") == 2)
        async with websockets.connect(url, compression=None) as third:
            await third.send(join(3))
            frame = json.loads(await asyncio.wait_for(third.recv(), 120))
            assert frame["eventName"] == "error" and "waiting for a table" in json.dumps(frame)
        await waiting[0].close()
        await until(lambda: app.guard.waiting.count("127.0.0.1") == 1)  # its share came back
        await waiting[1].close()
        await until(lambda: app.guard.waiting.count("127.0.0.1") == 0)
    finally:
        await app.stop()
