"""The review and hint routes against a real server (``ServerApp`` with HTTP on a free loopback
port, a SQLite store, one review worker): a review's 202s with progress, its 200, the store serving
it again at no cost, the refusals (404, 400, 409, 429, 503), ``reviewable`` and ``hints`` in the
games' JSON and the table's ``sit``, a hint's answer, and who may have hints."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from moonshot.http.lobby import LobbyGame, Member
from moonshot.http.review import hint_refusal
from moonshot.runtime.limits import Rates
from moonshot.server.app import ServerApp
from moonshot.server.config import ServerConfig
from moonshot.store.reviews import load_review

pytestmark = pytest.mark.asyncio

SIMS = 10  # worlds a decision in these tests: the real review, kept cheap


@pytest_asyncio.fixture
async def app(tmp_path: Path) -> AsyncIterator[ServerApp]:
    server = ServerApp(
        ServerConfig(
            sessions_port=None,
            http_port=0,
            db_url=f"sqlite+aiosqlite:///{tmp_path / 'games.db'}",
            bot="random",
            secret="review-tests",
            review_workers=1,
        )
    )
    await server.start()
    yield server
    await server.stop()


def client(app: ServerApp, name: str | None) -> httpx.AsyncClient:
    cookies = {"name": name} if name is not None else {}
    return httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}", cookies=cookies, timeout=60)


async def until(check: Any, timeout: float = 120) -> None:
    async with asyncio.timeout(timeout):
        while not await check():
            await asyncio.sleep(0.02)


async def start_game(c: httpx.AsyncClient, variant: str = "standard", seed: int | None = None) -> str:
    body: dict[str, Any] = {"variant": variant}
    if seed is not None:
        body.update(seed=seed, practice=True)  # a practice game: the creator and its own bots, unrated
    r = await c.post("/lobby/new", json=body)
    assert r.status_code == 200, r.text
    gid: str = r.json()
    for _ in range(3):
        r = await c.post("/lobby/add_bot", json={"id": gid, "algorithm": "random"})
        assert r.status_code == 200, r.text
    return gid


async def finish(app: ServerApp, gid: str, name: str) -> None:
    """Play ``name``'s chair (random legal actions, in this process) until the game is over and
    stored as finished."""
    assert app.turbo is not None and app.store is not None
    hosted = app.turbo.games[gid].hosted
    assert hosted is not None
    table, seat, rng = hosted.table, hosted.seat_of(name), random.Random(1)
    assert seat is not None
    async with asyncio.timeout(300):
        while not table.done.done():
            if seat in table._pending:
                await hosted.act(seat, rng.choice(table.game.legal_actions(seat)))
            await asyncio.sleep(0)
    store = app.store

    async def stored() -> bool:
        await app.turbo.flush()  # type: ignore[union-attr]
        rec = await store.load(gid)
        return rec is not None and rec.status == "finished"

    await until(stored)


async def review_done(
    c: httpx.AsyncClient, gid: str, seat: int, sims: int = SIMS
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Poll the review until 200: its JSON and every 202 seen."""
    seen: list[dict[str, Any]] = []
    async with asyncio.timeout(300):
        while True:
            r = await c.get(f"/api/games/{gid}/review", params={"seat": seat, "simulations": sims})
            if r.status_code == 200:
                return r.json(), seen
            assert r.status_code == 202, r.text
            wait = 1 if r.json()["status"] == "running" else min(10, 1 + r.json()["position"])
            assert r.headers["retry-after"] == str(wait)  # a queued review is polled less often
            seen.append(r.json())
            await asyncio.sleep(0.1)


