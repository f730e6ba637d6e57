"""The perceptrons' shared pieces: the forward pass, the weights files, reading each file once."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from moonshot.bots.mlp import WeightsFiles, layers_from_arrays, layers_to_arrays, relu_apply, relu_forward, relu_grads


def _layers(sizes: list[int], seed: int = 0) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    rng = np.random.default_rng(seed)
    return tuple(
        (rng.standard_normal((a, b)).astype(np.float32), rng.standard_normal(b).astype(np.float32))
        for a, b in pairwise(sizes)
    )


def test_relu_between_the_layers_and_the_last_one_linear() -> None:
    layers = _layers([5, 4, 3])
    x = np.random.default_rng(1).standard_normal((7, 5)).astype(np.float32)
    hidden = np.maximum(x @ layers[0][0] + layers[0][1], 0.0)
    assert np.allclose(relu_apply(layers, x), hidden @ layers[1][0] + layers[1][1])
    assert (relu_apply(layers, x) < 0).any()  # (no ReLU on the output)


def test_weights_round_trip_and_the_wrong_file_is_refused_with_what_to_do() -> None:
    layers = _layers([6, 4, 2])
    arrays = layers_to_arrays("test.net/1", layers)
    back = layers_from_arrays(arrays, "test.net/1", 6, 2, "test network", "train-test")
    assert all(np.array_equal(a, b) and np.array_equal(c, d) for (a, c), (b, d) in zip(layers, back))
    with pytest.raises(ValueError, match=r"not a test network .*moonshot train-test"):
        layers_from_arrays(arrays, "other.net/1", 6, 2, "test network", "train-test")
    with pytest.raises(ValueError, match="test network's shape"):
        layers_from_arrays(arrays, "test.net/1", 7, 2, "test network", "train-test")
    with pytest.raises(ValueError, match="shape"):
        layers_from_arrays({"format": arrays["format"]}, "test.net/1", 6, 2, "test network", "train-test")
    # a damaged file is refused when it is read, not when a search first runs it
    inner = {**arrays, "w1": np.zeros((5, 2), np.float32)}  # takes 5, the layer before gives 4
    with pytest.raises(ValueError, match=r"layer 1 .* does not take 4 inputs"):
        layers_from_arrays(inner, "test.net/1", 6, 2, "test network", "train-test")
    with pytest.raises(ValueError, match="layer 0"):
        layers_from_arrays({**arrays, "b0": np.zeros(3, np.float32)}, "test.net/1", 6, 2, "test network", "train-test")
    with pytest.raises(ValueError, match="no biases b1"):
        layers_from_arrays({k: v for k, v in arrays.items() if k != "b1"}, "test.net/1", 6, 2, "test network", "x")


def test_each_file_is_read_once_and_a_bad_one_says_why(tmp_path: Path) -> None:
    reads: list[object] = []

    def load(source: object) -> str:
        reads.append(source)
        if isinstance(source, str) and source.endswith(".bad"):
            raise ValueError("no such network")
        return f"net from {source}"

    files = WeightsFiles("value.npz", load, "test network")
    assert files.file("a.npz") == files.file("a.npz") == "net from a.npz"
    assert reads == ["a.npz"]
    with pytest.raises(ValueError, match=r"cannot read a test network from 'x\.bad': no such network"):
        files.file("x.bad")
    first = files.default()
    assert files.default() is first and len(reads) == 3  # the packaged file, once


def test_the_training_pass_matches_the_forward_pass_and_its_gradients_the_finite_differences() -> None:
    layers = _layers([4, 5, 2], seed=3)
    params = [a.astype(np.float64) for pair in layers for a in pair]
    x = np.random.default_rng(4).standard_normal((6, 4))
    out, acts = relu_forward(params, x)
    assert np.allclose(out, relu_apply(layers, x.astype(np.float32)), atol=1e-4) and len(acts) == 2

    def loss(ps: list[np.ndarray]) -> float:
        return float((relu_forward(ps, x)[0] ** 2).sum() / 2)

    grads = relu_grads(params, acts, out)  # d(loss)/d(out) = out
    eps = 1e-6
    for k in range(len(params)):
        for idx in [(0,) * params[k].ndim, tuple(n - 1 for n in params[k].shape)]:
            bumped = [p.copy() for p in params]
            bumped[k][idx] += eps
            assert abs((loss(bumped) - loss(params)) / eps - grads[k][idx]) < 1e-3
