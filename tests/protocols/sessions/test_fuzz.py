"""Fuzzing the Sessions server as a standing check (``fuzz`` marker; ``FUZZ_MESSAGES`` messages).

In process, through the real :class:`SessionsConnection` (bytes in, bytes out; no sockets, so
100,000 messages take a minute or two, not hours), on a real :class:`ServerApp` with its store:

* a *victim* connection holds four sessions at one table and plays them correctly;
* a *fuzzer* connection holds a session at another table (three server bots) and sends batches
  of generated messages (every type, every field with values of every JSON type) and mutated
  ones (valid messages with bytes flipped, cut, repeated, spliced into one another), naming its
  own session, the victim's sessions and random ids. Hypothesis draws one seed per batch of
  250 and ``fuzzkit`` makes the batch from it (fast; a failing seed is reported).

Checks: no exception escapes the connection (no ``connection_error`` logged, the fuzzer's
connection stays open), the victim is untouched (no ``error`` reply, no server-chosen move, its
game completes), and every game's record in the store replays to the game the table played.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzing import FUZZ_MESSAGES
from fuzzkit import json_value, mutate
from moonshot.core.engine import replay
from moonshot.protocols.sessions.codec import StreamDecoder, encode
from moonshot.protocols.sessions.server import SessionsConnection, SessionsOptions
from moonshot.runtime.table import TableStatus
from moonshot.server.app import ServerApp
from moonshot.server.config import ServerConfig
from moonshot.store import rules_named

BATCH = 250  # messages per Hypothesis example


class Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.out: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:  # type: ignore[override]
        self.out.append(data)

    def get_write_buffer_size(self) -> int:
        return 0

    def is_closing(self) -> bool:
        return self.closed

    def abort(self) -> None:
        self.closed = True

    def close(self) -> None:
        self.closed = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 1) if name == "peername" else default


class Peer:
    """A connection driven from the test: feed it bytes, read what it wrote."""

    def __init__(self, app: ServerApp) -> None:
        assert app.sessions is not None
        self.conn = SessionsConnection(app.sessions)
        self.transport = Transport()
        self.conn.connection_made(self.transport)
        self.decoder = StreamDecoder(1 << 22)

    def feed(self, data: bytes) -> None:
        self.conn.data_received(data)

    def read(self) -> list[dict[str, Any]]:
        data = b"".join(self.transport.out)
        self.transport.out.clear()
        return [m for m in self.decoder.feed(data) if isinstance(m, dict)]


class Victim(Peer):
    """Four sessions playing their lowest legal card and passing their first three."""

    def __init__(self, app: ServerApp) -> None:
        super().__init__(app)
        self.seq: dict[int, int] = {}
        self.errors: list[dict[str, Any]] = []
        self.server_moves = 0
        self.ended = 0
        self.tags: set[str] = set()

    def answer(self) -> None:
        for m in self.read():
            sid = m.get("session_id")
            if m["type"] == "error":
                self.errors.append(m)
                continue
            if isinstance(m.get("seq_num"), int):
                self.seq[sid] = m["seq_num"]  # type: ignore[index]
            if m["type"] == "game_session_response":
                self.tags.add(f"({sid})")
            elif m["type"] == "start_round" and m["pass_direction"] != "Keeper":
                self.send(sid, {"type": "donated_cards", "cards": m["cards"][:3]})  # type: ignore[arg-type]
            elif m["type"] == "move_request":
                self.send(sid, {"type": "decided_move", "card": m["legal_moves"][0]})  # type: ignore[arg-type]
            elif m["type"] == "move_report" and m["move_source"] == "server" and m["player_tag"][-1] == ")":
                if any(m["player_tag"].endswith(t) for t in self.tags):
                    self.server_moves += 1
            elif m["type"] == "end_game":
                self.ended += 1

    def send(self, sid: int, msg: dict[str, Any]) -> None:
        self.seq[sid] += 1
        self.feed(encode({**msg, "session_id": sid, "seq_num": self.seq[sid]}))


# ------------------------------------------------------------------ what the fuzzer sends
TYPES = ["connection_request", "game_session_request", "donated_cards", "decided_move", "resume_session"]
FIELDS = ["type", "session_id", "seq_num", "card", "cards", "game_type", "player_tag", "lobby_code"]
FIELDS += ["player_kind", "session_secret", "replayed", "status"]
CARDS = ["2C", "TH", "QS", "AH", "10d", "Ks", "1H", "ZZ", "", "2C2C"]
WORDS = ["bots_only", "any", "humans_only", "human", "bot", *CARDS]


def generated(rng: random.Random, ids: list[int]) -> bytes:
    """A message of a real type (or not), some fields right, some of every JSON type."""
    msg: dict[str, Any] = {"type": rng.choice(TYPES) if rng.random() < 0.85 else json_value(rng, 2, WORDS)}
    for f in rng.sample(FIELDS, rng.randrange(7)):
        right = rng.random() < 0.5
        if f == "session_id" and right:
            msg[f] = rng.choice(ids)
        elif f == "cards" and right:
            msg[f] = [rng.choice(CARDS) for _ in range(rng.randrange(5))]
        elif f == "card" and right:
            msg[f] = rng.choice(CARDS)
        elif f == "seq_num" and right:
            msg[f] = rng.randrange(400)
        else:
            msg[f] = json_value(rng, 3, WORDS)
    if msg.get("type") == "game_session_request" and msg.get("game_type") not in ("bots_only", "humans_only"):
        msg["lobby_code"] = "fuzz"  # never join the victim's table (it is full anyway)
    return json.dumps(msg, indent=rng.choice([None, 1])).encode()


def make_batch(seed: int, size: int, ids: list[int]) -> list[bytes]:
    rng = random.Random(seed)
    out: list[bytes] = []
    for _ in range(size):
        m = generated(rng, ids)
        out.append(m if rng.random() < 0.5 else mutate(rng, m, out[-3:]))
    return out


class Errors(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.mark.fuzz
def test_fuzzing_the_sessions_server(tmp_path: Path) -> None:
    loop = asyncio.new_event_loop()
    errors = Errors()
    logging.getLogger("moonshot").addHandler(errors)
    try:
        loop.run_until_complete(fuzz(tmp_path, errors))
    finally:
        logging.getLogger("moonshot").removeHandler(errors)
        loop.close()


async def settle(victim: Victim, turns: int = 3) -> None:
    for _ in range(turns):
        await asyncio.sleep(0)
        victim.answer()


async def fuzz(tmp_path: Path, errors: Errors) -> None:
    cfg = ServerConfig(
        sessions_port=0,
        db_url=f"sqlite+aiosqlite:///{tmp_path / 'fuzz.db'}",
        bot="random",
        move_timeout=3600,
        fill_wait=0.01,
        seed=11,
    )
    app = ServerApp(cfg)
    await app.start()
    assert app.sessions is not None
    # a flood of small messages is what a fuzzer is: no rate limit here (tested elsewhere)
    app.sessions.options = SessionsOptions(max_bytes_per_s=1e12, burst_bytes=1e12, max_messages_per_s=1e12)
    app.sessions.options.burst_messages = 1e12
    victim = Victim(app)
    for _ in range(4):
        victim.feed(encode({"type": "game_session_request", "player_tag": "v", "lobby_code": "victim", "seq_num": 0}))
    fuzzer = Peer(app)
    fuzzer.feed(encode({"type": "game_session_request", "player_tag": "f", "game_type": "any", "seq_num": 0}))
    await asyncio.sleep(0.1)
    await settle(victim)
    own = [m["session_id"] for m in fuzzer.read() if m["type"] == "game_session_response"]
    ids = [*victim.seq, *own, 0, 1, 2**47]
    assert len(victim.seq) == 4 and own
    batches = max(1, FUZZ_MESSAGES // BATCH)
    sent = 0

    def run(examples: int) -> None:
        @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(st.integers(min_value=0, max_value=2**64))
        def batch(seed: int) -> None:
            nonlocal sent
            messages = make_batch(seed, BATCH, ids)
            for m in messages:
                fuzzer.feed(m)
            sent += len(messages)
            assert not fuzzer.transport.closed and not fuzzer.conn.closed, "the fuzzer's connection was closed"
            fuzzer.read()

        batch()

    # Hypothesis runs examples synchronously: between runs of a few, the tables and the victim move
    done = 0
    while done < batches:
        step = min(4, batches - done)
        run(step)
        done += step
        await settle(victim, 10)
    assert sent >= FUZZ_MESSAGES - BATCH
    # the victim's game plays on to its end, untouched (the store's writer commits on timers, so
    # the wait is for the game's end, with a deadline, not a count of loop turns)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 120
    while victim.ended < 4 and loop.time() < deadline:
        await asyncio.sleep(0.001)
        victim.answer()
    assert victim.ended == 4, "the victim's game did not complete"
    assert victim.errors == [] and victim.server_moves == 0
    assert not errors.records, [r.getMessage() for r in errors.records]
    # every stored game replays to the game its table played
    await app.recorder.flush()  # type: ignore[union-attr]
    live = dict(app.tables)
    stored = await app.store.list_games()  # type: ignore[union-attr]
    assert stored
    for g in stored:
        rec = await app.store.load(g["id"])  # type: ignore[union-attr]
        assert rec is not None
        game = replay(rules_named(rec.variant), rec.seed, rec.actions)
        if g["id"] in live:
            assert game.log == live[g["id"]].game.log
        else:
            assert g["status"] == "finished" and game.over and list(game.totals) == g["totals"]
    await app.stop()
    assert all(t.status is not TableStatus.FAILED for t in live.values())
