"""The whole HTTP side as one Starlette app (:func:`build_app`): lobby, games, ``/api`` (reviews and
hints with it), tournaments, the leaderboard, the web app's pages and ``/static``, behind the origin guard.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from moonshot.http.api import api_routes
from moonshot.http.endpoints import endpoint, error, read_body
from moonshot.http.games import game_routes
from moonshot.http.lobby import TurboLobby, lobby_routes
from moonshot.http.origin import OriginGuard
from moonshot.http.rematch import rematch_routes
from moonshot.http.review import review_routes
from moonshot.http.webapp import STATIC_DIR

DEFAULT_HTTP_PORT = 7380


# ---------------------------------------------------------------- tournaments
def tournament_routes(lobby: TurboLobby) -> list[BaseRoute]:
    """``/api/tournaments``: create (POST), list, status, results (JSON, ``?format=csv``) and the
    running standings as a PNG; the server's TournamentHost does the work."""
    from moonshot.http.tournaments import routes

    return routes(lobby, endpoint, read_body)


def default_static_dir() -> Path:
    return STATIC_DIR


def page_routes(static_dir: Path) -> list[BaseRoute]:
    def page(filename: str) -> Callable[[Request], Awaitable[Response]]:
        async def serve(request: Request) -> Response:
            path = static_dir / filename
            if not path.is_file():
                return error(404, f"the web app is not installed ({filename} is missing)")
            return FileResponse(path, headers={"Cache-Control": "no-cache"})

        return serve

    async def root(request: Request) -> Response:
        return RedirectResponse("/lobby", status_code=307)

    routes: list[BaseRoute] = [
        Route("/", root, methods=["GET"]),
        Route("/lobby", page("lobby.html"), methods=["GET"]),
        Route("/game", page("game.html"), methods=["GET"]),
        Route("/history", page("history.html"), methods=["GET"]),
        Route("/tournaments", page("tournaments.html"), methods=["GET"]),
    ]
    routes.append(Mount("/static", app=StaticFiles(directory=static_dir, check_dir=False), name="static"))
    return routes


def build_app(lobby: TurboLobby, static_dir: Path | None = None) -> Starlette:
    """The whole HTTP side: lobby, games, /api extensions, the web app's pages and files."""
    from moonshot.http.leaderboard import leaderboard_routes

    routes = [
        *lobby_routes(lobby),
        *rematch_routes(lobby),
        *game_routes(lobby),
        *review_routes(lobby),
        *api_routes(lobby),
        *tournament_routes(lobby),
        *leaderboard_routes(lobby, static_dir or default_static_dir()),
        *page_routes(static_dir or default_static_dir()),
    ]

    async def not_found(request: Request, exc: Exception) -> Response:
        return error(404, f"no such endpoint: {request.method} {request.url.path}")

    async def bad_method(request: Request, exc: Exception) -> Response:
        return error(405, f"{request.method} is not allowed on {request.url.path}")

    guard = Middleware(OriginGuard, allowed=lobby.options.allowed_origins)
    return Starlette(routes=routes, exception_handlers={404: not_found, 405: bad_method}, middleware=[guard])


__all__ = ["DEFAULT_HTTP_PORT", "build_app", "default_static_dir", "page_routes", "tournament_routes"]
