"""A client written the way the reference Python SDK behaves on the wire (not its code):
blocking sockets and one thread per session, pretty-printed JSON out, 1024-byte reads split
on ``}{``, session requests one at a time with the response taken by type, exact per-session
``seq_num`` counting, ``tag(id)`` parsing of every player. moonshot must satisfy it unchanged.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import socket
import threading
from collections import defaultdict
from typing import Any

import pytest

from moonshot.server.app import ServerApp

pytestmark = pytest.mark.asyncio
TAG = re.compile(r"(.*)\((.*)\)")


class BlockingConnection:
    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.pending: list[dict[str, Any]] = []
        self.partial = b""
        self.lock = threading.Lock()
        self.by_session: dict[int, list[dict[str, Any]]] = defaultdict(list)
        self.cond = threading.Condition()
        self.reader: threading.Thread | None = None
        self.send({"type": "connection_request"})
        first = self.read_one()
        assert first == {"type": "connection_response", "status": "success"}

    def send(self, msg: dict[str, Any]) -> None:
        with self.lock:
            self.sock.sendall(json.dumps(msg, indent=1).encode())

    def read_one(self) -> dict[str, Any]:
        while not self.pending:
            data = self.partial + self.sock.recv(1024)
            if not data:
                raise ConnectionError("closed")
            text = data.decode()
            try:
                parts = text.replace("}{", "}\x00{").split("\x00")
                self.pending = [json.loads(p) for p in parts]
                self.partial = b""
            except json.JSONDecodeError:
                self.partial = data
        return self.pending.pop(0)

    def start_reader(self) -> None:
        def loop() -> None:
            try:
                while True:
                    m = self.read_one()
                    key = -1 if m["type"] == "game_session_response" else m["session_id"]
                    with self.cond:
                        self.by_session[key].append(m)
                        self.cond.notify_all()
            except (ConnectionError, OSError):
                pass

        self.reader = threading.Thread(target=loop, daemon=True)
        self.reader.start()

    def next_for(self, sid: int) -> dict[str, Any]:
        with self.cond:
            assert self.cond.wait_for(lambda: self.by_session[sid], timeout=30), f"nothing for {sid}"
            return self.by_session[sid].pop(0)


def play_session(conn: BlockingConnection, sid: int, out: dict[int, Any], rng: random.Random) -> None:
    seq = 2

    def recv(kind: str) -> dict[str, Any]:
        nonlocal seq
        m = conn.next_for(sid)
        assert m["seq_num"] == seq, (m, seq)
        assert m["type"] == kind, (m, kind)
        seq += 1
        return m

    def send(msg: dict[str, Any]) -> None:
        nonlocal seq
        msg.update(seq_num=seq, session_id=sid)
        seq += 1
        conn.send(msg)

    order = recv("start_game")["player_order"]
    assert all(TAG.match(t) and int(TAG.match(t).group(2)) >= 0 for t in order)  # type: ignore[union-attr]
    me = next(t for t in order if int(TAG.match(t).group(2)) == sid)  # type: ignore[union-attr]
    rounds = 0
    while True:
        start = recv("start_round")
        hand = list(start["cards"])
        if start["pass_direction"] != "Keeper":
            give = rng.sample(hand, 3)
            send({"type": "donated_cards", "cards": give})
            got = recv("received_cards")
            assert got["donated_cards"] == give and len(got["cards"]) == 3  # in the order sent
        for _ in range(13):
            trick = recv("start_trick")
            for player in trick["player_order"]:
                if player == me:
                    legal = recv("move_request")["legal_moves"]
                    send({"type": "decided_move", "card": rng.choice(legal)})
                report = recv("move_report")
                assert report["player_tag"] == player and report["move_source"] == "player"
            recv("end_trick")
        recv("end_round")
        rounds += 1
        nxt = conn.next_for(sid)
        conn.by_session[sid].insert(0, nxt)
        if nxt["type"] == "end_game":
            out[sid] = recv("end_game")
            return


def run_reference_style_game(port: int) -> dict[int, Any]:
    conn = BlockingConnection(port)
    conn.start_reader()
    sids = []
    for _ in range(4):  # one request at a time, as the reference does
        conn.send(
            {
                "type": "game_session_request",
                "player_tag": "ref_player",
                "game_type": "any",
                "seq_num": 0,
                "lobby_code": "practice_lobby_ref",
            }
        )
        resp = conn.next_for(-1)
        assert resp["status"] == "success" and resp["seq_num"] == 1
        sids.append(resp["session_id"])
    out: dict[int, Any] = {}
    threads = [threading.Thread(target=play_session, args=(conn, s, out, random.Random(s))) for s in sids]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    conn.sock.close()
    return out


async def test_a_reference_style_client_plays_four_sessions_to_the_end(server: ServerApp) -> None:
    assert server.sessions_port
    out = await asyncio.wait_for(asyncio.to_thread(run_reference_style_game, server.sessions_port), 150)
    assert len(out) == 4
    ends = list(out.values())
    assert all(e["player_to_game_points"] == ends[0]["player_to_game_points"] for e in ends)
    points = ends[0]["player_to_game_points"]
    assert max(points.values()) > 100 and points[ends[0]["winning_player"]] == min(points.values())
