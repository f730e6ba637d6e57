"""The history page lists stored games and its replay viewer steps through a finished one, by
card, by trick and by hand, on the same table component in spectator mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from e2e.webkit import PHONE, Person, chromium, stored_bots_game, web_server
from moonshot.core.variants import TURBO
from moonshot.server.app import ServerApp

pytestmark = [pytest.mark.asyncio, pytest.mark.browser]

SEATS = ("north", "east", "south", "west")


async def finished_turbo_game(app: ServerApp) -> str:
    """A whole Turbo game of four bots on the server's own table runtime, stored as it went."""
    names = ["ada (bot)", "basil (bot)", "cleo (bot)", "dora (bot)"]
    return await stored_bots_game(app, TURBO, 99, "replay-me", names)


async def test_history_lists_a_finished_game_and_the_replay_steps_through_it(tmp_path: Path) -> None:
    async with web_server(tmp_path) as app, chromium() as browser:
        game_id = await finished_turbo_game(app)
        base = f"http://127.0.0.1:{app.http_port}"
        dave = await Person.open(browser, base, "dave")
        page = dave.page
        await page.goto("/history")
        row = page.locator(f"#games-table tr[data-id='{game_id}']")
        await row.wait_for()
        text = await row.inner_text()
        assert "Turbo" in text and "ada (bot)" in text and "finished" in text
        await dave.shot("history-desktop")
        await row.locator("[data-action=replay]").click()
        await page.wait_for_url(f"**/history#{game_id}")
        await page.wait_for_selector("#replay-bar")

        async def where() -> str:
            return str(await page.inner_text("#replay-where"))

        # the first stop: the first deal, every hand face up (a spectator's view)
        state = await dave.state_of("moonshotReplay.state")
        assert state["handNo"] == 1 and all(len(state["hands"][s]) == 13 for s in SEATS)
        assert await page.locator(".card.back").count() == 0
        assert await page.locator(".other-hand .card.face").count() == 39
        assert await page.locator(".my-hand .card.face").count() == 13
        assert "hand 1" in await where()

        # a trick forward: passes and charges are done, the first lead is next
        await page.click("[data-action=next-trick]")
        assert "trick 1: " in await where() and "leads" in await where()
        state = await dave.state_of("moonshotReplay.state")
        assert state["phase"] == "playing" and not state["trick"] and all(state["passDone"].values())
        # the next trick forward: the first trick is complete on the table
        await page.click("[data-action=next-trick]")
        state = await dave.state_of("moonshotReplay.state")
        assert state["trickWinner"] and len(state["trick"]) in (4, 8)
        assert await page.locator(".trick-area .card.face").count() == len(state["trick"])
        assert await where() == f"hand 1 \u00b7 trick 1 to {state['players'][state['trickWinner']]['name']}"
        await dave.shot("replay-desktop")
        # a card back: the trick's last card is taken back
        await page.click("[data-action=prev-card]")
        back = await dave.state_of("moonshotReplay.state")
        assert len(back["trick"]) == len(state["trick"]) - 1 and not back["trickWinner"]
        # by keyboard: right arrow is the next trick
        await page.keyboard.press("ArrowRight")
        await page.keyboard.press("ArrowRight")
        assert "hand 1 \u00b7 trick 2 to " in await where()
        # a hand forward, and back
        await page.click("[data-action=next-hand]")
        assert "hand 1 over" in await where()
        await page.click("[data-action=next-hand]")
        state = await dave.state_of("moonshotReplay.state")
        assert state["handNo"] == 2 and len(state["handScores"]) == 1
        await page.click("[data-action=prev-hand]")
        await page.click("[data-action=prev-hand]")
        assert (await dave.state_of("moonshotReplay.state"))["handNo"] == 1

        # the end: the game-over summary with the stored totals
        last = await page.eval_on_selector("#replay-bar input[type=range]", "e => e.max")
        await page.eval_on_selector(
            "#replay-bar input[type=range]",
            "(e, v) => { e.value = v; e.dispatchEvent(new Event('input')); }",
            last,
        )
        over = page.locator(".dialog-over")
        await over.wait_for()
        stored = await page.evaluate("fetch('/api/games/" + game_id + "').then(r => r.json())")
        state = await dave.state_of("moonshotReplay.state")
        assert [state["totals"][s] for s in SEATS] == stored["totals"]
        assert len(state["handScores"]) == 4
        assert "win" in await over.locator(".winner").inner_text()
        await dave.shot("game-over")
        assert dave.errors == []
        await dave.close()

        # the phone: the list and the replay fit
        phone = await Person.open(browser, base, "erin", viewport=PHONE)
        await phone.page.goto("/history")
        await phone.page.locator(f"#games-table tr[data-id='{game_id}']").wait_for()
        assert await phone.page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        await phone.shot("history-phone", full_page=True)
        await phone.page.goto(f"/history#{game_id}")
        await phone.page.wait_for_selector("#replay-bar")
        for _ in range(4):
            await phone.page.click("[data-action=next-card]")
        assert await phone.page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        await phone.shot("replay-phone", full_page=True)
        assert phone.errors == []
        await phone.close()


