"""HeuristicBot: always legal in every variant, sound in set positions, far better than random."""

from __future__ import annotations

import random
import statistics

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from moonshot.bots.base import Bot, answer_claim
from moonshot.bots.heuristic import HeuristicBot, Weights, claim_is_sure
from moonshot.bots.random import RandomBot
from moonshot.core.actions import AcceptClaim, Action, Charge, Claim, Expose, Pass, Play, RejectClaim
from moonshot.core.cards import ALL_CARDS, SUIT_LETTERS, CardSet, card_list, format_card, parse_card, parse_card_set
from moonshot.core.engine import DealSpec, Game, Phase
from moonshot.core.events import DealEnded
from moonshot.core.rules import ClaimFlow, EndRule, PassDirection, Rules
from moonshot.core.variants import KIERKI, STANDARD, TREND, TURBO, VARIANTS
from moonshot.core.views import SeatView, seat_view

BOT = HeuristicBot()
HOLD = (PassDirection.HOLD,)


def cards(text: str) -> CardSet:
    return parse_card_set(text.split())


def deal(partial: dict[int, str], voids: dict[int, str] | None = None) -> tuple[CardSet, CardSet, CardSet, CardSet]:
    """Four 13-card hands: the given cards, the rest dealt low-first to seats not void in the suit."""
    hands = [cards(partial.get(s, "")) for s in range(4)]
    used = hands[0] | hands[1] | hands[2] | hands[3]
    no = {s: {SUIT_LETTERS.index(ch) for ch in v} for s, v in (voids or {}).items()}
    for c in card_list(ALL_CARDS & ~used):
        seat = next(s for s in range(4) if hands[s].bit_count() < 13 and c // 13 not in no.get(s, set()))
        hands[seat] |= 1 << c
    return hands[0], hands[1], hands[2], hands[3]


def position(rules: Rules, hands: tuple[CardSet, ...], plays: str = "", kind: int = 0, leader: int = 0) -> Game:
    """A game on a fixed deal after the given cards (in play order) were played."""
    spec = DealSpec((hands[0], hands[1], hands[2], hands[3]), kind=kind, leader=leader)
    game = Game(rules, 0, [spec] * 8)
    while game.phase in (Phase.CHARGE, Phase.EXPOSE):
        for s in game.to_act():
            game.apply(Charge(s, 0) if game.phase is Phase.CHARGE else Expose(s, 0))
    for text in plays.split():
        game.apply(Play.of(game.turn, parse_card(text)))
    return game


def bot_move(game: Game, seat: int | None = None) -> Action:
    view = seat_view(game, game.turn if seat is None else seat)
    action = BOT.act(view, random.Random(0))
    assert action in view.legal
    return action


def played(game: Game) -> str:
    action = bot_move(game)
    assert isinstance(action, Play)
    return format_card(action.card)


def test_is_a_bot() -> None:
    assert isinstance(BOT, Bot)
    assert BOT.name == "heuristic"


# ---------------------------------------------------------------- legal everywhere
def play_out(rules: Rules, seed: int, bots: list[Bot], max_actions: int = 4000) -> Game:
    game = Game(rules, seed)
    rng = random.Random(seed)
    for _ in range(max_actions):
        if game.over:
            break
        seat = game.to_act()[0]
        view = seat_view(game, seat)
        action = bots[seat].act(view, rng)
        assert action in view.legal, (rules.name, action)
        game.apply(action)
    return game


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_full_games_are_legal_in_every_variant(variant: str) -> None:
    rules = VARIANTS[variant]
    if rules.end is EndRule.SCORE:
        rules = rules.replace(score_limit=40)
    game = play_out(rules, 7, [BOT, BOT, BOT, BOT])
    assert game.over
    game = play_out(rules, 8, [BOT, RandomBot(), BOT, RandomBot()])
    assert game.over


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variant=st.sampled_from(sorted(VARIANTS)), seed=st.integers(0, 10**6), hero=st.integers(0, 3))
def test_legal_against_random_play(variant: str, seed: int, hero: int) -> None:
    rules = VARIANTS[variant]
    if rules.end is EndRule.SCORE:
        rules = rules.replace(score_limit=30)
    bots: list[Bot] = [RandomBot(), RandomBot(), RandomBot(), RandomBot()]
    bots[hero] = BOT
    assert play_out(rules, seed, bots).over


