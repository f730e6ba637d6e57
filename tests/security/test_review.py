"""Fair play of reviews and hints, attacked as a hostile client would.

A review values every decision with what the game's record shows, so it must never exist while
a game is played (for anyone: its players, its creator, a spectator, another name; over any
endpoint), nor for a tournament's game while its deal set is still played in other rotations. A
hint helps the player who asks, so it is for practice only (an unrated game of one person and that
person's own bots), for the caller's own seat, and made from that seat's view alone."""

from __future__ import annotations

import asyncio
import contextlib
import random
from typing import Any

import pytest
from sqlalchemy import update

from moonshot.core.cards import card_list, format_card
from moonshot.core.engine import Phase
from moonshot.core.views import SeatView
from moonshot.http.app import build_app
from moonshot.protocols.sessions.client import Client, RandomPlayer
from moonshot.runtime.tournament import KEY_PREFIX
from moonshot.server.app import ServerApp
from moonshot.store.schema import games
from security.conftest import bots_game, external_tournament, http, sse_events, wait_for

pytestmark = pytest.mark.asyncio

SIMS = 10
EVALUATION_WORDS = ("expected", "moon_for", "moon_against")


async def play_to(app: ServerApp, gid: str, name: str, done: Any) -> None:
    """Play ``name``'s chair (random legal actions, in this process) until ``done(table, seat)``."""
    assert app.turbo is not None
    hosted = app.turbo.games[gid].hosted
    assert hosted is not None
    table, seat, rng = hosted.table, hosted.seat_of(name), random.Random(2)
    assert seat is not None
    async with asyncio.timeout(300):
        while not done(table, seat):
            if seat in table._pending:
                await hosted.act(seat, rng.choice(table.game.legal_actions(seat)))
            await asyncio.sleep(0)


async def finished(app: ServerApp, gid: str, name: str) -> None:
    await play_to(app, gid, name, lambda table, seat: table.done.done())
    assert app.store is not None
    store = app.store
    ok = False

    async def check() -> None:
        nonlocal ok
        await app.turbo.flush()  # type: ignore[union-attr]
        rec = await store.load(gid)
        ok = rec is not None and rec.status == "finished"

    async with asyncio.timeout(60):
        while not ok:
            await check()
            await asyncio.sleep(0.02)


def game_paths(app: ServerApp, gid: str) -> list[str]:
    """Every route of the HTTP app that names a game, with ``gid`` in it."""
    assert app.turbo is not None
    out = []
    for route in build_app(app.turbo).routes:
        path = getattr(route, "path", "")
        if "{game_id}" in path:
            out.append(path.replace("{game_id}", gid))
    return out


async def test_no_review_of_a_running_game_by_anyone_over_any_endpoint(server: ServerApp) -> None:
    assert server.turbo is not None
    async with (
        http(server, "ann") as ann,
        http(server, "bob") as bob,
        http(server, "eve") as eve,
        http(server, "carol") as carol,
    ):
        rated = await bots_game(server, ann)
        practice = await bots_game(server, carol, seed=9, practice=True)  # the creator knows every hand: no review
        # a spectator watches (its stream is open while the attack runs)
        watching = asyncio.create_task(sse_events(eve, f"/game/subscribe/{rated}", lambda e: False, timeout=600))
        for gid in (rated, practice):
            for who in (ann, bob, eve, carol):
                for seat in range(4):
                    for params in ({"seat": seat}, {"seat": seat, "simulations": SIMS}):
                        r = await who.get(f"/api/games/{gid}/review", params=params)
                        assert r.status_code == 409, r.text
                        assert r.json() == {"error": "the game is not over", "code": "game_not_over"}
            # no other endpoint that names the game shows an evaluation (GET and POST, every name)
            for path in game_paths(server, gid):
                if "subscribe" in path:
                    continue
                for who in (ann, bob, eve, carol):
                    for method in ("GET", "POST"):
                        r = await who.request(method, path, json={} if method == "POST" else None)
                        if path.endswith("/hint") and method == "POST" and who is carol and gid == practice:
                            continue  # the practice game's own player, on its turn: a hint is its right
                        assert not any(w in r.text for w in EVALUATION_WORDS), (method, path, r.status_code)
            listing = (await bob.get("/api/games")).text
            assert not any(w in listing for w in EVALUATION_WORDS)
        assert server.turbo.reviews is not None and server.turbo.reviews.started == 0
        watching.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await watching
        # the streams of the game carry no evaluation either (a seat's, a spectator's)
        stream = server.turbo.games[rated].stream
        assert stream is not None
        assert not any(w in str(m.data) for m in stream.messages for w in EVALUATION_WORDS)


