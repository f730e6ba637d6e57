"""The seed's game routes: ``GET /game/subscribe/<id>`` and the ``/game/*`` POSTs over any
:class:`GameHost` (find a game by id; who the caller is). The lobby is one host; a Trend node
hosting one table is another. :class:`HostedGame`: a running table with its players by name and
its stream; ``act`` submits an action for a seat and waits for the table's verdict.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from sse_starlette import EventSourceResponse
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from moonshot.core.actions import Action
from moonshot.core.refusals import REASON_CODES, Reason
from moonshot.http.endpoints import endpoint, read_body
from moonshot.http.identity import Caller, Identity
from moonshot.http.names import (
    same_name,
)
from moonshot.http.streams import PING_SECONDS, GameStream, stream_events
from moonshot.protocols.turbo.codec import (
    GAME_ACTIONS,
    Player,
    RequestError,
    action_from_request,
    field_str,
    parse_chat,
    parse_event_id,
)
from moonshot.runtime.limits import ClientGuard
from moonshot.runtime.table import (
    Table,
)

SUBMIT_TIMEOUT = 10.0  # seconds a POST waits for the table's verdict


class HostedGame:
    """A started game as the game routes see it: table, players by name, stream."""

    def __init__(
        self,
        game_id: str,
        table: Table,
        players: Sequence[Player],
        stream: GameStream,
        on_chat: Callable[[HostedGame], None] | None = None,
    ) -> None:
        self.id = game_id
        self.table = table
        self.players = tuple(players)
        self.stream = stream
        self.on_chat = on_chat

    def seat_of(self, name: str) -> int | None:
        for s, p in enumerate(self.players):
            if p.kind == "human" and same_name(p.name, name):
                return s
        return None

    async def act(self, seat: int, action: Action) -> str | None:
        """Submit ``action`` for ``seat``; None once applied, else the reason it was refused."""
        reply: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self.table.submit(seat, action, None, reply)
        try:
            return await asyncio.wait_for(reply, SUBMIT_TIMEOUT)
        except TimeoutError:
            return "the table did not answer in time"

    def chat(self, name: str, message: str) -> None:
        self.stream.chat(name, message)
        if self.on_chat is not None:
            self.on_chat(self)


def refused(reason: str) -> RequestError:
    """A refused action as a 409: the engine's refusals (a :class:`Reason`) as ``illegal.<code>``
    with the code's params, so the web app says them in its language; any other reason (the table
    ended, no answer in time) as ``action_refused`` with the English."""
    if isinstance(reason, Reason) and reason.code in REASON_CODES:
        return RequestError(409, reason, f"illegal.{reason.code}", reason.params)
    return RequestError(409, reason, "action_refused", {"reason": reason})


class GameHost(Protocol):
    """What the game routes need from whoever hosts games (the Turbo lobby, a Trend node)."""

    @property
    def identity(self) -> Identity: ...

    def find_stream(self, game_id: str) -> GameStream | None:
        """The stream of a game, started or still waiting for players (None: no such game)."""

    def find_game(self, game_id: str) -> HostedGame | None:
        """A started game (None: none by that id has started)."""


def game_routes(host: GameHost) -> list[BaseRoute]:
    """``GET /game/subscribe/<id>`` and ``POST /game/{pass,charge,expose,play,claim,...,chat}``."""

    def identity() -> Identity:
        return host.identity

    async def subscribe(request: Request, caller: Caller) -> Response:
        game_id = request.path_params["game_id"]
        stream = host.find_stream(game_id)
        if stream is None:
            raise RequestError(404, f"no game {game_id!r}", "no_game", {"id": game_id})
        after = parse_event_id(request.headers.get("last-event-id"))
        sub = stream.subscribe(caller.name, after)
        return EventSourceResponse(stream_events(stream, sub), ping=PING_SECONDS, headers={"Cache-Control": "no-store"})

    def seated(body: dict[str, Any], caller: Caller) -> tuple[HostedGame, int]:
        game_id = field_str(body, "id", max_len=100)
        assert game_id is not None
        game = host.find_game(game_id)
        if game is None:
            if host.find_stream(game_id) is not None:
                raise RequestError(409, "the game has not started", "game_not_started")
            raise RequestError(404, f"no game {game_id!r}", "no_game", {"id": game_id})
        seat = game.seat_of(caller.name)
        if seat is None:
            raise RequestError(403, f"{caller.name} has no seat in this game", "no_seat", {"name": caller.name})
        return game, seat

    def action_handler(kind: str) -> Callable[[Request, Caller], Awaitable[Any]]:
        async def handle(request: Request, caller: Caller) -> Any:
            body = await read_body(request)
            game, seat = seated(body, caller)
            action = action_from_request(kind, seat, body)
            if game.table.done.done():
                raise RequestError(409, "the game is over", "game_over")
            reason = await game.act(seat, action)
            if reason is not None:
                raise refused(reason)
            return None

        return handle

    async def back(request: Request, caller: Caller) -> Any:
        """``POST /game/back``: the caller takes their seat back from the table's bot (after
        their clock handed it over); only a seated person, for their own seat."""
        body = await read_body(request)
        game, seat = seated(body, caller)
        if game.table.done.done():
            raise RequestError(409, "the game is over", "game_over")
        game.table.back(seat)
        return None

    async def chat(request: Request, caller: Caller) -> Any:
        body = await read_body(request)
        game_id = field_str(body, "id", max_len=100)
        assert game_id is not None
        message = parse_chat(body)
        stream = host.find_stream(game_id)
        if stream is None:
            raise RequestError(404, f"no game {game_id!r}", "no_game", {"id": game_id})
        guard: ClientGuard | None = getattr(host, "guard", None)
        if guard is not None and len(stream.chat_log) >= guard.limits.chat_lines_per_game:
            lines = guard.limits.chat_lines_per_game
            raise RequestError(429, f"this game's chat is full ({lines} lines)", "chat_full", {"lines": lines})
        game = host.find_game(game_id)
        if game is not None:
            game.chat(caller.name, message)
        else:
            stream.chat(caller.name, message)
        return None

    routes: list[BaseRoute] = [
        Route("/game/subscribe/{game_id}", endpoint(subscribe, identity), methods=["GET"]),
        Route("/game/chat", endpoint(chat, identity), methods=["POST"]),
        Route("/game/back", endpoint(back, identity), methods=["POST"]),
    ]
    for kind in GAME_ACTIONS:
        routes.append(Route(f"/game/{kind}", endpoint(action_handler(kind), identity), methods=["POST"]))
    return routes


__all__ = ["SUBMIT_TIMEOUT", "GameHost", "HostedGame", "game_routes"]
