"""moonshot.cluster.messages: the schema of the messages between cluster nodes."""

from __future__ import annotations

import json
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moonshot.cluster import messages as wire
from moonshot.core.actions import action_from_dict
from moonshot.core.engine import Game, Phase
from moonshot.core.variants import find_variant
from moonshot.play.sim import play_game
from moonshot.runtime.table import ChairState, TableEvent, TableState, TableStatus


def game_log(variant: str, seed: int) -> list[TableEvent]:
    rules = find_variant(variant)
    record = play_game(rules, seed, ("random", "random", "random", "random"))
    game = Game(rules, seed)
    for a in record.actions:
        game.apply(action_from_dict(a))
    return [TableEvent(i + 1, e, forced=i % 7 == 0) for i, e in enumerate(game.log)]


def again(msg: wire.Message) -> wire.Message:
    return wire.decode(wire.encode(msg))


@settings(max_examples=12, deadline=None)
@given(variant=st.sampled_from(["standard", "turbo", "omnibus", "trend", "kierki"]), seed=st.integers(0, 2**62))
def test_every_event_of_a_game_survives_the_wire_as_itself(variant: str, seed: int) -> None:
    events = game_log(variant, seed)
    msg = wire.Events(table="T", binding="B", events=events, state=None)
    assert again(msg) == msg
    # redacted copies (cards None) too
    redacted = [TableEvent(te.version, r) for te in events if (r := te.event.for_viewer(0)) is not None]
    got = again(wire.Events(table="T", binding="B", events=redacted, state=None))
    assert isinstance(got, wire.Events) and got.events == redacted


def test_every_event_class_has_a_schema() -> None:
    from moonshot.core import events

    classes = {c for c in vars(events).values() if isinstance(c, type) and issubclass(c, events.Event)}
    assert classes - {events.Event} == {cls for cls, _ in wire.EVENTS.values()}


def test_a_message_is_json_with_its_kind_and_fields_in_words() -> None:
    msg = wire.Request(
        table="T",
        binding="B",
        chair=2,
        request=7,
        version=30,
        phase=Phase.PASS,
        legal=0,
        hand=1 << 40,
        trick=0,
        trick_cards=(),
        state=None,
    )
    data = json.loads(wire.encode(msg))
    assert data == {
        "kind": "seat.request",
        "table": "T",
        "binding": "B",
        "chair": 2,
        "request": 7,
        "version": 30,
        "phase": "pass",
        "legal": 0,
        "hand": 1 << 40,
        "trick": 0,
        "trick_cards": [],
        "state": None,
    }
    assert again(msg) == msg and again(msg).phase is Phase.PASS  # type: ignore[attr-defined]


def test_every_kind_is_named_once_and_in_words() -> None:
    assert len(wire.MESSAGES) == len({c.__name__ for c in wire.MESSAGES.values()})
    for kind in wire.MESSAGES:
        group, _, name = kind.partition(".")
        assert group in ("table", "seat", "http", "lobby", "mixed", "moderation") and len(name) > 2


def test_events_carry_the_tables_state_each_chairs_occupant_and_counts() -> None:
    events = game_log("trend", 3)[:5]
    state = TableState(
        (
            ChairState("human", False, 0, 1),
            ChairState("bot", True, 2, 3),
            ChairState("empty", False, 4, 5),
            ChairState("human", False, 6, 7),
        ),
        True,
    )
    msg = wire.Events(table="T", binding="B", events=events, state=state)
    assert again(msg) == msg
    assert json.loads(wire.encode(msg))["state"]["chairs"][1] == {
        "occupant": "bot",
        "timed_out": True,
        "timeouts": 2,
        "errors": 3,
    }


def test_re_join_and_table_messages_survive_the_wire() -> None:
    for m in (
        wire.Attach(table="T", binding="B", chair=3, node="n", protocol="trend"),
        wire.Attached(table="T", binding="B", chair=3, owner="n", names=["a", "b", "c", "d"], rules="trend"),
        wire.Refused(table="T", binding="B", reason="taken"),
        wire.Notice(table="T", binding="B", notice="paused", cause="storage", text="paused: the store"),
        wire.Closed(table="T", binding="B", reason="over", status=TableStatus.FINISHED),
    ):
        assert again(m) == m
    assert wire.Attach.kind in wire.TO_TABLE and not wire.TO_TABLE & wire.HTTP