async def test_a_tournament_game_is_reviewed_only_once_the_tournament_is_over(server: ServerApp) -> None:
    """A tournament's deal set is dealt again in its other rotations: a review of one of its
    finished games while it runs would show the hands the next rotations hold."""
    assert server.turbo is not None and server.store is not None and server.tournaments is not None
    async with http(server, "ann") as ann, http(server, "org") as org:
        # a finished game that says it belongs to a tournament still running
        gid = await bots_game(server, ann)
        await finished(server, gid, "ann")
        async with server.store.engine.begin() as conn:
            meta = {"tournament": "t-running", "reveal_at_end": False, "protocol": "tournament"}
            await conn.execute(update(games).where(games.c.id == gid).values(meta=meta))
        await server.store.put_value(KEY_PREFIX + "t-running", {"status": "running"})
        for who in (ann, org):
            for seat in range(4):
                r = await who.get(f"/api/games/{gid}/review", params={"seat": seat, "simulations": SIMS})
                assert r.status_code == 403 and "tournament" in r.json()["error"]
        listed = next(g for g in (await ann.get("/api/games")).json() if g["id"] == gid)
        assert listed["reviewable"] is False
        await server.store.put_value(KEY_PREFIX + "t-running", {"status": "finished"})
        r = await ann.get(f"/api/games/{gid}/review", params={"seat": 0, "simulations": SIMS})
        assert r.status_code in (200, 202), r.text
        listed = next(g for g in (await ann.get("/api/games")).json() if g["id"] == gid)
        assert listed["reviewable"] is True

        # a real tournament: an external entrant plays one game over Sessions, then the
        # tournament waits for it; its first game is over, the tournament is not
        tid, token = await external_tournament(org)
        t = server.tournaments.tournaments[tid]
        assert server.sessions_port
        client = await Client.connect("127.0.0.1", server.sessions_port)
        await asyncio.wait_for(client.play(RandomPlayer(random.Random(1)), lobby_code=token), 120)
        await wait_for(lambda: t.results)
        first = t.results[0].game_id
        await server.recorder.flush()  # type: ignore[union-attr]
        assert t.status == "running"
        for who in (ann, org):
            r = await who.get(f"/api/games/{first}/review", params={"seat": 0, "simulations": SIMS})
            assert r.status_code == 403 and "tournament" in r.json()["error"], r.text
        for _ in range(3):
            await asyncio.wait_for(client.play(RandomPlayer(random.Random(2)), lobby_code=token), 120)
        await asyncio.wait_for(asyncio.shield(t.task), 120)  # type: ignore[arg-type]
        await client.close()
        await server.recorder.flush()  # type: ignore[union-attr]
        r = await ann.get(f"/api/games/{first}/review", params={"seat": 1, "simulations": SIMS})
        assert r.status_code in (200, 202), r.text


async def test_hints_are_refused_in_rated_tournament_and_mixed_games(server: ServerApp) -> None:
    assert server.turbo is not None and server.tournaments is not None
    async with http(server, "ann") as ann, http(server, "bob") as bob, http(server, "ext") as ext:
        # rated: the creator and three bots, no seed named
        rated = await bots_game(server, ann)
        r = await ann.post(f"/api/games/{rated}/hint", json={})
        assert r.status_code == 403 and "rated" in r.json()["error"]
        # an unrated (open-hands) game with another person at the table
        r = await ann.post("/lobby/new", json={"variant": "standard", "open_hands": True})
        two = str(r.json())
        assert (await bob.post("/lobby/join", json={"id": two})).status_code == 200
        for _ in range(2):
            assert (await ann.post("/lobby/add_bot", json={"id": two, "algorithm": "random"})).status_code == 200
        for who in (ann, bob):
            r = await who.post(f"/api/games/{two}/hint", json={})
            assert r.status_code == 403, r.text
        # unrated, the creator and its own bots, but not asked for as a practice game: hints are
        # for a game created with "practice": true, never inferred from who sits there
        solo = await bots_game(server, ann, open_hands=True)
        r = await ann.post(f"/api/games/{solo}/hint", json={})
        assert r.status_code == 403 and r.json()["code"] == "hint_not_practice", r.text
        assert (await ann.get(f"/api/games/{solo}/hint")).json() == {"hints": False}
        sit = next(m.data for m in server.turbo.games[solo].stream.messages if m.data["type"] == "sit")  # type: ignore[union-attr]
        assert sit["hints"] is False
        await server.turbo.flush()
        listed = {g["id"]: g for g in (await ann.get("/api/games")).json()}
        assert listed[solo]["hints"] is False
        # a practice game is only ever the creator's and its own bots': nobody joins it
        practice = str((await ann.post("/lobby/new", json={"variant": "standard", "practice": True})).json())
        r = await bob.post("/lobby/join", json={"id": practice})
        assert r.status_code == 403 and r.json()["code"] == "practice_game", r.text
        r = await bob.post("/lobby/add_bot", json={"id": practice, "algorithm": "random"})
        assert r.status_code == 403, r.text
        # an unrated game with a program of another protocol in a chair (a Sessions client)
        r = await ann.post("/lobby/new", json={"variant": "standard", "open_hands": True})
        mixed = str(r.json())
        for _ in range(2):
            assert (await ann.post("/lobby/add_bot", json={"id": mixed, "algorithm": "random"})).status_code == 200
        assert server.sessions_port
        agent = await Client.connect("127.0.0.1", server.sessions_port)
        session = asyncio.create_task(agent.play(RandomPlayer(random.Random(4)), lobby_code=mixed))
        await wait_for(lambda: server.turbo.games[mixed].hosted is not None)  # type: ignore[union-attr]
        r = await ann.post(f"/api/games/{mixed}/hint", json={})
        assert r.status_code == 403 and "other protocols" in r.json()["error"], r.text
        sit = next(m.data for m in server.turbo.games[mixed].stream.messages if m.data["type"] == "sit")  # type: ignore[union-attr]
        assert sit["hints"] is False
        session.cancel()
        await agent.close()
        # a tournament's game, its external entrant playing it over HTTP
        _, token = await external_tournament(ann)
        r = await ext.post("/api/tournaments/play", json={"token": token, "wait": 25})
        assert r.status_code == 200, r.text
        game = r.json()["game"]
        r = await ext.post(f"/api/games/{game}/hint", json={})
        assert r.status_code == 403 and "tournament" in r.json()["error"], r.text
        assert server.turbo.reviews is not None and server.turbo.reviews.hints == 0


