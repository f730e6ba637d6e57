"""Rematch on a cluster: the finished game lives on one process (A), its players reach it through
another (B), with Redis and PostgreSQL, both real, and two `moonshot serve` processes.

* Two people, ann on A's HTTP port and bob on B's (as two browsers that land on different
  workers), and two bots finish a standard game; bob, on B, reads and accepts the offer ann made
  on A; the new game starts with every seat one chair clockwise, rated as the first; a name that
  was not at the table is refused through B as on A.
* ann on A, a Sessions client connected to B (its lobby code A's game id) and two bots finish a
  game; another connection on B cannot join for the Sessions chair; the client's own next
  ``game_session_request`` with the old game's id, through B, offers the rematch and is held (a
  decline on A ends its session with the reason); ann offers again, the client's next join
  accepts, and it plays the new game, one chair on.
* A Trend SDK bot connected to B, at A's trend game, closes after ``game_end`` and joins again
  through B with the same name, token and lobby code: that offers the rematch for its chair, and
  it plays the new game one chair on once erin accepts on A.

Skipped, with the reason, when Redis or PostgreSQL is not there (fixtures of test_cluster).
"""

from __future__ import annotations

import asyncio
import random
import threading
from typing import Any

import httpx
import pytest

from moonshot.protocols.sessions.client import Client, ProtocolError, RandomPlayer, SessionLost
from protocols.turbo.sse import SseReader
from trend_sdk import SdkBot

from .test_cluster import Cluster, cluster, free_port, new_http_game, start_node, stop_node, stored
from .test_cluster_mixed import wait_names
from .test_turbo_play import Person, check_game

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(600)]

__all__ = ["cluster"]  # the fixture, imported for the tests here

SEATS = ["north", "east", "south", "west"]


