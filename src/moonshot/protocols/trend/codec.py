"""The Trend Hearts protocol (seed 000) without I/O: client frames in, engine events out as Trend events.

Every frame is ``{"eventName": ..., "data": {...}}`` over a WebSocket.

* :func:`parse_frame` turns one incoming text frame into a typed client event (``join``,
  ``pass_my_cards``, ``expose_my_cards``, ``pick_card``, ``stop_game``) or a :class:`Malformed`
  saying what is wrong with it. It is liberal: ``playerNumber`` and the deal/round numbers may be
  ints or numeric strings, cards ``"TH"`` or ``"10H"``, unknown fields are ignored.
* :class:`TrendCodec` is one chair's side of one game. It is fed the engine's events *already
  redacted for that chair* (``event.for_viewer(seat)``), so it can only ever know what the chair
  may know: its own hand, initial cards and pass, and the public play. From that it builds the
  Trend server events with every field of the seed's player table, players in N-E-S-W order,
  deal and round numbers from 1. Private fields (``cards``, ``pickedCards``, ``receivedCards``,
  ``initialCards``) appear only in the chair's own entry; ``deal_end`` carries the last three
  for every player, as real bots read them there, empty for the others.
* :meth:`TrendCodec.request` builds ``pass_cards`` / ``expose_cards`` / ``your_turn`` with
  ``candidateCards``; :meth:`TrendCodec.answer` turns a reply into an engine action, a
  :class:`Dropped` (wrong ``dealNumber``/``roundNumber``, or not an answer to what is asked: the
  seed drops those) or a :class:`Wrong` (a card not among the candidates: the server plays a
  random one and counts an error).
* :func:`encode_frame` writes a frame as JSON, byte for byte what ``json`` writes (compact
  separators, ASCII escapes). A codec given an :class:`EntryCache` (``moonshot serve`` shares one
  between all its chairs) builds each player entry once and keeps its JSON with it: a table's four
  chairs, and event after event, reuse the same entries, so a ``turn_end`` costs one or two new
  entries instead of sixteen dicts and four full encodings.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any, Final

from moonshot.core.actions import Action, Expose, Pass, Play
from moonshot.core.cards import TEN_CLUBS, CardError, CardSet, format_card, format_cards, parse_card
from moonshot.core.engine import Phase
from moonshot.core.events import (
    CardPlayed,
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
from moonshot.core.rules import PassDirection, Rules, score_deal
from moonshot.core.variants import TREND

MAX_FRAME: Final = 64 * 1024  # bytes; a longer frame closes the socket (1009); Trend's largest is ~2 KB
DEFAULT_PORT: Final = 8080
VERSION: Final = "1.0.0-alpha.4"  # the SDK release the seed documents

ONLINE: Final = 0
OFFLINE: Final = 1
TIMED_OUT: Final = 2

CLIENT_EVENTS: Final = ("join", "pass_my_cards", "expose_my_cards", "pick_card", "stop_game")


# ------------------------------------------------------------------ client events
@dataclass(frozen=True, slots=True)
class Join:
    number: int  # 1..4
    raw_number: int | str  # as sent: echoed back in every playerNumber
    name: str
    token: str
    lobby_code: str | None = None  # moonshot extension for `moonshot serve`


@dataclass(frozen=True, slots=True)
class PassMyCards:
    deal_number: int | None
    cards: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ExposeMyCards:
    deal_number: int | None
    cards: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class PickCard:
    deal_number: int | None
    round_number: int | None
    card: int


@dataclass(frozen=True, slots=True)
class StopGame:
    """Some SDK versions send it after ``game_end``: accepted quietly."""


@dataclass(frozen=True, slots=True)
class Malformed:
    """A frame that cannot be acted on. ``event_name`` is set when it named a reply event, so
    the chair's pending decision can be answered for it (a wrong answer)."""

    reason: str
    event_name: str | None = None


ClientEvent = Join | PassMyCards | ExposeMyCards | PickCard | StopGame | Malformed


def _number(v: object) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str):
        t = v.strip()
        if t.isdigit() and len(t) < 10:
            return int(t)
    return None


def _cards(v: object, what: str) -> tuple[int, ...] | str:
    if not isinstance(v, list) or len(v) > 52:
        return f"{what} must be a list of cards like ['TH', 'QS']"
    out = []
    for c in v:
        if not isinstance(c, str):
            return f"{what} must be a list of strings like 'TH', got {c!r}"
        try:
            out.append(parse_card(c))
        except CardError as e:
            return str(e)
    return tuple(out)


