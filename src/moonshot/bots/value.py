"""The value network: what every seat will have taken at the end of a deal, from a position in it.

``search`` plays each sampled world out to the end with a fast greedy policy and scores the end.
Those playouts never try for the moon and defend against nobody's, and they play every seat
alike, so their end is a poor guess of how a deal between real players ends (a constant guess
beats it before the last tricks; docs/search.md has the figures). With ``value=...``,
``search`` plays a world only to the end of the current trick and asks this network instead:
a multi-layer perceptron (ReLU) over the *perfect-information* position of the sampled world
(every hand, the points each seat has taken, the trick number, hearts broken), seen from the seat
to lead, trained on where deals between strong players really ended (``moonshot
train-value``). Its four outputs are the expected final costs of the four seats (moons
included: a seat that may shoot raises the others' expected cost).

Positions are only ever taken between tricks (no card on the table), so the seat to play is the
leader and the input needs no trick cards. Inference is NumPy, batched over the positions of a few
worlds (:func:`leaf_costs`; ``search``'s ``VALUE_BATCH_WORLDS``). The packaged weights are
``moonshot/bots/data/value.npz``, read once per process; ``value=PATH`` reads a file instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from moonshot.bots.mlp import WeightsFiles, layers_from_arrays, layers_to_arrays, relu_apply
from moonshot.bots.playout import Deal, value_features
from moonshot.bots.tuned import RULES_KEY, SHIPPED, RulesSet, rules_entry, rules_of

VALUE_FORMAT = "moonshot.value/1"
# the input, seen from the seat to lead (slot k is seat leader + k): every card's holder (4 x 52),
# then per slot its points taken / 26, hearts taken / 13, the queen taken, any points taken; then
# the trick number / 13 and hearts broken
N_VALUE_FEATURES = 4 * 52 + 4 * 4 + 2
COST_SCALE = 26.0  # outputs are costs / 26


def position_rows(deals: Sequence[Deal]) -> np.ndarray:
    """The network's input for each of ``deals`` (positions between tricks): ``(n, N_VALUE_FEATURES)``.

    The features are gathered by :func:`~moonshot.bots.playout.value_features` (compiled with the
    deal) and handed to NumPy once."""
    n = len(deals)
    hands, extra = value_features(list(deals))
    packed = np.array(hands, dtype="<u8").view(np.uint8).reshape(n, 4, 8)
    bits = np.unpackbits(packed, axis=2, bitorder="little")[:, :, :52]
    rows = np.empty((n, N_VALUE_FEATURES), dtype=np.float32)
    rows[:, :208] = bits.reshape(n, 208)
    rows[:, 208:] = np.array(extra, dtype=np.float32).reshape(n, 18)
    return rows


@dataclass(frozen=True)
class ValueNet:
    """ReLU layers to 4 outputs: the expected final cost of each slot (leader first) / 26."""

    layers: tuple[tuple[np.ndarray, np.ndarray], ...]
    # the rules it plays under (its file's ``rules`` entry; the shipped network's where a file has none)
    rules: RulesSet = field(default_factory=lambda: SHIPPED[WEIGHTS_RESOURCE])

    def predict(self, rows: np.ndarray) -> np.ndarray:
        """Expected final costs ``(n, 4)``, slot order (leader first), in points."""
        out: np.ndarray = relu_apply(self.layers, rows) * COST_SCALE
        return out

    def to_arrays(self) -> dict[str, Any]:
        return {**layers_to_arrays(VALUE_FORMAT, self.layers), RULES_KEY: rules_entry(self.rules)}

    @classmethod
    def from_arrays(cls, arrays: Any) -> ValueNet:
        return cls(
            layers_from_arrays(arrays, VALUE_FORMAT, N_VALUE_FEATURES, 4, "value network", "train-value"),
            rules_of(arrays, WEIGHTS_RESOURCE),
        )


def leaf_costs(net: ValueNet, deals: Sequence[Deal]) -> list[tuple[float, float, float, float]]:
    """The expected final cost of every seat (seat order) in each of ``deals``."""
    pred = net.predict(position_rows(deals)).tolist()
    out = []
    for d, p in zip(deals, pred):
        lead = d.turn
        c = [0.0, 0.0, 0.0, 0.0]
        for k in range(4):
            c[(lead + k) & 3] = p[k]
        out.append((c[0], c[1], c[2], c[3]))
    return out


WEIGHTS_RESOURCE = "value.npz"


def load_value(path: Any) -> ValueNet:
    """The network in a file ``moonshot train-value`` wrote (a path or an open binary file)."""
    with np.load(path) as arrays:
        return ValueNet.from_arrays(dict(arrays))


_WEIGHTS = WeightsFiles(WEIGHTS_RESOURCE, load_value, "value network")


def default_value() -> ValueNet:
    """The packaged value network (``moonshot/bots/data/value.npz``), loaded once per process."""
    return _WEIGHTS.default()


def value_file(path: str) -> ValueNet:
    """The value network in file ``path``, read once per process (``search:value=PATH``)."""
    return _WEIGHTS.file(path)
