"""The single-agent Gymnasium environment: one learning seat against three moonshot bots.

``gymnasium.make("moonshot/Hearts-v0", variant="standard", opponents="heuristic", seat=0, shaping=None)``.
An episode is one whole game of the variant. Actions are ``Discrete(53)`` (cards 0..51, 52 = DONE; see
:mod:`moonshot.rl.decisions`), observations a ``Dict`` of the flat ``float32`` ``observation`` (named
slices in ``env.unwrapped.observation_slices``, see :mod:`moonshot.rl.observation`) and the ``int8``
``action_mask`` (also in ``info["action_mask"]``).

Reward: at the end of each deal the learning seat's points for the deal, signed so that better is
higher (``-points`` where the lowest total wins, ``+points`` in Trend, whose scores are negative).
With ``shaping="trick"`` each trick the seat wins gives ``-trick points`` at once and the deal-end
reward is corrected so that every deal's rewards still add up to the same total.

An action outside the mask is, by default, replaced with a uniformly random legal one (seeded, and
flagged with ``info["illegal_action"] = True``); ``illegal_action="raise"`` raises ``ValueError``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from moonshot.bots.base import Bot
from moonshot.bots.random import RandomBot
from moonshot.core.actions import Play
from moonshot.core.cards import describe, format_cards
from moonshot.core.engine import SEAT_NAMES, DealSpec, Game, Phase
from moonshot.core.events import DealEnded, Event, TrickEnded
from moonshot.core.variants import find_variant
from moonshot.core.views import seat_view
from moonshot.rl.decisions import Decisions, answer_claim
from moonshot.rl.observation import N_ACTIONS, OBS_SIZE, OBSERVATION_SLICES, IncrementalEncoder, mask_array
from moonshot.rl.opponents import bot_act, make_bots

OBS_BOUND = 10.0


def observation_space() -> spaces.Dict:
    return spaces.Dict(
        {
            "observation": spaces.Box(-OBS_BOUND, OBS_BOUND, shape=(OBS_SIZE,), dtype=np.float32),
            "action_mask": spaces.Box(0, 1, shape=(N_ACTIONS,), dtype=np.int8),
        }
    )


def reward_sign(rules: Any) -> int:
    return -1 if rules.lowest_wins else 1


class HeartsEnv(gym.Env[dict[str, np.ndarray], int]):
    """One learning seat (``seat``) of a moonshot game; the other three are bots."""

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 4}  # noqa: RUF012 (the base classes declare it so)

    def __init__(
        self,
        variant: str = "standard",
        opponents: str | Bot | Sequence[str | Bot] = "heuristic",
        seat: int = 0,
        shaping: str | None = None,
        max_score: int | None = None,
        illegal_action: str = "random",
        render_mode: str | None = None,
    ) -> None:
        if not 0 <= seat < 4:
            raise ValueError(f"seat must be 0..3, got {seat}")
        if shaping not in (None, "trick"):
            raise ValueError(f"shaping must be None or 'trick', got {shaping!r}")
        if illegal_action not in ("random", "raise"):
            raise ValueError(f"illegal_action must be 'random' or 'raise', got {illegal_action!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        self.rules = find_variant(variant, **({"max_score": max_score} if max_score else {}))
        self.variant = self.rules.name
        self.seat = seat
        self.shaping = shaping
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        bots = make_bots(opponents, 3)
        self.opponents: dict[int, Bot] = {(seat + 1 + i) % 4: b for i, b in enumerate(bots)}
        self._random_seats = frozenset(s for s, b in self.opponents.items() if type(b) is RandomBot)
        self.action_space = spaces.Discrete(N_ACTIONS)  # type: ignore[assignment]
        self.observation_space = observation_space()  # type: ignore[assignment]
        self.observation_slices: dict[str, slice] = dict(OBSERVATION_SLICES)
        self._sign = reward_sign(self.rules)
        self.game: Game | None = None
        self.decisions: Decisions | None = None
        self._bot_rng = random.Random(0)
        self._encoder = IncrementalEncoder()

    # ------------------------------------------------------------------ gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start a new game. ``options``: ``game_seed`` (fixes the deals), ``deals`` (DealSpecs)."""
        super().reset(seed=seed)
        options = options or {}
        game_seed = options.get("game_seed")
        if game_seed is None:
            game_seed = int(self.np_random.integers(2**62))
        self._bot_rng = random.Random(int(self.np_random.integers(2**62)))
        deals: Sequence[DealSpec] | None = options.get("deals")
        self.game = Game(self.rules, int(game_seed), deals=deals)
        self.decisions = Decisions(self.game)
        self._encoder.reset()
        self._shaped = 0.0
        self._last_deal: tuple[int, ...] | None = None
        reward = self._advance()
        self._carry = reward  # rewards before the first decision (none in practice) go to the first step
        obs = self._observe()
        return obs, self._info(False)

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        game, dec = self.game, self.decisions
        if game is None or dec is None:
            raise RuntimeError("call reset() before step()")
        if game.over:
            raise RuntimeError("the game is over; call reset()")
        self._last_deal = None
        mask = self._mask_bits  # computed with the last observation; nothing moved since
        a = int(action)
        illegal = not (0 <= a < N_ACTIONS and mask >> a & 1)
        if illegal:
            if self.illegal_action == "raise":
                raise ValueError(f"action {a} is not legal (legal: {_legal_list(mask)})")
            a = int(self.np_random.choice(_legal_list(mask)))
        if game.phase is Phase.PLAY and game.claimer is None:  # a card: straight to the engine
            events = game.apply(Play.of(self.seat, a))
        else:
            events = dec.apply(self.seat, a, mask)
        reward = self._carry + self._rewards(events)
        self._carry = 0.0
        reward += self._advance()
        obs = self._observe()
        return obs, float(reward), game.over, False, self._info(illegal)

    def render(self) -> str | None:
        text = self._render_text()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    # ------------------------------------------------------------------ helpers
    def action_masks(self) -> np.ndarray:
        """The current action mask as booleans (the sb3-contrib ``MaskablePPO`` convention)."""
        assert self.decisions is not None
        return mask_array(self.decisions.mask(self.seat)).astype(bool)

    def _advance(self) -> float:
        """Let the bots act until the learning seat must decide or the game is over."""
        game = self.game
        assert game is not None
        me = self.seat
        bots = self.opponents
        rng = self._bot_rng
        reward = 0.0
        play = Phase.PLAY
        shaping = self.shaping
        randbelow = rng.randrange
        while True:
            if game.phase is play and game.claimer is None:
                seat = game.turn
                if seat == me:
                    return reward
                if seat in self._random_seats:
                    # bot_act's RandomBot fast path, inlined (the same draw from the same stream)
                    legal = game.legal_play_mask(seat)
                    for _ in range(randbelow(legal.bit_count())):
                        legal &= legal - 1
                    events = game.apply(Play.of(seat, (legal & -legal).bit_length() - 1))
                    if shaping or len(events) > 1:
                        reward += self._rewards(events)
                    continue
            else:
                if game.over:
                    return reward
                waiting = game.to_act()
                seat = waiting[0]
                if game.claimer is not None and seat == me:
                    reward += self._rewards(answer_claim(game, me))
                    continue
                if game.claimer is None and me in waiting:
                    return reward
            events = bot_act(bots[seat], game, seat, rng)
            if shaping or len(events) > 1:
                reward += self._rewards(events)

    def _rewards(self, events: list[Event]) -> float:
        r = 0.0
        me = self.seat
        for e in events:
            if type(e) is TrickEnded:
                if self.shaping == "trick" and e.winner == me and e.points:
                    r -= e.points
                    self._shaped -= e.points
            elif type(e) is DealEnded:
                deal = self._sign * e.points[me]
                r += deal - self._shaped
                self._shaped = 0.0
                self._last_deal = e.points
        return r

    def _observe(self) -> dict[str, np.ndarray]:
        game, dec = self.game, self.decisions
        assert game is not None and dec is not None
        # within +-OBS_BOUND by construction
        obs = self._encoder.encode(game, self.seat, dec.selected[self.seat])
        self._mask_bits = dec.mask(self.seat)
        self._mask = mask_array(self._mask_bits)
        return {"observation": obs, "action_mask": self._mask}

    def _info(self, illegal: bool) -> dict[str, Any]:
        """Call after :meth:`_observe` (it shares the mask array with the observation)."""
        game, dec = self.game, self.decisions
        assert game is not None and dec is not None
        info: dict[str, Any] = {
            "action_mask": self._mask,
            "decision": dec.kind(self.seat) or "none",
            "seat": self.seat,
            "deal": game.deal_index,
            "totals": tuple(game.totals),
            "illegal_action": illegal,
        }
        if self._last_deal is not None:
            info["deal_points"] = self._last_deal
        if game.over:
            info["winners"] = game.winners
        return info

    def _render_text(self) -> str:
        game = self.game
        if game is None:
            return "(no game: call reset())"
        view = seat_view(game, self.seat, with_legal=False)
        trick = " ".join(f"{SEAT_NAMES[s]}:{format_cards([c])[0]}" for s, c in view.trick) or "-"
        return (
            f"{self.variant} deal {game.deal_index + 1} trick {game.trick_no} phase {game.phase.value}\n"
            f"seat {SEAT_NAMES[self.seat]} hand: {describe(view.hand)}\n"
            f"trick: {trick}\n"
            f"totals: {' '.join(f'{SEAT_NAMES[s]}={t}' for s, t in enumerate(game.totals))}"
        )


def _legal_list(mask: int) -> list[int]:
    return [a for a in range(N_ACTIONS) if mask >> a & 1]


__all__ = ["HeartsEnv", "observation_space", "reward_sign"]
