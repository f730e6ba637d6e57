"""Kierki (``--kierki-port``) on every node of a cluster.

Every node listens on the Kierki port (``SO_REUSEPORT``); a client's ``IAM<seat>`` lands on any
of them and is seated through Redis, with the single-process rules (see
:mod:`moonshot.protocols.kierki.service`): a seat left free at a running table comes first (the
one free longest), else the client waits for a new table, which forms as soon as N, E, S and W
all wait. No bot ever plays a Kierki seat; a table with an empty seat waits.

What this module keeps in Redis, beside the cluster's own keys (:mod:`moonshot.cluster.node`):

* ``kseat:{letter}`` (a hash per seat letter, 0..3): running Kierki table id -> ``o <node>`` (a
  client on that node sits there) or ``v <ms>`` (free since then). The table's owner writes it on
  every seat taken or left; a client's node marks a seat it claims (``o <its node>``) and the
  owner corrects that when it refuses the claim. A seat held through a node whose heartbeat is
  gone counts as free.
* ``kpool:{letter}``: the tickets of clients waiting for that letter, first come first served.

Two Lua scripts keep matching atomic. *Join* (a client's node, on ``IAM``): claim the seat free
longest, else queue the ticket, then pop one ticket per letter when all four letters wait, which
makes the caller the new table's owner; it forms no new table while a Kierki table waits for its
adopter (a dead owner's clients reconnecting at once must get their seats back, not start a new
game). *Vacate* (the owner, when a seat empties): hand the seat to the first live client waiting
for that letter, else mark it free.

Messages (declared in :mod:`moonshot.cluster.messages`): ``kierki.claim`` a client's node claims
a free seat from the owner; ``kierki.seated`` the owner seats a client (a new table, a claim
accepted, a waiting client handed a seat); ``kierki.refused`` a claim refused (the client's node
tries again). Everything else is the cluster's own: a Kierki chair is the one
:class:`~moonshot.cluster.node.RemoteSeat`, whose requests carry what ``TRICK`` needs (the
trick's number and the cards on the table, in the view's snapshot), and the client's
:class:`~moonshot.protocols.kierki.server.KierkiSeat` (the unchanged adapter) runs against a
:class:`~moonshot.cluster.node.RemoteTable`.

**Pauses** are the single-process ones: only the owner knows whether a seat is empty, so its
Kierki table's state says so (``paused``, as of the seatings made, ahead of the table's task),
and the client's adapter holds ``TRICK`` back while it is, still accepting a card for it; when the
table is whole again the owner tells the other seats with a table notice (``resumed``, cause
:data:`~moonshot.protocols.kierki.server.SEATED`), whose adapters send what they held.

**Adoption**: when the owner dies, another node takes the lease and rebuilds the table from the
Redis log, with its fixed deals from the record's meta (``tmeta.deals``, the game file's text);
seats whose clients are on live nodes stay seated, the others are vacated (handed to clients
already waiting for that letter, or left free for the next ``IAM<seat>`` on any node).
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from moonshot.cluster import messages as wire
from moonshot.cluster.node import Binding, Cluster, RemoteSeat, RemoteTable
from moonshot.core.actions import action_from_dict
from moonshot.core.events import HandDealt
from moonshot.core.variants import KIERKI
from moonshot.protocols.kierki.codec import SEAT_LETTERS, Busy
from moonshot.protocols.kierki.gamefile import CardOrder, parse_game_in_order
from moonshot.protocols.kierki.server import Connection, KierkiSeat, kierki_policy, order_cards
from moonshot.protocols.kierki.service import KierkiService
from moonshot.runtime.table import SEATED, Seat, SeatKind, Table, TableNotice, TableState, TableStatus

log = logging.getLogger("moonshot.cluster.kierki")

CLAIM_TRIES = 40  # a client's node claims a free seat (or queues) this often before it gives up
RETRY_DELAY = 0.25

# ARGV: prefix, letter (0..3), the ticket (JSON; '' = only try to form a table)
_JOIN_LUA = """
local p = ARGV[1]
local L = ARGV[2]
local ticket = ARGV[3]
local function alive(n) return redis.call('EXISTS', p .. 'node:' .. n) == 1 end
if ticket ~= '' then
  local node = cjson.decode(ticket)['node']
  local seats = redis.call('HGETALL', p .. 'kseat:' .. L)
  local best, score = nil, nil
  for i = 1, #seats, 2 do
    local tid, st = seats[i], seats[i + 1]
    if redis.call('HEXISTS', p .. 'tables', tid) == 0 then
      redis.call('HDEL', p .. 'kseat:' .. L, tid)
    else
      local kind, v = string.match(st, '^(%a) (.*)$')
      local s = nil
      if kind == 'v' then s = tonumber(v)
      elseif kind == 'o' and not alive(v) then s = 0 end
      if s and (best == nil or s < score) then best, score = tid, s end
    end
  end
  if best then
    redis.call('HSET', p .. 'kseat:' .. L, best, 'o ' .. node)
    return {'seat', best}
  end
  redis.call('RPUSH', p .. 'kpool:' .. L, ticket)
