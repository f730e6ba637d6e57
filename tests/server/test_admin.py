"""The admin actions on a running ServerApp, through the operator surface as an attacker and as
the operator would call them: the token (401 without it or with a wrong one, a 0600 file, not
on the public port), listing, closing a game, bans (enforced by Sessions and HTTP, kept across a
restart, open connections closed), chat mutes, notices, drain, and the audit trail."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from moonshot.protocols.sessions.client import Client, ProtocolError
from moonshot.runtime.moderation import AUDIT_PREFIX, BAN_PREFIX, MUTE_PREFIX
from moonshot.server.admin import TOKEN_FILE, TokenFileError, operator_token
from moonshot.server.app import ServerApp
from moonshot.server.config import ServerConfig
from moonshot.store import Store
from sessionskit import Slow

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(300)]


def config(tmp_path: Path, **changes: Any) -> ServerConfig:
    base = {
        "sessions_port": 0,
        "http_port": 0,
        "operator_address": ("127.0.0.1", 0),
        "db_url": f"sqlite+aiosqlite:///{tmp_path / 'games.db'}",
        "bot": "random",
        "fill_wait": 60.0,
        "move_timeout": 30.0,
    }
    return ServerConfig(**{**base, **changes})


@pytest_asyncio.fixture
async def app(tmp_path: Path) -> AsyncIterator[ServerApp]:
    a = ServerApp(config(tmp_path))
    await a.start()
    yield a
    await a.stop()


def token(app: ServerApp) -> str:
    assert app.operator_token_path is not None
    return app.operator_token_path.read_text().strip()


async def admin(app: ServerApp, path: str, body: dict[str, Any] | None = None, key: str | None = "") -> httpx.Response:
    """A request to the operator surface; ``key``: the token ("" the real one, None none)."""
    headers = {"X-Moonshot-Operator": "tester@host"}
    if key is not None:
        headers["Authorization"] = f"Bearer {key or token(app)}"
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.operator_port}") as c:
        if body is None:
            return await c.get(path, headers=headers)
        return await c.post(path, json=body, headers=headers)


async def until(cond: Any, timeout: float = 60.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        assert loop.time() < end, "condition never met"
        await asyncio.sleep(0.02)


# ----------------------------------------------------------------------------- the token
async def test_admin_routes_refuse_a_request_without_the_token_or_with_a_wrong_one(app: ServerApp) -> None:
    right = token(app)
    for key in (None, "wrong-token-of-the-same-size-" + "x" * 14, right[:-1], right + "x", right.upper()):
        for path, body in (
            ("/admin/tables", None),
            ("/admin/ban", {"kind": "name", "value": "x"}),
            ("/admin/drain", {}),
        ):
            r = await admin(app, path, body, key)
            assert r.status_code == 401, (key, path)
            assert r.headers["www-authenticate"] == "Bearer" and "token" in r.json()["error"]
    async with httpx.AsyncClient() as c:  # another scheme, or the token where a token is not read
        base = f"http://127.0.0.1:{app.operator_port}"
        assert (await c.get(f"{base}/admin/tables", headers={"Authorization": f"Basic {right}"})).status_code == 401
        assert (await c.get(f"{base}/admin/tables?token={right}")).status_code == 401
    assert not app.draining and app.guard.controls.active() == []  # nothing was done
    assert (await admin(app, "/admin/tables")).status_code == 200


async def test_the_token_file_is_private_beside_the_store_and_new_each_start(app: ServerApp, tmp_path: Path) -> None:
    path = app.operator_token_path
    assert path == tmp_path / TOKEN_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and len(token(app)) >= 40
    assert app.operator is not None and app.operator.token == token(app)
    again, _ = operator_token(None, f"sqlite:///{tmp_path / 'games.db'}")
    assert again != app.operator.token  # a new one each start


async def test_a_given_token_file_must_be_private(tmp_path: Path) -> None:
    f = tmp_path / "token"
    f.write_text("a-long-enough-operator-token\n")
    os.chmod(f, 0o644)
    with pytest.raises(TokenFileError, match="readable by others"):
        operator_token(str(f), None)
    os.chmod(f, 0o600)
    assert operator_token(str(f), None) == ("a-long-enough-operator-token", f)
    f.write_text("short")
    with pytest.raises(TokenFileError, match="too short"):
        operator_token(str(f), None)


async def test_the_admin_routes_are_not_on_the_public_port(app: ServerApp) -> None:
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}") as c:
        for path in ("/admin/tables", "/admin/bans", "/metrics"):
            r = await c.get(path, headers={"Authorization": f"Bearer {token(app)}"})
            assert r.status_code == 404, path
    assert app.operator is not None and app.operator.host == "127.0.0.1" and app.operator_port != app.http_port


# ----------------------------------------------------------------------------- the actions
async def test_tables_lists_running_games_and_close_ends_one_aborted(app: ServerApp) -> None:
    assert app.sessions_port is not None
    client = await Client.connect("127.0.0.1", app.sessions_port)
    games = asyncio.gather(*(client.play(Slow(0.01), lobby_code="t") for _ in range(4)), return_exceptions=True)
    await until(lambda: any(len(t.game.actions) > 4 for t in app.tables.values()))
    listed = (await admin(app, "/admin/tables")).json()
    (table,) = listed["tables"]
    assert table["protocol"] == "sessions" and table["state"] == "running" and not listed["draining"]
    assert [s["kind"] for s in table["seats"]] == ["bot"] * 4  # RandomPlayer says player_kind bot
    assert all(s["protocol"] == "sessions" and s["address"] == "127.0.0.1" for s in table["seats"])
    assert all(s["name"].startswith("random") for s in table["seats"])

    r = await admin(app, "/admin/close", {"table": table["id"], "reason": "cheating"})
    assert r.status_code == 200
    results = await asyncio.wait_for(games, 60)
    assert all(isinstance(x, Exception) and "closed by the operator: cheating" in str(x) for x in results), results
    await client.close()
    assert app.recorder is not None
    await app.recorder.flush()
    assert app.store is not None
    rec = await app.store.load(table["id"])
    assert rec is not None and rec.status == "aborted" and await app.store.rated_in(table["id"]) == []
    assert (await admin(app, "/admin/close", {"table": table["id"]})).status_code == 404


async def test_a_ban_is_enforced_by_sessions_and_http_closes_open_connections_and_survives_a_restart(
    app: ServerApp, tmp_path: Path
) -> None:
    assert app.sessions_port is not None
    # a name ban: a Sessions session under that name gets no seat, others do
    r = await admin(app, "/admin/ban", {"kind": "name", "value": "Mallory", "duration": "1h", "reason": "cheating"})
    assert r.status_code == 200 and r.json()["ban"]["until"] is not None
    client = await Client.connect("127.0.0.1", app.sessions_port)
    with pytest.raises(ProtocolError, match=r"banned until .*: cheating"):
        await client.open_session("mallory")
    await client.open_session("alice")
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}") as web:
        r = await web.get("/api/variants", headers={"Cookie": "name=MALLORY"})
        assert r.status_code == 403 and r.json()["error"].startswith("banned until")
        # the web app's words for it: the code, the ban's end (unix seconds) and its reason
        ban = app.guard.controls.name_ban("mallory")
        assert ban is not None and ban.until is not None
        assert r.json()["code"] == "banned" and r.json()["args"] == {"until": ban.until, "reason": "cheating"}
        assert (await web.get("/api/variants", headers={"Cookie": "name=alice"})).status_code == 200

        # an address ban: the open Sessions connection is closed with the protocol's error reply,
        # a new one is refused, and every HTTP request gets 403 with the reason
        r = await admin(app, "/admin/ban", {"kind": "address", "value": "127.0.0.0/8", "reason": "abuse"})
        assert r.status_code == 200 and r.json()["closed"] == 1
        await until(lambda: client.closed or client._reader_task.done())
        reader, writer = await asyncio.open_connection("127.0.0.1", app.sessions_port)
        writer.write(b'{"type": "connection_request"}\n')
        reply = json.loads(await asyncio.wait_for(reader.readline(), 10))
        assert reply["type"] == "error" and reply["reason"].startswith("banned permanently: abuse")
        assert await asyncio.wait_for(reader.read(), 10) == b""  # and closed
        writer.close()
        r = await web.get("/api/variants")
        assert r.status_code == 403 and r.json() == {
            "error": "banned permanently: abuse",
            "code": "banned",
            "args": {"until": None, "reason": "abuse"},
        }
        bans = (await admin(app, "/admin/bans")).json()["bans"]
        assert [(b["kind"], b["value"]) for b in bans] == [("address", "127.0.0.0/8"), ("name", "Mallory")]

        assert (await admin(app, "/admin/unban", {"kind": "address", "value": "127.0.0.0/8"})).status_code == 200
        assert (await web.get("/api/variants")).status_code == 200
        assert (await admin(app, "/admin/unban", {"kind": "address", "value": "127.0.0.0/8"})).status_code == 404
    await client.close()

    # kept in the store: a server started again on it still refuses the name
    await app.stop()
    again = ServerApp(config(tmp_path))
    await again.start()
    try:
        assert again.guard.controls.name_ban("mallory") is not None
        assert again.guard.controls.address_ban("127.0.0.1") is None
    finally:
        await again.stop()
    await app.start()  # the fixture stops it


async def test_bad_ban_requests_are_400_with_the_reason(app: ServerApp) -> None:
    r = await admin(app, "/admin/ban", {"kind": "address", "value": "not-an-ip"})
    assert r.status_code == 400 and "not an address" in r.json()["error"]
    r = await admin(app, "/admin/ban", {"kind": "name", "value": "x", "duration": "soon"})
    assert r.status_code == 400 and "not a duration" in r.json()["error"]
    r = await admin(app, "/admin/ban", {"kind": "name"})
    assert r.status_code == 400
    async with httpx.AsyncClient() as c:
        r = await c.post(
            f"http://127.0.0.1:{app.operator_port}/admin/ban",
            content=b"[1,2",
            headers={"Authorization": f"Bearer {token(app)}"},
        )
        assert r.status_code == 400


async def test_a_muted_name_cannot_chat(app: ServerApp) -> None:
    r = await admin(app, "/admin/mute", {"name": "trudy", "duration": "10m", "reason": "spam"})
    assert r.status_code == 200
    origin = f"http://127.0.0.1:{app.http_port}"
    async with httpx.AsyncClient(base_url=origin, headers={"Origin": origin}) as web:
        r = await web.post("/lobby/chat", json={"message": "hello"}, headers={"Cookie": "name=Trudy"})
        assert (
            r.status_code == 403 and r.json()["error"].startswith("muted in chat until") and "spam" in r.json()["error"]
        )
        assert r.json()["code"] == "muted" and r.json()["args"]["reason"] == "spam"
        assert (await web.get("/api/variants", headers={"Cookie": "name=trudy"})).status_code == 200  # only chat
        assert (await admin(app, "/admin/unmute", {"name": "TRUDY"})).status_code == 200
        r = await web.post("/lobby/chat", json={"message": "hello"}, headers={"Cookie": "name=trudy"})
        assert r.status_code != 403 or "muted" not in r.text


async def test_a_notice_reaches_the_web_lobby_and_seated_players_and_says_who_cannot_show_it(
    app: ServerApp,
) -> None:
    assert app.turbo is not None and app.sessions_port is not None
    watcher: asyncio.Queue[Any] = asyncio.Queue()
    app.turbo.subscribers.setdefault("watcher", []).append(watcher)
    client = await Client.connect("127.0.0.1", app.sessions_port)
    games = asyncio.gather(*(client.play(Slow(0.01), lobby_code="n") for _ in range(4)), return_exceptions=True)
    await until(lambda: any(len(t.game.actions) > 4 for t in app.tables.values()))
    r = await admin(app, "/admin/notice", {"message": "  Maintenance   at 06:00 UTC "})
    assert r.status_code == 200 and r.json() == {"shown": ["http", "sessions (seated players)"], "not_shown": []}
    event = await asyncio.wait_for(watcher.get(), 5)
    assert dict(event) == {"type": "notice", "message": "Maintenance at 06:00 UTC"}
    # each seated Sessions player gets a non-fatal error reply naming its session, about: notice
    await until(
        lambda: (
            len(client.sessions) == 4
            and all(any("Maintenance at 06:00 UTC" in e for e in s.errors) for s in client.sessions.values())
        )
    )
    assert all(len(t.game.actions) > 4 and not t.done.done() for t in app.tables.values())  # the game goes on
    for table_id in list(app.tables):
        await admin(app, "/admin/close", {"table": table_id})
    await asyncio.wait_for(games, 60)
    await client.close()
    assert (await admin(app, "/admin/notice", {"message": " "})).status_code == 400


async def test_drain_refuses_new_games_on_every_path_and_stops_once_nothing_runs(app: ServerApp) -> None:
    r = await admin(app, "/admin/drain", {})
    assert r.status_code == 200 and r.json() == {"draining": True, "running": []}
    assert app.draining
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}") as web:
        assert (await web.get("/readyz")).status_code == 503
        origin = f"http://127.0.0.1:{app.http_port}"
        r = await web.post("/lobby/new", json={}, headers={"Origin": origin, "Cookie": "name=alice"})
        assert r.status_code == 503 and "draining" in r.json()["error"]
        assert r.json()["code"] == "draining" and r.json()["args"] == {"reason": r.json()["error"]}
    assert app.sessions_port is not None
    client = await Client.connect("127.0.0.1", app.sessions_port)
    with pytest.raises(ProtocolError, match="draining"):
        await client.open_session("alice")
    await client.close()
    await asyncio.wait_for(app._stopping.wait(), 10)  # no game was running: it stops at once


async def test_every_action_is_logged_and_kept_in_the_audit_trail(
    app: ServerApp, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("WARNING", logger="moonshot.admin")
    await admin(app, "/admin/ban", {"kind": "name", "value": "eve", "reason": "r"})
    await admin(app, "/admin/mute", {"name": "eve"})
    audit = (await admin(app, "/admin/audit")).json()["audit"]
    assert [(e["action"], e["by"]) for e in audit] == [("ban", "tester@host"), ("mute", "tester@host")]
    assert audit[0]["value"] == "eve" and audit[0]["reason"] == "r" and audit[0]["at"] > 0
    assert any(
        "event=admin_action action=ban" in r.getMessage() and 'by="tester@host"' in r.getMessage()
        for r in caplog.records
    )
    assert app.recorder is not None
    await app.recorder.flush()
    store = await Store.open(f"sqlite:///{tmp_path / 'games.db'}", create=False)
    try:
        kept = await store.values(AUDIT_PREFIX)  # a row per entry, in time order
        assert [kept[k]["action"] for k in sorted(kept)] == ["ban", "mute"]
        assert [b["value"] for b in (await store.values(BAN_PREFIX)).values()] == ["eve"]
        assert [m["value"] for m in (await store.values(MUTE_PREFIX)).values()] == ["eve"]
    finally:
        await store.close()


async def test_a_closed_web_game_tells_its_people_why_in_the_game_and_leaves_the_lobby(app: ServerApp) -> None:
    from security.conftest import bots_game, http, sse_events

    async with http(app, "alice") as alice:
        assert (await alice.get("/lobby")).status_code == 200  # the name is bound to this browser
        gid = await bots_game(app, alice)
        await until(lambda: len(app.tables) == 1)
        (table_id,) = [t.id for t in app.tables.values()]
        r = await admin(app, "/admin/close", {"table": table_id, "reason": "a cheating report"})
        assert r.status_code == 200
        events = await sse_events(
            alice,
            f"/game/subscribe/{gid}",
            lambda ev: ev.get("type") == "chat" and "a cheating report" in str(ev.get("message")),
        )
        assert events[-1] == {
            "type": "chat",
            "name": "moonshot",
            "message": "closed by the operator: a cheating report",
        }
    assert app.turbo is not None
    await until(lambda: app.turbo is not None and app.turbo.games[gid].finished)
    assert app.recorder is not None and app.store is not None
    await app.recorder.flush()
    rec = await app.store.load(table_id)
    assert rec is not None and rec.status == "aborted" and await app.store.rated_in(table_id) == []


async def test_a_name_ban_ends_the_web_streams_open_under_that_name(app: ServerApp) -> None:
    from security.conftest import http

    async with http(app, "mallory") as mallory, http(app, "alice") as alice:
        for web in (mallory, alice):
            assert (await web.get("/lobby")).status_code == 200

        async def read(web: httpx.AsyncClient) -> None:
            async with web.stream("GET", "/lobby/subscribe") as resp:
                assert resp.status_code == 200
                async for _ in resp.aiter_lines():
                    pass

        streams = {name: asyncio.ensure_future(read(web)) for name, web in (("mallory", mallory), ("alice", alice))}
        assert app.turbo is not None
        await until(lambda: len([n for n, qs in app.turbo.subscribers.items() if qs]) == 2)  # type: ignore[union-attr]
        r = await admin(app, "/admin/ban", {"kind": "name", "value": "Mallory", "reason": "abuse"})
        assert r.status_code == 200 and r.json()["closed"] == 1
        await asyncio.wait_for(streams["mallory"], 10)  # ended by the server
        assert not streams["alice"].done()
        r = await mallory.get("/lobby/subscribe")
        assert r.status_code == 403 and r.json()["error"] == "banned permanently: abuse"
        streams["alice"].cancel()


async def test_a_store_an_older_server_kept_its_bans_in_is_migrated_at_start(tmp_path: Path) -> None:
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'games.db'}")
    ban = {"kind": "name", "value": "mallory", "until": None, "reason": "cheating", "by": "ops", "at": 1.0}
    await store.put_value("admin:controls", {"bans": [ban], "mutes": [{**ban, "value": "trudy"}]})
    await store.put_value("admin:audit", [{"at": 1.0, "by": "ops", "action": "ban", "value": "mallory"}])
    await store.close()
    app = ServerApp(config(tmp_path))
    await app.start()
    try:
        assert app.guard.controls.name_ban("Mallory") is not None and app.guard.controls.muted("trudy") is not None
        await admin(app, "/admin/ban", {"kind": "name", "value": "eve"})
        audit = (await admin(app, "/admin/audit")).json()["audit"]
        assert [(e["action"], e["value"]) for e in audit] == [("ban", "mallory"), ("ban", "eve")]
        assert app.store is not None and await app.store.get_value("admin:controls") is None
        assert sorted(b["value"] for b in (await app.store.values(BAN_PREFIX)).values()) == ["eve", "mallory"]
    finally:
        await app.stop()
