"""Mixed tables on a cluster: the Sessions player's connection lands on a process other than the
one hosting the game (Redis + PostgreSQL, both real; two `moonshot serve` processes).

* A person over HTTP on A, a Sessions SDK bot connected to B (its lobby code is A's HTTP game id)
  and two server bots play a whole standard game; the stored record replays to the scores the
  Sessions bot was told.
* Through B: a game whose rules Sessions cannot express, and a game that started, are refused
  with the single-process reasons; a Sessions player that disconnects before the game starts
  frees its chair on A; a code that names no game anywhere waits in the pool as before.
* A tournament running on A: its external Sessions entrant connects to B with its token and
  plays every one of its games.

Skipped, with the reason, when Redis or PostgreSQL is not there (fixtures of test_cluster).
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
from typing import Any

import httpx
import pytest
import websocket
import websockets

from moonshot.bots.registry import make_bot
from moonshot.core.engine import replay
from moonshot.core.variants import find_variant
from moonshot.protocols.sessions.client import BotPlayer, Client, ProtocolError, RandomPlayer, SessionLost
from protocols.turbo.sse import SseReader
from trend_sdk import SdkBot

from .test_cluster import (
    Cluster,
    Node,
    Slow,
    cluster,
    free_port,
    last_event_id,
    new_http_game,
    resume_stream,
    start_node,
    stop_node,
    stored,
)
from .test_turbo_play import Person, check_game

# messages a game stream sends live and never replays (no SSE id): the clock's countdowns and the
# replay's end marker; a stream resumed after adoption is compared without them
LIVE_ONLY = {"end_replay", "clock"}

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(600)]

__all__ = ["cluster"]  # the fixture, imported for the tests here


async def lobby_names(c: httpx.AsyncClient, gid: str) -> list[str] | None:
    async with c.stream("GET", "/lobby/subscribe") as resp:
        state = await SseReader(resp).next_event()
    assert state is not None
    names = state.data["games"].get(gid)
    return None if names is None else [p["name"] for p in names]


async def wait_names(c: httpx.AsyncClient, gid: str, count: int, timeout: float = 60) -> list[str]:
    """The lobby's names of game ``gid`` once it has ``count`` of them."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        names = await lobby_names(c, gid) or []
        if len(names) == count:
            return names
        if loop.time() > end:
            raise AssertionError(f"game {gid} has {names}, not {count} names")
        await asyncio.sleep(0.1)


async def create_tournament(web: httpx.AsyncClient, deals_per_set: int, external: str) -> dict[str, Any]:
    """A one-set standard tournament of a random bot, a heuristic bot and one external entrant,
    made over HTTP (its seed the server's secret): its id and the entrant's token (``tokens``)."""
    body = {"variant": "standard", "sets": 1, "deals_per_set": deals_per_set,
            "bots": ["random", "heuristic"], "externals": [external]}  # fmt: skip
    r = await web.post("/api/tournaments", json=body)
    assert r.status_code == 201, r.text
    created: dict[str, Any] = r.json()
    return created


async def test_a_person_on_one_process_and_a_sessions_bot_on_another_play_a_standard_game(cluster: Cluster) -> None:
    a = await start_node(cluster, free_port(), "a", http_port=free_port(), lease=3)
    b = await start_node(cluster, free_port(), "b", http_port=free_port(), lease=3)
    try:
        async with httpx.AsyncClient(base_url=a.url(), cookies={"name": "ann"}, timeout=60) as ann:
            gid = await new_http_game(ann)
            async with await Client.connect("127.0.0.1", b.port) as sdk:
                # the Sessions bot joins through B and waits in A's game; then two server bots
                bot = asyncio.create_task(sdk.play(BotPlayer(make_bot("heuristic"), random.Random(3)), lobby_code=gid))
                names = await wait_names(ann, gid, 2)
                assert names[0] == "ann" and names[1].startswith("moonshot_heuristic(")
                for _ in range(2):
                    r = await ann.post("/lobby/add_bot", json={"id": gid, "algorithm": "random"})
                    assert r.status_code == 200, r.text
                person = Person(ann, gid, "ann", seed=4)
                events, result = await asyncio.wait_for(asyncio.gather(person.play(), bot), 240)
        assert person.errors == []
        check_game(events, "standard")
        assert len(result.scores) == 4 and max(result.scores.values()) >= 100
        rec = await stored(cluster.db, lambda r: r.status == "finished")
        assert rec.id == gid and rec.protocol == "turbo" and rec.meta.get("mixed") is True
        final = replay(find_variant("standard"), rec.seed, rec.actions)
        assert final.over and list(final.totals) == rec.totals
        assert not any(rec.forced)  # every card was its player's own, the Sessions bot's passes too
        assert sorted(result.scores.values()) == sorted(rec.totals)
        assert sorted(p["protocol"] for p in rec.players) == ["http", "server", "server", "sessions"]
    finally:
        await stop_node(a)
        await stop_node(b)
    assert "event=mixed_claimed" in a.text() and "event=game_started" in a.text()


