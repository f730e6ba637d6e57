"""A moonshot server in the test's event loop, on a free loopback port, with short timeouts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from moonshot.server.app import ServerApp, ServerConfig


@pytest_asyncio.fixture
async def server(tmp_path: Path) -> AsyncIterator[ServerApp]:
    app = ServerApp(
        ServerConfig(
            sessions_port=0,
            db_url=f"sqlite+aiosqlite:///{tmp_path / 'games.db'}",
            move_timeout=0.3,
            max_timeouts=3,
            fill_wait=0.3,
            resync_idle=0.2,
            bot="random",
            seed=1,
        )
    )
    await app.start()
    yield app
    await app.stop()
