"""The clock in the browser: a game created with a clock in the lobby, the countdown for the seat
to act, the bot playing for a person whose time ran out, the hand-over banner after two timeouts
in a row, and "Take my seat back". Two people (two browser contexts) and two bots: one person
never acts, the other plays, and nobody waits much longer than the clock."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import pytest

from e2e.webkit import (
    ACT_MS,
    PHONE,
    TIMEOUT_MS,
    Person,
    act_if_asked,
    chromium,
    clocked_game,
    my_seat,
    next_frame,
    web_server,
)

pytestmark = [pytest.mark.asyncio, pytest.mark.browser]

SEATS = ["north", "east", "south", "west"]
# seconds a decision: short, so the test is quick, and long enough that bob, who plays, is not
# timed out on a loaded machine (two timeouts in a row would hand his seat to the bot too); the
# bounds below are generous
CLOCK = 5
SHOTS = Path("/tmp/shots")


async def shot(person: Person, name: str) -> None:
    """A screenshot for looking at the page (outside the repository)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    await person.page.screenshot(path=str(SHOTS / f"{name}.png"))


async def keep_playing(person: Person, stop: asyncio.Event) -> None:
    """A person who plays whenever asked, until told to stop."""
    while not stop.is_set():
        if not await act_if_asked(person):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 0.2)


async def close_score_sheet(page: Any) -> None:
    """Close a hand's score sheet if the page shows one, as a person would: it opens by itself at a
    hand's end, over the table and modal, and the game goes on behind it while a bot plays."""
    await next_frame(page)
    close = page.locator(".dialog-scores [data-action=close-sheet]")
    if await close.count():
        await close.click()
        await close.wait_for(state="detached")


async def take_seat_back(page: Any) -> None:
    """Click "Take my seat back", as a person would: while the bot plays the seat the hands go on,
    and a hand's score sheet may open over the page at any moment (closed first, then again)."""
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT_MS / 1000
    while True:
        await close_score_sheet(page)
        try:
            await page.click("#take-seat-back", timeout=ACT_MS)
            return
        except PlaywrightTimeout:
            assert loop.time() < deadline, "Take my seat back was never there to click"