end
local heads = {}
for c = 0, 3 do
  local pool = p .. 'kpool:' .. c
  while true do
    local h = redis.call('LINDEX', pool, 0)
    if not h then return {} end
    if alive(cjson.decode(h)['node']) then heads[c + 1] = h; break end
    redis.call('LPOP', pool)
  end
end
for c = 0, 3 do
  for _, tid in ipairs(redis.call('HKEYS', p .. 'kseat:' .. c)) do
    if redis.call('HEXISTS', p .. 'tables', tid) == 0 then
      redis.call('HDEL', p .. 'kseat:' .. c, tid)
    elseif redis.call('EXISTS', p .. 'lease:' .. tid) == 0 then
      return {}
    end
  end
end
for c = 0, 3 do redis.call('LPOP', p .. 'kpool:' .. c) end
return {'table', heads[1], heads[2], heads[3], heads[4]}
"""

# ARGV: prefix, letter, table id, now (ms), this node. The first live waiting ticket takes the
# seat (returned); else the seat is marked free. Nothing happens unless this node holds the lease.
_VACATE_LUA = """
local p, L, tid = ARGV[1], ARGV[2], ARGV[3]
if redis.call('GET', p .. 'lease:' .. tid) ~= ARGV[5] then return false end
local pool = p .. 'kpool:' .. L
while true do
  local h = redis.call('LPOP', pool)
  if not h then break end
  local node = cjson.decode(h)['node']
  if redis.call('EXISTS', p .. 'node:' .. node) == 1 then
    redis.call('HSET', p .. 'kseat:' .. L, tid, 'o ' .. node)
    return h
  end
