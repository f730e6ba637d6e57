"""The game review in the browser: the Review button of the history's replay, the progress while
the server works, the timeline of a seat's decisions by grade, a decision's options and the replay
moved to its moment, the summary, "Learn from your mistakes", every refusal in words, and the
table page's Hint button.

The review's numbers come from the server; these tests check what the pages do with them. The
rendering tests serve a review in the contract's JSON (docs/review.md) built here from the stored
game's own actions, replayed on the engine (the hands, the tricks, the legal plays are the game's;
the expected points are made up so that every grade appears), through Playwright's ``page.route``.
"""

from __future__ import annotations

import asyncio
import json
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from e2e.webkit import PHONE, Person, chromium, expect, stored_bots_game, web_server
from moonshot.core.actions import action_from_dict
from moonshot.core.cards import card_list, format_card, format_cards
from moonshot.core.engine import Game
from moonshot.core.variants import STANDARD, TURBO
from moonshot.play.review import review_game
from moonshot.server.app import ServerApp

pytestmark = [pytest.mark.asyncio, pytest.mark.browser]

SEATS = ("north", "east", "south", "west")
NAMES = ["ada", "basil", "cleo", "dora"]  # bots under people's names: cleo can view her own game
SEED = 4242
SHOTS = Path("/tmp/shots")


