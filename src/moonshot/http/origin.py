"""Where a state-changing HTTP request may come from: the server's own pages, never another site.

A browser sends a user's cookies with requests that *other* pages make, including pages on another
port of the same host (SameSite counts them as the same site). So every request that changes
state (any method but GET, HEAD and OPTIONS) is checked here before a route sees it:

* its ``Content-Type`` must be ``application/json``. A page of another origin can send that type
  only through CORS, whose preflight this server never answers, so the browser never sends the
  request; the types a page may send without asking (``text/plain``, forms) are refused;
* ``Origin``, when sent, must be one given with ``--allowed-origin`` (a deployment behind a
  proxy that rewrites ``Host``), or else the server's own (its host and port are the request's
  ``Host``) with no ``Sec-Fetch-Site`` other than ``same-origin`` (or ``none``: typed by the user);
* without ``Origin``, ``Sec-Fetch-Site`` (when sent) must be ``same-origin`` or ``none``.

Every browser of the last years sends ``Origin`` (and ``Sec-Fetch-Site``) with every POST. A
request with neither comes from a program (a bot, ``curl``, the SDKs), which has no victim's
cookies to borrow; it is let through, so programs keep working without browser headers. A browser
old enough to send neither still cannot send a JSON body to another origin (the content-type rule).

A refused request is answered 403 with the reason (``{"error": ...}``), before any route runs.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from typing import Any
from urllib.parse import urlsplit

log = logging.getLogger("moonshot.http")

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
SAME_ORIGIN_SITES = frozenset({"same-origin", "none"})

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]


def normalise_origin(text: str) -> str:
    """``scheme://host[:port]`` in lower case, without a default port; ValueError when ``text``
    is not an origin (a path, a query or credentials are not part of one)."""
    value = text.strip()
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as e:
        raise ValueError(f"not an origin: {text!r} ({e})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an origin: {text!r} (expected http://HOST[:PORT] or https://HOST[:PORT])")
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(f"not an origin: {text!r} (no path, query or user)")
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    default = 80 if parts.scheme == "http" else 443
    return f"{parts.scheme}://{host}" + (f":{port}" if port is not None and port != default else "")


def _same_host(origin: str, host: str) -> bool:
    """Whether an ``Origin`` header names the host and port of a ``Host`` header (the port
    defaults to the origin's scheme's)."""
    try:
        o = urlsplit(origin)
        h = urlsplit("//" + host.strip())
        if o.scheme not in ("http", "https") or not o.hostname or not h.hostname:
            return False
        default = 80 if o.scheme == "http" else 443
        return o.hostname.lower() == h.hostname.lower() and (o.port or default) == (h.port or default)
    except ValueError:
        return False


def refusal(method: str, headers: Mapping[str, str], allowed: Iterable[str] = ()) -> str | None:
    """Why a request must be refused (None: it may go on). ``headers``: lower-case names."""
    if method.upper() in SAFE_METHODS:
        return None
    ctype = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if ctype != "application/json":
        return "a request that changes state must have Content-Type: application/json"
    origin = headers.get("origin")
    site = headers.get("sec-fetch-site")
    cross = site is not None and site.strip().lower() not in SAME_ORIGIN_SITES
    if origin is not None:
        try:
            if normalise_origin(origin) in set(allowed):
                return None
        except ValueError:
            pass
        if cross:
            return f"a cross-site request (Sec-Fetch-Site: {site[:40]!r}) may not change state here"  # type: ignore[index]
        own = headers.get("host")
        if own is None or not _same_host(origin, own):
            return f"requests from origin {origin[:100]!r} may not change state here (see --allowed-origin)"
        return None
    if cross:
        return f"a cross-site request (Sec-Fetch-Site: {site[:40]!r}) may not change state here"  # type: ignore[index]
    return None  # neither header: not a browser, so no one's cookies are being borrowed


class OriginGuard:
    """ASGI middleware: :func:`refusal` for every HTTP request, a 403 with the reason on refusal."""

    def __init__(self, app: ASGIApp, allowed: Iterable[str] = ()) -> None:
        self.app = app
        self.allowed = frozenset(normalise_origin(o) for o in allowed)

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] in SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}
        why = refusal(scope["method"], headers, self.allowed)
        if why is None:
            await self.app(scope, receive, send)
            return
        log.info(
            "event=http_refused path=%s status=403 origin=%s reason=%s",
            scope.get("path"),
            json.dumps(headers.get("origin")),
            json.dumps(why),
        )
        body = json.dumps({"error": why}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 403,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})


__all__ = ["OriginGuard", "normalise_origin", "refusal"]
