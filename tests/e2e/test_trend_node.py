"""The Trend node over real WebSockets: SDK-style bots play whole matches against dummies and
each other, re-joining after every game_end; timeouts, wrong cards and numbers, tokens,
reconnects, --auto-cycle, bad input and the seat page's API."""

from __future__ import annotations

import asyncio
import html
import json
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
import websocket
import websockets

from moonshot.server.trend_node import NodeConfig, NodeServer, load_tokens, parse_seats
from protocols.turbo.sse import SseReader
from trend_sdk import SdkBot

pytestmark = pytest.mark.asyncio

FAST = {"round_interval": 0.0, "deal_interval": 0.0, "command_interval": 0.0}


async def start(seats: str = "empty,empty,empty,empty", **options: Any) -> NodeServer:
    cfg = NodeConfig(port=0, seats=parse_seats(seats, "random"), seed=5, substitute="random")
    for k, v in {**FAST, "pick_timeout": 10.0, "pass_timeout": 10.0, "expose_timeout": 10.0, **options}.items():
        setattr(cfg, k, v)
    server = NodeServer(cfg)
    await server.start()
    return server


@pytest_asyncio.fixture
async def node() -> AsyncIterator[NodeServer]:
    server = await start("empty,dummy,empty,dummy")
    yield server
    await server.stop()


def url(server: NodeServer) -> str:
    return f"ws://127.0.0.1:{server.node.port}/"


async def run_bots(*bots: SdkBot, timeout: float = 120) -> None:
    await asyncio.wait_for(asyncio.gather(*(asyncio.to_thread(b.run) for b in bots)), timeout)


def join_frame(number: Any, name: str, token: str = "12345678") -> str:
    return json.dumps({"eventName": "join", "data": {"playerNumber": number, "playerName": name, "token": token}})


async def test_sdk_bots_play_a_whole_match_against_dummies_and_are_kept_idle_after_it(node: NodeServer) -> None:
    alice = SdkBot(url(node), 1, "alice", send_stop_game=True, seed=1, idle_check=0.5)
    bob = SdkBot(url(node), 3, "bob", seed=2, idle_check=0.5)
    await run_bots(alice, bob)
    assert alice.errors == [] and bob.errors == []
    assert [g.scores for g in alice.seen] == [g.scores for g in bob.seen]
    assert all(g.deals == 4 for g in alice.seen)
    assert all(set(g.scores) == {"alice", "bob", "player2", "player4"} for g in alice.seen)
    # 4 games at rotating positions: each player sat in every chair once
    chairs = [r["players"] for r in node.node.results]
    assert len(chairs) == 4
    for name in ("alice", "bob", "player2", "player4"):
        assert sorted(c.index(name) for c in chairs) == [0, 1, 2, 3]
    assert alice.connections == 5  # joined, then re-joined after each of the 4 game_ends
    assert node.node.state == "over" and node.node.games_played == 4
    assert alice.kept_open is True and bob.kept_open is True  # refused after the match, never closed
    assert alice.frames[-1]["eventName"] == "error"
    assert all(g.server_random == 0 for g in alice.seen)


async def test_four_sdk_bots_play_a_match_against_each_other() -> None:
    server = await start()
    try:
        bots = [SdkBot(url(server), n, f"ai{n}", seed=n, send_stop_game=n % 2 == 0) for n in (1, 2, 3, 4)]
        await run_bots(*bots)
        for b in bots:
            assert b.errors == []
            assert len(b.seen) == 4 and all(g.server_random == 0 for g in b.seen)
        assert [g.scores for g in bots[0].seen] == [g.scores for g in bots[3].seen]
        first = next(f for f in bots[0].frames if f["eventName"] == "new_game")
        assert [p["playerNumber"] for p in first["data"]["players"]] == ["1", "2", "3", "4"]  # as the bots sent
    finally:
        await server.stop()


def game_end_stats(bot: SdkBot) -> dict[str, tuple[int, int]]:
    end = next(f for f in reversed(bot.frames) if f["eventName"] == "game_end")["data"]["players"]
    return {p["playerName"]: (p["timeoutCount"], p["errorCount"]) for p in end}


async def test_a_wrong_card_is_replaced_by_a_server_random_card_and_counted() -> None:
    server = await start("empty,dummy,dummy,dummy")
    try:
        wrong = SdkBot(url(server), 1, "wrong", pick="wrong", games=1, seed=3)
        await run_bots(wrong)
        assert wrong.errors == []
        assert game_end_stats(wrong)["wrong"] == (0, 52)  # every card wrong, each counted
        assert wrong.seen[0].server_random == 52  # and each reported serverRandom
        turns = [f["data"] for f in wrong.frames if f["eventName"] == "turn_end"]
        assert not any(t["serverRandom"] for t in turns if t["turnPlayer"] != "wrong")
    finally:
        await server.stop()


