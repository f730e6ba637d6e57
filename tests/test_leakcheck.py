"""The leak check itself (``tests/leakcheck.py``): it flags what a seat may not know, and only that."""

from __future__ import annotations

import random

from leakcheck import Received, cards_in_json, check_game
from moonshot.core.actions import Pass, Play
from moonshot.core.cards import card_list, parse_card
from moonshot.core.engine import Game, Phase
from moonshot.core.events import CardPlayed, ClaimMade, HandDealt, PassReceived, PassSent
from moonshot.core.variants import find_variant


def played_deal() -> Game:
    g = Game(find_variant("standard"), 5)
    rng = random.Random(5)
    while g.deal_index == 0 and not g.over:  # the first deal (passing left) and a bit of the next
        s = g.to_act()[0]
        if g.phase is Phase.PLAY:
            g.apply(Play.of(s, rng.choice(card_list(g.legal_play_mask(s)))))
        else:
            g.apply(Pass(s, sum(1 << c for c in rng.sample(card_list(g.hands[s]), 3))))
    return g


def test_own_cards_passes_and_played_cards_are_knowable_others_are_not() -> None:
    g = played_deal()
    log = g.log
    dealt = next(e for e in log if isinstance(e, HandDealt) and e.seat == 0)
    other = next(e for e in log if isinstance(e, HandDealt) and e.seat == 1)
    got = next(e for e in log if isinstance(e, PassReceived) and e.seat == 0)
    at_deal = log.index(dealt) + 1
    assert check_game(log, [Received(0, at_deal, dealt.cards, "own hand")]) == []
    assert check_game(log, [Received(0, at_deal, other.cards, "east's hand")]) != []
    assert check_game(log, [Received(0, at_deal, got.cards, "the pass too early")]) != []
    assert check_game(log, [Received(0, log.index(got) + 1, got.cards, "the pass")]) == []
    first_play = next(i for i, e in enumerate(log) if isinstance(e, CardPlayed) and e.seat != 0)
    card = log[first_play].card  # type: ignore[attr-defined]
    assert check_game(log, [Received(0, first_play, 1 << card, "before it is played")]) != []
    assert check_game(log, [Received(0, first_play + 1, 1 << card, "once played")]) == []


def test_cards_are_found_anywhere_in_a_json_message() -> None:
    msg = {"type": "x", "a": [{"deep": ["TH"]}], "QS": 1, "tag": "player(2)", "card": "10h", "n": 2}
    assert cards_in_json(msg) == (1 << parse_card("TH")) | (1 << parse_card("QS")) | (1 << parse_card("10H"))


def test_a_pass_is_knowable_once_both_seats_passed_and_a_claim_shows_the_hand() -> None:
    g = played_deal()
    log = list(g.log)
    to_me = next(e for e in log if isinstance(e, PassSent) and e.to == 0)
    mine = next(e for e in log if isinstance(e, PassSent) and e.seat == 0)
    both = max(log.index(to_me), log.index(mine)) + 1
    assert to_me.cards is not None
    assert check_game(log, [Received(0, both - 1, to_me.cards, "before both passed")]) != []
    assert check_game(log, [Received(0, both, to_me.cards, "once both passed")]) == []
    east = g.hands[1]  # in the second deal, a few cards in
    log.append(ClaimMade(1, east))
    before = Received(0, len(log) - 1, east, "before the claim")
    assert check_game(log, [before], per_deal=True) != []
    assert check_game(log, [Received(0, len(log), east, "the claimer's hand")], per_deal=True) == []


def test_per_deal_forgets_the_last_deal() -> None:
    g = Game(find_variant("standard"), 5)
    rng = random.Random(6)
    while g.deal_index < 1:  # the whole first deal, and the second one dealt
        s = g.to_act()[0]
        if g.phase is Phase.PLAY:
            g.apply(Play.of(s, rng.choice(card_list(g.legal_play_mask(s)))))
        else:
            g.apply(Pass(s, sum(1 << c for c in rng.sample(card_list(g.hands[s]), 3))))
    log = g.log
    east = [e for e in log if isinstance(e, HandDealt) and e.seat == 1][-1].cards
    at = len(log)
    assert check_game(log, [Received(0, at, east, "east's new hand")]) == []  # every card was played
    assert check_game(log, [Received(0, at, east, "east's new hand")], per_deal=True) != []
