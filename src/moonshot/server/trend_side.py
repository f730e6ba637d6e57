"""The Trend side of ``moonshot serve`` (``--trend-port``): :class:`TrendSide` makes the Trend
tables the lobby matches, builds the :class:`~moonshot.protocols.trend.server.TrendService`
(and, in a cluster, tells the cluster what a Trend table is), and finds the chairs of restored
games that a Trend join takes back.

It is given exactly what it uses of the server: the running tables (read only), the lobby's
table policy, the table seeds and ids, the store's recorder and the server's ``track`` (which
keeps, meters and starts a table). The lobby, the bots and the listening are the server's.
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
from collections.abc import Callable, Mapping
from typing import Any

from moonshot.http.proxies import ForwardedClient
from moonshot.runtime.limits import ClientGuard
from moonshot.runtime.lobby import Lobby
from moonshot.runtime.table import Seat, SeatKind, Table, TablePolicy
from moonshot.store import StoreRecorder

log = logging.getLogger("moonshot.server")


class TrendSide:
    """Trend tables and the Trend service of one server process."""

    def __init__(
        self,
        *,
        tables: Mapping[str, Table],
        policy: Callable[[], TablePolicy],
        seed: Callable[[], int],
        table_id: Callable[[], str],
        recorder: StoreRecorder | None,
        track: Callable[[Table], None],
    ) -> None:
        self._tables = tables
        self._policy = policy
        self._seed = seed
        self._table_id = table_id
        self._recorder = recorder
        self._track = track

    def service(self, lobby: Lobby, guard: ClientGuard, cluster: Any = None, mixed: Any = None) -> Any:
        """The Trend service, seating its players through ``lobby`` (not listening yet). In a
        cluster (``cluster``, with ``mixed``: codes naming other processes' tables) its tables
        are matched, re-joined and adopted through Redis."""
        from moonshot.protocols.trend.server import TrendService

        trend = TrendService(lobby, guard=guard)
        # under ASGI (MOONSHOT_TREND_ASGI=1) the real client behind a trusted proxy, as for HTTP;
        # the lean listener asks the guard's proxies itself
        trend.app = ForwardedClient(trend.app, guard.proxies)
        trend.find_chair = lambda j: self.find_chair(j.number, j.name, j.token)
        trend.names_chair = lambda j: self.names_chair(j.name)
        if cluster is not None:  # matched (the cluster's lobby), rejoined and adopted through Redis
            from moonshot.cluster.node import TableKind
            from moonshot.core.variants import TREND
            from moonshot.protocols.trend.server import TIMEOUTS, chair_keys, start_data

            # the one adopter seats bots in the bots' chairs again (their kind), with Trend's
            # deadlines; the start data keeps the numbers asked for, the re-join index their keys
            cluster.tables["trend"] = TableKind(
                TREND, SeatKind.BOT, TIMEOUTS, start_data=start_data, chair_keys=chair_keys
            )
            trend.remote_rejoin = cluster.rejoin
            if mixed is not None:  # a code naming another process's table: asked there, else pooled
                mixed.queues["trend"] = mixed.pool
        return trend

    def new_table(self, seats: list[Seat]) -> Table:
        """A new Trend table for the seats the lobby matched (the lobby's ``trend`` starter)."""
        from moonshot.core.variants import TREND
        from moonshot.protocols.trend.server import TIMEOUTS

        policy = dataclasses.replace(self._policy(), phase_timeouts=TIMEOUTS)
        table = Table(
            TREND,
            seats,
            seed=self._seed(),
            policy=policy,
            table_id=self._table_id(),
            recorder=self._recorder,
            meta={"protocol": "trend"},
        )
        self._track(table)
        return table

    def find_chair(self, number: int, name: str, token: str) -> tuple[Table, int] | None:
        """The chair of a running game of this process that a Trend join (``number``, ``name``,
        ``token``) takes back although no connection of this process left it: a game restored
        after a restart, whose chairs keep their players' token digests from the store. The
        name and the token's digest must match; of several such chairs, the one the number asks
        for (chair ``number - 1``) wins. Chairs someone sits in are never found. Only restored games
        are looked at (every join that takes no chair back passes here)."""
        from moonshot.protocols.trend.server import credential

        digest = credential(token)
        found: tuple[Table, int] | None = None
        for t in self._tables.values():
            if not t.restored or t.done.done():
                continue  # (a live game's chairs are taken back through TrendService.away)
            for i, stored in enumerate(t.credentials):
                if stored is None or t.names[i] != name or t.chairs[i].occupant is not None:
                    continue
                if secrets.compare_digest(stored, digest):
                    if i == number - 1:
                        return (t, i)
                    found = found or (t, i)
        return found

    def names_chair(self, name: str) -> bool:
        """Is an empty chair of a restored running game held under ``name`` (its token unseen)?"""
        return any(
            t.restored and not t.done.done() and t.names[i] == name and t.chairs[i].occupant is None and stored
            for t in self._tables.values()
            for i, stored in enumerate(t.credentials)
        )


__all__ = ["TrendSide"]