async def test_replies_with_wrong_numbers_are_dropped_and_time_out() -> None:
    server = await start("empty,dummy,dummy,dummy", pick_timeout=0.1, pass_timeout=0.1, expose_timeout=0.1)
    try:
        numbers = SdkBot(url(server), 1, "numbers", wrong_numbers=True, games=1, seed=4)
        await run_bots(numbers)
        assert numbers.errors == []
        timeouts, errors = game_end_stats(numbers)["numbers"]
        assert timeouts >= 52 + 3 and errors == 0  # every card and pass dropped, so timed out
        turns = [f["data"] for f in numbers.frames if f["eventName"] == "turn_end"]
        assert all(t["serverRandom"] for t in turns if t["turnPlayer"] == "numbers")
    finally:
        await server.stop()


async def test_tokens_refuse_a_wrong_token_with_a_reason_and_a_close(tmp_path: Path) -> None:
    f = tmp_path / "tokens.txt"
    f.write_text("# playerNumber token\n1 s3cret-one\n2=s3cret-two\n")
    assert load_tokens(f) == {1: "s3cret-one", 2: "s3cret-two"}
    server = await start("empty,empty,dummy,dummy", tokens=load_tokens(f))

    def attempt(token: str) -> tuple[dict[str, Any] | None, bool]:
        ws = websocket.create_connection(url(server), timeout=5)
        ws.send(join_frame("1", "alice", token))
        try:
            first = json.loads(ws.recv())
        except websocket.WebSocketConnectionClosedException:
            return None, True
        try:
            closed = ws.recv() in ("", b"")  # the close frame
        except websocket.WebSocketConnectionClosedException:
            closed = True
        except websocket.WebSocketTimeoutException:
            closed = False
        ws.close()
        return first, closed

    try:
        first, closed = await asyncio.to_thread(attempt, "guess")
        assert first is not None and first["eventName"] == "error" and "wrong token" in first["data"]["message"]
        assert closed
        first, _ = await asyncio.to_thread(attempt, "s3cret-one")
        assert first is not None and first["eventName"] == "new_peer"
    finally:
        await server.stop()


async def test_a_player_who_drops_mid_game_is_played_by_a_bot_and_takes_its_seat_back() -> None:
    server = await start("empty,dummy,dummy,dummy", pick_timeout=5.0, command_interval=0.05)
    got: list[dict[str, Any]] = []

    def play() -> None:
        ws = websocket.create_connection(url(server), timeout=10)
        ws.send(join_frame(1, "alice", "mine"))
        while True:  # play until round 3 of deal 1, then vanish
            m = json.loads(ws.recv())
            if m["eventName"] == "pass_cards":
                cards = m["data"]["self"]["cards"][:3]
                ws.send(json.dumps({"eventName": "pass_my_cards", "data": {"dealNumber": 1, "cards": cards}}))
            if m["eventName"] == "your_turn" and m["data"]["roundNumber"] >= 3:
                break
            if m["eventName"] == "your_turn":
                d = m["data"]
                pick = {"dealNumber": 1, "roundNumber": d["roundNumber"], "turnCard": d["self"]["candidateCards"][0]}
                ws.send(json.dumps({"eventName": "pick_card", "data": pick}))
            if m["eventName"] == "expose_cards":
                ws.send(json.dumps({"eventName": "expose_my_cards", "data": {"dealNumber": 1, "cards": []}}))
        ws.close()
        time.sleep(0.3)
        thief = websocket.create_connection(url(server), timeout=3)
        thief.send(join_frame(1, "mallory", "guess"))
        got.append(json.loads(thief.recv()))
        ws = websocket.create_connection(url(server), timeout=10)
        ws.send(join_frame(1, "alice", "mine"))
        for _ in range(3):
            got.append(json.loads(ws.recv()))
        while True:
            m = json.loads(ws.recv())
            if m["eventName"] == "your_turn":
                got.append(m)
                break
        ws.close()
        thief.close()

    try:
        await asyncio.wait_for(asyncio.to_thread(play), 240)
        refused, caught_up, your_turn = got[0], got[1:4], got[4]
        assert refused["eventName"] == "error" and "another player" in refused["data"]["message"]
        assert [m["eventName"] for m in caught_up] == ["new_game", "new_deal", "new_round"]
        deal = caught_up[1]["data"]
        assert deal["self"]["playerName"] == "alice" and deal["self"]["cardsCount"] < 13
        assert your_turn["data"]["self"]["playerName"] == "alice"
        table = server.node.table
        assert table is not None and table.stats()[0].forced > 0  # the substitute played meanwhile
    finally:
        await server.stop()