async def test_refusals_and_leaving_through_another_process(cluster: Cluster) -> None:
    a = await start_node(cluster, free_port(), "a", http_port=free_port(), lease=3)
    b = await start_node(cluster, free_port(), "b", http_port=free_port(), lease=3)
    try:
        async with httpx.AsyncClient(base_url=a.url(), cookies={"name": "host"}, timeout=60) as web:
            turbo_id = (await web.post("/lobby/new", json={"variant": "turbo"})).json()
            std_id = await new_http_game(web)
            waiting_id = await new_http_game(web)
            async with await Client.connect("127.0.0.1", b.port) as client:
                # rules Sessions cannot express: the single-process reason
                with pytest.raises(ProtocolError, match="Sessions protocol cannot express the 'turbo' rules"):
                    await client.open_session("t", lobby_code=turbo_id)
                # the fourth chair starts the game at once; the next player hears it started
                for _ in range(2):
                    assert (await web.post("/lobby/add_bot", json={"id": std_id, "algorithm": "random"})).is_success
                await client.open_session("fourth", lobby_code=std_id)
                with pytest.raises(ProtocolError, match=r"already started|full"):
                    await client.open_session("fifth", lobby_code=std_id)
                # a code naming no game on any process waits in the pool, as before
                await client.open_session("nobody", lobby_code="no-such-game")
            async with await Client.connect("127.0.0.1", b.port) as leaver:
                await leaver.open_session("leaver", lobby_code=waiting_id)
                names = await wait_names(web, waiting_id, 2)
                assert names[1].startswith("leaver(")
            # its connection closed before the game started: A frees the chair
            assert await wait_names(web, waiting_id, 1) == ["host"]
    finally:
        await stop_node(a)
        await stop_node(b)
    assert "event=mixed_claimed" in a.text()


async def test_a_tournaments_external_sessions_entrant_plays_through_another_process(cluster: Cluster) -> None:
    a = await start_node(cluster, free_port(), "a", http_port=free_port(), lease=3)
    b = await start_node(cluster, free_port(), "b", http_port=free_port(), lease=3)
    try:
        async with httpx.AsyncClient(base_url=a.url(), cookies={"name": "organiser"}, timeout=60) as web:
            created = await create_tournament(web, deals_per_set=1, external="x")
            token = created["tokens"]["x"]
            async with await Client.connect("127.0.0.1", b.port) as client:
                # a wrong token names nothing: it would wait in the pool, never take x's seat
                await client.open_session("impostor", lobby_code=token[:-2] + "zz")
                results = await asyncio.wait_for(
                    client.play_games(RandomPlayer, sessions=1, games=4, lobby_code=token), 60
                )
            assert len(results) == 4 and all(len(res.scores) == 4 for res in results)
            loop = asyncio.get_running_loop()
            end = loop.time() + 20
            while True:
                status = (await web.get(f"/api/tournaments/{created['id']}")).json()
                if status["status"] == "finished" or loop.time() > end:
                    break
                await asyncio.sleep(0.2)
        assert status["status"] == "finished"
        x = next(e for e in status["standings"]["entrants"] if e["entrant"] == "x")
        assert x["no_shows"] == 0 and x["games_substituted"] == 0 and x["forced"] == 0
    finally:
        await stop_node(a)
        await stop_node(b)
    assert "event=mixed_claimed" in a.text() and token not in a.text() + b.text()


# ---------------------------------------------------------------- the hosting process dies
# Three processes: A hosts the HTTP game, B (no HTTP port, so it can adopt no HTTP game) holds the
# Sessions player's connection, C (HTTP) is where the person plays and what takes the game over.
# So the adopter is always another process than the player's: the chair goes back through B.


