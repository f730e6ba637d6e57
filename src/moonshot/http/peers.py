"""Turbo HTTP + SSE (and the web app) on every node of a cluster; docs/scaling.md ("HTTP
games") has the design.

A game lives on one node (``httpgame`` in Redis; once it starts, the table directory with a
lease, like any cluster table; once it ended, ``httpdone:<id>`` for its rematch). A request for a
game hosted elsewhere (its rematch's too) is forwarded whole to that node through its stream
(``http.request``, with the client's share key as this node's guard found it, so the shares that
node counts are the client's: a new name, a game's start at the table rate) and runs through the
same routes there; the answer streams back (``http.head``, ``http.chunk``, ``http.end``;
``http.cancel`` when the browser went away).
Lobby events and name bindings go to every node (``lobby.event``). A game's SSE streams get its
events only once the actions behind them are in the table's Redis log.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from moonshot.cluster import messages
from moonshot.cluster.node import ClusterUnavailable
from moonshot.http.limits import client_address
from moonshot.protocols.turbo.codec import RequestError
from moonshot.runtime.clock import Countdown
from moonshot.runtime.table import Table, TableEvent

if TYPE_CHECKING:
    from moonshot.cluster.node import Cluster
    from moonshot.http.lobby import TurboLobby
    from moonshot.http.streams import GameStream

log = logging.getLogger("moonshot.cluster.http")

MAX_BODY = 64 * 1024
FORWARDED_HEADERS = ("cookie", "last-event-id", "content-type", "accept")
ANSWER_TIMEOUT = 15.0  # seconds a forwarded request waits for the head of its answer
LOBBY_POSTS = ("/lobby/join", "/lobby/add_bot", "/lobby/leave", "/lobby/rematch", "/lobby/rematch_decline")
REMATCH_STATE = "/lobby/rematch/"  # GET: where a finished game's rematch offer stands
FINISHED_SECONDS = 3600.0  # how long other nodes send a finished game's requests (its rematch) here

ASGI = Callable[
    [dict[str, Any], Callable[[], Awaitable[dict[str, Any]]], Callable[[dict[str, Any]], Awaitable[None]]],
    Awaitable[None],
]


@dataclass
class _Pending:
    """A request this node forwarded: what comes back, in order."""

    owner: str
    queue: asyncio.Queue[Any] = field(default_factory=asyncio.Queue)


class _DeferredStream:
    """A game stream's stand-in as the table's spectator: events go on once the writes queued
    before them (the actions' log entries) are in Redis."""

    def __init__(self, cluster: Cluster, stream: GameStream) -> None:
        self.cluster = cluster
        self.stream = stream

    def on_events(self, table: Table, events: Sequence[TableEvent]) -> None:
        evs = list(events)
        self.cluster.after_writes(table.id, lambda: self.stream.on_events(table, evs))

    def on_clock(self, table: Table, countdown: Countdown) -> None:
        """The clocks, after the events before them (its deadlines are the loop's: still right)."""
        self.cluster.after_writes(table.id, lambda: self.stream.on_clock(table, countdown))


class HttpPeers:
    """The Turbo lobby's link to the other nodes (``TurboLobby.peers``)."""

    def __init__(self, cluster: Cluster, lobby: TurboLobby) -> None:
        self.cluster = cluster
        self.lobby = lobby
        self.app: ASGI | None = None  # this node's own routes (set by wrap)
        self.pending: dict[str, _Pending] = {}
        self.serving: dict[str, asyncio.Event] = {}  # requests run here for another node: cancel
        # games hosted elsewhere: id -> their players as the lobby lists them ({type, name})
        self.remote_games: dict[str, list[dict[str, Any]]] = {}
        # indexes a mixed game's Trend chairs for re-joins (the composition root gives Trend's keys)
        self.trend_index: Callable[[Table, list[int]], None] | None = None
        self.forwarded = 0
        cluster.handlers.update({k: self._on_message for k in (*messages.HTTP, messages.LobbyEvent.kind)})
        cluster.on_lease_lost.append(self._lost)
        cluster.keeper_hooks.append(self.adopt_open)
        self.adopted_open = 0

    def _lost(self, game_id: str) -> None:
        """Another node runs this game now: forget the stopped copy, end its streams (browsers
        reconnect with Last-Event-ID, and their requests now go to the new host)."""
        g = self.lobby.games.pop(game_id, None)
        if g is not None and g.stream is not None:
            g.stream.close()

    async def adopt_open(self) -> int:
        """Open games (fewer than four players) of nodes that died: each is claimed by one live
        node (``Cluster.claim_open``: a short claim in Redis, then ``httpgame`` points here),
        which takes it from the store into its lobby, so that the next request for it, on any
        node, is served here. A started game is not one of these: it has a lease, and the
        cluster's adoption takes it. Runs on the keeper's clock; returns how many it took."""
        c = self.cluster
        if c.redis is None or c._closing:
            return 0
        entries = {k.decode(): v.decode() for k, v in (await c.redis.hgetall(c.key("httpgame"))).items()}
        alive: dict[str, bool] = {}
        for node in set(entries.values()) - {c.node}:
            alive[node] = await c.node_alive(node)
        count = 0
        for gid, node in entries.items():
            if node == c.node or alive.get(node, True) or gid in self.lobby.games:
                continue
            if await c.redis.hexists(c.key("tables"), gid) or not await c.claim_open(gid):
                continue  # started (adopted under its lease), or another node claimed it first
            if await self.lobby.adopt_open(gid):
                self.remote_games.pop(gid, None)
                count += 1
                log.info("event=adopted_open game=%s from=%s", gid, node)
            else:  # not in the store (its creation was never written): nothing to serve
                c.write("", "hd", c.key("httpgame"), gid)
                log.info("event=open_game_lost game=%s node=%s reason=not_stored", gid, node)
        self.adopted_open += count
        return count

    # ------------------------------------------------------------ hooks the lobby calls
    def hosting(self, game_id: str) -> None:
        c = self.cluster
        c.write("", "h", c.key("httpgame"), game_id, c.node)

    async def settled(self) -> None:
        """What a lobby request wrote (the game's host, its players) is in Redis: the browser's
        next request may reach another process, which must find the game. When Redis does not
        confirm in time the call is refused with 503 (the client is not told it took effect; the
        writes land once Redis is back)."""
        try:
            await self.cluster.written()
        except ClusterUnavailable as e:
            raise RequestError(503, f"{e}: try again shortly") from e

    def dropped(self, game_id: str) -> None:
        c = self.cluster
        c.write("", "hd", c.key("httpgame"), game_id)

    def finished(self, game_id: str) -> None:
        """A game ended here and stays in this lobby: its rematch is offered, accepted and joined
        here, so every node forwards its requests here (``httpdone:<id>``, for an hour; a
        Sessions or Trend join with its id as lobby code is claimed here the same way)."""
        c = self.cluster
        c.write("", "s", c.key("httpdone", game_id), c.node, int(FINISHED_SECONDS * 1000))

    def spectator(self, stream: GameStream) -> Any:
        return _DeferredStream(self.cluster, stream)

    def started(self, table: Table) -> None:
        """A game starts here: it enters the directory (lease, log) before its first action; its
        Trend players' chairs are indexed for their re-joins on any node (``trend_index``)."""
        self.cluster.register_table(table)
        trend = [
            i
            for i, ch in enumerate(table.chairs)
            if getattr(ch.occupant, "protocol", None) == "trend" and table.credentials[i] is not None
        ]
        if trend and self.trend_index is not None:
            self.trend_index(table, trend)

    def broadcast(self, event: dict[str, Any]) -> None:
        self.cluster.send_all(messages.LobbyEvent(event=event, node=self.cluster.node))

    def bound(self, name: str, record: dict[str, Any]) -> None:
        self.broadcast({"type": "_bind", "name": name, "digest": record})

    def games(self) -> dict[str, list[dict[str, Any]]]:
        return dict(self.remote_games)

    # ------------------------------------------------------------ messages
    def _on_message(self, msg: Any) -> None:
        if isinstance(msg, messages.LobbyEvent):
            self._lobby_event(msg.event)
        elif isinstance(msg, messages.HttpRequest):
            ev = asyncio.Event()
            self.serving[msg.request] = ev
            self.cluster._spawn(self._serve(msg, ev), limit=False)
        elif isinstance(msg, messages.HttpCancel):
            ev2 = self.serving.get(msg.request)
            if ev2 is not None:
                ev2.set()
        else:
            p = self.pending.get(msg.request)
            if p is not None:
                p.queue.put_nowait(msg)

    def _lobby_event(self, e: dict[str, Any]) -> None:
        kind = e.get("type")
        gid, name, player = e.get("id"), e.get("name"), e.get("player")
        if kind == "_bind":
            name, digest = e.get("name"), e.get("digest")
            # a name held here (a lobby stream, a seat in a game hosted here) keeps its binding:
            # another process, which does not know it is held, cannot hand it to a new browser
            # (``digest``: the name's binding record, or the nonce's digest from an older process)
            if isinstance(name, str) and isinstance(digest, str | dict) and not self.lobby.holds(name):
                self.lobby.identity.load_bindings({name: digest})
            return
        if isinstance(gid, str) and isinstance(name, str):
            if kind == "new_game":
                self.remote_games[gid] = [{"type": "human", "name": name}]
            elif kind == "join_game" and gid in self.remote_games:
                self.remote_games[gid].append(player if isinstance(player, dict) else {"type": "human", "name": name})
            elif kind == "leave_game" and gid in self.remote_games:
                players = [p for p in self.remote_games[gid] if p.get("name") != name]
                if players:
                    self.remote_games[gid] = players
                else:
                    del self.remote_games[gid]
        elif kind == "finish_game" and isinstance(gid, str):
            self.remote_games.pop(gid, None)
        if isinstance(kind, str) and not kind.startswith("_"):
            self.lobby.broadcast(e, local=True)

    # ------------------------------------------------------------ the requests
    def wrap(self, app: ASGI) -> ASGI:
        """The node's HTTP app: requests for games hosted elsewhere are forwarded."""
        self.app = app

        async def routed(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            method, path = scope["method"], scope["path"]
            game_id: Any = None
            body: bytes | None = None
            if method == "GET" and path.startswith("/game/subscribe/"):
                game_id = path[len("/game/subscribe/") :]
            elif method == "GET" and path.startswith(REMATCH_STATE):
                game_id = path[len(REMATCH_STATE) :]
            elif method == "POST" and (path.startswith("/game/") or path in LOBBY_POSTS):
                body = await _read(receive)
                if len(body) <= MAX_BODY:
                    with contextlib.suppress(ValueError, UnicodeDecodeError):
                        parsed = json.loads(body)
                        if isinstance(parsed, dict):
                            game_id = parsed.get("id")
            replay = receive if body is None else _replayer(body, receive)
            for _attempt in range(3):
                owner = None
                if isinstance(game_id, str) and 0 < len(game_id) <= 100 and game_id not in self.lobby.games:
                    owner = await self.cluster.game_node(game_id)
                if owner is None or owner == self.cluster.node:
                    await app(scope, replay, send)
                    return
                if await self._forward(owner, scope, body or b"", receive, send):
                    return
                if method != "GET":
                    break  # the action may have been applied before the process died: the browser decides
            await _answer(send, 503, b'{"error":"the game\'s server process is gone: try again"}')

        return routed

    async def _forward(self, owner: str, scope: dict[str, Any], body: bytes, receive: Any, send: Any) -> bool:
        """Run a request on ``owner``; False when it died before answering (nothing was sent)."""
        c = self.cluster
        rid = secrets.token_hex(8)
        p = _Pending(owner)
        self.pending[rid] = p
        headers = {}
        for k, v in scope.get("headers", ()):
            name = k.decode("latin-1").lower()
            if name in FORWARDED_HEADERS:
                headers[name] = v.decode("latin-1")
        path = scope["path"] + ("?" + scope["query_string"].decode("latin-1") if scope.get("query_string") else "")
        self.forwarded += 1
        c.send(
            owner,
            messages.HttpRequest(
                request=rid,
                node=c.node,
                method=scope["method"],
                path=path,
                headers=headers,
                body=body.decode("latin-1"),
                address=client_address.get(),  # whose shares it counts there (a game's table rate)
            ),
        )
        gone = asyncio.Event()

        async def watch_client() -> None:
            while True:
                m = await receive()
                if m["type"] == "http.disconnect":
                    gone.set()
                    return

        watcher = asyncio.get_running_loop().create_task(watch_client())
        started = False
        waited = 0.0
        try:
            while True:
                getter = asyncio.ensure_future(p.queue.get())
                stop = asyncio.ensure_future(gone.wait())
                done, _ = await asyncio.wait({getter, stop}, timeout=c.lease, return_when=asyncio.FIRST_COMPLETED)
                if getter not in done:
                    getter.cancel()
                    stop.cancel()
                    waited += c.lease
                    if gone.is_set():
                        c.send(owner, messages.HttpCancel(request=rid))
                        return True
                    if not await c.node_alive(owner):
                        log.info("event=http_forward_owner_gone node=%s request=%s", owner, rid)
                        if not started:
                            return False
                        await send({"type": "http.response.body", "body": b"", "more_body": False})
                        return True
                    if not started and waited > ANSWER_TIMEOUT:
                        await _answer(send, 503, b'{"error":"the game\'s server process did not answer: try again"}')
                        return True
                    continue
                stop.cancel()
                msg = getter.result()
                if isinstance(msg, messages.HttpHead):
                    started = True
                    raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in msg.headers.items()]
                    await send({"type": "http.response.start", "status": msg.status, "headers": raw})
                elif isinstance(msg, messages.HttpChunk) and started:
                    await send({"type": "http.response.body", "body": msg.data.encode("latin-1"), "more_body": True})
                elif isinstance(msg, messages.HttpEnd):
                    if not started:
                        await _answer(send, 502, b'{"error":"the game\'s server process failed the request"}')
                    else:
                        await send({"type": "http.response.body", "body": b"", "more_body": False})
                    return True
        finally:
            watcher.cancel()
            self.pending.pop(rid, None)

    async def _serve(self, msg: messages.HttpRequest, cancel: asyncio.Event) -> None:
        """Run a request another node forwarded through this node's own routes."""
        c = self.cluster
        rid, node = msg.request, msg.node
        path, _, query = msg.path.partition("?")
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": msg.method,
            "scheme": "http",
            "path": path,
            "raw_path": path.encode("latin-1", "replace"),
            "query_string": query.encode("latin-1", "replace"),
            "root_path": "",
            "headers": [(k.encode("latin-1"), v.encode("latin-1", "replace")) for k, v in msg.headers.items()],
            "client": ("cluster", 0),
            "server": ("cluster", 0),
            "state": {},
        }
        body = msg.body.encode("latin-1", "replace")
        sent_body = False

        async def receive() -> dict[str, Any]:
            nonlocal sent_body
            if not sent_body:
                sent_body = True
                return {"type": "http.request", "body": body, "more_body": False}
            await cancel.wait()
            return {"type": "http.disconnect"}

        ended = False

        async def send(m: dict[str, Any]) -> None:
            nonlocal ended
            if m["type"] == "http.response.start":
                headers: dict[str, str] = {}
                for k, v in m.get("headers", ()):
                    name = k.decode("latin-1").lower()
                    if name != "content-length":
                        headers[name] = v.decode("latin-1")
                stream = headers.get("content-type", "").startswith("text/event-stream")
                c.send(node, messages.HttpHead(request=rid, status=int(m["status"]), headers=headers, stream=stream))
            elif m["type"] == "http.response.body":
                data = m.get("body", b"")
                if data:
                    c.send(node, messages.HttpChunk(request=rid, data=data.decode("latin-1")))
                if not m.get("more_body", False) and not ended:
                    ended = True
                    c.send(node, messages.HttpEnd(request=rid))

        # the client's share key as the forwarding node's guard found it (its trusted proxies
        # honoured there): what the routes here count, a started game's table rate among them
        client_address.set(msg.address)  # this task's own context
        try:
            assert self.app is not None
            await self.app(scope, receive, send)
        except Exception:
            log.exception("event=http_forwarded_failed path=%s", path)
        finally:
            self.serving.pop(rid, None)
            if not ended:
                c.send(node, messages.HttpEnd(request=rid))


async def _read(receive: Any) -> bytes:
    chunks = []
    size = 0
    while True:
        m = await receive()
        if m["type"] != "http.request":
            break
        chunk = m.get("body", b"")
        size += len(chunk)
        chunks.append(chunk)
        if size > MAX_BODY or not m.get("more_body", False):
            break
    return b"".join(chunks)


def _replayer(body: bytes, receive: Any) -> Any:
    done = False

    async def replay() -> dict[str, Any]:
        nonlocal done
        if not done:
            done = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # type: ignore[no-any-return]

    return replay


async def _answer(send: Any, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body, "more_body": False})


__all__ = ["HttpPeers"]
