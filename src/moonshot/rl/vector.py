# mypy: disable-error-code="no-any-return"
"""Batched simulation: many games as arrays, stepped by the rules kernel's per-game loops.

:class:`BatchedHearts` holds ``n`` games as arrays — hands, passes and taken cards as ``uint64`` card
masks, trick state as small integer arrays — and every operation on the games an index array names
(dealing, passing, legal-play masks, playing a card, ending tricks and deals, scoring) is one call
into :mod:`moonshot.rl._jit`: loops over those games on the rules kernel's functions
(:mod:`moonshot.kernel`), compiled by numba where it is installed (the ``rl`` extra), the same
source as plain Python otherwise (``backend=`` chooses; ``MOONSHOT_NO_NUMBA=1`` turns numba off).
It plays the rules whose play and scoring fit those arrays, judged from the rules' fields by
:func:`batchable` (of the named variants: ``standard``, ``gym`` and ``omnibus``); for the others
use ``gymnasium.vector.SyncVectorEnv`` over :class:`~moonshot.rl.env.HeartsEnv`.

:class:`HeartsVectorEnv` is a ``gymnasium.vector.VectorEnv`` on top of it: one learning seat per game
against uniformly random opponents, the same ``Dict`` observation and ``Discrete(53)`` actions as
:class:`~moonshot.rl.env.HeartsEnv` (observations are bit-for-bit the same encoding), rewards at the end
of each deal, and next-step autoreset. :meth:`BatchedHearts.play_random_deals` plays whole deals with
four random seats for benchmarks and self-play statistics.

Deals come from a NumPy ``Generator`` (not the engine's per-deal streams), so a batched game is not
the scalar game of the same seed; what is guaranteed (and tested) is that the same deals and the
same actions give the same points, totals and observations as :class:`moonshot.core.engine.Game`.
"""

from __future__ import annotations

import importlib.util
import os
import types
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from moonshot.core.cards import JACK_DIAMONDS, QUEEN_SPADES
from moonshot.core.rules import EndRule, MoonRule, Rules
from moonshot.core.variants import find_variant
from moonshot.rl.env import OBS_BOUND, observation_space
from moonshot.rl.observation import _CARDS_END, _O, N_ACTIONS, OBS_SIZE, OBSERVATION_SLICES, rules_block

HAVE_NUMBA = not os.environ.get("MOONSHOT_NO_NUMBA") and importlib.util.find_spec("numba") is not None
BACKENDS = ("auto", "numba", "python", "numpy")  # "numpy": the earlier name of "python"
# the loops BatchedHearts and HeartsVectorEnv call (moonshot.rl._jit), as plain Python for backend="python"
_ENTRIES = (
    "deal_hands", "env_reset", "env_step", "legal_games", "observe", "pass_games", "play_games",
    "play_random_deals", "points_taken",
)  # fmt: skip
_python_loops: Any = None


def _loops(backend: str) -> tuple[bool, Any]:
    """Whether ``backend`` runs compiled, and the loops it runs: :mod:`moonshot.rl._jit` itself, or
    its functions as plain Python (the same source; with numba installed, for ``backend="python"``)."""
    global HAVE_NUMBA, _python_loops
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend == "numba" and not HAVE_NUMBA:
        raise ValueError("backend='numba' needs numba: pip install 'moonshot[rl]'")
    from moonshot.kernel._jit import NUMBA, python_of  # (imports numba where it is installed and allowed)
    from moonshot.rl import _jit

    if not NUMBA:  # e.g. a numba that does not support the installed NumPy
        if backend == "numba":
            raise ValueError("backend='numba': numba does not import here")
        HAVE_NUMBA = False
        return False, _jit
    if backend in ("python", "numpy"):
        if _python_loops is None:
            _python_loops = types.SimpleNamespace(**{name: python_of(getattr(_jit, name)) for name in _ENTRIES})
        return False, _python_loops
    return True, _jit


# the observation offsets _jit.observe takes, after _CARDS_END
_JIT_SLOTS = (
    "trick_leader", "voids", "points", "totals", "cards_left", "pass_direction", "phase", "trick_no",
    "hearts_broken", "led_suits", "card_points", "deal_no",
)  # fmt: skip
_OBS_OFFSETS = np.array([_CARDS_END, *(_O[k] for k in _JIT_SLOTS)], dtype=np.int64)


PASS, PLAY, OVER = 0, 1, 2
U64 = np.uint64
_ONE = U64(1)
_BIT = np.left_shift(_ONE, np.arange(64, dtype=U64))

