"""Events: who sees what. Each secret event is whole for its audience and redacted for the rest."""

from __future__ import annotations

import dataclasses

import pytest

from gamekit import cs
from moonshot.core.events import (
    EVERYONE,
    SPECTATOR,
    CardPlayed,
    Charged,
    ChargesRevealed,
    ChargingEnded,
    ChargingStarted,
    ClaimAnswered,
    ClaimMade,
    ClaimSucceeded,
    DealEnded,
    DealStarted,
    Event,
    Exposed,
    GameEnded,
    GameStarted,
    HandDealt,
    PassReceived,
    PassSent,
    TrickEnded,
    TrickStarted,
    seat_bit,
)
from moonshot.core.rules import PassDirection

PUBLIC = [
    DealStarted(0, PassDirection.LEFT, 0, None),
    ChargingStarted(None),
    Charged(1, cs("QS"), 1, False, 0b0010, None),
    ChargesRevealed((0, cs("QS"), 0, 0)),
    ChargingEnded((0, cs("QS"), 0, 0)),
    Exposed(2, cs("AH")),
    TrickStarted(1, 0),
    CardPlayed(0, 0, 1),
    TrickEnded(1, 2, (0, 1, 2, 3), (0, 1, 2, 3), 0),
    ClaimMade(3, cs("AS KS")),
    ClaimAnswered(3, 0, True),
    ClaimSucceeded(3, cs("AS KS QS")),
    DealEnded(0, (0, 26, 0, 0), (0, 26, 0, 0), None, (0, 0, 0, 0), 13, False),
    GameEnded((0, 1, 2, 3), (0,), 4),
]


@pytest.mark.parametrize("event", PUBLIC, ids=lambda e: e.kind)
def test_public_events_are_seen_whole_by_everyone(event: Event) -> None:
    assert event.audience == EVERYONE
    for viewer in (None, 0, 1, 2, 3, SPECTATOR):
        assert event.for_viewer(viewer) is event


def test_the_seed_is_seen_by_nobody_while_the_game_runs() -> None:
    e = GameStarted("standard", 7, "ab" * 32)
    assert e.audience == 0 and e.for_viewer(None) is e
    for viewer in (0, 1, 2, 3, SPECTATOR):
        seen = e.for_viewer(viewer)
        assert seen == GameStarted("standard", None, "ab" * 32)


@pytest.mark.parametrize(
    "event",
    [
        HandDealt(1, cs("2C 3C AS")),
        PassSent(0, 1, cs("QS AH 2C"), 3),
        PassReceived(0, 3, cs("QS AH 2C"), 3),
        Charged(1, cs("QS TC"), 2, True, 0b0010, 2),
    ],
    ids=lambda e: e.kind,
)
def test_a_spectator_sees_no_secret_of_any_seat(event: Event) -> None:
    seen = event.for_viewer(SPECTATOR)
    assert seen is None or getattr(seen, "cards", None) is None


def test_a_dealt_hand_is_seen_only_by_its_seat() -> None:
    e = HandDealt(2, cs("2C 3C AS"))
    assert e.audience == seat_bit(2) == 0b0100
    assert e.for_viewer(2) is e and e.for_viewer(None) is e
    for other in (0, 1, 3):
        assert e.for_viewer(other) is None


@pytest.mark.parametrize(
    "event",
    [PassSent(0, 1, cs("QS AH 2C"), 3), PassReceived(0, 3, cs("QS AH 2C"), 3)],
    ids=lambda e: e.kind,
)
def test_passes_show_only_the_count_to_others(event: PassSent | PassReceived) -> None:
    assert event.for_viewer(0) is event and event.for_viewer(None) is event
    for other in (1, 2, 3):
        seen = event.for_viewer(other)
        assert isinstance(seen, type(event))
        assert seen.cards is None and seen.count == 3
        assert dataclasses.replace(seen, cards=event.cards) == event
    assert event.cards == cs("QS AH 2C")  # redaction copies, never edits the original


def test_blind_charges_show_only_the_count_to_others() -> None:
    e = Charged(1, cs("QS TC"), 2, True, 0b0010, 2)
    assert e.for_viewer(1) is e and e.for_viewer(None) is e
    for other in (0, 2, 3):
        seen = e.for_viewer(other)
        assert isinstance(seen, Charged)
        assert (seen.cards, seen.count, seen.seat, seen.next_charger) == (None, 2, 1, 2)


def test_open_charges_are_public() -> None:
    e = Charged(1, cs("QS"), 1, False, 0b0010, None)
    assert all(e.for_viewer(s) is e for s in range(4))


def test_event_kinds_are_distinct() -> None:
    kinds = [cls.kind for cls in (type(e) for e in PUBLIC)] + [
        "game_started",
        "hand_dealt",
        "pass_sent",
        "pass_received",
    ]
    assert len(kinds) == len(set(kinds))
