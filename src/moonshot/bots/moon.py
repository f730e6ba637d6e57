"""Moon-aware rollouts: playouts in which a seat on its way to the moon is seen, and stopped, early.

The greedy rollout player (:func:`~moonshot.bots.playout.greedy_policy`) turns to shooting, and
to stopping a shooter, only once a seat has nearly made the moon (eight hearts, or the queen and
four). Real shooters start much earlier, so in greedy playouts a shooter at the table simply
ducks its points away and the search sees no danger until the moon is made. :func:`alert_policy`
plays the greedy player except that a *threat* (the only seat to have taken moon cards so far,
with the queen or a few hearts among them, past the opening tricks) is modelled as shooting, and
the other seats defend against it: take a trick it would win when it carries points, and when
void, never feed it point cards but give them to anyone else (one heart elsewhere stops a moon).

Rollouts are still pure functions of the deal and the seat's own hand (plus the public cards
taken), like every other rollout policy.
"""

from __future__ import annotations

import random

from moonshot.cards import HEARTS_MASK, QUEEN_SPADES, SUIT_MASKS, CardSet

from .playout import ROLLOUT_POLICIES, Deal, Policy, greedy_policy

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
    tc = deal.trick
    bad = deal.rules.bad_cards
    if seat == x:  # the threat shoots: win everything it can, keep its winners
        if not tc:
            return _rank_pick(legal, True)
        led = tc[0] // 13
        follow = legal & SUIT_MASKS[led]
        return _highest(follow) if follow else _rank_pick(legal, False)
    if not tc:
        return greedy_policy(deal, seat, legal, rng)
    led = tc[0] // 13
    win, winner = -1, -1
    trick_bits = 0
    for c, s in zip(tc, deal.tseats):
        trick_bits |= 1 << c
        if c // 13 == led and c > win:
            win, winner = c, s
    follow = legal & SUIT_MASKS[led]
    if follow:
        if winner == x:
            above = follow & ~((1 << (win + 1)) - 1)
            if above:  # take it from the shooter (points or not: it also takes the lead away)
                return _lowest(above)
        return greedy_policy(deal, seat, legal, rng)
    if winner == x:  # void: feed the shooter nothing that counts
        keep = legal & ~bad
        if keep:
            return _rank_pick(keep, True)
        return greedy_policy(deal, seat, legal, rng)
    # void, someone else wins: a heart there stops the moon
    hearts = legal & HEARTS_MASK & bad
    if hearts and not trick_bits & MOON_CARDS:
        return _highest(hearts)
    return greedy_policy(deal, seat, legal, rng)


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


SEARCH_POLICIES: dict[str, Policy] = {**ROLLOUT_POLICIES, "alert": alert_policy, "guard": greedy_policy}
# rollouts that depend on whose decision it is: built per decision (passing and charging use the entry above)
SEAT_POLICIES = {"guard": guard_policy}


__all__ = ["SEARCH_POLICIES", "SEAT_POLICIES", "alert_policy", "guard_policy", "threat"]