def parse_frame(frame: str | bytes) -> ClientEvent:
    """One WebSocket frame from a client, as a typed event or what is wrong with it."""
    if len(frame) > MAX_FRAME:
        return Malformed(f"frame longer than {MAX_FRAME} bytes")
    try:
        obj = json.loads(frame)
    except (ValueError, RecursionError) as e:
        return Malformed(f"not JSON: {e}")
    if not isinstance(obj, dict):
        return Malformed("a frame must be a JSON object {eventName, data}")
    name = obj.get("eventName")
    if not isinstance(name, str):
        return Malformed("missing eventName")
    if name not in CLIENT_EVENTS:
        return Malformed(f"unknown eventName {name[:40]!r} (known: {', '.join(CLIENT_EVENTS)})")
    data = obj.get("data", {})
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return Malformed("data must be a JSON object", name)
    if name == "stop_game":
        return StopGame()
    if name == "join":
        raw = data.get("playerNumber")
        number = _number(raw)
        if number is None or not 1 <= number <= 4 or not isinstance(raw, int | str):
            return Malformed(f"playerNumber must be 1, 2, 3 or 4 (int or string), got {raw!r}"[:200])
        pname = data.get("playerName")
        if not isinstance(pname, str) or not pname.strip():
            return Malformed("playerName must be a non-empty string")
        token = data.get("token", "")
        if isinstance(token, int) and not isinstance(token, bool):
            token = str(token)
        if not isinstance(token, str):
            return Malformed("token must be a string")
        code = data.get("lobbyCode")
        lobby_code = (
            str(code)[:64] if isinstance(code, str | int) and not isinstance(code, bool) and code != "" else None
        )
        return Join(number, raw, pname[:64], token[:256], lobby_code)
    deal = _number(data.get("dealNumber"))
    if name == "pick_card":
        card = data.get("turnCard")
        if not isinstance(card, str):
            return Malformed(f"turnCard must be a card like 'TH', got {card!r}"[:200], name)
        try:
            c = parse_card(card)
        except CardError as e:
            return Malformed(str(e)[:200], name)
        return PickCard(deal, _number(data.get("roundNumber")), c)
    cards = _cards(data.get("cards"), "cards")
    if isinstance(cards, str):
        return Malformed(cards[:200], name)
    if name == "pass_my_cards":
        return PassMyCards(deal, cards)
    return ExposeMyCards(deal, cards)


# ------------------------------------------------------------------ answers
@dataclass(frozen=True, slots=True)
class Dropped:
    """Not an answer to the open request (wrong deal/round number, wrong kind): ignored."""

    reason: str


@dataclass(frozen=True, slots=True)
class Wrong:
    """An answer to the open request with wrong values: the server plays for the chair."""

    reason: str


Answer = Action | Dropped | Wrong


# ------------------------------------------------------------------ server events
@dataclass(frozen=True, slots=True)
class PlayerInfo:
    """A player as the protocol names it: the ``playerNumber`` as it was sent, and the name."""

    number: int | str
    name: str


def frame(event_name: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"eventName": event_name, "data": data}


def error_frame(message: str) -> dict[str, Any]:
    """moonshot's own error event (a refused join); SDK bots ignore event names they do not know."""
    return frame("error", {"message": message})


def peer_list(players: Sequence[PlayerInfo | None], status: Sequence[int] | None = None) -> dict[str, Any]:
    """``new_peer`` / ``new_game`` data: the players seated so far, in N-E-S-W order."""
    out = []
    for s, p in enumerate(players):
        if p is not None:
            out.append(
                {"playerNumber": p.number, "playerName": p.name, "status": status[s] if status is not None else ONLINE}
            )
    return {"players": out}


def new_peer(players: Sequence[PlayerInfo | None], status: Sequence[int] | None = None) -> dict[str, Any]:
    return frame("new_peer", peer_list(players, status))


_NAMES: Final[tuple[str, ...]] = tuple(format_card(c) for c in range(52))


def _cards_out(cards: CardSet) -> list[str]:
    """A set's cards as Trend strings, lowest first (a table lookup: this is the codec's hot path)."""
    out = []
    while cards:
        low = cards & -cards
        out.append(_NAMES[low.bit_length() - 1])
        cards ^= low
    return out


