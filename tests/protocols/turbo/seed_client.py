"""What the seed-era Turbo Hearts web client reads, written down from its code, and models of
what it does with it.

The client is tjwilson90/turbo-hearts at commit 05e5134 (the last commit whose README is the
seed word for word): the plain lobby page (``assets/lobby.js``), the plain game page
(``assets/game.js``) and the WebGL table (``packages/game/src``). ``LOBBY_READS``,
``GAME_READS`` and ``RESPONSE_READS`` list, per event or answer, every field one of those reads
and what it must be for the code to work; fields it does not read are free. docs/turbo.md has
the same table in words.

Spec notation (:func:`violations`): ``"str"``, ``"int"``, ``"bool"``, ``"seat"`` (north, east,
south, west), ``"seat?"`` (a seat or null), ``"card"`` (``"TS"``), ``"pass"`` (left, right,
across, keeper), ``"json"`` (any JSON value); ``[spec]`` a list of such; ``{"*": spec}`` an object
whose every value is such; any other dict an object with at least those fields.

The models (:class:`PlainTable`, :class:`WebGlTable`, :class:`LobbyPage`) follow the client's
bookkeeping closely enough to show its failures: the WebGL table takes three unknown cards from a
hand for every other seat's ``send_pass`` and gives a seat the cards in the passer's "limbo" on
``recv_pass`` (events it does not know, such as ``hidden_send_pass``, change nothing; a ``play``
from a hand it counts as empty is the client's ``Cannot set properties of undefined``); its
``charge_status`` shows a "Charge Cards" button to a seat not done when no other is up.
"""

from __future__ import annotations

from typing import Any

SEATS = ("north", "east", "south", "west")
PASSES = ("left", "right", "across", "keeper")
PASS_OFFSET = {"left": 1, "right": 3, "across": 2, "keeper": 2}  # the keeper pile: as across
DONE = {f"{s}_done": "bool" for s in SEATS}
PLAYER = {"name": "str", "type": "str"}  # SitPlayer; lobby.js reads only `name`

# the lobby stream, by `type` (assets/lobby.js onEvent; `chat` and `ping` fall to its default)
LOBBY_READS: dict[str, dict[str, Any]] = {
    "join_lobby": {"name": "str"},
    "new_game": {"id": "str", "name": "str"},
    "lobby_state": {"subscribers": ["str"], "games": {"*": [{"name": "str"}]}},
    "join_game": {"id": "str", "player": {"name": "str"}},
    "leave_game": {"id": "str", "name": "str"},
    "finish_game": {"id": "str"},
    "leave_lobby": {"name": "str"},
}

# the game stream, by `type` (assets/game.js onEvent and packages/game/src/events/*)
GAME_READS: dict[str, dict[str, Any]] = {
    "sit": {**{s: PLAYER for s in SEATS}, "rules": "str"},
    "end_replay": {},
    "deal": {**{s: ["card"] for s in SEATS}, "pass": "pass"},
    "start_passing": {},
    "pass_status": DONE,
    "send_pass": {"from": "seat", "cards": ["card"]},
    "recv_pass": {"to": "seat", "cards": ["card"]},
    "start_charging": {},
    "charge_status": {"next_charger": "seat?", **DONE},
    "charge": {"seat": "seat", "cards": ["card"]},
    "blind_charge": {"seat": "seat", "count": "int"},
    "reveal_charges": {s: ["card"] for s in SEATS},
    "start_trick": {"leader": "seat"},
    "play_status": {"next_player": "seat", "legal_plays": ["card"]},
    "play": {"seat": "seat", "card": "card"},
    "end_trick": {"winner": "seat"},
    "game_complete": {},
}

# answers: the lobby page calls response.json() on these (and only logs the value); the game
# pages never read an answer
RESPONSE_READS: dict[str, Any] = {"/lobby/new": "json", "/lobby/join": "json", "/lobby/add_bot": "json"}

_RANKS = "23456789TJQKA"


def violations(value: Any, spec: Any, path: str = "") -> list[str]:
    """Where ``value`` breaks ``spec`` (empty: it holds)."""
    if isinstance(spec, str):
        ok = {
            "str": isinstance(value, str),
            "int": isinstance(value, int) and not isinstance(value, bool),
            "bool": isinstance(value, bool),
            "seat": value in SEATS,
            "seat?": value is None or value in SEATS,
            "card": isinstance(value, str) and len(value) == 2 and value[0] in _RANKS and value[1] in "CDHS",
            "pass": value in PASSES,
            "json": True,
        }[spec]
        return [] if ok else [f"{path or 'value'}: {value!r} is not {spec}"]
    if isinstance(spec, list):
        if not isinstance(value, list):
            return [f"{path}: {value!r} is not a list"]
        return [v for i, item in enumerate(value) for v in violations(item, spec[0], f"{path}[{i}]")]
    if not isinstance(value, dict):
        return [f"{path}: {value!r} is not an object"]
    if set(spec) == {"*"}:
        return [v for k, item in value.items() for v in violations(item, spec["*"], f"{path}.{k}")]
    out = []
    for key, sub in spec.items():
        if key not in value:
            out.append(f"{path}.{key}: missing")
        else:
            out.extend(violations(value[key], sub, f"{path}.{key}"))
    return out


