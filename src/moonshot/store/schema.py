"""The store's tables (``games``, ``kv``, ``actions``, ``reviews``; the ratings tables of
:mod:`moonshot.store.ratings` join the same ``metadata``) and the rules a stored game's variant
name stands for (:func:`rules_named`)."""

from __future__ import annotations

from sqlalchemy import JSON, BigInteger, Boolean, Column, DateTime, Integer, MetaData, String, Table, Text

from moonshot.core.rules import Rules
from moonshot.core.variants import SERVED_RULES, VARIANTS, find_variant

metadata = MetaData()

games = Table(
    "games",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("variant", String(64), nullable=False),
    Column("seed", BigInteger, nullable=False),
    Column("protocol", String(32), nullable=False, default=""),
    # [{"name":..., "kind": "human"|"bot", "credential": SHA-256 of the chair's secret (if any)}, ...] by seat
    Column("players", JSON, nullable=False),
    Column("status", String(16), nullable=False, index=True),  # running | finished | failed | aborted
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True)),
    Column("totals", JSON),
    Column("winners", JSON),
    Column("meta", JSON),
)

# Small named JSON values a protocol keeps across restarts (the Turbo lobby's open games and game
# chat, the HTTP session-signing key): written rarely, read at start.
kv = Table(
    "kv",
    metadata,
    Column("key", String(200), primary_key=True),
    Column("value", JSON, nullable=False),
)

actions = Table(
    "actions",
    metadata,
    Column("game_id", String(64), primary_key=True),
    Column("idx", Integer, primary_key=True),
    Column("action", JSON, nullable=False),  # moonshot.core.actions.action_to_dict
    Column("forced", Boolean, nullable=False, default=False),  # chosen by the server for the seat
    Column("at", DateTime(timezone=True), nullable=False),
)

# A finished game's reviews (moonshot.store.reviews): one per seat and budget, the review's JSON
# (moonshot-review/1) as text, computed once and read by everyone after.
reviews = Table(
    "reviews",
    metadata,
    Column("game_id", String(64), primary_key=True),
    Column("seat", Integer, primary_key=True),
    Column("budget", String(64), primary_key=True),  # moonshot.store.reviews.budget_key
    Column("review", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

_EXTRA_RULES: dict[str, Rules] = {}


def register_rules(rules: Rules) -> None:
    """Rules a protocol adds (``sessions``) so stored games under them can be rebuilt."""
    _EXTRA_RULES[rules.name] = rules


def rules_named(name: str) -> Rules:
    if name in _EXTRA_RULES:
        return _EXTRA_RULES[name]
    if name in SERVED_RULES:
        return SERVED_RULES[name]
    if name in VARIANTS:
        return find_variant(name)
    base, _, count = name.rpartition("-")
    if count.endswith("deals") and count[:-5].isdigit() and base in VARIANTS:
        # a tournament's deal set: the variant with a fixed number of deals (moonshot.play.tournament)
        from moonshot.core.rules import EndRule

        return find_variant(base).replace(name=name, end=EndRule.DEALS, deals=int(count[:-5]))
    raise KeyError(f"unknown rules {name!r}")