async def test_a_review_is_queued_polled_stored_and_served_again_for_nothing(app: ServerApp) -> None:
    assert app.turbo is not None and app.store is not None
    pool = app.turbo.reviews
    async with client(app, "ann") as ann, client(app, "bob") as bob:
        gid = await start_game(ann)
        listed = (await ann.get("/api/games")).json()
        assert listed[0]["id"] == gid and listed[0]["reviewable"] is False and listed[0]["hints"] is False
        for c in (ann, bob):  # no review of a running game, for anyone
            r = await c.get(f"/api/games/{gid}/review", params={"seat": 0})
            assert r.status_code == 409 and r.json()["error"] == "the game is not over"
        await finish(app, gid, "ann")
        assert (await ann.get(f"/api/games/{gid}")).json()["reviewable"] is True
        assert (await ann.get("/api/games")).json()[0]["reviewable"] is True

        r = await bob.get(f"/api/games/{gid}/review", params={"seat": 2, "simulations": SIMS})
        assert r.status_code == 202, r.text
        first = r.json()
        assert first["status"] in ("queued", "running") and set(first["progress"]) == {"done", "total"}
        assert isinstance(first["position"], int)
        review, seen = await review_done(ann, gid, 2)  # another name polls the same job
        assert pool.started == 1
        assert review["review"]["format"] == "moonshot-review/1"
        assert review["review"]["seat"] == 2 and review["review"]["game_id"] == gid
        assert review["review"]["budget"]["simulations"] == SIMS
        assert review["status"] == "done" and review["review"]["decisions"]
        totals = {s["progress"]["total"] for s in [first, *seen]} - {0}
        assert totals <= {len(review["review"]["decisions"])}

        async def kept() -> bool:
            return await load_review(app.store, gid, 2, f"s{SIMS}") is not None  # type: ignore[arg-type]

        await until(kept)
        again = await bob.get(f"/api/games/{gid}/review", params={"seat": 2, "simulations": SIMS})
        assert again.status_code == 200 and again.json()["review"] == review["review"]
        assert pool.started == 1  # read from the store: no new job


async def test_refusals(app: ServerApp) -> None:
    assert app.turbo is not None
    async with client(app, "ann") as ann, client(app, None) as anonymous:
        r = await ann.get("/api/games/nope/review")
        assert r.status_code == 404 and "no stored game" in r.json()["error"]
        gid = await start_game(ann)
        await finish(app, gid, "ann")
        for params in ({"seat": 4}, {"seat": -1}, {"seat": "x"}, {"simulations": 0}, {"simulations": 10**6}):
            r = await ann.get(f"/api/games/{gid}/review", params=params)
            assert r.status_code == 400, (params, r.text)
        assert (await anonymous.get(f"/api/games/{gid}/review")).status_code == 401
        pool, app.turbo.reviews = app.turbo.reviews, None
        try:
            r = await ann.get(f"/api/games/{gid}/review", params={"seat": 1})
            assert r.status_code == 503 and "--review-workers 0" in r.json()["error"]
        finally:
            app.turbo.reviews = pool


async def test_reviews_started_are_limited_per_name(app: ServerApp) -> None:
    assert app.turbo is not None
    app.guard.reviews_by_name = Rates(0.0001, 1, time.monotonic, "reviews started under this name")
    async with client(app, "ann") as ann, client(app, "bob") as bob:
        gid = await start_game(ann)
        await finish(app, gid, "ann")
        assert (await ann.get(f"/api/games/{gid}/review", params={"seat": 0, "simulations": SIMS})).status_code in (
            200,
            202,
        )
        r = await ann.get(f"/api/games/{gid}/review", params={"seat": 1, "simulations": SIMS})
        assert r.status_code == 429 and "reviews started under this name" in r.json()["error"]
        assert "retry-after" in r.headers
        # polling the job already asked for costs nothing; another name may start its own
        assert (await ann.get(f"/api/games/{gid}/review", params={"seat": 0, "simulations": SIMS})).status_code in (
            200,
            202,
        )
        assert (await bob.get(f"/api/games/{gid}/review", params={"seat": 1, "simulations": SIMS})).status_code in (
            200,
            202,
        )
        await review_done(ann, gid, 0)
        await review_done(bob, gid, 1)


