"""Test helpers: a moonshot server with HTTP on a free loopback port, and an SSE reader."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from moonshot.server.app import ServerApp
from moonshot.server.config import ServerConfig


@asynccontextmanager
async def http_server(tmp_path: Path, **options: Any) -> AsyncIterator[ServerApp]:
    """``moonshot serve`` in this loop: HTTP on 127.0.0.1, any free port; no Sessions."""
    config = ServerConfig(
        sessions_port=None,
        http_port=0,
        db_url=options.pop("db_url", f"sqlite+aiosqlite:///{tmp_path / 'games.db'}"),
        seed=options.pop("seed", 1),
        bot="random",
        **options,
    )
    app = ServerApp(config)
    await app.start()
    try:
        yield app
    finally:
        await app.stop()


def base_url(app: ServerApp) -> str:
    return f"http://127.0.0.1:{app.http_port}"


@dataclass
class SseEvent:
    data: dict[str, Any]
    id: str | None


class SseReader:
    """Reads one text/event-stream response: ``await next_event()`` until it ends (None)."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._lines = response.aiter_lines()
        self.events: list[SseEvent] = []

    async def next_event(self) -> SseEvent | None:
        data: list[str] = []
        event_id: str | None = None
        async for line in self._lines:
            if line == "":
                if data:
                    ev = SseEvent(json.loads("\n".join(data)), event_id)
                    self.events.append(ev)
                    return ev
                continue
            if line.startswith(":"):
                continue  # a ping
            key, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if key == "data":
                data.append(value)
            elif key == "id":
                event_id = value
        return None

    async def until(self, kind: str) -> list[SseEvent]:
        """Events up to and including the first of type ``kind``."""
        out = []
        while True:
            ev = await self.next_event()
            assert ev is not None, f"the stream ended before {kind!r}"
            out.append(ev)
            if ev.data["type"] == kind:
                return out

    async def rest(self) -> list[SseEvent]:
        out = []
        while (ev := await self.next_event()) is not None:
            out.append(ev)
        return out
