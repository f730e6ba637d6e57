"""The Kierki side of ``moonshot serve`` (``--kierki-port``): :class:`KierkiSide` holds the
:class:`~moonshot.protocols.kierki.service.KierkiService`, the game file every Kierki table plays
(``--kierki-game``), the tables it makes for four matched clients and those it restores from the
store, what the cluster is told of Kierki tables (a ``TableKind``), and the listener's start.

It is given exactly what it uses of the server: the configuration, the table seeds and ids, the
store's recorder and the server's ``track`` (which keeps, meters and starts a table). The store
is read, and restoring decided, by :mod:`moonshot.server.restore`; the lobby is the server's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from moonshot.core.variants import KIERKI
from moonshot.protocols.kierki.gamefile import load_game_in_order, parse_game_in_order
from moonshot.protocols.kierki.server import kierki_policy
from moonshot.protocols.kierki.service import KierkiService, start_data
from moonshot.runtime.limits import ClientGuard
from moonshot.runtime.lobby import Lobby
from moonshot.runtime.table import Seat, SeatKind, Table
from moonshot.server.config import ServerConfig
from moonshot.store import StoreRecorder

log = logging.getLogger("moonshot.server")


class KierkiSide:
    """The Kierki service and its tables (listening starts later, once the lobby exists: :meth:`listen`).
    A game file is read here, so that a bad one stops the start with the reason."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        seed: Callable[[], int],
        table_id: Callable[[], str],
        recorder: StoreRecorder | None,
        track: Callable[[Table], None],
    ) -> None:
        self._timeout = config.kierki_timeout
        self._seed = seed
        self._table_id = table_id
        self._recorder = recorder
        self._track = track
        self.restored: list[Table] = []  # tables restored from the store, for the lobby
        self.deals: Any = None
        self.text: str | None = None
        orders: Any = ()
        if config.kierki_game:
            load_game_in_order(config.kierki_game)  # the file's errors, with its name
            with open(config.kierki_game, encoding="ascii", errors="replace") as f:
                self.text = f.read()
            self.deals, orders = parse_game_in_order(self.text)
        self.service = KierkiService(
            self.new_table,
            timeout=config.kierki_timeout,
            orders=orders,
            abandon_after=config.kierki_abandon,
            on_abandoned=self.abandoned,
        )

    def join_cluster(self, cluster: Any) -> None:
        """In a cluster, Kierki tables are matched through the Redis pools (exact chairs, a
        running table's free chair first), made and adopted by the cluster from this data."""
        from moonshot.cluster.node import TableKind

        def deals(meta: dict[str, Any]) -> Any:
            text = meta.get("deals")
            return parse_game_in_order(text)[0] if isinstance(text, str) else None

        cluster.tables["kierki"] = TableKind(
            KIERKI,
            SeatKind.HUMAN,
            start_data=start_data,
            fill=False,
            reseat=self.service.reseat,
            table_policy=kierki_policy(self._timeout),
            table_meta=(("deals", self.text),) if self.text is not None else (),
            deals=deals,
        )

    async def listen(self, lobby: Lobby, guard: ClientGuard, host: str, port: int, reuse_port: bool) -> int:
        """Seat Kierki clients through ``lobby`` (the restored tables' seats offered first) and
        listen on ``port``; returns the port listened on."""
        self.service.lobby = lobby
        for table in self.restored:
            self.service.adopt(table)
        self.service.guard = guard
        listening = await self.service.start(host, port, reuse_port)
        log.info("event=listening protocol=kierki host=%s port=%d", host, listening)
        return listening

    def new_table(self, seats: list[Seat]) -> Table:
        """A new Kierki table for four clients the lobby matched (the service's ``make_table``)."""
        table = self.table(list(seats), deals=self.deals, text=self.text)
        self._track(table)
        return table

    def table(self, seats: list[Seat | None], rec: Any = None, deals: Any = None, text: str | None = None) -> Table:
        """A Kierki table: a new one, or the stored game ``rec`` played on from its actions."""
        meta: dict[str, Any] = {"protocol": "kierki"}
        if text is not None:
            meta["deals"] = text
        if rec is None:
            return Table(
                KIERKI,
                seats,
                seed=self._seed(),
                policy=kierki_policy(self._timeout),
                table_id=self._table_id(),
                recorder=self._recorder,
                meta=meta,
                deals=deals,
            )
        return Table(
            KIERKI,
            seats,
            seed=rec.seed,
            policy=kierki_policy(self._timeout),
            table_id=rec.id,
            recorder=self._recorder,
            actions=rec.actions,
            forced=rec.forced,
            restored=True,
            names=[str(p.get("name", "")) for p in rec.players],
            meta={**meta, "restored": True, "deal_salt": rec.meta.get("deal_salt")},
            deals=deals,
        )

    def abandoned(self, table: Table) -> None:
        if self._recorder is not None:
            self._recorder.game_aborted(table, "abandoned: every Kierki seat empty")

    def restore(self, rec: Any) -> Table:
        """A stored Kierki game: every seat waits for a client's ``IAM<seat>`` (no bots, as the
        spec pauses a game until its client comes back); its seats are offered by the lobby once
        there is one (:meth:`listen`)."""
        text = rec.meta.get("deals")
        deals = parse_game_in_order(text)[0] if isinstance(text, str) else None
        table = self.table([None, None, None, None], rec, deals, text if isinstance(text, str) else None)
        self.restored.append(table)
        self._track(table)
        log.info("event=restored game=%s protocol=kierki actions=%d", rec.id, len(rec.actions))
        return table


__all__ = ["KierkiSide"]
