"""The observation encoder: layout, and that no observation ever shows another seat's hidden cards."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moonshot.core.engine import Game
from moonshot.core.variants import VARIANTS, find_variant
from moonshot.core.views import seat_view
from moonshot.rl.aec import raw_env
from moonshot.rl.env import HeartsEnv
from moonshot.rl.observation import (
    CARD_SET_SLICES,
    OBS_SIZE,
    OBSERVATION_SLICES,
    encode,
    encode_game,
    mask_array,
    unpack_card_sets,
)

VARIANT_NAMES = sorted(VARIANTS)


def test_slices_tile_the_vector_without_overlap() -> None:
    covered = np.zeros(OBS_SIZE, dtype=int)
    for s in OBSERVATION_SLICES.values():
        covered[s] += 1
    assert (covered == 1).all()
    for name in CARD_SET_SLICES:
        size = OBSERVATION_SLICES[name].stop - OBSERVATION_SLICES[name].start
        assert size % 52 == 0


def test_unpack_card_sets_puts_card_c_at_entry_c() -> None:
    out = unpack_card_sets(np.array([[1 << 0 | 1 << 51, 1 << 26]], dtype=np.uint64))
    assert out.shape == (1, 104)
    assert np.flatnonzero(out[0]).tolist() == [0, 51, 52 + 26]


def test_mask_array_has_53_entries_with_done_last() -> None:
    m = mask_array(1 << 5 | 1 << 52)
    assert m.dtype == np.int8 and m.shape == (53,)
    assert np.flatnonzero(m).tolist() == [5, 52]
    rng = np.random.default_rng(0)
    for _ in range(200):
        bits = int(rng.integers(0, 2**53, dtype=np.uint64))
        assert np.flatnonzero(mask_array(bits)).tolist() == [c for c in range(53) if bits >> c & 1]


def test_hand_slice_is_the_seats_hand_at_the_start() -> None:
    g = Game(find_variant("standard"), seed=3)
    for seat in range(4):
        obs = encode(seat_view(g, seat, with_legal=False))
        hand = np.flatnonzero(obs[OBSERVATION_SLICES["hand"]]).tolist()
        assert hand == [c for c in range(52) if g.hands[seat] >> c & 1]


def _hidden_from(game: Game, seat: int) -> int:
    """Cards other seats hold that ``seat`` cannot place. The cards it passed itself are its own
    knowledge (after Turbo's keeper pile it knows them, though not who got them)."""
    view = seat_view(game, seat, with_legal=False)
    hidden = 0
    for s in range(4):
        if s != seat:
            hidden |= game.hands[s] & ~view.known_cards[s]
    return hidden & ~(view.passed or 0)


def assert_no_leak(obs: np.ndarray, game: Game, seat: int) -> None:
    hand = obs[OBSERVATION_SLICES["hand"]]
    assert np.flatnonzero(hand).tolist() == [c for c in range(52) if game.hands[seat] >> c & 1]
    hidden = _hidden_from(game, seat)
    hidden_idx = [c for c in range(52) if hidden >> c & 1]
    for name in CARD_SET_SLICES:
        block = obs[OBSERVATION_SLICES[name]].reshape(-1, 52)
        assert not block[:, hidden_idx].any(), f"slice {name!r} shows a hidden card of another seat"


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**31), variant=st.sampled_from(VARIANT_NAMES))
def test_no_observation_holds_another_seats_hidden_cards(seed: int, variant: str) -> None:
    env = raw_env(variant=variant)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps = 0
    while not all(env.terminations.values()) and steps < 400:
        agent = env.agent_selection
        seat = int(agent[-1])
        assert env.game is not None
        obs = env.observe(agent)
        assert_no_leak(obs["observation"], env.game, seat)
        # the env's fast encoder reads the game directly: it must equal the view-based encoder
        assert env.decisions is not None
        view_obs = encode(seat_view(env.game, seat, with_legal=False), env.decisions.selected[seat])
        assert np.array_equal(obs["observation"], view_obs)
        other = env.possible_agents[(seat + 1) % 4]
        assert_no_leak(env.observe(other)["observation"], env.game, (seat + 1) % 4)
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        steps += 1
    if env.game is not None and env.game.over:
        for s in range(4):
            assert np.array_equal(encode_game(env.game, s), encode(seat_view(env.game, s, with_legal=False)))


def test_no_leak_over_thousands_of_single_agent_steps() -> None:
    steps = 0
    for i, variant in enumerate(["standard", "trend", "turbo-blind", "kierki", "omnibus"]):
        env = HeartsEnv(variant=variant, opponents="random", seat=i % 4)
        obs, _ = env.reset(seed=i)
        rng = np.random.default_rng(i)
        done = False
        while not done:
            assert env.game is not None and env.decisions is not None
            assert_no_leak(obs["observation"], env.game, env.seat)
            # the env's incremental encoder gives what the view encoder gives
            view = seat_view(env.game, env.seat, with_legal=False)
            assert np.array_equal(obs["observation"], encode(view, env.decisions.selected[env.seat]))
            obs, _, done, _, _info = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            steps += 1
    assert steps > 500


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_fast_encoder_equals_the_view_encoder_for_every_seat(variant: str) -> None:
    env = raw_env(variant=variant)
    env.reset(seed=21)
    rng = np.random.default_rng(21)
    while not all(env.terminations.values()):
        game, dec = env.game, env.decisions
        assert game is not None and dec is not None
        for s in range(4):
            want = encode(seat_view(game, s, with_legal=False), dec.selected[s])
            assert np.array_equal(encode_game(game, s, dec.selected[s]), want), (game.phase, s)
        obs = env.observe(env.agent_selection)
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
