"""Many server processes, one set of tables, through Redis: the design, its Redis keys and its
messages are in docs/scaling.md ("The server on many processes").

A process with ``--redis`` is a *node*. The node whose lobby pop makes four players (a Lua script
on the pool's list) owns the new table: it holds the table's lease and writes every action to the
table's log in Redis, through one ordered writer whose batches are fenced by the lease, before
any player hears of it. Every seat whose player is connected (on this node or another) is one
:class:`RemoteSeat`, whatever the protocol; its node runs the protocol's own seat adapter against
a :class:`RemoteTable` stand-in. When a node dies, its leases expire and another node adopts its
tables by replaying their logs. What differs per protocol is data (:class:`TableKind`)
registered by the composition root; this package imports no protocol.

This module composes the node, :class:`Cluster`: its state (:mod:`~moonshot.cluster.state`) and
one object per concern (the writer, membership, the chair index, the directory, the pools,
adoption, the stream, the hooks), its life cycle (start, the keeper, close) and the calls the
server makes of it. It owns no concern's logic itself.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Sequence
from typing import Any

from moonshot.cluster.adoption import Adoption
from moonshot.cluster.directory import ClusterRecorder, Directory
from moonshot.cluster.hooks import Hooks
from moonshot.cluster.kinds import Placed, TableKind
from moonshot.cluster.membership import Membership
from moonshot.cluster.pools import ClusterLobby, Pools
from moonshot.cluster.rejoin import ChairIndex
from moonshot.cluster.remote import Binding, RemoteRequest, RemoteSeat, RemoteTable
from moonshot.cluster.state import NodeState
from moonshot.cluster.streams import Streams
from moonshot.cluster.writer import ClusterUnavailable
from moonshot.runtime.lobby import Candidate, ChairRejoin
from moonshot.runtime.table import Recorder, Table

log = logging.getLogger("moonshot.cluster")

MAX_CONNECTIONS = 64  # to Redis, per node: the reader, the writer, the keeper and the lobby's calls
INSTALL_HINT = "--redis needs the redis package: pip install 'moonshot[scale]'"


class ClusterError(Exception):
    """The cluster cannot be used (no redis package, Redis unreachable); one line for the CLI."""


class Cluster(NodeState):
    """This process's membership of the cluster (one per server process, which it sees as a
    :class:`~moonshot.cluster.host.Host`): the node's state, and its concerns composed.

    Composition, not mixins: each concern is an object that is handed the state and the concerns
    below it, so what one concern may call of another is its constructor's arguments, and the
    layering (``lint-imports``) holds between their modules."""

    members: Membership
    chair_index: ChairIndex
    directory: Directory
    pools: Pools
    adoption: Adoption
    streams: Streams
    hooks: Hooks

    def __post_init__(self) -> None:
        super().__post_init__()
        self.members = Membership(self)
        self.chair_index = ChairIndex(self, self.members)
        self.directory = Directory(self, self.chair_index)
        self.pools = Pools(self, self.chair_index, self.directory)
        self.adoption = Adoption(self, self.members, self.chair_index, self.directory, self.pools)
        self.streams = Streams(self, self.chair_index, self.pools)
        self.hooks = Hooks(self, self.members)
        self.writer.deliver = self.streams.dispatch
        self.writer.lease_lost = self.members.lease_lost

    # -------------------------------------------------------------- life cycle
    async def start(self) -> None:
        try:
            import redis.asyncio as aioredis
        except ImportError:
            raise ClusterError(INSTALL_HINT) from None
        try:
            self.redis = aioredis.Redis.from_url(self.url, socket_connect_timeout=5, max_connections=MAX_CONNECTIONS)
            await self.redis.ping()
        except Exception as e:
            raise ClusterError(f"cannot reach Redis at {self.url}: {e}") from None
        r = self.redis
        await self.writer.load(r)
        self.pools.load(r)
        self.members.load(r)
        await self.members.heartbeat()
        loop = asyncio.get_running_loop()
        for coro, name in (
            (self.writer.run(), "cluster-writer"),
            (self.streams.read(), "cluster-reader"),
            (self._keeper(), "cluster-keeper"),
        ):
            self._tasks.append(loop.create_task(coro, name=name))
        log.info("event=cluster_joined node=%s redis=%s lease=%.1f", self.node, self.url, self.lease)

    async def close(self) -> None:
        """Release this node's leases (its tables are stopped: other nodes adopt them now)."""
        self._closing = True
        for t in list(self.owned.values()):
            self.write(self.key("lease", t.id), "d", self.key("lease", t.id))
        self.owned.clear()
        self.write("", "d", self.key("node", self.node))
        self.write("", "sr", self.key("nodes"), self.node)
        await self.drain()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            # bounded: a task whose cancellation was swallowed (a library's timeout racing the
            # cancel, as asyncio.wait_for can on 3.11) must not hang the shutdown
            done, pending = await asyncio.wait(tasks, timeout=5)
            for task in done:
                if not task.cancelled():
                    task.exception()  # retrieved: no "never retrieved" noise at exit
            for task in pending:
                log.warning("event=cluster_task_stuck task=%s", task.get_name())
                task.cancel()
        if self.redis is not None:
            await self.redis.aclose()
        log.info("event=cluster_left node=%s", self.node)

    async def _keeper(self) -> None:
        """Renew leases and the node's heartbeat; notice dead nodes; adopt orphaned tables."""
        while not self._closing:
            await asyncio.sleep(self.lease / 3)
            if self._closing:
                return
            try:
                await self.members.heartbeat()
                await self.members.renew_leases()
                await self.members.check_players()
                await self.adoption.adopt_orphans()
                for hook in self.keeper_hooks:
                    await hook()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("event=cluster_keeper_failed")

    def describe(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "owned": len(self.owned),
            "bindings": len(self.bindings),
            "waiting": len(self.tickets),
            "adopted": self.adopted,
        }

    # -------------------------------------------------------------- what the server asks of it
    def queue(self, c: Candidate, fill_wait: float | None) -> None:
        """``c`` waits in its pool in Redis (see :mod:`moonshot.cluster.pools`)."""
        self.pools.queue(c, fill_wait)

    def unqueue(self, c: Candidate) -> bool:
        return self.pools.unqueue(c)

    def recorder(self) -> Recorder:
        return self.directory.recorder()

    def register_table(self, table: Table) -> None:
        """A table of another protocol (HTTP) started here: in the directory, so that it is
        adopted when this node dies. Call before the table starts."""
        self.directory.register_table(table)

    def table_done(self, table: Table) -> None:
        """The table ended here (see :meth:`moonshot.cluster.directory.Directory.table_done`)."""
        self.directory.table_done(table)

    def index_chairs(self, table: Table, keys: Sequence[tuple[int, str]]) -> None:
        """Re-join keys of a table this node runs (see :mod:`moonshot.cluster.rejoin`)."""
        self.chair_index.index_chairs(table, keys)

    @property
    def rejoin(self) -> ChairRejoin:
        """Take back a chair by its re-join key (see :meth:`moonshot.cluster.rejoin.ChairIndex.rejoin`)."""
        return self.chair_index.rejoin

    async def adopt_orphans(self) -> int:
        """Take over every table whose lease has expired (its owner died). Returns how many."""
        return await self.adoption.adopt_orphans()

    async def adopt_stored(self) -> int:
        """At start: unfinished games in the store that no node holds. Returns how many."""
        return await self.adoption.adopt_stored()

    async def node_alive(self, node: str) -> bool:
        return await self.members.node_alive(node)

    async def claim_job(self, job: str) -> bool:
        """Run ``job`` (``tournament:<id>``) on this node: true when no live node holds it."""
        return await self.members.claim_job(job)

    async def game_node(self, game_id: str) -> str | None:
        """The node hosting a game by id (see :mod:`moonshot.cluster.hooks`)."""
        return await self.hooks.game_node(game_id)

    async def shared_value(self, name: str, made: str) -> str:
        """A value one per cluster (the first node's ``made`` wins): the cookie-signing key."""
        return await self.hooks.shared_value(name, made)

    async def claim_open(self, game_id: str) -> bool:
        """At start: may this node hold open HTTP game ``game_id`` (kept in the store)?"""
        return await self.hooks.claim_open(game_id)


def reuse_port_supported() -> bool:
    return hasattr(socket, "SO_REUSEPORT")


__all__ = [
    "Binding",
    "Cluster",
    "ClusterError",
    "ClusterLobby",
    "ClusterRecorder",
    "ClusterUnavailable",
    "Placed",
    "RemoteRequest",
    "RemoteSeat",
    "RemoteTable",
    "TableKind",
    "reuse_port_supported",
]
