"""Benchmark: the Trend protocol, on the one-table node and in ``moonshot serve``.

1. **A match on the node** (``--match``): ``moonshot trend-node`` in its own process with four
   Empty seats and every interval at 0; four lean WebSocket bots (random candidate cards, playing
   the SDK way: re-join after every ``game_end``) play the 4-game match. Prints games/s and the
   decision round trip (from ``pick_card`` sent to its ``turn_end`` back), p50/p99.
2. **Many tables in serve** (``--serve``): ``moonshot serve --trend-port`` in its own process (no
   store, one CPU when the machine allows it); N tables of four WebSocket bots each (grouped by a
   ``lobbyCode``), every bot thinking 0.75-0.95 × ``--think`` seconds before each decision (inside
   the seed's 1 s deadline: where the machine keeps up, the server never plays for a late bot;
   the run counts the cards it did play), so a table makes about 1.2/think decisions a second.
   The server runs on CPU 0 and the ``--procs`` client processes on the other CPUs where the
   machine has them, so the clients' CPU is not the server's; the clients parse in full only the
   frames they need (their requests and their own ``turn_end``), so they cost less than the
   server. Over ``--duration`` seconds after a warm-up it prints decisions/s, the round trip
   p50/p99, the server's CPU time per decision (process CPU time, user + kernel: robust to load)
   and its memory per table. ``--asgi`` serves ``--trend-port`` with uvicorn + Starlette (the
   anchor: ``MOONSHOT_TREND_ASGI=1``) instead of the lean listener; ``--compare`` runs both,
   interleaved, ``--loops`` times each.

3. **The server's work per decision, in process** (``--inprocess``): whole Trend games on a real
   ``Table`` with four ``TrendSeat`` s whose peers encode every frame and answer like the bots
   (no sockets), so the process CPU time per decision covers the table, the codec, the frame
   encoding and the reply parsing, and nothing else runs in the measured process. Two ways,
   interleaved, the best of ``--rounds``: **per chair** (the anchor: each chair builds its own
   player entries as dicts and ``json`` encodes every frame, as before) and **shared** (the
   entries of a table built once and kept with their JSON, frames by ``encode_frame``).

Targets: p99 < 50 ms with 500 tables at one decision per second per table.

    python benchmarks/trend.py                      # all three parts: in process, the match, 500 tables
    python benchmarks/trend.py --serve --tables 500 --duration 30      # the target
    python benchmarks/trend.py --serve --compare --tables 100 --duration 20 --loops 3
    python benchmarks/trend.py --inprocess --games 20 --rounds 5
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
import time
import zlib
from pathlib import Path
from typing import Any

# this directory holds benchmarks/http.py, which would shadow the standard library's http module
# (websockets imports it) when the script runs as `python benchmarks/trend.py`
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from websockets.client import ClientProtocol
from websockets.frames import Opcode as WsOpcode
from websockets.http11 import Response as WsResponse
from websockets.protocol import State as WsState
from websockets.uri import parse_uri

WARMUP = 10.0
PREFIX = b'{"eventName":"'


def pct(xs: list[float], p: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def cpu_split(pid: int) -> tuple[float, float]:
    """User and system CPU seconds of a process."""
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(parts[11]) / tick, int(parts[12]) / tick


def run_delay(pid: int) -> float:
    """Seconds the process has waited, runnable, for a CPU (0 where the kernel does not say)."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def cpu_seconds(pid: int) -> float:
    return sum(cpu_split(pid))


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


