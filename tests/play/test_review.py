"""Reviewing a finished game: the decisions found, a constructed blunder graded, the JSON and its
round trip, reproducibility, progress, and a game that is not over refused."""

from __future__ import annotations

import json
import random

import pytest

from gamekit import deal
from moonshot.bots.heuristic import HeuristicBot
from moonshot.bots.review import BLUNDER, INACCURACY, load_kernel
from moonshot.core.actions import Action, Play, action_to_dict
from moonshot.core.cards import parse_card
from moonshot.core.engine import DealSpec, Game
from moonshot.core.rules import EndRule, PassDirection, Rules
from moonshot.core.variants import find_variant
from moonshot.core.views import seat_view
from moonshot.play.review import FORMAT, GameReview, NotOver, count_decisions, review_game

STANDARD = find_variant("standard")
ONE_DEAL = STANDARD.replace(pass_cycle=(PassDirection.HOLD,), two_of_clubs_leads=False, end=EndRule.DEALS, deals=1)
# North holds QS 4S; in trick 2 East leads 5S, South 2S, West 3S (the evaluation's own test)
QUEEN_DEAL = deal(
    "QS 4S 2D 2C 3C 4C 5C 6C 7C 8C 9C TC JC",
    "5S AD 3D 4D 5D 6D 7D QC KC AC 2H 3H 4H",
    "2S 6S 7S 8S 9S TS 8D 9D TD 5H 6H 7H 8H",
    "3S JS KS AS JD QD KD 9H TH JH QH KH AH",
    leader=1,
)


@pytest.fixture(scope="module", autouse=True)
def _kernel() -> None:
    load_kernel()


def _play(rules: Rules, seed: int, deals: list[DealSpec] | None = None, script: str = "") -> list[Action]:
    """A game played to its end: the scripted cards first, then the heuristic bot for every seat."""
    game = Game(rules, seed, deals)
    bot = HeuristicBot()
    rng = random.Random(seed)
    for text in script.split():
        game.apply(Play.of(game.turn, parse_card(text)))
    while not game.over:
        seat = game.to_act()[0]
        game.apply(bot.act(seat_view(game, seat), rng))
    return list(game.actions)


def test_the_queen_under_its_own_trick_is_found_and_graded_a_blunder() -> None:
    actions = _play(ONE_DEAL, 0, [QUEEN_DEAL], "AD 8D JD 2D  5S 2S 3S QS")
    review = review_game(ONE_DEAL, 0, actions, 0, deals=[QUEEN_DEAL], simulations=150)
    first = review.decisions[0]
    assert first.action_index == 7 and first.deal == 0 and first.trick == 2 and first.kind == "play"
    assert first.chosen == "QS" and first.best == "4S"
    assert first.cost >= BLUNDER and first.grade == "blunder"
    assert first.trick_cards == [{"seat": 1, "card": "5S"}, {"seat": 2, "card": "2S"}, {"seat": 3, "card": "3S"}]
    assert "QS" in first.hand and len(first.hand) == 12
    summary = review.summary()
    assert summary["biggest"][0] == 0
    assert summary["by_grade"]["blunder"] >= 1
    assert summary["points_given_up"] >= first.cost
    assert summary["accuracy"] < 1.0
    # the first trick's 2D was North's only diamond: forced, not a decision
    assert all(d.action_index != 3 for d in review.decisions)


def test_a_whole_game_review_json_shape_round_trip_and_progress() -> None:
    actions = _play(STANDARD, 4)
    dicts = [action_to_dict(a) for a in actions]
    total = count_decisions(STANDARD, 4, dicts, 2)
    seen: list[tuple[int, int]] = []
    review = review_game(
        STANDARD, 4, dicts, 2, simulations=20, review_seed=7, progress=lambda d, t: seen.append((d, t)), game_id="g1"
    )
    data = review.to_json()
    json.dumps(data)  # (plain JSON)
    assert data["format"] == FORMAT and data["game_id"] == "g1" and data["seat"] == 2
    assert data["variant"] == "standard"
    assert data["budget"] == {"simulations": 20, "think_ms": None, "seed": 7}
    assert data["thresholds"]["inaccuracy"] == INACCURACY
    assert len(data["decisions"]) == total == data["summary"]["decisions"]
    assert seen[0] == (0, total) and seen[-1] == (total, total) and len(seen) == total + 1
    kinds = {d["kind"] for d in data["decisions"]}
    assert kinds == {"pass", "play"}
    for i, d in enumerate(data["decisions"]):
        assert d["index"] == i
        assert actions[d["action_index"]].seat == 2
        labels = [o["label"] for o in d["options"]]
        assert d["chosen"] in labels and d["best"] == labels[0]
        exp = [o["expected"] for o in d["options"]]
        assert exp == sorted(exp)
        chosen = exp[labels.index(d["chosen"])]
        assert d["cost"] == pytest.approx(chosen - exp[0], abs=2e-3) and d["cost"] >= 0
        if d["kind"] == "pass":
            assert d["trick"] is None and d["pass_direction"] in ("left", "right", "across") and not d["complete"]
        else:
            assert d["trick"] >= 1 and d["pass_direction"] is None and d["complete"]
    s = data["summary"]
    assert sum(s["by_grade"].values()) == s["decisions"]
    assert s["accuracy"] == round((s["by_grade"]["best"] + s["by_grade"]["good"]) / s["decisions"], 4)
    assert sum(x["decisions"] for x in s["deals"]) == s["decisions"]
    assert s["points_given_up"] == pytest.approx(sum(d["cost"] for d in data["decisions"]), abs=1e-6)
    assert len(s["biggest"]) <= 5
    costs = [data["decisions"][i]["cost"] for i in s["biggest"]]
    assert costs == sorted(costs, reverse=True)
    again = GameReview.from_json(json.loads(json.dumps(data)))
    assert again.to_json() == data
    # the same seed, the same review
    assert review_game(STANDARD, 4, actions, 2, simulations=20, review_seed=7, game_id="g1").to_json() == data
    other = review_game(STANDARD, 4, actions, 2, simulations=20, review_seed=8, game_id="g1").to_json()
    assert other["decisions"] != data["decisions"]


def test_a_game_that_is_not_over_is_refused() -> None:
    actions = _play(STANDARD, 4)
    with pytest.raises(NotOver, match="not over"):
        review_game(STANDARD, 4, actions[:-5], 0, simulations=5)
    with pytest.raises(NotOver):
        count_decisions(STANDARD, 4, actions[:40], 0)
    with pytest.raises(ValueError, match="seat"):
        count_decisions(STANDARD, 4, actions, 4)


def test_from_json_refuses_another_format() -> None:
    with pytest.raises(ValueError, match="not a game review"):
        GameReview.from_json({"format": "moonshot.game/2"})


@pytest.mark.parametrize(("variant", "kinds"), [("trend", {"pass", "play"}), ("turbo", {"play"}), ("kierki", {"play"})])
def test_whole_games_of_other_variants_are_reviewed(variant: str, kinds: set[str]) -> None:
    rules = find_variant(variant)
    actions = _play(rules, 6)
    for seat in range(4):
        review = review_game(rules, 6, actions, seat, simulations=3)
        data = review.to_json()
        assert data["variant"] == rules.name
        assert {d["kind"] for d in data["decisions"]} >= kinds
        assert data["summary"]["decisions"] == count_decisions(rules, 6, actions, seat)
