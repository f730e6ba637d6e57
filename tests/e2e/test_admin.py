"""`moonshot admin` against a real `moonshot serve`: a banned Sessions client and a banned web
client are refused, each in its protocol's way; the CLI without the token is refused; and a
drain lets the game under way finish, refuses new ones on every path, then the process exits 0."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from e2e.servekit import Served, serve_process
from moonshot.protocols.sessions.client import Client, ProtocolError
from moonshot.store import Store
from sessionskit import Slow

pytestmark = pytest.mark.timeout(600)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    with serve_process(tmp_path, fill_wait=60, log_level="warning") as s:
        yield s


def test_banned_sessions_and_web_clients_are_refused_and_the_cli_needs_the_token(served: Served) -> None:
    assert os.stat(served.token).st_mode & 0o777 == 0o600
    refused = served.admin("ban", "name", "mallory", token=False)  # run elsewhere: no token to be found
    assert refused.returncode == 1 and "cannot read the operator token" in refused.stderr
    refused = served.admin("ban", "name", "mallory", token=False, wrong="not-the-token-" * 3)
    assert refused.returncode == 1 and "401" in refused.stderr and "token" in refused.stderr

    # on the same host, --db of the server's store finds the token written beside it
    db = f"sqlite:///{Path(served.token).parent / 'games.db'}"
    done = served.admin("--db", db, "ban", "name", "Mallory", "--for", "2h", "--reason", "cheating", token=False)
    assert done.returncode == 0, done.stderr
    assert "banned name Mallory until" in done.stdout

    host, port = served.sessions.split(":")

    async def sessions() -> None:
        client = await Client.connect(host, int(port))
        try:
            with pytest.raises(ProtocolError, match=r"banned until .*: cheating"):
                await client.open_session("mallory")
            await client.open_session("alice")  # others are seated as before
        finally:
            await client.close()

    asyncio.run(sessions())

    origin = f"http://{served.http}"
    with httpx.Client(base_url=origin, headers={"Origin": origin}) as web:
        for method, path in (("GET", "/lobby"), ("GET", "/lobby/subscribe"), ("POST", "/lobby/new")):
            r = web.request(method, path, headers={"Cookie": "name=mallory"}, json={} if method == "POST" else None)
            assert r.status_code == 403, path
            assert r.headers["content-type"] == "application/json"
            assert r.json()["error"].startswith("banned until") and "cheating" in r.json()["error"]
        assert web.get("/lobby", headers={"Cookie": "name=alice"}).status_code == 200

    listed = served.admin("--json", "bans")
    assert [b["value"] for b in json.loads(listed.stdout)["bans"]] == ["Mallory"]
    assert served.admin("unban", "name", "mallory").returncode == 0
    audit = served.admin("audit")
    assert audit.returncode == 0 and " ban " in audit.stdout and " unban " in audit.stdout


def test_drain_lets_the_running_game_finish_then_the_server_exits_0(served: Served, tmp_path: Path) -> None:
    host, port = served.sessions.split(":")

    async def play_through_a_drain() -> list[object]:
        client = await Client.connect(host, int(port))
        games = asyncio.gather(*(client.play(Slow(0.03), lobby_code="d") for _ in range(4)), return_exceptions=True)
        while True:  # the game is under way
            listed = json.loads((await asyncio.to_thread(served.admin, "--json", "tables")).stdout)
            if listed["tables"] and listed["tables"][0]["actions"] > 10:
                break
            await asyncio.sleep(0.1)
        drained = await asyncio.to_thread(served.admin, "drain")
        assert drained.returncode == 0 and "draining: 1 running games finish" in drained.stdout, drained.stderr
        late = await Client.connect(host, int(port))
        with pytest.raises(ProtocolError, match="draining"):
            await late.open_session("latecomer")
        await late.close()
        origin = f"http://{served.http}"
        async with httpx.AsyncClient(base_url=origin, headers={"Origin": origin}) as web:
            r = await web.post("/lobby/new", json={}, headers={"Cookie": "name=alice"})
            assert r.status_code == 503 and "draining" in r.json()["error"]
            assert (await web.get("/readyz")).status_code == 503
        results = await asyncio.wait_for(games, 300)
        await client.close()
        return list(results)

    results = asyncio.run(play_through_a_drain())
    assert not any(isinstance(r, BaseException) for r in results), results  # every player finished its game
    assert served.proc.wait(120) == 0  # and then the server left on its own, exit 0

    async def stored() -> list[str]:
        store = await Store.open(f"sqlite:///{tmp_path / 'games.db'}", create=False)
        try:
            return [g["status"] for g in await store.list_games(None)]
        finally:
            await store.close()

    assert asyncio.run(stored()) == ["finished"]
