"""The commands' progress bars and their stderr console (rich), shared by ``moonshot`` and the
``train-*`` commands. ``--quiet`` gets :class:`NoProgress`, which never imports ``rich.progress``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from rich.console import Console

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

err_console = Console(stderr=True)


class NoProgress:
    """``--quiet``: a progress bar that draws nothing (rich.progress is not even imported)."""

    def __enter__(self) -> NoProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def add_task(self, description: str, total: float | None = None, **fields: Any) -> TaskID:
        return cast("TaskID", 0)

    def update(self, task: TaskID, advance: float | None = None, **fields: Any) -> None:
        return None


def progress_bar(quiet: bool) -> Progress | NoProgress:
    if quiet:
        return NoProgress()
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err_console,
        transient=False,
        # redrawn on a clock: at rich's default 10/s a loaded machine spent a tenth of a fast
        # simulate run drawing it; 4/s still looks live
        refresh_per_second=4,
    )


__all__ = ["NoProgress", "err_console", "progress_bar"]
