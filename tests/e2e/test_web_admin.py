"""The operator's notice and drain as a person in the web app sees them, in a real browser: the
lobby's banner, and a new game refused with the reason while the server drains."""

from __future__ import annotations

from pathlib import Path

import pytest

from e2e.webkit import Person, chromium, web_server
from moonshot.server.admin import DRAIN_NOTICE

pytestmark = [pytest.mark.asyncio, pytest.mark.browser]


async def test_the_lobby_shows_the_operators_notice_and_refuses_new_games_while_draining(tmp_path: Path) -> None:
    async with web_server(tmp_path, operator_address=("127.0.0.1", 0)) as app, chromium() as browser:
        base = f"http://127.0.0.1:{app.http_port}"
        alice = await Person.open(browser, base, "alice")
        await alice.enter_lobby()
        banner = alice.page.locator("#lobby-notice")
        assert await banner.is_hidden()

        out = app.admin.notice("Maintenance at 06:00 UTC: games under way will finish", "ops@host")
        assert "http" in out["shown"]
        await banner.filter(has_text="Maintenance at 06:00 UTC").wait_for()
        assert await banner.get_attribute("role") == "status"

        app.admin.drain("ops@host")
        await banner.filter(has_text=DRAIN_NOTICE).wait_for()
        await alice.page.click("#create-game")
        error = alice.page.locator("#lobby-error")
        await error.filter(has_text="draining").wait_for()
        assert await alice.page.locator("#games li.mine").count() == 0
        assert alice.errors == []
        await alice.close()