_JSON: Final = json.JSONEncoder(separators=(",", ":"))
_STRING: Final = encode_basestring_ascii  # what json writes for a string (ensure_ascii)
# json's C encoder made once (JSONEncoder.encode makes one on every call): the same bytes
_C_ENCODER: Final[Any] = (
    None
    if c_make_encoder is None
    else c_make_encoder(None, _JSON.default, encode_basestring_ascii, None, ":", ",", False, False, True)
)


def _encode(value: Any) -> str:
    """``value`` as compact JSON, what ``json.JSONEncoder(separators=(",", ":")).encode`` writes."""
    if _C_ENCODER is None:
        return _JSON.encode(value)
    return "".join(_C_ENCODER(value, 0))


class Entry(dict[str, Any]):
    """A player entry built once and shared (by chairs of a table, by events in a row), with its
    JSON kept beside it. It is a plain dict to read, and refuses to be changed."""

    __slots__ = ("json",)

    def __init__(self, fields: dict[str, Any]) -> None:
        super().__init__(fields)
        self.json: str = _encode(fields)

    def _frozen(self, *args: object, **kwargs: object) -> None:
        raise TypeError("a shared Trend player entry cannot be changed: copy it with dict(entry)")

    __setitem__ = __delitem__ = update = pop = popitem = clear = setdefault = _frozen  # type: ignore[assignment]


class EntryCache:
    """Player entries by everything they are made of (so a hit is always the same bytes). Only
    the entries of the last few events are ever found again, so it keeps two generations of at
    most ``size`` entries: when the newer one is full it becomes the older one (an entry found
    there moves back), and what was older is dropped."""

    def __init__(self, size: int = 16) -> None:
        self.size = size
        self.entries: dict[tuple[Any, ...], Entry] = {}  # the newer generation
        self.older: dict[tuple[Any, ...], Entry] = {}
        self.misses = 0  # entries built

    def get(self, key: tuple[Any, ...]) -> Entry | None:
        e = self.entries.get(key)
        if e is None:
            e = self.older.get(key)
            if e is not None:
                self._add(key, e)
        return e

    def put(self, key: tuple[Any, ...], entry: Entry) -> None:
        """A new entry (a lookup that missed)."""
        self.misses += 1
        self._add(key, entry)

    def _add(self, key: tuple[Any, ...], entry: Entry) -> None:
        if len(self.entries) >= self.size:
            self.older = self.entries
            self.entries = {}
        self.entries[key] = entry


_KEYS: Final = {
    k: _STRING(k) + ":"
    for k in (
        "dealNumber",
        "roundNumber",
        "players",
        "self",
        "roundPlayers",
        "roundPlayer",
        "turnPlayer",
        "turnCard",
        "serverRandom",
        "receiver",
        "receivedCards",
        "sender",
    )
}


def _value_json(v: Any) -> str:
    t = type(v)
    if t is Entry:
        return str(v.json)
    if t is int:
        return int.__repr__(v)
    if t is str:
        return _STRING(v)
    if t is bool:
        return "true" if v else "false"
    if t is list and v:
        t0 = type(v[0])
        if t0 is Entry and all(type(x) is Entry for x in v):
            return "[" + ",".join([x.json for x in v]) + "]"
        if t0 is str and all(type(x) is str for x in v):
            return "[" + ",".join([_STRING(x) for x in v]) + "]"
    return _encode(v)


def encode_frame(message: dict[str, Any]) -> str:
    """A frame as JSON, the same bytes as ``json.JSONEncoder(separators=(",", ":")).encode``;
    the shared :class:`Entry` s in it are not encoded again."""
    data = message.get("data")
    if type(data) is not dict or len(message) != 2 or "eventName" not in message:
        return _encode(message)
    out = []
    for k, v in data.items():
        if type(k) is not str:
            return _encode(message)  # json's own rules for keys that are not strings
        out.append((_KEYS.get(k) or _STRING(k) + ":") + _value_json(v))
    body = "{" + ",".join(out) + "}"
    name = _value_json(message["eventName"])
    if next(iter(message)) == "eventName":
        return '{"eventName":' + name + ',"data":' + body + "}"
    return '{"data":' + body + ',"eventName":' + name + "}"


