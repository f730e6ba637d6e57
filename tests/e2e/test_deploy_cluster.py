"""The many-hosts deployment as shipped: ``deploy/nginx/moonshot-cluster.conf`` (rendered with free
ports, a test CA's certificate and files in a temporary directory) and ``deploy/nginx/moonshot-pool``
(the readiness check that writes its upstreams) in front of two real ``moonshot serve --redis
--db postgresql://...`` nodes, started as ``deploy/systemd/moonshot@.service`` starts them (each
its own ports and operator address, one operator token file, trusting the proxy).

* Every shipped nginx file passes ``nginx -t`` (placeholder certificates made by the test).
* A person and three bots play a web game to the end through the proxy, every request of it
  landing on whichever node nginx picks; the node hosting the game is drained with the real
  ``moonshot admin drain``: its ``/readyz`` says ``draining`` at once, moonshot-pool marks it down
  and reloads nginx, after which every request through the proxy reaches the other node (its
  ``/readyz`` always 200, a new game accepted), the drained node's game is played to its end
  through the other node (forwarded to its host by the cluster), and the drained node exits 0.
* Two Sessions clients through the proxy's Sessions port land on different nodes, each admitted
  under its own address (the PROXY protocol), and their sessions meet at one table and finish.

Skipped, with the reason, without nginx and its stream module (``make nginx``), curl, Redis or
PostgreSQL (each test uses its own Redis key prefix and PostgreSQL database, and removes both).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import secrets
import shutil
import ssl
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from moonshot.protocols.sessions.client import Client, RandomPlayer

from .nginx import HOST, render
from .test_cluster import Cluster, check_record, cluster, free_port, stop_node, stored  # noqa: F401 (a fixture)
from .test_proxy_tls import need_nginx, wait_port
from .test_turbo_play import Person, check_game

pytestmark = pytest.mark.timeout(600)

ROOT = Path(__file__).resolve().parents[2]
NGINX_DIR = ROOT / "deploy" / "nginx"
CLUSTER_CONF = NGINX_DIR / "moonshot-cluster.conf"
POOL = NGINX_DIR / "moonshot-pool"
LETSENCRYPT = "/etc/letsencrypt/live/moonshot.example.org/"


def certificates(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A test CA and a certificate for ``localhost``/127.0.0.1: (chain, key, the CA's file)."""
    import trustme

    ca = trustme.CA()
    cert = ca.issue_cert(HOST, "127.0.0.1")
    chain, key, ca_file = tmp_path / "fullchain.pem", tmp_path / "privkey.pem", tmp_path / "ca.pem"
    chain.write_bytes(b"".join(c.bytes() for c in cert.cert_chain_pems))
    key.write_bytes(cert.private_key_pem.bytes())
    ca_file.write_bytes(ca.cert_pem.bytes())
    return chain, key, ca_file


