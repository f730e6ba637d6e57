"""``Hearts_Card_Game-v0``: the original Gym Hearts environment's id and constructor, on moonshot's engine.

:class:`GymHeartsEnv` is :class:`~moonshot.rl.event_env.EventEnv` in ``compat="original"`` mode under
the original's constructor arguments (``playersName``, ``maxScore``), and a ``gymnasium.Env`` so that
``gymnasium.make`` accepts it. Importing :mod:`moonshot.rl` registers it as ``Hearts_Card_Game-v0``
with ``order_enforce=False`` and the environment checker off, so ``gymnasium.make`` returns the
environment itself, unwrapped, as ``gym.make`` did for the original: its ``step()`` returns the old
4-tuple, which Gymnasium's wrappers would reject, and a script that re-initialises it with
``env.__init__(playersNameList, MAX_SCORE)`` (the original example does) works unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium

from moonshot.core.rules import PassDirection
from moonshot.rl.event_env import DEFAULT_PLAYERS, EventEnv

ORIGINAL_ENV_ID = "Hearts_Card_Game-v0"


class GymHeartsEnv(EventEnv, gymnasium.Env[Any, Any]):  # type: ignore[misc]  # old Gym step/reset API
    """The original ``HeartsEnv(playersName, maxScore=100)``: ``EventEnv(..., compat="original")``.

    ``seed``, ``variant`` and ``pass_cycle`` are moonshot's additions (the original shuffles from the
    global RNG and plays one rule set: moonshot's ``gym`` variant with the end at ``>= maxScore`` and
    every deal passed left). A second ``__init__`` keeps the ones it does not name.
    """

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012  # render() prints, as the original's

    def __init__(
        self,
        playersName: Sequence[str] = DEFAULT_PLAYERS,  # the original's argument names
        maxScore: int = 100,
        seed: int | None = None,
        variant: str | None = None,
        pass_cycle: str | Sequence[PassDirection | str] | None = None,
    ) -> None:
        EventEnv.__init__(
            self, playersName, maxScore, seed=seed, variant=variant, compat="original", pass_cycle=pass_cycle
        )


__all__ = ["ORIGINAL_ENV_ID", "GymHeartsEnv"]
