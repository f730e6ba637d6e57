"""Seat views: a seat's information set holds its own secrets and the public play, nothing else."""

from __future__ import annotations

import pickle
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gamekit import SUIT_PER_SEAT, charge, cs, deal, play, random_action
from moonshot.core.actions import AcceptClaim, Claim, Pass, Play, RejectClaim
from moonshot.core.cards import ALL_CARDS
from moonshot.core.engine import DealSpec, Game, Phase
from moonshot.core.rules import ChargingOrder, ClaimFlow, PassDirection
from moonshot.core.variants import KIERKI, STANDARD, TREND, TURBO, TURBO_VARIANTS, VARIANTS
from moonshot.core.views import PASSES, Choices, OpenClaim, SeatView, seat_view

N, E, S, W = 0, 1, 2, 3


def check_view(g: Game, v: SeatView) -> None:
    me = v.seat
    assert v.hand == g.hands[me] and v.dealt == g.dealt[me]
    assert (v.passed, v.received) == (g.passed[me], g.received[me])
    assert v.legal == tuple(g.legal_actions(me)) and v.legal_plays == g.legal_play_mask(me)
    assert v.my_turn == (me in g.to_act())
    public = v.played | sum(v.taken)
    for s in range(4):
        if s == me:
            assert v.known_cards[s] == 0
            continue
        theirs = g.hands[s]
        # what I may know about s: what I passed to s, visible charges, exposures, a claimed hand
        mine_to_them = (v.passed or 0) if v.pass_to == s else 0
        allowed = mine_to_them | v.charged[s] | v.exposed[s] | v.revealed[s]
        assert v.known_cards[s] & ~theirs == 0  # never wrong
        assert v.known_cards[s] & ~allowed == 0  # never more than was shown
        # no other field holds a card s is hiding
        assert (v.hand | v.played | public) & theirs == 0
        assert v.dealt & theirs & ~mine_to_them == 0
        assert (v.received or 0) & theirs == 0
        assert v.charged[s] & ~g.charged[s] == 0
    if g.rules.charging is not None and g.rules.charging.blind and g.phase is Phase.CHARGE:
        assert all(v.charged[s] == 0 for s in range(4) if s != me)
        assert v.charged[me] == g.charged[me]
    else:
        assert list(v.charged) == g.charged
    if g.phase is Phase.PLAY:
        assert v.cards_left == tuple(h.bit_count() for h in g.hands)
        assert v.unseen == sum(g.hands[s] for s in range(4) if s != me)
        assert v.trick_cards == tuple(g.trick_cards)


@pytest.mark.parametrize("name", sorted(VARIANTS))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_views_along_random_games(name: str, seed: int) -> None:
    g = Game(VARIANTS[name], seed)
    rng = random.Random(seed)
    while not g.over:
        for s in range(4):
            check_view(g, seat_view(g, s))
        g.apply(random_action(g, rng))
        if g.deal_index >= 3:
            break


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_legal_actions_are_those_of_when_the_view_was_made(name: str) -> None:
    # the list is made on demand: asked for after the game moved on, it is still the old one
    g = Game(VARIANTS[name], 7)
    rng = random.Random(7)
    for _ in range(60):
        if g.over:
            break
        views = [(seat_view(g, s), tuple(g.legal_actions(s))) for s in range(4)]
        g.apply(random_action(g, rng))
        for v, want in views:
            assert v.legal == want
            again = pickle.loads(pickle.dumps(v))
            assert again == v and again.legal == want


def test_choices_listed_and_described_compare_by_their_actions() -> None:
    g = Game(STANDARD, 3)
    v = seat_view(g, N)
    assert v.choices.kind == PASSES and len(v.legal) == 286
    assert v.choices == Choices.listed(N, v.legal) and hash(v.choices) == hash(Choices.listed(N, v.legal))
    assert "Choices((Pass(" in repr(v.choices)


