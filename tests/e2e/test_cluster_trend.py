"""Trend on several `moonshot serve` processes as one cluster (Redis + PostgreSQL, both real).

* Four Trend bots whose sockets reach two different processes meet at one table (the chairs
  they asked for), play a whole game, and the game is stored once, replaying to their scores.
* A bot that leaves mid-game and joins again on the *other* process gets its chair back.
* `kill -9` of the process that owns the table mid-game: the other process adopts it, the bots
  connected to it carry on, those whose socket died join again there (as SDK bots do after a
  close) and get their chairs back; the game finishes and the stored record replays to the scores
  every bot was told.
* `--workers 2` serves the Trend port on both workers (SO_REUSEPORT).

Skipped, with the reason, when Redis or PostgreSQL is not there (see tests/e2e/test_cluster.py,
whose fixtures these tests use).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re

import pytest

from moonshot.core.engine import replay
from moonshot.core.variants import TREND
from moonshot.store import GameRecord, Store
from trend_sdk import SdkBot

from .test_cluster import Cluster, cluster, free_port, start_node, stop_node  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(600)]


def ws_url(port: int) -> str:
    return f"ws://127.0.0.1:{port}/"


async def trend_node(c: Cluster, name: str, trend_port: int, workers: int = 1) -> object:
    return await start_node(c, free_port(), name, "--trend-port", str(trend_port), workers=workers)


async def stored(db: str, predicate: object, timeout: float = 300) -> GameRecord:
    """The first game stored (the test's own: bots that re-join after ``game_end`` and leave at
    once might, in a rare race, start another) once ``predicate`` holds for it."""
    store = await Store.open(db)
    try:
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            games = await store.list_games(None)
            if games:
                rec = await store.load(games[-1]["id"])
                if rec is not None and predicate(rec):  # type: ignore[operator]
                    return rec
            if loop.time() > end:
                raise TimeoutError("the store never reached the expected state")
            await asyncio.sleep(0.1)
    finally:
        await store.close()


def check_trend_record(rec: GameRecord, scores: dict[str, int]) -> None:
    """The stored game replays to the totals every bot was told (so no action is doubled or lost)."""
    assert rec.status == "finished" and rec.protocol == "trend" and rec.variant == "trend"
    final = replay(TREND, rec.seed, rec.actions)
    assert final.over and list(final.totals) == rec.totals
    assert [scores[p["name"]] for p in rec.players] == rec.totals


async def play(*bots: SdkBot, timeout: float = 240) -> None:
    await asyncio.wait_for(asyncio.gather(*(asyncio.to_thread(b.run) for b in bots)), timeout)


async def test_trend_bots_on_two_processes_meet_and_play_a_game(cluster: Cluster) -> None:  # noqa: F811
    ports = {"a": free_port(), "b": free_port()}
    nodes = {n: await trend_node(cluster, n, p) for n, p in ports.items()}
    try:
        where = ("a", "b", "a", "b")
        bots = [
            SdkBot(ws_url(ports[where[i]]), i + 1, f"p{i + 1}", games=1, seed=i, lobby_code="e2e") for i in range(4)
        ]
        await play(*bots)
        for b in bots:
            assert b.errors == [] and len(b.seen) == 1 and b.seen[0].deals == 4
        scores = bots[0].seen[0].scores
        assert all(b.seen[0].scores == scores for b in bots)
        first = next(f for f in bots[2].frames if f["eventName"] == "new_game")["data"]["players"]
        assert [p["playerName"] for p in first] == ["p1", "p2", "p3", "p4"]  # the chairs they asked for
        rec = await stored(cluster.db, lambda r: r.status == "finished")
        check_trend_record(rec, scores)
        assert [p["protocol"] for p in rec.players] == ["trend"] * 4
    finally:
        for node in nodes.values():
            await stop_node(node)  # type: ignore[arg-type]
    text = "".join(n.text() for n in nodes.values())  # type: ignore[attr-defined]
    assert "event=cluster_matched protocol=trend" in text


async def test_a_bot_that_left_takes_its_chair_back_on_the_other_process(cluster: Cluster) -> None:  # noqa: F811
    ports = {"a": free_port(), "b": free_port()}
    nodes = {n: await trend_node(cluster, n, p) for n, p in ports.items()}
    try:
        leaver = SdkBot(ws_url(ports["a"]), 2, "phoenix", token="t0ken", games=1, seed=7, lobby_code="back")

        def leave_and_come_back() -> None:
            ws = leaver.connect()
            turns = 0
            while turns < 3:
                msg = json.loads(ws.recv())
                leaver.frames.append(msg)
                leaver.handle(ws, msg)
                turns += msg["eventName"] == "your_turn"
            ws.close()  # gone mid-game (a bot plays the chair meanwhile)
            leaver.url = ws_url(ports["b"])
            leaver.run()  # the same join on the other process: the chair, then the game to its end

        others = [
            SdkBot(ws_url(ports[n]), k, f"slow{k}", games=1, seed=k, think=0.02, lobby_code="back")
            for n, k in (("a", 1), ("b", 3), ("b", 4))
        ]
        await asyncio.wait_for(
            asyncio.gather(asyncio.to_thread(leave_and_come_back), *(asyncio.to_thread(b.run) for b in others)), 90
        )
        for b in (leaver, *others):
            assert b.errors == [] and len(b.seen) == 1
        assert all(b.seen[0].scores == leaver.seen[0].scores for b in others)
        assert leaver.connections == 3  # the first join, the one that came back, the next game's
        back = [f for f in leaver.frames if f["eventName"] == "new_game"]
        assert len(back) == 2  # the first join's, then the catch-up's: the same table
        seated = [[(p["playerNumber"], p["playerName"]) for p in f["data"]["players"]] for f in back]
        assert seated[0] == seated[1] == [("1", "slow1"), ("2", "phoenix"), ("3", "slow3"), ("4", "slow4")]
        rec = await stored(cluster.db, lambda r: r.status == "finished")
        check_trend_record(rec, leaver.seen[0].scores)
    finally:
        for node in nodes.values():
            await stop_node(node)  # type: ignore[arg-type]
    assert "event=rejoined" in nodes["b"].text()  # type: ignore[attr-defined]


@pytest.mark.parametrize("victim", ["owner", "other"])
async def test_kill_9_mid_game_the_bots_of_the_dead_process_rejoin_and_the_game_finishes(
    cluster: Cluster,  # noqa: F811
    victim: str,
) -> None:
    """``owner``: the process running the table dies; the other one adopts it. ``other``: the
    process holding two of the bots' sockets dies; the owner plays their chairs until they re-join."""
    import redis.asyncio as aioredis

    ports = {"a": free_port(), "b": free_port()}
    nodes = {n: await trend_node(cluster, n, p) for n, p in ports.items()}
    where = {1: "a", 2: "b", 3: "a", 4: "b"}
    r = aioredis.Redis.from_url(cluster.redis_url)
    killed: list[str] = []
    came_back: list[int] = []

    async def player(k: int) -> SdkBot:
        """An SDK-style bot: after a close it joins again, on a process that is still there."""
        bot = SdkBot(ws_url(ports[where[k]]), k, f"k{k}", games=1, seed=k, think=0.03, lobby_code="kill")
        with contextlib.suppress(Exception):  # a reset connection: the process is gone
            await asyncio.to_thread(bot.run)
        if bot.seen:
            return bot
        while not killed:
            await asyncio.sleep(0.05)
        survivor = next(n for n in ports if n != killed[0])
        again = SdkBot(ws_url(ports[survivor]), k, f"k{k}", games=1, seed=k + 10, think=0.03, lobby_code="kill")
        await asyncio.to_thread(again.run)
        assert again.errors == []
        came_back.append(k)
        return again

    games = [asyncio.ensure_future(player(k)) for k in (1, 2, 3, 4)]
    try:
        before = await stored(cluster.db, lambda rec: len(rec.actions) >= 50, timeout=240)
        owner_node = (await r.hget(f"{cluster.prefix}tables", before.id)).decode()
        owning = next(n for n, node in nodes.items() if f"-{node.proc.pid}-" in owner_node)  # type: ignore[attr-defined]
        dead = owning if victim == "owner" else next(n for n in nodes if n != owning)
        await nodes[dead].kill9()  # type: ignore[attr-defined]
        killed.append(dead)
        bots = await asyncio.wait_for(asyncio.gather(*games), 120)
        scores = bots[0].seen[0].scores
        assert all(len(b.seen) == 1 and b.seen[0].scores == scores for b in bots)
        # the two bots whose socket was on the dead process came back; the other two carried on
        assert sorted(came_back) == sorted(k for k in where if where[k] == dead)
        rec = await stored(cluster.db, lambda rec: rec.status == "finished")
        assert rec.id == before.id and rec.actions[: len(before.actions)] == before.actions
        check_trend_record(rec, scores)
        survivor = next(n for n in nodes if n != dead)
        text = nodes[survivor].text()  # type: ignore[attr-defined]
        adopted = re.search(r"event=adopted table=\S+ protocol=trend ", text) is not None  # the one adopter's line
        assert adopted == (victim == "owner") and text.count("event=rejoined") == 2
        assert (await r.hget(f"{cluster.prefix}tables", rec.id)) is None  # the directory forgot it
    finally:
        for g in games:
            g.cancel()
        await r.aclose()
        for node in nodes.values():
            await stop_node(node)  # type: ignore[arg-type]


async def test_workers_share_the_trend_port(cluster: Cluster) -> None:  # noqa: F811
    port = free_port()
    node = await trend_node(cluster, "w", port, workers=2)
    try:
        # two lobby codes: a bot re-joins after its game_end (as the SDK's samples do) before it
        # sees that it is done, and with one code that re-join could take a chair meant for a
        # later first join (which then waits for bots)
        bots = [SdkBot(ws_url(port), 1 + i % 4, f"w{i}", games=1, seed=i, lobby_code=f"w{i // 4}") for i in range(8)]
        await play(*bots, timeout=120)
        for b in bots:
            assert b.errors == [] and len(b.seen) == 1
        tables = {tuple(sorted(b.seen[0].scores)) for b in bots}
        assert tables == {("w0", "w1", "w2", "w3"), ("w4", "w5", "w6", "w7")}  # two tables of four
    finally:
        await stop_node(node)  # type: ignore[arg-type]
    text = node.text()  # type: ignore[attr-defined]
    listening = re.findall(r"event=listening protocol=trend host=\S+ port=(\d+)", text)
    assert listening == [str(port), str(port)]  # both workers
    assert len(set(re.findall(r"event=cluster_joined node=(\S+)", text))) == 2
