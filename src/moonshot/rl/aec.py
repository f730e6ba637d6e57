"""The PettingZoo AEC environment: all four seats of one moonshot game, every variant.

Agents are ``player_0`` .. ``player_3`` (seats N, E, S, W). Each agent observes the same ``Dict`` as
:class:`~moonshot.rl.env.HeartsEnv` (``observation`` + ``action_mask``) from its own seat, and acts
with the same ``Discrete(53)`` encoding (see :mod:`moonshot.rl.decisions`). While passing, charging and
exposing, the seats that must decide take their turns one after the other (a seat that has started a
selection finishes it first); nobody sees another seat's pass before every seat has passed, as in
the engine. Nobody claims, so Turbo's claims never arise here.

Rewards: at the end of each deal every agent gets its deal points, signed so that better is higher
(see :func:`moonshot.rl.env.reward_sign`); ``shaping="trick"`` adds the per-trick shaping of
:class:`~moonshot.rl.env.HeartsEnv`. When the game ends every agent is terminated; there is no
truncation (every game ends). An illegal action raises ``ValueError``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from moonshot.core.cards import describe
from moonshot.core.engine import SEAT_NAMES, Game
from moonshot.core.events import DealEnded, Event, TrickEnded
from moonshot.core.variants import find_variant
from moonshot.rl.decisions import Decisions
from moonshot.rl.env import observation_space, reward_sign
from moonshot.rl.observation import N_ACTIONS, OBSERVATION_SLICES, IncrementalEncoder, mask_array

AGENTS = [f"player_{i}" for i in range(4)]


class raw_env(AECEnv):  # type: ignore[misc]
    metadata = {"render_modes": ["ansi", "human"], "name": "moonshot_hearts_v0", "is_parallelizable": False}  # noqa: RUF012 (the base classes declare it so)

    def __init__(
        self,
        variant: str = "standard",
        max_score: int | None = None,
        shaping: str | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        if shaping not in (None, "trick"):
            raise ValueError(f"shaping must be None or 'trick', got {shaping!r}")
        self.rules = find_variant(variant, **({"max_score": max_score} if max_score else {}))
        self.shaping = shaping
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        self._obs_space = observation_space()
        self._act_space = spaces.Discrete(N_ACTIONS)
        self.observation_spaces = {a: self._obs_space for a in AGENTS}
        self.action_spaces = {a: self._act_space for a in AGENTS}
        self.observation_slices = dict(OBSERVATION_SLICES)
        self._sign = reward_sign(self.rules)
        self._np_random, _ = seeding.np_random(None)
        self.game: Game | None = None
        self.decisions: Decisions | None = None
        self._encoders = [IncrementalEncoder() for _ in AGENTS]

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._act_space

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._np_random, _ = seeding.np_random(seed)
        options = options or {}
        game_seed = options.get("game_seed")
        if game_seed is None:
            game_seed = int(self._np_random.integers(2**62))
        self.game = Game(self.rules, int(game_seed), deals=options.get("deals"))
        self.decisions = Decisions(self.game)
        for e in self._encoders:
            e.reset()
        self.agents = list(AGENTS)
        self.rewards = {a: 0.0 for a in AGENTS}
        self._cumulative_rewards = {a: 0.0 for a in AGENTS}
        self.terminations = {a: False for a in AGENTS}
        self.truncations = {a: False for a in AGENTS}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in AGENTS}
        self._shaped = [0.0, 0.0, 0.0, 0.0]
        seat = self.decisions.next_seat()
        assert seat is not None
        self.agent_selection = AGENTS[seat]
        self._update_infos()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        game, dec = self.game, self.decisions
        assert game is not None and dec is not None
        seat = AGENTS.index(agent)
        obs = self._encoders[seat].encode(game, seat, dec.selected[seat])
        return {"observation": obs, "action_mask": mask_array(dec.mask(seat))}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game, dec = self.game, self.decisions
        assert game is not None and dec is not None
        seat = AGENTS.index(agent)
        if action is None:
            raise ValueError(f"{agent} must act (got None)")
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in AGENTS}
        self._collect(dec.apply(seat, int(action)))
        if game.over:
            for a in AGENTS:
                self.terminations[a] = True
        else:
            nxt = dec.next_seat()
            assert nxt is not None
            self.agent_selection = AGENTS[nxt]
        self._update_infos()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _collect(self, events: list[Event]) -> None:
        for e in events:
            if type(e) is TrickEnded:
                if self.shaping == "trick" and e.points:
                    self.rewards[AGENTS[e.winner]] -= e.points
                    self._shaped[e.winner] -= e.points
            elif type(e) is DealEnded:
                for s in range(4):
                    self.rewards[AGENTS[s]] += self._sign * e.points[s] - self._shaped[s]
                    self.infos[AGENTS[s]]["deal_points"] = e.points[s]
                self._shaped = [0.0, 0.0, 0.0, 0.0]

    def _update_infos(self) -> None:
        game, dec = self.game, self.decisions
        assert game is not None and dec is not None
        for s, a in enumerate(AGENTS):
            info = self.infos[a]
            info["decision"] = dec.kind(s) or "none"
            info["totals"] = tuple(game.totals)
            info["deal"] = game.deal_index
            if game.over:
                info["winners"] = game.winners

    def render(self) -> str | None:
        game = self.game
        if game is None:
            return None
        lines = [f"{self.rules.name} deal {game.deal_index + 1} trick {game.trick_no} phase {game.phase.value}"]
        for s in range(4):
            lines.append(f"{SEAT_NAMES[s]} ({game.totals[s]:>4}): {describe(game.hands[s])}")
        text = "\n".join(lines)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


def env(**kwargs: Any) -> Any:
    """The AEC environment wrapped in PettingZoo's order-enforcing and bounds-checking wrappers."""
    e: Any = raw_env(**kwargs)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e  # type: ignore[no-any-return,unused-ignore]


__all__ = ["AGENTS", "env", "raw_env"]
