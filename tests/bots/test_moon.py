"""Moon-aware rollouts: the threat is the lone taker of moon cards; defenders take its tricks."""

from __future__ import annotations

import random

from moonshot.bots.moon import SEARCH_POLICIES, alert_policy, threat
from moonshot.bots.playout import Deal, DealRules, start_of_play
from moonshot.core.cards import ALL_CARDS, parse_card, parse_card_set
from moonshot.core.variants import STANDARD, VARIANTS


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


# ---------------------------------------------------------------------- the moon model (search:moon=model)
HEARTS = parse_card_set(["2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "10H", "JH", "QH", "KH", "AH"])
STRONG = ["AC", "AD", "QD", "JD", "AH", "KH", "QH", "JH", "10H"]  # two losers (the king of diamonds is out)
WEAK = ["2S", "3S", "4S", "5S", "6S", "7S", "8S", "QD", "JD"]  # seven losers


def _threat_deal(west: list[str]) -> Deal:
    """West alone has taken the queen and three hearts, and is to lead to trick 5."""
    north = parse_card_set(["2C", "3C", "4C", "5C", "6C", "9H", "7D", "8D", "9D"])
    east = parse_card_set(["7C", "8C", "9C", "10C", "JC", "2D", "3D", "4D", "5D"])
    south = parse_card_set(["QC", "KC", "6D", "10D", "KD", "5H", "6H", "7H", "8H"])
    hands = [north, east, south, parse_card_set(west)]
    # (the high spades are left out of the cards played: for the weak hand, they are still out)
    played = ALL_CARDS & ~(north | east | south | hands[3]) & ~parse_card_set(["9S", "10S", "JS", "KS", "AS"])
    taken = [0, 0, 0, parse_card_set(["QS", "2H", "3H", "4H"])]
    return Deal(DealRules.of(STANDARD, 0), hands, turn=3, trick_no=5, played=played, broken=True, taken=taken)


def test_lone_taker_and_can_shoot() -> None:
    from moonshot.bots.moon import can_shoot, lone_taker

    assert lone_taker([0, 0, 0, parse_card_set(["2H"])], 0) == 3
    assert lone_taker([0, 0, 0, parse_card_set(["2H"])], 3) == -1  # my own points are no threat
    assert lone_taker([parse_card_set(["3H"]), 0, 0, parse_card_set(["2H"])], 1) == -1  # two takers: no moon
    assert lone_taker([0, parse_card_set(["2C"]), 0, 0], 0) == -1  # no moon cards taken
    for west, verdict in ((STRONG, True), (WEAK, False)):
        deal = _threat_deal(west)
        h = deal.hands[3]
        assert can_shoot(h, ALL_CARDS & ~deal.played & ~h, deal.taken[3], 5, STANDARD, 0) is verdict


def test_model_rollout_the_threat_shoots_only_in_worlds_where_it_can_and_i_defend() -> None:
    from moonshot.bots.moon import model_policy
    from moonshot.bots.playout import greedy_policy

    rng = random.Random(0)
    policy = model_policy(2, [3])  # South decides, West is the threat
    strong = _threat_deal(STRONG)
    assert policy(strong, 3, strong.legal(), rng) % 13 == 12  # it leads an ace: shooting
    assert greedy_policy(strong, 3, strong.legal(), rng) == parse_card("JD")  # (the greedy player leads low)
    weak = _threat_deal(WEAK)
    assert policy(weak, 3, weak.legal(), rng) == greedy_policy(weak, 3, weak.legal(), rng)
    # West leads the queen of diamonds: the others play the greedy player, and South takes the trick
    strong = _threat_deal(STRONG)
    strong.play(parse_card("QD"))
    for seat in (0, 1):
        card = policy(strong, seat, strong.legal(), rng)
        assert card == greedy_policy(strong, seat, strong.legal(), rng)
        strong.play(card)
    assert policy(strong, 2, strong.legal(), rng) == parse_card("KD")
    assert greedy_policy(strong, 2, strong.legal(), rng) == parse_card("10D")  # (where greedy ducks)
    # in the weak world South ducks as before
    weak = _threat_deal(WEAK)
    weak.turn = 2
    weak.trick, weak.tseats = [parse_card("QD")], [3]
    assert policy(weak, 2, weak.legal(), rng) == greedy_policy(weak, 2, weak.legal(), rng)
    deal = _threat_deal(STRONG)
    deal.played = ALL_CARDS & ~(deal.hands[0] | deal.hands[1] | deal.hands[2] | deal.hands[3])
    costs = deal.finish(policy, rng)  # and a model playout finishes the deal
    assert len(costs) == 4


def test_threat_sampler_leans_towards_worlds_where_the_threat_can_shoot() -> None:
    from moonshot.bots.moon import can_shoot, threat_of, threat_sampler
    from moonshot.bots.search import sample_view
    from moonshot.core.actions import Play
    from moonshot.core.engine import Game, Phase
    from moonshot.core.rules import PassDirection
    from moonshot.core.views import SeatView, seat_view

    rules = STANDARD.replace(pass_cycle=(PassDirection.HOLD,))
    rng = random.Random(4)
    checked = 0
    for seed in range(30):
        game = Game(rules, seed)
        while not game.over and game.deal_index == 0:
            seat = game.to_act()[0]
            view = seat_view(game, seat)
            assert view.phase is Phase.PLAY
            x = threat_of(view)
            if x >= 0 and view.trick_no <= 8:
                got = view.taken[x] & (HEARTS | 1 << parse_card("QS"))

                def shoots(hands: list[int], v: SeatView = view, x: int = x, got: int = got) -> bool:
                    h = hands[x]
                    return can_shoot(h, ALL_CARDS & ~v.played & ~h, got, v.trick_no, rules, 0)

                base = sum(shoots(sample_view(view, rng)) for _ in range(100))
                sampler = threat_sampler(view, x, lambda r, v=view: sample_view(v, r), tries=4)
                leaned = 0
                for _ in range(100):
                    hands = sampler(rng)
                    # consistent with the view: my hand, the hand sizes, nothing played
                    assert hands[seat] == view.hand
                    assert [h.bit_count() for h in hands] == list(view.cards_left)
                    assert not any(h & view.played for h in hands)
                    leaned += shoots(hands)
                if 5 <= base <= 60:
                    assert leaned > base
                    checked += 1
                break
            cards = [c for c in range(52) if view.legal_plays >> c & 1]
            game.apply(Play.of(seat, rng.choice(cards)))
    assert checked >= 2
