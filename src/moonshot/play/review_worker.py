"""The review pool's fork server loads this module first, so that it, and every review worker forked
from it, runs at the lowest CPU priority from its first instruction on.

A worker is forked from the pool's fork server (``moonshot.play.review_pool``), then imports the
server's main module again (how ``multiprocessing`` prepares a child) before the pool's initializer
runs: without this module that import, a second or two of CPU, ran at the server's own priority
while tables were being played. Importing this module lowers the priority of the process that
imports it (``os.nice`` to :data:`NICE`; on Linux, in a session of its own whose autogroup is niced
too) and sets one BLAS thread (:func:`moonshot.one_blas_thread`); nothing but the fork server and
its workers may import it.
"""

from __future__ import annotations

import contextlib
import os

from moonshot import one_blas_thread

NICE = 19

one_blas_thread()
with contextlib.suppress(OSError):
    os.nice(NICE - os.nice(0))  # to NICE, whatever the niceness it was started with
# Linux's autogroup (kernel.sched_autogroup_enabled) shares the CPU between sessions first and by
# niceness only within one: in the server's session a niced worker still spent the session's share,
# and the server's wakeups waited for it. A session of its own, its group niced too, spends none.
with contextlib.suppress(OSError):
    os.setsid()
with contextlib.suppress(OSError), open("/proc/self/autogroup", "w") as group:
    group.write(str(NICE))

__all__ = ["NICE"]
