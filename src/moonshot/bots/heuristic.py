"""The rule-based Hearts player: a fast, variant-aware heuristic bot.

:class:`HeuristicBot` never asks which variant it plays. It reads the rules' knobs: the
scoring table of the deal's kind (card points, points per trick, points for given trick
numbers), cards doubled by charges or exposures, the ten-of-clubs multiplier, the moon rule,
nines, claims, and the chargeable/exposable cards.

Card play is one idea applied everywhere: for each legal card estimate what winning the trick
would cost (points on the table plus what later players are likely to add, times the chance
the card wins) and subtract what it is worth to be rid of the card (its own points if it might
come back to me, and how likely it is to win a costly trick later). The cheapest card is
played. Passing, charging, exposing and claims use simple hand-shape rules.

The bot is pure: it reads only the :class:`~moonshot.core.views.SeatView` and uses no randomness
(the ``rng`` argument is accepted for the protocol and left unused, so play is reproducible).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any, Final

from moonshot.core.actions import AcceptClaim, Action, Charge, Claim, Expose, Pass, Play, RejectClaim
from moonshot.core.cards import (
    ACE_HEARTS,
    ALL_CARDS,
    HEARTS,
    HEARTS_MASK,
    JACK_DIAMONDS,
    QUEEN_SPADES,
    SPADES,
    SPADES_MASK,
    SUIT_MASKS,
    TEN_CLUBS,
    CardSet,
    cards_in,
    count,
)
from moonshot.core.engine import Phase
from moonshot.core.rules import MoonRule, Scoring
from moonshot.core.views import SeatView

try:
    from mypy_extensions import mypyc_attr
except ImportError:  # pragma: no cover - without mypy nothing is compiled, and the mark has no use

    def mypyc_attr(*attrs: str, **kwattrs: object) -> Any:  # type: ignore[misc]
        return lambda cls: cls


_MOON_CARDS = HEARTS_MASK | (1 << QUEEN_SPADES)
# module constants: compiled, ``Phase.PLAY`` is a lookup on the class at every use
_PLAY: Final = Phase.PLAY
_PASS: Final = Phase.PASS
_PILE: Final = Phase.PILE
_CHARGE: Final = Phase.CHARGE
_EXPOSE: Final = Phase.EXPOSE
_NO_MOON: Final = MoonRule.NONE


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled, it may still be subclassed in Python
@dataclass(frozen=True)
class Weights:
    """The knobs of the play heuristic (defaults tuned with benchmarks/heuristic_vs_random.py)."""

    risk: float = 0.7  # how much a card's chance of winning later tricks counts
    lead_burden: float = 0.3  # winning a trick means leading the next one
    own_base: float = 0.15  # chance I end up taking my own point card ...
    own_win: float = 0.35  # ... rising with how often it wins
    big_below: float = 0.1  # a big card still out below mine may land on it
    follower_over: int = 0  # extra exponent on "nobody plays over me" (more pessimistic)
    dump_spread: float = 1.5  # a void opponent throws about the biggest point card / this
    follow_points: float = 1.2  # followers put point cards under my winner
    flush_queen: float = 1.5  # bonus for leading a low spade to flush the queen
    short_suit: float = 0.4  # bonus per card for leading out of a short suit
    lead_big: float = 1.0  # share of its points it costs to lead a big point card that may win
    guard: float = 0.0  # low cards guarding my own big point card (the queen) are worth keeping
    stop_moon: float = 26.0  # what stopping a nearly made moon is worth ...
    moon_alert: float = 0.7  # ... once the runner holds this share of the moon points still possible
    shoot: bool = True  # turn to shooting the moon when it is nearly made ...
    shoot_trick: float = 3.0  # ... and then want every trick
    shoot_losers: int = 4  # "nearly made": all points so far, 3+ hearts, at most this many cards not masters
    charge: bool = True  # charge (Turbo) and expose (Trend) cards when the hand allows


_ABOVE: Final[tuple[int, ...]] = tuple([SUIT_MASKS[c // 13] & ~((2 << c) - 1) for c in range(52)])
_BELOW: Final[tuple[int, ...]] = tuple([SUIT_MASKS[c // 13] & ((1 << c) - 1) for c in range(52)])


def _above(c: int) -> CardSet:
    """Cards of ``c``'s suit ranked above it."""
    return _ABOVE[c]