def test_view_without_legal_actions() -> None:
    g = Game(STANDARD, 1)
    v = seat_view(g, N, with_legal=False)
    assert v.legal == () and v.hand == g.hands[N]


def test_pass_targets_and_what_a_pass_teaches() -> None:
    g = Game(STANDARD, 0, [SUIT_PER_SEAT])
    assert [seat_view(g, s).pass_to for s in range(4)] == [E, S, W, N]
    g.apply(Pass(N, cs("2C 3C 4C")))
    v = seat_view(g, N)
    assert v.passed == cs("2C 3C 4C") and v.known_cards[E] == 0  # not delivered yet
    for s, text in ((E, "2D 3D 4D"), (S, "2H 3H 4H"), (W, "2S 3S 4S")):
        g.apply(Pass(s, cs(text)))
    v = seat_view(g, N)
    assert v.known_cards == (0, cs("2C 3C 4C"), 0, 0)
    assert v.received == cs("2S 3S 4S") and v.hand == SUIT_PER_SEAT.hands[N] & ~cs("2C 3C 4C") | cs("2S 3S 4S")
    assert seat_view(g, E).known_cards == (0, 0, cs("2D 3D 4D"), 0)
    # E leads 2C; once it is played N no longer "knows" it in E's hand
    play(g, "2C")
    assert seat_view(g, N).known_cards[E] == cs("3C 4C")


def test_keeper_and_hold_have_no_pass_target() -> None:
    g = Game(TURBO.replace(pass_cycle=(PassDirection.KEEPER,)), 0, [SUIT_PER_SEAT] * 4)
    assert seat_view(g, N).pass_to is None and seat_view(g, N).direction is PassDirection.KEEPER
    g = Game(STANDARD.replace(pass_cycle=(PassDirection.HOLD,)), 0, [SUIT_PER_SEAT])
    assert seat_view(g, W).pass_to is None


@pytest.mark.parametrize("order", list(ChargingOrder))
def test_charges_in_views(order: ChargingOrder) -> None:
    g = Game(TURBO_VARIANTS[order].replace(pass_cycle=(PassDirection.HOLD,)), 0, [SUIT_PER_SEAT] * 4)
    charge(g, "NTC")
    shown = seat_view(g, E).charged[N]
    assert shown == (0 if order.blind else cs("TC"))
    assert seat_view(g, N).charged[N] == cs("TC")
    charge(g, "E- S- W-" if not order.chain else "E- S- W- N-")
    assert g.phase is Phase.PLAY
    for s in range(4):
        v = seat_view(g, s)
        assert v.charged == (cs("TC"), 0, 0, 0)
        assert v.known_cards[N] == (cs("TC") if s != N else 0)


def test_exposed_ace_is_known_to_everyone() -> None:
    g = Game(TREND.replace(pass_cycle=(PassDirection.HOLD,)), 0, [SUIT_PER_SEAT] * 4)
    assert seat_view(g, S).legal and not seat_view(g, N).legal
    g.apply(seat_view(g, S).legal[-1])  # expose AH
    for s in (N, E, W):
        v = seat_view(g, s)
        assert v.exposed[S] == cs("AH") and v.known_cards[S] == cs("AH")


@pytest.mark.parametrize("flow", list(ClaimFlow))
def test_a_claim_shows_the_claimers_hand_to_everyone(flow: ClaimFlow) -> None:
    g = Game(TURBO.replace(pass_cycle=(PassDirection.HOLD,), claim_flow=flow), 0, [SUIT_PER_SEAT] * 4)
    charge(g, "N- E- S- W-")
    play(g, "2C 2D 2H 2S 3C")
    g.apply(Claim(N))
    for s in (E, S, W):
        v = seat_view(g, s)
        assert v.revealed[N] == g.hands[N] and v.known_cards[N] == g.hands[N]
        assert v.claims == (OpenClaim(N, 0),) and v.claims[0].waiting_on == (E, S, W)
        if flow is ClaimFlow.BLOCKING:  # play waits for the three answers
            assert v.claimer == N and v.my_turn and v.legal_plays == 0
        else:  # play goes on: E is still to play, and nobody waits for the answers
            assert v.claimer is None and v.my_turn == (s == E) and bool(v.legal_plays) == (s == E)
            assert AcceptClaim(s, N) in v.legal and RejectClaim(s, N) in v.legal
    # the played 3C is not part of the known hand
    assert not seat_view(g, E).known_cards[N] & cs("3C")


