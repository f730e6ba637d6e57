"""kierki-server: its command line, its listening socket, and the seat adapter's translation rules."""

from __future__ import annotations

import io
import random
import socket
from pathlib import Path
from typing import Any

import pytest

from moonshot.core.actions import Play
from moonshot.core.cards import parse_card
from moonshot.core.engine import Game
from moonshot.core.events import DealEnded, DealStarted, GameStarted, HandDealt, TrickEnded, TrickStarted
from moonshot.core.rules import PassDirection
from moonshot.core.variants import KIERKI
from moonshot.core.views import seat_view
from moonshot.protocols.kierki.codec import Deal, Message, Score, Taken, Total, Trick, Wrong, format_message
from moonshot.protocols.kierki.gamefile import format_game, random_deals
from moonshot.protocols.kierki.server import (
    DEFAULT_TIMEOUT,
    KierkiSeat,
    KierkiServer,
    UsageError,
    kierki_policy,
    main,
    make_listening_socket,
    make_listening_sockets,
    parse_args,
)
from moonshot.runtime.table import OnBadAnswer, OnDisconnect, TableEvent


def test_parameters_in_any_order_and_the_last_repeat_wins() -> None:
    o = parse_args(["-t", "2.5", "-f", "g.txt", "-p", "4000"])
    assert (o.port, o.file, o.timeout) == (4000, "g.txt", 2.5)
    o = parse_args(["-f", "a", "-p", "1", "-p", "2", "-f", "b"])
    assert (o.port, o.file, o.timeout) == (2, "b", DEFAULT_TIMEOUT)
    assert parse_args(["-f", "g"]).port == 0


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        ([], "game file (-f <file>) is required"),
        (["-p", "80"], "required"),
        (["-f"], "needs a value"),
        (["-f", "g", "-p", "x"], "bad port"),
        (["-f", "g", "-p", "70000"], "bad port"),
        (["-f", "g", "-p", "-1"], "bad port"),
        (["-f", "g", "-t", "0"], "bad timeout"),
        (["-f", "g", "-t", "-3"], "bad timeout"),
        (["-f", "g", "-t", "nan"], "bad timeout"),
        (["-f", "g", "-t", "soon"], "bad timeout"),
        (["-f", "g", "-x"], "unknown parameter"),
        (["g.txt"], "unknown parameter"),
        (["-f", "g", "--host"], "needs a value"),
        (["-f", "g", "--host", ""], "bad --host"),
        (["-f", "g", "--host", "a b"], "bad --host"),
        (["-f", "g", "--host", "evil\x1b[2J"], "bad --host"),
    ],
)
def test_bad_invocations_say_why(argv: list[str], words: str) -> None:
    with pytest.raises(UsageError) as e:
        parse_args(argv)
    assert words in str(e.value)


def test_help_prints_every_parameter_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: kierki-server") and all(f in out for f in ("-p", "-f", "-t", "--trusted-proxy"))
    assert main(["-p", "0", "--help"]) == 0 and "usage" in capsys.readouterr().out
    assert main(["-f", "--help"]) == 1 and "cannot read game file" in capsys.readouterr().out  # a file's name


def test_main_exits_1_with_a_message_on_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-p", "1"]) == 1
    out = capsys.readouterr().out
    assert "required" in out and "usage: kierki-server" in out
    bad = tmp_path / "bad.txt"
    bad.write_text("9N\n")
    assert main(["-f", str(bad)]) == 1
    assert "line 1: unknown deal type '9'" in capsys.readouterr().out
    assert main(["-f", str(tmp_path / "missing.txt")]) == 1
    assert "cannot read game file" in capsys.readouterr().out


def test_host_is_optional_and_every_interface_is_the_default() -> None:
    assert parse_args(["-f", "g"]).host is None
    assert parse_args(["--host", "127.0.0.1", "-f", "g"]).host == "127.0.0.1"
    assert parse_args(["-f", "g", "--host", "[::1]", "--host", "localhost"]).host == "localhost"  # the last wins
    assert parse_args(["-f", "g", "--host", "[::1]"]).host == "::1"