async def test_auto_cycle_starts_the_next_match_for_reconnecting_bots() -> None:
    server = await start("empty,dummy,empty,dummy", auto_cycle=1)
    try:
        a = SdkBot(url(server), 1, "a", games=8, seed=1)
        b = SdkBot(url(server), 3, "b", games=8, seed=2)
        await run_bots(a, b, timeout=240)
        assert a.errors == [] and b.errors == []
        assert server.node.match >= 2 and server.node.games_played >= 8
        assert a.connections == 9
    finally:
        await server.stop()


async def test_bad_input_is_ignored_and_the_game_goes_on(node: NodeServer) -> None:
    alice = SdkBot(url(node), 1, "alice", games=1, seed=1)
    seen: dict[str, int] = {}

    def vandal() -> None:
        ws = websocket.create_connection(url(node), timeout=30)
        ws.send(join_frame("3", "vandal"))
        junk = ["not json", "[]", '{"eventName":"hello"}', '{"eventName":"pick_card","data":{"turnCard":7}}']
        for j in junk:
            ws.send(j)
        ws.send_binary(b"\xff\xfe")
        while True:
            m = json.loads(ws.recv())
            name, data = m["eventName"], m["data"]
            seen[name] = seen.get(name, 0) + 1
            if name == "your_turn":
                ws.send("{oops")
                pick = {"dealNumber": data["dealNumber"], "roundNumber": data["roundNumber"]}
                pick["turnCard"] = data["self"]["candidateCards"][0]
                ws.send(json.dumps({"eventName": "pick_card", "data": pick}))
            elif name == "pass_cards":
                cards = data["self"]["cards"][:3]
                ws.send(
                    json.dumps(
                        {"eventName": "pass_my_cards", "data": {"dealNumber": data["dealNumber"], "cards": cards}}
                    )
                )
            elif name == "game_end":
                seen["ignored"] = max(p.ignored for p in list(node.node.peers))
                break
        ws.close()

    await asyncio.wait_for(asyncio.gather(asyncio.to_thread(alice.run), asyncio.to_thread(vandal)), 120)
    assert alice.errors == [] and len(alice.seen) == 1
    assert seen["game_end"] == 1 and seen["your_turn"] == 13 * 4
    assert seen["ignored"] >= 3 + 1 + 52  # junk (the wrong pick_card is a dropped reply), binary, every "{oops"
    assert alice.seen[0].server_random == 0


async def test_a_flood_or_a_frame_over_64_kib_closes_the_socket(node: NodeServer) -> None:
    def close_code(frames: list[str]) -> int | None:
        ws = websocket.create_connection(url(node), timeout=30)
        try:
            for f in frames:
                ws.send(f)
            while True:
                op, data = ws.recv_data(control_frame=True)
                if op == websocket.ABNF.OPCODE_CLOSE:
                    return int.from_bytes(data[:2], "big")
        except (websocket.WebSocketConnectionClosedException, ConnectionError):
            return None
        finally:
            ws.close()

    flood = ['{"eventName":"stop_game","data":{}}'] * 500
    assert await asyncio.to_thread(close_code, flood) == 1008
    # over 64 KiB: uvicorn closes (1009, or the TCP connection at once); a socket left open
    # would time out the read above and fail the test
    assert await asyncio.to_thread(close_code, ["x" * (64 * 1024 + 1)]) in (1009, None)


async def test_the_seat_page_and_its_api(node: NodeServer) -> None:
    base = f"http://127.0.0.1:{node.node.port}"
    async with httpx.AsyncClient(base_url=base) as http:
        page = await http.get("/")
        assert page.status_code == 200 and "Start Game" in page.text
        state = (await http.get("/api/state")).json()
        assert [s["kind"] for s in state["seats"]] == ["empty", "dummy", "empty", "dummy"]
        assert state["state"] == "waiting" and state["websocket"].startswith("ws://")
        bad = await http.post("/api/seats", json={"seats": [{"kind": "robot"}] * 4})
        assert bad.status_code == 400
        seats = [{"kind": "dummy", "bot": "random"}] * 3 + [{"kind": "empty", "bot": "random"}]
        ok = await http.post("/api/seats", json={"seats": seats})
        assert ok.status_code == 200
        assert [s["kind"] for s in ok.json()["seats"]] == ["dummy", "dummy", "dummy", "empty"]
    solo = SdkBot(url(node), 4, "solo", games=1)
    await run_bots(solo)
    assert solo.errors == [] and len(solo.seen) == 1
    async with httpx.AsyncClient(base_url=base) as http:
        busy = await http.post("/api/seats", json={"seats": [{"kind": "empty"}] * 4})
        assert busy.status_code == 409  # a match is being played


