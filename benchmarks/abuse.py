"""Benchmark: what one hostile client costs everyone else.

Starts a real ``moonshot serve`` on loopback (free ports, a SQLite file in a temp dir, the default
per-client limits), seats 48 paced Sessions players (12 tables, a decision every ``--think``
seconds or so) from 127.0.0.1, and measures their decision round trip (``decided_move`` until the
server's ``move_report`` of that card) while nothing else happens, then under each attack below,
one after the other, each from one client at 127.0.0.2 (Linux routes all of 127/8 to lo, so the
attacker is another address, as it would be). For each phase it prints the players' p50/p99 over
the attack's own seconds (from its first move to its last, as the attacker's process timed them:
a window padded with the attacker's start-up or the quiet after it would dilute a short spike),
the p99 as a ratio of the quiet p99, the slowest round trip, the p99 of the ``--after-seconds``
(15 s) that follow, the server's CPU (its share of a core over the attack and over the seconds
after: what the attack costs the server, which other jobs on a shared machine do not change
much), the server's RSS (at the end of the phase, and its peak) and what the
attacker achieved (accepted, refused, dropped).

| attack | what the client does |
|---|---|
| ``sse-1000`` | opens 1,000 lobby SSE streams under 1,000 names |
| ``sse-300`` | opens 300 lobby SSE streams under 300 names |
| ``tables-300`` | sends 300 ``game_session_request`` s (``any``, distinct codes), waits for its tables, disconnects |
| ``colon`` | streams ``{"a":`` and then quote characters on Sessions as fast as it can, reconnecting when dropped |
| ``brace`` | streams ``{{{{…`` on Sessions as fast as it can, reconnecting when dropped |
| ``trend-1mb`` | sends 1,000,000-byte Trend frames (400 at most), reconnecting when closed |
| ``trend-tiny`` | sends 200,000 one-byte Trend frames, reconnecting when closed |
| ``lobby-new`` | makes 3,000 ``POST /lobby/new`` from 30 names |
| ``web-tables-100`` | starts 100 web games of three bots (``/lobby/new``, ``add_bot`` x3) under 8 names, 16 at once |
| ``chat`` | sends 3,000 chat lines of 400 characters to one game |
| ``bodies`` | sends fifty 10 MB chunked bodies |
| ``reviews-100`` | asks for 100 game reviews under 100 names, each a new job, asking again after each ``Retry-After`` |

For ``reviews-100`` (``GET /api/games/<id>/review``: 5 finished games, 4 seats, 5 budgets of about
1,000 worlds a decision) the store is given 5 finished games of four random bots before the server
starts (the players' own games do not finish in a short run). The reviews run in the server's review pool
(one worker process at nice 19, ``serve --review-workers 1``) and go on after the attack's window:
the "after" column is measured while the pool still works through the queue.

Every loop is bounded (counts and ``--attack-seconds``); the server and every process it started
are stopped at the end, and nothing leaves loopback.

``--via-nginx`` puts Debian's nginx in front, configured from the shipped
``deploy/nginx/moonshot.conf`` (rendered with free ports and a test CA's certificate by
``tests/e2e/nginx.py``, the proxy tests' helper), and starts the server with
``--trusted-proxy 127.0.0.1/32``: the attacker's HTTP and SSE requests go over TLS through nginx
(``X-Forwarded-For``), its Trend sockets through ``wss://…/trend/`` and its Sessions connection
through nginx's stream block (the PROXY protocol), so the server counts the attacker by the
address nginx names. The players still connect straight to the server, from 127.0.1.1 (127.0.0.1
is the trusted proxy's address: a connection from it must open with a PROXY header).

``--nice N`` (negative, as root) runs the server and the players at nice ``N`` and gives this
session's autogroup the same value, as ``benchmarks/server.py --nice`` does: on a machine shared
with other jobs they then get the CPU first. The attacker stays at nice 19.

    python benchmarks/abuse.py            # quiet 10 s, each attack 10 s, then 15 s after it
    python benchmarks/abuse.py --quick    # quiet 4 s, each attack 4 s, 3 s after (a smoke run)
    python benchmarks/abuse.py --only colon brace
    python benchmarks/abuse.py --only sse-1000 tables-300 --via-nginx --nice -10
    python benchmarks/abuse.py --only web-tables-100 --server-limit tables_per_s=1e6 --server-limit tables_burst=1e6

``--server-limit KEY=VALUE`` (repeatable) starts the server with that ``--limit``: the same attack
with a limit lifted, to see what the limit buys.

The "samples" column counts the players' round trips in the phase (and per second): the players,
the attacker and the server share the machine's cores, so a phase with few samples is one where
the players themselves got little CPU (an attacker process starting up, other jobs), not only one
where the server was slow.

Target (on a quiet machine): others' p99 under any single attacker <= 2x quiet, RSS bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing as mp
import os
import queue
import random
import re
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

from moonshot.protocols.sessions.codec import StreamDecoder, encode

HOST = "127.0.0.1"
ATTACKER = "127.0.0.2"  # each attack comes from its own address: 127.0.0.2, .3, ...
PLAYERS_VIA_PROXY = "127.0.1.1"  # the players' address with --via-nginx (127.0.0.1 is nginx's)
ROOT = Path(__file__).resolve().parents[1]
PLAYERS = 48
ABANDON_AFTER = 30.0  # the server's default abandon_after (docs/server.md)


# ----------------------------------------------------------------- the paced players
class Player(asyncio.Protocol):
    """One connection carrying four sessions at one table (a lobby code of its own): random
    legal cards after a think time; every round trip is recorded with its wall-clock time."""

    def __init__(self, code: str, think: float, rng: random.Random, out: list[tuple[float, float]]) -> None:
        self.code, self.think, self.rng, self.out = code, think, rng, out
        self.decoder = StreamDecoder(1 << 20)
        self.transport: asyncio.Transport | None = None
        self.seq: dict[int, int] = {}
        self.tag: dict[int, str] = {}
        self.sent_at: dict[int, float] = {}
        self.ended = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.join()

    def join(self) -> None:
        assert self.transport is not None
        msg = {"type": "game_session_request", "player_tag": "p", "game_type": "any", "seq_num": 0}
        self.transport.write(b"".join(encode({**msg, "lobby_code": self.code}) for _ in range(4)))

    def send(self, sid: int, msg: dict[str, Any]) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        msg["seq_num"] = self.seq[sid]
        msg["session_id"] = sid
        self.seq[sid] += 1
        if msg["type"] == "decided_move":
            self.sent_at[sid] = time.perf_counter()
        self.transport.write(encode(msg))

    def later(self, sid: int, msg: dict[str, Any]) -> None:
        asyncio.get_running_loop().call_later(self.think * (0.5 + self.rng.random()), self.send, sid, msg)

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        for m in self.decoder.feed(data):
            if not isinstance(m, dict) or not isinstance(m.get("session_id"), int):
                continue
            sid, t = m["session_id"], m.get("type")
            self.seq[sid] = m.get("seq_num", 0) + 1
            if t == "start_game":
                self.tag[sid] = next(x for x in m["player_order"] if x.endswith(f"({sid})"))
            elif t == "start_round" and m["pass_direction"] != "Keeper":
                self.later(sid, {"type": "donated_cards", "cards": list(m["cards"])[:3]})
            elif t == "move_request":
                self.later(sid, {"type": "decided_move", "card": self.rng.choice(m["legal_moves"])})
            elif t == "move_report" and m["player_tag"] == self.tag.get(sid):
                t0 = self.sent_at.pop(sid, None)
                if t0 is not None:
                    self.out.append((time.time(), now - t0))
            elif t == "end_game":
                self.ended += 1
                if self.ended % 4 == 0:
                    self.join()  # the table's game is over: the same four play again


async def _players(port: int, think: float, seconds: float, path: str, source: str | None) -> None:
    loop = asyncio.get_running_loop()
    out: list[tuple[float, float]] = []
    conns = []
    local = (source, 0) if source else None
    for i in range(PLAYERS // 4):
        _, proto = await loop.create_connection(
            lambda i=i: Player(f"bench-{i}-{os.getpid()}", think, random.Random(i), out), HOST, port, local_addr=local
        )
        conns.append(proto)
    end = loop.time() + seconds
    while loop.time() < end and os.getppid() != 1:
        await asyncio.sleep(0.5)
        with open(path + ".tmp", "w") as f:  # the main process reads it between phases
            json.dump(out, f)
        os.replace(path + ".tmp", path)
    for c in conns:
        if c.transport is not None:
            c.transport.close()


def players_process(port: int, think: float, seconds: float, path: str, source: str | None = None) -> None:
    asyncio.run(_players(port, think, seconds, path, source))


# ----------------------------------------------------------------- the attacks
class Tally(dict[str, int]):
    def add(self, key: str, n: int = 1) -> None:
        self[key] = self.get(key, 0) + n


SOURCE = [ATTACKER]  # this attack's address (set in its process)
# with --via-nginx (set in the attack's process): the TLS context for nginx's HTTPS port, that
# port, and the Trend path behind it
TLS: dict[str, Any] = {"context": None, "port": 0, "trend_path": "/"}


async def _open(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    if TLS["context"] is not None and port == TLS["port"]:
        return await asyncio.open_connection(
            HOST, port, local_addr=(SOURCE[0], 0), ssl=TLS["context"], server_hostname="localhost"
        )
    return await asyncio.open_connection(HOST, port, local_addr=(SOURCE[0], 0))


async def _status(reader: asyncio.StreamReader, timeout: float) -> int:
    line = await asyncio.wait_for(reader.readline(), timeout)
    parts = line.split()
    return int(parts[1]) if len(parts) >= 2 and parts[1].isdigit() else 0


async def attack_sse(ports: dict[str, int], seconds: float, n: int, tally: Tally) -> None:
    """``n`` lobby streams under ``n`` names, held (and read) until the time is up."""
    writers = []
    drains = []

    async def drain(reader: asyncio.StreamReader) -> None:
        with contextlib.suppress(Exception):
            while await reader.read(65536):
                pass

    end = time.monotonic() + seconds
    for i in range(n):
        if time.monotonic() > end:
            break
        try:
            r, w = await _open(ports["http"])
        except OSError:
            tally.add("connect_failed")
            continue
        w.write(f"GET /lobby/subscribe HTTP/1.1\r\nHost: x\r\nCookie: name=sse{i}\r\n\r\n".encode())
        try:
            status = await _status(r, 10)
        except (TimeoutError, OSError):
            status = 0
        tally.add(f"http_{status}")
        if status == 200:
            writers.append(w)
            drains.append(asyncio.ensure_future(drain(r)))
        else:
            w.close()
    await asyncio.sleep(max(0.0, end - time.monotonic()))
    for w in writers:
        w.close()
    for d in drains:
        d.cancel()


async def attack_tables(ports: dict[str, int], seconds: float, n: int, tally: Tally) -> None:
    """``n`` game_session_requests (``any``, distinct codes), wait for the tables, disconnect."""
    r, w = await _open(ports["sessions"])
    msg = {"type": "game_session_request", "player_tag": "x", "game_type": "any", "seq_num": 0}
    w.write(b"".join(encode({**msg, "lobby_code": f"flood-{i}"}) for i in range(n)))
    dec = StreamDecoder(1 << 20)
    end = time.monotonic() + min(seconds, 8.0)
    while time.monotonic() < end and tally.get("start_game", 0) < n:
        try:
            data = await asyncio.wait_for(r.read(65536), max(0.01, end - time.monotonic()))
        except TimeoutError:
            break
        if not data:
            break
        for m in dec.feed(data):
            if isinstance(m, dict):
                if m.get("type") == "game_session_response":
                    tally.add("accepted" if m.get("status") == "success" else "refused")
                elif m.get("type") == "start_game":
                    tally.add("start_game")
    w.close()


async def attack_stream(ports: dict[str, int], seconds: float, head: bytes, body: bytes, tally: Tally) -> None:
    """Stream ``head`` then ``body`` forever on Sessions, reconnecting whenever dropped."""
    end = time.monotonic() + seconds
    chunk = body * max(1, 65536 // len(body))
    while time.monotonic() < end:
        try:
            _r, w = await _open(ports["sessions"])
        except OSError:
            tally.add("connect_failed")
            await asyncio.sleep(0.01)
            continue
        tally.add("connections")
        try:
            w.write(head)
            while time.monotonic() < end:
                w.write(chunk)
                await asyncio.wait_for(w.drain(), max(0.01, end - time.monotonic()))
                tally.add("bytes", len(chunk))
        except (OSError, TimeoutError):
            tally.add("dropped")
        finally:
            w.close()


def _ws_frame(payload: bytes) -> bytes:
    """A masked client text frame (zero mask: the payload as is)."""
    n = len(payload)
    if n < 126:
        head = bytes([0x81, 0x80 | n])
    elif n < 65536:
        head = bytes([0x81, 0x80 | 126]) + n.to_bytes(2, "big")
    else:
        head = bytes([0x81, 0x80 | 127]) + n.to_bytes(8, "big")
    return head + b"\0\0\0\0" + payload


async def _ws_open(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
    r, w = await _open(port)
    w.write(
        f"GET {TLS['trend_path']} HTTP/1.1\r\n".encode() + b"Host: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    status = await _status(r, 10)
    while (await asyncio.wait_for(r.readline(), 10)) not in (b"\r\n", b""):
        pass
    if status != 101:
        w.close()
        return None
    return r, w


async def attack_trend(ports: dict[str, int], seconds: float, size: int, count: int, tally: Tally) -> None:
    """``count`` Trend frames of ``size`` bytes as fast as possible, reconnecting when closed."""
    frame = _ws_frame(b"x" * size)
    batch = frame * max(1, 65536 // len(frame))
    per_batch = max(1, 65536 // len(frame))
    end = time.monotonic() + seconds
    sent = 0
    while sent < count and time.monotonic() < end:
        try:
            opened = await asyncio.wait_for(_ws_open(ports["trend"]), max(0.01, end - time.monotonic()))
        except (OSError, TimeoutError):
            tally.add("connect_failed")
            continue
        if opened is None:
            tally.add("refused")
            continue
        _r, w = opened
        tally.add("connections")
        try:
            while sent < count and time.monotonic() < end:
                w.write(batch if per_batch > 1 else frame)
                await asyncio.wait_for(w.drain(), max(0.01, end - time.monotonic()))
                sent += per_batch
                tally.add("frames", per_batch)
        except (OSError, TimeoutError):
            tally.add("closed")
        finally:
            w.close()


COOKIES: dict[str, str] = {}  # name -> its session cookie: the attacker keeps its names, as a browser would


async def _post(port: int, path: str, name: str, body: bytes) -> tuple[int, bytes]:
    r, w = await _open(port)
    cookie = f"name={name}" + (f"; moonshot_session={COOKIES[name]}" if name in COOKIES else "")
    try:
        w.write(
            f"POST {path} HTTP/1.1\r\nHost: x\r\nCookie: {cookie}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        raw = await asyncio.wait_for(r.read(), 10)
    finally:
        w.close()
    m = re.search(rb"set-cookie: moonshot_session=([^;\r]+)", raw, re.IGNORECASE)
    if m:
        COOKIES[name] = m.group(1).decode()
    parts = raw.split(b" ", 2)
    return (int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0), raw


async def attack_posts(
    ports: dict[str, int],
    seconds: float,
    n: int,
    names: int,
    path: str,
    body: Callable[[int], bytes],
    tally: Tally,
    prefix: str = "poster",
) -> None:
    end = time.monotonic() + seconds
    sem = asyncio.Semaphore(16)

    async def one(i: int) -> None:
        async with sem:
            if time.monotonic() > end:
                return
            try:
                status, _ = await _post(ports["http"], path, f"{prefix}{i % names}", body(i))
                tally.add(f"http_{status}")
            except (OSError, TimeoutError):
                tally.add("failed")

    await asyncio.gather(*(one(i) for i in range(n)))


async def attack_chat(ports: dict[str, int], seconds: float, n: int, tally: Tally) -> None:
    """One game made under one name, then ``n`` chat lines of 400 characters to it."""
    _, raw = await _post(ports["http"], "/lobby/new", "chatter0", b'{"rules":"classic"}')
    m = re.search(rb'"([0-9a-f-]{36})"', raw)
    if not m:
        tally.add("no_game")
        return
    gid = m.group(1).decode()
    line = "x" * 400
    await attack_posts(
        ports,
        seconds,
        n,
        1,
        "/game/chat",
        lambda i: json.dumps({"id": gid, "message": line}).encode(),
        tally,
        prefix="chatter",
    )


async def attack_web_tables(ports: dict[str, int], seconds: float, n: int, names: int, tally: Tally) -> None:
    """``n`` web games, each made and filled with three bots (its start), ``names`` names, 16 at once."""
    end = time.monotonic() + seconds
    sem = asyncio.Semaphore(16)

    async def one(i: int) -> None:
        async with sem:
            if time.monotonic() > end:
                return
            name = f"tabler{i % names}"
            try:
                status, raw = await _post(ports["http"], "/lobby/new", name, b'{"variant":"standard"}')
                m = re.search(rb'"([0-9a-f-]{36})"', raw)
                if status != 200 or not m:
                    tally.add(f"new_{status}")
                    return
                body = json.dumps({"id": m.group(1).decode()}).encode()
                for _ in range(3):
                    status, raw = await _post(ports["http"], "/lobby/add_bot", name, body)
                    if status != 200:
                        tally.add("refused_too_many_tables" if b"too_many_tables" in raw else f"bot_{status}")
                        return
                tally.add("started")
            except (OSError, TimeoutError):
                tally.add("failed")

    await asyncio.gather(*(one(i) for i in range(n)))


async def attack_bodies(ports: dict[str, int], seconds: float, n: int, size: int, tally: Tally) -> None:
    """``n`` chunked bodies of ``size`` bytes; counts what was sent before the server answered."""
    end = time.monotonic() + seconds
    chunk = b"%x\r\n%s\r\n" % (65536, b"x" * 65536)
    for _ in range(n):
        if time.monotonic() > end:
            break
        r, w = await _open(ports["http"])
        w.write(
            b"POST /lobby/new HTTP/1.1\r\nHost: x\r\nCookie: name=bodies\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        status_task = asyncio.ensure_future(_status(r, max(0.1, end - time.monotonic())))
        sent = 0
        try:
            while sent < size and not status_task.done():
                w.write(chunk)
                await w.drain()
                sent += 65536
                await asyncio.wait([status_task], timeout=0.001)  # answered already?
            if not status_task.done():
                w.write(b"0\r\n\r\n")
                await w.drain()
            tally.add(f"http_{await status_task}")
        except (OSError, TimeoutError):
            tally.add("closed_unanswered")
        finally:
            status_task.cancel()
            w.close()
        tally.add("kb_written", sent // 1024)  # by the client, before it saw the answer


REVIEW_GAMES_ENV = "MOONSHOT_BENCH_REVIEW_GAMES"  # the stored games' ids, for the attack's process
REVIEW_GAMES = 5


def stored_games(db: str, n: int) -> list[str]:
    """Finished standard games of four random bots, written to the store before the server starts
    (the reviews-100 attack asks for their reviews)."""
    from moonshot.bots.registry import make_bot
    from moonshot.core.variants import find_variant
    from moonshot.runtime.table import BotSeat, Table
    from moonshot.store import Store, StoreRecorder

    async def run() -> list[str]:
        store = await Store.open(db)
        recorder = StoreRecorder(store, batch_delay=0)
        recorder.start()
        ids = []
        for i in range(n):
            seats = [BotSeat(make_bot("random"), random.Random(4 * i + s), name=f"bot{s}") for s in range(4)]
            table = Table(
                find_variant("standard"),
                seats,  # type: ignore[arg-type]
                seed=1000 + i,
                table_id=f"bench-review-{i}",
                recorder=recorder,
                meta={"protocol": "bench"},
            )
            table.start()
            await table.done
            ids.append(table.id)
        await recorder.close()
        await store.close()
        return ids

    return asyncio.run(run())


async def _get(port: int, path: str, name: str) -> tuple[int, float]:
    """A GET under ``name``: its status and the ``Retry-After`` it gave (1 when none)."""
    r, w = await _open(port)
    cookie = f"name={name}" + (f"; moonshot_session={COOKIES[name]}" if name in COOKIES else "")
    try:
        w.write(f"GET {path} HTTP/1.1\r\nHost: x\r\nCookie: {cookie}\r\nConnection: close\r\n\r\n".encode())
        raw = await asyncio.wait_for(r.read(), 10)
    finally:
        w.close()
    m = re.search(rb"set-cookie: moonshot_session=([^;\r]+)", raw, re.IGNORECASE)
    if m:
        COOKIES[name] = m.group(1).decode()
    parts = raw.split(b" ", 2)
    retry = re.search(rb"retry-after: (\d+)", raw, re.IGNORECASE)
    return (int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0), float(retry.group(1)) if retry else 1.0


async def attack_reviews(ports: dict[str, int], seconds: float, n: int, tally: Tally) -> None:
    """``n`` reviews asked under ``n`` names (each a new job), each asked again after the
    ``Retry-After`` of its last answer (a 202's or a 429's) until the time is up."""
    games = os.environ.get(REVIEW_GAMES_ENV, "").split(",")
    if not games or not games[0]:
        tally.add("no_games")
        return
    end = time.monotonic() + seconds

    async def one(i: int) -> None:
        gid = games[i % len(games)]
        path = f"/api/games/{gid}/review?seat={i % 4}&simulations={1000 + i // (4 * len(games))}"
        while time.monotonic() < end:
            try:
                status, retry = await _get(ports["http"], path, f"reviewer{i}")
            except (OSError, TimeoutError):
                tally.add("failed")
                await asyncio.sleep(1.0)
                continue
            tally.add(f"http_{status}")
            if status == 200:
                return
            await asyncio.sleep(retry)

    await asyncio.gather(*(one(i) for i in range(n)))


ATTACKS: dict[str, Callable[[dict[str, int], float, Tally], Coroutine[Any, Any, None]]] = {
    "sse-1000": lambda p, s, t: attack_sse(p, s, 1000, t),
    "sse-300": lambda p, s, t: attack_sse(p, s, 300, t),
    "tables-300": lambda p, s, t: attack_tables(p, s, 300, t),
    "colon": lambda p, s, t: attack_stream(p, s, b'{"a":', b'"', t),
    "brace": lambda p, s, t: attack_stream(p, s, b"", b"{", t),
    "trend-1mb": lambda p, s, t: attack_trend(p, s, 1_000_000, 400, t),
    "trend-tiny": lambda p, s, t: attack_trend(p, s, 1, 200_000, t),
    "lobby-new": lambda p, s, t: attack_posts(p, s, 3000, 30, "/lobby/new", lambda i: b'{"rules":"classic"}', t),
    "web-tables-100": lambda p, s, t: attack_web_tables(p, s, 100, 8, t),
    "chat": lambda p, s, t: attack_chat(p, s, 3000, t),
    "bodies": lambda p, s, t: attack_bodies(p, s, 50, 10_000_000, t),
    "reviews-100": lambda p, s, t: attack_reviews(p, s, 100, t),
}


def attack_process(
    name: str, ports: dict[str, int], seconds: float, out: Any, source: str = ATTACKER, ca_file: str | None = None
) -> None:
    """Runs one attack; reports its tally and its own window: the wall-clock times its first
    move began and its last ended (the process's start-up is not in it).

    The attacker runs at nice 19: on a machine it shares with the server and the players, its own
    CPU (a Python process writing megabytes a second) would otherwise be charged to the others'
    round trips; what it sends still reaches the server, whose cost is what is measured."""
    SOURCE[0] = source
    if ca_file is not None:  # through nginx: HTTP, SSE and Trend over TLS on its one port
        TLS.update(context=ssl.create_default_context(cafile=ca_file), port=ports["http"], trend_path="/trend/")
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, 0, 19)
    tally = Tally()
    began = time.time()
    try:
        asyncio.run(asyncio.wait_for(ATTACKS[name](ports, seconds, tally), seconds + 30))
    except Exception as e:  # the attack's own failure is reported, never hidden
        tally.add(f"error_{type(e).__name__}")
    out.put({"tally": dict(tally), "window": (began, time.time())})


# ----------------------------------------------------------------- the server
def start_server(
    tmp: str, trusted_proxy: str | None = None, limits: Sequence[str] = ()
) -> tuple[subprocess.Popen[str], dict[str, int]]:
    cmd = [sys.executable, "-m", "moonshot.cli.main", "serve", "--sessions-port", "0", "--http-port", "0"]
    cmd += ["--trend-port", "0", "--db", f"sqlite:///{tmp}/games.db", "--bot", "random", "--fill-wait", "1"]
    cmd += ["--log-level", "warning", "--move-timeout", "30"]
    for limit in limits:
        cmd += ["--limit", limit]
    if trusted_proxy is not None:
        cmd += ["--trusted-proxy", trusted_proxy]
    log = open(os.path.join(tmp, "server.log"), "w")  # noqa: SIM115 (closed with the process)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True)
    ports: dict[str, int] = {}
    assert proc.stdout is not None
    for line in proc.stdout:
        m = re.search(r"(Sessions|Trend|HTTP).*?(?:tcp|ws|http)://[\d.]+:(\d+)", line)
        if m:
            ports[{"Sessions": "sessions", "Trend": "trend", "HTTP": "http"}[m.group(1)]] = int(m.group(2))
        if "restored from the store" in line:
            break
    if set(ports) != {"sessions", "trend", "http"}:
        proc.kill()
        raise SystemExit(f"the server did not start: {ports}; see {tmp}/server.log")
    return proc, ports


def cpu_s(pid: int) -> float:
    """The process's CPU time so far (user + system), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def pct(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100)[q - 1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="short windows: a smoke run")
    ap.add_argument("--only", nargs="*", choices=list(ATTACKS), help="these attacks only")
    ap.add_argument("--think", type=float, default=0.2, help="players' seconds per decision (about)")
    ap.add_argument(
        "--via-nginx",
        action="store_true",
        help="the attacker through Debian's nginx with deploy/nginx/moonshot.conf (TLS, the PROXY protocol)",
    )
    ap.add_argument(
        "--nice",
        type=int,
        default=0,
        help="nice value of the server and the players and of this session's autogroup (negative, as root)",
    )
    ap.add_argument(
        "--server-limit",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="start the server with this --limit (repeatable): an attack with a limit lifted",
    )
    ap.add_argument("--quiet-seconds", type=float, default=None)
    ap.add_argument("--attack-seconds", type=float, default=None)
    ap.add_argument(
        "--after-seconds",
        type=float,
        default=None,
        help="window measured after each attack ends (default 15 s, 3 s with --quick)",
    )
    args = ap.parse_args()
    with contextlib.ExitStack() as stack:
        if args.nice:
            sys.path.insert(0, str(ROOT / "benchmarks"))
            from server import autogroup_nice  # benchmarks/server.py's: one way to do it

            stack.enter_context(autogroup_nice(args.nice))
            os.setpriority(os.PRIO_PROCESS, 0, args.nice)  # the server and the players inherit it
        run(args)


def run(args: argparse.Namespace) -> None:
    quiet_s = args.quiet_seconds or (4.0 if args.quick else 10.0)
    attack_s = args.attack_seconds or (4.0 if args.quick else 10.0)
    after_s = args.after_seconds or (3.0 if args.quick else 15.0)
    names = args.only or list(ATTACKS)
    with socket.socket() as s:  # the attacker's address must route to lo
        s.bind((ATTACKER, 0))
    total = 2.0 + quiet_s + len(names) * (attack_s + after_s + 2.0) + 30 + ABANDON_AFTER
    with tempfile.TemporaryDirectory() as tmp:
        if "reviews-100" in names:
            os.environ[REVIEW_GAMES_ENV] = ",".join(stored_games(f"sqlite+aiosqlite:///{tmp}/games.db", REVIEW_GAMES))
        proc, ports = start_server(tmp, "127.0.0.1/32" if args.via_nginx else None, args.server_limit)
        front: Any = None
        attack_ports, ca_file, players_from = ports, None, None
        if args.via_nginx:
            sys.path.insert(0, str(ROOT / "tests"))
            from e2e import nginx  # type: ignore[import-not-found]  # the proxy tests' helper

            why = nginx.missing()
            if why is not None:
                proc.kill()
                raise SystemExit(f"--via-nginx: {why}")
            front = nginx.start(Path(tmp), ports["http"], ports["trend"], ports["sessions"])
            front.wait()
            attack_ports = {"http": front.https, "trend": front.https, "sessions": front.sessions}
            ca_file, players_from = str(front.ca_file), PLAYERS_VIA_PROXY
        ctx = mp.get_context("spawn")
        lat_path = os.path.join(tmp, "latencies.json")
        players = ctx.Process(
            target=players_process, args=(ports["sessions"], args.think, total + 60, lat_path, players_from)
        )
        players.start()
        rows: list[dict[str, Any]] = []
        rss_end = 0.0
        try:

            def progress(i: int, what: str) -> None:
                print(
                    f"[{i}/{len(names) + 1}] {what} ({time.strftime('%H:%M:%S')}, load {os.getloadavg()[0]:.1f})",
                    file=sys.stderr,
                    flush=True,
                )

            time.sleep(3.0)  # tables formed, first hands dealt
            rss0 = rss_mb(proc.pid)
            progress(0, f"quiet for {quiet_s:.0f} s")
            t0, c0 = time.time(), cpu_s(proc.pid)
            time.sleep(quiet_s)
            cpu = (cpu_s(proc.pid) - c0) / (time.time() - t0)
            rows.append(
                {"phase": "quiet", "window": (t0, time.time()), "rss": rss_mb(proc.pid), "peak": 0.0, "cpu": cpu}
            )
            for i, name in enumerate(names, 1):
                progress(i, f"{name} for {attack_s:.0f} s, then {after_s:.0f} s after")
                q: Any = ctx.Queue()
                source = f"127.0.0.{1 + i}"  # a fresh address: no penalty left by the attack before
                atk = ctx.Process(target=attack_process, args=(name, attack_ports, attack_s, q, source, ca_file))
                t0, c0 = time.time(), cpu_s(proc.pid)
                atk.start()
                peak = 0.0
                while atk.is_alive() and time.time() - t0 < attack_s + 40:
                    peak = max(peak, rss_mb(proc.pid))
                    atk.join(0.2)
                if atk.is_alive():
                    atk.kill()
                try:
                    got = q.get(timeout=5)
                except queue.Empty:  # the attack's process died without a word
                    got = {"tally": {"error": 1}, "window": (t0, time.time())}
                tally = got["tally"]
                a0, a1 = got["window"]  # the attack's own seconds, as its process timed them
                t1, c1 = time.time(), cpu_s(proc.pid)
                time.sleep(max(0.0, a1 + after_s - time.time()))
                t2, c2 = time.time(), cpu_s(proc.pid)
                peak = max(peak, rss_mb(proc.pid))
                rows.append(
                    {
                        "phase": name,
                        "window": (a0, a1),
                        "after": (a1, a1 + after_s),
                        "tally": tally,
                        "rss": rss_mb(proc.pid),
                        "peak": peak,
                        # the server's CPU (share of one core) from the attacker's start to its
                        # end, and over the seconds after
                        "cpu": (c1 - c0) / max(0.1, t1 - t0),
                        "cpu_after": (c2 - c1) / max(0.1, t2 - t1),
                    }
                )
            left = [r["after"][1] for r in rows if r["phase"] == "tables-300"]
            if left:  # its tables end ABANDON_AFTER s after it left: wait for that, to count them
                wait = left[0] + ABANDON_AFTER + 3 - time.time()
                if wait > 0:
                    progress(len(names) + 1, f"waiting {wait:.0f} s for the tables-300 tables to be abandoned")
                    time.sleep(wait)
            rss_end = rss_mb(proc.pid)
        finally:
            players.kill()
            if front is not None:
                front.stop()
            proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(15)
            if proc.poll() is None:
                proc.kill()
        with open(lat_path) as f:
            lat = [(float(at), float(x)) for at, x in json.load(f)]
        with open(os.path.join(tmp, "server.log")) as f:
            abandoned = sum("table_abandoned" in line for line in f)
    quiet = [x for at, x in lat if rows[0]["window"][0] <= at <= rows[0]["window"][1]]
    q99 = pct(quiet, 99)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"\n{when}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; RSS at start {rss0:.0f} MB; ", end="")
    print(f"quiet {quiet_s:.0f} s, attacks {attack_s:.0f} s each, after each {after_s:.0f} s", end="")
    print(f"; nice {args.nice}" + ("; the attacker through nginx" if args.via_nginx else ""))
    print("p50/p99 over the attack's own seconds (from its first move to its last, as its process timed them);")
    print(f"after: the {after_s:.0f} s that follow it")
    print(
        "| phase | samples (/s) | p50 ms | p99 ms | p99 / quiet | max ms | after: p99 ms | server CPU (after) ", end=""
    )
    print("| RSS MB (peak) | the attacker |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        w0, w1 = r["window"]
        xs = [x for at, x in lat if w0 <= at <= w1]
        after = [x for at, x in lat if r.get("after") and r["after"][0] <= at <= r["after"][1]]
        p99 = pct(xs, 99)
        tally = ", ".join(f"{k} {v}" for k, v in sorted(r.get("tally", {}).items()))
        after_s_txt = f"{pct(after, 99) * 1e3:.1f}" if after else "-"
        rate = len(xs) / max(0.1, w1 - w0)
        worst = max(xs) * 1e3 if xs else float("nan")
        cpu = f"{100 * r['cpu']:.0f}%" + (f" ({100 * r['cpu_after']:.0f}%)" if "cpu_after" in r else "")
        print(
            f"| {r['phase']} | {len(xs)} ({rate:.0f}) | {pct(xs, 50) * 1e3:.1f} | {p99 * 1e3:.1f} | {p99 / q99:.2f} "
            f"| {worst:.0f} | {after_s_txt} | {cpu} | {r['rss']:.0f} ({r['peak']:.0f}) | {tally} |"
        )
    print(f"\ntables abandoned by the server: {abandoned}; RSS at the end {rss_end:.0f} MB")


if __name__ == "__main__":
    main()
