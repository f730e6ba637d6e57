"""No client ever receives a card it may not know at that moment (``tests/leakcheck.py``).

Sessions: 100 games (``LEAKCHECK_GAMES``) through the real server (``SessionsConnection`` and
its codec, fed and read as bytes in process), two to four client sessions per game and server
bots in the other chairs; in every fifth game a client drops mid-game and resumes on a new
connection (the replayed history is checked too). Kierki: full games (the seven contracts, so a
fifth as many games) through the real ``kierki-server`` on loopback with four clients. Every
message each client is sent is checked against what its seat may know at the engine's log
position when it was sent.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from typing import Any

import pytest

from e2e.test_kierki import join_four, run_until_end, server_in_thread
from leakcheck import Received, cards_in_json, check_game
from moonshot.protocols.kierki import server as kierki_server
from moonshot.protocols.kierki.codec import Deal, Taken, Trick, encode, parse_message
from moonshot.protocols.sessions import server as sessions_server
from moonshot.protocols.sessions.codec import encode as sessions_encode
from moonshot.server.app import ServerApp, ServerConfig
from moonshot.server.table import Table

# games per protocol; LEAKCHECK_GAMES=1000 for a longer run
SESSIONS_GAMES = int(os.environ.get("LEAKCHECK_GAMES", "100"))
KIERKI_GAMES = int(os.environ.get("LEAKCHECK_GAMES", "100")) // 5


# ------------------------------------------------------------------ Sessions
class Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.closed = False

    def write(self, data: bytes) -> None:  # type: ignore[override]
        pass  # what is written is recorded at send (with the engine's position); see record()

    def get_write_buffer_size(self) -> int:
        return 0

    def is_closing(self) -> bool:
        return self.closed

    def abort(self) -> None:
        self.closed = True

    def close(self) -> None:
        self.closed = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 1) if name == "peername" else default


class Client:
    """One connection with one session: plays a random legal card, passes three random cards."""

    def __init__(self, app: ServerApp, rng: random.Random) -> None:
        assert app.sessions is not None
        self.app = app
        self.rng = rng
        self.conn = sessions_server.SessionsConnection(app.sessions)
        self.conn.connection_made(Transport())
        self.inbox: list[dict[str, Any]] = []  # arrived this loop turn
        self.ready: list[dict[str, Any]] = []  # arrived a turn ago: read now (as over a network)
        self.sid = -1
        self.secret = ""
        self.seq = 0
        self.over = False
        CLIENTS[self.conn] = self

    def feed(self, msg: dict[str, Any]) -> None:
        self.conn.data_received(sessions_encode(msg))

    def step(self) -> None:
        msgs, self.ready, self.inbox = self.ready, self.inbox, []
        for m in msgs:
            assert m["type"] != "error", m
            if m["type"] == "game_session_response":
                self.sid, self.secret = m["session_id"], m["session_secret"]
            if isinstance(m.get("seq_num"), int):
                self.seq = m["seq_num"]
            if m.get("replayed"):
                continue
            if m["type"] == "start_round" and m["pass_direction"] != "Keeper":
                self.answer({"type": "donated_cards", "cards": self.rng.sample(m["cards"], 3)})
            elif m["type"] == "move_request":
                self.answer({"type": "decided_move", "card": self.rng.choice(m["legal_moves"])})
            elif m["type"] == "end_game":
                self.over = True

    def answer(self, msg: dict[str, Any]) -> None:
        self.seq += 1
        self.feed({**msg, "session_id": self.sid, "seq_num": self.seq})


CLIENTS: dict[sessions_server.SessionsConnection, Client] = {}
SENT: list[tuple[Table, Received]] = []  # every session message, with its table


def record(conn: sessions_server.SessionsConnection, msg: dict[str, Any]) -> None:
    data = sessions_encode(msg)  # the bytes the server writes (the decoder is tested elsewhere)
    got = json.loads(data)
    seat = conn.sessions.get(msg.get("session_id", -1))  # type: ignore[arg-type]
    if seat is not None and seat.table is not None:
        version = len(seat.table.game.log)
        SENT.append((seat.table, Received(seat.seat, version, cards_in_json(got), data[:120].decode())))
    client = CLIENTS.get(conn)
    if client is not None:
        client.inbox.append(got)


def test_no_sessions_client_is_sent_a_card_it_may_not_know(monkeypatch: pytest.MonkeyPatch) -> None:
    send, send_many = sessions_server.SessionsConnection.send, sessions_server.SessionsConnection.send_many

    def recording_send(self: sessions_server.SessionsConnection, msg: dict[str, Any]) -> None:
        record(self, msg)
        send(self, msg)

    def recording_send_many(self: sessions_server.SessionsConnection, msgs: list[dict[str, Any]]) -> None:
        for m in msgs:
            record(self, m)
        send_many(self, msgs)

    monkeypatch.setattr(sessions_server.SessionsConnection, "send", recording_send)
    monkeypatch.setattr(sessions_server.SessionsConnection, "send_many", recording_send_many)
    tables: list[Table] = []
    start_table = ServerApp._start_table

    def recording_start(self: ServerApp, seats: Any) -> Table:
        t = start_table(self, seats)
        tables.append(t)
        return t

    monkeypatch.setattr(ServerApp, "_start_table", recording_start)
    asyncio.run(play_sessions_games(SESSIONS_GAMES))
    assert len(tables) == SESSIONS_GAMES and all(t.game.over for t in tables)
    problems: list[str] = []
    checked = 0
    by_table: dict[int, list[Received]] = {id(t): [] for t in tables}
    for table, received in SENT:
        by_table[id(table)].append(received)
    for t in tables:
        checked += len(by_table[id(t)])
        problems += check_game(t.game.log, by_table[id(t)])
    assert checked > SESSIONS_GAMES * 100
    assert not problems, problems[:10]


async def play_sessions_games(games: int, at_once: int = 25) -> None:
    """``games`` games, ``at_once`` at a time (one loop turn serves them all)."""
    app = ServerApp(ServerConfig(sessions_port=0, db_url=None, bot="random", move_timeout=600, fill_wait=0.0, seed=3))
    await app.start()
    rng = random.Random(4)
    for first in range(0, games, at_once):
        batch = range(first, min(games, first + at_once))
        clients = {g: [Client(app, rng) for _ in range(4 - g % 3)] for g in batch}
        for g, cs in clients.items():
            for c in cs:
                c.feed({"type": "game_session_request", "player_tag": "leak", "lobby_code": f"g{g}", "seq_num": 0})
        # in every fifth game a client drops mid-game and takes its chair back on a new connection
        drop_at = {g: 50 + g % 40 for g in batch if g % 5 == 0}
        for turn in range(1_000_000):
            await asyncio.sleep(0)
            everyone = [c for cs in clients.values() for c in cs]
            for c in everyone:
                c.step()
            if all(c.over for c in everyone):
                break
            for g in [g for g, t in drop_at.items() if turn >= t]:
                del drop_at[g]
                gone = clients[g].pop(0)
                gone.conn.connection_lost(None)
                for _ in range(5):  # the table hears of it in its own task
                    await asyncio.sleep(0)
                back = Client(app, rng)
                back.sid, back.secret = gone.sid, gone.secret
                back.feed({"type": "resume_session", "session_id": gone.sid, "session_secret": gone.secret})
                clients[g].append(back)
        else:
            raise AssertionError(f"games {batch} did not end")
        for cs in clients.values():
            for c in cs:
                c.conn.connection_lost(None)
    await app.stop()


# ------------------------------------------------------------------ Kierki
def test_no_kierki_client_is_sent_a_card_it_may_not_know(monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[tuple[int, int, bytes]] = []  # (seat, version, bytes)
    servers: list[Any] = []
    send = kierki_server.Connection.send

    def recording_send(self: kierki_server.Connection, msg: Any) -> None:
        server = self.server
        seat = next((s.seat for s in server.seats if s is not None and s.conn is self), None)
        if seat is not None and server.table is not None:
            sent.append((seat, len(server.table.game.log), encode(msg)))
        send(self, msg)

    monkeypatch.setattr(kierki_server.Connection, "send", recording_send)
    from e2e.test_kierki import game_deals

    problems: list[str] = []
    checked = 0
    for g in range(KIERKI_GAMES):
        sent.clear()
        with server_in_thread(game_deals(g), timeout=30) as (port, server, _):
            servers.append(server)
            players = join_four(port)
            run_until_end(players, timeout=120)
            table = server.table
            assert table is not None and table.game.over
            received = []
            for seat, version, data in sent:
                msg = parse_message(data.decode().rstrip("\r\n"))
                cards = 0
                if isinstance(msg, Deal | Trick | Taken):
                    for c in msg.cards:
                        cards |= 1 << c
                received.append(Received(seat, version, cards, data.decode().strip()))
            checked += len(received)
            problems += check_game(table.game.log, received)
    assert checked > KIERKI_GAMES * 300
    assert not problems, problems[:10]
