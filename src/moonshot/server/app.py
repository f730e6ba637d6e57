"""``moonshot serve``: one process, one event loop, every protocol on its port, one game store.

:class:`ServerApp` owns the store (and its writer), the lobby, the running tables and each
protocol's listener (only Sessions exists so far; Trend, Turbo and Kierki listeners plug in the
same way: a listener turns clients into :class:`~moonshot.server.table.Seat` s and hands them
to the lobby or a table). At start it restores every unfinished game from the store: a restored
table's remote chairs wait ``restore_grace`` seconds for their players (a Sessions client takes
its chair back with ``resume_session``, found by :meth:`ServerApp.find_chair`), then substitute
bots play the chairs still empty, so the game resumes from its stored state and completes. Stopping (SIGINT/SIGTERM)
stops listening, stops every table where it stands (its actions are already in the store, so it
stays ``running`` there and is restored next start), flushes the store and exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import json
import logging
import os
import random
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import moonshot
from moonshot.bots.base import Bot
from moonshot.protocols.sessions.codec import DEFAULT_PORT, MAX_MESSAGE, SESSIONS_RULES
from moonshot.protocols.sessions.server import SessionsOptions, SessionsServer
from moonshot.server.lobby import Lobby
from moonshot.server.table import BotSeat, OnBadAnswer, OnDisconnect, Seat, Table, TablePolicy, TableStatus
from moonshot.sim import BOT_REGISTRY, UnknownBot, make_bot
from moonshot.store import DEFAULT_URL, Store, StoreRecorder, register_rules, rules_named

log = logging.getLogger("moonshot.server")

register_rules(SESSIONS_RULES)


def bot_factory(name: str) -> Callable[[], Bot]:
    """A maker of fresh bots by name (see ``moonshot.sim``); falls back to ``random`` if missing."""
    try:
        make_bot(name)
    except UnknownBot as e:
        if name not in BOT_REGISTRY:
            raise ValueError(str(e)) from e
        log.warning("event=bot_unavailable bot=%s using=random", name)
        name = "random"
    return functools.partial(make_bot, name)


@dataclass
class ServerConfig:
    host: str = "127.0.0.1"
    sessions_port: int | None = DEFAULT_PORT  # None: Sessions disabled; 0: any free port
    db_url: str | None = DEFAULT_URL  # None: no store (nothing persisted)
    move_timeout: float = 10.0  # seconds per decision
    max_timeouts: int = 3  # timeouts in a row before a silent player is replaced by a bot
    fill_wait: float | None = 5.0  # seconds before `any` games are filled with bots
    restore_grace: float = 30.0  # seconds a restored table waits for its players before bots play
    bot: str = "heuristic"  # the bot that fills chairs and replaces players who left
    max_message: int = MAX_MESSAGE
    resync_idle: float = 5.0  # seconds of silence before half a message is dropped
    seed: int | None = None  # fixes table seeds (tests); None: random


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
    restored: int = 0  # unfinished games restored from the store at start

    def __post_init__(self) -> None:
        self._bot = bot_factory(self.config.bot)
        self._rng = random.Random(self.config.seed)
        self._stopping = asyncio.Event()

    # ------------------------------------------------------------ life cycle
    async def start(self) -> None:
        cfg = self.config
        first_session = 0
        if cfg.db_url:
            self.store = await Store.open(cfg.db_url)
            self.recorder = StoreRecorder(self.store)
            self.recorder.start()
        restored = await self._restore()
        for rec_players in restored:
            first_session = max(first_session, rec_players + 1)
        self.lobby = Lobby(self._start_table, self._make_bot, cfg.fill_wait, random.Random(self._rng.getrandbits(32)))
        if cfg.sessions_port is not None:
            self.sessions = SessionsServer(
                self.lobby,
                SessionsOptions(max_message=cfg.max_message, resync_idle=cfg.resync_idle),
                first_session,
                self.find_chair,
            )

            self.sessions_port = await self.sessions.start(cfg.host, cfg.sessions_port)
            log.info("event=listening protocol=sessions host=%s port=%d", cfg.host, self.sessions_port)

    async def stop(self, reason: str = "shutdown") -> None:
        """Stop listening, stop tables where they stand, flush the store."""
        # tables stop first, where they stand: closing connections first would hand the chairs
        # to substitute bots, which would play on until the tables heard the stop
        if self.sessions is not None:
            self.sessions.stop_listening()
        running = [t for t in self.tables.values() if not t.done.done()]
        for t in running:
            t.stop(reason)
        if running:
            await asyncio.wait([t.done for t in running], timeout=5)
        if self.sessions is not None:
            await self.sessions.close()
        if self.recorder is not None:
            await self.recorder.close()
        if self.store is not None:
            await self.store.close()
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

    def _start_table(self, seats: list[Seat]) -> Table:
        table = Table(
            SESSIONS_RULES,
            seats,
            seed=self._seed(),
            policy=self.policy(),
            table_id=f"{int(time.time() * 1000):x}-{self._rng.getrandbits(32):08x}",
            recorder=self.recorder,
            meta={"protocol": "sessions"},
        )
        self._track(table)
        return table

    def _track(self, table: Table) -> None:
        self.tables[table.id] = table
        table.start()
        table.done.add_done_callback(functools.partial(self._table_done, table))

    def _table_done(self, table: Table, _: object = None) -> None:
        self.tables.pop(table.id, None)
        if table.status is TableStatus.FINISHED:
            self.finished += 1

    def find_chair(self, session_id: int) -> tuple[Table, int] | None:
        """The chair of session ``session_id`` in a running game, if nobody sits in it now."""
        suffix = f"({session_id})"
        for t in self.tables.values():
            if t.done.done():
                continue
            for i, name in enumerate(t.names):
                if name.endswith(suffix) and t.chairs[i].occupant is None:
                    return t, i
        return None

    def _make_bot(self) -> Seat:
        bot = self._bot()
        name = self.sessions.bot_tag(f"moonshot_{bot.name}") if self.sessions else f"moonshot_{bot.name}"
        return BotSeat(bot, random.Random(self._rng.getrandbits(32)), name=name)

    async def _restore(self) -> list[int]:
        """Restart every unfinished stored game; returns the highest session ids they used."""
        if self.store is None:
            return []
        ids: list[int] = []
        for rec in await self.store.unfinished():
            try:
                rules = rules_named(rec.variant)
                names = [str(p.get("name", "")) for p in rec.players]
                table = Table(
                    rules,
                    [None, None, None, None],
                    seed=rec.seed,
                    policy=self.policy(grace=self.config.restore_grace),
                    table_id=rec.id,
                    recorder=self.recorder,
                    actions=rec.actions,
                    forced=rec.forced,
                    restored=True,
                    names=names,
                    meta={"protocol": rec.protocol, "restored": True},
                )
            except Exception as e:
                log.exception("event=restore_failed game=%s", rec.id)
                await self.store.mark(rec.id, "failed")
                print(f"could not restore game {rec.id}: {e}", file=sys.stderr)
                continue
            for n in names:
                if n.endswith(")") and "(" in n:
                    with contextlib.suppress(ValueError):
                        ids.append(int(n[n.rindex("(") + 1 : -1]))
            log.info("event=restored game=%s actions=%d version=%d", rec.id, len(rec.actions), table.version)
            self._track(table)
            self.restored += 1
        return [max(ids)] if ids else []

    def describe(self) -> dict[str, Any]:
        return {
            "sessions": f"tcp://{self.config.host}:{self.sessions_port}" if self.sessions_port is not None else None,
            "db": self.config.db_url,
            "tables": len(self.tables),
        }


class KeyValueFormatter(logging.Formatter):
    """``ts=... level=... logger=... event=...``: messages are already key=value."""

    def format(self, record: logging.LogRecord) -> str:
        base = (
            f"ts={self.formatTime(record)} level={record.levelname.lower()} logger={record.name} {record.getMessage()}"
        )
        if record.exc_info:
            base += " exc=" + json.dumps(self.formatException(record.exc_info))
        return base


def configure_logging(level: str = "info") -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(KeyValueFormatter())
    root = logging.getLogger("moonshot")
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    root.propagate = False


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
    else:
        announce("moonshot: no protocol enabled (use --sessions-port)")
    announce(f"moonshot: games stored in {config.db_url or '(nowhere: --db not set)'}; Ctrl-C stops")
    announce(f"moonshot: engine {engine_build()}")
    announce(f"moonshot: {app.restored} unfinished games restored from the store")
    await app.serve_forever()


def engine_build() -> str:
    """How the engine runs: compiled with mypyc, or pure Python (and how to change that)."""
    if moonshot.compiled_modules():
        return "compiled with mypyc"
    if os.environ.get("MOONSHOT_PURE_PYTHON", "") not in ("", "0"):
        return "pure Python (MOONSHOT_PURE_PYTHON is set)"
    return "pure Python (`moonshot compile` makes it about 4x faster)"


__all__ = [
    "KeyValueFormatter",
    "ServerApp",
    "ServerConfig",
    "bot_factory",
    "configure_logging",
    "engine_build",
    "serve",
]
