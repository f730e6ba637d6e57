"""The belief network: its input, its odds, the packaged weights, and the worlds search deals with it."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moonshot.bots.belief import (
    BELIEF_FORMAT,
    N_BELIEF_FEATURES,
    BeliefNet,
    belief_file,
    belief_row,
    deal_weights,
    default_belief,
    holders,
    possible,
)
from moonshot.bots.random import RandomBot
from moonshot.bots.search import SearchBot
from moonshot.core.cards import SUIT_MASKS, card_list
from moonshot.core.engine import Game, Phase
from moonshot.core.rules import EndRule
from moonshot.core.variants import find_variant
from moonshot.core.views import SeatView, seat_view


def _view_after(seed: int, moves: int) -> tuple[Game, SeatView]:
    """A card decision of a standard deal (passing on) after about ``moves`` random actions."""
    rules = find_variant("standard").replace(end=EndRule.DEALS, deals=1)
    game = Game(rules, seed)
    rng = random.Random(seed)
    last: tuple[Game, SeatView] | None = None
    while not game.over:
        seat = game.to_act()[0]
        view = seat_view(game, seat)
        if view.phase is Phase.PLAY:
            last = (game, view)
            if moves <= 0:
                return last
            moves -= 1
        game.apply(RandomBot().act(view, rng))
    raise AssertionError("the deal ended first")


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 47))
def test_the_row_is_the_seats_information_and_the_true_holder_is_always_possible(seed: int, moves: int) -> None:
    game, view = _view_after(seed, moves)
    x = belief_row(view)
    assert x.shape == (N_BELIEF_FEATURES,) and x.dtype == np.float32
    assert [c for c in range(52) if x[c]] == card_list(view.hand)
    assert [c for c in range(52) if x[52 + c]] == card_list(view.unseen)
    me = view.seat
    for j in range(3):  # each other seat's block: the cards it played first
        s = (me + 1 + j) & 3
        block = 104 + j * (3 * 52 + 8)
        mine = {c for t in view.tricks for c, p in zip(t.cards, t.seats) if p == s}
        mine |= {c for p, c in view.trick if p == s}
        assert {c for c in range(52) if x[block + c]} == mine
        assert list(x[block + 156 : block + 160]) == [view.voids[s] >> su & 1 for su in range(4)]
    y = holders(view, list(game.hands))
    m = possible(view)
    for c in range(52):
        if view.unseen >> c & 1:
            assert game.hands[(me + 1 + y[c]) & 3] >> c & 1
            assert m[c, y[c]] == 1.0  # never ruled out: voids, known cards and empty hands are facts
        else:
            assert y[c] == -1 and not m[c].any()


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 40))
def test_the_packaged_odds_are_distributions_over_the_seats_that_may_hold_each_card(seed: int, moves: int) -> None:
    _, view = _view_after(seed, moves)
    p = default_belief().probs(view)
    m = possible(view)
    assert np.array_equal(default_belief().probs(view, m), p)  # the caller's mask, the same odds
    assert p.shape == (52, 3)
    assert np.all(p[m == 0] == 0)
    unseen = [c for c in range(52) if view.unseen >> c & 1]
    assert np.allclose(p[unseen].sum(axis=1), 1.0, atol=1e-5)
    w = deal_weights(view, p, m)
    me = view.seat
    others = [(me + 1 + j) & 3 for j in range(3)]
    room = [max(1, view.cards_left[s] - (view.known_cards[s] & view.unseen).bit_count()) for s in others]
    for c in unseen:  # the belief over the seat's room (a floor keeps every possible seat possible)
        assert w[4 * c + me] == 0.0
        for j, s in enumerate(others):
            assert (w[4 * c + s] > 0) == bool(m[c, j])
            if m[c, j]:
                assert abs(w[4 * c + s] * room[j] - p[c, j]) < 2e-4


def test_the_packaged_network_places_the_cards_better_than_dealing_them_uniformly() -> None:
    """On deals it never saw (``learned`` and ``shooter`` seats, as it was trained), the true holders
    are likelier under the packaged network than under a uniform deal over the seats that may
    hold each card."""
    from moonshot.training.belief import _loss_grad, examples, uniform_loss
    from moonshot.training.learned import GenConfig, generate

    config = GenConfig(teacher="learned", partner="shooter", seed=9_000_000, simulations=1)
    data = examples(config, list(generate(config, 30)))
    z = default_belief().logits(data.x.astype(np.float32))
    loss, _ = _loss_grad(z, data.y, data.mask)
    uniform = uniform_loss(data, np.arange(len(data)))
    assert loss < uniform - 0.03  # (the shipped network: 0.890 against 0.984 held out)


def test_files_round_trip_and_foreign_files_are_refused(tmp_path: object) -> None:
    from pathlib import Path

    net = default_belief()
    assert net is default_belief()  # read once
    arrays = net.to_arrays()
    assert str(arrays["format"]) == BELIEF_FORMAT
    again = BeliefNet.from_arrays(arrays)
    assert all(np.array_equal(a, b) for (a, _), (b, _) in zip(net.layers, again.layers))
    with pytest.raises(ValueError, match="not a belief network"):
        BeliefNet.from_arrays({"w0": arrays["w0"]})
    bad = dict(arrays)
    bad["w0"] = arrays["w0"][:10]
    with pytest.raises(ValueError, match="shape"):
        BeliefNet.from_arrays(bad)
    junk = Path(str(tmp_path)) / "junk.npz"
    junk.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="cannot read a belief network"):
        belief_file(str(junk))
    with pytest.raises(ValueError, match="cannot read a belief network"):
        SearchBot(simulations=10, belief=str(junk))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 44), st.integers(0, 2**32 - 1))
def test_search_s_belief_worlds_never_deal_a_card_a_seat_cannot_hold(seed: int, moves: int, world: int) -> None:
    _, view = _view_after(seed, moves)
    for inference in (False, True):
        hands = SearchBot(simulations=10, belief="default", inference=inference)._sampler(view)(random.Random(world))
        assert hands[view.seat] == view.hand
        dealt = 0
        for s in range(4):
            assert not dealt & hands[s]
            dealt |= hands[s]
            if s != view.seat:
                assert hands[s].bit_count() == view.cards_left[s]
                assert hands[s] & view.known_cards[s] & view.unseen == view.known_cards[s] & view.unseen
                for su in range(4):
                    if view.voids[s] >> su & 1:
                        assert not hands[s] & SUIT_MASKS[su]
        assert dealt == view.hand | view.unseen


def test_belief_is_off_by_default_and_only_where_it_was_trained() -> None:
    _, view = _view_after(3, 12)
    assert SearchBot(simulations=10)._belief_net(view) is None
    assert SearchBot(simulations=10, belief="default")._belief_net(view) is default_belief()
    kierki = Game(find_variant("kierki").replace(end=EndRule.DEALS, deals=1), 3)
    rng = random.Random(3)
    while seat_view(kierki, kierki.to_act()[0]).phase is not Phase.PLAY:
        kierki.apply(RandomBot().act(seat_view(kierki, kierki.to_act()[0]), rng))
    assert SearchBot(simulations=10, belief="default")._belief_net(seat_view(kierki, kierki.to_act()[0])) is None
    # the same seeds play the same cards; the belief changes the worlds, so some decisions
    a = SearchBot(simulations=30, belief="default").act(view, random.Random(1))
    assert a == SearchBot(simulations=30, belief="default").act(view, random.Random(1)) and a in view.legal
