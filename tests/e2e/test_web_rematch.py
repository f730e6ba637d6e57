"""Rematch in the browser: two people (two browser contexts, two names) and two bots finish a
game, both accept a rematch on the game-over view, and both land on the new game with every seat
moved one chair clockwise; a decline cancels it for everyone; and, as an attacker would try, a
name that was not at the table can neither offer nor accept one, nor can anyone accept for another.

The games are short: each person's clock is 1 s, so after two timeouts the table's bot plays
their seat at once and the game runs to its end in seconds (the clock's own hand-over)."""

from __future__ import annotations

import asyncio
import json
import random
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from e2e.webkit import PHONE, Person, chromium, clocked_game, my_seat, web_server
from moonshot.protocols.sessions.client import Client, ProtocolError, RandomPlayer
from trend_sdk import SdkBot

pytestmark = [pytest.mark.asyncio, pytest.mark.browser]

SEATS = ["north", "east", "south", "west"]
SHOTS = Path("/tmp/shots")


async def fetch(person: Person, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    """A request from the person's own browser (their cookie, their origin)."""
    status, text = await person.page.evaluate(
        """async ([method, path, body]) => {
          const init = {method, credentials: 'same-origin', headers: {'Content-Type': 'application/json'}};
          if (body) init.body = JSON.stringify(body);
          const r = await fetch(path, init);
          return [r.status, await r.text()];
        }""",
        [method, path, body],
    )
    return int(status), json.loads(text) if text else None


@asynccontextmanager
async def finished_game(tmp_path: Path) -> AsyncIterator[tuple[Any, Person, Person, str]]:
    """alice and bob (and two bots) played a game with a 1 s clock to its end; both pages show it."""
    async with web_server(tmp_path) as app, chromium() as browser:
        app.turbo.options.clock_choices = None
        base = f"http://127.0.0.1:{app.http_port}"
        alice = await Person.open(browser, base, "alice")
        bob = await Person.open(browser, base, "bob")
        game_id = await clocked_game(alice, bob, "standard", 1)
        await alice.open_table(game_id)
        await bob.open_table(game_id)
        for p in (alice, bob):
            await p.page.wait_for_function("window.moonshotState.complete === true", timeout=120_000)
            await p.page.locator("#rematch-box").wait_for()
        yield app, alice, bob, game_id


async def test_both_accept_and_land_on_the_new_game_with_seats_rotated(tmp_path: Path) -> None:
    async with finished_game(tmp_path) as (app, alice, bob, game_id):
        old = app.turbo.games[game_id]
        old_chairs = [m.name for m in old.members]
        old_alice, old_bob = await my_seat(alice.page), await my_seat(bob.page)
        SHOTS.mkdir(parents=True, exist_ok=True)
        await alice.page.screenshot(path=str(SHOTS / "rematch-offer-desktop.png"))

        await alice.page.click("#rematch")
        # bob sees that alice accepted, and is asked
        await bob.page.locator("#rematch-box[data-state=open] li.accepted[data-name=alice]").wait_for()
        await bob.page.locator("#rematch-box li.waiting[data-name=bob]").wait_for()
        await bob.page.screenshot(path=str(SHOTS / "rematch-asked-desktop.png"))
        await bob.page.set_viewport_size(PHONE)
        await bob.page.screenshot(path=str(SHOTS / "rematch-asked-phone.png"))
        # alice's acceptance alone starts nothing
        assert app.turbo.rematches.offers[game_id].state == "open"
        await bob.page.click("#rematch")

        # both are taken to the new game
        for p in (alice, bob):
            await p.page.wait_for_function("(old) => location.hash && location.hash !== '#' + old", arg=game_id)
        new_id = alice.page.url.split("#", 1)[1]
        assert bob.page.url.endswith("#" + new_id) and new_id != game_id
        for p in (alice, bob):
            await p.page.wait_for_function("document.body.dataset.replayDone === 'true'")
        new = app.turbo.games[new_id]
        assert [m.name for m in new.members] == [old_chairs[(c - 1) % 4] for c in range(4)]
        assert [m.kind for m in new.members] == [old.members[(c - 1) % 4].kind for c in range(4)]
        assert new.clock == old.clock and new.variant == old.variant and new.rated == old.rated
        assert await my_seat(alice.page) == SEATS[(SEATS.index(old_alice) + 1) % 4]
        assert await my_seat(bob.page) == SEATS[(SEATS.index(old_bob) + 1) % 4]
        assert new.hosted is not None and new.hosted.table.policy.clock == 1
        assert not alice.errors and not bob.errors, alice.errors + bob.errors


async def test_a_decline_cancels_the_rematch_for_everyone(tmp_path: Path) -> None:
    async with finished_game(tmp_path) as (app, alice, bob, game_id):
        await alice.page.click("#rematch")
        await bob.page.locator("#rematch-decline").wait_for()
        await bob.page.click("#rematch-decline")
        for p in (alice, bob):
            box = p.page.locator("#rematch-box[data-state=cancelled]")
            await box.wait_for()
            assert "bob declined" in await box.inner_text()
        await alice.page.screenshot(path=str(SHOTS / "rematch-cancelled-desktop.png"))
        assert app.turbo.rematches.offers[game_id].new_game is None
        games_before = set(app.turbo.games)
        # a lapse cancels too: a new offer, nobody else answers
        app.turbo.rematches.seconds = 1.0
        await alice.page.click("#rematch")
        await alice.page.locator("#rematch-box[data-state=open]").wait_for()
        await alice.page.locator("#rematch-box[data-state=cancelled]:has-text('within')").wait_for()
        assert set(app.turbo.games) == games_before  # no game was started


async def test_nobody_outside_the_table_can_make_or_force_a_rematch(tmp_path: Path) -> None:
    async with finished_game(tmp_path) as (app, alice, bob, game_id):
        carol = await Person.open(alice.context.browser, alice.base, "carol")
        await carol.enter_lobby()
        for method, path, body in (
            ("GET", f"/lobby/rematch/{game_id}", None),
            ("POST", "/lobby/rematch", {"id": game_id}),
            ("POST", "/lobby/rematch_decline", {"id": game_id}),
        ):
            status, answer = await fetch(carol, method, path, body)
            assert status == 403, (path, status, answer)
        assert game_id not in app.turbo.rematches.offers
        # a bot's name is no person of the table either
        bot = next(m.name for m in app.turbo.games[game_id].members if m.kind == "bot")
        assert (await fetch(carol, "POST", "/lobby/rematch", {"id": game_id, "name": bot}))[0] == 403

        # alice cannot accept for bob: whatever the body says, she accepts for herself
        status, offer = await fetch(alice, "POST", "/lobby/rematch", {"id": game_id, "name": "bob"})
        assert status == 200 and offer["accepted"] == ["alice"] and offer["waiting"] == ["bob"]
        status, offer = await fetch(alice, "POST", "/lobby/rematch", {"id": game_id, "name": "bob"})
        assert status == 200 and offer["state"] == "open" and offer["accepted"] == ["alice"]
        # carol still cannot join it, and a game that is not over has none
        assert (await fetch(carol, "POST", "/lobby/rematch", {"id": game_id}))[0] == 403
        assert app.turbo.rematches.offers[game_id].state == "open"
        assert (await fetch(alice, "POST", "/lobby/rematch", {"id": "no-such-game"}))[0] == 404
        # a cross-site page cannot accept for bob with his cookie (the origin guard refuses it)
        cookies = {c["name"]: c["value"] for c in await bob.context.cookies()}
        async with httpx.AsyncClient(base_url=alice.base, cookies=cookies) as evil:
            r = await evil.post("/lobby/rematch", json={"id": game_id}, headers={"Origin": "http://evil.example"})
        assert r.status_code == 403, r.text
        assert app.turbo.rematches.offers[game_id].accepted == ["alice"]
        await carol.close()


async def test_a_mixed_table_rematch_seats_the_sessions_client_again_through_its_own_protocol(tmp_path: Path) -> None:
    """A person in the browser, a Sessions client (the SDK over a real socket) and two bots finish
    a rated game. alice offers the rematch in the page, which shows the Sessions player as asked
    through its client; another connection's join with the game's code is refused (only the one
    that played the chair may take it); the Sessions client's own next game_session_request with
    the same code is its acceptance, and the new game starts with every seat one chair clockwise,
    rated as the first, the Sessions client playing it on the same connection."""
    async with web_server(tmp_path, sessions_port=0, move_timeout=30.0) as app, chromium() as browser:
        app.turbo.options.clock_choices = None
        base = f"http://127.0.0.1:{app.http_port}"
        alice = await Person.open(browser, base, "alice")
        await alice.enter_lobby()
        await alice.choose_clock(1)
        game_id = await alice.create_game("standard")
        await alice.add_bots(game_id, "random", 2)
        async with await Client.connect("127.0.0.1", app.sessions_port or 0) as client:
            first = asyncio.create_task(client.play(RandomPlayer(random.Random(1)), lobby_code=game_id))
            await alice.page.locator(f"#games li[data-id='{game_id}'] .chip:not(.empty)").nth(3).wait_for()
            await alice.open_table(game_id)  # alice never plays: the bot soon plays her seat
            await alice.page.wait_for_function("window.moonshotState.complete === true", timeout=120_000)
            result = await asyncio.wait_for(first, 120)
            old = app.turbo.games[game_id]
            assert old.rated and result.me in old.names()
            chair = old.names().index(result.me)
            assert old.members[chair].remote is not None

            await alice.page.click("#rematch")
            asked = alice.page.locator(f"#rematch-box[data-state=open] li.waiting[data-name='{result.me}']")
            await asked.wait_for()
            assert "Sessions" in await asked.inner_text()
            await alice.page.screenshot(path=str(SHOTS / "rematch-mixed-desktop.png"))
            await alice.page.set_viewport_size(PHONE)
            await alice.page.screenshot(path=str(SHOTS / "rematch-mixed-phone.png"))
            await alice.page.set_viewport_size({"width": 1280, "height": 860})

            # a client on another connection cannot join for the Sessions chair
            async with await Client.connect("127.0.0.1", app.sessions_port or 0) as stranger:
                with pytest.raises(ProtocolError, match="only a client that played a chair"):
                    await stranger.open_session("random_player", lobby_code=game_id)
            assert app.turbo.rematches.offers[game_id].state == "open"

            # the Sessions client asks for its next game with the same code, on its connection
            second = asyncio.create_task(client.play(RandomPlayer(random.Random(2)), lobby_code=game_id))
            await alice.page.wait_for_function("(old) => location.hash && location.hash !== '#' + old", arg=game_id)
            new_id = alice.page.url.split("#", 1)[1]
            await alice.page.wait_for_function("document.body.dataset.replayDone === 'true'")
            new = app.turbo.games[new_id]
            moved = new.members[(chair + 1) % 4]
            assert moved.remote is not None and moved.name != result.me  # its new session's name
            for c, m in enumerate(old.members):
                if c != chair:
                    assert (new.members[(c + 1) % 4].name, new.members[(c + 1) % 4].kind) == (m.name, m.kind)
            assert new.rated and new.clock == old.clock and new.variant == old.variant
            assert new.hosted is not None and new.hosted.table.meta.get("mixed") is True
            assert await my_seat(alice.page) == SEATS[(old.names().index("alice") + 1) % 4]
            again = await asyncio.wait_for(second, 180)  # the Sessions client plays it to its end
            assert again.me == moved.name and again.player_order == new.names()
        assert not alice.errors, alice.errors


async def test_a_mixed_table_rematch_takes_a_trend_bot_that_joins_again_after_game_end(tmp_path: Path) -> None:
    """A Trend SDK bot closes and joins again after ``game_end``, with the same name, token and
    lobby code: at a finished mixed table that join offers (and accepts) the rematch for its
    chair; erin accepts in the page and the bot plays the new game, one chair on."""
    async with web_server(tmp_path, trend_port=0, move_timeout=30.0) as app, chromium() as browser:
        app.turbo.options.clock_choices = None
        erin = await Person.open(browser, f"http://127.0.0.1:{app.http_port}", "erin")
        await erin.enter_lobby()
        await erin.choose_clock(1)
        game_id = await erin.create_game("trend")
        await erin.add_bots(game_id, "random", 2)
        bot = SdkBot(f"ws://127.0.0.1:{app.trend_port}/", 2, "ai2", games=2, seed=2, lobby_code=game_id)
        thread = threading.Thread(target=bot.run, daemon=True)
        thread.start()
        await erin.page.locator(f"#games li[data-id='{game_id}'] .chip:not(.empty)").nth(3).wait_for()
        await erin.open_table(game_id)  # erin never plays: the bot soon plays her seat
        await erin.page.wait_for_function("window.moonshotState.complete === true", timeout=120_000)
        # the bot's join after game_end offered the rematch: erin sees it, and accepts
        await erin.page.locator("#rematch-box[data-state=open] li.accepted[data-name=ai2]").wait_for()
        await erin.page.click("#rematch")
        await erin.page.wait_for_function("(old) => location.hash && location.hash !== '#' + old", arg=game_id)
        new_id = erin.page.url.split("#", 1)[1]
        old, new = app.turbo.games[game_id], app.turbo.games[new_id]
        assert [m.name for m in new.members] == [old.members[(c - 1) % 4].name for c in range(4)]
        assert new.members[(old.names().index("ai2") + 1) % 4].remote is not None
        assert new.rated and new.variant == "trend"
        await asyncio.to_thread(thread.join, 120)
        assert bot.errors == [] and len(bot.seen) == 2 and bot.seen[1].deals == 4
        assert not erin.errors, erin.errors
