"""Attacks that already failed, kept failing: forged and replayed session cookies, acting in
someone else's game, seat and name fields in a body, HTML and script in names and chat. Each
against a real ``moonshot serve`` on loopback."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from itsdangerous import URLSafeSerializer

from moonshot.core.cards import format_card
from moonshot.core.engine import Phase
from moonshot.http.identity import SESSION_COOKIE
from moonshot.server.app import ServerApp
from security.attack import base_url, browser, serve

pytestmark = pytest.mark.asyncio


async def started_game(app: ServerApp, owner: str) -> str:
    """``owner`` creates a standard game and fills it with bots: it starts, ``owner`` north."""
    async with browser(app, owner) as c:
        gid = str((await c.post("/lobby/new", json={"variant": "standard"})).json())
        for _ in range(3):
            assert (await c.post("/lobby/add_bot", json={"id": gid, "algorithm": "random"})).status_code == 200
    assert app.turbo is not None
    for _ in range(500):
        hosted = app.turbo.games[gid].hosted
        if hosted is not None and hosted.table.game.phase == Phase.PASS:
            return gid
        await asyncio.sleep(0.01)
    raise AssertionError("the game did not start")


async def test_forged_and_replayed_session_cookies_do_not_make_you_someone(tmp_path: Path) -> None:
    async with serve(tmp_path) as app:
        async with browser(app, "alice") as early:  # a browser that once had "alice"
            assert (await early.get("/api/me")).status_code == 200
            stale = early.cookies[SESSION_COOKIE]
        async with browser(app, "alice") as alice:  # alice's browser now, using the name
            gid = (await alice.post("/lobby/new", json={"variant": "standard"})).json()
            mine = alice.cookies[SESSION_COOKIE]
            forged = [
                stale,  # replayed: an earlier binding of the name
                URLSafeSerializer("another-servers-key", salt="moonshot.turbo.name").dumps(["alice", "n"]),
                mine[:-2] + ("AA" if not mine.endswith("AA") else "BB"),  # her cookie, tampered with
                "",
            ]
            async with browser(app, "bob") as bob:  # a session cookie for another name
                assert (await bob.get("/api/me")).status_code == 200
                forged.append(bob.cookies[SESSION_COOKIE])
            for cookie in forged:
                async with browser(app, "alice", **{SESSION_COOKIE: cookie}) as mallory:
                    assert (await mallory.get("/api/me")).status_code == 403
                    assert (await mallory.post("/lobby/leave", json={"id": gid})).status_code == 403
            assert (await alice.get("/api/me")).json() == {"name": "alice"}
            assert [m.name for m in app.turbo.games[gid].members] == ["alice"]  # type: ignore[union-attr]


async def test_nobody_acts_in_someone_elses_game_whatever_the_body_says(tmp_path: Path) -> None:
    async with serve(tmp_path) as app:
        gid = await started_game(app, "alice")
        assert app.turbo is not None
        hosted = app.turbo.games[gid].hosted
        assert hosted is not None
        table = hosted.table
        hand = [format_card(c) for c in range(52) if table.game.hands[0] >> c & 1][:3]
        before = table.version
        async with browser(app, "mallory") as mallory:
            for kind, body in (
                ("pass", {"cards": hand}),
                ("play", {"card": hand[0]}),
                ("claim", {}),
                ("chat", {"message": "I am alice"}),
            ):
                for extra in ({}, {"seat": 0}, {"name": "alice"}, {"player": "alice", "seat": "N", "position": 0}):
                    r = await mallory.post(f"/game/{kind}", json={"id": gid, **body, **extra})
                    if kind == "chat":  # anyone may chat, as themselves
                        assert r.status_code == 200
                        continue
                    assert r.status_code == 403 and "no seat" in r.json()["error"], (kind, extra, r.text)
            # a body cannot join or leave a game for someone else either
            r = await mallory.post("/lobby/leave", json={"id": gid, "name": "alice"})
            assert r.status_code == 409
        assert table.version == before  # not a card moved
        assert all(c["name"] == "mallory" for c in hosted.stream.chat_log)  # chat as herself only


async def test_seat_and_name_fields_in_a_body_name_nobody(tmp_path: Path) -> None:
    async with serve(tmp_path) as app, browser(app, "alice") as alice, browser(app, "mallory") as mallory:
        gid = (await alice.post("/lobby/new", json={"variant": "standard", "name": "mallory"})).json()
        assert app.turbo is not None
        assert app.turbo.games[gid].created_by == "alice"
        r = await mallory.post("/lobby/join", json={"id": gid, "name": "alice", "player": "bob", "seat": 3})
        assert r.status_code == 200 and r.json() == ["alice", "mallory"]
        r = await mallory.post("/lobby/add_bot", json={"id": gid, "name": "alice (bot)", "algorithm": "random"})
        assert r.status_code == 200 and r.json() != "alice (bot)"
        r = await mallory.post("/lobby/chat", json={"message": "hi", "name": "alice"})
        assert r.status_code == 200
        async with alice.stream("GET", "/lobby/subscribe") as resp:
            assert resp.status_code == 200  # alice is still alice
        async with browser(app, "alice") as other:
            assert (await other.get("/api/me")).status_code == 403  # and still holds her name


@pytest.mark.browser
async def test_html_and_script_in_names_and_chat_do_not_run(tmp_path: Path) -> None:
    from e2e.webkit import Person, chromium

    evil_name = "<img src=x onerror=pwned=1>"
    evil_chat = '<script>window.pwned=2</script><img src=x onerror="window.pwned=3">'
    async with serve(tmp_path) as app, chromium() as chrome:
        victim = await Person.open(chrome, base_url(app), "victim")
        await victim.enter_lobby()
        async with browser(app, evil_name) as mallory:
            gid = (await mallory.post("/lobby/new", json={"variant": "standard"})).json()
            assert (await mallory.post("/lobby/chat", json={"message": evil_chat})).status_code == 200
            page = victim.page
            await page.locator("#lobby-chat li", has_text="window.pwned=2").wait_for()
            await page.locator(f"#games li[data-id='{gid}']").wait_for()
            assert evil_chat in await page.inner_text("#lobby-chat")  # shown as text
            assert evil_name in await page.inner_text(f"#games li[data-id='{gid}']")
            assert await page.evaluate("typeof window.pwned") == "undefined"
            assert await page.locator("#lobby-chat img, #lobby-chat script, #games img").count() == 0
            # the game's own chat, on its table page
            assert (await mallory.post("/game/chat", json={"id": gid, "message": evil_chat})).status_code == 200
            await page.goto(f"/game#{gid}")
            await page.get_by_text("window.pwned=2").first.wait_for()
            assert await page.evaluate("typeof window.pwned") == "undefined"
        assert victim.errors == []
        await victim.close()
