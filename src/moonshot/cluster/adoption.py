"""Adoption: a table whose owner died (its lease expired) is taken over by replay of its Redis
log, the store completed from that log, the players still connected through live nodes seated
again (``table.adopted`` tells their nodes), a protocol's table made again from its
:class:`~moonshot.cluster.kinds.TableKind` (or by the protocol's adopter hook, for an HTTP game),
and its free chairs offered again; at start, unfinished games in the store that no node holds.

It changes no lease it does not take here and forms no new table from the lobby.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from dataclasses import dataclass
from typing import Any

from moonshot.cluster import messages as wire
from moonshot.cluster.directory import Directory
from moonshot.cluster.kinds import pool_key, pool_name
from moonshot.cluster.membership import Membership
from moonshot.cluster.pools import Pools
from moonshot.cluster.rejoin import ChairIndex
from moonshot.cluster.remote import RemoteSeat
from moonshot.cluster.state import NodeState
from moonshot.core.actions import Action, action_from_dict, action_to_dict
from moonshot.runtime.lobby import GameType
from moonshot.runtime.table import BotSeat, Seat, SeatKind, Table
from moonshot.store import now, rules_named

log = logging.getLogger("moonshot.cluster")


@dataclass(eq=False)
class Adoption:
    """This node's adoptions of other nodes' tables (see the module docstring)."""

    state: NodeState
    members: Membership
    chairs: ChairIndex
    directory: Directory
    pools: Pools

    async def adopt_orphans(self) -> int:
        """Take over every table whose lease has expired (its owner died). Returns how many."""
        s = self.state
        if s._closing:
            return 0
        assert s.redis is not None
        directory = await s.redis.hgetall(s.key("tables"))
        others = [
            (tid, raw_owner.decode())
            for raw_id, raw_owner in directory.items()
            if (tid := raw_id.decode()) not in s.owned and tid not in s._adopting
        ]
        if not others:
            return 0
        # one round trip for every lease (not one per table: with many tables on other nodes,
        # a call each made the keeper, and the Redis it shares, busy all the time)
        async with s.redis.pipeline(transaction=False) as p:
            for tid, _ in others:
                p.exists(s.key("lease", tid))
            held = await p.execute()
        count = 0
        for (tid, owner), alive in zip(others, held):
            if alive or s._closing:
                continue
            if not await self._can_adopt(tid):
                continue  # another protocol's table this node does not serve (an HTTP game here without HTTP)
            ok = await s.redis.set(s.key("lease", tid), s.node, nx=True, px=int(s.lease * 1000))
            if not ok:
                continue
            s._adopting.add(tid)
            try:
                if await self._adopt(tid, owner):
                    count += 1
            except Exception:
                log.exception("event=adopt_failed table=%s", tid)
                await s.redis.delete(s.key("lease", tid))
            finally:
                s._adopting.discard(tid)
        return count

    async def _can_adopt(self, tid: str) -> bool:
        """Whether this node serves the table's protocol (a :class:`TableKind` or an adopter here):
        a node without an HTTP port must leave a dead node's HTTP games to one that has one."""
        s = self.state
        assert s.redis is not None
        raw = await s.redis.get(s.key("meta", tid))
        if raw is None:
            return True  # nothing to restore: _adopt drops the entry
        try:
            protocol = json.loads(raw).get("protocol")
        except (ValueError, AttributeError):
            return True
        if protocol in s.tables and s.tables[protocol].reseat is not None and s.lobby is None:
            return False  # its free chairs are offered by the lobby, which this process has not made yet
        return protocol in s.tables or protocol in s.adopters

    async def _adopt(self, tid: str, old_owner: str) -> bool:
        """Restore table ``tid`` by replay (Redis log, store completed from it) and seat its players."""
        s = self.state
        assert s.redis is not None
        host = s.host
        meta_raw, entries, binds = await asyncio.gather(
            s.redis.get(s.key("meta", tid)),
            s.redis.lrange(s.key("log", tid), 0, -1),
            s.redis.hgetall(s.key("bind", tid)),
        )
        if meta_raw is None:
            log.warning("event=adopt_skipped table=%s reason=no_meta", tid)
            await s.redis.hdel(s.key("tables"), tid)
            await s.redis.delete(s.key("lease", tid))
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
        kind, adopter = s.tables.get(protocol), s.adopters.get(protocol)
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
            kept[chair] = RemoteSeat(s, node, binding, names[chair], seat_kind, creds[chair], proto)
        if kind is None:  # another protocol's table (an HTTP game): its adopter builds it
            assert adopter is not None
            table = await adopter(tid, meta, kept)
            if table is None:
                return False
        else:
            seats: list[Seat | None] = [kept.get(chair) for chair in range(4)]
            for chair in range(4):
                if seats[chair] is None and creds[chair] is None and kind.fill:  # a server bot's chair
                    seats[chair] = BotSeat(host.bot(), random.Random(s._rng.getrandbits(32)), name=names[chair])
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
        lease = s.key("lease", tid)
        s.write(lease, "h", s.key("tables"), tid, s.node)
        for rs in kept.values():  # before the table's first event: the player's node follows the adopter
            s.send(rs.node, wire.Adopted(table=tid, binding=rs.binding, owner=s.node), fence=tid)
        s._fenced.discard(tid)
        s.owned[tid] = table
        s._leased.add(tid)
        s.adopted += 1
        log.info(
            "event=adopted table=%s protocol=%s from=%s actions=%d players_kept=%d node=%s",
            tid,
            protocol,
            old_owner,
            len(actions),
            len(kept),
            s.node,
        )
        if kind is None:
            return True
        if kind.chair_keys is not None:
            self.chairs.index_chairs(table, kind.chair_keys(table, meta))
        if kind.reseat is not None and s.lobby is not None:
            # the chairs whose players are gone are offered again (to players waiting for them
            # first), and players that waited meanwhile may form a table of their own
            name = str(meta.get("pool") or pool_name((protocol, GameType.ANY, None)))
            r = s.lobby.reopen(table, pool_key(name), kind.reseat, seats)
            for chair in range(4):
                if seats[chair] is None:
                    s.write(lease, "hd", s.key("bind", tid), str(chair))
                    s._spawn(self.pools.vacate(r, chair), limit=False)
            s._spawn(self.pools.try_form(name), limit=False)
        host.track(table)
        return True

    async def _complete_store(self, tid: str, meta: dict[str, Any], actions: list[Action], forced: list[bool]) -> None:
        """The store is written behind: add the game row and the actions it lacks."""
        s = self.state
        store = s.host.store
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
        s = self.state
        store = s.host.store
        if store is None or s.redis is None:
            return 0
        count = 0
        for rec in await store.unfinished():
            if rec.protocol not in (*s.tables, *s.adopters) or await s.redis.exists(s.key("meta", rec.id)):
                continue
            ok = await s.redis.set(s.key("lease", rec.id), s.node, nx=True, px=int(s.lease * 1000))
            if not ok:
                continue
            names = [str(p.get("name", "")) for p in rec.players]
            creds = [c if isinstance(c := p.get("credential"), str) else None for p in rec.players]
            meta = {"variant": rec.variant, "seed": rec.seed, "protocol": rec.protocol, "names": names, "creds": creds}
            meta.update(salt=rec.meta.get("deal_salt"), players=rec.players, tmeta=rec.meta)
            lease = s.key("lease", rec.id)
            s.write(lease, "s", s.key("meta", rec.id), json.dumps(meta))
            for i, (a, f) in enumerate(zip(rec.actions, rec.forced)):
                s.write(lease, "r", s.key("log", rec.id), json.dumps({"i": i, "a": action_to_dict(a), "f": f}))
            await s.drain()
            if await self._adopt(rec.id, ""):
                count += 1
        return count
