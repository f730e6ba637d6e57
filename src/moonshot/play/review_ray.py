"""The review pool's Ray backend: reviews and hints as Ray tasks on a local Ray runtime or a
cluster (``moonshot serve --review-ray ADDRESS|auto|local``), behind the interface of
:class:`moonshot.play.review_pool.ProcessBackend`.

:class:`RayBackend` owns the connection to Ray and the tasks it started. The pool above it is
unchanged: it bounds the jobs (queued in all, per name), runs at most ``max_workers`` reviews and
one hint at once (so at most that many tasks are in flight), shares a key's job and hands results
to the same callbacks, which store them the same way. Each task asks Ray for one CPU, sets its own
niceness (``--review-nice``) and one BLAS thread, and reports progress through a Ray queue (an
actor of no CPU) that a thread of the server reads into the job. A task whose worker dies fails its
job (no retry: asking again starts it over), as a dead worker process does.

Connecting follows ``moonshot.play.batch.RayCluster``: a Ray runtime already started in this
process is used as it is and left running; ``local`` starts a local runtime of this machine's
CPUs; any other address (``auto``, ``HOST:PORT``, ``ray://HOST:10001``) joins that cluster. A
review task reads the game from the store itself, so on a cluster the store must be one every node
reaches (``--db postgresql://...``), not a SQLite file.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import threading
from collections.abc import Callable, Hashable
from typing import Any

LOCAL = "local"


class _Progress:
    """In a Ray task: ``put_nowait`` into the server's Ray queue (what ``review_pool._run`` uses)."""

    def __init__(self, queue: Any) -> None:
        self.queue = queue

    def put_nowait(self, item: Any) -> None:
        self.queue.put_nowait(item)


def ray_run(queue: Any, nice: int, fn: Callable[..., Any], *args: Any) -> Any:
    """A review or hint in a Ray worker: lower its priority, one BLAS thread, then ``fn(*args)``
    (the pool's ``_run``) with progress going to ``queue``."""
    from moonshot import one_blas_thread
    from moonshot.play import review_pool

    one_blas_thread()
    if nice:
        with contextlib.suppress(OSError):
            now = os.getpriority(os.PRIO_PROCESS, 0)
            if now < nice:  # a worker's niceness only rises: the next task finds it set
                os.setpriority(os.PRIO_PROCESS, 0, nice)
    review_pool._progress_queue = _Progress(queue) if queue is not None else None
    return fn(*args)


class RayBackend:
    """Reviews and hints as Ray tasks (see the module). Every method but :meth:`died` runs in the
    pool's submit thread."""

    def __init__(self, address: str = "auto", *, nice: int = 19) -> None:
        self.address = address
        self.nice = nice
        self.started = False  # this backend started the Ray runtime (and stops it)
        self._ray: Any = None
        self._remote: Any = None
        self._queue: Any = None
        self._reader: threading.Thread | None = None
        self._sink: Callable[[Hashable, int, int], None] | None = None
        self._refs: set[Any] = set()
        self._closing = threading.Event()

    def start(self, sink: Callable[[Hashable, int, int], None]) -> None:
        self._sink = sink

    def _connect(self) -> Any:
        if self._remote is not None:
            return self._remote
        from moonshot.play.batch import import_ray

        ray = import_ray()
        self._ray = ray
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if self.address != LOCAL:
                kwargs["address"] = self.address
            ray.init(**kwargs)
            self.started = True
        from ray.util.queue import Queue

        self._queue = Queue(maxsize=10_000, actor_options={"num_cpus": 0})
        self._reader = threading.Thread(target=self._read_progress, name="review-ray-progress", daemon=True)
        self._reader.start()
        # one CPU a task; no retry: a dead worker fails its job, as a dead process does
        self._remote = ray.remote(ray_run).options(num_cpus=1, max_retries=0)
        return self._remote

    def _read_progress(self) -> None:
        from ray.util.queue import Empty

        while not self._closing.is_set():
            try:
                item = self._queue.get(block=True, timeout=0.5)
            except Empty:
                continue
            except Exception:  # the queue's actor is gone (Ray stopped)
                return
            if self._sink is not None:
                self._sink(*item)

    def submit(self, fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future[Any]:
        remote = self._connect()
        ref = remote.remote(self._queue, self.nice, fn, *args)
        self._refs.add(ref)
        out: concurrent.futures.Future[Any] = concurrent.futures.Future()
        ray = self._ray

        def done(f: concurrent.futures.Future[Any]) -> None:
            self._refs.discard(ref)
            if f.cancelled():
                out.cancel()
                return
            e = f.exception()
            if e is None:
                out.set_result(f.result())
            elif isinstance(e, ray.exceptions.RayTaskError):
                cause = getattr(e, "cause", None)  # the task's own exception, not Ray's wrapper
                out.set_exception(cause if isinstance(cause, BaseException) else e)
            else:
                out.set_exception(e)

        ref.future().add_done_callback(done)
        return out

    def died(self, error: BaseException) -> bool:
        """Whether ``error`` says the task's worker or node died (rather than the task raising)."""
        if self._ray is None:
            return False
        dead = (self._ray.exceptions.WorkerCrashedError, self._ray.exceptions.NodeDiedError)
        return isinstance(error, dead) or type(error).__name__ in ("WorkerCrashedError", "NodeDiedError")

    def warm(self) -> None:
        self._connect()

    def close(self) -> None:
        self._closing.set()
        ray = self._ray
        if ray is None:
            return
        for ref in list(self._refs):  # a long review is not waited for
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
        if self._reader is not None:
            self._reader.join(timeout=2)
        if self._queue is not None:
            with contextlib.suppress(Exception):
                self._queue.shutdown()
        if self.started:
            ray.shutdown()
            self.started = False


def review_backend(address: str | None, *, nice: int = 19) -> RayBackend | None:
    """``serve --review-ray``: a Ray backend for ``address`` (None: none, the pool's processes)."""
    return None if address is None else RayBackend(address, nice=nice)


__all__ = ["LOCAL", "RayBackend", "ray_run", "review_backend"]
