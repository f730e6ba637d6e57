"""What ``search``'s two ReLU perceptrons (the value network, :mod:`moonshot.bots.value`, and the
belief network, :mod:`moonshot.bots.belief`) share: the forward pass (and, for their training
commands, the backward pass), the weights files
(``.npz``: a format tag, then ``w0``, ``b0``, ``w1``, ... ) and reading each file once per
process."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

import numpy as np

Layers = tuple[tuple[np.ndarray, np.ndarray], ...]
T = TypeVar("T")


def relu_apply(layers: Layers, rows: np.ndarray) -> np.ndarray:
    """``rows`` through ``layers`` (ReLU between them, the last one linear)."""
    h = rows
    last = len(layers) - 1
    for i, (wt, b) in enumerate(layers):
        h = h @ wt + b
        if i < last:
            h = np.maximum(h, 0.0)
    return h


def relu_forward(params: list[np.ndarray], x: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """:func:`relu_apply` for training: ``params`` are the weights and biases alternating (as the
    optimiser updates them), and each layer's input comes back too, for :func:`relu_grads`."""
    acts = [x]
    h = x
    n = len(params) // 2
    for i in range(n):
        h = h @ params[2 * i] + params[2 * i + 1]
        if i < n - 1:
            h = np.maximum(h, 0.0)
            acts.append(h)
    return h, acts


def relu_grads(params: list[np.ndarray], acts: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    """The gradients of ``params`` (as :func:`relu_forward` takes them) given the loss's gradient
    ``g`` at the output and the layers' inputs ``acts``."""
    grads: list[np.ndarray] = [np.zeros(0)] * len(params)
    for li in reversed(range(len(params) // 2)):
        grads[2 * li] = acts[li].T @ g
        grads[2 * li + 1] = g.sum(axis=0)
        if li:
            g = (g @ params[2 * li].T) * (acts[li] > 0)
    return grads


def layers_to_arrays(fmt: str, layers: Layers) -> dict[str, Any]:
    """The arrays a weights file holds: the format tag and every layer's weights and biases."""
    out: dict[str, Any] = {"format": np.array(fmt)}
    for i, (wt, b) in enumerate(layers):
        out[f"w{i}"] = wt
        out[f"b{i}"] = b
    return out


def layers_from_arrays(arrays: Any, fmt: str, inputs: int, outputs: int, what: str, command: str) -> Layers:
    """The layers in ``arrays`` (a weights file's), checked: the format tag, every layer a matrix
    with a bias of its width that takes the layer before's output, ``inputs`` in and ``outputs``
    out (``ValueError`` saying what to do otherwise: a damaged file is refused when it is read,
    not in the middle of a game)."""
    if "format" not in arrays or str(arrays["format"]) != fmt:
        raise ValueError(f"not a {what} (format {fmt}); make one with `moonshot {command}`")
    layers = []
    width = inputs
    i = 0
    while f"w{i}" in arrays:
        if f"b{i}" not in arrays:
            raise ValueError(f"the {what}'s shape does not fit: weights w{i} but no biases b{i}; retrain it")
        wt = np.asarray(arrays[f"w{i}"], dtype=np.float32)
        b = np.asarray(arrays[f"b{i}"], dtype=np.float32)
        if wt.ndim != 2 or wt.shape[0] != width or b.shape != (wt.shape[1],):
            raise ValueError(
                f"the {what}'s shape does not fit: layer {i} ({wt.shape}, bias {b.shape}) does not take "
                f"{width} inputs; retrain it"
            )
        layers.append((wt, b))
        width = wt.shape[1]
        i += 1
    if not layers or width != outputs:
        raise ValueError(f"the {what}'s shape does not fit this version's input; retrain it")
    return tuple(layers)


class WeightsFiles(Generic[T]):
    """A network's packaged weights and the files named for it, each read once per process."""

    def __init__(self, resource: str, load: Callable[[Any], T], what: str) -> None:
        self.resource = resource
        self.load = load
        self.what = what
        self._default: T | None = None
        self._files: dict[str, T] = {}

    def default(self) -> T:
        """The packaged network (``moonshot/bots/data/<resource>``)."""
        if self._default is None:
            from importlib.resources import files

            with files("moonshot.bots.data").joinpath(self.resource).open("rb") as f:
                self._default = self.load(f)
        return self._default

    def file(self, path: str) -> T:
        """The network in file ``path`` (``ValueError`` saying why it cannot be read)."""
        found = self._files.get(path)
        if found is None:
            try:
                found = self.load(path)
            except (OSError, KeyError, ValueError) as e:
                raise ValueError(f"cannot read a {self.what} from {path!r}: {e}") from e
            self._files[path] = found
        return found


__all__ = [
    "Layers",
    "WeightsFiles",
    "layers_from_arrays",
    "layers_to_arrays",
    "relu_apply",
    "relu_forward",
    "relu_grads",
]
