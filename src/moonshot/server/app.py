"""``moonshot serve``: one process, one event loop, every protocol on its port, one game store.

:class:`ServerApp` is the composition root: it owns the store (and its writer), the lobby, the
running tables and each protocol's listener (a listener turns clients into
:class:`~moonshot.runtime.table.Seat` s and hands them to the lobby or a table), and composes
what other modules of this folder own: the options (:mod:`moonshot.server.config`), the Trend
and Kierki sides (:mod:`moonshot.server.trend_side`, :mod:`moonshot.server.kierki_side`),
restoring stored games (:mod:`moonshot.server.restore`), the operator surface, metrics and admin
actions. At start it restores every unfinished game from the store: a restored table's remote
chairs wait ``restore_grace`` seconds for their players (a Sessions client takes its chair back
with ``resume_session``, found by :meth:`ServerApp.find_chair`), then substitute bots play the
chairs still empty, so the game resumes from its stored state and completes. Stopping
(SIGINT/SIGTERM) stops listening, stops every table where it stands (its actions are already in
the store, so it stays ``running`` there and is restored next start), flushes the store and exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import gc
import json
import logging
import os
import random
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import moonshot
from moonshot.http.lobby import TurboLobby
from moonshot.protocols.kierki.gamefile import parse_game
from moonshot.protocols.sessions.codec import SESSIONS_RULES
from moonshot.protocols.sessions.server import SessionsOptions, SessionsServer, secret_matches
from moonshot.protocols.sessions.server import chair_keys as sessions_chair_keys
from moonshot.runtime.clients import Proxies
from moonshot.runtime.limits import ClientGuard
from moonshot.runtime.lobby import Candidate, Lobby
from moonshot.runtime.table import BotSeat, OnBadAnswer, OnDisconnect, Seat, Table, TablePolicy, TableStatus
from moonshot.server.admin import install as install_admin
from moonshot.server.admin import start as start_admin
from moonshot.server.config import ServerConfig, bot_factory
from moonshot.server.http_side import HttpListener, cookie_secret, turbo_lobby
from moonshot.server.kierki_side import KierkiSide
from moonshot.server.metrics import ServerMetrics
from moonshot.server.operator import OperatorSurface, server_readiness
from moonshot.server.restore import Restorer
from moonshot.server.trend_side import TrendSide
from moonshot.store import Store, StoreRecorder, register_game_file_parser

log = logging.getLogger("moonshot.server")

# in a cluster, how often (seconds) a process looks for tournaments no live process holds, besides
# whenever it sees a process die
ORPHAN_TOURNAMENT_CHECK_S = 60.0

register_game_file_parser(parse_game)  # stored Kierki games from before fixed deals were kept as data


@dataclass
class ServerApp:
    config: ServerConfig = field(default_factory=ServerConfig)
    store: Store | None = None
    recorder: StoreRecorder | None = None
    sessions: SessionsServer | None = None
    lobby: Lobby | None = None
    tables: dict[str, Table] = field(default_factory=dict)
    sessions_port: int | None = None
    finished: int = 0
    trend: Any = None  # the Trend WebSocket service (moonshot.protocols.trend.server)
    trend_port: int | None = None
    turbo: TurboLobby | None = None
    http_port: int | None = None
    _http: HttpListener | None = None  # with config.http_port (server/http_side.py)
    restored: int = 0  # unfinished games restored from the store at start
    cluster: Any = None  # moonshot.cluster.node.Cluster when config.redis_url is set
    tournaments: Any = None  # moonshot.runtime.tournament.TournamentHost, when running
    kierki: Any = None  # moonshot.protocols.kierki.service.KierkiService, with --kierki-port
    kierki_port: int | None = None
    mixed: Any = None  # moonshot.cluster.mixed.ClusterMixed in a cluster: codes naming other nodes' tables
    draining: bool = False  # True: readiness says not ready (load balancers send no new players)
    operator: OperatorSurface | None = None  # with config.operator_address
    admin: Any = None  # moonshot.server.admin.Admin: the operator's actions and the kept bans (from start)
    operator_token_path: Path | None = None  # where `moonshot admin` reads the operator token
    operator_port: int | None = None

    def __post_init__(self) -> None:
        self._bot = bot_factory(self.config.bot)
        self.metrics = ServerMetrics(self)  # this server's own registry (server/metrics.py)
        self.readiness = server_readiness(self)  # /readyz, here and on the public HTTP port
        self._rng = random.Random(self.config.seed)
        self._stopping = asyncio.Event()
        # every protocol's per-client shares, keyed by the real client behind a trusted proxy
        self.guard = ClientGuard(self.config.limits, proxies=Proxies(self.config.trusted_proxies))
        self._kierki: KierkiSide | None = None  # with --kierki-port (server/kierki_side.py)

    # ------------------------------------------------------------ life cycle
    async def start(self) -> None:
        cfg = self.config
        if cfg.db_url:
            self.store = await Store.open(cfg.db_url)
            self.recorder = StoreRecorder(self.store)
            self.recorder.on_commit = self.metrics.committed  # each group commit's latency and rows
            self.recorder.start()
        if cfg.redis_url:
            from moonshot.cluster.host import Host
            from moonshot.cluster.node import Cluster, TableKind

            host = Host(
                seed=self._seed,
                track=self._track,
                policy=lambda grace: self.policy(grace=grace),
                restore_grace=cfg.restore_grace,
                bot=self._bot,
                bot_seat=lambda protocol: self._make_trend_bot() if protocol == "trend" else self._make_bot(),
                store=self.store,
                recorder=self.recorder,
                fill_wait=cfg.fill_wait,
                matched=self._count_matched,
                claim=self.claim,
                claim_here=self.claim_here,
                release=self.release,
            )
            self.cluster = Cluster(host, cfg.redis_url, prefix=cfg.cluster_prefix, lease=cfg.lease)
            self.cluster.tables["sessions"] = TableKind(rules=SESSIONS_RULES)  # Sessions tables: matched, adopted
            # whose players may sit at a mixed table another process hosts (their adapters run
            # against a RemoteTable); Kierki's cannot (its tables are its own), Turbo's are HTTP's
            self.cluster.mixed_protocols = frozenset({"sessions", "trend"})
            self.cluster.table_keys.append(sessions_chair_keys)  # resume_session on any node, any table
            await self.cluster.start()
        # the operator's bans and mutes, before any client is admitted (server/admin.py); in a
        # cluster, every node's changes heard and applied here (server/moderation.py)
        await start_admin(self)
        if self.cluster is not None:
            from moonshot.server.moderation import ClusterModeration

            ClusterModeration(self.admin, self.cluster).start()
        if cfg.http_port is not None:
            self.turbo = turbo_lobby(  # server/http_side.py
                cfg,
                secret=await cookie_secret(cfg.secret, self.store, self.cluster),
                # in a cluster, its tables' actions go to the Redis log first (adoption)
                recorder=self.cluster.recorder() if self.cluster is not None else self.recorder,
                store=self.store,
                track=self._track,
                mixed_policy=self.policy(),
                guard=self.guard,
            )
        self._restorer = Restorer(  # the store's unfinished games, a cluster's Turbo games (server/restore.py)
            store=self.store,
            recorder=self.recorder,
            turbo=self.turbo,
            in_cluster=self.cluster is not None,
            policy=self.policy,
            restore_grace=cfg.restore_grace,
            track=self._track,
            on_restored=self._count_restored,
        )
        from moonshot.runtime.tournament import TournamentHost

        self.tournaments = TournamentHost(
            policy=self.policy(),
            recorder=self.recorder,
            track=self._track,
            show_up=cfg.show_up,
            claim_job=self.cluster.claim_job if self.cluster is not None else None,
        )
        if self.cluster is not None:  # mixed tables whose game or tournament runs on another node
            from moonshot.cluster.mixed import ClusterMixed

            self.mixed = ClusterMixed(self.cluster)
            self.mixed.queues["sessions"] = self.mixed.pool  # a code no process hosts: an ordinary private code
            self.cluster.rules = SESSIONS_RULES  # told a tournament's seat on another node (its pass count)
            self.tournaments.on_running = self.mixed.tournament_running
            self.tournaments.published = self._tokens_published
        if self.turbo is not None:
            self.turbo.tournaments = self.tournaments
            if self.cluster is not None:
                from moonshot.http.peers import HttpPeers

                self.turbo.peers = HttpPeers(self.cluster, self.turbo)
                cluster = self.cluster
                from moonshot.protocols.trend.server import mixed_chair_keys

                # a mixed game's Trend chairs in the cluster's re-join index, under Trend's keys
                self.turbo.peers.trend_index = lambda table, chairs: cluster.index_chairs(
                    table, mixed_chair_keys(table, chairs)
                )
                self.cluster.adopters["turbo"] = self._restorer.adopt_turbo
        resumed: set[str] = set()
        if self.store is not None:
            # tournaments a stopped or killed server left (in a cluster: those no live node holds)
            resumed = await self.tournaments.resume(self.store)
            if self.cluster is not None:
                self._seen_nodes: set[str] = set()
                self._tournaments_checked = time.monotonic()
                self.cluster.keeper_hooks.append(self._take_orphan_tournaments)
        if cfg.kierki_port is not None:  # a bad game file stops the start here, with the reason
            self._kierki = KierkiSide(
                cfg, seed=self._seed, table_id=self._table_id, recorder=self.recorder, track=self._track
            )
            self.kierki = self._kierki.service
            if self.cluster is not None:
                self._kierki.join_cluster(self.cluster)
        restored_ids = await self._restorer.restore(skip=resumed, kierki=self._kierki)
        if self.turbo is not None:
            await self.turbo.load_open(self.cluster.claim_open if self.cluster is not None else None)
            self.turbo.start_sweeper()
        self._trend = TrendSide(  # server/trend_side.py
            tables=self.tables,
            policy=self.lobby_policy,
            seed=self._seed,
            table_id=self._table_id,
            recorder=self.recorder,
            track=self._track,
        )
        lobby_class: Any = Lobby
        lobby_args: tuple[Any, ...] = ()
        if self.cluster is not None:
            from moonshot.cluster.node import ClusterLobby

            lobby_class, lobby_args = ClusterLobby, (self.cluster,)
        self.lobby = lobby_class(
            *lobby_args,
            self._start_table,
            self._make_bot,
            cfg.fill_wait,
            random.Random(self._rng.getrandbits(32)),
            starters={"trend": self._trend.new_table}
            | ({"kierki": self.kierki.start_table} if self.kierki is not None else {}),
            bots={"trend": self._make_trend_bot},
        )
        self.lobby.router = self  # mixed tables: codes that name an HTTP game or a tournament seat
        self.lobby.controls = self.guard.controls  # the operator's bans and drain (server/admin.py)
        self.lobby.pace = self.guard.start_table  # how fast one address may start tables
        if cfg.sessions_port is not None:
            self.sessions = SessionsServer(
                self.lobby,
                SessionsOptions(max_message=cfg.max_message, resync_idle=cfg.resync_idle),
                restored_ids,
                self.find_chair if self.cluster is None else None,
                guard=self.guard,
            )
            if self.cluster is not None:
                self.sessions.remote_rejoin = self.cluster.rejoin
            self.sessions_port = await self.sessions.start(cfg.host, cfg.sessions_port, cfg.reuse_port)
            log.info("event=listening protocol=sessions host=%s port=%d", cfg.host, self.sessions_port)
        if cfg.trend_port is not None:
            self.trend = self._trend.service(self.lobby, self.guard, self.cluster, self.mixed)
            self.trend_port = await self.trend.start(cfg.host, cfg.trend_port, cfg.reuse_port)
            log.info("event=listening protocol=trend host=%s port=%d", cfg.host, self.trend_port)
        if self._kierki is not None and cfg.kierki_port is not None:
            self.kierki_port = await self._kierki.listen(
                self.lobby, self.guard, cfg.host, cfg.kierki_port, cfg.reuse_port
            )
        if self.turbo is not None and cfg.http_port is not None:
            self._http = HttpListener(cfg, self.guard, self.readiness)
            self.http_port = await self._http.start(self.turbo, cfg.host, cfg.http_port)
        if self.cluster is not None:  # games no node holds: left by a cluster that stopped, or a dead node
            self.restored += await self.cluster.adopt_stored()
            self.restored += await self.cluster.adopt_orphans()
        if cfg.operator_address is not None:
            await self._start_operator(*cfg.operator_address)

    async def _start_operator(self, host: str, port: int) -> None:
        """The operator surface (server/operator.py): metrics, health and readiness on their own
        address; admin routes join ``self.operator.routes`` here, before it starts."""
        operator = OperatorSurface(self.metrics.registry, self.readiness)
        self.operator_token_path = await install_admin(self, operator, self.config.operator_token_file)
        try:
            self.operator_port = await operator.start(host, port)
        except OSError as e:
            if self.config.operator_required:
                raise
            # the default address, taken (another server on this machine): this one runs without
            log.warning("event=operator_off host=%s port=%d reason=%s", host, port, json.dumps(e.strerror or str(e)))
            return
        self.operator = operator

    async def stop(self, reason: str = "shutdown") -> None:
        """Stop listening, stop tables where they stand, flush the store."""
        # tables stop first, where they stand: closing connections first would hand the chairs
        # to substitute bots, which would play on until the tables heard the stop
        if self.sessions is not None:
            self.sessions.stop_listening()
        if self.kierki is not None:
            self.kierki.stop_listening()
        if self._http is not None:
            self._http.stop_listening()
        if self.tournaments is not None:
            await self.tournaments.close()  # before the tables: no next game starts
        running = [t for t in self.tables.values() if not t.done.done()]
        for t in running:
            t.stop(reason)
        if running:
            await asyncio.wait([t.done for t in running], timeout=5)
        if self.sessions is not None:
            await self.sessions.close()
        if self.trend is not None:
            await self.trend.close()
        if self.kierki is not None:
            await self.kierki.close()
        if self.turbo is not None:
            self.turbo.close()  # ends every SSE stream, so the HTTP server can finish
        if self._http is not None:
            await self._http.close()
        if self.turbo is not None:
            if self.turbo.reviews is not None:
                self.turbo.reviews.close()  # reviews under way are abandoned: asked again, they start over
            with contextlib.suppress(TimeoutError):  # a store that is away: the recorder's close says so
                await asyncio.wait_for(self.turbo.flush(), 10)
        if self.admin is not None and self.admin.sync is not None:
            await self.admin.sync.close()
        if self.admin is not None:
            await self.admin.stop()
        if self.cluster is not None:
            await self.cluster.close()  # after the connections: their detaches reach the owners
        if self.recorder is not None:
            await self.recorder.close()
        if self.store is not None:
            await self.store.close()
        if self.operator is not None:  # last: metrics and health answer while the rest stops
            await self.operator.stop()
        log.info("event=stopped tables_stopped=%d games_finished=%d", len(running), self.finished)

    def request_stop(self) -> None:
        self._stopping.set()

    async def serve_forever(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self.request_stop)
        await self._stopping.wait()
        await self.stop()

    # ------------------------------------------------------------ tables
    def policy(self, grace: float = 0.0) -> TablePolicy:
        return TablePolicy(
            decision_timeout=self.config.move_timeout,
            on_timeout=OnBadAnswer.RANDOM,
            on_illegal=OnBadAnswer.RANDOM,
            on_disconnect=OnDisconnect.BOT,
            reconnect_grace=grace,
            substitute=self._bot,
            max_consecutive_timeouts=self.config.max_timeouts,
        )

    def _seed(self) -> int:
        return self._rng.getrandbits(62) if self.config.seed is not None else random.SystemRandom().getrandbits(62)

    def _table_id(self) -> str:
        return f"{int(time.time() * 1000):x}-{self._rng.getrandbits(32):08x}"

    def lobby_policy(self) -> TablePolicy:
        """A table the lobby started: it ends when every remote player has left (abandon_after)."""
        after = self.config.limits.abandon_after
        return dataclasses.replace(self.policy(), abandon_after=None if after < 0 else after)

    def _start_table(self, seats: list[Seat]) -> Table:
        table = Table(
            SESSIONS_RULES,
            seats,
            seed=self._seed(),
            policy=self.lobby_policy(),
            table_id=self._table_id(),
            recorder=self.recorder,
            meta={"protocol": "sessions"},
        )
        self._track(table)
        return table

    def _make_trend_bot(self) -> Seat:
        bot = self._bot()
        self._trend_bots = getattr(self, "_trend_bots", 0) + 1
        return BotSeat(bot, random.Random(self._rng.getrandbits(32)), name=f"moonshot_{bot.name}_{self._trend_bots}")

    def _count_restored(self) -> None:
        self.restored += 1

    def _count_matched(self) -> None:
        if self.lobby is not None:
            self.lobby.matched += 1

    def _track(self, table: Table) -> None:
        self.tables[table.id] = table
        table.meter = self.metrics.table_meter(str(table.meta.get("protocol", "other")))
        table.start()
        table.done.add_done_callback(functools.partial(self._table_done, table))

    def _table_done(self, table: Table, _: object = None) -> None:
        self.tables.pop(table.id, None)
        if table.status is TableStatus.FINISHED:
            self.finished += 1
        if self.cluster is not None:
            self.cluster.table_done(table)

    async def _take_orphan_tournaments(self) -> None:
        """The keeper's hook in a cluster: when a process this one saw alive is gone (and once a
        minute besides), take over the tournaments no live process holds, at once rather than
        when a process next starts (``TournamentHost.resume``: one claim each, never two)."""
        assert self.cluster is not None and self.tournaments is not None
        live = set(self.cluster.live_nodes)
        gone = self._seen_nodes - live
        self._seen_nodes = live
        if not gone and time.monotonic() - self._tournaments_checked < ORPHAN_TOURNAMENT_CHECK_S:
            return
        self._tournaments_checked = time.monotonic()
        if self.store is None:
            return
        before = len(self.tournaments.tournaments)
        await self.tournaments.resume(self.store)
        if len(self.tournaments.tournaments) > before:
            log.info(
                "event=tournaments_taken_over count=%d gone=%s",
                len(self.tournaments.tournaments) - before,
                ",".join(sorted(gone)) or "-",
            )

    # ------------------------------------------------------------ mixed tables (the lobby's router)
    def claim(self, c: Candidate) -> bool:
        """A candidate whose code names a table hosted elsewhere sits there: a tournament
        entrant's token, or an open HTTP game's id (any protocol that can express its rules)."""
        if self.claim_here(c):
            return True
        # in a cluster: a table another node hosts (asked there; the join is answered later)
        return self.mixed is not None and bool(self.mixed.claim(c))

    async def _tokens_published(self) -> None:
        """A new tournament's entrant tokens are in Redis (another process finds the tournament by
        them). The tokens are shown once, in the answer, so when Redis does not confirm in time
        the answer still goes out: the writes stay queued and land once Redis is back."""
        from moonshot.cluster.node import ClusterUnavailable

        assert self.cluster is not None
        try:
            await self.cluster.written()
        except ClusterUnavailable as e:
            log.warning("event=tournament_tokens_unconfirmed reason=%s", json.dumps(str(e)))

    def claim_here(self, c: Candidate) -> bool:
        """:meth:`claim` among this process's own tables only: a tournament it runs, an open HTTP
        game it hosts."""
        if self.tournaments is not None and self.tournaments.claim(c):
            return True
        return bool(c.lobby_code and self.turbo is not None and self.turbo.join_remote(c))

    def release(self, c: Candidate) -> bool:
        if self.tournaments is not None and self.tournaments.release(c):
            return True
        if self.turbo is not None and self.turbo.leave_remote(c):
            return True
        return self.mixed is not None and bool(self.mixed.release(c))

    def find_chair(self, session_id: int, secret: str) -> tuple[Table, int] | None:
        """The chair of session ``session_id`` in a running game, if nobody sits in it now and
        ``secret`` is its owner's. Server bot chairs have no credential: never found."""
        suffix = f"({session_id})"
        for t in self.tables.values():
            if t.done.done():
                continue
            for i, name in enumerate(t.names):
                if name.endswith(suffix) and t.chairs[i].occupant is None:
                    return (t, i) if secret_matches(secret, t.credentials[i]) else None
        return None

    def find_trend_chair(self, number: int, name: str, token: str) -> tuple[Table, int] | None:
        """The empty chair of a restored game that a Trend join takes back (``TrendSide.find_chair``)."""
        return self._trend.find_chair(number, name, token)

    def names_trend_chair(self, name: str) -> bool:
        """Is an empty chair of a restored running game held under ``name`` (its token unseen)?"""
        return self._trend.names_chair(name)

    def _make_bot(self) -> Seat:
        bot = self._bot()
        name = self.sessions.bot_tag(f"moonshot_{bot.name}") if self.sessions else f"moonshot_{bot.name}"
        return BotSeat(bot, random.Random(self._rng.getrandbits(32)), name=name)

    def describe(self) -> dict[str, Any]:
        return {
            "sessions": f"tcp://{self.config.host}:{self.sessions_port}" if self.sessions_port is not None else None,
            "trend": f"ws://{self.config.host}:{self.trend_port}/" if self.trend_port is not None else None,
            "kierki": f"tcp://{self.config.host}:{self.kierki_port}" if self.kierki_port is not None else None,
            "http": self.lobby_url(),
            "db": self.config.db_url,
            "tables": len(self.tables),
            "cluster": self.cluster.describe() if self.cluster is not None else None,
        }

    def lobby_url(self) -> str | None:
        if self.http_port is None:
            return None
        host = self.config.host
        shown = "127.0.0.1" if host in ("0.0.0.0", "") else f"[{host}]" if ":" in host else host
        return f"http://{shown}:{self.http_port}/lobby"


