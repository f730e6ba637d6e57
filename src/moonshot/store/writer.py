"""The store's writer and its durability queue: :class:`StoreRecorder` is the table-side writer.
Tables call it without waiting (it is a :class:`~moonshot.runtime.table.Recorder`); it queues the
rows and one task writes them in order, one transaction per batch (what was queued while the last
write ran, and at most one commit every ``commit_interval`` seconds: group commit), then tells each
table how many of its actions are durable; a table shows nobody an action before that, so a killed
server loses nothing a player was shown. A store that cannot be written is retried with capped,
jittered backoff while the tables pause (``store_unavailable`` / ``store_recovered``).

It builds the rows a table's history makes and decides when they are written; it issues no SQL
itself (:meth:`moonshot.store.repository.Store.write_batch` does).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import random
import time
import weakref
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.exc import DataError, DBAPIError, IntegrityError

from moonshot.bots.registry import spec_of
from moonshot.core.actions import Action, action_to_dict
from moonshot.store.repository import Store, deal_to_json, now
from moonshot.store.urls import why_failed

log = logging.getLogger("moonshot.store")

# seconds from one commit's start to the next's, at least (StoreRecorder.commit_interval): at 1,000
# decisions a second a commit then holds about two tables' rows, not one (docs/server.md)
COMMIT_INTERVAL = 0.002


class _Op:
    """One queued write; ``table``/``ticket``: after it commits, the table's first ``ticket``
    actions are durable (the ``game`` row counts as ticket 0)."""

    __slots__ = ("kind", "table", "ticket", "values")

    def __init__(self, kind: str, values: dict[str, Any], table: Any = None, ticket: int = -1) -> None:
        self.kind = kind
        self.values = values
        self.table = table
        self.ticket = ticket


def backoff_delay(attempt: int, base: float, cap: float, rng: random.Random) -> float:
    """Seconds before retry ``attempt`` (0, 1, ...): ``base * 2**attempt``, at most ``cap``, and
    then a random 50-100% of that, so processes that failed together do not retry together."""
    return min(cap, base * float(2 ** min(attempt, 60))) * rng.uniform(0.5, 1.0)


def transient(e: BaseException) -> bool:
    """An error that says the store cannot be written now (retry it), not that the row is bad.

    A database that refuses the row itself (a constraint, a value it cannot hold) or a value
    that cannot even be sent (``StatementError`` around a ``TypeError``) will refuse it again:
    that is a bug, logged and skipped. Everything else the driver raises (a read-only file, a
    full disk, a lost connection, a locked database, a server in recovery) and any ``OSError``
    is the store being away, and the write is retried until it goes through."""
    if isinstance(e, (IntegrityError, DataError)):
        return False
    return isinstance(e, (DBAPIError, OSError))


class StoreRecorder:
    """Queues tables' history for the store; one task writes it in order (group commit) and
    tells each table which of its actions are durable (see :meth:`Table.durable`).

    While the store cannot be written, the batch is retried with capped, jittered exponential
    backoff, in order, never dropped; every subscribed table is paused (``storage_paused``) and
    resumed once a write goes through again (``storage_resumed``)."""

    acknowledges = True  # tables wait for ``durable`` before they show an action to anyone

    def __init__(
        self,
        store: Store,
        protocol: str = "",
        batch_delay: float = 0.0,
        retry_base: float = 0.05,
        retry_cap: float = 2.0,
        max_batch: int = 500,
        commit_interval: float = COMMIT_INTERVAL,
    ) -> None:
        self.store = store
        self.protocol = protocol
        self.batch_delay = batch_delay  # seconds to gather more rows before a write (0: group commit only)
        self.retry_base = retry_base
        self.retry_cap = retry_cap
        self.max_batch = max_batch
        # seconds from one commit's start to the next's, at least: under a steady stream of rows
        # the writer commits once per interval, every table's rows of that interval together
        # (a commit writes whole pages to the WAL whatever it holds); after a quiet spell the
        # first row is written at once
        self.commit_interval = commit_interval
        self._last_commit = float("-inf")  # loop time the last write began
        self._nap: asyncio.Future[None] | None = None  # the wait for the interval (close ends it)
        self._queue: collections.deque[_Op] = collections.deque()
        self._wake = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None
        self._tables: weakref.WeakSet[Any] = weakref.WeakSet()  # told of pauses and recoveries
        self._rng = random.Random()
        self.written = 0
        self.errors = 0
        self.retries = 0
        self.available = True
        self.unavailable_since: float | None = None  # loop time of the first failed write of an outage
        self.outages = 0
        self._why = ""
        self._busy = False
        self._last_finish: datetime | None = None
        # told of each committed batch: (seconds the write took, rows); the operator's metrics
        self.on_commit: Callable[[float, int], None] | None = None

    @property
    def queued(self) -> int:
        """Writes waiting for the writer (the batch being written not counted)."""
        return len(self._queue)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="store-writer")

    async def close(self, timeout: float = 30.0) -> None:
        """Write everything queued, then stop. A store still away after ``timeout`` seconds gets
        nothing more: what is left was never acknowledged (no table showed it), and a restart
        replays what was written."""
        if self._task is None:
            return
        self._closing = True
        self._wake.set()
        if self._nap is not None and not self._nap.done():
            self._nap.set_result(None)  # what is queued is written now
        try:
            await asyncio.wait_for(asyncio.shield(self._task), timeout)
        except TimeoutError:
            log.error("event=store_unwritten ops=%d reason=the store stayed unavailable at shutdown", len(self._queue))
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._task = None

    async def flush(self) -> None:
        """Wait until everything queued so far is written (however long the store is away)."""
        while self._queue or self._busy:
            await asyncio.sleep(0.005)

    def subscribe(self, table: Any) -> None:
        """``table`` hears ``storage_paused``/``storage_resumed`` (it is told at once if the store is away)."""
        self._tables.add(table)
        if not self.available:
            table.storage_paused(self._why)

    def unsubscribe(self, table: Any) -> None:
        self._tables.discard(table)

    def _put(self, op: _Op) -> None:
        self._queue.append(op)
        self._wake.set()

    async def _run(self) -> None:
        while True:
            if not self._queue:
                if self._closing:
                    return
                self._wake.clear()
                await self._wake.wait()
                continue
            self._busy = True
            if self.batch_delay:
                await asyncio.sleep(self.batch_delay)
            if self.commit_interval > 0:
                loop = asyncio.get_running_loop()
                wait = self._last_commit + self.commit_interval - loop.time()
                if wait > 0 and not self._closing:
                    self._nap = nap = loop.create_future()
                    timer = loop.call_later(wait, _wake_up, nap)
                    try:
                        await nap
                    finally:
                        timer.cancel()
                        self._nap = None
                self._last_commit = loop.time()
            # rows queued while the last write ran go in this one: one commit for all of them
            n = min(len(self._queue), self.max_batch)
            ops = [self._queue.popleft() for _ in range(n)]
            await self._write(ops)
            self._acknowledge(ops)
            self._busy = False

    async def _write(self, ops: list[_Op]) -> None:
        """Write ``ops`` in one transaction, retrying while the store is away; a batch the
        database refuses as invalid is written op by op, and only the invalid op is skipped."""
        attempt = 0
        while True:
            started = time.perf_counter()
            try:
                await self.store.write_batch([(op.kind, op.values) for op in ops])
            except asyncio.CancelledError:
                raise
            except Exception as e:
                if transient(e):
                    self._unavailable(e)
                    delay = backoff_delay(attempt, self.retry_base, self.retry_cap, self._rng)
                    attempt += 1
                    self.retries += 1
                    log.debug("event=store_retry attempt=%d delay=%.3f error=%s", attempt, delay, why_failed(e))
                    await asyncio.sleep(delay)
                    continue
                if len(ops) > 1:
                    log.warning("event=store_batch_refused ops=%d error=%s", len(ops), why_failed(e))
                    for op in ops:
                        await self._write([op])
                    return
                self.errors += 1
                log.error("event=store_write_failed op=%s error=%s", ops[0].kind, why_failed(e))
                return
            self.written += len(ops)
            if self.on_commit is not None:
                self.on_commit(time.perf_counter() - started, len(ops))
            if not self.available:
                self._recovered()
            return

    def _unavailable(self, e: BaseException) -> None:
        if not self.available:
            return
        self.available = False
        self.outages += 1
        self.unavailable_since = asyncio.get_running_loop().time()
        self._why = why_failed(e)
        log.error("event=store_unavailable queued=%d error=%s", len(self._queue), self._why)
        for table in list(self._tables):
            table.storage_paused(self._why)

    def _recovered(self) -> None:
        since = self.unavailable_since
        paused = asyncio.get_running_loop().time() - since if since is not None else 0.0
        self.available = True
        self.unavailable_since = None
        log.warning("event=store_recovered paused_s=%.3f queued=%d retries=%d", paused, len(self._queue), self.retries)
        for table in list(self._tables):
            table.storage_resumed(paused)

    def _acknowledge(self, ops: list[_Op]) -> None:
        """Tell each table how many of its actions are now durable (one call per table)."""
        best: dict[int, tuple[Any, int]] = {}
        for op in ops:
            if op.table is not None:
                key = id(op.table)
                seen = best.get(key)
                if seen is None or op.ticket > seen[1]:
                    best[key] = (op.table, op.ticket)
        for table, ticket in best.values():
            durable = getattr(table, "durable", None)
            if durable is not None:
                durable(ticket)

    # Recorder (called from table tasks; never blocks)
    def game_started(self, table: Any) -> None:
        players = [
            {"name": n, "kind": _kind(c), "protocol": _protocol(c)} for n, c in zip(table.seat_names(), table.chairs)
        ]
        # a moonshot bot the server runs is rated under its spec (``search --simulations 200``)
        for player, chair in zip(players, table.chairs):
            bot = getattr(chair.occupant, "bot", None)
            if bot is not None:
                player["bot"] = spec_of(bot)
        # the hash of each chair's secret (never the secret): a restored chair can be resumed
        for player, credential in zip(players, getattr(table, "credentials", ())):
            if credential is not None:
                player["credential"] = credential
        values = {
            "id": table.id,
            "variant": table.rules.name,
            "seed": table.seed,
            "protocol": table.meta.get("protocol", self.protocol),
            "players": players,
            "status": "running",
            "created_at": now(),
            "meta": {k: v for k, v in table.meta.items() if isinstance(v, (str, int, float, bool))},
        }
        if getattr(table, "deals", None):  # fixed deals (a game file's): kept as data, to rebuild the game
            values["meta"]["fixed_deals"] = [deal_to_json(d) for d in table.deals]
        self._put(_Op("game", values, table, 0))

    def action_applied(self, table: Any, index: int, action: Action, forced: bool) -> None:
        values = {"game_id": table.id, "idx": index, "action": action_to_dict(action), "forced": forced, "at": now()}
        self._put(_Op("action", values, table, index + 1))

    def game_finished(self, table: Any) -> None:
        g = table.game
        # strictly increasing finish times: ratings are rebuilt in (finished_at, id) order, which
        # is then the order this writer rated the games in
        at = now()
        if self._last_finish is not None and at <= self._last_finish:
            at = self._last_finish + timedelta(microseconds=1)
        self._last_finish = at
        values = {"id": table.id, "status": "finished", "finished_at": at, "totals": list(g.totals)}
        values["winners"] = list(g.winners)
        self._put(_Op("status", values))
        self._put(_Op("rate", {"id": table.id}))  # a separate op: a failure loses no result

    def game_failed(self, table: Any, reason: str) -> None:
        self._put(_Op("status", {"id": table.id, "status": "failed", "finished_at": now()}))

    def game_aborted(self, table: Any, reason: str) -> None:
        """Given up unfinished (a Kierki table nobody came back to): never restored."""
        self._put(_Op("status", {"id": table.id, "status": "aborted", "finished_at": now()}))

    # named values (Store.put_value) written by the same task, in order with the game rows: one
    # writer, so SQLite never sees two transactions at once
    def put_value(self, key: str, value: Any) -> None:
        self._put(_Op("kv_set", {"key": key, "value": value}))

    def delete_value(self, key: str) -> None:
        self._put(_Op("kv_delete", {"key": key}))


def _wake_up(nap: asyncio.Future[None]) -> None:
    if not nap.done():
        nap.set_result(None)


def _kind(chair: Any) -> str:
    occ = chair.occupant or chair.substitute
    return occ.kind.value if occ is not None else "empty"


def _protocol(chair: Any) -> str:
    """The protocol the chair's player came over (mixed tables): sessions, trend, http, server."""
    occ = chair.occupant or chair.substitute
    return str(getattr(occ, "protocol", "server")) if occ is not None else "empty"
