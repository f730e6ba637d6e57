"""A real `moonshot serve` watched from outside: a game played over Sessions, then its operator
surface scraped, the text checked by Debian's `promtool check metrics`, and a real Prometheus
(started with deploy/prometheus/prometheus.yml, pointed at the operator port) that reports the
target up and a moonshot series."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from e2e.servekit import Served, serve_process

ROOT = Path(__file__).resolve().parents[2]
SCRAPE_CONFIG = ROOT / "deploy" / "prometheus" / "prometheus.yml"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    with serve_process(tmp_path, fill_wait=0.1, log_level="error") as s:
        yield s


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def sample(text: str, name: str, labels: str = "") -> float | None:
    m = re.search(rf"^{re.escape(name + labels)} (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def play_one_game(address: str) -> None:
    cmd = [sys.executable, "-m", "moonshot.cli.main", "bot", "--connect", address, "--policy", "random"]
    done = subprocess.run([*cmd, "--sessions", "1", "--games", "1"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def wait_for(check: object, timeout: float = 60.0, what: str = "") -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()  # type: ignore[operator]
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_played_game_shows_in_metrics_that_promtool_accepts(served: Served, tmp_path: Path) -> None:
    play_one_game(served.sessions)
    base = f"http://{served.operator}"

    def finished() -> str | None:
        text = get(base + "/metrics")[1]
        return text if sample(text, "moonshot_games_finished_total") == 1.0 else None

    text = str(wait_for(finished, what="the finished game in /metrics"))
    assert (sample(text, "moonshot_decisions_total", '{protocol="sessions"}') or 0) >= 52
    assert (sample(text, "moonshot_decision_round_trip_seconds_count", '{protocol="sessions"}') or 0) >= 13
    assert (sample(text, "moonshot_store_commit_seconds_count") or 0) >= 1
    assert sample(text, "moonshot_store_available") == 1.0
    assert get(base + "/healthz") == (200, '{"status":"alive"}')
    assert get(base + "/readyz") == (200, '{"status":"ready"}')
    assert get(f"http://{served.http}/readyz") == (200, '{"status":"ready"}')
    assert get(f"http://{served.http}/metrics")[0] == 404  # never on the public port

    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool not installed (Debian package prometheus; `make prometheus` installs it)")
    lint = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_real_prometheus_scrapes_the_operator_port_with_the_shipped_config(served: Served, tmp_path: Path) -> None:
    prometheus = shutil.which("prometheus")
    if prometheus is None:
        pytest.skip("prometheus not installed (Debian package prometheus; `make prometheus` installs it)")
    config = SCRAPE_CONFIG.read_text()
    assert '"127.0.0.1:9380"' in config and "scrape_interval: 15s" in config
    config = config.replace('"127.0.0.1:9380"', f'"{served.operator}"')
    config = config.replace("scrape_interval: 15s", "scrape_interval: 1s")
    (tmp_path / "prometheus.yml").write_text(config)
    port = _free_port()
    proc = subprocess.Popen(
        [
            prometheus,
            f"--config.file={tmp_path / 'prometheus.yml'}",
            f"--storage.tsdb.path={tmp_path / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    api = f"http://127.0.0.1:{port}/api/v1"
    try:
        play_one_game(served.sessions)

        def target_up() -> bool:
            try:
                status, body = get(api + "/targets")
            except OSError:
                return False  # not listening yet
            targets = json.loads(body)["data"]["activeTargets"] if status == 200 else []
            return any(t["scrapeUrl"].startswith(f"http://{served.operator}/") and t["health"] == "up" for t in targets)

        wait_for(target_up, 90, "Prometheus to report the target up")
        query = api + "/query?" + urllib.parse.urlencode({"query": 'moonshot_decisions_total{job="moonshot"}'})

        def series() -> list[object]:
            return list(json.loads(get(query)[1])["data"]["result"])

        found = wait_for(series, 60, "a moonshot series in Prometheus")
        assert float(found[0]["value"][1]) > 0  # type: ignore[index]
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
