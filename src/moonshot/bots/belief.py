"""The belief network: who holds each unseen card, read from the play so far (``search:belief=...``).

``search`` deals its worlds uniformly, within the voids and the cards it knows (passes, claims),
so a seat that has led aces and won every trick is dealt a hand like anyone else's. A shooter
shows itself in just that way, long before it has taken enough points to look like a threat,
and a search that cannot see it does not defend in time. This network reads a seat's
information set (:class:`~moonshot.core.views.SeatView`: nothing it could not know) and gives, for
every unseen card, the probability that each of the other three seats holds it. The sampler
then places every unseen card in proportion to it (:func:`soft_weights` feeds
:func:`moonshot.bots.inference.sample_inferred`, which keeps the voids, the known cards and the
hand sizes exact).

Input (:func:`belief_row`, seen from the deciding seat, the others in playing order after it):
my hand and the unseen cards; per other seat the cards it played, the cards it won tricks with,
the cards it led (and those I know it holds), its voids, cards left, points, hearts and the
queen taken; the trick number and whether hearts are broken. Output: 52 x 3 logits, a softmax
over the seats that can still hold each card. A ReLU perceptron in NumPy; trained by ``moonshot
train-belief`` (:mod:`moonshot.training.belief`) on where the cards really were, in deals between
``learned`` players and shooters. The packaged weights are ``moonshot/bots/data/belief.npz``,
read once per process; ``belief=PATH`` reads a file instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from moonshot.bots.mlp import WeightsFiles, layers_from_arrays, layers_to_arrays, relu_apply
from moonshot.bots.tuned import RULES_KEY, SHIPPED, RulesSet, rules_entry, rules_of
from moonshot.core.cards import HEARTS_MASK, QUEEN_SPADES, CardSet
from moonshot.core.views import SeatView

BELIEF_FORMAT = "moonshot.belief/1"
_SLOT_EXTRA = 8  # voids (4), cards left, points, hearts, the queen
N_BELIEF_FEATURES = 2 * 52 + 3 * (3 * 52 + _SLOT_EXTRA) + 2
_QS_BIT = 1 << QUEEN_SPADES


def _card_bits(masks: list[CardSet]) -> np.ndarray:
    """``(len(masks), 52)`` 0/1 rows, card ``c`` in column ``c``."""
    a = np.asarray(masks, dtype="<u8")
    return np.unpackbits(a.view(np.uint8).reshape(len(masks), 8), axis=1, bitorder="little")[:, :52]


def belief_row(view: SeatView) -> np.ndarray:
    """The network's input for ``view`` (a card-play decision): ``(N_BELIEF_FEATURES,)`` float32."""
    me = view.seat
    played = [0, 0, 0, 0]
    won_with = [0, 0, 0, 0]
    led = [0, 0, 0, 0]
    tricks = [(t.cards, t.seats) for t in view.tricks]
    if view.trick:
        tricks.append((tuple(c for _, c in view.trick), tuple(s for s, _ in view.trick)))
    for cards, seats in tricks:
        led[seats[0]] |= 1 << cards[0]
        suit = cards[0] // 13
        win, winner = -1, -1
        for c, s in zip(cards, seats):
            played[s] |= 1 << c
            if c // 13 == suit and c > win:
                win, winner = c, s
        won_with[winner] |= 1 << win  # (the card winning the trick so far, for the trick under way)
    unseen = view.unseen
    masks = [view.hand, unseen]
    extra = np.zeros((3, _SLOT_EXTRA), np.float32)
    for j in range(3):
        s = (me + 1 + j) & 3
        masks += [played[s], won_with[s], led[s] | (view.known_cards[s] & unseen)]
        for su in range(4):
            extra[j, su] = view.voids[s] >> su & 1
        taken = view.taken[s]
        extra[j, 4] = view.cards_left[s] / 13.0
        extra[j, 5] = view.points[s] / 26.0
        extra[j, 6] = (taken & HEARTS_MASK).bit_count() / 13.0
        extra[j, 7] = 1.0 if taken & _QS_BIT else 0.0
    bits = _card_bits(masks).astype(np.float32)
    parts = [bits[0], bits[1]]
    for j in range(3):
        parts += [bits[2 + 3 * j], bits[3 + 3 * j], bits[4 + 3 * j], extra[j]]
    parts.append(np.asarray([view.trick_no / 13.0, 1.0 if view.hearts_broken else 0.0], np.float32))
    return np.concatenate(parts)


def possible(view: SeatView) -> np.ndarray:
    """``(52, 3)``: 1 where the other seat ``j`` (playing order after me) may hold unseen card ``c``
    (not void in its suit, cards left, not known to be elsewhere)."""
    me = view.seat
    out = np.zeros((52, 3), np.float32)
    unseen = view.unseen
    known = [view.known_cards[(me + 1 + j) & 3] & unseen for j in range(3)]
    for j in range(3):
        s = (me + 1 + j) & 3
        if view.cards_left[s] == 0:
            continue
        for su in range(4):
            if not view.voids[s] >> su & 1:
                out[13 * su : 13 * su + 13, j] = 1.0
    col = _card_bits([unseen])[0].astype(bool)
    out[~col] = 0.0
    for j in range(3):
        k = _card_bits([known[j]])[0].astype(bool)
        out[k] = 0.0
        out[k, j] = 1.0
    return out


