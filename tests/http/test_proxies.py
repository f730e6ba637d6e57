"""The ASGI middleware that writes the real client and scheme into a request's scope."""

from __future__ import annotations

from typing import Any

import pytest

from moonshot.http.proxies import ForwardedClient, is_secure, websocket_scheme
from moonshot.runtime.clients import Proxies

pytestmark = pytest.mark.asyncio


async def seen(proxies: Proxies, scope: dict[str, Any]) -> dict[str, Any]:
    got: dict[str, Any] = {}

    async def app(s: Any, receive: Any, send: Any) -> None:
        got.update(s)

    await ForwardedClient(app, proxies)(scope, None, None)
    return got


def scope(kind: str, peer: str, *headers: tuple[bytes, bytes], scheme: str = "http") -> dict[str, Any]:
    return {"type": kind, "client": (peer, 4321), "scheme": scheme, "headers": list(headers)}


async def test_a_trusted_proxys_client_and_scheme_replace_the_peer() -> None:
    p = Proxies(["10.0.0.0/8"])
    s = await seen(
        p, scope("http", "10.0.0.1", (b"x-forwarded-for", b"1.1.1.1, 203.0.113.5"), (b"x-forwarded-proto", b"https"))
    )
    assert s["client"] == ("203.0.113.5", 0) and s["scheme"] == "https" and is_secure(s)
    ws = await seen(p, scope("websocket", "10.0.0.1", (b"forwarded", b"for=203.0.113.5;proto=https"), scheme="ws"))
    assert ws["client"] == ("203.0.113.5", 0) and ws["scheme"] == "wss" and websocket_scheme(ws) == "wss"
    # no scheme said: the direct connection's own stays
    plain = await seen(p, scope("http", "10.0.0.1", (b"x-forwarded-for", b"203.0.113.5")))
    assert plain["scheme"] == "http" and not is_secure(plain)


async def test_anyone_elses_headers_are_not_read() -> None:
    headers = ((b"x-forwarded-for", b"203.0.113.5"), (b"x-forwarded-proto", b"https"))
    for p, peer in ((Proxies(["10.0.0.0/8"]), "192.0.2.1"), (Proxies(), "127.0.0.1")):
        s = await seen(p, scope("http", peer, *headers))
        assert s["client"] == (peer, 4321) and s["scheme"] == "http"
    lifespan = await seen(Proxies(["10.0.0.0/8"]), {"type": "lifespan"})
    assert lifespan == {"type": "lifespan"}
