"""Per-client shares (moonshot.runtime.limits), on a clock driven by hand."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from hypothesis import given
from hypothesis import strategies as st

from moonshot.cli.commands import parse_limits
from moonshot.runtime.limits import ClientGuard, ClientLimits, Holds, Penalties, Rates, address_of


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_holds_cap_each_key_and_give_back_once() -> None:
    h = Holds(2, "streams")
    a1, a2 = h.acquire("a"), h.acquire("a")
    assert a1 is not None and a2 is not None
    assert h.acquire("a") is None and h.acquire("b") is not None  # one key's cap, not the others'
    a1.release()
    a1.release()  # twice: harmless, still one given back
    assert h.count("a") == 1
    assert h.acquire("a") is not None and h.acquire("a") is None
    assert "at most 2" in h.refusal()


@given(st.lists(st.tuples(st.sampled_from("abc"), st.booleans()), max_size=60))
def test_holds_never_exceed_the_cap_and_forget_empty_keys(ops: list[tuple[str, bool]]) -> None:
    h = Holds(3, "things")
    held: dict[str, list[object]] = {"a": [], "b": [], "c": []}
    for key, take in ops:
        if take:
            got = h.acquire(key)
            assert (got is None) == (len(held[key]) >= 3)
            if got is not None:
                held[key].append(got)
        elif held[key]:
            held[key].pop().release()  # type: ignore[attr-defined]
        assert h.count(key) == len(held[key]) <= 3
    assert set(h.counts) == {k for k, v in held.items() if v}


def test_rates_allow_a_burst_then_the_rate_and_say_how_long_to_wait() -> None:
    clock = Clock()
    r = Rates(2.0, 4.0, clock, "chat lines")
    assert [r.take("n") for _ in range(4)] == [0.0] * 4
    wait = r.take("n")
    assert wait == pytest.approx(0.5)
    assert r.take("m") == 0.0  # another key has its own bucket
    clock.now += 0.5
    assert r.take("n") == 0.0
    assert r.take("n") > 0
    assert "try again in" in r.refusal(0.5)


def test_rates_drop_full_buckets_when_many_keys() -> None:
    clock = Clock()
    r = Rates(1.0, 1.0, clock, "x")
    r.PRUNE_AT = 10
    for i in range(10):
        r.take(f"k{i}")
    clock.now += 5  # every bucket is full again
    r.take("new")
    assert set(r.buckets) == {"new"}


def test_penalties_double_with_each_drop_up_to_the_cap_and_are_forgotten() -> None:
    clock = Clock()
    p = Penalties(1.0, 8.0, 60.0, clock)
    assert p.wait("1.2.3.4") == 0.0
    assert [p.dropped("1.2.3.4") for _ in range(5)] == [1.0, 2.0, 4.0, 8.0, 8.0]
    assert p.wait("1.2.3.4") == 8.0 and p.wait("5.6.7.8") == 0.0
    clock.now += 3
    assert p.wait("1.2.3.4") == 5.0
    clock.now += 100  # quiet for longer than `forget`: a fresh start
    assert p.wait("1.2.3.4") == 0.0
    assert p.dropped("1.2.3.4") == 1.0


def test_guard_admits_connections_up_to_the_cap_and_reports_the_penalty() -> None:
    clock = Clock()
    g = ClientGuard(ClientLimits(connections_per_address=2, penalty=2.0), clock)
    h1, wait, why = g.admit("10.0.0.1")
    assert h1 is not None and wait == 0.0 and why is None
    g.admit("10.0.0.1")
    hold, _, why = g.admit("10.0.0.1")
    assert hold is None and why is not None and "at most 2" in why and g.refused == 1
    h1.release()
    assert g.dropped("10.0.0.1") == 2.0
    hold, wait, why = g.admit("10.0.0.1")
    assert hold is not None and wait == 2.0 and why is None


def test_rates_wait_says_when_without_taking() -> None:
    clock = Clock()
    r = Rates(2.0, 2.0, clock, "x")
    assert r.wait("a") == 0.0 and r.wait("a", 3) > 0  # never more than the burst at once
    r.take("a")
    r.take("a")
    assert r.wait("a") == pytest.approx(0.5)
    assert r.wait("a") == pytest.approx(0.5)  # asking took nothing
    clock.now += 0.5
    assert r.wait("a") == 0.0 and r.take("a") == 0.0


@given(
    st.lists(
        st.tuples(st.lists(st.sampled_from("abc"), min_size=1, max_size=4), st.floats(0.0, 2.0)),
        max_size=40,
    )
)
def test_take_all_takes_from_every_key_or_from_none(steps: list[tuple[list[str], float]]) -> None:
    """A table of several addresses: each one's bucket gives a token, or none does; what a key
    was given never passes its burst plus its rate over the time gone by."""
    clock = Clock()
    r = Rates(1.0, 2.0, clock, "tables")
    given_to = {"a": 0, "b": 0, "c": 0}
    start = clock.now
    for keys, dt in steps:
        clock.now += dt
        before = {k: r.wait(k) for k in set(keys)}
        wait = r.take_all(keys)
        if any(before.values()):
            assert wait == pytest.approx(max(before.values()))
        else:
            assert wait == 0.0
            for k in set(keys):
                given_to[k] += 1
        for k, n in given_to.items():
            assert n <= 2 + (clock.now - start) * 1.0 + 1e-9, k


def test_reserve_gives_a_later_turn_up_to_a_bound_and_the_next_waits_longer() -> None:
    clock = Clock()
    r = Rates(2.0, 1.0, clock, "streams")
    assert r.reserve("a", 1.0) == 0.0  # the burst
    assert r.reserve("a", 1.0) == pytest.approx(0.5)  # taken now, its turn half a second on
    assert r.reserve("a", 1.0) == pytest.approx(1.0)  # the next one after it
    assert r.reserve("a", 1.0) is None and r.refused == 1  # 1.5 s away: refused, nothing taken
    assert r.reserve("b", 1.0) == 0.0  # another key is not behind it
    clock.now += 1.0
    assert r.reserve("a", 1.0) == pytest.approx(0.5)


@given(st.lists(st.floats(0.0, 1.0), max_size=50))
def test_reserved_turns_never_come_faster_than_the_rate(gaps: list[float]) -> None:
    """Whenever they are asked, the turns given (now + wait) come in order, and any span of time
    holds at most the burst plus the rate times its length: many reservations at once are spread."""
    clock = Clock()
    r = Rates(4.0, 2.0, clock, "streams")
    turns: list[float] = []
    for gap in gaps:
        clock.now += gap
        wait = r.reserve("a", 5.0)
        if wait is not None:
            turns.append(clock.now + wait)
    assert turns == sorted(turns)
    for i in range(len(turns)):
        for j in range(i, len(turns)):
            assert j - i + 1 <= 2.0 + (turns[j] - turns[i]) * 4.0 + 1e-6


def test_guard_paces_tables_and_new_names_per_address() -> None:
    clock = Clock()
    g = ClientGuard(ClientLimits(tables_per_s=1.0, tables_burst=2, names_per_s=0.5, names_burst=1), clock)
    assert g.start_table(["10.0.0.1"]) == 0.0 and g.start_table(["10.0.0.1", "10.0.0.1"]) == 0.0
    wait = g.start_table(["10.0.0.1", "10.0.0.2"])  # the first is out of tables: neither pays
    assert wait == pytest.approx(1.0) and g.refused == 1
    assert g.tables_by_address.wait("10.0.0.2") == 0.0 and g.start_table(["10.0.0.2"]) == 0.0
    assert g.start_table(["", ""]) == 0.0  # no address known: nothing to pace
    assert g.new_name("10.0.0.1") == 0.0
    assert g.new_name("10.0.0.1") == pytest.approx(2.0) and g.new_name("10.0.0.3") == 0.0
    assert g.refusals()["tables_by_address"] == 1 and g.refusals()["names_by_address"] == 1
    assert g.refusals()["other"] == 0
    clock.now += 1.0
    assert g.start_table(["10.0.0.1"]) == 0.0


def test_limits_take_settings_by_name_and_refuse_unknown_or_bad_ones() -> None:
    lim = ClientLimits().with_settings({"streams-per-name": "2", "chat_per_s": "0.5", "game_expiry": "-1"})
    assert lim.streams_per_name == 2 and lim.chat_per_s == 0.5 and lim.game_expiry == -1
    lim = lim.with_settings({"streams_opened_per_s": "0.5", "tables-burst": "4", "names_per_s": "3"})
    assert (lim.streams_opened_per_s, lim.tables_burst, lim.names_per_s) == (0.5, 4.0, 3.0)
    with pytest.raises(ValueError, match="unknown limit"):
        ClientLimits().with_settings({"nope": "1"})
    with pytest.raises(ValueError, match="not a number"):
        ClientLimits().with_settings({"streams_per_name": "many"})
    with pytest.raises(ValueError, match="negative"):
        ClientLimits().with_settings({"streams_per_name": "-3"})


def test_an_address_is_its_host_part_and_mapped_ipv4_is_ipv4() -> None:
    assert address_of(("127.0.0.1", 5000)) == "127.0.0.1"
    assert address_of(("::ffff:10.1.2.3", 5000, 0, 0)) == "10.1.2.3"
    assert address_of("127.0.0.2:41000") == "127.0.0.2"
    assert address_of(("::1", 80, 0, 0)) == "::/64"  # an IPv6 client is counted per /64
    assert address_of(None) == "?"


def test_serve_takes_limits_from_flags_and_a_file_flags_winning(tmp_path: Path) -> None:
    f = tmp_path / "limits.json"
    f.write_text(json.dumps({"streams_per_name": 3, "chat_per_s": 2}))
    lim = parse_limits(("streams_per_name=5",), str(f))
    assert lim.streams_per_name == 5 and lim.chat_per_s == 2.0
    for bad in (("nope=1",), ("streams_per_name",), ("streams_per_name=x",)):
        with pytest.raises(click.BadParameter):
            parse_limits(bad)
    f.write_text("[1, 2]")
    with pytest.raises(click.BadParameter, match="not a JSON object"):
        parse_limits((), str(f))


def test_serve_refuses_an_unknown_limit_with_a_usage_error() -> None:
    from click.testing import CliRunner

    from moonshot.cli.commands import serve_cmd

    result = CliRunner().invoke(serve_cmd, ["--no-db", "--limit", "nope=1"])
    assert result.exit_code == 2 and "unknown limit" in result.output
