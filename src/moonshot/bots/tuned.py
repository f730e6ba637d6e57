"""Which rules a network or a tuned setting is for, keyed by the rules' fields, never their name.

A bot's networks (the learned policy, the value and belief networks) and a few of ``search``'s
defaults were trained or measured under particular rules. They apply wherever a game's rules play
the same, whatever the rules are called: a copy of ``standard`` under another name plays exactly
as ``standard`` does.

Two rules *play the same* when they agree on every field that changes how a deal is played or
scored. The fields that do not count (:data:`NOT_PLAY_FIELDS`) are the labels (``name``,
``description``, ``extra``), the game's schedule (``pass_cycle``: a bot sees its own deal's
direction; ``deal_kinds``: the deal's contract is in the scoring) and when the game ends (``end``,
``deals``, ``score_limit``, ``limit_inclusive``). A scoring table's ``name`` is a label too.

:func:`play_fields` gives the fields that count and differ from :class:`~moonshot.core.rules.Rules`'
defaults (standard Hearts), so a new field with a default that keeps every variant unchanged
changes no fingerprint; :func:`fingerprint` is a short digest of them. A weights file records the
fields of the rules it plays under (the ``rules`` entry :func:`rules_entry` writes); a file
without one (the shipped files were made before files recorded it) is read by
:data:`SHIPPED`, the table of what the shipped networks were trained and measured under.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from enum import Enum
from functools import lru_cache
from typing import Any

from moonshot.core.rules import Rules, Scoring

NOT_PLAY_FIELDS = frozenset(
    {"name", "description", "extra", "pass_cycle", "deal_kinds", "end", "deals", "score_limit", "limit_inclusive"}
)
"""The fields of :class:`~moonshot.core.rules.Rules` that do not change how a deal is played or scored."""


def _plain(value: Any) -> Any:
    """``value`` as JSON: enums by their value, tuples as lists, a scoring table without its name."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Scoring):
        return {
            "card_points": list(value.card_points),
            "per_trick": value.per_trick,
            "trick_number_points": [list(p) for p in value.trick_number_points],
        }
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


_DEFAULTS: dict[str, Any] = {
    f.name: _plain(getattr(Rules(), f.name)) for f in dataclasses.fields(Rules) if f.name not in NOT_PLAY_FIELDS
}


def play_fields(rules: Rules) -> dict[str, Any]:
    """The fields of ``rules`` that count for play and differ from standard Hearts', as JSON values
    (standard Hearts: ``{}``)."""
    out = {}
    for key, default in _DEFAULTS.items():
        value = _plain(getattr(rules, key))
        if value != default:
            out[key] = value
    return out


def _canonical(fields: Mapping[str, Any]) -> str:
    return json.dumps(fields, sort_keys=True, separators=(",", ":"))


@lru_cache(maxsize=256)
def _rules_text(rules: Rules) -> str:
    return _canonical(play_fields(rules))


def fields_fingerprint(fields: Mapping[str, Any]) -> str:
    """The fingerprint of :func:`play_fields`' output (16 hex digits of its SHA-256)."""
    return hashlib.sha256(_canonical(fields).encode()).hexdigest()[:16]


def fingerprint(rules: Rules) -> str:
    """A short digest of the fields of ``rules`` that count for play: equal for rules that play
    the same (``standard`` and ``gym`` share one; ``standard`` renamed keeps it)."""
    return hashlib.sha256(_rules_text(rules).encode()).hexdigest()[:16]


@dataclasses.dataclass(frozen=True)
class RulesSet:
    """Rules a network or a setting is for, each as its play fields (canonical JSON text);
    ``rules in s`` says whether ``rules`` play like one of them."""

    texts: frozenset[str]

    @classmethod
    def of(cls, *rules: Rules) -> RulesSet:
        return cls(frozenset(_rules_text(r) for r in rules))

    @classmethod
    def from_fields(cls, *fields: Mapping[str, Any]) -> RulesSet:
        return cls(frozenset(_canonical(f) for f in fields))

    def __contains__(self, rules: object) -> bool:
        return isinstance(rules, Rules) and _rules_text(rules) in self.texts

    def __or__(self, other: RulesSet) -> RulesSet:
        return RulesSet(self.texts | other.texts)

    def fields(self) -> list[dict[str, Any]]:
        """The play fields of each rules, in a stable order (by fingerprint)."""
        out = [json.loads(t) for t in self.texts]
        return sorted(out, key=fields_fingerprint)

    def fingerprints(self) -> list[str]:
        return sorted(fields_fingerprint(f) for f in self.fields())


