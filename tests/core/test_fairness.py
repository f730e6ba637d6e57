"""Commit and reveal (moonshot.core.fairness): the commitment's exact format, the seal's parts, and
``verify`` on honest and tampered games."""

from __future__ import annotations

import hashlib
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from moonshot.core.actions import Play
from moonshot.core.engine import DealSpec, Game
from moonshot.core.events import SPECTATOR, GameEnded, GameStarted
from moonshot.core.fairness import FORMAT, DealSeal, commitment, deals_text, valid_salt, verify
from moonshot.core.variants import STANDARD

SALT = "0123456789abcdef" * 2


def played(seed: int) -> Game:
    g = Game(STANDARD, seed)
    rng = random.Random(seed)
    while not g.over:
        g.apply(rng.choice(g.legal_actions(g.to_act()[0])))
    return g


def test_the_commitment_is_the_documented_sha256() -> None:
    text = f"moonshot-deals/1\ngame-1\n42\n{SALT}\n"
    assert commitment("game-1", 42, SALT) == hashlib.sha256(text.encode()).hexdigest()
    assert FORMAT == "moonshot-deals/1"
    # every part counts: another game, seed or salt is another commitment
    others = {commitment("game-2", 42, SALT), commitment("game-1", 43, SALT), commitment("game-1", 42, "f" * 32)}
    assert commitment("game-1", 42, SALT) not in others and len(others) == 3


def test_fixed_deals_are_committed() -> None:
    g = Game(STANDARD, 5)
    deal = DealSpec((g.dealt[0], g.dealt[1], g.dealt[2], g.dealt[3]), 3, 1)
    assert deals_text([deal]) == ",".join(f"{h:x}" for h in deal.hands) + ",3,1"
    assert deals_text(None) == ""
    assert commitment("k", 0, SALT, [deal]) != commitment("k", 0, SALT)


def test_the_seal_shows_the_commitment_first_and_the_seed_last() -> None:
    seal = DealSeal("g", 7, SALT)
    start = seal.decorate(GameStarted("standard", 7))
    assert isinstance(start, GameStarted) and start.commitment == seal.commitment
    # while the game runs no seat and no spectator sees the seed
    for viewer in (0, 1, 2, 3, SPECTATOR):
        seen = start.for_viewer(viewer)
        assert isinstance(seen, GameStarted) and seen.seed is None and seen.commitment == seal.commitment
    end = seal.decorate(GameEnded((1, 2, 3, 4), (0,), 4))
    assert isinstance(end, GameEnded) and (end.seed, end.salt) == (7, SALT)
    assert end.for_viewer(SPECTATOR) is end
    assert seal.published() == {"format": FORMAT, "game_id": "g", "commitment": seal.commitment}
    assert seal.revealed()["seed"] == 7 and "seed" not in seal.published()
    assert valid_salt(SALT) and not valid_salt("xyz") and not valid_salt(None)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**62 - 1))
def test_an_honest_game_verifies_and_a_tampered_one_does_not(seed: int) -> None:
    g = played(seed)
    c = commitment("g1", seed, SALT)
    hands = [(0, s, Game(STANDARD, seed).dealt[s]) for s in range(4)]
    assert verify(STANDARD, "g1", c, seed, SALT, g.actions, None, g.totals, hands) == []
    assert verify(STANDARD, "g1", c, seed + 1, SALT, g.actions, None, g.totals)  # another seed
    assert verify(STANDARD, "g2", c, seed, SALT, g.actions, None, g.totals)  # another game's commitment
    assert verify(STANDARD, "g1", c, seed, SALT, g.actions, None, [t + 1 for t in g.totals])
    assert verify(STANDARD, "g1", c, seed, SALT, g.actions[:-1], None, g.totals)  # unfinished
    assert verify(STANDARD, "g1", "nope", seed, SALT, g.actions)
    # a card its seat was never dealt
    i = next(k for k, a in enumerate(g.actions) if isinstance(a, Play))
    a = g.actions[i]
    assert isinstance(a, Play)
    nxt = g.actions[i + 1]  # the next card of the trick: another seat holds it
    assert isinstance(nxt, Play) and nxt.seat != a.seat
    forged = [*g.actions[:i], Play(a.seat, nxt.card), *g.actions[i + 1 :]]
    assert any("cannot be played" in p for p in verify(STANDARD, "g1", c, seed, SALT, forged, None, g.totals))
