"""What the table runtime tells whoever operates the server: decisions, round trips, bots' CPU, pauses.

A :class:`TableMeter` receives a table's protocol-neutral counts as they happen: an action
applied (:meth:`~TableMeter.decided`), a seat's answer and how long after the table asked it came
(:meth:`~TableMeter.answered`), the CPU a server bot spent on a decision
(:meth:`~TableMeter.bot_thought`) and a pause (:meth:`~TableMeter.paused`). This base does
nothing: a table no operator watches (tools, tests) pays one method call. The composition root
gives each table the meter of its protocol (``Table.meter``, set by ``ServerApp``); its metrics
(:mod:`moonshot.server.metrics`) are the only code that knows of Prometheus. Every call is on a
table's hot path, so an implementation only increments or observes.
"""

from __future__ import annotations


class TableMeter:
    """A sink for one protocol's table counts; every method here is a no-op."""

    __slots__ = ()

    def decided(self) -> None:
        """An action was applied (a seat's answer, a bot's move, or one the server forced)."""

    def answered(self, seconds: float) -> None:
        """A seat answered an open request ``seconds`` after the table asked it (the decision's
        round trip: sending, the player's thinking, the answer's way back)."""

    def bot_thought(self, cpu_seconds: float) -> None:
        """A server bot spent ``cpu_seconds`` on one decision: its worker thread's CPU clock, or,
        for a bot deciding on the event loop, how long its decision held the loop."""

    def paused(self, cause: str) -> None:
        """The table stopped asking its seats: ``storage`` (the store cannot be written) or
        ``seat`` (a chair is empty and waits for its player)."""


NO_METER = TableMeter()

__all__ = ["NO_METER", "TableMeter"]
