"""The messages between the nodes of a cluster: one schema, named types, JSON on the wire.

Every message a node writes to another node's stream (see :mod:`moonshot.cluster.node`) is one
of the frozen dataclasses here: its class names its ``kind`` (``"seat.events"``,
``"table.submit"``...) and its fields, in words, are checked by their declared types. Table
events travel as ``[version, forced, name, field...]`` with the fields of that event class listed
in :data:`EVENTS` (the same order as its constructor). Decoding checks every field and builds
only the listed classes from plain values: nothing in a message can name a class, a function or
a module, so a hostile or corrupt stream entry is at worst a :class:`WireError` (the reader logs
it and drops the entry). Unknown kinds, unknown fields, missing fields and values of the wrong
type are all refused.

Why JSON rather than MessagePack: no extra dependency, the entries read plainly in
``redis-cli XRANGE``, and at the sizes here (a few events per message) ``json`` costs about the
same as a pickle did.

The module is pure (no I/O), like the core.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any, ClassVar, cast, get_type_hints

from moonshot.core import events as ev
from moonshot.core.engine import Phase
from moonshot.core.rules import PassDirection
from moonshot.runtime.table import ChairState, TableEvent, TableState, TableStatus


class WireError(ValueError):
    """A message that does not follow the schema (dropped by the reader, with a log line)."""


MAX_MESSAGE = 4 * 1024 * 1024  # bytes; a larger stream entry is refused unread


# ------------------------------------------------------------------ field types
def _int(v: Any) -> int:
    if type(v) is not int:
        raise WireError(f"expected an integer, got {type(v).__name__}")
    return v


def _opt_int(v: Any) -> int | None:
    return None if v is None else _int(v)


def _bool(v: Any) -> bool:
    if type(v) is not bool:
        raise WireError(f"expected true/false, got {type(v).__name__}")
    return v


def _str(v: Any) -> str:
    if type(v) is not str:
        raise WireError(f"expected a string, got {type(v).__name__}")
    return v


def _opt_str(v: Any) -> str | None:
    return None if v is None else _str(v)


def _ints(v: Any) -> tuple[int, ...]:
    if type(v) is not list or len(v) > 64:
        raise WireError("expected a list of integers")
    return tuple(_int(x) for x in v)


def _strs(v: Any) -> list[str]:
    if type(v) is not list or len(v) > 64:
        raise WireError("expected a list of strings")
    return [_str(x) for x in v]


def _direction(v: Any) -> PassDirection:
    try:
        return PassDirection(_str(v))
    except ValueError:
        raise WireError(f"unknown pass direction {v!r}") from None


def _phase(v: Any) -> Phase:
    try:
        return Phase(_str(v))
    except ValueError:
        raise WireError(f"unknown phase {v!r}") from None


def _status(v: Any) -> TableStatus:
    try:
        return TableStatus(_str(v))
    except ValueError:
        raise WireError(f"unknown table status {v!r}") from None


def _obj(v: Any) -> dict[str, Any]:
    """A JSON object handed on as data (an action's dict, HTTP headers): checked by its reader."""
    if type(v) is not dict:
        raise WireError("expected an object")
    return v


def _text_map(v: Any) -> dict[str, str]:
    d = _obj(v)
    for x in d.values():
        _str(x)
    return d


# ------------------------------------------------------------------ events
# name -> (class, the constructor's fields with their types). Encoding reads the same fields.
_F = Callable[[Any], Any]
EVENTS: dict[str, tuple[type[ev.Event], tuple[tuple[str, _F], ...]]] = {
    "GameStarted": (ev.GameStarted, (("variant", _str), ("seed", _opt_int), ("commitment", _str))),
    "DealStarted": (
        ev.DealStarted,
        (("deal", _int), ("direction", _direction), ("deal_kind", _int), ("first_leader", _opt_int)),
    ),
    "HandDealt": (ev.HandDealt, (("seat", _int), ("cards", _int))),
    "PassSent": (ev.PassSent, (("seat", _int), ("to", _int), ("cards", _opt_int), ("count", _int))),
    "PassReceived": (ev.PassReceived, (("seat", _int), ("source", _int), ("cards", _opt_int), ("count", _int))),
    "ChargingStarted": (ev.ChargingStarted, (("first_charger", _opt_int),)),
    "Charged": (
        ev.Charged,
        (
            ("seat", _int),
            ("cards", _opt_int),
            ("count", _int),
            ("blind", _bool),
            ("done", _int),
            ("next_charger", _opt_int),
        ),
    ),
    "ChargesRevealed": (ev.ChargesRevealed, (("charges", _ints),)),
    "ChargingEnded": (ev.ChargingEnded, (("charges", _ints),)),
    "Exposed": (ev.Exposed, (("seat", _int), ("cards", _int))),
    "TrickStarted": (ev.TrickStarted, (("trick", _int), ("leader", _int))),
    "CardPlayed": (ev.CardPlayed, (("seat", _int), ("card", _int), ("trick", _int))),
    "TrickEnded": (
        ev.TrickEnded,
        (("trick", _int), ("winner", _int), ("cards", _ints), ("seats", _ints), ("points", _int)),
    ),
    "ClaimMade": (ev.ClaimMade, (("seat", _int), ("hand", _int))),
    "ClaimAnswered": (ev.ClaimAnswered, (("claimer", _int), ("seat", _int), ("accepted", _bool))),
    "ClaimSucceeded": (ev.ClaimSucceeded, (("claimer", _int), ("cards", _int))),
    "DealEnded": (
        ev.DealEnded,
        (
            ("deal", _int),
            ("points", _ints),
            ("totals", _ints),
            ("moon", _opt_int),
            ("taken", _ints),
            ("tricks", _int),
            ("early", _bool),
        ),
    ),
    "GameEnded": (
        ev.GameEnded,
        (("totals", _ints), ("winners", _ints), ("deals", _int), ("seed", _opt_int), ("salt", _str)),
    ),
}
_EVENT_FIELDS = {cls: (name, tuple(f for f, _ in fields)) for name, (cls, fields) in EVENTS.items()}


def _plain(v: Any) -> Any:
    if isinstance(v, PassDirection):
        return v.value
    if isinstance(v, tuple):
        return list(v)
    return v


def encode_event(te: TableEvent) -> list[Any]:
    name, fields = _EVENT_FIELDS[type(te.event)]
    e = te.event
    return [te.version, te.forced, name, *[_plain(getattr(e, f)) for f in fields]]


def decode_event(item: Any) -> TableEvent:
    if type(item) is not list or len(item) < 3:
        raise WireError("an event is [version, forced, name, fields...]")
    version, forced, name = _int(item[0]), _bool(item[1]), item[2]
    spec = EVENTS.get(name) if type(name) is str else None
    if spec is None:
        raise WireError(f"unknown event {name!r}")
    cls, fields = spec
    values = item[3:]
    if len(values) != len(fields):
        raise WireError(f"{name} has {len(fields)} fields, got {len(values)}")
    args = [check(v) for (_, check), v in zip(fields, values)]
    return TableEvent(version, cls(*args), forced)


def _events(v: Any) -> list[TableEvent]:
    if type(v) is not list:
        raise WireError("expected a list of events")
    return [decode_event(x) for x in v]


# ------------------------------------------------------------------ messages
class Message:
    """A message between nodes: a frozen dataclass whose class names its ``kind`` (the JSON
    object's ``kind`` field) and whose fields, in words, are the rest of the object."""

    __slots__ = ()
    kind: ClassVar[str]


# ---- a player's node -> the table's owner
@dataclass(frozen=True, kw_only=True, slots=True)
class Submit(Message):
    """The player's action for request ``request`` (None: not an answer to a request)."""

    kind = "table.submit"
    table: str
    binding: str
    chair: int
    action: dict[str, Any]
    request: int | None


@dataclass(frozen=True, kw_only=True, slots=True)
class Unreadable(Message):
    """The player's answer could not be read: the table applies its policy."""

    kind = "table.unreadable"
    table: str
    binding: str
    chair: int
    request: int | None
    reason: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Detach(Message):
    """The player's connection is gone: the chair is empty."""

    kind = "table.detach"
    table: str
    binding: str
    chair: int
    reason: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Attach(Message):
    """A player of ``protocol`` (a Sessions ``resume_session``, a Trend re-join) asks for its
    chair back, through ``node``; its credential was checked there. Or a player (Kierki's
    ``IAM<seat>``) asks for a free chair of a running table that its lobby pool offered."""

    kind = "table.attach"
    table: str
    binding: str
    chair: int
    node: str
    protocol: str


# ---- the table's owner -> a player's node
@dataclass(frozen=True, kw_only=True, slots=True)
class Events(Message):
    """The chair's events, already redacted for it, and the table's state (each chair's occupant
    and counts, paused) when it changed since the last message to this binding (else None)."""

    kind = "seat.events"
    table: str
    binding: str
    events: list[TableEvent]
    state: TableState | None


@dataclass(frozen=True, kw_only=True, slots=True)
class Request(Message):
    """A decision request with a compact snapshot of the chair's view (the phase, the legal
    plays, the hand, the trick's number and the cards on the table), and the table's state
    when it changed since the last message to this binding (else None)."""

    kind = "seat.request"
    table: str
    binding: str
    chair: int
    request: int
    version: int
    phase: Phase
    legal: int
    hand: int
    trick: int
    trick_cards: tuple[int, ...]
    state: TableState | None


@dataclass(frozen=True, kw_only=True, slots=True)
class Rejected(Message):
    """The answer to request ``request`` was refused."""

    kind = "seat.rejected"
    table: str
    binding: str
    request: int | None
    reason: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Closed(Message):
    """The table ended (its status) or gave the chair up."""

    kind = "seat.closed"
    table: str
    binding: str
    reason: str
    status: TableStatus


@dataclass(frozen=True, kw_only=True, slots=True)
class Notice(Message):
    """News about the table (paused / resumed): a :class:`TableNotice`."""

    kind = "seat.notice"
    table: str
    binding: str
    notice: str
    cause: str
    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Matched(Message):
    """The lobby's ``ticket`` (or a mixed-table claim) sits at a table that starts, or at a
    running one's free chair, in ``chair`` (``restored``: a restored game, joined mid-game)."""

    kind = "seat.matched"
    table: str
    binding: str
    ticket: str
    chair: int
    owner: str
    names: list[str]
    rules: str
    credential: str | None
    restored: bool


@dataclass(frozen=True, kw_only=True, slots=True)
class Attached(Message):
    """An :class:`Attach` accepted: the replay follows."""

    kind = "seat.attached"
    table: str
    binding: str
    chair: int
    owner: str
    names: list[str]
    rules: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Refused(Message):
    """An :class:`Attach` refused: the chair is ``taken`` (maybe not for long), or the game
    ``ended``."""

    kind = "seat.refused"
    table: str
    binding: str
    reason: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Adopted(Message):
    """The table runs on ``owner`` now (its old owner died)."""

    kind = "seat.adopted"
    table: str
    binding: str
    owner: str


# ---- HTTP between nodes
@dataclass(frozen=True, kw_only=True, slots=True)
class HttpRequest(Message):
    """A request forwarded to the node hosting its game."""

    kind = "http.request"
    request: str
    node: str
    method: str
    path: str
    headers: dict[str, str]
    body: str
    address: str = ""  # the client's share key, as the forwarding node's guard found it ("" unknown)


@dataclass(frozen=True, kw_only=True, slots=True)
class HttpHead(Message):
    kind = "http.head"
    request: str
    status: int
    headers: dict[str, str]
    stream: bool


@dataclass(frozen=True, kw_only=True, slots=True)
class HttpChunk(Message):
    kind = "http.chunk"
    request: str
    data: str


@dataclass(frozen=True, kw_only=True, slots=True)
class HttpEnd(Message):
    kind = "http.end"
    request: str


@dataclass(frozen=True, kw_only=True, slots=True)
class HttpCancel(Message):
    """The requester went away."""

    kind = "http.cancel"
    request: str


@dataclass(frozen=True, kw_only=True, slots=True)
class LobbyEvent(Message):
    """A lobby event for every node's lobby streams."""

    kind = "lobby.event"
    event: dict[str, Any]
    node: str


# ---- mixed tables
@dataclass(frozen=True, kw_only=True, slots=True)
class MixedClaim(Message):
    """A player's node asks the node hosting a lobby code's table (an open HTTP game, a
    tournament) to seat its player (of ``protocol``: sessions or trend)."""

    kind = "mixed.claim"
    request: str
    node: str
    code: str | None
    token: str | None
    name: str
    player: str  # the seat's kind: human or bot
    credential: str | None
    game_type: str
    protocol: str
    # who the client is, as its node tells it (never the client): equal on a later claim when the
    # same client asks again (a finished table's rematch); None when no later claim can be it
    client_key: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class MixedAnswer(Message):
    """Seated or waiting (``ok``); refused with the reason; not here (no reason). A refusal after
    ``ok`` ends the waiting player's session (its open game expired, its rematch was cancelled)."""

    kind = "mixed.answer"
    request: str
    ok: bool
    reason: str | None


@dataclass(frozen=True, kw_only=True, slots=True)
class MixedLeft(Message):
    """The player left before its table started."""

    kind = "mixed.left"
    request: str
    node: str


# ---- the operator's decisions, between nodes
@dataclass(frozen=True, kw_only=True, slots=True)
class ModerationChanged(Message):
    """The operator changed something on ``node`` that every node must know (a ban or a mute
    given or lifted, a notice), sent to every node; or asks the node hosting a game to close it,
    sent to that node. What ``change`` says is the composition root's: the cluster carries it."""

    kind = "moderation.changed"
    node: str
    change: dict[str, Any]


def _state(v: Any) -> TableState | None:
    if v is None:
        return None
    d = _obj(v)
    if set(d) != {"chairs", "paused"} or type(d["chairs"]) is not list or len(d["chairs"]) != 4:
        raise WireError("a table state is {chairs: [four chairs], paused}")
    chairs = []
    for c in d["chairs"]:
        c = _obj(c)
        if set(c) != {"occupant", "timed_out", "timeouts", "errors"}:
            raise WireError("a chair is {occupant, timed_out, timeouts, errors}")
        occupant = _str(c["occupant"])
        if occupant not in ("empty", "human", "bot"):
            raise WireError(f"unknown occupant {occupant!r}")
        chairs.append(ChairState(occupant, _bool(c["timed_out"]), _int(c["timeouts"]), _int(c["errors"])))
    return TableState(tuple(chairs), _bool(d["paused"]))


def _plain_state(s: TableState | None) -> Any:
    if s is None:
        return None
    chairs = [
        {"occupant": c.occupant, "timed_out": c.timed_out, "timeouts": c.timeouts, "errors": c.errors} for c in s.chairs
    ]
    return {"chairs": chairs, "paused": s.paused}


# a field's type -> its checker (decoding) and its plain form (encoding)
_CHECKS: dict[Any, _F] = {
    int: _int,
    int | None: _opt_int,
    bool: _bool,
    str: _str,
    str | None: _opt_str,
    tuple[int, ...]: _ints,
    list[str]: _strs,
    dict[str, Any]: _obj,
    dict[str, str]: _text_map,
    Phase: _phase,
    TableStatus: _status,
    list[TableEvent]: _events,
    TableState | None: _state,
}
_PLAIN: dict[Any, Callable[[Any], Any]] = {
    Phase: lambda v: v.value,
    TableStatus: lambda v: v.value,
    list[TableEvent]: lambda v: [encode_event(te) for te in v],
    TableState | None: _plain_state,
}


def _schema(cls: type[Message]) -> tuple[tuple[str, _F, Callable[[Any], Any] | None], ...]:
    hints = get_type_hints(cls)
    out = []
    for f in fields(cast(Any, cls)):
        hint = hints[f.name]
        if hint not in _CHECKS:  # pragma: no cover - import-time guard
            raise RuntimeError(f"moonshot.cluster.messages: {cls.__name__}.{f.name}: no checker for {hint}")
        out.append((f.name, _CHECKS[hint], _PLAIN.get(hint)))
    return tuple(out)


MESSAGES: dict[str, type[Message]] = {
    c.kind: c
    for c in (
        Submit,
        Unreadable,
        Detach,
        Attach,
        Events,
        Request,
        Rejected,
        Closed,
        Notice,
        Matched,
        Attached,
        Refused,
        Adopted,
        HttpRequest,
        HttpHead,
        HttpChunk,
        HttpEnd,
        HttpCancel,
        LobbyEvent,
        MixedClaim,
        MixedAnswer,
        MixedLeft,
        ModerationChanged,
    )
}
_SCHEMAS = {cls: _schema(cls) for cls in MESSAGES.values()}

# kinds a player's node sends to a table's owner (the rest go the other way)
TO_TABLE = frozenset(c.kind for c in (Submit, Unreadable, Detach, Attach))
HTTP = frozenset(c.kind for c in (HttpRequest, HttpHead, HttpChunk, HttpEnd, HttpCancel))
MIXED = frozenset(k for k in MESSAGES if k.startswith("mixed."))


def encode(msg: Message) -> str:
    """One message as JSON text."""
    schema = _SCHEMAS.get(type(msg))
    if schema is None:
        raise WireError(f"not a message: {type(msg).__name__}")
    out: dict[str, Any] = {"kind": msg.kind}
    for name, _, plain in schema:
        v = getattr(msg, name)
        out[name] = plain(v) if plain is not None else v
    return json.dumps(out, separators=(",", ":"))


def decode(data: bytes | str) -> Message:
    """A message read from a stream, checked against its class; :class:`WireError` else."""
    if len(data) > MAX_MESSAGE:
        raise WireError(f"message over {MAX_MESSAGE} bytes")
    try:
        raw = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise WireError(f"not JSON: {type(e).__name__}") from None
    if type(raw) is not dict:
        raise WireError("a message is a JSON object")
    k = raw.get("kind")
    cls = MESSAGES.get(k) if type(k) is str else None
    if cls is None:
        raise WireError(f"unknown message kind {k!r}")
    schema = _SCHEMAS[cls]
    if len(raw) != len(schema) + 1:
        names = {n for n, _, _ in schema}
        extra = sorted(set(raw) - names - {"kind"})
        missing = sorted(names - set(raw))
        raise WireError(f"{k}: unexpected fields {extra} or missing {missing}")
    args: dict[str, Any] = {}
    for name, check, _ in schema:
        if name not in raw:
            raise WireError(f"{k}: missing field {name!r}")
        try:
            args[name] = check(raw[name])
        except WireError as e:
            raise WireError(f"{k}.{name}: {e}") from None
        except (TypeError, ValueError) as e:
            raise WireError(f"{k}.{name}: {e}") from None
    return cls(**args)


def describe(data: bytes | str, limit: int = 120) -> str:
    """A short, printable excerpt of a refused entry for the log line."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return json.dumps(text[:limit])


def _check_complete(classes: Sequence[type[ev.Event]]) -> None:  # pragma: no cover - import-time guard
    missing = [c.__name__ for c in classes if c not in _EVENT_FIELDS]
    if missing:
        raise RuntimeError(f"moonshot.cluster.messages: no schema for events {missing}")


_check_complete([c for c in vars(ev).values() if isinstance(c, type) and issubclass(c, ev.Event) and c is not ev.Event])
