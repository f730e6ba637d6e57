# mypy: ignore-errors
"""The rules kernel's one source: card play of one deal on flat int64 arrays, rollouts and UCT.

Every function here runs compiled by numba (``kjit``) when numba is installed and as plain Python
otherwise: same code, same results (the in-kernel random numbers are integer arithmetic).

Two arrays carry everything:

* a **rules table** ``rt`` (``R_LEN`` int64s, made once per ``Rules`` and deal kind by
  :func:`moonshot.kernel.rules_table`): the deal kind's card points, per-trick and trick-number
  points, and every play and scoring knob of :class:`~moonshot.core.rules.Rules` as a number;
* a **state** ``st`` (``S_LEN`` int64s): four hands, what each seat took, the trick in progress,
  what was played, suits led, hearts broken, charged and doubled cards, whose turn, done.

Random numbers come from a xorshift128 generator whose four 32-bit words live in an int64 array
``rng`` (seeded from the caller's ``random.Random``), so a rollout is the same with and without numba.
"""

from __future__ import annotations

import math

import numpy as np

from moonshot.core import tricks
from moonshot.core.cards import (
    ACE_HEARTS,
    HEARTS_MASK,
    JACK_DIAMONDS,
    QUEEN_SPADES,
    SPADES_MASK,
    SUIT_MASKS,
    TEN_CLUBS,
    TWO_CLUBS,
)

from ._jit import highest_bit, kjit, kjit_leaf, lowest_bit, plain, popcount, raw

# ---------------------------------------------------------------- the rules table's layout
R_CP = 0  # 52 card points of the deal kind
R_PER_TRICK = 52
R_LAST_NUMBERED = 53  # the last trick number that carries points (0: none)
R_TNP = 54  # 14 entries: points for winning trick n (index R_TNP + n, n from 1)
R_TWO_CLUBS_LEADS = 68
R_FORBIDDEN = 69  # first_trick_forbidden
R_FORCED = 70  # first_trick_forced_order, R_MAX_FORCED entries, -1 padded
R_MAX_FORCED = 8
R_MUST_BREAK = 78
R_QUEEN_BREAKS = 79
R_MOON = 80  # 0 none, 1 others-plus, 2 shooter-minus, 3 trend, 4 negate
R_MOON_POINTS = 81
R_TC_MULT = 82
R_NEGATIVE = 83
R_CHARGED_RULE = 84
R_NINES = 85
R_EARLY_END = 86
R_POINT_CARDS = 87  # cards with points (either sign)
R_BAD = 88  # cards with positive points
R_GOOD = 89  # cards with negative points
R_LEN = 90

MOON_NONE, MOON_OTHERS_PLUS, MOON_SHOOTER_MINUS, MOON_TREND, MOON_NEGATE = 0, 1, 2, 3, 4

# ---------------------------------------------------------------- the state's layout
S_HANDS = 0  # 4
S_TAKEN = 4  # 4
S_TRICKS_WON = 8  # 4
S_TNW = 12  # 4: bit n set when the seat won trick n
S_PTS = 16  # 4: card points taken so far (the greedy policy's view)
S_TURN = 20
S_TRICK_NO = 21  # from 1
S_TRICK_LEN = 22  # 0..8 (Turbo's nines make eight-card tricks)
S_TRICK = 23  # 8 cards
S_TSEATS = 31  # 8 seats
S_PLAYED = 39
S_LED = 40  # bit s: suit s has been led
S_BROKEN = 41
S_CHARGED = 42  # every charged card (the charged-card rule)
S_DOUBLED = 43  # charged or exposed cards (scoring)
S_DONE = 44
S_LEN = 45

# rollout policies
RANDOM, GREEDY, EPSILON_GREEDY = 0, 1, 2

_QS_BIT = 1 << QUEEN_SPADES
_TC_BIT = 1 << TEN_CLUBS
_MOON_CARDS = HEARTS_MASK | _QS_BIT
_HIGH_SPADES = SPADES_MASK & ~((1 << QUEEN_SPADES + 1) - 1)  # KS, AS
_NOT_HEARTS = ~HEARTS_MASK
_FULL_SUIT = SUIT_MASKS[0]  # suit s is _FULL_SUIT << 13 * s
_M32 = 0xFFFFFFFF


