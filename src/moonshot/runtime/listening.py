"""What every listener that serves through uvicorn shares: uvicorn run inside moonshot's own event
loop (:class:`EmbeddedUvicorn`, which leaves SIGINT/SIGTERM to the server, and loads what the
first request would otherwise load on the loop) and the listening socket it serves
(:func:`listening_socket`). Used by the public HTTP port, the operator surface and the Trend
protocol's ASGI listener; it knows nothing of what any of them serves."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator

import anyio
import uvicorn


class EmbeddedUvicorn(uvicorn.Server):
    """uvicorn inside moonshot's own loop: the server app owns SIGINT/SIGTERM, not uvicorn."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        # anyio imports its asyncio backend at its first use (Starlette's and sse-starlette's
        # tasks run on it): done in the first request, that is a 10-20 ms stall of the whole
        # loop, charged to every table's players at that moment; done here, before listening
        await anyio.sleep(0)
        await super().startup(sockets=sockets)


def listening_socket(host: str, port: int, reuse_port: bool = False) -> socket.socket:
    """A non-blocking TCP socket bound to ``host:port`` (port 0: any free one; an IPv6 host when
    it has a colon), ready for uvicorn to listen on; ``reuse_port`` for workers sharing a port.
    A bind that fails closes the socket and raises its ``OSError``."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


__all__ = ["EmbeddedUvicorn", "listening_socket"]