end
redis.call('HSET', p .. 'kseat:' .. L, tid, 'v ' .. ARGV[4])
return false
"""


class _Open:
    """The Kierki side of a table owned elsewhere, as one seat on this node sees it: paused as
    the owner's table state says, the game file's card order for ``DEAL``."""

    def __init__(self, orders: Sequence[CardOrder]) -> None:
        self.orders = tuple(orders)
        self.table: RemoteTable | None = None

    @property
    def paused(self) -> bool:
        return self.table is not None and self.table.snapshot().paused

    def card_order(self, deal: int, e: HandDealt) -> tuple[int, ...]:
        return order_cards(self.orders, deal, e)


# ------------------------------------------------------------------ the owner's side
class _KierkiTable(Table):
    """A cluster Kierki table: a detach (the client's node said so, or died) frees the seat; it
    is paused while a seat is empty (as of the calls made, ahead of the table's task), which its
    state says to every seat (a seat's adapter holds ``TRICK`` back meanwhile)."""

    owned: Owned

    def snapshot(self) -> TableState:
        return replace(super().snapshot(), paused=self.owned.paused)

    def detach(self, seat: int, occupant: Seat | None = None, reason: str = "disconnected") -> None:
        super().detach(seat, occupant, reason)
        self.owned.left(seat, occupant)


class Owned:
    """A Kierki table this node owns: who sits where (as of the calls made, ahead of the
    table's task), and the abandon timer."""

    def __init__(self, kierki: ClusterKierki, table: _KierkiTable, seats: Sequence[Seat | None]) -> None:
        self.kierki = kierki
        self.table = table
        self.seats: list[RemoteSeat | None] = [s if isinstance(s, RemoteSeat) else None for s in seats]
        self.abandon: asyncio.TimerHandle | None = None
        table.owned = self

    @property
    def paused(self) -> bool:
        return not self.table.done.done() and any(s is None for s in self.seats)

    def seat(self, chair: int, seat: RemoteSeat) -> None:
        """``seat`` takes empty chair ``chair``: attached with the chair's view replayed."""
        c = self.kierki.cluster
        t = self.table
        self.seats[chair] = seat
        if self.abandon is not None:
            self.abandon.cancel()
            self.abandon = None
        lease = c.key("lease", t.id)
        c.write(lease, "h", c.key("bind", t.id), str(chair), f"{seat.node} {seat.binding}")
        c.write(lease, "h", c.key("kseat", str(chair)), t.id, f"o {seat.node}")
        t.attach(chair, seat, replay=True)
        log.info("event=kierki_seat_taken_back table=%s seat=%s node=%s", t.id, SEAT_LETTERS[chair], seat.node)
        if not self.paused:  # the other seats' adapters send the TRICK they held back
            whole = TableNotice("resumed", SEATED, "every seat is taken again")
            for s in self.seats:
                if s is not None and s is not seat:
                    s.on_notice(t, whole)

    def left(self, chair: int, occupant: Seat | None) -> None:
        current = self.seats[chair]
        if current is None or (occupant is not None and occupant is not current) or self.table.done.done():
            return
        self.seats[chair] = None
        letter = SEAT_LETTERS[chair]
        log.info("event=kierki_seat_left table=%s seat=%s (the table waits for IAM%s)", self.table.id, letter, letter)
        self.kierki.cluster._spawn(self.kierki.vacate(self, chair), limit=False)
        if all(s is None for s in self.seats):
            self.kierki.arm_abandon(self)


@dataclass
class _Wait:
    """A client on this node that said ``IAM<seat>`` and has no seat yet."""

    seat: KierkiSeat
    ticket: str
    text: str  # the ticket as kept in the pool
    binding: str = ""  # of the claim in flight, if any
    timer: asyncio.TimerHandle | None = None


# ------------------------------------------------------------------ the service
class ClusterKierki(KierkiService):
    """The Kierki listener of a cluster node: seats clients through Redis, owns the tables it
    forms or adopts, and serves its clients' seats at tables owned elsewhere."""

    def __init__(self, cluster: Cluster, deals: Any, text: str | None, **kwargs: Any) -> None:
        super().__init__(self._no_table, **kwargs)
        self.host = cluster.host
        self.cluster = cluster
        self.deals = deals  # the game file's deals for new tables (None: the seed deals)
        self.text = text  # the game file's text, kept in the record's meta
        self.owned: dict[str, Owned] = {}
        self.waits: dict[str, _Wait] = {}  # ticket -> the client waiting for it
        self.at: dict[KierkiSeat, RemoteTable] = {}  # seated clients on this node
        self.formed = 0
        r = cluster.redis
        self._join = r.register_script(_JOIN_LUA)
        self._vacate = r.register_script(_VACATE_LUA)
        cluster.handlers.update({k: self._on_message for k in wire.KIERKI})
        cluster.adopters["kierki"] = self.adopt_table

    @staticmethod
    def _no_table(seats: list[Seat]) -> Table:
        raise RuntimeError("a cluster's Kierki tables are formed through Redis")

    # ------------------------------------------------------------ the listener's hooks
    def take_seat(self, conn: Connection, want: int) -> KierkiSeat | None:
        letter = SEAT_LETTERS[want]
        if self.stopping:
            conn.close("the server is stopping")
            return None
        if self.waiting_for[want] >= self.max_waiting:
            conn.send(Busy(tuple(c for c in range(4) if self.waiting_for[c])))
            conn.close(f"{self.waiting_for[want]} clients already wait for seat {letter}")
            return None
        seat = KierkiSeat(conn, want, resuming=True, game=_Open(self.orders))
        ticket = secrets.token_hex(8)
        text = json.dumps({"id": ticket, "node": self.cluster.node, "name": seat.name, "chair": want})
        self.waits[ticket] = _Wait(seat, ticket, text)
        self.waiting_for[want] += 1
        self.cluster._spawn(self._seek(ticket))
        log.info("event=kierki_waiting peer=%s seat=%s node=%s", conn.peer, letter, self.cluster.node)
        return seat

    def left(self, seat: KierkiSeat) -> None:
        for ticket, w in list(self.waits.items()):
            if w.seat is seat:
                self._drop_wait(ticket)
                self.cluster._spawn(self.cluster.redis.lrem(self.key_pool(seat.seat), 1, w.text))
                return
        rt = self.at.pop(seat, None)
        if rt is not None and rt.status is TableStatus.RUNNING:
            rt.detach(rt.chair, None, "disconnected")  # the owner frees the seat; the table waits

    def _drop_wait(self, ticket: str) -> _Wait | None:
        w = self.waits.pop(ticket, None)
        if w is not None:
            self.waiting_for[w.seat.seat] -= 1
            if w.timer is not None:
                w.timer.cancel()
        return w

    def key_pool(self, letter: int) -> str:
        return self.cluster.key("kpool", str(letter))

    # ------------------------------------------------------------ seating a client
    async def _seek(self, ticket: str, tries: int = CLAIM_TRIES) -> None:
        """A free seat (claimed from its owner), else the pool (maybe forming a table)."""
        c = self.cluster
        for _ in range(tries):
            w = self.waits.get(ticket)
            if w is None or w.seat.conn.closed:
                return
            got = await self._join(args=[c.prefix, w.seat.seat, w.text])
            if not got:
                return  # waits in the pool: a new table or a freed seat will call it
            kind = _text(got[0])
            if kind == "table":
                self._form([json.loads(_text(g)) for g in got[1:]])
                return
            tid = _text(got[1])
            owner = await c._live_owner(tid)
            if owner is None or ticket not in self.waits:
                await asyncio.sleep(RETRY_DELAY)
                continue
            w.binding = secrets.token_hex(8)
            w.timer = asyncio.get_running_loop().call_later(max(5.0, 3 * c.lease), self._retry, ticket)
            claim = wire.KierkiClaim(table=tid, binding=w.binding, chair=w.seat.seat, node=c.node, ticket=ticket)
            c.send(owner.decode(), claim)
            return
        w = self._drop_wait(ticket)
        if w is not None:
            w.seat.conn.close("no Kierki seat could be found (the cluster is busy): try again")

    def _retry(self, ticket: str) -> None:
        w = self.waits.get(ticket)
        if w is not None:
            w.timer = None
            w.binding = ""
            self.cluster._spawn(self._delayed_seek(ticket))

    async def _delayed_seek(self, ticket: str) -> None:
        await asyncio.sleep(RETRY_DELAY)
        await self._seek(ticket)

    def _seated(self, msg: wire.KierkiSeated) -> None:
        """A client waiting here sits at a table (formed, claimed, or handed to it)."""
        c = self.cluster
        chair = msg.chair
        rt = RemoteTable(c, msg.table, msg.owner, msg.binding, chair, list(msg.names), KIERKI, None)
        w = self._drop_wait(msg.ticket)
        if w is None or w.seat.conn.closed:
            rt.detach(chair, None, "left before it was seated")  # the owner frees the seat again
            return
        # a claim retried after a slow answer may have queued the ticket meanwhile: not any more
        c._spawn(c.redis.lrem(self.key_pool(chair), 1, w.text))
        seat = w.seat
        seat.resuming = True  # the first events replay the game so far: DEAL, TAKEN... of this deal
        seat.table = cast(Table, rt)
        if isinstance(seat.game, _Open):
            seat.game.table = rt  # paused as the owner's table state says
        c.bindings[rt.binding] = Binding(rt.binding, cast(Any, seat), rt)
        self.at[seat] = rt
        log.info(
            "event=kierki_seated peer=%s table=%s seat=%s owner=%s",
            seat.conn.peer,
            rt.id,
            SEAT_LETTERS[chair],
            rt.owner,
        )

    # ------------------------------------------------------------ messages
    def _on_message(self, msg: Any) -> None:
        if isinstance(msg, wire.KierkiClaim):
            self.cluster._spawn(self._claimed(msg), limit=False)
        elif isinstance(msg, wire.KierkiSeated):
            self._seated(msg)
        elif isinstance(msg, wire.KierkiRefused):
            w = self.waits.get(msg.ticket)
            if w is not None and w.binding == msg.binding:
                if w.timer is not None:
                    w.timer.cancel()
                self._retry(msg.ticket)

    async def _claimed(self, msg: wire.KierkiClaim) -> None:
        """At the owner: a client's node claims a seat it found free."""
        c = self.cluster
        tid, chair, node = msg.table, msg.chair, msg.node
        o = self.owned.get(tid)
        refuse = wire.KierkiRefused(table=tid, binding=msg.binding, ticket=msg.ticket)
        if o is None or o.table.done.done() or c.owned.get(tid) is not o.table:
            c.send(node, refuse)
            return
        current = o.seats[chair]
        if current is not None and current.node != node and not await c.node_alive(current.node):
            c.unbind(tid, current)
            o.table.detach(chair, current, "the player's server process is gone")  # frees o.seats[chair]
        current = o.seats[chair]
        if current is not None:
            c.write(c.key("lease", tid), "h", c.key("kseat", str(chair)), tid, f"o {current.node}")
            c.send(node, refuse, fence=tid)
            return
        self._hand(o, chair, node, msg.ticket, msg.binding)

    def _hand(self, o: Owned, chair: int, node: str, ticket: str, binding: str) -> None:
        """Seat the client of ``ticket`` (on ``node``) in empty chair ``chair``."""
        t = o.table
        seat = RemoteSeat(self.cluster, node, binding, t.names[chair], SeatKind.HUMAN, None, "kierki")
        seated = wire.KierkiSeated(
            table=t.id, binding=binding, ticket=ticket, chair=chair, owner=self.cluster.node, names=list(t.names)
        )
        self.cluster.send(node, seated, fence=t.id)
        o.seat(chair, seat)

    async def vacate(self, o: Owned, chair: int) -> None:
        """A seat emptied: the first client waiting for its letter takes it, else it is free."""
        c = self.cluster
        await c.drain()  # the unbind and the table's last writes first
        if o.table.done.done() or o.seats[chair] is not None:
            return
        got = await self._vacate(args=[c.prefix, chair, o.table.id, int(time.time() * 1000), c.node])
        if got:
            text = _text(got)
            if o.table.done.done() or o.seats[chair] is not None:
                await c.redis.lpush(self.key_pool(chair), text)  # taken meanwhile: it waits on, first
                return
            t = json.loads(text)
            self._hand(o, chair, t["node"], t["id"], secrets.token_hex(8))

    # ------------------------------------------------------------ tables this node owns
    def _new_table(self, seats: Sequence[Seat | None], **kw: Any) -> _KierkiTable:
        meta: dict[str, Any] = {"protocol": "kierki"}
        text = kw.pop("text", self.text)
        if text is not None:
            meta["deals"] = text
        meta.update(kw.pop("meta", {}))
        return _KierkiTable(
            KIERKI,
            seats,
            policy=kierki_policy(self.timeout),
            recorder=self.cluster.recorder(),
            meta=meta,
            **kw,
        )

    def _form(self, tickets: list[dict[str, Any]]) -> None:
        """This node popped one waiting client per letter: it owns their new table."""
        c = self.cluster
        host = self.host
        by_chair = {int(t["chair"]): t for t in tickets}
        bindings = [secrets.token_hex(8) for _ in range(4)]
        table = self._new_table(
            [None] * 4,
            seed=host.seed(),
            table_id=f"{int(time.time() * 1000):x}-{secrets.token_hex(4)}",
            deals=self.deals,
            names=[by_chair[i]["name"] for i in range(4)],
        )
        o = Owned(self, table, [None] * 4)
        for chair in range(4):
            t = by_chair[chair]
            seat = RemoteSeat(c, t["node"], bindings[chair], t["name"], SeatKind.HUMAN, None, "kierki")
            table.chairs[chair].occupant = seat  # before the table starts: seated from the first event
            o.seats[chair] = seat
        self._own(o)
        c.register_table(table)  # lease, directory, meta (with the deals), binds
        lease = c.key("lease", table.id)
        for chair in range(4):
            s = o.seats[chair]
            assert s is not None
            c.write(lease, "h", c.key("kseat", str(chair)), table.id, f"o {s.node}")
            seated = wire.KierkiSeated(
                table=table.id,
                binding=s.binding,
                ticket=by_chair[chair]["id"],
                chair=chair,
                owner=c.node,
                names=list(table.names),
            )
            c.send(s.node, seated, fence=table.id)
        self.formed += 1
        host.track(table)
        log.info("event=kierki_table table=%s players=%s node=%s", table.id, table.seat_names(), c.node)

    def _own(self, o: Owned) -> None:
        tid = o.table.id
        self.owned[tid] = o

        def done(_: object) -> None:
            if self.owned.get(tid) is o:
                del self.owned[tid]
            if o.abandon is not None:
                o.abandon.cancel()
                o.abandon = None
            if o.table.status is not TableStatus.STOPPED:  # stopped: it goes on on another node
                self._unlist(tid)

        o.table.done.add_done_callback(done)

    def _unlist(self, tid: str) -> None:
        c = self.cluster
        for chair in range(4):
            c.write(c.key("lease", tid), "hd", c.key("kseat", str(chair)), tid)

    def arm_abandon(self, o: Owned) -> None:
        if self.reseat.abandon_after is None or o.abandon is not None:
            return
        o.abandon = asyncio.get_running_loop().call_later(self.reseat.abandon_after, self._give_up, o)

    def _give_up(self, o: Owned) -> None:
        o.abandon = None
        if any(s is not None for s in o.seats) or o.table.done.done():
            return
        log.warning("event=kierki_abandoned table=%s after_s=%s", o.table.id, self.reseat.abandon_after)
        if self.reseat.on_abandoned is not None:
            self.reseat.on_abandoned(o.table)
        c = self.cluster
        self._unlist(o.table.id)
        o.table.stop("abandoned: every seat empty")
        c._spawn(c._forget(o.table), limit=False)  # a stopped table would be adopted: it is over

    async def adopt_table(self, tid: str, meta: dict[str, Any]) -> Table | None:
        """The cluster's adopter for protocol ``kierki``: the table rebuilt from the Redis log
        (its deals from the meta), clients on live nodes kept, the other seats vacated."""
        c = self.cluster
        r = c.redis
        entries, binds = await asyncio.gather(r.lrange(c.key("log", tid), 0, -1), r.hgetall(c.key("bind", tid)))
        logged = sorted((json.loads(e) for e in entries), key=lambda e: int(e["i"]))
        actions = [action_from_dict(e["a"]) for e in logged]
        forced = [bool(e["f"]) for e in logged]
        tmeta = meta.get("tmeta") or {}
        text = tmeta.get("deals") if isinstance(tmeta.get("deals"), str) else None
        deals, orders = parse_game_in_order(text) if text is not None else (None, ())
        names: list[str] = list(meta["names"])
        table = self._new_table(
            [None] * 4,
            seed=int(meta["seed"]),
            table_id=tid,
            actions=actions,
            forced=forced,
            restored=True,
            names=names,
            deals=deals,
            text=text,
            meta={"restored": True, "deal_salt": meta.get("salt")},
        )
        o = Owned(self, table, [None] * 4)
        kept: list[RemoteSeat] = []
        for chair in range(4):
            bound = binds.get(str(chair).encode())
            if bound is None:
                continue
            node, binding = bound.decode().split()
            if await c.node_alive(node):
                seat = RemoteSeat(c, node, binding, names[chair], SeatKind.HUMAN, None, "kierki")
                table.chairs[chair].occupant = seat
                o.seats[chair] = seat
                kept.append(seat)
        self._own(o)
        lease = c.key("lease", tid)
        for chair in range(4):
            if o.seats[chair] is None:
                c.write(lease, "hd", c.key("bind", tid), str(chair))
        for s in kept:
            c.send(s.node, wire.Adopted(table=tid, binding=s.binding, owner=c.node), fence=tid)
        # DEAL lists cards in the game file's order: a node started without --kierki-game learns
        # it here (seats elsewhere use their own node's, the same file)
        if orders and not self.orders:
            self.orders = tuple(orders)
        self.host.track(table)
        for chair in range(4):
            if o.seats[chair] is None:
                c._spawn(self.vacate(o, chair), limit=False)
        if all(s is None for s in o.seats):
            self.arm_abandon(o)
        # clients that waited in the pools meanwhile may now make a table of their own
        c._spawn(self._try_form(), limit=False)
        log.info("event=kierki_adopted table=%s actions=%d kept=%d node=%s", tid, len(actions), len(kept), c.node)
        return table

    async def _try_form(self) -> None:
        await asyncio.sleep(0.5)  # once the adopted table's lease and seats are in Redis
        got = await self._join(args=[self.cluster.prefix, 0, ""])
        if got and _text(got[0]) == "table":
            self._form([json.loads(_text(g)) for g in got[1:]])

    def describe(self) -> dict[str, Any]:
        return {"owned": len(self.owned), "seated": len(self.at), "waiting": len(self.waits), "formed": self.formed}


def _text(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


__all__ = ["ClusterKierki", "Owned"]
