"""The server's metrics: one Prometheus registry per :class:`~moonshot.server.app.ServerApp`.

Two kinds of numbers, both protocol-neutral (a protocol is only a label):

* counted as they happen, through the runtime's hooks: each protocol's :class:`ProtocolMeter` (a
  :class:`~moonshot.runtime.meter.TableMeter`: a decision and a bot's CPU are plain additions, read
  when scraped, and an answer one observation of a histogram child resolved once) and the store
  writer's commit hook (:meth:`ServerMetrics.committed`);
* read when Prometheus scrapes (:class:`_Snapshot`, a custom collector): tables by protocol and
  state, paused tables, players in a chair, the writer's queue, refusals by limit, SSE streams
  open, cluster nodes. Nothing on a hot path pays for these.

The registry is the server's own, not prometheus_client's global one, so several servers in one
process (tests) keep apart. The metric names and their meaning are listed in docs/server.md
(section "Operating a server").
"""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from moonshot.runtime.meter import TableMeter

# a decision's round trip: an in-process bot's few milliseconds to a person's half minute
ROUND_TRIP_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
# one group commit: a WAL append on SQLite, a network round trip on PostgreSQL
COMMIT_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)


class ProtocolMeter(TableMeter):
    """The tables of one protocol. The two counts made for every decision are plain numbers
    (every hook runs on the event loop's thread), read when scraped; the round trip's histogram
    child is resolved once."""

    __slots__ = ("_answered", "_metrics", "_protocol", "bot_cpu", "decisions")

    def __init__(self, metrics: ServerMetrics, protocol: str) -> None:
        self._metrics = metrics
        self._protocol = protocol
        self.decisions = 0
        self.bot_cpu = 0.0
        self._answered = metrics.round_trip.labels(protocol).observe

    def decided(self) -> None:
        self.decisions += 1

    def answered(self, seconds: float) -> None:
        self._answered(seconds)

    def bot_thought(self, cpu_seconds: float) -> None:
        self.bot_cpu += cpu_seconds

    def paused(self, cause: str) -> None:
        self._metrics.pauses.labels(self._protocol, cause).inc()


class ServerMetrics:
    """Every metric of one server. ``server`` is read only when scraped (duck-typed: the
    attributes of ``ServerApp`` named in :class:`_Snapshot`)."""

    def __init__(self, server: Any) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.round_trip = Histogram(
            "moonshot_decision_round_trip_seconds",
            "From a table asking a seat for a decision to its answer arriving",
            ["protocol"],
            buckets=ROUND_TRIP_BUCKETS,
            registry=r,
        )
        self.pauses = Counter(
            "moonshot_table_pauses",
            "Times a table stopped asking its seats, by cause (storage: the store is away; seat: a chair waits)",
            ["protocol", "cause"],
            registry=r,
        )
        self.commit = Histogram(
            "moonshot_store_commit_seconds",
            "One write of the store's writer (a group commit of what every table queued)",
            buckets=COMMIT_BUCKETS,
            registry=r,
        )
        self.committed_rows = Counter("moonshot_store_rows_written", "Rows the store's writer committed", registry=r)
        self._meters: dict[str, ProtocolMeter] = {}
        r.register(_Snapshot(server, self._meters))

    def table_meter(self, protocol: str) -> ProtocolMeter:
        """The meter a table of ``protocol`` counts into (one per protocol)."""
        meter = self._meters.get(protocol)
        if meter is None:
            meter = self._meters[protocol] = ProtocolMeter(self, protocol)
        return meter

    def committed(self, seconds: float, rows: int) -> None:
        """The store writer's commit hook: one batch of ``rows`` committed in ``seconds``."""
        self.commit.observe(seconds)
        self.committed_rows.inc(rows)


