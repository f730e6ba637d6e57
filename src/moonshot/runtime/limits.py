"""Fair shares per client: what one address (and one name) may hold at once, and how fast it may ask.

One :class:`ClientGuard` per server process holds every per-client limit of every protocol, all
configured by one :class:`ClientLimits` (``moonshot serve --limit KEY=VALUE``; the table of limits
is in docs/server.md):

* :class:`Holds`: how many of a thing each key (an address, a name) holds at once, up to a cap
  (connections, SSE streams, players waiting for a table, open lobby games). ``acquire`` gives a
  :class:`Hold` (or None: refused); releasing it twice is harmless;
* :class:`Rates`: a token bucket per key (lobby posts, chat lines, reviews started, hints, SSE
  streams opened, new names bound, tables started); ``take`` answers 0 (allowed) or the seconds
  until it would be (the ``Retry-After``), ``take_all`` takes from several keys or from none, and
  ``reserve`` takes a token that is not there yet (the seconds to wait for it) up to a bound;
* :class:`Penalties`: an address whose connection was dropped for flooding waits before its next
  connection is read: ``penalty`` seconds, doubled for each drop while it is remembered, up to
  ``penalty_max``; forgotten after ``penalty_forget`` quiet seconds.

The clock is passed in (``time.monotonic`` by default), so tests drive it by hand. Every map is
bounded: keys holding nothing, full buckets and forgotten penalties are dropped, so an attacker
with many names costs memory only while its holds last.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from moonshot.runtime.clients import Proxies, peer_ip, share_key
from moonshot.runtime.controls import Controls
from moonshot.runtime.ratelimit import TokenBucket

Clock = Callable[[], float]


@dataclass
class ClientLimits:
    """Every per-client limit, with its default (generous: many honest clients share an address
    behind a NAT, and tests run dozens of players from 127.0.0.1)."""

    connections_per_address: int = 512  # Sessions, Trend and Kierki TCP connections at once, together
    sessions_per_address: int = 1024  # open Sessions sessions (one chair each), over all connections
    waiting_per_address: int = 256  # Sessions sessions and Trend players waiting in the lobby for a table
    streams_per_address: int = 64  # HTTP SSE streams (lobby and games) at once
    streams_per_name: int = 8  # ... of them under one name
    # how fast an address may open SSE streams, bind new names and start tables (a burst, then a
    # rate): the caps above bound what it holds, these spread what setting it up costs the others
    streams_opened_per_s: float = 2.0  # SSE streams opened per second, per address (beyond: they wait)
    streams_opened_burst: float = 8.0
    streams_opened_wait: float = 10.0  # ... at most this long (beyond: 429)
    names_per_s: float = 1.0  # names bound for the first time (HTTP) per second, per address
    names_burst: float = 8.0
    # tables started per second, per address: by every lobby (Sessions, Trend, Kierki; the Turbo
    # lobby's web games; a cluster's Redis pools), each asking start_table below
    tables_per_s: float = 1.0
    tables_burst: float = 16.0
    open_games_per_name: int = 4  # Turbo lobby games created and not started
    open_games_per_address: int = 32
    tournaments_per_address: int = 4  # tournaments created over HTTP and not finished
    lobby_per_s: float = 5.0  # lobby and tournament POSTs per second, per name (and burst below)
    lobby_burst: float = 20.0
    lobby_per_address_per_s: float = 20.0  # ... per address, over all its names
    lobby_address_burst: float = 100.0
    chat_per_s: float = 1.0  # chat lines (lobby and game) per second, per name
    chat_burst: float = 10.0
    chat_per_address_per_s: float = 5.0
    chat_address_burst: float = 40.0
    # game reviews (moonshot.play.review_pool): new reviews started per name and per address (a
    # review served from the store, or one already running, costs nothing); hints per name
    review_per_s: float = 0.1
    review_burst: float = 4.0
    review_per_address_per_s: float = 0.5
    review_address_burst: float = 20.0
    reviews_per_name: int = 2  # reviews queued or running at once, started under one name
    reviews_queued: int = 20  # ... in all on this server (beyond: 429)
    hint_per_s: float = 0.5
    hint_burst: float = 5.0
    tarpit: float = 1.0  # seconds an HTTP request over a rate waits before its 429
    chat_lines_per_game: int = 2000  # a game's chat log holds at most this many lines
    max_body: int = 64 * 1024  # HTTP request body bytes (refused at Content-Length or as it streams)
    penalty: float = 1.0  # seconds before a connection from an address just dropped is read
    penalty_max: float = 60.0  # the penalty doubles for each drop, up to this
    penalty_forget: float = 300.0  # seconds without a drop before an address's penalty is forgotten
    game_expiry: float = 3600.0  # seconds an open lobby game nobody joins stays open (<= 0: forever)
    lobby_idle: float = 3600.0  # seconds a lobby stream may stay open with no request under its name
    abandon_after: float = 30.0  # seconds a lobby table whose players all left waits for one (< 0: never ends)

    def replace(self, **changes: Any) -> ClientLimits:
        return dataclasses.replace(self, **changes)

    @classmethod
    def keys(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    def with_settings(self, settings: dict[str, str]) -> ClientLimits:
        """These limits with ``settings`` (``{"streams_per_name": "2"}``; dashes allowed in keys);
        ValueError names an unknown key or a bad value."""
        types = {f.name: f.type for f in dataclasses.fields(self)}
        changes: dict[str, Any] = {}
        for raw, value in settings.items():
            key = raw.strip().replace("-", "_")
            if key not in types:
                raise ValueError(f"unknown limit {raw!r}; known: {', '.join(self.keys())}")
            try:
                changes[key] = int(value) if types[key] in ("int", int) else float(value)
            except ValueError:
                raise ValueError(f"limit {raw}: {value!r} is not a number") from None
            if changes[key] < 0 and key not in ("game_expiry", "lobby_idle", "abandon_after"):
                raise ValueError(f"limit {raw}: {value!r} is negative")
        return dataclasses.replace(self, **changes)


def address_of(peer: Any) -> str:
    """The share key of a peer (``("127.0.0.1", 5123)``, ``"127.0.0.1:5123"``): its address, an
    IPv6 one as its /64 and an IPv4-mapped one in IPv4 form (:func:`~moonshot.runtime.clients.share_key`),
    so one client is one key whichever way it came."""
    return share_key(peer_ip(peer))


class Hold:
    """One thing a key holds (a connection, a stream); ``release`` gives it back, once."""

    __slots__ = ("_holds", "key")

    def __init__(self, holds: Holds, key: str) -> None:
        self._holds: Holds | None = holds
        self.key = key

    def release(self) -> None:
        holds, self._holds = self._holds, None
        if holds is not None:
            holds._give(self.key)

    @property
    def held(self) -> bool:
        return self._holds is not None


class Holds:
    """How many of one thing each key holds at once, at most ``cap``."""

    def __init__(self, cap: int, what: str) -> None:
        self.cap = cap
        self.what = what  # for refusals: "connections from this address"
        self.counts: dict[str, int] = {}
        self.refused = 0  # holds refused at the cap (the operator's metrics, by limit)

    def acquire(self, key: str) -> Hold | None:
        n = self.counts.get(key, 0)
        if n >= self.cap:
            self.refused += 1
            return None
        self.counts[key] = n + 1
        return Hold(self, key)

    def count(self, key: str) -> int:
        return self.counts.get(key, 0)

    def refusal(self) -> str:
        return f"too many {self.what} (at most {self.cap})"

    def _give(self, key: str) -> None:
        n = self.counts.get(key, 0) - 1
        if n > 0:
            self.counts[key] = n
        else:
            self.counts.pop(key, None)


class Rates:
    """A token bucket per key: ``rate`` a second, bursts of ``burst``."""

    PRUNE_AT = 4096  # keys kept before full buckets are dropped

    def __init__(self, rate: float, burst: float, clock: Clock, what: str) -> None:
        self.rate = rate
        self.burst = max(1.0, burst)
        self.clock = clock
        self.what = what
        self.buckets: dict[str, TokenBucket] = {}
        self.refused = 0  # takes refused (the operator's metrics, by limit)

    def _bucket(self, key: str, now: float) -> TokenBucket:
        """``key``'s bucket, a full one if it had none (pruning idle buckets past ``PRUNE_AT``)."""
        b = self.buckets.get(key)
        if b is None:
            if len(self.buckets) >= self.PRUNE_AT:
                self._prune(now)
            b = self.buckets[key] = TokenBucket(self.rate, self.burst)
        return b

    def take(self, key: str, n: float = 1.0) -> float:
        """0.0 if ``n`` tokens were taken; else the seconds until they would be there."""
        now = self.clock()
        b = self._bucket(key, now)
        if b.take(n, now):
            return 0.0
        self.refused += 1
        if self.rate <= 0:
            return 3600.0
        return max(0.001, (n - b.tokens) / self.rate)

    def wait(self, key: str, n: float = 1.0) -> float:
        """The seconds until ``n`` tokens would be there for ``key`` (0.0: now); takes nothing."""
        b = self.buckets.get(key)
        if b is None:
            return 0.0 if n <= self.burst else 3600.0
        now = self.clock()
        tokens = b.tokens if b.stamp is None else min(self.burst, b.tokens + max(0.0, now - b.stamp) * self.rate)
        if tokens >= n:
            return 0.0
        if self.rate <= 0:
            return 3600.0
        return max(0.001, (n - tokens) / self.rate)

    def reserve(self, key: str, max_wait: float) -> float | None:
        """A token for ``key`` now or later: the seconds until it is there (0.0: now), taken at
        once (the bucket goes into debt, so the next reservation waits longer); None, taking
        nothing, when that would be more than ``max_wait`` seconds."""
        now = self.clock()
        b = self._bucket(key, now)
        b.take(0.0, now)  # refilled to now
        wait = 0.0 if b.tokens >= 1.0 else (3600.0 if self.rate <= 0 else (1.0 - b.tokens) / self.rate)
        if wait > max_wait:
            self.refused += 1
            return None
        b.tokens -= 1.0
        return wait

    def take_all(self, keys: Iterable[str]) -> float:
        """One token from each of ``keys`` (0.0), or none at all: the seconds until every one of
        them would have one (a table of players from several addresses starts when each may)."""
        distinct = sorted(set(keys))
        wait = max((self.wait(k) for k in distinct), default=0.0)
        if wait:
            self.refused += 1
            return wait
        for k in distinct:
            self.take(k)
        return 0.0

    def _prune(self, now: float) -> None:
        for k, b in list(self.buckets.items()):
            if b.stamp is None or b.tokens + (now - b.stamp) * self.rate >= b.burst:
                del self.buckets[k]

    def refusal(self, wait: float) -> str:
        return f"too many {self.what} (at most {self.rate:g} a second): try again in {wait:.1f} s"


