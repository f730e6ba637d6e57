"""The table actor: bots, deadlines and policies, disconnects, reconnect replay, spectators, failures."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence

import pytest

from moonshot.bots.random import RandomBot
from moonshot.core.actions import AcceptClaim, Action, Claim, Play, RejectClaim
from moonshot.core.cards import card_list
from moonshot.core.engine import Phase, replay
from moonshot.core.events import (
    CardPlayed,
    ClaimAnswered,
    ClaimMade,
    ClaimSucceeded,
    DealEnded,
    GameEnded,
    HandDealt,
    TrickEnded,
)
from moonshot.core.rules import ClaimFlow, EndRule
from moonshot.core.variants import find_variant
from moonshot.core.views import SeatView
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
    TableStatus,
    _Expired,
)

RULES = find_variant("standard").replace(score_limit=30)  # short games
pytestmark = pytest.mark.asyncio


def bots(n: int = 4) -> list[Seat]:
    return [BotSeat(RandomBot(), random.Random(i)) for i in range(n)]


class Remote(Seat):
    """A seat answering from another task, like a network client; misbehaves on demand."""

    def __init__(self, mode: str = "good", name: str = "remote") -> None:
        self.mode = mode
        self.name = name
        self.kind = SeatKind.HUMAN
        self.events: list[TableEvent] = []
        self.requests: list[DecisionRequest] = []
        self.rejected: list[str] = []
        self.closed: str | None = None
        self.rng = random.Random(5)

    def on_events(self, table: Table, events: Sequence[TableEvent]) -> None:
        self.events.extend(events)

    def on_request(self, table: Table, request: DecisionRequest) -> None:
        self.requests.append(request)
        if self.mode == "silent":
            return
        if self.mode == "boom":
            raise RuntimeError("adapter bug")
        action: Action = RandomBot().act(request.view, self.rng)
        if self.mode in ("illegal", "illegal-once") and request.view.phase is Phase.PLAY:
            bad = card_list(request.view.hand & ~request.view.legal_plays) or card_list(
                ~request.view.hand & (1 << 52) - 1
            )
            action = Play.of(request.seat, bad[0])
            if self.mode == "illegal-once":
                self.mode = "good"
        asyncio.get_running_loop().call_soon(table.submit, request.seat, action, request.request_id)

    def on_rejected(self, table: Table, request: DecisionRequest, action: Action | None, reason: str) -> None:
        self.rejected.append(reason)

    def on_closed(self, table: Table, reason: str) -> None:
        self.closed = reason


async def run(table: Table, timeout: float = 30) -> TableStatus:
    table.start()
    return await asyncio.wait_for(table.done, timeout)


async def test_four_bots_finish_a_game_that_replays() -> None:
    t = Table(RULES, bots(), seed=11)
    assert await run(t) is TableStatus.FINISHED
    g = replay(RULES, 11, t.game.actions)
    assert g.totals == t.game.totals and g.over
    assert [s.forced for s in t.stats()] == [0, 0, 0, 0]


async def test_a_slow_bot_thinks_off_the_event_loop_and_finishes_the_game() -> None:
    from moonshot.bots.search import SearchBot
    from moonshot.core.variants import TREND

    assert BotSeat(SearchBot(simulations=4)).in_executor
    assert not BotSeat(RandomBot()).in_executor
    assert not BotSeat(SearchBot(simulations=4), in_executor=False).in_executor
    seats: list[Seat] = [BotSeat(SearchBot(simulations=4), random.Random(0)), *bots(3)]
    t = Table(TREND, seats, seed=5)
    assert await run(t, timeout=120) is TableStatus.FINISHED
    assert replay(TREND, 5, t.game.actions).totals == t.game.totals


async def test_remote_seat_sees_its_redacted_view_with_versions() -> None:
    r = Remote()
    t = Table(RULES, [r, *bots(3)], seed=2)
    await run(t)
    versions = [e.version for e in r.events]
    assert versions == sorted(versions) and len(set(versions)) == len(versions)
    hands = [e.event for e in r.events if isinstance(e.event, HandDealt)]
    assert hands and all(h.seat == 0 for h in hands)  # never another seat's hand
    assert isinstance(r.events[-1].event, GameEnded)
    assert r.closed == "game over"


async def test_timeout_plays_a_random_card_reported_as_forced() -> None:
    r = Remote("silent")
    t = Table(RULES, [r, *bots(3)], seed=3, policy=TablePolicy(decision_timeout=0.01))
    assert await run(t) is TableStatus.FINISHED
    st = t.stats()[0]
    assert st.timeouts > 0 and st.forced == st.timeouts
    mine = [e for e in r.events if isinstance(e.event, CardPlayed) and e.event.seat == 0]
    assert mine and all(e.forced for e in mine)
    others = [e for e in r.events if isinstance(e.event, CardPlayed) and e.event.seat != 0]
    assert not any(e.forced for e in others)


async def test_illegal_answer_is_replaced_and_counted() -> None:
    r = Remote("illegal")
    t = Table(RULES, [r, *bots(3)], seed=4)
    assert await run(t) is TableStatus.FINISHED
    assert t.stats()[0].illegal > 0 and t.stats()[0].forced == t.stats()[0].illegal
    assert r.rejected


async def test_retry_policy_asks_again() -> None:
    r = Remote("illegal-once")
    policy = TablePolicy(on_illegal=OnBadAnswer.RETRY)
    t = Table(RULES, [r, *bots(3)], seed=5, policy=policy)
    assert await run(t) is TableStatus.FINISHED
    assert len(r.rejected) == 1 and t.stats()[0].illegal == 1 and t.stats()[0].forced == 0


async def test_pause_policy_waits_for_the_answer() -> None:
    r = Remote("silent")
    t = Table(RULES, [r, *bots(3)], seed=6, policy=TablePolicy(decision_timeout=0.01, on_timeout=OnBadAnswer.PAUSE))
    t.start()
    await asyncio.sleep(0.1)
    assert not t.done.done() and t.stats()[0].timeouts == 1
    req = r.requests[-1]
    t.submit(0, RandomBot().act(req.view, random.Random(0)), req.request_id)
    await asyncio.sleep(0.05)
    assert len(r.requests) > 1  # play went on
    t.stop()
    assert await t.done is TableStatus.STOPPED


async def test_silent_seat_is_handed_to_a_bot_after_timeouts_in_a_row() -> None:
    r = Remote("silent")
    policy = TablePolicy(decision_timeout=0.01, max_consecutive_timeouts=2)
    t = Table(RULES, [r, *bots(3)], seed=7, policy=policy)
    assert await run(t) is TableStatus.FINISHED
    assert t.stats()[0].timeouts == 2 and "timeouts in a row" in (r.closed or "")


async def test_disconnect_pause_then_reconnect_replays_the_seat_view() -> None:
    first = Remote("silent")
    policy = TablePolicy(decision_timeout=None, on_disconnect=OnDisconnect.PAUSE)
    t = Table(RULES, [first, *bots(3)], seed=8, policy=policy)
    t.start()
    await asyncio.sleep(0.02)
    t.detach(0, first)
    await asyncio.sleep(0.02)
    assert not t.done.done()
    version = t.version
    second = Remote("good", "back")
    t.attach(0, second)
    assert await asyncio.wait_for(t.done, 30) is TableStatus.FINISHED
    replayed = [e for e in second.events if e.version <= version]
    assert [e.version for e in replayed] == [e.version for e in t.view_log(0) if e.version <= version]
    assert all(not isinstance(e.event, HandDealt) or e.event.seat == 0 for e in second.events)


async def test_disconnect_bot_policy_substitutes_and_marks_forced() -> None:
    r = Remote("silent")
    t = Table(RULES, [r, *bots(3)], seed=9, policy=TablePolicy(decision_timeout=None, reconnect_grace=0.01))
    t.start()
    await asyncio.sleep(0.01)
    t.detach(0, r)
    assert await asyncio.wait_for(t.done, 30) is TableStatus.FINISHED
    assert t.stats()[0].forced > 0


async def test_spectator_sees_every_hand() -> None:
    seen: list[TableEvent] = []

    class Watcher:
        def on_events(self, table: Table, events: Sequence[TableEvent]) -> None:
            seen.extend(events)

    t = Table(RULES, bots(), seed=10)
    t.watch(Watcher())
    await run(t)
    assert {e.event.seat for e in seen if isinstance(e.event, HandDealt)} == {0, 1, 2, 3}
    assert [e.version for e in seen] == list(range(1, t.version + 1))


async def test_a_seat_that_raises_is_detached_and_the_game_goes_on() -> None:
    r = Remote("boom")
    t = Table(RULES, [r, *bots(3)], seed=12)
    assert await run(t) is TableStatus.FINISHED
    assert t.stats()[0].forced > 0


async def test_one_failing_table_does_not_touch_another() -> None:
    broken = Table(RULES, bots(), seed=13)
    fine = Table(RULES, bots(), seed=14)

    def explode(*a: object, **k: object) -> None:
        raise RuntimeError("engine bug")

    broken._apply = explode  # type: ignore[method-assign]
    broken.start()
    fine.start()
    assert await asyncio.wait_for(broken.done, 10) is TableStatus.FAILED
    assert await asyncio.wait_for(fine.done, 30) is TableStatus.FINISHED
    assert broken.error and "engine bug" in broken.error


async def test_a_table_restores_itself_after_a_transient_error() -> None:
    t = Table(RULES, bots(), seed=15)
    real = t._apply
    calls = {"n": 0}

    def flaky(seat: int, action: Action, forced: bool) -> None:
        calls["n"] += 1
        if calls["n"] == 20:
            raise RuntimeError("transient")
        real(seat, action, forced)

    t._apply = flaky  # type: ignore[method-assign]
    assert await run(t) is TableStatus.FINISHED
    assert replay(RULES, 15, t.game.actions).totals == t.game.totals


async def test_restored_table_continues_from_the_stored_actions() -> None:
    done = Table(RULES, bots(), seed=16)
    await run(done)
    prefix = done.game.actions[:60]
    t = Table(RULES, [None, None, None, None], seed=16, actions=prefix, restored=True, names=["a", "b", "c", "d"])
    assert t.version == replay(RULES, 16, prefix).version
    assert await run(t) is TableStatus.FINISHED
    assert t.game.actions[:60] == prefix
    assert t.seat_names() == ["a", "b", "c", "d"]
    assert [e for e in t.game.log if isinstance(e, TrickEnded)]


# ---------------------------------------------------------------- claims
TURBO_2 = find_variant("turbo").replace(end=EndRule.DEALS, deals=2)  # two hands: something follows a claim


class Conceding(RandomBot):
    """Random play; accepts every claim (to see a claim succeed without a sure hand)."""

    def answer_claim(self, view: SeatView, claimer: int, rng: random.Random) -> bool:
        return True


class Claimer(Seat):
    """A scripted person: plays random legal cards and, at its first play of the first hand, claims
    (unsolicited, as Turbo's HTTP API does), then answers the request ``delay`` seconds later.
    ``withdraw``: takes the claim back at its next play; ``accept``: right after claiming, accepts
    the claims already open."""

    def __init__(self, delay: float = 0.0, withdraw: bool = False, accept: bool = False) -> None:
        self.name, self.kind = "claimer", SeatKind.HUMAN
        self.delay, self.withdraw, self.accept = delay, withdraw, accept
        self.events: list[TableEvent] = []
        self.requests: list[DecisionRequest] = []
        self.rejected: list[str] = []
        self.claimed = self.withdrawn = False
        self.rng = random.Random(3)

    def on_events(self, table: Table, events: Sequence[TableEvent]) -> None:
        self.events.extend(events)

    def on_request(self, table: Table, request: DecisionRequest) -> None:
        self.requests.append(request)
        seat, loop = request.seat, asyncio.get_running_loop()
        view = request.view
        if view.phase is Phase.PLAY and view.deal == 0:
            if not self.claimed:
                self.claimed = True
                loop.call_soon(table.submit, seat, Claim(seat), None)
                for c in view.claims if self.accept else ():  # then concede the claims already open
                    loop.call_soon(table.submit, seat, AcceptClaim(seat, c.claimer), None)
            elif self.withdraw and not self.withdrawn:
                self.withdrawn = True
                loop.call_soon(table.submit, seat, RejectClaim(seat, seat), None)
        action = RandomBot().act(view, self.rng)
        loop.call_later(self.delay, table.submit, seat, action, request.request_id)

    def on_rejected(self, table: Table, request: DecisionRequest, action: Action | None, reason: str) -> None:
        self.rejected.append(reason)


def claim_events(t: Table) -> list[object]:
    return [e for e in t.game.log if isinstance(e, (ClaimMade, ClaimAnswered, ClaimSucceeded))]


async def test_bots_answer_a_concurrent_claim_on_their_own_and_the_hand_ends() -> None:
    person = Claimer(delay=0.05)  # still thinking about its card when the answers come in
    seats: list[Seat] = [person, *(BotSeat(Conceding(), random.Random(i)) for i in range(3))]
    t = Table(TURBO_2, seats, seed=21)
    assert await run(t) is TableStatus.FINISHED
    made, *answers, succeeded = claim_events(t)
    assert made == ClaimMade(0, made.hand)  # type: ignore[union-attr]
    assert sorted((a.seat, a.accepted) for a in answers) == [(1, True), (2, True), (3, True)]  # type: ignore[attr-defined]
    assert succeeded == ClaimSucceeded(0, succeeded.cards)  # type: ignore[union-attr]
    first_end = next(e for e in t.game.log if isinstance(e, DealEnded))
    assert first_end.early and first_end.tricks == 0
    # the person's request to play was withdrawn when the hand ended: its late card was ignored,
    # and the next request it got was for the second hand
    asked = next(i for i, r in enumerate(person.requests) if r.phase is Phase.PLAY)
    assert person.requests[asked + 1].view.deal == 1
    deal0 = t.game.log[: t.game.log.index(first_end)]
    assert not any(isinstance(e, CardPlayed) and e.seat == 0 for e in deal0)
    assert not person.rejected and [s.forced for s in t.stats()] == [0, 0, 0, 0]
    assert replay(TURBO_2, 21, t.game.actions).log == t.game.log


async def test_a_rejected_concurrent_claim_lets_play_go_on() -> None:
    person = Claimer()
    t = Table(TURBO_2, [person, *bots(3)], seed=22)  # random bots accept only a sure claim
    assert await run(t) is TableStatus.FINISHED
    made, rejected = claim_events(t)[:2]
    assert isinstance(made, ClaimMade) and isinstance(rejected, ClaimAnswered) and not rejected.accepted
    assert not any(isinstance(e, ClaimSucceeded) for e in t.game.log)
    first_end = next(e for e in t.game.log if isinstance(e, DealEnded))
    assert not first_end.early and first_end.tricks >= 7  # played out
    assert [s.forced for s in t.stats()] == [0, 0, 0, 0]


async def test_two_concurrent_claims_open_at_once_and_one_succeeds() -> None:
    # N claims and the bots accept at once: N's claim waits on E. E, at its turn, claims too (the
    # bots accept that one as well, so it waits on N), then accepts N's claim, which ends the hand
    north, east = Claimer(), Claimer(accept=True)
    t = Table(TURBO_2, [north, east, *(BotSeat(Conceding(), random.Random(i)) for i in range(2))], seed=23)
    assert await run(t) is TableStatus.FINISHED
    log = claim_events(t)
    made = [e.seat for e in log if isinstance(e, ClaimMade)]  # type: ignore[attr-defined]
    assert sorted(made) == [0, 1]
    # both were open together: the second claim came before the first one ended
    second = next(i for i, e in enumerate(log) if isinstance(e, ClaimMade) and e.seat == made[1])
    ended = [
        e for e in log[:second] if isinstance(e, ClaimSucceeded) or (isinstance(e, ClaimAnswered) and not e.accepted)
    ]
    assert not ended
    assert [e.claimer for e in log if isinstance(e, ClaimSucceeded)] == [0]
    assert [s.forced for s in t.stats()] == [0, 0, 0, 0]


async def test_a_claimer_withdraws_its_claim_and_play_goes_on() -> None:
    # the bots accept N's claim, but E (a person who never answers claims) keeps it open until N,
    # at its next card, takes it back
    person = Claimer(withdraw=True)
    seats: list[Seat] = [person, Remote(), *(BotSeat(Conceding(), random.Random(i)) for i in range(2))]
    t = Table(TURBO_2, seats, seed=24)
    assert await run(t) is TableStatus.FINISHED
    log = claim_events(t)
    assert [(type(e), getattr(e, "seat", None)) for e in log] == [
        (ClaimMade, 0),
        (ClaimAnswered, 2),
        (ClaimAnswered, 3),
        (ClaimAnswered, 0),
    ]
    assert log[-1] == ClaimAnswered(0, 0, False)
    first_end = next(e for e in t.game.log if isinstance(e, DealEnded))
    assert not first_end.early  # played out
    assert not person.rejected and [s.forced for s in t.stats()] == [0, 0, 0, 0]


async def test_blocking_claims_are_asked_of_the_bots() -> None:
    rules = TURBO_2.replace(claim_flow=ClaimFlow.BLOCKING)
    person = Claimer()
    t = Table(rules, [person, *(BotSeat(Conceding(), random.Random(i)) for i in range(3))], seed=25)
    assert await run(t) is TableStatus.FINISHED
    log = claim_events(t)
    assert [type(e) for e in log[:5]] == [ClaimMade, ClaimAnswered, ClaimAnswered, ClaimAnswered, ClaimSucceeded]
    assert [s.forced for s in t.stats()] == [0, 0, 0, 0]


async def test_random_action_plays_a_card_while_claims_are_open() -> None:
    for flow in ClaimFlow:
        t = Table(TURBO_2.replace(claim_flow=flow), bots(), seed=26)
        g = t.game
        while g.phase is not Phase.PLAY:
            g.apply(t.random_action(g.to_act()[0]))
        other = (g.turn + 1) % 4
        g.apply(Claim(other))
        seat = g.to_act()[0]
        action = t.random_action(seat)
        if flow is ClaimFlow.CONCURRENT:
            assert seat == g.turn and isinstance(action, Play)
        else:
            assert seat != other and isinstance(action, (AcceptClaim, RejectClaim))
        assert g.is_legal(action)


async def test_a_late_claim_answer_is_refused_without_forcing_the_seats_card() -> None:
    class Late(Claimer):
        def on_request(self, table: Table, request: DecisionRequest) -> None:
            if request.phase is Phase.PLAY and not self.claimed:  # answers a claim that is not there
                self.claimed = True
                asyncio.get_running_loop().call_soon(table.submit, request.seat, AcceptClaim(request.seat, 3), None)
            self.requests.append(request)
            action = RandomBot().act(request.view, self.rng)
            asyncio.get_running_loop().call_later(0.01, table.submit, request.seat, action, request.request_id)

    person = Late()
    t = Table(TURBO_2, [person, *bots(3)], seed=27)  # the default policy plays a random card on an illegal answer
    assert await run(t) is TableStatus.FINISHED
    assert person.rejected == ["there is no claim by W"]
    assert t.stats()[0].forced == 0 and t.stats()[0].illegal == 0
    assert not claim_events(t)


# ---------------------------------------------------------------- submit with a reply (HTTP callers)
def _pause_policy() -> TablePolicy:
    return TablePolicy(decision_timeout=None, on_timeout=OnBadAnswer.PAUSE, on_illegal=OnBadAnswer.PAUSE)


async def test_submit_reply_is_none_when_the_action_is_applied() -> None:
    r = Remote("silent")
    t = Table(RULES, [r, *bots(3)], seed=11, policy=_pause_policy())
    t.start()
    while not r.requests:
        await asyncio.sleep(0.01)
    req = r.requests[-1]
    reply: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
    action = RandomBot().act(req.view, random.Random(0))
    t.submit(0, action, None, reply)  # unsolicited, as an HTTP POST sends it
    assert await asyncio.wait_for(reply, 5) is None
    assert action in t.game.actions
    t.stop()
    await t.done


async def test_submit_reply_carries_the_engine_reason_and_changes_nothing() -> None:
    r = Remote("silent")
    t = Table(RULES, [r, *bots(3)], seed=12, policy=_pause_policy())
    t.start()
    while not r.requests:
        await asyncio.sleep(0.01)
    before = t.version
    loop = asyncio.get_running_loop()
    not_held = card_list(~t.game.hands[0] & ((1 << 52) - 1))[0]
    reply: asyncio.Future[str | None] = loop.create_future()
    t.submit(0, Play.of(0, not_held), None, reply)
    reason = await asyncio.wait_for(reply, 5)
    assert reason is not None and "cannot play a card during the pass phase" in reason
    wrong_seat: asyncio.Future[str | None] = loop.create_future()
    t.submit(0, Play.of(1, not_held), None, wrong_seat)
    assert "sent by seat 0" in str(await asyncio.wait_for(wrong_seat, 5))
    assert t.version == before and r.requests  # the request stays open under pause
    t.stop()
    await t.done


async def test_submit_reply_after_the_table_ended_says_so() -> None:
    t = Table(RULES, bots(), seed=13)
    assert await run(t) is TableStatus.FINISHED
    reply: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
    t.submit(0, Play.of(0, 0), None, reply)
    assert "ended" in str(await asyncio.wait_for(reply, 1))


async def test_phase_timeouts_and_pauses_pace_the_table() -> None:
    """Per-phase deadlines (Trend: 3 s to pass, 1 s a card) and a pause after chosen events."""
    from moonshot.core.variants import TREND

    r = Remote("silent")
    seen: list[str] = []

    def pause(events: Sequence[object]) -> float:
        seen.extend(type(e).__name__ for e in events)
        return 0.001 if any(isinstance(e, TrickEnded) for e in events) else 0.0

    policy = TablePolicy(
        decision_timeout=5.0, phase_timeouts=((Phase.PLAY, 0.005), (Phase.PASS, 0.01)), pause_after=pause
    )
    assert policy.timeout_for(Phase.PLAY) == 0.005 and policy.timeout_for(Phase.EXPOSE) == 5.0
    t = Table(TREND, [r, *bots(3)], seed=3, policy=policy)
    assert await run(t) is TableStatus.FINISHED
    assert t.stats()[0].timeouts == 3 + 52 + sum(1 for q in r.requests if q.phase is Phase.EXPOSE)
    assert "TrickEnded" in seen and "DealEnded" in seen


class Person(Remote):
    """A person: no deadline; after a refused card they simply click another one."""

    patient = True

    def on_rejected(self, table: Table, request: DecisionRequest, action: Action | None, reason: str) -> None:
        super().on_rejected(table, request, action, reason)
        good = Play.of(request.seat, card_list(request.view.legal_plays)[0])
        asyncio.get_running_loop().call_soon(table.submit, request.seat, good, None)


async def test_a_patient_seat_has_no_deadline_and_its_illegal_answer_waits_for_another() -> None:
    r = Person("illegal-once")
    t = Table(RULES, [r, *bots(3)], seed=4, policy=TablePolicy(decision_timeout=0.001))
    assert await run(t) is TableStatus.FINISHED
    st = t.stats()[0]
    assert st.timeouts == 0 and st.forced == 0 and st.illegal == 1 and len(r.rejected) == 1
    assert all(q.deadline is None for q in r.requests)


class Sender(Seat):
    """A seat that writes its requests when the test says so, and says when it wrote each
    (``reports_sent``): the table's clock for a request starts at that write."""

    reports_sent = True

    def __init__(self) -> None:
        self.requests: list[DecisionRequest] = []

    def on_events(self, table: Table, events: Sequence[TableEvent]) -> None:
        pass

    def on_request(self, table: Table, request: DecisionRequest) -> None:
        self.requests.append(request)  # not written yet


async def until(cond: object, timeout: float = 30.0) -> None:
    for _ in range(int(timeout / 0.005)):
        if cond():  # type: ignore[operator]
            return
        await asyncio.sleep(0.005)
    raise AssertionError("timed out")


async def test_the_deadline_of_a_request_runs_from_when_the_seat_wrote_it() -> None:
    """The clock starts when the request leaves (``Table.sent``), not when the table made it:
    times in the loop's clock, set by the test, so nothing here depends on how fast it runs."""
    s = Sender()
    policy = TablePolicy(decision_timeout=1000.0, send_grace=7.0)
    t = Table(RULES, [s, *bots(3)], seed=3, policy=policy)
    t.start()
    await until(lambda: s.requests)
    req = s.requests[0]
    asked = req.deadline
    assert asked is not None
    pending = t._pending[0]
    # the timer fires at the earliest the deadline can be; not written by then, the request
    # may wait send_grace seconds more to leave
    assert pending.timer is not None and pending.timer.when() == asked
    t._inbox.put_nowait(_Expired(req.request_id, asked))
    await until(lambda: pending.timer is not None and pending.timer.when() == asked + 7.0)
    written = asked + 500.0  # however late the write comes (a busy loop, a full socket buffer)
    t.sent(0, req.request_id, at=written)
    assert req.deadline == written + 1000.0  # at once: no timer is re-armed for a send
    t._inbox.put_nowait(_Expired(req.request_id, asked + 7.0))  # the grace's timer fires: moved on
    await until(lambda: pending.timer is not None and pending.timer.when() == written + 1000.0)
    # a timer armed before is stale: its expiry changes nothing
    t._inbox.put_nowait(_Expired(req.request_id, asked + 7.0))
    t._inbox.put_nowait(_Expired(req.request_id, asked))
    t.sent(0, req.request_id + 99, at=0.0)  # another request's report: ignored
    assert req.deadline == written + 1000.0
    action = RandomBot().act(req.view, random.Random(0))
    t.submit(0, action, req.request_id)
    await until(lambda: len(s.requests) > 1)
    assert t.stats()[0].timeouts == 0 and t.stats()[0].forced == 0
    assert action in t.game.actions
    t.stop()
    await t.done


async def test_a_request_written_long_after_it_was_made_runs_out_from_the_write() -> None:
    s = Sender()
    t = Table(RULES, [s, *bots(3)], seed=4, policy=TablePolicy(decision_timeout=2.0, send_grace=3600.0))
    t.start()
    await until(lambda: s.requests)
    req = s.requests[0]
    loop = asyncio.get_running_loop()
    t.sent(0, req.request_id, at=loop.time() - 10.0)  # written 10 s ago: 2 s to answer ran out
    await until(lambda: t.stats()[0].timeouts == 1)
    assert t.stats()[0].forced == 1  # the random card of the timeout policy
    t.stop()
    await t.done


async def test_a_seat_that_does_not_report_sends_keeps_the_clock_from_the_request() -> None:
    r = Remote("silent")
    t = Table(RULES, [r, *bots(3)], seed=5, policy=TablePolicy(decision_timeout=1000.0, send_grace=7.0))
    t.start()
    await until(lambda: r.requests)
    req = r.requests[0]
    assert req.deadline is not None and t._pending[0].timer is not None
    assert t._pending[0].timer.when() == req.deadline  # no grace: nothing will say it was sent
    t.stop()
    await t.done


async def test_the_table_seals_its_deals_and_a_restored_table_keeps_the_commitment() -> None:
    from moonshot.core.events import SPECTATOR, GameStarted
    from moonshot.core.fairness import commitment

    seat = Remote()
    t = Table(RULES, [seat, *bots(3)], table_id="sealed")
    salt = t.meta["deal_salt"]
    assert t.meta["deal_commitment"] == commitment("sealed", t.seed, salt) == t.seal.commitment
    t.start()
    assert await asyncio.wait_for(t.done, 30) is TableStatus.FINISHED
    start = seat.events[0].event
    assert isinstance(start, GameStarted) and start.seed is None and start.commitment == t.seal.commitment
    end = next(te.event for te in seat.events if isinstance(te.event, GameEnded))
    assert (end.seed, end.salt) == (t.seed, salt)
    # a spectator sees no hand while the game runs; after it, everything
    running = Table(RULES, bots(), table_id="running")
    assert not [te for te in running.view_log(SPECTATOR) if isinstance(te.event, HandDealt)]
    assert [te for te in running.view_log(None) if isinstance(te.event, HandDealt)]
    assert len([te for te in t.spectator_log() if isinstance(te.event, HandDealt)]) >= 4
    # rebuilt from its actions and meta (a restart, an adoption), the same commitment
    again = Table(RULES, bots(), seed=t.seed, table_id="sealed", actions=t.game.actions, meta=t.meta)
    assert again.seal.commitment == t.seal.commitment
    assert Table(RULES, bots(), seed=t.seed, table_id="sealed").seal.commitment != t.seal.commitment


async def test_a_table_that_reveals_later_keeps_its_seed_and_hands_after_the_end() -> None:
    from moonshot.core.events import GameStarted

    seat = Remote()
    t = Table(RULES, [seat, *bots(3)], table_id="later", meta={"reveal_at_end": False})
    t.start()
    assert await asyncio.wait_for(t.done, 30) is TableStatus.FINISHED
    end = next(te.event for te in seat.events if isinstance(te.event, GameEnded))
    assert end.seed is None and end.salt == ""
    start = seat.events[0].event
    assert isinstance(start, GameStarted) and start.commitment == t.seal.commitment
    assert not [te for te in t.spectator_log() if isinstance(te.event, HandDealt)]


_SEAT_KERNEL_BOTS = """
import asyncio
from moonshot import kernel
from moonshot.bots.registry import make_bot
from moonshot.runtime.table import _KERNEL_LOADING, BotSeat

async def main():
    classic = make_bot("pimc", preset="classic")  # as a tournament's entrant is made: on the loop
    made = kernel.is_warm() or bool(_KERNEL_LOADING)
    BotSeat(make_bot("heuristic"))
    other = kernel.is_warm() or bool(_KERNEL_LOADING)
    BotSeat(classic)
    BotSeat(make_bot("search"))
    loads = len(_KERNEL_LOADING)
    await _KERNEL_LOADING[0]
    print("KERNEL", made, other, loads, kernel.is_warm())

asyncio.run(main())
"""


async def test_the_kernel_loads_off_the_loop_once_a_bot_that_uses_it_sits() -> None:
    """Making a bot never loads the rules kernel (a server makes bots on its event loop: a
    tournament's creator names them, and a load there, 8 s the first time on a machine, would stall
    every table). The first seat of a bot that uses it starts one load in a worker thread."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import moonshot

    env = {**os.environ, "PYTHONPATH": str(Path(moonshot.__file__).parents[1])}
    run = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-c", _SEAT_KERNEL_BOTS], env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split("KERNEL ")[1].split() == ["False", "False", "1", "True"]


async def test_a_kernel_that_fails_to_load_is_said_in_the_log(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A failed load (say, a broken numba cache) is logged, not lost in a future nobody awaits."""
    import logging

    from moonshot import kernel
    from moonshot.bots.registry import make_bot
    from moonshot.runtime import table as table_module

    def broken() -> None:
        raise ModuleNotFoundError("no module named 'moonshot.core.tricks._plain'")

    loads: list[asyncio.Future[None]] = []
    monkeypatch.setattr(table_module, "_KERNEL_LOADING", loads)
    monkeypatch.setattr(kernel, "warm_up", broken)
    with caplog.at_level(logging.WARNING, logger="moonshot.table"):
        BotSeat(make_bot("search"))
        assert len(loads) == 1
        with pytest.raises(ModuleNotFoundError):
            await loads[0]
        await asyncio.sleep(0)  # (the done callback runs on the loop's next turn)
    assert "the rules kernel did not load" in caplog.text and "tricks._plain" in caplog.text