def test_does_not_touch_the_rng_and_is_deterministic() -> None:
    game = Game(STANDARD, 3)
    view = seat_view(game, 0)
    rng = random.Random(5)
    state = rng.getstate()
    assert BOT.act(view, rng) == BOT.act(view, random.Random(99))
    assert rng.getstate() == state


# ---------------------------------------------------------------- passing, charging, exposing
def test_passes_the_queen_with_few_spades() -> None:
    hands = deal({0: "QS 3S 2C 4C 6D 7D 8D 2H 3H 4H 5H 6H 7C"})
    view = seat_view(position(STANDARD, hands), 0)
    action = BOT.act(view, random.Random(0))
    assert isinstance(action, Pass) and action in view.legal
    assert action.cards >> parse_card("QS") & 1


def test_keeps_a_well_guarded_queen_and_passes_high_cards() -> None:
    hands = deal({0: "QS 2S 3S 4S 5S 6S 2H 3H 4H AC KC 2D 3D"})
    view = seat_view(position(STANDARD, hands), 0)
    action = BOT.act(view, random.Random(0))
    assert isinstance(action, Pass)
    assert not action.cards >> parse_card("QS") & 1
    assert action.cards & cards("AC KC")


def test_turbo_keeps_the_jack_of_diamonds_when_passing() -> None:
    hands = deal({0: "JD AS KS QS AH KH QH 2C 3C 4C 5C 6C 7C"})
    view = seat_view(Game(TURBO, 0, [DealSpec(hands)] * 4), 0)
    action = BOT.act(view, random.Random(0))
    assert isinstance(action, Pass)
    assert not action.cards >> parse_card("JD") & 1


def charging_view(hand: str) -> SeatView:
    rules = TURBO.replace(pass_cycle=HOLD)
    game = Game(rules, 0, [DealSpec(deal({0: hand}))] * 4)
    assert game.phase is Phase.CHARGE
    return seat_view(game, 0)


def test_charges_a_guarded_queen_and_nothing_with_a_weak_hand() -> None:
    view = charging_view("QS 2S 3S 4S 5S 2C 3C 4C 5C 6C 7C 8C 9C")
    action = BOT.act(view, random.Random(0))
    assert action == Charge(0, cards("QS"))
    view = charging_view("QS AS 2S AH KH QH JH 2C 3C 4C 5C 6C 7C")
    assert BOT.act(view, random.Random(0)) == Charge(0, 0)


def exposing_view(hand: str) -> SeatView:
    rules = TREND.replace(pass_cycle=HOLD)
    game = Game(rules, 0, [DealSpec(deal({0: hand}))] * 4)
    assert game.phase is Phase.EXPOSE
    return seat_view(game, 0)


def test_trend_exposes_the_ace_of_hearts_only_with_a_safe_hand() -> None:
    safe = exposing_view("AH 2H 3H 4H 5H 2S 3S 4S 2C 3C 4C 2D 3D")
    assert BOT.act(safe, random.Random(0)) == Expose(0, cards("AH"))
    risky = exposing_view("AH KH QH JH TH AS QS 2C 3C 4C 2D 3D 4D")
    assert BOT.act(risky, random.Random(0)) == Expose(0, 0)


# ---------------------------------------------------------------- card play
NO_PASS = STANDARD.replace(pass_cycle=HOLD)


def test_dumps_the_queen_when_void_in_the_led_suit() -> None:
    hands = deal({0: "2C 3C", 1: "QS 2D", 2: "KC 4C", 3: "5C 6C"}, voids={1: "C"})
    # trick 1: E cannot follow and may not throw the queen yet; S wins and leads a club again
    game = position(NO_PASS, hands, "2C 2D KC 5C 4C 6C 3C")
    assert game.turn == 1
    assert played(game) == "QS"


def test_ducks_with_points_on_the_trick() -> None:
    rules = NO_PASS.replace(first_trick_forbidden=0, hearts_must_be_broken=False, two_of_clubs_leads=False)
    hands = deal({0: "9C", 1: "2H", 2: "TC 5C"}, voids={1: "C"})
    game = position(rules, hands, "9C 2H", leader=0)
    assert played(game) == "5C"


def test_last_to_play_on_a_clean_trick_wins_with_the_highest_card() -> None:
    rules = NO_PASS.replace(first_trick_forbidden=0, hearts_must_be_broken=False, two_of_clubs_leads=False)
    hands = deal({0: "5D", 1: "7D", 2: "8D", 3: "AD KD 3D"})
    game = position(rules, hands, "5D 7D 8D", leader=0)
    assert played(game) == "AD"


