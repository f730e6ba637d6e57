"""The duck bot: Turbo Hearts' ``duck`` of the seed's era, card for card, and legal everywhere."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moonshot.bots.duck import DuckBot, badness, duck_pass, worst
from moonshot.bots.registry import BOT_REGISTRY, make_bot
from moonshot.core.actions import Charge, Claim, Expose, Pass, Play, RejectClaim
from moonshot.core.cards import CardSet, card_list, format_card, parse_card, parse_card_set
from moonshot.core.engine import Game, Phase
from moonshot.core.rules import ClaimFlow
from moonshot.core.variants import VARIANTS, find_variant
from moonshot.core.views import seat_view
from moonshot.play.sim import play_game


def cs(text: str) -> CardSet:
    """A card set from whitespace-separated cards: ``cs("2C QS AH")``."""
    return parse_card_set(text.split())


def c(text: str) -> int:
    return parse_card(text)


def test_badness_is_rank_first_then_the_shorter_suit() -> None:
    hand = cs("AS 2S 3S AH KH 4C")
    assert badness(c("AS"), hand) > badness(c("KH"), hand)  # rank first
    assert badness(c("AH"), hand) > badness(c("AS"), hand)  # two hearts against three spades
    assert worst(hand, hand) == c("AH")


def test_the_pass_is_the_worst_card_three_times_over_the_shrinking_hand() -> None:
    # aces first; the singleton ace of diamonds before the ace of spades (three spades)
    hand = cs("AS 5S 4S AD KC 9C 8C 7C 6C 5C 4C 3C 2C")
    assert duck_pass(hand, 3) == cs("AD AS KC")
    # once KC has gone the clubs are shorter, but a rank still counts first
    assert duck_pass(cs("KS QS QC JC TC 9C 2H 3H 4H 5H 6H 7H 8H"), 3) == cs("KS QS QC")


def test_the_pass_recounts_the_suit_after_each_card() -> None:
    # QH and QS tie at first (two cards each); once QS (the later suit) has gone, spades are one
    # card shorter than hearts, so the 9S goes before the 9H
    hand = cs("QS 9S QH 9H 2C 3C 4C 5C 6C 7C 8C 2D 3D")
    assert duck_pass(hand, 3) == cs("QS QH 9S")


def test_it_follows_under_the_winner_or_with_its_highest() -> None:
    rules = find_variant("standard")
    bot = DuckBot()
    for seed in range(40):
        g = Game(rules, seed)
        rng = random.Random(seed)
        while not g.over:
            seat = g.to_act()[0]
            v = seat_view(g, seat)
            a = bot.act(v, rng)
            assert a in v.legal
            if isinstance(a, Play) and v.trick:
                led = v.trick[0][1] // 13
                follow = [x for x in card_list(v.legal_plays) if x // 13 == led]
                if follow:
                    winner = max(x for _, x in v.trick if x // 13 == led)
                    under = [x for x in follow if x < winner]
                    assert a.card == (max(under) if under else max(follow)), (format_card(a.card), v.trick)
                else:  # a discard: the worst card of the hand it holds
                    assert a.card == worst(v.legal_plays, v.hand)
            g.apply(a)


def test_it_never_charges_or_exposes_and_rejects_claims() -> None:
    bot = DuckBot()
    for name in ("turbo", "turbo-chain", "trend"):
        g = Game(find_variant(name), 2)
        rng = random.Random(1)
        seen = set()
        while g.phase is not Phase.PLAY:
            seat = g.to_act()[0]
            a = bot.act(seat_view(g, seat), rng)
            seen.add(type(a))
            if isinstance(a, Charge | Expose):
                assert a.cards == 0
            g.apply(a)
        assert Charge in seen or Expose in seen
    # concurrent claims (Turbo): the runner asks, and duck says no
    g = Game(find_variant("turbo"), 3)
    while g.phase is not Phase.PLAY:
        g.apply(bot.act(seat_view(g, g.to_act()[0]), rng))
    g.apply(Claim(g.turn))
    assert bot.answer_claim(seat_view(g, (g.turn + 1) % 4), g.turn, rng) is False


def test_a_blocking_claim_is_rejected() -> None:
    rules = replace(find_variant("turbo"), claim_flow=ClaimFlow.BLOCKING)  # a house rule
    g = Game(rules, 4)
    bot, rng = DuckBot(), random.Random(0)
    while g.phase is not Phase.PLAY:
        g.apply(bot.act(seat_view(g, g.to_act()[0]), rng))
    claimer = g.turn
    g.apply(Claim(claimer))
    seat = g.to_act()[0]
    assert bot.act(seat_view(g, seat), rng) == RejectClaim(seat, claimer)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_whole_games_of_every_variant_are_legal(variant: str) -> None:
    """Every action it takes is one of the view's legal actions (Game.apply refuses any other),
    in every variant, all four seats duck."""
    rules = find_variant(variant)
    for seed in range(3):
        rec = play_game(rules, seed, ["duck"] * 4, keep_actions=False)
        assert rec.deals >= 1 and len(rec.scores) == 4


@settings(max_examples=30, deadline=None)
@given(
    variant=st.sampled_from(sorted(VARIANTS)),
    seed=st.integers(0, 2**20),
    other=st.sampled_from(["random", "heuristic"]),
)
def test_duck_beside_other_bots_plays_only_legal_actions(variant: str, seed: int, other: str) -> None:
    rules = find_variant(variant)
    g = Game(rules, seed)
    bots = [DuckBot(), make_bot(other), DuckBot(), make_bot(other)]
    rngs = [random.Random(seed + s) for s in range(4)]
    while not g.over:
        seat = g.to_act()[0]
        v = seat_view(g, seat)
        a = bots[seat].act(v, rngs[seat])
        if isinstance(bots[seat], DuckBot):
            assert a in v.legal
            if isinstance(a, Pass):
                assert a.cards.bit_count() == rules.pass_count
        g.apply(a)


def test_the_registry_seats_it_everywhere_by_name() -> None:
    assert BOT_REGISTRY["duck"] == "moonshot.bots.duck:DuckBot"
    bot = make_bot("duck")
    assert isinstance(bot, DuckBot) and bot.name == "duck"
