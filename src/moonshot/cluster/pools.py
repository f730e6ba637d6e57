"""The lobby pools in Redis: a player's ticket joins its pool (protocol, game type, code) and the
node whose atomic pop (a Lua script) makes four owns the new table; a ticket whose wait is over
fills its table with bots; a running table's emptied chair goes to the first ticket waiting for
it or is marked free (the pool's free-chair hashes, ``free:POOL:C``), and a joining ticket
claims the chair free longest first (through the table's owner, as a re-join does).
:class:`ClusterLobby` is the process's lobby on top of them.

A ticket carries its player's address (the share key its node's guard counts). The node that
pops a group starts its table only while each of those addresses may start one here
(``Lobby.pace``: the server's one table rate, ``ClientGuard.start_table``, which paces its
in-process lobby and its HTTP games too); otherwise the group goes back to the head of its pool,
where it waits as on one process (a player who leaves meanwhile costs nothing), and is popped
again once the rate allows.

It never runs a table it did not form here (the owner does), and adopts none.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from moonshot.cluster.directory import Directory
from moonshot.cluster.kinds import Placed, Ticket, pool_key, pool_name, text
from moonshot.cluster.rejoin import ChairIndex
from moonshot.cluster.remote import RemoteSeat, tell_matched, ticket_seat
from moonshot.cluster.state import NodeState
from moonshot.runtime.lobby import Candidate, GameType, Lobby, Reseating, honour_chairs
from moonshot.runtime.table import Seat, Table, TableStatus

log = logging.getLogger("moonshot.cluster")

CLAIM_TRIES = 40  # claims of running tables' free chairs refused before a player just waits for one
CLAIM_RETRY = 0.25  # s before the join again after such a refusal

# KEYS[1]: the pool; ARGV[1]: the ticket ('' = only try to form a table); ARGV[2]: key prefix;
# ARGV[3]: '1' for exact chairs; ARGV[4]: the pool's free-chair hashes ('' = none; + chair, a hash
# table id -> 'v <ms>' free since, or 'o <node>' held through a node). Drops tickets of dead nodes.
# With free chairs, the ticket's chair free longest at a running table is claimed ({'seat', id})
# (one held through a dead node counts as free); else the ticket waits. Four live tickets (exact:
# the first for each chair) are removed and returned: the caller owns the new table; never while
# a table with chairs offered here waits for its adopter (its players, back, must find them).
_JOIN_LUA = """
local pool, p, exact, free = KEYS[1], ARGV[2], ARGV[3] == '1', ARGV[4]
local function alive(n) return redis.call('EXISTS', p .. 'node:' .. n) == 1 end
if ARGV[1] ~= '' then
  local t = cjson.decode(ARGV[1])
  if free ~= '' then
    local h = free .. t['chair']
    local seats = redis.call('HGETALL', h)
    local best, score = nil, nil
    for i = 1, #seats, 2 do
      local tid, st = seats[i], seats[i + 1]
      if redis.call('HEXISTS', p .. 'tables', tid) == 0 then
        redis.call('HDEL', h, tid)
      else
        local kind, v = string.match(st, '^(%a) (.*)$')
        local s = nil
        if kind == 'v' then s = tonumber(v) elseif kind == 'o' and not alive(v) then s = 0 end
        if s and (best == nil or s < score) then best, score = tid, s end
      end
    end
    if best then
      redis.call('HSET', h, best, 'o ' .. t['node'])
      return {'seat', best}
    end
  end
  redis.call('RPUSH', pool, ARGV[1])
end
local items = redis.call('LRANGE', pool, 0, -1)
local live, heads = {}, {}
for _, it in ipairs(items) do
  local t = cjson.decode(it)
  if alive(t['node']) then
    table.insert(live, it)
    if exact and heads[t['chair'] + 1] == nil then heads[t['chair'] + 1] = it end
  else
    redis.call('LREM', pool, 1, it)
  end
