"""What one seat knows: its information set, the only input bots, codecs and the RL env read.

:func:`seat_view` copies out of a :class:`~moonshot.core.engine.Game` exactly what ``seat`` may know:
its own hand, the public play, its own passes, what it was passed, visible charges and
exposures, hands revealed by claims, and inferences anyone could draw (voids shown). It never
holds another seat's hidden cards; ``known_cards`` is the set of other seats' cards this seat
can place with certainty (cards it passed to them, revealed charges, exposures, claims).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from itertools import combinations
from typing import Any, Final

from moonshot.core.actions import Action, Charge, Expose, Pass, Play
from moonshot.core.cards import ALL_CARDS, CardSet, card_list
from moonshot.core.engine import Game, Phase
from moonshot.core.events import TrickEnded
from moonshot.core.rules import PassDirection, Rules

try:
    from mypy_extensions import mypyc_attr
except ImportError:  # pragma: no cover - without mypy nothing is compiled, and the mark has no use

    def mypyc_attr(*attrs: str, **kwattrs: object) -> Any:  # type: ignore[misc]
        return lambda cls: cls


@dataclass(frozen=True, slots=True)
class OpenClaim:
    """A claim still open: who made it and which of the other seats have accepted it so far."""

    claimer: int
    accepted: int  # seat mask of the others that accepted (never the claimer's own bit)

    def __reduce__(self) -> tuple[object, ...]:
        # compiled with mypyc, a frozen dataclass pickles only through its constructor
        return (OpenClaim, (self.claimer, self.accepted))

    def has_accepted(self, seat: int) -> bool:
        return bool(self.accepted >> seat & 1)

    @property
    def waiting_on(self) -> tuple[int, ...]:
        """The other seats that have not accepted yet (all three must, for the claim to succeed)."""
        return tuple(s for s in range(4) if s != self.claimer and not self.accepted >> s & 1)


# what a Choices lists: nothing, cards to play (+ claim answers), k-card passes, charge or expose subsets
NOTHING: Final = 0
PLAYS: Final = 1
PASSES: Final = 2
CHARGES: Final = 3
EXPOSES: Final = 4
LISTED: Final = 5
_PASS: Final = Phase.PASS
_PILE: Final = Phase.PILE
_PLAY: Final = Phase.PLAY
_CHARGE: Final = Phase.CHARGE
_EXPOSE: Final = Phase.EXPOSE
_HOLD: Final = PassDirection.HOLD
_KEEPER: Final = PassDirection.KEEPER

# One entry per seat (N, E, S, W): always four. Typed as a variable-length tuple on purpose:
# compiled with mypyc, a fixed-length tuple type is an unboxed struct, so every ``view.voids[s]``
# with a seat in a variable built a new tuple of all four, and every read from Python code too;
# as plain tuples the views share those ``_Public`` made once per change of the public state.
PerSeat = tuple[int, ...]


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled, it may still be subclassed in Python
class Choices:
    """A seat's legal actions, described compactly and listed only when someone asks.

    Listing every pass (286 three-card combinations) for each decision cost more than the rest
    of a view; most bots never look at the list (they read ``legal_plays`` or the hand). The
    list, when asked for, is exactly :meth:`Game.legal_actions` at the time the view was made,
    in the same order.
    """

    __slots__ = ("_listed", "count", "extras", "kind", "options", "seat")

    def __init__(
        self, seat: int, kind: int, options: CardSet = 0, count: int = 0, extras: tuple[Action, ...] = ()
    ) -> None:
        self.seat = seat
        self.kind = kind
        self.options = options  # PLAYS: the cards; PASSES: the hand; CHARGES/EXPOSES: the cards to choose from
        self.count = count  # PASSES: cards per pass
        self.extras = extras  # PLAYS: claim actions after the plays; LISTED: every action
        self._listed: tuple[Action, ...] | None = extras if kind == LISTED else None

    @staticmethod
    def listed(seat: int, actions: tuple[Action, ...]) -> Choices:
        """Choices given as a list (views built outside the engine: clients, tests)."""
        return Choices(seat, LISTED, extras=actions)

    @property
    def actions(self) -> tuple[Action, ...]:
        out = self._listed
        if out is None:
            out = self._list()
            self._listed = out
        return out

    def _list(self) -> tuple[Action, ...]:
        seat, kind = self.seat, self.kind
        if kind == PLAYS:
            return tuple([Play.of(seat, c) for c in card_list(self.options)]) + self.extras
        if kind == PASSES:
            return tuple(
                [Pass(seat, sum(1 << c for c in combo)) for combo in combinations(card_list(self.options), self.count)]
            )
        cards = card_list(self.options)
        subsets = [sum(1 << c for c in combo) for k in range(len(cards) + 1) for combo in combinations(cards, k)]
        if kind == CHARGES:
            return tuple([Charge(seat, m) for m in subsets])
        if kind == EXPOSES:
            return tuple([Expose(seat, m) for m in subsets])
        return ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Choices) and self.actions == other.actions

    def __hash__(self) -> int:
        return hash(self.actions)

    def __repr__(self) -> str:
        return f"Choices({self.actions!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (Choices.listed, (self.seat, self.actions))


def choices_of(game: Game, seat: int) -> Choices:
    """What :meth:`Game.legal_actions` would list for ``seat`` now, not listed yet."""
    return _choices(game, seat, game.legal_play_mask(seat))


def _choices(game: Game, seat: int, mask: CardSet) -> Choices:
    """:func:`choices_of`, given ``game.legal_play_mask(seat)``."""
    ph = game.phase
    if ph is _PLAY:
        if not game.rules.claims:
            return Choices(seat, PLAYS, mask)
        # claims: the plays come first, then claim, accepts and rejections (as legal_actions lists them)
        extras = tuple([a for a in game.legal_actions(seat) if type(a) is not Play])
        return Choices(seat, PLAYS, mask, extras=extras)
    if ph is _PASS or ph is _PILE:
        if game.passed[seat] is not None:
            return Choices(seat, NOTHING)
        return Choices(seat, PASSES, game.hands[seat], game.rules.pass_count)
    if ph is _CHARGE:
        if seat not in game.to_act():
            return Choices(seat, NOTHING)
        return Choices(seat, CHARGES, game.hands[seat] & game.rules.chargeable & ~game.charged[seat])
    if ph is _EXPOSE:
        if not game.expose_pending >> seat & 1:
            return Choices(seat, NOTHING)
        return Choices(seat, EXPOSES, game.hands[seat] & game.rules.exposable)
    return Choices(seat, NOTHING)


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled, it may still be subclassed in Python
@dataclass(slots=True, init=False)
class SeatView:
    """What ``seat`` knows now: a snapshot, read-only by convention (bots must not change it).

    A dataclass (``==``, ``repr``, ``replace``) with a hand-written ``__init__``: compiled with
    mypyc, a dataclass-generated one stays interpreted (and a frozen one sets every field
    through ``object.__setattr__``), and a view is made for every decision.
    """

    seat: int
    rules: Rules
    phase: Phase
    to_act: tuple[int, ...]
    deal: int  # from 0
    deal_kind: int
    direction: PassDirection
    pass_to: int | None  # seat my pass goes to (None: no pass / the keeper pile)
    hand: CardSet
    dealt: CardSet  # my hand as dealt
    passed: CardSet | None  # what I passed
    received: CardSet | None  # what I was passed
    trick_no: int  # from 1; 0 before play
    leader: int
    trick: tuple[tuple[int, int], ...]  # (seat, card) in play order
    tricks: tuple[TrickEnded, ...]  # completed tricks of this deal
    played: CardSet  # every card played this deal (current trick included)
    led_suits: int  # 4-bit mask of suits already led (completed tricks)
    hearts_broken: bool
    voids: PerSeat  # 4-bit suit masks each seat has shown void in
    taken: PerSeat  # cards each seat took (public)
    tricks_won: PerSeat
    points: PerSeat  # raw points taken this deal
    totals: PerSeat
    charged: PerSeat  # charges I can see
    exposed: PerSeat
    revealed: PerSeat  # hands shown by claims (as shown)
    known_cards: PerSeat  # cards I know each other seat holds now
    # the claim play waits on (ClaimFlow.BLOCKING); always None under concurrent claims
    claimer: int | None
    claims: tuple[OpenClaim, ...]  # every open claim, in seat order (both flows); hands in ``revealed``
    legal_plays: CardSet
    choices: Choices  # my legal actions now, listed on demand as ``legal``

    def __init__(
        self,
        *,
        seat: int,
        rules: Rules,
        phase: Phase,
        to_act: tuple[int, ...],
        deal: int,
        deal_kind: int,
        direction: PassDirection,
        pass_to: int | None,
        hand: CardSet,
        dealt: CardSet,
        passed: CardSet | None,
        received: CardSet | None,
        trick_no: int,
        leader: int,
        trick: tuple[tuple[int, int], ...],
        tricks: tuple[TrickEnded, ...],
        played: CardSet,
        led_suits: int,
        hearts_broken: bool,
        voids: PerSeat,
        taken: PerSeat,
        tricks_won: PerSeat,
        points: PerSeat,
        totals: PerSeat,
        charged: PerSeat,
        exposed: PerSeat,
        revealed: PerSeat,
        known_cards: PerSeat,
        claimer: int | None,
        claims: tuple[OpenClaim, ...],
        legal_plays: CardSet,
        choices: Choices,
    ) -> None:
        self.seat = seat
        self.rules = rules
        self.phase = phase
        self.to_act = to_act
        self.deal = deal
        self.deal_kind = deal_kind
        self.direction = direction
        self.pass_to = pass_to
        self.hand = hand
        self.dealt = dealt
        self.passed = passed
        self.received = received
        self.trick_no = trick_no
        self.leader = leader
        self.trick = trick
        self.tricks = tricks
        self.played = played
        self.led_suits = led_suits
        self.hearts_broken = hearts_broken
        self.voids = voids
        self.taken = taken
        self.tricks_won = tricks_won
        self.points = points
        self.totals = totals
        self.charged = charged
        self.exposed = exposed
        self.revealed = revealed
        self.known_cards = known_cards
        self.claimer = claimer
        self.claims = claims
        self.legal_plays = legal_plays
        self.choices = choices

    def __reduce__(self) -> tuple[object, ...]:
        # compiled with mypyc, the class pickles only through its constructor
        return (_view_from_fields, (tuple([getattr(self, f.name) for f in fields(self)]),))

    @property
    def legal(self) -> tuple[Action, ...]:
        """My legal actions now (empty when not my move), as :meth:`Game.legal_actions` lists them."""
        return self.choices.actions

    @property
    def my_turn(self) -> bool:
        return self.seat in self.to_act

    @property
    def unseen(self) -> CardSet:
        """Cards held by the other three seats (neither mine nor played)."""
        return ALL_CARDS & ~self.hand & ~self.played

    @property
    def trick_cards(self) -> tuple[int, ...]:
        return tuple(c for _, c in self.trick)

    @property
    def cards_left(self) -> tuple[int, int, int, int]:
        """How many cards each seat still holds."""
        out = [13, 13, 13, 13]
        for t in self.tricks:
            for p in t.seats:
                out[p] -= 1
        for p, _ in self.trick:
            out[p] -= 1
        return (out[0], out[1], out[2], out[3])


def _view_from_fields(values: tuple[object, ...]) -> SeatView:
    return SeatView(**{f.name: v for f, v in zip(fields(SeatView), values)})  # type: ignore[arg-type]


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled, it may still be subclassed in Python
class _Public:
    """The parts of a view every seat shares, as tuples: made once each time the game's public
    state changes (a trick ends, a void shows, a charge, an exposure, a claim, a deal ends) and
    shared by the views made until then (``Game.view_cache``), rather than once per view."""

    def __init__(self, game: Game, rare: _Rare) -> None:
        self.tricks = tuple(game.tricks)
        self.voids: PerSeat = tuple(game.voids)
        self.taken: PerSeat = tuple(game.taken)
        self.tricks_won: PerSeat = tuple(game.tricks_won)
        self.points: PerSeat = game.deal_points()
        self.totals = rare.totals
        self.charged = rare.charged
        self.exposed = rare.exposed
        self.revealed = rare.revealed
        self.k0, self.k1, self.k2, self.k3 = rare.k0, rare.k1, rare.k2, rare.k3


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled, it may still be subclassed in Python
class _Rare:
    """The public state that changes a few times a deal at most (totals, charges, exposures,
    hands shown), as tuples: made again only after one of them changed (``Game.view_rare``),
    not after every trick as the rest of :class:`_Public`."""

    def __init__(self, game: Game) -> None:
        self.totals: PerSeat = tuple(game.totals)
        charged, exposed, revealed = game.charged, game.exposed, game.revealed
        self.charged: PerSeat = tuple(charged)
        self.exposed: PerSeat = tuple(exposed)
        self.revealed: PerSeat = tuple(revealed)
        # the cards each seat is known to hold by everyone (charges seen, exposures, hands shown),
        # as plain numbers: every view starts its known_cards from these
        self.k0 = charged[0] | exposed[0] | revealed[0]
        self.k1 = charged[1] | exposed[1] | revealed[1]
        self.k2 = charged[2] | exposed[2] | revealed[2]
        self.k3 = charged[3] | exposed[3] | revealed[3]


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled, it may still be subclassed in Python
class _Known:
    """A seat's last ``known_cards``: the tuple and its numbers (compared without unboxing)."""

    def __init__(self, k0: CardSet, k1: CardSet, k2: CardSet, k3: CardSet) -> None:
        self.k0 = k0
        self.k1 = k1
        self.k2 = k2
        self.k3 = k3
        self.cards: PerSeat = (k0, k1, k2, k3)


