"""Rematch: after a web game ends, the same people and bots play again with every seat moved one
chair clockwise, once each person at the table has accepted.

``POST /lobby/rematch {"id"}`` offers a rematch of a finished game, or accepts the offer that is
open; ``POST /lobby/rematch_decline {"id"}`` declines it, which cancels it for everyone; ``GET
/lobby/rematch/{id}`` says where the offer stands (who accepted, who is still asked, the seconds
left, the new game once it starts). Only a person who sat at the table may do any of them, and
each accepts only for their own name: nobody is put in a game they did not accept. The offer is
cancelled when nobody answers within :data:`REMATCH_SECONDS`. The new game has the same variant
(Turbo: the same charging rules), the same options and clock, and is rated when the first was.

A mixed table's players who came over another protocol are asked in their protocol's own way
into a next game: its client joins again with the finished game's id as its lobby code (a
Sessions ``game_session_request``, a Trend ``join``), which the lobby's router hands here
(:meth:`Rematches.join_remote`). The join is the chair's acceptance only when it shows the chair's
``Seat.client_key`` (Sessions: the very connection that played it; Trend: the same name and
token); it is held, its client waiting as for any match, until everyone accepted, and then sits
in the new game. Such a join offers the rematch when none is open, as a person's click does. A
chair whose client can no longer be asked (a closed Sessions connection, a Trend player without a
token) counts as declined, and so does a held join whose connection closes; a client that does
not ask is waited for like a person who does not answer, until the lapse.

On a cluster all of this runs on the process that ran the game: the rematch's requests that land
elsewhere are forwarded to it (:mod:`moonshot.http.peers`), and a join with its id through another
process is claimed there (:mod:`moonshot.cluster.mixed`, its client key as that process states it).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.routing import BaseRoute, Route

from moonshot.http.endpoints import endpoint, read_body
from moonshot.http.identity import Caller, Identity
from moonshot.http.lobby import LobbyGame, Member, TurboLobby
from moonshot.http.names import same_name
from moonshot.http.streams import GameStream
from moonshot.protocols.turbo.codec import RequestError, field_str
from moonshot.runtime.lobby import Candidate, LobbyError
from moonshot.runtime.table import Seat

log = logging.getLogger("moonshot.turbo")

REMATCH_SECONDS = 60.0  # an offer nobody finishes answering is cancelled after this long


@dataclass
class RemoteChair:
    """A chair of the finished game whose player came over another protocol: asked through it."""

    name: str  # its player's name in the finished game
    protocol: str
    seat: Seat  # the seat that played it: its client_key says who may join for it, while it can
    joined: Candidate | None = None  # its client's join for the next game, held until the start


@dataclass
class Offer:
    """One rematch offer of a finished game."""

    game_id: str
    by: str
    people: tuple[str, ...]  # every person of the table, each of whom must accept
    due: float  # monotonic time the offer lapses
    remote: dict[int, RemoteChair] = field(default_factory=dict)  # by chair: each must join again
    accepted: list[str] = field(default_factory=list)
    state: str = "open"  # "open" | "cancelled" | "started"
    reason: str = ""
    reason_code: str = ""  # the reason for the web app's catalogue: "declined" {name}, "lapsed" {seconds}
    reason_args: dict[str, Any] = field(default_factory=dict)
    new_game: str | None = None
    timer: asyncio.TimerHandle | None = None

    def to_json(self) -> dict[str, Any]:
        joined = [r.name for r in self.remote.values() if r.joined is not None]
        return {
            "state": self.state,
            "by": self.by,
            "people": [*self.people, *(r.name for r in self.remote.values())],
            "accepted": [*self.accepted, *joined],
            "waiting": [p for p in self.people if p not in self.accepted]
            + [r.name for r in self.remote.values() if r.joined is None],
            # the players asked through their own protocol: name -> protocol ("sessions", "trend")
            "remote": {r.name: r.protocol for r in self.remote.values()},
            "remaining": round(max(0.0, self.due - time.monotonic()), 1) if self.state == "open" else 0,
            "reason": self.reason,
            "reason_code": self.reason_code,
            "reason_args": self.reason_args,
            "game": self.new_game,
        }


def rotated(members: list[Member]) -> list[Member]:
    """The same players, each one chair clockwise (N -> E -> S -> W -> N), as fresh members."""
    fresh = [Member(m.name, m.kind, m.algorithm, m.rules) for m in members]
    return [fresh[(chair - 1) % len(fresh)] for chair in range(len(fresh))]


def remote_chairs(g: LobbyGame) -> dict[int, RemoteChair]:
    """The chairs of ``g`` whose players came over another protocol."""
    return {
        chair: RemoteChair(m.name, m.remote.protocol, m.remote.seat)
        for chair, m in enumerate(g.members)
        if m.remote is not None
    }


class Rematches:
    """Every open (and recently settled) rematch offer of one lobby."""

    def __init__(self, lobby: TurboLobby, seconds: float = REMATCH_SECONDS) -> None:
        self.lobby = lobby
        self.seconds = seconds
        self.offers: dict[str, Offer] = {}  # finished game id -> its latest offer

    def _finished(self, game_id: str, name: str) -> tuple[LobbyGame, tuple[str, ...]]:
        """The finished game and its people; refused unless ``name`` is one of them."""
        g = self.lobby.games.get(game_id)
        if g is None or g.hosted is None:
            raise RequestError(404, f"no game {game_id!r}", "no_game", {"id": game_id})
        people = tuple(m.name for m in g.members if m.kind == "human" and m.remote is None)
        if not any(same_name(p, name) for p in people):
            raise RequestError(403, f"{name} did not play in this game", "did_not_play", {"name": name})
        if not g.hosted.table.game.over:  # (played to its end: not stopped or closed by the operator)
            raise RequestError(409, "the game is not over", "game_not_over")
        return g, people

    def state(self, name: str, game_id: str) -> dict[str, Any]:
        self._finished(game_id, name)
        offer = self.offers.get(game_id)
        if offer is not None:
            self._check_remote(offer)
        return offer.to_json() if offer is not None else {"state": "none"}

    def _open(self, g: LobbyGame, by: str, people: tuple[str, ...]) -> Offer:
        """The open offer of ``g``, made by ``by`` when none is open (refused once it started)."""
        offer = self.offers.get(g.id)
        if offer is not None and offer.state == "started":
            raise RequestError(
                409, f"the rematch has started: game {offer.new_game}", "rematch_started", {"game": offer.new_game}
            )
        if offer is None or offer.state == "cancelled":
            offer = Offer(g.id, by, people, time.monotonic() + self.seconds, remote_chairs(g))
            offer.timer = asyncio.get_running_loop().call_later(self.seconds, self._lapse, offer)
            self.offers[g.id] = offer
            log.info("event=rematch_offered game=%s by=%s", g.id, by)
        return offer

    def accept(self, name: str, game_id: str) -> dict[str, Any]:
        """Offer a rematch (when none is open) or accept the open one, for ``name`` only."""
        g, people = self._finished(game_id, name)
        me = next(p for p in people if same_name(p, name))
        offer = self._open(g, me, people)
        if me not in offer.accepted:
            offer.accepted.append(me)
        self._check_remote(offer)
        self._start_when_all(g, offer)
        return offer.to_json()

    # ------------------------------------------------------------ players of other protocols
    def join_remote(self, g: LobbyGame, c: Candidate) -> bool:
        """A client of another protocol joins with finished game ``g``'s id as its code: its
        chair's acceptance when it shows that chair's ``client_key`` (it may offer the rematch);
        the join is held until the new game starts. Raises :class:`LobbyError` otherwise."""
        key = c.seat.client_key
        people = tuple(m.name for m in g.members if m.kind == "human" and m.remote is None)
        current = self.offers.get(g.id)
        taken: set[int] = set()  # chairs whose client joined the open offer already
        if current is not None and current.state == "open":
            taken = {chair for chair, r in current.remote.items() if r.joined is not None}
        chairs = [
            chair
            for chair, m in enumerate(g.members)
            if m.remote is not None and chair not in taken and key is not None and m.remote.seat.client_key == key
        ]
        if not chairs:
            raise LobbyError(f"game {g.id} is over: only a client that played a chair of it may join its rematch")
        try:
            offer = self._open(g, g.members[chairs[0]].name, people)
        except RequestError as e:
            raise LobbyError(f"{e}: game {g.id}") from None
        chair = offer.remote[chairs[0]]
        chair.joined = c
        log.info("event=rematch_joined game=%s protocol=%s name=%s", g.id, chair.protocol, chair.name)
        self._check_remote(offer)
        self._start_when_all(g, offer)
        return True

    def leave_remote(self, c: Candidate) -> bool:
        """A held join's connection closed before the new game started: its chair declines."""
        for offer in self.offers.values():
            for chair in offer.remote.values():
                if chair.joined is c:
                    chair.joined = None
                    if offer.state == "open":
                        self._cancel(offer, f"{chair.name} left", "left", {"name": chair.name})
                    return True
        return False

    def _check_remote(self, offer: Offer) -> None:
        """A chair whose client can no longer be asked (its key is gone) declines the open offer."""
        if offer.state != "open":
            return
        for chair in offer.remote.values():
            if chair.joined is None and chair.seat.client_key is None:
                args = {"name": chair.name, "protocol": chair.protocol}
                self._cancel(
                    offer, f"{chair.name} cannot be asked for a next game ({chair.protocol})", "unaskable", args
                )
                return

    def _start_when_all(self, g: LobbyGame, offer: Offer) -> None:
        if offer.state != "open":
            return
        if all(p in offer.accepted for p in offer.people) and all(r.joined for r in offer.remote.values()):
            self._start(g, offer)

    def decline(self, name: str, game_id: str) -> dict[str, Any]:
        _, people = self._finished(game_id, name)
        me = next(p for p in people if same_name(p, name))
        offer = self.offers.get(game_id)
        if offer is None or offer.state != "open":
            raise RequestError(409, "no rematch is open for this game", "no_rematch")
        self._cancel(offer, f"{me} declined", "declined", {"name": me})
        return offer.to_json()

    def _lapse(self, offer: Offer) -> None:
        if offer.state == "open":
            self._cancel(offer, f"not everyone accepted within {self.seconds:g} s", "lapsed", {"seconds": self.seconds})

    def _cancel(self, offer: Offer, reason: str, code: str, args: dict[str, Any]) -> None:
        offer.state, offer.reason = "cancelled", reason
        offer.reason_code, offer.reason_args = code, args
        if offer.timer is not None:
            offer.timer.cancel()
        for chair in offer.remote.values():  # the held joins are told, as for an expired game
            joined, chair.joined = chair.joined, None
            if joined is not None:
                try:
                    joined.seat.end_session(f"the rematch of game {offer.game_id} was cancelled: {reason}")
                except Exception:
                    log.exception("event=end_session_failed game=%s", offer.game_id)
        log.info("event=rematch_cancelled game=%s reason=%s", offer.game_id, reason)

    def _start(self, old: LobbyGame, offer: Offer) -> None:
        assert old.hosted is not None
        lobby = self.lobby
        seed = lobby.rng.getrandbits(62) if lobby.options.seed is not None else secrets.randbits(62)
        new_id = (
            str(uuid.UUID(int=lobby.rng.getrandbits(128), version=4))
            if lobby.options.seed is not None
            else str(uuid.uuid4())
        )
        g = LobbyGame(
            new_id,
            old.variant,
            seed,
            old.created_by,
            rotated(old.members),
            practice=old.practice,  # (a practice game's rematch is one too: unrated, its seed drawn)
            open_hands=old.open_hands,
            clock=old.clock,
        )
        # the players of other protocols sit as their held joins (their new sessions' names)
        for chair, r in offer.remote.items():
            assert r.joined is not None
            g.members[(chair + 1) % len(g.members)] = Member(
                r.joined.seat.name, r.joined.seat.kind.value, None, remote=r.joined
            )
        g.stream = GameStream(g.id)
        lobby.start_now(g, old.hosted.table.rules)
        offer.state, offer.new_game = "started", g.id
        if offer.timer is not None:
            offer.timer.cancel()
        log.info("event=rematch_started game=%s from=%s players=%s", g.id, old.id, [m.name for m in g.members])


def rematch_routes(lobby: TurboLobby) -> list[BaseRoute]:
    rematches = Rematches(lobby)
    lobby.rematches = rematches

    def identity() -> Identity:
        return lobby.identity

    async def get(request: Request, caller: Caller) -> Any:
        return rematches.state(caller.name, request.path_params["game_id"])

    def post(fn: Any) -> Any:
        async def handle(request: Request, caller: Caller) -> Any:
            game_id = field_str(await read_body(request), "id", max_len=100)
            assert game_id is not None
            return fn(caller.name, game_id)

        return handle

    return [
        Route("/lobby/rematch/{game_id}", endpoint(get, identity), methods=["GET"]),
        Route("/lobby/rematch", endpoint(post(rematches.accept), identity), methods=["POST"]),
        Route("/lobby/rematch_decline", endpoint(post(rematches.decline), identity), methods=["POST"]),
    ]


__all__ = ["REMATCH_SECONDS", "Offer", "Rematches", "RemoteChair", "rematch_routes", "remote_chairs", "rotated"]
