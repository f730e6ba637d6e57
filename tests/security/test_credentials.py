"""Seat credentials, attacked: a chair's credential (the SHA-256 of a Sessions secret or a Trend
token) was listed to anyone by ``GET /api/games``, and a weak token fell to a search. Now no
secret-derived value leaves the server, and re-join tries are limited per chair and address."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import random
from typing import Any

import pytest
import websocket

from moonshot.protocols.sessions.client import Client, RandomPlayer, View
from moonshot.server.app import ServerApp
from security.conftest import http, wait_for
from trend_sdk import SdkBot

pytestmark = pytest.mark.asyncio


class Slow(RandomPlayer):
    """A player that thinks before every card: the game outlasts the attack."""

    async def play(self, view: View) -> str | None:  # type: ignore[override]
        await asyncio.sleep(0.2)
        return super().play(view)


class Leaves(RandomPlayer):
    """Drops its connection at its second trick, and waits."""

    def __init__(self, client: Client, left: asyncio.Event) -> None:
        super().__init__(random.Random(8))
        self.client, self.left = client, left

    async def play(self, view: View) -> str | None:  # type: ignore[override]
        if view.trick_index >= 1:
            self.client.writer.close()
            self.left.set()
            await asyncio.Event().wait()
        return super().play(view)


async def a_left_sessions_chair(server: ServerApp, code: str) -> tuple[int, str, list[Any]]:
    """A Sessions player who left a running game: (session id, its secret, what to clean up)."""
    assert server.sessions_port
    first = await Client.connect("127.0.0.1", server.sessions_port)
    others = await Client.connect("127.0.0.1", server.sessions_port)
    left = asyncio.Event()
    leaver = asyncio.create_task(first.play(Leaves(first, left), lobby_code=code))
    await wait_for(lambda: first.sessions)
    sid = next(iter(first.sessions))
    secret = first.session_secrets[sid]
    rest = asyncio.gather(*(others.play(Slow(random.Random(i)), lobby_code=code) for i in range(3)))
    await asyncio.wait_for(left.wait(), 240)
    leaver.cancel()
    return sid, secret, [first, others, rest]


async def test_no_credential_or_digest_of_a_secret_is_public(server: ServerApp) -> None:
    """The attack: read every chair's credential from the anonymous game list, search it offline."""
    _, secret, cleanup = await a_left_sessions_chair(server, "creds")
    digest = hashlib.sha256(secret.encode()).hexdigest()
    trend = SdkBot(f"ws://127.0.0.1:{server.trend_port}/", 1, "tokened", token="12345678", games=1)
    await asyncio.wait_for(asyncio.to_thread(trend.run), 120)
    token_digest = hashlib.sha256(b"12345678").hexdigest()
    assert server.recorder is not None
    await server.recorder.flush()  # type: ignore[attr-defined]
    async with http(server) as anon, http(server, "curious") as named:
        texts = []
        listing = await anon.get("/api/games")
        texts.append(listing.text)
        for g in listing.json():
            texts.append((await anon.get(f"/api/games/{g['id']}")).text)
        for path in ("/leaderboard", "/leaderboard/games?variant=trend&player=tokened", "/api/tournaments"):
            texts.append((await named.get(path)).text)
        for text in texts:
            assert "credential" not in text
            assert digest not in text and token_digest not in text
            assert secret not in text and "12345678" not in text
    for c in cleanup[:2]:
        await c.close()
    cleanup[2].cancel()
    with contextlib.suppress(BaseException):
        await cleanup[2]


async def test_sessions_resume_tries_are_limited_per_chair(server: ServerApp) -> None:
    """Wrong session secrets for a chair: past the limit even the right one is refused for a
    while (the protocol's usual error), then the owner takes the chair back."""
    sid, secret, cleanup = await a_left_sessions_chair(server, "resume-limit")
    assert server.sessions is not None and server.sessions_port
    attacker = await Client.connect("127.0.0.1", server.sessions_port)
    for i in range(server.sessions.rejoins.limit):
        with pytest.raises(Exception, match="no game is waiting"):
            await attacker.resume(sid, RandomPlayer(), secret=f"guess-{i}")
    owner = await Client.connect("127.0.0.1", server.sessions_port)
    with pytest.raises(Exception, match="no game is waiting"):
        await owner.resume(sid, RandomPlayer(), secret=secret)
    server.sessions.rejoins.window = 0.05  # the window passes
    await asyncio.sleep(0.1)
    back = asyncio.create_task(owner.resume(sid, RandomPlayer(random.Random(9)), secret))
    sessions = server.sessions

    def seated() -> bool:
        seat = sessions.active.get(sid)
        return seat is not None and not seat.closed and not seat.conn.closed

    await wait_for(seated)
    assert not back.done() or back.exception() is None
    back.cancel()
    for c in (*cleanup[:2], attacker, owner):
        await c.close()
    cleanup[2].cancel()
    with contextlib.suppress(BaseException):
        await cleanup[2]


