"""Bot levels: a table of bot specs with their measured strength and cost, and ``level:N``'s lookup.

A level is data, never code: a row names one of the registry's bots and its options (as a user
would type them: ``heuristic --epsilon 0.5``, ``search --simulations 1000``), a name people read,
and what was measured of it: its OpenSkill rating (mu, sigma), the CPU it spends a decision, and
the arena row (head to head against the level below, duplicate deals) that shows it is stronger.
Every level plays every variant because its bot does. ``docs/bots.md`` has the commands that
produced each figure; a change of a level's spec means measuring its rows again.

``level:N`` names level N wherever a bot name is accepted (``make_bot`` resolves it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

# a level by number: ``level:3``
LEVEL_PREFIX = "level:"


class UnknownLevel(ValueError):
    """``level:N`` where no level N exists, or where N is not a number (``make_bot`` raises it as
    the registry's ``UnknownBot``, which every place a bot is made already answers)."""


@dataclass(frozen=True)
class Arena:
    """The head-to-head arena run of a level against the level below it: the paired difference in
    points a deal (this level minus the one below; lower points are better) and its 95% interval."""

    deals: int
    difference: float
    low: float
    high: float
    command: str


@dataclass(frozen=True)
class Level:
    number: int
    name: str  # what people read: "Beginner" ... "Master"
    bot: str  # a registry name
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    mu: float = 0.0  # OpenSkill rating, from the ratings run docs/bots.md names
    sigma: float = 0.0
    cpu_ms: float = 0.0  # CPU milliseconds a decision, measured alone (docs/bots.md)
    arena: Arena | None = None  # against the level below (None for level 1)

    @property
    def spec(self) -> str:
        """The bot as a user types it to ``moonshot`` (``heuristic --epsilon 0.5``): the spec its
        bot is rated under (``registry.bot_spec``; a level sets only options that differ from
        the bot's defaults)."""
        return " ".join([self.bot, *(f"--{k.replace('_', '-')} {v}" for k, v in sorted(self.options.items()))])

    @property
    def key(self) -> str:
        return f"{LEVEL_PREFIX}{self.number}"

    @property
    def ordinal(self) -> float:
        """The leaderboard's conservative figure, mu - 3 sigma."""
        return self.mu - 3 * self.sigma

    @property
    def decisions_per_core_s(self) -> float:
        """Decisions one core makes a second at this level (what a server can host)."""
        return 1000.0 / self.cpu_ms if self.cpu_ms > 0 else float("inf")

    def to_json(self) -> dict[str, Any]:
        """The level as ``/api/bots`` lists it."""
        return {
            "level": self.number,
            "key": self.key,
            "name": self.name,
            "spec": self.spec,
            "mu": round(self.mu, 2),
            "sigma": round(self.sigma, 2),
            "ordinal": round(self.ordinal, 2),
            "cpu_ms": self.cpu_ms,
        }


def _opts(**options: Any) -> Mapping[str, Any]:
    return MappingProxyType(options)


def _h2h(upper: str, lower: str, seed: int) -> str:
    return f"moonshot arena --head-to-head {upper} {lower} -n 1000 --no-passing -s {seed} -j 2"


# measured on the 2-core AMD EPYC development machine, 2026-12-07 (docs/bots.md): the arena rows
# by the commands below, CPU a decision by benchmarks/levels.py, the ratings by
# `moonshot ratings --arena` over the five arena runs' games
LEVELS: tuple[Level, ...] = (
    Level(
        1,
        "Beginner",
        "random",
        mu=18.74,
        sigma=1.65,
        cpu_ms=0.0012,
        arena=None,
    ),
    Level(
        2,
        "Novice",
        "heuristic",
        _opts(epsilon=0.5),
        mu=22.69,
        sigma=1.64,
        cpu_ms=0.0021,
        arena=Arena(1000, -3.507, -3.796, -3.218, _h2h("level:2", "level:1", 41000)),
    ),
    Level(
        3,
        "Casual",
        "heuristic",
        _opts(epsilon=0.2),
        mu=25.86,
        sigma=1.65,
        cpu_ms=0.0027,
        arena=Arena(1000, -1.940, -2.245, -1.635, _h2h("level:3", "level:2", 42000)),
    ),
    Level(
        4,
        "Intermediate",
        "heuristic",
        mu=27.44,
        sigma=1.65,
        cpu_ms=0.0031,
        arena=Arena(1000, -1.245, -1.517, -0.973, _h2h("level:4", "level:3", 43000)),
    ),
    Level(
        5,
        "Advanced",
        "learned",
        mu=27.22,
        sigma=1.66,
        cpu_ms=0.0447,
        arena=Arena(1000, -1.080, -1.415, -0.745, _h2h("level:5", "level:4", 44000)),
    ),
    Level(
        6,
        "Master",
        "search",
        _opts(simulations=5000),
        mu=28.72,
        sigma=1.66,
        cpu_ms=41.1011,
        arena=Arena(1000, -0.897, -1.176, -0.618, _h2h("level:6", "level:5", 46000)),
    ),
)

_BY_NUMBER = {lv.number: lv for lv in LEVELS}


def level(number: int) -> Level:
    """Level ``number``; :class:`UnknownLevel` if there is none."""
    found = _BY_NUMBER.get(number)
    if found is None:
        raise UnknownLevel(f"unknown level {LEVEL_PREFIX}{number}; levels are {_known()}")
    return found


def find_level(text: str) -> Level:
    """The level ``level:N`` names; :class:`UnknownLevel` (a clear message) for anything else."""
    number = text.strip()
    if number.startswith(LEVEL_PREFIX):
        number = number[len(LEVEL_PREFIX) :]
    if not number.isdigit():
        raise UnknownLevel(f"unknown level {text!r}: want {LEVEL_PREFIX}N, N a number; levels are {_known()}")
    return level(int(number))


def _known() -> str:
    return ", ".join(f"{lv.key} {lv.name}" for lv in LEVELS)


__all__ = ["LEVELS", "LEVEL_PREFIX", "Arena", "Level", "UnknownLevel", "find_level", "level"]
