"""Names in the web app: the recovery code shown once when a name is taken, and moving a name to
another browser with it (the second browser asks for the name, is refused, enters the code)."""

from __future__ import annotations

from pathlib import Path

import pytest

from e2e.webkit import Person, chromium, web_server

pytestmark = [pytest.mark.asyncio, pytest.mark.browser]


async def test_the_recovery_code_is_shown_once_and_moves_the_name(tmp_path: Path) -> None:
    async with web_server(tmp_path, secret=None) as app, chromium() as browser:
        base = f"http://127.0.0.1:{app.http_port}"
        alice = await Person.open(browser, base, "alice")
        await alice.enter_lobby()
        code = (await alice.page.inner_text("#recovery .recovery-code")).strip()
        assert len(code) == 24 and code.count("-") == 4
        await alice.shot("name-recovery-code")
        await alice.page.click("#recovery button")
        assert await alice.page.locator("#recovery").count() == 0
        await alice.page.reload()  # shown once: not on the next visit
        await alice.page.wait_for_selector("#create-game")
        assert await alice.page.locator("#recovery").count() == 0

        laptop = await Person.open(browser, base, "alice")  # her other browser
        page = laptop.page
        await page.goto("/lobby")
        await page.fill("#name-form input", "ALICE")
        await page.click("#name-form button")
        await page.locator("#name-error").wait_for()
        await page.click("details.recover summary")
        await page.fill("#recover-form input", "AAAA-AAAA-AAAA-AAAA-AAAA")
        await page.click("#recover-form button")
        await page.locator("#recover-error", has_text="not the recovery code").wait_for()
        await page.fill("#recover-form input", code.lower())
        await laptop.shot("name-recover-form")
        await page.click("#recover-form button")
        await page.wait_for_selector("#create-game")
        assert "alice" in await page.inner_text("#me")
        new_code = (await page.inner_text("#recovery .recovery-code")).strip()
        assert new_code != code
        assert alice.errors == [] and laptop.errors == []
        await alice.close()
        await laptop.close()
