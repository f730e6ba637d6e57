"""The observation encoder: one seat's information set as a flat ``float32`` vector with named slices.

Everything here is computed from :func:`moonshot.core.views.seat_view` (the seat's information set), so an
observation can never hold another seat's hidden cards. Seats are *relative*: index ``r`` of every
per-seat block is the seat ``(me + r) % 4`` (0 = me, 1 = my left / next to play after me, 2 = across,
3 = my right). Cards are numbered as in :mod:`moonshot.core.cards` (``suit * 13 + rank``, clubs 0..12,
diamonds 13..25, hearts 26..38, spades 39..51; rank 0 = two .. 12 = ace).

The layout (see :data:`OBSERVATION_SLICES` for the exact offsets; ``docs/rl.md`` has the table):

====================  =====  ==================================================================
name                  size   meaning
====================  =====  ==================================================================
``hand``              52     cards I hold now
``selected``          52     cards already chosen in the current multi-step pass/charge/expose
``played``            52     every card played this deal (completed tricks and the current trick)
``passed``            52     the cards I passed this deal
``received``          52     the cards I was passed (known once every seat has passed)
``trick``             4x52   the current trick: block ``r`` holds the card relative seat ``r`` played
``taken``             4x52   the cards each relative seat has taken this deal (public)
``known``             4x52   cards I can place in another seat's hand (what I passed it, visible
                             charges, exposures, claims); block 0 is always zero
``trick_leader``      4      one-hot: the relative seat that led the current trick
``voids``             4x4    suits (C, D, H, S) each relative seat has shown void in
``points``            4      raw points each relative seat has taken this deal / 26
``totals``            4      game totals / 100 (clipped to [-10, 10])
``cards_left``        4      cards each relative seat holds / 13
``pass_direction``    5      one-hot: left, right, across, hold, keeper
``charged``           4x4    charged cards (QS, AH, JD, TC) per relative seat, as far as I can see
``exposed``           4x4    exposed cards (QS, AH, JD, TC) per relative seat
``phase``             6      one-hot: pass, pile, charge, expose, play, over
``trick_no``          1      trick number / 13 (0 before play)
``hearts_broken``     1      1 once hearts are broken
``led_suits``         4      suits already led in completed tricks
``card_points``       52     points each card carries in this deal's scoring / 13 (may be negative)
``deal_kind``         8      one-hot: the deal's kind (Kierki contracts 1..7; 0 elsewhere)
``variant``           11     one-hot: the named variant (sorted names, see :data:`VARIANT_NAMES`)
``rule_flags``        8      2C leads, hearts must be broken, QS breaks hearts, nines, charging,
                             exposure, negative scores, fixed number of deals
``deal_no``           1      deal index / 10
====================  =====  ==================================================================
"""

from __future__ import annotations

import numpy as np

from moonshot.core.cards import ACE_HEARTS, JACK_DIAMONDS, QUEEN_SPADES, TEN_CLUBS
from moonshot.core.engine import Game, Phase
from moonshot.core.rules import EndRule, PassDirection, Rules
from moonshot.core.variants import VARIANTS
from moonshot.core.views import SeatView

N_ACTIONS = 53
DONE = 52  # the "no more cards" action of multi-step charge/expose decisions
DOUBLING_CARDS = (QUEEN_SPADES, ACE_HEARTS, JACK_DIAMONDS, TEN_CLUBS)
VARIANT_NAMES = tuple(sorted(VARIANTS))
PHASES = (Phase.PASS, Phase.PILE, Phase.CHARGE, Phase.EXPOSE, Phase.PLAY, Phase.OVER)
DIRECTIONS = (PassDirection.LEFT, PassDirection.RIGHT, PassDirection.ACROSS, PassDirection.HOLD, PassDirection.KEEPER)

