"""The table rate (``tables_per_s`` / ``tables_burst``) over the HTTP lobby, tried as an attacker
would: a real ``ServerApp`` on 127.0.0.1 port 0, a client that creates web games under many names
from one address (127.0.0.2), fills them with bots and so starts them, as fast as it can. Past the
burst the game that would start is refused (429, ``too_many_tables``, ``Retry-After``) and stays
open as it was, until the address's rate allows; another address (127.0.0.3) starts its games as
before; behind a trusted proxy, each real client has its own rate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from moonshot.runtime.limits import ClientLimits
from moonshot.server.app import ServerApp
from moonshot.server.config import ServerConfig

pytestmark = pytest.mark.asyncio

ATTACKER = "127.0.0.2"
OTHER = "127.0.0.3"
PROXY = "127.0.0.4"  # a trusted proxy in front of two clients
RATE = ClientLimits(tables_per_s=0.5, tables_burst=2, tarpit=0.0)


class Frozen:
    """The table rate's clock, moved only by the test: a busy machine's slow requests never let
    a token refill in the middle of an assertion (at 0.5 a second, one did after 2 s)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def frozen_rate(app: ServerApp) -> Frozen:
    clock = Frozen()
    app.guard.tables_by_address.clock = clock
    return clock


async def start(tmp_path: Path, **options: Any) -> ServerApp:
    app = ServerApp(
        ServerConfig(
            sessions_port=None,
            http_port=0,
            db_url=f"sqlite+aiosqlite:///{tmp_path / 'games.db'}",
            bot="random",
            seed=1,
            limits=RATE,
            **options,
        )
    )
    await app.start()
    return app


def http(app: ServerApp, name: str, source: str = ATTACKER, forwarded: str | None = None) -> httpx.AsyncClient:
    headers = {"X-Forwarded-For": forwarded} if forwarded else {}
    return httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{app.http_port}",
        cookies={"name": name},
        headers=headers,
        transport=httpx.AsyncHTTPTransport(local_address=source),
        timeout=30,
    )


async def game_with_bots(c: httpx.AsyncClient) -> tuple[str, httpx.Response]:
    """A new game and three bots: its id and the answer to the third bot (the start)."""
    r = await c.post("/lobby/new", json={"rules": "classic"})
    assert r.status_code == 200, r.text
    game_id = r.json()
    for _ in range(2):
        assert (await c.post("/lobby/add_bot", json={"id": game_id})).status_code == 200
    return game_id, await c.post("/lobby/add_bot", json={"id": game_id})


def started(app: ServerApp, game_id: str) -> bool:
    assert app.turbo is not None
    return app.turbo.games[game_id].hosted is not None


async def test_many_names_from_one_address_start_a_burst_of_web_games_then_are_refused(tmp_path: Path) -> None:
    app = await start(tmp_path)
    clock = frozen_rate(app)
    try:
        assert app.turbo is not None
        # a new name each time (each its own browser): the rate is the address's, whatever the name
        clients = [http(app, f"flood{i}") for i in range(4)]
        answers = [await game_with_bots(c) for c in clients]
        assert [r.status_code for _, r in answers] == [200, 200, 429, 429]
        assert [started(app, g) for g, _ in answers] == [True, True, False, False]
        refused = answers[2][1]
        body = refused.json()
        assert body["code"] == "too_many_tables" and 0 < body["args"]["seconds"] <= 2.0
        assert "tables started" in body["error"] and 1 <= int(refused.headers["retry-after"]) <= 2
        # the refused game is as it was: three players, open, its last chair free to fill later
        assert len(app.turbo.games[answers[2][0]].members) == 3
        assert app.guard.refusals()["tables_by_address"] == 2
        assert set(app.guard.tables_by_address.buckets) == {ATTACKER}
        # another address starts its game at once
        async with http(app, "bystander", OTHER) as c:
            game_id, r = await game_with_bots(c)
            assert r.status_code == 200 and started(app, game_id)
            # a person from another address filling the attacker's game starts nothing either:
            # a table counts for each of its players' addresses
            joined = await c.post("/lobby/join", json={"id": answers[3][0]})
            assert joined.status_code == 429 and joined.json()["code"] == "too_many_tables"
        # once the address's rate allows (a token every 2 s), its game starts: paced, not banned
        clock.now += 2.0
        assert app.guard.tables_by_address.wait(ATTACKER) == 0.0
        assert (await clients[2].post("/lobby/add_bot", json={"id": answers[2][0]})).status_code == 200
        assert started(app, answers[2][0]) and not started(app, answers[3][0])
        for c in clients:
            await c.aclose()
    finally:
        await app.stop()


async def test_behind_a_trusted_proxy_each_client_has_its_own_rate_of_web_games(tmp_path: Path) -> None:
    app = await start(tmp_path, trusted_proxies=(PROXY,))
    frozen_rate(app)
    try:
        one, two = "198.51.100.1", "198.51.100.2"
        statuses = []
        for i in range(3):
            async with http(app, f"one{i}", PROXY, forwarded=one) as c:
                statuses.append((await game_with_bots(c))[1].status_code)
        assert statuses == [200, 200, 429]
        async with http(app, "two", PROXY, forwarded=two) as c:
            game_id, r = await game_with_bots(c)
            assert r.status_code == 200 and started(app, game_id)  # the other client is not held back
        assert set(app.guard.tables_by_address.buckets) == {one, two}  # never the proxy's own address
    finally:
        await app.stop()


async def test_a_person_whose_game_cannot_start_yet_is_told_why_in_polish(tmp_path: Path) -> None:
    """The refusal reaches the lobby page from its code: the catalogue's words, not the English."""
    from e2e.test_web_i18n import polish_person
    from e2e.webkit import PHONE, chromium, web_server

    limits = ClientLimits(tables_per_s=0.001, tables_burst=1)
    async with web_server(tmp_path, fill_wait=0.05, limits=limits) as app, chromium() as browser:
        ola = await polish_person(browser, f"http://127.0.0.1:{app.http_port}", "ola", PHONE)
        try:
            await ola.enter_lobby()
            first = await ola.create_game("standard")
            await ola.add_bots(first, "random", 3)  # the address's one table
            second = await ola.create_game("standard")
            await ola.add_bots(second, "random", 2)
            await ola.page.locator(f"#games li[data-id='{second}'] [data-action=add-bot]").click()
            error = ola.page.locator("#lobby-error")
            await error.wait_for()
            assert "rozpoczęto właśnie zbyt wiele gier" in await error.inner_text()
            await ola.shot("lobby-table-rate-pl")
            assert not ola.errors
        finally:
            await ola.close()
