"""Turbo Hearts' wire format: engine events as Turbo JSON events, one viewer at a time, and
request bodies as actions (pure: no I/O, no clocks).

:class:`TurboTranslator` follows one game's unredacted event log (the table's spectator feed,
or a stored game rebuilt from its actions) and turns it into :class:`Message` s: the Turbo
events (``sit``, ``deal``, ``send_pass``, ``charge_status``, ``play_status`` ...) in the
reference server's order, each with what every seat sees (``Message.for_viewer``; spectators see
everything). The convenience events Turbo adds (``start_passing``, ``pass_status``,
``charge_status``, ``play_status`` with the next player's legal plays) need the game's state, so
the translator keeps a shadow :class:`~moonshot.core.engine.Game` that it advances with the action
behind each event.

Redaction follows the seed: the ``deal`` shows a seat only its own hand (others ``[]``); other
seats' passes are ``send_pass``/``recv_pass`` with ``cards: []`` (a later Turbo server sent
``hidden_send_pass``/``hidden_recv_pass``, which the seed-era web client ignores); under blind
charging others see ``blind_charge`` until ``reveal_charges``; ``play_status.legal_plays`` is
empty for everyone but the next player. ``charge_status`` marks done every seat with nothing left
to do, so the last one of a charging round has all four done (the seed's "who still needs to make
a charge"; the later server reset them all to not done). A seat's received pass is announced (``recv_pass``) as
soon as it and the seat passing to it have both passed, as Turbo's server does.

Each message has a stream position ``(version, sub)``: ``version`` is the table version of the
engine event behind it and ``sub`` counts the messages of that version (chat messages sent at
that version follow them). Its SSE id is ``"<version>"`` for ``sub == 0``, else
``"<version>.<sub>"``; :func:`parse_event_id` reads one back (``Last-Event-ID``).

Variants Turbo lacks use these shapes (documented in docs/turbo.md): ``sit`` gets ``"variant"``
for a non-Turbo game (its ``"rules"`` is then ``null``); a deal without passing says
``"pass": "keeper"`` (and ``"hold": true`` where the hand has no pass at all, unlike Turbo's
keeper hand); a Kierki ``deal`` adds ``"kind"`` (1..7) and ``"kind_name"``; Trend's
exposure is ``start_exposing``, ``expose {seat, cards}`` (``[]``: declined) and ``expose_status``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from moonshot.core.actions import AcceptClaim, Action, Charge, Claim, Expose, Pass, Play, RejectClaim
from moonshot.core.cards import CardError, CardSet, format_card, parse_card
from moonshot.core.engine import DealSpec, Game, Phase
from moonshot.core.events import (
    CardPlayed,
    Charged,
    ChargesRevealed,
    ChargingStarted,
    ClaimAnswered,
    ClaimMade,
    DealEnded,
    DealStarted,
    Event,
    Exposed,
    GameEnded,
    GameStarted,
    HandDealt,
    PassReceived,
    PassSent,
    TrickEnded,
    TrickStarted,
)
from moonshot.core.fairness import FORMAT
from moonshot.core.rules import ChargingOrder, PassDirection, Rules

SEATS: Final[tuple[str, str, str, str]] = ("north", "east", "south", "west")
SEAT_INDEX: Final[dict[str, int]] = {name: i for i, name in enumerate(SEATS)}
# Turbo's names for the charging orders (its JSON uses snake_case)
CHARGING_NAMES: Final[dict[ChargingOrder, str]] = {o: o.value.replace("-", "_") for o in ChargingOrder}
CHARGING_BY_NAME: Final[dict[str, ChargingOrder]] = {
    **{v: k for k, v in CHARGING_NAMES.items()},
    **{o.value: o for o in ChargingOrder},
}
PASS_NAMES: Final[dict[PassDirection, str]] = {
    PassDirection.LEFT: "left",
    PassDirection.RIGHT: "right",
    PassDirection.ACROSS: "across",
    PassDirection.KEEPER: "keeper",
    PassDirection.HOLD: "keeper",  # no passing: what Turbo's fourth hand says
}
MAX_CHAT: Final = 1000  # characters in one chat message


def turbo_cards(cards: CardSet | None) -> list[str]:
    """Cards in Turbo's order: spades, hearts, diamonds, clubs, each from the ace down."""
    if not cards:
        return []
    out = []
    c = cards.bit_length() - 1
    while c >= 0:
        if cards >> c & 1:
            out.append(format_card(c))
        c -= 1
    return out


