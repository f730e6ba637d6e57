"""The Turbo lobby's upkeep on clocks passed by hand: open games expire and give their shares
back, idle lobby streams end, and a lobby event is encoded once for every stream."""

from __future__ import annotations

import asyncio
import time

import pytest

from moonshot.bots.registry import bot_names, make_bot
from moonshot.http.lobby import TurboLobby
from moonshot.http.upkeep import LobbyEvent, lobby_frames
from moonshot.protocols.turbo.codec import RequestError
from moonshot.runtime.limits import ClientGuard, ClientLimits

pytestmark = pytest.mark.asyncio


def lobby(**limits: float) -> TurboLobby:
    lob = TurboLobby(secret="s", make_bot=make_bot, bot_names=bot_names())
    lob.guard = ClientGuard(ClientLimits(**limits))  # type: ignore[arg-type]
    return lob


async def test_an_open_game_nobody_joins_expires_and_gives_its_share_back() -> None:
    lob = lobby(game_expiry=100.0, open_games_per_name=1)
    watcher = lob.subscribe_lobby("watcher")
    gid = lob.new_game("ann", {})
    with pytest.raises(RequestError) as e:  # ann's one share is held
        lob.new_game("ann", {})
    assert e.value.status == 429
    created = lob.games[gid].created_at
    lob.sweep(created + 99, time.monotonic())
    assert gid in lob.games
    lob.join("bob", {"id": gid})  # a join counts as activity: the clock starts again
    touched = lob.games[gid].touched
    lob.sweep(touched + 99, time.monotonic())
    assert gid in lob.games
    lob.sweep(touched + 101, time.monotonic())
    assert gid not in lob.games and lob.expired == 1
    seen = [watcher.get_nowait() for _ in range(watcher.qsize())]
    assert {"type": "leave_game", "id": gid, "player": "ann"} in seen
    assert {"type": "leave_game", "id": gid, "player": "bob"} in seen
    assert lob.new_game("ann", {}) in lob.games  # the share came back


async def test_an_idle_lobby_stream_is_ended_and_an_active_one_kept() -> None:
    lob = lobby(lobby_idle=60.0)
    idle = lob.subscribe_lobby("idle")
    busy = lob.subscribe_lobby("busy")
    now = time.monotonic()
    lob.seen["busy"] = now + 50  # it asked something since
    lob.sweep(time.time(), now + 61)
    got = [idle.get_nowait() for _ in range(idle.qsize())]
    assert got[-1] is None  # its stream ends (and unsubscribing says leave_lobby)
    assert None not in [busy.get_nowait() for _ in range(busy.qsize())]
    lob.unsubscribe_lobby("idle", idle)
    assert "idle" not in lob.seen and "idle" not in lob.subscribers


async def test_a_lobby_event_is_encoded_once_and_a_stream_writes_its_queue_in_one_chunk() -> None:
    e = LobbyEvent({"type": "chat", "name": "a", "message": "hi"})
    assert e.frame() is e.frame() and e.frame() == b'data: {"type":"chat","name":"a","message":"hi"}\r\n\r\n'
    q: asyncio.Queue[dict[str, object] | None] = asyncio.Queue()
    for item in (e, {"type": "leave_lobby", "player": "b"}, None):
        q.put_nowait(item)  # type: ignore[arg-type]
    chunks = [c async for c in lobby_frames(q)]
    assert chunks == [e.frame() + b'data: {"type":"leave_lobby","player":"b"}\r\n\r\n']
