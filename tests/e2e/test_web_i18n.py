"""The web app in Polish: a browser whose language is pl-PL gets every page in Polish (the lobby,
the table during a game with bots, the history's list, a replay and its review, the tournaments,
the leaderboard), with no text of the English catalogue left anywhere a person reads (the visible
text, the title, aria-labels, titles, placeholders); a refusal from the server is said in Polish
from its code; the EN / PL switch changes the language and is kept after a reload.

Set ``MOONSHOT_WEB_SHOTS=DIR`` to keep a screenshot of each page (desktop and phone).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from e2e.test_web_review import contract_review, finished_standard_game
from e2e.webkit import DESKTOP, PHONE, TIMEOUT_MS, Person, chromium, web_server
from moonshot.http.webapp import STATIC_DIR

pytestmark = [pytest.mark.asyncio, pytest.mark.browser]

EN = json.loads((STATIC_DIR / "i18n" / "en.json").read_text(encoding="utf-8"))
PL = json.loads((STATIC_DIR / "i18n" / "pl.json").read_text(encoding="utf-8"))

# every English message that is not also the Polish one, by its longest fixed part (a plural or
# a select by its "other" branch; an argument splits the text)


def _flat(message: str) -> str:
    """The message with each {argument} as NUL, a plural or select as its 'other' branch."""
    out, i = "", 0
    while i < len(message):
        if message[i] != "{":
            out += "\0" if message[i] == "#" else message[i]
            i += 1
            continue
        depth, j = 0, i
        while True:
            depth += {"{": 1, "}": -1}.get(message[j], 0)
            if depth == 0:
                break
            j += 1
        body = message[i + 1 : j]
        other = re.search(r"\bother\s*\{", body)
        if ", plural," in body or ", select," in body:
            start = other.end() if other else len(body)
            k, depth = start, 1
            while k < len(body) and depth:
                depth += {"{": 1, "}": -1}.get(body[k], 0)
                k += 1
            out += "\0" + _flat(body[start : k - 1]) + "\0"
        else:
            out += "\0"
        i = j + 1
    return out


def _english_patterns() -> dict[str, re.Pattern[str]]:
    # words Polish text has too (a key's name, "Enter") are no sign of English
    polish = "\n".join(_flat(v).replace("\0", " ") for v in PL.values())
    out: dict[str, re.Pattern[str]] = {}
    for key, en in EN.items():
        if en == PL.get(key):
            continue
        parts = [p.strip(" :,.()\u2026") for p in _flat(en).split("\0")]
        text = max(parts, key=len)
        if len(text) < 4 or not re.search(r"[A-Za-z]{3}", text):
            continue
        pattern = re.compile(r"(?<![\w])" + re.escape(text) + r"(?![\w])")
        if not pattern.search(polish):
            out[key] = pattern
    return out


ENGLISH = _english_patterns()

READ_TEXT = """() => {
  const parts = [document.body.innerText, document.title];
  for (const el of document.querySelectorAll("[aria-label], [title], [placeholder], img[alt]")) {
    for (const a of ["aria-label", "title", "placeholder", "alt"]) {
      const v = el.getAttribute(a);
      if (v) parts.push(v);
    }
  }
  return parts.join("\\n");
}"""


async def english_left(page: Any) -> dict[str, str]:
    """The English catalogue's messages a person can read on the page: {key: the text found}."""
    text = await page.evaluate(READ_TEXT)
    return {key: m.group(0) for key, pattern in ENGLISH.items() if (m := pattern.search(text))}


