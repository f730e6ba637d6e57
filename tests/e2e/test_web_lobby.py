"""The lobby page: a name held by another browser is refused clearly and another can be picked;
people, games and chat are live across browsers; leaving a game."""

from __future__ import annotations

from pathlib import Path

import pytest

from e2e.webkit import Person, chromium, web_server

pytestmark = [pytest.mark.asyncio, pytest.mark.browser]


async def test_a_taken_name_is_refused_and_the_lobby_is_live(tmp_path: Path) -> None:
    async with web_server(tmp_path) as app, chromium() as browser:
        base = f"http://127.0.0.1:{app.http_port}"
        alice = await Person.open(browser, base, "alice")
        await alice.enter_lobby()
        game_id = await alice.create_game("trend")

        # another browser asks for "alice": refused while she holds it, with a way to pick another
        other = await Person.open(browser, base, "alice")
        page = other.page
        await page.goto("/lobby")
        await page.fill("#name-form input", "alice")
        await page.click("#name-form button")
        error = page.locator("#name-error")
        await error.wait_for()
        assert "taken" in await error.inner_text()
        await page.fill("#name-form input", "bob")
        await page.click("#name-form button")
        await page.wait_for_selector("#create-game")
        assert "bob" in await page.inner_text("#me")

        # both see each other, the game, and each other's chat
        await alice.page.locator("#people li", has_text="bob").wait_for()
        row = page.locator(f"#games li[data-id='{game_id}']")
        await row.wait_for()
        assert await row.locator(".chip:not(.empty)").all_inner_texts() == ["alice"]
        await row.locator("[data-action=join]").click()
        await alice.page.locator(f"#games li[data-id='{game_id}'] .chip", has_text="bob").wait_for()
        assert "Trend" in await alice.page.inner_text(f"#games li[data-id='{game_id}'] .game-title")
        await page.fill(".lobby-chat input", "anyone for hearts?")
        await page.press(".lobby-chat input", "Enter")
        await alice.page.locator("#lobby-chat li", has_text="anyone for hearts?").wait_for()

        # bob leaves the game; alice sees it
        await row.locator("[data-action=leave]").click()
        chips = alice.page.locator(f"#games li[data-id='{game_id}'] .chip:not(.empty)")
        await alice.page.locator(f"#games li[data-id='{game_id}'] .chip", has_text="bob").wait_for(state="detached")
        assert await chips.all_inner_texts() == ["alice"]
        # an unknown game id on the table page says so instead of retrying forever
        await page.goto("/game#no-such-game")
        fatal = page.locator("#fatal")
        await fatal.wait_for()
        assert "no-such-game" in await fatal.inner_text() or "no game" in (await fatal.inner_text()).lower()
        assert alice.errors == [] and other.errors == []
        await alice.close()
        await other.close()


async def test_the_bot_picker_offers_levels_with_their_rating_and_cost(tmp_path: Path) -> None:
    """Add bot picks a level by name, rating and cost (the named bots under "Other bots"); the bot
    that sits is that level's, and the server's own bots are the default's level (heuristic)."""
    from moonshot.bots.levels import LEVELS
    from moonshot.bots.registry import spec_of
    from moonshot.runtime.table import BotSeat

    async with web_server(tmp_path) as app, chromium() as browser:
        base = f"http://127.0.0.1:{app.http_port}"
        ann = await Person.open(browser, base, "ann")
        await ann.enter_lobby()
        page = ann.page
        levels = page.locator("#algorithm optgroup").nth(0).locator("option")
        await levels.nth(len(LEVELS) - 1).wait_for(state="attached")
        texts = await levels.all_inner_texts()
        assert len(texts) == len(LEVELS)
        for text, lv in zip(texts, LEVELS, strict=True):
            assert text.startswith(f"{lv.number} · {lv.name} · rating {lv.mu:.1f}"), text
            assert "ms a move" in text
        others = await page.locator("#algorithm optgroup").nth(1).locator("option").all_inner_texts()
        assert "duck" in others and "search" in others and not any(o.startswith("level:") for o in others)
        default = next(lv for lv in LEVELS if lv.spec == "heuristic")
        assert await page.input_value("#algorithm") == default.key
        game_id = await ann.create_game("standard")
        await page.select_option("#algorithm", "level:2")
        await ann.shot("lobby-levels")
        # the list as a person sees it open (a headless browser draws no popup: shown as a list box)
        await page.evaluate("document.querySelector('#algorithm').size = 18")
        await ann.shot("lobby-levels-list")
        await page.evaluate("document.querySelector('#algorithm').size = 0")
        await ann.add_bots(game_id, "level:2", 1)
        await ann.add_bots(game_id, "level:5", 2)
        hosted = app.turbo.games[game_id].hosted  # type: ignore[union-attr]
        assert hosted is not None
        specs = sorted(spec_of(c.occupant.bot) for c in hosted.table.chairs if isinstance(c.occupant, BotSeat))
        assert specs == sorted([LEVELS[1].spec, LEVELS[4].spec, LEVELS[4].spec])
        assert ann.errors == []
        await ann.close()