def holders(view: SeatView, hands: list[CardSet]) -> np.ndarray:
    """``(52,)`` int8: which other seat (0..2, playing order after me) holds each unseen card in
    ``hands``; -1 for cards that are not unseen."""
    me = view.seat
    y = np.full(52, -1, np.int8)
    for j in range(3):
        y[_card_bits([hands[(me + 1 + j) & 3] & view.unseen])[0].astype(bool)] = j
    return y


def masked_softmax(logits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Softmax of ``logits`` ``(..., 3)`` over the entries where ``mask`` is set (rows with none: 0)."""
    z = np.where(mask > 0, logits, -1e9)
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z) * (mask > 0)
    total = e.sum(axis=-1, keepdims=True)
    out: np.ndarray = e / np.where(total > 0, total, 1.0)
    return out


@dataclass(frozen=True)
class BeliefNet:
    """ReLU layers to 156 logits: card ``c`` held by the other seat ``j`` is logit ``3c + j``."""

    layers: tuple[tuple[np.ndarray, np.ndarray], ...]
    # the rules it plays under (its file's ``rules`` entry; the shipped network's where a file has none)
    rules: RulesSet = field(default_factory=lambda: SHIPPED[WEIGHTS_RESOURCE])

    def logits(self, rows: np.ndarray) -> np.ndarray:
        return relu_apply(self.layers, rows)

    def probs(self, view: SeatView, mask: np.ndarray | None = None) -> np.ndarray:
        """``(52, 3)``: the chance each other seat (playing order after me) holds each card (rows of
        cards that are not unseen are 0); ``mask``: :func:`possible` of ``view``, if the caller
        has it already."""
        z = self.logits(belief_row(view)[None, :]).reshape(52, 3)
        return masked_softmax(z, possible(view) if mask is None else mask)

    def to_arrays(self) -> dict[str, Any]:
        return {**layers_to_arrays(BELIEF_FORMAT, self.layers), RULES_KEY: rules_entry(self.rules)}

    @classmethod
    def from_arrays(cls, arrays: Any) -> BeliefNet:
        return cls(
            layers_from_arrays(arrays, BELIEF_FORMAT, N_BELIEF_FEATURES, 156, "belief network", "train-belief"),
            rules_of(arrays, WEIGHTS_RESOURCE),
        )


def deal_weights(
    view: SeatView,
    probs: np.ndarray,
    mask: np.ndarray,
    factors: dict[int, tuple[float, float, float, float]] | None = None,
) -> list[float]:
    """The odds :func:`moonshot.bots.playout.weighted_deal` deals ``view``'s worlds with: entry
    ``4c + s`` is the belief that seat ``s`` holds card ``c``, divided by the room ``s`` has for
    unknown cards (the dealer multiplies by the room left, so the first card placed follows the
    belief exactly), times ``factors[c][s]`` where given (``inference``'s soft evidence). A floor
    keeps every seat that may hold a card (``mask``, :func:`possible`) possible, so a deal is
    never ruled out by rounding."""
    me = view.seat
    unseen = view.unseen
    room = [1, 1, 1]
    for j in range(3):
        s = (me + 1 + j) & 3
        room[j] = max(1, view.cards_left[s] - (view.known_cards[s] & unseen).bit_count())
    scaled = ((probs + 1e-4 * mask) / np.asarray(room, np.float32)).tolist()
    out = [1.0] * 208
    for c in range(52):
        if unseen >> c & 1:
            out[4 * c + me] = 0.0
            for j in range(3):
                out[4 * c + ((me + 1 + j) & 3)] = scaled[c][j]
    if factors:
        for c, ws in factors.items():
            for s in range(4):
                out[4 * c + s] *= ws[s]
    return out


WEIGHTS_RESOURCE = "belief.npz"


def load_belief(path: Any) -> BeliefNet:
    """The network in a file ``moonshot train-belief`` wrote (a path or an open binary file)."""
    with np.load(path) as arrays:
        return BeliefNet.from_arrays(dict(arrays))


_WEIGHTS = WeightsFiles(WEIGHTS_RESOURCE, load_belief, "belief network")


def default_belief() -> BeliefNet:
    """The packaged belief network (``moonshot/bots/data/belief.npz``), loaded once per process."""
    return _WEIGHTS.default()


def belief_file(path: str) -> BeliefNet:
    """The belief network in file ``path``, read once per process (``search:belief=PATH``)."""
    return _WEIGHTS.file(path)


__all__ = [
    "BELIEF_FORMAT",
    "N_BELIEF_FEATURES",
    "BeliefNet",
    "belief_file",
    "belief_row",
    "deal_weights",
    "default_belief",
    "holders",
    "load_belief",
    "masked_softmax",
    "possible",
]
