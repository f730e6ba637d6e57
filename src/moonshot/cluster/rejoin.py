"""The chair index and re-join: the keys under which a table's chairs are found again on any node
(``chair:{key}`` -> {table id: chair}; Sessions' session id, Trend's number and name digest),
taking a chair back through its table's owner (``table.attach``, asked again while refused as
taken for a few leases), and the owner's side of that request.

The credential is checked by the protocol's own proof, never here; this module forms no table,
runs no lobby pool and adopts nothing.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from moonshot.cluster import messages as wire
from moonshot.cluster.kinds import pool_name
from moonshot.cluster.membership import Membership
from moonshot.cluster.remote import RemoteSeat, stand_in
from moonshot.cluster.state import NodeState
from moonshot.runtime.table import Seat, SeatKind, Table, TableStatus

log = logging.getLogger("moonshot.cluster")

CHAIR_TTL_S = 7 * 24 * 3600  # a re-join key lasts this long without a new game on it


@dataclass(eq=False)
class ChairIndex:
    """The re-join keys of this node's tables and the re-joins of its players (see the module
    docstring)."""

    state: NodeState
    members: Membership

    def index_chairs(self, table: Table, keys: Sequence[tuple[int, str]]) -> None:
        """Re-join keys of a table this node runs, as (chair, key): ``chair:{key}`` -> {table id:
        chair}, found by :meth:`rejoin` on any node (Sessions' session id, Trend's number and
        name digest are such keys). Out again when the game ends here (a stopped one goes on
        elsewhere; its adopter indexes it again)."""
        s = self.state
        lease = s.key("lease", table.id)
        for chair, k in keys:
            s.write(lease, "h", s.key("chair", k), table.id, str(chair))
            s.write("", "e", s.key("chair", k), str(CHAIR_TTL_S))

        def out(_: object) -> None:
            if table.status is not TableStatus.STOPPED:
                for _, k in keys:
                    s.write("", "hd", s.key("chair", k), table.id)

        table.done.add_done_callback(out)

    def rejoin(
        self,
        key: str,
        proof: Callable[[str], bool],
        protocol: str,
        seated: Callable[[Table, int], Seat | None],
        closed: Callable[[], bool],
        refused: Callable[[], None],
    ) -> None:
        """Take back a chair indexed under ``key`` whose credential ``proof`` accepts (a
        :class:`~moonshot.runtime.lobby.ChairRejoin`): its table's owner is asked
        (``table.attach``); ``seated`` makes the protocol's seat adapter for the chair's
        stand-in, ``refused`` is called when no chair is taken back."""
        s = self.state

        async def run() -> None:
            assert s.redis is not None
            try:
                for raw_id, raw_chair in (await s.redis.hgetall(s.key("chair", key))).items():
                    table_id, chair = raw_id.decode(), int(raw_chair)
                    meta_raw = await s.redis.get(s.key("meta", table_id))
                    creds = (json.loads(meta_raw).get("creds") or []) if meta_raw is not None else []
                    cred = creds[chair] if 0 <= chair < len(creds) else None
                    if (
                        isinstance(cred, str)
                        and proof(cred)
                        and await self.take(table_id, chair, cred, protocol, seated, closed)
                    ):
                        return
            except Exception:
                log.exception("event=rejoin_failed protocol=%s", protocol)
            refused()

        s._spawn(run(), limit=False)

    async def take(
        self,
        table_id: str,
        chair: int,
        cred: str | None,
        protocol: str,
        seated: Callable[[Table, int], Seat | None],
        closed: Callable[[], bool],
    ) -> bool:
        """Ask the table's owner for the chair, again while it is refused as taken for a few
        leases (the owner has not heard yet that the old connection is gone) or unanswered."""
        s = self.state
        loop = asyncio.get_running_loop()
        end = loop.time() + max(3.0, 3 * s.lease)
        while not closed():
            owner = await self.members.live_owner(table_id)
            if owner is None:
                return False
            binding = secrets.token_hex(8)
            answer: asyncio.Future[wire.Attached | wire.Refused] = loop.create_future()

            def answered(msg: wire.Attached | wire.Refused, answer: asyncio.Future[Any] = answer) -> None:
                # the chair is taken here and now, before the next stream entry (its replay)
                if isinstance(msg, wire.Attached):
                    late = answer.done() or closed()
                    stand_in(s, msg, cred, False, (lambda t, c: None) if late else seated, "disconnected")
                if not answer.done():
                    answer.set_result(msg)

            s.answers[binding] = answered
            attach = wire.Attach(table=table_id, binding=binding, chair=chair, node=s.node, protocol=protocol)
            s.send(owner.decode(), attach)
            try:
                msg = await asyncio.wait_for(asyncio.shield(answer), max(3.0, 2 * s.lease))
            except TimeoutError:
                answer.cancel()  # a late seat.attached gives the chair up
                if loop.time() > end + 2 * s.lease:
                    return False
                continue
            if isinstance(msg, wire.Attached):
                return True
            if msg.reason != "taken" or loop.time() > end:
                return False
            await asyncio.sleep(0.2)
        return True  # the connection went: nothing more to do for it

    def attach(self, table: Table | None, msg: wire.Attach) -> None:
        """The owner's side: a player's node asks for a chair back (its credential already
        matched there): a chair of a table of the player's protocol, or one with a credential (a
        mixed game's); or a free chair of a running table its pool offers (Kierki), free as the
        lobby's record says."""
        s = self.state
        chair = msg.chair
        offered = s.lobby.reseating(table.id) if table is not None and s.lobby is not None else None
        if (
            table is None
            or table.done.done()
            or not 0 <= chair < 4
            or not (table.meta.get("protocol") == msg.protocol or table.credentials[chair] is not None)
            or (offered.seats[chair] if offered is not None else table.chairs[chair].occupant) is not None
        ):
            taken = table is not None and not table.done.done() and 0 <= chair < 4
            refused = wire.Refused(table=msg.table, binding=msg.binding, reason="taken" if taken else "ended")
            s.send(msg.node, refused)
            return
        kind = s.tables[msg.protocol].seat_kind if msg.protocol in s.tables else SeatKind.HUMAN
        cred = table.credentials[chair]
        seat = RemoteSeat(s, msg.node, msg.binding, table.names[chair], kind, cred, msg.protocol)
        s.write("", "h", s.key("bind", table.id), str(chair), f"{seat.node} {seat.binding}")
        names = table.seat_names()
        names[chair] = table.names[chair]
        attached = wire.Attached(
            table=table.id, binding=msg.binding, chair=chair, owner=s.node, names=names, rules=table.rules.name
        )
        s.send(msg.node, attached)
        if offered is not None:
            s.write(
                s.key("lease", table.id),
                "h",
                s.free_key(pool_name(offered.key), chair),
                table.id,
                f"o {msg.node}",
            )
        table.attach(chair, seat, replay=True)
