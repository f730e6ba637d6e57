"""The leaderboard page: games finished over Sessions (TCP clients and server bots) and over the
HTTP table runtime (Turbo bots) are rated as they end; the page shows each variant's board from
GET /leaderboard, the lobby's nav leads there, a player's page lists their games and each one
opens its replay on the history page."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest

from e2e.webkit import PHONE, Person, chromium, web_server
from moonshot.bots.heuristic import HeuristicBot
from moonshot.bots.registry import make_bot
from moonshot.core.variants import TURBO
from moonshot.protocols.sessions.client import BotPlayer, Client, RandomPlayer
from moonshot.runtime.table import BotSeat, Table
from moonshot.server.app import ServerApp

pytestmark = [pytest.mark.asyncio, pytest.mark.browser]


async def sessions_games(app: ServerApp, n: int) -> None:
    """alice (a heuristic client) and bob (a random client) over Sessions TCP, two server bots."""
    assert app.sessions_port
    client = await Client.connect("127.0.0.1", app.sessions_port)
    try:
        for i in range(n):
            alice = BotPlayer(HeuristicBot(), random.Random(i))
            alice.name = "alice"
            bob = RandomPlayer(random.Random(100 + i))
            bob.name = "bob"
            await asyncio.gather(*(client.play(p, lobby_code=f"table-{i}") for p in (alice, bob)))
    finally:
        await client.close()


async def turbo_game(app: ServerApp, seed: int) -> str:
    specs = ["heuristic", "random", "heuristic", "random"]
    names = [f"{n} (bot)" for n in ("ada", "basil", "cleo", "dora")]
    seats = [BotSeat(make_bot(s), random.Random(seed + i), name=n) for i, (s, n) in enumerate(zip(specs, names))]
    meta = {"protocol": "turbo", "algorithms": json.dumps(specs)}
    table = Table(TURBO, seats, seed=seed, table_id=f"turbo-{seed}", recorder=app.recorder, meta=meta)
    app._track(table)
    await table.done
    return table.id


async def test_the_leaderboard_page_ranks_players_and_links_their_replays(tmp_path: Path) -> None:
    async with web_server(tmp_path, sessions_port=0, fill_wait=0.05, bot="heuristic") as app, chromium() as browser:
        await sessions_games(app, 3)
        await turbo_game(app, 11)
        assert app.recorder is not None
        await app.recorder.flush()
        base = f"http://127.0.0.1:{app.http_port}"
        dave = await Person.open(browser, base, "dave")
        page = dave.page

        # the lobby's nav leads to the leaderboard
        await page.goto("/lobby")
        await page.click("header.topbar nav a:has-text('Leaderboard')")
        await page.wait_for_url("**/leaderboard")
        await page.wait_for_selector("body[data-ready=true]")
        assert await page.get_attribute("nav a[aria-current=page]", "href") == "/leaderboard"
        tabs = await page.eval_on_selector_all(".variant-tabs a", "els => els.map(e => e.dataset.variant)")
        assert sorted(tabs) == ["sessions", "turbo"]

        await page.click(".variant-tabs a[data-variant=sessions]")
        await page.wait_for_selector("#ratings-table[data-variant=sessions]")
        rows = await page.eval_on_selector_all(
            "#ratings-table tbody tr",
            "els => els.map(e => [e.dataset.player, e.dataset.bot, e.querySelector('.rank').textContent])",
        )
        assert sorted((p, b) for p, b, _ in rows) == [("alice", "0"), ("bob", "0"), ("heuristic", "1")]
        assert [r for _, _, r in rows] == ["1", "2", "3"]
        board = await page.evaluate("fetch('/leaderboard?variant=sessions').then(r => r.json())")
        assert [r["player"] for r in board["leaderboards"]["sessions"]] == [p for p, _, _ in rows]
        assert all(r["games"] == 3 for r in board["leaderboards"]["sessions"])
        await dave.shot("leaderboard")

        # alice's games, each with its replay
        await page.click("#ratings-table tr[data-player=alice] .player-link")
        await page.wait_for_selector("#player-games")
        assert "alice" in await page.inner_text(".player-title")
        ids = await page.eval_on_selector_all("#player-games tbody tr", "els => els.map(e => e.dataset.id)")
        assert len(ids) == 3
        assert "Rating" in await page.inner_text("#player-rating")
        await dave.shot("leaderboard-player")
        await page.click(f"#player-games tr[data-id='{ids[0]}'] [data-action=replay]")
        await page.wait_for_url(f"**/history#{ids[0]}")
        await page.wait_for_selector("#replay-bar")

        # a bot's page, from the Turbo board
        await page.goto("/leaderboard?variant=turbo&player=heuristic&bot=1")
        await page.wait_for_selector("#player-games")
        assert await page.locator("#player-games tbody tr").count() == 1
        assert await page.locator(".player-title .bot-pill").count() == 1
        assert dave.errors == []
        await dave.close()

        phone = await Person.open(browser, base, "erin", viewport=PHONE)
        await phone.page.goto("/leaderboard?variant=sessions")
        await phone.page.wait_for_selector("#ratings-table")
        assert await phone.page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        assert phone.errors == []
        await phone.close()


async def test_an_empty_leaderboard_says_so(tmp_path: Path) -> None:
    async with web_server(tmp_path) as app, chromium() as browser:
        person = await Person.open(browser, f"http://127.0.0.1:{app.http_port}", "erin")
        await person.page.goto("/leaderboard")
        await person.page.wait_for_selector("body[data-ready=true]")
        assert "Nobody is rated yet" in await person.page.inner_text("#leaderboard")
        assert person.errors == []
        await person.close()
