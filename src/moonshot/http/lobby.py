"""The seed's lobby (``/lobby/*``): games proposed, joined, filled with bots, started with the
charging rules drawn from the proposals; lobby state and game chat kept in the store so a
restart loses nothing. Players of other protocols sit at its tables (mixed tables).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import json
import logging
import random
import secrets
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sse_starlette import EventSourceResponse
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from moonshot.bots.base import Bot
from moonshot.core.engine import DealSpec, Game
from moonshot.core.rules import Rules
from moonshot.core.variants import TURBO_VARIANTS, find_variant
from moonshot.http import upkeep
from moonshot.http.endpoints import endpoint, read_body
from moonshot.http.games import HostedGame
from moonshot.http.identity import Caller, Identity
from moonshot.http.limits import client_address
from moonshot.http.names import (
    BOT_SUFFIX,
    NAME_PREFIX,
    name_key,
    same_name,
)
from moonshot.http.review import hint_refusal
from moonshot.http.streams import PING_SECONDS, GameStream
from moonshot.http.upkeep import LobbyEvent
from moonshot.protocols.turbo.codec import (
    CHARGING_NAMES,
    Player,
    RequestError,
    TurboTranslator,
    field_int,
    field_str,
    parse_charging,
    parse_chat,
)
from moonshot.protocols.turbo.seat import PEOPLE_POLICY, TurboSeat
from moonshot.runtime.clock import CLOCK_CHOICES, ClockError, parse_clock
from moonshot.runtime.limits import ClientGuard, Hold
from moonshot.runtime.lobby import Candidate, LobbyError
from moonshot.runtime.mixed import refusal
from moonshot.runtime.table import (
    BotSeat,
    Recorder,
    Seat,
    Table,
    TableNotice,
    TablePolicy,
    TableStatus,
)

log = logging.getLogger("moonshot.turbo")

KEEP_FINISHED = 200  # finished games kept in memory for late subscribers


GAME_VARIANTS = ("turbo", "standard", "omnibus", "trend", "kierki")


BOT_NAMES = (
    "ada", "basil", "cleo", "dora", "emil", "fern", "gus", "hana", "ivo", "juno", "kit", "lola",
    "milo", "nora", "otto", "pia", "quinn", "rosa", "sol", "tova", "uma", "vic", "wren", "zed",
)  # fmt: skip


# ---------------------------------------------------------------- the lobby
@dataclass
class Member:
    name: str
    kind: str = "human"  # "human" | "bot"
    algorithm: str | None = None
    rules: str = "classic"  # the charging rules this member proposed
    # a player that came over another protocol (mixed tables): its seat and how to tell it
    # where it sits; never persisted (its connection does not outlive the process)
    remote: Candidate | None = field(default=None, repr=False, compare=False)
    # the share key of the client that sat it down (a person's request, a remote player's
    # connection): its table rate is asked when the game starts; never persisted
    address: str | None = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "algorithm": self.algorithm, "rules": self.rules}

    def player_json(self) -> dict[str, Any]:
        """The member as the lobby stream lists it: ``{type, name}`` (and a bot's ``algorithm``),
        the seed-era server's player objects, the shape of ``sit``'s players."""
        return lobby_player(self.name, self.kind, self.algorithm)


def lobby_player(name: str, kind: str = "human", algorithm: str | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"type": kind, "name": name}
    if kind == "bot" and algorithm:
        d["algorithm"] = algorithm
    return d


@dataclass
class LobbyGame:
    id: str
    variant: str  # "turbo" or another moonshot variant
    seed: int
    created_by: str
    members: list[Member] = field(default_factory=list)
    created_at: float = field(default_factory=time.time)
    stream: GameStream | None = None
    hosted: HostedGame | None = None
    finished: bool = False
    # a practice game (POST /lobby/new "practice": true): the creator and its own bots, unrated,
    # hints allowed; only such a game may have a seed its creator named
    practice: bool = False
    # spectators see every hand while the game runs: unrated
    open_hands: bool = False
    # seconds a person has a decision (moonshot.runtime.clock); None: no clock
    clock: float | None = None
    # the creator's shares of open games (per name, per address): given back when it starts or goes
    holds: list[Hold] = field(default_factory=list, repr=False, compare=False)
    touched: float = 0.0  # wall time of the last join or leave (0: created_at); expiry counts from it

    def names(self) -> list[str]:
        return [m.name for m in self.members]

    def players(self) -> list[dict[str, Any]]:
        return [m.player_json() for m in self.members]

    @property
    def rated(self) -> bool:
        return not (self.practice or self.open_hands)

    def to_json(self) -> dict[str, Any]:
        """What the store keeps of an open game (the seed with it: never sent to a client)."""
        return {
            "id": self.id,
            "variant": self.variant,
            "seed": self.seed,
            "created_by": self.created_by,
            "members": [m.to_json() for m in self.members if m.remote is None],
            "created_at": self.created_at,
            "practice": self.practice,
            "open_hands": self.open_hands,
            "clock": self.clock,
        }


@dataclass
class LobbyOptions:
    open_names: bool = False
    seed: int | None = None  # fixes game seeds (tests)
    # origins besides the server's own whose pages may send state-changing requests
    # (``--allowed-origin``: a deployment behind a proxy; see moonshot.http.origin)
    allowed_origins: tuple[str, ...] = ()
    # POST /lobby/new may give "seed" with "practice": true (only the creator's bots join it, unrated)
    allow_seed: bool = True
    # anyone not seated sees every hand of a running game (Turbo's own trust model; --open-names
    # implies it); else spectators see only what is public until the game ends
    open_spectators: bool = False
    # the clocks a new game may have (moonshot.runtime.clock); None: any seconds in its bounds (tests)
    clock_choices: tuple[float, ...] | None = CLOCK_CHOICES

    def __post_init__(self) -> None:
        if self.open_names:
            self.open_spectators = True


def _open_game(key: str, data: Any) -> LobbyGame | None:
    """An open game as the store keeps it (``turbo:open:<id>``); None, with a log line, when the
    value is not one."""
    if data is None:
        return None
    try:
        return LobbyGame(
            id=str(data["id"]),
            variant=str(data["variant"]),
            seed=int(data["seed"]),
            created_by=str(data["created_by"]),
            members=[Member(**m) for m in data["members"]],
            created_at=float(data["created_at"]),
            practice=bool(data.get("practice", False)),
            open_hands=bool(data.get("open_hands", False)),
            clock=float(data["clock"]) if data.get("clock") else None,
        )
    except (KeyError, TypeError, ValueError):
        log.warning("event=bad_open_game key=%s", key)
        return None


class TurboLobby:
    """The Turbo lobby and every game it hosts (a :class:`GameHost`).

    The lobby's streams cost each subscriber O(1) per event: a new subscriber gets ``lobby_state``
    once, then only changes (``join_lobby``, ``new_game``, ...), each encoded once for all of them
    (:class:`LobbyEvent`), and a stream writes whatever is queued in one chunk. With a
    :class:`~moonshot.runtime.limits.ClientGuard` (``guard``), a name and an address hold a bounded
    number of open games, open games nobody joins expire after ``game_expiry`` seconds (gone from
    the store too), and a lobby stream under a name idle for ``lobby_idle`` seconds is ended.
    """

    def __init__(
        self,
        *,
        secret: str,
        make_bot: Callable[[str], Bot],
        bot_names: Sequence[str],
        recorder: Recorder | None = None,
        store: Any = None,
        options: LobbyOptions | None = None,
        deals_for: Callable[[LobbyGame], Sequence[DealSpec] | None] | None = None,
        track: Callable[[Table], object] | None = None,
        mixed_policy: TablePolicy | None = None,
    ) -> None:
        self.options = options or LobbyOptions()
        # a table with players from other protocols: their deadlines and disconnects follow
        # the server's policy; the people in browsers (patient seats) have only the game's clock
        self.mixed_policy = mixed_policy or TablePolicy()
        self._identity = Identity(secret, self.options.open_names, self.holds, self._bound, self._stored_name)
        self._identity.admit_new = self._admit_name
        self.make_bot = make_bot
        self.bot_names = list(bot_names)
        self.recorder = recorder
        self.store = store
        self.deals_for = deals_for  # tests: stacked deals for a game
        self.track: Callable[[Table], object] = track or Table.start
        self.games: dict[str, LobbyGame] = {}
        self.subscribers: dict[str, list[asyncio.Queue[dict[str, Any] | None]]] = {}
        self.rng = random.Random(self.options.seed)
        self.finished = 0
        self.tournaments: Any = None  # the server's TournamentHost (the /api/tournaments routes)
        self.rematches: Any = None  # the rematch offers (moonshot.http.rematch), once its routes exist
        self.reviews: Any = None  # the server's ReviewPool (moonshot.http.review); None: reviews are off
        # the other server processes of a cluster (moonshot.http.peers.HttpPeers): lobby
        # events and name bindings go to them, games started here enter the cluster's directory
        self.peers: Any = None
        self._marking: set[asyncio.Task[None]] = set()
        self.guard: ClientGuard | None = None  # per-client shares (moonshot serve sets it)
        self.seen: dict[str, float] = {}  # name -> monotonic time of its last lobby request
        self.expired = 0  # open games expired
        self._sweeper: asyncio.Task[None] | None = None

    def _bound(self, key: str, record: dict[str, Any]) -> None:
        self._put(NAME_PREFIX + key, record)
        if self.peers is not None:
            self.peers.bound(key, record)

    def _admit_name(self) -> float:
        """A name nobody had, bound by the request being handled: its address's rate of new names."""
        if self.guard is None:
            return 0.0
        self._identity.tarpit = self.guard.limits.tarpit  # the guard is given after the lobby is made
        return self.guard.new_name(client_address.get())

    async def _stored_name(self, key: str) -> Any:
        """The store's binding of a name (None: none, or no store)."""
        if self.store is None:
            return None
        await self.flush()  # this process's own writes first
        return await self.store.get_value(NAME_PREFIX + key)

    @property
    def identity(self) -> Identity:
        return self._identity

    # ------------------------------------------------------------ GameHost
    def find_stream(self, game_id: str) -> GameStream | None:
        g = self.games.get(game_id)
        return g.stream if g is not None else None

    def find_game(self, game_id: str) -> HostedGame | None:
        g = self.games.get(game_id)
        return g.hosted if g is not None else None

    def holds(self, name: str) -> bool:
        """A name is held while it has a lobby stream open or sits (as a person) in an open or
        running game: then only the browser that holds its session cookie may use it."""
        key = name_key(name)
        if any(qs and name_key(n) == key for n, qs in self.subscribers.items()):
            return True
        return any(
            not g.finished and any(m.kind == "human" and name_key(m.name) == key for m in g.members)
            for g in self.games.values()
        )

    # ------------------------------------------------------------ lobby events
    def broadcast(self, event: dict[str, Any], skip: str | None = None, local: bool = False) -> None:
        """To every lobby stream here and (unless ``local``) on the cluster's other processes."""
        if self.peers is not None and not local:
            self.peers.broadcast(event)
        event = event if isinstance(event, LobbyEvent) else LobbyEvent(event)
        for name, queues in self.subscribers.items():
            if name == skip:
                continue
            for q in queues:
                q.put_nowait(event)

    def lobby_state(self) -> dict[str, Any]:
        return LobbyEvent(
            {
                "type": "lobby_state",
                "subscribers": sorted(n for n, qs in self.subscribers.items() if qs),
                "games": {
                    **(self.peers.games() if self.peers is not None else {}),
                    **{g.id: g.players() for g in self.games.values() if not g.finished},
                },
            }
        )

    def subscribe_lobby(self, name: str) -> asyncio.Queue[dict[str, Any] | None]:
        q: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.seen[name] = time.monotonic()
        first = not self.subscribers.get(name)
        self.subscribers.setdefault(name, []).append(q)
        if first:
            self.broadcast({"type": "join_lobby", "player": name, "name": name}, skip=name)
        q.put_nowait(self.lobby_state())
        return q

    def unsubscribe_lobby(self, name: str, q: asyncio.Queue[dict[str, Any] | None]) -> None:
        queues = self.subscribers.get(name, [])
        if q in queues:
            queues.remove(q)
        if not queues:
            self.subscribers.pop(name, None)
            self.seen.pop(name, None)
            self.broadcast({"type": "leave_lobby", "player": name, "name": name})

    # ------------------------------------------------------------ expiry (moonshot.http.upkeep)
    def start_sweeper(self) -> None:
        """Expire open games and idle lobby streams now and then (with a ``guard``)."""
        if self.guard is not None and self._sweeper is None:
            self._sweeper = asyncio.get_running_loop().create_task(sweep_forever(self), name="lobby-sweeper")

    def sweep(self, wall: float, mono: float) -> None:
        sweep(self, wall, mono)

    def close(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
        for queues in self.subscribers.values():
            for q in queues:
                q.put_nowait(None)
        for g in self.games.values():
            if g.stream is not None:
                g.stream.close()

    # ------------------------------------------------------------ persistence
    # Writes go through the store's single writer (the recorder's queue), in order with the
    # games' rows: never two SQLite transactions at once, and a request never waits for the disk.
    def _put(self, key: str, value: Any) -> None:
        if self.recorder is not None and hasattr(self.recorder, "put_value"):
            self.recorder.put_value(key, value)

    def _delete(self, key: str) -> None:
        if self.recorder is not None and hasattr(self.recorder, "delete_value"):
            self.recorder.delete_value(key)

    def _save_open(self, g: LobbyGame) -> None:
        self._put(f"turbo:open:{g.id}", g.to_json())

    def _drop_open(self, g: LobbyGame) -> None:
        for h in g.holds:  # started or gone: no longer one of its creator's open games
            h.release()
        self._delete(f"turbo:open:{g.id}")
        if self.peers is not None and g.id not in self.games:
            self.peers.dropped(g.id)  # gone (not started): no process hosts it any more

    def _save_chat(self, hosted: HostedGame) -> None:
        self._put(f"turbo:chat:{hosted.id}", hosted.stream.chat_log)

    async def flush(self) -> None:
        """Wait until everything queued for the store is written."""
        flush = getattr(self.recorder, "flush", None)
        if flush is not None:
            await flush()

    async def load_open(self, claim: Callable[[str], Awaitable[bool]] | None = None) -> None:
        """Open games (not yet four players) kept in the store by an earlier run (in a cluster,
        those that ``claim`` gives this process: no other live process holds them)."""
        if self.store is None:
            return
        await self.load_names()
        for key, data in (await self.store.values("turbo:open:")).items():
            g = _open_game(key, data)
            if g is None or (claim is not None and not await claim(g.id)):
                continue
            expiry = self.guard.limits.game_expiry if self.guard is not None else 0.0
            if expiry > 0 and time.time() - g.created_at > expiry:
                self._delete(key)  # expired while the server was down: it does not come back
                log.info("event=open_game_expired game=%s players=%d at=start", g.id, len(g.members))
                continue
            g.stream = GameStream(g.id)
            self.games[g.id] = g

    async def load_names(self) -> None:
        """The name bindings kept in the store. Bindings kept under a name as typed (before names
        were compared casefolded) move to the name's key, and names that have played rated
        games (the ``ratings`` table) are marked so."""
        if self.store is None:
            return
        kept = await self.store.values(NAME_PREFIX)
        self._identity.load_bindings({k.removeprefix(NAME_PREFIX): v for k, v in kept.items()})
        rated = {name_key(n) for n in await self.store.rated_people()}
        for k in kept:
            key = k.removeprefix(NAME_PREFIX)
            rec = self._identity.record(key)
            if rec is None:
                continue
            if name_key(rec.name) in rated and not rec.rated:
                self._identity.mark_rated(rec.name)
            elif key != name_key(key) or not isinstance(kept[k], dict):
                self._bound(name_key(key), rec.to_json())
            if key != name_key(key):
                self._delete(k)

    def _rated_later(self, table: Table, people: list[str]) -> None:
        """Once a finished game is rated in the store, its people's names stay with their browsers."""
        if self.store is None or not people or self._identity.open_names:
            return
        keys = {name_key(n) for n in people}

        async def mark() -> None:
            try:
                await self.flush()
                for name in await self.store.rated_in(table.id):
                    if name_key(name) in keys:
                        self._identity.mark_rated(name)
            except Exception:  # the store went away (shutdown): the next start reads the ratings
                log.warning("event=rated_names_unknown game=%s", table.id)

        task = asyncio.get_running_loop().create_task(mark())
        self._marking.add(task)
        task.add_done_callback(self._marking.discard)

    async def adopt_open(self, game_id: str) -> bool:
        """An open game another process held (it died): from the store into this lobby. False
        when the store does not have it (never written, or started or gone since)."""
        if self.store is None or game_id in self.games:
            return False
        g = _open_game(game_id, await self.store.get_value(f"turbo:open:{game_id}"))
        if g is None or g.id != game_id:
            return False
        g.stream = GameStream(g.id)
        self.games[g.id] = g
        log.info("event=open_game_adopted game=%s players=%d", g.id, len(g.members))
        return True

    async def restore_running(
        self,
        rec: Any,
        restored_table: Callable[..., Table],
        chairs: dict[int, Seat | None] | None = None,
        policy: TablePolicy | None = None,
    ) -> Table | None:
        """Rebuild a running Turbo game from its store record: people get their chairs back by
        name (their next request finds them), bots are re-created by algorithm. ``chairs``: the
        seats of other protocols' players that a cluster's adopter keeps (None: empty until the
        player resumes), shown as programs of their protocol as before; ``policy`` replaces the
        people's (no deadlines) for such a mixed game."""
        chairs = chairs or {}
        algorithms = json.loads(rec.meta.get("algorithms", "[]") or "[]")
        members = []
        for s, p in enumerate(rec.players):
            name = str(p.get("name", ""))
            if s in chairs:
                members.append(Member(name, "bot", str(p.get("protocol", "program"))))
                continue
            kind = str(p.get("kind", "human"))
            alg = algorithms[s] if s < len(algorithms) else None
            if p.get("protocol") in ("sessions", "trend", "kierki"):
                kind = "bot"  # a remote player's connection is gone: a bot plays its chair
            members.append(Member(name, "bot" if kind == "bot" else "human", alg or None))
        g = LobbyGame(
            id=rec.id,
            variant=str(rec.meta.get("lobby_variant", "turbo")),
            seed=rec.seed,
            created_by=members[0].name,
            members=members,
            practice=bool(rec.meta.get("practice", False)),
            open_hands=bool(rec.meta.get("open_hands", False)),
            clock=float(rec.meta["clock"]) if rec.meta.get("clock") else None,
        )
        g.stream = GameStream(g.id)
        chats: list[dict[str, Any]] = []
        if self.store is not None:
            chats = await self.store.get_value(f"turbo:chat:{rec.id}") or []
        seats = [chairs[s] if s in chairs else self._seat_for(m) for s, m in enumerate(members)]
        table = restored_table(rec, seats, self.clocked(g, policy or PEOPLE_POLICY))
        self._host(g, table, chats)
        return table

    # ------------------------------------------------------------ lobby actions
    def _game(self, body: dict[str, Any]) -> LobbyGame:
        game_id = field_str(body, "id", max_len=100)
        assert game_id is not None
        g = self.games.get(game_id)
        if g is None:
            raise RequestError(404, f"no game {game_id!r}", "no_game", {"id": game_id})
        return g

    def new_game(self, name: str, body: dict[str, Any]) -> str:
        rules = parse_charging(field_str(body, "rules", required=False, max_len=20))
        variant = (field_str(body, "variant", required=False, max_len=20) or "turbo").lower()
        if variant not in GAME_VARIANTS:
            raise RequestError(
                400,
                f"unknown variant {variant!r}; known: {', '.join(GAME_VARIANTS)}",
                "unknown_variant",
                {"variant": variant},
            )
        seed = field_int(body, "seed") if self.options.allow_seed else None
        open_hands = body.get("open_hands", False)
        if not isinstance(open_hands, bool):
            raise RequestError(400, "field 'open_hands' must be true or false", "bad_field", {"field": "open_hands"})
        # a practice game is asked for by name: unrated, only the creator's own bots join it, and
        # the table offers hints (moonshot.http.review.hint_refusal checks this field)
        practice = body.get("practice", False)
        if not isinstance(practice, bool):
            raise RequestError(400, "field 'practice' must be true or false", "bad_field", {"field": "practice"})
        # a seed named by the creator would let the creator know every hand: only a practice game
        # may have one
        if seed is not None and not practice:
            raise RequestError(
                400,
                'a seed may be named only for a practice game ("practice": true): its creator would know every hand',
                "seed_needs_practice",
            )
        if seed is None:
            seed = self.rng.getrandbits(62) if self.options.seed is not None else secrets.randbits(62)
        game_id = (
            str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
            if self.options.seed is not None
            else str(uuid.uuid4())
        )
        g = LobbyGame(game_id, variant, seed, name, practice=practice, open_hands=open_hands)
        try:
            g.clock = parse_clock(body.get("clock"), rated=g.rated, choices=self.options.clock_choices)
        except ClockError as e:
            raise RequestError(400, str(e), e.code, e.params) from None
        g.holds = upkeep.open_game_shares(self.guard, name)
        g.members.append(Member(name, rules=CHARGING_NAMES[rules], address=client_address.get() or None))
        g.stream = GameStream(g.id)
        self.games[g.id] = g
        if self.peers is not None:
            self.peers.hosting(g.id)
        self.broadcast({"type": "new_game", "id": g.id, "player": name, "name": name, "clock": g.clock})
        self._save_open(g)
        log.info("event=new_game game=%s variant=%s by=%s clock=%s", g.id, variant, name, g.clock)
        return g.id

    def join(self, name: str, body: dict[str, Any]) -> list[str]:
        g = self._game(body)
        rules = parse_charging(field_str(body, "rules", required=False, max_len=20))
        if any(same_name(m.name, name) for m in g.members):
            raise RequestError(409, f"{name} is already in this game", "already_in_game", {"name": name})
        if g.practice:
            raise RequestError(403, "a practice game takes only its creator's bots", "practice_game")
        self._add(g, Member(name, rules=CHARGING_NAMES[rules], address=client_address.get() or None))
        return g.names()

    def add_bot(self, name: str, body: dict[str, Any]) -> str:
        g = self._game(body)
        rules = parse_charging(field_str(body, "rules", required=False, max_len=20))
        algorithm = field_str(body, "algorithm", required=False, max_len=40) or "random"
        if algorithm not in self.bot_names:
            raise RequestError(
                400,
                f"unknown algorithm {algorithm!r}; known: {', '.join(self.bot_names)}",
                "unknown_bot",
                {"bot": algorithm},
            )
        if not any(same_name(m.name, name) for m in g.members):
            raise RequestError(403, f"{name} is not in this game", "not_in_game", {"name": name})
        if g.practice and not same_name(name, g.created_by):
            raise RequestError(403, "only the creator adds bots to a practice game", "practice_creator_only")
        taken = set(g.names())
        choices = [n + BOT_SUFFIX for n in BOT_NAMES if n + BOT_SUFFIX not in taken]
        bot_name = self.rng.choice(choices)
        self._add(g, Member(bot_name, "bot", algorithm, CHARGING_NAMES[rules]))
        return bot_name

    def _add(self, g: LobbyGame, member: Member) -> None:
        if g.hosted is not None or g.finished:
            raise RequestError(409, "the game has already started", "game_started")
        if len(g.members) >= 4:
            raise RequestError(409, "the game is full", "game_full")
        if len(g.members) == 3:  # it starts: each of its players' addresses' table rate (429 over it)
            upkeep.table_turn(self.guard, [m.address for m in (*g.members, member)], g.id)
        g.members.append(member)
        g.touched = time.time()
        # ``player`` as the seed-era server sent it (an object), ``name`` beside it (docs/turbo.md)
        self.broadcast({"type": "join_game", "id": g.id, "player": member.player_json(), "name": member.name})
        if len(g.members) == 4:
            self._drop_open(g)
            self._start(g)
        else:
            self._save_open(g)

    # ------------------------------------------------------------ mixed tables
    def join_remote(self, c: Candidate) -> bool:
        """A player from another protocol whose lobby code is this lobby's game id takes a
        chair there; False when the code names no game here. Raises :class:`LobbyError` when
        the game cannot take it (started, full, rules its protocol cannot express)."""
        g = self.games.get(c.lobby_code or "")
        if g is None:
            return False
        if g.hosted is not None and g.hosted.table.game.over and self.rematches is not None:
            return bool(self.rematches.join_remote(g, c))  # a finished game's next one (http.rematch)
        if g.hosted is not None or g.finished:
            raise LobbyError(f"game {g.id} has already started")
        if g.practice:
            raise LobbyError(f"game {g.id} is a practice game: it takes only its creator's bots")
        why = refusal(c.protocol, find_variant(g.variant))
        if why is not None:
            raise LobbyError(f"{why}: it cannot join game {g.id}")
        if any(m.name == c.seat.name for m in g.members):
            raise LobbyError(f"{c.seat.name} is already in game {g.id}")
        member = Member(c.seat.name, c.seat.kind.value, None, remote=c, address=c.address)
        try:
            self._add(g, member)
        except RequestError as e:
            raise LobbyError(f"{e}: game {g.id}") from None
        log.info("event=remote_joined game=%s protocol=%s name=%s", g.id, c.protocol, c.seat.name)
        return True

    def leave_remote(self, c: Candidate) -> bool:
        """A remote player that has not started playing leaves (its connection closed)."""
        if self.rematches is not None and self.rematches.leave_remote(c):
            return True  # its join for a rematch (a chair's decline)
        for g in list(self.games.values()):
            if g.hosted is None and not g.finished and any(m.remote is c for m in g.members):
                g.members = [m for m in g.members if m.remote is not c]
                self.broadcast({"type": "leave_game", "id": g.id, "player": c.seat.name, "name": c.seat.name})
                if not any(m.kind == "human" or m.remote is not None for m in g.members):
                    for m in g.members:  # nobody left to play: the game goes, as in leave()
                        self.broadcast({"type": "leave_game", "id": g.id, "player": m.name, "name": m.name})
                    del self.games[g.id]
                    if g.stream is not None:
                        g.stream.close()
                    self._drop_open(g)
                return True
        return False

    def leave(self, name: str, body: dict[str, Any]) -> None:
        g = self._game(body)
        if g.hosted is not None or g.finished:
            raise RequestError(409, "the game has started: it cannot be left", "game_started_no_leave")
        if not any(same_name(m.name, name) for m in g.members):
            raise RequestError(409, f"{name} is not in this game", "not_in_game", {"name": name})
        g.members = [m for m in g.members if not same_name(m.name, name)]
        g.touched = time.time()
        self.broadcast({"type": "leave_game", "id": g.id, "player": name, "name": name})
        if not any(m.kind == "human" or m.remote is not None for m in g.members):
            # nobody left to play: the game goes (its bots with it); players from other
            # protocols waiting in it keep it open (for someone to join), until they leave
            for m in g.members:
                self.broadcast({"type": "leave_game", "id": g.id, "player": m.name, "name": m.name})
            del self.games[g.id]
            if g.stream is not None:
                g.stream.close()
            self._drop_open(g)
        else:
            self._save_open(g)

    def lobby_chat(self, name: str, body: dict[str, Any]) -> None:
        self.broadcast({"type": "chat", "name": name, "message": parse_chat(body)})

    # ------------------------------------------------------------ starting a game
    def rules_for(self, g: LobbyGame) -> tuple[Rules, list[Member]]:
        """The game's rules and its members in chair order (N, E, S, W).

        Turbo: the charging rules are drawn from the four proposals (reproducibly from the game's
        seed) and the proposer sits north, the others after in the order they joined. Other
        variants: chairs in the order of joining."""
        members = list(g.members)
        if g.variant != "turbo":
            return find_variant(g.variant), members
        pick = random.Random(g.seed ^ 0x7B0).randrange(4)
        chairs = members[pick:] + members[:pick]
        order = parse_charging(members[pick].rules)
        return TURBO_VARIANTS[order], chairs

    def start_now(self, g: LobbyGame, rules: Rules) -> None:
        """Start ``g`` at once with ``rules`` and its members in their chairs as they are (a
        rematch: the same game again, seats rotated), telling the lobby as a new game that filled."""
        self.games[g.id] = g
        if self.peers is not None:
            self.peers.hosting(g.id)
        first = g.members[0].name
        self.broadcast({"type": "new_game", "id": g.id, "player": first, "name": first, "clock": g.clock})
        for m in g.members[1:]:
            self.broadcast({"type": "join_game", "id": g.id, "player": m.player_json(), "name": m.name})
        self._start(g, (rules, list(g.members)))

    def clocked(self, g: LobbyGame, policy: TablePolicy) -> TablePolicy:
        """``policy`` with the game's clock: its people have ``g.clock`` seconds a decision, then
        the table's bot plays for them: the algorithm of the game's first bot, else ``heuristic``
        (a mixed table's: the server's bot, which also plays its programs' empty chairs)."""
        if g.clock is None:
            return policy
        if any(m.remote is not None for m in g.members):
            return dataclasses.replace(policy, clock=g.clock)  # a mixed table keeps the server's bot
        algorithm = next((m.algorithm for m in g.members if m.kind == "bot" and m.algorithm), None)
        if algorithm not in self.bot_names:
            algorithm = "heuristic" if "heuristic" in self.bot_names else (self.bot_names or ["random"])[0]
        return dataclasses.replace(policy, clock=g.clock, substitute=functools.partial(self.make_bot, algorithm))

    def _seat_for(self, m: Member) -> Seat:
        if m.remote is not None:
            return m.remote.seat
        if m.kind == "bot":
            bot = self.make_bot(m.algorithm or "random")
            return BotSeat(bot, random.Random(self.rng.getrandbits(32)), name=m.name)
        return TurboSeat(m.name)

    def _start(self, g: LobbyGame, fixed: tuple[Rules, list[Member]] | None = None) -> None:
        rules, chairs = fixed if fixed is not None else self.rules_for(g)
        g.members = chairs
        seats = [self._seat_for(m) for m in chairs]
        remote = [m.remote is not None for m in chairs]
        meta: dict[str, Any] = {
            "protocol": "turbo",
            # a remote player's chair is a bot's if the game is restored (its connection is gone)
            "algorithms": json.dumps([m.algorithm or ("heuristic" if m.remote else "") for m in chairs]),
            "lobby_variant": g.variant,
        }
        if any(remote):
            meta["mixed"] = True
        if g.practice:
            meta["practice"] = True
        if g.open_hands:
            meta["open_hands"] = True
        if not g.rated:
            meta["unrated"] = True
        if g.clock is not None:
            meta["clock"] = g.clock
        policy = self.clocked(g, self.mixed_policy if any(remote) else PEOPLE_POLICY)
        table = Table(rules, seats, seed=g.seed, policy=policy, table_id=g.id, recorder=self.recorder, meta=meta)
        if self.deals_for is not None:
            deals = self.deals_for(g)
            if deals is not None:
                table.game = Game(rules, g.seed, deals)
        if self.peers is not None:
            self.peers.started(table)
        self._host(g, table, [])
        for chair, m in enumerate(chairs):
            if m.remote is not None:  # before the table's first turn: it runs in its own task
                try:
                    m.remote.on_matched(table, chair)
                except Exception:
                    log.exception("event=on_matched_failed game=%s seat=%d", g.id, chair)
                    table.detach(chair, m.remote.seat, "matching callback failed")
        log.info("event=game_started game=%s rules=%s players=%s", g.id, rules.name, [m.name for m in chairs])

    def _host(self, g: LobbyGame, table: Table, chats: Sequence[dict[str, Any]]) -> None:
        # a remote player is shown as a program of its protocol, and no browser can act for it
        # (HostedGame.seat_of matches people only)
        players = [
            Player(m.name, "bot", m.remote.protocol) if m.remote is not None else Player(m.name, m.kind, m.algorithm)
            for m in g.members
        ]
        stream = g.stream or GameStream(g.id)
        g.stream = stream
        stream.open = self.options.open_spectators or g.open_hands
        translator = TurboTranslator(table.rules, table.seed, players, table.game.deal_specs)
        # the table page's Hint button: a practice game of one person and its own bots (http.review)
        translator.sit_fields["hints"] = self.reviews is not None and hint_refusal(g, None, self.bot_names) is None
        stream.restore_chat(chats)
        stream.start(translator)
        g.hosted = HostedGame(g.id, table, players, stream, self._save_chat)
        self.games[g.id] = g
        self.track(table)
        table.watch(self.peers.spectator(stream) if self.peers is not None else stream)
        table.done.add_done_callback(functools.partial(self._table_done, g))

    def show_table(self, table: Table, people: set[int]) -> None:
        """Host a table someone else started (a tournament game) for the game routes and the
        web app: the chairs in ``people`` are played through HTTP by the person of that name;
        the others are shown as programs. Call it before the table starts."""
        names = table.seat_names()
        members = [
            Member(n, "human" if i in people else "bot", None if i in people else "program")
            for i, n in enumerate(names)
        ]
        g = LobbyGame(table.id, table.rules.name, table.seed, names[min(people)] if people else "", members)
        players = [Player(m.name, m.kind, m.algorithm) for m in members]
        g.stream = GameStream(g.id)
        g.stream.open = self.options.open_spectators and table.reveal_at_end
        g.stream.sealed = not table.reveal_at_end
        g.stream.start(TurboTranslator(table.rules, table.seed, players, table.game.deal_specs))
        g.hosted = HostedGame(g.id, table, players, g.stream, self._save_chat)
        self.games[g.id] = g
        table.watch(g.stream)
        table.done.add_done_callback(functools.partial(self._table_done, g))

    def _table_done(self, g: LobbyGame, _: object = None) -> None:
        table = g.hosted.table if g.hosted is not None else None
        if table is not None and g.hosted is not None and table.status is TableStatus.CLOSED:
            # closed by the operator: its people read why in the game's chat, its stream ends
            why = table.close_reason or "closed by the operator"
            g.hosted.stream.on_notice(table, TableNotice("closed", "operator", why))
            g.hosted.stream.close()
        elif table is None or not table.game.over:
            return  # stopped (shutdown): restored on the next start
        g.finished = True
        self.finished += 1
        if table.game.over:  # a closed game is never rated
            self._rated_later(table, [p.name for p in g.hosted.players if p.kind == "human"] if g.hosted else [])
        if self.peers is not None:
            self.peers.dropped(g.id)
            self.peers.finished(g.id)  # its rematch is asked here, from any process
        self.broadcast({"type": "finish_game", "id": g.id})
        done = [x for x in self.games.values() if x.finished]
        for old in done[: max(0, len(done) - KEEP_FINISHED)]:
            self.games.pop(old.id, None)


# ---------------------------------------------------------------- the lobby's upkeep
async def sweep_forever(lobby: TurboLobby) -> None:
    """:func:`sweep` every tenth of the shorter span (at most a minute)."""
    lim = lobby.guard.limits if lobby.guard is not None else None
    if lim is None:
        return
    spans = [x for x in (lim.game_expiry, lim.lobby_idle) if x > 0]
    if not spans:
        return
    every = max(0.05, min(60.0, min(spans) / 10))
    while True:
        await asyncio.sleep(every)
        try:
            sweep(lobby, time.time(), time.monotonic())
        except Exception:
            log.exception("event=lobby_sweep_failed")


def sweep(lobby: TurboLobby, wall: float, mono: float) -> None:
    """End open games nobody joined or left for ``game_expiry`` seconds and lobby streams whose
    name asked nothing for ``lobby_idle`` seconds (the clocks are passed in: tests)."""
    if lobby.guard is None:
        return
    lim = lobby.guard.limits
    if lim.game_expiry > 0:
        for g in list(lobby.games.values()):
            if g.hosted is None and not g.finished and wall - (g.touched or g.created_at) > lim.game_expiry:
                expire(lobby, g)
    if lim.lobby_idle > 0:
        for name, queues in list(lobby.subscribers.items()):
            if mono - lobby.seen.get(name, mono) > lim.lobby_idle:
                log.info("event=lobby_idle_ended name=%s streams=%d", json.dumps(name), len(queues))
                for q in queues:
                    q.put_nowait(None)
        for name, when in list(lobby.seen.items()):  # names with no stream: forgotten
            if name not in lobby.subscribers and mono - when > lim.lobby_idle:
                del lobby.seen[name]


def expire(lobby: TurboLobby, g: LobbyGame) -> None:
    """An open game nobody joined: its members are told (``leave_game``), remote players waiting
    in it lose their session, and it is gone from the lobby and the store."""
    lobby.expired += 1
    log.info("event=open_game_expired game=%s players=%d expired=%d", g.id, len(g.members), lobby.expired)
    for m in g.members:
        lobby.broadcast({"type": "leave_game", "id": g.id, "player": m.name})
        if m.remote is not None:
            with contextlib.suppress(Exception):
                m.remote.seat.end_session(f"game {g.id} expired: nobody joined it")
    lobby.games.pop(g.id, None)
    if g.stream is not None:
        g.stream.close()
    lobby._drop_open(g)


def lobby_routes(lobby: TurboLobby) -> list[BaseRoute]:
    def identity() -> Identity:
        return lobby.identity

    async def subscribe(request: Request, caller: Caller) -> Response:
        q = lobby.subscribe_lobby(caller.name)

        async def events() -> AsyncIterator[bytes]:
            try:
                async for chunk in upkeep.lobby_frames(q):
                    yield chunk
            finally:
                lobby.unsubscribe_lobby(caller.name, q)

        return EventSourceResponse(events(), ping=PING_SECONDS, headers={"Cache-Control": "no-store"})

    def post(fn: Callable[[str, dict[str, Any]], Any]) -> Callable[[Request, Caller], Awaitable[Any]]:
        async def handle(request: Request, caller: Caller) -> Any:
            lobby.seen[caller.name] = time.monotonic()
            out = fn(caller.name, await read_body(request))
            if lobby.peers is not None:
                # in a cluster the answer waits until what the call wrote is in Redis: a new game
                # made here must be found by the next request, which may reach another process
                await lobby.peers.settled()
            return out

        return handle

    return [
        Route("/lobby/subscribe", endpoint(subscribe, identity), methods=["GET"]),
        Route("/lobby/new", endpoint(post(lobby.new_game), identity), methods=["POST"]),
        Route("/lobby/join", endpoint(post(lobby.join), identity), methods=["POST"]),
        Route("/lobby/add_bot", endpoint(post(lobby.add_bot), identity), methods=["POST"]),
        Route("/lobby/leave", endpoint(post(lobby.leave), identity), methods=["POST"]),
        Route("/lobby/chat", endpoint(post(lobby.lobby_chat), identity), methods=["POST"]),
    ]


__all__ = [
    "BOT_NAMES",
    "GAME_VARIANTS",
    "KEEP_FINISHED",
    "LobbyGame",
    "LobbyOptions",
    "Member",
    "TurboLobby",
    "expire",
    "lobby_player",
    "lobby_routes",
    "sweep",
    "sweep_forever",
]
