"""The PettingZoo AEC env: the API test for every variant and rewards that add up to the scores."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test

from moonshot.core.variants import VARIANTS
from moonshot.rl import aec_env
from moonshot.rl.aec import raw_env


# Dict observations with an action mask are PettingZoo's own convention (chess, go); its API test
# still warns that they are not plain arrays.
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_api_test_passes(variant: str) -> None:
    api_test(aec_env(variant=variant), num_cycles=200, verbose_progress=False)


@pytest.mark.parametrize("variant", ["standard", "trend", "turbo-blind-chain", "kierki"])
def test_rewards_add_up_to_the_signed_totals(variant: str) -> None:
    env = raw_env(variant=variant)
    env.reset(seed=3)
    got = dict.fromkeys(env.possible_agents, 0.0)
    rng = np.random.default_rng(3)
    for agent in env.agent_iter():
        obs, reward, term, trunc, _info = env.last()
        got[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert env.game is not None and env.game.over
    sign = -1 if env.rules.lowest_wins else 1
    assert [got[a] for a in env.possible_agents] == [sign * t for t in env.game.totals]


def test_only_the_selected_agent_has_a_mask() -> None:
    env = raw_env()
    env.reset(seed=0)
    sel = env.agent_selection
    for a in env.possible_agents:
        mask = env.observe(a)["action_mask"]
        # every seat passes, so every seat has choices; once play starts only one does
        assert mask.any()
    while env.game is not None and env.game.phase.value == "pass":
        sel = env.agent_selection
        env.step(int(np.flatnonzero(env.observe(sel)["action_mask"])[0]))
    sel = env.agent_selection
    assert [bool(env.observe(a)["action_mask"].any()) for a in env.possible_agents].count(True) == 1
    assert env.observe(sel)["action_mask"].any()


def test_illegal_action_raises() -> None:
    env = raw_env()
    env.reset(seed=0)
    mask = env.observe(env.agent_selection)["action_mask"]
    with pytest.raises(ValueError):
        env.step(int(np.flatnonzero(mask == 0)[0]))
