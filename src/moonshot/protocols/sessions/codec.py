"""The Sessions protocol (seed 001) without I/O: framing, messages, sequence numbers, event mapping.

* :class:`StreamDecoder` cuts unframed, concatenated JSON objects out of a byte stream (the
  reference client pretty-prints, the reference server writes compact JSON, neither delimits).
  It scans for the end of each top-level object (string-aware brace depth, one regex jump at a
  time) and only then parses it, so half a message waits for the rest, garbage between objects
  is skipped and reported once, a malformed object is reported and skipped, and an object longer
  than ``max_message`` bytes is reported and discarded as it streams in, never buffered whole.
* :func:`parse_client_message` turns a decoded object into a typed message (liberal: unknown
  fields are ignored, cards may be ``"TH"``/``"Th"``/``"10H"``) or a :class:`Malformed`.
* :class:`SessionCodec` is one session's side: it stamps ``seq_num``/``session_id`` on what the
  server sends, checks the client's ``seq_num`` (one counter shared by both directions, as the
  reference does: the client's message takes the number after the last one it received), and
  maps engine events, already redacted for the session's seat, to Sessions messages.
"""

from __future__ import annotations

import codecs
import enum
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from moonshot.cards import CardError, CardSet, format_cards, parse_card
from moonshot.events import (
    CardPlayed,
    DealEnded,
    DealStarted,
    Event,
    GameEnded,
    GameStarted,
    HandDealt,
    PassReceived,
    PassSent,
    TrickEnded,
    TrickStarted,
)
from moonshot.rules import PassDirection, Rules
from moonshot.variants import find_variant

DEFAULT_PORT = 40405
MAX_MESSAGE = 64 * 1024

#: The Sessions game: standard Hearts, passing left/right/across/keeper, the game goes on while
#: the highest total is at most 100; shooting the moon gives the others 26.
SESSIONS_RULES: Rules = find_variant("standard").replace(
    name="sessions",
    limit_inclusive=False,
    description="Sessions protocol: standard, pass L/R/A/keeper, play while the highest total <= 100",
)

PASS_NAMES = {
    PassDirection.LEFT: "Left",
    PassDirection.RIGHT: "Right",
    PassDirection.ACROSS: "Across",
    PassDirection.HOLD: "Keeper",
    PassDirection.KEEPER: "Keeper",
}


# ------------------------------------------------------------------ framing
@dataclass(frozen=True, slots=True)
class FrameProblem:
    """Something in the stream that is not a message: reported to the peer, then skipped."""

    reason: str


_OUTSIDE = re.compile(r"\S")
_RAW_DECODE = json.JSONDecoder().raw_decode
_IN_OBJECT = re.compile(r'[{}"]')
_IN_STRING = re.compile(r'["\\]')


