"""Spectators, attacked: a second name (a second browser profile, a contestant's friend) watches a
running game to see hands. While the game runs a spectator sees only what is public: cards
played, hand sizes, scores, a claimer's shown hand; the whole game once it is over."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moonshot.core.cards import parse_card
from moonshot.core.engine import Game
from moonshot.core.events import SPECTATOR
from moonshot.core.variants import VARIANTS
from moonshot.protocols.turbo.codec import SEATS, Player, translate_log
from moonshot.server.app import ServerApp
from moonshot.server.trend_node import NodeConfig, NodeServer, parse_seats
from security.conftest import bots_game, http, sse_events, wait_for
from trend_sdk import SdkBot

# Turbo messages that name cards made public by the rules (charges and exposures are shown to
# all, a claimer shows its hand, a played card is played): every other card a spectator is
# shown must have been played already
PUBLIC_CARDS = ("play", "claim", "charge", "reveal_charges", "expose")


def cards_in(value: Any) -> Iterator[int]:
    """Every card named anywhere in a Turbo event."""
    if isinstance(value, str) and len(value) == 2:
        try:
            yield parse_card(value)
        except ValueError:
            return
    elif isinstance(value, list):
        for v in value:
            yield from cards_in(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            if k not in ("type", "name", "algorithm", "rules", "variant", "kind_name"):
                yield from cards_in(v)


def check_spectator_stream(events: list[dict[str, Any]]) -> None:
    """No card a spectator is shown is still hidden in a hand (only public ones, played ones)."""
    public = 0
    for e in events:
        named = set(cards_in(e))
        if e["type"] in PUBLIC_CARDS:
            for c in named:
                public |= 1 << c
        else:
            hidden = [c for c in named if not public >> c & 1]
            assert not hidden, f"a spectator was shown unplayed cards in {e}"


@pytest.mark.asyncio
async def test_a_second_name_sees_no_hand_of_a_running_game(server: ServerApp) -> None:
    """The attack: a player subscribes to its own game's stream under a second name (no seat)
    and reads every hand. Now that stream is the spectator's: no hand, no passed card."""
    async with http(server, "ann") as ann, http(server, "ann2") as spy:
        gid = await bots_game(server, ann, "turbo")
        assert server.turbo is not None
        table = server.turbo.games[gid].hosted.table  # type: ignore[union-attr]
        await wait_for(lambda: 0 in table._pending or 1 in table._pending or table.game.version > 5)
        # ann (seated) passes, so the spy would see a pass if anything leaked
        mine = await sse_events(ann, f"/game/subscribe/{gid}", lambda e: e["type"] == "end_replay")
        seat = next(s for s in range(4) if mine[0][SEATS[s]]["name"] == "ann")
        deal = next(e for e in mine if e["type"] == "deal")
        assert len(deal[SEATS[seat]]) == 13
        r = await ann.post("/game/pass", json={"id": gid, "cards": deal[SEATS[seat]][:3]})
        assert r.status_code == 200, r.text
        seen = await sse_events(spy, f"/game/subscribe/{gid}", lambda e: e["type"] == "end_replay")
        spied = next(e for e in seen if e["type"] == "deal")
        assert all(spied[s] == [] for s in SEATS)
        passes = [e for e in seen if e["type"] in ("send_pass", "recv_pass")]
        assert passes and all(e["cards"] == [] for e in passes)  # the seed's redaction: no cards
        check_spectator_stream(seen)
        assert not any(e.get("legal_plays") for e in seen)
        table.stop("test over")


