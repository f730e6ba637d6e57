"""Running tournaments on the server: tables from the schedule, external entrants by token.

:class:`TournamentHost` keeps the server's tournaments. :meth:`TournamentHost.create` takes a
:class:`~moonshot.play.tournament.TournamentSpec`, hands out one token per external entrant (returned
once; only its SHA-256 is kept, compared with :func:`hmac.compare_digest`) and starts playing.
The games follow :func:`~moonshot.play.tournament.schedule` set by set; the tables of a set play at
the same time (they share no entrant), each table its four rotations one after the other, so an
external client plays one game at a time.

An external entrant comes in over any protocol that can express the variant (Sessions:
``lobby_code`` = the token; Trend: the join's ``token`` or ``lobbyCode``): the server's lobby
asks :meth:`TournamentHost.claim` first. Each game of the entrant takes one arrival (a Sessions
session, a Trend join), so clients that play game after game (the SDKs) need no change. If no
arrival comes within ``show_up`` seconds the chair is played by the server's policy (a random
legal card, as for a timeout) and the game counts a no-show; a disconnect or timeouts hand the
chair to the same policy (``forced`` moves), and all of it is in the entrant's statistics.

The state (spec, schedule progress, every game's result) is a JSON value in the store
(``tournament:<id>``), written after every game, so ``moonshot tournament status|results
--db`` read it without the server, together with what a restart needs: the external entrants'
token digests and who asked for it. A server that stops (``paused``) or dies (still ``running``
in the store) goes on with the tournament when it starts again on the same store
(:meth:`TournamentHost.resume`): the games with a result are kept, the game that was being played
is restored from its stored actions with the same bots and the externals' chairs waiting for
them again, and the schedule goes on from there.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hmac
import json
import logging
import random
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from moonshot.bots.random import RandomBot
from moonshot.bots.registry import make_bot
from moonshot.core.events import DealEnded
from moonshot.play.tournament import (
    Entrant,
    GameResult,
    ScheduledGame,
    SeatResult,
    TournamentSpec,
    bot_label,
    running_standings,
    schedule,
    standings,
    token_digest,
)
from moonshot.runtime.lobby import Candidate, LobbyError
from moonshot.runtime.mixed import refusal
from moonshot.runtime.table import BotSeat, OnDisconnect, Seat, Table, TablePolicy
from moonshot.store import register_rules

log = logging.getLogger("moonshot.tournament")

KEY_PREFIX = "tournament:"


class _Arrivals:
    """External players that came with one entrant's token, waiting for its next game."""

    def __init__(self) -> None:
        self.waiting: deque[Candidate] = deque()
        self.signal = asyncio.Event()

    def put(self, c: Candidate) -> None:
        self.waiting.append(c)
        self.signal.set()

    async def take(self, timeout: float) -> Candidate | None:
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while not self.waiting:
            self.signal.clear()
            left = end - loop.time()
            if left <= 0:
                return None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.signal.wait(), left)
        return self.waiting.popleft()


class LimitError(Exception):
    """A network request for a tournament over the server's fair share (HTTP 429)."""


class Tournament:
    """One tournament being played (or finished)."""

    def __init__(self, tid: str, spec: TournamentSpec, created_at: float) -> None:
        self.id = tid
        self.spec = spec
        self.rules = spec.rules()
        self.games = schedule(spec)
        self.results: list[GameResult] = []
        self.status = "running"
        self.error: str | None = None
        self.created_at = created_at
        self.finished_at: float | None = None
        self.creator: str | None = None  # who asked for it over HTTP (None: the server's own CLI)
        self.arrivals = {i: _Arrivals() for i, e in enumerate(spec.entrants) if e.external}
        self.task: asyncio.Task[None] | None = None
        # after a restart: the game that was being played, by schedule number -> its stored record
        self.interrupted: dict[int, Any] = {}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Tournament:
        """A stored tournament, to go on with (``state`` as :meth:`state` wrote it)."""
        spec = spec_from_json(state["spec"], state.get("token_digests") or {})
        t = cls(str(state["id"]), spec, float(state.get("created_at") or time.time()))
        t.results = sorted((GameResult.from_json(r) for r in state.get("results", [])), key=lambda r: r.number)
        creator = state.get("creator")
        t.creator = creator if isinstance(creator, str) else None
        return t

    def played(self, number: int) -> bool:
        return any(r.number == number for r in self.results)

    def state(self) -> dict[str, Any]:
        """The stored form (everything status and results need)."""
        return {
            "id": self.id,
            "status": self.status,
            "error": self.error,
            "created_at": self.created_at,
            "finished_at": self.finished_at,
            "spec": self.spec.to_json(),
            "games_total": len(self.games),
            "results": [r.to_json() for r in self.results],
            # what going on after a restart needs; never shown (status and results leave them out)
            "creator": self.creator,
            "token_digests": {e.name: e.token_digest for e in self.spec.entrants if e.token_digest},
        }


