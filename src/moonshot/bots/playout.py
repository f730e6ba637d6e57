"""A lean perfect-information deal simulator and fast rollout policies, for search.

The engine (:class:`~moonshot.core.engine.Game`) builds events, views and validation for every move;
search needs thousands of complete deals per decision, so this module keeps only what a deal's
outcome depends on: four hand masks, the trick in progress, what was played and taken, hearts
broken, suits led, and the charged/exposed cards. :class:`Deal` asks the engine's own
:func:`moonshot.core.engine.legal_plays` for the legal cards, follows the rest of the engine's rules
(nines, Kierki's early end) and scores with :func:`moonshot.core.rules.score_deal`, so moon rules and
multipliers come for free; the tests play the same cards through both and compare.

Rollout policies are plain functions ``policy(deal, seat, legal_mask, rng) -> card``; they see
only the seat's own hand and the public state of the deal, never the other hands.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from moonshot.core.cards import (
    HEARTS_MASK,
    QUEEN_SPADES,
    SPADES_MASK,
    SUIT_MASKS,
    TWO_CLUBS,
    CardSet,
    count,
)
from moonshot.core.engine import legal_plays
from moonshot.core.rules import MoonRule, Rules, score_deal
from moonshot.core.tricks import beats, breaks_hearts, deal_ends, led_nine, trick_goes_on

try:
    from mypy_extensions import mypyc_attr
except ImportError:  # pragma: no cover - without mypy nothing is compiled, and the mark has no use

    def mypyc_attr(*attrs: str, **kwattrs: object) -> Any:  # type: ignore[misc]
        return lambda cls: cls


QS_BIT = 1 << QUEEN_SPADES
MOON_CARDS = HEARTS_MASK | QS_BIT
HIGH_SPADES = SPADES_MASK & ~((1 << QUEEN_SPADES + 1) - 1)  # KS, AS


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled, it may still be subclassed in Python
@dataclass(frozen=True)
class DealRules:
    """The per-deal constants the simulator reads (one deal kind of one :class:`Rules`)."""

    rules: Rules
    kind: int
    card_points: tuple[int, ...]
    point_cards: CardSet  # cards that carry points (positive or negative)
    bad_cards: CardSet  # cards with positive points (to avoid taking)
    good_cards: CardSet  # cards with negative points (worth taking: JD)
    per_trick: int
    last_numbered_trick: int  # the last trick number that carries points (0: none)
    queen_breaks: bool
    nines: bool
    early_end: bool
    moon: bool

    @staticmethod
    def of(rules: Rules, kind: int) -> DealRules:
        key = (id(rules), kind)
        cached = _CACHE.get(key)
        if cached is not None and cached.rules is rules:
            return cached
        sc = rules.scoring_for(kind)
        cp = sc.card_points
        dr = DealRules(
            rules=rules,
            kind=kind,
            card_points=cp,
            point_cards=sum(1 << c for c in range(52) if cp[c]),
            bad_cards=sum(1 << c for c in range(52) if cp[c] > 0),
            good_cards=sum(1 << c for c in range(52) if cp[c] < 0),
            per_trick=sc.per_trick,
            last_numbered_trick=max((n for n, _ in sc.trick_number_points), default=0),
            queen_breaks=rules.queen_breaks_hearts,
            nines=rules.nines,
            early_end=rules.early_end,
            moon=rules.moon is not MoonRule.NONE,
        )
        if len(_CACHE) > 256:
            _CACHE.clear()
        _CACHE[key] = dr
        return dr


_CACHE: dict[tuple[int, int], DealRules] = {}


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled, it may still be subclassed in Python
class Deal:
    """One deal from some point of play to its end, with every hand known (a determinization)."""

    __slots__ = (
        "broken",
        "charged",
        "done",
        "doubled",
        "hands",
        "led_suits",
        "played",
        "pts",
        "rules",
        "taken",
        "tnw",
        "trick",
        "trick_no",
        "tricks_won",
        "tseats",
        "turn",
    )

    def __init__(
        self,
        rules: DealRules,
        hands: list[CardSet],
        *,
        turn: int,
        trick_no: int = 1,
        trick: list[int] | None = None,
        tseats: list[int] | None = None,
        played: CardSet = 0,
        led_suits: int = 0,
        broken: bool = False,
        taken: list[CardSet] | None = None,
        tricks_won: list[int] | None = None,
        tnw: list[int] | None = None,
        charged: CardSet = 0,
        doubled: CardSet = 0,
        pts: list[int] | None = None,
    ) -> None:
        self.rules = rules
        self.hands = hands
        self.turn = turn
        self.trick_no = trick_no
        self.trick = trick if trick is not None else []
        self.tseats = tseats if tseats is not None else []
        self.played = played
        self.led_suits = led_suits
        self.broken = broken
        self.taken = taken if taken is not None else [0, 0, 0, 0]
        self.tricks_won = tricks_won if tricks_won is not None else [0, 0, 0, 0]
        self.tnw = tnw if tnw is not None else [0, 0, 0, 0]
        self.charged = charged  # all charged cards (the charged-card rule)
        self.doubled = doubled  # charged or exposed cards (scoring)
        cp = rules.card_points
        self.pts = pts if pts is not None else [_points(cp, t) for t in self.taken]
        self.done = False

    def copy(self) -> Deal:
        # through __init__ (compiled with mypyc a class cannot be made with __new__ alone)
        d = Deal(
            self.rules,
            self.hands[:],
            turn=self.turn,
            trick_no=self.trick_no,
            trick=self.trick[:],
            tseats=self.tseats[:],
            played=self.played,
            led_suits=self.led_suits,
            broken=self.broken,
            taken=self.taken[:],
            tricks_won=self.tricks_won[:],
            tnw=self.tnw[:],
            charged=self.charged,
            doubled=self.doubled,
            pts=self.pts[:],
        )
        d.done = self.done
        return d

    # ------------------------------------------------------------------ rules
    def legal(self) -> CardSet:
        """Cards the seat to play may play (the engine's own rule function)."""
        hand = self.hands[self.turn]
        return legal_plays(self.rules.rules, hand, self.trick, self.trick_no, self.broken, self.charged, self.led_suits)

    def play(self, c: int) -> None:
        """Play card ``c`` for the seat to play (which must hold it; legality is the caller's job)."""
        seat = self.turn
        bit = 1 << c
        self.hands[seat] ^= bit
        self.played |= bit
        tc = self.trick
        tc.append(c)
        self.tseats.append(seat)
        r = self.rules
        if breaks_hearts(c, r.queen_breaks):
            self.broken = True
        n = len(tc)
        nxt = (seat + 1) & 3
        if trick_goes_on(n, self.hands[nxt], n == 4 and r.nines and _nine_in_first_four(tc)):
            self.turn = nxt
        else:
            self._finish_trick()

    def _finish_trick(self) -> None:
        tc, ts = self.trick, self.tseats
        best = tc[0]
        winner = ts[0]
        won = 1 << best
        for i in range(1, len(tc)):
            c = tc[i]
            won |= 1 << c
            if beats(c, best):
                best, winner = c, ts[i]
        r = self.rules
        self.taken[winner] |= won
        self.tricks_won[winner] += 1
        self.tnw[winner] |= 1 << self.trick_no
        if won & r.point_cards:
            self.pts[winner] += _points(r.card_points, won)
        self.led_suits |= 1 << (tc[0] // 13)
        self.trick = []
        self.tseats = []
        self.turn = winner
        if deal_ends(self.played, self.trick_no, r.early_end, r.per_trick, r.point_cards, r.last_numbered_trick):
            self.done = True
        else:
            self.trick_no += 1

    # ------------------------------------------------------------------ results
    def scores(self) -> tuple[int, ...]:
        """The deal's score per seat (the variant's own sign) once it is over."""
        r = self.rules
        return score_deal(r.rules, r.kind, self.taken, self.tnw, self.tricks_won, self.doubled)[0]

    def costs(self) -> tuple[int, ...]:
        """The deal's score per seat as a cost: lower is better in every variant."""
        s = self.scores()
        if self.rules.rules.negative_scores:
            return (-s[0], -s[1], -s[2], -s[3])
        return s

    def moon_mode(self, seat: int) -> bool:
        """``seat`` has taken every moon card taken so far, and enough of them to try for the moon."""
        if not self.rules.moon:
            return False
        mine = self.taken[seat] & MOON_CARDS
        if not mine:
            return False
        others = 0
        for s in range(4):
            if s != seat:
                others |= self.taken[s]
        if others & MOON_CARDS:
            return False
        hearts = (mine & HEARTS_MASK).bit_count()
        return hearts >= 8 or (bool(mine & QS_BIT) and hearts >= 4)

    def finish(self, policy: Policy, rng: random.Random) -> tuple[int, ...]:
        """Play to the end with ``policy`` for every seat; the costs per seat."""
        while not self.done:
            legal = self.legal()
            if legal & (legal - 1):
                c = policy(self, self.turn, legal, rng)
            else:
                c = legal.bit_length() - 1
            self.play(c)
        return self.costs()


def start_of_play(
    rules: Rules, kind: int, hands: list[CardSet], leader: int, doubled: CardSet = 0, charged: CardSet = 0
) -> Deal:
    """A deal about to have its first card led (after passing, charging and exposing)."""
    if rules.two_of_clubs_leads:
        leader = next(s for s in range(4) if hands[s] >> TWO_CLUBS & 1)
    return Deal(DealRules.of(rules, kind), hands, turn=leader, charged=charged, doubled=doubled)


def _nine_in_first_four(trick: list[int]) -> bool:
    """A nine of the led suit is among the trick's first four cards (Turbo's nines)."""
    return any(led_nine(trick[i], trick[0]) for i in range(4))


def _points(cp: tuple[int, ...], cards: CardSet) -> int:
    p = 0
    while cards:
        low = cards & -cards
        p += cp[low.bit_length() - 1]
        cards ^= low
    return p


Policy = Callable[[Deal, int, CardSet, random.Random], int]


# ---------------------------------------------------------------------- a fast sampler
def _deal_start(
    me: int,
    my_hand: CardSet,
    unseen: CardSet,
    counts: list[int],
    known: list[CardSet],
    voids: list[int],
    hands: list[CardSet],
    room: list[int],
    elig: list[int],
) -> CardSet:
    """What :func:`quick_deal` and :func:`weighted_deal` start from, written into the caller's
    lists of four (no allocation on this hot path): ``hands`` with the known cards in them,
    each other seat's ``room`` for the free cards, and the seats each suit may go to (``elig``,
    4-bit masks). Returns the free cards, or -1 where the counts do not fit the cards."""
    hands[me] = my_hand
    free = unseen
    total = 0
    for s in range(4):
        if s == me:
            continue
        k = known[s] & unseen
        hands[s] = k
        free &= ~k
        r = counts[s] - k.bit_count()
        if r < 0:
            return -1
        room[s] = r
        total += r
    if total != free.bit_count():
        return -1
    for suit in range(4):
        for s in range(4):
            if s != me and not voids[s] >> suit & 1:
                elig[suit] |= 1 << s
    return free


def quick_deal(
    me: int,
    my_hand: CardSet,
    unseen: CardSet,
    counts: list[int],
    known: list[CardSet],
    voids: list[int],
    rng: random.Random,
) -> list[CardSet] | None:
    """Deal ``unseen`` to the three seats other than ``me`` as :func:`moonshot.bots.sampling.sample_hands`
    does (``counts[s]`` cards each, all of ``known[s]``, nothing in a suit of ``voids[s]``), compiled.

    Each free card goes to a seat that can take it with probability in proportion to the room that
    seat has left, the suits with fewest eligible seats first (with no voids this is a uniformly
    random deal; seats eligible for a suit take its cards exchangeably, so no shuffling is needed).
    One ``rng.random()`` a card. ``None`` on an inconsistent position or after 8 dead ends (the
    caller falls back to the exact sampler)."""
    hands = [0, 0, 0, 0]
    room = [0, 0, 0, 0]
    elig = [0, 0, 0, 0]
    free = _deal_start(me, my_hand, unseen, counts, known, voids, hands, room, elig)
    if free < 0:
        return None
    order = sorted(range(4), key=lambda su: elig[su].bit_count() * 4 + su)
    for _attempt in range(8):
        out = hands[:]
        left = room[:]
        ok = True
        for su in order:
            e = elig[su]
            m = free & SUIT_MASKS[su]
            while m:
                low = m & -m
                m ^= low
                tot = 0
                for s in range(4):
                    if e >> s & 1:
                        tot += left[s]
                if tot == 0:
                    ok = False
                    break
                pick = int(rng.random() * tot)
                if pick >= tot:  # pragma: no cover - (float rounding; random() < 1)
                    pick = tot - 1
                for s in range(4):
                    if e >> s & 1 and left[s]:
                        if pick < left[s]:
                            out[s] |= low
                            left[s] -= 1
                            break
                        pick -= left[s]
            if not ok:
                break
        if ok:
            return out
    return None


def weighted_deal(
    me: int,
    my_hand: CardSet,
    unseen: CardSet,
    counts: list[int],
    known: list[CardSet],
    voids: list[int],
    weights: list[float],
    rng: random.Random,
) -> list[CardSet] | None:
    """:func:`quick_deal` with odds: the free cards, in a random order, each go to a seat that can
    take it with probability in proportion to the room that seat has left times
    ``weights[4 * c + s]``. (The order is random, not :func:`quick_deal`'s suit by suit and low
    to high: cards placed late are pushed by the room left rather than by their odds, so a fixed
    order would always blunt the same cards' odds, the high ones.) ``None`` on an inconsistent
    position or after 8 dead ends (a card no seat with room may take), for the caller to fall
    back on."""
    hands = [0, 0, 0, 0]
    room = [0, 0, 0, 0]
    elig = [0, 0, 0, 0]
    free = _deal_start(me, my_hand, unseen, counts, known, voids, hands, room, elig)
    if free < 0:
        return None
    cards: list[int] = []
    m = free
    while m:
        low = m & -m
        m ^= low
        cards.append(low.bit_length() - 1)
    n = len(cards)
    share = [0.0, 0.0, 0.0, 0.0]
    for _attempt in range(8):
        for i in range(n - 1, 0, -1):  # (Fisher-Yates, one rng.random() a card)
            j = int(rng.random() * (i + 1))
            cards[i], cards[j] = cards[j], cards[i]
        out = hands[:]
        left = room[:]
        ok = True
        for c in cards:
            e = elig[c // 13]
            base = 4 * c
            tot = 0.0
            for s in range(4):
                share[s] = left[s] * weights[base + s] if e >> s & 1 else 0.0
                tot += share[s]
            if tot <= 0.0:
                ok = False
                break
            x = rng.random() * tot
            pick = -1
            for s in range(4):
                if share[s] > 0.0:
                    pick = s
                    if x < share[s]:
                        break
                    x -= share[s]
            out[pick] |= 1 << c
            left[pick] -= 1
        if ok:
            return out
    return None


# ---------------------------------------------------------------------- rollout policies
def random_policy(deal: Deal, seat: int, legal: CardSet, rng: random.Random) -> int:
    """A uniformly random legal card."""
    n = count(legal)
    k = rng.randrange(n)
    while k:
        legal &= legal - 1
        k -= 1
    return (legal & -legal).bit_length() - 1


def _lowest(cards: CardSet) -> int:
    return (cards & -cards).bit_length() - 1


def _highest(cards: CardSet) -> int:
    return cards.bit_length() - 1


def _lowest_rank(cards: CardSet) -> int:
    best, best_rank = -1, 99
    for s in range(4):
        m = cards & SUIT_MASKS[s]
        if m:
            c = _lowest(m)
            if c % 13 < best_rank:
                best, best_rank = c, c % 13
    return best


def _highest_rank(cards: CardSet) -> int:
    best, best_rank = -1, -1
    for s in range(4):
        m = cards & SUIT_MASKS[s]
        if m:
            c = _highest(m)
            if c % 13 > best_rank:
                best, best_rank = c, c % 13
    return best


def greedy_policy(deal: Deal, seat: int, legal: CardSet, rng: random.Random) -> int:
    """A fast rule-based player: duck under the winner, dump points when void, lead low.

    It shoots the moon when it has taken every moon card so far (and enough of them), and
    tries to stop a seat doing so by winning a trick itself. Rules are phrased in terms of the
    deal kind's card points, so they serve every scoring table (Kierki's contracts too).
    """
    r = deal.rules
    tc = deal.trick
    hand = deal.hands[seat]
    bad = r.bad_cards
    shooter = -1
    if r.moon and deal.trick_no > 2:
        for s in range(4):
            if deal.moon_mode(s):
                shooter = s
                break
    if not tc:
        if shooter == seat:
            return _highest_rank(legal)
        safe = legal & ~bad
        # leading high spades while the queen is out invites her
        if deal.hands[seat] & QS_BIT == 0 and not deal.played & QS_BIT and safe & ~HIGH_SPADES & ~QS_BIT:
            safe &= ~HIGH_SPADES
        if safe:
            return _lowest_rank(safe)
        return _lowest_rank(legal)
    led = tc[0] // 13
    follow = legal & SUIT_MASKS[led]
    win = -1
    winner = -1
    trick_bits = 0
    for c, s in zip(tc, deal.tseats):
        trick_bits |= 1 << c
        if c // 13 == led and c > win:
            win, winner = c, s
    # the last card of a trick (Turbo's nines can extend a trick to eight cards; guess they do not)
    last = len(tc) == 3 or len(tc) == 7
    if follow:
        if shooter == seat:
            return _highest(follow)
        if shooter >= 0 and winner == shooter and shooter != seat:
            above = follow & ~((1 << (win + 1)) - 1)
            if above and trick_bits & bad:
                return _lowest(above)
        trick_pts = _points(r.card_points, trick_bits)
        if trick_pts < 0 or (trick_bits & r.good_cards):
            above = follow & ~((1 << (win + 1)) - 1)
            if above:
                return _highest(above) if last else _lowest(above)
        below = follow & ((1 << win) - 1)
        if below:
            # the highest card that still loses, but never the queen onto a trick we might win
            return _highest(below)
        if last:
            nonbad = follow & ~bad
            return _highest(nonbad) if nonbad else _lowest(follow)
        if led == 3 and follow & QS_BIT and follow & ~QS_BIT:
            return _lowest(follow & ~QS_BIT)
        return _lowest(follow)
    # void in the led suit: discard
    if shooter == seat:
        return _lowest_rank(legal)
    if shooter >= 0 and winner != shooter:
        keep = legal & ~bad
        if keep:
            return _highest_rank(keep)
    if legal & QS_BIT and bad & QS_BIT:
        return QUEEN_SPADES
    worst, worst_pts = -1, 0
    cp = r.card_points
    m = legal & bad
    while m:
        low = m & -m
        c = low.bit_length() - 1
        if cp[c] >= worst_pts:
            worst, worst_pts = c, cp[c]
        m ^= low
    if worst >= 0:
        return worst
    if not deal.played & QS_BIT and legal & HIGH_SPADES and not hand & QS_BIT:
        return _highest(legal & HIGH_SPADES)
    rest = legal & ~r.good_cards
    return _highest_rank(rest if rest else legal)


# ---------------------------------------------------------------------- rollouts in the rules kernel
def value_features(deals: list[Deal]) -> tuple[list[int], list[float]]:
    """What the value network (:mod:`moonshot.bots.value`) reads of each of ``deals``, a position
    between tricks seen from the seat to lead (slot k is seat leader + k): the four hands in slot
    order, and per slot its points / 26, hearts taken / 13, the queen taken, any points taken,
    then the trick number / 13 and hearts broken (18 numbers a deal). Compiled with the deal, so
    that ``search``'s leaves cost little more than the network itself."""
    hands: list[int] = []
    extra: list[float] = []
    for d in deals:
        lead = d.turn
        for k in range(4):
            s = (lead + k) & 3
            hands.append(d.hands[s])
            taken = d.taken[s]
            p = d.pts[s]
            extra.append(p / 26.0)
            extra.append((taken & HEARTS_MASK).bit_count() / 13.0)
            extra.append(1.0 if taken & QS_BIT else 0.0)
            extra.append(1.0 if p else 0.0)
        extra.append(d.trick_no / 13.0)
        extra.append(1.0 if d.broken else 0.0)
    return hands, extra


def finish_costs(deal: Deal, policy: Policy, rng: random.Random) -> tuple[int, ...]:
    """The costs of playing ``deal`` to its end with ``policy``: ``deal.finish(policy, rng)``, or,
    for the greedy policy once the rules kernel is loaded (:func:`moonshot.kernel.warm_up`: a
    server that seats such a bot, the arena), the same rollout in the kernel. The greedy policy draws no random
    numbers and the kernel's greedy player is this one card for card (tests hold it so), so the
    costs, and every later draw from ``rng``, are the same either way. In the kernel ``deal`` is
    left as it was: callers read only the costs."""
    if policy is greedy_policy and kernel_ready(deal.rules.rules):
        from moonshot import kernel

        rt, st = kernel_state(deal)
        if deal.done:
            return kernel.costs(rt, st)
        return kernel.greedy_rollout(rt, st)
    return deal.finish(policy, rng)


def kernel_ready(rules: Rules) -> bool:
    """The compiled rules kernel is loaded in this process and plays ``rules``."""
    k: Any = sys.modules.get("moonshot.kernel")
    return k is not None and k.NUMBA and k.is_warm() and k.covers(rules)


def kernel_state(deal: Deal) -> tuple[Any, Any]:
    """``deal`` in the rules kernel: its rules table and its state."""
    from moonshot import kernel

    rt = kernel.rules_table(deal.rules.rules, deal.rules.kind)
    st = kernel.state_of(
        deal.hands,
        deal.turn,
        deal.trick_no,
        deal.trick,
        deal.tseats,
        deal.played,
        deal.led_suits,
        deal.broken,
        deal.taken,
        deal.tricks_won,
        deal.tnw,
        deal.pts,
        deal.charged,
        deal.doubled,
    )
    return rt, st


def epsilon_greedy(eps: float) -> Policy:
    """The greedy player, with a uniformly random card a fraction ``eps`` of the time."""

    def policy(deal: Deal, seat: int, legal: CardSet, rng: random.Random) -> int:
        if rng.random() < eps:
            return random_policy(deal, seat, legal, rng)
        return greedy_policy(deal, seat, legal, rng)

    return policy


ROLLOUT_POLICIES: dict[str, Policy] = {
    "random": random_policy,
    "greedy": greedy_policy,
    # the fast stand-in for HeuristicBot's play rules (same ideas, on masks instead of views)
    "heuristic": greedy_policy,
    "noisy": epsilon_greedy(0.1),
}


__all__ = [
    "ROLLOUT_POLICIES",
    "Deal",
    "DealRules",
    "Policy",
    "epsilon_greedy",
    "finish_costs",
    "greedy_policy",
    "kernel_ready",
    "kernel_state",
    "quick_deal",
    "random_policy",
    "weighted_deal",
]
