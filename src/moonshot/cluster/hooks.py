"""What the layers above the cluster ask of it to forward HTTP requests and host games across
nodes (:mod:`moonshot.http.peers`, :mod:`moonshot.cluster.mixed`), beyond the registries they
fill in :class:`~moonshot.cluster.state.NodeState` (``handlers``, ``adopters``, ``keeper_hooks``,
``on_lease_lost``) and ``send``/``after_writes``: which node hosts a game (open, running, or
finished and kept for its rematch), a value one per cluster (the cookie-signing key), and a
claim on an open HTTP game at start.

It forwards nothing itself (HTTP lives in :mod:`moonshot.http.peers`) and imports no protocol.
"""

from __future__ import annotations

from dataclasses import dataclass

from moonshot.cluster.membership import Membership
from moonshot.cluster.state import NodeState


@dataclass(eq=False)
class Hooks:
    """Lookups and claims for the layers above (see the module docstring)."""

    state: NodeState
    members: Membership

    async def game_node(self, game_id: str) -> str | None:
        """The node hosting a game by id: a table's owner in the directory (waiting for the
        adopter while its owner is dead), else the node that holds it open (``httpgame``), else
        the live node whose lobby keeps it finished (``httpdone:<id>``, for its rematch)."""
        s = self.state
        assert s.redis is not None
        if await s.redis.hexists(s.key("tables"), game_id):
            owner = await self.members.live_owner(game_id)
            return owner.decode() if owner is not None else None
        node = await s.redis.hget(s.key("httpgame"), game_id)
        if node is None:
            node = await s.redis.get(s.key("httpdone", game_id))
        if node is None or not await self.members.node_alive(node.decode()):
            return None
        return str(node.decode())

    async def shared_value(self, name: str, made: str) -> str:
        """A value one per cluster (the first node's ``made`` wins): the cookie-signing key."""
        s = self.state
        assert s.redis is not None
        await s.redis.set(s.key("shared", name), made, nx=True)
        got = await s.redis.get(s.key("shared", name))
        return got.decode() if got is not None else made

    async def claim_open(self, game_id: str) -> bool:
        """At start: may this node hold open HTTP game ``game_id`` (kept in the store)? Yes when no
        live node holds it and no other node claimed it just now."""
        s = self.state
        assert s.redis is not None
        node = await s.redis.hget(s.key("httpgame"), game_id)
        if node is not None and node.decode() != s.node and await self.members.node_alive(node.decode()):
            return False
        if not await s.redis.set(s.key("httpclaim", game_id), s.node, nx=True, px=int(s.lease * 2000)):
            return False
        await s.redis.hset(s.key("httpgame"), game_id, s.node)
        return True
