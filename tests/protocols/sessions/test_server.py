"""The Sessions connection handler fed bytes directly (no sockets): replies, limits, errors."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest

from moonshot.bots.random import RandomBot
from moonshot.core.variants import find_variant
from moonshot.protocols.sessions.server import (
    DETACH_PER_TURN,
    TURN_BYTES,
    TURN_MESSAGES,
    SessionsConnection,
    SessionsOptions,
    SessionsServer,
)
from moonshot.runtime.lobby import Lobby
from moonshot.runtime.table import BotSeat, Seat, Table

pytestmark = pytest.mark.asyncio


class FakeTransport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.data = b""
        self.closed = False

    def write(self, data: bytes) -> None:  # type: ignore[override]
        self.data += data

    def get_write_buffer_size(self) -> int:
        return 0

    def is_closing(self) -> bool:
        return self.closed

    def abort(self) -> None:
        self.closed = True

    def close(self) -> None:
        self.closed = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 5555) if name == "peername" else default


def make(options: SessionsOptions | None = None) -> tuple[SessionsConnection, FakeTransport, list[Table]]:
    tables: list[Table] = []

    def start(seats: list[Seat]) -> Table:
        t = Table(find_variant("standard"), seats, seed=3)
        tables.append(t)
        t.start()
        return t

    lobby = Lobby(start, lambda: BotSeat(RandomBot(), random.Random(0)), None)
    conn = SessionsConnection(SessionsServer(lobby, options))
    tr = FakeTransport()
    conn.connection_made(tr)
    return conn, tr, tables


async def replies(tr: FakeTransport) -> list[dict[str, Any]]:
    await asyncio.sleep(0)  # output is written once per loop turn
    await asyncio.sleep(0)
    out, i, dec = [], 0, json.JSONDecoder()
    text = tr.data.decode()
    while i < len(text):
        obj, i = dec.raw_decode(text, i)
        out.append(obj)
    tr.data = b""
    return out


async def test_connection_and_session_responses() -> None:
    conn, tr, _ = make()
    conn.data_received(b'{"type":"connection_request"}{"type":"game_session_request","player_tag":"x","seq_num":0}')
    got = await replies(tr)
    assert got[0] == {"type": "connection_response", "status": "success"}
    assert got[1]["type"] == "game_session_response" and got[1]["seq_num"] == 1 and got[1]["status"] == "success"


class Pausable(FakeTransport):
    """Records when the connection stops and starts reading its socket."""

    def __init__(self) -> None:
        super().__init__()
        self.reading: list[bool] = []

    def pause_reading(self) -> None:
        self.reading.append(False)

    def resume_reading(self) -> None:
        self.reading.append(True)


async def test_a_connection_takes_its_share_of_a_loop_turn_and_the_rest_on_the_next() -> None:
    """A flood in one read is handled a turn's share at a time (TURN_MESSAGES messages, TURN_BYTES
    bytes), the socket unread in between; every message is answered, in order."""
    conn, _, _ = make()
    tr = Pausable()
    conn.connection_made(tr)
    n = 5 * TURN_MESSAGES
    conn.data_received(b"".join(b'{"type":"connection_request","n":%d}' % i for i in range(n)))
    first = tr.data.count(b"connection_response") + len(conn._out)
    assert TURN_MESSAGES <= first < n and tr.reading == [False]  # the rest waits: nothing more read
    answers: list[dict[str, Any]] = []
    for _ in range(50):
        answers += await replies(tr)
        if len(answers) == n:
            break
    assert len(answers) == n and tr.reading[0] is False and tr.reading[-1] is True
    conn.data_received(b" " * (3 * TURN_BYTES) + b'{"type":"connection_request"}')  # bytes, not messages
    assert tr.reading[-1] is False and not conn._out
    assert [m["type"] for m in await replies(tr) + await replies(tr)] == ["connection_response"]


async def test_errors_name_what_went_wrong_and_the_connection_stays() -> None:
    conn, tr, _ = make()
    conn.data_received(b'nonsense {"type":"dance"} {"type":"decided_move","card":"2C","session_id":9,"seq_num":3}')
    got = await replies(tr)
    assert [m["type"] for m in got] == ["error", "error", "error"]
    assert "not JSON" in got[0]["reason"] and "unknown message type" in got[1]["reason"]
    assert "unknown session_id 9" in got[2]["reason"]
    assert not tr.closed


async def test_sessions_per_connection_are_capped() -> None:
    conn, tr, _ = make(SessionsOptions(max_sessions=2))
    for _ in range(3):
        conn.data_received(b'{"type":"game_session_request","player_tag":"x","game_type":"bots_only","seq_num":0}')
    got = await replies(tr)
    assert [m["type"] for m in got] == ["game_session_response", "game_session_response", "error"]


async def test_four_sessions_start_a_game_and_get_their_hands() -> None:
    conn, tr, tables = make()
    for _ in range(4):
        conn.data_received(b'{"type":"game_session_request","player_tag":"p","lobby_code":"z","seq_num":0}')
    await asyncio.sleep(0.01)
    got = await replies(tr)
    assert len(tables) == 1
    starts = [m for m in got if m["type"] == "start_round"]
    assert len(starts) == 4 and all(len(m["cards"]) == 13 for m in starts)
    hands = [c for m in starts for c in m["cards"]]
    assert len(set(hands)) == 52  # each session sees only its own hand
    conn.connection_lost(None)
    tables[0].stop()
    await tables[0].done


async def test_each_session_gets_its_own_secret_and_a_random_id() -> None:
    conn, tr, _ = make()
    for _ in range(3):
        conn.data_received(b'{"type":"game_session_request","player_tag":"x","game_type":"bots_only","seq_num":0}')
    got = await replies(tr)
    secrets = [m["session_secret"] for m in got]
    ids = [m["session_id"] for m in got]
    assert len(set(secrets)) == 3 and all(len(s) >= 43 for s in secrets)  # 256 bits, URL-safe
    assert len(set(ids)) == 3 and max(ids) > 2**20 and all(0 <= i < 2**53 for i in ids)
    # only a hash of the secret stays on the server
    held = {s.session_id: s.credential for s in conn.sessions.values()}
    assert all(c is not None and c not in secrets and len(c) == 64 for c in held.values())


async def test_a_malformed_move_is_answered_with_an_error_and_changes_nothing() -> None:
    conn, tr, tables = make()
    for _ in range(4):
        conn.data_received(b'{"type":"game_session_request","player_tag":"p","lobby_code":"m","seq_num":0}')
    await asyncio.sleep(0.01)
    await replies(tr)
    table = tables[0]
    version = table.version
    seqs = {sid: s.codec.next_seq for sid, s in conn.sessions.items()}
    for sid in seqs:
        for bad in ('"seq_num":"--5"', '"seq_num":"\u00b2"', '"seq_num":' + '"' + "9" * 5000 + '"', '"seq_num":1.5'):
            conn.data_received(f'{{"type":"donated_cards","cards":["2C","3C","4C"],"session_id":{sid},{bad}}}'.encode())
        conn.data_received(f'{{"type":"donated_cards","cards":[1,2,3],"session_id":{sid},"seq_num":5}}'.encode())
    await asyncio.sleep(0.01)
    got = await replies(tr)
    assert [m["type"] for m in got] == ["error"] * 20
    assert table.version == version and not tr.closed
    assert {sid: s.codec.next_seq for sid, s in conn.sessions.items()} == seqs
    assert all(s.request is not None for s in conn.sessions.values())  # each still owes its pass
    conn.connection_lost(None)
    table.stop()
    await table.done


async def test_a_flooding_connection_is_told_and_closed() -> None:
    conn, tr, _ = make(SessionsOptions(max_bytes_per_s=1000, burst_bytes=10_000))
    conn.data_received(b"{" * 5000)
    assert not tr.closed
    conn.data_received(b"{" * 6000)
    assert tr.closed and conn.flooded
    got = await replies(tr)
    assert got[-1]["type"] == "error" and "input rate limit exceeded" in got[-1]["reason"]
    conn.data_received(b'{"type":"connection_request"}')  # ignored once dropped
    assert await replies(tr) == []


async def test_a_message_flood_is_told_and_closed() -> None:
    conn, tr, _ = make(SessionsOptions(max_messages_per_s=10, burst_messages=100))
    conn.data_received(b'{"type":"connection_request"}' * 50)
    assert not tr.closed
    conn.data_received(b"{}" * 60)
    assert tr.closed
    got = await replies(tr)
    assert "messages/s" in got[-1]["reason"]


class LaterRouter:
    """A router that answers joins with a code later (as a cluster's other node would)."""

    def __init__(self) -> None:
        self.held: list[Any] = []
        self.released: list[Any] = []

    def claim(self, c: Any) -> bool:
        if c.lobby_code != "elsewhere" or c.settle is None:
            return False
        c.pending = True
        self.held.append(c)
        return True

    def release(self, c: Any) -> bool:
        self.released.append(c)
        return c in self.held


async def test_a_join_answered_later_keeps_the_order_of_the_answers() -> None:
    conn, tr, _ = make()
    router = LaterRouter()
    conn.server.lobby.router = router
    req = '{"type":"game_session_request","player_tag":"%s","seq_num":0%s}'
    later = req % ("a", ',"lobby_code":"elsewhere"')
    conn.data_received((later + req % ("b", "") + later).encode())
    assert await replies(tr) == []  # the first waits for its answer, and the others behind it
    assert len(router.held) == 1 and len(conn.joining) == 1 and len(conn.backlog) == 2
    router.held[0].settle("the game has already started")
    got = await replies(tr)
    assert [m["status"] for m in got] == ["error", "success"]  # a's refusal, then b, in order
    assert "already started" in got[0]["reason"]
    assert len(router.held) == 2 and len(conn.backlog) == 0  # the third asked now: it waits
    router.held[1].settle(None)
    got = await replies(tr)
    assert [m["status"] for m in got] == ["success"] and len(conn.sessions) == 2
    # a join still waiting when the connection goes leaves the lobby (its chair is freed there)
    conn.data_received(later.encode())
    conn.connection_lost(None)
    assert router.held[2] in router.released
    router.held[2].settle(None)  # an answer after that changes nothing
    assert await replies(tr) == []


class FarTable:
    """What a session at a table on another node talks to (a cluster's RemoteTable): not a Table."""

    def __init__(self) -> None:
        self.rules = find_variant("standard")
        self.submitted: list[Any] = []

    def seat_names(self) -> list[str]:
        return ["a", "b", "x", "d"]

    def submit(self, seat: int, action: Any, request_id: int | None = None) -> None:
        self.submitted.append((seat, action, request_id))

    def reject(self, seat: int, request_id: int | None, reason: str) -> None:
        self.submitted.append(("rejected", reason))


async def test_a_pass_that_comes_before_its_request_from_another_node_answers_it() -> None:
    from moonshot.core.actions import Pass
    from moonshot.core.engine import Phase
    from moonshot.protocols.sessions import codec as sc
    from moonshot.protocols.sessions.server import SessionSeat
    from moonshot.runtime.table import SeatKind

    conn, tr, _ = make()
    seat = SessionSeat(conn, 7, "x", SeatKind.BOT, 0)
    far = FarTable()
    seat.matched(far, 2)  # type: ignore[arg-type]
    cards = 0b111
    seat.answer(sc.DonatedCards(7, seat.codec.next_seq, cards, 3))
    assert far.submitted == [] and await replies(tr) == []  # kept, not refused
    request = type("Req", (), {"phase": Phase.PASS, "request_id": 41})()
    seat.on_request(far, request)  # type: ignore[arg-type]
    assert far.submitted == [(2, Pass(2, cards), 41)]
    # at a table of this process, a pass nobody asked for is refused at once, as before
    other = SessionSeat(conn, 8, "y", SeatKind.BOT, 0)
    other.table = Table(find_variant("standard"), [None] * 4, seed=1)
    other.answer(sc.DonatedCards(8, other.codec.next_seq, cards, 3))
    assert "not waiting for a move" in json.dumps(await replies(tr))


async def test_received_cards_echoes_the_pass_in_the_order_the_client_sent_it() -> None:
    """The reference players compare ``donated_cards`` with what they sent, list to list: the
    echo keeps the client's order (a sorted echo reads as "auto-passed by the server")."""
    conn, tr, tables = make()
    for _ in range(4):
        conn.data_received(b'{"type":"game_session_request","player_tag":"p","lobby_code":"o","seq_num":0}')
    await asyncio.sleep(0.01)
    got = await replies(tr)
    hands = {m["session_id"]: m["cards"] for m in got if m["type"] == "start_round"}
    sids = sorted(hands)
    sent: dict[int, list[str]] = {}
    for k, sid in enumerate(sids):
        if k == 3:  # a card it does not hold: the server passes for it, lowest first
            held = set(hands[sid])
            sent[sid] = [hands[sid][0], hands[sid][1], next(c for h in hands.values() for c in h if c not in held)]
        else:  # reversed, or shuffled: never the sorted order
            h = hands[sid]
            sent[sid] = [h[2], h[1], h[0]] if k != 1 else [h[2], h[0], h[1]]
        seq = conn.sessions[sid].codec.next_seq
        msg = {"type": "donated_cards", "cards": sent[sid], "session_id": sid, "seq_num": seq}
        conn.data_received(json.dumps(msg).encode())
    table = tables[0]
    for _ in range(200):
        got = await replies(tr)
        recv = {m["session_id"]: m for m in got if m["type"] == "received_cards"}
        if recv:
            break
        await asyncio.sleep(0.01)
    assert len(recv) == 4
    for sid in sids[:3]:
        assert recv[sid]["donated_cards"] == sent[sid]
        assert sent[sid] != sorted(sent[sid], key=lambda c: hands[sid].index(c))  # the test means it
    forced = recv[sids[3]]["donated_cards"]
    assert len(forced) == 3 and forced == sorted(forced, key=hands[sids[3]].index)  # the server's pass
    conn.connection_lost(None)
    table.stop()
    await table.done


async def test_a_sessions_request_is_timed_from_when_its_message_is_written() -> None:
    """The pass (timed from the ``start_round`` written before it) and every ``move_request`` get
    their deadline from the write: the connection reports it, and the request's deadline runs
    from then (its timer, armed when it was asked, moves on to it when it fires)."""
    conn, _tr, tables = make()
    for _ in range(4):
        conn.data_received(b'{"type":"game_session_request","player_tag":"p","lobby_code":"w","seq_num":0}')
    table = None
    for _ in range(500):
        await asyncio.sleep(0.002)
        if tables and len(tables[0]._pending) == 4:
            table = tables[0]
            if all(p.sent for p in table._pending.values()):
                break
    assert table is not None
    for p in table._pending.values():  # without the report it would be due send_grace later
        assert p.sent and p.timer is not None and p.request.deadline is not None
        assert p.asked <= p.timer.when() <= p.request.deadline < p.timer.when() + 1.0
        assert all(s.reports_sent for s in conn.sessions.values())
    conn.connection_lost(None)
    table.stop()
    await table.done


async def test_a_storage_pause_is_told_to_each_session_as_a_non_fatal_error() -> None:
    conn, tr, tables = make()
    for _ in range(4):
        conn.data_received(b'{"type":"game_session_request","player_tag":"p","lobby_code":"s","seq_num":0}')
    await asyncio.sleep(0.01)
    sids = {m["session_id"] for m in await replies(tr) if m["type"] == "game_session_response"}
    tables[0].storage_paused("disk full")
    await asyncio.sleep(0.01)
    paused = [m for m in await replies(tr) if m["type"] == "error"]
    assert {m["session_id"] for m in paused} == sids and all(m["about"] == "paused" for m in paused)
    assert all("cannot be written" in m["reason"] for m in paused)
    tables[0].storage_resumed(2.0)
    await asyncio.sleep(0.01)
    resumed = [m for m in await replies(tr) if m["type"] == "error"]
    assert {m["session_id"] for m in resumed} == sids and all(m["about"] == "resumed" for m in resumed)
    assert not tr.closed  # the connection and its sessions stay
    conn.connection_lost(None)
    tables[0].stop()
    await tables[0].done


async def test_a_lost_connections_sessions_leave_their_tables_a_few_a_loop_turn() -> None:
    """Hundreds of abandoned sessions do not make hundreds of tables react in one loop turn:
    DETACH_PER_TURN of them are told a turn, and every chair is empty in the end."""
    conn, _tr, tables = make()
    n = DETACH_PER_TURN + 8
    codes = n // 4
    for k in range(codes):
        msg = b'{"type":"game_session_request","player_tag":"p","lobby_code":"d%d","seq_num":0}' % k
        conn.data_received(msg * 4)
    for _ in range(500):
        await asyncio.sleep(0.002)
        if len(tables) == codes and all(len(t._pending) for t in tables):
            break
    assert len(tables) == codes and len(conn.sessions) == n
    conn.connection_lost(None)
    told = sum(t._inbox.qsize() for t in tables)
    assert told == DETACH_PER_TURN  # the rest on the next turns
    for _ in range(100):
        await asyncio.sleep(0)
        if all(c.occupant is None for t in tables for c in t.chairs):
            break
    assert all(c.occupant is None for t in tables for c in t.chairs)
    for t in tables:
        t.stop()
        await t.done
