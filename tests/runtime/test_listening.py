"""The listening socket every uvicorn listener serves: bound where asked, non-blocking, any free port for 0, the port
shared with SO_REUSEPORT when asked, and a failed bind closed and raised."""

from __future__ import annotations

import socket

import pytest

from moonshot.runtime.listening import listening_socket


def test_a_socket_is_bound_non_blocking_on_any_free_port() -> None:
    sock = listening_socket("127.0.0.1", 0)
    try:
        host, port = sock.getsockname()
        assert host == "127.0.0.1" and port > 0 and not sock.getblocking()
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT) == 0
    finally:
        sock.close()


def test_workers_share_a_port_with_reuse_port_and_nobody_else_binds_it() -> None:
    first = listening_socket("127.0.0.1", 0, reuse_port=True)
    try:
        port = first.getsockname()[1]
        first.listen()
        second = listening_socket("127.0.0.1", port, reuse_port=True)
        second.close()
        with pytest.raises(OSError):
            listening_socket("127.0.0.1", port)  # a socket without SO_REUSEPORT may not join
    finally:
        first.close()


def test_an_ipv6_host_gets_an_ipv6_socket() -> None:
    if not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    try:
        sock = listening_socket("::1", 0)
    except OSError as e:
        pytest.skip(f"::1 cannot be bound here: {e}")
    try:
        assert sock.family == socket.AF_INET6
    finally:
        sock.close()


def test_what_the_first_request_would_load_is_loaded_before_listening() -> None:
    """anyio's asyncio backend (Starlette's tasks run on it) is imported by the time uvicorn
    listens, not by the first request on the loop. A fresh interpreter: nothing else loaded it."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(
        """
        import asyncio, sys
        import uvicorn
        from moonshot.runtime.listening import EmbeddedUvicorn, listening_socket

        async def app(scope, receive, send):
            pass

        async def main():
            assert "anyio._backends._asyncio" not in sys.modules
            server = EmbeddedUvicorn(uvicorn.Config(app, lifespan="off", log_level="error"))
            task = asyncio.get_running_loop().create_task(server.serve(sockets=[listening_socket("127.0.0.1", 0)]))
            while not server.started:
                assert not task.done()
                await asyncio.sleep(0.01)
            print("anyio._backends._asyncio" in sys.modules)
            server.should_exit = True
            await task

        asyncio.run(main())
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"
