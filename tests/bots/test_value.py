"""The value network's positions, its file format and how its outputs map back to seats."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moonshot.bots.playout import Deal, greedy_policy, start_of_play
from moonshot.bots.value import (
    N_VALUE_FEATURES,
    ValueNet,
    default_value,
    leaf_costs,
    load_value,
    position_rows,
    value_file,
)
from moonshot.core.cards import HEARTS_MASK, QUEEN_SPADES
from moonshot.core.variants import find_variant


def _deal(seed: int) -> Deal:
    cards = list(range(52))
    random.Random(seed).shuffle(cards)
    hands = [sum(1 << c for c in cards[13 * s : 13 * s + 13]) for s in range(4)]
    return start_of_play(find_variant("standard"), 0, hands, 0)


def _between_tricks(seed: int, tricks: int) -> Deal:
    """A deal played greedily to the end of trick ``tricks``."""
    deal = _deal(seed)
    rng = random.Random(seed)
    while deal.trick_no <= tricks:
        legal = deal.legal()
        deal.play(greedy_policy(deal, deal.turn, legal, rng) if legal & (legal - 1) else legal.bit_length() - 1)
    assert not deal.trick
    return deal


def _bits(row: np.ndarray, slot: int) -> int:
    return sum(1 << c for c in range(52) if row[slot * 52 + c])


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), tricks=st.integers(1, 11))
def test_positions_are_seen_from_the_seat_to_lead(seed: int, tricks: int) -> None:
    deal = _between_tricks(seed, tricks)
    row = position_rows([deal])[0]
    assert row.shape == (N_VALUE_FEATURES,)
    lead = deal.turn
    for k in range(4):
        s = (lead + k) & 3
        assert _bits(row, k) == deal.hands[s]  # every card's holder, leader first
        o = 208 + 4 * k
        assert row[o] == pytest.approx(deal.pts[s] / 26)
        assert row[o + 1] == pytest.approx((deal.taken[s] & HEARTS_MASK).bit_count() / 13)
        assert row[o + 2] == float(bool(deal.taken[s] >> QUEEN_SPADES & 1))
        assert row[o + 3] == float(deal.pts[s] > 0)
    assert row[224] == pytest.approx(deal.trick_no / 13)
    assert row[225] == float(deal.broken)
    # the cards in hands plus the cards played are the pack, once each
    assert sum(_bits(row, k) for k in range(4)) | deal.played == (1 << 52) - 1


def _constant_net(slot_costs: list[float]) -> ValueNet:
    """A network whose output is ``slot_costs`` (leader first) whatever the position."""
    w0 = np.zeros((N_VALUE_FEATURES, 2), np.float32)
    w1 = np.zeros((2, 4), np.float32)
    b1 = np.asarray(slot_costs, np.float32) / 26.0
    return ValueNet(((w0, np.zeros(2, np.float32)), (w1, b1)))


def test_leaf_costs_map_slots_back_to_seats() -> None:
    net = _constant_net([0.0, 1.0, 2.0, 3.0])
    deals = [_between_tricks(s, 3) for s in range(8)]
    for d, costs in zip(deals, leaf_costs(net, deals)):
        for k in range(4):
            assert costs[(d.turn + k) & 3] == pytest.approx(k)


def test_files_round_trip_and_foreign_files_are_refused(tmp_path: Path) -> None:
    net = _constant_net([6.5, 6.5, 6.5, 6.5])
    path = tmp_path / "v.npz"
    np.savez(path, **net.to_arrays())
    again = load_value(path)
    assert leaf_costs(again, [_between_tricks(1, 2)]) == [(6.5, 6.5, 6.5, 6.5)]
    # the learned bot's policy file is not a value network
    from importlib.resources import files

    with (
        pytest.raises(ValueError, match="not a value network"),
        files("moonshot.bots.data").joinpath("learned.npz").open("rb") as f,
    ):
        load_value(f)
    # a value file of another input size
    bad = tmp_path / "bad.npz"
    np.savez(bad, format=np.array("moonshot.value/1"), w0=np.zeros((10, 4), np.float32), b0=np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="shape"):
        load_value(bad)
    with pytest.raises(ValueError, match="cannot read a value network"):
        value_file(str(tmp_path / "missing.npz"))


def test_the_packaged_network_loads_and_guesses_sane_costs() -> None:
    net = default_value()
    deals = [_between_tricks(s, t) for s in range(20) for t in (1, 6, 10)]
    for d, costs in zip(deals, leaf_costs(net, deals)):
        # every point is taken by someone: the four expected costs sum to about 26 (more when a
        # moon is likely), and none is far outside a deal's range
        assert 20 < sum(costs) < 60
        for s in range(4):
            assert -3 < costs[s] < 29
            assert costs[s] >= d.pts[s] - 3 or sum(costs) > 30  # taken points stay taken (or a moon)
