"""The tournaments page: a person creates a tournament with the form, enters it as an external
entrant over HTTP with the token the page showed, plays every one of its games in the browser,
and reads the standings, the paired differences and the plot."""

from __future__ import annotations

from pathlib import Path

import pytest

from e2e.test_mixed_tables import play_whole_game
from e2e.webkit import Person, chromium, web_server

pytestmark = [pytest.mark.asyncio, pytest.mark.browser]


async def test_a_person_creates_a_tournament_and_plays_in_it_over_http(tmp_path: Path) -> None:
    async with web_server(tmp_path, move_timeout=30.0) as app, chromium() as browser:
        alice = await Person.open(browser, f"http://127.0.0.1:{app.http_port}", "alice")
        await alice.enter_lobby()
        page = alice.page
        await page.locator("header.topbar nav a", has_text="Tournaments").click()
        await page.wait_for_url("**/tournaments")
        await page.select_option("#t-variant", "standard")
        await page.fill("#t-sets", "1")
        await page.fill("#t-deals", "1")
        # no seed: with an external entrant (alice) the server draws a secret one
        await page.fill("#t-bots", "random\nheuristic\nsearch --simulations 5")
        await page.fill("#t-externals", "alice")
        await page.click("#create-tournament button[type=submit]")
        await page.locator("#tokens code").wait_for()
        tid = (await page.evaluate("location.hash")).lstrip("#")
        token = await page.locator("#tokens code").inner_text()
        assert tid and len(token) > 20

        for game in range(4):  # one set of one deal, in four rotations
            await page.goto(f"/tournaments#{tid}")
            await page.fill("#t-token", token)
            await page.click("#play-form button[type=submit]")
            await page.wait_for_url("**/game#*")
            await page.wait_for_function("document.body.dataset.replayDone === 'true'")
            # seated: the game's "sit" may come after the replay's end (the table was still
            # forming when the page opened its stream, as on a busy machine)
            await page.wait_for_function("['north', 'east', 'south', 'west'].includes(document.body.dataset.seat)")
            state = await play_whole_game(alice)
            assert len(state["handScores"]) == 1, game

        t = app.tournaments.tournaments[tid]  # type: ignore[union-attr]
        assert t.task is not None
        await t.task
        assert t.status == "finished"
        await page.goto(f"/tournaments#{tid}")
        await page.locator("#standings tbody tr").nth(3).wait_for()
        rows = await page.eval_on_selector_all("#standings tbody tr", "els => els.map(e => e.dataset.entrant)")
        assert sorted(rows) == sorted(["random", "heuristic", "search(simulations=5)", "alice"])
        me = page.locator("#standings tr[data-entrant=alice]")
        cells = await me.locator("td").all_inner_texts()
        assert cells[2] == "4" and cells[-1] == "0"  # 4 deals played, no no-shows
        assert await page.locator("#paired tbody tr").count() == 4
        # every game is listed with a link to its replay
        replays = page.locator("#games a[data-action=replay]")
        assert await replays.count() == 4
        assert (await replays.first.get_attribute("href")).startswith(f"/history#{tid}-g")
        await page.locator("img.plot").wait_for()
        await page.wait_for_function("document.querySelector('img.plot').naturalWidth > 0")
        await alice.shot("tournament-entrant", full_page=True)
        # the list links to it
        await page.goto("/tournaments")
        await page.locator(f"#tournaments-table tr[data-id='{tid}']").wait_for()
        assert alice.errors == []
        await alice.close()
