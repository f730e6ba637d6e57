"""Batch work (self-play, arenas, decision datasets) split into tasks of whole games, on a backend.

A task is a pure function of its fields: a range of seeds (each seed's four rotations together
with ``--duplicate``) for ``simulate``, a range of arena deals (each in every seating) for
``arena``. The same task functions run on every backend:

- :class:`Serial`: in this process (``--workers 1``);
- :class:`ProcessPool`: a ``multiprocessing`` pool on this machine (``--workers N``);
- :class:`RayCluster`: Ray tasks on a local Ray runtime or a cluster (``--ray [ADDRESS]``).

Every backend yields results in task order, so what the CLI writes does not depend on the backend
or the number of workers. A task that dies with its process is run again by Ray; since it is a
pure function of its seeds, the rerun gives the same result. A task asked to write decision
shards writes ``part-NNNNN.parquet`` under a temporary name and renames it at the end, so a
rerun simply writes the same file again.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from moonshot.core.actions import Action, action_to_dict, actions_json
from moonshot.core.variants import find_variant
from moonshot.play.sim import GameRecord, play_game_actions, tasks

if TYPE_CHECKING:  # the arena (and multiprocessing) load when used: `simulate` starts without them
    from moonshot.play.arena import ArenaConfig, DealResult

T = TypeVar("T")
R = TypeVar("R")

MANIFEST = "_manifest.json"
MANIFEST_FORMAT = "moonshot.decisions/1"
RAY_INSTALL = "pip install 'moonshot[ray]'"
# Test hook: a task finding this variable set (to a marker file path) kills its own process once,
# creating the marker first, so tests can check that Ray reruns a task whose worker died.
CRASH_ONCE_ENV = "MOONSHOT_TEST_CRASH_ONCE"


class RayMissing(RuntimeError):
    """``--ray`` was asked for where Ray is not installed."""


# ----------------------------------------------------------------------------- the task unit
@dataclass(frozen=True)
class SimTask:
    """Seeds ``start <= seed < stop`` (with ``duplicate``, each seed's four rotations in a row).

    ``first_game`` is the run-wide number of the task's first game (the decisions' ``game_id``);
    ``shards`` names a directory to write this task's decisions into as ``part-{index:05}.parquet``.
    ``lines``: also return each game's JSON line (``--export``), encoded in the worker; ``actions``:
    keep each record's actions (else they are dropped before the records travel back: the driver's
    statistics do not need them, and decoding them there would cap what one driver takes in).
    """

    index: int
    variant: str
    options: tuple[tuple[str, int], ...]
    seats: tuple[str, ...]
    start: int
    stop: int
    duplicate: bool
    first_game: int
    shards: str | None = None
    lines: bool = False
    actions: bool = True

    @property
    def games(self) -> int:
        return (self.stop - self.start) * (4 if self.duplicate else 1)


@dataclass
class SimResult:
    """A finished :class:`SimTask`: its games in order, and its shard's manifest entry if it wrote one."""

    index: int
    records: list[GameRecord]
    shard: dict[str, Any] | None = None
    lines: list[str] | None = None


def shard_name(index: int) -> str:
    return f"part-{index:05}.parquet"


def run_sim_task(task: SimTask) -> SimResult:
    """Play a task's games (and write its decision shard): the unit every backend runs."""
    options = dict(task.options)
    rules = find_variant(task.variant, **options)
    # the records' actions as dicts only for those who read them (the one-file decision export
    # and shards); --export writes its lines straight from the actions
    keep = task.actions or task.shards is not None
    records: list[GameRecord] = []
    lines: list[str] | None = [] if task.lines else None
    for seed, rotation in tasks(range(task.start, task.stop), task.duplicate):
        rec, actions = play_game_actions(rules, seed, task.seats, rotation, options=options)
        if keep:
            rec.actions = [action_to_dict(a) for a in actions]
        if lines is not None:
            lines.append(record_line(rec, actions))
        records.append(rec)
    if task.shards is None:
        _maybe_die()  # the test hook: mid-task, the games played and nothing returned yet
    shard = _write_shard(task, rules, records) if task.shards is not None else None
    if not task.actions and keep:
        records = [replace(rec, actions=[]) for rec in records]
    return SimResult(task.index, records, shard, lines)


def record_line(rec: GameRecord, played: Sequence[Action] | None = None) -> str:
    """A game's line in ``simulate --export`` (README, 'Game records'), without the newline:
    ``json.dumps(rec.to_json())``, compact; with ``played``, the game's actions as they are,
    written in place of the record's (the same text).

    Plays, most of a record, are written from a template: the JSON encoder took about a sixth of
    the time a game of random bots takes to play."""
    data = rec.to_json()
    actions = data.pop("actions")
    head = json.dumps(data, separators=(",", ":"))
    if played is not None:
        return f'{head[:-1]},"actions":{actions_json(played)}}}'
    parts = []
    for a in actions:
        if a["t"] == "play" and len(a) == 3:
            parts.append(f'{{"t":"play","s":{a["s"]},"c":"{a["c"]}"}}')
        else:
            parts.append(json.dumps(a, separators=(",", ":")))
    return f'{head[:-1]},"actions":[{",".join(parts)}]}}'


