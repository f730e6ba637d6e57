"""The table runtime: one asyncio task owns one game; seats and spectators talk to it by messages.

A :class:`Table` is an actor. Nothing but its own task touches its :class:`~moonshot.core.engine.Game`;
everyone else puts commands in its inbox (:meth:`Table.submit`, :meth:`Table.attach`,
:meth:`Table.detach`, :meth:`Table.watch`, :meth:`Table.stop`), so there are no locks.

A :class:`Seat` is whatever sits in a chair: a local bot (:class:`BotSeat`), a Sessions TCP
session, later a Trend WebSocket, a Turbo HTTP player, a Kierki TCP client or an RL agent. The
table pushes two things to it, both non-blocking callbacks that an adapter turns into bytes:

* ``on_events(events)``: :class:`TableEvent` s already redacted for that seat
  (``event.for_viewer(seat)``), each with its per-game ``version`` and whether the action behind
  it was chosen by the server (``forced``: a timeout, an illegal answer, a substitute bot);
* ``on_request(request)``: a :class:`DecisionRequest` (the seat's view, legal actions, a
  deadline). The answer comes back whenever it is ready through :meth:`Table.submit`, from any
  task; unsolicited actions (a Turbo claim) use ``request_id=None``.

Every request has a deadline, counted from when the request left for its player: a seat that
writes to a socket says when it did (``Seat.reports_sent``, :meth:`Table.sent`), so the time a
frame waits behind a busy loop or a full socket buffer is not taken from the player; for other
seats it counts from when the table asked. When it passes, or an answer is illegal, the table applies its
:class:`TablePolicy`: ``random`` (the server plays a random legal action, counted and reported as
forced), ``retry`` (the seat is told and asked again, Kierki's ``WRONG``), or ``pause`` (wait).
A seat that disconnects is either waited for (``pause``) or handed to a substitute bot after a
grace period (``bot``); whoever attaches to that chair later first gets the chair's view of the
whole event log replayed, then the pending request. Watchers (``watch``: the server's own game
streams) get the whole stream and redact it per viewer; a person who sits in no chair sees it as
:data:`~moonshot.core.events.SPECTATOR` does while the game runs. The game's first event carries the
commitment to its deals and its last the seed and salt that open it (:mod:`moonshot.core.fairness`).

One table's failure never reaches another: a seat callback that raises is detached; an
exception in the table's own loop is logged, the game is rebuilt from its actions (``restore``)
and play goes on, and after repeated failures the table is marked failed and its seats told.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import enum
import itertools
import json
import logging
import random
import secrets
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from moonshot.bots.base import Bot, answer_claim
from moonshot.bots.random import RandomBot
from moonshot.core.actions import AcceptClaim, Action, Claim, Pass, Play, RejectClaim
from moonshot.core.cards import card_list
from moonshot.core.engine import DealSpec, Game, IllegalAction, Phase
from moonshot.core.events import SPECTATOR, ClaimMade, Event, GameEnded, GameStarted
from moonshot.core.fairness import DealSeal, valid_salt
from moonshot.core.rules import ClaimFlow, Rules
from moonshot.core.views import SeatView, seat_view
from moonshot.runtime.clock import Countdown
from moonshot.runtime.meter import NO_METER, TableMeter

log = logging.getLogger("moonshot.table")

_table_ids = itertools.count(1)


class OnBadAnswer(enum.Enum):
    """What the table does when a decision times out or comes back illegal."""

    RANDOM = "random"  # play a random legal action for the seat, reported as forced
    RETRY = "retry"  # tell the seat (Kierki WRONG) and ask again with a fresh deadline
    PAUSE = "pause"  # keep waiting, no deadline
    BOT = "bot"  # the table's bot (``TablePolicy.substitute``) plays for the seat, reported as forced


class OnDisconnect(enum.Enum):
    PAUSE = "pause"  # the game waits for someone to take the chair again
    BOT = "bot"  # a substitute bot plays the chair after ``reconnect_grace`` seconds


class SeatKind(enum.Enum):
    HUMAN = "human"
    BOT = "bot"


@dataclass(frozen=True)
class TablePolicy:
    decision_timeout: float | None = 10.0  # seconds per decision; None = no deadline
    on_timeout: OnBadAnswer = OnBadAnswer.RANDOM
    on_illegal: OnBadAnswer = OnBadAnswer.RANDOM
    on_disconnect: OnDisconnect = OnDisconnect.BOT
    reconnect_grace: float = 0.0  # seconds a chair stays empty before its substitute bot plays
    # after this many timeouts in a row the occupant counts as gone (a silent client): None = never
    max_consecutive_timeouts: int | None = None
    substitute: Callable[[], Bot] = RandomBot
    # per-phase deadlines (Trend: pass 3 s, expose 3 s, card 1 s); a phase not named uses
    # ``decision_timeout``
    phase_timeouts: tuple[tuple[Phase, float], ...] = ()
    # pacing (Trend's intervals): seconds the table waits before its next request after an
    # action caused these events; None or 0 = no pause
    pause_after: Callable[[Sequence[Event]], float] | None = None
    # a seat that reports when its requests leave (``Seat.reports_sent``) gets its deadline from
    # that moment; a request it has not reported sent this many seconds after it would have been
    # due from when it was asked (a client that does not read) runs out then
    send_grace: float = 10.0
    # seconds a table whose remote players have all left (every chair empty, a substitute's or
    # a server bot's) waits, asking nobody, for one to come back before it ends unplayed
    # (``table_abandoned``, never rated or restored); None: the bots play on
    abandon_after: float | None = None
    # a table that waits while a chair is empty (Kierki) tells its other seats when every chair is
    # taken again (a ``resumed`` notice, cause :data:`SEATED`), in order with the seating
    tell_seated: bool = False
    # the clock (moonshot.runtime.clock): seconds a person (a ``patient`` seat) has per decision;
    # when they pass, the table's bot (``substitute``) plays for the person; None: no clock
    clock: float | None = None
    # clock timeouts in a row after which the table's bot plays the person's seat until the
    # person acts again (any action, or ``Table.back``); None: never
    clock_handover: int | None = 2

    def timeout_for(self, phase: Phase) -> float | None:
        for p, t in self.phase_timeouts:
            if p is phase:
                return t
        return self.decision_timeout


SEATED = "seated"  # a TableNotice's cause: every chair of a table that waited is taken again


@dataclass(frozen=True, slots=True)
class TableNotice:
    """Something about the table rather than the game, told to every seat and spectator
    (``Seat.on_notice``), which each protocol renders as best it can (an error or chat line).

    ``kind`` is ``paused``, ``resumed`` or ``notice`` (the operator's, ``Table.announce``);
    ``cause`` says why (``storage``: the game store cannot be written, so nothing more is
    acknowledged or asked until it can); ``text`` is for people."""

    kind: str
    cause: str
    text: str
    seconds: float = 0.0  # resumed: how long the pause lasted


@dataclass(frozen=True, slots=True)
class TableEvent:
    """One event of the game as one viewer sees it."""

    version: int  # 1-based position in the game's event log
    event: Event
    forced: bool = False  # the action behind it was chosen by the server, not the seat's owner


class DecisionRequest:
    """A decision the table waits for. ``view`` is built on first use, from the game as it was
    asked: read it in ``on_request`` (or ``act_now``), before the table moves on."""

    __slots__ = ("_game", "_view", "deadline", "legal_plays", "phase", "request_id", "seat", "table_id", "version")

    def __init__(
        self, table_id: str, seat: int, request_id: int, game: Game, deadline: float | None, eager: bool = True
    ) -> None:
        self.table_id = table_id
        self.seat = seat
        self.request_id = request_id
        self.version = game.version
        self.phase = game.phase
        self.legal_plays = game.legal_play_mask(seat)
        self.deadline = deadline
        self._game: Game | None = game
        self._view: SeatView | None = None
        if eager:
            self._view = seat_view(game, seat)
            self._game = None

    @property
    def view(self) -> SeatView:
        if self._view is None:
            assert self._game is not None
            if self._game.version != self.version:
                raise RuntimeError("the view of a request must be read before the game moves on")
            self._view = seat_view(self._game, self.seat)
            self._game = None
        return self._view

    @property
    def legal(self) -> tuple[Action, ...]:
        return self.view.legal

    def __repr__(self) -> str:
        return f"DecisionRequest(table={self.table_id}, seat={self.seat}, id={self.request_id}, v={self.version})"


class Seat(ABC):
    """A chair's occupant. Callbacks run in the table's task: they must not block or await."""

    name: str = "seat"
    kind: SeatKind = SeatKind.BOT
    # False: the seat reads only ``phase``/``legal_plays`` of a request, so the table skips
    # building the full SeatView (a protocol adapter that sends legal moves, not views)
    wants_view: bool = True
    # True: a person at a table whose policy is made for programs (Trend's 1 s per card): the
    # table sets no deadline for this seat, and after an illegal answer it waits for another
    patient: bool = False
    # True: the seat calls ``table.sent(seat, request_id)`` when a request has been written to
    # its player, and the request's deadline counts from then (else from when the table asked)
    reports_sent: bool = False
    # what a client must prove to take this chair back (a SHA-256 hex digest of the secret it was
    # given when it sat down); None: no client can (server bots, protocols without resume)
    credential: str | None = None
    # the protocol this occupant came over (mixed tables; the store's player record keeps it):
    # "server" for the server's own bots, else "sessions", "trend", "http", "kierki"
    protocol: str = "server"
    # what shows that a later join comes from the client that played this seat (a finished mixed
    # table's rematch, moonshot.http.rematch): equal keys, the same client; None: no join can
    # (a server bot, a client with no secret, a connection that closed)
    client_key: object | None = None

    @property
    def gone(self) -> bool:
        """The connection behind this seat is closed (a seat with none never is)."""
        return False

    @abstractmethod
    def on_events(self, table: Table, events: Sequence[TableEvent]) -> None: ...

    @abstractmethod
    def on_request(self, table: Table, request: DecisionRequest) -> None: ...

    def act_now(self, table: Table, request: DecisionRequest) -> Action | None:
        """A seat that can answer at once (an in-process bot) returns its action here."""
        return None

    def on_rejected(self, table: Table, request: DecisionRequest, action: Action | None, reason: str) -> None:  # noqa: B027
        """The answer was illegal or late; under ``retry`` a new request follows."""

    def on_closed(self, table: Table, reason: str) -> None:  # noqa: B027
        """The table is over (finished, stopped or failed); no more callbacks follow."""

    def on_notice(self, table: Table, notice: TableNotice) -> None:  # noqa: B027
        """The table paused or resumed (see :class:`TableNotice`); pending requests stay open."""

    def joined_mid_game(self) -> None:  # noqa: B027
        """Seated in a game restored from its actions (a tournament's, after its process
        stopped): the first events are the game so far. Protocol seats tell their client so."""

    def end_session(self, reason: str) -> None:  # noqa: B027
        """The seat is gone for good while its connection lives (a cluster process that hosted
        its game died, and no chair waits for it): tell the client why, and forget the seat."""


class Spectator(Protocol):
    def on_events(self, table: Table, events: Sequence[TableEvent]) -> None: ...


_KERNEL_LOADING: list[asyncio.Future[None]] = []  # (the one load of the rules kernel, once started)


def _load_kernel_off_loop() -> None:
    """Load the rules kernel (:func:`moonshot.kernel.warm_up`: numba's code, compiled the first time
    on a machine: about 0.5 s from its cache, 8 s without) in a worker thread, once per process.
    Bots never load it when they are made, since a server makes them on its event loop, where the
    load would stall every table; ``search`` plays its Python equivalents until it is loaded (the
    same values), ``pimc:classic``'s first move waits for it in its own worker thread."""
    if _KERNEL_LOADING:
        return
    with contextlib.suppress(RuntimeError):  # (no event loop: nothing to keep free)
        from moonshot import kernel

        loading = asyncio.get_running_loop().run_in_executor(None, kernel.warm_up)
        loading.add_done_callback(_kernel_loaded)
        _KERNEL_LOADING.append(loading)


def _kernel_loaded(loading: asyncio.Future[None]) -> None:
    """Say in the log when the load failed (`search` then plays the kernel's Python equivalents)."""
    if not loading.cancelled() and (error := loading.exception()) is not None:
        log.warning("the rules kernel did not load (%r): search plays its Python equivalents, more slowly", error)


class BotSeat(Seat):
    """A moonshot bot playing in-process. ``in_executor`` runs a slow bot off the event loop; by
    default a bot that says it is slow (``slow = True``, e.g. the search bot) runs there. A bot
    that plays faster once the rules kernel is loaded (``uses_kernel``) has it loaded in a worker
    thread the first time one sits."""

    def __init__(
        self, bot: Bot, rng: random.Random | None = None, in_executor: bool | None = None, name: str = ""
    ) -> None:
        self.bot = bot
        self.rng = rng or random.Random()
        self.in_executor = bool(getattr(bot, "slow", False)) if in_executor is None else in_executor
        self.name = name or bot.name
        self.kind = SeatKind.BOT
        if getattr(bot, "uses_kernel", False):
            _load_kernel_off_loop()

    def on_events(self, table: Table, events: Sequence[TableEvent]) -> None:
        # Under concurrent claims (Turbo) nobody is asked to answer a claim: the bot answers
        # another seat's claim on its own, as a person at the table would.
        rules = table.rules
        if rules.claims and rules.claim_flow is ClaimFlow.CONCURRENT:
            for te in events:
                if type(te.event) is ClaimMade:
                    self._answer_claim(table, te.event.seat)

    def _answer_claim(self, table: Table, claimer: int) -> None:
        seat = next((i for i, c in enumerate(table.chairs) if c.acting is self), None)
        game = table.game
        if seat is None or seat == claimer or not _claim_awaits(game, claimer, seat):
            return  # our own claim, or one already over or answered (events replayed on attach)
        view = seat_view(game, seat)
        deal, shown = game.deal_index, game.revealed[claimer]

        def submit(ok: bool) -> None:
            g = table.game  # the same claim still open, and still unanswered by us?
            if g.deal_index == deal and g.revealed[claimer] == shown and _claim_awaits(g, claimer, seat):
                table.submit(seat, AcceptClaim(seat, claimer) if ok else RejectClaim(seat, claimer), None)

        if not self.in_executor:
            submit(answer_claim(self.bot, view, claimer, self.rng))
            return
        rng = random.Random(self.rng.getrandbits(64))  # its own stream: act may run at the same time
        fut = asyncio.get_running_loop().run_in_executor(None, answer_claim, self.bot, view, claimer, rng)

        def done(f: asyncio.Future[bool]) -> None:
            if not f.cancelled() and f.exception() is None:
                submit(f.result())

        fut.add_done_callback(done)

    def on_request(self, table: Table, request: DecisionRequest) -> None:
        loop = asyncio.get_running_loop()
        view = request.view  # now, while the game is as it was asked
        fut = loop.run_in_executor(None, _timed_act, self.bot, view, self.rng)

        def done(f: asyncio.Future[tuple[Action, float]]) -> None:
            if not f.cancelled() and f.exception() is None:
                action, cpu = f.result()
                getattr(table, "meter", NO_METER).bot_thought(cpu)  # (a stand-in table has no meter)
                table.submit(request.seat, action, request.request_id)

        fut.add_done_callback(done)

    def act_now(self, table: Table, request: DecisionRequest) -> Action | None:
        if self.in_executor:
            return None
        # on the loop's thread, which runs nothing else meanwhile: the wall clock (a vDSO read)
        # stands for the CPU clock, a system call that cost more than a random bot's decision
        start = time.perf_counter()
        action = self.bot.act(request.view, self.rng)
        getattr(table, "meter", NO_METER).bot_thought(time.perf_counter() - start)
        return action


def _timed_act(bot: Bot, view: SeatView, rng: random.Random) -> tuple[Action, float]:
    """The bot's action and the CPU its thread spent choosing it (``thread_time``: the worker
    threads of other bots and the loop's own work are not counted)."""
    start = time.thread_time()
    action = bot.act(view, rng)
    return action, time.thread_time() - start


_CLAIM_MOVES = (Claim, AcceptClaim, RejectClaim)


def _claim_awaits(game: Game, claimer: int, seat: int) -> bool:
    """``claimer`` has a claim open that ``seat`` has not accepted."""
    return bool(game.claiming >> claimer & 1) and not game.claim_accepts[claimer] >> seat & 1


class Recorder(Protocol):
    """Where a table writes its history (the game store); every method must not block.

    A recorder whose ``acknowledges`` attribute is true also calls :meth:`Table.durable` once
    actions are durable, and :meth:`Table.storage_paused` / :meth:`Table.storage_resumed` for
    the tables that ``subscribe(table)`` (``unsubscribe(table)`` when they end): the table then
    shows nothing before it is durable (see "Durability" in :class:`Table`)."""

    def game_started(self, table: Table) -> None: ...

    def action_applied(self, table: Table, index: int, action: Action, forced: bool) -> None: ...

    def game_finished(self, table: Table) -> None: ...

    def game_failed(self, table: Table, reason: str) -> None: ...


class TableStatus(enum.Enum):
    WAITING = "waiting"
    RUNNING = "running"
    FINISHED = "finished"
    STOPPED = "stopped"  # shut down mid-game; restorable from the store
    FAILED = "failed"
    ABANDONED = "abandoned"  # every remote player left (TablePolicy.abandon_after): never restored
    CLOSED = "closed"  # ended by the operator (moonshot admin close): recorded as aborted, never rated


# ---------------------------------------------------------------- inbox commands
@dataclass(slots=True)
class _Submit:
    seat: int
    action: Action
    request_id: int | None
    reply: asyncio.Future[str | None] | None = None


@dataclass(slots=True)
class _Reject:
    seat: int
    request_id: int | None
    reason: str


@dataclass(slots=True)
class _Expired:
    request_id: int
    due: float  # the deadline it was armed for (a request sent later has a later one)


@dataclass(slots=True)
class _Attach:
    seat: int
    occupant: Seat
    replay: bool


@dataclass(slots=True)
class _Detach:
    seat: int
    occupant: Seat | None
    reason: str


@dataclass(slots=True)
class _Watch:
    spectator: Spectator
    on: bool


@dataclass(slots=True)
class _Substitute:
    seat: int
    token: int


@dataclass(slots=True)
class _Back:
    seat: int


@dataclass(slots=True)
class _Abandon:
    token: int


@dataclass(slots=True)
class _Stop:
    reason: str


@dataclass(slots=True)
class _Close:
    reason: str


@dataclass(slots=True)
class _Durable:
    count: int  # the first ``count`` actions are in the store (0: the game row)


@dataclass(slots=True)
class _Storage:
    down: bool
    reason: str = ""
    seconds: float = 0.0


@dataclass(slots=True)
class _Pending:
    request: DecisionRequest
    timer: asyncio.TimerHandle | None
    timeout: float | None = None  # the seconds the seat has once the request is sent
    frozen: bool = False  # its deadline stopped for a storage pause; a fresh one runs on resume
    stand_in: bool = False  # asked of the table's bot playing for the chair's person (the clock)
    asked: float = 0.0  # loop time the table asked (the decision's round trip runs from here)
    # a seat that reports its sends: None until the request is written (``Table.sent``), then
    # the deadline runs from that moment; its timer is armed at the earliest the deadline can be
    # and moved on when it fires (no timer is re-armed per send)
    reports: bool = False
    sent: bool = False


@dataclass(frozen=True, slots=True)
class ChairState:
    """One chair as every seat may know it: who sits there and how its decisions went."""

    occupant: str  # "empty", or the occupant's kind ("human", "bot"); a substitute counts as away
    timed_out: bool  # its last decision ran out of time
    timeouts: int
    errors: int  # illegal answers
    away: bool = False  # the table's bot plays for its person after repeated clock timeouts


@dataclass(frozen=True, slots=True)
class TableState:
    """The table's public state, for any seat adapter to read (``Table.snapshot``): the same for
    a table in this process and for one another process owns (its stand-in keeps the owner's)."""

    chairs: tuple[ChairState, ...]
    paused: bool  # nobody is asked: the store cannot be written, or a chair waits for its player


@dataclass
class SeatStats:
    forced: int = 0  # actions the server chose for this seat (timeouts + illegal + substitute)
    timeouts: int = 0
    illegal: int = 0
    timeouts_in_a_row: int = 0


@dataclass
class _Chair:
    occupant: Seat | None
    substitute: Seat | None = None  # plays while the occupant is away
    away_token: int = 0
    stats: SeatStats = field(default_factory=SeatStats)
    # the clock's hand-over: the person stays seated (and sees the game) while ``stand_in``, the
    # table's bot, decides for them, until they act again
    away: bool = False
    stand_in: BotSeat | None = None
    stand_in_asked: set[int] = field(default_factory=set)  # request ids the stand-in was given

    @property
    def acting(self) -> Seat | None:
        return self.occupant if self.occupant is not None else self.substitute


class Table:
    """One game, owned by one task. Create, then ``start()``; await ``done`` to learn the end.

    Durability: with a recorder that ``acknowledges`` (the game store), an action is shown to
    nobody (no seat's or spectator's events, no ``submit`` reply) until the recorder says it is
    durable (:meth:`durable`), and no seat but an in-process bot is asked for a decision while
    any applied action is not. Events wait per table for the write that commits them, with
    every other table's rows in the same transaction (group commit). While the store cannot be
    written (:meth:`storage_paused`) the table asks nobody, the deadlines of open requests
    stop, and every seat gets a :class:`TableNotice`; on :meth:`storage_resumed` each open
    request gets a fresh deadline and play goes on where it stopped."""

    MAX_RESTORES = 3
    abandoned_total = 0  # tables of this process ended because nobody was left to play
    close_reason: str | None = None  # why the operator closed it (TableStatus.CLOSED)
    meter: TableMeter = NO_METER  # the operator's counts (moonshot.runtime.meter); set per table by the server

    def __init__(
        self,
        rules: Rules,
        seats: Sequence[Seat | None],
        *,
        seed: int | None = None,
        policy: TablePolicy | None = None,
        table_id: str | None = None,
        recorder: Recorder | None = None,
        actions: Sequence[Action] = (),
        forced: Sequence[bool] = (),
        restored: bool = False,
        names: Sequence[str] = (),
        credentials: Sequence[str | None] = (),
        meta: dict[str, Any] | None = None,
        deals: Sequence[DealSpec] | None = None,
    ) -> None:
        if len(seats) != 4:
            raise ValueError("a table has four seats")
        self.id = table_id or f"t{next(_table_ids)}"
        self.rules = rules
        self.seed = seed if seed is not None else secrets.randbits(62)
        self.policy = policy or TablePolicy()
        self.recorder = recorder
        self.meta: dict[str, Any] = dict(meta or {})
        # fixed deals (a Kierki game file); None: the seed deals every hand
        self.deals: tuple[DealSpec, ...] | None = tuple(deals) if deals is not None else None
        # commit and reveal (moonshot.core.fairness): the salt is drawn once and kept with the game
        # (its meta, in the store), so a restored table publishes the same commitment
        salt = self.meta.get("deal_salt")
        if not valid_salt(salt):
            salt = secrets.token_hex(16)
        self.seal = DealSeal(self.id, self.seed, str(salt), self.deals)
        self.meta["deal_salt"] = self.seal.salt
        self.meta["deal_commitment"] = self.seal.commitment
        # False: the seed is not revealed when this game ends, nor its hands to spectators (a
        # tournament's game, whose deal set other rotations still play: the API reveals it later)
        self.reveal_at_end = self.meta.get("reveal_at_end") is not False
        self.game = Game(rules, self.seed, self.deals)
        self.forced_log: list[bool] = []
        for i, a in enumerate(actions):  # a restored table: replay what the store holds
            self.game.apply(a)
            self.forced_log.append(bool(forced[i]) if i < len(forced) else False)
        self.restored = restored or bool(actions)
        # a chair's name while its occupant is away (a restored game, a disconnect): stable tags
        given = list(names) if names else [s.name if s is not None else "" for s in seats]
        self.names = given + [""] * (4 - len(given))
        # each chair's credential (see Seat.credential), kept while its occupant is away
        creds = list(credentials) if credentials else [s.credential if s is not None else None for s in seats]
        self.credentials: list[str | None] = creds + [None] * (4 - len(creds))
        self.chairs = [_Chair(s) for s in seats]
        self.spectators: list[Spectator] = []
        self._spect_version = 0  # events delivered to spectators
        self.status = TableStatus.WAITING
        self.error: str | None = None
        self.rng = random.Random(self.seed ^ 0x5EED)
        self._random = RandomBot()
        self._inbox: asyncio.Queue[object] = asyncio.Queue()
        self._pending: dict[int, _Pending] = {}  # seat -> its open request
        self._request_ids = itertools.count(1)
        self._sent_version = [0, 0, 0, 0]  # events delivered to each chair
        self._resume_at = 0.0  # loop time before which no new request is made (pacing)
        # durability (see the class docstring): what may be shown is what the store holds
        self._acks = bool(getattr(recorder, "acknowledges", False))
        fresh = self._acks and not self.restored
        self._durable = -1 if fresh else len(self.game.actions)  # actions in the store (-1: not the game row)
        self._shown = 0 if fresh else len(self.game.log)  # events that may be shown: those of durable actions
        self._marks: collections.deque[tuple[int, int]] = collections.deque()  # (actions, events) not yet durable
        if fresh:
            self._marks.append((0, len(self.game.log)))  # the first deal's events come with the game row
        self._event_forced = bytearray(len(self.game.log))  # 1: the action behind the event was the server's
        self._held_replies: collections.deque[tuple[int, asyncio.Future[str | None]]] = collections.deque()
        self._told_clock: Countdown | None = None  # the countdown the watchers were last told
        self._storage_paused_at: float | None = None  # loop time the store went away (None: it is there)
        self._task: asyncio.Task[None] | None = None
        self._deserted: int | None = None  # while nobody remote sits here: its token (abandon_after)
        self._desert_tokens = itertools.count(1)
        self.done: asyncio.Future[TableStatus] = asyncio.get_running_loop().create_future()
        # told at once (ahead of the table's task) of every attach and detach asked for, as
        # (chair, occupant, taken): how a lobby that offers a running table's free chairs (Kierki)
        # keeps its own record of them, whatever process the players are on
        self.chair_hooks: list[Callable[[int, Seat | None, bool], None]] = []

    # ------------------------------------------------------------ public API (any task)
    def start(self) -> asyncio.Task[None]:
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"table-{self.id}")
        return self._task

    def submit(
        self, seat: int, action: Action, request_id: int | None = None, reply: asyncio.Future[str | None] | None = None
    ) -> None:
        """An answer (or an unsolicited action) from the occupant of ``seat``.

        ``reply``, when given, is resolved with ``None`` once the action is applied (and stored,
        with an acknowledging recorder), or with the reason it was not (illegal, stale, not this
        seat's, the table has ended): a caller that owes its client a synchronous answer (an HTTP
        POST) awaits it. The table never waits."""
        if self.done.done():
            if reply is not None and not reply.done():
                reply.set_result(f"the table has ended ({self.status.value})")
            return
        self._inbox.put_nowait(_Submit(seat, action, request_id, reply))

    def reject(self, seat: int, request_id: int | None, reason: str) -> None:
        """The occupant's answer could not even be read (malformed, wrong ``seq_num``): an illegal answer."""
        self._inbox.put_nowait(_Reject(seat, request_id, reason))

    def sent(self, seat: int, request_id: int, at: float | None = None) -> None:
        """Request ``request_id`` of ``seat`` left for its player at loop time ``at`` (now when
        not given): its deadline is that moment plus the phase's time (a seat with
        ``reports_sent`` calls this when the frame is written).

        It only writes the request's deadline (no inbox round trip, no timer re-armed: a frame
        is written for every request, so this runs once per decision); the table's timer, armed
        at the earliest the deadline could be, finds the new one when it fires."""
        if self.done.done():
            return
        p = self._pending.get(seat)
        if p is None or p.request.request_id != request_id or p.timer is None or p.timeout is None:
            return  # answered, withdrawn, or waiting without a deadline (paused, a person)
        p.sent = True
        p.request.deadline = (asyncio.get_running_loop().time() if at is None else at) + p.timeout

    def attach(self, seat: int, occupant: Seat, replay: bool = True) -> None:
        """Seat ``occupant`` in chair ``seat`` (a reconnect); it gets the chair's view replayed."""
        self._inbox.put_nowait(_Attach(seat, occupant, replay))
        for hook in self.chair_hooks:
            hook(seat, occupant, True)

    def detach(self, seat: int, occupant: Seat | None = None, reason: str = "disconnected") -> None:
        """The occupant left (only if it is still ``occupant``, when given)."""
        self._inbox.put_nowait(_Detach(seat, occupant, reason))
        for hook in self.chair_hooks:
            hook(seat, occupant, False)

    def watch(self, spectator: Spectator, on: bool = True) -> None:
        self._inbox.put_nowait(_Watch(spectator, on))

    def back(self, seat: int) -> None:
        """The person in ``seat`` takes it back from the table's bot (after the clock handed it
        over); their next action does the same."""
        self._inbox.put_nowait(_Back(seat))

    def stop(self, reason: str = "shutdown") -> None:
        """End the task without finishing the game (it stays restorable from the store)."""
        self._inbox.put_nowait(_Stop(reason))

    def close(self, reason: str) -> None:
        """End the game unfinished for good (the operator's ``moonshot admin close``): recorded
        as aborted, so never rated nor restored; every player is told ``reason`` in its
        protocol's own way, as when a table is abandoned."""
        self._inbox.put_nowait(_Close(reason))

    def announce(self, text: str) -> None:
        """Tell every seat and spectator ``text`` from the operator (``moonshot admin notice``),
        as the table tells its pauses (:class:`TableNotice`, kind ``notice``): each protocol
        shows it as best it can."""
        if not self.done.done():
            self._notify(TableNotice("notice", "operator", text))

    # the recorder's calls (see Recorder): durability and storage pauses
    def durable(self, count: int) -> None:
        """The first ``count`` actions are in the store (0: the game row): they may be shown."""
        self._inbox.put_nowait(_Durable(count))

    def storage_paused(self, reason: str) -> None:
        """The store cannot be written: ask nobody and stop the clocks until it can."""
        self._inbox.put_nowait(_Storage(True, reason))

    def storage_resumed(self, seconds: float) -> None:
        """The store is written again after ``seconds``: restart the clocks and go on."""
        self._inbox.put_nowait(_Storage(False, seconds=seconds))

    @property
    def version(self) -> int:
        return self.game.version

    def stats(self) -> list[SeatStats]:
        return [c.stats for c in self.chairs]

    def snapshot(self) -> TableState:
        """Each chair's occupant and counts, and whether the table waits (:class:`TableState`)."""
        chairs = tuple(
            ChairState(
                "empty" if c.occupant is None else c.occupant.kind.value,
                c.stats.timeouts_in_a_row > 0,
                c.stats.timeouts,
                c.stats.illegal,
                c.away,
            )
            for c in self.chairs
        )
        paused = not self.game.over and (self._storage_paused_at is not None or self._waits())
        return TableState(chairs, paused)

    def seat_names(self) -> list[str]:
        return [
            c.occupant.name if c.occupant else (self.names[i] or (c.substitute.name if c.substitute else ""))
            for i, c in enumerate(self.chairs)
        ]

    # ------------------------------------------------------------ the actor
    async def _run(self) -> None:
        self.status = TableStatus.RUNNING
        restores = 0
        if self._acks:
            subscribe = getattr(self.recorder, "subscribe", None)
            if subscribe is not None:
                subscribe(self)
        if self.recorder is not None and not self.restored:
            self._safe_record(self.recorder.game_started, self)
        for seat, chair in enumerate(self.chairs):
            if chair.occupant is None and self.policy.on_disconnect is OnDisconnect.BOT:
                self._schedule_substitute(seat)
        while True:
            try:
                await self._loop()
                break
            except asyncio.CancelledError:
                self._close_all("cancelled")
                self.status = TableStatus.STOPPED
                self._resolve()
                raise
            except Exception as e:  # one table's bug must not take the server down
                restores += 1
                log.exception("table=%s event=table_error restores=%d error=%r", self.id, restores, e)
                if restores > self.MAX_RESTORES or not self._restore():
                    self.status = TableStatus.FAILED
                    self.error = repr(e)
                    if self.recorder is not None:
                        self._safe_record(self.recorder.game_failed, self, repr(e))
                    self._close_all(f"table failed: {e!r}")
                    break
        self._resolve()

    def _resolve(self) -> None:
        for p in self._pending.values():
            if p.timer is not None:
                p.timer.cancel()
        self._pending.clear()
        if self._acks:
            unsubscribe = getattr(self.recorder, "unsubscribe", None)
            if unsubscribe is not None:
                unsubscribe(self)
        while self._held_replies:  # applied, never acknowledged: the caller may not count on it
            _, reply = self._held_replies.popleft()
            if not reply.done():
                reply.set_result(f"the table has ended ({self.status.value}) before the action was stored")
        # submissions nobody will read: their callers hear that the table has ended
        while not self._inbox.empty():
            cmd = self._inbox.get_nowait()
            if isinstance(cmd, _Submit) and cmd.reply is not None and not cmd.reply.done():
                cmd.reply.set_result(f"the table has ended ({self.status.value})")
        if not self.done.done():
            self.done.set_result(self.status)

    def _restore(self) -> bool:
        """Rebuild the game from its actions after an internal error (the state may be torn)."""
        try:
            g = Game(self.rules, self.seed, self.deals)
            for a in self.game.actions:
                g.apply(a)
        except Exception:
            log.exception("table=%s event=restore_failed", self.id)
            return False
        self.game = g
        for p in self._pending.values():
            if p.timer is not None:
                p.timer.cancel()
        self._pending.clear()
        log.warning("table=%s event=restored version=%d", self.id, g.version)
        return True

    async def _loop(self) -> None:
        self._flush_events()
        loop = asyncio.get_running_loop()
        while True:
            if self.game.over and self._caught_up():
                self._finish()
                return
            if self.game.over or self._storage_paused_at is not None:
                # the end waits for its last actions to be stored; a storage pause, for the store
                if self._handle(await self._inbox.get()):
                    return
                continue
            wait = self._resume_at - loop.time()
            if wait > 0 and self.policy.pause_after is not None:
                # pacing: the inbox is still served (a detach, a stop) while the pause runs
                try:
                    cmd = await asyncio.wait_for(self._inbox.get(), wait)
                except TimeoutError:
                    continue
                if self._handle(cmd):
                    return
                continue
            if self._ask():
                # an in-process bot moved: let other tables (and our inbox) run before the next move
                await asyncio.sleep(0)
                while not self._inbox.empty():
                    if self._handle(self._inbox.get_nowait()):
                        return
                continue
            if self.game.over:
                continue
            if self._handle(await self._inbox.get()):
                return

    def _handle(self, cmd: object) -> bool:
        """Carry out one inbox command; True when the table must stop."""
        if isinstance(cmd, _Submit):
            self._on_submit(cmd)
        elif isinstance(cmd, _Reject):
            p = self._pending.get(cmd.seat)
            if p is not None and cmd.request_id in (None, p.request.request_id):
                self._bad_answer(cmd.seat, None, cmd.reason)
        elif isinstance(cmd, _Expired):
            self._on_expired(cmd.request_id, cmd.due)
        elif isinstance(cmd, _Attach):
            self._on_attach(cmd)
        elif isinstance(cmd, _Detach):
            self._on_detach(cmd)
        elif isinstance(cmd, _Substitute):
            self._on_substitute(cmd)
        elif isinstance(cmd, _Watch):
            self._on_watch(cmd)
        elif isinstance(cmd, _Back):
            self._set_away(cmd.seat, False)
        elif isinstance(cmd, _Abandon):
            return self._on_abandon(cmd)
        elif isinstance(cmd, _Close):
            return self._on_close(cmd.reason)
        elif isinstance(cmd, _Durable):
            self._on_durable(cmd.count)
        elif isinstance(cmd, _Storage):
            self._on_storage(cmd)
        elif isinstance(cmd, _Stop):
            log.info("table=%s event=stopped reason=%s version=%d", self.id, cmd.reason, self.game.version)
            self.status = TableStatus.STOPPED
            self._close_all(cmd.reason)
            return True
        return False

    def _finish(self) -> None:
        self.status = TableStatus.FINISHED
        log.info(
            "table=%s event=finished totals=%s forced=%s",
            self.id,
            list(self.game.totals),
            [c.stats.forced for c in self.chairs],
        )
        if self.recorder is not None:
            self._safe_record(self.recorder.game_finished, self)
        self._close_all("game over")

    # ------------------------------------------------------------ decisions
    def _ask(self) -> bool:
        """Open a request for every seat the game waits on; True when something was applied.

        Remote seats are asked first, so that all of them hear of a decision (a pass) at once,
        before any in-process bot's answer is applied; the bots' answers follow, and the caller
        yields to the event loop before asking again."""
        to_act = self.game.to_act()
        if not self._caught_up() and any(self._asks_remotely(s) for s in to_act):
            return False  # asked once what came before is stored, with its events (a _Durable brings us back)
        ready: list[tuple[int, Action, bool]] = []
        if self._deserted is not None:
            return False  # nobody remote is left: nothing is asked until one comes back
        for seat in to_act:
            if seat in self._pending:
                continue
            chair = self.chairs[seat]
            actor = chair.acting
            if actor is None:
                continue  # an empty chair: paused until someone sits or a substitute comes
            stand_in = chair.away and chair.occupant is not None
            if stand_in:
                actor = self._stand_in(seat)  # the clock handed the seat over: its bot decides
            req = self._new_request(seat, actor.wants_view, actor)
            try:
                action = actor.act_now(self, req)
            except Exception:
                log.exception("table=%s seat=%d event=bot_error", self.id, seat)
                action = None
            if action is not None:
                ready.append((seat, action, chair.occupant is None or stand_in))
                continue
            self._open(req, actor, stand_in=stand_in)
            if seat not in self._pending:  # detached in its callback: a substitute may act now
                return True
        for seat, action, forced in ready:
            if self.game.over or seat not in self.game.to_act() or seat in self._pending:
                break  # the game moved on: ask again
            if action.seat != seat or not self.game.is_legal(action):
                log.warning("table=%s seat=%d event=bot_illegal action=%r", self.id, seat, action)
                action, forced = self.random_action(seat), True
            self._apply(seat, action, forced=forced)
        return bool(ready)

    def _timeout(self, actor: Seat | None, phase: Phase) -> float | None:
        """The seconds ``actor`` has for a decision in ``phase``: a person's (``patient``) is the
        table's clock (None: no clock), a program's the protocol's deadline for the phase."""
        return self.policy.clock if actor is not None and actor.patient else self.policy.timeout_for(phase)

    def _asks_remotely(self, seat: int) -> bool:
        """``seat`` is to be asked (no open request) by a seat that cannot answer in-process.

        Such a seat is asked only about a stored state, and before any bot acts in the same
        step (all remote seats hear of a pass at once, with the events that led to it), so the
        bots wait too."""
        if seat in self._pending:
            return False
        actor = self.chairs[seat].acting
        return actor is not None and type(actor).act_now is Seat.act_now

    def _new_request(self, seat: int, eager: bool = True, actor: Seat | None = None) -> DecisionRequest:
        timeout = self._timeout(actor or self.chairs[seat].acting, self.game.phase)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout if timeout is not None else None
        return DecisionRequest(self.id, seat, next(self._request_ids), self.game, deadline, eager)

    def _open(self, req: DecisionRequest, actor: Seat, paused: bool = False, stand_in: bool = False) -> None:
        timer = None
        frozen = False
        if req.deadline is not None and not paused:
            if self._storage_paused_at is not None:
                frozen = True  # its clock starts when the store is back
            else:
                # a seat that reports its sends gets its deadline from the send (``sent``); until
                # then the request may wait ``send_grace`` seconds more to leave. Its timer fires
                # at the earliest deadline, and ``_on_expired`` moves it on to the real one
                timer = self._arm(req.request_id, req.deadline)
        asked = asyncio.get_running_loop().time()
        timeout = self._timeout(actor, req.phase)
        self._pending[req.seat] = _Pending(
            req, timer, timeout, frozen, stand_in=stand_in, asked=asked, reports=actor.reports_sent
        )
        if stand_in:
            self.chairs[req.seat].stand_in_asked.add(req.request_id)
        self._tell_clock()
        self._call(req.seat, actor, actor.on_request, self, req)

    def _arm(self, request_id: int, due: float) -> asyncio.TimerHandle:
        return asyncio.get_running_loop().call_at(due, self._inbox.put_nowait, _Expired(request_id, due))

    def _moved_on(self, p: _Pending, due: float) -> bool:
        """A reporting seat's timer fired at ``due``: re-armed (True) if its deadline is later,
        because the request left after it was asked, or has not left yet (``send_grace``)."""
        if not p.reports or p.request.deadline is None:
            return False
        later = p.request.deadline if p.sent else p.request.deadline + self.policy.send_grace
        if later <= due:
            return False
        p.timer = self._arm(p.request.request_id, later)
        return True

    def _close_request(self, seat: int) -> DecisionRequest | None:
        p = self._pending.pop(seat, None)
        if p is None:
            return None
        if p.timer is not None:
            p.timer.cancel()
            self._tell_clock()
        return p.request

    def _on_submit(self, cmd: _Submit) -> None:
        outcome = self._submitted(cmd)
        if cmd.reply is not None and not cmd.reply.done():
            if outcome is None and not self._caught_up():
                # applied, but acknowledged only once stored
                self._held_replies.append((len(self.game.actions), cmd.reply))
            else:
                cmd.reply.set_result(outcome)

    def _submitted(self, cmd: _Submit) -> str | None:
        """Carry out a submitted action: ``None`` when applied, else the reason it was not."""
        seat = cmd.seat
        chair = self.chairs[seat]
        by_stand_in = cmd.request_id is not None and cmd.request_id in chair.stand_in_asked
        if chair.away and not by_stand_in:
            self._set_away(seat, False)  # the person acts again: the seat is theirs
        pending = self._pending.get(seat)
        if cmd.request_id is not None and (pending is None or pending.request.request_id != cmd.request_id):
            log.debug("table=%s seat=%d event=stale_answer request=%s", self.id, seat, cmd.request_id)
            return "stale answer: the table no longer waits for it"
        if cmd.action.seat != seat:
            reason = f"action for seat {cmd.action.seat} sent by seat {seat}"
            self._bad_answer(seat, cmd.action, reason)
            return reason
        if not self.game.is_legal(cmd.action):
            if cmd.request_id is None and isinstance(cmd.action, _CLAIM_MOVES):
                # a claim move that came too late (the claim ended, the hand moved on) answers no
                # request: the seat hears why, and its pending decision, if any, is untouched
                reason = self._why(cmd.action)
                log.info("table=%s seat=%d event=claim_refused action=%r reason=%s", self.id, seat, cmd.action, reason)
                actor = chair.acting
                if pending is not None and actor is not None:
                    self._call(seat, actor, actor.on_rejected, self, pending.request, cmd.action, reason)
                return reason
            reason = self._why(cmd.action)
            self._bad_answer(seat, cmd.action, reason)
            return reason
        if cmd.request_id is not None or not isinstance(cmd.action, _CLAIM_MOVES):
            # (an unsolicited claim move answers no request: the seat may still owe a card, and
            # if it no longer does, _apply withdraws the request)
            self._close_request(seat)
            if pending is not None and cmd.request_id is not None:
                self.meter.answered(asyncio.get_running_loop().time() - pending.asked)
        if not by_stand_in:
            chair.stats.timeouts_in_a_row = 0
        self._apply(seat, cmd.action, forced=chair.occupant is None or by_stand_in)
        return None

    def _why(self, action: Action) -> str:
        try:
            self.game.apply(action)  # raises, leaving the game unchanged: is_legal said no
        except IllegalAction as e:
            return e.reason  # the English, carrying its code and params (core/refusals.py)
        return "illegal"  # pragma: no cover - is_legal said no

    def _bad_answer(self, seat: int, action: Action | None, reason: str) -> None:
        chair = self.chairs[seat]
        chair.stats.illegal += 1
        log.info("table=%s seat=%d event=illegal_answer action=%r reason=%s", self.id, seat, action, reason)
        actor = chair.acting
        pending = self._pending.get(seat)
        if actor is not None and actor.patient and pending is not None and not pending.stand_in:
            # a person is told and waited for; their clock (if any) keeps running
            self._call(seat, actor, actor.on_rejected, self, pending.request, action, reason)
            return
        self._handle_failure(seat, action, reason, self.policy.on_illegal)

    def _on_expired(self, request_id: int, due: float) -> None:
        for seat, p in self._pending.items():
            if p.request.request_id == request_id:
                if p.timer is None or p.timer.when() != due:
                    return  # re-armed or paused since this timer was set
                if self._moved_on(p, due):
                    return  # sent later than asked: its deadline runs from the send
                if self._storage_paused_at is not None:  # it ran out as the store went away: not the seat's fault
                    p.timer, p.frozen = None, True
                    return
                stats = self.chairs[seat].stats
                stats.timeouts += 1
                stats.timeouts_in_a_row += 1
                log.info("table=%s seat=%d event=timeout request=%d", self.id, seat, request_id)
                actor = self.chairs[seat].acting
                if actor is not None and actor.patient and not p.stand_in:
                    # a person's clock ran out: the table's bot plays this decision, and after
                    # ``clock_handover`` in a row every decision until the person acts again
                    handover = self.policy.clock_handover
                    if handover is not None and stats.timeouts_in_a_row >= handover:
                        self._set_away(seat, True)
                    self._handle_failure(seat, None, "timeout", OnBadAnswer.BOT)
                    return
                limit = self.policy.max_consecutive_timeouts
                occupant = self.chairs[seat].occupant
                if limit is not None and stats.timeouts_in_a_row >= limit and occupant is not None:
                    reason = f"{stats.timeouts_in_a_row} timeouts in a row"
                    self._on_detach(_Detach(seat, None, reason))
                    self._call(seat, occupant, occupant.on_closed, self, reason)
                    if self.policy.on_disconnect is OnDisconnect.BOT:
                        return  # the substitute answers this request
                self._handle_failure(seat, None, "timeout", self.policy.on_timeout)
                return

    def _handle_failure(self, seat: int, action: Action | None, reason: str, what: OnBadAnswer) -> None:
        pending = self._pending.get(seat)
        if pending is None:
            return
        actor = self.chairs[seat].acting
        if actor is not None:
            self._call(seat, actor, actor.on_rejected, self, pending.request, action, reason)
        if what is OnBadAnswer.RANDOM:
            self._close_request(seat)
            self._apply(seat, self.random_action(seat), forced=True)
        elif what is OnBadAnswer.BOT:
            self._close_request(seat)
            self._play_for(seat)
        elif what is OnBadAnswer.RETRY:
            self._close_request(seat)
            if actor is not None and self.chairs[seat].acting is actor and self._caught_up():
                self._open(self._new_request(seat, actor.wants_view), actor)  # else _ask asks once stored
        else:  # PAUSE: keep the request open, without a deadline
            if pending.timer is not None:
                pending.timer.cancel()
                pending.timer = None

    def _drop_stale_requests(self, deal: int) -> None:
        """Close requests that another seat's move (an unsolicited claim, or one ending the hand)
        made moot; ``_ask`` opens fresh ones, and a late answer to a closed one is ignored."""
        g = self.game
        waiting = g.to_act()
        for seat in [s for s, p in self._pending.items() if s not in waiting or g.deal_index != deal]:
            log.debug("table=%s seat=%d event=request_withdrawn", self.id, seat)
            self._close_request(seat)

    # ------------------------------------------------------------ the clock (moonshot.runtime.clock)
    def _stand_in(self, seat: int) -> BotSeat:
        """The table's bot that plays for the person in ``seat`` when their clock runs out."""
        chair = self.chairs[seat]
        if chair.stand_in is None:
            bot = self.policy.substitute()
            # its own stream, so the table's (a Trend seed's server-random cards) is untouched
            rng = random.Random(self.seed ^ (0xC10C << 2 | seat))
            chair.stand_in = BotSeat(bot, rng, name=f"clock-{bot.name}")
        return chair.stand_in

    def _play_for(self, seat: int) -> None:
        """The person in ``seat`` ran out of time: the table's bot decides for them (forced)."""
        stand = self._stand_in(seat)
        req = self._new_request(seat, stand.wants_view, stand)
        try:
            action = stand.act_now(self, req)
        except Exception:
            log.exception("table=%s seat=%d event=bot_error", self.id, seat)
            action = self.random_action(seat)
        if action is None:
            self._open(req, stand, stand_in=True)  # a slow bot answers from its worker thread
            return
        if action.seat != seat or not self.game.is_legal(action):
            action = self.random_action(seat)
        self._apply(seat, action, forced=True)

    def _set_away(self, seat: int, away: bool) -> None:
        """Hand ``seat`` to the table's bot (repeated clock timeouts) or give it back to its
        person (they acted, or said they are back): then their pending decision is theirs again."""
        chair = self.chairs[seat]
        if chair.away == away:
            return
        chair.away = away
        log.info("table=%s seat=%d event=%s", self.id, seat, "clock_handover" if away else "clock_back")
        if not away:
            chair.stats.timeouts_in_a_row = 0
            chair.stand_in_asked.clear()
            p = self._pending.get(seat)
            if p is not None and p.stand_in:
                self._close_request(seat)  # _ask asks the person, with a fresh clock
        self._tell_clock(force=True)

    def countdown(self) -> Countdown:
        """The table's clocks now (:class:`~moonshot.runtime.clock.Countdown`): whose decisions
        run under the clock until when (loop time), and which seats the table's bot plays."""
        running = tuple(
            sorted(
                (seat, p.request.deadline)
                for seat, p in self._pending.items()
                if p.timer is not None and not p.stand_in and p.request.deadline is not None and self._clocked(seat)
            )
        )
        away = tuple(i for i, c in enumerate(self.chairs) if c.away)
        return Countdown(self.policy.clock, running, away)

    def _clocked(self, seat: int) -> bool:
        actor = self.chairs[seat].acting
        return actor is not None and actor.patient

    def _tell_clock(self, force: bool = False) -> None:
        """Tell the watchers that can show it (``on_clock``) that the countdown changed."""
        if self.policy.clock is None or not self.spectators:
            return
        now = self.countdown()
        if now == self._told_clock and not force:
            return
        self._told_clock = now
        for sp in list(self.spectators):
            self._clock_to(sp, now)

    def _clock_to(self, who: object, now: Countdown | None = None) -> None:
        """Tell one watcher or occupant that can show it (``on_clock``) the clocks as they stand:
        every watcher as they change, and a watcher or seat that arrives at once (the countdown of
        the seat to act and the seats the bot plays are part of what a newcomer is given)."""
        on_clock = getattr(who, "on_clock", None)
        if on_clock is None or self.policy.clock is None or self.game.over:
            return
        countdown = self.countdown() if now is None else now
        if now is None and not self._shown:
            return  # nothing shown yet: a stream still opens with the game's own first event
        try:
            on_clock(self, countdown)
        except Exception:
            log.exception("table=%s event=spectator_error", self.id)
            if who in self.spectators:
                self.spectators.remove(who)

    def random_action(self, seat: int) -> Action:
        g = self.game
        if g.phase is Phase.PLAY and g.claimer is None:
            return Play.of(seat, self.rng.choice(card_list(g.legal_play_mask(seat))))
        if g.phase in (Phase.PASS, Phase.PILE):
            cards = self.rng.sample(card_list(g.hands[seat]), self.rules.pass_count)
            return Pass(seat, sum(1 << c for c in cards))
        options = [a for a in g.legal_actions(seat) if not isinstance(a, Claim)]
        return self.rng.choice(options)

    def _apply(self, seat: int, action: Action, forced: bool) -> None:
        index = len(self.game.actions)
        deal = self.game.deal_index
        events = self.game.apply(action)
        if self._pending:
            self._drop_stale_requests(deal)
        if self.policy.pause_after is not None:
            pause = self.policy.pause_after(events)
            if pause > 0:
                self._resume_at = max(self._resume_at, asyncio.get_running_loop().time() + pause)
        self.forced_log.append(forced)
        self.meter.decided()
        if forced:
            self.chairs[seat].stats.forced += 1
        if self.recorder is not None:
            self._safe_record(self.recorder.action_applied, self, index, action, forced)
        end = len(self.game.log)
        added = end - len(self._event_forced)
        self._event_forced.extend(b"\x01" * added if forced else bytes(added))
        if self._acks:
            self._marks.append((index + 1, end))  # shown once the store has action ``index``
        else:
            self._shown = end
            self._flush_events()

    # ------------------------------------------------------------ events
    def _flush_events(self) -> None:
        """Send every seat and spectator the events it has not had, up to what is durable."""
        log_ = self.game.log
        end = self._shown
        for seat, chair in enumerate(self.chairs):
            start = self._sent_version[seat]
            if start >= end:
                continue
            self._sent_version[seat] = end
            who = chair.acting
            if who is None:
                continue
            out = self._view(seat, start, end, True)
            if out:
                self._call(seat, who, who.on_events, self, out)
        if self.spectators:
            start = self._spect_version
            if start < end:
                self._spect_version = end
                forced = self._event_forced
                out = [TableEvent(v + 1, self._sealed(log_[v]), bool(forced[v])) for v in range(start, end)]
                for sp in list(self.spectators):
                    try:
                        sp.on_events(self, out)
                    except Exception:
                        log.exception("table=%s event=spectator_error", self.id)
                        self.spectators.remove(sp)

    def _sealed(self, e: Event) -> Event:
        """The event as it leaves the table: the game's start with the deals' commitment, its end
        with the seed and salt that open it (``DealSeal.decorate``), for every protocol alike."""
        t = type(e)
        if t is GameStarted or (t is GameEnded and self.reveal_at_end):
            return self.seal.decorate(e)
        return e

    def _view(self, seat: int | None, start: int, end: int, live: bool = False) -> list[TableEvent]:
        """``seat``'s events ``start``..``end``; ``live``: marked forced where the server chose
        the action behind them (a replay is never marked)."""
        out = []
        log_ = self.game.log
        forced = self._event_forced
        for v in range(start, end):
            e = self._sealed(log_[v]).for_viewer(seat)
            if e is not None:
                out.append(TableEvent(v + 1, e, live and bool(forced[v])))
        return out

    def view_log(self, seat: int | None) -> list[TableEvent]:
        """The whole game so far, as far as it is durable, as ``seat`` sees it: a chair,
        ``SPECTATOR`` (only what is public) or ``None`` (everything: the table's own watchers,
        which redact per viewer)."""
        return self._view(seat, 0, self._shown)

    # ------------------------------------------------------------ durability and storage pauses
    def _caught_up(self) -> bool:
        """Every applied action is in the store (always, without an acknowledging recorder)."""
        return not self._acks or self._durable >= len(self.game.actions)

    def _on_durable(self, count: int) -> None:
        if count <= self._durable:
            return
        self._durable = count
        marks = self._marks
        while marks and marks[0][0] <= count:
            self._shown = marks.popleft()[1]
        replies = self._held_replies
        while replies and replies[0][0] <= count:
            reply = replies.popleft()[1]
            if not reply.done():
                reply.set_result(None)
        self._flush_events()

    @property
    def _pause_notice(self) -> TableNotice:
        return TableNotice("paused", "storage", "paused: the game store cannot be written; play resumes when it can")

    def _on_storage(self, cmd: _Storage) -> None:
        loop = asyncio.get_running_loop()
        if cmd.down:
            if self._storage_paused_at is not None:
                return
            self._storage_paused_at = loop.time()
            for p in self._pending.values():
                if p.timer is not None:
                    p.timer.cancel()
                    p.timer, p.frozen = None, True
            log.warning("table=%s event=table_paused cause=storage version=%d", self.id, self.game.version)
            self.meter.paused("storage")
            self._notify(self._pause_notice)
            self._tell_clock()  # the clocks stopped
            return
        if self._storage_paused_at is None:
            return
        paused = loop.time() - self._storage_paused_at
        self._storage_paused_at = None
        for seat, p in self._pending.items():
            if p.frozen:  # the full time again: nobody is timed out for the store's pause
                actor = self.chairs[seat].acting
                timeout = None if p.stand_in else self._timeout(actor, p.request.phase)
                p.frozen = False
                if timeout is not None:
                    p.sent = True  # the full time from now, whenever it left
                    p.request.deadline = loop.time() + timeout
                    p.timer = self._arm(p.request.request_id, p.request.deadline)
        log.warning("table=%s event=table_resumed cause=storage paused_s=%.3f", self.id, paused)
        self._notify(TableNotice("resumed", "storage", "resumed: the game store is written again", cmd.seconds))
        self._tell_clock()  # a fresh clock for each open decision

    def _notify(self, notice: TableNotice) -> None:
        """Tell every seat and spectator something about the table (a pause, a resume)."""
        for seat, chair in enumerate(self.chairs):
            who = chair.acting
            if who is not None:
                self._call(seat, who, who.on_notice, self, notice)
        for sp in list(self.spectators):
            on_notice = getattr(sp, "on_notice", None)
            if on_notice is None:
                continue
            try:
                on_notice(self, notice)
            except Exception:
                log.exception("table=%s event=spectator_error", self.id)
                self.spectators.remove(sp)

    def spectator_log(self) -> list[TableEvent]:
        """What a spectator may see now: the public events while the game runs, all once it is over."""
        return self.view_log(None if self.game.over and self.reveal_at_end else SPECTATOR)

    # ------------------------------------------------------------ seats coming and going
    def _on_attach(self, cmd: _Attach) -> None:
        waited = self._waits()
        chair = self.chairs[cmd.seat]
        old = chair.acting
        chair.occupant = cmd.occupant
        chair.substitute = None
        chair.away_token += 1
        chair.away = False  # whoever sits decides again (the clock's hand-over ends)
        chair.stand_in_asked.clear()
        self._sent_version[cmd.seat] = self._shown
        if old is not None and old is not cmd.occupant:
            self._call(cmd.seat, old, old.on_closed, self, "replaced")
        if cmd.replay:
            past = self.view_log(cmd.seat)
            if past:
                self._call(cmd.seat, cmd.occupant, cmd.occupant.on_events, self, past)
        if self._storage_paused_at is not None and chair.occupant is cmd.occupant:
            self._call(cmd.seat, cmd.occupant, cmd.occupant.on_notice, self, self._pause_notice)
        p = self._close_request(cmd.seat)
        if p is not None and chair.occupant is cmd.occupant and self._caught_up():
            self._open(self._new_request(cmd.seat, cmd.occupant.wants_view), cmd.occupant)
        self._deserted = None  # someone is back: play goes on
        self._tell_clock()  # (its hand-over ended) and the newcomer is told the clocks as they stand
        self._clock_to(cmd.occupant)
        log.info("table=%s seat=%d event=attached name=%s", self.id, cmd.seat, cmd.occupant.name)
        if self.policy.tell_seated and waited and not self._waits() and not self.game.over:
            whole = TableNotice("resumed", SEATED, "every seat is taken again")
            for i, c in enumerate(self.chairs):
                if i != cmd.seat and c.occupant is not None:
                    self._call(i, c.occupant, c.occupant.on_notice, self, whole)

    def _waits(self) -> bool:
        """A chair is empty and no substitute plays it: nobody is asked (see :meth:`snapshot`)."""
        return any(c.occupant is None and c.substitute is None for c in self.chairs)

    def _on_detach(self, cmd: _Detach) -> None:
        chair = self.chairs[cmd.seat]
        if cmd.occupant is not None and chair.occupant is not cmd.occupant:
            return
        if chair.occupant is None:
            return
        log.info("table=%s seat=%d event=detached reason=%s", self.id, cmd.seat, cmd.reason)
        waited = self._waits()
        chair.occupant = None
        chair.away_token += 1
        chair.away = False  # the substitute (or nobody) plays an empty chair
        p = self._pending.get(cmd.seat)
        if p is not None:  # nobody is there to answer: no deadline runs
            if p.timer is not None:
                p.timer.cancel()
            p.timer, p.frozen = None, False
            self._tell_clock()
        if self.policy.on_disconnect is OnDisconnect.BOT:
            self._schedule_substitute(cmd.seat)
        if not waited and self._waits() and not self.game.over:
            self.meter.paused("seat")  # nobody is asked until the chair is taken (or a substitute plays)
        self._check_deserted()

    def _check_deserted(self) -> None:
        """Every remote player has left: ask nobody, and end the table unless one comes back
        within ``abandon_after`` seconds (a table does not run for nobody)."""
        after = self.policy.abandon_after
        if after is None or self._deserted is not None or self.done.done():
            return
        if any(c.occupant is not None and not isinstance(c.occupant, BotSeat) for c in self.chairs):
            return
        token = self._deserted = next(self._desert_tokens)
        log.info("table=%s event=table_deserted version=%d wait=%.1f", self.id, self.game.version, after)
        asyncio.get_running_loop().call_later(max(0.0, after), self._inbox.put_nowait, _Abandon(token))

    def _on_abandon(self, cmd: _Abandon) -> bool:
        if self._deserted != cmd.token:
            return False  # someone came back meanwhile
        Table.abandoned_total += 1
        self.status = TableStatus.ABANDONED
        log.warning(
            "table=%s event=table_abandoned actions=%d started=%s bots=%d abandoned_total=%d",
            self.id,
            len(self.game.actions),
            bool(self.game.actions),
            sum(isinstance(c.occupant, BotSeat) for c in self.chairs),
            Table.abandoned_total,
        )
        if self.recorder is not None:  # never restored, never rated
            aborted = getattr(self.recorder, "game_aborted", None)
            if aborted is not None:
                self._safe_record(aborted, self, "abandoned")
            else:
                self._safe_record(self.recorder.game_failed, self, "abandoned")
        self._close_all("abandoned: every player left")
        return True

    def _on_close(self, reason: str) -> bool:
        if self.game.over or self.done.done():
            return False
        self.status = TableStatus.CLOSED
        self.close_reason = reason
        actions = len(self.game.actions)
        log.warning("table=%s event=table_closed actions=%d reason=%s", self.id, actions, json.dumps(reason))
        if self.recorder is not None:  # never restored, never rated
            aborted = getattr(self.recorder, "game_aborted", None)
            self._safe_record(aborted or self.recorder.game_failed, self, reason)
        self._close_all(reason)
        return True

    def _schedule_substitute(self, seat: int) -> None:
        token = self.chairs[seat].away_token
        grace = self.policy.reconnect_grace
        if grace <= 0:
            self._on_substitute(_Substitute(seat, token))
        else:
            asyncio.get_running_loop().call_later(grace, self._inbox.put_nowait, _Substitute(seat, token))

    def _on_substitute(self, cmd: _Substitute) -> None:
        chair = self.chairs[cmd.seat]
        if chair.occupant is not None or chair.away_token != cmd.token or chair.substitute is not None:
            return
        bot = self.policy.substitute()
        chair.substitute = BotSeat(bot, random.Random(self.rng.getrandbits(32)), name=f"substitute-{bot.name}")
        self._sent_version[cmd.seat] = self._shown
        self._close_request(cmd.seat)  # _ask reopens it for the substitute
        log.info("table=%s seat=%d event=substitute bot=%s", self.id, cmd.seat, bot.name)

    def _on_watch(self, cmd: _Watch) -> None:
        if cmd.on:
            past = self.view_log(None)
            self.spectators.append(cmd.spectator)
            self._spect_version = self._shown
            try:
                if past:
                    cmd.spectator.on_events(self, past)
            except Exception:
                log.exception("table=%s event=spectator_error", self.id)
                self.spectators.remove(cmd.spectator)
            else:
                self._clock_to(cmd.spectator)
        elif cmd.spectator in self.spectators:
            self.spectators.remove(cmd.spectator)

    def _close_all(self, reason: str) -> None:
        for seat, chair in enumerate(self.chairs):
            for s in (chair.occupant, chair.substitute):
                if s is not None:
                    self._call(seat, s, s.on_closed, self, reason)

    def _call(self, seat: int, who: Seat, fn: Callable[..., None], *args: Any) -> None:
        """Run a seat callback; a seat that raises is detached, never the table."""
        try:
            fn(*args)
        except Exception as e:
            log.exception("table=%s seat=%d event=seat_error name=%s", self.id, seat, who.name)
            chair = self.chairs[seat]
            if chair.occupant is who:
                self._on_detach(_Detach(seat, who, f"seat error: {e!r}"))
            elif chair.substitute is who:
                chair.substitute = None

    def _safe_record(self, fn: Callable[..., None], *args: Any) -> None:
        try:
            fn(*args)
        except Exception:
            log.exception("table=%s event=recorder_error", self.id)


async def wait_closed(tables: Sequence[Table], timeout: float | None = None) -> None:
    """Wait for tables to end (tests and shutdown)."""
    futs = [t.done for t in tables if not t.done.done()]
    if futs:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.gather(*futs), timeout)


__all__ = [
    "SEATED",
    "BotSeat",
    "DecisionRequest",
    "OnBadAnswer",
    "OnDisconnect",
    "Recorder",
    "Seat",
    "SeatKind",
    "SeatStats",
    "Spectator",
    "Table",
    "TableEvent",
    "TableNotice",
    "TablePolicy",
    "TableStatus",
    "wait_closed",
]
