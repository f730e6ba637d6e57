"""Finished games as public records: each one verifies as `moonshot verify --record` checks it,
shows no chair's credential, and a running game or a sealed tournament game is not shown."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from moonshot.bots.random import RandomBot
from moonshot.cli.commands import verify_record
from moonshot.cli.store import export_cmd
from moonshot.core.engine import DealSpec
from moonshot.core.variants import find_variant
from moonshot.runtime.table import BotSeat, Table, TableStatus
from moonshot.store import Store, StoreRecorder
from moonshot.store.export import finished_games, public_record, tournament_of

pytestmark = pytest.mark.asyncio
RULES = find_variant("standard")


def bots(n: int) -> list[BotSeat]:
    return [BotSeat(RandomBot(), random.Random(n * 4 + s)) for s in range(4)]


async def fill(url: str) -> tuple[list[str], str]:
    """Three finished games (one on fixed deals), a tournament game and a running game."""
    store = await Store.open(url)
    rec = StoreRecorder(store, protocol="test")
    rec.start()
    done = []
    kierki = find_variant("kierki")
    deck = list(range(52))
    random.Random(3).shuffle(deck)
    hands = tuple(sum(1 << c for c in deck[13 * s : 13 * s + 13]) for s in range(4))
    deals = [DealSpec((hands[0], hands[1], hands[2], hands[3]), kind, kind % 4) for kind in range(1, 8)]
    for g, (rules, fixed) in enumerate([(RULES, None), (RULES, None), (kierki, deals)]):
        t = Table(rules, bots(g), seed=100 + g, recorder=rec, deals=fixed)
        t.credentials = ["c" * 64, None, None, None]  # type: ignore[attr-defined]
        t.start()
        assert await asyncio.wait_for(t.done, 60) is TableStatus.FINISHED
        done.append(t.id)
    sealed = Table(RULES, bots(7), seed=7, recorder=rec, meta={"tournament": "cup", "reveal_at_end": False})
    sealed.start()
    assert await asyncio.wait_for(sealed.done, 60) is TableStatus.FINISHED
    running = Table(RULES, bots(9), seed=9, recorder=rec)
    running.start()
    while len(running.game.actions) < 20:
        await asyncio.sleep(0)
    running.stop()
    await running.done
    await rec.close()
    await store.close()
    return done, sealed.id


async def test_every_exported_record_verifies_and_shows_no_credential(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'g.db'}"
    done, sealed = await fill(url)
    store = await Store.open(url, create=False)
    try:
        records = [rec async for rec in finished_games(store)]
    finally:
        await store.close()
    assert [r.id for r in records if tournament_of(r) is None] == done  # in finish order, no running game
    assert [tournament_of(r) for r in records if r.id == sealed] == ["cup"]
    for rec in records:
        data = json.loads(json.dumps(public_record(rec)))
        assert verify_record(data, None, []) == [], rec.id
        assert "credential" not in json.dumps(data)
        assert data["deal_seal"]["seed"] == str(rec.seed)


async def test_a_tampered_record_does_not_verify(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'g.db'}"
    await fill(url)
    store = await Store.open(url, create=False)
    try:
        records = [r async for r in finished_games(store)]
        rec = records[0]
    finally:
        await store.close()
    data = public_record(rec)
    data["totals"] = [0, 0, 0, 0]
    assert verify_record(data, None, []) != []


async def test_the_export_command_writes_lines_that_verify_and_holds_back_a_sealed_tournament(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'g.db'}"
    done, _ = await fill(url)
    out = tmp_path / "games.jsonl"
    result = await asyncio.to_thread(CliRunner().invoke, export_cmd, ["--db", url, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "exported 3 finished games, 1 tournament games held back" in result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [d["id"] for d in lines] == done and all(verify_record(d, None, []) == [] for d in lines)
    # nothing finished in the future: --since filters by finish time
    result = await asyncio.to_thread(CliRunner().invoke, export_cmd, ["--db", url, "--since", "2999-01-01"])
    assert result.exit_code == 0 and "exported 0 finished games" in result.output
    result = await asyncio.to_thread(CliRunner().invoke, export_cmd, ["--db", url, "--since", "1h"])
    assert result.exit_code == 0 and "exported 3 finished games" in result.output
    result = await asyncio.to_thread(CliRunner().invoke, export_cmd, ["--db", url, "--since", "last week"])
    assert result.exit_code == 2 and "neither a date" in result.output
