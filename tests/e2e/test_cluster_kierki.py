"""Kierki on a cluster: ``moonshot serve --kierki-port`` processes sharing Redis and PostgreSQL
(both real).

* Four real ``kierki-client -a`` processes, two on each of two processes, meet at one table with
  the seats they asked for and play a whole game on a game file; the game is stored once.
* ``--workers 2``: four clients on one shared port (wherever the kernel puts them) play a game.
* A client lost on one process: a new client says ``IAM<seat>`` on the other and takes the seat
  back (DEAL of this deal, TAKEN so far), and the game finishes.
* ``kill -9`` of the process that owns a running table: the other process adopts it, its own
  clients carry on, the dead process's clients come back with ``IAM<seat>`` there, the game
  finishes and the stored record replays to the scores every client was told.

Skipped, with the reason, when Redis or PostgreSQL is not there (see ``e2e.test_cluster``).
"""

from __future__ import annotations

import asyncio
import random
import re
import secrets
import select
import signal
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from e2e.test_cluster import PG_ADMIN, REDIS_URL
from e2e.test_kierki import Player, Proc, client_cmd, parse_report
from moonshot.protocols.kierki.codec import Deal, Total, Trick, format_message, parse_message
from moonshot.protocols.kierki.gamefile import format_game_shuffled, parse_game_in_order, random_deals
from moonshot.store import GameRecord, Store

pytestmark = pytest.mark.timeout(600)

SEATS = "NESW"


@dataclass
class Where:
    redis_url: str
    prefix: str
    db: str
    tmp: Path