async def three_nodes(cluster: Cluster) -> tuple[Node, Node, Node]:
    a = await start_node(cluster, free_port(), "a", http_port=free_port(), lease=2)
    b = await start_node(cluster, free_port(), "b", lease=2)
    c = await start_node(cluster, free_port(), "c", http_port=free_port(), lease=2)
    return a, b, c


async def test_kill_9_of_a_mixed_games_process_mid_game_the_sessions_player_plays_on(cluster: Cluster) -> None:
    a, b, c = await three_nodes(cluster)
    try:
        async with httpx.AsyncClient(base_url=a.url(), cookies={"name": "ann"}, timeout=60) as ann_a:
            gid = await new_http_game(ann_a)
            cookies = dict(ann_a.cookies)
            async with await Client.connect("127.0.0.1", b.port) as sdk:
                bot = asyncio.create_task(sdk.play(BotPlayer(make_bot("heuristic"), random.Random(5)), lobby_code=gid))
                await wait_names(ann_a, gid, 2)
                for _ in range(2):
                    r = await ann_a.post("/lobby/add_bot", json={"id": gid, "algorithm": "random"})
                    assert r.status_code == 200, r.text
                ann = httpx.AsyncClient(base_url=c.url(), cookies=cookies, timeout=60)
                try:
                    before = await asyncio.wait_for(Person(ann, gid, "ann", seed=7).play(stop_after=5), 240)
                    last_id = await last_event_id(ann, gid)  # through C, from A
                    await a.kill9()
                    # C adopts the game; the stream resumes there; B's player is seated again
                    await resume_stream(ann, gid, last_id)
                    person = Person(ann, gid, "ann", seed=8)
                    after, result = await asyncio.wait_for(asyncio.gather(person.play(), bot), 120)
                finally:
                    await ann.aclose()
                    bot.cancel()
        assert person.errors == []
        game_before = [e for e in before if e["type"] not in LIVE_ONLY]
        game_after = [e for e in after if e["type"] not in LIVE_ONLY]
        assert game_after[: len(game_before)] == game_before  # the same game, replayed by the adopter
        check_game(after, "standard")
        assert not any("substituted" in e or "server bot" in e for e in result.errors), result.errors
        rec = await stored(cluster.db, lambda r: r.status == "finished")
        assert rec.id == gid and rec.meta.get("mixed") is True
        final = replay(find_variant("standard"), rec.seed, rec.actions)
        assert final.over and list(final.totals) == rec.totals
        assert sorted(result.scores.values()) == sorted(rec.totals)  # the Sessions player saw the end
        sessions_chair = next(i for i, p in enumerate(rec.players) if p["protocol"] == "sessions")
        assert rec.totals[sessions_chair] == result.scores[rec.players[sessions_chair]["name"]]
    finally:
        for n in (a, b, c):
            await stop_node(n)
    assert "event=mixed_adopted" in c.text() and "players_kept=1" in c.text()
    assert "event=adopted" not in b.text()  # B has no HTTP port: it leaves HTTP games to C


