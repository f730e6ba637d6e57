"""The UCT tree per sampled world shared by ``pimc`` and ``search:root=tree``."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from moonshot.bots.heuristic import HeuristicBot
from moonshot.bots.pimc import PimcBot
from moonshot.bots.playout import Deal, greedy_policy
from moonshot.bots.search import SearchBot, deal_from_view, point_scale, relative, sample_view
from moonshot.bots.tree import Node, _iterate, grow_trees, pick, relative_all
from moonshot.core.actions import Play
from moonshot.core.cards import card_list
from moonshot.core.engine import Game, Phase
from moonshot.core.rules import EndRule, PassDirection
from moonshot.core.variants import STANDARD, VARIANTS
from moonshot.core.views import SeatView, seat_view

RULES = STANDARD.replace(pass_cycle=(PassDirection.HOLD,))


def _view(seed: int, min_cards: int = 4) -> SeatView:
    """A standard card decision with at least ``min_cards`` legal cards, after a few tricks."""
    game = Game(RULES, seed)
    rng = random.Random(seed)
    while True:
        view = seat_view(game, game.to_act()[0])
        if view.phase is Phase.PLAY and game.trick_no >= 2 and view.legal_plays.bit_count() >= min_cards:
            return view
        game.apply(HeuristicBot().act(view, rng))


def _counter(limit: int) -> tuple[list[int], Callable[[int], bool]]:
    seen: list[int] = []

    def spent(n: int) -> bool:
        seen.append(n)
        return n >= limit

    return seen, spent


def test_pick_is_uniform_over_the_mask() -> None:
    rng = random.Random(0)
    mask = 1 << 3 | 1 << 17 | 1 << 40
    counts = {3: 0, 17: 0, 40: 0}
    for _ in range(3000):
        counts[pick(mask, rng)] += 1
    assert all(900 < n < 1100 for n in counts.values())


def test_relative_all_is_each_seats_relative_cost() -> None:
    costs = (13, 0, 12, 1)
    assert relative_all(costs, 26.0) == pytest.approx([relative(costs, s) / 26.0 for s in range(4)])


def test_grows_the_worlds_round_robin_and_picks_one_of_the_root_cards() -> None:
    view = _view(1)
    cards = card_list(view.legal_plays)[:3]
    dealt: list[Deal] = []

    def world(rng: random.Random) -> Deal:
        dealt.append(deal_from_view(view, sample_view(view, rng)))
        return dealt[-1]

    seen, spent = _counter(90)
    card, value = grow_trees(cards, world, greedy_policy, spent, 6, 0.7, random.Random(2), point_scale(view))
    assert card in cards and len(dealt) == 6 and seen[-1] == 90
    assert -26.0 <= value <= 26.0
    again = grow_trees(cards, world, greedy_policy, _counter(90)[1], 6, 0.7, random.Random(2), point_scale(view))
    assert again == (card, value)  # deterministic given the rng


def test_the_tree_below_the_root_expands_only_the_choices_given() -> None:
    """With ``choices``, every node below the root holds children among its choices, and each
    root child is one of the root's cards; the visits add up."""
    view = _view(3)
    deal = deal_from_view(view, sample_view(view, random.Random(3)))
    root = Node()
    root.untried = view.legal_plays
    asked: list[int] = []

    def lowest_two(d: Deal) -> int:
        legal = d.legal()
        low = card_list(legal)[:2]
        asked.append(len(low))
        return sum(1 << c for c in low)

    rng = random.Random(0)
    for _ in range(400):
        _iterate(deal, root, greedy_policy, 0.7, rng, 26.0, None, lowest_two)
    assert asked and root.n == 400
    assert set(root.children) == set(card_list(view.legal_plays))

    def walk(node: Node, d: Deal) -> None:
        if not node.children:
            return
        assert node.n >= sum(ch.n for ch in node.children.values())
        allowed = set(card_list(d.legal())[:2])
        for c, ch in node.children.items():
            assert c in allowed
            nxt = d.copy()
            nxt.play(c)
            walk(ch, nxt)

    for c, child in root.children.items():
        d = deal.copy()
        d.play(c)
        walk(child, d)


def test_a_penalty_is_added_to_the_root_seats_cost_of_every_playout() -> None:
    view = _view(5)
    cards = card_list(view.legal_plays)[:2]

    def run(penalty: Callable[[Deal], float] | None) -> float:
        _, value = grow_trees(
            cards,
            lambda rng: deal_from_view(view, sample_view(view, rng)),
            greedy_policy,
            _counter(60)[1],
            4,
            0.7,
            random.Random(7),
            point_scale(view),
            penalty,
        )
        return value

    assert run(lambda d: 10.0) == pytest.approx(run(None) + 10.0)


