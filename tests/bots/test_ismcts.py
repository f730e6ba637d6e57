"""search:root=ismcts: one search tree over the card play that every sampled world shares, with
UCB1 (the default) or PUCT on the policy network's prior (puct, leaf_batch, tree_exact)."""

from __future__ import annotations

import random

import pytest

from bots.test_search import _play_deal
from moonshot.bots.ismcts import PuctNode, SharedNode, grow_puct_tree, grow_shared_tree, mover_view
from moonshot.bots.playout import Deal, DealRules, greedy_policy
from moonshot.bots.random import RandomBot
from moonshot.bots.search import SearchBot, _matters, deal_from_view
from moonshot.core.actions import Play
from moonshot.core.cards import ALL_CARDS, card_list, parse_card_set
from moonshot.core.engine import Game
from moonshot.core.variants import find_variant
from moonshot.core.views import seat_view
from moonshot.play.arena import bot_spec, deal_rules


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


# ---------------------------------------------------------------------- the PUCT tree (puct=C)
PUCT = {"root": "ismcts", "puct": 1.0, "leaf_batch": 4, "tree_exact": True}


@pytest.mark.parametrize(
    "variant", ["standard", "gym", "trend", "turbo", "turbo-bridge", "turbo-blind-chain", "kierki", "omnibus"]
)
def test_puct_tree_plays_legal_cards_in_every_variant(variant: str) -> None:
    # (the network's prior where it plays, uniform elsewhere; _play_deal asserts each action legal)
    search = SearchBot(simulations=40, **PUCT)
    game = _play_deal(variant, 1, [search, RandomBot(), search, RandomBot()], kind_index=4)
    assert game.over


@pytest.mark.parametrize("options", [{"puct": 1.0}, PUCT, {**PUCT, "tree_exact": False, "leaf_batch": 1}])
def test_puct_tree_is_deterministic_under_simulations(options: dict[str, object]) -> None:
    bots = [RandomBot(), RandomBot(), RandomBot()]
    spec = {"root": "ismcts", **options}
    games = [list(_play_deal("standard", 5, [SearchBot(simulations=50, **spec), *bots]).actions) for _ in range(2)]
    assert games[0] == games[1]
    plain = list(_play_deal("standard", 5, [SearchBot(simulations=50, root="ismcts"), *bots]).actions)
    assert games[0] != plain  # (the option changes the search)


def test_puct_tree_a_fixed_seed_gives_the_same_card() -> None:
    game = Game(deal_rules(find_variant("standard"), 0, passing=False), 60000)
    while True:  # the first card decision of the second trick with a choice
        seat = game.to_act()[0]
        view = seat_view(game, seat)
        if view.trick_no >= 2 and view.legal_plays.bit_count() > 2:
            break
        game.apply(Play.of(seat, min(card_list(view.legal_plays))))
    cards = {SearchBot(simulations=80, **PUCT)._choose_card(view, random.Random(7))[0] for _ in range(3)}
    assert len(cards) == 1 and view.legal_plays >> cards.pop() & 1


def test_puct_tree_batches_leaves_and_counts_every_walk() -> None:
    hands = [parse_card_set(cards.split()) for cards in ("5S 2C 3C 9H", "2S AS 2D 8H", "3S KS 6D 7H", "4S JS 7C 6H")]
    held = hands[0] | hands[1] | hands[2] | hands[3]
    base = Deal(
        DealRules.of(find_variant("standard"), 0), hands, turn=0, trick_no=9, played=ALL_CARDS & ~held, broken=True
    )
    others = [hands[1], hands[2], hands[3]]

    def deal_world(rng: random.Random) -> list[int]:
        rng.shuffle(others)
        return [hands[0], *others]

    for batch, exact in ((1, 0), (5, 0), (5, 3)):
        kept: list[object] = []
        calls: list[int] = []

        def spent(n: int, calls: list[int] = calls) -> bool:
            calls.append(n)
            return n >= 100

        card, _ = grow_puct_tree(
            [c for c in range(52) if hands[0] >> c & 1],
            None,
            base,
            deal_world,
            greedy_policy,
            spent,
            1.0,
            random.Random(1),
            26.0,
            None,
            4,
            _matters(base),
            (0, 0, 0, 0),
            None,
            batch,
            exact,
            kept,
        )
        root = kept[0]
        assert hands[0] >> card & 1 and isinstance(root, PuctNode)
        assert calls == list(range(batch, 101, batch)) and root.n == 100
        # every virtual loss was taken back: a child's total is a sum of relative costs in [-2, 2]
        assert sum(ch.n for ch in root.children.values()) == 100
        assert all(abs(ch.total / ch.n) <= 2.0 for ch in root.children.values())


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"root": "ismcts", "puct": -1.0}, "puct must be"),
        ({"root": "ismcts", "puct": float("nan")}, "puct must be"),
        ({"root": "ismcts", "puct": True}, "puct must be"),
        ({"root": "ismcts", "puct": "high"}, "puct must be"),
        ({"root": "ismcts", "puct": 1.0, "leaf_batch": 0}, "leaf_batch must be"),
        ({"root": "ismcts", "puct": 1.0, "leaf_batch": 2.5}, "leaf_batch must be"),
        ({"root": "ismcts", "puct": 1.0, "tree_exact": 1}, "tree_exact must be"),
        ({"puct": 1.0}, "root=ismcts only"),
        ({"root": "tree", "leaf_batch": 8}, "root=ismcts only"),
        ({"root": "ismcts", "leaf_batch": 8}, "give puct too"),
        ({"root": "ismcts", "tree_exact": True}, "give puct too"),
    ],
)
def test_puct_options_refuse_bad_values(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SearchBot(simulations=10, **options)  # type: ignore[arg-type]


def test_puct_options_from_an_arena_spec() -> None:
    _, given = bot_spec("search:root=ismcts,puct=1.5,leaf_batch=8,tree_exact=true")
    bot = SearchBot(simulations=10, **given)
    assert (bot.puct, bot.leaf_batch, bot.tree_exact) == (1.5, 8, True)
    _, bad = bot_spec("search:root=ismcts,puct=1.5,leaf_batch=eight")
    with pytest.raises(ValueError, match="leaf_batch must be a whole number"):
        SearchBot(simulations=10, **bad)


def test_mover_view_is_the_seat_to_play_in_the_world() -> None:
    game = Game(deal_rules(find_variant("standard"), 0, passing=False), 3)
    for _ in range(6):
        seat = game.to_act()[0]
        game.apply(Play.of(seat, min(card_list(seat_view(game, seat).legal_plays))))
    views = [seat_view(game, s) for s in range(4)]
    me = game.to_act()[0]
    d = deal_from_view(views[me], [views[s].hand for s in range(4)])
    d.play(min(card_list(views[me].legal_plays)))
    other = mover_view(views[me], d, list(views[me].voids))
    assert other.seat == d.turn != me and other.hand == views[d.turn].hand
    assert other.trick[-1] == (me, min(card_list(views[me].legal_plays))) and other.legal_plays == d.legal()
