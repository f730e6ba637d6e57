"""The values the cluster's concerns share: what a protocol's table is, as data (:class:`TableKind`,
registered by the composition root), a new table's chairs (:data:`Placed`), a lobby ticket
(:class:`Ticket`), a lobby pool's name in Redis (:func:`pool_name`, :func:`pool_key`) and the
node's Redis key names (:func:`redis_key`).

Values and names only: nothing here talks to Redis, holds a table or imports a protocol.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from moonshot.core.engine import Phase
from moonshot.core.rules import Rules
from moonshot.runtime.lobby import Candidate, GameType, Reseat
from moonshot.runtime.table import Seat, SeatKind, Table, TablePolicy

Placed = list[tuple[Seat, dict[str, Any] | None]]  # a new table's chairs: (occupant, its lobby ticket)


@dataclass(frozen=True)
class TableKind:
    """What the lobby pools and the one adopter need to make a protocol's table, or make it
    again, as data the protocol gives (``Cluster.tables``, registered by the composition root):
    its rules, the kind of its remote chairs, its per-phase deadlines, what more its table's
    start data keeps (Trend: the numbers its players asked for), and the keys under which its
    chairs are found again by a re-join on any node (Trend: number and name), computed from the
    table and its start data when a table forms and when one is adopted."""

    rules: Rules | None = None  # a new table's (an adopted one's are its start data's)
    seat_kind: SeatKind = SeatKind.HUMAN  # an adopted table's remote chairs
    phase_timeouts: tuple[tuple[Phase, float], ...] = ()
    start_data: Callable[[Placed], dict[str, Any]] | None = None  # more start data for a new table
    chair_keys: Callable[[Table, dict[str, Any]], Sequence[tuple[int, str]]] | None = None  # (chair, key)
    # Kierki: no bot ever sits (an adopted table's lost chairs wait), a free chair of a running
    # table is offered to the next player asking for it (the lobby's Reseat), the table's own
    # policy, its meta (the game file's text) and its deals made from that meta
    fill: bool = True
    reseat: Reseat | None = None
    table_policy: TablePolicy | None = None
    table_meta: tuple[tuple[str, str], ...] = ()
    deals: Callable[[dict[str, Any]], Any] | None = None

    def policy(self, base: TablePolicy) -> TablePolicy:
        if self.table_policy is not None:
            return self.table_policy
        return replace(base, phase_timeouts=self.phase_timeouts) if self.phase_timeouts else base


@dataclass
class Ticket:
    """A player of this node waiting in a lobby pool in Redis."""

    candidate: Candidate
    text: str  # the JSON kept in the Redis pool
    pool: str  # its key
    name: str  # the pool's name (protocol, game type, code)
    timer: asyncio.TimerHandle | None = None
    tries: int = 0  # claims of a running table's free chair refused or unanswered


def pool_name(key: tuple[str, GameType, str | None]) -> str:
    """A lobby pool's name in Redis: its protocol, game type and code."""
    return json.dumps([key[0], key[1].value, key[2]])


def pool_key(name: str) -> tuple[str, GameType, str | None]:
    protocol, game_type, code = json.loads(name)
    return str(protocol), GameType(game_type), code if isinstance(code, str) else None


def redis_key(prefix: str, kind: str, name: str = "") -> str:
    """A key of the cluster's in Redis: ``<prefix><kind>:<name>`` (``<prefix><kind>`` without a name)."""
    return f"{prefix}{kind}:{name}" if name else f"{prefix}{kind}"


def text(v: Any) -> str:
    """A Redis reply's bytes as text."""
    return v.decode() if isinstance(v, bytes) else str(v)
