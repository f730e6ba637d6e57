"""The single-agent Gymnasium env: API conformance, seeding, rewards, illegal actions."""

from __future__ import annotations

import json
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import moonshot.rl
from moonshot.core.variants import VARIANTS
from moonshot.rl.env import HeartsEnv

ROLLOUT = """
import hashlib, json, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
from moonshot.rl.env import HeartsEnv
env = HeartsEnv(variant=sys.argv[1], opponents="heuristic", seat=1)
obs, info = env.reset(seed=int(sys.argv[2]))
h = hashlib.sha256(); done = False; rewards = []
while not done:
    h.update(obs["observation"].tobytes()); h.update(obs["action_mask"].tobytes())
    legal = np.flatnonzero(obs["action_mask"])
    obs, r, done, trunc, info = env.step(int(legal[len(legal) // 2]))
    rewards.append(r)
print(json.dumps([h.hexdigest(), rewards, list(info["totals"])]))
"""


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_check_env_passes(variant: str) -> None:
    check_env(HeartsEnv(variant=variant, opponents="random"), skip_render_check=True)


def test_registered_with_gymnasium() -> None:
    env = gym.make(moonshot.rl.ENV_ID, variant="omnibus", opponents="random")
    obs, info = env.reset(seed=0)
    assert set(obs) == {"observation", "action_mask"}
    assert obs["observation"].shape == (moonshot.rl.OBS_SIZE,)
    assert np.array_equal(obs["action_mask"], info["action_mask"])
    assert env.unwrapped.observation_slices["hand"] == moonshot.rl.OBSERVATION_SLICES["hand"]  # type: ignore[attr-defined]


def _rollout(variant: str, seed: int) -> list[object]:
    out = subprocess.run(
        [sys.executable, "-c", ROLLOUT, variant, str(seed)], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out)  # type: ignore[no-any-return]


def test_seeded_rollout_is_identical_across_processes() -> None:
    a = _rollout("standard", 7)
    b = _rollout("standard", 7)
    assert a == b
    assert _rollout("standard", 8)[0] != a[0]


def test_seeded_rollout_is_identical_within_a_process() -> None:
    def run(seed: int) -> list[tuple[bytes, float]]:
        env = HeartsEnv(variant="turbo", opponents="random", seat=2)
        obs, _ = env.reset(seed=seed)
        trace, done = [], False
        while not done:
            a = int(np.flatnonzero(obs["action_mask"])[0])
            obs, r, done, _, _ = env.step(a)
            trace.append((obs["observation"].tobytes(), r))
        return trace

    assert run(11) == run(11)


@pytest.mark.parametrize("variant", ["standard", "trend", "kierki", "turbo-chain"])
@pytest.mark.parametrize("shaping", [None, "trick"])
def test_episode_reward_is_the_signed_final_total(variant: str, shaping: str | None) -> None:
    env = HeartsEnv(variant=variant, opponents="random", seat=3, shaping=shaping)
    obs, info = env.reset(seed=4)
    total, done = 0.0, False
    rng = np.random.default_rng(0)
    while not done:
        obs, r, done, trunc, info = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        total += r
        assert not trunc
    sign = -1 if env.rules.lowest_wins else 1
    assert total == sign * info["totals"][3]


def test_trick_shaping_pays_when_points_are_taken() -> None:
    env = HeartsEnv(variant="standard", opponents="random", shaping="trick")
    obs, _ = env.reset(seed=1)
    rewards, done = [], False
    while not done:
        obs, r, done, _, info = env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
        rewards.append((r, "deal_points" in info))
    assert any(r < 0 and not deal_end for r, deal_end in rewards)


def test_illegal_actions_raise_or_are_replaced() -> None:
    env = HeartsEnv(variant="standard", opponents="random", illegal_action="raise")
    obs, _ = env.reset(seed=0)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(ValueError):
        env.step(illegal)
    env2 = HeartsEnv(variant="standard", opponents="random")
    obs, _ = env2.reset(seed=0)
    _, _, _, _, info = env2.step(illegal)
    assert info["illegal_action"] is True


def test_heuristic_opponents_are_accepted() -> None:
    env = HeartsEnv(variant="standard", opponents="heuristic")
    assert all(hasattr(b, "act") for b in env.opponents.values())
    assert sorted(env.opponents) == [1, 2, 3]


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError):
        HeartsEnv(seat=4)
    with pytest.raises(ValueError):
        HeartsEnv(shaping="hand")
    with pytest.raises(ValueError):
        HeartsEnv(opponents="nobody")


def test_render_ansi_describes_the_table() -> None:
    env = HeartsEnv(opponents="random", render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert text is not None and "hand" in text and "totals" in text


def test_game_seed_and_fixed_deals_set_the_cards() -> None:
    from moonshot.core.engine import DealSpec, Game
    from moonshot.core.variants import find_variant
    from moonshot.rl.observation import OBSERVATION_SLICES

    env = HeartsEnv(variant="standard", opponents="random", seat=2)
    obs, _ = env.reset(seed=1, options={"game_seed": 5})
    want = Game(find_variant("standard"), 5).hands[2]
    assert np.flatnonzero(obs["observation"][OBSERVATION_SLICES["hand"]]).tolist() == [
        c for c in range(52) if want >> c & 1
    ]
    hands = tuple(sum(1 << c for c in range(13 * s, 13 * s + 13)) for s in range(4))
    obs, _ = env.reset(seed=1, options={"deals": [DealSpec(hands)] * 30})  # type: ignore[arg-type]
    assert np.flatnonzero(obs["observation"][OBSERVATION_SLICES["hand"]]).tolist() == list(range(26, 39))
