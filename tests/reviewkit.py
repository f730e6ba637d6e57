"""Stand-in tasks for the review pool's tests (module-level: a spawned worker imports them by
name from the tests folder, which pytest puts on ``sys.path``)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def counting(
    steps: int, gate: str | None = None, *, progress: Callable[[int, int], None] | None = None
) -> dict[str, Any]:
    """Report ``steps`` steps of progress; with ``gate`` (a file path), wait at the first step
    until the file exists (the test opens the gate when it has seen the job run)."""
    for i in range(steps):
        if progress is not None:
            progress(i, steps)
        if gate is not None and i == 1:
            deadline = time.monotonic() + 60
            while not Path(gate).exists() and time.monotonic() < deadline:
                time.sleep(0.01)
    if progress is not None:
        progress(steps, steps)
    return {"steps": steps, "nice": os.nice(0), "pid": os.getpid(), "blas": os.environ.get("OPENBLAS_NUM_THREADS")}


def crash(*, progress: Callable[[int, int], None] | None = None) -> None:
    """A worker that dies as a killed one would."""
    os._exit(3)


def failing(*, progress: Callable[[int, int], None] | None = None) -> None:
    raise ValueError("a stand-in review that fails")


def echo(value: Any) -> Any:
    return value


def crash_review(*args: Any, **kwargs: Any) -> None:
    """A review (any arguments) whose worker dies."""
    os._exit(3)
