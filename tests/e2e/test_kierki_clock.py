"""Kierki seats under the table's clock (``-t``/``--kierki-timeout``: the table's one deadline for
every seat): when a client's time runs out, Kierki's own rule applies, as its specification says
(the server repeats TRICK; nobody plays for a Kierki seat, and no bot ever takes one over), and
the repeats come a clock apart, no later. The client's next card is taken as ever."""

from __future__ import annotations

import itertools
import time

from e2e.test_kierki import Trick, game_deals, join_four, server_in_thread

CLOCK = 0.5
SLACK = 4.0  # generous: the CI machine is busy


def test_a_silent_kierki_seat_is_asked_again_each_clock_and_never_handed_to_a_bot() -> None:
    deals = game_deals(4, kinds=(3,))
    with server_in_thread(deals, timeout=CLOCK) as (port, server, _):
        players = join_four(port)
        leader = players[deals[0].leader or 0]
        assert leader.read() == Trick(1, ())
        stamps = [time.monotonic()]
        for _ in range(3):  # three clocks run out: TRICK again each time
            assert leader.read(CLOCK + SLACK) == Trick(1, ())
            stamps.append(time.monotonic())
        gaps = [b - a for a, b in itertools.pairwise(stamps)]
        assert min(gaps) >= CLOCK * 0.8 and max(gaps) <= CLOCK + SLACK, gaps
        table = server.table
        assert table is not None
        chair = table.chairs[leader.seat]
        assert table.stats()[leader.seat].timeouts >= 3
        assert chair.occupant is not None and chair.substitute is None and not chair.away
        assert table.stats()[leader.seat].forced == 0  # nothing was played for it
        leader.play()  # its next card is its own, and play goes on
        assert isinstance(players[(leader.seat + 1) % 4].read(), Trick)