def done_flags(mask: int) -> dict[str, bool]:
    return {f"{SEATS[s]}_done": bool(mask >> s & 1) for s in range(4)}


@dataclass(frozen=True, slots=True)
class Player:
    """Who sits in a chair, as ``sit`` reports it."""

    name: str
    kind: str = "human"  # "human" | "bot"
    algorithm: str | None = None

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"type": self.kind, "name": self.name}
        if self.kind == "bot":
            d["algorithm"] = self.algorithm or "random"
        return d


class Message:
    """One Turbo event in a game's stream, with what each seat sees of it."""

    __slots__ = ("_frames", "_json", "data", "sub", "version", "views")

    def __init__(
        self,
        version: int,
        sub: int,
        data: dict[str, Any],
        views: tuple[dict[str, Any] | None, ...] | None = None,
    ) -> None:
        self.version = version
        self.sub = sub
        self.data = data  # the unredacted event (the replay viewer, open spectators)
        # what seat s sees (index 4: a spectator, SPECTATOR); None: the same as everyone (no secret)
        self.views = views
        self._json: dict[int, str | None] = {}
        self._frames: dict[int, bytes | None] = {}

    @property
    def event_id(self) -> str:
        return str(self.version) if self.sub == 0 else f"{self.version}.{self.sub}"

    @property
    def position(self) -> tuple[int, int]:
        return (self.version, self.sub)

    def for_viewer(self, seat: int | None) -> dict[str, Any] | None:
        """The event as ``seat`` sees it: a chair 0-3, ``SPECTATOR`` (4: only what is public) or
        ``None`` (everything: a finished game, an open-hands table); ``None``: nothing to see."""
        if seat is None or self.views is None:
            return self.data
        return self.views[seat]

    def json_for(self, seat: int | None) -> str | None:
        """The JSON text for ``seat``, encoded once however many streams carry it."""
        key = -1 if seat is None or self.views is None else seat
        if key not in self._json:
            d = self.for_viewer(seat)
            self._json[key] = None if d is None else json.dumps(d, separators=(",", ":"))
        return self._json[key]

    def sse_frame(self, seat: int | None) -> bytes | None:
        """The whole server-sent-event frame (``id:`` and ``data:`` lines) for ``seat``, built
        once and shared by every stream that carries it (a thousand spectators, one encoding)."""
        key = -1 if seat is None or self.views is None else seat
        frame = self._frames.get(key, b"")
        if frame == b"":
            text = self.json_for(seat)
            frame = None if text is None else f"id: {self.event_id}\r\ndata: {text}\r\n\r\n".encode()
            self._frames[key] = frame
        return frame

    def __repr__(self) -> str:
        return f"Message({self.event_id}, {self.data!r})"


def parse_event_id(text: str | None) -> tuple[int, int] | None:
    """A stream position from an SSE id (``Last-Event-ID``); None when absent or unreadable."""
    if not text:
        return None
    head, _, tail = text.strip().partition(".")
    try:
        version = int(head)
        sub = int(tail) if tail else 0
    except ValueError:
        return None
    if version < 0 or sub < 0:
        return None
    return (version, sub)


class TranslationError(ValueError):
    """The events do not follow from the game (a gap, or an event the translator cannot follow)."""


def action_of(event: Event) -> Action | None:
    """The action whose first event is ``event`` (from an unredacted log); None if none is."""
    if isinstance(event, CardPlayed):
        return Play.of(event.seat, event.card)
    if isinstance(event, PassSent) and event.cards is not None:
        return Pass(event.seat, event.cards)
    if isinstance(event, Charged) and event.cards is not None:
        return Charge(event.seat, event.cards)
    if isinstance(event, Exposed):
        return Expose(event.seat, event.cards)
    if isinstance(event, ClaimMade):
        return Claim(event.seat)
    if isinstance(event, ClaimAnswered):
        cls = AcceptClaim if event.accepted else RejectClaim
        return cls(event.seat, event.claimer)
    return None


def _only(seat: int, data: dict[str, Any], others: dict[str, Any] | None) -> tuple[dict[str, Any] | None, ...]:
    """Views for the four chairs and the spectator (index SPECTATOR): ``data`` for ``seat`` only."""
    return tuple(data if s == seat else others for s in range(5))