def summary(state: dict[str, Any]) -> dict[str, Any]:
    """``status``: progress and the standings so far, from a stored state."""
    spec = spec_from_json(state["spec"])
    results = [GameResult.from_json(r) for r in state.get("results", [])]
    return {
        "id": state["id"],
        "status": state["status"],
        "error": state.get("error"),
        "variant": spec.variant,
        "sets": spec.sets,
        "deals_per_set": spec.set_deals(),
        # the seed deals every game of the tournament: shown only once it is over
        "seed": spec.seed if state["status"] in ("finished", "failed") else None,
        "entrants": [e.to_json() for e in spec.entrants],
        "games_played": len(results),
        "games_total": state.get("games_total", len(schedule(spec))),
        "created_at": state.get("created_at"),
        "finished_at": state.get("finished_at"),
        "standings": standings(spec, results),
    }


def full_results(state: dict[str, Any]) -> dict[str, Any]:
    """``results``: the standings, every game and the running standings (for the plot)."""
    spec = spec_from_json(state["spec"])
    results = [GameResult.from_json(r) for r in state.get("results", [])]
    out = summary(state)
    out["games"] = [r.to_json() for r in results]
    out["running"] = running_standings(spec, results)
    return out


def spec_from_json(d: dict[str, Any], token_digests: dict[str, str] | None = None) -> TournamentSpec:
    digests = token_digests or {}
    entrants = tuple(
        Entrant(
            e["name"],
            bot=e.get("bot"),
            options=dict(e.get("options") or {}),
            external=bool(e.get("external")),
            filler=bool(e.get("filler")),
            token_digest=digests.get(e["name"]) if e.get("external") else None,
        )
        for e in d["entrants"]
    )
    return TournamentSpec(
        d["variant"],
        int(d["sets"]),
        entrants,
        int(d.get("seed", 0)),
        int(d.get("deals_per_set", 0)),
        int(d.get("draws", 200)),
        str(d.get("filler", "heuristic")),
    )


def _shown(e: Entrant, arrived: Candidate | None) -> str:
    """What the history page says plays a chair: the bot with its options, or the protocol."""
    if e.bot is not None:
        return bot_label(e.bot, e.options)
    return arrived.protocol if arrived is not None else "absent"


# Fair share for tournaments asked for over the network (anyone who reaches the HTTP port may):
# each name runs one at a time, the server a few, and a built-in bot's budget is bounded, so a
# hostile request cannot take the CPU every other table needs.
MAX_RUNNING = 4
MAX_RUNNING_PER_CREATOR = 1
# (``endgame``: the cards each from which search solves a deal exactly, a search that grows about
# 15-fold a card: from four 0.5 ms at p99 in the kernel, from six 142 ms, from thirteen beyond any
# budget, and a solve under way does not stop at the deadline)
BOT_BUDGET_LIMITS = {"think_ms": 1000, "simulations": 2000, "worlds": 100, "endgame": 4}
# options a request over the network may not give a built-in bot: ``network`` names a file on the
# server (reading /dev/stdin would stall the server; others would say which files exist), and
# ``clock`` and ``policy`` take Python objects, not the text a request carries
NETWORK_REFUSED_OPTIONS = frozenset({"network", "clock", "policy"})
# ``value`` and ``belief`` (search's value and belief networks) may name a file on the server
# too: over the network only these words, never a path
NETWORK_VALUE_NAMES = frozenset({"default", "off"})
NETWORK_FILE_OPTIONS: dict[str, frozenset[str]] = {"value": NETWORK_VALUE_NAMES, "belief": frozenset({"default"})}


# the option types a request over the network may give a built-in bot, by the constructor's
# annotation (others take Python objects: weights, policies, clocks)
_NETWORK_OPTION_TYPES = {"int": "an integer", "float": "a number", "bool": "true or false", "str": "a word"}