@pytest.fixture
def where(tmp_path: Path) -> Iterator[Where]:
    try:
        import asyncpg
        import redis.asyncio as aioredis
    except ImportError:
        pytest.skip("needs the redis and asyncpg packages: pip install -e '.[scale,postgres]'")

    async def check() -> None:
        r = aioredis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
        try:
            await r.ping()
        finally:
            await r.aclose()

    try:
        asyncio.run(check())
    except Exception as e:
        pytest.skip(f"Redis not reachable at {REDIS_URL} ({e})")
    name = f"moonshot_kierki_{secrets.token_hex(4)}"

    async def admin(sql: str) -> None:
        conn = await asyncpg.connect(PG_ADMIN, timeout=3)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    try:
        asyncio.run(admin(f"CREATE DATABASE {name}"))
    except Exception as e:
        pytest.skip(f"PostgreSQL not reachable at {PG_ADMIN} ({e})")
    prefix = f"moonshot-test-{secrets.token_hex(4)}:"
    try:
        yield Where(REDIS_URL, prefix, f"{PG_ADMIN.rsplit('/', 1)[0]}/{name}", tmp_path)
    finally:

        async def clean() -> None:
            r = aioredis.Redis.from_url(REDIS_URL)
            try:
                keys = [k async for k in r.scan_iter(match=f"{prefix}*")]
                if keys:
                    await r.delete(*keys)
            finally:
                await r.aclose()

        asyncio.run(clean())
        asyncio.run(admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_node(w: Where, name: str, *extra: str, port: int = 0, workers: int = 1) -> tuple[Proc, int]:
    """A node (``workers`` processes on ``port``; 0: a free port, one process); its Kierki port."""
    args = [sys.executable, "-m", "moonshot.cli.main", "serve", "--no-sessions", "--no-http"]
    args += ["--kierki-port", str(port), "--kierki-timeout", "2", "--db", w.db, "--redis", w.redis_url]
    args += ["--cluster-prefix", w.prefix, "--lease", "1", "--log-level", "info", "--workers", str(workers), *extra]
    proc = Proc(args, w.tmp, name)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        out = proc.out
        m = re.search(r"Kierki protocol on tcp://[\d.]+:(\d+)", out)
        if m and out.count("restored from the store") >= workers:
            return proc, int(m.group(1))
        assert proc.proc.poll() is None, out + proc.err
        time.sleep(0.05)
    raise AssertionError(f"{name} did not start: " + proc.out + proc.err)


def stop(proc: Proc) -> int:
    if proc.proc.poll() is None:
        proc.proc.send_signal(signal.SIGTERM)
    return proc.wait(30)


def records(w: Where) -> list[GameRecord]:
    async def load() -> list[GameRecord]:
        store = await Store.open(w.db, create=False)
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


def settled(w: Where, timeout: float = 120) -> GameRecord:
    """The one stored game, once it is finished (the store is written behind)."""
    deadline = time.monotonic() + timeout
    while True:
        recs = records(w)
        if len(recs) == 1 and recs[0].status == "finished":
            return recs[0]
        assert time.monotonic() < deadline, [(r.id, r.status) for r in recs]
        time.sleep(0.2)


def messages(proc: Proc) -> list[str]:
    return [m for _, _, m in parse_report(proc.out)]


def drive(players: list[Player], until: Callable[[], bool], timeout: float = 240) -> set[int]:
    """Every player reads and plays (lowest legal card) until ``until()`` holds or each one's
    connection is closed. Returns the indexes of the players whose connection closed."""
    closed: set[int] = set()
    deadline = time.monotonic() + timeout
    while not until():
        assert time.monotonic() < deadline, [p.log[-3:] for p in players]
        progressed = False
        for i, p in enumerate(players):
            if i not in closed and p.peer.lines:
                if isinstance(p.read(), Trick):
                    p.play()
                progressed = True
                if until():
                    return closed
        if progressed:
            continue
        socks = {p.peer.sock: i for i, p in enumerate(players) if i not in closed}
        if not socks:
            return closed
        ready, _, _ = select.select(list(socks), [], [], 1)
        for sock in ready:
            if not players[socks[sock]].peer.pump():
                closed.add(socks[sock])
    return closed


def taken_in_deal(p: Player) -> list[str]:
    last_deal = max(i for i, line in enumerate(p.log) if line.startswith("DEAL"))
    return [line for line in p.log[last_deal:] if line.startswith("TAKEN")]


def deals_seen(p: Player) -> int:
    return sum(line.startswith("DEAL") for line in p.log)


def owner_of_the_table(w: Where) -> str:
    import redis

    r = redis.Redis.from_url(w.redis_url)
    try:
        owners = list(r.hgetall(f"{w.prefix}tables").values())
    finally:
        r.close()
    assert len(owners) == 1, owners
    return str(owners[0].decode())


def test_four_clients_on_two_processes_meet_and_play_a_whole_game(where: Where) -> None:
    deals = random_deals(random.Random(5), (1, 2, 3, 4, 5, 6, 7))
    game = where.tmp / "game.txt"
    game.write_text(format_game_shuffled(deals, random.Random(8)))
    a, pa = start_node(where, "a", "--kierki-game", str(game))
    b, pb = start_node(where, "b", "--kierki-game", str(game))
    try:
        procs = {s: Proc(client_cmd(pa if s in "NS" else pb, s, "127.0.0.1", "-a"), where.tmp, s) for s in SEATS}
        for s, c in procs.items():
            assert c.wait(240) == 0, (s, c.out, c.err)
        rec = settled(where)
    finally:
        assert stop(a) == 0, a.err
        assert stop(b) == 0, b.err
    assert (a.err + b.err).count("event=cluster_matched protocol=kierki ") == 1  # one table, formed on one process
    assert "Traceback" not in a.err + b.err
    assert rec.protocol == "kierki" and rec.variant == "kierki" and not any(rec.forced)
    assert [p["protocol"] for p in rec.players] == ["kierki"] * 4
    final = rec.rebuild()  # the game file's deals, kept in the record's meta
    assert final.over and list(final.totals) == rec.totals
    _, orders = parse_game_in_order(game.read_text())
    for i, s in enumerate(SEATS):
        got = messages(procs[s])
        assert got[0] == f"IAM{s}"
        dealt = [m for m in got if m.startswith("DEAL")]
        assert dealt == [format_message(Deal(d.kind, d.leader or 0, o[i])) for d, o in zip(deals, orders)]
        assert parse_message(got[-1]) == Total(tuple(rec.totals))  # type: ignore[arg-type]


def test_workers_share_the_kierki_port(where: Where) -> None:
    node, port = start_node(where, "workers", port=free_port(), workers=2)
    try:
        procs = {s: Proc(client_cmd(port, s, "127.0.0.1", "-a"), where.tmp, s) for s in SEATS}
        for s, c in procs.items():
            assert c.wait(240) == 0, (s, c.out, c.err)
        rec = settled(where)
    finally:
        assert stop(node) == 0, node.err
    assert rec.rebuild().over and not any(rec.forced)
    for s in SEATS:
        assert parse_message(messages(procs[s])[-1]) == Total(tuple(rec.totals))  # type: ignore[arg-type]


def test_a_client_lost_on_one_process_takes_its_seat_back_on_the_other(where: Where) -> None:
    a, pa = start_node(where, "a")
    b, pb = start_node(where, "b")
    try:
        n = Player(pa, 0)
        procs = {s: Proc(client_cmd(pb if s == "E" else pa, s, "127.0.0.1", "-a"), where.tmp, s) for s in "ESW"}
        # three tricks: deal 2 (no hearts) ends once all 13 hearts are taken, which takes at least four
        drive([n], lambda: deals_seen(n) == 2 and len(taken_in_deal(n)) == 3)
        deal_line, taken = [line for line in n.log if line.startswith("DEAL")][-1], taken_in_deal(n)
        n.peer.close()  # N is lost on process a after 3 tricks of deal 2; the table waits for IAMN
        time.sleep(0.3)
        procs["N"] = Proc(client_cmd(pb, "N", "127.0.0.1", "-a"), where.tmp, "N")  # back, on process b
        for s, c in procs.items():
            assert c.wait(240) == 0, (s, c.out, c.err)
        rec = settled(where)
    finally:
        assert stop(a) == 0, a.err
        assert stop(b) == 0, b.err
    got = messages(procs["N"])
    assert got[: 2 + len(taken)] == ["IAMN", deal_line, *taken]  # its cards of this deal, the tricks so far
    assert sum(m.startswith("SCORE") for m in got) == 6  # deals 2..7
    assert not any(rec.forced) and rec.rebuild().over
    assert parse_message(got[-1]) == Total(tuple(rec.totals))  # type: ignore[arg-type]


@pytest.mark.parametrize("victim", ["owner", "other"])
def test_kill_9_mid_game_the_lost_clients_come_back_elsewhere_and_the_game_finishes(where: Where, victim: str) -> None:
    """``owner``: the process running the table dies; the other adopts it. ``other``: the process
    holding two of the connections dies; the owner frees their seats."""
    deals = random_deals(random.Random(9), (1, 2, 3, 4, 5, 6, 7))
    game = where.tmp / "game.txt"
    game.write_text(format_game_shuffled(deals, random.Random(4)))
    started = {k: start_node(where, k, "--kierki-game", str(game)) for k in "ab"}
    nodes = {k: proc for k, (proc, _) in started.items()}
    ports = {k: port for k, (_, port) in started.items()}
    on = {0: "a", 1: "b", 2: "a", 3: "b"}  # N and S on a, E and W on b
    players = [Player(ports[on[s]], s) for s in range(4)]
    try:
        drive(players, lambda: deals_seen(players[0]) == 3 and len(taken_in_deal(players[0])) == 6)
        owner = owner_of_the_table(where)
        owning = next(k for k, proc in nodes.items() if f"node={owner} " in proc.err)
        dead = owning if victim == "owner" else ("b" if owning == "a" else "a")
        alive = "b" if dead == "a" else "a"
        nodes[dead].proc.send_signal(signal.SIGKILL)
        assert nodes[dead].wait(30) == -signal.SIGKILL
        lost = [s for s in range(4) if on[s] == dead]
        before = {}
        for s in lost:
            players[s].peer.close()
            before[s] = ([line for line in players[s].log if line.startswith("DEAL")][-1], taken_in_deal(players[s]))
        for s in lost:  # they come back, on the process that is left
            players[s] = Player(ports[alive], s)
        closed = drive(players, lambda: False, timeout=60)
        assert closed == {0, 1, 2, 3}
        rec = settled(where)
        err = nodes[alive].err
    finally:
        for proc in nodes.values():
            if proc.proc.poll() is None:
                stop(proc)
    assert ("event=adopted" in err and "protocol=kierki" in err) == (victim == "owner")
    assert "Traceback" not in err
    assert not any(rec.forced)  # nobody played for anyone
    final = rec.rebuild()  # the game file's deals, from the record's meta
    assert final.over and list(final.totals) == rec.totals
    for s in range(4):
        p = players[s]
        assert parse_message(p.log[-1]) == Total(tuple(rec.totals))  # type: ignore[arg-type]
        assert deals_seen(p) == (5 if s in lost else 7)  # back in deal 3
        if s in lost:  # this deal's cards first, then the tricks so far
            deal_line, taken = before[s]
            assert p.log[0] == deal_line and p.log[1 : 1 + len(taken)] == taken


def redis_keys(w: Where) -> dict[str, object]:
    import redis

    r = redis.Redis.from_url(w.redis_url)
    try:
        return {
            "tables": r.hgetall(f"{w.prefix}tables"),
            # the Kierki pool's free-chair hashes, one per seat letter
            "kseat": [r.hgetall(f'{w.prefix}free:["kierki", "any", null]:{c}') for c in range(4)],
        }
    finally:
        r.close()


def test_a_stopped_cluster_comes_back_and_its_clients_finish_the_game(where: Where) -> None:
    started = {k: start_node(where, k) for k in "ab"}
    nodes = {k: proc for k, (proc, _) in started.items()}
    on = {0: "a", 1: "b", 2: "a", 3: "b"}
    players = [Player(started[on[s]][1], s) for s in range(4)]
    try:
        drive(players, lambda: deals_seen(players[0]) == 2 and len(taken_in_deal(players[0])) == 3)
        deal_lines = [[line for line in p.log if line.startswith("DEAL")][-1] for p in players]
        for proc in nodes.values():  # both at once: the game stays in Redis and in the store
            proc.proc.send_signal(signal.SIGTERM)
        for k, proc in nodes.items():
            assert proc.wait(30) == 0, (k, proc.err)
        for p in players:
            p.peer.close()
        assert records(where)[0].status == "running"
        c, port = start_node(where, "c")  # adopts the table nobody holds
        back = [Player(port, s) for s in (3, 1, 0, 2)]
        closed = drive(back, lambda: False, timeout=60)
        assert closed == {0, 1, 2, 3}
        rec = settled(where)
    finally:
        for proc in [*nodes.values(), *([c] if "c" in locals() else [])]:
            if proc.proc.poll() is None:
                stop(proc)
    assert "event=adopted" in c.err and "Traceback" not in c.err
    assert not any(rec.forced) and rec.rebuild().over
    for p in back:
        assert p.log[0] == deal_lines[p.seat]  # this deal's cards again
        assert parse_message(p.log[-1]) == Total(tuple(rec.totals))  # type: ignore[arg-type]


def test_a_table_nobody_returns_to_is_given_up_and_the_next_four_get_a_new_one(where: Where) -> None:
    started = {k: start_node(where, k, "--kierki-abandon", "1") for k in "ab"}
    nodes = {k: proc for k, (proc, _) in started.items()}
    ports = {k: port for k, (_, port) in started.items()}
    try:
        players = [Player(ports["ab"[s % 2]], s) for s in range(4)]
        drive(players, lambda: deals_seen(players[0]) == 1 and len(taken_in_deal(players[0])) == 2)
        for p in players:
            p.peer.close()
        deadline = time.monotonic() + 20
        while not ([r.status for r in records(where)] == ["aborted"] and not redis_keys(where)["tables"]):
            assert time.monotonic() < deadline, ([r.status for r in records(where)], redis_keys(where))
            time.sleep(0.2)
        assert redis_keys(where)["kseat"] == [{}, {}, {}, {}]
        fresh = [Player(ports["ba"[s % 2]], s) for s in range(4)]
        assert drive(fresh, lambda: False, timeout=60) == {0, 1, 2, 3}
        assert all(p.log[0].startswith("DEAL") and deals_seen(p) == 7 for p in fresh)  # a whole new game
    finally:
        for proc in nodes.values():
            assert stop(proc) == 0, proc.err
    recs = sorted(records(where), key=lambda r: r.status)
    assert [r.status for r in recs] == ["aborted", "finished"]