class StreamDecoder:
    """Incremental decoder for concatenated JSON objects with a per-message size limit."""

    def __init__(self, max_message: int = MAX_MESSAGE) -> None:
        self.max_message = max_message
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buf = ""
        self._pos = 0  # next character to scan
        self._start = -1  # where the current object began (-1: between objects)
        self._depth = 0
        self._in_string = False
        self._escape = False
        self._skipping = False  # the current object is over-long: scan to its end, drop it
        self._garbage = False  # inside a run of non-JSON bytes (reported once)

    @property
    def partial(self) -> bool:
        """An object has begun and not ended (half a message)."""
        return self._start >= 0

    def discard_partial(self) -> int:
        """Drop a half message (the peer went quiet in the middle of one); returns characters dropped.

        A stream cut mid-object would otherwise swallow the messages that follow it."""
        if self._start < 0:
            return 0
        dropped = len(self._buf) - self._start
        self._buf = ""
        self._pos = 0
        self._start = -1
        self._depth = 0
        self._in_string = self._escape = self._skipping = False
        return dropped

    @property
    def buffered(self) -> int:
        """Characters held, waiting for the rest of a message."""
        return len(self._buf)

    def feed(self, data: bytes) -> list[dict[str, Any] | FrameProblem]:
        self._buf += self._utf8.decode(data)
        out: list[dict[str, Any] | FrameProblem] = []
        buf = self._buf
        n = len(buf)
        i = self._pos
        while i < n:
            if self._depth == 0:
                m = _OUTSIDE.search(buf, i)
                if m is None:
                    i = n
                    break
                i = m.start()
                if buf[i] != "{":
                    if not self._garbage:
                        self._garbage = True
                        out.append(FrameProblem(f"not JSON: {buf[i : i + 20]!r}"))
                    j = buf.find("{", i)
                    i = n if j < 0 else j
                    continue
                self._garbage = False
                # fast path: a whole object is usually there already; the C decoder takes it
                try:
                    obj, end = _RAW_DECODE(buf, i)
                except (ValueError, RecursionError):
                    pass  # incomplete or malformed: the scanner below decides which
                else:
                    if end - i > self.max_message:
                        out.append(FrameProblem(f"message longer than {self.max_message} bytes"))
                    elif isinstance(obj, dict):
                        out.append(obj)
                    i = end
                    continue
                self._start = i
                self._depth = 1
                i += 1
                continue
            if self._escape:
                self._escape = False
                i += 1
                continue
            if self._in_string:
                m = _IN_STRING.search(buf, i)
                if m is None:
                    i = n
                    break
                i = m.start()
                if buf[i] == "\\":
                    self._escape = True
                else:
                    self._in_string = False
                i += 1
                continue
            m = _IN_OBJECT.search(buf, i)
            if m is None:
                i = n
                break
            i = m.start()
            ch = buf[i]
            i += 1
            if ch == '"':
                self._in_string = True
            elif ch == "{":
                self._depth += 1
            else:
                self._depth -= 1
                if self._depth == 0:
                    if self._skipping:
                        self._skipping = False
                    elif i - self._start > self.max_message:
                        out.append(FrameProblem(f"message longer than {self.max_message} bytes"))
                    else:
                        out.append(_parse_object(buf[self._start : i]))
                    self._start = -1
            if self._start >= 0 and not self._skipping and i - self._start > self.max_message:
                out.append(FrameProblem(f"message longer than {self.max_message} bytes"))
                self._skipping = True
        if self._start >= 0 and not self._skipping and n - self._start > self.max_message:
            out.append(FrameProblem(f"message longer than {self.max_message} bytes"))
            self._skipping = True
        # keep only what an unfinished object still needs
        if self._start >= 0 and not self._skipping:
            keep = self._start
            self._start = 0
        else:
            keep = i
            if self._start >= 0:
                self._start = 0
        self._buf = buf[keep:]
        self._pos = i - keep
        return out


def _parse_object(text: str) -> dict[str, Any] | FrameProblem:
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError) as e:
        return FrameProblem(f"malformed JSON: {e}")
    if not isinstance(obj, dict):  # pragma: no cover - the scanner only cuts objects
        return FrameProblem("not a JSON object")
    return obj


_ENCODE = json.JSONEncoder(separators=(",", ":")).encode


def encode(message: dict[str, Any]) -> bytes:
    """Compact JSON, no delimiter: what the reference server writes (its client splits on ``}{``)."""
    return _ENCODE(message).encode()


# ------------------------------------------------------------------ client messages
class GameType(enum.Enum):
    ANY = "any"
    HUMANS_ONLY = "humans_only"
    BOTS_ONLY = "bots_only"


class PlayerKind(enum.Enum):
    HUMAN = "human"
    BOT = "bot"


@dataclass(frozen=True, slots=True)
class ConnectionRequest:
    pass


@dataclass(frozen=True, slots=True)
class GameSessionRequest:
    player_tag: str
    game_type: GameType
    kind: PlayerKind
    lobby_code: str | None
    seq_num: int


@dataclass(frozen=True, slots=True)
class DonatedCards:
    session_id: int
    seq_num: int | None
    cards: CardSet
    count: int  # cards named (duplicates count twice, so a duplicate pass is caught)


@dataclass(frozen=True, slots=True)
class DecidedMove:
    session_id: int
    seq_num: int | None
    card: int