# ---------------------------------------------------------------- card play's small rules
# (moonshot.core.tricks: one source with the search deal's; numba inlines them here)
beats = kjit_leaf(plain(tricks.beats))
breaks_hearts = kjit_leaf(plain(tricks.breaks_hearts))
led_nine = kjit_leaf(plain(tricks.led_nine))
trick_goes_on = kjit_leaf(plain(tricks.trick_goes_on))
deal_ends = kjit_leaf(plain(tricks.deal_ends))


# ---------------------------------------------------------------- random numbers
@kjit_leaf
def next32(rng):
    """The next 32-bit number of the xorshift128 generator in ``rng`` (four words, not all 0)."""
    t = rng[3]
    s = rng[0]
    rng[3] = rng[2]
    rng[2] = rng[1]
    rng[1] = s
    t ^= (t << 11) & _M32
    t ^= t >> 8
    t ^= s ^ (s >> 19)
    rng[0] = t
    return t


@kjit_leaf
def random_card(cards, rng):
    """A uniformly random card of the non-empty set ``cards`` (one draw)."""
    k = (next32(rng) * popcount(cards)) >> 32
    for _ in range(k):
        cards &= cards - 1
    return lowest_bit(cards)


# ---------------------------------------------------------------- rules
@kjit_leaf
def card_points(rt, cards):
    p = 0
    while cards:
        p += rt[R_CP + lowest_bit(cards)]
        cards &= cards - 1
    return p


@kjit_leaf
def legal(rt, st):
    """The cards the seat to play may play (:func:`moonshot.core.engine.legal_plays`'s rule)."""
    return legal_of(
        rt,
        st[S_HANDS + st[S_TURN]],
        st[S_TRICK_LEN],
        st[S_TRICK],
        st[S_TRICK_NO],
        st[S_BROKEN],
        st[S_CHARGED],
        st[S_LED],
    )


@kjit_leaf
def legal_of(rt, hand, trick_len, first_card, trick_no, broken, charged, led_suits):
    """:func:`legal` from the numbers it reads: ``hand``, the cards on the trick so far and its
    first card, the trick number (from 1), hearts broken, every charged card, the suits led."""
    if trick_len == 0:
        if trick_no == 1 and rt[R_TWO_CLUBS_LEADS] != 0 and (hand >> TWO_CLUBS) & 1:
            return hand & (1 << TWO_CLUBS)
        out = hand
        if rt[R_MUST_BREAK] != 0 and broken == 0 and (hand & _NOT_HEARTS) != 0:
            out &= _NOT_HEARTS
        if rt[R_CHARGED_RULE] != 0 and charged != 0:
            led = 0
            for s in range(4):
                if (led_suits >> s) & 1:
                    led |= _FULL_SUIT << (13 * s)
            unled = charged & ~led  # a charged card may not lead its suit's first trick
            if out & ~unled:
                out &= ~unled
    else:
        suit = first_card // 13
        out = hand & (_FULL_SUIT << (13 * suit))
        if out != 0:
            # nor follow to it, unless it is the only card of the suit held
            if rt[R_CHARGED_RULE] != 0 and ((led_suits >> suit) & 1) == 0 and (out & (out - 1)) != 0:
                out &= ~charged
        else:
            out = hand
    forbidden = rt[R_FORBIDDEN]
    if trick_no == 1 and forbidden != 0 and (out & forbidden) != 0:
        if out & ~forbidden:
            out &= ~forbidden
        else:
            for i in range(R_MAX_FORCED):
                c = rt[R_FORCED + i]
                if c >= 0 and (out >> c) & 1:
                    return out & (1 << c)
    return out