async def test_the_clock_plays_for_a_silent_person_and_hands_the_seat_back(tmp_path: Path) -> None:
    async with web_server(tmp_path) as app, chromium() as browser:
        app.turbo.options.clock_choices = None  # (any clock: 5 s is no choice of the lobby's)
        base = f"http://127.0.0.1:{app.http_port}"
        alice = await Person.open(browser, base, "alice")
        bob = await Person.open(browser, base, "bob")
        await alice.enter_lobby()
        await bob.enter_lobby()
        page = alice.page
        # the lobby offers a clock; the test adds a short one to the choices
        assert await page.locator("#clock option").count() >= 3
        assert await page.eval_on_selector("#clock", "s => s.value") == "30"
        await alice.choose_clock(CLOCK)
        game_id = await alice.create_game("standard")
        assert f"{CLOCK} s a move" in await page.locator(f"#games li[data-id='{game_id}'] .game-title").inner_text()
        await shot(alice, "lobby-clock-desktop")
        row = bob.page.locator(f"#games li[data-id='{game_id}']")
        await row.locator("[data-action=join]").click()
        # both tables are open before the game starts (alice's in a second tab, her lobby adds the
        # bots): the first decision's clock is on them from its first second, however long a
        # loaded machine takes to open a page
        await row.locator("a[data-action=open]").wait_for()
        await bob.open_table(game_id)
        lobby = alice.page
        page = await alice.context.new_page()
        alice.watch(page)
        await page.goto(f"/game#{game_id}")
        await page.wait_for_function("document.body.dataset.replayDone === 'true'")
        await alice.add_bots(game_id, "random", 2)
        alice.page = page
        await lobby.close()
        seated = "() => ['north', 'east', 'south', 'west'].includes(document.body.dataset.seat)"
        for p in (page, bob.page):
            await p.wait_for_function(seated)  # its sit comes live, with the others' ("spectator" till then)
        me = await my_seat(page)
        hosted = app.turbo.games[game_id].hosted
        assert hosted is not None and hosted.table.policy.clock == CLOCK

        stop = asyncio.Event()
        bob_plays = asyncio.create_task(keep_playing(bob, stop))
        try:
            # alice's pass runs under the clock: her countdown shows, and bob sees it too
            mine = page.locator(f"#clock .clock-item.mine[data-seat='{me}']")
            await mine.wait_for()
            left = int(await mine.get_attribute("data-remaining") or "0")
            assert 0 <= left <= CLOCK
            await bob.page.locator(f"#clock .clock-item[data-seat='{me}']").wait_for()
            await shot(alice, "table-clock-desktop")
            loop = asyncio.get_running_loop()
            shown = loop.time()
            # she does nothing: the table's bot passes for her after the clock, not much later
            await page.wait_for_function("(s) => window.moonshotState.passDone[s]", arg=me, timeout=20_000)
            waited = loop.time() - shown
            assert waited <= CLOCK + 8, waited
            chair = SEATS.index(me)
            assert hosted.table.stats()[chair].timeouts >= 1

            # a second timeout in a row (her first card): the bot plays her seat, and says so
            banner = page.locator("#clock-away")
            await banner.wait_for(state="visible", timeout=40_000)
            assert "bot is playing for you" in (await banner.inner_text()).lower()
            assert await page.evaluate("document.body.dataset.away") == "true"
            await shot(alice, "table-clock-away-desktop")
            await page.set_viewport_size(PHONE)
            await shot(alice, "table-clock-away-phone")
            await page.set_viewport_size({"width": 1280, "height": 860})
            # bob is never told alice's seat is his to take back
            assert await bob.page.locator("#clock-away").is_hidden()
            # nobody but alice can take her seat back: bob's POST /game/back is for his own seat
            # (a no-op), a name not at the table is refused
            back = """async (id) => (await fetch('/game/back', {method: 'POST', credentials: 'same-origin',
                headers: {'Content-Type': 'application/json'}, body: JSON.stringify({id})})).status"""
            assert await bob.page.evaluate(back, game_id) == 200
            carol = await Person.open(browser, base, "carol")
            await carol.enter_lobby()
            assert await carol.page.evaluate(back, game_id) == 403
            await carol.close()
            assert hosted.table.snapshot().chairs[chair].away

            # "Take my seat back": the banner goes, and her next decision is hers, under the clock
            await take_seat_back(page)
            await banner.wait_for(state="hidden")
            await mine.wait_for(timeout=40_000)
            assert not hosted.table.snapshot().chairs[chair].away
            timeouts = hosted.table.stats()[chair].timeouts
            asked = """(s) => { const st = window.moonshotState;
                return (st.phase === 'passing' && !st.passDone[s] && document.querySelector('[data-action=pass]'))
                  || (st.nextPlayer === s && document.querySelector('.my-hand button.card.legal')); }"""
            await page.wait_for_function(asked, arg=me)
            await close_score_sheet(page)  # the last hand's, when her decision is the next one's pass
            assert await act_if_asked(alice)
            assert hosted.table.stats()[chair].timeouts == timeouts  # in time: no timeout counted
        finally:
            stop.set()
            await bob_plays
        assert not alice.errors and not bob.errors, alice.errors + bob.errors


