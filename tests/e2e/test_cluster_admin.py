"""Moderation on a cluster of two real `moonshot serve` processes (Redis + PostgreSQL, both real),
driven by the real `moonshot admin` against each node's operator address.

A name banned through node A is refused by node B (waited for, bounded); a ban given through B
at the same time is kept beside it; both survive a restart of both nodes; a lift through B lets
the name in through A again; the audit trail read through either node holds both nodes' entries.

Skipped, with the reason, when Redis or PostgreSQL is not there (fixtures of test_cluster).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from moonshot.protocols.sessions.client import Client, ProtocolError

from .test_cluster import Cluster, Node, cluster, free_port, start_node, stop_node

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(600)]

__all__ = ["cluster"]  # the fixture, imported for the tests here


async def admin(operator: int, token: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real ``moonshot admin`` against a node's operator address."""
    cmd = [sys.executable, "-m", "moonshot.cli.main", "admin", "--operator", f"127.0.0.1:{operator}"]
    return await asyncio.to_thread(
        subprocess.run, [*cmd, "--token-file", str(token), *args], capture_output=True, text=True, timeout=60
    )


async def refusal(port: int, name: str) -> str | None:
    """What a new Sessions session under ``name`` is told by the node on ``port`` (None: admitted)."""
    client = await Client.connect("127.0.0.1", port)
    try:
        await client.open_session(name)
    except ProtocolError as e:
        return str(e)
    finally:
        await client.close()
    return None


async def refused_soon(node: Node, name: str, timeout: float = 30) -> str:
    """Ask until ``node`` refuses ``name`` (it hears of a ban given elsewhere at once; the bound
    is for a busy machine)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        why = await refusal(node.port, name)
        if why is not None:
            return why
        assert loop.time() < end, f"{name} was never refused"
        await asyncio.sleep(0.1)


async def start(c: Cluster, name: str, token: Path, operator: int) -> Node:
    extra = ("--operator-address", f"127.0.0.1:{operator}", "--operator-token-file", str(token))
    return await start_node(c, free_port(), name, *extra, lease=3)


async def test_a_ban_through_one_node_is_enforced_by_the_other_kept_and_lifted_through_it(cluster: Cluster) -> None:
    token = cluster.tmp / "operator-token"
    token.write_text(secrets.token_urlsafe(32))
    token.chmod(0o600)
    ops = {"a": free_port(), "b": free_port()}
    a = await start(cluster, "a", token, ops["a"])
    b = await start(cluster, "b", token, ops["b"])
    try:
        done = await asyncio.gather(
            admin(ops["a"], token, "ban", "name", "mallory", "--reason", "cheating"),
            admin(ops["b"], token, "ban", "name", "eve", "--for", "1h", "--reason", "abuse"),
        )
        assert all(d.returncode == 0 for d in done), [d.stderr for d in done]
        assert (await refused_soon(b, "Mallory")).endswith("banned permanently: cheating")
        assert "banned until" in await refused_soon(a, "EVE")
    finally:
        await stop_node(a)
        await stop_node(b)

    a = await start(cluster, "a2", token, ops["a"])
    b = await start(cluster, "b2", token, ops["b"])
    try:
        for node in (a, b):  # kept across the restart, both of them, on both nodes
            assert await refusal(node.port, "mallory") is not None and await refusal(node.port, "eve") is not None
        listed = json.loads((await admin(ops["a"], token, "--json", "bans")).stdout)
        assert sorted(x["value"] for x in listed["bans"]) == ["eve", "mallory"]
        done_b = await admin(ops["b"], token, "unban", "name", "mallory")
        assert done_b.returncode == 0, done_b.stderr
        loop = asyncio.get_running_loop()
        end = loop.time() + 30
        while await refusal(a.port, "mallory") is not None:  # lifted through B: A lets her in
            assert loop.time() < end, "the lift never reached A"
            await asyncio.sleep(0.1)
        trail = json.loads((await admin(ops["a"], token, "--json", "audit")).stdout)["audit"]
        assert sorted((e["action"], e["value"]) for e in trail) == [
            ("ban", "eve"),
            ("ban", "mallory"),
            ("unban", "mallory"),
        ]
        assert len({e["node"] for e in trail}) == 3  # a, b, and b again after its restart
    finally:
        await stop_node(a)
        await stop_node(b)
    assert "event=moderation_heard" in a.text() and "action=unban" in a.text()
