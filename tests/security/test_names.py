"""Taking someone's name: another spelling of it, a rated name its owner is not using, a guessed
recovery code. Against a real ``moonshot serve`` on loopback, with what browsers send."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from moonshot.cli.main import main
from moonshot.http.identity import SESSION_COOKIE
from moonshot.store import Store
from security.attack import browser, program, serve

pytestmark = pytest.mark.asyncio


async def rated_game(db: str, name: str) -> None:
    """``name`` has finished a rated game (as the server's writer stores one)."""
    store = await Store.open(db)
    try:
        at = datetime.now(UTC)
        players = [{"name": name, "kind": "human"}] + [
            {"name": f"b{i} (bot)", "kind": "bot", "bot": "random"} for i in range(3)
        ]
        row = {"id": f"g-{name}", "variant": "standard", "seed": 1, "protocol": "turbo", "players": players}
        row |= {"status": "running", "created_at": at, "meta": {}}
        done = {"id": row["id"], "status": "finished", "finished_at": at, "totals": [10, 20, 30, 40], "winners": [0]}
        await store.write_batch([("game", row), ("status", done), ("rate", {"id": row["id"]})])
        assert [g["game_id"] for g in await store.player_games("standard", name)] == [row["id"]]
    finally:
        await store.close()


async def test_another_spelling_of_a_name_in_use_is_the_same_name(tmp_path: Path) -> None:
    async with serve(tmp_path) as app, browser(app, "Alice") as alice:
        gid = (await alice.post("/lobby/new", json={"variant": "standard"})).json()  # in use now
        for spelling in ("alice", "ALICE", "Ａｌｉｃｅ", "%EF%BC%A1lice", " alice ", "a%6Cice"):
            # the web app writes the cookie with encodeURIComponent
            async with browser(app, quote(spelling, safe="%")) as mallory:
                r = await mallory.get("/api/me")
                assert r.status_code == 403 and "in use" in r.json()["error"], spelling
                r = await mallory.post("/lobby/leave", json={"id": gid})
                assert r.status_code == 403, spelling
                r = await mallory.post("/lobby/join", json={"id": gid})
                assert r.status_code == 403, spelling
        assert [m.name for m in app.turbo.games[gid].members] == ["Alice"]  # type: ignore[union-attr]
        # her own browser may spell it any way: it is one name, shown as she took it
        alice.cookies.set("name", "ALICE")
        assert (await alice.get("/api/me")).json() == {"name": "Alice"}


async def test_a_name_dressed_as_a_bot_is_refused(tmp_path: Path) -> None:
    async with serve(tmp_path) as app:
        for name in ("ada (bot)", "ada (BOT)", "ada （bot）", "x\u200by", "a\u202eb", "%FF", "a%00b"):
            async with browser(app, quote(name, safe="%")) as c:
                assert (await c.get("/api/me")).status_code == 400, name


async def test_a_rated_name_stays_with_its_browser_and_moves_only_with_its_code(tmp_path: Path) -> None:
    db = f"sqlite+aiosqlite:///{tmp_path / 'games.db'}"
    async with serve(tmp_path) as app, browser(app, "alice") as alice:
        r = await alice.get("/api/me")
        code = r.json()["recovery"]  # shown once, when the name is taken
        assert r.headers["Moonshot-Recovery-Code"] == code  # for programs
        assert "recovery" not in (await alice.get("/api/me")).json()
        own_cookies = dict(alice.cookies)
    await rated_game(db, "alice")  # she plays a rated game; then the server restarts
    async with serve(tmp_path) as app:
        # nobody holds "alice" right now: before, any browser could take her name and rating
        for spelling in ("alice", "Alice"):
            async with browser(app, spelling) as thief:
                r = await thief.get("/api/me")
                assert r.status_code == 403 and "recovery code" in r.json()["error"]
                assert (await thief.post("/lobby/new", json={"variant": "standard"})).status_code == 403
        async with program(app, "alice", **{SESSION_COOKIE: "forged"}) as forger:
            assert (await forger.get("/api/me")).status_code == 403
        async with browser(app, **own_cookies) as alice:  # her own browser still is alice
            assert (await alice.get("/api/me")).json() == {"name": "alice"}
        # guessing the code does not work
        async with browser(app, "alice") as thief:
            for guess in ("AAAA-AAAA-AAAA-AAAA-AAAA", code[:-1] + ("A" if code[-1] != "A" else "B"), "", "x" * 99):
                r = await thief.post("/api/names/recover", json={"name": "alice", "code": guess})
                assert r.status_code in (400, 403) and SESSION_COOKIE not in r.cookies, guess
            assert (await thief.get("/api/me")).status_code == 403
        # her second browser, with the code, takes it (any spelling, any case of the code)
        async with browser(app, "alice") as second:
            r = await second.post("/api/names/recover", json={"name": "ALICE", "code": code.lower()})
            assert r.status_code == 200 and r.json()["name"] == "alice"
            new_code = r.json()["recovery"]
            assert new_code != code and SESSION_COOKIE in r.cookies
            assert (await second.get("/api/me")).json() == {"name": "alice"}
            async with browser(app, **own_cookies) as first:  # the first browser lost it
                assert (await first.get("/api/me")).status_code == 403
            async with browser(app, "alice") as late:  # the old code is spent
                r = await late.post("/api/names/recover", json={"name": "alice", "code": code})
                assert r.status_code == 403


async def test_the_operator_releases_a_name_on_a_running_server(tmp_path: Path) -> None:
    db = f"sqlite+aiosqlite:///{tmp_path / 'games.db'}"
    async with serve(tmp_path) as app, browser(app, "bob") as bob:
        assert (await bob.get("/api/me")).status_code == 200
    await rated_game(db, "bob")
    async with serve(tmp_path) as app:
        async with browser(app, "Bob") as other:
            assert (await other.get("/api/me")).status_code == 403
            # the operator, from a shell on the server's machine
            result = await asyncio.to_thread(CliRunner().invoke, main, ["names", "release", "BOB", "--db", db])
            assert result.exit_code == 0, result.output
            r = await other.get("/api/me")
            assert r.status_code == 200 and r.json()["name"] == "Bob" and r.json()["recovery"]
        result = await asyncio.to_thread(CliRunner().invoke, main, ["names", "release", "nobody", "--db", db])
        assert result.exit_code == 1 and "no browser holds" in result.output


async def test_an_unrated_name_is_anyones_once_its_browser_lets_go(tmp_path: Path) -> None:
    """Anonymous play stays possible: a name that never played a rated game is not kept."""
    async with serve(tmp_path) as app:
        async with browser(app, "guest") as first:
            gid = (await first.post("/lobby/new", json={"variant": "standard"})).json()
            assert (await first.post("/lobby/leave", json={"id": gid})).status_code == 200
        async with browser(app, "Guest") as second:
            r = await second.get("/api/me")
            assert r.status_code == 200 and r.json()["name"] == "Guest"
