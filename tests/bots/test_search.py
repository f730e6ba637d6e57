"""The search bot: the hidden-card sampler, the endgame solver, determinism, every variant."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moonshot.bots.playout import greedy_policy, start_of_play
from moonshot.bots.random import RandomBot
from moonshot.bots.registry import make_bot
from moonshot.bots.search import (
    VALUE_BATCH_WORLDS,
    Budget,
    Inconsistent,
    SearchBot,
    _distinct,
    _matters,
    deal_from_view,
    halving_cuts,
    minimax,
    quick_sample_view,
    sample_hands,
    sample_view,
    solve,
)
from moonshot.core.actions import AcceptClaim, Claim, Pass
from moonshot.core.cards import ALL_CARDS, JACK_DIAMONDS, QUEEN_SPADES, SUIT_MASKS, TEN_CLUBS, card_list, parse_card_set
from moonshot.core.engine import Game, Phase, replay
from moonshot.core.events import DealEnded
from moonshot.core.rules import ClaimFlow, EndRule, PassDirection
from moonshot.core.variants import VARIANTS, find_variant
from moonshot.core.views import SeatView, seat_view


def _deal(rng: random.Random) -> list[int]:
    deck = list(range(52))
    rng.shuffle(deck)
    return [sum(1 << c for c in deck[13 * s : 13 * s + 13]) for s in range(4)]


def _check_hands(view: SeatView, hands: list[int]) -> None:
    me = view.seat
    if view.phase in (Phase.PASS, Phase.PILE):  # passes in transit: the deal before passing
        assert hands[me] == view.dealt
        assert sorted(h.bit_count() for h in hands) == [13] * 4
        assert hands[0] | hands[1] | hands[2] | hands[3] == ALL_CARDS
        return
    assert hands[me] == view.hand
    union = 0
    for s in range(4):
        assert not union & hands[s], "a card dealt twice"
        union |= hands[s]
        assert hands[s].bit_count() == view.cards_left[s]
        assert not hands[s] & view.played
        if s != me:
            assert hands[s] & view.known_cards[s] == view.known_cards[s], "a known card moved"
            for suit in range(4):
                if view.voids[s] >> suit & 1:
                    assert not hands[s] & SUIT_MASKS[suit], "a card in a suit the seat showed void in"
    assert union == ALL_CARDS & ~view.played


# ---------------------------------------------------------------------- sampler
def _position(seed: int, variant: str, cut: int, viewer: int) -> tuple[SeatView | None, random.Random]:
    """``viewer``'s view after ``cut`` random actions of the first deal (None: past it)."""
    game = Game(VARIANTS[variant], seed)
    rng = random.Random(seed)
    bot = RandomBot()
    for _ in range(cut):
        if game.over or game.deal_index > 0:
            break
        seat = game.to_act()[0]
        game.apply(bot.act(seat_view(game, seat), rng))
    if game.over or game.deal_index > 0:
        return None, rng
    return seat_view(game, viewer), rng


@settings(max_examples=400, deadline=None)
@given(
    seed=st.integers(0, 10**9),
    variant=st.sampled_from(["standard", "turbo", "turbo-blind-chain", "kierki", "trend", "omnibus"]),
    cut=st.integers(0, 70),
    viewer=st.integers(0, 3),
)
def test_sampler_respects_what_the_seat_knows_in_real_games(seed: int, variant: str, cut: int, viewer: int) -> None:
    view, rng = _position(seed, variant, cut, viewer)
    if view is None:
        return
    for _ in range(5):
        _check_hands(view, sample_view(view, rng))


@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(0, 10**9),
    variant=st.sampled_from(["standard", "turbo", "kierki", "trend", "omnibus"]),
    cut=st.integers(0, 70),
    viewer=st.integers(0, 3),
)
def test_the_fast_sampler_respects_what_the_seat_knows_in_real_games(
    seed: int, variant: str, cut: int, viewer: int
) -> None:
    view, rng = _position(seed, variant, cut, viewer)
    if view is None:
        return
    for _ in range(5):
        _check_hands(view, quick_sample_view(view, rng))


def test_the_fast_sampler_falls_back_to_the_exact_one_on_a_dead_end(monkeypatch: pytest.MonkeyPatch) -> None:
    import moonshot.bots.sampling as sampling_module

    view = _position_with_equivalent_cards()
    rng = random.Random(0)
    fast = quick_sample_view(view, rng)
    _check_hands(view, fast)
    monkeypatch.setattr(sampling_module, "quick_deal", lambda *args: None)  # as after 8 dead ends
    _check_hands(view, quick_sample_view(view, rng))


def test_search_samples_with_the_fast_sampler_where_it_was_measured_and_the_classic_one_elsewhere() -> None:
    def run(variant: str, **options: object) -> list[object]:
        bots = [SearchBot(simulations=24, **options), RandomBot(), RandomBot(), RandomBot()]  # type: ignore[arg-type]
        return list(_play_deal(variant, 2, bots).actions)

    # (without the prior's weight, which at 24 playouts decides most cards whatever the worlds)
    assert run("standard", prior_weight=0) == run("standard", sampler="fast", prior_weight=0)
    assert run("standard", prior_weight=0) != run("standard", sampler="classic", prior_weight=0)  # another stream
    assert run("kierki") == run("kierki", sampler="classic")
    assert run("trend") == run("trend", sampler="classic")  # it leaned worse there
    with pytest.raises(ValueError, match="sampler"):
        SearchBot(sampler="magic")