# every (seat, card) pair of a trick, made once: a view's ``trick`` is a tuple of these
_PAIRS: Final[list[Any]] = [(s, c) for s in range(4) for c in range(52)]


def _public(game: Game) -> _Public:
    pub = game.view_cache
    if type(pub) is not _Public:  # None: the public state changed since the last view
        rare = game.view_rare
        if type(rare) is not _Rare:  # None: totals, charges, exposures or shown hands changed
            rare = _Rare(game)
            game.view_rare = rare
        pub = _Public(game, rare)
        game.view_cache = pub
    return pub


def seat_view(game: Game, seat: int, with_legal: bool = True) -> SeatView:
    """The information set of ``seat`` in ``game`` now."""
    rules = game.rules
    pub = _public(game)
    charging = rules.charging
    charged = pub.charged
    exposed = pub.exposed
    revealed = pub.revealed
    blind = charging is not None and charging.blind and game.phase is _CHARGE
    if blind:
        # blind charges stay hidden from the others until the charging round ends
        c0, c1, c2, c3 = (
            (charged[0] if seat == 0 else 0),
            (charged[1] if seat == 1 else 0),
            (charged[2] if seat == 2 else 0),
            (charged[3] if seat == 3 else 0),
        )
        k0 = c0 | exposed[0] | revealed[0]
        k1 = c1 | exposed[1] | revealed[1]
        k2 = c2 | exposed[2] | revealed[2]
        k3 = c3 | exposed[3] | revealed[3]
    else:
        k0, k1, k2, k3 = pub.k0, pub.k1, pub.k2, pub.k3
    d = game.direction
    pass_to = None if d is _HOLD or d is _KEEPER else (seat + game.pass_offset) & 3
    in_play = game.played
    if pass_to is not None and game.received[pass_to] is not None:  # delivered only once all four passed
        mine = game.passed[seat] or 0
        if pass_to == 0:
            k0 |= mine
        elif pass_to == 1:
            k1 |= mine
        elif pass_to == 2:
            k2 |= mine
        else:
            k3 |= mine
    gone = ~in_play
    k0 = 0 if seat == 0 else k0 & gone
    k1 = 0 if seat == 1 else k1 & gone
    k2 = 0 if seat == 2 else k2 & gone
    k3 = 0 if seat == 3 else k3 & gone
    # what a seat knows changes seldom (a known card played, a charge, a claim): its last tuple
    # is used again while equal rather than a new one (and its numbers) made for every view
    memo = game.view_memo
    last = memo[seat]
    if type(last) is _Known:
        mine_known: _Known = last
        if mine_known.k0 != k0 or mine_known.k1 != k1 or mine_known.k2 != k2 or mine_known.k3 != k3:
            mine_known = _Known(k0, k1, k2, k3)
            memo[seat] = mine_known
    else:
        mine_known = _Known(k0, k1, k2, k3)
        memo[seat] = mine_known
    known = mine_known.cards
    mask = game.legal_play_mask(seat)
    choices = _choices(game, seat, mask) if with_legal else Choices(seat, NOTHING)
    claims = game.open_claims()
    tc = game.trick_cards
    if tc:
        ts = game.trick_seats
        trick: tuple[tuple[int, int], ...] = tuple([_PAIRS[ts[i] * 52 + tc[i]] for i in range(len(tc))])
    else:
        trick = ()
    return SeatView(
        seat=seat,
        rules=rules,
        phase=game.phase,
        to_act=game.to_act(),
        deal=game.deal_index,
        deal_kind=game.deal_kind,
        direction=d,
        pass_to=pass_to,
        hand=game.hands[seat],
        dealt=game.dealt[seat],
        passed=game.passed[seat],
        received=game.received[seat],
        trick_no=game.trick_no,
        leader=game.leader,
        trick=trick,
        tricks=pub.tricks,
        played=in_play,
        led_suits=game.led_suits,
        hearts_broken=game.hearts_broken,
        voids=pub.voids,
        taken=pub.taken,
        tricks_won=pub.tricks_won,
        points=pub.points,
        totals=pub.totals,
        charged=(c0, c1, c2, c3) if blind else charged,
        exposed=exposed,
        revealed=revealed,
        known_cards=known,
        claimer=game.claimer,
        claims=tuple([OpenClaim(c, game.claim_accepts[c]) for c in claims]) if claims else (),
        legal_plays=mask,
        choices=choices,
    )


__all__ = ["Choices", "OpenClaim", "SeatView", "choices_of", "seat_view"]
