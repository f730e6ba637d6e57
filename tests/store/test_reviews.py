"""Stored reviews: one per (game, seat, budget), the JSON back as it went in, a second write of a
key keeps the first, on SQLite (and PostgreSQL where it runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from moonshot.store import Store
from moonshot.store.reviews import budget_key, delete_reviews, game_state, load_review, save_review, stored_reviews

REVIEW = {"format": "moonshot-review/1", "game_id": "g1", "seat": 2, "decisions": [{"label": "QS", "cost": 1.5}]}


def test_budget_keys() -> None:
    assert budget_key(200) == "s200"
    assert budget_key(think_ms=500) == "t500"
    assert budget_key(200, seed=3) == "s200/r3"
    with pytest.raises(ValueError):
        budget_key()
    with pytest.raises(ValueError):
        budget_key(200, 500)


@pytest.mark.asyncio
async def test_a_review_is_kept_by_game_seat_and_budget(tmp_path: Path) -> None:
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'g.db'}")
    try:
        assert await load_review(store, "g1", 2, "s200") is None
        assert await save_review(store, "g1", 2, "s200", REVIEW)
        assert await load_review(store, "g1", 2, "s200") == REVIEW
        assert await load_review(store, "g1", 1, "s200") is None  # another seat
        assert await load_review(store, "g1", 2, "s400") is None  # another budget
        assert await load_review(store, "g2", 2, "s200") is None  # another game
        # a second writer of the same key (another process computed it too): the first stays
        assert not await save_review(store, "g1", 2, "s200", {"other": True})
        assert await load_review(store, "g1", 2, "s200") == REVIEW
        await save_review(store, "g1", 0, "s200", {"seat": 0})
        assert await stored_reviews(store, "g1") == [(0, "s200"), (2, "s200")]
        assert await delete_reviews(store, "g1") == 2
        assert await stored_reviews(store, "g1") == []
    finally:
        await store.close()


@pytest.mark.asyncio
async def test_reviews_survive_reopening_the_store(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'g.db'}"
    store = await Store.open(url)
    await save_review(store, "g1", 3, "t500", REVIEW)
    await store.close()
    store = await Store.open(url)
    try:
        assert await load_review(store, "g1", 3, "t500") == REVIEW
    finally:
        await store.close()


@pytest.mark.asyncio
async def test_a_games_state_is_read_without_its_actions(tmp_path: Path) -> None:
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'g.db'}")
    try:
        assert await game_state(store, "g1") is None
        await store.create_game("g1", "standard", 7, [{"name": "a", "kind": "human"}] * 4, meta={"unrated": True})
        assert await game_state(store, "g1") == ("running", {"unrated": True})
        await store.mark("g1", "finished")
        assert await game_state(store, "g1") == ("finished", {"unrated": True})
    finally:
        await store.close()