end
local group = {}
if exact then
  for c = 1, 4 do
    if heads[c] == nil then return {} end
    group[c] = heads[c]
  end
elseif #live >= 4 then
  group = {live[1], live[2], live[3], live[4]}
else
  return {}
end
if free ~= '' then
  for c = 0, 3 do
    for _, tid in ipairs(redis.call('HKEYS', free .. c)) do
      if redis.call('HEXISTS', p .. 'tables', tid) == 0 then
        redis.call('HDEL', free .. c, tid)
      elseif redis.call('EXISTS', p .. 'lease:' .. tid) == 0 then
        return {}
      end
    end
  end
end
for _, it in ipairs(group) do redis.call('LREM', pool, 1, it) end
return group
"""

# KEYS[1]: the pool; ARGV: prefix, the chair's free hash, chair, table id, now (ms), this node. A
# chair of a running table emptied: the first live ticket waiting for that chair is removed and
# returned (it takes the chair); else the chair is marked free. Only while this node holds the lease.
_VACATE_LUA = """
local pool, p, h, tid = KEYS[1], ARGV[1], ARGV[2], ARGV[4]
if redis.call('GET', p .. 'lease:' .. tid) ~= ARGV[6] then return false end
for _, it in ipairs(redis.call('LRANGE', pool, 0, -1)) do
  local t = cjson.decode(it)
  if tostring(t['chair']) == ARGV[3] and redis.call('EXISTS', p .. 'node:' .. t['node']) == 1 then
    redis.call('LREM', pool, 1, it)
    redis.call('HSET', h, tid, 'o ' .. t['node'])
    return it
  end
end
redis.call('HSET', h, tid, 'v ' .. ARGV[5])
return false
"""

# KEYS[1]: the pool; ARGV[1]: the ticket whose wait is over; ARGV[2]: prefix. If that ticket still
# waits, the first (up to) four live tickets are removed and returned: a table filled with bots.
_FILL_LUA = """
local pool = KEYS[1]
local items = redis.call('LRANGE', pool, 0, -1)
local found = false
local alive = {}
for _, it in ipairs(items) do
  if it == ARGV[1] then found = true end
  local t = cjson.decode(it)
  if redis.call('EXISTS', ARGV[2] .. 'node:' .. t['node']) == 1 then
    table.insert(alive, it)
  else
    redis.call('LREM', pool, 1, it)
  end
