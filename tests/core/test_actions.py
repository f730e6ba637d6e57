"""Actions: value semantics and the compact JSON form, with errors for bad input."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gamekit import c, cs
from moonshot.core.actions import (
    AcceptClaim,
    Action,
    ActionFormatError,
    Charge,
    Claim,
    Expose,
    Pass,
    Play,
    RejectClaim,
    action_from_dict,
    action_to_dict,
    actions_json,
)


def test_play_of_is_cached_and_equal_to_a_fresh_play() -> None:
    assert Play.of(2, 5) is Play.of(2, 5)
    assert Play.of(2, 5) == Play(2, 5)
    assert hash(Play.of(1, 0)) == hash(Play(1, 0))
    assert all(Play.of(s, c) == Play(s, c) for s in range(4) for c in range(52))


@pytest.mark.parametrize(("seat", "card"), [(0, 52), (0, -1), (4, 0), (-1, 5)])
def test_play_of_refuses_a_seat_or_card_out_of_range(seat: int, card: int) -> None:
    with pytest.raises(ValueError, match="no play of card"):
        Play.of(seat, card)


def test_actions_are_immutable() -> None:
    with pytest.raises(AttributeError):
        Play.of(0, 0).card = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    ("action", "as_dict"),
    [
        (Play.of(0, c("QS")), {"t": "play", "s": 0, "c": "QS"}),
        (Pass(1, cs("AS 2C TH")), {"t": "pass", "s": 1, "c": ["2C", "TH", "AS"]}),
        (Charge(2, cs("QS AH")), {"t": "charge", "s": 2, "c": ["AH", "QS"]}),
        (Charge(2, 0), {"t": "charge", "s": 2, "c": []}),
        (Expose(3, cs("AH")), {"t": "expose", "s": 3, "c": ["AH"]}),
        (Claim(1), {"t": "claim", "s": 1}),
        (AcceptClaim(0, 1), {"t": "accept", "s": 0, "claimer": 1}),
        (RejectClaim(2, 1), {"t": "reject", "s": 2, "claimer": 1}),
    ],
)
def test_dict_form(action: Action, as_dict: dict[str, Any]) -> None:
    assert action_to_dict(action) == as_dict
    assert action_from_dict(as_dict) == action


def test_from_dict_accepts_any_card_notation() -> None:
    assert action_from_dict({"t": "play", "s": 0, "c": "10h"}) == Play.of(0, c("TH"))
    assert action_from_dict({"t": "pass", "s": 0, "c": ["Th", "2c", "10S"]}) == Pass(0, cs("TH 2C TS"))


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ([1, 2], "must be an object"),
        ({"t": "dance", "s": 0}, "unknown action type 'dance'"),
        ({"t": "play", "s": 4, "c": "QS"}, "bad seat 4"),
        ({"t": "play", "s": "0", "c": "QS"}, "bad seat '0'"),
        ({"t": "play", "s": 0}, "bad action"),
        ({"t": "play", "s": 0, "c": "ZS"}, "'ZS'"),
        ({"t": "pass", "s": 0, "c": ["QS", "QS", "2C"]}, "QS"),
        ({"t": "pass", "s": 0, "c": 5}, "bad action"),
        ({"t": "accept", "s": 0}, "bad claimer None"),
        ({"t": "reject", "s": 0, "claimer": 7}, "bad claimer 7"),
    ],
)
def test_from_dict_errors_say_what_is_wrong(bad: Any, says: str) -> None:
    with pytest.raises(ActionFormatError) as err:
        action_from_dict(bad)
    assert says in str(err.value)


actions = st.one_of(
    st.builds(Play.of, st.integers(0, 3), st.integers(0, 51)),
    st.builds(Pass, st.integers(0, 3), st.integers(0, (1 << 52) - 1)),
    st.builds(Charge, st.integers(0, 3), st.integers(0, (1 << 52) - 1)),
    st.builds(Expose, st.integers(0, 3), st.integers(0, (1 << 52) - 1)),
    st.builds(Claim, st.integers(0, 3)),
    st.builds(AcceptClaim, st.integers(0, 3), st.integers(0, 3)),
    st.builds(RejectClaim, st.integers(0, 3), st.integers(0, 3)),
)


@given(actions)
def test_every_action_round_trips(action: Action) -> None:
    assert action_from_dict(action_to_dict(action)) == action


@given(st.lists(actions, max_size=20))
def test_actions_json_is_json_dumps_of_the_dicts(played: list[Action]) -> None:
    want = json.dumps([action_to_dict(a) for a in played], separators=(",", ":"))
    assert actions_json(played) == want
