"""What the operator decided about clients, protocol-neutral: bans, chat mutes, and whether new
games are taken (drain).

:class:`Controls` is held by the server's :class:`~moonshot.runtime.limits.ClientGuard` (the one
registry every protocol asks when it admits a client), so every protocol enforces the same
decisions: a connection from a banned address is refused as the protocol refuses one over its
limits (Sessions' error reply, Kierki's, Trend's handshake answer, HTTP 403 with a JSON reason),
the lobby refuses a banned name a chair and everyone a new game while the server drains, and the
HTTP guard refuses a muted name's chat lines.

A ban names a person's name (compared NFKC-casefolded, a Sessions tag's ``(id)`` left out) or an
address or network (``203.0.113.7``, ``2001:db8::/48``; an IPv6 client is counted by its /64, so
a ban on one IPv6 address bans its /64). Each has an end (unix time; None: permanent) and says
who set it and why. Each ban and mute is kept in the store as its own row, and a node of a
cluster hears the others' (:mod:`moonshot.runtime.moderation`): :meth:`Controls.keep` and
:meth:`Controls.keep_mute` take one made elsewhere, :meth:`Ban.from_json` reads one back.
:meth:`Controls.to_json` / :meth:`Controls.load` read the older whole copy, migrated once. Nothing
here does I/O; the clock is passed in.
"""

from __future__ import annotations

import ipaddress
import re
import time
import unicodedata
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

Clock = Callable[[], float]
_BAN_FIELDS = frozenset(("kind", "value", "until", "reason", "by", "at"))
_SESSION_ID = re.compile(r"\(\d+\)$")  # a Sessions tag's session id: ``alice(12)``
KINDS = ("name", "address")


def name_key(name: str) -> str:
    """How names are compared: NFKC, casefolded, surrounding spaces and a ``(id)`` suffix off."""
    text = unicodedata.normalize("NFKC", name).strip()
    return _SESSION_ID.sub("", text).strip().casefold()


def network(text: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    """An address or CIDR network (``ValueError`` says what is wrong); an IPv4-mapped IPv6
    address is its IPv4 form, as clients are counted."""
    value = text.strip()
    try:
        net = ipaddress.ip_network(value, strict=False)
    except ValueError:
        raise ValueError(
            f"{text!r} is not an address or a network (203.0.113.7, 198.51.100.0/24, 2001:db8::/48)"
        ) from None
    if isinstance(net, ipaddress.IPv6Network) and net.prefixlen == 128 and net.network_address.ipv4_mapped:
        return ipaddress.IPv4Network(net.network_address.ipv4_mapped)
    return net


@dataclass(frozen=True)
class Ban:
    kind: str  # name | address
    value: str  # the name as given, or the network (normalised: 198.51.100.0/24)
    until: float | None  # unix time it ends; None: permanent
    reason: str = ""
    by: str = "operator"
    at: float = 0.0

    def active(self, now: float) -> bool:
        return self.until is None or now < self.until

    def refusal(self) -> str:
        """The reason a banned client is given."""
        if self.until is None:
            when = "permanently"
        else:
            when = f"until {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(self.until))}"
        why = f": {self.reason}" if self.reason else ""
        return f"banned {when}{why}"

    def key(self) -> tuple[str, str]:
        return (self.kind, name_key(self.value) if self.kind == "name" else self.value)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, raw: Any) -> Ban | None:
        """A ban kept by :meth:`to_json` (a store row, another node's message); None when it is
        not one (a damaged row is skipped, never fatal)."""
        if not isinstance(raw, dict) or set(raw) - _BAN_FIELDS:
            return None
        kind, value, until = raw.get("kind"), raw.get("value"), raw.get("until")
        reason, by, at = raw.get("reason", ""), raw.get("by", "operator"), raw.get("at", 0.0)
        if kind not in KINDS or not isinstance(value, str) or not value.strip():
            return None
        if until is not None and (isinstance(until, bool) or not isinstance(until, int | float)):
            return None
        if not isinstance(reason, str) or not isinstance(by, str):
            return None
        if isinstance(at, bool) or not isinstance(at, int | float):
            return None
        if kind == "address":
            try:
                value = str(network(value))
            except ValueError:
                return None
        return cls(kind, value, None if until is None else float(until), reason, by, float(at))