def local_files(tmp_path: Path, chain: Path, key: Path) -> dict[str, str]:
    """What every shipped nginx file must have replaced to run as this user in ``tmp_path``."""
    logs = tmp_path / "nginx"
    logs.mkdir(exist_ok=True)
    temp = "".join(
        f"    {what}_temp_path {logs / what};\n" for what in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    return {
        "user www-data;": "user root;" if os.geteuid() == 0 else "",
        "error_log /var/log/nginx/moonshot.error.log;": f"error_log {logs / 'error.log'} info;",
        "access_log /var/log/nginx/moonshot.access.log;": f"access_log {logs / 'access.log'};\n{temp}",
        f"{LETSENCRYPT}fullchain.pem": str(chain),
        f"{LETSENCRYPT}privkey.pem": str(key),
    }


def pool_env(nodes: Path, pool: Path, reload: str) -> dict[str, str]:
    return {**os.environ, "MOONSHOT_NODES": str(nodes), "MOONSHOT_POOL_DIR": str(pool), "MOONSHOT_POOL_RELOAD": reload}


def run_pool(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    if shutil.which("curl") is None:
        pytest.skip("moonshot-pool needs curl: apt-get install curl")
    return subprocess.run(["sh", str(POOL)], env=env, capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize("name", sorted(p.name for p in NGINX_DIR.glob("*.conf")))
def test_every_shipped_nginx_file_passes_nginx_t(tmp_path: Path, name: str) -> None:
    nginx = need_nginx()
    chain, key, _ = certificates(tmp_path)
    values = local_files(tmp_path, chain, key)
    text = (NGINX_DIR / name).read_text()
    pid = re.search(r"^pid (\S+);", text, re.M)
    assert pid, f"{name} names no pid file"
    values[pid.group(0)] = f"pid {tmp_path / 'nginx.pid'};"
    if "/etc/nginx/moonshot-pool/" in text:  # the cluster's upstreams, as moonshot-pool writes them
        nodes = tmp_path / "nodes"
        nodes.write_text("127.0.0.1 7381 8081 40411 5011\n127.0.0.1 7382 8082 40412 5012\n")
        pool = tmp_path / "pool"
        done = run_pool(pool_env(nodes, pool, "true"))
        assert done.returncode == 0, done.stderr
        values["/etc/nginx/moonshot-pool/"] = f"{pool}/"
    conf = tmp_path / name
    conf.write_text(render(text, values))
    check = subprocess.run([nginx, "-t", "-c", str(conf)], capture_output=True, text=True, check=False)
    assert check.returncode == 0 and "test is successful" in check.stderr, check.stderr
    # and nginx -t is no formality: a broken line is caught
    conf.write_text(render(text, values).replace("proxy_protocol on;", "proxy_protocol sometimes;", 1))
    assert subprocess.run([nginx, "-t", "-c", str(conf)], capture_output=True, check=False).returncode != 0


def test_moonshot_pool_marks_a_node_that_is_not_ready_down(tmp_path: Path) -> None:
    """Nothing listens at the nodes' ports: every node is down, so every node is listed (nginx
    still reaches games under way); a malformed line is refused and leaves the files as they were."""
    nodes, pool = tmp_path / "nodes", tmp_path / "pool"
    first, second = free_port(), free_port()
    nodes.write_text(f"# two nodes\n127.0.0.1 {first} 8081 40411 5011\n\n127.0.0.1 {second} 8082 40412 5012  # b\n")
    done = run_pool(pool_env(nodes, pool, f"touch {tmp_path / 'reloaded'}"))
    assert done.returncode == 0, done.stderr
    assert "ready=0" in done.stderr and (tmp_path / "reloaded").exists()
    sessions = (pool / "sessions.conf").read_text().splitlines()
    assert sessions == [
        "server 127.0.0.1:40411 max_fails=1 fail_timeout=10s;",
        "server 127.0.0.1:40412 max_fails=1 fail_timeout=10s;",
    ]
    (tmp_path / "reloaded").unlink()
    assert run_pool(pool_env(nodes, pool, f"touch {tmp_path / 'reloaded'}")).returncode == 0
    assert not (tmp_path / "reloaded").exists()  # nothing changed: no reload
    nodes.write_text("127.0.0.1 7381 8081\n")
    bad = run_pool(pool_env(nodes, pool, "true"))
    assert bad.returncode != 0 and "expected ADDRESS HTTP_PORT TREND_PORT SESSIONS_PORT KIERKI_PORT" in bad.stderr
    assert (pool / "sessions.conf").read_text().splitlines() == sessions
    assert sorted(p.name for p in pool.iterdir()) == ["http.conf", "kierki.conf", "sessions.conf", "trend.conf"]


def test_the_cluster_units_verify_cleanly(tmp_path: Path) -> None:
    """moonshot@.service and moonshot-pool.service as systemd reads them (install paths pointed at
    this checkout: verify checks that the programs exist)."""
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is missing (Debian: apt-get install systemd)")
    venv = Path(sys.executable).parent.parent
    for name in ("moonshot@.service", "moonshot-pool.service"):
        text = (ROOT / "deploy" / "systemd" / name).read_text()
        text = text.replace("/opt/moonshot/.venv", str(venv)).replace("/usr/local/bin/moonshot-pool", str(POOL))
        (tmp_path / name).write_text(text)
    done = subprocess.run(
        [analyze, "verify", "./moonshot@1.service", "./moonshot-pool.service"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and done.stdout.strip() == "" and done.stderr.strip() == "", done.stderr
    broken = (tmp_path / "moonshot@.service").read_text().replace("Restart=always", "Restart=sometimes")
    (tmp_path / "moonshot@.service").write_text(broken)
    assert (
        "restart specifier"
        in subprocess.run(
            [analyze, "verify", "./moonshot@1.service"], cwd=tmp_path, capture_output=True, text=True, check=False
        ).stderr
    )


# ------------------------------------------------------------------------- the cluster behind nginx
@dataclass
class ClusterNode:
    proc: asyncio.subprocess.Process
    http: int
    trend: int
    sessions: int
    kierki: int
    operator: int
    log: Path

    def line(self) -> str:
        """The node's line in moonshot-pool's nodes file."""
        return f"127.0.0.1 {self.http} {self.trend} {self.sessions} {self.kierki}"


async def start_cluster_node(c: Cluster, name: str, token: Path) -> ClusterNode:
    """``moonshot serve`` as moonshot@.service runs it: the cluster's options, then the node's."""
    http, trend, sessions, kierki, operator = (free_port() for _ in range(5))
    log = c.tmp / f"{name}.log"
    cluster_args = ["--db", c.db, "--redis", c.redis_url, "--trusted-proxy", "127.0.0.1"]
    cluster_args += ["--operator-token-file", str(token), "--log-level", "info"]
    node_args = ["--host", "127.0.0.1", "--http-port", str(http), "--trend-port", str(trend)]
    node_args += ["--sessions-port", str(sessions), "--kierki-port", str(kierki)]
    node_args += ["--operator-address", f"127.0.0.1:{operator}"]
    test_args = ["--cluster-prefix", c.prefix, "--lease", "3", "--bot", "random", "--move-timeout", "30"]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "moonshot.cli.main",
        "serve",
        *cluster_args,
        *node_args,
        *test_args,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=log.open("wb"),
        cwd=c.tmp,
    )
    node = ClusterNode(proc, http, trend, sessions, kierki, operator, log)
    deadline = time.monotonic() + 240
    async with httpx.AsyncClient(timeout=5) as web:
        while True:  # ready: its store and Redis answer
            assert proc.returncode is None, f"{name} exited: {log.read_text(errors='replace')[-3000:]}"
            with contextlib.suppress(httpx.HTTPError):
                if (await web.get(f"http://127.0.0.1:{http}/readyz")).status_code == 200:
                    return node
            assert time.monotonic() < deadline, f"{name} never ready: {log.read_text(errors='replace')[-3000:]}"
            await asyncio.sleep(0.2)


def admin(node: ClusterNode, token: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real ``moonshot admin`` against a node's operator address."""
    cmd = [sys.executable, "-m", "moonshot.cli.main", "admin", "--operator", f"127.0.0.1:{node.operator}"]
    return subprocess.run(
        [*cmd, "--token-file", str(token), *args], capture_output=True, text=True, timeout=60, check=False
    )


@dataclass
class Front:
    https: int
    sessions: int
    tls: ssl.SSLContext
    pool_env: dict[str, str]
    pool: Path

    def client(self, **kw: object) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=f"https://{HOST}:{self.https}", verify=self.tls, timeout=60, **kw)  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def nginx_front(tmp_path: Path, nodes: list[ClusterNode]) -> AsyncIterator[Front]:
    """moonshot-cluster.conf over ``nodes``, its upstreams written by moonshot-pool."""
    nginx = need_nginx()
    chain, key, ca_file = certificates(tmp_path)
    https, plain, sessions, kierki = (free_port() for _ in range(4))
    pool = tmp_path / "pool"
    nodes_file = tmp_path / "nodes"
    nodes_file.write_text("".join(f"{n.line()}\n" for n in nodes))
    conf_file = tmp_path / "nginx.conf"
    values = local_files(tmp_path, chain, key)
    values |= {
        "worker_processes auto;": "worker_processes 1;",  # one worker: its balancing is what the test sees
        "pid /run/nginx.pid;": f"pid {tmp_path / 'nginx.pid'};",
        "listen 80;": f"listen 127.0.0.1:{plain};",
        "listen 443 ssl;": f"listen 127.0.0.1:{https} ssl;",
        "listen 40405;": f"listen 127.0.0.1:{sessions};",
        "listen 5000;": f"listen 127.0.0.1:{kierki};",
        "/etc/nginx/moonshot-pool/": f"{pool}/",
    }
    conf_file.write_text(render(CLUSTER_CONF.read_text(), values))
    env = pool_env(nodes_file, pool, f"{nginx} -c {conf_file} -s reload")
    first = run_pool({**env, "MOONSHOT_POOL_RELOAD": "true"})  # before nginx starts: the files must exist
    assert first.returncode == 0 and "ready=2" in first.stderr, first.stderr
    check = subprocess.run([nginx, "-t", "-q", "-c", str(conf_file)], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stderr
    proc = subprocess.Popen(
        [nginx, "-c", str(conf_file), "-g", "daemon off;"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        await wait_port(https, proc, tmp_path / "nginx" / "error.log")
        yield Front(https, sessions, ssl.create_default_context(cafile=str(ca_file)), env, pool)
    finally:
        proc.terminate()
        try:
            await asyncio.to_thread(proc.wait, 10)
        except subprocess.TimeoutExpired:
            proc.kill()
            await asyncio.to_thread(proc.wait)


async def readyz_through(front: Front, times: int) -> list[int]:
    """``/readyz`` through the proxy ``times`` times, each on a new connection (one node each)."""
    codes = []
    for _ in range(times):
        async with front.client() as web:
            codes.append((await web.get("/readyz")).status_code)
    return codes


@pytest.mark.asyncio
async def test_a_drained_node_leaves_the_pool_while_its_game_plays_to_the_end_through_the_other(
    cluster: Cluster,  # noqa: F811 (the fixture)
) -> None:
    need_nginx()
    if shutil.which("curl") is None:
        pytest.skip("moonshot-pool needs curl: apt-get install curl")
    token = cluster.tmp / "operator-token"
    token.write_text(secrets.token_hex(24))
    token.chmod(0o600)
    a = await start_cluster_node(cluster, "a", token)
    b = await start_cluster_node(cluster, "b", token)
    nodes = [a, b]
    try:
        async with nginx_front(cluster.tmp, nodes) as front, front.client(cookies={"name": "ann"}) as ann:
            assert sorted(await readyz_through(front, 4)) == [200, 200, 200, 200]
            # a game made, filled with bots and started through the proxy: each request on either node
            r = await ann.post("/lobby/new", json={"variant": "standard"})
            assert r.status_code == 200, r.text
            gid = str(r.json())
            for _ in range(3):
                r = await ann.post("/lobby/add_bot", json={"id": gid, "algorithm": "random"})
                assert r.status_code == 200, r.text
            running: dict[int, list[object]] = {}
            deadline = time.monotonic() + 60
            while not any(running.values()):  # the node hosting the game runs its table
                for n in nodes:
                    done = admin(n, token, "--json", "tables")
                    assert done.returncode == 0, done.stderr
                    running[n.operator] = json.loads(done.stdout)["tables"]
                assert time.monotonic() < deadline, running
                await asyncio.sleep(0.2)
            host, other = (a, b) if running[a.operator] else (b, a)
            assert not running[other.operator]

            # drain the host: not ready at once, the other still ready
            done = admin(host, token, "drain")
            assert done.returncode == 0 and "draining: 1 running games finish" in done.stdout, done.stderr
            async with httpx.AsyncClient(timeout=10) as direct:
                r = await direct.get(f"http://127.0.0.1:{host.http}/readyz")
                assert (r.status_code, r.json()) == (503, {"status": "not ready", "failing": "draining"})
                assert (await direct.get(f"http://127.0.0.1:{other.http}/readyz")).status_code == 200
            # until moonshot-pool runs, nginx still sends the drained node its share
            assert 503 in await readyz_through(front, 4)
            done = run_pool(front.pool_env)
            assert done.returncode == 0 and "nodes=2 ready=1" in done.stderr, done.stderr
            http_pool = (front.pool / "http.conf").read_text()
            assert f"server 127.0.0.1:{host.http} down;" in http_pool
            assert f"server 127.0.0.1:{other.http} max_fails=1 fail_timeout=10s;" in http_pool
            assert f"server 127.0.0.1:{host.sessions} down;" in (front.pool / "sessions.conf").read_text()
            # once nginx has reloaded, every request reaches the other node
            deadline = time.monotonic() + 60
            while (codes := await readyz_through(front, 8)) != [200] * 8:
                assert time.monotonic() < deadline, codes
            async with front.client(cookies={"name": "bob"}) as bob:
                r = await bob.post("/lobby/new", json={"variant": "standard"})
                assert r.status_code == 200, r.text  # the drained node would answer 503

            # the drained node's game goes on, every request of it through the other node
            person = Person(ann, gid, "ann", seed=5)
            events = await asyncio.wait_for(person.play(), 300)
            assert person.errors == []
            check_game(events, "standard")
            assert await asyncio.wait_for(host.proc.wait(), 120) == 0  # its last game over: exit 0
            assert "event=drained" in host.log.read_text(errors="replace")
            assert other.proc.returncode is None
            deadline = time.monotonic() + 60
            while (r := await ann.get(f"/api/games/{gid}")).json().get("status") != "finished":
                assert time.monotonic() < deadline, r.text
                await asyncio.sleep(0.2)
            assert await readyz_through(front, 2) == [200, 200]
    finally:
        for n in nodes:
            await stop_node(n)  # type: ignore[arg-type]


@pytest.mark.asyncio
async def test_sessions_clients_through_the_proxy_reach_both_nodes_and_meet_at_one_table(
    cluster: Cluster,  # noqa: F811 (the fixture)
) -> None:
    """The stream upstream over the nodes' Sessions ports, with the PROXY protocol: two clients'
    connections (from 127.0.0.2 and 127.0.0.3) land on different nodes, each node admits its
    client under the client's own address, and their four sessions meet at one table and finish."""
    need_nginx()
    if shutil.which("curl") is None:
        pytest.skip("moonshot-pool needs curl: apt-get install curl")
    token = cluster.tmp / "operator-token"
    token.write_text(secrets.token_hex(24))
    token.chmod(0o600)
    a = await start_cluster_node(cluster, "a", token)
    b = await start_cluster_node(cluster, "b", token)
    try:
        async with nginx_front(cluster.tmp, [a, b]) as front:
            two = await Client.connect("127.0.0.1", front.sessions, local_addr=("127.0.0.2", 0))
            three = await Client.connect("127.0.0.1", front.sessions, local_addr=("127.0.0.3", 0))
            try:
                results = await asyncio.wait_for(
                    asyncio.gather(*(c.play(RandomPlayer(), lobby_code="proxied") for c in (two, three, two, three))),
                    240,
                )
            finally:
                await two.close()
                await three.close()
            assert all(r.scores == results[0].scores for r in results) and len(results[0].scores) == 4
            check_record(await stored(cluster.db, lambda r: r.status == "finished"), results[0].scores)
        # least_conn: the second connection went to the node without one, and each node knew its
        # client by the address the PROXY header gave, not nginx's
        logs = [n.log.read_text(errors="replace") for n in (a, b)]
        seen = [{ip for ip in ("127.0.0.2", "127.0.0.3") if f"event=connected peer={ip}:" in text} for text in logs]
        assert sorted(seen, key=sorted) == [{"127.0.0.2"}, {"127.0.0.3"}], seen
    finally:
        for n in (a, b):
            await stop_node(n)  # type: ignore[arg-type]
