# mypy: disable-error-code="no-any-return"
"""Batched simulation: many games stepped at once with NumPy arrays (no Python loop over games).

:class:`BatchedHearts` holds ``n`` games as arrays — hands, passes and taken cards as ``uint64`` card
masks, trick state as small integer arrays — and every operation (dealing, passing, legal-play masks,
playing a card, ending tricks and deals, scoring) is a handful of vectorised NumPy operations over the
games it is given. With numba installed (the ``rl`` extra), whole random deals and
:meth:`HeartsVectorEnv.step` run instead in compiled per-game loops (:mod:`moonshot.rl._jit`) that give
the same results for the same generator state (``backend=`` chooses; ``MOONSHOT_NO_NUMBA=1`` turns
them off). It plays the rules whose play and scoring fit that fast path, judged from the rules'
fields by :func:`batchable` (of the named variants: ``standard``, ``gym`` and ``omnibus``); for the
others use ``gymnasium.vector.SyncVectorEnv`` over :class:`~moonshot.rl.env.HeartsEnv`.

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
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from moonshot.core.cards import HEARTS_MASK, JACK_DIAMONDS, QUEEN_SPADES, SUIT_MASKS
from moonshot.core.rules import EndRule, MoonRule, Rules
from moonshot.core.variants import find_variant
from moonshot.rl.env import OBS_BOUND, observation_space
from moonshot.rl.observation import (
    _CARDS_END,
    _O,
    N_ACTIONS,
    N_CARD_SETS,
    OBS_SIZE,
    OBSERVATION_SLICES,
    rules_block,
    unpack_card_sets,
)

_jit: Any = None  # moonshot.rl._jit once a numba-backed BatchedHearts is made (importing numba takes a while)
HAVE_NUMBA = not os.environ.get("MOONSHOT_NO_NUMBA") and importlib.util.find_spec("numba") is not None
BACKENDS = ("auto", "numba", "numpy")


def _use_numba(backend: str) -> bool:
    global _jit, HAVE_NUMBA
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend == "numpy" or not HAVE_NUMBA:
        if backend == "numba":
            raise ValueError("backend='numba' needs numba: pip install 'moonshot[rl]'")
        return False
    if _jit is None:
        try:  # the optional compiled kernels; the same results as the NumPy path
            from moonshot.rl import _jit as kernels
        except ImportError:  # e.g. a numba that does not support the installed NumPy
            if backend == "numba":
                raise
            HAVE_NUMBA = False
            return False
        _jit = kernels
    return True


# the observation offsets _jit.observe takes, after _CARDS_END
_JIT_SLOTS = (
    "trick_leader", "voids", "points", "totals", "cards_left", "pass_direction", "phase", "trick_no",
    "hearts_broken", "led_suits", "card_points", "deal_no",
)  # fmt: skip


PASS, PLAY, OVER = 0, 1, 2
U64 = np.uint64
_ONE = U64(1)
_HEARTS = U64(HEARTS_MASK)
_NOT_HEARTS = U64(((1 << 64) - 1) ^ HEARTS_MASK)
_FIRST_FORBIDDEN = U64(HEARTS_MASK | 1 << QUEEN_SPADES)
_SUIT = np.array(SUIT_MASKS, dtype=U64)
_BIT = np.left_shift(_ONE, np.arange(64, dtype=U64))
# pass offsets by deal index mod 4 (left, right, across, hold) and the matching observation one-hot
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
_DEAL_U, _PASS_U, _PLAY_U = 0, 52, 64
_DEAL_UNIFORMS = 116
_OFFSETS = np.array([1, 3, 2, 0], dtype=np.int64)
_SEATS = np.arange(4)

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

    ``backend``: ``"numba"`` runs whole-deal simulation in compiled kernels (the ``rl`` extra),
    ``"numpy"`` in NumPy array operations, ``"auto"`` (default) numba when it is installed. Both give
    the same results for the same generator state.
    """

    def __init__(self, n: int, variant: str = "standard", max_score: int | None = None, backend: str = "auto") -> None:
        self.rules = find_variant(variant, **({"max_score": max_score} if max_score else {}))
        _check_rules(self.rules)
        self.numba = _use_numba(backend)
        self.n = n
        cp = self.rules.scoring[0].card_points
        self._jd_points = int(cp[JACK_DIAMONDS])
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
        """The game arrays in the order the numba kernels take them (``_jit``: ``st[0]`` ... ``st[19]``)."""
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
        self.hands[idx] = hands
        self.passed[idx] = 0
        self.received[idx] = 0
        self.taken[idx] = 0
        self.trick_bits[idx] = 0
        self.played[idx] = 0
        self.trick_len[idx] = 0
        self.trick_no[idx] = 0
        self.hearts_broken[idx] = False
        self.voids[idx] = 0
        self.led_suits[idx] = 0
        self.phase[idx] = PASS
        hold = idx[self.deal_index[idx] % 4 == 3]
        if hold.size:
            self._start_play(hold)

    def pass_offset(self, idx: np.ndarray) -> np.ndarray:
        return _OFFSETS[self.deal_index[idx] % 4]

    def pass_cards(self, idx: np.ndarray, passes: np.ndarray) -> None:
        """All four seats of games ``idx`` pass ``passes`` (``(k, 4)`` uint64, three cards each)."""
        off = self.pass_offset(idx)
        self.passed[idx] = passes
        src = (_SEATS[None, :] - off[:, None]) % 4
        got = np.take_along_axis(passes, src, axis=1)
        self.received[idx] = got
        self.hands[idx] = (self.hands[idx] & ~passes) | got
        self._start_play(idx)

    def _start_play(self, idx: np.ndarray) -> None:
        self.phase[idx] = PLAY
        self.trick_no[idx] = 1
        lead = np.argmax((self.hands[idx] & _ONE) != 0, axis=1)
        self.leader[idx] = lead
        self.turn[idx] = lead

    # ------------------------------------------------------------------ play
    def legal(self, idx: np.ndarray) -> np.ndarray:
        """The legal plays of the seat to play in games ``idx`` (uint64 masks)."""
        hand = self.hands[idx, self.turn[idx]]
        leading = self.trick_len[idx] == 0
        first = self.trick_no[idx] == 1
        suit = _SUIT[self.led_suit[idx]]
        follow = hand & suit
        legal = np.where(follow != 0, follow, hand)
        lead_legal = np.where(~self.hearts_broken[idx] & ((hand & _NOT_HEARTS) != 0), hand & _NOT_HEARTS, hand)
        lead_legal = np.where(first & ((hand & _ONE) != 0), _ONE, lead_legal)
        legal = np.where(leading, lead_legal, legal)
        safe = legal & ~_FIRST_FORBIDDEN
        return np.where(first & (safe != 0), safe, legal)

    def play(self, idx: np.ndarray, cards: np.ndarray) -> np.ndarray:
        """The seat to play in each game ``idx`` plays ``cards``; returns the games whose deal just ended."""
        cards = np.asarray(cards, dtype=np.int64)
        # every game at once (the common case in whole-deal simulation): views instead of gathers
        ix: Any = slice(None) if idx.size == self.n else idx
        seat = self.turn[ix]
        bit = _BIT[cards]
        flat = idx * 4 + seat
        self.hands.reshape(-1)[flat] ^= bit
        self.played[ix] |= bit
        self.trick_bits.reshape(-1)[flat] = bit
        suit = cards // 13
        tl = self.trick_len[ix]
        lead = tl == 0
        led = np.where(lead, suit, self.led_suit[ix])
        self.led_suit[ix] = led
        best = self.best[ix]
        better = lead | ((suit == led) & (cards > best))
        self.best[ix] = np.where(better, cards, best)
        self.winner[ix] = np.where(better, seat, self.winner[ix])
        self.voids.reshape(-1)[flat] |= np.where(lead | (suit == led), 0, 1 << led)
        self.hearts_broken[ix] |= suit == 2
        tl = tl + 1
        self.trick_len[ix] = tl
        self.turn[ix] = (seat + 1) & 3
        done = tl == 4
        if not done.any():
            return idx[:0]
        return self._finish_tricks(idx[done])

    def _finish_tricks(self, idx: np.ndarray) -> np.ndarray:
        w = self.winner[idx]
        won = np.bitwise_or.reduce(self.trick_bits[idx], axis=1)
        self.taken[idx, w] |= won
        self.led_suits[idx] |= 1 << self.led_suit[idx]
        self.trick_bits[idx] = 0
        self.trick_len[idx] = 0
        self.leader[idx] = w
        self.turn[idx] = w
        tn = self.trick_no[idx] + 1
        self.trick_no[idx] = tn
        ended = idx[tn > 13]
        if ended.size:
            self._score(ended)
        return ended

    def deal_points(self, idx: np.ndarray) -> np.ndarray:
        """Raw points each seat has taken so far this deal (before the moon rule): ``(k, 4)``."""
        t = self.taken[idx]
        pts = popcount(t & _HEARTS) + 13 * ((t >> U64(QUEEN_SPADES)) & _ONE).astype(np.int64)
        if self._jd_points:
            pts += self._jd_points * ((t >> U64(JACK_DIAMONDS)) & _ONE).astype(np.int64)
        return pts

    def _score(self, idx: np.ndarray) -> None:
        t = self.taken[idx]
        moon_part = popcount(t & _HEARTS) + 13 * ((t >> U64(QUEEN_SPADES)) & _ONE).astype(np.int64)
        shot = (moon_part == 26).any(axis=1)
        moon_part = np.where(shot[:, None], np.where(moon_part == 26, 0, self.rules.moon_points), moon_part)
        pts = moon_part
        if self._jd_points:
            pts = pts + self._jd_points * ((t >> U64(JACK_DIAMONDS)) & _ONE).astype(np.int64)
        self.last_points[idx] = pts
        self.totals[idx] += pts
        top = self.totals[idx].max(axis=1)
        limit = self.rules.score_limit
        over = top >= limit if self.rules.limit_inclusive else top > limit
        self.deal_index[idx] += 1
        self.phase[idx] = np.where(over, OVER, PASS)

    def winners(self, idx: np.ndarray) -> np.ndarray:
        """``(k, 4)`` booleans: the seats with the lowest total."""
        t = self.totals[idx]
        return t == t.min(axis=1, keepdims=True)

    # ------------------------------------------------------------------ whole deals
    def play_random_deals(self, rng: np.random.Generator, deals: int) -> np.ndarray:
        """Play ``deals`` whole deals with four uniformly random seats, ``n`` at a time.

        Deal ``i`` of a batch uses pass direction ``i % 4``. Returns the ``(deals, 4)`` points.
        Each batch draws ``(k, 116)`` uniforms first (per deal: 52 dealing keys, 12 pass picks, 52
        plays), so the numba and NumPy backends play the same deals. With numba the games' arrays
        are not touched except ``last_points`` and ``totals`` (the batch's points).
        """
        out = []
        all_idx = np.arange(self.n)
        left = deals
        while left > 0:
            k = min(left, self.n)
            idx = all_idx[:k]
            u = rng.random((k, _DEAL_UNIFORMS))
            if self.numba:
                pts = np.empty((k, 4), dtype=np.int64)
                _jit.play_random_deals(u, np.arange(k) % 4, self.scoring_args()[0], pts)
                self.last_points[idx] = pts
                self.totals[idx] = pts
                out.append(pts)
                left -= k
                continue
            self.totals[idx] = 0
            self.deal_index[idx] = np.arange(k) % 4
            self.start_deals(idx, _hands_from_keys(u[:, _DEAL_U : _DEAL_U + 52]))
            passing = idx[self.phase[idx] == PASS]
            if passing.size:
                m = self.hands[passing].reshape(-1)
                pu = u[passing, _PASS_U : _PASS_U + 12].reshape(-1, 3)  # (game, seat) rows
                passes = np.zeros_like(m)
                for j in range(3):
                    b = _BIT[_rank_cards(m, pu[:, j])]
                    m &= ~b
                    passes |= b
                self.pass_cards(passing, passes.reshape(-1, 4))
            plays = np.ascontiguousarray(u[:, _PLAY_U:].T)  # one row per play: no strided reads
            for t in range(52):
                self.play(idx, _rank_cards(self.legal(idx), plays[t]))
            out.append(self.last_points[idx].copy())
            left -= k
        return np.concatenate(out)


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
        self._all = np.arange(num_envs)
        self._rules_block = rules_block(self.rules, 0)
        self._jit_block = np.clip(self._rules_block, -OBS_BOUND, OBS_BOUND)
        self._jit_offsets = np.array([_CARDS_END, *(_O[k] for k in _JIT_SLOTS)], dtype=np.int64)

    # ------------------------------------------------------------------ VectorEnv API
    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._reset_games(self._all)
        self._needs_reset[:] = False
        return self._observe(), {"action_mask": self._masks()}

    def step(
        self, actions: np.ndarray
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        core = self.core
        actions = np.ascontiguousarray(actions, dtype=np.int64).reshape(self.num_envs)
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        if core.numba:
            return self._step_jit(actions, rewards)
        resetting = self._all[self._needs_reset]
        if resetting.size:
            self._reset_games(resetting)
        live = self._all[~self._needs_reset]
        masks = self._mask_bits(live)
        a = actions[live]
        ok = (a >= 0) & (a < 52)
        ok[ok] = ((masks[ok] >> a[ok].astype(U64)) & _ONE) != 0
        illegal = np.zeros(self.num_envs, dtype=bool)
        if not ok.all():
            if self.illegal_action == "raise":
                raise ValueError(f"illegal actions in sub-environments {live[~ok].tolist()}")
            a = a.copy()
            a[~ok] = random_cards(self._rng, masks[~ok])
            illegal[live[~ok]] = True
        ph = core.phase[live]
        passing, playing = live[ph == PASS], live[ph == PLAY]
        if passing.size:
            self._selected[passing] |= _BIT[a[ph == PASS]]
            done = passing[popcount(self._selected[passing]) == 3]
            if done.size:
                self._pass_all(done)
        if playing.size:
            ended = core.play(playing, a[ph == PLAY])
            rewards[ended] += self._deal_over(ended)
        rewards += self._advance(live)
        terminated = np.zeros(self.num_envs, dtype=bool)
        terminated[live] = core.phase[live] == OVER
        self._needs_reset[:] = terminated
        infos: dict[str, Any] = {"action_mask": self._masks(), "illegal_action": illegal}
        return self._observe(), rewards, terminated, np.zeros(self.num_envs, dtype=bool), infos

    # ------------------------------------------------------------------ internals
    def _step_jit(
        self, actions: np.ndarray, rewards: np.ndarray
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """``step`` in one numba kernel: the same draws from ``self._rng`` in the same order as NumPy's."""
        core = self.core
        illegal = np.zeros(self.num_envs, dtype=bool)
        status = _jit.env_step(
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

    def _legal_action(self, g: int, a: int) -> bool:
        return 0 <= a < 52 and bool(int(self._mask_bits(np.array([g]))[0]) >> a & 1)

    def _reset_games(self, idx: np.ndarray) -> None:
        self.core.new_games(idx, BatchedHearts.shuffled_hands(self._rng, idx.size))
        self._selected[idx] = 0
        self._advance(idx)

    def _pass_all(self, idx: np.ndarray) -> None:
        core = self.core
        picks = random_cards(self._rng, core.hands[idx].reshape(-1), 3)
        passes = np.bitwise_or.reduce(_BIT[picks], axis=1).reshape(-1, 4)
        passes[:, self.seat] = self._selected[idx]
        self._selected[idx] = 0
        core.pass_cards(idx, passes)

    def _deal_over(self, ended: np.ndarray) -> np.ndarray:
        """Rewards of the learning seat for deals that just ended; starts the next deals."""
        core = self.core
        r = -core.last_points[ended, self.seat].astype(np.float64)
        nxt = ended[core.phase[ended] != OVER]
        if nxt.size:
            core.start_deals(nxt, BatchedHearts.shuffled_hands(self._rng, nxt.size))
        return r

    def _advance(self, idx: np.ndarray) -> np.ndarray:
        """Random opponents play in games ``idx`` until the learning seat must act; returns rewards."""
        core = self.core
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        while True:
            busy = idx[(core.phase[idx] == PLAY) & (core.turn[idx] != self.seat)]
            if not busy.size:
                return rewards
            ended = core.play(busy, random_cards(self._rng, core.legal(busy)))
            if ended.size:
                rewards[ended] += self._deal_over(ended)

    def _mask_bits(self, idx: np.ndarray) -> np.ndarray:
        core = self.core
        ph = core.phase[idx]
        out = np.zeros(idx.size, dtype=U64)
        p = ph == PASS
        if p.any():
            out[p] = core.hands[idx[p], self.seat] & ~self._selected[idx[p]]
        q = ph == PLAY
        if q.any():
            out[q] = core.legal(idx[q])
        return out

    def _masks(self) -> np.ndarray:
        bits = self._mask_bits(self._all)
        m = np.unpackbits(bits.view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")[:, :N_ACTIONS]
        return m.astype(np.int8)

    def _observe(self) -> dict[str, np.ndarray]:
        if self.core.numba:
            obs = np.empty((self.num_envs, OBS_SIZE), dtype=np.float32)
            masks = np.empty((self.num_envs, N_ACTIONS), dtype=np.int8)
            _jit.observe(
                self.core.arrays(), self.seat, self._selected, self._jit_block, self._jit_offsets,
                self.core.scoring_args()[0], obs, masks,
            )  # fmt: skip
            return {"observation": obs, "action_mask": masks}
        obs = encode_batch(self.core, self._all, self.seat, self._selected, self._rules_block)
        np.clip(obs, -OBS_BOUND, OBS_BOUND, out=obs)
        return {"observation": obs, "action_mask": self._masks()}


def encode_batch(
    core: BatchedHearts, idx: np.ndarray, me: int, selected: np.ndarray, block: np.ndarray | None = None
) -> np.ndarray:
    """Observations of seat ``me`` in games ``idx``: the layout of :func:`moonshot.rl.observation.encode`."""
    k = idx.size
    rel = (me + _SEATS) % 4
    sets = np.zeros((k, N_CARD_SETS), dtype=U64)
    played = core.played[idx]
    passed = core.passed[idx, me]
    sets[:, 0] = core.hands[idx, me]
    sets[:, 1] = selected[idx]
    sets[:, 2] = played
    sets[:, 3] = passed
    sets[:, 4] = core.received[idx, me]
    sets[:, 5:9] = core.trick_bits[idx][:, rel]
    sets[:, 9:13] = core.taken[idx][:, rel]
    off = core.pass_offset(idx)
    for r in (1, 2, 3):
        sets[:, 13 + r] = np.where(off == r, passed & ~played, U64(0))
    obs = np.zeros((k, OBS_SIZE), dtype=np.float32)
    obs[:, :_CARDS_END] = unpack_card_sets(sets)
    rows = np.arange(k)
    ph = core.phase[idx]
    tn = core.trick_no[idx]
    in_play = tn > 0
    obs[rows[in_play], _O["trick_leader"] + (core.leader[idx][in_play] - me) % 4] = 1.0
    voids = core.voids[idx][:, rel]
    obs[:, _O["voids"] : _O["voids"] + 16] = ((voids[:, :, None] >> np.arange(4)) & 1).reshape(k, 16)
    obs[:, _O["points"] : _O["points"] + 4] = core.deal_points(idx)[:, rel] / 26.0
    obs[:, _O["totals"] : _O["totals"] + 4] = np.clip(core.totals[idx][:, rel] / 100.0, -10.0, 10.0)
    obs[:, _O["cards_left"] : _O["cards_left"] + 4] = popcount(core.hands[idx][:, rel]) / 13.0
    obs[rows, _O["pass_direction"] + core.deal_index[idx] % 4] = 1.0
    obs[rows, _O["phase"] + np.select([ph == PASS, ph == PLAY], [0, 4], 5)] = 1.0
    obs[:, _O["trick_no"]] = tn / 13.0
    obs[:, _O["hearts_broken"]] = core.hearts_broken[idx]
    obs[:, _O["led_suits"] : _O["led_suits"] + 4] = (core.led_suits[idx][:, None] >> np.arange(4)) & 1
    obs[:, _O["card_points"] :] = rules_block(core.rules, 0) if block is None else block
    obs[:, _O["deal_no"]] = core.deal_index[idx] / 10.0
    return obs


__all__ = ["BatchedHearts", "HeartsVectorEnv", "batchable", "encode_batch", "popcount", "random_cards"]
