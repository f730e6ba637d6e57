"""Why the engine refuses an action: :class:`IllegalAction`, its stable reason codes and their arguments.

Every refusal the engine raises says why twice: in English (the exception's text, for programs,
logs and the seeds' protocols, unchanged) and as a stable ``code`` with JSON-able ``params``, so
a client can say it in its own language (the web app's catalogue has ``error.illegal.<code>``
for every code in :data:`REASON_CODES`; a test holds the engine, this table and both catalogues
together). The codes name what is wrong, never a variant.

Parameters: ``seat``, ``turn`` and ``claimer`` are seat numbers (0..3, N E S W); ``card`` is a
card's text ("QS"), ``cards`` a list of them; ``suit`` one of "clubs" "diamonds" "hearts"
"spades"; ``phase`` the phase's value ("pass", "pile", "charge", "expose", "play"); ``count`` and
``expected`` numbers of cards; ``variant`` the rules' name as data; ``value`` what was sent, as
text.

:class:`Reason` carries the same three things as a ``str`` (the English), so layers that pass a
refusal along as text (the table's replies) keep its code for those that want it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

# code -> the parameters it carries (the catalogue's messages may use any of them)
REASON_CODES: Final[dict[str, tuple[str, ...]]] = {
    "no_seat": ("value",),
    "game_over": (),
    "wrong_phase_play": ("seat", "phase"),
    "wrong_phase_pass": ("seat", "phase"),
    "wrong_phase_charge": ("seat", "phase"),
    "wrong_phase_claim": ("seat", "phase"),
    "claim_pending": ("claimer",),
    "not_your_turn": ("seat", "turn"),
    "no_card": ("value",),
    "not_held": ("seat", "cards"),
    "must_follow": ("seat", "card", "suit"),
    "first_lead": ("seat", "card"),
    "first_trick_points": ("seat", "card"),
    "hearts_not_broken": ("seat", "card"),
    "charged_card": ("seat", "card"),
    "not_playable": ("seat", "card"),
    "already_passed": ("seat",),
    "pass_count": ("count", "expected"),
    "not_your_charge": ("seat", "turn"),
    "charge_wait": ("seat",),
    "cannot_charge": ("seat", "cards"),
    "no_expose": ("seat",),
    "cannot_expose": ("seat", "cards"),
    "no_claims": ("variant",),
    "already_claimed": ("seat",),
    "cannot_claim": ("seat",),
    "no_such_claim": ("value",),
    "cannot_answer_claim": ("seat",),
    "own_claim": ("seat",),
    "already_accepted": ("seat", "claimer"),
    "malformed_cards": ("seat",),
    "unknown_action": (),
}


class Reason(str):
    """A refusal's English text that also carries its ``code`` and ``params``."""

    code: str
    params: dict[str, Any]

    def __new__(cls, text: str, code: str, params: Mapping[str, Any] | None = None) -> Reason:
        reason = super().__new__(cls, text)
        reason.code = code
        reason.params = dict(params or {})
        return reason


class IllegalAction(ValueError):
    """An action the rules do not allow now. The game is unchanged.

    ``str(e)`` is the English reason; ``code`` (one of :data:`REASON_CODES`) and ``params`` say
    it again for a client's own language; ``reason`` is all three as a :class:`Reason`."""

    def __init__(self, message: str, code: str = "unknown_action", params: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.params = dict(params or {})

    @property
    def reason(self) -> Reason:
        return Reason(str(self), self.code, self.params)


__all__ = ["REASON_CODES", "IllegalAction", "Reason"]
