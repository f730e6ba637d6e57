"""Benchmark: N concurrent bot games through the Sessions protocol on loopback.

The server is `moonshot serve` in its own process (pinned to one CPU when the machine allows it,
games stored in a SQLite file as in production); the players are lean protocol clients in
other processes (random legal cards, 10 tables per connection). For each N it prints:

* games/s and messages/s (both directions) while N tables play at once;
* p50/p99 decision round trip: from the client's ``decided_move`` until the server's
  ``move_report`` of that card comes back (server work + loopback);
* memory per idle table: the server's RSS growth with N tables (4 sessions each) waiting for
  passes, divided by N;
* memory per active table: the server's peak RSS growth while the N tables play, divided by N
  (with "decisions per table" made by then: a table's event log grows as its game goes on);
* the load average (1 min) before each phase: on a shared machine, read every figure with it.

Each phase (idle, play) runs a fresh server on a fresh SQLite file in a temp dir. The idle
phase ends with SIGKILL, which leaves its N games ``running`` in its store; a server started on
that store would restore them and play them flat out while the next phase measures. So before a
phase starts the benchmark checks that its store has no ``running`` game, and after the server
starts, that it announced ``0 unfinished games restored``; it stops with an error otherwise.

Targets (the issue): 1,000 concurrent tables in one process on one core, p99 < 50 ms,
< 100 KB per idle table. N = 1,000 full games take minutes, so every run is capped by
``--duration`` seconds; games/s then counts finished games plus the fraction played
(decisions made / decisions per game).

    python benchmarks/server.py                 # N = 10, 100, 1000, players answer at once
    python benchmarks/server.py --workers 0 1 2 --tables 100 300 --think 0.5   # a cluster

``--workers W`` (W >= 1) runs ``moonshot serve --workers W --redis URL`` instead: W processes on one
shared port, every seat routed through Redis, games stored in a fresh PostgreSQL database per
phase (SQLite cannot be shared; ``--db none``: no store). ``0`` is the single process without
Redis, the anchor. For a cluster, "CPU µs/decision" adds up every worker's CPU, and the
"Redis µs/decision" column gives the Redis server's own (INFO cpu, whole server); a cluster's
capacity per core is 10^6 / (worker µs + Redis µs) decisions a second. The idle-memory phase runs
for the anchor only.
    python benchmarks/server.py --tables 1000 --think 1 0.5   # paced players (seconds per decision)

With ``--think 0`` the clients answer as fast as they can, and on a small machine they, not the
server, are the limit (the "server CPU" column shows how busy the server was). ``--think T``
models players who take about T seconds per decision: a table then makes about 1/T decisions
a second (one seat acts at a time), N/T in all, and the round trip shows how quickly the server
answers with that many live tables. "CPU µs/decision" is the server's own CPU time per decision
(all its messages included): one core's capacity is 10^6 / that, whatever else the machine runs.

``--bot SPEC`` seats the server's bots: each table is one client's player (its lobby code its
own) and three bots of that spec, seated at once (``serve --fill-wait 0 --bot SPEC``). Decisions
then count the bots' cards and passes too, so "CPU µs/decision" is what a bot seat costs the
server (the anchor: ``none``, four clients a table, in the same run):

    python benchmarks/server.py --tables 10 --duration 60 --bot none heuristic 'search --simulations 200'
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
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from moonshot.protocols.sessions.codec import StreamDecoder, encode

TABLES_PER_CONNECTION = 10
WARMUP = 10.0  # seconds: the start (every table dealing and passing at once) is reported apart
# every client of this benchmark is at 127.0.0.1: the per-address shares are lifted (docs/server.md)
UNCAPPED = ("--limit", "connections_per_address=1000000", "--limit", "sessions_per_address=1000000")
UNCAPPED += ("--limit", "waiting_per_address=1000000")
UNCAPPED += ("--limit", "tables_per_s=1000000", "--limit", "tables_burst=1000000")  # tables started
DECISIONS_PER_GAME = 700  # random players: ~13 deals x (52 plays + 3-4 passes) until a total passes 100


# ----------------------------------------------------------------- the lean client
@dataclass
class Stats:
    received: int = 0
    sent: int = 0
    games: int = 0
    decisions: int = 0
    latencies: list[float] = field(default_factory=list)
    latency_at: list[float] = field(default_factory=list)  # perf_counter when each was measured
    started: int = 0  # sessions that got their first hand
    bot_decisions: int = 0  # the server's bots' cards and passes, as the one player sees them (--bot)


class BenchConnection(asyncio.Protocol):
    def __init__(
        self, stats: Stats, codes: list[str], silent: bool, rng: random.Random, think: float = 0.0, seats: int = 4
    ) -> None:
        self.stats = stats
        self.seats = seats  # this client's players per table (1: the server's bots have the other three)
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
            for _ in range(self.seats):
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
        self.open = self.seats * len(self.codes)
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
                    self.stats.bot_decisions += 4 - self.seats
                    self.answer(sid, {"type": "donated_cards", "cards": self.hand[sid][:3]})
            elif t == "move_request" and not self.silent:
                self.answer(sid, {"type": "decided_move", "card": self.rng.choice(m["legal_moves"])})
            elif t == "move_report" and m["player_tag"] == self.tag.get(sid):
                t0 = self.sent_at.pop(sid, None)
                if t0 is not None:
                    self.stats.latencies.append(now - t0)
                    self.stats.latency_at.append(now)
            elif t == "move_report" and self.seats < 4:
                self.stats.bot_decisions += 1
            elif t == "end_game":
                self.stats.games += 1
                self.open -= 1
                if self.open == 0 and not self.done.done():
                    self.done.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(None)


async def _clients(
    port: int, codes: list[str], silent: bool, duration: float, stats: Stats, think: float, seats: int
) -> None:
    loop = asyncio.get_running_loop()
    conns = []
    for i in range(0, len(codes), TABLES_PER_CONNECTION):
        _, proto = await loop.create_connection(
            lambda i=i: BenchConnection(
                stats, codes[i : i + TABLES_PER_CONNECTION], silent, random.Random(i), think, seats
            ),
            "127.0.0.1",
            port,
        )
        conns.append(proto)
    if silent:
        end = loop.time() + duration
        while stats.started < seats * len(codes) and loop.time() < end:
            await asyncio.sleep(0.05)
        return
    await asyncio.wait([c.done for c in conns], timeout=duration)
    for c in conns:
        if c.transport is not None:
            c.transport.close()


def client_process(
    port: int,
    codes: list[str],
    silent: bool,
    duration: float,
    out: Any,
    go: Any,
    think: float = 0.0,
    nice: int = 0,
    seats: int = 4,
) -> None:
    if nice:
        os.setpriority(os.PRIO_PROCESS, 0, nice)
    stats = Stats()
    go.wait()
    t0 = time.perf_counter()
    c0 = time.process_time()
    asyncio.run(_clients(port, codes, silent, duration, stats, think, seats))
    elapsed = time.perf_counter() - t0
    client_cpu = time.process_time() - c0
    steady = [x for x, at in zip(stats.latencies, stats.latency_at) if at - t0 >= WARMUP]
    out.put(
        {
            "received": stats.received,
            "sent": stats.sent,
            "games": stats.games,
            "decisions": stats.decisions,
            "bot_decisions": stats.bot_decisions,
            "seats": seats,
            "latencies": stats.latencies,
            "steady_latencies": steady,
            "started": stats.started,
            "elapsed": elapsed,
            "cpu": client_cpu,
        }
    )
    if silent:
        time.sleep(duration)  # keep the idle tables' connections open while memory is read


# ----------------------------------------------------------------- the server process
class DirtyStore(SystemExit):
    """A phase would measure games it did not start: stop the benchmark."""


def running_games(db_file: str) -> int:
    """Games a server would restore from this SQLite file (0 when there is no file yet)."""
    if not os.path.exists(db_file):
        return 0
    with contextlib.closing(sqlite3.connect(f"file:{db_file}?mode=ro", uri=True)) as conn:
        try:
            return int(conn.execute("SELECT count(*) FROM games WHERE status = 'running'").fetchone()[0])
        except sqlite3.OperationalError:  # no games table yet
            return 0


def bot_options(bot: str | None) -> list[str]:
    """``serve`` options for the tables' chairs: none filled (four clients a table), or every
    table's three empty chairs filled at once with the server's bot ``bot`` (a spec)."""
    return ["--fill-wait", "-1", "--bot", "random"] if bot is None else ["--fill-wait", "0", "--bot", bot]


def start_server(
    db_file: str | None, move_timeout: float, cpu: int | None, nice: int = 0, bot: str | None = None
) -> tuple[subprocess.Popen[str], int]:
    """A fresh ``moonshot serve`` on ``db_file`` (None: no store), checked to run no restored game."""
    if db_file is not None and running_games(db_file):
        raise DirtyStore(f"{db_file} holds {running_games(db_file)} running games: a server would restore them")
    cmd = [sys.executable, "-m", "moonshot.cli.main", "serve", "--sessions-port", "0", "--log-level", "error"]
    cmd += ["--move-timeout", str(move_timeout), *bot_options(bot), *UNCAPPED]
    cmd += ["--no-db"] if db_file is None else ["--db", f"sqlite:///{db_file}"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    m = re.search(r"tcp://[\d.]+:(\d+)", proc.stdout.readline())
    if not m:
        proc.kill()
        raise SystemExit("the server did not start")
    for line in proc.stdout:  # the announcements, up to how many games it restored
        restored = re.search(r"(\d+) unfinished games restored", line)
        if restored:
            if int(restored.group(1)):
                proc.kill()
                raise DirtyStore(f"the server restored {restored.group(1)} games: they would play during the phase")
            break
    else:
        proc.kill()
        raise SystemExit("the server did not say how many games it restored")
    if cpu is not None and hasattr(os, "sched_setaffinity"):
        with contextlib.suppress(OSError):
            os.sched_setaffinity(proc.pid, {cpu})
    if nice:
        try:
            os.setpriority(os.PRIO_PROCESS, proc.pid, nice)
        except OSError as e:  # a negative nice needs privileges: say so rather than measure otherwise
            proc.kill()
            raise SystemExit(f"cannot set the server's nice value to {nice}: {e}") from None
    return proc, int(m.group(1))


def start_cluster(
    workers: int, move_timeout: float, redis_url: str, pg_url: str | None, bot: str | None = None
) -> tuple[subprocess.Popen[str], int, list[int], str]:
    """``moonshot serve --workers W --redis``: returns the supervisor, the port, the worker pids
    and the Redis key prefix (removed by :func:`stop_cluster`)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    prefix = f"bench-{os.getpid()}-{time.monotonic_ns()}:"
    cmd = [sys.executable, "-m", "moonshot.cli.main", "serve", "--sessions-port", str(port), "--log-level", "error"]
    cmd += ["--move-timeout", str(move_timeout), *bot_options(bot), "--no-http", *UNCAPPED]
    cmd += ["--workers", str(workers), "--redis", redis_url, "--cluster-prefix", prefix]
    cmd += ["--no-db"] if pg_url is None else ["--db", pg_url]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    seen = 0
    for line in proc.stdout:
        if "unfinished games restored" in line:
            seen += 1
            if seen == workers:
                break
    else:
        proc.kill()
        raise SystemExit("the cluster did not start")
    pids = [proc.pid]
    if workers > 1:
        with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
            pids = [int(p) for p in f.read().split()]
    return proc, port, pids, prefix


