"""Ratings: an OpenSkill rating (Weng-Lin, Plackett-Luce) per player per variant, from game results.

Pure: no I/O, no clock. The store (``moonshot.store.ratings``) calls :func:`rate` when a game
finishes, and :class:`Ledger` replays every stored game in finish order for ``moonshot ratings
--rebuild``; both go through :func:`rate`, so a rebuild gives the incremental ratings exactly.

- **Who is rated** (:func:`player_id`): a moonshot bot the server runs is rated by its spec, the
  registry name and the options that differ from the defaults (``heuristic``, ``search
  --simulations 200``; the store keeps it as the player's ``bot`` field). Anyone else who sat
  down (a person, a client program over any protocol) is rated by the name it played under; the
  Sessions ``(session id)`` tag is dropped, since it changes with every session. A bot and a
  person with the same name are two players (``bot`` is part of the key).
- **A game's result** is its final totals: lower is better in Hearts (``Rules.lowest_wins``),
  equal totals share a rank (:func:`ranks`).
- **One player in several seats** (a person against three copies of a bot) is rated seat by seat
  from the same rating before the game, and the seats' results are averaged. A game with fewer
  than two distinct players says nothing about anyone and is not rated.
- **Arena runs** (:func:`arena_ledger`): the games of ``moonshot arena --results`` files, rated
  the same way under the arenas' bot specs (``moonshot ratings --arena``; how levels are rated).
- **Pools**: the Turbo charging orders (``turbo-blind``…) are one game, Turbo Hearts, whose
  charging rule changes from table to table, so they share the ``turbo`` pool (:func:`pool`).

The model is OpenSkill's :class:`~openskill.models.PlackettLuce` with its defaults: a new player
starts at mu 25, sigma 25/3; ``ordinal = mu - 3 sigma`` (0 for a newcomer) orders the leaderboard,
so a player climbs by playing well *and* by playing enough for the uncertainty to shrink.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from openskill.models import PlackettLuce

MODEL = PlackettLuce()
START_MU: float = MODEL.mu
START_SIGMA: float = MODEL.sigma

_SESSION_TAG = re.compile(r"\(\d+\)$")


@dataclass(frozen=True, order=True)
class PlayerId:
    """Whom a rating belongs to: a name, and whether it is a moonshot bot named by its spec."""

    name: str
    bot: bool = False

    def __str__(self) -> str:
        return f"{self.name} (bot)" if self.bot else self.name


@dataclass(frozen=True)
class Rating:
    mu: float = START_MU
    sigma: float = START_SIGMA
    games: int = 0

    @property
    def ordinal(self) -> float:
        """The leaderboard's number: mu - 3 sigma (skill we are about 99.7% sure of)."""
        return self.mu - 3.0 * self.sigma


@dataclass(frozen=True)
class Change:
    """What one game did to one player's rating."""

    player: PlayerId
    seats: tuple[int, ...]
    rank: int  # the best rank among its seats (1 = won)
    total: int  # the total of its best seat
    before: Rating
    after: Rating


def pool(variant: str) -> str:
    """The leaderboard a game of ``variant`` counts for (Turbo's charging orders share ``turbo``)."""
    return "turbo" if variant.startswith("turbo-") else variant


def player_id(player: Mapping[str, Any], protocol: str = "") -> PlayerId | None:
    """Who sat in a stored ``players`` entry (``{"name", "kind", "bot"?}``); None: an empty chair."""
    spec = player.get("bot")
    if isinstance(spec, str) and spec:
        return PlayerId(spec, True)
    name = str(player.get("name") or "").strip()
    if protocol == "sessions":
        name = _SESSION_TAG.sub("", name).strip()
    return PlayerId(name) if name else None


def ranks(totals: Sequence[int], lowest_wins: bool = True) -> list[int]:
    """Competition ranks of final totals: the best is 1, equal totals share a rank (1, 2, 2, 4)."""
    sign = 1 if lowest_wins else -1
    return [1 + sum(1 for u in totals if sign * u < sign * t) for t in totals]


