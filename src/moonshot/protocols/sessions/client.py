"""The Sessions client SDK: write a player as a class, run many sessions on one connection.

    class Lowest(Player):
        def pass_cards(self, view):            # plain or ``async def``
            return sorted(view.hand, key=rank)[-3:]
        def play(self, view):
            return view.legal_moves[0]

    async with await Client.connect("127.0.0.1", 40405) as client:
        results = await client.play_games(Lowest, sessions=8, games=100)

A :class:`View` is what the session knows: its hand, the legal moves, the trick so far, the
round's points so far, the game totals, the pass direction and the cards passed and received.
:class:`BotPlayer` plays any moonshot bot (``heuristic``, ``random``) through the protocol by
rebuilding the seat's :class:`~moonshot.core.views.SeatView` from the messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import logging
import random
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from moonshot.bots.base import Bot
from moonshot.core.actions import Pass, Play
from moonshot.core.cards import HEARTS_MASK, QUEEN_SPADES, CardSet, format_cards, parse_card
from moonshot.core.engine import Phase
from moonshot.core.events import TrickEnded
from moonshot.core.rules import PassDirection
from moonshot.core.views import PASSES, PLAYS, Choices, SeatView
from moonshot.protocols.sessions.codec import DEFAULT_PORT, SESSIONS_RULES, FrameProblem, StreamDecoder, encode

log = logging.getLogger("moonshot.client")

_DIRECTIONS = {
    "Left": PassDirection.LEFT,
    "Right": PassDirection.RIGHT,
    "Across": PassDirection.ACROSS,
    "Keeper": PassDirection.HOLD,
}


@dataclass
class View:
    """What one session knows at a decision."""

    me: str  # my player tag, e.g. "bot(3)"
    session_id: int
    player_order: list[str]  # seat order (start_game)
    round_index: int
    pass_direction: str  # Left | Right | Across | Keeper
    hand: list[str]
    legal_moves: list[str]
    trick: list[tuple[str, str]]  # (player_tag, card) so far in this trick, in play order
    trick_index: int
    round_points: dict[str, int]  # points taken so far this round (hearts 1, QS 13)
    scores: dict[str, int]  # game totals before this round
    passed: list[str] = field(default_factory=list)
    received: list[str] = field(default_factory=list)
    played: list[str] = field(default_factory=list)  # every card played this round
    _make_seat_view: Any = field(default=None, repr=False, compare=False)
    _seat_view: SeatView | None = field(default=None, repr=False, compare=False)

    @property
    def seat_view(self) -> SeatView | None:
        """The same knowledge in moonshot's own form (what moonshot bots read); built on first use."""
        if self._seat_view is None and self._make_seat_view is not None:
            self._seat_view = self._make_seat_view()
        return self._seat_view

    @property
    def passing_to(self) -> str | None:
        off = {"Left": 1, "Right": 3, "Across": 2}.get(self.pass_direction)
        if off is None:
            return None
        return self.player_order[(self.player_order.index(self.me) + off) % 4]


class Player:
    """Subclass and implement ``pass_cards`` and ``play`` (plain or async)."""

    name = "player"
    kind = "bot"  # or "human": the lobby uses it for humans_only / bots_only

    def pass_cards(self, view: View) -> list[str] | None:
        return view.hand[:3]

    def play(self, view: View) -> str | None:
        """The card to play; ``None`` sends nothing (the player answered by itself)."""
        return view.legal_moves[0]

    def game_over(self, result: GameResult) -> Any:
        """Called once per finished game (may be async)."""
        return None


class RandomPlayer(Player):
    name = "random_player"

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng or random.Random()

    def pass_cards(self, view: View) -> list[str]:
        return self.rng.sample(view.hand, 3)

    def play(self, view: View) -> str:
        return self.rng.choice(view.legal_moves)


class BotPlayer(Player):
    """A moonshot bot (pure policy) playing over the wire."""

    def __init__(self, bot: Bot, rng: random.Random | None = None) -> None:
        self.bot = bot
        self.name = f"moonshot_{bot.name}"
        self.rng = rng or random.Random()

    def pass_cards(self, view: View) -> list[str]:
        assert view.seat_view is not None
        a = self.bot.act(view.seat_view, self.rng)
        if not isinstance(a, Pass):
            raise ValueError(f"bot answered {a!r} to a pass")
        return format_cards(a.cards)

    def play(self, view: View) -> str:
        assert view.seat_view is not None
        a = self.bot.act(view.seat_view, self.rng)
        if not isinstance(a, Play):
            raise ValueError(f"bot answered {a!r} to a move request")
        return format_cards([a.card])[0]


