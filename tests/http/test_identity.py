"""moonshot.http.identity: a name nobody had is bound only while the caller's address may bind a
new one (``admit_new``, the server's per-address rate of new names); a name it has, or one whose
signed cookie a browser brings back, is no new name."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

from moonshot.http.endpoints import endpoint
from moonshot.http.identity import Identity
from moonshot.runtime.limits import ClientGuard, ClientLimits

pytestmark = pytest.mark.asyncio


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def app_with(identity: Identity) -> httpx.AsyncClient:
    async def me(request: Request, caller: Any) -> Any:
        return {"name": caller.name}

    app = Starlette(routes=[Route("/me", endpoint(me, lambda: identity))])
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


def cookie(values: dict[str, str]) -> dict[str, str]:
    """A request's Cookie header, exactly these cookies (what a client that keeps none would send)."""
    return {"cookie": "; ".join(f"{k}={v}" for k, v in values.items())}


async def test_new_names_past_the_rate_get_429_with_when_and_known_names_do_not() -> None:
    clock = Clock()
    guard = ClientGuard(ClientLimits(names_per_s=0.5, names_burst=2), clock)
    identity = Identity("secret")
    identity.admit_new = lambda: guard.new_name("10.0.0.1")
    async with app_with(identity) as c:
        first = await c.get("/me", headers=cookie({"name": "ann"}))
        assert first.status_code == 200
        ann_cookie = dict(first.cookies)
        assert (await c.get("/me", headers=cookie({"name": "bob"}))).status_code == 200
        refused = await c.get("/me", headers=cookie({"name": "cid"}))
        assert refused.status_code == 429 and refused.headers["retry-after"] == "2"
        assert refused.json()["code"] == "rate_limited" and refused.json()["args"] == {"seconds": 2.0}
        assert identity.record("cid") is None  # nothing was bound
        assert (await c.get("/me", headers=cookie({"name": "ann", **ann_cookie}))).status_code == 200  # it has it
        clock.now += 2.0
        assert (await c.get("/me", headers=cookie({"name": "cid"}))).status_code == 200
    assert guard.names_by_address.refused == 1


async def test_a_refused_new_name_is_answered_after_the_tarpit() -> None:
    identity = Identity("secret")
    identity.admit_new = lambda: 5.0
    identity.tarpit = 0.2
    async with app_with(identity) as c:
        began = time.monotonic()
        assert (await c.get("/me", headers=cookie({"name": "flood1"}))).status_code == 429
        assert time.monotonic() - began >= 0.2


async def test_open_names_bind_nothing_and_ask_no_rate() -> None:
    identity = Identity("secret", open_names=True)
    identity.admit_new = lambda: 5.0
    async with app_with(identity) as c:
        assert (await c.get("/me", headers=cookie({"name": "anyone"}))).status_code == 200
