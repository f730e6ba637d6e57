"""Rematch: after a web game ends, the same people and bots play again with every seat moved one
chair clockwise, once each person at the table has accepted.

``POST /lobby/rematch {"id"}`` offers a rematch of a finished game, or accepts the offer that is
open; ``POST /lobby/rematch_decline {"id"}`` declines it, which cancels it for everyone; ``GET
/lobby/rematch/{id}`` says where the offer stands (who accepted, who is still asked, the seconds
left, the new game once it starts). Only a person who sat at the table may do any of them, and
each accepts only for their own name: nobody is put in a game they did not accept. The offer is
cancelled when nobody answers within :data:`REMATCH_SECONDS`. The new game has the same variant
(Turbo: the same charging rules), the same options and clock, and is rated when the first was.
Players who came over another protocol (a mixed table) have their own ways to a next game (a
Sessions client asks for one; Trend's node plays matches), so a mixed table gets no rematch here.
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

log = logging.getLogger("moonshot.turbo")

REMATCH_SECONDS = 60.0  # an offer nobody finishes answering is cancelled after this long


@dataclass
class Offer:
    """One rematch offer of a finished game."""

    game_id: str
    by: str
    people: tuple[str, ...]  # every person of the table, each of whom must accept
    due: float  # monotonic time the offer lapses
    accepted: list[str] = field(default_factory=list)
    state: str = "open"  # "open" | "cancelled" | "started"
    reason: str = ""
    reason_code: str = ""  # the reason for the web app's catalogue: "declined" {name}, "lapsed" {seconds}
    reason_args: dict[str, Any] = field(default_factory=dict)
    new_game: str | None = None
    timer: asyncio.TimerHandle | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "by": self.by,
            "people": list(self.people),
            "accepted": list(self.accepted),
            "waiting": [p for p in self.people if p not in self.accepted],
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
        if any(m.remote is not None for m in g.members):
            raise RequestError(
                409,
                "a mixed table has no rematch: its Sessions and Trend players ask for their next game",
                "mixed_table_rematch",
            )
        return g, people

    def state(self, name: str, game_id: str) -> dict[str, Any]:
        self._finished(game_id, name)
        offer = self.offers.get(game_id)
        return offer.to_json() if offer is not None else {"state": "none"}

    def accept(self, name: str, game_id: str) -> dict[str, Any]:
        """Offer a rematch (when none is open) or accept the open one, for ``name`` only."""
        g, people = self._finished(game_id, name)
        me = next(p for p in people if same_name(p, name))
        offer = self.offers.get(game_id)
        if offer is not None and offer.state == "started":
            raise RequestError(
                409, f"the rematch has started: game {offer.new_game}", "rematch_started", {"game": offer.new_game}
            )
        if offer is None or offer.state == "cancelled":
            offer = Offer(game_id, me, people, time.monotonic() + self.seconds)
            offer.timer = asyncio.get_running_loop().call_later(self.seconds, self._lapse, offer)
            self.offers[game_id] = offer
            log.info("event=rematch_offered game=%s by=%s", game_id, me)
        if me not in offer.accepted:
            offer.accepted.append(me)
        if all(p in offer.accepted for p in people):
            self._start(g, offer)
        return offer.to_json()

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


__all__ = ["REMATCH_SECONDS", "Offer", "Rematches", "rematch_routes", "rotated"]