def check_event(event: dict[str, Any], reads: dict[str, dict[str, Any]]) -> list[str]:
    spec = reads.get(event.get("type", ""))
    return [] if spec is None else violations(event, spec, event["type"])


class PlainTable:
    """assets/game.js: one label per card, by id; the viewer's hand is the labels in its div."""

    def __init__(self) -> None:
        self.divs: dict[str, list[str]] = {s: [] for s in SEATS}

    def apply(self, e: dict[str, Any]) -> None:
        t = e["type"]
        if t == "deal":
            for s in SEATS:
                self.divs[s].extend(e[s])
        elif t == "send_pass":
            self._remove(e["cards"])
        elif t == "recv_pass":
            self.divs[e["to"]].extend(e["cards"])
        elif t == "play":
            self._remove([e["card"]])

    def _remove(self, cards: list[str]) -> None:
        for s in SEATS:
            self.divs[s] = [c for c in self.divs[s] if c not in cards]


class WebGlTable:
    """packages/game/src: every seat's hand as cards, known or backs, and each seat's limbo."""

    def __init__(self, me: str) -> None:
        self.me = me
        self.pass_ = "left"
        self.hands: dict[str, list[str]] = {s: [] for s in SEATS}  # "BACK" for an unknown card
        self.limbo: dict[str, list[str]] = {s: [] for s in SEATS}
        self.errors: list[str] = []
        self.button: str | None = None  # the async "Charge Cards" event, when one is up
        self.buttons = 0

    def apply(self, e: dict[str, Any]) -> None:
        t = e["type"]
        if t == "deal":  # DealEvent: a fresh table, 13 backs for a hand it may not see
            self.pass_ = e["pass"]
            self.hands = {s: list(e[s]) if e[s] else ["BACK"] * 13 for s in SEATS}
            self.limbo = {s: [] for s in SEATS}
        elif t == "send_pass":  # SendPassEvent
            hand = self.hands[e["from"]]
            if not e["cards"]:
                moved, self.hands[e["from"]] = hand[:3], hand[3:]
            else:
                moved = [c for c in hand if c in e["cards"]]
                self.hands[e["from"]] = [c for c in hand if c not in e["cards"]]
            self.limbo[e["from"]].extend(moved)
        elif t == "recv_pass":  # ReceivePassEvent: the passer's limbo comes over
            src = SEATS[(SEATS.index(e["to"]) - PASS_OFFSET[self.pass_]) % 4]
            received = list(e["cards"])
            while self.limbo[src]:
                card = self.limbo[src].pop()
                if card == "BACK" and received:
                    card = received.pop()
                elif card != "BACK" and not received:
                    card = "BACK"
                self.hands[e["to"]].append(card)
        elif t == "play":  # PlayEvent: the card if known, else the first card of the hand
            hand = self.hands[e["seat"]]
            if e["card"] in hand:
                hand.remove(e["card"])
            elif hand:
                hand.pop(0)
            else:
                self.errors.append(f"{e['seat']} plays {e['card']} from a hand shown empty")
        elif t == "charge_status" and self.button is None and not e[f"{self.me}_done"]:
            # ChargeStatusEvent.isMyAction: up when no button is and the viewer is not done
            self.button = "charge_status"
            self.buttons += 1

    def charged(self) -> None:
        """The viewer pressed "Charge Cards" (submitCharge): the button goes."""
        self.button = None


class LobbyPage:
    """assets/lobby.js: the players list, each game's names and its buttons."""

    def __init__(self, me: str) -> None:
        self.me = me
        self.people: list[str] = []
        self.games: dict[str, tuple[list[str], list[str]]] = {}  # id -> (names, buttons)

    def _buttons(self, names: list[str]) -> list[str]:  # createGameElement
        if len(names) >= 4:
            return ["Open"]
        return ["Add Bot", "Leave" if self.me in names else "Join"]

    def apply(self, e: dict[str, Any]) -> None:
        t = e["type"]
        if t == "join_lobby" and e["name"] not in self.people:
            self.people.append(e["name"])
        elif t == "leave_lobby" and e["name"] in self.people:
            self.people.remove(e["name"])
        elif t == "new_game":
            self.games[e["id"]] = ([e["name"]], self._buttons([e["name"]]))
        elif t == "lobby_state":
            self.people = list(e["subscribers"])
            self.games = {}
            for gid, players in e["games"].items():
                names = [p["name"] for p in players]
                self.games[gid] = (names, self._buttons(names))
        elif t == "join_game":  # onJoinGame
            names, buttons = self.games[e["id"]]
            names.append(e["player"]["name"])
            if len(names) >= 4:
                buttons[-1:] = ["Open"]
            elif e["player"]["name"] == self.me:
                buttons[-1:] = ["Leave"]
        elif t == "leave_game":  # onLeaveGame
            names, buttons = self.games[e["id"]]
            names[:] = [n for n in names if n != e["name"]]
            if not names:
                del self.games[e["id"]]
            elif e["name"] == self.me:
                buttons[-1:] = ["Join"]
        elif t == "finish_game":
            self.games.pop(e["id"], None)
