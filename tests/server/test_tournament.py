"""The tournament runtime: tokens, arrivals through the lobby's router, games on tables, results."""

from __future__ import annotations

import asyncio
import random

import pytest

from moonshot.bots.random import RandomBot
from moonshot.server.lobby import Candidate, GameType, LobbyError
from moonshot.server.table import BotSeat, Table, TablePolicy
from moonshot.server.tournament import TournamentHost, full_results, summary
from moonshot.tournament import held_hands, make_spec

pytestmark = pytest.mark.asyncio


def arrival(code: str | None, protocol: str = "server", token: str | None = None) -> Candidate:
    seat = BotSeat(RandomBot(), random.Random(1), name="visitor")
    return Candidate(seat, GameType.ANY, code, lambda table, chair: None, protocol=protocol, token=token)


async def test_tokens_are_made_once_and_only_their_digests_kept() -> None:
    host = TournamentHost(policy=TablePolicy(decision_timeout=5), show_up=5)
    spec = make_spec("standard", 1, ["random", "heuristic"], ["ext"], deals_per_set=1, tokens=["-"])
    t, tokens = host.create(spec)
    token = tokens["ext"]
    assert token not in str(t.state()) and token not in str(t.spec)
    assert not host.claim(arrival("not-a-token"))
    assert not host.claim(arrival(None))
    c = arrival(None, token=token)  # Trend's join token
    assert host.claim(c)
    assert host.release(c) and not host.release(c)
    with pytest.raises(LobbyError, match="Kierki protocol plays only the Kierki game"):
        host.claim(arrival(token, protocol="kierki"))
    await host.close()
    assert t.status == "stopped"


async def test_an_arrival_plays_its_chair_in_every_rotation_and_the_results_add_up() -> None:
    host = TournamentHost(policy=TablePolicy(decision_timeout=5), show_up=10)
    spec = make_spec("standard", 2, ["random", "heuristic", "search --simulations 3"], ["ext"], deals_per_set=1,
                     tokens=["-"], seed=4)  # fmt: skip
    t, tokens = host.create(spec)
    seen: list[tuple[str, int]] = []

    async def feed() -> None:  # the external entrant: one arrival per game, as SDK clients do
        while t.status == "running":
            c = arrival(tokens["ext"])
            c.on_matched = lambda table, chair: seen.append((table.id, chair))  # type: ignore[assignment]
            host.claim(c)
            while t.status == "running" and c in t.arrivals[3].waiting:
                await asyncio.sleep(0.01)

    feeder = asyncio.create_task(feed())
    assert t.task is not None
    await asyncio.wait_for(t.task, 60)
    feeder.cancel()
    assert t.status == "finished" and len(t.results) == 8
    assert sorted(chair for _, chair in seen) == [0, 0, 1, 1, 2, 2, 3, 3]
    assert all(chairs == [0, 1, 2, 3] for chairs in held_hands(t.results, 2).values())
    st = summary(t.state())
    ext = next(r for r in st["standings"]["entrants"] if r["entrant"] == "ext")
    assert ext["no_shows"] == 0 and ext["games"] == 8 and ext["deals"] == 8
    # one deal per game: the points of each game's deal add up to 26 (or 78 after a moon)
    for g in t.results:
        assert sum(s.points[0] for s in g.seats) in (26, 78)
    assert len(full_results(t.state())["running"]) == 8


async def test_the_games_are_tables_with_the_tournaments_seed_and_rules() -> None:
    tables: list[Table] = []

    def track(table: Table) -> None:
        tables.append(table)
        table.start()

    host = TournamentHost(policy=TablePolicy(decision_timeout=5), track=track)
    spec = make_spec("omnibus", 1, ["a=random", "b=random", "c=random", "d=random"], deals_per_set=2, seed=99)
    t, _ = host.create(spec)
    assert t.task is not None
    await asyncio.wait_for(t.task, 60)
    assert len(tables) == 4 and {tb.seed for tb in tables} == {t.games[0].seed}
    assert all(tb.rules.name == "omnibus-2deals" and tb.meta["tournament"] == t.id for tb in tables)
    assert not host.claim(arrival("whatever"))  # no externals: every code goes to the ordinary pools
