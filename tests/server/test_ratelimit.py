"""Token buckets: a burst at once, then the sustained rate; nothing taken when refused."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from moonshot.server.ratelimit import TokenBucket


def test_burst_then_rate() -> None:
    b = TokenBucket(rate=100, burst=1000)
    assert b.take(1000, 0.0)
    assert not b.take(1, 0.0)
    assert b.take(50, 0.5)  # half a second refills 50
    assert not b.take(1, 0.5)
    assert b.take(1000, 100.0)  # never more than the burst
    assert not b.take(1, 100.0)


def test_a_refused_take_takes_nothing() -> None:
    b = TokenBucket(rate=10, burst=100)
    assert not b.take(101, 0.0)
    assert b.take(100, 0.0)


@given(st.lists(st.tuples(st.floats(0, 10), st.integers(0, 500)), max_size=50))
def test_never_more_than_burst_plus_rate_times_time(steps: list[tuple[float, int]]) -> None:
    b = TokenBucket(rate=100, burst=300)
    now = 0.0
    taken = 0
    for dt, n in steps:
        now += dt
        if b.take(n, now):
            taken += n
    assert taken <= 300 + 100 * now + 1e-6