def test_host_listens_on_that_address_only() -> None:
    (sock,) = make_listening_sockets(0, "127.0.0.1")
    try:
        assert sock.family == socket.AF_INET and sock.getsockname()[0] == "127.0.0.1"
    finally:
        sock.close()


def test_a_host_name_listens_on_each_of_its_addresses_on_one_port() -> None:
    wanted = {a[4][0] for a in socket.getaddrinfo("localhost", 0, socket.AF_UNSPEC, socket.SOCK_STREAM)}
    socks = make_listening_sockets(0, "localhost")
    try:
        assert {s.getsockname()[0] for s in socks} == wanted
        assert len({s.getsockname()[1] for s in socks}) == 1
    finally:
        for s in socks:
            s.close()


def test_main_exits_1_when_the_host_is_not_ours_or_unknown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = tmp_path / "g.txt"
    game.write_text(format_game(random_deals(random.Random(1), [1])))
    assert main(["-f", str(game), "--host", "no-such-host.invalid"]) == 1
    assert "cannot listen on port 0 of no-such-host.invalid: cannot resolve" in capsys.readouterr().out
    assert main(["-f", str(game), "--host", "192.0.2.1"]) == 1  # TEST-NET-1: not an address of this host
    assert "cannot listen on port 0 of 192.0.2.1" in capsys.readouterr().out