def test_every_open_concurrent_claim_is_in_every_view_with_its_accepts() -> None:
    g = Game(TURBO.replace(pass_cycle=(PassDirection.HOLD,)), 0, [SUIT_PER_SEAT] * 4)
    charge(g, "N- E- S- W-")
    play(g, "2C 2D 2H 2S")
    g.apply(Claim(S))
    g.apply(Claim(W))
    g.apply(AcceptClaim(N, W))
    play(g, "3C")
    g.apply(AcceptClaim(E, W))
    for s in range(4):
        v = seat_view(g, s)
        assert v.claims == (OpenClaim(S, 0), OpenClaim(W, 1 << N | 1 << E))
        assert v.claims[1].has_accepted(E) and not v.claims[1].has_accepted(S)
        assert v.claims[1].waiting_on == (S,)
        assert v.known_cards[S] == (0 if s == S else g.hands[S])
    # W, not to play and with its own claim open: answer S's claim, or withdraw its own
    assert seat_view(g, W).legal == (AcceptClaim(W, S), RejectClaim(W, S), RejectClaim(W, W))
    g.apply(RejectClaim(W, W))
    assert seat_view(g, N).claims == (OpenClaim(S, 0),)


def test_tricks_and_points_are_public() -> None:
    spec = deal(
        "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC",
        "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD",
        "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH",
        "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS",
    )
    g = Game(STANDARD.replace(pass_cycle=(PassDirection.HOLD,)), 0, [spec])
    play(g, "2C 2D 5H 2S 3C")
    v = seat_view(g, W)
    assert v.trick == ((N, 2 * 0 + 1),) and v.trick_no == 2
    assert v.tricks_won == (1, 0, 0, 0) and v.points == (1, 0, 0, 0)
    assert v.taken[N] == cs("2C 2D 5H 2S") and v.played == cs("2C 2D 5H 2S 3C")
    assert v.voids[E] == 1 and v.voids[S] == 1 and v.voids[W] == 1  # void in clubs shown
    assert v.cards_left == (11, 12, 12, 12) and v.unseen == ALL_CARDS & ~v.hand & ~v.played


def test_kierki_points_so_far_count_the_seventh_and_last_trick() -> None:
    # contract 6: only the 7th and the 13th trick score. N leads and takes every trick.
    g = Game(KIERKI, 0, [DealSpec(SUIT_PER_SEAT.hands, 6, N)])
    for _ in range(6):
        lowest_play_trick(g)
    assert seat_view(g, E).points == (0, 0, 0, 0)
    lowest_play_trick(g)
    assert seat_view(g, E).points == (10, 0, 0, 0)


def test_robber_points_so_far_add_tricks_cards_and_trick_numbers() -> None:
    g = Game(KIERKI, 0, [DealSpec(SUIT_PER_SEAT.hands, 7, N)])
    for _ in range(7):
        lowest_play_trick(g)
    # N took 7 tricks: 7 + the 7th trick 10; E, S, W discarded lowest first:
    # diamonds 2D..8D (JD not yet), hearts 2H..8H = 7, spades 2S..8S (no QS) -> 7 + 10 + 7 = 24
    assert seat_view(g, W).points == (24, 0, 0, 0)


def lowest_play_trick(g: Game) -> None:
    for _ in range(4):
        mask = g.legal_play_mask(g.turn)
        g.apply(Play.of(g.turn, (mask & -mask).bit_length() - 1))
