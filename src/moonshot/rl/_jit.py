# mypy: ignore-errors
"""The batched simulator's per-game loops: every operation of :mod:`moonshot.rl.vector` on its arrays.

One source, like the rules kernel's: compiled by numba (``cache=True``) where it is installed (the
``rl`` extra), plain Python otherwise (or with ``MOONSHOT_NO_NUMBA=1``), with the same results;
:func:`moonshot.kernel._jit.python_of` runs it as plain Python beside numba too (``backend="python"``),
so the tests hold the compiled code to the interpreter's. The rules (legal cards, which card takes a
trick, hearts breaking, a trick's and a deal's end, scoring, the points a seat has taken) and the bit
intrinsics (``popcount``, ``lowest_bit``) are the rules kernel's (:mod:`moonshot.kernel`,
:mod:`moonshot.core.tricks`), inlined here; these loops add the batched arrays, dealing, passing,
the games' totals, the env's random draws and observations. Their random draws are
:func:`moonshot.rl.vector.random_cards`' (the same uniforms from the same ``numpy.random.Generator``
in the same order, the same card for each; a test compares them).
Only the first use on a machine pays the compile. numba keys its cache by this file's source: after
editing only the kernel's functions, touch this file too (or delete
``src/moonshot/rl/__pycache__/*.nbi``, ``*.nbc``).
"""

from __future__ import annotations

import numpy as np

from moonshot.kernel._jit import NUMBA

if NUMBA:
    from numba import njit
else:  # the same loops as plain Python (the kernel's functions are plain Python then too)

    def njit(*args, **kwargs):
        return args[0] if args and callable(args[0]) else lambda fn: fn


from moonshot.core.rules import Rules
from moonshot.kernel import rules_table
from moonshot.kernel._core import (
    R_EARLY_END,
    R_LAST_NUMBERED,
    R_PER_TRICK,
    R_POINT_CARDS,
    R_QUEEN_BREAKS,
    S_LEN,
    S_TAKEN,
    beats,
    breaks_hearts,
    card_points,
    deal_ends,
    legal_of,
    scores,
    trick_goes_on,
)
from moonshot.kernel._jit import lowest_bit, popcount

_U1 = np.uint64(1)
_U0 = np.uint64(0)
_OFFSETS = np.array([1, 3, 2, 0], dtype=np.int64)
PASS, PLAY, OVER = 0, 1, 2
# the play fields (first trick, hearts breaking) every rules the batched simulator plays share
# (moonshot.rl.vector.batchable); scoring reads each game's own table
_PLAY_RULES = np.array(rules_table(Rules(), 0))
KEYED_MAX = 512  # random_cards draws one key per card for at most this many masks (see vector.py)


@njit(cache=True, inline="always")
def bit(c):
    return _U1 << np.uint64(c)


@njit(cache=True, inline="always")
def rank_pick(mask, u):
    """The card ``int(u * |mask|)``-th (from 0, ascending) in ``mask``: ``vector._rank_cards``'s rule."""
    r = np.int64(u * popcount(mask))
    for _ in range(r):
        mask &= mask - _U1
    return lowest_bit(mask)


@njit(cache=True, inline="always")
def keyed_pick(mask, keys, row):
    """The card of ``mask`` with the largest ``keys[row, c] + 1`` (first on ties): ``random_cards``' small-n rule."""
    best = -1.0
    card = 0
    m = mask
    while m != _U0:
        c = lowest_bit(m)
        m &= m - _U1
        v = keys[row, c] + 1.0
        if v > best:
            best = v
            card = c
    return card


@njit(cache=True, inline="always")
def legal_mask(hand, leading, first, led, broken):
    """The legal plays of ``hand``: the rules kernel's rule (:func:`moonshot.kernel._core.legal_of`)
    for one game, read from the play fields every batchable rules share (``_PLAY_RULES``)."""
    legal = legal_of(
        _PLAY_RULES,
        np.int64(hand),
        np.int64(0 if leading else 1),
        np.int64(13 * led),
        np.int64(1 if first else 2),
        np.int64(1 if broken else 0),
        np.int64(0),
        np.int64(0),
    )
    return np.uint64(legal)


