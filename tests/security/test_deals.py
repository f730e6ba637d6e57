"""Dealing, attacked: nobody may know a hand before it is public, and anyone can check the deals
afterwards (commit and reveal). Each test is what a hostile client tried against a real server."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from moonshot.cli.main import main
from moonshot.core.actions import action_from_dict
from moonshot.core.cards import parse_card_set
from moonshot.core.engine import Game
from moonshot.core.fairness import FORMAT, commitment, verify
from moonshot.protocols.sessions.client import Client, RandomPlayer
from moonshot.server.app import ServerApp
from moonshot.store import rules_named
from security.conftest import bots_game, external_tournament, http, sse_events, wait_for
from trend_sdk import SdkBot

pytestmark = pytest.mark.asyncio


class RecordingClient(Client):
    """moonshot's Sessions SDK, keeping every message the server sent."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.seen: list[dict[str, Any]] = []

    def _route(self, msg: dict[str, Any]) -> None:
        self.seen.append(msg)
        super()._route(msg)


async def sessions_game(app: ServerApp, code: str) -> RecordingClient:
    """A Sessions player's whole game against the server's bots (the lobby fills the table)."""
    assert app.sessions_port
    client = await RecordingClient.connect("127.0.0.1", app.sessions_port)
    await asyncio.wait_for(client.play(RandomPlayer(random.Random(3)), lobby_code=code), 120)
    await client.close()
    return client


async def stored_record(app: ServerApp, name_part: str) -> dict[str, Any]:
    """The public record of the finished game a player whose tag holds ``name_part`` played."""
    assert app.recorder is not None
    await app.recorder.flush()  # type: ignore[attr-defined]
    async with http(app) as anon:
        games = (await anon.get("/api/games")).json()
        gid = next(g["id"] for g in games if any(name_part in p["name"] for p in g["players"]))
        r = await anon.get(f"/api/games/{gid}")
        assert r.status_code == 200, r.text
        return dict(r.json())


# ------------------------------------------------------------------ the creator's seed
async def test_a_creator_who_names_the_seed_plays_alone_with_its_bots_unrated(server: ServerApp) -> None:
    """The attack: create a game with a seed, compute every hand, wait for victims to join. A
    seed may be named only for a game asked for as a practice game (``"practice": true``): nobody
    else can join it (over HTTP or another protocol), and it is not rated."""
    async with http(server, "mallory") as mallory, http(server, "victim") as victim:
        r = await mallory.post("/lobby/new", json={"variant": "standard", "seed": 1234})
        assert r.status_code == 400 and r.json()["code"] == "seed_needs_practice", r.text
        r = await mallory.post("/lobby/new", json={"variant": "standard", "seed": 1234, "practice": "yes"})
        assert r.status_code == 400 and r.json()["code"] == "bad_field", r.text
        r = await mallory.post("/lobby/new", json={"variant": "standard", "seed": 1234, "practice": True})
        assert r.status_code == 200
        gid = r.json()
        r = await victim.post("/lobby/join", json={"id": gid})
        assert r.status_code == 403 and "practice" in r.json()["error"]
        # a Trend bot that comes with the lobby code is refused as well
        bot = SdkBot(f"ws://127.0.0.1:{server.trend_port}/", 2, "victimbot", games=1, lobby_code=gid)
        ws = await asyncio.to_thread(bot.connect)
        try:
            frame = json.loads(await asyncio.wait_for(asyncio.to_thread(ws.recv), 120))
        finally:
            ws.close()
        assert frame["eventName"] == "error" and "practice" in frame["data"]["message"]
        # with its own bots the creator may practise on that seed: the game is dealt by it, unrated
        for _ in range(3):
            assert (await mallory.post("/lobby/add_bot", json={"id": gid, "algorithm": "random"})).status_code == 200
        assert server.turbo is not None
        hosted = server.turbo.games[gid].hosted
        assert hosted is not None and hosted.table.seed == 1234 and hosted.table.meta["unrated"] is True


async def test_a_game_without_a_named_seed_is_dealt_by_a_secret_one(server: ServerApp) -> None:
    """Nothing public while the game runs tells its seed: not the lobby, not the stream, not the
    API; two games never share one."""
    async with http(server, "ann") as ann, http(server, "eve") as eve, http(server) as anon:
        gids = [await bots_game(server, ann) for _ in range(2)]
        assert server.turbo is not None
        seeds = [server.turbo.games[g].seed for g in gids]
        assert seeds[0] != seeds[1]
        seen: list[str] = []
        seen.append((await anon.get("/api/games")).text)
        r = await anon.get(f"/api/games/{gids[0]}")
        assert r.status_code in (403, 404)
        events = await sse_events(eve, f"/game/subscribe/{gids[0]}", lambda e: e["type"] == "end_replay")
        seen.append(json.dumps(events))
        events = await sse_events(ann, f"/game/subscribe/{gids[0]}", lambda e: e["type"] == "end_replay")
        seen.append(json.dumps(events))
        lobby = await sse_events(eve, "/lobby/subscribe", lambda e: e["type"] == "lobby_state")
        seen.append(json.dumps(lobby))
        for text in seen:
            for seed in seeds:
                assert str(seed) not in text
        sit = next(e for e in events if e["type"] == "sit")
        assert sit["deal_commitment"]["format"] == FORMAT and len(sit["deal_commitment"]["commitment"]) == 64


