"""Sessions seats under the table's clock (``serve --move-timeout``, ``--max-timeouts``): a client
that stops answering is played for when its time runs out (Sessions' rule: a random legal card,
``server_moves``), the others never wait much longer than the clock for it, two timeouts in a row
hand its chair to the server's bot, and the client's next action (``resume_session`` with its
secret: Sessions' "I'm back") takes the chair back. Waits are measured, never slept."""

from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from e2e.conftest import sessions_server
from moonshot.protocols.sessions.client import Client, RandomPlayer, View
from moonshot.server.app import ServerApp

pytestmark = pytest.mark.asyncio

CLOCK = 1.0
SLACK = 6.0  # generous: the CI machine is busy


class Timed(RandomPlayer):
    """A well-behaved player that notes when it is asked."""

    def __init__(self, seed: int, asked: list[float]) -> None:
        super().__init__(random.Random(seed))
        self.asked = asked

    def play(self, view: View) -> str | None:
        self.asked.append(asyncio.get_running_loop().time())
        return super().play(view)


class Silent(RandomPlayer):
    """Passes, then never plays a card (a person who walked away from the terminal)."""

    name = "walker"

    async def play(self, view: View) -> str | None:  # type: ignore[override]
        await asyncio.Event().wait()
        return None


@pytest_asyncio.fixture
async def clocked(tmp_path: Path) -> AsyncIterator[ServerApp]:
    app = await sessions_server(tmp_path, move_timeout=CLOCK, max_timeouts=2, fill_wait=0.3)
    yield app
    await app.stop()


async def until(cond, what: str, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    end = asyncio.get_running_loop().time() + timeout
    while not cond():
        assert asyncio.get_running_loop().time() < end, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


async def test_a_silent_sessions_client_is_played_for_and_takes_its_chair_back(clocked: ServerApp) -> None:
    port = clocked.sessions_port
    assert port
    good = await Client.connect("127.0.0.1", port)
    bad = await Client.connect("127.0.0.1", port)
    again = await Client.connect("127.0.0.1", port)
    asked: list[list[float]] = [[], [], []]
    try:
        others = asyncio.gather(*(good.play(Timed(i, asked[i]), lobby_code="clock") for i in range(3)))
        silent = asyncio.create_task(bad.play(Silent(random.Random(3)), lobby_code="clock"))
        await until(lambda: any(not t.done.done() for t in clocked.tables.values()), "the table")
        table = next(t for t in clocked.tables.values() if not t.done.done())
        chair = next(i for i, n in enumerate(table.seat_names()) if n.startswith(Silent.name))
        assert sum(n.startswith(Silent.name) for n in table.seat_names()) == 1
        # two timeouts in a row: the server's bot has the chair
        await until(lambda: table.stats()[chair].timeouts >= 2, "two timeouts")
        await until(lambda: table.chairs[chair].occupant is None, "the hand-over")
        assert table.stats()[chair].forced >= 1
        # the others were never kept waiting much longer than the clock (their decisions around
        # both timeouts and after the hand-over)
        await until(lambda: all(len(a) >= 4 for a in asked) or table.done.done(), "the others' decisions")
        gaps = [b - a for times in asked for a, b in itertools.pairwise(times)]
        assert gaps and max(gaps) <= 2 * CLOCK + SLACK, max(gaps)
        # the client's next action, resuming its session with its secret, takes the chair back
        sid = next(iter(bad.sessions))
        secret = bad.session_secrets[sid]
        silent.cancel()
        resumed = asyncio.create_task(again.resume(sid, RandomPlayer(random.Random(5)), secret))
        await until(lambda: table.chairs[chair].occupant is not None or table.done.done(), "the chair taken back")
        results = await asyncio.wait_for(others, 240)
        mine = await asyncio.wait_for(resumed, 240)
        assert mine.scores == results[0].scores
    finally:
        for c in (good, bad, again):
            await c.close()