# Card-set slices come first so that one unpackbits call fills them all.
CARD_SET_LAYOUT: tuple[tuple[str, int], ...] = (
    ("hand", 1),
    ("selected", 1),
    ("played", 1),
    ("passed", 1),
    ("received", 1),
    ("trick", 4),
    ("taken", 4),
    ("known", 4),
)
N_CARD_SETS = sum(n for _, n in CARD_SET_LAYOUT)
OTHER_LAYOUT: tuple[tuple[str, int], ...] = (
    ("trick_leader", 4),
    ("voids", 16),
    ("points", 4),
    ("totals", 4),
    ("cards_left", 4),
    ("pass_direction", 5),
    ("charged", 16),
    ("exposed", 16),
    ("phase", 6),
    ("trick_no", 1),
    ("hearts_broken", 1),
    ("led_suits", 4),
    ("card_points", 52),
    ("deal_kind", 8),
    ("variant", len(VARIANT_NAMES)),
    ("rule_flags", 8),
    ("deal_no", 1),
)


def _build_slices() -> dict[str, slice]:
    out: dict[str, slice] = {}
    pos = 0
    for name, n in CARD_SET_LAYOUT:
        out[name] = slice(pos, pos + 52 * n)
        pos += 52 * n
    for name, n in OTHER_LAYOUT:
        out[name] = slice(pos, pos + n)
        pos += n
    return out


OBSERVATION_SLICES: dict[str, slice] = _build_slices()
OBS_SIZE = max(s.stop for s in OBSERVATION_SLICES.values())
CARD_SET_SLICES = tuple(name for name, _ in CARD_SET_LAYOUT)
"""Slices whose entries are cards (bit ``c`` of a 52-block is card ``c``)."""

_O = {name: OBSERVATION_SLICES[name].start for name, _ in OTHER_LAYOUT}
_CARDS_END = 52 * N_CARD_SETS


def unpack_card_sets(masks: np.ndarray) -> np.ndarray:
    """``(..., k)`` uint64 card masks -> ``(..., k*52)`` float32 0/1 (bit ``c`` -> entry ``c``)."""
    m = np.ascontiguousarray(masks, dtype=np.uint64)
    bits = np.unpackbits(m.view(np.uint8).reshape(*m.shape, 8), axis=-1, bitorder="little")
    return bits[..., :52].reshape(*m.shape[:-1], m.shape[-1] * 52).astype(np.float32)


_BLOCKS: dict[tuple[int, int], tuple[Rules, np.ndarray]] = {}
_GROUPS: dict[tuple[int, int], tuple[Rules, tuple[tuple[int, int], ...]]] = {}


def rules_block(rules: Rules, kind: int) -> np.ndarray:
    """The per-(rules, deal kind) constant part: card points, deal kind, variant and rule flags."""
    # keyed by identity: hashing a Rules value (every field) costs more than building the block
    hit = _BLOCKS.get((id(rules), kind))
    if hit is not None and hit[0] is rules:
        return hit[1]
    block = _rules_block(rules, kind)
    if len(_BLOCKS) > 1024:
        _BLOCKS.clear()
    _BLOCKS[(id(rules), kind)] = (rules, block)
    return block


def _rules_block(rules: Rules, kind: int) -> np.ndarray:
    out = np.zeros(OBS_SIZE - _O["card_points"], dtype=np.float32)
    base = _O["card_points"]
    sc = rules.scoring_for(kind)
    out[0:52] = np.asarray(sc.card_points, dtype=np.float32) / 13.0
    out[_O["deal_kind"] - base + min(max(kind, 0), 7)] = 1.0
    if rules.name in VARIANT_NAMES:
        out[_O["variant"] - base + VARIANT_NAMES.index(rules.name)] = 1.0
    flags = (
        rules.two_of_clubs_leads,
        rules.hearts_must_be_broken,
        rules.queen_breaks_hearts,
        rules.nines,
        rules.charging is not None,
        rules.exposable != 0,
        rules.negative_scores,
        rules.end is EndRule.DEALS,
    )
    f0 = _O["rule_flags"] - base
    for i, flag in enumerate(flags):
        out[f0 + i] = float(flag)
    out.setflags(write=False)
    return out


