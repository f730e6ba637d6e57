"""The leaderboard over HTTP: ``GET /leaderboard`` (JSON, ``?variant=`` ``&limit=``; a browser
asking for HTML gets the web app's leaderboard page at the same address) and
``GET /leaderboard/games?variant=&player=&bot=`` (a player's rated games, each a replay id for
``/history#ID``). Read-only and anonymous: ratings are public, like the game history."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Route

from moonshot.protocols.turbo.codec import RequestError

MAX_LIMIT = 500
_TRUE = {"1", "true", "yes"}
_FALSE = {"", "0", "false", "no"}


def wants_page(request: Request) -> bool:
    """A browser navigating here (HTML before JSON in its Accept header, no ``format=json``)."""
    if request.query_params.get("format") == "json":
        return False
    accept = request.headers.get("accept", "")
    html, js = accept.find("text/html"), accept.find("application/json")
    return html >= 0 and (js < 0 or html < js)


def _text(request: Request, key: str, top: int, required: bool = False) -> str | None:
    value = request.query_params.get(key)
    if value is None or value == "":
        if required:
            raise RequestError(400, f"{key} is required")
        return None
    if len(value) > top:
        raise RequestError(400, f"{key} is too long (at most {top} characters)")
    return value


def _limit(request: Request, default: int) -> int:
    text = request.query_params.get("limit")
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        raise RequestError(400, "limit must be an integer") from None
    if not 1 <= value <= MAX_LIMIT:
        raise RequestError(400, f"limit must be 1..{MAX_LIMIT}")
    return value


def leaderboard_routes(lobby: Any, static_dir: Path) -> list[BaseRoute]:
    """Routes over ``lobby.store`` (None: the server keeps no games, so nobody is rated)."""
    from moonshot.http.endpoints import endpoint
    from moonshot.http.identity import Identity

    def identity() -> Identity:
        return lobby.identity  # type: ignore[no-any-return]

    async def board(request: Request, caller: Any) -> Any:
        if wants_page(request):
            page = static_dir / "leaderboard.html"
            if not page.is_file():
                raise RequestError(404, "the web app is not installed (leaderboard.html is missing)")
            return FileResponse(page, headers={"Cache-Control": "no-cache", "Vary": "Accept"})
        variant = _text(request, "variant", 64)
        limit = _limit(request, 50)
        boards = {} if lobby.store is None else await lobby.store.leaderboard(variant, limit)
        return {"variant": variant, "leaderboards": boards}

    async def games(request: Request, caller: Any) -> Any:
        variant = _text(request, "variant", 64, required=True)
        player = _text(request, "player", 200, required=True)
        flag = request.query_params.get("bot", "").lower()
        if flag not in _TRUE | _FALSE:
            raise RequestError(400, "bot must be 1 or 0")
        bot = flag in _TRUE
        limit = _limit(request, 50)
        found = [] if lobby.store is None else await lobby.store.player_games(variant, player, bot, limit)
        return {"variant": variant, "player": player, "bot": bot, "games": found}

    def vary(handler: Any) -> Any:
        async def run(request: Request) -> Response:
            response: Response = await handler(request)
            response.headers["Vary"] = "Accept"  # one address, HTML or JSON: caches must keep both
            return response

        return run

    return [
        Route("/leaderboard", vary(endpoint(board, identity, anonymous=True)), methods=["GET"]),
        Route("/leaderboard/games", endpoint(games, identity, anonymous=True), methods=["GET"]),
    ]


__all__ = ["leaderboard_routes", "wants_page"]