def _below(c: int) -> CardSet:
    return _BELOW[c]


def _all_boss(hand: CardSet, others: CardSet) -> bool:
    """Every card of ``hand`` outranks every card of its suit in ``others``."""
    for s in range(4):
        mine = hand & SUIT_MASKS[s]
        theirs = others & SUIT_MASKS[s]
        if mine and theirs and (mine & -mine) < (1 << (theirs.bit_length() - 1)):
            return False
    return True


def claim_is_sure(view: SeatView, claimer: int, claimer_hand: CardSet) -> bool:
    """True when ``claimer`` holding ``claimer_hand`` wins every remaining trick whatever others do.

    Judged from ``view``'s knowledge: the cards nobody has played, less the claimer's, may be
    anywhere among the other three seats.
    """
    others = ALL_CARDS & ~view.played & ~claimer_hand
    if not _all_boss(claimer_hand, others):
        return False
    if view.trick:
        led = view.trick[0][1] // 13
        led_mask = SUIT_MASKS[led]
        best_seat, best = view.trick[0]
        for s, c in view.trick:
            if c // 13 == led and c > best:
                best_seat, best = s, c
        if any(s == claimer for s, _ in view.trick):
            # the claimer already played: it must hold the trick against everything still out
            return best_seat == claimer and not (others & led_mask & _above(best))
        mine = claimer_hand & led_mask
        return bool(mine) and mine.bit_length() - 1 > best
    if view.leader == claimer:
        return True
    # someone else leads: the claimer must be able to follow (with a winner) any suit still out
    return all(not (others & SUIT_MASKS[s]) or claimer_hand & SUIT_MASKS[s] for s in range(4))


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled, it may still be subclassed in Python
class _Tables:
    """What a deal's scoring and doubled cards make of every card (the start of each decision's
    estimates), worked out once per scoring and set of doubled cards."""

    def __init__(self, sc: Scoring, doubled: int, key: int) -> None:
        self.scoring = sc
        self.key = key
        vals = [float(p) for p in sc.card_points]
        if doubled >> ACE_HEARTS & 1:
            for c in range(26, 39):
                vals[c] *= 2
        if doubled >> QUEEN_SPADES & 1:
            vals[QUEEN_SPADES] *= 2
        if doubled >> JACK_DIAMONDS & 1:
            vals[JACK_DIAMONDS] *= 2
        self.vals = vals  # shared by the decisions that change no value (read only)
        self.positive, self.big = _value_masks(vals)
        self.negative = sum(1 << c for c in range(52) if sc.card_points[c] < 0)  # bonus cards (JD)
        self.trick_points = dict(sc.trick_number_points)  # read only
        self.base = float(sc.per_trick) + sum(self.trick_points.values()) / 13.0


def _value_masks(vals: list[float]) -> tuple[CardSet, CardSet]:
    """(cards worth points to whoever takes them, cards worth 5 or more) under ``vals``."""
    positive = big = 0
    for c in range(52):
        if vals[c] > 0:
            positive |= 1 << c
        if vals[c] >= 5:
            big |= 1 << c
    return positive, big


# (id(scoring) * 8 + which of AH, QS, JD are doubled) -> tables; an entry keeps its scoring
# alive, so an id in the cache is never reused by another scoring while it is there
_TABLES: dict[int, _Tables] = {}
_LAST: Final[list[_Tables]] = []  # the tables last asked for (a game asks for the same ones)