class TurboTranslator:
    """Engine events of one game (unredacted, in order) to Turbo messages for every viewer."""

    def __init__(
        self,
        rules: Rules,
        seed: int,
        players: Sequence[Player],
        deals: Sequence[DealSpec] | None = None,
    ) -> None:
        if len(players) != 4:
            raise ValueError("a game has four players")
        self.rules = rules
        self.players = tuple(players)
        self.game = Game(rules, seed, deals)  # the shadow: the state behind each event
        self.next_version = 1
        self.messages: list[Message] = []
        self._sub = 0
        self._last_version = 0
        self._deal_hands: list[CardSet] = [0, 0, 0, 0]
        self._dealt = 0
        self._deal_start: DealStarted | None = None
        self._passed: list[CardSet | None] = [None] * 4
        self._pass_to: list[int] = [0, 0, 0, 0]
        self._recv_announced = 0
        self._phase_announced: tuple[int, Phase] | None = None
        self._expose_done = 0
        self._expose_asked = 0
        self._played_in_batch = False
        self._play_status: tuple[int, int, int] | None = None  # (deal, seat, mask) last announced
        # fields the host adds to ``sit`` (the web app's ``hints``: whether this game allows them)
        self.sit_fields: dict[str, Any] = {}

    # ------------------------------------------------------------ feeding
    def feed(self, events: Iterable[tuple[int, Event]]) -> list[Message]:
        """Translate ``(version, event)`` pairs; versions already seen are skipped."""
        out: list[Message] = []
        game = self.game
        for version, event in events:
            if version < self.next_version:
                continue
            if version > self.next_version:
                raise TranslationError(f"event {version} arrived before event {self.next_version}")
            if version > len(game.log):  # the first event of an action the shadow has not applied
                action = action_of(event)
                if action is None:
                    raise TranslationError(f"cannot follow event {version}: {event!r}")
                game.apply(action)
            elif type(game.log[version - 1]) is not type(event):
                raise TranslationError(f"event {version} is {event!r}, the game says {game.log[version - 1]!r}")
            self.next_version = version + 1
            self._event(version, event, out)
            if version == len(game.log):  # the action's events are all in: the new state shows
                self._status(version, out)
        return out

    def chat(self, name: str, message: str) -> Message:
        """A chat message at the current position (after every message of the last version)."""
        data = {"type": "chat", "name": name, "message": message}
        return self._emit(self.next_version - 1, data, None, [])

    def _emit(
        self,
        version: int,
        data: dict[str, Any],
        views: tuple[dict[str, Any] | None, ...] | None,
        out: list[Message],
    ) -> Message:
        if version != self._last_version:
            self._last_version = version
            self._sub = 0
        m = Message(version, self._sub, data, views)
        self._sub += 1
        self.messages.append(m)
        out.append(m)
        return m

    # ------------------------------------------------------------ one event
    def _event(self, v: int, e: Event, out: list[Message]) -> None:
        emit = self._emit
        if isinstance(e, GameStarted):
            d: dict[str, Any] = {"type": "sit"}
            for s in range(4):
                d[SEATS[s]] = self.players[s].to_json()
            order = self.rules.charging
            if self.rules.name.startswith("turbo") and order is not None:
                d["rules"] = CHARGING_NAMES[order]
            else:
                d["rules"] = CHARGING_NAMES[order] if order is not None else None
                d["variant"] = self.rules.name
            if e.commitment:
                d["deal_commitment"] = {"format": FORMAT, "commitment": e.commitment}
            d.update(self.sit_fields)
            emit(v, d, None, out)
        elif isinstance(e, DealStarted):
            self._deal_start = e
            self._dealt = 0
            self._deal_hands = [0, 0, 0, 0]
            self._passed = [None] * 4
            self._recv_announced = 0
            self._play_status = None
        elif isinstance(e, HandDealt):
            self._deal_hands[e.seat] = e.cards
            self._dealt |= 1 << e.seat
            if self._dealt == 0b1111:
                self._deal(v, out)
        elif isinstance(e, PassSent):
            self._pass_sent(v, e, out)
        elif isinstance(e, PassReceived):
            if not self._recv_announced >> e.seat & 1:
                self._recv(v, e.seat, e.cards or 0, out)
        elif isinstance(e, ChargingStarted):
            emit(v, {"type": "start_charging"}, None, out)
            nxt = SEATS[e.first_charger] if e.first_charger is not None else None
            emit(v, {"type": "charge_status", "next_charger": nxt, **done_flags(0)}, None, out)
        elif isinstance(e, Charged):
            charge = {"type": "charge", "seat": SEATS[e.seat], "cards": turbo_cards(e.cards)}
            if e.blind:
                blind = {"type": "blind_charge", "seat": SEATS[e.seat], "count": e.count}
                emit(v, charge, _only(e.seat, charge, blind), out)
            else:
                emit(v, charge, None, out)
            # a finished round has every seat done (the seed; a later Turbo server said none was)
            finished = e.done == 0b1111
            nxt = SEATS[e.next_charger] if e.next_charger is not None and not finished else None
            emit(v, {"type": "charge_status", "next_charger": nxt, **done_flags(e.done)}, None, out)
        elif isinstance(e, ChargesRevealed):
            d = {"type": "reveal_charges"}
            for s in range(4):
                d[SEATS[s]] = turbo_cards(e.charges[s])
            emit(v, d, None, out)
        elif isinstance(e, Exposed):
            self._expose_done |= 1 << e.seat
            emit(v, {"type": "expose", "seat": SEATS[e.seat], "cards": turbo_cards(e.cards)}, None, out)
            emit(v, {"type": "expose_status", **done_flags(self._expose_done | ~self._expose_asked & 15)}, None, out)
        elif isinstance(e, TrickStarted):
            emit(v, {"type": "start_trick", "leader": SEATS[e.leader]}, None, out)
        elif isinstance(e, CardPlayed):
            self._played_in_batch = True
            emit(v, {"type": "play", "seat": SEATS[e.seat], "card": format_card(e.card)}, None, out)
        elif isinstance(e, TrickEnded):
            emit(v, {"type": "end_trick", "winner": SEATS[e.winner]}, None, out)
        elif isinstance(e, ClaimMade):
            emit(v, {"type": "claim", "seat": SEATS[e.seat], "hand": turbo_cards(e.hand)}, None, out)
        elif isinstance(e, ClaimAnswered):
            kind = "accept_claim" if e.accepted else "reject_claim"
            emit(v, {"type": kind, "claimer": SEATS[e.claimer], "acceptor": SEATS[e.seat]}, None, out)
        elif isinstance(e, DealEnded):
            d = {"type": "hand_complete"}
            for s in range(4):
                d[f"{SEATS[s]}_score"] = e.points[s]
            emit(v, d, None, out)
        elif isinstance(e, GameEnded):
            d = {"type": "game_complete"}
            if e.seed is not None:
                d["deal_reveal"] = {"format": FORMAT, "seed": str(e.seed), "salt": e.salt}
            emit(v, d, None, out)
        # ChargingEnded, ClaimSucceeded and events added later carry nothing Turbo shows

    def _deal(self, v: int, out: list[Message]) -> None:
        start = self._deal_start
        assert start is not None
        full: dict[str, Any] = {"type": "deal"}
        for s in range(4):
            full[SEATS[s]] = turbo_cards(self._deal_hands[s])
        full["pass"] = PASS_NAMES[start.direction]
        if start.direction is PassDirection.HOLD:
            full["hold"] = True  # no passing and no keeper pile: not Turbo's keeper hand
        if start.deal_kind:
            full["kind"] = start.deal_kind
            full["kind_name"] = self.rules.scoring_for(start.deal_kind).name
        views = []
        for viewer in range(5):  # the four chairs, and the spectator (SPECTATOR) who sees no hand
            mine = dict(full)
            for s in range(4):
                if s != viewer:
                    mine[SEATS[s]] = []
            views.append(mine)
        off = start.direction.offset
        self._pass_to = [(s + off) % 4 for s in range(4)]
        self._emit(v, full, tuple(views), out)

    def _pass_sent(self, v: int, e: PassSent, out: list[Message]) -> None:
        cards = e.cards or 0
        self._passed[e.seat] = cards
        send = {"type": "send_pass", "from": SEATS[e.seat], "cards": turbo_cards(cards)}
        hidden = {"type": "send_pass", "from": SEATS[e.seat], "cards": []}  # the seed's redaction
        self._emit(v, send, _only(e.seat, send, hidden), out)
        done = sum(1 << s for s in range(4) if self._passed[s] is not None)
        self._emit(v, {"type": "pass_status", **done_flags(done)}, None, out)
        if e.to == e.seat:
            return  # the keeper pile: what comes back is known once all four have passed
        # a seat learns its incoming pass once it and its passer have both passed
        for r in (e.seat, e.to):
            src = self._pass_to.index(r)
            if self._passed[r] is not None and self._passed[src] is not None:
                self._recv(v, r, self._passed[src] or 0, out)

    def _recv(self, v: int, seat: int, cards: CardSet, out: list[Message]) -> None:
        if self._recv_announced >> seat & 1:
            return
        self._recv_announced |= 1 << seat
        recv = {"type": "recv_pass", "to": SEATS[seat], "cards": turbo_cards(cards)}
        hidden = {"type": "recv_pass", "to": SEATS[seat], "cards": []}
        self._emit(v, recv, _only(seat, recv, hidden), out)

    # ------------------------------------------------------------ state after an action
    def _status(self, v: int, out: list[Message]) -> None:
        g = self.game
        played, self._played_in_batch = self._played_in_batch, False
        phase = g.phase
        key = (g.deal_index, phase)
        if phase in (Phase.PASS, Phase.PILE) and self._phase_announced != key:
            self._phase_announced = key
            self._passed = [None] * 4
            self._recv_announced = 0
            self._emit(v, {"type": "start_passing"}, None, out)
            self._emit(v, {"type": "pass_status", **done_flags(0)}, None, out)
        elif phase is Phase.EXPOSE and self._phase_announced != key:
            self._phase_announced = key
            self._expose_asked = g.expose_pending
            self._expose_done = 0
            self._emit(v, {"type": "start_exposing"}, None, out)
            self._emit(v, {"type": "expose_status", **done_flags(~self._expose_asked & 15)}, None, out)
        elif phase is Phase.PLAY:
            seat = g.turn
            mask = g.legal_play_mask(seat)
            now = (g.deal_index, seat, mask)
            if mask and (played or now != self._play_status):
                self._play_status = now
                status = {"type": "play_status", "next_player": SEATS[seat], "legal_plays": turbo_cards(mask)}
                hidden = {"type": "play_status", "next_player": SEATS[seat], "legal_plays": []}
                self._emit(v, status, _only(seat, status, hidden), out)


