"""The client SDK: a session rebuilt from Sessions messages knows exactly what the engine says
the seat knows (so moonshot bots play over the wire as they play in-process)."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from moonshot.actions import Action, Pass, Play
from moonshot.bots.random import RandomBot
from moonshot.cards import format_cards
from moonshot.client import Player, View, _Session
from moonshot.engine import Game, Phase
from moonshot.protocols.sessions.codec import SESSIONS_RULES, SessionCodec
from moonshot.views import SeatView, seat_view

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
    """Messages session 0 would get in a random game, and the engine's view at each of its decisions."""
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