def encode(view: SeatView, selected: int = 0, out: np.ndarray | None = None) -> np.ndarray:
    """The observation of ``view.seat``; ``selected`` is the card set chosen so far in a multi-step decision."""
    me = view.seat
    rel = [(me + r) % 4 for r in range(4)]
    masks = [view.hand, selected, view.played, view.passed or 0, view.received or 0]
    trick = [0, 0, 0, 0]
    for s, c in view.trick:
        trick[(s - me) % 4] = 1 << c
    masks += trick
    masks += [view.taken[s] for s in rel]
    masks += [0] + [view.known_cards[s] for s in rel[1:]]
    obs = np.zeros(OBS_SIZE, dtype=np.float32) if out is None else out
    obs[:_CARDS_END] = unpack_card_sets(np.array(masks, dtype=np.uint64))
    obs[_CARDS_END:] = 0.0
    o = _O
    if view.trick_no:
        obs[o["trick_leader"] + (view.leader - me) % 4] = 1.0
    left = view.cards_left
    for r, s in enumerate(rel):
        v = view.voids[s]
        for suit in range(4):
            if v >> suit & 1:
                obs[o["voids"] + 4 * r + suit] = 1.0
        obs[o["points"] + r] = view.points[s] / 26.0
        obs[o["totals"] + r] = min(10.0, max(-10.0, view.totals[s] / 100.0))
        obs[o["cards_left"] + r] = left[s] / 13.0
        ch, ex = view.charged[s], view.exposed[s]
        if ch or ex:
            for i, c in enumerate(DOUBLING_CARDS):
                if ch >> c & 1:
                    obs[o["charged"] + 4 * r + i] = 1.0
                if ex >> c & 1:
                    obs[o["exposed"] + 4 * r + i] = 1.0
    obs[o["pass_direction"] + DIRECTIONS.index(view.direction)] = 1.0
    obs[o["phase"] + PHASES.index(view.phase)] = 1.0
    obs[o["trick_no"]] = view.trick_no / 13.0
    obs[o["hearts_broken"]] = float(view.hearts_broken)
    for suit in range(4):
        if view.led_suits >> suit & 1:
            obs[o["led_suits"] + suit] = 1.0
    obs[o["card_points"] :] = rules_block(view.rules, view.deal_kind)
    obs[o["deal_no"]] = view.deal / 10.0
    return obs


def _point_groups(rules: Rules, kind: int) -> tuple[tuple[int, int], ...]:
    """(value, card mask) pairs of a deal kind's card points, so a seat's points are a few popcounts."""
    hit = _GROUPS.get((id(rules), kind))
    if hit is not None and hit[0] is rules:
        return hit[1]
    by_value: dict[int, int] = {}
    for c, p in enumerate(rules.scoring_for(kind).card_points):
        if p:
            by_value[p] = by_value.get(p, 0) | 1 << c
    groups = tuple(by_value.items())
    if len(_GROUPS) > 1024:
        _GROUPS.clear()
    _GROUPS[(id(rules), kind)] = (rules, groups)
    return groups


_ZEROS_OTHER = [0.0] * (_O["card_points"] - _CARDS_END)
_OTHER = {name: _O[name] - _CARDS_END for name, _ in OTHER_LAYOUT}
_PHASE_INDEX = {p: i for i, p in enumerate(PHASES)}
_DIRECTION_INDEX = {d: i for i, d in enumerate(DIRECTIONS)}


def encode_game(game: Game, seat: int, selected: int = 0) -> np.ndarray:
    """:func:`encode` of ``seat_view(game, seat)``, computed straight from the game (the env's fast path).

    It reads exactly what :func:`moonshot.core.views.seat_view` exposes; the test suite checks that both
    give the same vector in every variant and phase.
    """
    masks, o = _parts(game, seat, selected)
    obs = np.empty(OBS_SIZE, dtype=np.float32)
    raw = np.array(masks, dtype=np.uint64).view(np.uint8).reshape(N_CARD_SETS, 8)
    bits = np.unpackbits(raw, axis=1, bitorder="little")
    obs[:_CARDS_END].reshape(N_CARD_SETS, 52)[:] = bits[:, :52]
    obs[_CARDS_END : _O["card_points"]] = o
    obs[_O["card_points"] :] = rules_block(game.rules, game.deal_kind)
    obs[_O["deal_no"]] = game.deal_index / 10.0
    return obs