async def speaks_polish(person: Person, *expected: str, shot: str, names: tuple[str, ...] = ()) -> None:
    """The page is in Polish: <html lang>, the ``expected`` words, no English message (but for
    the keys in ``names``: a message that is also a player's name there, like a tournament's
    house bots)."""
    page = person.page
    assert await page.evaluate("document.documentElement.lang") == "pl"
    for words in expected:
        await page.get_by_text(words, exact=False).first.wait_for()
    await person.shot(f"i18n-{shot}", full_page=True)
    left = {k: v for k, v in (await english_left(page)).items() if k not in names}
    assert not left, f"English on {page.url}: {left}"
    # Polish is longer: still nothing wider than the screen
    wide = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert wide <= 1, f"{page.url} is {wide}px wider than the screen"


async def polish_person(browser: Any, base: str, name: str, viewport: dict[str, int]) -> Person:
    context = await browser.new_context(viewport=viewport, base_url=base, locale="pl-PL")
    context.set_default_timeout(TIMEOUT_MS)
    await context.add_init_script("localStorage.setItem('moonshot.pace', 'instant')")
    person = Person(context, base, name)
    person.page = await context.new_page()
    person.watch(person.page)
    return person


async def test_the_english_patterns_find_english_and_spare_polish() -> None:
    # the check itself: it finds an English message in a page's text, and none in the Polish one
    assert ENGLISH["table.last_trick"].search("Score sheet\nLast trick")
    assert ENGLISH["lobby.game.open"].search("Turbo Hearts \u00b7 3 seats open")
    assert not ENGLISH["table.last_trick"].search("Tabela wyników\nOstatnia lewa")
    assert len(ENGLISH) > len(EN) // 2  # most messages are looked for


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
async def test_every_page_speaks_polish_to_a_polish_browser(tmp_path: Path, viewport: dict[str, int]) -> None:
    size = "phone" if viewport is PHONE else "desktop"
    async with web_server(tmp_path, fill_wait=0.05) as app, chromium() as browser:
        stored = await finished_standard_game(app)
        base = f"http://127.0.0.1:{app.http_port}"
        ola = await polish_person(browser, base, "ola", viewport)
        page = ola.page
        try:
            # the lobby: the name form, then the lobby itself
            await page.goto("/lobby")
            await page.wait_for_selector("#name-form")
            await speaks_polish(ola, "Witaj w moonshot", shot=f"name-{size}")
            await ola.enter_lobby()
            await speaks_polish(ola, "Nowa gra", "Załóż grę", "Poziom bota", shot=f"lobby-{size}")

            # a refusal said from its code: a rated game without a clock
            await page.select_option("#clock", "0")
            await page.click("#create-game")
            error = page.locator("#lobby-error")
            await error.wait_for()
            assert "Gra rankingowa ma zegar" in await error.inner_text()
            await page.select_option("#clock", "30")

            # the table, in a game with three bots
            game_id = await ola.create_game("standard")
            await speaks_polish(ola, "wolne miejsca", shot=f"lobby-game-{size}")
            await ola.add_bots(game_id, "random", 3)
            await ola.open_table(game_id)
            started = "document.body && ['passing', 'playing'].includes(document.body.dataset.phase)"
            await page.wait_for_function(started)
            await speaks_polish(ola, "Ostatnia lewa", "Tabela wyników", shot=f"table-{size}")
            await page.click("text=Tabela wyników")
            await speaks_polish(ola, "Suma", shot=f"table-sheet-{size}")

            # the history: the list, a replay, its review
            await page.goto("/history")
            await page.wait_for_selector("#games-table")
            await speaks_polish(ola, "Historia gier", "Gracze i wyniki", shot=f"history-{size}")
            game = await page.evaluate(f"fetch('/api/games/{stored}').then((r) => r.json())")
            review = contract_review(game, 2)

            async def serve_review(route: Any) -> None:
                await route.fulfill(status=200, json={"status": "done", "review": review})

            await page.route("**/api/games/*/review?*", serve_review)
            await page.goto(f"/history#{stored}")
            await page.wait_for_function("document.body && document.body.dataset.ready === 'true'")
            await speaks_polish(ola, "Rozdanie", "Wszystkie gry", shot=f"replay-{size}")
            await page.select_option("#review-seat", "2")
            await page.click("[data-action=review]")
            await page.wait_for_selector("#review-summary")
            await page.locator("#review-timeline button.decision").nth(1).click()
            await page.wait_for_selector("#review-options")
            fits = "((r) => r.scrollWidth <= r.clientWidth + 1)(document.querySelector('#review'))"
            assert await page.evaluate(fits), "the review's panel scrolls sideways"
            await speaks_polish(ola, "Analiza gry", "Stracone punkty", "Możliwości", shot=f"review-{size}")
            await page.click("[data-action=learn]")
            await page.wait_for_selector("#learn-ask")
            await speaks_polish(ola, "Wróć do analizy", shot=f"learn-{size}")

            # the tournaments: the list and form, then one tournament of bots
            await page.goto("/tournaments")
            await page.wait_for_selector("#create-tournament")
            await speaks_polish(ola, "Nowy turniej", "Załóż i zacznij", shot=f"tournaments-{size}")
            made = await page.evaluate(
                """() => fetch('/api/tournaments', {method: 'POST', headers: {'Content-Type': 'application/json'},
                     body: JSON.stringify({variant: 'standard', sets: 1, deals_per_set: 1,
                                           bots: ['random', 'heuristic'], externals: []})}).then((r) => r.json())"""
            )
            await page.goto(f"/tournaments#{made['id']}")
            await page.wait_for_selector("#standings")
            await page.wait_for_function("!document.querySelector('.status-pill.running')", timeout=60_000)
            await page.wait_for_selector("#standings")
            await speaks_polish(ola, "Klasyfikacja", "Różnice w parach", shot=f"tournament-{size}")

            # the leaderboard and a player's games
            await page.goto("/leaderboard")
            await page.wait_for_function("document.body && document.body.dataset.ready === 'true'")
            await speaks_polish(ola, "Ranking", shot=f"leaderboard-{size}")
            await page.locator("#ratings-table a.player-link").first.click()
            await page.wait_for_selector("#player-games")
            await speaks_polish(ola, "Zmiana", shot=f"leaderboard-player-{size}", names=("tournaments.house",))
            assert not ola.errors, ola.errors
        finally:
            await ola.close()


