"""The HTTP side of ``moonshot serve`` (``--http-port``): the Turbo lobby the web app and Turbo
clients play through (:func:`turbo_lobby`, with its review workers), the key that signs its
cookies (:func:`cookie_secret`), and the public HTTP port (:class:`HttpListener`: the app's
middleware stack, served by uvicorn inside the server's loop).

It is given exactly what it uses of the server: the configuration, the store, the cluster (for
one key on every process), the recorder, ``track``, the table policy of mixed games, the
``ClientGuard`` and the readiness probe. What the routes do is :mod:`moonshot.http`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
from collections.abc import Callable
from typing import Any

import uvicorn

from moonshot.bots.registry import bot_names, make_bot
from moonshot.http.app import build_app
from moonshot.http.limits import HttpGuard
from moonshot.http.lobby import LobbyOptions, TurboLobby
from moonshot.http.origin import OriginGuard
from moonshot.http.proxies import UVICORN_NO_PROXY_HEADERS, ForwardedClient
from moonshot.runtime.limits import ClientGuard
from moonshot.runtime.listening import EmbeddedUvicorn, listening_socket
from moonshot.runtime.table import Table, TablePolicy
from moonshot.server.config import ServerConfig
from moonshot.server.operator import Probes, Readiness
from moonshot.store import Store, StoreRecorder

log = logging.getLogger("moonshot.server")


async def cookie_secret(configured: str | None, store: Store | None, cluster: Any = None) -> str:
    """The key that signs session cookies: --secret, MOONSHOT_SECRET, or one kept in the
    store (made on first start) so browsers keep their names across restarts."""
    if configured:
        return configured
    env = os.environ.get("MOONSHOT_SECRET")
    if env:
        return env
    if cluster is not None:  # one key for every process, so a cookie verifies on all
        stored = await store.get_value("http:secret") if store is not None else None
        made = stored if isinstance(stored, str) and stored else secrets.token_urlsafe(32)
        shared: str = await cluster.shared_value("http:secret", made)
        if store is not None and shared != stored:
            await store.put_value("http:secret", shared)
        return shared
    if store is not None:
        stored = await store.get_value("http:secret")
        if isinstance(stored, str) and stored:
            return stored
        made = secrets.token_urlsafe(32)
        await store.put_value("http:secret", made)
        return made
    return secrets.token_urlsafe(32)  # no store: sessions last as long as this process


def turbo_lobby(
    cfg: ServerConfig,
    *,
    secret: str,
    recorder: StoreRecorder | None,
    store: Store | None,
    track: Callable[[Table], None],
    mixed_policy: TablePolicy,
    guard: ClientGuard,
) -> TurboLobby:
    """The HTTP lobby and its games (``recorder``: in a cluster, the Redis log's), with the review
    workers when ``review_workers`` asks for them (started with the first review or hint)."""
    turbo = TurboLobby(
        secret=secret,
        make_bot=make_bot,
        bot_names=bot_names(),
        recorder=recorder,
        store=store,
        options=LobbyOptions(
            open_names=cfg.open_names,
            seed=cfg.seed,
            allowed_origins=cfg.allowed_origins,
            open_spectators=cfg.open_spectators or cfg.open_names,
        ),
        track=track,
        mixed_policy=mixed_policy,
    )
    turbo.guard = guard
    if cfg.review_workers > 0:  # started with the first review or hint (moonshot.play.review_pool)
        from moonshot.play.review_pool import ReviewPool
        from moonshot.play.review_ray import review_backend

        turbo.reviews = ReviewPool(
            cfg.review_workers,
            max_jobs=cfg.limits.reviews_queued,
            per_name=cfg.limits.reviews_per_name,
            nice=cfg.review_nice,
            backend=review_backend(cfg.review_ray, nice=cfg.review_nice),
        )
    return turbo


class HttpListener:
    """The public HTTP port: the lobby's app behind the guards, served by uvicorn in this loop."""

    def __init__(self, cfg: ServerConfig, guard: ClientGuard, readiness: Readiness) -> None:
        self._cfg = cfg
        self._guard = guard
        self._readiness = readiness
        self.server: EmbeddedUvicorn | None = None
        self.task: asyncio.Task[None] | None = None

    async def start(self, lobby: TurboLobby, host: str, port: int) -> int:
        """Listen and serve ``lobby``'s app; returns the port once uvicorn has started."""
        sock = listening_socket(host, port, self._cfg.reuse_port)
        app: Any = build_app(lobby, self._cfg.static_dir)
        if lobby.peers is not None:
            app = lobby.peers.wrap(app)  # requests for games hosted by another process go there
        app = HttpGuard(app, self._guard)  # bodies, rates and streams per client
        # outermost: a cross-site request is refused before it counts against its victim's shares,
        # and before a request for a game hosted elsewhere is forwarded (it then carries no Origin)
        app = OriginGuard(app, self._cfg.allowed_origins)
        app = Probes(app, self._readiness)  # /healthz, /readyz for load balancers: no share, no origin
        # before anything reads the client: the real client and scheme behind a trusted proxy
        app = ForwardedClient(app, self._guard.proxies)
        config = uvicorn.Config(
            app,
            **UVICORN_NO_PROXY_HEADERS,
            loop="none",
            lifespan="off",
            log_config=None,
            access_log=False,
            timeout_graceful_shutdown=2,
            backlog=4096,  # every player opens two connections, many at once when games start
        )
        self.server = EmbeddedUvicorn(config)
        self.task = asyncio.get_running_loop().create_task(self.server.serve(sockets=[sock]), name="http")
        while not self.server.started:
            if self.task.done():
                self.task.result()  # raises what stopped it
                raise OSError("the HTTP server stopped while starting")
            await asyncio.sleep(0.01)
        listening: int = sock.getsockname()[1]
        log.info("event=listening protocol=http host=%s port=%d", host, listening)
        return listening

    def stop_listening(self) -> None:
        """No new connections; those open finish (or :meth:`close` ends them)."""
        if self.server is not None:
            self.server.should_exit = True

    async def close(self) -> None:
        """Wait for uvicorn to finish (its SSE streams ended by the lobby first), forced after 5 s."""
        if self.task is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(self.task), 5)
        except (TimeoutError, Exception):
            if self.server is not None:
                self.server.force_exit = True
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.task, 2)


__all__ = ["HttpListener", "cookie_secret", "turbo_lobby"]