@njit(cache=True, inline="always")
def hands_from_keys(keys, row, out, out_row):
    """Deal by the ranks of ``keys[row, :52]`` into ``out[out_row]``: ``vector._hands_from_keys``' rule
    (``argsort``: the cards of the 13 smallest keys to seat 0, and so on).

    The keys are uniforms, so a counting sort into 52 buckets and an insertion sort of the nearly
    sorted result rank them in about linear time (numba's general sort took 4x as long).
    """
    cnt = np.zeros(53, dtype=np.int64)
    bucket = np.empty(52, dtype=np.int64)
    order = np.empty(52, dtype=np.int64)
    for c in range(52):
        b = np.int64(keys[row, c] * 52)
        bucket[c] = b
        cnt[b + 1] += 1
    for i in range(52):
        cnt[i + 1] += cnt[i]
    for c in range(52):
        b = bucket[c]
        order[cnt[b]] = c
        cnt[b] += 1
    for i in range(1, 52):
        c = order[i]
        x = keys[row, c]
        j = i - 1
        while j >= 0 and keys[row, order[j]] > x:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = c
    for s in range(4):
        h = _U0
        for i in range(13 * s, 13 * s + 13):
            h |= bit(order[i])
        out[out_row, s] = h


@njit(cache=True, inline="always")
def deal_score(taken, rt, work):
    """Points of one finished deal into ``work[S_LEN:S_LEN + 4]``: the rules kernel's score
    (:func:`moonshot.kernel._core.scores`) from the rules table ``rt`` and what each seat took.
    ``work``: ``S_LEN + 4`` int64s, zero but for what this function writes (a kernel state)."""
    for s in range(4):
        work[S_TAKEN + s] = np.int64(taken[s])
    scores(rt, work, work[S_LEN:])


@njit(cache=True, nogil=True)
def play_random_deals(u, dirs, rt, points):
    """Whole deals, four random seats, one deal at a time; ``u`` is ``(k, 116)`` uniforms per deal.

    Row layout (``BatchedHearts.play_random_deals`` uses the same): 52 dealing keys, 12 pass picks
    (seat-major, three each), 52 plays in order. ``dirs[d]`` is deal ``d``'s pass direction index.
    """
    k = u.shape[0]
    hands = np.zeros((1, 4), dtype=np.uint64)
    passes = np.zeros(4, dtype=np.uint64)
    taken = np.zeros(4, dtype=np.uint64)
    work = np.zeros(S_LEN + 4, dtype=np.int64)  # (deal_score's kernel state)
    for d in range(k):
        hands_from_keys(u, d, hands, 0)
        di = dirs[d]
        if di != 3:
            off = _OFFSETS[di]
            for s in range(4):
                m = hands[0, s]
                p = _U0
                for j in range(3):
                    b = bit(rank_pick(m, u[d, 52 + 3 * s + j]))
                    m ^= b
                    p |= b
                passes[s] = p
            for s in range(4):
                hands[0, s] = (hands[0, s] & ~passes[s]) | passes[(s - off + 4) & 3]
        turn = 0
        for s in range(4):
            if hands[0, s] & _U1:
                turn = s
        broken = False
        for s in range(4):
            taken[s] = _U0
        col = 64
        for trick in range(13):
            led = 0
            best = 0
            winner = 0
            won = _U0
            for pos in range(4):
                hand = hands[0, turn]
                c = rank_pick(legal_mask(hand, pos == 0, trick == 0, led, broken), u[d, col])
                col += 1
                b = bit(c)
                hands[0, turn] = hand ^ b
                won |= b
                suit = c // 13
                if pos == 0:
                    led = suit
                    best = c
                    winner = turn
                elif beats(c, best):
                    best = c
                    winner = turn
                if breaks_hearts(c, _PLAY_RULES[R_QUEEN_BREAKS]):
                    broken = True
                turn = (turn + 1) & 3
            taken[winner] |= won
            turn = winner
        deal_score(taken, rt, work)
        for s in range(4):
            points[d, s] = work[S_LEN + s]


# ---------------------------------------------------------------------------------------------
# One game at a time on BatchedHearts' arrays (``st``: the tuple BatchedHearts.arrays() returns)
# and HeartsVectorEnv.step as one loop that draws from the env's Generator.


