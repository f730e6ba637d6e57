"""Ratings in the store: the ``ratings`` table (one row per player per pool) and ``rating_games``
(what each rated game did to each of its players), kept by the same writer as the games.

When a table finishes, :class:`~moonshot.store.StoreRecorder` queues a ``rate`` op after the
game's ``finished`` status, so :func:`rate_stored_game` runs in the writer's transaction, on the
row just written, whatever protocol the game came over. :func:`rebuild` forgets every rating and
rates every finished game again in finish order (``finished_at``, then id), the order the writer
rated them in, through the same pure :func:`moonshot.play.ratings.rate`: the same ratings, exactly.
The math lives in :mod:`moonshot.play.ratings`; this module only reads and writes rows.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Float,
    Index,
    Integer,
    String,
    Table,
    and_,
    delete,
    func,
    insert,
    or_,
    select,
    text,
)
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from moonshot.play.ratings import Change, Ledger, PlayerId, Rating, player_id, pool, rate
from moonshot.store.schema import games, metadata, rules_named

log = logging.getLogger("moonshot.store")

ratings = Table(
    "ratings",
    metadata,
    Column("pool", String(64), primary_key=True),  # moonshot.play.ratings.pool(variant)
    Column("player", String(200), primary_key=True),
    Column("bot", Boolean, primary_key=True),  # a moonshot bot, named by its spec
    Column("mu", Float, nullable=False),
    Column("sigma", Float, nullable=False),
    Column("ordinal", Float, nullable=False),  # mu - 3 sigma: the leaderboard's order
    Column("games", Integer, nullable=False),
    Column("last_game", String(64), nullable=False),
    Column("updated_at", DateTime(timezone=True)),  # the last rated game's finish
    Index("ix_ratings_board", "pool", "ordinal"),
)

rating_games = Table(
    "rating_games",
    metadata,
    Column("game_id", String(64), primary_key=True),
    Column("player", String(200), primary_key=True),
    Column("bot", Boolean, primary_key=True),
    Column("pool", String(64), nullable=False),
    Column("finished_at", DateTime(timezone=True)),
    Column("seats", JSON, nullable=False),  # the seats it played (several: one player, many chairs)
    Column("rank", Integer, nullable=False),  # 1 = won (ties share)
    Column("total", Integer, nullable=False),
    Column("mu", Float, nullable=False),  # after the game
    Column("sigma", Float, nullable=False),
    Column("change", Float, nullable=False),  # of the ordinal
    Index("ix_rating_games_player", "pool", "player", "bot"),
)


def seats_of(row: Mapping[str, Any]) -> list[PlayerId] | None:
    """The players of a stored game by seat; None when a chair was empty (not rated)."""
    seats = [player_id(p, str(row.get("protocol") or "")) for p in row.get("players") or []]
    if len(seats) != 4 or any(s is None for s in seats):
        return None
    return [s for s in seats if s is not None]


def _rateable(row: Mapping[str, Any]) -> tuple[list[PlayerId], list[int], bool] | None:
    if row.get("status") != "finished" or not row.get("totals"):
        return None
    meta = row.get("meta")
    if isinstance(meta, dict) and meta.get("unrated"):
        return None  # a practice game (its creator chose the seed) or an open-hands table
    seats = seats_of(row)
    if seats is None:
        return None
    try:
        lowest_wins = rules_named(str(row["variant"])).lowest_wins
    except KeyError:
        lowest_wins = True  # rules this installation does not know: Hearts' usual order
    return seats, [int(t) for t in row["totals"]], lowest_wins


def _rows(row: Mapping[str, Any], changes: list[Change]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    key = pool(str(row["variant"]))
    board, history = [], []
    for c in changes:
        a = c.after
        board.append(
            {
                "pool": key,
                "player": c.player.name,
                "bot": c.player.bot,
                "mu": a.mu,
                "sigma": a.sigma,
                "ordinal": a.ordinal,
                "games": a.games,
                "last_game": row["id"],
                "updated_at": row.get("finished_at"),
            }
        )
        history.append(
            {
                "game_id": row["id"],
                "player": c.player.name,
                "bot": c.player.bot,
                "pool": key,
                "finished_at": row.get("finished_at"),
                "seats": list(c.seats),
                "rank": c.rank,
                "total": c.total,
                "mu": a.mu,
                "sigma": a.sigma,
                "change": a.ordinal - c.before.ordinal,
            }
        )
    return board, history


async def rate_stored_game(conn: AsyncConnection, game_id: str) -> list[Change]:
    """Rate a game the writer just marked finished (in its transaction); [] if it is not rateable."""
    row = (await conn.execute(select(games).where(games.c.id == game_id))).first()
    if row is None:
        log.warning("event=rating_skipped game=%s reason=no_such_game", game_id)
        return []
    g = dict(row._mapping)
    found = _rateable(g)
    if found is None:
        return []
    seats, totals, lowest_wins = found
    done = await conn.execute(select(func.count()).select_from(rating_games).where(rating_games.c.game_id == game_id))
    if done.scalar_one():
        return []  # rated already (a batch written again op by op)
    key = pool(str(g["variant"]))
    names = sorted({p.name for p in seats})
    q = select(ratings).where(ratings.c.pool == key, ratings.c.player.in_(names)).with_for_update()
    before: dict[PlayerId, Rating] = {}
    for r in await conn.execute(q):
        m = r._mapping
        p = PlayerId(m["player"], bool(m["bot"]))
        if p in seats:
            before[p] = Rating(float(m["mu"]), float(m["sigma"]), int(m["games"]))
    changes = rate(before, seats, totals, lowest_wins)
    if not changes:
        return []
    board, history = _rows(g, changes)
    for b in board:
        await conn.execute(
            delete(ratings).where(
                ratings.c.pool == b["pool"], ratings.c.player == b["player"], ratings.c.bot == b["bot"]
            )
        )
    await conn.execute(insert(ratings), board)
    await conn.execute(insert(rating_games), history)
    return changes


async def rebuild(engine: AsyncEngine, progress: Callable[[int, int], None] | None = None) -> int:
    """Forget every rating and rate every finished game again, in finish order; the number rated.
    ``progress(done, total)`` is called as games are rated.

    Safe while servers write to the store: the games are rated from a snapshot without holding
    anything, then one short transaction takes the write lock (``LOCK TABLE`` on PostgreSQL, which
    the writer's ``rate`` waits for; SQLite's write lock), rates the games that finished since the
    snapshot, and replaces both tables. A game finishing meanwhile is rated exactly once, either
    here or by its writer after the lock."""
    order = (games.c.finished_at, games.c.id)
    finished = select(games).where(games.c.status == "finished").order_by(*order)
    async with engine.connect() as conn:
        rows = [dict(r._mapping) for r in await conn.execute(finished)]
    ledger = Ledger()
    board: dict[tuple[str, str, bool], dict[str, Any]] = {}
    history: list[dict[str, Any]] = []
    rated = 0

    def apply(g: dict[str, Any]) -> None:
        nonlocal rated
        found = _rateable(g)
        if found is not None:
            seats, totals, lowest_wins = found
            changes = ledger.apply(str(g["variant"]), seats, totals, lowest_wins)
            if changes:
                rated += 1
                b, h = _rows(g, changes)
                board.update({(x["pool"], x["player"], x["bot"]): x for x in b})
                history.extend(h)

    for i, g in enumerate(rows, 1):
        apply(g)
        if progress is not None:
            progress(i, len(rows))
    async with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            await conn.execute(text("LOCK TABLE ratings, rating_games IN EXCLUSIVE MODE"))
        else:  # SQLite: a write takes the database's write lock at once
            await conn.execute(delete(rating_games))
        after = finished
        if rows:
            t, gid = rows[-1]["finished_at"], rows[-1]["id"]
            after = finished.where(or_(games.c.finished_at > t, and_(games.c.finished_at == t, games.c.id > gid)))
        late = [dict(r._mapping) for r in await conn.execute(after)]
        count = select(func.count()).select_from(games).where(games.c.status == "finished")
        if (await conn.execute(count)).scalar_one() != len(rows) + len(late):
            # a game that finished since but earlier in finish order (another host's clock): all again
            ledger, board, history, rated = Ledger(), {}, [], 0
            late = [dict(r._mapping) for r in await conn.execute(finished)]
        for g in late:
            apply(g)
        if late:
            log.info("event=ratings_rebuild_caught_up games=%d", len(late))
        await conn.execute(delete(rating_games))
        await conn.execute(delete(ratings))
        chunk = 1000
        values = list(board.values())
        for start in range(0, len(values), chunk):
            await conn.execute(insert(ratings), values[start : start + chunk])
        for start in range(0, len(history), chunk):
            await conn.execute(insert(rating_games), history[start : start + chunk])
    return rated


def _who(player: Mapping[str, Any], protocol: str) -> dict[str, Any]:
    """A seat as rated: ``{"name", "bot"}`` (a bot's name is its spec), and the name it sat under."""
    p = player_id(player, protocol)
    seated = str(player.get("name", ""))
    return {"name": p.name if p else seated, "bot": bool(p and p.bot), "seated": seated}


def _when(value: Any) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else None if value is None else str(value)


async def leaderboard(
    engine: AsyncEngine, variant: str | None = None, limit: int = 50
) -> dict[str, list[dict[str, Any]]]:
    """Each pool's best ``limit`` players by ordinal (one pool when ``variant`` is given)."""
    q = select(ratings).order_by(ratings.c.pool, ratings.c.ordinal.desc(), ratings.c.player, ratings.c.bot)
    if variant is not None:
        q = q.where(ratings.c.pool == pool(variant))
    out: dict[str, list[dict[str, Any]]] = {}
    async with engine.connect() as conn:
        for r in await conn.execute(q):
            m = r._mapping
            rows = out.setdefault(m["pool"], [])
            if len(rows) >= limit:
                continue
            rows.append(
                {
                    "rank": len(rows) + 1,
                    "player": m["player"],
                    "bot": bool(m["bot"]),
                    "ordinal": float(m["ordinal"]),
                    "mu": float(m["mu"]),
                    "sigma": float(m["sigma"]),
                    "games": int(m["games"]),
                    "last_game": m["last_game"],
                    "updated": _when(m["updated_at"]),
                }
            )
    return out


async def player_games(
    engine: AsyncEngine, variant: str, player: str, bot: bool, limit: int = 50
) -> list[dict[str, Any]]:
    """A player's rated games in a pool, newest first: rank, total and what each did to the rating."""
    rg = rating_games
    q = (
        select(rg, games.c.players, games.c.totals, games.c.variant, games.c.protocol)
        .join(games, games.c.id == rg.c.game_id)
        .where(rg.c.pool == pool(variant), rg.c.player == player, rg.c.bot == bot)
        .order_by(rg.c.finished_at.desc(), rg.c.game_id.desc())
        .limit(limit)
    )
    async with engine.connect() as conn:
        rows = [dict(r._mapping) for r in await conn.execute(q)]
    return [
        {
            "game_id": m["game_id"],
            "variant": m["variant"],
            "protocol": m["protocol"],
            "finished": _when(m["finished_at"]),
            "seats": m["seats"],
            "rank": int(m["rank"]),
            "total": int(m["total"]),
            "mu": float(m["mu"]),
            "sigma": float(m["sigma"]),
            "change": float(m["change"]),
            "players": [_who(p, str(m["protocol"] or "")) for p in m["players"] or []],
            "totals": m["totals"],
        }
        for m in rows
    ]


async def rated_people(engine: AsyncEngine) -> set[str]:
    """Every person (not a moonshot bot) with a rating, by name as rated (the HTTP side compares
    them by its name key)."""
    q = select(ratings.c.player).where(ratings.c.bot.is_(False)).distinct()
    async with engine.connect() as conn:
        return {str(r[0]) for r in await conn.execute(q)}


async def rated_in(engine: AsyncEngine, game_id: str) -> list[str]:
    """The people (not moonshot bots) a finished game was rated for; [] when it was not rated."""
    q = select(rating_games.c.player).where(rating_games.c.game_id == game_id, rating_games.c.bot.is_(False))
    async with engine.connect() as conn:
        return [str(r[0]) for r in await conn.execute(q)]


__all__ = [
    "leaderboard",
    "player_games",
    "rate_stored_game",
    "rated_in",
    "rated_people",
    "rating_games",
    "ratings",
    "rebuild",
    "seats_of",
]
