"""Kierki inside ``moonshot serve``: the :class:`KierkiService` on loopback, with the shared lobby
and tables (no store), driven by raw sockets that follow the game with ``ClientState``.

The sockets are blocking, so each test runs the service's event loop in a background thread
(as ``tests/e2e/test_kierki.py`` runs the standalone server).
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from e2e.test_kierki import Peer, Player, play_tricks, run_until_end
from moonshot.bots.random import RandomBot
from moonshot.core.variants import KIERKI
from moonshot.protocols.kierki.codec import Busy, Deal, Taken, Trick, Wrong, parse_message
from moonshot.protocols.kierki.gamefile import random_deals
from moonshot.protocols.kierki.server import InputLimits, kierki_policy
from moonshot.protocols.kierki.service import KierkiService
from moonshot.runtime.lobby import Lobby
from moonshot.runtime.table import BotSeat, Seat, Table, TableStatus

pytestmark = pytest.mark.timeout(600)


class Harness:
    """A KierkiService and its lobby in a loop of their own; tables are kept for inspection."""

    def __init__(self, **options: Any) -> None:
        self.loop = asyncio.new_event_loop()
        self.tables: list[Table] = []
        self.abandoned: list[Table] = []
        self.deals = options.pop("deals", None)
        self.options = options
        self.service: KierkiService | None = None
        self.port = 0
        ready = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self.thread.start()
        assert ready.wait(5)

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)

        async def main() -> None:
            self.service = KierkiService(self.make_table, on_abandoned=self.abandoned.append, **self.options)
            lobby = Lobby(
                lambda seats: (_ for _ in ()).throw(AssertionError("not a kierki table")),
                lambda: BotSeat(RandomBot()),
                None,
                random.Random(0),
                starters={"kierki": self.service.start_table},
            )
            self.service.lobby = lobby
            self.port = await self.service.start("127.0.0.1", 0)
            ready.set()

        self.loop.run_until_complete(main())
        self.loop.run_forever()

    def make_table(self, seats: list[Seat | None], **kw: Any) -> Table:
        t = Table(
            KIERKI, seats, seed=len(self.tables) + 1, policy=kierki_policy(self.service.timeout), deals=self.deals, **kw
        )  # type: ignore[union-attr]
        self.tables.append(t)
        t.start()
        return t

    def call(self, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` in the service's loop and return its result."""
        fut: asyncio.Future[Any] = asyncio.run_coroutine_threadsafe(self._call(fn), self.loop)  # type: ignore[arg-type]
        return fut.result(5)

    @staticmethod
    async def _call(fn: Callable[[], Any]) -> Any:
        return fn()

    def close(self) -> None:
        async def stop() -> None:
            for t in self.tables:
                if not t.done.done():
                    t.stop("test over")
            await asyncio.gather(*(asyncio.shield(t.done) for t in self.tables), return_exceptions=True)
            assert self.service is not None
            await self.service.close()

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


@contextmanager
def service(**options: Any) -> Iterator[Harness]:
    h = Harness(**options)
    try:
        yield h
    finally:
        h.close()


def four(port: int) -> list[Player]:
    players = [Player(port, s) for s in range(4)]
    for p in players:
        assert isinstance(p.read(), Deal)
    return players


def test_four_seat_letters_make_a_table_and_a_second_n_waits_for_the_next() -> None:
    with service(timeout=5) as h:
        first = [Player(h.port, s) for s in (0, 1, 2)]
        extra_n = Player(h.port, 0)  # not BUSY: it waits for the next table
        assert extra_n.peer.silent(0.3)
        w = Player(h.port, 3)
        players = [*first, w]
        for p in players:
            assert isinstance(p.read(), Deal)
        assert extra_n.peer.silent(0.2) and len(h.tables) == 1
        others = [Player(h.port, s) for s in (1, 2, 3)]
        second = [extra_n, *others]
        for p in second:
            assert isinstance(p.read(), Deal)
        assert len(h.tables) == 2
        # both games run to their end at once; each client's connection is closed after TOTAL
        run_until_end(players + second, timeout=45)
        assert all(any(line.startswith("TOTAL") for line in p.log) for p in players + second)
        assert all(t.status is TableStatus.FINISHED for t in h.tables)
        assert [c.occupant is None for c in h.tables[0].chairs]  # closed at the end