def translate_log(
    rules: Rules,
    seed: int,
    players: Sequence[Player],
    log: Sequence[Event],
    deals: Sequence[DealSpec] | None = None,
) -> list[Message]:
    """A whole (stored) game's Turbo stream, from its unredacted event log."""
    t = TurboTranslator(rules, seed, players, deals)
    return t.feed((i + 1, e) for i, e in enumerate(log))


# ---------------------------------------------------------------- requests
class RequestError(ValueError):
    """A request the server refuses: ``status`` is the HTTP status, the text says why (in
    English, for programs and logs); ``code`` and ``params`` say it again for the web app, which
    shows the catalogue's ``error.<code>`` with those arguments in its page's language."""

    def __init__(
        self, status: int, message: str, code: str | None = None, params: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.params = dict(params or {})


def parse_json(raw: bytes) -> dict[str, Any]:
    """A request body: a JSON object, or a 400 saying what is wrong with it."""
    if not raw.strip():
        raise RequestError(400, "the request needs a JSON body", "bad_request")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as e:
        raise RequestError(400, f"malformed JSON: {e}", "bad_request") from e
    if not isinstance(data, dict):
        raise RequestError(400, f"the body must be a JSON object, not {type(data).__name__}", "bad_request")
    # a lone surrogate comes from an escape (a backslash-u D800) or from its UTF-8 form (ED A0..BF ..),
    # which json.loads lets through
    if b"\\u" in raw or b"\xed" in raw:
        try:
            json.dumps(data, ensure_ascii=False).encode()
        except UnicodeEncodeError:
            raise RequestError(
                400, "a string in the body is not valid Unicode (a lone surrogate)", "bad_request"
            ) from None
    return data


def field_str(body: dict[str, Any], key: str, *, required: bool = True, max_len: int = 200) -> str | None:
    value = body.get(key)
    if value is None:
        if required:
            raise RequestError(400, f"missing field {key!r}", "missing_field", {"field": key})
        return None
    if not isinstance(value, str):
        raise RequestError(
            400, f"field {key!r} must be a string, not {type(value).__name__}", "bad_field", {"field": key}
        )
    if len(value) > max_len:
        raise RequestError(
            400, f"field {key!r} is longer than {max_len} characters", "field_too_long", {"field": key, "max": max_len}
        )
    return value


def field_int(body: dict[str, Any], key: str) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(400, f"field {key!r} must be an integer", "bad_field", {"field": key})
    if not 0 <= value < 1 << 62:
        raise RequestError(400, f"field {key!r} is out of range", "bad_field", {"field": key})
    number: int = value
    return number


def parse_card_field(body: dict[str, Any], key: str = "card") -> int:
    text = field_str(body, key, max_len=8)
    assert text is not None
    try:
        return parse_card(text)
    except CardError as e:
        raise RequestError(400, f"bad card {text!r}: {e}", "bad_card", {"card": text}) from e


def parse_cards_field(body: dict[str, Any], key: str = "cards") -> CardSet:
    value = body.get(key)
    if value is None:
        raise RequestError(400, f"missing field {key!r}", "missing_field", {"field": key})
    if not isinstance(value, list) or len(value) > 52:
        raise RequestError(400, f"field {key!r} must be a list of cards", "bad_field", {"field": key})
    cards = 0
    for item in value:
        if not isinstance(item, str):
            raise RequestError(
                400, f'field {key!r} must be a list of card strings like "QS"', "bad_field", {"field": key}
            )
        try:
            c = parse_card(item)
        except CardError as e:
            raise RequestError(400, f"bad card {item!r}: {e}", "bad_card", {"card": str(item)}) from e
        if cards >> c & 1:
            raise RequestError(400, f"card {item} is listed twice", "card_twice", {"card": item})
        cards |= 1 << c
    return cards


def parse_seat_field(body: dict[str, Any], key: str) -> int:
    text = field_str(body, key, max_len=16)
    assert text is not None
    seat = SEAT_INDEX.get(text.lower())
    if seat is None:
        raise RequestError(400, f"field {key!r} must be one of {', '.join(SEATS)}", "bad_field", {"field": key})
    return seat


def parse_charging(text: str | None) -> ChargingOrder:
    """Turbo's charging rules by name (``classic``, ``blind``, ``bridge``, ``chain``, ``blind_bridge``...)."""
    if text is None:
        return ChargingOrder.CLASSIC
    order = CHARGING_BY_NAME.get(text.strip().lower())
    if order is None:
        names = ", ".join(CHARGING_NAMES[o] for o in ChargingOrder)
        raise RequestError(400, f"unknown charging rules {text!r}; known: {names}", "unknown_rules", {"rules": text})
    return order


def parse_chat(body: dict[str, Any]) -> str:
    text = field_str(body, "message", max_len=MAX_CHAT)
    assert text is not None
    if not text.strip():
        raise RequestError(400, "an empty chat message", "empty_chat")
    return text


# The game endpoints, each a body → action for the caller's seat.
GAME_ACTIONS: Final = ("pass", "charge", "expose", "play", "claim", "accept_claim", "reject_claim")


def action_from_request(kind: str, seat: int, body: dict[str, Any]) -> Action:
    """The action a POST /game/<kind> body asks for, for ``seat``; RequestError(400) if unreadable."""
    if kind == "pass":
        return Pass(seat, parse_cards_field(body))
    if kind == "charge":
        return Charge(seat, parse_cards_field(body))
    if kind == "expose":
        return Expose(seat, parse_cards_field(body))
    if kind == "play":
        return Play.of(seat, parse_card_field(body))
    if kind == "claim":
        return Claim(seat)
    if kind == "accept_claim":
        return AcceptClaim(seat, parse_seat_field(body, "claimer"))
    if kind == "reject_claim":
        return RejectClaim(seat, parse_seat_field(body, "claimer"))
    raise RequestError(404, f"no game action {kind!r}", "bad_request")


__all__ = [
    "CHARGING_NAMES",
    "GAME_ACTIONS",
    "SEATS",
    "Message",
    "Player",
    "RequestError",
    "TranslationError",
    "TurboTranslator",
    "action_from_request",
    "action_of",
    "done_flags",
    "field_int",
    "field_str",
    "parse_card_field",
    "parse_cards_field",
    "parse_charging",
    "parse_chat",
    "parse_event_id",
    "parse_json",
    "parse_seat_field",
    "translate_log",
    "turbo_cards",
]
