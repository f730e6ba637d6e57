"""The seed's event API: event shapes, request/answer flow, re-sent requests, passing cycle, max_score."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from moonshot.cards import parse_card
from moonshot.rl.event_env import EventEnv, HumanPlayer, RandomPlayer, legal_cards

CARD = re.compile(r"^[2-9TJQKA][cdhs]$")
NAMES = ["Kazuma", "Aqua", "Megumin", "Darkness"]
ROOT = Path(__file__).resolve().parents[2]

SHAPES = {
    "GameStart": {"players"},
    "NewRound": {"players"},
    "PassCards": {"playerName", "hand"},
    "ShowPlayerHand": {"playerName", "hand"},
    "PlayTrick": {"playerName", "hand", "trickNum", "trickSuit", "currentTrick", "IsHeartsBroken"},
    "ShowTrickAction": {"trickNum", "trickSuit", "currentTrick", "IsHeartsBroken"},
    "ShowTrickEnd": {"trickNum", "trickWinner", "cards", "IsHeartsBroken"},
    "RoundEnd": {"players", "ShootingMoon", "Round"},
    "GameOver": {"players", "Round", "Winner"},
}
BROADCAST = {"GameStart", "NewRound", "ShowTrickAction", "ShowTrickEnd", "RoundEnd", "GameOver"}


def play_game(env: EventEnv, seed: int = 0) -> list[dict[str, Any]]:
    players = {n: RandomPlayer(n, seed=seed + i) for i, n in enumerate(NAMES)}
    events = []
    event = env.reset()
    while event is not None:
        events.append(event)
        action = None if event["broadcast"] else players[event["data"]["playerName"]].act(event)
        event, _, _, _ = env.step(action)
    return events


def test_every_event_has_the_seeds_shape() -> None:
    events = play_game(EventEnv(NAMES, max_score=40, seed=1))
    assert events[0]["event_name"] == "GameStart" and events[-1]["event_name"] == "GameOver"
    for e in events:
        assert set(e) == {"event_name", "broadcast", "data"}
        assert set(e["data"]) == SHAPES[e["event_name"]]
        assert e["broadcast"] is (e["event_name"] in BROADCAST)
        for key in ("hand", "cards"):
            for c in e["data"].get(key, []):
                assert CARD.match(c), c
        for t in e["data"].get("currentTrick", []):
            assert set(t) == {"playerName", "card"} and CARD.match(t["card"])
    assert events[0]["data"]["players"] == [{"playerName": n} for n in NAMES]


def test_round_flow_and_trick_order() -> None:
    events = play_game(EventEnv(NAMES, seed=2))
    names = [e["event_name"] for e in events]
    assert names[:6] == ["GameStart", "NewRound", "PassCards", "PassCards", "PassCards", "PassCards"]
    assert names[6:10] == ["ShowPlayerHand"] * 4
    assert names[10] == "PlayTrick"
    first = events[10]["data"]
    assert first["trickNum"] == 1 and first["trickSuit"] == "Unset" and first["currentTrick"] == []
    assert "2c" in first["hand"]
    # ShowTrickAction lists cards in play order; ShowTrickEnd's cards match it
    actions = [e for e in events if e["event_name"] == "ShowTrickAction"]
    ends = [e for e in events if e["event_name"] == "ShowTrickEnd"]
    assert len(actions) == 4 * len(ends)
    for i, end in enumerate(ends):
        last = actions[4 * i + 3]["data"]
        assert [t["card"] for t in last["currentTrick"]] == end["data"]["cards"]
        assert last["trickSuit"] == end["data"]["cards"][0][1]
    assert ends[0]["data"]["cards"][0] == "2c"


def test_passing_cycles_left_right_across_hold() -> None:
    env = EventEnv(NAMES, max_score=10_000, seed=3)
    events = []
    players = {n: RandomPlayer(n, seed=i) for i, n in enumerate(NAMES)}
    event = env.reset()
    while sum(e["event_name"] == "RoundEnd" for e in events) < 5:
        events.append(event)
        action = None if event["broadcast"] else players[event["data"]["playerName"]].act(event)
        event, _, _, _ = env.step(action)
    rounds: list[list[dict[str, Any]]] = [[]]
    for e in events:
        if e["event_name"] == "NewRound":
            rounds.append([])
        rounds[-1].append(e)
    rounds = rounds[1:]
    offsets = []
    for r in rounds[:5]:
        passes = [e for e in r if e["event_name"] == "PassCards"]
        shown = {e["data"]["playerName"]: set(e["data"]["hand"]) for e in r if e["event_name"] == "ShowPlayerHand"}
        if not passes:
            offsets.append(0)
            continue
        dealt = {e["data"]["playerName"]: set(e["data"]["hand"]) for e in passes}
        gave = {n: dealt[n] - shown[n] for n in NAMES}
        got = {n: shown[n] - dealt[n] for n in NAMES}
        off = next(k for k in (1, 2, 3) if got[NAMES[k]] == gave[NAMES[0]])
        offsets.append(off)
    assert offsets == [1, 3, 2, 0, 1]  # left, right, across, hold, left


def test_an_illegal_card_resends_the_same_request() -> None:
    env = EventEnv(NAMES, seed=4)
    players = {n: RandomPlayer(n, seed=i) for i, n in enumerate(NAMES)}
    event = env.reset()
    while event["event_name"] != "PlayTrick":
        action = None if event["broadcast"] else players[event["data"]["playerName"]].act(event)
        event, _, _, _ = env.step(action)
    name = event["data"]["playerName"]
    wrong = next(c for c in event["data"]["hand"] if c != "2c")
    again, _, _, info = env.step(
        {"event_name": "PlayTrick_Action", "data": {"playerName": name, "action": {"card": wrong}}}
    )
    assert again == event and "error" in info
    again, _, _, info = env.step({"event_name": "PlayTrick_Action", "data": {"playerName": "Aqua?", "action": {}}})
    assert again == event
    again, _, _, _ = env.step(None)
    assert again == event
    ok, _, _, info = env.step(
        {"event_name": "PlayTrick_Action", "data": {"playerName": name, "action": {"card": "2C"}}}
    )
    assert ok["event_name"] == "ShowTrickAction" and "error" not in info


def test_a_bad_pass_is_asked_again() -> None:
    env = EventEnv(NAMES, seed=5)
    env.reset()
    req, _, _, _ = env.step(None)  # NewRound
    req, _, _, _ = env.step(None)  # PassCards to Kazuma
    assert req["event_name"] == "PassCards"
    hand = req["data"]["hand"]
    bad = {"event_name": "PassCards_Action", "data": {"playerName": "Kazuma", "action": {"passCards": hand[:2]}}}
    again, _, _, info = env.step(bad)
    assert again == req and "error" in info
    good = {"event_name": "PassCards_Action", "data": {"playerName": "Kazuma", "action": {"passCards": hand[:3]}}}
    nxt, _, _, _ = env.step(good)
    assert nxt["event_name"] == "PassCards" and nxt["data"]["playerName"] == "Aqua"


def test_game_over_when_a_total_exceeds_max_score() -> None:
    env = EventEnv(NAMES, max_score=30, seed=6)
    events = play_game(env, seed=6)
    over = events[-1]["data"]
    scores = [p["score"] for p in over["players"]]
    assert max(scores) > 30
    assert over["Winner"] == NAMES[scores.index(min(scores))]
    ends = [e for e in events if e["event_name"] == "RoundEnd"]
    assert over["Round"] == len(ends)
    assert all(max(p["score"] for p in e["data"]["players"]) <= 30 for e in ends[:-1])
    assert env.step(None) == (None, {}, True, {})


def test_rewards_are_minus_the_deal_points() -> None:
    env = EventEnv(NAMES, max_score=20, seed=7)
    players = {n: RandomPlayer(n, seed=i) for i, n in enumerate(NAMES)}
    totals = dict.fromkeys(NAMES, 0.0)
    event = env.reset()
    done = False
    while not done:
        action = None if event["broadcast"] else players[event["data"]["playerName"]].act(event)
        event, reward, done, _ = env.step(action)
        for n, r in reward.items():
            totals[n] += r
    assert [-totals[n] for n in NAMES] == [p["score"] for p in event["data"]["players"]]


def test_random_player_only_plays_legal_cards() -> None:
    event = {
        "event_name": "PlayTrick",
        "broadcast": False,
        "data": {
            "playerName": "Aqua",
            "hand": ["3c", "Qs", "2h", "Kd"],
            "trickNum": 1,
            "trickSuit": "d",
            "currentTrick": [{"playerName": "Kazuma", "card": "2d"}],
            "IsHeartsBroken": False,
        },
    }
    assert legal_cards(event) == ["Kd"]
    event["data"]["hand"] = ["3c", "Qs", "2h"]
    assert legal_cards(event) == ["3c"]


def test_human_player_reads_stdin_answers() -> None:
    answers = iter(["Qs Ah 2d", "2c"])
    human = HumanPlayer("Kazuma", input_fn=lambda _prompt: next(answers), print_fn=lambda *_: None)
    act = human.act({"event_name": "PassCards", "broadcast": False, "data": {"playerName": "Kazuma", "hand": []}})
    assert act is not None and act["data"]["action"]["passCards"] == ["Qs", "Ah", "2d"]
    trick = {"playerName": "Kazuma", "hand": ["2c"], "trickNum": 1, "trickSuit": "Unset", "currentTrick": []}
    act = human.act({"event_name": "PlayTrick", "broadcast": False, "data": {**trick, "IsHeartsBroken": False}})
    assert act is not None and parse_card(act["data"]["action"]["card"]) == parse_card("2c")


def test_only_gym_like_variants() -> None:
    with pytest.raises(ValueError):
        EventEnv(NAMES, variant="turbo")


def test_run_example_plays_to_game_over() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "run_example.py"), "--random", "--max-score", "20", "--seed", "1"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    assert out.startswith("*** Hearts Start ***")
    assert "'event_name': 'GameOver'" in out and "Game Over" in out
