"""A misbehaving Sessions client: its game still completes, and a game beside it is untouched.

Each case runs two games at once: the target game (three well-behaved sessions on one connection,
the misbehaving session on its own connection) and a control game on a third connection.
"""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest

from moonshot.protocols.sessions.client import Client, GameResult, RandomPlayer, View
from moonshot.server.app import ServerApp

pytestmark = pytest.mark.asyncio


def raw_move(client: Client, view: View, card: str, seq: int | None = None) -> bytes:
    s = client.sessions[view.session_id]
    msg = {"type": "decided_move", "card": card, "seq_num": s.seq if seq is None else seq, "session_id": s.id}
    s.seq += 1
    return json.dumps(msg, indent=1).encode()


class Misbehaving(RandomPlayer):
    name = "mallory"

    def __init__(self, client: Client, how: str) -> None:
        super().__init__(random.Random(3))
        self.client = client
        self.how = how
        self.done = False  # misbehave once (or for good, for silence and disconnect)

    def pass_cards(self, view: View) -> list[str] | None:
        if self.how == "duplicate-pass" and not self.done:
            self.done = True
            return [view.hand[0]] * 3
        return super().pass_cards(view)

    async def play(self, view: View) -> str | None:  # type: ignore[override]
        card = super().play(view)
        assert card is not None
        w = self.client.writer
        if self.how == "silent" or (self.how == "disconnect" and self.done):
            await asyncio.Event().wait()
        if self.done or view.trick_index < 2:
            return card
        self.done = True
        if self.how == "garbage":
            w.write(b"#$%^ this is not JSON ]]] \x00\xff")
            return card
        if self.how == "split":
            data = raw_move(self.client, view, card)
            w.write(data[:9])
            await w.drain()
            await asyncio.sleep(0.05)
            w.write(data[9:])
            return None
        if self.how == "truncated":
            w.write(raw_move(self.client, view, card)[:25])
            return None
        if self.how == "three-megabytes":  # over the 64 KiB message limit, within the input rate limit
            w.write(b'{"type":"decided_move","card":"' + b"Q" * 3_000_000 + b'","session_id":1}')
            return card
        if self.how == "flood":  # 10 MB at once: over the input rate limit (4 MiB burst, 1 MiB/s)
            w.write(b"{" * 10_000_000)
            await asyncio.Event().wait()
        if self.how == "wrong-seq":
            w.write(raw_move(self.client, view, card, seq=987654))
            return None
        if self.how == "illegal-card":
            return next(c for c in ("2C", "3C", "4C", "5C", "QS", "AH") if c not in view.hand)
        if self.how == "unknown-session":
            w.write(json.dumps({"type": "decided_move", "card": card, "session_id": 424242, "seq_num": 1}).encode())
            return card
        if self.how == "disconnect":
            if view.trick:  # mid-trick: cards are on the table
                w.close()
                await asyncio.Event().wait()
            self.done = False
            return card
        raise AssertionError(self.how)


async def run_case(
    server: ServerApp, how: str
) -> tuple[GameResult | None, list[GameResult], list[GameResult], list[str]]:
    port = server.sessions_port
    assert port
    good = await Client.connect("127.0.0.1", port)
    bad = await Client.connect("127.0.0.1", port)
    control = await Client.connect("127.0.0.1", port)
    try:
        ctl = asyncio.create_task(control.play_games(RandomPlayer, sessions=4, games=4, lobby_code="control"))
        mallory = asyncio.create_task(bad.play(Misbehaving(bad, how), lobby_code="target"))
        others = asyncio.gather(*(good.play(RandomPlayer(), lobby_code="target") for _ in range(3)))
        target = await asyncio.wait_for(others, 60)
        control_results = await asyncio.wait_for(ctl, 60)
        mine: GameResult | None = None
        if how not in ("silent", "disconnect", "flood"):
            mine = await asyncio.wait_for(mallory, 10)
        else:  # what the server told the session it no longer plays (it is not reading)
            unread = [s.inbox.get_nowait() for s in bad.sessions.values() for _ in range(s.inbox.qsize())]
            bad.errors.extend(str(m.get("reason")) for m in unread if m.get("type") == "error")
            mallory.cancel()
        errors = (mine.errors if mine else []) + bad.errors
        return mine, list(target), control_results, errors
    finally:
        for c in (good, bad, control):
            await c.close()


async def forced_actions(server: ServerApp, tag_prefix: str) -> int:
    assert server.recorder is not None and server.store is not None
    await server.recorder.flush()
    for g in await server.store.list_games("finished"):
        names = [p["name"] for p in g["players"]]
        seat = next((i for i, n in enumerate(names) if n.startswith(tag_prefix)), None)
        if seat is None:
            continue
        rec = await server.store.load(g["id"])
        assert rec is not None
        return sum(1 for a, f in zip(rec.actions, rec.forced) if f and a.seat == seat)
    raise AssertionError("game not stored")


def same_game(results: list[GameResult]) -> dict[str, Any]:
    first = results[0]
    assert all(r.scores == first.scores and r.player_order == first.player_order for r in results)
    assert max(first.scores.values()) > 100
    return first.scores


@pytest.mark.parametrize(
    ("how", "error_words", "server_moves"),
    [
        ("garbage", "not JSON", 0),
        ("split", None, 0),
        ("truncated", "incomplete message dropped", 1),
        ("three-megabytes", "longer than", None),
        ("wrong-seq", "wrong seq_num", 1),
        ("illegal-card", None, 1),
        ("duplicate-pass", None, 1),
        ("unknown-session", "unknown session_id", 0),
    ],
)
async def test_bad_input_gets_an_error_or_a_server_card_and_the_game_completes(
    strict_server: ServerApp, how: str, error_words: str | None, server_moves: int | None
) -> None:
    mine, target, control, errors = await run_case(strict_server, how)
    assert mine is not None
    scores = same_game([mine, *target])
    assert set(scores) == set(mine.player_order)
    if error_words is not None:
        assert any(error_words in e for e in errors), errors
    if server_moves is not None and how != "duplicate-pass":
        assert mine.server_moves == server_moves
    if server_moves is not None:
        assert await forced_actions(strict_server, "mallory(") == server_moves
    else:  # 3 MB may take longer than the move timeout to arrive on a loaded machine
        assert mine.server_moves <= 1
    same_game(control)
    assert all(r.server_moves == 0 and not r.errors for r in control + target)


@pytest.mark.parametrize("how", ["silent", "disconnect", "flood"])
async def test_a_silent_vanished_or_flooding_client_is_replaced_and_the_game_completes(
    strict_server: ServerApp, how: str
) -> None:
    mine, target, control, errors = await run_case(strict_server, how)
    assert mine is None
    if how == "flood":
        assert any("input rate limit exceeded" in e for e in errors), errors
    if how == "silent":  # told that a bot plays its chair now
        assert any("a server bot plays this chair" in e for e in errors), errors
    same_game(target)
    same_game(control)
    assert all(r.server_moves == 0 for r in control + target)
    assert await forced_actions(strict_server, "mallory(") > 0
