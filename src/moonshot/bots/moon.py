"""Moon-aware rollouts: playouts in which a seat on its way to the moon is seen, and stopped, early.

The greedy rollout player (:func:`~moonshot.bots.playout.greedy_policy`) turns to shooting, and
to stopping a shooter, only once a seat has nearly made the moon (eight hearts, or the queen and
four). Real shooters start much earlier, so in greedy playouts a shooter at the table simply
ducks its points away and the search sees no danger until the moon is made. :func:`alert_policy`
plays the greedy player except that a *threat* (the only seat to have taken moon cards so far,
with the queen or a few hearts among them, past the opening tricks) is modelled as shooting, and
the other seats defend against it: take a trick it would win when it carries points, and when
void, never feed it point cards but give them to anyone else (one heart elsewhere stops a moon).

:func:`model_policy` and :func:`threat_sampler` are ``search``'s moon model (``moon=model``, an
option; the default is ``off``): the *threat* is the seat that alone has taken moon cards;
the sampler leans towards worlds where its hand can shoot (by the rule ``shooter`` plays by), and
in those worlds it shoots in the playouts from the decision on while the deciding seat defends
(takes its tricks, keeps its high cards under the shooter's, feeds it nothing, spoils the moon
with a heart elsewhere); in the other worlds every seat plays the greedy player as before.

Rollouts are still pure functions of the deal and the seat's own hand (plus the public cards
taken), like every other rollout policy; the one exception is the moon model's verdict, made once
per playout from the threat's hand in that world (the world's hypothesis: "here it shoots").
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from moonshot.core.cards import ALL_CARDS, HEARTS_MASK, QUEEN_SPADES, SUIT_MASKS, CardSet
from moonshot.core.rules import MoonRule, Rules
from moonshot.core.views import SeatView

from .playout import ROLLOUT_POLICIES, Deal, Policy, greedy_policy
from .shooter import losers, moon_hand

QS_BIT = 1 << QUEEN_SPADES
MOON_CARDS = HEARTS_MASK | QS_BIT
THREAT_HEARTS = 3  # hearts taken (with no queen) that make a lone taker a threat


def threat(deal: Deal) -> int:
    """The seat that alone has taken moon cards, enough of them to be shooting; -1 if none."""
    if not deal.rules.moon or deal.trick_no < 3:
        return -1
    t = deal.taken
    holder = -1
    for s in range(4):
        if t[s] & MOON_CARDS:
            if holder >= 0:
                return -1
            holder = s
    if holder < 0:
        return -1
    got = t[holder] & MOON_CARDS
    if got & QS_BIT or (got & HEARTS_MASK).bit_count() >= THREAT_HEARTS:
        # too late once every heart is already in its hands or gone: nothing left to stop it with
        return holder
    return -1


def _lowest(cards: CardSet) -> int:
    return (cards & -cards).bit_length() - 1


def _highest(cards: CardSet) -> int:
    return cards.bit_length() - 1


def _rank_pick(cards: CardSet, high: bool) -> int:
    best, best_rank = -1, -1 if high else 99
    for s in range(4):
        m = cards & SUIT_MASKS[s]
        if m:
            c = _highest(m) if high else _lowest(m)
            r = c % 13
            if (r > best_rank) if high else (r < best_rank):
                best, best_rank = c, r
    return best


def alert_policy(deal: Deal, seat: int, legal: CardSet, rng: random.Random) -> int:
    """The greedy player with early moon shooting and moon defence (see the module's doc)."""
    x = threat(deal)
    if x < 0:
        return greedy_policy(deal, seat, legal, rng)
    if seat == x:  # the threat shoots: win everything it can, keep its winners
        return _shoot_play(deal, legal)
    return _defend_play(deal, seat, x, legal, rng, careful=False)


def guard_policy(me: int) -> Policy:
    """Rollouts for seat ``me``'s decision: a threat shoots early (as in :func:`alert_policy`), but only
    ``me`` defends; the other seats play the plain greedy player. With every seat defending (alert)
    the search counts on the others to stop a moon that, at a real table, nobody else stops."""

    def policy(deal: Deal, seat: int, legal: CardSet, rng: random.Random) -> int:
        if seat == me:
            return alert_policy(deal, seat, legal, rng)
        x = threat(deal)
        if x == seat:
            return alert_policy(deal, seat, legal, rng)
        return greedy_policy(deal, seat, legal, rng)

    return policy


# ---------------------------------------------------------------------- the moon model
# ``search:moon=model``: a seat that alone has taken moon cards is a *threat*. In some sampled
# worlds its hand is strong enough to shoot with; there, in the playouts, it shoots (from now on,
# not only once it has eight hearts) and the deciding seat defends. The sampler leans towards
# such worlds (it draws up to ``tries`` worlds and keeps the first where the threat can shoot),
# since a seat that has taken every point so far is far likelier to hold a shooting hand than a
# random one. Worlds where the threat cannot shoot are played out as before (greedy).
MOON_TRIES = 4  # worlds drawn per world kept, looking for one where the threat can shoot


def lone_taker(taken: Sequence[CardSet], me: int) -> int:
    """The seat other than ``me`` that alone has taken moon cards (at least one); -1 if none."""
    holder = -1
    for s in range(4):
        if taken[s] & MOON_CARDS:
            if holder >= 0 or s == me:
                return -1
            holder = s
    return holder


def can_shoot(hand: CardSet, out: CardSet, got: CardSet, trick_no: int, rules: Rules, kind: int) -> bool:
    """Whether a seat holding ``hand``, having taken the moon cards ``got`` (and nobody else any),
    with ``out`` the cards it cannot see, would go for the moon: the rule ``shooter`` plays by
    (:mod:`moonshot.bots.shooter`), on bit masks."""
    n = hand.bit_count()
    if not n:
        return False
    if (got & HEARTS_MASK).bit_count() >= 3 or got & QS_BIT:
        return losers(hand, out) <= max(2, n // 2)  # on the way: while the hand holds up
    if trick_no <= 3 and moon_hand(hand | (got & QS_BIT), rules, kind):
        return True
    return losers(hand, out, slack=1) <= max(3, n // 3) and (hand & HEARTS_MASK).bit_count() >= 2


def open_to(taken: Sequence[CardSet], x: int) -> bool:
    """Nobody but ``x`` has taken a moon card (so ``x`` may still shoot)."""
    return all(s == x or not taken[s] & MOON_CARDS for s in range(4))


def threat_of(view: SeatView) -> int:
    """The seat the moon model watches in ``view``'s decision: the lone taker of moon cards (-1: none)."""
    if view.rules.moon is MoonRule.NONE or view.rules.scoring_for(view.deal_kind).card_points[QUEEN_SPADES] <= 0:
        return -1
    return lone_taker(view.taken, view.seat)


def threat_sampler(
    view: SeatView, x: int, base: Callable[[random.Random], list[CardSet]], tries: int = MOON_TRIES
) -> Callable[[random.Random], list[CardSet]]:
    """``base``'s worlds, leaning towards those where threat ``x`` can shoot: up to ``tries`` are
    drawn and the first where it can is kept (else the first drawn)."""
    got = view.taken[x] & MOON_CARDS
    seen = view.played
    rules, kind, trick_no = view.rules, view.deal_kind, view.trick_no

    def sample(rng: random.Random) -> list[CardSet]:
        first: list[CardSet] | None = None
        for _ in range(tries):
            hands = base(rng)
            h = hands[x]
            if can_shoot(h, ALL_CARDS & ~seen & ~h, got, trick_no, rules, kind):
                return hands
            if first is None:
                first = hands
        assert first is not None
        return first

    return sample


def _trick_so_far(deal: Deal) -> tuple[int, int, CardSet]:
    """The current trick's winning card so far, who played it, and the trick's cards (a mask)."""
    tc = deal.trick
    led = tc[0] // 13
    win, winner = -1, -1
    trick_bits = 0
    for c, s in zip(tc, deal.tseats):
        trick_bits |= 1 << c
        if c // 13 == led and c > win:
            win, winner = c, s
    return win, winner, trick_bits


def _shoot_play(deal: Deal, legal: CardSet) -> int:
    tc = deal.trick
    if not tc:
        return _rank_pick(legal, True)
    follow = legal & SUIT_MASKS[tc[0] // 13]
    return _highest(follow) if follow else _rank_pick(legal, False)


def _defend_play(deal: Deal, seat: int, x: int, legal: CardSet, rng: random.Random, careful: bool = True) -> int:
    """Seat ``seat``'s card against shooter ``x``: take its tricks, feed it nothing, spoil the moon.

    ``careful`` (the moon model's defender) keeps its high cards when it cannot beat the shooter's
    card (to beat the shooter's later leads) and drops a heart only on a trick the shooter has
    already lost; without it (the ``alert`` rollouts) those cases go to the greedy player, and a
    heart goes on any trick someone else wins."""
    tc = deal.trick
    if not tc:
        return greedy_policy(deal, seat, legal, rng)
    led = tc[0] // 13
    win, winner, trick_bits = _trick_so_far(deal)
    follow = legal & SUIT_MASKS[led]
    if follow:
        if winner == x:
            above = follow & ~((1 << (win + 1)) - 1)
            if above:  # take it from the shooter (points or not: it also takes the lead away)
                return _lowest(above)
            if careful:
                return _lowest(follow)
        return greedy_policy(deal, seat, legal, rng)
    bad = deal.rules.bad_cards
    if winner == x:  # void: feed the shooter nothing that counts
        keep = legal & ~bad
        if keep:
            return _rank_pick(keep, True)
        return greedy_policy(deal, seat, legal, rng)
    # void, someone else wins: a heart there stops the moon
    hearts = legal & HEARTS_MASK & bad
    if hearts and not trick_bits & MOON_CARDS and (not careful or x in deal.tseats):
        return _highest(hearts)
    return greedy_policy(deal, seat, legal, rng)


def model_policy(me: int, threats: Sequence[int]) -> Policy:
    """Rollouts for ``me``'s decision: in a world where one of ``threats`` can shoot (judged at the
    start of each playout by :func:`can_shoot`; the first such seat), that seat shoots and ``me``
    defends for as long as nobody else has taken moon cards; everything else is the greedy player."""
    last: list[object] = [None]
    shooter = [-1]
    seats = tuple(threats)

    def policy(deal: Deal, seat: int, legal: CardSet, rng: random.Random) -> int:
        if last[0] is not deal:  # a new playout: does a threat shoot in this world?
            last[0] = deal
            shooter[0] = -1
            t = deal.taken
            r = deal.rules
            for x in seats:
                h = deal.hands[x]
                if open_to(t, x) and can_shoot(
                    h, ALL_CARDS & ~deal.played & ~h, t[x] & MOON_CARDS, deal.trick_no, r.rules, r.kind
                ):
                    shooter[0] = x
                    break
        x = shooter[0]
        if x < 0 or (seat != x and seat != me) or not open_to(deal.taken, x):
            return greedy_policy(deal, seat, legal, rng)
        if seat == x:
            return _shoot_play(deal, legal)
        return _defend_play(deal, seat, x, legal, rng)

    return policy


MOON_MODELS = ("off", "model", "field")


SEARCH_POLICIES: dict[str, Policy] = {**ROLLOUT_POLICIES, "alert": alert_policy, "guard": greedy_policy}
# rollouts that depend on whose decision it is: built per decision (passing and charging use the entry above)
SEAT_POLICIES = {"guard": guard_policy}


__all__ = [
    "MOON_MODELS",
    "SEARCH_POLICIES",
    "SEAT_POLICIES",
    "alert_policy",
    "can_shoot",
    "guard_policy",
    "lone_taker",
    "model_policy",
    "open_to",
    "threat",
    "threat_of",
    "threat_sampler",
]
