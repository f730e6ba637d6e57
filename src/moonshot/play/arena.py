"""The arena: duplicate single deals between a candidate bot and a field, with paired statistics.

Deal ``i`` of a run is one deal of the variant (its rules with ``end=DEALS, deals=1``), shuffled
from seed ``seed + i``, with the pass direction (and Kierki's contract) that the variant's cycle
gives deal ``i``. Each deal is played four times, the candidate in each seat and the field in the
other three (or, head to head, ``A B A B`` and ``B A B A``), so every policy meets the same cards
from every seat. The paired difference of deal ``i`` is the candidate's mean score over its
seats minus the field's mean over theirs; its mean over deals, with a normal-approximation 95%
confidence interval, is the headline number.

This module is pure apart from an optional ``clock`` callable (used only to report the time per
move); the CLI adds processes, a progress bar, a JSON file and a plot around it.
"""

from __future__ import annotations

import inspect
import math
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from moonshot.bots.base import Bot
from moonshot.bots.registry import make_bot
from moonshot.core.actions import Claim
from moonshot.core.engine import Game
from moonshot.core.events import DealEnded
from moonshot.core.rules import EndRule, PassDirection, Rules
from moonshot.core.variants import find_variant
from moonshot.core.views import seat_view
from moonshot.play.sim import answer_claims

RESULTS_FORMAT = "moonshot.play.arena/1"
Clock = Callable[[], float]


@dataclass(frozen=True)
class ArenaConfig:
    """What an arena run plays. ``head_to_head``: play ``candidate`` 2 v 2 against ``field``."""

    variant: str = "standard"
    deals: int = 100
    candidate: str = "search"
    field: str = "heuristic"
    seed: int = 0
    head_to_head: bool = False
    think_ms: int | None = None  # for bots that take a time budget (search)
    simulations: int | None = None  # for bots that take a playout budget (search)
    passing: bool = True  # False: every deal is played as dealt (no passing)
    worlds: int | None = None  # for bots that grow a tree in each of a number of worlds (pimc, search:root=tree)
    cpu_time: bool = False  # time budgets count the process's CPU time, not the wall clock

    def seatings(self) -> list[tuple[str, str, str, str]]:
        a, b = self.candidate, self.field
        if self.head_to_head:
            return [(a, b, a, b), (b, a, b, a)]
        return [tuple(a if s == r else b for s in range(4)) for r in range(4)]  # type: ignore[misc]


def deal_rules(base: Rules, index: int, passing: bool = True) -> Rules:
    """The rules of arena deal ``index``: one deal, with the direction and contract of deal ``index``
    (``passing=False``: no passing whatever the variant's cycle says)."""
    n = len(base.pass_cycle)
    k = index % n
    kinds = base.deal_kinds
    return base.replace(
        end=EndRule.DEALS,
        deals=1,
        pass_cycle=base.pass_cycle[k:] + base.pass_cycle[:k] if passing else (PassDirection.HOLD,),
        deal_kinds=(kinds[index % len(kinds)],),
    )


# bots only the arena seats (never the registry: no server, lobby or client can name them):
# ``oracle`` sees every hand of the game it watches (moonshot.bots.oracle), a measuring stick
ARENA_ONLY: dict[str, str] = {"oracle": "moonshot.bots.oracle:OracleBot"}


def _target(name: str) -> str:
    """``module:Class`` of bot ``name`` in the registry or :data:`ARENA_ONLY` ("" if none)."""
    from moonshot.bots.registry import BOT_REGISTRY

    return BOT_REGISTRY.get(name) or ARENA_ONLY.get(name, "")


