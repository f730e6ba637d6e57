"""The learned bot: a small policy network, trained to imitate ``search``, evaluated in NumPy.

:class:`LearnedBot` (name ``learned``) plays its cards with a multi-layer perceptron that scores
every legal card from what the seat knows (its :class:`~moonshot.core.views.SeatView`, the information
set, nothing else) and plays the best-scored one. Everything that is not a card play (passing,
Turbo's charges and claims, Trend's exposure, answering claims) is
:class:`~moonshot.bots.heuristic.HeuristicBot`'s, unchanged.

The network is an *action-in* scorer: each legal card gets a feature row (:func:`card_features`:
what the card is, the trick it would join, the suit's cards still out, the moon situation, and
the heuristic's own estimates for that card: chance of winning the trick, what winning it costs,
what keeping the card costs, its total), the rows go through ``tanh`` layers to one score each,
and a softmax over the legal cards is the policy (training: cross-entropy against the teacher's
card; play: the arg-max, deterministic). So it learns where ``search`` disagrees with the
heuristic's sums, not Hearts from scratch, and a few tens of thousands of decisions are enough.

The weights are package data (``moonshot/bots/data/learned.npz``, made by ``moonshot
train-learned``; ``search``'s prior, the same kind of network trained another way, is
``prior.npz``: :func:`default_prior`), read once per process the first time a bot is made, the way importing a module
reads one; a bot made with ``network=PATH`` reads that weights file instead, once, when it is
made. Those are the only files this pure module reads. NumPy is needed (the ``learned`` extra).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from moonshot.bots.heuristic import HeuristicBot, Weights, _Eval, _later_seats
from moonshot.bots.tuned import RULES_KEY, SHIPPED, RulesSet, rules_entry, rules_of
from moonshot.core.cards import HEARTS_MASK, QUEEN_SPADES, SUIT_MASKS, card_list
from moonshot.core.views import SeatView

_MOON_CARDS = HEARTS_MASK | (1 << QUEEN_SPADES)
_ABOVE = [sum(1 << x for x in range(c + 1, (c // 13 + 1) * 13)) for c in range(52)]
_BELOW = [sum(1 << x for x in range((c // 13) * 13, c)) for c in range(52)]

FEATURE_NAMES: tuple[str, ...] = (
    # the heuristic's estimates for this card (HeuristicBot._play)
    "h_p_win",
    "h_trick_cost",
    "h_hold_cost",
    "h_adjust",
    "h_total",
    "h_regret",  # h_total minus the best card's
    "h_best",  # 1 for the heuristic's own choice
    # the card
    "suit_c",
    "suit_d",
    "suit_h",
    "suit_s",
    "rank",
    "value",  # what the card is worth in this deal (doubled, negated when shooting) / 13
    "is_qs",
    "above_qs",  # KS, AS
    # the trick it joins
    "lead",
    "follow",
    "discard",
    "pos0",
    "pos1",
    "pos2",
    "pos3",
    "beats",  # following: would win the trick so far
    "trick_value",  # points on the trick so far / 13
    "later",  # seats still to play after me / 3
    "later_void",  # of those, void in the led suit (the card's suit when leading) / 3
    # the suit
    "out_above",  # unseen cards of its suit above it / 13
    "out_below",
    "mine_above",  # my cards of its suit above it / 13
    "mine_below",
    "suit_out",  # unseen cards of its suit / 13
    "opp_void_suit",  # other seats void in its suit / 3
    "out_value",  # points still unseen in its suit / 13
    # the deal
    "trick_no",
    "hearts_broken",
    "my_points",
    "max_other_points",
    "holders",  # seats that have taken moon cards / 4
    "only_me",  # I alone have taken moon cards
    "threat",  # another seat alone has taken moon cards
    "threat_wins",  # ... and it is winning this trick now
    "shooting",  # the heuristic thinks I should shoot
    "qs_out",
    "qs_mine",
    "n_legal",
    "hand_size",
    "hearts_out",
)
N_FEATURES = len(FEATURE_NAMES)
MAX_LEGAL = 13


def card_features(view: SeatView, legal: list[int], w: Weights | None = None) -> np.ndarray:
    """One feature row per card of ``legal`` (``float32``, shape ``(len(legal), N_FEATURES)``).

    Reads only ``view`` (the seat's information set).
    """
    w = w or Weights()
    ev = _Eval(view, w)
    me = view.seat
    vals = ev.vals
    trick = view.trick
    trick_cards = [c for _, c in trick]
    n_trick = len(trick)
    unseen = ev.unseen
    hand = view.hand
    voids = view.voids
    if trick_cards:
        led = trick_cards[0] // 13
        winner_card = max(c for c in trick_cards if c // 13 == led)
        winner_seat = next(s for s, c in trick if c == winner_card)
    else:
        led, winner_card, winner_seat = -1, -1, -1
    trick_value = sum(vals[c] for c in trick_cards)
    holders = [s for s in range(4) if view.taken[s] & _MOON_CARDS]
    only_me = float(holders == [me])
    threat_seat = holders[0] if len(holders) == 1 and holders[0] != me else -1
    other_points = max(view.points[s] for s in range(4) if s != me)
    deal_row = (
        view.trick_no / 13.0,
        float(view.hearts_broken),
        view.points[me] / 26.0,
        other_points / 26.0,
        len(holders) / 4.0,
        only_me,
        float(threat_seat >= 0),
        float(threat_seat >= 0 and winner_seat == threat_seat),
        float(ev.shooting),
        float(unseen >> QUEEN_SPADES & 1),
        float(hand >> QUEEN_SPADES & 1),
        len(legal) / 13.0,
        hand.bit_count() / 13.0,
        (unseen & HEARTS_MASK).bit_count() / 13.0,
    )
    rows = np.zeros((len(legal), N_FEATURES), dtype=np.float32)
    totals: list[float] = []
    for i, c in enumerate(legal):
        s = c // 13
        later = _later_seats(view, c)
        if trick_cards:
            beats = s == led and c > winner_card
            if beats:
                p_win, cost = ev.trick_cost(trick_cards, c, later, view.trick_no)
            else:
                p_win, cost = 0.0, 0.0
            hold = ev.hold_cost(c)
            adj = HeuristicBot._moon_adjust(ev, c, p_win, trick_cards, winner_seat if not beats else me)
            kind = 1 if s == led else 2
            suit_for_later = led
        else:
            beats = True
            p_win, cost = ev.trick_cost([], c, later, view.trick_no)
            hold = ev.hold_cost(c)
            adj = HeuristicBot._lead_adjust(ev, c, p_win)
            kind = 0
            suit_for_later = s
        total = p_win * cost - hold + adj
        totals.append(total)
        suit_out = unseen & SUIT_MASKS[s]
        mine = hand & SUIT_MASKS[s]
        opp_later = [x for x in later if x != me]
        out_value = 0.0
        m = suit_out
        while m:
            low = m & -m
            m ^= low
            v = vals[low.bit_length() - 1]
            if v > 0:
                out_value += v
        row = rows[i]
        row[0] = p_win
        row[1] = cost / 13.0
        row[2] = hold / 13.0
        row[3] = adj / 13.0
        row[4] = total / 13.0
        row[7 + s] = 1.0
        row[11] = (c % 13) / 12.0
        row[12] = vals[c] / 13.0
        row[13] = float(c == QUEEN_SPADES)
        row[14] = float(c > QUEEN_SPADES)
        row[15 + kind] = 1.0
        row[18 + min(n_trick, 3)] = 1.0
        row[22] = float(beats) if trick_cards else 1.0
        row[23] = trick_value / 13.0
        row[24] = len(opp_later) / 3.0
        row[25] = sum(1 for x in opp_later if voids[x] >> suit_for_later & 1) / 3.0
        row[26] = (suit_out & _ABOVE[c]).bit_count() / 13.0
        row[27] = (suit_out & _BELOW[c]).bit_count() / 13.0
        row[28] = (mine & _ABOVE[c]).bit_count() / 13.0
        row[29] = (mine & _BELOW[c]).bit_count() / 13.0
        row[30] = suit_out.bit_count() / 13.0
        row[31] = sum(1 for x in range(4) if x != me and voids[x] >> s & 1) / 3.0
        row[32] = out_value / 13.0
        row[33:] = deal_row
    best = min(totals)
    for i, t in enumerate(totals):
        rows[i, 5] = (t - best) / 13.0
        rows[i, 6] = float(t == best)
    return rows


@dataclass(frozen=True)
class Policy:
    """The network: feature normalisation, then ``tanh`` layers, then one score per card.

    ``rules``: the rules it plays under (its weights file's ``rules`` entry,
    :mod:`moonshot.bots.tuned`; the shipped network's where a file records none)."""

    mean: np.ndarray  # (N_FEATURES,)
    scale: np.ndarray  # (N_FEATURES,)
    layers: tuple[tuple[np.ndarray, np.ndarray], ...]  # (W, b) per layer; the last one has 1 output
    rules: RulesSet = field(default_factory=lambda: SHIPPED[WEIGHTS_RESOURCE])

    def scores(self, rows: np.ndarray) -> np.ndarray:
        h = (rows - self.mean) * self.scale
        last = len(self.layers) - 1
        for i, (wt, b) in enumerate(self.layers):
            h = h @ wt + b
            if i < last:
                h = np.tanh(h)
        out: np.ndarray = h[..., 0]
        return out

    def to_arrays(self) -> dict[str, Any]:
        out: dict[str, Any] = {"mean": self.mean, "scale": self.scale, "features": np.array(FEATURE_NAMES)}
        out[RULES_KEY] = rules_entry(self.rules)
        for i, (wt, b) in enumerate(self.layers):
            out[f"w{i}"] = wt
            out[f"b{i}"] = b
        return out

    @classmethod
    def from_arrays(cls, arrays: Any) -> Policy:
        names = tuple(str(x) for x in arrays["features"])
        if names != FEATURE_NAMES:
            raise ValueError("the weights were trained on other features; retrain with `moonshot train-learned`")
        layers = []
        i = 0
        while f"w{i}" in arrays:
            layers.append((np.asarray(arrays[f"w{i}"], dtype=np.float32), np.asarray(arrays[f"b{i}"], np.float32)))
            i += 1
        mean = np.asarray(arrays["mean"], dtype=np.float32)
        scale = np.asarray(arrays["scale"], dtype=np.float32)
        return cls(mean, scale, tuple(layers), rules_of(arrays, WEIGHTS_RESOURCE))


_PACKAGED: dict[str, Policy] = {}
WEIGHTS_RESOURCE = "learned.npz"
PRIOR_RESOURCE = "prior.npz"
PACKAGED_NETS = ("learned", "prior")  # the learned bot's ``net`` option


def _packaged(resource: str) -> Policy:
    found = _PACKAGED.get(resource)
    if found is None:
        from importlib.resources import files

        with files("moonshot.bots.data").joinpath(resource).open("rb") as f, np.load(f) as arrays:
            found = _PACKAGED[resource] = Policy.from_arrays(dict(arrays))
    return found


def default_policy() -> Policy:
    """The ``learned`` bot's packaged weights (``moonshot/bots/data/learned.npz``), loaded once per process."""
    return _packaged(WEIGHTS_RESOURCE)


def default_prior() -> Policy:
    """``search``'s packaged prior (``moonshot/bots/data/prior.npz``), loaded once per process: the
    network whose best cards ``search`` plays out and whose log-probabilities it counts. Its own
    file, not the ``learned`` bot's: a network that plays better alone is not a better prior
    (docs/search.md, "The `learned` bot")."""
    return _packaged(PRIOR_RESOURCE)


def load_policy(path: Any) -> Policy:
    """The network in a weights file ``moonshot train-learned`` wrote (a path or an open binary file)."""
    with np.load(path) as arrays:
        return Policy.from_arrays(dict(arrays))


_FILES: dict[str, Policy] = {}


def policy_file(path: str) -> Policy:
    """The network in weights file ``path``, read once per process (the ``network=PATH`` option of
    ``learned``, ``search`` and ``pimc``: ``--candidate "search:network=round2.npz"``)."""
    found = _FILES.get(path)
    if found is None:
        try:
            found = load_policy(path)
        except (OSError, KeyError, ValueError) as e:
            raise ValueError(f"cannot read network weights from {path!r}: {e}") from e
        _FILES[path] = found
    return found


class LearnedBot(HeuristicBot):
    """Plays the card its policy network scores best; everything else as the heuristic does.

    The network plays the cards where the game's rules play like those its weights file records
    (:mod:`moonshot.bots.tuned`; the shipped network: standard, Gym and Trend, where its card play
    measured at least as good as the heuristic's); elsewhere (Omnibus, Kierki, Turbo) the bot
    plays the heuristic's card. ``everywhere=True``: the network plays cards whatever the rules;
    ``temperature > 0`` samples the card from the softmax instead;
    ``network=PATH``: the network in that weights file instead of the packaged one;
    ``net``: which packaged network plays, ``learned`` (the default: the one trained on today's
    ``search``) or ``prior`` (``search``'s prior, the ``learned`` bot's network until 2026-12-07:
    level 5 plays it, as its ladder rows were measured).
    """

    name = "learned"

    def __init__(
        self,
        policy: Policy | None = None,
        temperature: float = 0.0,
        everywhere: bool = False,
        network: str | None = None,
        net: str = "learned",
    ) -> None:
        super().__init__()
        if net not in PACKAGED_NETS:
            raise ValueError(f"unknown net {net!r}; known: {', '.join(PACKAGED_NETS)}")
        packaged = default_policy if net == "learned" else default_prior
        self.policy = policy or (policy_file(network) if network is not None else packaged())
        self.temperature = temperature
        self.everywhere = everywhere
        self._rng: random.Random | None = None

    def act(self, view: SeatView, rng: random.Random) -> Any:
        self._rng = rng
        return super().act(view, rng)

    def _play(self, view: SeatView) -> int:
        legal = view.legal_plays
        if legal & (legal - 1) == 0:
            return legal.bit_length() - 1
        if not self.everywhere and view.rules not in self.policy.rules:
            return super()._play(view)
        cards = card_list(legal)
        scores = self.policy.scores(card_features(view, cards, self.weights))
        if self.temperature > 0 and self._rng is not None:
            z = [float(x) / self.temperature for x in scores]
            top = max(z)
            weights = [math.exp(x - top) for x in z]
            return self._rng.choices(cards, weights)[0]
        return cards[int(np.argmax(scores))]


__all__ = [
    "FEATURE_NAMES",
    "N_FEATURES",
    "LearnedBot",
    "Policy",
    "card_features",
    "default_policy",
    "default_prior",
    "load_policy",
    "policy_file",
]