_SUIT_BITS = U64(0x1FFF)
_POP13 = np.array([v.bit_count() for v in range(8192)], dtype=np.int64)


def _select_table() -> np.ndarray:
    """``_SELECT13[v * 13 + r]``: the rank of the r-th (from 0) set bit of the 13-bit value ``v``."""
    table = np.zeros((8192, 13), dtype=np.int64)
    for v in range(8192):
        ranks = [b for b in range(13) if v >> b & 1]
        table[v, : len(ranks)] = ranks
    return table.reshape(-1)


_SELECT13 = _select_table()  # flat: index v * 13 + r
KEYED_MAX = 512  # random_cards draws one key per card for at most this many masks
# uniforms per deal in play_random_deals: 52 dealing keys, 12 pass picks (seat-major), 52 plays
_DEAL_UNIFORMS = 116
_OFFSETS = np.array([1, 3, 2, 0], dtype=np.int64)  # pass offsets by deal index mod 4: left, right, across, hold

if hasattr(np, "bitwise_count"):

    def popcount(x: np.ndarray) -> np.ndarray:
        return np.bitwise_count(x).astype(np.int64)

else:  # NumPy < 2.0

    def popcount(x: np.ndarray) -> np.ndarray:
        x = x.astype(U64)
        x = x - ((x >> U64(1)) & U64(0x5555555555555555))
        x = (x & U64(0x3333333333333333)) + ((x >> U64(2)) & U64(0x3333333333333333))
        x = (x + (x >> U64(4))) & U64(0x0F0F0F0F0F0F0F0F)
        return ((x * U64(0x0101010101010101)) >> U64(56)).astype(np.int64)


def batchable(rules: Rules) -> bool:
    """The batched simulator plays these rules: decided by the rules' fields, never their name. The
    card play must be the rules kernel's (:func:`moonshot.kernel.covers`) and, on top, what the
    batched arrays hold: the left/right/across/hold cycle of three cards, the two of clubs leading,
    the standard first trick, hearts broken by a heart, the others-plus moon, no doubling, nines,
    claims or early end, a game to a score, one scoring table of hearts 1 and the queen 13 (and at
    most the jack of diamonds besides)."""
    from moonshot.kernel import covers

    std = Rules()
    same_play = (
        rules.pass_cycle == std.pass_cycle
        and rules.pass_count == 3
        and rules.two_of_clubs_leads
        and rules.first_trick_forbidden == std.first_trick_forbidden
        and not rules.first_trick_forced_order
        and rules.hearts_must_be_broken
        and not rules.queen_breaks_hearts
        and rules.moon is MoonRule.OTHERS_PLUS
        and rules.ten_of_clubs_multiplier == 1
        and not rules.negative_scores
        and rules.lowest_wins
        and not (rules.exposable or rules.chargeable or rules.charging or rules.nines or rules.claims)
        and not rules.early_end
        and rules.end is EndRule.SCORE
        and len(rules.scoring) == 1
        and rules.scoring[0].per_trick == 0
        and not rules.scoring[0].trick_number_points
    )
    pts = rules.scoring[0].card_points
    hearts_queen = all(pts[c] == 1 for c in range(26, 39)) and pts[QUEEN_SPADES] == 13
    others = {c: p for c, p in enumerate(pts) if p and not (26 <= c < 39 or c == QUEEN_SPADES)}
    return covers(rules) and same_play and hearts_queen and set(others) <= {JACK_DIAMONDS}


def _check_rules(rules: Rules) -> None:
    if not batchable(rules):
        raise ValueError(
            f"the batched simulator does not play {rules.name}'s rules (moonshot.rl.vector.batchable says "
            "which it plays); use gymnasium.vector.SyncVectorEnv over HeartsEnv for them"
        )


def random_cards(rng: np.random.Generator, masks: np.ndarray, k: int = 1) -> np.ndarray:
    """``k`` distinct uniformly random cards from each (non-empty) card mask: ``(n, k)`` int64, ``(n,)`` for k=1.

    One pick draws r uniformly below the number of cards and finds the r-th card with two lookup
    tables (cards per 13-bit suit, and the r-th card of a suit), instead of a random key per card.
    """
    masks = np.asarray(masks, dtype=U64)
    if k != 1:
        out = np.empty((masks.shape[0], k), dtype=np.int64)
        m = masks.copy()
        for j in range(k):
            c = random_cards(rng, m)
            out[:, j] = c
            m &= ~_BIT[c]
        return out
    n = masks.shape[0]
    if n <= KEYED_MAX:  # few games: one random key per card is fewer NumPy calls
        bits = np.unpackbits(masks.view(np.uint8).reshape(n, 8), axis=1, bitorder="little")[:, :52]
        return np.argmax(rng.random((n, 52)) + bits, axis=1)
    return _rank_cards(masks, rng.random((n,)))


