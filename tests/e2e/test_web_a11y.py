"""The web app for everyone, in chromium on a desktop and a phone viewport: an axe-core audit of
every page and state (the lobby, the Settings dialog, the table passing, on your turn, with the
bot playing for you and at game over with the rematch, the history list, a replay, the review and
learning from mistakes, tournaments, the leaderboard, the Trend node's seat page) finds no serious
or critical violation; a whole game played with the keyboard alone, from the lobby to the final
scores; screen-reader mode's announcements over a hand; and the preferences (four-colour deck,
large cards, the your-turn sound, title and notification): off by default, kept after a reload,
drawn on every page that shows cards.

axe-core comes from the ``axe-playwright-python`` package (the dev extra), which ships its
``axe.min.js``; without it the audits skip and say so. Screenshots of each audited state go to
/tmp/shots/a11y (never into the repository)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from e2e.test_trend_page import set_seats, start_node
from e2e.test_web_clock import keep_playing
from e2e.test_web_review import contract_review, finished_standard_game
from e2e.webkit import (
    PHONE,
    Person,
    act_if_asked,
    chromium,
    click_card,
    clocked_game,
    dom_hand,
    expect,
    my_seat,
    next_frame,
    web_server,
)

pytestmark = [pytest.mark.asyncio, pytest.mark.browser]

SHOTS = Path("/tmp/shots/a11y")
SEATS = ("north", "east", "south", "west")
VIEWPORTS = {"desktop": None, "phone": PHONE}
RANK_WORD = {"T": "10", "J": "jack", "Q": "queen", "K": "king", "A": "ace"}
SUIT_WORD = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}


def axe_source() -> str:
    try:
        import axe_playwright_python
    except ImportError:
        pytest.skip("no axe-core for the audit: pip install axe-playwright-python (the dev extra has it)")
    return (Path(axe_playwright_python.__file__).parent / "axe.min.js").read_text(encoding="utf-8")


async def shot(person: Person, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    await person.page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


async def audit(person: Person, axe: str, name: str) -> None:
    """axe-core over the page as it is now: no serious or critical violation (the screenshot too)."""
    page = person.page
    if not await page.evaluate("typeof window.axe !== 'undefined'"):
        await page.evaluate(axe)
    violations = await page.evaluate(
        """() => axe.run(document, {resultTypes: ['violations']}).then(r => r.violations.map(v => ({
            id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.slice(0, 4).map(n => n.target.join(' ') + ' :: ' + (n.failureSummary || '')),
        })))"""
    )
    await shot(person, name)
    bad = [v for v in violations if v["impact"] in ("serious", "critical")]
    assert not bad, f"{name}: " + "\n".join(f"{v['id']} ({v['impact']}): {v['help']} {v['nodes']}" for v in bad)


async def named(browser: Any, base: str, name: str, viewport: dict[str, int] | None, pace: str = "instant") -> Person:
    person = await Person.open(browser, base, name, viewport=viewport, pace=pace)
    await person.context.add_cookies([{"name": "name", "value": quote(name), "url": base}])
    return person


async def review_fourth_decision(page: Any, stored: str) -> None:
    """On the replay of game ``stored``: review seat 2 (a review contrived from the game, served in
    place of the worker's) and open its fourth decision."""
    game_json = await (await page.request.get(f"/api/games/{stored}")).json()
    review = contract_review(game_json, 2)

    async def serve_review(route: Any) -> None:
        await route.fulfill(status=200, json={"status": "done", "review": review})

    await page.route("**/api/games/*/review*", serve_review)
    await page.select_option("#review-seat", "2")
    await page.click("[data-action=review]")
    await page.wait_for_selector("#review-timeline")
    await page.locator("#review-timeline .decision").nth(3).click()


async def practice_game(person: Person, variant: str, clock: str = "0") -> str:
    """A practice game (unrated: it may have no clock) of `person` and three bots; its table open."""
    page = person.page
    if clock not in await page.eval_on_selector_all("#clock option", "os => os.map(o => o.value)"):
        await page.evaluate("(c) => document.querySelector('#clock').append(new Option(c + ' s', c))", clock)
    await page.select_option("#clock", clock)
    await page.check("#practice")
    game_id = await person.create_game(variant)
    await person.add_bots(game_id, "random", 3)
    await person.open_table(game_id)
    return game_id


@pytest.mark.parametrize("view", ["desktop", "phone"])
async def test_every_page_and_table_state_passes_an_axe_audit(tmp_path: Path, view: str) -> None:
    axe = axe_source()
    async with web_server(tmp_path) as app, chromium() as browser:
        app.turbo.options.clock_choices = None  # a 1 s clock: the bot soon plays for the person
        base = f"http://127.0.0.1:{app.http_port}"
        stored = await finished_standard_game(app)
        alice = await Person.open(browser, base, "alice", viewport=VIEWPORTS[view])
        page = alice.page
        await alice.enter_lobby()
        await audit(alice, axe, f"{view}-lobby")
        await page.click("#settings-open")
        await page.locator("#settings-dialog[open]").wait_for()
        await audit(alice, axe, f"{view}-settings")
        await page.keyboard.press("Escape")
        await page.locator("#settings-dialog").wait_for(state="hidden")

        # the table with every preference on: passing, then the person's turn
        await page.evaluate(
            "localStorage.setItem('moonshot.settings', JSON.stringify("
            "{deck: 'four', cards: 'large', sound: false, title: true, announce: true}))"
        )
        await practice_game(alice, "standard")
        seat = await my_seat(page)
        await page.wait_for_selector("[data-action=pass]")
        for card in (await dom_hand(page))[:2]:
            await click_card(page, card)
        await audit(alice, axe, f"{view}-table-passing")
        await click_card(page, (await dom_hand(page))[2])
        await page.click("[data-action=pass]:not([disabled])")
        await page.wait_for_function(
            "(s) => window.moonshotState.nextPlayer === s && document.querySelector('.my-hand button.card.legal')",
            arg=seat,
        )
        await audit(alice, axe, f"{view}-table-your-turn")

        # another person leaves a game to the clock: the bot plays for them while ned plays on (so
        # the game goes on and the banner stays), then game over and rematch
        bea = await Person.open(browser, base, "bea", viewport=VIEWPORTS[view])
        ned = await Person.open(browser, base, "ned")
        game_id = await clocked_game(bea, ned, "trend", 3)
        await ned.open_table(game_id)
        stop = asyncio.Event()
        ned_plays = asyncio.create_task(keep_playing(ned, stop))
        try:
            # bea's page may open before or after the hand-over: the banner shows either way
            await bea.open_table(game_id)
            await bea.page.wait_for_selector("#clock-away:not([hidden])", timeout=60_000)
            await audit(bea, axe, f"{view}-table-bot-plays-for-you")
        finally:
            stop.set()  # ned stops too: the bot soon plays for him, and the game plays out
            await ned_plays
        await bea.page.wait_for_function("window.moonshotState.complete === true", timeout=120_000)
        await bea.page.locator("#rematch-box[data-state]").wait_for()
        await audit(bea, axe, f"{view}-table-game-over")
        assert bea.errors == [] and ned.errors == []
        await bea.close()
        await ned.close()

        # the history list, a replay, the review and learning from mistakes
        await page.goto("/history")
        await page.wait_for_selector("#games-table")
        await audit(alice, axe, f"{view}-history")
        await page.goto(f"/history#{stored}")
        await page.wait_for_selector("#replay-bar [data-action=review]")
        await page.keyboard.press("ArrowRight")
        await audit(alice, axe, f"{view}-replay")
        await review_fourth_decision(page, stored)
        await page.wait_for_selector("#review-options")
        await audit(alice, axe, f"{view}-review")
        await page.click("[data-action=learn]")
        await page.wait_for_selector(".learn-hand button.card")
        await audit(alice, axe, f"{view}-learn")

        for path, ready, name in (
            ("/tournaments", "#tournaments-page *", "tournaments"),
            ("/leaderboard", "#leaderboard *", "leaderboard"),
        ):
            await page.goto(path)
            await page.wait_for_selector(ready)
            await page.wait_for_load_state("networkidle")
            await audit(alice, axe, f"{view}-{name}")
        assert alice.errors == []
        await alice.close()


@pytest.mark.parametrize("view", ["desktop", "phone"])
async def test_the_trend_nodes_seat_page_passes_an_axe_audit(view: str) -> None:
    axe = axe_source()
    server = await start_node()
    try:
        async with chromium() as browser:
            base = f"http://127.0.0.1:{server.node.port}"
            kim = await Person.open(browser, base, "kim", viewport=VIEWPORTS[view])
            page = kim.page
            await page.goto("/")
            await page.wait_for_selector(".seat[data-number='1'] input[value='empty']:checked")
            await audit(kim, axe, f"{view}-trend-seats")
            await page.click("#settings-open")  # the web app's Settings, on the node's own page too
            await page.locator("#settings-dialog[open]").wait_for()
            await audit(kim, axe, f"{view}-trend-seats-settings")
            await page.keyboard.press("Escape")
            if view == "phone":
                return  # the node's table is the web app's table page, audited above on a phone
            await set_seats(page, ["human", "dummy", "dummy", "dummy"])
            await page.fill("input[name='name-1']", "kim")
            await page.click(".sit-button[data-number='1']")
            await page.wait_for_url("**/game#trend-*")
            await page.wait_for_selector("[data-action=pass]")
            await audit(kim, axe, f"{view}-trend-table")
            assert kim.errors == []
            await kim.close()
    finally:
        await server.stop()


# ---- the keyboard alone --------------------------------------------------------------------------


async def focused(page: Any, predicate: str) -> bool:
    return bool(await page.evaluate(f"(() => {{ const a = document.activeElement; return Boolean({predicate}); }})()"))


async def tab_to(page: Any, predicate: str, *, limit: int = 80) -> None:
    """Press Tab until the focused element matches `predicate` (JS over `a`, the active element)."""
    for _ in range(limit):
        if await focused(page, predicate):
            return
        await page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {predicate}")


async def choose(page: Any, value: str) -> None:
    """On a focused <select>, the arrow keys until it shows `value`."""
    for key in ("ArrowDown", "ArrowUp"):
        for _ in range(20):
            if await page.evaluate("document.activeElement.value") == value:
                return
            await page.keyboard.press(key)
    raise AssertionError(f"the select never showed {value}")


@pytest.mark.parametrize("view", ["desktop", "phone"])
async def test_a_whole_game_with_the_keyboard_alone(tmp_path: Path, view: str) -> None:
    async with web_server(tmp_path) as app, chromium() as browser:
        base = f"http://127.0.0.1:{app.http_port}"
        kim = await Person.open(browser, base, "kim", viewport=VIEWPORTS[view])
        page = kim.page
        kb = page.keyboard
        await page.goto("/lobby")
        await page.wait_for_selector("#name-form input")
        assert await focused(page, "a.name === 'name'")  # the name field has the focus
        await kb.type("kim")
        await kb.press("Enter")
        await page.wait_for_selector("#people li:has-text('kim')")
        # a Trend game (four deals), practice and without a clock, by Tab, arrows, Space and Enter
        await tab_to(page, "a.id === 'variant'")
        await choose(page, "trend")
        await tab_to(page, "a.id === 'clock'")
        await choose(page, "0")
        await tab_to(page, "a.id === 'practice'")
        await kb.press("Space")
        await tab_to(page, "a.id === 'create-game'")
        await kb.press("Enter")
        row = page.locator("#games li.game-row.mine")
        await row.wait_for()
        await tab_to(page, "a.dataset.action === 'add-bot'")
        for n in range(3):
            await kb.press("Enter")
            await page.wait_for_function(
                "(n) => document.querySelectorAll('#games li.mine .chip:not(.empty)').length >= n", arg=n + 2
            )
            if n < 2:  # the list was drawn anew: the focus is still on the row's Add bot
                await expect(row.locator("[data-action=add-bot]")).to_be_focused()
        # the table has started: the row now offers its table, and the focus is in the row
        await page.wait_for_function("document.activeElement.dataset.action === 'open'")
        await kb.press("Enter")
        await page.wait_for_url("**/game#*")
        await page.wait_for_function("document.body.dataset.replayDone === 'true'")
        seat = await my_seat(page)

        plays = 0
        while True:
            # something is asked of kim (by the state, which runs a frame ahead of the page), and
            # the page offers it; then the page as it stands (a frame later), not as it was drawn
            # before kim's last move reached the state
            await page.wait_for_function(
                """(s) => { const st = window.moonshotState;
                  return st.complete || document.querySelector('.dialog-scores') ||
                    (st.phase === 'passing' && !st.passDone[s] && document.querySelector('[data-action=pass]')) ||
                    (st.phase === 'exposing' && !st.exposeDone[s] &&
                     document.querySelector('[data-action=no-expose]')) ||
                    (st.nextPlayer === s && !st.trickWinner &&
                     document.querySelector('.my-hand button.card.legal')); }""",
                arg=seat,
                timeout=30_000,
            )
            await next_frame(page)
            state = await kim.state()
            if state["complete"]:
                break
            if await page.locator(".dialog-scores").count():
                # the hand's score sheet took the focus: Enter goes on to the next hand
                assert await focused(page, "a.dataset.action === 'close-sheet'")
                await kb.press("Enter")
                await page.locator(".dialog-scores").wait_for(state="detached")
                continue
            if await page.locator("[data-action=pass]").count():
                # arrows move along the hand, Space picks; Tab reaches the Pass button
                await kb.press("ArrowRight")
                for _ in range(3):
                    assert await focused(page, "a.matches('.my-hand button.card')")
                    await kb.press("Space")
                    await kb.press("ArrowRight")
                await tab_to(page, "a.dataset.action === 'pass'", limit=10)
                await kb.press("Enter")
                await page.wait_for_function("(s) => window.moonshotState.passDone[s]", arg=seat)
                continue
            if await page.locator("[data-action=no-expose]").count():
                await tab_to(page, "a.dataset.action === 'no-expose'", limit=40)
                await kb.press("Enter")
                await page.wait_for_function("(s) => window.moonshotState.exposeDone[s]", arg=seat)
                continue
            # my turn: a playable card has the focus (after the first, found again by itself)
            if not await focused(page, "a.matches('.my-hand button.card.legal')"):
                await kb.press("ArrowRight")
            assert await focused(page, "a.matches('.my-hand button.card.legal')")
            card = await page.evaluate("document.activeElement.dataset.card")
            before = len(state["hands"][seat])
            await kb.press("Enter")
            await page.wait_for_function(
                "([s, n, h]) => { const st = window.moonshotState; "
                "return st.hands[s].length < n || st.handNo > h || st.complete; }",
                arg=[seat, before, state["handNo"]],
            )
            assert any(
                e["event"]["type"] == "play" and e["event"]["card"] == card and e["event"]["seat"] == seat
                for e in await page.evaluate("window.moonshotEvents")
            )
            plays += 1
            # the focus stays in the hand (never dropped to the page)
            await page.wait_for_function("document.activeElement && document.activeElement !== document.body")

        assert plays == 52  # four deals of 13 tricks, every card of the person's played by keyboard
        over = page.locator(".dialog-over")
        await over.wait_for()
        assert await focused(page, "a.closest('.dialog-over')")  # game over took the focus
        text = await over.inner_text()
        totals = (await kim.state())["totals"]
        for s in SEATS:
            assert str(totals[s]) in text
        await shot(kim, f"{view}-keyboard-game-over")
        # a visible focus ring on the next control Tab reaches
        await kb.press("Tab")
        assert await focused(page, "a.closest('.dialog-over')")
        outline = await page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
        assert outline != "none"
        assert kim.errors == []
        await kim.close()


# ---- screen-reader mode ----------------------------------------------------------------------------

LISTEN = """
window.__said = [];
new MutationObserver((records) => {
  for (const r of records) for (const n of r.addedNodes) {
    const box = n.parentElement;
    if (box && (box.id === 'announce' || box.id === 'announce-turn')) window.__said.push([box.id, n.textContent]);
  }
}).observe(document, {childList: true, subtree: true});
"""


def spoken(card: str, form: str = "name") -> str:
    return f"{RANK_WORD.get(card[0], card[0])} of {SUIT_WORD[card[1]]}"


def standard_points(cards: list[str]) -> int:
    return sum(13 if c == "QS" else 1 if c[1] == "H" else 0 for c in cards)


@pytest.mark.parametrize("view", ["desktop", "phone"])
async def test_screen_reader_mode_says_every_card_trick_turn_and_score(tmp_path: Path, view: str) -> None:
    async with web_server(tmp_path) as app, chromium() as browser:
        base = f"http://127.0.0.1:{app.http_port}"
        ann = await named(browser, base, "ann", VIEWPORTS[view])
        await ann.context.add_init_script(LISTEN)
        page = ann.page
        await page.goto("/lobby")
        await page.wait_for_selector("#create-game")
        # turned on in the Settings dialog, as a person would
        await page.click("#settings-open")
        await page.check("#setting-announce")
        await page.keyboard.press("Escape")
        await practice_game(ann, "standard")
        seat = await my_seat(page)
        while not (await ann.state())["handScores"]:
            if not await act_if_asked(ann):
                await page.wait_for_timeout(50)
        await page.wait_for_function("window.__said.some(([r, t]) => t.startsWith('Hand 1 is over'))")
        said = await page.evaluate("window.__said")
        polite = [t for r, t in said if r == "announce"]
        assertive = [t for r, t in said if r == "announce-turn"]
        events = [e["event"] for e in await page.evaluate("window.moonshotEvents")]
        live = events[[e["type"] for e in events].index("end_replay") + 1 :]
        trick: list[str] = []
        expected: list[str] = []
        for ev in live:
            if ev["type"] == "play":
                trick.append(ev["card"])
                who = "You play" if ev["seat"] == seat else f"{ev['seat'].capitalize()} plays"
                expected.append(f"{who} the {spoken(ev['card'])}")
            elif ev["type"] == "end_trick":
                pts = standard_points(trick)
                unit = "point" if pts == 1 else "points"
                who = "You take" if ev["winner"] == seat else f"{ev['winner'].capitalize()} takes"
                expected.append(f"{who} the trick, {pts} {unit}")
                trick = []
            elif ev["type"] == "hand_complete":
                break
        said_plays = [t for t in polite if re.match(r"^(You play|\w+ plays|You take|\w+ takes) ", t)]
        assert said_plays[: len(expected)] == expected
        assert len([e for e in expected if "the trick" in e]) == 13
        # on each of the person's turns: "Your turn" at once, then the cards they may play and their hand
        assert assertive.count("Your turn") >= 13  # the pass and 13 plays (some said twice is fine)
        turn_lines = [t for t in polite if t.startswith("You may play: ")]
        assert len(turn_lines) >= 13
        assert all("Your hand: " in t for t in turn_lines)
        assert any(t.startswith("Pick three cards to pass to the left. Your hand: ") for t in polite)
        score = next(t for t in polite if t.startswith("Hand 1 is over"))
        row = (await ann.state())["handScores"][0]
        for s in SEATS:
            name = "You" if s == seat else s.capitalize()
            assert f"{name} {row[s]}" in score
        assert ann.errors == []
        await ann.close()


# ---- preferences: deck, card size, signals -----------------------------------------------------------

STUBS = """
window.__audio = {contexts: 0, tones: 0};
class FakeAudioContext {
  constructor() { window.__audio.contexts += 1; this.currentTime = 0; this.state = 'running'; this.destination = {}; }
  resume() { return Promise.resolve(); }
  createGain() { return {gain: {setValueAtTime() {}, exponentialRampToValueAtTime() {}}, connect(x) { return x; }}; }
  createOscillator() {
    return {frequency: {}, connect(x) { return x; }, start() { window.__audio.tones += 1; }, stop() {}};
  }
}
window.AudioContext = FakeAudioContext;
window.webkitAudioContext = FakeAudioContext;
window.__notes = {asked: 0, shown: []};
class FakeNotification {
  constructor(title, options) { window.__notes.shown.push(title); this.onclick = null; }
  close() {}
  static requestPermission() {
    window.__notes.asked += 1;
    FakeNotification.permission = 'granted';
    sessionStorage.setItem('permission', 'granted');  // kept across a reload, as the browser would
    return Promise.resolve('granted');
  }
}
FakeNotification.permission = sessionStorage.getItem('permission') || 'default';
window.Notification = FakeNotification;
Object.defineProperty(document, 'hidden', {configurable: true, get: () => window.__hidden === true});
"""


@pytest.mark.parametrize("view", ["desktop", "phone"])
async def test_preferences_are_off_by_default_kept_and_drawn_everywhere(tmp_path: Path, view: str) -> None:
    async with web_server(tmp_path) as app, chromium() as browser:
        base = f"http://127.0.0.1:{app.http_port}"
        stored = await finished_standard_game(app)
        bo = await named(browser, base, "bo", VIEWPORTS[view], pace="normal")
        await bo.context.add_init_script(STUBS)
        page = bo.page
        await page.goto("/lobby")
        await page.wait_for_selector("#create-game")

        # every signal off by default: a game's turn makes no sound, no title mark, no notification
        await page.click("#settings-open")
        for key in ("sound", "title", "notify", "announce"):
            assert not await page.is_checked(f"#setting-{key}")
        assert await page.is_checked("#setting-deck-two")
        assert await page.is_checked("#setting-cards-normal")
        await page.keyboard.press("Escape")
        await practice_game(bo, "standard")
        seat = await my_seat(page)
        await page.wait_for_selector("[data-action=pass]")
        assert not (await page.title()).startswith("\u25cf")
        assert await page.evaluate("window.__audio") == {"contexts": 0, "tones": 0}
        assert await page.evaluate("window.__notes") == {"asked": 0, "shown": []}
        html_class = await page.evaluate("document.documentElement.className")
        assert "deck-four" not in html_class and "cards-large" not in html_class

        # turned on in the dialog by keyboard: the choices hold at once and after a reload
        await page.focus("#settings-open")
        await page.keyboard.press("Enter")
        await page.locator("#settings-dialog[open]").wait_for()
        await page.focus("#setting-deck-two")
        await page.keyboard.press("ArrowDown")  # radio buttons: the arrow picks the next one
        await page.focus("#setting-cards-normal")
        await page.keyboard.press("ArrowDown")
        for key in ("sound", "title"):
            await page.focus(f"#setting-{key}")
            await page.keyboard.press("Space")
        await page.check("#setting-notify")
        await page.wait_for_function("window.__notes.asked === 1")  # asked only now
        assert await page.is_checked("#setting-notify")
        await shot(bo, f"{view}-settings-on")
        await page.keyboard.press("Escape")
        await expect(page.locator("#settings-open")).to_be_focused()  # the focus is back on the button
        await page.reload()
        await page.wait_for_function("document.body.dataset.replayDone === 'true'")
        html_class = await page.evaluate("document.documentElement.className")
        assert "deck-four" in html_class and "cards-large" in html_class
        kept = await page.evaluate("JSON.parse(localStorage.getItem('moonshot.settings'))")
        assert kept == {
            "deck": "four",
            "cards": "large",
            "sound": True,
            "title": True,
            "notify": True,
            "announce": False,
        }

        # four colours: a diamond is blue, a club green, a heart red, a spade black; cards are larger
        colours = await page.evaluate(
            """() => Object.fromEntries([...document.querySelectorAll('.my-hand .card.face')]
                 .map(c => [c.dataset.card[1], getComputedStyle(c).color]))"""
        )
        wanted = {"D": "rgb(29, 78, 216)", "C": "rgb(22, 101, 52)", "H": "rgb(200, 16, 46)", "S": "rgb(26, 26, 26)"}
        for suit, colour in colours.items():
            assert colour == wanted[suit], (suit, colour)
        width = await page.evaluate("document.querySelector('.my-hand .card.face').getBoundingClientRect().width")
        assert width > (76 if view == "desktop" else 54)
        await shot(bo, f"{view}-table-four-colour-large")

        # the signals on: a decision of the person's marks the title and sounds
        await page.wait_for_selector("[data-action=pass]")
        await page.wait_for_function("document.title.startsWith('\u25cf Your turn \u2014 ')")
        assert (await page.evaluate("window.__audio"))["tones"] >= 2
        for card in (await dom_hand(page))[:3]:
            await click_card(page, card)
        await page.click("[data-action=pass]:not([disabled])")
        await page.wait_for_function("(s) => window.moonshotState.passDone[s]", arg=seat)
        # the person's first play, then another seat's turn: no mark (the bots' cards come at a
        # person's pace, so that turn lasts)
        await page.wait_for_function(
            "(s) => window.moonshotState.nextPlayer === s && document.querySelector('.my-hand button.card.legal')",
            arg=seat,
        )
        assert (await page.title()).startswith("\u25cf Your turn")
        legal = await page.eval_on_selector_all(".my-hand button.card.legal", "els => els.map(e => e.dataset.card)")
        await click_card(page, legal[0])
        await page.wait_for_function(
            "(s) => { const st = window.moonshotState; return st.nextPlayer !== s && "
            "!document.title.startsWith('\u25cf'); }",
            arg=seat,
        )
        # with the page hidden, the person's turn shows a notification
        await page.evaluate("window.__hidden = true")
        await page.wait_for_function(
            "(s) => window.moonshotState.nextPlayer === s && document.querySelector('.my-hand button.card.legal')",
            arg=seat,
        )
        await page.wait_for_function("window.__notes.shown.length >= 1")
        assert (await page.evaluate("window.__notes.shown"))[0] == "Your turn"

        # the replay, the review and learning draw the same deck
        await page.goto(f"/history#{stored}")
        await page.wait_for_selector("#replay-bar [data-action=review]")
        assert "deck-four" in await page.evaluate("document.documentElement.className")
        diamond = page.locator(".table-root .card.face[data-card$='D']").first
        assert await diamond.evaluate("c => getComputedStyle(c).color") == "rgb(29, 78, 216)"
        await review_fourth_decision(page, stored)
        await shot(bo, f"{view}-review-four-colour")
        await page.click("[data-action=learn]")
        await page.wait_for_selector(".learn-hand button.card")
        learn_width = await page.evaluate("document.querySelector('.learn-hand .card').getBoundingClientRect().width")
        assert learn_width >= 60
        await shot(bo, f"{view}-learn-four-colour-large")
        assert bo.errors == []
        await bo.close()
