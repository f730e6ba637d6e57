"""The review's evaluation of one decision: constructed positions where one option is clearly worse,
reproducibility, and that it reads nothing but the seat's information (hypothesis)."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gamekit import c, cs, deal, pass_all, play
from moonshot.bots.review import (
    BLUNDER,
    DEFAULT_WORLDS,
    Evaluation,
    decision_kind,
    evaluate,
    grade,
    load_kernel,
)
from moonshot.bots.sampling import sample_hands
from moonshot.core.actions import Charge, Expose, Pass, Play
from moonshot.core.cards import ALL_CARDS, card_list
from moonshot.core.engine import DealSpec, Game
from moonshot.core.rules import PassDirection
from moonshot.core.variants import find_variant
from moonshot.core.views import SeatView, seat_view

STANDARD = find_variant("standard")
# no passing, and the leader chosen by the deal: a position is a few scripted tricks away
HOLD = STANDARD.replace(pass_cycle=(PassDirection.HOLD,), two_of_clubs_leads=False)
N = 0


@pytest.fixture(scope="module", autouse=True)
def _kernel() -> None:
    load_kernel()


def _view(game: Game, seat: int = N) -> SeatView:
    view = seat_view(game, seat)
    assert seat in game.to_act()
    return view


def _hold_view(spec: DealSpec, moves: str) -> SeatView:
    """North's view of HOLD's deal ``spec`` after the cards ``moves`` (a scripted position)."""
    game = Game(HOLD, 0, [spec])
    play(game, moves)
    return _view(game)


def _expected(ev: Evaluation, label: str) -> float:
    return next(o.expected for o in ev.options if o.label == label)


def test_grade_thresholds_in_order() -> None:
    assert grade(0.0) == "best"
    assert grade(0.2) == "good"
    assert grade(1.0) == "inaccuracy"
    assert grade(2.0) == "mistake"
    assert grade(BLUNDER) == "blunder"


def test_playing_the_queen_under_a_trick_you_win_is_a_blunder() -> None:
    # trick 2: E leads 5S, S 2S, W 3S; North holds QS and 4S: the queen wins its own 13 points,
    # the four ducks under the five (and North, out of diamonds, has a place to slough the queen)
    spec = deal(
        "QS 4S 2D 2C 3C 4C 5C 6C 7C 8C 9C TC JC",
        "5S AD 3D 4D 5D 6D 7D QC KC AC 2H 3H 4H",
        "2S 6S 7S 8S 9S TS 8D 9D TD 5H 6H 7H 8H",
        "3S JS KS AS JD QD KD 9H TH JH QH KH AH",
        leader=1,
    )
    ev = evaluate(_hold_view(spec, "AD 8D JD 2D  5S 2S 3S"), simulations=200, seed=1)
    assert ev.kind == "play" and ev.complete
    labels = [o.label for o in ev.options]
    assert labels[0] == "4S"
    assert labels.index("QS") > labels.index("4S")
    cost = ev.cost(Play.of(N, c("QS")))
    assert cost >= BLUNDER and grade(cost) == "blunder"
    assert ev.cost(Play.of(N, c("4S"))) == 0.0
    assert all(o.worlds == 200 for o in ev.options)


def test_ducking_a_heart_lets_another_seat_shoot_the_moon() -> None:
    # West took every trick so far (the queen too), and East and South have shown they hold no
    # hearts: West holds every heart North does not see. West leads 3H: North's 4H stops the
    # moon, its 2H lets West run the rest (26 points to North)
    spec = deal(
        "2H 4H 5H 2C 3C 4C 5C 6C 2D 3D 4D 5D 6D",
        "2S 3S 4S 5S 6S 7S 8S 9S TS JS 7C 8C 9C",
        "TC JC QC KC AC 7D 8D 9D TD JD QD KD AD",
        "AS KS QS 3H 6H 7H 8H 9H TH JH QH KH AH",
        leader=3,
    )
    ev = evaluate(_hold_view(spec, "AS 2C 2S 7D  KS 3C 3S 8D  QS 4C 4S 9D  AH 5H 5S TD  3H"), simulations=200, seed=2)
    duck = next(o for o in ev.options if o.label == "2H")
    stop = next(o for o in ev.options if o.label == "4H")
    assert duck.moon_against > 0.9 and stop.moon_against < 0.1
    assert ev.options[0].label in ("4H", "5H")
    assert ev.cost(Play.of(N, c("2H"))) >= BLUNDER
    assert duck.expected > 20 and stop.expected < 10


def test_a_low_heart_that_gives_up_ones_own_moon_is_a_blunder() -> None:
    # North took the spades (the queen too) and AH over West's 6H; West holds the 4H and 5H that
    # are left (East and South have shown no hearts): a high heart draws them and the moon is
    # North's (0 points), a low one lets West win a trick with a heart (North keeps its 15)
    spec = deal(
        "AS KS QS 2H 3H 7H 8H 9H TH JH QH KH AH",
        "2S 3S 4S 5S 6S 7S 8S 9S TS JS 7C 8C 9C",
        "TC JC QC KC AC 7D 8D 9D TD JD QD KD AD",
        "4H 5H 6H 2C 3C 4C 5C 6C 2D 3D 4D 5D 6D",
        leader=0,
    )
    ev = evaluate(_hold_view(spec, "AS 2S 7D 2C  KS 3S 8D 3C  QS 4S 9D 4C  AH 5S TD 6H"), simulations=100, seed=6)
    best = ev.options[0]
    assert best.moon_for == 1.0 and best.expected == 0.0  # the shooter's moon: no points
    low = ev.option(Play.of(N, c("3H")))
    assert low is not None and low.moon_for == 0.0 and low.expected == 15.0
    assert grade(ev.cost(Play.of(N, c("2H")))) == "blunder"


def test_leading_into_a_void_that_holds_the_queen_is_a_blunder() -> None:
    # North passed the queen to East, and East (the next seat) has shown no diamonds: leading the
    # ace of diamonds wins a trick East sloughs the queen on; a low club or spade is safe
    spec = deal(
        "AD KD 3C 4C 5C 2S 3S 4S 3H 4H QS 2H 2C",
        "6S 7S 8S 7C 8C 9C TC 6H 7H 8H JC 2D 3D",
        "4D 5D 6D 7D 8D 9D TD JD QD AC QC KC AH",
        "9S TS JS KS AS 9H TH JH QH KH 5S 5H 6C",
    )
    game = Game(STANDARD, 0, [spec])
    pass_all(game, ["QS 2H 2C", "JC 2D 3D", "QC KC AH", "5S 5H 6C"])
    play(game, "2C AC KC 3C  2D 9S KD 7C")
    view = _view(game)
    assert view.voids[1] >> 1 & 1 and view.known_cards[1] >> c("QS") & 1  # East: no diamonds, the queen
    ev = evaluate(view, simulations=200, seed=3)
    assert ev.options[-1].label == "AD"
    assert ev.options[0].label in ("4C", "5C", "6C", "2S", "3S", "4S", "5S")
    assert ev.cost(Play.of(N, c("AD"))) >= BLUNDER
    assert grade(ev.cost(Play.of(N, c("4C")))) in ("best", "good")


def test_the_same_seed_gives_the_same_evaluation_and_another_seed_other_worlds() -> None:
    game = Game(STANDARD, 5)
    view = _view(game)
    a = evaluate(view, simulations=60, seed=9)
    b = evaluate(view, simulations=60, seed=9)
    assert a == b
    assert a.kind == "pass" and not a.complete and "286" in a.note
    other = evaluate(view, simulations=60, seed=10)
    assert [o.expected for o in other.options] != [o.expected for o in a.options]


def test_the_pass_made_is_valued_even_outside_the_candidates() -> None:
    game = Game(STANDARD, 5)
    view = _view(game)
    low = card_list(view.hand)[:3]
    action = Pass(N, sum(1 << x for x in low))
    ev = evaluate(view, simulations=30, seed=0, also=[action])
    assert ev.option(action) is not None
    assert ev.cost(action) >= 0.0


def test_budget_options() -> None:
    game = Game(STANDARD, 5)
    view = _view(game)
    with pytest.raises(ValueError, match="simulations"):
        evaluate(view, simulations=0)
    with pytest.raises(ValueError, match="think_ms"):
        evaluate(view, think_ms=0)
    ticks = iter(range(0, 10_000))
    ev = evaluate(view, think_ms=5, clock=lambda: next(ticks) / 1000.0)
    assert 1 <= ev.worlds < DEFAULT_WORLDS


def test_nothing_to_review_is_refused() -> None:
    game = Game(STANDARD, 5)
    for s in range(4):
        game.apply(Pass(s, sum(1 << x for x in card_list(seat_view(game, s).hand)[:3])))
    view = seat_view(game, 1 if game.turn != 1 else 2)
    assert decision_kind(view) is None
    with pytest.raises(ValueError, match="no decision"):
        evaluate(view)


# ------------------------------------------------------------ the variants search plays
def _first_decisions(rules_name: str, kinds: set[str], seed: int = 2) -> list[tuple[SeatView, str]]:
    rules = find_variant(rules_name)
    game = Game(rules, seed)
    rng = random.Random(seed)
    found: list[tuple[SeatView, str]] = []
    seen: set[str] = set()
    while not game.over and game.deal_index < 4 and seen != kinds:
        seat = game.to_act()[0]
        view = seat_view(game, seat)
        kind = decision_kind(view)
        if kind is not None and kind not in seen:
            seen.add(kind)
            found.append((view, kind))
        game.apply(rng.choice(list(view.legal)))
    return found


@pytest.mark.parametrize(
    ("variant", "kinds"),
    [
        ("standard", {"pass", "play"}),
        ("gym", {"pass", "play"}),
        ("trend", {"pass", "play", "expose"}),
        ("omnibus", {"pass", "play"}),
        ("turbo", {"pass", "play", "charge"}),
        ("kierki", {"play"}),
    ],
)
def test_every_variant_search_plays_is_reviewed(variant: str, kinds: set[str]) -> None:
    found = _first_decisions(variant, kinds)
    assert {k for _, k in found} == kinds
    for view, kind in found:
        ev = evaluate(view, simulations=20, seed=0)
        assert ev.kind == kind
        assert ev.options and all(o.worlds == 20 for o in ev.options)
        exp = [o.expected for o in ev.options]
        assert exp == sorted(exp)
        assert all(0.0 <= o.moon_for <= 1.0 and 0.0 <= o.moon_against <= 1.0 for o in ev.options)
        if kind == "play":
            assert sorted(o.action.card for o in ev.options if isinstance(o.action, Play)) == card_list(
                view.legal_plays
            )
        if kind in ("charge", "expose"):
            held = (view.rules.chargeable if kind == "charge" else view.rules.exposable) & view.hand
            assert len(ev.options) == 2 ** held.bit_count()
            make = Charge if kind == "charge" else Expose
            assert ev.option(make(view.seat, 0)) is not None


# ------------------------------------------------------------ only the seat's information
def _script(seed: int, stop_after: int) -> tuple[list[Play], Game]:
    """Play HOLD's first deal with the lowest legal card until North's ``stop_after``-th decision."""
    game = Game(HOLD, seed, [DealSpec(_shuffled(seed), leader=1)])
    actions: list[Play] = []
    decisions = 0
    while True:
        seat = game.to_act()[0]
        legal = game.legal_play_mask(seat)
        if seat == N and legal & (legal - 1):
            decisions += 1
            if decisions > stop_after:
                return actions, game
        a = Play.of(seat, card_list(legal)[len(card_list(legal)) // 2])
        actions.append(a)
        game.apply(a)


def _shuffled(seed: int) -> tuple[int, int, int, int]:
    cards = list(range(52))
    random.Random(seed).shuffle(cards)
    return tuple(sum(1 << x for x in cards[13 * s : 13 * s + 13]) for s in range(4))  # type: ignore[return-value]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stop=st.integers(0, 6), redeal=st.integers(0, 2**32 - 1))
def test_the_evaluation_reads_only_the_seats_information(stop: int, redeal: int) -> None:
    # the same play from North's seat, the other seats' unplayed cards dealt again in any way
    # consistent with what North knows (its hand, the cards played, the voids shown, the counts)
    actions, game = _script(11, stop)
    view = _view(game)
    played_by = [0, 0, 0, 0]
    for a in actions:
        played_by[a.seat] |= 1 << a.card
    unseen = ALL_CARDS & ~view.hand & ~view.played
    hands = sample_hands(N, view.hand, unseen, view.cards_left, view.known_cards, view.voids, random.Random(redeal))
    spec = DealSpec(tuple(hands[s] | played_by[s] for s in range(4)), leader=1)  # type: ignore[arg-type]
    other = Game(HOLD, 11, [spec])
    for a in actions:
        other.apply(a)
    view2 = _view(other)
    assert evaluate(view2, simulations=40, seed=4) == evaluate(view, simulations=40, seed=4)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(others=st.permutations(list(range(39))))
def test_a_pass_is_valued_from_the_seats_own_hand_alone(others: list[int]) -> None:
    # North's hand fixed, the other 39 cards dealt to East, South and West in any order
    mine = cs("2C 9C QC 3D TD KD 4H 8H JH AH 5S QS KS")
    rest = card_list(ALL_CARDS & ~mine)
    hands = [mine] + [sum(1 << rest[i] for i in others[13 * s : 13 * s + 13]) for s in range(3)]
    game = Game(STANDARD, 0, [DealSpec(tuple(hands))])  # type: ignore[arg-type]
    view = _view(game)
    ev = evaluate(view, simulations=30, seed=5, also=[Pass(N, cs("2C 9C QC"))])
    baseline = Game(
        STANDARD, 0, [DealSpec((mine, *(sum(1 << x for x in rest[13 * s : 13 * s + 13]) for s in range(3))))]
    )
    assert ev == evaluate(_view(baseline), simulations=30, seed=5, also=[Pass(N, cs("2C 9C QC"))])
    assert ev.kind == "pass" and ev.option(Pass(N, cs("2C 9C QC"))) is not None
