"""The operator's controls as an attacker meets them: a web page cannot drive the admin routes
(no token rides along cross-site), a forged X-Forwarded-For from an untrusted peer does not slip
past an address ban, a banned name comes back in another spelling and is still refused, and the
token file stays private whatever the umask."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import httpx
import pytest

from moonshot.protocols.sessions.client import Client, ProtocolError
from moonshot.server.admin import operator_token

from .attack import serve

pytestmark = pytest.mark.asyncio


async def test_a_cross_site_request_to_the_admin_routes_does_nothing(tmp_path: Path) -> None:
    async with serve(tmp_path, operator_address=("127.0.0.1", 0)) as app:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.operator_port}") as page:
            for path, body in (("/admin/drain", {}), ("/admin/ban", {"kind": "address", "value": "0.0.0.0/0"})):
                r = await page.post(
                    path,
                    json=body,
                    headers={"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site", "Cookie": "name=admin"},
                )
                assert r.status_code == 401
            r = await page.post("/admin/drain", content=b"{}", headers={"Content-Type": "text/plain"})
            assert r.status_code == 401
        assert not app.draining and app.guard.controls.active() == []


async def test_a_forged_forwarded_address_does_not_lift_an_address_ban(tmp_path: Path) -> None:
    async with serve(tmp_path, operator_address=("127.0.0.1", 0)) as app:
        app.guard.controls.ban("address", "127.0.0.1", None, "abuse")
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}") as attacker:
            for header in ("X-Forwarded-For", "X-Real-IP", "Forwarded"):
                value = "for=203.0.113.9" if header == "Forwarded" else "203.0.113.9"
                r = await attacker.get("/api/variants", headers={header: value})
                assert r.status_code == 403 and r.json()["error"].startswith("banned"), header


async def test_a_banned_name_in_another_spelling_is_still_refused(tmp_path: Path) -> None:
    async with serve(tmp_path, operator_address=("127.0.0.1", 0)) as app:
        app.guard.controls.ban("name", "mallory", None, "cheating")
        assert app.sessions_port is not None
        client = await Client.connect("127.0.0.1", app.sessions_port)
        try:
            for spelling in ("MALLORY", "Ｍａｌｌｏｒｙ", " mallory "):
                with pytest.raises(ProtocolError, match="banned"):
                    await client.open_session(spelling)
        finally:
            await client.close()
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}") as web:
            r = await web.get("/api/variants", headers={"Cookie": "name=MaLLoRy"})
            assert r.status_code == 403


async def test_the_token_file_is_0600_whatever_the_umask_and_an_old_file_mode(tmp_path: Path) -> None:
    old = tmp_path / "moonshot.operator-token"
    old.write_text("an older token, left world-readable\n")
    os.chmod(old, 0o666)
    mask = os.umask(0)
    try:
        token, path = operator_token(None, f"sqlite:///{tmp_path / 'games.db'}")
    finally:
        os.umask(mask)
    assert path == old and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text().strip() == token and "older" not in path.read_text()