def test_a_client_that_reconnects_gets_its_seat_back_with_deal_and_taken() -> None:
    with service(timeout=5) as h:
        players = four(h.port)
        play_tricks(players, 3)
        gone = players[2]
        gone.peer.close()
        time.sleep(0.2)
        back = Player(h.port, 2)
        assert back.read() == parse_message(gone.log[0])  # DEAL: S's cards of this deal
        taken = [line for line in players[0].log if line.startswith("TAKEN")]
        assert len(taken) >= 3
        for line in taken:
            assert isinstance(back.read(), Taken) and back.log[-1] == line
        players[2] = back
        run_until_end(players)
        assert any(line.startswith("TOTAL") for line in back.log)
        assert h.tables[0].status is TableStatus.FINISHED and len(h.tables) == 1


def test_a_restored_table_waits_for_iam_and_gives_each_seat_back() -> None:
    deals = random_deals(random.Random(5), (3, 7))
    with service(timeout=5, deals=deals) as h:
        # a game played elsewhere up to trick 4 of deal 1, then restored with every seat empty
        players = four(h.port)
        play_tricks(players, 4)
        old = h.tables[0]
        actions = h.call(lambda: list(old.game.actions))
        for p in players:
            p.peer.close()
        time.sleep(0.2)

        def restore() -> int:
            t = h.make_table([None, None, None, None], actions=actions, restored=True)
            h.service.adopt(t)  # type: ignore[union-attr]
            return len(h.service.lobby.running("kierki"))  # type: ignore[union-attr]

        h.call(lambda: old.stop("moved"))
        time.sleep(0.1)
        assert h.call(restore) == 1
        back = [Player(h.port, s) for s in (3, 1, 0, 2)]
        for p in back:
            assert p.read() == parse_message(players[p.seat].log[0])
        back.sort(key=lambda p: p.seat)
        run_until_end(back)
        restored = h.tables[-1]
        assert restored.status is TableStatus.FINISHED and restored.game.actions[: len(actions)] == actions


def test_junk_huge_lines_and_floods_get_wrong_and_the_game_goes_on() -> None:
    limits = InputLimits(lines_per_s=200, burst_lines=50)
    with service(timeout=5, limits=limits) as h:
        players = four(h.port)
        flooder = players[1]
        flooder.peer.send_raw(b"JUNK\r\n" * 300 + b"X" * 100_000 + b"\r\n" + b"\x00\x1b[2J\r\n")
        wrongs = 0
        started = time.monotonic()
        while wrongs < 302:
            msg = flooder.read(10)
            if isinstance(msg, Trick):
                flooder.state.prompt = msg.number
                flooder.play()
            wrongs += isinstance(msg, Wrong)
        # 300 lines at 200/s after a burst of 50: slowed, not dropped
        assert time.monotonic() - started > 0.8
        run_until_end(players)
        assert all(any(line.startswith("TOTAL") for line in p.log) for p in players)


def test_busy_when_too_many_wait_for_a_seat_and_silence_is_closed() -> None:
    with service(timeout=0.5, max_waiting=2) as h:
        a, b = Player(h.port, 0), Player(h.port, 0)
        c = Player(h.port, 0)
        assert c.read() == Busy((0,)) and c.peer.closed()
        assert a.peer.silent(0.1) and b.peer.silent(0.1)
        quiet = Peer(h.port)
        assert quiet.closed(3)  # no IAM within the timeout
        bad = Peer(h.port)
        bad.send("TRICK1AS")
        assert bad.closed(3)


def test_a_table_whose_seats_all_stay_empty_is_given_up() -> None:
    with service(timeout=5, abandon_after=0.3) as h:
        players = four(h.port)
        for p in players:
            p.peer.close()
        deadline = time.monotonic() + 5
        while not h.tables[0].done.done() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert h.tables[0].status is TableStatus.STOPPED and h.abandoned == [h.tables[0]]
        late = Player(h.port, 0)  # no table has N free any more: it waits in the lobby
        assert late.peer.silent(0.3)


def test_a_client_waiting_in_the_lobby_takes_a_seat_that_becomes_empty() -> None:
    with service(timeout=5) as h:
        players = four(h.port)
        play_tricks(players, 2)
        early = Player(h.port, 1)  # E comes back before its old connection is seen to end
        assert early.peer.silent(0.3)
        gone = players[1]
        gone.peer.close()
        assert early.read() == parse_message(gone.log[0])
        taken = [line for line in players[0].log if line.startswith("TAKEN")]
        for line in taken:
            assert isinstance(early.read(), Taken) and early.log[-1] == line
        players[1] = early
        run_until_end(players)
        assert len(h.tables) == 1 and h.tables[0].status is TableStatus.FINISHED
