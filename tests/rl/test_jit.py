"""The numba kernels give exactly the NumPy path's results: the same deals, points, observations and masks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moonshot.rl.vector import HAVE_NUMBA, BatchedHearts, HeartsVectorEnv, _hands_from_keys, random_cards

if not HAVE_NUMBA:
    pytest.skip(
        "numba is not installed (the rl extra: pip install 'moonshot[rl]') or MOONSHOT_NO_NUMBA is set",
        allow_module_level=True,
    )

from moonshot.rl import _jit

U64 = np.uint64


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.sampled_from([1, 7, 64, 200]), variant=st.sampled_from(["standard", "omnibus"]))
def test_random_deals_are_the_same_with_both_backends(seed: int, n: int, variant: str) -> None:
    fast = BatchedHearts(n, variant, backend="numba").play_random_deals(np.random.default_rng(seed), 2 * n + 3)
    slow = BatchedHearts(n, variant, backend="python").play_random_deals(np.random.default_rng(seed), 2 * n + 3)
    assert fast.shape == (2 * n + 3, 4)
    assert np.array_equal(fast, slow)
    assert set(fast.sum(axis=1).tolist()) <= ({26, 78} if variant == "standard" else {16, 68})


def test_the_kernels_deal_like_numpy() -> None:
    keys = np.random.default_rng(3).random((50, 52))
    out = np.zeros((50, 4), dtype=U64)
    for row in range(50):
        _jit.hands_from_keys(keys, row, out, row)
    assert np.array_equal(out, _hands_from_keys(keys))
    assert (np.bitwise_or.reduce(out, axis=1) == U64((1 << 52) - 1)).all()
    assert (_popcounts(out) == 13).all()


def _popcounts(x: np.ndarray) -> np.ndarray:
    return np.array([[bin(int(v)).count("1") for v in row] for row in x])


@pytest.mark.parametrize("m", [5, 700])  # one random key per card up to 512 masks, one uniform above
def test_random_picks_draw_like_random_cards(m: int) -> None:
    masks = np.random.default_rng(m).integers(1, 1 << 52, size=m, dtype=np.int64).astype(U64)
    a, b = np.random.default_rng(9), np.random.default_rng(9)
    assert np.array_equal(_jit.random_picks(a, masks, m), random_cards(b, masks))
    assert a.random() == b.random()  # and leave the generator in the same state


def _run(backend: str, n: int, steps: int, seat: int, max_score: int | None) -> list[tuple[np.ndarray, ...]]:
    env = HeartsVectorEnv(num_envs=n, seat=seat, max_score=max_score, backend=backend)
    obs, info = env.reset(seed=11)
    rng = np.random.default_rng(1)
    out = [(obs["observation"], obs["action_mask"], info["action_mask"])]
    for i in range(steps):
        mask = obs["action_mask"]
        actions = np.argmax(rng.random(mask.shape) * mask, axis=1)
        if i % 7 == 3:
            actions[::3] = 52  # illegal: replaced by a random legal card
        obs, r, term, trunc, info = env.step(actions)
        out.append(
            (obs["observation"], obs["action_mask"], r, term, trunc, info["illegal_action"], info["action_mask"])
        )
    return out


@pytest.mark.parametrize(("n", "steps", "seat", "max_score"), [(8, 300, 2, 30), (150, 60, 1, 26), (3, 200, 0, 40)])
def test_vector_env_steps_are_the_same_with_both_backends(n: int, steps: int, seat: int, max_score: int | None) -> None:
    fast, slow = _run("numba", n, steps, seat, max_score), _run("numpy", n, steps, seat, max_score)
    for i, (a, b) in enumerate(zip(fast, slow, strict=True)):
        for j, (x, y) in enumerate(zip(a, b, strict=True)):
            assert x.dtype == y.dtype and np.array_equal(x, y), f"step {i}, field {j}"
    assert sum(int(t[3].sum()) for t in fast[1:]) > 0  # games ended (and restarted) along the way


def test_illegal_actions_raise_with_both_backends() -> None:
    for backend in ("numba", "python", "numpy"):  # ("numpy": the earlier name of "python")
        env = HeartsVectorEnv(num_envs=3, illegal_action="raise", backend=backend)
        obs, _ = env.reset(seed=1)
        bad = np.array([int(np.flatnonzero(m == 0)[0]) for m in obs["action_mask"]])
        with pytest.raises(ValueError, match=r"sub-environments \[0, 1, 2\]"):
            env.step(bad)


def test_backend_is_checked() -> None:
    with pytest.raises(ValueError, match="backend"):
        BatchedHearts(4, backend="cuda")
    assert BatchedHearts(4, backend="numba").numba and not BatchedHearts(4, backend="numpy").numba
