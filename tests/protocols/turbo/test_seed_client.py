"""The seed-era Turbo Hearts web client against moonshot, without the client: every event and
answer it reads holds what its code reads (seed_client.py, written from that code), and the
models of its pages keep track of the game, for a whole game of every charging rule."""

from __future__ import annotations

import asyncio
import contextlib
import random
from pathlib import Path
from typing import Any

import httpx
import pytest

from moonshot.bots.duck import DuckBot
from moonshot.bots.random import RandomBot
from moonshot.core.engine import Game
from moonshot.core.rules import ChargingOrder
from moonshot.core.variants import TURBO_VARIANTS
from moonshot.play.sim import play_out
from moonshot.protocols.turbo.codec import CHARGING_NAMES, Player, translate_log
from protocols.turbo.recorded import as_later_reference
from protocols.turbo.seed_client import (
    GAME_READS,
    LOBBY_READS,
    RESPONSE_READS,
    SEATS,
    LobbyPage,
    PlainTable,
    WebGlTable,
    check_event,
    violations,
)
from protocols.turbo.sse import SseReader, base_url, http_server

ORDERS = list(ChargingOrder)
CHARGEABLE = ("QS", "AH", "JD", "TC")
ROUND_ENDS = ("start_trick", "start_passing", "reveal_charges", "deal", "start_exposing")


def whole_game(order: ChargingOrder, seed: int) -> Game:
    """A whole Turbo game of ``order`` between bots that charge (random) and bots that do not
    (duck); neither claims, so every hand is played to its last card."""
    g = Game(TURBO_VARIANTS[order], seed)
    play_out(g, [RandomBot(), DuckBot(), RandomBot(), DuckBot()], [random.Random(seed * 4 + s) for s in range(4)])
    return g


