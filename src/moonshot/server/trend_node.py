"""``moonshot trend-node``: the Trend Hearts game node. One node, one table, one port.

The node serves, on one port (Starlette under uvicorn):

* ``/`` over HTTP: the seat page. Each of the four seats (``playerNumber`` 1-4) is **Dummy** (a
  moonshot bot, ``player1``..``player4``), **Human** (a person in the browser) or **Empty** (an
  AI joins it with that ``playerNumber``); *Start Game* applies the settings. ``/api/state`` and
  ``/api/seats`` are what the page reads and posts.
* ``/`` as a WebSocket: the Trend protocol (:mod:`moonshot.protocols.trend.codec`).

A match is the same four players playing 4 games at rotating positions (player ``n`` sits in
chair ``(n - 1 + game) % 4``), each game one moonshot :class:`~moonshot.runtime.table.Table` of
the ``trend`` variant (4 deals: pass left, right, across, none). The match starts when every seat
is filled. Between games the node waits for the players to re-join (SDK bots close and re-join
after every ``game_end``), at most ``rejoin_wait`` seconds; a player still missing then is played
by a bot (``status`` 1) until it joins again with the same number and token. After the match,
``auto_cycle > 0`` starts the next one when four are seated again; with 0 the node refuses joins
but keeps those sockets open and idle: SDK bots reconnect at once, recursively, on a close.

A **Human** seat is played in the web app's table page (``/game#<id>``, the same page and the
same Turbo game routes as ``moonshot serve``'s HTTP side): the node is a
:class:`~moonshot.http.games.GameHost` for its one table. A person picks a name, takes
the seat from the seat page (``POST /api/human``), and plays with no deadline (the seed's 1 s per
card is for programs), or under the table's clock with ``human_clock``. Every game of the node
can also be watched there.

Trust: with ``tokens`` (playerNumber -> token) a join with a wrong token is refused and its socket
closed; without, the first join of a number in a match binds its token, and only that token takes
the seat back. Tokens are compared with :func:`hmac.compare_digest`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import html
import json
import logging
import random
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket

from moonshot.bots.levels import LEVELS
from moonshot.bots.registry import UnknownBot, check_bot_name, make_bot
from moonshot.core.engine import Phase
from moonshot.core.events import CardPlayed, DealEnded, Event, Exposed, PassReceived, TrickEnded
from moonshot.core.refusals import Reason
from moonshot.core.variants import TREND
from moonshot.http.api import variant_info
from moonshot.http.endpoints import endpoint, error, read_body
from moonshot.http.games import HostedGame, game_routes
from moonshot.http.identity import Caller, Identity
from moonshot.http.origin import OriginGuard
from moonshot.http.proxies import UVICORN_NO_PROXY_HEADERS, ForwardedClient, websocket_scheme
from moonshot.http.streams import GameStream
from moonshot.http.webapp import STATIC_DIR as WEB_STATIC
from moonshot.protocols.trend import codec as tc
from moonshot.protocols.trend.seat import Peer, TrendSeat
from moonshot.protocols.turbo.codec import Player, RequestError, TurboTranslator
from moonshot.protocols.turbo.seat import TurboSeat
from moonshot.runtime.clients import Proxies
from moonshot.runtime.ratelimit import AttemptLimiter
from moonshot.runtime.table import (
    BotSeat,
    OnBadAnswer,
    OnDisconnect,
    Seat,
    Table,
    TablePolicy,
    TableStatus,
)

log = logging.getLogger("moonshot.trend")

STATIC = Path(__file__).parent / "trend_static"  # the seat page
GAMES_PER_MATCH = 4
SEAT_KINDS = ("empty", "dummy", "human")
# the bots the seat page offers for a Dummy. The seed's Dummy is "a simple bot": the page offers
# that (heuristic, the default), a weaker and a stronger one; ``--seats dummy:BOT`` (and the API)
# take any of moonshot's bots, and a seat set so is offered too
DUMMY_BOTS = ("random", "heuristic", "search")
# and the levels (moonshot.bots.levels), by key: level:1 ... (a level is any dummy's bot too)
DUMMY_LEVELS = tuple(lv.key for lv in LEVELS)
# how the watch stream's ``sit`` names an AI that joined over the WebSocket: a player of the Trend
# protocol (the name ``moonshot serve`` gives a remote player at a mixed table, its protocol)
REMOTE_ALGORITHM = TrendSeat.protocol
# what the web app's pages may link to on the node (see http/static/js/common.js ``site()``)
NODE_SITE = html.escape(
    json.dumps({"home": "/", "homeText": "the seats", "nav": [["/", "Seats", "seats"]], "replay": False}),
    quote=True,
)


@dataclass
class SeatSetting:
    kind: str = "empty"  # empty | dummy | human
    bot: str = "heuristic"  # which moonshot bot a dummy is

    def describe(self) -> str:
        return f"dummy:{self.bot}" if self.kind == "dummy" else self.kind


def parse_seats(text: str, default_bot: str = "heuristic") -> list[SeatSetting]:
    """``empty,dummy,human,empty`` (a dummy may name its bot: ``dummy:search``)."""
    parts = [p.strip().lower() for p in text.split(",")]
    if len(parts) != 4:
        raise ValueError(f"--seats needs four comma-separated seats (empty, dummy[:BOT], human), got {text!r}")
    out = []
    for p in parts:
        kind, _, bot = p.partition(":")
        if kind not in SEAT_KINDS:
            raise ValueError(f"unknown seat {p!r}: use empty, dummy, dummy:BOT or human")
        if bot and kind != "dummy":
            raise ValueError(f"only a dummy seat names a bot, got {p!r}")
        bot = check_bot_name(bot or default_bot)  # UnknownBot is a ValueError
        out.append(SeatSetting(kind, bot))
    return out


def load_tokens(path: str | Path) -> dict[int, str]:
    """A tokens file: one ``playerNumber token`` (or ``playerNumber=token``) a line; ``#`` comments."""
    out: dict[int, str] = {}
    for n, raw in enumerate(Path(path).read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        number, sep, token = line.replace("=", " ").partition(" ")
        token = token.strip()
        if not sep or not number.isdigit() or not 1 <= int(number) <= 4 or not token:
            raise ValueError(f"{path}:{n}: expected 'PLAYER_NUMBER TOKEN' (1-4), got {raw!r}")
        out[int(number)] = token
    return out


@dataclass
class NodeConfig:
    host: str = "127.0.0.1"
    port: int = tc.DEFAULT_PORT
    pass_timeout: float = 3.0  # seconds (the CLI takes milliseconds, as the seed's node does)
    expose_timeout: float = 3.0
    pick_timeout: float = 1.0
    round_interval: float = 2.0
    deal_interval: float = 2.0
    command_interval: float = 0.5
    auto_cycle: int = 0
    tokens: dict[int, str] | None = None
    seats: list[SeatSetting] = field(default_factory=lambda: [SeatSetting() for _ in range(4)])
    seed: int | None = None
    rejoin_wait: float = 5.0  # seconds between games the node waits for players to re-join
    rejoin_settle: float = 1.0  # seconds before a player that kept its socket counts as back
    substitute: str = "heuristic"  # plays the chair of a player who is away
    # a person's clock at a Human seat (moonshot.runtime.clock): seconds a decision, then the
    # substitute plays for them; None: a person has no deadline (the AIs keep the seed's timeouts)
    human_clock: float | None = None
    flood_rate: float = 200.0  # frames a second a client may send; more are ignored
    max_queue: int = 5000
    allowed_origins: tuple[str, ...] = ()  # pages of these origins may POST too (moonshot.http.origin)
    # proxies (CIDRs) whose forwarded addresses are believed (moonshot.runtime.clients); none by default
    trusted_proxies: tuple[str, ...] = ()


def pacing(cfg: NodeConfig) -> Callable[[Sequence[Event]], float]:
    """The seed's intervals as a table pause: after a card (command), a round, a deal."""

    def pause(events: Sequence[Event]) -> float:
        wait = 0.0
        for e in events:
            if isinstance(e, DealEnded):
                wait = max(wait, cfg.deal_interval)
            elif isinstance(e, TrickEnded):
                wait = max(wait, cfg.round_interval)
            elif isinstance(e, CardPlayed | PassReceived | Exposed):
                wait = max(wait, cfg.command_interval)
        return wait

    return pause


@dataclass(eq=False)
class Contestant:
    """An AI that joined an Empty seat: its number as sent, its name, its bound token, its socket."""

    number: int
    info: tc.PlayerInfo
    token: str
    peer: Peer | None = None
    seat: TrendSeat | None = None
    rejoined: bool = True  # joined again since the last game ended


class HumanSeat(TurboSeat):
    """A person at a Human seat: plays through the game routes, never a random card; timed only
    by the table's clock (``NodeConfig.human_clock``), when there is one."""

    patient = True


DUMMY_NAMES = {f"player{n}" for n in range(1, 5)}


class TrendNode:
    """The one table of a node and the match played at it (and a GameHost for its web page)."""

    def __init__(self, config: NodeConfig) -> None:
        self.config = config
        self.settings = [SeatSetting(s.kind, s.bot) for s in config.seats]
        self.contestants: dict[int, Contestant] = {}
        self.humans: dict[int, Seat] = {}  # Human seats taken by a browser (see attach_human)
        self.idle: set[Peer] = set()  # sockets the node keeps open but does not seat
        self.peers: set[Peer] = set()
        self.state = "waiting"  # waiting | playing | between | over
        self.match = 1
        self.game_index = 0
        self.table: Table | None = None
        self.chair_of: list[int] = [0, 1, 2, 3]  # player slot -> chair in the current game
        self.results: list[dict[str, Any]] = []  # finished games of this match
        self.games_played = 0
        self.rng = random.Random(config.seed)
        self._wake = asyncio.Event()
        self._next: asyncio.Task[None] | None = None
        self.port = config.port
        self._identity = Identity(secrets.token_urlsafe(32), open_names=False, held=self._holds)
        self.streams: dict[str, GameStream] = {}  # recent games' web streams, by game id
        self.hosted: dict[str, HostedGame] = {}
        self.game_id: str | None = None
        self._run_id = secrets.token_hex(3)  # game ids differ between runs of the node
        self.rejoins = AttemptLimiter()  # wrong tokens per seat and per address

    # ------------------------------------------------------------ GameHost (the web table page)
    @property
    def identity(self) -> Identity:
        return self._identity

    def find_stream(self, game_id: str) -> GameStream | None:
        return self.streams.get(game_id)

    def find_game(self, game_id: str) -> HostedGame | None:
        return self.hosted.get(game_id)

    def _holds(self, name: str) -> bool:
        return any(h.name == name for h in self.humans.values())

    # ------------------------------------------------------------ settings (the seat page)
    def apply_settings(self, settings: list[SeatSetting]) -> str | None:
        """Start Game: new seat settings; refused while a match is on (returns why)."""
        if self.state in ("playing", "between"):
            return Reason("a match is being played; the seats can change when it is over", "trend_seats_locked")
        self.settings = settings
        for n in list(self.contestants):
            if settings[n - 1].kind != "empty":
                c = self.contestants.pop(n)
                if c.peer is not None:
                    self.idle.add(c.peer)
        self.humans = {n: s for n, s in self.humans.items() if settings[n - 1].kind == "human"}
        if self.state == "over":
            self._new_match()
        log.info("event=seats seats=%s", ",".join(s.describe() for s in settings))
        self._broadcast_peers()
        self._maybe_start()
        return None

    def _new_match(self) -> None:
        self.state = "waiting"
        self.match += 1
        self.game_index = 0
        self.results = []
        # a new match binds tokens afresh; players still connected keep their seats
        for n, c in list(self.contestants.items()):
            if c.peer is None or c.peer.closed:
                del self.contestants[n]

    # ------------------------------------------------------------ sockets
    async def serve_socket(self, ws: WebSocket) -> None:
        await ws.accept()
        peer = Peer(ws, max_queue=self.config.max_queue, flood_rate=self.config.flood_rate)
        self.peers.add(peer)
        peer.on_message = lambda m: self._on_message(peer, m)
        log.info("event=connected peer=%s", peer.addr)
        try:
            await peer.run()
        finally:
            self.peers.discard(peer)
            self.idle.discard(peer)
            self._gone(peer)
            log.info("event=disconnected peer=%s ignored=%d dropped=%d", peer.addr, peer.ignored, peer.dropped)

    def _on_message(self, peer: Peer, msg: tc.ClientEvent) -> None:
        if isinstance(msg, tc.Join):
            self.join(peer, msg)
            return
        if isinstance(msg, tc.StopGame):
            return
        c = self._contestant_of(peer)
        if c is None or c.seat is None:
            peer.dropped += 1
            log.info("event=reply_dropped peer=%s reason=not_seated", peer.addr)
            return
        c.seat.reply(msg)

    def _contestant_of(self, peer: Peer) -> Contestant | None:
        for c in self.contestants.values():
            if c.peer is peer:
                return c
        return None

    def _refuse(self, peer: Peer, message: str, close: bool = False) -> None:
        log.info("event=join_refused peer=%s reason=%r closed=%s", peer.addr, message, close)
        peer.send(tc.error_frame(message))
        if close:
            peer.close(1008, message)
        else:
            self.idle.add(peer)

    def join(self, peer: Peer, j: tc.Join) -> None:
        n = j.number
        # wrong tokens are counted per seat and per address: past the limit the seat (or the
        # address) is refused for a while whatever the token, so no token is searched online
        keys = (("seat", n), ("address", peer.ip))  # the real client's share behind a trusted proxy
        now = time.monotonic()
        if self.rejoins.blocked(now, *keys):
            self._refuse(peer, f"too many wrong tokens for playerNumber {n}: try again later", close=True)
            return
        tokens = self.config.tokens
        if tokens is not None:
            expected = tokens.get(n)
            if expected is None or not hmac.compare_digest(j.token.encode(), expected.encode()):
                self.rejoins.failed(now, *keys)
                self._refuse(peer, f"wrong token for playerNumber {n}: join refused", close=True)
                return
        setting = self.settings[n - 1]
        if setting.kind != "empty":
            self._refuse(peer, f"seat {n} is a {setting.kind} seat; AIs join the Empty seats")
            return
        if self.state == "over":
            self._refuse(peer, "the match is over and --auto-cycle is 0: no more games on this node")
            return
        c = self.contestants.get(n)
        if c is not None and not hmac.compare_digest(j.token.encode(), c.token.encode()):
            taken = c.peer is not None and not c.peer.closed
            if taken or self.state != "waiting":
                self.rejoins.failed(now, *keys)
                self._refuse(peer, f"seat {n} belongs to another player (token differs)")
                return
            c = None  # before the match, an abandoned seat goes to whoever joins it
        self.idle.discard(peer)
        if c is None:
            c = Contestant(n, tc.PlayerInfo(j.raw_number, j.name), j.token, peer)
            self.contestants[n] = c
        else:
            old = c.peer
            c.peer = peer
            c.info = tc.PlayerInfo(j.raw_number, c.info.name if self.state != "waiting" else j.name)
            if old is not None and old is not peer:
                self.idle.add(old)  # superseded (the client reconnected before its close arrived)
        c.rejoined = True
        log.info("event=joined peer=%s number=%d name=%s state=%s", peer.addr, n, j.name, self.state)
        if self.state == "playing" and self.table is not None:
            self._seat_in_game(c)
        else:
            self._broadcast_peers()
            self._maybe_start()
        self._wake.set()

    def _gone(self, peer: Peer) -> None:
        c = self._contestant_of(peer)
        if c is None:
            return
        c.peer = None
        if c.seat is not None and self.table is not None:
            self.table.detach(c.seat.chair, c.seat, "disconnected")
        c.seat = None
        if self.state == "waiting":
            self._broadcast_peers()

    # ------------------------------------------------------------ players and chairs
    def _infos(self) -> list[tc.PlayerInfo | None]:
        """Who sits in each chair (N, E, S, W) of the current or next game; None: nobody yet."""
        out: list[tc.PlayerInfo | None] = [None] * 4
        for slot in range(4):
            n = slot + 1
            chair = (slot + self.game_index) % 4
            kind = self.settings[slot].kind
            if kind == "dummy":
                out[chair] = tc.PlayerInfo(n, f"player{n}")
            elif kind == "human":
                h = self.humans.get(n)
                if h is not None:
                    out[chair] = tc.PlayerInfo(n, h.name)
            else:
                c = self.contestants.get(n)
                if c is not None and c.peer is not None:
                    out[chair] = c.info
        return out

    def _broadcast_peers(self, only: Sequence[Contestant] | None = None) -> None:
        """``new_peer`` to the contestants (``only``: to these). After a ``game_end`` a socket
        is the next game's only once its player joined on it again (SDK bots close and re-join;
        until their close arrives, the old socket still looks open) or kept it past
        ``rejoin_settle``: a ``new_peer`` for the next game never goes to the old one."""
        msg = tc.new_peer(self._infos())
        for c in self.contestants.values() if only is None else only:
            if c.peer is not None and c.rejoined:
                c.peer.send(msg)

    def _ready(self) -> bool:
        for slot, s in enumerate(self.settings):
            n = slot + 1
            if s.kind == "empty":
                c = self.contestants.get(n)
                if c is None or c.peer is None or c.peer.closed:
                    return False
            elif s.kind == "human" and n not in self.humans:
                return False
        return True

    def _maybe_start(self) -> None:
        if self.state == "waiting" and self._next is not None and not self._next.done():
            return  # the next match starts from _next_game, once the players are back
        if self.state == "waiting" and self._ready():
            self._start_game()

    def policy(self) -> TablePolicy:
        cfg = self.config
        return TablePolicy(
            decision_timeout=cfg.pick_timeout,
            on_timeout=OnBadAnswer.RANDOM,
            on_illegal=OnBadAnswer.RANDOM,
            on_disconnect=OnDisconnect.BOT,
            reconnect_grace=0.0,
            substitute=lambda: make_bot(cfg.substitute),
            phase_timeouts=(
                (Phase.PASS, cfg.pass_timeout),
                (Phase.EXPOSE, cfg.expose_timeout),
                (Phase.PLAY, cfg.pick_timeout),
            ),
            pause_after=pacing(cfg),
            clock=cfg.human_clock,
        )

    def _start_game(self) -> None:
        k = self.game_index
        infos: list[tc.PlayerInfo] = []
        by_chair: list[tuple[int, str]] = [(0, "")] * 4
        for slot in range(4):
            by_chair[(slot + k) % 4] = (slot, self.settings[slot].kind)
        self.chair_of = [(slot + k) % 4 for slot in range(4)]
        names = self._infos()
        for chair in range(4):
            slot = by_chair[chair][0]
            info = names[chair]
            if info is None:  # an absent contestant: it keeps its name, a bot plays for it
                c = self.contestants.get(slot + 1)
                info = c.info if c is not None else tc.PlayerInfo(slot + 1, f"player{slot + 1}")
            infos.append(info)
        seats: list[Seat | None] = []
        for chair in range(4):
            slot, kind = by_chair[chair]
            n = slot + 1
            if kind == "dummy":
                bot = self._dummy(self.settings[slot].bot)
                seats.append(BotSeat(bot, random.Random(self.rng.getrandbits(32)), name=f"player{n}"))
            elif kind == "human":
                seats.append(self.humans.get(n))
            else:
                c = self.contestants.get(n)
                if c is not None and c.peer is not None and not c.peer.closed:
                    c.seat = TrendSeat(c.peer, chair, infos, self._seat_closed)
                    seats.append(c.seat)
                else:
                    seats.append(None)
        # a fixed --seed makes the node's games reproducible (tests); else each is dealt by a secret one
        seed = self.rng.getrandbits(62) if self.config.seed is not None else secrets.randbits(62)
        self.table = Table(
            TREND,
            seats,
            seed=seed,
            policy=self.policy(),
            names=[i.name for i in infos],
            meta={"protocol": "trend", "match": self.match, "game": k + 1},
        )
        self.state = "playing"
        self.infos = infos
        self._host_web(self.table, seed, infos, [by_chair[c] for c in range(4)])
        log.info(
            "event=game_started match=%d game=%d table=%s players=%s",
            self.match,
            k + 1,
            self.table.id,
            [i.name for i in infos],
        )
        self.table.start()
        self.table.done.add_done_callback(self._game_done)

    def _host_web(self, table: Table, seed: int, infos: list[tc.PlayerInfo], seats: list[tuple[int, str]]) -> None:
        """The game's Turbo stream, for the Human seat's table page and anyone watching. Who
        sits where, as ``sit`` tells it: a person, a dummy as the bot it is, and an AI that joined
        an Empty seat as a remote player of the Trend protocol (as ``moonshot serve`` shows a
        player from another protocol at a mixed table)."""
        game_id = f"trend-{self._run_id}-{self.match}-{self.game_index + 1}"
        players = []
        for (slot, kind), info in zip(seats, infos, strict=True):
            if kind == "human":
                players.append(Player(info.name, "human"))
            elif kind == "dummy":
                players.append(Player(info.name, "bot", self.settings[slot].bot))
            else:
                players.append(Player(info.name, "bot", REMOTE_ALGORITHM))
        stream = GameStream(game_id)
        stream.start(TurboTranslator(TREND, seed, players))
        table.watch(stream)
        self.game_id = game_id
        self.streams[game_id] = stream
        self.hosted[game_id] = HostedGame(game_id, table, players, stream)
        for old in list(self.streams)[:-8]:  # keep the last few games for late viewers
            self.streams.pop(old, None)
            self.hosted.pop(old, None)

    def _dummy(self, name: str) -> Any:
        try:
            return make_bot(name)
        except UnknownBot:
            log.warning("event=bot_unavailable bot=%s using=random", name)
            return make_bot("random")

    def _seat_in_game(self, c: Contestant) -> None:
        """A contestant (re)joins during a game: it takes its chair back from the substitute."""
        assert self.table is not None and c.peer is not None
        slot = c.number - 1
        chair = self.chair_of[slot]
        if c.seat is not None and c.seat.peer is c.peer:
            return
        seat = TrendSeat(c.peer, chair, self.infos, self._seat_closed)
        seat.catching_up = True
        c.seat = seat
        self.table.attach(chair, seat, replay=True)

    def _seat_closed(self, seat: TrendSeat, reason: str) -> None:
        for c in self.contestants.values():
            if c.seat is seat:
                c.seat = None

    def _game_done(self, fut: asyncio.Future[TableStatus]) -> None:
        table = self.table
        assert table is not None
        status = table.status
        for c in self.contestants.values():
            c.seat = None
            c.rejoined = False
        self.games_played += 1
        if status is TableStatus.FINISHED:
            g = table.game
            self.results.append(
                {
                    "game": self.game_index + 1,
                    "players": [i.name for i in self.infos],
                    "scores": list(g.totals),
                    "winners": [self.infos[s].name for s in g.winners],
                }
            )
        log.info("event=game_over match=%d game=%d status=%s", self.match, self.game_index + 1, status.value)
        if status is not TableStatus.FINISHED:
            self.state = "over"
            return
        self.game_index += 1
        if self.game_index < GAMES_PER_MATCH:
            self.state = "between"
            self._next = asyncio.get_running_loop().create_task(self._next_game())
            return
        log.info("event=match_over match=%d", self.match)
        if self.config.auto_cycle > 0:
            self._new_match()
            self._next = asyncio.get_running_loop().create_task(self._next_game())
        else:
            self.state = "over"

    async def _next_game(self) -> None:
        """After a deal interval, wait for the players to re-join, then start the next game.

        SDK bots close and re-join after every ``game_end``; their old socket may not look closed
        yet, so a player counts as back once it joined again, or after ``rejoin_settle`` seconds
        if it kept its socket. After ``rejoin_wait`` the game starts anyway: a bot plays for
        whoever is still away until it joins again."""
        await asyncio.sleep(self.config.deal_interval)
        loop = asyncio.get_running_loop()
        start = loop.time()
        until = start + self.config.rejoin_wait
        kept_told = False
        while loop.time() < until:
            fresh = all(c.rejoined for c in self.contestants.values())
            settled = loop.time() >= start + self.config.rejoin_settle
            if settled and not kept_told:
                # a player still on its socket after the settle kept it: it is the next game's
                kept_told = True
                kept = [
                    c for c in self.contestants.values() if not c.rejoined and c.peer is not None and not c.peer.closed
                ]
                for c in kept:
                    c.rejoined = True
                self._broadcast_peers(kept)
            if self._ready() and (fresh or settled):
                break
            self._wake.clear()
            step = until - loop.time() if settled else min(until, start + self.config.rejoin_settle) - loop.time()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), max(step, 0.001))
        if self.state == "between":
            self._start_game()
        elif self.state == "waiting":  # a new match (--auto-cycle): it needs everyone seated
            self._broadcast_peers()
            if self._ready():
                self._start_game()

    # ------------------------------------------------------------ Human seats
    def attach_human(self, number: int, seat: Seat) -> str | None:
        """A browser takes Human seat ``number`` (returns why not)."""
        if not 1 <= number <= 4 or self.settings[number - 1].kind != "human":
            return Reason(f"seat {number} is not a Human seat", "trend_not_human_seat", {"n": number})
        if seat.name in DUMMY_NAMES:
            return Reason(f"{seat.name} is a dummy's name: pick another", "trend_dummy_name", {"name": seat.name})
        held = self.humans.get(number)
        if held is not None and held.name != seat.name:
            return Reason(
                f"seat {number} is taken by {held.name}", "trend_seat_taken", {"n": number, "name": held.name}
            )
        for n, other in self.humans.items():
            if n != number and other.name == seat.name:
                return Reason(
                    f"{seat.name} already sits at seat {n}", "trend_already_seated", {"name": seat.name, "n": n}
                )
        if held is not None:
            return None  # the same person again: nothing changes
        if self.state in ("playing", "between"):
            return Reason("a match is being played; sit down when it is over", "trend_match_on")
        self.humans[number] = seat
        if self.state == "playing" and self.table is not None:
            self.table.attach(self.chair_of[number - 1], seat, replay=True)
        else:
            self._broadcast_peers()
            self._maybe_start()
        self._wake.set()
        return None

    # ------------------------------------------------------------ the page's view
    def describe(self, websocket: str | None = None) -> dict[str, Any]:
        """The page's view; ``websocket``: the URL the page's reader reaches the node's WebSocket
        at (``wss://`` behind a TLS proxy), else the node's own address."""
        infos = self._infos()
        seats = []
        for slot, s in enumerate(self.settings):
            n = slot + 1
            c = self.contestants.get(n)
            chair = (slot + self.game_index) % 4
            seats.append(
                {
                    "playerNumber": n,
                    "kind": s.kind,
                    "bot": s.bot,
                    "player": infos[chair].name if infos[chair] is not None else None,  # type: ignore[union-attr]
                    "connected": bool(c and c.peer and not c.peer.closed) if s.kind == "empty" else True,
                    "chair": "NESW"[chair],
                }
            )
            if s.kind == "human":
                playing = self.game_id is not None and self.state == "playing"
                seats[-1]["table"] = f"/game#{self.game_id}" if playing and n in self.humans else None
                seats[-1]["join"] = None if n in self.humans else f"#sit-{n}"
        scores = None
        if self.table is not None and self.state == "playing":
            scores = list(self.table.game.totals)
        offered = (*DUMMY_BOTS, *DUMMY_LEVELS)
        return {
            "state": self.state,
            "match": self.match,
            "game": min(self.game_index + 1, GAMES_PER_MATCH),
            "gamesPerMatch": GAMES_PER_MATCH,
            "seats": seats,
            "bots": [*offered, *sorted({s.bot for s in self.settings} - set(offered))],
            "levels": [lv.to_json() for lv in LEVELS],  # the page shows a level's name and rating
            "scores": scores,
            "results": self.results,
            "websocket": websocket or f"ws://{self.config.host}:{self.port}/",
            "watch": f"/game#{self.game_id}" if self.game_id is not None else None,
            "autoCycle": self.config.auto_cycle,
        }

    async def close(self) -> None:
        if self._next is not None:
            self._next.cancel()
        if self.table is not None and not self.table.done.done():
            self.table.stop("node shutting down")
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self.table.done), 5)
        for p in list(self.peers):
            p.close(1001, "node shutting down")