@kjit_leaf
def finish_trick(rt, st):
    n = st[S_TRICK_LEN]
    best = st[S_TRICK]
    winner = st[S_TSEATS]
    won = 1 << best
    for i in range(1, n):
        c = st[S_TRICK + i]
        won |= 1 << c
        if beats(c, best):
            best = c
            winner = st[S_TSEATS + i]
    st[S_TAKEN + winner] |= won
    st[S_TRICKS_WON + winner] += 1
    st[S_TNW + winner] |= 1 << st[S_TRICK_NO]
    if won & rt[R_POINT_CARDS]:
        st[S_PTS + winner] += card_points(rt, won)
    st[S_LED] |= 1 << (st[S_TRICK] // 13)
    st[S_TRICK_LEN] = 0
    st[S_TURN] = winner
    if deal_ends(
        st[S_PLAYED], st[S_TRICK_NO], rt[R_EARLY_END], rt[R_PER_TRICK], rt[R_POINT_CARDS], rt[R_LAST_NUMBERED]
    ):
        st[S_DONE] = 1
    else:
        st[S_TRICK_NO] += 1


@kjit_leaf
def nine_in_first_four(st):
    """A nine of the led suit is among the trick's first four cards (Turbo's nines)."""
    for i in range(4):  # noqa: SIM110 (numba compiles no generators)
        if led_nine(st[S_TRICK + i], st[S_TRICK]):
            return True
    return False


@kjit_leaf
def play(rt, st, c):
    """Play card ``c`` for the seat to play (which must hold it; legality is the caller's job)."""
    seat = st[S_TURN]
    b = 1 << c
    st[S_HANDS + seat] ^= b
    st[S_PLAYED] |= b
    n = st[S_TRICK_LEN]
    st[S_TRICK + n] = c
    st[S_TSEATS + n] = seat
    n += 1
    st[S_TRICK_LEN] = n
    if breaks_hearts(c, rt[R_QUEEN_BREAKS]):
        st[S_BROKEN] = 1
    nxt = (seat + 1) & 3
    if trick_goes_on(n, st[S_HANDS + nxt], n == 4 and rt[R_NINES] != 0 and nine_in_first_four(st)):
        st[S_TURN] = nxt
    else:
        finish_trick(rt, st)


@kjit
def scores(rt, st, out):
    """The finished deal's points per seat into ``out`` (:func:`moonshot.core.rules.score_deal`'s rule);
    returns the seat that shot the moon, or -1."""
    doubled = st[S_DOUBLED]
    heart_mult = 2 if (doubled >> ACE_HEARTS) & 1 else 1
    qs_mult = 2 if (doubled >> QUEEN_SPADES) & 1 else 1
    jd_mult = 2 if (doubled >> JACK_DIAMONDS) & 1 else 1
    tc_mult = rt[R_TC_MULT] * (2 if (doubled >> TEN_CLUBS) & 1 else 1)
    rule = rt[R_MOON]
    shooter = -1
    if rule != MOON_NONE:
        for s in range(4):
            t = st[S_TAKEN + s]
            if (t & HEARTS_MASK) == HEARTS_MASK and (t & _QS_BIT) != 0:
                shooter = s
    for s in range(4):
        t = st[S_TAKEN + s]
        moon_part = card_points(rt, t & HEARTS_MASK) * heart_mult
        if t & _QS_BIT:
            moon_part += rt[R_CP + QUEEN_SPADES] * qs_mult
        rest = t & ~HEARTS_MASK & ~_QS_BIT
        other = card_points(rt, rest)
        if (rest >> JACK_DIAMONDS) & 1:
            other += rt[R_CP + JACK_DIAMONDS] * (jd_mult - 1)
        other += rt[R_PER_TRICK] * st[S_TRICKS_WON + s]
        tnw = st[S_TNW + s]
        if tnw:
            for k in range(1, 14):
                if (tnw >> k) & 1:
                    other += rt[R_TNP + k]
        if shooter >= 0:
            if rule == MOON_OTHERS_PLUS:
                moon_part = 0 if s == shooter else rt[R_MOON_POINTS]
            elif s == shooter:
                if rule == MOON_SHOOTER_MINUS:
                    moon_part = -rt[R_MOON_POINTS]
                elif rule == MOON_TREND:
                    moon_part = -4 * moon_part
                else:
                    moon_part = -moon_part
        total = moon_part + other
        if tc_mult != 1 and (t & _TC_BIT) != 0:
            total *= tc_mult
        out[s] = -total if rt[R_NEGATIVE] != 0 else total
    return shooter


@kjit
def costs(rt, st, out):
    """The finished deal's points as a cost per seat (lower is better in every variant)."""
    shooter = scores(rt, st, out)
    if rt[R_NEGATIVE] != 0:
        for s in range(4):
            out[s] = -out[s]
    return shooter


# ---------------------------------------------------------------- the greedy rollout policy
@kjit_leaf
def moon_mode(rt, st, seat):
    """``seat`` has taken every moon card taken so far, and enough of them to try for the moon."""
    if rt[R_MOON] == MOON_NONE:
        return False
    mine = st[S_TAKEN + seat] & _MOON_CARDS
    if mine == 0:
        return False
    others = 0
    for s in range(4):
        if s != seat:
            others |= st[S_TAKEN + s]
    if others & _MOON_CARDS:
        return False
    hearts = popcount(mine & HEARTS_MASK)
    return hearts >= 8 or ((mine & _QS_BIT) != 0 and hearts >= 4)


@kjit_leaf
def moon_seat(st):
    """The one seat in moon mode (:func:`moon_mode`; the rules have a moon), or -1."""
    holder = -1
    for s in range(4):
        if st[S_TAKEN + s] & _MOON_CARDS:
            if holder >= 0:
                return -1
            holder = s
    if holder < 0:
        return -1
    mine = st[S_TAKEN + holder] & _MOON_CARDS
    hearts = popcount(mine & HEARTS_MASK)
    if hearts >= 8 or ((mine & _QS_BIT) != 0 and hearts >= 4):
        return holder
    return -1


@kjit_leaf
def lowest_rank(cards):
    best = -1
    best_rank = 99
    for s in range(4):
        m = cards & (_FULL_SUIT << (13 * s))
        if m:
            c = lowest_bit(m)
            if c % 13 < best_rank:
                best = c
                best_rank = c % 13
    return best


@kjit_leaf
def highest_rank(cards):
    best = -1
    best_rank = -1
    for s in range(4):
        m = cards & (_FULL_SUIT << (13 * s))
        if m:
            c = highest_bit(m)
            if c % 13 > best_rank:
                best = c
                best_rank = c % 13
    return best


@kjit_leaf
def greedy(rt, st, seat, legal_cards):
    """A fast rule-based player: duck under the winner, dump points when void, lead low.

    It shoots the moon when it has taken every moon card so far (and enough of them), and tries
    to stop a seat doing so by winning a trick itself. Its rules read the deal kind's card points,
    so they serve every scoring table. It sees only its own hand and the public state."""
    bad = rt[R_BAD]
    n = st[S_TRICK_LEN]
    hand = st[S_HANDS + seat]
    played = st[S_PLAYED]
    shooter = -1
    if rt[R_MOON] != MOON_NONE and st[S_TRICK_NO] > 2:
        shooter = moon_seat(st)
    if n == 0:
        if shooter == seat:
            return highest_rank(legal_cards)
        safe = legal_cards & ~bad
        # leading high spades while the queen is out invites her
        if (hand & _QS_BIT) == 0 and (played & _QS_BIT) == 0 and (safe & ~_HIGH_SPADES & ~_QS_BIT) != 0:
            safe &= ~_HIGH_SPADES
        if safe:
            return lowest_rank(safe)
        return lowest_rank(legal_cards)
    led = st[S_TRICK] // 13
    follow = legal_cards & (_FULL_SUIT << (13 * led))
    win = -1
    winner = -1
    trick_bits = 0
    for i in range(n):
        c = st[S_TRICK + i]
        trick_bits |= 1 << c
        if c // 13 == led and c > win:
            win = c
            winner = st[S_TSEATS + i]
    # the last card of a trick (Turbo's nines can extend a trick to eight cards; guess they do not)
    last = n == 3 or n == 7
    if follow:
        if shooter == seat:
            return highest_bit(follow)
        above = follow & ~((1 << (win + 1)) - 1)
        if shooter >= 0 and winner == shooter and above != 0 and (trick_bits & bad) != 0:
            return lowest_bit(above)
        if (trick_bits & rt[R_GOOD]) != 0 and above != 0:  # (a card worth taking: win the trick)
            return highest_bit(above) if last else lowest_bit(above)
        below = follow & ((1 << win) - 1)
        if below:
            # the highest card that still loses
            return highest_bit(below)
        if last:
            nonbad = follow & ~bad
            return highest_bit(nonbad) if nonbad != 0 else lowest_bit(follow)
        if led == 3 and (follow & _QS_BIT) != 0 and (follow & ~_QS_BIT) != 0:
            return lowest_bit(follow & ~_QS_BIT)
        return lowest_bit(follow)
    # void in the led suit: discard
    if shooter == seat:
        return lowest_rank(legal_cards)
    if shooter >= 0 and winner != shooter:
        keep = legal_cards & ~bad
        if keep:
            return highest_rank(keep)
    if (legal_cards & _QS_BIT) != 0 and (bad & _QS_BIT) != 0:
        return QUEEN_SPADES
    worst = -1
    worst_pts = 0
    m = legal_cards & bad
    while m:
        c = lowest_bit(m)
        if rt[R_CP + c] >= worst_pts:
            worst = c
            worst_pts = rt[R_CP + c]
        m &= m - 1
    if worst >= 0:
        return worst
    if (played & _QS_BIT) == 0 and (legal_cards & _HIGH_SPADES) != 0 and (hand & _QS_BIT) == 0:
        return highest_bit(legal_cards & _HIGH_SPADES)
    rest = legal_cards & ~rt[R_GOOD]
    return highest_rank(rest if rest != 0 else legal_cards)


# ---------------------------------------------------------------- rollouts
@kjit_leaf
def choose(rt, st, policy, eps32, rng):
    """The rollout policy's card for the seat to play (a forced card costs no random number)."""
    cards = legal(rt, st)
    if (cards & (cards - 1)) == 0:
        return lowest_bit(cards)
    if policy == RANDOM or (policy == EPSILON_GREEDY and next32(rng) < eps32):
        return random_card(cards, rng)
    return greedy(rt, st, st[S_TURN], cards)


@kjit
def rollout(rt, st, policy, eps32, rng, out):
    """Play ``st`` to the deal's end with ``policy`` for every seat; its costs into ``out``."""
    while st[S_DONE] == 0:
        play(rt, st, choose(rt, st, policy, eps32, rng))
    return costs(rt, st, out)


@kjit_leaf
def copy_state(src, dst):
    for i in range(S_LEN):
        dst[i] = src[i]


@kjit
def rollouts(rt, st, n, policy, eps32, rng, out):
    """``n`` rollouts from ``st`` (left unchanged): the costs of rollout ``i`` in ``out[i]``."""
    keep = np.zeros(S_LEN + 4, dtype=np.int64)
    work = raw(keep)  # (views that count no references: see _jit.raw)
    rt = raw(rt)
    st = raw(st)
    rng = raw(rng)
    for i in range(n):
        copy_state(st, work)
        rollout(rt, work, policy, eps32, rng, work[S_LEN:])
        for s in range(4):
            out[i, s] = work[S_LEN + s]
    keep[0] = 0  # (alive to the end)


# ---------------------------------------------------------------- UCT in one world
@kjit
def uct(rt, st, root_cards, iterations, c_explore, policy, eps32, rng, scale, child_n, child_total):
    """Grow a UCT tree of ``iterations`` over the deal ``st`` (every hand known): each seat chooses
    at its own nodes by UCB1 on its own relative cost (its cost minus the others' mean, over
    ``scale``), each iteration expands one node and finishes with a rollout. The root expands
    ``root_cards`` only. Writes each root card's visits and summed value into ``child_n`` and
    ``child_total`` (52 each) and returns the root's summed value."""
    size = iterations + 2
    kids = np.full((size, 52), -1, dtype=np.int64)
    visits = np.zeros(size, dtype=np.float64)
    total = np.zeros(size, dtype=np.float64)
    untried = np.full(size, -1, dtype=np.int64)
    untried[0] = root_cards
    nodes = 1
    keep = np.zeros(S_LEN + 4, dtype=np.int64)
    d = raw(keep)  # (views that count no references: see _jit.raw)
    out = d[S_LEN:]
    rt = raw(rt)
    st = raw(st)
    rng = raw(rng)
    path = np.zeros(64, dtype=np.int64)
    movers = np.zeros(64, dtype=np.int64)
    me = st[S_TURN]
    for _ in range(iterations):
        copy_state(st, d)
        node = 0
        depth = 0
        while d[S_DONE] == 0:
            if untried[node] < 0:
                untried[node] = legal(rt, d)
            mover = d[S_TURN]
            u = untried[node]
            if u != 0:
                c = random_card(u, rng)
                untried[node] = u & ~(1 << c)
                kids[node, c] = nodes
                node = nodes
                nodes += 1
                play(rt, d, c)
                path[depth] = node
                movers[depth] = mover
                depth += 1
                break
            # every card tried: UCB1, the mover minimising its own cost
            log_n = math.log(visits[node]) if visits[node] > 1 else 0.0
            best_c = -1
            best_v = math.inf
            for c in range(52):
                ch = kids[node, c]
                if ch >= 0:
                    v = total[ch] / visits[ch] - c_explore * math.sqrt(log_n / visits[ch])
                    if v < best_v:
                        best_c = c
                        best_v = v
            play(rt, d, best_c)
            node = kids[node, best_c]
            path[depth] = node
            movers[depth] = mover
            depth += 1
        if d[S_DONE] == 0:
            rollout(rt, d, policy, eps32, rng, out)
        else:
            costs(rt, d, out)
        tot = out[0] + out[1] + out[2] + out[3]
        visits[0] += 1.0
        total[0] += (out[me] - (tot - out[me]) / 3.0) / scale
        for k in range(depth):
            s = movers[k]
            visits[path[k]] += 1.0
            total[path[k]] += (out[s] - (tot - out[s]) / 3.0) / scale
    for c in range(52):
        ch = kids[0, c]
        if ch >= 0:
            child_n[c] = visits[ch]
            child_total[c] = total[ch]
        else:
            child_n[c] = 0.0
            child_total[c] = 0.0
    keep[0] = 0
    return total[0]


# ---------------------------------------------------------------- whole random deals
@kjit
def deal_state(rt, rng, st, deck):
    """A uniformly random deal into ``st``, at the start of play (no passing): the holder of the
    two of clubs leads where the rules say so, else seat 0. ``deck``: room for 52 cards."""
    for i in range(S_LEN):
        st[i] = 0
    for i in range(52):
        deck[i] = i
    for i in range(51, 0, -1):
        j = (next32(rng) * (i + 1)) >> 32
        c = deck[i]
        deck[i] = deck[j]
        deck[j] = c
    for i in range(52):
        st[S_HANDS + i // 13] |= 1 << deck[i]
    st[S_TRICK_NO] = 1
    if rt[R_TWO_CLUBS_LEADS] != 0:
        for s in range(4):
            if (st[S_HANDS + s] >> TWO_CLUBS) & 1:
                st[S_TURN] = s


@kjit
def random_deals(rt, k, policy, eps32, rng, out):
    """``k`` random deals played out from the first lead with ``policy``: costs into ``out[i]``."""
    keep = np.zeros(S_LEN + 4 + 52, dtype=np.int64)
    st = raw(keep)
    rt = raw(rt)
    rng = raw(rng)
    for i in range(k):
        deal_state(rt, rng, st, st[S_LEN + 4 :])
        rollout(rt, st, policy, eps32, rng, st[S_LEN : S_LEN + 4])
        for s in range(4):
            out[i, s] = st[S_LEN + s]
    keep[0] = 0


# ---------------------------------------------------------------- the exact endgame solver
_ALL_CARDS = (1 << 52) - 1
_NINES = (1 << 7) | (1 << 20) | (1 << 33) | (1 << 46)
_SOLVE_DEPTH = 53  # plies: a whole deal's cards, and the root
_INF = 1e9


@kjit_leaf
def solve_matters(rt, st):
    """Cards whose fate can still change the score besides who wins which trick: point cards,
    doubled cards, and the ten of clubs where it multiplies."""
    m = rt[R_POINT_CARDS] | st[S_DOUBLED]
    if rt[R_TC_MULT] != 1:
        m |= _TC_BIT
    return m


@kjit_leaf
def settled(rt, st, matters):
    """Every card still out carries nothing the score depends on: the taken cards fix it."""
    if rt[R_PER_TRICK] != 0 or rt[R_LAST_NUMBERED] >= st[S_TRICK_NO]:
        return False
    left = _ALL_CARDS & ~st[S_PLAYED]
    for i in range(st[S_TRICK_LEN]):
        left |= 1 << st[S_TRICK + i]
    return (left & matters) == 0


@kjit_leaf
def distinct(rt, st, cards, special):
    """``cards`` (legal for the seat to play) less each card equivalent to the next lower one kept:
    same suit and points, neither ``special``, and no card between them that another seat may
    still play (every card between is in this hand or gone from play before this trick)."""
    gone = st[S_PLAYED]
    for i in range(st[S_TRICK_LEN]):
        gone &= ~(1 << st[S_TRICK + i])
    hand = st[S_HANDS + st[S_TURN]]
    out = 0
    prev = -1
    while cards:
        c = lowest_bit(cards)
        cards &= cards - 1
        if (
            prev >= 0
            and prev // 13 == c // 13
            and rt[R_CP + prev] == rt[R_CP + c]
            and ((special >> c) & 1) == 0
            and ((special >> prev) & 1) == 0
        ):
            between = ((1 << c) - 1) & ~((2 << prev) - 1)
            if (between & ~(gone | hand)) == 0:
                prev = c
                continue
        out |= 1 << c
        prev = c
    return out


@kjit_leaf
def relative_cost(rt, st, me, weight, out):
    """The finished (or settled) deal's cost for ``me`` less ``weight`` times the others' mean."""
    costs(rt, st, out)
    return out[me] - weight * (out[0] + out[1] + out[2] + out[3] - out[me]) / 3.0


_M63 = (1 << 63) - 1
_MIX = 0x2545F4914F6CDD1D


@kjit_leaf
def mix(h, x):
    """``h`` with ``x`` mixed in: a 63-bit hash step, the same with and without numba (compiled the
    product wraps in 64 bits; uncompiled ``int`` keeps it exact, not a NumPy scalar that would
    wrap with a warning; the low 63 bits agree)."""
    h = ((h ^ int(x)) * _MIX) & _M63
    return h ^ (h >> 31)


@kjit_leaf
def position_key(rt, st, matters):
    """A 63-bit fingerprint, never 0, of what the rest of a deal at a trick's start depends on: the
    hands, who leads, the cards taken that count, hearts broken, and where the rules read them the
    suits led, tricks won and trick numbers won (the cards played follow from the hands)."""
    h = 1
    for s in range(4):
        h = mix(h, st[S_HANDS + s])
        h = mix(h, st[S_TAKEN + s] & matters)
        if rt[R_PER_TRICK] != 0:
            h = mix(h, st[S_TRICKS_WON + s])
        if rt[R_LAST_NUMBERED] != 0:
            h = mix(h, st[S_TNW + s])
    h = mix(h, st[S_TURN] | (st[S_BROKEN] << 2) | ((st[S_LED] if rt[R_CHARGED_RULE] != 0 else 0) << 3))
    return h if h != 0 else 1


@kjit
def solve(rt, st, me, weight, table_bits):
    """The exact value of the deal ``st`` (every hand known) for ``me`` when the other three play
    against it: paranoid minimax with alpha-beta over :func:`relative_cost` at the deal's end.

    :func:`moonshot.bots.search.solve` on the search deal is the same search (the same shortcuts:
    a settled deal is valued as it stands; of equivalent cards only one is tried; ``me`` tries its
    cards lowest first, the others highest first, except that the card which last cut a search off
    at the same ply is tried first: the value is the same, found sooner), here without recursion:
    a stack of states, one per ply. With ``table_bits`` > 0 a transposition table of ``2**table_bits`` entries keeps
    the bounds found for positions at a trick's start (:func:`position_key`), so a position reached
    again by the same cards in another order is not searched again."""
    keep = np.zeros(_SOLVE_DEPTH * S_LEN + 4 + 6 * _SOLVE_DEPTH, dtype=np.int64)
    w = raw(keep)
    rt = raw(rt)
    top = _SOLVE_DEPTH * S_LEN
    out = w[top : top + 4]
    cand = w[top + 4 : top + 4 + _SOLVE_DEPTH]
    mine = w[top + 4 + _SOLVE_DEPTH : top + 4 + 2 * _SOLVE_DEPTH]
    slot = w[top + 4 + 2 * _SOLVE_DEPTH : top + 4 + 3 * _SOLVE_DEPTH]
    key = w[top + 4 + 3 * _SOLVE_DEPTH : top + 4 + 4 * _SOLVE_DEPTH]
    cur = w[top + 4 + 4 * _SOLVE_DEPTH : top + 4 + 5 * _SOLVE_DEPTH]  # the card being searched at each ply
    killer = w[top + 4 + 5 * _SOLVE_DEPTH :]  # the card that last cut a search off at each ply, + 1
    lo = np.empty(_SOLVE_DEPTH, dtype=np.float64)
    hi = np.empty(_SOLVE_DEPTH, dtype=np.float64)
    best = np.empty(_SOLVE_DEPTH, dtype=np.float64)
    at_lo = np.empty(_SOLVE_DEPTH, dtype=np.float64)  # the window a node was searched with
    at_hi = np.empty(_SOLVE_DEPTH, dtype=np.float64)
    size = (1 << table_bits) if table_bits > 0 else 1
    mask = size - 1 if table_bits > 0 else -1
    tt_key = np.zeros(size, dtype=np.int64)
    tt_lo = np.empty(size, dtype=np.float64)
    tt_hi = np.empty(size, dtype=np.float64)
    matters = solve_matters(rt, st)
    special = (matters & ~rt[R_POINT_CARDS]) | st[S_CHARGED]
    if rt[R_NINES] != 0:
        special |= _NINES
    node = w[0:S_LEN]
    for i in range(S_LEN):
        node[i] = st[i]
    if node[S_DONE] != 0 or settled(rt, node, matters):
        v = relative_cost(rt, node, me, weight, out)
        keep[0] = 0
        return v
    mine[0] = node[S_TURN] == me
    cand[0] = distinct(rt, node, legal(rt, node), special)
    lo[0] = -_INF
    hi[0] = _INF
    best[0] = _INF if mine[0] else -_INF
    slot[0] = -1
    d = 0
    while True:
        todo = cand[d]
        if todo != 0:
            c = killer[d] - 1
            if c < 0 or ((todo >> c) & 1) == 0:
                c = lowest_bit(todo) if mine[d] else highest_bit(todo)
            cand[d] = todo & ~(1 << c)
            cur[d] = c
            child = w[(d + 1) * S_LEN : (d + 2) * S_LEN]
            copy_state(w[d * S_LEN : (d + 1) * S_LEN], child)
            play(rt, child, c)
            if child[S_DONE] != 0 or settled(rt, child, matters):
                v = relative_cost(rt, child, me, weight, out)
            else:
                a = lo[d]
                b = hi[d]
                i = -1
                h = 0
                if mask >= 0 and child[S_TRICK_LEN] == 0:
                    h = position_key(rt, child, matters)
                    i = h & mask
                    if tt_key[i] == h:
                        if tt_lo[i] >= b or tt_lo[i] == tt_hi[i]:
                            v = tt_lo[i]
                            i = -2
                        elif tt_hi[i] <= a:
                            v = tt_hi[i]
                            i = -2
                        else:
                            a = max(a, tt_lo[i])
                            b = min(b, tt_hi[i])
                if i != -2:  # (-2: the table answered)
                    d += 1
                    mine[d] = child[S_TURN] == me
                    cand[d] = distinct(rt, child, legal(rt, child), special)
                    lo[d] = a
                    hi[d] = b
                    at_lo[d] = a
                    at_hi[d] = b
                    slot[d] = i
                    key[d] = h
                    best[d] = _INF if mine[d] else -_INF
                    continue
        else:
            v = best[d]
            if d == 0:
                break
            i = slot[d]
            if i >= 0:
                tt_key[i] = key[d]
                if v <= at_lo[d]:
                    tt_lo[i] = -_INF
                    tt_hi[i] = v
                elif v >= at_hi[d]:
                    tt_lo[i] = v
                    tt_hi[i] = _INF
                else:
                    tt_lo[i] = v
                    tt_hi[i] = v
            d -= 1
        # the child's value into its parent, node d
        if mine[d]:
            if v < best[d]:
                best[d] = v
                if v < hi[d]:
                    hi[d] = v
                    if lo[d] >= hi[d]:
                        cand[d] = 0
                        killer[d] = cur[d] + 1
        elif v > best[d]:
            best[d] = v
            if v > lo[d]:
                lo[d] = v
                if lo[d] >= hi[d]:
                    cand[d] = 0
                    killer[d] = cur[d] + 1
    keep[0] = 0
    return best[0]
