"""Fair sharing: while one connection floods the Sessions server, the others' round trips stay
within twice their quiet value (once, before a fix, p50 went from 3.8 ms to 130 ms).

A real ``moonshot serve`` runs in its own process. A measuring client (in this process) times
``connection_request`` -> ``connection_response`` round trips: first quiet, then while a flooder
process streams each pattern at 3.7 MB/s (the rate of the report; loopback only, bounded in time
and bytes), reconnecting whenever the server drops it. The bound is a ratio against the quiet
value measured in the same run: p99 flooded <= 2 x p99 quiet, where the quiet p99 is taken as at
least 2 ms (scheduling noise on a loaded 2-core machine is of that order; the bug was 100x it).
Each pattern has its own quiet baseline taken just before it, and a pattern that fails is
measured again, up to three windows (on the shared 2-core machine at load 4-10 one window in
five or so misses the bound from scheduling noise alone; a real slowdown, 50-100x, fails them
all). Marked ``slow`` (25 s, and timing-based); the deterministic check of the same property is
``tests/protocols/sessions/test_codec.py``: the decoder examines each byte a bounded number of
times, whatever the flood pattern and however it is cut.
The numbers are printed (``-s``) and are also written in docs/server.md.
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from moonshot.protocols.sessions.codec import StreamDecoder, encode

FLOOD_RATE = 3_700_000  # bytes/s
FLOOD_SECONDS = 4.0
SAMPLES = 1500
SERVE_OPTIONS = ["--bot", "random", "--log-level", "warning", "--no-http"]
NOISE_FLOOR = 0.002  # seconds: the smallest quiet p99 the bound is taken against
ATTEMPTS = 3  # windows per pattern before it counts as failed (see the module docstring)

PATTERNS = {
    "braces": ("b'{'", "b'{' * 65536"),
    "quotes": ("b'{\"a\":'", "b'\"' * 65536"),
}

FLOODER = r"""
import socket, sys, time
port, rate, seconds = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
head, body = eval(sys.argv[4]), eval(sys.argv[5])
end = time.monotonic() + seconds
sent = drops = 0
while time.monotonic() < end:
    try:
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(head)
        while time.monotonic() < end:
            s.sendall(body)
            sent += len(body)
            # paced to `rate` bytes/s over the whole run
            ahead = sent / rate - (seconds - (end - time.monotonic()))
            if ahead > 0:
                time.sleep(ahead)
    except OSError:
        drops += 1  # dropped by the server's rate limit: come back at once
    finally:
        s.close()
print(sent, drops)
"""


@pytest.fixture(scope="module")
def server_port() -> Iterator[int]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "moonshot.cli.main", "serve", "--sessions-port", "0", "--no-db", *SERVE_OPTIONS],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ},
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    port = int(line.rsplit(":", 1)[1].split()[0])
    yield port
    proc.terminate()
    proc.wait(30)


def round_trips(port: int, n: int) -> list[float]:
    """``n`` round trips on one connection, one at a time; seconds each."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    dec = StreamDecoder()
    req = encode({"type": "connection_request"})
    out = []
    try:
        for _ in range(n):
            t0 = time.perf_counter()
            sock.sendall(req)
            got: list[object] = []
            while not got:
                data = sock.recv(4096)
                assert data, "the server closed a quiet client's connection"
                got = dec.feed(data)
            out.append(time.perf_counter() - t0)
            assert got == [{"type": "connection_response", "status": "success"}]
            time.sleep(0.001)  # a client that plays, not one that floods
    finally:
        sock.close()
    return out


def p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[q - 1] if q < 100 else max(values)


def flood(port: int, head: str, body: str) -> tuple[list[float], int, int]:
    """Round trips measured while a flooder process streams ``head`` then ``body`` repeatedly."""
    flooder = subprocess.Popen(
        [sys.executable, "-c", FLOODER, str(port), str(FLOOD_RATE), str(FLOOD_SECONDS), head, body],
        stdout=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.3)  # let the flood start
    flooded = round_trips(port, SAMPLES)
    out, _ = flooder.communicate(timeout=FLOOD_SECONDS + 30)
    sent, drops = (int(x) for x in out.split())
    return flooded, sent, drops


@pytest.mark.slow
def test_a_flooding_connection_does_not_slow_the_others(server_port: int) -> None:
    round_trips(server_port, 50)  # warm up
    report = []
    failures = []
    for name, (head, body) in PATTERNS.items():
        # each pattern gets its own quiet baseline, taken just before; on a shared machine a
        # burst of load from elsewhere can spoil one window, so a failing pattern is measured
        # again (a real slowdown, 50-100x, fails every window)
        for attempt in range(ATTEMPTS):
            quiet = round_trips(server_port, SAMPLES)
            q50, q99 = statistics.median(quiet), p(quiet, 99)
            flooded, sent, drops = flood(server_port, head, body)
            f50, f99 = statistics.median(flooded), p(flooded, 99)
            report.append(
                f"{name} (attempt {attempt + 1}, load {os.getloadavg()[0]:.2f}): quiet p50 {q50 * 1e3:.2f} ms "
                f"p99 {q99 * 1e3:.2f} ms; flooded p50 {f50 * 1e3:.2f} ms p99 {f99 * 1e3:.2f} ms "
                f"({sent / 1e6:.1f} MB sent, dropped {drops} times)"
            )
            assert drops >= 1, "the flooder was never dropped"
            if f99 <= 2 * max(q99, NOISE_FLOOR):
                break
        else:
            failures.append(name)
    print("\n".join(report))
    assert not failures, report