def _j(**fields: object) -> bytes:
    return json.dumps(fields).encode()


EV = {"kind": "seat.events", "table": "T", "binding": "B"}
CHAIR = {"occupant": "human", "timed_out": False, "timeouts": 0, "errors": 0}
RQ = {"kind": "seat.request", "table": "T", "binding": "B", "chair": 0, "request": 1, "version": 1, "phase": "play"}
RQ |= {"legal": 0, "hand": 0, "trick": 1, "state": None}
HOSTILE = [
    pickle.dumps({"kind": "seat.events", "events": print}),  # a pickle, with a function in it
    b"\x80\x04garbage",
    b"",
    b"[]",
    b'"seat.events"',
    b'{"kind": "rm -rf"}',
    b'{"k": "ev", "t": "T", "b": "B", "e": []}',  # the short names are gone
    _j(**EV),  # a field missing
    _j(**EV, events=[], x=1, state=None),  # a field too many
    _j(**EV, events=[[1, False, "os.system", "ls"]], state=None),  # no such event
    _j(**EV, events=[[1, False, "HandDealt", 0]], state=None),  # too few fields
    _j(**EV, events=[[1, False, "HandDealt", 0, "all"]], state=None),  # a string for cards
    _j(**EV, events=[[True, False, "HandDealt", 0, 1]], state=None),  # a bool for a version
    _j(**EV, events=[[1, False, "DealStarted", 0, "up", 0, None]], state=None),  # no such direction
    _j(**EV, events=[[1, False, "TrickEnded", 1, 0, list(range(100)), [], 0]], state=None),  # too many cards
    _j(
        kind="seat.request", table="T", binding="B", chair=0, request=1, version=1, phase="nap", legal=0, hand=0
    ),  # no such phase
    _j(kind="table.submit", table="T", binding="B", chair=0, action="play 2C", request=None),  # action: an object
    _j(kind="seat.closed", table="T", binding="B", reason="x", status="exploded"),
    _j(
        kind="seat.matched",
        table="T",
        binding="B",
        ticket="x",
        chair=0,
        owner="n",
        names=[1],
        rules="r",
        credential=None,
        restored=False,
    ),
    _j(kind="http.request", request="1", node="n", method="GET", path="/", headers={"cookie": 5}, body=""),
    _j(**RQ, trick_cards=["2C"]),  # cards are ints
    _j(**RQ),  # no trick cards
    _j(**RQ, trick_cards=[], paused=False),  # a field too many
    _j(kind="table.attach", table="T", binding="B", chair="N", node="n", protocol="kierki"),  # a chair is a number
    _j(kind="seat.attached", table="T", binding="B", chair=0, owner="n", names="NESW", rules="kierki"),
    _j(**EV, events=[], state="online"),  # a string for the state
    _j(**EV, events=[], state={"chairs": [], "paused": False}),  # not four chairs
    _j(**EV, events=[], state={"chairs": [CHAIR] * 4}),  # no paused
    _j(**EV, events=[], state={"chairs": [CHAIR] * 3 + [{**CHAIR, "timeouts": True}], "paused": False}),  # a bool
    _j(**EV, events=[], state={"chairs": [CHAIR] * 3 + [{**CHAIR, "occupant": "ghost"}], "paused": False}),
    _j(kind="seat.attached", table="T", binding="B", chair="1", owner="n", names=[], rules="trend"),  # a string
    _j(kind="seat.refused", table="T", binding="B"),  # no reason
    b"[" * 100_000,  # deep nesting
    b"x" * (wire.MAX_MESSAGE + 1),
]


@pytest.mark.parametrize("data", HOSTILE)
def test_what_breaks_the_schema_is_a_wire_error(data: bytes) -> None:
    with pytest.raises(wire.WireError):
        wire.decode(data)


