"""Inference for the sampler: sound hard facts (never a void in a suit held), soft weights, consistent deals."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from moonshot.bots.base import Bot
from moonshot.bots.heuristic import HeuristicBot
from moonshot.bots.inference import infer, inferred_voids, sample_inferred, soft_weights
from moonshot.bots.random import RandomBot
from moonshot.bots.search import SearchBot
from moonshot.bots.shooter import ShooterBot
from moonshot.core.actions import Play
from moonshot.core.cards import ALL_CARDS, HEARTS_MASK, QUEEN_SPADES, SUIT_MASKS, parse_card, parse_card_set
from moonshot.core.engine import DealSpec, Game, Phase
from moonshot.core.rules import EndRule, PassDirection
from moonshot.core.variants import STANDARD, VARIANTS
from moonshot.core.views import seat_view


def held_suits(hand: int) -> int:
    return sum(1 << s for s in range(4) if hand & SUIT_MASKS[s])


def test_a_heart_led_before_hearts_are_broken_proves_the_other_suits_void() -> None:
    # East holds nothing but hearts and leads the first trick: every other suit is void
    rest = [c for c in range(52) if not HEARTS_MASK >> c & 1]
    hands = (
        sum(1 << c for c in rest[0:13]),
        HEARTS_MASK,
        sum(1 << c for c in rest[13:26]),
        sum(1 << c for c in rest[26:39]),
    )
    rules = STANDARD.replace(pass_cycle=(PassDirection.HOLD,), two_of_clubs_leads=False)
    game = Game(rules, 0, [DealSpec(hands, leader=1)] * 8)
    game.apply(Play.of(1, parse_card("2H")))
    view = seat_view(game, 2)
    assert view.voids[1] == 0  # the engine's voids know nothing yet
    # clubs and spades (South holds every diamond itself: nothing to infer there)
    assert inferred_voids(view)[1] == 0b1001
    for k in range(50):
        hands_out = sample_inferred(view, infer(view), random.Random(k))
        assert hands_out[1] == HEARTS_MASK & ~view.played


def test_a_void_seat_that_dumped_something_else_probably_has_no_queen() -> None:
    north = parse_card_set(["2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "10C", "JC", "QC", "KC", "AC"])
    east = parse_card_set(["2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "10D", "JD", "QD", "KD", "AD"])
    south = parse_card_set(["2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "10S", "JS", "KS", "AS", "2H"])
    west = ALL_CARDS & ~north & ~east & ~south
    rules = STANDARD.replace(pass_cycle=(PassDirection.HOLD,))
    game = Game(rules, 0, [DealSpec((north, east, south, west))] * 8)
    for text in ["2C", "2D", "2S", "3H", "3C", "3D", "3S"]:  # trick 2: East, void in clubs, dumps a diamond
        game.apply(Play.of(game.turn, parse_card(text)))
    view = seat_view(game, 0)
    soft = soft_weights(view)
    assert soft[QUEEN_SPADES][1] < 0.5 and soft[QUEEN_SPADES][3] == 1.0


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variant=st.sampled_from(sorted(VARIANTS)), seed=st.integers(0, 10**6), mix=st.integers(0, 3))
def test_never_deals_a_card_to_a_seat_that_has_shown_it_cannot_hold_it(variant: str, seed: int, mix: int) -> None:
    rules = VARIANTS[variant].replace(end=EndRule.DEALS, deals=1)
    kinds: list[list[Bot]] = [
        [RandomBot()] * 4,
        [HeuristicBot()] * 4,
        [ShooterBot(), RandomBot(), HeuristicBot(), RandomBot()],
        [RandomBot(), HeuristicBot(), RandomBot(), ShooterBot()],
    ]
    bots = kinds[mix]
    game = Game(rules, seed)
    rng = random.Random(seed)
    while not game.over:
        seat = game.to_act()[0]
        if game.phase is Phase.PLAY and game.claimer is None:
            for me in range(4):
                view = seat_view(game, me, with_legal=False)
                facts = infer(view)
                for s in range(4):
                    if s != me:  # sound: never void in a suit the seat really holds
                        assert not facts.voids[s] & held_suits(game.hands[s]), (s, facts.voids, game.hands[s])
                for fast in (False, True):  # (fast: the compiled sampler deals the unweighted cards)
                    dealt = sample_inferred(view, facts, random.Random(seed), fast)
                    assert dealt[me] == view.hand
                    hidden = ALL_CARDS & ~view.hand & ~view.played
                    assert dealt[0] | dealt[1] | dealt[2] | dealt[3] == hidden | view.hand
                    for s in range(4):
                        if s != me:
                            assert dealt[s].bit_count() == view.cards_left[s]
                            assert not facts.voids[s] & held_suits(dealt[s])
                            assert dealt[s] & view.known_cards[s] & hidden == view.known_cards[s] & hidden
        view = seat_view(game, seat)
        game.apply(bots[seat].act(view, rng))


def test_search_with_and_without_inference_plays_legally() -> None:
    rules = STANDARD.replace(end=EndRule.DEALS, deals=1)
    game = Game(rules, 4)
    bots: list[Bot] = [
        SearchBot(simulations=20),
        SearchBot(simulations=20, inference=False),
        HeuristicBot(),
        RandomBot(),
    ]
    rng = random.Random(0)
    while not game.over:
        seat = game.to_act()[0]
        view = seat_view(game, seat)
        action = bots[seat].act(view, rng)
        assert action in view.legal
        game.apply(action)
