"""moonshot.cluster.messages: the schema of the messages between cluster nodes."""

from __future__ import annotations

import json
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moonshot.actions import action_from_dict
from moonshot.cluster import messages as wire
from moonshot.engine import Game, Phase
from moonshot.server.table import TableEvent
from moonshot.sim import play_game
from moonshot.variants import find_variant


def game_log(variant: str, seed: int) -> list[TableEvent]:
    rules = find_variant(variant)
    record = play_game(rules, seed, ("random", "random", "random", "random"))
    game = Game(rules, seed)
    for a in record.actions:
        game.apply(action_from_dict(a))
    return [TableEvent(i + 1, e, forced=i % 7 == 0) for i, e in enumerate(game.log)]


@settings(max_examples=12, deadline=None)
@given(variant=st.sampled_from(["standard", "turbo", "omnibus", "trend", "kierki"]), seed=st.integers(0, 2**62))
def test_every_event_of_a_game_survives_the_wire_as_itself(variant: str, seed: int) -> None:
    events = game_log(variant, seed)
    msg = wire.decode(wire.encode({"k": "ev", "t": "T", "b": "B", "e": events}))
    assert msg["e"] == events
    # redacted copies (cards None) too
    redacted = [TableEvent(te.version, r) for te in events if (r := te.event.for_viewer(0)) is not None]
    assert wire.decode(wire.encode({"k": "ev", "t": "T", "b": "B", "e": redacted}))["e"] == redacted


def test_every_event_class_has_a_schema() -> None:
    from moonshot import events

    classes = {c for c in vars(events).values() if isinstance(c, type) and issubclass(c, events.Event)}
    assert classes - {events.Event} == {cls for cls, _ in wire.EVENTS.values()}


def test_a_request_keeps_its_phase() -> None:
    msg = {"k": "rq", "t": "T", "b": "B", "c": 2, "rid": 7, "v": 30, "ph": Phase.PASS, "lp": 0, "hand": 1 << 40}
    assert wire.decode(wire.encode(msg)) == {**msg, "ph": Phase.PASS}


def test_trend_messages_keep_each_chairs_status_and_counts() -> None:
    events = game_log("trend", 3)[:5]
    msg = {"k": "tev", "t": "T", "b": "B", "e": events, "st": [0, 1, 2, 0], "n": [0, 1, 2, 3, 4, 5, 6, 7]}
    got = wire.decode(wire.encode(msg))
    assert got["e"] == events and list(got["st"]) == [0, 1, 2, 0] and list(got["n"]) == list(range(8))
    for m in (
        {
            "k": "tmt",
            "t": "T",
            "b": "B",
            "ticket": "x",
            "c": 1,
            "owner": "n",
            "names": ["a", "b", "c", "d"],
            "rules": "trend",
        },
        {"k": "tat", "t": "T", "b": "B", "c": 3, "node": "n"},
        {"k": "tak", "t": "T", "b": "B", "c": 3, "owner": "n", "names": ["a", "b", "c", "d"], "rules": "trend"},
        {"k": "trf", "t": "T", "b": "B", "why": "taken"},
        {"k": "nt", "t": "T", "b": "B", "kd": "paused", "cs": "storage", "tx": "paused: the store"},
    ):
        assert wire.decode(wire.encode(m)) == m
    assert set(wire.MESSAGES) >= wire.TREND and not wire.TREND & (wire.TO_TABLE | wire.HTTP)


HOSTILE = [
    pickle.dumps({"k": "ev", "e": print}),  # the old format, with a function in it
    b"\x80\x04garbage",
    b"",
    b"[]",
    b'"ev"',
    b'{"k": "rm -rf"}',
    b'{"k": "ev", "t": "T", "b": "B"}',  # a field missing
    b'{"k": "ev", "t": "T", "b": "B", "e": [], "x": 1}',  # a field too many
    b'{"k": "ev", "t": "T", "b": "B", "e": [[1, false, "os.system", "ls"]]}',  # no such event
    b'{"k": "ev", "t": "T", "b": "B", "e": [[1, false, "HandDealt", 0]]}',  # too few fields
    b'{"k": "ev", "t": "T", "b": "B", "e": [[1, false, "HandDealt", 0, "all"]]}',  # a string for cards
    b'{"k": "ev", "t": "T", "b": "B", "e": [[true, false, "HandDealt", 0, 1]]}',  # a bool for a version
    b'{"k": "ev", "t": "T", "b": "B", "e": [[1, false, "DealStarted", 0, "up", 0, null]]}',  # no such direction
    b'{"k": "rq", "t": "T", "b": "B", "c": 0, "rid": 1, "v": 1, "ph": "nap", "lp": 0, "hand": 0}',
    b'{"k": "sb", "t": "T", "b": "B", "c": 0, "a": "play 2C", "rid": null}',
    b'{"k": "cl", "t": "T", "b": "B", "why": "x", "st": "exploded"}',
    b'{"k": "mt", "t": "T", "b": "B", "ticket": "x", "c": 0, "owner": "n", "names": [1], "rules": "r", "cred": null}',
    b'{"k": "hr", "r": "1", "node": "n", "m": "GET", "p": "/", "h": {"cookie": 5}, "body": ""}',
    b'{"k": "kq", "t": "T", "b": "B", "c": 0, "rid": 1, "v": 1, "tn": 1, "tc": ["2C"], "p": false}',  # ints
    b'{"k": "kq", "t": "T", "b": "B", "c": 0, "rid": 1, "v": 1, "tn": 1, "p": false}',  # no trick cards
    b'{"k": "kq", "t": "T", "b": "B", "c": 0, "rid": 1, "v": 1, "tn": 1, "tc": [], "p": 0}',  # p is a bool
    b'{"k": "kj", "t": "T", "b": "B", "rid": null, "why": "x"}',  # a rejection names its request
    b'{"k": "ka", "t": "T", "b": "B", "c": "N", "node": "n", "ticket": "x"}',  # a chair is a number
    b'{"k": "km", "t": "T", "b": "B", "ticket": "x", "c": 0, "owner": "n", "names": "NESW"}',
    b'{"k": "tev", "t": "T", "b": "B", "e": [], "st": "online", "n": []}',  # a string for the statuses
    b'{"k": "tev", "t": "T", "b": "B", "e": [], "st": [0, 0, 0, 0]}',  # no counts
    b'{"k": "tev", "t": "T", "b": "B", "e": [], "st": [0, 0, 0, true], "n": []}',  # a bool for a status
    b'{"k": "tak", "t": "T", "b": "B", "c": "1", "owner": "n", "names": [], "rules": "trend"}',  # a string chair
    b'{"k": "trf", "t": "T", "b": "B"}',  # no reason
    json.dumps(
        {"k": "ev", "t": "T", "b": "B", "e": [[1, False, "TrickEnded", 1, 0, list(range(100)), [], 0]]}
    ).encode(),
    b"[" * 100_000,  # deep nesting
    b"x" * (wire.MAX_MESSAGE + 1),
]


