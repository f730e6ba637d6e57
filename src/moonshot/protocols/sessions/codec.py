"""The Sessions protocol (seed 001) without I/O: framing, messages, sequence numbers, event mapping.

* :class:`StreamDecoder` cuts unframed, concatenated JSON objects out of a byte stream (the
  reference client pretty-prints, the reference server writes compact JSON, neither delimits).
  It scans for the end of each top-level object (string-aware brace depth, kept across feeds,
  constant work per byte) and only then parses it, so half a message waits for the rest,
  garbage between objects is skipped and reported once, a malformed object is reported and
  skipped, and an object longer than ``max_message`` bytes or nested deeper than ``max_depth``
  is reported and discarded as it streams in, never buffered whole.
* :func:`parse_client_message` turns a decoded object into a typed message (liberal: unknown
  fields are ignored, cards may be ``"TH"``/``"Th"``/``"10H"``, ids may be digit strings) or a
  :class:`Malformed` when a field has the wrong type or form (never an exception).
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

from moonshot.core.cards import CardError, CardSet, format_cards, parse_card
from moonshot.core.events import (
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
from moonshot.core.fairness import FORMAT
from moonshot.core.rules import PassDirection, Rules
from moonshot.core.variants import SESSIONS

DEFAULT_PORT = 40405
MAX_MESSAGE = 64 * 1024
MAX_DEPTH = 32  # brace nesting of one message (Sessions messages nest 2 deep)

#: The Sessions game (:data:`moonshot.core.variants.SESSIONS`): standard Hearts, passing
#: left/right/across/keeper, the game goes on while the highest total is at most 100.
SESSIONS_RULES: Rules = SESSIONS

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
_ESCAPE = re.compile(r"\\.", re.DOTALL)
_BRACE = re.compile(r"[{}]")
_MAX_PARTS = 256  # pieces of a half message kept before they are joined (bounds memory, amortised)


class StreamDecoder:
    """Incremental decoder for concatenated JSON objects with per-message size and depth limits.

    Its work per byte is constant, whatever the peer sends: every character is examined once
    (``work`` counts them), by C-level string operations on the whole piece just received
    (escapes masked, strings cut out with one ``split``, braces counted), and the decoder keeps
    its state (brace depth, inside a string or not, a pending backslash) across feeds instead
    of re-reading what it holds. Only a piece in which the object may end is walked brace by
    brace, to find where. The text of a half message is kept as a list of pieces, joined once
    when it ends, never copied per feed.
    """

    def __init__(self, max_message: int = MAX_MESSAGE, max_depth: int = MAX_DEPTH) -> None:
        self.max_message = max_message
        self.max_depth = max_depth
        self.work = 0  # characters examined, over the decoder's life (tests check it stays linear)
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._parts: list[str] = []  # the current object's text so far (empty while skipping)
        self._size = 0  # characters of the current object so far
        self._depth = 0  # brace depth of the current object; 0: between objects
        self._in_string = False
        self._escape = False  # the last piece ended with a backslash: the next character is escaped
        self._skipping = False  # the current object broke a limit: scan to its end, keep nothing
        self._garbage = False  # inside a run of non-JSON bytes (reported once)

    @property
    def partial(self) -> bool:
        """An object has begun and not ended (half a message)."""
        return self._depth > 0

    def discard_partial(self) -> int:
        """Drop a half message (the peer went quiet in the middle of one); returns characters dropped.

        A stream cut mid-object would otherwise swallow the messages that follow it."""
        if self._depth == 0:
            return 0
        dropped = self._size
        self._end_object()
        return dropped

    @property
    def buffered(self) -> int:
        """Characters held, waiting for the rest of a message."""
        return 0 if self._skipping else self._size

    def feed(self, data: bytes) -> list[dict[str, Any] | FrameProblem]:
        text = self._utf8.decode(data)
        out: list[dict[str, Any] | FrameProblem] = []
        n = len(text)
        i = 0
        while i < n:
            if self._depth > 0:
                i = self._scan(text, i, out)
                continue
            m = _OUTSIDE.search(text, i)
            if m is None:
                self.work += n - i
                break
            self.work += m.start() - i
            i = m.start()
            if text[i] != "{":
                if not self._garbage:
                    self._garbage = True
                    out.append(FrameProblem(f"not JSON: {text[i : i + 20]!r}"))
                j = text.find("{", i)
                self.work += (n if j < 0 else j) - i
                i = n if j < 0 else j
                continue
            self._garbage = False
            # fast path: a whole object is usually there already; the C decoder takes it. It
            # stops at the first character that cannot continue the object, so it reads at most
            # what the scanner below would (a failed attempt costs no more than one scan)
            try:
                obj, end = _RAW_DECODE(text, i)
            except (ValueError, RecursionError) as e:
                self.work += min(n, getattr(e, "pos", n)) - i
            else:
                self.work += end - i
                if end - i > self.max_message:
                    out.append(FrameProblem(f"message longer than {self.max_message} bytes"))
                elif isinstance(obj, dict):
                    out.append(obj)
                i = end
                continue
            self._depth = 1
            self._parts = ["{"]
            self._size = 1
            self._in_string = self._escape = self._skipping = False
            i += 1
        return out

    def _scan(self, text: str, i: int, out: list[dict[str, Any] | FrameProblem]) -> int:
        """Go on with the open object from ``text[i]``; returns where scanning stopped."""
        seg = text[i:] if i else text
        self.work += len(seg)
        # mask escapes with two harmless characters (offsets stay), then cut the strings out
        masked = "a" + seg[1:] if self._escape else seg
        if "\\" in masked:
            masked = _ESCAPE.sub("aa", masked)
        escape = masked.endswith("\\")
        if "{" not in masked and "}" not in masked:
            # no brace at all (a long string, say): only whether we end inside a string matters
            if masked.count('"') % 2:
                self._in_string = not self._in_string
            self._escape = escape
            self._grow(seg, out)
            return len(text)
        parts = masked.split('"')
        first = 1 if self._in_string else 0
        outside = "".join(parts[first::2])
        closes = outside.count("}")
        opens = outside.count("{")
        if closes < self._depth and (self._skipping or self._depth + opens <= self.max_depth):
            # the object cannot end in this piece, nor nest too deep: take it whole
            self._depth += opens - closes
            if len(parts) % 2 == 0:
                self._in_string = not self._in_string
            self._escape = escape
            self._grow(seg, out)
            return len(text)
        # walk the braces outside strings: where the object ends, or where it nests too deep
        offset = 0
        for k, part in enumerate(parts):
            if (k - first) % 2 == 0 and ("{" in part or "}" in part):
                for m in _BRACE.finditer(part):
                    self.work += 1
                    pos = offset + m.start() + 1  # just after this brace, in seg
                    if m.group() == "{":
                        self._depth += 1
                        if self._depth > self.max_depth and not self._skipping:
                            self._grow(seg[:pos], out)
                            self._limit(out, f"message nested deeper than {self.max_depth}")
                            self._in_string = self._escape = False
                            return i + pos
                    else:
                        self._depth -= 1
                        if self._depth == 0:
                            self._grow(seg[:pos], out)
                            if not self._skipping:
                                out.append(_parse_object("".join(self._parts)))
                            self._end_object()
                            return i + pos
            offset += len(part) + 1
        self.work += len(parts)
        if len(parts) % 2 == 0:
            self._in_string = not self._in_string
        self._escape = escape
        self._grow(seg, out)
        return len(text)

    def _grow(self, piece: str, out: list[dict[str, Any] | FrameProblem]) -> None:
        self._size += len(piece)
        if self._skipping:
            return
        if self._size > self.max_message:
            self._limit(out, f"message longer than {self.max_message} bytes")
            return
        self._parts.append(piece)
        if len(self._parts) > _MAX_PARTS:
            self._parts = ["".join(self._parts)]

    def _limit(self, out: list[dict[str, Any] | FrameProblem], reason: str) -> None:
        """The current object broke a limit: report it once, keep nothing more of it."""
        out.append(FrameProblem(reason))
        self._skipping = True
        self._parts = []

    def _end_object(self) -> None:
        self._parts = []
        self._size = 0
        self._depth = 0
        self._in_string = self._escape = self._skipping = False


def _parse_object(text: str) -> dict[str, Any] | FrameProblem:
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError) as e:
        return FrameProblem(f"malformed JSON: {e}")
    if not isinstance(obj, dict):  # pragma: no cover - the scanner only cuts objects
        return FrameProblem("not a JSON object")
    return obj


_ENCODE = json.JSONEncoder(separators=(",", ":")).encode
_CARD_NAMES: tuple[str, ...] = tuple(format_cards((1 << 52) - 1))  # card number -> "QS"


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
    order: tuple[int, ...] = ()  # the cards as the client listed them (echoed in that order)


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


@dataclass(frozen=True, slots=True)
class ResumeSession:
    """moonshot's extension: take back a session's chair (after a server restart or a lost
    connection) on this connection, proving it is the owner with the session's secret. The
    server replays the game so far, marked ``replayed``."""

    session_id: int
    secret: str


ClientMessage = ConnectionRequest | GameSessionRequest | DonatedCards | DecidedMove | ResumeSession | Malformed

_HUMAN_WORDS = {"human", "humans", "person", "people", "true", "yes", "1"}
_BOT_WORDS = {"bot", "bots", "ai", "agent", "program", "false", "no", "0"}
MAX_ID = 2**63  # session ids and sequence numbers are below this
MAX_SECRET = 256  # characters of a session secret (moonshot's are 43)
_ASCII_INT = re.compile(r"-?[0-9]{1,19}")


def show(value: object, limit: int = 40) -> str:
    """A short ``repr`` of what a client sent, for an error reply (never its whole 64 KiB)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        return f"<an integer of {value.bit_length()} bits>"  # repr of a huge int is slow (or raises)
    try:
        text = repr(value)
    except ValueError:  # a huge integer inside a list or an object
        return "<a value too large to show>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Bad(Exception):
    """A field the client sent is not what the protocol allows (the message is malformed)."""


