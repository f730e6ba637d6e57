"""Benchmark: N concurrent Turbo Hearts games of four HTTP players on loopback, and SSE fan-out.

The server is `moonshot serve` in its own process (HTTP only, games stored in a SQLite file as in
production, `--open-names` so the players need no session cookies). The players are lean HTTP/1.1
clients in another process: each has its game stream (`GET /game/subscribe/<id>`, SSE) and one
keep-alive connection for its POSTs, and acts on what its stream says (passes, empty charges,
the first legal card; it never claims). When a game ends its four players start another.

For each N it prints:
* POST -> event p50/p99: from sending `POST /game/play` until the player's own stream carries
  that `play` event (server work, the table, the translation, the fan-out, loopback);
* decisions/s and games/s (finished games plus the fraction played: decisions / ~230 a game);
* the server's CPU share.

Then the fan-out: one game played by four paced players and watched by `--spectators` (1,000)
more streams; it reports the server's memory per open stream (RSS growth / streams) and how long
one event takes to reach every spectator (p50/p99 of last arrival - first arrival).

    python benchmarks/http.py                       # N = 10, 100, 500 at 1 decision/s per table
    python benchmarks/http.py --tables 10 --think 0 # as fast as the players go

Targets (a 2-core machine): p99 < 50 ms at 100 games at one decision per second per
table; < 200 KB per open stream.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

SEATS = ["north", "east", "south", "west"]
WARMUP = 10.0  # seconds: every table dealing and passing at once is reported apart
SERVE_FLAGS = ("--open-names", "--log-level", "error")
# every client of this benchmark is at 127.0.0.1: the per-address shares are lifted (docs/server.md)
SERVE_FLAGS += ("--limit", "streams_per_address=1000000", "--limit", "lobby_per_address_per_s=1000000")
SERVE_FLAGS += ("--limit", "lobby_address_burst=1000000", "--limit", "open_games_per_address=1000000")
SERVE_FLAGS += ("--limit", "streams_opened_per_s=1000000", "--limit", "streams_opened_burst=1000000")
SERVE_FLAGS += ("--limit", "names_per_s=1000000", "--limit", "names_burst=1000000")
DECISIONS_PER_GAME = 230  # 4 hands x (52 plays + passes + charges), players who never charge


# ----------------------------------------------------------------- a lean HTTP/1.1 client
class Conn:
    """One keep-alive connection for JSON POSTs."""

    def __init__(self, host: str, port: int, name: str) -> None:
        self.host, self.port, self.name = host, port, name
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.lock = asyncio.Lock()

    async def post(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        async with self.lock:
            data = json.dumps(body).encode()
            request = (
                f"POST {path} HTTP/1.1\r\nHost: b\r\nCookie: name={self.name}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n".encode()
                + data
            )
            for _ in range(2):  # the server closes idle keep-alive connections: open a new one
                if self.writer is None:
                    self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
                assert self.reader is not None
                self.writer.write(request)
                status_line = await self.reader.readline()
                if status_line:
                    break
                self.writer.close()
                self.writer = None
            if not status_line:
                return 0, None  # the server is gone or keeps closing: counted as an error
            status = int(status_line.split()[1])
            length = 0
            while (line := await self.reader.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            payload = await self.reader.readexactly(length) if length else b""
            return status, json.loads(payload) if payload else None

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def open_stream(host: str, port: int, path: str, name: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection(host, port, limit=1 << 20)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: b\r\nCookie: name={name}\r\nAccept: text/event-stream\r\n\r\n".encode())
    while await reader.readline() not in (b"\r\n", b""):
        pass  # the response's headers
    return reader, writer


async def sse_events(reader: asyncio.StreamReader) -> Any:
    """Yield each event's JSON; the response is chunked, so chunk-size lines are skipped."""
    while True:
        line = await reader.readline()
        if not line:
            return
        if line.startswith(b"data:"):
            yield json.loads(line[5:])


# ----------------------------------------------------------------- players
@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)
    times: list[float] = field(default_factory=list)  # when each latency was measured
    decisions: int = 0
    games: int = 0
    errors: int = 0


