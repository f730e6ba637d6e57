"""Hidden-card leak check for every protocol (not a test module; used by ``test_leakcheck.py``).

A protocol adapter plays games through the protocol's real server and codec and records, for
each client, every message it was sent together with the engine's log length at that moment
(``Received``). :func:`check_game` then compares each message's cards with what that seat may
know at that point of the engine's true (unredacted) log, computed here independently of the
engine's own redaction (:func:`knowable`):

* its own dealt hand, the cards it passed and the cards passed to it;
* every card played, every card exposed, every open charge (and all charges once revealed);
* a blind charge only by the seat that made it.

Anything else (another seat's hand, a pass it neither sent nor received, a blind charge, a card
before it is played) is a leak. Cards in a message are found by :func:`cards_in_json` (any
string anywhere in a JSON message that reads as a card: a leak in any field is caught) or by
the protocol's own parser.

Plugging in another protocol (Trend, Turbo) takes a few lines: play games through its server
with recording clients, and for each game call ``check_game(table.game.log, received)`` where
``received`` lists ``Received(seat, version, cards, what)``: ``version`` is
``len(table.game.log)`` when the server wrote the message (wrap the adapter's send, as
``test_leakcheck.py`` does for Sessions and Kierki), ``cards`` the card mask read from the bytes
written (``cards_in_json(json.loads(...))`` for a JSON protocol). Then ``assert not problems``.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from moonshot.cards import CardError, CardSet, format_cards, parse_card
from moonshot.events import (
    CardPlayed,
    Charged,
    ChargesRevealed,
    ChargingEnded,
    Event,
    Exposed,
    HandDealt,
    PassReceived,
    PassSent,
)

_CARDISH = re.compile(r"(?:10|[2-9TJQKAtjqka])[CDHScdhs]")


@dataclass(frozen=True)
class Received:
    seat: int  # the seat of the client that was sent the message
    version: int  # len(game.log) when it was sent
    cards: CardSet  # every card the message names
    what: str  # the message, shortened, for the report


def knowable(log: Sequence[Event], seat: int) -> list[CardSet]:
    """``out[v]``: the cards ``seat`` may know once the first ``v`` events happened."""
    known = 0
    out = [0]
    for e in log:
        own = getattr(e, "seat", None) == seat
        if isinstance(e, HandDealt | PassSent | PassReceived) and own and e.cards is not None:
            known |= e.cards  # its hand, what it passed, what it was passed
        elif isinstance(e, CardPlayed):
            known |= 1 << e.card
        elif isinstance(e, Exposed) or (isinstance(e, Charged) and e.cards is not None and (own or not e.blind)):
            known |= e.cards
        elif isinstance(e, ChargesRevealed | ChargingEnded):
            for c in e.charges:
                known |= c
        out.append(known)
    return out


def cards_in_json(value: Any) -> CardSet:
    """Every card named anywhere in a decoded JSON message (strings like ``TH``, ``10h``)."""
    mask = 0
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if _CARDISH.fullmatch(v):
                with contextlib.suppress(CardError):
                    mask |= 1 << parse_card(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
            stack.extend(v.keys())
        elif isinstance(v, list):
            stack.extend(v)
    return mask


def check_game(log: Sequence[Event], received: Iterable[Received]) -> list[str]:
    """The leaks in one game: each message naming a card its seat may not know when it was sent."""
    per_seat = {s: knowable(log, s) for s in range(4)}
    problems = []
    for r in received:
        known = per_seat[r.seat][min(r.version, len(log))]
        leaked = r.cards & ~known
        if leaked:
            problems.append(f"seat {r.seat} at event {r.version} was sent {format_cards(leaked)} in {r.what}")
    return problems


__all__ = ["Received", "cards_in_json", "check_game", "knowable"]
