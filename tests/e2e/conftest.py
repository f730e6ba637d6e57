"""Moonshot servers in the test's event loop, on free loopback ports.

``server`` gives players plenty of time (a loaded machine must not turn a slow answer into a
server card); ``strict_server`` has short timeouts for the tests of silent and broken clients.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio

from moonshot.server.app import ServerApp
from moonshot.server.config import ServerConfig


async def sessions_server(tmp_path: Path, **options: Any) -> ServerApp:
    """A started ``ServerApp``: Sessions on a free port, random bots, seed 1, its games in
    ``tmp_path/games.db``, and ``options`` (timeouts, waits, other ports and bots); the caller stops it."""
    config: dict[str, Any] = {
        "sessions_port": 0,
        "db_url": f"sqlite+aiosqlite:///{tmp_path / 'games.db'}",
        "bot": "random",
        "seed": 1,
    }
    app = ServerApp(ServerConfig(**(config | options)))
    await app.start()
    return app


@pytest_asyncio.fixture
async def server(tmp_path: Path) -> AsyncIterator[ServerApp]:
    app = await sessions_server(tmp_path, move_timeout=10.0, fill_wait=0.3)
    yield app
    await app.stop()


@pytest_asyncio.fixture
async def strict_server(tmp_path: Path) -> AsyncIterator[ServerApp]:
    # 3 s a move: short enough for the silent clients' cases, long enough that a well-behaved client
    # on a loaded machine (load 15 on 2 cores) is not timed out beside them
    app = await sessions_server(tmp_path, move_timeout=3.0, max_timeouts=2, fill_wait=0.3, resync_idle=0.5)
    yield app
    await app.stop()