@dataclass
class _Record:
    drops: int
    until: float  # no connection from the address is read before this
    last: float  # the last drop


class Penalties:
    """Addresses whose connections were just dropped for flooding: their next ones wait."""

    PRUNE_AT = 4096

    def __init__(self, base: float, cap: float, forget: float, clock: Clock) -> None:
        self.base = base
        self.cap = cap
        self.forget = forget
        self.clock = clock
        self.records: dict[str, _Record] = {}

    def dropped(self, addr: str) -> float:
        """``addr`` was dropped now: the seconds its next connection will wait."""
        now = self.clock()
        r = self.records.get(addr)
        if r is None or now - r.last > self.forget:
            if len(self.records) >= self.PRUNE_AT:
                self._prune(now)
            r = self.records[addr] = _Record(0, now, now)
        r.drops += 1
        r.last = now
        wait = min(self.cap, self.base * float(2 ** min(r.drops - 1, 30)))
        r.until = max(r.until, now + wait)
        return wait

    def wait(self, addr: str) -> float:
        """Seconds before a new connection from ``addr`` may be read (0: at once)."""
        r = self.records.get(addr)
        if r is None:
            return 0.0
        return max(0.0, r.until - self.clock())

    def _prune(self, now: float) -> None:
        for k, r in list(self.records.items()):
            if now - r.last > self.forget:
                del self.records[k]