async def test_kill_9_of_an_open_mixed_games_process_the_waiting_sessions_player_keeps_its_chair(
    cluster: Cluster,
) -> None:
    a, b, c = await three_nodes(cluster)
    try:
        async with httpx.AsyncClient(base_url=a.url(), cookies={"name": "ann"}, timeout=60) as ann_a:
            gid = await new_http_game(ann_a)
            cookies = dict(ann_a.cookies)
            async with await Client.connect("127.0.0.1", b.port) as sdk:
                bot = asyncio.create_task(sdk.play(BotPlayer(make_bot("heuristic"), random.Random(6)), lobby_code=gid))
                names = await wait_names(ann_a, gid, 2)
                await asyncio.sleep(0.5)  # the store's writer has the open game
                await a.kill9()
                async with httpx.AsyncClient(base_url=c.url(), cookies={"name": "bob"}, timeout=60) as bob:
                    # C takes the open game over, and B's player is seated in it again
                    loop = asyncio.get_running_loop()
                    end = loop.time() + 40
                    while "event=mixed_reclaimed" not in b.text() and loop.time() < end:
                        await asyncio.sleep(0.2)
                    assert "event=adopted_open game=" + gid in c.text()
                    assert await wait_names(bob, gid, 2) == names
                    r = await bob.post("/lobby/join", json={"id": gid})
                    assert r.status_code == 200, r.text
                    r = await bob.post("/lobby/add_bot", json={"id": gid, "algorithm": "random"})
                    assert r.status_code == 200, r.text
                    ann = httpx.AsyncClient(base_url=c.url(), cookies=cookies, timeout=60)
                    try:
                        people = [Person(ann, gid, "ann", seed=3), Person(bob, gid, "bob", seed=4)]
                        *streams, result = await asyncio.wait_for(asyncio.gather(*(p.play() for p in people), bot), 120)
                    finally:
                        await ann.aclose()
                        bot.cancel()
        assert all(p.errors == [] for p in people)
        for events in streams:
            check_game(events, "standard")
        rec = await stored(cluster.db, lambda r: r.status == "finished")
        assert rec.id == gid
        assert sorted(p["protocol"] for p in rec.players) == ["http", "http", "server", "sessions"]
        assert sorted(result.scores.values()) == sorted(rec.totals)
        assert not any(rec.forced)
    finally:
        for n in (a, b, c):
            await stop_node(n)
    assert "event=adopted_open game=" + gid in c.text()
    assert "event=mixed_reclaimed" in b.text()


async def test_kill_9_of_a_tournaments_process_its_external_entrant_on_another_joins_again(cluster: Cluster) -> None:
    # A runs the tournament, its external Sessions entrant plays through B; A dies mid-game. B's
    # player is told its session is closed (the game is not adopted: the tournament goes on
    # from the store), joins again with its token, and B, which took the tournament over, seats
    # it in the restored game, whose chair waited for it; the tournament finishes.
    a = await start_node(cluster, free_port(), "a", http_port=free_port(), lease=2)
    b = await start_node(cluster, free_port(), "b", http_port=free_port(), lease=2)
    try:
        async with httpx.AsyncClient(base_url=a.url(), cookies={"name": "organiser"}, timeout=60) as web:
            created = await create_tournament(web, deals_per_set=2, external="x")
            token, tid = created["tokens"]["x"], created["id"]
        results, lost = [], []
        async with await Client.connect("127.0.0.1", b.port) as client:

            async def entrant() -> None:  # joins with its token until the test stops it
                while True:
                    try:
                        results.append(await client.play(Slow(0.02), lobby_code=token))
                    except SessionLost as e:
                        lost.append(str(e))

            playing = asyncio.create_task(entrant())
            try:
                loop = asyncio.get_running_loop()
                end = loop.time() + 60
                while not results and loop.time() < end:
                    await asyncio.sleep(0.05)
                assert results, "the first game never ended"
                await asyncio.sleep(0.3)  # the second game under way
                await a.kill9()
                async with httpx.AsyncClient(base_url=b.url(), timeout=30) as web:
                    end = loop.time() + 90
                    while True:
                        r = await web.get(f"/api/tournaments/{tid}")
                        status = r.json()
                        if (r.status_code == 200 and status["status"] != "running") or loop.time() > end:
                            break
                        await asyncio.sleep(0.2)
            finally:
                playing.cancel()
        assert len(lost) == 1 and "join again with your token" in lost[0], lost
        assert status["status"] == "finished" and status["games_played"] == status["games_total"] == 4, status
        x = next(e for e in status["standings"]["entrants"] if e["entrant"] == "x")
        assert x["no_shows"] == 0 and x["games_substituted"] == 0, x
    finally:
        await stop_node(a)
        await stop_node(b)
    assert "event=mixed_host_gone" in b.text() and "event=tournaments_taken_over count=1" in b.text()
    assert token not in a.text() + b.text()


