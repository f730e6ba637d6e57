"""moonshot's `resume_session`: a session whose connection was lost takes its chair back on a new
connection, gets the game so far (marked replayed), and plays on to the end."""

from __future__ import annotations

import asyncio
import json
import random

import pytest

from moonshot.protocols.sessions.client import Client, RandomPlayer, View
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


async def test_session_ids_are_random_and_bot_chairs_are_never_resumable(server: ServerApp) -> None:
    port = server.sessions_port
    assert port
    client = await Client.connect("127.0.0.1", port)
    play = asyncio.create_task(client.play(RandomPlayer(random.Random(2)), lobby_code="bots"))
    table = None
    for _ in range(200):  # the lobby fills the other three chairs with server bots
        await asyncio.sleep(0.05)
        table = next(iter(server.tables.values()), None)
        if table is not None:
            break
    assert table is not None
    (sid,) = client.sessions
    assert sid > 2**20  # random 48-bit ids, not 0, 1, 2...
    names = table.seat_names()
    bots = [i for i, n in enumerate(names) if not n.endswith(f"({sid})")]
    assert len(bots) == 3 and all(table.credentials[i] is None for i in bots)
    stranger = await Client.connect("127.0.0.1", port)
    for i in bots:  # whatever the secret, even the real player's
        bot_id = int(names[i][names[i].rindex("(") + 1 : -1])
        for secret in ("", "x", client.session_secrets[sid]):
            with pytest.raises(Exception, match="no game is waiting"):
                await stranger.resume(bot_id, RandomPlayer(), secret)
    await asyncio.wait_for(play, 60)
    await stranger.close()
    await client.close()
