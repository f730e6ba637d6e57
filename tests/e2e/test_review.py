"""A game's review through a real server: a person plays a whole practice game against three bots
over HTTP and SSE, asks for the review of their seat, sees it queued and running with its progress
(202), gets it (200), and gets it again from the store: no second job, not even after a restart."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from e2e.test_turbo_play import Person, new_game
from moonshot.store.reviews import load_review
from protocols.turbo.sse import base_url, http_server

pytestmark = pytest.mark.asyncio

SEATS = ["north", "east", "south", "west"]


async def test_play_review_poll_and_read_from_the_store(tmp_path: Path) -> None:
    async with (
        http_server(tmp_path) as app,
        httpx.AsyncClient(base_url=base_url(app), cookies={"name": "ann"}, timeout=60) as ann,
    ):
        assert app.turbo is not None and app.turbo.reviews is not None
        pool = app.turbo.reviews
        gid = await new_game(ann, "turbo", seed=17)
        for alg in ("random", "heuristic", "random"):
            assert (await ann.post("/lobby/add_bot", json={"id": gid, "algorithm": alg})).status_code == 200
        person = Person(ann, gid, "ann", seed=3)
        events = await asyncio.wait_for(person.play(), 180)
        assert person.errors == []
        sit = next(e for e in events if e["type"] == "sit")
        assert sit["hints"] is True  # a practice game: the table page may show its Hint button
        seat = next(i for i, s in enumerate(SEATS) if sit[s]["name"] == "ann")
        await app.recorder.flush()  # type: ignore[union-attr]

        params = {"seat": seat, "simulations": 300}
        polls: list[dict[str, Any]] = []
        async with asyncio.timeout(300):
            while True:
                r = await ann.get(f"/api/games/{gid}/review", params=params)
                if r.status_code == 200:
                    break
                assert r.status_code == 202, r.text
                wait = 1 if r.json()["status"] == "running" else min(10, 1 + r.json()["position"])
                assert r.headers["retry-after"] == str(wait)  # a queued review is polled less often
                polls.append(r.json())
                await asyncio.sleep(0.2)
        review = r.json()["review"]
        assert polls, "the first request starts the review: 202"
        assert polls[0]["status"] in ("queued", "running")
        done = [p["progress"]["done"] for p in polls]
        assert done == sorted(done)  # progress only goes forward
        n = len(review["decisions"])
        assert all(p["progress"]["total"] in (0, n) for p in polls)
        assert review["format"] == "moonshot-review/1" and review["seat"] == seat and review["game_id"] == gid
        assert review["summary"]["decisions"] == n > 0
        assert pool.started == 1

        store = app.store
        assert store is not None
        async with asyncio.timeout(60):  # written by the server as the job ended
            while await load_review(store, gid, seat, "s300") is None:
                await asyncio.sleep(0.05)
        again = await ann.get(f"/api/games/{gid}/review", params=params)
        assert again.status_code == 200 and again.json()["review"] == review
        assert pool.started == 1  # the store answered

    # a new server process on the same store: the review is read, never computed again
    async with (
        http_server(tmp_path) as app2,
        httpx.AsyncClient(base_url=base_url(app2), cookies={"name": "bob"}, timeout=60) as bob,
    ):
        r = await bob.get(f"/api/games/{gid}/review", params=params)
        assert r.status_code == 200 and r.json()["review"] == review
        assert app2.turbo is not None and app2.turbo.reviews is not None and app2.turbo.reviews.started == 0