def bot_options(name: str, config: ArenaConfig, clock: Clock | None = None) -> dict[str, Any]:
    """The budget options ``name``'s constructor accepts (so ``--think-ms`` reaches search bots only);
    ``clock`` is handed to bots that take one (with ``config.cpu_time``: a CPU-time clock)."""
    target = _target(name)
    module_name, _, cls_name = target.partition(":")
    try:
        from importlib import import_module

        params = inspect.signature(getattr(import_module(module_name), cls_name)).parameters
    except (ImportError, AttributeError, ValueError):
        return {}
    out: dict[str, Any] = {}
    if "think_ms" in params and config.think_ms is not None:
        out["think_ms"] = config.think_ms
    if "simulations" in params and config.simulations is not None:
        out["simulations"] = config.simulations
    if "worlds" in params and config.worlds is not None:
        out["worlds"] = config.worlds
    if "clock" in params and clock is not None:
        out["clock"] = clock
    return out


def bot_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"search:rollout=alert,inference=0"`` → ``("search", {"rollout": "alert", "inference": 0})``.

    A bot name may carry constructor options after a colon (numbers, ``true``/``false``, words),
    so two settings of one bot can meet in the arena; the full spec names its seats. A bare word
    names a preset of the bot: ``"pimc:classic"`` → ``("pimc", {"preset": "classic"})``. A level
    (``level:3``) is a name of its own: ``make_bot`` resolves it. ``pass_by=SPEC`` (any bot: the bot
    that makes the pass) takes the rest of the spec, its own options included, so it comes last:
    ``"search:think_ms=5,pass_by=pimc:classic"`` → ``("search", {"think_ms": 5, "pass_by":
    "pimc:classic"})``; :func:`arena_bot` makes that bot as it makes a seat's.
    """
    from moonshot.bots.registry import LEVEL_PREFIX

    if spec.strip().startswith(LEVEL_PREFIX):
        return spec.strip(), {}
    name, _, rest = spec.partition(":")
    options: dict[str, Any] = {}
    head, passer = rest, ""
    found = PASS_BY.search(rest)
    if found:
        head, passer = rest[: found.start()], rest[found.end() :].strip()
        if not passer:
            raise ValueError(f"bad bot option in {spec!r}: pass_by needs a bot spec")
    for item in filter(None, (p.strip() for p in head.split(","))):
        key, eq, text = item.partition("=")
        if not eq and "preset" not in options and key.strip() in _presets(name.strip()):
            options["preset"] = key.strip()
            continue
        if not eq or not key.strip():
            raise ValueError(f"bad bot option {item!r} in {spec!r} (want key=value)")
        value: Any = text.strip()
        if value in ("true", "false"):
            value = value == "true"
        else:
            for conv in (int, float):
                try:
                    value = conv(value)
                    break
                except ValueError:
                    continue
        options[key.strip().replace("-", "_")] = value
    if passer:
        options["pass_by"] = passer
    return name.strip(), options


# the option that names another bot to make the pass; its spec runs to the end of the spec
PASS_BY = re.compile(r"(?:^|,)\s*pass[-_]by\s*=")


def _presets(name: str) -> tuple[str, ...]:
    """The presets bot ``name`` offers (its class's ``presets``; none for most bots)."""
    module_name, _, cls_name = _target(name).partition(":")
    try:
        from importlib import import_module

        return tuple(getattr(getattr(import_module(module_name), cls_name), "presets", ()))
    except (ImportError, AttributeError, ValueError):
        return ()


def arena_bot(spec: str, config: ArenaConfig, clock: Clock | None = None) -> Bot:
    """The bot a seat spec names, with the run's budget options and the spec's own."""
    name, options = bot_spec(spec)
    if isinstance(options.get("pass_by"), str):  # the passing bot, made as a seat's
        options["pass_by"] = arena_bot(options["pass_by"], config, clock)
    budget = bot_options(name, config, clock)
    if "preset" in options:  # a preset fixes its own budget: only the clock is handed on
        budget = {k: v for k, v in budget.items() if k == "clock"}
    if name in ARENA_ONLY:
        passer = options.pop("pass_by", None)
        bot = _arena_only(name, {**budget, **options})
        if passer is not None:
            from moonshot.bots.composite import PassingBy

            bot = PassingBy(bot, passer)
    else:
        bot = make_bot(name, **{**budget, **options})
    from moonshot.bots.search import SearchBot

    # its greedy rollouts run in the rules kernel once it is loaded (a passing bot's: made above)
    if isinstance(getattr(bot, "cards", bot), SearchBot):
        from moonshot.kernel import warm_up

        warm_up()
    return bot


def _arena_only(name: str, options: dict[str, Any]) -> Bot:
    """A bot of :data:`ARENA_ONLY`, with its spec as :func:`~moonshot.bots.registry.make_bot` gives one."""
    from importlib import import_module

    from moonshot.bots.registry import bot_spec as spec_text

    module_name, _, cls_name = ARENA_ONLY[name].partition(":")
    cls = getattr(import_module(module_name), cls_name)
    bot: Bot = cls(**options)
    bot.spec = spec_text(name, options, cls)  # type: ignore[attr-defined]
    return bot


@dataclass
class DealResult:
    """One arena deal: the scores of every seating (seat order N, E, S, W)."""

    index: int
    seed: int
    direction: str
    kind: int
    seatings: list[tuple[str, ...]]
    points: list[tuple[int, ...]]
    moons: list[int | None]
    think_s: dict[str, float] = field(default_factory=dict)  # per policy: seconds deciding
    moves: dict[str, int] = field(default_factory=dict)  # per policy: decisions made

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["seatings"] = [list(s) for s in self.seatings]
        d["points"] = [list(p) for p in self.points]
        return d


def play_deal(
    config: ArenaConfig, index: int, clock: Clock | None = None, bot_clock: Clock | None = None
) -> DealResult:
    """Play arena deal ``index`` in every seating (``bot_clock``: the clock time-budgeted bots read)."""
    base = find_variant(config.variant)
    rules = deal_rules(base, index, config.passing)
    seed = config.seed + index
    result = DealResult(index, seed, rules.pass_cycle[0].value, rules.deal_kinds[0], [], [], [])
    bots: dict[str, Bot] = {}
    for name in {config.candidate, config.field}:
        bots[name] = arena_bot(name, config, bot_clock)
        result.think_s[name] = 0.0
        result.moves[name] = 0
    for k, seating in enumerate(config.seatings()):
        game = Game(rules, seed)
        rngs = [random.Random(f"moonshot-arena:{seed}:{k}:{s}") for s in range(4)]
        for bot in bots.values():
            watch = getattr(bot, "watch", None)  # (an arena-only oracle reads this game's hands)
            if watch is not None:
                watch(game)
        while not game.over:
            seat = game.to_act()[0]
            name = seating[seat]
            view = seat_view(game, seat)
            if clock is not None:
                t0 = clock()
                action = bots[name].act(view, rngs[seat])
                result.think_s[name] += clock() - t0
            else:
                action = bots[name].act(view, rngs[seat])
            result.moves[name] += 1
            game.apply(action)
            if type(action) is Claim and game.claimer is None and not game.over:
                answer_claims(game, seat, [bots[n] for n in seating], rngs)  # concurrent claims
        end = next(e for e in reversed(game.log) if isinstance(e, DealEnded))
        result.seatings.append(seating)
        result.points.append(tuple(end.points))
        result.moons.append(end.moon)
    return result


# ---------------------------------------------------------------------- statistics
def mean_ci(xs: Sequence[float]) -> tuple[float, float, float]:
    """Mean and the normal-approximation 95% interval (nan bounds below two samples)."""
    n = len(xs)
    if n == 0:
        return math.nan, math.nan, math.nan
    m = sum(xs) / n
    if n < 2:
        return m, math.nan, math.nan
    var = sum((x - m) ** 2 for x in xs) / (n - 1)
    h = 1.96 * math.sqrt(var / n)
    return m, m - h, m + h


def side_means(r: DealResult, a: str) -> tuple[float, float]:
    """The mean score of ``a``'s seats and of the other seats, over every seating of deal ``r``."""
    mine: list[int] = []
    theirs: list[int] = []
    for seating, pts in zip(r.seatings, r.points):
        for s in range(4):
            (mine if seating[s] == a else theirs).append(pts[s])
    return sum(mine) / len(mine), sum(theirs) / len(theirs)


def paired_differences(results: Sequence[DealResult], candidate: str) -> list[float]:
    """Per deal: the candidate's mean score minus the field's mean score on the same cards."""
    out = []
    for r in results:
        a, b = side_means(r, candidate)
        out.append(a - b)
    return out


@dataclass
class ArenaSummary:
    deals: int
    candidate: str
    field: str
    candidate_mean: float
    field_mean: float
    difference: float
    ci_low: float
    ci_high: float
    lowest_rate: float  # share of seatings where the candidate had the best score (ties shared)
    moons_shot: int  # by a candidate seat
    moons_conceded: int  # by a field seat
    ms_per_move: dict[str, float]
    higher_is_better: bool

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def summarise(results: Sequence[DealResult], config: ArenaConfig) -> ArenaSummary:
    rules = find_variant(config.variant)
    higher = rules.negative_scores  # Trend: scores are negative, higher is better
    a = config.candidate
    cand: list[float] = []
    fld: list[float] = []
    lowest = 0.0
    seatings = 0
    shot = conceded = 0
    think: dict[str, float] = {}
    moves: dict[str, int] = {}
    for r in results:
        ca, fa = side_means(r, a)
        cand.append(ca)
        fld.append(fa)
        for seating, pts, moon in zip(r.seatings, r.points, r.moons):
            seatings += 1
            best = max(pts) if higher else min(pts)
            tied = [s for s in range(4) if pts[s] == best]
            lowest += sum(1 for s in tied if seating[s] == a) / len(tied)
            if moon is not None:
                if seating[moon] == a:
                    shot += 1
                else:
                    conceded += 1
        for name, t in r.think_s.items():
            think[name] = think.get(name, 0.0) + t
            moves[name] = moves.get(name, 0) + r.moves.get(name, 0)
    diff, lo, hi = mean_ci(paired_differences(results, a))
    n = len(results)
    return ArenaSummary(
        deals=n,
        candidate=a,
        field=config.field,
        candidate_mean=sum(cand) / n if n else math.nan,
        field_mean=sum(fld) / n if n else math.nan,
        difference=diff,
        ci_low=lo,
        ci_high=hi,
        lowest_rate=lowest / seatings if seatings else math.nan,
        moons_shot=shot,
        moons_conceded=conceded,
        ms_per_move={k: 1000.0 * think[k] / moves[k] if moves.get(k) else math.nan for k in think},
        higher_is_better=higher,
    )


def running_difference(results: Sequence[DealResult], candidate: str) -> list[tuple[int, float, float, float]]:
    """(deals so far, mean difference, 95% low, 95% high) after each deal, for plotting."""
    diffs = paired_differences(results, candidate)
    out = []
    total = total_sq = 0.0
    for n, d in enumerate(diffs, 1):
        total += d
        total_sq += d * d
        m = total / n
        if n > 1:
            var = max(0.0, (total_sq - n * m * m) / (n - 1))
            h = 1.96 * math.sqrt(var / n)
        else:
            h = math.nan
        out.append((n, m, m - h, m + h))
    return out


def results_json(config: ArenaConfig, summary: ArenaSummary, results: Sequence[DealResult]) -> dict[str, Any]:
    return {
        "format": RESULTS_FORMAT,
        "config": asdict(config),
        "summary": summary.to_json(),
        "deals": [r.to_json() for r in results],
    }


__all__ = [
    "RESULTS_FORMAT",
    "ArenaConfig",
    "ArenaSummary",
    "DealResult",
    "arena_bot",
    "bot_options",
    "bot_spec",
    "deal_rules",
    "mean_ci",
    "paired_differences",
    "play_deal",
    "results_json",
    "running_difference",
    "side_means",
    "summarise",
]