def test_does_not_take_the_queen_with_a_higher_spade() -> None:
    rules = NO_PASS.replace(first_trick_forbidden=0, two_of_clubs_leads=False)
    hands = deal({0: "4S", 1: "QS", 2: "AS 2S"})
    game = position(rules, hands, "4S QS", leader=0)
    assert played(game) == "2S"


def test_kierki_no_king_of_hearts_dumps_the_king_when_void() -> None:
    hands = deal({0: "2C", 1: "KH 2D"}, voids={1: "C"})
    game = position(KIERKI, hands, "2C", kind=5, leader=0)
    assert game.turn == 1
    assert played(game) == "KH"


def test_kierki_no_tricks_ducks_a_clean_trick() -> None:
    hands = deal({0: "9D", 1: "KD 4D"}, voids={1: "D"})
    game = position(KIERKI, hands, "9D", kind=1, leader=0)
    assert played(game) == "4D"


def test_omnibus_takes_the_jack_of_diamonds_when_it_is_safe() -> None:
    rules = VARIANTS["omnibus"].replace(pass_cycle=HOLD, first_trick_forbidden=0, two_of_clubs_leads=False)
    hands = deal({0: "5D", 1: "JD", 2: "9D", 3: "QD 2D"})
    game = position(rules, hands, "5D JD 9D", leader=0)
    assert played(game) == "QD"


def moon_position(first_trick: str) -> Game:
    rules = NO_PASS.replace(first_trick_forbidden=0, two_of_clubs_leads=False, hearts_must_be_broken=False)
    hands = deal({3: "AS KH QH 5H", 0: "QS 4S AH 2H 3H 4H", 1: "2S 6H 8H TH", 2: "3S 7H 9H JH"})
    return position(rules, hands, f"{first_trick} KH 2H 6H 7H QH 3H 8H 9H 5H", leader=3)


def test_stops_a_moon_by_taking_a_heart() -> None:
    # W has taken the queen and eight hearts, nobody else has a point: N spends the AH to stop him
    game = moon_position("AS QS 2S 3S")
    assert game.turn == 0
    assert played(game) == "AH"


def test_ducks_the_same_heart_when_no_moon_threatens() -> None:
    game = moon_position("AS 4S 2S 3S")
    assert played(game) == "4H"


def tc_position(multiplier: int) -> Game:
    rules = TREND.replace(
        pass_cycle=HOLD,
        first_trick_forbidden=0,
        two_of_clubs_leads=False,
        hearts_must_be_broken=False,
        ten_of_clubs_multiplier=multiplier,
    )
    hands = deal({0: "AH 5D TC 9C", 1: "2H KD 8C", 2: "3H 2D 7C", 3: "4H 3D 6C"}, voids={0: "C"})
    # N takes a heart trick, E wins the diamond and leads a club: N, last, wins it either way
    return position(rules, hands, "2H 3H 4H AH 5D KD 2D 3D 8C 7C 6C", leader=1)


def test_trend_keeps_off_the_ten_of_clubs_once_it_has_points() -> None:
    assert played(tc_position(2)) == "9C"
    assert played(tc_position(1)) == "TC"  # without the multiplier the higher card goes first


def test_turns_to_shooting_the_moon_when_it_is_nearly_made() -> None:
    rules = NO_PASS.replace(first_trick_forbidden=0, two_of_clubs_leads=False, hearts_must_be_broken=False)
    hands = deal({0: "AS AH KH QH JH AC KC QC AD KD QD 2C 2D", 1: "QS 2H", 2: "2S 3H", 3: "3S 4H"})
    # N has taken the queen and four hearts and holds masters everywhere but 2C and 2D
    game = position(rules, hands, "AS QS 2S 3S AH 2H 3H 4H", leader=0)
    view = seat_view(game, 0)
    shooter = BOT.act(view, random.Random(0))
    assert isinstance(shooter, Play) and format_card(shooter.card) not in ("2C", "2D")
    careful = HeuristicBot(Weights(shoot=False)).act(view, random.Random(0))
    assert isinstance(careful, Play) and format_card(careful.card) in ("2C", "2D")


# ---------------------------------------------------------------- claims
CLAIMING = TURBO.replace(pass_cycle=HOLD, two_of_clubs_leads=False, first_trick_forbidden=0)
BLOCKING = CLAIMING.replace(claim_flow=ClaimFlow.BLOCKING)


