"""The Trend protocol on every node of a cluster (``serve --workers N --redis URL --trend-port``).

Every node serves the Trend port (``SO_REUSEPORT``), so a bot's WebSocket lands on any of them.
Trend uses the cluster's own mechanisms (:mod:`moonshot.cluster.node`); what is Trend's here is
data and a little bookkeeping:

* **matching**: a Trend ``join`` is a ticket in the cluster's Redis lobby pool
  ``lobby:["trend", "any", code]`` (the ``lobbyCode``), as a Sessions join is; a
  :class:`~moonshot.cluster.node.TableKind` gives the table's rules, Trend's phase timeouts and
  its start data. ``playerNumber`` is the ticket's wanted chair (``playerNumber - 1``): the group
  is shuffled, then each player gets the chair it asked for unless someone earlier in that order
  asked for it first. Each player's node hears ``seat.matched``.
* **the seats**: every Trend chair of a cluster table is the cluster's one
  :class:`~moonshot.cluster.node.RemoteSeat` (``protocol = "trend"``): events (with the table's
  state, from which the adapter derives each chair's Trend ``status`` and counts), requests,
  rejections and the close go to the player's node, where the
  :class:`~moonshot.protocols.trend.seat.TrendSeat` plays against the cluster's
  :class:`~moonshot.cluster.node.RemoteTable`, as a Sessions seat does.
* **taking a chair back**: a chair's credential is ``sha256("trend", token)`` (the token itself
  is never stored), kept with the table's start data (``meta:{id}``, and the game's record); an
  index ``trendseat:{sha256(playerNumber, playerName)}`` (a hash: table id -> chair) finds the
  tables where a player with that number and name sits. A ``join`` on any node first looks there:
  a running table whose chair's credential matches the token's digest (compared with
  :func:`hmac.compare_digest`) is asked for the chair (the cluster's ``table.attach``); the owner
  seats the player again if the chair is empty (``seat.attached``, then the replay) or refuses
  (``seat.refused``). A refusal is tried again for a few leases (the owner may not yet know that
  the old socket is gone: its detach, or the death of the node that held it, is on the way), then
  the join goes to the lobby, as a join that matches no away chair does with one process.
* **adoption**: the cluster's one adopter rebuilds a dead owner's table from the Redis log with
  Trend's :class:`~moonshot.cluster.node.TableKind`: players on live nodes keep their chairs
  (``seat.adopted``, events skipped by version), the lobby's bots play theirs again, and the
  chairs whose socket died with the owner wait ``restore_grace`` for a re-join (then a bot plays
  them until the player comes back); the chairs go back into the re-join index.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from moonshot.cluster import messages as wire
from moonshot.cluster.node import Binding, Cluster, Placed, RemoteTable, TableKind
from moonshot.core.variants import TREND
from moonshot.protocols.trend import codec as tc
from moonshot.protocols.trend.seat import PeerBase
from moonshot.protocols.trend.server import TIMEOUTS, TrendService, credential
from moonshot.runtime.lobby import Candidate, GameType, Lobby, LobbyError
from moonshot.runtime.table import SeatKind, Table, TableStatus
from moonshot.store import rules_named

if TYPE_CHECKING:
    from moonshot.cluster.host import Host

log = logging.getLogger("moonshot.cluster.trend")

INDEX_TTL_S = 7 * 24 * 3600


def seat_key(number: int, name: str) -> str:
    """The index entry for a player number and name (a digest: any name is a safe key)."""
    return hashlib.sha256(json.dumps([number, name]).encode()).hexdigest()


class TrendLobby:
    """The lobby a :class:`TrendService` of a cluster node hands its players to."""

    def __init__(self, link: TrendCluster, lobby: Lobby) -> None:
        self.link = link
        self.lobby = lobby

    def join(self, c: Candidate) -> None:
        if c.game_type is not GameType.ANY:
            raise LobbyError("Trend games are of type any")
        c.joined_at = asyncio.get_running_loop().time()
        # the seat carries its chair's credential (the token's digest, set by TrendService.to_lobby)
        # to whichever table it gets: a Trend table here or elsewhere, or a Trend chair of a mixed
        # HTTP game; a re-join proves it
        if self.lobby.router is not None and self.lobby.router.claim(c):
            return  # a code naming a table hosted in this process (an HTTP game, a tournament seat)
        self.link.queue(c)

    def leave(self, c: Candidate) -> bool:
        if self.lobby.router is not None and self.lobby.router.release(c):
            return True
        return self.link.cluster.unqueue(c)


class _Pending:
    """A rejoin waiting for the owner's answer."""

    def __init__(self, peer: PeerBase, j: tc.Join) -> None:
        self.peer = peer
        self.join = j
        self.answer: asyncio.Future[wire.Attached | wire.Refused] = asyncio.get_running_loop().create_future()


