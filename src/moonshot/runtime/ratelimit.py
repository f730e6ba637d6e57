"""Token buckets: how a connection's input is limited (bytes and messages per second); and
:class:`AttemptLimiter`, how many wrong secrets a chair or an address may try.

A bucket holds up to ``burst`` tokens and refills at ``rate`` tokens per second; taking more than
it holds fails, and the protocol drops the connection with an error saying which limit it broke.
The clock is passed in (the event loop's ``time()``), so the bucket itself reads no clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TokenBucket:
    rate: float  # tokens per second, sustained
    burst: float  # tokens available at once (and at the start)
    tokens: float = field(default=-1.0)
    stamp: float | None = None  # when tokens were last counted

    def __post_init__(self) -> None:
        if self.tokens < 0:
            self.tokens = self.burst

    def take(self, n: float, now: float) -> bool:
        """Take ``n`` tokens at time ``now``; False (and nothing taken) if there are not enough."""
        if self.stamp is not None and now > self.stamp:
            self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if n > self.tokens:
            return False
        self.tokens -= n
        return True


class AttemptLimiter:
    """Failed tries at a secret (a re-join with a wrong session secret or token), counted per key:
    a chair, an address. A key with ``limit`` failures within ``window`` seconds is refused until
    its oldest failure is ``window`` seconds old, whatever the secret it tries then: so even a
    weak secret (a Trend token like ``12345678``) cannot be searched online. The keys are few
    (the chairs people left, the addresses that failed); the oldest are forgotten past
    ``max_keys``."""

    def __init__(self, limit: int = 5, window: float = 60.0, max_keys: int = 10_000) -> None:
        self.limit = limit
        self.window = window
        self.max_keys = max_keys
        self._fails: dict[object, list[float]] = {}

    def _recent(self, key: object, now: float) -> list[float]:
        times = [t for t in self._fails.get(key, ()) if now - t < self.window]
        if times:
            self._fails[key] = times
        else:
            self._fails.pop(key, None)
        return times

    def blocked(self, now: float, *keys: object) -> bool:
        """Is any of ``keys`` out of tries at ``now``?"""
        return any(len(self._recent(k, now)) >= self.limit for k in keys)

    def failed(self, now: float, *keys: object) -> None:
        """A wrong secret was tried under each of ``keys``."""
        for k in keys:
            self._fails.setdefault(k, []).append(now)
        while len(self._fails) > self.max_keys:
            del self._fails[next(iter(self._fails))]


__all__ = ["AttemptLimiter", "TokenBucket"]