# ----------------------------------------------------------------- the lean bot
class Bot:
    """One seat: answers every request with a random candidate, times each card's round trip."""

    def __init__(self, url: str, number: int, name: str, code: str | None, think: float, games: int) -> None:
        self.url, self.number, self.name, self.code = url, number, name, code
        self.think, self.games = think, games
        self.rng = random.Random(hash(name))
        self.sent_at: float | None = None
        self.rtts: list[tuple[float, float]] = []  # (when, seconds)
        self.finished = 0
        self.decisions = 0
        self.late = 0  # cards the server played for this bot (serverRandom): it answered too late
        self.cards: list[float] = []  # when each of its cards was played (its own or the server's)
        self.mine = f'"turnPlayer":{json.dumps(name)}'.encode()

    def join(self) -> str:
        data: dict[str, Any] = {"playerNumber": str(self.number), "playerName": self.name, "token": "bench"}
        if self.code:
            data["lobbyCode"] = self.code
        return json.dumps({"eventName": "join", "data": data})

    async def run(self, stop: asyncio.Event) -> None:
        while self.finished < self.games and not stop.is_set():
            loop = asyncio.get_running_loop()
            conn = _BotConnection(self, stop)
            host, port = self.url.split("//", 1)[1].rstrip("/").split(":")
            await loop.create_connection(lambda c=conn: c, host, int(port))  # type: ignore[misc]
            await conn.done

    def on_frame(self, raw: bytes, conn: _BotConnection, stop: asyncio.Event) -> None:
        # A lean client, so that the run measures the server: it reads a frame's eventName from
        # its first bytes (the server writes it first) and parses in full only the frames it
        # needs (its requests, its own turn_end), and still answers every request with a card
        # from candidateCards, as the real protocol asks.
        if raw.startswith(PREFIX):
            name = raw[len(PREFIX) : raw.index(b'"', len(PREFIX))]
        else:
            name = json.loads(raw)["eventName"].encode()
        if name == b"turn_end":
            if self.mine not in raw:
                return
            d = json.loads(raw)["data"]
            if d["turnPlayer"] != self.name:
                return
            self.cards.append(time.perf_counter())
            if d["serverRandom"]:
                self.late += 1
            elif self.sent_at is not None:
                now = time.perf_counter()
                self.rtts.append((now, now - self.sent_at))
            self.sent_at = None
        elif name in (b"your_turn", b"pass_cards", b"expose_cards"):
            d = json.loads(raw)["data"]
            if self.think:
                # within the 1 s deadline at --think 1: every card is the bot's own
                wait = self.think * self.rng.uniform(0.75, 0.95)
                asyncio.get_running_loop().call_later(wait, self.answer, name, d, conn, stop)
            else:
                self.answer(name, d, conn, stop)
        elif name == b"game_end":
            self.finished += 1
            conn.close()  # the SDK way: close, then join again on a new connection

    def answer(self, name: bytes, d: dict[str, Any], conn: _BotConnection, stop: asyncio.Event) -> None:
        if stop.is_set() or conn.done.done():
            return
        cands = d["self"]["candidateCards"]
        if name == b"your_turn":
            reply = {"dealNumber": d["dealNumber"], "roundNumber": d["roundNumber"]}
            reply["turnCard"] = self.rng.choice(cands)
            self.sent_at = time.perf_counter()
            conn.send(json.dumps({"eventName": "pick_card", "data": reply}))
        elif name == b"pass_cards":
            pick = {"dealNumber": d["dealNumber"], "cards": self.rng.sample(cands, 3)}
            conn.send(json.dumps({"eventName": "pass_my_cards", "data": pick}))
        else:
            data = {"dealNumber": d["dealNumber"], "cards": []}
            conn.send(json.dumps({"eventName": "expose_my_cards", "data": data}))
        self.decisions += 1


class _BotConnection(asyncio.Protocol):
    """One connection of a bot: ``websockets``' sans-I/O client over an asyncio protocol (a
    client much cheaper per frame than the asyncio one, so 2,000 of them fit on one core)."""

    def __init__(self, bot: Bot, stop: asyncio.Event) -> None:
        self.bot, self.stop = bot, stop
        self.proto = ClientProtocol(parse_uri(bot.url), max_size=None)
        self.transport: Any = None
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.parts: list[bytes] | None = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        self.proto.send_request(self.proto.connect())
        self._write()

    def _write(self) -> None:
        for d in self.proto.data_to_send():
            if d:
                self.transport.write(d)
            elif not self.transport.is_closing():
                self.transport.close()

    def send(self, text: str) -> None:
        if self.proto.state is not WsState.OPEN:
            return
        self.proto.send_text(text.encode())
        self._write()

    def close(self) -> None:
        if self.proto.state is WsState.OPEN:
            self.proto.send_close(1000)
            self._write()
        self.transport.close()

    def data_received(self, data: bytes) -> None:
        self.proto.receive_data(data)
        for ev in self.proto.events_received():
            if isinstance(ev, WsResponse):
                if ev.status_code == 101:
                    self.send(self.bot.join())
                continue
            if ev.opcode is WsOpcode.TEXT:
                if ev.fin:
                    self.bot.on_frame(bytes(ev.data), self, self.stop)
                else:
                    self.parts = [bytes(ev.data)]
            elif ev.opcode is WsOpcode.CONT and self.parts is not None:
                self.parts.append(bytes(ev.data))
                if ev.fin:
                    self.bot.on_frame(b"".join(self.parts), self, self.stop)
                    self.parts = None
        self._write()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(None)


