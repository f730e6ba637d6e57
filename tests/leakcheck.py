"""Hidden-card leak check for every protocol (not a test module; used by ``test_leakcheck.py``).

A protocol adapter plays games through the protocol's real server and codec and records, for
each client, every message it was sent together with the engine's log length at that moment
(``Received``). :func:`check_game` then compares each message's cards with what that seat may
know at that point of the engine's true (unredacted) log, computed here independently of the
engine's own redaction (:func:`knowable`):

* its own dealt hand, the cards it passed and the cards passed to it (as soon as it and the
  seat passing to it have both passed, as Turbo shows them);
* every card played, every card exposed, every open charge (and all charges once revealed),
  a claimer's hand once the claim is made;
* a blind charge only by the seat that made it.

Anything else (another seat's hand, a pass it neither sent nor received, a blind charge, a card
before it is played) is a leak. Cards in a message are found by :func:`cards_in_json` (any
string anywhere in a JSON message that reads as a card: a leak in any field is caught) or by
the protocol's own parser.

All four server protocols are plugged in (``tests/e2e/test_leakcheck.py``): Sessions, Kierki,
Trend and Turbo. Plugging in another takes a few lines: play games through its server with
recording clients, and for each game call ``check_game(table.game.log, received)`` where
``received`` lists ``Received(seat, version, cards, what)``: ``version`` is the engine event
behind the message (feed the adapter one event at a time and note each event's version while it
writes, as every test in ``test_leakcheck.py`` does), ``cards`` the card mask read from the bytes written
(``cards_in_json(json.loads(...))`` for a JSON protocol). Then ``assert not problems``.

Card masks repeat from deal to deal, so without ``per_deal`` every card counts as known once the
first deal is played out and later deals are checked loosely. Where each message's ``version``
is the exact engine event behind it (Sessions, Kierki and Trend: the seat fed one event at a
time; Turbo: each ``Message.version``), pass ``per_deal=True`` and every deal is checked on its
own: all four protocols do.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from moonshot.core.cards import CardError, CardSet, format_cards, parse_card
from moonshot.core.events import (
    CardPlayed,
    Charged,
    ChargesRevealed,
    ChargingEnded,
    ClaimMade,
    DealStarted,
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


def knowable(log: Sequence[Event], seat: int, per_deal: bool = False) -> list[CardSet]:
    """``out[v]``: the cards ``seat`` may know once the first ``v`` events happened.

    ``per_deal``: start again from nothing at each deal (card masks repeat from deal to deal, so
    without it every card counts as known once the first deal is played out). Only for messages
    whose ``version`` is the exact event behind them: a message about the last deal sent in the
    same write as the next deal's hands would otherwise be flagged."""
    known = 0
    passed = False  # this seat has passed this deal
    coming = 0  # cards passed to it before it passed
    out = [0]
    for e in log:
        own = getattr(e, "seat", None) == seat
        if isinstance(e, DealStarted):
            passed, coming = False, 0
            if per_deal:
                known = 0
        if isinstance(e, PassSent) and e.to == seat and not own and e.cards is not None:
            # a pass may be shown to its receiver once both have passed (Turbo's recv_pass)
            if passed:
                known |= e.cards
            else:
                coming |= e.cards
        if isinstance(e, PassSent) and own:
            passed = True
            known |= coming
        if isinstance(e, HandDealt | PassSent | PassReceived) and own and e.cards is not None:
            known |= e.cards  # its hand, what it passed, what it was passed
        elif isinstance(e, CardPlayed):
            known |= 1 << e.card
        elif isinstance(e, Exposed) or (isinstance(e, Charged) and e.cards is not None and (own or not e.blind)):
            known |= e.cards
        elif isinstance(e, ChargesRevealed | ChargingEnded):
            for c in e.charges:
                known |= c
        elif isinstance(e, ClaimMade):
            known |= e.hand  # a claim shows the claimer's hand to the table
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


def check_game(log: Sequence[Event], received: Iterable[Received], per_deal: bool = False) -> list[str]:
    """The leaks in one game: each message naming a card its seat may not know when it was sent
    (``per_deal``: see :func:`knowable`)."""
    per_seat = {s: knowable(log, s, per_deal) for s in range(4)}
    problems = []
    for r in received:
        known = per_seat[r.seat][min(r.version, len(log))]
        leaked = r.cards & ~known
        if leaked:
            problems.append(f"seat {r.seat} at event {r.version} was sent {format_cards(leaked)} in {r.what}")
    return problems


__all__ = ["Received", "cards_in_json", "check_game", "knowable"]