class TrendCodec:
    """One chair's view of one Trend game, as Trend events.

    Feed :meth:`events` the chair's redacted events in order; it returns the frames to send.
    ``status`` and ``counts`` (timeouts, errors) per chair come from the table at that moment.
    """

    def __init__(
        self, seat: int, players: Sequence[PlayerInfo], rules: Rules = TREND, cache: EntryCache | None = None
    ) -> None:
        if len(players) != 4:
            raise ValueError("a Trend game has four players")
        self.seat = seat
        self.cache = cache  # None: every entry is a new dict
        self.players = tuple(players)
        self.names = tuple(p.name for p in players)
        self.rules = rules
        self.status: tuple[int, ...] = (ONLINE,) * 4
        self.counts: tuple[tuple[int, int], ...] = ((0, 0),) * 4  # (timeouts, errors)
        self.game_scores = [0, 0, 0, 0]
        self.history: list[list[dict[str, Any]]] = [[], [], [], []]  # per player: its deals
        self.deal_number = 0
        self.round_number = 0
        self.candidates: CardSet = 0
        self.asked: Phase | None = None
        # With a cache: each chair's entry is remembered with the version it was made at; a
        # version is bumped wherever something the entry is made of changes (so a turn_end
        # finds three of its four entries without even building their cache keys).
        self._ver = [0, 0, 0, 0]
        self._memo: list[tuple[int, dict[str, Any]] | None] = [None, None, None, None]
        self._new_deal(0, PassDirection.HOLD)

    # ------------------------------------------------------------ state
    def _bump_all(self) -> None:
        v = self._ver
        v[0] += 1
        v[1] += 1
        v[2] += 1
        v[3] += 1

    def _new_deal(self, deal_number: int, direction: PassDirection) -> None:
        self._bump_all()
        self.deal_number = deal_number
        self.round_number = 0
        self.direction = direction
        self.hand: CardSet = 0
        self.initial: CardSet = 0
        self.picked: CardSet | None = None
        self.received: CardSet | None = None
        self.received_count = 0
        self.counts_in_hand = [0, 0, 0, 0]
        self.score_cards: list[list[int]] = [[], [], [], []]
        self.taken = [0, 0, 0, 0]
        self.exposed = [0, 0, 0, 0]
        self.leader = 0
        self.round_cards: dict[int, int] = {}
        self.round_random = [False, False, False, False]
        self._scores: tuple[int, ...] | None = None  # deal_scores, until a trick or an exposure
        self.passing = direction is not PassDirection.HOLD and direction is not PassDirection.KEEPER
        self._sender_names = [self.names[self._from(s)] for s in range(4)]

    def _from(self, s: int) -> int:
        return (s - self.direction.offset) % 4

    def _to(self, s: int) -> int:
        return (s + self.direction.offset) % 4

    def deal_scores(self) -> tuple[int, ...]:
        """The running deal score of each player (negative; exposure and TC applied)."""
        if self._scores is None:
            doubled = self.exposed[0] | self.exposed[1] | self.exposed[2] | self.exposed[3]
            self._scores, _ = score_deal(self.rules, 0, self.taken, [0, 0, 0, 0], [0, 0, 0, 0], doubled)
        return self._scores

    def round_players(self) -> list[str]:
        return [self.names[(self.leader + k) % 4] for k in range(4)]

    # ------------------------------------------------------------ player entries
    def _entry(self, s: int, scores: Sequence[int], *, private: bool = True, deal_end: bool = False) -> dict[str, Any]:
        cache = self.cache
        if cache is None or deal_end or not private:
            return self._new_entry(s, scores, private=private, deal_end=deal_end)
        memo = self._memo[s]
        version = self._ver[s]
        if memo is not None and memo[0] == version:
            return memo[1]
        p = self.players[s]
        # everything _new_entry reads for a (private, not deal_end) entry: equal keys, equal bytes
        key = (
            p.number,
            p.name,
            self.game_scores[s],
            scores[s],
            self.counts_in_hand[s],
            tuple(self.score_cards[s]),
            self.exposed[s],
            (self.hand, self.picked, self.received) if s == self.seat else None,
            self._sender_names[s] if self.passing and self.received_count else None,
            self.round_cards.get(s),
            self.round_random[s],
            self.counts[s],
            self.status[s],
        )
        e = cache.entries.get(key)  # the common case without a call; cache.get looks further
        if e is None:
            e = cache.get(key)
            if e is None:
                e = Entry(self._new_entry(s, scores))
                cache.put(key, e)
        self._memo[s] = (version, e)
        return e

    def _new_entry(
        self, s: int, scores: Sequence[int], *, private: bool = True, deal_end: bool = False
    ) -> dict[str, Any]:
        p = self.players[s]
        mine = s == self.seat
        e: dict[str, Any] = {
            "playerNumber": p.number,
            "playerName": p.name,
            "gameScore": self.game_scores[s],
            "dealScore": scores[s],
        }
        if mine and private:
            e["cards"] = _cards_out(self.hand)
        e["cardsCount"] = self.counts_in_hand[s]
        e["scoreCards"] = [_NAMES[c] for c in self.score_cards[s]]
        e["exposedCards"] = _cards_out(self.exposed[s])
        if mine and private and self.picked is not None:
            e["pickedCards"] = _cards_out(self.picked)
        if mine and private and self.received is not None:
            e["receivedCards"] = _cards_out(self.received)
        if self.passing and self.received_count:
            e["receivedFrom"] = self._sender_names[s]
        if s in self.round_cards:
            e["roundCard"] = format_card(self.round_cards[s])
        e["serverRandom"] = self.round_random[s]
        e["timeoutCount"], e["errorCount"] = self.counts[s]
        e["status"] = self.status[s]
        if deal_end:
            # real bots read these three for all four players at deal_end; the others' stay private
            e["pickedCards"] = _cards_out(self.picked or 0) if mine else []
            e["receivedCards"] = _cards_out(self.received or 0) if mine else []
            e["initialCards"] = _cards_out(self.initial) if mine else []
            if self.passing:
                e["receivedFrom"] = self._sender_names[s]
        return e

    def _players(self, **options: bool) -> list[dict[str, Any]]:
        scores = self.deal_scores()
        return [self._entry(s, scores, **options) for s in range(4)]

    def _self(self, candidates: CardSet | None = None) -> dict[str, Any]:
        e = self._entry(self.seat, self.deal_scores())
        if candidates is not None:
            e = dict(e)  # a shared entry stays as it is
            e["candidateCards"] = _cards_out(candidates)
        return e

    # ------------------------------------------------------------ events -> frames
    def events(
        self,
        events: Sequence[tuple[Event, bool]],
        status: Sequence[int] | None = None,
        counts: Sequence[tuple[int, int]] | None = None,
    ) -> list[dict[str, Any]]:
        """Frames for the chair's redacted events (each with: the server chose the action)."""
        if status is not None:
            st = tuple(status)
            if st != self.status:
                for s in range(4):
                    if st[s] != self.status[s]:
                        self._ver[s] += 1
                self.status = st
        if counts is not None:
            cs = tuple(counts)
            if cs != self.counts:
                for s in range(4):
                    if cs[s] != self.counts[s]:
                        self._ver[s] += 1
                self.counts = cs
        out: list[dict[str, Any]] = []
        for e, forced in events:
            if isinstance(e, PassReceived):
                out.extend(self._received(e))
                continue
            m = self._event(e, forced)
            if m is not None:
                out.append(m)
        return out

    def _event(self, e: Event, forced: bool) -> dict[str, Any] | None:
        if isinstance(e, CardPlayed):
            return self._played(e, forced)
        if isinstance(e, TrickStarted):
            self._bump_all()
            self.round_number = e.trick
            self.leader = e.leader
            self.round_cards = {}
            self.round_random = [False, False, False, False]
            return frame(
                "new_round",
                {
                    "dealNumber": self.deal_number,
                    "roundNumber": self.round_number,
                    "players": self._players(),
                    "roundPlayers": self.round_players(),
                },
            )
        if isinstance(e, TrickEnded):
            self._bump_all()
            self._scores = None
            for c in e.cards:
                self.taken[e.winner] |= 1 << c
                if self.rules.scoring_for(0).card_points[c] or c in self._multiplier_cards():
                    self.score_cards[e.winner].append(c)
            return frame(
                "round_end",
                {
                    "dealNumber": self.deal_number,
                    "roundNumber": self.round_number,
                    "players": self._players(),
                    "roundPlayers": self.round_players(),
                    "roundPlayer": self.names[e.winner],
                },
            )
        if isinstance(e, GameStarted):
            data = peer_list(self.players, self.status)
            if e.commitment:  # moonshot's commitment to the deals (docs/security.md)
                data["dealCommitment"] = {"format": FORMAT, "commitment": e.commitment}
            return frame("new_game", data)
        if isinstance(e, DealStarted):
            self._new_deal(e.deal + 1, e.direction)
            self.counts_in_hand = [13, 13, 13, 13]
            self._bump_all()
            return None
        if isinstance(e, HandDealt):
            if e.seat != self.seat:
                return None
            self.hand = self.initial = e.cards
            self._ver[self.seat] += 1
            return frame("new_deal", {"dealNumber": self.deal_number, "self": self._self(), "players": self._players()})
        if isinstance(e, PassSent):
            if e.seat == self.seat and e.cards is not None:
                self.picked = e.cards
                self.hand &= ~e.cards
                self._ver[self.seat] += 1
            return None
        if isinstance(e, Exposed):
            self.exposed[e.seat] |= e.cards
            self._scores = None
            self._bump_all()
            return frame(
                "expose_cards_end",
                {"dealNumber": self.deal_number, "players": self._players()},
            )
        if isinstance(e, DealEnded):
            return self._deal_end(e)
        if isinstance(e, GameEnded):
            return self._game_end(e)
        return None

    def _multiplier_cards(self) -> tuple[int, ...]:
        return (TEN_CLUBS,) if self.rules.ten_of_clubs_multiplier != 1 else ()  # TC doubles the deal

    def _played(self, e: CardPlayed, forced: bool) -> dict[str, Any]:
        self._ver[e.seat] += 1
        if e.seat == self.seat:
            self.hand &= ~(1 << e.card)
        self.counts_in_hand[e.seat] -= 1
        self.round_cards[e.seat] = e.card
        self.round_random[e.seat] = forced
        return frame(
            "turn_end",
            {
                "dealNumber": self.deal_number,
                "roundNumber": self.round_number,
                "players": self._players(),
                "roundPlayers": self.round_players(),
                "turnPlayer": self.names[e.seat],
                "turnCard": format_card(e.card),
                "serverRandom": forced,
            },
        )

    def _received(self, e: PassReceived) -> list[dict[str, Any]]:
        self.received_count += 1
        self._bump_all()
        out: list[dict[str, Any]] = []
        if e.seat == self.seat and e.cards is not None:
            self.received = e.cards
            self.hand |= e.cards
            out.append(
                frame(
                    "receive_opponent_cards",
                    {
                        "dealNumber": self.deal_number,
                        "self": self._self(),
                        "players": self._players(),
                        "receivedCards": _cards_out(e.cards),
                        "sender": self.names[e.source],
                    },
                )
            )
        if self.received_count == 4:
            out.append(frame("pass_cards_end", {"dealNumber": self.deal_number, "players": self._players()}))
        return out

    def _deal_end(self, e: DealEnded) -> dict[str, Any]:
        self._bump_all()
        for s in range(4):
            self.game_scores[s] = e.totals[s]
        players = []
        for s in range(4):
            entry = self._entry(s, e.points, private=False, deal_end=True)
            entry["shootingTheMoon"] = e.moon == s
            players.append(entry)
            self.history[s].append(
                {
                    "dealNumber": self.deal_number,
                    "score": e.points[s],
                    "exposedCards": _cards_out(self.exposed[s]),
                    "shootingTheMoon": e.moon == s,
                }
            )
        return frame("deal_end", {"dealNumber": self.deal_number, "roundNumber": self.round_number, "players": players})

    def _game_end(self, e: GameEnded) -> dict[str, Any]:
        scores = list(e.totals)
        players = []
        for s in range(4):
            p = self.players[s]
            players.append(
                {
                    "playerNumber": p.number,
                    "playerName": p.name,
                    "gameScore": scores[s],
                    "timeoutCount": self.counts[s][0],
                    "errorCount": self.counts[s][1],
                    "status": self.status[s],
                    "rank": 1 + sum(1 for x in scores if x > scores[s]),
                    "deals": list(self.history[s]),
                }
            )
        end: dict[str, Any] = {"players": players}
        if e.seed is not None:  # what opens the commitment
            end["dealReveal"] = {"format": FORMAT, "seed": str(e.seed), "salt": e.salt}
        return frame("game_end", end)

    # ------------------------------------------------------------ requests and answers
    def request(self, phase: Phase, legal_plays: CardSet) -> dict[str, Any] | None:
        """The request frame for a decision the table asks of this chair (None: nothing to ask)."""
        self.asked = phase
        if phase is Phase.PLAY:
            self.candidates = legal_plays
            return frame(
                "your_turn",
                {
                    "dealNumber": self.deal_number,
                    "roundNumber": self.round_number,
                    "self": self._self(legal_plays),
                    "players": self._players(),
                    "roundPlayers": self.round_players(),
                },
            )
        if phase is Phase.PASS:
            self.candidates = self.hand
            return frame(
                "pass_cards",
                {
                    "dealNumber": self.deal_number,
                    "self": self._self(self.hand),
                    "players": self._players(),
                    "receiver": self.names[self._to(self.seat)],
                },
            )
        if phase is Phase.EXPOSE:
            self.candidates = self.hand & self.rules.exposable
            return frame(
                "expose_cards",
                {"dealNumber": self.deal_number, "self": self._self(self.candidates), "players": self._players()},
            )
        self.asked = None
        return None

    def answer(self, msg: PassMyCards | ExposeMyCards | PickCard | Malformed) -> Answer:
        """The action a reply stands for, or why it is dropped / wrong. Call only while asked."""
        phase = self.asked
        if phase is None:
            return Dropped("no decision is asked of you now")
        if isinstance(msg, Malformed):
            wanted = {Phase.PLAY: "pick_card", Phase.PASS: "pass_my_cards", Phase.EXPOSE: "expose_my_cards"}[phase]
            if msg.event_name != wanted:
                return Dropped(f"{msg.event_name} is not the answer to this request ({wanted})")
            return Wrong(msg.reason)
        if msg.deal_number != self.deal_number:
            return Dropped(f"wrong dealNumber {msg.deal_number}, this is deal {self.deal_number}")
        if isinstance(msg, PickCard):
            if phase is not Phase.PLAY:
                return Dropped("pick_card while no card is asked for")
            if msg.round_number != self.round_number:
                return Dropped(f"wrong roundNumber {msg.round_number}, this is round {self.round_number}")
            if not self.candidates >> msg.card & 1:
                return Wrong(f"{format_card(msg.card)} is not one of your candidateCards")
            return Play.of(self.seat, msg.card)
        if isinstance(msg, PassMyCards):
            if phase is not Phase.PASS:
                return Dropped("pass_my_cards while no pass is asked for")
            need = self.rules.pass_count
            chosen = 0
            for c in msg.cards:
                chosen |= 1 << c
            if len(msg.cards) != need or chosen.bit_count() != need:
                return Wrong(f"pass {need} different cards")
            if chosen & ~self.candidates:
                return Wrong(f"{' '.join(format_cards(chosen & ~self.candidates))} not in your hand")
            return Pass(self.seat, chosen)
        if phase is not Phase.EXPOSE:
            return Dropped("expose_my_cards while no exposure is asked for")
        chosen = 0
        for c in msg.cards:
            chosen |= 1 << c
        if len(msg.cards) > 1 or chosen & ~self.candidates:
            return Wrong("expose nothing or one of your candidateCards")
        return Expose(self.seat, chosen)

    def answered(self) -> None:
        self.asked = None

    # ------------------------------------------------------------ reconnecting
    def catch_up(self) -> list[dict[str, Any]]:
        """What a chair that (re)joins mid-game gets before its pending request: the game and
        the deal as they stand now (built from the replayed history already fed to :meth:`events`)."""
        out = [frame("new_game", peer_list(self.players, self.status))]
        if self.deal_number:
            out.append(
                frame("new_deal", {"dealNumber": self.deal_number, "self": self._self(), "players": self._players()})
            )
        if self.round_number:
            out.append(
                frame(
                    "new_round",
                    {
                        "dealNumber": self.deal_number,
                        "roundNumber": self.round_number,
                        "players": self._players(),
                        "roundPlayers": self.round_players(),
                    },
                )
            )
        return out


__all__ = [
    "CLIENT_EVENTS",
    "DEFAULT_PORT",
    "MAX_FRAME",
    "OFFLINE",
    "ONLINE",
    "TIMED_OUT",
    "VERSION",
    "Answer",
    "ClientEvent",
    "Dropped",
    "Entry",
    "EntryCache",
    "ExposeMyCards",
    "Join",
    "Malformed",
    "PassMyCards",
    "PickCard",
    "PlayerInfo",
    "StopGame",
    "TrendCodec",
    "Wrong",
    "encode_frame",
    "error_frame",
    "frame",
    "new_peer",
    "parse_frame",
]