def _write_shard(task: SimTask, rules: Any, records: list[GameRecord]) -> dict[str, Any]:
    from moonshot.core.actions import action_from_dict
    from moonshot.rl.datasets import DecisionWriter, record_decisions

    assert task.shards is not None
    directory = Path(task.shards)
    name = shard_name(task.index)
    # the leading dot hides a half-written shard from readers (pyarrow skips "." and "_" names)
    tmp = directory / f".{name[:-8]}.{os.getpid()}.tmp.parquet"
    with DecisionWriter(tmp) as writer:
        for i, rec in enumerate(records):
            actions = [action_from_dict(a) for a in rec.actions]
            writer.write(
                record_decisions(
                    rules, rec.seed, actions, rec.seats, game_id=task.first_game + i, rotation=rec.rotation
                )
            )
        rows = writer.rows
    _maybe_die()  # the test hook: the shard written under its temporary name, not yet renamed
    os.replace(tmp, directory / name)
    return {
        "file": name,
        "first_game": task.first_game,
        "games": len(records),
        "seeds": [task.start, task.stop],
        "rows": rows,
    }


@dataclass(frozen=True)
class ArenaTask:
    """Arena deals ``start <= index < stop``, each in every seating."""

    index: int
    config: ArenaConfig
    start: int
    stop: int

    @property
    def games(self) -> int:
        return self.stop - self.start


def run_arena_task(task: ArenaTask) -> list[DealResult]:
    """Play a task's arena deals (timing each decision: the only output that is not reproducible)."""
    from moonshot.play.arena import play_deal

    # --cpu-time: budgets count CPU time, and so does the time each move is reported to take
    bot_clock = time.process_time if task.config.cpu_time else None
    clock = time.process_time if task.config.cpu_time else time.perf_counter
    results = [play_deal(task.config, i, clock=clock, bot_clock=bot_clock) for i in range(task.start, task.stop)]
    _maybe_die()
    return results


def _maybe_die() -> None:
    marker = os.environ.get(CRASH_ONCE_ENV)
    if marker and not os.path.exists(marker):
        Path(marker).write_text(str(os.getpid()), encoding="utf-8")
        os._exit(17)


def task_size(units: int, parallelism: int, per_task: int | None = None) -> int:
    """Units (seeds or deals) per task: ``per_task`` if given, else about 16 tasks per worker."""
    if per_task is not None:
        return max(1, per_task)
    return max(1, units // (max(1, parallelism) * 16))


def plan_sim(
    variant: str,
    options: dict[str, int],
    seats: Sequence[str],
    seed: int,
    seeds: int,
    duplicate: bool,
    parallelism: int,
    per_task: int | None = None,
    shards: str | Path | None = None,
    lines: bool = False,
    actions: bool = True,
) -> list[SimTask]:
    """Split seeds ``seed .. seed+seeds-1`` into tasks of ``per_task`` seeds (default: by parallelism)."""
    size = task_size(seeds, parallelism, per_task)
    out: list[SimTask] = []
    first = 0
    for k, start in enumerate(range(seed, seed + seeds, size)):
        t = SimTask(
            index=k,
            variant=variant,
            options=tuple(sorted(options.items())),
            seats=tuple(seats),
            start=start,
            stop=min(start + size, seed + seeds),
            duplicate=duplicate,
            first_game=first,
            shards=None if shards is None else str(shards),
            lines=lines,
            actions=actions,
        )
        out.append(t)
        first += t.games
    return out


def plan_arena(config: ArenaConfig, per_task: int = 1) -> list[ArenaTask]:
    """Arena deals in tasks of ``per_task`` deals: one by default, since a deal of search bots takes
    seconds and the progress bar should move with each."""
    size = max(1, per_task)
    return [
        ArenaTask(k, config, start, min(start + size, config.deals))
        for k, start in enumerate(range(0, config.deals, size))
    ]


# ----------------------------------------------------------------------------- decision shards
def prepare_shards(path: Path) -> None:
    """Make ``path`` an empty directory for decision shards (refuse one with files in it)."""
    if path.exists() and not path.is_dir():
        raise ValueError(f"{path} exists and is not a directory")
    if path.is_dir() and any(path.iterdir()):
        raise ValueError(f"{path} is not empty: give decision shards a new or empty directory")
    path.mkdir(parents=True, exist_ok=True)


def write_manifest(path: Path, about: dict[str, Any], shards: Sequence[dict[str, Any]], complete: bool) -> None:
    """``_manifest.json``: the run's settings and the shards in game order (written last, atomically).

    After an interruption ``shards`` holds the shards finished in order; any other shard is removed,
    so the directory holds exactly the games the manifest lists (``complete`` says whether that is all)."""
    manifest = {
        "format": MANIFEST_FORMAT,
        **about,
        "complete": complete,
        "games": sum(s["games"] for s in shards),
        "rows": sum(s["rows"] for s in shards),
        "shards": list(shards),
    }
    for left in path.glob(".part-*.tmp.parquet"):  # from a task whose worker died while writing
        left.unlink(missing_ok=True)
    listed = {s["file"] for s in shards}
    for extra in path.glob("part-*.parquet"):  # an interrupted run: shards past the first one missing
        if extra.name not in listed:
            extra.unlink(missing_ok=True)
    tmp = path / f".{MANIFEST}.tmp"
    tmp.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path / MANIFEST)