async def player(host: str, port: int, name: str, gid: str, think: float, stats: Stats, stop: float) -> None:
    conn = Conn(host, port, name)
    reader, writer = await open_stream(host, port, f"/game/subscribe/{gid}", name)
    me = ""
    hand: set[str] = set()
    passed = False
    sent_at: dict[str, float] = {}
    rng = random.Random(name)
    pending: set[asyncio.Future[None]] = set()  # actions on their way (kept referenced)

    def later(path: str, body: dict[str, Any]) -> None:
        task = asyncio.ensure_future(act(path, body))
        pending.add(task)
        task.add_done_callback(pending.discard)

    async def act(path: str, body: dict[str, Any]) -> None:
        if think:
            await asyncio.sleep(rng.uniform(0.5, 1.5) * think)
        if path == "/game/play":
            sent_at[body["card"]] = time.perf_counter()
        try:
            status, _ = await conn.post(path, {"id": gid, **body})
        except (OSError, asyncio.IncompleteReadError):
            return  # the player has left (its run is over)
        if status == 200:
            stats.decisions += 1
        elif status != 409 and time.perf_counter() < stop:
            stats.errors += 1  # 0: the connection closed under the player
            if stats.errors <= 3:
                print(f"error: {path} -> {status}", file=sys.stderr)

    try:
        async for d in sse_events(reader):
            t = d["type"]
            if t == "sit":
                me = next(s for s in SEATS if d[s]["name"] == name)
            elif t == "deal":
                hand = set(d[me])
            elif t == "start_passing":
                passed = False
            elif t == "send_pass" and d["from"] == me:
                hand -= set(d["cards"])
            elif t == "recv_pass" and d["to"] == me:
                hand |= set(d["cards"])
            elif t == "play" and d["seat"] == me:
                hand.discard(d["card"])
                start = sent_at.pop(d["card"], None)
                if start is not None:
                    now = time.perf_counter()
                    stats.latencies.append(now - start)
                    stats.times.append(now)
            if time.perf_counter() > stop:
                return
            if t == "pass_status" and not d[f"{me}_done"] and not passed and len(hand) == 13:
                passed = True
                later("/game/pass", {"cards": sorted(hand)[:3]})
            elif t == "charge_status" and not d[f"{me}_done"] and d["next_charger"] in (None, me):
                later("/game/charge", {"cards": []})
            elif t == "play_status" and d["next_player"] == me and d["legal_plays"]:
                later("/game/play", {"card": d["legal_plays"][0]})
            elif t == "game_complete":
                if me == "north":
                    stats.games += 1
                return
    finally:
        writer.close()
        conn.close()


async def table_loop(host: str, port: int, index: int, think: float, stats: Stats, stop: float) -> None:
    names = [f"p{index}x{i}" for i in range(4)]
    conns = [Conn(host, port, n) for n in names]
    try:
        while time.perf_counter() < stop:
            _, gid = await conns[0].post("/lobby/new", {"rules": "classic"})
            for c in conns[1:]:
                await c.post("/lobby/join", {"id": gid, "rules": "classic"})
            # at the end of the run players stop acting, so a table may wait on one that left
            players = asyncio.gather(*(player(host, port, n, gid, think, stats, stop) for n in names))
            try:
                await asyncio.wait_for(players, max(1.0, stop - time.perf_counter()) + 5 * max(think, 1))
            except TimeoutError:
                return
    finally:
        for c in conns:
            c.close()


def run_players(host: str, port: int, first: int, tables: int, think: float, duration: float, out: Any) -> None:
    async def main() -> Stats:
        stats = Stats()
        stop = time.perf_counter() + duration
        await asyncio.gather(*(table_loop(host, port, first + i, think, stats, stop) for i in range(tables)))
        return stats

    started = time.perf_counter()
    s = asyncio.run(main())
    cpu = time.process_time()
    warm = [lat for lat, t in zip(s.latencies, s.times, strict=True) if t - started >= WARMUP]
    out.put((s.latencies, warm, s.decisions, s.games, s.errors, cpu))


