"""The few typed actions a seat can take. Immutable and hashable; :meth:`Play.of` is cached.

An action names its seat, so a game is fully described by ``(rules, seed, actions)``.
:func:`action_to_dict` / :func:`action_from_dict` give the compact JSON form used in exports
and the game store: ``{"t": "play", "s": 0, "c": "QS"}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from moonshot.cards import CardError, format_cards, parse_card, parse_card_set


@dataclass(frozen=True, slots=True)
class Action:
    tag: ClassVar[str] = "action"
    seat: int


@dataclass(frozen=True, slots=True)
class Pass(Action):
    """Pass cards (or put them in the keeper pile)."""

    tag: ClassVar[str] = "pass"
    cards: int


@dataclass(frozen=True, slots=True)
class Charge(Action):
    """Charge cards; an empty set passes."""

    tag: ClassVar[str] = "charge"
    cards: int


@dataclass(frozen=True, slots=True)
class Expose(Action):
    """Expose cards (Trend's AH); an empty set declines."""

    tag: ClassVar[str] = "expose"
    cards: int


@dataclass(frozen=True, slots=True)
class Play(Action):
    tag: ClassVar[str] = "play"
    card: int

    @staticmethod
    def of(seat: int, card: int) -> Play:
        return _PLAYS[seat][card]


_PLAYS = [[Play(s, c) for c in range(52)] for s in range(4)]


@dataclass(frozen=True, slots=True)
class Claim(Action):
    """Claim every remaining trick (reveals the claimer's hand)."""

    tag: ClassVar[str] = "claim"


@dataclass(frozen=True, slots=True)
class AcceptClaim(Action):
    tag: ClassVar[str] = "accept"
    claimer: int


@dataclass(frozen=True, slots=True)
class RejectClaim(Action):
    tag: ClassVar[str] = "reject"
    claimer: int


ACTION_TYPES: dict[str, type[Action]] = {
    cls.tag: cls for cls in (Pass, Charge, Expose, Play, Claim, AcceptClaim, RejectClaim)
}


def action_to_dict(action: Action) -> dict[str, Any]:
    d: dict[str, Any] = {"t": action.tag, "s": action.seat}
    if isinstance(action, Play):
        d["c"] = format_cards([action.card])[0]
    elif isinstance(action, (Pass, Charge, Expose)):
        d["c"] = format_cards(action.cards)
    elif isinstance(action, (AcceptClaim, RejectClaim)):
        d["claimer"] = action.claimer
    return d


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
]
