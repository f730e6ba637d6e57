"""Kierki over real sockets: kierki-server and kierki-client as processes, and raw-socket probes.

Full games run the real programs as subprocesses (automatic clients, one interactive client fed
through stdin, IPv4 and IPv6 mixed). Protocol probes (BUSY, WRONG for each cause, TRICK repeated
after the timeout, silent and malformed clients, a 1 MB line, a seat lost and taken again) talk
raw bytes to a server running in-process in a background thread, with short timeouts.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import random
import re
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from moonshot.core.actions import Play
from moonshot.core.cards import HEARTS_MASK, JACKS_MASK, KING_HEARTS, KINGS_MASK, QUEENS_MASK, SUIT_MASKS
from moonshot.core.engine import DealSpec, Game
from moonshot.core.variants import KIERKI
from moonshot.protocols.kierki.auto import ClientState, legal_plays
from moonshot.protocols.kierki.codec import (
    Busy,
    Deal,
    LineBuffer,
    Score,
    Taken,
    Total,
    Trick,
    Wrong,
    format_cards,
    format_message,
    parse_message,
)
from moonshot.protocols.kierki.gamefile import format_game_shuffled, parse_game_in_order, random_deals
from moonshot.protocols.kierki.server import KierkiServer

pytestmark = pytest.mark.timeout(60)

SEATS = "NESW"
REPORT = re.compile(
    r"^\[([0-9a-fA-F.:]+):(\d+),([0-9a-fA-F.:]+):(\d+),(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})\] (\S*)$"
)
HAS_IPV6 = socket.has_ipv6


def _ipv6_works() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


IPV6 = _ipv6_works()


def game_deals(seed: int = 7, kinds: Sequence[int] = (1, 2, 3, 4, 5, 6, 7)) -> list[DealSpec]:
    return random_deals(random.Random(seed), kinds)


def spec_points(kind: int, tricks: list[Taken]) -> list[int]:
    """The spec's point table, written out independently of the engine."""
    pts = [0, 0, 0, 0]
    for t in tricks:
        cards = sum(1 << c for c in t.cards)
        p = 0
        if kind in (1, 7):
            p += 1
        if kind in (2, 7):
            p += (cards & HEARTS_MASK).bit_count()
        if kind in (3, 7):
            p += 5 * (cards & QUEENS_MASK).bit_count()
        if kind in (4, 7):
            p += 2 * (cards & (KINGS_MASK | JACKS_MASK)).bit_count()
        if kind in (5, 7):
            p += 18 * (cards >> KING_HEARTS & 1)
        if kind in (6, 7) and t.number in (7, 13):
            p += 10
        pts[t.winner] += p
    return pts


# ----------------------------------------------------------------------------- in-process server
@contextmanager
def server_in_thread(
    deals: Sequence[DealSpec], timeout: float = 5.0, orders: Sequence[Any] = ()
) -> Iterator[tuple[int, KierkiServer, io.StringIO]]:
    out = io.StringIO()
    ready = threading.Event()
    holder: dict[str, object] = {}
    loop = asyncio.new_event_loop()

    async def main() -> None:
        server = KierkiServer(deals, timeout, out=out, orders=orders)
        holder["server"] = server
        srv = await server.start(0)
        ready.set()
        async with srv:
            await server.done.wait()
            srv.close()
            await server.shutdown()
        if server.table is not None and not server.table.done.done():
            server.table.stop("test over")
            await asyncio.wait_for(asyncio.shield(server.table.done), 2)

    thread = threading.Thread(target=lambda: loop.run_until_complete(main()), daemon=True)
    thread.start()
    assert ready.wait(5)
    server = holder["server"]
    assert isinstance(server, KierkiServer)
    try:
        yield server.port, server, out
    finally:
        loop.call_soon_threadsafe(server.done.set)
        thread.join(5)
        loop.close()