# ----------------------------------------------------------------- 1: a match on the node
async def play_match(bots: list[Bot]) -> float:
    stop = asyncio.Event()
    start = time.perf_counter()
    await asyncio.wait_for(asyncio.gather(*(b.run(stop) for b in bots)), 600)
    return time.perf_counter() - start


def match(loops: int) -> None:
    cmd = [sys.executable, "-m", "moonshot.cli.main", "trend-node", "--port", "0", "--log-level", "error"]
    cmd += ["--round-interval", "0", "--deal-interval", "0", "--command-interval", "0", "--seed", "1"]
    cmd += ["--pick-card-timeout", "10000", "--pass-cards-timeout", "10000", "--expose-cards-timeout", "10000"]
    print(f"== a 4-game match on moonshot trend-node, four WebSocket bots, zero intervals (load {load()})")
    results = []
    for _ in range(loops):
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        m = re.search(r"port (\d+)", proc.stdout.readline())
        if not m:
            proc.kill()
            raise SystemExit("the node did not start")
        url = f"ws://127.0.0.1:{m.group(1)}/"
        bots = [Bot(url, n, f"bench{n}", None, 0.0, 4) for n in (1, 2, 3, 4)]
        took = asyncio.run(play_match(bots))
        proc.terminate()
        proc.wait(10)
        rtts = [r for b in bots for _, r in b.rtts]
        decisions = sum(b.decisions for b in bots)
        results.append((took, rtts, decisions))
        print(
            f"   4 games in {took:.2f} s: {4 / took:.2f} games/s, {decisions / took:.0f} decisions/s, "
            f"round trip p50 {pct(rtts, 50) * 1000:.2f} ms, p99 {pct(rtts, 99) * 1000:.2f} ms"
        )
    best = min(results, key=lambda r: r[0])
    print(f"   best of {loops}: {4 / best[0]:.2f} games/s, {best[0] / 4:.2f} s a game")


# ----------------------------------------------------------------- 2: many tables in serve
def client_process(port: int, tables: list[int], think: float, duration: float, out: Any, go: Any) -> None:
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, set(range(1, os.cpu_count() or 2)))  # CPU 0 is the server's

    async def main() -> dict[str, Any]:
        url = f"ws://127.0.0.1:{port}/"
        bots = [Bot(url, n, f"t{t}p{n}", f"bench-{t}", think, 10**6) for t in tables for n in (1, 2, 3, 4)]
        stop = asyncio.Event()
        tasks = []
        for i, b in enumerate(bots):
            tasks.append(asyncio.create_task(b.run(stop)))
            if i % 50 == 49:
                await asyncio.sleep(0.05)  # do not open 1,000 connections in one burst
        go.wait()
        await asyncio.sleep(duration)
        stop.set()
        for t in tasks:
            t.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.gather(*tasks, return_exceptions=True)
        return {
            "rtts": [(w, r) for b in bots for w, r in b.rtts],
            "decisions": sum(b.decisions for b in bots),
            "games": sum(b.finished for b in bots) / 4,
            "late": sum(b.late for b in bots),
            "cards": [w for b in bots for w in b.cards],
        }

    out.put(asyncio.run(main()))


