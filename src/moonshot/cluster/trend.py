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
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from moonshot.cluster import messages as wire
from moonshot.cluster.node import Cluster, Placed, TableKind
from moonshot.core.variants import TREND
from moonshot.protocols.trend import codec as tc
from moonshot.protocols.trend.seat import PeerBase
from moonshot.protocols.trend.server import TIMEOUTS, TrendService, credential
from moonshot.runtime.lobby import Candidate, GameType, Lobby, LobbyError
from moonshot.runtime.table import Seat, SeatKind, Table

if TYPE_CHECKING:
    from moonshot.cluster.host import Host

log = logging.getLogger("moonshot.cluster.trend")


def seat_key(number: int, name: str) -> str:
    """A Trend chair's re-join key: its player number and name (a digest: any name is a safe key)."""
    return "trend:" + hashlib.sha256(json.dumps([number, name]).encode()).hexdigest()


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
        """Each player's chair in the cluster's re-join index, by number and name (a player
        whose number is unknown, in a game restored from the store: under each of 1-4)."""
        keys = []
        for chair, name in enumerate(table.names):
            if table.credentials[chair] is not None:
                n = numbers[chair] if chair < len(numbers) else None
                keys += [(chair, seat_key(number, name)) for number in ([n] if isinstance(n, int) else range(1, 5))]
        self.cluster.index_chairs(table, keys)

    # ------------------------------------------------------------ taking a chair back
    def rejoin(self, peer: PeerBase, j: tc.Join) -> None:
        """A ``join``: a chair to take back on any node (the cluster's one re-join, keyed by
        the number and name, proved by the token's digest), else the lobby."""
        service = self.service
        assert service is not None
        digest = credential(j.token).encode()

        def seated(table: Table, chair: int) -> Seat:
            self.rejoins += 1
            return service.rejoined(peer, j, table, chair)

        self.cluster.rejoin(
            seat_key(j.number, j.name),
            lambda cred: hmac.compare_digest(cred.encode(), digest),
            "trend",
            seated,
            lambda: peer.closed,
            lambda: service.to_lobby(peer, j),
        )

    # ------------------------------------------------------------ adoption
    def _adopted(self, table: Table, meta: dict[str, Any], kept: int) -> None:
        """A Trend table the cluster's adopter built again: its chairs back in the re-join index."""
        numbers = meta.get("numbers")  # absent in a game restored from the store: each of 1-4
        self._index_all(table, numbers if isinstance(numbers, list) and len(numbers) == 4 else [None] * 4)
        log.info("event=trend_adopted table=%s players_kept=%d", table.id, kept)


__all__ = ["TrendCluster", "TrendLobby", "credential", "seat_key"]
