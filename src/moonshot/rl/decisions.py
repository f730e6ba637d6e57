"""Turns the engine's decisions into one-card-at-a-time choices over ``Discrete(53)``.

Action encoding (shared by every moonshot RL interface):

* ``0..51``: a card (``suit * 13 + rank``, as in :mod:`moonshot.core.cards`).
* ``52`` (:data:`~moonshot.rl.observation.DONE`): "no more cards" — ends a charge or exposure.

How each engine decision maps onto it:

* **play**: one action, the card.
* **pass** (and Turbo's keeper pile): ``pass_count`` successive card choices (3 in every variant);
  the engine gets the :class:`~moonshot.core.actions.Pass` after the last one. ``DONE`` is not legal.
* **charge** (Turbo): choose chargeable cards one at a time, then ``DONE`` (``DONE`` at once = no charge).
* **expose** (Trend's AH): the same: the card, then ``DONE`` (or ``DONE`` at once to decline).
* **claims** (Turbo) are not part of the action space: RL seats never claim, and a claim made by a bot
  opponent is answered on the RL seat's behalf by :func:`answer_claim` (it rejects, so play goes on).

The legal actions are a 53-bit int (bit 52 = ``DONE``); :func:`moonshot.rl.observation.mask_array`
turns it into the ``int8`` ``action_mask``.
"""

from __future__ import annotations

from moonshot.core.actions import Charge, Expose, Pass, Play, RejectClaim
from moonshot.core.engine import Game, Phase
from moonshot.core.events import Event
from moonshot.rl.observation import DONE

DONE_BIT = 1 << DONE


class Decisions:
    """Per-seat selections in progress over one :class:`~moonshot.core.engine.Game`."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.selected = [0, 0, 0, 0]

    def reset(self, game: Game) -> None:
        self.game = game
        self.selected = [0, 0, 0, 0]

    def kind(self, seat: int) -> str | None:
        """What ``seat`` is asked to decide now: pass, charge, expose, play, claim or ``None``."""
        g = self.game
        ph = g.phase
        if ph is Phase.PLAY:
            if g.claimer is not None:
                return "claim" if seat in g.to_act() else None
            return "play" if seat == g.turn else None
        if ph is Phase.OVER or seat not in g.to_act():
            return None
        if ph is Phase.PASS or ph is Phase.PILE:
            return "pass"
        return "charge" if ph is Phase.CHARGE else "expose"

    def next_seat(self) -> int | None:
        """The seat whose choice comes next (a seat in the middle of a selection goes on first)."""
        g = self.game
        if g.phase is Phase.PLAY and g.claimer is None:
            return g.turn
        waiting = g.to_act()
        if not waiting:
            return None
        for s in waiting:
            if self.selected[s]:
                return s
        return waiting[0]

    def mask(self, seat: int) -> int:
        """Legal actions of ``seat`` now as a 53-bit int (0: nothing to decide)."""
        g = self.game
        k = self.kind(seat)
        if k == "play":
            return g.legal_play_mask(seat)
        if k == "pass":
            return g.hands[seat] & ~self.selected[seat]
        if k == "charge":
            return (g.hands[seat] & g.rules.chargeable & ~g.charged[seat] & ~self.selected[seat]) | DONE_BIT
        if k == "expose":
            return (g.hands[seat] & g.rules.exposable & ~self.selected[seat]) | DONE_BIT
        return 0

    def apply(self, seat: int, action: int, legal: int | None = None) -> list[Event]:
        """Apply ``seat``'s choice; returns the engine's events (empty while a selection goes on).

        Raises ``ValueError`` for an action outside ``mask(seat)`` (``legal``: that mask, if known).
        """
        action = int(action)
        if legal is None:
            legal = self.mask(seat)
        if not 0 <= action <= DONE or not legal >> action & 1:
            raise ValueError(f"action {action} is not legal for seat {seat} now")
        g = self.game
        k = self.kind(seat)
        if k == "play":
            return g.apply(Play.of(seat, action))
        if k == "pass":
            sel = self.selected[seat] | 1 << action
            if sel.bit_count() < g.rules.pass_count:
                self.selected[seat] = sel
                return []
            self.selected[seat] = 0
            return g.apply(Pass(seat, sel))
        if action != DONE:
            self.selected[seat] |= 1 << action
            return []
        sel, self.selected[seat] = self.selected[seat], 0
        return g.apply(Charge(seat, sel) if k == "charge" else Expose(seat, sel))


def answer_claim(game: Game, seat: int) -> list[Event]:
    """Answer a pending claim for a seat that has no claim actions (it rejects, so play continues)."""
    assert game.claimer is not None
    return game.apply(RejectClaim(seat, game.claimer))


__all__ = ["DONE_BIT", "Decisions", "answer_claim"]