def _int_field(obj: dict[str, Any], key: str) -> int | None:
    """An integer field: a JSON integer, or a string of ASCII digits (liberal, as clients send
    either), within +-2**63. Absent: ``None``. Anything else (floats, ``"--5"``, ``"²"``, 5,000
    digits, lists, objects, booleans, null) raises :class:`_Bad`: the message is malformed."""
    if key not in obj:
        return None
    v = obj[key]
    if isinstance(v, int) and not isinstance(v, bool):
        if -MAX_ID <= v < MAX_ID:
            return v
    elif isinstance(v, str) and _ASCII_INT.fullmatch(v.strip()):
        n = int(v.strip())
        if -MAX_ID <= n < MAX_ID:
            return n
    raise _Bad(f"{key} must be an integer, got {show(v)}")


def _str_field(obj: dict[str, Any], key: str, default: str | None = None) -> str | None:
    if key not in obj:
        return default
    v = obj[key]
    if not isinstance(v, str):
        raise _Bad(f"{key} must be a string, got {show(v)}")
    return v


def _kind_of(obj: dict[str, Any], game_type: GameType) -> PlayerKind:
    """Liberal: ``player_kind``/``kind``/``player_type``: human|bot, or ``is_human``/``is_bot``.
    A ``player_kind`` (the documented name) that is neither is an error."""
    for key in ("player_kind", "kind", "player_type"):
        v = obj.get(key)
        if isinstance(v, str):
            if v.lower() in _HUMAN_WORDS:
                return PlayerKind.HUMAN
            if v.lower() in _BOT_WORDS:
                return PlayerKind.BOT
        if key == "player_kind" and key in obj:
            raise _Bad(f"player_kind must be 'human' or 'bot', got {show(v)}")
    for key, human_if in (("is_human", True), ("human", True), ("is_bot", False), ("bot", False)):
        v = obj.get(key)
        if isinstance(v, bool):
            return PlayerKind.HUMAN if v is human_if else PlayerKind.BOT
    # someone asking for a humans-only game is presumably human; anything else a program
    return PlayerKind.HUMAN if game_type is GameType.HUMANS_ONLY else PlayerKind.BOT


