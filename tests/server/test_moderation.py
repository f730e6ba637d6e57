"""moonshot.server.moderation: the operator's decisions on a cluster of two nodes in one event loop,
on the real Redis and PostgreSQL, driven through each node's operator surface as `moonshot
admin` drives it.

Bans given on both nodes at the same moment are both kept in the store and enforced by both
nodes; a name banned on one is refused by the other within a bounded wait and its open
connection there is closed; a restart of both keeps both; a lift on the other node lifts the ban
everywhere; the audit trail holds every node's entries; a close sent to the node that does not
host the game ends it on its host; a notice reaches a seated player of the other node.

Each test uses its own Redis key prefix and its own PostgreSQL database, and removes both;
skipped (with the reason) when either is not there.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from cluster.test_node import node as cluster_node
from e2e.test_cluster import Cluster, cluster
from e2e.test_cluster_admin import refusal
from moonshot.protocols.sessions.client import Client
from moonshot.runtime.moderation import AUDIT_PREFIX, BAN_PREFIX
from moonshot.server.app import ServerApp
from moonshot.store import Store
from sessionskit import Slow

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(600)]

__all__ = ["cluster"]  # the fixture, imported for the tests here


@dataclass
class Shared:
    prefix: str
    db: str
    token: Path


@pytest.fixture
def shared(cluster: Cluster) -> Shared:
    """test_cluster's Redis key prefix and PostgreSQL database (removed after the test), and an
    operator token the nodes share."""
    token = cluster.tmp / "operator-token"
    token.write_text(secrets.token_urlsafe(32))
    token.chmod(0o600)
    return Shared(cluster.prefix, cluster.db, token)


async def node(s: Shared, **options: Any) -> ServerApp:
    """A cluster node (test_node's) on the shared store, with its operator surface on a free port."""
    operator = {"operator_address": ("127.0.0.1", 0), "operator_token_file": str(s.token)}
    return await cluster_node(s.prefix, db_url=s.db, **{**operator, **options})


async def admin(app: ServerApp, path: str, body: dict[str, Any] | None = None) -> httpx.Response:
    assert app.config.operator_token_file is not None
    key = Path(app.config.operator_token_file).read_text().strip()
    headers = {"Authorization": f"Bearer {key}", "X-Moonshot-Operator": f"ops@{app.cluster.node}"}
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.operator_port}", timeout=30) as c:
        if body is None:
            return await c.get(path, headers=headers)
        return await c.post(path, json=body, headers=headers)


