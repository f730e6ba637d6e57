"""Who a client is: the one place every listener asks (HTTP, SSE, Trend, Sessions, Kierki).

* :func:`peer_ip`: the address of a socket's peer (``("127.0.0.1", 5123)``, ``"[::1]:80"``), an
  IPv4 address mapped into IPv6 in its IPv4 form;
* :func:`share_key`: the key of an address's fair share (:mod:`moonshot.runtime.limits`,
  :class:`~moonshot.runtime.ratelimit.AttemptLimiter`): an IPv4 address as it is, an IPv6 address
  its /64 (one host or home is given a /64, so counting each of its 2^64 addresses apart would
  hand it 2^64 shares), an IPv4-mapped IPv6 address its IPv4 form;
* :class:`Proxies`: the trusted proxies (``moonshot serve --trusted-proxy CIDR``; none by
  default) and :meth:`Proxies.resolve`, the real client of a request: from ``Forwarded``
  (RFC 7239) or ``X-Forwarded-For``, and its scheme from ``Forwarded: proto=`` or
  ``X-Forwarded-Proto``, only when the direct peer is trusted. The chain is walked from the right
  past trusted hops: the first untrusted address is the client (every address left of it may be
  made up by that client). From a peer that is not trusted the headers are ignored, loopback
  included.

The PROXY protocol header that a trusted TCP load balancer sends is parsed by
:mod:`moonshot.runtime.proxyproto`; its source address goes through :func:`share_key` the same
way. Pure: no sockets, no clock.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

IPV6_SHARE_PREFIX = 64  # an IPv6 client's share is its /64
MAX_HOPS = 32  # forwarded addresses read at most (from the right): a longer chain is cut


def parse_ip(text: str) -> Address | None:
    """An address (``1.2.3.4``, ``::1``, ``[::1]``, ``fe80::1%eth0``), IPv4-mapped ones as IPv4;
    None when ``text`` is no address."""
    host = text.strip().strip("[]").split("%", 1)[0]
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def peer_ip(peer: Any) -> str:
    """The address part of a peer (``("127.0.0.1", 5123)``, ``"127.0.0.1:5123"``, ``"[::1]:80"``);
    an IPv4 address mapped into IPv6 is its IPv4 form; ``"?"`` when there is none."""
    if isinstance(peer, tuple | list) and peer:
        host = str(peer[0])
    elif isinstance(peer, str) and peer:
        if peer.startswith("["):
            host = peer[1:].split("]", 1)[0]
        elif peer.count(":") == 1:
            host = peer.rsplit(":", 1)[0]
        else:
            host = peer
    else:
        return "?"
    ip = parse_ip(host)
    return str(ip) if ip is not None else host


def share_key(addr: str) -> str:
    """The key an address's fair share is counted under: IPv4 as it is, IPv6 its /64
    (``2001:db8:1:2::/64``), IPv4-mapped IPv6 its IPv4 form; anything else as it is."""
    ip = parse_ip(addr)
    if ip is None:
        return addr
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((ip, IPV6_SHARE_PREFIX), strict=False))
    return str(ip)


@dataclass(frozen=True)
class Client:
    """Who is at the other end of a request: its address (``"?"`` unknown), the port it came
    from (0 when a proxy did not say), and the scheme the client used (``"https"``; None: the
    direct connection's own), ``forwarded`` when a trusted proxy told us."""

    ip: str
    port: int = 0
    scheme: str | None = None
    forwarded: bool = False

    @property
    def key(self) -> str:
        """Its fair share's key (:func:`share_key`)."""
        return share_key(self.ip)


def _split_forwarded(value: str) -> list[dict[str, str]]:
    """RFC 7239's ``Forwarded`` value: its elements (comma separated), each a dict of its
    ``name=value`` pairs (semicolon separated; names lower-cased, quotes removed)."""
    elements: list[dict[str, str]] = []
    pairs: dict[str, str] = {}
    name: list[str] = []
    val: list[str] = []
    in_value = quoted = escaped = False

    def end_pair() -> None:
        key = "".join(name).strip().lower()
        if key:
            pairs.setdefault(key, "".join(val).strip())
        name.clear()
        val.clear()

    for ch in value:
        if quoted:
            if escaped:
                val.append(ch)
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                quoted = False
            else:
                val.append(ch)
        elif ch == '"' and in_value:
            quoted = True
        elif ch == "=" and not in_value:
            in_value = True
        elif ch == ";":
            end_pair()
            in_value = False
        elif ch == ",":
            end_pair()
            in_value = False
            elements.append(pairs)
            pairs = {}
        elif in_value:
            val.append(ch)
        else:
            name.append(ch)
    end_pair()
    elements.append(pairs)
    return elements


def _forwarded_node(node: str) -> tuple[str | None, int]:
    """A ``for=`` node (``192.0.2.1``, ``[2001:db8::1]:4711``, ``unknown``, ``_hidden``): its
    address (None when it names none) and port (0 when none)."""
    node = node.strip()
    port = 0
    if node.startswith("["):
        host, _, rest = node[1:].partition("]")
        if rest.startswith(":") and rest[1:].isdigit():
            port = int(rest[1:])
    elif node.count(":") == 1:
        host, _, p = node.partition(":")
        if p.isdigit():
            port = int(p)
    else:
        host = node
    ip = parse_ip(host)
    return (str(ip) if ip is not None else None), (port if 0 < port < 65536 else 0)


def _scheme(value: str | None) -> str | None:
    v = (value or "").strip().lower()
    return v if v in ("http", "https") else None


class Proxies:
    """The trusted proxies: networks whose requests may say who their client is."""

    def __init__(self, cidrs: Iterable[str | Network] = ()) -> None:
        nets: list[Network] = []
        for c in cidrs:
            nets.append(c if not isinstance(c, str) else parse_cidr(c))
        self.networks: tuple[Network, ...] = tuple(nets)

    def __bool__(self) -> bool:
        return bool(self.networks)

    def __repr__(self) -> str:
        return f"Proxies({[str(n) for n in self.networks]})"

    def trusts(self, addr: str) -> bool:
        """Is ``addr`` (an address, or a peer as :func:`peer_ip` reads it) a trusted proxy?"""
        if not self.networks:
            return False
        ip = parse_ip(addr)
        if ip is None:
            return False
        return any(ip.version == n.version and ip in n for n in self.networks)

    def resolve(self, peer: str, headers: Iterable[tuple[str, str]], peer_port: int = 0) -> Client:
        """The real client of a request that came from ``peer`` with ``headers`` (name, value
        pairs, names in any case; a header given several times counts as one list, in order).

        From an untrusted peer: the peer itself, the headers unread. From a trusted one: the
        ``Forwarded`` chain if the request has one, else ``X-Forwarded-For``, read from the right
        past trusted hops; the first untrusted address is the client. A hop that names no address
        (``unknown``, an obfuscated ``_name``, garbage) ends the walk: the proxy that wrote it is
        the client then, so nobody gains a share by sending garbage. The scheme is the one the
        proxy that saw the client reports (``proto=`` of that element, or the matching
        ``X-Forwarded-Proto`` entry; the last one when they do not line up)."""
        ip = peer_ip(peer)
        if not self.trusts(ip):
            return Client(ip, peer_port)
        forwarded: list[str] = []
        xff: list[str] = []
        xfp: list[str] = []
        for name, value in headers:
            n = name.lower()
            if n == "forwarded":
                forwarded.append(value)
            elif n == "x-forwarded-for":
                xff.append(value)
            elif n == "x-forwarded-proto":
                xfp.append(value)
        if forwarded:
            elements = _split_forwarded(",".join(forwarded))[-MAX_HOPS:]
            nodes = [_forwarded_node(e.get("for", "")) for e in elements]
            protos = [_scheme(e.get("proto")) for e in elements]
        elif xff:
            entries = ",".join(xff).split(",")[-MAX_HOPS:]
            nodes = [_forwarded_node(e) for e in entries]
            given = [_scheme(p) for p in ",".join(xfp).split(",")] if xfp else []
            if len(given) == len(nodes):
                protos = given
            else:
                protos = [None] * len(nodes)
                if given:
                    protos[-1] = given[-1]
        else:
            scheme = _scheme(xfp[-1].split(",")[-1]) if xfp else None
            return Client(ip, peer_port, scheme, forwarded=scheme is not None)
        client, port, scheme = ip, peer_port, None
        for k in range(len(nodes) - 1, -1, -1):
            hop, hop_port = nodes[k]
            scheme = protos[k] or scheme
            if hop is None:
                break
            client, port = hop, hop_port
            if not self.trusts(hop):
                break
        return Client(client, port, scheme, forwarded=True)


def parse_cidr(text: str) -> Network:
    """A trusted proxy's network (``10.0.0.0/8``, ``::1``, ``127.0.0.1``: one address);
    ValueError says what is wrong."""
    try:
        net = ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        raise ValueError(f"{text!r} is not an address or a network (CIDR, like 10.0.0.0/8 or ::1)") from None
    if isinstance(net, ipaddress.IPv6Network) and net.network_address.ipv4_mapped is not None and net.prefixlen >= 96:
        mapped = net.network_address.ipv4_mapped
        return ipaddress.IPv4Network((mapped, net.prefixlen - 96))
    return net


__all__ = ["Client", "Proxies", "parse_cidr", "parse_ip", "peer_ip", "share_key"]