@dataclass
class GameResult:
    me: str
    player_order: list[str]
    scores: dict[str, int]
    winner: str
    rounds: int
    server_moves: int  # my moves the server chose (timeouts, illegal cards)
    errors: list[str] = field(default_factory=list)

    @property
    def my_score(self) -> int:
        return self.scores[self.me]

    @property
    def won(self) -> bool:
        return self.winner == self.me


class ProtocolError(RuntimeError):
    """The server refused something, or sent what the protocol does not allow."""


class SessionLost(ProtocolError):
    """A server bot now plays the session's chair (too many timeouts), or the chair was taken
    back on another connection; ``Client.resume`` with the session's secret takes it back. Also
    raised when the server closed the session (``about: closed``: a cluster process that hosted
    its game died and no chair waits for it): join again."""


async def _maybe_await(v: Any) -> Any:
    if inspect.isawaitable(v):
        return await v
    return v


def _points(cards: CardSet) -> int:
    return (cards & HEARTS_MASK).bit_count() + (13 if cards >> QUEEN_SPADES & 1 else 0)


class _Knowledge:
    """One session's running knowledge of the round, enough to build a SeatView."""

    def __init__(self, me: str, order: list[str]) -> None:
        self.me = me
        self.order = order
        self.seat = order.index(me)
        self.totals = [0, 0, 0, 0]
        self.round_index = 0
        self.direction = PassDirection.HOLD
        self.dir_name = "Keeper"
        self.hand = 0
        self.dealt = 0
        self.passed: CardSet | None = None
        self.received: CardSet | None = None
        self.new_round(0, "Keeper", 0)

    def new_round(self, index: int, direction: str, hand: CardSet) -> None:
        self.round_index = index
        self.dir_name = direction
        self.direction = _DIRECTIONS.get(direction, PassDirection.HOLD)
        self.hand = self.dealt = hand
        self.passed = self.received = None
        self.trick_no = 0
        self.leader = 0
        self.trick: list[tuple[int, int]] = []
        self.tricks: list[TrickEnded] = []
        self.played = 0
        self.led_suits = 0
        self.hearts_broken = False
        self.voids = [0, 0, 0, 0]
        self.taken = [0, 0, 0, 0]
        self.tricks_won = [0, 0, 0, 0]

    def seat_of(self, tag: str) -> int:
        return self.order.index(tag)

    def card_played(self, seat: int, c: int) -> None:
        if self.trick:
            led = self.trick[0][1] // 13
            if c // 13 != led:
                self.voids[seat] |= 1 << led
        self.trick.append((seat, c))
        self.played |= 1 << c
        if c // 13 == 2:
            self.hearts_broken = True
        if seat == self.seat:
            self.hand &= ~(1 << c)

    def trick_ended(self, winner: int) -> None:
        cards = tuple(c for _, c in self.trick)
        mask = sum(1 << c for c in cards)
        if cards:
            self.led_suits |= 1 << (cards[0] // 13)
        self.taken[winner] |= mask
        self.tricks_won[winner] += 1
        self.tricks.append(TrickEnded(self.trick_no, winner, cards, tuple(s for s, _ in self.trick), _points(mask)))
        self.trick = []

    def seat_view(self, phase: Phase, legal_plays: CardSet) -> SeatView:
        d = self.direction
        pass_to = None if d in (PassDirection.HOLD, PassDirection.KEEPER) else (self.seat + d.offset) % 4
        known = [0, 0, 0, 0]
        if pass_to is not None and self.passed is not None:
            known[pass_to] = self.passed & ~self.played
        if phase is Phase.PLAY:
            choices = Choices(self.seat, PLAYS, legal_plays)
        else:
            choices = Choices(self.seat, PASSES, self.hand, 3)
        pts = [_points(t) for t in self.taken]
        return SeatView(
            seat=self.seat,
            rules=SESSIONS_RULES,
            phase=phase,
            to_act=(self.seat,),
            deal=self.round_index,
            deal_kind=0,
            direction=d,
            pass_to=pass_to,
            hand=self.hand,
            dealt=self.dealt,
            passed=self.passed,
            received=self.received,
            trick_no=self.trick_no,
            leader=self.leader,
            trick=tuple(self.trick),
            tricks=tuple(self.tricks),
            played=self.played,
            led_suits=self.led_suits,
            hearts_broken=self.hearts_broken,
            voids=(self.voids[0], self.voids[1], self.voids[2], self.voids[3]),
            taken=(self.taken[0], self.taken[1], self.taken[2], self.taken[3]),
            tricks_won=(self.tricks_won[0], self.tricks_won[1], self.tricks_won[2], self.tricks_won[3]),
            points=(pts[0], pts[1], pts[2], pts[3]),
            totals=(self.totals[0], self.totals[1], self.totals[2], self.totals[3]),
            charged=(0, 0, 0, 0),
            exposed=(0, 0, 0, 0),
            revealed=(0, 0, 0, 0),
            known_cards=(known[0], known[1], known[2], known[3]),
            claimer=None,
            claims=(),
            legal_plays=legal_plays if phase is Phase.PLAY else 0,
            choices=choices,
        )


class _Session:
    def __init__(self, client: Client, session_id: int, seq: int) -> None:
        self.client = client
        self.id = session_id
        self.seq = seq  # the next sequence number (shared by both directions)
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.errors: list[str] = []

    def send(self, msg: dict[str, Any]) -> None:
        msg["seq_num"] = self.seq
        msg["session_id"] = self.id
        self.seq += 1
        self.client._write(msg)

    async def recv(self) -> dict[str, Any]:
        msg = await self.inbox.get()
        if msg.get("type") == "_closed":
            raise ConnectionError("connection closed by the server")
        seq = msg.get("seq_num")
        if isinstance(seq, int):
            self.seq = seq + 1
        return msg

    async def run(self, player: Player) -> GameResult:
        msg = await self._next("start_game")
        order = list(msg["player_order"])
        me = next(t for t in order if t.endswith(f"({self.id})"))
        k = _Knowledge(me, order)
        scores = dict.fromkeys(order, 0)
        server_moves = 0
        rounds = 0
        view: View | None = None
        trick_index = 0
        while True:
            msg = await self.recv()
            t = msg.get("type")
            if t == "start_round":
                hand = sum(1 << parse_card(c) for c in msg["cards"])
                k.new_round(int(msg["round_index"]), str(msg["pass_direction"]), hand)
                if msg["pass_direction"] != "Keeper" and not msg.get("replayed"):
                    view = self._view(k, scores, [], trick_index, Phase.PASS, 0)
                    cards = await _maybe_await(player.pass_cards(view))
                    if cards is not None:
                        with contextlib.suppress(ValueError):
                            k.passed = sum(1 << parse_card(str(c)) for c in cards)
                        self.send({"type": "donated_cards", "cards": [str(c) for c in cards]})
            elif t == "received_cards":
                got = sum(1 << parse_card(c) for c in msg["cards"])
                k.passed = sum(1 << parse_card(c) for c in msg.get("donated_cards", [])) or k.passed
                k.hand = (k.dealt & ~(k.passed or 0)) | got
                k.received = got
            elif t == "start_trick":
                trick_index = int(msg["trick_index"])
                k.trick_no = trick_index + 1
                k.leader = k.seat_of(msg["player_order"][0])
            elif t == "move_request":
                legal = list(msg["legal_moves"])
                mask = sum(1 << parse_card(c) for c in legal)
                view = self._view(k, scores, legal, trick_index, Phase.PLAY, mask)
                card = await _maybe_await(player.play(view))
                if card is not None:  # None: the player answered by itself (or chose silence)
                    self.send({"type": "decided_move", "card": str(card)})
            elif t == "move_report":
                seat = k.seat_of(msg["player_tag"])
                k.card_played(seat, parse_card(msg["card"]))
                if seat == k.seat and msg.get("move_source") == "server":
                    server_moves += 1
            elif t == "end_trick":
                k.trick_ended(k.seat_of(msg["winning_player"]))
            elif t == "end_round":
                rounds += 1
                for tag, p in msg["player_to_round_points"].items():
                    scores[tag] = scores.get(tag, 0) + int(p)
                    k.totals[k.seat_of(tag)] = scores[tag]
            elif t == "end_game":
                final = {tag: int(p) for tag, p in msg["player_to_game_points"].items()}
                res = GameResult(me, order, final, str(msg["winning_player"]), rounds, server_moves, self.errors)
                await _maybe_await(player.game_over(res))
                return res
            elif t == "error":
                self.errors.append(str(msg.get("reason")))
                log.warning("event=server_error session=%d reason=%s", self.id, msg.get("reason"))
                if msg.get("about") in ("substituted", "replaced", "closed"):
                    raise SessionLost(str(msg.get("reason")))

    def _view(self, k: _Knowledge, scores: dict[str, int], legal: list[str], trick_index: int, phase: Phase, mask: int):  # type: ignore[no-untyped-def]
        tags = k.order
        pts = {tags[s]: _points(k.taken[s]) for s in range(4)}
        return View(
            me=k.me,
            session_id=self.id,
            player_order=list(tags),
            round_index=k.round_index,
            pass_direction=k.dir_name,
            hand=format_cards(k.hand),
            legal_moves=legal,
            trick=[(tags[s], format_cards([c])[0]) for s, c in k.trick],
            trick_index=trick_index,
            round_points=pts,
            scores=dict(scores),
            passed=format_cards(k.passed or 0),
            received=format_cards(k.received or 0),
            played=format_cards(k.played),
            _make_seat_view=functools.partial(k.seat_view, phase, mask),
        )

    async def _next(self, kind: str) -> dict[str, Any]:
        while True:
            msg = await self.recv()
            if msg.get("type") == kind:
                return msg
            if msg.get("type") == "error":
                self.errors.append(str(msg.get("reason")))
                if msg.get("about") == "closed":  # the server forgot the session (its game's host died)
                    raise SessionLost(str(msg.get("reason")))
                continue
            raise ProtocolError(f"session {self.id}: expected {kind}, got {msg.get('type')}")


class Client:
    """One TCP connection carrying any number of sessions."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.decoder = StreamDecoder(1 << 20)
        self.sessions: dict[int, _Session] = {}
        self.errors: list[str] = []  # error replies that name no session of ours
        # session id -> its secret (game_session_response's ``session_secret``), kept until the
        # session's game ends, so a lost session can be resumed: ``resume(sid, player)`` on this
        # client, or ``resume(sid, player, secret=old.session_secrets[sid])`` on a new connection
        self.session_secrets: dict[int, str] = {}
        self._responses: deque[asyncio.Future[dict[str, Any]]] = deque()
        self._resumes: deque[asyncio.Future[dict[str, Any]]] = deque()
        self._connected: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._reader_task = asyncio.get_running_loop().create_task(self._read_loop())
        self.closed = False

    @classmethod
    async def connect(
        cls, host: str = "127.0.0.1", port: int = DEFAULT_PORT, local_addr: tuple[str, int] | None = None
    ) -> Client:
        """Connect and say hello; ``local_addr``: the (address, port) to connect from."""
        reader, writer = await asyncio.open_connection(host, port, local_addr=local_addr)
        c = cls(reader, writer)
        c._write({"type": "connection_request"})
        resp = await asyncio.wait_for(c._connected, 30)
        if resp.get("status") != "success":
            raise ProtocolError(f"connection refused: {resp}")
        return c

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        self.closed = True
        self.writer.close()
        with contextlib.suppress(Exception):
            await self.writer.wait_closed()
        self._reader_task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader_task

    def _write(self, msg: dict[str, Any]) -> None:
        self.writer.write(encode(msg))

    async def _read_loop(self) -> None:
        try:
            while True:
                data = await self.reader.read(65536)
                if not data:
                    break
                for item in self.decoder.feed(data):
                    if isinstance(item, FrameProblem):
                        log.warning("event=bad_server_data reason=%s", item.reason)
                        continue
                    self._route(item)
        finally:
            for s in self.sessions.values():
                s.inbox.put_nowait({"type": "_closed"})
            for f in self._responses:
                if not f.done():
                    f.set_exception(ConnectionError("connection closed"))
            if not self._connected.done():
                self._connected.set_exception(ConnectionError("connection closed"))

    def _route(self, msg: dict[str, Any]) -> None:
        t = msg.get("type")
        if t == "connection_response":
            if not self._connected.done():
                self._connected.set_result(msg)
            return
        if t in ("game_session_response", "resume_session_response"):
            queue = self._responses if t == "game_session_response" else self._resumes
            if queue:
                fut = queue.popleft()
                # register the session now: its start_game may be in the same read
                if msg.get("status") == "success" and isinstance(msg.get("session_id"), int):
                    new = _Session(self, msg["session_id"], int(msg.get("seq_num", 1)) + 1)
                    self.sessions[new.id] = new
                    if isinstance(msg.get("session_secret"), str):
                        self.session_secrets[new.id] = msg["session_secret"]
                    msg = dict(msg, _session=new)
                if not fut.done():
                    fut.set_result(msg)
            return
        sid = msg.get("session_id")
        if t == "error" and msg.get("about") == "resume_session" and self._resumes:
            self.errors.append(str(msg.get("reason")))
            self._resumes.popleft().set_result(msg)
            return
        s = self.sessions.get(sid) if isinstance(sid, int) else None
        if s is None and t == "error":
            self.errors.append(str(msg.get("reason")))  # about the connection, not a session
        if s is None:
            log.warning("event=unrouted type=%s session=%s reason=%s", t, sid, msg.get("reason"))
            return
        s.inbox.put_nowait(msg)

    async def open_session(
        self, tag: str, game_type: str = "any", lobby_code: str | None = None, kind: str = "bot"
    ) -> _Session:
        req: dict[str, Any] = {
            "type": "game_session_request",
            "player_tag": tag,
            "game_type": game_type,
            "seq_num": 0,
            "player_kind": kind,
        }
        if lobby_code is not None:
            req["lobby_code"] = lobby_code
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._responses.append(fut)
        self._write(req)
        resp = await fut
        if resp.get("status") != "success":
            raise ProtocolError(f"session refused: {resp.get('reason', resp)}")
        s: _Session = resp["_session"]
        return s

    async def resume(self, session_id: int, player: Player, secret: str | None = None) -> GameResult:
        """Take back session ``session_id`` (after a server restart or a lost connection) and
        play its game to the end; the history is replayed to the player's knowledge first.
        ``secret``: the session's ``session_secret``; by default the one this client was given
        when it opened the session (see :attr:`session_secrets`)."""
        secret = secret if secret is not None else self.session_secrets.get(session_id)
        if secret is None:
            raise ProtocolError(
                f"cannot resume session {session_id}: its session_secret is unknown here "
                "(pass secret=..., from the session_secrets of the client that opened it)"
            )
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._resumes.append(fut)
        self._write({"type": "resume_session", "session_id": session_id, "session_secret": secret, "seq_num": 0})
        resp = await fut
        if resp.get("status") != "success":
            raise ProtocolError(f"cannot resume session {session_id}: {resp.get('reason', resp)}")
        s: _Session = resp["_session"]
        self.session_secrets[s.id] = secret
        return await self._run(s, player)

    async def _run(self, s: _Session, player: Player) -> GameResult:
        try:
            result = await s.run(player)
        finally:
            self.sessions.pop(s.id, None)
        self.session_secrets.pop(s.id, None)  # the game is over: nothing left to resume
        return result

    async def play(self, player: Player, game_type: str = "any", lobby_code: str | None = None) -> GameResult:
        """One game in a new session."""
        s = await self.open_session(player.name, game_type, lobby_code, player.kind)
        return await self._run(s, player)

    async def play_games(
        self,
        make_player: Any,
        sessions: int = 4,
        games: int = 1,
        game_type: str = "any",
        lobby_code: str | None = None,
    ) -> list[GameResult]:
        """``games`` games, at most ``sessions`` at a time on this connection."""
        results: list[GameResult] = []
        todo = iter(range(games))

        async def worker() -> None:
            for _ in todo:
                results.append(await self.play(make_player(), game_type, lobby_code))

        await asyncio.gather(*(worker() for _ in range(max(1, sessions))))
        return results


__all__ = ["BotPlayer", "Client", "GameResult", "Player", "ProtocolError", "RandomPlayer", "SessionLost", "View"]