def option_problem(bot: str, options: dict[str, Any]) -> str | None:
    """What is wrong with ``options`` for the built-in bot ``bot`` as a request gives them (None:
    nothing): an option its constructor does not take, a value of the wrong type, a negative or
    non-finite number. Unknown bots are left to :func:`make_bot`."""
    import inspect
    import math

    from moonshot.bots.registry import BOT_REGISTRY

    if bot not in BOT_REGISTRY:
        return None
    try:
        cls = type(make_bot(bot))
        params = inspect.signature(cls).parameters
    except (ValueError, TypeError):
        return None
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        p = params.get(key)
        if p is None or p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            known = ", ".join("--" + k.replace("_", "-") for k in params) or "none"
            return f"{bot} has no option {flag} (its options: {known})"
        kind = str(p.annotation).replace(" | None", "").strip()
        if kind not in _NETWORK_OPTION_TYPES:
            return f"{flag} is not taken over the network"
        if kind == "bool":
            ok = isinstance(value, bool)
        elif kind == "str":
            ok = isinstance(value, str) and 0 < len(value) <= 40
        elif kind == "int":
            ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 10**9
        else:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            ok = ok and abs(value) <= 10**9
        if not ok:
            return f"{flag} must be {_NETWORK_OPTION_TYPES[kind]}" + (" from 0" if kind == "int" else "")
    return None


