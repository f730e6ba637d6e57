"""The automatic player: it plays to the contract, always legally, follows the wire, and beats random."""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from dataclasses import replace

import pytest

from moonshot.bots.heuristic import HeuristicBot
from moonshot.bots.random import RandomBot
from moonshot.core.actions import Play
from moonshot.core.cards import card_list, parse_card
from moonshot.core.engine import Game
from moonshot.core.events import DealEnded, DealStarted, TrickEnded
from moonshot.core.variants import KIERKI
from moonshot.core.views import SeatView, seat_view
from moonshot.protocols.kierki.auto import ClientState, choose_card, legal_plays
from moonshot.protocols.kierki.codec import Deal, Message, Score, Taken, Total, Trick, format_cards, parse_message
from moonshot.protocols.kierki.gamefile import random_deals


def mask(*names: str) -> int:
    return sum(1 << parse_card(n) for n in names)


def view(
    kind: int,
    hand: list[str],
    trick: Sequence[str] = (),
    seat: int = 3,
    trick_no: int = 2,
    played: Sequence[str] = (),
    voids: tuple[int, int, int, int] = (0, 0, 0, 0),
) -> SeatView:
    """The seat's view as the client builds it, for a hand-made position."""
    st = ClientState(seat)
    first = (seat - len(trick)) % 4
    st.kind, st.hand, st.trick_no, st.prompt, st.deals_seen = kind, mask(*hand), trick_no, trick_no, 1
    st.dealt = st.hand | mask(*played)
    st.table = tuple(((first + i) % 4, parse_card(c)) for i, c in enumerate(trick))
    st.gone = mask(*played)
    st.voids = list(voids)
    return st.seat_view()


def pick(v: SeatView) -> str:
    c = choose_card(v)
    assert v.legal_plays >> c & 1
    return format_cards([c])


def test_no_hearts_throws_its_highest_heart_on_someone_elses_trick() -> None:
    assert pick(view(2, ["AH", "5H", "KS", "2D"], ["4C", "9C", "JC"])) == "AH"


def test_no_kh_ducks_the_king_under_the_ace() -> None:
    assert pick(view(5, ["KH", "2H", "3D"], ["5H", "AH", "7H"])) == "KH"


def test_no_kh_dumps_the_king_when_void() -> None:
    assert pick(view(5, ["KH", "2H", "3D", "AS"], ["5C", "7C"], seat=2)) == "KH"


def test_no_tricks_plays_the_highest_card_that_still_loses() -> None:
    assert pick(view(1, ["9C", "JC", "2C", "AD"], ["3C", "10C"], seat=2)) == "9C"


def test_no_tricks_last_to_play_and_forced_to_win_sheds_the_highest() -> None:
    assert pick(view(1, ["QC", "KC", "AC"], ["3C", "10C", "2C"])) == "AC"


def test_no_queens_drops_the_queen_under_the_king() -> None:
    assert pick(view(3, ["QS", "2S", "5D"], ["KS"], seat=1)) == "QS"


def test_no_kings_or_jacks_dumps_one_when_void() -> None:
    assert pick(view(4, ["KD", "JC", "5H", "2D"], ["4S"], seat=1)) in ("KD", "JC")


def test_seventh_and_last_sheds_winners_early_and_ducks_the_seventh() -> None:
    hand = ["2C", "AC", "5D", "9S"]
    assert pick(view(6, hand, ["5C", "8C"], trick_no=3, seat=2)) == "AC"
    assert pick(view(6, hand, ["5C", "8C"], trick_no=7, seat=2)) == "2C"


def test_robber_does_not_lead_a_card_that_surely_wins() -> None:
    assert pick(view(7, ["AC", "5D", "9S"], [], trick_no=2)) != "AC"


def test_no_hearts_does_not_lead_hearts_holding_the_king() -> None:
    assert pick(view(2, ["2H", "KH", "4C"], [], trick_no=2)) == "4C"


def test_exclude_skips_a_refused_card_while_another_is_legal() -> None:
    v = view(1, ["9C", "JC", "2C", "AD"], ["3C", "10C"], seat=2)
    first = choose_card(v)
    second = choose_card(v, exclude=1 << first)
    assert second != first and v.legal_plays >> second & 1
    everything = v.legal_plays
    assert choose_card(v, exclude=everything) == parse_card("AD")  # all legal ones refused: the rest


def test_legal_plays_follow_suit() -> None:
    assert legal_plays(mask("2C", "3D"), ((0, parse_card("5C")),)) == mask("2C")
    assert legal_plays(mask("2H", "3D"), ((0, parse_card("5C")),)) == mask("2H", "3D")
    assert legal_plays(mask("2H", "3D"), ()) == mask("2H", "3D")


