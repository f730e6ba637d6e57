"""The rules kernel: card play of one deal as numbers, compiled by numba, for search and the batched env.

The engine (:mod:`moonshot.core.engine`) is the reference: every phase, events, views, validation. The
kernel keeps only what the play of a deal and its score depend on, as flat int64 arrays, so whole
rollouts and UCT trees run as machine code (:mod:`moonshot.kernel._core`, one source that runs
uncompiled when numba is missing or ``MOONSHOT_NO_NUMBA=1`` is set).

Rules are data here too: :func:`rules_table` turns one :class:`~moonshot.core.rules.Rules` value and
deal kind into a table of numbers (card points, per-trick and trick-number points, the first-trick
restrictions and forced order, hearts breaking, the queen breaking them, the moon rule and its
points, the ten of clubs' multiplier, the score's sign, the charged-card rule, nines, the early
end); charged and exposed cards double their own effect as :func:`moonshot.core.rules.score_deal` says.
Every variant's card play fits (:func:`covers` says so per ``Rules``); passing, charging and
exposing stay with the engine.

Start-up: compiled code is cached on disk (``cache=True``); :func:`warm_up` loads (or compiles)
every entry point once, so the first decision does not pay for it.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from moonshot.core.cards import TWO_CLUBS, CardSet
from moonshot.core.rules import MoonRule, Rules

from . import _core
from ._core import (
    EPSILON_GREEDY,
    GREEDY,
    R_LEN,
    RANDOM,
    S_BROKEN,
    S_CHARGED,
    S_DONE,
    S_DOUBLED,
    S_HANDS,
    S_LED,
    S_LEN,
    S_PLAYED,
    S_PTS,
    S_TAKEN,
    S_TNW,
    S_TRICK,
    S_TRICK_LEN,
    S_TRICK_NO,
    S_TRICKS_WON,
    S_TSEATS,
    S_TURN,
)
from ._jit import NUMBA

Array = Any  # a numpy int64 array (numpy's own types would add nothing the tests do not check)

_MOON_CODES = {
    MoonRule.NONE: _core.MOON_NONE,
    MoonRule.OTHERS_PLUS: _core.MOON_OTHERS_PLUS,
    MoonRule.SHOOTER_MINUS: _core.MOON_SHOOTER_MINUS,
    MoonRule.TREND: _core.MOON_TREND,
    MoonRule.NEGATE: _core.MOON_NEGATE,
}

POLICIES: dict[str, int] = {"random": RANDOM, "greedy": GREEDY, "heuristic": GREEDY, "noisy": EPSILON_GREEDY}


def covers(rules: Rules) -> bool:
    """The kernel can play this ``Rules``' deals (every field it reads fits its table)."""
    return len(rules.first_trick_forced_order) <= _core.R_MAX_FORCED and rules.moon in _MOON_CODES


_TABLES: dict[tuple[int, int], tuple[Rules, Array]] = {}
_WARM: list[bool] = []  # (one entry once warm_up has run)


def rules_table(rules: Rules, kind: int = 0) -> Array:
    """The numbers the kernel reads for deals of ``kind`` under ``rules`` (made once per value)."""
    key = (id(rules), kind)
    hit = _TABLES.get(key)
    if hit is not None and hit[0] is rules:
        return hit[1]
    if not covers(rules):
        raise ValueError(f"the rules kernel cannot play {rules.name}")
    sc = rules.scoring_for(kind)
    cp = sc.card_points
    rt = np.zeros(R_LEN, dtype=np.int64)
    rt[_core.R_CP : _core.R_CP + 52] = cp
    rt[_core.R_PER_TRICK] = sc.per_trick
    for number, points in sc.trick_number_points:
        if not 1 <= number <= 13:
            raise ValueError(f"trick number {number} out of range")
        rt[_core.R_TNP + number] += points
    rt[_core.R_LAST_NUMBERED] = max((n for n, _ in sc.trick_number_points), default=0)
    rt[_core.R_TWO_CLUBS_LEADS] = int(rules.two_of_clubs_leads)
    rt[_core.R_FORBIDDEN] = rules.first_trick_forbidden
    rt[_core.R_FORCED : _core.R_FORCED + _core.R_MAX_FORCED] = -1
    for i, c in enumerate(rules.first_trick_forced_order):
        rt[_core.R_FORCED + i] = c
    rt[_core.R_MUST_BREAK] = int(rules.hearts_must_be_broken)
    rt[_core.R_QUEEN_BREAKS] = int(rules.queen_breaks_hearts)
    rt[_core.R_MOON] = _MOON_CODES[rules.moon]
    rt[_core.R_MOON_POINTS] = rules.moon_points
    rt[_core.R_TC_MULT] = rules.ten_of_clubs_multiplier
    rt[_core.R_NEGATIVE] = int(rules.negative_scores)
    rt[_core.R_CHARGED_RULE] = int(rules.charged_card_rule)
    rt[_core.R_NINES] = int(rules.nines)
    rt[_core.R_EARLY_END] = int(rules.early_end)
    rt[_core.R_POINT_CARDS] = sum(1 << c for c in range(52) if cp[c])
    rt[_core.R_BAD] = sum(1 << c for c in range(52) if cp[c] > 0)
    rt[_core.R_GOOD] = sum(1 << c for c in range(52) if cp[c] < 0)
    rt.setflags(write=False)
    if len(_TABLES) > 256:
        _TABLES.clear()
    _TABLES[key] = (rules, rt)
    return rt


