"""Turbo Hearts over HTTP + server-sent events: the lobby, the game routes and the web app's files.

The pieces, from the inside out:

* :class:`GameStream`: one game's Turbo event stream. It watches the table as a spectator,
  translates the unredacted events once (:class:`~moonshot.protocols.turbo.codec.TurboTranslator`)
  and fans them out to every SSE subscriber redacted for that subscriber's seat. Game chat goes
  into the same stream.
* :class:`HostedGame`: a running table with its players by name and its stream; ``act`` submits
  an action for a seat and waits for the table's verdict (``Table.submit`` with a reply).
* :func:`game_routes`: ``/game/subscribe/<id>`` and the ``/game/*`` POSTs over any
  :class:`GameHost` (find a game by id; who the caller is). The Turbo lobby is one host; a Trend
  node hosting one table is another.
* :class:`TurboLobby`: the seed's lobby (``/lobby/*``): games proposed, joined, filled with bots,
  started with the charging rules drawn from the proposals; lobby state and game chat kept in
  the store so a restart loses nothing.
* :class:`Identity`: the ``name`` cookie, bound to one browser by a signed HttpOnly session cookie
  (``--open-names``: the seed's trust-everyone behaviour).
* :func:`build_app`: the Starlette app (lobby, game, moonshot's JSON extensions under ``/api``,
  the web app's pages and ``/static``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import json
import logging
import random
import secrets
import time
import urllib.parse
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from itsdangerous import BadSignature, URLSafeSerializer
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from moonshot.actions import Action, action_to_dict
from moonshot.bots.base import Bot
from moonshot.engine import DealSpec, Game
from moonshot.events import SPECTATOR
from moonshot.fairness import DealSeal
from moonshot.protocols.turbo import upkeep
from moonshot.protocols.turbo.codec import (
    CHARGING_NAMES,
    GAME_ACTIONS,
    Message,
    Player,
    RequestError,
    TranslationError,
    TurboTranslator,
    action_from_request,
    field_int,
    field_str,
    parse_charging,
    parse_chat,
    parse_event_id,
    parse_json,
    translate_log,
)
from moonshot.protocols.turbo.guard import OriginGuard
from moonshot.protocols.turbo.upkeep import LobbyEvent
from moonshot.rules import Rules
from moonshot.server.limits import ClientGuard, Hold
from moonshot.server.lobby import Candidate, LobbyError
from moonshot.server.mixed import refusal
from moonshot.server.names import (
    BOT_SUFFIX,
    NAME_PREFIX,
    NameRecord,
    NameRefused,
    digest,
    display_name,
    name_key,
    new_recovery_code,
    same_name,
)
from moonshot.server.table import (
    BotSeat,
    DecisionRequest,
    OnBadAnswer,
    OnDisconnect,
    Recorder,
    Seat,
    SeatKind,
    Table,
    TableEvent,
    TableNotice,
    TablePolicy,
)
from moonshot.variants import TURBO_VARIANTS, find_variant

log = logging.getLogger("moonshot.turbo")

DEFAULT_HTTP_PORT = 7380
MAX_BODY = 64 * 1024
PING_SECONDS = 15  # SSE keep-alive comments, so proxies and browsers keep idle streams open
CLOSE_AFTER_COMPLETE = 1.0  # seconds a stream stays open after game_complete
SUBMIT_TIMEOUT = 10.0  # seconds a POST waits for the table's verdict
NAME_COOKIE = "name"
LIMIT_RETRY_AFTER = 10  # seconds: a 429 for a share held (open games, chat lines) frees as they end
SESSION_COOKIE = "moonshot_session"
RECOVERY_HEADER = "Moonshot-Recovery-Code"  # a name's recovery code, on the answer that bound it
KEEP_FINISHED = 200  # finished games kept in memory for late subscribers
GAME_VARIANTS = ("turbo", "standard", "omnibus", "trend", "kierki")
BOT_NAMES = (
    "ada", "basil", "cleo", "dora", "emil", "fern", "gus", "hana", "ivo", "juno", "kit", "lola",
    "milo", "nora", "otto", "pia", "quinn", "rosa", "sol", "tova", "uma", "vic", "wren", "zed",
)  # fmt: skip


def error(status: int, message: str) -> JSONResponse:
    # a refusal for asking too much (429) says when to ask again
    headers = {"Retry-After": str(LIMIT_RETRY_AFTER)} if status == 429 else None
    return JSONResponse({"error": message}, status_code=status, headers=headers)


# ---------------------------------------------------------------- identity
@dataclass
class Caller:
    name: str
    new_session: str | None = None  # a session cookie to set on the response
    recovery: str | None = None  # the name's new recovery code, shown once (a binding made now)


class NameTaken(RequestError):
    """A name bound to another browser (403); ``key``: the name as compared."""

    def __init__(self, key: str, message: str, held: bool = False) -> None:
        super().__init__(403, message)
        self.key = key
        self.held = held  # in use here: no other process's word moves it


class Identity:
    """Who a request comes from: the ``name`` cookie, as in the seed.

    Names are compared by :func:`~moonshot.server.names.name_key` (NFKC, casefolded). Unless
    ``open_names``, the first request under a name also gets a signed HttpOnly session cookie
    binding the name to that browser, and the name's recovery code (``Caller.recovery``, shown
    once). The identity keeps a :class:`~moonshot.server.names.NameRecord` for each bound name
    (handed to ``on_bind`` so the server keeps it). A request under a bound name without the
    cookie of its binding is refused with 403 while the name is *held* (``held``: in use) or
    once it has played a rated game (the record's ``rated``); otherwise the new browser takes the
    name over. ``reload`` (async: the store's record of a name) is asked before refusing, so a
    binding released or moved by another process counts at once. The signing key comes from the
    caller (persisted by the server), so bindings survive a restart."""

    def __init__(
        self,
        secret: str,
        open_names: bool = False,
        held: Callable[[str], bool] | None = None,
        on_bind: Callable[[str, dict[str, Any]], None] | None = None,
        reload: Callable[[str], Awaitable[Any]] | None = None,
    ) -> None:
        self.open_names = open_names
        self.held: Callable[[str], bool] = held or (lambda name: False)
        self.on_bind = on_bind
        self.reload = reload
        self._signer = URLSafeSerializer(secret, salt="moonshot.turbo.name")
        self._bound: dict[str, NameRecord] = {}  # name key -> its binding

    def load_bindings(self, bound: dict[str, Any]) -> None:
        """Bindings kept by an earlier run or told by another process (name -> record, or the
        nonce's digest as kept before records)."""
        for name, value in bound.items():
            key = name_key(name)
            rec = NameRecord.from_json(key, value)
            if rec is not None:
                self._bound[key] = rec

    def record(self, name: str) -> NameRecord | None:
        return self._bound.get(name_key(name))

    def forget(self, name: str) -> None:
        self._bound.pop(name_key(name), None)

    def _store(self, key: str, rec: NameRecord) -> None:
        self._bound[key] = rec
        if self.on_bind is not None:
            self.on_bind(key, rec.to_json())

    def mark_rated(self, name: str) -> None:
        """``name`` has played a rated game: from now on only its recovery code moves it."""
        key = name_key(name)
        rec = self._bound.get(key)
        if rec is not None and not rec.rated:
            rec.rated = True
            self._store(key, rec)

    def bind(self, name: str, nonce: str | None = None) -> Caller:
        """A new binding of ``name`` (shown as given) to whoever gets the returned cookie (or, with
        ``nonce``, to the browser whose cookie carries it), with a new recovery code; the name's
        earlier binding and code stop working."""
        key = name_key(name)
        old = self._bound.get(key)
        cookie = None
        if nonce is None:
            nonce = secrets.token_urlsafe(24)
            cookie = self._signer.dumps([key, nonce])
        code = new_recovery_code()
        rec = NameRecord(name, digest(nonce), digest(code), old.rated if old is not None else False)
        self._store(key, rec)
        return Caller(name, cookie, code)

    def session_for(self, name: str) -> str:
        """A new binding of ``name`` to whoever gets this cookie value."""
        session = self.bind(name).new_session
        assert session is not None
        return session

    def _nonce(self, token: str, key: str) -> str | None:
        try:
            value = self._signer.loads(token)
        except BadSignature:
            return None
        if (
            isinstance(value, list)
            and len(value) == 2
            and isinstance(value[0], str)
            and isinstance(value[1], str)
            and name_key(value[0]) == key
        ):
            return value[1]
        return None

    @staticmethod
    def display(request: Request) -> str:
        """The name a request's cookie gives, as shown (400/401 when it is not a name)."""
        raw = request.cookies.get(NAME_COOKIE, "")
        if not raw.strip():
            raise RequestError(401, "no name: set the 'name' cookie")
        try:
            # the web app writes the cookie with encodeURIComponent; a program may send UTF-8
            # bytes, which arrive here as Latin-1
            with contextlib.suppress(UnicodeError):
                raw = raw.encode("latin-1").decode("utf-8")
            return display_name(urllib.parse.unquote(raw, errors="strict"))
        except UnicodeError:
            raise RequestError(400, "the name cookie is not UTF-8") from None
        except NameRefused as e:
            raise RequestError(400, str(e)) from None

    def caller(self, request: Request) -> Caller:
        name = self.display(request)
        if self.open_names:
            return Caller(name)
        key = name_key(name)
        token = request.cookies.get(SESSION_COOKIE)
        nonce = self._nonce(token, key) if token else None
        rec = self._bound.get(key)
        if rec is None:  # a free name (with the browser's own cookie when this server signed one)
            return self.bind(name, nonce)
        if nonce is not None and hmac.compare_digest(rec.session, digest(nonce)):
            return Caller(rec.name)  # the name as it was taken, however this request spells it
        if self.held(rec.name):
            raise NameTaken(key, f"the name {rec.name!r} is in use in another browser", held=True)
        if rec.rated:
            raise NameTaken(
                key,
                f"the name {rec.name!r} belongs to another browser (it has played rated games): "
                "move it here with its recovery code",
            )
        # nobody holds it and it was never rated: this browser takes it (with the cookie it has,
        # when that is one this server signed for the name: the same cookie on every process)
        return self.bind(name, nonce)

    async def resolve(self, request: Request) -> Caller:
        """:meth:`caller`, after asking ``reload`` about a rated name it would refuse (released
        or moved since this process last heard of it). A name in use here is refused whatever
        the store says."""
        try:
            return self.caller(request)
        except NameTaken as e:
            if self.reload is None or e.held:
                raise
            value = await self.reload(e.key)
            rec = NameRecord.from_json(e.key, value) if value is not None else None
            if rec is None:
                self._bound.pop(e.key, None)
            else:
                self._bound[e.key] = rec
            return self.caller(request)

    async def recover(self, name: str, code: str) -> Caller:
        """Move ``name`` to this browser with its recovery code (a new code replaces it)."""
        key = name_key(name)
        if self.reload is not None:
            value = await self.reload(key)
            rec = NameRecord.from_json(key, value) if value is not None else None
            if rec is not None:
                self._bound[key] = rec
        rec = self._bound.get(key)
        if rec is None:
            raise RequestError(404, f"no browser holds the name {name!r}: just use it")
        if not rec.code_matches(code):
            raise RequestError(403, f"that is not the recovery code of {rec.name!r}")
        return self.bind(rec.name)

    @staticmethod
    def finish(response: Response, caller: Caller | None) -> Response:
        if caller is not None and caller.new_session is not None:
            response.set_cookie(
                SESSION_COOKIE, caller.new_session, max_age=10 * 365 * 86400, httponly=True, samesite="strict"
            )
            if caller.recovery is not None:  # for programs; the web app reads it from /api/me
                response.headers[RECOVERY_HEADER] = caller.recovery
        return response


async def read_body(request: Request) -> dict[str, Any]:
    """The JSON object a POST carries: 413 over 64 KB, 400 when it is not a JSON object."""
    length = request.headers.get("content-length")
    if length is not None:
        try:
            size_given = int(length)
        except ValueError as e:
            raise RequestError(400, "a bad Content-Length") from e
        if size_given > MAX_BODY:
            raise RequestError(413, f"the body is over {MAX_BODY // 1024} KB")
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise RequestError(413, f"the body is over {MAX_BODY // 1024} KB")
        chunks.append(chunk)
    return parse_json(b"".join(chunks))


def endpoint(
    handler: Callable[[Request, Caller], Awaitable[Any]], identity: Callable[[], Identity], anonymous: bool = False
) -> Callable[[Request], Awaitable[Response]]:
    """A route: identify the caller, run the handler, answer JSON; a RequestError is the client's."""

    async def run(request: Request) -> Response:
        caller: Caller | None = None
        try:
            caller = None if anonymous else await identity().resolve(request)
            result = await handler(request, caller)  # type: ignore[arg-type]
        except RequestError as e:
            log.info(
                "event=http_refused path=%s status=%d name=%s reason=%s",
                request.url.path,
                e.status,
                json.dumps(caller.name if caller is not None else None),
                json.dumps(str(e)),
            )
            return Identity.finish(error(e.status, str(e)), caller if e.status < 500 else None)
        except Exception:
            log.exception("event=http_error path=%s", request.url.path)
            return error(500, "internal error (logged on the server)")
        response = result if isinstance(result, Response) else JSONResponse(result)
        return Identity.finish(response, caller)

    return run


# ---------------------------------------------------------------- streams
class Subscriber:
    """One open SSE stream: messages waiting to be sent, as this viewer sees them."""

    __slots__ = ("name", "queue", "seat")

    def __init__(self, name: str, seat: int | None) -> None:
        self.name = name
        # a chair 0-3; SPECTATOR: not seated (only what is public); None: everything (a
        # finished game, an open-hands table, a server run with --open-spectators)
        self.seat = seat
        self.queue: asyncio.Queue[Message | None] = asyncio.Queue()


class GameStream:
    """One game's Turbo stream: the translated events and chat, and their subscribers."""

    def __init__(self, game_id: str) -> None:
        self.game_id = game_id
        self.translator: TurboTranslator | None = None
        self.messages: list[Message] = []
        self.subscribers: set[Subscriber] = set()
        self.complete = False
        self.closed = False
        # spectators see every hand live: an unrated open-hands table, or --open-spectators
        self.open = False
        # True: the hands stay hidden from spectators after the game too (a tournament's game)
        self.sealed = False
        self.chat_log: list[dict[str, Any]] = []  # {"name","message","version","sub"}: persisted

    def start(self, translator: TurboTranslator) -> None:
        """The game has its chairs: seat whoever subscribed while it was open, by name, so a
        player who was watching early gets the redacted stream from the first deal on."""
        self.translator = translator
        for sub in self.subscribers:
            sub.seat = self.viewer_of(sub.name)

    def viewer_of(self, name: str) -> int | None:
        """How ``name`` sees the stream: its chair, else a spectator's view, which is the whole
        game once it is over (or on an open table)."""
        seat = self.seat_of(name)
        if seat is not None:
            return seat
        return None if self.open or (self.complete and not self.sealed) else SPECTATOR

    def seat_of(self, name: str) -> int | None:
        """The chair of the person called ``name`` (None: not seated, or not started)."""
        if self.translator is None:
            return None
        for s, p in enumerate(self.translator.players):
            if p.kind == "human" and same_name(p.name, name):
                return s
        return None

    @property
    def version(self) -> int:
        return self.translator.next_version - 1 if self.translator is not None else 0

    # Spectator protocol: the table calls this in its own task
    def on_events(self, table: Table, events: Sequence[TableEvent]) -> None:
        if self.translator is None or self.closed:
            return
        try:
            new = self.translator.feed((te.version, te.event) for te in events)
        except TranslationError:
            # the game goes on; its streams end, and a new subscription says why in the log
            log.exception("event=stream_failed game=%s", self.game_id)
            self.close()
            return
        self._publish(new)

    def on_notice(self, table: Table, notice: TableNotice) -> None:
        """A table pause or resume: a chat line from the server in the game's stream (not stored)."""
        if not self.closed:
            self._publish([self.add_chat("moonshot", notice.text, keep=False)])

    def _merge(self, msgs: Sequence[Message]) -> None:
        """Put restored messages and chat in stream order (chat was stored with its position)."""
        self.messages.extend(msgs)
        self.messages.sort(key=lambda m: m.position)
        if any(m.data["type"] == "game_complete" for m in msgs):
            self.complete = True

    def _publish(self, new: Sequence[Message]) -> None:
        if not new:
            return
        if self.messages and new[0].position < self.messages[-1].position:
            self._merge(new)  # a restored game's replay, around its stored chat
        else:
            self.messages.extend(new)
        for sub in self.subscribers:
            for m in new:
                sub.queue.put_nowait(m)
        if not self.complete and any(m.data["type"] == "game_complete" for m in new):
            self.complete = True
            asyncio.get_running_loop().call_later(CLOSE_AFTER_COMPLETE, self.close)

    def add_chat(self, name: str, message: str, position: tuple[int, int] | None = None, keep: bool = True) -> Message:
        """A chat message at ``position`` (default: after the last message); ``keep=False``: a
        server notice, not kept in the game's stored chat."""
        if position is None:
            version = self.version
            last = self.messages[-1] if self.messages else None
            sub = last.sub + 1 if last is not None and last.version == version else 0
            if version == 0 and last is None:
                sub = 1  # "0" itself is never an id: a fresh stream starts after it
            position = (version, sub)
        m = Message(position[0], position[1], {"type": "chat", "name": name, "message": message})
        if keep:
            self.chat_log.append({"name": name, "message": message, "version": m.version, "sub": m.sub})
        return m

    def chat(self, name: str, message: str) -> Message:
        m = self.add_chat(name, message)
        self._publish([m])
        return m

    def restore_chat(self, entries: Sequence[dict[str, Any]]) -> None:
        """Chat kept in the store, each back at its stream position."""
        restored = []
        for c in entries:
            with contextlib.suppress(KeyError, TypeError, ValueError):
                position = (int(c["version"]), int(c["sub"]))
                restored.append(self.add_chat(str(c["name"]), str(c["message"]), position))
        self._merge(restored)

    def subscribe(self, name: str, after: tuple[int, int] | None) -> Subscriber:
        sub = Subscriber(name, self.viewer_of(name))
        for m in self.messages:
            if after is None or m.position > after:
                sub.queue.put_nowait(m)
        sub.queue.put_nowait(None if self.closed else _END_REPLAY)
        if self.closed:
            return sub
        self.subscribers.add(sub)
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        self.subscribers.discard(sub)

    def close(self) -> None:
        """End every stream (the game is over, or the server stops)."""
        self.closed = True
        for sub in self.subscribers:
            sub.queue.put_nowait(None)
        self.subscribers.clear()


_END_REPLAY = Message(0, 0, {"type": "end_replay"})


END_REPLAY_FRAME = b'data: {"type":"end_replay"}\r\n\r\n'  # no id: it does not move Last-Event-ID


async def stream_events(stream: GameStream, sub: Subscriber) -> AsyncIterator[bytes]:
    """A subscriber's SSE body. Whatever is queued when the stream wakes goes out as one write
    (a replay, or a play with its play_status), each frame encoded once for all its viewers."""
    replaying = True
    try:
        while True:
            item = await sub.queue.get()
            parts: list[bytes] = []
            while True:
                if item is None:
                    if replaying:
                        parts.append(END_REPLAY_FRAME)
                    if parts:
                        yield b"".join(parts)
                    return
                if item is _END_REPLAY:
                    replaying = False
                    parts.append(END_REPLAY_FRAME)
                else:
                    frame = item.sse_frame(sub.seat)
                    if frame is not None:
                        parts.append(frame)
                if sub.queue.empty():
                    break
                item = sub.queue.get_nowait()
            if parts:
                yield b"".join(parts)
    finally:
        stream.unsubscribe(sub)


# ---------------------------------------------------------------- hosted games
class TurboSeat(Seat):
    """A person playing through HTTP. The table needs an occupant in the chair; what the person
    sees comes from the game's stream, and what they do comes back through ``POST /game/*``."""

    wants_view = False
    protocol = "http"
    patient = True  # at a mixed table (server deadlines for the programs) a person has none

    def __init__(self, name: str) -> None:
        self.name = name
        self.kind = SeatKind.HUMAN

    def on_events(self, table: Table, events: Sequence[TableEvent]) -> None:
        pass

    def on_request(self, table: Table, request: DecisionRequest) -> None:
        pass


PEOPLE_POLICY = TablePolicy(
    decision_timeout=None,
    on_timeout=OnBadAnswer.PAUSE,
    on_illegal=OnBadAnswer.PAUSE,
    on_disconnect=OnDisconnect.PAUSE,
)


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
            raise RequestError(404, f"no game {game_id!r}")
        after = parse_event_id(request.headers.get("last-event-id"))
        sub = stream.subscribe(caller.name, after)
        return EventSourceResponse(stream_events(stream, sub), ping=PING_SECONDS, headers={"Cache-Control": "no-store"})

    def seated(body: dict[str, Any], caller: Caller) -> tuple[HostedGame, int]:
        game_id = field_str(body, "id", max_len=100)
        assert game_id is not None
        game = host.find_game(game_id)
        if game is None:
            if host.find_stream(game_id) is not None:
                raise RequestError(409, "the game has not started")
            raise RequestError(404, f"no game {game_id!r}")
        seat = game.seat_of(caller.name)
        if seat is None:
            raise RequestError(403, f"{caller.name} has no seat in this game")
        return game, seat

    def action_handler(kind: str) -> Callable[[Request, Caller], Awaitable[Any]]:
        async def handle(request: Request, caller: Caller) -> Any:
            body = await read_body(request)
            game, seat = seated(body, caller)
            action = action_from_request(kind, seat, body)
            if game.table.done.done():
                raise RequestError(409, "the game is over")
            reason = await game.act(seat, action)
            if reason is not None:
                raise RequestError(409, reason)
            return None

        return handle

    async def chat(request: Request, caller: Caller) -> Any:
        body = await read_body(request)
        game_id = field_str(body, "id", max_len=100)
        assert game_id is not None
        message = parse_chat(body)
        stream = host.find_stream(game_id)
        if stream is None:
            raise RequestError(404, f"no game {game_id!r}")
        guard: ClientGuard | None = getattr(host, "guard", None)
        if guard is not None and len(stream.chat_log) >= guard.limits.chat_lines_per_game:
            raise RequestError(429, f"this game's chat is full ({guard.limits.chat_lines_per_game} lines)")
        game = host.find_game(game_id)
        if game is not None:
            game.chat(caller.name, message)
        else:
            stream.chat(caller.name, message)
        return None

    routes: list[BaseRoute] = [
        Route("/game/subscribe/{game_id}", endpoint(subscribe, identity), methods=["GET"]),
        Route("/game/chat", endpoint(chat, identity), methods=["POST"]),
    ]
    for kind in GAME_ACTIONS:
        routes.append(Route(f"/game/{kind}", endpoint(action_handler(kind), identity), methods=["POST"]))
    return routes


# ---------------------------------------------------------------- the lobby
@dataclass
class Member:
    name: str
    kind: str = "human"  # "human" | "bot"
    algorithm: str | None = None
    rules: str = "classic"  # the charging rules this member proposed
    # a player that came over another protocol (mixed tables): its seat and how to tell it
    # where it sits; never persisted (its connection does not outlive the process)
    remote: Candidate | None = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "algorithm": self.algorithm, "rules": self.rules}

    def player_json(self) -> dict[str, Any]:
        """The member as the lobby stream lists it: ``{type, name}`` (and a bot's ``algorithm``),
        the seed-era server's player objects, the shape of ``sit``'s players."""
        return lobby_player(self.name, self.kind, self.algorithm)


def lobby_player(name: str, kind: str = "human", algorithm: str | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"type": kind, "name": name}
    if kind == "bot" and algorithm:
        d["algorithm"] = algorithm
    return d


@dataclass
class LobbyGame:
    id: str
    variant: str  # "turbo" or another moonshot variant
    seed: int
    created_by: str
    members: list[Member] = field(default_factory=list)
    created_at: float = field(default_factory=time.time)
    stream: GameStream | None = None
    hosted: HostedGame | None = None
    finished: bool = False
    # the creator named the seed: a practice game of the creator and its own bots, unrated
    practice: bool = False
    # spectators see every hand while the game runs: unrated
    open_hands: bool = False
    # the creator's shares of open games (per name, per address): given back when it starts or goes
    holds: list[Hold] = field(default_factory=list, repr=False, compare=False)
    touched: float = 0.0  # wall time of the last join or leave (0: created_at); expiry counts from it

    def names(self) -> list[str]:
        return [m.name for m in self.members]

    def players(self) -> list[dict[str, Any]]:
        return [m.player_json() for m in self.members]

    @property
    def rated(self) -> bool:
        return not (self.practice or self.open_hands)

    def to_json(self) -> dict[str, Any]:
        """What the store keeps of an open game (the seed with it: never sent to a client)."""
        return {
            "id": self.id,
            "variant": self.variant,
            "seed": self.seed,
            "created_by": self.created_by,
            "members": [m.to_json() for m in self.members if m.remote is None],
            "created_at": self.created_at,
            "practice": self.practice,
            "open_hands": self.open_hands,
        }


@dataclass
class LobbyOptions:
    open_names: bool = False
    seed: int | None = None  # fixes game seeds (tests)
    # origins besides the server's own whose pages may send state-changing requests
    # (``--allowed-origin``: a deployment behind a proxy; see moonshot.protocols.turbo.guard)
    allowed_origins: tuple[str, ...] = ()
    # POST /lobby/new may give "seed": a practice game (only the creator's bots join it), unrated
    allow_seed: bool = True
    # anyone not seated sees every hand of a running game (Turbo's own trust model; --open-names
    # implies it); else spectators see only what is public until the game ends
    open_spectators: bool = False

    def __post_init__(self) -> None:
        if self.open_names:
            self.open_spectators = True


def _open_game(key: str, data: Any) -> LobbyGame | None:
    """An open game as the store keeps it (``turbo:open:<id>``); None, with a log line, when the
    value is not one."""
    if data is None:
        return None
    try:
        return LobbyGame(
            id=str(data["id"]),
            variant=str(data["variant"]),
            seed=int(data["seed"]),
            created_by=str(data["created_by"]),
            members=[Member(**m) for m in data["members"]],
            created_at=float(data["created_at"]),
            practice=bool(data.get("practice", False)),
            open_hands=bool(data.get("open_hands", False)),
        )
    except (KeyError, TypeError, ValueError):
        log.warning("event=bad_open_game key=%s", key)
        return None


class TurboLobby:
    """The Turbo lobby and every game it hosts (a :class:`GameHost`).

    The lobby's streams cost each subscriber O(1) per event: a new subscriber gets ``lobby_state``
    once, then only changes (``join_lobby``, ``new_game``, ...), each encoded once for all of them
    (:class:`LobbyEvent`), and a stream writes whatever is queued in one chunk. With a
    :class:`~moonshot.server.limits.ClientGuard` (``guard``), a name and an address hold a bounded
    number of open games, open games nobody joins expire after ``game_expiry`` seconds (gone from
    the store too), and a lobby stream under a name idle for ``lobby_idle`` seconds is ended.
    """

    def __init__(
        self,
        *,
        secret: str,
        make_bot: Callable[[str], Bot],
        bot_names: Sequence[str],
        recorder: Recorder | None = None,
        store: Any = None,
        options: LobbyOptions | None = None,
        deals_for: Callable[[LobbyGame], Sequence[DealSpec] | None] | None = None,
        track: Callable[[Table], object] | None = None,
        mixed_policy: TablePolicy | None = None,
    ) -> None:
        self.options = options or LobbyOptions()
        # a table with players from other protocols: their deadlines and disconnects follow
        # the server's policy; the people in browsers (patient seats) keep no deadline
        self.mixed_policy = mixed_policy or TablePolicy()
        self._identity = Identity(secret, self.options.open_names, self.holds, self._bound, self._stored_name)
        self.make_bot = make_bot
        self.bot_names = list(bot_names)
        self.recorder = recorder
        self.store = store
        self.deals_for = deals_for  # tests: stacked deals for a game
        self.track: Callable[[Table], object] = track or Table.start
        self.games: dict[str, LobbyGame] = {}
        self.subscribers: dict[str, list[asyncio.Queue[dict[str, Any] | None]]] = {}
        self.rng = random.Random(self.options.seed)
        self.finished = 0
        self.tournaments: Any = None  # the server's TournamentHost (the /api/tournaments routes)
        # the other server processes of a cluster (moonshot.protocols.turbo.peers.HttpPeers): lobby
        # events and name bindings go to them, games started here enter the cluster's directory
        self.peers: Any = None
        self._marking: set[asyncio.Task[None]] = set()
        self.guard: ClientGuard | None = None  # per-client shares (moonshot serve sets it)
        self.seen: dict[str, float] = {}  # name -> monotonic time of its last lobby request
        self.expired = 0  # open games expired
        self._sweeper: asyncio.Task[None] | None = None

    def _bound(self, key: str, record: dict[str, Any]) -> None:
        self._put(NAME_PREFIX + key, record)
        if self.peers is not None:
            self.peers.bound(key, record)

    async def _stored_name(self, key: str) -> Any:
        """The store's binding of a name (None: none, or no store)."""
        if self.store is None:
            return None
        await self.flush()  # this process's own writes first
        return await self.store.get_value(NAME_PREFIX + key)

    @property
    def identity(self) -> Identity:
        return self._identity

    # ------------------------------------------------------------ GameHost
    def find_stream(self, game_id: str) -> GameStream | None:
        g = self.games.get(game_id)
        return g.stream if g is not None else None

    def find_game(self, game_id: str) -> HostedGame | None:
        g = self.games.get(game_id)
        return g.hosted if g is not None else None

    def holds(self, name: str) -> bool:
        """A name is held while it has a lobby stream open or sits (as a person) in an open or
        running game: then only the browser that holds its session cookie may use it."""
        key = name_key(name)
        if any(qs and name_key(n) == key for n, qs in self.subscribers.items()):
            return True
        return any(
            not g.finished and any(m.kind == "human" and name_key(m.name) == key for m in g.members)
            for g in self.games.values()
        )

    # ------------------------------------------------------------ lobby events
    def broadcast(self, event: dict[str, Any], skip: str | None = None, local: bool = False) -> None:
        """To every lobby stream here and (unless ``local``) on the cluster's other processes."""
        if self.peers is not None and not local:
            self.peers.broadcast(event)
        event = event if isinstance(event, LobbyEvent) else LobbyEvent(event)
        for name, queues in self.subscribers.items():
            if name == skip:
                continue
            for q in queues:
                q.put_nowait(event)

    def lobby_state(self) -> dict[str, Any]:
        return LobbyEvent(
            {
                "type": "lobby_state",
                "subscribers": sorted(n for n, qs in self.subscribers.items() if qs),
                "games": {
                    **(self.peers.games() if self.peers is not None else {}),
                    **{g.id: g.players() for g in self.games.values() if not g.finished},
                },
            }
        )

    def subscribe_lobby(self, name: str) -> asyncio.Queue[dict[str, Any] | None]:
        q: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.seen[name] = time.monotonic()
        first = not self.subscribers.get(name)
        self.subscribers.setdefault(name, []).append(q)
        if first:
            self.broadcast({"type": "join_lobby", "player": name, "name": name}, skip=name)
        q.put_nowait(self.lobby_state())
        return q

    def unsubscribe_lobby(self, name: str, q: asyncio.Queue[dict[str, Any] | None]) -> None:
        queues = self.subscribers.get(name, [])
        if q in queues:
            queues.remove(q)
        if not queues:
            self.subscribers.pop(name, None)
            self.seen.pop(name, None)
            self.broadcast({"type": "leave_lobby", "player": name, "name": name})

    # ------------------------------------------------------------ expiry (moonshot.protocols.turbo.upkeep)
    def start_sweeper(self) -> None:
        """Expire open games and idle lobby streams now and then (with a ``guard``)."""
        if self.guard is not None and self._sweeper is None:
            self._sweeper = asyncio.get_running_loop().create_task(upkeep.sweep_forever(self), name="lobby-sweeper")

    def sweep(self, wall: float, mono: float) -> None:
        upkeep.sweep(self, wall, mono)

    def close(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
        for queues in self.subscribers.values():
            for q in queues:
                q.put_nowait(None)
        for g in self.games.values():
            if g.stream is not None:
                g.stream.close()

    # ------------------------------------------------------------ persistence
    # Writes go through the store's single writer (the recorder's queue), in order with the
    # games' rows: never two SQLite transactions at once, and a request never waits for the disk.
    def _put(self, key: str, value: Any) -> None:
        if self.recorder is not None and hasattr(self.recorder, "put_value"):
            self.recorder.put_value(key, value)

    def _delete(self, key: str) -> None:
        if self.recorder is not None and hasattr(self.recorder, "delete_value"):
            self.recorder.delete_value(key)

    def _save_open(self, g: LobbyGame) -> None:
        self._put(f"turbo:open:{g.id}", g.to_json())

    def _drop_open(self, g: LobbyGame) -> None:
        for h in g.holds:  # started or gone: no longer one of its creator's open games
            h.release()
        self._delete(f"turbo:open:{g.id}")
        if self.peers is not None and g.id not in self.games:
            self.peers.dropped(g.id)  # gone (not started): no process hosts it any more

    def _save_chat(self, hosted: HostedGame) -> None:
        self._put(f"turbo:chat:{hosted.id}", hosted.stream.chat_log)

    async def flush(self) -> None:
        """Wait until everything queued for the store is written."""
        flush = getattr(self.recorder, "flush", None)
        if flush is not None:
            await flush()

    async def load_open(self, claim: Callable[[str], Awaitable[bool]] | None = None) -> None:
        """Open games (not yet four players) kept in the store by an earlier run (in a cluster,
        those that ``claim`` gives this process: no other live process holds them)."""
        if self.store is None:
            return
        await self.load_names()
        for key, data in (await self.store.values("turbo:open:")).items():
            g = _open_game(key, data)
            if g is None or (claim is not None and not await claim(g.id)):
                continue
            expiry = self.guard.limits.game_expiry if self.guard is not None else 0.0
            if expiry > 0 and time.time() - g.created_at > expiry:
                self._delete(key)  # expired while the server was down: it does not come back
                log.info("event=open_game_expired game=%s players=%d at=start", g.id, len(g.members))
                continue
            g.stream = GameStream(g.id)
            self.games[g.id] = g

    async def load_names(self) -> None:
        """The name bindings kept in the store. Bindings kept under a name as typed (before names
        were compared casefolded) move to the name's key, and names that have played rated
        games (the ``ratings`` table) are marked so."""
        if self.store is None:
            return
        kept = await self.store.values(NAME_PREFIX)
        self._identity.load_bindings({k.removeprefix(NAME_PREFIX): v for k, v in kept.items()})
        rated = await self.store.rated_people()
        for k in kept:
            key = k.removeprefix(NAME_PREFIX)
            rec = self._identity.record(key)
            if rec is None:
                continue
            if name_key(rec.name) in rated and not rec.rated:
                self._identity.mark_rated(rec.name)
            elif key != name_key(key) or not isinstance(kept[k], dict):
                self._bound(name_key(key), rec.to_json())
            if key != name_key(key):
                self._delete(k)

    def _rated_later(self, table: Table, people: list[str]) -> None:
        """Once a finished game is rated in the store, its people's names stay with their browsers."""
        if self.store is None or not people or self._identity.open_names:
            return
        keys = {name_key(n) for n in people}

        async def mark() -> None:
            try:
                await self.flush()
                for name in await self.store.rated_in(table.id):
                    if name_key(name) in keys:
                        self._identity.mark_rated(name)
            except Exception:  # the store went away (shutdown): the next start reads the ratings
                log.warning("event=rated_names_unknown game=%s", table.id)

        task = asyncio.get_running_loop().create_task(mark())
        self._marking.add(task)
        task.add_done_callback(self._marking.discard)

    async def adopt_open(self, game_id: str) -> bool:
        """An open game another process held (it died): from the store into this lobby. False
        when the store does not have it (never written, or started or gone since)."""
        if self.store is None or game_id in self.games:
            return False
        g = _open_game(game_id, await self.store.get_value(f"turbo:open:{game_id}"))
        if g is None or g.id != game_id:
            return False
        g.stream = GameStream(g.id)
        self.games[g.id] = g
        log.info("event=open_game_adopted game=%s players=%d", g.id, len(g.members))
        return True

    async def restore_running(
        self,
        rec: Any,
        restored_table: Callable[..., Table],
        chairs: dict[int, Seat | None] | None = None,
        policy: TablePolicy | None = None,
    ) -> Table | None:
        """Rebuild a running Turbo game from its store record: people get their chairs back by
        name (their next request finds them), bots are re-created by algorithm. ``chairs``: the
        seats of other protocols' players that a cluster's adopter keeps (None: empty until the
        player resumes), shown as programs of their protocol as before; ``policy`` replaces the
        people's (no deadlines) for such a mixed game."""
        chairs = chairs or {}
        algorithms = json.loads(rec.meta.get("algorithms", "[]") or "[]")
        members = []
        for s, p in enumerate(rec.players):
            name = str(p.get("name", ""))
            if s in chairs:
                members.append(Member(name, "bot", str(p.get("protocol", "program"))))
                continue
            kind = str(p.get("kind", "human"))
            alg = algorithms[s] if s < len(algorithms) else None
            if p.get("protocol") in ("sessions", "trend", "kierki"):
                kind = "bot"  # a remote player's connection is gone: a bot plays its chair
            members.append(Member(name, "bot" if kind == "bot" else "human", alg or None))
        g = LobbyGame(
            id=rec.id,
            variant=str(rec.meta.get("lobby_variant", "turbo")),
            seed=rec.seed,
            created_by=members[0].name,
            members=members,
            practice=bool(rec.meta.get("practice", False)),
            open_hands=bool(rec.meta.get("open_hands", False)),
        )
        g.stream = GameStream(g.id)
        chats: list[dict[str, Any]] = []
        if self.store is not None:
            chats = await self.store.get_value(f"turbo:chat:{rec.id}") or []
        seats = [chairs[s] if s in chairs else self._seat_for(m) for s, m in enumerate(members)]
        table = restored_table(rec, seats, policy or PEOPLE_POLICY)
        self._host(g, table, chats)
        return table

    # ------------------------------------------------------------ lobby actions
    def _game(self, body: dict[str, Any]) -> LobbyGame:
        game_id = field_str(body, "id", max_len=100)
        assert game_id is not None
        g = self.games.get(game_id)
        if g is None:
            raise RequestError(404, f"no game {game_id!r}")
        return g

    def new_game(self, name: str, body: dict[str, Any]) -> str:
        rules = parse_charging(field_str(body, "rules", required=False, max_len=20))
        variant = (field_str(body, "variant", required=False, max_len=20) or "turbo").lower()
        if variant not in GAME_VARIANTS:
            raise RequestError(400, f"unknown variant {variant!r}; known: {', '.join(GAME_VARIANTS)}")
        seed = field_int(body, "seed") if self.options.allow_seed else None
        open_hands = body.get("open_hands", False)
        if not isinstance(open_hands, bool):
            raise RequestError(400, "field 'open_hands' must be true or false")
        # a seed named by the creator would let the creator know every hand: only a practice game
        # (the creator and its own bots, unrated) may have one
        practice = seed is not None
        if seed is None:
            seed = self.rng.getrandbits(62) if self.options.seed is not None else secrets.randbits(62)
        game_id = (
            str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
            if self.options.seed is not None
            else str(uuid.uuid4())
        )
        g = LobbyGame(game_id, variant, seed, name, practice=practice, open_hands=open_hands)
        g.holds = upkeep.open_game_shares(self.guard, name)
        g.members.append(Member(name, rules=CHARGING_NAMES[rules]))
        g.stream = GameStream(g.id)
        self.games[g.id] = g
        if self.peers is not None:
            self.peers.hosting(g.id)
        self.broadcast({"type": "new_game", "id": g.id, "player": name, "name": name})
        self._save_open(g)
        log.info("event=new_game game=%s variant=%s by=%s", g.id, variant, name)
        return g.id

    def join(self, name: str, body: dict[str, Any]) -> list[str]:
        g = self._game(body)
        rules = parse_charging(field_str(body, "rules", required=False, max_len=20))
        if any(same_name(m.name, name) for m in g.members):
            raise RequestError(409, f"{name} is already in this game")
        if g.practice:
            raise RequestError(403, "a practice game (its creator chose the seed) takes only its creator's bots")
        self._add(g, Member(name, rules=CHARGING_NAMES[rules]))
        return g.names()

    def add_bot(self, name: str, body: dict[str, Any]) -> str:
        g = self._game(body)
        rules = parse_charging(field_str(body, "rules", required=False, max_len=20))
        algorithm = field_str(body, "algorithm", required=False, max_len=40) or "random"
        if algorithm not in self.bot_names:
            raise RequestError(400, f"unknown algorithm {algorithm!r}; known: {', '.join(self.bot_names)}")
        if not any(same_name(m.name, name) for m in g.members):
            raise RequestError(403, f"{name} is not in this game")
        if g.practice and not same_name(name, g.created_by):
            raise RequestError(403, "only the creator adds bots to a practice game")
        taken = set(g.names())
        choices = [n + BOT_SUFFIX for n in BOT_NAMES if n + BOT_SUFFIX not in taken]
        bot_name = self.rng.choice(choices)
        self._add(g, Member(bot_name, "bot", algorithm, CHARGING_NAMES[rules]))
        return bot_name

    def _add(self, g: LobbyGame, member: Member) -> None:
        if g.hosted is not None or g.finished:
            raise RequestError(409, "the game has already started")
        if len(g.members) >= 4:
            raise RequestError(409, "the game is full")
        g.members.append(member)
        g.touched = time.time()
        # ``player`` as the seed-era server sent it (an object), ``name`` beside it (docs/turbo.md)
        self.broadcast({"type": "join_game", "id": g.id, "player": member.player_json(), "name": member.name})
        if len(g.members) == 4:
            self._drop_open(g)
            self._start(g)
        else:
            self._save_open(g)

    # ------------------------------------------------------------ mixed tables
    def join_remote(self, c: Candidate) -> bool:
        """A player from another protocol whose lobby code is this lobby's game id takes a
        chair there; False when the code names no game here. Raises :class:`LobbyError` when
        the game cannot take it (started, full, rules its protocol cannot express)."""
        g = self.games.get(c.lobby_code or "")
        if g is None:
            return False
        if g.hosted is not None or g.finished:
            raise LobbyError(f"game {g.id} has already started")
        if g.practice:
            raise LobbyError(f"game {g.id} is a practice game: it takes only its creator's bots")
        why = refusal(c.protocol, find_variant(g.variant))
        if why is not None:
            raise LobbyError(f"{why}: it cannot join game {g.id}")
        if any(m.name == c.seat.name for m in g.members):
            raise LobbyError(f"{c.seat.name} is already in game {g.id}")
        member = Member(c.seat.name, c.seat.kind.value, None, remote=c)
        try:
            self._add(g, member)
        except RequestError as e:
            raise LobbyError(f"{e}: game {g.id}") from None
        log.info("event=remote_joined game=%s protocol=%s name=%s", g.id, c.protocol, c.seat.name)
        return True

    def leave_remote(self, c: Candidate) -> bool:
        """A remote player that has not started playing leaves (its connection closed)."""
        for g in list(self.games.values()):
            if g.hosted is None and not g.finished and any(m.remote is c for m in g.members):
                g.members = [m for m in g.members if m.remote is not c]
                self.broadcast({"type": "leave_game", "id": g.id, "player": c.seat.name, "name": c.seat.name})
                if not any(m.kind == "human" or m.remote is not None for m in g.members):
                    for m in g.members:  # nobody left to play: the game goes, as in leave()
                        self.broadcast({"type": "leave_game", "id": g.id, "player": m.name, "name": m.name})
                    del self.games[g.id]
                    if g.stream is not None:
                        g.stream.close()
                    self._drop_open(g)
                return True
        return False

    def leave(self, name: str, body: dict[str, Any]) -> None:
        g = self._game(body)
        if g.hosted is not None or g.finished:
            raise RequestError(409, "the game has started: it cannot be left")
        if not any(same_name(m.name, name) for m in g.members):
            raise RequestError(409, f"{name} is not in this game")
        g.members = [m for m in g.members if not same_name(m.name, name)]
        g.touched = time.time()
        self.broadcast({"type": "leave_game", "id": g.id, "player": name, "name": name})
        if not any(m.kind == "human" or m.remote is not None for m in g.members):
            # nobody left to play: the game goes (its bots with it); players from other
            # protocols waiting in it keep it open (for someone to join), until they leave
            for m in g.members:
                self.broadcast({"type": "leave_game", "id": g.id, "player": m.name, "name": m.name})
            del self.games[g.id]
            if g.stream is not None:
                g.stream.close()
            self._drop_open(g)
        else:
            self._save_open(g)

    def lobby_chat(self, name: str, body: dict[str, Any]) -> None:
        self.broadcast({"type": "chat", "name": name, "message": parse_chat(body)})

    # ------------------------------------------------------------ starting a game
    def rules_for(self, g: LobbyGame) -> tuple[Rules, list[Member]]:
        """The game's rules and its members in chair order (N, E, S, W).

        Turbo: the charging rules are drawn from the four proposals (reproducibly from the game's
        seed) and the proposer sits north, the others after in the order they joined. Other
        variants: chairs in the order of joining."""
        members = list(g.members)
        if g.variant != "turbo":
            return find_variant(g.variant), members
        pick = random.Random(g.seed ^ 0x7B0).randrange(4)
        chairs = members[pick:] + members[:pick]
        order = parse_charging(members[pick].rules)
        return TURBO_VARIANTS[order], chairs

    def _seat_for(self, m: Member) -> Seat:
        if m.remote is not None:
            return m.remote.seat
        if m.kind == "bot":
            bot = self.make_bot(m.algorithm or "random")
            return BotSeat(bot, random.Random(self.rng.getrandbits(32)), name=m.name)
        return TurboSeat(m.name)

    def _start(self, g: LobbyGame) -> None:
        rules, chairs = self.rules_for(g)
        g.members = chairs
        seats = [self._seat_for(m) for m in chairs]
        remote = [m.remote is not None for m in chairs]
        meta: dict[str, Any] = {
            "protocol": "turbo",
            # a remote player's chair is a bot's if the game is restored (its connection is gone)
            "algorithms": json.dumps([m.algorithm or ("heuristic" if m.remote else "") for m in chairs]),
            "lobby_variant": g.variant,
        }
        if any(remote):
            meta["mixed"] = True
        if g.practice:
            meta["practice"] = True
        if g.open_hands:
            meta["open_hands"] = True
        if not g.rated:
            meta["unrated"] = True
        policy = self.mixed_policy if any(remote) else PEOPLE_POLICY
        table = Table(rules, seats, seed=g.seed, policy=policy, table_id=g.id, recorder=self.recorder, meta=meta)
        if self.deals_for is not None:
            deals = self.deals_for(g)
            if deals is not None:
                table.game = Game(rules, g.seed, deals)
        if self.peers is not None:
            self.peers.started(table)
        self._host(g, table, [])
        for chair, m in enumerate(chairs):
            if m.remote is not None:  # before the table's first turn: it runs in its own task
                try:
                    m.remote.on_matched(table, chair)
                except Exception:
                    log.exception("event=on_matched_failed game=%s seat=%d", g.id, chair)
                    table.detach(chair, m.remote.seat, "matching callback failed")
        log.info("event=game_started game=%s rules=%s players=%s", g.id, rules.name, [m.name for m in chairs])

    def _host(self, g: LobbyGame, table: Table, chats: Sequence[dict[str, Any]]) -> None:
        # a remote player is shown as a program of its protocol, and no browser can act for it
        # (HostedGame.seat_of matches people only)
        players = [
            Player(m.name, "bot", m.remote.protocol) if m.remote is not None else Player(m.name, m.kind, m.algorithm)
            for m in g.members
        ]
        stream = g.stream or GameStream(g.id)
        g.stream = stream
        stream.open = self.options.open_spectators or g.open_hands
        translator = TurboTranslator(table.rules, table.seed, players, table.game.deal_specs)
        stream.restore_chat(chats)
        stream.start(translator)
        g.hosted = HostedGame(g.id, table, players, stream, self._save_chat)
        self.games[g.id] = g
        self.track(table)
        table.watch(self.peers.spectator(stream) if self.peers is not None else stream)
        table.done.add_done_callback(functools.partial(self._table_done, g))

    def show_table(self, table: Table, people: set[int]) -> None:
        """Host a table someone else started (a tournament game) for the game routes and the
        web app: the chairs in ``people`` are played through HTTP by the person of that name;
        the others are shown as programs. Call it before the table starts."""
        names = table.seat_names()
        members = [
            Member(n, "human" if i in people else "bot", None if i in people else "program")
            for i, n in enumerate(names)
        ]
        g = LobbyGame(table.id, table.rules.name, table.seed, names[min(people)] if people else "", members)
        players = [Player(m.name, m.kind, m.algorithm) for m in members]
        g.stream = GameStream(g.id)
        g.stream.open = self.options.open_spectators and table.reveal_at_end
        g.stream.sealed = not table.reveal_at_end
        g.stream.start(TurboTranslator(table.rules, table.seed, players, table.game.deal_specs))
        g.hosted = HostedGame(g.id, table, players, g.stream, self._save_chat)
        self.games[g.id] = g
        table.watch(g.stream)
        table.done.add_done_callback(functools.partial(self._table_done, g))

    def _table_done(self, g: LobbyGame, _: object = None) -> None:
        table = g.hosted.table if g.hosted is not None else None
        if table is None or not table.game.over:
            return  # stopped (shutdown): restored on the next start
        g.finished = True
        self.finished += 1
        self._rated_later(table, [p.name for p in g.hosted.players if p.kind == "human"] if g.hosted else [])
        if self.peers is not None:
            self.peers.dropped(g.id)
        self.broadcast({"type": "finish_game", "id": g.id})
        done = [x for x in self.games.values() if x.finished]
        for old in done[: max(0, len(done) - KEEP_FINISHED)]:
            self.games.pop(old.id, None)


def lobby_routes(lobby: TurboLobby) -> list[BaseRoute]:
    def identity() -> Identity:
        return lobby.identity

    async def subscribe(request: Request, caller: Caller) -> Response:
        q = lobby.subscribe_lobby(caller.name)

        async def events() -> AsyncIterator[bytes]:
            try:
                async for chunk in upkeep.lobby_frames(q):
                    yield chunk
            finally:
                lobby.unsubscribe_lobby(caller.name, q)

        return EventSourceResponse(events(), ping=PING_SECONDS, headers={"Cache-Control": "no-store"})

    def post(fn: Callable[[str, dict[str, Any]], Any]) -> Callable[[Request, Caller], Awaitable[Any]]:
        async def handle(request: Request, caller: Caller) -> Any:
            lobby.seen[caller.name] = time.monotonic()
            out = fn(caller.name, await read_body(request))
            if lobby.peers is not None:
                # in a cluster the answer waits until what the call wrote is in Redis: a new game
                # made here must be found by the next request, which may reach another process
                await lobby.peers.settled()
            return out

        return handle

    return [
        Route("/lobby/subscribe", endpoint(subscribe, identity), methods=["GET"]),
        Route("/lobby/new", endpoint(post(lobby.new_game), identity), methods=["POST"]),
        Route("/lobby/join", endpoint(post(lobby.join), identity), methods=["POST"]),
        Route("/lobby/add_bot", endpoint(post(lobby.add_bot), identity), methods=["POST"]),
        Route("/lobby/leave", endpoint(post(lobby.leave), identity), methods=["POST"]),
        Route("/lobby/chat", endpoint(post(lobby.lobby_chat), identity), methods=["POST"]),
    ]


# ---------------------------------------------------------------- tournaments
def tournament_routes(lobby: TurboLobby) -> list[BaseRoute]:
    """``/api/tournaments``: create (POST), list, status, results (JSON, ``?format=csv``) and the
    running standings as a PNG; the server's TournamentHost does the work."""
    from moonshot.protocols.turbo.tournament_api import routes

    return routes(lobby, endpoint, read_body)


# ---------------------------------------------------------------- moonshot's JSON extensions
def variant_info() -> list[dict[str, Any]]:
    out = []
    for name in GAME_VARIANTS:
        r = find_variant(name)
        out.append(
            {
                "name": name,
                "description": r.description,
                "passing": any(d.offset for d in r.pass_cycle),
                "charging": r.charging is not None,
                "exposing": bool(r.exposable),
                "claims": r.claims,
            }
        )
    return out


# what /api/games shows of a stored player (the store also keeps a chair's credential: never shown)
PUBLIC_PLAYER_FIELDS = ("name", "kind", "protocol", "bot")


def stored_seal(rec: Any) -> DealSeal | None:
    """The deal seal of a stored game (None: stored before games were sealed)."""
    salt = rec.meta.get("deal_salt") if isinstance(rec.meta, dict) else None
    if not isinstance(salt, str):
        return None
    deals = rec.deals()
    return DealSeal(rec.id, rec.seed, salt, tuple(deals) if deals is not None else None)


def _when(value: Any) -> str | None:
    if value is None:
        return None
    return str(value.isoformat()) if hasattr(value, "isoformat") else str(value)


def api_routes(lobby: TurboLobby) -> list[BaseRoute]:
    def identity() -> Identity:
        return lobby.identity

    async def me(request: Request, caller: Caller) -> Any:
        out: dict[str, Any] = {"name": caller.name}
        if caller.recovery is not None:
            out["recovery"] = caller.recovery  # the name was bound just now: its code, shown once
        return out

    async def recover(request: Request, caller: Caller) -> Any:
        """``{"name", "code"}``: move a bound name to this browser with its recovery code."""
        body = await read_body(request)
        raw = field_str(body, "name", max_len=100)
        code = field_str(body, "code", max_len=100)
        assert raw is not None and code is not None
        try:
            name = display_name(raw)
        except NameRefused as e:
            raise RequestError(400, str(e)) from None
        moved = await lobby.identity.recover(name, code)
        log.info("event=name_recovered name=%s", json.dumps(moved.name))
        return Identity.finish(JSONResponse({"name": moved.name, "recovery": moved.recovery}), moved)

    async def variants(request: Request, caller: Caller) -> Any:
        return variant_info()

    async def bots(request: Request, caller: Caller) -> Any:
        return lobby.bot_names

    def int_param(request: Request, key: str, default: int, top: int) -> int:
        text = request.query_params.get(key)
        if text is None:
            return default
        try:
            value = int(text)
        except ValueError as e:
            raise RequestError(400, f"{key} must be an integer") from e
        if not 0 <= value <= top:
            raise RequestError(400, f"{key} must be 0..{top}")
        return value

    def summary(r: dict[str, Any]) -> dict[str, Any]:
        meta = r.get("meta") or {}
        return {
            "id": r["id"],
            "variant": r["variant"],
            "protocol": r.get("protocol", ""),
            # what the store keeps of a player that is public (never a chair's credential)
            "players": [{k: p[k] for k in PUBLIC_PLAYER_FIELDS if k in p} for p in r["players"] or []],
            "status": r["status"],
            "created": _when(r["created_at"]),
            "finished": _when(r["finished_at"]),
            "totals": r["totals"],
            "winners": r["winners"],
            # the commitment to the deals, published from the start (moonshot.fairness)
            "commitment": meta.get("deal_commitment") if isinstance(meta, dict) else None,
            "rated": not (isinstance(meta, dict) and meta.get("unrated")),
        }

    async def games(request: Request, caller: Caller) -> Any:
        limit = int_param(request, "limit", 50, 500)
        offset = int_param(request, "offset", 0, 10**9)
        if lobby.store is None:
            return []
        return [summary(r) for r in await lobby.store.list_games(None, limit, offset)]

    async def tournament_over(tid: Any) -> bool:
        from moonshot.server.tournament import KEY_PREFIX

        if not isinstance(tid, str):
            return False
        state = lobby.tournaments.state(tid) if lobby.tournaments is not None else None
        if state is None and lobby.store is not None:
            state = await lobby.store.get_value(KEY_PREFIX + tid)
        return isinstance(state, dict) and state.get("status") in ("finished", "failed")

    async def game(request: Request, caller: Caller) -> Any:
        game_id = request.path_params["game_id"]
        if lobby.store is None:
            raise RequestError(404, "no games are stored (the server runs without --db)")
        rec = await lobby.store.load(game_id)
        if rec is None:
            raise RequestError(404, f"no stored game {game_id!r}")
        if rec.status == "running":
            raise RequestError(403, "the game is still running: watch it through /game/subscribe")
        if rec.meta.get("reveal_at_end") is False and not await tournament_over(rec.meta.get("tournament")):
            # its deal set is still being played in other rotations: its hands would tell theirs
            raise RequestError(403, "a tournament's game is shown once the tournament is over")
        g = rec.rebuild()
        algorithms = json.loads(rec.meta.get("algorithms", "[]") or "[]")
        players = []
        for s, p in enumerate(rec.players):
            kind = "bot" if p.get("kind") == "bot" else "human"
            alg = algorithms[s] if s < len(algorithms) and algorithms[s] else None
            players.append(Player(str(p.get("name", "")), kind, alg))
        seal = stored_seal(rec)
        log_ = [seal.decorate(e) for e in g.log] if seal is not None else g.log
        msgs = translate_log(g.rules, rec.seed, players, log_, rec.deals())
        out = summary(
            {
                "id": rec.id,
                "variant": rec.variant,
                "protocol": rec.protocol,
                "players": rec.players,
                "status": rec.status,
                "created_at": rec.created_at,
                "finished_at": rec.finished_at,
                "totals": rec.totals,
                "winners": rec.winners,
                "meta": rec.meta,
            }
        )
        out["events"] = [m.data for m in msgs]
        # what `moonshot verify --record` checks: the revealed seed and salt, the actions
        if seal is not None and rec.status == "finished":
            out["deal_seal"] = {**seal.revealed(), "commitment": out["commitment"], "seed": str(seal.seed)}
        if rec.deals() is not None:
            out["deals"] = rec.meta.get("deals")
        out["actions"] = [action_to_dict(a) for a in rec.actions]
        return out

    return [
        Route("/api/me", endpoint(me, identity), methods=["GET"]),
        Route("/api/names/recover", endpoint(recover, identity, anonymous=True), methods=["POST"]),
        Route("/api/variants", endpoint(variants, identity, anonymous=True), methods=["GET"]),
        Route("/api/bots", endpoint(bots, identity, anonymous=True), methods=["GET"]),
        Route("/api/games", endpoint(games, identity, anonymous=True), methods=["GET"]),
        Route("/api/games/{game_id}", endpoint(game, identity, anonymous=True), methods=["GET"]),
    ]


def default_static_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "web" / "static"


def page_routes(static_dir: Path) -> list[BaseRoute]:
    def page(filename: str) -> Callable[[Request], Awaitable[Response]]:
        async def serve(request: Request) -> Response:
            path = static_dir / filename
            if not path.is_file():
                return error(404, f"the web app is not installed ({filename} is missing)")
            return FileResponse(path, headers={"Cache-Control": "no-cache"})

        return serve

    async def root(request: Request) -> Response:
        return RedirectResponse("/lobby", status_code=307)

    routes: list[BaseRoute] = [
        Route("/", root, methods=["GET"]),
        Route("/lobby", page("lobby.html"), methods=["GET"]),
        Route("/game", page("game.html"), methods=["GET"]),
        Route("/history", page("history.html"), methods=["GET"]),
        Route("/tournaments", page("tournaments.html"), methods=["GET"]),
    ]
    routes.append(Mount("/static", app=StaticFiles(directory=static_dir, check_dir=False), name="static"))
    return routes


def build_app(lobby: TurboLobby, static_dir: Path | None = None) -> Starlette:
    """The whole HTTP side: lobby, games, /api extensions, the web app's pages and files."""
    from moonshot.protocols.turbo.leaderboard import leaderboard_routes

    routes = [
        *lobby_routes(lobby),
        *game_routes(lobby),
        *api_routes(lobby),
        *tournament_routes(lobby),
        *leaderboard_routes(lobby, static_dir or default_static_dir()),
        *page_routes(static_dir or default_static_dir()),
    ]

    async def not_found(request: Request, exc: Exception) -> Response:
        return error(404, f"no such endpoint: {request.method} {request.url.path}")

    async def bad_method(request: Request, exc: Exception) -> Response:
        return error(405, f"{request.method} is not allowed on {request.url.path}")

    guard = Middleware(OriginGuard, allowed=lobby.options.allowed_origins)
    return Starlette(routes=routes, exception_handlers={404: not_found, 405: bad_method}, middleware=[guard])


__all__ = [
    "DEFAULT_HTTP_PORT",
    "Caller",
    "GameHost",
    "GameStream",
    "HostedGame",
    "Identity",
    "LobbyGame",
    "LobbyOptions",
    "Member",
    "TurboLobby",
    "TurboSeat",
    "build_app",
    "game_routes",
    "variant_info",
]
