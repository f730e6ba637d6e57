"""Not a test module: a real ``moonshot serve`` process that the tests watch from outside.

``serve_process`` starts ``python -m moonshot.cli.main serve`` on free loopback ports (Sessions,
HTTP and the operator surface) with a temporary SQLite store, reads the addresses it announces on
stdout, and stops it with SIGINT (then a kill) unless it has already left on its own. ``Served``
holds those addresses and runs ``moonshot admin`` against the server's operator surface.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class Served:
    def __init__(self, proc: subprocess.Popen[str], lines: queue.Queue[str]) -> None:
        self.proc = proc
        self.lines = lines
        self.sessions = self.http = self.operator = self.token = ""

    def read_until(self, pattern: str, timeout: float = 120.0) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            if m := re.search(pattern, line):
                return m
        raise AssertionError(f"the server never said {pattern!r}")

    def admin(self, *args: str, token: bool = True, wrong: str | None = None) -> subprocess.CompletedProcess[str]:
        """``moonshot admin ARGS`` against this server; ``token=False`` leaves out ``--token-file``
        and ``wrong`` sets ``MOONSHOT_OPERATOR_TOKEN`` (run from ``/``, where no token is found)."""
        cmd = [sys.executable, "-m", "moonshot.cli.main", "admin", "--operator", self.operator]
        if token:
            cmd += ["--token-file", self.token]
        env = {k: v for k, v in os.environ.items() if k != "MOONSHOT_OPERATOR_TOKEN"}
        if wrong is not None:
            env["MOONSHOT_OPERATOR_TOKEN"] = wrong
        return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=120, env=env, cwd="/")


@contextmanager
def serve_process(tmp_path: Path, *, fill_wait: float, log_level: str) -> Iterator[Served]:
    """``moonshot serve`` with its games in ``tmp_path/games.db`` and random bots filling a table
    after ``fill_wait`` seconds; stopped on the way out."""
    cmd = [sys.executable, "-m", "moonshot.cli.main", "serve", "--sessions-port", "0", "--http-port", "0"]
    cmd += ["--operator-address", "127.0.0.1:0", "--db", f"sqlite:///{tmp_path / 'games.db'}"]
    cmd += ["--fill-wait", str(fill_wait), "--bot", "random", "--log-level", log_level]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    s = Served(proc, lines)
    try:
        s.sessions = s.read_until(r"tcp://([\d.]+:\d+)").group(1)
        s.http = s.read_until(r"open http://([\d.]+:\d+)/lobby").group(1)
        s.operator = s.read_until(r"operator surface on http://([\d.]+:\d+)/metrics").group(1)
        s.token = s.read_until(r"operator token \(for moonshot admin\) in (\S+)").group(1)
        yield s
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
