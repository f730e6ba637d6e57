"""moonshot for reinforcement learning: Gymnasium and PettingZoo environments, the Gym Hearts event API,
a batched NumPy simulator, and decision datasets (the ``rl`` extra; Parquet needs the ``data`` extra).

Importing this package registers ``moonshot/Hearts-v0`` (:class:`HeartsEnv`) and
``moonshot/HeartsVector-v0`` (vector entry point, :class:`HeartsVectorEnv`) with Gymnasium, and the
original Gym Hearts id ``Hearts_Card_Game-v0`` (:class:`GymHeartsEnv`, the event API in
``compat="original"`` mode, returned unwrapped).
See ``docs/rl.md``.
"""

from __future__ import annotations

from typing import Any

from gymnasium.envs.registration import register, registry

from moonshot.rl.decisions import Decisions
from moonshot.rl.env import HeartsEnv
from moonshot.rl.event_env import DEFAULT_PLAYERS, EventEnv, HumanPlayer, RandomPlayer, StricterRefusal
from moonshot.rl.gym_hearts import ORIGINAL_ENV_ID, GymHeartsEnv
from moonshot.rl.observation import DONE, N_ACTIONS, OBS_SIZE, OBSERVATION_SLICES, encode
from moonshot.rl.vector import BatchedHearts, HeartsVectorEnv

ENV_ID = "moonshot/Hearts-v0"

if ENV_ID not in registry:
    register(
        id=ENV_ID,
        entry_point="moonshot.rl.env:HeartsEnv",
        vector_entry_point="moonshot.rl.vector:HeartsVectorEnv",
        disable_env_checker=False,
    )

if ORIGINAL_ENV_ID not in registry:
    # the original's `make` line; unwrapped (old 4-tuple step API), so `env.__init__(names, score)` works too
    register(
        id=ORIGINAL_ENV_ID,
        entry_point="moonshot.rl.gym_hearts:GymHeartsEnv",
        kwargs={"playersName": list(DEFAULT_PLAYERS), "maxScore": 100},
        order_enforce=False,
        disable_env_checker=True,
    )


def aec_env(**kwargs: Any) -> Any:
    """The PettingZoo AEC environment (all four seats); see :func:`moonshot.rl.aec.env`."""
    from moonshot.rl.aec import env

    return env(**kwargs)


__all__ = [
    "DONE",
    "ENV_ID",
    "N_ACTIONS",
    "OBSERVATION_SLICES",
    "OBS_SIZE",
    "ORIGINAL_ENV_ID",
    "BatchedHearts",
    "Decisions",
    "EventEnv",
    "GymHeartsEnv",
    "HeartsEnv",
    "HeartsVectorEnv",
    "HumanPlayer",
    "RandomPlayer",
    "StricterRefusal",
    "aec_env",
    "encode",
]
