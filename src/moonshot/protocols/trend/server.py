"""The Trend protocol inside ``moonshot serve`` (``--trend-port``): many Trend tables at once.

A ``join`` is matched by the server's lobby like any other player (protocol ``trend``, game type
``any``: after ``fill_wait`` the table is filled with moonshot bots). ``playerNumber`` asks for
chair ``playerNumber - 1``, given when no one at the table asked for it first; every player's
``playerNumber`` is then its chair + 1 (in the type the viewer used), so numbers stay unique at a
table. An optional ``lobbyCode`` in the join data puts players who give the same code together.

Each table is one Trend *game* (4 deals, the ``trend`` variant); SDK bots close and re-join after
``game_end`` and so go back to the lobby for their next game. A player who disconnects mid-game is
played by a bot (``status`` 1) and takes its chair back by joining again with the same
``playerNumber``, ``playerName`` and ``token`` (tokens compared with :func:`hmac.compare_digest`).

In a cluster (``serve --redis``, every worker serves the Trend port) the lobby the service is
given matches the joins through Redis, and :attr:`TrendService.remote_rejoin` (the cluster's one
re-join) looks a rejoin up there, by :func:`seat_key`, so a player meets its table and takes its
chair back on any process. What the cluster keeps of a Trend table besides the generic is data
given here (:func:`start_data`, :func:`chair_keys`), which the composition root registers.

The sockets are served by the lean listener of :mod:`moonshot.protocols.trend.wire` (an asyncio
protocol over ``websockets``' sans-I/O server, no ASGI: a table step's frames for a chair go out in
one write). ``MOONSHOT_TREND_ASGI=1`` in the environment serves them with uvicorn and Starlette
instead, as before (the benchmark's anchor, and a fallback).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket

from moonshot.core.engine import Phase
from moonshot.protocols.trend import codec as tc
from moonshot.protocols.trend.seat import Peer, PeerBase, TrendSeat
from moonshot.protocols.trend.wire import WireListener, WirePeer
from moonshot.runtime.limits import ClientGuard, Hold
from moonshot.runtime.lobby import Candidate, ChairRejoin, GameType, Lobby, LobbyError
from moonshot.runtime.ratelimit import AttemptLimiter
from moonshot.runtime.table import Seat, Table

log = logging.getLogger("moonshot.trend")

TIMEOUTS = ((Phase.PASS, 3.0), (Phase.EXPOSE, 3.0), (Phase.PLAY, 1.0))  # the seed's defaults, seconds


def next_game_key(j: tc.Join) -> tuple[str, str, str] | None:
    """What a later join must bring to play the next game of this player's finished table (a
    rematch, moonshot.http.rematch): the same name and token, as a re-join after ``game_end``
    does; None without a token (anyone could send the name)."""
    return ("trend", j.name, credential(j.token)) if j.token else None


def credential(token: str) -> str:
    """What a server keeps of a Trend player's token (a table's chair credential, the store's
    player record, a cluster's Redis): a digest, never the token. Domain-separated from the other
    protocols' secrets, so no other protocol's secret opens a Trend chair."""
    return hashlib.sha256(b"trend\x00" + token.encode()).hexdigest()


# ------------------------------------------------------------ what a cluster keeps of a Trend table
def seat_key(number: int, name: str) -> str:
    """A Trend chair's re-join key in a cluster: its player number and name (a digest: any name
    is a safe key)."""
    return "trend:" + hashlib.sha256(json.dumps([number, name]).encode()).hexdigest()


def start_data(placed: Sequence[tuple[Seat, dict[str, Any] | None]]) -> dict[str, Any]:
    """A new cluster table's Trend start data, from its chairs (occupant, lobby ticket): the
    players as the store records them, and the ``playerNumber`` each asked for (what its rejoin
    says, not always its chair + 1)."""
    players = [
        {"name": s.name, "kind": s.kind.value, "protocol": s.protocol}
        | ({"credential": s.credential} if s.credential is not None else {})
        for s, _ in placed
    ]
    numbers = [t["chair"] + 1 if t is not None and isinstance(t.get("chair"), int) else None for _, t in placed]
    return {"players": players, "numbers": numbers, "tmeta": {"protocol": "trend"}}


def chair_keys(table: Table, data: dict[str, Any]) -> list[tuple[int, str]]:
    """Each player's chair of a Trend table under its re-join key, from the table's start data
    (a player whose number is unknown, in a game restored from the store: under each of 1-4)."""
    numbers = data.get("numbers")
    if not (isinstance(numbers, list) and len(numbers) == 4):
        numbers = [None] * 4
    keys = []
    for chair, name in enumerate(table.names):
        if table.credentials[chair] is not None:
            n = numbers[chair]
            keys += [(chair, seat_key(number, name)) for number in ([n] if isinstance(n, int) else range(1, 5))]
    return keys


def mixed_chair_keys(table: Table, chairs: Sequence[int]) -> list[tuple[int, str]]:
    """A mixed HTTP game's Trend chairs under every player number (the join's number is not kept
    there), so that a bot whose socket closed takes its chair back by joining again anywhere."""
    return [(c, seat_key(n, table.names[c])) for c in chairs for n in range(1, 5)]


# finds the chair a join's token opens in a game of this process that no in-memory record names
# (a game restored from the store after a restart): (table, chair) or None
ChairFinder = Callable[[tc.Join], "tuple[Table, int] | None"]


@dataclass(eq=False)
class _Away:
    """A chair whose Trend player left mid-game: who may take it back."""

    number: int
    name: str
    token: str
    table: Table
    chair: int


class TrendService:
    """Trend WebSockets on one port, their players handed to the lobby."""

    def __init__(
        self,
        lobby: Lobby,
        *,
        flood_rate: float = 200.0,
        max_queue: int = 5000,
        asgi: bool | None = None,
        guard: ClientGuard | None = None,
    ) -> None:
        self.lobby = lobby
        self.guard = guard  # per-address shares and penalties (the lean listener); None: none
        self.flood_rate = flood_rate
        self.max_queue = max_queue
        self.peers: set[PeerBase] = set()
        self.seat_of: dict[PeerBase, TrendSeat] = {}
        self.joins: dict[TrendSeat, tc.Join] = {}
        self.away: list[_Away] = []
        self.candidates: dict[PeerBase, Candidate] = {}  # players waiting in the lobby
        self.waiting: dict[PeerBase, Hold] = {}  # their shares of their address's waiting players
        # a cluster's re-join (serve --redis): a chair on any process, by seat_key; else None
        self.remote_rejoin: ChairRejoin | None = None
        self.remote_rejoins = 0  # chairs taken back through it
        self.joining: set[PeerBase] = set()  # joins the cluster is looking up as rejoins
        self.rejoins = AttemptLimiter()  # wrong tokens per chair left and per address
        # one process (no cluster): the chairs of restored games, whose tokens no ``away`` entry holds
        self.find_chair: ChairFinder | None = None
        # one process: is there such a restored chair (number and name), whatever the token?
        self.names_chair: Callable[[tc.Join], bool] | None = None
        self.app: Any = Starlette(routes=[WebSocketRoute("/", self.serve_socket)])
        self.asgi = asgi if asgi is not None else os.environ.get("MOONSHOT_TREND_ASGI", "") not in ("", "0")
        self._wire: WireListener | None = None
        self._uvicorn: Any = None
        self._task: asyncio.Task[None] | None = None

    # ------------------------------------------------------------ listening
    async def start(self, host: str, port: int, reuse_port: bool = False) -> int:
        """Listen; ``reuse_port``: share the port with the other workers (SO_REUSEPORT)."""
        if not self.asgi:
            self._wire = WireListener(
                self._opened, self._wire_gone, max_queue=self.max_queue, flood_rate=self.flood_rate, guard=self.guard
            )
            return await self._wire.start(host, port, reuse_port)
        import uvicorn

        from moonshot.runtime.listening import EmbeddedUvicorn, listening_socket

        sockets = [listening_socket(host, port, reuse_port)]  # SO_REUSEPORT, which uvicorn cannot set
        self._uvicorn = EmbeddedUvicorn(
            uvicorn.Config(
                self.app,
                host=host,
                port=port,
                log_level="warning",
                ws_max_size=tc.MAX_FRAME,
                ws_per_message_deflate=False,  # compressing every frame cost more CPU than sending it
                lifespan="off",
                # who the client is behind a proxy is the server's call (moonshot.http.proxies)
                proxy_headers=False,
            )
        )
        self._task = asyncio.get_running_loop().create_task(self._uvicorn.serve(sockets=sockets))
        while not self._uvicorn.started and not self._task.done():
            await asyncio.sleep(0.01)
        if self._task.done():
            self._task.result()
            raise OSError(f"the Trend protocol could not listen on {host}:{port}")
        return int(self._uvicorn.servers[0].sockets[0].getsockname()[1])

    async def close(self) -> None:
        if self._wire is not None:
            await self._wire.close(1001, "server shutting down")
        for p in list(self.peers):
            p.close(1001, "server shutting down")
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True
        if self._task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._task, 5)

    # ------------------------------------------------------------ sockets
    async def serve_socket(self, ws: WebSocket) -> None:
        await ws.accept()
        peer = Peer(ws, max_queue=self.max_queue, flood_rate=self.flood_rate)
        self.peers.add(peer)
        peer.on_message = lambda m: self._on_message(peer, m)
        try:
            await peer.run()
        finally:
            self.peers.discard(peer)
            self._gone(peer)

    def _opened(self, peer: WirePeer) -> None:
        self.peers.add(peer)
        peer.on_message = lambda m: self._on_message(peer, m)

    def _wire_gone(self, peer: WirePeer) -> None:
        self.peers.discard(peer)
        self._gone(peer)

    def _on_message(self, peer: PeerBase, msg: tc.ClientEvent) -> None:
        if isinstance(msg, tc.Join):
            self.join(peer, msg)
        elif isinstance(msg, tc.StopGame):
            return
        else:
            seat = self.seat_of.get(peer)
            if seat is None:
                peer.dropped += 1
                return
            seat.reply(msg)

    def join(self, peer: PeerBase, j: tc.Join) -> None:
        old = self.seat_of.get(peer)
        if (old is not None and old.table is not None) or peer in self.joining:
            log.info("event=join_ignored peer=%s reason=already_playing", peer.addr)
            return
        # a join naming a chair its player left (same number and name) must bring that chair's
        # token: wrong tokens are counted per chair and per address, and past the limit the
        # chair (or the address) is refused, whatever the token, for a while
        keys = (("chair", j.number, j.name), ("address", peer.ip))  # the real client's share
        now = time.monotonic()
        if self._claims_away(j) and self.rejoins.blocked(now, *keys):
            log.info("event=rejoin_limited peer=%s number=%d", peer.addr, j.number)
            peer.send(tc.error_frame(f"too many wrong tokens for player {j.number}: try again later"))
            return
        back = self._find_away(j)
        if back is None and self._claims_away(j):
            self.rejoins.failed(now, *keys)
        if back is not None:
            self.away.remove(back)
            back.table.attach(back.chair, self.rejoined(peer, j, back.table, back.chair), replay=True)
            return
        found = self.find_chair(j) if self.find_chair is not None and self.remote_rejoin is None else None
        if found is not None:  # a chair of a game restored after a restart: its token's digest was stored
            table, chair = found
            table.attach(chair, self.rejoined(peer, j, table, chair), replay=True)
            return
        if self.remote_rejoin is not None:  # a chair on any process of the cluster, else the lobby
            self.joining.add(peer)
            self._rejoin_remote(self.remote_rejoin, peer, j)
            return
        self.to_lobby(peer, j)

    def _rejoin_remote(self, rejoin: ChairRejoin, peer: PeerBase, j: tc.Join) -> None:
        """A ``join`` in a cluster: the chair indexed under the number and name whose credential
        is the token's digest (compared in constant time), on any process; else the lobby."""
        digest = credential(j.token).encode()

        def seated(table: Table, chair: int) -> Seat:
            self.remote_rejoins += 1
            return self.rejoined(peer, j, table, chair)

        rejoin(
            seat_key(j.number, j.name),
            lambda cred: hmac.compare_digest(cred.encode(), digest),
            "trend",
            seated,
            lambda: peer.closed,
            lambda: self.to_lobby(peer, j),
        )

    def rejoined(self, peer: PeerBase, j: tc.Join, table: Table, chair: int) -> TrendSeat:
        """The cluster gave this player its chair back (at a table owned by any process); the
        table's replay follows."""
        self.joining.discard(peer)
        seat = TrendSeat(peer, name=j.name, on_closed=self._closed)
        seat.credential = credential(j.token)
        seat.client_key = next_game_key(j)
        seat.seated(chair, self._infos(table, j.raw_number), table.rules)
        seat.catching_up = True
        seat.table = table  # a close before the replay arrives still gives the chair up
        self.seat_of[peer] = seat
        self.joins[seat] = j
        log.info("event=rejoined peer=%s table=%s seat=%d", peer.addr, table.id, chair)
        return seat

    def to_lobby(self, peer: PeerBase, j: tc.Join) -> None:
        """A join that takes no chair back: a candidate for the lobby."""
        self.joining.discard(peer)
        if peer.closed:
            return
        self._release_waiting(peer)  # a second join on one socket holds one share
        if self.guard is not None and isinstance(peer, WirePeer):  # the address's share of waiting players
            hold = self.guard.waiting.acquire(peer.ip)
            if hold is None:
                self.guard.refused += 1
                peer.send(tc.error_frame(f"{self.guard.waiting.refusal()}: join refused"))
                return
            self.waiting[peer] = hold
        seat = TrendSeat(peer, name=j.name, on_closed=self._closed)
        # the chair's credential, whichever table it gets: the store keeps it, so after a restart
        # the same join (number, name, token) takes the restored chair back (``find_chair``)
        seat.credential = credential(j.token)
        seat.client_key = next_game_key(j)
        self.seat_of[peer] = seat
        self.joins[seat] = j

        def matched(table: Table, chair: int) -> None:
            self.candidates.pop(peer, None)
            self._release_waiting(peer)
            seat.table = table
            seat.seated(chair, self._infos(table, j.raw_number), table.rules)

        cand = Candidate(
            seat,
            GameType.ANY,
            j.lobby_code,
            matched,
            protocol="trend",
            chair=j.number - 1,
            token=j.token or None,
            address=peer.ip,  # the table rate's share
        )

        def settle(why: str | None) -> None:
            """The late answer of a cluster's other process (the code names its table): a refusal
            is this join's error frame, as with one process; an acceptance says nothing."""
            if why is not None and self.candidates.get(peer) is cand:
                del self.candidates[peer]
                self._release_waiting(peer)
                if self.seat_of.get(peer) is seat:
                    del self.seat_of[peer]
                self.joins.pop(seat, None)
                peer.send(tc.error_frame(why))

        cand.settle = settle
        try:
            self.lobby.join(cand)
        except LobbyError as e:
            self._release_waiting(peer)
            peer.send(tc.error_frame(str(e)))
            return
        self.candidates[peer] = cand
        log.info("event=lobby_join peer=%s number=%d name=%s", peer.addr, j.number, j.name)

    def _infos(self, table: Table, number_like: int | str) -> list[tc.PlayerInfo]:
        names = table.seat_names()
        as_text = isinstance(number_like, str)
        return [tc.PlayerInfo(str(c + 1) if as_text else c + 1, names[c]) for c in range(4)]

    def _claims_away(self, j: tc.Join) -> bool:
        """Does ``j`` name a chair its player left (here, or in a restored game)?"""
        if any(a.number == j.number and a.name == j.name and not a.table.done.done() for a in self.away):
            return True
        return self.names_chair is not None and self.remote_rejoin is None and self.names_chair(j)

    def _find_away(self, j: tc.Join) -> _Away | None:
        for a in self.away:
            if a.table.done.done():
                continue
            if a.number == j.number and a.name == j.name and hmac.compare_digest(a.token.encode(), j.token.encode()):
                return a
        return None

    def _release_waiting(self, peer: PeerBase) -> None:
        hold = self.waiting.pop(peer, None)
        if hold is not None:
            hold.release()

    def _gone(self, peer: PeerBase) -> None:
        self._release_waiting(peer)
        self.joining.discard(peer)
        cand = self.candidates.pop(peer, None)
        if cand is not None:
            self.lobby.leave(cand)
        seat = self.seat_of.pop(peer, None)
        if seat is None:
            return
        j = self.joins.pop(seat, None)
        table = seat.table
        if table is not None and not table.done.done():
            if j is not None and self.remote_rejoin is None:  # a cluster keeps its chairs in Redis
                self.away = [a for a in self.away if not a.table.done.done()]
                self.away.append(_Away(j.number, j.name, j.token, table, seat.chair))
            table.detach(seat.chair, seat, "disconnected")

    def _closed(self, seat: TrendSeat, reason: str) -> None:
        self.candidates.pop(seat.peer, None)
        if self.seat_of.get(seat.peer) is seat:
            del self.seat_of[seat.peer]
        self.joins.pop(seat, None)


__all__ = [
    "TIMEOUTS",
    "ChairFinder",
    "TrendService",
    "chair_keys",
    "credential",
    "mixed_chair_keys",
    "next_game_key",
    "seat_key",
    "start_data",
]