def serve(tables: int, think: float, duration: float, procs: int, asgi: bool = False) -> dict[str, float]:
    """One run; ``asgi``: the listener under uvicorn and Starlette (the anchor), else the lean one."""
    cmd = [sys.executable, "-m", "moonshot.cli.main", "serve", "--no-sessions", "--no-http", "--no-db"]
    cmd += ["--trend-port", "0", "--fill-wait", "-1", "--move-timeout", "30", "--bot", "random", "--log-level", "error"]
    cmd += ["--limit", "connections_per_address=1000000"]  # every client is at 127.0.0.1
    cmd += ["--limit", "tables_per_s=1000000", "--limit", "tables_burst=1000000"]
    env = dict(os.environ, MOONSHOT_TREND_ASGI="1" if asgi else "0")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    port = None
    for _ in range(10):
        m = re.search(r"Trend protocol on ws://[\d.]+:(\d+)", proc.stdout.readline())
        if m:
            port = int(m.group(1))
            break
    if port is None:
        proc.kill()
        raise SystemExit("the server did not start")
    if hasattr(os, "sched_setaffinity"):
        with contextlib.suppress(OSError):
            os.sched_setaffinity(proc.pid, {0})
    base_rss = rss_kb(proc.pid)
    print(
        f"== {tables} Trend tables in moonshot serve ({'ASGI: uvicorn + Starlette' if asgi else 'lean listener'}), "
        f"4 WebSocket bots each, ~{think:g} s a decision (load before: {load()})"
    )
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    go = ctx.Event()
    ids = list(range(tables))
    groups = [ids[i::procs] for i in range(procs) if ids[i::procs]]
    total = WARMUP + duration
    ps = [ctx.Process(target=client_process, args=(port, g, think, total, out, go)) for g in groups]
    for p in ps:
        p.start()
    time.sleep(max(5.0, tables / 100))  # connections open and joins reach the lobby
    go.set()
    t0 = time.perf_counter()
    time.sleep(WARMUP)
    user0, sys0 = cpu_split(proc.pid)
    cpu0 = user0 + sys0
    waited0 = run_delay(proc.pid)
    t1 = time.perf_counter()
    rss = rss_kb(proc.pid)
    time.sleep(duration)
    user1, sys1 = cpu_split(proc.pid)
    cpu1 = user1 + sys1
    waited = (run_delay(proc.pid) - waited0) / duration
    t2 = time.perf_counter()
    load_during = load()
    results = [out.get(timeout=120) for _ in ps]
    for p in ps:
        p.join(30)
    proc.terminate()
    proc.wait(10)
    measured = [r for res in results for w, r in res["rtts"] if t1 <= w <= t2]
    decisions = sum(r["decisions"] for r in results)
    cpu_share = (cpu1 - cpu0) / (t2 - t1)
    # every card played while the server's CPU time was measured (the bots' and the server's own),
    # and a share of the passes (3 a player in 3 deals of 4, 52 cards a deal)
    cards = sum(1 for res in results for w in res["cards"] if t1 <= w <= t2)
    per_decision = (cpu1 - cpu0) / max(1, cards * (1 + 3 / 52))
    system_share = (sys1 - sys0) / max(1e-9, cpu1 - cpu0)
    late = sum(r["late"] for r in results)
    print(
        f"   cards timed after warm-up: {len(measured)}, decisions in all: {decisions} "
        f"({decisions / (t2 - t0):.0f}/s), cards played by the server for a late bot: {late}"
    )
    print(
        f"   round trip p50 {pct(measured, 50) * 1000:.1f} ms, p99 {pct(measured, 99) * 1000:.1f} ms, "
        f"max {max(measured, default=0) * 1000:.0f} ms"
    )
    print(
        f"   server CPU {cpu_share:.0%} of a core, {per_decision * 1e6:.0f} µs a decision "
        f"({system_share:.0%} of it in the kernel; {cards} cards in "
        f"{t2 - t1:.0f} s); RSS {rss / 1024:.0f} MiB "
        f"({(rss - base_rss) / tables:.0f} KB a table with its 4 sockets); load during: {load_during}"
    )
    print(
        f"   the server waited for a CPU {waited:.0%} of the time (runnable, not running: above a few %, "
        f"the machine, not the server, sets the round trip)"
    )
    p99 = pct(measured, 99) * 1000
    verdict = "MET" if p99 < 50 else "NOT MET"
    rate = cards * (1 + 3 / 52) / (t2 - t1) / tables
    print(f"   target p99 < 50 ms at {tables} tables, {rate:.2f} decisions/s a table: {verdict} ({p99:.1f} ms)")
    if measured:
        print(f"   mean {statistics.fmean(measured) * 1000:.1f} ms")
    return {
        "p99": p99,
        "cpu_us": per_decision * 1e6,
        "share": cpu_share,
        "late": late,
        "cards": cards,
        "system": system_share,
    }


