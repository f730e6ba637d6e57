"""The uniform random bot: its card draw is ``rng.choice`` over the legal cards, exactly."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from moonshot.bots.random import RandomBot, choose_card, sample_cards
from moonshot.core.cards import card_list
from moonshot.core.engine import Game, Phase
from moonshot.core.variants import find_variant
from moonshot.core.views import seat_view


@given(cards=st.integers(min_value=1, max_value=(1 << 52) - 1), seed=st.integers(0, 2**32))
def test_choose_card_is_rng_choice_over_the_cards(cards: int, seed: int) -> None:
    a, b = random.Random(seed), random.Random(seed)
    for _ in range(5):  # the same card and the same RNG state after, draw after draw
        assert choose_card(cards, a) == b.choice(card_list(cards))
    assert a.getstate() == b.getstate()


@given(
    cards=st.integers(min_value=0, max_value=(1 << 52) - 1),
    k=st.integers(min_value=0, max_value=7),
    seed=st.integers(0, 2**32),
)
def test_sample_cards_is_rng_sample_of_the_cards(cards: int, k: int, seed: int) -> None:
    """The random bot's pass: the cards rng.sample picks, and the same RNG state after."""
    a, b = random.Random(seed), random.Random(seed)
    for _ in range(3):
        try:
            want = sum(1 << c for c in b.sample(card_list(cards), k))
        except ValueError:  # more cards asked for than there are
            try:
                sample_cards(cards, k, a)
            except ValueError:
                continue
            raise AssertionError("sample_cards took more cards than there are") from None
        assert sample_cards(cards, k, a) == want
    assert a.getstate() == b.getstate()


def test_a_hand_of_thirteen_passes_as_rng_sample_does() -> None:
    """The case the bot meets: three (or four) of a 13-card hand, many states in a row."""
    rng, same = random.Random(7), random.Random(7)
    deck = list(range(52))
    for _ in range(2000):
        same.shuffle(deck)
        rng.shuffle(deck)
        hand = sum(1 << c for c in deck[:13])
        for k in (3, 4):
            assert sample_cards(hand, k, rng) == sum(1 << c for c in same.sample(card_list(hand), k))


class _CountingRandom(random.Random):
    """A subclass: choose_card must leave the drawing to it."""

    calls = 0

    def choice(self, seq):  # type: ignore[no-untyped-def, override]
        self.calls += 1
        return super().choice(seq)


def test_a_random_subclass_is_asked_to_choose() -> None:
    rng = _CountingRandom(3)
    card = choose_card(0b1011 << 13, rng)
    assert rng.calls == 1
    assert card in card_list(0b1011 << 13)


def test_random_bot_plays_legal_cards_to_the_end() -> None:
    game = Game(find_variant("standard"), 11)
    bot, rng = RandomBot(), random.Random(1)
    while not game.over:
        seat = game.to_act()[0]
        view = seat_view(game, seat)
        action = bot.act(view, rng)
        assert action in view.legal
        game.apply(action)
    assert game.phase is Phase.OVER
