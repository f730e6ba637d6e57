"""What every concern of a cluster node shares: :class:`NodeState`, the node's identity, its
Redis handle and key names, the registries the composition root fills (``tables``, ``handlers``,
``adopters``, hooks), the tables it runs and the connections it holds, its one ordered writer
(``write``, ``send``, ...) and its guarded background calls (``_spawn``).

State and plumbing only: no decision about lobbies, chairs, leases or adoption is made here (the
concern modules make them), and nothing here reads Redis.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import secrets
import socket
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from moonshot.cluster import messages as wire
from moonshot.cluster.kinds import TableKind, Ticket, redis_key
from moonshot.cluster.remote import Binding, RemoteSeat
from moonshot.cluster.writer import OrderedWriter
from moonshot.core.rules import Rules
from moonshot.runtime.lobby import Candidate, Lobby
from moonshot.runtime.table import Seat, Table

if TYPE_CHECKING:
    from moonshot.cluster.host import Host

log = logging.getLogger("moonshot.cluster")

LOBBY_CALLS = 16  # lobby and resume calls to Redis at once (a burst of joins waits its turn)


@dataclass
class NodeState:
    """This process's membership of the cluster, as data (one per server process, which it sees
    as a :class:`~moonshot.cluster.host.Host`)."""

    host: Host
    url: str
    prefix: str = "moonshot:"
    lease: float = 5.0  # seconds a table's lease lasts without renewal
    node: str = field(default_factory=lambda: f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}")
    redis: Any = None  # redis.asyncio.Redis once started
    bindings: dict[str, Binding] = field(default_factory=dict)
    tickets: dict[str, Ticket] = field(default_factory=dict)
    # re-joins waiting for an owner's answer (table.attach), by binding
    answers: dict[str, Callable[[wire.Attached | wire.Refused], None]] = field(default_factory=dict)
    owned: dict[str, Table] = field(default_factory=dict)  # cluster tables this node runs
    # tables this node runs outside the directory (a tournament's) with players of other nodes
    served: dict[str, Table] = field(default_factory=dict)
    adopted: int = 0
    formed: int = 0
    # per-protocol hooks: message kinds handled elsewhere (kind -> handler), and how a table of a
    # protocol without a TableKind (HTTP) is built again once the one adopter has seated its live
    # players (protocol -> async (table id, meta, chair -> kept seat) -> Table)
    handlers: dict[str, Callable[[Any], None]] = field(default_factory=dict)
    adopters: dict[str, Callable[[str, dict[str, Any], Mapping[int, Seat]], Awaitable[Table | None]]] = field(
        default_factory=dict
    )
    # the protocols whose tables the one adopter builds again, from their data
    tables: dict[str, TableKind] = field(default_factory=dict)
    # the protocols whose players may sit at a table another process hosts (an HTTP lobby game, a
    # tournament's), their seat adapter running against a RemoteTable: the same on every process,
    # whichever protocols it serves itself (:mod:`moonshot.cluster.mixed`)
    mixed_protocols: frozenset[str] = frozenset()
    live_nodes: list[str] = field(default_factory=list)  # the other live nodes (refreshed by the keeper)
    lobby: Lobby | None = None  # this process's lobby (a ClusterLobby: running tables' free chairs)
    # a mixed table's claim by its id, as a candidate (moonshot.cluster.mixed), for seat.matched
    claimed: Callable[[str], Candidate | None] | None = None
    # what a seat at a table whose rules have no stored name (a tournament's own) is told it plays
    rules: Rules | None = None
    # re-join keys of every table this node registers, whatever its protocol (a Sessions player's
    # session id, at a mixed table too), given by the composition root
    table_keys: list[Callable[[Table], Sequence[tuple[int, str]]]] = field(default_factory=list)
    # called with a table's id when this node loses its lease (another node runs the table now)
    on_lease_lost: list[Callable[[str], None]] = field(default_factory=list)
    # more work for the keeper, every lease/3 after the leases (e.g. adopting a dead node's open
    # HTTP games: moonshot.http.peers)
    keeper_hooks: list[Callable[[], Awaitable[Any]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._tasks: list[asyncio.Task[None]] = []
        self._rng = random.Random()
        self._closing = False
        self._adopting: set[str] = set()
        self._fenced: set[str] = set()  # tables whose lease this node lost: nothing more goes out
        # tables whose lease is in Redis (a new table's lease is queued: renewing it before the
        # writer sent it would find no lease and stop the table)
        self._leased: set[str] = set()
        self._calls = asyncio.Semaphore(LOBBY_CALLS)
        self.writer = OrderedWriter(self.node, self.prefix, self._fenced)
        # lobby events go to every node (send_all); a node without an HTTP port has no lobby to
        # show them in (HttpPeers replaces this)
        self.handlers.setdefault(wire.LobbyEvent.kind, lambda msg: None)
        # the operator's changes: applied by the composition root (it replaces this)
        self.handlers.setdefault(wire.ModerationChanged.kind, lambda msg: None)

    def key(self, kind: str, name: str = "") -> str:
        return redis_key(self.prefix, kind, name)

    def free_key(self, name: str, chair: int | str = "") -> str:
        """The hash of pool ``name``'s free chairs ``chair`` at running tables (table id ->
        ``v <ms>`` free since, ``o <node>`` held through that node); without a chair, the prefix."""
        return f"{self.key('free', name)}:{chair}"

    # -------------------------------------------------------------- writes (the one ordered writer)
    def write(self, fence_key: str, kind: str, key: str, a: str = "", b: str | int = "") -> None:
        self.writer.write(fence_key, kind, key, a, b)

    def send(self, node: str, msg: wire.Message, fence: str | None = None) -> None:
        """Append ``msg`` to ``node``'s stream, after every write queued before it (see
        :meth:`moonshot.cluster.writer.OrderedWriter.send`)."""
        self.writer.send(node, msg, fence)

    def after_writes(self, table_id: str, fn: Callable[[], None]) -> None:
        """Call ``fn`` once every write queued so far is in Redis (and the table's lease is still
        ours): how a table's local spectators (an HTTP game's streams) keep the write-ahead rule."""
        self.writer.local(self.key("lease", table_id), fn)

    def send_all(self, msg: wire.Message) -> None:
        """``msg`` to every other live node (the ``nodes`` set, read by the write script itself,
        so a node that joined a moment ago gets it too)."""
        self.writer.send_all(msg)

    async def drain(self, timeout: float = 5.0) -> None:
        """Wait until every queued write reached Redis."""
        await self.writer.drain(timeout)

    async def written(self, timeout: float | None = None) -> None:
        """Wait until every write queued so far is in Redis (not the ones queued after, unlike
        :meth:`drain`): how a request's answer follows what it wrote, so that the client's next
        request, which may reach another process, finds it.

        Raises :class:`~moonshot.cluster.writer.ClusterUnavailable` when that takes over
        ``timeout`` seconds (Redis down or stalled): the caller must not acknowledge the request
        then. The writes stay queued and land, in order, once Redis answers again."""
        if self.redis is None or self._closing:
            return
        await self.writer.written(timeout)

    def unbind(self, table_id: str, seat: RemoteSeat) -> None:
        """A connection's hold on a chair of a table this node owns is over (out of ``bind:``)."""
        if table_id in self.owned:
            chair = next((i for i, c in enumerate(self.owned[table_id].chairs) if c.occupant is seat), None)
            if chair is not None:
                self.write(self.key("lease", table_id), "hd", self.key("bind", table_id), str(chair))

    # -------------------------------------------------------------- background calls
    def _spawn(self, coro: Any, limit: bool = True) -> None:
        """Run a lobby or resume call to Redis (``limit``: a few at a time); a failure is logged."""
        task = asyncio.get_running_loop().create_task(self._guarded(coro, limit))
        self._tasks.append(task)
        task.add_done_callback(self._tasks.remove)

    async def _guarded(self, coro: Any, limit: bool) -> None:
        try:
            if limit:
                async with self._calls:
                    await coro
            else:
                await coro
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("event=cluster_call_failed")
