"""What one seat knows: its information set, the only input bots, codecs and the RL env read.

:func:`seat_view` copies out of a :class:`~moonshot.engine.Game` exactly what ``seat`` may know:
its own hand, the public play, its own passes, what it was passed, visible charges and
exposures, hands revealed by claims, and inferences anyone could draw (voids shown). It never
holds another seat's hidden cards; ``known_cards`` is the set of other seats' cards this seat
can place with certainty (cards it passed to them, revealed charges, exposures, claims).
"""

from __future__ import annotations

from dataclasses import dataclass

from moonshot.actions import Action
from moonshot.cards import ALL_CARDS, CardSet
from moonshot.engine import Game, Phase
from moonshot.events import TrickEnded
from moonshot.rules import PassDirection, Rules


@dataclass(frozen=True, slots=True)
class OpenClaim:
    """A claim still open: who made it and which of the other seats have accepted it so far."""

    claimer: int
    accepted: int  # seat mask of the others that accepted (never the claimer's own bit)

    def has_accepted(self, seat: int) -> bool:
        return bool(self.accepted >> seat & 1)

    @property
    def waiting_on(self) -> tuple[int, ...]:
        """The other seats that have not accepted yet (all three must, for the claim to succeed)."""
        return tuple(s for s in range(4) if s != self.claimer and not self.accepted >> s & 1)


@dataclass(frozen=True, slots=True)
class SeatView:
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
    voids: tuple[int, int, int, int]  # 4-bit suit masks each seat has shown void in
    taken: tuple[CardSet, CardSet, CardSet, CardSet]  # cards each seat took (public)
    tricks_won: tuple[int, int, int, int]
    points: tuple[int, int, int, int]  # raw points taken this deal
    totals: tuple[int, int, int, int]
    charged: tuple[CardSet, CardSet, CardSet, CardSet]  # charges I can see
    exposed: tuple[CardSet, CardSet, CardSet, CardSet]
    revealed: tuple[CardSet, CardSet, CardSet, CardSet]  # hands shown by claims (as shown)
    known_cards: tuple[CardSet, CardSet, CardSet, CardSet]  # cards I know each other seat holds now
    # the claim play waits on (ClaimFlow.BLOCKING); always None under concurrent claims
    claimer: int | None
    claims: tuple[OpenClaim, ...]  # every open claim, in seat order (both flows); hands in ``revealed``
    legal: tuple[Action, ...]  # my legal actions now (empty when not my move)
    legal_plays: CardSet

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


def seat_view(game: Game, seat: int, with_legal: bool = True) -> SeatView:
    """The information set of ``seat`` in ``game`` now."""
    blind = game.rules.charging is not None and game.rules.charging.blind
    charged = list(game.charged)
    if blind and game.phase is Phase.CHARGE:
        # blind charges stay hidden from the others until the charging round ends
        charged = [c if s == seat else 0 for s, c in enumerate(charged)]
    d = game.direction
    pass_to = None if d in (PassDirection.HOLD, PassDirection.KEEPER) else (seat + d.offset) % 4
    in_play = game.played
    known = [0, 0, 0, 0]
    for s in range(4):
        if s == seat:
            continue
        k = charged[s] | game.exposed[s] | game.revealed[s]
        if pass_to == s and game.received[s] is not None:  # delivered only once all four passed
            k |= game.passed[seat] or 0
        known[s] = k & ~in_play
    legal = tuple(game.legal_actions(seat)) if with_legal else ()
    return SeatView(
        seat=seat,
        rules=game.rules,
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
        trick=tuple(zip(game.trick_seats, game.trick_cards)),
        tricks=tuple(game.tricks),
        played=in_play,
        led_suits=game.led_suits,
        hearts_broken=game.hearts_broken,
        voids=(game.voids[0], game.voids[1], game.voids[2], game.voids[3]),
        taken=(game.taken[0], game.taken[1], game.taken[2], game.taken[3]),
        tricks_won=(game.tricks_won[0], game.tricks_won[1], game.tricks_won[2], game.tricks_won[3]),
        points=tuple(game.deal_points_so_far()),  # type: ignore[arg-type]
        totals=(game.totals[0], game.totals[1], game.totals[2], game.totals[3]),
        charged=(charged[0], charged[1], charged[2], charged[3]),
        exposed=(game.exposed[0], game.exposed[1], game.exposed[2], game.exposed[3]),
        revealed=(game.revealed[0], game.revealed[1], game.revealed[2], game.revealed[3]),
        known_cards=(known[0], known[1], known[2], known[3]),
        claimer=game.claimer,
        claims=tuple(OpenClaim(c, game.claim_accepts[c]) for c in game.open_claims()),
        legal=legal,
        legal_plays=game.legal_play_mask(seat),
    )


__all__ = ["OpenClaim", "SeatView", "seat_view"]