@pytest.mark.parametrize("data", HOSTILE)
def test_what_breaks_the_schema_is_a_wire_error(data: bytes) -> None:
    with pytest.raises(wire.WireError):
        wire.decode(data)


def test_an_unknown_kind_cannot_be_sent() -> None:
    with pytest.raises(wire.WireError):
        wire.encode({"k": "zz"})


KIERKI = [
    {"k": "ka", "t": "T", "b": "B", "c": 3, "node": "host-1-ab", "ticket": "t1"},
    {"k": "km", "t": "T", "b": "B", "ticket": "t1", "c": 3, "owner": "host-2-cd", "names": ["a", "b", "c", "d"]},
    {"k": "kf", "t": "T", "b": "B", "ticket": "t1"},
    {"k": "kq", "t": "T", "b": "B", "c": 1, "rid": 9, "v": 40, "tn": 5, "tc": (12, 51), "p": True},
    {"k": "kr", "t": "T", "b": "B"},
    {"k": "kj", "t": "T", "b": "B", "rid": 9, "why": "timeout"},
]


@pytest.mark.parametrize("msg", KIERKI, ids=lambda m: m["k"])
def test_the_kierki_messages_survive_the_wire(msg: dict[str, object]) -> None:
    assert wire.decode(wire.encode(msg)) == msg
    assert msg["k"] in wire.KIERKI and msg["k"] not in wire.TO_TABLE  # handled by cluster_kierki's hook


def test_a_kierki_request_carries_what_trick_needs() -> None:
    """A remote request has no view: the trick's number and the cards on the table come along."""
    msg = {"k": "kq", "t": "T", "b": "B", "c": 0, "rid": 1, "v": 2, "tn": 13, "tc": [], "p": False}
    got = wire.decode(wire.encode(msg))
    assert got["tn"] == 13 and got["tc"] == () and got["p"] is False


MIXED = [
    {
        "k": "mc",
        "r": "r1",
        "node": "host-1-ab",
        "code": "g1",
        "tok": None,
        "name": "x(12)",
        "kind": "bot",
        "cred": "c",
        "gt": "any",
        "pr": "sessions",
    },
    {"k": "ma", "r": "r1", "ok": False, "why": "the game has already started"},
    {
        "k": "mm",
        "t": "T",
        "b": "B",
        "r": "r1",
        "c": 2,
        "owner": "host-2-cd",
        "names": ["a", "b", "c", "d"],
        "rules": "standard",
        "cred": None,
        "rs": False,
    },
    {"k": "mx", "r": "r1", "node": "host-1-ab"},
]


@pytest.mark.parametrize("msg", MIXED, ids=lambda m: m["k"])
def test_the_mixed_table_messages_survive_the_wire(msg: dict[str, object]) -> None:
    assert wire.decode(wire.encode(msg)) == msg
    assert msg["k"] in wire.MIXED and msg["k"] not in wire.TO_TABLE  # handled by cluster_mixed's hook


@pytest.mark.parametrize(
    "data",
    [
        b'{"k": "ma", "r": "r1", "ok": "yes", "why": null}',  # ok is a bool
        b'{"k": "mc", "r": "r1", "node": "n", "code": 5, "tok": null, "name": "x", "kind": "bot", "cred": null, '
        b'"gt": "any"}',  # a number for a code
        b'{"k": "mx", "r": "r1"}',  # no node
    ],
)
def test_a_broken_mixed_table_message_is_a_wire_error(data: bytes) -> None:
    with pytest.raises(wire.WireError):
        wire.decode(data)
