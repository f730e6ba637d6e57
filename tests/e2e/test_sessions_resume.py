"""moonshot's `resume_session`: a session whose connection was lost takes its chair back on a new
connection, gets the game so far (marked replayed), and plays on to the end."""

from __future__ import annotations

import asyncio
import json
import random

import pytest

from moonshot.client import Client, RandomPlayer, View
from moonshot.server.app import ServerApp

pytestmark = pytest.mark.asyncio


class LeavesMidTrick(RandomPlayer):
    name = "leaver"

    def __init__(self, client: Client, left: asyncio.Event) -> None:
        super().__init__(random.Random(8))
        self.client = client
        self.left = left

    async def play(self, view: View) -> str | None:  # type: ignore[override]
        if view.trick_index >= 3 and view.trick:
            self.client.writer.close()
            self.left.set()
            await asyncio.Event().wait()
        return super().play(view)


async def test_a_lost_session_resumes_on_a_new_connection(server: ServerApp) -> None:
    port = server.sessions_port
    assert port
    first = await Client.connect("127.0.0.1", port)
    others = await Client.connect("127.0.0.1", port)
    left = asyncio.Event()
    leaver = asyncio.create_task(first.play(LeavesMidTrick(first, left), lobby_code="r"))
    await asyncio.sleep(0.05)
    sid = next(iter(first.sessions))
    rest = asyncio.gather(*(others.play(RandomPlayer(), lobby_code="r") for _ in range(3)))
    await asyncio.wait_for(left.wait(), 30)
    leaver.cancel()
    again = await Client.connect("127.0.0.1", port)
    # a stranger with no secret, or a guessed one, is refused; the owner's secret works
    with pytest.raises(Exception, match="no game is waiting"):
        await again.resume(sid, RandomPlayer(), secret="guessed")
    secret = first.session_secrets[sid]
    assert len(secret) >= 43  # token_urlsafe(32): 256 bits
    resumed = await asyncio.wait_for(again.resume(sid, RandomPlayer(random.Random(9)), secret), 60)
    results = await asyncio.wait_for(rest, 60)
    assert all(r.scores == resumed.scores for r in results)
    assert resumed.me.endswith(f"({sid})") and max(resumed.scores.values()) > 100
    # nobody else can take a chair that is in use, or one that does not exist
    with pytest.raises(Exception, match="no game is waiting"):
        await again.resume(sid, RandomPlayer(), secret)
    for c in (first, others, again):
        await c.close()


async def test_resuming_an_unknown_session_is_an_error(server: ServerApp) -> None:
    port = server.sessions_port
    assert port
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(json.dumps({"type": "resume_session", "session_id": 31337, "session_secret": "guess"}).encode())
    data = await asyncio.wait_for(reader.read(4096), 10)
    msg = json.loads(data)
    assert msg["type"] == "error" and "31337" in msg["reason"]
    writer.close()
