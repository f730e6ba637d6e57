"""The PROXY protocol (HAProxy's, versions 1 and 2) as a pure parser: the header a TCP load
balancer (nginx ``proxy_protocol on``, HAProxy ``send-proxy``) puts before a client's bytes, saying
who the client is. No sockets, no clock: :class:`ProxyHeaderParser` is fed bytes and says what it
found, how many more bytes it needs (so a stream reader never reads past the header), or raises
:class:`ProxyError`. The listeners' glue (a deadline, the close and the log line) is in the
protocols; who may send a header at all is :class:`~moonshot.runtime.clients.Proxies`' call.

* version 1 (text): ``PROXY TCP4 <src> <dst> <sport> <dport>\\r\\n`` (``TCP6``, or ``UNKNOWN``
  and anything up to the line end), 107 bytes at most, the line end included;
* version 2 (binary): the 12-byte signature, a version/command byte (0x20 LOCAL, 0x21 PROXY), a
  family/transport byte, a 16-bit length, then the addresses (IPv4 12 bytes, IPv6 36, UNIX 216)
  and type-length-values (read past, unused), ``MAX_V2`` bytes in all at most.

A LOCAL command, an UNKNOWN (v1) or unspecified (v2) family and a UNIX socket name no client
address: the connection is the proxy's own (a health check), and :attr:`ProxyHeader.source` is
None.

The protocol: https://www.haproxy.org/download/2.9/doc/proxy-protocol.txt. Written here rather
than taken from PyPI: the one package for it (``proxy-protocol``, alpha) reads from its own asyncio
server, does not bound a version 1 line, and lets ``ValueError``/``struct.error`` out on bad bytes.
"""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass

V1_PREFIX = b"PROXY "
V1_MAX = 107  # a version 1 line's bytes at most, CRLF included
V1_MIN = 15  # b"PROXY UNKNOWN\r\n"
V2_SIGNATURE = b"\r\n\r\n\x00\r\nQUIT\n"
V2_FIXED = 16  # signature, version/command, family, length
MAX_V2 = 4096  # a version 2 header's bytes at most (its TLVs included); longer is refused
DETECT = 8  # bytes that tell the versions apart (and that every header has)

_V2_ADDRESSES = {0x1: 12, 0x2: 36, 0x3: 216}  # by family: INET, INET6, UNIX
_INET = struct.Struct("!4s4sHH")
_INET6 = struct.Struct("!16s16sHH")


class ProxyError(ValueError):
    """The bytes are no PROXY header, or a malformed or oversized one (the reason says which)."""


@dataclass(frozen=True)
class ProxyHeader:
    """What a header said: the client's address and port (None and 0: the proxy's own
    connection, or a family that names no address), where it connected to, and the version."""

    version: int
    source: str | None = None
    source_port: int = 0
    dest: str | None = None
    dest_port: int = 0


def _address(text: str, version: int) -> str:
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        raise ProxyError(f"not an IPv{version} address: {text[:40]!r}") from None
    if ip.version != version:
        raise ProxyError(f"not an IPv{version} address: {text[:40]!r}")
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)


def _port(text: str) -> int:
    if not (text.isdigit() and text.isascii()) or len(text) > 5 or (len(text) > 1 and text[0] == "0"):
        raise ProxyError(f"not a port: {text[:10]!r}")
    port = int(text)
    if port > 65535:
        raise ProxyError(f"not a port: {text!r}")
    return port


def parse_v1(line: bytes) -> ProxyHeader:
    """One version 1 line, ``PROXY`` to CRLF included."""
    if len(line) > V1_MAX:
        raise ProxyError(f"a version 1 header over {V1_MAX} bytes")
    if not line.startswith(V1_PREFIX) or not line.endswith(b"\r\n"):
        raise ProxyError("a version 1 header must be PROXY ... CRLF")
    try:
        text = line[len(V1_PREFIX) : -2].decode("ascii")
    except UnicodeDecodeError:
        raise ProxyError("a version 1 header that is not ASCII") from None
    parts = text.split(" ")
    if parts[0] == "UNKNOWN":
        return ProxyHeader(1)
    if parts[0] not in ("TCP4", "TCP6"):
        raise ProxyError(f"an unknown version 1 family: {parts[0][:10]!r}")
    if len(parts) != 5:
        raise ProxyError("a version 1 header needs 4 fields after its family")
    version = 4 if parts[0] == "TCP4" else 6
    return ProxyHeader(1, _address(parts[1], version), _port(parts[3]), _address(parts[2], version), _port(parts[4]))