def _tables(sc: Scoring, doubled: int) -> _Tables:
    which = (doubled >> ACE_HEARTS & 1) + (doubled >> QUEEN_SPADES & 1) * 2 + (doubled >> JACK_DIAMONDS & 1) * 4
    if _LAST:
        t = _LAST[0]
        if t.scoring is sc and t.key & 7 == which:
            return t
    key = id(sc) * 8 + which
    found = _TABLES.get(key)
    if found is None or found.scoring is not sc:
        if len(_TABLES) >= 256:  # rules made on the fly (tests, servers): keep the cache small
            _TABLES.clear()
        found = _Tables(sc, doubled, key)
        _TABLES[key] = found
    _LAST[:] = [found]
    return found


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled, it may still be subclassed in Python
class _Eval:
    """Per-decision estimates shared by the play rules (built once per ``act``)."""

    def __init__(self, view: SeatView, w: Weights) -> None:
        rules = view.rules
        self.w = w
        self.view = view
        self.me = view.seat
        sc = rules.scoring_for(view.deal_kind)
        doubled = 0
        for s in range(4):
            doubled |= view.charged[s] | view.exposed[s]
        tables = _tables(sc, doubled)
        vals = tables.vals  # shared, read only: copied before any change
        mult = rules.ten_of_clubs_multiplier * (2 if doubled >> TEN_CLUBS & 1 else 1)
        if mult != 1:
            # taking TC multiplies my whole deal: worth about my points so far plus a little more
            vals = list(vals)
            vals[TEN_CLUBS] += (mult - 1) * (view.points[self.me] + 1.5)
        self.shooting = w.shoot and self._can_shoot(view, vals, w)
        if self.shooting:
            if vals is tables.vals:
                vals = list(vals)
            for c in cards_in(_MOON_CARDS):
                vals[c] = -abs(vals[c])  # every heart and the queen are now wanted
        self.vals = vals
        self.tc_mult = mult
        self.per_trick = float(sc.per_trick)
        self.trick_points = tables.trick_points
        self.base = tables.base
        self.unseen = view.unseen
        if mult == 1 and not self.shooting:
            positive_cards, self.big = tables.positive, tables.big
        else:
            positive_cards, self.big = _value_masks(vals)
        # the points still out, lowest card first (a bit loop: compiled, cheaper than cards_in)
        # (their sum, count and biggest in a loop: compiled, max and sum are generic calls)
        n_out = 0
        top = total = 0.0
        m = self.unseen & positive_cards
        while m:
            low = m & -m
            m ^= low
            v = vals[low.bit_length() - 1]
            n_out += 1
            total += v
            if n_out == 1 or v > top:
                top = v
        if n_out:
            spread, mean = top / w.dump_spread, total / n_out
            self.dump = mean if mean > spread else spread
        else:
            self.dump = 0.0
        self.p_voids = [-1.0] * 16  # p_void(seat, suit) once worked out, at seat * 4 + suit
        self.suit_avg = [-1.0] * 4  # hold_cost's points per round of each suit, once worked out
        self.moon_threat, self.moon_stake = self._moon_threat()

    # a method, not a staticmethod: compiled code calls a static method directly, so a Python
    # subclass's override (the shooter's) would never be called
    def _can_shoot(self, view: SeatView, vals: list[float], w: Weights) -> bool:
        """I hold every point taken so far, plenty of them, and nearly every card I hold is a winner."""
        if view.rules.moon is _NO_MOON or vals[QUEEN_SPADES] <= 0:
            return False
        me = view.seat
        if any(view.taken[s] & _MOON_CARDS for s in range(4) if s != me):
            return False
        got = view.taken[me] & _MOON_CARDS
        if not (got >> QUEEN_SPADES & 1 or view.hand >> QUEEN_SPADES & 1):
            return False
        if count(got & HEARTS_MASK) < 3:
            return False
        unseen = view.unseen
        losers = 0
        for c in cards_in(view.hand):
            if unseen & _above(c):
                losers += 1
        return losers <= w.shoot_losers

    def _moon_threat(self) -> tuple[int | None, float]:
        """An opponent who has taken every hearts/QS point so far, and what stopping him is worth now."""
        view = self.view
        if view.rules.moon is _NO_MOON or self.vals[QUEEN_SPADES] <= 0:
            return None, 0.0
        x = -1
        for s in range(4):
            if view.taken[s] & _MOON_CARDS:
                if x >= 0:
                    return None, 0.0  # two seats have points: no moon
                x = s
        if x < 0 or x == self.me:
            return None, 0.0
        if not (self.unseen | view.hand) & HEARTS_MASK & ~view.taken[x]:
            return None, 0.0  # too late: no heart left to take
        got = view.taken[x] & _MOON_CARDS
        have = count(got & HEARTS_MASK) + (13 if got >> QUEEN_SPADES & 1 else 0)
        left = count(_MOON_CARDS & ~view.played) + (12 if not view.played >> QUEEN_SPADES & 1 else 0)
        level = have / (have + left)
        if level < self.w.moon_alert:
            return None, 0.0
        return x, self.w.stop_moon * level**3

    # -- card-level estimates
    def win_share(self, c: int) -> float:
        """How often ``c`` tends to win when its suit is played: share of outstanding cards below it."""
        out = self.unseen & SUIT_MASKS[c // 13]
        lo = count(out & _below(c))
        hi = count(out & _above(c))
        if lo + hi == 0:
            return 0.3  # only a lead into voids can win with it
        return lo / (lo + hi)

    def hold_cost(self, c: int) -> float:
        """What keeping ``c`` is expected to cost later (its own points plus the tricks it may win)."""
        vals = self.vals
        s = c // 13
        wp = self.win_share(c)
        v = vals[c]
        w = self.w
        own = v * (w.own_base + w.own_win * wp if v > 0 else wp)
        suit_out = self.unseen & SUIT_MASKS[s]
        avg = self.suit_avg[s]
        if avg < 0.0:  # once per suit and decision: the same for every card of the suit
            avg = self._suit_avg(suit_out, s)
            self.suit_avg[s] = avg
        risk = w.risk * wp * wp * (self.base + 0.3 + (avg if avg < 6.0 else 6.0))
        # a big card outstanding below mine can land on it
        m = suit_out & _below(c)
        while m:
            low = m & -m
            m ^= low
            x = low.bit_length() - 1
            if abs(vals[x]) >= 5:
                risk += w.big_below * vals[x]
        mine_big = self.view.hand & SUIT_MASKS[s] & _above(c) & self.big
        if mine_big:
            guards = count(self.view.hand & SUIT_MASKS[s] & ~_above(c))
            for x in cards_in(mine_big):
                risk += w.guard * vals[x] / guards
        return own + risk + 0.01 * (c % 13)  # ties: shed the higher card

    def _suit_avg(self, suit_out: CardSet, s: int) -> float:
        """The points still out in suit ``s`` per round of it left (at most 1 round counted as 1)."""
        vals = self.vals
        pts = 0.0
        n = 0
        # bit loops rather than cards_in: compiled, a generator per call cost more than the sums
        m = suit_out
        while m:
            low = m & -m
            m ^= low
            x = low.bit_length() - 1
            n += 1
            if vals[x] > 0:
                pts += vals[x]
        # comparisons rather than min and max: compiled, those are generic calls of builtins
        spread = (n + count(self.view.hand & SUIT_MASKS[s])) / 4.0
        return pts / spread if spread > 1.0 else pts

    def p_void(self, seat: int, suit: int) -> float:
        """The chance ``seat`` has no card of ``suit`` (worked out once per decision)."""
        i = seat * 4 + suit
        p = self.p_voids[i]
        if p < 0.0:
            p = self._p_void(seat, suit)
            self.p_voids[i] = p
        return p

    def _p_void(self, seat: int, suit: int) -> float:
        if self.view.voids[seat] >> suit & 1:
            return 1.0
        out = self.unseen & SUIT_MASKS[suit]
        if not out:
            return 1.0
        voids = self.view.voids
        holders = 0
        for s in range(4):
            if s != self.me and not voids[s] >> suit & 1:
                holders += 1
        return 0.8 * math.exp(-count(out) / (holders if holders > 1 else 1))

    def trick_cost(self, cards_in_trick: list[int], c: int, later: list[int], trick_no: int) -> tuple[float, float]:
        """(chance ``c`` wins the trick, cost to me of winning it) given the later players."""
        vals = self.vals
        led = cards_in_trick[0] // 13 if cards_in_trick else c // 13
        led_mask = SUIT_MASKS[led]
        out = self.unseen & led_mask
        higher = out & _above(c) if c // 13 == led else out
        lower = out & ~higher
        on_table = 0.0
        for x in cards_in_trick:
            on_table += vals[x]
        pts = vals[c] + on_table
        me = self.me
        voids = self.view.voids
        following = 0  # later opponents who still hold the led suit, as far as anyone knows
        opponents = 0
        for s in later:
            if s != me:
                opponents += 1
                if not voids[s] >> led & 1:
                    following += 1
        if c // 13 != led:
            p_win = 0.0
        elif not higher or not following:
            p_win = 1.0
        else:
            lo = count(lower)
            share = lo / (lo + count(higher))
            p_win = share ** (self.w.follower_over + following)
        # what the later players add
        add = 0.0
        if opponents:
            # the point cards below mine: their sum and the biggest (no list, no min/max calls)
            n_big = 0
            top = 0.0
            total = 0.0
            m = lower
            while m:  # lowest card first, as cards_in (compiled, a bit loop costs less)
                low = m & -m
                m ^= low
                v = vals[low.bit_length() - 1]
                if v > 0:
                    n_big += 1
                    total += v
                    if v > top:
                        top = v
            if n_big and following:
                most = following * top
                spread = total * self.w.follow_points * following / 3.0
                add += most if most < spread else spread
            for s in later:
                if s != me:
                    add += self.p_void(s, led) * self.dump
        cost = pts + add + self.per_trick + self.trick_points.get(trick_no, 0) + self.w.lead_burden
        if self.shooting:
            cost -= self.w.shoot_trick  # every trick won keeps the points away from the others
        if self.tc_mult != 1 and (c == TEN_CLUBS or TEN_CLUBS in cards_in_trick):
            # the ten of clubs multiplies everything else on the trick as well (bonus cards included)
            cost += (self.tc_mult - 1) * (pts - vals[TEN_CLUBS])
        return p_win, cost


def _later_seats(view: SeatView, c: int) -> list[int]:
    """Seats to play after me on this trick if I play ``c`` (eight-card tricks with nines)."""
    n = len(view.trick)
    me = view.seat
    order = [(me + i) % 4 for i in range(1, 4)]
    if n >= 4:
        return [(me + i) % 4 for i in range(1, 8 - n)]
    led = view.trick[0][1] // 13 if view.trick else c // 13
    nine = led * 13 + 7
    if view.rules.nines and (any(x == nine for _, x in view.trick) or c == nine):
        return [(me + i) % 4 for i in range(1, 8 - n)]
    return order[: 3 - n]


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled, it may still be subclassed in Python
class HeuristicBot:
    """Plays sound, variant-aware Hearts from the rules' knobs; deterministic, no search."""

    name = "heuristic"

    def __init__(self, weights: Weights | None = None) -> None:
        self.weights = weights or Weights()

    def answer_claim(self, view: SeatView, claimer: int, rng: random.Random) -> bool:
        """Accept only a claim sure to win every remaining trick (its hand as shown, less cards played since)."""
        return claim_is_sure(view, claimer, view.revealed[claimer] & ~view.played)

    def act(self, view: SeatView, rng: random.Random) -> Action:
        phase = view.phase
        seat = view.seat
        if phase is _PLAY:
            claimer = view.claimer
            if claimer is not None:  # a blocking claim: play waits for our answer
                ok = self.answer_claim(view, claimer, rng)
                answer: Action = AcceptClaim(seat, claimer) if ok else RejectClaim(seat, claimer)
                if answer in view.legal:
                    return answer
            if view.legal_plays:
                if (
                    view.rules.claims
                    and not view.trick
                    and view.revealed[seat] != view.hand  # not again before playing a card
                    and claim_is_sure(view, seat, view.hand)
                    and Claim(seat) in view.legal
                ):
                    return Claim(seat)
                return Play.of(seat, self._play(view))
        elif phase is _PASS or phase is _PILE:
            return Pass(seat, choose_pass(view))
        elif phase is _CHARGE:
            choice = Charge(seat, choose_charge(view) if self.weights.charge else 0)
            return choice if choice in view.legal else Charge(seat, 0)
        elif phase is _EXPOSE:
            expose = Expose(seat, choose_expose(view) if self.weights.charge else 0)
            return expose if expose in view.legal else Expose(seat, 0)
        options = [a for a in view.legal if not isinstance(a, Claim)]
        if not options:
            raise ValueError(f"seat {seat} has nothing to do in phase {phase.value}")
        return options[0]

    def evaluator(self, view: SeatView) -> _Eval:
        """The per-decision estimates (a subclass may return its own). A method, not a class
        attribute: compiled with mypyc, an annotated class attribute is an instance slot that a
        Python subclass's class attribute would not override."""
        return _Eval(view, self.weights)

    # ------------------------------------------------------------------ play
    def _play(self, view: SeatView) -> int:
        legal = view.legal_plays
        if legal & (legal - 1) == 0:
            return legal.bit_length() - 1
        ev = self.evaluator(view)
        trick_cards = [c for _, c in view.trick]
        best_card, best_cost = -1, math.inf
        if trick_cards:
            # the card winning so far and its seat (a loop: compiled, max and next over
            # generators are generic calls)
            led = trick_cards[0] // 13
            winner_seat, winner_card = view.trick[0]
            for s, c in view.trick:
                if c // 13 == led and c > winner_card:
                    winner_seat, winner_card = s, c
        # who plays after me depends on my card only with nines (a nine extends the trick)
        same_later = None if view.rules.nines else _later_seats(view, legal.bit_length() - 1)
        rest = legal
        while rest:  # lowest card first, as cards_in (compiled, a bit loop costs less)
            low = rest & -rest
            rest ^= low
            c = low.bit_length() - 1
            later = same_later if same_later is not None else _later_seats(view, c)
            if trick_cards:
                beats = c // 13 == led and c > winner_card
                if beats:
                    p_win, cost = ev.trick_cost(trick_cards, c, later, view.trick_no)
                else:
                    p_win, cost = 0.0, 0.0
                expected = p_win * cost - ev.hold_cost(c)
                expected += self._moon_adjust(ev, c, p_win, trick_cards, winner_seat if not beats else view.seat)
            else:
                p_win, cost = ev.trick_cost([], c, later, view.trick_no)
                expected = p_win * cost - ev.hold_cost(c) + self._lead_adjust(ev, c, p_win)
            if expected < best_cost - 1e-9:
                best_card, best_cost = c, expected
        return best_card

    @staticmethod
    def _moon_adjust(ev: _Eval, c: int, p_win: float, trick_cards: list[int], winner: int) -> float:
        x = ev.moon_threat
        if x is None:
            return 0.0
        hearts_here = any(t // 13 == HEARTS for t in trick_cards) or c // 13 == HEARTS
        if p_win >= 0.99 and hearts_here:
            return -ev.moon_stake  # take a heart myself: costs a point or two, saves the moon
        if p_win == 0.0 and c // 13 == HEARTS and winner != x:
            return -0.25 * ev.moon_stake  # a heart to someone other than the shooter stops it too
        return 0.0

    @staticmethod
    def _lead_adjust(ev: _Eval, c: int, p_win: float) -> float:
        view = ev.view
        s = c // 13
        hand = view.hand
        adj = 0.0
        qs_out = ev.unseen >> QUEEN_SPADES & 1 and ev.vals[QUEEN_SPADES] > 0
        if s == SPADES and qs_out and c < QUEEN_SPADES and not hand & _above(QUEEN_SPADES) & SPADES_MASK:
            adj -= ev.w.flush_queen  # flush the queen while I hold nothing she can fall on
        if ev.moon_threat is not None and s == HEARTS and p_win >= 0.99 and ev.unseen & HEARTS_MASK:
            adj -= ev.moon_stake  # a winning heart lead picks up someone's heart and stops the moon
        length = count(hand & SUIT_MASKS[s])
        if ev.vals[c] >= 5 and p_win > 0:
            adj += ev.w.lead_big * ev.vals[c]  # leading the queen (or the like) into possible winners
        if length <= 2 and p_win < 0.5:
            adj -= ev.w.short_suit * (3 - length)  # run a short suit out to make a void for discards
        return adj


# ---------------------------------------------------------------------- passing etc.
def pass_priority(view: SeatView, c: int) -> float:
    """How much I want to be rid of ``c`` before play (higher = pass first)."""
    rules = view.rules
    sc = rules.scoring_for(view.deal_kind)
    hand = view.hand
    s, r = c // 13, c % 13
    suit = hand & SUIT_MASKS[s]
    length = count(suit)
    v = sc.card_points[c]
    low_spades = count(hand & SPADES_MASK & _below(QUEEN_SPADES))
    qs_pts = sc.card_points[QUEEN_SPADES]
    if v < 0:
        return -50.0 + r  # keep the jack of diamonds
    score = float(r) * 2.0
    if c == QUEEN_SPADES and qs_pts > 0:
        return 5.0 if low_spades >= 4 else 100.0
    if s == SPADES and c > QUEEN_SPADES and qs_pts > 0:
        if hand >> QUEEN_SPADES & 1:
            return 90.0 + r if low_spades < 4 else 20.0 + r
        return 80.0 + r if low_spades < 3 else 10.0 + r
    if s == SPADES and qs_pts > 0:
        return float(r) - 10.0  # low spades protect against the queen
    if v > 0:
        score += 4.0 + v * 3.0
        if s == HEARTS and r <= 5:
            score -= 6.0
    elif s != HEARTS and s != SPADES and length <= 3:
        score += 8.0 - 2.0 * length  # voiding a short side suit
    if c == TEN_CLUBS and rules.ten_of_clubs_multiplier != 1:
        score += 6.0
    neg = _tables(sc, 0).negative
    while neg:
        low = neg & -neg
        neg ^= low
        x = low.bit_length() - 1
        if s == x // 13 and c > x:
            score -= 10.0  # high cards that can capture a bonus card are worth keeping
    return score


def choose_pass(view: SeatView) -> CardSet:
    k = view.rules.pass_count
    # (-priority, -card) pairs sorted as they are: the order a key function giving them would
    # give (no two pairs are equal), without calling one per card (compiled, a generic call)
    ranked = sorted([(-pass_priority(view, c), -c) for c in cards_in(view.hand)])
    out = 0
    for _, c in ranked[:k]:
        out |= 1 << -c
    return out


def choose_charge(view: SeatView) -> CardSet:
    """Charge a card only when my hand makes it hurt others more than me."""
    hand = view.hand
    allowed = hand & view.rules.chargeable & ~view.charged[view.seat]
    out = 0
    spades = hand & SPADES_MASK
    low_spades = (spades & _below(QUEEN_SPADES)).bit_count()
    hearts = hand & HEARTS_MASK
    low_hearts = (hearts & SUIT_MASKS[HEARTS] & ((1 << (26 + 6)) - 1)).bit_count()
    if allowed >> QUEEN_SPADES & 1 and low_spades >= 4:
        out |= 1 << QUEEN_SPADES
    if allowed >> ACE_HEARTS & 1 and low_hearts >= 4 and hearts.bit_count() <= 6:
        out |= 1 << ACE_HEARTS
    diamonds = hand & SUIT_MASKS[1]
    if allowed >> JACK_DIAMONDS & 1 and (diamonds & _above(JACK_DIAMONDS)).bit_count() >= 2:
        out |= 1 << JACK_DIAMONDS
    clubs = hand & SUIT_MASKS[0]
    if allowed >> TEN_CLUBS & 1 and (clubs & _below(TEN_CLUBS)).bit_count() >= 4 and not clubs & _above(TEN_CLUBS):
        out |= 1 << TEN_CLUBS  # plenty of low clubs and nothing above: the ten can always be ducked
    return out


def choose_expose(view: SeatView) -> CardSet:
    """Expose the ace of hearts only with a safe hand: few or low hearts and spade cover."""
    hand = view.hand
    allowed = hand & view.rules.exposable
    if not allowed >> ACE_HEARTS & 1:
        return 0
    hearts = hand & HEARTS_MASK
    low_hearts = (hearts & ((1 << (26 + 6)) - 1)).bit_count()
    spades = hand & SPADES_MASK
    high_spades = spades & _above(QUEEN_SPADES - 1)
    spade_safe = not high_spades or (spades & _below(QUEEN_SPADES)).bit_count() >= 4
    hearts_safe = hearts.bit_count() <= 2 or low_hearts >= 4
    return 1 << ACE_HEARTS if spade_safe and hearts_safe else 0


__all__ = ["HeuristicBot", "Weights", "choose_charge", "choose_expose", "choose_pass", "claim_is_sure", "pass_priority"]