class Peer:
    """A raw TCP client: send lines, read lines, see the close."""

    def __init__(self, port: int, host: str = "127.0.0.1") -> None:
        self.sock = socket.create_connection((host, port), timeout=5)
        self.buf = LineBuffer()
        self.lines: list[str] = []

    def send(self, text: str) -> None:
        self.sock.sendall(text.encode() + b"\r\n")

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def recv(self, timeout: float = 5.0) -> str:
        self.sock.settimeout(timeout)
        while not self.lines:
            data = self.sock.recv(65536)
            if not data:
                raise EOFError("closed by the server")
            self.lines += [x for x in self.buf.feed(data) if isinstance(x, str)]
        return self.lines.pop(0)

    def pump(self) -> bool:
        """Read what has arrived (the socket is readable); False at the close."""
        self.sock.settimeout(5)
        try:
            data = self.sock.recv(65536)
        except ConnectionResetError:
            return False
        if not data:
            return False
        self.lines += [x for x in self.buf.feed(data) if isinstance(x, str)]
        return True

    def silent(self, seconds: float) -> bool:
        """Nothing arrives for ``seconds``."""
        try:
            line = self.recv(seconds)
        except TimeoutError:
            return True
        self.lines.insert(0, line)
        return False

    def closed(self, timeout: float = 5.0) -> bool:
        """The server closes the connection within ``timeout`` (lines before that are kept)."""
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                self.sock.settimeout(max(0.01, deadline - time.monotonic()))
                data = self.sock.recv(65536)
                if not data:
                    return True
                self.lines += [x for x in self.buf.feed(data) if isinstance(x, str)]
        except TimeoutError:
            return False
        except ConnectionResetError:
            return True
        return False

    def close(self) -> None:
        self.sock.close()


class Player:
    """A raw peer in a seat that follows the game with ClientState and plays its lowest legal card."""

    def __init__(self, port: int, seat: int, host: str = "127.0.0.1") -> None:
        self.peer = Peer(port, host)
        self.seat = seat
        self.state = ClientState(seat)
        self.log: list[str] = []
        self.peer.send(f"IAM{SEATS[seat]}")

    def read(self, timeout: float = 5.0) -> object:
        line = self.peer.recv(timeout)
        self.log.append(line)
        msg = parse_message(line)
        self.state.on_message(msg)
        return msg

    def legal(self) -> int:
        return legal_plays(self.state.hand, self.state.table)

    def play(self, card: int | None = None) -> int:
        c = card if card is not None else (self.legal() & -self.legal()).bit_length() - 1
        self.peer.send(f"TRICK{self.state.prompt}{format_cards([c])}")
        return c


def join_four(port: int) -> list[Player]:
    players = [Player(port, s) for s in range(4)]
    for p in players:
        assert isinstance(p.read(), Deal)
    return players


def run_until_end(players: list[Player], timeout: float = 30) -> None:
    """Everyone reads; whoever gets TRICK plays its lowest legal card; until the server closes all."""
    alive = set(range(len(players)))
    deadline = time.monotonic() + timeout
    while alive:
        assert time.monotonic() < deadline, "the game did not end"
        for i in sorted(alive):
            p = players[i]
            while p.peer.lines:
                if isinstance(p.read(), Trick):
                    p.play()
        socks = {players[i].peer.sock: i for i in alive}
        ready, _, _ = select.select(list(socks), [], [], 5)
        for sock in ready:
            i = socks[sock]
            if not players[i].peer.pump():
                while players[i].peer.lines:
                    players[i].read()
                alive.discard(i)


# ----------------------------------------------------------------------------- full games, real programs
def _env() -> dict[str, str]:
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2] / "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONUNBUFFERED"] = "1"
    return env


_STARTED: list[subprocess.Popen[Any]] = []


@pytest.fixture(autouse=True)
def _no_leftover_processes() -> Iterator[None]:
    """A failing test must not leave servers or clients running."""
    yield
    while _STARTED:
        p = _STARTED.pop()
        if p.poll() is None:
            p.kill()
            p.wait(5)