def test_main_exits_1_when_the_port_is_taken(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = tmp_path / "g.txt"
    game.write_text(format_game(random_deals(random.Random(1), [1])))
    holder = make_listening_socket(0)
    try:
        port = holder.getsockname()[1]
        assert main(["-f", str(game), "-p", str(port)]) == 1
        assert f"cannot listen on port {port}" in capsys.readouterr().out
    finally:
        holder.close()


def test_one_socket_takes_ipv4_and_ipv6() -> None:
    sock = make_listening_socket(0)
    try:
        port = sock.getsockname()[1]
        sock.setblocking(True)
        sock.settimeout(2)
        families = [socket.AF_INET]
        if sock.family == socket.AF_INET6:
            families.append(socket.AF_INET6)
        for fam in families:
            host = "127.0.0.1" if fam == socket.AF_INET else "::1"
            with socket.socket(fam, socket.SOCK_STREAM) as c:
                c.connect((host, port))
                conn, _ = sock.accept()
                conn.close()
    finally:
        sock.close()


def test_the_policy_is_retry_and_pause() -> None:
    p = kierki_policy(1.5)
    assert p.decision_timeout == 1.5
    assert p.on_timeout is OnBadAnswer.RETRY and p.on_illegal is OnBadAnswer.RETRY
    assert p.on_disconnect is OnDisconnect.PAUSE and p.max_consecutive_timeouts is None


# ----------------------------------------------------------------------------- the seat adapter
class FakeServer:
    def __init__(self) -> None:
        self.logs: list[str] = []
        self.paused = False

    def card_order(self, deal: int, e: HandDealt) -> tuple[int, ...]:
        return KierkiServer.card_order(self, deal, e)  # type: ignore[arg-type]

    orders: tuple[Any, ...] = ()

    def log(self, text: str) -> None:
        self.logs.append(text)


class FakeConn:
    def __init__(self) -> None:
        self.sent: list[Message] = []
        self.closed: str | None = None
        self.peer = "127.0.0.1:1"
        self.server = FakeServer()

    def send(self, msg: Message) -> None:
        self.sent.append(msg)

    def close(self, reason: str) -> None:
        self.closed = reason


class FakeTable:
    def __init__(self) -> None:
        self.submitted: list[tuple[int, Any, int | None]] = []

    def submit(self, seat: int, action: Any, request_id: int | None = None) -> None:
        self.submitted.append((seat, action, request_id))


class Request:
    def __init__(self, game: Game, seat: int, request_id: int = 1) -> None:
        self.view = seat_view(game, seat)
        self.request_id = request_id


def adapter(seat: int = 0, resuming: bool = False) -> tuple[KierkiSeat, FakeConn, FakeTable]:
    conn = FakeConn()
    s = KierkiSeat(conn, seat, resuming)  # type: ignore[arg-type]
    table = FakeTable()
    s.table = table  # type: ignore[assignment]
    return s, conn, table


def events(*evs: Any) -> list[TableEvent]:
    return [TableEvent(i + 1, e) for i, e in enumerate(evs)]


def test_events_become_deal_taken_score_total() -> None:
    s, conn, _ = adapter(seat=2)
    hand = sum(1 << c for c in range(13))
    evs = events(
        GameStarted("kierki", 0),
        DealStarted(0, PassDirection.HOLD, 4, 1),
        HandDealt(2, hand),
        TrickStarted(1, 1),
        TrickEnded(1, 3, (13, 14, 0, 15), (1, 2, 3, 0), 0),
        DealEnded(0, (1, 2, 3, 4), (1, 2, 3, 4), None, (0, 0, 0, 0), 13, False),
    )
    s.on_events(None, evs)  # type: ignore[arg-type]
    assert conn.sent == [
        Deal(4, 1, tuple(range(13))),
        Taken(1, (13, 14, 0, 15), 3),
        Score((1, 2, 3, 4)),
        Total((1, 2, 3, 4)),
    ]


def test_a_resumed_seat_gets_only_this_deals_cards_and_tricks() -> None:
    s, conn, _ = adapter(seat=0, resuming=True)
    old, new = sum(1 << c for c in range(13)), sum(1 << c for c in range(13, 26))
    s.on_events(
        None,  # type: ignore[arg-type]
        events(
            DealStarted(0, PassDirection.HOLD, 1, 0),
            HandDealt(0, old),
            TrickEnded(1, 0, (0, 26, 39, 13), (0, 1, 2, 3), 1),
            DealEnded(0, (13, 0, 0, 0), (13, 0, 0, 0), None, (0, 0, 0, 0), 13, False),
            DealStarted(1, PassDirection.HOLD, 2, 3),
            HandDealt(0, new),
            TrickEnded(1, 3, (1, 14, 27, 40), (3, 0, 1, 2), 1),
        ),
    )
    assert conn.sent == [Deal(2, 3, tuple(range(13, 26))), Taken(1, (1, 14, 27, 40), 3)]
    s.on_events(None, events(TrickEnded(2, 1, (2, 15, 28, 41), (3, 0, 1, 2), 1)))  # type: ignore[arg-type]
    assert conn.sent[-1] == Taken(2, (2, 15, 28, 41), 1)  # later events are not cut


def _game() -> Game:
    return Game(KIERKI, 0, random_deals(random.Random(2), [1]))


def test_requests_become_trick_and_answers_become_plays() -> None:
    g = _game()
    seat = g.turn
    s, conn, table = adapter(seat)
    req = Request(g, seat, request_id=7)
    s.on_request(table, req)  # type: ignore[arg-type]
    assert conn.sent == [Trick(1, ())]
    card = min(c for c in range(52) if g.hands[seat] >> c & 1)
    s.on_line(format_message(Trick(1, (card,))))
    assert table.submitted == [(seat, Play.of(seat, card), 7)]
    s.on_line(format_message(Trick(1, (card,))))  # again, before any verdict: nobody asked
    assert conn.sent[-1] == Wrong(1)


def test_illegal_answer_gets_wrong_and_no_new_trick_but_a_timeout_repeats_trick() -> None:
    g = _game()
    seat = g.turn
    s, conn, table = adapter(seat)
    s.on_request(table, Request(g, seat, 1))  # type: ignore[arg-type]
    s.on_rejected(table, Request(g, seat, 1), None, "S does not hold 2C")  # type: ignore[arg-type]
    assert conn.sent == [Trick(1, ()), Wrong(1)]
    s.on_request(table, Request(g, seat, 2))  # type: ignore[arg-type]
    assert conn.sent == [Trick(1, ()), Wrong(1)]  # the client answers again unasked
    s.on_rejected(table, Request(g, seat, 2), None, "timeout")  # type: ignore[arg-type]
    s.on_request(table, Request(g, seat, 3))  # type: ignore[arg-type]
    assert conn.sent[-1] == Trick(1, ())
    assert s.request is not None and s.request.request_id == 3  # type: ignore[attr-defined]


def test_no_trick_while_paused_and_it_comes_on_resume() -> None:
    g = _game()
    seat = g.turn
    s, conn, table = adapter(seat)
    s.on_request(table, Request(g, seat, 1))  # type: ignore[arg-type]
    conn.server.paused = True
    s.on_rejected(table, Request(g, seat, 1), None, "timeout")  # type: ignore[arg-type]
    s.on_request(table, Request(g, seat, 2))  # type: ignore[arg-type]
    assert conn.sent == [Trick(1, ())]
    s.on_request(table, Request(g, seat, 3))  # type: ignore[arg-type]
    assert conn.sent == [Trick(1, ())]
    conn.server.paused = False
    s.resume()
    assert conn.sent == [Trick(1, ()), Trick(1, ())]
    s.resume()
    assert len(conn.sent) == 2


@pytest.mark.parametrize(
    "line",
    ["HELLO", "IAMN", "TRICK1", "TRICK2AS", "TRICK12C3C", "TRICK1XX", "SCOREN1E1S1W1"],
)
def test_everything_but_the_awaited_trick_gets_wrong(line: str) -> None:
    g = _game()
    seat = g.turn
    s, conn, table = adapter(seat)
    s.on_request(table, Request(g, seat))  # type: ignore[arg-type]
    s.on_line(line)
    assert conn.sent[-1] == Wrong(1)
    assert table.submitted == []
    assert s.request is not None  # the prompt stands


def test_blank_lines_are_ignored_and_unprompted_cards_get_wrong() -> None:
    s, conn, _ = adapter(1)
    s.on_line("")
    assert conn.sent == []
    s.on_line("TRICK1" + "AS")
    assert conn.sent == [Wrong(1)]
    assert s.conn.server.logs and "without being asked" in s.conn.server.logs[-1]  # type: ignore[attr-defined]


def test_the_end_closes_the_connection() -> None:
    s, conn, _ = adapter(0)
    s.on_closed(None, "game over")  # type: ignore[arg-type]
    assert conn.closed == "game over"


def test_a_card_with_ten_is_read() -> None:
    g = _game()
    seat = g.turn
    s, _, table = adapter(seat)
    s.on_request(table, Request(g, seat))  # type: ignore[arg-type]
    s.on_line("TRICK110H")
    assert table.submitted[0][1] == Play.of(seat, parse_card("10H"))


def test_deal_lists_the_cards_in_the_game_files_order() -> None:
    order = (tuple(range(12, -1, -1)), tuple(range(13, 26)), tuple(range(26, 39)), tuple(range(39, 52)))
    srv = KierkiServer.__new__(KierkiServer)
    srv.orders = (order,)
    assert srv.card_order(0, HandDealt(0, sum(1 << c for c in range(13)))) == tuple(range(12, -1, -1))
    assert srv.card_order(1, HandDealt(0, 7)) == (0, 1, 2)  # no order known: low to high


def test_report_goes_to_the_given_stream() -> None:
    out = io.StringIO()
    srv = KierkiServer.__new__(KierkiServer)
    srv._out = out  # the report writer only needs its stream
    srv.report("1.2.3.4:5", "6.7.8.9:10", "IAMN")
    assert out.getvalue().startswith("[1.2.3.4:5,6.7.8.9:10,") and out.getvalue().endswith("] IAMN\n")


@pytest.mark.asyncio
async def test_a_proxy_header_is_read_to_its_last_byte_and_no_further() -> None:
    import asyncio

    from moonshot.protocols.kierki.server import read_proxy_header
    from moonshot.runtime.proxyproto import ProxyError, encode_v1, encode_v2

    for header in (
        encode_v1("198.51.100.4", 4000, "10.0.0.1", 5000),
        encode_v2("2001:db8::4", 4000, "2001:db8::1", 5000),
    ):
        reader = asyncio.StreamReader()
        reader.feed_data(header + b"IAM1\n")
        got = await read_proxy_header(reader, 5.0)
        assert got.source in ("198.51.100.4", "2001:db8::4") and got.source_port == 4000
        assert await reader.read(100) == b"IAM1\n"  # the client's own line is left for the protocol
    for bad in (b"IAM1\n" + b"x" * 20, b"PROXY UNKNOWN " + b"x" * 200):
        reader = asyncio.StreamReader()
        reader.feed_data(bad)
        with pytest.raises(ProxyError):
            await read_proxy_header(reader, 5.0)
    reader = asyncio.StreamReader()
    reader.feed_data(b"PROXY TCP4 1.2")  # half a header, then silence: the deadline
    with pytest.raises(ProxyError, match="within"):
        await read_proxy_header(reader, 0.05)
    reader = asyncio.StreamReader()
    reader.feed_data(b"PROXY TCP4 1.2")
    reader.feed_eof()  # the connection ends inside it
    with pytest.raises(ProxyError, match="ended"):
        await read_proxy_header(reader, 5.0)


def test_trusted_proxies_add_up_and_a_bad_one_says_why() -> None:
    assert parse_args(["-f", "g"]).trusted_proxies == []
    o = parse_args(["--trusted-proxy", "10.0.0.0/8", "-f", "g", "--trusted-proxy", "::1"])
    assert o.trusted_proxies == ["10.0.0.0/8", "::1"]
    with pytest.raises(UsageError, match="bad --trusted-proxy"):
        parse_args(["-f", "g", "--trusted-proxy", "nowhere"])


@pytest.mark.asyncio
async def test_a_trusted_proxy_names_the_client_and_nobody_else_can() -> None:
    """Behind a load balancer at 127.0.0.2 (``--trusted-proxy``), a seat's client is the address
    its PROXY header names, in the report too; a connection from the proxy without a header is
    closed, and from another peer a PROXY line is a bad first line, as any other."""
    import asyncio

    from moonshot.runtime.clients import Proxies
    from moonshot.runtime.proxyproto import encode_v1

    out = io.StringIO()
    srv = KierkiServer(random_deals(random.Random(3), [1]), 5.0, out=out, proxies=Proxies(["127.0.0.2"]))
    listeners = await srv.start(0, "127.0.0.1")

    async def connect(source: str, first: bytes) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        r, w = await asyncio.open_connection("127.0.0.1", srv.port, local_addr=(source, 0))
        w.write(first)
        await w.drain()
        return r, w

    async def closed(r: asyncio.StreamReader) -> bool:
        return await asyncio.wait_for(r.read(), 10) == b""

    try:
        async with listeners:
            _r1, w1 = await connect("127.0.0.2", encode_v1("198.51.100.7", 4711, "127.0.0.1", srv.port) + b"IAMN\r\n")
            for _ in range(1000):
                if srv.seats[0] is not None:
                    break
                await asyncio.sleep(0.01)
            assert srv.seats[0] is not None and srv.seats[0].conn.peer == "198.51.100.7:4711"
            assert "[198.51.100.7:4711," in out.getvalue()  # the report names the real client
            r2, w2 = await connect("127.0.0.2", b"IAME\r\n")  # from the proxy, no header: closed
            assert await closed(r2) and srv.seats[1] is None
            r3, w3 = await connect("127.0.0.3", encode_v1("198.51.100.8", 1, "127.0.0.1", srv.port) + b"IAMS\r\n")
            assert await closed(r3) and srv.seats[2] is None  # a PROXY line from anyone else: a bad first line
            assert not any(line.startswith("[198.51.100.8") for line in out.getvalue().splitlines())
            assert "[127.0.0.3:" in out.getvalue()  # what it sent is reported as its own
            for w in (w1, w2, w3):
                w.close()
    finally:
        srv.done.set()
        await srv.shutdown()
