"""Many server processes, one set of tables, through Redis: the design, its Redis keys and its
messages are in docs/scaling.md ("The server on many processes").

A process with ``--redis`` is a *node*. The node whose lobby pop makes four players (a Lua script
on the pool's list) owns the new table: it holds the table's lease and writes every action to the
table's log in Redis, through one ordered writer whose batches are fenced by the lease, before
any player hears of it. Every seat whose player is connected (on this node or another) is one
:class:`RemoteSeat`, whatever the protocol; its node runs the protocol's own seat adapter against
a :class:`RemoteTable` stand-in. When a node dies, its leases expire and another node adopts its
tables by replaying their logs. What differs per protocol is data (:class:`TableKind`)
registered by the composition root; this package imports no protocol.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import random
import secrets
import socket
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from moonshot.cluster import messages as wire
from moonshot.cluster.directory import ClusterRecorder, Directory
from moonshot.cluster.kinds import Placed, TableKind, Ticket, pool_key, pool_name
from moonshot.cluster.kinds import text as _text
from moonshot.cluster.membership import Membership
from moonshot.cluster.rejoin import ChairIndex
from moonshot.cluster.remote import (
    Binding,
    RemoteRequest,
    RemoteSeat,
    RemoteTable,
    stand_in,
    tell_matched,
    ticket_seat,
)
from moonshot.cluster.state import NodeState
from moonshot.cluster.writer import ClusterUnavailable
from moonshot.core.actions import Action, ActionFormatError, action_from_dict, action_to_dict
from moonshot.runtime.lobby import Candidate, ChairRejoin, GameType, Lobby, LobbyError, Reseating, honour_chairs
from moonshot.runtime.table import (
    BotSeat,
    Recorder,
    Seat,
    SeatKind,
    Table,
    TableNotice,
    TableStatus,
)
from moonshot.store import now, rules_named

if TYPE_CHECKING:
    pass

log = logging.getLogger("moonshot.cluster")

READ_BLOCK_MS = 1000
MAX_CONNECTIONS = 64  # to Redis, per node: the reader, the writer, the keeper and the lobby's calls
INSTALL_HINT = "--redis needs the redis package: pip install 'moonshot[scale]'"
CLAIM_TRIES = 40  # claims of running tables' free chairs refused before a player just waits for one
CLAIM_RETRY = 0.25  # s before the join again after such a refusal


class ClusterError(Exception):
    """The cluster cannot be used (no redis package, Redis unreachable); one line for the CLI."""


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

_TO_TABLE = wire.TO_TABLE  # messages a player's node sends to a table's owner


def _flag(c: Candidate) -> str:
    return "1" if c.exact_chair else "0"  # the join script's exact-chair mode


# ------------------------------------------------------------------ the lobby
class ClusterLobby(Lobby):
    """The lobby for a cluster: the pools of the protocols the cluster makes tables for
    (:attr:`Cluster.tables`: Sessions, Trend) live in Redis (see the module docstring); any
    other protocol matches in-process, as with one process."""

    def __init__(self, cluster: Cluster, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cluster = cluster
        cluster.lobby = self

    def waiting(self) -> int:
        return super().waiting() + len(self.cluster.tickets)

    def join(self, c: Candidate) -> None:
        if c.protocol not in self.cluster.tables:
            super().join(c)
            return
        if c.game_type is GameType.HUMANS_ONLY and c.kind is not SeatKind.HUMAN:
            raise LobbyError("humans_only games are for human players (say player_kind: human)")
        if c.game_type is GameType.BOTS_ONLY and c.kind is not SeatKind.BOT:
            raise LobbyError("bots_only games are for bots (say player_kind: bot)")
        c.joined_at = asyncio.get_running_loop().time()
        if self.router is not None and self.router.claim(c):
            return  # a code naming a table hosted in this process (an HTTP game, a tournament seat)
        self.cluster.queue(c, self.fill_wait if c.game_type is GameType.ANY and not c.exact_chair else None)

    def leave(self, c: Candidate) -> bool:
        if c.protocol not in self.cluster.tables:
            return super().leave(c)
        if self.router is not None and self.router.release(c):
            return True
        return self.cluster.unqueue(c)

    # a running table's free chairs are offered through Redis (the pool's free-chair hashes)
    def _offer(self, r: Reseating, chair: int) -> None:
        if r.key[0] in self.cluster.tables:
            self.cluster._spawn(self.cluster._vacate(r, chair), limit=False)
        else:
            super()._offer(r, chair)

    def _given_up(self, r: Reseating) -> None:
        self._unlist(r)
        self.cluster._spawn(self.cluster.directory.forget(r.table), limit=False)  # stopped: it would be adopted

    def _closed(self, r: Reseating) -> None:
        if r.table.status is not TableStatus.STOPPED:  # stopped (shutdown): it goes on elsewhere
            self._unlist(r)

    def _unlist(self, r: Reseating) -> None:
        """The table's chairs are offered no more."""
        t, c = r.table, self.cluster
        if r.key[0] in c.tables:
            for chair in range(4):
                c.write(c.key("lease", t.id), "hd", c.free_key(pool_name(r.key), chair), t.id)


