"""The PROXY protocol parser, fed bytes as a stream gives them."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from moonshot.runtime.proxyproto import (
    MAX_V2,
    V1_MAX,
    V2_SIGNATURE,
    ProxyError,
    ProxyHeader,
    ProxyHeaderParser,
    encode_v1,
    encode_v2,
    parse_v1,
    parse_v2,
)


def read_all(data: bytes, step: int | None = None) -> tuple[ProxyHeader | None, bytes]:
    """Feed ``data`` as a reader that takes exactly ``need`` bytes (or ``step`` at a time)."""
    p = ProxyHeaderParser()
    k = 0
    while k < len(data):
        n = step or p.need
        got = p.feed(data[k : k + n])
        k += n
        if got is not None:
            return got, p.rest + data[k:]
    return None, b""


def test_v1_tcp4_tcp6_unknown() -> None:
    h, rest = read_all(b"PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\nHELLO")
    assert h == ProxyHeader(1, "192.0.2.1", 56324, "198.51.100.2", 443) and rest == b"HELLO"
    h, _ = read_all(b"PROXY TCP6 2001:db8::1 2001:db8::2 1 2\r\n")
    assert h is not None and h.source == "2001:db8::1"
    h, rest = read_all(b"PROXY UNKNOWN whatever\r\nX")
    assert h == ProxyHeader(1) and rest == b"X"


def test_v2_inet_inet6_local_and_tlvs() -> None:
    h, rest = read_all(encode_v2("203.0.113.5", 1234, "10.0.0.1", 40405) + b"{}")
    assert h == ProxyHeader(2, "203.0.113.5", 1234, "10.0.0.1", 40405) and rest == b"{}"
    h, _ = read_all(encode_v2("2001:db8::7", 9, "2001:db8::8", 10, tlvs=b"\x04\x00\x02ab"))
    assert h is not None and (h.source, h.source_port) == ("2001:db8::7", 9)
    local = V2_SIGNATURE + bytes((0x20, 0x00, 0, 0))
    h, rest = read_all(local + b"data")
    assert h == ProxyHeader(2) and rest == b"data"


def test_need_never_reads_past_the_header() -> None:
    data = encode_v1("192.0.2.1", 5, "192.0.2.2", 6)
    p = ProxyHeaderParser()
    taken = 0
    while p.header is None:
        n = p.need
        assert taken + n <= len(data)
        p.feed(data[taken : taken + n])
        taken += n
    assert taken == len(data) and p.need == 0
    v2 = encode_v2("192.0.2.1", 5, "192.0.2.2", 6)
    h, rest = read_all(v2)
    assert h is not None and rest == b""


@pytest.mark.parametrize(
    "bad",
    [
        b"GET / HTTP/1.1\r\n",
        b'{"message": "join"}\n',
        b"PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n",
        b"PROXY TCP4 1.2.3.4 5.6.7.8 1 70000\r\n",
        b"PROXY TCP4 1.2.3.4 5.6.7.8 01 2\r\n",
        b"PROXY TCP4 ::1 5.6.7.8 1 2\r\n",
        b"PROXY TCP5 1.2.3.4 5.6.7.8 1 2\r\n",
        b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n",
        b"PROXY TCP4 1.2.3.4 \xff.6.7.8 1 2\r\n",
        b"PROXY UNKNOWN " + b"x" * 200 + b"\r\n",
        V2_SIGNATURE + bytes((0x11, 0x11, 0, 12)) + bytes(12),  # version 1 in a v2 header
        V2_SIGNATURE + bytes((0x22, 0x11, 0, 12)) + bytes(12),  # command 2
        V2_SIGNATURE + bytes((0x21, 0x11, 0, 4)) + bytes(4),  # too short for IPv4
        V2_SIGNATURE + bytes((0x21, 0x51, 0, 12)) + bytes(12),  # family 5
        V2_SIGNATURE + bytes((0x21, 0x11)) + (MAX_V2).to_bytes(2, "big"),  # oversized
    ],
)
def test_malformed_or_oversized_headers_are_refused(bad: bytes) -> None:
    with pytest.raises(ProxyError):
        read_all(bad, step=1)
    with pytest.raises(ProxyError):
        read_all(bad)


def test_an_overlong_v1_line_is_refused_before_its_end() -> None:
    p = ProxyHeaderParser()
    with pytest.raises(ProxyError, match="over 107"):
        p.feed(b"PROXY UNKNOWN " + b"x" * V1_MAX)


addresses4 = st.ip_addresses(v=4).map(str)
addresses6 = st.ip_addresses(v=6).filter(lambda a: a.ipv4_mapped is None).map(str)
ports = st.integers(0, 65535)


@given(st.one_of(st.tuples(addresses4, addresses4), st.tuples(addresses6, addresses6)), ports, ports, st.binary())
def test_round_trip_any_split(pair: tuple[str, str], sport: int, dport: int, after: bytes) -> None:
    src, dst = pair
    for enc in (encode_v1, encode_v2):
        data = enc(src, sport, dst, dport) + after
        for step in (None, 1, 7, len(data)):
            h, rest = read_all(data, step)
            assert h is not None and (h.source, h.source_port, h.dest, h.dest_port) == (src, sport, dst, dport)
            assert rest == after


@given(st.binary(max_size=300))
def test_garbage_never_raises_anything_but_proxy_error(data: bytes) -> None:
    for step in (None, 1, 5):
        with contextlib.suppress(ProxyError):
            read_all(data, step)
    for parse in (parse_v1, parse_v2):
        with contextlib.suppress(ProxyError):
            parse(data)


@given(st.binary(min_size=0, max_size=40), st.integers(0, 40))
def test_mangled_headers_never_raise_anything_but_proxy_error(noise: bytes, at: int) -> None:
    for good in (encode_v1("192.0.2.1", 1, "192.0.2.2", 2), encode_v2("2001:db8::1", 1, "2001:db8::2", 2)):
        data = good[:at] + noise + good[at:]
        try:
            h, _ = read_all(data)
        except ProxyError:
            continue
        assert h is None or h.version in (1, 2)
