"""Rematch offers without a browser: who may offer, accept and decline, the lapse, the rotation
of the seats, and what the new game keeps of the old one (the browser flow: e2e/test_web_rematch.py)."""

from __future__ import annotations

import asyncio
import random
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from moonshot.core.variants import find_variant
from moonshot.http.lobby import LobbyGame, Member
from moonshot.http.rematch import Rematches, rotated
from moonshot.protocols.turbo.codec import RequestError


class FakeLobby:
    """What Rematches needs of a TurboLobby: its games, its random stream, start_now."""

    def __init__(self) -> None:
        self.games: dict[str, LobbyGame] = {}
        self.rng = random.Random(1)
        self.options = SimpleNamespace(seed=1)
        self.started: list[tuple[LobbyGame, Any]] = []

    def start_now(self, g: LobbyGame, rules: Any) -> None:
        self.games[g.id] = g
        self.started.append((g, rules))


def finished(lobby: FakeLobby, *, over: bool = True, remote: bool = False, **options: Any) -> LobbyGame:
    members = [
        Member("ann"),
        Member("wren (bot)", "bot", "heuristic"),
        Member("bob", remote=object() if remote else None),  # type: ignore[arg-type]
        Member("zed (bot)", "bot", "random"),
    ]
    g = LobbyGame("g1", "standard", 5, "ann", members, finished=over, **options)
    table = SimpleNamespace(game=SimpleNamespace(over=over), rules=find_variant("standard"))
    g.hosted = SimpleNamespace(table=table)  # type: ignore[assignment]
    lobby.games[g.id] = g
    return g


@given(st.lists(st.text(min_size=1, max_size=5), min_size=4, max_size=4, unique=True))
def test_rotation_moves_every_seat_one_chair_clockwise(names: list[str]) -> None:
    members = [Member(n, "bot" if i % 2 else "human", "random" if i % 2 else None) for i, n in enumerate(names)]
    new = rotated(members)
    for chair, m in enumerate(members):
        moved = new[(chair + 1) % 4]
        assert (moved.name, moved.kind, moved.algorithm) == (m.name, m.kind, m.algorithm)
        assert moved is not m and moved.remote is None


@pytest.mark.asyncio
async def test_everyone_accepts_and_the_new_game_keeps_the_old_ones_settings() -> None:
    lobby = FakeLobby()
    old = finished(lobby, clock=30.0, open_hands=True)
    r = Rematches(lobby, seconds=60)  # type: ignore[arg-type]
    offer = r.accept("ann", "g1")
    assert offer["state"] == "open" and offer["accepted"] == ["ann"] and offer["waiting"] == ["bob"]
    assert not lobby.started  # one acceptance starts nothing
    assert r.accept("ANN", "g1")["accepted"] == ["ann"]  # the same name in another spelling: once
    offer = r.accept("bob", "g1")
    assert offer["state"] == "started" and offer["game"] is not None
    ((new, rules),) = lobby.started
    assert [m.name for m in new.members] == ["zed (bot)", "ann", "wren (bot)", "bob"]
    assert (new.variant, new.clock, new.open_hands, new.practice) == ("standard", 30.0, True, False)
    assert new.rated == old.rated and rules is old.hosted.table.rules  # type: ignore[union-attr]
    with pytest.raises(RequestError) as e:
        r.accept("ann", "g1")
    assert e.value.status == 409  # started: no second rematch of the same game


@pytest.mark.asyncio
async def test_a_decline_or_the_lapse_cancels_and_a_new_offer_may_follow() -> None:
    lobby = FakeLobby()
    finished(lobby)
    r = Rematches(lobby, seconds=0.05)  # type: ignore[arg-type]
    r.accept("ann", "g1")
    assert r.decline("bob", "g1")["reason"] == "bob declined"
    with pytest.raises(RequestError):
        r.decline("bob", "g1")  # nothing open
    r.accept("bob", "g1")
    while r.state("ann", "g1")["state"] == "open":
        await asyncio.sleep(0.01)
    assert r.state("ann", "g1")["state"] == "cancelled" and "within" in r.state("bob", "g1")["reason"]
    assert not lobby.started


@pytest.mark.asyncio
async def test_only_the_people_of_a_finished_web_game_may_touch_its_rematch() -> None:
    lobby = FakeLobby()
    finished(lobby)
    r = Rematches(lobby)  # type: ignore[arg-type]
    for who in ("carol", "wren (bot)", "zed (bot)"):
        for call in (r.state, r.accept, r.decline):
            with pytest.raises(RequestError) as e:
                call(who, "g1")
            assert e.value.status == 403
    with pytest.raises(RequestError) as e:
        r.accept("ann", "nope")
    assert e.value.status == 404
    assert "g1" not in r.offers

    running = FakeLobby()
    finished(running, over=False)
    with pytest.raises(RequestError) as e:
        Rematches(running).accept("ann", "g1")  # type: ignore[arg-type]
    assert e.value.status == 409

    mixed = FakeLobby()
    finished(mixed, remote=True)  # bob came over Sessions or Trend
    with pytest.raises(RequestError) as e:
        Rematches(mixed).accept("ann", "g1")  # type: ignore[arg-type]
    assert e.value.status == 409