# ----------------------------------------------------------------------------- backends
class Backend(Protocol):
    """Runs ``fn`` over tasks and yields the results in task order."""

    @property
    def parallelism(self) -> int: ...

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[R]: ...

    def close(self) -> None: ...


class Serial:
    """Every task in this process, one after another."""

    parallelism = 1

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        for item in items:
            yield fn(item)

    def close(self) -> None:
        pass


@dataclass
class ProcessPool:
    """A ``multiprocessing`` pool of ``workers`` processes on this machine."""

    workers: int

    @property
    def parallelism(self) -> int:
        return self.workers

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        import gc
        import multiprocessing

        # what is allocated so far stays out of the collector's way: a forked worker then does
        # not copy the parent's pages by the collector's writes to every object it scans
        gc.freeze()
        ctx = multiprocessing.get_context("spawn" if sys.platform == "darwin" else "fork")
        # tasks go out (and results come back) a few at a time: one message per task through the
        # pool's pipes and threads cost about 1.5 ms of CPU a task on a loaded 2-core machine
        # (benchmarks/simulate_costs.py), a quarter of nine games of random bots; about four
        # chunks per worker still share the work out evenly
        chunk = max(1, len(items) // (self.workers * 4))
        with ctx.Pool(min(self.workers, max(1, len(items)))) as pool:
            yield from pool.imap(fn, items, chunksize=chunk)

    def close(self) -> None:
        pass


def import_ray() -> Any:
    try:
        import ray
    except ImportError as e:
        raise RayMissing(f"--ray needs Ray, an optional extra: {RAY_INSTALL}") from e
    return ray


@dataclass
class RayCluster:
    """Ray tasks: ``address`` None starts a local Ray runtime (``num_cpus`` CPUs, default all);
    an address (``auto``, ``HOST:PORT``, ``ray://HOST:10001``) joins that cluster. A Ray runtime
    already started in this process (``ray.init``) is used as it is and left running."""

    address: str | None = None
    num_cpus: int | None = None
    window: int = 4  # tasks in flight per CPU: enough to keep every worker busy while results stream in order
    started: bool = field(default=False, init=False)
    _ray: Any = field(default=None, init=False, repr=False)
    _remote: dict[Any, Any] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        ray = import_ray()
        self._ray = ray
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": True}
            if self.address:
                kwargs["address"] = self.address
            elif self.num_cpus is not None:
                kwargs["num_cpus"] = self.num_cpus
            ray.init(**kwargs)
            self.started = True

    @property
    def parallelism(self) -> int:
        return max(1, int(self._ray.cluster_resources().get("CPU", 1)))

    def _task(self, fn: Callable[..., Any]) -> Any:
        remote = self._remote.get(fn)
        if remote is None:
            # max_retries: a task whose worker process dies is run again (tasks are pure functions of
            # their seeds, so the rerun gives the same result); a Python exception is not retried.
            options: dict[str, Any] = {"max_retries": 3}
            marker = os.environ.get(CRASH_ONCE_ENV)
            if marker:  # the test hook must reach workers that the runtime started before it was set
                options["runtime_env"] = {"env_vars": {CRASH_ONCE_ENV: marker}}
            remote = self._ray.remote(fn).options(**options)
            self._remote[fn] = remote
        return remote

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        remote = self._task(fn)
        limit = max(2, self.window * self.parallelism)
        pending: deque[Any] = deque()
        todo = iter(items)
        try:
            for item in todo:
                pending.append(remote.remote(item))
                if len(pending) >= limit:
                    yield self._ray.get(pending.popleft())
            while pending:
                yield self._ray.get(pending.popleft())
        finally:
            for ref in pending:  # interrupted: stop what is still queued or running
                self._ray.cancel(ref, force=True)

    def close(self) -> None:
        if self.started:
            self._ray.shutdown()
            self.started = False


def make_backend(workers: int | None, ray_address: str | None) -> Backend:
    """``--ray`` (``ray_address`` ``""`` for a local runtime of ``workers`` CPUs, default all), else
    ``--workers``: a process pool, or this process for one worker."""
    if ray_address is not None:
        return RayCluster(address=ray_address or None, num_cpus=None if ray_address else workers)
    if workers is not None and workers > 1:
        return ProcessPool(workers)
    return Serial()


__all__ = [
    "CRASH_ONCE_ENV",
    "MANIFEST",
    "MANIFEST_FORMAT",
    "RAY_INSTALL",
    "ArenaTask",
    "Backend",
    "ProcessPool",
    "RayCluster",
    "RayMissing",
    "Serial",
    "SimResult",
    "SimTask",
    "import_ray",
    "make_backend",
    "plan_arena",
    "plan_sim",
    "prepare_shards",
    "record_line",
    "run_arena_task",
    "run_sim_task",
    "shard_name",
    "task_size",
    "write_manifest",
]