# ----------------------------------------------------------------- the server
def start_server(db: str) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "moonshot.cli.main",
            "serve",
            "--no-sessions",
            "--http-port",
            "0",
            "--db",
            db,
            *SERVE_FLAGS,
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    for _ in range(5):
        line = proc.stdout.readline()
        m = re.search(r"http://[\d.]+:(\d+)/lobby", line)
        if m:
            return proc, int(m.group(1))
    raise RuntimeError("the server did not start")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def bench_games(port: int, pid: int, tables: int, think: float, duration: float, clients: int) -> dict[str, Any]:
    out: Any = mp.Queue()
    cpu0, t0 = cpu_seconds(pid), time.perf_counter()
    share = [tables // clients + (1 if i < tables % clients else 0) for i in range(clients)]
    procs = [
        mp.Process(target=run_players, args=("127.0.0.1", port, sum(share[:i]), n, think, duration, out))
        for i, n in enumerate(share)
        if n
    ]
    for p in procs:
        p.start()
    latencies: list[float] = []
    warmed: list[float] = []
    decisions = games = errors = 0
    client_cpu = 0.0
    for _ in procs:
        lat, warm, dec, gam, err, cpu = out.get()
        latencies += lat
        warmed += warm
        decisions, games, errors, client_cpu = decisions + dec, games + gam, errors + err, client_cpu + cpu
    for p in procs:
        p.join()
    wall = time.perf_counter() - t0
    cpu = cpu_seconds(pid) - cpu0
    return {
        "tables": tables,
        "think": think,
        "p50": pct(latencies, 0.5) * 1000,
        "p99": pct(latencies, 0.99) * 1000,
        "p99 warm": pct(warmed, 0.99) * 1000,
        "decisions/s": decisions / wall,
        "games/s": max(games, decisions / DECISIONS_PER_GAME) / wall,
        "server cpu": cpu / wall,
        "client cpu": client_cpu / wall,
        "errors": errors,
    }


async def fanout(port: int, pid: int, spectators: int, think: float, moves: int) -> dict[str, Any]:
    host = "127.0.0.1"
    conns = [Conn(host, port, f"f{i}") for i in range(4)]
    _, gid = await conns[0].post("/lobby/new", {"rules": "classic"})
    before = rss_kb(pid)
    streams = []
    for i in range(spectators):
        streams.append(await open_stream(host, port, f"/game/subscribe/{gid}", f"s{i}"))
    arrivals: dict[int, list[float]] = {}

    async def watch(reader: asyncio.StreamReader) -> None:
        n = 0
        async for _ in sse_events(reader):
            n += 1
            arrivals.setdefault(n, []).append(time.perf_counter())

    watchers = [asyncio.ensure_future(watch(r)) for r, _ in streams]
    await asyncio.sleep(1)
    rss_open = rss_kb(pid)
    for c in conns[1:]:
        await c.post("/lobby/join", {"id": gid, "rules": "classic"})
    stats = Stats()
    stop = time.perf_counter() + moves * think * 1.2 + 5
    await asyncio.gather(*(player(host, port, c.name, gid, think, stats, stop) for c in conns))
    await asyncio.sleep(1)
    for w in watchers:
        w.cancel()
    for _, w in streams:
        w.close()
    spreads = [max(ts) - min(ts) for n, ts in arrivals.items() if len(ts) == spectators and n > 3]
    return {
        "spectators": spectators,
        "kb/stream": (rss_open - before) / spectators,
        "spread p50": pct(spreads, 0.5) * 1000,
        "spread p99": pct(spreads, 0.99) * 1000,
        "events": len(spreads),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tables", type=int, nargs="+", default=[10, 100, 500])
    ap.add_argument("--think", type=float, default=1.0, help="seconds per decision per player (0: at once)")
    ap.add_argument("--duration", type=float, default=30.0, help="seconds per N")
    ap.add_argument("--spectators", type=int, default=1000)
    ap.add_argument("--clients", type=int, default=2, help="player processes")
    args = ap.parse_args()
    load = os.getloadavg()
    print(f"load average before: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        proc, port = start_server(f"sqlite+aiosqlite:///{tmp}/bench.db")
        try:
            rows = [bench_games(port, proc.pid, n, args.think, args.duration, args.clients) for n in args.tables]
            fan = asyncio.run(fanout(port, proc.pid, args.spectators, 0.05, 60)) if args.spectators else None
        finally:
            proc.terminate()
            proc.wait(30)
    print()
    print(
        "| tables | think s | POST->event p50 ms | p99 ms | p99 after warm-up | decisions/s | games/s "
        "| server CPU | clients CPU | errors |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['tables']} | {r['think']:g} | {r['p50']:.1f} | {r['p99']:.1f} | {r['p99 warm']:.1f} | "
            f"{r['decisions/s']:.0f} | "
            f"{r['games/s']:.2f} | {r['server cpu']:.0%} | {r['client cpu']:.0%} | {r['errors']} |"
        )
    hundred = [r for r in rows if r["tables"] == 100 and r["think"] >= 1]
    if hundred:
        r = hundred[0]
        verdict = "met" if r["p99 warm"] < 50 else "NOT met"
        print(
            f"\ntarget p99 < 50 ms at 100 games, 1 decision/s per table: {r['p99']:.1f} ms "
            f"({r['p99 warm']:.1f} ms after the {WARMUP:g} s warm-up) -> {verdict}"
        )
    if fan is not None:
        print(
            f"\nfan-out: {fan['spectators']} spectators of one game: {fan['kb/stream']:.1f} KB per open stream "
            f"(target < 200 KB: {'met' if fan['kb/stream'] < 200 else 'NOT met'}); one event reaches all of them "
            f"in p50 {fan['spread p50']:.1f} ms, p99 {fan['spread p99']:.1f} ms ({fan['events']} events)"
        )
    load = os.getloadavg()
    print(f"load average after: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")


if __name__ == "__main__":
    main()