def test_search_grows_trees_only_when_asked() -> None:
    """``search``'s default card play grows no tree in any variant; ``root=tree`` grows one in
    every card decision with a choice left, and plays legal cards in every variant."""
    calls: list[str] = []

    class Spied(SearchBot):
        def _grow_trees(self, view: SeatView, *args: object) -> tuple[int, float]:
            calls.append(view.rules.name)
            return super()._grow_trees(view, *args)  # type: ignore[arg-type]

    for root in (None, "tree"):
        for name in sorted(VARIANTS):
            rules = VARIANTS[name].replace(end=EndRule.DEALS, deals=1)
            game = Game(rules, 2)
            rng = random.Random(2)
            bot = Spied(simulations=30, root=root, per_world=4)
            for _ in range(60):
                if game.over:
                    break
                seat = game.to_act()[0]
                view = seat_view(game, seat)
                action = bot.act(view, rng)
                assert action in view.legal
                game.apply(action)
        if root is None:
            assert calls == []
    assert set(calls) == set(VARIANTS)


def test_search_tree_roots_hold_the_priors_best_cards_only() -> None:
    """With ``prior=2`` the trees grow over two cards (the network's best two of the distinct
    cards), and the card played is one of them; ``tree_distinct`` plays legal cards too."""
    pytest.importorskip("numpy")
    roots: list[list[int]] = []

    class Spied(SearchBot):
        def _grow_trees(self, view: SeatView, first: Deal, cards: list[int], *args: object) -> tuple[int, float]:
            card, value = super()._grow_trees(view, first, cards, *args)  # type: ignore[arg-type]
            assert card in cards
            roots.append(cards)
            return card, value

    for seed in range(3):
        game = Game(RULES.replace(end=EndRule.DEALS, deals=1), seed)
        rng = random.Random(seed)
        bot = Spied(simulations=40, root="tree", prior=2, tree_distinct=True)
        while not game.over:
            view = seat_view(game, game.to_act()[0])
            action = bot.act(view, rng)
            assert action in view.legal
            game.apply(action)
    assert roots and all(len(cards) == 2 for cards in roots)


def test_tree_options_are_checked() -> None:
    with pytest.raises(ValueError):
        SearchBot(worlds=0)
    with pytest.raises(ValueError):
        SearchBot(per_world=-1)
    bot = SearchBot(worlds=7, exploration=0.3, tree_distinct=True, per_world=5)
    assert (bot.worlds, bot.exploration, bot.tree_distinct, bot.per_world) == (7, 0.3, True, 5)


def test_per_world_deals_more_worlds_as_the_budget_allows() -> None:
    """With ``per_world=K`` the trees get one world for every K iterations the decision can afford
    (at least ``worlds``); without it, exactly ``worlds``."""
    view = _view(6)
    cards = card_list(view.legal_plays)[:3]

    def worlds_dealt(per_world: int, iterations: int) -> int:
        dealt: list[int] = []

        def world(rng: random.Random) -> Deal:
            dealt.append(1)
            return deal_from_view(view, sample_view(view, rng))

        grow_trees(
            cards,
            world,
            greedy_policy,
            _counter(iterations)[1],
            4,
            0.7,
            random.Random(1),
            point_scale(view),
            per_world=per_world,
            affordable=lambda done: iterations,
        )
        return len(dealt)

    assert worlds_dealt(0, 120) == 4
    assert worlds_dealt(5, 120) == 24
    assert worlds_dealt(50, 120) == 4  # never fewer than asked


def test_a_decisions_trees_are_freed_by_the_next_decision_not_after_the_deadline() -> None:
    """Freeing a decision's trees takes milliseconds: ``grow_trees`` hands them to the bot, and
    the next decision frees them inside its own budget, so only the last decision's are held."""
    for bot in (PimcBot(simulations=60, worlds=4), SearchBot(simulations=60, root="tree", worlds=4)):
        assert bot._spent_trees == []
        first = bot.act(_view(7), random.Random(0))
        assert len(bot._spent_trees) == 1
        held = bot._spent_trees[0]
        assert isinstance(held, list) and len(held) == 4  # the four worlds' (deal, root) pairs
        again = bot.act(_view(8), random.Random(0))
        assert len(bot._spent_trees) == 1 and bot._spent_trees[0] is not held
        assert isinstance(first, Play) and isinstance(again, Play)
