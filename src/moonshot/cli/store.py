"""``moonshot store``: back up a running server's game store, restore one into a stopped
server's, and export finished games as public records (the work is :mod:`moonshot.store.backup`'s
and :mod:`moonshot.store.export`'s; this module parses options and reports)."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any

import click

from moonshot.cli.commands import DB_HELP, DEFAULT_DB, bad_db, store_url_option
from moonshot.cli.progress import err_console, progress_bar

DB_OPTION = click.option(
    "--db", default=DEFAULT_DB, show_default=True, callback=store_url_option, metavar="URL", help=DB_HELP
)
_DURATION = re.compile(r"^(\d+)\s*([dhm])$")


@click.group("store", context_settings={"help_option_names": ["-h", "--help"]})
def store_cmd() -> None:
    """Back up, restore and export the game store (docs/server.md, "Backups and exports")."""


def _copy(verb: str, quiet: bool, work: Any) -> None:
    """Run ``work(progress)`` under a progress bar of pages copied, then print its summary."""
    from moonshot.store import StoreError

    with progress_bar(quiet) as bar:
        task = bar.add_task(verb, total=None, status="pages")

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        try:
            summary = work(progress)
        except StoreError as e:
            raise click.ClickException(str(e)) from None
    click.echo(summary.line(verb.replace("ing", "ed")))


@store_cmd.command("backup")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@DB_OPTION
@click.option("--force", is_flag=True, help="Overwrite PATH if it exists.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar (the summary line is still printed).")
def backup_cmd(path: Path, db: str, force: bool, quiet: bool) -> None:
    """Copy the game store into PATH while the server runs.

    SQLite: the online backup API copies one consistent snapshot while the server goes on writing
    (the copy is checked, made 0600 and renamed into place). PostgreSQL: pg_dump in its custom
    format (restore it with `moonshot store restore`, or pg_restore)."""
    from moonshot.store.backup import backend_of, backup

    if backend_of(db) == "postgresql":
        err_console.print("PostgreSQL store: running pg_dump --format=custom")
    _copy("backing up", quiet, lambda progress: backup(db, path, force, progress))


@store_cmd.command("restore")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@DB_OPTION
@click.option("--force", is_flag=True, help="Replace the games the target store already holds.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar (the summary line is still printed).")
def restore_cmd(path: Path, db: str, force: bool, quiet: bool) -> None:
    """Put the backup PATH in place of the store --db of a stopped server.

    It refuses a store that is in use: for SQLite, a process holding the file's SQLite locks (a
    running server always does); for PostgreSQL, another session connected to the database. A
    store that already holds games is replaced only with --force. Start the server on it
    afterwards: it resumes the games that were unfinished when the backup was taken."""
    from moonshot.store.backup import backend_of, restore

    if backend_of(db) == "postgresql":
        err_console.print("PostgreSQL store: running pg_restore --clean --single-transaction")
    _copy("restoring", quiet, lambda progress: restore(db, path, force, progress))


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """``--since``: an ISO date or time (UTC unless it says), or a span back from now: 7d, 12h, 30m."""
    now = now or datetime.now(UTC)
    m = _DURATION.match(text.strip())
    if m:
        n, unit = int(m.group(1)), m.group(2)
        return now - timedelta(**{{"d": "days", "h": "hours", "m": "minutes"}[unit]: n})
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise click.BadParameter(
            f"{text!r} is neither a date (2026-12-01, 2026-12-01T08:00) nor a span (7d, 12h, 30m)",
            param_hint="'--since'",
        ) from None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


@store_cmd.command("export")
@DB_OPTION
@click.option(
    "--out",
    default="-",
    show_default=True,
    metavar="FILE|-",
    help="Where the JSON lines go (-: standard output). An existing FILE is overwritten.",
)
@click.option("--since", default=None, metavar="WHEN", help="Only games finished since WHEN: 2026-12-01, 7d, 12h.")
def export_cmd(db: str, out: str, since: str | None) -> None:
    """Finished games as JSON lines, one public record a line: what GET /api/games/<id> shows and
    `moonshot verify --record` checks (revealed seed and salt, actions, result; no credential).
    A tournament's games are left out until the tournament is over."""
    start = parse_since(since) if since is not None else None
    if out == "-":
        n, held = asyncio.run(_export(db, sys.stdout, start))
    else:
        with open(out, "w", encoding="utf-8") as f:
            n, held = asyncio.run(_export(db, f, start))
    note = f", {held} tournament games held back until their tournament is over" if held else ""
    err_console.print(f"exported {n} finished games{note}")


async def _export(db: str, sink: IO[str], since: datetime | None) -> tuple[int, int]:
    from moonshot.protocols.kierki.gamefile import parse_game
    from moonshot.runtime.tournament import KEY_PREFIX
    from moonshot.store import Store, StoreError, register_game_file_parser
    from moonshot.store.export import finished_games, public_record, tournament_of

    register_game_file_parser(parse_game)  # records that keep a Kierki game file's text
    try:
        store = await Store.open(db, create=False)
    except StoreError as e:
        raise bad_db(e) from None
    n = held = 0
    over: dict[str, bool] = {}
    try:
        async for rec in finished_games(store, since):
            tid = tournament_of(rec)
            if tid is not None:
                if tid not in over:
                    state = await store.get_value(KEY_PREFIX + tid)
                    over[tid] = isinstance(state, dict) and state.get("status") in ("finished", "failed")
                if not over[tid]:
                    held += 1
                    continue
            sink.write(json.dumps(public_record(rec), separators=(",", ":")) + "\n")
            n += 1
    finally:
        await store.close()
    return n, held


__all__ = ["backup_cmd", "export_cmd", "parse_since", "restore_cmd", "store_cmd"]
