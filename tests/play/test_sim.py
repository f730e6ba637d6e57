"""The simulator: reproducible games, rotation, statistics and replay verification."""

from __future__ import annotations

import json

import pytest

from moonshot.bots.registry import UnknownBot, make_bot, parse_seats, spec_of
from moonshot.core.actions import action_from_dict
from moonshot.core.engine import replay
from moonshot.core.events import HandDealt
from moonshot.core.variants import find_variant
from moonshot.play.sim import GameRecord, play_game, rotated, summarise, tasks, verify_record


def test_parse_seats_repeats_the_last_name() -> None:
    assert parse_seats("random") == ("random",) * 4
    assert parse_seats("heuristic, random") == ("heuristic", "random", "random", "random")
    with pytest.raises(UnknownBot, match="nobody"):
        parse_seats("random,nobody")
    with pytest.raises(ValueError):
        parse_seats("random,random,random,random,random")


def test_unknown_bot_names_the_known_ones() -> None:
    with pytest.raises(UnknownBot, match="random"):
        make_bot("alphahearts")


def test_rotation_moves_policies_clockwise() -> None:
    seats = ("a", "b", "c", "d")
    assert rotated(seats, 0) == seats
    assert rotated(seats, 1) == ("d", "a", "b", "c")
    assert sorted(t[1] for t in tasks([5], duplicate=True)) == [0, 1, 2, 3]


@pytest.mark.parametrize("variant", ["standard", "trend", "turbo-blind-chain", "kierki", "gym"])
def test_same_seed_same_game(variant: str) -> None:
    rules = find_variant(variant)
    a = play_game(rules, 11, ["random"] * 4)
    b = play_game(rules, 11, ["random"] * 4)
    assert a.to_json() == b.to_json()
    assert a.deals == len(a.deal_points) >= 1


def test_duplicate_rotations_see_the_same_deals() -> None:
    rules = find_variant("standard")
    deals_seen = []
    for r in range(4):
        rec = play_game(rules, 3, ["random"] * 4, rotation=r)
        assert verify_record(json.loads(json.dumps(rec.to_json()))).ok
        game = replay(rules, 3, [action_from_dict(a) for a in rec.actions])
        deals_seen.append([(e.seat, e.cards) for e in game.log if isinstance(e, HandDealt)][:8])
    assert all(d == deals_seen[0] for d in deals_seen)


def test_summary_counts_every_seat_deal() -> None:
    rules = find_variant("standard")
    recs = [play_game(rules, s, ["random"] * 4, r) for s, r in tasks(range(3), duplicate=True)]
    stats = summarise(recs)
    st = stats["random"]
    assert len(st.deal_points) == 4 * sum(r.deals for r in recs)
    assert st.games == 4 * len(recs)
    assert abs(st.win_rate - 0.25) < 1e-9  # every game has winners, shares sum to one per game
    assert st.ci95 > 0


def test_verify_record_catches_tampering() -> None:
    rec = play_game(find_variant("omnibus"), 2, ["random"] * 4).to_json()
    assert verify_record(rec).ok
    bad_scores = dict(rec, scores=[0, 0, 0, 0])
    assert "scores differ" in verify_record(bad_scores).message
    truncated = dict(rec, actions=rec["actions"][:-5])
    assert "end before the game does" in verify_record(truncated).message
    illegal = dict(rec, actions=[dict(rec["actions"][0], c=["AS", "AS", "AS"]), *rec["actions"][1:]])
    assert not verify_record(illegal).ok
    assert not verify_record("not an object").ok
    assert not verify_record(dict(rec, variant="nope")).ok
    assert "unknown record format" in verify_record(dict(rec, format="moonshot.game/9")).message


def test_records_from_before_keyed_dealing_are_refused_with_the_reason() -> None:
    rec = play_game(find_variant("standard"), 2, ["random"] * 4).to_json()
    assert rec["format"] == "moonshot.game/2"
    result = verify_record(dict(rec, format="moonshot.game/1"))
    assert not result.ok and "no longer replayable" in result.message and "deals its cards" in result.message


def test_record_json_round_trip() -> None:
    rec = play_game(find_variant("gym", max_score=30), 4, ["random"] * 4, options={"max_score": 30})
    data = json.loads(json.dumps(rec.to_json()))
    assert data["options"] == {"max_score": 30}
    assert max(data["scores"]) > 30
    assert verify_record(data).ok
    assert isinstance(rec, GameRecord)


def test_bots_answer_concurrent_claims_in_self_play() -> None:
    # Turbo claims are never asked for: play_game lets the other three bots answer each claim at once
    rules = find_variant("turbo")
    claims = 0
    for seed in range(6):
        rec = play_game(rules, seed, ("heuristic", "heuristic", "random", "heuristic"))
        tags = [a["t"] for a in rec.actions]
        for i, tag in enumerate(tags):
            if tag == "claim":
                claims += 1
                assert tags[i + 1 : i + 4] == ["accept"] * 3 or "reject" in tags[i + 1 : i + 4]
        assert verify_record(rec.to_json()).ok
    assert claims > 0


def test_a_bot_is_named_by_its_spec() -> None:
    assert spec_of(make_bot("heuristic")) == "heuristic"
    assert spec_of(make_bot("search", simulations=200)) == "search --simulations 200"
    assert spec_of(make_bot("search", think_ms=200)) == "search"  # the default says nothing
    assert spec_of(make_bot("search", think_ms=50, rollout="random")) == "search --rollout random --think-ms 50"
