"""The operator surface of ``moonshot serve``: liveness, readiness, metrics and admin routes.

Two things live here, both owned by the composition root (:class:`~moonshot.server.app.ServerApp`):

* :class:`Readiness` answers ``/healthz`` (the process is alive and its loop answers) and
  ``/readyz`` (it should be sent players: the game store can be written, Redis answers when the
  server is in a cluster, and it is not draining). The probes' outcome is kept for
  :data:`READY_TTL` seconds and one probe runs at a time, so a flood of ``/readyz`` costs the
  store nothing more. Both answer small JSON that names a failing check and nothing else: no
  name, id, address, path or secret. :class:`Probes` serves them on the public HTTP port too
  (an ASGI wrapper: load balancers ask there).
* :class:`OperatorSurface`: a small Starlette app on its own address (``--operator-address``,
  loopback by default; never the public port unless the operator points it there), served by
  its own uvicorn server in the server's loop: ``/metrics`` (Prometheus's text format, from the
  server's own registry, :mod:`moonshot.server.metrics`), ``/healthz`` and ``/readyz``.

Admin actions (``moonshot.server.admin``) plug in through :attr:`OperatorSurface.routes`: append
Starlette routes before :meth:`OperatorSurface.start`. Each such route must check the caller
with :meth:`OperatorSurface.authorized` (``Authorization: Bearer <token>``, compared in
constant time against :attr:`OperatorSurface.token`; no token set: every admin request is
refused), since the operator address may be reachable by more than the operator.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import uvicorn
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from moonshot.runtime.listening import EmbeddedUvicorn, listening_socket

log = logging.getLogger("moonshot.operator")

DEFAULT_OPERATOR_ADDRESS = "127.0.0.1:9380"
READY_TTL = 1.5  # seconds a readiness probe's outcome is kept
PROBE_TIMEOUT = 2.0  # seconds a check may take before it counts as failed

Check = Callable[[], Awaitable[bool]]


def parse_operator_address(text: str) -> tuple[str, int] | None:
    """``HOST:PORT`` (``[::1]:9380`` for IPv6), or ``none``/``off`` for no operator surface.
    ``ValueError`` says what is wrong."""
    value = text.strip()
    if value.lower() in ("none", "off", ""):
        return None
    host, sep, port = value.rpartition(":")
    if not sep or not host:
        raise ValueError(f"operator address {text!r}: expected HOST:PORT (e.g. {DEFAULT_OPERATOR_ADDRESS}) or none")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        number = int(port)
    except ValueError:
        raise ValueError(f"operator address {text!r}: the port {port!r} is not a number") from None
    if not 0 <= number <= 65535:
        raise ValueError(f"operator address {text!r}: the port must be 0-65535")
    return host, number


@dataclass(frozen=True, slots=True)
class ReadyState:
    ready: bool
    failing: str | None = None  # the first check that failed ("store", "redis", "draining")

    def body(self) -> dict[str, Any]:
        if self.ready:
            return {"status": "ready"}
        return {"status": "not ready", "failing": self.failing}


class Readiness:
    """Whether the server should be sent players: every named check passes and it is not
    draining. ``checks`` are async callables, each run with a timeout; an exception or a timeout
    counts as a failure. The outcome is cached for ``ttl`` seconds (draining is read every time)."""

    def __init__(
        self,
        checks: Sequence[tuple[str, Check]] = (),
        draining: Callable[[], bool] = lambda: False,
        ttl: float = READY_TTL,
        timeout: float = PROBE_TIMEOUT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.checks = list(checks)
        self.draining = draining
        self.ttl = ttl
        self.timeout = timeout
        self.clock = clock
        self.probes = 0  # probe rounds run (each runs every check once)
        self._cached: ReadyState | None = None
        self._at = 0.0
        self._running: asyncio.Future[ReadyState] | None = None

    async def state(self) -> ReadyState:
        if self.draining():
            return ReadyState(False, "draining")
        if self._cached is not None and self.clock() - self._at < self.ttl:
            return self._cached
        if self._running is None or self._running.done():  # (one left done by waiters that went away)
            self._running = asyncio.ensure_future(self._probe())
        running = self._running
        try:
            return await asyncio.shield(running)
        finally:
            if running.done() and self._running is running:
                self._running = None

    async def _probe(self) -> ReadyState:
        self.probes += 1
        outcome = ReadyState(True)
        for name, check in self.checks:
            try:
                ok = await asyncio.wait_for(check(), self.timeout)
            except Exception as e:  # a check that raises or times out has failed
                log.warning("event=not_ready check=%s error=%s", name, type(e).__name__)
                ok = False
            if not ok:
                outcome = ReadyState(False, name)
                break
        self._cached, self._at = outcome, self.clock()
        return outcome


PROBE_KEY = "operator:probe"  # the store's write probe deletes this (absent) key: a write, no row kept


def server_readiness(server: Any) -> Readiness:
    """The readiness of a ``ServerApp`` (read when probed: ``store``, ``recorder``, ``cluster``,
    ``draining``): the store's writer is not in an outage and a write transaction commits; Redis
    answers a ping when the server is in a cluster; the server is not draining."""

    async def store() -> bool:
        if server.store is None:
            return True  # nothing is stored: nothing to wait for
        recorder = server.recorder
        if recorder is not None and not recorder.available:
            return False
        await server.store.delete_value(PROBE_KEY)
        return True

    async def redis() -> bool:
        cluster = server.cluster
        if cluster is None:
            return True
        client = cluster.redis
        return client is not None and bool(await client.ping())

    return Readiness([("store", store), ("redis", redis)], draining=lambda: bool(getattr(server, "draining", False)))


async def healthz(_: Request) -> Response:
    return JSONResponse({"status": "alive"}, headers={"Cache-Control": "no-store"})


def readyz_endpoint(readiness: Readiness) -> Callable[[Request], Awaitable[Response]]:
    async def readyz(_: Request) -> Response:
        state = await readiness.state()
        status = 200 if state.ready else 503
        return JSONResponse(state.body(), status_code=status, headers={"Cache-Control": "no-store"})

    return readyz


class Probes:
    """ASGI wrapper for the public HTTP port: answers ``GET /healthz`` and ``GET /readyz``
    before anything else (no client share, no origin check: they read nothing private and
    are cached), hands every other request to ``app``."""

    PATHS = ("/healthz", "/readyz")

    def __init__(self, app: Any, readiness: Readiness) -> None:
        self.app = app
        self._routes = {"/healthz": healthz, "/readyz": readyz_endpoint(readiness)}

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] in self._routes and scope["method"] in ("GET", "HEAD"):
            response = await self._routes[scope["path"]](Request(scope, receive))
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


class OperatorSurface:
    """The operator's own HTTP app: ``/metrics``, ``/healthz``, ``/readyz`` and the admin routes.

    ``routes`` is the extension point: admin routes (``moonshot.server.admin``) are appended
    before :meth:`start`, and each calls :meth:`authorized` first. ``token``: the operator
    token admin routes ask for (None: none is accepted)."""

    def __init__(self, registry: CollectorRegistry, readiness: Readiness, token: str | None = None) -> None:
        self.registry = registry
        self.readiness = readiness
        self.token = token
        self.routes: list[BaseRoute] = []
        self.port: int | None = None
        self.host: str | None = None
        self._server: EmbeddedUvicorn | None = None
        self._task: asyncio.Task[None] | None = None

    def authorized(self, request: Request) -> bool:
        """The request carries ``Authorization: Bearer <the operator token>``."""
        if not self.token:
            return False
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not given:
            return False
        return secrets.compare_digest(given.strip().encode(), self.token.encode())

    async def metrics(self, _: Request) -> Response:
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)

    def app(self) -> Starlette:
        base: list[BaseRoute] = [
            Route("/metrics", self.metrics, methods=["GET"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz_endpoint(self.readiness), methods=["GET"]),
        ]
        return Starlette(routes=base + list(self.routes))

    async def start(self, host: str, port: int) -> int:
        """Listen on ``host:port`` (port 0: any free one); returns the port."""
        sock = listening_socket(host, port)
        config = uvicorn.Config(
            self.app(), loop="none", lifespan="off", log_config=None, access_log=False, timeout_graceful_shutdown=1
        )
        self._server = EmbeddedUvicorn(config)
        self._task = asyncio.get_running_loop().create_task(self._server.serve(sockets=[sock]), name="operator")
        while not self._server.started:
            if self._task.done():
                self._task.result()  # raises what stopped it
                raise OSError("the operator server stopped while starting")
            await asyncio.sleep(0.01)
        self.host, self.port = host, sock.getsockname()[1]
        log.info("event=listening protocol=operator host=%s port=%d", host, self.port)
        return self.port

    async def stop(self) -> None:
        if self._server is None or self._task is None:
            return
        self._server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(self._task), 3)
        except (TimeoutError, Exception):
            self._server.force_exit = True
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._task, 2)
        self._server = self._task = None


__all__ = [
    "DEFAULT_OPERATOR_ADDRESS",
    "OperatorSurface",
    "Probes",
    "Readiness",
    "ReadyState",
    "healthz",
    "parse_operator_address",
    "readyz_endpoint",
    "server_readiness",
]