async def test_a_hint_is_for_the_callers_own_seat_and_its_view_only(server: ServerApp) -> None:
    assert server.turbo is not None
    pool = server.turbo.reviews
    assert pool is not None
    async with http(server, "ann") as ann, http(server, "bob") as bob:
        gid = await bots_game(server, ann, seed=21, practice=True)
        g = server.turbo.games[gid]
        assert g.hosted is not None
        # another name asks for the seat to act, for a seat, or for nothing in particular
        for body in ({}, {"seat": 0}, {"seat": 1}, {"seat": 2}, {"seat": 3}):
            r = await bob.post(f"/api/games/{gid}/hint", json=body)
            assert r.status_code == 403 and "bob has no seat" in r.json()["error"]
        # ann plays on to a card of her own to choose (two or more legal)
        await play_to(
            server,
            gid,
            "ann",
            lambda table, seat: (
                table.game.phase is Phase.PLAY
                and seat in table.game.to_act()
                and bin(table.game.legal_play_mask(seat)).count("1") >= 2
            ),
        )
        table, seat = g.hosted.table, g.hosted.seat_of("ann")
        assert seat is not None
        legal = {format_card(c) for c in card_list(table.game.legal_play_mask(seat))}
        handed: list[Any] = []
        call = pool.call

        async def spy(task: Any, *args: Any, **kwargs: Any) -> Any:
            handed.append((args, kwargs))
            return await call(task, *args, **kwargs)

        pool.call = spy  # type: ignore[method-assign]
        try:
            r = await ann.post(f"/api/games/{gid}/hint", json={"seat": (seat + 1) % 4})  # a seat in the body: ignored
        finally:
            pool.call = call  # type: ignore[method-assign]
        assert r.status_code == 200, r.text
        hint = r.json()
        assert set(hint) == {"seat", "kind", "best", "margin", "options", "complete", "worlds"}
        assert hint["seat"] == seat and hint["kind"] == "play"
        # the options are the caller's own legal cards, each once, and nothing else
        labels = [o["label"] for o in hint["options"]]
        assert sorted(labels) == sorted(legal) and hint["best"] in legal
        assert all(set(o) == {"label", "expected", "moon_for", "moon_against", "worlds"} for o in hint["options"])
        # what went to the worker: the caller's own seat's view, and nothing of the game itself
        [(args, kwargs)] = handed
        assert len(args) == 1 and isinstance(args[0], SeatView) and args[0].seat == seat
        assert set(kwargs) <= {"think_ms", "simulations", "seed"}
        view = args[0]
        others = [s for s in range(4) if s != seat]
        assert all(view.known_cards[s] & ~table.game.hands[s] == 0 for s in others)
        # the hint is refused once the seat is not to act (bob's refusal aside, ann after the game)
        await finished(server, gid, "ann")
        r = await ann.post(f"/api/games/{gid}/hint", json={})
        assert r.status_code == 409


async def test_review_requests_from_many_names_are_bounded(server: ServerApp) -> None:
    """Thirty names asking for reviews of one finished game at once (each another seat or
    budget: a new job each): never more than the pool's bound queued or running, the rest 429."""
    assert server.turbo is not None and server.turbo.reviews is not None
    pool = server.turbo.reviews
    async with http(server, "ann") as ann:
        gid = await bots_game(server, ann)
        await finished(server, gid, "ann")
    statuses: list[int] = []
    clients = [http(server, f"n{i}") for i in range(30)]
    try:
        for i, c in enumerate(clients):
            r = await c.get(f"/api/games/{gid}/review", params={"seat": i % 4, "simulations": 20 + i})
            statuses.append(r.status_code)
            assert len(pool.jobs) <= pool.max_jobs
            assert r.status_code in (200, 202, 429), r.text
    finally:
        for c in clients:
            await c.aclose()
    assert statuses.count(429) >= 30 - pool.max_jobs
