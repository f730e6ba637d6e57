"""The clock (moonshot.runtime.clock and the table's one deadline mechanism): a person's time runs
out and the table's bot plays for them; repeated timeouts hand the seat to the bot until the
person acts again; watchers are told the countdown. Waits are on events, never fixed sleeps."""

from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager

import pytest

from moonshot.bots.random import RandomBot
from moonshot.core.variants import find_variant
from moonshot.runtime.clock import RATED_CLOCK, ClockError, Countdown, parse_clock
from moonshot.runtime.table import (
    BotSeat,
    DecisionRequest,
    OnBadAnswer,
    OnDisconnect,
    Seat,
    SeatKind,
    Table,
    TableEvent,
    TablePolicy,
)

RULES = find_variant("standard").replace(score_limit=30)
CLOCK = 1.0
SLACK = 6.0  # generous: the CI machine is busy


class Person(Seat):
    """A person in a browser: patient (only the clock times them), answers when told to."""

    patient = True

    def __init__(self, answer: bool = False) -> None:
        self.name = "ann"
        self.kind = SeatKind.HUMAN
        self.answer = answer
        self.requests: list[tuple[float, DecisionRequest]] = []
        self.events: list[TableEvent] = []
        self.changed = asyncio.Event()
        self.rng = random.Random(3)

    def on_events(self, table: Table, events: Sequence[TableEvent]) -> None:
        self.events.extend(events)
        self.changed.set()

    def on_request(self, table: Table, request: DecisionRequest) -> None:
        self.requests.append((asyncio.get_running_loop().time(), request))
        self.changed.set()
        if self.answer:
            action = RandomBot().act(request.view, self.rng)
            asyncio.get_running_loop().call_soon(table.submit, request.seat, action, request.request_id)


class Watcher:
    """Told the clocks; ``on_away`` (if any) is called each time they show seat 0 handed to the bot."""

    def __init__(self, on_away: Callable[[], None] | None = None) -> None:
        self.countdowns: list[tuple[float, Countdown]] = []
        self.changed = asyncio.Event()
        self.on_away = on_away

    def on_events(self, table: Table, events: Sequence[TableEvent]) -> None:
        pass

    def on_clock(self, table: Table, countdown: Countdown) -> None:
        self.countdowns.append((asyncio.get_running_loop().time(), countdown))
        self.changed.set()
        if self.on_away is not None and countdown.away == (0,):
            self.on_away()


@asynccontextmanager
async def running(table: Table, watcher: Watcher | None = None) -> AsyncIterator[Table]:
    """The table started (watched by ``watcher``, if any), then stopped and finished on the way out."""
    if watcher is not None:
        table.watch(watcher)
    table.start()
    try:
        yield table
    finally:
        table.stop()
        await table.done


