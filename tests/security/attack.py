"""Not a test module: what the attack tests share.

A real ``moonshot serve`` (``ServerApp`` with HTTP on 127.0.0.1, a free port, a temporary SQLite
store, no fixed seed: the secure defaults) runs in the test's event loop. A *browser* is an httpx
client that sends what a browser sends with a same-origin request (its cookies, ``Origin``,
``Sec-Fetch-Site: same-origin``, a JSON body); an *attacker* sends whatever it likes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx

from moonshot.server.app import ServerApp
from moonshot.server.config import ServerConfig


@asynccontextmanager
async def serve(tmp_path: Path, **config: Any) -> AsyncIterator[ServerApp]:
    """``moonshot serve`` with HTTP (and Sessions) on free loopback ports."""
    options: dict[str, Any] = {
        "host": "127.0.0.1",
        "sessions_port": 0,
        "http_port": 0,
        "db_url": f"sqlite+aiosqlite:///{tmp_path / 'games.db'}",
        "bot": "random",
        "fill_wait": 0.3,
    }
    options.update(config)
    app = ServerApp(ServerConfig(**options))
    await app.start()
    try:
        yield app
    finally:
        await app.stop()


def base_url(app: ServerApp) -> str:
    return f"http://127.0.0.1:{app.http_port}"


def browser(app: ServerApp, name: str | None = None, **cookies: str) -> httpx.AsyncClient:
    """A person's browser on the server's own pages: same-origin requests, its own cookie jar."""
    base = base_url(app)
    jar = dict(cookies)
    if name is not None:
        jar["name"] = name
    headers = {"Origin": base, "Sec-Fetch-Site": "same-origin"}
    return httpx.AsyncClient(base_url=base, cookies=jar, headers=headers, timeout=30)


def program(app: ServerApp, name: str | None = None, **cookies: str) -> httpx.AsyncClient:
    """A client program (no browser headers at all), with its own cookies."""
    jar = dict(cookies)
    if name is not None:
        jar["name"] = name
    return httpx.AsyncClient(base_url=base_url(app), cookies=jar, timeout=30)


__all__ = ["base_url", "browser", "program", "serve"]
