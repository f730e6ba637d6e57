"""The Kierki automatic player: what a seat can know from the wire, and which card it plays.

Pure (no sockets, clocks or global RNG). :class:`ClientState` follows one seat through the
server's messages (``DEAL``, ``TRICK``, ``TAKEN``, ``SCORE``, ``TOTAL``): its hand, the table,
who played which card, the voids shown, the tricks and points taken. :meth:`ClientState.seat_view`
turns that into the same :class:`~moonshot.core.views.SeatView` the engine gives a seat, so the
client plays with moonshot's :class:`~moonshot.bots.heuristic.HeuristicBot`, the bot measured
offline (:func:`choose_card`); a test checks that the wire view and the engine view lead to the
same card at every turn.

The heuristic reads the contract's scoring table (1 per trick, hearts, queens, kings and jacks,
the KH, the 7th and last trick, or all of them): for each legal card it weighs the chance the card
wins the trick and what the trick would then cost against what getting rid of the card is worth,
and plays the cheapest. So in "no tricks" it ducks, in "no hearts" it throws hearts on other
seats' tricks, in "no KH" it drops the KH under the AH or on a void, in "7th and last" it spends
its winners on the harmless tricks, and in the robber all the costs add up.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from moonshot.bots.base import Bot
from moonshot.bots.heuristic import HeuristicBot
from moonshot.core.actions import Play
from moonshot.core.cards import HEARTS_MASK, SUIT_MASKS, Card, CardSet, card_list
from moonshot.core.engine import Phase
from moonshot.core.events import TrickEnded
from moonshot.core.rules import PassDirection, Scoring
from moonshot.core.variants import KIERKI
from moonshot.core.views import Choices, SeatView
from moonshot.protocols.kierki.codec import Deal, Message, Score, Taken, Total, Trick

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


_BOT = HeuristicBot()


def choose_card(view: SeatView, exclude: CardSet = 0, bot: Bot | None = None, rng: random.Random | None = None) -> Card:
    """The automatic client's card: ``bot``'s choice (the heuristic by default) among the legal cards
    not in ``exclude`` (cards the server refused); when all legal cards were refused, among the rest
    of the hand."""
    allowed = view.legal_plays & ~exclude or view.hand & ~exclude or view.legal_plays or view.hand
    if allowed != view.legal_plays:
        legal = tuple(Play.of(view.seat, c) for c in card_list(allowed))
        view = replace(view, legal_plays=allowed, choices=Choices.listed(view.seat, legal))
    action = (bot or _BOT).act(view, rng or random.Random(0))
    assert isinstance(action, Play)
    return action.card


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
    trick_leaders: list[int] = field(default_factory=list)  # who led each of them
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
            self.trick_leaders = []
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
            self.trick_leaders.append(first)
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

    def seat_view(self) -> SeatView:
        """What this seat knows, as the engine would show it (the input of the heuristic)."""
        sc = scoring_for(self.kind)
        numbered = dict(sc.trick_number_points)
        taken = [0, 0, 0, 0]
        won = [0, 0, 0, 0]
        points = [0, 0, 0, 0]
        led_suits = 0
        ended: list[TrickEnded] = []
        for t, first in zip(self.tricks, self.trick_leaders):
            cards = sum(1 << c for c in t.cards)
            pts = sum(sc.card_points[c] for c in t.cards)  # TrickEnded.points: the cards' points
            taken[t.winner] |= cards
            won[t.winner] += 1
            points[t.winner] += pts + sc.per_trick + numbered.get(t.number, 0)
            led_suits |= 1 << (t.cards[0] // 13)
            seats = tuple((first + i) % 4 for i in range(len(t.cards)))
            ended.append(TrickEnded(t.number, t.winner, tuple(t.cards), seats, pts))
        played = self.played()
        legal = legal_plays(self.hand, self.table) if self.prompt is not None else 0
        v, tot = self.voids, self.totals or (0, 0, 0, 0)
        none = (0, 0, 0, 0)
        return SeatView(
            seat=self.seat,
            rules=KIERKI,
            phase=Phase.PLAY,
            to_act=(self.seat,) if self.prompt is not None else (),
            deal=self.deals_seen - 1,
            deal_kind=self.kind,
            direction=PassDirection.HOLD,
            pass_to=None,
            hand=self.hand,
            dealt=self.dealt,
            passed=None,
            received=None,
            trick_no=self.trick_no,
            leader=self.table[0][0] if self.table else self.next_leader,
            trick=self.table,
            tricks=tuple(ended),
            played=played,
            led_suits=led_suits,
            hearts_broken=bool(played & HEARTS_MASK),
            voids=(v[0], v[1], v[2], v[3]),
            taken=(taken[0], taken[1], taken[2], taken[3]),
            tricks_won=(won[0], won[1], won[2], won[3]),
            points=(points[0], points[1], points[2], points[3]),
            totals=tot,
            charged=none,
            exposed=none,
            revealed=none,
            known_cards=none,
            claimer=None,
            claims=(),
            legal_plays=legal,
            choices=Choices.listed(self.seat, tuple(Play.of(self.seat, c) for c in card_list(legal))),
        )

    def my_tricks(self) -> list[Taken]:
        return [t for t in self.tricks if t.winner == self.seat]


__all__ = ["ClientState", "choose_card", "legal_plays", "scoring_for"]
