"""Where does an asyncio server's event loop stall? Put this folder on ``PYTHONPATH`` and name a
log folder in ``MOONSHOT_LOOP_PROBE``: every Python process started so (a benchmark's server
included) then writes ``<folder>/probe-<pid>.log``:

* ``slow``: each loop callback that ran over 5 ms, its wall clock and its thread's CPU time (a
  long wall clock with little CPU is a wait: another process, a lock, a core not given), and what
  ran (a task's coroutine and the line it stopped at);
* ``lag``: how late a callback scheduled every 50 ms from another thread ran, when over 10 ms.

    MOONSHOT_LOOP_PROBE=/tmp/probe PYTHONPATH=benchmarks/loop_probe \\
        python benchmarks/abuse.py --only reviews-100 --quiet-seconds 20 --attack-seconds 20

The log's times are wall-clock seconds, as the benchmark's windows are. It wraps
``asyncio.events.Handle._run`` (the pure-Python loop; not uvloop) and costs a few microseconds a
callback. A measuring tool only: nothing of the project imports it.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

FOLDER = os.environ.get("MOONSHOT_LOOP_PROBE")


def _install(folder: str) -> None:
    import asyncio.events as events

    log: list[Any] = []

    def out(line: str) -> None:
        if not log:
            log.append(open(os.path.join(folder, f"probe-{os.getpid()}.log"), "a", buffering=1))  # noqa: SIM115
            log[0].write(" ".join(sys.argv) + "\n")
        log[0].write(line + "\n")

    run = events.Handle._run

    def timed(self: Any) -> None:
        wall, cpu = time.perf_counter(), time.thread_time()
        run(self)
        wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
        if wall > 0.005:
            what = repr(self._callback)
            task = getattr(self._callback, "__self__", None)
            if task is not None and hasattr(task, "get_coro"):
                coro = task.get_coro()
                frame = getattr(coro, "cr_frame", None)
                name = getattr(coro, "__qualname__", coro)
                what = f"task {name} at {frame.f_code.co_filename}:{frame.f_lineno}" if frame else f"task {name}"
            out(f"{time.time():.3f} slow {wall * 1e3:.1f}ms cpu {cpu * 1e3:.1f}ms {what[:300]}")

    events.Handle._run = timed  # type: ignore[method-assign]
    loops: list[Any] = []

    def lagging() -> None:
        while True:
            time.sleep(0.05)
            loop = loops[0]
            if loop.is_closed():
                return
            asked = time.perf_counter()

            def ran(asked: float = asked) -> None:
                late = time.perf_counter() - asked
                if late > 0.010:
                    out(f"{time.time():.3f} lag {late * 1e3:.1f}ms")

            try:
                loop.call_soon_threadsafe(ran)
            except RuntimeError:
                return

    set_running = events._set_running_loop

    def running(loop: Any) -> None:
        if loop is not None and not loops:
            loops.append(loop)
            threading.Thread(target=lagging, name="loop-probe", daemon=True).start()
        set_running(loop)

    events._set_running_loop = running


if FOLDER:
    os.makedirs(FOLDER, exist_ok=True)
    _install(FOLDER)
