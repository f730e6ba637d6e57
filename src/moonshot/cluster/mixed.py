"""Mixed tables on a cluster: a Sessions or Trend player whose lobby code (an open HTTP game's
id, a tournament entrant's token) names a table another node hosts; docs/scaling.md ("Mixed
tables") has the whole flow.

The player's node finds the hosting node in Redis and asks it (``mixed.claim``); that node runs
the claim through its own router with a :class:`~moonshot.cluster.remote.RemoteSeat` bound to the
player's node, so the checks and refusals are the single-process ones (``mixed.answer``). Once
seated (``seat.matched``) the player plays through a :class:`~moonshot.cluster.remote.RemoteTable`,
as at any table owned elsewhere. A player leaving before the start says ``mixed.left``; a host
that dies has its waiting players asked again of the node that takes their game over; a host
that ends a waiting player's session (its open game expired, its rematch was cancelled) says so
with a late refusal.

A finished game's rematch is claimed the same way (its id names the node that keeps it, as
``httpdone``): the claim carries the client's key as the player's node tells it
(:meth:`ClusterMixed.key_of`), so that only the client that played a chair can take that chair's
place in the next game, through whichever node it connects to.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import secrets
import weakref
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, cast

from moonshot.cluster import messages as wire
from moonshot.cluster.remote import RemoteSeat, RemoteTable, tell_matched
from moonshot.play.tournament import token_digest
from moonshot.runtime.lobby import Candidate, GameType, LobbyError
from moonshot.runtime.table import SeatKind, Table

if TYPE_CHECKING:
    from moonshot.cluster.node import Cluster
    from moonshot.runtime.tournament import Tournament

log = logging.getLogger("moonshot.cluster.mixed")

ANSWER_TIMEOUT = 15.0  # seconds a join waits for the hosting node's answer (while that node lives)
MAX_CODE = 200  # longer codes are nobody's: never looked up
TAKEOVER = "-"  # _holder: the code's tournament lost its node; a live node takes it over soon


def takeover_wait(lease: float) -> float:
    """Seconds a player waits for a live node to take over its dead host's game or tournament:
    the heartbeat's expiry, the keepers' next look, the load from the store, with a margin."""
    return 5 * lease + 10


class _HeldSeat(RemoteSeat):
    """The chair of another node's player waiting here (in an open game, for a rematch): ending
    its session before its game starts tells that node (``ended``), which ends the client's."""

    def __init__(self, *args: Any, ended: Callable[[str], None], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ended = ended

    def end_session(self, reason: str) -> None:
        self.ended(reason)


def key_on_wire(key: object | None, objects: weakref.WeakKeyDictionary[Any, str], node: str) -> str | None:
    """A client's key (``Seat.client_key``) as other nodes see it: a value (strings: a name and
    a token's digest) as its JSON, the same through every node; an object (a connection) as a
    random token of this node's, the same while the object lives. None: no later claim can be it."""
    if key is None:
        return None
    if isinstance(key, tuple) and all(isinstance(p, str) for p in key):
        return json.dumps(key)
    try:
        token = objects.get(key)
        if token is None:
            token = objects[key] = f"{node} {secrets.token_hex(16)}"
    except TypeError:  # neither hashable nor weakly referable: nobody can show it again
        return None
    return token


def key_from_wire(key: str | None) -> object | None:
    """The key a claim's seat shows here: a value key as the local seats have it (a Trend player
    that played here and asks again through another node is the same client), else the token."""
    if key is not None and key.startswith("["):
        with contextlib.suppress(ValueError):
            parts = json.loads(key)
            if isinstance(parts, list) and all(isinstance(p, str) for p in parts):
                return tuple(parts)
        return None
    return key


@dataclass(eq=False)
class _Claim:
    """A player of this node whose code names a table on ``owner``."""

    candidate: Candidate
    owner: str | None = None
    answered: bool = False
    # asked again after its host died: the answer goes to this future (ok, why), not to the
    # player, which was told ``ok`` already
    again: asyncio.Future[tuple[bool, str | None]] | None = None


class ClusterMixed:
    """Both sides of a mixed-table claim between nodes (see the module docstring)."""

    def __init__(self, cluster: Cluster) -> None:
        self.host = cluster.host
        self.cluster = cluster
        cluster.claimed = self.claimed
        self.claims: dict[str, _Claim] = {}  # this node's players asking another node, by request id
        self.held: dict[tuple[str, str], Candidate] = {}  # other nodes' players waiting here
        self.playing: dict[str, RemoteTable] = {}  # this node's players at tables hosted elsewhere
        # how a code that no node hosts is queued, per protocol (an ordinary private code): the
        # composition root adds each protocol whose TableKind is ``mixed``
        self.queues: dict[str, Callable[[Candidate], None]] = {}
        self.reclaims = 0  # waiting players asked again of the node that took their game over
        self.keys: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()  # key_on_wire's tokens
        self.ended = 0  # waiting players whose host ended their session (late refusals)
        cluster.handlers.update({k: self._on_message for k in wire.MIXED})
        cluster.keeper_hooks += [self._sweep, self._check_hosts]  # every lease/3

    # ------------------------------------------------------------ the tournaments run here
    def tournament_running(self, t: Tournament) -> None:
        """Index the external entrants' token digests: other nodes find this node by them."""
        c = self.cluster
        for e in t.spec.entrants:
            if e.external and e.token_digest:
                c.write("", "h", c.key("tourtoken"), e.token_digest, c.node)

    # ------------------------------------------------------------ the player's node
    def claim(self, c: Candidate) -> bool:
        """The router's last resort: a Sessions join with a code is looked up on the other nodes
        (answered later through ``c.settle``). False: nothing to look up."""
        code, token = c.lobby_code, c.token
        if c.settle is None or c.protocol not in self.queues or not (code or token):
            return False
        if len(code or "") > MAX_CODE or len(token or "") > MAX_CODE:
            return False
        r = secrets.token_hex(8)
        self.claims[r] = _Claim(c)
        c.pending = True
        self.cluster._spawn(self._ask(r), limit=False)
        return True

    def release(self, c: Candidate) -> bool:
        """The player left before its game started: the hosting node frees its chair."""
        for r, cl in list(self.claims.items()):
            if cl.candidate is c:
                del self.claims[r]
                if cl.owner is not None:
                    self.cluster.send(cl.owner, wire.MixedLeft(request=r, node=self.cluster.node))
                return True
        return False

    async def _holder(self, c: Candidate) -> str | None:
        """The live node hosting the code's table; ``TAKEOVER`` when the code is a token of a
        tournament whose node died (a live node takes it over within a few leases); None: no node."""
        cluster = self.cluster
        assert cluster.redis is not None
        for secret in (c.token, c.lobby_code):
            if secret:
                raw = await cluster.redis.hget(cluster.key("tourtoken"), token_digest(secret))
                if raw is not None:
                    return str(raw.decode()) if await cluster.node_alive(raw.decode()) else TAKEOVER
        code = c.lobby_code
        if code and len(code) <= 100:
            return await cluster.game_node(code)
        return None

    async def _ask(self, r: str) -> None:
        cl = self.claims.get(r)
        if cl is None:
            return
        c = cl.candidate
        loop = asyncio.get_running_loop()
        end = loop.time() + takeover_wait(self.cluster.lease)
        while True:
            try:
                # bounded like every lobby call (the answer's wait below is not): a burst of joins
                # with codes must not take every Redis connection of the node
                async with self.cluster._calls:
                    owner = await self._holder(c)
            except Exception:
                log.exception("event=mixed_lookup_failed")
                owner = None
            if self.claims.get(r) is not cl:
                return  # the player left meanwhile
            if owner != TAKEOVER:
                break
            if loop.time() > end:  # the tournament's node died, and no live node took it over
                del self.claims[r]
                _settle(c, "the tournament's server process is gone and no other took it over yet: try again")
                return
            await asyncio.sleep(0.3)
        if owner is None or owner == self.cluster.node:
            self._not_here(r)
            return
        cl.owner = owner
        self.cluster.send(owner, self._ask_message(r, c))
        end = loop.time() + ANSWER_TIMEOUT
        while loop.time() < end:
            await asyncio.sleep(min(self.cluster.lease / 3, 0.5))
            if self.claims.get(r) is not cl or cl.answered:
                return
            if not await self.cluster.node_alive(owner):
                break
        if self.claims.get(r) is cl and not cl.answered:
            del self.claims[r]
            log.info("event=mixed_claim_unanswered owner=%s name=%s", owner, c.seat.name)
            _settle(c, "the game's server process did not answer: try again")

    def _not_here(self, r: str) -> None:
        """No other node hosts the code's table. This node may have taken it over while the
        player waited (a tournament whose node died, taken over here just after the player was
        told to join again with its token): this node's own tables seat the player then. Else the
        code is an ordinary private one (the Redis pool)."""
        cl = self.claims.pop(r, None)
        if cl is None:
            return
        c = cl.candidate
        _settle(c, None)
        if self.host.claim_here(c):
            return
        self.queues[c.protocol](c)

    def pool(self, c: Candidate) -> None:
        """The candidate's Redis pool (of a protocol the cluster makes tables for)."""
        fill_wait = self.host.fill_wait if c.game_type is GameType.ANY else None
        self.cluster.queue(c, fill_wait)

    def _answered(self, msg: wire.MixedAnswer) -> None:
        r = msg.request
        cl = self.claims.get(r)
        if cl is not None and cl.again is not None:
            if not cl.again.done():
                cl.again.set_result((msg.ok, msg.reason))
            return
        if cl is not None and cl.answered and not msg.ok and msg.reason is not None:
            del self.claims[r]  # the host ended the waiting player's session: the client is told
            self.ended += 1
            log.info("event=mixed_claim_ended name=%s reason=%s", cl.candidate.seat.name, json.dumps(msg.reason))
            cl.candidate.pending = False
            try:
                cl.candidate.seat.end_session(msg.reason)
            except Exception:
                log.exception("event=mixed_end_session_failed")
            return
        if cl is None or cl.answered:
            return
        if msg.ok:
            cl.answered = True
            _settle(cl.candidate, None)
        elif msg.reason is not None:
            del self.claims[r]
            _settle(cl.candidate, msg.reason)
        else:
            self._not_here(r)

    def claimed(self, r: str) -> Candidate | None:
        """``seat.matched`` for a claim of this node's: its player, seated at a table that
        started on another node (the cluster's ``_matched`` plays it through a RemoteTable)."""
        cl = self.claims.pop(r, None)
        if cl is None:
            return None
        c = cl.candidate
        if not cl.answered:  # the fourth chair: the game started at once
            cl.answered = True
            _settle(c, None)

        def matched(table: Table, chair: int) -> None:
            rt = cast(RemoteTable, table)
            self.playing[rt.binding] = rt
            c.on_matched(table, chair)
            if rt.restored:  # a restored game: a replay (Sessions), a catch-up (Trend)
                c.seat.joined_mid_game()

        return replace(c, on_matched=matched)

    # ------------------------------------------------------------ the hosting node
    def _claim_here(self, msg: wire.MixedClaim) -> None:
        cluster = self.cluster
        node, r = msg.node, msg.request

        def answer(ok: bool, why: str | None) -> None:
            cluster.send(node, wire.MixedAnswer(request=r, ok=ok, reason=why))

        try:
            kind, game_type = SeatKind(msg.player), GameType(msg.game_type)
        except ValueError:
            answer(False, "malformed claim")
            return
        protocol = msg.protocol
        if protocol not in cluster.mixed_protocols:
            answer(False, f"players of protocol {protocol!r} cannot sit at a table of another process")
            return
        seat = _HeldSeat(
            cluster,
            node,
            secrets.token_hex(8),
            msg.name,
            kind,
            msg.credential,
            protocol,
            ended=functools.partial(self._end_held, node, r),
        )
        seat.client_key = key_from_wire(msg.client_key)
        c = Candidate(seat, game_type, msg.code, protocol=protocol, token=msg.token)
        c.on_matched = functools.partial(self._seated, node, r, seat)
        c.joined_at = asyncio.get_running_loop().time()
        self.held[(node, r)] = c
        try:
            here = self.host.claim(c)  # this node's own router: the single-process checks
        except LobbyError as e:
            self.held.pop((node, r), None)
            answer(False, str(e))
            return
        if not here:
            self.held.pop((node, r), None)
            answer(False, None)
            return
        log.info("event=mixed_claimed node=%s name=%s", node, seat.name)
        answer(True, None)  # after ``seat.matched`` when the game started at once: B ignores it then

    def _seated(self, node: str, r: str, seat: RemoteSeat, table: Table, chair: int) -> None:
        """The game of a waiting player of another node starts here (its ``on_matched``)."""
        cluster = self.cluster
        self.held.pop((node, r), None)
        if table.id not in cluster.owned and table.id not in cluster.served:  # a tournament's: served, not leased
            cluster.served[table.id] = table
            tid = table.id

            def gone(_: object) -> None:
                cluster.served.pop(tid, None)

            table.done.add_done_callback(gone)
        tell_matched(cluster, table, chair, seat, r)

    def _end_held(self, node: str, r: str, reason: str) -> None:
        """A waiting player's session ends here before its game started: its node is told."""
        if self.held.pop((node, r), None) is not None:
            self.cluster.send(node, wire.MixedAnswer(request=r, ok=False, reason=reason))

    def _left(self, msg: wire.MixedLeft) -> None:
        c = self.held.pop((msg.node, msg.request), None)
        if c is not None:
            self.host.release(c)

    async def _sweep(self) -> None:
        """The keeper's hook: chairs held for players of a node that died are freed (nobody will
        say ``mixed.left``)."""
        for node in {node for node, _ in self.held}:
            if not await self.cluster.node_alive(node):
                for key in [k for k in self.held if k[0] == node]:
                    c = self.held.pop(key, None)
                    if c is not None:
                        log.info("event=mixed_player_node_gone node=%s name=%s", node, c.seat.name)
                        self.host.release(c)

    # ------------------------------------------------------------ the host died
    async def _check_hosts(self) -> None:
        """The keeper's hook: this node's players whose game's host has no heartbeat any more.

        * waiting in an open game (told ``ok``, not yet seated): asked again of the node that
          takes the game over (``_reclaim``), or told and freed when none does;
        * playing at a table outside the directory (a tournament's game, which no node adopts:
          the tournament goes on from the store on another node, its game restored with the
          entrants' chairs waiting ``--show-up`` seconds): told that the session is closed and
          to join again with the token. A table in the directory (an HTTP game) is adopted: its
          adopter tells the player's node (``seat.adopted``) and the player plays on."""
        cluster = self.cluster
        assert cluster.redis is not None
        for b in [b for b in self.playing if b not in cluster.bindings]:
            del self.playing[b]  # the game ended, or the player left
        owners = {cl.owner for cl in self.claims.values() if cl.answered and cl.again is None and cl.owner}
        owners |= {rt.owner for rt in self.playing.values()}
        owners.discard(cluster.node)
        for owner in owners:
            if await cluster.node_alive(owner):
                continue
            for r, cl in list(self.claims.items()):
                if cl.owner == owner and cl.answered and cl.again is None:
                    cluster._spawn(self._reclaim(r, cl), limit=False)
            for b, rt in list(self.playing.items()):
                if rt.owner != owner or await cluster.redis.hexists(cluster.key("tables"), rt.id):
                    continue  # adopted under its lease: the adopter says ``seat.adopted``
                del self.playing[b]
                bound = cluster.bindings.pop(b, None)
                if bound is not None:
                    log.info("event=mixed_host_gone table=%s name=%s", rt.id, bound.seat.name)
                    bound.seat.end_session(
                        f"the server process running game {rt.id} is gone; the tournament goes on "
                        "on another process: join again with your token",
                    )

    async def _reclaim(self, r: str, cl: _Claim) -> None:
        """A waiting player's open game lost its host: ask the node that takes it over (its
        ``httpgame`` entry, or the tournament token's index, points at a live node again) to
        seat the player there; this node itself, when it took the game. Told and freed when
        no node takes the game within a few leases, or when the new host refuses it."""
        cluster = self.cluster
        dead, c = cl.owner, cl.candidate
        loop = asyncio.get_running_loop()
        end = loop.time() + takeover_wait(cluster.lease)
        cl.owner = None
        cl.again = loop.create_future()
        why = "the game's server process is gone and no other process took the game over"
        while loop.time() < end and self.claims.get(r) is cl:
            async with cluster._calls:
                node = await self._holder(c)
                gone = node is None and await self._gone(c)
            if gone:
                break
            if node == dead:  # it was only stalled past its heartbeat: the chair is still held there
                cl.owner, cl.again = dead, None
                return
            if node is None or node == TAKEOVER:
                await asyncio.sleep(0.2)
                continue
            if node == cluster.node:
                taken = self._take_here(r, cl)
                if taken is True:
                    return
                if isinstance(taken, str):
                    why = taken
                    break
                await asyncio.sleep(0.2)  # not in this node's lobby yet (the store's copy loads)
                continue
            cl.owner = node
            cl.again = loop.create_future()
            cluster.send(node, self._ask_message(r, c))
            try:
                ok, refused = await asyncio.wait_for(asyncio.shield(cl.again), cluster.lease + 2)
            except TimeoutError:
                continue
            if ok:
                cl.again = None
                self.reclaims += 1
                log.info("event=mixed_reclaimed node=%s from=%s name=%s", node, dead, c.seat.name)
                return
            if refused is not None:
                why = refused
                break
            await asyncio.sleep(0.2)  # "not here": the new host has not loaded the game yet
        if self.claims.get(r) is cl:
            del self.claims[r]
            if cl.owner is not None:
                cluster.send(cl.owner, wire.MixedLeft(request=r, node=cluster.node))
            log.info("event=mixed_claim_dropped name=%s reason=%s", c.seat.name, json.dumps(why))
            c.seat.end_session(f"{why}: you left game {c.lobby_code or 'of your token'}; join again")

    async def _gone(self, c: Candidate) -> bool:
        """The open game is gone for good: not open anywhere (no ``httpgame`` entry) and not
        started. A tournament token: never known gone here (its host may still take it up)."""
        cluster = self.cluster
        assert cluster.redis is not None
        code = c.lobby_code
        if not code or c.token or len(code) > 100:
            return False
        if await cluster.redis.hexists(cluster.key("tourtoken"), token_digest(code)):
            return False
        return not await cluster.redis.hexists(cluster.key("httpgame"), code)

    def _take_here(self, r: str, cl: _Claim) -> bool | str | None:
        """This node took the player's game over: the single-process claim. True: seated; a
        string: refused, why; None: not in this node's lobby yet."""
        c = cl.candidate
        del self.claims[r]
        try:
            here = self.host.claim_here(c)
        except LobbyError as e:
            return str(e)
        if not here:
            self.claims[r] = cl
            return None
        self.reclaims += 1
        log.info("event=mixed_reclaimed node=%s name=%s", self.cluster.node, c.seat.name)
        return True

    def _ask_message(self, r: str, c: Candidate) -> wire.MixedClaim:
        return wire.MixedClaim(
            request=r,
            node=self.cluster.node,
            code=c.lobby_code,
            token=c.token,
            name=c.seat.name,
            player=c.seat.kind.value,
            credential=c.seat.credential,
            game_type=c.game_type.value,
            protocol=c.protocol,
            client_key=key_on_wire(c.seat.client_key, self.keys, self.cluster.node),
        )

    # ------------------------------------------------------------ messages
    def _on_message(self, msg: Any) -> None:
        if isinstance(msg, wire.MixedClaim):
            self._claim_here(msg)
        elif isinstance(msg, wire.MixedAnswer):
            self._answered(msg)
        elif isinstance(msg, wire.MixedLeft):
            self._left(msg)


def _settle(c: Candidate, why: str | None) -> None:
    c.pending = False
    if c.settle is not None:
        try:
            c.settle(why)
        except Exception:
            log.exception("event=mixed_settle_failed")


__all__ = ["ClusterMixed"]
