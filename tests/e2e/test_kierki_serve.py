"""Kierki inside a real ``moonshot serve`` process, played by real ``kierki-client -a`` processes:
a whole game on a game file, a client lost mid-deal whose seat a new client takes back, and a
``kill -9`` of the server mid-deal, a restart on the same store, and four new clients that
reconnect to their seats and finish the game.

One seat is sometimes a raw socket (``e2e.test_kierki.Player``): it plays its lowest legal card
and stops exactly where the test wants (after k tricks of a deal), which the real clients, which
play as fast as they can, cannot be made to do.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
import select
import signal
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from e2e.test_kierki import Player, Proc, client_cmd, parse_report
from moonshot.core.engine import Game
from moonshot.core.variants import KIERKI
from moonshot.protocols.kierki.codec import Deal, Total, Trick, format_message, parse_message
from moonshot.protocols.kierki.gamefile import format_game_shuffled, parse_game_in_order, random_deals
from moonshot.store import GameRecord, Store

pytestmark = pytest.mark.timeout(120)

SEATS = "NESW"


def start_serve(tmp_path: Path, name: str, *extra: str) -> tuple[Proc, int]:
    db = f"sqlite:///{tmp_path / 'games.db'}"
    args = [sys.executable, "-m", "moonshot.cli.main", "serve", "--no-sessions", "--no-http", "--kierki-port", "0"]
    args += ["--db", db, "--kierki-timeout", "2", "--log-level", "info", *extra]
    proc = Proc(args, tmp_path, name)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        m = re.search(r"Kierki protocol on tcp://[\d.]+:(\d+)", proc.out)
        if m and "restored from the store" in proc.out:
            return proc, int(m.group(1))
        assert proc.proc.poll() is None, proc.out + proc.err
        time.sleep(0.05)
    raise AssertionError("moonshot serve did not start: " + proc.out + proc.err)


def stop(proc: Proc) -> int:
    if proc.proc.poll() is None:
        proc.proc.send_signal(signal.SIGTERM)
    return proc.wait(30)


def records(tmp_path: Path) -> list[GameRecord]:
    async def load() -> list[GameRecord]:
        store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'games.db'}", create=False)
        try:
            out = []
            for g in await store.list_games(None):
                rec = await store.load(g["id"])
                assert rec is not None
                out.append(rec)
            return out
        finally:
            await store.close()

    return asyncio.run(load())


def drive(player: Player, until: object, timeout: float = 30) -> None:
    """Read and play (lowest legal card) until ``until(player)`` holds."""
    deadline = time.monotonic() + timeout
    while not until(player):  # type: ignore[operator]
        assert time.monotonic() < deadline, player.log[-5:]
        if not player.peer.lines:
            ready, _, _ = select.select([player.peer.sock], [], [], 1)
            if ready and not player.peer.pump():
                raise EOFError("the server closed the connection")
            continue
        if isinstance(player.read(), Trick):
            player.play()


def taken_in_deal(p: Player) -> list[str]:
    """The TAKEN lines of the deal in progress, as ``p`` saw them."""
    last_deal = max(i for i, line in enumerate(p.log) if line.startswith("DEAL"))
    return [line for line in p.log[last_deal:] if line.startswith("TAKEN")]


def deals_seen(p: Player) -> int:
    return sum(line.startswith("DEAL") for line in p.log)


def clients(tmp_path: Path, port: int, seats: str, tag: str) -> dict[str, Proc]:
    return {s: Proc(client_cmd(port, s, "127.0.0.1", "-a"), tmp_path, f"{tag}{s}") for s in seats}


def messages(proc: Proc) -> list[str]:
    return [m for _, _, m in parse_report(proc.out)]


def test_a_whole_game_of_four_real_clients_on_a_game_file(tmp_path: Path) -> None:
    deals = random_deals(random.Random(21), (1, 2, 3, 4, 5, 6, 7))
    game = tmp_path / "game.txt"
    game.write_text(format_game_shuffled(deals, random.Random(3)))
    server, port = start_serve(tmp_path, "serve", "--kierki-game", str(game))
    try:
        procs = clients(tmp_path, port, SEATS, "")
        for s, c in procs.items():
            assert c.wait(60) == 0, (s, c.out, c.err)
    finally:
        assert stop(server) == 0, server.err
    [rec] = records(tmp_path)
    assert rec.status == "finished" and rec.protocol == "kierki" and rec.variant == "kierki"
    assert [p["protocol"] for p in rec.players] == ["kierki"] * 4
    final = rec.rebuild()  # the game file's deals, kept in the record's meta
    assert final.over and list(final.totals) == rec.totals and not any(rec.forced)
    _, orders = parse_game_in_order(game.read_text())
    for i, s in enumerate(SEATS):
        got = messages(procs[s])
        assert got[0] == f"IAM{s}"
        dealt = [m for m in got if m.startswith("DEAL")]
        assert dealt == [format_message(Deal(d.kind, d.leader or 0, o[i])) for d, o in zip(deals, orders)]
        assert parse_message(got[-1]) == Total(tuple(rec.totals))  # type: ignore[arg-type]


def test_a_client_lost_mid_deal_and_a_new_client_takes_its_seat_back(tmp_path: Path) -> None:
    server, port = start_serve(tmp_path, "serve")
    try:
        n = Player(port, 0)
        procs = clients(tmp_path, port, "ESW", "")
        drive(n, lambda p: deals_seen(p) == 2 and len(taken_in_deal(p)) == 5)
        deal_line, taken = [line for line in n.log if line.startswith("DEAL")][-1], taken_in_deal(n)
        n.peer.close()  # N is lost after 5 tricks of deal 2; the table waits for IAMN
        time.sleep(0.3)
        procs["N"] = Proc(client_cmd(port, "N", "127.0.0.1", "-a"), tmp_path, "N")
        for s, c in procs.items():
            assert c.wait(60) == 0, (s, c.out, c.err)
    finally:
        assert stop(server) == 0, server.err
    got = messages(procs["N"])
    assert got[:7] == ["IAMN", deal_line, *taken]  # its cards of this deal, then the tricks so far
    assert sum(m.startswith("SCORE") for m in got) == 6  # deals 2..7
    [rec] = records(tmp_path)
    assert rec.status == "finished" and not any(rec.forced)
    assert parse_message(got[-1]) == Total(tuple(rec.totals))  # type: ignore[arg-type]
    replayed = Game(KIERKI, rec.seed)  # the seed dealt every hand
    for a in rec.actions:
        replayed.apply(a)
    assert replayed.over and list(replayed.totals) == rec.totals


def waits_on_w(tmp_path: Path) -> bool:
    [rec] = records(tmp_path)
    g = rec.rebuild()
    return g.deal_index == 6 and g.trick_no == 5 and g.to_act() == (3,)


def test_kill_9_mid_deal_then_restart_and_every_client_gets_its_seat_back(tmp_path: Path) -> None:
    server, port = start_serve(tmp_path, "serve1")
    w = Player(port, 3)
    procs = clients(tmp_path, port, "NES", "first")
    try:
        # W stops answering after 4 tricks of deal 7 (the robber: never ends early); the others
        # play on until the game waits on W
        drive(w, lambda p: deals_seen(p) == 7 and len(taken_in_deal(p)) == 4)
        deal_line, taken = [line for line in w.log if line.startswith("DEAL")][-1], taken_in_deal(w)
        deadline = time.monotonic() + 30
        while not waits_on_w(tmp_path):  # the others have played up to W, and the store has it all
            assert time.monotonic() < deadline, "the game never came to wait on W"
            time.sleep(0.1)
        server.proc.send_signal(signal.SIGKILL)
        assert server.wait(30) == -signal.SIGKILL
    finally:
        with contextlib.suppress(ProcessLookupError):
            server.proc.kill()
    for s, c in procs.items():
        assert c.wait(30) == 1, (s, c.out, c.err)  # the game was cut short
    w.peer.close()
    [before] = records(tmp_path)
    stored = before.rebuild()
    assert before.status == "running" and stored.deal_index == 6 and stored.trick_no == 5
    assert stored.to_act() == (3,)  # everything up to W's turn was stored

    server2, port2 = start_serve(tmp_path, "serve2")
    try:
        assert "1 unfinished games restored" in server2.out
        back = clients(tmp_path, port2, "WSEN", "back")
        for s, c in back.items():
            assert c.wait(60) == 0, (s, c.out, c.err)
    finally:
        assert stop(server2) == 0, server2.err
    got = messages(back["W"])
    assert got[: 2 + len(taken)] == ["IAMW", deal_line, *taken]
    [after] = records(tmp_path)
    assert after.id == before.id and after.status == "finished"
    n = len(before.actions)
    assert after.actions[:n] == before.actions and not any(after.forced)  # nobody played for them
    final = after.rebuild()
    assert final.over and list(final.totals) == after.totals
    for s in SEATS:
        last = messages(back[s])
        assert parse_message(last[-1]) == Total(tuple(after.totals))  # type: ignore[arg-type]
        assert sum(m.startswith("SCORE") for m in last) == 1  # the last deal's
        assert last[2 : 2 + len(taken)] == taken


def _flood(sock: socket.socket, data: bytes, stop: threading.Event) -> None:
    sock.settimeout(0.2)
    while not stop.is_set():
        try:
            sock.sendall(data)
        except TimeoutError:
            continue  # pushed back: the server reads this connection no faster than its limits
        except OSError:
            return  # closed by the server


def test_floods_and_junk_never_stop_another_table(tmp_path: Path) -> None:
    server, port = start_serve(tmp_path, "serve")
    stop_flood = threading.Event()
    threads = []
    try:
        # table B: four raw clients; N floods junk lines as fast as TCP takes them and never reads
        b = [Player(port, s) for s in range(4)]
        endless = socket.create_connection(("127.0.0.1", port))  # a line with no end, before IAM
        garbage = socket.create_connection(("127.0.0.1", port))  # binary noise before IAM
        for sock, data in (
            (b[0].peer.sock, b"JUNK\r\nTRICK99ZZ\r\n\x00\xff\x1b[2J\r\n" * 1000),
            (endless, b"X" * 65536),
            (garbage, bytes(range(256)) * 64),
        ):
            t = threading.Thread(target=_flood, args=(sock, data, stop_flood), daemon=True)
            t.start()
            threads.append(t)
        time.sleep(0.5)
        # table A: four real clients play a whole game meanwhile
        procs = clients(tmp_path, port, SEATS, "")
        for s, c in procs.items():
            assert c.wait(90) == 0, (s, c.out, c.err)
        assert server.proc.poll() is None
    finally:
        stop_flood.set()
        for t in threads:
            t.join(5)
        assert stop(server) == 0, server.err
    recs = {r.status: r for r in records(tmp_path)}
    assert set(recs) == {"finished", "running"}  # A finished; B waits for its flooder to play
    assert "Traceback" not in server.err
    assert [p["name"].split("@")[0] for p in recs["finished"].players] == [f"kierki-{s}" for s in SEATS]


def test_the_interactive_client_plays_a_whole_game_through_stdin(tmp_path: Path) -> None:
    import subprocess

    from e2e.test_kierki import _STARTED, _env

    server, port = start_serve(tmp_path, "serve")
    try:
        autos = clients(tmp_path, port, "NEW", "")
        human = subprocess.Popen(
            client_cmd(port, "S", "127.0.0.1"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=_env(),
        )
        _STARTED.append(human)
        assert human.stdin is not None and human.stdout is not None
        seen: list[str] = []
        trick: list[str] = []
        tried_wrong = False
        for line in human.stdout:
            seen.append(line.rstrip("\n"))
            if line.startswith("Trick: ("):
                rest = line.rstrip("\n").split(") ", 1)[1] if ") " in line else ""
                trick = [c for c in rest.split(", ") if c]
            elif line.startswith("Available: "):
                hand = line.rstrip("\n")[len("Available: ") :].split(", ")
                led = trick[0][-1] if trick else None
                follow = [c for c in hand if led and c[-1] == led]
                if not tried_wrong and follow and len(follow) < len(hand):
                    human.stdin.write(f"!{next(c for c in hand if c[-1] != led)}\n")  # WRONG; the prompt stands
                    tried_wrong = True
                human.stdin.write(f"!{(follow or hand)[0]}\n")
                human.stdin.flush()
        assert human.wait(30) == 0, "\n".join(seen[-20:])
        for s, a in autos.items():
            assert a.wait(30) == 0, (s, a.out, a.err)
    finally:
        assert stop(server) == 0, server.err
    text = "\n".join(seen)
    assert text.count("The total scores are:") == 7 and tried_wrong
    assert re.search(r"^Wrong message received in trick \d+\.$", text, re.M)
    [rec] = records(tmp_path)
    assert rec.status == "finished" and not any(rec.forced)
