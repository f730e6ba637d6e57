"""The game store: games, their action logs, named values and ratings in SQL (SQLite file by
default, PostgreSQL by URL). This package only hands names on; each concern is a module:

- :mod:`moonshot.store.urls`: what a store URL means and whether it can be used (``StoreError``),
  the SQLite file's privacy;
- :mod:`moonshot.store.schema`: the tables and the rules a stored variant name stands for;
- :mod:`moonshot.store.repository`: :class:`Store`, the async repository of games, actions and ``kv``
  (one transaction per written batch), and :class:`GameRecord`;
- :mod:`moonshot.store.writer`: :class:`StoreRecorder`, the one ordered writer that tells tables
  when their actions are durable and retries a store that cannot be written;
- :mod:`moonshot.store.ratings`: the ratings tables, kept by the same writer.
"""

from __future__ import annotations

from moonshot.store import ratings
from moonshot.store.repository import (
    CHECKPOINT_ROWS,
    FAULTS_ENV,
    GameRecord,
    Store,
    deal_from_json,
    deal_to_json,
    now,
    register_game_file_parser,
)
from moonshot.store.schema import actions, games, kv, metadata, register_rules, rules_named
from moonshot.store.urls import DEFAULT_URL, PG_CONNECT_TIMEOUT, StoreError, sqlite_path, store_url
from moonshot.store.writer import StoreRecorder, _Op, backoff_delay, transient

__all__ = [
    "CHECKPOINT_ROWS",
    "DEFAULT_URL",
    "FAULTS_ENV",
    "PG_CONNECT_TIMEOUT",
    "GameRecord",
    "Store",
    "StoreError",
    "StoreRecorder",
    "_Op",
    "actions",
    "backoff_delay",
    "deal_from_json",
    "deal_to_json",
    "games",
    "kv",
    "metadata",
    "now",
    "ratings",
    "register_game_file_parser",
    "register_rules",
    "rules_named",
    "sqlite_path",
    "store_url",
    "transient",
]
