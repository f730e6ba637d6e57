"""Who a client is: share keys, trusted proxies and the forwarded chain."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from moonshot.runtime.clients import Proxies, parse_cidr, peer_ip, share_key
from moonshot.runtime.limits import address_of


def test_share_key_ipv4_as_is_ipv6_per_64_and_mapped_as_ipv4() -> None:
    assert share_key("203.0.113.7") == "203.0.113.7"
    assert share_key("2001:db8:1:2:aaaa::1") == "2001:db8:1:2::/64"
    assert share_key("2001:db8:1:2:ffff:ffff:ffff:ffff") == "2001:db8:1:2::/64"
    assert share_key("2001:db8:1:3::1") == "2001:db8:1:3::/64"
    assert share_key("::ffff:10.1.2.3") == "10.1.2.3"
    assert share_key("[2001:db8::1]") == "2001:db8::/64"
    assert share_key("?") == "?"
    assert address_of(("2001:db8::5", 80, 0, 0)) == "2001:db8::/64"
    assert address_of(("::ffff:127.0.0.1", 80, 0, 0)) == "127.0.0.1"


@given(st.integers(0, 2**128 - 1), st.integers(0, 2**64 - 1))
def test_every_address_of_a_64_shares_one_key(addr: int, low: int) -> None:
    a = ipaddress.IPv6Address(addr)
    if a.ipv4_mapped is not None:
        return
    b = ipaddress.IPv6Address((addr >> 64 << 64) | low)
    assert share_key(str(a)) == share_key(str(b))
    assert ipaddress.ip_address(share_key(str(a)).split("/")[0]) in ipaddress.ip_network(share_key(str(b)))


def test_peer_ip_reads_every_form() -> None:
    assert peer_ip(("127.0.0.1", 5000)) == "127.0.0.1"
    assert peer_ip("127.0.0.2:41000") == "127.0.0.2"
    assert peer_ip("[::1]:80") == "::1"
    assert peer_ip(None) == "?"


def test_cidrs() -> None:
    assert str(parse_cidr("10.0.0.0/8")) == "10.0.0.0/8"
    assert str(parse_cidr("127.0.0.1")) == "127.0.0.1/32"
    assert str(parse_cidr("::ffff:10.0.0.0/104")) == "10.0.0.0/8"
    with pytest.raises(ValueError, match="not an address"):
        parse_cidr("proxy.example")
    p = Proxies(["10.0.0.0/8", "::1"])
    assert p.trusts("10.2.3.4") and p.trusts("::1") and p.trusts("::ffff:10.0.0.1")
    assert not p.trusts("11.0.0.1") and not p.trusts("?") and not Proxies().trusts("127.0.0.1")


PROXY = Proxies(["127.0.0.1", "10.0.0.0/8"])


def test_untrusted_peer_headers_are_ignored_loopback_too() -> None:
    headers = [("X-Forwarded-For", "1.2.3.4"), ("X-Forwarded-Proto", "https"), ("Forwarded", "for=5.6.7.8")]
    c = PROXY.resolve("192.0.2.9", headers, 4000)
    assert (c.ip, c.port, c.scheme, c.forwarded) == ("192.0.2.9", 4000, None, False)
    c = Proxies().resolve("127.0.0.1", headers)
    assert (c.ip, c.scheme) == ("127.0.0.1", None)


def test_xff_walks_from_the_right_past_trusted_hops() -> None:
    # the client may prepend anything: only what the trusted hops appended counts
    c = PROXY.resolve("127.0.0.1", [("x-forwarded-for", "6.6.6.6, 198.51.100.4, 10.1.1.1")])
    assert c.ip == "198.51.100.4" and c.forwarded and c.key == "198.51.100.4"
    c = PROXY.resolve("127.0.0.1", [("X-Forwarded-For", "6.6.6.6"), ("X-Forwarded-For", "2001:db8::9")])
    assert c.ip == "2001:db8::9" and c.key == "2001:db8::/64"
    # every hop trusted: the leftmost is the client
    assert PROXY.resolve("127.0.0.1", [("X-Forwarded-For", "10.0.0.5, 10.0.0.6")]).ip == "10.0.0.5"
    # garbage ends the walk at the hop that wrote it
    assert PROXY.resolve("127.0.0.1", [("X-Forwarded-For", "1.1.1.1, garbage, 10.0.0.6")]).ip == "10.0.0.6"
    assert PROXY.resolve("127.0.0.1", [("X-Forwarded-For", "unknown")]).ip == "127.0.0.1"


def test_scheme_from_the_hop_that_saw_the_client() -> None:
    c = PROXY.resolve("127.0.0.1", [("X-Forwarded-For", "198.51.100.4"), ("X-Forwarded-Proto", "https")])
    assert c.scheme == "https"
    c = PROXY.resolve(
        "127.0.0.1", [("X-Forwarded-For", "198.51.100.4, 10.0.0.2"), ("X-Forwarded-Proto", "https, http")]
    )
    assert c.scheme == "https"
    assert PROXY.resolve("127.0.0.1", [("X-Forwarded-Proto", "HTTPS")]).scheme == "https"
    assert PROXY.resolve("127.0.0.1", [("X-Forwarded-Proto", "gopher")]).scheme is None


def test_forwarded_rfc7239() -> None:
    h = [("Forwarded", 'for=6.6.6.6, for="[2001:db8:cafe::17]:4711";proto=https;by=10.0.0.1, for=10.0.0.3')]
    c = PROXY.resolve("10.9.9.9", h)
    assert (c.ip, c.port, c.scheme) == ("2001:db8:cafe::17", 4711, "https")
    # Forwarded wins over X-Forwarded-For when both are there
    h2 = [("X-Forwarded-For", "7.7.7.7"), ("Forwarded", "For=192.0.2.60;Proto=http")]
    assert PROXY.resolve("127.0.0.1", h2).ip == "192.0.2.60"
    assert PROXY.resolve("127.0.0.1", [("Forwarded", "for=_hidden")]).ip == "127.0.0.1"
    assert PROXY.resolve("127.0.0.1", [("Forwarded", 'for="\\"quoted;x,=')]).ip == "127.0.0.1"


@given(st.lists(st.tuples(st.sampled_from(["Forwarded", "X-Forwarded-For", "X-Forwarded-Proto", "x"]), st.text())))
def test_any_headers_give_a_client_and_never_raise(headers: list[tuple[str, str]]) -> None:
    c = PROXY.resolve("127.0.0.1", headers)
    assert c.scheme in (None, "http", "https")
    # whatever the headers say, the client is an address the chain or the peer gave
    assert c.ip == "127.0.0.1" or ipaddress.ip_address(c.ip)
    assert Proxies().resolve("192.0.2.1", headers).ip == "192.0.2.1"
