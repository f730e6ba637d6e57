"""Finished games as their public records, for ``moonshot store export`` (JSON lines).

A public record is what ``GET /api/games/<id>`` shows of a finished game and what
``moonshot verify --record`` checks: the game's players as the public may see them (never a
chair's credential), its result, the deal seal revealed at its end (seed, salt, commitment) and
its actions. The web route adds the Turbo event log on top (a protocol's translation, which the
store does not know). A tournament game whose deal set is still being played elsewhere
(``meta.reveal_at_end`` false) is the caller's to hold back: :func:`tournament_of` names its
tournament.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

from sqlalchemy import select

from moonshot.core.actions import action_to_dict
from moonshot.core.fairness import DealSeal
from moonshot.store import GameRecord, Store, games

# what a record shows of a stored player (the store also keeps a chair's credential: never shown)
PUBLIC_PLAYER_FIELDS = ("name", "kind", "protocol", "bot")
PAGE = 200  # game ids read per query


def stored_seal(rec: Any) -> DealSeal | None:
    """The deal seal of a stored game (None: stored before games were sealed)."""
    salt = rec.meta.get("deal_salt") if isinstance(rec.meta, dict) else None
    if not isinstance(salt, str):
        return None
    deals = rec.deals()
    return DealSeal(rec.id, rec.seed, salt, tuple(deals) if deals is not None else None)


def _when(value: Any) -> str | None:
    if value is None:
        return None
    return str(value.isoformat()) if hasattr(value, "isoformat") else str(value)


def public_record(rec: GameRecord) -> dict[str, Any]:
    """The public record of a stored game; ``deal_seal`` (seed and salt) only once it is finished."""
    meta = rec.meta if isinstance(rec.meta, dict) else {}
    out: dict[str, Any] = {
        "id": rec.id,
        "variant": rec.variant,
        "protocol": rec.protocol,
        "players": [{k: p[k] for k in PUBLIC_PLAYER_FIELDS if k in p} for p in rec.players],
        "status": rec.status,
        "created": _when(rec.created_at),
        "finished": _when(rec.finished_at),
        "totals": rec.totals,
        "winners": rec.winners,
        "commitment": meta.get("deal_commitment"),
        "rated": not meta.get("unrated"),
    }
    seal = stored_seal(rec)
    if seal is not None and rec.status == "finished":
        out["deal_seal"] = {**seal.revealed(), "commitment": out["commitment"], "seed": str(seal.seed)}
    if isinstance(meta.get("fixed_deals"), list):  # the fixed deals it played, as the store keeps them
        out["fixed_deals"] = meta["fixed_deals"]
    elif isinstance(meta.get("deals"), str):  # older records: a Kierki game file's text
        out["deals"] = meta["deals"]
    out["actions"] = [action_to_dict(a) for a in rec.actions]
    return out


def tournament_of(rec: GameRecord) -> str | None:
    """The tournament a game's deals stay sealed for until it is over (None: none)."""
    meta = rec.meta if isinstance(rec.meta, dict) else {}
    tid = meta.get("tournament")
    if meta.get("reveal_at_end") is False and isinstance(tid, str):
        return tid
    return None


async def finished_games(store: Store, since: datetime | None = None) -> AsyncIterator[GameRecord]:
    """Every finished game (finished at or after ``since``), in finish order, read a page at a
    time so a large store is never held in memory."""
    last: tuple[datetime, str] | None = None
    while True:
        q = select(games.c.id, games.c.finished_at).where(games.c.status == "finished")
        if since is not None:
            q = q.where(games.c.finished_at >= since)
        if last is not None:
            at, gid = last
            q = q.where((games.c.finished_at > at) | ((games.c.finished_at == at) & (games.c.id > gid)))
        q = q.order_by(games.c.finished_at, games.c.id).limit(PAGE)
        async with store.engine.connect() as conn:
            rows = [(r[0], r[1]) for r in await conn.execute(q)]
        for gid, at in rows:
            rec = await store.load(gid)
            if rec is not None:
                yield rec
            last = (at, gid)
        if len(rows) < PAGE:
            return


__all__ = ["PUBLIC_PLAYER_FIELDS", "finished_games", "public_record", "stored_seal", "tournament_of"]