async def test_the_nodes_pages_link_only_to_what_the_node_has_and_its_stream_names_players() -> None:
    """The web app's table page on the node links to the seat page only (no lobby, history,
    tournaments or leaderboard there); ``/api/state`` offers the dummies docs/trend.md lists;
    the watch stream names a dummy by its bot and an AI that joined by its protocol."""
    server = await start("empty,dummy:heuristic,dummy:random,dummy")
    base = f"http://127.0.0.1:{server.node.port}"
    try:
        async with httpx.AsyncClient(base_url=base) as http:
            game = await http.get("/game")
            assert game.status_code == 200
            meta = re.search(r'<meta name="moonshot-site" content="([^"]*)">', game.text)
            assert meta is not None
            site = json.loads(html.unescape(meta.group(1)))
            assert site["nav"] == [["/", "Seats", "seats"]] and site["home"] == "/" and site["replay"] is False
            for href, _, _ in site["nav"]:
                assert (await http.get(href)).status_code == 200
            for missing in ("/tournaments", "/leaderboard"):
                assert missing not in game.text and (await http.get(missing)).status_code == 404
            state = (await http.get("/api/state")).json()
            levels = [f"level:{n}" for n in range(1, len(state["levels"]) + 1)]
            assert state["bots"] == ["random", "heuristic", "search", *levels]  # docs/trend.md's list
            odd = [{"kind": "dummy", "bot": "pimc"}] + [{"kind": "empty", "bot": "heuristic"}] * 3
            after = await http.post("/api/seats", json={"seats": odd})  # any of moonshot's bots by the API
            assert after.status_code == 200 and after.json()["bots"] == [
                "random",
                "heuristic",
                "search",
                *levels,
                "pimc",
            ]
            back = [{"kind": "empty", "bot": "heuristic"}, {"kind": "dummy", "bot": "heuristic"}]
            back += [{"kind": "dummy", "bot": "random"}, {"kind": "dummy", "bot": "heuristic"}]
            assert (await http.post("/api/seats", json={"seats": back})).status_code == 200
        solo = SdkBot(url(server), 1, "solo", games=1)
        task = asyncio.ensure_future(run_bots(solo))
        for _ in range(3000):
            if server.node.game_id is not None:
                break
            await asyncio.sleep(0.01)
        gid = server.node.game_id
        assert gid is not None
        watcher = httpx.AsyncClient(base_url=base, cookies={"name": "watcher"}, timeout=60)
        async with watcher, watcher.stream("GET", f"/game/subscribe/{gid}") as resp:
            assert resp.status_code == 200
            sit = next(e.data for e in await SseReader(resp).until("sit") if e.data["type"] == "sit")
        assert sit["north"] == {"type": "bot", "name": "solo", "algorithm": "trend"}  # a remote player
        assert sit["east"] == {"type": "bot", "name": "player2", "algorithm": "heuristic"}
        assert sit["south"] == {"type": "bot", "name": "player3", "algorithm": "random"}
        await task
        assert solo.errors == []
    finally:
        await server.stop()


async def test_behind_a_trusted_proxy_the_seat_page_links_wss_and_the_node_counts_the_real_client() -> None:
    server = await start(trusted_proxies=("127.0.0.2",))
    try:
        base = f"http://127.0.0.1:{server.node.port}"
        tls = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "198.51.100.7", "Host": "moonshot.example.org"}
        proxy = httpx.AsyncHTTPTransport(local_address="127.0.0.2")
        async with httpx.AsyncClient(base_url=base, transport=proxy) as via_proxy:
            state = (await via_proxy.get("/api/state", headers=tls)).json()
            assert state["websocket"] == "wss://moonshot.example.org/"
        # anyone else saying so is not believed: the link follows the connection it came on
        async with httpx.AsyncClient(base_url=base) as direct:
            state = (await direct.get("/api/state", headers=tls)).json()
            assert state["websocket"] == "ws://moonshot.example.org/"
        # a Trend socket through the proxy is the forwarded client's
        ws = await websockets.connect(
            url(server), additional_headers={"X-Forwarded-For": "198.51.100.7"}, local_addr=("127.0.0.2", 0)
        )
        try:
            deadline = time.monotonic() + 30
            while not any(p.ip == "198.51.100.7" for p in server.node.peers):
                assert time.monotonic() < deadline, [p.ip for p in server.node.peers]
                await asyncio.sleep(0.01)
        finally:
            await ws.close()
    finally:
        await server.stop()
