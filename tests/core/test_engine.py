"""The engine: golden deals scored by hand, every variant's special rules, illegal actions, invariants.

Golden deals use :class:`DealSpec` so the cards are fixed; the arithmetic behind every expected
score is written next to it. Random games (hypothesis seeds) check the invariants every deal of
every variant must keep.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import moonshot
from gamekit import (
    SUIT_PER_SEAT,
    c,
    charge,
    cs,
    deal,
    lowest_play,
    pass_all,
    play,
    play_random_game,
    play_seated,
    random_action,
    state,
)
from moonshot.core.actions import AcceptClaim, Charge, Claim, Expose, Pass, Play, RejectClaim
from moonshot.core.cards import ALL_CARDS, QUEEN_SPADES, TWO_CLUBS, card_list
from moonshot.core.engine import DealSpec, Game, IllegalAction, Phase, keyed_permutation, replay
from moonshot.core.events import (
    SPECTATOR,
    CardPlayed,
    Charged,
    ChargesRevealed,
    ChargingEnded,
    ChargingStarted,
    ClaimAnswered,
    ClaimMade,
    ClaimSucceeded,
    DealEnded,
    DealStarted,
    Exposed,
    GameEnded,
    GameStarted,
    HandDealt,
    PassReceived,
    PassSent,
    TrickEnded,
    TrickStarted,
)
from moonshot.core.refusals import REASON_CODES
from moonshot.core.rules import (
    ChargingOrder,
    ClaimFlow,
    EndRule,
    MoonRule,
    PassDirection,
    Rules,
    Scoring,
    card_points,
    score_deal,
)
from moonshot.core.variants import GYM, KIERKI, OMNIBUS, STANDARD, TREND, TURBO, TURBO_VARIANTS, VARIANTS, find_variant
from turbo_records import RECORDED_TURBO

HOLD = (PassDirection.HOLD,)
N, E, S, W = 0, 1, 2, 3


def no_pass(rules: Rules) -> Rules:
    """The same rules without passing, so a golden deal is played as dealt."""
    return rules.replace(pass_cycle=HOLD)


def phase(game: Game) -> Phase:
    return game.phase


def ended(game: Game) -> list[DealEnded]:
    return [e for e in game.log if isinstance(e, DealEnded)]


def play_lowest_until_deal_ends(game: Game) -> DealEnded:
    d = game.deal_index
    while game.deal_index == d and not game.over:
        lowest_play(game)
    return ended(game)[-1]


def deal_tricks(game: Game, deal_index: int = 0) -> list[TrickEnded]:
    """The tricks of one deal, from the log (``game.tricks`` is reset when the next deal starts)."""
    out, current = [], -1
    for e in game.log:
        if isinstance(e, DealStarted):
            current = e.deal
        elif isinstance(e, TrickEnded) and current == deal_index:
            out.append(e)
    return out


def winners_of(game: Game, deal_index: int = 0) -> list[int]:
    return [t.winner for t in deal_tricks(game, deal_index)]


# Rotating blocks: in each suit one seat holds four cards and the others three, ranks dealt
# round-robin (N clubs 2 6 T A, E 3 7 J, S 4 8 Q, W 5 9 K; the next suit starts one seat later).
ROTATING = deal(
    "2C 6C TC AC 5D 9D KD 4H 8H QH 3S 7S JS",
    "3C 7C JC 2D 6D TD AD 5H 9H KH 4S 8S QS",
    "4C 8C QC 3D 7D JD 2H 6H TH AH 5S 9S KS",
    "5C 9C KC 4D 8D QD 3H 7H JH 2S 6S TS AS",
)
# Thirteen tricks, leader first, with the winner of each worked out by hand.
ROTATING_TRICKS = [
    ("2C 3C 4C 5C", W),  # 1 N leads 2C; W's 5C wins
    ("2S 3S 4S 5S", S),  # 2
    ("3D 4D 5D 6D", E),  # 3
    ("7C 8C 9C TC", N),  # 4 N takes TC
    ("7S 8S 9S TS", W),  # 5
    ("8D 9D TD JD", S),  # 6 S wins with its own JD
    ("QC KC AC JC", N),  # 7 S leads QC, W KC, N AC, E JC
    ("JS QS KS AS", W),  # 8 E must follow with QS: W takes 13
    ("6S 4H 2D 2H", W),  # 9 W leads 6S; N, E, S are void: 4H, 2H to W
    ("3H 8H 5H 6H", N),  # 10 hearts are broken; N's 8H wins 4 hearts
    ("6C 9H TH 7H", N),  # 11 N's last club; three hearts
    ("KD AD 7D QD", E),  # 12
    ("KH AH JH QH", S),  # 13 four hearts to S
]


def play_rotating(game: Game) -> None:
    for number, (cards, winner) in enumerate(ROTATING_TRICKS, 1):
        trick = [e for e in play(game, cards) if isinstance(e, TrickEnded)]
        assert [(t.trick, t.winner) for t in trick] == [(number, winner)]


# ============================================================== standard
def test_a_game_starts_with_the_deal_and_the_pass() -> None:
    g = Game(STANDARD, seed=5)
    assert isinstance(g.log[0], GameStarted) and g.log[0].seed == 5
    assert isinstance(g.log[1], DealStarted) and g.log[1].direction is PassDirection.LEFT
    dealt = [e for e in g.log if isinstance(e, HandDealt)]
    assert [e.seat for e in dealt] == [0, 1, 2, 3]
    assert sum(e.cards for e in dealt) == ALL_CARDS and all(e.cards.bit_count() == 13 for e in dealt)
    assert (g.phase, g.to_act(), g.deal_index, g.version) == (Phase.PASS, (0, 1, 2, 3), 0, len(g.log))


def test_same_seed_same_deals_and_each_deal_independent_of_the_play_before() -> None:
    a, b = Game(STANDARD, 11), Game(STANDARD, 11)
    assert a.hands == b.hands and a.hands != Game(STANDARD, 12).hands
    # deal 1 of two different games with the same seed is the same whatever was played in deal 0
    g1 = play_random_game(STANDARD, 11, max_deals=1)
    g2 = Game(STANDARD, 11)
    rng = random.Random(99)
    while g2.deal_index < 1:
        g2.apply(random_action(g2, rng))
    assert g1.dealt == g2.dealt


def test_a_seed_deals_what_it_always_dealt() -> None:
    # Pinned: stored games, exports and published results name their deals by seed; a change to
    # the dealing (keyed_permutation or its key) would re-deal every one of them.
    assert [hex(h) for h in Game(STANDARD, 1).dealt] == [
        "0x610454c40086",
        "0x10418a1283108",
        "0x202e10210c070",
        "0xc980208030e01",
    ]
    assert Game(STANDARD, 1).dealt == Game(Rules(), 1).dealt  # the rules do not change the cards


@given(st.text(), st.integers(min_value=1, max_value=52))
def test_a_keyed_permutation_is_a_permutation_fixed_by_its_key(key: str, n: int) -> None:
    p = keyed_permutation(key, n)
    assert sorted(p) == list(range(n)) and keyed_permutation(key, n) == p
    # the engine takes the factorial digits a word at a time; one digit at a time is the same
    x = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=64).digest(), "little")
    expected = list(range(n))
    for i in range(n - 1, 0, -1):
        x, j = divmod(x, i + 1)
        expected[i], expected[j] = expected[j], expected[i]
    assert p == expected


@given(st.integers(min_value=0, max_value=2**40), st.integers(min_value=0, max_value=7))
def test_each_deal_is_the_permutation_of_its_key(seed: int, deal: int) -> None:
    g = Game(Rules(pass_cycle=(PassDirection.HOLD,), score_limit=10**6), seed)
    while g.deal_index < deal:  # play out deals (highest legal card) until the wanted one is dealt
        g.apply(Play.of(g.turn, g.legal_play_mask(g.turn).bit_length() - 1))
    deck = keyed_permutation(f"moonshot:{seed}:{deal}:deal", 52)
    assert g.dealt == [sum(1 << c for c in deck[13 * s : 13 * s + 13]) for s in range(4)]


def _chi_square(counts: list[int], expected: float) -> float:
    return sum((k - expected) ** 2 / expected for k in counts)


def test_every_order_of_a_small_permutation_is_equally_likely() -> None:
    orders: dict[tuple[int, ...], int] = {}
    for i in range(48_000):
        p = tuple(keyed_permutation(f"uniformity:{i}", 4))
        orders[p] = orders.get(p, 0) + 1
    assert len(orders) == 24
    # 23 degrees of freedom: 63.97 is the 1 - 1e-5 quantile (the keys are fixed: no flakes)
    assert _chi_square(list(orders.values()), 2_000) < 63.97


def test_every_card_goes_to_every_seat_equally_often_and_hands_are_not_clustered() -> None:
    deals = 4_000
    seat_of_card = [[0] * 4 for _ in range(52)]
    neighbours_together = 0  # cards c and c + 1 in one hand: 12/51 of the time when uniform
    for d in range(deals):
        hands = Game(STANDARD, d).dealt
        for s, h in enumerate(hands):
            for card in card_list(h):
                seat_of_card[card][s] += 1
            neighbours_together += (h & h >> 1 & ~(1 << 51)).bit_count()
    # 52 x 4 table with 156 degrees of freedom: 243.06 is the 1 - 1e-5 quantile
    assert _chi_square([k for row in seat_of_card for k in row], deals / 4) < 243.06
    expected = deals * 51 * 12 / 51
    assert abs(neighbours_together - expected) < 5 * (deals * 51 * (12 / 51) * (39 / 51)) ** 0.5


def test_passing_left_moves_three_cards_and_reports_them() -> None:
    g = Game(STANDARD, 0, [ROTATING])
    pass_all(g, ["2C 6C TC", "3C 7C JC", "4C 8C QC", "5C 9C KC"])
    # left: N -> E -> S -> W -> N
    assert g.hands[E] & cs("2C 6C TC") == cs("2C 6C TC")
    assert g.hands[N] & cs("5C 9C KC") == cs("5C 9C KC")
    assert g.received == [cs("5C 9C KC"), cs("2C 6C TC"), cs("3C 7C JC"), cs("4C 8C QC")]
    got = [e for e in g.log if isinstance(e, PassReceived)]
    assert [(e.seat, e.source) for e in got] == [(0, 3), (1, 0), (2, 1), (3, 2)]
    sent = [e for e in g.log if isinstance(e, PassSent)]
    assert [(e.seat, e.to, e.count) for e in sent] == [(0, 1, 3), (1, 2, 3), (2, 3, 3), (3, 0, 3)]
    # E now holds 2C and leads
    assert (g.phase, g.to_act(), g.legal_play_mask(E)) == (Phase.PLAY, (E,), cs("2C"))


@pytest.mark.parametrize(("deal_index", "offset"), [(1, 3), (2, 2)])
def test_pass_right_and_across(deal_index: int, offset: int) -> None:
    g = Game(STANDARD.replace(pass_cycle=STANDARD.pass_cycle[deal_index:]), 3)
    hands = list(g.hands)
    chosen = [sum(1 << x for x in card_list(h)[:3]) for h in hands]
    for s in range(4):
        g.apply(Pass(s, chosen[s]))
    for s in range(4):
        assert g.hands[(s + offset) % 4] & chosen[s] == chosen[s]


def test_every_three_card_pass_is_offered() -> None:
    g = Game(STANDARD, 0, [ROTATING])
    options = g.legal_actions(N)
    assert len(options) == 286 == len(set(options))  # 13 choose 3
    assert all(isinstance(a, Pass) and a.cards.bit_count() == 3 and a.cards & ~g.hands[N] == 0 for a in options)
    g.apply(options[0])
    assert g.legal_actions(N) == [] and g.to_act() == (E, S, W)


def test_hold_deal_goes_straight_to_play_with_the_two_of_clubs() -> None:
    g = Game(no_pass(STANDARD), 0, [ROTATING])
    assert (g.phase, g.turn, g.trick_no, g.legal_play_mask(N)) == (Phase.PLAY, N, 1, cs("2C"))
    assert isinstance(g.log[-1], TrickStarted) and (g.log[-1].trick, g.log[-1].leader) == (1, N)


def test_standard_golden_plain_deal() -> None:
    g = Game(no_pass(STANDARD), 0, [ROTATING])
    play_rotating(g)
    # N: trick 10 (3H 8H 5H 6H) 4 + trick 11 (9H TH 7H) 3 = 7
    # E: no hearts, no QS = 0
    # S: trick 13 (KH AH JH QH) = 4
    # W: trick 8 QS 13 + trick 9 (4H 2H) 2 = 15;   7 + 0 + 4 + 15 = 26
    assert winners_of(g) == [w for _, w in ROTATING_TRICKS]
    end = ended(g)[-1]
    assert (end.points, end.moon, end.tricks, end.early) == ((7, 0, 4, 15), None, 13, False)
    assert g.totals == [7, 0, 4, 15]
    assert [t.points for t in deal_tricks(g)] == [0, 0, 0, 0, 0, 0, 0, 13, 2, 4, 3, 0, 4]


def test_standard_moon_others_get_26() -> None:
    # N leads 2C and nobody can ever follow: N takes all 13 tricks, 13 hearts and QS.
    g = Game(no_pass(STANDARD), 0, [SUIT_PER_SEAT])
    end = play_lowest_until_deal_ends(g)
    assert winners_of(g) == [N] * 13
    assert (end.points, end.moon) == ((0, 26, 26, 26), N)


def test_shooter_minus_knob_in_a_game() -> None:
    g = Game(no_pass(STANDARD).replace(moon=MoonRule.SHOOTER_MINUS), 0, [SUIT_PER_SEAT])
    assert play_lowest_until_deal_ends(g).points == (-26, 0, 0, 0)


def test_first_trick_allows_points_only_when_nothing_else_is_held() -> None:
    g = Game(no_pass(STANDARD), 0, [SUIT_PER_SEAT])
    play(g, "2C 2D")
    assert g.legal_play_mask(S) == cs("2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH")  # only hearts: forced
    play(g, "2H")
    assert g.legal_play_mask(W) == cs("2S 3S 4S 5S 6S 7S 8S 9S TS JS KS AS")  # anything but QS
    with pytest.raises(IllegalAction, match="no points on the first trick"):
        g.apply(Play.of(W, QUEEN_SPADES))


def test_hearts_may_be_led_unbroken_when_only_hearts_are_held() -> None:
    spec = deal(
        "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC 2D",
        "AC 3D 4D 5D 6D 7D 8D 9D TD JD QD KH AH",
        "KD AD 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH",
        "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS",
    )
    g = Game(no_pass(STANDARD), 0, [spec])
    play(g, "2C AC KD 2S")  # E wins trick 1; no heart was played
    assert g.turn == E and g.legal_play_mask(E) == cs("3D 4D 5D 6D 7D 8D 9D TD JD QD")
    play(g, "3D AD 3S 2D")  # S wins with AD and now holds only hearts
    assert (g.turn, g.hearts_broken) == (S, False)
    assert g.legal_play_mask(S) == g.hands[S] == cs("2H 3H 4H 5H 6H 7H 8H 9H TH JH QH")


def test_hearts_not_broken_blocks_a_heart_lead() -> None:
    g = Game(no_pass(STANDARD), 0, [ROTATING])
    play(g, "2C 3C 4C 5C")  # W leads trick 2 and holds 3H 7H JH with other suits
    assert g.turn == W and not g.legal_play_mask(W) & cs("3H 7H JH")
    with pytest.raises(IllegalAction, match="hearts are not broken"):
        g.apply(Play.of(W, c("3H")))


def test_queen_breaks_hearts_knob() -> None:
    rules = no_pass(STANDARD).replace(queen_breaks_hearts=True)
    g = Game(rules, 0, [ROTATING])
    for cards, _ in ROTATING_TRICKS[:8]:
        play(g, cards)  # trick 8 had QS but no heart
    assert g.hearts_broken
    g2 = Game(no_pass(STANDARD), 0, [ROTATING])
    for cards, _ in ROTATING_TRICKS[:8]:
        play(g2, cards)
    assert not g2.hearts_broken


# ============================================================== omnibus
def test_omnibus_golden_deal_jack_of_diamonds() -> None:
    g = Game(no_pass(OMNIBUS), 0, [ROTATING])
    play_rotating(g)
    # as the standard deal, and S took JD in trick 6: N 7, E 0, S 4 - 10 = -6, W 15
    assert ended(g)[-1].points == (7, 0, -6, 15)


def test_omnibus_moon_with_the_jack() -> None:
    # N takes everything, JD included: moon part 0, JD -10; the others +26
    g = Game(no_pass(OMNIBUS), 0, [SUIT_PER_SEAT])
    assert play_lowest_until_deal_ends(g).points == (-10, 26, 26, 26)


# ============================================================== trend
def trend_to_play(spec: DealSpec, expose: bool) -> Game:
    g = Game(no_pass(TREND), 0, [spec] * 4)
    assert (g.phase, g.to_act()) == (Phase.EXPOSE, (S,))  # only the AH holder is asked
    assert g.legal_actions(S) == [Expose(S, 0), Expose(S, cs("AH"))]
    assert g.legal_actions(N) == []
    g.apply(Expose(S, cs("AH") if expose else 0))
    assert g.phase is Phase.PLAY and isinstance(g.log[-2], Exposed)
    return g


def test_trend_golden_deal_not_exposed() -> None:
    g = trend_to_play(ROTATING, expose=False)
    play_rotating(g)
    # hearts and QS as in standard (N 7, S 4, W 15), negative; N took TC: -7 x 2 = -14
    assert ended(g)[-1].points == (-14, 0, -4, -15)


def test_trend_golden_deal_ace_of_hearts_exposed() -> None:
    g = trend_to_play(ROTATING, expose=True)
    play_rotating(g)
    # every heart x2: N 7*2 = 14, TC x2 -> 28; S 4*2 = 8; W 13 + 2*2 = 17 (all negative)
    assert ended(g)[-1].points == (-28, 0, -8, -17)


def test_trend_moon_positive_times_four_and_ten_of_clubs_last() -> None:
    g = trend_to_play(SUIT_PER_SEAT, expose=True)
    # N took everything: hearts 13*2 + QS 13 = 39, moon x4 = 156, TC x2 = +312
    assert play_lowest_until_deal_ends(g).points == (312, 0, 0, 0)


def test_trend_ends_after_four_deals_and_the_highest_total_wins() -> None:
    g = Game(no_pass(TREND), 0, [ROTATING, SUIT_PER_SEAT, ROTATING, ROTATING])
    g.apply(Expose(S, 0))
    play_rotating(g)  # (-14, 0, -4, -15)
    g.apply(Expose(S, 0))
    play_lowest_until_deal_ends(g)  # N shoots: 26 x4 = 104, TC x2 = 208 -> (208, 0, 0, 0)
    for _ in range(2):
        g.apply(Expose(S, 0))
        play_rotating(g)
    # N: -14 + 208 - 14 - 14 = 166; E 0; S -12; W -45
    assert g.over and g.totals == [166, 0, -12, -45]
    assert g.winners == (N,)
    assert g.log[-1] == GameEnded((166, 0, -12, -45), (N,), 4)
    with pytest.raises(IllegalAction, match="over"):
        g.apply(Play.of(N, 0))


# ============================================================== gym and score limits
def test_gym_game_over_only_when_a_total_exceeds_max_score() -> None:
    rules = no_pass(find_variant("gym", max_score=26))
    g = Game(rules, 0, [SUIT_PER_SEAT] * 3)
    play_lowest_until_deal_ends(g)  # (0, 26, 26, 26): 26 does not exceed 26
    assert not g.over and g.deal_index == 1
    play_lowest_until_deal_ends(g)  # 52 > 26
    assert g.over and g.totals == [0, 52, 52, 52] and g.winners == (N,)


def test_standard_limit_is_reached_not_exceeded() -> None:
    g = Game(no_pass(STANDARD).replace(score_limit=26), 0, [SUIT_PER_SEAT])
    play_lowest_until_deal_ends(g)
    assert g.over and g.winners == (N,) and g.log[-1] == GameEnded((0, 26, 26, 26), (N,), 1)


def test_ties_share_the_win() -> None:
    g = Game(no_pass(STANDARD).replace(score_limit=1), 0, [ROTATING])
    play_rotating(g)  # (7, 0, 4, 15): E wins alone
    assert g.winners == (E,)
    g = Game(no_pass(GYM).replace(score_limit=1), 0, [SUIT_PER_SEAT])
    play_lowest_until_deal_ends(g)
    assert g.winners == (N,)


# ============================================================== turbo: the reference engine's games
@pytest.mark.parametrize("order", ["classic", "bridge", "chain", "blind"])
def test_turbo_replays_the_reference_engines_games(order: str) -> None:
    rules = find_variant("turbo" if order == "classic" else "turbo-" + order)
    # the reference's blind game (seen from N) made the same charges and plays as its classic one
    deals = RECORDED_TURBO["classic" if order == "blind" else order]
    g = Game(rules, 0, [d.spec() for d in deals])
    for index, d in enumerate(deals):
        assert g.deal_index == index and g.direction is rules.pass_direction(index)
        if d.passes is not None:
            pass_all(g, d.passes)
        charge(g, d.charges)  # the engine must accept every charge in the recorded order
        play_seated(g, d.plays)  # ... and every card, by the recorded seat (nines make 8-card tricks)
        assert ended(g)[-1].points == d.scores
    assert g.over
    assert tuple(g.totals) == tuple(sum(d.scores[s] for d in deals) for s in range(4))
    # nine-card tricks: fewer than 13 tricks in some hands, 52 cards played in every hand
    assert any(e.tricks < 13 for e in ended(g))
    assert all(sum(t.bit_count() for t in e.taken) == 52 for e in ended(g))
    if order == "blind":  # N saw how many cards the others charged, and which only when revealed
        seen = [e.for_viewer(N) for e in g.log if isinstance(e, Charged) and e.seat != N]
        assert all(isinstance(x, Charged) and x.cards is None for x in seen)
        assert [x.count for x in seen if isinstance(x, Charged) and x.count] == [1, 1, 1, 1, 1]
        revealed = [e.charges for e in g.log if isinstance(e, ChargesRevealed)]
        assert revealed[-1] == (0, cs("AH"), cs("QS"), cs("JD"))


# ============================================================== turbo: charging orders
def charging_game(order: ChargingOrder, spec: DealSpec = SUIT_PER_SEAT) -> Game:
    # SUIT_PER_SEAT: N holds TC, E JD, S AH, W QS -- one chargeable card each
    g = Game(no_pass(TURBO_VARIANTS[order]), 0, [spec] * 4)
    assert g.phase is Phase.CHARGE
    return g


def charges_seen(g: Game) -> list[Charged]:
    return [e for e in g.log if isinstance(e, Charged)]


@pytest.mark.parametrize("order", [ChargingOrder.CLASSIC, ChargingOrder.BLIND])
def test_classic_and_blind_anyone_charges_and_all_but_the_charger_pass_again(order: ChargingOrder) -> None:
    g = charging_game(order)
    assert g.log[-1] == ChargingStarted(None)
    assert g.to_act() == (N, E, S, W)
    assert g.legal_actions(N) == [Charge(N, 0), Charge(N, cs("TC"))]
    charge(g, "NTC")
    assert g.to_act() == (E, S, W)
    charge(g, "E-")
    assert g.to_act() == (S, W)
    with pytest.raises(IllegalAction, match="E has passed; wait for another charge"):
        g.apply(Charge(E, cs("JD")))
    charge(g, "WQS")  # a new charge: everyone but W must pass again
    assert g.to_act() == (N, E, S)
    assert g.legal_actions(N) == [Charge(N, 0)]  # TC is charged already
    charge(g, "N- EJD")
    assert g.to_act() == (N, S, W)
    charge(g, "N- S- W-")
    assert g.phase is Phase.PLAY
    assert [(e.seat, e.cards, e.done) for e in charges_seen(g)] == [
        (N, cs("TC"), 0b0001),
        (E, 0, 0b0011),
        (W, cs("QS"), 0b1000),
        (N, 0, 0b1001),
        (E, cs("JD"), 0b0010),
        (N, 0, 0b0011),
        (S, 0, 0b0111),
        (W, 0, 0b1111),
    ]
    final = (cs("TC"), cs("JD"), 0, cs("QS"))
    assert ChargingEnded(final) in g.log
    assert (ChargesRevealed(final) in g.log) is order.blind
    assert all(e.blind is order.blind for e in charges_seen(g))


@pytest.mark.parametrize("order", [ChargingOrder.BRIDGE, ChargingOrder.BLIND_BRIDGE])
def test_bridge_charges_in_seat_order_and_ends_when_the_other_three_pass(order: ChargingOrder) -> None:
    g = charging_game(order)
    assert g.log[-1] == ChargingStarted(N)  # deal 0: N starts
    assert g.to_act() == (N,)
    with pytest.raises(IllegalAction, match="it is N's turn to charge, not E's"):
        g.apply(Charge(E, 0))
    charge(g, "NTC E-")
    assert g.to_act() == (S,)
    charge(g, "SAH")  # W, N and E must now pass
    assert g.to_act() == (W,)
    charge(g, "W- N-")
    assert g.phase is Phase.CHARGE and g.to_act() == (E,)
    charge(g, "E-")
    assert phase(g) is Phase.PLAY
    assert [e.next_charger for e in charges_seen(g)] == [E, S, W, N, E, None]
    assert g.charged == [cs("TC"), 0, cs("AH"), 0]


@pytest.mark.parametrize("order", [ChargingOrder.CHAIN, ChargingOrder.BLIND_CHAIN])
def test_chain_after_any_charge_all_four_pass_again(order: ChargingOrder) -> None:
    g = charging_game(order)
    charge(g, "NTC E- S- W-")  # in bridge this would end the round
    assert g.phase is Phase.CHARGE and g.to_act() == (N,)
    assert charges_seen(g)[0].done == 0
    charge(g, "N-")
    assert phase(g) is Phase.PLAY


@pytest.mark.parametrize("order", [ChargingOrder.BRIDGE, ChargingOrder.CHAIN, ChargingOrder.BLIND_BRIDGE])
def test_seat_order_starts_from_the_deal_index(order: ChargingOrder) -> None:
    g = Game(TURBO_VARIANTS[order], 8)
    rng = random.Random(8)
    firsts = []
    while not g.over:
        if g.phase is Phase.CHARGE and isinstance(g.log[-1], ChargingStarted):
            firsts.append((g.deal_index, g.log[-1].first_charger, g.to_act()))
        g.apply(random_action(g, rng))
    assert [(d, f) for d, f, _ in firsts][:4] == [(0, 0), (1, 1), (2, 2), (3, 3)]
    assert all(t == (f,) for _, f, t in firsts)


@pytest.mark.parametrize("order", [o for o in ChargingOrder if o.blind])
def test_blind_charges_are_counts_to_the_others_until_revealed(order: ChargingOrder) -> None:
    g = charging_game(order)
    charge(g, "NTC")
    e = charges_seen(g)[0]
    assert e.for_viewer(N) is e and e.for_viewer(None) is e
    for other in (E, S, W):
        seen = e.for_viewer(other)
        assert isinstance(seen, Charged) and (seen.cards, seen.count) == (None, 1)
    charge(g, "E- S- W-" if not order.chain else "E- S- W- N-")
    revealed = [x for x in g.log if isinstance(x, ChargesRevealed)]
    assert revealed == [ChargesRevealed((cs("TC"), 0, 0, 0))]
    assert all(revealed[0].for_viewer(s) is revealed[0] for s in range(4))


def test_open_charges_are_seen_by_everyone() -> None:
    g = charging_game(ChargingOrder.CLASSIC)
    charge(g, "NTC")
    e = charges_seen(g)[0]
    assert all(e.for_viewer(s) is e for s in range(4))


def finish_deal(g: Game, rng: random.Random) -> None:
    d = g.deal_index
    while g.deal_index == d and not g.over:
        g.apply(random_action(g, rng))


def test_keeper_hand_pile_when_nobody_charged_then_a_second_charge_round() -> None:
    g = Game(TURBO, 21)
    rng = random.Random(21)
    for _ in range(3):
        finish_deal(g, rng)
    assert (g.deal_index, g.direction, g.phase) == (3, PassDirection.KEEPER, Phase.CHARGE)
    assert g.to_act() == (N, E, S, W)
    with pytest.raises(IllegalAction, match="cannot pass during the charge phase"):
        g.apply(Pass(N, sum(1 << x for x in card_list(g.hands[N])[:3])))
    charge(g, "N- E- S- W-")  # nobody charged: the pile
    assert (g.phase, g.to_act()) == (Phase.PILE, (N, E, S, W))
    before = list(g.hands)
    put = [sum(1 << x for x in card_list(h)[:3]) for h in before]
    for s in range(4):
        g.apply(Pass(s, put[s]))
    sent = [e for e in g.log if isinstance(e, PassSent)][-4:]
    assert [(e.seat, e.to) for e in sent] == [(0, 0), (1, 1), (2, 2), (3, 3)]
    got = [e for e in g.log if isinstance(e, PassReceived)][-4:]
    assert [(e.seat, e.source, e.count) for e in got] == [(s, s, 3) for s in range(4)]
    assert sum(e.cards or 0 for e in got) == sum(put)  # the pile's 12 cards, shared out again
    assert all(h.bit_count() == 13 for h in g.hands) and sum(g.hands) == ALL_CARDS
    assert g.phase is Phase.CHARGE and g.charge_round == 2
    assert isinstance(g.log[-1], ChargingStarted)
    charge(g, "N- E- S- W-")  # nobody charged again: no second pile
    assert phase(g) is Phase.PLAY


def test_keeper_pile_is_the_same_for_the_same_seed_and_actions() -> None:
    a = play_random_game(TURBO.replace(pass_cycle=(PassDirection.KEEPER,)), 5, max_deals=3)
    b = replay(a.rules, 5, a.actions)
    assert b.log == a.log


def test_keeper_hand_without_pile_when_someone_charged() -> None:
    g = Game(no_pass(TURBO).replace(pass_cycle=(PassDirection.KEEPER,)), 0, [SUIT_PER_SEAT] * 4)
    charge(g, "N- EJD N- S- W-")
    assert g.phase is Phase.PLAY and g.charge_round == 1


# ============================================================== turbo: play rules
# E will charge TC and JD, W QS, S AH. W holds all four nines.
CHARGED = deal(
    "2C 3C 4C 5C 6C 7C 8C 2D 3D 4D 5D 6D 3S",
    "TC JC QC KC AC 7D 8D TD JD QD KD AD 4S",
    "2H 3H 4H 5H 6H 7H 8H TH JH QH KH AH 5S",
    "9C 9D 9H 9S 2S 6S 7S 8S TS JS QS KS AS",
)


def test_charged_cards_and_nines() -> None:
    g = Game(no_pass(TURBO), 0, [CHARGED] * 4)
    charge(g, "ETCJD SAH WQS N- E- S-")
    assert g.charged == [0, cs("TC JD"), cs("AH"), cs("QS")]
    play(g, "2C")
    assert g.legal_play_mask(E) == cs("JC QC KC AC")  # TC charged: not on the first club trick
    with pytest.raises(IllegalAction, match="charged card"):
        g.apply(Play.of(E, c("TC")))
    play(g, "JC")
    assert g.legal_play_mask(S) == cs("5S")  # no points on the first trick
    play(g, "5S 9C")  # W's 9C: the trick goes on to eight cards
    assert g.phase is Phase.PLAY and g.trick_no == 1 and g.turn == N
    play(g, "3C")
    assert g.legal_play_mask(E) == cs("QC KC AC")  # still the first club trick
    play(g, "QC")
    assert g.legal_play_mask(S) == g.hands[S]  # only hearts left: forced, and discarding AH is allowed
    play(g, "2H")
    assert g.legal_play_mask(W) == g.hands[W] & ~cs("QS 9H")  # no points on trick 1: 9D and spades but QS
    trick1 = [e for e in play(g, "2S") if isinstance(e, TrickEnded)]
    assert trick1 == [
        TrickEnded(1, E, tuple(cs_list("2C JC 5S 9C 3C QC 2H 2S")), (N, E, S, W, N, E, S, W), 1),
    ]
    # E leads: JD is charged and diamonds were never led
    assert g.turn == E and g.legal_play_mask(E) == g.hands[E] & ~cs("JD")
    assert g.hands[E] & cs("JD")
    play(g, "4S 3H")
    assert g.legal_play_mask(W) == cs("6S 7S 8S 9S TS JS KS AS")  # QS not on the first spade trick
    play(g, "9S 3S")  # another nine: eight cards again
    assert g.trick_no == 2 and len(g.trick_cards) == 4 and g.turn == E
    play(g, "7D 4H")
    assert not g.legal_play_mask(W) & cs("QS")
    play(g, "6S 4C")
    assert g.tricks[-1].winner == W and g.trick_no == 3 and g.turn == W
    assert g.legal_play_mask(W) & cs("QS")  # spades have been led: W may lead the charged QS now


def cs_list(text: str) -> list[int]:
    return [c(t) for t in text.split()]


def test_a_charged_card_that_is_the_only_one_of_its_suit_may_be_played() -> None:
    spec = deal(
        "TC 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD",
        "2C 3C 4C 5C 6C 7C 8C 9C JC QC KC AC AD",
        "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH",
        "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS",
    )
    g = Game(no_pass(TURBO), 0, [spec] * 4)
    charge(g, "NTC E- S- W-")
    play(g, "2C 2H 2S")
    assert g.legal_play_mask(N) == cs("TC")
    play(g, "TC")
    assert g.tricks[-1].winner == N


def test_a_nine_played_after_the_fourth_card_or_off_suit_does_not_extend_the_trick() -> None:
    g = Game(no_pass(TURBO), 0, [CHARGED] * 4)
    charge(g, "N- E- S- W-")
    play(g, "2C TC 5S 9C 3C JC 2H 2S")  # 9C fourth: eight cards, no more
    assert g.trick_no == 2 and g.turn == E
    play(g, "7D 3H 9D 2D")  # 9D is W's 3rd card of the trick: eight again
    assert g.trick_no == 2
    play(g, "8D 4H 9H 3D")  # W discards 9H (not the led suit) as the 7th card: nothing more
    assert g.trick_no == 3 and g.tricks[-1].cards == tuple(cs_list("7D 3H 9D 2D 8D 4H 9H 3D"))
    assert g.tricks[-1].winner == W


def test_turbo_first_trick_forced_points_jack_of_diamonds_before_queen() -> None:
    spec = deal(
        "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC",
        "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH JD QS",
        "KH 2D 3D 4D 5D 6D 7D 8D 9D TD QD KD AD",
        "AH 2S 3S 4S 5S 6S 7S 8S 9S TS JS KS AS",
    )
    g = Game(no_pass(TURBO), 0, [spec] * 4)
    charge(g, "N- E- S- W-")
    play(g, "2C")
    assert g.legal_play_mask(E) == cs("JD")
    with pytest.raises(IllegalAction, match="no points on the first trick"):
        g.apply(Play.of(E, QUEEN_SPADES))
    play(g, "JD")
    assert g.legal_play_mask(S) == g.hands[S] & ~cs("KH")


def test_turbo_first_trick_forced_queen_when_no_jack() -> None:
    spec = deal(
        "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC",
        "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH QS",
        "AH 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD",
        "2D 2S 3S 4S 5S 6S 7S 8S 9S TS JS KS AS",
    )
    g = Game(no_pass(TURBO), 0, [spec] * 4)
    charge(g, "N- E- S- W-")
    play(g, "2C")
    assert g.legal_play_mask(E) == cs("QS")
    play(g, "QS")
    assert g.legal_play_mask(S) == g.hands[S] & ~cs("AH JD")
    # standard has no forced order: the same seat may play any of its point cards
    g2 = Game(no_pass(STANDARD), 0, [spec])
    play(g2, "2C")
    assert g2.legal_play_mask(E) == g2.hands[E]


def test_turbo_moon_every_card_charged() -> None:
    g = Game(no_pass(TURBO), 0, [SUIT_PER_SEAT] * 4)
    charge(g, "NTC EJD SAH WQS N- E- S-")
    # N takes all: hearts 13*2 + QS 26 = 52, negated -52; JD -20 -> -72; TC charged x4 -> -288
    end = play_lowest_until_deal_ends(g)
    assert (end.points, end.moon) == ((-288, 0, 0, 0), N)


# ============================================================== turbo: claims
BLOCKING_TURBO = TURBO.replace(claim_flow=ClaimFlow.BLOCKING)


def claim_game(rules: Rules = BLOCKING_TURBO) -> Game:
    g = Game(no_pass(rules), 0, [SUIT_PER_SEAT] * 4)
    charge(g, "N- E- S- W-")
    play(g, "2C 2D 2H 2S")
    return g


def test_turbo_variants_answer_claims_as_turbo_does_and_others_block() -> None:
    assert all(r.claims and r.claim_flow is ClaimFlow.CONCURRENT for r in TURBO_VARIANTS.values())
    assert all(r.claim_flow is ClaimFlow.BLOCKING for r in (STANDARD, TREND, KIERKI, Rules()))


def test_blocking_rejected_claim_play_goes_on_and_the_hand_stays_shown() -> None:
    g = claim_game()
    hand = g.hands[N]
    assert Claim(N) in g.legal_actions(N) and Claim(E) in g.legal_actions(E)
    g.apply(Claim(N))
    assert g.log[-1] == ClaimMade(N, hand)
    assert g.revealed[N] == hand and g.to_act() == (E, S, W)
    assert g.legal_actions(E) == [AcceptClaim(E, N), RejectClaim(E, N)]
    assert g.legal_actions(N) == [] and g.legal_play_mask(N) == 0
    with pytest.raises(IllegalAction, match="N's claim must be answered first"):
        g.apply(Play.of(N, c("3C")))
    g.apply(AcceptClaim(E, N))
    assert g.to_act() == (S, W)
    with pytest.raises(IllegalAction, match="E cannot answer this claim"):
        g.apply(RejectClaim(E, N))
    g.apply(RejectClaim(S, N))
    assert [e for e in g.log if isinstance(e, ClaimAnswered)] == [ClaimAnswered(N, E, True), ClaimAnswered(N, S, False)]
    assert g.claimer is None and g.to_act() == (N,) and g.phase is Phase.PLAY
    # the same seat may not claim again before another card is played
    assert Claim(N) not in g.legal_actions(N)
    with pytest.raises(IllegalAction, match="N cannot claim now"):
        g.apply(Claim(N))
    play(g, "3C")
    assert Claim(N) in g.legal_actions(N)
    assert g.revealed[N] == hand


@pytest.mark.parametrize("flow", list(ClaimFlow))
def test_accepted_claim_gives_the_claimer_every_remaining_card_and_ends_the_hand(flow: ClaimFlow) -> None:
    g = claim_game(TURBO.replace(claim_flow=flow))
    play(g, "3C")  # mid-trick: the trick's card goes to the claimer too
    g.apply(Claim(N))
    for s in (W, E, S):
        g.apply(AcceptClaim(s, N))
    succeeded = [e for e in g.log if isinstance(e, ClaimSucceeded)]
    assert succeeded == [ClaimSucceeded(N, ALL_CARDS & ~cs("2C 2D 2H 2S"))]
    end = ended(g)[-1]
    # N took everything: -(13 + 13) - 10 (JD) = -36, TC x2 = -72
    assert (end.points, end.moon, end.early, end.tricks) == ((-72, 0, 0, 0), N, True, 1)
    assert end.taken[N] == ALL_CARDS
    assert g.deal_index == 1


def test_accepted_claim_counts_the_remaining_tricks_for_trick_scoring() -> None:
    # a claim variant that scores tricks (1 each) and the 7th and 13th trick (10 each)
    scoring = Scoring(card_points({}), per_trick=1, trick_number_points=((7, 10), (13, 10)))
    rules = no_pass(TURBO).replace(scoring=(scoring,), ten_of_clubs_multiplier=1, moon=MoonRule.NONE)
    g = Game(rules, 0, [SUIT_PER_SEAT] * 4)
    charge(g, "N- E- S- W-")
    play(g, "2C 2D 2H 2S 3C")  # N wins trick 1, then leads trick 2 and claims mid-trick
    g.apply(Claim(N))
    for s in (E, S, W):
        g.apply(AcceptClaim(s, N))
    # N: tricks 1..13 = 13 points, plus the 7th and the 13th = 20 -> 33
    assert ended(g)[-1].points == (33, 0, 0, 0)


def test_blocking_claims_that_are_not_allowed() -> None:
    g = Game(no_pass(STANDARD), 0, [SUIT_PER_SEAT])
    with pytest.raises(IllegalAction, match="standard has no claims"):
        g.apply(Claim(N))
    g = claim_game()
    with pytest.raises(IllegalAction, match="there is no claim by N"):
        g.apply(AcceptClaim(E, N))
    g.apply(Claim(W))
    with pytest.raises(IllegalAction, match="there is no claim by N"):
        g.apply(RejectClaim(E, N))
    with pytest.raises(IllegalAction, match="W cannot answer this claim"):
        g.apply(AcceptClaim(W, W))
    with pytest.raises(IllegalAction, match="cannot claim now"):
        g.apply(Claim(E))
    with pytest.raises(IllegalAction, match="W already claimed"):
        g.apply(Claim(W))
    with pytest.raises(IllegalAction, match="N cannot claim during the charge phase"):
        Game(no_pass(BLOCKING_TURBO), 0, [SUIT_PER_SEAT] * 4).apply(Claim(N))


# ------------------------------------------------ concurrent claims (Turbo's own server)
def concurrent_game() -> Game:
    return claim_game(TURBO)


def test_concurrent_claim_play_goes_on_and_accepts_are_kept_across_plays() -> None:
    g = concurrent_game()  # N leads trick 2
    g.apply(Claim(E))  # not E's turn: a claim may come at any time
    assert g.log[-1] == ClaimMade(E, g.hands[E]) and g.revealed[E] == g.hands[E]
    assert g.to_act() == (N,) and g.claimer is None and g.open_claims() == (E,)
    assert g.legal_actions(S) == [Claim(S), AcceptClaim(S, E), RejectClaim(S, E)]
    assert g.legal_actions(E) == [RejectClaim(E, E)]  # the claimer may only withdraw
    assert g.legal_actions(N)[-3:] == [Claim(N), AcceptClaim(N, E), RejectClaim(N, E)]
    g.apply(AcceptClaim(S, E))
    play(g, "3C 3D")  # play goes on while the claim is open
    g.apply(AcceptClaim(N, E))
    play(g, "3H 3S 4C 4D 4H 4S")  # a whole trick later the accepts still count
    assert g.claim_accepts[E] == 1 << S | 1 << N and g.phase is Phase.PLAY
    assert g.legal_actions(N)[-2:] == [Claim(N), RejectClaim(N, E)]  # N accepted already
    assert AcceptClaim(W, E) in g.legal_actions(W)
    g.apply(AcceptClaim(W, E))  # the third accept ends the hand
    succeeded = [e for e in g.log if isinstance(e, ClaimSucceeded)]
    played = cs("2C 2D 2H 2S 3C 3D 3H 3S 4C 4D 4H 4S")
    assert succeeded == [ClaimSucceeded(E, ALL_CARDS & ~played)]  # N's clubs too, though N leads
    assert ended(g)[-1].taken[E] & ~played == ALL_CARDS & ~played
    assert g.deal_index == 1 and g.open_claims() == () and g.claim_accepts == [0, 0, 0, 0]
    answers = [(e.seat, e.accepted) for e in g.log if isinstance(e, ClaimAnswered)]
    assert answers == [(S, True), (N, True), (W, True)]


def test_concurrent_claims_several_open_at_once_one_each() -> None:
    g = concurrent_game()
    g.apply(Claim(N))
    g.apply(Claim(W))
    assert g.open_claims() == (N, W) and g.to_act() == (N,)
    with pytest.raises(IllegalAction, match="N already claimed"):
        g.apply(Claim(N))
    assert Claim(N) not in g.legal_actions(N) and Claim(E) in g.legal_actions(E)
    assert g.legal_actions(E)[-4:] == [AcceptClaim(E, N), RejectClaim(E, N), AcceptClaim(E, W), RejectClaim(E, W)]
    g.apply(AcceptClaim(E, N))
    g.apply(AcceptClaim(W, N))  # W answers N's claim while its own is open
    g.apply(AcceptClaim(E, W))
    g.apply(RejectClaim(S, W))  # ends W's claim only
    assert g.open_claims() == (N,) and g.claim_accepts == [1 << E | 1 << W, 0, 0, 0]
    play(g, "3C")
    g.apply(AcceptClaim(S, N))
    assert [e.claimer for e in g.log if isinstance(e, ClaimSucceeded)] == [N]
    assert g.deal_index == 1 and g.open_claims() == ()


def test_concurrent_claimer_withdraws_and_may_claim_again_at_once() -> None:
    g = concurrent_game()
    hand = g.hands[N]
    g.apply(Claim(N))
    g.apply(AcceptClaim(E, N))
    g.apply(RejectClaim(N, N))  # withdrawn
    assert g.log[-1] == ClaimAnswered(N, N, False)
    assert g.open_claims() == () and g.claim_accepts[N] == 0 and g.revealed[N] == hand
    with pytest.raises(IllegalAction, match="there is no claim by N"):
        g.apply(AcceptClaim(S, N))
    g.apply(Claim(N))  # as on Turbo's server, no wait before claiming again
    play(g, "3C")
    g.apply(AcceptClaim(S, N))
    g.apply(AcceptClaim(W, N))
    assert g.open_claims() == (N,)  # E's earlier accept was for the withdrawn claim
    g.apply(RejectClaim(W, N))  # a seat may reject after accepting; the claim ends
    assert g.open_claims() == () and g.phase is Phase.PLAY and g.deal_index == 0
    assert g.revealed[N] == hand  # as first shown (3C played since)


def test_concurrent_claims_still_open_end_with_the_hand() -> None:
    g = concurrent_game()
    g.apply(Claim(S))
    g.apply(AcceptClaim(N, S))
    play_lowest_until_deal_ends(g)
    assert g.deal_index == 1 and g.open_claims() == () and g.claim_accepts == [0, 0, 0, 0]
    assert not any(isinstance(e, ClaimSucceeded) for e in g.log)
    assert Claim(S) not in g.legal_actions(S)  # charging: no claims until play


def test_concurrent_claims_that_are_not_allowed() -> None:
    g = concurrent_game()
    g.apply(Claim(W))
    for action, reason in [
        (AcceptClaim(E, N), "there is no claim by N"),
        (RejectClaim(W, N), "there is no claim by N"),
        (AcceptClaim(E, 9), "there is no claim by 9"),
        (Claim(W), "W already claimed"),
        (AcceptClaim(W, W), "W cannot accept its own claim"),
    ]:
        before = state(g)
        with pytest.raises(IllegalAction, match=reason):
            g.apply(action)  # type: ignore[arg-type]
        assert state(g) == before
    g.apply(AcceptClaim(E, W))
    with pytest.raises(IllegalAction, match="E already accepted W's claim"):
        g.apply(AcceptClaim(E, W))
    with pytest.raises(IllegalAction, match="it is N's turn, not W's"):
        g.apply(Play.of(W, c("3S")))  # a claim does not change whose turn it is
    with pytest.raises(IllegalAction, match="N cannot claim during the charge phase"):
        Game(no_pass(TURBO), 0, [SUIT_PER_SEAT] * 4).apply(Claim(N))


# ============================================================== kierki
# Hearts fall in the first four tricks: N leads 2H, W's queen, king and ace win three tricks,
# then W leads 5S and N discards its last heart.
KIERKI_HEARTS = deal(
    "2H 3H 4H 5H 2C 3C 4C 5C 6C 7C 8C 9C TC",
    "6H 7H 8H JC QC KC AC 2D 3D 4D 5D 6D 7D",
    "9H TH JH 8D 9D TD JD QD KD AD 2S 3S 4S",
    "QH KH AH 5S 6S 7S 8S 9S TS JS QS KS AS",
    kind=2,
    leader=N,
)


def kierki_spec(kind: int, leader: int) -> DealSpec:
    return DealSpec(SUIT_PER_SEAT.hands, kind, leader)


def test_kierki_seven_contracts_in_one_game() -> None:
    specs = [
        kierki_spec(1, E),
        KIERKI_HEARTS,
        kierki_spec(3, N),
        kierki_spec(4, N),
        kierki_spec(5, S),
        kierki_spec(6, W),
        kierki_spec(7, N),
    ]
    g = Game(KIERKI, 0, specs)
    assert g.deal_count == 7 and g.phase is Phase.PLAY  # no passing
    assert g.log[1] == DealStarted(0, PassDirection.HOLD, 1, E)
    # 1 no tricks: E leads (any card) and nobody can follow: E takes 13 tricks = 13
    assert g.legal_play_mask(E) == g.hands[E]
    assert play_lowest_until_deal_ends(g).points == (0, 13, 0, 0)
    # 2 no hearts: 4 + 4 + 4 + 1 hearts, all to W; all hearts gone after trick 4
    assert g.legal_play_mask(N) == g.hands[N]  # hearts may be led at once
    play(g, "2H 6H 9H QH  KH 3H 7H TH  AH 4H 8H JH  5S 5H 2D 2S")
    end = ended(g)[-1]
    assert (end.points, end.tricks, end.early) == ((0, 0, 0, 13), 4, True)
    # 3 no queens: N leads QC, the others discard theirs: 4 x 5 = 20 after one trick
    assert isinstance(g.log[-1], TrickStarted) and (g.log[-1].trick, g.log[-1].leader) == (1, N)
    play(g, "QC QD QH QS")
    end = ended(g)[-1]
    assert (end.points, end.tricks, end.early) == ((20, 0, 0, 0), 1, True)
    # 4 no kings or jacks: 8 x 2 = 16 in two tricks
    play(g, "KC KD KH KS")
    assert g.trick_no == 2 and g.deal_index == 3
    play(g, "JC JD JH JS")
    end = ended(g)[-1]
    assert (end.points, end.tricks, end.early) == ((16, 0, 0, 0), 2, True)
    # 5 no king of hearts: S leads it: 18 after one trick
    play(g, "KH KS KC KD")
    assert ended(g)[-1].points == (0, 0, 18, 0) and ended(g)[-1].tricks == 1
    # 6 the 7th and the last trick: W leads and takes all: 10 + 10
    end = play_lowest_until_deal_ends(g)
    assert (end.points, end.tricks, end.early) == ((0, 0, 0, 20), 13, False)
    # 7 robber: N takes all: 13 tricks + 13 hearts + 20 queens + 16 K/J + 18 KH + 20 = 100
    end = play_lowest_until_deal_ends(g)
    assert end.points == (100, 0, 0, 0)
    # N 20 + 16 + 100 = 136; E 13; S 18; W 13 + 20 = 33: E wins (lowest)
    assert g.over and g.totals == [136, 13, 18, 33] and g.winners == (E,)
    starts = [e for e in g.log if isinstance(e, TrickStarted)]
    assert sum(1 for t in starts if t.trick == 1) == 7


def test_kierki_trick_numbers_restart_after_an_early_end() -> None:
    g = Game(KIERKI, 0, [KIERKI_HEARTS, kierki_spec(1, W)])
    play(g, "2H 6H 9H QH  KH 3H 7H TH  AH 4H 8H JH  5S 5H 2D 2S")
    assert g.deal_index == 1 and g.trick_no == 1 and g.turn == W
    numbers = [e.trick for e in g.log if isinstance(e, TrickEnded)]
    assert numbers == [1, 2, 3, 4]
    play_lowest_until_deal_ends(g)
    numbers = [e.trick for e in g.log if isinstance(e, TrickEnded)]
    assert numbers == [1, 2, 3, 4, *range(1, 14)]


def test_kierki_without_a_game_file_cycles_the_seven_contracts() -> None:
    g = play_random_game(KIERKI, 4)
    starts = [e for e in g.log if isinstance(e, DealStarted)]
    assert [(e.deal_kind, e.first_leader) for e in starts] == [(k, (k - 1) % 4) for k in range(1, 8)]
    assert g.over and len(ended(g)) == 7


def test_a_short_game_file_is_refused() -> None:
    with pytest.raises(ValueError, match="needs 4 deals"):
        Game(TREND, 0, [ROTATING])
    with pytest.raises(ValueError, match="not 13"):
        DealSpec((cs("2C"), 0, 0, 0))
    with pytest.raises(ValueError, match="dealt twice"):
        clubs = "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC"
        deal(clubs, clubs, clubs, clubs)
    with pytest.raises(ValueError, match="leader"):
        DealSpec(SUIT_PER_SEAT.hands, 1, 4)


# ============================================================== illegal actions leave the game unchanged
def std_play() -> Game:
    return Game(no_pass(STANDARD), 0, [ROTATING])


def std_pass() -> Game:
    return Game(STANDARD, 0, [ROTATING])


def std_passed_n() -> Game:
    g = std_pass()
    g.apply(Pass(N, cs("2C 6C TC")))
    return g


def std_trick2() -> Game:
    g = std_play()
    play(g, "2C 3C 4C 5C 2S")  # W led 2S; N to follow
    return g


def std_after_trick1() -> Game:
    g = std_play()
    play(g, "2C 3C 4C 5C")  # W leads trick 2, holding 3H 7H JH and other suits
    return g


def std_first_trick() -> Game:
    g = Game(no_pass(STANDARD), 0, [SUIT_PER_SEAT])
    play(g, "2C 2D 2H")
    return g


def bridge() -> Game:
    return charging_game(ChargingOrder.BRIDGE)


def classic_passed() -> Game:
    g = charging_game(ChargingOrder.CLASSIC)
    charge(g, "N-")
    return g


def trend_expose() -> Game:
    return Game(no_pass(TREND), 0, [ROTATING] * 4)


def turbo_claimed() -> Game:
    g = claim_game()
    g.apply(Claim(N))
    return g


def turbo_concurrent_claimed() -> Game:
    g = concurrent_game()
    g.apply(Claim(N))
    return g


ILLEGAL: list[tuple[Callable[[], Game], object, str]] = [
    (std_play, Play.of(E, c("3C")), "it is N's turn, not E's"),
    (std_play, Play.of(N, c("3C")), "N does not hold 3C"),
    (std_play, Play.of(N, c("6C")), "the first trick must be led with 2C"),
    (std_trick2, Play.of(N, c("5D")), "must follow spades"),
    (std_play, Play(N, 52), "no card 52"),
    (std_play, Play(7, 0), "no seat 7"),
    (std_first_trick, Play.of(W, QUEEN_SPADES), "no points on the first trick"),
    (std_after_trick1, Play.of(W, c("3H")), "hearts are not broken"),
    (std_pass, Pass(N, cs("2C 6C")), "a pass is 3 cards, not 2"),
    (std_pass, Pass(N, cs("2C 6C TC AC")), "a pass is 3 cards, not 4"),
    (std_pass, Pass(N, cs("2C 6C 3C")), "N does not hold 3C"),
    (std_pass, Pass(N, -1), "malformed card set"),
    (std_pass, Play.of(N, TWO_CLUBS), "cannot play a card during the pass phase"),
    (std_passed_n, Pass(N, cs("AC 5D 9D")), "N has already passed"),
    (std_play, Pass(N, cs("2C 6C TC")), "cannot pass during the play phase"),
    (bridge, Charge(S, cs("AH")), "it is N's turn to charge, not S's"),
    (bridge, Charge(N, cs("2C")), "N cannot charge 2C"),
    (bridge, Charge(N, cs("QS")), "N cannot charge QS"),  # chargeable, but W holds it
    (classic_passed, Charge(N, cs("TC")), "N has passed; wait for another charge"),
    (std_play, Charge(N, 0), "cannot charge during the play phase"),
    (trend_expose, Expose(N, 0), "N is not asked to expose cards now"),
    (trend_expose, Expose(S, cs("KS")), "S cannot expose KS"),
    (std_play, Expose(N, 0), "N is not asked to expose cards now"),
    (std_play, Claim(N), "standard has no claims"),
    (turbo_claimed, Claim(E), "E cannot claim now"),
    (turbo_claimed, AcceptClaim(N, N), "N cannot answer this claim"),
    (turbo_claimed, AcceptClaim(E, S), "there is no claim by S"),
    (turbo_claimed, Play.of(N, c("3C")), "N's claim must be answered first"),
    (turbo_concurrent_claimed, Claim(N), "N already claimed"),
    (turbo_concurrent_claimed, AcceptClaim(N, N), "N cannot accept its own claim"),
    (turbo_concurrent_claimed, RejectClaim(E, S), "there is no claim by S"),
    (turbo_concurrent_claimed, Play.of(E, c("3D")), "it is N's turn, not E's"),
]


@pytest.mark.parametrize(("setup", "action", "reason"), ILLEGAL, ids=[r for _, _, r in ILLEGAL])
def test_illegal_action_names_the_reason_and_changes_nothing(
    setup: Callable[[], Game], action: object, reason: str
) -> None:
    g = setup()
    before = state(g)
    log = list(g.log)
    assert not g.is_legal(action)  # type: ignore[arg-type]
    with pytest.raises(IllegalAction) as err:
        g.apply(action)  # type: ignore[arg-type]
    assert reason in str(err.value)
    # the same reason as a stable code with its parameters (a client's own language says it)
    assert err.value.code in REASON_CODES
    assert set(err.value.params) <= set(REASON_CODES[err.value.code])
    assert err.value.reason == str(err.value) and err.value.reason.code == err.value.code
    assert state(g) == before and g.log == log


@pytest.mark.parametrize("bad", [-1, 99, "QS", None])
def test_a_play_with_no_card_number_is_illegal_not_a_crash(bad: object) -> None:
    g = std_play()
    before = state(g)
    try:
        action = Play(N, bad)  # type: ignore[arg-type]
    except TypeError:  # compiled (make compile), a Play of no int cannot even be built
        assert "moonshot.core.actions" in moonshot.compiled_modules() and not isinstance(bad, int)
        return
    with pytest.raises(IllegalAction, match="no card"):
        g.apply(action)
    assert state(g) == before


def test_replay_reports_the_bad_action() -> None:
    g = std_play()
    play(g, "2C 3C")
    with pytest.raises(IllegalAction, match=r"action 2 .* does not replay"):
        replay(g.rules, 0, [*g.actions, Play.of(N, c("4C"))], [ROTATING])


# ============================================================== invariants over random games
def play_checked(rules: Rules, seed: int) -> Game:
    """A random game that checks, before every action, that each seat to act has a legal move."""
    g = Game(rules, seed)
    rng = random.Random(seed)
    while not g.over:
        waiting = g.to_act()
        assert waiting
        if g.phase is Phase.PLAY and g.claimer is None:
            mask = g.legal_play_mask(g.turn)
            assert mask and mask & ~g.hands[g.turn] == 0
            plays = [a for a in g.legal_actions(g.turn) if isinstance(a, Play)]
            assert sum(1 << a.card for a in plays) == mask
            assert all(g.legal_play_mask(s) == 0 for s in range(4) if s != g.turn)
        elif g.phase is not Phase.PASS and g.phase is not Phase.PILE:
            assert all(g.legal_actions(s) for s in waiting)
        else:
            assert all(g.hands[s].bit_count() >= rules.pass_count for s in waiting)
        g.apply(random_action(g, rng))
        assert g.deal_index < 60, "the game does not end"
    return g


def check_deals(g: Game) -> None:
    """Every deal in the log: cards played once, winners, trick numbers and the score recomputed."""
    rules = g.rules
    deal_no, kind = -1, 0
    played: list[int] = []
    claimed = doubled = claim_by = 0
    tricks: list[TrickEnded] = []
    totals = [0, 0, 0, 0]
    for e in g.log:
        if isinstance(e, DealStarted):
            deal_no, kind, played, claimed, doubled, tricks = e.deal, e.deal_kind, [], 0, 0, []
        elif isinstance(e, CardPlayed):
            played.append(e.card)
        elif isinstance(e, ChargingEnded):
            doubled |= sum(e.charges)
        elif isinstance(e, Exposed):
            doubled |= e.cards
        elif isinstance(e, ClaimSucceeded):
            claimed, claim_by = e.cards, e.claimer
        elif isinstance(e, TrickEnded):
            led = e.cards[0] // 13
            best = max(x for x in e.cards if x // 13 == led)
            assert e.winner == e.seats[e.cards.index(best)]
            assert len(e.cards) in ((4, 8) if rules.nines else (4,))
            assert e.points == sum(rules.scoring_for(kind).card_points[x] for x in e.cards)
            tricks.append(e)
        elif isinstance(e, DealEnded):
            assert e.deal == deal_no
            assert len(played) == len(set(played))  # no card twice
            in_tricks = sum(1 << x for t in tricks for x in t.cards)
            assert in_tricks | claimed == sum(e.taken) and not in_tricks & claimed
            assert [t.trick for t in tricks] == list(range(1, len(tricks) + 1)) and e.tricks == len(tricks)
            if not e.early:
                assert sum(e.taken) == ALL_CARDS and set(played) == set(range(52))
            else:
                assert claimed or rules.early_end
            numbers = [sum(1 << t.trick for t in tricks if t.winner == s) for s in range(4)]
            won = [sum(1 for t in tricks if t.winner == s) for s in range(4)]
            taken = [sum(1 << x for t in tricks if t.winner == s for x in t.cards) for s in range(4)]
            if claimed:
                taken[claim_by] |= claimed
            assert tuple(taken) == e.taken
            expected, moon = score_deal(rules, kind, taken, numbers, won, doubled)
            assert (e.points, e.moon) == (expected, moon)
            if rules.name in ("standard", "gym"):
                assert sum(e.points) == (78 if moon is not None else 26)
            if rules.name == "omnibus":
                assert sum(e.points) == (68 if moon is not None else 16)
            if rules.name == "kierki":
                assert sum(e.points) == rules.scoring_for(kind).total
                assert e.early == (sum(e.taken) != ALL_CARDS)
                # the deal stops right after the trick that took its last points, not later
                sc = rules.scoring_for(kind)
                point_cards = sc.cards_with_points
                last_numbered = max((n for n, _ in sc.trick_number_points), default=0)
                gone = [
                    not sc.per_trick
                    and not point_cards & ~sum(1 << x for t in tricks[:n] for x in t.cards)
                    and last_numbered <= n
                    for n in range(1, len(tricks) + 1)
                ]
                assert gone.index(True) == len(tricks) - 1 if any(gone) else len(tricks) == 13
            totals = [a + b for a, b in zip(totals, e.points)]
            assert e.totals == tuple(totals)
    assert g.over and isinstance(g.log[-1], GameEnded) and list(g.log[-1].totals) == totals == g.totals
    best = min(totals) if rules.lowest_wins else max(totals)
    assert g.winners == tuple(s for s in range(4) if totals[s] == best)
    if rules.end is EndRule.DEALS:
        assert g.log[-1].deals == g.deal_count
    else:
        top = max(totals)
        assert top > rules.score_limit if not rules.limit_inclusive else top >= rules.score_limit


def check_redaction(g: Game) -> None:
    for e in g.log:
        for viewer in range(4):
            seen = e.for_viewer(viewer)
            if isinstance(e, HandDealt):
                assert (seen is e) if e.seat == viewer else seen is None
            elif isinstance(e, (PassSent, PassReceived)):
                if e.seat == viewer:
                    assert seen is e
                else:
                    assert isinstance(seen, type(e)) and seen.cards is None and seen.count == e.count
            elif isinstance(e, Charged) and e.blind and e.seat != viewer:
                assert isinstance(seen, Charged) and seen.cards is None and seen.count == e.count
            elif isinstance(e, GameStarted):
                assert seen == dataclasses.replace(e, seed=None)  # the seed deals every hand
            else:
                assert seen is e
        assert e.for_viewer(None) is e
        # a spectator sees what every seat sees: the event whole only when all four see it whole,
        # else the copy of a seat outside the audience
        spect = e.for_viewer(SPECTATOR)
        if all(e.for_viewer(v) is e for v in range(4)):
            assert spect is e
        else:
            outside = next(v for v in range(4) if e.for_viewer(v) is not e)
            assert spect == e.for_viewer(outside)


INVARIANT_SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("name", sorted(VARIANTS))
@INVARIANT_SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_random_games_keep_every_invariant(name: str, seed: int) -> None:
    rules = VARIANTS[name]
    g = play_checked(rules, seed)
    check_deals(g)
    check_redaction(g)
    again = replay(rules, seed, g.actions)
    assert again.log == g.log and again.totals == g.totals and again.winners == g.winners


def check_cards_and_claims(g: Game) -> None:
    """Every card is in exactly one hand, passed and not yet delivered, or played; claim state is
    consistent with its flow."""
    union = 0
    in_transit = [p or 0 for p in g.passed] if g.phase in (Phase.PASS, Phase.PILE) else []
    for h in [*g.hands, *in_transit]:
        assert not union & h
        union |= h
    assert not union & g.played and (union | g.played == ALL_CARDS or g.phase is Phase.OVER)
    taken = 0
    for t in g.taken:
        assert not taken & t
        taken |= t
    assert taken & ~g.played == 0
    for s in range(4):
        assert not g.claim_accepts[s] >> s & 1
        assert g.claim_accepts[s] == 0 or g.claiming >> s & 1
    if g.rules.claim_flow is ClaimFlow.CONCURRENT:
        assert g.claimer is None
    else:
        assert g.claiming == (0 if g.claimer is None else 1 << g.claimer)
    if g.phase is not Phase.PLAY:
        assert g.claiming == 0


@pytest.mark.parametrize("flow", list(ClaimFlow))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    order=st.sampled_from(list(ChargingOrder)),
    rate=st.sampled_from([0.02, 0.1, 0.3]),
)
def test_random_turbo_games_with_claims_at_random_points_keep_every_invariant(
    flow: ClaimFlow, seed: int, order: ChargingOrder, rate: float
) -> None:
    rules = TURBO_VARIANTS[order].replace(claim_flow=flow)
    g = Game(rules, seed)
    rng = random.Random(seed)
    while not g.over:
        action = None
        if g.phase is Phase.PLAY and rng.random() < rate:
            # a claim, accept or reject by any seat that has one now, whoever's turn it is
            seat = rng.randrange(4)
            moves = [a for a in g.legal_actions(seat) if not isinstance(a, Play)]
            action = rng.choice(moves) if moves else None
        g.apply(action or random_action(g, rng))
        check_cards_and_claims(g)
    check_deals(g)
    check_redaction(g)
    again = replay(rules, seed, g.actions)
    assert again.log == g.log and again.totals == g.totals and again.winners == g.winners


@INVARIANT_SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_random_kierki_games_from_game_files(seed: int) -> None:
    rng = random.Random(seed)
    specs = []
    for kind in rng.sample(range(1, 8), 7):
        deck = list(range(52))
        rng.shuffle(deck)
        hands = tuple(sum(1 << x for x in deck[13 * s : 13 * s + 13]) for s in range(4))
        specs.append(DealSpec(hands, kind, rng.randrange(4)))  # type: ignore[arg-type]
    g = play_random_game(KIERKI, seed, specs)
    check_deals(g)
    assert [e.first_leader for e in g.log if isinstance(e, DealStarted)] == [s.leader for s in specs]
    assert replay(KIERKI, seed, g.actions, specs).log == g.log


def test_the_random_games_reach_the_rare_paths() -> None:
    # the invariants above are only as good as the paths random play reaches: claims that
    # succeed, the keeper pile, moons, eight-card tricks, exposures and early ends
    piles = claims = moons = nines = blocking_claims = 0
    for seed in range(80):
        g = play_random_game(TURBO, seed)
        piles += any(isinstance(e, PassSent) and e.to == e.seat for e in g.log)
        claims += sum(isinstance(e, ClaimSucceeded) for e in g.log)
        moons += sum(isinstance(e, DealEnded) and e.moon is not None for e in g.log)
        nines += sum(isinstance(e, TrickEnded) and len(e.cards) == 8 for e in g.log)
        blocking_claims += sum(isinstance(e, ClaimSucceeded) for e in play_random_game(BLOCKING_TURBO, seed).log)
    assert min(piles, claims, moons, nines, blocking_claims) > 0
    trend = play_random_game(TREND, 1)
    assert any(isinstance(e, Exposed) and e.cards for e in trend.log)
    kierki = play_random_game(KIERKI, 1)
    assert any(e.early for e in ended(kierki))


# ============================================================== the event stream
def test_event_order_of_a_deal_and_apply_returns_exactly_the_new_events() -> None:
    g = Game(no_pass(STANDARD).replace(score_limit=1), 0, [ROTATING])
    kinds = [e.kind for e in g.log]
    assert kinds == ["game_started", "deal_started"] + ["hand_dealt"] * 4 + ["trick_started"]
    start = g.version
    events = g.apply(Play.of(N, TWO_CLUBS))
    assert events == g.log[start:] == [CardPlayed(N, TWO_CLUBS, 1)]
    events = play(g, "3C 4C 5C")
    assert [e.kind for e in events] == ["card_played"] * 3 + ["trick_ended", "trick_started"]
    for cards, _ in ROTATING_TRICKS[1:-1]:
        play(g, cards)
    events = play(g, ROTATING_TRICKS[-1][0])
    assert [e.kind for e in events] == ["card_played"] * 4 + ["trick_ended", "deal_ended", "game_ended"]
    assert g.to_act() == () and g.legal_actions(N) == [] and g.legal_play_mask(N) == 0


def test_snapshot_summarises_the_game() -> None:
    g = Game(STANDARD, 3)
    snap = g.snapshot()
    assert snap["variant"] == "standard" and snap["phase"] == "pass" and snap["to_act"] == ["N", "E", "S", "W"]
    hands = snap["hands"]
    assert isinstance(hands, dict) and all(len(v) == 13 for v in hands.values())


def test_turbo_events_of_a_charge_round() -> None:
    g = charging_game(ChargingOrder.BLIND_BRIDGE)
    charge(g, "NTC E- S- W-")
    kinds = [e.kind for e in g.log[6:]]
    assert kinds == [
        "charging_started",
        "charged",
        "charged",
        "charged",
        "charged",
        "charges_revealed",
        "charging_ended",
        "trick_started",
    ]


# ============================================================== record=False
@pytest.mark.parametrize("variant", ["standard", "turbo-blind-chain", "kierki", "trend"])
def test_an_unrecorded_game_plays_exactly_like_a_recorded_one(variant: str) -> None:
    rules = find_variant(variant)
    recorded, bare = Game(rules, 9), Game(rules, 9, record=False)
    rng = random.Random(9)
    while not recorded.over:
        seat = recorded.to_act()[0]
        assert bare.to_act()[0] == seat
        assert bare.legal_play_mask(seat) == recorded.legal_play_mask(seat)
        action = rng.choice(recorded.legal_actions(seat))
        recorded.apply(action)
        assert bare.apply(action) == []
    assert bare.over and bare.log == [] and bare.version == 0
    assert (bare.totals, bare.winners, bare.last_deal_points) == (
        recorded.totals,
        recorded.winners,
        recorded.last_deal_points,
    )
    assert [t.cards for t in bare.tricks] == [t.cards for t in recorded.tricks]
    with pytest.raises(IllegalAction):
        bare.apply(Play.of(0, 0))
