"""The matching engine: who plays with whom.

A player (any protocol) asks to play with a ``game_type`` and an optional ``lobby_code`` and says
whether it is a human or a bot:

* ``any``: anyone who also asked for ``any`` (same code); empty chairs are filled with moonshot
  bots once the first waiting player has waited ``fill_wait`` seconds (``None``: never fill);
* ``humans_only``: four humans; a bot asking for it is refused; nothing is ever filled;
* ``bots_only``: four bots (clients that say they are bots); never filled with moonshot bots.

The same ``lobby_code`` (and game type) puts players at the same table, four at a time; no code
means the public pool. Chairs are shuffled so arrival order does not pick the seat.
The lobby runs in the event loop's thread; it has no lock because nothing else touches it.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from moonshot.server.table import Seat, SeatKind, Table

log = logging.getLogger("moonshot.lobby")


class GameType(enum.Enum):
    ANY = "any"
    HUMANS_ONLY = "humans_only"
    BOTS_ONLY = "bots_only"


class LobbyError(ValueError):
    """The request cannot be matched (a bot asking for humans_only, ...)."""


@dataclass(eq=False)
class Candidate:
    seat: Seat
    game_type: GameType
    lobby_code: str | None = None
    on_matched: Callable[[Table, int], None] = lambda table, seat: None
    joined_at: float = 0.0

    @property
    def kind(self) -> SeatKind:
        return self.seat.kind


@dataclass
class _Pool:
    members: list[Candidate] = field(default_factory=list)
    timer: asyncio.TimerHandle | None = None


# start_table(seats) creates and starts a table for four seats (the app wires storage, policy...)
TableStarter = Callable[[list[Seat]], Table]


class Lobby:
    def __init__(
        self,
        start_table: TableStarter,
        make_bot: Callable[[], Seat],
        fill_wait: float | None = 5.0,
        rng: random.Random | None = None,
    ) -> None:
        self.start_table = start_table
        self.make_bot = make_bot
        self.fill_wait = fill_wait
        self.rng = rng or random.Random()
        self._pools: dict[tuple[GameType, str | None], _Pool] = {}
        self.matched = 0

    def waiting(self) -> int:
        return sum(len(p.members) for p in self._pools.values())

    def join(self, c: Candidate) -> None:
        if c.game_type is GameType.HUMANS_ONLY and c.kind is not SeatKind.HUMAN:
            raise LobbyError("humans_only games are for human players (say player_kind: human)")
        if c.game_type is GameType.BOTS_ONLY and c.kind is not SeatKind.BOT:
            raise LobbyError("bots_only games are for bots (say player_kind: bot)")
        loop = asyncio.get_running_loop()
        c.joined_at = loop.time()
        key = (c.game_type, c.lobby_code)
        pool = self._pools.setdefault(key, _Pool())
        pool.members.append(c)
        log.debug("event=lobby_join type=%s code=%s waiting=%d", c.game_type.value, c.lobby_code, len(pool.members))
        while len(pool.members) >= 4:
            group, pool.members = pool.members[:4], pool.members[4:]
            self._match(group, [])
        self._arm(key, pool)

    def leave(self, c: Candidate) -> bool:
        key = (c.game_type, c.lobby_code)
        pool = self._pools.get(key)
        if pool is None or c not in pool.members:
            return False
        pool.members.remove(c)
        self._arm(key, pool)
        return True

    def _arm(self, key: tuple[GameType, str | None], pool: _Pool) -> None:
        if pool.timer is not None:
            pool.timer.cancel()
            pool.timer = None
        if not pool.members:
            self._pools.pop(key, None)
            return
        if key[0] is not GameType.ANY or self.fill_wait is None:
            return
        loop = asyncio.get_running_loop()
        when = pool.members[0].joined_at + self.fill_wait
        pool.timer = loop.call_at(when, self._fill, key)

    def _fill(self, key: tuple[GameType, str | None]) -> None:
        pool = self._pools.get(key)
        if pool is None or not pool.members:
            return
        pool.timer = None
        group, pool.members = pool.members[:4], pool.members[4:]
        bots = [self.make_bot() for _ in range(4 - len(group))]
        self._match(group, bots)
        self._arm(key, pool)

    def _match(self, group: list[Candidate], bots: list[Seat]) -> None:
        entries: list[tuple[Seat, Candidate | None]] = [(c.seat, c) for c in group] + [(b, None) for b in bots]
        self.rng.shuffle(entries)
        try:
            table = self.start_table([s for s, _ in entries])
        except Exception:
            log.exception("event=table_start_failed")
            return
        self.matched += 1
        for i, (_, c) in enumerate(entries):
            if c is not None:
                try:
                    c.on_matched(table, i)
                except Exception:
                    log.exception("event=on_matched_failed table=%s seat=%d", table.id, i)
                    table.detach(i, c.seat, "matching callback failed")
        log.info(
            "event=matched table=%s players=%s bots=%d",
            table.id,
            [s.name for s, _ in entries],
            len(bots),
        )


__all__ = ["Candidate", "GameType", "Lobby", "LobbyError"]
