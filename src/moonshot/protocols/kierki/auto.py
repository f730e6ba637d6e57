"""The Kierki automatic player: what a seat can know from the wire, and which card it plays.

Pure (no sockets, clocks or global RNG). :class:`ClientState` follows one seat through the
server's messages (``DEAL``, ``TRICK``, ``TAKEN``, ``SCORE``, ``TOTAL``): its hand, the table,
the cards gone, which seats showed a void, the tricks taken. :func:`choose_card` is the heuristic;
:class:`KierkiBot` runs the same heuristic on the engine (``moonshot.bots.base.Bot``), so the
numbers measured offline are the numbers of the real client.

The heuristic knows the contract. For each legal card it estimates the chance the card wins the
trick and what the trick would then cost under this contract (points on the table, the card
itself, what the players still to play may throw on it, 1 per trick in "no tricks" and the robber,
10 for the 7th and the last trick), and subtracts what getting rid of the card is worth (a
penalty card we may be stuck with later, a high card that may win a costly trick later). It plays
the cheapest card. So in "no tricks" it ducks and sheds high cards, in "no hearts" it throws hearts
on others' tricks and avoids heart tricks, in "no queens", "no kings/jacks" and "no KH" it dumps
those cards when it cannot win and keeps clear of tricks they may land in, in "7th and last" it
throws its high cards on the harmless tricks and ducks the 7th and 13th, and in the robber all of
those costs add up.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from moonshot.actions import Action, Play
from moonshot.cards import ALL_CARDS, SUIT_MASKS, Card, CardSet, card_list
from moonshot.protocols.kierki.codec import Deal, Message, Score, Taken, Total, Trick
from moonshot.rules import Scoring
from moonshot.variants import KIERKI
from moonshot.views import SeatView

ROBBER = 7


def scoring_for(kind: int) -> Scoring:
    """The contract's scoring table (an unknown kind is played as the robber: every point counts)."""
    return KIERKI.scoring[kind if 1 <= kind <= 7 else ROBBER]


