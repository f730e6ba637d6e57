"""The seed's event API: event shapes, request/answer flow, re-sent requests, passing cycle, max_score."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moonshot.core.cards import parse_card
from moonshot.rl.event_env import EventEnv, HumanPlayer, RandomPlayer, StricterRefusal, legal_cards

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


def pass_offsets(env: EventEnv, deals: int) -> list[int]:
    """Where each of the first ``deals`` deals passed (seats to the left; 0: no pass), from the events."""
    events = []
    players = {n: RandomPlayer(n, seed=i) for i, n in enumerate(env.players)}
    event = env.reset()
    while sum(e["event_name"] == "RoundEnd" for e in events) < deals:
        events.append(event)
        action = None if event["broadcast"] else players[event["data"]["playerName"]].act(event)
        event, _, _, _ = env.step(action)
    rounds: list[list[dict[str, Any]]] = [[]]
    for e in events:
        if e["event_name"] == "NewRound":
            rounds.append([])
        rounds[-1].append(e)
    names = env.players
    offsets = []
    for r in rounds[1 : deals + 1]:
        passes = [e for e in r if e["event_name"] == "PassCards"]
        shown = {e["data"]["playerName"]: set(e["data"]["hand"]) for e in r if e["event_name"] == "ShowPlayerHand"}
        if not passes:
            offsets.append(0)
            continue
        dealt = {e["data"]["playerName"]: set(e["data"]["hand"]) for e in passes}
        gave = {n: dealt[n] - shown[n] for n in names}
        got = {n: shown[n] - dealt[n] for n in names}
        offsets.append(next(k for k in (1, 2, 3) if got[names[k]] == gave[names[0]]))
    return offsets


def test_passing_cycles_left_right_across_hold() -> None:
    assert pass_offsets(EventEnv(NAMES, max_score=10_000, seed=3), 5) == [1, 3, 2, 0, 1]  # left, right, across, hold


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


# ---------------------------------------------------------------------- compat="original"
ORIGINAL_SUITS = "cdsh"  # the original sorts a hand clubs, diamonds, spades, hearts


def play_compat(
    env: EventEnv, seed: int = 0
) -> tuple[list[tuple[dict[str, Any] | None, Any, Any, Any]], list[dict[str, Any]]]:
    """Play a game in compat mode; return every step's 4-tuple (reset's event first) and the actions."""
    players = {n: RandomPlayer(n, seed=seed + i) for i, n in enumerate(env.players)}
    steps: list[tuple[dict[str, Any] | None, Any, Any, Any]] = [(env.reset(), None, None, None)]
    actions = []
    while steps[-1][0] is not None:
        event = steps[-1][0]
        action = None if event["broadcast"] else players[event["data"]["playerName"]].act(event)
        actions.append(action)
        steps.append(env.step(action))
        assert len(steps) < 20_000, "the game does not end"
    return steps, actions


def test_compat_step_returns_what_the_original_returns() -> None:
    env = EventEnv(NAMES, max_score=40, seed=11, compat="original")
    steps, _ = play_compat(env, seed=11)
    *play, last = steps
    names = [e["event_name"] for e, _, _, _ in play]
    assert names[-1] == "GameOver" and names.count("GameOver") == 1
    assert last == (None, None, True, None)  # the step after GameOver
    for event, reward, done, info in play:
        assert done is None and info is None
        if event["event_name"] == "RoundEnd":
            assert isinstance(reward, dict) and list(reward) == NAMES
            assert all(type(v) is int and v >= 0 for v in reward.values())
        else:
            assert reward is None
    assert env.step(None) == (None, None, True, None)
    assert env.step(None) == (None, None, True, None)


def test_compat_rewards_add_up_to_the_final_scores() -> None:
    for seed in range(3):
        steps, _ = play_compat(EventEnv(NAMES, max_score=60, seed=seed, compat="original"), seed=seed)
        totals = dict.fromkeys(NAMES, 0)
        for event, reward, _, _ in steps:
            if reward is not None:
                assert event is not None and event["event_name"] == "RoundEnd"
                for n, r in reward.items():
                    totals[n] += r
                assert [totals[n] for n in NAMES] == [p["score"] for p in event["data"]["players"]]
        over = steps[-2][0]
        assert over is not None and over["event_name"] == "GameOver"
        assert [totals[n] for n in NAMES] == [p["score"] for p in over["data"]["players"]]


def round_ends(steps: list[tuple[dict[str, Any] | None, Any, Any, Any]]) -> list[list[int]]:
    return [[p["score"] for p in e["data"]["players"]] for e, _, _, _ in steps if e and e["event_name"] == "RoundEnd"]


class LowestPlayer:
    """Passes its three highest cards and plays its lowest legal card: the same choices in either mode."""

    def __init__(self, name: str) -> None:
        self.name = name

    def act(self, event: dict[str, Any]) -> dict[str, Any] | None:
        if event["event_name"] == "PassCards":
            cards = sorted(event["data"]["hand"], key=parse_card)[-3:]
            return reply("PassCards_Action", self.name, {"passCards": cards})
        if event["event_name"] == "PlayTrick":
            return reply("PlayTrick_Action", self.name, {"card": min(legal_cards(event), key=parse_card)})
        return None


def totals_after_each_round(env: EventEnv) -> list[list[int]]:
    players = {n: LowestPlayer(n) for n in NAMES}
    event, totals = env.reset(), []
    while event is not None:
        if event["event_name"] == "RoundEnd":
            totals.append([p["score"] for p in event["data"]["players"]])
        answer = None if event["broadcast"] else players[event["data"]["playerName"]].act(event)
        event, *_ = env.step(answer)
    return totals


def test_compat_game_ends_when_a_total_reaches_max_score() -> None:
    # with no reachable limit, the highest total after a round r gives a limit reached exactly there
    long = totals_after_each_round(EventEnv(NAMES, max_score=300, seed=12, compat="original"))
    r = next(r for r in range(1, len(long) - 1) if max(long[r]) > max(long[r - 1]))
    limit = max(long[r])
    assert totals_after_each_round(EventEnv(NAMES, max_score=limit, seed=12, compat="original")) == long[: r + 1]
    # the default mode (the seed's text: "> max_score") plays on from exactly max_score (passing
    # left every deal too, so that only the end rule differs)
    default = totals_after_each_round(EventEnv(NAMES, max_score=limit, seed=12, pass_cycle="left"))
    assert default[: r + 1] == long[: r + 1] and len(default) > r + 1
    assert max(default[-2]) <= limit < max(default[-1])
    # the winner is the lowest total, the first in seat order on a tie (as the original's min())
    steps, _ = play_compat(EventEnv(NAMES, max_score=limit, seed=12, compat="original"), seed=12)
    over = steps[-2][0]
    assert over is not None and over["event_name"] == "GameOver"
    scores = [p["score"] for p in over["data"]["players"]]
    assert max(scores) >= limit and over["data"]["Winner"] == NAMES[scores.index(min(scores))]
    assert all(max(t) < limit for t in round_ends(steps)[:-1])


def test_compat_tricks_are_listed_in_seat_order() -> None:
    env = EventEnv(NAMES, max_score=30, seed=13, compat="original")
    steps, actions = play_compat(env, seed=13)
    played: dict[str, str] = {}
    ends = 0
    for (event, _, _, _), action, (nxt, _, _, _) in zip(steps, actions, steps[1:]):
        assert event is not None
        if event["event_name"] == "PlayTrick" and nxt is not None and nxt["event_name"] == "ShowTrickAction":
            played[event["data"]["playerName"]] = action["data"]["action"]["card"]  # accepted
        if event["event_name"] in ("PlayTrick", "ShowTrickAction"):
            order = [NAMES.index(t["playerName"]) for t in event["data"]["currentTrick"]]
            assert order == sorted(order)
        if event["event_name"] == "ShowTrickEnd":
            assert event["data"]["cards"] == [played[n] for n in NAMES]  # cards[i] is player i's card
            played.clear()
            ends += 1
    assert ends >= 13


def suit_rank_key(card: str) -> tuple[int, int]:
    return ORIGINAL_SUITS.index(card[1]), "23456789TJQKA".index(card[0])


def test_compat_hands_are_sorted_clubs_diamonds_spades_hearts() -> None:
    steps, _ = play_compat(EventEnv(NAMES, max_score=30, seed=14, compat="original"), seed=14)
    hands = [e["data"]["hand"] for e, _, _, _ in steps if e and "hand" in e["data"]]
    assert len(hands) > 50 and any({c[1] for c in h} >= {"s", "h"} for h in hands)
    for hand in hands:
        assert hand == sorted(hand, key=suit_rank_key)
    # the default mode keeps moonshot's card order: clubs, diamonds, hearts, spades
    default = [e["data"]["hand"] for e in play_game(EventEnv(NAMES, max_score=30, seed=14)) if "hand" in e["data"]]
    for hand in default:
        assert hand == sorted(hand, key=lambda c: ("cdhs".index(c[1]), "23456789TJQKA".index(c[0])))


def test_compat_render_prints_the_originals_progress_messages(capsys: pytest.CaptureFixture[str]) -> None:
    env = EventEnv(NAMES, max_score=30, seed=15, compat="original")
    players = {n: RandomPlayer(n, seed=i) for i, n in enumerate(NAMES)}
    event = env.reset()
    printed: list[tuple[str, str]] = []
    while event is not None:
        env.render()
        printed.append((event["event_name"], capsys.readouterr().out))
        action = None if event["broadcast"] else players[event["data"]["playerName"]].act(event)
        event, _, _, _ = env.step(action)
    env.render()
    assert capsys.readouterr().out == ""  # nothing new after GameOver's message
    assert printed[0] == ("GameStart", "\n*** Hearts Start ***\n\n")
    assert printed[1] == ("NewRound", "\n*** Start Round 1 ***\nKazuma: 0\nAqua: 0\nMegumin: 0\nDarkness: 0\n\n")
    assert printed[2] == ("PassCards", "\n*** Pass Cards Start ***\n\n")
    assert [out for _, out in printed[3:6]] == ["", "", ""]  # the other three PassCards print nothing
    assert printed[6] == ("ShowPlayerHand", "\n*** Pass Cards Over ***\n\n")
    # the table after each card: every seat, in seat order, None where no card yet
    first = next(i for i, (name, _) in enumerate(printed) if name == "ShowTrickAction")
    assert printed[first - 1] == ("PlayTrick", "")
    lines = printed[first][1].split("\n")
    assert lines[:4] == ["", "", "Current table:", "Trick suit: c"]
    assert [line.split(": ")[0] for line in lines[4:8]] == NAMES
    assert sorted(line.split(": ")[1] for line in lines[4:8]) == ["2c", "None", "None", "None"]
    assert lines[8:] == ["IsHeartsBroken: False", "", ""]
    end = next(out for name, out in printed if name == "ShowTrickEnd")
    assert re.fullmatch(
        r"\n\*\*\* Trick 1 \*\*\*\nWinner: \w+\ncards: \['\w\w', '\w\w', '\w\w', '\w\w'\]\n"
        r"IsHeartsBroken: False\n\n",
        end,
    )
    round_end = next(out for name, out in printed if name == "RoundEnd")
    assert re.fullmatch(r"\n\*\*\* Round 1 End \*\*\*\n(\w+: \d+\n){4}\nShootingMoon: (True|False)\n\n", round_end)
    name, over = printed[-1]
    assert name == "GameOver"
    assert re.fullmatch(r"\n\*\*\* Game Over \*\*\*\n(\w+: \d+\n){4}\nRound: \d+\nWinner: \w+\n\n", over)


def test_compat_render_keeps_only_the_latest_message(capsys: pytest.CaptureFixture[str]) -> None:
    env = EventEnv(NAMES, seed=16, compat="original")
    env.reset()
    env.step(None)  # NewRound: its message replaces GameStart's, as in the original
    env.render()
    env.render()
    assert capsys.readouterr().out.startswith("\n*** Start Round 1 ***\n")


def first_request(env: EventEnv, kind: str) -> dict[str, Any]:
    players = {n: RandomPlayer(n, seed=i) for i, n in enumerate(NAMES)}
    event = env.reset()
    while event["event_name"] != kind:
        action = None if event["broadcast"] else players[event["data"]["playerName"]].act(event)
        event, _, _, _ = env.step(action)
    return event


def reply(kind: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"event_name": kind, "data": {"playerName": name, "action": body}}


def test_compat_refusals_the_original_makes_too_resend_the_request(recwarn: pytest.WarningsRecorder) -> None:
    env = EventEnv(NAMES, seed=17, compat="original")
    req = first_request(env, "PlayTrick")
    name = req["data"]["playerName"]
    wrong = next(c for c in req["data"]["hand"] if c != "2c")
    for bad in (reply("PlayTrick_Action", name, {"card": wrong}), None, reply("PassCards_Action", name, {})):
        assert env.step(bad) == (req, None, None, None)
        assert env.last_error
    assert not [w for w in recwarn if issubclass(w.category, StricterRefusal)]
    ok = env.step(reply("PlayTrick_Action", name, {"card": "2c"}))
    assert ok[0]["event_name"] == "ShowTrickAction" and ok[1:] == (None, None, None) and env.last_error is None
    env = EventEnv(NAMES, seed=17, compat="original")
    req = first_request(env, "PassCards")
    assert env.step(reply("PassCards_Action", "Nobody", {"passCards": req["data"]["hand"][:3]})) == (
        req,
        None,
        None,
        None,
    )
    assert env.last_error


STRICTER = [
    ("PassCards", lambda hand, me, other: reply("PassCards_Action", me, {"passCards": hand[:2]}), "three"),
    ("PassCards", lambda hand, me, other: reply("PassCards_Action", me, {"passCards": [hand[0]] * 3}), "three"),
    ("PassCards", lambda hand, me, other: reply("PassCards_Action", me, {"passCards": hand[:4]}), "three"),
    ("PassCards", lambda hand, me, other: reply("PassCards_Action", other, {"passCards": hand[:3]}), "turn"),
    ("PlayTrick", lambda hand, me, other: reply("PlayTrick_Action", other, {"card": "2c"}), "turn"),
    ("PlayTrick", lambda hand, me, other: reply("PlayTrick_Action", me, {}), "card"),
]


@pytest.mark.parametrize(("kind", "make", "reason"), STRICTER)
def test_stricter_refusals_in_both_modes(kind: str, make: Any, reason: str) -> None:
    # compat: the request comes again with the original's types; the reason in last_error and a warning
    env = EventEnv(NAMES, seed=18, compat="original")
    req = first_request(env, kind)
    me = req["data"]["playerName"]
    other = NAMES[(NAMES.index(me) + 1) % 4]
    with pytest.warns(StricterRefusal, match=reason):
        assert env.step(make(req["data"]["hand"], me, other)) == (req, None, None, None)
    assert env.last_error and reason in env.last_error
    # default: the request comes again with the reason in info
    env = EventEnv(NAMES, seed=18)
    req = first_request(env, kind)
    event, _, done, info = env.step(make(req["data"]["hand"], me, other))
    assert event == req and done is False and reason in info["error"] and env.last_error == info["error"]


def test_compat_must_be_known() -> None:
    with pytest.raises(ValueError, match="compat"):
        EventEnv(NAMES, compat="gym")


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32), max_score=st.integers(10, 120))
def test_compat_invariants(seed: int, max_score: int) -> None:
    steps, _ = play_compat(EventEnv(NAMES, max_score=max_score, seed=seed, compat="original"), seed=seed)
    assert steps[-1] == (None, None, True, None)
    events = [e for e, _, _, _ in steps[:-1]]
    assert events[-1] is not None and events[-1]["event_name"] == "GameOver"
    rewards = [r for _, r, _, _ in steps if r is not None]
    final = [p["score"] for p in events[-1]["data"]["players"]]
    assert [sum(r[n] for r in rewards) for n in NAMES] == final
    totals = round_ends(steps)
    assert len(rewards) == len(totals) and max(final) >= max_score
    assert all(max(t) < max_score for t in totals[:-1])
    for e in events:
        assert e is not None
        if "hand" in e["data"]:
            assert e["data"]["hand"] == sorted(e["data"]["hand"], key=suit_rank_key)
        order = [NAMES.index(t["playerName"]) for t in e["data"].get("currentTrick", [])]
        assert order == sorted(order)


def refusals(event: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """The refused cards this ``PlayTrick`` request allows trying, by what the original prints for
    each: ``{line: (kind, card)}`` (the hand and trick decide which can be tried)."""
    d = event["data"]
    hand = d["hand"]
    trick = [t["card"] for t in d["currentTrick"]]
    first = d["trickNum"] == 1
    out: dict[str, tuple[str, str]] = {}
    hearts = [c for c in hand if c[1] == "h"]
    others = [c for c in hand if c[1] != "h"]
    if not trick:
        if first:
            out["first lead"] = ("", next(c for c in hand if c != "2c"))  # asked again, nothing printed
        elif hearts and others and not d["IsHeartsBroken"]:
            out["Hearts have not been broken."] = ("lead", hearts[0])
        return out
    led = d["trickSuit"]
    off = [c for c in hand if c[1] != led]
    if off and len(off) < len(hand):
        out["Must play the suit of the current trick."] = ("follow", off[0])
    if first and not [c for c in hand if c[1] == "c"]:
        safe = [c for c in others if c != "Qs"]
        if hearts and safe:
            out["Hearts cannot be broken on the first hand."] = ("first", hearts[0])
        if "Qs" in hand and safe:
            out["The queen of spades cannot be played on the first hand."] = ("first", "Qs")
    return out


ORIGINAL_LINES = {
    "Zs": "Invalid card rank.\ninvalid literal for int() with base 10: 'Z'\n",
    "Tx": "Invalid suit\n'x' is not in list\n",
    "": "",
}


@pytest.mark.parametrize("compat", ["original", "moonshot"])
def test_compat_prints_the_originals_refusal_lines(compat: str, capsys: pytest.CaptureFixture[str]) -> None:
    """In compat mode a refused card prints what the original's ``step()`` prints for it, and only
    that; moonshot's mode prints nothing (the reason is in ``info``)."""
    seen: set[str] = set()
    wanted = {
        "first lead",
        "Hearts have not been broken.",
        "Must play the suit of the current trick.",
        "Hearts cannot be broken on the first hand.",
        "The queen of spades cannot be played on the first hand.",
        "unheld",
        *ORIGINAL_LINES,
    }
    for seed in range(60):
        env = EventEnv(NAMES, max_score=60, seed=seed, compat=compat)
        players = {n: RandomPlayer(n, seed=seed * 4 + i) for i, n in enumerate(NAMES)}
        event = env.reset()
        while event is not None:
            if event["event_name"] == "PlayTrick":
                me = event["data"]["playerName"]
                tries = {k: v[1] for k, v in refusals(event).items()}
                held = set(event["data"]["hand"])
                if event["data"]["trickNum"] > 1:
                    tries["unheld"] = next(c for c in ("2c", "3c", "As", "Ah") if c not in held)
                    tries.update({k: k for k in ORIGINAL_LINES})
                for key, card in tries.items():
                    if key in seen:
                        continue
                    capsys.readouterr()
                    again = env.step(reply("PlayTrick_Action", me, {"card": card}))
                    assert again[0] == event, (key, card)
                    printed = capsys.readouterr().out
                    if compat == "moonshot":
                        assert printed == ""
                    elif key in ORIGINAL_LINES:
                        assert printed == ORIGINAL_LINES[key], key
                    elif key in ("first lead", "unheld"):
                        assert printed == "", key
                    else:
                        assert printed == key + "\n", (key, card, event)
                    seen.add(key)
            action = None if event["broadcast"] else players[event["data"]["playerName"]].act(event)
            event, *_ = env.step(action)
        if seen == wanted:
            break
    assert seen == wanted
    # a pass names each card the original cannot read, as its reader does; a legal pass prints nothing
    env = EventEnv(NAMES, seed=5, compat=compat)
    req = first_request(env, "PassCards")
    hand = req["data"]["hand"]
    capsys.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StricterRefusal)
        assert env.step(reply("PassCards_Action", "Kazuma", {"passCards": ["Tx", hand[0], "Zs"]}))[0] == req
    expected = ORIGINAL_LINES["Tx"] + ORIGINAL_LINES["Zs"] if compat == "original" else ""
    assert capsys.readouterr().out == expected
    env.step(reply("PassCards_Action", "Kazuma", {"passCards": hand[:3]}))
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("compat", ["original", "moonshot"])
def test_the_pass_cycle_is_rules_data_and_compat_passes_left_every_deal(compat: str) -> None:
    """The original passes left every deal (a bug, reproduced in compat mode); ``pass_cycle=``
    sets any cycle in either mode, and it is the rules' own field, not a branch on the mode."""
    full = ("left", "right", "across", "hold")
    default = ("left",) if compat == "original" else full
    env = EventEnv(NAMES, max_score=10_000, seed=3, compat=compat)
    assert [d.value for d in env.rules.pass_cycle] == list(default)
    assert pass_offsets(env, 6) == ([1] * 6 if compat == "original" else [1, 3, 2, 0, 1, 3])
    env = EventEnv(NAMES, max_score=10_000, seed=3, compat=compat, pass_cycle=full)
    assert pass_offsets(env, 5) == [1, 3, 2, 0, 1]
    env = EventEnv(NAMES, max_score=10_000, seed=3, compat=compat, pass_cycle="across hold")
    assert pass_offsets(env, 4) == [2, 0, 2, 0]
    with pytest.raises(ValueError, match="pass_cycle"):
        EventEnv(NAMES, compat=compat, pass_cycle="sideways")
    with pytest.raises(ValueError, match="pass_cycle"):
        EventEnv(NAMES, compat=compat, pass_cycle=["keeper"])


def test_a_second_init_keeps_the_settings_it_does_not_name() -> None:
    """The original's example re-initialises the env it made: ``env.__init__(names, max_score)``."""
    env = EventEnv(NAMES, 100, seed=9, compat="original", pass_cycle="left right")
    env.__init__(["a", "b", "c", "d"], 40)  # type: ignore[misc]
    assert env.compat == "original" and env.players == ["a", "b", "c", "d"] and env.max_score == 40
    assert [d.value for d in env.rules.pass_cycle] == ["left", "right"] and env.rules.limit_inclusive
    assert env.reset() == EventEnv(["a", "b", "c", "d"], 40, seed=9, compat="original").reset()
    env.__init__(NAMES, 40, compat="moonshot")  # type: ignore[misc]  # named: it changes
    assert env.compat == "moonshot" and not env.rules.limit_inclusive
    env = EventEnv(NAMES, 100, compat="original")
    env.__init__(NAMES, 100)  # type: ignore[misc]
    assert env.compat == "original" and [d.value for d in env.rules.pass_cycle] == ["left"]
    env = EventEnv(NAMES, 100)
    env.__init__(NAMES, 100)  # type: ignore[misc]
    assert env.compat == "moonshot" and len(env.rules.pass_cycle) == 4
