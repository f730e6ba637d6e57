"""moonshot's JSON extensions for the web app under ``/api``: variants, bots and levels, stored
games and their replays, a game's seal.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from moonshot.bots.levels import LEVELS
from moonshot.core.actions import action_to_dict
from moonshot.core.cards import format_card
from moonshot.core.rules import Scoring
from moonshot.core.variants import find_variant
from moonshot.http.endpoints import endpoint, read_body
from moonshot.http.identity import Caller, Identity
from moonshot.http.lobby import GAME_VARIANTS, TurboLobby
from moonshot.http.names import (
    NameRefused,
    display_name,
)
from moonshot.http.proxies import is_secure
from moonshot.http.review import practice_game, tournament_over
from moonshot.protocols.turbo.codec import (
    Player,
    RequestError,
    field_str,
    translate_log,
)
from moonshot.store.export import PUBLIC_PLAYER_FIELDS, stored_seal

log = logging.getLogger("moonshot.turbo")


# ---------------------------------------------------------------- moonshot's JSON extensions
def variant_info() -> list[dict[str, Any]]:
    out = []
    for name in GAME_VARIANTS:
        r = find_variant(name)
        out.append(
            {
                "name": name,
                "description": r.description,
                "passing": any(d.offset for d in r.pass_cycle),
                "charging": r.charging is not None,
                "exposing": bool(r.exposable),
                "claims": r.claims,
                # each deal kind's points (the deal's `kind` indexes them; one entry: every deal),
                # what a trick's cards carry before the deal's doublings: screen-reader mode says them
                "scoring": [scoring_info(sc) for sc in r.scoring],
            }
        )
    return out


def scoring_info(sc: Scoring) -> dict[str, Any]:
    """One deal kind's points as the web app reads them: a card's points ({"QS": 13}), a trick's own
    points, and the points of winning trick number N ({"7": 1})."""
    return {
        "cards": {format_card(c): p for c, p in enumerate(sc.card_points) if p},
        "per_trick": sc.per_trick,
        "trick_number": {str(n): p for n, p in sc.trick_number_points},
    }


def _when(value: Any) -> str | None:
    if value is None:
        return None
    return str(value.isoformat()) if hasattr(value, "isoformat") else str(value)


def api_routes(lobby: TurboLobby) -> list[BaseRoute]:
    def identity() -> Identity:
        return lobby.identity

    async def me(request: Request, caller: Caller) -> Any:
        out: dict[str, Any] = {"name": caller.name}
        if caller.recovery is not None:
            out["recovery"] = caller.recovery  # the name was bound just now: its code, shown once
        return out

    async def recover(request: Request, caller: Caller) -> Any:
        """``{"name", "code"}``: move a bound name to this browser with its recovery code."""
        body = await read_body(request)
        raw = field_str(body, "name", max_len=100)
        code = field_str(body, "code", max_len=100)
        assert raw is not None and code is not None
        try:
            name = display_name(raw)
        except NameRefused as e:
            raise RequestError(400, str(e), e.code, e.params) from None
        moved = await lobby.identity.recover(name, code)
        log.info("event=name_recovered name=%s", json.dumps(moved.name))
        return Identity.finish(
            JSONResponse({"name": moved.name, "recovery": moved.recovery}), moved, is_secure(request.scope)
        )

    async def variants(request: Request, caller: Caller) -> Any:
        return variant_info()

    async def bots(request: Request, caller: Caller) -> Any:
        return lobby.bot_names

    async def levels(request: Request, caller: Caller) -> Any:
        # the levels this server can seat (their bot loads here), weakest first, with what was
        # measured of each: a picker shows a level's rating and cost (a list of names stays
        # /api/bots's shape, which Turbo's clients read)
        return [lv.to_json() for lv in LEVELS if lv.key in lobby.bot_names]

    def int_param(request: Request, key: str, default: int, top: int) -> int:
        text = request.query_params.get(key)
        if text is None:
            return default
        try:
            value = int(text)
        except ValueError as e:
            raise RequestError(400, f"{key} must be an integer", "bad_field", {"field": key}) from e
        if not 0 <= value <= top:
            raise RequestError(400, f"{key} must be 0..{top}", "bad_range", {"field": key, "low": 0, "high": top})
        return value

    def summary(r: dict[str, Any]) -> dict[str, Any]:
        meta = r.get("meta") or {}
        return {
            "id": r["id"],
            "variant": r["variant"],
            "protocol": r.get("protocol", ""),
            # what the store keeps of a player that is public (never a chair's credential)
            "players": [{k: p[k] for k in PUBLIC_PLAYER_FIELDS if k in p} for p in r["players"] or []],
            "status": r["status"],
            "created": _when(r["created_at"]),
            "finished": _when(r["finished_at"]),
            "totals": r["totals"],
            "winners": r["winners"],
            # the commitment to the deals, published from the start (moonshot.core.fairness)
            "commitment": meta.get("deal_commitment") if isinstance(meta, dict) else None,
            "rated": not (isinstance(meta, dict) and meta.get("unrated")),
            # GET /api/games/<id>/review answers (a tournament's game: once it is over, see reviewable)
            "reviewable": r["status"] == "finished",
            # a practice game still being played: its one person may ask for hints (moonshot.http.review)
            "hints": r["status"] == "running" and isinstance(meta, dict) and practice_game(meta),
        }

    async def reviewable(out: dict[str, Any], meta: Any, known: dict[str, bool]) -> dict[str, Any]:
        """``out["reviewable"]`` false for a tournament's game until the tournament is over."""
        tid = meta.get("tournament") if isinstance(meta, dict) else None
        if out["reviewable"] and tid is not None:
            if tid not in known:
                known[tid] = await tournament_over(lobby, tid)
            out["reviewable"] = known[tid]
        return out

    async def games(request: Request, caller: Caller) -> Any:
        limit = int_param(request, "limit", 50, 500)
        offset = int_param(request, "offset", 0, 10**9)
        if lobby.store is None:
            return []
        known: dict[str, bool] = {}
        return [
            await reviewable(summary(r), r.get("meta"), known)
            for r in await lobby.store.list_games(None, limit, offset)
        ]

    async def game(request: Request, caller: Caller) -> Any:
        game_id = request.path_params["game_id"]
        if lobby.store is None:
            raise RequestError(404, "no games are stored (the server runs without --db)", "no_store")
        rec = await lobby.store.load(game_id)
        if rec is None:
            raise RequestError(404, f"no stored game {game_id!r}", "no_stored_game", {"id": game_id})
        if rec.status == "running":
            raise RequestError(403, "the game is still running: watch it through /game/subscribe", "game_running")
        if rec.meta.get("reveal_at_end") is False and not await tournament_over(lobby, rec.meta.get("tournament")):
            # its deal set is still being played in other rotations: its hands would tell theirs
            raise RequestError(
                403, "a tournament's game is shown once the tournament is over", "tournament_game_hidden"
            )
        g = rec.rebuild()
        algorithms = json.loads(rec.meta.get("algorithms", "[]") or "[]")
        players = []
        for s, p in enumerate(rec.players):
            kind = "bot" if p.get("kind") == "bot" else "human"
            alg = algorithms[s] if s < len(algorithms) and algorithms[s] else None
            players.append(Player(str(p.get("name", "")), kind, alg))
        seal = stored_seal(rec)
        log_ = [seal.decorate(e) for e in g.log] if seal is not None else g.log
        msgs = translate_log(g.rules, rec.seed, players, log_, rec.deals())
        out = summary(
            {
                "id": rec.id,
                "variant": rec.variant,
                "protocol": rec.protocol,
                "players": rec.players,
                "status": rec.status,
                "created_at": rec.created_at,
                "finished_at": rec.finished_at,
                "totals": rec.totals,
                "winners": rec.winners,
                "meta": rec.meta,
            }
        )
        await reviewable(out, rec.meta, {})
        out["events"] = [m.data for m in msgs]
        # what `moonshot verify --record` checks: the revealed seed and salt, the actions
        if seal is not None and rec.status == "finished":
            out["deal_seal"] = {**seal.revealed(), "commitment": out["commitment"], "seed": str(seal.seed)}
        if rec.deals() is not None:
            out["deals"] = rec.meta.get("deals")
        out["actions"] = [action_to_dict(a) for a in rec.actions]
        return out

    return [
        Route("/api/me", endpoint(me, identity), methods=["GET"]),
        Route("/api/names/recover", endpoint(recover, identity, anonymous=True), methods=["POST"]),
        Route("/api/variants", endpoint(variants, identity, anonymous=True), methods=["GET"]),
        Route("/api/bots", endpoint(bots, identity, anonymous=True), methods=["GET"]),
        Route("/api/levels", endpoint(levels, identity, anonymous=True), methods=["GET"]),
        Route("/api/games", endpoint(games, identity, anonymous=True), methods=["GET"]),
        Route("/api/games/{game_id}", endpoint(game, identity, anonymous=True), methods=["GET"]),
    ]


__all__ = ["PUBLIC_PLAYER_FIELDS", "api_routes", "stored_seal", "variant_info"]
