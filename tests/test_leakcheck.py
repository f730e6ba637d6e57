"""The leak check itself (``tests/leakcheck.py``): it flags what a seat may not know, and only that."""

from __future__ import annotations

import random

from leakcheck import Received, cards_in_json, check_game
from moonshot.actions import Pass, Play
from moonshot.cards import card_list, parse_card
from moonshot.engine import Game, Phase
from moonshot.events import CardPlayed, HandDealt, PassReceived
from moonshot.variants import find_variant


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
