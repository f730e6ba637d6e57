"""The Trend node's seat page in chromium: set North to Human and the others to Dummy, start,
take the Human seat, and play a whole deal on the web app's table page by clicking; the page's
Dummy/Empty settings with an AI joining the Empty seat."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from e2e.webkit import Person, chromium, click_card, dom_hand, my_seat, next_frame, pass_three, raised_cards
from moonshot.server.trend_node import NodeConfig, NodeServer
from trend_sdk import SdkBot

pytestmark = [pytest.mark.asyncio, pytest.mark.browser]


async def start_node(**options: Any) -> NodeServer:
    cfg = NodeConfig(port=0, seed=9, round_interval=0, deal_interval=0, command_interval=0, substitute="random")
    for k, v in options.items():
        setattr(cfg, k, v)
    server = NodeServer(cfg)
    await server.start()
    return server


@asynccontextmanager
async def seat_page(name: str) -> AsyncIterator[tuple[NodeServer, Person]]:
    """A Trend node and ``name``'s browser on its origin (not yet on a page); closed on the way out."""
    server = await start_node()
    try:
        async with chromium() as browser:
            person = await Person.open(browser, f"http://127.0.0.1:{server.node.port}", name)
            yield server, person
            await person.close()
    finally:
        await server.stop()


async def set_seats(page: Any, kinds: list[str], bot: str = "random") -> None:
    for n, kind in enumerate(kinds, 1):
        await page.locator(f".seat[data-number='{n}'] input[value='{kind}']").check(force=True)
        if kind == "dummy":
            await page.select_option(f"select[name='bot-{n}']", bot)
    await page.click("#start")
    await page.wait_for_function("document.getElementById('message').textContent.includes('Seats set')")


async def test_a_person_takes_the_human_seat_and_plays_a_deal_by_clicking() -> None:
    async with seat_page("alice") as (server, alice):
        page = alice.page
        await page.goto("/")
        await page.wait_for_selector(".seat[data-number='1'] input[value='empty']:checked")
        await set_seats(page, ["human", "dummy", "dummy", "dummy"])
        await page.fill("input[name='name-1']", "alice")
        await alice.shot("trend-seats")
        await page.click(".sit-button[data-number='1']")
        await page.wait_for_url("**/game#trend-*")  # the game started: the seat page opens the table
        await page.wait_for_function("document.body.dataset.replayDone === 'true'")
        seat = await my_seat(page)
        assert seat == "north"  # seat 1 sits North in the match's first game
        assert len(await dom_hand(page)) == 13
        await pass_three(alice)
        turns = 0
        while True:
            await page.wait_for_function(
                "(s) => window.moonshotState.handScores.length > 0 || "
                "(window.moonshotState.phase === 'exposing' && !window.moonshotState.exposeDone[s] && "
                "document.querySelector('[data-action=no-expose]')) || "
                "(window.moonshotState.nextPlayer === s && document.querySelector('.my-hand button.card.legal'))",
                arg=seat,
            )
            # the page as it stands (a frame after the state): not the buttons and cards of a
            # decision alice has made, drawn before her move reached the state
            await next_frame(page)
            state = await alice.state()
            if state["handScores"]:
                break
            if state["phase"] == "exposing":
                await page.click("[data-action=no-expose]")
                await page.wait_for_function("(s) => window.moonshotState.exposeDone[s]", arg=seat)
                continue
            raised = await raised_cards(page)
            assert sorted(raised) == sorted(state["legalPlays"])
            before = len(state["hands"][seat])
            await click_card(page, raised[0])
            await page.wait_for_function(
                "([s, n]) => window.moonshotState.hands[s].length < n || window.moonshotState.handScores.length",
                arg=[seat, before],
            )
            turns += 1
            if turns == 4:
                await alice.shot("trend-table")
        assert turns == 13
        row = (await alice.state())["handScores"][0]
        table = server.node.table
        assert table is not None
        assert table.game.deal_index >= 1 or table.game.over
        assert any(row[s] for s in ("north", "east", "south", "west"))  # hearts and QS score somewhere
        assert table.stats()[0].forced == 0  # every card of the person's was the person's
        assert alice.errors == []


