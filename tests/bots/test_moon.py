"""Moon-aware rollouts: the threat is the lone taker of moon cards; defenders take its tricks."""

from __future__ import annotations

import random

from moonshot.bots.moon import SEARCH_POLICIES, alert_policy, threat
from moonshot.bots.playout import Deal, DealRules, start_of_play
from moonshot.cards import ALL_CARDS, parse_card, parse_card_set
from moonshot.variants import STANDARD, VARIANTS


def test_threat_and_defence() -> None:
    north = parse_card_set(["2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "10C"])
    east = parse_card_set(["KD", "QD", "JD", "AS"])
    south = parse_card_set(["2D", "3D", "4D", "5D"])
    west = parse_card_set(["6D", "7D", "8D", "9D"])
    taken_w = parse_card_set(["QS", "2H", "3H", "4H"])
    played = ALL_CARDS & ~(north | east | south | west)
    deal = Deal(DealRules.of(STANDARD, 0), [north, east, south, west], turn=3, trick_no=10, played=played, broken=True,
                taken=[0, 0, 0, taken_w])  # fmt: skip
    assert threat(deal) == 3
    deal.play(parse_card("9D"))  # the threat (West) leads
    deal.play(parse_card("2C"))  # North is void in diamonds
    assert deal.hands[0] == north & ~(1 << parse_card("2C"))
    # East can beat the nine: it takes the trick from the shooter
    card = alert_policy(deal, 1, deal.legal(), random.Random(0))
    assert card == parse_card("JD")
    deal2 = Deal(DealRules.of(STANDARD, 0), [north, east, south, west], turn=3, trick_no=10, played=played)
    assert threat(deal2) == -1


def test_alert_is_a_search_rollout_and_finishes_deals_in_every_variant() -> None:
    assert SEARCH_POLICIES["alert"] is alert_policy
    rng = random.Random(1)
    for rules in VARIANTS.values():
        for _k in range(5):
            cards = list(range(52))
            rng.shuffle(cards)
            hands = [sum(1 << c for c in cards[13 * s : 13 * s + 13]) for s in range(4)]
            deal = start_of_play(rules, rules.deal_kinds[0], hands, 0)
            costs = deal.finish(alert_policy, rng)
            assert len(costs) == 4 and deal.done


def test_guard_only_the_deciding_seat_defends() -> None:
    from moonshot.bots.moon import SEAT_POLICIES, guard_policy
    from moonshot.bots.playout import greedy_policy

    north = parse_card_set(["2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "10C"])
    east = parse_card_set(["KD", "QD", "JD", "AS"])
    south = parse_card_set(["2D", "3D", "4D", "5D"])
    west = parse_card_set(["6D", "7D", "8D", "9D"])
    played = ALL_CARDS & ~(north | east | south | west)
    taken = [0, 0, 0, parse_card_set(["QS", "2H", "3H", "4H"])]
    deal = Deal(DealRules.of(STANDARD, 0), [north, east, south, west], turn=3, trick_no=10, played=played, taken=taken)
    deal.play(parse_card("9D"))
    deal.play(parse_card("2C"))
    rng = random.Random(0)
    legal = deal.legal()
    assert guard_policy(1)(deal, 1, legal, rng) == parse_card("JD")  # East decides: it takes the trick
    assert guard_policy(0)(deal, 1, legal, rng) == greedy_policy(deal, 1, legal, rng)  # others: greedy
    assert SEAT_POLICIES["guard"] is guard_policy
