"""search's lookahead: more tricks played by the value network's choices before it values a playout."""

from __future__ import annotations

import random
from typing import Any

import pytest

from bots.test_search import _play_deal
from moonshot.bots.lookahead import next_tricks
from moonshot.bots.playout import Deal, DealRules, greedy_policy
from moonshot.bots.random import RandomBot
from moonshot.bots.search import SearchBot, _matters
from moonshot.core.cards import ALL_CARDS, parse_card_set
from moonshot.core.variants import find_variant

np = pytest.importorskip("numpy")


class Wants:
    """A stand-in value network: the seat to lead next (the last trick's winner) costs ``cost``."""

    def __init__(self, cost: float) -> None:
        self.cost = cost

    def predict(self, rows: Any) -> Any:
        out = np.zeros((len(rows), 4))
        out[:, 0] = self.cost
        return out


def _between_tricks() -> Deal:
    hands = [
        parse_card_set(cards.split())
        for cards in (
            "5S 2C 3C 4C 5C 6C",
            "2S AS 2D 3D 4D 5D",
            "3S KS 6D 7D 8D 9D",
            "4S JS 7C 8C 9C TC",
        )
    ]
    held = hands[0] | hands[1] | hands[2] | hands[3]
    return Deal(
        DealRules.of(find_variant("standard"), 0), hands, turn=0, trick_no=7, played=ALL_CARDS & ~held, broken=True
    )


def test_the_next_trick_is_played_by_each_seats_own_best_card_by_the_network() -> None:
    start = _between_tricks()
    # nobody wants the lead: the leader leads a club, which only the seat holding the higher
    # clubs can follow (it must take it); everybody wants it: the leader leads its spade, and the
    # seat with the ace takes it (greedy, which ducks, would have left it to the leader)
    for cost, winner, led in ((100.0, 3, "2C"), (-100.0, 1, "5S")):
        d = start.copy()
        next_tricks([d], 1, Wants(cost), greedy_policy, random.Random(1), 1.0, 4, _matters(start))
        assert not d.trick and d.trick_no == start.trick_no + 1
        assert d.turn == winner and d.played >> parse_card_set([led]).bit_length() - 1 & 1
    # only seat 0 by the network (lookahead_by=self), the others greedy: it leads its spade to
    # take the trick, and the others duck under it, as the greedy player does
    for cost, winner in ((100.0, 3), (-100.0, 0)):
        d = start.copy()
        next_tricks([d], 1, Wants(cost), greedy_policy, random.Random(1), 1.0, 4, _matters(start), me=0)
        assert not d.trick and d.trick_no == start.trick_no + 1 and d.turn == winner
    two = start.copy()
    next_tricks([two], 2, Wants(1.0), greedy_policy, random.Random(1), 1.0, 4, _matters(start))
    assert two.trick_no == start.trick_no + 2
    # where the seat to lead holds too few cards for the network after the trick, nothing is played
    short = start.copy()
    next_tricks([short], 1, Wants(1.0), greedy_policy, random.Random(1), 1.0, 6, _matters(start))
    assert short.played == start.played


def test_option_is_checked_legal_and_deterministic() -> None:
    for bad in (-1, 1.5, "1", True):
        with pytest.raises(ValueError, match="lookahead"):
            SearchBot(simulations=10, lookahead=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="lookahead_by"):
        SearchBot(simulations=10, lookahead=1, lookahead_by="others")
    bots = [RandomBot(), RandomBot(), RandomBot()]
    games = [
        [list(_play_deal("standard", seed, [SearchBot(simulations=24, lookahead=n), *bots]).actions) for seed in (2, 3)]
        for n in (0, 1, 1)
    ]
    assert games[1] == games[2]  # deterministic under simulations
    assert games[0] != games[1]  # and not the search without it
    own = [
        list(_play_deal("standard", 2, [SearchBot(simulations=24, lookahead=1, lookahead_by="self"), *bots]).actions)
        for _ in range(2)
    ]
    assert own[0] == own[1]


@pytest.mark.parametrize("variant", ["standard", "gym", "trend", "turbo", "kierki", "omnibus"])
def test_legal_in_every_variant(variant: str) -> None:
    for by in ("all", "self"):
        search = SearchBot(simulations=16, lookahead=2, lookahead_by=by)
        game = _play_deal(variant, 1, [search, RandomBot(), search, RandomBot()])
        assert game.over
