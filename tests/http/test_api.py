"""The Turbo HTTP API against the ASGI app (httpx.ASGITransport): every endpoint, every error,
identity in both modes, the /api extensions and the web app's pages. Streams are tested on a
real server in test_streams.py."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from moonshot.bots.registry import bot_names, make_bot
from moonshot.core.cards import card_list, format_card
from moonshot.core.engine import Phase
from moonshot.http.app import build_app
from moonshot.http.identity import SESSION_COOKIE
from moonshot.http.lobby import LobbyOptions, TurboLobby
from moonshot.runtime.table import wait_closed
from moonshot.store import Store, StoreRecorder

pytestmark = pytest.mark.asyncio


class Env:
    def __init__(self, lobby: TurboLobby, app: Any, store: Store, recorder: StoreRecorder) -> None:
        self.lobby = lobby
        self.app = app
        self.store = store
        self.recorder = recorder

    def client(self, name: str | None = None, **cookies: str) -> httpx.AsyncClient:
        jar = dict(cookies)
        if name is not None:
            jar["name"] = name
        return httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app), base_url="http://test", cookies=jar)


async def make_env(tmp_path: Path, open_names: bool = False) -> Env:
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'g.db'}")
    recorder = StoreRecorder(store, batch_delay=0)
    recorder.start()
    lobby = TurboLobby(
        secret="test-secret",
        make_bot=make_bot,
        bot_names=bot_names(),
        recorder=recorder,
        store=store,
        options=LobbyOptions(open_names=open_names, seed=5),
    )
    static = tmp_path / "static"
    static.mkdir()
    (static / "lobby.html").write_text("<html>lobby</html>")
    (static / "app.js").write_text("export {}")
    return Env(lobby, build_app(lobby, static), store, recorder)


async def close_env(env: Env) -> None:
    tables = [g.hosted.table for g in env.lobby.games.values() if g.hosted is not None]
    for t in tables:
        t.stop()
    await wait_closed(tables, 5)
    env.lobby.close()
    await env.lobby.flush()
    await env.recorder.close()
    await env.store.close()


@pytest_asyncio.fixture
async def env(tmp_path: Path) -> AsyncIterator[Env]:
    e = await make_env(tmp_path)
    yield e
    await close_env(e)


async def new_game(c: httpx.AsyncClient, **body: Any) -> str:
    r = await c.post("/lobby/new", json={"rules": "classic", **body})
    assert r.status_code == 200, r.text
    game_id = r.json()
    assert isinstance(game_id, str)
    return game_id


async def game_with_bots(env: Env, c: httpx.AsyncClient, variant: str = "standard", **body: Any) -> str:
    gid = await new_game(c, variant=variant, **body)
    for _ in range(3):
        r = await c.post("/lobby/add_bot", json={"id": gid, "rules": "classic", "algorithm": "random"})
        assert r.status_code == 200, r.text
    return gid


async def wait_for(predicate: Any, timeout: float = 10) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        assert loop.time() < end, "timed out"
        await asyncio.sleep(0.01)


# ---------------------------------------------------------------- identity
POSTS = [
    "/lobby/new",
    "/lobby/join",
    "/lobby/add_bot",
    "/lobby/leave",
    "/lobby/chat",
    "/game/pass",
    "/game/charge",
    "/game/expose",
    "/game/play",
    "/game/claim",
    "/game/accept_claim",
    "/game/reject_claim",
    "/game/chat",
]


async def test_every_endpoint_needs_a_name_cookie(env: Env) -> None:
    async with env.client() as c:
        for path in POSTS:
            r = await c.post(path, json={"id": "x"})
            assert r.status_code == 401 and "name" in r.json()["error"], path
        for path in ("/lobby/subscribe", "/game/subscribe/x", "/api/me"):
            r = await c.get(path)
            assert r.status_code == 401, path


async def test_a_name_is_bound_to_the_first_browser_while_it_is_held(env: Env) -> None:
    async with env.client("ann") as first:
        r = await first.get("/api/me")
        assert r.status_code == 200 and r.json()["name"] == "ann"
        assert len(r.json()["recovery"]) == 24  # the name's recovery code, shown with the new binding
        assert SESSION_COOKIE in r.cookies  # the binding: HttpOnly, signed, same-site only
        assert "httponly" in r.headers["set-cookie"].lower()
        assert "samesite=strict" in r.headers["set-cookie"].lower()
        assert (await first.get("/api/me")).json() == {"name": "ann"}  # the code is shown once
        gid = await new_game(first)  # ann now sits in an open game: the name is held
        async with env.client("ann") as thief:
            r = await thief.post("/lobby/leave", json={"id": gid})
            assert r.status_code == 403 and "in use" in r.json()["error"]
        async with env.client("ann", **{SESSION_COOKIE: "forged.value"}) as forger:
            assert (await forger.get("/api/me")).status_code == 403
        r = await first.post("/lobby/leave", json={"id": gid})  # the real ann still can
        assert r.status_code == 200
    async with env.client("ann") as later:  # no longer held: a new browser may take the name
        r = await later.get("/api/me")
        assert r.status_code == 200 and SESSION_COOKIE in r.cookies


async def test_a_cookie_from_an_earlier_binding_of_the_name_does_not_count(env: Env) -> None:
    """Each binding has its own nonce: a browser that once held a name (or took it while nobody
    held it) cannot act for the browser that holds it now."""
    async with env.client("ann") as early:  # takes "ann" while nobody holds it
        assert (await early.get("/api/me")).status_code == 200
        stale = early.cookies[SESSION_COOKIE]
    async with env.client("ann") as owner:  # not held, so a new browser binds it afresh...
        r = await owner.get("/api/me")
        assert r.status_code == 200 and r.cookies[SESSION_COOKIE] != stale
        gid = await new_game(owner)  # ...and now holds it
        async with env.client("ann", **{SESSION_COOKIE: stale}) as thief:
            assert (await thief.get("/api/me")).status_code == 403
            assert (await thief.post("/lobby/leave", json={"id": gid})).status_code == 403
        assert (await owner.post("/lobby/leave", json={"id": gid})).status_code == 200


async def test_a_session_cookie_for_another_name_does_not_count(env: Env) -> None:
    async with env.client("bob") as bob:
        await new_game(bob)
        token = bob.cookies[SESSION_COOKIE]
    async with env.client("ann") as ann:
        await new_game(ann)
    async with env.client("ann", **{SESSION_COOKIE: token}) as c:
        assert (await c.get("/api/me")).status_code == 403


async def test_open_names_trusts_the_cookie_as_turbo_does(tmp_path: Path) -> None:
    e = await make_env(tmp_path, open_names=True)
    try:
        async with e.client("ann") as a:
            r = await a.post("/lobby/new", json={"rules": "chain"})
            assert SESSION_COOKIE not in r.cookies
            gid = r.json()
        async with e.client("ANN") as other:  # anyone may say they are ann, in any spelling
            assert (await other.post("/lobby/leave", json={"id": gid})).status_code == 200
    finally:
        await close_env(e)


async def test_bad_names_are_refused(env: Env) -> None:
    for name in ("x" * 41, "evil (bot)", "tab\tname"):
        async with env.client(name) as c:
            assert (await c.get("/api/me")).status_code == 400


# ---------------------------------------------------------------- lobby
async def test_lobby_new_join_add_bot_leave(env: Env) -> None:
    async with env.client("ann") as ann, env.client("bob") as bob:
        gid = await new_game(ann, rules="blind")
        r = await bob.post("/lobby/join", json={"id": gid, "rules": "chain"})
        assert r.status_code == 200 and r.json() == ["ann", "bob"]
        r = await bob.post("/lobby/join", json={"id": gid, "rules": "chain"})
        assert r.status_code == 409 and "already" in r.json()["error"]
        r = await ann.post("/lobby/add_bot", json={"id": gid, "rules": "bridge", "algorithm": "heuristic"})
        assert r.status_code == 200 and r.json().endswith(" (bot)")
        assert env.lobby.lobby_state()["games"][gid] == [
            {"type": "human", "name": "ann"},
            {"type": "human", "name": "bob"},
            {"type": "bot", "name": r.json(), "algorithm": "heuristic"},
        ]
        r = await bob.post("/lobby/leave", json={"id": gid})
        assert r.status_code == 200 and r.json() is None
        assert env.lobby.games[gid].names() == ["ann", env.lobby.games[gid].members[1].name]
        r = await ann.post("/lobby/leave", json={"id": gid})  # the last person: the game goes
        assert gid not in env.lobby.games


async def test_lobby_errors(env: Env) -> None:
    async with env.client("ann") as ann:
        assert (await ann.post("/lobby/join", json={"id": "nope", "rules": "classic"})).status_code == 404
        r = await ann.post("/lobby/new", json={"rules": "sideways"})
        assert r.status_code == 400 and "charging rules" in r.json()["error"]
        r = await ann.post("/lobby/new", json={"rules": "classic", "variant": "spades"})
        assert r.status_code == 400 and "variant" in r.json()["error"]
        gid = await new_game(ann)
        r = await ann.post("/lobby/add_bot", json={"id": gid, "rules": "classic", "algorithm": "oracle"})
        assert r.status_code == 400 and "algorithm" in r.json()["error"]
        for _ in range(3):
            await ann.post("/lobby/add_bot", json={"id": gid, "rules": "classic", "algorithm": "random"})
        async with env.client("bob") as bob:
            r = await bob.post("/lobby/join", json={"id": gid, "rules": "classic"})
            assert r.status_code == 409 and "started" in r.json()["error"]
            r = await bob.post("/lobby/add_bot", json={"id": gid, "rules": "classic", "algorithm": "random"})
            assert r.status_code in (403, 409)
        r = await ann.post("/lobby/leave", json={"id": gid})
        assert r.status_code == 409 and "started" in r.json()["error"]
        r = await ann.post("/lobby/chat", json={"message": "   "})
        assert r.status_code == 400


async def test_charging_rules_are_drawn_from_the_proposals_and_the_proposer_sits_north(env: Env) -> None:
    proposals = {"ann": "blind", "bob": "chain", "cy": "bridge", "di": "blind_chain"}
    clients = {n: env.client(n) for n in proposals}
    try:
        gid = await new_game(clients["ann"], rules="blind")
        for n in ("bob", "cy", "di"):
            r = await clients[n].post("/lobby/join", json={"id": gid, "rules": proposals[n]})
            assert r.status_code == 200
        hosted = env.lobby.games[gid].hosted
        assert hosted is not None
        north = hosted.players[0].name
        drawn = hosted.table.rules.charging
        assert drawn is not None and drawn.value.replace("-", "_") == proposals[north]
        await wait_for(lambda: hosted.stream.messages)
        sit = hosted.stream.messages[0].data
        assert sit["rules"] == proposals[north] and sit["north"]["name"] == north
        # reproducible from the seed: the same proposals and seed draw the same chair for north
        assert env.lobby.rules_for(env.lobby.games[gid])[1][0].name == north
    finally:
        for c in clients.values():
            await c.aclose()


async def test_add_bot_accepts_every_registry_bot(env: Env) -> None:
    async with env.client("ann") as ann:
        for alg in bot_names():
            gid = await new_game(ann)
            r = await ann.post("/lobby/add_bot", json={"id": gid, "rules": "classic", "algorithm": alg})
            assert r.status_code == 200 and r.json().endswith(" (bot)"), alg
            assert env.lobby.games[gid].members[-1].algorithm == alg


# ---------------------------------------------------------------- game actions
async def test_game_actions_errors_and_a_legal_play(env: Env) -> None:
    async with env.client("ann") as ann, env.client("eve") as eve:
        gid = await game_with_bots(env, ann, "standard", seed=77, practice=True)  # a seed: only a practice game
        hosted = env.lobby.games[gid].hosted
        assert hosted is not None
        seat = hosted.seat_of("ann")
        assert seat is not None
        table = hosted.table
        await wait_for(lambda: seat in table._pending)
        g = table.game
        assert g.phase is Phase.PASS
        r = await eve.post("/game/pass", json={"id": gid, "cards": ["2C", "3C", "4C"]})
        assert r.status_code == 403 and "no seat" in r.json()["error"]
        r = await ann.post("/game/pass", json={"id": "nope", "cards": []})
        assert r.status_code == 404
        r = await ann.post("/game/play", json={"id": gid, "card": "2C"})
        assert r.status_code == 409 and "pass phase" in r.json()["error"]
        hand = card_list(g.hands[seat])
        not_mine = format_card(card_list(~g.hands[seat] & ((1 << 52) - 1))[0])
        r = await ann.post(
            "/game/pass", json={"id": gid, "cards": [format_card(hand[0]), not_mine, format_card(hand[1])]}
        )
        assert r.status_code == 409 and "does not hold" in r.json()["error"]
        assert r.json()["code"] == "illegal.not_held"  # the engine's reason code, for the web app's words
        r = await ann.post("/game/claim", json={"id": gid})
        assert r.status_code == 409 and "no claims" in r.json()["error"]
        assert (r.json()["code"], r.json()["args"]) == ("illegal.no_claims", {"variant": "standard"})
        before = table.version
        r = await ann.post("/game/pass", json={"id": gid, "cards": [format_card(c) for c in hand[:3]]})
        assert r.status_code == 200 and r.json() is None
        assert table.version > before
        # play until it is ann's turn with a choice, then try an illegal card
        await wait_for(lambda: g.phase is Phase.PLAY and g.turn == seat and seat in table._pending, 20)
        legal = g.legal_play_mask(seat)
        illegal = g.hands[seat] & ~legal
        if illegal:
            r = await ann.post("/game/play", json={"id": gid, "card": format_card(card_list(illegal)[0])})
            assert r.status_code == 409 and "may not play" in r.json()["error"]
        other = (seat + 1) % 4
        r = await ann.post("/game/accept_claim", json={"id": gid, "claimer": ["north", "east", "south", "west"][other]})
        assert r.status_code == 409 and "no claim" in r.json()["error"]
        r = await ann.post("/game/play", json={"id": gid, "card": format_card(card_list(legal)[0])})
        assert r.status_code == 200


async def test_not_your_turn_is_409(env: Env) -> None:
    async with env.client("ann") as ann:
        gid = await game_with_bots(env, ann, "kierki")  # no passing: straight to play
        hosted = env.lobby.games[gid].hosted
        assert hosted is not None
        seat = hosted.seat_of("ann")
        g = hosted.table.game
        await wait_for(lambda: g.phase is Phase.PLAY and g.turn == seat)
        # ann waits on the table: nobody else moves, so another seat's turn never comes by itself;
        # ask for a card while it is ann's turn but as if it was not: the engine's reason comes back
        card = format_card(card_list(g.legal_play_mask(seat))[0])
        r = await ann.post("/game/play", json={"id": gid, "card": card})
        assert r.status_code == 200
        r = await ann.post("/game/play", json={"id": gid, "card": card})
        assert r.status_code == 409 and ("turn" in r.json()["error"] or "does not hold" in r.json()["error"])


async def test_game_actions_on_an_open_game_are_409(env: Env) -> None:
    async with env.client("ann") as ann:
        gid = await new_game(ann)
        r = await ann.post("/game/play", json={"id": gid, "card": "2C"})
        assert r.status_code == 409 and "not started" in r.json()["error"]
        r = await ann.post("/game/chat", json={"id": gid, "message": "anyone?"})
        assert r.status_code == 200
        assert env.lobby.games[gid].stream.messages[-1].data == {"type": "chat", "name": "ann", "message": "anyone?"}  # type: ignore[union-attr]


async def test_junk_at_every_post_endpoint_is_a_client_error_and_changes_nothing(env: Env) -> None:
    rng = random.Random(3)
    async with env.client("ann") as ann:
        gid = await game_with_bots(env, ann, "turbo")
        hosted = env.lobby.games[gid].hosted
        assert hosted is not None
        await wait_for(lambda: hosted.table.version > 5)
        await asyncio.sleep(0.2)
        before = hosted.table.version
        games_before = set(env.lobby.games)
        junk_values: list[Any] = [
            None,
            1,
            -1,
            1.5,
            True,
            "",
            "QS",
            "x" * 300,
            [],
            ["QS"] * 60,
            {},
            {"a": 1},
            [[["deep"]]],
        ]
        bodies: list[bytes] = [b"", b"{", b"null", b"[]", b'"str"', b"\xff\xfe", b"{" * 5000, b'{"id": }']
        for _ in range(40):
            body = {
                k: rng.choice(junk_values)
                for k in rng.sample(
                    ["id", "card", "cards", "claimer", "rules", "algorithm", "message", "variant", "seed"], 3
                )
            }
            bodies.append(json.dumps(body).encode())
        for path in POSTS:
            for raw in bodies:
                r = await ann.post(path, content=raw, headers={"content-type": "application/json"})
                if r.status_code == 200:  # junk that happens to be a valid request
                    assert path in ("/lobby/new", "/lobby/chat"), (path, raw[:80])
                    continue
                assert 400 <= r.status_code < 500, (path, raw[:50], r.status_code, r.text)
                assert "error" in r.json()
        big = b'{"message": "' + b"x" * (70 * 1024) + b'"}'
        for path in POSTS:
            r = await ann.post(path, content=big, headers={"content-type": "application/json"})
            assert r.status_code == 413, path
        assert hosted.table.version == before
        assert all(env.lobby.games[g].created_by == "ann" for g in set(env.lobby.games) - games_before)


async def test_unknown_paths_and_methods_are_json_errors(env: Env) -> None:
    async with env.client("ann") as c:
        r = await c.get("/nowhere")
        assert r.status_code == 404 and "error" in r.json()
        r = await c.get("/lobby/new")
        assert r.status_code == 405 and "error" in r.json()


# ---------------------------------------------------------------- /api and pages
async def test_api_variants_bots_and_me(env: Env) -> None:
    async with env.client() as anon:
        variants = (await anon.get("/api/variants")).json()
        names = [v["name"] for v in variants]
        assert names == ["turbo", "standard", "omnibus", "trend", "kierki"]
        by = {v["name"]: v for v in variants}
        assert by["turbo"]["charging"] and by["turbo"]["claims"] and by["turbo"]["passing"]
        assert by["trend"]["exposing"] and not by["trend"]["charging"]
        assert not by["kierki"]["passing"] and all(v["description"] for v in variants)
        assert (await anon.get("/api/bots")).json() == bot_names()
        assert (await anon.get("/api/me")).status_code == 401


async def test_api_variants_say_each_deal_kinds_points(env: Env) -> None:
    """``scoring``: each deal kind's card points, a trick's own points and the points of winning
    trick N, as the rules hold them (screen-reader mode says a trick's points from it)."""
    from moonshot.core.cards import parse_card
    from moonshot.core.variants import find_variant

    async with env.client() as anon:
        variants = (await anon.get("/api/variants")).json()
    by = {v["name"]: v for v in variants}
    standard = by["standard"]["scoring"]
    assert len(standard) == 1
    assert standard[0]["cards"]["QS"] == 13 and standard[0]["cards"]["2H"] == 1 and "JD" not in standard[0]["cards"]
    assert by["turbo"]["scoring"][0]["cards"]["JD"] == -10
    for v in variants:
        rules = find_variant(v["name"])
        assert len(v["scoring"]) == len(rules.scoring)
        for sc, info in zip(rules.scoring, v["scoring"], strict=True):
            assert {parse_card(c): p for c, p in info["cards"].items()} == {
                c: p for c, p in enumerate(sc.card_points) if p
            }
            assert info["per_trick"] == sc.per_trick
            assert {int(n): p for n, p in info["trick_number"].items()} == dict(sc.trick_number_points)
    assert len(by["kierki"]["scoring"]) > 1  # a contract a deal: the deal's `kind` picks its entry


async def test_api_levels_and_adding_a_bot_by_level(env: Env) -> None:
    """``/api/levels``: each level with its name, rating and cost, weakest first; ``/api/bots``
    names them too (a list of names, as Turbo's clients read it); Add bot takes ``level:N``."""
    from moonshot.bots.levels import LEVELS
    from moonshot.bots.registry import spec_of
    from moonshot.runtime.table import BotSeat

    async with env.client() as anon:
        levels = (await anon.get("/api/levels")).json()
        assert [lv["key"] for lv in levels] == [lv.key for lv in LEVELS]
        assert all({"name", "spec", "mu", "sigma", "cpu_ms", "level"} <= set(lv) for lv in levels)
        assert levels[0]["name"] == "Beginner" and levels[-1]["mu"] > levels[0]["mu"]
        assert set((await anon.get("/api/bots")).json()) >= {lv.key for lv in LEVELS}
    async with env.client("ann") as ann:
        gid = await new_game(ann, variant="standard")
        r = await ann.post("/lobby/add_bot", json={"id": gid, "rules": "classic", "algorithm": "level:3"})
        assert r.status_code == 200, r.text
        (bot,) = [m for m in env.lobby.games[gid].members if m.kind == "bot"]
        assert bot.algorithm == "level:3"
        r = await ann.post("/lobby/add_bot", json={"id": gid, "rules": "classic", "algorithm": "level:99"})
        assert r.status_code == 400 and "unknown algorithm 'level:99'" in r.text
        for alg in ("level:1", "level:2"):
            assert (await ann.post("/lobby/add_bot", json={"id": gid, "algorithm": alg})).status_code == 200
        hosted = env.lobby.games[gid].hosted
        assert hosted is not None  # four at the table: it started, the levels seated as bots
        specs = {spec_of(c.occupant.bot) for c in hosted.table.chairs if isinstance(c.occupant, BotSeat)}
        assert specs == {"heuristic --epsilon 0.2", "heuristic --epsilon 0.5", "random"}


async def test_api_games_lists_the_store_and_replays_finished_games(env: Env) -> None:
    async with env.client("ann") as ann:
        gid = await new_game(ann, variant="standard")
        for _ in range(3):
            await ann.post("/lobby/add_bot", json={"id": gid, "rules": "classic", "algorithm": "random"})
        hosted = env.lobby.games[gid].hosted
        assert hosted is not None
        await env.recorder.flush()
        await asyncio.sleep(0.1)
        r = await ann.get(f"/api/games/{gid}")
        assert r.status_code == 403 and "running" in r.json()["error"]
        listed = (await ann.get("/api/games?limit=5")).json()
        assert listed[0]["id"] == gid and listed[0]["status"] == "running"
        assert (await ann.get("/api/games?limit=x")).status_code == 400
        assert (await ann.get("/api/games/nope")).status_code == 404
        watcher = env.lobby.subscribe_lobby("watcher")
        # finish the game: ann plays randomly through the engine's legal actions
        table = hosted.table
        seat = hosted.seat_of("ann")
        assert seat is not None
        rng = random.Random(1)
        while not table.done.done():
            if seat in table._pending:
                action = rng.choice(table.game.legal_actions(seat))
                await hosted.act(seat, action)
            await asyncio.sleep(0)
        await env.recorder.flush()
        await asyncio.sleep(0.1)
        seen = [watcher.get_nowait() for _ in range(watcher.qsize())]
        assert {"type": "finish_game", "id": gid} in seen
        assert gid not in env.lobby.lobby_state()["games"]
        r = await ann.get(f"/api/games/{gid}")
        assert r.status_code == 200
        rec = r.json()
        assert rec["status"] == "finished" and len(rec["totals"]) == 4 and rec["winners"]
        events = rec["events"]
        assert events[0]["type"] == "sit" and events[-1]["type"] == "game_complete"
        assert all(len(e["north"]) == 13 for e in events if e["type"] == "deal")  # unredacted
        assert (await ann.get("/api/games?offset=1")).json() == []


async def test_pages_and_static_files(env: Env) -> None:
    async with env.client() as c:
        r = await c.get("/", follow_redirects=False)
        assert r.status_code in (302, 307) and r.headers["location"] == "/lobby"
        r = await c.get("/lobby")
        assert r.status_code == 200 and "lobby" in r.text
        r = await c.get("/game")  # not in this test's static folder
        assert r.status_code == 404 and "missing" in r.json()["error"]
        r = await c.get("/static/app.js")
        assert r.status_code == 200 and "export" in r.text


async def test_a_stream_that_cannot_follow_its_game_closes_and_the_game_is_untouched() -> None:
    from moonshot.core.engine import Game
    from moonshot.core.variants import find_variant
    from moonshot.http.streams import GameStream
    from moonshot.protocols.turbo.codec import Player, TurboTranslator
    from moonshot.runtime.table import TableEvent

    rules = find_variant("turbo")
    g = Game(rules, 4)
    stream = GameStream("g")
    stream.start(TurboTranslator(rules, 4, [Player(n) for n in "abcd"]))
    sub = stream.subscribe("x", None)
    stream.on_events(None, [TableEvent(3, g.log[2])])  # type: ignore[arg-type]  # a gap: events 1-2 missing
    assert stream.closed and sub not in stream.subscribers


async def test_a_big_body_without_a_length_is_413_too(env: Env) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"message": "'
        for _ in range(80):
            yield b"x" * 1024
        yield b'"}'

    async with env.client("ann") as ann:
        r = await ann.post("/lobby/chat", content=chunks(), headers={"content-type": "application/json"})
        assert r.status_code == 413 and "64 KB" in r.json()["error"]


# ------------------------------------------------------------------ mixed tables
def remote(name: str, protocol: str, code: str, seen: list[tuple[str, int]]) -> Any:
    from moonshot.bots.random import RandomBot
    from moonshot.runtime.lobby import Candidate, GameType
    from moonshot.runtime.table import BotSeat

    seat = BotSeat(RandomBot(), random.Random(len(seen)), name=name)
    seat.protocol = protocol
    return Candidate(seat, GameType.ANY, code, lambda table, chair: seen.append((table.id, chair)), protocol=protocol)


async def test_players_from_other_protocols_join_a_game_by_its_id(env: Env) -> None:
    from moonshot.runtime.lobby import LobbyError

    seen: list[tuple[str, int]] = []
    async with env.client("ann") as c:
        gid = await new_game(c, variant="standard")
        assert not env.lobby.join_remote(remote("x", "sessions", "no-such-game", seen))
        assert env.lobby.join_remote(remote("s1", "sessions", gid, seen))
        t1 = remote("t1", "trend", gid, seen)
        assert env.lobby.join_remote(t1)
        with pytest.raises(LobbyError, match="already in game"):
            env.lobby.join_remote(remote("s1", "sessions", gid, seen))
        lobby = (await c.get("/api/games")).status_code  # the lobby still answers
        assert lobby == 200
        assert env.lobby.leave_remote(t1) and not env.lobby.leave_remote(t1)
        assert env.lobby.join_remote(remote("t2", "trend", gid, seen))
        r = await c.post("/lobby/add_bot", json={"id": gid, "rules": "classic", "algorithm": "random"})
        assert r.status_code == 200, r.text
        g = env.lobby.games[gid]
        assert g.hosted is not None and len(seen) == 2  # started: each remote player told its chair
        table = g.hosted.table
        assert {table.id} == {tid for tid, _ in seen}
        assert sorted(table.chairs[ch].occupant.name for _, ch in seen) == ["s1", "t2"]  # type: ignore[union-attr]
        assert table.meta["mixed"] is True and table.policy.decision_timeout is not None
        # nobody in a browser can act for a remote chair, whatever name they use
        assert g.hosted.seat_of("s1") is None and g.hosted.seat_of("ann") is not None
        with pytest.raises(LobbyError, match="already started"):
            env.lobby.join_remote(remote("late", "sessions", gid, seen))


async def test_a_game_whose_rules_a_protocol_cannot_express_refuses_it(env: Env) -> None:
    from moonshot.runtime.lobby import LobbyError

    seen: list[tuple[str, int]] = []
    async with env.client("bo") as c:
        turbo = await new_game(c, variant="turbo")
        trend = await new_game(c, variant="trend")
        with pytest.raises(LobbyError, match="Sessions protocol cannot express the 'turbo' rules"):
            env.lobby.join_remote(remote("s", "sessions", turbo, seen))
        with pytest.raises(LobbyError, match="Sessions protocol cannot express the 'trend' rules"):
            env.lobby.join_remote(remote("s", "sessions", trend, seen))
        assert env.lobby.join_remote(remote("t", "trend", trend, seen))
        # the person leaves: the remote player keeps the game open; when it leaves too, the game goes
        r = await c.post("/lobby/leave", json={"id": trend})
        assert r.status_code == 200, r.text
    assert trend in env.lobby.games
    cand = next(m.remote for m in env.lobby.games[trend].members if m.remote is not None)
    assert env.lobby.leave_remote(cand) and trend not in env.lobby.games


async def test_an_open_game_kept_by_another_lobby_is_adopted_from_the_store(env: Env) -> None:
    """What a cluster node does for a dead node's open game (moonshot.http.peers):
    the game comes from the store with its members; a junk or missing value adopts nothing."""
    async with env.client("ann") as ann:
        gid = await new_game(ann, variant="standard")
        assert (await ann.post("/lobby/add_bot", json={"id": gid, "algorithm": "random"})).status_code == 200
    await env.recorder.flush()
    other = TurboLobby(secret="test-secret", make_bot=make_bot, bot_names=bot_names(), store=env.store)
    assert await other.adopt_open(gid)
    assert other.games[gid].names() == env.lobby.games[gid].names() and len(other.games[gid].names()) == 2
    assert not await other.adopt_open(gid)  # already here
    assert not await other.adopt_open("no-such-game")
    await env.store.put_value("turbo:open:junk", {"id": "junk", "members": "not a list"})
    assert not await other.adopt_open("junk") and "junk" not in other.games


async def test_a_name_is_kept_once_its_game_is_rated(env: Env) -> None:
    """The lobby marks the people of a finished, rated game: their names no longer move freely."""
    from datetime import UTC, datetime

    async with env.client("Ann") as ann:
        assert (await ann.get("/api/me")).status_code == 200
    at = datetime.now(UTC)
    players = [{"name": "Ann", "kind": "human"}] + [
        {"name": f"b{i} (bot)", "kind": "bot", "bot": "random"} for i in range(3)
    ]
    row = {"id": "g1", "variant": "standard", "seed": 1, "protocol": "turbo", "players": players}
    done = {"id": "g1", "status": "finished", "finished_at": at, "totals": [1, 2, 3, 4], "winners": [0]}
    await env.store.write_batch(
        [("game", row | {"status": "running", "created_at": at, "meta": {}}), ("status", done), ("rate", {"id": "g1"})]
    )

    class Finished:
        id = "g1"

    env.lobby._rated_later(Finished(), ["Ann"])  # type: ignore[arg-type]
    await asyncio.gather(*env.lobby._marking)
    rec = env.lobby.identity.record("ann")
    assert rec is not None and rec.rated
    await env.lobby.flush()
    assert (await env.store.get_value("turbo:name:ann"))["rated"] is True
    async with env.client("ann") as other:  # not in use, but rated: not another browser's
        r = await other.get("/api/me")
        assert r.status_code == 403 and "recovery code" in r.json()["error"]
