"""Fuzzing kierki-server as a standing check (``fuzz`` marker; ``FUZZ_MESSAGES`` lines).

A real :class:`KierkiServer` on loopback plays a full game (the seven contracts) with four
clients. The fuzzing client (seat W) answers each ``TRICK`` only after sending a batch of
generated lines (every Kierki message, with right and wrong numbers, seats and cards) and
mutated ones (bytes flipped, cut, repeated, spliced; over-long lines; bad bytes). Hypothesis
draws the seeds (one game per example, ``fuzzkit`` makes the lines from the seed).

Checks: no exception escapes a connection handler (no ``internal error`` in the server's log,
no asyncio error), every fuzz line that is not a valid answer gets ``WRONG`` and play goes on,
the other three clients never get ``WRONG``, every client gets every deal's ``SCORE`` and
``TOTAL``, and those agree with the engine replaying the table's actions.
"""

from __future__ import annotations

import logging
import random
import select
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from e2e.test_kierki import Player, game_deals, server_in_thread
from fuzzing import FUZZ_MESSAGES
from fuzzkit import mutate
from moonshot.core.cards import parse_card
from moonshot.core.engine import replay
from moonshot.core.variants import KIERKI
from moonshot.protocols.kierki.codec import (
    Busy,
    CodecError,
    Deal,
    Iam,
    Message,
    Score,
    Taken,
    Total,
    Trick,
    Wrong,
    format_message,
    parse_message,
)
from moonshot.protocols.kierki.server import KierkiServer

GAME_MESSAGES = 7 * 13  # TRICKs the fuzzing seat answers in a game (about)
MAX_GAMES = 5
CARDS = [parse_card(c) for c in ("2C", "TH", "QS", "AH", "KD", "9S")]


def generated(rng: random.Random) -> bytes:
    n = rng.choice([0, 1, 13, 14, 99, 100, rng.randrange(1, 14)])
    cards = tuple(rng.sample(CARDS, rng.randrange(0, 5)))
    pts = tuple(rng.choice([0, -5, 10**6, rng.randrange(300)]) for _ in range(4))
    msg: Message = rng.choice(
        [
            Iam(rng.randrange(4)),
            Busy(tuple(rng.sample(range(4), rng.randrange(1, 4)))),
            Deal(rng.randrange(1, 8), rng.randrange(4), cards),
            Trick(max(1, n % 100), cards),
            Wrong(max(1, n % 100)),
            Taken(max(1, n % 100), cards, rng.randrange(4)),
            Score(pts),  # type: ignore[arg-type]
            Total(pts),  # type: ignore[arg-type]
        ]
    )
    try:
        text = format_message(msg)
    except (CodecError, ValueError):
        text = "TRICK" + str(n)
    return text.encode()


def fuzz_lines(rng: random.Random, count: int, prompt: int) -> list[bytes]:
    """``count`` lines, none of which is a valid answer to the open ``TRICK<prompt>``."""
    out: list[bytes] = []
    while len(out) < count:
        line = generated(rng)
        roll = rng.random()
        if roll < 0.5:
            line = mutate(rng, line, out[-3:])
        elif roll < 0.52:
            line = b"TRICK" + b"9" * rng.choice([1100, 5000])  # over-long
        elif roll < 0.55:
            line = bytes(rng.randrange(256) for _ in range(rng.randrange(30)))
        line = line.replace(b"\n", b"").replace(b"\r", b"")
        text = line.decode("ascii", "replace")  # as the server reads it
        try:
            msg = parse_message(text)
        except CodecError:
            msg = None
        if isinstance(msg, Trick) and msg.number == prompt:
            continue  # that could be a play: the fuzz must not make moves for the seat
        if not text.strip():
            continue  # blank lines are ignored (no WRONG): fine, but they prove nothing
        out.append(line)
    return out


@pytest.mark.fuzz
def test_fuzzing_kierki_server(monkeypatch: pytest.MonkeyPatch) -> None:
    games = max(1, min(MAX_GAMES, FUZZ_MESSAGES // 20_000))
    per_trick = max(1, FUZZ_MESSAGES // (games * GAME_MESSAGES))
    logs: list[str] = []
    monkeypatch.setattr(KierkiServer, "log", lambda self, text: logs.append(text))
    aio_errors: list[logging.LogRecord] = []
    handler = logging.Handler(logging.ERROR)
    handler.emit = aio_errors.append  # type: ignore[method-assign]
    logging.getLogger("asyncio").addHandler(handler)
    sent: list[int] = []
    try:

        @settings(max_examples=games, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(st.integers(min_value=0, max_value=2**64))
        def one_game(seed: int) -> None:
            sent.append(play_a_fuzzed_game(seed, per_trick))

        one_game()
    finally:
        logging.getLogger("asyncio").removeHandler(handler)
    assert sum(sent) >= FUZZ_MESSAGES * 0.8, sent
    assert not [t for t in logs if "internal error" in t], logs
    assert not aio_errors, [r.getMessage() for r in aio_errors]


def play_a_fuzzed_game(seed: int, per_trick: int) -> int:
    rng = random.Random(seed)
    deals = game_deals(seed % 1000)
    fuzzed = 0
    with server_in_thread(deals, timeout=30) as (port, server, _):
        players = [Player(port, s) for s in range(4)]
        wrongs = [0, 0, 0, 0]
        scores: list[list[Message]] = [[], [], [], []]
        fuzzer = players[3]
        owed = 0  # WRONG replies the fuzzer still expects
        alive = set(range(4))
        deadline = time.monotonic() + 600
        while alive:
            assert time.monotonic() < deadline, "the game did not end"
            for i in sorted(alive):
                p = players[i]
                while p.peer.lines:
                    msg = p.read()
                    if isinstance(msg, Wrong):
                        wrongs[i] += 1
                        if i == 3:
                            owed -= 1
                    elif isinstance(msg, Score | Total):
                        scores[i].append(msg)
                    elif isinstance(msg, Trick):
                        if i == 3:
                            lines = fuzz_lines(rng, per_trick, msg.number)
                            fuzzer.peer.send_raw(b"".join(line + b"\r\n" for line in lines))
                            fuzzed += len(lines)
                            owed += len(lines)
                            # every fuzz line is answered (WRONG) before the real answer goes
                            while owed > 0:
                                got = fuzzer.read(30)
                                assert isinstance(got, Wrong), got
                                owed -= 1
                        p.play()
            socks = {players[i].peer.sock: i for i in alive}
            ready, _, _ = select.select(list(socks), [], [], 5)
            for sock in ready:
                i = socks[sock]
                if not players[i].peer.pump():
                    while players[i].peer.lines:
                        msg = players[i].read()
                        if isinstance(msg, Score | Total):
                            scores[i].append(msg)
                    alive.discard(i)
        table = server.table
        assert table is not None and table.game.over
        truth = replay(KIERKI, table.seed, table.game.actions, deals)
        totals = tuple(truth.totals)
    assert wrongs[:3] == [0, 0, 0], wrongs
    for i in range(4):
        got = [m for m in scores[i] if isinstance(m, Total)]
        assert len(got) == len(deals) and got[-1].points == totals, (i, got[-1:], totals)
    assert not isinstance(scores[3][-1], Deal)
    return fuzzed
