"""The operator's decisions across the nodes of a cluster: :class:`ClusterModeration`.

When a node's :class:`~moonshot.server.admin.Admin` bans or unbans, mutes or unmutes, or sends a
notice, every other node hears it at once through the cluster's own messages
(``moderation.changed``, to every node's stream) and applies it here: the ban held by its
``ClientGuard`` (so every protocol of that node refuses the client) and the open connections it
covers closed, the mute held, the notice shown to that node's people. A close of a game hosted by
another node is sent to that node (the one in the cluster's directory), which closes it. A
change goes out once its row is in the store (in the order they were made), so a node that
hears of a ban and lifts it at once deletes a row that is there.

A node re-reads the rows (:meth:`~moonshot.runtime.moderation.ModerationRows.refresh`) every
:data:`REREAD` seconds besides: the safety net for a message lost while Redis was away, or one
sent while this node was starting. What a change means is decided here and in the admin; the
cluster only carries it (it imports no protocol and knows nothing of bans).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

from moonshot.cluster.messages import ModerationChanged
from moonshot.runtime.controls import Ban
from moonshot.runtime.moderation import ban_key, mute_key
from moonshot.server.admin import STORE_WAIT

log = logging.getLogger("moonshot.admin")

REREAD = 15.0  # seconds between two reads of the rows (the safety net under the messages)


class ClusterModeration:
    """The admin's link to the other nodes (``Admin.sync``): tells them, hears them, re-reads."""

    def __init__(self, admin: Any, cluster: Any, reread: float = REREAD) -> None:
        self.admin = admin
        self.cluster = cluster
        self.reread = reread
        self.heard = 0  # changes applied from other nodes
        self._task: asyncio.Task[None] | None = None
        self._sender: asyncio.Task[None] | None = None
        self._outbox: asyncio.Queue[tuple[str | None, dict[str, Any]]] = asyncio.Queue()
        cluster.handlers[ModerationChanged.kind] = self._on_message
        admin.sync = self

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._task = loop.create_task(self._rereading(), name="moderation-reread")
        self._sender = loop.create_task(self._sending(), name="moderation-send")

    async def close(self) -> None:
        """Stop re-reading; changes still waiting for the store go out first (bounded)."""
        if self._sender is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._outbox.join(), STORE_WAIT)
        for task in (self._task, self._sender):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._task = self._sender = None

    # ------------------------------------------------------------ what this node tells
    def tell(self, change: dict[str, Any]) -> None:
        """Every other node applies ``change`` (once this node's rows are in the store)."""
        self._outbox.put_nowait((None, change))

    async def _sending(self) -> None:
        while True:
            node, change = await self._outbox.get()
            try:
                await self.admin.rows.written(STORE_WAIT)  # a store away: sent anyway
                msg = ModerationChanged(node=self.cluster.node, change=change)
                if node is None:
                    self.cluster.send_all(msg)
                else:
                    self.cluster.send(node, msg)
            finally:
                self._outbox.task_done()

    async def host_of(self, table_id: str) -> str | None:
        """The node running a table, by the cluster's directory (None: no live node does)."""
        node: str | None = await self.cluster.game_node(table_id)
        return node

    def close_on(self, node: str, table_id: str, reason: str, by: str) -> None:
        change = {"action": "close", "table": table_id, "reason": reason, "by": by}
        self._outbox.put_nowait((node, change))

    # ------------------------------------------------------------ what this node hears
    def _on_message(self, msg: Any) -> None:
        if isinstance(msg, ModerationChanged) and msg.node != self.cluster.node:
            self.apply(msg.change, msg.node)

    def apply(self, change: dict[str, Any], node: str) -> bool:
        """Apply another node's change here; False (and a log line) when it is not one."""
        admin, controls, rows = self.admin, self.admin.controls, self.admin.rows
        action = change.get("action")
        done: Any = None
        if action in ("ban", "unban"):
            b = Ban.from_json(change.get("ban"))
            if b is not None:
                rows.heard(ban_key(b))
                if action == "ban":
                    controls.keep(b)
                    done = f"closed={admin.disconnect(b)}"
                else:
                    done = f"lifted={controls.unban(b.kind, b.value) is not None}"
        elif action in ("mute", "unmute"):
            m = Ban.from_json(change.get("mute"))
            if m is not None and m.kind == "name":
                rows.heard(mute_key(m.value))
                if action == "mute":
                    controls.keep_mute(m)
                    done = "held"
                else:
                    done = f"lifted={controls.unmute(m.value) is not None}"
        elif action == "notice" and isinstance(change.get("message"), str):
            admin.show_notice(" ".join(change["message"].split())[:500])
            done = "shown"
        elif action == "close" and isinstance(change.get("table"), str):
            reason = change.get("reason")
            done = f"closed={admin.close_here(change['table'], reason if isinstance(reason, str) else '')}"
        if done is None:
            log.warning("event=moderation_refused from=%s change=%s", node, json.dumps(change)[:200])
            return False
        self.heard += 1
        log.info("event=moderation_heard from=%s action=%s %s", node, action, done)
        return True

    async def _rereading(self) -> None:
        while True:
            await asyncio.sleep(self.reread)
            try:
                for b in await self.admin.rows.refresh():
                    closed = self.admin.disconnect(b)
                    log.info("event=moderation_reread kind=%s value=%s closed=%d", b.kind, json.dumps(b.value), closed)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # the store away: the next read
                log.warning("event=moderation_reread_failed error=%s", type(e).__name__)


__all__ = ["REREAD", "ClusterModeration"]
