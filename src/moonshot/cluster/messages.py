"""The messages between the nodes of a cluster: an explicit schema, JSON on the wire.

Every message a node writes to another node's stream (see :mod:`moonshot.cluster.node`) is a
JSON object with a kind ``k`` and the fields that kind names in :data:`MESSAGES`, each of a
checked type. Table events travel as ``[version, forced, name, field...]`` with the fields of
that event class listed in :data:`EVENTS` (the same order as its constructor). Decoding checks
every field and builds only the listed event classes from plain values: nothing in a message
can name a class, a function or a module, so a hostile or corrupt stream entry is at worst a
:class:`WireError` (the reader logs it and drops the entry). Unknown kinds, unknown fields,
missing fields and values of the wrong type are all refused.

Why JSON rather than MessagePack: no extra dependency, the entries read plainly in
``redis-cli XRANGE``, and at the sizes here (a few events per message) ``json`` costs about the
same as a pickle did.

The module is pure (no I/O), like the core.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from moonshot import events as ev
from moonshot.engine import Phase
from moonshot.rules import PassDirection
from moonshot.server.table import TableEvent, TableStatus


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


def _status(v: Any) -> str:
    try:
        return TableStatus(_str(v)).value
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
# kind -> {field: checker}. Every field is required; a field that may be absent is nullable.
# Table <- player's node:  sb submit, prj the player's answer was unreadable, dt detach,
#                          at attach (resume_session)
# Table -> player's node:  ev events, rq decision request, rj rejected, cl closed, mt matched,
#                          ak / rf attach accepted / refused, ad adopted by another node, nt a
#                          table notice (paused / resumed, its cause and text)
# HTTP between nodes:      hr a request forwarded to the node hosting its game, hs its
#                          response's head, hc a body chunk, he the end, hx the requester gave up,
#                          lb a lobby event for every node's lobby streams
# Kierki (moonshot.cluster.kierki): ka a client's node claims a free seat (IAM<seat>),
#                          km seated (a new table, a claimed or a waited-for seat), kf claim
#                          refused, kq a decision request with the trick's number and cards
#                          (TRICK) and whether a seat is empty (p: TRICK held back), kr the
#                          table is whole again (send what was held), kj the answer was
#                          rejected (WRONG, or a timeout)
# Trend (moonshot.cluster.trend): tev events with each chair's Trend status and
#                          (timeouts, errors) counts, tmt matched, tat attach (a rejoin),
#                          tak / trf attach accepted / refused
# Mixed tables (moonshot.cluster.mixed): mc a player's node asks the node hosting a lobby
#                          code's table (an open HTTP game, a tournament) to seat its player, ma
#                          the answer (seated or waiting; refused with the reason; not here), mm
#                          seated at a table that started, mx the player left before it started
_T = {"t": _str, "b": _str}
MESSAGES: dict[str, dict[str, _F]] = {
    "sb": {**_T, "c": _int, "a": _obj, "rid": _opt_int},
    "prj": {**_T, "c": _int, "rid": _opt_int, "why": _str},
    "dt": {**_T, "c": _int, "why": _str},
    "at": {**_T, "c": _int, "node": _str},
    "ev": {**_T, "e": _events},
    "rq": {**_T, "c": _int, "rid": _int, "v": _int, "ph": _phase, "lp": _int, "hand": _int},
    "rj": {**_T, "rid": _opt_int, "why": _str},
    "cl": {**_T, "why": _str, "st": _status},
    "nt": {**_T, "kd": _str, "cs": _str, "tx": _str},
    "mt": {
        **_T,
        "ticket": _str,
        "c": _int,
        "owner": _str,
        "names": _strs,
        "rules": _str,
        "cred": _opt_str,
    },
    "ak": dict(_T),
    "rf": dict(_T),
    "ad": {**_T, "owner": _str},
    "hr": {"r": _str, "node": _str, "m": _str, "p": _str, "h": _text_map, "body": _str},
    "hs": {"r": _str, "st": _int, "h": _text_map, "stream": _bool},
    "hc": {"r": _str, "d": _str},
    "he": {"r": _str},
    "hx": {"r": _str},
    "lb": {"e": _obj, "node": _str},
    "ka": {**_T, "c": _int, "node": _str, "ticket": _str},
    "km": {**_T, "ticket": _str, "c": _int, "owner": _str, "names": _strs},
    "kf": {**_T, "ticket": _str},
    "kq": {**_T, "c": _int, "rid": _int, "v": _int, "tn": _int, "tc": _ints, "p": _bool},
    "kr": dict(_T),
    "kj": {**_T, "rid": _int, "why": _str},
    "tev": {**_T, "e": _events, "st": _ints, "n": _ints},
    "tmt": {**_T, "ticket": _str, "c": _int, "owner": _str, "names": _strs, "rules": _str},
    "tat": {**_T, "c": _int, "node": _str},
    "tak": {**_T, "c": _int, "owner": _str, "names": _strs, "rules": _str},
    "trf": {**_T, "why": _str},
    "mc": {
        "r": _str,
        "node": _str,
        "code": _opt_str,
        "tok": _opt_str,
        "name": _str,
        "kind": _str,
        "cred": _opt_str,
        "gt": _str,
        "pr": _str,  # the player's protocol: sessions or trend
    },
    "ma": {"r": _str, "ok": _bool, "why": _opt_str},
    # rs: the table is a restored game (a tournament's, after its node died): the player joins mid-game
    "mm": {**_T, "r": _str, "c": _int, "owner": _str, "names": _strs, "rules": _str, "cred": _opt_str, "rs": _bool},
    "mx": {"r": _str, "node": _str},
}
# kinds a player's node sends to a table's owner (the rest go the other way)
TO_TABLE = frozenset({"sb", "prj", "dt", "at"})
HTTP = frozenset({"hr", "hs", "hc", "he", "hx", "lb"})
KIERKI = frozenset({"ka", "km", "kf", "kq", "kr", "kj"})  # handled by moonshot.cluster.kierki
TREND = frozenset({"tev", "tmt", "tat", "tak", "trf"})
MIXED = frozenset({"mc", "ma", "mm", "mx"})  # handled by moonshot.cluster.mixed


def encode(msg: dict[str, Any]) -> bytes:
    """One message as JSON bytes. Events (``ev``'s ``e``) are :class:`TableEvent` s."""
    k = msg["k"]
    if k not in MESSAGES:
        raise WireError(f"unknown message kind {k!r}")
    if k in ("ev", "tev"):
        msg = {**msg, "e": [encode_event(te) for te in msg["e"]]}
    elif k == "rq" and isinstance(msg["ph"], Phase):
        msg = {**msg, "ph": msg["ph"].value}
    return json.dumps(msg, separators=(",", ":")).encode()


def decode(data: bytes | str) -> dict[str, Any]:
    """A message read from a stream, checked against :data:`MESSAGES`; :class:`WireError` else."""
    if len(data) > MAX_MESSAGE:
        raise WireError(f"message over {MAX_MESSAGE} bytes")
    try:
        raw = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise WireError(f"not JSON: {type(e).__name__}") from None
    if type(raw) is not dict:
        raise WireError("a message is a JSON object")
    k = raw.get("k")
    schema = MESSAGES.get(k) if type(k) is str else None
    if schema is None:
        raise WireError(f"unknown message kind {k!r}")
    if len(raw) != len(schema) + 1:
        extra = sorted(set(raw) - set(schema) - {"k"})
        missing = sorted(set(schema) - set(raw))
        raise WireError(f"{k}: unexpected fields {extra} or missing {missing}")
    out: dict[str, Any] = {"k": k}
    for name, check in schema.items():
        if name not in raw:
            raise WireError(f"{k}: missing field {name!r}")
        try:
            out[name] = check(raw[name])
        except WireError as e:
            raise WireError(f"{k}.{name}: {e}") from None
        except (TypeError, ValueError) as e:
            raise WireError(f"{k}.{name}: {e}") from None
    return out


def describe(data: bytes | str, limit: int = 120) -> str:
    """A short, printable excerpt of a refused entry for the log line."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return json.dumps(text[:limit])


__all__ = [
    "EVENTS",
    "HTTP",
    "KIERKI",
    "MESSAGES",
    "MIXED",
    "TO_TABLE",
    "TREND",
    "WireError",
    "decode",
    "decode_event",
    "describe",
    "encode",
    "encode_event",
]


def _check_complete(classes: Sequence[type[ev.Event]]) -> None:  # pragma: no cover - import-time guard
    missing = [c.__name__ for c in classes if c not in _EVENT_FIELDS]
    if missing:
        raise RuntimeError(f"moonshot.cluster.messages: no schema for events {missing}")


_check_complete([c for c in vars(ev).values() if isinstance(c, type) and issubclass(c, ev.Event) and c is not ev.Event])
