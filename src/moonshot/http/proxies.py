"""The HTTP side of "who a client is": an ASGI middleware, outermost in front of every HTTP and
WebSocket app (the web server, the Trend node, Trend under ASGI), that asks
:meth:`~moonshot.runtime.clients.Proxies.resolve` once per request and writes its answer into the
scope: ``client`` becomes the real client (whose share every limit behind it counts) and
``scheme`` the one the client used (``https``/``wss`` behind a TLS proxy), so ``request.client``,
``request.url`` and the cookies' ``Secure`` flag follow it. A request from a peer that is no
trusted proxy passes unchanged: its forwarding headers are never read (uvicorn's own
``proxy_headers`` is switched off by every listener, see :data:`UVICORN_NO_PROXY_HEADERS`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from moonshot.runtime.clients import Proxies

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]

# uvicorn.Config settings: uvicorn would otherwise trust X-Forwarded-For from 127.0.0.1 on its own
UVICORN_NO_PROXY_HEADERS: dict[str, Any] = {"proxy_headers": False, "forwarded_allow_ips": ""}


def is_secure(scope: Scope) -> bool:
    """Did the client use TLS (directly, or to a trusted proxy)?"""
    return scope.get("scheme") in ("https", "wss")


def websocket_scheme(scope: Scope) -> str:
    """``wss`` for a client that came over TLS, else ``ws``: the scheme of links to our WebSockets."""
    return "wss" if is_secure(scope) else "ws"


class ForwardedClient:
    """ASGI middleware: the real client and scheme of a request from a trusted proxy."""

    def __init__(self, app: ASGIApp, proxies: Proxies) -> None:
        self.app = app
        self.proxies = proxies

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        kind = scope["type"]
        peer = scope.get("client")
        if kind not in ("http", "websocket") or not self.proxies or not peer or not self.proxies.trusts(str(peer[0])):
            await self.app(scope, receive, send)
            return
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope.get("headers", ())]
        client = self.proxies.resolve(str(peer[0]), headers, int(peer[1]) if len(peer) > 1 else 0)
        scope = dict(scope)
        scope["client"] = (client.ip, client.port)
        if client.scheme is not None:
            secure = client.scheme == "https"
            scope["scheme"] = ("https" if secure else "http") if kind == "http" else ("wss" if secure else "ws")
        await self.app(scope, receive, send)


__all__ = ["UVICORN_NO_PROXY_HEADERS", "ForwardedClient", "is_secure", "websocket_scheme"]