@njit(cache=True, inline="always")
def start_play(st, g):
    hands, trick_no, leader, turn, phase = st[0], st[7], st[8], st[9], st[18]
    phase[g] = PLAY
    trick_no[g] = 1
    lead = 0
    for s in range(3, -1, -1):
        if hands[g, s] & _U1:
            lead = s
    leader[g] = lead
    turn[g] = lead


@njit(cache=True, inline="always")
def start_deal(st, g, keys, row):
    """A new deal for game ``g``, dealt from ``keys[row]``."""
    hands_from_keys(keys, row, st[0], g)
    reset_deal(st, g)


@njit(cache=True, inline="always")
def reset_deal(st, g):
    """Game ``g`` starts the deal its hands hold: passing, or the first lead on a hold deal."""
    passed, received, taken, trick_bits, played = st[1], st[2], st[3], st[4], st[5]
    trick_len, trick_no, hearts_broken, voids, led_suits = st[6], st[7], st[13], st[14], st[15]
    deal_index, phase = st[17], st[18]
    for s in range(4):
        passed[g, s] = _U0
        received[g, s] = _U0
        taken[g, s] = _U0
        trick_bits[g, s] = _U0
        voids[g, s] = 0
    played[g] = _U0
    trick_len[g] = 0
    trick_no[g] = 0
    hearts_broken[g] = False
    led_suits[g] = 0
    phase[g] = PASS
    if deal_index[g] % 4 == 3:
        start_play(st, g)


@njit(cache=True, inline="always")
def game_legal(st, g):
    hands, trick_len, trick_no, turn, led_suit, hearts_broken = st[0], st[6], st[7], st[9], st[10], st[13]
    return legal_mask(hands[g, turn[g]], trick_len[g] == 0, trick_no[g] == 1, led_suit[g], hearts_broken[g])


@njit(cache=True, inline="always")
def play_card(st, g, c, rt, limit, inclusive, scratch):
    """The seat to play in game ``g`` plays ``c`` (with trick end and scoring); True when its deal ended."""
    hands, taken, trick_bits, played, trick_len, trick_no = st[0], st[3], st[4], st[5], st[6], st[7]
    leader, turn, led_suit, best, winner, hearts_broken = st[8], st[9], st[10], st[11], st[12], st[13]
    voids, led_suits, totals, deal_index, phase, last_points = st[14], st[15], st[16], st[17], st[18], st[19]
    seat = turn[g]
    b = bit(c)
    hands[g, seat] ^= b
    played[g] |= b
    trick_bits[g, seat] = b
    suit = c // 13
    lead = trick_len[g] == 0
    if lead:
        led_suit[g] = suit
    led = led_suit[g]
    if lead or beats(c, best[g]):
        best[g] = c
        winner[g] = seat
    if not (lead or suit == led):
        voids[g, seat] |= 1 << led
    if breaks_hearts(c, _PLAY_RULES[R_QUEEN_BREAKS]):
        hearts_broken[g] = True
    trick_len[g] += 1
    nxt = (seat + 1) & 3
    turn[g] = nxt
    if trick_goes_on(np.int64(trick_len[g]), np.int64(hands[g, nxt]), False):  # (no nines: batchable)
        return False
    w = winner[g]
    taken[g, w] |= trick_bits[g, 0] | trick_bits[g, 1] | trick_bits[g, 2] | trick_bits[g, 3]
    led_suits[g] |= 1 << led
    for s in range(4):
        trick_bits[g, s] = _U0
    trick_len[g] = 0
    leader[g] = w
    turn[g] = w
    ended = deal_ends(
        np.int64(played[g]),
        np.int64(trick_no[g]),
        rt[R_EARLY_END],
        rt[R_PER_TRICK],
        rt[R_POINT_CARDS],
        rt[R_LAST_NUMBERED],
    )
    trick_no[g] += 1
    if not ended:
        return False
    deal_score(taken[g], rt, scratch)
    top = -(1 << 62)
    for s in range(4):
        last_points[g, s] = scratch[S_LEN + s]
        totals[g, s] += scratch[S_LEN + s]
        top = max(top, totals[g, s])
    over = top >= limit if inclusive else top > limit
    deal_index[g] += 1
    phase[g] = OVER if over else PASS
    return True