@dataclass(frozen=True, slots=True)
class Malformed:
    """A message we cannot act on. ``session_id`` set: the session's pending move is forfeited."""

    reason: str
    type: str | None = None
    session_id: int | None = None
    seq_num: int | None = None


ClientMessage = ConnectionRequest | GameSessionRequest | DonatedCards | DecidedMove | Malformed

_HUMAN_WORDS = {"human", "humans", "person", "people", "true", "yes", "1"}
_BOT_WORDS = {"bot", "bots", "ai", "agent", "program", "false", "no", "0"}


def _kind_of(obj: dict[str, Any], game_type: GameType) -> PlayerKind:
    """Liberal: ``player_kind``/``kind``/``player_type``: human|bot, or ``is_human``/``is_bot``."""
    for key in ("player_kind", "kind", "player_type"):
        v = obj.get(key)
        if isinstance(v, str):
            if v.lower() in _HUMAN_WORDS:
                return PlayerKind.HUMAN
            if v.lower() in _BOT_WORDS:
                return PlayerKind.BOT
    for key, human_if in (("is_human", True), ("human", True), ("is_bot", False), ("bot", False)):
        v = obj.get(key)
        if isinstance(v, bool):
            return PlayerKind.HUMAN if v is human_if else PlayerKind.BOT
    # someone asking for a humans-only game is presumably human; anything else a program
    return PlayerKind.HUMAN if game_type is GameType.HUMANS_ONLY else PlayerKind.BOT


def _int_or_none(v: object) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip().lstrip("-").isdigit():
        return int(v)
    return None


def parse_client_message(obj: dict[str, Any]) -> ClientMessage:
    kind = obj.get("type")
    sid = _int_or_none(obj.get("session_id"))
    seq = _int_or_none(obj.get("seq_num"))
    if kind == "connection_request":
        return ConnectionRequest()
    if kind == "game_session_request":
        raw_type = obj.get("game_type", "any")
        try:
            game_type = GameType(str(raw_type).lower())
        except ValueError:
            return Malformed(f"unknown game_type {raw_type!r} (any, humans_only, bots_only)", kind)
        tag = obj.get("player_tag")
        tag = tag if isinstance(tag, str) and tag.strip() else "player"
        code = obj.get("lobby_code")
        code = str(code) if isinstance(code, (str, int)) and not isinstance(code, bool) and str(code) else None
        return GameSessionRequest(tag[:64], game_type, _kind_of(obj, game_type), code, seq or 0)
    if kind in ("donated_cards", "decided_move"):
        if sid is None:
            return Malformed("missing session_id", kind, None, seq)
        try:
            if kind == "decided_move":
                card = obj.get("card")
                if not isinstance(card, str):
                    return Malformed(f"card must be a string like 'TH', got {card!r}", kind, sid, seq)
                return DecidedMove(sid, seq, parse_card(card))
            cards = obj.get("cards")
            if not isinstance(cards, list) or not all(isinstance(c, str) for c in cards):
                return Malformed("cards must be a list of strings like ['TH', 'QS', '2C']", kind, sid, seq)
            parsed = [parse_card(c) for c in cards]
        except CardError as e:
            return Malformed(f"bad card: {e}", kind, sid, seq)
        mask = 0
        for c in parsed:
            mask |= 1 << c
        return DonatedCards(sid, seq, mask, len(parsed))
    return Malformed(f"unknown message type {kind!r}", kind if isinstance(kind, str) else None, sid, seq)


# ------------------------------------------------------------------ server messages
def connection_response() -> dict[str, Any]:
    return {"type": "connection_response", "status": "success"}


def error_message(reason: str, session_id: int | None = None, about: str | None = None) -> dict[str, Any]:
    """Moonshot's error reply. It takes no ``seq_num``: it is not part of a session's sequence."""
    msg: dict[str, Any] = {"type": "error", "status": "error", "reason": reason}
    if session_id is not None:
        msg["session_id"] = session_id
    if about is not None:
        msg["about"] = about
    return msg


def tag_with_id(tag: str, session_id: int) -> str:
    """Tags are made unique the reference way: ``random_player(2)``."""
    return f"{tag}({session_id})"


