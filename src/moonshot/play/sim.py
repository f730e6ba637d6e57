"""Self-play: play games between bot policies, fast, reproducibly, and summarise them.

A game is fully described by ``(variant, seed, seat policies, rotation)``: the seed fixes every
deal, and each seat's bot gets its own RNG derived from the same numbers, so any game can be
played again bit for bit. Duplicate play runs each seed four times with the policies rotated
through the seats, so every policy meets the same cards from every seat and luck cancels out.

This module is pure (no I/O); the CLI adds processes, progress bars and files around it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from moonshot.bots.base import Bot, answer_claim
from moonshot.bots.heuristic import HeuristicBot
from moonshot.bots.random import RandomBot
from moonshot.bots.registry import make_bot
from moonshot.core.actions import AcceptClaim, Action, Claim, RejectClaim, action_from_dict, action_to_dict
from moonshot.core.engine import Game, replay
from moonshot.core.events import DealEnded
from moonshot.core.rules import Rules
from moonshot.core.variants import find_variant
from moonshot.core.views import seat_view

try:
    from mypy_extensions import mypyc_attr
except ImportError:  # pragma: no cover - without mypy nothing is compiled, and the mark has no use

    def mypyc_attr(*attrs: str, **kwattrs: object) -> Any:  # type: ignore[misc]
        return lambda cls: cls


RECORD_FORMAT = "moonshot.game/2"
# /1 records came from moonshot before deals were keyed with BLAKE2b: their seeds deal other cards
# now, so their actions cannot be replayed.
OLD_RECORD_FORMATS = {"moonshot.game/1": "it was written before moonshot changed how a seed deals its cards"}


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled, it may still be subclassed in Python
@dataclass
class GameRecord:
    """One finished game: enough to replay it and to score it."""

    variant: str
    seed: int
    rotation: int
    seats: tuple[str, ...]  # policy name per seat, in seat order N, E, S, W
    actions: list[dict[str, Any]]
    deals: int
    scores: tuple[int, ...]  # final totals per seat
    deal_points: list[tuple[int, ...]]  # per deal, per seat
    moons: list[int | None]  # per deal: the seat that shot the moon
    winners: tuple[int, ...]
    options: dict[str, int] = field(default_factory=dict)  # find_variant options (max_score)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": RECORD_FORMAT,
            "variant": self.variant,
            "options": self.options,
            "seed": self.seed,
            "rotation": self.rotation,
            "seats": list(self.seats),
            "deals": self.deals,
            "scores": list(self.scores),
            "deal_points": [list(p) for p in self.deal_points],
            "moons": self.moons,
            "winners": list(self.winners),
            "actions": self.actions,
        }


def rotated(seats: Sequence[str], rotation: int) -> tuple[str, ...]:
    """Seat ``i`` gets policy ``seats[(i - rotation) % 4]``."""
    return tuple(seats[(i - rotation) % 4] for i in range(4))


def play_game(
    rules: Rules,
    seed: int,
    seats: Sequence[str],
    rotation: int = 0,
    bots: Sequence[Bot] | None = None,
    options: dict[str, int] | None = None,
    keep_actions: bool = True,
) -> GameRecord:
    """Play one game to the end with the given seat policies (rotated by ``rotation``).

    ``keep_actions=False``: the record's ``actions`` stay empty (a run that neither exports nor
    replays its games: only their results are summed)."""
    rec, actions = play_game_actions(rules, seed, seats, rotation, bots, options)
    if keep_actions:
        rec.actions = [action_to_dict(a) for a in actions]
    return rec


def play_out(game: Game, players: Sequence[Bot], rngs: Sequence[random.Random]) -> None:
    """Play ``game`` to its end: each seat's bot acts on its own view with its own RNG, and a
    blocking claim is answered by the others at once."""
    while not game.over:
        seat = game.to_act()[0]
        bot = players[seat]
        view = seat_view(game, seat)
        # the same ``act``, called directly on moonshot's own bots: compiled, a call through
        # the Bot protocol looks the method up by name and parses its arguments every time
        kind = type(bot)
        if kind is RandomBot:
            action = cast(RandomBot, bot).act(view, rngs[seat])
        elif kind is HeuristicBot:
            action = cast(HeuristicBot, bot).act(view, rngs[seat])
        else:
            action = bot.act(view, rngs[seat])
        game.apply(action)
        if type(action) is Claim and game.claimer is None and not game.over:
            answer_claims(game, seat, players, rngs)


def play_game_actions(
    rules: Rules,
    seed: int,
    seats: Sequence[str],
    rotation: int = 0,
    bots: Sequence[Bot] | None = None,
    options: dict[str, int] | None = None,
) -> tuple[GameRecord, list[Action]]:
    """:func:`play_game` with the game's actions as they are, and the record's ``actions`` left
    empty: for whoever writes them without dicts (``simulate --export``: ``actions_json``)."""
    names = rotated(seats, rotation)
    players = list(bots) if bots is not None else [make_bot(n) for n in names]
    rngs = [random.Random(f"moonshot-bot:{seed}:{rotation}:{s}") for s in range(4)]
    game = Game(rules, seed, record=False)  # no event log: nobody reads it (deals_ended has the results)
    play_out(game, players, rngs)
    ends = game.deals_ended
    record = GameRecord(
        variant=rules.name,
        seed=seed,
        rotation=rotation,
        seats=names,
        actions=[],
        deals=len(ends),
        scores=tuple(game.totals),
        deal_points=[e.points for e in ends],
        moons=[e.moon for e in ends],
        winners=game.winners,
        options=dict(options or {}),
    )
    return record, game.actions


def answer_claims(game: Game, claimer: int, players: Sequence[Bot], rngs: Sequence[random.Random]) -> None:
    """The other three answer ``claimer``'s concurrent claim at once, clockwise (nobody is
    asked to: the game goes on without them), each as its bot judges it."""
    for i in range(1, 4):
        s = (claimer + i) % 4
        if not game.claiming >> claimer & 1:
            return  # rejected (or it ended the hand)
        ok = answer_claim(players[s], seat_view(game, s), claimer, rngs[s])
        game.apply(AcceptClaim(s, claimer) if ok else RejectClaim(s, claimer))


def tasks(seeds: Iterable[int], duplicate: bool) -> list[tuple[int, int]]:
    """(seed, rotation) pairs to play."""
    return [(s, r) for s in seeds for r in (range(4) if duplicate else (0,))]


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled, it may still be subclassed in Python
@dataclass
class PolicyStats:
    """Per-policy results, aggregated over every seat it sat in."""

    name: str
    deal_points: list[int] = field(default_factory=list)
    games: int = 0
    wins: float = 0.0  # a tie for the win counts as a share
    moons: int = 0

    @property
    def mean(self) -> float:
        return sum(self.deal_points) / len(self.deal_points) if self.deal_points else math.nan

    @property
    def ci95(self) -> float:
        """Half-width of the normal-approximation 95% confidence interval of the mean."""
        n = len(self.deal_points)
        if n < 2:
            return math.nan
        m = self.mean
        var = sum((x - m) ** 2 for x in self.deal_points) / (n - 1)
        return 1.96 * math.sqrt(var / n)

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else math.nan


def summarise(records: Iterable[GameRecord]) -> dict[str, PolicyStats]:
    stats: dict[str, PolicyStats] = {}
    for rec in records:
        share = 1.0 / len(rec.winners) if rec.winners else 0.0
        for seat, name in enumerate(rec.seats):
            st = stats.setdefault(name, PolicyStats(name))
            st.games += 1
            st.deal_points.extend(p[seat] for p in rec.deal_points)
            if seat in rec.winners:
                st.wins += share
            st.moons += sum(1 for m in rec.moons if m == seat)
    return stats


@dataclass
class ReplayResult:
    line: int
    ok: bool
    message: str


def verify_record(data: Any, line: int = 0) -> ReplayResult:
    """Replay one exported game and check it gives the recorded deals and scores."""
    try:
        if not isinstance(data, dict):
            raise ValueError("a record must be a JSON object")
        fmt = data.get("format", RECORD_FORMAT)
        if fmt in OLD_RECORD_FORMATS:
            raise ValueError(f"format {fmt!r} is no longer replayable: {OLD_RECORD_FORMATS[fmt]}")
        if fmt != RECORD_FORMAT:
            raise ValueError(f"unknown record format {fmt!r}")
        options = data.get("options") or {}
        rules = find_variant(str(data["variant"]), **{str(k): int(v) for k, v in options.items()})
        seed = int(data["seed"])
        actions = [action_from_dict(a) for a in data["actions"]]
        game = replay(rules, seed, actions)
    except Exception as e:  # a bad line is reported, never fatal for the others
        return ReplayResult(line, False, f"cannot replay: {e}")
    if not game.over:
        return ReplayResult(line, False, f"the actions end before the game does ({len(actions)} actions)")
    deals = sum(1 for e in game.log if isinstance(e, DealEnded))
    want_scores = [int(x) for x in data.get("scores", [])]
    if list(game.totals) != want_scores:
        return ReplayResult(line, False, f"scores differ: replayed {game.totals}, recorded {want_scores}")
    if "deals" in data and int(data["deals"]) != deals:
        return ReplayResult(line, False, f"deal count differs: replayed {deals}, recorded {data['deals']}")
    return ReplayResult(line, True, f"seed {seed}: {deals} deals, scores {game.totals}")


ProgressHook = Callable[[GameRecord], None]

__all__ = [
    "GameRecord",
    "PolicyStats",
    "ReplayResult",
    "play_game",
    "play_game_actions",
    "play_out",
    "rotated",
    "summarise",
    "tasks",
    "verify_record",
]
