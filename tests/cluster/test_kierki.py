"""A cluster's Kierki tables: Kierki nodes of one cluster in one event loop, on the real Redis.

What the processes-and-clients tests (tests/e2e/test_cluster_kierki.py) cannot pin down: the
pause. While a seat is empty nobody is sent ``TRICK`` (a card already asked for is still taken),
and when a client takes the seat back, on another node, the seat whose ``TRICK`` was held back
gets it at once (not at its next timeout: the timeout here is 30 s). A second ``IAMN`` waits
for the next table. A request for a client its node no longer holds frees the seat.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from moonshot.protocols.kierki.auto import ClientState, legal_plays
from moonshot.protocols.kierki.codec import SEAT_LETTERS, Deal, Trick, format_cards, parse_message
from moonshot.server.app import ServerApp

from .test_node import node, redis_prefix  # noqa: F401 (a fixture)

async_test = pytest.mark.asyncio


class Peer:
    """A raw Kierki client over asyncio streams, following the game with ClientState."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, seat: int) -> None:
        self.reader, self.writer, self.seat = reader, writer, seat
        self.state = ClientState(seat)
        self.log: list[str] = []

    @classmethod
    async def join(cls, app: ServerApp, seat: int) -> Peer:
        reader, writer = await asyncio.open_connection("127.0.0.1", app.kierki_port)
        writer.write(f"IAM{SEAT_LETTERS[seat]}\r\n".encode())
        return cls(reader, writer, seat)

    async def read(self, timeout: float = 10.0) -> object:
        line = (await asyncio.wait_for(self.reader.readline(), timeout)).decode().rstrip("\r\n")
        if not line:
            raise EOFError("closed")
        self.log.append(line)
        msg = parse_message(line)
        self.state.on_message(msg)
        return msg

    async def silent(self, seconds: float) -> bool:
        try:
            await self.read(seconds)
        except TimeoutError:
            return True
        return False

    def play(self) -> int:
        legal = legal_plays(self.state.hand, self.state.table)
        card = (legal & -legal).bit_length() - 1
        self.writer.write(f"TRICK{self.state.prompt}{format_cards([card])}\r\n".encode())
        return card

    def close(self) -> None:
        self.writer.close()


@pytest_asyncio.fixture
async def nodes(redis_prefix: str) -> AsyncIterator[tuple[ServerApp, ServerApp]]:  # noqa: F811
    a = await node(redis_prefix, sessions_port=None, kierki_port=0, kierki_timeout=30.0)
    b = await node(redis_prefix, sessions_port=None, kierki_port=0, kierki_timeout=30.0)
    try:
        yield a, b
    finally:
        await a.stop()
        await b.stop()


@async_test
async def test_nobody_is_asked_while_a_seat_is_empty_and_the_held_trick_goes_out_on_return(
    nodes: tuple[ServerApp, ServerApp],
) -> None:
    a, b = nodes
    on = [a, b, a, b]  # N and S on a, E and W on b
    peers = [await Peer.join(on[s], s) for s in range(4)]
    for p in peers:
        assert isinstance(await p.read(), Deal)
    n, e, s, w = peers
    assert await n.read() == Trick(1, ())  # deal 1: N leads
    s.close()  # S leaves before anyone plays; the table waits for IAMS
    await asyncio.sleep(0.3)
    led = n.play()  # N was asked before the pause: its card is taken
    for p in (e, w):
        assert await p.silent(1.0)  # ... but E is not asked while S is away (nor anyone else)
    s2 = await Peer.join(b, 2)  # S comes back, on the other node
    assert await s2.read() == parse_message(s.log[0])  # its DEAL again
    assert await e.read(2.0) == Trick(1, (led,))  # the held TRICK, at once (the timeout is 30 s)
    second = e.play()
    assert await s2.read() == Trick(1, (led, second))
    assert a.cluster.formed + b.cluster.formed == 1
    for p in (n, e, w, s2):
        p.close()


@async_test
async def test_a_second_iam_for_a_taken_letter_waits_for_the_next_table(nodes: tuple[ServerApp, ServerApp]) -> None:
    a, b = nodes
    first = [await Peer.join([a, b][s % 2], s) for s in range(4)]
    for p in first:
        assert isinstance(await p.read(), Deal)
    again = await Peer.join(b, 0)  # a second N, on the other node: no BUSY, it waits
    assert await again.silent(1.0)
    assert len(b.kierki.waiting) == 1
    rest = [await Peer.join([b, a][s % 2], s) for s in (1, 2, 3)]
    for p in (again, *rest):
        assert isinstance(await p.read(), Deal)  # a second table
    assert a.cluster.formed + b.cluster.formed == 2 and not (a.kierki.waiting or b.kierki.waiting)
    for p in (*first, again, *rest):
        p.close()


@async_test
async def test_a_request_for_a_client_that_is_gone_frees_its_seat(nodes: tuple[ServerApp, ServerApp]) -> None:
    """E's node forgot E without telling the owner (as when the detach went to an owner that died
    meanwhile): E's next request finds nobody there, the owner frees the seat, and a new E, on the
    other node, takes it."""
    a, b = nodes
    peers = [await Peer.join([a, b][s % 2], s) for s in range(4)]
    for p in peers:
        assert isinstance(await p.read(), Deal)
    n, e = peers[0], peers[1]
    assert await n.read() == Trick(1, ())
    held = next(k for k, bound in b.cluster.bindings.items() if bound.seat.seat == 1)
    b.cluster.bindings.pop(held).seat.table = None  # forgotten, no detach sent
    e.close()
    led = n.play()  # E is asked next: nobody holds E's binding on b
    e2 = await Peer.join(a, 1)
    assert await e2.read() == parse_message(e.log[0])  # E's DEAL again
    assert await e2.read(5.0) == Trick(1, (led,))
    for p in (*peers, e2):
        p.close()
