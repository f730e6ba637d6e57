"""The Turbo lobby's upkeep: what keeps its cost bounded by its audience (used by
:class:`~moonshot.http.api.TurboLobby`).

* :class:`LobbyEvent`: a lobby event encoded as an SSE frame once, for every stream;
  :func:`lobby_frames` writes whatever a stream has queued in one chunk. A subscriber gets
  ``lobby_state`` once and then only changes, so a new name or stream costs each subscriber O(1);
* :func:`open_game_shares`: a name's and an address's shares of open games (429 over either);
* :func:`sweep`: open games nobody joined or left for ``game_expiry`` seconds expire (gone from
  the store too: they do not come back after a restart), and the lobby streams of names that made
  no lobby request for ``lobby_idle`` seconds are ended.

The limits are the server's :class:`~moonshot.runtime.limits.ClientLimits`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from moonshot.http.limits import client_address
from moonshot.protocols.turbo.codec import RequestError
from moonshot.runtime.limits import ClientGuard, Hold

if TYPE_CHECKING:
    from moonshot.http.api import LobbyGame, TurboLobby

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


async def sweep_forever(lobby: TurboLobby) -> None:
    """:func:`sweep` every tenth of the shorter span (at most a minute)."""
    lim = lobby.guard.limits if lobby.guard is not None else None
    if lim is None:
        return
    spans = [x for x in (lim.game_expiry, lim.lobby_idle) if x > 0]
    if not spans:
        return
    every = max(0.05, min(60.0, min(spans) / 10))
    while True:
        await asyncio.sleep(every)
        try:
            sweep(lobby, time.time(), time.monotonic())
        except Exception:
            log.exception("event=lobby_sweep_failed")


def sweep(lobby: TurboLobby, wall: float, mono: float) -> None:
    """End open games nobody joined or left for ``game_expiry`` seconds and lobby streams whose
    name asked nothing for ``lobby_idle`` seconds (the clocks are passed in: tests)."""
    if lobby.guard is None:
        return
    lim = lobby.guard.limits
    if lim.game_expiry > 0:
        for g in list(lobby.games.values()):
            if g.hosted is None and not g.finished and wall - (g.touched or g.created_at) > lim.game_expiry:
                expire(lobby, g)
    if lim.lobby_idle > 0:
        for name, queues in list(lobby.subscribers.items()):
            if mono - lobby.seen.get(name, mono) > lim.lobby_idle:
                log.info("event=lobby_idle_ended name=%s streams=%d", json.dumps(name), len(queues))
                for q in queues:
                    q.put_nowait(None)
        for name, when in list(lobby.seen.items()):  # names with no stream: forgotten
            if name not in lobby.subscribers and mono - when > lim.lobby_idle:
                del lobby.seen[name]


def expire(lobby: TurboLobby, g: LobbyGame) -> None:
    """An open game nobody joined: its members are told (``leave_game``), remote players waiting
    in it lose their session, and it is gone from the lobby and the store."""
    lobby.expired += 1
    log.info("event=open_game_expired game=%s players=%d expired=%d", g.id, len(g.members), lobby.expired)
    for m in g.members:
        lobby.broadcast({"type": "leave_game", "id": g.id, "player": m.name})
        if m.remote is not None:
            with contextlib.suppress(Exception):
                m.remote.seat.end_session(f"game {g.id} expired: nobody joined it")
    lobby.games.pop(g.id, None)
    if g.stream is not None:
        g.stream.close()
    lobby._drop_open(g)


__all__ = ["LobbyEvent", "expire", "lobby_frames", "open_game_shares", "sweep", "sweep_forever"]