# ---------------------------------------------------------------- Trend players on another process
async def test_trend_bots_on_one_process_play_an_http_game_hosted_by_another(cluster: Cluster) -> None:
    # three Trend bots connect to B with A's game id as their lobbyCode; one leaves mid-game and
    # joins again on A, where it takes its chair back (a bot played it meanwhile)
    trend_a, trend_b = free_port(), free_port()
    a = await start_node(cluster, free_port(), "a", "--trend-port", str(trend_a), http_port=free_port(), lease=3)
    b = await start_node(cluster, free_port(), "b", "--trend-port", str(trend_b), lease=3)
    try:
        async with httpx.AsyncClient(base_url=a.url(), cookies={"name": "erin"}, timeout=60) as erin:
            r = await erin.post("/lobby/new", json={"variant": "trend"})
            assert r.status_code == 200, r.text
            gid = r.json()
            url = f"ws://127.0.0.1:{trend_b}/"
            bots = [SdkBot(url, n, f"ai{n}", games=1, seed=n, lobby_code=gid) for n in (2, 3, 4)]
            leaver = bots[0]

            def leave_and_come_back() -> None:
                ws = leaver.connect()
                turns = 0
                while turns < 3:
                    msg = json.loads(ws.recv())
                    leaver.frames.append(msg)
                    leaver.handle(ws, msg)
                    turns += msg["eventName"] == "your_turn"
                ws.close()  # gone mid-game: a bot plays the chair meanwhile
                leaver.url = f"ws://127.0.0.1:{trend_a}/"
                leaver.run()  # the same join on the other process: the chair, then the game to its end

            threads = [threading.Thread(target=leave_and_come_back, daemon=True)]
            threads += [threading.Thread(target=bot.run, daemon=True) for bot in bots[1:]]
            for t in threads:
                t.start()
            names = await wait_names(erin, gid, 4, timeout=30)
            assert names[0] == "erin" and sorted(names[1:]) == ["ai2", "ai3", "ai4"]
            person = Person(erin, gid, "erin", seed=9)
            events = await asyncio.wait_for(person.play(), 120)
            for t in threads:
                await asyncio.to_thread(t.join, 60)
        assert person.errors == []
        for bot in bots:
            assert bot.errors == [] and len(bot.seen) == 1 and bot.seen[0].deals == 4, bot.errors
            assert "erin" in bot.seen[0].scores
        assert len([f for f in leaver.frames if f["eventName"] == "new_game"]) == 2  # the join, the catch-up
        assert [e for e in events if e["type"] == "game_complete"]
        rec = await stored(cluster.db, lambda r: r.status == "finished")
        assert rec.id == gid and rec.meta.get("mixed") is True
        assert sorted(p["protocol"] for p in rec.players) == ["http", "trend", "trend", "trend"]
        final = replay(find_variant("trend"), rec.seed, rec.actions)
        assert final.over and list(final.totals) == rec.totals
        by_name = {p["name"]: total for p, total in zip(rec.players, rec.totals)}
        assert all(bot.seen[0].scores == by_name for bot in bots)
    finally:
        await stop_node(a)
        await stop_node(b)
    assert "event=mixed_claimed" in a.text() and "event=lobby_join" in b.text()
    assert "event=rejoined" in a.text()


async def test_a_trend_join_through_another_process_is_refused_with_the_single_process_reason(
    cluster: Cluster,
) -> None:
    trend_b = free_port()
    a = await start_node(cluster, free_port(), "a", http_port=free_port(), lease=3)
    b = await start_node(cluster, free_port(), "b", "--trend-port", str(trend_b), lease=3)
    try:
        async with httpx.AsyncClient(base_url=a.url(), cookies={"name": "host"}, timeout=60) as web:
            kierki_id = (await web.post("/lobby/new", json={"variant": "kierki"})).json()
            trend_id = (await web.post("/lobby/new", json={"variant": "trend"})).json()
            async with websockets.connect(f"ws://127.0.0.1:{trend_b}/") as ws:
                join = {"playerNumber": 1, "playerName": "t", "token": "12345678", "lobbyCode": kierki_id}
                await ws.send(json.dumps({"eventName": "join", "data": join}))
                frame = json.loads(await asyncio.wait_for(ws.recv(), 20))
                assert "Trend protocol cannot express the 'kierki' rules" in json.dumps(frame)
                # refused, the socket is free again: a join naming A's trend game sits there
                join["lobbyCode"] = trend_id
                await ws.send(json.dumps({"eventName": "join", "data": join}))
                assert await wait_names(web, trend_id, 2) == ["host", "t"]
            assert await wait_names(web, trend_id, 1) == ["host"]  # its socket closed: the chair is freed
    finally:
        await stop_node(a)
        await stop_node(b)


