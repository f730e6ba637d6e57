"""Unfinished stored games brought back to the tables at start, and a Turbo game adopted in a
cluster: :class:`Restorer`.

At start, every unfinished game of the store is played on from its stored actions: a Sessions or
Trend game's remote chairs wait ``restore_grace`` seconds for their players (then substitute bots
play them), a Turbo game's people keep their chairs by name (with no bots), a Kierki game waits
for its clients (:class:`~moonshot.server.kierki_side.KierkiSide`). A game that cannot be
restored is marked ``failed`` and said on stderr. In a cluster these protocols' games are adopted
under a lease instead (the cluster's adoption), a Turbo game through :meth:`Restorer.adopt_turbo`.

It is given exactly what it uses of the server: the store and its recorder, the HTTP lobby, the
table policy, ``track`` (which keeps, meters and starts a table) and a count of restored games.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import sys
from collections.abc import Callable, Collection, Mapping
from typing import Any

from moonshot.http.lobby import TurboLobby
from moonshot.runtime.table import Seat, Table, TablePolicy
from moonshot.server.kierki_side import KierkiSide
from moonshot.store import Store, StoreRecorder, rules_named

log = logging.getLogger("moonshot.server")


class Restorer:
    """Restores the store's unfinished games (:meth:`restore`) and adopts a cluster's Turbo games
    (:meth:`adopt_turbo`); ``on_restored`` is called once for each game brought back."""

    def __init__(
        self,
        *,
        store: Store | None,
        recorder: StoreRecorder | None,
        turbo: TurboLobby | None,
        in_cluster: bool,
        policy: Callable[[float], TablePolicy],
        restore_grace: float,
        track: Callable[[Table], None],
        on_restored: Callable[[], None],
    ) -> None:
        self._store = store
        self._recorder = recorder
        self._turbo = turbo
        self._in_cluster = in_cluster
        self._policy = policy
        self._grace = restore_grace
        self._track = track
        self._on_restored = on_restored

    async def restore(self, skip: Collection[str] = (), kierki: KierkiSide | None = None) -> set[int]:
        """Restart every unfinished stored game but those in ``skip`` (a resumed tournament's own);
        returns the session ids they use (never reissued). Without ``kierki`` (no
        ``--kierki-port``) a Kierki game stays stored."""
        ids: set[int] = set()
        if self._store is None:
            return ids
        for rec in await self._store.unfinished():
            if rec.id in skip or (rec.protocol == "tournament" and self._in_cluster):
                continue  # a tournament's games are its host's (a live node may be playing them)
            if self._in_cluster and (rec.protocol in ("sessions", "turbo", "kierki", "trend")):
                # a cluster's games of these protocols are adopted under a lease (by a node that
                # serves the protocol: Cluster.adopt_stored, adopt_orphans), never restored here
                continue
            if rec.protocol == "turbo":
                await self.restore_turbo(rec)
                continue
            if rec.protocol == "kierki":
                if kierki is None:
                    log.info("event=restore_skipped game=%s reason=no_kierki_port", rec.id)
                    continue
                try:
                    kierki.restore(rec)
                except Exception as e:
                    log.exception("event=restore_failed game=%s", rec.id)
                    await self._store.mark(rec.id, "failed")
                    print(f"could not restore game {rec.id}: {e}", file=sys.stderr)
                else:
                    self._on_restored()
                continue
            try:
                rules = rules_named(rec.variant)
                names = [str(p.get("name", "")) for p in rec.players]
                credentials = [c if isinstance(c := p.get("credential"), str) else None for p in rec.players]
                table = Table(
                    rules,
                    [None, None, None, None],
                    seed=rec.seed,
                    policy=self._policy(self._grace),
                    table_id=rec.id,
                    recorder=self._recorder,
                    actions=rec.actions,
                    forced=rec.forced,
                    restored=True,
                    names=names,
                    credentials=credentials,
                    meta={"protocol": rec.protocol, "restored": True, "deal_salt": rec.meta.get("deal_salt")},
                )
            except Exception as e:
                log.exception("event=restore_failed game=%s", rec.id)
                await self._store.mark(rec.id, "failed")
                print(f"could not restore game {rec.id}: {e}", file=sys.stderr)
                continue
            for n in names:
                if n.endswith(")") and "(" in n:
                    with contextlib.suppress(ValueError):
                        ids.add(int(n[n.rindex("(") + 1 : -1]))
            log.info("event=restored game=%s actions=%d version=%d", rec.id, len(rec.actions), table.version)
            self._track(table)
            self._on_restored()
        return ids

    async def adopt_turbo(self, tid: str, meta: dict[str, Any], kept: Mapping[int, Seat]) -> Table | None:
        """The cluster adopts an HTTP game whose process died: restored from the store (which
        the cluster completed from the Redis log), its streams resume from ``Last-Event-ID``.
        ``kept``: its Sessions and Trend players whose connections live on other processes,
        seated again through them; one whose connection died with the game's process gets an
        empty chair, which it takes back within ``--restore-grace`` (then a bot plays it) on any
        process: with ``resume_session`` (Sessions) or by joining again (Trend)."""
        if self._store is None or self._turbo is None:
            log.warning("event=adopt_skipped table=%s reason=%s", tid, "no_store" if self._store is None else "no_http")
            return None
        rec = await self._store.load(tid)
        if rec is None:
            return None
        old = self._turbo.games.pop(tid, None)  # a stale copy (this node lost the lease earlier)
        if old is not None and old.stream is not None:
            old.stream.close()
        chairs: dict[int, Seat | None] = {}
        for chair, p in enumerate(rec.players):
            protocol, name = p.get("protocol"), str(p.get("name", ""))
            if protocol not in ("sessions", "trend"):
                continue
            if chair in kept:
                chairs[chair] = kept[chair]
            elif isinstance(p.get("credential"), str) and (protocol == "trend" or name.endswith(")")):
                chairs[chair] = None  # taken back with resume_session (Sessions) or a join (Trend)
        table = await self.restore_turbo(rec, chairs)
        if table is not None:
            trend = [i for i, p in enumerate(rec.players) if p.get("protocol") == "trend" and i in chairs]
            peers = self._turbo.peers
            if trend and peers is not None and peers.trend_index is not None:  # re-joins of its Trend bots
                peers.trend_index(table, trend)
            if chairs:
                waiting = len(chairs) - len(kept)
                log.info("event=mixed_adopted game=%s players_kept=%d players_waiting=%d", tid, len(kept), waiting)
        return table

    async def restore_turbo(self, rec: Any, chairs: dict[int, Seat | None] | None = None) -> Table | None:
        """A Turbo game: its people keep their chairs by name (no substitute bots; they play at
        their own pace) and its bots are made again by algorithm. Without HTTP it waits.
        ``chairs``: other protocols' players seated again (or left empty for a while) in a
        cluster's adoption; the table then follows the server's policy, as a mixed game does."""
        if self._turbo is None:
            log.info("event=restore_skipped game=%s reason=no_http", rec.id)
            return None
        recorder = self._turbo.recorder
        names = [str(p.get("name", "")) for p in rec.players]
        creds = [c if isinstance(c := p.get("credential"), str) else None for p in rec.players]

        def table(rec: Any, seats: list[Seat], policy: TablePolicy) -> Table:
            return Table(
                rules_named(rec.variant),
                seats,
                seed=rec.seed,
                policy=policy,
                table_id=rec.id,
                recorder=recorder,
                actions=rec.actions,
                forced=rec.forced,
                restored=True,
                names=names,
                credentials=creds,
                meta={**rec.meta, "restored": True},
            )

        policy = None
        if chairs:
            policy = dataclasses.replace(self._turbo.mixed_policy, reconnect_grace=self._grace)
        try:
            restored = await self._turbo.restore_running(rec, table, chairs, policy)
        except Exception as e:
            assert self._store is not None
            log.exception("event=restore_failed game=%s", rec.id)
            await self._store.mark(rec.id, "failed")
            print(f"could not restore game {rec.id}: {e}", file=sys.stderr)
            return None
        self._on_restored()
        log.info("event=restored game=%s protocol=turbo actions=%d", rec.id, len(rec.actions))
        return restored


__all__ = ["Restorer"]
