"""Stored game reviews: the ``reviews`` table (:data:`moonshot.store.schema.reviews`), one row per
finished game, seat and budget, the review's JSON as text. A review is computed once (in the review
pool) and every later request reads it here, at no cost.

:func:`budget_key` names a budget (``"s200"``: 200 simulations a decision; ``"t500"``: 500 ms;
a review seed other than 0 adds ``"/r<seed>"``). Writes insert once: a second writer of the same
key (another server process that computed it too) keeps the first row.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import delete, insert, select
from sqlalchemy.exc import IntegrityError

from moonshot.store import Store, now
from moonshot.store.schema import games, reviews


def budget_key(simulations: int | None = None, think_ms: int | None = None, seed: int = 0) -> str:
    """The text a review's budget is stored under."""
    if (simulations is None) == (think_ms is None):
        raise ValueError("a review's budget is simulations or think_ms, one of them")
    key = f"s{simulations}" if simulations is not None else f"t{think_ms}"
    return key if seed == 0 else f"{key}/r{seed}"


async def load_review_text(store: Store, game_id: str, seat: int, budget: str) -> str | None:
    """The stored review's JSON text, as kept (the server hands it on without parsing it)."""
    q = select(reviews.c.review).where(reviews.c.game_id == game_id, reviews.c.seat == seat, reviews.c.budget == budget)
    async with store.engine.connect() as conn:
        row = (await conn.execute(q)).first()
    return None if row is None else str(row[0])


async def load_review(store: Store, game_id: str, seat: int, budget: str) -> dict[str, Any] | None:
    """The stored review of ``game_id``'s ``seat`` under ``budget`` (None: not stored)."""
    text = await load_review_text(store, game_id, seat, budget)
    if text is None:
        return None
    value = json.loads(text)
    return value if isinstance(value, dict) else None


async def save_review(store: Store, game_id: str, seat: int, budget: str, review: dict[str, Any] | str) -> bool:
    """Keep ``review`` (its JSON, or the JSON's text as a worker wrote it); False when one was
    already kept under that key (it stays)."""
    text = review if isinstance(review, str) else json.dumps(review, separators=(",", ":"))
    try:
        async with store.engine.begin() as conn:
            await conn.execute(
                insert(reviews).values(game_id=game_id, seat=seat, budget=budget, review=text, created_at=now())
            )
    except IntegrityError:
        return False
    return True


async def stored_reviews(store: Store, game_id: str) -> list[tuple[int, str]]:
    """The (seat, budget) of every review kept for ``game_id``."""
    q = select(reviews.c.seat, reviews.c.budget).where(reviews.c.game_id == game_id).order_by(reviews.c.seat)
    async with store.engine.connect() as conn:
        return [(int(r[0]), str(r[1])) for r in await conn.execute(q)]


async def game_state(store: Store, game_id: str) -> tuple[str, dict[str, Any]] | None:
    """A stored game's status and meta, without its actions (whether it may be reviewed is asked
    of every request, before the game itself is read); None: no such game."""
    q = select(games.c.status, games.c.meta).where(games.c.id == game_id)
    async with store.engine.connect() as conn:
        row = (await conn.execute(q)).first()
    if row is None:
        return None
    meta = row[1]
    if isinstance(meta, str):
        meta = json.loads(meta)
    return str(row[0]), dict(meta or {})


async def delete_reviews(store: Store, game_id: str) -> int:
    """Forget every review of ``game_id`` (its record was deleted or replaced); how many went."""
    async with store.engine.begin() as conn:
        result = await conn.execute(delete(reviews).where(reviews.c.game_id == game_id))
    return int(result.rowcount or 0)


__all__ = [
    "budget_key",
    "delete_reviews",
    "game_state",
    "load_review",
    "load_review_text",
    "save_review",
    "stored_reviews",
]