async def test_an_http_tournament_with_an_external_entrant_has_a_secret_seed(server: ServerApp) -> None:
    """The attack: create a tournament over HTTP (the seed defaulted to 0, and was shown), then
    predict the external entrant's hands. Now: no seed may be given, a secret one is drawn, and
    it is not shown before the tournament is over."""
    async with http(server, "org") as org, http(server) as anon:
        body = {"variant": "standard", "sets": 1, "deals_per_set": 1, "bots": ["random", "b=random", "c=random"],
                "externals": ["victim"]}  # fmt: skip
        r = await org.post("/api/tournaments", json={**body, "seed": 0})
        assert r.status_code == 400 and "secret seed" in r.json()["error"]
        r = await org.post("/api/tournaments", json=body)
        assert r.status_code == 201, r.text
        tid = r.json()["id"]
        status = (await anon.get(f"/api/tournaments/{tid}")).json()
        assert status["seed"] is None
        results = (await anon.get(f"/api/tournaments/{tid}/results")).json()
        assert results["seed"] is None
        assert server.tournaments is not None
        secret = server.tournaments.tournaments[tid].spec.seed
        assert secret != 0
        for path in (f"/api/tournaments/{tid}", f"/api/tournaments/{tid}/results", "/api/tournaments"):
            assert str(secret) not in (await anon.get(path)).text
        # the house's bots alone may still play a named seed (reproducible research)
        r = await org.post("/api/tournaments", json={**body, "externals": [], "seed": 5})
        assert r.status_code in (201, 429), r.text


# ------------------------------------------------------------------ commit and reveal
async def test_sessions_players_get_the_commitment_first_and_the_seed_at_the_end(server: ServerApp) -> None:
    client = await sessions_game(server, "sealed")
    start = next(m for m in client.seen if m.get("type") == "start_game")
    end = next(m for m in client.seen if m.get("type") == "end_game")
    published = start["deal_commitment"]["commitment"]
    reveal = end["deal_reveal"]
    assert start["deal_commitment"]["format"] == reveal["format"] == FORMAT
    # nothing before the end tells the seed
    before_end = json.dumps(client.seen[: client.seen.index(end)])
    assert reveal["seed"] not in before_end and reveal["salt"] not in before_end
    # what the player saw is enough to check its own hands against the commitment
    me = next(t for t in start["player_order"] if t.endswith(f"({start['session_id']})"))
    seat = start["player_order"].index(me)
    hands = [
        (int(m["round_index"]), seat, parse_card_set(m["cards"])) for m in client.seen if m.get("type") == "start_round"
    ]
    record = await stored_record(server, me)
    assert record["commitment"] == published
    rules = rules_named(record["variant"])
    actions = [action_from_dict(a) for a in record["actions"]]
    game_id = record["id"]
    assert commitment(game_id, int(reveal["seed"]), reveal["salt"]) == published
    totals = [end["player_to_game_points"][t] for t in start["player_order"]]
    assert verify(rules, game_id, published, int(reveal["seed"]), reveal["salt"], actions, None, totals, hands) == []
    # a hand the seed did not deal is caught
    wrong = [(0, seat, hands[0][2] ^ 0b11)]
    assert verify(rules, game_id, published, int(reveal["seed"]), reveal["salt"], actions, None, totals, wrong)


async def test_trend_players_get_the_commitment_first_and_the_seed_at_the_end(server: ServerApp) -> None:
    bot = SdkBot(f"ws://127.0.0.1:{server.trend_port}/", 1, "sealed", games=1, lobby_code="trend-sealed")
    await asyncio.wait_for(asyncio.to_thread(bot.run), 120)
    assert bot.errors == []  # the SDK's way of reading frames copes with the extra fields
    new_game = next(f for f in bot.frames if f["eventName"] == "new_game")["data"]
    end = next(f for f in bot.frames if f["eventName"] == "game_end")["data"]
    published = new_game["dealCommitment"]["commitment"]
    seed, salt = int(end["dealReveal"]["seed"]), end["dealReveal"]["salt"]
    record = await stored_record(server, "sealed")
    assert commitment(record["id"], seed, salt) == published == record["commitment"]
    dealt = Game(rules_named(record["variant"]), seed).dealt[0]
    first = next(f for f in bot.frames if f["eventName"] == "new_deal")["data"]
    mine = next(p for p in first["players"] if p["playerName"] == "sealed")
    assert parse_card_set(mine["cards"]) == dealt


