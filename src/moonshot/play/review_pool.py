"""The review pool: game reviews and hints run in a bounded pool of worker processes, never on
the server's event loop, at the lowest CPU priority.

:class:`ReviewPool` owns:

* the workers: a ``concurrent.futures.ProcessPoolExecutor`` on a ``forkserver`` context (forked
  from a small process that has loaded only this module: nothing of the server's loop, sockets or
  threads is inherited), each worker at nice 19 from birth (the fork server lowers its own priority
  first: :mod:`moonshot.play.review_worker`) with one BLAS thread
  (:func:`moonshot.one_blas_thread`), so a running table's decisions always come first.
  ``max_workers`` reviews run at once (default 1); one more process serves hints, which jump the
  queue;
* the queue of review jobs: at most ``max_jobs`` queued or running in all and ``per_name`` started
  by one name (beyond them :class:`ReviewRefused`, the API's 429). The pool dispatches a job only
  when a worker is free, so a crashed worker fails only the jobs it was running;
* dedup: a job is keyed (the API's ``(game, seat, budget)``); asking for a key already queued or
  running shares that job;
* progress: the worker reports ``(done, total)`` through a ``multiprocessing`` queue that a thread
  of the server reads into the job (:attr:`ReviewJob.done`, :attr:`ReviewJob.total`);
* the event loop's time: nothing that can wait on another process runs on the loop. Starting the
  workers (the fork server, each worker's fork: a round trip to a nice-19 process that a busy
  machine schedules last, tens to hundreds of ms) and every hand-over of a job to them run in one
  thread of the pool's own (``review-submit``), which starts the workers as the first job comes
  (one more later only if a job finds none idle); a job's end comes back to the loop as a callback.

Where the workers run is a backend: :class:`ProcessBackend` (this machine's processes, the
default) or :class:`moonshot.play.review_ray.RayBackend` (Ray tasks on a local runtime or a
cluster, ``serve --review-ray``), behind the same bounds.

A worker that dies (killed, out of memory) fails its job with a :class:`ReviewFailed` reason; the
pool starts fresh workers, and asking for the key again starts a new job. The pool knows nothing of
games or HTTP: it runs module-level functions it is given (:func:`review_task`, :func:`hint_task`
by default) and hands back what they return.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import multiprocessing
import os
import queue
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("moonshot.review")

NICE = 19


class ReviewRefused(Exception):
    """The pool will not take this job now (full, or the name's share is used): the API's 429."""


class ReviewFailed(Exception):
    """A job's worker raised or died; asking again starts a new job."""


# ---------------------------------------------------------------- in the worker process
_progress_queue: Any = None


def _init_worker(progress: Any, nice: int) -> None:
    """Each worker: lowest CPU priority, one BLAS thread, the progress queue."""
    global _progress_queue
    _progress_queue = progress
    from moonshot import one_blas_thread

    one_blas_thread()  # before anything imports NumPy (the parent set it too: inherited)
    if nice > os.nice(0):  # the niceness asked for, whatever the worker was started with
        with contextlib.suppress(OSError):
            os.nice(nice - os.nice(0))


def _run(task: Callable[..., Any], key: Any, args: tuple[Any, ...], kwargs: dict[str, Any], progress: bool) -> Any:
    """Run ``task`` in a worker; with ``progress``, it is given a ``progress(done, total)``."""
    if not progress:
        return task(*args, **kwargs)

    def report(done: int, total: int) -> None:  # once a decision: a few dozen small messages a review
        if _progress_queue is not None:
            with contextlib.suppress(Exception):
                _progress_queue.put_nowait((key, done, total))

    return task(*args, progress=report, **kwargs)


def worker_info() -> dict[str, Any]:
    """What a worker is (tests): its niceness, pid and BLAS thread setting."""
    return {"nice": os.nice(0), "pid": os.getpid(), "blas": os.environ.get("OPENBLAS_NUM_THREADS")}


def review_task(
    rules: Any,
    seed: int,
    actions: Sequence[Any],
    seat: int,
    *,
    deals: Sequence[Any] | None = None,
    simulations: int | None = None,
    think_ms: int | None = None,
    review_seed: int = 0,
    game_id: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """A game's review for ``seat`` as its JSON (``moonshot.play.review``), in a worker."""
    from moonshot.play.review import review_game

    review = review_game(
        rules,
        seed,
        actions,
        seat,
        deals=deals,
        simulations=simulations,
        think_ms=think_ms,
        review_seed=review_seed,
        progress=progress,
        game_id=game_id,
    )
    out: dict[str, Any] = review.to_json()
    return out


def hint_task(
    view: Any, *, simulations: int | None = None, think_ms: int | None = None, seed: int = 0
) -> dict[str, Any]:
    """The evaluation of the decision ``view`` is at (``moonshot.bots.review.evaluate``), as plain
    data: kind, options best first (label, expected points, moon chances, worlds), in a worker."""
    from moonshot.bots.review import evaluate

    ev = evaluate(view, simulations=simulations, think_ms=think_ms, seed=seed)
    return {
        "kind": ev.kind,
        "complete": ev.complete,
        "worlds": ev.worlds,
        "note": ev.note,
        "options": [
            {
                "label": o.label,
                "expected": o.expected,
                "moon_for": o.moon_for,
                "moon_against": o.moon_against,
                "worlds": o.worlds,
            }
            for o in ev.options
        ],
    }


# ---------------------------------------------------------------- in the server
ProgressSink = Callable[[Hashable, int, int], None]


class ProcessBackend:
    """The workers as this machine's processes: a ``ProcessPoolExecutor`` of ``slots`` processes on
    a ``forkserver`` context, niced (see the module). Every method but :meth:`died` runs in the
    pool's submit thread, never on the event loop: it may wait on the fork server."""

    def __init__(self, slots: int, *, nice: int = NICE, start_method: str = "forkserver") -> None:
        self.slots = slots
        self.nice = nice
        if start_method == "forkserver" and nice != NICE:
            # a process has one fork server, and the first pool's preload below nices it (and its
            # session's autogroup) for good: a pool at another niceness (serve --review-nice) spawns
            # its workers from this process instead, and each worker's initializer sets its niceness
            start_method = "spawn"
        self._ctx = multiprocessing.get_context(start_method)
        if start_method == "forkserver":
            # workers fork from a small server process that lowered its own priority first
            # (moonshot.play.review_worker): a worker is niced from birth, before it imports the
            # server's main module again (a spawned one does that at the server's priority)
            self._ctx.set_forkserver_preload(["moonshot.play.review_worker", __name__])
        self._executor: concurrent.futures.ProcessPoolExecutor | None = None
        self._progress: Any = None
        self._reader: threading.Thread | None = None
        self._reading = threading.Event()  # cleared: the progress reader stops
        self._sink: ProgressSink | None = None

    def start(self, sink: ProgressSink) -> None:
        self._sink = sink

    def _pool(self) -> concurrent.futures.ProcessPoolExecutor:
        ex = self._executor
        if ex is not None and getattr(ex, "_broken", False):  # a worker died: fresh workers
            self._executor = None
            ex.shutdown(wait=False, cancel_futures=True)
        if self._executor is None:
            from moonshot import one_blas_thread

            one_blas_thread()  # the workers inherit the environment: one BLAS thread from their start
            # a progress queue for each set of workers: a worker killed while it held the queue's
            # write lock leaves that queue unusable, so fresh workers never share it
            self._stop_reading()
            self._progress = self._ctx.Queue()
            self._reading = threading.Event()
            self._reading.set()
            self._reader = threading.Thread(
                target=self._read_progress, args=(self._progress, self._reading), name="review-progress", daemon=True
            )
            self._reader.start()
            self._executor = concurrent.futures.ProcessPoolExecutor(
                self.slots, mp_context=self._ctx, initializer=_init_worker, initargs=(self._progress, self.nice)
            )
            # every worker now, in this thread: a later job never waits for a worker's start
            for _ in range(self.slots):
                self._executor.submit(os.getpid)
        return self._executor

    def _read_progress(self, q: Any, reading: threading.Event) -> None:
        """A thread: worker progress to the pool (plain int stores; the loop reads them), until
        ``reading`` is cleared. The server never writes to the queue (a write would wait on the
        queue's lock, which a killed worker may hold for ever, and hold the process's exit)."""
        while reading.is_set():
            try:
                item = q.get(timeout=0.25)
            except queue.Empty:
                continue
            except (EOFError, OSError, ValueError):
                return
            if self._sink is not None:
                self._sink(*item)

    def _stop_reading(self) -> None:
        """Stop the progress reader and let its queue go."""
        self._reading.clear()
        if self._reader is not None:
            self._reader.join(timeout=2)
            self._reader = None
        if self._progress is not None:
            with contextlib.suppress(Exception):
                self._progress.close()
            self._progress = None

    def submit(self, fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future[Any]:
        try:
            return self._pool().submit(fn, *args)
        except BrokenProcessPool:  # broken between the check and the submit: once more, fresh
            self._executor = None
            return self._pool().submit(fn, *args)

    def died(self, error: BaseException) -> bool:
        """Whether ``error`` says the job's worker died (rather than the task raising)."""
        return isinstance(error, BrokenProcessPool)

    def warm(self) -> None:
        self._pool()

    def close(self) -> None:
        ex, self._executor = self._executor, None
        if ex is not None:
            procs = list((getattr(ex, "_processes", None) or {}).values())
            for p in procs:  # a long review is not waited for
                with contextlib.suppress(Exception):
                    p.terminate()
            ex.shutdown(wait=False, cancel_futures=True)
            for p in procs:
                with contextlib.suppress(Exception):
                    p.join(timeout=5)
        self._stop_reading()


@dataclass(eq=False)
class ReviewJob:
    """One review, queued, running or finished; shared by everyone who asks for its key."""

    key: Hashable
    name: str  # who started it (its share)
    task: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    total: int = 0
    done: int = 0
    status: str = "queued"  # queued | running | done | failed
    result: Any = None
    error: str | None = None
    started_at: float = 0.0
    finished: asyncio.Future[Any] | None = field(default=None, repr=False)
    # run by the pool in the very step that forgets the job (never a later loop callback: a poll
    # between the two would find neither the job nor what on_done keeps, and start it again)
    on_done: Callable[[ReviewJob], Any] | None = field(default=None, repr=False)

    @property
    def progress(self) -> dict[str, int]:
        return {"done": self.done, "total": self.total}


class ReviewPool:
    """A bounded pool of niced workers for reviews and hints (see the module); ``backend``: where
    they run (default: :class:`ProcessBackend`, ``max_workers + 1`` processes)."""

    def __init__(
        self,
        max_workers: int = 1,
        *,
        max_jobs: int = 20,
        per_name: int = 2,
        max_hints: int = 8,
        nice: int = NICE,
        start_method: str = "forkserver",
        backend: Any = None,
    ) -> None:
        if max_workers < 1:
            raise ValueError("a review pool needs at least one worker (0 turns reviews off: no pool)")
        self.max_workers = max_workers
        self.max_jobs = max_jobs
        self.per_name = per_name
        self.max_hints = max_hints
        self.nice = nice
        # the reviews' workers and one for hints
        self.backend = backend or ProcessBackend(max_workers + 1, nice=nice, start_method=start_method)
        self.jobs: dict[Hashable, ReviewJob] = {}  # queued and running, in arrival order
        self._queue: list[ReviewJob] = []
        self._running: set[ReviewJob] = set()
        self._hints: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any], asyncio.Future[Any]]] = []
        self._hint_running = False
        self.started = 0  # jobs started (tests: a review served from the store starts none)
        self.failed = 0
        self.hints = 0
        # the one thread that starts workers and hands them jobs (see the module): never the loop
        self._submitter = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="review-submit")
        self._backend_started = False
        self._closed = False
        self._loop: asyncio.AbstractEventLoop | None = None

    # ------------------------------------------------------------ workers
    def _progress(self, key: Hashable, done: int, total: int) -> None:
        """A backend's thread: a worker's progress into its job (plain int stores)."""
        job = self.jobs.get(key)
        if job is not None and job.status == "running":
            job.total = total
            job.done = done

    def _hand_over(
        self,
        task: Callable[..., Any],
        key: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        progress: bool,
        ended: Callable[[concurrent.futures.Future[Any]], None],
    ) -> None:
        """Give a job to the backend in the submit thread; ``ended(future)`` runs on the loop."""
        loop = self._loop
        assert loop is not None

        def back(f: concurrent.futures.Future[Any]) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
                loop.call_soon_threadsafe(ended, f)

        def in_thread() -> None:
            try:
                if not self._backend_started:
                    self.backend.start(self._progress)
                    self._backend_started = True
                fut = self.backend.submit(_run, task, key, args, kwargs, progress)
            except Exception as e:
                failed: concurrent.futures.Future[Any] = concurrent.futures.Future()
                failed.set_exception(ReviewFailed(f"the review pool could not start it: {type(e).__name__}: {e}"))
                back(failed)
                return
            fut.add_done_callback(back)

        try:
            self._submitter.submit(in_thread)
        except RuntimeError:  # closed
            failed: concurrent.futures.Future[Any] = concurrent.futures.Future()
            failed.cancel()
            failed.set_running_or_notify_cancel()
            ended(failed)

    def _reason(self, fut: concurrent.futures.Future[Any], what: str) -> str | None:
        """Why a job's future failed (None: it did not)."""
        if fut.cancelled():
            return f"the {what} was cancelled (the server is stopping)"
        e = fut.exception()
        if e is None:
            return None
        if isinstance(e, ReviewFailed):
            return str(e)
        if self.backend.died(e):
            return f"the {what}'s worker process died"
        return f"the {what} failed: {type(e).__name__}: {e}"

    # ------------------------------------------------------------ reviews
    def job(self, key: Hashable) -> ReviewJob | None:
        """The queued or running job of ``key`` (None: none; a finished job is handed to its
        ``on_done`` and forgotten)."""
        return self.jobs.get(key)

    def position(self, job: ReviewJob) -> int:
        """How many jobs run or wait before ``job`` (0: it is running)."""
        if job.status != "queued":
            return 0
        try:
            return len(self._running) + self._queue.index(job)
        except ValueError:
            return 0

    def refusal(self, name: str) -> str | None:
        """Why a new job of ``name`` would be refused now (None: it would be taken)."""
        if self._closed:
            return "the review pool is closed"
        if len(self.jobs) >= self.max_jobs:
            return f"the server is reviewing {len(self.jobs)} games (at most {self.max_jobs}): try later"
        mine = sum(1 for j in self.jobs.values() if j.name == name)
        if mine >= self.per_name:
            return f"{name} has {mine} reviews queued or running (at most {self.per_name})"
        return None

    def submit(
        self,
        key: Hashable,
        name: str,
        task: Callable[..., Any],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
        *,
        total: int = 0,
        on_done: Callable[[ReviewJob], Any] | None = None,
    ) -> ReviewJob:
        """The job of ``key``: the one queued or running, else a new one started by ``name``
        (raises :class:`ReviewRefused` when the pool or the name's share is full). ``task`` is a
        module-level function called in a worker as ``task(*args, progress=..., **kwargs)``;
        ``on_done(job)`` runs on the loop when it finishes (done or failed), in the same step that
        forgets the job: a request never finds the job gone and ``on_done``'s effect not yet there."""
        existing = self.jobs.get(key)
        if existing is not None and not self._closed:
            return existing
        why = self.refusal(name)
        if why is not None:
            raise ReviewRefused(why)
        self._loop = asyncio.get_running_loop()
        job = ReviewJob(key, name, task, tuple(args), dict(kwargs or {}), total=total)
        job.finished = self._loop.create_future()
        job.on_done = on_done
        self.jobs[key] = job
        self._queue.append(job)
        log.info("event=review_queued key=%s name=%s queued=%d", _shown(key), _shown(name), len(self._queue))
        self._dispatch()
        return job

    def _dispatch(self) -> None:
        while self._queue and len(self._running) < self.max_workers and not self._closed:
            job = self._queue.pop(0)
            self._start(job)
        if self._hints and not self._hint_running and not self._closed:
            self._start_hint()

    def _start(self, job: ReviewJob) -> None:
        job.status = "running"
        job.started_at = time.monotonic()
        self._running.add(job)
        self.started += 1
        log.info("event=review_started key=%s name=%s", _shown(job.key), _shown(job.name))
        self._hand_over(job.task, job.key, job.args, job.kwargs, True, lambda f: self._ended(job, f))

    def _ended(self, job: ReviewJob, fut: concurrent.futures.Future[Any]) -> None:
        reason = self._reason(fut, "review")
        self._finish(job, None if reason is not None else fut.result(), reason)

    def _finish(self, job: ReviewJob, result: Any, error: str | None) -> None:
        if job.status in ("done", "failed"):
            return
        self._running.discard(job)
        if self.jobs.get(job.key) is job:
            del self.jobs[job.key]
        seconds = time.monotonic() - job.started_at
        if error is None:
            job.status, job.result = "done", result
            job.done = job.total = max(job.total, job.done)
            log.info("event=review_done key=%s seconds=%.1f", _shown(job.key), seconds)
        else:
            job.status, job.error = "failed", error
            self.failed += 1
            log.warning("event=review_failed key=%s seconds=%.1f reason=%s", _shown(job.key), seconds, _shown(error))
        if job.on_done is not None:
            try:
                job.on_done(job)
            except Exception:
                log.exception("event=review_on_done_failed key=%s", _shown(job.key))
        if job.finished is not None and not job.finished.done():
            job.finished.set_result(job)
        self._dispatch()

    # ------------------------------------------------------------ hints
    async def call(self, task: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run ``task(*args, **kwargs)`` in the hints' worker, ahead of queued reviews; raises
        :class:`ReviewRefused` when ``max_hints`` already wait, :class:`ReviewFailed` when the
        task raised or its worker died."""
        if self._closed:
            raise ReviewRefused("the review pool is closed")
        if len(self._hints) >= self.max_hints:
            raise ReviewRefused(f"{len(self._hints)} hints are waiting (at most {self.max_hints}): try again")
        self._loop = asyncio.get_running_loop()
        done: asyncio.Future[Any] = self._loop.create_future()
        self._hints.append((task, args, kwargs, done))
        self._dispatch()
        return await done

    def _start_hint(self) -> None:
        task, args, kwargs, done = self._hints.pop(0)
        if done.done():  # its caller went
            self._dispatch()
            return
        self._hint_running = True
        self.hints += 1

        def ended(f: concurrent.futures.Future[Any]) -> None:
            self._hint_running = False
            if not done.done():
                reason = self._reason(f, "hint")
                if reason is not None:
                    done.set_exception(ReviewFailed(reason))
                else:
                    done.set_result(f.result())
            self._dispatch()

        self._hand_over(task, None, args, kwargs, False, ended)

    # ------------------------------------------------------------ life cycle
    def warm(self) -> None:
        """Start the workers now, in the submit thread (else the first job does)."""

        def in_thread() -> None:
            if not self._backend_started:
                self.backend.start(self._progress)
                self._backend_started = True
            self.backend.warm()

        self._submitter.submit(in_thread)

    def close(self) -> None:
        """Stop: queued jobs fail, running ones are abandoned, the workers end."""
        self._closed = True
        for job in list(self._queue):
            self._queue.remove(job)
            self._finish(job, None, "the server is stopping")
        for _task, _args, _kw, done in self._hints:
            if not done.done():
                done.set_exception(ReviewFailed("the server is stopping"))
        self._hints.clear()
        # a hand-over under way ends first (it may be starting workers); those waiting are dropped
        self._submitter.shutdown(wait=True, cancel_futures=True)
        self.backend.close()


def _shown(value: Any) -> str:
    import json

    return json.dumps(value if isinstance(value, (str, int, float)) else str(value))


__all__ = [
    "NICE",
    "ProcessBackend",
    "ReviewFailed",
    "ReviewJob",
    "ReviewPool",
    "ReviewRefused",
    "hint_task",
    "review_task",
    "worker_info",
]
