"""A ``moonshot serve`` as deployed (secure defaults: no fixed seeds, names bound to browsers) on
free loopback ports, every protocol on: the tests attack it as a hostile client would."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest_asyncio

from moonshot.server.app import ServerApp
from moonshot.server.config import ServerConfig


@pytest_asyncio.fixture
async def server(tmp_path: Path) -> AsyncIterator[ServerApp]:
    app = ServerApp(
        ServerConfig(
            sessions_port=0,
            trend_port=0,
            http_port=0,
            db_url=f"sqlite+aiosqlite:///{tmp_path / 'games.db'}",
            bot="random",
            fill_wait=0.3,
            move_timeout=10.0,
            secret="security-tests",
        )
    )
    await app.start()
    yield app
    await app.stop()


def http(app: ServerApp, name: str | None = None) -> httpx.AsyncClient:
    cookies = {"name": name} if name is not None else {}
    return httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}", cookies=cookies, timeout=30)


async def sse_events(
    client: httpx.AsyncClient, path: str, until: Callable[[dict[str, Any]], bool], timeout: float = 60
) -> list[dict[str, Any]]:
    """The events of an SSE stream up to (and with) the first one ``until`` accepts."""
    out: list[dict[str, Any]] = []

    async def read() -> None:
        async with client.stream("GET", path) as resp:
            assert resp.status_code == 200, await resp.aread()
            async for line in resp.aiter_lines():
                if line.startswith("data:"):
                    ev = json.loads(line[5:])
                    out.append(ev)
                    if until(ev):
                        return

    await asyncio.wait_for(read(), timeout)
    return out


async def wait_for(predicate: Callable[[], Any], timeout: float = 60) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        assert loop.time() < end, "timed out"
        await asyncio.sleep(0.02)


async def bots_game(app: ServerApp, owner: httpx.AsyncClient, variant: str = "standard", **body: Any) -> str:
    """A game of ``owner`` and three of the server's random bots (started at once)."""
    r = await owner.post("/lobby/new", json={"variant": variant, **body})
    assert r.status_code == 200, r.text
    gid = str(r.json())
    for _ in range(3):
        r = await owner.post("/lobby/add_bot", json={"id": gid, "algorithm": "random"})
        assert r.status_code == 200, r.text
    return gid


async def external_tournament(owner: httpx.AsyncClient, external: str = "ext") -> tuple[str, str]:
    """``owner`` creates a one-game standard tournament of three random bots and ``external``: its
    id and the external entrant's token."""
    body = {"variant": "standard", "sets": 1, "deals_per_set": 1, "bots": ["random", "b=random", "c=random"],
            "externals": [external]}  # fmt: skip
    r = await owner.post("/api/tournaments", json=body)
    assert r.status_code == 201, r.text
    return str(r.json()["id"]), str(r.json()["tokens"][external])