async def test_a_tournaments_external_trend_entrant_plays_through_another_process(cluster: Cluster) -> None:
    trend_a, trend_b = free_port(), free_port()
    a = await start_node(cluster, free_port(), "a", "--trend-port", str(trend_a), http_port=free_port(), lease=3)
    b = await start_node(cluster, free_port(), "b", "--trend-port", str(trend_b), lease=3)
    try:
        async with httpx.AsyncClient(base_url=a.url(), cookies={"name": "organiser"}, timeout=60) as web:
            created = await create_tournament(web, deals_per_set=1, external="t")
            token = created["tokens"]["t"]
            bot = SdkBot(f"ws://127.0.0.1:{trend_b}/", 1, "trend-sdk", token=token, games=4)
            thread = threading.Thread(target=bot.run, daemon=True)
            thread.start()
            await asyncio.to_thread(thread.join, 90)
            assert not thread.is_alive()
            loop = asyncio.get_running_loop()
            end = loop.time() + 20
            while True:
                status = (await web.get(f"/api/tournaments/{created['id']}")).json()
                if status["status"] == "finished" or loop.time() > end:
                    break
                await asyncio.sleep(0.2)
        assert bot.errors == [] and len(bot.seen) == 4
        assert status["status"] == "finished"
        t = next(e for e in status["standings"]["entrants"] if e["entrant"] == "t")
        assert t["no_shows"] == 0 and t["games_substituted"] == 0 and t["forced"] == 0
    finally:
        await stop_node(a)
        await stop_node(b)
    assert "event=mixed_claimed" in a.text() and token not in a.text() + b.text()


async def test_kill_9_of_a_mixed_games_process_mid_game_its_trend_bots_play_on(cluster: Cluster) -> None:
    # as the Sessions test above: A hosts, B holds two Trend bots' sockets (no HTTP: it adopts no
    # HTTP game), C takes the game over and seats them again through B; the third bot's socket
    # is on A and dies with it: it joins again on B and takes its chair back from C
    trend_a, trend_b = free_port(), free_port()
    a = await start_node(cluster, free_port(), "a", "--trend-port", str(trend_a), http_port=free_port(), lease=2)
    b = await start_node(cluster, free_port(), "b", "--trend-port", str(trend_b), lease=2)
    # C serves Trend too (as every worker of `--workers N` does): the re-joining bot's chair is asked of it
    c = await start_node(cluster, free_port(), "c", "--trend-port", str(free_port()), http_port=free_port(), lease=2)
    try:
        async with httpx.AsyncClient(base_url=a.url(), cookies={"name": "erin"}, timeout=60) as erin_a:
            r = await erin_a.post("/lobby/new", json={"variant": "trend"})
            assert r.status_code == 200, r.text
            gid = r.json()
            cookies = dict(erin_a.cookies)
            on_b = [SdkBot(f"ws://127.0.0.1:{trend_b}/", n, f"ai{n}", games=1, seed=n, lobby_code=gid) for n in (2, 3)]
            on_a = SdkBot(f"ws://127.0.0.1:{trend_a}/", 4, "ai4", games=1, seed=4, lobby_code=gid)
            threads = [threading.Thread(target=bot.run, daemon=True) for bot in (*on_b, on_a)]
            for t in threads:
                t.start()
            await wait_names(erin_a, gid, 4, timeout=30)
        erin = httpx.AsyncClient(base_url=c.url(), cookies=cookies, timeout=60)
        try:
            before = await asyncio.wait_for(Person(erin, gid, "erin", seed=3).play(stop_after=5), 240)
            last_id = await last_event_id(erin, gid)
            await a.kill9()
            # A's bot lost its socket; on a busy machine its thread may take a while to see it
            await asyncio.to_thread(threads[2].join, 120)
            assert not threads[2].is_alive(), "A's bot never saw its socket close"
            assert not on_a.seen and "the server closed the connection" in on_a.errors
            again = SdkBot(f"ws://127.0.0.1:{trend_b}/", 4, "ai4", games=1, seed=14, lobby_code=gid)
            threads[2] = threading.Thread(target=again.run, daemon=True)
            threads[2].start()
            await resume_stream(erin, gid, last_id)
            person = Person(erin, gid, "erin", seed=4)
            after = await asyncio.wait_for(person.play(), 120)
            for t in threads:
                await asyncio.to_thread(t.join, 60)
        finally:
            await erin.aclose()
        assert person.errors == []
        game_before = [e for e in before if e["type"] not in LIVE_ONLY]
        assert [e for e in after if e["type"] not in LIVE_ONLY][: len(game_before)] == game_before
        rec = await stored(cluster.db, lambda r: r.status == "finished")
        assert rec.id == gid
        final = replay(find_variant("trend"), rec.seed, rec.actions)
        assert final.over and list(final.totals) == rec.totals
        by_name = {p["name"]: total for p, total in zip(rec.players, rec.totals)}
        for bot in (*on_b, again):
            assert bot.errors == [] and len(bot.seen) == 1 and bot.seen[0].scores == by_name, bot.errors
        for bot in on_b:
            # one connection for the game (the second is the SDK's re-join after game_end): its
            # process lived, and its chair went on through the adoption
            assert bot.connections == 2 and not [f for f in bot.frames if f.get("eventName") == "error"]
        assert len([f for f in again.frames if f["eventName"] == "new_game"]) >= 1  # the catch-up
    finally:
        for n in (a, b, c):
            await stop_node(n)
    assert "event=mixed_adopted" in c.text() and "players_kept=2 players_waiting=1" in c.text()
    assert "event=rejoined" in b.text()


