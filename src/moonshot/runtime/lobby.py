"""The matching engine: who plays with whom.

A player (any protocol) asks to play with a ``game_type`` and an optional ``lobby_code`` and says
whether it is a human or a bot:

* ``any``: anyone who also asked for ``any`` (same code); empty chairs are filled with moonshot
  bots once the first waiting player has waited ``fill_wait`` seconds (``None``: never fill);
* ``humans_only``: four humans; a bot asking for it is refused; nothing is ever filled;
* ``bots_only``: four bots (clients that say they are bots); never filled with moonshot bots.

The same ``lobby_code`` (and game type) puts players at the same table, four at a time; no code
means the public pool. Chairs are shuffled so arrival order does not pick the seat, except that a
player may ask for a chair (Trend's ``playerNumber``), which it gets when nobody else at the table
asked for it first. A candidate with ``exact_chair`` (Kierki's ``IAM<seat>``) sits in that chair
or waits: its pool keeps one queue per chair and a table forms when all four chairs have someone
waiting (the first of each), so a second player asking for a chair starts the next table; such
queues are never filled with bots. An exact-chair candidate that also says ``reseat`` (Kierki) is
offered a chair left free at a running table of its pool first (the one free longest); a chair
that empties there goes to the first player waiting for it, else stays free for the next asker.
The lobby keeps its own record of those tables' chairs (``Table.chair_hooks``), and gives a table
whose chairs all stay empty ``abandon_after`` seconds up (:class:`Reseat`).
Each protocol has its own pools: a candidate's ``protocol`` picks the table
starter (the rules: Sessions' game, Trend's ``trend``) and the bots that fill its tables.
The lobby runs in the event loop's thread; it has no lock because nothing else touches it.

Mixed tables: a ``router`` (the app's) sees every candidate first. A lobby code that names a
table someone else hosts (an HTTP game id, a tournament entrant's token) is claimed there, so
players from any protocol meet at it; the router raises :class:`LobbyError` with the reason when
the candidate's protocol cannot express that table's rules.

Paced starts: with ``pace`` (the server's :meth:`ClientGuard.start_table
<moonshot.runtime.limits.ClientGuard.start_table>`), a group of four (players, or players and
filling bots) starts only while each of its players' addresses (``Candidate.address``) may start
a table; otherwise it waits in its pool until they may (its players keep waiting, and one that
leaves meanwhile costs nothing). So one client asking for hundreds of tables at once gets a burst
of them and then a few a second, however many players it has waiting.
"""

from __future__ import annotations

import asyncio
import collections
import enum
import functools
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from moonshot.runtime.controls import Controls
from moonshot.runtime.table import Seat, SeatKind, Table

log = logging.getLogger("moonshot.lobby")


class GameType(enum.Enum):
    ANY = "any"
    HUMANS_ONLY = "humans_only"
    BOTS_ONLY = "bots_only"


class LobbyError(ValueError):
    """The request cannot be matched (a bot asking for humans_only, ...)."""


@dataclass(eq=False)
class Candidate:
    seat: Seat
    game_type: GameType
    lobby_code: str | None = None
    on_matched: Callable[[Table, int], None] = lambda table, seat: None
    joined_at: float = 0.0
    protocol: str = "sessions"  # its pools, its table starter (rules) and its filling bots
    chair: int | None = None  # the chair asked for (0..3), given when free
    token: str | None = None  # a secret the player holds besides the code (Trend's join token)
    exact_chair: bool = False  # this chair or none (Kierki): wait for a table where it is free
    reseat: Reseat | None = None  # a running table's free chair first (Kierki); with exact_chair
    # set by a protocol that can wait for its join's answer (Sessions): the router may then answer
    # later (``pending``), calling it with None (accepted) or the refusal's reason, as when the
    # code names a table on another process of a cluster (moonshot.cluster.mixed)
    settle: Callable[[str | None], None] | None = field(default=None, repr=False)
    pending: bool = False
    address: str | None = None  # its address's share key (the table rate: ``Lobby.pace``)

    @property
    def kind(self) -> SeatKind:
        return self.seat.kind