def test_claims_when_every_card_is_a_sure_winner() -> None:
    hands = deal({0: "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S"})
    for rules in (CLAIMING, BLOCKING):
        game = position(rules, hands, leader=0)
        assert bot_move(game, 0) == Claim(0)
        game.apply(Claim(0))
        for seat in (1, 2, 3):
            assert BOT.answer_claim(seat_view(game, seat), 0, random.Random(0))
            assert answer_claim(RandomBot(), seat_view(game, seat), 0, random.Random(0))
        if rules is BLOCKING:  # play waits: the bot is asked for its answer
            for seat in (1, 2, 3):
                assert bot_move(game, seat) == AcceptClaim(seat, 0)
        else:  # play goes on: the claimer is asked for a card, not for another claim
            assert isinstance(bot_move(game, 0), Play)


def test_never_claims_with_a_loser_and_rejects_such_a_claim() -> None:
    hands = deal({0: "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2C"})
    for rules in (CLAIMING, BLOCKING):
        game = position(rules, hands, leader=0)
        assert bot_move(game, 0) != Claim(0)
        game.apply(Claim(0))
        assert not BOT.answer_claim(seat_view(game, 1), 0, random.Random(0))
        assert not RandomBot().answer_claim(seat_view(game, 1), 0, random.Random(0))
        if rules is BLOCKING:
            assert bot_move(game, 1) == RejectClaim(1, 0)
            assert RandomBot().act(seat_view(game, 1), random.Random(0)) == RejectClaim(1, 0)


def test_a_turned_down_claim_is_not_made_again_before_a_card_is_played() -> None:
    # concurrent claims allow claiming again at once; the bot waits until its hand changed
    hands = deal({0: "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S"})
    game = position(CLAIMING, hands, leader=0)
    game.apply(Claim(0))
    game.apply(RejectClaim(1, 0))
    assert Claim(0) in game.legal_actions(0)
    assert isinstance(bot_move(game, 0), Play)
    game.apply(bot_move(game, 0))
    while game.turn != 0:
        game.apply(bot_move(game))
    assert bot_move(game, 0) == Claim(0)  # a trick later, with a smaller hand


def test_bots_without_answer_claim_judge_by_claim_is_sure() -> None:
    class Plain:
        name = "plain"

        def act(self, view: SeatView, rng: random.Random) -> Action:
            return view.legal[0]

    sure = position(CLAIMING, deal({0: "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S"}), leader=0)
    unsure = position(CLAIMING, deal({0: "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2C"}), leader=0)
    for game, expected in ((sure, True), (unsure, False)):
        game.apply(Claim(0))
        assert answer_claim(Plain(), seat_view(game, 2), 0, random.Random(0)) is expected


def test_claim_checks_the_trick_in_progress() -> None:
    # W has led the 2S and N, to play next, claims: it wins this trick with a spade, then leads winners
    spades = "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S"
    game = position(CLAIMING, deal({0: spades + " AC", 3: "2S"}), "2S", leader=3)
    assert claim_is_sure(seat_view(game, 1), 0, game.hands[0])
    game = position(CLAIMING, deal({0: spades + " KC", 3: "2S"}), "2S", leader=3)
    assert not claim_is_sure(seat_view(game, 1), 0, game.hands[0])  # the AC is still out
    # a led suit the claimer cannot follow loses the trick
    game = position(CLAIMING, deal({0: spades + " 2S", 3: "2C"}), "2C", leader=3)
    assert not claim_is_sure(seat_view(game, 1), 0, game.hands[0])


# ---------------------------------------------------------------- strength
def points_per_deal(rules: Rules, seeds: range) -> tuple[list[int], list[float]]:
    hero: list[int] = []
    rest: list[float] = []
    for seed in seeds:
        for seat in range(4):
            bots: list[Bot] = [RandomBot(), RandomBot(), RandomBot(), RandomBot()]
            bots[seat] = BOT
            game = Game(rules, seed)
            rng = random.Random(seed)
            while not game.over and len(hero) < 10**6:
                s = game.to_act()[0]
                game.apply(bots[s].act(seat_view(game, s), rng))
            for e in game.log:
                if isinstance(e, DealEnded):
                    hero.append(e.points[seat])
                    rest.append((sum(e.points) - e.points[seat]) / 3)
    return hero, rest


def test_beats_random_play_by_a_wide_margin() -> None:
    hero, rest = points_per_deal(STANDARD.replace(score_limit=60), range(8))
    assert len(hero) >= 150
    assert statistics.fmean(hero) < 4.0
    assert statistics.fmean(hero) < statistics.fmean(rest) - 3.0