def parse_client_message(obj: dict[str, Any]) -> ClientMessage:
    """A typed message, or :class:`Malformed` when a field has the wrong type or form (the
    server then replies ``error`` and changes nothing). Unknown fields are ignored."""
    kind = obj.get("type")
    if not isinstance(kind, str):
        return Malformed(f"unknown message type {show(kind)}")
    sid: int | None = None
    try:
        sid = _int_field(obj, "session_id")
        seq = _int_field(obj, "seq_num")
        return _parse(kind, obj, sid, seq)
    except _Bad as e:
        return Malformed(str(e), kind, sid)


def _parse(kind: str, obj: dict[str, Any], sid: int | None, seq: int | None) -> ClientMessage:
    if kind == "connection_request":
        return ConnectionRequest()
    if kind == "game_session_request":
        raw_type = obj.get("game_type", "any")
        if not isinstance(raw_type, str):
            raise _Bad(f"unknown game_type {show(raw_type)} (any, humans_only, bots_only)")
        try:
            game_type = GameType(raw_type.lower())
        except ValueError:
            raise _Bad(f"unknown game_type {show(raw_type)} (any, humans_only, bots_only)") from None
        tag = _str_field(obj, "player_tag", "player") or ""
        tag = tag if tag.strip() else "player"
        code = obj.get("lobby_code")
        if code is not None and (isinstance(code, bool) or not isinstance(code, (str, int))):
            raise _Bad(f"lobby_code must be a string, got {show(code)}")
        if isinstance(code, int) and not -MAX_ID <= code < MAX_ID:
            raise _Bad(f"lobby_code must be a string, got {show(code)}")
        code = str(code) if code is not None and str(code) else None
        if code is not None and len(code) > 256:
            raise _Bad("lobby_code longer than 256 characters")
        return GameSessionRequest(tag[:64], game_type, _kind_of(obj, game_type), code, seq or 0)
    if kind == "resume_session":
        if sid is None:
            raise _Bad("resume_session needs the session_id to resume")
        secret = _str_field(obj, "session_secret")
        if secret is None:
            raise _Bad("resume_session needs the session_secret sent with game_session_response")
        if len(secret) > MAX_SECRET:
            raise _Bad(f"session_secret longer than {MAX_SECRET} characters")
        return ResumeSession(sid, secret)
    if kind in ("donated_cards", "decided_move"):
        if sid is None:
            raise _Bad("missing session_id")
        if seq is None:
            raise _Bad("missing seq_num")
        try:
            if kind == "decided_move":
                card = obj.get("card")
                if not isinstance(card, str):
                    raise _Bad(f"card must be a string like 'TH', got {show(card)}")
                return DecidedMove(sid, seq, parse_card(card))
            cards = obj.get("cards")
            if not isinstance(cards, list) or not all(isinstance(c, str) for c in cards) or len(cards) > 52:
                raise _Bad("cards must be a list of strings like ['TH', 'QS', '2C']")
            parsed = [parse_card(c) for c in cards]
        except CardError as e:
            raise _Bad(f"bad card: {show(str(e), 80)}") from None
        mask = 0
        for c in parsed:
            mask |= 1 << c
        return DonatedCards(sid, seq, mask, len(parsed), tuple(parsed))
    return Malformed(f"unknown message type {show(kind)}", kind, sid, seq)


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


