"""Benchmark: N concurrent bot games through the Sessions protocol on loopback.

The server is `moonshot serve` in its own process (pinned to one CPU when the machine allows it,
games stored in a SQLite file as in production); the players are lean protocol clients in
other processes (random legal cards, 10 tables per connection). For each N it prints:

* games/s and messages/s (both directions) while N tables play at once;
* p50/p99 decision round trip: from the client's ``decided_move`` until the server's
  ``move_report`` of that card comes back (server work + loopback);
* memory per idle table: the server's RSS growth with N tables (4 sessions each) waiting for
  passes, divided by N.

Targets (the issue): 1,000 concurrent tables in one process on one core, p99 < 50 ms,
< 100 KB per idle table. N = 1,000 full games take minutes, so every run is capped by
``--duration`` seconds; games/s then counts finished games plus the fraction played
(decisions made / decisions per game).

    python benchmarks/server.py                 # N = 10, 100, 1000, players answer at once
    python benchmarks/server.py --tables 1000 --think 1 0.5   # paced players (seconds per decision)

With ``--think 0`` the clients answer as fast as they can, and on a small machine they, not the
server, are the limit (the "server CPU" column shows how busy the server was). ``--think T``
models players who take about T seconds per decision: a table then makes about 1/T decisions
a second (one seat acts at a time), N/T in all, and the round trip shows how quickly the server
answers with that many live tables. "CPU µs/decision" is the server's own CPU time per decision
(all its messages included): one core's capacity is 10^6 / that, whatever else the machine runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing as mp
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

from moonshot.protocols.sessions.codec import StreamDecoder, encode

TABLES_PER_CONNECTION = 10
DECISIONS_PER_GAME = 700  # random players: ~13 deals x (52 plays + 3-4 passes) until a total passes 100


# ----------------------------------------------------------------- the lean client
@dataclass
class Stats:
    received: int = 0
    sent: int = 0
    games: int = 0
    decisions: int = 0
    latencies: list[float] = field(default_factory=list)
    started: int = 0  # sessions that got their first hand


class BenchConnection(asyncio.Protocol):
    def __init__(self, stats: Stats, codes: list[str], silent: bool, rng: random.Random, think: float = 0.0) -> None:
        self.stats = stats
        self.think = think
        self.codes = codes
        self.silent = silent
        self.rng = rng
        self.decoder = StreamDecoder(1 << 20)
        self.transport: asyncio.Transport | None = None
        self.seq: dict[int, int] = {}
        self.tag: dict[int, str] = {}
        self.hand: dict[int, list[str]] = {}
        self.sent_at: dict[int, float] = {}
        self.done = asyncio.get_running_loop().create_future()
        self.open = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        out = [encode({"type": "connection_request"})]
        for code in self.codes:
            for _ in range(4):
                out.append(
                    encode(
                        {
                            "type": "game_session_request",
                            "player_tag": "b",
                            "game_type": "any",
                            "seq_num": 0,
                            "lobby_code": code,
                        }
                    )
                )
        self.open = 4 * len(self.codes)
        transport.write(b"".join(out))
        self.stats.sent += len(out)

    def answer(self, sid: int, msg: dict[str, Any]) -> None:
        if self.think > 0:  # a paced player: think (0.5-1.5 x think), then answer
            delay = self.think * (0.5 + self.rng.random())
            asyncio.get_running_loop().call_later(delay, self._answer_now, sid, msg)
        else:
            self._answer_now(sid, msg)

    def _answer_now(self, sid: int, msg: dict[str, Any]) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        if msg["type"] == "decided_move":
            self.sent_at[sid] = time.perf_counter()
        self.send(sid, msg)
        self.stats.decisions += 1

    def send(self, sid: int, msg: dict[str, Any]) -> None:
        msg["seq_num"] = self.seq[sid]
        msg["session_id"] = sid
        self.seq[sid] += 1
        assert self.transport is not None
        self.transport.write(encode(msg))
        self.stats.sent += 1

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        for m in self.decoder.feed(data):
            if not isinstance(m, dict):
                continue
            self.stats.received += 1
            t = m.get("type")
            sid = m.get("session_id")
            if not isinstance(sid, int):
                continue
            self.seq[sid] = m.get("seq_num", 0) + 1
            if t == "start_game":
                self.tag[sid] = next(x for x in m["player_order"] if x.endswith(f"({sid})"))
            elif t == "start_round":
                if m["round_index"] == 0:
                    self.stats.started += 1
                self.hand[sid] = list(m["cards"])
                if not self.silent and m["pass_direction"] != "Keeper":
                    self.answer(sid, {"type": "donated_cards", "cards": self.hand[sid][:3]})
            elif t == "move_request" and not self.silent:
                self.answer(sid, {"type": "decided_move", "card": self.rng.choice(m["legal_moves"])})
            elif t == "move_report" and m["player_tag"] == self.tag.get(sid):
                t0 = self.sent_at.pop(sid, None)
                if t0 is not None:
                    self.stats.latencies.append(now - t0)
            elif t == "end_game":
                self.stats.games += 1
                self.open -= 1
                if self.open == 0 and not self.done.done():
                    self.done.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(None)


async def _clients(port: int, codes: list[str], silent: bool, duration: float, stats: Stats, think: float) -> None:
    loop = asyncio.get_running_loop()
    conns = []
    for i in range(0, len(codes), TABLES_PER_CONNECTION):
        _, proto = await loop.create_connection(
            lambda i=i: BenchConnection(stats, codes[i : i + TABLES_PER_CONNECTION], silent, random.Random(i), think),
            "127.0.0.1",
            port,
        )
        conns.append(proto)
    if silent:
        end = loop.time() + duration
        while stats.started < 4 * len(codes) and loop.time() < end:
            await asyncio.sleep(0.05)
        return
    await asyncio.wait([c.done for c in conns], timeout=duration)
    for c in conns:
        if c.transport is not None:
            c.transport.close()


def client_process(
    port: int, codes: list[str], silent: bool, duration: float, out: Any, go: Any, think: float = 0.0
) -> None:
    stats = Stats()
    go.wait()
    t0 = time.perf_counter()
    asyncio.run(_clients(port, codes, silent, duration, stats, think))
    elapsed = time.perf_counter() - t0
    out.put(
        {
            "received": stats.received,
            "sent": stats.sent,
            "games": stats.games,
            "decisions": stats.decisions,
            "latencies": stats.latencies,
            "started": stats.started,
            "elapsed": elapsed,
        }
    )
    if silent:
        time.sleep(duration)  # keep the idle tables' connections open while memory is read


# ----------------------------------------------------------------- the server process
def start_server(db: str, move_timeout: float, cpu: int | None) -> tuple[subprocess.Popen[str], int]:
    cmd = [sys.executable, "-m", "moonshot.cli", "serve", "--sessions-port", "0", "--log-level", "error"]
    cmd += ["--fill-wait", "-1", "--move-timeout", str(move_timeout), "--bot", "random"]
    cmd += ["--no-db"] if db == "none" else ["--db", db]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    m = re.search(r"tcp://[\d.]+:(\d+)", proc.stdout.readline())
    if not m:
        proc.kill()
        raise SystemExit("the server did not start")
    if cpu is not None and hasattr(os, "sched_setaffinity"):
        with contextlib.suppress(OSError):
            os.sched_setaffinity(proc.pid, {cpu})
    return proc, int(m.group(1))


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


def run_clients(
    port: int, n: int, silent: bool, duration: float, procs: int, think: float = 0.0
) -> list[dict[str, Any]]:
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    go = ctx.Event()
    codes = [f"bench-{'idle' if silent else 'play'}-{i}" for i in range(n)]
    groups = [codes[i::procs] for i in range(procs) if codes[i::procs]]
    ps = [ctx.Process(target=client_process, args=(port, g, silent, duration, out, go, think)) for g in groups]
    for p in ps:
        p.start()
    go.set()
    results = [out.get() for _ in ps]
    if not silent:
        for p in ps:
            p.join()
    else:
        results.append({"_procs": ps})
    return results


def measure(n: int, duration: float, procs: int, db: str, cpu: int | None, think: float = 0.0) -> dict[str, Any]:
    row: dict[str, Any] = {"tables": n, "think": think}
    # memory per idle table: N tables waiting for passes from silent clients
    server, port = start_server(db, 3600, cpu)
    try:
        time.sleep(0.5)
        base = rss_kb(server.pid)
        res = run_clients(port, n, True, max(10.0, n / 20), procs)
        started = sum(r["started"] for r in res if "started" in r)
        time.sleep(0.5)
        grown = rss_kb(server.pid) - base
        row["idle_sessions_started"] = started
        row["kb_per_idle_table"] = grown / n
        for r in res:
            for p in r.get("_procs", []):
                p.terminate()
    finally:
        server.kill()
        server.wait()
    # play: N tables at once
    server, port = start_server(db, 30, cpu)
    try:
        time.sleep(0.5)
        cpu0 = cpu_seconds(server.pid)
        res = run_clients(port, n, False, duration, procs, think)
        cpu1 = cpu_seconds(server.pid)
        peak = rss_kb(server.pid)
    finally:
        server.kill()
        server.wait()
    elapsed = max(r["elapsed"] for r in res)
    lat = sorted(x for r in res for x in r["latencies"])
    games_done = sum(r["games"] for r in res) / 4  # four sessions per game
    decisions = sum(r["decisions"] for r in res)
    msgs = sum(r["received"] + r["sent"] for r in res)
    row.update(
        {
            "elapsed_s": elapsed,
            "games_finished": games_done,
            "games_per_s": (games_done if games_done >= n else decisions / DECISIONS_PER_GAME) / elapsed,
            "messages_per_s": msgs / elapsed,
            "decisions_per_s": decisions / elapsed,
            "p50_ms": 1000 * statistics.median(lat) if lat else float("nan"),
            "p99_ms": 1000 * lat[min(len(lat) - 1, int(0.99 * len(lat)))] if lat else float("nan"),
            "server_cpu_share": (cpu1 - cpu0) / elapsed,
            "server_cpu_us_per_decision": 1e6 * (cpu1 - cpu0) / max(1, decisions),
            "server_rss_mb": peak / 1024,
        }
    )
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tables", type=int, nargs="+", default=[10, 100, 1000])
    ap.add_argument("--duration", type=float, default=60.0, help="cap on each play phase (seconds)")
    ap.add_argument("--client-procs", type=int, default=2)
    ap.add_argument("--db", default=None, help="store URL, or 'none' (default: a SQLite file in a temp dir)")
    ap.add_argument("--server-cpu", type=int, default=0, help="CPU to pin the server to (-1: no pinning)")
    ap.add_argument("--json", action="store_true", help="print one JSON object per N as well")
    ap.add_argument(
        "--think",
        type=float,
        nargs="+",
        default=[0.0],
        help="seconds a player thinks per decision (0: as fast as the clients go); one run per value",
    )
    args = ap.parse_args()
    cpu = None if args.server_cpu < 0 else args.server_cpu
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, (n, think) in enumerate((n, t) for t in args.think for n in args.tables):
            db = args.db or f"sqlite+aiosqlite:///{tmp}/bench{i}.db"
            rows.append(measure(n, args.duration, args.client_procs, db, cpu, think))
            if args.json:
                print(json.dumps(rows[-1]), flush=True)
    head = (
        "tables",
        "think s",
        "games/s",
        "msgs/s",
        "decisions/s",
        "p50 ms",
        "p99 ms",
        "KB/idle table",
        "server CPU",
        "CPU µs/decision",
        "done",
    )
    print()
    print("Sessions server on loopback (target: 1000 tables on one core, p99 < 50 ms, < 100 KB per idle table)")
    print(" | ".join(f"{h:>13}" for h in head))
    for r in rows:
        cells = (
            f"{r['tables']}",
            f"{r['think']:g}",
            f"{r['games_per_s']:.2f}",
            f"{r['messages_per_s']:.0f}",
            f"{r['decisions_per_s']:.0f}",
            f"{r['p50_ms']:.1f}",
            f"{r['p99_ms']:.1f}",
            f"{r['kb_per_idle_table']:.1f}",
            f"{100 * r['server_cpu_share']:.0f}%",
            f"{r['server_cpu_us_per_decision']:.0f}",
            f"{r['games_finished']:.0f}/{r['tables']}",
        )
        print(" | ".join(f"{c:>13}" for c in cells))


if __name__ == "__main__":
    main()
