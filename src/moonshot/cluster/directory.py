"""The tables this node owns, in the cluster's directory: what is written when a table starts
here (its lease, ``tables`` entry, start data in ``meta:``, its chairs' bindings and re-join
keys), the write-ahead log of its actions (:class:`ClusterRecorder`), and its removal once it is
finished and in the store.

It keeps no lease alive (:mod:`~moonshot.cluster.membership`) and chooses no players
(:mod:`~moonshot.cluster.pools`, :mod:`~moonshot.cluster.adoption` make the tables).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from moonshot.cluster.rejoin import ChairIndex
from moonshot.cluster.remote import RemoteSeat
from moonshot.cluster.state import NodeState
from moonshot.core.actions import Action, action_to_dict
from moonshot.runtime.table import Recorder, SeatKind, Table, TableStatus
from moonshot.store import StoreRecorder


class ClusterRecorder:
    """The table's recorder in a cluster: each action goes to the Redis log (fenced, in order
    with the events it causes), then to the store's writer as usual."""

    def __init__(self, cluster: NodeState, inner: StoreRecorder | None) -> None:
        self.cluster = cluster
        self.inner = inner

    def game_started(self, table: Table) -> None:
        if self.inner is not None:
            self.inner.game_started(table)

    def action_applied(self, table: Table, index: int, action: Action, forced: bool) -> None:
        c = self.cluster
        entry = json.dumps({"i": index, "a": action_to_dict(action), "f": forced})
        c.write(c.key("lease", table.id), "r", c.key("log", table.id), entry)
        if self.inner is not None:
            self.inner.action_applied(table, index, action, forced)

    def game_finished(self, table: Table) -> None:
        if self.inner is not None:
            self.inner.game_finished(table)

    def game_failed(self, table: Table, reason: str) -> None:
        if self.inner is not None:
            self.inner.game_failed(table, reason)

    def __getattr__(self, name: str) -> Any:
        """The store writer's other calls (``put_value``, ``flush``...) go to it unchanged."""
        if name.startswith("_") or self.inner is None:
            raise AttributeError(name)
        return getattr(self.inner, name)


@dataclass(eq=False)
class Directory:
    """This node's tables in the directory (see the module docstring)."""

    state: NodeState
    chairs: ChairIndex

    def recorder(self) -> Recorder:
        return ClusterRecorder(self.state, self.state.host.recorder)

    def register_table(self, table: Table) -> None:
        """A table of another protocol (HTTP) started here: directory, lease and log, so that it
        is adopted when this node dies. Call before the table starts."""
        players: list[dict[str, Any]] = [
            {
                "name": n,
                "kind": "human" if c.occupant is not None and c.occupant.kind is SeatKind.HUMAN else "bot",
                # as the store's game row has them: an adopter whose store lacks the row (not yet
                # written) still knows which chairs are other protocols' players, and their hashes
                "protocol": str(getattr(c.occupant, "protocol", "server")) if c.occupant is not None else "empty",
                **({"credential": cred} if cred is not None else {}),
            }
            for n, c, cred in zip(table.seat_names(), table.chairs, table.credentials)
        ]
        tmeta = {k: v for k, v in table.meta.items() if isinstance(v, (str, int, float, bool))}
        self.register(table, {"players": players, "tmeta": tmeta})

    def register(self, table: Table, meta: dict[str, Any]) -> None:
        """Directory entries for a table this node now owns (queued before any of its events)."""
        s = self.state
        lease = s.key("lease", table.id)
        s.write("", "s", lease, s.node, int(s.lease * 1000))
        s.write(lease, "h", s.key("tables"), table.id, s.node)
        info = {
            "variant": table.rules.name,
            "seed": table.seed,
            "salt": table.seal.salt,  # the deals' commitment: an adopter publishes the same one
            "protocol": table.meta["protocol"],  # every cluster table's meta names it
            "names": list(table.names),
            "creds": table.credentials,
            **meta,
        }
        s.write(lease, "s", s.key("meta", table.id), json.dumps(info))
        for chair, seat in enumerate(table.chairs):
            occ = seat.occupant
            if isinstance(occ, RemoteSeat):
                s.write(lease, "h", s.key("bind", table.id), str(chair), f"{occ.node} {occ.binding}")
        for keys_of in s.table_keys:  # re-join keys whatever the table's protocol (Sessions')
            if keys := keys_of(table):
                self.chairs.index_chairs(table, keys)
        s.owned[table.id] = table
        tid = table.id
        s.writer.local("", lambda: s._leased.add(tid))  # once the lease is in Redis

    def table_done(self, table: Table) -> None:
        """The table ended here: a finished or failed game leaves the directory once its
        record is in the store; a stopped one (shutdown) is released for adoption."""
        s = self.state
        if s.owned.get(table.id) is not table:
            return
        if table.status is TableStatus.STOPPED:
            return  # close() releases the lease
        s._spawn(self.forget(table), limit=False)

    async def forget(self, table: Table) -> None:
        s = self.state
        if s.host.recorder is not None:
            await s.host.recorder.flush()
        tid = table.id
        lease = s.key("lease", tid)
        s.write(lease, "hd", s.key("tables"), tid)
        for kind in ("meta", "log", "bind"):
            s.write(lease, "d", s.key(kind, tid))
        s.write(lease, "d", lease)
        s.owned.pop(tid, None)
