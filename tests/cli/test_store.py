"""`moonshot store`: its options, its errors as a person sees them, the summary it prints."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from moonshot.bots.random import RandomBot
from moonshot.cli.main import main
from moonshot.cli.store import parse_since
from moonshot.core.variants import find_variant
from moonshot.runtime.table import BotSeat, Table
from moonshot.store import Store, StoreRecorder


def test_since_takes_dates_times_and_spans() -> None:
    now = datetime(2026, 12, 7, 6, 0, tzinfo=UTC)
    assert parse_since("7d", now) == now - timedelta(days=7)
    assert parse_since("12h", now) == now - timedelta(hours=12)
    assert parse_since("30m", now) == now - timedelta(minutes=30)
    assert parse_since("2026-12-01", now) == datetime(2026, 12, 1, tzinfo=UTC)
    assert parse_since("2026-12-01T08:00+01:00", now) == datetime(2026, 12, 1, 7, tzinfo=UTC)
    with pytest.raises(click.BadParameter, match="neither a date"):
        parse_since("yesterday", now)


async def one_game(url: str) -> None:
    store = await Store.open(url)
    rec = StoreRecorder(store)
    rec.start()
    t = Table(
        find_variant("standard"), [BotSeat(RandomBot(), random.Random(s)) for s in range(4)], seed=1, recorder=rec
    )
    t.start()
    await t.done
    await rec.close()
    await store.close()


def test_backup_and_restore_say_what_they_copied_and_refuse_to_overwrite(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'g.db'}"
    asyncio.run(one_game(db))
    runner = CliRunner()
    copy = tmp_path / "copy.db"
    result = runner.invoke(main, ["store", "backup", str(copy), "--db", db, "-q"])
    assert result.exit_code == 0, result.output
    assert f"backed up {copy}: 1 games (1 finished)" in result.output and "SQLite online backup" in result.output
    result = runner.invoke(main, ["store", "backup", str(copy), "--db", db, "-q"])
    assert result.exit_code == 1 and "exists: give --force to overwrite it" in result.output
    result = runner.invoke(main, ["store", "restore", str(copy), "--db", db, "-q"])
    assert result.exit_code == 1 and "already holds 1 games: give --force" in result.output
    target = tmp_path / "new.db"
    result = runner.invoke(main, ["store", "restore", str(copy), "--db", f"sqlite:///{target}", "-q"])
    assert result.exit_code == 0 and f"restored {target}: 1 games (1 finished)" in result.output


def test_missing_files_and_bad_urls_are_one_line_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["store", "backup", str(tmp_path / "c.db"), "--db", f"sqlite:///{tmp_path / 'no.db'}"])
    assert result.exit_code == 1 and "no game store at" in result.output
    result = runner.invoke(
        main, ["store", "restore", str(tmp_path / "none.db"), "--db", f"sqlite:///{tmp_path / 'x.db'}"]
    )
    assert result.exit_code == 1 and "no backup at" in result.output
    result = runner.invoke(main, ["store", "backup", str(tmp_path / "c.db"), "--db", "mysql://x/y"])
    assert result.exit_code == 2 and "unknown database" in result.output
    result = runner.invoke(main, ["store", "backup", str(tmp_path / "nodir" / "c.db"), "--db", "sqlite:///x.db"])
    assert result.exit_code == 1