@njit(cache=True, inline="always")
def pass_game(st, g, passes, row):
    """Every seat of game ``g`` passes ``passes[row, seat]`` (three cards each) by the deal's direction;
    play starts."""
    hands, passed, received, deal_index = st[0], st[1], st[2], st[17]
    off = _OFFSETS[deal_index[g] % 4]
    for s in range(4):
        passed[g, s] = passes[row, s]
    for s in range(4):
        got = passes[row, (s - off + 4) & 3]
        received[g, s] = got
        hands[g, s] = (hands[g, s] & ~passes[row, s]) | got
    start_play(st, g)


# ---------------------------------------------------------------------------------------------
# BatchedHearts' methods over the games ``idx``


@njit(cache=True)
def deal_hands(st, idx, hands):
    """``BatchedHearts.start_deals``: deal ``hands[i]`` to game ``idx[i]``."""
    for i in range(idx.shape[0]):
        g = idx[i]
        for s in range(4):
            st[0][g, s] = hands[i, s]
        reset_deal(st, g)


@njit(cache=True)
def pass_games(st, idx, passes):
    """``BatchedHearts.pass_cards``."""
    for i in range(idx.shape[0]):
        pass_game(st, idx[i], passes, i)


@njit(cache=True)
def legal_games(st, idx, out):
    """``BatchedHearts.legal``: the legal plays of the seat to play in each game into ``out``."""
    for i in range(idx.shape[0]):
        out[i] = game_legal(st, idx[i])


@njit(cache=True)
def play_games(st, idx, cards, rt, limit, inclusive, ended):
    """``BatchedHearts.play``: the games whose deal ended into ``ended``; returns how many."""
    scratch = np.zeros(S_LEN + 4, dtype=np.int64)  # (deal_score's kernel state)
    e = 0
    for i in range(idx.shape[0]):
        if play_card(st, idx[i], cards[i], rt, limit, inclusive, scratch):
            ended[e] = idx[i]
            e += 1
    return e


@njit(cache=True)
def points_taken(st, rt, idx, out):
    """``BatchedHearts.deal_points``: the card points each seat has taken this deal."""
    taken = st[3]
    for i in range(idx.shape[0]):
        for s in range(4):
            out[i, s] = card_points(rt, np.int64(taken[idx[i], s]) & rt[R_POINT_CARDS])


@njit(cache=True)
def draw_keys(rng, m):
    keys = np.empty((m, 52))
    for i in range(m):
        for c in range(52):
            keys[i, c] = rng.random()
    return keys


@njit(cache=True)
def random_picks(rng, masks, m):
    """``vector.random_cards(rng, masks[:m])``: the same draws and the same cards."""
    out = np.empty(m, dtype=np.int64)
    if m <= KEYED_MAX:
        keys = draw_keys(rng, m)
        for i in range(m):
            out[i] = keyed_pick(masks[i], keys, i)
    else:
        for i in range(m):
            out[i] = rank_pick(masks[i], rng.random())
    return out


@njit(cache=True)
def deal_over(st, rng, ended, m, seat, rewards):
    """Deals that ended, ``ended[:m]``: the learning seat's rewards, then the next deals (drawn together)."""
    phase, last_points = st[18], st[19]
    nxt = np.empty(m, dtype=np.int64)
    k = 0
    for i in range(m):
        g = ended[i]
        rewards[g] += -np.float64(last_points[g, seat])
        if phase[g] != OVER:
            nxt[k] = g
            k += 1
    if k:
        keys = draw_keys(rng, k)
        for i in range(k):
            start_deal(st, nxt[i], keys, i)


@njit(cache=True)
def advance(st, rng, games, seat, rewards, rt, limit, inclusive, scratch):
    """Random opponents play in ``games`` until the learning seat must act."""
    phase, turn = st[18], st[9]
    n = games.shape[0]
    busy = np.empty(n, dtype=np.int64)
    masks = np.empty(n, dtype=np.uint64)
    ended = np.empty(n, dtype=np.int64)
    while True:
        m = 0
        for i in range(n):
            g = games[i]
            if phase[g] == PLAY and turn[g] != seat:
                busy[m] = g
                masks[m] = game_legal(st, g)
                m += 1
        if m == 0:
            return
        cards = random_picks(rng, masks, m)
        e = 0
        for i in range(m):
            if play_card(st, busy[i], cards[i], rt, limit, inclusive, scratch):
                ended[e] = busy[i]
                e += 1
        if e:
            deal_over(st, rng, ended, e, seat, rewards)


