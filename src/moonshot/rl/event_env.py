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
and read liberally (``TS``, ``10s``). Passing cycles left, right, across, hold by default; in
``compat="original"`` it goes left every deal, as the original's does (a bug it has); ``pass_cycle=``
sets the cycle in either mode.

By default (``compat="moonshot"``) ``currentTrick`` and ``cards`` list the trick in play order, hands
are sorted clubs, diamonds, hearts, spades, the game is over when a total exceeds ``max_score``, and
``step`` returns ``(event, reward, done, info)`` (the old Gym 4-tuple, as the seed's environment):
``reward`` maps each player name to its deal's points, negated (``-points``; 0 between deals), ``done``
is true once ``GameOver`` has been sent; after that ``step`` returns ``(None, {}, True, {})``.

``compat="original"`` reproduces what the original environment's ``step()`` returns instead, for code
written against it: ``(event, None, None, None)`` during play, ``reward`` a dict of each player's
``+points`` on the ``RoundEnd`` step only, ``(None, None, True, None)`` from the step after
``GameOver`` on; the game ends when a total reaches ``max_score`` (>=); hands are sorted clubs,
diamonds, spades, hearts; ``currentTrick`` and ``ShowTrickEnd.cards`` list the trick in seat order;
``render()`` prints the original's progress messages; a refused card prints the line the original's
``step()`` prints for it (``Must play the suit of the current trick.``, ``Hearts have not been
broken.``, the first-trick ones, a card it cannot read). A refused action still re-sends the request;
its reason is in :attr:`EventEnv.last_error` (``info`` stays ``None``), and refusals the original
would not have made (a wrong ``playerName``, a pass that is not three different cards, malformed
data) also warn with :class:`StricterRefusal`. :class:`~moonshot.rl.gym_hearts.GymHeartsEnv`
(``gymnasium.make("Hearts_Card_Game-v0")``) is this mode under the original's constructor arguments.

Calling ``__init__`` again (the original's example does: ``env.__init__(names, max_score)``) keeps
every setting it does not name (``compat``, ``pass_cycle``, ``seed``, ``variant``).
"""

from __future__ import annotations

import random
import warnings
from collections import deque
from collections.abc import Sequence
from typing import Any

from moonshot.core.actions import Pass, Play
from moonshot.core.cards import (
    CLUBS,
    DIAMONDS,
    HEARTS,
    QUEEN_SPADES,
    SPADES,
    SUIT_LETTERS,
    TWO_CLUBS,
    CardError,
    Notation,
    cards_in,
    format_card,
    format_cards,
    parse_card,
)
from moonshot.core.engine import Game, IllegalAction, Phase
from moonshot.core.events import DealEnded, Event, TrickEnded
from moonshot.core.rules import PassDirection
from moonshot.core.variants import find_variant

DEFAULT_PLAYERS = ("Kazuma", "Aqua", "Megumin", "Darkness")
EventDict = dict[str, Any]
COMPAT_MODES = ("moonshot", "original")
# the original sorts a hand clubs, diamonds, spades, hearts (moonshot's card order is C, D, H, S)
_ORIGINAL_SUIT_ORDER = {CLUBS: 0, DIAMONDS: 1, SPADES: 2, HEARTS: 3}
# the rules the original plays, as changes to the variant: it ends at a total >= max_score, and it
# passes left every deal (it looks its direction up by the trick number, 0 while passing: a bug,
# reproduced; ``pass_cycle=`` gives the full cycle back)
ORIGINAL_RULES: dict[str, Any] = {"limit_inclusive": True, "pass_cycle": (PassDirection.LEFT,)}
# the original's suit letters, in its order, and its refusal lines (printed by its ``step()``)
_ORIGINAL_SUITS = ["c", "d", "s", "h"]
_ORIGINAL_RANKS = {"T": 10, "J": 11, "Q": 12, "K": 13, "A": 14}
MUST_FOLLOW = "Must play the suit of the current trick."
HEARTS_NOT_BROKEN = "Hearts have not been broken."
FIRST_TRICK_HEARTS = "Hearts cannot be broken on the first hand."
FIRST_TRICK_QUEEN = "The queen of spades cannot be played on the first hand."


class StricterRefusal(UserWarning):
    """Compat mode refused an action the original environment would have taken (or crashed on)."""


def _cards(cards: int | Sequence[int]) -> list[str]:
    return format_cards(cards, Notation.GYM)


def _pass_cycle(cycle: str | Sequence[PassDirection | str]) -> tuple[PassDirection, ...]:
    """``pass_cycle=``: directions, or their names (``"left right across hold"``)."""
    if isinstance(cycle, str):
        cycle = cycle.replace(",", " ").split()
    try:
        out = tuple(PassDirection(d.lower()) if isinstance(d, str) else PassDirection(d) for d in cycle)
    except (ValueError, AttributeError):
        raise ValueError(f"pass_cycle takes left, right, across and hold, not {list(cycle)!r}") from None
    if not out or PassDirection.KEEPER in out:
        raise ValueError(f"pass_cycle takes left, right, across and hold, not {list(cycle)!r}")
    return out


def _original_read(text: str) -> tuple[int | None, list[str]]:
    """A card as the original reads one (rank, suit letter): the card (None when it has no such
    card) and the lines its reader prints for a card it cannot read."""
    if not text:
        return None, []
    suit = text[-1].lower()
    try:
        _ORIGINAL_SUITS.index(suit)
    except ValueError as e:  # the interpreter's own words, as the original prints them
        return None, ["Invalid suit", str(e)]
    rank_text = text[:-1].upper()
    rank = _ORIGINAL_RANKS.get(rank_text)
    if rank is None:
        try:
            rank = int(rank_text)
        except ValueError as e:
            return None, ["Invalid card rank.", str(e)]
    if not 2 <= rank <= 14:
        return None, []  # read, but no card of the hand has that rank
    return "CDHS".index(suit.upper()) * 13 + rank - 2, []


class EventEnv:
    """Gym Hearts' event-driven environment: four named players, ``max_score`` (over when exceeded; reached in compat).

    ``compat="original"`` makes ``step()``, the end rule, card orders and ``render()`` those of the
    original environment (see the module's docstring and docs/rl.md); ``"moonshot"`` (the default)
    keeps moonshot's behaviour.
    """

    _KEPT = ("compat", "pass_cycle", "seed", "variant")  # what a second __init__ keeps unless named

    def __init__(
        self,
        players: Sequence[str] = DEFAULT_PLAYERS,
        max_score: int = 100,
        seed: int | None = None,
        variant: str | None = None,
        compat: str | None = None,
        pass_cycle: str | Sequence[PassDirection | str] | None = None,
    ) -> None:
        # the original's example calls ``env.__init__(names, max_score)`` on a made env: a setting
        # not named again keeps its value (defaults: moonshot's mode, the gym variant, the mode's cycle)
        kept: dict[str, Any] = getattr(self, "_settings", {})
        given: dict[str, Any] = {"compat": compat, "pass_cycle": pass_cycle, "seed": seed, "variant": variant}
        settings: dict[str, Any] = {k: kept.get(k) if given[k] is None else given[k] for k in self._KEPT}
        mode: str = settings["compat"] or "moonshot"
        name: str = settings["variant"] or "gym"
        if len(players) != 4 or len(set(players)) != 4:
            raise ValueError("EventEnv needs four distinct player names")
        if mode not in COMPAT_MODES:
            raise ValueError(f"compat must be one of {', '.join(COMPAT_MODES)}, not {mode!r}")
        rules = find_variant(name, max_score=max_score)
        if rules.charging is not None or rules.exposable or not rules.two_of_clubs_leads:
            raise ValueError(f"EventEnv plays Gym Hearts-like variants (gym, standard, omnibus), not {name}")
        if mode == "original":
            rules = rules.replace(**ORIGINAL_RULES)
        if settings["pass_cycle"] is not None:
            rules = rules.replace(pass_cycle=_pass_cycle(settings["pass_cycle"]))
        self.players = list(players)
        self.max_score = max_score
        self.compat = mode
        self._original = mode == "original"
        self.rules = rules
        self._settings = settings
        seed = settings["seed"]
        self.last_error: str | None = None  # why the last step's action was refused (None: accepted)
        self._round_reward: dict[str, int] | None = None  # compat: the +points of the RoundEnd to come
        self._render_msg: str | None = None  # compat: the progress message render() prints next
        self._shown_round = 0
        self._passing_shown = False
        self._seed = seed
        self._rng = random.Random(seed)
        self.game: Game | None = None
        self._queue: deque[EventDict] = deque()
        self._pending: EventDict | None = None  # the request awaiting an answer
        self._done = False
        self.round = 0

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> EventDict:
        """Start a game and return ``GameStart`` (``options`` is accepted for Gymnasium wrappers and ignored)."""
        if seed is not None:
            self._rng = random.Random(seed)
        self.game = Game(self.rules, self._rng.getrandbits(62))
        self._queue.clear()
        self._pending = None
        self._done = False
        self._broken = False
        self.round = 0
        self.last_error = None
        self._round_reward = None
        self._render_msg = None
        self._shown_round = 0
        self._passing_shown = False
        self._queue.append(self._event("GameStart", True, {"players": [{"playerName": p} for p in self.players]}))
        self._start_round()
        return self._next()

    def step(self, action: EventDict | None) -> tuple[Any, Any, Any, Any]:
        """Answer the pending request (or ``None`` after a broadcast); return the next event.

        Default mode: ``(event, {name: -points or 0.0}, done, info)``, ``info["error"]`` on a refusal.
        ``compat="original"``: ``(event, None or {name: +points} on RoundEnd, None, None)``, then
        ``(None, None, True, None)`` after ``GameOver``.
        """
        if self.game is None:
            raise RuntimeError("call reset() first")
        if self._done and not self._queue:
            self.last_error = None
            return (None, None, True, None) if self._original else (None, {}, True, {})
        reward = {p: 0.0 for p in self.players}
        info: dict[str, Any] = {}
        pending = self._pending
        error = None
        if pending is not None:
            error = self._answer(pending, action, reward)
            if error is not None:
                info["error"] = error
                self._queue.appendleft(pending)  # ask the same player again
        self.last_error = error
        if self._original and error is not None and pending is not None:
            for line in self._original_refusal(pending, action):
                print(line)  # the original's step() prints these
        event = self._next()
        if self._original:
            if error is not None and self._stricter(pending, action):
                warnings.warn(f"moonshot refused this action (the original would not): {error}", StricterRefusal, 2)
            round_reward = None
            if event["event_name"] == "RoundEnd":
                round_reward, self._round_reward = self._round_reward, None
            return event, round_reward, None, None
        return event, reward, self._done and event["event_name"] == "GameOver", info

    def render(self) -> None:
        """Print the game: its snapshot (default mode) or the original's progress message (compat mode).

        In compat mode, as in the original, each message is printed once: ``*** Hearts Start ***``,
        ``*** Start Round n ***`` with the scores, ``*** Pass Cards Start ***`` / ``Over ***``, the table
        after each card (``Current table:``), ``*** Trick n ***``, ``*** Round n End ***``, ``*** Game Over ***``.
        """
        if self._original:
            if self._render_msg is not None:
                print(self._render_msg)
                self._render_msg = None
        elif self.game is not None:
            print(self.game.snapshot())

    # ------------------------------------------------------------------ compat="original"
    def _stricter(self, request: EventDict | None, action: EventDict | None) -> bool:
        """Whether the original would have acted on (or crashed on) this refused answer, not asked again."""
        if request is None or not isinstance(action, dict):
            return False
        expected = request["event_name"] + "_Action"
        if action.get("event_name") != expected:
            return False  # the original ignores it and asks again
        data = action.get("data")
        if not isinstance(data, dict):
            return True  # the original fails on it
        name = data.get("playerName")
        body = data.get("action")
        if expected == "PlayTrick_Action":
            if name != request["data"]["playerName"]:
                return True  # the original plays it for whoever's turn it is
            return not isinstance(body, dict) or "card" not in body  # the original fails on it
        if name not in self.players:
            return False  # nobody of that name: the original asks again
        if name != request["data"]["playerName"]:
            return True  # the original passes for that other player
        cards = body.get("passCards") if isinstance(body, dict) else None
        if not isinstance(cards, list) or len(cards) != 3:
            return True  # fewer: the original fails; more: it passes the first three
        try:
            return len({parse_card(str(c)) for c in cards}) != 3  # the original passes one card three times
        except CardError:
            return False

    def _original_refusal(self, request: EventDict, action: Any) -> list[str]:
        """The lines the original's ``step()`` prints for this refused answer to ``request``: a card
        it cannot read, and its refusals of a legal-looking card, checked in its order (a lead of
        unbroken hearts, not following suit, hearts or the queen of spades on the first trick)."""
        g = self.game
        kind = request["event_name"]
        if g is None or not isinstance(action, dict) or action.get("event_name") != kind + "_Action":
            return []
        data = action.get("data")
        body = data.get("action") if isinstance(data, dict) else None
        if not isinstance(body, dict):
            return []
        if kind == "PassCards":
            cards = body.get("passCards")
            if not isinstance(cards, list):
                return []
            return [line for c in cards[:3] if isinstance(c, str) for line in _original_read(c)[1]]
        text = body.get("card")
        if kind != "PlayTrick" or not isinstance(text, str):
            return []
        tc = g.trick_cards
        if g.trick_no == 1 and not tc:
            return []  # the first lead: anything but "2c" is asked again, silently
        card, lines = _original_read(text)
        seat = self.players.index(request["data"]["playerName"])
        hand = g.hands[seat]
        if card is None or not hand >> card & 1:
            return lines  # not a card of the hand: asked again
        suit = card // 13
        if not tc:
            if suit == HEARTS and not g.hearts_broken and any(c // 13 != HEARTS for c in cards_in(hand)):
                return [HEARTS_NOT_BROKEN]
        else:
            led = tc[0] // 13
            if suit != led and any(c // 13 == led for c in cards_in(hand)):
                return [MUST_FOLLOW]
        if g.trick_no == 1:
            if suit == HEARTS:
                return [FIRST_TRICK_HEARTS]
            if card == QUEEN_SPADES:
                return [FIRST_TRICK_QUEEN]
        return []

    def _score_lines(self, players: list[dict[str, Any]]) -> str:
        return "".join(f"{p['playerName']}: {p['score']}\n" for p in players)

    def _original_message(self, event: EventDict) -> str | None:
        """The progress message the original environment's ``render()`` prints after this event."""
        name, d = event["event_name"], event["data"]
        if name == "GameStart":
            return "\n*** Hearts Start ***\n"
        if name == "NewRound":
            self._shown_round += 1
            self._passing_shown = False
            return f"\n*** Start Round {self._shown_round} ***\n" + self._score_lines(d["players"])
        if name == "PassCards" and d["playerName"] == self.players[0]:
            self._passing_shown = True
            return "\n*** Pass Cards Start ***\n"
        if name == "ShowPlayerHand" and d["playerName"] == self.players[0] and self._passing_shown:
            return "\n*** Pass Cards Over ***\n"
        if name == "ShowTrickAction":
            played = {t["playerName"]: t["card"] for t in d["currentTrick"]}
            table = "".join(f"{p}: {played.get(p, 'None')}\n" for p in self.players)
            return f"\n\nCurrent table:\nTrick suit: {d['trickSuit']}\n{table}IsHeartsBroken: {d['IsHeartsBroken']}\n"
        if name == "ShowTrickEnd":
            return (
                f"\n*** Trick {d['trickNum']} ***\nWinner: {d['trickWinner']}\ncards: {d['cards']}\n"
                f"IsHeartsBroken: {d['IsHeartsBroken']}\n"
            )
        if name == "RoundEnd":
            return (
                f"\n*** Round {d['Round']} End ***\n"
                + self._score_lines(d["players"])
                + f"\nShootingMoon: {d['ShootingMoon']}\n"
            )
        if name == "GameOver":
            lines = self._score_lines(d["players"])
            return f"\n*** Game Over ***\n{lines}\nRound: {d['Round']}\nWinner: {d['Winner']}\n"
        return None

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
        if self._original:
            msg = self._original_message(event)
            if msg is not None:
                self._render_msg = msg
        return event

    def _start_round(self) -> None:
        assert self.game is not None
        self.round += 1
        self._queue.append(self._event("NewRound", True, {"players": self._scores()}))
        if self.game.phase is Phase.PASS:
            self._queue.append(self._pass_request(0))
        else:
            self._show_hands()

    def _hand(self, hand: int) -> list[str]:
        if self._original:
            return _cards(sorted(cards_in(hand), key=lambda c: (_ORIGINAL_SUIT_ORDER[c // 13], c % 13)))
        return _cards(hand)

    def _trick(self, seats: Sequence[int], cards: Sequence[int]) -> list[tuple[int, int]]:
        """The trick's (seat, card) pairs: in play order, or in seat order in compat mode."""
        pairs = list(zip(seats, cards))
        return sorted(pairs) if self._original else pairs

    def _pass_request(self, seat: int) -> EventDict:
        assert self.game is not None
        return self._event(
            "PassCards", False, {"playerName": self.players[seat], "hand": self._hand(self.game.hands[seat])}
        )

    def _show_hands(self) -> None:
        assert self.game is not None
        for s, p in enumerate(self.players):
            self._queue.append(
                self._event("ShowPlayerHand", False, {"playerName": p, "hand": self._hand(self.game.hands[s])})
            )

    def _trick_state(self) -> dict[str, Any]:
        g = self.game
        assert g is not None
        tc = g.trick_cards
        return {
            "trickNum": g.trick_no,
            "trickSuit": SUIT_LETTERS[tc[0] // 13].lower() if tc else "Unset",
            "currentTrick": [
                {"playerName": self.players[s], "card": format_card(c, Notation.GYM)}
                for s, c in self._trick(g.trick_seats, tc)
            ],
            "IsHeartsBroken": g.hearts_broken,
        }

    def _refill(self) -> None:
        """Queue what comes after the broadcasts: the next request, or the next round."""
        g = self.game
        assert g is not None
        if g.phase is Phase.PLAY:
            seat = g.turn
            data = {"playerName": self.players[seat], "hand": self._hand(g.hands[seat]), **self._trick_state()}
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
                        for s, c in self._trick(e.seats, e.cards)
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
                            "cards": _cards([c for _, c in self._trick(e.seats, e.cards)]),
                            "IsHeartsBroken": state["IsHeartsBroken"],
                        },
                    )
                )
            elif type(e) is DealEnded:
                for s, p in enumerate(self.players):
                    reward[p] = float(-e.points[s])
                self._round_reward = {p: int(e.points[s]) for s, p in enumerate(self.players)}
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
    else:  # the led suit (currentTrick is in seat order in compat mode, so not always trick[0]'s)
        suit = SUIT_LETTERS.index(data["trickSuit"].upper())
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


__all__ = [
    "COMPAT_MODES",
    "DEFAULT_PLAYERS",
    "ORIGINAL_RULES",
    "EventEnv",
    "HumanPlayer",
    "RandomPlayer",
    "StricterRefusal",
    "legal_cards",
]
