"""Gym Hearts' event API (seed 003): ``reset()``/``step()`` speak its event dicts, on the moonshot engine.

The environment sends one event at a time. Broadcast events (``"broadcast": True``: ``GameStart``,
``NewRound``, ``ShowTrickAction``, ``ShowTrickEnd``, ``RoundEnd``, ``GameOver``) are for every player and
need no answer (``step(None)``); the others name one player, who answers with an action event:

* ``PassCards`` -> ``{"event_name": "PassCards_Action",
  "data": {"playerName": ..., "action": {"passCards": [3 cards]}}}``
* ``PlayTrick`` -> ``{"event_name": "PlayTrick_Action", "data": {"playerName": ..., "action": {"card": "Ts"}}}``
* ``ShowPlayerHand`` (a seat's hand after passing) needs no answer.

A bad answer (an illegal card, a wrong pass, another player's name, malformed data) makes the
environment send the same request again. Cards are written ``Ts``, ``2c`` (rank upper, suit lower)
and read liberally (``TS``, ``10s``). ``currentTrick`` and ``cards`` list the trick in play order.
Passing cycles left, right, across, hold. The game is over when a total exceeds ``max_score``.

``step`` returns ``(event, reward, done, info)`` (the old Gym 4-tuple, as the seed's environment):
``reward`` maps each player name to its deal's points, negated (``-points``; 0 between deals), ``done``
is true once ``GameOver`` has been sent; after that ``step`` returns ``(None, {}, True, {})``.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Sequence
from typing import Any

from moonshot.actions import Pass, Play
from moonshot.cards import (
    HEARTS,
    QUEEN_SPADES,
    SUIT_LETTERS,
    TWO_CLUBS,
    CardError,
    Notation,
    format_card,
    format_cards,
    parse_card,
)
from moonshot.engine import Game, IllegalAction, Phase
from moonshot.events import DealEnded, Event, TrickEnded
from moonshot.variants import find_variant

DEFAULT_PLAYERS = ("Kazuma", "Aqua", "Megumin", "Darkness")
EventDict = dict[str, Any]


def _cards(cards: int | Sequence[int]) -> list[str]:
    return format_cards(cards, Notation.GYM)


class EventEnv:
    """Gym Hearts' event-driven environment: four named players, ``max_score`` (game over when exceeded)."""

    def __init__(
        self,
        players: Sequence[str] = DEFAULT_PLAYERS,
        max_score: int = 100,
        seed: int | None = None,
        variant: str = "gym",
    ) -> None:
        if len(players) != 4 or len(set(players)) != 4:
            raise ValueError("EventEnv needs four distinct player names")
        self.players = list(players)
        self.max_score = max_score
        self.rules = find_variant(variant, max_score=max_score)
        if self.rules.charging is not None or self.rules.exposable or not self.rules.two_of_clubs_leads:
            raise ValueError(f"EventEnv plays Gym Hearts-like variants (gym, standard, omnibus), not {variant}")
        self._seed = seed
        self._rng = random.Random(seed)
        self.game: Game | None = None
        self._queue: deque[EventDict] = deque()
        self._pending: EventDict | None = None  # the request awaiting an answer
        self._done = False
        self.round = 0

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None) -> EventDict:
        """Start a game and return ``GameStart``."""
        if seed is not None:
            self._rng = random.Random(seed)
        self.game = Game(self.rules, self._rng.getrandbits(62))
        self._queue.clear()
        self._pending = None
        self._done = False
        self._broken = False
        self.round = 0
        self._queue.append(self._event("GameStart", True, {"players": [{"playerName": p} for p in self.players]}))
        self._start_round()
        return self._next()

    def step(self, action: EventDict | None) -> tuple[EventDict | None, dict[str, float], bool, dict[str, Any]]:
        if self.game is None:
            raise RuntimeError("call reset() first")
        if self._done and not self._queue:
            return None, {}, True, {}
        reward = {p: 0.0 for p in self.players}
        info: dict[str, Any] = {}
        pending = self._pending
        if pending is not None:
            error = self._answer(pending, action, reward)
            if error is not None:
                info["error"] = error
                self._queue.appendleft(pending)  # ask the same player again
        event = self._next()
        return event, reward, self._done and event["event_name"] == "GameOver", info

    def render(self) -> None:
        if self.game is not None:
            print(self.game.snapshot())

    # ------------------------------------------------------------------ flow
    def _event(self, name: str, broadcast: bool, data: dict[str, Any]) -> EventDict:
        return {"event_name": name, "broadcast": broadcast, "data": data}

    def _scores(self) -> list[dict[str, Any]]:
        assert self.game is not None
        return [{"playerName": p, "score": self.game.totals[s]} for s, p in enumerate(self.players)]

    def _next(self) -> EventDict:
        if not self._queue:
            self._refill()
        event = self._queue.popleft()
        self._pending = None if event["broadcast"] else event
        if event["event_name"] == "GameOver":
            self._done = True
        return event

    def _start_round(self) -> None:
        assert self.game is not None
        self.round += 1
        self._queue.append(self._event("NewRound", True, {"players": self._scores()}))
        if self.game.phase is Phase.PASS:
            self._queue.append(self._pass_request(0))
        else:
            self._show_hands()

    def _pass_request(self, seat: int) -> EventDict:
        assert self.game is not None
        return self._event(
            "PassCards", False, {"playerName": self.players[seat], "hand": _cards(self.game.hands[seat])}
        )

    def _show_hands(self) -> None:
        assert self.game is not None
        for s, p in enumerate(self.players):
            self._queue.append(
                self._event("ShowPlayerHand", False, {"playerName": p, "hand": _cards(self.game.hands[s])})
            )

    def _trick_state(self) -> dict[str, Any]:
        g = self.game
        assert g is not None
        tc = g.trick_cards
        return {
            "trickNum": g.trick_no,
            "trickSuit": SUIT_LETTERS[tc[0] // 13].lower() if tc else "Unset",
            "currentTrick": [
                {"playerName": self.players[s], "card": format_card(c, Notation.GYM)} for s, c in zip(g.trick_seats, tc)
            ],
            "IsHeartsBroken": g.hearts_broken,
        }

    def _refill(self) -> None:
        """Queue what comes after the broadcasts: the next request, or the next round."""
        g = self.game
        assert g is not None
        if g.phase is Phase.PLAY:
            seat = g.turn
            data = {"playerName": self.players[seat], "hand": _cards(g.hands[seat]), **self._trick_state()}
            self._queue.append(self._event("PlayTrick", False, data))
        else:  # only reached before the first request of a game (handled by _start_round)
            raise RuntimeError(f"nothing to send in phase {g.phase.value}")

    def _answer(self, request: EventDict, action: EventDict | None, reward: dict[str, float]) -> str | None:
        """Apply the answer to ``request``; return an error message when it is not acceptable."""
        g = self.game
        assert g is not None
        name = request["data"]["playerName"]
        if request["event_name"] == "ShowPlayerHand":
            return None
        seat = self.players.index(name)
        expected = request["event_name"] + "_Action"
        try:
            if not isinstance(action, dict) or action.get("event_name") != expected:
                return f"expected a {expected} event from {name}"
            data = action.get("data") or {}
            if data.get("playerName") != name:
                return f"it is {name}'s turn"
            body = data.get("action") or {}
            if expected == "PassCards_Action":
                cards = [parse_card(str(c)) for c in body.get("passCards", [])]
                mask = sum(1 << c for c in set(cards))
                if len(cards) != 3 or mask.bit_count() != 3:
                    return "pass exactly three different cards"
                g.apply(Pass(seat, mask))
                if seat < 3:
                    self._queue.append(self._pass_request(seat + 1))
                else:
                    self._show_hands()
                return None
            card = parse_card(str(body.get("card", "")))
            events = g.apply(Play.of(seat, card))
        except (CardError, IllegalAction, TypeError, AttributeError) as e:
            return str(e)
        self._after_play(events, reward)
        return None

    def _after_play(self, events: list[Event], reward: dict[str, float]) -> None:
        g = self.game
        assert g is not None
        # ShowTrickAction shows the trick including the card just played
        for e in events:
            if type(e) is TrickEnded:
                state = {
                    "trickNum": e.trick,
                    "trickSuit": SUIT_LETTERS[e.cards[0] // 13].lower(),
                    "currentTrick": [
                        {"playerName": self.players[s], "card": format_card(c, Notation.GYM)}
                        for s, c in zip(e.seats, e.cards)
                    ],
                    "IsHeartsBroken": self._broken_after(e),
                }
                self._queue.append(self._event("ShowTrickAction", True, state))
                self._queue.append(
                    self._event(
                        "ShowTrickEnd",
                        True,
                        {
                            "trickNum": e.trick,
                            "trickWinner": self.players[e.winner],
                            "cards": _cards(list(e.cards)),
                            "IsHeartsBroken": state["IsHeartsBroken"],
                        },
                    )
                )
            elif type(e) is DealEnded:
                for s, p in enumerate(self.players):
                    reward[p] = float(-e.points[s])
                self._queue.append(
                    self._event(
                        "RoundEnd",
                        True,
                        {"players": self._scores(), "ShootingMoon": e.moon is not None, "Round": self.round},
                    )
                )
                self._broken = False
                if g.over:
                    best = min(g.totals)
                    winner = next(s for s in range(4) if g.totals[s] == best)
                    data = {"players": self._scores(), "Round": self.round, "Winner": self.players[winner]}
                    self._queue.append(self._event("GameOver", True, data))
                else:
                    self._start_round()
                return
        if not any(type(e) is TrickEnded for e in events):
            self._queue.append(self._event("ShowTrickAction", True, self._trick_state()))
        self._broken = g.hearts_broken

    _broken = False

    def _broken_after(self, e: TrickEnded) -> bool:
        # computed from the trick: after a deal's last trick the engine has already dealt again
        qs = self.rules.queen_breaks_hearts and QUEEN_SPADES in e.cards
        return self._broken or qs or any(c // 13 == HEARTS for c in e.cards)


# ---------------------------------------------------------------------- players
def legal_cards(event: EventDict) -> list[str]:
    """The cards a ``PlayTrick`` request allows (standard rules), from the event alone."""
    data = event["data"]
    hand = [parse_card(c) for c in data["hand"]]
    trick = [parse_card(t["card"]) for t in data["currentTrick"]]
    first = data["trickNum"] == 1
    if not trick:
        if first and TWO_CLUBS in hand:
            legal = [TWO_CLUBS]
        elif data["IsHeartsBroken"] or all(c // 13 == HEARTS for c in hand):
            legal = hand
        else:
            legal = [c for c in hand if c // 13 != HEARTS]
    else:
        suit = trick[0] // 13
        legal = [c for c in hand if c // 13 == suit] or hand
    if first:
        safe = [c for c in legal if c // 13 != HEARTS and c != QUEEN_SPADES]
        legal = safe or legal
    return _cards(legal)


class RandomPlayer:
    """Plays a uniformly random legal card and passes three random cards."""

    def __init__(self, name: str, seed: int | None = None, print_info: bool = False) -> None:
        self.name = name
        self.rng = random.Random(seed)
        self.print_info = print_info

    def act(self, event: EventDict) -> EventDict | None:
        kind = event["event_name"]
        if self.print_info:
            print(event)
        if kind == "PassCards":
            cards = self.rng.sample(event["data"]["hand"], 3)
            if self.print_info:
                print(self.name, " pass cards: ", cards)
            return {"event_name": "PassCards_Action", "data": {"playerName": self.name, "action": {"passCards": cards}}}
        if kind == "PlayTrick":
            card = self.rng.choice(legal_cards(event))
            if self.print_info:
                print(self.name, " choose card: ", card)
            return {"event_name": "PlayTrick_Action", "data": {"playerName": self.name, "action": {"card": card}}}
        return None

    Do_Action = act  # the seed's method name


class HumanPlayer:
    """Asks on stdin (``input``) for passes and plays; shows the requests it gets."""

    def __init__(self, name: str, input_fn: Any = input, print_fn: Any = print) -> None:
        self.name = name
        self._input = input_fn
        self._print = print_fn

    def act(self, event: EventDict) -> EventDict | None:
        kind = event["event_name"]
        data = event["data"]
        if kind == "PassCards":
            self._print(f"{self.name}, your hand: {' '.join(data['hand'])}")
            cards = self._input("Cards to pass (three, e.g. 'Qs Ah 2d'): ").replace(",", " ").split()
            return {"event_name": "PassCards_Action", "data": {"playerName": self.name, "action": {"passCards": cards}}}
        if kind == "PlayTrick":
            trick = " ".join(f"{t['playerName']}:{t['card']}" for t in data["currentTrick"]) or "(you lead)"
            self._print(f"Trick {data['trickNum']}: {trick}   hearts broken: {data['IsHeartsBroken']}")
            self._print(f"{self.name}, your hand: {' '.join(data['hand'])}")
            card = self._input("Card to play: ").strip()
            return {"event_name": "PlayTrick_Action", "data": {"playerName": self.name, "action": {"card": card}}}
        if kind in ("ShowTrickEnd", "RoundEnd", "GameOver", "ShowPlayerHand"):
            self._print(event)
        return None

    Do_Action = act


__all__ = ["DEFAULT_PLAYERS", "EventEnv", "HumanPlayer", "RandomPlayer", "legal_cards"]