@pytest.mark.parametrize("seed", range(4))
def test_the_wire_view_is_the_engine_view(seed: int) -> None:
    """Feed each seat's ClientState exactly the messages a server sends; at every turn the heuristic
    picks the same card from the wire view as from the engine's own view of that seat."""
    deals = random_deals(random.Random(seed))
    game = Game(KIERKI, 0, deals)
    states = [ClientState(s) for s in range(4)]

    def tell(seat: int, msg: Message) -> None:
        states[seat].on_message(msg)

    for s in range(4):
        tell(s, Deal(deals[0].kind, deals[0].leader or 0, tuple(card_list(deals[0].hands[s]))))
    turns = 0
    while not game.over:
        seat = game.turn
        tell(seat, Trick(game.trick_no, tuple(game.trick_cards)))
        wire = states[seat].seat_view()
        engine = seat_view(game, seat)
        # points so far: the contract's whole table, the 7th and last trick included (as main's
        # engine counts them too); every other field must be identical
        assert list(wire.points) == spec_points_so_far(deals[game.deal_index].kind, game)
        assert replace(wire, points=engine.points) == engine
        card = choose_card(wire)
        assert card == choose_card(engine)
        turns += 1
        for e in game.apply(Play.of(seat, card)):
            if isinstance(e, TrickEnded):
                for s in range(4):
                    tell(s, Taken(e.trick, tuple(e.cards), e.winner))
            elif isinstance(e, DealEnded):
                for s in range(4):
                    tell(s, Score(e.points))  # type: ignore[arg-type]
                    tell(s, Total(e.totals))  # type: ignore[arg-type]
            elif isinstance(e, DealStarted):
                d = deals[e.deal]
                for s in range(4):
                    tell(s, Deal(d.kind, d.leader or 0, tuple(card_list(d.hands[s]))))
    assert all(st.finished for st in states)
    assert turns > 7 * 40


def spec_points_so_far(kind: int, game: Game) -> list[int]:
    sc = KIERKI.scoring[kind]
    numbered = dict(sc.trick_number_points)
    out = [0, 0, 0, 0]
    for t in game.tricks:
        out[t.winner] += sum(sc.card_points[c] for c in t.cards) + sc.per_trick + numbered.get(t.trick, 0)
    return out


def test_beats_random_players() -> None:
    hero, rnd = HeuristicBot(), RandomBot()
    mine: list[int] = []
    theirs: list[float] = []
    for g in range(6):
        deals = random_deals(random.Random(f"t{g}"))
        for seat in range(4):
            rng = random.Random(f"{g}:{seat}")
            game = Game(KIERKI, 0, deals)
            while not game.over:
                s = game.to_act()[0]
                bot = hero if s == seat else rnd
                for e in game.apply(bot.act(seat_view(game, s), rng)):
                    if isinstance(e, DealEnded):  # every point of the contract is handed out
                        assert sum(e.points) == KIERKI.scoring[deals[e.deal].kind].total
            mine.append(game.totals[seat])
            theirs.append(sum(game.totals[s] for s in range(4) if s != seat) / 3)
    assert statistics.mean(mine) < 0.6 * statistics.mean(theirs)


# ----------------------------------------------------------------------------- following the wire
def feed(state: ClientState, *lines: str) -> None:
    for line in lines:
        state.on_message(parse_message(line))


def test_client_state_follows_a_deal() -> None:
    st = ClientState(seat=1)  # E
    feed(st, "DEAL5N10H2H8H4H6CQSKCQH5H7C3H9D10C")
    assert st.kind == 5 and st.leader == 0 and st.hand.bit_count() == 13 and st.trick_no == 1
    feed(st, "TRICK19H")
    assert st.prompt == 1 and st.table == ((0, parse_card("9H")),)
    assert st.seat_view().legal_plays == mask("10H", "2H", "8H", "4H", "QH", "5H", "3H")
    feed(st, "TAKEN19H10HAHJHS")
    assert st.hand.bit_count() == 12 and not st.hand >> parse_card("10H") & 1
    assert st.trick_no == 2 and st.prompt is None and st.next_leader == 2
    feed(st, "TRICK22C5C8C")  # S led, W and N followed: now E
    assert [s for s, _ in st.table] == [2, 3, 0]
    feed(st, "TAKEN22C5C8C6CN", "TRICK3")
    feed(st, "TAKEN35D9D6D7DE")  # E led 5D... but E holds no 5D: the seats come from E's own card
    assert st.voids == [0, 0, 0, 0]
    feed(st, "TAKEN43S2H4S6SW")  # S led spades, E threw a heart: E shows a spade void
    assert st.voids[1] == 1 << 3


def test_client_state_after_a_reconnect_and_at_the_end() -> None:
    st = ClientState(seat=0)
    feed(st, "DEAL1N9H5DKS8CQC3S10D7H2DJD6S4CAC", "TAKEN14C6C2C5CE", "TAKEN29D6D7D5DE")
    assert st.hand.bit_count() == 11 and st.trick_no == 3 and len(st.tricks) == 2
    assert st.my_tricks() == []
    assert st.voids[3] == 0
    feed(st, "TRICK39D")
    assert st.prompt == 3 and not st.finished
    feed(st, "SCOREN1E2S3W7", "TOTALN1E2S3W7")
    assert st.finished and st.totals == (1, 2, 3, 7) and st.scores == (1, 2, 3, 7)
    st.on_message(Deal(2, 1, tuple(range(13))))
    assert not st.finished and st.deals_seen == 2 and st.tricks == []


def test_client_state_ignores_nothing_it_needs() -> None:
    st = ClientState(seat=2)
    st.on_message(Deal(1, 2, tuple(range(13))))
    st.on_message(Trick(1, ()))
    st.on_message(Taken(1, (0, 13, 14, 15), 2))
    assert st.my_tricks()[0].cards == (0, 13, 14, 15)
    st.on_message(Score((0, 0, 1, 0)))
    st.on_message(Total((0, 0, 1, 0)))
    assert st.finished


def test_any_bot_can_choose_the_automatic_clients_card() -> None:
    from moonshot.bots.search import SearchBot

    game = Game(KIERKI, 3, random_deals(random.Random(3)))
    rng = random.Random(0)
    while not game.over and game.deal_index == 0:
        seat = game.to_act()[0]
        view = seat_view(game, seat)
        card = choose_card(view, 0, SearchBot(simulations=8), rng)
        assert view.legal_plays >> card & 1
        game.apply(Play.of(seat, card))