class Proc:
    """A subprocess whose output goes to files (pipes left unread can fill up and stall a game)."""

    def __init__(self, args: list[str], tmp_path: Path, name: str, stdin: bool = False) -> None:
        self.out_path = tmp_path / f"{name}.out"
        self.err_path = tmp_path / f"{name}.err"
        self._out = open(self.out_path, "w")  # noqa: SIM115
        self._err = open(self.err_path, "w")  # noqa: SIM115
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=self._out,
            stderr=self._err,
            text=True,
            env=_env(),
        )
        _STARTED.append(self.proc)

    def wait(self, timeout: float = 30) -> int:
        try:
            return self.proc.wait(timeout)
        finally:
            self._out.close()
            self._err.close()

    @property
    def out(self) -> str:
        return self.out_path.read_text()

    @property
    def err(self) -> str:
        return self.err_path.read_text()


def start_server_process(tmp_path: Path, deals: Sequence[DealSpec], timeout: float = 2.0) -> tuple[Proc, int]:
    game = tmp_path / "game.txt"
    game.write_text(format_game_shuffled(deals, random.Random(0)))  # DEAL must keep the file's order
    args = [sys.executable, "-m", "moonshot.protocols.kierki.server", "-t", str(timeout), "-f", str(game), "-p", "0"]
    proc = Proc(args, tmp_path, "server")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        m = re.search(r"listening on port (\d+)", proc.out)
        if m:
            return proc, int(m.group(1))
        assert proc.proc.poll() is None, proc.err
        time.sleep(0.05)
    raise AssertionError("the server did not start")


def client_cmd(port: int, seat: str, host: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "moonshot.protocols.kierki.client", f"-{seat}", "-p", str(port), "-h", host, *extra]


def parse_report(text: str) -> list[tuple[str, str, str]]:
    """(sender, receiver, message) per report line; every line must have the report's form."""
    out = []
    for line in text.splitlines():
        if line.startswith("kierki-server listening"):
            continue
        m = REPORT.match(line)
        assert m, f"not a report line: {line!r}"
        out.append((f"{m.group(1)}:{m.group(2)}", f"{m.group(3)}:{m.group(4)}", m.group(6)))
    return out


def test_full_game_four_automatic_clients_ipv4_and_ipv6(tmp_path: Path) -> None:
    deals = game_deals(11)
    server, port = start_server_process(tmp_path, deals)
    v6 = ("::1", "-6") if IPV6 else ("127.0.0.1", "-4")
    hosts = [("N", "127.0.0.1", "-4"), ("E", *v6), ("S", "localhost", ""), ("W", "localhost", "-4")]
    clients = [Proc(client_cmd(port, s, h, "-a", *([f] if f else [])), tmp_path, s) for s, h, f in hosts]
    for c in clients:
        assert c.wait() == 0, c.out + c.err
    assert server.wait() == 0, server.err
    s_out = server.out
    outs = [(c.out, c.err) for c in clients]
    report = parse_report(s_out)
    server_ports = {r for _, r, m in report if m.startswith("IAM")}
    assert {p.rsplit(":", 1)[1] for p in server_ports} == {str(port)}
    if IPV6:
        assert any(r.startswith("::1:") for _, r, _ in report)  # the ::1 client reached the same socket
        assert any(r.startswith("127.0.0.1:") for _, r, _ in report)
    # the engine, fed the accepted cards, scores every deal as the server did
    game = Game(KIERKI, 0, deals)
    seat_of = {snd: SEATS.index(m[3]) for snd, _, m in report if m.startswith("IAM")}
    for snd, _, m in report:
        if snd in seat_of and m.startswith("TRICK"):
            t = parse_message(m)
            assert isinstance(t, Trick)
            game.apply(Play.of(seat_of[snd], t.cards[0]))  # automatic clients never play illegally
    assert game.over
    totals = [parse_message(m) for snd, _, m in report if m.startswith("TOTAL")]
    assert totals[-1] == Total(tuple(game.totals))  # type: ignore[arg-type]
    scores = [parse_message(m) for snd, _, m in report if m.startswith("SCORE")][::4]
    ended = [e for e in game.log if type(e).__name__ == "DealEnded"]
    assert [s.points for s in scores] == [e.points for e in ended]  # type: ignore[union-attr]
    # and by the spec's point table, deal by deal
    tricks_by_deal: list[list[Taken]] = [[]]
    for _snd, rcv, m in report:
        if m.startswith("TAKEN") and rcv == report[-1][1]:
            t = parse_message(m)
            assert isinstance(t, Taken)
            if t.number == 1 and tricks_by_deal[-1]:
                tricks_by_deal.append([])
            tricks_by_deal[-1].append(t)
    assert [spec_points(d.kind, ts) for d, ts in zip(deals, tricks_by_deal)] == [list(s.points) for s in scores]  # type: ignore[union-attr]
    # DEAL lists each hand in the game file's order
    _, orders = parse_game_in_order((tmp_path / "game.txt").read_text())
    dealt = {(rcv, m) for _, rcv, m in report if m.startswith("DEAL")}
    for d, (spec, order) in enumerate(zip(deals, orders)):
        for seat, addr in ((s, a) for a, s in seat_of.items()):
            assert (addr, format_message(Deal(spec.kind, spec.leader or 0, order[seat]))) in dealt, (d, seat)
    # every client printed its own report, ending with the final TOTAL
    for out, _ in outs:
        lines = parse_report(out)
        assert lines[0][2].startswith("IAM")
        assert parse_message(lines[-1][2]) == totals[-1]


