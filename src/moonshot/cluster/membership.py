"""Membership, heartbeats and leases: this node's heartbeat in Redis and the list of live nodes,
the renewal of its tables' leases (a lease this node no longer holds stops its table here), the
chairs whose player's node died, whether a node is alive and which live node runs a table, and
jobs only one node may run (a tournament).

It registers no table and adopts none (:mod:`~moonshot.cluster.directory`,
:mod:`~moonshot.cluster.adoption`), and touches no lobby pool.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from moonshot.cluster.remote import RemoteSeat
from moonshot.cluster.state import NodeState

log = logging.getLogger("moonshot.cluster")

# a job only one node may run (a tournament): taken when nobody holds it or its holder's heartbeat
# is gone; KEYS[1] the job, ARGV[1] this node, ARGV[2] the prefix
_CLAIM_LUA = """
local h = redis.call('GET', KEYS[1])
if h and h ~= ARGV[1] and redis.call('EXISTS', ARGV[2] .. 'node:' .. h) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
return 1
"""

# KEYS: lease keys; ARGV[1]: me, ARGV[2]: PX ms. Renews ours; returns the ones no longer ours.
_RENEW_LUA = """
local lost = {}
for _, k in ipairs(KEYS) do
  if redis.call('GET', k) == ARGV[1] then redis.call('PEXPIRE', k, ARGV[2]) else table.insert(lost, k) end
end
return lost
"""


class Membership:
    """The node among the others: heartbeat, live nodes, leases (see the module docstring)."""

    def __init__(self, state: NodeState) -> None:
        self.state = state
        self._renew: Any = None
        self._claim: Any = None

    def load(self, redis: Any) -> None:
        self._renew = redis.register_script(_RENEW_LUA)
        self._claim = redis.register_script(_CLAIM_LUA)

    async def heartbeat(self) -> None:
        s = self.state
        assert s.redis is not None
        ms = int(s.lease * 1000)
        async with s.redis.pipeline(transaction=False) as p:
            p.set(s.key("node", s.node), "1", px=ms)
            p.expire(s.key("in", s.node), 24 * 3600)
            p.sadd(s.key("nodes"), s.node)
            p.smembers(s.key("nodes"))
            members = (await p.execute())[-1]
        others = sorted(m.decode() for m in members if m.decode() != s.node)
        if others:
            async with s.redis.pipeline(transaction=False) as p:
                for n in others:
                    p.exists(s.key("node", n))
                alive = await p.execute()
            dead = [n for n, a in zip(others, alive) if not a]
            if dead:
                await s.redis.srem(s.key("nodes"), *dead)
            others = [n for n, a in zip(others, alive) if a]
        s.live_nodes = others

    async def renew_leases(self) -> None:
        s = self.state
        for tid in [t for t, table in s.owned.items() if table.done.done()]:
            s.owned.pop(tid, None)
        s._leased &= s.owned.keys()
        keys = [s.key("lease", t) for t in s.owned if t in s._leased]
        if not keys:
            return
        lost = await self._renew(keys=keys, args=[s.node, int(s.lease * 1000)])
        for k in lost or ():
            self.lease_lost(k.decode() if isinstance(k, bytes) else str(k))

    def lease_lost(self, lease_key: str) -> None:
        """This node no longer holds the lease ``lease_key``: its table stops here, nothing more
        of it goes out, and the ``on_lease_lost`` hooks hear of it."""
        s = self.state
        table_id = lease_key[len(s.prefix) + len("lease:") :]
        s._fenced.add(table_id)
        t = s.owned.pop(table_id, None)
        if t is not None and not t.done.done():
            log.warning("event=lease_lost table=%s node=%s", table_id, s.node)
            t.stop("lease lost: another node runs this table")
            for hook in s.on_lease_lost:
                try:
                    hook(table_id)
                except Exception:
                    log.exception("event=lease_lost_hook_failed table=%s", table_id)

    async def check_players(self) -> None:
        """A player's node that died took the connection with it: its chairs go to substitutes."""
        s = self.state
        assert s.redis is not None
        nodes = {
            c.occupant.node
            for t in s.owned.values()
            for c in t.chairs
            if isinstance(c.occupant, RemoteSeat) and c.occupant.node != s.node
        }
        for node in nodes:
            if not await s.redis.exists(s.key("node", node)):
                for t in s.owned.values():
                    for i, c in enumerate(t.chairs):
                        if isinstance(c.occupant, RemoteSeat) and c.occupant.node == node:
                            s.unbind(t.id, c.occupant)
                            t.detach(i, c.occupant, "the player's server process is gone")

    async def node_alive(self, node: str) -> bool:
        s = self.state
        assert s.redis is not None
        return bool(await s.redis.exists(s.key("node", node)))

    async def live_owner(self, table_id: str) -> bytes | None:
        """The node that runs the table; while its owner is dead and the table not yet adopted
        (up to a few leases), wait for the adopter. None: no such table (any more)."""
        s = self.state
        loop = asyncio.get_running_loop()
        end = loop.time() + 3 * s.lease + 5
        while True:
            owner = await s.redis.hget(s.key("tables"), table_id)
            if owner is None:
                return None
            if await s.redis.exists(s.key("lease", table_id)) and await s.redis.exists(s.key("node", owner.decode())):
                return owner  # type: ignore[no-any-return]
            if loop.time() > end:
                return None
            await asyncio.sleep(0.1)

    async def claim_job(self, job: str) -> bool:
        """Run ``job`` (``tournament:<id>``) on this node: true when no live node holds it. A
        tournament runs on the node that created it; when that node dies, a live node takes it
        (its keeper sees the node gone; or a node that starts), its schedule going on from the
        store, and never two at once."""
        s = self.state
        assert s.redis is not None
        return bool(await self._claim(keys=[s.key("job", job)], args=[s.node, s.prefix]))
