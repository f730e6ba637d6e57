"""Every modal of the web app is a dialog the keyboard cannot leave (js/dialog.js): the Settings
dialog (a native <dialog>) and the table's overlays (the score sheet and the last trick here; game
over shares their code and is driven by keyboard in test_web_a11y). Tab and Shift+Tab go round
inside it, the page behind is inert, Escape closes it and the focus goes back to the control that
opened it. Desktop and phone; screenshots go to /tmp/shots/dialogs (never into the repository)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from e2e.webkit import PHONE, Person, act_if_asked, chromium, expect, web_server

pytestmark = [pytest.mark.asyncio, pytest.mark.browser]

SHOTS = Path("/tmp/shots/dialogs")
VIEWPORTS = {"desktop": None, "phone": PHONE}


async def inside(page: Any, selector: str) -> bool:
    return bool(
        await page.evaluate("(s) => Boolean(document.activeElement && document.activeElement.closest(s))", selector)
    )


async def keyboard_open(opener: Any) -> None:
    """Focus `opener` and press Enter, as a keyboard user would, once it is enabled: the table
    draws on the next animation frame after its state changes, so a button can still be disabled
    for a moment after the state says it is usable (a disabled button takes no focus)."""
    await expect(opener).to_be_enabled()
    await opener.focus()
    await expect(opener).to_be_focused()
    await opener.page.keyboard.press("Enter")


async def tab_round(page: Any, selector: str, key: str, presses: int) -> list[str]:
    """Press `key` (Tab or Shift+Tab) `presses` times; the focus must stay inside `selector` each
    time. What had the focus, in order."""
    seen = []
    for _ in range(presses):
        await page.keyboard.press(key)
        assert await inside(page, selector), f"{key} left {selector} for {await describe(page)}"
        seen.append(await describe(page))
    return seen


async def describe(page: Any) -> str:
    return str(
        await page.evaluate(
            "() => { const a = document.activeElement; return a ? `${a.tagName}#${a.id}.${a.dataset.action || ''}"
            "[${a.name || ''}=${a.value || ''}]` : 'none'; }"
        )
    )


@pytest.mark.parametrize("view", ["desktop", "phone"])
async def test_a_modal_keeps_the_keyboard_inside_closes_on_escape_and_gives_the_focus_back(
    tmp_path: Path, view: str
) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    async with web_server(tmp_path) as app, chromium() as browser:
        base = f"http://127.0.0.1:{app.http_port}"
        ida = await Person.open(browser, base, "ida", viewport=VIEWPORTS[view])
        page = ida.page
        await ida.enter_lobby()

        # the Settings dialog, opened by the keyboard
        await keyboard_open(page.locator("#settings-open"))
        await page.locator("#settings-dialog[open]").wait_for()
        assert await inside(page, "#settings-dialog")
        count = await page.evaluate(
            "() => [...document.querySelectorAll('#settings-dialog button, #settings-dialog input')]"
            ".filter(n => n.getClientRects().length).length"
        )
        forward = await tab_round(page, "#settings-dialog", "Tab", count + 3)  # round past the end
        assert len(set(forward)) >= 3 and forward[0] in forward[1:]  # it went round, not stuck
        await tab_round(page, "#settings-dialog", "Shift+Tab", count + 3)
        await page.screenshot(path=str(SHOTS / f"{view}-settings.png"))
        await page.keyboard.press("Escape")
        await page.locator("#settings-dialog").wait_for(state="hidden")
        await expect(page.locator("#settings-open")).to_be_focused()

        # the table's score sheet: a modal over an inert table
        game_id = await ida.create_game("standard")
        await ida.add_bots(game_id, "random", 3)
        await ida.open_table(game_id)
        await page.wait_for_selector("[data-action=pass]")
        opener = page.get_by_role("button", name="Score sheet")
        await keyboard_open(opener)
        sheet = page.locator(".dialog-scores[role=dialog][aria-modal=true]")
        await sheet.wait_for()
        assert await inside(page, ".dialog-scores")
        assert await page.evaluate("document.querySelector('.table-root .my-hand').closest('[inert]') !== null")
        assert await page.evaluate("document.querySelector('header, .topbar').closest('[inert]') !== null")
        assert not await page.evaluate("document.getElementById('announce').closest('[inert]')")  # still speaks
        await tab_round(page, ".dialog-scores", "Tab", 5)
        await tab_round(page, ".dialog-scores", "Shift+Tab", 5)
        await page.screenshot(path=str(SHOTS / f"{view}-score-sheet.png"))
        await page.keyboard.press("Escape")
        await sheet.wait_for(state="detached")
        await expect(opener).to_be_focused()
        assert await page.evaluate("document.querySelector('[inert]') === null")  # the page is back

        # the last trick, once a trick is over: its four cards, the same keyboard rules
        while not await page.evaluate("Boolean(window.moonshotState.lastTrick)"):
            if not await act_if_asked(ida):
                await page.wait_for_timeout(50)
        opener = page.get_by_role("button", name="Last trick")
        await keyboard_open(opener)
        last = page.locator(".dialog-last[role=dialog][aria-modal=true]")
        await last.wait_for()
        await expect(last.locator(".last-trick .last-play")).to_have_count(4)
        await tab_round(page, ".dialog-last", "Tab", 3)
        await page.screenshot(path=str(SHOTS / f"{view}-last-trick.png"))
        await page.keyboard.press("Escape")
        await last.wait_for(state="detached")
        await expect(opener).to_be_focused()
        assert ida.errors == []
        await ida.close()
