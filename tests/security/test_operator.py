"""The operator surface against a hostile client on the public port: no metrics there, health and
readiness that say nothing about players, games, the store or the secrets, and an operator
address that is loopback unless the operator says otherwise."""

from __future__ import annotations

import asyncio
import ipaddress
import json
from pathlib import Path

import httpx
import pytest

from moonshot.cli.commands import serve_cmd
from moonshot.protocols.sessions.client import Client, RandomPlayer
from moonshot.server.operator import parse_operator_address
from security.attack import serve

pytestmark = pytest.mark.asyncio

SECRET = "operator-tests-cookie-key"


async def test_metrics_and_admin_paths_are_not_served_on_the_public_port(tmp_path: Path) -> None:
    async with serve(tmp_path, operator_address=("127.0.0.1", 0), secret=SECRET) as app:
        assert app.operator_port and app.operator_port != app.http_port
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}", follow_redirects=True) as public:
            assert (await public.get("/metrics")).status_code == 404
            for path in ("/metrics/", "/api/metrics", "/admin/drain", "//metrics", "/metrics?format=prometheus"):
                r = await public.get(path)  # (a path the web app does not know may lead to the lobby)
                assert "# TYPE moonshot" not in r.text and "moonshot_decisions" not in r.text, path
            r = await public.request("HEAD", "/metrics")
            assert r.status_code in (404, 405)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.operator_port}") as operator:
            assert (await operator.get("/metrics")).status_code == 200


async def test_health_and_readiness_leak_no_name_id_path_or_secret(tmp_path: Path) -> None:
    async with serve(tmp_path, operator_address=("127.0.0.1", 0), secret=SECRET) as app:
        client = await Client.connect("127.0.0.1", app.sessions_port or 0)
        player = RandomPlayer()
        player.name = "mallory-victim"
        game = asyncio.create_task(client.play(player))
        while not app.tables or not client.session_secrets:
            await asyncio.sleep(0.01)
        secrets_seen = {SECRET, str(tmp_path), "games.db", "mallory-victim", *app.tables}
        secrets_seen |= {s for t in app.tables.values() for s in t.seat_names()}
        secrets_seen |= {str(sid) for sid in client.session_secrets} | set(client.session_secrets.values())
        bodies: list[str] = []
        for port in (app.http_port, app.operator_port):
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as h:
                for path in ("/healthz", "/readyz"):
                    r = await h.get(path, headers={"Origin": "https://evil.example"})
                    assert r.status_code == 200
                    bodies.append(r.text)
            app.draining = True  # a failing state says which check, nothing more
            app.readiness._cached = None
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as h:
                r = await h.get("/readyz")
                assert r.status_code == 503
                bodies.append(r.text)
            app.draining = False
        for body in bodies:
            data = json.loads(body)
            assert set(data) <= {"status", "failing"} and len(body) < 64, body
            for s in secrets_seen:
                assert s and s not in body, (s, body)
        game.cancel()
        await client.close()


async def test_the_operator_address_is_loopback_unless_the_operator_says_otherwise(tmp_path: Path) -> None:
    default = next(p for p in serve_cmd.params if p.name == "operator_address").default
    parsed = parse_operator_address(str(default))
    assert parsed is not None and ipaddress.ip_address(parsed[0]).is_loopback
    # its own socket, on the loopback address asked for (whatever the protocols' --host)
    async with serve(tmp_path, operator_address=(parsed[0], 0)) as app:
        assert app.operator is not None and app.operator._server is not None
        (sock,) = [s for server in app.operator._server.servers for s in server.sockets]
        assert ipaddress.ip_address(sock.getsockname()[0]).is_loopback