async def test_turbo_streams_carry_the_commitment_and_the_reveal(server: ServerApp) -> None:
    async with http(server, "ann") as ann:
        gid = await bots_game(server, ann, open_hands=True)  # the bots' table: ann plays through HTTP
        assert server.turbo is not None
        table = server.turbo.games[gid].hosted.table  # type: ignore[union-attr]
        events = await sse_events(ann, f"/game/subscribe/{gid}", lambda e: e["type"] == "end_replay")
        sit = next(e for e in events if e["type"] == "sit")
        assert sit["deal_commitment"]["commitment"] == table.seal.commitment
        table.stop("test over")


async def test_moonshot_verify_accepts_a_real_game_and_rejects_a_tampered_one(
    server: ServerApp, tmp_path: Path
) -> None:
    client = await sessions_game(server, "verify-me")
    start = next(m for m in client.seen if m.get("type") == "start_game")
    me = next(t for t in start["player_order"] if t.endswith(f"({start['session_id']})"))
    seen = start["deal_commitment"]["commitment"]
    record = await stored_record(server, me)
    runner = CliRunner()

    def run(data: dict[str, Any], *extra: str) -> Any:
        path = tmp_path / "record.json"
        path.write_text(json.dumps(data))
        return runner.invoke(main, ["verify", "--record", str(path), *extra])

    # what the client saw: the commitment at the start, and its own hands
    seat = start["player_order"].index(me)
    mine = [f"{m['round_index']}:{seat}:{' '.join(m['cards'])}" for m in client.seen if m.get("type") == "start_round"]
    hands = [a for h in mine for a in ("--hand", h)]
    ok = run(record, "--commitment", seen, *hands)
    assert ok.exit_code == 0, ok.output
    assert "verified" in ok.output
    other_seat = mine[0].replace(f":{seat}:", f":{(seat + 1) % 4}:", 1)
    wrong = run(record, "--commitment", seen, "--hand", other_seat)
    assert wrong.exit_code == 1 and "not the one the seed dealt" in " ".join(wrong.output.split())
    db = str(server.config.db_url)
    stored = await asyncio.to_thread(runner.invoke, main, ["verify", record["id"], "--db", db, "--commitment", seen])
    assert stored.exit_code == 0, stored.output
    # tampered: another seed, another salt, a changed result, a card swapped, another commitment
    seal = record["deal_seal"]
    swapped = [dict(a) for a in record["actions"]]
    i = next(k for k, a in enumerate(swapped) if a["t"] == "play")
    swapped[i] = {**swapped[i], "c": "AS" if swapped[i]["c"] != "AS" else "KS"}
    for bad in (
        {**record, "deal_seal": {**seal, "seed": str(int(seal["seed"]) + 1)}},
        {**record, "deal_seal": {**seal, "salt": "0" * 32}},
        {**record, "totals": [t + 1 for t in record["totals"]]},
        {**record, "actions": swapped},
    ):
        result = run(bad, "--commitment", seen)
        assert result.exit_code == 1 and "NOT VERIFIED" in result.output, result.output
    other = run(record, "--commitment", "ab" * 32)
    assert other.exit_code == 1 and "not the one you saw" in " ".join(other.output.split())


class Thinking(RandomPlayer):
    async def play(self, view: Any) -> str | None:  # type: ignore[override]
        await asyncio.sleep(0.05)
        return super().play(view)


async def test_a_tournament_game_reveals_nothing_while_its_deal_set_is_played(server: ServerApp) -> None:
    """Every rotation of a deal set deals the same hands: the record (or the seed) of a finished
    game of a running tournament would show the hands of the next ones. They open when the
    tournament is over."""
    assert server.sessions_port and server.tournaments is not None
    async with http(server, "org") as org, http(server) as anon:
        tid, token = await external_tournament(org)
        t = server.tournaments.tournaments[tid]
        client = await RecordingClient.connect("127.0.0.1", server.sessions_port)
        await asyncio.wait_for(client.play(Thinking(random.Random(1)), lobby_code=token), 120)
        first = next(m for m in client.seen if m.get("type") == "end_game")
        assert "deal_reveal" not in first  # the seed of the set stays secret
        await wait_for(lambda: t.results)
        gid = t.results[0].game_id
        assert server.recorder is not None
        await server.recorder.flush()  # type: ignore[attr-defined]
        assert t.status == "running"
        r = await anon.get(f"/api/games/{gid}")
        assert r.status_code == 403 and "tournament" in r.json()["error"]
        for _ in range(3):  # the other rotations, then the tournament is over and everything opens
            await asyncio.wait_for(client.play(RandomPlayer(random.Random(2)), lobby_code=token), 120)
        await asyncio.wait_for(asyncio.shield(t.task), 120)  # type: ignore[arg-type]
        await server.recorder.flush()  # type: ignore[attr-defined]
        record = (await anon.get(f"/api/games/{gid}")).json()
        assert record["deal_seal"]["seed"] and record["commitment"]
        await client.close()