class ClientGuard:
    """Every per-client limit of one server process (all protocols), from one :class:`ClientLimits`."""

    def __init__(
        self, limits: ClientLimits | None = None, clock: Clock = time.monotonic, proxies: Proxies | None = None
    ) -> None:
        lim = self.limits = limits or ClientLimits()
        self.clock = clock
        # who may say who its client is (serve --trusted-proxy): every listener asks it, so the
        # shares below are the real clients' behind a proxy (docs/server.md#behind-a-proxy)
        self.proxies = proxies or Proxies()
        self.connections = Holds(lim.connections_per_address, "connections from this address")
        self.sessions = Holds(lim.sessions_per_address, "open sessions from this address")
        self.waiting = Holds(lim.waiting_per_address, "players from this address waiting for a table")
        self.streams_by_address = Holds(lim.streams_per_address, "event streams from this address")
        self.streams_by_name = Holds(lim.streams_per_name, "event streams under this name")
        self.games_by_name = Holds(lim.open_games_per_name, "open games created under this name")
        self.games_by_address = Holds(lim.open_games_per_address, "open games created from this address")
        self.tournaments = Holds(lim.tournaments_per_address, "unfinished tournaments created from this address")
        self.lobby_by_name = Rates(lim.lobby_per_s, lim.lobby_burst, clock, "lobby requests under this name")
        self.lobby_by_address = Rates(
            lim.lobby_per_address_per_s, lim.lobby_address_burst, clock, "lobby requests from this address"
        )
        self.chat_by_name = Rates(lim.chat_per_s, lim.chat_burst, clock, "chat lines under this name")
        self.chat_by_address = Rates(
            lim.chat_per_address_per_s, lim.chat_address_burst, clock, "chat lines from this address"
        )
        self.reviews_by_name = Rates(lim.review_per_s, lim.review_burst, clock, "reviews started under this name")
        self.reviews_by_address = Rates(
            lim.review_per_address_per_s, lim.review_address_burst, clock, "reviews started from this address"
        )
        self.hints_by_name = Rates(lim.hint_per_s, lim.hint_burst, clock, "hints under this name")
        self.streams_opened = Rates(
            lim.streams_opened_per_s, lim.streams_opened_burst, clock, "event streams opened from this address"
        )
        self.names_by_address = Rates(lim.names_per_s, lim.names_burst, clock, "new names from this address")
        self.tables_by_address = Rates(lim.tables_per_s, lim.tables_burst, clock, "tables started from this address")
        self.penalties = Penalties(lim.penalty, lim.penalty_max, lim.penalty_forget, clock)
        # the operator's bans, chat mutes and drain (runtime/controls.py), asked at every admission
        self.controls = Controls()
        self.refused = 0  # refusals of every kind, for the logs and the benchmark

    def admit(self, addr: str) -> tuple[Hold | None, float, str | None]:
        """A new connection from ``addr``: its hold (None: refused, with the reason) and the
        seconds it must wait before it is read (a penalty). A banned address is refused."""
        banned = self.controls.refusal(addr)
        if banned is not None:
            self.refused += 1
            return None, 0.0, banned
        hold = self.connections.acquire(addr)
        if hold is None:
            self.refused += 1
            return None, 0.0, self.connections.refusal()
        return hold, self.penalties.wait(addr), None

    def start_table(self, addresses: Iterable[str]) -> float:
        """A lobby would start a table for players from ``addresses`` (share keys): 0.0 (each
        address's rate took one), else the seconds until every one of them may start one. The one
        table rate: the runtime lobby (``Lobby.pace``) and a cluster's pools wait that long, the
        Turbo lobby refuses the game's start (429) until then."""
        wait = self.tables_by_address.take_all(a for a in addresses if a)
        if wait:
            self.refused += 1
        return wait

    def new_name(self, addr: str) -> float:
        """``addr`` binds a name nobody had (HTTP): 0.0, or the seconds until it may."""
        wait = self.names_by_address.take(addr) if addr else 0.0
        if wait:
            self.refused += 1
        return wait

    def dropped(self, addr: str) -> float:
        """A connection from ``addr`` was dropped for flooding; the penalty its next one waits."""
        return self.penalties.dropped(addr)

    def refusals(self) -> dict[str, int]:
        """Refusals so far by the limit that refused (``connections``, ``streams_by_name``,
        ``chat_by_address``, ...: this guard's attribute names); ``other`` counts those no
        :class:`Holds` or :class:`Rates` decided (a body too large, too many tournaments)."""
        counted = {name: v.refused for name, v in vars(self).items() if isinstance(v, Holds | Rates)}
        counted["other"] = max(0, self.refused - sum(counted.values()))
        return counted


__all__ = ["ClientGuard", "ClientLimits", "Hold", "Holds", "Penalties", "Rates", "address_of"]
