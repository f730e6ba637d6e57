"""Commit and reveal: a game's deals, fixed and published before anyone sees a card, checked after.

A server-hosted game is dealt by a secret seed. When the game starts the table publishes a
*commitment*, the SHA-256 of this text (UTF-8, lines joined by ``\\n``, no trailing newline)::

    moonshot-deals/1
    <game id>
    <seed, decimal>
    <salt, 32 lowercase hex digits>
    <fixed deals, or an empty line when the seed deals every hand>

The salt (128 random bits, drawn by the server with the seed) keeps the seed out of reach of a
search over the commitment. Fixed deals (a Kierki game file) are written one deal after
another, separated by ``;``, each as ``N,E,S,W,kind,leader``: the four hands as hex card masks
(bit ``suit * 13 + rank``), the contract number and the leading seat (``-``: the 2C holder).

When the game ends the table reveals the seed and the salt. Anyone then recomputes the
commitment, deals the game again from the seed, replays its actions and compares the result:
:func:`verify`. Everything here is pure (no I/O, no randomness): the server draws the seed and
the salt.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from moonshot.core.actions import Action
from moonshot.core.engine import DealSpec, Game, IllegalAction
from moonshot.core.events import Event, GameEnded, GameStarted
from moonshot.core.rules import Rules

FORMAT: Final = "moonshot-deals/1"
_SALT: Final = re.compile(r"[0-9a-f]{32}")
_DIGEST: Final = re.compile(r"[0-9a-f]{64}")


def deals_text(deals: Sequence[DealSpec] | None) -> str:
    """The fixed deals as the commitment writes them ('' when the seed deals)."""
    if deals is None:
        return ""
    parts = []
    for d in deals:
        hands = ",".join(f"{h:x}" for h in d.hands)
        parts.append(f"{hands},{d.kind},{'-' if d.leader is None else d.leader}")
    return ";".join(parts)


def commitment(game_id: str, seed: int, salt: str, deals: Sequence[DealSpec] | None = None) -> str:
    """The SHA-256 hex digest a table publishes when its game starts."""
    text = "\n".join((FORMAT, game_id, str(seed), salt, deals_text(deals)))
    return hashlib.sha256(text.encode()).hexdigest()


def valid_salt(salt: object) -> bool:
    return isinstance(salt, str) and _SALT.fullmatch(salt) is not None


@dataclass(frozen=True)
class DealSeal:
    """One game's commitment and what opens it; the table keeps it and shows its parts in turn."""

    game_id: str
    seed: int
    salt: str
    deals: tuple[DealSpec, ...] | None = None

    @property
    def commitment(self) -> str:
        return commitment(self.game_id, self.seed, self.salt, self.deals)

    def published(self) -> dict[str, Any]:
        """What everyone may see from the start."""
        return {"format": FORMAT, "game_id": self.game_id, "commitment": self.commitment}

    def revealed(self) -> dict[str, Any]:
        """What everyone may see once the game is over."""
        return {**self.published(), "seed": self.seed, "salt": self.salt}

    def decorate(self, event: Event) -> Event:
        """The event as the table sends it: the game's start carries the commitment, its end the
        seed and salt. Other events are returned as they are."""
        if type(event) is GameStarted:
            return replace(event, commitment=self.commitment)
        if type(event) is GameEnded:
            return replace(event, seed=self.seed, salt=self.salt)
        return event


def verify(
    rules: Rules,
    game_id: str,
    published: str,
    seed: int,
    salt: str,
    actions: Sequence[Action],
    deals: Sequence[DealSpec] | None = None,
    totals: Sequence[int] | None = None,
    hands: Sequence[tuple[int, int, int]] = (),
) -> list[str]:
    """Check a finished game against the commitment it published: the problems found ([]: none).

    ``published`` is the commitment as the checker saw it at the start; ``seed`` and ``salt`` as
    revealed at the end. The game is dealt again and its ``actions`` replayed: every card played
    must have been in its seat's hand, and the game must end with ``totals`` (when given).
    ``hands`` are ``(deal, seat, cards)`` a client saw (its own hand of a deal, a card mask): each
    must be what the seed dealt."""
    problems: list[str] = []
    if _DIGEST.fullmatch(published) is None:
        return [f"the commitment {published!r} is not a SHA-256 hex digest"]
    if not valid_salt(salt):
        problems.append(f"the salt {salt!r} is not 32 hex digits")
    expected = commitment(game_id, seed, salt, deals)
    if not hmac.compare_digest(expected, published):
        problems.append(f"the revealed seed and salt give the commitment {expected}, not the published {published}")
    try:
        game = Game(rules, seed, deals)
    except ValueError as e:
        return [*problems, f"the game cannot be dealt: {e}"]
    dealt: dict[int, tuple[int, int, int, int]] = {0: (game.dealt[0], game.dealt[1], game.dealt[2], game.dealt[3])}
    for i, a in enumerate(actions):
        try:
            game.apply(a)
        except IllegalAction as e:
            return [*problems, f"action {i} ({a!r}) cannot be played with these deals: {e}"]
        if game.deal_index not in dealt and not game.over:
            dealt[game.deal_index] = (game.dealt[0], game.dealt[1], game.dealt[2], game.dealt[3])
    if not game.over:
        problems.append("the actions do not finish the game")
    if totals is not None and list(totals) != list(game.totals):
        problems.append(f"the record says the totals were {list(totals)}, the replay gives {list(game.totals)}")
    for deal, seat, cards in hands:
        got = dealt.get(deal)
        if got is None:
            problems.append(f"deal {deal} was not played")
        elif not 0 <= seat < 4 or got[seat] != cards:
            problems.append(f"deal {deal}: the hand seen in seat {seat} is not the one the seed dealt")
    return problems


__all__ = ["FORMAT", "DealSeal", "commitment", "deals_text", "valid_salt", "verify"]
