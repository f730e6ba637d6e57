"""``Hearts_Card_Game-v0`` under Gymnasium: the original example's loop runs unchanged on moonshot."""

from __future__ import annotations

import collections
import contextlib
import io
import os
import random
import subprocess
import sys
import warnings
from typing import Any

import gymnasium as gym

import moonshot
from moonshot.rl import ORIGINAL_ENV_ID, GymHeartsEnv, StricterRefusal
from moonshot.rl.event_env import DEFAULT_PLAYERS, legal_cards

NAMES = ["Kazuma", "Aqua", "Megumin", "Darkness"]
COMPILED = "engine" in moonshot.compiled_modules()


class RandomAgent:
    """Behaves as the original's random agent: ``Do_Action(observation)``, three random cards to pass,
    ``2c`` when held, else a random card of the hand (the environment asks again when it is illegal).
    ``legal=True`` picks among the legal cards instead (fewer refused plays, so faster games)."""

    def __init__(self, name: str, seed: int, legal: bool = False) -> None:
        self.name = name
        self.rng = random.Random(seed)
        self.legal = legal
        self.seen: list[str] = []
        self.game_overs: list[dict[str, Any]] = []

    def Do_Action(self, observation: dict[str, Any]) -> dict[str, Any] | None:  # the original's name
        kind = observation["event_name"]
        self.seen.append(kind)
        if kind == "GameOver":
            self.game_overs.append(observation["data"])
        if kind == "PassCards":
            cards = self.rng.sample(observation["data"]["hand"], 3)
            return {"event_name": "PassCards_Action", "data": {"playerName": self.name, "action": {"passCards": cards}}}
        if kind == "PlayTrick":
            hand = observation["data"]["hand"]
            if "2c" in hand:
                card = "2c"
            else:
                card = self.rng.choice(legal_cards(observation) if self.legal else hand)
            return {"event_name": "PlayTrick_Action", "data": {"playerName": self.name, "action": {"card": card}}}
        return None


def run_example(env: Any, agent_list: list[RandomAgent], episodes: int) -> list[dict[str, int]]:
    """The original ``run_example.py`` loop (its broadcast handling, ``reward != None``, ``if done: break``);
    returns each episode's summed rewards."""
    summed = []
    for _ in range(episodes):
        observation = env.reset()
        totals = dict.fromkeys(NAMES, 0)
        while True:
            env.render()
            is_broadcast = observation["broadcast"]
            action = None
            if is_broadcast == True:  # noqa: E712  # as the original example
                for agent in agent_list:
                    agent.Do_Action(observation)
            else:
                play_name = observation["data"]["playerName"]
                for agent in agent_list:
                    if agent.name == play_name:
                        action = agent.Do_Action(observation)
            observation, reward, done, info = env.step(action)
            if reward != None:  # noqa: E711  # as the original example
                for name, points in reward.items():
                    totals[name] += points
            if done:
                assert observation is None and reward is None and info is None
                break
        summed.append(totals)
    return summed


def make_original_way() -> Any:
    # the original example's two lines, with `gym` now Gymnasium
    env = gym.make("Hearts_Card_Game-v0")
    env.__init__(NAMES, 100)  # type: ignore[misc]  # the original example re-initialises the made env
    return env


def check_games(agents: list[RandomAgent], summed: list[dict[str, int]], episodes: int) -> None:
    for agent in agents:
        assert len(agent.game_overs) == episodes  # every agent saw GameOver in every game
        assert agent.seen.count("GameStart") == episodes
    for totals, over in zip(summed, agents[0].game_overs, strict=True):
        scores = [p["score"] for p in over["players"]]
        assert [totals[n] for n in NAMES] == scores  # the rewards add up to the final scores
        assert max(scores) >= 100
        assert over["Winner"] == NAMES[scores.index(min(scores))]


def test_the_original_example_loop_plays_200_games_to_game_over() -> None:
    episodes = 200 if COMPILED else 40  # the pure-Python engine is slower; keep the test short
    env = make_original_way()
    agents = [RandomAgent(n, seed=i, legal=True) for i, n in enumerate(NAMES)]
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null), warnings.catch_warnings():
        warnings.simplefilter("error", StricterRefusal)
        summed = run_example(env, agents, episodes)
    check_games(agents, summed, episodes)


def test_the_original_random_agent_with_its_refused_plays() -> None:
    episodes = 10 if COMPILED else 3
    env = make_original_way()
    agents = [RandomAgent(n, seed=10 + i) for i, n in enumerate(NAMES)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("error", StricterRefusal)  # it never sends what the original would not refuse
        summed = run_example(env, agents, episodes)
    check_games(agents, summed, episodes)
    assert env.unwrapped.last_error is None
    # its refused plays print the original's lines, as the original's step() does
    lines = collections.Counter(out.getvalue().splitlines())
    assert lines["Must play the suit of the current trick."] > 0
    assert lines["Hearts have not been broken."] + lines["Hearts cannot be broken on the first hand."] > 0


def test_make_returns_the_compat_env_itself() -> None:
    env = gym.make(ORIGINAL_ENV_ID)
    assert type(env) is GymHeartsEnv and env.unwrapped is env  # no wrappers: the old 4-tuple API
    assert env.players == list(DEFAULT_PLAYERS) and env.max_score == 100 and env.compat == "original"
    assert env.spec is not None and env.spec.id == "Hearts_Card_Game-v0"
    env = gym.make(ORIGINAL_ENV_ID, playersName=["a", "b", "c", "d"], maxScore=50, seed=3)
    assert env.players == ["a", "b", "c", "d"] and env.max_score == 50
    first = env.reset()
    assert first["event_name"] == "GameStart"
    assert env.step(None)[1:] == (None, None, None)
    env.__init__(NAMES, 30)  # type: ignore[misc]
    assert env.players == NAMES and env.max_score == 30 and env.compat == "original"


def test_make_with_the_module_prefix_needs_no_import() -> None:
    code = (
        "import gymnasium as gym\n"
        "try:\n"
        "    gym.make('Hearts_Card_Game-v0')\n"
        "except gym.error.Error as e:\n"
        "    print('unregistered', type(e).__name__)\n"
        "env = gym.make('moonshot.rl:Hearts_Card_Game-v0', maxScore=50)\n"
        "print(type(env).__name__, env.max_score, env.reset()['event_name'])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120).stdout
    assert out.splitlines() == ["unregistered NameNotFound", "GymHeartsEnv 50 GameStart"]