class TournamentHost:
    """The server's tournaments (the lobby's router asks it first about every candidate)."""

    def __init__(
        self,
        *,
        policy: TablePolicy,
        recorder: Any = None,
        track: Callable[[Table], object] | None = None,
        show_up: float = 30.0,
        claim_job: Callable[[str], Awaitable[bool]] | None = None,
    ) -> None:
        # externals that do not come, leave or time out: the protocol's policy (a random card)
        self.policy = dataclasses.replace(
            policy, on_disconnect=OnDisconnect.BOT, reconnect_grace=0.0, substitute=RandomBot
        )
        self.recorder = recorder
        self.track: Callable[[Table], object] = track or Table.start
        self.show_up = show_up
        self.tournaments: dict[str, Tournament] = {}
        self._closing = False
        # many server processes on one store (a cluster): a tournament runs where its claim is held
        # (Cluster.claim_job); None: this process alone
        self.claim_job = claim_job
        self._claims: set[asyncio.Future[bool]] = set()
        # told of each tournament that runs here (a cluster indexes its tokens: cluster_mixed)
        self.on_running: Callable[[Tournament], None] | None = None
        # awaited before a new tournament's tokens are handed out (a cluster: until the token
        # index is in Redis, so an entrant on any process finds the tournament at once)
        self.published: Callable[[], Awaitable[None]] | None = None
        # the server drains (moonshot admin drain): the games under way finish, no next game
        # starts; the tournament waits, paused by the stop, and goes on at the next start
        self.draining = False

    # ------------------------------------------------------------ creating
    def _check_options(self, spec: TournamentSpec) -> None:
        """What a request over the network may ask of the built-in bots (before any is made)."""
        for e in spec.entrants:
            refused = sorted(NETWORK_REFUSED_OPTIONS & set(e.options))
            if refused:
                raise ValueError(f"entrant {e.name}: --{refused[0].replace('_', '-')} is not taken over the network")
            for key, words in NETWORK_FILE_OPTIONS.items():
                if key in e.options and e.options[key] not in words:
                    raise ValueError(
                        f"entrant {e.name}: --{key} is not taken over the network as a file (only "
                        f"{' or '.join(sorted(words))})"
                    )
            for key, cap in BOT_BUDGET_LIMITS.items():
                value = e.options.get(key)
                if isinstance(value, (int, float)) and not isinstance(value, bool) and value > cap:
                    raise ValueError(f"entrant {e.name}: --{key.replace('_', '-')} is at most {cap} on this server")
            if e.bot is not None:
                why = option_problem(e.bot, e.options)
                if why is not None:
                    raise ValueError(f"entrant {e.name}: {why}")

    def _check_share(self, creator: str) -> None:
        running = [t for t in self.tournaments.values() if t.status == "running"]
        if sum(t.creator == creator for t in running) >= MAX_RUNNING_PER_CREATOR:
            raise LimitError(f"{creator} already runs a tournament: wait for it to finish")
        if len(running) >= MAX_RUNNING:
            raise LimitError(f"the server already runs {len(running)} tournaments (at most {MAX_RUNNING}): try later")

    def create(
        self, spec: TournamentSpec, tokens: dict[str, str] | None = None, *, creator: str | None = None
    ) -> tuple[Tournament, dict[str, str]]:
        """Start ``spec``; returns the tournament and each external entrant's token. ``tokens``
        (name -> token) are ones the caller chose (their digests must match the spec's); the
        others are made here. (Every variant has a protocol for external entrants: HTTP.)
        ``creator``: a name asking over the network, held to the fair-share limits
        (:data:`MAX_RUNNING`, :data:`MAX_RUNNING_PER_CREATOR`, :data:`BOT_BUDGET_LIMITS`);
        breaking one raises :class:`LimitError`."""
        tokens = dict(tokens or {})
        entrants = list(spec.entrants)
        for i, e in enumerate(entrants):
            if not e.external:
                continue
            token = tokens.get(e.name)
            if token is None or e.token_digest is None:
                token = secrets.token_urlsafe(24)
                tokens[e.name] = token
                entrants[i] = dataclasses.replace(e, token_digest=token_digest(token))
            elif not hmac.compare_digest(token_digest(token), e.token_digest):
                raise ValueError(f"the token given for {e.name} does not match")
        spec = dataclasses.replace(spec, entrants=tuple(entrants))
        if creator is not None:
            self._check_options(spec)
        for e in spec.entrants:
            if e.bot is not None:
                try:  # unknown bots and bad options fail here, not mid-way
                    make_bot(e.bot, **e.options)
                except (TypeError, ValueError, ArithmeticError) as err:
                    raise ValueError(f"entrant {e.name}: {err}") from None
        try:  # the house bot that fills the last table
            make_bot(spec.filler)
        except ValueError as err:
            raise ValueError(f"filler: {err}") from None
        if creator is not None:  # a bad request hears what is wrong with it first, then the limits
            self._check_share(creator)
        tid = f"t{int(time.time()):x}{secrets.token_hex(3)}"  # never repeats across runs (the store key)
        t = Tournament(tid, spec, time.time())
        t.creator = creator
        register_rules(t.rules)
        self.tournaments[tid] = t
        loop = asyncio.get_running_loop()
        if self.claim_job is not None:  # a new id: nobody else holds it; other nodes now leave it alone
            claiming: asyncio.Future[bool] = asyncio.ensure_future(self.claim_job(KEY_PREFIX + tid))
            self._claims.add(claiming)
            claiming.add_done_callback(self._claimed)
        t.task = loop.create_task(self._run(t), name=f"tournament-{tid}")
        self._save(t)
        if self.on_running is not None:
            self.on_running(t)
        log.info(
            "event=tournament_created id=%s variant=%s sets=%d entrants=%d games=%d",
            tid,
            spec.variant,
            spec.sets,
            len(spec.entrants),
            len(t.games),
        )
        return t, {e.name: tokens[e.name] for e in spec.entrants if e.external}

    def _claimed(self, claiming: asyncio.Future[bool]) -> None:
        self._claims.discard(claiming)
        if not claiming.cancelled() and claiming.exception() is not None:
            # the tournament runs here anyway; only a node starting while this one is alive
            # could then take it too, so say so
            log.error("event=tournament_claim_failed error=%r", claiming.exception())

    async def resume(self, store: Any) -> set[str]:
        """Go on with the tournaments a stopped or killed server left unfinished in ``store``.

        Returns the ids of the stored games this takes over (the game each tournament was playing),
        which the server must not restore as ordinary games. A game that ended before its result
        was written gets its result from the stored record (its timeouts and errors are not in
        the record, so they count as none)."""
        taken: set[str] = set()
        for key, state in (await store.values(KEY_PREFIX)).items():
            if not isinstance(state, dict) or state.get("status") not in ("running", "paused"):
                continue
            try:
                t = Tournament.from_state(state)
                if t.id in self.tournaments:
                    continue
                if self.claim_job is not None:
                    try:
                        mine = await self.claim_job(KEY_PREFIX + t.id)
                    except Exception:  # Redis unreachable: leave it for a later start, not failed
                        log.exception("event=tournament_claim_failed id=%s", t.id)
                        continue
                    if not mine:
                        continue  # another live process runs it
                for g in t.games:
                    if t.played(g.number):
                        continue
                    rec = await store.load(f"{t.id}-g{g.number + 1}")
                    if rec is None:
                        continue
                    if rec.status == "running":
                        t.interrupted[g.number] = rec
                        taken.add(rec.id)
                    elif rec.status == "finished":
                        t.results.append(self._result_from_record(t, g, rec))
                    else:
                        raise ValueError(f"its game {rec.id} is {rec.status}")
                t.results.sort(key=lambda r: r.number)
                register_rules(t.rules)
            except Exception as e:  # a damaged state costs that tournament, never the server
                log.exception("event=tournament_resume_failed key=%s", key)
                if isinstance(state.get("id"), str):
                    state = {**state, "status": "failed", "error": f"could not resume: {e!r}"}
                    if self.recorder is not None and hasattr(self.recorder, "put_value"):
                        self.recorder.put_value(key, state)
                continue
            self.tournaments[t.id] = t
            t.task = asyncio.get_running_loop().create_task(self._run(t), name=f"tournament-{t.id}")
            self._save(t)
            if self.on_running is not None:
                self.on_running(t)
            log.info(
                "event=tournament_resumed id=%s games_played=%d games_total=%d interrupted=%s",
                t.id,
                len(t.results),
                len(t.games),
                ",".join(r.id for r in t.interrupted.values()) or "-",
            )
        return taken

    def _result_from_record(self, t: Tournament, g: ScheduledGame, rec: Any) -> GameResult:
        table = Table(
            t.rules,
            [None] * 4,
            seed=g.seed,
            table_id=rec.id,
            actions=rec.actions,
            forced=rec.forced,
            restored=True,
            meta={"deal_salt": rec.meta.get("deal_salt")},
        )
        return self._result(t, g, table, [False] * 4)

    # ------------------------------------------------------------ the lobby's router
    def _entrant_for(self, secret: str | None) -> tuple[Tournament, int] | None:
        if not secret:
            return None
        digest = token_digest(secret)
        found = None
        for t in self.tournaments.values():
            for i, e in enumerate(t.spec.entrants):
                # every digest is compared (constant time each), so timing says nothing of which matched
                if e.token_digest is not None and hmac.compare_digest(digest, e.token_digest) and found is None:
                    found = (t, i)
        return found

    def claim(self, c: Candidate) -> bool:
        hit = self._entrant_for(c.token) or self._entrant_for(c.lobby_code)
        if hit is None:
            return False
        t, i = hit
        if t.status != "running":
            raise LobbyError(f"tournament {t.id} is over ({t.status}): its tokens seat no one")
        why = refusal(c.protocol, t.rules)
        if why is not None:
            raise LobbyError(f"{why}: it cannot play tournament {t.id}")
        t.arrivals[i].put(c)
        log.info(
            "event=entrant_arrived tournament=%s entrant=%s protocol=%s", t.id, t.spec.entrants[i].name, c.protocol
        )
        return True

    def release(self, c: Candidate) -> bool:
        for t in self.tournaments.values():
            for a in t.arrivals.values():
                if c in a.waiting:
                    a.waiting.remove(c)
                    return True
        return False

    # ------------------------------------------------------------ playing
    async def _run(self, t: Tournament) -> None:
        try:
            by_set: dict[int, list[list[ScheduledGame]]] = {}
            for g in t.games:
                tables = by_set.setdefault(g.set_index, [])
                if g.rotation == 0:
                    tables.append([])
                tables[-1].append(g)
            for s in sorted(by_set):
                await asyncio.gather(*(self._play_table(t, games) for games in by_set[s]))
            t.status = "finished"
        except asyncio.CancelledError:
            # the server stopping pauses it (it goes on at the next start); anything else stops it
            t.status = "paused" if self._closing else "stopped"
            raise
        except Exception as e:  # a bug costs this tournament, never the server
            log.exception("event=tournament_failed id=%s", t.id)
            t.status = "failed"
            t.error = repr(e)
        finally:
            t.finished_at = time.time()
            self._save(t)
            log.info("event=tournament_%s id=%s games=%d", t.status, t.id, len(t.results))

    async def _play_table(self, t: Tournament, games: list[ScheduledGame]) -> None:
        for g in games:
            if t.played(g.number):  # before a restart
                continue
            if self.draining:
                log.info("event=tournament_held id=%s game=%d reason=draining", t.id, g.number)
                await asyncio.get_running_loop().create_future()  # until the stop cancels it
            t.results.append(await self.play_game(t, g))
            t.results.sort(key=lambda r: r.number)
            self._save(t)

    async def play_game(self, t: Tournament, g: ScheduledGame) -> GameResult:
        seated = t.spec.seated()
        seats: list[Seat | None] = []
        arrived: list[Candidate | None] = []
        no_show = [False] * 4
        # externals first, all at once: the game starts when every one came (or show_up passed)
        waits = {
            chair: asyncio.ensure_future(t.arrivals[e].take(self.show_up))
            for chair, e in enumerate(g.seats)
            if seated[e].external
        }
        got = {chair: await w for chair, w in waits.items()}
        for chair, e in enumerate(g.seats):
            ent = seated[e]
            if ent.external:
                c = got[chair]
                arrived.append(c)
                seats.append(c.seat if c is not None else None)
                no_show[chair] = c is None
            else:
                assert ent.bot is not None
                rng = random.Random(f"moonshot-tournament-bot:{t.spec.seed}:{g.number}:{chair}")
                seats.append(BotSeat(make_bot(ent.bot, **ent.options), rng, name=ent.name))
                arrived.append(None)
        names = [s.name if s is not None else seated[e].name for s, e in zip(seats, g.seats)]
        rec = t.interrupted.pop(g.number, None)  # the game a restart cut: it goes on from its actions
        table = Table(
            t.rules,
            seats,
            seed=g.seed,
            actions=rec.actions if rec is not None else (),
            forced=rec.forced if rec is not None else (),
            restored=rec is not None,
            policy=self.policy,
            table_id=f"{t.id}-g{g.number + 1}",
            recorder=self.recorder,
            names=names,
            meta={
                "protocol": "tournament",
                "tournament": t.id,
                "set": g.set_index,
                "rotation": g.rotation,
                # what the history page shows for each chair: the bot and its options, or the protocol
                "algorithms": json.dumps([_shown(seated[e], c) for e, c in zip(g.seats, arrived)]),
                # a game a restart cut publishes the commitment it published before
                "deal_salt": rec.meta.get("deal_salt") if rec is not None else None,
                # the other rotations of its deal set deal the same hands: its seed and hands stay
                # hidden until the tournament is over (GET /api/games/<id> then shows them)
                "reveal_at_end": False,
            },
        )
        for chair, c in enumerate(arrived):
            if c is not None:
                try:
                    c.on_matched(table, chair)
                    if rec is not None:  # the game a restart cut goes on
                        c.seat.joined_mid_game()
                except Exception:
                    log.exception("event=on_matched_failed table=%s seat=%d", table.id, chair)
                    table.detach(chair, c.seat, "matching callback failed")
        self.track(table)
        # shielded: the tournament being cancelled (the server stopping) must not cancel the
        # table's own future; the server stops the table itself, and it stays restorable
        await asyncio.shield(table.done)
        return self._result(t, g, table, no_show)

    @staticmethod
    def _result(t: Tournament, g: ScheduledGame, table: Table, no_show: list[bool]) -> GameResult:
        game = table.game
        ends = [e for e in game.log if isinstance(e, DealEnded)]
        winners = list(game.winners) if game.over else []
        seats = []
        for chair, e in enumerate(g.seats):
            st = table.chairs[chair].stats
            substituted = no_show[chair] or table.chairs[chair].substitute is not None or st.forced > 0
            seats.append(
                SeatResult(
                    entrant=e,
                    points=[d.points[chair] for d in ends],
                    total=game.totals[chair],
                    won=(1.0 / len(winners)) if chair in winners else 0.0,
                    moons_shot=sum(1 for d in ends if d.moon == chair),
                    moons_conceded=sum(1 for d in ends if d.moon is not None and d.moon != chair),
                    timeouts=st.timeouts,
                    errors=st.illegal,
                    forced=st.forced,
                    no_show=no_show[chair],
                    substituted=substituted,
                )
            )
        return GameResult(g.number, g.set_index, g.table, g.rotation, table.id, seats)

    def _save(self, t: Tournament) -> None:
        if self.recorder is not None and hasattr(self.recorder, "put_value"):
            self.recorder.put_value(KEY_PREFIX + t.id, t.state())

    # ------------------------------------------------------------ reading
    def state(self, tid: str) -> dict[str, Any] | None:
        t = self.tournaments.get(tid)
        return t.state() if t is not None else None

    async def close(self) -> None:
        """The server stops: running tournaments are paused (stored so; the next start resumes them)."""
        self._closing = True
        for t in self.tournaments.values():
            if t.task is not None and not t.task.done():
                t.task.cancel()
                with contextlib.suppress(BaseException):
                    await t.task
            if t.status == "running":  # cancelled before it began
                t.status = "paused"
                self._save(t)


__all__ = ["KEY_PREFIX", "LimitError", "Tournament", "TournamentHost", "full_results", "spec_from_json", "summary"]