# ------------------------------------------------------------------ the node
class Cluster(NodeState):
    """This process's membership of the cluster (one per server process, which it sees as a
    :class:`~moonshot.cluster.host.Host`): its state is :class:`~moonshot.cluster.state.NodeState`,
    its writes go through the one ordered writer (:mod:`moonshot.cluster.writer`)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self._last_id = "0-0"
        self.members = Membership(self)
        self.chair_index = ChairIndex(self, self.members)
        self.directory = Directory(self, self.chair_index)
        self.writer.deliver = self._dispatch
        self.writer.lease_lost = self.members.lease_lost

    # -------------------------------------------------------------- life cycle
    async def start(self) -> None:
        try:
            import redis.asyncio as aioredis
        except ImportError:
            raise ClusterError(INSTALL_HINT) from None
        try:
            self.redis = aioredis.Redis.from_url(self.url, socket_connect_timeout=5, max_connections=MAX_CONNECTIONS)
            await self.redis.ping()
        except Exception as e:
            raise ClusterError(f"cannot reach Redis at {self.url}: {e}") from None
        r = self.redis
        await self.writer.load(r)
        self._join = r.register_script(_JOIN_LUA)
        self._fill = r.register_script(_FILL_LUA)
        self._free = r.register_script(_VACATE_LUA)
        self.members.load(r)
        await self.members.heartbeat()
        loop = asyncio.get_running_loop()
        for coro, name in (
            (self.writer.run(), "cluster-writer"),
            (self._reader(), "cluster-reader"),
            (self._keeper(), "cluster-keeper"),
        ):
            self._tasks.append(loop.create_task(coro, name=name))
        log.info("event=cluster_joined node=%s redis=%s lease=%.1f", self.node, self.url, self.lease)

    async def close(self) -> None:
        """Release this node's leases (its tables are stopped: other nodes adopt them now)."""
        self._closing = True
        for t in list(self.owned.values()):
            self.write(self.key("lease", t.id), "d", self.key("lease", t.id))
        self.owned.clear()
        self.write("", "d", self.key("node", self.node))
        self.write("", "sr", self.key("nodes"), self.node)
        await self.drain()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            # bounded: a task whose cancellation was swallowed (a library's timeout racing the
            # cancel, as asyncio.wait_for can on 3.11) must not hang the shutdown
            done, pending = await asyncio.wait(tasks, timeout=5)
            for task in done:
                if not task.cancelled():
                    task.exception()  # retrieved: no "never retrieved" noise at exit
            for task in pending:
                log.warning("event=cluster_task_stuck task=%s", task.get_name())
                task.cancel()
        if self.redis is not None:
            await self.redis.aclose()
        log.info("event=cluster_left node=%s", self.node)

    async def game_node(self, game_id: str) -> str | None:
        """The node hosting a game by id: a table's owner in the directory (waiting for the
        adopter while its owner is dead), else the node that holds it open (``httpgame``)."""
        assert self.redis is not None
        if await self.redis.hexists(self.key("tables"), game_id):
            owner = await self.members.live_owner(game_id)
            return owner.decode() if owner is not None else None
        node = await self.redis.hget(self.key("httpgame"), game_id)
        if node is None or not await self.members.node_alive(node.decode()):
            return None
        return str(node.decode())

    async def shared_value(self, name: str, made: str) -> str:
        """A value one per cluster (the first node's ``made`` wins): the cookie-signing key."""
        assert self.redis is not None
        await self.redis.set(self.key("shared", name), made, nx=True)
        got = await self.redis.get(self.key("shared", name))
        return got.decode() if got is not None else made

    async def claim_open(self, game_id: str) -> bool:
        """At start: may this node hold open HTTP game ``game_id`` (kept in the store)? Yes when no
        live node holds it and no other node claimed it just now."""
        assert self.redis is not None
        node = await self.redis.hget(self.key("httpgame"), game_id)
        if node is not None and node.decode() != self.node and await self.members.node_alive(node.decode()):
            return False
        if not await self.redis.set(self.key("httpclaim", game_id), self.node, nx=True, px=int(self.lease * 2000)):
            return False
        await self.redis.hset(self.key("httpgame"), game_id, self.node)
        return True

    # -------------------------------------------------------------- the reader
    async def _reader(self) -> None:
        assert self.redis is not None
        stream = self.key("in", self.node)
        while True:
            try:
                got = await self.redis.xread({stream: self._last_id}, count=1000, block=READ_BLOCK_MS)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("event=cluster_read_failed")
                await asyncio.sleep(0.5)
                continue
            for _, entries in got or ():
                for entry_id, fields in entries:
                    self._last_id = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
                    self._handle_entry(fields)

    def _handle_entry(self, fields: Any) -> None:
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
            self._dispatch(msg)
        except Exception:
            log.exception("event=cluster_message_failed id=%s kind=%s", self._last_id, msg.kind)

    def _dispatch(self, msg: wire.Message) -> None:
        k = msg.kind
        if k in _TO_TABLE:
            self._to_table(msg)
        elif k in self.handlers:
            self.handlers[k](msg)
        else:
            self._to_seat(msg)

    async def _vacate(self, r: Reseating, chair: int) -> None:
        """A chair of a running table this node owns emptied: the first live player waiting for
        it in the table's pool takes it (``seat.matched``), else it is marked free for the next."""
        t, name = r.table, pool_name(r.key)
        await self.drain()  # the unbind and the table's last writes first
        if t.done.done() or r.seats[chair] is not None:
            return
        ms = int(time.time() * 1000)
        pool = self.key("lobby", name)
        got = await self._free(keys=[pool], args=[self.prefix, self.free_key(name, chair), chair, t.id, ms, self.node])
        if not got:
            return
        text = _text(got)
        if t.done.done() or r.seats[chair] is not None:  # taken meanwhile: it waits on, first
            assert self.redis is not None
            await self.redis.lpush(pool, text)
            return
        ticket = json.loads(text)
        seat = ticket_seat(self, ticket, r.key[0])
        self.write(self.key("lease", t.id), "h", self.key("bind", t.id), str(chair), f"{seat.node} {seat.binding}")
        tell_matched(self, t, chair, seat, ticket["id"])
        t.attach(chair, seat, replay=True)

    async def _try_form(self, name: str) -> None:
        """Players that waited while a table of their pool waited for its adopter may now make
        a table of their own."""
        await asyncio.sleep(0.5)  # once the adopted table's lease and chairs are in Redis
        protocol = pool_key(name)[0]
        args = ["", self.prefix, "1", self.free_key(name)]
        group = [_text(g) for g in await self._join(keys=[self.key("lobby", name)], args=args)]
        if group and group[0] != "seat":
            self._form(protocol, group, fill=False, pool=name)

    def _to_table(self, msg: Any) -> None:
        """A message from a player's node to a table this node owns."""
        table = self.owned.get(msg.table) or self.served.get(msg.table)
        if isinstance(msg, wire.Attach):
            self.chair_index.attach(table, msg)
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
            self.unbind(table.id, occupant)
            table.detach(chair, occupant, msg.reason)

    def _to_seat(self, msg: Any) -> None:
        """A message from a table's owner to a player connected here."""
        if isinstance(msg, wire.Matched):
            self._matched(msg)
            return
        if isinstance(msg, wire.Attached | wire.Refused):
            answer = self.answers.pop(msg.binding, None)  # the protocol's re-join waiting for it
            if answer is not None:
                answer(msg)
            return
        b = self.bindings.get(msg.binding)
        if b is None:
            # the player left: its node told the owner (a Detach), which may not have heard yet,
            # or told an owner that died since; a request means the chair still waits for it
            if isinstance(msg, wire.Request):
                self._spawn(self._stale(msg))
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
            self.bindings.pop(b.id, None)
            rt.status = msg.status
            seat.on_closed(cast(Table, rt), msg.reason)
        elif isinstance(msg, wire.Adopted):
            rt.owner = msg.owner
            seat.owes_pass = True  # a pass sent to the old owner may be lost: the round again, live

    async def _stale(self, msg: wire.Request) -> None:
        """A request for a chair no connection here holds (it left while the table changed
        owner, and its detach went to the dead owner): the owner frees the chair, or a table
        that waits for its players would wait for that one forever."""
        assert self.redis is not None
        owner = await self.redis.hget(self.key("tables"), msg.table)
        if owner is not None:
            detach = wire.Detach(table=msg.table, binding=msg.binding, chair=msg.chair, reason="disconnected")
            self.send(owner.decode(), detach)

    # -------------------------------------------------------------- matching
    def queue(self, c: Candidate, fill_wait: float | None) -> None:
        seat = c.seat
        tid = secrets.token_hex(8)
        text = json.dumps(
            {
                "id": tid,
                "node": self.node,
                "name": seat.name,
                "kind": seat.kind.value,
                "cred": seat.credential,
                "chair": c.chair,
            }
        )
        name = pool_name((c.protocol, c.game_type, c.lobby_code))
        ticket = Ticket(c, text, self.key("lobby", name), name)
        self.tickets[tid] = ticket
        c.joined_at = asyncio.get_running_loop().time()
        self._spawn(self._join_pool(tid, ticket, fill_wait))

    async def _join_pool(self, tid: str, ticket: Ticket, fill_wait: float | None) -> None:
        c = ticket.candidate
        # a running table's free chair first (Kierki), unless claims kept failing: then it waits
        free = self.free_key(ticket.name) if c.reseat is not None and ticket.tries < CLAIM_TRIES else ""
        got = [_text(g) for g in await self._join(keys=[ticket.pool], args=[ticket.text, self.prefix, _flag(c), free])]
        if got and got[0] == "seat":
            self._spawn(self._take_free(tid, ticket, got[1]), limit=False)
        elif got:
            self._form(c.protocol, got, fill=False, pool=ticket.name)
        elif tid not in self.tickets:  # the player left while its ticket was on its way: out again
            assert self.redis is not None
            await self.redis.lrem(ticket.pool, 1, ticket.text)
        elif fill_wait is not None and not self._closing:
            loop = asyncio.get_running_loop()
            ticket.timer = loop.call_later(fill_wait, lambda: self._spawn(self._fill_pool(ticket)))

    async def _fill_pool(self, ticket: Ticket) -> None:
        group = await self._fill(keys=[ticket.pool], args=[ticket.text, self.prefix])
        if group:
            self._form(ticket.candidate.protocol, [_text(g) for g in group], fill=True, pool=ticket.name)

    async def _take_free(self, tid: str, ticket: Ticket, table_id: str) -> None:
        """The pool's join claimed a free chair of running table ``table_id`` for the ticket: its
        owner is asked for it as for a re-join (``table.attach``); refused (taken meanwhile, the
        table ended), the join again, a little later."""
        c = ticket.candidate

        def closed() -> bool:
            return tid not in self.tickets or c.seat.gone

        seated = await self.chair_index.take(
            table_id, c.chair or 0, None, c.protocol, functools.partial(self._seated, tid), closed
        )
        if not seated and not closed():
            ticket.tries += 1
            await asyncio.sleep(CLAIM_RETRY)
            self._spawn(self._join_pool(tid, ticket, None))

    def unqueue(self, c: Candidate) -> bool:
        for tid, t in list(self.tickets.items()):
            if t.candidate is c:
                del self.tickets[tid]
                if t.timer is not None:
                    t.timer.cancel()
                assert self.redis is not None
                self._spawn(self.redis.lrem(t.pool, 1, t.text))
                return True
        return False

    def _form(self, protocol: str, group: list[str], fill: bool, pool: str) -> None:
        """This node won the pop: it owns the new table; each player's node hears ``seat.matched``."""
        host, kind = self.host, self.tables[protocol]
        assert kind.rules is not None
        tickets = [json.loads(g) for g in group]
        entries: Placed = [(ticket_seat(self, t, protocol), t) for t in tickets]
        while len(entries) < 4:
            entries.append((host.bot_seat(protocol), None))
        self._rng.shuffle(entries)  # then the chairs asked for (Trend's playerNumber, Kierki's seat)
        final = honour_chairs(entries, lambda e: e[1].get("chair") if e[1] is not None else None)
        seats = [s for s, _ in final]
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
            self.chair_index.index_chairs(table, kind.chair_keys(table, info))
        if kind.reseat is not None and self.lobby is not None:  # its chairs offered again when left
            self.lobby.reopen(table, pool_key(pool), kind.reseat, list(seats))
            for chair, s in enumerate(seats):
                if isinstance(s, RemoteSeat):
                    self.write(self.key("lease", table.id), "h", self.free_key(pool, chair), table.id, f"o {s.node}")
        for chair, (occupant, t) in enumerate(final):
            if isinstance(occupant, RemoteSeat) and t is not None:
                tell_matched(self, table, chair, occupant, t["id"])
        self.formed += 1
        host.matched()
        host.track(table)
        log.info(
            "event=cluster_matched protocol=%s table=%s players=%s filled=%s",
            protocol,
            table.id,
            table.seat_names(),
            fill,
        )

    def _matched(self, msg: wire.Matched) -> None:
        """Seated at a new table (or a running one's free chair): the player's own adapter plays
        it through a RemoteTable."""
        stand_in(self, msg, msg.credential, msg.restored, functools.partial(self._seated, msg.ticket), "left the lobby")

    def _seated(self, tid: str, rt: Table, chair: int) -> Seat | None:
        """The player of ticket ``tid`` takes chair ``chair`` of ``rt`` (a stand-in); None: it left
        (after its ticket was taken), the chair is empty."""
        ticket = self.tickets.pop(tid, None)
        if ticket is not None and ticket.timer is not None:
            ticket.timer.cancel()
        c = ticket.candidate if ticket is not None else self.claimed(tid) if self.claimed is not None else None
        if c is None or c.seat.gone:
            return None
        try:
            c.on_matched(rt, chair)
        except Exception:
            log.exception("event=on_matched_failed table=%s", rt.id)
            return None
        return c.seat

    # -------------------------------------------------------------- the chair index and re-join
    # -------------------------------------------------------------- leases, liveness, adoption
    async def _keeper(self) -> None:
        """Renew leases and the node's heartbeat; notice dead nodes; adopt orphaned tables."""
        while not self._closing:
            await asyncio.sleep(self.lease / 3)
            if self._closing:
                return
            try:
                await self.members.heartbeat()
                await self.members.renew_leases()
                await self.members.check_players()
                await self.adopt_orphans()
                for hook in self.keeper_hooks:
                    await hook()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("event=cluster_keeper_failed")

    async def adopt_orphans(self) -> int:
        """Take over every table whose lease has expired (its owner died). Returns how many."""
        if self._closing:
            return 0
        assert self.redis is not None
        directory = await self.redis.hgetall(self.key("tables"))
        others = [
            (tid, raw_owner.decode())
            for raw_id, raw_owner in directory.items()
            if (tid := raw_id.decode()) not in self.owned and tid not in self._adopting
        ]
        if not others:
            return 0
        # one round trip for every lease (not one per table: with many tables on other nodes,
        # a call each made the keeper, and the Redis it shares, busy all the time)
        async with self.redis.pipeline(transaction=False) as p:
            for tid, _ in others:
                p.exists(self.key("lease", tid))
            held = await p.execute()
        count = 0
        for (tid, owner), alive in zip(others, held):
            if alive or self._closing:
                continue
            if not await self._can_adopt(tid):
                continue  # another protocol's table this node does not serve (an HTTP game here without HTTP)
            ok = await self.redis.set(self.key("lease", tid), self.node, nx=True, px=int(self.lease * 1000))
            if not ok:
                continue
            self._adopting.add(tid)
            try:
                if await self._adopt(tid, owner):
                    count += 1
            except Exception:
                log.exception("event=adopt_failed table=%s", tid)
                await self.redis.delete(self.key("lease", tid))
            finally:
                self._adopting.discard(tid)
        return count

    async def _can_adopt(self, tid: str) -> bool:
        """Whether this node serves the table's protocol (a :class:`TableKind` or an adopter here):
        a node without an HTTP port must leave a dead node's HTTP games to one that has one."""
        assert self.redis is not None
        raw = await self.redis.get(self.key("meta", tid))
        if raw is None:
            return True  # nothing to restore: _adopt drops the entry
        try:
            protocol = json.loads(raw).get("protocol")
        except (ValueError, AttributeError):
            return True
        if protocol in self.tables and self.tables[protocol].reseat is not None and self.lobby is None:
            return False  # its free chairs are offered by the lobby, which this process has not made yet
        return protocol in self.tables or protocol in self.adopters

    async def _adopt(self, tid: str, old_owner: str) -> bool:
        """Restore table ``tid`` by replay (Redis log, store completed from it) and seat its players."""
        assert self.redis is not None
        host = self.host
        meta_raw, entries, binds = await asyncio.gather(
            self.redis.get(self.key("meta", tid)),
            self.redis.lrange(self.key("log", tid), 0, -1),
            self.redis.hgetall(self.key("bind", tid)),
        )
        if meta_raw is None:
            log.warning("event=adopt_skipped table=%s reason=no_meta", tid)
            await self.redis.hdel(self.key("tables"), tid)
            await self.redis.delete(self.key("lease", tid))
            return False
        meta = json.loads(meta_raw)
        logged = [json.loads(e) for e in entries]
        logged.sort(key=lambda e: e["i"])
        actions = [action_from_dict(e["a"]) for e in logged]
        forced = [bool(e["f"]) for e in logged]
        names: list[str] = list(meta["names"])
        creds: list[str | None] = list(meta["creds"])
        await self._complete_store(tid, meta, actions, forced)
        protocol = str(meta["protocol"])
        kind, adopter = self.tables.get(protocol), self.adopters.get(protocol)
        players = meta.get("players") or []
        # the chairs whose players' connections live on other live nodes: seated again at once
        kept: dict[int, RemoteSeat] = {}
        for raw_chair, bound in binds.items():
            chair, (node, binding) = int(raw_chair), bound.decode().split()
            if node == old_owner or not await self.members.node_alive(node):
                continue
            p = players[chair] if kind is None and chair < len(players) else {}  # a mixed game's: its own
            human = p.get("kind", "human") == "human"
            seat_kind = kind.seat_kind if kind is not None else SeatKind.HUMAN if human else SeatKind.BOT
            proto = str(p.get("protocol", protocol))
            kept[chair] = RemoteSeat(self, node, binding, names[chair], seat_kind, creds[chair], proto)
        if kind is None:  # another protocol's table (an HTTP game): its adopter builds it
            assert adopter is not None
            table = await adopter(tid, meta, kept)
            if table is None:
                return False
        else:
            seats: list[Seat | None] = [kept.get(chair) for chair in range(4)]
            for chair in range(4):
                if seats[chair] is None and creds[chair] is None and kind.fill:  # a server bot's chair
                    seats[chair] = BotSeat(host.bot(), random.Random(self._rng.getrandbits(32)), name=names[chair])
            # the start data's own (a TableKind's table_meta, e.g. a game file's deals)
            tmeta = {k: v for k, v in (meta.get("tmeta") or {}).items() if isinstance(v, str)}
            table = Table(
                rules_named(meta["variant"]),
                seats,
                seed=int(meta["seed"]),
                policy=kind.policy(host.policy(host.restore_grace)),
                table_id=tid,
                recorder=self.directory.recorder(),
                actions=actions,
                forced=forced,
                restored=True,
                names=names,
                credentials=creds,
                meta={**tmeta, "protocol": protocol, "restored": True, "deal_salt": meta.get("salt")},
                deals=kind.deals(tmeta) if kind.deals is not None else None,
            )
        lease = self.key("lease", tid)
        self.write(lease, "h", self.key("tables"), tid, self.node)
        for rs in kept.values():  # before the table's first event: the player's node follows the adopter
            self.send(rs.node, wire.Adopted(table=tid, binding=rs.binding, owner=self.node), fence=tid)
        self._fenced.discard(tid)
        self.owned[tid] = table
        self._leased.add(tid)
        self.adopted += 1
        log.info(
            "event=adopted table=%s protocol=%s from=%s actions=%d players_kept=%d node=%s",
            tid,
            protocol,
            old_owner,
            len(actions),
            len(kept),
            self.node,
        )
        if kind is None:
            return True
        if kind.chair_keys is not None:
            self.chair_index.index_chairs(table, kind.chair_keys(table, meta))
        if kind.reseat is not None and self.lobby is not None:
            # the chairs whose players are gone are offered again (to players waiting for them
            # first), and players that waited meanwhile may form a table of their own
            name = str(meta.get("pool") or pool_name((protocol, GameType.ANY, None)))
            r = self.lobby.reopen(table, pool_key(name), kind.reseat, seats)
            for chair in range(4):
                if seats[chair] is None:
                    self.write(lease, "hd", self.key("bind", tid), str(chair))
                    self._spawn(self._vacate(r, chair), limit=False)
            self._spawn(self._try_form(name), limit=False)
        host.track(table)
        return True

    async def _complete_store(self, tid: str, meta: dict[str, Any], actions: list[Action], forced: list[bool]) -> None:
        """The store is written behind: add the game row and the actions it lacks."""
        store = self.host.store
        if store is None:
            return
        rec = await store.load(tid)
        ops: list[tuple[str, dict[str, Any]]] = []
        have = 0
        if rec is None:
            players = meta.get("players") or [
                {"name": n, "kind": "human" if c is not None else "bot", **({"credential": c} if c else {})}
                for n, c in zip(meta["names"], meta["creds"])
            ]
            ops.append(
                (
                    "game",
                    {
                        "id": tid,
                        "variant": meta["variant"],
                        "seed": int(meta["seed"]),
                        "protocol": meta["protocol"],
                        "players": players,
                        "status": "running",
                        "created_at": now(),
                        "meta": {"protocol": meta["protocol"], **meta.get("tmeta", {})},
                    },
                )
            )
        else:
            have = len(rec.actions)
            if rec.actions != actions[:have]:
                log.error("event=adopt_log_mismatch table=%s stored=%d logged=%d", tid, have, len(actions))
        for i in range(have, len(actions)):
            ops.append(
                (
                    "action",
                    {"game_id": tid, "idx": i, "action": action_to_dict(actions[i]), "forced": forced[i], "at": now()},
                )
            )
        if ops:
            await store.write_batch(ops)
            log.info("event=store_completed table=%s rows=%d", tid, len(ops))

    async def adopt_stored(self) -> int:
        """At start: unfinished games in the store that no node holds (the whole cluster was
        down), of every protocol this node adopts: take the lease and restore them like a single
        server would."""
        store = self.host.store
        if store is None or self.redis is None:
            return 0
        count = 0
        for rec in await store.unfinished():
            if rec.protocol not in (*self.tables, *self.adopters) or await self.redis.exists(self.key("meta", rec.id)):
                continue
            ok = await self.redis.set(self.key("lease", rec.id), self.node, nx=True, px=int(self.lease * 1000))
            if not ok:
                continue
            names = [str(p.get("name", "")) for p in rec.players]
            creds = [c if isinstance(c := p.get("credential"), str) else None for p in rec.players]
            meta = {"variant": rec.variant, "seed": rec.seed, "protocol": rec.protocol, "names": names, "creds": creds}
            meta.update(salt=rec.meta.get("deal_salt"), players=rec.players, tmeta=rec.meta)
            lease = self.key("lease", rec.id)
            self.write(lease, "s", self.key("meta", rec.id), json.dumps(meta))
            for i, (a, f) in enumerate(zip(rec.actions, rec.forced)):
                self.write(lease, "r", self.key("log", rec.id), json.dumps({"i": i, "a": action_to_dict(a), "f": f}))
            await self.drain()
            if await self._adopt(rec.id, ""):
                count += 1
        return count

    # -------------------------------------------------------------- what the server asks of it
    def recorder(self) -> Recorder:
        return self.directory.recorder()

    def register_table(self, table: Table) -> None:
        """A table of another protocol (HTTP) started here: in the directory, so that it is
        adopted when this node dies. Call before the table starts."""
        self.directory.register_table(table)

    def table_done(self, table: Table) -> None:
        """The table ended here (see :meth:`moonshot.cluster.directory.Directory.table_done`)."""
        self.directory.table_done(table)

    def index_chairs(self, table: Table, keys: Sequence[tuple[int, str]]) -> None:
        """Re-join keys of a table this node runs (see :mod:`moonshot.cluster.rejoin`)."""
        self.chair_index.index_chairs(table, keys)

    @property
    def rejoin(self) -> ChairRejoin:
        """Take back a chair by its re-join key (see :meth:`moonshot.cluster.rejoin.ChairIndex.rejoin`)."""
        return self.chair_index.rejoin

    async def node_alive(self, node: str) -> bool:
        return await self.members.node_alive(node)

    async def claim_job(self, job: str) -> bool:
        """Run ``job`` (``tournament:<id>``) on this node: true when no live node holds it."""
        return await self.members.claim_job(job)

    def describe(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "owned": len(self.owned),
            "bindings": len(self.bindings),
            "waiting": len(self.tickets),
            "adopted": self.adopted,
        }


def reuse_port_supported() -> bool:
    return hasattr(socket, "SO_REUSEPORT")


__all__ = [
    "Binding",
    "Cluster",
    "ClusterError",
    "ClusterLobby",
    "ClusterRecorder",
    "ClusterUnavailable",
    "Placed",
    "RemoteRequest",
    "RemoteSeat",
    "RemoteTable",
    "TableKind",
    "reuse_port_supported",
]
