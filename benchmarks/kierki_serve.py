"""Kierki in ``moonshot serve`` against the standalone ``kierki-server`` (the anchor), same clients.

Lean clients (asyncio, one process, four connections per table, each following its seat with
``ClientState`` and playing its lowest legal card at once) play whole 7-deal games on the same
game file. For each row it prints games/s, decisions/s, the round trip from a card sent to the
next ``TRICK`` received at that table (p50/p99), and the server's CPU time per decision (from
``/proc/PID/stat``), with the 1-minute load average. The anchor row is one game on
``kierki-server`` (its game report printed to /dev/null); ``serve`` rows run N tables at once on
one ``moonshot serve --kierki-port`` process that stores every action in a SQLite file.

    nice python benchmarks/kierki_serve.py --tables 1 10 100
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from moonshot.core.cards import card_list
from moonshot.protocols.kierki.auto import ClientState, legal_plays
from moonshot.protocols.kierki.codec import LineBuffer, Trick, encode, parse_message
from moonshot.protocols.kierki.gamefile import format_game, random_deals

SEATS = "NESW"
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


class TableClock:
    def __init__(self) -> None:
        self.sent: float | None = None
        self.samples: list[float] = []


async def seat(port: int, s: int, clock: TableClock, counts: list[int], dealt: asyncio.Future[None]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"IAM{SEATS[s]}\r\n".encode())
    state = ClientState(s)
    buf = LineBuffer()
    while True:
        data = await reader.read(65536)
        if not data:
            break
        for line in buf.feed(data):
            if not isinstance(line, str) or not line:
                continue
            msg = parse_message(line)
            state.on_message(msg)
            if not dealt.done():
                dealt.set_result(None)
            if isinstance(msg, Trick):
                now = time.perf_counter()
                if clock.sent is not None:
                    clock.samples.append(now - clock.sent)
                card = card_list(legal_plays(state.hand, state.table))[0]
                clock.sent = time.perf_counter()
                writer.write(encode(Trick(msg.number, (card,))))
                counts[0] += 1
    writer.close()


async def play(port: int, tables: int) -> tuple[float, int, list[float]]:
    clocks = [TableClock() for _ in range(tables)]
    counts = [0]
    start = time.perf_counter()
    loop = asyncio.get_running_loop()
    tasks = []
    for t in range(tables):  # table by table, so the four connections of a clock share a table
        dealt = [loop.create_future() for _ in range(4)]
        tasks += [asyncio.create_task(seat(port, s, clocks[t], counts, dealt[s])) for s in range(4)]
        await asyncio.gather(*dealt)
    await asyncio.gather(*tasks)
    return time.perf_counter() - start, counts[0], [x for c in clocks for x in c.samples]


def wait_port(proc: subprocess.Popen[str], out: Path, pattern: str) -> int:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        m = re.search(pattern, out.read_text())
        if m:
            return int(m.group(1))
        if proc.poll() is not None:
            raise SystemExit(f"the server exited: {out.read_text()}")
        time.sleep(0.05)
    raise SystemExit("the server did not start")


def row(name: str, tables: int, wall: float, decisions: int, samples: list[float], cpu: float) -> str:
    q = statistics.quantiles(samples, n=100) if len(samples) > 1 else [0.0] * 99
    return (
        f"| {name} | {tables} | {tables / wall:.2f} | {decisions / wall:,.0f} | {q[49] * 1000:.2f} | "
        f"{q[98] * 1000:.2f} | {cpu / max(decisions, 1) * 1e6:.0f} | {os.getloadavg()[0]:.1f} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tables", type=int, nargs="+", default=[1, 10, 100])
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="kierki-bench-"))
    game = tmp / "game.txt"
    game.write_text(format_game(random_deals(random.Random(args.seed))))
    print("| server | tables | games/s | decisions/s | p50 ms | p99 ms | server CPU µs/decision | load |")
    print("|---|---|---|---|---|---|---|---|")

    out = tmp / "anchor.out"
    with open(out, "w") as f:
        proc = subprocess.Popen(
            [sys.executable, "-m", "moonshot.protocols.kierki.server", *("-f", str(game), "-p", "0")],
            stdout=f,
            stderr=subprocess.DEVNULL,
            text=True,
        )
    port = wait_port(proc, out, r"listening on port (\d+)")
    cpu0 = cpu_seconds(proc.pid)
    wall, decisions, samples = asyncio.run(play(port, 1))
    cpu = cpu_seconds(proc.pid) - cpu0
    proc.wait(30)
    print(row("kierki-server (anchor)", 1, wall, decisions, samples, cpu), flush=True)

    for n in args.tables:
        out = tmp / f"serve{n}.out"
        db = tmp / f"serve{n}.db"
        with open(out, "w") as f:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "moonshot.cli.main",
                    "serve",
                    *("--no-sessions", "--no-http", "--kierki-port", "0"),
                    *("--kierki-game", str(game), "--db", f"sqlite:///{db}", "--log-level", "warning"),
                    *("--limit", "connections_per_address=1000000"),  # every client is at 127.0.0.1
                    *("--limit", "tables_per_s=1000000", "--limit", "tables_burst=1000000"),
                ],
                stdout=f,
                stderr=subprocess.DEVNULL,
                text=True,
            )
        try:
            port = wait_port(proc, out, r"Kierki protocol on tcp://[\d.]+:(\d+)")
            cpu0 = cpu_seconds(proc.pid)
            wall, decisions, samples = asyncio.run(play(port, n))
            cpu = cpu_seconds(proc.pid) - cpu0
        finally:
            proc.terminate()
            proc.wait(30)
        print(row("moonshot serve", n, wall, decisions, samples, cpu), flush=True)


if __name__ == "__main__":
    main()
