"""Clocks: what a table's clock is, its defaults, and how a running countdown is told to clients.

A clock is the seconds a person has for each decision (``TablePolicy.clock``). The table is the
one place that runs it (:mod:`moonshot.runtime.table`: a deadline per request, its timer, what
happens when it passes); this module only holds the pure parts every protocol and the web app
share: the choices a game may be created with, the default of a rated game, the hand-over rule,
and the :class:`Countdown` a table tells its watchers, with its wire form. Remaining seconds, not
a wall-clock time, go to clients, so a client's clock skew does not matter (a client adds them
to its own clock when the message arrives).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

RATED_CLOCK = 30.0  # seconds a decision in a rated game when its creator names none
CLOCK_CHOICES = (10.0, 15.0, 20.0, 30.0, 45.0, 60.0, 90.0, 120.0)  # what a web game may pick
MIN_CLOCK, MAX_CLOCK = 1.0, 600.0  # the bounds of a clock given in seconds (tests, operators)
HANDOVER = 2  # clock timeouts in a row after which the table's bot plays the seat until its person acts


class ClockError(ValueError):
    """A clock option that is not one (the message says why, for the person who gave it; ``code``
    and ``params`` say it again for a page that shows it in its own language)."""

    def __init__(self, message: str, code: str = "bad_clock", params: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.params = dict(params or {})


def parse_clock(value: Any, *, rated: bool, choices: tuple[float, ...] | None = CLOCK_CHOICES) -> float | None:
    """A game's clock from a request's field: ``None`` or absent gives the default (a rated game
    :data:`RATED_CLOCK`, else no clock), ``0`` no clock (refused for a rated game), else seconds
    (one of ``choices`` when given, else anything in [MIN_CLOCK, MAX_CLOCK])."""
    if value is None:
        return RATED_CLOCK if rated else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ClockError("field 'clock' must be a number of seconds (0: no clock)")
    seconds = float(value)
    if seconds == 0:
        if rated:
            raise ClockError("a rated game has a clock: pick its seconds a decision", "rated_needs_clock")
        return None
    if choices is not None and seconds not in choices:
        raise ClockError(f"field 'clock' must be 0 or one of {', '.join(f'{c:g}' for c in choices)} seconds")
    if not MIN_CLOCK <= seconds <= MAX_CLOCK:
        raise ClockError(f"field 'clock' must be between {MIN_CLOCK:g} and {MAX_CLOCK:g} seconds")
    return seconds


@dataclass(frozen=True, slots=True)
class Countdown:
    """A table's clocks as its watchers may know them: the clock's length (``seconds``), the
    decisions running under it as ``(chair, due)`` pairs (``due`` in the loop's time), and the
    chairs the table's bot plays until their person acts again (``away``)."""

    seconds: float | None
    running: tuple[tuple[int, float], ...] = ()
    away: tuple[int, ...] = ()

    def remaining(self, seat: int, now: float) -> float | None:
        """Seconds ``seat`` has left at loop time ``now`` (never below 0); None: no clock runs for it."""
        for s, due in self.running:
            if s == seat:
                return max(0.0, due - now)
        return None

    def to_json(self, now: float, seat_names: tuple[str, ...] = ("north", "east", "south", "west")) -> dict[str, Any]:
        """The wire form, ``{"type": "clock", "seconds", "running": {seat: remaining}, "away": [seat]}``,
        seats by ``seat_names``, the remaining seconds at ``now`` (to the millisecond)."""
        return {
            "type": "clock",
            "seconds": self.seconds,
            "running": {seat_names[s]: round(max(0.0, due - now), 3) for s, due in self.running},
            "away": [seat_names[s] for s in self.away],
        }


__all__ = [
    "CLOCK_CHOICES",
    "HANDOVER",
    "MAX_CLOCK",
    "MIN_CLOCK",
    "RATED_CLOCK",
    "ClockError",
    "Countdown",
    "parse_clock",
]