def _rank_cards(masks: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Card ``int(u * |mask|)`` (from 0, ascending) of each mask, for uniforms ``u`` in [0, 1).

    By suit: count each suit's cards with a table, find the suit holding the r-th card, then
    the card within the suit with a second table (column by column: cheaper than axis ops).
    """
    s0, s1 = masks & _SUIT_BITS, (masks >> U64(13)) & _SUIT_BITS
    s2, s3 = (masks >> U64(26)) & _SUIT_BITS, masks >> U64(39)
    c1 = _POP13[s0]
    c2 = c1 + _POP13[s1]
    c3 = c2 + _POP13[s2]
    r = (u * (c3 + _POP13[s3])).astype(np.int64)
    k = (r >= c1).astype(np.int64) + (r >= c2) + (r >= c3)
    suit = np.choose(k, (s0, s1, s2, s3)).astype(np.int64)
    before = np.choose(k, (0, c1, c2, c3))
    return 13 * k + _SELECT13[suit * 13 + r - before]


class BatchedHearts:
    """``n`` games of a batched variant as arrays. All methods take an index array of the games to touch.

    ``backend``: ``"numba"`` runs the loops compiled (the ``rl`` extra), ``"python"`` as plain Python
    (the same source, for installs without numba and for checking the compiled code against;
    ``"numpy"`` is its earlier name, still accepted), ``"auto"`` (default) compiled when numba is
    installed. Both give the same results for the same generator state.
    """

    def __init__(self, n: int, variant: str = "standard", max_score: int | None = None, backend: str = "auto") -> None:
        self.rules = find_variant(variant, **({"max_score": max_score} if max_score else {}))
        _check_rules(self.rules)
        self.numba, self._loops = _loops(backend)
        self.n = n
        self.hands = np.zeros((n, 4), dtype=U64)
        self.passed = np.zeros((n, 4), dtype=U64)
        self.received = np.zeros((n, 4), dtype=U64)
        self.taken = np.zeros((n, 4), dtype=U64)
        self.trick_bits = np.zeros((n, 4), dtype=U64)  # the card each seat put on the current trick
        self.played = np.zeros(n, dtype=U64)
        self.trick_len = np.zeros(n, dtype=np.int64)
        self.trick_no = np.zeros(n, dtype=np.int64)  # 1..13 in play, 0 while passing
        self.leader = np.zeros(n, dtype=np.int64)
        self.turn = np.zeros(n, dtype=np.int64)
        self.led_suit = np.zeros(n, dtype=np.int64)
        self.best = np.zeros(n, dtype=np.int64)
        self.winner = np.zeros(n, dtype=np.int64)
        self.hearts_broken = np.zeros(n, dtype=bool)
        self.voids = np.zeros((n, 4), dtype=np.int64)
        self.led_suits = np.zeros(n, dtype=np.int64)
        self.totals = np.zeros((n, 4), dtype=np.int64)
        self.deal_index = np.zeros(n, dtype=np.int64)
        self.phase = np.full(n, OVER, dtype=np.int64)
        self.last_points = np.zeros((n, 4), dtype=np.int64)

    def arrays(self) -> tuple[np.ndarray, ...]:
        """The game arrays in the order the loops take them (``_jit``: ``st[0]`` ... ``st[19]``)."""
        return (
            self.hands, self.passed, self.received, self.taken, self.trick_bits, self.played,
            self.trick_len, self.trick_no, self.leader, self.turn, self.led_suit, self.best, self.winner,
            self.hearts_broken, self.voids, self.led_suits, self.totals, self.deal_index, self.phase,
            self.last_points,
        )  # fmt: skip

    def scoring_args(self) -> tuple[np.ndarray, int, bool]:
        """The rules kernel's table of the rules (scoring), the score limit and whether reaching it
        ends the game."""
        from moonshot.kernel import rules_table

        r = self.rules
        return rules_table(r, 0), int(r.score_limit), bool(r.limit_inclusive)

    # ------------------------------------------------------------------ dealing
    @staticmethod
    def shuffled_hands(rng: np.random.Generator, k: int) -> np.ndarray:
        """``k`` random deals as ``(k, 4)`` uint64 hands."""
        return _hands_from_keys(rng.random((k, 52)))

    def new_games(self, idx: np.ndarray, hands: np.ndarray) -> None:
        self.totals[idx] = 0
        self.deal_index[idx] = 0
        self.start_deals(idx, hands)

    def start_deals(self, idx: np.ndarray, hands: np.ndarray) -> None:
        """Deal ``hands`` (``(len(idx), 4)`` uint64) to games ``idx`` (their deal index is kept)."""
        self._loops.deal_hands(self.arrays(), _games(idx), _masks4(hands))

    def pass_offset(self, idx: np.ndarray) -> np.ndarray:
        return _OFFSETS[self.deal_index[idx] % 4]

    def pass_cards(self, idx: np.ndarray, passes: np.ndarray) -> None:
        """All four seats of games ``idx`` pass ``passes`` (``(k, 4)`` uint64, three cards each)."""
        self._loops.pass_games(self.arrays(), _games(idx), _masks4(passes))

    # ------------------------------------------------------------------ play
    def legal(self, idx: np.ndarray) -> np.ndarray:
        """The legal plays of the seat to play in games ``idx`` (uint64 masks)."""
        idx = _games(idx)
        out = np.empty(idx.size, dtype=U64)
        self._loops.legal_games(self.arrays(), idx, out)
        return out

    def play(self, idx: np.ndarray, cards: np.ndarray) -> np.ndarray:
        """The seat to play in each game ``idx`` plays ``cards``; returns the games whose deal just ended."""
        idx = _games(idx)
        ended = np.empty(idx.size, dtype=np.int64)
        cards = np.ascontiguousarray(cards, dtype=np.int64).reshape(idx.size)
        e = self._loops.play_games(self.arrays(), idx, cards, *self.scoring_args(), ended)
        return ended[:e]

    def deal_points(self, idx: np.ndarray) -> np.ndarray:
        """Raw points each seat has taken so far this deal (before the moon rule): ``(k, 4)``."""
        idx = _games(idx)
        out = np.empty((idx.size, 4), dtype=np.int64)
        self._loops.points_taken(self.arrays(), self.scoring_args()[0], idx, out)
        return out

    def winners(self, idx: np.ndarray) -> np.ndarray:
        """``(k, 4)`` booleans: the seats with the lowest total."""
        t = self.totals[idx]
        return t == t.min(axis=1, keepdims=True)

    # ------------------------------------------------------------------ whole deals
    def play_random_deals(self, rng: np.random.Generator, deals: int) -> np.ndarray:
        """Play ``deals`` whole deals with four uniformly random seats, ``n`` at a time.

        Deal ``i`` of a batch uses pass direction ``i % 4``. Returns the ``(deals, 4)`` points.
        Each batch draws ``(k, 116)`` uniforms first (per deal: 52 dealing keys, 12 pass picks, 52
        plays), so both backends play the same deals. The games' arrays are not touched except
        ``last_points`` and ``totals`` (the batch's points).
        """
        out = []
        left = deals
        rt = self.scoring_args()[0]
        while left > 0:
            k = min(left, self.n)
            u = rng.random((k, _DEAL_UNIFORMS))
            pts = np.empty((k, 4), dtype=np.int64)
            self._loops.play_random_deals(u, np.arange(k) % 4, rt, pts)
            self.last_points[:k] = pts
            self.totals[:k] = pts
            out.append(pts)
            left -= k
        return np.concatenate(out)


def _games(idx: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(idx, dtype=np.int64).reshape(-1)


def _masks4(masks: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(masks, dtype=U64).reshape(-1, 4)


def _hands_from_keys(keys: np.ndarray) -> np.ndarray:
    """Deals from ``(k, 52)`` random keys: the cards of the 13 smallest keys to seat 0, and so on."""
    k = keys.shape[0]
    perm = np.argsort(keys, axis=1)
    return np.bitwise_or.reduce(_BIT[perm].reshape(k, 4, 13), axis=2)


class HeartsVectorEnv(VectorEnv[dict[str, np.ndarray], np.ndarray, np.ndarray]):
    """``num_envs`` games, each one learning seat against three uniformly random opponents."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}  # noqa: RUF012 (the base classes declare it so)

    def __init__(
        self,
        num_envs: int = 64,
        variant: str = "standard",
        seat: int = 0,
        max_score: int | None = None,
        opponents: str = "random",
        illegal_action: str = "random",
        render_mode: str | None = None,
        backend: str = "auto",
    ) -> None:
        if opponents != "random":
            raise ValueError("the batched env plays against random opponents; use SyncVectorEnv over HeartsEnv")
        if illegal_action not in ("random", "raise"):
            raise ValueError(f"illegal_action must be 'random' or 'raise', got {illegal_action!r}")
        if render_mode is not None:
            raise ValueError("the batched env does not render")
        self.render_mode = render_mode
        self.core = BatchedHearts(num_envs, variant, max_score, backend)
        self.rules = self.core.rules
        self.num_envs = num_envs
        self.seat = seat
        self.illegal_action = illegal_action
        self.single_observation_space = observation_space()
        self.single_action_space = spaces.Discrete(N_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.observation_slices: dict[str, slice] = dict(OBSERVATION_SLICES)
        self._rng = np.random.default_rng()
        self._selected = np.zeros(num_envs, dtype=U64)
        self._needs_reset = np.zeros(num_envs, dtype=bool)
        self._all = np.arange(num_envs, dtype=np.int64)
        self._block = np.clip(rules_block(self.rules, 0), -OBS_BOUND, OBS_BOUND)

    # ------------------------------------------------------------------ VectorEnv API
    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        core = self.core
        core._loops.env_reset(core.arrays(), self._rng, self.seat, self._selected, *core.scoring_args())
        self._needs_reset[:] = False
        obs = self._observe()
        return obs, {"action_mask": obs["action_mask"].copy()}

    def step(
        self, actions: np.ndarray
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One step of every game in one call into the loops (``_jit.env_step``): games that ended last
        step start again, the learner's cards (an illegal one replaced by a random legal card, or
        raised), passing, the random opponents up to the learner's next decision, deal ends."""
        core = self.core
        actions = np.ascontiguousarray(actions, dtype=np.int64).reshape(self.num_envs)
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        illegal = np.zeros(self.num_envs, dtype=bool)
        status = core._loops.env_step(
            core.arrays(), self._rng, self.seat, actions, self._needs_reset, self._selected,
            self.illegal_action == "raise", rewards, illegal, *core.scoring_args(),
        )  # fmt: skip
        if status < 0:
            live = self._all[~self._needs_reset]
            bad = [int(g) for g in live if not self._legal_action(int(g), int(actions[g]))]
            raise ValueError(f"illegal actions in sub-environments {bad}")
        terminated = np.zeros(self.num_envs, dtype=bool)
        live = ~self._needs_reset
        terminated[live] = core.phase[live] == OVER
        self._needs_reset[:] = terminated
        obs = self._observe()
        infos: dict[str, Any] = {"action_mask": obs["action_mask"].copy(), "illegal_action": illegal}
        return obs, rewards, terminated, np.zeros(self.num_envs, dtype=bool), infos

    # ------------------------------------------------------------------ internals
    def _legal_action(self, g: int, a: int) -> bool:
        core = self.core
        ph = int(core.phase[g])
        if ph == PASS:
            mask = int(core.hands[g, self.seat] & ~self._selected[g])
        elif ph == PLAY:
            mask = int(core.legal(np.array([g]))[0])
        else:
            mask = 0
        return 0 <= a < 52 and bool(mask >> a & 1)

    def _observe(self) -> dict[str, np.ndarray]:
        obs = np.empty((self.num_envs, OBS_SIZE), dtype=np.float32)
        masks = np.empty((self.num_envs, N_ACTIONS), dtype=np.int8)
        core = self.core
        core._loops.observe(
            core.arrays(), self._all, self.seat, self._selected, self._block, _OBS_OFFSETS,
            core.scoring_args()[0], OBS_BOUND, obs, masks,
        )  # fmt: skip
        return {"observation": obs, "action_mask": masks}


def encode_batch(
    core: BatchedHearts, idx: np.ndarray, me: int, selected: np.ndarray, block: np.ndarray | None = None
) -> np.ndarray:
    """Observations of seat ``me`` in games ``idx``: the layout of :func:`moonshot.rl.observation.encode`
    (``selected[g]``: the cards seat ``me`` has chosen to pass so far in game ``g``)."""
    idx = _games(idx)
    obs = np.empty((idx.size, OBS_SIZE), dtype=np.float32)
    masks = np.empty((idx.size, N_ACTIONS), dtype=np.int8)
    blk = np.asarray(rules_block(core.rules, 0) if block is None else block, dtype=np.float32)
    core._loops.observe(
        core.arrays(), idx, me, np.ascontiguousarray(selected, dtype=U64), blk, _OBS_OFFSETS,
        core.scoring_args()[0], np.inf, obs, masks,
    )  # fmt: skip
    return obs


__all__ = ["BatchedHearts", "HeartsVectorEnv", "batchable", "encode_batch", "popcount", "random_cards"]
