"""The rules kernel against the engine, move by move: the same deal and the same cards give the same
legal sets, the same trick winners and the same points, in every variant (Turbo's nines, charged
and doubled cards, Trend's exposed ace and moon, Omnibus' jack, Kierki's contracts and early end)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from moonshot import kernel
from moonshot.bots.playout import greedy_policy, start_of_play
from moonshot.bots.random import RandomBot
from moonshot.bots.search import solve
from moonshot.core.actions import Charge, Expose, Play
from moonshot.core.engine import Game, Phase
from moonshot.core.events import DealEnded, TrickEnded
from moonshot.core.rules import Rules
from moonshot.core.variants import VARIANTS
from moonshot.core.views import seat_view
from moonshot.kernel import _core

# deals per variant: thousands compiled; the uncompiled pass (MOONSHOT_NO_NUMBA=1) checks fewer
DEALS = 2000 if kernel.NUMBA else 100
SOLVES = 400 if kernel.NUMBA else 40  # endgames solved per variant
COVERED = ["standard", "gym", "omnibus", "trend", "turbo", "turbo-chain", "kierki"]


def _to_play(game: Game, rng: random.Random) -> None:
    """Advance ``game`` through passing, charging and exposing with random choices (charging and
    exposing everything often, so the charged-card rule and doubling get exercised)."""
    bot = RandomBot()
    while game.phase is not Phase.PLAY:
        seat = game.to_act()[0]
        view = seat_view(game, seat)
        if game.phase in (Phase.CHARGE, Phase.EXPOSE) and rng.random() < 0.5:
            cls = Charge if game.phase is Phase.CHARGE else Expose
            action = max(view.legal, key=lambda a: a.cards.bit_count())  # type: ignore[attr-defined]
            if rng.random() < 0.3:
                action = cls(seat, 0)
        else:
            action = bot.act(view, rng)
        game.apply(action)


def _game(variant: str, seed: int) -> tuple[Game, Rules]:
    base = VARIANTS[variant]
    kinds = base.deal_kinds
    rules = base.replace(deal_kinds=(kinds[seed % len(kinds)],))  # every Kierki contract
    game = Game(rules, seed)
    _to_play(game, random.Random(seed))
    return game, rules


def _state(game: Game) -> object:
    doubled = charged = 0
    for s in range(4):
        doubled |= game.charged[s] | game.exposed[s]
        charged |= game.charged[s]
    return kernel.start_state(game.rules, game.deal_kind, list(game.hands), game.turn, doubled, charged)


def _check_deal(variant: str, seed: int) -> None:
    game, rules = _game(variant, seed)
    rt = kernel.rules_table(game.rules, game.deal_kind)
    state = _state(game)
    ref = start_of_play(*_playout_args(game))
    rng = random.Random(seed ^ 0x5EED)
    deal_index = game.deal_index
    assert kernel.turn(state) == game.turn
    while game.deal_index == deal_index and not game.over:
        assert not kernel.done(state)
        assert kernel.turn(state) == game.turn
        legal = game.legal_play_mask(game.turn)
        assert kernel.legal(rt, state) == legal
        if legal & (legal - 1):
            # the greedy rollout policy is the playout module's, card for card
            assert kernel.greedy_card(rt, state) == greedy_policy(ref, ref.turn, legal, rng)
        card = rng.choice([c for c in range(52) if legal >> c & 1])
        trick_no = game.trick_no
        events = game.apply(Play.of(game.turn, card))
        kernel.play(rt, state, card)
        ref.play(card)
        for e in events:
            if isinstance(e, TrickEnded):
                assert e.trick == trick_no
                assert kernel.done(state) or kernel.turn(state) == e.winner
            if isinstance(e, DealEnded):
                assert kernel.done(state)
                assert kernel.scores(rt, state) == e.points
                assert tuple(int(t) for t in state[kernel.S_TAKEN : kernel.S_TAKEN + 4]) == e.taken
                sign = -1 if rules.negative_scores else 1
                assert kernel.costs(rt, state) == tuple(sign * p for p in e.points)
    assert kernel.done(state)


def _playout_args(game: Game) -> tuple[object, ...]:
    doubled = charged = 0
    for s in range(4):
        doubled |= game.charged[s] | game.exposed[s]
        charged |= game.charged[s]
    return (game.rules, game.deal_kind, list(game.hands), game.turn, doubled, charged)


@pytest.mark.parametrize("variant", COVERED)
def test_card_by_card_against_the_engine(variant: str) -> None:
    @settings(max_examples=DEALS, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(seed=st.integers(0, 2**31))
    def check(seed: int) -> None:
        _check_deal(variant, seed)

    check()


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_variant_is_covered(variant: str) -> None:
    assert kernel.covers(VARIANTS[variant])
    for seed in range(3):
        _check_deal(variant, seed)


def _mid_trick(variant: str, seed: int) -> tuple[Game, object, object, random.Random]:
    """A game and the same kernel state some random number of cards into play (often mid-trick)."""
    game, _ = _game(variant, seed)
    rt = kernel.rules_table(game.rules, game.deal_kind)
    state = _state(game)
    rng = random.Random(seed)
    for _ in range(rng.randrange(40)):
        legal = game.legal_play_mask(game.turn)
        card = rng.choice([c for c in range(52) if legal >> c & 1])
        game.apply(Play.of(game.turn, card))
        kernel.play(rt, state, card)
        if kernel.done(state):
            break
    return game, rt, state, rng


@pytest.mark.parametrize("variant", COVERED)
@pytest.mark.parametrize("policy", ["random", "greedy", "noisy"])
def test_rollouts_from_any_position_play_legal_cards_to_the_engines_score(variant: str, policy: str) -> None:
    """A rollout stepped card by card (the kernel's own choice each time) is legal in the engine,
    ends with the engine's points, and is the rollout :func:`kernel.rollouts` plays from the same
    position and generator state."""
    code = kernel.POLICIES[policy]
    eps = kernel.epsilon32(0.1)
    for seed in range(40):
        game, rt, state, rng = _mid_trick(variant, seed)
        if kernel.done(state):
            continue
        gen = kernel.seed_rng(rng)
        batch = kernel.rollouts(rt, state, 1, policy, gen.copy())
        deal_index = game.deal_index
        points: tuple[int, ...] = ()
        while not kernel.done(state):
            card = int(_core.choose(rt, state, code, eps, gen))
            assert game.legal_play_mask(game.turn) >> card & 1
            for e in game.apply(Play.of(game.turn, card)):
                if isinstance(e, DealEnded):
                    points = e.points
            kernel.play(rt, state, card)
        assert game.deal_index != deal_index or game.over
        assert kernel.scores(rt, state) == points
        assert tuple(batch[0]) == kernel.costs(rt, state)


def _endgame(variant: str, seed: int, cards_each: int) -> tuple[object, object, object]:
    """A kernel state and the same search deal with at most ``cards_each`` cards a hand (often
    fewer, and often mid-trick), reached by random cards from the play's start."""
    game, _ = _game(variant, seed)
    rt = kernel.rules_table(game.rules, game.deal_kind)
    state = _state(game)
    deal = start_of_play(*_playout_args(game))  # type: ignore[arg-type]
    rng = random.Random(seed)
    while not kernel.done(state) and (
        max(deal.hands[s].bit_count() for s in range(4)) > cards_each or rng.random() < 0.3
    ):
        legal = kernel.legal(rt, state)
        card = rng.choice([c for c in range(52) if legal >> c & 1])
        kernel.play(rt, state, card)
        deal.play(card)
    return rt, state, deal


@pytest.mark.parametrize("variant", COVERED)
def test_the_solver_finds_the_search_deals_value(variant: str) -> None:
    """The kernel's exact endgame (:func:`kernel.solve`) is :func:`moonshot.bots.search.solve`,
    value for value, for every seat and weighting, and leaves the position as it was."""

    @settings(max_examples=SOLVES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(seed=st.integers(0, 2**31), me=st.integers(0, 3), weight=st.sampled_from([0.0, 0.5, 1.0]))
    def check(seed: int, me: int, weight: float) -> None:
        rt, state, deal = _endgame(variant, seed, 2 + seed % 3)
        before = state.copy()  # type: ignore[attr-defined]
        expected = solve(deal, me, weight)  # type: ignore[arg-type]
        assert kernel.solve(rt, state, me, weight, table_bits=0) == expected
        assert kernel.solve(rt, state, me, weight, table_bits=seed % 9) == expected  # (tiny tables collide)
        assert np.array_equal(state, before)

    check()


def test_the_solver_values_a_finished_deal_by_its_score() -> None:
    rt, state, _ = _endgame("standard", 3, 0)
    assert kernel.done(state)
    costs = kernel.costs(rt, state)
    assert kernel.solve(rt, state, 2, 1.0) == costs[2] - (sum(costs) - costs[2]) / 3.0


def test_rollouts_are_reproducible_and_leave_the_position_alone() -> None:
    _, rt, state, _ = _mid_trick("standard", 7)
    before = state.copy()  # type: ignore[attr-defined]
    a = kernel.rollouts(rt, state, 50, "noisy", kernel.seed_rng(random.Random(3)))
    b = kernel.rollouts(rt, state, 50, "noisy", kernel.seed_rng(random.Random(3)))
    assert np.array_equal(a, b)
    assert np.array_equal(state, before)
    assert len({tuple(r) for r in a}) > 1  # epsilon-greedy does vary


def test_uct_visits_add_up_and_are_reproducible() -> None:
    _, rt, state, _ = _mid_trick("standard", 11)
    legal = kernel.legal(rt, state)
    runs = [kernel.uct(rt, state, legal, 200, 0.4, "noisy", kernel.seed_rng(random.Random(5)), 26.0) for _ in range(2)]
    n, total, root = runs[0]
    assert n.sum() == 200
    assert all(n[c] == 0 for c in range(52) if not legal >> c & 1)
    assert np.array_equal(runs[0][0], runs[1][0]) and np.array_equal(runs[0][1], runs[1][1])
    assert root == pytest.approx(total.sum())


def test_random_cards_are_uniform() -> None:
    gen = kernel.seed_rng(random.Random(0))
    mask = 0b10010100101  # five cards
    cards = [int(_core.random_card(mask, gen)) for _ in range(20000)]
    for c in (0, 2, 5, 7, 10):
        assert 3600 < cards.count(c) < 4400


def test_the_rules_table_is_made_once_per_rules_value() -> None:
    rules = VARIANTS["trend"]
    assert kernel.rules_table(rules, 0) is kernel.rules_table(rules, 0)
    with pytest.raises(ValueError):
        kernel.rules_table(rules.replace(first_trick_forced_order=tuple(range(9))), 0)


_UNCOMPILED = """
import random
from moonshot import kernel
from moonshot.core.variants import VARIANTS
assert not kernel.NUMBA
out = []
for name in ("standard", "turbo", "kierki"):
    rules = VARIANTS[name]
    kind = rules.deal_kinds[-1]
    rng = random.Random(name)
    deck = list(range(52)); rng.shuffle(deck)
    hands = [sum(1 << c for c in deck[13 * s:13 * s + 13]) for s in range(4)]
    rt = kernel.rules_table(rules, kind)
    st = kernel.start_state(rules, kind, hands, 1)
    out.append(kernel.rollouts(rt, st, 20, "noisy", kernel.seed_rng(rng)).tolist())
    n, total, _ = kernel.uct(rt, st, kernel.legal(rt, st), 30, 0.4, "noisy", kernel.seed_rng(rng), 26.0)
    out.append([n.tolist(), [round(x, 9) for x in total.tolist()]])
print(repr(out))
"""


@pytest.mark.skipif(not kernel.NUMBA, reason="compares the compiled kernel with the same code uncompiled")
def test_uncompiled_kernel_gives_the_same_results() -> None:
    env = {**os.environ, "MOONSHOT_NO_NUMBA": "1", "PYTHONPATH": str(Path(kernel.__file__).parents[2])}
    done = subprocess.run([sys.executable, "-c", _UNCOMPILED], env=env, capture_output=True, text=True, check=True)
    here = subprocess.run(
        [sys.executable, "-c", _UNCOMPILED.replace("assert not kernel.NUMBA", "")],
        env={**env, "MOONSHOT_NO_NUMBA": ""},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == here.stdout


_WARM_UP = """
import moonshot
from moonshot import kernel
kernel.warm_up()
print("WARM", kernel.is_warm(), "moonshot.core.tricks" in moonshot.compiled_modules())
"""


@pytest.mark.skipif(not kernel.NUMBA, reason="numba's on-disk cache")
def test_a_process_on_the_sources_loads_the_kernel_a_compiled_one_cached(tmp_path: Path) -> None:
    """The kernel compiles ``core.tricks``'s functions into its own; its cache, written by a process
    of the compiled build, must load in a process on the sources (``MOONSHOT_PURE_PYTHON=1``, or a
    build gone stale after an edit), which once failed on the module the cache names."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(Path(kernel.__file__).parents[2])}
    env.pop("MOONSHOT_NO_NUMBA", None)
    seen = []
    for pure in ("", "1"):
        run = subprocess.run(
            [sys.executable, "-c", _WARM_UP], env={**env, "MOONSHOT_PURE_PYTHON": pure}, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        seen.append(run.stdout.split("WARM ")[1].split())
    if seen[0][1] != "True":
        pytest.skip("no usable compiled build (make core) to write the cache")
    assert seen == [["True", "True"], ["True", "False"]]
    assert list(tmp_path.rglob("*.nbi"))