def compare(tables: int, think: float, duration: float, procs: int, loops: int) -> None:
    """ASGI (anchor) and lean listener, interleaved ``loops`` times each."""
    runs: dict[bool, list[dict[str, float]]] = {True: [], False: []}
    for _ in range(loops):
        for asgi in (True, False):
            runs[asgi].append(serve(tables, think, duration, procs, asgi))
    print(f"== ASGI vs lean, {tables} tables, {loops} runs each, interleaved (load after: {load()})")
    for asgi in (True, False):
        r = runs[asgi]
        cpu = ", ".join(f"{x['cpu_us']:.0f}" for x in r)
        p99 = ", ".join(f"{x['p99']:.0f}" for x in r)
        late = ", ".join(f"{x['late']:.0f}" for x in r)
        kernel = ", ".join(f"{x['system']:.0%}" for x in r)
        print(
            f"   {'ASGI (anchor)' if asgi else 'lean         '}: µs a decision {cpu}; p99 ms {p99}; "
            f"cards played for a late bot {late}; share in the kernel {kernel}"
        )
    a = statistics.median(x["cpu_us"] for x in runs[True])
    b = statistics.median(x["cpu_us"] for x in runs[False])
    print(f"   median CPU a decision: {a:.0f} µs -> {b:.0f} µs ({a / b:.2f}x less)")


# ----------------------------------------------------------------- 3: the server's work, in process
class SinkPeer:
    """What a ``Peer`` does with a frame (encode it), without the socket; answers like a bot."""

    def __init__(self, encode: Any, rng: random.Random) -> None:
        self.encode, self.rng = encode, rng
        self.addr = "inprocess"
        self.dropped = 0
        self.bytes = 0
        self.crc = 0  # of every frame sent, in order
        self.seat: Any = None

    def send(self, m: dict[str, Any], on_sent: Any = None) -> None:
        text = self.encode(m).encode()
        self.bytes += len(text)
        self.crc = zlib.crc32(text, self.crc)
        if on_sent is not None:  # written at once: a request's deadline runs from now
            on_sent(asyncio.get_running_loop().time())
        name, d = m["eventName"], m["data"]
        if name == "your_turn":
            card = self.rng.choice(d["self"]["candidateCards"])
            reply = {"eventName": "pick_card", "data": {"dealNumber": d["dealNumber"], "roundNumber": d["roundNumber"]}}
            reply["data"]["turnCard"] = card
        elif name == "pass_cards":
            reply = {"eventName": "pass_my_cards", "data": {"dealNumber": d["dealNumber"]}}
            reply["data"]["cards"] = self.rng.sample(d["self"]["candidateCards"], 3)
        elif name == "expose_cards":
            reply = {"eventName": "expose_my_cards", "data": {"dealNumber": d["dealNumber"], "cards": []}}
        else:
            return
        asyncio.get_running_loop().call_soon(self.reply, json.dumps(reply))  # later, as over a socket

    def send_many(self, messages: list[dict[str, Any]]) -> None:
        for m in messages:
            self.send(m)

    def reply(self, text: str) -> None:
        from moonshot.protocols.trend import codec as tc

        self.seat.reply(tc.parse_frame(text))


