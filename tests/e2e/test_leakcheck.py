"""No client ever receives a card it may not know at that moment (``tests/leakcheck.py``).

Sessions: 100 games (``LEAKCHECK_GAMES``) through the real server (``SessionsConnection`` and
its codec, fed and read as bytes in process), two to four client sessions per game and server
bots in the other chairs; in every fifth game a client drops mid-game and resumes on a new
connection (the replayed history is checked too). Kierki: full games (the seven contracts, so a
fifth as many games) through the real ``kierki-server`` on loopback with four clients. Every
message each client is sent is checked against what its seat may know at the engine event behind
it (the seat is fed one event at a time while the test notes the event's version).

Trend: a third as many games (four deals each) through the real ``TrendSeat`` and its codec on
real tables, one to four Trend clients and server bots in the other chairs; each client is an
in-process peer that records every frame and answers each request with a JSON frame read back by
the real frame parser (no sockets: the seat's frames are what a ``Peer`` would queue). Turbo:
half as many games (four hands each) across the six charging orders (blind ones included), one
to four people acting through ``HostedGame.act`` as the game routes do (claiming late in hands,
answering claims) and server bots; each person's subscription to the real ``GameStream`` is read
as ``stream_events`` encodes it for that seat. Spectators see everything and are not checked.
All four check every deal on its own (``per_deal``), with each message at its exact engine event.
Mixed tables: Trend clients are also checked at standard tables (to 100 points), where mixed
tables seat them beside players of other protocols (each seat's events are redacted by the table,
whatever protocol writes them).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import random
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from e2e.test_kierki import join_four, run_until_end, server_in_thread
from leakcheck import Received, cards_in_json, check_game
from moonshot.bots.random import RandomBot
from moonshot.core.actions import AcceptClaim, Action, Claim, RejectClaim
from moonshot.core.events import ClaimSucceeded
from moonshot.core.rules import ChargingOrder, Rules
from moonshot.core.variants import STANDARD, TREND, TURBO_VARIANTS
from moonshot.http.games import HostedGame
from moonshot.http.streams import GameStream
from moonshot.protocols.kierki import server as kierki_server
from moonshot.protocols.kierki.codec import Deal, Taken, Trick, encode, parse_message
from moonshot.protocols.sessions import server as sessions_server
from moonshot.protocols.sessions.codec import encode as sessions_encode
from moonshot.protocols.trend import codec as trend_codec
from moonshot.protocols.trend.seat import TrendSeat
from moonshot.protocols.turbo.codec import Player as TurboPlayer
from moonshot.protocols.turbo.codec import TurboTranslator
from moonshot.protocols.turbo.seat import PEOPLE_POLICY, TurboSeat
from moonshot.runtime.limits import ClientLimits
from moonshot.runtime.table import BotSeat, DecisionRequest, Seat, Table, TableEvent
from moonshot.server.app import ServerApp
from moonshot.server.config import ServerConfig

# games per protocol; LEAKCHECK_GAMES=1000 for a longer run
SESSIONS_GAMES = int(os.environ.get("LEAKCHECK_GAMES", "100"))
KIERKI_GAMES = int(os.environ.get("LEAKCHECK_GAMES", "100")) // 5
TREND_GAMES = int(os.environ.get("LEAKCHECK_GAMES", "100")) // 3  # four deals a game
TURBO_GAMES = int(os.environ.get("LEAKCHECK_GAMES", "100")) // 2  # four hands a game


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
EVENT_VERSION: list[int | None] = [None]  # the table event the messages being written come from


def record(conn: sessions_server.SessionsConnection, msg: dict[str, Any], data: bytes | None = None) -> None:
    if data is None:
        data = sessions_encode(msg)  # the bytes the server writes (the decoder is tested elsewhere)
    got = json.loads(data)
    seat = conn.sessions.get(msg.get("session_id", -1))  # type: ignore[arg-type]
    if seat is not None and seat.table is not None:
        version = EVENT_VERSION[0] if EVENT_VERSION[0] is not None else len(seat.table.game.log)
        SENT.append((seat.table, Received(seat.seat, version, cards_in_json(got), data[:120].decode())))
    client = CLIENTS.get(conn)
    if client is not None:
        client.inbox.append(got)


def test_no_sessions_client_is_sent_a_card_it_may_not_know(monkeypatch: pytest.MonkeyPatch) -> None:
    send, send_many = sessions_server.SessionsConnection.send, sessions_server.SessionsConnection.send_many
    send_frames = sessions_server.SessionsConnection.send_frames

    def recording_send(self: sessions_server.SessionsConnection, msg: dict[str, Any]) -> None:
        record(self, msg)
        send(self, msg)

    def recording_send_many(self: sessions_server.SessionsConnection, msgs: list[dict[str, Any]]) -> None:
        for m in msgs:
            record(self, m)
        send_many(self, msgs)

    def recording_send_frames(self: sessions_server.SessionsConnection, frames: list[bytes]) -> None:
        for f in frames:  # messages encoded already (live move reports, tricks, move requests)
            got = json.loads(f)
            record(self, got, f)
        send_frames(self, frames)

    on_events = sessions_server.SessionSeat.on_events

    def one_event_at_a_time(self: sessions_server.SessionSeat, table: Table, events: Sequence[TableEvent]) -> None:
        # each message is checked at the exact event behind it (a deal's last trick and the next
        # deal's hands come in one batch, and card masks repeat from deal to deal); a resumed
        # session's replay stays one replay
        resuming = self.resuming
        for te in events:
            self.resuming = resuming
            EVENT_VERSION[0] = te.version
            try:
                on_events(self, table, [te])
            finally:
                EVENT_VERSION[0] = None

    monkeypatch.setattr(sessions_server.SessionsConnection, "send", recording_send)
    monkeypatch.setattr(sessions_server.SessionsConnection, "send_many", recording_send_many)
    monkeypatch.setattr(sessions_server.SessionsConnection, "send_frames", recording_send_frames)
    monkeypatch.setattr(sessions_server.SessionSeat, "on_events", one_event_at_a_time)
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
        problems += check_game(t.game.log, by_table[id(t)], per_deal=True)
    assert checked > SESSIONS_GAMES * 100
    assert not problems, problems[:10]


async def play_sessions_games(games: int, at_once: int = 25) -> None:
    """``games`` games, ``at_once`` at a time (one loop turn serves them all)."""
    # every client is one address here: the per-address rate of starting tables is lifted
    unpaced = ClientLimits(tables_per_s=1_000_000, tables_burst=1_000_000)
    app = ServerApp(
        ServerConfig(
            sessions_port=0, db_url=None, bot="random", move_timeout=600, fill_wait=0.0, seed=3, limits=unpaced
        )
    )
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
        # the store's writer commits on timers: the games are waited for with a deadline in time,
        # not a count of loop turns (a busy machine runs fewer turns a second)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 300
        for turn in itertools.count():
            if loop.time() > deadline:
                raise AssertionError(f"games {batch} did not end")
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
            version = EVENT_VERSION[0] if EVENT_VERSION[0] is not None else len(server.table.game.log)
            sent.append((seat, version, encode(msg)))
        send(self, msg)

    on_events = kierki_server.KierkiSeat.on_events

    def one_event_at_a_time(self: kierki_server.KierkiSeat, table: Table, events: Sequence[TableEvent]) -> None:
        # as for Sessions: each message at the exact event behind it (a deal's last TAKEN and the
        # next DEAL come in one batch); a reconnect's replay is cut to its deal as one batch
        if self.resuming:
            on_events(self, table, events)
            return
        for te in events:
            EVENT_VERSION[0] = te.version
            try:
                on_events(self, table, [te])
            finally:
                EVENT_VERSION[0] = None

    monkeypatch.setattr(kierki_server.Connection, "send", recording_send)
    monkeypatch.setattr(kierki_server.KierkiSeat, "on_events", one_event_at_a_time)
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
            problems += check_game(table.game.log, received, per_deal=True)
    assert checked > KIERKI_GAMES * 300
    assert not problems, problems[:10]


# ------------------------------------------------------------------ Trend
class TrendPeer:
    """A Trend client's socket, in process: records each frame (with the engine event behind
    it) and answers each request with a JSON reply frame, read back by the real frame parser."""

    def __init__(self, seat: int, rng: random.Random) -> None:
        self.seat = seat
        self.rng = rng
        self.addr = f"leak:{seat}"
        self.dropped = 0
        self.version = 0  # the table event the frames being written come from
        self.trend_seat: TrendSeat | None = None
        self.sent: list[Received] = []

    def send(self, message: dict[str, Any], on_sent: Callable[[float], None] | None = None) -> None:
        text = json.dumps(message)
        self.sent.append(Received(self.seat, self.version, cards_in_json(json.loads(text)), text[:120]))
        if on_sent is not None:  # "written" at once: the request's clock starts now
            on_sent(asyncio.get_running_loop().time())
        name, data = message["eventName"], message["data"]
        reply: dict[str, Any] | None = None
        if name == "pass_cards":
            reply = {"dealNumber": data["dealNumber"], "cards": self.rng.sample(data["self"]["cards"], 3)}
        elif name == "expose_cards":
            reply = {"dealNumber": data["dealNumber"], "cards": ["AH"] if self.rng.random() < 0.5 else []}
        elif name == "your_turn":
            card = self.rng.choice(data["self"]["candidateCards"])
            reply = {"dealNumber": data["dealNumber"], "roundNumber": data["roundNumber"], "turnCard": card}
        if reply is not None:
            answer = {"pass_cards": "pass_my_cards", "expose_cards": "expose_my_cards", "your_turn": "pick_card"}
            frame = json.dumps({"eventName": answer[name], "data": reply})
            # a reply arrives later, as over a socket
            asyncio.get_running_loop().call_soon(self.reply, frame)

    def send_many(self, messages: Sequence[dict[str, Any]]) -> None:
        for m in messages:
            self.send(m)

    def reply(self, frame: str) -> None:
        event = trend_codec.parse_frame(frame)
        assert isinstance(event, trend_codec.PassMyCards | trend_codec.ExposeMyCards | trend_codec.PickCard), event
        assert self.trend_seat is not None
        self.trend_seat.reply(event)


def test_no_trend_client_is_sent_a_card_it_may_not_know(monkeypatch: pytest.MonkeyPatch) -> None:
    on_events, on_request = TrendSeat.on_events, TrendSeat.on_request

    def one_event_at_a_time(self: TrendSeat, table: Table, events: Sequence[TableEvent]) -> None:
        # the codec turns each event into frames on its own: fed one by one, each frame is
        # checked at the exact event behind it (a deal_end and the next deal's hands come in
        # one batch, and card masks repeat from deal to deal)
        for te in events:
            self.peer.version = te.version  # type: ignore[attr-defined]
            on_events(self, table, [te])

    def request(self: TrendSeat, table: Table, req: DecisionRequest) -> None:
        self.peer.version = len(table.game.log)  # type: ignore[attr-defined]
        on_request(self, table, req)

    monkeypatch.setattr(TrendSeat, "on_events", one_event_at_a_time)
    monkeypatch.setattr(TrendSeat, "on_request", request)
    problems, checked, deals = asyncio.run(play_trend_games(TREND_GAMES))
    assert deals >= TREND_GAMES * 4
    assert checked > TREND_GAMES * 4 * 30
    assert not problems, problems[:10]


def test_no_trend_client_at_a_mixed_standard_table_is_sent_a_card_it_may_not_know(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Mixed tables seat Trend clients at tables of other rules (a standard game, to 100 points)."""
    on_events = TrendSeat.on_events

    def one_event_at_a_time(self: TrendSeat, table: Table, events: Sequence[TableEvent]) -> None:
        for te in events:
            self.peer.version = te.version  # type: ignore[attr-defined]
            on_events(self, table, [te])

    on_request = TrendSeat.on_request

    def request(self: TrendSeat, table: Table, req: DecisionRequest) -> None:
        self.peer.version = len(table.game.log)  # type: ignore[attr-defined]
        on_request(self, table, req)

    monkeypatch.setattr(TrendSeat, "on_events", one_event_at_a_time)
    monkeypatch.setattr(TrendSeat, "on_request", request)
    games = max(4, TREND_GAMES // 4)  # a standard game is longer than Trend's four deals
    problems, checked, deals = asyncio.run(play_trend_games(games, STANDARD))
    assert deals >= games * 4 and checked > games * 4 * 30
    assert not problems, problems[:10]


async def play_trend_games(games: int, rules: Rules = TREND) -> tuple[list[str], int, int]:
    rng = random.Random(11)
    problems: list[str] = []
    checked = deals = 0
    infos = [trend_codec.PlayerInfo(i + 1, f"player{i + 1}") for i in range(4)]
    for g in range(games):
        peers: list[TrendPeer] = []
        seats: list[Seat] = []
        for chair in range(4):
            if chair < 1 + g % 4:  # one to four Trend clients, server bots in the other chairs
                peer = TrendPeer(chair, rng)
                seat = TrendSeat(peer, chair, infos)  # type: ignore[arg-type]
                seat.seated(chair, infos, rules)
                peer.trend_seat = seat
                peers.append(peer)
                seats.append(seat)
            else:
                seats.append(BotSeat(RandomBot(), random.Random(g * 4 + chair)))
        table = Table(rules, seats, seed=g, names=[i.name for i in infos])
        table.start()
        await asyncio.wait_for(table.done, 240)
        assert table.game.over
        deals += table.game.deal_index + 1
        for p in peers:
            checked += len(p.sent)
            problems += check_game(table.game.log, p.sent, per_deal=True)
    return problems, checked, deals


# ------------------------------------------------------------------ Turbo
def test_no_seated_turbo_viewer_is_sent_a_card_it_may_not_know() -> None:
    problems, checked, hands, claims, orders = asyncio.run(play_turbo_games(TURBO_GAMES))
    assert hands >= TURBO_GAMES * 4
    assert claims > 0 and len(orders) == min(TURBO_GAMES, len(ChargingOrder))
    assert checked > TURBO_GAMES * 4 * 50
    assert not problems, problems[:10]


async def play_turbo_games(games: int) -> tuple[list[str], int, int, int, set[ChargingOrder]]:
    """Games in every charging order, one to four people (the others server bots); each
    person's stream is read as ``stream_events`` writes it (``Message.json_for`` its seat).
    Returns the leaks, messages checked, hands, claims that succeeded and the orders played."""
    rng = random.Random(12)
    problems: list[str] = []
    checked = hands = claims = 0
    orders: set[ChargingOrder] = set()
    all_orders = list(ChargingOrder)
    for g in range(games):
        order = all_orders[g % len(all_orders)]
        orders.add(order)
        rules = TURBO_VARIANTS[order]
        people = 1 + g % 4
        names = [f"person{i}" if i < people else f"robot{i}" for i in range(4)]
        seats: list[Seat] = [
            TurboSeat(names[i]) if i < people else BotSeat(RandomBot(), random.Random(g * 4 + i), name=names[i])
            for i in range(4)
        ]
        players = [TurboPlayer(n, "human" if i < people else "bot") for i, n in enumerate(names)]
        table = Table(rules, seats, seed=1000 + g, policy=PEOPLE_POLICY, names=names)
        stream = GameStream(f"leak{g}")
        stream.start(TurboTranslator(rules, table.seed, players))
        subs = [stream.subscribe(n, None) for n in names[:people]]
        assert [s.seat for s in subs] == list(range(people))
        table.watch(stream)
        hosted = HostedGame(stream.game_id, table, players, stream)
        table.start()
        await asyncio.gather(*(turbo_person(hosted, s, rng) for s in range(people)))
        await asyncio.wait_for(table.done, 240)
        claims += sum(isinstance(e, ClaimSucceeded) for e in table.game.log)  # a hand shown, then taken
        hands += table.game.deal_index + 1
        stream.close()
        for sub in subs:
            assert sub.seat is not None
            received = []
            while not sub.queue.empty():
                m = sub.queue.get_nowait()
                text = None if m is None else m.json_for(sub.seat)
                if m is not None and m.data["type"] != "end_replay" and text is not None:
                    received.append(Received(sub.seat, m.version, cards_in_json(json.loads(text)), text[:120]))
            checked += len(received)
            problems += check_game(table.game.log, received, per_deal=True)
    return problems, checked, hands, claims, orders


async def turbo_person(hosted: HostedGame, seat: int, rng: random.Random) -> int:
    """One person at the table, acting through ``HostedGame.act`` as the game routes do: answers
    claims, sometimes claims late in a hand, else passes, charges and plays at random."""
    game = hosted.table.game
    claims = 0
    while not game.over:
        await asyncio.sleep(0)
        legal = game.legal_actions(seat)
        if not legal:
            continue
        answers = [a for a in legal if isinstance(a, AcceptClaim) and a.claimer != seat]
        claim = [a for a in legal if isinstance(a, Claim)]
        if answers:
            a = answers[0]
            action: Action = a if rng.random() < 0.7 else RejectClaim(seat, a.claimer)
        elif claim and game.hands[seat].bit_count() <= 6 and rng.random() < 0.1:
            action = claim[0]
            claims += 1
        else:
            moves = [a for a in legal if not isinstance(a, Claim | AcceptClaim | RejectClaim)]
            if not moves:
                continue
            action = rng.choice(moves)
        await hosted.act(seat, action)
    return claims
