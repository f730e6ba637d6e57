"""moonshot behind a real nginx (Debian's) terminating TLS, configured from the file a host copies
(``deploy/nginx/moonshot.conf``, rendered with free ports and a test CA's certificate): the web app
plays in Chromium over HTTPS, a Trend bot plays over ``wss://``, a Sessions client plays through
the PROXY protocol and the server sees its real address, two clients behind the proxy (from
127.0.0.2 and 127.0.0.3: Linux routes all of 127/8 to lo) get a share each, and a spoofed
``X-Forwarded-For`` sent straight to the server from a peer that is no trusted proxy changes
nothing.

nginx is started by the test on 127.0.0.1 and stopped by its process id. Without nginx (and its
stream module) the tests skip: ``make nginx`` installs both where it can.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import ssl
import subprocess
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from websockets.exceptions import InvalidStatus

from moonshot.protocols.sessions.client import Client, RandomPlayer
from moonshot.runtime.limits import ClientLimits
from moonshot.server.app import ServerApp
from moonshot.server.config import ServerConfig
from trend_sdk import SdkBot

from . import nginx as nginx_helper
from .nginx import HOST

pytestmark = pytest.mark.asyncio


def need_nginx() -> str:
    why = nginx_helper.missing()
    if why is not None:
        pytest.skip(f"{why}: the proxy tests need it")
    path = nginx_helper.nginx_path()
    assert path is not None
    return path


@dataclass
class Stack:
    app: ServerApp
    https: int  # nginx: the web app, Turbo, SSE, wss:// Trend at /trend/
    sessions: int  # nginx: Sessions with the PROXY protocol
    kierki: int  # nginx: Kierki with the PROXY protocol
    ca_file: Path
    spki: list[str]  # the test CA's and the server certificate's key hashes
    tls: ssl.SSLContext  # trusts the test CA alone

    @property
    def base(self) -> str:
        return f"https://{HOST}:{self.https}"


async def wait_port(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30
    while True:
        if proc.poll() is not None:
            raise AssertionError(f"nginx stopped: {log.read_text() if log.exists() else ''}")
        try:
            _, w = await asyncio.open_connection("127.0.0.1", port)
            w.close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise AssertionError("nginx did not listen") from None
            await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def proxied(tmp_path: Path, limits: ClientLimits | None = None) -> AsyncIterator[Stack]:
    """moonshot (every protocol, trusting 127.0.0.1) behind nginx with TLS from a test CA."""
    need_nginx()
    app = ServerApp(
        ServerConfig(
            host="127.0.0.1",
            sessions_port=0,
            http_port=0,
            trend_port=0,
            kierki_port=0,
            db_url=f"sqlite+aiosqlite:///{tmp_path / 'games.db'}",
            bot="random",
            seed=3,
            fill_wait=0.3,
            move_timeout=20.0,
            secret="proxy-tests",
            trusted_proxies=("127.0.0.1",),  # nginx, on this host
            limits=limits or ClientLimits(),
        )
    )
    await app.start()
    assert app.http_port and app.trend_port and app.sessions_port and app.kierki_port
    front = nginx_helper.start(tmp_path, app.http_port, app.trend_port, app.sessions_port, app.kierki_port)
    try:
        # nginx binds every listener before it accepts on any: the stream ports are not probed, so
        # no connection but the tests' own reaches Sessions and Kierki through it
        await wait_port(front.https, front.proc, front.logs / "error.log")
        tls = ssl.create_default_context(cafile=str(front.ca_file))
        yield Stack(app, front.https, front.sessions, front.kierki, front.ca_file, front.spki, tls)
    finally:
        await asyncio.to_thread(front.stop)
        await app.stop()


def from_address(stack: Stack, source: str, **kw: Any) -> httpx.AsyncClient:
    """An HTTPS client of the proxy, connecting from ``source``, trusting the test CA alone."""
    transport = httpx.AsyncHTTPTransport(local_address=source, verify=stack.tls)
    return httpx.AsyncClient(base_url=stack.base, transport=transport, timeout=30, **kw)


@pytest.mark.browser
async def test_the_web_app_plays_a_game_over_https(tmp_path: Path) -> None:
    from e2e.webkit import Person, click_card, my_seat, need_chromium, next_frame, pass_three, raised_cards

    need_chromium()
    from playwright.async_api import async_playwright

    from e2e.webkit import CHROMIUM

    async with proxied(tmp_path) as stack, async_playwright() as p:
        path = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
        # Chromium trusts the test CA's key (and the server's) alone: every other certificate
        # error stays an error (the flag needs a profile directory: Playwright gives it one)
        spki = ",".join(stack.spki)
        browser = await p.chromium.launch(
            executable_path=path, headless=True, args=[f"--ignore-certificate-errors-spki-list={spki}"]
        )
        try:
            alice = await Person.open(browser, stack.base, "alice")
            await alice.enter_lobby()
            game_id = await alice.create_game("standard")
            await alice.add_bots(game_id, "random", 3)
            await alice.open_table(game_id)
            page = alice.page
            assert page.url.startswith(f"https://{HOST}:{stack.https}/")
            seat = await my_seat(page)
            await pass_three(alice)
            turns = 0
            while not (await alice.state())["handScores"]:
                await page.wait_for_function(
                    "(s) => window.moonshotState.handScores.length > 0 || "
                    "(window.moonshotState.nextPlayer === s && document.querySelector('.my-hand button.card.legal'))",
                    arg=seat,
                )
                # the page as it stands (a frame after the state): not the cards of alice's last
                # turn, drawn before her card reached the state
                await next_frame(page)
                state = await alice.state()
                if state["handScores"]:
                    break
                before = len(state["hands"][seat])
                await click_card(page, (await raised_cards(page))[-1])
                await page.wait_for_function(
                    "([s, n]) => window.moonshotState.hands[s].length < n || window.moonshotState.handScores.length",
                    arg=[seat, before],
                )
                turns += 1
            assert turns == 13  # a whole hand, every card a click through the proxy
            # every cookie the page holds came (or was made) Secure: the page was served over HTTPS
            cookies = {c["name"]: c for c in await alice.context.cookies()}
            assert cookies["moonshot_session"]["secure"] and cookies["moonshot_session"]["httpOnly"]
            assert cookies["name"]["secure"]
            assert alice.errors == []
            await alice.close()
        finally:
            await browser.close()


async def test_a_trend_bot_plays_over_wss_and_each_client_has_its_share(tmp_path: Path) -> None:
    async with proxied(tmp_path, ClientLimits(connections_per_address=1)) as stack:
        url = f"wss://{HOST}:{stack.https}/trend/"
        bot = SdkBot(url, 1, "tls-bot", games=1, seed=5, sslopt={"ca_certs": str(stack.ca_file)})
        await asyncio.wait_for(asyncio.to_thread(bot.run), 240)
        assert bot.errors == [] and len(bot.seen) == 1 and bot.seen[0].deals == 4
        # one connection an address: the proxy's clients from 127.0.0.2 and 127.0.0.3 get one each
        # (the limit that once locked every bot behind a proxy out together)
        a = await websockets.connect(url, ssl=stack.tls, local_addr=("127.0.0.2", 0), compression=None)
        b = await websockets.connect(url, ssl=stack.tls, local_addr=("127.0.0.3", 0), compression=None)
        try:
            with pytest.raises(InvalidStatus) as refused:
                await websockets.connect(url, ssl=stack.tls, local_addr=("127.0.0.2", 0), compression=None)
            assert refused.value.response.status_code == 429
            assert stack.app.guard.connections.count("127.0.0.2") == 1
            assert stack.app.guard.connections.count("127.0.0.3") == 1
        finally:
            await a.close()
            await b.close()


async def test_a_sessions_client_plays_through_the_proxy_protocol(tmp_path: Path) -> None:
    async with proxied(tmp_path) as stack:
        admitted: list[str] = []
        admit = stack.app.guard.admit

        def recording(addr: str) -> Any:
            admitted.append(addr)
            return admit(addr)

        stack.app.guard.admit = recording  # type: ignore[method-assign]
        client = await Client.connect("127.0.0.1", stack.sessions, local_addr=("127.0.0.3", 0))
        try:
            result = await asyncio.wait_for(client.play(RandomPlayer()), 240)
            assert result is not None
        finally:
            await client.close()
        # the server counted the client's own address, not nginx's (127.0.0.1)
        assert admitted == ["127.0.0.3"]
        # Kierki through the same stream block: its connection is the real client's too
        _, w = await asyncio.open_connection("127.0.0.1", stack.kierki, local_addr=("127.0.0.2", 0))
        deadline = time.monotonic() + 30
        while "127.0.0.2" not in admitted and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert admitted[-1] == "127.0.0.2"
        w.close()


async def test_two_clients_behind_the_proxy_get_separate_shares_and_spoofing_changes_nothing(tmp_path: Path) -> None:
    async with proxied(tmp_path, ClientLimits(streams_per_address=1, tarpit=0.0)) as stack:
        app = stack.app
        async with (
            from_address(stack, "127.0.0.2") as two,
            from_address(stack, "127.0.0.3") as three,
            contextlib.AsyncExitStack() as held,
        ):

            async def stream(c: httpx.AsyncClient, name: str, **headers: str) -> int:
                resp = await held.enter_async_context(
                    c.stream("GET", "/lobby/subscribe", headers={"Cookie": f"name={name}", **headers})
                )
                return int(resp.status_code)

            assert await stream(two, "a") == 200
            assert await stream(three, "b") == 200  # another address behind the same proxy: its own share
            assert await stream(two, "c") == 429  # the first address's share is taken
            # a client's own X-Forwarded-For is kept left of what nginx appends: not believed
            assert await stream(two, "d", **{"X-Forwarded-For": "198.51.100.77"}) == 429
            assert set(app.guard.streams_by_address.counts) == {"127.0.0.2", "127.0.0.3"}
            # straight to the server (no proxy) from an untrusted peer: its headers are ignored
            direct = httpx.AsyncClient(
                base_url=f"http://127.0.0.1:{app.http_port}",
                transport=httpx.AsyncHTTPTransport(local_address="127.0.0.4"),
                timeout=30,
            )
            async with direct:
                spoof = {"X-Forwarded-For": "127.0.0.9", "X-Forwarded-Proto": "https"}
                assert await stream(direct, "e", **spoof) == 200  # 127.0.0.4's share
                assert await stream(direct, "f", **{"X-Forwarded-For": "127.0.0.8"}) == 429
                assert "127.0.0.9" not in app.guard.streams_by_address.counts
                resp = await direct.get("/api/me", headers={"Cookie": "name=g", **spoof})
                assert "secure" not in resp.headers["set-cookie"].lower()
                await held.aclose()
            # and through the proxy, HTTPS makes the session cookie Secure
            resp = await three.get("/api/me", headers={"Cookie": "name=h"})
            assert resp.status_code == 200 and "secure" in resp.headers["set-cookie"].lower()