def test_interactive_client_driven_through_stdin(tmp_path: Path) -> None:
    deals = game_deals(5, kinds=(2, 6))
    server, port = start_server_process(tmp_path, deals)
    autos = [Proc(client_cmd(port, s, "127.0.0.1", "-a"), tmp_path, s) for s in "ESW"]
    human = subprocess.Popen(
        client_cmd(port, "N", "127.0.0.1"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        bufsize=1,
    )
    _STARTED.append(human)
    assert human.stdin is not None and human.stdout is not None
    seen: list[str] = []
    trick_cards: list[str] = []
    asked_cards = tried_wrong = asked_tricks = False
    for line in human.stdout:
        line = line.rstrip("\n")
        seen.append(line)
        if line.startswith("Trick: ("):
            rest = line.split(") ", 1)[1] if ") " in line else ""
            trick_cards = [c for c in rest.split(", ") if c]
        elif line.startswith("Available: "):
            hand = line[len("Available: ") :].split(", ")
            if not asked_cards:
                human.stdin.write("cards\n")
                asked_cards = True
            led = trick_cards[0][-1] if trick_cards else None
            follow = [c for c in hand if led and c[-1] == led]
            legal = follow or hand
            if not tried_wrong and led and follow and len(follow) < len(hand):
                off = next(c for c in hand if c[-1] != led)
                human.stdin.write(f"!{off}\n")  # not following suit: WRONG, and the prompt stands
                tried_wrong = True
            human.stdin.write(f"!{legal[0]}\n")
            human.stdin.flush()
        elif line.startswith("A trick ") and line.endswith(".") and " taken by N," in line and not asked_tricks:
            human.stdin.write("tricks\n")
            human.stdin.flush()
            asked_tricks = True
    human.wait(30)
    for a in autos:
        assert a.wait() == 0, a.err
    assert server.wait() == 0, server.err
    assert human.returncode == 0, "\n".join(seen[-20:])
    text = "\n".join(seen)
    assert re.search(
        r"^New deal 2: starting place [NESW], your cards: ((10|[2-9JQKA])[CDHS], ){12}(10|[2-9JQKA])[CDHS]\.$",
        text,
        re.M,
    )
    assert re.search(r"^Trick: \(1\) ", text, re.M) or "Trick: (1)" in text
    assert re.search(r"^Available: ", text, re.M)
    assert re.search(
        r"^A trick \d+ is taken by [NESW], cards ((10|[2-9JQKA])[CDHS], ){3}(10|[2-9JQKA])[CDHS]\.$", text, re.M
    )
    assert "The scores are:" in text and "The total scores are:" in text
    assert re.search(r"^N \| \d+$", text, re.M)
    assert tried_wrong and asked_tricks
    assert re.search(r"^Wrong message received in trick \d+\.$", text, re.M)
    # 'cards' printed the hand as a comma-separated list (13 cards at the first prompt)
    assert any(re.fullmatch(r"((10|[2-9JQKA])[CDHS], ){12}(10|[2-9JQKA])[CDHS]", s) for s in seen)
    assert any(re.fullmatch(r"((10|[2-9JQKA])[CDHS], ){3}(10|[2-9JQKA])[CDHS]", s) for s in seen)


# ----------------------------------------------------------------------------- probes on an in-process server
def test_busy_for_a_taken_seat_and_during_a_full_game() -> None:
    with server_in_thread(game_deals()) as (port, _, _out):
        n, e = Player(port, 0), Player(port, 1)
        time.sleep(0.1)
        late = Peer(port)
        late.send("IAMN")
        busy = parse_message(late.recv())
        assert isinstance(busy, Busy) and set(busy.seats) == {0, 1}
        assert late.closed()
        s, w = Player(port, 2), Player(port, 3)
        for p in (n, e, s, w):
            assert isinstance(p.read(), Deal)
        for seat in "NESW":
            probe = Peer(port)
            probe.send(f"IAM{seat}")
            busy = parse_message(probe.recv())
            assert isinstance(busy, Busy) and sorted(busy.seats) == [0, 1, 2, 3]
            assert probe.closed()


def test_wrong_for_each_cause_and_the_prompt_stands() -> None:
    deals = game_deals(3, kinds=(1,))
    with server_in_thread(deals) as (port, _, _out):
        players = join_four(port)
        leader = players[deals[0].leader or 0]
        assert leader.read() == Trick(1, ())
        other = players[(leader.seat + 2) % 4]
        hand = leader.state.hand

        def wrong(p: Player, text: str) -> None:
            p.peer.send(text)
            assert p.read() == Wrong(1), text

        wrong(other, f"TRICK1{format_cards([(other.state.hand & -other.state.hand).bit_length() - 1])}")  # unprompted
        lead = (hand & -hand).bit_length() - 1
        wrong(leader, f"TRICK2{format_cards([lead])}")  # wrong trick number
        not_mine = next(c for c in range(52) if not hand >> c & 1)
        wrong(leader, f"TRICK1{format_cards([not_mine])}")  # a card it does not hold
        wrong(leader, "HELLO")  # malformed
        wrong(leader, "IAMN")  # not a TRICK
        wrong(leader, "TRICK1")  # no card
        wrong(leader, "TRICK12C3C")  # two cards
        # choose a lead the next seat can follow while holding another suit, to test "must follow"
        nxt = players[(leader.seat + 1) % 4]
        nhand = nxt.state.hand
        for c in range(52):
            suit = SUIT_MASKS[c // 13]
            if hand >> c & 1 and nhand & suit and nhand & ~suit:
                lead = c
                break
        leader.play(lead)  # after all the WRONGs, the same prompt is answered: no new TRICK was needed
        msg = nxt.read()
        assert isinstance(msg, Trick) and msg.cards == (lead,)
        off = ((nhand & ~SUIT_MASKS[lead // 13]) & -(nhand & ~SUIT_MASKS[lead // 13])).bit_length() - 1
        wrong(nxt, f"TRICK1{format_cards([off])}")  # does not follow suit
        nxt.play()
        assert isinstance(players[(leader.seat + 2) % 4].read(), Trick)


def test_the_timeout_repeats_trick() -> None:
    deals = game_deals(4, kinds=(3,))
    with server_in_thread(deals, timeout=0.3) as (port, _, out):
        players = join_four(port)
        leader = players[deals[0].leader or 0]
        t0 = time.monotonic()
        assert leader.read() == Trick(1, ())
        assert leader.read(2) == Trick(1, ())
        assert leader.read(2) == Trick(1, ())
        assert time.monotonic() - t0 >= 0.5
        leader.play()
        nxt = players[(leader.seat + 1) % 4]
        assert isinstance(nxt.read(), Trick)
        assert out.getvalue().count("] TRICK1\n") >= 3


def test_a_client_that_says_nothing_is_closed_after_the_timeout() -> None:
    with server_in_thread(game_deals(), timeout=0.3) as (port, _, _out):
        quiet = Peer(port)
        t0 = time.monotonic()
        assert quiet.closed(3)
        assert 0.25 <= time.monotonic() - t0 < 3
        # the seat is still free
        players = join_four(port)
        assert len(players) == 4


@pytest.mark.parametrize("first", [b"HELLO\r\n", b"TRICK12C\r\n", b"IAMX\r\n", b"A" * (1 << 20)])
def test_malformed_first_messages_close_the_connection(first: bytes) -> None:
    with server_in_thread(game_deals(), timeout=2) as (port, _, _out):
        p = Peer(port)
        with contextlib.suppress(OSError):  # closed while we were still sending the megabyte
            p.send_raw(first)
        assert p.closed(3)
        n = Player(port, 0)  # the server is fine and the seat is free
        assert n.peer.silent(0.2)


def test_a_megabyte_line_from_a_seated_client_gets_wrong_and_play_goes_on() -> None:
    deals = game_deals(8, kinds=(4,))
    with server_in_thread(deals) as (port, _, _out):
        players = join_four(port)
        leader = players[deals[0].leader or 0]
        assert leader.read() == Trick(1, ())
        leader.peer.send_raw(b"TRICK1" + b"Q" * (1 << 20) + b"\r\n")
        assert leader.read() == Wrong(1)
        leader.play()
        assert isinstance(players[(leader.seat + 1) % 4].read(), Trick)


def test_several_messages_in_one_segment_and_split_lines() -> None:
    deals = game_deals(9, kinds=(1,))
    with server_in_thread(deals) as (port, _, _out):
        players = join_four(port)
        leader = players[deals[0].leader or 0]
        assert leader.read() == Trick(1, ())
        c = (leader.state.hand & -leader.state.hand).bit_length() - 1
        text = f"TRICK1{format_cards([c])}\r\n".encode()
        leader.peer.send_raw(text[:3])
        time.sleep(0.05)
        leader.peer.send_raw(
            text[3:] + b"\r\nTRICK1" + text[6:]
        )  # the card, a blank line and a second, unprompted card
        assert leader.read() == Wrong(1)
        assert isinstance(players[(leader.seat + 1) % 4].read(), Trick)


def test_a_lost_client_pauses_the_game_and_a_new_one_gets_deal_taken_and_trick() -> None:
    deals = game_deals(12, kinds=(7, 1))
    with server_in_thread(deals, timeout=5) as (port, _, _out):
        players = join_four(port)
        # play three tricks
        taken: list[str] = []
        done = 0
        while done < 3:
            for p in players:
                while not p.peer.silent(0.02):
                    msg = p.read()
                    if isinstance(msg, Trick):
                        p.play()
                    if isinstance(msg, Taken) and p.seat == 0:
                        taken.append(p.log[-1])
                        done += 1
        # now N's connection dies; find whose turn it is as the others see it
        gone = players[0]
        first_deal = gone.log[0]
        gone.peer.close()
        time.sleep(0.2)
        # nothing moves for N's seat while it is empty; a newcomer takes it
        new = Player(port, 0)
        msg = new.read()
        assert new.log[0] == first_deal  # DEAL with its cards of this deal
        assert isinstance(msg, Deal)
        got_taken = []
        for _ in taken:
            assert isinstance(new.read(), Taken)
            got_taken.append(new.log[-1])
        assert got_taken == taken
        players[0] = new
        # the game goes on to its end (the newcomer gets TRICK when it is its turn)
        run_until_end(players)
        assert any(line.startswith("TOTAL") for line in new.log)


def play_tricks(players: list[Player], n: int) -> None:
    """Drive all four raw players until ``n`` tricks are taken."""
    done = 0
    while done < n:
        for p in players:
            while not p.peer.silent(0.02):
                msg = p.read()
                if isinstance(msg, Trick):
                    p.play()
                if isinstance(msg, Taken) and p is players[0]:
                    done += 1


def test_a_real_client_takes_over_a_lost_seat_mid_deal(tmp_path: Path) -> None:
    deals = game_deals(16, kinds=(7, 3))
    with server_in_thread(deals, timeout=5) as (port, _, _out):
        players = join_four(port)
        play_tricks(players, 4)
        players[0].peer.close()  # N is lost in the middle of the first deal
        time.sleep(0.2)
        n = Proc(client_cmd(port, "N", "127.0.0.1", "-a"), tmp_path, "N")
        run_until_end(players[1:])
        assert n.wait() == 0, n.out + n.err
    got = [m for _, _, m in parse_report(n.out)]
    assert got[0] == "IAMN" and got[1] == players[0].log[0]  # the same cards of this deal
    assert got[2:6] == [line for line in players[1].log if line.startswith("TAKEN")][:4]
    assert got[-1].startswith("TOTAL") and sum(m.startswith("SCORE") for m in got) == 2


def test_the_newcomer_gets_trick_at_once_when_it_is_its_turn() -> None:
    deals = game_deals(13, kinds=(2,))
    with server_in_thread(deals, timeout=5) as (port, _, _out):
        players = join_four(port)
        leader = players[deals[0].leader or 0]
        assert leader.read() == Trick(1, ())
        dealt = leader.log[0]
        leader.peer.close()
        time.sleep(0.2)
        back = Player(port, leader.seat)
        assert back.read() == parse_message(dealt)
        assert back.read() == Trick(1, ())


def test_scores_on_hand_built_deals_of_every_type() -> None:
    """Each seat holds one suit, so the leader takes every trick: it scores the contract's whole table.
    Deals whose points run out end early (queens after 11 tricks, K/J and KH after 12)."""
    hands = tuple(sum(1 << (13 * s + r) for r in range(13)) for s in range(4))
    deals = [DealSpec(hands, kind, leader=(kind - 1) % 4) for kind in range(1, 8)]  # type: ignore[arg-type]
    full = {1: 13, 2: 13, 3: 20, 4: 16, 5: 18, 6: 20, 7: 100}
    tricks = {1: 13, 2: 13, 3: 11, 4: 12, 5: 12, 6: 13, 7: 13}
    with server_in_thread(deals) as (port, _, _out):
        players = join_four(port)
        run_until_end(players)
    log = players[0].log
    scores = [parse_message(x) for x in log if x.startswith("SCORE")]
    assert len(scores) == 7
    total = [0, 0, 0, 0]
    for kind, s in zip(range(1, 8), scores):
        assert isinstance(s, Score)
        expected = [0, 0, 0, 0]
        expected[(kind - 1) % 4] = full[kind]
        assert list(s.points) == expected, kind
        total = [a + b for a, b in zip(total, expected)]
    assert parse_message([x for x in log if x.startswith("TOTAL")][-1]) == Total(tuple(total))  # type: ignore[arg-type]
    per_deal: list[int] = []
    for x in log:
        if x.startswith("DEAL"):
            per_deal.append(0)
        elif x.startswith("TAKEN"):
            per_deal[-1] += 1
    assert per_deal == [tricks[k] for k in range(1, 8)]


def test_nobody_is_asked_while_a_seat_is_empty() -> None:
    deals = game_deals(15, kinds=(1,))
    with server_in_thread(deals, timeout=0.5) as (port, _, _out):
        players = join_four(port)
        leader = players[deals[0].leader or 0]
        assert leader.read() == Trick(1, ())
        gone = players[(leader.seat + 2) % 4]
        gone.peer.close()
        time.sleep(0.2)
        while leader.peer.lines:  # a repetition may have come before the close was seen
            leader.read()
        assert leader.peer.silent(1.2)  # two timeouts pass: no TRICK repeated while the seat is empty
        card = leader.play()  # a card asked for before the pause still counts
        nxt = players[(leader.seat + 1) % 4]
        assert nxt.peer.silent(0.5)  # but nobody new is asked
        back = Player(port, gone.seat)
        assert isinstance(back.read(), Deal)
        assert nxt.read(2) == Trick(1, (card,))  # the game goes on


@pytest.mark.skipif(not IPV6, reason="no IPv6 loopback here")
def test_ipv6_loopback() -> None:
    deals = game_deals(14, kinds=(5,))
    with server_in_thread(deals) as (port, _, out):
        players = [Player(port, s, host="::1" if s % 2 else "127.0.0.1") for s in range(4)]
        for p in players:
            assert isinstance(p.read(), Deal)
        run_until_end(players)
    assert "::1:" in out.getvalue()
    assert "127.0.0.1:" in out.getvalue()


# ----------------------------------------------------------------------------- hostile bytes, --host
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # what a terminal acts on (newlines split the report)


def test_control_bytes_from_clients_are_escaped_in_the_report() -> None:
    deals = game_deals(15, kinds=(1,))
    with server_in_thread(deals) as (port, _, out):
        intruder = Peer(port)
        intruder.send_raw(b"IAM\x1b[2J\x1b[H\r\n")  # erase the screen, then a malformed first message
        assert intruder.closed(3)
        players = join_four(port)
        leader = players[deals[0].leader or 0]
        assert leader.read() == Trick(1, ())
        leader.peer.send_raw(b"TRICK1\x1b]0;owned\x07\x00Q\rS\x9b\x7f\r\n")  # title, NUL, CR, C1 CSI, DEL
        assert leader.read() == Wrong(1)
        leader.play()
        run_until_end(players)
    report = out.getvalue()
    assert not CONTROL.search(report) and report.isascii()
    lines = parse_report(report)  # still one report line per message
    assert any(m == "IAM\\x1b[2J\\x1b[H" for _, _, m in lines)
    assert "] TRICK1\\x1b]0;owned\\x07\\x00Q\\rS\\ufffd\\x7f\n" in report


def test_the_automatic_client_escapes_what_a_server_sends(tmp_path: Path) -> None:
    """A hostile server: the client's report on stdout shows its bytes escaped."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve_once() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(100)  # IAM
            conn.sendall(b"BUSY\x1b[2JN\x00\r\nTOTAL\rN1\x9bE2S3W4\r\n")

    t = threading.Thread(target=serve_once, daemon=True)
    t.start()
    client = Proc(client_cmd(port, "N", "127.0.0.1", "-a"), tmp_path, "client")
    assert client.wait() == 1  # BUSY, then the close
    t.join(5)
    listener.close()
    out = client.out
    assert not CONTROL.search(out) and out.isascii()
    assert "] BUSY\\x1b[2JN\\x00\n" in out and "] TOTAL\\rN1\\ufffdE2S3W4\n" in out


def test_host_option_listens_on_that_address_only(tmp_path: Path) -> None:
    game = tmp_path / "game.txt"
    game.write_text(format_game_shuffled(game_deals(16, kinds=(1,)), random.Random(0)))
    args = [sys.executable, "-m", "moonshot.protocols.kierki.server", "-f", str(game), "--host", "127.0.0.1"]
    proc = Proc(args, tmp_path, "server")
    deadline = time.monotonic() + 20
    while not (m := re.search(r"listening on port (\d+) \(127\.0\.0\.1:\d+\)", proc.out)):
        assert time.monotonic() < deadline and proc.proc.poll() is None, proc.out + proc.err
        time.sleep(0.05)
    port = int(m.group(1))
    players = [Player(port, s) for s in range(4)]  # over 127.0.0.1: a whole game
    for p in players:
        assert isinstance(p.read(), Deal)
    run_until_end(players)
    assert proc.wait() == 0, proc.err
    if IPV6:
        # the same port on ::1 is not ours: nothing listens there (a fresh server on it, to be sure)
        proc2 = Proc([*args, "-p", str(port)], tmp_path, "server2")
        deadline = time.monotonic() + 20
        while "listening" not in proc2.out:
            assert time.monotonic() < deadline and proc2.proc.poll() is None, proc2.out + proc2.err
            time.sleep(0.05)
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("::1", port), timeout=2)
        Peer(port).close()  # while 127.0.0.1 answers
        proc2.proc.kill()
        proc2.wait()
