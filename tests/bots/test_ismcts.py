"""search:root=ismcts: one search tree over the card play that every sampled world shares."""

from __future__ import annotations

import random

import pytest

from bots.test_search import _play_deal
from moonshot.bots.ismcts import SharedNode, grow_shared_tree
from moonshot.bots.playout import Deal, DealRules, greedy_policy
from moonshot.bots.random import RandomBot
from moonshot.bots.search import SearchBot, _matters
from moonshot.core.cards import ALL_CARDS, parse_card_set
from moonshot.core.variants import find_variant


@pytest.mark.parametrize("variant", ["standard", "gym", "trend", "turbo", "kierki", "omnibus"])
def test_legal_in_every_variant(variant: str) -> None:
    search = SearchBot(simulations=40, root="ismcts")
    game = _play_deal(variant, 1, [search, RandomBot(), search, RandomBot()])
    assert game.over


def test_deterministic_under_simulations_and_not_the_flat_search() -> None:
    bots = [RandomBot(), RandomBot(), RandomBot()]
    games = [
        [list(_play_deal("standard", seed, [SearchBot(simulations=60, root=r), *bots]).actions) for seed in (2, 3)]
        for r in ("ismcts", "ismcts", None)
    ]
    assert games[0] == games[1]
    assert games[0] != games[2]


def test_the_tree_is_shared_by_the_worlds_and_each_card_counts_where_it_was_held() -> None:
    # seat 0 leads; the other hands differ from world to world: a node below the root holds the
    # cards each seat played in any world, and a card's availability counts only the worlds
    # (iterations) in which its seat held it
    hands = [parse_card_set(cards.split()) for cards in ("5S 2C 3C", "2S AS 2D", "3S KS 6D", "4S JS 7C")]
    held = hands[0] | hands[1] | hands[2] | hands[3]
    base = Deal(
        DealRules.of(find_variant("standard"), 0), hands, turn=0, trick_no=10, played=ALL_CARDS & ~held, broken=True
    )
    others = [hands[1], hands[2], hands[3]]

    def deal_world(rng: random.Random) -> list[int]:
        rng.shuffle(others)  # the other seats' hands swapped around: the same cards, other owners
        return [hands[0], *others]

    kept: list[object] = []
    calls = [0]

    def spent(n: int) -> bool:
        calls[0] = n
        return n >= 300

    card, _ = grow_shared_tree(
        [c for c in range(52) if hands[0] >> c & 1],
        base,
        deal_world,
        greedy_policy,
        spent,
        0.7,
        random.Random(1),
        1.0,
        None,
        4,
        _matters(base),
        kept,
    )
    assert hands[0] >> card & 1 and calls[0] == 300
    root = kept[0]
    assert isinstance(root, SharedNode) and root.n == 300
    assert sum(ch.n for ch in root.children.values()) == 300
    for lead, child in root.children.items():
        # every second-seat card was available only in the worlds that dealt it to seat 1
        assert sum(g.n for g in child.children.values()) <= child.n
        assert all(g.avail <= child.n for g in child.children.values())
        assert len(child.children) > 1, lead  # the next seat's cards of several worlds, one node