@dataclass(frozen=True)
class Reseat:
    """What a protocol whose tables keep a free chair for the next player asking for it (Kierki)
    says of them: a table whose every chair stays empty ``abandon_after`` seconds is stopped
    (``on_abandoned`` told first), rather than kept, and restored at every start, forever."""

    abandon_after: float | None = None
    on_abandoned: Callable[[Table], None] | None = None


class Reseating:
    """A running table whose free chairs go to the next player asking for them: who sits where as
    of the calls made (ahead of the table's task), and since when each chair is free."""

    def __init__(
        self, table: Table, key: _Key, seats: list[Seat | None], rules: Reseat, given_up: Callable[[Reseating], None]
    ) -> None:
        self.table = table
        self.key = key  # the pool whose players are offered its free chairs
        self.seats = seats
        self.rules = rules
        self.given_up = given_up
        now = asyncio.get_running_loop().time()
        self.left_at = [now] * 4
        self.abandon: asyncio.TimerHandle | None = None

    def free(self, chair: int) -> bool:
        return self.seats[chair] is None and not self.table.done.done()

    def arm(self) -> None:
        """Every chair empty: given up after ``abandon_after`` unless someone sits down."""
        after = self.rules.abandon_after
        if after is None or self.abandon is not None or any(s is not None for s in self.seats):
            return
        self.abandon = asyncio.get_running_loop().call_later(after, self._give_up)

    def disarm(self) -> None:
        if self.abandon is not None:
            self.abandon.cancel()
            self.abandon = None

    def _give_up(self) -> None:
        self.abandon = None
        if any(s is not None for s in self.seats) or self.table.done.done():
            return
        log.warning("event=table_given_up table=%s after_s=%s", self.table.id, self.rules.abandon_after)
        if self.rules.on_abandoned is not None:
            self.rules.on_abandoned(self.table)
        self.table.stop("abandoned: every seat empty")
        self.given_up(self)


@dataclass
class _Pool:
    members: list[Candidate] = field(default_factory=list)
    timer: asyncio.TimerHandle | None = None
    # exact-chair candidates, one first-come queue per chair
    chairs: tuple[collections.deque[Candidate], ...] = field(
        default_factory=lambda: tuple(collections.deque() for _ in range(4))
    )
    paced_until: float = 0.0  # a group here waits for its addresses' table rate until then

    def size(self) -> int:
        return len(self.members) + sum(len(q) for q in self.chairs)

    def full(self) -> list[Candidate] | None:
        """Four players who may start a table now (the first four, or the first of each chair)."""
        if len(self.members) >= 4:
            return self.members[:4]
        if all(self.chairs):
            return [q[0] for q in self.chairs]
        return None

    def take(self, group: list[Candidate]) -> None:
        """``group`` (as :meth:`full` or a fill gave it) leaves the pool for its table."""
        if self.members[:4] == group:
            del self.members[:4]
        else:
            for q in self.chairs:
                q.popleft()


_Key = tuple[str, GameType, str | None]  # (protocol, game type, lobby code)


class Router(Protocol):
    """Claims candidates whose lobby code names a table hosted elsewhere (mixed tables)."""

    def claim(self, c: Candidate) -> bool: ...

    def release(self, c: Candidate) -> bool: ...


class ChairRejoin(Protocol):
    """A cluster's re-join (:meth:`moonshot.cluster.node.Cluster.rejoin`): the chair indexed
    under ``key`` (a key the protocol computes: Sessions' session id, Trend's number and name)
    whose credential ``proof`` accepts, at a table on any process. ``seated(table, chair)``
    makes the protocol's seat for it (None: the connection went, the chair is given up);
    ``refused()`` when no chair is taken back."""

    def __call__(
        self,
        key: str,
        proof: Callable[[str], bool],
        protocol: str,
        seated: Callable[[Table, int], Seat | None],
        closed: Callable[[], bool],
        refused: Callable[[], None],
    ) -> None: ...


