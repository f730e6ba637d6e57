"""The few typed actions a seat can take. Immutable and hashable; :meth:`Play.of` is cached.

An action names its seat, so a game is fully described by ``(rules, seed, actions)``.
:func:`action_to_dict` / :func:`action_from_dict` give the compact JSON form used in exports
and the game store: ``{"t": "play", "s": 0, "c": "QS"}``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Final

from moonshot.cards import CardError, format_cards, parse_card, parse_card_set


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
