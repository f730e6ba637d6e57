"""Tournaments without I/O: entrants, the duplicate schedule and the statistics of the results.

A tournament names a variant, a number of *deal sets* and its entrants. Deal set ``s`` is
``deals_per_set`` deals of the variant dealt from one seed (derived from the tournament's seed
and ``s``), so it can be dealt again exactly. For each set the entrants are drawn into tables of
four (:func:`schedule`); each table plays the set four times, the entrants rotated one chair
each time, so every entrant holds every hand of the set once against the same opponents. Every
table of a set plays the same cards. With a number of entrants that is not a multiple of four,
house bots (``filler``) fill the last table; they are not ranked.

Tables are drawn so that pairs meet about equally often. For each set, several partitions are
made from the tournament seed (up to ``draws``, fewer for big fields): the entrants are shuffled
and each table is filled greedily with whoever has met it least. The partition that least raises
the sum of squared meeting counts is kept (ties: the first made). With four entrants or fewer there is one table.

:func:`standings` turns finished games (:class:`GameResult`) into per-entrant statistics: mean
points per deal with a 95% interval, paired differences against every other entrant on the deals
both played (the same set and deal: the same cards), win rate, moons, timeouts and errors.
The shell (``moonshot.runtime.tournament``) plays the games; this module only counts.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import math
import random
import shlex
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from moonshot.core.rules import EndRule, Rules
from moonshot.core.variants import find_variant
from moonshot.play.arena import mean_ci

FORMAT = "moonshot.play.tournament/1"
MAX_ENTRANTS = 64
MAX_SETS = 1000


class TournamentError(ValueError):
    """A tournament that cannot be made as asked (one line, for the CLI or an HTTP 400)."""


@dataclass(frozen=True)
class Entrant:
    """A built-in bot (``bot`` and its ``options``) or an external player (``external``), who
    proves it is the entrant with a token; only the token's SHA-256 (``token_digest``) is kept."""

    name: str
    bot: str | None = None
    options: dict[str, Any] = field(default_factory=dict, hash=False)
    external: bool = False
    token_digest: str | None = None
    filler: bool = False  # a house bot filling the last table: not ranked

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("token_digest")  # the digest stays on the server: it is no one else's business
        return d


def token_digest(token: str) -> str:
    # surrogatepass: a token read from JSON may hold lone surrogates; it digests, never raises
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def _option_value(text: str) -> Any:
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def parse_bot(spec: str) -> tuple[str, dict[str, Any]]:
    """``"search --think-ms 200"`` -> ``("search", {"think_ms": 200})``."""
    try:
        words = shlex.split(spec)
    except ValueError as e:
        raise TournamentError(f"cannot read entrant {spec!r}: {e}") from None
    if not words:
        raise TournamentError("an entrant needs a bot name")
    name, rest = words[0], words[1:]
    options: dict[str, Any] = {}
    i = 0
    while i < len(rest):
        w = rest[i]
        if not w.startswith("--") or len(w) < 3:
            raise TournamentError(f"entrant {spec!r}: expected --option, got {w!r}")
        key = w[2:]
        if "=" in key:
            key, value = key.split("=", 1)
            i += 1
        elif i + 1 < len(rest) and not rest[i + 1].startswith("--"):
            value = rest[i + 1]
            i += 2
        else:
            value = "true"
            i += 1
        options[key.replace("-", "_")] = True if value == "true" else _option_value(value)
    return name, options


def parse_entrant(spec: str) -> tuple[str | None, str, dict[str, Any]]:
    """``[NAME=]BOT [--option value ...]`` -> (name or None, bot, options)."""
    name: str | None = None
    head = spec.split(" ", 1)[0]
    if "=" in head and not head.startswith("--"):
        name, spec = spec.split("=", 1)
        name = name.strip()
        if not name:
            raise TournamentError(f"entrant {spec!r}: empty name before '='")
    bot, options = parse_bot(spec)
    return name, bot, options


def bot_label(bot: str, options: dict[str, Any]) -> str:
    if not options:
        return bot
    return bot + "(" + ",".join(f"{k}={v}" for k, v in sorted(options.items())) + ")"


