"""A Trend chair's status from the table, and the flood limit of a socket."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from moonshot.bots.random import RandomBot
from moonshot.protocols.trend import codec as tc
from moonshot.protocols.trend.seat import Peer, chair_status
from moonshot.server.table import BotSeat, Table
from moonshot.variants import TREND


class FakeSocket:
    client = None


@pytest.mark.asyncio
async def test_chair_status_and_counts() -> None:
    t = Table(TREND, [BotSeat(RandomBot()), None, BotSeat(RandomBot()), BotSeat(RandomBot())], seed=1)
    t.chairs[2].stats.timeouts, t.chairs[2].stats.timeouts_in_a_row, t.chairs[3].stats.illegal = 2, 1, 3
    status, counts = chair_status(t)
    assert status == [tc.ONLINE, tc.OFFLINE, tc.TIMED_OUT, tc.ONLINE]
    assert counts == [(0, 0), (0, 0), (2, 0), (0, 3)]


@pytest.mark.asyncio
async def test_the_flood_limit_lets_a_burst_through_then_the_rate() -> None:
    peer = Peer(FakeSocket(), flood_rate=10)  # type: ignore[arg-type]
    allowed = sum(peer.allow(0.0) for _ in range(50))
    assert allowed == 10
    assert peer.allow(0.05) is False  # half a frame earned
    assert peer.allow(0.2) is True
    sent: list[Any] = []
    peer.queue = asyncio.Queue()
    peer.max_queue = 2
    for _ in range(3):
        peer.send({"eventName": "x", "data": {}})
        sent.append(peer.queue.qsize())
    assert peer.closed  # a client that does not read is cut off, with the reason queued last