async def serve(config: ServerConfig, announce: Callable[[str], None] = print) -> None:
    app = ServerApp(config)
    await app.start()
    # Full collections walk every live object; with a thousand tables' event logs alive that is
    # a 200-300 ms pause, which dominated the p99 round trip. Freeze what start-up made and let
    # full collections come 100x less often (young garbage is still collected as usual).
    gc.collect()
    gc.freeze()
    gc.set_threshold(700, 10, 1000)
    if app.sessions_port is not None:
        announce(f"moonshot: Sessions protocol on tcp://{config.host}:{app.sessions_port} (JSON over TCP)")
    if app.trend_port is not None:
        announce(f"moonshot: Trend protocol on ws://{config.host}:{app.trend_port}/ (WebSocket)")
    if app.kierki_port is not None:
        announce(f"moonshot: Kierki protocol on tcp://{config.host}:{app.kierki_port} (text lines, IAM<seat>)")
    if app.http_port is not None:
        announce(f"moonshot: Turbo Hearts HTTP + web app: open {app.lobby_url()} in a browser")
    if app.sessions_port is None and app.http_port is None and app.trend_port is None and app.kierki_port is None:
        announce("moonshot: no protocol enabled (use --sessions-port, --http-port, --trend-port or --kierki-port)")
    announce(f"moonshot: games stored in {config.db_url or '(nowhere: --db not set)'}; Ctrl-C stops")
    announce(f"moonshot: engine {engine_build()}")
    announce(f"moonshot: {app.restored} unfinished games restored from the store")
    if app.operator is not None and app.operator_port is not None:
        shown = f"[{app.operator.host}]" if ":" in str(app.operator.host) else app.operator.host
        announce(f"moonshot: operator surface on http://{shown}:{app.operator_port}/metrics (and /healthz, /readyz)")
        announce(f"moonshot: operator token (for moonshot admin) in {app.operator_token_path}")
    elif config.operator_address is not None:
        announce(f"moonshot: no operator surface: {config.operator_address[0]}:{config.operator_address[1]} is in use")
    await app.serve_forever()


def engine_build() -> str:
    """How the engine runs: compiled with mypyc, or pure Python (and how to change that)."""
    if moonshot.compiled_modules():
        return "compiled with mypyc"
    if os.environ.get("MOONSHOT_PURE_PYTHON", "") not in ("", "0"):
        return "pure Python (MOONSHOT_PURE_PYTHON is set)"
    return "pure Python (`moonshot compile` makes it about 4x faster)"


__all__ = ["ServerApp", "engine_build", "serve"]
