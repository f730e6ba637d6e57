"""The operator's decisions kept in the store, one row each, so that the nodes of a cluster never
overwrite one another's: :class:`ModerationRows`.

Each ban is its own row of the store's ``kv`` table (``admin:ban:<kind>:<what>``), each mute too
(``admin:mute:<name>``), each audit entry too (``admin:audit:<ms>:<node>:<n>``, in time order).
A node writes only the rows of what it did, through the store's one writer; lifting a ban deletes
its row. :meth:`ModerationRows.load` reads them at start, after migrating the whole copy an older
server kept under one key (``admin:controls``, ``admin:audit``) into rows, once.
:meth:`ModerationRows.prune` deletes the rows of bans and mutes that have ended and the audit rows
past the newest :data:`AUDIT_KEEP`: at start, and every :data:`PRUNE_EVERY` seconds while the
server runs (:meth:`ModerationRows.prune_forever`), so a server that runs for months, or an
operator's script that bans in a loop, keeps a bounded trail.

:meth:`ModerationRows.refresh` makes :class:`~moonshot.runtime.controls.Controls` agree with the
rows again (the safety net under the cluster's messages, which tell every node at once): a row
not held is taken, a held ban with no row is dropped. A key this node changed or heard of in the
last :data:`GRACE` seconds is left as it is, so a write still on its way, or a lift whose delete
is, is not undone by a read that came before it.

It decides nothing about who is refused (that is :class:`Controls`) and sends nothing to other
nodes (that is the composition root's, :mod:`moonshot.server.moderation`).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Callable
from typing import Any

from moonshot.runtime.controls import Ban, Controls, name_key

log = logging.getLogger("moonshot.admin")

BAN_PREFIX = "admin:ban:"
MUTE_PREFIX = "admin:mute:"
AUDIT_PREFIX = "admin:audit:"
LEGACY_CONTROLS = "admin:controls"  # the whole copy an older server kept (migrated at start)
LEGACY_AUDIT = "admin:audit"
AUDIT_KEEP = 1000  # audit rows kept (older ones are deleted at start and every PRUNE_EVERY s)
PRUNE_EVERY = 3600.0  # seconds between two prunes of ended and old rows while the server runs
GRACE = 30.0  # seconds a key this node changed or heard of is not undone by a re-read
_KEY_MAX = 180  # the kv key column holds 200


def _row(prefix: str, ident: str) -> str:
    key = prefix + ident
    if len(key) <= _KEY_MAX:
        return key
    return prefix + "#" + hashlib.sha256(ident.encode()).hexdigest()  # a long name: its digest


def ban_key(ban: Ban) -> str:
    """The row of a ban: one per banned thing (a name by its compared form, a network)."""
    kind, what = ban.key()
    return _row(BAN_PREFIX, f"{kind}:{what}")


def mute_key(name: str) -> str:
    return _row(MUTE_PREFIX, name_key(name))


def audit_key(at: float, node: str, n: int) -> str:
    return f"{AUDIT_PREFIX}{int(at * 1000):015d}:{node[:80]}:{n:06d}"


class ModerationRows:
    """The rows of one node's :class:`Controls` and audit trail (see the module docstring).

    ``store`` reads (:class:`~moonshot.store.Store`), ``recorder`` writes in order with the games'
    rows (:class:`~moonshot.store.writer.StoreRecorder`); both None: nothing is kept."""

    def __init__(
        self,
        controls: Controls,
        store: Any = None,
        recorder: Any = None,
        node: str = "",
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.controls = controls
        self.store = store
        self.recorder = recorder
        self.node = node or "server"
        self.monotonic = monotonic
        self.audit: list[dict[str, Any]] = []  # this node's entries (the whole trail without a store)
        self._recent: dict[str, float] = {}  # key -> when this node changed or heard of it
        self._count = 0

    # ---------------------------------------------------------------- at start
    async def load(self) -> None:
        """Migrate an older whole copy into rows, drop ended rows and old audit rows, then read."""
        if self.store is None:
            return
        await self._migrate()
        await self.prune(at_start=True)
        await self.refresh()
        c = self.controls
        if c.bans or c.mutes:
            log.info("event=admin_loaded bans=%d mutes=%d", len(c.bans), len(c.mutes))

    async def prune(self, at_start: bool = False) -> int:
        """Delete the rows of ended (or unreadable) bans and mutes and the audit rows older than
        the newest :data:`AUDIT_KEEP`; how many. At start they are deleted at once; later through
        the writer, in order with this node's own writes, and a key this node changed or heard of
        in the last :data:`GRACE` seconds is left alone (a ban renewed just now)."""
        if self.store is None:
            return 0
        now = self.controls.clock()
        mono = self.monotonic()
        gone: list[str] = []
        for prefix in (BAN_PREFIX, MUTE_PREFIX):
            for key, raw in (await self.store.values(prefix)).items():
                b = Ban.from_json(raw)
                recent = key in self._recent and mono - self._recent[key] < GRACE
                if (b is None or not b.active(now)) and (at_start or not recent):
                    gone.append(key)
        audit = sorted(await self.store.values(AUDIT_PREFIX))
        gone += audit[: max(0, len(audit) - AUDIT_KEEP)]
        for key in gone:
            if at_start or self.recorder is None:
                await self.store.delete_value(key)
            else:
                self.recorder.delete_value(key)
        if gone and not at_start:
            log.info("event=admin_rows_pruned rows=%d", len(gone))
        return len(gone)

    async def prune_forever(self, every: float = PRUNE_EVERY) -> None:
        """:meth:`prune` every ``every`` seconds until cancelled; a store that is away: the next time."""
        while True:
            await asyncio.sleep(every)
            try:
                await self.prune()
            except asyncio.CancelledError:
                raise
            except Exception as e:
                log.warning("event=admin_prune_failed error=%s", type(e).__name__)

    async def _migrate(self) -> None:
        """The whole copy (``admin:controls``, ``admin:audit``) into a row each, then deleted. A
        row already there is newer and kept. Two nodes starting at once write the same rows."""
        assert self.store is not None
        old = await self.store.get_value(LEGACY_CONTROLS)
        if old is not None:
            legacy = Controls(self.controls.clock)
            legacy.load(old)
            have = set(await self.store.values(BAN_PREFIX)) | set(await self.store.values(MUTE_PREFIX))
            rows = [(ban_key(b), b) for b in legacy.active()]
            rows += [(mute_key(m.value), m) for m in legacy.active_mutes()]
            for key, b in rows:
                if key not in have:
                    await self._put_now(key, b.to_json())
            await self.store.delete_value(LEGACY_CONTROLS)
            log.info("event=admin_migrated bans=%d mutes=%d", len(legacy.bans), len(legacy.mutes))
        trail = await self.store.get_value(LEGACY_AUDIT)
        if trail is not None:
            entries = [e for e in trail if isinstance(e, dict)] if isinstance(trail, list) else []
            for i, entry in enumerate(entries[-AUDIT_KEEP:]):
                at = entry.get("at")
                when = float(at) if isinstance(at, int | float) and not isinstance(at, bool) else 0.0
                await self._put_now(audit_key(when, "migrated", i), entry)
            await self.store.delete_value(LEGACY_AUDIT)
            log.info("event=admin_audit_migrated entries=%d", len(entries))

    async def _put_now(self, key: str, value: Any) -> None:
        assert self.store is not None
        try:
            await self.store.put_value(key, value)
        except Exception as e:  # another node wrote the same row at the same moment: one is kept
            log.warning("event=admin_row_unwritten key=%s error=%s", key, type(e).__name__)

    # ---------------------------------------------------------------- what this node did
    def banned(self, ban: Ban) -> None:
        """A ban given here: its row written."""
        self._write(ban_key(ban), ban.to_json())

    def unbanned(self, ban: Ban) -> None:
        self._write(ban_key(ban), None)

    def muted(self, mute: Ban) -> None:
        self._write(mute_key(mute.value), mute.to_json())

    def unmuted(self, mute: Ban) -> None:
        self._write(mute_key(mute.value), None)

    def _write(self, key: str, value: Any) -> None:
        self._recent[key] = self.monotonic()
        if self.recorder is None:
            return
        if value is None:
            self.recorder.delete_value(key)
        else:
            self.recorder.put_value(key, value)

    def record(self, entry: dict[str, Any]) -> None:
        """An audit entry of this node: its own row, never another node's."""
        self.audit.append(entry)
        del self.audit[:-AUDIT_KEEP]
        self._count += 1
        if self.recorder is not None:
            at = entry.get("at")
            self.recorder.put_value(audit_key(at if isinstance(at, float) else 0.0, self.node, self._count), entry)

    async def written(self, timeout: float) -> bool:
        """Wait (at most ``timeout`` seconds) until what was queued is in the store; False when
        the store did not take it in time (it stays queued and is written when the store is back)."""
        if self.recorder is None:
            return True
        try:
            await asyncio.wait_for(self.recorder.flush(), timeout)
        except TimeoutError:
            return False
        return True

    async def trail(self, limit: int) -> list[dict[str, Any]]:
        """The last ``limit`` audit entries of every node, oldest first."""
        if self.store is None:
            return self.audit[-limit:]
        rows = await self.store.values(AUDIT_PREFIX)
        return [rows[k] for k in sorted(rows)[-limit:]]

    # ---------------------------------------------------------------- what another node did
    def heard(self, key: str) -> None:
        """Another node changed ``key`` (its message was applied): not undone by a re-read for a while."""
        self._recent[key] = self.monotonic()

    async def refresh(self) -> list[Ban]:
        """Make the controls agree with the rows (see the module docstring); the bans taken that
        were not held before (their connections are to be closed)."""
        if self.store is None:
            return []
        bans = await self.store.values(BAN_PREFIX)
        mutes = await self.store.values(MUTE_PREFIX)
        mono = self.monotonic()
        self._recent = {k: t for k, t in self._recent.items() if mono - t < GRACE}
        now = self.controls.clock()
        c = self.controls
        new: list[Ban] = []
        stored = {ban_key(b): b for b in map(Ban.from_json, bans.values()) if b is not None and b.active(now)}
        held = {ban_key(b): b for b in list(c.bans.values())}
        for key, b in stored.items():
            if key not in self._recent and held.get(key) != b:
                c.keep(b)
                if key not in held:
                    new.append(b)
        for key, b in held.items():
            if key not in stored and key not in self._recent:
                c.bans.pop(b.key(), None)
        stored_mutes = {
            mute_key(m.value): m
            for m in map(Ban.from_json, mutes.values())
            if m is not None and m.kind == "name" and m.active(now)
        }
        held_mutes = {mute_key(m.value): m for m in list(c.mutes.values())}
        for key, m in stored_mutes.items():
            if key not in self._recent and held_mutes.get(key) != m:
                c.keep_mute(m)
        for key, m in held_mutes.items():
            if key not in stored_mutes and key not in self._recent:
                c.mutes.pop(name_key(m.value), None)
        return new


__all__ = [
    "AUDIT_KEEP",
    "AUDIT_PREFIX",
    "BAN_PREFIX",
    "GRACE",
    "LEGACY_AUDIT",
    "LEGACY_CONTROLS",
    "MUTE_PREFIX",
    "PRUNE_EVERY",
    "ModerationRows",
    "audit_key",
    "ban_key",
    "mute_key",
]
