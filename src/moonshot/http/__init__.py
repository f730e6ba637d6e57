"""The HTTP server and the web app: identity cookies, the lobby, SSE fan-out, the game routes,
``/api``, pages, tournaments, the leaderboard, origin and fair-share guards, and the static files.

It speaks Turbo Hearts' wire format (:mod:`moonshot.protocols.turbo`)."""