def new_state(
    rt: Array,
    hands: list[CardSet],
    *,
    turn: int,
    trick_no: int = 1,
    trick: list[int] | tuple[int, ...] = (),
    tseats: list[int] | tuple[int, ...] = (),
    played: CardSet = 0,
    led_suits: int = 0,
    broken: bool = False,
    taken: list[CardSet] | tuple[CardSet, ...] = (0, 0, 0, 0),
    tricks_won: list[int] | tuple[int, ...] = (0, 0, 0, 0),
    trick_numbers_won: list[int] | tuple[int, ...] = (0, 0, 0, 0),
    charged: CardSet = 0,
    doubled: CardSet = 0,
) -> Array:
    """A kernel state: the deal at any point of play (mid-trick too), every hand known."""
    st = np.zeros(S_LEN, dtype=np.int64)
    for s in range(4):
        st[S_HANDS + s] = hands[s]
        st[S_TAKEN + s] = taken[s]
        st[S_TRICKS_WON + s] = tricks_won[s]
        st[S_TNW + s] = trick_numbers_won[s]
        st[S_PTS + s] = _core.card_points(rt, taken[s])
    st[S_TURN] = turn
    st[S_TRICK_NO] = trick_no
    st[S_TRICK_LEN] = len(trick)
    for i, (c, s) in enumerate(zip(trick, tseats, strict=True)):
        st[S_TRICK + i] = c
        st[S_TSEATS + i] = s
    st[S_PLAYED] = played
    st[S_LED] = led_suits
    st[S_BROKEN] = int(broken)
    st[S_CHARGED] = charged
    st[S_DOUBLED] = doubled
    return st


def state_of(
    hands: list[CardSet],
    turn: int,
    trick_no: int,
    trick: list[int],
    tseats: list[int],
    played: CardSet,
    led_suits: int,
    broken: bool,
    taken: list[CardSet],
    tricks_won: list[int],
    trick_numbers_won: list[int],
    points: list[int],
    charged: CardSet,
    doubled: CardSet,
) -> Array:
    """:func:`new_state` from a position's numbers, all given (``points``: the card points each
    seat has taken), in one array construction: the fast way in from a Python deal."""
    pad = [0] * (8 - len(trick))
    return np.array(
        [
            *hands,
            *taken,
            *tricks_won,
            *trick_numbers_won,
            *points,
            turn,
            trick_no,
            len(trick),
            *trick,
            *pad,
            *tseats,
            *pad,
            played,
            led_suits,
            int(broken),
            charged,
            doubled,
            0,
        ],
        dtype=np.int64,
    )


def is_warm() -> bool:
    """:func:`warm_up` has run in this process (the compiled code is loaded)."""
    return bool(_WARM)


def start_state(
    rules: Rules, kind: int, hands: list[CardSet], leader: int, doubled: CardSet = 0, charged: CardSet = 0
) -> Array:
    """A deal about to have its first card led (after passing, charging and exposing)."""
    if rules.two_of_clubs_leads:
        leader = next(s for s in range(4) if hands[s] >> TWO_CLUBS & 1)
    return new_state(rules_table(rules, kind), hands, turn=leader, charged=charged, doubled=doubled)


def seed_rng(rng: random.Random) -> Array:
    """A kernel generator (four 32-bit words, not all zero) seeded by one draw from ``rng``."""
    x = rng.getrandbits(128) or 1
    return np.array([(x >> (32 * i)) & 0xFFFFFFFF for i in range(4)], dtype=np.int64)


def legal(rt: Array, st: Array) -> CardSet:
    """The cards the seat to play may play."""
    return int(_core.legal(rt, st))


def play(rt: Array, st: Array, card: int) -> None:
    """Play ``card`` for the seat to play (legality is the caller's job)."""
    _core.play(rt, st, card)


def done(st: Array) -> bool:
    return bool(st[S_DONE])


def turn(st: Array) -> int:
    return int(st[S_TURN])


def scores(rt: Array, st: Array) -> tuple[int, ...]:
    """A finished deal's points per seat (the variant's own sign)."""
    out = np.zeros(4, dtype=np.int64)
    _core.scores(rt, st, out)
    return tuple(int(x) for x in out)


def costs(rt: Array, st: Array) -> tuple[int, ...]:
    """A finished deal's points per seat as a cost: lower is better in every variant."""
    out = np.zeros(4, dtype=np.int64)
    _core.costs(rt, st, out)
    return tuple(int(x) for x in out)


def greedy_card(rt: Array, st: Array) -> int:
    """The greedy rollout policy's card for the seat to play."""
    return int(_core.greedy(rt, st, st[S_TURN], _core.legal(rt, st)))


def epsilon32(eps: float) -> int:
    """``eps`` as the kernel's threshold on a 32-bit draw."""
    return min(1 << 32, max(0, round(eps * (1 << 32))))