def parse_v2(header: bytes) -> ProxyHeader:
    """One whole version 2 header (``V2_FIXED`` bytes and its length's more)."""
    if len(header) < V2_FIXED or not header.startswith(V2_SIGNATURE):
        raise ProxyError("not a version 2 header")
    ver_cmd, fam, length = header[12], header[13], int.from_bytes(header[14:16], "big")
    if ver_cmd >> 4 != 2:
        raise ProxyError(f"an unknown version {ver_cmd >> 4} in a version 2 header")
    command = ver_cmd & 0xF
    if command not in (0, 1):
        raise ProxyError(f"an unknown version 2 command {command}")
    if V2_FIXED + length > MAX_V2:
        raise ProxyError(f"a version 2 header over {MAX_V2} bytes")
    if len(header) != V2_FIXED + length:
        raise ProxyError("a version 2 header whose length is not its size")
    family, transport = fam >> 4, fam & 0xF
    if family > 3 or transport > 2:
        raise ProxyError(f"an unknown version 2 family/transport 0x{fam:02x}")
    need = _V2_ADDRESSES.get(family, 0)
    if length < need:
        raise ProxyError("a version 2 header too short for its addresses")
    if command == 0 or family in (0, 3):  # LOCAL (the proxy's own), UNSPEC, UNIX: no client address
        return ProxyHeader(2)
    body = header[V2_FIXED:]
    if family == 1:
        src, dst, sport, dport = _INET.unpack_from(body)
        s: str = str(ipaddress.IPv4Address(src))
        d: str = str(ipaddress.IPv4Address(dst))
    else:
        src, dst, sport, dport = _INET6.unpack_from(body)
        s6, d6 = ipaddress.IPv6Address(src), ipaddress.IPv6Address(dst)
        s = str(s6.ipv4_mapped or s6)
        d = str(d6.ipv4_mapped or d6)
    return ProxyHeader(2, s, sport, d, dport)


class ProxyHeaderParser:
    """A PROXY header read from a stream, either version: :meth:`feed` it bytes until it returns
    the header (the bytes after it are :attr:`rest`: the client's own); :attr:`need` says how
    many bytes it surely needs next, so a reader can take exactly those."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self.header: ProxyHeader | None = None
        self.rest = b""

    @property
    def need(self) -> int:
        """Bytes still needed before the header can be whole (at least 1 until it is; 0 after)."""
        if self.header is not None:
            return 0
        n = len(self._buf)
        if n < DETECT:
            return DETECT - n
        if self._buf.startswith(V1_PREFIX):
            return max(1, V1_MIN - n)
        if n < V2_FIXED:
            return V2_FIXED - n
        return max(1, V2_FIXED + int.from_bytes(self._buf[14:16], "big") - n)

    def feed(self, data: bytes) -> ProxyHeader | None:
        """Take ``data``; the header once it is whole (then :attr:`rest` holds what followed),
        None while more is needed; :class:`ProxyError` as soon as the bytes cannot be one."""
        if self.header is not None:
            self.rest += data
            return self.header
        buf = self._buf
        buf += data
        n = len(buf)
        if not (V1_PREFIX.startswith(bytes(buf[:6])) or V2_SIGNATURE.startswith(bytes(buf[:12]))):
            raise ProxyError("no PROXY header")
        if n >= len(V1_PREFIX) and buf.startswith(V1_PREFIX):
            end = buf.find(b"\n", 0, V1_MAX)
            if end < 0:
                if n >= V1_MAX:
                    raise ProxyError(f"a version 1 header over {V1_MAX} bytes")
                return None
            self.header = parse_v1(bytes(buf[: end + 1]))
            self.rest = bytes(buf[end + 1 :])
        elif n >= V2_FIXED:
            size = V2_FIXED + int.from_bytes(buf[14:16], "big")
            if size > MAX_V2:
                raise ProxyError(f"a version 2 header over {MAX_V2} bytes")
            if buf[12] >> 4 != 2:
                raise ProxyError(f"an unknown version {buf[12] >> 4} in a version 2 header")
            if n < size:
                return None
            self.header = parse_v2(bytes(buf[:size]))
            self.rest = bytes(buf[size:])
        else:
            return None
        self._buf = bytearray()
        return self.header


def encode_v1(source: str, source_port: int, dest: str, dest_port: int) -> bytes:
    """A version 1 header (for tests and clients behind no real proxy)."""
    family = "TCP6" if ":" in source else "TCP4"
    return f"PROXY {family} {source} {dest} {source_port} {dest_port}\r\n".encode()


def encode_v2(source: str, source_port: int, dest: str, dest_port: int, tlvs: bytes = b"") -> bytes:
    """A version 2 PROXY header over TCP (for tests)."""
    s, d = ipaddress.ip_address(source), ipaddress.ip_address(dest)
    if s.version == 4:
        body = _INET.pack(s.packed, d.packed, source_port, dest_port)
        fam = 0x11
    else:
        body = _INET6.pack(s.packed, d.packed, source_port, dest_port)
        fam = 0x21
    body += tlvs
    return V2_SIGNATURE + bytes((0x21, fam)) + len(body).to_bytes(2, "big") + body


__all__ = [
    "MAX_V2",
    "V1_MAX",
    "ProxyError",
    "ProxyHeader",
    "ProxyHeaderParser",
    "encode_v1",
    "encode_v2",
    "parse_v1",
    "parse_v2",
]
