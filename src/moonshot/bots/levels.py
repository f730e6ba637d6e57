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


def _h2h(upper: str, lower: str, seed: int) -> str:
    return f"moonshot arena --head-to-head {upper} {lower} -n 1000 --no-passing -s {seed} -j 2"


# a level's row: number, name, bot, options, mu, sigma, CPU ms a decision, and its arena run
# against the level below as (difference, low, high, seed) over 1000 deals (None for level 1)
_Row = tuple[int, str, str, dict[str, Any], float, float, float, tuple[float, float, float, int] | None]

# measured on the 2-core AMD EPYC development machine, 2026-12-07 (docs/bots.md): the arena rows
# by the commands _h2h writes, CPU a decision by benchmarks/levels.py, the ratings by
# `moonshot ratings --arena` over the five arena runs' games
_ROWS: tuple[_Row, ...] = (
    (1, "Beginner", "random", {}, 18.74, 1.65, 0.0012, None),
    (2, "Novice", "heuristic", {"epsilon": 0.5}, 22.69, 1.64, 0.0021, (-3.507, -3.796, -3.218, 41000)),
    (3, "Casual", "heuristic", {"epsilon": 0.2}, 25.86, 1.65, 0.0027, (-1.940, -2.245, -1.635, 42000)),
    (4, "Intermediate", "heuristic", {}, 27.44, 1.65, 0.0031, (-1.245, -1.517, -0.973, 43000)),
    # level 5 is the learned bot's network it was measured with (search's prior since 2026-12-07)
    (5, "Advanced", "learned", {"net": "prior"}, 27.22, 1.66, 0.0447, (-1.080, -1.415, -0.745, 44000)),
    (6, "Master", "search", {"simulations": 5000}, 28.72, 1.66, 41.1011, (-0.897, -1.176, -0.618, 46000)),
)


def _level(row: _Row) -> Level:
    number, name, bot, options, mu, sigma, cpu_ms, run = row
    arena = None
    if run is not None:
        difference, low, high, seed = run
        arena = Arena(1000, difference, low, high, _h2h(f"{LEVEL_PREFIX}{number}", f"{LEVEL_PREFIX}{number - 1}", seed))
    return Level(number, name, bot, MappingProxyType(options), mu=mu, sigma=sigma, cpu_ms=cpu_ms, arena=arena)


LEVELS: tuple[Level, ...] = tuple(_level(row) for row in _ROWS)

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