@njit(cache=True)
def reset_games(st, rng, games, seat, selected, rt, limit, inclusive, scratch):
    """New games in ``games`` (``HeartsVectorEnv.reset``, and the autoreset of ``step``): deals drawn
    together, then the random opponents play up to the learning seat."""
    totals, deal_index = st[16], st[17]
    keys = draw_keys(rng, games.size)
    for i in range(games.size):
        g = games[i]
        for s in range(4):
            totals[g, s] = 0
        deal_index[g] = 0
        start_deal(st, g, keys, i)
        selected[g] = _U0
    advance(st, rng, games, seat, np.zeros(selected.shape[0]), rt, limit, inclusive, scratch)


@njit(cache=True)
def env_reset(st, rng, seat, selected, rt, limit, inclusive):
    """``HeartsVectorEnv.reset``: every game anew."""
    scratch = np.zeros(S_LEN + 4, dtype=np.int64)  # (deal_score's kernel state)
    reset_games(st, rng, np.arange(selected.shape[0]), seat, selected, rt, limit, inclusive, scratch)


@njit(cache=True)
def env_step(
    st,
    rng,
    seat,
    actions,
    needs_reset,
    selected,
    raise_illegal,
    rewards,
    illegal,
    rt,
    limit,
    inclusive,
):
    """``HeartsVectorEnv.step`` up to the observation.

    Returns -1 on an illegal action when ``raise_illegal`` (the games due a reset reset, nothing played).
    """
    hands, phase = st[0], st[18]
    scratch = np.zeros(S_LEN + 4, dtype=np.int64)  # (deal_score's kernel state)
    # games that ended last step start again; their action is ignored (next-step autoreset)
    resetting = np.flatnonzero(needs_reset)
    if resetting.size:
        reset_games(st, rng, resetting, seat, selected, rt, limit, inclusive, scratch)
    live = np.flatnonzero(~needs_reset)
    nl = live.size
    acts = np.empty(nl, dtype=np.int64)
    bad = np.empty(nl, dtype=np.int64)
    bad_masks = np.empty(nl, dtype=np.uint64)
    nb = 0
    for i in range(nl):
        g = live[i]
        if phase[g] == PASS:
            mask = hands[g, seat] & ~selected[g]
        elif phase[g] == PLAY:
            mask = game_legal(st, g)
        else:
            mask = _U0
        a = actions[g]
        acts[i] = a
        if not (0 <= a < 52 and ((mask >> np.uint64(a)) & _U1) != _U0):
            bad[nb] = i
            bad_masks[nb] = mask
            nb += 1
    if nb:
        if raise_illegal:
            return -1
        picks = random_picks(rng, bad_masks, nb)
        for j in range(nb):
            acts[bad[j]] = picks[j]
            illegal[live[bad[j]]] = True
    ph = np.empty(nl, dtype=np.int64)
    for i in range(nl):
        ph[i] = phase[live[i]]
    # passing: the learner's choice so far; when three are chosen every seat passes
    done = np.empty(nl, dtype=np.int64)
    nd = 0
    for i in range(nl):
        if ph[i] == PASS:
            g = live[i]
            selected[g] |= bit(acts[i])
            if popcount(selected[g]) == 3:
                done[nd] = g
                nd += 1
    if nd:
        q = 4 * nd
        m = np.empty(q, dtype=np.uint64)
        for i in range(nd):
            for s in range(4):
                m[4 * i + s] = hands[done[i], s]
        chosen = np.zeros(q, dtype=np.uint64)
        for _ in range(3):
            cards = random_picks(rng, m, q)
            for r in range(q):
                b = bit(cards[r])
                m[r] &= ~b
                chosen[r] |= b
        passes = chosen.reshape((nd, 4))
        for i in range(nd):
            g = done[i]
            passes[i, seat] = selected[g]
            selected[g] = _U0
            pass_game(st, g, passes, i)
    # playing: the learner's card, then the deals that ended
    ended = np.empty(nl, dtype=np.int64)
    ne = 0
    for i in range(nl):
        if ph[i] == PLAY:
            g = live[i]
            if play_card(st, g, acts[i], rt, limit, inclusive, scratch):
                ended[ne] = g
                ne += 1
    if ne:
        deal_over(st, rng, ended, ne, seat, rewards)
    advance(st, rng, live, seat, rewards, rt, limit, inclusive, scratch)
    return 0