LISTEN = """
window.__said = [];
new MutationObserver((records) => {
  for (const r of records) for (const n of r.addedNodes) {
    const box = n.parentElement;
    if (box && box.id === 'announce') window.__said.push(n.textContent);
  }
}).observe(document, {childList: true, subtree: true});
"""
WORD = {"T": "10", "J": "jack", "Q": "queen", "K": "king", "A": "ace"}
SUIT = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}


async def test_the_replay_says_each_card_and_each_tricks_taker_in_screen_reader_mode(tmp_path: Path) -> None:
    async with web_server(tmp_path) as app, chromium() as browser:
        game_id = await finished_turbo_game(app)
        base = f"http://127.0.0.1:{app.http_port}"
        rae = await Person.open(browser, base, "rae")
        await rae.context.add_init_script("localStorage.setItem('moonshot.settings', JSON.stringify({announce: true}))")
        await rae.context.add_init_script(LISTEN)
        page = rae.page
        await page.goto(f"/history#{game_id}")
        await page.wait_for_selector("#replay-bar")
        events = (await (await page.request.get(f"/api/games/{game_id}")).json())["events"]
        # step by card through the first two tricks: each card, then the trick's taker, in the live region
        expected = []
        for e in events:
            if e["type"] == "play":
                card = e["card"]
                expected.append(f"{e['seat'].capitalize()} plays the {WORD.get(card[0], card[0])} of {SUIT[card[1]]}")
            elif e["type"] == "end_trick":
                expected.append(f"{e['winner'].capitalize()} takes the trick")
                if len([x for x in expected if "takes the trick" in x]) == 2:
                    break
        await page.focus("#replay-bar [data-action=next-card]")
        while len([s for s in await page.evaluate("window.__said") if "takes the trick" in s]) < 2:
            index = await page.evaluate("document.body.dataset.replayIndex")
            await page.keyboard.press("Enter")
            await page.wait_for_function("(i) => document.body.dataset.replayIndex !== i", arg=index)
        said = [s for s in await page.evaluate("window.__said") if " plays the " in s or " takes the trick" in s]
        assert [s.split(",")[0] for s in said] == expected
        # by trick: the next trick's cards and taker in one step
        before = len(await page.evaluate("window.__said"))
        await page.focus("#replay-bar [data-action=next-trick]")
        await page.keyboard.press("Enter")
        await page.wait_for_function(
            "(n) => window.__said.slice(n).some((s) => s.includes('takes the trick'))", arg=before
        )
        assert len([s for s in (await page.evaluate("window.__said"))[before:] if " plays the " in s]) >= 4
        assert any(", " in s and "point" in s for s in said if "takes the trick" in s)  # with the trick's points
        # a step back says where the replay stands, as the bar shows it
        await page.keyboard.press("ArrowLeft")
        where = await page.inner_text("#replay-where")
        await page.wait_for_function("(w) => window.__said[window.__said.length - 1] === w", arg=where)
        assert rae.errors == []
        await rae.close()


@pytest.mark.parametrize("viewport", [None, PHONE], ids=["desktop", "phone"])
async def test_each_finished_game_in_the_list_offers_review(tmp_path: Path, viewport: dict[str, int] | None) -> None:
    """A finished game's row has Review beside Replay: it opens the replay with the review of the
    viewer's seat asked for at once (the server's answer stands in here: 202, second in line)."""
    async with web_server(tmp_path) as app, chromium() as browser:
        game_id = await finished_turbo_game(app)
        base = f"http://127.0.0.1:{app.http_port}"
        tag = "phone" if viewport else "desktop"
        erin = await Person.open(browser, base, "erin", viewport=viewport)
        await erin.context.add_cookies([{"name": "name", "value": quote("erin"), "url": base}])
        page = erin.page
        asked: list[str] = []

        async def review(route: Any) -> None:
            asked.append(route.request.url)
            body = {"status": "queued", "progress": {"done": 0, "total": 60}, "position": 2}
            await route.fulfill(status=202, headers={"Retry-After": "10"}, json=body)

        await page.route("**/api/games/*/review?*", review)
        await page.goto("/history")
        row = page.locator(f"#games-table tr[data-id='{game_id}']")
        await row.wait_for()
        link = row.locator("a[data-action=review]")
        assert await link.inner_text() == "Review"
        label = await link.get_attribute("aria-label") or ""
        assert label.startswith("Review the game of ") and "ada (bot)" in label
        assert await row.locator("a[data-action=replay]").count() == 1
        assert await page.evaluate("document.documentElement.scrollWidth") <= (viewport or {"width": 10_000})["width"]
        await erin.shot(f"history-review-link-{tag}", full_page=bool(viewport))
        await link.click()
        await page.wait_for_url(f"**/history?review#{game_id}")
        await page.wait_for_function("document.querySelector('#review-status')?.textContent.includes('2nd in line')")
        assert len(asked) == 1 and f"/api/games/{game_id}/review?" in asked[0] and "seat=0" in asked[0]  # erin: no seat
        assert not await page.locator("#review").is_hidden()
        await erin.shot(f"history-review-opened-{tag}", full_page=bool(viewport))
        assert erin.errors == []
        await erin.close()