def legal_plays(hand: CardSet, table: tuple[tuple[int, Card], ...]) -> CardSet:
    """Kierki's only rule: follow the led suit if you can; the leader plays anything."""
    if not table:
        return hand
    follow = hand & SUIT_MASKS[table[0][1] // 13]
    return follow or hand


@dataclass(frozen=True, slots=True)
class KierkiView:
    """What the seat to play knows: enough for the heuristic, built from the wire or the engine."""

    seat: int
    kind: int
    trick_no: int
    hand: CardSet
    trick: tuple[tuple[int, Card], ...]  # (seat, card) in play order
    played: CardSet  # every card played this deal, the current trick included
    voids: tuple[int, int, int, int]  # 4-bit suit masks each seat is known to lack

    @property
    def legal(self) -> CardSet:
        return legal_plays(self.hand, self.trick)


def _above(c: Card) -> CardSet:
    """Cards of c's suit ranked above c."""
    return SUIT_MASKS[c // 13] & ~((2 << c) - 1)


def _below(c: Card) -> CardSet:
    return SUIT_MASKS[c // 13] & ((1 << c) - 1)


def choose_card(view: KierkiView, exclude: CardSet = 0) -> Card:
    """The card to play (one of ``view.legal``, avoiding ``exclude`` while something else is legal)."""
    legal = view.legal & ~exclude or view.legal or view.hand & ~exclude or view.hand
    options = card_list(legal)
    if len(options) == 1:
        return options[0]
    sc = scoring_for(view.kind)
    pts = sc.card_points
    numbered = dict(sc.trick_number_points)
    unseen = ALL_CARDS & ~view.hand & ~view.played
    tricks_left = 14 - view.trick_no
    future_points = (
        sc.per_trick * tricks_left
        + sum(pts[c] for c in card_list(unseen | view.hand))
        + sum(p for n, p in numbered.items() if n >= view.trick_no)
    )
    avg_trick = future_points / max(tricks_left, 1)
    unseen_pen = sorted((pts[c] for c in card_list(unseen) if pts[c]), reverse=True)
    top_dump = unseen_pen[0] if unseen_pen else 0

    table = view.trick
    followers = [(view.seat + i) % 4 for i in range(1, 4 - len(table))]
    if table:
        led = table[0][1] // 13
        best = max(c for _, c in table if c // 13 == led)
    else:
        led, best = -1, -1
    table_points = sum(pts[c] for _, c in table)
    here = sc.per_trick + numbered.get(view.trick_no, 0)

    def win_chance(c: Card) -> float:
        suit = c // 13
        if table and (suit != led or c < best):
            return 0.0
        higher = (unseen & _above(c)).bit_count()
        lower = (unseen & _below(c)).bit_count()
        able = [s for s in followers if not view.voids[s] >> suit & 1]
        if not able or higher == 0:
            return 1.0
        share = len(able) / 3  # unseen cards are spread over the three others
        nobody_higher = (1 - share) ** higher
        # a follower holding a higher card but also a lower one can duck under us
        duck = 0.5 * lower / (higher + lower)
        return nobody_higher + (1 - nobody_higher) * duck

    def trick_cost(c: Card) -> float:
        suit = c // 13 if not table else led
        cost: float = here + table_points + pts[c]
        suit_unseen = card_list(unseen & SUIT_MASKS[suit])
        follow_avg = sum(pts[x] for x in suit_unseen) / len(suit_unseen) if suit_unseen else 0.0
        for s in followers:
            if view.voids[s] >> suit & 1 or not suit_unseen:
                cost += 0.8 * top_dump
            elif len(suit_unseen) < 2 * len(followers):
                cost += 0.3 * top_dump + 0.7 * follow_avg
            else:
                cost += follow_avg + 0.05 * top_dump
        return cost

    def danger(c: Card) -> float:
        """What keeping c costs later: taking it ourselves, or winning a trick with it."""
        higher = (unseen & _above(c)).bit_count()
        lower = (unseen & _below(c)).bit_count()
        stuck = 0.9 if higher == 0 else max(0.1, 0.5**higher)
        wins = lower / (higher + lower) if higher + lower else 0.7
        return pts[c] * stuck + wins * avg_trick

    def score(c: Card) -> tuple[float, int]:
        p = win_chance(c)
        return (p * trick_cost(c) - 0.8 * danger(c), -(c % 13))

    return min(options, key=score)


# ----------------------------------------------------------------------------- the wire side
@dataclass
class ClientState:
    """One seat's knowledge, updated message by message (a reconnect's DEAL + TAKENs rebuild it)."""

    seat: int
    kind: int = 0
    leader: int = 0
    hand: CardSet = 0
    dealt: CardSet = 0
    trick_no: int = 0
    table: tuple[tuple[int, Card], ...] = ()
    gone: CardSet = 0  # cards of completed tricks
    voids: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    tricks: list[Taken] = field(default_factory=list)  # completed tricks of this deal
    next_leader: int = 0
    prompt: int | None = None  # trick number of an unanswered TRICK
    scores: tuple[int, int, int, int] | None = None
    totals: tuple[int, int, int, int] | None = None
    deals_seen: int = 0
    finished: bool = False  # the last thing heard ended a deal (SCORE/TOTAL): a close now is the game's end

    def on_message(self, msg: Message) -> None:
        if isinstance(msg, Deal):
            self.kind, self.leader = msg.kind, msg.leader
            self.hand = self.dealt = sum(1 << c for c in msg.cards)
            self.trick_no, self.table, self.gone = 1, (), 0
            self.voids = [0, 0, 0, 0]
            self.tricks = []
            self.next_leader = msg.leader
            self.prompt = None
            self.deals_seen += 1
            self.finished = False
        elif isinstance(msg, Trick):
            first = (self.seat - len(msg.cards)) % 4
            self.table = tuple(((first + i) % 4, c) for i, c in enumerate(msg.cards))
            self._note_voids(self.table)
            self.trick_no = msg.number
            self.prompt = msg.number
            self.finished = False
        elif isinstance(msg, Taken):
            first = self.next_leader
            mine = [i for i, c in enumerate(msg.cards) if self.hand >> c & 1 or self.dealt >> c & 1]
            if mine:
                first = (self.seat - mine[0]) % 4
            self._note_voids(tuple(((first + i) % 4, c) for i, c in enumerate(msg.cards)))
            for c in msg.cards:
                self.gone |= 1 << c
            self.hand &= ~self.gone
            self.tricks.append(msg)
            self.next_leader = msg.winner
            self.trick_no = msg.number + 1
            self.table = ()
            if self.prompt is not None and self.prompt <= msg.number:
                self.prompt = None
            self.finished = False
        elif isinstance(msg, Score):
            self.scores = msg.points
            self.finished = True
            self.prompt = None
        elif isinstance(msg, Total):
            self.totals = msg.points
            self.finished = True
            self.prompt = None

    def _note_voids(self, plays: tuple[tuple[int, Card], ...]) -> None:
        if not plays:
            return
        led = plays[0][1] // 13
        for s, c in plays[1:]:
            if c // 13 != led:
                self.voids[s] |= 1 << led

    def played(self) -> CardSet:
        out = self.gone
        for _, c in self.table:
            out |= 1 << c
        return out

    def view(self) -> KierkiView:
        v = self.voids
        return KierkiView(
            self.seat, self.kind, self.trick_no, self.hand, self.table, self.played(), (v[0], v[1], v[2], v[3])
        )

    def my_tricks(self) -> list[Taken]:
        return [t for t in self.tricks if t.winner == self.seat]


# ----------------------------------------------------------------------------- the engine side
def view_from_seat(sv: SeatView) -> KierkiView:
    return KierkiView(sv.seat, sv.deal_kind, sv.trick_no, sv.hand, sv.trick, sv.played, sv.voids)


class KierkiBot:
    """The automatic client's heuristic as a :class:`moonshot.bots.base.Bot` (for offline play)."""

    name = "kierki"

    def act(self, view: SeatView, rng: random.Random) -> Action:
        return Play.of(view.seat, choose_card(view_from_seat(view)))


__all__ = ["ClientState", "KierkiBot", "KierkiView", "choose_card", "legal_plays", "scoring_for", "view_from_seat"]
