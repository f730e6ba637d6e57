"""The other variants on the same pages: Trend's exposure of the ace of hearts, and Kierki's
contracts with no passing and any lead."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from e2e.webkit import Person, act_if_asked, chromium, click_card, dom_hand, my_seat, raised_cards, web_server
from moonshot.bots.registry import make_bot
from moonshot.core.variants import STANDARD
from moonshot.runtime.table import BotSeat, Table
from moonshot.server.app import ServerApp

pytestmark = [pytest.mark.asyncio, pytest.mark.browser]


async def test_trend_offers_the_exposure_to_the_holder_of_the_ace_of_hearts(tmp_path: Path) -> None:
    async with web_server(tmp_path, seed=3) as app, chromium() as browser:
        erin = await Person.open(browser, f"http://127.0.0.1:{app.http_port}", "erin")
        await erin.enter_lobby()
        game_id = await erin.create_game("trend")
        await erin.add_bots(game_id, "heuristic", 3)
        await erin.open_table(game_id)
        page = erin.page
        seat = await my_seat(page)
        # keep the ace of hearts when passing
        await page.wait_for_selector("[data-action=pass]")
        for card in [c for c in await dom_hand(page) if c != "AH"][:3]:
            await click_card(page, card)
        await page.click("[data-action=pass]:not([disabled])")
        await page.wait_for_function("['exposing', 'playing'].includes(window.moonshotState.phase)")
        state = await erin.state()
        assert "AH" in state["hands"][seat], "the seed deals erin the ace of hearts"
        expose = page.locator("[data-action=expose]")
        await expose.wait_for()
        assert "double" in await page.inner_text(".action-bar")
        await expose.click()
        await page.wait_for_function("(s) => (window.moonshotState.exposed[s] || []).includes('AH')", arg=seat)
        badge = page.locator(".seat-area.pos-bottom .badge.exposed")
        assert "exposed" in await badge.inner_text()
        # and the hand is played to its score sheet (Trend's points are negative, a moon positive)
        while not (await erin.state())["handScores"]:
            if not await act_if_asked(erin):
                await page.wait_for_timeout(50)
        sheet = page.locator(".dialog-scores")
        await sheet.wait_for()
        row = (await erin.state())["handScores"][0]
        points = [row[s] for s in ("north", "east", "south", "west")]
        cells = await sheet.locator("tbody tr").first.locator("td").all_inner_texts()
        assert cells[1:] == [str(p) for p in points] and any(points)
        assert erin.errors == []
        await erin.close()


async def test_kierki_names_the_contract_and_has_no_passing(tmp_path: Path) -> None:
    async with web_server(tmp_path) as app, chromium() as browser:
        kim = await Person.open(browser, f"http://127.0.0.1:{app.http_port}", "kim")
        await kim.enter_lobby()
        game_id = await kim.create_game("kierki")
        await kim.add_bots(game_id, "random", 3)
        await kim.open_table(game_id)
        page = kim.page
        seat = await my_seat(page)
        state = await kim.state()
        assert state["kind"] == 1 and state["kindName"] and state["pass"] == "hold"  # no passing at all
        assert await page.locator("[data-action=pass]").count() == 0
        await page.wait_for_function(
            "(s) => window.moonshotState.nextPlayer === s && document.querySelector('.my-hand button.card.legal')",
            arg=seat,
        )
        state = await kim.state()
        if not state["trick"]:  # leading: any card, hearts too
            assert sorted(await raised_cards(page)) == sorted(state["hands"][seat])
        # the contract is on the table from the deal on, not only on the hand's score sheet
        assert await page.inner_text(".deal-info") == f"Hand 1: {state['kindName']}"
        while not (await kim.state())["trick"]:
            if not await act_if_asked(kim):
                await page.wait_for_timeout(50)
        assert state["kindName"] in await page.inner_text(".deal-info")
        await kim.shot("kierki-contract")
        while not (await kim.state())["handScores"]:
            if not await act_if_asked(kim):
                await page.wait_for_timeout(50)
        sheet = page.locator(".dialog-scores")
        await sheet.wait_for()
        assert state["kindName"] in await sheet.inner_text()
        assert kim.errors == []
        await kim.close()


async def finished_standard_game(app: ServerApp) -> str:
    """A whole standard game of four bots on the server's table runtime, stored as it went."""
    names = ["ada (bot)", "basil (bot)", "cleo (bot)", "dora (bot)"]
    seats = [BotSeat(make_bot("heuristic"), random.Random(i), name=n) for i, n in enumerate(names)]
    meta = {"protocol": "turbo", "algorithms": json.dumps(["heuristic"] * 4), "lobby_variant": "standard"}
    table = Table(STANDARD, seats, seed=5, table_id="hold-hand", recorder=app.recorder, meta=meta)
    app._track(table)
    await table.done
    assert app.recorder is not None
    await app.recorder.flush()
    return table.id


async def test_standards_fourth_hand_is_a_hold_hand_on_the_table_and_the_score_sheet(tmp_path: Path) -> None:
    """Standard's fourth hand has no pass (a hold hand, unlike Turbo's keeper hand with its charge
    and pile): the deal says so (``hold``) and the pages name it from that, not from a variant."""
    async with web_server(tmp_path) as app, chromium() as browser:
        game_id = await finished_standard_game(app)
        dave = await Person.open(browser, f"http://127.0.0.1:{app.http_port}", "dave")
        page = dave.page
        await page.goto(f"/history#{game_id}")
        await page.wait_for_selector("#replay-bar")
        assert await page.inner_text(".deal-info") == "Hand 1 \u00b7 pass to the left"
        for _ in range(3):
            await page.click("[data-action=next-hand]")
            await page.click("[data-action=next-hand]")
        state = await dave.state_of("moonshotReplay.state")
        assert state["handNo"] == 4 and state["pass"] == "hold" and len(state["handScores"]) == 3
        assert await page.inner_text(".deal-info") == "Hand 4 \u00b7 no passing: a hold hand"
        assert "hold hand" in await page.inner_text(".center-info")
        await page.click("[data-action=next-hand]")  # the fourth hand is over
        assert len((await dave.state_of("moonshotReplay.state"))["handScores"]) == 4
        await page.click(".tools button:has-text('Score sheet')")
        sheet = page.locator(".dialog-scores")
        await sheet.wait_for()
        labels = await sheet.locator("tbody td.hand-label").all_inner_texts()
        assert labels[:4] == ["1 (left)", "2 (right)", "3 (across)", "4 (hold)"]
        assert "keeper" not in await sheet.inner_text()
        await dave.shot("score-sheet-hold")
        assert dave.errors == []
        await dave.close()