async def test_the_switch_changes_the_language_and_keeps_it_after_a_reload(tmp_path: Path) -> None:
    async with web_server(tmp_path) as app, chromium() as browser:
        base = f"http://127.0.0.1:{app.http_port}"
        context = await browser.new_context(viewport=DESKTOP, base_url=base, locale="en-GB")
        context.set_default_timeout(TIMEOUT_MS)
        ann = Person(context, base, "ann")
        ann.page = await context.new_page()
        ann.watch(ann.page)
        page = ann.page
        try:
            await ann.enter_lobby()
            assert await page.evaluate("document.documentElement.lang") == "en"
            await page.get_by_text("New game").wait_for()
            assert await page.get_attribute(".lang-switch [data-lang=en]", "aria-pressed") == "true"

            await page.click(".lang-switch [data-lang=pl]")
            await page.wait_for_function("document.documentElement.lang === 'pl'")
            await page.get_by_text("Nowa gra").wait_for()
            assert await page.get_attribute(".lang-switch [data-lang=pl]", "aria-pressed") == "true"
            assert not await english_left(page)

            await page.reload()
            await page.get_by_text("Nowa gra").wait_for()
            assert await page.evaluate("document.documentElement.lang") == "pl"
            await page.goto("/history")  # kept for every page of the site
            await page.get_by_text("Historia gier").wait_for()

            await page.click(".lang-switch [data-lang=en]")
            await page.get_by_text("Game history").wait_for()
            assert await page.evaluate("localStorage.getItem('moonshot.lang')") == "en"
            assert not ann.errors, ann.errors
        finally:
            await ann.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