class _Snapshot(Collector):
    """The gauges read from the server when scraped: nothing to update on a hot path."""

    def __init__(self, server: Any, meters: dict[str, ProtocolMeter]) -> None:
        self.server = server
        self.meters = meters

    def describe(self) -> list[Any]:
        return []  # (no registration-time collection: the server may not have started)

    def collect(self) -> Iterator[Any]:
        s = self.server
        tables = GaugeMetricFamily(
            "moonshot_tables", "Tables of this server by protocol and state", labels=["protocol", "state"]
        )
        paused = GaugeMetricFamily(
            "moonshot_tables_paused",
            "Running tables that ask nobody now (the store is away, or a chair waits for its player)",
            labels=["protocol"],
        )
        players = GaugeMetricFamily(
            "moonshot_players_connected",
            "Players in a chair of this server's tables, by the protocol they came over (server bots not counted)",
            labels=["protocol"],
        )
        by_state: Tally[tuple[str, str]] = Tally()
        by_pause: Tally[str] = Tally()
        by_player: Tally[str] = Tally()
        for t in list(s.tables.values()):
            protocol = str(t.meta.get("protocol", "other"))
            by_state[protocol, t.status.value] += 1
            if t.status.value == "running" and t.snapshot().paused:
                by_pause[protocol] += 1
            for chair in t.chairs:
                who = chair.occupant
                kind = getattr(who, "protocol", "server") if who is not None else "server"
                if kind != "server":
                    by_player[str(kind)] += 1
        for (protocol, state), n in sorted(by_state.items()):
            tables.add_metric([protocol, state], n)
        for protocol, n in sorted(by_pause.items()):
            paused.add_metric([protocol], n)
        for protocol, n in sorted(by_player.items()):
            players.add_metric([protocol], n)
        yield tables
        yield paused
        yield players
        decisions = CounterMetricFamily(
            "moonshot_decisions",
            "Actions applied at this server's tables (any seat, forced or not)",
            labels=["protocol"],
        )
        bot_cpu = CounterMetricFamily(
            "moonshot_bot_cpu_seconds", "CPU the server's bots spent deciding (their threads')", labels=["protocol"]
        )
        for protocol, meter in sorted(self.meters.items()):
            decisions.add_metric([protocol], meter.decisions)
            bot_cpu.add_metric([protocol], meter.bot_cpu)
        yield decisions
        yield bot_cpu
        finished = CounterMetricFamily("moonshot_games_finished", "Games this server played to the end")
        finished.add_metric([], s.finished)
        yield finished
        recorder = s.recorder
        if recorder is not None:
            queued = GaugeMetricFamily("moonshot_store_queue_depth", "Writes queued for the store's writer")
            queued.add_metric([], recorder.queued)
            yield queued
            up = GaugeMetricFamily("moonshot_store_available", "1 while the store's writer can write, 0 in an outage")
            up.add_metric([], 1.0 if recorder.available else 0.0)
            yield up
        guard = s.guard
        refusals = CounterMetricFamily(
            "moonshot_refusals", "Client requests refused by a per-client limit, by limit", labels=["limit"]
        )
        for limit, n in sorted(guard.refusals().items()):
            refusals.add_metric([limit], n)
        yield refusals
        streams = GaugeMetricFamily("moonshot_sse_streams_open", "HTTP event streams (SSE) open now")
        streams.add_metric([], sum(guard.streams_by_address.counts.values()))
        yield streams
        yield _draining(s)
        cluster = s.cluster
        if cluster is not None:
            nodes = GaugeMetricFamily(
                "moonshot_cluster_nodes", "Live server processes in this cluster, this one included"
            )
            nodes.add_metric([], len(cluster.live_nodes) + 1)
            yield nodes


def _draining(server: Any) -> GaugeMetricFamily:
    g = GaugeMetricFamily("moonshot_draining", "1 while the server drains (readiness says not ready)")
    g.add_metric([], 1.0 if getattr(server, "draining", False) else 0.0)
    return g


__all__ = ["COMMIT_BUCKETS", "ROUND_TRIP_BUCKETS", "ProtocolMeter", "ServerMetrics"]