# ---------------------------------------------------------------------- the compatibility table
# The rules the shipped networks and search's tuned defaults were trained and measured under, by
# their play fields (tests/bots/test_tuned.py checks each against the variant it was measured in).
STANDARD_FIELDS: dict[str, Any] = {}
"""Standard Hearts (fingerprint ``44136fa355b3678a``): the variants ``standard`` and ``gym``."""
TREND_FIELDS: dict[str, Any] = {
    "moon": "trend",  # the shooter's points turn positive, times 4
    "ten_of_clubs_multiplier": 2,
    "negative_scores": True,
    "lowest_wins": False,
    "exposable": 1 << 38,  # the ace of hearts
}
"""The Trend Micro 2018 game's (fingerprint ``d9c3ad42408706b6``): the variant ``trend``."""

STANDARD_RULES = RulesSet.from_fields(STANDARD_FIELDS)
STANDARD_AND_TREND = RulesSet.from_fields(STANDARD_FIELDS, TREND_FIELDS)

SHIPPED: dict[str, RulesSet] = {
    # trained on standard deals; its card play measured at least as good as the heuristic's in Trend too
    "learned.npz": STANDARD_AND_TREND,
    # search's prior: trained on standard deals; search with it measured better in Trend too
    "prior.npz": STANDARD_AND_TREND,
    # trained on standard deals; search with it measured better in Trend too
    "value.npz": STANDARD_AND_TREND,
    # trained on standard deals
    "belief.npz": STANDARD_RULES,
}
"""What each shipped weights file plays under; also the reading of a file of that kind that records
no rules (one made before files recorded them)."""

# search's tuned defaults
TUNED_RULES = STANDARD_AND_TREND
"""Where ``search`` plays one card of each run of equivalent cards (and its exact endgame starts
where :func:`endgame_cards` says)."""
SOLVER_FROM_FOUR_RULES = STANDARD_RULES
"""Where ``search`` on a time budget solves exactly from four cards each (against ``pimc:classic``
at 27 ms of CPU a move 0.15 a deal better than from two, docs/results.md); Trend's stays at two
(not measured)."""


def endgame_cards(rules: Rules, timed: bool = True) -> int:
    """Cards each from which ``search`` solves a deal exactly by default: on a time budget 4 in
    :data:`SOLVER_FROM_FOUR_RULES`; else 2 in :data:`TUNED_RULES` and 3 in other rules. On a
    budget of playouts (``simulations``) a solve counts as one playout: there the solver starts
    where it did, so seeded records stay as they were (and without numba a Python solve from four
    cards costs about 2 ms, some 150 greedy playouts)."""
    if timed and rules in SOLVER_FROM_FOUR_RULES:
        return 4
    return 2 if rules in TUNED_RULES else 3


FAST_SAMPLER_RULES = STANDARD_RULES
"""Where ``search`` deals its worlds with the compiled sampler by default (in Trend two head to
heads against the classic sampler leaned worse)."""
PRIOR_WEIGHT_RULES = STANDARD_AND_TREND
"""Where ``search``'s ``prior_weight`` defaults to its tuned value."""
TIMED_PRIOR_WEIGHT_RULES = STANDARD_RULES
"""Where ``search`` on a time budget weighs the prior at 1 point, not 4 (measured against
``pimc:classic`` at 27 ms of CPU a move, docs/results.md; Trend keeps 4, not measured)."""


# ---------------------------------------------------------------------- weights files
RULES_KEY = "rules"


def rules_entry(rules: RulesSet) -> Any:
    """The ``rules`` entry of a weights file (a NumPy string): the play fields of each rules, as JSON."""
    import numpy as np

    return np.array(json.dumps(rules.fields(), sort_keys=True))


def rules_of(arrays: Mapping[str, Any], resource: str) -> RulesSet:
    """The rules a weights file's ``arrays`` play under: its ``rules`` entry, or for a file without
    one the shipped file ``resource``'s (:data:`SHIPPED`)."""
    if RULES_KEY not in arrays:
        return SHIPPED[resource]
    try:
        fields = json.loads(str(arrays[RULES_KEY]))
        if not isinstance(fields, list) or not all(isinstance(f, dict) for f in fields):
            raise ValueError("not a list of objects")
    except ValueError as e:
        raise ValueError(f"its rules entry is not readable ({e})") from e
    return RulesSet.from_fields(*fields)


__all__ = [
    "FAST_SAMPLER_RULES",
    "NOT_PLAY_FIELDS",
    "PRIOR_WEIGHT_RULES",
    "RULES_KEY",
    "SHIPPED",
    "SOLVER_FROM_FOUR_RULES",
    "STANDARD_AND_TREND",
    "STANDARD_FIELDS",
    "STANDARD_RULES",
    "TIMED_PRIOR_WEIGHT_RULES",
    "TREND_FIELDS",
    "TUNED_RULES",
    "RulesSet",
    "endgame_cards",
    "fields_fingerprint",
    "fingerprint",
    "play_fields",
    "rules_entry",
    "rules_of",
]