async def test_kill_9_of_a_tournaments_process_its_external_trend_entrant_on_another_joins_again(
    cluster: Cluster,
) -> None:
    # the Sessions test above, for a Trend entrant: told by an error frame, it joins again on the
    # same socket with its token and is seated in the restored game with the catch-up
    trend_a, trend_b = free_port(), free_port()
    a = await start_node(cluster, free_port(), "a", "--trend-port", str(trend_a), http_port=free_port(), lease=2)
    b = await start_node(cluster, free_port(), "b", "--trend-port", str(trend_b), http_port=free_port(), lease=2)
    try:
        async with httpx.AsyncClient(base_url=a.url(), cookies={"name": "organiser"}, timeout=60) as web:
            created = await create_tournament(web, deals_per_set=2, external="t")
            token, tid = created["tokens"]["t"], created["id"]
        bot = SdkBot(f"ws://127.0.0.1:{trend_b}/", 1, "trend-sdk", token=token, think=0.01)
        told: list[dict[str, object]] = []
        stop = threading.Event()

        def entrant() -> None:  # an SDK bot that also joins again when told to
            ws = bot.connect()
            ws.settimeout(0.5)
            try:
                while not stop.is_set():
                    try:
                        msg = json.loads(ws.recv())
                    except websocket.WebSocketTimeoutException:
                        continue
                    bot.frames.append(msg)
                    if msg["eventName"] == "error":  # after the last game: "is over", and it stops asking
                        if "join again" in json.dumps(msg):
                            told.append(msg)
                            join = {"playerNumber": "1", "playerName": bot.name, "token": token}
                            ws.send(json.dumps({"eventName": "join", "data": join}))
                        continue
                    bot.handle(ws, msg)
                    if msg["eventName"] == "game_end":
                        ws.close()
                        ws = bot.connect()
                        ws.settimeout(0.5)
            finally:
                ws.close()

        thread = threading.Thread(target=entrant, daemon=True)
        thread.start()
        try:
            loop = asyncio.get_running_loop()
            end = loop.time() + 60
            while not bot.seen and loop.time() < end:
                await asyncio.sleep(0.05)
            assert bot.seen, "the first game never ended"
            await asyncio.sleep(0.3)  # the second game under way
            await a.kill9()
            async with httpx.AsyncClient(base_url=b.url(), timeout=30) as web:
                end = loop.time() + 90
                while True:
                    r = await web.get(f"/api/tournaments/{tid}")
                    status = r.json()
                    if (r.status_code == 200 and status["status"] != "running") or loop.time() > end:
                        break
                    await asyncio.sleep(0.2)
        finally:
            stop.set()
            await asyncio.to_thread(thread.join, 10)
        assert len(told) == 1 and "join again with your token" in json.dumps(told[0]), told
        assert bot.errors == []
        assert status["status"] == "finished" and status["games_played"] == status["games_total"] == 4, status
        t = next(e for e in status["standings"]["entrants"] if e["entrant"] == "t")
        assert t["no_shows"] == 0 and t["games_substituted"] == 0, t
    finally:
        await stop_node(a)
        await stop_node(b)
    assert "event=mixed_host_gone" in b.text() and "event=tournaments_taken_over count=1" in b.text()
    assert token not in a.text() + b.text()