@settings(max_examples=1000, deadline=None)
@given(seed=st.integers(0, 10**9), played=st.integers(0, 36), void_p=st.floats(0, 1), known_p=st.floats(0, 0.5))
def test_sampler_handles_interlocking_voids_and_known_cards(
    seed: int, played: int, void_p: float, known_p: float
) -> None:
    """Random true deals with many voids: the sampler always finds a deal that fits them."""
    rng = random.Random(seed)
    truth = _deal(rng)
    # remove `played` random cards (as if played) from the three other hands, evenly-ish
    gone = 0
    for s in range(1, 4):
        cards = [c for c in range(52) if truth[s] >> c & 1]
        for c in rng.sample(cards, min(len(cards), played // 3 + rng.randrange(2))):
            gone |= 1 << c
            truth[s] &= ~(1 << c)
    voids = [0, 0, 0, 0]
    known = [0, 0, 0, 0]
    for s in range(1, 4):
        for suit in range(4):
            if not truth[s] & SUIT_MASKS[suit] and rng.random() < void_p:
                voids[s] |= 1 << suit
        known[s] = sum(1 << c for c in range(52) if truth[s] >> c & 1 and rng.random() < known_p)
    unseen = ALL_CARDS & ~truth[0] & ~gone
    counts = [h.bit_count() for h in truth]
    for _ in range(3):
        hands = sample_hands(0, truth[0], unseen, counts, known, voids, rng)
        assert hands[0] == truth[0]
        assert hands[1] | hands[2] | hands[3] == unseen
        for s in range(1, 4):
            assert hands[s].bit_count() == counts[s]
            assert hands[s] & known[s] == known[s]
            for suit in range(4):
                if voids[s] >> suit & 1:
                    assert not hands[s] & SUIT_MASKS[suit]
        assert not (hands[1] & hands[2] or hands[1] & hands[3] or hands[2] & hands[3])


def test_sampler_finds_the_only_deal_when_voids_force_it() -> None:
    # seat 1 is void in all but clubs, seat 2 in all but diamonds, seat 3 in all but hearts
    hands = [SUIT_MASKS[3], SUIT_MASKS[0], SUIT_MASKS[1], SUIT_MASKS[2]]
    voids = [0, 0b1110, 0b1101, 0b1011]
    for seed in range(20):
        got = sample_hands(0, hands[0], ALL_CARDS & ~hands[0], [13] * 4, [0] * 4, voids, random.Random(seed))
        assert got == hands


def test_sampler_rejects_an_impossible_position() -> None:
    with pytest.raises(Inconsistent):
        sample_hands(0, SUIT_MASKS[3], ALL_CARDS & ~SUIT_MASKS[3], [13] * 4, [0] * 4, [0, 1, 1, 1], random.Random(0))
    with pytest.raises(Inconsistent):
        sample_hands(0, SUIT_MASKS[3], ALL_CARDS & ~SUIT_MASKS[3], [13, 13, 13, 12], [0] * 4, [0] * 4, random.Random(0))


def test_the_passed_cards_stay_with_the_receiver() -> None:
    game = Game(find_variant("standard"), 11)
    passes = {}
    for s in range(4):
        cards = [c for c in range(52) if game.hands[s] >> c & 1][:3]
        passes[s] = sum(1 << c for c in cards)
        game.apply(Pass(s, passes[s]))
    view = seat_view(game, 0)
    assert view.known_cards[1] == passes[0]
    for seed in range(50):
        hands = sample_view(view, random.Random(seed))
        assert hands[1] & passes[0] == passes[0]


# ---------------------------------------------------------------------- endgame solver
def _endgame(variant: str, seed: int, cards_each: int):  # type: ignore[no-untyped-def]
    rules = VARIANTS[variant]
    rng = random.Random(seed)
    kind = rules.deal_kinds[seed % len(rules.deal_kinds)]
    deal = start_of_play(rules, kind, _deal(rng), seed % 4)
    while not deal.done and (max(h.bit_count() for h in deal.hands) > cards_each or rng.random() < 0.3):
        deal.play(greedy_policy(deal, deal.turn, deal.legal(), rng))
    return deal


@pytest.mark.parametrize("variant", ["standard", "omnibus", "trend", "turbo", "kierki"])
def test_solver_agrees_with_exhaustive_search(variant: str) -> None:
    checked = 0
    for seed in range(30):
        deal = _endgame(variant, seed, 2 if seed % 6 else 3)
        if deal.done:
            continue
        for me in (deal.turn, (deal.turn + 1) % 4):
            assert solve(deal, me) == pytest.approx(minimax(deal, me))
        weight = 0.5 * (seed % 3)  # own points only, half relative, relative
        assert solve(deal, deal.turn, weight) == pytest.approx(minimax(deal, deal.turn, weight))
        checked += 1
    assert checked > 15


# ---------------------------------------------------------------------- the bot
def _play_deal(variant: str, seed: int, bots: list[object], kind_index: int = 0) -> Game:
    base = VARIANTS[variant]
    kinds = base.deal_kinds
    rules = base.replace(end=EndRule.DEALS, deals=1, deal_kinds=(kinds[kind_index % len(kinds)],))
    game = Game(rules, seed)
    rngs = [random.Random(f"{seed}:{s}") for s in range(4)]
    while not game.over:
        seat = game.to_act()[0]
        view = seat_view(game, seat)
        action = bots[seat].act(view, rngs[seat])  # type: ignore[attr-defined]
        assert action in view.legal
        game.apply(action)
    return game


@pytest.mark.parametrize(
    "variant", ["standard", "omnibus", "trend", "turbo", "turbo-bridge", "turbo-blind-chain", "kierki", "gym"]
)
def test_search_plays_a_legal_deal_in_every_variant(variant: str) -> None:
    search = SearchBot(simulations=24)
    for seed in range(2):
        bots = [search, RandomBot(), search, RandomBot()]
        game = _play_deal(variant, seed, bots, kind_index=seed + 3)
        assert game.over


def test_search_is_deterministic_with_a_simulation_budget() -> None:
    def clock() -> float:
        raise AssertionError("the clock is read although a simulation budget is set")

    def run() -> list[object]:
        bots = [SearchBot(simulations=30, clock=clock), RandomBot(), RandomBot(), RandomBot()]
        return list(_play_deal("turbo", 5, bots).actions)

    assert run() == run()


def test_search_uses_the_clock_for_a_time_budget() -> None:
    ticks = iter(range(10**6))
    bot = SearchBot(think_ms=3, clock=lambda: next(ticks) / 1000.0)
    game = Game(find_variant("standard"), 2)
    view = seat_view(game, 0)
    assert isinstance(bot.act(view, random.Random(0)), Pass)
    # one batch costs one tick here: it stops once the next batch would end past the deadline
    assert next(ticks) == 3


def test_search_beats_random_on_a_few_deals() -> None:
    totals = [0, 0]
    for seed in range(6):
        bots = [SearchBot(simulations=40), RandomBot(), RandomBot(), RandomBot()]
        game = _play_deal("standard", seed, bots)
        end = next(e for e in game.log if isinstance(e, DealEnded))
        totals[0] += end.points[0]
        totals[1] += sum(end.points[1:]) / 3
    assert totals[0] < totals[1]


JD_TC = (1 << JACK_DIAMONDS) | (1 << TEN_CLUBS)


def _turbo_midgame(seed: int, until):  # type: ignore[no-untyped-def]
    rules = find_variant("turbo").replace(end=EndRule.DEALS, deals=1)
    game = Game(rules, seed)
    rng = random.Random(seed)
    bot = RandomBot()
    while not game.over and not (game.phase is Phase.PLAY and until(game)):
        seat = game.to_act()[0]
        game.apply(bot.act(seat_view(game, seat), rng))
    return game


def test_search_accepts_a_claim_that_hands_the_claimer_the_queen() -> None:
    answered = 0
    for seed in range(300):
        # late in the deal, the queen still out (JD and TC gone), someone else holding a heart: no moon,
        # so the claimer taking every remaining card is the best that can happen to the others
        game = _turbo_midgame(
            seed,
            lambda g: (
                g.trick_no >= 9 and not g.played >> QUEEN_SPADES & 1 and g.played & JD_TC == JD_TC and not g.trick_cards
            ),
        )
        if game.over:
            continue
        claimer = game.turn
        if not any(game.taken[s] & SUIT_MASKS[2] for s in range(4) if s != claimer):
            continue
        # (a doubled ten of clubs elsewhere would make another seat a better home for the points)
        if any(game.charged) or not game.taken[claimer] >> TEN_CLUBS & 1:
            continue
        game.apply(Claim(claimer))
        assert game.to_act() == (claimer,)  # Turbo: nobody is asked to answer; bots answer on their own
        for seat in range(4):
            if seat != claimer:
                assert SearchBot(simulations=40).answer_claim(seat_view(game, seat), claimer, random.Random(seat))
                answered += 1
        blocking = replay(game.rules.replace(claim_flow=ClaimFlow.BLOCKING), game.seed, game.actions)
        for seat in blocking.to_act():  # play waits for answers: each is asked through act
            answer = SearchBot(simulations=40).act(seat_view(blocking, seat), random.Random(seat))
            assert answer == AcceptClaim(seat, claimer)
        break
    assert answered == 3


def test_search_claims_once_nothing_is_left_to_score() -> None:
    rules_cards = find_variant("turbo").doubling_cards
    found = False
    for seed in range(60):
        game = _turbo_midgame(
            seed, lambda g: not (SUIT_MASKS[2] | rules_cards) & ~g.played and not g.trick_cards and g.trick_no < 13
        )
        if game.over:
            continue
        seat = game.turn
        view = seat_view(game, seat)
        assert SearchBot(simulations=20).act(view, random.Random(0)) == Claim(seat)
        found = True
        break
    assert found


def test_search_is_in_the_bot_registry() -> None:
    bot = make_bot("search", simulations=10)
    assert bot.name == "search"
    game = Game(find_variant("kierki"), 0)
    seat = game.to_act()[0]
    view = seat_view(game, seat)
    assert view.phase is Phase.PLAY
    assert bot.act(view, random.Random(0)) in view.legal


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="rollout"):
        SearchBot(rollout="alphago")
    with pytest.raises(ValueError):
        SearchBot(think_ms=None, simulations=None)


def test_time_budget_stops_before_a_batch_would_end_past_the_deadline() -> None:
    from moonshot.bots.search import Budget

    now = [0.0]
    budget = Budget(lambda: now[0], 10, None)
    now[0] = 0.004
    assert not budget(5)  # one batch took 4 ms: the next would end at 8 ms, before the deadline
    now[0] = 0.007
    assert budget(10)  # a batch as long as the longest (4 ms) would end past 10 ms
    assert not Budget(lambda: 1 / 0, None, 3)(2)  # a simulation budget never reads the clock
    # a card decision under a clock that runs out mid-world still plays a legal card
    ticks = iter(range(10**6))
    bot = SearchBot(think_ms=5, clock=lambda: next(ticks) / 1000.0)
    game = Game(find_variant("standard").replace(pass_cycle=(PassDirection.HOLD,)), 3)
    view = seat_view(game, game.to_act()[0])
    while view.legal_plays.bit_count() < 3:
        game.apply(RandomBot().act(view, random.Random(1)))
        view = seat_view(game, game.to_act()[0])
    action = bot.act(view, random.Random(0))
    assert action in view.legal
    assert next(ticks) < 60  # it stopped near the 5 ms deadline (each clock read is 1 ms here)
    # the clock is read once a world (a CPU clock's read costs about a playout), not once a card
    reads = [0]
    worlds = [0]

    def clock() -> float:
        reads[0] += 1
        return reads[0] / 100_000.0  # 10 µs a read: about 500 reads to the deadline

    class Counted(SearchBot):
        def _card_sampler(self, view: SeatView) -> Any:
            sample = super()._card_sampler(view)

            def counted(rng: random.Random) -> Any:
                worlds[0] += 1
                return sample(rng)

            return counted

    Counted(think_ms=5, clock=clock, prior=0).act(view, random.Random(0))
    assert view.legal_plays.bit_count() >= 3 and worlds[0] > 50
    assert reads[0] <= worlds[0] + 5


# ---------------------------------------------------------------------- the root decision rule
class _CountingBudget(Budget):
    """A simulation budget that records how many playouts each world added (one per option alive)."""

    def __init__(self, simulations: int, log: list[int]) -> None:
        super().__init__(lambda: 0.0, None, simulations)
        self.log = log
        self.seen = 0

    def __call__(self, n: int) -> bool:
        self.log.append(n - self.seen)
        self.seen = n
        return super().__call__(n)


def _spied(bot_options: dict[str, object], log: list[int]) -> SearchBot:
    simulations = int(bot_options.pop("simulations"))  # type: ignore[call-overload]

    class Spied(SearchBot):
        def _budget(self) -> Budget:
            return _CountingBudget(simulations, log)

    return Spied(simulations=simulations, **bot_options)  # type: ignore[arg-type]


def _position_with_equivalent_cards() -> SeatView:
    """A standard card decision where two legal cards are equivalent (nothing unseen between them)."""
    rules = find_variant("standard").replace(pass_cycle=(PassDirection.HOLD,))
    for seed in range(200):
        game = Game(rules, seed)
        rng = random.Random(seed)
        while not game.over and game.deal_index == 0:
            view = seat_view(game, game.to_act()[0])
            if view.phase is Phase.PLAY and view.legal_plays.bit_count() >= 3:
                deal = deal_from_view(view, sample_view(view, rng))
                if len(_distinct(deal, view.legal_plays, _matters(deal))) < view.legal_plays.bit_count():
                    return view
            game.apply(RandomBot().act(view, rng))
    raise AssertionError("no position with equivalent cards found")


def test_search_plays_out_one_card_of_each_run_of_equivalent_cards() -> None:
    view = _position_with_equivalent_cards()
    deal = deal_from_view(view, sample_view(view, random.Random(0)))
    distinct = _distinct(deal, view.legal_plays, _matters(deal))
    log: list[int] = []
    card, _ = _spied({"simulations": 60, "prior": 0}, log)._choose_card(view, random.Random(3))
    assert card in distinct
    assert set(log) == {len(distinct)}  # every world plays out each distinct card once, nothing else
    flat: list[int] = []
    card, _ = _spied({"simulations": 60, "root": "flat", "prior": 0}, flat)._choose_card(view, random.Random(3))
    assert view.legal_plays >> card & 1
    assert set(flat) == {view.legal_plays.bit_count()}


def test_successive_halving_drops_the_worse_half_of_the_cards_as_it_goes() -> None:
    assert halving_cuts(50, 8) == [2, 6]  # 16.7 playouts a round: 2 worlds of 8 cards, 4 of 4, the rest of 2
    assert halving_cuts(50, 2) == [] and halving_cuts(10, 13) == [1, 2, 3]
    rules = find_variant("standard").replace(pass_cycle=(PassDirection.HOLD,))
    game = Game(rules, 4)
    rng = random.Random(4)
    while True:
        view = seat_view(game, game.to_act()[0])
        deal = deal_from_view(view, sample_view(view, rng))
        if view.phase is Phase.PLAY and len(_distinct(deal, view.legal_plays, _matters(deal))) >= 5:
            break
        game.apply(RandomBot().act(view, rng))
    k = len(_distinct(deal, view.legal_plays, _matters(deal)))
    log: list[int] = []
    card, _ = _spied({"simulations": 80, "root": "halving", "prior": 0}, log)._choose_card(view, random.Random(0))
    assert view.legal_plays >> card & 1
    assert log[0] == k and log[-1] == 2 and sorted(log, reverse=True) == log  # fewer cards each round
    assert sum(log) >= 80 and sum(log) - log[-1] < 80


def _distinct_with_network_scores(view: SeatView, rng: random.Random) -> tuple[list[int], dict[int, float]]:
    """The cards ``search`` plays out in ``view`` (one per run of equivalent cards) and the
    packaged prior's score of each: each card stands for its run, so it scores the run's best."""
    from moonshot.bots.learned import card_features, default_prior

    legal = card_list(view.legal_plays)
    scores = default_prior().scores(card_features(view, legal)).tolist()
    deal = deal_from_view(view, sample_view(view, rng))
    kept = _distinct(deal, view.legal_plays, _matters(deal))
    run_score = {
        c: max(x for d, x in zip(legal, scores) if d >= c and not [k for k in kept if c < k <= d]) for c in kept
    }
    return kept, run_score


def test_the_learned_prior_narrows_the_search_to_the_networks_best_cards() -> None:
    pytest.importorskip("numpy")
    rules = find_variant("standard").replace(pass_cycle=(PassDirection.HOLD,))
    game = Game(rules, 11)
    rng = random.Random(11)
    checked = 0
    while not game.over and game.deal_index == 0:
        view = seat_view(game, game.to_act()[0])
        if view.phase is Phase.PLAY and view.legal_plays.bit_count() >= 4:
            kept, run_score = _distinct_with_network_scores(view, rng)
            top2 = sorted(kept, key=lambda c: -run_score[c])[:2]
            log: list[int] = []
            card, _ = _spied({"simulations": 40, "prior": 2}, log)._choose_card(view, random.Random(0))
            if len(kept) > 2:
                assert set(log) == {2}  # two cards played out in every world
                assert card in top2
                checked += 1  # only positions where the prior had cards to drop count
        game.apply(RandomBot().act(view, rng))
    assert checked >= 3


def test_the_prior_weight_leans_the_choice_towards_the_networks_cards() -> None:
    pytest.importorskip("numpy")
    for bad in (-1, "abc", float("nan"), float("inf"), True):
        with pytest.raises(ValueError, match="prior_weight"):
            SearchBot(simulations=10, prior_weight=bad)  # type: ignore[arg-type]
    rules = find_variant("standard").replace(pass_cycle=(PassDirection.HOLD,))
    game = Game(rules, 12)
    rng = random.Random(12)
    checked = differs = 0
    while not game.over and game.deal_index == 0:
        view = seat_view(game, game.to_act()[0])
        if view.phase is Phase.PLAY and view.legal_plays.bit_count() >= 3 and max(view.cards_left) > 2:
            kept, run_score = _distinct_with_network_scores(view, rng)
            if len(kept) > 1:
                # an overwhelming weight plays the network's favourite run, whatever the playouts say
                log: list[int] = []
                card, _ = _spied({"simulations": 30, "prior": 0, "prior_weight": 1e6}, log)._choose_card(
                    view, random.Random(0)
                )
                assert card == max(kept, key=lambda c: (run_score[c], -c))
                assert set(log) == {len(kept)}  # the same playouts: the weight changes only the choice
                plain, _ = _spied({"simulations": 30, "prior": 0}, [])._choose_card(view, random.Random(0))
                differs += plain != card
                checked += 1
        game.apply(RandomBot().act(view, rng))
    assert checked >= 5 and differs >= 1  # the weight did decide some choices the playouts alone made otherwise


def test_the_prior_weight_is_on_by_default_where_the_network_plays() -> None:
    pytest.importorskip("numpy")

    def run(variant: str, **options: object) -> list[object]:
        bots = [SearchBot(simulations=24, **options), RandomBot(), RandomBot(), RandomBot()]  # type: ignore[arg-type]
        return list(_play_deal(variant, 2, bots).actions)

    assert run("standard") == run("standard", prior_weight=4)
    assert run("standard") != run("standard", prior_weight=0)
    assert run("standard", prior=0) == run("standard", prior=0, prior_weight=0)  # prior=0: no network at all
    assert run("trend") == run("trend", prior_weight=4) != run("trend", prior_weight=0)
    assert run("gym") == run("gym", prior_weight=4)
    assert run("kierki") == run("kierki", prior_weight=4)  # no network there: nothing to weigh


def test_the_trees_ask_the_network_only_to_cut_the_cards() -> None:
    """root=tree chooses by its trees' visits, so the weight is not computed for it: the network
    runs only where the prior drops cards (more than ``prior`` of them)."""
    pytest.importorskip("numpy")
    asked: list[int] = []

    class Counting(SearchBot):
        def _prior_scores(self, view: SeatView, cards: list[int]) -> dict[int, float] | None:
            asked.append(len(cards))
            return super()._prior_scores(view, cards)

    bots = [Counting(simulations=24, root="tree", worlds=3), RandomBot(), RandomBot(), RandomBot()]
    _play_deal("standard", 2, bots)
    assert asked and min(asked) > 3
    asked.clear()
    bots[0] = Counting(simulations=24)  # the flat search weighs 2 or 3 cards too
    _play_deal("standard", 2, bots)
    assert min(asked) <= 3


@pytest.mark.parametrize("variant", ["kierki", "turbo", "omnibus"])
def test_search_plays_as_before_where_the_new_rules_were_not_measured(variant: str) -> None:
    def run(**options: object) -> list[object]:
        bots = [SearchBot(simulations=24, **options), RandomBot(), RandomBot(), RandomBot()]  # type: ignore[arg-type]
        return list(_play_deal(variant, 2, bots).actions)

    assert run() == run(root="flat", prior=0, endgame=3)


def test_successive_halving_under_a_time_budget_estimates_the_playouts_it_can_afford() -> None:
    from moonshot.bots.search import Budget

    now = [0.0]
    budget = Budget(lambda: now[0], 100, None)
    now[0] = 0.010
    assert budget.estimate(30) == 300  # 30 playouts in 10 ms: 300 fit in the 100 ms
    assert Budget(lambda: 0.0, None, 70).estimate(5) == 70
    ticks = iter(range(10**6))
    bot = SearchBot(think_ms=40, root="halving", prior=0, clock=lambda: next(ticks) / 1000.0)
    game = Game(find_variant("standard").replace(pass_cycle=(PassDirection.HOLD,)), 3)
    view = seat_view(game, game.to_act()[0])
    while view.legal_plays.bit_count() < 4:
        game.apply(RandomBot().act(view, random.Random(1)))
        view = seat_view(game, game.to_act()[0])
    assert bot.act(view, random.Random(0)) in view.legal


# ---------------------------------------------------------------------- the moon model and the moon penalty
def _position_with_a_lone_taker(variant: str = "standard") -> SeatView:
    """A card decision (of at least two cards) where one other seat alone has taken moon cards."""
    from moonshot.bots.moon import threat_of

    rules = find_variant(variant).replace(pass_cycle=(PassDirection.HOLD,), end=EndRule.DEALS, deals=1)
    for seed in range(200):
        game = Game(rules, seed)
        rng = random.Random(seed)
        while not game.over:
            view = seat_view(game, game.to_act()[0])
            if (
                view.phase is Phase.PLAY
                and view.legal_plays.bit_count() >= 2
                and max(view.cards_left) > 3
                and threat_of(view) >= 0
            ):
                return view
            game.apply(RandomBot().act(view, rng))
    raise AssertionError("no position found")


def test_moon_options_default_to_off_and_are_checked() -> None:
    from moonshot.bots.moon import model_policy

    with pytest.raises(ValueError):
        SearchBot(simulations=10, moon="sometimes")
    view = _position_with_a_lone_taker()
    assert SearchBot(simulations=10).moon == "off"
    assert SearchBot(simulations=10, moon="model").moon == "model"
    assert SearchBot(simulations=10, moon="model")._moon_threat(view) >= 0
    assert SearchBot(simulations=10)._moon_threat(view) == -1
    # the model builds its own rollout for the decision; off, the plain greedy player plays out
    model = SearchBot(simulations=10, moon="model")._card_policy(view)
    assert model.__qualname__ == model_policy(0, [1]).__qualname__
    assert SearchBot(simulations=10)._card_policy(view) is greedy_policy
    assert SearchBot(simulations=10, moon="field")._card_policy(view).__qualname__ == model.__qualname__
    # the penalty (default 0) counts only where another seat alone has taken moon cards
    assert SearchBot(simulations=10)._moon_penalty(view) == 0
    assert SearchBot(simulations=10, moon_penalty=7.5)._moon_penalty(view) == 7.5
    assert SearchBot(simulations=10, moon="off", moon_penalty=7.5)._moon_penalty(view) == 7.5
    start = seat_view(Game(find_variant("standard").replace(pass_cycle=(PassDirection.HOLD,)), 1), 0)
    assert SearchBot(simulations=10, moon_penalty=7.5)._moon_penalty(start) == 0
    bot = make_bot("search", simulations=10, moon="off", moon_penalty=5.0)
    assert isinstance(bot, SearchBot) and bot.moon == "off" and bot.moon_penalty == 5.0


def test_value_guard_turns_the_value_network_off_only_against_a_lone_taker_of_enough_moon_cards() -> None:
    from moonshot.bots.moon import MOON_CARDS, threat_of

    view = _position_with_a_lone_taker()
    taken = (view.taken[threat_of(view)] & MOON_CARDS).bit_count()
    assert taken >= 1
    assert SearchBot(simulations=10)._value_net(view) is not None  # off by default: the network values leaves
    assert SearchBot(simulations=10, value_guard=taken)._value_net(view) is None
    assert SearchBot(simulations=10, value_guard=taken + 1)._value_net(view) is not None
    start = seat_view(Game(find_variant("standard").replace(pass_cycle=(PassDirection.HOLD,)), 1), 0)
    assert SearchBot(simulations=10, value_guard=1)._value_net(start) is not None  # nobody has taken any
    with pytest.raises(ValueError):
        SearchBot(simulations=10, value_guard=-1)
    a = SearchBot(simulations=30, value_guard=1).act(view, random.Random(3))
    assert a == SearchBot(simulations=30, value_guard=1).act(view, random.Random(3)) and a in view.legal


def test_moon_model_and_penalty_play_legal_cards_deterministically() -> None:
    view = _position_with_a_lone_taker()
    for options in ({}, {"moon": "model"}, {"moon": "field"}, {"moon": "model", "moon_penalty": 40.0}):
        a = SearchBot(simulations=30, **options).act(view, random.Random(3))  # type: ignore[arg-type]
        b = SearchBot(simulations=30, **options).act(view, random.Random(3))  # type: ignore[arg-type]
        assert a == b and a in view.legal


def test_moon_by_other_sees_a_moon_shot_by_another_seat_only() -> None:
    from moonshot.bots.playout import Deal, DealRules
    from moonshot.bots.search import _moon_by_other

    moon = parse_card_set(["QS"]) | SUIT_MASKS[2]
    d = Deal(DealRules.of(find_variant("standard"), 0), [0, 0, 0, 0], turn=0, taken=[0, moon, 0, 0])
    assert _moon_by_other(d, 0) and not _moon_by_other(d, 1)
    d2 = Deal(
        DealRules.of(find_variant("standard"), 0),
        [0, 0, 0, 0],
        turn=0,
        taken=[0, moon & ~1 << QUEEN_SPADES, 1 << QUEEN_SPADES, 0],
    )
    assert not _moon_by_other(d2, 0)


def test_the_value_network_scores_the_playouts_at_the_end_of_the_trick() -> None:
    """``value=...``: each playout stops once the trick under way is over and the network values
    the position (a few worlds' at once); with fewer than ``value_cards`` cards left, or
    where no network plays, the playouts run to the end as before."""
    pytest.importorskip("numpy")
    from moonshot.bots import value as value_module
    from moonshot.bots.value import default_value

    for bad in ({"value_mix": 0}, {"value_mix": 1.5}, {"value_mix": True}, {"value_cards": 1}):
        with pytest.raises(ValueError, match="value_"):
            SearchBot(simulations=10, **bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cannot read a value network"):
        SearchBot(simulations=10, value="/nonexistent/value.npz")
    net = default_value()
    seen: list[tuple[int, int, bool]] = []  # (positions in the batch, cards in the leader's hand, a card on the table)
    real = value_module.leaf_costs

    def spy(n: object, deals: list) -> list:  # type: ignore[type-arg]
        seen.extend((len(deals), d.hands[d.turn].bit_count(), bool(d.trick)) for d in deals)
        return real(n, deals)

    value_module.leaf_costs = spy  # type: ignore[assignment]
    try:
        bots = [SearchBot(simulations=24, value="default"), RandomBot(), RandomBot(), RandomBot()]
        game = _play_deal("standard", 2, bots)
        assert seen and all(not on_table and cards >= 4 for _, cards, on_table in seen)
        # a few worlds' leaves a batch: the prior keeps 3 cards a world
        assert 3 < max(n for n, _, _ in seen) <= 3 * VALUE_BATCH_WORLDS
        assert list(_play_deal("standard", 2, [SearchBot(simulations=24, value="default"), *bots[1:]]).actions) == list(
            game.actions
        )  # deterministic
        seen.clear()
        _play_deal("standard", 2, [SearchBot(simulations=24, value="default", value_cards=13), *bots[1:]])
        assert not seen  # no position between tricks holds 13 cards: every playout ran to the end
        _play_deal("kierki", 2, [SearchBot(simulations=24, value="default"), *bots[1:]])
        assert not seen  # no network there
    finally:
        value_module.leaf_costs = real  # type: ignore[assignment]
    assert net is default_value()
    # the network changes the playouts' values (seen without the prior's vote, which at 24
    # playouts against random seats decides most of these cards alone), and a mix is a third search

    def run(**options: object) -> list[object]:
        return [
            list(_play_deal("standard", seed, [SearchBot(simulations=24, **options), *bots[1:]]).actions)  # type: ignore[arg-type]
            for seed in (2, 3, 4, 5)
        ]

    plain, valued = run(value="off", prior_weight=0), run(value="default", prior_weight=0)
    mixed = run(value="default", value_mix=0.5, prior_weight=0)
    assert plain != valued and mixed != plain and mixed != valued
    # the default: the packaged network where the prior is on; prior=0 is still no network at all
    assert run(prior_weight=0) == valued
    assert run(prior=0, prior_weight=0) == run(prior=0, prior_weight=0, value="off")
    assert run(prior=0, prior_weight=0) != run(prior=0, prior_weight=0, value="default")


def test_reply_chooses_the_other_seats_cards_of_the_trick_by_the_value_network() -> None:
    """``reply``: after a root card, each other seat to play in the trick takes the card the
    value network says is best for it (the rest of the trick greedy), not the greedy card."""
    np = pytest.importorskip("numpy")
    from moonshot.bots.playout import Deal, DealRules
    from moonshot.bots.search import _matters, _reply_to_trick_end

    with pytest.raises(ValueError, match="reply"):
        SearchBot(simulations=10, reply="yes")  # type: ignore[arg-type]

    class Leader:
        """A stand-in network: the seat that won the trick (it leads next) costs ``cost``."""

        def __init__(self, cost: float) -> None:
            self.cost = cost

        def predict(self, rows: Any) -> Any:
            out = np.zeros((len(rows), 4))
            out[:, 0] = self.cost
            return out

    hands = [
        parse_card_set(cards.split())
        for cards in (
            "5S 2C 3C 4C 5C 6C",
            "2S AS 2D 3D 4D 5D",
            "3S KS 6D 7D 8D 9D",
            "4S JS 7C 8C 9C TC",
        )
    ]
    rules = DealRules.of(find_variant("standard"), 0)
    held = hands[0] | hands[1] | hands[2] | hands[3]
    start = Deal(rules, hands, turn=0, trick_no=8, played=ALL_CARDS & ~held, broken=True)
    start.play(card_list(parse_card_set(["5S"]))[0])
    for cost, winner, cards in ((100.0, 0, "5S 2S 3S 4S"), (-100.0, 1, "5S AS 3S 4S")):
        d = start.copy()
        _reply_to_trick_end([d], Leader(cost), greedy_policy, random.Random(1), 1.0, 4, _matters(start))
        assert not d.trick and d.turn == winner  # nobody wants the trick / everybody does
        assert d.played & held == parse_card_set(cards.split())
    # in play: legal, deterministic, and not the search without it
    view = _position_with_a_lone_taker()
    a = SearchBot(simulations=30, reply=True).act(view, random.Random(3))
    assert a == SearchBot(simulations=30, reply=True).act(view, random.Random(3)) and a in view.legal
    bots = [RandomBot(), RandomBot(), RandomBot()]
    games = [
        [
            list(_play_deal("standard", seed, [SearchBot(simulations=24, prior_weight=0, reply=r), *bots]).actions)
            for seed in (2, 3, 4, 5)
        ]
        for r in (False, True)
    ]
    assert games[0] != games[1]
    # where no value network plays (Kierki) it changes nothing
    kierki = [list(_play_deal("kierki", 2, [SearchBot(simulations=24, reply=r), *bots]).actions) for r in (False, True)]
    assert kierki[0] == kierki[1]


# ---------------------------------------------------------------------- search-defend
def test_search_defend_is_search_with_the_defence_defaults_each_of_which_may_be_given() -> None:
    from moonshot.bots.search import DEFENCE, DefendingSearchBot
    from moonshot.play.arena import ArenaConfig, arena_bot

    bot = make_bot("search-defend", simulations=10)
    assert isinstance(bot, DefendingSearchBot) and isinstance(bot, SearchBot)
    assert (bot.moon, bot.moon_penalty, bot.value, bot.prior_top, bot.prior_weight) == ("field", 300.0, "off", 6, 2.0)
    assert bot.belief == "default" and bot.inference is True and bot.simulations == 10
    assert sorted(DEFENCE) == ["belief", "inference", "moon", "moon_penalty", "prior", "prior_weight", "value"]
    # an option given wins, and the name it is rated under says only what differs from its defaults
    other = make_bot("search-defend", simulations=10, moon_penalty=50.0, belief=None)
    assert other.moon_penalty == 50.0 and other.belief is None and other.moon == "field"
    assert other.spec.startswith("search-defend") and "--moon-penalty" in other.spec and "--moon " not in other.spec
    assert make_bot("search").spec == "search"  # search's own defaults are untouched
    # the arena hands it a budget as it does search (it reads the budget options off the signature)
    config = ArenaConfig(candidate="search-defend:moon_penalty=100", field="shooter", simulations=7)
    seated = arena_bot(config.candidate, config)
    assert isinstance(seated, DefendingSearchBot) and seated.simulations == 7 and seated.moon_penalty == 100
    with pytest.raises(ValueError, match="moon model"):
        make_bot("search-defend", moon="sometimes")


@pytest.mark.parametrize("variant", ["standard", "gym", "trend", "turbo", "kierki", "omnibus"])
def test_search_defend_plays_whole_deals_in_every_variant(variant: str) -> None:
    """Where the belief or value networks do not apply (Turbo, Kierki, Omnibus) it searches without them."""
    rules = find_variant(variant).replace(pass_cycle=(PassDirection.HOLD,), end=EndRule.DEALS, deals=1)
    game = Game(rules, 11)
    bots = [make_bot("search-defend", simulations=8), RandomBot(), make_bot("shooter"), RandomBot()]
    rng = random.Random(11)
    while not game.over:
        seat = game.to_act()[0]
        view = seat_view(game, seat)
        action = bots[seat].act(view, rng)
        assert game.is_legal(action), (variant, action)
        game.apply(action)


def test_search_defend_decides_a_lone_takers_threat_deterministically() -> None:
    view = _position_with_a_lone_taker()
    a = make_bot("search-defend", simulations=30).act(view, random.Random(3))
    b = make_bot("search-defend", simulations=30).act(view, random.Random(3))
    assert a == b and a in view.legal


_MAKE_AND_PLAY = """
import random, sys
from moonshot.bots.search import SearchBot
from moonshot.core.engine import Game
from moonshot.core.variants import find_variant
from moonshot.core.views import seat_view
bot = SearchBot(think_ms=20)
game = Game(find_variant("standard"), 1)
bot.act(seat_view(game, game.to_act()[0]), random.Random(1))
print("moonshot.kernel" in sys.modules and sys.modules["moonshot.kernel"].is_warm())
"""


def test_making_a_search_bot_never_loads_the_kernel() -> None:
    """A server makes its bots on its event loop: loading the kernel there (seconds the first time
    on a machine, while numba compiles) would stall every table, so making or running a bot never
    does; the server loads it off the loop, the arena before its deals."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import moonshot

    env = {**os.environ, "PYTHONPATH": str(Path(moonshot.__file__).parents[1])}
    done = subprocess.run([sys.executable, "-c", _MAKE_AND_PLAY], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
