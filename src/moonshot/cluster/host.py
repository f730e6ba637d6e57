"""What the cluster needs from the server process it runs in: a small host interface.

The composition root (:class:`moonshot.server.app.ServerApp`) builds one :class:`Host` and hands
it to the cluster; the cluster never imports the server application, and the application's
private helpers stay private. Everything here is a value or a callable: a seed for a new table,
a bot for a chair, the table policy, where a started table goes (``track``), the store, and the
process's router for lobby codes naming tables hosted here (mixed tables)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from moonshot.runtime.lobby import Candidate
from moonshot.runtime.table import Seat, Table, TablePolicy


@dataclass
class Host:
    """The server process, as the cluster sees it."""

    seed: Callable[[], int]  # a new table's seed
    track: Callable[[Table], None]  # start a table and keep it with the process's tables
    policy: Callable[[float], TablePolicy]  # the server's table policy with that reconnect grace
    restore_grace: float  # seconds an adopted table waits for the players whose connection died
    bot: Callable[[], Any]  # a fresh server bot policy (an adopted table's bot chairs)
    bot_seat: Callable[[str], Seat]  # a named server bot seat for a new table of that protocol
    store: Any = None  # moonshot.store.Store, or None
    recorder: Any = None  # the store's writer (moonshot.store.StoreRecorder), or None
    fill_wait: float | None = None  # seconds a lobby ticket waits before bots fill its table
    matched: Callable[[], None] = lambda: None  # a table formed from the lobby (the lobby's count)
    # lobby codes naming a table hosted in this process (a tournament's seat, an open HTTP game)
    claim: Callable[[Candidate], bool] = lambda c: False  # here, else asked of the cluster
    claim_here: Callable[[Candidate], bool] = lambda c: False  # here only
    release: Callable[[Candidate], bool] = lambda c: False  # the candidate left before its table started