def substituted_message(session_id: int, reason: str) -> dict[str, Any]:
    """Tells a client that a server bot now plays its session's chair (it may resume it)."""
    return error_message(
        f"session {session_id}: {reason}; a server bot plays this chair from now on "
        "(resume_session with the session_secret takes it back)",
        session_id,
        "substituted",
    )


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
        # the pass as this session's client listed it: ``received_cards`` echoes it in that order
        self.sent_order: tuple[int, ...] = ()
        self.direction = PassDirection.HOLD
        self.round_index = 0
        self._tags_json: tuple[str, ...] = ()  # each tag as JSON text (``frames``' move reports)

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

    def session_response(self, secret: str) -> dict[str, Any]:
        """The reply that opens the session, with moonshot's extension field ``session_secret``:
        the proof of ownership ``resume_session`` asks for (clients that never resume ignore it)."""
        return self.stamp({"type": "game_session_response", "status": "success", "session_secret": secret})

    def seat_at(self, seat: int, tags: Sequence[str]) -> None:
        self.seat = seat
        self.tags = tuple(tags)
        self._tags_json = tuple(_ENCODE(t) for t in self.tags)

    def passing(self, order: Sequence[int]) -> None:
        """The client passes these cards, in this order (kept to echo them in its order)."""
        self.sent_order = tuple(order)

    def donated_cards(self) -> list[str]:
        """The session's own pass as ``received_cards.donated_cards``: in the order its client
        sent it (the reference server echoes the client's list and the reference players compare
        the lists in order); a pass the server made (a timeout, a substitute) lowest first."""
        order = self.sent_order
        if order and len(order) == self.donated.bit_count() and all(self.donated >> c & 1 for c in order):
            return format_cards(order)
        return format_cards(self.donated)

    def move_request(self, legal: CardSet) -> dict[str, Any]:
        return self.stamp({"type": "move_request", "legal_moves": format_cards(legal)})

    def move_request_frame(self, legal: CardSet) -> bytes:
        """:meth:`move_request` encoded (the same bytes), from a template."""
        seq = self.next_seq
        self.next_seq = seq + 1
        names = '","'.join(format_cards(legal))
        moves = f'["{names}"]' if names else "[]"
        return (
            f'{{"type":"move_request","legal_moves":{moves},"seq_num":{seq},"session_id":{self.session_id}}}'.encode()
        )

    def messages(self, events: Sequence[tuple[Event, bool]], replayed: bool = False) -> list[dict[str, Any]]:
        """The messages for events (each with: was the action behind it the server's choice).
        ``replayed``: a resumed session's history, marked so the client does not answer it."""
        out: list[dict[str, Any]] = []
        for e, forced in events:
            m = self._message(e, forced)
            if m is not None:
                if replayed:
                    m["replayed"] = True
                out.append(self.stamp(m))
        return out

    def frames(self, events: Sequence[tuple[Event, bool]], replayed: bool = False) -> tuple[list[bytes], list[str]]:
        """What :meth:`messages` gives, encoded (the very bytes :func:`encode` makes of them), and
        each message's type. A live ``move_report``, ``start_trick`` and ``end_trick`` (most of a
        game: four of each a card or a trick, one per seat) is written straight from a template
        instead of a dict through the JSON encoder."""
        out: list[bytes] = []
        types: list[str] = []
        tags = self._tags_json
        live = not replayed and len(tags) == 4
        sid = self.session_id
        for e, forced in events:
            t = type(e)
            if live and (t is CardPlayed or t is TrickEnded or t is TrickStarted):
                seq = self.next_seq
                self.next_seq = seq + 1
                if t is CardPlayed:
                    assert isinstance(e, CardPlayed)
                    source = "server" if forced else "player"
                    out.append(
                        f'{{"type":"move_report","card":"{_CARD_NAMES[e.card]}","move_source":"{source}",'
                        f'"player_tag":{tags[e.seat]},"seq_num":{seq},"session_id":{sid}}}'.encode()
                    )
                    types.append("move_report")
                elif t is TrickEnded:
                    assert isinstance(e, TrickEnded)
                    out.append(
                        f'{{"type":"end_trick","winning_player":{tags[e.winner]},"seq_num":{seq},'
                        f'"session_id":{sid}}}'.encode()
                    )
                    types.append("end_trick")
                else:
                    assert isinstance(e, TrickStarted)
                    order = ",".join(tags[(e.leader + k) % 4] for k in range(4))
                    out.append(
                        f'{{"type":"start_trick","player_order":[{order}],"trick_index":{e.trick - 1},'
                        f'"seq_num":{seq},"session_id":{sid}}}'.encode()
                    )
                    types.append("start_trick")
                continue
            m = self._message(e, forced)
            if m is not None:
                if replayed:
                    m["replayed"] = True
                out.append(encode(self.stamp(m)))
                types.append(m["type"])
        return out, types

    def resume_response(self) -> dict[str, Any]:
        return self.stamp({"type": "resume_session_response", "status": "success"})

    def pass_request(self, hand: CardSet) -> dict[str, Any]:
        """After a resume in the passing phase: the round again, live, so the client passes."""
        return self.stamp(
            {
                "type": "start_round",
                "cards": format_cards(hand),
                "pass_direction": PASS_NAMES[self.direction],
                "round_index": self.round_index,
            }
        )

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
            start: dict[str, Any] = {"type": "start_game", "player_order": list(tags)}
            if e.commitment:  # moonshot's commitment to the deals (docs/security.md)
                start["deal_commitment"] = {"format": FORMAT, "commitment": e.commitment}
            return start
        if isinstance(e, DealStarted):
            self.direction = e.direction
            self.round_index = e.deal
            self.donated = 0
            self.sent_order = ()
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
                "donated_cards": self.donated_cards(),
            }
        if isinstance(e, DealEnded):
            # the real points of this round (the reference sends the totals before it: a bug)
            return {"type": "end_round", "player_to_round_points": {tags[s]: p for s, p in enumerate(e.points)}}
        if isinstance(e, GameEnded):
            end: dict[str, Any] = {
                "type": "end_game",
                "player_to_game_points": {tags[s]: p for s, p in enumerate(e.totals)},
                "winning_player": tags[e.winners[0]] if e.winners else "",
            }
            if e.seed is not None:  # what opens the commitment
                end["deal_reveal"] = {"format": FORMAT, "seed": str(e.seed), "salt": e.salt}
            return end
        return None


__all__ = [
    "DEFAULT_PORT",
    "MAX_DEPTH",
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
    "ResumeSession",
    "SessionCodec",
    "StreamDecoder",
    "connection_response",
    "encode",
    "error_message",
    "parse_client_message",
    "show",
    "substituted_message",
    "tag_with_id",
]