class Controls:
    """The operator's decisions about clients (bans, mutes) and new games (drain)."""

    def __init__(self, clock: Clock = time.time) -> None:
        self.clock = clock
        self.bans: dict[tuple[str, str], Ban] = {}
        self.mutes: dict[str, Ban] = {}  # name key -> a mute (kind "name")
        self.closed: str | None = None  # why new games are refused (draining); None: open
        self.notice: str | None = None  # the last notice broadcast (shown to streams that join later)
        self.refused = 0

    # ---------------------------------------------------------------- decisions
    def ban(self, kind: str, value: str, seconds: float | None, reason: str = "", by: str = "operator") -> Ban:
        """Ban a name or an address/network for ``seconds`` (None: permanently); replaces an
        earlier ban of the same thing. ``ValueError`` for a bad kind, address or duration."""
        if kind not in KINDS:
            raise ValueError(f"a ban is on a name or an address, not {kind!r}")
        if seconds is not None and seconds <= 0:
            raise ValueError("a ban's duration must be positive")
        if kind == "address":
            value = str(network(value))
        elif not name_key(value):
            raise ValueError("an empty name cannot be banned")
        now = self.clock()
        b = Ban(kind, value.strip(), None if seconds is None else now + seconds, reason, by, now)
        self.bans[b.key()] = b
        return b

    def unban(self, kind: str, value: str) -> Ban | None:
        """Lift a ban; the ban lifted (None: there was none)."""
        key = (kind, name_key(value) if kind == "name" else str(network(value)) if kind == "address" else value)
        return self.bans.pop(key, None)

    def mute(self, name: str, seconds: float | None, reason: str = "", by: str = "operator") -> Ban:
        if not name_key(name):
            raise ValueError("an empty name cannot be muted")
        now = self.clock()
        m = Ban("name", name.strip(), None if seconds is None else now + seconds, reason, by, now)
        self.mutes[name_key(name)] = m
        return m

    def unmute(self, name: str) -> Ban | None:
        return self.mutes.pop(name_key(name), None)

    def keep(self, ban: Ban) -> None:
        """Hold a ban made elsewhere (a store row, another node), replacing one of the same thing."""
        self.bans[ban.key()] = ban

    def keep_mute(self, mute: Ban) -> None:
        """Hold a mute made elsewhere (a store row, another node)."""
        self.mutes[name_key(mute.value)] = mute

    # ---------------------------------------------------------------- questions protocols ask
    def address_ban(self, addr: str) -> Ban | None:
        """The ban on the client counted under ``addr`` (an address, or an IPv6 /64), if any."""
        if not addr or not any(k == "address" for k, _ in self.bans):
            return None
        try:
            client = ipaddress.ip_network(addr, strict=False)
        except ValueError:
            return None
        now = self.clock()
        for b in list(self.bans.values()):
            if b.kind != "address":
                continue
            if not b.active(now):
                del self.bans[b.key()]
                continue
            net = ipaddress.ip_network(b.value)
            if net.version == client.version and net.overlaps(client):
                return b
        return None

    def name_ban(self, name: str) -> Ban | None:
        return self._lookup(self.bans, ("name", name_key(name))) if name else None

    def muted(self, name: str) -> Ban | None:
        return self._lookup(self.mutes, name_key(name)) if name else None

    def _lookup(self, table: dict[Any, Ban], key: Any) -> Ban | None:
        b = table.get(key)
        if b is not None and not b.active(self.clock()):
            del table[key]
            return None
        return b

    def refusal(self, addr: str = "", name: str = "") -> str | None:
        """Why a client from ``addr`` (under ``name``) is refused, or None."""
        b = self.address_ban(addr) or self.name_ban(name)
        if b is None:
            return None
        self.refused += 1
        return b.refusal()

    def active(self) -> list[Ban]:
        now = self.clock()
        return sorted((b for b in self.bans.values() if b.active(now)), key=lambda b: (b.kind, b.value))

    def active_mutes(self) -> list[Ban]:
        now = self.clock()
        return sorted((b for b in self.mutes.values() if b.active(now)), key=lambda b: b.value)

    # ---------------------------------------------------------------- kept in the store
    def to_json(self) -> dict[str, Any]:
        """The whole copy an older server kept under one key (read once, then kept a row each)."""
        return {"bans": [asdict(b) for b in self.active()], "mutes": [asdict(m) for m in self.active_mutes()]}

    def load(self, data: Any) -> None:
        """Take the bans and mutes kept by :meth:`to_json` (ended ones are dropped)."""
        if not isinstance(data, dict):
            return
        now = self.clock()
        for raw in data.get("bans", ()) if isinstance(data.get("bans"), list) else ():
            b = Ban.from_json(raw)
            if b is not None and b.active(now):
                self.keep(b)
        for raw in data.get("mutes", ()) if isinstance(data.get("mutes"), list) else ():
            m = Ban.from_json(raw)
            if m is not None and m.kind == "name" and m.active(now):
                self.keep_mute(m)


def duration(text: str | None) -> float | None:
    """``30m``, ``12h``, ``7d``, ``90s`` or ``permanent`` (also None, empty) -> seconds or None."""
    if text is None or text.strip().lower() in ("", "permanent", "forever"):
        return None
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*", text.lower())
    if not m:
        raise ValueError(f"{text!r} is not a duration (90s, 30m, 12h, 7d or permanent)")
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]


__all__ = ["Ban", "Controls", "duration", "name_key", "network"]
