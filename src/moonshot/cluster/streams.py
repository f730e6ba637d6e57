"""The node's stream: the reader of this node's Redis stream (``in:<node>``), each entry decoded
against the message schema and dispatched: a player's message to a table this node owns
(submit, reject, detach, attach), a table owner's message to a player connected here (events,
requests, seated, closed, adopted), or a kind a protocol above registered (``handlers``).

It only routes: what a chair, a pool or a re-join does with a message is theirs, and an entry that
breaks the schema is logged and dropped, never executed.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from typing import Any, cast

from moonshot.cluster import messages as wire
from moonshot.cluster.pools import Pools
from moonshot.cluster.rejoin import ChairIndex
from moonshot.cluster.remote import RemoteRequest, RemoteSeat, stand_in
from moonshot.cluster.state import NodeState
from moonshot.core.actions import ActionFormatError, action_from_dict
from moonshot.runtime.table import Table, TableNotice

log = logging.getLogger("moonshot.cluster")

READ_BLOCK_MS = 1000
_TO_TABLE = wire.TO_TABLE  # messages a player's node sends to a table's owner


class Streams:
    """This node's stream reader and message dispatch (see the module docstring)."""

    def __init__(self, state: NodeState, chairs: ChairIndex, pools: Pools) -> None:
        self.state = state
        self.chairs = chairs
        self.pools = pools
        self._last_id = "0-0"

    async def read(self) -> None:
        """The reader's task, for as long as the node runs."""
        s = self.state
        assert s.redis is not None
        stream = s.key("in", s.node)
        while True:
            try:
                got = await s.redis.xread({stream: self._last_id}, count=1000, block=READ_BLOCK_MS)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("event=cluster_read_failed")
                await asyncio.sleep(0.5)
                continue
            for _, entries in got or ():
                for entry_id, fields in entries:
                    self._last_id = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
                    self.handle_entry(fields)

    def handle_entry(self, fields: Any) -> None:
        """One stream entry: decoded against the schema, then dispatched. An entry that breaks
        the schema (garbage, a hostile writer, a newer node's kind) is dropped with a log line;
        one whose handling fails is logged too. The reader goes on either way."""
        data = fields.get(b"m") if isinstance(fields, dict) else None
        if not isinstance(data, bytes):
            log.warning("event=cluster_bad_message id=%s reason=%s", self._last_id, json.dumps("no 'm' field"))
            return
        try:
            msg = wire.decode(data)
        except wire.WireError as e:
            log.warning(
                "event=cluster_bad_message id=%s reason=%s entry=%s",
                self._last_id,
                json.dumps(str(e)),
                wire.describe(data),
            )
            return
        try:
            self.dispatch(msg)
        except Exception:
            log.exception("event=cluster_message_failed id=%s kind=%s", self._last_id, msg.kind)

    def dispatch(self, msg: wire.Message) -> None:
        k = msg.kind
        if k in _TO_TABLE:
            self._to_table(msg)
        elif k in self.state.handlers:
            self.state.handlers[k](msg)
        else:
            self._to_seat(msg)

    def _to_table(self, msg: Any) -> None:
        """A message from a player's node to a table this node owns."""
        s = self.state
        table = s.owned.get(msg.table) or s.served.get(msg.table)
        if isinstance(msg, wire.Attach):
            self.chairs.attach(table, msg)
            return
        if table is None or table.done.done():
            return
        chair = msg.chair
        occupant = table.chairs[chair].occupant
        if not isinstance(occupant, RemoteSeat) or occupant.binding != msg.binding:
            return  # a stale binding (replaced, substituted): ignored
        if isinstance(msg, wire.Submit):
            try:
                action = action_from_dict(msg.action)
            except ActionFormatError as e:
                table.reject(chair, msg.request, f"malformed action: {e}")
                return
            table.submit(chair, action, msg.request)
        elif isinstance(msg, wire.Unreadable):
            table.reject(chair, msg.request, msg.reason)
        elif isinstance(msg, wire.Detach):
            s.unbind(table.id, occupant)
            table.detach(chair, occupant, msg.reason)

    def _to_seat(self, msg: Any) -> None:
        """A message from a table's owner to a player connected here."""
        s = self.state
        if isinstance(msg, wire.Matched):
            self._matched(msg)
            return
        if isinstance(msg, wire.Attached | wire.Refused):
            answer = s.answers.pop(msg.binding, None)  # the protocol's re-join waiting for it
            if answer is not None:
                answer(msg)
            return
        b = s.bindings.get(msg.binding)
        if b is None:
            # the player left: its node told the owner (a Detach), which may not have heard yet,
            # or told an owner that died since; a request means the chair still waits for it
            if isinstance(msg, wire.Request):
                s._spawn(self._stale(msg))
            return
        seat, rt = b.seat, b.table
        if isinstance(msg, wire.Events):
            if msg.state is not None:
                rt.state = msg.state
            fresh = [e for e in msg.events if e.version > b.last_version]
            if fresh:
                b.last_version = fresh[-1].version
                seat.on_events(cast(Table, rt), fresh)
        elif isinstance(msg, wire.Request):
            if msg.state is not None:
                rt.state = msg.state
            req = RemoteRequest(
                rt.id, msg.chair, msg.request, msg.version, msg.phase, msg.legal, msg.hand, msg.trick, msg.trick_cards
            )
            seat.on_request(cast(Table, rt), req)
        elif isinstance(msg, wire.Rejected):
            if seat.request is not None and seat.request.request_id == msg.request:
                seat.on_rejected(cast(Table, rt), seat.request, None, msg.reason)
        elif isinstance(msg, wire.Notice):
            seat.on_notice(cast(Table, rt), TableNotice(msg.notice, msg.cause, msg.text))
        elif isinstance(msg, wire.Closed):
            s.bindings.pop(b.id, None)
            rt.status = msg.status
            seat.on_closed(cast(Table, rt), msg.reason)
        elif isinstance(msg, wire.Adopted):
            rt.owner = msg.owner
            seat.owes_pass = True  # a pass sent to the old owner may be lost: the round again, live

    def _matched(self, msg: wire.Matched) -> None:
        """Seated at a new table (or a running one's free chair): the player's own adapter plays
        it through a RemoteTable."""
        seated = functools.partial(self.pools.seated, msg.ticket)
        stand_in(self.state, msg, msg.credential, msg.restored, seated, "left the lobby")

    async def _stale(self, msg: wire.Request) -> None:
        """A request for a chair no connection here holds (it left while the table changed
        owner, and its detach went to the dead owner): the owner frees the chair, or a table
        that waits for its players would wait for that one forever."""
        s = self.state
        assert s.redis is not None
        owner = await s.redis.hget(s.key("tables"), msg.table)
        if owner is not None:
            detach = wire.Detach(table=msg.table, binding=msg.binding, chair=msg.chair, reason="disconnected")
            s.send(owner.decode(), detach)