@pytest.mark.asyncio
async def test_after_the_game_the_whole_replay_is_open(server: ServerApp) -> None:
    async with http(server, "ann") as ann, http(server, "late") as late, http(server) as anon:
        gid = await bots_game(server, ann, "standard", seed=11, practice=True)  # a practice game: its creator's bots
        assert server.turbo is not None
        game = server.turbo.games[gid]
        hosted = game.hosted
        assert hosted is not None
        # ann plays random legal actions until the end
        rng = random.Random(1)
        seat = hosted.seat_of("ann")
        assert seat is not None
        while not hosted.table.game.over:
            if seat in hosted.table._pending:
                await hosted.act(seat, rng.choice(hosted.table.game.legal_actions(seat)))
            await asyncio.sleep(0.001)
        await wait_for(lambda: game.finished)
        seen = await sse_events(late, f"/game/subscribe/{gid}", lambda e: e["type"] == "game_complete")
        deal = next(e for e in seen if e["type"] == "deal")
        assert all(len(deal[s]) == 13 for s in SEATS)
        assert server.recorder is not None
        await server.recorder.flush()  # type: ignore[attr-defined]
        record = (await anon.get(f"/api/games/{gid}")).json()
        assert all(len(next(e for e in record["events"] if e["type"] == "deal")[s]) == 13 for s in SEATS)
        assert record["rated"] is False


@pytest.mark.asyncio
async def test_the_trend_nodes_watch_page_shows_no_hand_during_play() -> None:
    """The attack: a contestant of a Trend node opens the node's "Watch the game" page (same
    port as its WebSocket), found through /api/state, and plays with every card face up."""
    cfg = NodeConfig(port=0, seats=parse_seats("empty,dummy,dummy,dummy", "random"), seed=None, substitute="random")
    cfg.pick_timeout = cfg.pass_timeout = cfg.expose_timeout = 30.0
    node = NodeServer(cfg)
    await node.start()
    base = f"http://127.0.0.1:{node.node.port}"
    contestant = SdkBot(f"ws://127.0.0.1:{node.node.port}/", 1, "contestant", games=1, pick="silent")
    task = asyncio.create_task(asyncio.to_thread(contestant.run))
    try:
        async with httpx.AsyncClient(base_url=base, cookies={"name": "friend"}, timeout=30) as spy:
            state: dict[str, Any] = {}

            async def watching() -> bool:
                state.update((await spy.get("/api/state")).json())
                return bool(state.get("watch"))

            for _ in range(300):
                if await watching():
                    break
                await asyncio.sleep(0.05)
            gid = state["watch"].split("#", 1)[1]
            seen = await sse_events(spy, f"/game/subscribe/{gid}", lambda e: e["type"] == "end_replay")
            deal = next(e for e in seen if e["type"] == "deal")
            assert all(deal[s] == [] for s in SEATS)
            check_spectator_stream(seen)
            assert '"cards"' not in (await spy.get("/api/state")).text
    finally:
        await node.stop()
        with contextlib.suppress(Exception):  # the contestant reads the closed socket
            await asyncio.wait_for(task, 240)


@settings(max_examples=25, deadline=None)
@given(variant=st.sampled_from(sorted(VARIANTS)), seed=st.integers(0, 2**32 - 1))
def test_a_spectator_is_never_shown_an_unplayed_card(variant: str, seed: int) -> None:
    """Random games of every variant, translated as the Turbo stream: the spectator's view never
    names a card still hidden in a hand (a dealt, passed or blindly charged one)."""
    rules = VARIANTS[variant]
    g = Game(rules, seed)
    rng = random.Random(seed)
    steps = 0
    while not g.over and steps < 2000:
        seat = g.to_act()[0]
        g.apply(rng.choice(g.legal_actions(seat)))
        steps += 1
    players = [Player(f"p{s}") for s in range(4)]
    msgs = translate_log(rules, seed, players, g.log)
    seen = [d for m in msgs if (d := m.for_viewer(SPECTATOR)) is not None]
    check_spectator_stream(seen)
    # while the seats see their own hands, and the record (None) sees all
    deal = next(m for m in msgs if m.data["type"] == "deal")
    assert all(len(deal.for_viewer(s)[SEATS[s]]) == 13 for s in range(4))  # type: ignore[index]
    assert all(deal.for_viewer(None)[SEATS[s]] for s in range(4))  # type: ignore[index]
