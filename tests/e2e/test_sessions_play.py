"""Sessions over real sockets: SDK sessions on one connection, many tables, the matching rules."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from e2e.conftest import sessions_server
from moonshot.bots.random import RandomBot
from moonshot.protocols.sessions.client import BotPlayer, Client, GameResult, Player, RandomPlayer, View
from moonshot.server.app import ServerApp

pytestmark = pytest.mark.asyncio


def check(results: list[GameResult], games: int) -> None:
    by_game: dict[tuple[str, ...], list[GameResult]] = {}
    for r in results:
        by_game.setdefault(tuple(r.player_order), []).append(r)
    assert len(by_game) == games
    for rs in by_game.values():
        first = rs[0]
        assert all(r.scores == first.scores and r.winner == first.winner for r in rs)
        assert max(first.scores.values()) > 100 >= sorted(first.scores.values())[-2] - 200
        assert first.scores[first.winner] == min(first.scores.values())


async def test_four_sdk_sessions_on_one_connection_play_a_full_game(server: ServerApp) -> None:
    assert server.sessions_port
    async with await Client.connect("127.0.0.1", server.sessions_port) as c:
        results = await asyncio.wait_for(
            c.play_games(lambda: RandomPlayer(random.Random(1)), sessions=4, games=4, lobby_code="t1"), 60
        )
    check(results, 1)
    assert all(r.server_moves == 0 and not r.errors for r in results)
    assert all(r.me.endswith(")") and r.me.startswith("random_player(") for r in results)
    await server.recorder.flush()  # type: ignore[union-attr]
    games = await server.store.list_games("finished")  # type: ignore[union-attr]
    assert len(games) == 1 and games[0]["players"][0]["name"].startswith("random_player(")


async def test_many_connections_and_tables_at_once(server: ServerApp) -> None:
    port = server.sessions_port
    assert port

    async def one(code: int) -> list[GameResult]:
        async with await Client.connect("127.0.0.1", port) as c:
            return await c.play_games(RandomPlayer, sessions=4, games=8, lobby_code=f"m{code % 3}")

    groups = await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(6))), 120)
    results = [r for g in groups for r in g]
    assert len(results) == 48
    check(results, 12)
    assert all(r.server_moves == 0 for r in results)


async def test_a_moonshot_bot_plays_through_the_sdk(server: ServerApp) -> None:
    assert server.sessions_port
    async with await Client.connect("127.0.0.1", server.sessions_port) as c:
        results = await asyncio.wait_for(
            c.play_games(lambda: BotPlayer(RandomBot()), sessions=4, games=4, lobby_code="bp"), 60
        )
    check(results, 1)
    assert all(r.server_moves == 0 for r in results)


class AsyncHuman(Player):
    name = "alice"
    kind = "human"

    def __init__(self) -> None:
        self.views: list[View] = []

    async def pass_cards(self, view: View) -> list[str]:
        await asyncio.sleep(0)
        return view.hand[-3:]

    async def play(self, view: View) -> str:
        self.views.append(view)
        assert set(view.legal_moves) <= set(view.hand)
        assert len(view.trick) < 4
        return view.legal_moves[-1]


async def test_humans_only_waits_for_four_humans(server: ServerApp) -> None:
    assert server.sessions_port
    async with await Client.connect("127.0.0.1", server.sessions_port) as c:
        humans = [AsyncHuman() for _ in range(4)]
        first = [asyncio.create_task(c.play(h, "humans_only")) for h in humans[:3]]
        await asyncio.sleep(0.8)  # longer than fill_wait: nobody fills a humans_only table
        assert not any(t.done() for t in first)
        assert server.lobby is not None and server.lobby.waiting() == 3
        # a bot is refused
        with pytest.raises(Exception, match="humans_only"):
            await c.play(RandomPlayer(), "humans_only")
        last = asyncio.create_task(c.play(humans[3], "humans_only"))
        results = await asyncio.wait_for(asyncio.gather(*first, last), 240)
    check(list(results), 1)
    assert all(h.views for h in humans)
    await server.recorder.flush()  # type: ignore[union-attr]
    (g,) = await server.store.list_games("finished")  # type: ignore[union-attr]
    assert [p["kind"] for p in g["players"]] == ["human"] * 4


async def test_bots_only_and_any_fills_with_server_bots(server: ServerApp) -> None:
    assert server.sessions_port
    async with await Client.connect("127.0.0.1", server.sessions_port) as c:
        alone = asyncio.create_task(c.play(RandomPlayer(), "bots_only", lobby_code="b"))
        await asyncio.sleep(0.6)
        assert not alone.done()  # bots_only is never filled with server bots
        rest = [asyncio.create_task(c.play(RandomPlayer(), "bots_only", lobby_code="b")) for _ in range(3)]
        bots_only = await asyncio.wait_for(asyncio.gather(alone, *rest), 240)
        check(list(bots_only), 1)
        # `any` with one player: three moonshot bots join after fill_wait
        (res,) = await asyncio.wait_for(c.play_games(RandomPlayer, sessions=1, games=1), 240)
    others = [t for t in res.player_order if t != res.me]
    assert all(t.startswith("moonshot_random(") for t in others)


async def test_lobby_code_keeps_groups_apart(server: ServerApp) -> None:
    assert server.sessions_port
    async with await Client.connect("127.0.0.1", server.sessions_port) as c:
        tasks = [asyncio.create_task(c.play(RandomPlayer(), lobby_code=code)) for code in "ABABABAB"]
        results = await asyncio.wait_for(asyncio.gather(*tasks), 240)
    by_code: dict[str, set[tuple[str, ...]]] = {"A": set(), "B": set()}
    for code, r in zip("ABABABAB", results):
        by_code[code].add(tuple(r.player_order))
    assert len(by_code["A"]) == 1 and len(by_code["B"]) == 1 and by_code["A"] != by_code["B"]
    (a_order,) = by_code["A"]
    a_tags = {r.me for code, r in zip("ABABABAB", results) if code == "A"}
    assert set(a_order) == a_tags  # no server bots: four players of code A


async def test_a_level_fills_any_games(tmp_path: Path) -> None:
    """``serve --bot level:2``: the bots that fill an ``any`` game are level 2, stored (and rated)
    under its spec."""
    app = await sessions_server(tmp_path, bot="level:2", move_timeout=10.0, fill_wait=0.3)
    try:
        assert app.sessions_port
        async with await Client.connect("127.0.0.1", app.sessions_port) as c:
            (res,) = await asyncio.wait_for(c.play_games(RandomPlayer, sessions=1, games=1), 240)
        assert len([t for t in res.player_order if t != res.me]) == 3
        await app.recorder.flush()  # type: ignore[union-attr]
        (g,) = await app.store.list_games("finished")  # type: ignore[union-attr]
        bots = [p for p in g["players"] if p.get("protocol") == "server"]  # the SDK's player is a bot too
        assert len(bots) == 3 and all(p["bot"] == "heuristic --epsilon 0.5" for p in bots), bots
    finally:
        await app.stop()