class TrendCluster:
    """This node's Trend part of the cluster (one per server process with ``--trend-port``)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.host: Host = cluster.host
        self.service: TrendService | None = None
        self.pending: dict[str, _Pending] = {}  # rejoins asked of an owner, by binding
        self.formed = 0
        self.rejoins = 0
        # adopted by the cluster's one adopter: bots' chairs (their kind), Trend's deadlines, the index
        cluster.tables["trend"] = TableKind(
            TREND, SeatKind.BOT, TIMEOUTS, self._start_data, self._formed, self._adopted
        )

    def attach_service(self, service: TrendService) -> None:
        self.service = service
        service.remote = self

    # ------------------------------------------------------------ matching (the cluster's lobby pools)
    def queue(self, c: Candidate) -> None:
        """A ticket in the pool of the candidate's lobby code; four make a table (here or on
        the node whose join completed the group). Its seat's credential was set as it joined."""
        self.cluster.queue(c, self.host.fill_wait)

    def _start_data(self, final: Placed) -> dict[str, Any]:
        players = [
            {"name": s.name, "kind": s.kind.value, "protocol": s.protocol}
            | ({"credential": s.credential} if s.credential is not None else {})
            for s, _ in final
        ]
        # the playerNumber each player asked for: what its rejoin says (not always its chair + 1)
        numbers = [t["chair"] + 1 if t is not None and isinstance(t.get("chair"), int) else None for _, t in final]
        return {"players": players, "numbers": numbers, "tmeta": {"protocol": "trend"}}

    def _formed(self, table: Table, info: dict[str, Any]) -> None:
        self.formed += 1
        self._index_all(table, info["numbers"])

    def _index_all(self, table: Table, numbers: Sequence[int | None]) -> None:
        """``trendseat:{number, name}`` -> the table's chair, for each player's rejoin on any node
        (a player whose number is unknown, in a game restored from the store: under each of 1-4)."""
        cl = self.cluster
        lease = cl.key("lease", table.id)
        for chair, name in enumerate(table.names):
            if table.credentials[chair] is None:
                continue
            n = numbers[chair] if chair < len(numbers) else None
            for number in [n] if isinstance(n, int) else range(1, 5):
                key = cl.key("trendseat", seat_key(number, name))
                cl.write(lease, "h", key, table.id, str(chair))
                cl.write("", "e", key, str(INDEX_TTL_S))
        table.done.add_done_callback(lambda _: self._unindex(table, numbers))

    def _unindex(self, table: Table, numbers: Sequence[int | None]) -> None:
        """A finished (or failed) game's chairs can no longer be taken back: out of the index."""
        if table.status is TableStatus.STOPPED:
            return  # stopped here (shutdown, lease lost): the game goes on elsewhere
        cl = self.cluster
        for chair, name in enumerate(table.names):
            if table.credentials[chair] is None:
                continue
            n = numbers[chair] if chair < len(numbers) else None
            for number in [n] if isinstance(n, int) else range(1, 5):
                cl.write("", "hd", cl.key("trendseat", seat_key(number, name)), table.id)

    # ------------------------------------------------------------ messages
    def _answer(self, msg: wire.Attached | wire.Refused) -> None:
        """The owner's answer to a rejoin. The chair is taken here and now, before the next
        stream entry (the table's replay follows at once, maybe in the same read)."""
        p = self.pending.pop(msg.binding, None)
        if p is None or p.answer.done():
            if isinstance(msg, wire.Attached):  # nobody waits any more (timed out): give the chair up
                self._remote_table(msg).detach(msg.chair, None, "disconnected")
            return
        if isinstance(msg, wire.Attached):
            rt = self._remote_table(msg)
            if p.peer.closed or self.service is None:
                rt.detach(rt.chair, None, "disconnected")
            else:
                seat = self.service.rejoined(p.peer, p.join, cast(Table, rt), rt.chair)
                self.cluster.bindings[rt.binding] = Binding(rt.binding, cast(Any, seat), rt)
                self.rejoins += 1
        p.answer.set_result(msg)

    def _remote_table(self, msg: wire.Attached) -> RemoteTable:
        return RemoteTable(
            self.cluster, msg.table, msg.owner, msg.binding, msg.chair, list(msg.names), rules_named(msg.rules), None
        )

    # ------------------------------------------------------------ taking a chair back
    def rejoin(self, peer: PeerBase, j: tc.Join) -> None:
        """A ``join``: a chair to take back on any node, else the lobby (TrendService's link)."""
        self.cluster._spawn(self._rejoin(peer, j), limit=False)  # it may wait for an adoption

    async def _rejoin(self, peer: PeerBase, j: tc.Join) -> None:
        service = self.service
        assert service is not None
        try:
            if await self._find_chair(peer, j):
                return
        except Exception:
            log.exception("event=trend_rejoin_failed peer=%s", peer.addr)
        service.to_lobby(peer, j)

    async def _find_chair(self, peer: PeerBase, j: tc.Join) -> bool:
        cl = self.cluster
        assert cl.redis is not None
        index = await cl.redis.hgetall(cl.key("trendseat", seat_key(j.number, j.name)))
        if not index:
            return False
        digest = credential(j.token).encode()
        for raw_id, raw_chair in index.items():
            table_id, chair = raw_id.decode(), int(raw_chair)
            meta_raw = await cl.redis.get(cl.key("meta", table_id))
            if meta_raw is None:
                continue
            creds = json.loads(meta_raw).get("creds") or []
            cred = creds[chair] if 0 <= chair < len(creds) else None
            if not isinstance(cred, str) or not hmac.compare_digest(cred.encode(), digest):
                continue
            if await self._take(peer, j, table_id, chair):
                return True
        return False

    async def _take(self, peer: PeerBase, j: tc.Join, table_id: str, chair: int) -> bool:
        """Ask the table's owner for the chair, again while it is refused for a few leases (the
        owner has not heard yet that the old socket is gone) or the owner does not answer."""
        cl = self.cluster
        loop = asyncio.get_running_loop()
        end = loop.time() + max(3.0, 3 * cl.lease)
        while not peer.closed:
            owner = await cl._live_owner(table_id)
            if owner is None:
                return False
            binding = secrets.token_hex(8)
            p = _Pending(peer, j)
            self.pending[binding] = p
            cl.answers[binding] = self._answer
            attach = wire.Attach(table=table_id, binding=binding, chair=chair, node=cl.node, protocol="trend")
            cl.send(owner.decode(), attach)
            try:
                msg = await asyncio.wait_for(asyncio.shield(p.answer), max(3.0, 2 * cl.lease))
            except TimeoutError:
                self.pending.pop(binding, None)
                if loop.time() > end + 2 * cl.lease:
                    return False
                continue
            if isinstance(msg, wire.Attached):
                return True  # seated by _answer
            if msg.reason != "taken" or loop.time() > end:
                return False
            await asyncio.sleep(0.2)
        return True  # the socket went: nothing more to do for it

    # ------------------------------------------------------------ adoption
    def _adopted(self, table: Table, meta: dict[str, Any], kept: int) -> None:
        """A Trend table the cluster's adopter built again: its chairs back in the re-join index."""
        numbers = meta.get("numbers")  # absent in a game restored from the store: each of 1-4
        self._index_all(table, numbers if isinstance(numbers, list) and len(numbers) == 4 else [None] * 4)
        log.info("event=trend_adopted table=%s players_kept=%d", table.id, kept)


__all__ = ["TrendCluster", "TrendLobby", "credential", "seat_key"]
