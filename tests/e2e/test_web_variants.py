"""The other variants on the same pages: Trend's exposure of the ace of hearts, and Kierki's
contracts with no passing and any lead."""

from __future__ import annotations

from pathlib import Path

import pytest

from e2e.webkit import Person, act_if_asked, chromium, click_card, dom_hand, my_seat, raised_cards, web_server

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
        assert state["kind"] == 1 and state["kindName"] and state["pass"] == "keeper"
        assert await page.locator("[data-action=pass]").count() == 0
        await page.wait_for_function(
            "(s) => window.moonshotState.nextPlayer === s && document.querySelector('.my-hand button.card.legal')",
            arg=seat,
        )
        state = await kim.state()
        if not state["trick"]:  # leading: any card, hearts too
            assert sorted(await raised_cards(page)) == sorted(state["hands"][seat])
        while not (await kim.state())["handScores"]:
            if not await act_if_asked(kim):
                await page.wait_for_timeout(50)
        sheet = page.locator(".dialog-scores")
        await sheet.wait_for()
        assert state["kindName"] in await sheet.inner_text()
        assert kim.errors == []
        await kim.close()
