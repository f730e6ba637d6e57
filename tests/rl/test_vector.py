"""The batched simulator agrees with the scalar engine; the vector env follows the VectorEnv API."""

from __future__ import annotations

import random

import numpy as np
import pytest
from gymnasium.vector import VectorEnv
from hypothesis import given, settings
from hypothesis import strategies as st

from moonshot.core.actions import Pass, Play
from moonshot.core.cards import card_list
from moonshot.core.engine import Game, Phase
from moonshot.core.variants import find_variant
from moonshot.core.views import seat_view
from moonshot.rl.observation import encode
from moonshot.rl.vector import BatchedHearts, HeartsVectorEnv, encode_batch, popcount, random_cards

U64 = np.uint64


def _same_obs(game: Game, core: BatchedHearts, seat: int) -> None:
    want = encode(seat_view(game, seat, with_legal=False))
    got = encode_batch(core, np.array([0]), seat, np.zeros(1, dtype=U64))[0]
    bad = np.flatnonzero(want != got)
    assert not bad.size, f"observation differs at {bad[:10].tolist()}"


def mirror(variant: str, seed: int, check_obs: bool) -> int:
    """Play one scalar game with random actions and the same deals and actions in the batched core."""
    rules = find_variant(variant, max_score=60)
    game = Game(rules, seed)
    core = BatchedHearts(1, variant, max_score=60)
    idx = np.array([0])
    core.new_games(idx, np.array([game.hands], dtype=U64))
    rng = random.Random(seed)
    deals = 0
    while not game.over:
        if game.phase is Phase.PASS:
            if check_obs:
                _same_obs(game, core, rng.randrange(4))
            passes = [sum(1 << c for c in rng.sample(card_list(game.hands[s]), 3)) for s in range(4)]
            for s in range(4):
                game.apply(Pass(s, passes[s]))
            core.pass_cards(idx, np.array([passes], dtype=U64))
            continue
        seat = game.turn
        assert int(core.turn[0]) == seat
        assert int(core.legal(idx)[0]) == game.legal_play_mask(seat)
        if check_obs:
            _same_obs(game, core, seat)
        c = rng.choice(card_list(game.legal_play_mask(seat)))
        before = game.deal_index
        game.apply(Play.of(seat, c))
        ended = core.play(idx, np.array([c]))
        if game.deal_index != before or game.over:
            deals += 1
            assert ended.tolist() == [0]
            assert tuple(core.last_points[0]) == game.last_deal_points
            assert core.totals[0].tolist() == game.totals
            assert (int(core.phase[0]) == 2) == game.over
            if not game.over:
                core.start_deals(idx, np.array([game.hands], dtype=U64))
        else:
            assert ended.size == 0
    return deals


@pytest.mark.parametrize("variant", ["standard", "gym", "omnibus"])
def test_same_deals_and_actions_give_the_same_points_and_observations(variant: str) -> None:
    assert mirror(variant, seed=1, check_obs=True) >= 2


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31), variant=st.sampled_from(["standard", "gym", "omnibus"]))
def test_batched_scores_agree_with_the_engine(seed: int, variant: str) -> None:
    mirror(variant, seed, check_obs=False)


def test_other_variants_are_refused() -> None:
    for v in ("trend", "kierki", "turbo"):
        with pytest.raises(ValueError, match="SyncVectorEnv"):
            BatchedHearts(4, v)


def test_random_cards_are_legal_distinct_and_cover_the_set() -> None:
    rng = np.random.default_rng(0)
    masks = np.array([0b1011 << 20, 1 << 51, (1 << 52) - 1] * 400, dtype=U64)
    picks = random_cards(rng, masks)
    assert all(int(m) >> int(c) & 1 for m, c in zip(masks, picks))
    assert set(picks[0::3].tolist()) == {20, 21, 23}
    three = random_cards(rng, masks[2::3], 3)
    assert all(len(set(row)) == 3 for row in three.tolist())


def test_popcount() -> None:
    xs = np.array([0, 1, (1 << 52) - 1, 0b1011], dtype=U64)
    assert popcount(xs).tolist() == [0, 1, 52, 3]


def test_random_deals_score_26_points_or_a_moon() -> None:
    core = BatchedHearts(64)
    pts = core.play_random_deals(np.random.default_rng(1), 200)
    assert pts.shape == (200, 4)
    assert set(pts.sum(axis=1).tolist()) <= {26, 78}


def test_vector_env_api_and_rewards() -> None:
    env = HeartsVectorEnv(num_envs=8, seat=2, max_score=30)
    assert isinstance(env, VectorEnv)
    obs, info = env.reset(seed=0)
    assert obs["observation"].shape == (8, env.single_observation_space["observation"].shape[0])
    assert obs["action_mask"].shape == (8, 53)
    rng = np.random.default_rng(0)
    finished = 0
    returns = np.zeros(8)
    term = np.zeros(8, dtype=bool)
    for _ in range(400):
        mask = obs["action_mask"]
        # next-step autoreset: a game that just ended has nothing to choose; its next action is ignored
        assert ((mask.sum(axis=1) > 0) | term).all()
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in mask])
        obs, r, term, trunc, info = env.step(actions)
        returns += r
        assert not trunc.any() and not info["illegal_action"].any()
        for i in np.flatnonzero(term):
            assert returns[i] == -env.core.totals[i, 2]
            returns[i] = 0
            finished += 1
    assert finished > 0


def test_vector_env_is_reproducible() -> None:
    def run() -> list[bytes]:
        env = HeartsVectorEnv(num_envs=4)
        obs, _ = env.reset(seed=5)
        out = []
        for _ in range(60):
            a = np.argmax(obs["action_mask"], axis=1)
            obs, r, *_ = env.step(a)
            out.append(obs["observation"].tobytes() + r.tobytes())
        return out

    assert run() == run()


def test_vector_env_replaces_illegal_actions_unless_asked_to_raise() -> None:
    env = HeartsVectorEnv(num_envs=3)
    obs, _ = env.reset(seed=1)
    bad = np.array([int(np.flatnonzero(m == 0)[0]) for m in obs["action_mask"]])
    _, _, _, _, info = env.step(bad)
    assert info["illegal_action"].all()
    strict = HeartsVectorEnv(num_envs=3, illegal_action="raise")
    obs, _ = strict.reset(seed=1)
    with pytest.raises(ValueError):
        strict.step(np.array([int(np.flatnonzero(m == 0)[0]) for m in obs["action_mask"]]))


def test_gymnasium_make_vec_reaches_the_batched_env_and_sync_envs() -> None:
    import gymnasium as gym

    import moonshot.rl

    fast = gym.make_vec(moonshot.rl.ENV_ID, num_envs=3, vectorization_mode="vector_entry_point")
    assert isinstance(fast, HeartsVectorEnv)
    sync = gym.make_vec(moonshot.rl.ENV_ID, num_envs=2, vectorization_mode="sync", variant="kierki", opponents="random")
    obs, _ = sync.reset(seed=0)
    assert obs["observation"].shape == (2, fast.single_observation_space["observation"].shape[0])