async def until(check: Callable[[], bool], timeout: float = 30.0) -> None:
    """Wait for ``check`` (a node hears another's change at once; the bound is for a busy machine)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not check():
        assert loop.time() < end, "never happened"
        await asyncio.sleep(0.02)


async def refused(app: ServerApp, name: str) -> str | None:
    """The refusal a new Sessions session under ``name`` gets from ``app`` (None: admitted)."""
    assert app.sessions_port is not None
    return await refusal(app.sessions_port, name)


async def stored_bans(db: str) -> list[str]:
    store = await Store.open(db, create=False)
    try:
        return sorted(row["value"] for row in (await store.values(BAN_PREFIX)).values())
    finally:
        await store.close()


async def test_bans_given_on_two_nodes_at_once_are_kept_enforced_everywhere_and_lifted_anywhere(
    shared: Shared,
) -> None:
    a = await node(shared)
    b = await node(shared)
    try:
        assert b.sessions_port is not None
        # trudy is connected to B, waiting in its lobby, when A bans her
        trudy = await Client.connect("127.0.0.1", b.sessions_port)
        await trudy.open_session("trudy")
        ra, rb = await asyncio.gather(
            admin(a, "/admin/ban", {"kind": "name", "value": "Mallory", "reason": "cheating"}),
            admin(b, "/admin/ban", {"kind": "name", "value": "eve", "duration": "1h", "reason": "abuse"}),
        )
        assert ra.status_code == 200 and rb.status_code == 200
        assert await stored_bans(shared.db) == ["Mallory", "eve"]  # neither overwrote the other
        for app in (a, b):
            await until(lambda app=app: all(app.guard.controls.name_ban(n) for n in ("mallory", "eve")))
        for app in (a, b):
            for name in ("MALLORY", "Eve"):
                reason = await refused(app, name)
                assert reason is not None and "banned" in reason, (app.cluster.node, name, reason)
        assert await refused(b, "alice") is None

        r = await admin(a, "/admin/ban", {"kind": "name", "value": "trudy", "reason": "spam"})
        assert r.status_code == 200
        await until(lambda: trudy.closed or trudy._reader_task.done())  # closed by B, told by A
        await trudy.close()
        assert "banned permanently: spam" in str(await refused(b, "trudy"))
        assert (await admin(b, "/admin/unban", {"kind": "name", "value": "trudy"})).status_code == 200
    finally:
        await a.stop()
        await b.stop()

    # both nodes restarted: both bans held by both
    a = await node(shared)
    b = await node(shared)
    try:
        for app in (a, b):
            assert app.guard.controls.name_ban("mallory") is not None
            assert app.guard.controls.name_ban("eve") is not None
            assert app.guard.controls.name_ban("trudy") is None
        # A's ban lifted on B: gone from both nodes and from the store
        r = await admin(b, "/admin/unban", {"kind": "name", "value": "mallory"})
        assert r.status_code == 200 and r.json()["lifted"]["value"] == "Mallory"
        await until(lambda: a.guard.controls.name_ban("mallory") is None)
        assert b.guard.controls.name_ban("mallory") is None
        assert await refused(a, "mallory") is None
        assert await stored_bans(shared.db) == ["eve"]
        # every node's actions in one trail, on either node
        for app in (a, b):
            audit = (await admin(app, "/admin/audit")).json()["audit"]
            done = [(e["action"], e.get("value")) for e in audit]
            assert sorted(done[:2]) == [("ban", "Mallory"), ("ban", "eve")]
            assert done[2:] == [("ban", "trudy"), ("unban", "trudy"), ("unban", "Mallory")]
            assert len({e["node"] for e in audit}) == 3  # a, b, and b again after its restart
    finally:
        await a.stop()
        await b.stop()
    store = await Store.open(shared.db, create=False)
    try:
        assert len(await store.values(AUDIT_PREFIX)) == 5
    finally:
        await store.close()


async def test_a_mute_and_a_re_read_reach_the_other_node(shared: Shared) -> None:
    a = await node(shared)
    b = await node(shared)
    try:
        assert (await admin(a, "/admin/mute", {"name": "chatty", "duration": "10m"})).status_code == 200
        await until(lambda: b.guard.controls.muted("Chatty") is not None)
        assert (await admin(b, "/admin/unmute", {"name": "chatty"})).status_code == 200
        await until(lambda: a.guard.controls.muted("chatty") is None)
        # a ban whose message B never got (written by a node that was not running): the re-read finds it
        from moonshot.runtime.controls import Ban
        from moonshot.runtime.moderation import ban_key

        late = Ban("address", "198.51.100.0/24", None, "", "ops", 0.0)
        assert b.store is not None
        await b.store.put_value(ban_key(late), late.to_json())
        assert b.guard.controls.address_ban("198.51.100.7") is None
        assert await b.admin.rows.refresh() == [late]
        assert b.guard.controls.address_ban("198.51.100.7") == late
        # what breaks the change's shape is refused with a log line and changes nothing
        sync = b.admin.sync
        before = (dict(b.guard.controls.bans), dict(b.guard.controls.mutes))
        for change in (
            {"action": "ban", "ban": {"kind": "name", "value": "x", "until": "soon"}},
            {"action": "ban", "ban": {"kind": "address", "value": "example.com", "until": None}},
            {"action": "mute", "mute": {"kind": "address", "value": "10.0.0.0/8", "until": None}},
            {"action": "unban", "ban": "198.51.100.0/24"},
            {"action": "close", "table": 5},
            {"action": "drain"},  # each node's own: never from another
            {"action": "notice", "message": ["x"]},
        ):
            assert sync.apply(change, "elsewhere") is False, change
        assert (dict(b.guard.controls.bans), dict(b.guard.controls.mutes)) == before and not b.draining
        assert b.guard.controls.notice is None
    finally:
        await a.stop()
        await b.stop()


async def test_a_close_sent_to_the_node_that_does_not_host_the_game_ends_it_on_its_host(shared: Shared) -> None:
    a = await node(shared)
    b = await node(shared)
    try:
        assert b.sessions_port is not None
        client = await Client.connect("127.0.0.1", b.sessions_port)  # four sessions on B: B hosts it
        games = asyncio.gather(*(client.play(Slow(0.02), lobby_code="t") for _ in range(4)), return_exceptions=True)
        await until(lambda: any(len(t.game.actions) > 4 for t in b.tables.values()), 120)
        (table,) = b.tables.values()
        assert table.id not in a.tables
        r = await admin(a, "/admin/notice", {"message": "Restart at 06:00 UTC"})
        assert r.status_code == 200  # told on A, heard on B: B's seated players are told
        await until(
            lambda: (
                len(client.sessions) == 4
                and all(any("Restart at 06:00 UTC" in e for e in s.errors) for s in client.sessions.values())
            )
        )
        r = await admin(a, "/admin/close", {"table": table.id, "reason": "cheating"})
        assert r.status_code == 200, r.text
        assert r.json()["host"] == b.cluster.node
        results = await asyncio.wait_for(games, 60)
        assert all(isinstance(x, Exception) and "closed by the operator: cheating" in str(x) for x in results), results
        await until(lambda: table.done.done())
        await client.close()
        # the host takes a finished table out of the cluster's directory a moment after it ends
        end = asyncio.get_running_loop().time() + 30
        while await a.cluster.game_node(table.id) is not None:
            assert asyncio.get_running_loop().time() < end, "the directory kept the finished table"
            await asyncio.sleep(0.02)
        r = await admin(a, "/admin/close", {"table": table.id})  # over: nowhere to close it
        assert r.status_code == 404
        audit = (await admin(b, "/admin/audit")).json()["audit"]
        assert [(e["action"], e.get("host")) for e in audit] == [("notice", None), ("close", b.cluster.node)]
    finally:
        await a.stop()
        await b.stop()
