"""The Turbo lobby's upkeep: what keeps its cost bounded by its audience (used by
:class:`~moonshot.http.lobby.TurboLobby`).

* :class:`LobbyEvent`: a lobby event encoded as an SSE frame once, for every stream;
  :func:`lobby_frames` writes whatever a stream has queued in one chunk. A subscriber gets
  ``lobby_state`` once and then only changes, so a new name or stream costs each subscriber O(1);
* :func:`open_game_shares`: a name's and an address's shares of open games (429 over either);
* the sweep (:func:`moonshot.http.lobby.sweep`, beside the lobby it sweeps): open games nobody
  joined or left for ``game_expiry`` seconds expire (gone from the store too: they do not come
  back after a restart), and the lobby streams of names that made no lobby request for
  ``lobby_idle`` seconds are ended.

The limits are the server's :class:`~moonshot.runtime.limits.ClientLimits`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from moonshot.http.limits import client_address
from moonshot.protocols.turbo.codec import RequestError
from moonshot.runtime.limits import ClientGuard, Hold

log = logging.getLogger("moonshot.turbo")


class LobbyEvent(dict[str, Any]):
    """A lobby event: a dict (as the seed's JSON), encoded as an SSE frame once for every stream."""

    _frame: bytes | None = None

    def frame(self) -> bytes:
        if self._frame is None:
            self._frame = b"data: " + json.dumps(self, separators=(",", ":")).encode() + b"\r\n\r\n"
        return self._frame


async def lobby_frames(q: asyncio.Queue[dict[str, Any] | None]) -> AsyncIterator[bytes]:
    """A lobby stream's body: whatever is queued when it wakes goes out in one chunk; None ends it."""
    while True:
        item = await q.get()
        parts: list[bytes] = []
        while True:
            if item is None:
                if parts:
                    yield b"".join(parts)
                return
            parts.append(item.frame() if isinstance(item, LobbyEvent) else LobbyEvent(item).frame())
            if q.empty():
                break
            item = q.get_nowait()
        yield b"".join(parts)


def open_game_shares(guard: ClientGuard | None, name: str) -> list[Hold]:
    """A new open game's shares: its creator's name's and its address's; 429 over either."""
    if guard is None:
        return []
    holds: list[Hold] = []
    for holder, key in ((guard.games_by_name, name), (guard.games_by_address, client_address.get())):
        if not key:
            continue
        h = holder.acquire(key)
        if h is None:
            for x in holds:
                x.release()
            guard.refused += 1
            raise RequestError(429, holder.refusal())
        holds.append(h)
    return holds


__all__ = ["LobbyEvent", "lobby_frames", "open_game_shares"]
