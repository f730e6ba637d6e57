"""Where a game store is and whether it can be used: :func:`store_url` turns what people type
(``sqlite:///PATH``, ``postgresql://…``, ``postgres://…``) into the async-driver form SQLAlchemy
needs, :func:`sqlite_path` finds a SQLite URL's file, and :class:`StoreError` says in one line why a
store cannot be used (unknown scheme, missing driver, unreachable server, unwritable path): the CLI
shows it as a ``--db`` usage error. A SQLite file, and its ``-wal`` and ``-shm`` files, are private
to the user (0600): they hold every running game's seed, so every hand.

This module opens no connection and reads or writes no row (:mod:`moonshot.store.repository` does).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import socket
import stat
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError

log = logging.getLogger("moonshot.store")

DEFAULT_URL = "sqlite+aiosqlite:///moonshot.db"
PG_CONNECT_TIMEOUT = 10.0  # seconds: an unreachable PostgreSQL server is reported, not waited on for a minute


class StoreError(Exception):
    """A game store that cannot be used; the message says why in one line (shown for ``--db``)."""


# backend -> (the async driver moonshot uses, where it comes from)
_ASYNC_DRIVERS = {
    "sqlite": ("aiosqlite", "a moonshot dependency: reinstall moonshot"),
    "postgresql": ("asyncpg", "pip install 'moonshot[postgres]'"),
}
_BACKEND_ALIASES = {"sqlite": "sqlite", "postgresql": "postgresql", "postgres": "postgresql"}


def store_url(url: str) -> str:
    """The URL with its async driver: ``sqlite:///F`` -> ``sqlite+aiosqlite:///F``,
    ``postgresql://…`` and ``postgres://…`` -> ``postgresql+asyncpg://…``; explicit async forms
    are kept. Raises :class:`StoreError` for anything else (no I/O is done)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        hint = f"; for a SQLite file write sqlite:///{url}" if url else ""
        raise StoreError(f"{url!r} is not a database URL (expected sqlite:///FILE or postgresql://USER@HOST/DB){hint}")
    backend_name, _, driver = scheme.lower().partition("+")
    backend = _BACKEND_ALIASES.get(backend_name)
    if backend is None:
        raise StoreError(f"unknown database {scheme!r} in {shown(url)}: moonshot stores games in sqlite or postgresql")
    wanted, source = _ASYNC_DRIVERS[backend]
    if driver and driver != wanted:
        raise StoreError(f"driver {driver!r} is not supported: {backend} runs on {wanted} ({backend}+{wanted}://…)")
    if importlib.util.find_spec(wanted) is None:
        raise StoreError(f"{backend} needs the {wanted} driver, which is not installed: {source}")
    full = f"{backend}+{wanted}://{rest}"
    try:
        make_url(full)
    except (ArgumentError, ValueError) as e:  # ValueError: a port that is not a number
        raise StoreError(f"cannot read the database URL {scheme}://…: {e}") from None
    return full


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL (None: not SQLite, or an in-memory database)."""
    u = make_url(url)
    if u.get_backend_name() != "sqlite" or not u.database or u.database == ":memory:":
        return None
    if u.query.get("uri") or u.database.startswith("file:"):
        return None  # SQLite URI filenames: the path is SQLite's to resolve
    return Path(u.database)


def shown(url: str) -> str:
    """The URL for messages, password hidden."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "the given URL"


def prepare_sqlite_file(path: Path, create: bool) -> None:
    """Create the file 0600 before SQLite opens it (SQLite would create it 0644, and gives its
    -wal/-shm files the database file's mode), or check an existing one; tighten older files."""
    if path.is_dir():
        raise StoreError(f"{path} is a directory, not a database file")
    if not path.exists():
        if not create:
            raise StoreError(f"no game store at {path}: the file does not exist")
        parent = path.parent
        if not parent.is_dir():
            why = "is not a directory" if parent.exists() else "does not exist"
            raise StoreError(f"cannot create {path}: {parent} {why}")
        try:
            os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
        except FileExistsError:
            pass  # created meanwhile by another process: checked below like any existing file
        except OSError as e:
            raise StoreError(f"cannot create {path}: {e.strerror or e}") from None
    if not os.access(path, os.R_OK | os.W_OK):
        raise StoreError(f"{path} is not readable and writable by this user")
    if not os.access(path.parent, os.W_OK | os.X_OK):
        raise StoreError(f"cannot write in {path.parent}: SQLite keeps its -wal and -shm files beside {path.name}")
    make_private(path)


def make_private(path: Path) -> None:
    """Take group and other permissions off the database and its companion files (ours only)."""
    for p in (path, *(path.with_name(path.name + suffix) for suffix in ("-wal", "-shm", "-journal"))):
        try:
            st = p.stat()
            if st.st_uid == os.getuid() and st.st_mode & 0o077:
                os.chmod(p, stat.S_IMODE(st.st_mode) & 0o600)
        except FileNotFoundError:
            continue
        except OSError as e:
            log.warning("event=store_chmod_failed path=%s error=%s", p, e)


def why_failed(e: BaseException) -> str:
    """One line saying why opening failed (the driver's own error, not SQLAlchemy's wrapping)."""
    orig: BaseException = e.orig if isinstance(e, DBAPIError) and e.orig is not None else e
    while orig.__cause__ is not None:  # SQLAlchemy's adapters wrap the driver's own exception
        orig = orig.__cause__
    if isinstance(orig, ConnectionRefusedError):
        return "connection refused (is the server running, on that host and port?)"
    if isinstance(orig, TimeoutError):
        return f"no answer within {PG_CONNECT_TIMEOUT:g} s"
    if isinstance(orig, socket.gaierror):
        return f"cannot resolve the host name ({orig.strerror or orig})"
    text = str(orig).strip().splitlines()
    return f"{type(orig).__name__}: {text[0]}" if text else type(orig).__name__
