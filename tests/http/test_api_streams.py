"""Turbo streams on a real server (uvicorn on a free loopback port): game replay, end_replay,
Last-Event-ID resume, redaction per viewer, chat ids, the lobby stream, the close after
game_complete."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from moonshot.protocols.turbo.codec import parse_event_id
from protocols.turbo.sse import SseReader, base_url, http_server

pytestmark = pytest.mark.asyncio
SEATS = ["north", "east", "south", "west"]


async def test_game_stream_replays_then_end_replay_then_live_and_resumes(tmp_path: Path) -> None:
    async with http_server(tmp_path) as app, httpx.AsyncClient(base_url=base_url(app), cookies={"name": "ann"}) as ann:
        gid = (
            await ann.post("/lobby/new", json={"rules": "classic", "variant": "standard", "seed": 9, "practice": True})
        ).json()
        for _ in range(3):
            await ann.post("/lobby/add_bot", json={"id": gid, "rules": "classic", "algorithm": "random"})
        async with ann.stream("GET", f"/game/subscribe/{gid}") as resp:
            assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/event-stream")
            reader = SseReader(resp)
            past = await reader.until("end_replay")
        types = [e.data["type"] for e in past]
        assert types[:4] == ["sit", "deal", "start_passing", "pass_status"] and types[-1] == "end_replay"
        assert past[-1].id is None  # end_replay moves no Last-Event-ID
        sit = past[0].data
        me = next(s for s in SEATS if sit[s]["name"] == "ann")
        deal = past[1].data
        assert len(deal[me]) == 13 and all(deal[s] == [] for s in SEATS if s != me)  # redacted for ann
        ids = [parse_event_id(e.id) for e in past[:-1]]
        assert all(i is not None for i in ids) and ids == sorted(ids)  # type: ignore[type-var]
        # ann passes: live events follow; then a reconnect with Last-Event-ID gets only what it missed
        last_id = past[-2].id
        cards = deal[me][:3]
        assert (await ann.post("/game/pass", json={"id": gid, "cards": cards})).status_code == 200
        async with ann.stream("GET", f"/game/subscribe/{gid}", headers={"Last-Event-ID": last_id or ""}) as resp:
            reader = SseReader(resp)
            missed = await reader.until("end_replay")
        assert missed[0].data == {"type": "send_pass", "from": me, "cards": cards}
        assert all(parse_event_id(e.id) > parse_event_id(last_id) for e in missed[:-1])  # type: ignore[operator]


@pytest.mark.parametrize(
    ("options", "body", "open_hands"),
    [
        ({}, {}, False),  # by default a spectator sees only what is public
        ({"open_spectators": True}, {}, True),  # Turbo's trust model
        ({"open_names": True}, {}, True),  # which --open-names implies
        ({}, {"open_hands": True}, True),  # a table its creator opened (unrated)
    ],
)
async def test_a_spectator_sees_hands_only_where_open_and_a_seat_only_its_own(
    tmp_path: Path, options: dict[str, Any], body: dict[str, Any], open_hands: bool
) -> None:
    async with http_server(tmp_path, **options) as app:
        url = base_url(app)
        async with (
            httpx.AsyncClient(base_url=url, cookies={"name": "ann"}) as ann,
            httpx.AsyncClient(base_url=url, cookies={"name": "spy"}) as spy,
        ):
            gid = (await ann.post("/lobby/new", json={"rules": "blind", **body})).json()
            for _ in range(3):
                await ann.post("/lobby/add_bot", json={"id": gid, "rules": "blind", "algorithm": "random"})
            async with spy.stream("GET", f"/game/subscribe/{gid}") as resp:
                seen = await SseReader(resp).until("end_replay")
            deal = next(e.data for e in seen if e.data["type"] == "deal")
            if open_hands:
                assert all(len(deal[s]) == 13 for s in SEATS)
            else:
                assert all(deal[s] == [] for s in SEATS)
                # passes reach a spectator as the seed redacts them for other seats: no cards
                passes = [e.data for e in seen if e.data["type"] in ("send_pass", "recv_pass")]
                assert all(d["cards"] == [] for d in passes)
                assert not any(e.data["type"].startswith("hidden_") for e in seen)
            assert app.turbo is not None and app.turbo.games[gid].rated is not body.get("open_hands", False)
            async with ann.stream("GET", f"/game/subscribe/{gid}") as resp:
                mine = await SseReader(resp).until("end_replay")
            me = next(s for s in SEATS if mine[0].data[s]["name"] == "ann")
            assert not [e for e in mine if e.data["type"].startswith("hidden_")]
            # the seed's redaction: another seat's pass, sent or received, comes with no cards
            theirs = [e.data for e in mine if e.data["type"] in ("send_pass", "recv_pass")]
            theirs = [d for d in theirs if d.get("from", d.get("to")) != me]
            assert theirs and all(d["cards"] == [] for d in theirs)
            assert all(
                len(e.data["cards"]) == 3 for e in mine if e.data["type"] == "send_pass" and e.data["from"] == me
            )


async def test_game_chat_is_in_the_stream_with_ids_between_versions(tmp_path: Path) -> None:
    async with http_server(tmp_path) as app, httpx.AsyncClient(base_url=base_url(app), cookies={"name": "ann"}) as ann:
        gid = (await ann.post("/lobby/new", json={"rules": "classic"})).json()
        r = await ann.post("/game/chat", json={"id": gid, "message": "before the start"})
        assert r.status_code == 200
        for _ in range(3):
            await ann.post("/lobby/add_bot", json={"id": gid, "rules": "classic", "algorithm": "random"})
        await asyncio.sleep(0.1)
        await ann.post("/game/chat", json={"id": gid, "message": "hello"})
        async with ann.stream("GET", f"/game/subscribe/{gid}") as resp:
            seen = await SseReader(resp).until("end_replay")
        chats = [e for e in seen if e.data["type"] == "chat"]
        assert [c.data["message"] for c in chats] == ["before the start", "hello"]
        assert chats[0].id == "0.1" and seen[0].data["type"] == "chat"
        ids = [e.id for e in seen if e.id is not None]
        assert len(set(ids)) == len(ids)
        positions = [parse_event_id(i) for i in ids]
        assert positions == sorted(positions)  # type: ignore[type-var]
        assert (await ann.post("/game/chat", json={"id": "nope", "message": "x"})).status_code == 404


async def test_stream_closes_after_game_complete_and_late_subscribers_get_the_whole_game(tmp_path: Path) -> None:
    async with (
        http_server(tmp_path) as app,
        httpx.AsyncClient(base_url=base_url(app), cookies={"name": "ann"}, timeout=60) as ann,
    ):
        gid = (await ann.post("/lobby/new", json={"rules": "classic", "variant": "kierki"})).json()
        async with ann.stream("GET", f"/game/subscribe/{gid}") as resp:
            reader = SseReader(resp)
            await reader.until("end_replay")  # subscribed before the game started
            # ann plays by following play_status (kierki has no passing)
            for _ in range(3):
                await ann.post("/lobby/add_bot", json={"id": gid, "rules": "classic", "algorithm": "random"})
            me = None
            while True:
                ev = await reader.next_event()
                assert ev is not None, "the stream ended before game_complete"
                d = ev.data
                if d["type"] == "sit":
                    me = next(s for s in SEATS if d[s]["name"] == "ann")
                if d["type"] == "play_status" and d["next_player"] == me:
                    assert d["legal_plays"]
                    r = await ann.post("/game/play", json={"id": gid, "card": d["legal_plays"][0]})
                    assert r.status_code == 200, r.text
                if d["type"] == "game_complete":
                    break
            assert await reader.next_event() is None  # closed shortly after
        async with ann.stream("GET", f"/game/subscribe/{gid}") as resp:
            late = await SseReader(resp).rest()
        assert late[0].data["type"] == "sit" and late[-2].data["type"] == "game_complete"
        assert late[-1].data["type"] == "end_replay"


async def test_unknown_game_stream_is_404(tmp_path: Path) -> None:
    async with http_server(tmp_path) as app, httpx.AsyncClient(base_url=base_url(app), cookies={"name": "a"}) as c:
        r = await c.get("/game/subscribe/nope")
        assert r.status_code == 404 and "error" in r.json()


async def test_lobby_stream_events(tmp_path: Path) -> None:
    async with http_server(tmp_path) as app:
        url = base_url(app)
        async with (
            httpx.AsyncClient(base_url=url, cookies={"name": "ann"}) as ann,
            httpx.AsyncClient(base_url=url, cookies={"name": "bob"}) as bob,
            ann.stream("GET", "/lobby/subscribe") as resp,
        ):
            reader = SseReader(resp)
            first = await reader.next_event()
            assert first is not None and first.data == {"type": "lobby_state", "subscribers": ["ann"], "games": {}}
            async with bob.stream("GET", "/lobby/subscribe") as bresp:
                bob_reader = SseReader(bresp)
                state = await bob_reader.next_event()
                assert state is not None and state.data["subscribers"] == ["ann", "bob"]
                assert (await reader.next_event()).data == {"type": "join_lobby", "player": "bob", "name": "bob"}  # type: ignore[union-attr]
                gid = (await bob.post("/lobby/new", json={"rules": "chain"})).json()
                assert (await reader.next_event()).data == {
                    "type": "new_game",
                    "id": gid,
                    "player": "bob",
                    "name": "bob",
                    "clock": 30.0,  # a rated game's default clock
                }  # type: ignore[union-attr]
                await ann.post("/lobby/join", json={"id": gid, "rules": "classic"})
                assert (await reader.next_event()).data == {
                    "type": "join_game",
                    "id": gid,
                    "player": {"type": "human", "name": "ann"},
                    "name": "ann",
                }  # type: ignore[union-attr]
                await ann.post("/lobby/leave", json={"id": gid})
                assert (await reader.next_event()).data == {
                    "type": "leave_game",
                    "id": gid,
                    "player": "ann",
                    "name": "ann",
                }  # type: ignore[union-attr]
                await bob.post("/lobby/chat", json={"message": "Anyone here?"})
                assert (await reader.next_event()).data == {
                    "type": "chat",
                    "name": "bob",
                    "message": "Anyone here?",
                }  # type: ignore[union-attr]
                for _ in range(3):
                    await bob.post("/lobby/add_bot", json={"id": gid, "rules": "chain", "algorithm": "random"})
                kinds = [(await reader.next_event()).data["type"] for _ in range(3)]  # type: ignore[union-attr]
                assert kinds == ["join_game"] * 3
            await asyncio.sleep(0.1)
            assert (await reader.next_event()).data == {"type": "leave_lobby", "player": "bob", "name": "bob"}  # type: ignore[union-attr]


async def test_a_player_watching_before_the_start_gets_the_redacted_stream(tmp_path: Path) -> None:
    async with http_server(tmp_path) as app:
        url = base_url(app)
        async with (
            httpx.AsyncClient(base_url=url, cookies={"name": "ann"}) as ann,
            httpx.AsyncClient(base_url=url, cookies={"name": "bob"}) as bob,
        ):
            gid = (await ann.post("/lobby/new", json={"rules": "classic"})).json()
            async with bob.stream("GET", f"/game/subscribe/{gid}") as resp:  # bob is not in it yet
                reader = SseReader(resp)
                await reader.until("end_replay")
                await bob.post("/lobby/join", json={"id": gid, "rules": "classic"})
                for _ in range(2):
                    await ann.post("/lobby/add_bot", json={"id": gid, "rules": "classic", "algorithm": "random"})
                # the game's events; a live clock message (no id) may come between them
                sit, deal = [(await reader.until(kind))[-1].data for kind in ("sit", "deal")]
            me = next(s for s in SEATS if sit[s]["name"] == "bob")
            assert deal["type"] == "deal" and len(deal[me]) == 13
            assert all(deal[s] == [] for s in SEATS if s != me)


async def test_a_table_notice_is_a_server_chat_line_in_the_stream_not_kept_with_the_chat() -> None:
    from moonshot.http.streams import GameStream, Subscriber
    from moonshot.runtime.table import TableNotice

    stream = GameStream("g1")
    sub = Subscriber("erin", None)
    stream.subscribers.add(sub)
    stream.chat("erin", "hello")
    stream.on_notice(None, TableNotice("paused", "storage", "paused: the game store cannot be written"))  # type: ignore[arg-type]
    got = [sub.queue.get_nowait(), sub.queue.get_nowait()]
    assert got[1] is not None and got[1].data == {
        "type": "chat",
        "name": "moonshot",
        "message": "paused: the game store cannot be written",
    }
    assert got[0] is not None and got[1].position > got[0].position  # after what came before
    assert [c["name"] for c in stream.chat_log] == ["erin"]  # the notice is not stored as chat