def charge_rounds(events: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The ``charge_status`` events of each charging round, in order."""
    rounds: list[list[dict[str, Any]]] = []
    current: list[dict[str, Any]] | None = None
    for e in events:
        t = e["type"]
        if t == "start_charging":
            current = []
            rounds.append(current)
        elif t == "charge_status" and current is not None:
            current.append(e)
        elif t in ROUND_ENDS:
            current = None
    return rounds


def check_charge_rounds(events: list[dict[str, Any]], hands: int = 4) -> None:
    rounds = charge_rounds(events)
    assert len(rounds) >= hands
    for statuses in rounds:
        first, last = statuses[0], statuses[-1]
        assert not any(first[f"{s}_done"] for s in SEATS), first  # everyone may still charge
        # "who still needs to make a charge": nobody, once the round is over
        assert all(last[f"{s}_done"] for s in SEATS) and last["next_charger"] is None, last


@pytest.mark.parametrize("order", ORDERS, ids=[o.value for o in ORDERS])
def test_every_stream_of_a_whole_game_holds_what_the_client_reads(order: ChargingOrder) -> None:
    for seed in range(3):
        g = whole_game(order, seed)
        msgs = translate_log(g.rules, seed, [Player(n) for n in ("ann", "bob", "cy", "di")], g.log)
        for viewer in (None, 0, 1, 2, 3):
            events = [d for d in (m.for_viewer(viewer) for m in msgs) if d is not None]
            me = SEATS[viewer] if viewer is not None else "south"  # a spectator sits south
            plain, webgl = PlainTable(), WebGlTable(me)
            played = dict.fromkeys(SEATS, 0)
            for e in events:
                assert check_event(e, GAME_READS) == [], e
                if e["type"] == "deal":
                    assert plain.divs[me] == []  # the last hand's cards have all gone
                    played = dict.fromkeys(SEATS, 0)
                plain.apply(e)
                webgl.apply(e)
                if e["type"] == "play":
                    played[e["seat"]] += 1
                if e["type"] == "play_status" and e["next_player"] == me:
                    assert set(e["legal_plays"]) <= set(plain.divs[me])
                if e["type"] in ("start_trick", "end_trick"):  # the hands shown are the hands held
                    assert {s: len(webgl.hands[s]) for s in SEATS} == {s: 13 - played[s] for s in SEATS}
            assert webgl.errors == []
            assert all(h == [] for h in webgl.hands.values())
            check_charge_rounds(events)
            types = {e["type"] for e in events}
            assert not {t for t in types if t.startswith("hidden_")}


def test_the_later_servers_pass_events_would_lose_the_hand() -> None:
    """The models are able to fail: the same stream in the later server's shapes (others'
    passes as hidden_send_pass / hidden_recv_pass) leaves the WebGL table playing from a hand it
    shows empty, as the client did ("Cannot set properties of undefined")."""
    g = whole_game(ChargingOrder.CLASSIC, 1)
    msgs = translate_log(g.rules, 1, [Player(n) for n in ("ann", "bob", "cy", "di")], g.log)
    events = as_later_reference([d for d in (m.for_viewer(0) for m in msgs) if d is not None])
    webgl = WebGlTable("north")
    for e in events:
        webgl.apply(e)
    assert webgl.errors
    # and its last charge_status of a round says nobody is done: a stray "Charge Cards" button
    last = charge_rounds(events)[0][-1]
    assert not any(last[f"{s}_done"] for s in SEATS)


def test_the_schema_checker_finds_what_is_missing_or_wrong() -> None:
    assert violations({"type": "join_game", "id": "x", "player": "ann"}, LOBBY_READS["join_game"])
    assert violations({"type": "new_game", "id": "x", "player": "ann"}, LOBBY_READS["new_game"])
    assert violations({"games": {"x": ["ann"]}, "subscribers": []}, LOBBY_READS["lobby_state"])
    assert violations({"from": "north", "count": 3}, GAME_READS["send_pass"])
    assert violations({"seat": "up", "card": "8D"}, GAME_READS["play"])
    assert violations({"seat": "west", "card": "10D"}, GAME_READS["play"])
    ok = {"type": "join_game", "id": "x", "player": {"type": "human", "name": "ann"}, "name": "ann"}
    assert violations(ok, LOBBY_READS["join_game"]) == []


# ---------------------------------------------------------------- through a real server
class LobbyWatcher:
    """A lobby stream, read in the background, each event checked and folded into the page."""

    def __init__(self, client: httpx.AsyncClient, me: str) -> None:
        self.client = client
        self.page = LobbyPage(me)
        self.events: list[dict[str, Any]] = []
        self.task: asyncio.Task[None] | None = None
        self.ready = asyncio.Event()

    async def run(self) -> None:
        async with self.client.stream("GET", "/lobby/subscribe") as resp:
            reader = SseReader(resp)
            while (ev := await reader.next_event()) is not None:
                assert check_event(ev.data, LOBBY_READS) == [], ev.data
                self.events.append(ev.data)
                self.page.apply(ev.data)
                self.ready.set()

    def start(self) -> None:
        self.task = asyncio.create_task(self.run())

    async def until(self, test: Any, timeout: float = 30) -> None:
        async def wait() -> None:
            while not test():
                await asyncio.sleep(0.01)

        await asyncio.wait_for(wait(), timeout)

    async def stop(self) -> None:
        assert self.task is not None
        if self.task.done():
            self.task.result()  # a failed check shows here
            return
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


async def answer(r: httpx.Response, path: str) -> Any:
    """What the lobby page does with an answer: response.json()."""
    assert r.status_code == 200, (path, r.text)
    assert r.headers["content-type"].startswith("application/json")
    value = r.json()
    assert violations(value, RESPONSE_READS[path]) == []
    return value


class SeedClientPlayer:
    """A person at the seed-era client: sees what its pages show, acts on its buttons."""

    def __init__(self, client: httpx.AsyncClient, gid: str, name: str, free: bool, seed: int) -> None:
        self.client, self.gid, self.name, self.free = client, gid, name, free
        self.rng = random.Random(seed)
        self.events: list[dict[str, Any]] = []
        self.refused: list[str] = []

    async def post(self, path: str, **body: Any) -> int:
        r = await self.client.post(path, json={"id": self.gid, **body})
        if r.status_code != 200:
            self.refused.append(f"{path} {body}: {r.status_code} {r.text}")
        return r.status_code

    async def play(self) -> tuple[PlainTable, WebGlTable]:
        me = ""
        plain: PlainTable | None = None
        webgl: WebGlTable | None = None
        waiting_charge = False  # pressed "Charge Cards": statuses queued before it are stale
        async with self.client.stream("GET", f"/game/subscribe/{self.gid}") as resp:
            reader = SseReader(resp)
            while (ev := await reader.next_event()) is not None:
                e = ev.data
                assert check_event(e, GAME_READS) == [], e
                self.events.append(e)
                t = e["type"]
                if t == "sit":
                    me = next(s for s in SEATS if e[s]["name"] == self.name)  # SitEvent
                    plain, webgl = PlainTable(), WebGlTable(me)
                if plain is None or webgl is None:
                    continue
                plain.apply(e)
                if not (t == "charge_status" and waiting_charge):
                    # TurboHearts.hasFutureCharge: a status queued before the viewer's own charge
                    # is skipped (the POST has been answered, so that charge is in the stream)
                    webgl.apply(e)
                hand = plain.divs[me]
                if t == "start_passing":  # the "Pass 3 Cards" button
                    assert len(hand) == 13
                    await self.post("/game/pass", cards=self.rng.sample(sorted(hand), 3))
                elif t == "charge" and e["seat"] == me:
                    waiting_charge = False
                elif t == "charge_status" and not waiting_charge:
                    up = webgl.button is not None if self.free else e["next_charger"] == me and not e[f"{me}_done"]
                    if up:  # press it: a charge the server must take
                        cards = [c for c in CHARGEABLE if c in hand and self.rng.random() < 0.25]
                        webgl.charged()
                        waiting_charge = True
                        assert await self.post("/game/charge", cards=cards) == 200, self.refused
                elif t == "play_status" and e["next_player"] == me:
                    assert e["legal_plays"] and set(e["legal_plays"]) <= set(hand), (e, hand)
                    assert await self.post("/game/play", card=self.rng.choice(e["legal_plays"])) == 200
                if t == "game_complete":
                    break
        assert plain is not None and webgl is not None
        return plain, webgl


@pytest.mark.asyncio
@pytest.mark.parametrize("order", ORDERS, ids=[o.value for o in ORDERS])
async def test_a_whole_game_at_the_seed_client_with_three_duck_bots(tmp_path: Path, order: ChargingOrder) -> None:
    rules = CHARGING_NAMES[order]
    async with http_server(tmp_path) as app:
        url = base_url(app)
        ann = httpx.AsyncClient(base_url=url, cookies={"name": "ann"}, timeout=60)
        bob = httpx.AsyncClient(base_url=url, cookies={"name": "bob"}, timeout=60)
        ann_lobby, bob_lobby = LobbyWatcher(ann, "ann"), LobbyWatcher(bob, "bob")
        try:
            for w in (ann_lobby, bob_lobby):
                w.start()
                await asyncio.wait_for(w.ready.wait(), 30)
            await bob_lobby.until(lambda: "ann" in bob_lobby.page.people)
            gid = await answer(await ann.post("/lobby/new", json={"rules": rules}), "/lobby/new")
            await bob_lobby.until(lambda: gid in bob_lobby.page.games)
            await ann_lobby.until(lambda: gid in ann_lobby.page.games)
            # the creator is in: no "Join" for her; the others may join
            assert ann_lobby.page.games[gid] == (["ann"], ["Add Bot", "Leave"])
            assert bob_lobby.page.games[gid] == (["ann"], ["Add Bot", "Join"])
            bots = []
            for _ in range(2):
                r = await ann.post("/lobby/add_bot", json={"id": gid, "rules": rules, "algorithm": "duck"})
                bots.append(await answer(r, "/lobby/add_bot"))
            await bob_lobby.until(lambda: len(bob_lobby.page.games[gid][0]) == 3)
            assert bob_lobby.page.games[gid] == (["ann", *bots], ["Add Bot", "Join"])
            # someone arriving now reads the game from lobby_state: names, and the right button
            cy = httpx.AsyncClient(base_url=url, cookies={"name": "cy"}, timeout=60)
            late = LobbyWatcher(cy, "cy")
            late.start()
            await asyncio.wait_for(late.ready.wait(), 30)
            assert late.page.games[gid] == (["ann", *bots], ["Add Bot", "Join"])
            await late.stop()
            await cy.aclose()
            r = await ann.post("/lobby/add_bot", json={"id": gid, "rules": rules, "algorithm": "duck"})
            bots.append(await answer(r, "/lobby/add_bot"))
            await ann_lobby.until(lambda: len(ann_lobby.page.games[gid][0]) == 4)
            assert ann_lobby.page.games[gid][1] == ["Add Bot", "Open"]  # onJoinGame swaps the last button
            join = next(e for e in ann_lobby.events if e["type"] == "join_game" and e["name"] == bots[0])
            assert join["player"] == {"type": "bot", "name": bots[0], "algorithm": "duck"}

            player = SeedClientPlayer(ann, gid, "ann", free=not order.in_seat_order, seed=len(rules))
            plain, webgl = await asyncio.wait_for(player.play(), 240)
            assert player.refused == []
            events = player.events
            # the game's own first event; a stream opened before it was served starts with end_replay
            sit = next(e for e in events if e["type"] != "end_replay")
            assert sit["type"] == "sit"
            assert sit["rules"] == rules and {sit[s]["name"] for s in SEATS} == {"ann", *bots}
            assert [sit[s]["algorithm"] for s in SEATS if sit[s]["type"] == "bot"] == ["duck"] * 3
            assert sum(e["type"] == "hand_complete" for e in events) == 4
            assert webgl.errors == [] and all(h == [] for h in webgl.hands.values())
            assert all(d == [] for d in plain.divs.values())
            check_charge_rounds([e for e in events if e["type"] != "end_replay"])
            if player.free:  # the WebGL table offered a charge in every hand
                assert webgl.buttons >= 4
            await ann_lobby.until(lambda: gid not in ann_lobby.page.games)  # finish_game

            # a spectator's replay of the whole game holds it too, and its table keeps up
            async with bob.stream("GET", f"/game/subscribe/{gid}") as resp:
                seen = [ev.data for ev in await SseReader(resp).rest()]
            spectator = WebGlTable("south")
            for e in seen:
                assert check_event(e, GAME_READS) == [], e
                spectator.apply(e)
            assert spectator.errors == [] and seen[-1]["type"] in ("end_replay", "game_complete")
        finally:
            for w in (ann_lobby, bob_lobby):
                if w.task is not None:
                    await w.stop()
            await ann.aclose()
            await bob.aclose()


@pytest.mark.asyncio
async def test_add_bot_takes_turbos_algorithm_names(tmp_path: Path) -> None:
    async with (
        http_server(tmp_path) as app,
        httpx.AsyncClient(base_url=base_url(app), cookies={"name": "ann"}) as ann,
    ):
        gid = (await ann.post("/lobby/new", json={"rules": "classic"})).json()
        for alg in ("duck", "random"):
            r = await ann.post("/lobby/add_bot", json={"id": gid, "rules": "classic", "algorithm": alg})
            assert r.status_code == 200 and r.json().endswith(" (bot)")
        r = await ann.post("/lobby/add_bot", json={"id": gid, "rules": "classic", "algorithm": "gottatry"})
        assert r.status_code == 400 and "unknown algorithm" in r.json()["error"]
        assert "duck" in (await ann.get("/api/bots")).json()
