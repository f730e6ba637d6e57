"""Not a test module: what the browser tests of the web app share.

A real ``moonshot serve`` app (``ServerApp`` with HTTP on a free loopback port and a temporary
SQLite store) runs in the test's event loop, and Playwright's async API drives Debian's chromium
from the same loop. ``Person`` is one browser context (its own cookies: one person) with helpers
that act only through the pages, as a person would.

The table page folds each event into ``window.moonshotState`` at once and draws it at the next
animation frame (js/game.js), so the state runs ahead of the page for a moment: a test that waits
on the state and then reads or uses the page first waits for that frame (``next_frame``), and
asserts on the page with Playwright's waiting ``expect``.

Set ``MOONSHOT_WEB_SHOTS=DIR`` to save the screenshots the tests take along the way (the ones in
docs/img come from ``MOONSHOT_WEB_SHOTS=docs/img``).
"""

from __future__ import annotations

import json
import os
import random
import shutil
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from moonshot.bots.registry import make_bot
from moonshot.core.rules import Rules
from moonshot.runtime.table import BotSeat, Table
from moonshot.server.app import ServerApp
from moonshot.server.config import ServerConfig

CHROMIUM = os.environ.get("MOONSHOT_CHROMIUM", "/usr/bin/chromium")
SHOTS = os.environ.get("MOONSHOT_WEB_SHOTS")
DESKTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}
# every wait, action and ``expect`` of the browser tests: generous, for a busy 2-core machine
# running two test processes beside other work (a wait that holds returns at once anyway)
TIMEOUT_MS = 20_000
# a click inside act_if_asked: past this the page has moved on (the decision was made, or a clock
# ran out) and the caller asks again; short, so a person under a 1 or 2 s clock is not held up
ACT_MS = 2_000


def expect(actual: Any) -> Any:
    """Playwright's waiting assertions (``await expect(locator).to_be_focused()``), with the
    tests' timeout instead of its own 5 s."""
    from playwright.async_api import expect as playwright_expect

    playwright_expect.set_options(timeout=TIMEOUT_MS)
    return playwright_expect(actual)


def need_chromium() -> None:
    if not (Path(CHROMIUM).exists() or shutil.which("chromium")):
        pytest.skip("no chromium for the browser tests: apt-get install chromium (make test does it as root)")


@asynccontextmanager
async def web_server(tmp_path: Path, **config: Any) -> AsyncIterator[ServerApp]:
    """``moonshot serve``'s app with HTTP on a free port, its games in a temporary SQLite file."""
    options: dict[str, Any] = {
        "sessions_port": None,
        "http_port": 0,
        "db_url": f"sqlite+aiosqlite:///{tmp_path / 'games.db'}",
        "bot": "random",
        "seed": 7,
        "secret": "browser-tests",
    }
    options.update(config)
    app = ServerApp(ServerConfig(**options))
    await app.start()
    try:
        yield app
    finally:
        await app.stop()


@asynccontextmanager
async def chromium() -> AsyncIterator[Any]:
    need_chromium()
    from playwright.async_api import async_playwright

    path = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=path, headless=True)
        try:
            yield browser
        finally:
            await browser.close()


async def stored_bots_game(app: ServerApp, rules: Rules, seed: int, table_id: str, names: Sequence[str]) -> str:
    """A whole game of four heuristic bots named ``names`` on the server's own table runtime,
    stored as it went (as a web game: protocol turbo): its id."""
    seats = [BotSeat(make_bot("heuristic"), random.Random(i), name=n) for i, n in enumerate(names)]
    meta = {"protocol": "turbo", "algorithms": json.dumps(["heuristic"] * 4)}
    table = Table(rules, seats, seed=seed, table_id=table_id, recorder=app.recorder, meta=meta)
    app._track(table)
    await table.done
    assert app.recorder is not None
    await app.recorder.flush()
    return table.id