@dataclass(frozen=True)
class TournamentSpec:
    variant: str
    sets: int
    entrants: tuple[Entrant, ...]
    seed: int = 0
    deals_per_set: int = 0  # 0: one pass cycle of the variant (standard: 4; Kierki: 7)
    draws: int = 200
    filler: str = "heuristic"

    def base_rules(self) -> Rules:
        return find_variant(self.variant)

    def rules(self) -> Rules:
        """One deal set: the variant with a fixed number of deals (the same for every rotation)."""
        base = self.base_rules()
        n = self.set_deals()
        return base.replace(name=f"{base.name}-{n}deals", end=EndRule.DEALS, deals=n)

    def set_deals(self) -> int:
        if self.deals_per_set > 0:
            return self.deals_per_set
        base = self.base_rules()
        return max(len(base.pass_cycle), len(base.deal_kinds) if base.deal_kinds != (0,) else 1)

    @property
    def lowest_wins(self) -> bool:
        return self.base_rules().lowest_wins

    def seated(self) -> list[Entrant]:
        """The entrants plus the house bots that fill the last table."""
        out = list(self.entrants)
        k = 1
        while len(out) % 4:
            out.append(Entrant(f"house-{self.filler}-{k}", bot=self.filler, filler=True))
            k += 1
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "sets": self.sets,
            "seed": self.seed,
            "deals_per_set": self.set_deals(),
            "draws": self.draws,
            "filler": self.filler,
            "entrants": [e.to_json() for e in self.entrants],
        }


def make_spec(
    variant: str,
    sets: int,
    bots: Sequence[str],
    externals: Sequence[str] = (),
    seed: int = 0,
    deals_per_set: int = 0,
    filler: str = "heuristic",
    tokens: Sequence[str] = (),
) -> TournamentSpec:
    """A spec from command-line style entrants: ``bots`` as ``[NAME=]BOT [--opt v]``,
    ``externals`` as names with ``tokens`` (one each, in order)."""
    try:
        find_variant(variant)
    except KeyError as e:
        raise TournamentError(str(e)) from None
    if not 1 <= sets <= MAX_SETS:
        raise TournamentError(f"deal sets must be 1..{MAX_SETS}, got {sets}")
    if deals_per_set < 0 or deals_per_set > 52:
        raise TournamentError(f"deals per set must be 0..52, got {deals_per_set}")
    if len(tokens) != len(externals):
        raise TournamentError("every external entrant needs a token")
    entrants: list[Entrant] = []
    taken: set[str] = set()

    def unique(name: str) -> str:
        out, k = name, 2
        while out in taken:
            out, k = f"{name}#{k}", k + 1
        taken.add(out)
        return out

    for spec in bots:
        name, bot, options = parse_entrant(spec)
        entrants.append(Entrant(unique(name or bot_label(bot, options)), bot=bot, options=options))
    for ext, token in zip(externals, tokens):
        ext = ext.strip()
        if not ext or len(ext) > 64:
            raise TournamentError(f"an external entrant needs a name of 1..64 characters, got {ext!r}")
        if ext in taken:
            raise TournamentError(f"two entrants are named {ext!r}")
        taken.add(ext)
        entrants.append(Entrant(ext, external=True, token_digest=token_digest(token)))
    if len(entrants) < 2:
        raise TournamentError("a tournament needs at least two entrants")
    if len(entrants) > MAX_ENTRANTS:
        raise TournamentError(f"at most {MAX_ENTRANTS} entrants")
    return TournamentSpec(variant, sets, tuple(entrants), seed, deals_per_set, filler=filler)


