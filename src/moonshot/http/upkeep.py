"""The Turbo lobby's upkeep: what keeps its cost bounded by its audience (used by
:class:`~moonshot.http.lobby.TurboLobby`).

* :class:`LobbyEvent`: a lobby event encoded as an SSE frame once, for every stream;
  :func:`lobby_frames` writes whatever a stream has queued in one chunk. A subscriber gets
  ``lobby_state`` once and then only changes, so a new name or stream costs each subscriber O(1);
* :func:`open_game_shares`: a name's and an address's shares of open games (429 over either);
* :func:`table_turn`: a game about to start, asked of its players' addresses' table rate (the
  server's one ``tables_per_s``, which paces the runtime lobby's and the cluster's tables too):
  429 while any of them must wait;
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
import math
from collections.abc import AsyncIterator, Iterable
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


def table_turn(guard: ClientGuard | None, addresses: Iterable[str | None], game_id: str) -> None:
    """Game ``game_id`` starts now if each of ``addresses`` (its players' share keys, None for a
    bot) and the request's may start a table
    (:meth:`ClientGuard.start_table <moonshot.runtime.limits.ClientGuard.start_table>`: one token
    from each, or none); else 429 with the seconds to wait (``too_many_tables``): the caller
    changes nothing, and the chair may be taken again once the rate allows."""
    if guard is None:
        return
    keys = sorted({a for a in (*addresses, client_address.get()) if a})
    wait = guard.start_table(keys)
    if not wait:
        return
    seconds = math.ceil(wait * 10) / 10  # the Retry-After, rounded up: never "0.0 s"
    log.info("event=table_refused game=%s addresses=%s wait=%.2f", game_id, keys, wait)
    raise RequestError(
        429,
        f"too many tables started from this game's players' addresses (at most "
        f"{guard.tables_by_address.rate:g} a second): try again in {seconds:.1f} s",
        "too_many_tables",
        {"seconds": seconds},
    )


__all__ = ["LobbyEvent", "lobby_frames", "open_game_shares", "table_turn"]