class IncrementalEncoder:
    """:func:`encode_game` for one seat across the steps of one env, updating only what changed.

    Between two decisions of a seat only a few cards move, so instead of unpacking every card set
    again it flips the entries of the cards whose bits changed (same result, tested equal).
    """

    def __init__(self) -> None:
        self._obs: np.ndarray | None = None
        self._masks: list[int] = []
        self._other: list[float] = []
        self._block: np.ndarray | None = None
        self._deal = -1

    def reset(self) -> None:
        self._obs = None

    def encode(self, game: Game, seat: int, selected: int = 0) -> np.ndarray:
        masks, o = _parts(game, seat, selected)
        obs = self._obs
        if obs is None:
            obs = self._obs = encode_game(game, seat, selected)
            self._masks, self._other = masks, o
            self._block, self._deal = rules_block(game.rules, game.deal_kind), game.deal_index
            return obs.copy()
        base = 0
        for new, before in zip(masks, self._masks):
            if new != before:
                diff = new ^ before
                while diff:
                    low = diff & -diff
                    obs[base + low.bit_length() - 1] = 1.0 if new & low else 0.0
                    diff ^= low
            base += 52
        self._masks = masks
        if o != self._other:
            obs[_CARDS_END : _O["card_points"]] = o
            self._other = o
        block = rules_block(game.rules, game.deal_kind)
        if block is not self._block or game.deal_index != self._deal:
            obs[_O["card_points"] :] = block
            obs[_O["deal_no"]] = game.deal_index / 10.0
            self._block, self._deal = block, game.deal_index
        return obs.copy()


_BITS4 = [[float(v >> i & 1) for i in range(4)] for v in range(16)]
_I_LEADER, _I_VOIDS, _I_POINTS = _OTHER["trick_leader"], _OTHER["voids"], _OTHER["points"]
_I_TOTALS, _I_LEFT, _I_CHARGED, _I_EXPOSED = (
    _OTHER["totals"],
    _OTHER["cards_left"],
    _OTHER["charged"],
    _OTHER["exposed"],
)
_I_DIRECTION, _I_PHASE, _I_TRICK_NO = _OTHER["pass_direction"], _OTHER["phase"], _OTHER["trick_no"]
_I_BROKEN, _I_LED = _OTHER["hearts_broken"], _OTHER["led_suits"]
_SCORING: dict[tuple[int, int], tuple[Rules, tuple[tuple[int, int], ...], int, tuple[tuple[int, int], ...]]] = {}


def _scoring_parts(rules: Rules, kind: int) -> tuple[tuple[tuple[int, int], ...], int, tuple[tuple[int, int], ...]]:
    hit = _SCORING.get((id(rules), kind))
    if hit is None or hit[0] is not rules:
        sc = rules.scoring_for(kind)
        hit = (rules, _point_groups(rules, kind), sc.per_trick, sc.trick_number_points)
        if len(_SCORING) > 1024:
            _SCORING.clear()
        _SCORING[(id(rules), kind)] = hit
    return hit[1], hit[2], hit[3]


