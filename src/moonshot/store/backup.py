"""Backups and restores of the game store with the database's own consistent-copy mechanism.

SQLite: the online backup API (``sqlite3.Connection.backup``) copies the file page by page from
one read transaction, so the copy is the store as it was at one instant while the server goes on
writing (WAL mode: a reader never blocks the writer). The copy is written beside its destination
(0600), checked (``PRAGMA quick_check``) and renamed into place, so a half-written backup never
sits at the destination. PostgreSQL: ``pg_dump --format=custom`` and ``pg_restore``.

A restore only goes into a store no server has open: for SQLite, every connection holds a shared
POSIX lock on the ``-shm`` file (and on the database file while it reads); a lock this process
cannot take means a process has the store open. For PostgreSQL, another session connected to the
target database means the same. A target that already holds games is replaced only when asked
(``force``). This module starts no server and imports no protocol; the ``moonshot store`` commands
(:mod:`moonshot.cli.store`) are its interface.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.engine import make_url

from moonshot.store import StoreError, sqlite_path, store_url

Progress = Callable[[int, int], None]  # (pages copied, pages in all)

STEP_PAGES = 1024  # pages a backup step copies (4 MiB at SQLite's default page size)
# SQLite's unix VFS locks: a reader's shared lock on the database file covers SHARED_FIRST..+510;
# every connection in WAL mode holds a shared lock on the -shm file's "DMS" byte while it is open
_SHARED_FIRST = 0x40000000 + 2
_SHARED_SIZE = 510
_SHM_DMS = 128


class BackupError(StoreError):
    """A backup or restore that cannot be done; the message says why in one line."""


@dataclass
class Summary:
    """What a backup or a restore copied: games by status, bytes, seconds."""

    path: Path
    backend: str  # sqlite | postgresql
    games: dict[str, int] = field(default_factory=dict)
    size: int = 0
    seconds: float = 0.0

    def line(self, verb: str) -> str:
        total = sum(self.games.values())
        parts = ", ".join(f"{n} {status}" for status, n in sorted(self.games.items())) or "none"
        how = "pg_dump custom format" if self.backend == "postgresql" else "SQLite online backup"
        return f"{verb} {self.path}: {total} games ({parts}), {_size(self.size)} in {self.seconds:.1f} s ({how})"


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


def backend_of(url: str) -> str:
    """``sqlite`` or ``postgresql`` for a store URL (as :func:`store_url` takes it)."""
    return make_url(store_url(url)).get_backend_name()


def _sqlite_file(url: str) -> Path:
    path = sqlite_path(store_url(url))
    if path is None:
        raise BackupError("an in-memory SQLite store cannot be backed up or restored: give sqlite:///FILE")
    return path


# ----------------------------------------------------------------------------- SQLite
def game_counts_sqlite(path: Path) -> dict[str, int]:
    """Games by status in a SQLite store file (read-only)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {str(s): int(n) for s, n in conn.execute("SELECT status, count(*) FROM games GROUP BY status")}
    except sqlite3.DatabaseError as e:
        raise BackupError(f"{path} is not a moonshot game store: {e}") from None
    finally:
        conn.close()


def sqlite_in_use(path: Path) -> str | None:
    """Why the SQLite store at ``path`` looks open by a process (None: nobody has it open).

    Every SQLite connection to a WAL database holds a shared lock on the ``-shm`` file's DMS byte
    while it is open, and a reader holds one on the database file's shared range: if this process
    cannot take a write lock there, someone has the store open. The locks taken here are released
    at once. (POSIX locks are per process: the caller must not have the store open itself.)"""
    for name, start, length, what in (
        (path.name + "-shm", _SHM_DMS, 1, "its -shm file is locked by an open connection"),
        (path.name, _SHARED_FIRST, _SHARED_SIZE, "a process is reading or writing it"),
    ):
        target = path.with_name(name)
        try:
            fd = os.open(target, os.O_RDWR)
        except FileNotFoundError:
            continue
        except OSError as e:
            return f"cannot check {target} for other users: {e.strerror or e}"
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, length, start, os.SEEK_SET)
        except OSError:
            return what
        else:
            fcntl.lockf(fd, fcntl.LOCK_UN, length, start, os.SEEK_SET)
        finally:
            os.close(fd)
    return None


@contextlib.contextmanager
def _private_temp(dest: Path) -> Iterator[Path]:
    """A new empty 0600 file beside ``dest`` (same file system: renamed into place at the end),
    removed on the way out if it is still there."""
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.partial")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    os.close(os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
    try:
        yield tmp
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


