"""The server's metrics, one family at a time: drive a table, a store writer or a guard, then read
the registry as Prometheus would."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from prometheus_client import generate_latest

from moonshot.bots.heuristic import HeuristicBot
from moonshot.bots.random import RandomBot
from moonshot.core.variants import find_variant
from moonshot.runtime.limits import ClientGuard, ClientLimits
from moonshot.runtime.meter import NO_METER
from moonshot.runtime.table import (
    BotSeat,
    DecisionRequest,
    OnDisconnect,
    Seat,
    SeatKind,
    Table,
    TableEvent,
    TablePolicy,
)
from moonshot.server.metrics import ServerMetrics
from moonshot.store import Store, StoreRecorder

RULES = find_variant("standard").replace(score_limit=30)  # short games


class Remote(Seat):
    """A client's seat: answers each request from another task, as a socket's reader would."""

    kind = SeatKind.HUMAN
    protocol = "trend"

    def __init__(self) -> None:
        self.name = "remote"
        self.rng = random.Random(3)
        self.asked = 0

    def on_events(self, table: Table, events: Sequence[TableEvent]) -> None:
        pass

    def on_request(self, table: Table, request: DecisionRequest) -> None:
        self.asked += 1
        action = RandomBot().act(request.view, self.rng)
        asyncio.get_running_loop().call_later(0.001, table.submit, request.seat, action, request.request_id)


def _server(**kw: Any) -> SimpleNamespace:
    """What the metrics read of a ServerApp when scraped."""
    base: dict[str, Any] = {
        "tables": {},
        "finished": 0,
        "recorder": None,
        "guard": ClientGuard(),
        "cluster": None,
        "draining": False,
    }
    return SimpleNamespace(**(base | kw))


def value(m: ServerMetrics, name: str, **labels: str) -> float | None:
    return m.registry.get_sample_value(name, labels)


async def _play(table: Table) -> None:
    table.start()
    await asyncio.wait_for(table.done, 60)


@pytest.mark.asyncio
async def test_decisions_round_trips_and_bot_cpu_are_counted_by_protocol() -> None:
    m = ServerMetrics(_server())
    remote = Remote()
    seats: list[Seat] = [remote] + [BotSeat(HeuristicBot(), random.Random(i)) for i in range(3)]
    table = Table(RULES, seats, seed=7, meta={"protocol": "trend"})
    table.meter = m.table_meter("trend")
    await _play(table)
    assert value(m, "moonshot_decisions_total", protocol="trend") == len(table.game.actions)
    # a round trip for every request the remote seat answered (bots answer in-process: none)
    assert value(m, "moonshot_decision_round_trip_seconds_count", protocol="trend") == remote.asked > 0
    assert (value(m, "moonshot_decision_round_trip_seconds_sum", protocol="trend") or 0) >= 0.001 * remote.asked
    assert (value(m, "moonshot_bot_cpu_seconds_total", protocol="trend") or 0) > 0
    assert value(m, "moonshot_decisions_total", protocol="sessions") is None  # another protocol: untouched


@pytest.mark.asyncio
async def test_a_bot_in_a_worker_thread_counts_its_cpu_too() -> None:
    m = ServerMetrics(_server())
    seats: list[Seat] = [BotSeat(HeuristicBot(), random.Random(i), in_executor=True) for i in range(4)]
    table = Table(RULES, seats, seed=8)
    table.meter = m.table_meter("sessions")
    await _play(table)
    assert value(m, "moonshot_decision_round_trip_seconds_count", protocol="sessions") == len(table.game.actions)
    assert (value(m, "moonshot_bot_cpu_seconds_total", protocol="sessions") or 0) > 0


@pytest.mark.asyncio
async def test_tables_by_state_paused_tables_pauses_and_players_connected() -> None:
    tables: dict[str, Table] = {}
    m = ServerMetrics(_server(tables=tables))
    remote = Remote()
    remote.on_request = lambda table, request: None  # type: ignore[method-assign]  # never answers
    policy = TablePolicy(decision_timeout=None, on_disconnect=OnDisconnect.PAUSE)
    seats: list[Seat] = [remote] + [BotSeat(RandomBot(), random.Random(i)) for i in range(3)]
    table = Table(RULES, seats, seed=9, policy=policy, meta={"protocol": "trend"})
    table.meter = m.table_meter("trend")
    tables[table.id] = table
    waiting = Table(RULES, [None] * 4, seed=1, meta={"protocol": "kierki"})
    tables[waiting.id] = waiting
    assert value(m, "moonshot_tables", protocol="kierki", state="waiting") == 1
    table.start()
    while table.status.value != "running" or 0 not in table._pending:
        await asyncio.sleep(0.005)
    assert value(m, "moonshot_tables", protocol="trend", state="running") == 1
    assert value(m, "moonshot_players_connected", protocol="trend") == 1  # the three bots are not players
    assert value(m, "moonshot_tables_paused", protocol="trend") is None
    table.storage_paused("disk full")
    while table._storage_paused_at is None:
        await asyncio.sleep(0.005)
    assert value(m, "moonshot_table_pauses_total", protocol="trend", cause="storage") == 1
    assert value(m, "moonshot_tables_paused", protocol="trend") == 1
    table.storage_resumed(0.1)
    table.detach(0, remote)  # the chair waits for its player (PAUSE)
    while table.chairs[0].occupant is not None or table._storage_paused_at is not None:
        await asyncio.sleep(0.005)
    assert value(m, "moonshot_table_pauses_total", protocol="trend", cause="seat") == 1
    assert value(m, "moonshot_tables_paused", protocol="trend") == 1
    assert value(m, "moonshot_players_connected", protocol="trend") is None
    table.stop()
    await table.done


@pytest.mark.asyncio
async def test_store_commits_are_timed_and_the_writer_queue_is_read_when_scraped(tmp_path: Path) -> None:
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'g.db'}")
    recorder = StoreRecorder(store)
    m = ServerMetrics(_server(recorder=recorder))
    recorder.on_commit = m.committed
    assert value(m, "moonshot_store_queue_depth") == 0 and value(m, "moonshot_store_available") == 1
    recorder.put_value("a", 1)
    recorder.put_value("b", 2)
    assert value(m, "moonshot_store_queue_depth") == 2  # queued, the writer not started
    recorder.start()
    table = Table(RULES, [BotSeat(RandomBot(), random.Random(i)) for i in range(4)], seed=3, recorder=recorder)
    await _play(table)
    await recorder.flush()
    assert value(m, "moonshot_store_queue_depth") == 0
    commits = value(m, "moonshot_store_commit_seconds_count") or 0
    assert commits >= 1 and (value(m, "moonshot_store_commit_seconds_sum") or 0) > 0
    assert value(m, "moonshot_store_rows_written_total") == recorder.written >= len(table.game.actions)
    recorder.available = False
    assert value(m, "moonshot_store_available") == 0
    recorder.available = True
    await recorder.close()
    await store.close()


def test_refusals_are_counted_by_the_limit_that_refused() -> None:
    guard = ClientGuard(ClientLimits(connections_per_address=1, chat_per_s=0.0, chat_burst=1))
    m = ServerMetrics(_server(guard=guard))
    held, _, _ = guard.admit("10.0.0.1")
    assert held is not None
    for _ in range(3):
        assert guard.admit("10.0.0.1")[0] is None
    assert guard.chat_by_name.take("mallory") == 0.0
    assert guard.chat_by_name.take("mallory") > 0
    guard.refused += 1  # (every refusal counts in the total: the HTTP guard adds it)
    guard.refused += 2  # refusals no Holds or Rates decided (a body too large)
    assert value(m, "moonshot_refusals_total", limit="connections") == 3
    assert value(m, "moonshot_refusals_total", limit="chat_by_name") == 1
    assert value(m, "moonshot_refusals_total", limit="other") == 2
    assert value(m, "moonshot_refusals_total", limit="streams_by_name") == 0


def test_sse_streams_open_cluster_nodes_finished_games_and_draining() -> None:
    guard = ClientGuard()
    server = _server(guard=guard, finished=5, cluster=SimpleNamespace(live_nodes=["b", "c"]))
    m = ServerMetrics(server)
    holds = [guard.streams_by_address.acquire(f"10.0.0.{i}") for i in range(3)]
    assert value(m, "moonshot_sse_streams_open") == 3
    holds[0].release()  # type: ignore[union-attr]
    assert value(m, "moonshot_sse_streams_open") == 2
    assert value(m, "moonshot_cluster_nodes") == 3  # the other two and this one
    assert value(m, "moonshot_games_finished_total") == 5
    assert value(m, "moonshot_draining") == 0
    server.draining = True
    assert value(m, "moonshot_draining") == 1
    assert value(ServerMetrics(_server()), "moonshot_cluster_nodes") is None  # no cluster: no series


def test_two_servers_in_one_process_keep_their_own_registries() -> None:
    a, b = ServerMetrics(_server()), ServerMetrics(_server())
    a.table_meter("sessions").decided()
    assert value(a, "moonshot_decisions_total", protocol="sessions") == 1
    assert value(b, "moonshot_decisions_total", protocol="sessions") is None
    assert a.table_meter("sessions") is a.table_meter("sessions")  # label children resolved once
    assert b"moonshot_decisions_total" in generate_latest(a.registry)


def test_a_table_nobody_meters_uses_the_no_op_meter() -> None:
    assert Table.meter is NO_METER
    NO_METER.decided()
    NO_METER.answered(0.1)
    NO_METER.bot_thought(0.1)
    NO_METER.paused("storage")
