"""One-card-at-a-time decisions over the engine: passing, charging, exposing, playing."""

from __future__ import annotations

import pytest

from moonshot.core.cards import ACE_HEARTS, card_list
from moonshot.core.engine import Game, Phase
from moonshot.core.variants import find_variant
from moonshot.rl.decisions import DONE_BIT, Decisions
from moonshot.rl.observation import DONE


def test_a_pass_is_three_card_choices_then_the_engine_gets_it() -> None:
    g = Game(find_variant("standard"), seed=1)
    d = Decisions(g)
    cards = card_list(g.hands[0])[:3]
    assert d.kind(0) == "pass"
    assert d.apply(0, cards[0]) == [] and d.apply(0, cards[1]) == []
    assert not d.mask(0) >> cards[0] & 1  # a chosen card cannot be chosen again
    assert not d.mask(0) & DONE_BIT
    events = d.apply(0, cards[2])
    assert events and g.passed[0] == sum(1 << c for c in cards)
    assert d.kind(0) is None and d.mask(0) == 0


def test_a_seat_that_started_a_selection_goes_on_first() -> None:
    g = Game(find_variant("standard"), seed=2)
    d = Decisions(g)
    d.apply(2, card_list(g.hands[2])[0])
    assert d.next_seat() == 2


def test_illegal_choice_raises_and_changes_nothing() -> None:
    g = Game(find_variant("standard"), seed=1)
    d = Decisions(g)
    not_mine = next(c for c in range(52) if not g.hands[0] >> c & 1)
    with pytest.raises(ValueError):
        d.apply(0, not_mine)
    with pytest.raises(ValueError):
        d.apply(0, DONE)
    assert d.selected == [0, 0, 0, 0] and g.passed[0] is None


def _to_charging(variant: str) -> tuple[Game, Decisions]:
    g = Game(find_variant(variant), seed=5)
    d = Decisions(g)
    while g.phase is Phase.PASS:
        s = d.next_seat()
        assert s is not None
        d.apply(s, card_list(d.mask(s))[0])
    return g, d


def test_charging_is_cards_then_done() -> None:
    g, d = _to_charging("turbo-bridge")
    assert g.phase is Phase.CHARGE
    s = d.next_seat()
    assert s is not None and d.kind(s) == "charge"
    options = d.mask(s) & ~DONE_BIT
    assert d.mask(s) & DONE_BIT
    if options:
        c = card_list(options)[0]
        assert d.apply(s, c) == []
        assert g.charged[s] == 0  # not charged until DONE
        d.apply(s, DONE)
        assert g.charged[s] == 1 << c
    else:
        d.apply(s, DONE)
        assert g.charged[s] == 0


def test_exposing_is_the_card_then_done() -> None:
    g = Game(find_variant("trend"), seed=0)
    d = Decisions(g)
    while g.phase is not Phase.EXPOSE and g.phase is not Phase.PLAY:
        s = d.next_seat()
        assert s is not None
        d.apply(s, card_list(d.mask(s) & ~(1 << ACE_HEARTS))[0])
    if g.phase is Phase.EXPOSE:
        s = d.next_seat()
        assert s is not None and d.kind(s) == "expose"
        assert d.mask(s) == 1 << ACE_HEARTS | DONE_BIT
        d.apply(s, ACE_HEARTS)
        d.apply(s, DONE)
        assert g.exposed[s] == 1 << ACE_HEARTS