def one_place(x: float) -> str:
    """``x`` as the page writes it: one decimal, halves rounded away from zero (Intl.NumberFormat),
    where Python's ``:.1f`` would write 146.25 as 146.2."""
    return str(Decimal(repr(x)).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


async def finished_standard_game(app: ServerApp) -> str:
    """A whole standard game of four bots on the server's table runtime, stored as it went."""
    return await stored_bots_game(app, STANDARD, SEED, "review-me", NAMES)


def contract_review(game_json: dict[str, Any], seat: int) -> dict[str, Any]:
    """A review in the contract's JSON of ``seat`` in the stored game: its decisions (hand, cards
    on the table, pass direction, legal options) replayed from the game's actions; the expected
    points are made up, so that every grade appears: among decisions with a choice, every 9th is a
    blunder, every 7th a mistake, every 5th an inaccuracy, every 3rd good, the rest best; the
    first pass is a mistake whose options are incomplete."""
    game = Game(STANDARD, SEED)
    decisions: list[dict[str, Any]] = []
    choices = 0
    for k, d in enumerate(game_json["actions"]):
        action = action_from_dict(d)
        if action.seat == seat and d["t"] in ("play", "pass"):
            hand = format_cards(game.hands[seat])
            chosen = d["c"] if d["t"] == "play" else " ".join(d["c"])
            if d["t"] == "play":
                legal = [format_card(c) for c in card_list(game.legal_play_mask(seat))]
                others = [c for c in legal if c != chosen][:5]
                complete = len(legal) <= 6
            else:
                rest = [c for c in hand if c not in d["c"]]
                others = [" ".join(rest[0:3]), " ".join(rest[3:6])]
                complete = False
            grade, cost = "best", 0.0
            if others:
                choices += 1
                if d["t"] == "pass" and not any(x["kind"] == "pass" for x in decisions):
                    grade, cost = "mistake", 2.0
                elif choices % 9 == 0:
                    grade, cost = "blunder", 6.5
                elif choices % 7 == 0:
                    grade, cost = "mistake", 2.25
                elif choices % 5 == 0:
                    grade, cost = "inaccuracy", 0.75
                elif choices % 3 == 0:
                    grade, cost = "good", 0.25
            base = 2.0 + (k % 5) * 0.5
            rows = []
            if grade == "best":
                rows.append((chosen, base))
                rows += [(o, base + 0.8 + i) for i, o in enumerate(others)]
            else:
                rows.append((others[0], base))
                rows.append((chosen, base + cost))
                rows += [(o, base + cost + 1 + i) for i, o in enumerate(others[1:])]
            options = [
                {"label": label, "expected": e, "moon_for": 0.0, "moon_against": 0.02, "worlds": 40}
                for label, e in rows
            ]
            decisions.append(
                {
                    "index": len(decisions),
                    "action_index": k,
                    "deal": game.deal_index,
                    "trick": game.trick_no if d["t"] == "play" else None,
                    "kind": d["t"],
                    "hand": hand,
                    "trick_cards": [
                        {"seat": s, "card": format_card(c)}
                        for s, c in zip(game.trick_seats, game.trick_cards, strict=True)
                    ],
                    "pass_direction": game.direction.value if d["t"] == "pass" else None,
                    "chosen": chosen,
                    "options": options,
                    "complete": complete,
                    "best": options[0]["label"],
                    "cost": cost,
                    "grade": grade,
                }
            )
        game.apply(action)
    assert game.over
    grades = ("best", "good", "inaccuracy", "mistake", "blunder")
    by_grade = {g: sum(1 for x in decisions if x["grade"] == g) for g in grades}
    biggest = sorted((x for x in decisions if x["cost"] > 0), key=lambda x: -x["cost"])[:5]
    deals = []
    for deal in sorted({x["deal"] for x in decisions}):
        mine = [x for x in decisions if x["deal"] == deal]
        deals.append(
            {
                "deal": deal,
                "decisions": len(mine),
                "points_given_up": sum(x["cost"] for x in mine),
                "accuracy": sum(x["grade"] in ("best", "good") for x in mine) / len(mine),
            }
        )
    return {
        "format": "moonshot-review/1",
        "game_id": game_json["id"],
        "seat": seat,
        "variant": "standard",
        "budget": {"simulations": 40, "think_ms": None, "seed": 0},
        "thresholds": {"inaccuracy": 0.5, "mistake": 1.5, "blunder": 4.0},
        "decisions": decisions,
        "summary": {
            "decisions": len(decisions),
            "points_given_up": sum(x["cost"] for x in decisions),
            "accuracy": (by_grade["best"] + by_grade["good"]) / len(decisions),
            "by_grade": by_grade,
            "biggest": [x["index"] for x in biggest],
            "deals": deals,
        },
    }


class FakeReviews:
    """Answers the page's review requests as the contract says: ``queued`` (2nd in line), then
    ``running`` (a third done), then the review; each waiting answer holds until the test has seen
    the one before (``step``), so nothing depends on timing."""

    def __init__(self, review: dict[str, Any]) -> None:
        self.review = review
        self.calls: list[str] = []
        self.seen = [asyncio.Event(), asyncio.Event()]

    async def handle(self, route: Any) -> None:
        self.calls.append(route.request.url)
        n = len(self.calls)
        total = len(self.review["decisions"])
        if n == 1:
            body = {"status": "queued", "progress": {"done": 0, "total": total}, "position": 2}
            await route.fulfill(status=202, headers={"Retry-After": "1"}, json=body)
        elif n == 2:
            await self.seen[0].wait()
            body = {"status": "running", "progress": {"done": total // 3, "total": total}, "position": 0}
            await route.fulfill(status=202, headers={"Retry-After": "1"}, json=body)
        else:
            await self.seen[1].wait()
            await route.fulfill(status=200, json={"status": "done", "review": self.review})


async def shot(person: Person, name: str, *, full_page: bool = False) -> None:
    """Screenshots to look at (never into the repository); the docs' own come from Person.shot."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    await person.page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=full_page)
    await person.shot(name, full_page=full_page)


async def named(browser: Any, base: str, name: str, viewport: dict[str, int] | None = None) -> Person:
    """A person whose browser already has a name (the name cookie; the server binds it on first use)."""
    person = await Person.open(browser, base, name, viewport=viewport)
    await person.context.add_cookies([{"name": "name", "value": quote(name), "url": base}])
    return person


async def open_replay(person: Person, game_id: str) -> None:
    await person.page.goto(f"/history#{game_id}")
    await person.page.wait_for_selector("#replay-bar [data-action=review]")


async def game_of(page: Any, game_id: str) -> dict[str, Any]:
    """The stored game's JSON, as the history page reads it."""
    return dict(await page.evaluate(f"fetch('/api/games/{game_id}').then(r => r.json())"))


async def fits(page: Any, width: int) -> None:
    assert await page.evaluate("document.documentElement.scrollWidth") <= width


@pytest.mark.parametrize("viewport", [None, PHONE], ids=["desktop", "phone"])
async def test_review_progress_timeline_options_summary(tmp_path: Path, viewport: dict[str, int] | None) -> None:
    async with web_server(tmp_path) as app, chromium() as browser:
        game_id = await finished_standard_game(app)
        base = f"http://127.0.0.1:{app.http_port}"
        tag = "phone" if viewport else "desktop"
        # the viewer is cleo, who played seat 2: the review offers her seat first
        cleo = await named(browser, base, "cleo", viewport)
        page = cleo.page
        await open_replay(cleo, game_id)
        review = contract_review(await game_of(page, game_id), 2)
        fake = FakeReviews(review)
        await page.route("**/api/games/*/review?*", fake.handle)
        assert await page.eval_on_selector("#review-seat", "e => e.value") == "2"
        await page.click("[data-action=review]")

        # the queue, then the progress bar
        status = page.locator("#review-status")
        await page.wait_for_function("document.querySelector('#review-status')?.textContent.includes('2nd in line')")
        bar = page.locator("[role=progressbar]")
        assert await bar.get_attribute("aria-valuenow") == "0"
        await shot(cleo, f"review-queued-{tag}")
        fake.seen[0].set()
        total = len(review["decisions"])
        await page.wait_for_function(
            f"document.querySelector('[role=progressbar]').getAttribute('aria-valuenow') === '{total // 3}'"
        )
        assert await bar.get_attribute("aria-valuemax") == str(total)
        assert f"{total // 3} of {total}" in await status.inner_text()
        await shot(cleo, f"review-progress-{tag}")
        fake.seen[1].set()

        # the review: the live region says so, the timeline lists every decision with its symbol
        await page.wait_for_selector("#review-timeline")
        assert "Review ready" in await page.inner_text("#review-live")
        assert all("seat=2" in url for url in fake.calls) and len(fake.calls) == 3
        buttons = page.locator("#review-timeline button.decision")
        assert await buttons.count() == total
        symbols = {"best": "\u2605", "good": "\u2713", "inaccuracy": "?!", "mistake": "?", "blunder": "??"}
        for i in (0, 1, total - 1):
            grade = review["decisions"][i]["grade"]
            assert await buttons.nth(i).get_attribute("data-grade") == grade
            assert symbols[grade] in await buttons.nth(i).inner_text()
            assert grade in (await buttons.nth(i).get_attribute("aria-label") or "")
        assert await page.locator("#review-timeline .timeline-deal").count() == len(review["summary"]["deals"])

        # the summary: points given up, accuracy, counts by grade, the biggest mistakes
        summary = await page.inner_text("#review-summary")
        s = review["summary"]
        assert one_place(s["points_given_up"]) in summary and f"{round(s['accuracy'] * 100)}%" in summary
        for grade, n in s["by_grade"].items():
            assert f"{grade}: {n}" in summary
        await fits(page, (viewport or {"width": 10_000})["width"])
        await shot(cleo, f"review-ready-{tag}", full_page=True)

        # a blunder (the biggest): its options, and the replay at the moment it was made
        worst = review["decisions"][s["biggest"][0]]
        assert worst["grade"] == "blunder" and worst["kind"] == "play"
        await page.locator("#review-biggest a").first.click()
        await page.wait_for_function(f"document.body.dataset.reviewDecision === '{worst['index']}'")
        rows = page.locator("#review-options tbody tr")
        assert await rows.count() == len(worst["options"])
        assert "best" in await rows.nth(0).inner_text()
        assert "chosen" in await rows.nth(1).inner_text() and "+6.50" in await rows.nth(1).inner_text()
        details = await page.inner_text("#review-details")
        assert "blunder" in details and "gives up 6.5 points" in details
        state = await cleo.state_of("moonshotReplay.state")
        assert state["nextPlayer"] == "south" and state["handNo"] == worst["deal"] + 1
        assert sorted(state["hands"]["south"]) == sorted(worst["hand"])
        assert state["trick"] == [{"seat": SEATS[t["seat"]], "card": t["card"]} for t in worst["trick_cards"]]
        chip = f"#review-timeline button[data-index='{worst['index']}']"
        assert await page.get_attribute(chip, "aria-current") == "step"
        await fits(page, (viewport or {"width": 10_000})["width"])
        await shot(cleo, f"review-decision-{tag}", full_page=bool(viewport))

        # the keyboard: the arrows move along the timeline (not the replay), each one shown
        where = await page.inner_text("#replay-where")
        await page.keyboard.press("ArrowRight")
        await page.wait_for_function(f"document.body.dataset.reviewDecision === '{worst['index'] + 1}'")
        focused = await page.evaluate("document.activeElement.dataset.index")
        assert focused == str(worst["index"] + 1)
        await page.keyboard.press("Home")
        await page.wait_for_function("document.body.dataset.reviewDecision === '0'")
        first = review["decisions"][0]
        assert first["kind"] == "pass"
        state = await cleo.state_of("moonshotReplay.state")
        assert state["phase"] == "passing" and not state["passDone"]["south"]
        assert await page.inner_text("#replay-where") != where or worst["deal"] == 0
        assert cleo.errors == []
        await cleo.close()


async def test_learn_from_mistakes_by_mouse_and_keyboard(tmp_path: Path) -> None:
    async with web_server(tmp_path) as app, chromium() as browser:
        game_id = await finished_standard_game(app)
        base = f"http://127.0.0.1:{app.http_port}"
        for viewport in (None, PHONE):
            tag = "phone" if viewport else "desktop"
            dave = await named(browser, base, "dave", viewport)
            page = dave.page
            await open_replay(dave, game_id)
            review = contract_review(await game_of(page, game_id), 0)
            fake = FakeReviews(review)
            for e in fake.seen:
                e.set()
            await page.route("**/api/games/*/review?*", fake.handle)
            # dave did not play: the first seat
            assert await page.eval_on_selector("#review-seat", "e => e.value") == "0"
            await page.click("[data-action=review]")
            await page.wait_for_selector("#review-timeline")
            flagged = [d for d in review["decisions"] if d["grade"] in ("inaccuracy", "mistake", "blunder")]
            learn = page.locator("[data-action=learn]")
            assert f"({len(flagged)})" in await learn.inner_text()
            await learn.click()

            # 1: the pass (its options incomplete): three cards the review did not weigh
            d = flagged[0]
            assert d["kind"] == "pass"
            await page.wait_for_selector("#learn-step")
            assert f"1 of {len(flagged)}" in await page.inner_text("#learn-step")
            assert "to the left" in await page.inner_text(".review-panel")
            weighed = {c for o in d["options"] for c in o["label"].split()} | set(d["chosen"].split())
            free = [c for c in d["hand"] if c not in weighed][:3]
            assert len(free) == 3
            check = page.locator("[data-action=learn-check]")
            for c in free[:2]:
                await page.click(f".learn-hand button[data-card='{c}']")
            assert await check.is_disabled()
            await page.click(f".learn-hand button[data-card='{free[2]}']")
            assert await page.get_attribute(f".learn-hand button[data-card='{free[2]}']", "aria-pressed") == "true"
            await shot(dave, f"learn-pass-{tag}", full_page=bool(viewport))
            await check.click()
            verdict = page.locator("#learn-verdict")
            await verdict.wait_for()
            assert "did not evaluate" in await verdict.inner_text()
            assert await page.get_attribute("#learn-answer", "data-verdict") == "unknown"
            assert await page.evaluate("document.activeElement.id") == "learn-verdict"
            await shot(dave, f"learn-pass-answer-{tag}", full_page=bool(viewport))
            await page.click("[data-action=learn-next]")

            # 2: a play, by keyboard: the best card is right
            d = flagged[1]
            assert d["kind"] == "play"
            await page.wait_for_function("document.body.dataset.learnStep === '1'")
            trick = await page.eval_on_selector_all(".learn-trick .card", "els => els.map(e => e.dataset.card)")
            assert trick == [t["card"] for t in d["trick_cards"]]
            assert await page.evaluate("document.activeElement.closest('.learn-hand') !== null")
            where = await page.inner_text("#replay-where")
            for _ in range(20):
                if await page.evaluate("document.activeElement.dataset.card") == d["best"]:
                    break
                await page.keyboard.press("ArrowRight")
            assert await page.evaluate("document.activeElement.dataset.card") == d["best"]
            assert await page.inner_text("#replay-where") == where  # the arrows did not step the replay
            await shot(dave, f"learn-play-{tag}", full_page=bool(viewport))
            await page.keyboard.press("Enter")
            await verdict.wait_for()
            assert "Right" in await verdict.inner_text()
            assert await page.get_attribute("#learn-answer", "data-verdict") == "best"
            assert "best" in (await page.get_attribute(f".learn-hand button[data-card='{d['best']}']", "class") or "")
            # again, with the card played in the game: what it gives up, by the review's numbers
            await page.click("[data-action=learn-again]")
            await page.click(f".learn-hand button[data-card='{d['chosen']}']")
            await verdict.wait_for()
            text = await verdict.inner_text()
            assert f"gives up {d['cost']:.1f} points" in text
            await fits(page, (viewport or {"width": 10_000})["width"])
            await shot(dave, f"learn-play-answer-{tag}", full_page=bool(viewport))
            # a card that does not follow suit cannot be picked
            led = d["trick_cards"][0]["card"][1] if d["trick_cards"] else None
            if led and any(c[1] == led for c in d["hand"]):
                await page.click("[data-action=learn-again]")
                off = [c for c in d["hand"] if c[1] != led]
                if off:
                    assert await page.locator(f".learn-hand button[data-card='{off[0]}']").is_disabled()
            await page.click("[data-action=learn-back]")
            await page.wait_for_selector("#review-timeline")
            assert dave.errors == []
            await dave.close()


@pytest.mark.parametrize(
    ("status", "body", "words"),
    [
        (409, {"error": "the game is not over"}, "not over yet"),
        (403, {"error": "a tournament's game is reviewed once the tournament is over"}, "not allowed"),
        (404, {"error": "no stored game"}, "does not know this game"),
        (429, {"error": "too many reviews"}, "try again in 30 s"),
        (503, {"error": "reviews are off"}, "turned off"),
        (0, None, "did not answer"),
    ],
)
async def test_every_refusal_is_said_in_words(tmp_path: Path, status: int, body: Any, words: str) -> None:
    async with web_server(tmp_path) as app, chromium() as browser:
        game_id = await finished_standard_game(app)
        erin = await named(browser, f"http://127.0.0.1:{app.http_port}", "erin")
        page = erin.page

        async def refuse(route: Any) -> None:
            if status == 0:
                await route.abort("connectionrefused")
            else:
                await route.fulfill(status=status, headers={"Retry-After": "30"}, json=body)

        await page.route("**/api/games/*/review?*", refuse)
        await open_replay(erin, game_id)
        await page.click("[data-action=review]")
        error = page.locator("#review-error")
        await error.wait_for()
        assert words in await error.inner_text()
        assert await error.get_attribute("role") == "alert"
        assert await page.locator("[data-action=review-again]").count() == 1
        if status == 409:
            await shot(erin, "review-error-desktop")
        await erin.close()


async def test_every_decision_moves_the_replay_to_its_moment(tmp_path: Path) -> None:
    """Each decision's action_index, lined up with the game's event stream, shows the replay just
    before the seat acted: the seat's hand as the review gives it, the seat to act, the trick."""
    async with web_server(tmp_path) as app, chromium() as browser:
        game_id = await finished_standard_game(app)
        erin = await named(browser, f"http://127.0.0.1:{app.http_port}", "erin")
        page = erin.page
        await open_replay(erin, game_id)
        review = contract_review(await game_of(page, game_id), 1)
        seen = await page.evaluate(
            """(decisions) => decisions.map((d) => {
                const at = window.moonshotReview.moments[d.action_index];
                if (at === null || at === undefined) return null;
                window.moonshotReplay.showMoment(at);
                const s = window.moonshotReplay.state;
                return {hand: [...s.hands.east].sort(), next: s.nextPlayer, phase: s.phase,
                        passed: s.passDone.east, trick: s.trick.map((t) => t.card), hand_no: s.handNo};
            })""",
            review["decisions"],
        )
        for d, s in zip(review["decisions"], seen, strict=True):
            assert s is not None, d
            assert s["hand"] == sorted(d["hand"]) and s["hand_no"] == d["deal"] + 1
            if d["kind"] == "play":
                assert s["next"] == "east" and s["trick"] == [t["card"] for t in d["trick_cards"]]
            else:
                assert s["phase"] == "passing" and not s["passed"]
        assert erin.errors == []
        await erin.close()


async def test_a_turbo_games_actions_line_up_with_its_stream(tmp_path: Path) -> None:
    """Charges, claims and their answers too: every action of a stored Turbo game finds its own
    event, in order (a review of a Turbo seat has charge decisions)."""
    async with web_server(tmp_path) as app, chromium() as browser:
        game_id = await stored_bots_game(app, TURBO, 77, "turbo-review", NAMES)
        erin = await named(browser, f"http://127.0.0.1:{app.http_port}", "erin")
        page = erin.page
        await page.goto("/history")
        game = await game_of(page, game_id)
        moments = await page.evaluate(
            "(g) => import('/static/js/review.js').then((m) => m.actionMoments(g.events, g.actions))", game
        )
        kinds = {d["t"] for d in game["actions"]}
        assert {"charge", "play", "pass"} <= kinds
        assert None not in moments and moments == sorted(moments) and len(set(moments)) == len(moments)
        event_type = {"pass": "send_pass", "accept": "accept_claim", "reject": "reject_claim"}
        for d, at in zip(game["actions"], moments, strict=True):
            assert game["events"][at]["type"] == event_type.get(d["t"], d["t"])

        # a review made by review_game (a few worlds: its numbers do not matter here): every
        # decision shows its options with the chosen one marked once, a charge of nothing as words
        review = review_game(TURBO, 77, game["actions"], 1, simulations=4, game_id=game_id).to_json()
        fake = FakeReviews(review)
        for e in fake.seen:
            e.set()
        await open_replay(erin, game_id)
        await page.route("**/api/games/*/review?*", fake.handle)
        await page.select_option("#review-seat", "1")
        await page.click("[data-action=review]")
        await page.wait_for_selector("#review-timeline")
        chosen = await page.evaluate(
            """(n) => Array.from({length: n}, (_, i) => {
                window.moonshotReview.select(i);
                return [document.querySelectorAll('#review-options tbody tr').length,
                        document.querySelectorAll('#review-options tr.chosen').length,
                        document.querySelector('#review-options tr.chosen').textContent];
            })""",
            len(review["decisions"]),
        )
        for d, (rows, marked, text) in zip(review["decisions"], chosen, strict=True):
            assert rows == len(d["options"]) and marked == 1, d
            if d["kind"] == "charge" and d["chosen"] == "-":
                assert text.startswith("nothing")
        assert any(d["kind"] == "charge" for d in review["decisions"])
        assert erin.errors == []
        await erin.close()


async def test_the_hint_button_shows_the_best_option_and_raises_it(tmp_path: Path) -> None:
    async with web_server(tmp_path) as app, chromium() as browser:
        alice = await Person.open(browser, f"http://127.0.0.1:{app.http_port}", "alice")
        await alice.enter_lobby()
        await alice.page.check("#practice")
        game_id = await alice.create_game("standard")
        await alice.add_bots(game_id, "random", 3)
        page = alice.page
        asked: list[str] = []
        answer: dict[str, Any] = {}

        async def hint(route: Any) -> None:
            asked.append(route.request.post_data or "")
            await route.fulfill(status=answer["status"], json=answer["body"])

        await page.route(f"**/api/games/{game_id}/hint", hint)
        await alice.open_table(game_id)
        button = page.locator("[data-action=hint]")
        await page.wait_for_selector("[data-action=pass]")
        await button.wait_for()
        state = await alice.state()
        seat = await page.evaluate("document.body.dataset.seat")
        three = sorted(state["hands"][seat])[:3]
        answer["status"] = 200
        answer["body"] = {
            "best": " ".join(three),
            "margin": 1.2,
            "options": [
                {"label": " ".join(three), "expected": 3.0, "moon_for": 0, "moon_against": 0, "worlds": 20},
                {"label": "2C 3C 4C", "expected": 4.2, "moon_for": 0, "moon_against": 0, "worlds": 20},
            ],
        }
        await button.click()
        box = page.locator("#hint")
        await page.wait_for_function("document.querySelector('#hint .hint-best')")
        assert "1.20 points better than the next option" in await box.inner_text()
        assert json.loads(asked[0]) == {}
        hinted = await page.eval_on_selector_all(".my-hand .card.hinted", "els => els.map(e => e.dataset.card)")
        assert sorted(hinted) == three
        await shot(alice, "hint-desktop")
        # refused: said in words
        answer["status"], answer["body"] = 409, {"error": "it is not your turn"}
        await button.click()
        await page.wait_for_function("document.querySelector('#hint').classList.contains('error')")
        assert "your turn" in await box.inner_text()
        assert await page.locator(".my-hand .card.hinted").count() == 0
        answer["status"], answer["body"] = 429, {"error": "too many"}
        await button.click()
        await page.wait_for_function("document.querySelector('#hint').textContent.includes('try again')")
        assert alice.errors == []
        await alice.close()


# ---- against the server's own reviews and hints ---------------------------------------------


async def finished_turbo_game(app: ServerApp, seed: int = 77) -> str:
    return await stored_bots_game(app, TURBO, seed, f"turbo-{seed}", NAMES)


@pytest.mark.parametrize("viewport", [None, PHONE], ids=["desktop", "phone"])
async def test_the_servers_review_of_a_finished_game(tmp_path: Path, viewport: dict[str, int] | None) -> None:
    """The page against the server's own review: 202 with progress, then the stored review; the
    request is the page's, with a small budget added on its way (a few worlds a decision) so the
    test takes seconds on a busy machine. The workers run at the server's priority: at nice 19 a
    busy test machine starves them for minutes (niceness is test_review_pool's)."""
    async with web_server(tmp_path, review_nice=0) as app, chromium() as browser:
        game_id = await finished_turbo_game(app)
        tag = "phone" if viewport else "desktop"
        # on the phone finn has a name already; on the desktop the review asks for one first
        base = f"http://127.0.0.1:{app.http_port}"
        finn = await (named(browser, base, "finn", viewport) if viewport else Person.open(browser, base, "finn"))
        page = finn.page
        answers: list[int] = []
        page.on("response", lambda r: answers.append(r.status) if "/review?" in r.url else None)

        async def small_budget(route: Any) -> None:
            await route.continue_(url=route.request.url + "&simulations=4")

        await page.route("**/api/games/*/review?*", small_budget)
        await open_replay(finn, game_id)
        await page.select_option("#review-seat", "3")
        await page.click("[data-action=review]")
        if not viewport:
            await page.fill("#review #name-form input", "finn")
            await page.click("#review #name-form button")
            await page.wait_for_function("document.querySelector('#me')?.textContent.includes('finn')")
        await page.wait_for_selector("#review-timeline, #review-error", timeout=120_000)
        assert not await page.locator("#review-error").count(), await page.inner_text("#review-error")
        assert answers[0] == 202 and answers[-1] == 200
        assert "Review ready" in await page.inner_text("#review-live")
        stored = await page.evaluate(f"fetch('/api/games/{game_id}/review?seat=3&simulations=4').then(r => r.json())")
        review = stored["review"]
        assert stored["status"] == "done" and review["seat"] == 3
        assert await page.locator("#review-timeline button.decision").count() == len(review["decisions"])
        summary = await page.inner_text("#review-summary")
        assert one_place(review["summary"]["points_given_up"]) in summary
        if await page.locator("#recovery button").count():
            await page.click("#recovery button")  # the new name's recovery code, read
        # a decision shows its options, and the replay has the seat to act
        d = next(x for x in review["decisions"] if x["kind"] == "play" and x["trick_cards"])
        await page.click(f"#review-timeline button[data-index='{d['index']}']")
        assert await page.locator("#review-options tbody tr").count() == len(d["options"])
        state = await finn.state_of("moonshotReplay.state")
        assert state["nextPlayer"] == "west" and sorted(state["hands"]["west"]) == sorted(d["hand"])
        await shot(finn, f"review-server-{tag}", full_page=bool(viewport))
        # learning from the first flagged decision, with the review's best answer
        flagged = [x for x in review["decisions"] if x["grade"] in ("inaccuracy", "mistake", "blunder")]
        if flagged:
            await page.click("[data-action=learn]")
            await page.wait_for_selector("#learn-step")
            first = flagged[0]
            best = first["best"].split() if first["best"] != "-" else []
            for card in best:
                await page.click(f".learn-hand button[data-card='{card}']")
            if first["kind"] != "play":
                await page.click("[data-action=learn-check]")
            await page.wait_for_selector("#learn-verdict")
            assert await page.get_attribute("#learn-answer", "data-verdict") == "best"
            await shot(finn, f"learn-server-{tag}", full_page=bool(viewport))
        if viewport:
            await fits(page, viewport["width"])
        assert finn.errors == []
        await finn.close()


async def test_hints_in_a_practice_game_and_none_with_another_person(tmp_path: Path) -> None:
    # the hint's worker at the server's own priority: at nice 19 it waits for every other process of
    # a busy test machine (its first hint loads the rules kernel); niceness is tested in test_review_pool
    async with web_server(tmp_path, review_nice=0) as app, chromium() as browser:
        base = f"http://127.0.0.1:{app.http_port}"
        # alice alone with her bots, in a practice game: the Hint button, and the server's hint
        alice = await Person.open(browser, base, "alice")
        await alice.enter_lobby()
        await alice.page.check("#practice")
        game_id = await alice.create_game("standard")
        await alice.add_bots(game_id, "random", 3)
        await alice.open_table(game_id)
        page = alice.page
        await page.wait_for_function("document.body.dataset.hints === 'true'")
        await page.wait_for_selector("[data-action=pass]")
        button = page.locator("[data-action=hint]")
        await expect(button).to_be_visible()
        await expect(button).to_be_enabled()
        await button.click()
        # the server's worker thinks for a fraction of a second, but its first hint starts it and
        # loads the rules kernel: a minute or more on a loaded machine
        await page.wait_for_selector("#hint .hint-best", timeout=120_000)
        text = await page.inner_text("#hint")
        assert "Hint:" in text and ("points better" in text or "about as good" in text)
        hinted = await page.eval_on_selector_all(".my-hand .card.hinted", "els => els.map(e => e.dataset.card)")
        assert len(hinted) == 3  # a pass: three cards raised
        await shot(alice, "hint-server-desktop")
        # on a phone the hint sits under the table, and nothing is wider than the screen
        await page.set_viewport_size(PHONE)
        await fits(page, PHONE["width"])
        await shot(alice, "hint-server-phone", full_page=True)
        assert alice.errors == []

        # bob and carol at one table with two bots: no button, and the server refuses a hint
        bob = await Person.open(browser, base, "bob")
        carol = await Person.open(browser, base, "carol")
        await bob.enter_lobby()
        await carol.enter_lobby()
        shared = await bob.create_game("standard")
        row = carol.page.locator(f"#games li[data-id='{shared}']")
        await row.locator("[data-action=join]").click()
        await bob.page.locator(f"#games li[data-id='{shared}'] .chip:not(.empty)").nth(1).wait_for()
        await bob.add_bots(shared, "random", 2)
        await bob.open_table(shared)
        await bob.page.wait_for_function("document.body.dataset.hints === 'false'")
        assert not await bob.page.locator("[data-action=hint]").is_visible()
        refused = await bob.page.evaluate(
            f"fetch('/api/games/{shared}/hint', {{method: 'POST', headers: {{'Content-Type': 'application/json'}},"
            " body: '{}'}).then(async r => [r.status, (await r.json()).error])"
        )
        assert refused[0] == 403 and "practice" in refused[1]
        await bob.close()
        await carol.close()
        await alice.close()


async def until(condition: Any, timeout: float = 20.0) -> None:
    """Wait until ``condition()`` holds (the route handlers run in this loop), or fail."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def test_polling_stops_for_another_seat_and_on_close(tmp_path: Path) -> None:
    async with web_server(tmp_path) as app, chromium() as browser:
        game_id = await finished_standard_game(app)
        gus = await named(browser, f"http://127.0.0.1:{app.http_port}", "gus")
        page = gus.page
        asked: list[str] = []

        async def forever(route: Any) -> None:
            asked.append(route.request.url.split("seat=")[1][:1])
            body = {"status": "running", "progress": {"done": 1, "total": 50}, "position": 0}
            await route.fulfill(status=202, headers={"Retry-After": "1"}, json=body)

        await page.route("**/api/games/*/review?*", forever)
        await open_replay(gus, game_id)
        await page.click("[data-action=review]")
        await page.wait_for_function("document.querySelector('#review-status')?.textContent.includes('1 of 50')")
        # the review is a modal dialog: the bar's seat waits behind it, inert, until it closes
        assert await page.evaluate("document.getElementById('review-seat').closest('[inert]') !== null")
        # closed: its polling stops (two polls of the next seat, a second apart, and none of it);
        # another seat after that: the same
        for seat in ("1", "2"):
            await page.click("[data-action=close-review]")
            await page.wait_for_function("document.activeElement.dataset.action === 'review'")
            closed = len(asked)
            await page.select_option("#review-seat", seat)
            await page.click("[data-action=review]")
            await until(lambda seat=seat: asked.count(seat) >= 2)
            assert set(asked[closed:]) == {seat}
        await gus.close()
