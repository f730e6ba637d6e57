"""The HTTP listeners' socket: bound where asked, non-blocking, any free port for 0, the port
shared with SO_REUSEPORT when asked, and a failed bind closed and raised."""

from __future__ import annotations

import socket

import pytest

from moonshot.server.listeners import listening_socket


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