class SessionCodec:
    """One session: its sequence numbers and its view of the game as Sessions messages."""

    def __init__(self, session_id: int, request_seq: int = 0) -> None:
        self.session_id = session_id
        self.next_seq = request_seq + 1
        self.seat = -1
        self.tags: tuple[str, ...] = ()
        self.donated: CardSet = 0
        self.direction = PassDirection.HOLD
        self.round_index = 0

    def stamp(self, msg: dict[str, Any]) -> dict[str, Any]:
        msg["seq_num"] = self.next_seq
        msg["session_id"] = self.session_id
        self.next_seq += 1
        return msg

    def accept_seq(self, seq: int | None) -> bool:
        """A client message must carry the next number; accepting it consumes the number."""
        if seq != self.next_seq:
            return False
        self.next_seq += 1
        return True

    def session_response(self) -> dict[str, Any]:
        return self.stamp({"type": "game_session_response", "status": "success"})

    def seat_at(self, seat: int, tags: Sequence[str]) -> None:
        self.seat = seat
        self.tags = tuple(tags)

    def move_request(self, legal: CardSet) -> dict[str, Any]:
        return self.stamp({"type": "move_request", "legal_moves": format_cards(legal)})

    def messages(self, events: Sequence[tuple[Event, bool]]) -> list[dict[str, Any]]:
        """The messages for events (each with: was the action behind it the server's choice)."""
        out: list[dict[str, Any]] = []
        for e, forced in events:
            m = self._message(e, forced)
            if m is not None:
                out.append(self.stamp(m))
        return out

    def _message(self, e: Event, forced: bool) -> dict[str, Any] | None:
        tags = self.tags
        if isinstance(e, CardPlayed):
            return {
                "type": "move_report",
                "card": format_cards([e.card])[0],
                "move_source": "server" if forced else "player",
                "player_tag": tags[e.seat],
            }
        if isinstance(e, TrickStarted):
            order = [tags[(e.leader + k) % 4] for k in range(4)]
            return {"type": "start_trick", "player_order": order, "trick_index": e.trick - 1}
        if isinstance(e, TrickEnded):
            return {"type": "end_trick", "winning_player": tags[e.winner]}
        if isinstance(e, GameStarted):
            return {"type": "start_game", "player_order": list(tags)}
        if isinstance(e, DealStarted):
            self.direction = e.direction
            self.round_index = e.deal
            self.donated = 0
            return None
        if isinstance(e, HandDealt):
            if e.seat != self.seat:
                return None
            return {
                "type": "start_round",
                "cards": format_cards(e.cards),
                "pass_direction": PASS_NAMES[self.direction],
                "round_index": self.round_index,
            }
        if isinstance(e, PassSent):
            if e.seat == self.seat and e.cards is not None:
                self.donated = e.cards
            return None
        if isinstance(e, PassReceived):
            if e.seat != self.seat or e.cards is None or e.source == e.seat:
                return None
            return {
                "type": "received_cards",
                "cards": format_cards(e.cards),
                "donated_cards": format_cards(self.donated),
            }
        if isinstance(e, DealEnded):
            # the real points of this round (the reference sends the totals before it: a bug)
            return {"type": "end_round", "player_to_round_points": {tags[s]: p for s, p in enumerate(e.points)}}
        if isinstance(e, GameEnded):
            return {
                "type": "end_game",
                "player_to_game_points": {tags[s]: p for s, p in enumerate(e.totals)},
                "winning_player": tags[e.winners[0]] if e.winners else "",
            }
        return None


__all__ = [
    "DEFAULT_PORT",
    "MAX_MESSAGE",
    "PASS_NAMES",
    "SESSIONS_RULES",
    "ClientMessage",
    "ConnectionRequest",
    "DecidedMove",
    "DonatedCards",
    "FrameProblem",
    "GameSessionRequest",
    "GameType",
    "Malformed",
    "PlayerKind",
    "SessionCodec",
    "StreamDecoder",
    "connection_response",
    "encode",
    "error_message",
    "parse_client_message",
    "tag_with_id",
]
