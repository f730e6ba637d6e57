"""Every malformed field gets an ``error`` reply and changes nothing; the connection stays open
and plays its game (a ``"--5"`` seq_num once closed the connection).

A server runs in a background thread; one blocking client sits at a table (three server bots)
and owes its pass. Hypothesis then sends messages of every type whose fields (one or several)
are replaced by values of every JSON type, huge numbers, odd Unicode digits, over-long strings
and deep nesting. Each must get exactly one ``error`` and nothing else (a ``connection_request``
sent after it must be answered next), the table's state and the session's sequence number must
not move. Finally the client passes and plays the game out on the same connection.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from moonshot.core.cards import CardError, parse_card
from moonshot.protocols.sessions.codec import StreamDecoder, encode
from moonshot.server.app import ServerApp
from moonshot.server.config import ServerConfig


class ThreadServer:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        cfg = ServerConfig(sessions_port=0, db_url=None, bot="random", move_timeout=600, fill_wait=0.05, seed=5)
        self.app = ServerApp(cfg)
        self.call(self.app.start())
        # hundreds of 70 KB messages in a few seconds are a flood: this test is about fields,
        # so the input limits (tested in test_sessions_flood.py) are lifted here
        assert self.app.sessions is not None
        self.app.sessions.options.burst_bytes = 1e12

    def call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(60)

    def state(self, sid: int) -> tuple[int, int]:
        """(table version, the session's next seq_num), read in the server's thread."""

        async def read() -> tuple[int, int]:
            seat = self.app.sessions.active[sid]  # type: ignore[union-attr]
            assert seat.table is not None
            return seat.table.version, seat.codec.next_seq

        result: tuple[int, int] = self.call(read())
        return result

    def close(self) -> None:
        self.call(self.app.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


class Player:
    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.dec = StreamDecoder()
        self.pending: list[dict[str, Any]] = []
        self.seq = 0

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send(self, msg: dict[str, Any]) -> None:
        self.sock.sendall(encode(msg))

    def recv(self) -> dict[str, Any]:
        while not self.pending:
            data = self.sock.recv(65536)
            assert data, "the server closed the connection"
            for item in self.dec.feed(data):
                assert isinstance(item, dict), item
                self.pending.append(item)
        msg = self.pending.pop(0)
        if isinstance(msg.get("seq_num"), int):
            self.seq = msg["seq_num"]
        return msg


@pytest.fixture(scope="module")
def table() -> Iterator[tuple[ThreadServer, Player, int, list[str]]]:
    server = ThreadServer()
    assert server.app.sessions_port
    me = Player(server.app.sessions_port)
    me.send({"type": "connection_request"})
    assert me.recv()["type"] == "connection_response"
    me.send({"type": "game_session_request", "player_tag": "prop", "game_type": "any", "seq_num": 0})
    resp = me.recv()
    sid = resp["session_id"]
    assert me.recv()["type"] == "start_game"
    first = me.recv()
    assert first["type"] == "start_round" and first["pass_direction"] == "Left"
    yield server, me, sid, first["cards"]
    me.sock.close()
    server.close()


ODD_DIGITS = ["--5", "²", "٣", "５", "1_000", "+-1", "0x1f", "1e9", "", " ", "NaN", "5" * 5000, "-" * 30]
HUGE = st.integers(min_value=2**63, max_value=10**300) | st.integers(min_value=-(10**300), max_value=-(2**63) - 1)
SCALARS = st.none() | st.booleans() | st.floats(allow_nan=False) | HUGE | st.sampled_from(ODD_DIGITS)
NESTED = st.recursive(
    SCALARS | st.text(max_size=10) | st.integers(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)


def raw(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


# raw JSON texts: deep nesting (objects past the depth cap, arrays past the parser's recursion
# limit), numbers JSON can write but Python will not read (5,000 digits), a string over 64 KiB
DEEP = st.sampled_from(
    [
        '{"a":' * 40 + "1" + "}" * 40,
        "[" * 3000 + "]" * 3000,
        "9" * 5000,
        "-" + "9" * 5000,
        "1e999999",
        '"' + "x" * 70_000 + '"',
    ]
)
ANY_VALUE = st.one_of(NESTED.map(raw), DEEP)


def not_int_like(text: str) -> bool:
    try:
        v = json.loads(text)
    except (ValueError, RecursionError):
        return True
    if isinstance(v, bool) or v is None:
        return True
    if isinstance(v, int):
        return not -(2**63) <= v < 2**63
    if isinstance(v, str):
        return re.fullmatch(r"-?[0-9]{1,19}", v.strip()) is None or not -(2**63) <= int(v.strip()) < 2**63
    return True


def not_a_card(text: str) -> bool:
    try:
        v = json.loads(text)
    except (ValueError, RecursionError):
        return True
    if not isinstance(v, str):
        return True
    try:
        parse_card(v)
    except CardError:
        return True
    return False


def not_cards(text: str) -> bool:
    try:
        v = json.loads(text)
    except (ValueError, RecursionError):
        return True
    # a list of card strings is well-formed whatever its length (a wrong-sized pass is a move the
    # server plays for the session, as the reference does): only other forms are malformed
    return not isinstance(v, list) or len(v) > 52 or any(not isinstance(c, str) or not_a_card(raw(c)) for c in v)


BAD = {
    "session_id": ANY_VALUE.filter(not_int_like),
    "seq_num": ANY_VALUE.filter(not_int_like),
    "card": ANY_VALUE.filter(not_a_card),
    "cards": ANY_VALUE.filter(not_cards),
    "session_secret": ANY_VALUE,  # any value: malformed, or a wrong secret
    "game_type": ANY_VALUE.filter(lambda t: t.strip('"').lower() not in ("any", "humans_only", "bots_only")),
    "player_tag": ANY_VALUE.filter(lambda t: not t.startswith('"')),
    # null is "no lobby code" (the public pool), a string or an integer is a code
    "lobby_code": ANY_VALUE.filter(lambda t: not t.startswith('"') and t != "null" and not_int_like(t)),
    "player_kind": ANY_VALUE.filter(lambda t: t.strip('"').lower() not in ("human", "bot", "humans", "bots")),
    "type": ANY_VALUE.filter(
        lambda t: (
            t.strip('"') not in ("decided_move", "donated_cards", "resume_session", "game_session_request")
            and t.strip('"') != "connection_request"
        )
    ),
}
FIELDS = {
    "decided_move": ["session_id", "seq_num", "card", "type"],
    "donated_cards": ["session_id", "seq_num", "cards", "type"],
    "resume_session": ["session_id", "session_secret", "type"],
    "game_session_request": ["seq_num", "game_type", "player_tag", "lobby_code", "player_kind"],
}


@st.composite
def malformed(draw: st.DrawFn, sid: int, seq: int, hand: list[str]) -> str:
    kind = draw(st.sampled_from(sorted(FIELDS)))
    good: dict[str, str] = {
        "type": raw(kind),
        "session_id": raw(sid),
        "seq_num": raw(seq if kind != "game_session_request" else 0),
        "card": raw(hand[0]),
        "cards": raw(hand[:3]),
        "session_secret": raw("not-the-secret"),
        "game_type": raw("bots_only"),
        "player_tag": raw("p"),
        "lobby_code": raw("x"),
        "player_kind": raw("bot"),
    }
    fields = FIELDS[kind]
    broken = draw(st.lists(st.sampled_from(fields), min_size=1, max_size=len(fields), unique=True))
    for f in broken:
        good[f] = draw(BAD[f])
    keep = [f for f in ["type", *fields] if f in good]
    return "{" + ",".join(f"{raw(f)}:{good[f]}" for f in keep) + "}"


def test_every_malformed_field_gets_an_error_and_changes_nothing(
    table: tuple[ThreadServer, Player, int, list[str]],
) -> None:
    server, me, sid, hand = table
    before = server.state(sid)
    next_seq = me.seq + 1
    sent: list[str] = []

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.data())
    def one_message(data: st.DataObject) -> None:
        text = data.draw(malformed(sid, next_seq, hand))
        sent.append(text[:80])
        me.send_raw(text.encode())
        me.send({"type": "connection_request"})
        reply = me.recv()
        assert reply["type"] == "error", (text[:200], reply)
        assert me.recv()["type"] == "connection_response", text[:200]
        assert server.state(sid) == before, text[:200]

    one_message()
    assert len(sent) >= 100
    # the connection still plays its game, from where it stood
    me.send({"type": "donated_cards", "cards": hand[:3], "session_id": sid, "seq_num": next_seq})
    mine = 0
    while True:
        msg = me.recv()
        assert msg["type"] != "error", msg
        if msg["type"] == "start_round" and msg["pass_direction"] != "Keeper":
            me.send({"type": "donated_cards", "cards": msg["cards"][:3], "session_id": sid, "seq_num": me.seq + 1})
        elif msg["type"] == "move_request":
            me.send({"type": "decided_move", "card": msg["legal_moves"][0], "session_id": sid, "seq_num": me.seq + 1})
        elif msg["type"] == "move_report" and msg["player_tag"].endswith(f"({sid})"):
            assert msg["move_source"] == "player"  # never a server card: nothing was forfeited
            mine += 1
        elif msg["type"] == "end_game":
            break
    assert mine >= 13
