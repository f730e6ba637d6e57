"""The engine's dealing, held to the standard library it replicates.

The engine shuffles with its own copy of ``random.Random.shuffle`` (fewer steps); a seed must
deal exactly what ``random.shuffle`` of the deck with that deal's stream deals, so games stored
or compared by seed keep their cards.
"""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from moonshot.actions import Play
from moonshot.engine import Game, _shuffled_deck
from moonshot.rules import PassDirection, Rules


@given(st.one_of(st.integers(), st.text()))
def test_the_deck_is_shuffled_as_random_shuffle_shuffles_it(seed: int | str) -> None:
    expected = list(range(52))
    random.Random(seed).shuffle(expected)
    assert _shuffled_deck(random.Random(seed)) == expected


@given(st.integers(min_value=0, max_value=2**40), st.integers(min_value=0, max_value=7))
def test_each_deal_is_its_streams_shuffle(seed: int, deal: int) -> None:
    g = Game(Rules(pass_cycle=(PassDirection.HOLD,), score_limit=10**6), seed)
    while g.deal_index < deal:  # play out deals (highest legal card) until the wanted one is dealt
        g.apply(Play.of(g.turn, g.legal_play_mask(g.turn).bit_length() - 1))
    deck = list(range(52))
    random.Random(f"moonshot:{seed}:{deal}:deal").shuffle(deck)
    assert g.dealt == [sum(1 << c for c in deck[13 * s : 13 * s + 13]) for s in range(4)]