@contextlib.contextmanager
def _read_only(path: Path, timeout: float = 5.0) -> Iterator[sqlite3.Connection]:
    """The SQLite file ``path`` opened read-only (waiting up to ``timeout`` s on a lock), closed after."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None, timeout=timeout)
    try:
        yield conn
    finally:
        conn.close()


def _copy_sqlite(source: sqlite3.Connection, dest: Path, progress: Progress | None, step: int) -> None:
    """Copy ``source`` into a new file ``dest`` with the online backup API, then check it.

    The source's read transaction is opened first and held for the whole copy: every step then
    reads the same snapshot (WAL mode), so writes by the server neither restart nor tear it."""
    target = sqlite3.connect(dest, isolation_level=None)
    try:
        source.execute("BEGIN")
        source.execute("SELECT count(*) FROM sqlite_master").fetchone()  # starts the read transaction
        try:
            source.backup(
                target,
                pages=step,
                progress=(lambda _s, left, total: progress(total - left, total)) if progress else None,
            )
        finally:
            source.execute("COMMIT")
        ok = target.execute("PRAGMA quick_check").fetchone()
        if not ok or ok[0] != "ok":
            raise BackupError(f"the copy failed its integrity check: {ok[0] if ok else 'no answer'}")
        target.execute("PRAGMA journal_mode=WAL").fetchone()  # what the store runs in
    finally:
        target.close()


def backup_sqlite(
    url: str, dest: Path, force: bool = False, progress: Progress | None = None, step: int = STEP_PAGES
) -> Summary:
    """A consistent copy of the SQLite store at ``url`` in the file ``dest``, taken while a
    server may be writing it. ``dest`` is replaced only with ``force``."""
    source_path = _sqlite_file(url)
    if not source_path.is_file():
        raise BackupError(f"no game store at {source_path}: the file does not exist")
    _check_destination(dest, force)
    start = time.perf_counter()
    with _private_temp(dest) as tmp:
        try:
            with _read_only(source_path, timeout=30) as source:
                _copy_sqlite(source, tmp, progress, step)
            games = game_counts_sqlite(tmp)
            os.replace(tmp, dest)
        except sqlite3.Error as e:
            raise BackupError(f"cannot back up {source_path}: {e}") from None
    return Summary(dest, "sqlite", games, dest.stat().st_size, time.perf_counter() - start)


def restore_sqlite(url: str, source: Path, force: bool = False, progress: Progress | None = None) -> Summary:
    """Put the backup ``source`` in place of the SQLite store at ``url``, which no process may
    have open; a store that holds games is replaced only with ``force``."""
    target = _sqlite_file(url)
    if not source.is_file():
        raise BackupError(f"no backup at {source}: the file does not exist")
    games = game_counts_sqlite(source)  # also: it is a moonshot store
    if target.parent and not target.parent.is_dir():
        raise BackupError(f"cannot restore into {target}: {target.parent} is not a directory")
    busy = sqlite_in_use(target)
    if busy is not None:
        raise BackupError(f"{target} is in use ({busy}): stop the server first")
    if target.exists() and not force:
        held = sum(game_counts_sqlite(target).values()) if target.stat().st_size else 0
        if held:
            raise BackupError(f"{target} already holds {held} games: give --force to replace them")
    start = time.perf_counter()
    with _private_temp(target) as tmp:
        try:
            with _read_only(source) as backup:
                _copy_sqlite(backup, tmp, progress, STEP_PAGES)
            # a WAL left by the store being replaced would be replayed onto the restored file
            for suffix in ("-wal", "-shm", "-journal"):
                with contextlib.suppress(FileNotFoundError):
                    target.with_name(target.name + suffix).unlink()
            os.replace(tmp, target)
        except sqlite3.Error as e:
            raise BackupError(f"cannot restore {source}: {e}") from None
    return Summary(target, "sqlite", games, target.stat().st_size, time.perf_counter() - start)


def _check_destination(dest: Path, force: bool) -> None:
    if dest.is_dir():
        raise BackupError(f"{dest} is a directory: give the backup's file name")
    if not dest.parent.is_dir():
        raise BackupError(f"cannot write {dest}: {dest.parent} is not a directory")
    if dest.exists() and not force:
        raise BackupError(f"{dest} exists: give --force to overwrite it")


# ----------------------------------------------------------------------------- PostgreSQL
def _libpq(url: str) -> tuple[str, dict[str, str]]:
    """The libpq URL of a store URL without its password, and the environment that carries the
    password (``PGPASSWORD``): a password on a command line is visible to every user in ``ps``."""
    u = make_url(store_url(url))
    env = dict(os.environ)
    if u.password is not None:
        env["PGPASSWORD"] = str(u.password)
    plain = u.set(drivername="postgresql", password=None)
    return plain.render_as_string(hide_password=False), env


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise BackupError(f"{name} is not installed (Debian: apt-get install postgresql-client)")
    return path


def _run(argv: list[str], env: Mapping[str, str]) -> None:
    done = subprocess.run(argv, env=dict(env), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        lines = [ln for ln in done.stderr.strip().splitlines() if ln.strip()]
        why = lines[-1] if lines else f"exit status {done.returncode}"
        raise BackupError(f"{Path(argv[0]).name} failed: {why}")


def _psql_rows(url: str, sql: str) -> list[list[str]]:
    """Rows of one query through ``psql`` (tab-separated), so this module needs no async driver."""
    conninfo, env = _libpq(url)
    done = subprocess.run(
        [_tool("psql"), "-X", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-d", conninfo, "-c", sql],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        lines = [ln for ln in done.stderr.strip().splitlines() if ln.strip()]
        raise BackupError(f"psql failed: {lines[-1] if lines else done.returncode}")
    return [line.split("\t") for line in done.stdout.splitlines() if line]


def game_counts_postgres(url: str) -> dict[str, int]:
    rows = _psql_rows(
        url,
        "SELECT status, count(*) FROM games GROUP BY status",
    )
    return {r[0]: int(r[1]) for r in rows}


def postgres_in_use(url: str) -> str | None:
    """Why the PostgreSQL database looks in use: another session is connected to it (a server
    keeps its pool of connections open while it runs)."""
    rows = _psql_rows(
        url,
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    n = int(rows[0][0]) if rows else 0
    return f"{n} other sessions are connected to it" if n else None


def _has_games_table(url: str) -> bool:
    rows = _psql_rows(url, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'games'")
    return bool(rows) and int(rows[0][0]) > 0


def backup_postgres(url: str, dest: Path, force: bool = False) -> Summary:
    """``pg_dump --format=custom`` of the store at ``url`` into ``dest`` (a consistent snapshot:
    pg_dump reads in one repeatable-read transaction while the server goes on writing)."""
    _check_destination(dest, force)
    pg_dump = _tool("pg_dump")
    conninfo, env = _libpq(url)
    start = time.perf_counter()
    games = game_counts_postgres(url) if _has_games_table(url) else {}
    with _private_temp(dest) as tmp:
        _run(
            [pg_dump, "--format=custom", "--no-owner", "--no-privileges", f"--file={tmp}", f"--dbname={conninfo}"], env
        )
        os.replace(tmp, dest)
    return Summary(dest, "postgresql", games, dest.stat().st_size, time.perf_counter() - start)


def restore_postgres(url: str, source: Path, force: bool = False) -> Summary:
    """``pg_restore`` of a ``pg_dump --format=custom`` file into the database at ``url``, in one
    transaction, dropping the store's tables first (``--clean``)."""
    if not source.is_file():
        raise BackupError(f"no backup at {source}: the file does not exist")
    pg_restore = _tool("pg_restore")
    busy = postgres_in_use(url)
    if busy is not None:
        raise BackupError(f"the database is in use ({busy}): stop the server first")
    if not force and _has_games_table(url):
        held = sum(game_counts_postgres(url).values())
        if held:
            raise BackupError(f"the database already holds {held} games: give --force to replace them")
    conninfo, env = _libpq(url)
    start = time.perf_counter()
    _run(
        [
            pg_restore,
            "--clean",
            "--if-exists",
            "--no-owner",
            "--no-privileges",
            "--single-transaction",
            f"--dbname={conninfo}",
            str(source),
        ],
        env,
    )
    return Summary(source, "postgresql", game_counts_postgres(url), source.stat().st_size, time.perf_counter() - start)


# ----------------------------------------------------------------------------- either
def backup(url: str, dest: Path, force: bool = False, progress: Progress | None = None) -> Summary:
    """Back up the store at ``url`` into ``dest`` with its backend's consistent-copy mechanism."""
    if backend_of(url) == "postgresql":
        return backup_postgres(url, dest, force)
    return backup_sqlite(url, dest, force, progress)


def restore(url: str, source: Path, force: bool = False, progress: Progress | None = None) -> Summary:
    """Restore the backup ``source`` into the (stopped) store at ``url``."""
    if backend_of(url) == "postgresql":
        return restore_postgres(url, source, force)
    return restore_sqlite(url, source, force, progress)


__all__ = [
    "BackupError",
    "Summary",
    "backend_of",
    "backup",
    "backup_postgres",
    "backup_sqlite",
    "postgres_in_use",
    "restore",
    "restore_postgres",
    "restore_sqlite",
    "sqlite_in_use",
]