async def test_a_rated_game_has_a_clock_by_default_and_a_bad_clock_is_refused(tmp_path: Path) -> None:
    async with web_server(tmp_path) as app, chromium() as browser:
        alice = await Person.open(browser, f"http://127.0.0.1:{app.http_port}", "alice")
        await alice.enter_lobby()
        page = alice.page

        async def create(body: dict[str, Any]) -> Any:
            return await page.evaluate(
                """async (body) => {
                  const r = await fetch('/lobby/new', {method: 'POST', credentials: 'same-origin',
                    headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)});
                  return [r.status, await r.text()];
                }""",
                body,
            )

        status, _ = await create({"variant": "standard"})
        assert status == 200
        games = [g for g in app.turbo.games.values() if g.created_by == "alice"]
        assert games and games[-1].clock == 30.0  # a rated game's default
        status, text = await create({"variant": "standard", "clock": 0})
        assert status == 400 and "rated game has a clock" in text
        status, text = await create({"variant": "standard", "clock": 7})
        assert status == 400 and "clock" in text
        status, _ = await create({"variant": "standard", "clock": 0, "practice": True})  # practice: unrated
        assert status == 200
        assert [g for g in app.turbo.games.values() if g.practice][-1].clock is None


async def test_a_page_opened_after_the_hand_over_shows_the_banner_and_the_countdown(tmp_path: Path) -> None:
    """The clocks are part of what a page gets when it opens: a person whose seat the bot took
    while no page of theirs was open sees the banner at once, and the countdown of the seat to act."""
    clock = 10  # long enough for a page to open, on a loaded machine, while bob's decision still runs
    async with web_server(tmp_path) as app, chromium() as browser:
        app.turbo.options.clock_choices = None
        base = f"http://127.0.0.1:{app.http_port}"
        alice = await Person.open(browser, base, "alice")
        bob = await Person.open(browser, base, "bob")
        game_id = await clocked_game(alice, bob, "standard", clock)
        await bob.open_table(game_id)
        hosted = app.turbo.games[game_id].hosted
        assert hosted is not None
        chair = next(i for i, p in enumerate(hosted.players) if p.name == "alice")
        bobs = next(i for i, p in enumerate(hosted.players) if p.name == "bob")

        # alice has no table page open: her clock runs out twice and the bot takes her seat
        stop = asyncio.Event()
        bob_plays = asyncio.create_task(keep_playing(bob, stop))
        loop = asyncio.get_running_loop()
        try:
            end = loop.time() + 60
            while not hosted.table.snapshot().chairs[chair].away:
                assert loop.time() < end, "the bot never took alice's seat"
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 0.1)
        finally:
            stop.set()
            await bob_plays
        # bob now lets his clock run: a decision of his is under the clock when alice's page opens
        end = loop.time() + 30
        while bobs not in {s for s, _ in hosted.table.countdown().running}:
            assert loop.time() < end, "bob was never asked"
            await asyncio.sleep(0.05)
        await alice.open_table(game_id)
        page = alice.page
        banner = page.locator("#clock-away")
        await banner.wait_for(state="visible", timeout=5_000)
        assert "bot is playing for you" in (await banner.inner_text()).lower()
        item = page.locator(f"#clock .clock-item[data-seat='{SEATS[bobs]}']")
        await item.wait_for(timeout=5_000)
        assert 0 <= int(await item.get_attribute("data-remaining") or "-1") <= clock
        # bob plays again: his clock would soon hand his seat to the bot too, and four bots would
        # end the game in seconds, before alice is back
        stop = asyncio.Event()
        bob_plays = asyncio.create_task(keep_playing(bob, stop))
        try:
            await shot(alice, "table-clock-away-late-desktop")
            await page.set_viewport_size(PHONE)
            await shot(alice, "table-clock-away-late-phone")
            await page.set_viewport_size({"width": 1280, "height": 860})
            # a reload (a reconnect from scratch) shows it again
            await page.reload()
            await page.wait_for_function("document.body.dataset.replayDone === 'true'")
            await banner.wait_for(state="visible", timeout=5_000)
            # she takes her seat back from the late page
            await take_seat_back(page)
            await banner.wait_for(state="hidden")
            assert not hosted.table.snapshot().chairs[chair].away
        finally:
            stop.set()
            await bob_plays
        assert not alice.errors and not bob.errors, alice.errors + bob.errors
