"""The server app: stop mid-game, restore from the store, bots, logs."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

import moonshot
from moonshot.protocols.sessions.client import Client, RandomPlayer
from moonshot.server.app import ServerApp, engine_build
from moonshot.server.config import ServerConfig, bot_factory
from moonshot.server.logs import KeyValueFormatter


@pytest.mark.asyncio
async def test_a_stopped_game_is_restored_by_the_next_app_and_completes(tmp_path: Path) -> None:
    db = f"sqlite+aiosqlite:///{tmp_path / 'g.db'}"
    cfg = ServerConfig(sessions_port=0, db_url=db, bot="random", fill_wait=0.05, restore_grace=0.05)
    app = ServerApp(cfg)
    await app.start()
    assert app.sessions_port
    client = await Client.connect("127.0.0.1", app.sessions_port)
    game = asyncio.create_task(client.play(RandomPlayer()))  # three server bots join after fill_wait
    while not app.tables or next(iter(app.tables.values())).version < 100:
        await asyncio.sleep(0.01)
    (table,) = app.tables.values()
    await app.stop()
    with pytest.raises(ConnectionError):
        await asyncio.wait_for(game, 10)
    await client.close()

    again = ServerApp(cfg)
    await again.start()
    try:
        assert list(again.tables) == [table.id] and again.restored == 1 and app.restored == 0
        restored = again.tables[table.id]
        assert restored.game.actions[: len(table.game.actions)] == table.game.actions
        # the restored chairs keep their ids and credentials: only the owner's secret resumes
        ((sid, secret),) = client.session_secrets.items()
        mine = next(i for i, n in enumerate(restored.names) if n.endswith(f"({sid})"))
        assert restored.credentials == table.credentials and restored.credentials[mine] is not None
        assert secret not in str(await again.store.load(table.id))  # type: ignore[union-attr]
        assert again.find_chair(sid, "guess") is None
        assert again.find_chair(sid, secret) == (restored, mine)
        bots = [i for i in range(4) if i != mine]
        assert all(restored.credentials[i] is None for i in bots)
        for i in bots:  # a bot chair is never resumable, whatever the secret
            bot_id = int(restored.names[i][restored.names[i].rindex("(") + 1 : -1])
            assert again.find_chair(bot_id, secret) is None and bot_id in again.sessions.reserved  # type: ignore[union-attr]
        assert await asyncio.wait_for(restored.done, 30) is not None
        assert again.finished == 1
        await again.recorder.flush()  # type: ignore[union-attr]
        rows = await again.store.list_games("finished")  # type: ignore[union-attr]
        assert [r["id"] for r in rows] == [table.id]
    finally:
        await again.stop()


@pytest.mark.asyncio
async def test_find_chair_only_offers_empty_chairs(tmp_path: Path) -> None:
    app = ServerApp(ServerConfig(sessions_port=None, db_url=None, bot="random"))
    await app.start()
    assert app.find_chair(3, "secret") is None
    await app.stop()


def test_bot_factory() -> None:
    assert bot_factory("random")().name == "random"
    with pytest.raises(ValueError):
        bot_factory("no-such-bot")


def test_bot_factory_refuses_an_unknown_passer_and_falls_back_only_for_a_missing_extra(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from moonshot.bots.registry import BOT_REGISTRY

    for spec in ("heuristic --pass-by oracle", "heuristic --pass-by serach"):  # arena-only; a typo
        with pytest.raises(ValueError, match="unknown bot"):
            bot_factory(spec)
    # a registry bot whose module this installation lacks (an extra not installed): random, logged
    monkeypatch.setitem(BOT_REGISTRY, "ghost", "moonshot.bots.no_such_module:Ghost")
    with caplog.at_level(logging.WARNING):
        assert bot_factory("ghost")().name == "random"
        assert bot_factory("heuristic --pass-by ghost")().name == "random"
    assert "event=bot_unavailable" in caplog.text


def test_bot_factory_takes_a_spec_with_options() -> None:
    bot = bot_factory("search --simulations 20")()
    assert bot.spec == "search --simulations 20"  # type: ignore[attr-defined]
    assert bot_factory("search --simulations 20")() is not bot  # a fresh bot each time
    with pytest.raises(ValueError, match="no_such"):
        bot_factory("heuristic --no-such 1")
    with pytest.raises(ValueError, match="--option"):
        bot_factory("heuristic 20")
    # an option of the wrong kind is refused when the server starts, not at the bot's first card
    for spec in ("search --think-ms abc", "search --think-ms 0", "search --simulations 2.5", "search --clock x"):
        with pytest.raises(ValueError):
            bot_factory(spec)


def test_logs_are_key_value() -> None:
    rec = logging.LogRecord("moonshot.table", logging.INFO, __file__, 1, "table=%s event=%s", ("t1", "finished"), None)
    line = KeyValueFormatter().format(rec)
    assert "level=info logger=moonshot.table table=t1 event=finished" in line and line.startswith("ts=")


def test_the_server_says_how_its_engine_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(moonshot, "compiled_modules", lambda: frozenset({"moonshot.core.engine"}))
    assert engine_build() == "compiled with mypyc"
    monkeypatch.setattr(moonshot, "compiled_modules", frozenset)
    monkeypatch.setenv("MOONSHOT_PURE_PYTHON", "1")
    assert engine_build() == "pure Python (MOONSHOT_PURE_PYTHON is set)"
    monkeypatch.delenv("MOONSHOT_PURE_PYTHON")
    assert "`moonshot compile`" in engine_build()


@pytest.mark.asyncio
async def test_a_kierki_game_is_restored_with_the_kierki_port_only_and_given_up_when_nobody_comes(
    tmp_path: Path,
) -> None:
    import dataclasses

    db = f"sqlite+aiosqlite:///{tmp_path / 'g.db'}"
    cfg = ServerConfig(sessions_port=None, db_url=db, kierki_port=0, kierki_abandon=0.3)
    app = ServerApp(cfg)
    await app.start()
    assert app.kierki_port and app.describe()["kierki"] == f"tcp://127.0.0.1:{app.kierki_port}"
    conns = [await asyncio.open_connection("127.0.0.1", app.kierki_port) for _ in range(4)]
    for (_, w), s in zip(conns, "NESW"):
        w.write(f"IAM{s}\r\n".encode())
    for r, _ in conns:
        assert (await asyncio.wait_for(r.readline(), 5)).startswith(b"DEAL")
    (table,) = app.tables.values()
    await app.stop()  # the game stays running in the store
    for r, w in conns:
        assert await asyncio.wait_for(r.read(), 5) is not None
        w.close()

    without = ServerApp(dataclasses.replace(cfg, kierki_port=None))
    await without.start()
    assert without.restored == 0 and not without.tables  # kept for a server that speaks Kierki
    await without.stop()

    again = ServerApp(cfg)
    await again.start()
    try:
        assert list(again.tables) == [table.id] and again.restored == 1
        restored = again.tables[table.id]
        offered = [r for r in again.lobby.running("kierki") if r.table.id == table.id]  # the lobby's to offer
        assert len(offered) == 1 and offered[0].seats == [None, None, None, None]  # every seat empty
        assert restored.game.actions == table.game.actions
        await asyncio.wait_for(asyncio.shield(restored.done), 5)  # nobody came back within 0.3 s
        await again.recorder.flush()  # type: ignore[union-attr]
        assert [r["id"] for r in await again.store.list_games("aborted")] == [table.id]  # type: ignore[union-attr]
    finally:
        await again.stop()


@pytest.mark.asyncio
@pytest.mark.timeout(600)
async def test_trend_players_take_their_chairs_back_in_a_game_restored_after_a_restart(tmp_path: Path) -> None:
    from moonshot.protocols.trend.server import credential
    from trend_sdk import SdkBot

    db = f"sqlite+aiosqlite:///{tmp_path / 'g.db'}"
    cfg = ServerConfig(sessions_port=None, trend_port=0, http_port=None, db_url=db, bot="random", restore_grace=60)

    def bots(port: int, seed: int) -> list[SdkBot]:
        url = f"ws://127.0.0.1:{port}/"
        return [
            SdkBot(url, k, f"p{k}", token=f"token-{k}", games=1, seed=seed + k, think=0.01, lobby_code="r")
            for k in (1, 2, 3, 4)
        ]

    app = ServerApp(cfg)
    await app.start()
    assert app.trend_port
    first = bots(app.trend_port, 0)
    playing = asyncio.gather(*(asyncio.to_thread(b.run) for b in first), return_exceptions=True)
    while not app.tables or next(iter(app.tables.values())).version < 60:
        await asyncio.sleep(0.01)
    (table,) = app.tables.values()
    await app.stop()
    await asyncio.wait_for(playing, 30)
    assert all(not b.seen for b in first)  # the server went away mid-game

    again = ServerApp(cfg)
    await again.start()
    try:
        restored = again.tables[table.id]
        n = len(restored.game.actions)
        assert restored.game.actions[: len(table.game.actions)] == table.game.actions
        # the store kept each chair's token digest (never the token): only that token opens it
        assert restored.credentials == [credential(f"token-{k}") for k in (1, 2, 3, 4)]
        assert "token-1" not in str(await again.store.load(table.id))  # type: ignore[union-attr]
        assert again.find_trend_chair(1, "p1", "guess") is None
        assert again.find_trend_chair(1, "p2", "token-1") is None
        assert again.find_trend_chair(1, "p1", "token-1") == (restored, 0)
        assert again.trend_port
        back = bots(again.trend_port, 10)
        await asyncio.wait_for(asyncio.gather(*(asyncio.to_thread(b.run) for b in back)), 60)
        assert all(b.errors == [] and len(b.seen) == 1 for b in back)
        assert all(b.seen[0].scores == back[0].seen[0].scores for b in back)
        assert await asyncio.wait_for(restored.done, 30) is not None
        # the players themselves played every card after the restart: no bot took a chair
        assert len(restored.game.actions) > n and not any(restored.forced_log[n:])
        assert [back[0].seen[0].scores[f"p{k}"] for k in (1, 2, 3, 4)] == list(restored.game.totals)
    finally:
        await again.stop()


def test_bot_factory_takes_a_level() -> None:
    """``serve --bot level:N``: the bot that fills Sessions' ``any`` games and replaces players."""
    bot = bot_factory("level:2")()
    assert bot.spec == "heuristic --epsilon 0.5" and bot.level == 2  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="unknown level level:42"):
        bot_factory("level:42")
    with pytest.raises(ValueError, match="takes no options"):
        bot_factory("level:2 --think-ms 5")