def test_only_a_message_can_be_sent() -> None:
    with pytest.raises(wire.WireError):
        wire.encode({"kind": "seat.events"})  # type: ignore[arg-type]


# a Kierki IAM<seat> is seated with the generic kinds: a free chair claimed (table.attach), taken
# (seat.attached) or refused; a new table or a chair handed to a waiting client (seat.matched)
SEATING = [
    wire.Attach(table="T", binding="B", chair=3, node="host-1-ab", protocol="kierki"),
    wire.Attached(table="T", binding="B", chair=3, owner="host-2-cd", names=["a", "b", "c", "d"], rules="kierki"),
    wire.Refused(table="T", binding="B", reason="taken"),
    wire.Matched(  # also a mixed table's claim seated (its id the ticket), in a restored game
        table="T",
        binding="B",
        ticket="r1",
        chair=2,
        owner="host-2-cd",
        names=["a", "b", "c", "d"],
        rules="standard",
        credential=None,
        restored=True,
    ),
]


@pytest.mark.parametrize("msg", SEATING, ids=lambda m: m.kind)
def test_the_seating_messages_survive_the_wire(msg: wire.Message) -> None:
    assert again(msg) == msg
    assert (msg.kind in wire.TO_TABLE) == isinstance(msg, wire.Attach)  # a claim goes to the owner


def test_a_request_carries_what_kierkis_trick_needs() -> None:
    """A remote request has no view: the trick's number and the cards on the table come along,
    and whether the table is paused (a seat empty: TRICK held back) with its state."""
    paused = TableState((ChairState("empty", False, 0, 0),) + (ChairState("human", False, 0, 0),) * 3, True)
    msg = wire.Request(
        table="T",
        binding="B",
        chair=0,
        request=1,
        version=2,
        phase=Phase.PLAY,
        legal=1,
        hand=3,
        trick=13,
        trick_cards=(4, 5),
        state=paused,
    )
    got = again(msg)
    assert isinstance(got, wire.Request)
    assert got.trick == 13 and got.trick_cards == (4, 5) and got.state is not None and got.state.paused


MIXED = [
    wire.MixedClaim(
        request="r1",
        node="host-1-ab",
        code="g1",
        token=None,
        name="x(12)",
        player="bot",
        credential="c",
        game_type="any",
        protocol="sessions",
    ),
    wire.MixedAnswer(request="r1", ok=False, reason="the game has already started"),
    wire.MixedLeft(request="r1", node="host-1-ab"),
]


@pytest.mark.parametrize("msg", MIXED, ids=lambda m: m.kind)
def test_the_mixed_table_messages_survive_the_wire(msg: wire.Message) -> None:
    assert again(msg) == msg
    assert msg.kind in wire.MIXED and msg.kind not in wire.TO_TABLE  # handled by the mixed-table hook


@pytest.mark.parametrize(
    "data",
    [
        _j(kind="mixed.answer", request="r1", ok="yes", reason=None),  # ok is a bool
        _j(
            kind="mixed.claim",
            request="r1",
            node="n",
            code=5,
            token=None,
            name="x",
            player="bot",
            credential=None,
            game_type="any",
            protocol="sessions",
        ),  # a number for a code
        _j(kind="mixed.left", request="r1"),  # no node
    ],
)
def test_a_broken_mixed_table_message_is_a_wire_error(data: bytes) -> None:
    with pytest.raises(wire.WireError):
        wire.decode(data)


def test_a_moderation_change_survives_the_wire_and_a_broken_one_is_refused() -> None:
    ban = {"kind": "name", "value": "mallory", "until": None, "reason": "abuse", "by": "ops", "at": 1.5}
    msg = wire.ModerationChanged(node="host-1-ab", change={"action": "ban", "ban": ban})
    assert again(msg) == msg and msg.kind not in wire.TO_TABLE
    for data in (
        _j(kind="moderation.changed", node="n", change="ban mallory"),  # not an object
        _j(kind="moderation.changed", change={"action": "ban"}),  # no node
        _j(kind="moderation.changed", node="n", change={}, table="T"),  # a field it has not
    ):
        with pytest.raises(wire.WireError):
            wire.decode(data)
