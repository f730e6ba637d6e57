"""The tournament endpoints of the HTTP server (``/api/tournaments``), over the server's
:class:`~moonshot.runtime.tournament.TournamentHost`.

* ``POST /api/tournaments`` ``{variant, sets, deals_per_set, seed, bots: ["search --think-ms 200",
  ...], externals: ["alice", ...], filler}`` -> ``201 {id, games_total, tokens: {name: token}}``:
  each external entrant's token, shown once (the server keeps only its SHA-256). The seed is
  drawn with :mod:`secrets` unless given, and may be given only when no external entrant plays;
  nobody sees it before the tournament is over;
* ``POST /api/tournaments/play`` ``{token}``: an external entrant over HTTP asks for its next game;
  the answer comes when the game starts (``{game, seat, url}``: play it through the game routes or
  the web app's ``/game#<id>``) or after ``wait`` seconds (``202 {waiting: true}``: ask again);
* ``GET /api/tournaments``: every tournament, newest first (id, status, variant, progress);
* ``GET /api/tournaments/{id}``: progress and standings; ``.../results``: standings, every game and
  the running standings (``?format=csv``: the standings as CSV); ``.../standings.png``: the plot.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from moonshot.play.tournament import TournamentError, make_spec, standings_csv
from moonshot.protocols.turbo.codec import RequestError

MAX_LIST = 40  # entrants given in one request


def _strings(body: dict[str, Any], key: str) -> list[str]:
    value = body.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and len(v) <= 200 for v in value):
        raise RequestError(400, f"{key} must be a list of strings", "bad_field", {"field": key})
    if len(value) > MAX_LIST:
        raise RequestError(400, f"at most {MAX_LIST} {key}", "too_many_entries", {"field": key, "max": MAX_LIST})
    return value


def _int(body: dict[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = body.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise RequestError(
            400, f"{key} must be an integer {low}..{high}", "bad_range", {"field": key, "low": low, "high": high}
        )
    return int(value)


def routes(
    lobby: Any, endpoint: Callable[..., Any], read_body: Callable[[Request], Awaitable[dict[str, Any]]]
) -> list[BaseRoute]:
    from moonshot.runtime.tournament import KEY_PREFIX, LimitError, full_results, summary

    def identity() -> Any:
        return lobby.identity

    def host() -> Any:
        if lobby.tournaments is None:
            raise RequestError(503, "this server runs no tournaments", "no_tournaments")
        return lobby.tournaments

    async def state_of(tid: str) -> dict[str, Any]:
        st: dict[str, Any] | None = host().state(tid)
        if st is None and lobby.store is not None and len(tid) <= 100:
            value = await lobby.store.get_value(KEY_PREFIX + tid)
            st = value if isinstance(value, dict) else None
        if st is None:
            raise RequestError(404, f"no tournament {tid!r}", "no_tournament", {"id": tid})
        return st

    def check_address_share() -> str:
        """The caller's address; 429 when it already runs its share of tournaments."""
        from moonshot.http.limits import client_address

        addr = client_address.get()
        guard = getattr(lobby, "guard", None)
        if guard is None or not addr:
            return addr
        cap = guard.limits.tournaments_per_address
        running = [t for t in host().tournaments.values() if t.status == "running"]
        if sum(getattr(t, "address", None) == addr for t in running) >= cap:
            guard.refused += 1
            raise RequestError(
                429,
                f"too many unfinished tournaments created from this address (at most {cap})",
                "too_many_tournaments",
                {"max": cap},
            )
        return addr

    async def create(request: Request, caller: Any) -> Any:
        body = await read_body(request)
        addr = check_address_share()
        variant = body.get("variant", "standard")
        if not isinstance(variant, str) or len(variant) > 40:
            raise RequestError(400, "variant must be a variant name", "bad_field", {"field": "variant"})
        bots = _strings(body, "bots")
        externals = _strings(body, "externals")
        filler = body.get("filler", "heuristic")
        if not isinstance(filler, str) or len(filler) > 40:
            raise RequestError(400, "filler must be a bot name", "bad_field", {"field": "filler"})
        # a seed named by the creator lets the creator know every hand: allowed only where no
        # external entrant plays (the house's bots alone, reproducible research); else secret
        if body.get("seed") is not None and externals:
            raise RequestError(
                400, "a tournament with external entrants gets a secret seed: give no seed", "seed_with_externals"
            )
        seed = _int(body, "seed", 0, 0, 2**62) if body.get("seed") is not None else secrets.randbits(62)
        try:
            spec = make_spec(
                variant,
                _int(body, "sets", 4, 1, 1000),
                bots,
                externals,
                seed=seed,
                deals_per_set=_int(body, "deals_per_set", 0, 0, 52),
                filler=filler,
                tokens=["-"] * len(externals),  # placeholders: the host makes the real tokens
            )
            t, tokens = host().create(spec, creator=caller.name)
            t.address = addr  # for the address's share (not stored: a restart forgets it)
        except LimitError as e:
            raise RequestError(429, str(e)) from None
        except (TournamentError, ValueError, KeyError) as e:
            reason = str(e).strip("'\"")
            raise RequestError(400, reason, "tournament_refused", {"reason": reason}) from None
        if host().published is not None:  # a cluster: the other processes can find the tokens now
            await host().published()
        out = {"id": t.id, "games_total": len(t.games), "tokens": tokens, "by": caller.name}
        return JSONResponse(out, status_code=201)

    async def play(request: Request, caller: Any) -> Any:
        from moonshot.protocols.turbo.seat import TurboSeat
        from moonshot.runtime.lobby import Candidate, GameType, LobbyError
        from moonshot.runtime.table import Table

        body = await read_body(request)
        token = body.get("token")
        if not isinstance(token, str) or not 1 <= len(token) <= 200:
            raise RequestError(400, "token must be the entrant's token", "bad_field", {"field": "token"})
        wait = _int(body, "wait", 25, 0, 120)
        loop = asyncio.get_running_loop()
        seated: asyncio.Future[tuple[str, int]] = loop.create_future()
        seat = TurboSeat(caller.name)
        seat.patient = False  # a tournament's deadlines hold for a person too (then: a random card)

        def matched(table: Table, chair: int) -> None:
            lobby.show_table(table, {chair})
            if not seated.done():
                seated.set_result((table.id, chair))

        c = Candidate(seat, GameType.ANY, None, matched, protocol="http", token=token)
        try:
            claimed = host().claim(c)
        except LobbyError as e:
            raise RequestError(409, str(e)) from None
        if not claimed:
            raise RequestError(403, "no tournament entrant has that token", "unknown_token")
        try:
            game_id, chair = await asyncio.wait_for(asyncio.shield(seated), wait)
        except TimeoutError:
            if host().release(c):
                return JSONResponse({"waiting": True}, status_code=202)
            game_id, chair = await seated  # taken for a game just now
        return {"game": game_id, "seat": chair, "url": f"/game#{game_id}"}

    async def listing(request: Request, caller: Any) -> Any:
        items = {t.id: t.state() for t in host().tournaments.values()}
        if lobby.store is not None:
            for key, value in (await lobby.store.values(KEY_PREFIX)).items():
                if isinstance(value, dict):
                    items.setdefault(key.removeprefix(KEY_PREFIX), value)
        rows = []
        for st in items.values():
            spec = st.get("spec", {})
            rows.append(
                {
                    "id": st["id"],
                    "status": st["status"],
                    "variant": spec.get("variant"),
                    "sets": spec.get("sets"),
                    "entrants": [e.get("name") for e in spec.get("entrants", [])],
                    "games_played": len(st.get("results", [])),
                    "games_total": st.get("games_total"),
                    "created_at": st.get("created_at"),
                }
            )
        rows.sort(key=lambda r: r.get("created_at") or 0, reverse=True)
        return rows

    async def status(request: Request, caller: Any) -> Any:
        return summary(await state_of(request.path_params["tid"]))

    async def results(request: Request, caller: Any) -> Any:
        data = full_results(await state_of(request.path_params["tid"]))
        if request.query_params.get("format") == "csv":
            return Response(
                standings_csv(data["standings"]),
                media_type="text/csv",
                headers={"Content-Disposition": f'attachment; filename="{data["id"]}.csv"'},
            )
        return data

    async def plot(request: Request, caller: Any) -> Any:
        data = full_results(await state_of(request.path_params["tid"]))
        try:
            from moonshot.play.tournament import standings_png

            png = await asyncio.get_running_loop().run_in_executor(None, standings_png, data)
        except Exception as e:  # matplotlib missing (the plot extra) or a plotting failure
            raise RequestError(501, f"no plot: {getattr(e, 'message', e)}") from None
        return Response(png, media_type="image/png", headers={"Cache-Control": "max-age=30"})

    return [
        Route("/api/tournaments", endpoint(create, identity), methods=["POST"]),
        Route("/api/tournaments", endpoint(listing, identity, anonymous=True), methods=["GET"]),
        Route("/api/tournaments/play", endpoint(play, identity), methods=["POST"]),
        Route("/api/tournaments/{tid}", endpoint(status, identity, anonymous=True), methods=["GET"]),
        Route("/api/tournaments/{tid}/results", endpoint(results, identity, anonymous=True), methods=["GET"]),
        Route("/api/tournaments/{tid}/standings.png", endpoint(plot, identity, anonymous=True), methods=["GET"]),
    ]


__all__ = ["routes"]