async def test_the_seat_page_seats_dummies_and_an_ai_in_the_empty_seat() -> None:
    async with seat_page("host") as (server, person):
        page = person.page
        await page.goto("/")
        await set_seats(page, ["dummy", "empty", "dummy", "dummy"], bot="heuristic")
        assert "player1 (heuristic)" in await page.inner_text(".seat[data-number='1']")
        assert "waiting for playerNumber 2" in await page.inner_text(".seat[data-number='2']")
        bot = SdkBot(f"ws://127.0.0.1:{server.node.port}/", 2, "my-ai", games=4, seed=3)
        await asyncio.wait_for(asyncio.to_thread(bot.run), 120)
        assert bot.errors == [] and len(bot.seen) == 4
        await page.wait_for_function("document.body.dataset.state === 'over'")
        assert await page.locator("#results tbody tr").count() == 4
        assert "my-ai" in await page.inner_text("#results")
        await person.shot("trend-seats-over", full_page=True)
        assert person.errors == []


async def test_seat_boxes_sit_at_their_chairs_as_the_players_rotate_and_the_table_links_only_to_the_node() -> None:
    """Between games the players move one chair round: each seat's box moves with its label,
    so Seat 1 is drawn at the top only while it sits North. The node's table page links to the
    seat page only (the node has no lobby, history, tournaments or leaderboard)."""
    async with seat_page("host") as (server, person):
        node = server.node
        page = person.page

        async def places() -> dict[int, tuple[str, str]]:
            """Seat number -> (where its box is: top/right/bottom/left of the felt, its label)."""
            out = {}
            felt = await page.locator("#seats").bounding_box()
            for n in (1, 2, 3, 4):
                box = page.locator(f".seat[data-number='{n}']")
                b = await box.bounding_box()
                cx, cy = b["x"] + b["width"] / 2 - felt["x"], b["y"] + b["height"] / 2 - felt["y"]
                w, h = felt["width"], felt["height"]
                where = "top" if cy < h / 3 else "bottom" if cy > 2 * h / 3 else "left" if cx < w / 2 else "right"
                out[n] = (where, await box.locator(".chair").inner_text())
            return out

        await page.goto("/")
        await page.wait_for_selector(".seat[data-number='1'] .chair:text('North')")
        assert await places() == {
            1: ("top", "North"),
            2: ("right", "East"),
            3: ("bottom", "South"),
            4: ("left", "West"),
        }
        node.game_index, node.state = 1, "between"  # game 1 played: seat 1 sits East in game 2
        await page.wait_for_selector(".seat[data-number='1'] .chair:text('East')")
        assert await places() == {
            1: ("right", "East"),
            2: ("bottom", "South"),
            3: ("left", "West"),
            4: ("top", "North"),
        }
        await person.shot("trend-seats-rotated")
        node.game_index, node.state = 0, "waiting"
        await page.goto("/game#nothing-yet")
        await page.wait_for_selector("header.topbar nav a")
        links = await page.eval_on_selector_all(
            "header.topbar a", "els => els.map(e => [e.getAttribute('href'), e.textContent])"
        )
        assert [href for href, _ in links] == ["/", "/"]  # the brand and "Seats"
        assert "Seats" in [text for _, text in links]
        await person.shot("trend-node-table-topbar")
        assert person.errors == []


async def test_the_seat_page_offers_the_levels_with_their_rating() -> None:
    from moonshot.bots.levels import LEVELS

    async with seat_page("host") as (server, person):
        page = person.page
        await page.goto("/")
        await page.locator("select[name='bot-1'] option[value='level:2']").wait_for(state="attached")
        label = await page.inner_text("select[name='bot-1'] option[value='level:2']")
        assert label == f"2 · {LEVELS[1].name} · rating {LEVELS[1].mu:.1f}"
        await set_seats(page, ["dummy", "empty", "empty", "empty"], bot="level:2")
        assert server.node.settings[0].bot == "level:2"
        await person.shot("trend-seats-levels")
        assert person.errors == []
