"""Whole Turbo games through a real server (uvicorn on a free loopback port): a person and three
bots in every variant, four people at once, the reference's recorded games driven through the API
and compared with the recordings, and a restart in the middle of a game."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import httpx
import pytest

from gamekit import cs
from moonshot.core.cards import format_cards
from protocols.turbo.recorded import RECORDINGS, as_later_reference, canonical, digest
from protocols.turbo.sse import SseReader, base_url, http_server
from turbo_records import RECORDED_TURBO

pytestmark = pytest.mark.asyncio
SEATS = ["north", "east", "south", "west"]
CHARGEABLE = ("QS", "AH", "JD", "TC")


class Person:
    """A player that follows its stream: passes, charges, exposes, plays, answers claims."""

    def __init__(self, client: httpx.AsyncClient, game_id: str, name: str, seed: int = 0, claim: bool = False) -> None:
        self.client = client
        self.game_id = game_id
        self.name = name
        self.rng = random.Random(seed)
        self.claim = claim
        self.events: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self.claimed = False

    async def post(self, path: str, **body: Any) -> int:
        r = await self.client.post(path, json={"id": self.game_id, **body})
        if r.status_code not in (200, 409):
            self.errors.append(f"{path} {body} -> {r.status_code} {r.text}")
        return r.status_code

    async def play(self, headers: dict[str, str] | None = None, stop_after: int | None = None) -> list[dict[str, Any]]:
        me = ""
        hand: set[str] = set()
        passed = False
        plays = 0
        async with self.client.stream("GET", f"/game/subscribe/{self.game_id}", headers=headers or {}) as resp:
            assert resp.status_code == 200
            reader = SseReader(resp)
            while (ev := await reader.next_event()) is not None:
                d = ev.data
                self.events.append(d)
                t = d["type"]
                if t == "sit":
                    me = next(s for s in SEATS if d[s]["name"] == self.name)
                elif t == "deal":
                    hand = set(d[me])
                    self.claimed = False
                elif t == "start_passing":
                    passed = False
                elif t == "send_pass" and d["from"] == me:
                    hand -= set(d["cards"])
                elif t == "recv_pass" and d["to"] == me:
                    hand |= set(d["cards"])
                elif t == "play" and d["seat"] == me:
                    hand.discard(d["card"])
                if t == "pass_status" and not d[f"{me}_done"] and not passed and len(hand) == 13:
                    passed = True
                    await self.post("/game/pass", cards=self.rng.sample(sorted(hand), 3))
                elif t == "charge_status" and not d[f"{me}_done"] and d["next_charger"] in (None, me):
                    mine = [c for c in CHARGEABLE if c in hand and self.rng.random() < 0.3]
                    if await self.post("/game/charge", cards=mine) == 409 and mine:
                        await self.post("/game/charge", cards=[])
                elif t == "expose_status" and not d[f"{me}_done"]:
                    await self.post("/game/expose", cards=["AH"] if "AH" in hand and self.rng.random() < 0.5 else [])
                elif t == "claim" and d["seat"] != me:
                    answer = "/game/accept_claim" if self.rng.random() < 0.5 else "/game/reject_claim"
                    await self.post(answer, claimer=d["seat"])
                elif t == "play_status" and d["next_player"] == me:
                    if self.claim and not self.claimed and len(hand) <= 3:
                        self.claimed = True
                        await self.post("/game/claim")
                    assert d["legal_plays"] and set(d["legal_plays"]) <= hand, (d, hand)
                    await self.post("/game/play", card=self.rng.choice(d["legal_plays"]))
                    plays += 1
                    if stop_after is not None and plays >= stop_after:
                        return self.events
                if t == "game_complete":
                    break
        return self.events


async def new_game(c: httpx.AsyncClient, variant: str, rules: str = "classic", seed: int | None = None) -> str:
    body: dict[str, Any] = {"rules": rules, "variant": variant}
    if seed is not None:
        body.update(seed=seed, practice=True)  # only a practice game may name its seed
    r = await c.post("/lobby/new", json=body)
    assert r.status_code == 200, r.text
    gid: str = r.json()
    return gid


def check_game(events: list[dict[str, Any]], variant: str) -> None:
    # a stream opened before the game's first event is served (in a cluster, events reach the
    # stream once their actions are in Redis) has no replay: end_replay comes first, then `sit`
    types = [e["type"] for e in events if e["type"] != "end_replay"]
    assert types[0] == "sit" and "game_complete" in types
    hands = [e for e in events if e["type"] == "hand_complete"]
    assert hands
    if variant == "turbo":
        assert len(hands) == 4 and "start_charging" in types
    if variant == "trend":
        assert "start_exposing" in types and len(hands) == 4
    if variant == "kierki":
        assert len(hands) == 7


@pytest.mark.parametrize("variant", ["turbo", "standard", "omnibus", "trend", "kierki"])
async def test_a_person_and_three_bots_play_a_whole_game(tmp_path: Path, variant: str) -> None:
    async with (
        http_server(tmp_path) as app,
        httpx.AsyncClient(base_url=base_url(app), cookies={"name": "ann"}, timeout=60) as ann,
    ):
        gid = await new_game(ann, variant, rules="blind_chain", seed=11)
        for alg in ("random", "heuristic", "random"):
            r = await ann.post("/lobby/add_bot", json={"id": gid, "rules": "blind_chain", "algorithm": alg})
            assert r.status_code == 200
        person = Person(ann, gid, "ann", seed=1, claim=variant == "turbo")
        events = await asyncio.wait_for(person.play(), 120)
        assert person.errors == []
        check_game(events, variant)
        await app.recorder.flush()  # type: ignore[union-attr]
        await asyncio.sleep(0.2)
        stored = (await ann.get(f"/api/games/{gid}")).json()
        assert stored["status"] == "finished"
        totals = [0, 0, 0, 0]
        for h in (e for e in events if e["type"] == "hand_complete"):
            for s in range(4):
                totals[s] += h[f"{SEATS[s]}_score"]
        assert stored["totals"] == totals


async def test_four_people_play_turbo_over_http(tmp_path: Path) -> None:
    async with http_server(tmp_path) as app:
        url = base_url(app)
        names = ["ann", "bob", "cy", "di"]
        clients = [httpx.AsyncClient(base_url=url, cookies={"name": n}, timeout=60) for n in names]
        try:
            gid = await new_game(clients[0], "turbo", rules="bridge")
            for c in clients[1:]:
                assert (await c.post("/lobby/join", json={"id": gid, "rules": "bridge"})).status_code == 200
            people = [
                Person(c, gid, n, seed=i, claim=i == 0) for i, (c, n) in enumerate(zip(clients, names, strict=True))
            ]
            results = await asyncio.wait_for(asyncio.gather(*(p.play() for p in people)), 180)
            assert all(p.errors == [] for p in people)
            for r in results:
                check_game(r, "turbo")
            # everyone saw the same public events, each with only its own secrets
            finals = [[e for e in r if e["type"] == "hand_complete"] for r in results]
            assert all(f == finals[0] for f in finals)
        finally:
            for c in clients:
                await c.aclose()


@pytest.mark.parametrize("name", ["sim-classic-all", "sim-bridge-all", "sim-chain-all", "sim-blind-north-view"])
async def test_the_recorded_games_driven_through_http_give_the_recorded_streams(tmp_path: Path, name: str) -> None:
    order, viewer, count, expected = RECORDINGS[name]
    deals = RECORDED_TURBO["classic" if order == "blind" else order]
    async with http_server(tmp_path) as app:
        assert app.turbo is not None
        app.turbo.deals_for = lambda g: [d.spec() for d in deals]  # the recorded hands, by chair
        url = base_url(app)
        names = ["n0", "n1", "n2", "n3"]
        clients = {n: httpx.AsyncClient(base_url=url, cookies={"name": n}, timeout=30) for n in names}
        try:
            gid = await new_game(clients["n0"], "turbo", rules=order)
            for n in names[1:]:
                assert (await clients[n].post("/lobby/join", json={"id": gid, "rules": order})).status_code == 200
            hosted = app.turbo.find_game(gid)
            assert hosted is not None
            chair = [clients[p.name] for p in hosted.players]  # N, E, S, W

            async def post(seat: int, path: str, **body: Any) -> None:
                r = await chair[seat].post(path, json={"id": gid, **body})
                assert r.status_code == 200, (path, body, r.text)

            for d in deals:
                if d.passes is not None:
                    for s, text in enumerate(d.passes):
                        await post(s, "/game/pass", cards=text.split())
                for move in d.charges.split():
                    body = move[1:]
                    cards = (
                        []
                        if body == "-"
                        else format_cards(cs(" ".join(body[i : i + 2] for i in range(0, len(body), 2))))
                    )
                    await post("NESW".index(move[0]), "/game/charge", cards=cards)
                for move in d.plays.split():
                    await post("NESW".index(move[0]), "/game/play", card=move[1:])
            who = httpx.AsyncClient(base_url=url, cookies={"name": "spectator"}) if viewer is None else chair[viewer]
            async with who.stream("GET", f"/game/subscribe/{gid}") as resp:
                seen = [e.data for e in await SseReader(resp).rest()]
            if viewer is None:
                await who.aclose()
            assert seen[-1] == {"type": "end_replay"}
            assert seen[0]["rules"] == order and seen[0][SEATS[0]]["type"] == "human"
            mine = canonical(as_later_reference(seen[:-1]))
            assert len(mine) == count and digest(mine) == expected
        finally:
            for c in clients.values():
                await c.aclose()


async def test_a_restart_keeps_games_lobby_and_names(tmp_path: Path) -> None:
    db = f"sqlite+aiosqlite:///{tmp_path / 'games.db'}"
    async with http_server(tmp_path, db_url=db) as app:
        url = base_url(app)
        ann = httpx.AsyncClient(base_url=url, cookies={"name": "ann"}, timeout=60)
        gid = await new_game(ann, "turbo", seed=21)
        for _ in range(3):
            await ann.post("/lobby/add_bot", json={"id": gid, "rules": "classic", "algorithm": "heuristic"})
        await ann.post("/game/chat", json={"id": gid, "message": "good luck"})
        open_id = await new_game(ann, "standard")  # a proposal still waiting for players
        person = Person(ann, gid, "ann", seed=3)
        before = await asyncio.wait_for(person.play(stop_after=5), 240)
        cookies = dict(ann.cookies)
        await ann.aclose()
        last_id = None
        async with httpx.AsyncClient(base_url=url, cookies=cookies) as c2:
            async with c2.stream("GET", f"/game/subscribe/{gid}") as resp:
                past = await SseReader(resp).until("end_replay")
            last_id = past[-2].id
        await asyncio.sleep(0.2)
    async with http_server(tmp_path, db_url=db) as app2:
        url = base_url(app2)
        async with httpx.AsyncClient(base_url=url, cookies={"name": "ann"}) as thief:
            assert (await thief.get("/api/me")).status_code == 403  # the name is still ann's browser's
        ann = httpx.AsyncClient(base_url=url, cookies=cookies, timeout=60)
        try:
            assert (await ann.get("/api/me")).status_code == 200  # the binding survived the restart
            async with ann.stream("GET", "/lobby/subscribe") as resp:
                state = await SseReader(resp).next_event()
            assert state is not None and set(state.data["games"]) == {gid, open_id}
            # the stream resumes where it stopped, then the game goes on to its end
            async with ann.stream("GET", f"/game/subscribe/{gid}", headers={"Last-Event-ID": last_id or ""}) as resp:
                missed = await SseReader(resp).until("end_replay")
            assert missed[-1].data["type"] == "end_replay"
            person = Person(ann, gid, "ann", seed=4)
            after = await asyncio.wait_for(person.play(), 120)
            assert person.errors == []
            game_before = [e for e in before if e["type"] != "end_replay"]
            game_after = [e for e in after if e["type"] != "end_replay"]
            assert game_after[: len(game_before)] == game_before  # the same game, replayed
            assert {"type": "chat", "name": "ann", "message": "good luck"} in after
            check_game(after, "turbo")
        finally:
            await ann.aclose()