def refusal_code(why: str) -> tuple[str | None, dict[str, Any] | None]:
    """A node's refusal (a :class:`Reason` from ``apply_settings``/``attach_human``) as the HTTP
    error's ``code`` and ``args`` (the catalogue's ``error.<code>``); none for plain text."""
    return (why.code, why.params) if isinstance(why, Reason) else (None, None)


def refusal_body(why: str) -> dict[str, Any]:
    code, args = refusal_code(why)
    return {"code": code, "args": args or {}} if code else {}


def seat_settings(raw: Any) -> list[SeatSetting]:
    """``POST /api/seats``'s ``seats``: four ``{kind, bot}``, else a 400 with the refusal's code
    and args (the catalogue's ``error.<code>``) beside the English."""
    if not isinstance(raw, list) or len(raw) != 4:
        raise RequestError(400, "seats must be a list of four {kind, bot}", "trend_seats_four")
    settings = []
    for n, s in enumerate(raw, 1):
        if not isinstance(s, dict):
            raise RequestError(400, f"seat {n} is not {{kind, bot}}", "trend_seat_not_object", {"n": n})
        kind, bot = str(s.get("kind", "")), str(s.get("bot", "heuristic"))
        if kind not in SEAT_KINDS:
            raise RequestError(
                400,
                f"unknown seat kind {kind!r} (empty, dummy, human)",
                "trend_unknown_seat_kind",
                {"n": n, "kind": kind[:40]},
            )
        try:
            check_bot_name(bot)  # a registry name or a level (level:3)
        except UnknownBot as e:
            raise RequestError(400, str(e), "unknown_bot", {"bot": bot[:40]}) from None
        settings.append(SeatSetting(kind, bot))
    return settings


