"""The web app: the lobby, table and history pages people play moonshot with in a browser.

The package holds only static files under ``static/``: plain HTML, CSS and JavaScript ES modules,
with no build step and nothing loaded from outside the package. The HTTP service
(:mod:`moonshot.http`) serves them: ``/lobby``, ``/game`` and ``/history`` are the pages
and ``/static/...`` the files. The pages speak only Turbo Hearts' HTTP + SSE API and its moonshot
extensions (``/api/...``), described in ``docs/turbo.md``; ``docs/web.md`` describes the pages.
"""

from __future__ import annotations

from pathlib import Path

STATIC_DIR = Path(__file__).parent / "static"
"""The directory the HTTP service mounts at ``/static``; the pages are ``STATIC_DIR / "lobby.html"``..."""

PAGES = {"lobby": "lobby.html", "game": "game.html", "history": "history.html"}
"""Each page's path under ``/`` and its file in :data:`STATIC_DIR`."""
