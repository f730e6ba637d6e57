"""Token buckets: a burst at once, then the sustained rate; nothing taken when refused."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from moonshot.runtime.ratelimit import TokenBucket


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


def test_wrong_secrets_past_the_limit_block_the_key_until_the_window_passes() -> None:
    from moonshot.runtime.ratelimit import AttemptLimiter

    lim = AttemptLimiter(limit=3, window=60.0)
    chair, addr, other = ("chair", 1), ("address", "10.0.0.1"), ("address", "10.0.0.2")
    for t in (0.0, 1.0):
        assert not lim.blocked(t, chair, addr)
        lim.failed(t, chair, addr)
    assert not lim.blocked(2.0, chair)
    lim.failed(2.0, chair, addr)
    assert lim.blocked(3.0, chair) and lim.blocked(3.0, addr) and lim.blocked(3.0, other, chair)
    assert not lim.blocked(3.0, other)
    assert not lim.blocked(60.5, chair)  # the first failure is a minute old: two left in the window


def test_the_limiter_forgets_the_oldest_keys() -> None:
    from moonshot.runtime.ratelimit import AttemptLimiter

    lim = AttemptLimiter(limit=1, window=60.0, max_keys=10)
    for k in range(100):
        lim.failed(0.0, k)
    assert len(lim._fails) == 10 and lim.blocked(0.0, 99) and not lim.blocked(0.0, 0)
