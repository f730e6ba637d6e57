"""Token buckets: how a connection's input is limited (bytes and messages per second).

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


__all__ = ["TokenBucket"]
