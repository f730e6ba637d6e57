"""The HTTP side of fair shares: an ASGI middleware in front of the whole HTTP app.

For every request it:

* refuses a body over ``max_body`` bytes (413) at its ``Content-Length``, or, for a chunked body,
  as soon as the chunks read so far pass the limit: the rest is never read (the connection is
  closed after the answer). A body within the limit is read here and handed to the app whole;
* limits lobby and tournament POSTs, and chat lines, per name (the ``name`` cookie) and per
  address (token buckets): over them, 429 with ``Retry-After`` (whole seconds), answered after
  ``tarpit`` seconds, so a client looping on refused requests is slowed down;
* counts SSE streams (``/lobby/subscribe``, ``/game/subscribe/...``) open per address and per
  name: over the cap, 429 with ``Retry-After`` (after the tarpit too); a stream's share is given
  back when it ends. Within its share, a stream an address opens faster than
  ``streams_opened_per_s`` (after a burst) waits for its turn before it is set up (a stream's
  setup, a new name's first above all, costs every other stream something): a browser reopening
  its tabs is slowed, not refused; one that would wait over ``streams_opened_wait`` seconds gets
  the 429;
* sets :data:`client_address` for the request, so the lobby can count what an address holds
  (open games) without knowing about ASGI.

Every limit comes from the server's one :class:`~moonshot.runtime.limits.ClientGuard`.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import math
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.requests import cookie_parser

from moonshot.http.endpoints import error_body
from moonshot.runtime.limits import ClientGuard, Hold, address_of

log = logging.getLogger("moonshot.http")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# the address of the HTTP request being handled ("" outside a request)
client_address: contextvars.ContextVar[str] = contextvars.ContextVar("moonshot_client_address", default="")

LOBBY_POSTS = frozenset(
    {"/lobby/new", "/lobby/join", "/lobby/add_bot", "/lobby/leave", "/api/tournaments", "/api/tournaments/play"}
)
CHAT_POSTS = frozenset({"/lobby/chat", "/game/chat"})
STREAMS = ("/lobby/subscribe", "/game/subscribe/")
# what starts a new game: refused while the server drains (the operator's ``moonshot admin drain``)
NEW_GAME_POSTS = frozenset({"/lobby/new", "/lobby/join", "/lobby/add_bot", "/api/tournaments"})
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
STREAM_RETRY_AFTER = 10  # seconds a refused stream is told to wait (its share frees when another ends)


async def _answer(
    send: Send,
    status: int,
    message: str,
    retry_after: float | None = None,
    code: str | None = None,
    args: dict[str, Any] | None = None,
) -> None:
    body = json.dumps(error_body(message, code, args)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if retry_after is not None:
        headers.append((b"retry-after", str(max(1, math.ceil(retry_after))).encode()))
    if status == 413:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class HttpGuard:
    """ASGI middleware: body limit, lobby and chat rates, SSE stream caps (see the module)."""

    def __init__(self, app: ASGIApp, guard: ClientGuard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        addr = address_of(scope.get("client"))
        token = client_address.set(addr)
        try:
            await self._http(scope, receive, send, addr)
        finally:
            client_address.reset(token)

    async def _http(self, scope: Scope, receive: Receive, send: Send, addr: str) -> None:
        guard = self.guard
        method = scope.get("method", "GET")
        path = scope.get("path", "")
        name = _name(scope)
        if await self._operator_refused(send, method, path, addr, name):
            return
        if method in BODY_METHODS:
            read = await self._body(scope, receive, send, addr, path)
            if read is None:
                return
            receive = read
            rates = (
                (guard.lobby_by_address, guard.lobby_by_name)
                if path in LOBBY_POSTS
                else (guard.chat_by_address, guard.chat_by_name)
                if path in CHAT_POSTS
                else None
            )
            if rates is not None:
                for which, key in ((rates[0], addr), (rates[1], name)):
                    wait = which.take(key) if key else 0.0
                    if wait:
                        guard.refused += 1
                        log.info(
                            "event=http_limited path=%s addr=%s name=%s wait=%.1f", path, addr, json.dumps(name), wait
                        )
                        # a tarpit: a client that asks faster than its rate gets its answers slower,
                        # so one that loops on its requests is held to a few a second per connection
                        await asyncio.sleep(guard.limits.tarpit)
                        await _answer(send, 429, which.refusal(wait), wait, "rate_limited", {"seconds": round(wait, 1)})
                        return
        if method == "GET" and path.startswith(STREAMS):
            holds: list[Hold] = []
            try:
                for holder, key in ((guard.streams_by_address, addr), (guard.streams_by_name, name)):
                    if not key:
                        continue
                    h = holder.acquire(key)
                    if h is None:
                        guard.refused += 1
                        log.info("event=http_limited path=%s addr=%s what=streams", path, addr)
                        await asyncio.sleep(guard.limits.tarpit)
                        await _answer(send, 429, holder.refusal(), STREAM_RETRY_AFTER, "too_many_streams")
                        return
                    holds.append(h)
                if addr and not await self._stream_turn(send, path, addr):
                    return
                await self.app(scope, receive, send)
            finally:
                for h in holds:
                    h.release()
            return
        await self.app(scope, receive, send)

    async def _stream_turn(self, send: Send, path: str, addr: str) -> bool:
        """Wait for this stream's turn at its address's rate of streams opened; False when it was
        answered 429 instead (its turn is further than ``streams_opened_wait`` seconds)."""
        guard = self.guard
        rates = guard.streams_opened
        wait = rates.reserve(addr, guard.limits.streams_opened_wait)
        if wait is None:
            guard.refused += 1
            later = rates.wait(addr)
            log.info("event=http_limited path=%s addr=%s what=streams_opened wait=%.1f", path, addr, later)
            await asyncio.sleep(guard.limits.tarpit)
            await _answer(send, 429, rates.refusal(later), later, "rate_limited", {"seconds": round(later, 1)})
            return False
        if wait > 0:
            log.debug("event=stream_paced path=%s addr=%s wait=%.2f", path, addr, wait)
            await asyncio.sleep(wait)
        return True

    async def _operator_refused(self, send: Send, method: str, path: str, addr: str, name: str) -> bool:
        """The operator's decisions (runtime/controls.py): a banned address or name gets 403 and
        the reason, a muted name's chat line 403, a new game while the server drains 503."""
        controls = self.guard.controls
        why = controls.refusal(addr, name)
        status = 403
        code: str | None = None
        args: dict[str, Any] = {}
        ban = controls.address_ban(addr) or controls.name_ban(name) if why is not None else None
        if ban is not None:  # the web app writes the ban's end and reason in its page's language
            code, args = "banned", {"until": ban.until, "reason": ban.reason}
        if why is None and method == "POST" and path in CHAT_POSTS:
            muted = controls.muted(name)
            why = None if muted is None else muted.refusal().replace("banned", "muted in chat", 1)
            if muted is not None:
                code, args = "muted", {"until": muted.until, "reason": muted.reason}
        if why is None and method == "POST" and path in NEW_GAME_POSTS and controls.closed is not None:
            why, status = controls.closed, 503
            code, args = "draining", {"reason": controls.closed}
        if why is None:
            return False
        self.guard.refused += 1
        log.info("event=http_refused path=%s addr=%s name=%s reason=%s", path, addr, json.dumps(name), json.dumps(why))
        await _answer(send, status, why, None, code, args)
        return True

    async def _body(self, scope: Scope, receive: Receive, send: Send, addr: str, path: str) -> Receive | None:
        """Read the body within the limit; a ``receive`` that hands it to the app, or None when
        the request was answered here (413, 400, or the client went)."""
        limit = self.guard.limits.max_body
        for k, v in scope.get("headers", ()):
            if k == b"content-length":
                try:
                    size = int(v)
                except ValueError:
                    await _answer(send, 400, "a bad Content-Length", None, "bad_request")
                    return None
                if size > limit:
                    self.guard.refused += 1
                    log.info("event=body_refused path=%s addr=%s length=%d", path, addr, size)
                    await _answer(
                        send, 413, f"the body is over {limit // 1024} KB", None, "body_too_large", {"kb": limit // 1024}
                    )
                    return None
        chunks: list[bytes] = []
        size = 0
        while True:
            msg = await receive()
            if msg["type"] != "http.request":
                return None  # the client went
            chunk = msg.get("body", b"")
            size += len(chunk)
            if size > limit:
                self.guard.refused += 1
                log.info("event=body_refused path=%s addr=%s read=%d", path, addr, size)
                await _answer(
                    send, 413, f"the body is over {limit // 1024} KB", None, "body_too_large", {"kb": limit // 1024}
                )
                return None
            chunks.append(chunk)
            if not msg.get("more_body", False):
                break
        body = b"".join(chunks)
        given = False

        async def replay() -> Message:
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return replay


def _name(scope: Scope) -> str:
    for k, v in scope.get("headers", ()):
        if k == b"cookie":
            try:
                return cookie_parser(v.decode("latin-1")).get("name", "").strip()[:40]
            except Exception:
                return ""
    return ""


__all__ = ["HttpGuard", "client_address"]