async def until(cond, what: str, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    """Wait until ``cond()`` holds (a short poll of state the table's callbacks set)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        if loop.time() > end:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


def clocked_table(person: Seat, *, clock: float | None = CLOCK, handover: int | None = 2, rules=RULES) -> Table:  # type: ignore[no-untyped-def]
    seats: list[Seat | None] = [person] + [BotSeat(RandomBot(), random.Random(i)) for i in range(1, 4)]
    policy = TablePolicy(
        decision_timeout=None,
        on_timeout=OnBadAnswer.PAUSE,
        on_illegal=OnBadAnswer.PAUSE,
        on_disconnect=OnDisconnect.PAUSE,
        clock=clock,
        clock_handover=handover,
        substitute=RandomBot,
    )
    return Table(rules, seats, seed=7, policy=policy)


def forced_of(person: Person) -> list[TableEvent]:
    return [te for te in person.events if te.forced and getattr(te.event, "seat", None) == 0]


@pytest.mark.asyncio
async def test_parse_clock() -> None:
    assert parse_clock(None, rated=True) == RATED_CLOCK
    assert parse_clock(None, rated=False) is None
    assert parse_clock(0, rated=False) is None
    assert parse_clock(15, rated=True) == 15.0
    for bad in (0, "30", True, 7, -1):
        with pytest.raises(ClockError):
            parse_clock(bad, rated=True)
    assert parse_clock(1.5, rated=False, choices=None) == 1.5
    with pytest.raises(ClockError):
        parse_clock(0.1, rated=False, choices=None)


@pytest.mark.asyncio
async def test_countdown_wire_form() -> None:
    c = Countdown(30.0, ((0, 110.0), (2, 95.0)), (3,))
    assert c.remaining(0, 100.0) == 10.0 and c.remaining(2, 100.0) == 0.0 and c.remaining(1, 100.0) is None
    assert c.to_json(100.0) == {
        "type": "clock",
        "seconds": 30.0,
        "running": {"north": 10.0, "south": 0.0},
        "away": ["west"],
    }


@pytest.mark.asyncio
async def test_the_bot_plays_for_a_person_whose_clock_runs_out() -> None:
    person = Person()
    table = clocked_table(person, handover=None)
    watcher = Watcher()
    async with running(table, watcher):
        await until(lambda: len(forced_of(person)) >= 1, "a forced action for the person")
        loop_now = asyncio.get_running_loop().time()
        asked_at, request = person.requests[0]
        waited = loop_now - asked_at
        # the person had the clock's time (not less), and nobody waited much longer
        assert CLOCK * 0.9 <= waited <= CLOCK + SLACK, waited
        assert request.deadline is not None and abs(request.deadline - asked_at - CLOCK) < 0.05
        # the watchers were told of the countdown for seat 0 with about the clock's time
        told = [c for _, c in watcher.countdowns if c.running and c.running[0][0] == 0]
        assert told and told[0].seconds == CLOCK
        assert table.stats()[0].timeouts >= 1 and table.stats()[0].forced >= 1
        assert not table.snapshot().chairs[0].away  # no hand-over without the rule


@pytest.mark.asyncio
async def test_the_others_never_wait_longer_than_the_clock() -> None:
    person = Person()
    table = clocked_table(person, handover=None)
    async with running(table):
        await until(lambda: len(forced_of(person)) >= 3, "three forced actions for the person", 60)
        # each of the person's decisions was settled within the clock (plus slack) of being asked
        times = [t for t, _ in person.requests]
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert gaps and max(gaps) <= CLOCK + SLACK + 2, gaps


@pytest.mark.asyncio
async def test_repeated_timeouts_hand_the_seat_to_the_bot_until_the_person_acts() -> None:
    person = Person()
    table = clocked_table(person, handover=2, rules=RULES.replace(score_limit=1000))  # a long game
    watcher = Watcher()
    async with running(table, watcher):
        await until(lambda: table.snapshot().chairs[0].away, "the hand-over after two timeouts")
        assert table.stats()[0].timeouts == 2
        asked = len(person.requests)
        # the bot plays the seat now without waiting for the clock: forced moves, no request
        before = len(forced_of(person))
        await until(lambda: len(forced_of(person)) >= before + 2, "the bot playing the seat")
        assert len(person.requests) == asked
        assert any(c.away == (0,) for _, c in watcher.countdowns)
        assert table.stats()[0].timeouts == 2  # the bot's moves are no timeouts


@pytest.mark.asyncio
async def test_the_persons_next_action_takes_the_seat_back() -> None:
    person = Person()
    table = clocked_table(person, handover=1, rules=RULES.replace(score_limit=1000))  # a long game

    def act_again() -> None:
        if not person.answer:
            # the person acts again (a stale answer to their last request): the seat is theirs
            person.answer = True
            last = person.requests[-1][1]
            table.submit(0, last.legal[0], last.request_id)

    watcher = Watcher(on_away=act_again)
    async with running(table, watcher):
        await until(lambda: person.answer, "the hand-over after one timeout")
        asked = len(person.requests)
        await until(lambda: not table.snapshot().chairs[0].away, "the seat taken back")
        await until(lambda: len(person.requests) > asked, "the person asked again")
        assert not table.game.over
        assert table.stats()[0].timeouts == 1


@pytest.mark.asyncio
async def test_im_back_takes_the_seat_back() -> None:
    person = Person(answer=False)
    table = clocked_table(person, handover=1, rules=RULES.replace(score_limit=1000))
    said: list[int] = []

    def take_it_back() -> None:
        if not said:
            said.append(len(person.requests))
            person.answer = True
            table.back(0)  # "Take my seat back"

    watcher = Watcher(on_away=take_it_back)
    async with running(table, watcher):
        await until(lambda: bool(said), "the hand-over after one timeout")
        await until(lambda: not table.snapshot().chairs[0].away, "back")
        await until(lambda: len(person.requests) > said[0], "the person asked again")
        assert not table.game.over


@pytest.mark.asyncio
async def test_a_program_keeps_its_protocols_deadline_and_answer() -> None:
    """A program's seat (not patient) is timed by the protocol's deadline and answered by the
    protocol's rule (here random), not by the person's clock."""

    class Silent(Person):
        patient = False

    program = Silent()
    seats: list[Seat | None] = [program] + [BotSeat(RandomBot(), random.Random(i)) for i in range(1, 4)]
    policy = TablePolicy(decision_timeout=0.3, on_timeout=OnBadAnswer.RANDOM, clock=30.0)
    table = Table(RULES, seats, seed=7, policy=policy)
    async with running(table):
        await until(lambda: len(forced_of(program)) >= 1, "the program's forced action")
        asked_at, request = program.requests[0]
        assert request.deadline is not None and abs(request.deadline - asked_at - 0.3) < 0.05
        assert not table.snapshot().chairs[0].away


@pytest.mark.asyncio
async def test_a_storage_pause_stops_the_clock_and_resuming_gives_the_full_time_again() -> None:
    person = Person()
    table = clocked_table(person, handover=None)
    watcher = Watcher()
    async with running(table, watcher):
        await until(lambda: any(c.running for _, c in watcher.countdowns), "the person's clock")
        table.storage_paused("test")
        await until(lambda: not watcher.countdowns[-1][1].running, "the clock stopped")
        paused_at = asyncio.get_running_loop().time()
        timeouts = table.stats()[0].timeouts
        table.storage_resumed(0.5)
        await until(lambda: bool(watcher.countdowns[-1][1].running), "the clock again")
        told_at, countdown = watcher.countdowns[-1]
        due = countdown.running[0][1]
        assert due - told_at == pytest.approx(CLOCK, abs=0.05)  # the full time, from the resume
        assert due > paused_at + CLOCK * 0.9
        assert table.stats()[0].timeouts == timeouts  # nobody timed out for the store's pause


class ClockedPerson(Person):
    """A person whose seat shows the clocks (``on_clock``), as a protocol's seat may."""

    def __init__(self) -> None:
        super().__init__()
        self.countdowns: list[Countdown] = []

    def on_clock(self, table: Table, countdown: Countdown) -> None:
        self.countdowns.append(countdown)
        self.changed.set()


@pytest.mark.asyncio
async def test_a_newcomer_is_told_the_clocks_as_they_stand() -> None:
    """A watcher that arrives after the hand-over is told at once which seats the bot plays (it saw
    no change of the clocks); a person who sits down again is told their own running clock."""
    person = Person()
    table = clocked_table(person, handover=2, rules=RULES.replace(score_limit=1000))  # a long game
    async with running(table):
        await until(lambda: table.snapshot().chairs[0].away, "the hand-over after two timeouts")
        late = Watcher()
        table.watch(late)
        await until(lambda: bool(late.countdowns), "the late watcher told the clocks")
        first = late.countdowns[0][1]
        assert first.away == (0,) and first.seconds == CLOCK
        # the person comes back on a new connection: told the clocks at once, the seat theirs again
        back = ClockedPerson()
        table.attach(0, back)
        await until(lambda: bool(back.countdowns), "the returning seat told the clocks")
        assert back.countdowns[0].away == () and back.countdowns[0].seconds == CLOCK
        assert not table.snapshot().chairs[0].away
        await until(lambda: any(not c.away for _, c in late.countdowns), "the watcher told of the return")
