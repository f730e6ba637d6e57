"""Ratings in ``moonshot serve`` over the Trend protocol: WebSocket players and the lobby's filling
bot are rated when their game ends (Sessions and Turbo are covered by test_web_leaderboard.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from moonshot.server.app import ServerApp
from moonshot.server.config import ServerConfig
from trend_sdk import SdkBot

pytestmark = pytest.mark.asyncio


async def test_trend_players_and_the_filling_bot_are_rated(tmp_path: Path) -> None:
    db = f"sqlite+aiosqlite:///{tmp_path / 'games.db'}"
    app = ServerApp(ServerConfig(sessions_port=None, trend_port=0, db_url=db, bot="random", fill_wait=0.3, seed=4))
    await app.start()
    try:
        url = f"ws://127.0.0.1:{app.trend_port}/"
        bots = [SdkBot(url, n, f"ai{n}", games=1, seed=n) for n in (1, 2, 3)]
        await asyncio.wait_for(asyncio.gather(*(asyncio.to_thread(b.run) for b in bots)), 120)
        assert all(b.errors == [] and len(b.seen) == 1 for b in bots)
        assert app.recorder is not None and app.store is not None
        await app.recorder.flush()
        board = await app.store.leaderboard("trend")
        rows = {(r["player"], r["bot"]): r for r in board["trend"]}
        assert set(rows) == {("ai1", False), ("ai2", False), ("ai3", False), ("random", True)}
        assert all(r["games"] == 1 for r in rows.values())
        # Trend's highest total wins: the winner's place is 1
        (first,) = await app.store.player_games("trend", "ai1")
        best = max(first["totals"])
        for name in ("ai1", "ai2", "ai3"):
            (g,) = await app.store.player_games("trend", name)
            assert (g["rank"] == 1) == (g["total"] == best)
        (game,) = await app.store.player_games("trend", "random", bot=True)
        assert game["players"][3]["name"] == "random" and game["players"][3]["bot"]
        assert game["players"][3]["seated"].startswith("moonshot_random")  # seated as moonshot_random_1
    finally:
        await app.stop()