def trend_join(port: int, number: int, name: str, token: str, code: str = "weak") -> websocket.WebSocket:
    ws = websocket.create_connection(f"ws://127.0.0.1:{port}/", timeout=30)
    data = {"playerNumber": str(number), "playerName": name, "token": token, "lobbyCode": code}
    ws.send(json.dumps({"eventName": "join", "data": data}))
    return ws


async def test_a_weak_trend_token_cannot_be_searched_online(server: ServerApp) -> None:
    """The attack: the victim (token 12345678, as the SDK's sample) drops mid-game; the attacker
    tries tokens for its chair. After a few wrong ones the chair refuses every token for a while,
    so the search never reaches the right one."""
    port = server.trend_port
    assert port
    # three players who think before every card: the game outlasts the attack
    others = [SdkBot(f"ws://127.0.0.1:{port}/", n, f"slow{n}", games=1, lobby_code="weak", think=0.3)
              for n in (2, 3, 4)]  # fmt: skip
    threads = [asyncio.create_task(asyncio.to_thread(b.run)) for b in others]
    victim = await asyncio.to_thread(trend_join, port, 1, "victim", "12345678")
    try:
        frames: list[str] = []
        victim.settimeout(60)
        while not any('"new_deal"' in f for f in frames):
            frames.append(await asyncio.to_thread(victim.recv))
        victim.close()  # the victim drops: a bot plays its chair until it comes back
        assert server.trend is not None
        await wait_for(lambda: server.trend.away)  # type: ignore[union-attr]
        rejoins = server.trend.rejoins
        for guess in range(rejoins.limit):
            ws = await asyncio.to_thread(trend_join, port, 1, "victim", f"{guess:08d}")
            # (the server has read the guess once it has counted it)
            await wait_for(lambda n=guess + 1: len(rejoins._fails.get(("chair", 1, "victim"), ())) >= n)
            ws.shutdown()
        found = await asyncio.to_thread(trend_join, port, 1, "victim", "12345678")
        first = json.loads(await asyncio.to_thread(found.recv))
        found.close()
        assert first["eventName"] == "error" and "too many wrong tokens" in first["data"]["message"]
        table = server.trend.away[0].table
        assert table.chairs[0].occupant is None  # the chair was not taken
    finally:
        await server.stop()
        for t in threads:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(t, 240)


async def test_after_a_restart_a_restored_trend_chair_is_limited_too(tmp_path: Any) -> None:
    """The same search against a chair of a game restored from the store (its player has not
    come back since the restart): the restored chair counts wrong tokens as well."""
    from moonshot.server.config import ServerConfig

    def config() -> ServerConfig:
        return ServerConfig(sessions_port=None, trend_port=0, db_url=f"sqlite+aiosqlite:///{tmp_path / 'g.db'}",
                            bot="random", fill_wait=0.3, move_timeout=10.0, restore_grace=60.0)  # fmt: skip

    first = ServerApp(config())
    await first.start()
    port = first.trend_port
    assert port
    others = [SdkBot(f"ws://127.0.0.1:{port}/", n, f"slow{n}", games=1, lobby_code="weak", think=0.3)
              for n in (2, 3, 4)]  # fmt: skip
    threads = [asyncio.create_task(asyncio.to_thread(b.run)) for b in others]
    victim = await asyncio.to_thread(trend_join, port, 1, "victim", "12345678")
    victim.settimeout(60)
    frames: list[str] = []
    while not any('"new_deal"' in f for f in frames):
        frames.append(await asyncio.to_thread(victim.recv))
    await first.stop()  # the game stays in the store, unfinished
    with contextlib.suppress(Exception):
        victim.close()
    for t in threads:
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(t, 240)
    again = ServerApp(config())
    await again.start()
    try:
        port = again.trend_port
        assert port and again.trend is not None
        assert again.names_trend_chair("victim")
        rejoins = again.trend.rejoins
        for guess in range(rejoins.limit):
            ws = await asyncio.to_thread(trend_join, port, 1, "victim", f"{guess:08d}")
            await wait_for(lambda n=guess + 1: len(rejoins._fails.get(("chair", 1, "victim"), ())) >= n)
            ws.shutdown()
        found = await asyncio.to_thread(trend_join, port, 1, "victim", "12345678")
        first_frame = json.loads(await asyncio.to_thread(found.recv))
        found.close()
        assert first_frame["eventName"] == "error" and "too many wrong tokens" in first_frame["data"]["message"]
        assert again.names_trend_chair("victim")  # still nobody's
    finally:
        await again.stop()
