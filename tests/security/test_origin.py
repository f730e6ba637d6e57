"""Cross-site requests cannot act for a logged-in browser.

A page on another port of the same host is the *same site* as the server (SameSite cookies go with
its requests), so only the origin and content-type guard stands between it and a person's name.
Each attack runs against a real ``moonshot serve`` on loopback: from a real browser (chromium)
where the browser's own behaviour matters, else with the headers a browser sends."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest

from moonshot.server.trend_node import NodeConfig, NodeServer
from security.attack import base_url, browser, program, serve

pytestmark = pytest.mark.asyncio

EVIL = "http://127.0.0.1:1"  # a page on another port of the same host


@asynccontextmanager
async def page_server(html: str) -> AsyncIterator[int]:
    """One HTML page on a free loopback port: the attacker's site."""
    body = html.encode()

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            head = f"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {len(body)}\r\n"
            head += "Connection: close\r\n\r\n"
            writer.write(head.encode() + body)
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    try:
        yield int(server.sockets[0].getsockname()[1])
    finally:
        server.close()


async def games_by(app: object, name: str) -> list[str]:
    turbo = app.turbo
    return [g.id for g in turbo.games.values() if g.created_by == name]


@pytest.mark.browser
async def test_a_page_on_another_port_cannot_create_a_game_in_a_logged_in_browsers_name(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from e2e.webkit import Person, chromium

    caplog.set_level(logging.INFO, logger="moonshot.http")
    async with serve(tmp_path) as app, chromium() as chrome:
        base = base_url(app)
        victim = await Person.open(chrome, base, "victim")
        await victim.enter_lobby()  # the victim is logged in: name cookie and session cookie
        # the attacker's page: the fetch from the report, and a text/plain form posted at the lobby
        evil = f"""<!doctype html><body>
<form id="f" method="POST" action="{base}/lobby/new" enctype="text/plain">
<input type="hidden" name='{{"variant":"standard","x":"' value='"}}'></form>
<script>
window.done = fetch("{base}/lobby/new", {{method: "POST", mode: "no-cors", credentials: "include",
  headers: {{"Content-Type": "text/plain"}}, body: '{{"variant":"standard"}}'}})
  .then(() => "sent", (e) => "failed: " + e);
</script></body>"""
        async with page_server(evil) as port:
            page = await victim.context.new_page()
            await page.goto(f"http://127.0.0.1:{port}/")
            assert await page.evaluate("window.done") == "sent"  # the browser did send it (opaque answer)
            async with page.expect_navigation():
                await page.evaluate("document.getElementById('f').submit()")
            assert "application/json" in await page.inner_text("body")  # the 403's reason, shown to the victim
        refused = [r.getMessage() for r in caplog.records if "http_refused" in r.getMessage()]
        assert sum("/lobby/new" in m for m in refused) == 2, refused
        assert await games_by(app, "victim") == []
        # the victim's own page still works: same origin, JSON
        assert await victim.create_game("standard")
        assert victim.errors == []
        await victim.close()


async def test_a_text_plain_post_with_the_victims_cookies_is_refused(tmp_path: Path) -> None:
    async with serve(tmp_path) as app:
        async with browser(app, "victim") as victim:
            assert (await victim.get("/api/me")).status_code == 200  # logged in
            cookies = dict(victim.cookies)
        attacker = httpx.AsyncClient(base_url=base_url(app), cookies=cookies)
        async with attacker:
            r = await attacker.post(
                "/lobby/new",
                content=b'{"variant":"standard"}',
                headers={"Content-Type": "text/plain", "Origin": EVIL, "Sec-Fetch-Site": "same-site"},
            )
            assert r.status_code == 403 and "Content-Type: application/json" in r.json()["error"]
            r = await attacker.post(
                "/lobby/new",
                content=b"variant=standard",
                headers={"Content-Type": "application/x-www-form-urlencoded", "Origin": EVIL},
            )
            assert r.status_code == 403
        assert await games_by(app, "victim") == []


async def test_a_json_post_from_another_origin_is_refused(tmp_path: Path) -> None:
    """What a CORS request would carry if a browser ever sent one without its preflight."""
    async with serve(tmp_path) as app, browser(app, "victim") as victim:
        assert (await victim.get("/api/me")).status_code == 200
        gid = (await victim.post("/lobby/new", json={"variant": "standard"})).json()
        for headers in (
            {"Origin": EVIL},
            {"Origin": "null"},
            {"Origin": f"http://attacker.test:{app.http_port}"},  # another host (DNS rebinding)
            {"Origin": EVIL, "Sec-Fetch-Site": "same-site"},
            {"Origin": base_url(app), "Sec-Fetch-Site": "cross-site"},
            {"Sec-Fetch-Site": "same-site"},
        ):
            for path, body in (
                ("/lobby/new", {"variant": "standard"}),
                ("/lobby/chat", {"message": "spam"}),
                ("/lobby/leave", {"id": gid}),
                ("/game/chat", {"id": gid, "message": "spam"}),
                ("/api/tournaments", {"bots": ["random", "random"]}),
            ):
                r = await victim.post(path, json=body, headers=headers)
                assert r.status_code == 403, (path, headers, r.text)
                assert "error" in r.json()
        assert await games_by(app, "victim") == [gid]  # nothing made, nothing left
        assert [m.name for m in app.turbo.games[gid].members] == ["victim"]  # type: ignore[union-attr]


async def test_every_state_changing_route_checks_the_content_type(tmp_path: Path) -> None:
    async with serve(tmp_path) as app:
        assert app.turbo is not None
        async with browser(app, "victim") as victim:
            assert (await victim.get("/api/me")).status_code == 200
            from moonshot.http.app import build_app

            posts = sorted(
                {
                    r.path
                    for r in build_app(app.turbo).routes
                    if "POST" in (getattr(r, "methods", None) or ()) and "{" not in r.path
                }
            )
            assert "/lobby/new" in posts and "/game/play" in posts and "/api/tournaments/play" in posts
            for path in posts:
                for ctype in ("text/plain", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded", ""):
                    r = await victim.post(path, content=b"{}", headers={"Content-Type": ctype})
                    assert r.status_code == 403 and "application/json" in r.json()["error"], (path, ctype)
            for method in ("PUT", "DELETE", "PATCH"):
                r = await victim.request(method, "/lobby/new", content=b"{}", headers={"Content-Type": "text/plain"})
                assert r.status_code == 403


async def test_the_servers_own_pages_and_client_programs_still_get_through(tmp_path: Path) -> None:
    async with serve(tmp_path) as app:
        async with browser(app, "ann") as ann:  # the web app: same origin, JSON
            r = await ann.post("/lobby/new", json={"variant": "standard"}, headers={"Sec-Fetch-Site": "same-origin"})
            assert r.status_code == 200
            r = await ann.post("/lobby/chat", json={"message": "hi"}, headers={"Sec-Fetch-Site": ""})
            assert r.status_code == 403  # an empty Sec-Fetch-Site is not same-origin
        async with program(app, "bot-author") as prog:  # a program: no browser headers, JSON
            assert (await prog.post("/lobby/new", json={"variant": "standard"})).status_code == 200
        # a browser old enough to send neither header still cannot send JSON to another origin
        async with program(app, "old") as old:
            r = await old.post("/lobby/new", content=b'{"variant":"standard"}', headers={"Content-Type": "text/plain"})
            assert r.status_code == 403


async def test_allowed_origin_lets_a_proxys_pages_post(tmp_path: Path) -> None:
    proxy = "https://hearts.example.org"
    async with serve(tmp_path, allowed_origins=(proxy,)) as app, browser(app, "ann") as ann:
        # behind the proxy the Host header is the backend's, the Origin the proxy's
        headers = {"Origin": proxy, "Sec-Fetch-Site": "cross-site"}
        assert (await ann.post("/lobby/new", json={"variant": "standard"}, headers=headers)).status_code == 200
        r = await ann.post("/lobby/new", json={"variant": "standard"}, headers={"Origin": "https://evil.example.org"})
        assert r.status_code == 403


async def test_the_trend_nodes_seat_page_cannot_be_driven_from_another_site() -> None:
    server = NodeServer(NodeConfig(port=0))
    port = await server.start()
    try:
        base = f"http://127.0.0.1:{port}"
        seats = {"seats": [{"kind": "dummy", "bot": "random"}] * 4}
        async with httpx.AsyncClient(base_url=base, cookies={"name": "victim"}) as c:
            r = await c.post(
                "/api/seats", content=b'{"seats": []}', headers={"Content-Type": "text/plain", "Origin": EVIL}
            )
            assert r.status_code == 403
            r = await c.post("/api/seats", json=seats, headers={"Origin": EVIL})
            assert r.status_code == 403 and "origin" in r.json()["error"]
            r = await c.post("/api/human", json={"playerNumber": 1}, headers={"Origin": EVIL})
            assert r.status_code == 403
            assert [s.kind for s in server.node.settings] == ["empty"] * 4
            # the node's own page may
            r = await c.post("/api/seats", json=seats, headers={"Origin": base, "Sec-Fetch-Site": "same-origin"})
            assert r.status_code == 200
    finally:
        await server.stop()