async def test_the_trend_nodes_seat_page_speaks_polish_with_a_switch(viewport: dict[str, int]) -> None:
    from e2e.test_trend_page import start_node

    server = await start_node()
    try:
        async with chromium() as browser:
            base = f"http://127.0.0.1:{server.node.port}"
            kasia = await polish_person(browser, base, "kasia", viewport)
            page = kasia.page
            await page.goto("/")
            await page.wait_for_selector(".seat[data-number='1'] input[value='empty']:checked")
            await page.wait_for_function(
                "!document.getElementById('status').textContent.includes('\u0142\u0105czenie')"
            )
            await speaks_polish(kasia, "Miejsca", "Zacznij gr\u0119", "Wolne", shot="trend-seats")
            assert await page.title() == PL["trend.page_title"]
            # the node's refusal of a seat, in Polish from its code: a dummy's name is not a person's
            await page.locator(".seat[data-number='1'] input[value='human']").check(force=True)
            await page.click("#start")
            await page.wait_for_function(
                "(m) => document.getElementById('message').textContent === m", arg=PL["trend.seats_set"]
            )
            await page.fill("input[name='name-1']", "player2")
            await page.click(".sit-button[data-number='1']")
            refused = PL["error.trend_dummy_name"].replace("{name}", "player2")
            await page.wait_for_function("(m) => document.getElementById('message').textContent === m", arg=refused)
            await page.screenshot(path=f"/tmp/shots/mine/trend-pl-{viewport['width']}.png", full_page=True)
            # a malformed seat request (here, a kind the node has not got): its 400 in Polish too

            async def robot(route: Any) -> None:
                body = json.loads(route.request.post_data or "{}")
                body["seats"][1]["kind"] = "robot"
                await route.continue_(post_data=json.dumps(body))

            await page.route("**/api/seats", robot)
            await page.click("#start")
            malformed = PL["error.trend_unknown_seat_kind"].replace("{n}", "2").replace("{kind}", "robot")
            await page.wait_for_function("(m) => document.getElementById('message').textContent === m", arg=malformed)
            await page.screenshot(path=f"/tmp/shots/mine/trend-pl-malformed-{viewport['width']}.png", full_page=True)
            await page.unroute("**/api/seats", robot)
            # the switch: English, kept after a reload
            await page.click(".lang-switch [data-lang=en]")
            await page.wait_for_function("document.documentElement.lang === 'en'")
            await page.get_by_text("Start Game").wait_for()
            await page.reload()
            await page.get_by_text("Start Game").wait_for()
            assert kasia.errors == []
            await kasia.close()
    finally:
        await server.stop()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
async def test_a_refused_move_is_said_in_polish_from_its_reason_code(tmp_path: Path, viewport: dict[str, int]) -> None:
    async with web_server(tmp_path) as app, chromium() as browser:
        base = f"http://127.0.0.1:{app.http_port}"
        olek = await polish_person(browser, base, "olek", viewport)
        page = olek.page
        await olek.enter_lobby()
        game_id = await olek.create_game("standard")
        await olek.add_bots(game_id, "random", 3)
        await olek.open_table(game_id)
        seat = await page.evaluate("document.body.dataset.seat")
        # during the pass a card is sent anyway: the engine refuses it (wrong_phase_play), in Polish
        await page.wait_for_selector("[data-action=pass]")
        card = await page.evaluate("(s) => window.moonshotState.hands[s][0]", seat)
        await page.evaluate("(c) => window.moonshotTable.run(() => window.moonshotTable.actions.play(c))", card)
        alert = page.locator(".action-bar [role=alert]")
        await alert.wait_for()
        text = await alert.inner_text()
        assert text.startswith("Nie mo\u017cesz teraz zagra\u0107 karty: trwa oddawanie kart"), text
        assert "cannot play" not in text
        await alert.scroll_into_view_if_needed()
        await olek.shot(f"i18n-illegal-move-{viewport['width']}", full_page=False)
        assert olek.errors == []
        await olek.close()
