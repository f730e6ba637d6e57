"""The review pool: niced worker processes, bounded queues (in all and per name), dedup by key,
progress from the worker, a crashed worker's job reported and retried, hints ahead of reviews.
Stand-in tasks (tests/reviewkit.py) take the place of the real review."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio

import reviewkit
from moonshot.play.review_pool import ReviewJob, ReviewPool, ReviewRefused, worker_info

pytestmark = pytest.mark.asyncio


async def until(check: Callable[[], bool], timeout: float = 60) -> None:
    """Wait (polling) until ``check()`` holds."""
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.01)


@pytest_asyncio.fixture
async def pool() -> AsyncIterator[ReviewPool]:
    p = ReviewPool(1, max_jobs=3, per_name=2)
    yield p
    p.close()


async def test_workers_are_other_processes_at_the_lowest_priority_with_one_blas_thread(pool: ReviewPool) -> None:
    info = await pool.call(worker_info)
    assert info["pid"] != os.getpid()
    assert info["nice"] == 19
    assert info["blas"] == "1"


async def test_another_niceness_is_each_workers_own(pool: ReviewPool) -> None:
    """``serve --review-nice``: a host that keeps CPU for reviews runs them at another priority,
    even in a process whose fork server a pool at the default niceness has niced already (one a
    process: the test suite's, or a server's that tests start)."""
    assert (await pool.call(worker_info))["nice"] == 19  # this process's fork server is niced now
    p = ReviewPool(1, nice=5)
    try:
        info = await p.call(worker_info)
        assert info["pid"] != os.getpid() and info["nice"] == max(5, os.nice(0)) and info["blas"] == "1"
    finally:
        p.close()


async def test_a_finished_job_is_forgotten_in_the_same_step_its_on_done_runs(pool: ReviewPool, tmp_path: Path) -> None:
    """The review API serves a finished job from what ``on_done`` keeps until it is stored: a poll
    that found neither the job nor that would start the review again (and be refused by the rate)."""
    kept: list[str] = []
    gate = tmp_path / "gate"
    gate.touch()  # open: the job runs through
    job = pool.submit("k", "ann", reviewkit.counting, (2, str(gate)), on_done=lambda j: kept.append(j.status))
    loop = asyncio.get_running_loop()
    end = loop.time() + 60
    while pool.job("k") is not None:
        assert loop.time() < end
        await asyncio.sleep(0)
    assert kept == ["done"] and job.status == "done"


async def test_progress_comes_from_the_worker_and_the_result_back(pool: ReviewPool, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    job = pool.submit("k", "ann", reviewkit.counting, (5, str(gate)))
    assert job.status in ("queued", "running")
    await until(lambda: job.status == "running" and job.done >= 1)
    assert job.progress == {"done": 1, "total": 5}  # the worker waits at step 1 until the gate opens
    gate.touch()
    await asyncio.wait_for(asyncio.shield(job.finished), 60)  # type: ignore[arg-type]
    assert job.status == "done"
    assert job.result["steps"] == 5 and job.result["nice"] == 19
    assert job.progress == {"done": 5, "total": 5}
    assert pool.job("k") is None  # finished: forgotten by the pool (its owner keeps the result)


async def test_the_same_key_asked_twice_shares_one_job(pool: ReviewPool, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    a = pool.submit("k", "ann", reviewkit.counting, (3, str(gate)))
    b = pool.submit("k", "bob", reviewkit.counting, (3, str(gate)))
    assert a is b and pool.started == 1
    assert a.name == "ann"  # the share is the starter's
    gate.touch()
    await a.finished  # type: ignore[misc]
    assert pool.started == 1


async def test_the_queue_is_bounded_in_all_and_per_name(pool: ReviewPool, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    first = pool.submit("a1", "ann", reviewkit.counting, (3, str(gate)))
    second = pool.submit("a2", "ann", reviewkit.counting, (3, str(gate)))
    with pytest.raises(ReviewRefused, match="ann has 2 reviews"):
        pool.submit("a3", "ann", reviewkit.counting, (3, str(gate)))
    third = pool.submit("b1", "bob", reviewkit.counting, (3, str(gate)))
    with pytest.raises(ReviewRefused, match="at most 3"):
        pool.submit("c1", "cy", reviewkit.counting, (3, str(gate)))
    # one worker: the first runs, the others wait their turn
    await until(lambda: first.status == "running")
    assert (pool.position(first), pool.position(second), pool.position(third)) == (0, 1, 2)
    assert second.status == third.status == "queued"
    gate.touch()
    for j in (first, second, third):
        await j.finished  # type: ignore[misc]
        assert j.status == "done"
    # shares are given back as jobs end
    more = [pool.submit(f"a{i}", "ann", reviewkit.counting, (1,)) for i in (4, 5)]
    for j in more:
        await j.finished  # type: ignore[misc]


async def test_a_crashed_worker_fails_its_job_and_the_key_can_be_asked_again(pool: ReviewPool) -> None:
    ended: list[ReviewJob] = []
    job = pool.submit("k", "ann", reviewkit.crash, on_done=ended.append)
    await job.finished  # type: ignore[misc]
    assert job.status == "failed" and job.error is not None and "died" in job.error
    assert ended == [job] and pool.failed == 1
    assert pool.job("k") is None
    again = pool.submit("k", "ann", reviewkit.counting, (2,))
    assert again is not job
    await again.finished  # type: ignore[misc]
    assert again.status == "done" and again.result["steps"] == 2  # fresh workers took it


async def test_a_task_that_raises_is_reported_and_the_pool_goes_on(pool: ReviewPool) -> None:
    job = pool.submit("k", "ann", reviewkit.failing)
    await job.finished  # type: ignore[misc]
    assert job.status == "failed" and "a stand-in review that fails" in (job.error or "")
    assert await pool.call(reviewkit.echo, 7) == 7


async def test_hints_go_ahead_of_queued_reviews(pool: ReviewPool, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    running = pool.submit("a", "ann", reviewkit.counting, (3, str(gate)))
    waiting = pool.submit("b", "bob", reviewkit.counting, (3, str(gate)))
    await until(lambda: running.status == "running")
    assert await asyncio.wait_for(pool.call(reviewkit.echo, "hint"), 60) == "hint"
    assert running.status == "running" and waiting.status == "queued"
    gate.touch()
    await waiting.finished  # type: ignore[misc]


async def test_close_fails_what_waits(tmp_path: Path) -> None:
    p = ReviewPool(1)
    gate = tmp_path / "gate"
    running = p.submit("a", "ann", reviewkit.counting, (3, str(gate)))
    waiting = p.submit("b", "bob", reviewkit.counting, (3, str(gate)))
    await until(lambda: running.status == "running")
    p.close()
    await waiting.finished  # type: ignore[misc]
    assert waiting.status == "failed" and "stopping" in (waiting.error or "")
    with pytest.raises(ReviewRefused):
        p.submit("c", "cy", reviewkit.counting, (1,))


async def test_a_pool_needs_a_worker() -> None:
    with pytest.raises(ValueError, match="0 turns reviews off"):
        ReviewPool(0)


class LateForkServer:
    """A backend whose every hand-over waits a second (a nice-19 fork server on a busy machine),
    then runs the task in the caller's thread."""

    def start(self, sink: Callable[..., None]) -> None:
        pass

    def submit(self, fn: Callable[..., object], *args: object) -> concurrent.futures.Future[object]:
        time.sleep(1.0)
        out: concurrent.futures.Future[object] = concurrent.futures.Future()
        out.set_result(fn(*args))
        return out

    def died(self, error: BaseException) -> bool:
        return False

    def warm(self) -> None:
        pass

    def close(self) -> None:
        pass


async def test_a_slow_worker_start_never_holds_the_event_loop() -> None:
    """Starting workers and handing them a job wait on other processes: never on the loop."""
    p = ReviewPool(1, backend=LateForkServer())
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    try:
        began = time.perf_counter()
        job = p.submit("k", "ann", reviewkit.counting, (2,))
        assert time.perf_counter() - began < 0.5  # the hand-over's second is not the caller's
        ticking = asyncio.create_task(ticker())
        await asyncio.wait_for(asyncio.shield(job.finished), 60)  # type: ignore[arg-type]
        ticking.cancel()
        assert job.status == "done" and job.result["steps"] == 2
        assert ticks >= 20  # the loop went on running while the job was handed over
    finally:
        p.close()
