"""The systemd units in deploy/systemd: `systemd-analyze verify` finds nothing to say about them
(a bad one is caught), and the backup unit's commands, run as systemd would run them, write a
dated backup and prune the old ones."""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from moonshot.bots.random import RandomBot
from moonshot.core.variants import find_variant
from moonshot.runtime.table import BotSeat, Table
from moonshot.store import Store, StoreRecorder

ROOT = Path(__file__).resolve().parents[2]
UNITS = ROOT / "deploy" / "systemd"
VENV = Path(sys.executable).parent.parent  # the venv running the tests: its bin/moonshot


def localised(tmp_path: Path) -> Path:
    """The units with the install path pointed at this checkout's venv (verify checks it exists)."""
    out = tmp_path / "units"
    out.mkdir()
    for unit in UNITS.iterdir():
        (out / unit.name).write_text(unit.read_text().replace("/opt/moonshot/.venv", str(VENV)))
    return out


def verify(units: Path, *names: str) -> subprocess.CompletedProcess[str]:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is missing (Debian: apt-get install systemd)")
    return subprocess.run(
        [analyze, "verify", *(f"./{n}" for n in names)], cwd=units, capture_output=True, text=True, check=False
    )


def test_the_units_verify_cleanly(tmp_path: Path) -> None:
    units = localised(tmp_path)
    done = verify(units, "moonshot.service", "moonshot-backup.service", "moonshot-backup.timer")
    assert done.returncode == 0 and done.stdout.strip() == "" and done.stderr.strip() == "", done.stderr


def test_verify_would_catch_a_broken_unit(tmp_path: Path) -> None:
    units = localised(tmp_path)
    unit = units / "moonshot.service"
    unit.write_text(unit.read_text().replace("Restart=on-failure", "Restart=sometimes"))
    assert "restart specifier" in verify(units, "moonshot.service").stderr
    unit.write_text(unit.read_text().replace(str(VENV), "/nonexistent"))
    assert verify(units, "moonshot.service").returncode != 0


def test_the_server_unit_runs_moonshot_serve_from_the_venv_hardened() -> None:
    text = (UNITS / "moonshot.service").read_text()
    assert "ExecStart=/opt/moonshot/.venv/bin/moonshot serve " in text and "make" not in text.split("ExecStart=")[1]
    for line in ("User=moonshot", "Restart=on-failure", "NoNewPrivileges=yes", "ProtectSystem=strict", "UMask=0077"):
        assert f"\n{line}\n" in text


def systemd_command(line: str) -> str:
    """An Exec line's shell text as systemd hands it to /bin/sh (``$$`` -> ``$``, ``%%`` -> ``%``)."""
    text = line.split("=", 1)[1]
    assert text.startswith("/bin/sh -c '") and text.endswith("'")
    return text[len("/bin/sh -c '") : -1].replace("$$", "$").replace("%%", "%")


def test_the_backup_unit_writes_a_dated_copy_and_prunes_old_ones(tmp_path: Path) -> None:
    db = tmp_path / "moonshot.db"

    async def one_game() -> None:
        store = await Store.open(f"sqlite:///{db}")
        rec = StoreRecorder(store)
        rec.start()
        seats = [BotSeat(RandomBot(), random.Random(s)) for s in range(4)]
        t = Table(find_variant("standard"), seats, seed=1, recorder=rec)
        t.start()
        await t.done
        await rec.close()
        await store.close()

    asyncio.run(one_game())
    backups = tmp_path / "backups"
    backups.mkdir()
    old = backups / "moonshot-2026-01-01.db"
    old.write_text("an old copy")
    stamp = time.time() - 20 * 86400
    os.utime(old, (stamp, stamp))
    recent = backups / "moonshot-2026-12-01.db"
    recent.write_text("a recent copy")
    text = (UNITS / "moonshot-backup.service").read_text().replace("/opt/moonshot/.venv", str(VENV))
    env = {**os.environ, "MOONSHOT_DB": f"sqlite:///{db}", "BACKUP_DIR": str(backups), "KEEP_DAYS": "14"}
    for key in ("ExecStart=", "ExecStartPost="):
        (line,) = [ln for ln in text.splitlines() if ln.startswith(key)]
        done = subprocess.run(["/bin/sh", "-c", systemd_command(line)], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    today = backups / f"moonshot-{datetime.now(UTC):%Y-%m-%d}.db"
    c = sqlite3.connect(today)
    assert c.execute("SELECT count(*) FROM games WHERE status = 'finished'").fetchone()[0] == 1
    c.close()
    assert not old.exists() and recent.exists()