def rate(
    before: Mapping[PlayerId, Rating], seats: Sequence[PlayerId], totals: Sequence[int], lowest_wins: bool = True
) -> list[Change]:
    """The rating changes of one finished game; ``before`` holds the players' ratings (a player
    missing from it is new). Empty when there is nothing to learn (fewer than two players)."""
    if len(seats) != len(totals):
        raise ValueError(f"{len(seats)} seats but {len(totals)} totals")
    distinct = sorted(set(seats))
    if len(distinct) < 2:
        return []
    places = ranks(totals, lowest_wins)
    start = {p: before.get(p, Rating()) for p in distinct}
    teams = [[MODEL.rating(mu=start[p].mu, sigma=start[p].sigma)] for p in seats]
    rated = MODEL.rate(teams, ranks=[float(r) for r in places])
    changes = []
    for p in distinct:
        mine = [s for s, q in enumerate(seats) if q == p]
        mu = sum(rated[s][0].mu for s in mine) / len(mine)
        sigma = sum(rated[s][0].sigma for s in mine) / len(mine)
        best = min(mine, key=lambda s: (places[s], s))
        after = Rating(mu, sigma, start[p].games + 1)
        changes.append(Change(p, tuple(mine), places[best], int(totals[best]), start[p], after))
    return changes


@dataclass
class Ledger:
    """Every rating, in memory, kept up to date game by game (the rebuild, the tests)."""

    ratings: dict[tuple[str, PlayerId], Rating] = field(default_factory=dict)

    def get(self, variant: str, player: PlayerId) -> Rating:
        return self.ratings.get((pool(variant), player), Rating())

    def apply(
        self, variant: str, seats: Sequence[PlayerId], totals: Sequence[int], lowest_wins: bool = True
    ) -> list[Change]:
        key = pool(variant)
        before = {p: self.ratings[(key, p)] for p in set(seats) if (key, p) in self.ratings}
        changes = rate(before, seats, totals, lowest_wins)
        for c in changes:
            self.ratings[(key, c.player)] = c.after
        return changes

    def leaderboard(self, variant: str) -> list[tuple[PlayerId, Rating]]:
        key = pool(variant)
        rows = [(p, r) for (v, p), r in self.ratings.items() if v == key]
        return sorted(rows, key=lambda pr: (-pr[1].ordinal, pr[0]))


def arena_ledger(runs: Sequence[Mapping[str, Any]]) -> Ledger:
    """The ratings of arena runs' games (``moonshot arena --results`` JSON, format
    ``moonshot.play.arena/1``): each seating of each deal is a game between the seats' bots, rated
    by their arena specs (``heuristic:epsilon=0.5``; the same spec in two runs is one player). The
    runs' deals are interleaved in proportion to their lengths (a run of 300 deals has one where a
    run of 1,000 has three), so that every run spans the whole sequence and no run's players settle
    before another's start: OpenSkill is sequential, and a ladder's runs share players."""
    ledger = Ledger()
    games: list[tuple[float, int, str, list[str], list[int]]] = []  # (where, run, variant, seats, points)
    for r, run in enumerate(runs):
        if run.get("format") != "moonshot.play.arena/1":
            raise ValueError(f"run {r + 1}: not an arena results file (format {run.get('format')!r})")
        variant = str(run["config"]["variant"])
        lowest_wins = not run.get("summary", {}).get("higher_is_better", False)
        if not lowest_wins:
            raise ValueError(f"run {r + 1}: {variant} scores higher-is-better, which arena_ledger does not rate")
        deals = run["deals"]
        for d, deal in enumerate(deals):
            for seating, points in zip(deal["seatings"], deal["points"], strict=True):
                games.append((d / len(deals), r, variant, list(seating), list(points)))
    games.sort(key=lambda g: (g[0], g[1]))
    for _, _, variant, seating, points in games:
        ledger.apply(variant, [PlayerId(name, bot=True) for name in seating], points)
    return ledger


__all__ = [
    "MODEL",
    "START_MU",
    "START_SIGMA",
    "Change",
    "Ledger",
    "PlayerId",
    "Rating",
    "arena_ledger",
    "player_id",
    "pool",
    "ranks",
    "rate",
]
