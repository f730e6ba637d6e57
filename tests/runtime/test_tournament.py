"""The tournament runtime: tokens, arrivals through the lobby's router, games on tables, results."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest

from moonshot.bots.random import RandomBot
from moonshot.play.tournament import held_hands, make_spec
from moonshot.runtime.lobby import Candidate, GameType, LobbyError
from moonshot.runtime.table import BotSeat, Table, TablePolicy
from moonshot.runtime.tournament import KEY_PREFIX, Tournament, TournamentHost, full_results, summary
from moonshot.store import Store, StoreRecorder

pytestmark = pytest.mark.asyncio


def arrival(code: str | None, protocol: str = "server", token: str | None = None) -> Candidate:
    seat = BotSeat(RandomBot(), random.Random(1), name="visitor")
    return Candidate(seat, GameType.ANY, code, lambda table, chair: None, protocol=protocol, token=token)


def tracked_host(**options: Any) -> tuple[TournamentHost, list[Table]]:
    """A host (5 s a decision) that starts each table it makes, and the list of those tables."""
    tables: list[Table] = []

    def track(table: Table) -> None:
        tables.append(table)
        table.start()

    return TournamentHost(policy=TablePolicy(decision_timeout=5), track=track, **options), tables


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
    assert t.status == "paused"  # the server stopping: the next start goes on with it


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
    host, tables = tracked_host()
    spec = make_spec("omnibus", 1, ["a=random", "b=random", "c=random", "d=random"], deals_per_set=2, seed=99)
    t, _ = host.create(spec)
    assert t.task is not None
    await asyncio.wait_for(t.task, 60)
    assert len(tables) == 4 and {tb.seed for tb in tables} == {t.games[0].seed}
    assert all(tb.rules.name == "omnibus-2deals" and tb.meta["tournament"] == t.id for tb in tables)
    assert not host.claim(arrival("whatever"))  # no externals: every code goes to the ordinary pools


async def test_a_paused_tournament_goes_on_after_a_restart_from_where_it_was(tmp_path: Path) -> None:
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'games.db'}")
    try:
        recorder = StoreRecorder(store, batch_delay=0)
        recorder.start()
        host, tables = tracked_host(recorder=recorder, show_up=2)
        spec = make_spec("standard", 1, ["a=search --think-ms 40", "b=random", "c=random"], ["ext"], deals_per_set=2,
                         tokens=["-"], seed=8)  # fmt: skip
        t, tokens = host.create(spec)
        # the first game is played (the external entrant never comes: its chair is played for it),
        # the second is stopped halfway by the server stopping
        while len(tables) < 2 or tables[1].version < 30:
            await asyncio.sleep(0.001)
        second = tables[1].id
        assert second == f"{t.id}-g2" and len(t.results) == 1
        await host.close()
        for table in tables:  # what the server does next: its tables stop (restorable)
            table.stop()
            await table.done
        await recorder.flush()
        assert t.status == "paused"
        state = await store.get_value(KEY_PREFIX + t.id)
        assert state["status"] == "paused" and len(state["results"]) == 1
        assert tokens["ext"] not in str(state) and summary(state)["games_played"] == 1
        cut = await store.load(second)
        assert cut is not None and cut.status == "running"

        # a new server on the same store: the tournament goes on; the cut game from its actions
        host2 = TournamentHost(policy=TablePolicy(decision_timeout=5), recorder=recorder, show_up=0.5)
        assert await host2.resume(store) == {second}
        t2 = host2.tournaments[t.id]
        assert t2.status == "running" and [r.number for r in t2.results] == [0]
        # the token still seats its entrant (only the digest was stored)
        c = arrival(None, token=tokens["ext"])
        assert host2.claim(c) and host2.release(c)
        assert t2.task is not None
        await asyncio.wait_for(t2.task, 60)
        await recorder.flush()
        assert t2.status == "finished" and [r.number for r in t2.results] == [0, 1, 2, 3]
        done = await store.load(second)
        assert done is not None and done.status == "finished"
        assert done.actions[: len(cut.actions)] == cut.actions and done.rebuild().over
        assert list(done.rebuild().totals) == done.totals
        assert (await store.get_value(KEY_PREFIX + t.id))["status"] == "finished"
        # every game is stored once, under its schedule's id
        ids = [g["id"] for g in await store.list_games(None) if g["id"].startswith(t.id)]
        assert sorted(ids) == [f"{t.id}-g{n}" for n in range(1, 5)]
        # a finished tournament is not resumed again
        assert await TournamentHost(policy=TablePolicy()).resume(store) == set()
        await recorder.close()
    finally:
        await store.close()


async def test_a_damaged_stored_tournament_is_marked_failed_and_the_others_go_on(tmp_path: Path) -> None:
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'games.db'}")
    try:
        await store.put_value(KEY_PREFIX + "tbroken", {"id": "tbroken", "status": "running", "spec": {"variant": 3}})
        await store.put_value(KEY_PREFIX + "tjunk", ["not", "a", "state"])
        recorder = StoreRecorder(store, batch_delay=0)
        recorder.start()
        host = TournamentHost(policy=TablePolicy(decision_timeout=5), recorder=recorder)
        assert await host.resume(store) == set() and host.tournaments == {}
        await recorder.flush()
        broken = await store.get_value(KEY_PREFIX + "tbroken")
        assert broken["status"] == "failed" and "could not resume" in broken["error"]
        await recorder.close()
    finally:
        await store.close()


async def test_a_claim_that_fails_leaves_the_tournament_for_a_later_start(tmp_path: Path) -> None:
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'games.db'}")
    try:
        spec = make_spec("standard", 1, ["a=random", "b=random", "c=random", "d=random"], deals_per_set=1, seed=3)
        state = Tournament("tpaused", spec, 0.0).state()
        state["status"] = "paused"
        await store.put_value(KEY_PREFIX + "tpaused", state)

        async def unreachable(job: str) -> bool:
            raise ConnectionError("Redis is down")

        recorder = StoreRecorder(store, batch_delay=0)
        recorder.start()
        host = TournamentHost(policy=TablePolicy(), recorder=recorder, claim_job=unreachable)
        assert await host.resume(store) == set() and host.tournaments == {}
        await recorder.close()
        assert (await store.get_value(KEY_PREFIX + "tpaused"))["status"] == "paused"  # not failed

        async def taken_elsewhere(job: str) -> bool:
            return False

        host = TournamentHost(policy=TablePolicy(), claim_job=taken_elsewhere)
        assert await host.resume(store) == set() and host.tournaments == {}
    finally:
        await store.close()


async def test_a_request_over_the_network_names_no_value_or_belief_network_file() -> None:
    """``search --value PATH`` and ``--belief PATH`` read a file on the server (as ``--network``
    does): over the network only the words ``default`` and ``off`` (``default`` for the belief)
    are taken."""
    host = TournamentHost(policy=TablePolicy(decision_timeout=5), show_up=5)
    for ok in ("--value off", "--value default", "--belief default"):
        spec = make_spec("standard", 1, ["random", f"search {ok} --simulations 3"], deals_per_set=1)
        host._check_options(spec)
    for path in ("/dev/stdin", "/etc/passwd", "src/moonshot/bots/data/value.npz"):
        for key in ("value", "belief"):
            spec = make_spec("standard", 1, ["random", f"search --{key} {path}"], deals_per_set=1)
            with pytest.raises(ValueError, match=f"--{key} is not taken over the network"):
                host._check_options(spec)
    await host.close()


@pytest.mark.parametrize(
    ("bot", "options", "words"),
    [
        ("heuristic", {"foo": 1}, "heuristic has no option --foo"),
        ("random", {"x": True}, "random has no option --x"),
        ("heuristic", {"weights": 1}, "--weights is not taken over the network"),
        ("search", {"think_ms": "abc"}, "--think-ms must be an integer"),
        ("search", {"worlds": -1}, "--worlds must be an integer from 0"),
        ("search", {"inference": 1}, "--inference must be true or false"),
        ("search", {"rollout": 5}, "--rollout must be a word"),
        ("learned", {"temperature": float("inf")}, "--temperature must be a number"),
    ],
)
async def test_bot_options_over_the_network_are_checked_against_the_bot(
    bot: str, options: dict[str, object], words: str
) -> None:
    from moonshot.runtime.tournament import option_problem

    why = option_problem(bot, dict(options))
    assert why is not None and words in why


async def test_good_bot_options_pass() -> None:
    from moonshot.runtime.tournament import option_problem

    assert (
        option_problem("search", {"think_ms": 50, "rollout": "random", "inference": True, "exploration": 0.5}) is None
    )
    assert option_problem("nosuchbot", {"x": 1}) is None  # unknown bots: make_bot says so


async def test_a_bad_bot_or_filler_is_refused_before_the_tournament_is_made() -> None:
    host = TournamentHost(policy=TablePolicy())
    for bots, filler, words in (
        (["heuristic --foo 1", "random"], "heuristic", "foo"),
        (["random", "random"], "nosuchbot", "filler"),
    ):
        with pytest.raises(ValueError, match=words):
            host.create(make_spec("standard", 1, bots, filler=filler))
        assert host.tournaments == {}


async def test_a_draining_host_finishes_the_games_under_way_and_starts_no_next_one() -> None:
    host, tables = tracked_host()
    spec = make_spec("omnibus", 2, ["a=random", "b=random", "c=random", "d=random"], deals_per_set=2, seed=5)
    t, _ = host.create(spec)
    assert len(t.games) == 8
    while not tables:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0)
    host.draining = True  # the operator's drain, while the first set's games are under way
    under_way = list(tables)
    assert 0 < len(under_way) < 8
    await asyncio.wait_for(asyncio.gather(*(tb.done for tb in under_way)), 60)
    for _ in range(50):
        await asyncio.sleep(0)
    assert tables == under_way and len(t.results) == len(under_way)  # finished and counted; no next one
    await host.close()
    assert t.status == "paused"  # the next start goes on from there
