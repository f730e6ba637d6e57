"""The few typed actions a seat can take. Immutable and hashable; :meth:`Play.of` is cached.

An action names its seat, so a game is fully described by ``(rules, seed, actions)``.
:func:`action_to_dict` / :func:`action_from_dict` give the compact JSON form used in exports
and the game store: ``{"t": "play", "s": 0, "c": "QS"}``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any, Final

from moonshot.core.cards import CardError, card_list, format_cards, parse_card, parse_card_set


@dataclass(frozen=True, slots=True)
class Action:
    seat: int

    def __reduce__(self) -> tuple[object, ...]:
        # compiled with mypyc, a frozen dataclass pickles only through its constructor
        return (type(self), tuple(getattr(self, f.name) for f in fields(self)))

    @property
    def tag(self) -> str:
        return "action"


@dataclass(frozen=True, slots=True)
class Pass(Action):
    """Pass cards (or put them in the keeper pile)."""

    cards: int

    @property
    def tag(self) -> str:
        return "pass"


@dataclass(frozen=True, slots=True)
class Charge(Action):
    """Charge cards; an empty set passes."""

    cards: int

    @property
    def tag(self) -> str:
        return "charge"


@dataclass(frozen=True, slots=True)
class Expose(Action):
    """Expose cards (Trend's AH); an empty set declines."""

    cards: int

    @property
    def tag(self) -> str:
        return "expose"


@dataclass(frozen=True, slots=True)
class Play(Action):
    card: int

    @property
    def tag(self) -> str:
        return "play"

    @staticmethod
    def of(seat: int, card: int) -> Play:
        """The shared ``Play(seat, card)`` (seat 0..3, card 0..51): no allocation per play."""
        if 0 <= seat < 4 and 0 <= card < 52:
            return _PLAYS[seat * 52 + card]
        raise ValueError(f"no play of card {card!r} by seat {seat!r}")


_PLAYS: Final[list[Play]] = [Play(s, c) for s in range(4) for c in range(52)]


@dataclass(frozen=True, slots=True)
class Claim(Action):
    """Claim every remaining trick (reveals the claimer's hand)."""

    @property
    def tag(self) -> str:
        return "claim"


@dataclass(frozen=True, slots=True)
class AcceptClaim(Action):
    claimer: int

    @property
    def tag(self) -> str:
        return "accept"


@dataclass(frozen=True, slots=True)
class RejectClaim(Action):
    claimer: int

    @property
    def tag(self) -> str:
        return "reject"


ACTION_TYPES: dict[str, type[Action]] = {
    "pass": Pass,
    "charge": Charge,
    "expose": Expose,
    "play": Play,
    "claim": Claim,
    "accept": AcceptClaim,
    "reject": RejectClaim,
}


_CARD_NAMES: Final[tuple[str, ...]] = tuple(format_cards((1 << 52) - 1))  # card number -> "QS"


def action_to_dict(action: Action) -> dict[str, Any]:
    if type(action) is Play:  # most of a game: built straight, with the card's name from a table
        return {"t": "play", "s": action.seat, "c": _CARD_NAMES[action.card]}
    d: dict[str, Any] = {"t": action.tag, "s": action.seat}
    if isinstance(action, Play):
        d["c"] = format_cards([action.card])[0]
    elif isinstance(action, (Pass, Charge, Expose)):
        d["c"] = format_cards(action.cards)
    elif isinstance(action, (AcceptClaim, RejectClaim)):
        d["claimer"] = action.claimer
    return d


# every play's compact JSON, at seat * 52 + card: '{"t":"play","s":0,"c":"QS"}'
_PLAY_JSON: Final[tuple[str, ...]] = tuple(
    [f'{{"t":"play","s":{s},"c":"{_CARD_NAMES[c]}"}}' for s in range(4) for c in range(52)]
)


def actions_json(actions: Sequence[Action]) -> str:
    """The compact JSON array of ``actions`` as dicts: the same text as ``json.dumps([action_to_dict(a)
    for a in actions], separators=(",", ":"))``, with each play's taken from a table."""
    parts = []
    for a in actions:
        if type(a) is Play:
            parts.append(_PLAY_JSON[a.seat * 52 + a.card])
        elif isinstance(a, (Pass, Charge, Expose)):  # card names need no escaping
            names = ",".join([f'"{_CARD_NAMES[c]}"' for c in card_list(a.cards)])
            parts.append(f'{{"t":"{a.tag}","s":{a.seat},"c":[{names}]}}')
        else:
            parts.append(json.dumps(action_to_dict(a), separators=(",", ":")))
    return "[" + ",".join(parts) + "]"


class ActionFormatError(ValueError):
    pass


def action_from_dict(d: Any) -> Action:
    """Inverse of :func:`action_to_dict`; raises :class:`ActionFormatError` on bad input."""
    try:
        if not isinstance(d, dict):
            raise ActionFormatError(f"an action must be an object, got {type(d).__name__}")
        tag, seat = d.get("t"), d.get("s")
        if tag not in ACTION_TYPES:
            raise ActionFormatError(f"unknown action type {tag!r}")
        if not isinstance(seat, int) or not 0 <= seat < 4:
            raise ActionFormatError(f"bad seat {seat!r}")
        if tag == "play":
            return Play.of(seat, parse_card(d["c"]))
        if tag in ("pass", "charge", "expose"):
            cls = ACTION_TYPES[tag]
            return cls(seat, parse_card_set(d["c"]))  # type: ignore[call-arg]
        if tag == "claim":
            return Claim(seat)
        claimer = d.get("claimer")
        if not isinstance(claimer, int) or not 0 <= claimer < 4:
            raise ActionFormatError(f"bad claimer {claimer!r}")
        return AcceptClaim(seat, claimer) if tag == "accept" else RejectClaim(seat, claimer)
    except (KeyError, TypeError, CardError) as e:
        raise ActionFormatError(f"bad action {d!r}: {e}") from e


__all__ = [
    "AcceptClaim",
    "Action",
    "ActionFormatError",
    "Charge",
    "Claim",
    "Expose",
    "Pass",
    "Play",
    "RejectClaim",
    "action_from_dict",
    "action_to_dict",
    "actions_json",
]