def stop_cluster(proc: subprocess.Popen[str], pids: list[int], redis_url: str, prefix: str) -> None:
    """SIGTERM (the workers flush their stores), then SIGKILL whatever is left, workers included."""
    proc.terminate()
    try:
        proc.wait(120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    import redis

    r = redis.Redis.from_url(redis_url)
    keys = list(r.scan_iter(match=f"{prefix}*"))
    if keys:
        r.delete(*keys)
    r.close()


def redis_cpu(redis_url: str) -> float:
    import redis

    r = redis.Redis.from_url(redis_url)
    info = r.info("cpu")
    r.close()
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def fresh_pg(admin_url: str) -> tuple[str, str]:
    """A new PostgreSQL database for one phase: (its URL, its name)."""
    import asyncpg

    name = f"moonshot_bench_{os.getpid()}_{time.monotonic_ns()}"

    async def create() -> None:
        conn = await asyncpg.connect(admin_url)
        await conn.execute(f"CREATE DATABASE {name}")
        await conn.close()

    asyncio.run(create())
    return f"{admin_url.rsplit('/', 1)[0]}/{name}", name


def drop_pg(admin_url: str, name: str) -> None:
    import asyncpg

    async def drop() -> None:
        conn = await asyncpg.connect(admin_url)
        await conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        await conn.close()

    asyncio.run(drop())


def measure_cluster(
    n: int,
    duration: float,
    procs: int,
    workers: int,
    think: float,
    redis_url: str,
    pg_admin: str | None,
    bot: str | None = None,
) -> dict[str, Any]:
    """The play phase for N tables on a cluster of ``workers`` processes."""
    row: dict[str, Any] = {"tables": n, "think": think, "workers": workers, "bot": bot, "load_idle": load1()}
    row["load_play"] = load1()
    pg_url, pg_name = fresh_pg(pg_admin) if pg_admin else (None, "")
    server, port, pids, prefix = start_cluster(workers, 30, redis_url, pg_url, bot)
    try:
        time.sleep(1.0)
        base = sum(rss_kb(p) for p in pids)
        cpu0 = sum(cpu_seconds(p) for p in pids)
        r0 = redis_cpu(redis_url)
        with RssSampler(pids[0]) as rss:
            res = run_clients(port, n, False, duration, procs, think, seats=4 if bot is None else 1)
        cpu1 = sum(cpu_seconds(p) for p in pids)
        r1 = redis_cpu(redis_url)
        peak = sum(rss_kb(p) for p in pids)
    finally:
        stop_cluster(server, pids, redis_url, prefix)
        if pg_admin and pg_name:
            drop_pg(pg_admin, pg_name)
    row["load_end"] = load1()
    _results(row, res, n, cpu1 - cpu0, max(peak, rss.peak), base)
    row["redis_cpu_us_per_decision"] = 1e6 * (r1 - r0) / max(1, row["decisions"])
    row["kb_per_idle_table"] = float("nan")
    return row


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


class RssSampler:
    """The server's RSS every ``period`` seconds while clients run (the peak is kept)."""

    def __init__(self, pid: int, period: float = 0.5) -> None:
        self.pid = pid
        self.period = period
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            with contextlib.suppress(OSError):
                self.peak = max(self.peak, rss_kb(self.pid))

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        with contextlib.suppress(OSError):
            self.peak = max(self.peak, rss_kb(self.pid))


def load1() -> float:
    return os.getloadavg()[0]


def run_clients(
    port: int, n: int, silent: bool, duration: float, procs: int, think: float = 0.0, nice: int = 0, seats: int = 4
) -> list[dict[str, Any]]:
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    go = ctx.Event()
    codes = [f"bench-{'idle' if silent else 'play'}-{i}" for i in range(n)]
    groups = [codes[i::procs] for i in range(procs) if codes[i::procs]]
    ps = [
        ctx.Process(target=client_process, args=(port, g, silent, duration, out, go, think, nice, seats))
        for g in groups
    ]
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


def measure(
    n: int,
    duration: float,
    procs: int,
    store_dir: str | None,
    cpu: int | None,
    think: float = 0.0,
    nice: int = 0,
    bot: str | None = None,
) -> dict[str, Any]:
    """Both phases for N tables, each on its own fresh store (``store_dir`` None: no store); with
    ``bot``, the play phase only, each table one client's player and three of the server's bots."""
    tag = f"n{n}-think{think:g}-{'clients' if bot is None else re.sub(r'[^a-z0-9]+', '_', bot)}"

    def fresh(phase: str) -> str | None:
        if store_dir is None:
            return None
        path = os.path.join(store_dir, f"{tag}-{phase}.db")
        if os.path.exists(path):
            raise DirtyStore(f"{path} already exists: each phase needs a fresh store")
        return path

    row: dict[str, Any] = {"tables": n, "think": think, "bot": bot, "load_idle": load1()}
    row["kb_per_idle_table"] = float("nan")
    if bot is None:
        _idle_memory(row, n, procs, fresh("idle"), cpu, nice)
    # play: N tables at once, on a fresh store
    row["load_play"] = load1()
    server, port = start_server(fresh("play"), 30, cpu, nice, bot)
    try:
        time.sleep(0.5)
        base = rss_kb(server.pid)
        cpu0 = cpu_seconds(server.pid)
        with RssSampler(server.pid) as rss:
            res = run_clients(port, n, False, duration, procs, think, nice, seats=4 if bot is None else 1)
        cpu1 = cpu_seconds(server.pid)
    finally:
        server.kill()
        server.wait()
    row["load_end"] = load1()
    _results(row, res, n, cpu1 - cpu0, rss.peak, base)
    row["workers"] = 0
    row["redis_cpu_us_per_decision"] = 0.0
    return row


def _idle_memory(row: dict[str, Any], n: int, procs: int, db_file: str | None, cpu: int | None, nice: int) -> None:
    """Memory per idle table: N tables waiting for passes from silent clients."""
    server, port = start_server(db_file, 3600, cpu, nice)
    try:
        time.sleep(0.5)
        base = rss_kb(server.pid)
        res = run_clients(port, n, True, max(10.0, n / 20), procs, nice=nice)
        started = sum(r["started"] for r in res if "started" in r)
        time.sleep(0.5)
        grown = rss_kb(server.pid) - base
        row["idle_sessions_started"] = started
        row["kb_per_idle_table"] = grown / n
        for r in res:
            for p in r.get("_procs", []):
                p.terminate()
    finally:
        server.kill()  # its N games stay `running` in its own store, which nothing reads again
        server.wait()


def _results(row: dict[str, Any], res: list[dict[str, Any]], n: int, server_cpu: float, peak: int, base: int) -> None:
    elapsed = max(r["elapsed"] for r in res)
    lat = sorted(x for r in res for x in r["latencies"])
    steady = sorted(x for r in res for x in r["steady_latencies"])
    games_done = sum(r["games"] / r["seats"] for r in res)  # a game ends for each of its client's sessions
    decisions = sum(r["decisions"] + r["bot_decisions"] for r in res)  # the bots' too: the server's work
    msgs = sum(r["received"] + r["sent"] for r in res)
    row.update(
        {
            "elapsed_s": elapsed,
            "games_finished": games_done,
            "games_per_s": (games_done if games_done >= n else decisions / DECISIONS_PER_GAME) / elapsed,
            "messages_per_s": msgs / elapsed,
            "decisions_per_s": decisions / elapsed,
            "decisions": decisions,
            "decisions_per_table": decisions / n,
            "p50_ms": 1000 * statistics.median(lat) if lat else float("nan"),
            "p99_ms": 1000 * lat[min(len(lat) - 1, int(0.99 * len(lat)))] if lat else float("nan"),
            "steady_p99_ms": 1000 * steady[min(len(steady) - 1, int(0.99 * len(steady)))] if steady else float("nan"),
            "server_cpu_share": server_cpu / elapsed,
            "client_cpu_share": sum(r["cpu"] for r in res) / elapsed / len(res),  # per client process
            "server_cpu_us_per_decision": 1e6 * server_cpu / max(1, decisions),
            "server_rss_mb": peak / 1024,
            "kb_per_active_table": (peak - base) / n,
        }
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tables", type=int, nargs="+", default=[10, 100, 1000])
    ap.add_argument("--duration", type=float, default=60.0, help="cap on each play phase (seconds)")
    ap.add_argument("--client-procs", type=int, default=2)
    ap.add_argument(
        "--db",
        choices=["sqlite", "none"],
        default="sqlite",
        help="sqlite: a fresh SQLite file per phase in a temp dir (default); none: no store",
    )
    ap.add_argument("--server-cpu", type=int, default=0, help="CPU to pin the server to (-1: no pinning)")
    ap.add_argument(
        "--nice",
        type=int,
        default=0,
        help="nice value of the server and client processes and of their autogroup (negative, as root: on a "
        "shared machine they then "
        "get the CPU before other jobs, closer to a machine of their own)",
    )
    ap.add_argument("--json", action="store_true", help="print one JSON object per N as well")
    ap.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=[0],
        help="server processes: 0 = one process without Redis (the anchor); W >= 1 = serve --workers W --redis",
    )
    ap.add_argument("--redis", default="redis://127.0.0.1:6379/0", help="Redis for --workers >= 1")
    ap.add_argument(
        "--pg",
        default="postgresql://postgres@127.0.0.1:5432/test",
        help="PostgreSQL where a fresh database is made per cluster phase (--db none: no store)",
    )
    ap.add_argument(
        "--think",
        type=float,
        nargs="+",
        default=[0.0],
        help="seconds a player thinks per decision (0: as fast as the clients go); one run per value",
    )
    ap.add_argument(
        "--bot",
        nargs="+",
        default=["none"],
        metavar="SPEC",
        help="the server's bots at each table (one run per spec, e.g. heuristic 'search --simulations 200'): "
        "each table is then one client's player and three of these bots, and CPU µs/decision counts the "
        "bots' decisions too; none (the default): four clients a table, no bot",
    )
    args = ap.parse_args()
    cpu = None if args.server_cpu < 0 else args.server_cpu
    with autogroup_nice(args.nice):
        run(args, cpu)


@contextlib.contextmanager
def autogroup_nice(nice: int) -> Iterator[None]:
    """With Linux autogroups, CPU is shared between sessions first and nice values count only
    inside one: give this session's group (the server and clients) the nice value too."""
    path = "/proc/self/autogroup"
    if not nice or not os.path.exists(path):
        yield
        return
    with open(path) as f:
        old = int(f.read().split("nice")[1])
    try:
        with open(path, "w") as f:
            f.write(str(nice))
    except OSError as e:
        raise SystemExit(f"cannot set this session's autogroup nice value to {nice}: {e}") from None
    try:
        yield
    finally:
        with open(path, "w") as f:
            f.write(str(old))


def run(args: argparse.Namespace, cpu: int | None) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        runs = ((n, t, w, b) for b in args.bot for t in args.think for n in args.tables for w in args.workers)
        for n, think, w, spec in runs:
            store_dir = None if args.db == "none" else tmp
            bot = None if spec == "none" else spec
            if w == 0:
                rows.append(measure(n, args.duration, args.client_procs, store_dir, cpu, think, args.nice, bot))
            else:
                pg = None if args.db == "none" else args.pg
                rows.append(measure_cluster(n, args.duration, args.client_procs, w, think, args.redis, pg, bot))
            if args.json:
                print(json.dumps(rows[-1]), flush=True)
    head = (
        "workers",
        "bots",
        "tables",
        "think s",
        "games/s",
        "msgs/s",
        "decisions/s",
        "p50 ms",
        "p99 ms",
        "p99 after 10s",
        "KB/idle table",
        "KB/active table",
        "decisions/table",
        "server CPU",
        "client CPU",
        "CPU µs/decision",
        "Redis µs/dec.",
        "done",
        "load 1 min",
    )
    print()
    print("Sessions server on loopback (target: 1000 tables on one core, p99 < 50 ms, < 100 KB per idle table)")
    print(" | ".join(f"{h:>13}" for h in head))
    for r in rows:
        cells = (
            f"{r['workers']}" if r["workers"] else "1, no Redis",
            r["bot"] or "none",
            f"{r['tables']}",
            f"{r['think']:g}",
            f"{r['games_per_s']:.2f}",
            f"{r['messages_per_s']:.0f}",
            f"{r['decisions_per_s']:.0f}",
            f"{r['p50_ms']:.1f}",
            f"{r['p99_ms']:.1f}",
            f"{r['steady_p99_ms']:.1f}",
            f"{r['kb_per_idle_table']:.1f}",
            f"{r['kb_per_active_table']:.1f}",
            f"{r['decisions_per_table']:.0f}",
            f"{100 * r['server_cpu_share']:.0f}%",
            f"{100 * r['client_cpu_share']:.0f}%",
            f"{r['server_cpu_us_per_decision']:.0f}",
            f"{r['redis_cpu_us_per_decision']:.0f}",
            f"{r['games_finished']:.0f}/{r['tables']}",
            f"{r['load_idle']:.1f}/{r['load_play']:.1f}/{r['load_end']:.1f}",
        )
        print(" | ".join(f"{c:>13}" for c in cells))


if __name__ == "__main__":
    main()