def node_app(node: TrendNode, extra_routes: Sequence[Any] = ()) -> Starlette:
    """The node's one-port app: the seat page and the Trend WebSocket, both at ``/``."""

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html")

    def websocket_link(request: Request) -> str | None:
        """The WebSocket at the host and scheme the page was reached by (wss:// behind a TLS proxy)."""
        host = request.headers.get("host")
        return f"{websocket_scheme(request.scope)}://{host}/" if host else None

    async def state(request: Request) -> Response:
        return JSONResponse(node.describe(websocket_link(request)))

    async def seats(request: Request) -> Response:
        try:
            body = await read_body(request)  # at most 64 KB, a JSON object
            settings = seat_settings(body.get("seats"))
        except RequestError as e:
            # the English, and the code and args the seat page says in its language (error.*)
            return error(e.status, str(e), e.code, e.params)
        why = node.apply_settings(settings)
        if why is not None:
            # the refusal's code and args: the seat page says it in its language (trend.* / error.*)
            return JSONResponse(
                {"error": why, **refusal_body(why), **node.describe(websocket_link(request))}, status_code=409
            )
        return JSONResponse(node.describe(websocket_link(request)))

    def identity() -> Identity:
        return node.identity

    async def human(request: Request, caller: Caller) -> Any:
        """A person takes a Human seat: ``{"playerNumber": N}``, named by the ``name`` cookie."""
        body = await read_body(request)
        number = body.get("playerNumber")
        if not isinstance(number, int) or isinstance(number, bool):
            raise RequestError(400, "playerNumber must be 1, 2, 3 or 4", "trend_bad_player_number")
        why = node.attach_human(number, HumanSeat(caller.name))
        if why is not None:
            raise RequestError(409, why, *refusal_code(why))
        return node.describe(websocket_link(request))

    async def me(request: Request, caller: Caller) -> Any:
        return {"name": caller.name}

    async def variants(request: Request, caller: Caller) -> Any:
        return variant_info()

    # the web app's table page, told what this server has (common.js ``site()``): the seat page
    # and nothing else, no lobby, history, tournaments or leaderboard, and no replays
    game_html = (
        (WEB_STATIC / "game.html")
        .read_text(encoding="utf-8")
        .replace(
            '<meta charset="utf-8">', f'<meta charset="utf-8">\n  <meta name="moonshot-site" content="{NODE_SITE}">', 1
        )
    )

    async def game_page(request: Request) -> Response:
        return HTMLResponse(game_html, headers={"Cache-Control": "no-cache"})

    async def to_seats(request: Request) -> Response:
        return RedirectResponse("/", status_code=307)

    routes = [
        Route("/", page),
        WebSocketRoute("/", node.serve_socket),
        Route("/api/state", state),
        Route("/api/seats", seats, methods=["POST"]),
        Route("/api/human", endpoint(human, identity), methods=["POST"]),
        Route("/api/me", endpoint(me, identity), methods=["GET"]),
        Route("/api/variants", endpoint(variants, identity, anonymous=True), methods=["GET"]),
        Route("/game", game_page, methods=["GET"]),
        Route("/lobby", to_seats, methods=["GET"]),
        Route("/history", to_seats, methods=["GET"]),
        *game_routes(node),
        *extra_routes,
        Mount("/static/trend", StaticFiles(directory=STATIC), name="trend-static"),
        Mount("/static", StaticFiles(directory=WEB_STATIC, check_dir=False), name="static"),
    ]
    return Starlette(
        routes=routes,
        middleware=[
            # outermost: the real client and scheme behind a trusted proxy, before anything reads them
            Middleware(ForwardedClient, proxies=Proxies(node.config.trusted_proxies)),
            Middleware(OriginGuard, allowed=node.config.allowed_origins),
        ],
    )


