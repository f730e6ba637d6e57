"""The client SDK: a session rebuilt from Sessions messages knows exactly what the engine says
the seat knows (so moonshot bots play over the wire as they play in-process)."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest

from moonshot.bots.random import RandomBot
from moonshot.core.actions import Action, Pass, Play
from moonshot.core.cards import format_cards
from moonshot.core.engine import Game, Phase
from moonshot.core.views import SeatView, seat_view
from moonshot.protocols.sessions.client import Client, Player, ProtocolError, RandomPlayer, SessionLost, View, _Session
from moonshot.protocols.sessions.codec import SESSIONS_RULES, SessionCodec

FIELDS = (
    "hand",
    "dealt",
    "passed",
    "received",
    "trick_no",
    "leader",
    "trick",
    "played",
    "led_suits",
    "hearts_broken",
    "voids",
    "taken",
    "tricks_won",
    "points",
    "totals",
    "known_cards",
    "legal_plays",
    "direction",
    "deal",
)


def script(seed: int) -> tuple[list[dict[str, Any]], list[tuple[SeatView, Action]]]:
    """Messages the client in seat 0 would get in a random game, and the engine's view at each of its decisions."""
    g = Game(SESSIONS_RULES, seed)
    rng = random.Random(seed)
    codec = SessionCodec(0)
    codec.seat_at(0, ["me(0)", "b(1)", "c(2)", "d(3)"])
    msgs: list[dict[str, Any]] = []
    decisions: list[tuple[SeatView, Action]] = []

    def emit(events: list[Any]) -> None:
        seen = [(e.for_viewer(0), False) for e in events]
        msgs.extend(codec.messages([(e, f) for e, f in seen if e is not None]))

    emit(list(g.log))
    while not g.over:
        seat = g.to_act()[-1] if g.phase is Phase.PASS else g.to_act()[0]
        view = seat_view(g, seat)
        action = RandomBot().act(view, rng)
        if seat == 0:
            decisions.append((view, action))
            if g.phase is Phase.PLAY:
                msgs.append(codec.move_request(g.legal_play_mask(0)))
            codec.next_seq += 1  # the client's answer takes a number
        emit(g.apply(action))
    return msgs, decisions


class Checker(Player):
    def __init__(self, decisions: list[tuple[SeatView, Action]]) -> None:
        self.decisions = decisions
        self.i = 0

    def _next(self, view: View) -> Action:
        expected, action = self.decisions[self.i]
        self.i += 1
        got = view.seat_view
        assert got is not None
        for f in FIELDS:
            if f == "leader" and expected.phase is Phase.PASS:
                continue  # the engine keeps a leader before the first trick; no message says it
            assert getattr(got, f) == getattr(expected, f), f
        assert set(got.legal) == set(expected.legal)
        return action

    def pass_cards(self, view: View) -> list[str]:
        a = self._next(view)
        assert isinstance(a, Pass)
        return format_cards(a.cards)

    def play(self, view: View) -> str:
        a = self._next(view)
        assert isinstance(a, Play)
        assert format_cards([a.card])[0] in view.legal_moves
        return format_cards([a.card])[0]


class FakeClient:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def _write(self, msg: dict[str, Any]) -> None:
        self.sent.append(dict(msg))


@pytest.mark.asyncio
@pytest.mark.parametrize("seed", [1, 2])
async def test_the_sdk_view_equals_the_engine_view_at_every_decision(seed: int) -> None:
    msgs, decisions = script(seed)
    client = FakeClient()
    session = _Session(client, 0, 2)  # type: ignore[arg-type]
    for m in msgs:
        session.inbox.put_nowait(m)
    checker = Checker(decisions)
    result = await asyncio.wait_for(session.run(checker), 30)
    assert checker.i == len(decisions)
    assert result.me == "me(0)" and result.server_moves == 0 and result.rounds >= 1
    # every answer carried the sequence number the server expected
    assert [m["seq_num"] for m in client.sent] == sorted(m["seq_num"] for m in client.sent)
    assert all(m["session_id"] == 0 for m in client.sent)
    expected_seqs = []
    for i, m in enumerate(msgs):
        nxt = msgs[i + 1]["seq_num"] if i + 1 < len(msgs) else None
        if nxt is not None and nxt == m["seq_num"] + 2:
            expected_seqs.append(m["seq_num"] + 1)
    assert [m["seq_num"] for m in client.sent] == expected_seqs


@pytest.mark.asyncio
async def test_a_substituted_session_raises_session_lost() -> None:
    msgs, _ = script(1)
    session = _Session(FakeClient(), 0, 2)  # type: ignore[arg-type]
    session.inbox.put_nowait(msgs[0])  # start_game
    seat = 0
    session.inbox.put_nowait(
        {"type": "error", "reason": f"session {seat}: 3 timeouts in a row; a server bot plays", "about": "substituted"}
    )
    with pytest.raises(SessionLost, match="server bot"):
        await asyncio.wait_for(session.run(RandomPlayer()), 10)


@pytest.mark.asyncio
async def test_the_client_keeps_each_sessions_secret_and_resumes_with_it() -> None:
    class Writer:
        def __init__(self) -> None:
            self.sent: list[dict[str, Any]] = []

        def write(self, data: bytes) -> None:
            self.sent.append(json.loads(data))

    reader = asyncio.StreamReader()
    client = Client(reader, Writer())  # type: ignore[arg-type]
    client._route({"type": "connection_response", "status": "success"})
    opened = asyncio.create_task(client.open_session("me"))
    await asyncio.sleep(0)
    client._route(
        {"type": "game_session_response", "status": "success", "session_id": 77, "seq_num": 1, "session_secret": "s3"}
    )
    await opened
    assert client.session_secrets == {77: "s3"}
    resume = asyncio.create_task(client.resume(77, RandomPlayer()))
    await asyncio.sleep(0)
    assert client.writer.sent[-1] == {  # type: ignore[attr-defined]
        "type": "resume_session",
        "session_id": 77,
        "session_secret": "s3",
        "seq_num": 0,
    }
    client._route({"type": "error", "reason": "no game is waiting", "session_id": 77, "about": "resume_session"})
    with pytest.raises(ProtocolError, match="no game is waiting"):
        await resume
    with pytest.raises(ProtocolError, match="session_secret is unknown"):
        await client.resume(78, RandomPlayer())
    reader.feed_eof()
    client._reader_task.cancel()
