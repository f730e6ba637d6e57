"""The operator surface: its address, readiness (cached, named failures, draining), the probes on
the public port, the admin routes' extension point and token, and a server that serves them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client import CollectorRegistry
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from moonshot.protocols.sessions.client import Client, RandomPlayer
from moonshot.server.app import ServerApp
from moonshot.server.config import ServerConfig
from moonshot.server.operator import (
    OperatorSurface,
    Probes,
    Readiness,
    parse_operator_address,
)


def test_the_operator_address_is_host_and_port_or_none() -> None:
    assert parse_operator_address("127.0.0.1:9380") == ("127.0.0.1", 9380)
    assert parse_operator_address("[::1]:0") == ("::1", 0)
    assert parse_operator_address("none") is None and parse_operator_address("OFF") is None
    for bad in ("9380", ":9380", "localhost:port", "127.0.0.1:65536", "127.0.0.1:-1"):
        with pytest.raises(ValueError, match="operator address"):
            parse_operator_address(bad)


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.asyncio
async def test_a_flood_of_readiness_probes_runs_one_check_until_the_cache_expires() -> None:
    calls = 0
    release = asyncio.Event()

    async def store() -> bool:
        nonlocal calls
        calls += 1
        await release.wait()
        return True

    clock = _Clock()
    ready = Readiness([("store", store)], ttl=1.5, clock=clock)
    waiters = [asyncio.ensure_future(ready.state()) for _ in range(200)]
    await asyncio.sleep(0)
    release.set()
    states = await asyncio.gather(*waiters)
    assert calls == 1 and all(s.ready for s in states)
    clock.now += 1.0
    assert (await ready.state()).ready and calls == 1  # still cached
    clock.now += 1.0
    assert (await ready.state()).ready and calls == 2  # expired: probed again


@pytest.mark.asyncio
async def test_readiness_names_the_first_failing_check_and_counts_a_timeout_or_error_as_failing() -> None:
    async def ok() -> bool:
        return True

    async def down() -> bool:
        return False

    async def hangs() -> bool:
        await asyncio.sleep(60)
        return True

    async def raises() -> bool:
        raise ConnectionError("redis://:hunter2@10.0.0.5:6379 refused")

    assert (await Readiness([("store", ok), ("redis", down)], ttl=0).state()).body() == {
        "status": "not ready",
        "failing": "redis",
    }
    assert (await Readiness([("store", hangs), ("redis", ok)], ttl=0, timeout=0.05).state()).failing == "store"
    state = await Readiness([("store", ok), ("redis", raises)], ttl=0).state()
    assert state.body() == {"status": "not ready", "failing": "redis"}  # the error's text is not shown
    draining = True
    ready = Readiness([("store", ok)], draining=lambda: draining)
    assert (await ready.state()).failing == "draining"
    draining = False
    assert (await ready.state()).ready


async def _get(app: Any, path: str, headers: dict[str, str] | None = None) -> httpx.Response:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
        return await client.get(path, headers=headers or {})


@pytest.mark.asyncio
async def test_the_probes_answer_on_the_public_app_and_pass_everything_else_on() -> None:
    async def inner(scope: Any, receive: Any, send: Any) -> None:
        await PlainTextResponse("the lobby")(scope, receive, send)

    async def down() -> bool:
        return False

    app = Probes(inner, Readiness([("store", down)], ttl=0))
    r = await _get(app, "/healthz")
    assert r.status_code == 200 and r.json() == {"status": "alive"}
    r = await _get(app, "/readyz")
    assert r.status_code == 503 and r.json() == {"status": "not ready", "failing": "store"}
    assert (await _get(app, "/metrics")).text == "the lobby"
    assert (await _get(app, "/healthz/x")).text == "the lobby"


@pytest.mark.asyncio
async def test_admin_routes_plug_into_routes_and_ask_for_the_operator_token() -> None:
    surface = OperatorSurface(CollectorRegistry(), Readiness(), token="s3cret-token")

    async def drain(request: Request) -> Response:
        if not surface.authorized(request):
            return JSONResponse({"error": "operator token required"}, status_code=401)
        return JSONResponse({"draining": True})

    surface.routes.append(Route("/admin/drain", drain, methods=["GET"]))
    app = surface.app()
    assert (await _get(app, "/admin/drain")).status_code == 401
    assert (await _get(app, "/admin/drain", {"Authorization": "Bearer wrong"})).status_code == 401
    assert (await _get(app, "/admin/drain", {"Authorization": "Basic s3cret-token"})).status_code == 401
    assert (await _get(app, "/admin/drain", {"Authorization": "Bearer s3cret-token"})).json() == {"draining": True}
    surface.token = None  # no token configured: no admin request is ever authorized
    assert (await _get(app, "/admin/drain", {"Authorization": "Bearer "})).status_code == 401
    assert (await _get(app, "/metrics")).status_code == 200


@pytest.mark.asyncio
async def test_a_server_serves_metrics_health_and_readiness_and_drains(tmp_path: Path) -> None:
    cfg = ServerConfig(
        sessions_port=0,
        http_port=0,
        db_url=f"sqlite+aiosqlite:///{tmp_path / 'g.db'}",
        bot="random",
        fill_wait=0.05,
        operator_address=("127.0.0.1", 0),
    )
    app = ServerApp(cfg)
    await app.start()
    try:
        assert app.operator is not None and app.operator_port and app.operator.host == "127.0.0.1"
        client = await Client.connect("127.0.0.1", app.sessions_port or 0)
        await asyncio.wait_for(client.play(RandomPlayer()), 60)
        await client.close()
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.operator_port}") as http:
            r = await http.get("/metrics")
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
            assert 'moonshot_decisions_total{protocol="sessions"}' in r.text
            assert "moonshot_games_finished_total 1.0" in r.text
            assert (await http.get("/healthz")).json() == {"status": "alive"}
            assert (await http.get("/readyz")).json() == {"status": "ready"}
            app.draining = True
            r = await http.get("/readyz")
            assert r.status_code == 503 and r.json() == {"status": "not ready", "failing": "draining"}
            assert "moonshot_draining 1.0" in (await http.get("/metrics")).text
            app.draining = False
            app.readiness.ttl = 0
            assert app.recorder is not None
            app.recorder.available = False  # the writer is in an outage
            r = await http.get("/readyz")
            assert r.status_code == 503 and r.json()["failing"] == "store"
            app.recorder.available = True
            assert (await http.get("/readyz")).status_code == 200
    finally:
        await app.stop()
    assert app.operator._task is None  # stopped with the server


@pytest.mark.asyncio
async def test_a_busy_default_operator_address_is_logged_not_fatal_but_an_asked_for_one_is() -> None:
    first = ServerApp(ServerConfig(sessions_port=None, db_url=None, operator_address=("127.0.0.1", 0)))
    await first.start()
    try:
        taken = ("127.0.0.1", first.operator_port or 0)
        second = ServerApp(
            ServerConfig(sessions_port=None, db_url=None, operator_address=taken, operator_required=False)
        )
        await second.start()
        assert second.operator is None
        await second.stop()
        third = ServerApp(ServerConfig(sessions_port=None, db_url=None, operator_address=taken))
        with pytest.raises(OSError):
            await third.start()
        await third.stop()
    finally:
        await first.stop()


@pytest.mark.asyncio
async def test_in_a_cluster_metrics_count_the_live_nodes_and_readiness_pings_redis() -> None:
    import os
    import secrets

    redis = pytest.importorskip("redis.asyncio")
    url = os.environ.get("MOONSHOT_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
    probe = redis.Redis.from_url(url, socket_connect_timeout=2)
    try:
        await probe.ping()
    except Exception as e:
        pytest.skip(f"Redis not reachable at {url} ({e}); set MOONSHOT_TEST_REDIS_URL")
    prefix = f"moonshot-test-{secrets.token_hex(4)}:"
    apps = [
        ServerApp(
            ServerConfig(
                sessions_port=0,
                db_url=None,
                redis_url=url,
                cluster_prefix=prefix,
                lease=1.0,
                operator_address=("127.0.0.1", 0),
            )
        )
        for _ in range(2)
    ]
    try:
        for app in apps:
            await app.start()
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{apps[0].operator_port}") as http:
            for _ in range(200):  # the keeper refreshes the live nodes every lease/3
                if "moonshot_cluster_nodes 2.0" in (await http.get("/metrics")).text:
                    break
                await asyncio.sleep(0.05)
            assert "moonshot_cluster_nodes 2.0" in (await http.get("/metrics")).text
            assert (await http.get("/readyz")).json() == {"status": "ready"}

            class Unreachable:
                async def ping(self) -> bool:
                    raise ConnectionError("Connection refused")

            cluster = apps[0].cluster
            real, cluster.redis = cluster.redis, Unreachable()
            apps[0].readiness.ttl = 0
            try:
                r = await http.get("/readyz")
                assert r.status_code == 503 and r.json() == {"status": "not ready", "failing": "redis"}
            finally:
                cluster.redis = real
    finally:
        for app in apps:
            await app.stop()
        keys = [k async for k in probe.scan_iter(match=f"{prefix}*")]
        if keys:
            await probe.delete(*keys)
        await probe.aclose()