async def offer_state(
    c: httpx.AsyncClient, gid: str, want: str, accepted: list[str] | None = None, timeout: float = 60
) -> dict[str, Any]:
    """The rematch offer of ``gid`` as ``c`` reads it, once its state is ``want`` (and, when
    given, its accepted names are ``accepted``)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        r = await c.get(f"/lobby/rematch/{gid}")
        assert r.status_code == 200, r.text
        state: dict[str, Any] = r.json()
        if state["state"] == want and (accepted is None or state["accepted"] == accepted):
            return state
        if loop.time() > end:
            raise AssertionError(f"the rematch of {gid} is {state}, not {want}")
        await asyncio.sleep(0.1)


async def seated(c: httpx.AsyncClient, gid: str) -> list[str]:
    """The names at game ``gid`` by chair, from the first ``sit`` event of its stream."""
    async with c.stream("GET", f"/game/subscribe/{gid}") as resp:
        assert resp.status_code == 200
        reader = SseReader(resp)
        while (ev := await asyncio.wait_for(reader.next_event(), 60)) is not None:
            if ev.data["type"] == "sit":
                return [ev.data[s]["name"] for s in SEATS]
    raise AssertionError(f"game {gid}'s stream ended before any sit")


async def test_people_on_two_processes_accept_the_rematch_and_sit_one_chair_on(cluster: Cluster) -> None:
    a = await start_node(cluster, free_port(), "a", http_port=free_port(), lease=3)
    b = await start_node(cluster, free_port(), "b", http_port=free_port(), lease=3)
    try:
        async with (
            httpx.AsyncClient(base_url=a.url(), cookies={"name": "ann"}, timeout=60) as ann,
            httpx.AsyncClient(base_url=b.url(), cookies={"name": "bob"}, timeout=60) as bob,
            httpx.AsyncClient(base_url=b.url(), cookies={"name": "carol"}, timeout=60) as carol,
        ):
            gid = await new_http_game(ann)
            assert (await bob.post("/lobby/join", json={"id": gid})).status_code == 200
            for _ in range(2):
                assert (await ann.post("/lobby/add_bot", json={"id": gid, "algorithm": "random"})).status_code == 200
            people = [Person(ann, gid, "ann", seed=1), Person(bob, gid, "bob", seed=2)]
            streams = await asyncio.wait_for(asyncio.gather(*(p.play() for p in people)), 240)
            assert all(p.errors == [] for p in people)
            check_game(streams[1], "standard")
            old = await stored(cluster.db, lambda r: r.id == gid and r.status == "finished")
            old_names = [p["name"] for p in old.players]

            # the finished game is A's; B forwards its rematch's requests there
            assert (await bob.get(f"/lobby/rematch/{gid}")).json() == {"state": "none"}
            for method, path, body in (
                ("GET", f"/lobby/rematch/{gid}", None),
                ("POST", "/lobby/rematch", {"id": gid}),
                ("POST", "/lobby/rematch_decline", {"id": gid}),
            ):
                r = await carol.request(method, path, json=body)
                assert r.status_code == 403, (path, r.status_code, r.text)
            r = await ann.post("/lobby/rematch", json={"id": gid})
            assert r.status_code == 200 and r.json()["accepted"] == ["ann"], r.text
            asked = await offer_state(bob, gid, "open")
            assert asked["waiting"] == ["bob"] and asked["game"] is None
            # ann cannot accept for bob: whatever the body says, she accepts for herself
            r = await ann.post("/lobby/rematch", json={"id": gid, "name": "bob"})
            assert r.json()["state"] == "open" and r.json()["waiting"] == ["bob"]
            r = await bob.post("/lobby/rematch", json={"id": gid})
            assert r.status_code == 200 and r.json()["state"] == "started", r.text
            new_id = r.json()["game"]
            assert new_id and new_id != gid
            assert (await offer_state(ann, gid, "started"))["game"] == new_id

            rotated = [old_names[(c - 1) % 4] for c in range(4)]
            assert await seated(bob, new_id) == rotated  # through B: the new game is A's too
            assert await seated(ann, new_id) == rotated
            new = await stored(cluster.db, lambda r: r.id == new_id)
            assert [p["name"] for p in new.players] == rotated
            assert not new.meta.get("unrated") and not old.meta.get("unrated")  # rated, as the first
            assert new.meta.get("lobby_variant") == "standard" and new.meta.get("clock") == old.meta.get("clock")
            # a second acceptance after the start says where the new game is
            r = await bob.post("/lobby/rematch", json={"id": gid})
            assert r.status_code == 409 and new_id in r.text
    finally:
        await stop_node(a)
        await stop_node(b)
    assert "event=rematch_started" in a.text() and "event=rematch_started" not in b.text()


async def test_a_sessions_client_on_another_process_accepts_the_rematch_by_joining_again(cluster: Cluster) -> None:
    a = await start_node(cluster, free_port(), "a", http_port=free_port(), lease=3)
    b = await start_node(cluster, free_port(), "b", http_port=free_port(), lease=3)
    try:
        async with (
            httpx.AsyncClient(base_url=a.url(), cookies={"name": "ann"}, timeout=60) as ann,
            await Client.connect("127.0.0.1", b.port) as sdk,
        ):
            gid = await new_http_game(ann)
            first = asyncio.create_task(sdk.play(RandomPlayer(random.Random(3)), lobby_code=gid))
            await wait_names(ann, gid, 2)
            for _ in range(2):
                assert (await ann.post("/lobby/add_bot", json={"id": gid, "algorithm": "random"})).status_code == 200
            person = Person(ann, gid, "ann", seed=4)
            _, result = await asyncio.wait_for(asyncio.gather(person.play(), first), 240)
            assert person.errors == []
            old = await stored(cluster.db, lambda r: r.id == gid and r.status == "finished")
            old_names = [p["name"] for p in old.players]
            chair = old_names.index(result.me)
            assert old.players[chair]["protocol"] == "sessions"

            # the client's next join with the old game's id, through B, offers the rematch and is
            # its chair's acceptance; it is held until everyone accepted, and told when the offer
            # is cancelled meanwhile
            held = asyncio.create_task(sdk.play(RandomPlayer(random.Random(4)), lobby_code=gid))
            offer = await offer_state(ann, gid, "open", accepted=[result.me])
            assert offer["by"] == result.me and offer["waiting"] == ["ann"]
            assert offer["remote"] == {result.me: "sessions"}
            # another connection, on the same process as the client, cannot join for its chair
            async with await Client.connect("127.0.0.1", b.port) as stranger:
                with pytest.raises(ProtocolError, match="only a client that played a chair"):
                    await stranger.open_session("random_player", lobby_code=gid)
            r = await ann.post("/lobby/rematch_decline", json={"id": gid})
            assert r.status_code == 200 and r.json()["state"] == "cancelled", r.text
            with pytest.raises(SessionLost, match="cancelled: ann declined"):
                await asyncio.wait_for(held, 60)

            # ann offers it again; the client's own join, through B, accepts, and the game starts
            r = await ann.post("/lobby/rematch", json={"id": gid})
            assert r.status_code == 200, r.text
            assert r.json()["state"] == "open" and r.json()["waiting"] == [result.me]
            second = asyncio.create_task(sdk.play(RandomPlayer(random.Random(5)), lobby_code=gid))
            new_id = (await offer_state(ann, gid, "started"))["game"]
            assert new_id and new_id != gid
            again = Person(ann, new_id, "ann", seed=6)
            events, result2 = await asyncio.wait_for(asyncio.gather(again.play(), second), 240)
            assert again.errors == []
            check_game(events, "standard")
            new = await stored(cluster.db, lambda r: r.id == new_id and r.status == "finished")
            names = [p["name"] for p in new.players]
            assert result2.me == names[(chair + 1) % 4] and result2.player_order == names
            for c, name in enumerate(old_names):
                if c != chair:
                    assert names[(c + 1) % 4] == name
            assert new.players[(chair + 1) % 4]["protocol"] == "sessions"
            assert not new.meta.get("unrated") and new.meta.get("mixed") is True
            assert new.totals is not None and sorted(result2.scores.values()) == sorted(new.totals)
    finally:
        await stop_node(a)
        await stop_node(b)
    assert "event=rematch_joined" in a.text() and "event=mixed_claimed" in a.text()


async def test_a_trend_bot_on_another_process_joins_the_rematch_after_game_end(cluster: Cluster) -> None:
    """A Trend SDK bot connected to B closes after ``game_end`` and joins again through B with the
    same name, token and lobby code (A's finished game): that offers the rematch with its chair
    accepted, erin accepts on A, and the bot plays the new game one chair on."""
    trend_b = free_port()
    a = await start_node(cluster, free_port(), "a", "--trend-port", str(free_port()), http_port=free_port(), lease=3)
    b = await start_node(cluster, free_port(), "b", "--trend-port", str(trend_b), lease=3)
    try:
        async with httpx.AsyncClient(base_url=a.url(), cookies={"name": "erin"}, timeout=60) as erin:
            r = await erin.post("/lobby/new", json={"variant": "trend"})
            assert r.status_code == 200, r.text
            gid = r.json()
            bot = SdkBot(f"ws://127.0.0.1:{trend_b}/", 2, "ai2", games=2, seed=2, lobby_code=gid)
            thread = threading.Thread(target=bot.run, daemon=True)
            thread.start()
            await wait_names(erin, gid, 2, timeout=30)
            for _ in range(2):
                assert (await erin.post("/lobby/add_bot", json={"id": gid, "algorithm": "random"})).status_code == 200
            person = Person(erin, gid, "erin", seed=7)
            await asyncio.wait_for(person.play(), 180)
            old = await stored(cluster.db, lambda r: r.id == gid and r.status == "finished")
            old_names = [p["name"] for p in old.players]

            offer = await offer_state(erin, gid, "open", accepted=["ai2"])
            assert offer["by"] == "ai2" and offer["remote"] == {"ai2": "trend"} and offer["waiting"] == ["erin"]
            r = await erin.post("/lobby/rematch", json={"id": gid})
            assert r.status_code == 200 and r.json()["state"] == "started", r.text
            new_id = r.json()["game"]
            again = Person(erin, new_id, "erin", seed=8)
            await asyncio.wait_for(again.play(), 180)
            await asyncio.to_thread(thread.join, 120)
            new = await stored(cluster.db, lambda r: r.id == new_id and r.status == "finished")
        assert person.errors == [] and again.errors == []
        assert bot.errors == [] and len(bot.seen) == 2 and bot.seen[1].deals == 4, bot.errors
        assert [p["name"] for p in new.players] == [old_names[(c - 1) % 4] for c in range(4)]
        assert new.players[(old_names.index("ai2") + 1) % 4]["protocol"] == "trend"
        assert not new.meta.get("unrated") and new.meta.get("mixed") is True
        assert new.totals is not None
        by_name = {p["name"]: total for p, total in zip(new.players, new.totals)}
        assert bot.seen[1].scores == by_name
    finally:
        await stop_node(a)
        await stop_node(b)
    assert "event=rematch_joined" in a.text() and "protocol=trend" in a.text()