def _parts(game: Game, seat: int, selected: int) -> tuple[list[int], list[float]]:
    """The card sets (in :data:`CARD_SET_LAYOUT` order) and the small features of the observation."""
    me = seat
    rules = game.rules
    rel = (me, (me + 1) & 3, (me + 2) & 3, (me + 3) & 3)
    phase = game.phase
    played = game.played
    passed = game.passed[me] or 0
    charged = game.charged
    if rules.charging is not None and rules.charging.blind and phase is Phase.CHARGE:
        charged = [c if s == me else 0 for s, c in enumerate(charged)]
    d = game.direction
    pass_to = -1 if d is PassDirection.HOLD or d is PassDirection.KEEPER else (me + d.offset) & 3
    exposed, revealed, taken, received = game.exposed, game.revealed, game.taken, game.received
    trick = [0, 0, 0, 0]
    for s, c in zip(game.trick_seats, game.trick_cards):
        trick[(s - me) & 3] = 1 << c
    r1, r2, r3 = rel[1], rel[2], rel[3]
    masks = [game.hands[me], selected, played, passed, received[me] or 0, *trick]
    masks += (taken[me], taken[r1], taken[r2], taken[r3], 0)
    for s in rel[1:]:
        k = charged[s] | exposed[s] | revealed[s]
        if s == pass_to and received[s] is not None:  # delivered once all four have passed
            k |= passed
        masks.append(k & ~played)
    o = _ZEROS_OTHER.copy()
    if game.trick_no:
        o[_I_LEADER + ((game.leader - me) & 3)] = 1.0
    groups, per_trick, numbered = _scoring_parts(rules, game.deal_kind)
    if phase is Phase.PASS or phase is Phase.PILE:
        left = [13, 13, 13, 13]
    elif phase is Phase.OVER:
        left = [13, 13, 13, 13]
        for done in game.tricks:
            for p in done.seats:
                left[p] -= 1
        for p in game.trick_seats:
            left[p] -= 1
    else:
        hands = game.hands
        left = [hands[0].bit_count(), hands[1].bit_count(), hands[2].bit_count(), hands[3].bit_count()]
    voids, totals, tricks_won, numbers_won = game.voids, game.totals, game.tricks_won, game.trick_numbers_won
    for r, s in enumerate(rel):
        v = voids[s]
        if v:
            o[_I_VOIDS + 4 * r : _I_VOIDS + 4 * r + 4] = _BITS4[v]
        t = taken[s]
        pts = per_trick * tricks_won[s]
        if t:
            for value, m in groups:
                if t & m:
                    pts += value * (t & m).bit_count()
        if numbered:
            won = numbers_won[s]
            for number, p in numbered:  # Kierki's 7th and last trick
                if won >> number & 1:
                    pts += p
        if pts:
            o[_I_POINTS + r] = pts / 26.0
        total = totals[s]
        if total:
            o[_I_TOTALS + r] = min(10.0, max(-10.0, total / 100.0))
        o[_I_LEFT + r] = left[s] / 13.0
        ch, ex = charged[s], exposed[s]
        if ch or ex:
            for i, c in enumerate(DOUBLING_CARDS):
                if ch >> c & 1:
                    o[_I_CHARGED + 4 * r + i] = 1.0
                if ex >> c & 1:
                    o[_I_EXPOSED + 4 * r + i] = 1.0
    o[_I_DIRECTION + _DIRECTION_INDEX[d]] = 1.0
    o[_I_PHASE + _PHASE_INDEX[phase]] = 1.0
    o[_I_TRICK_NO] = game.trick_no / 13.0
    if game.hearts_broken:
        o[_I_BROKEN] = 1.0
    if game.led_suits:
        o[_I_LED : _I_LED + 4] = _BITS4[game.led_suits]
    return masks, o


_MASK_BYTES = [bytes((v >> b) & 1 for b in range(13)) for v in range(8192)]
_DONE_BYTES = (b"\x00", b"\x01")


def mask_array(mask: int) -> np.ndarray:
    """A 53-bit legal-action int (bit 52 = DONE) as an ``int8`` array of 0/1."""
    t = _MASK_BYTES
    raw = t[mask & 8191] + t[mask >> 13 & 8191] + t[mask >> 26 & 8191] + t[mask >> 39 & 8191]
    return np.frombuffer(bytearray(raw + _DONE_BYTES[mask >> 52 & 1]), dtype=np.int8)


__all__ = [
    "CARD_SET_SLICES",
    "DONE",
    "DOUBLING_CARDS",
    "N_ACTIONS",
    "OBSERVATION_SLICES",
    "OBS_SIZE",
    "VARIANT_NAMES",
    "IncrementalEncoder",
    "encode",
    "encode_game",
    "mask_array",
    "rules_block",
    "unpack_card_sets",
]