async def inprocess_games(games: int, shared: bool) -> tuple[float, int, tuple[int, int]]:
    """CPU seconds, decisions and (bytes, CRC) sent for ``games`` whole games on in-process tables."""
    from moonshot.core.variants import TREND
    from moonshot.protocols.trend import codec as tc
    from moonshot.protocols.trend import seat as ts
    from moonshot.runtime.table import Table

    encode = tc.encode_frame if shared else json.JSONEncoder(separators=(",", ":")).encode
    saved = ts.entry_cache
    if not shared:
        ts.entry_cache = lambda table: None  # type: ignore[assignment,return-value]  # the old path
    try:
        rng = random.Random(7)
        infos = [tc.PlayerInfo(str(i + 1), f"bench{i + 1}") for i in range(4)]
        cards = sent = crc = 0
        cpu = time.process_time()
        for g in range(games):
            peers = [SinkPeer(encode, rng) for _ in range(4)]
            seats = [ts.TrendSeat(p, c, infos) for c, p in enumerate(peers)]  # type: ignore[arg-type]
            for p, seat in zip(peers, seats, strict=True):
                p.seat = seat
            # a fixed id and salt: the commitment in new_game is then the same bytes both ways
            meta = {"deal_salt": f"{g:032x}"}
            table = Table(TREND, seats, seed=g, table_id=f"bench{g}", names=[i.name for i in infos], meta=meta)
            table.start()
            await table.done
            cards += 52 * (table.game.deal_index + 1)
            sent += sum(p.bytes for p in peers)
            for p in peers:
                crc = zlib.crc32(p.crc.to_bytes(4, "big"), crc)
        cpu = time.process_time() - cpu
    finally:
        ts.entry_cache = saved
    return cpu, round(cards * (1 + 3 / 52)), (sent, crc)


def inprocess(games: int, rounds: int) -> None:
    print(
        f"== the server's work per decision in process (table, codec, encoding, parsing; no sockets), "
        f"{games} games a round, best of {rounds} (load before: {load()})"
    )
    best: dict[bool, float] = {}
    sizes: dict[bool, tuple[int, int]] = {}
    for _ in range(rounds):
        for shared in (False, True):
            cpu, decisions, sent = asyncio.run(inprocess_games(games, shared))
            best[shared] = min(best.get(shared, float("inf")), cpu / decisions)
            sizes[shared] = sent
    assert sizes[False] == sizes[True], f"the two ways sent different bytes: {sizes}"
    print(f"   per chair (anchor: dicts + json for every chair): {best[False] * 1e6:.0f} µs a decision")
    print(
        f"   shared entries + encode_frame:                  {best[True] * 1e6:.0f} µs a decision "
        f"({best[False] / best[True]:.2f}x less CPU; the same {sizes[True][0]} bytes sent, CRC {sizes[True][1]:08x}); "
        f"load after: {load()}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--match", action="store_true", help="only the 4-game match on the node")
    ap.add_argument("--serve", action="store_true", help="only the many-tables run in moonshot serve")
    ap.add_argument("--loops", type=int, default=3, help="matches to play (the best is reported)")
    ap.add_argument("--tables", type=int, default=500)
    ap.add_argument("--think", type=float, default=1.0, help="seconds a bot thinks before a card")
    ap.add_argument("--duration", type=float, default=60.0, help="seconds measured after the warm-up")
    ap.add_argument("--procs", type=int, default=2, help="client processes")
    ap.add_argument("--asgi", action="store_true", help="--serve: the listener under uvicorn (the anchor)")
    ap.add_argument(
        "--compare", action="store_true", help="--serve: ASGI (anchor) and lean, interleaved --loops times each"
    )
    ap.add_argument("--inprocess", action="store_true", help="only the server's work per decision, in process")
    ap.add_argument("--games", type=int, default=10, help="--inprocess: games a round")
    ap.add_argument("--rounds", type=int, default=3, help="--inprocess: rounds (the best is reported)")
    args = ap.parse_args()
    both = not args.match and not args.serve and not args.inprocess
    if args.inprocess or both:
        inprocess(args.games, args.rounds)
    if args.match or both:
        match(args.loops)
    if args.serve and args.compare:
        compare(args.tables, args.think, args.duration, args.procs, args.loops)
    elif args.serve or both:
        serve(args.tables, args.think, args.duration, args.procs, args.asgi)


if __name__ == "__main__":
    main()