# ------------------------------------------------------------------ the schedule
def set_seed(seed: int, index: int) -> int:
    """The seed that deals deal set ``index`` (every table and rotation of the set uses it)."""
    digest = hashlib.sha256(f"moonshot-tournament:{seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 2


@dataclass(frozen=True)
class ScheduledGame:
    """One game: deal set ``set_index`` at table ``table`` in rotation ``rotation``; ``seats``
    are entrant indices (into :meth:`TournamentSpec.seated`) in chair order N, E, S, W."""

    number: int
    set_index: int
    table: int
    rotation: int
    seats: tuple[int, int, int, int]
    seed: int


def draw_tables(n: int, sets: int, seed: int, draws: int = 200) -> list[list[tuple[int, ...]]]:
    """For each set, a partition of ``range(n)`` (n a multiple of 4) into tables of four."""
    if n % 4:
        raise ValueError("pad the entrants to a multiple of four first")
    meets = [[0] * n for _ in range(n)]
    out: list[list[tuple[int, ...]]] = []
    for s in range(sets):
        rng = random.Random(f"moonshot-tournament-tables:{seed}:{s}")
        best: list[tuple[int, ...]] | None = None
        best_cost = math.inf
        # fewer tries for big fields: each costs ~n^2, and the greedy fill does most of the work
        tries = max(4, min(draws, 20000 // (n * n))) if n > 4 else 1
        for _ in range(tries):
            tables = _greedy_partition(n, meets, rng)
            cost = sum(
                (meets[a][b] + 1) ** 2 - meets[a][b] ** 2 for t in tables for a, b in itertools.combinations(t, 2)
            )
            if cost < best_cost:
                best, best_cost = tables, cost
        assert best is not None
        for t in best:
            for a, b in itertools.combinations(t, 2):
                meets[a][b] += 1
                meets[b][a] += 1
        out.append(sorted(best))
    return out


def _greedy_partition(n: int, meets: list[list[int]], rng: random.Random) -> list[tuple[int, ...]]:
    """Tables of four in a random order, each filled greedily: its first entrant (the first left
    in the shuffled order) takes, one at a time, whoever left has met the table least."""
    left = list(range(n))
    rng.shuffle(left)
    tables = []
    while left:
        table = [left.pop(0)]
        while len(table) < 4:
            pick = min(range(len(left)), key=lambda i: sum(meets[left[i]][x] for x in table))
            table.append(left.pop(pick))
        tables.append(tuple(sorted(table)))
    return tables


def schedule(spec: TournamentSpec) -> list[ScheduledGame]:
    """Every game of the tournament, in the order it is played (set by set)."""
    n = len(spec.seated())
    games: list[ScheduledGame] = []
    for s, tables in enumerate(draw_tables(n, spec.sets, spec.seed, spec.draws)):
        seed = set_seed(spec.seed, s)
        for t, group in enumerate(tables):
            for r in range(4):
                # entrant group[j] holds hand (j + r) % 4 in rotation r
                seats = tuple(group[(i - r) % 4] for i in range(4))
                games.append(ScheduledGame(len(games), s, t, r, seats, seed))  # type: ignore[arg-type]
    return games


def pair_meetings(games: Sequence[ScheduledGame], n: int) -> list[list[int]]:
    """How many deal sets each pair shared a table (counted once per set)."""
    meets = [[0] * n for _ in range(n)]
    for g in games:
        if g.rotation:
            continue
        for a, b in itertools.combinations(g.seats, 2):
            meets[a][b] += 1
            meets[b][a] += 1
    return meets


# ------------------------------------------------------------------ results
@dataclass
class SeatResult:
    """What one chair of a finished game did."""

    entrant: int
    points: list[int]  # per deal
    total: int
    won: float  # 1 / number of winners when it won, else 0
    moons_shot: int = 0
    moons_conceded: int = 0
    timeouts: int = 0
    errors: int = 0  # illegal or unreadable answers
    forced: int = 0  # actions the server chose (timeouts, errors, a substitute playing)
    no_show: bool = False  # an external entrant that did not come: the server played its chair
    substituted: bool = False  # played (at least in part) by the server's policy


@dataclass
class GameResult:
    number: int
    set_index: int
    table: int
    rotation: int
    game_id: str
    seats: list[SeatResult]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> GameResult:
        seats = [SeatResult(**s) for s in d["seats"]]
        return cls(d["number"], d["set_index"], d["table"], d["rotation"], d["game_id"], seats)


def held_hands(results: Sequence[GameResult], sets: int) -> dict[tuple[int, int], list[int]]:
    """(entrant, set) -> the chairs it held in that set's games (fairness: each of 0..3 once)."""
    out: dict[tuple[int, int], list[int]] = {}
    for g in results:
        for chair, s in enumerate(g.seats):
            out.setdefault((s.entrant, g.set_index), []).append(chair)
    return {k: sorted(v) for k, v in out.items()}


def _fmt(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 4)


def standings(spec: TournamentSpec, results: Sequence[GameResult]) -> dict[str, Any]:
    """Per-entrant statistics (ranked), paired differences and meeting counts, as JSON data."""
    seated = spec.seated()
    n = len(spec.entrants)
    per_deal: list[list[int]] = [[] for _ in seated]
    # (set, deal) -> entrant -> its points on that deal in each rotation it played it
    cells: dict[tuple[int, int], dict[int, list[int]]] = {}
    wins = [0.0] * len(seated)
    games = [0] * len(seated)
    counters = {k: [0] * len(seated) for k in ("moons_shot", "moons_conceded", "timeouts", "errors", "forced")}
    no_shows = [0] * len(seated)
    substituted = [0] * len(seated)
    for g in results:
        for s in g.seats:
            e = s.entrant
            games[e] += 1
            wins[e] += s.won
            per_deal[e].extend(s.points)
            for k in counters:
                counters[k][e] += getattr(s, k)
            no_shows[e] += s.no_show
            substituted[e] += s.substituted
            for d, p in enumerate(s.points):
                cells.setdefault((g.set_index, d), {}).setdefault(e, []).append(p)
    low = spec.lowest_wins
    rows = []
    for e in range(n):
        m, lo, hi = mean_ci(per_deal[e])
        ent = spec.entrants[e]
        rows.append(
            {
                "entrant": ent.name,
                "kind": "external" if ent.external else "bot",
                "bot": bot_label(ent.bot, ent.options) if ent.bot else None,
                "games": games[e],
                "deals": len(per_deal[e]),
                "mean_points_per_deal": _fmt(m),
                "ci_low": _fmt(lo),
                "ci_high": _fmt(hi),
                "win_rate": _fmt(wins[e] / games[e]) if games[e] else None,
                **{k: v[e] for k, v in counters.items()},
                "no_shows": no_shows[e],
                "games_substituted": substituted[e],
            }
        )
    paired: list[dict[str, Any]] = []
    for a in range(n):
        for b in range(n):
            if a == b:
                continue
            diffs = []
            for by in cells.values():
                if a in by and b in by:
                    diffs.append(sum(by[a]) / len(by[a]) - sum(by[b]) / len(by[b]))
            m, lo, hi = mean_ci(diffs)
            paired.append(
                {
                    "entrant": spec.entrants[a].name,
                    "opponent": spec.entrants[b].name,
                    "deals": len(diffs),
                    "difference": _fmt(m),
                    "ci_low": _fmt(lo),
                    "ci_high": _fmt(hi),
                }
            )

    def key(r: dict[str, Any]) -> tuple[int, float]:
        m = r["mean_points_per_deal"]
        if m is None:
            return (1, 0.0)
        return (0, m if low else -m)

    rows.sort(key=key)
    for rank, r in enumerate(rows, 1):
        r["rank"] = rank
    return {
        "format": FORMAT,
        "lower_is_better": low,
        "games_played": len(results),
        "entrants": rows,
        "paired": paired,
    }


def running_standings(spec: TournamentSpec, results: Sequence[GameResult]) -> list[dict[str, Any]]:
    """After each game (in play order): each entrant's mean points per deal so far."""
    totals = [0] * len(spec.entrants)
    deals = [0] * len(spec.entrants)
    out = []
    for g in sorted(results, key=lambda r: r.number):
        for s in g.seats:
            if s.entrant < len(totals):
                totals[s.entrant] += sum(s.points)
                deals[s.entrant] += len(s.points)
        out.append(
            {
                "game": g.number + 1,
                "means": {
                    spec.entrants[e].name: (totals[e] / deals[e] if deals[e] else None) for e in range(len(totals))
                },
            }
        )
    return out


CSV_COLUMNS = (
    "rank",
    "entrant",
    "kind",
    "bot",
    "games",
    "deals",
    "mean_points_per_deal",
    "ci_low",
    "ci_high",
    "win_rate",
    "moons_shot",
    "moons_conceded",
    "timeouts",
    "errors",
    "forced",
    "no_shows",
    "games_substituted",
)


def standings_csv(table: dict[str, Any]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for row in table["entrants"]:
        w.writerow(row)
    return buf.getvalue()


def standings_png(data: dict[str, Any]) -> bytes:
    """The running standings (mean points per deal after each game) as a PNG (the plot extra)."""
    try:
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator
    except ImportError:
        raise TournamentError("plots need matplotlib: pip install 'moonshot[plot]'") from None
    import io

    # a Figure of its own, not pyplot's global state: the server draws in a worker thread
    running = data.get("running", [])
    fig = Figure(figsize=(9.5, 4.5))
    ax = fig.subplots()
    names = [r["entrant"] for r in data["standings"]["entrants"]]
    for name in names:
        xs = [p["game"] for p in running if p["means"].get(name) is not None]
        ys = [p["means"][name] for p in running if p["means"].get(name) is not None]
        ax.plot(xs, ys, label=name, marker="." if len(xs) < 40 else None)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("games played")
    ax.set_ylabel("mean points per deal")
    better = "lower" if data["standings"]["lower_is_better"] else "higher"
    ax.set_title(f"tournament {data['id']} ({data['variant']}): running standings, {better} is better")
    if names:
        # beside the axes, never over the lines (inside, "best" still covered the first games)
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    return buf.getvalue()


__all__ = [
    "CSV_COLUMNS",
    "FORMAT",
    "Entrant",
    "GameResult",
    "ScheduledGame",
    "SeatResult",
    "TournamentError",
    "TournamentSpec",
    "bot_label",
    "draw_tables",
    "held_hands",
    "make_spec",
    "pair_meetings",
    "parse_bot",
    "parse_entrant",
    "running_standings",
    "schedule",
    "set_seed",
    "standings",
    "standings_csv",
    "standings_png",
    "token_digest",
]
