"""The operator closes a running game (``Table.close``): it ends at once, unfinished, recorded
as aborted (never rated, never restored), and every player is told why through its seat."""

from __future__ import annotations

import asyncio

import pytest

from moonshot.runtime.table import Table, TableStatus
from runtime.test_table import RULES, Remote, bots
from runtime.test_table_abandon import Recorder, until

pytestmark = pytest.mark.asyncio


async def test_a_closed_game_ends_aborted_and_every_player_hears_why() -> None:
    # the second person never answers, so the game is still under way when it is closed (a game
    # that everyone answers at once may end between two looks at it on a busy machine)
    people = [Remote(name="p0"), Remote(mode="silent", name="p1")]
    recorder = Recorder()
    t = Table(RULES, [people[0], *bots(2), people[1]], seed=4, recorder=recorder)
    t.start()
    await until(lambda: people[1].requests and len(t.game.actions) >= 1)
    t.close("closed by the operator: cheating")
    assert await asyncio.wait_for(t.done, 10) is TableStatus.CLOSED
    assert not t.game.over
    assert ("aborted", "closed by the operator: cheating") in recorder.calls
    assert not any(kind == "finished" for kind, _ in recorder.calls)
    assert all(p.closed == "closed by the operator: cheating" for p in people)


async def test_closing_a_finished_table_changes_nothing() -> None:
    recorder = Recorder()
    t = Table(RULES, bots(4), seed=5, recorder=recorder)
    t.start()
    assert await asyncio.wait_for(t.done, 30) is TableStatus.FINISHED
    t.close("too late")
    await asyncio.sleep(0)
    assert t.status is TableStatus.FINISHED and ("finished", t.id) in recorder.calls
    assert not any(kind == "aborted" for kind, _ in recorder.calls)