class NodeServer:
    """The node's app under uvicorn in the running loop (the CLI and the tests start it so)."""

    def __init__(self, config: NodeConfig, extra_routes: Sequence[Any] = ()) -> None:
        import uvicorn

        self.node = TrendNode(config)
        self.app = node_app(self.node, extra_routes)
        self.uvicorn = uvicorn.Server(
            uvicorn.Config(
                self.app,
                host=config.host,
                port=config.port,
                log_level="warning",
                ws_max_size=tc.MAX_FRAME,  # beyond, the library closes the socket (1009)
                ws_per_message_deflate=False,  # compressing every frame cost more CPU than the frames
                lifespan="off",
                **UVICORN_NO_PROXY_HEADERS,  # ForwardedClient decides who the client is
            )
        )
        # the node's caller owns the signals (uvicorn would re-raise SIGINT after its own shutdown)
        self.uvicorn.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
        self.task: asyncio.Task[None] | None = None

    async def start(self) -> int:
        self.task = asyncio.get_running_loop().create_task(self.uvicorn.serve())
        while not self.uvicorn.started and not self.task.done():
            await asyncio.sleep(0.01)
        if self.task.done():
            self.task.result()  # the start-up error (port in use...)
            raise OSError(f"the node could not listen on {self.node.config.host}:{self.node.config.port}")
        self.node.port = int(self.uvicorn.servers[0].sockets[0].getsockname()[1])
        return self.node.port

    async def stop(self) -> None:
        await self.node.close()
        self.uvicorn.should_exit = True
        if self.task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.task, 5)


async def run_node(config: NodeConfig, announce: Callable[[str], None] = print) -> None:
    """Run the node until SIGINT/SIGTERM."""
    import signal

    server = NodeServer(config)
    port = await server.start()
    shown = "localhost" if config.host in ("127.0.0.1", "localhost") else config.host
    announce(f"Trend Hearts Poker Node is running, listening on port {port}")
    announce(f"seat page: http://{shown}:{port}/")
    announce(f"WebSocket: ws://{shown}:{port}/  (join with playerNumber 1-4)")
    announce(f"seats: {', '.join(f'{i + 1}={s.describe()}' for i, s in enumerate(server.node.settings))}")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop()


__all__ = [
    "NodeConfig",
    "NodeServer",
    "SeatSetting",
    "TrendNode",
    "load_tokens",
    "node_app",
    "pacing",
    "parse_seats",
    "run_node",
]