def small_png(path: Path) -> None:
    """Shrink a screenshot for the docs: 128 colours keep the suits and the felt, at a third of the size."""
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=128, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    small.save(path, optimize=True)


class Person:
    """One person in their own browser context: own cookies, own pages."""

    def __init__(self, context: Any, base: str, name: str) -> None:
        self.context = context
        self.base = base
        self.name = name
        self.page: Any = None
        self.errors: list[str] = []

    @classmethod
    async def open(
        cls, browser: Any, base: str, name: str, *, viewport: dict[str, int] | None = None, pace: str = "instant"
    ) -> Person:
        context = await browser.new_context(viewport=viewport or DESKTOP, base_url=base)
        context.set_default_timeout(TIMEOUT_MS)
        # bots answer at once: "instant" shows their cards without the pauses people get, so a
        # hand takes seconds
        await context.add_init_script(f"localStorage.setItem('moonshot.pace', '{pace}')")
        person = cls(context, base, name)
        person.page = await context.new_page()
        person.watch(person.page)
        return person

    def watch(self, page: Any) -> None:
        page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))

        def console(m: Any) -> None:
            # a refused request (409 for an illegal card) is logged by the browser itself: that is
            # the page working; anything else at error level is a bug
            if m.type == "error" and "Failed to load resource" not in m.text:
                self.errors.append(f"console {m.type}: {m.text}")

        page.on("console", console)

    async def enter_lobby(self) -> None:
        page = self.page
        await page.goto("/lobby")
        await page.fill("#name-form input", self.name)
        await page.click("#name-form button")
        await page.wait_for_selector("#create-game")
        await page.wait_for_selector(f"#people li:has-text('{self.name}')")

    async def create_game(self, variant: str, rules: str = "classic") -> str:
        page = self.page
        await page.select_option("#variant", variant)
        if variant == "turbo":
            await page.select_option("#rules", rules)
        before = list(await page.eval_on_selector_all("#games li[data-id]", "els => els.map(e => e.dataset.id)"))
        await page.click("#create-game")
        # a row of this person's that was not there before (not any of theirs: they may have one)
        await page.wait_for_function(
            "(before) => [...document.querySelectorAll('#games li.game-row.mine[data-id]')]"
            ".some((e) => !before.includes(e.dataset.id))",
            arg=before,
        )
        ids = await page.eval_on_selector_all("#games li.mine[data-id]", "els => els.map(e => e.dataset.id)")
        new = [i for i in ids if i not in before]
        assert new, "the new game is not in the lobby"
        return str(new[0])

    async def choose_clock(self, seconds: int) -> None:
        """Choose a clock of ``seconds`` a move in the lobby, added to the choices the page offers
        (a test that wants a short one turns the server's ``clock_choices`` off)."""
        await self.page.evaluate(f"document.querySelector('#clock').append(new Option('{seconds} s', '{seconds}'))")
        await self.page.select_option("#clock", str(seconds))

    async def add_bots(self, game_id: str, algorithm: str, n: int) -> None:
        page = self.page
        await page.select_option("#algorithm", algorithm)
        row = page.locator(f"#games li[data-id='{game_id}']")
        players = row.locator(".chip:not(.empty)")
        for _ in range(n):
            before = await players.count()
            await row.locator("[data-action=add-bot]").click()
            await players.nth(before).wait_for()

    async def open_table(self, game_id: str) -> None:
        page = self.page
        row = page.locator(f"#games li[data-id='{game_id}']")
        await row.locator("a[data-action=open]").first.click()
        await page.wait_for_url(f"**/game#{game_id}")
        await page.wait_for_function("document.body.dataset.replayDone === 'true'")

    async def state(self) -> dict[str, Any]:
        """The table's folded state (what the page draws from)."""
        return dict(await self.page.evaluate("JSON.parse(JSON.stringify(window.moonshotState))"))

    async def state_of(self, path: str) -> dict[str, Any]:
        """A state object the page keeps (e.g. the replay viewer's ``moonshotReplay.state``)."""
        return dict(await self.page.evaluate(f"JSON.parse(JSON.stringify(window.{path}))"))

    async def shot(self, name: str, *, full_page: bool = False) -> None:
        if SHOTS:
            Path(SHOTS).mkdir(parents=True, exist_ok=True)
            path = Path(SHOTS) / f"{name}.png"
            await self.page.screenshot(path=str(path), full_page=full_page)
            small_png(path)

    async def close(self) -> None:
        await self.context.close()


