"""The game review and its "Learn from your mistakes" exercises are a modal dialog like the web
app's others (js/dialog.js; test_web_dialogs): the replay bar's Review button opens it by the
keyboard, it is named by its heading (the review's, then the exercise's), Tab and Shift+Tab go
round inside it, the page behind is inert (the review's live region still speaks), Escape takes an
exercise back to the review with the focus on its Learn button, and Escape again closes the review
with the focus back on the Review button. Desktop and phone; screenshots go to
/tmp/shots/review-dialog (never into the repository)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from e2e.test_web_dialogs import inside, keyboard_open, tab_round
from e2e.test_web_review import FakeReviews, contract_review, finished_standard_game, game_of, named, open_replay
from e2e.webkit import PHONE, chromium, expect, web_server

pytestmark = [pytest.mark.asyncio, pytest.mark.browser]

SHOTS = Path("/tmp/shots/review-dialog")
VIEWPORTS = {"desktop": None, "phone": PHONE}

# the controls Tab reaches in the dialog, as dialog.js counts them
TABBABLE = """() => [...document.querySelectorAll(
  "#review a[href], #review button:not([disabled]), #review input:not([disabled]), #review select:not([disabled]),"
  + " #review [tabindex]:not([tabindex='-1'])"
)].filter((n) => n.tabIndex >= 0 && n.getClientRects().length > 0).length"""


async def inert(page: Any, selector: str) -> bool:
    return bool(await page.evaluate("(s) => document.querySelector(s).closest('[inert]') !== null", selector))


async def goes_round(page: Any) -> None:
    """Tab past the last control and Shift+Tab past the first: the focus stays in the dialog."""
    count = int(await page.evaluate(TABBABLE))
    assert count >= 2
    forward = await tab_round(page, "#review", "Tab", count + 2)
    assert forward[0] in forward[1:]  # it went round, not stuck
    await tab_round(page, "#review", "Shift+Tab", count + 2)


@pytest.mark.parametrize("view", ["desktop", "phone"])
async def test_the_review_and_its_exercises_are_a_modal_dialog(tmp_path: Path, view: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    async with web_server(tmp_path) as app, chromium() as browser:
        game_id = await finished_standard_game(app)
        eve = await named(browser, f"http://127.0.0.1:{app.http_port}", "eve", VIEWPORTS[view])
        page = eve.page
        await open_replay(eve, game_id)
        fake = FakeReviews(contract_review(await game_of(page, game_id), 0))
        for step in fake.seen:
            step.set()
        await page.route("**/api/games/*/review?*", fake.handle)

        # the review, opened by the keyboard: a dialog named by its heading, the page behind inert
        opener = page.locator("#replay-bar [data-action=review]")
        await keyboard_open(opener)
        dialog = page.locator("#review[role=dialog][aria-modal=true]")
        await dialog.wait_for()
        await page.wait_for_selector("#review-timeline")
        assert await dialog.get_attribute("aria-labelledby") == "review-title"
        assert await page.inner_text("#review-title") == "Review of ada"
        await expect(page.locator("#review-title")).to_be_focused()
        # the replay's table holds live regions: what is beside them is inert, as deep as it lies
        for behind in ("#replay-bar", "header.topbar", "#table .felt", "#table .side-panel .tools"):
            assert await inert(page, behind), f"{behind} is not inert behind the review"
        assert not await inert(page, "#review-live")  # the review's live region still speaks
        await goes_round(page)
        await page.screenshot(path=str(SHOTS / f"{view}-review.png"))

        # the exercises, opened by the keyboard from the review: the same dialog, named anew
        learn = page.locator("#review [data-action=learn]")
        await keyboard_open(learn)
        await page.wait_for_selector("#learn-step")
        assert await page.inner_text("#review-title") == "Learn from ada's mistakes"
        assert await inside(page, "#review .learn-hand")  # a card to choose has the focus
        assert await inert(page, "#replay-bar")
        await goes_round(page)
        await page.screenshot(path=str(SHOTS / f"{view}-learn.png"))

        # Escape: back to the review, the focus on the Learn button; again: closed, the focus back
        await page.keyboard.press("Escape")
        await page.wait_for_selector("#review-timeline")
        await expect(learn).to_be_focused()
        assert await dialog.is_visible() and await inert(page, "#replay-bar")
        await page.keyboard.press("Escape")
        await expect(page.locator("#review")).to_be_hidden()
        await expect(opener).to_be_focused()
        assert await page.evaluate("document.querySelector('[inert]') === null")  # the page is back
        await page.screenshot(path=str(SHOTS / f"{view}-closed.png"))

        # the close button says the same: the focus back on the Review button
        await keyboard_open(opener)
        await page.wait_for_selector("#review-timeline")
        await page.locator("#review [data-action=close-review]").click()
        await expect(page.locator("#review")).to_be_hidden()
        await expect(opener).to_be_focused()
        assert eve.errors == []
        await eve.close()
