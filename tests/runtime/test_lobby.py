"""The matching engine: game types, lobby codes, human/bot rules, filling with bots after a wait."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moonshot.bots.random import RandomBot
from moonshot.core.variants import find_variant
from moonshot.runtime.limits import ClientGuard, ClientLimits
from moonshot.runtime.lobby import Candidate, GameType, Lobby, LobbyError, Reseat
from moonshot.runtime.table import (
    BotSeat,
    DecisionRequest,
    OnDisconnect,
    Seat,
    SeatKind,
    Table,
    TableEvent,
    TablePolicy,
)


class Waiting(Seat):
    def __init__(self, name: str, kind: SeatKind = SeatKind.BOT) -> None:
        self.name = name
        self.kind = kind
        self.table: Table | None = None
        self.seat = -1

    def on_events(self, table: Table, events: Sequence[TableEvent]) -> None:
        pass

    def on_request(self, table: Table, request: DecisionRequest) -> None:
        pass

    def matched(self, table: Table, seat: int) -> None:
        self.table, self.seat = table, seat


def make_lobby(fill_wait: float | None = None) -> tuple[Lobby, list[Table]]:
    tables: list[Table] = []

    def start(seats: list[Seat]) -> Table:
        t = Table(find_variant("standard"), seats, seed=1)
        tables.append(t)
        return t

    return Lobby(start, lambda: BotSeat(RandomBot(), name="filler"), fill_wait, random.Random(0)), tables


def join(lobby: Lobby, name: str, gt: GameType = GameType.ANY, code: str | None = None, human: bool = False) -> Waiting:
    w = Waiting(name, SeatKind.HUMAN if human else SeatKind.BOT)
    lobby.join(Candidate(w, gt, code, w.matched))
    return w


@pytest.mark.asyncio
async def test_four_players_make_a_table_in_shuffled_chairs() -> None:
    lobby, tables = make_lobby()
    ws = [join(lobby, f"p{i}") for i in range(4)]
    assert len(tables) == 1 and lobby.waiting() == 0
    assert sorted(w.seat for w in ws) == [0, 1, 2, 3]
    assert all(tables[0].chairs[w.seat].occupant is w for w in ws)


@pytest.mark.asyncio
async def test_lobby_codes_and_game_types_do_not_mix() -> None:
    lobby, tables = make_lobby()
    for i in range(3):
        join(lobby, f"a{i}", code="A")
        join(lobby, f"b{i}", code="B")
        join(lobby, f"h{i}", GameType.HUMANS_ONLY, human=True)
        join(lobby, f"o{i}", GameType.BOTS_ONLY)
    assert not tables and lobby.waiting() == 12
    join(lobby, "a3", code="A")
    assert len(tables) == 1 and {c.occupant.name for c in tables[0].chairs if c.occupant} == {"a0", "a1", "a2", "a3"}


@pytest.mark.asyncio
async def test_humans_only_refuses_bots_and_bots_only_refuses_humans() -> None:
    lobby, _ = make_lobby()
    with pytest.raises(LobbyError):
        join(lobby, "bot", GameType.HUMANS_ONLY)
    with pytest.raises(LobbyError):
        join(lobby, "human", GameType.BOTS_ONLY, human=True)
    assert lobby.waiting() == 0


@pytest.mark.asyncio
async def test_any_is_filled_with_bots_after_the_wait_but_humans_only_is_not() -> None:
    lobby, tables = make_lobby(fill_wait=0.05)
    alone = join(lobby, "solo")
    humans = [join(lobby, f"h{i}", GameType.HUMANS_ONLY, human=True) for i in range(2)]
    await asyncio.sleep(0.15)
    assert len(tables) == 1 and alone.table is tables[0]
    assert sorted(c.occupant.name for c in tables[0].chairs if c.occupant) == ["filler", "filler", "filler", "solo"]
    assert all(h.table is None for h in humans) and lobby.waiting() == 2


@pytest.mark.asyncio
async def test_leaving_before_a_match() -> None:
    lobby, tables = make_lobby(fill_wait=0.05)
    w = Waiting("gone")
    c = Candidate(w, GameType.ANY, None, w.matched)
    lobby.join(c)
    assert lobby.leave(c) and not lobby.leave(c)
    await asyncio.sleep(0.1)
    assert not tables


@pytest.mark.asyncio
async def test_each_protocol_has_its_pools_starter_and_bots_and_chairs_asked_for_are_given() -> None:
    tables: list[tuple[str, Table]] = []

    def starter(tag: str) -> Callable[[list[Seat]], Table]:
        def start(seats: list[Seat]) -> Table:
            t = Table(find_variant("trend" if tag == "trend" else "standard"), seats, seed=1)
            tables.append((tag, t))
            return t

        return start

    lobby = Lobby(
        starter("sessions"),
        lambda: BotSeat(RandomBot(), name="filler"),
        0.05,
        random.Random(3),
        starters={"trend": starter("trend")},
        bots={"trend": lambda: BotSeat(RandomBot(), name="trend-filler")},
    )
    sessions = [Waiting(f"s{i}") for i in range(3)]
    for w in sessions:
        lobby.join(Candidate(w, GameType.ANY, None, w.matched))
    trend = [Waiting(f"t{i}") for i in range(2)]
    for i, w in enumerate(trend):
        lobby.join(Candidate(w, GameType.ANY, None, w.matched, protocol="trend", chair=3 - i))
    assert not tables and lobby.waiting() == 5  # three Sessions and two Trend players never mix
    await asyncio.sleep(0.15)
    kinds = {tag: t for tag, t in tables}
    assert set(kinds) == {"sessions", "trend"}
    assert kinds["trend"].rules.name == "trend" and kinds["sessions"].rules.name == "standard"
    assert [w.seat for w in trend] == [3, 2]  # the chairs they asked for
    names = sorted(c.occupant.name for c in kinds["trend"].chairs if c.occupant)
    assert names == ["t0", "t1", "trend-filler", "trend-filler"]


@pytest.mark.asyncio
async def test_a_router_claims_codes_hosted_elsewhere_first() -> None:
    lobby, tables = make_lobby()
    claimed: list[Candidate] = []

    class Router:
        def claim(self, c: Candidate) -> bool:
            if c.lobby_code == "refused":
                raise LobbyError("that table cannot take you")
            if c.lobby_code == "elsewhere":
                claimed.append(c)
                return True
            return False

        def release(self, c: Candidate) -> bool:
            if c in claimed:
                claimed.remove(c)
                return True
            return False

    lobby.router = Router()
    seats = [Waiting(f"p{i}") for i in range(4)]
    cands = [Candidate(s, GameType.ANY, "elsewhere", s.matched) for s in seats]
    for c in cands:
        lobby.join(c)
    assert claimed == cands and not tables and lobby.waiting() == 0  # never pooled here
    assert lobby.leave(cands[0]) and claimed == cands[1:]
    with pytest.raises(LobbyError, match="cannot take you"):
        lobby.join(Candidate(Waiting("x"), GameType.ANY, "refused"))
    for s in [Waiting(f"q{i}") for i in range(4)]:  # other codes: the ordinary pools
        lobby.join(Candidate(s, GameType.ANY, "ours", s.matched))
    assert len(tables) == 1


def join_exact(lobby: Lobby, name: str, chair: int) -> Waiting:
    w = Waiting(name, SeatKind.HUMAN)
    lobby.join(Candidate(w, GameType.ANY, None, w.matched, protocol="kierki", chair=chair, exact_chair=True))
    return w


@pytest.mark.asyncio
async def test_exact_chairs_wait_for_one_of_each_and_a_second_asker_starts_the_next_table() -> None:
    lobby, tables = make_lobby(fill_wait=0.05)
    n1, n2, e1, s1 = (join_exact(lobby, "n1", 0), join_exact(lobby, "n2", 0), join_exact(lobby, "e1", 1),
                      join_exact(lobby, "s1", 2))  # fmt: skip
    assert not tables and lobby.waiting() == 4
    await asyncio.sleep(0.15)
    assert not tables  # exact chairs are never filled with bots
    w1 = join_exact(lobby, "w1", 3)
    assert len(tables) == 1 and lobby.waiting() == 1  # n2 waits for the next table
    assert [w.seat for w in (n1, e1, s1, w1)] == [0, 1, 2, 3]
    assert [tables[0].chairs[i].occupant for i in range(4)] == [n1, e1, s1, w1]
    assert n2.table is None
    for t in tables:
        t.stop()


@pytest.mark.asyncio
async def test_an_exact_chair_candidate_can_leave_the_queue() -> None:
    lobby, tables = make_lobby()
    w = Waiting("n", SeatKind.HUMAN)
    c = Candidate(w, GameType.ANY, None, w.matched, protocol="kierki", chair=0, exact_chair=True)
    lobby.join(c)
    assert lobby.waiting() == 1
    assert lobby.leave(c) and lobby.waiting() == 0
    for chair, name in ((1, "e"), (2, "s"), (3, "w")):
        join_exact(lobby, name, chair)
    assert not tables  # the N who left is not matched


def join_reseat(lobby: Lobby, name: str, chair: int, rules: Reseat) -> Waiting:
    w = Waiting(name, SeatKind.HUMAN)
    c = Candidate(w, GameType.ANY, None, w.matched, protocol="kierki", chair=chair, exact_chair=True, reseat=rules)
    lobby.join(c)
    return w


@pytest.mark.asyncio
async def test_a_running_tables_free_chair_goes_first_to_a_waiting_player_then_to_the_next_asker() -> None:
    lobby, tables = make_lobby()
    rules = Reseat()
    first = [join_reseat(lobby, f"p{c}", c, rules) for c in range(4)]
    assert len(tables) == 1 and lobby.running("kierki")[0].table is tables[0]
    second_e = join_reseat(lobby, "e2", 1, rules)  # E is taken: it waits for a free E
    assert second_e.table is None and lobby.waiting() == 1
    tables[0].detach(1, first[1])  # E leaves: the waiting E takes the chair at once
    assert second_e.table is tables[0] and second_e.seat == 1 and lobby.waiting() == 0
    tables[0].detach(2, first[2])  # S leaves with nobody waiting: the chair stays free ...
    third_s = join_reseat(lobby, "s3", 2, rules)  # ... for the next S, not a new table
    assert third_s.table is tables[0] and third_s.seat == 2 and len(tables) == 1
    tables[0].detach(0, Waiting("not the occupant"))  # a stale detach frees nothing
    assert join_reseat(lobby, "n4", 0, rules).table is None and lobby.waiting() == 1
    tables[0].start()
    tables[0].stop()
    await asyncio.wait_for(asyncio.shield(tables[0].done), 5)  # its end takes its chairs off the offer
    assert not lobby.running("kierki")


@pytest.mark.asyncio
async def test_a_reseating_table_whose_chairs_all_stay_empty_is_given_up() -> None:
    tables: list[Table] = []

    def start(seats: list[Seat]) -> Table:  # a chair left waits for its player (no bot plays it)
        tables.append(
            Table(find_variant("kierki"), seats, seed=1, policy=TablePolicy(on_disconnect=OnDisconnect.PAUSE))
        )
        return tables[-1]

    lobby = Lobby(start, lambda: BotSeat(RandomBot(), name="filler"), None, random.Random(0))
    given_up: list[Table] = []
    rules = Reseat(abandon_after=0.05, on_abandoned=given_up.append)
    ws = [join_reseat(lobby, f"p{c}", c, rules) for c in range(4)]
    tables[0].start()
    for c, w in enumerate(ws):
        tables[0].detach(c, w)
    await asyncio.wait_for(asyncio.shield(tables[0].done), 5)
    assert given_up == tables and not lobby.running("kierki")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 3)), max_size=80))
def test_exact_chairs_form_tables_first_come_per_chair(ops: list[tuple[bool, int]]) -> None:
    """Whatever the joins and leaves, each table seats the first waiting player of each chair in
    that chair, and the lobby holds exactly the players a per-chair queue model still holds."""

    async def run() -> None:
        lobby, tables = make_lobby(fill_wait=0.0)
        model: list[list[Candidate]] = [[], [], [], []]
        formed: list[list[Candidate]] = []
        for n, (joining, chair) in enumerate(ops):
            if joining or not model[chair]:
                w = Waiting(f"p{n}", SeatKind.HUMAN)
                c = Candidate(w, GameType.ANY, None, w.matched, protocol="kierki", chair=chair, exact_chair=True)
                model[chair].append(c)
                lobby.join(c)
                if all(model):
                    formed.append([q.pop(0) for q in model])
            else:
                c = model[chair].pop(0)
                assert lobby.leave(c)
            assert lobby.waiting() == sum(len(q) for q in model)
        assert len(tables) == len(formed)
        for t, group in zip(tables, formed):
            assert [t.chairs[i].occupant for i in range(4)] == [c.seat for c in group]
            t.stop()

    asyncio.run(run())


def paced_lobby(fill_wait: float | None, rate: float, burst: float) -> tuple[Lobby, list[Table], ClientGuard]:
    lobby, tables = make_lobby(fill_wait)
    guard = ClientGuard(ClientLimits(tables_per_s=rate, tables_burst=burst))
    lobby.pace = guard.start_table
    return lobby, tables, guard


def join_from(lobby: Lobby, address: str, name: str, code: str | None = None) -> tuple[Waiting, Candidate]:
    w = Waiting(name)
    c = Candidate(w, GameType.ANY, code, w.matched, address=address)
    lobby.join(c)
    return w, c


async def until(cond: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not cond():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.005)


@pytest.mark.asyncio
async def test_one_address_starts_a_burst_of_tables_then_a_few_a_second_and_others_are_not_held() -> None:
    lobby, tables, guard = paced_lobby(None, rate=10.0, burst=2)
    for i in range(12):  # three tables of four from one address, at once
        join_from(lobby, "10.0.0.1", f"a{i}", code="flood")
    assert len(tables) == 2 and lobby.waiting() == 4 and lobby.paced >= 1
    other = [join_from(lobby, "10.0.0.2", f"b{i}", code="mine")[0] for i in range(4)]
    assert len(tables) == 3 and other[0].table is tables[2]  # another address is not held back
    await until(lambda: len(tables) == 4)  # the third of the first address's, a tenth of a second on
    assert lobby.waiting() == 0 and guard.tables_by_address.refused >= 1
    for t in tables:
        t.stop()


@pytest.mark.asyncio
async def test_bot_filled_tables_of_one_address_are_paced_and_a_player_who_left_costs_nothing() -> None:
    lobby, tables, _ = paced_lobby(0.01, rate=20.0, burst=3)
    cands = [join_from(lobby, "10.0.0.1", f"a{i}", code=f"c{i}")[1] for i in range(8)]
    await until(lambda: len(tables) >= 3)
    assert len(tables) == 3  # the burst; the others wait in their pools
    gone = [c for c in cands if c.seat.table is None][:4]  # type: ignore[attr-defined]
    for c in gone:
        assert lobby.leave(c)
    await until(lambda: len(tables) == 4)  # the one left starts at the rate
    assert lobby.waiting() == 0 and all(c.seat.table is None for c in gone)  # type: ignore[attr-defined]
    for t in tables:
        t.stop()


@pytest.mark.asyncio
async def test_paced_exact_chairs_start_when_the_rate_allows() -> None:
    lobby, tables, _ = paced_lobby(None, rate=20.0, burst=1)
    for k in range(2):
        for chair in range(4):
            w = Waiting(f"p{k}{chair}", SeatKind.HUMAN)
            lobby.join(
                Candidate(w, GameType.ANY, None, w.matched, protocol="kierki", chair=chair, exact_chair=True,
                          address="10.0.0.1")
            )  # fmt: skip
    assert len(tables) == 1 and lobby.waiting() == 4
    await until(lambda: len(tables) == 2)
    assert lobby.waiting() == 0
    for t in tables:
        t.stop()