# start_table(seats) creates and starts a table for four seats (the app wires storage, policy...)
TableStarter = Callable[[list[Seat]], Table]


class Lobby:
    def __init__(
        self,
        start_table: TableStarter,
        make_bot: Callable[[], Seat],
        fill_wait: float | None = 5.0,
        rng: random.Random | None = None,
        starters: dict[str, TableStarter] | None = None,
        bots: dict[str, Callable[[], Seat]] | None = None,
    ) -> None:
        self.start_table = start_table  # the default (Sessions) starter
        self.make_bot = make_bot
        self.starters = dict(starters or {})  # other protocols' starters, by protocol name
        self.bots = dict(bots or {})
        self.fill_wait = fill_wait
        self.rng = rng or random.Random()
        self._pools: dict[_Key, _Pool] = {}
        self.matched = 0
        self.router: Router | None = None
        # pools whose fill time came: filled one a loop turn, so a thousand lone players whose
        # waits end together (one client's burst) start their tables between everyone's I/O
        self._fills: collections.deque[_Key] = collections.deque()
        self._filler: asyncio.Task[None] | None = None
        self._running: dict[_Key, list[Reseating]] = {}  # tables whose free chairs are offered
        # the operator's decisions (the server's ClientGuard's): a banned name gets no chair, and
        # while the server drains nobody starts a new game
        self.controls: Controls | None = None
        # how fast an address may start tables (the server's ClientGuard.start_table): the
        # seconds until a group of these addresses may start one (0: now, and counted)
        self.pace: Callable[[list[str]], float] | None = None
        self.paced = 0  # table starts put off by the pace

    def waiting(self) -> int:
        return sum(p.size() for p in self._pools.values())

    def admissible(self, c: Candidate) -> None:
        """``LobbyError`` when ``c`` may not wait here: the wrong kind of player for its game
        type, a banned name, or a server that drains (a cluster's lobby asks it too)."""
        if c.game_type is GameType.HUMANS_ONLY and c.kind is not SeatKind.HUMAN:
            raise LobbyError("humans_only games are for human players (say player_kind: human)")
        if c.game_type is GameType.BOTS_ONLY and c.kind is not SeatKind.BOT:
            raise LobbyError("bots_only games are for bots (say player_kind: bot)")
        if self.controls is not None:
            banned = self.controls.name_ban(c.seat.name)
            if banned is not None:
                self.controls.refused += 1
                raise LobbyError(banned.refusal())
            if self.controls.closed is not None:
                raise LobbyError(self.controls.closed)

    def join(self, c: Candidate) -> None:
        self.admissible(c)
        loop = asyncio.get_running_loop()
        c.joined_at = loop.time()
        if self.router is not None and self.router.claim(c):
            return
        key = (c.protocol, c.game_type, c.lobby_code)
        exact = c.exact_chair and c.chair is not None and 0 <= c.chair < 4
        if exact and c.reseat is not None and c.chair is not None:
            free = [r for r in self._running.get(key, ()) if r.free(c.chair)]
            if free:
                self._sit(min(free, key=lambda r: r.left_at[c.chair or 0]), c.chair, c)
                return
        pool = self._pools.setdefault(key, _Pool())
        if exact and c.chair is not None:
            pool.chairs[c.chair].append(c)
        else:
            pool.members.append(c)
        log.debug("event=lobby_join type=%s code=%s waiting=%d", c.game_type.value, c.lobby_code, pool.size())
        self._start_full(key, pool)
        self._arm(key, pool)

    def _paced(self, pool: _Pool, group: list[Candidate]) -> bool:
        """Must ``group`` wait for its addresses' table rate? (If not, the start is counted.)"""
        if self.pace is None:
            return False
        addresses = [c.address for c in group if c.address]
        wait = self.pace(addresses) if addresses else 0.0
        if not wait:
            return False
        self.paced += 1
        pool.paced_until = asyncio.get_running_loop().time() + wait
        log.debug("event=table_paced addresses=%s wait=%.2f", sorted(set(addresses)), wait)
        return True

    def _start_full(self, key: _Key, pool: _Pool) -> None:
        """Start a table for each group of four waiting in ``pool`` while their addresses may."""
        while (group := pool.full()) is not None and not self._paced(pool, group):
            pool.take(group)
            self._match(group, [], key[0])

    def leave(self, c: Candidate) -> bool:
        if self.router is not None and self.router.release(c):
            return True
        key = (c.protocol, c.game_type, c.lobby_code)
        pool = self._pools.get(key)
        if pool is None:
            return False
        if c in pool.members:
            pool.members.remove(c)
        elif c.chair is not None and 0 <= c.chair < 4 and c in pool.chairs[c.chair]:
            pool.chairs[c.chair].remove(c)
        else:
            return False
        self._arm(key, pool)
        return True

    def _arm(self, key: _Key, pool: _Pool) -> None:
        if pool.timer is not None:
            pool.timer.cancel()
            pool.timer = None
        if not pool.size():
            self._pools.pop(key, None)
            return
        loop = asyncio.get_running_loop()
        if pool.full() is not None:  # four waiting for their table rate: tried again then
            pool.timer = loop.call_at(pool.paced_until, self._fill, key)
            return
        fill_wait = self.fill_wait
        # exact-chair queues are never filled: those players wait for one another (Kierki)
        if key[1] is not GameType.ANY or fill_wait is None or not pool.members:
            return
        when = max(pool.members[0].joined_at + fill_wait, pool.paced_until)
        pool.timer = loop.call_at(when, self._fill, key)

    def _fill(self, key: _Key) -> None:
        self._fills.append(key)
        if self._filler is None or self._filler.done():
            self._filler = asyncio.get_running_loop().create_task(self._fill_in_turns(), name="lobby-fill")

    async def _fill_in_turns(self) -> None:
        while self._fills:
            try:
                self._fill_now(self._fills.popleft())
            except Exception:
                log.exception("event=fill_failed")
            await asyncio.sleep(0)  # the others' I/O runs between two tables

    def _fill_now(self, key: _Key) -> None:
        pool = self._pools.get(key)
        if pool is None or not pool.size():
            return
        pool.timer = None
        if pool.full() is not None:
            self._start_full(key, pool)
        elif pool.members and key[1] is GameType.ANY and not self._paced(pool, pool.members[:4]):
            group, pool.members = pool.members[:4], pool.members[4:]
            make_bot = self.bots.get(key[0], self.make_bot)
            bots = [make_bot() for _ in range(4 - len(group))]
            self._match(group, bots, key[0])
        self._arm(key, pool)

    def _match(self, group: list[Candidate], bots: list[Seat], protocol: str = "sessions") -> None:
        entries: list[tuple[Seat, Candidate | None]] = [(c.seat, c) for c in group] + [(b, None) for b in bots]
        self.rng.shuffle(entries)
        entries = honour_chairs(entries, lambda e: e[1].chair if e[1] is not None else None)
        try:
            table = self.starters.get(protocol, self.start_table)([s for s, _ in entries])
        except Exception:
            log.exception("event=table_start_failed")
            return
        self.matched += 1
        reseat = group[0].reseat if group else None
        if reseat is not None:
            self.reopen(table, (protocol, group[0].game_type, group[0].lobby_code), reseat, [s for s, _ in entries])
        for i, (_, c) in enumerate(entries):
            if c is not None:
                try:
                    c.on_matched(table, i)
                except Exception:
                    log.exception("event=on_matched_failed table=%s seat=%d", table.id, i)
                    table.detach(i, c.seat, "matching callback failed")
        log.info(
            "event=matched table=%s players=%s bots=%d",
            table.id,
            [s.name for s, _ in entries],
            len(bots),
        )

    # ---------------------------------------------------------- running tables with free chairs
    def running(self, protocol: str) -> list[Reseating]:
        """The running tables of ``protocol`` whose free chairs this lobby offers."""
        return [r for key, rs in self._running.items() if key[0] == protocol for r in rs]

    def reopen(self, table: Table, key: _Key, rules: Reseat, seats: list[Seat | None] | None = None) -> Reseating:
        """Offer ``table``'s free chairs to the players of pool ``key`` (a table it formed, or one
        restored with its chairs empty, waiting for their players)."""
        r = Reseating(table, key, list(seats) if seats is not None else [None] * 4, rules, self._given_up)
        self._running.setdefault(key, []).append(r)
        table.chair_hooks.append(functools.partial(self._chair, r))

        def done(_: object) -> None:
            r.disarm()
            running = self._running.get(key, [])
            if r in running:
                running.remove(r)
            if not running:
                self._running.pop(key, None)
            self._closed(r)

        table.done.add_done_callback(done)
        r.arm()
        return r

    def reseating(self, table_id: str) -> Reseating | None:
        """The running table ``table_id`` if this lobby offers its free chairs."""
        return next((r for rs in self._running.values() for r in rs if r.table.id == table_id), None)

    def _chair(self, r: Reseating, chair: int, occupant: Seat | None, taken: bool) -> None:
        """A chair of a reseating table is taken (whoever seated it) or left (``Table.chair_hooks``):
        a chair left goes to the first player waiting for it, else it is free from now on."""
        if taken:
            r.seats[chair] = occupant
            r.disarm()
            return
        current = r.seats[chair]
        if current is None or (occupant is not None and occupant is not current) or r.table.done.done():
            return
        r.seats[chair] = None
        r.left_at[chair] = asyncio.get_running_loop().time()
        self._offer(r, chair)
        r.arm()

    def _offer(self, r: Reseating, chair: int) -> None:
        """The first player of the table's pool waiting for ``chair`` takes it."""
        pool = self._pools.get(r.key)
        while pool is not None and pool.chairs[chair]:
            c = pool.chairs[chair].popleft()
            if not c.seat.gone:
                self._arm(r.key, pool)
                self._sit(r, chair, c)
                return
        if pool is not None:
            self._arm(r.key, pool)

    def _given_up(self, r: Reseating) -> None:
        """A reseating table whose chairs all stayed empty was stopped (a cluster forgets it)."""

    def _closed(self, r: Reseating) -> None:
        """A reseating table ended (a cluster takes its free chairs off the offer)."""

    def _sit(self, r: Reseating, chair: int, c: Candidate) -> None:
        """``c`` takes free chair ``chair`` of a running table: the chair's view is replayed to it."""
        r.seats[chair] = c.seat
        r.disarm()
        try:
            c.on_matched(r.table, chair)
        except Exception:
            log.exception("event=on_matched_failed table=%s seat=%d", r.table.id, chair)
            r.seats[chair] = None
            return
        r.table.attach(chair, c.seat, replay=True)
        log.info("event=reseated table=%s seat=%d name=%s", r.table.id, chair, c.seat.name)


E = TypeVar("E")


def honour_chairs(entries: list[E], want: Callable[[E], int | None]) -> list[E]:
    """A matched group's four chairs: each entry that asks for a chair (``want``) gets it if it
    is still free, first asker in the group's (shuffled) order; the others, bots included, keep
    that order in the chairs left. The cluster's pools place their tickets with it too."""
    placed: list[E | None] = [None, None, None, None]
    rest = []
    for e in entries:
        w = want(e)
        if isinstance(w, int) and 0 <= w < 4 and placed[w] is None:
            placed[w] = e
        else:
            rest.append(e)
    return [p if p is not None else rest.pop(0) for p in placed]


__all__ = [
    "Candidate",
    "ChairRejoin",
    "GameType",
    "Lobby",
    "LobbyError",
    "Reseat",
    "Reseating",
    "Router",
    "honour_chairs",
]