@njit(cache=True)
def observe(st, idx, seat, selected, block, o, rt, bound, obs, masks):
    """What seat ``seat`` sees in each game ``idx[i]`` into ``obs[i]`` and its action mask into ``masks[i]``
    (:func:`moonshot.rl.observation.encode`'s layout; the totals clipped to +-10, the deal number to ``bound``).

    ``o``: offsets (cards_end, trick_leader, voids, points, totals, cards_left, pass_direction,
    phase, trick_no, hearts_broken, led_suits, card_points, deal_no); ``block`` the rules block;
    ``rt`` the rules kernel's table of the rules (the points each seat has taken: its card points).
    """
    hands, passed, received, taken, trick_bits, played = st[0], st[1], st[2], st[3], st[4], st[5]
    trick_no, leader, hearts_broken, voids, led_suits = st[7], st[8], st[13], st[14], st[15]
    totals, deal_index, phase = st[16], st[17], st[18]
    width = obs.shape[1]
    sets = np.zeros(17, dtype=np.uint64)
    o_tl, o_voids, o_points, o_totals, o_left = o[1], o[2], o[3], o[4], o[5]  # o[0]: the card sets' end
    o_pd, o_phase, o_tn, o_hb, o_ls, o_cp, o_dn = o[6], o[7], o[8], o[9], o[10], o[11], o[12]
    for gi in range(idx.shape[0]):
        g = idx[gi]
        row = obs[gi]
        for j in range(width):
            row[j] = 0.0
        pl = played[g]
        ps = passed[g, seat]
        sets[0] = hands[g, seat]
        sets[1] = selected[g]
        sets[2] = pl
        sets[3] = ps
        sets[4] = received[g, seat]
        for i in range(4):
            r = (seat + i) & 3
            sets[5 + i] = trick_bits[g, r]
            sets[9 + i] = taken[g, r]
            sets[13 + i] = _U0
        off = _OFFSETS[deal_index[g] % 4]
        if off != 0:
            sets[13 + off] = ps & ~pl
        for j in range(17):
            m = sets[j]
            while m != _U0:
                row[52 * j + lowest_bit(m)] = 1.0
                m &= m - _U1
        tn = trick_no[g]
        if tn > 0:
            row[o_tl + ((leader[g] - seat) & 3)] = 1.0
        for i in range(4):
            r = (seat + i) & 3
            v = voids[g, r]
            for b in range(4):
                row[o_voids + 4 * i + b] = (v >> b) & 1
            t = taken[g, r]
            row[o_points + i] = card_points(rt, np.int64(t) & rt[R_POINT_CARDS]) / 26.0
            row[o_totals + i] = min(max(totals[g, r] / 100.0, -10.0), 10.0)
            row[o_left + i] = popcount(hands[g, r]) / 13.0
        row[o_pd + deal_index[g] % 4] = 1.0
        ph = phase[g]
        row[o_phase + (0 if ph == PASS else 4 if ph == PLAY else 5)] = 1.0
        row[o_tn] = tn / 13.0
        row[o_hb] = 1.0 if hearts_broken[g] else 0.0
        for b in range(4):
            row[o_ls + b] = (led_suits[g] >> b) & 1
        for j in range(block.shape[0]):
            row[o_cp + j] = block[j]
        row[o_dn] = min(deal_index[g] / 10.0, bound)
        # the action mask
        if ph == PASS:
            mask = hands[g, seat] & ~selected[g]
        elif ph == PLAY:
            mask = game_legal(st, g)
        else:
            mask = _U0
        mrow = masks[gi]
        for j in range(masks.shape[1]):
            mrow[j] = 0
        while mask != _U0:
            mrow[lowest_bit(mask)] = 1
            mask &= mask - _U1