end
if not found then return {} end
local group = {}
for k = 1, math.min(4, #alive) do
  table.insert(group, alive[k])
  redis.call('LREM', pool, 1, alive[k])
end
return group
"""


def _flag(c: Candidate) -> str:
    return "1" if c.exact_chair else "0"  # the join script's exact-chair mode


@dataclass(eq=False)
class Pools:
    """This node's tickets in the Redis pools, and the tables it forms from them."""

    state: NodeState
    chairs: ChairIndex
    directory: Directory
    # the pools' scripts, registered with Redis at start
    _join: Any = field(default=None, init=False)
    _fill: Any = field(default=None, init=False)
    _free: Any = field(default=None, init=False)

    def load(self, redis: Any) -> None:
        self._join = redis.register_script(_JOIN_LUA)
        self._fill = redis.register_script(_FILL_LUA)
        self._free = redis.register_script(_VACATE_LUA)

    def queue(self, c: Candidate, fill_wait: float | None) -> None:
        s = self.state
        seat = c.seat
        tid = secrets.token_hex(8)
        ticket_text = json.dumps(
            {
                "id": tid,
                "node": s.node,
                "name": seat.name,
                "kind": seat.kind.value,
                "cred": seat.credential,
                "chair": c.chair,
                "addr": c.address,  # its share key: the table rate of the node that forms its table
            }
        )
        name = pool_name((c.protocol, c.game_type, c.lobby_code))
        ticket = Ticket(c, ticket_text, s.key("lobby", name), name)
        s.tickets[tid] = ticket
        c.joined_at = asyncio.get_running_loop().time()
        s._spawn(self._join_pool(tid, ticket, fill_wait))

    def unqueue(self, c: Candidate) -> bool:
        s = self.state
        for tid, t in list(s.tickets.items()):
            if t.candidate is c:
                del s.tickets[tid]
                if t.timer is not None:
                    t.timer.cancel()
                assert s.redis is not None
                s._spawn(s.redis.lrem(t.pool, 1, t.text))
                return True
        return False

    async def _join_pool(self, tid: str, ticket: Ticket, fill_wait: float | None) -> None:
        s = self.state
        c = ticket.candidate
        # a running table's free chair first (Kierki), unless claims kept failing: then it waits
        free = s.free_key(ticket.name) if c.reseat is not None and ticket.tries < CLAIM_TRIES else ""
        got = [text(g) for g in await self._join(keys=[ticket.pool], args=[ticket.text, s.prefix, _flag(c), free])]
        if got and got[0] == "seat":
            s._spawn(self._take_free(tid, ticket, got[1]), limit=False)
        elif got and self.form(c.protocol, got, fill=False, pool=ticket.name, exact=_flag(c)):
            pass
        elif not got and tid not in s.tickets:  # the player left while its ticket was on its way: out again
            assert s.redis is not None
            await s.redis.lrem(ticket.pool, 1, ticket.text)
        elif fill_wait is not None and not s._closing and tid in s.tickets:  # it waits (paced: its group too)
            loop = asyncio.get_running_loop()
            ticket.timer = loop.call_later(fill_wait, lambda: s._spawn(self._fill_pool(ticket)))

    async def _fill_pool(self, ticket: Ticket) -> None:
        group = await self._fill(keys=[ticket.pool], args=[ticket.text, self.state.prefix])
        if group:
            self.form(ticket.candidate.protocol, [text(g) for g in group], fill=True, pool=ticket.name)

    async def _take_free(self, tid: str, ticket: Ticket, table_id: str) -> None:
        """The pool's join claimed a free chair of running table ``table_id`` for the ticket: its
        owner is asked for it as for a re-join (``table.attach``); refused (taken meanwhile, the
        table ended), the join again, a little later."""
        s = self.state
        c = ticket.candidate

        def closed() -> bool:
            return tid not in s.tickets or c.seat.gone

        seated = await self.chairs.take(
            table_id, c.chair or 0, None, c.protocol, functools.partial(self.seated, tid), closed
        )
        if not seated and not closed():
            ticket.tries += 1
            await asyncio.sleep(CLAIM_RETRY)
            s._spawn(self._join_pool(tid, ticket, None))

    async def vacate(self, r: Reseating, chair: int) -> None:
        """A chair of a running table this node owns emptied: the first live player waiting for
        it in the table's pool takes it (``seat.matched``), else it is marked free for the next."""
        s = self.state
        t, name = r.table, pool_name(r.key)
        await s.drain()  # the unbind and the table's last writes first
        if t.done.done() or r.seats[chair] is not None:
            return
        ms = int(time.time() * 1000)
        pool = s.key("lobby", name)
        got = await self._free(keys=[pool], args=[s.prefix, s.free_key(name, chair), chair, t.id, ms, s.node])
        if not got:
            return
        got_text = text(got)
        if t.done.done() or r.seats[chair] is not None:  # taken meanwhile: it waits on, first
            assert s.redis is not None
            await s.redis.lpush(pool, got_text)
            return
        ticket = json.loads(got_text)
        seat = ticket_seat(s, ticket, r.key[0])
        s.write(s.key("lease", t.id), "h", s.key("bind", t.id), str(chair), f"{seat.node} {seat.binding}")
        tell_matched(s, t, chair, seat, ticket["id"])
        t.attach(chair, seat, replay=True)

    async def try_form(self, name: str) -> None:
        """Players that waited while a table of their pool waited for its adopter may now make
        a table of their own."""
        s = self.state
        await asyncio.sleep(0.5)  # once the adopted table's lease and chairs are in Redis
        protocol = pool_key(name)[0]
        args = ["", s.prefix, "1", s.free_key(name)]
        group = [text(g) for g in await self._join(keys=[s.key("lobby", name)], args=args)]
        if group and group[0] != "seat":
            self.form(protocol, group, fill=False, pool=name, exact="1")

    def _paced(self, tickets: list[dict[str, Any]]) -> float:
        """The seconds until the players of ``tickets`` may start a table on this node: their
        addresses' table rate (the lobby's ``pace``; 0.0: now, and the start is counted)."""
        lobby = self.state.lobby
        addresses = [a for t in tickets if isinstance(a := t.get("addr"), str) and a]
        if lobby is None or lobby.pace is None or not addresses:
            return 0.0
        wait = lobby.pace(addresses)
        if wait:
            lobby.paced += 1
            log.debug("event=table_paced addresses=%s wait=%.2f", sorted(set(addresses)), wait)
        return wait

    async def _wait_turn(self, protocol: str, group: list[str], fill: bool, pool: str, exact: str, wait: float) -> None:
        """A group popped while its addresses may not start a table: back at the head of its pool
        in its order (it waits there: a player who leaves takes its ticket out), and popped again
        in ``wait`` seconds: the first four waiting then, as a join would (a fill: the first of
        the group still waiting stands for the wait that was over)."""
        s = self.state
        key = s.key("lobby", pool)
        assert s.redis is not None
        await s.redis.lpush(key, *reversed(group))
        await asyncio.sleep(wait)
        if s._closing:
            return
        if fill:
            for t in group:
                got = [text(g) for g in await self._fill(keys=[key], args=[t, s.prefix])]
                if got:
                    self.form(protocol, got, fill=True, pool=pool)
                    return
            return
        free = s.free_key(pool) if s.tables[protocol].reseat is not None else ""
        got = [text(g) for g in await self._join(keys=[key], args=["", s.prefix, exact, free])]
        if got and got[0] != "seat":
            self.form(protocol, got, fill=False, pool=pool, exact=exact)

    def form(self, protocol: str, group: list[str], fill: bool, pool: str, exact: str = "0") -> bool:
        """This node won the pop: it owns the new table; each player's node hears ``seat.matched``.
        False when the players' addresses must wait for their table rate: the group goes back to
        its pool (``exact``: its join script's exact-chair mode) and is popped again then."""
        s = self.state
        host, kind = s.host, s.tables[protocol]
        assert kind.rules is not None
        tickets = [json.loads(g) for g in group]
        wait = self._paced(tickets)
        if wait:
            s._spawn(self._wait_turn(protocol, group, fill, pool, exact, wait), limit=False)
            return False
        entries: Placed = [(ticket_seat(s, t, protocol), t) for t in tickets]
        while len(entries) < 4:
            entries.append((host.bot_seat(protocol), None))
        s._rng.shuffle(entries)  # then the chairs asked for (Trend's playerNumber, Kierki's seat)
        final = honour_chairs(entries, lambda e: e[1].get("chair") if e[1] is not None else None)
        seats = [seat for seat, _ in final]
        tmeta = dict(kind.table_meta)
        table = Table(
            kind.rules,
            seats,
            seed=host.seed(),
            policy=kind.policy(host.policy(0.0)),
            table_id=f"{int(time.time() * 1000):x}-{secrets.token_hex(4)}",
            recorder=self.directory.recorder(),
            meta={"protocol": protocol, **tmeta},
            deals=kind.deals(tmeta) if kind.deals is not None else None,
        )
        info = {"protocol": protocol, "fill": fill, "pool": pool, **(kind.start_data(final) if kind.start_data else {})}
        if tmeta:
            info["tmeta"] = {**info.get("tmeta", {}), **tmeta}
        self.directory.register(table, info)
        if kind.chair_keys is not None:
            self.chairs.index_chairs(table, kind.chair_keys(table, info))
        if kind.reseat is not None and s.lobby is not None:  # its chairs offered again when left
            s.lobby.reopen(table, pool_key(pool), kind.reseat, list(seats))
            for chair, seat in enumerate(seats):
                if isinstance(seat, RemoteSeat):
                    s.write(s.key("lease", table.id), "h", s.free_key(pool, chair), table.id, f"o {seat.node}")
        for chair, (occupant, t) in enumerate(final):
            if isinstance(occupant, RemoteSeat) and t is not None:
                tell_matched(s, table, chair, occupant, t["id"])
        s.formed += 1
        host.matched()
        host.track(table)
        log.info(
            "event=cluster_matched protocol=%s table=%s players=%s filled=%s",
            protocol,
            table.id,
            table.seat_names(),
            fill,
        )
        return True

    def seated(self, tid: str, rt: Table, chair: int) -> Seat | None:
        """The player of ticket ``tid`` takes chair ``chair`` of ``rt`` (a stand-in); None: it left
        (after its ticket was taken), the chair is empty."""
        s = self.state
        ticket = s.tickets.pop(tid, None)
        if ticket is not None and ticket.timer is not None:
            ticket.timer.cancel()
        c = ticket.candidate if ticket is not None else s.claimed(tid) if s.claimed is not None else None
        if c is None or c.seat.gone:
            return None
        try:
            c.on_matched(rt, chair)
        except Exception:
            log.exception("event=on_matched_failed table=%s", rt.id)
            return None
        return c.seat


class HasPools(Protocol):
    """The node, as its lobby needs it."""

    pools: Pools


class ClusterLobby(Lobby):
    """The lobby for a cluster: the pools of the protocols the cluster makes tables for
    (:attr:`Cluster.tables`: Sessions, Trend) live in Redis (see the module docstring); any
    other protocol matches in-process, as with one process."""

    def __init__(self, cluster: HasPools, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pools = cluster.pools
        self.cluster = cluster.pools.state
        self.cluster.lobby = self

    def waiting(self) -> int:
        return super().waiting() + len(self.cluster.tickets)

    def join(self, c: Candidate) -> None:
        if c.protocol not in self.cluster.tables:
            super().join(c)
            return
        self.admissible(c)  # the operator's bans and drain too, as on one process
        c.joined_at = asyncio.get_running_loop().time()
        if self.router is not None and self.router.claim(c):
            return  # a code naming a table hosted in this process (an HTTP game, a tournament seat)
        self.pools.queue(c, self.fill_wait if c.game_type is GameType.ANY and not c.exact_chair else None)

    def leave(self, c: Candidate) -> bool:
        if c.protocol not in self.cluster.tables:
            return super().leave(c)
        if self.router is not None and self.router.release(c):
            return True
        return self.pools.unqueue(c)

    # a running table's free chairs are offered through Redis (the pool's free-chair hashes)
    def _offer(self, r: Reseating, chair: int) -> None:
        if r.key[0] in self.cluster.tables:
            self.cluster._spawn(self.pools.vacate(r, chair), limit=False)
        else:
            super()._offer(r, chair)

    def _given_up(self, r: Reseating) -> None:
        self._unlist(r)
        self.cluster._spawn(self.pools.directory.forget(r.table), limit=False)  # stopped: it would be adopted

    def _closed(self, r: Reseating) -> None:
        if r.table.status is not TableStatus.STOPPED:  # stopped (shutdown): it goes on elsewhere
            self._unlist(r)

    def _unlist(self, r: Reseating) -> None:
        """The table's chairs are offered no more."""
        t, c = r.table, self.cluster
        if r.key[0] in c.tables:
            for chair in range(4):
                c.write(c.key("lease", t.id), "hd", c.free_key(pool_name(r.key), chair), t.id)