async def test_a_hint_in_a_practice_game(app: ServerApp) -> None:
    assert app.turbo is not None
    async with client(app, "ann") as ann, client(app, "bob") as bob:
        gid = await start_game(ann, seed=5)
        g = app.turbo.games[gid]
        assert g.hosted is not None and g.stream is not None
        sit = next(m.data for m in g.stream.messages if m.data["type"] == "sit")
        assert sit["hints"] is True
        assert (await ann.get(f"/api/games/{gid}/hint")).json() == {"hints": True}
        assert (await bob.get(f"/api/games/{gid}/hint")).json() == {"hints": False}
        assert (await ann.get("/api/games")).json()[0]["hints"] is True
        table = g.hosted.table
        seat = g.hosted.seat_of("ann")
        assert seat is not None and seat in table.game.to_act()  # the first deal's pass
        before = table.game.legal_actions(seat)
        r = await ann.post(f"/api/games/{gid}/hint", json={})
        assert r.status_code == 200, r.text
        hint = r.json()
        assert hint["seat"] == seat and hint["kind"] == "pass"
        assert hint["best"] == hint["options"][0]["label"] and hint["margin"] >= 0
        expected = [o["expected"] for o in hint["options"]]
        assert expected == sorted(expected)
        assert table.game.legal_actions(seat) == before  # a hint changes nothing at the table
        r = await bob.post(f"/api/games/{gid}/hint", json={})
        assert r.status_code == 403 and "bob has no seat" in r.json()["error"]
        await finish(app, gid, "ann")
        r = await ann.post(f"/api/games/{gid}/hint", json={})
        assert r.status_code == 409 and "over" in r.json()["error"]
        assert (await ann.post("/api/games/nope/hint", json={})).status_code == 404


async def test_no_hint_in_a_rated_game(app: ServerApp) -> None:
    assert app.turbo is not None
    async with client(app, "ann") as ann:
        gid = await start_game(ann)  # no seed: rated
        g = app.turbo.games[gid]
        assert g.stream is not None
        assert next(m.data for m in g.stream.messages if m.data["type"] == "sit")["hints"] is False
        r = await ann.post(f"/api/games/{gid}/hint", json={})
        assert r.status_code == 403 and "rated" in r.json()["error"]
        assert (await ann.get(f"/api/games/{gid}/hint")).json() == {"hints": False}


async def test_who_may_have_hints() -> None:
    def game(*members: Member, practice: bool = True, open_hands: bool = False) -> LobbyGame:
        return LobbyGame("g", "standard", 1, members[0].name, list(members), practice=practice, open_hands=open_hands)

    ann = Member("ann")
    bots = [Member(f"b{i}", "bot", "random") for i in range(3)]
    bots_ = ["random", "heuristic"]
    assert hint_refusal(game(ann, *bots), "ann", bots_) is None
    assert hint_refusal(game(ann, *bots), "ANN", bots_) is None  # names compare as names do
    assert "no seat" in (hint_refusal(game(ann, *bots), "bob", bots_) or "")
    assert "rated" in (hint_refusal(game(ann, *bots, practice=False), "ann", bots_) or "")
    refused = hint_refusal(game(ann, *bots, practice=False), "ann", bots_)
    assert refused is not None and refused.code == "hint_rated"  # the web app's words for it
    # unrated (open hands), but another person sits there
    two = game(ann, Member("bob"), *bots[:2], practice=False, open_hands=True)
    assert "another person" in (hint_refusal(two, "ann", bots_) or "")
    # a player of another protocol in a chair (its seat is a program)
    remote = Member("agent", "bot", None, remote=object())  # type: ignore[arg-type]
    assert "other protocols" in (
        hint_refusal(game(ann, remote, *bots[:2], practice=False, open_hands=True), "ann", bots_) or ""
    )
    # a chair whose program is not one of the lobby's bots
    stranger = Member("x", "bot", "program")
    assert "program" in (hint_refusal(game(ann, stranger, *bots[:2]), "ann", bots_) or "")


async def test_a_review_whose_worker_died_is_reported_once_then_asked_again(
    app: ServerApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    import moonshot.http.review as review_module
    import reviewkit

    assert app.turbo is not None
    pool = app.turbo.reviews
    async with client(app, "ann") as ann:
        gid = await start_game(ann)
        await finish(app, gid, "ann")
        monkeypatch.setattr(review_module, "review_stored", reviewkit.crash_review)
        params = {"seat": 3, "simulations": SIMS}
        async with asyncio.timeout(120):
            while True:
                r = await ann.get(f"/api/games/{gid}/review", params=params)
                if r.status_code != 202:
                    break
                await asyncio.sleep(0.05)
        assert r.status_code == 500 and "died" in r.json()["error"] and "ask again" in r.json()["error"]
        assert pool.failed == 1
        monkeypatch.undo()
        review, _ = await review_done(ann, gid, 3)  # asked again: a new job, on fresh workers
        assert review["review"]["seat"] == 3 and pool.started == 2