def rollouts(rt: Array, st: Array, n: int, policy: str, rng_state: Array, eps: float = 0.1) -> Array:
    """``n`` rollouts from ``st`` (unchanged) with ``policy`` (``random``, ``greedy``/``heuristic``,
    ``noisy``: greedy with a random card a fraction ``eps`` of the time): an ``(n, 4)`` array of
    costs. ``rng_state`` (:func:`seed_rng`) advances."""
    out = np.zeros((n, 4), dtype=np.int64)
    _core.rollouts(rt, st, n, POLICIES[policy], epsilon32(eps), rng_state, out)
    return out


def greedy_rollout(rt: Array, st: Array) -> tuple[int, ...]:
    """One greedy rollout of ``st`` (changed: played to its end); its costs. No random numbers."""
    out = np.zeros(4, dtype=np.int64)
    _core.rollout(rt, st, GREEDY, 0, _NO_RNG, out)
    return (int(out[0]), int(out[1]), int(out[2]), int(out[3]))


ALL_BUT_FOUR = ((1 << 52) - 1) & ~sum(0xF << 13 * s for s in range(4))  # (warm_up's small endgame)
_NO_RNG = np.ones(4, dtype=np.int64)  # (the greedy policy never draws)


def uct(
    rt: Array,
    st: Array,
    root_cards: CardSet,
    iterations: int,
    exploration: float,
    policy: str,
    rng_state: Array,
    scale: float,
    eps: float = 0.1,
) -> tuple[Array, Array, float]:
    """One world's UCT tree (:func:`moonshot.kernel._core.uct`): each root card's visits and
    summed relative value (52 each), and the root's summed value."""
    child_n = np.zeros(52, dtype=np.float64)
    child_total = np.zeros(52, dtype=np.float64)
    root_total = _core.uct(
        rt,
        st,
        root_cards,
        iterations,
        exploration,
        POLICIES[policy],
        epsilon32(eps),
        rng_state,
        scale,
        child_n,
        child_total,
    )
    return child_n, child_total, float(root_total)


def solve(rt: Array, st: Array, me: int, weight: float = 1.0, table_bits: int | None = None) -> float:
    """The exact value of the deal ``st`` for ``me`` against the other three
    (:func:`moonshot.kernel._core.solve`: the search deal's :func:`moonshot.bots.search.solve`, compiled).
    ``table_bits``: the transposition table's size, 2**bits entries, 0 for none; by default none
    below four cards a hand (there it costs more than it saves), else 2**12 to 2**16 as the hands
    grow (``python benchmarks/search_speed.py`` times it)."""
    if table_bits is None:
        most = max(int(st[S_HANDS + s]).bit_count() for s in range(4))
        table_bits = 0 if most < 4 else min(16, 12 + 2 * (most - 4))
    return float(_core.solve(rt, st, me, weight, table_bits))


def warm_up() -> None:
    """Load (or compile, the first time on a machine) every entry point, on a tiny deal. Once per
    process (later calls return at once); a server calls it in a worker thread when it first seats a
    bot that uses the kernel (``runtime.table.BotSeat``), the arena before its deals."""
    if _WARM:
        return
    rules = Rules()
    hands = [sum(1 << c for c in range(13 * s, 13 * s + 13)) for s in range(4)]
    rt = rules_table(rules, 0)
    st = start_state(rules, 0, hands, 0)
    rng = seed_rng(random.Random(0))
    legal(rt, st)
    greedy_card(rt, st)
    rollouts(rt, st, 1, "noisy", rng)
    uct(rt, st, legal(rt, st), 2, 0.4, "noisy", rng, 26.0)
    done_state = st.copy()
    _core.rollout(rt, done_state, GREEDY, 0, rng, np.zeros(4, dtype=np.int64))
    scores(rt, done_state)
    _core.random_deals(rt, 1, GREEDY, 0, rng, np.zeros((1, 4), dtype=np.int64))
    greedy_rollout(rt, start_state(rules, 0, hands, 0))
    solve(rt, new_state(rt, [h & 0xF << 13 * s for s, h in enumerate(hands)], turn=0, played=ALL_BUT_FOUR), 0)
    greedy_rollout(rt, state_of(hands, 0, 1, [], [], 0, 0, False, [0] * 4, [0] * 4, [0] * 4, [0] * 4, 0, 0))
    _WARM.append(True)


__all__ = [
    "NUMBA",
    "POLICIES",
    "S_BROKEN",
    "S_DONE",
    "S_DOUBLED",
    "S_HANDS",
    "S_LED",
    "S_PLAYED",
    "S_TAKEN",
    "S_TRICK",
    "S_TRICK_LEN",
    "S_TRICK_NO",
    "S_TURN",
    "costs",
    "covers",
    "done",
    "epsilon32",
    "greedy_card",
    "greedy_rollout",
    "is_warm",
    "legal",
    "new_state",
    "play",
    "rollouts",
    "rules_table",
    "scores",
    "seed_rng",
    "solve",
    "start_state",
    "state_of",
    "turn",
    "uct",
    "warm_up",
]
