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
from moonshot.runtime.lobby import Candidate, GameType, LobbyError
from moonshot.runtime.table import Seat


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


class Program(Seat):
    """A seat of another protocol's client: its ``client_key`` (None: it cannot be asked), and
    what it was told when its join for a next game was dropped."""

    protocol = "sessions"

    def __init__(self, name: str, key: object | None) -> None:
        self.name = name
        self.client_key = key
        self.ended: list[str] = []

    def on_events(self, table: Any, events: Any) -> None:
        pass

    def on_request(self, table: Any, request: Any) -> None:
        pass

    def end_session(self, reason: str) -> None:
        self.ended.append(reason)


def join(seat: Program, code: str = "g1") -> Candidate:
    return Candidate(seat, GameType.ANY, code, protocol="sessions")


def finished(lobby: FakeLobby, *, over: bool = True, remote: Seat | None = None, **options: Any) -> LobbyGame:
    members = [
        Member("ann"),
        Member("wren (bot)", "bot", "heuristic"),
        Member("bob", remote=join(remote) if remote is not None else None),  # type: ignore[arg-type]
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


@pytest.mark.asyncio
async def test_a_mixed_tables_program_joins_the_rematch_through_its_own_protocol() -> None:
    """bob played over Sessions: the connection that played his chair asks for the next game with
    the finished game's code (that is his acceptance); any other client is refused."""
    lobby = FakeLobby()
    conn = object()  # the Sessions connection that played bob's chair
    old = finished(lobby, remote=Program("bob(3)", conn), clock=30.0)
    r = Rematches(lobby, seconds=60)  # type: ignore[arg-type]
    offer = r.accept("ann", "g1")
    assert offer["waiting"] == ["bob"] and offer["remote"] == {"bob": "sessions"} and offer["people"] == ["ann", "bob"]
    with pytest.raises(LobbyError):
        r.join_remote(old, join(Program("eve(9)", object())))  # another connection: not bob's
    with pytest.raises(LobbyError):
        r.join_remote(old, join(Program("eve(9)", None)))  # no key at all
    assert not lobby.started
    again = join(Program("bob(7)", conn))  # a new session on bob's connection
    assert r.join_remote(old, again)
    ((new, _),) = lobby.started
    assert [m.name for m in new.members] == ["zed (bot)", "ann", "wren (bot)", "bob(7)"]
    assert new.members[3].remote is again and all(m.remote is None for m in new.members[:3])
    assert new.rated == old.rated and new.clock == 30.0
    assert r.state("ann", "g1")["accepted"] == ["ann", "bob"]
    with pytest.raises(LobbyError):
        r.join_remote(old, join(Program("bob(8)", conn)))  # started: no second seat


@pytest.mark.asyncio
async def test_a_programs_join_offers_the_rematch_and_its_leaving_or_a_decline_cancels_it() -> None:
    lobby = FakeLobby()
    conn = object()
    old = finished(lobby, remote=Program("bob(3)", conn))
    r = Rematches(lobby, seconds=60)  # type: ignore[arg-type]
    held = join(Program("bob(4)", conn))
    assert r.join_remote(old, held)  # nobody offered yet: bob's client offers it
    state = r.state("ann", "g1")
    assert state["state"] == "open" and state["by"] == "bob" and state["waiting"] == ["ann"]
    assert r.leave_remote(held)  # its connection closed before the start: bob declines
    state = r.state("ann", "g1")
    assert state["state"] == "cancelled" and state["reason_code"] == "left"
    assert not r.leave_remote(held)
    # a person's decline drops the held join and tells its client why
    held = join(Program("bob(5)", conn))
    r.join_remote(old, held)
    r.decline("ann", "g1")
    assert held.seat.ended and "declined" in held.seat.ended[0]  # type: ignore[attr-defined]
    assert not lobby.started


@pytest.mark.asyncio
async def test_a_chair_whose_client_cannot_be_asked_counts_as_declined() -> None:
    lobby = FakeLobby()
    finished(lobby, remote=Program("bob(3)", None))  # a closed connection, a Trend join with no token
    r = Rematches(lobby, seconds=60)  # type: ignore[arg-type]
    offer = r.accept("ann", "g1")
    assert offer["state"] == "cancelled" and offer["reason_code"] == "unaskable"
    assert offer["reason_args"] == {"name": "bob", "protocol": "sessions"} and not lobby.started