async def clocked_game(host: Person, guest: Person, variant: str, seconds: int) -> str:
    """``host`` and ``guest`` enter the lobby, ``host`` creates a ``variant`` game with a clock of
    ``seconds``, ``guest`` joins it and ``host`` adds two random bots: the game's id (no table open)."""
    await host.enter_lobby()
    await guest.enter_lobby()
    await host.choose_clock(seconds)
    game_id = await host.create_game(variant)
    await guest.page.locator(f"#games li[data-id='{game_id}'] [data-action=join]").click()
    await host.add_bots(game_id, "random", 2)
    return game_id


# a card's top-left corner: hands overlap, and a person clicks the part of a card they can see
CORNER = {"x": 10, "y": 30}


async def click_card(page: Any, card: str) -> None:
    await page.locator(f".my-hand button.card[data-card='{card}']").click(position=CORNER)


async def next_frame(page: Any) -> None:
    """Wait until the page has drawn what its state says now: one animation frame. game.js asks
    for its frame when the state changes, before this asks for this one, and a frame runs its
    callbacks in the order they were asked for."""
    await page.evaluate("() => new Promise((done) => requestAnimationFrame(() => done()))")


async def my_seat(page: Any) -> str:
    await page.wait_for_function("document.body.dataset.seat")
    return str(await page.evaluate("document.body.dataset.seat"))


async def dom_hand(page: Any) -> list[str]:
    return list(await page.eval_on_selector_all(".my-hand .card", "els => els.map(e => e.dataset.card)"))


async def raised_cards(page: Any) -> list[str]:
    raised = ".my-hand button.card.legal:not([disabled])"
    return list(await page.eval_on_selector_all(raised, "els => els.map(e => e.dataset.card)"))


async def pass_three(person: Person) -> list[str]:
    """Choose the first three cards of the hand by clicking them, then confirm the pass."""
    page = person.page
    await page.wait_for_selector("[data-action=pass]")
    cards = (await dom_hand(page))[:3]
    for card in cards:
        await click_card(page, card)
    await page.click("[data-action=pass]:not([disabled])")
    await page.wait_for_function("(s) => window.moonshotState.passDone[s]", arg=await my_seat(page))
    return cards


async def act_if_asked(person: Person) -> bool:
    """Make whatever decision the table asks of this person, as a person would, through the page:
    pass the first three cards, charge nothing, decline to expose, play the first raised card.
    False when nothing is asked now (or the page moved on while we looked: the caller asks again)."""
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    page = person.page
    try:
        # what the page shows, once it shows the state as it stands (not a frame behind it, with a
        # decision already made still on offer)
        await next_frame(page)
        for action in ("no-charge", "no-expose"):
            button = page.locator(f"[data-action={action}]:not([disabled])")
            if await button.count():
                await button.click(timeout=ACT_MS)
                return True
        if await page.locator("[data-action=pass]").count():
            for card in (await dom_hand(page))[:3]:
                await page.locator(f".my-hand button.card[data-card='{card}']").click(position=CORNER, timeout=ACT_MS)
            await page.click("[data-action=pass]:not([disabled])", timeout=ACT_MS)
            return True
        legal = await raised_cards(page)
        if legal and await page.evaluate("document.querySelector('.my-hand').dataset.mode") == "play":
            await page.locator(f".my-hand button.card[data-card='{legal[0]}']").click(position=CORNER, timeout=ACT_MS)
            return True
    except PlaywrightTimeout:
        return False
    return False
