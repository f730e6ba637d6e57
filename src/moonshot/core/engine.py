"""The game state machine: deal → pass → charge/expose → tricks → score → next deal or over.

A :class:`Game` is exactly ``(rules, seed, deals, actions)``: the seed shuffles every deal (and
Turbo's keeper pile), ``deals`` optionally fixes hands, contracts and leaders (a Kierki game
definition), and the actions are applied in order. :func:`replay` rebuilds any game from that.

The engine is pure: no I/O, no clocks, no global randomness. ``apply`` validates an action,
raises :class:`IllegalAction` (leaving the game untouched) if it is not allowed, and otherwise
returns the events it caused, each carrying its audience (see :mod:`moonshot.core.events`).
Hands and card sets are 52-bit ints so the hot path (``legal_play_mask`` + ``apply(Play)``)
is a handful of integer operations.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from itertools import combinations
from typing import Any, Final

from moonshot.core.actions import AcceptClaim, Action, Charge, Claim, Expose, Pass, Play, RejectClaim
from moonshot.core.cards import (
    ALL_CARDS,
    HEARTS_MASK,
    NINES,
    QUEEN_SPADES,
    SUIT_MASKS,
    TWO_CLUBS,
    CardSet,
    card_list,
    format_card,
    format_cards,
)
from moonshot.core.events import (
    CardPlayed,
    Charged,
    ChargesRevealed,
    ChargingEnded,
    ChargingStarted,
    ClaimAnswered,
    ClaimMade,
    ClaimSucceeded,
    DealEnded,
    DealStarted,
    Event,
    Exposed,
    GameEnded,
    GameStarted,
    HandDealt,
    PassReceived,
    PassSent,
    TrickEnded,
    TrickStarted,
)
from moonshot.core.refusals import IllegalAction
from moonshot.core.rules import ClaimFlow, EndRule, PassDirection, Rules, score_deal

SEAT_NAMES: Final[tuple[str, ...]] = ("N", "E", "S", "W")


class Phase(Enum):
    PASS = "pass"
    PILE = "pile"  # Turbo keeper hand: 3 cards each into a pile shuffled back
    CHARGE = "charge"
    EXPOSE = "expose"
    PLAY = "play"
    OVER = "over"


# Module constants rather than ``Phase.PLAY``: an enum member lookup costs more than the rest of
# a legality check (compiled, it is a dict lookup on the class; a Final constant is a C static).
_PASS: Final = Phase.PASS
_PILE: Final = Phase.PILE
_CHARGE: Final = Phase.CHARGE
_EXPOSE: Final = Phase.EXPOSE
_PLAY: Final = Phase.PLAY
_OVER: Final = Phase.OVER
_KEEPER: Final = PassDirection.KEEPER
_HOLD: Final = PassDirection.HOLD
_DEALS: Final = EndRule.DEALS
_BLOCKING: Final = ClaimFlow.BLOCKING
# to_act while playing: no tuple made per call. Typed as a variable-length tuple on purpose:
# compiled, a fixed-length tuple type is an unboxed C struct, and indexing it with a variable
# boxes all of it (five new tuples) at every call.
_ONE_SEAT: Final[tuple[tuple[int, ...], ...]] = ((0,), (1,), (2,), (3,))


@dataclass(frozen=True)
class DealSpec:
    """A fixed deal: the four hands (N, E, S, W), the contract (Kierki 1..7) and who leads."""

    hands: tuple[CardSet, CardSet, CardSet, CardSet]
    kind: int = 0
    leader: int | None = None

    def __post_init__(self) -> None:
        union = 0
        for seat, h in enumerate(self.hands):
            if h.bit_count() != 13:
                raise ValueError(f"seat {SEAT_NAMES[seat]} has {h.bit_count()} cards, not 13")
            if union & h:
                raise ValueError(f"card(s) {' '.join(format_cards(union & h))} dealt twice")
            union |= h
        if self.leader is not None and not 0 <= self.leader < 4:
            raise ValueError(f"bad leader seat {self.leader}")


class Game:
    """One game of Hearts under ``rules``. Create with ``Game(rules, seed)``."""

    def __init__(
        self, rules: Rules, seed: int = 0, deals: Sequence[DealSpec] | None = None, record: bool = True
    ) -> None:
        self.rules = rules
        # record=False keeps no event log (apply returns []): for self-play and search, where
        # nobody watches; results stay on the game (totals, last_deal_points, tricks, winners).
        self.record = record
        self.seed = seed
        self.deal_specs: tuple[DealSpec, ...] | None = tuple(deals) if deals is not None else None
        if rules.end is _DEALS:
            n = rules.deals or (len(self.deal_specs) if self.deal_specs else len(rules.deal_kinds))
            if self.deal_specs is not None and len(self.deal_specs) < n:
                raise ValueError(f"{rules.name} needs {n} deals, the definition gives {len(self.deal_specs)}")
            self.deal_count: int | None = n
        else:
            self.deal_count = None
        self.totals = [0, 0, 0, 0]
        self.log: list[Event] = []
        self.actions: list[Action] = []
        self.deal_index = -1
        self.winners: tuple[int, ...] = ()
        self.phase: Phase = _PASS
        # per-deal state, set by _start_deal
        self.hands = [0, 0, 0, 0]
        self.dealt = [0, 0, 0, 0]
        self.deal_kind = 0
        self.direction: PassDirection = _HOLD
        self.pass_offset = 0  # the receiver's seat minus the sender's this deal (``direction.offset``)
        self.passed: list[CardSet | None] = [None] * 4
        self.received: list[CardSet | None] = [None] * 4
        self.charged = [0, 0, 0, 0]
        self.charge_done = 0
        self.next_charger: int | None = None
        self.charge_round = 0
        self.exposed = [0, 0, 0, 0]
        self.expose_pending = 0
        self.trick_no = 0
        self.leader = 0
        self.turn = 0
        self.trick_cards: list[int] = []
        self.trick_seats: list[int] = []
        self.tricks: list[TrickEnded] = []
        self.played = 0
        self.led_suits = 0
        self.hearts_broken = False
        self.voids = [0, 0, 0, 0]
        self.taken = [0, 0, 0, 0]
        self.tricks_won = [0, 0, 0, 0]
        self.trick_numbers_won = [0, 0, 0, 0]
        self._taken_points = [0, 0, 0, 0]  # card points in ``taken``, counted as tricks end
        # Claims. ``claiming``: a seat mask of open claims; ``claim_accepts[c]``: the seats that
        # accepted seat c's open claim. ``claimer`` is set only while play waits for answers
        # (ClaimFlow.BLOCKING); under CONCURRENT play never waits, so it stays None and the
        # play path never looks at claims.
        self._claims_block = rules.claim_flow is _BLOCKING
        self.claimer: int | None = None
        self.claiming = 0
        self.claim_accepts = [0, 0, 0, 0]
        self.claim_blocked = [-1, -1, -1, -1]  # BLOCKING: cards played when a seat's claim was rejected
        self.revealed = [0, 0, 0, 0]  # hands shown by claims
        self.last_deal_points: tuple[int, ...] = (0, 0, 0, 0)
        # every deal's DealEnded, kept with or without the event log (the simulator's records)
        self.deals_ended: list[DealEnded] = []
        # deal_points_so_far's answer until the cards taken change (None: not computed yet)
        self._points: tuple[int, int, int, int] | None = None
        # what moonshot.core.views derives from the public state (completed tricks, voids, cards
        # taken, totals, charges, exposures, hands shown), kept there until any of it changes:
        # every change below goes through _public_changed, which drops it (None)
        self.view_cache: Any = None
        # what views derive from the public state that changes a few times a deal at most
        # (totals, charges, exposures, hands shown): dropped (None) wherever any of it changes
        self.view_rare: Any = None
        # the views' own memo, kept across changes: each seat's last ``known_cards``
        self.view_memo: list[Any] = [None, None, None, None]
        self._scoring = rules.scoring_for(0)
        self._point_cards = self._scoring.cards_with_points  # cards whose trick needs points counted
        # legal_play_mask's last answer, for apply to reuse: valid while the log has this length
        # (every change of state through apply adds events) and the hand is the one it was for
        self._mask_version = -1
        self._mask_hand = -1
        self._mask = 0
        self._emit(GameStarted(rules.name, seed))
        self._start_deal()

    def __reduce__(self) -> tuple[object, ...]:
        # pickle and copy go through a new Game given the whole state: compiled with mypyc
        # (make compile) a Game has no __dict__ and cannot be created without its arguments
        names = getattr(type(self), "__mypyc_attrs__", None)
        if names is None:
            state = dict(vars(self))
        else:
            state = {n: getattr(self, n) for n in names if n != "__dict__"}
        state["view_cache"] = None  # the views' own: made again when needed
        state["view_rare"] = None
        state["view_memo"] = [None, None, None, None]
        return (Game, (self.rules, self.seed, self.deal_specs), state)

    def __setstate__(self, state: dict[str, object]) -> None:
        for name, value in state.items():
            setattr(self, name, value)

    # ------------------------------------------------------------------ queries
    @property
    def over(self) -> bool:
        return self.phase is _OVER

    @property
    def version(self) -> int:
        """How many events the game has produced (a per-game version for resyncing)."""
        return len(self.log)

    def to_act(self) -> tuple[int, ...]:
        """Seats whose decision the game is waiting for (several while passing).

        Answers to a concurrent claim (``ClaimFlow.CONCURRENT``) are never waited for: while
        playing, this is the seat to play, whatever claims are open."""
        ph = self.phase
        if ph is _PLAY:
            claimer = self.claimer
            if claimer is not None:
                answered = self.claim_accepts[claimer] | 1 << claimer
                return tuple(s for s in range(4) if not answered >> s & 1)
            return _ONE_SEAT[self.turn]
        if ph is _PASS or ph is _PILE:
            return tuple(s for s in range(4) if self.passed[s] is None)
        if ph is _CHARGE:
            if self.next_charger is not None:
                return (self.next_charger,)
            return tuple(s for s in range(4) if not self.charge_done >> s & 1)
        if ph is _EXPOSE:
            return tuple(s for s in range(4) if self.expose_pending >> s & 1)
        return ()

    def legal_play_mask(self, seat: int) -> CardSet:
        """The cards ``seat`` may play now (0 when it is not its turn to play)."""
        if self.phase is not _PLAY or seat != self.turn or self.claimer is not None:
            return 0
        version = len(self.actions)  # every change of state goes through apply, which logs an action
        hand = self.hands[seat]
        if self._mask_version == version and self._mask_hand == hand:
            return self._mask
        mask = self._legal_plays(seat)
        self._mask_version = version
        self._mask_hand = hand
        self._mask = mask
        return mask

    def _legal_plays(self, seat: int) -> CardSet:
        rules = self.rules
        return legal_plays(
            rules,
            self.hands[seat],
            self.trick_cards,
            self.trick_no,
            self.hearts_broken,
            self._all_charged() if rules.charged_card_rule else 0,
            self.led_suits,
        )

    def _all_charged(self) -> CardSet:
        c = self.charged
        return c[0] | c[1] | c[2] | c[3]

    def legal_actions(self, seat: int) -> list[Action]:
        """Every action ``seat`` may take now. Passing lists every combination of cards."""
        ph = self.phase
        if ph is _PLAY:
            out: list[Action] = []
            claimer = self.claimer
            if claimer is not None:
                if seat != claimer and not self.claim_accepts[claimer] >> seat & 1:
                    out = [AcceptClaim(seat, claimer), RejectClaim(seat, claimer)]
                return out
            if seat == self.turn:
                out = [Play.of(seat, c) for c in card_list(self.legal_play_mask(seat))]
            if self._may_claim(seat):
                out.append(Claim(seat))
            for c in self.open_claims():
                # concurrent claims: anyone may reject (the claimer withdrawing its own), and
                # each other seat may accept once
                if c != seat and not self.claim_accepts[c] >> seat & 1:
                    out.append(AcceptClaim(seat, c))
                out.append(RejectClaim(seat, c))
            return out
        if ph is _PASS or ph is _PILE:
            if self.passed[seat] is not None:
                return []
            cards = card_list(self.hands[seat])
            return [Pass(seat, sum(1 << c for c in combo)) for combo in combinations(cards, self.rules.pass_count)]
        if ph is _CHARGE:
            if seat not in self.to_act():
                return []
            options = card_list(self.hands[seat] & self.rules.chargeable & ~self.charged[seat])
            return [
                Charge(seat, sum(1 << c for c in combo))
                for k in range(len(options) + 1)
                for combo in combinations(options, k)
            ]
        if ph is _EXPOSE:
            if not self.expose_pending >> seat & 1:
                return []
            options = card_list(self.hands[seat] & self.rules.exposable)
            return [
                Expose(seat, sum(1 << c for c in combo))
                for k in range(len(options) + 1)
                for combo in combinations(options, k)
            ]
        return []

    def open_claims(self) -> tuple[int, ...]:
        """The seats with a claim open now, in seat order."""
        m = self.claiming
        if not m:
            return ()
        return tuple(s for s in range(4) if m >> s & 1)

    def _may_claim(self, seat: int) -> bool:
        if not self.rules.claims or self.phase is not _PLAY or self.claiming >> seat & 1:
            return False
        if not self._claims_block:
            return True  # as Turbo's server: any seat without an open claim, at any time of play
        return self.claimer is None and self.hands[seat] != 0 and self.claim_blocked[seat] != self.played.bit_count()

    def is_legal(self, action: Action) -> bool:
        try:
            self._check(action)
        except IllegalAction:
            return False
        return True

    # ------------------------------------------------------------------ actions
    def apply(self, action: Action) -> list[Event]:
        """Apply a legal action and return the events it caused (already appended to ``log``)."""
        start = len(self.log)
        if type(action) is Play:
            seat, card = action.seat, action.card
            # Compiled (make compile), a Play holds ints or could not have been built; in pure
            # Python a malformed one (a card that is no number 0..51) fails the type test first
            # and reaches _check, which says what is wrong with it.
            if (
                self.phase is not _PLAY
                or self.claimer is not None
                or type(card) is not int
                or seat != self.turn
                or not 0 <= card < 52
            ):
                self._check(action)  # raises with the reason
            if self._mask_version == len(self.actions) and self._mask_hand == self.hands[seat]:
                mask = self._mask
            else:
                mask = self._legal_plays(seat)
            if not mask >> card & 1:
                self._check(action)
            self.actions.append(action)
            self._play(seat, card)
        else:
            self._check(action)
            self.actions.append(action)
            if isinstance(action, Pass):
                self._pass(action.seat, action.cards)
            elif isinstance(action, Charge):
                self._charge(action.seat, action.cards)
            elif isinstance(action, Expose):
                self._expose(action.seat, action.cards)
            elif isinstance(action, Claim):
                self._claim(action.seat)
            elif isinstance(action, AcceptClaim):
                self._answer_claim(action.seat, action.claimer, True)
            elif isinstance(action, RejectClaim):
                self._answer_claim(action.seat, action.claimer, False)
        return self.log[start:]

    def _check(self, action: Action) -> None:
        """Raise :class:`IllegalAction` with the reason ``action`` is not allowed now."""
        # Fields are read untyped until checked: compiled code would fail on a wrong type first.
        untyped: Any = action
        seat = untyped.seat
        if not isinstance(seat, int) or not 0 <= seat < 4:
            raise IllegalAction(f"no seat {seat!r}", "no_seat", {"value": repr(seat)})
        who = SEAT_NAMES[seat]
        ph = self.phase
        if ph is _OVER:
            raise IllegalAction("the game is over", "game_over")
        if isinstance(action, Play):
            if ph is not _PLAY:
                raise IllegalAction(
                    f"{who} cannot play a card during the {ph.value} phase",
                    "wrong_phase_play",
                    {"seat": seat, "phase": ph.value},
                )
            if self.claimer is not None:
                raise IllegalAction(
                    f"{SEAT_NAMES[self.claimer]}'s claim must be answered first",
                    "claim_pending",
                    {"claimer": self.claimer},
                )
            if seat != self.turn:
                raise IllegalAction(
                    f"it is {SEAT_NAMES[self.turn]}'s turn, not {who}'s",
                    "not_your_turn",
                    {"seat": seat, "turn": self.turn},
                )
            c = untyped.card
            if not isinstance(c, int) or not 0 <= c < 52:
                raise IllegalAction(f"no card {c!r}", "no_card", {"value": repr(c)})
            if not self.hands[seat] >> c & 1:
                raise IllegalAction(
                    f"{who} does not hold {format_card(c)}", "not_held", {"seat": seat, "cards": [format_card(c)]}
                )
            if not self._legal_plays(seat) >> c & 1:
                why, code, params = self._why_illegal(seat, c)
                raise IllegalAction(f"{who} may not play {format_card(c)}: {why}", code, params)
            return
        if isinstance(action, Pass):
            if ph is not _PASS and ph is not _PILE:
                raise IllegalAction(
                    f"{who} cannot pass during the {ph.value} phase",
                    "wrong_phase_pass",
                    {"seat": seat, "phase": ph.value},
                )
            if self.passed[seat] is not None:
                raise IllegalAction(f"{who} has already passed", "already_passed", {"seat": seat})
            self._check_cards(untyped.cards, who)
            if action.cards.bit_count() != self.rules.pass_count:
                n = action.cards.bit_count()
                raise IllegalAction(
                    f"a pass is {self.rules.pass_count} cards, not {n}",
                    "pass_count",
                    {"count": n, "expected": self.rules.pass_count},
                )
            if action.cards & ~self.hands[seat]:
                missing = format_cards(action.cards & ~self.hands[seat])
                raise IllegalAction(
                    f"{who} does not hold {' '.join(missing)}", "not_held", {"seat": seat, "cards": list(missing)}
                )
            return
        if isinstance(action, Charge):
            if ph is not _CHARGE:
                raise IllegalAction(
                    f"{who} cannot charge during the {ph.value} phase",
                    "wrong_phase_charge",
                    {"seat": seat, "phase": ph.value},
                )
            if seat not in self.to_act():
                if self.next_charger is not None:
                    raise IllegalAction(
                        f"it is {SEAT_NAMES[self.next_charger]}'s turn to charge, not {who}'s",
                        "not_your_charge",
                        {"seat": seat, "turn": self.next_charger},
                    )
                raise IllegalAction(f"{who} has passed; wait for another charge", "charge_wait", {"seat": seat})
            self._check_cards(untyped.cards, who)
            bad = action.cards & ~(self.hands[seat] & self.rules.chargeable & ~self.charged[seat])
            if bad:
                raise IllegalAction(
                    f"{who} cannot charge {' '.join(format_cards(bad))}",
                    "cannot_charge",
                    {"seat": seat, "cards": list(format_cards(bad))},
                )
            return
        if isinstance(action, Expose):
            if ph is not _EXPOSE or not self.expose_pending >> seat & 1:
                raise IllegalAction(f"{who} is not asked to expose cards now", "no_expose", {"seat": seat})
            self._check_cards(untyped.cards, who)
            bad = action.cards & ~(self.hands[seat] & self.rules.exposable)
            if bad:
                raise IllegalAction(
                    f"{who} cannot expose {' '.join(format_cards(bad))}",
                    "cannot_expose",
                    {"seat": seat, "cards": list(format_cards(bad))},
                )
            return
        if isinstance(action, Claim):
            if not self.rules.claims:
                raise IllegalAction(f"{self.rules.name} has no claims", "no_claims", {"variant": self.rules.name})
            if ph is not _PLAY:
                raise IllegalAction(
                    f"{who} cannot claim during the {ph.value} phase",
                    "wrong_phase_claim",
                    {"seat": seat, "phase": ph.value},
                )
            if self.claiming >> seat & 1:
                raise IllegalAction(f"{who} already claimed", "already_claimed", {"seat": seat})
            if not self._may_claim(seat):
                raise IllegalAction(f"{who} cannot claim now", "cannot_claim", {"seat": seat})
            return
        if isinstance(action, (AcceptClaim, RejectClaim)):
            claimer = untyped.claimer
            if not isinstance(claimer, int) or not 0 <= claimer < 4 or not self.claiming >> claimer & 1:
                name = SEAT_NAMES[claimer] if isinstance(claimer, int) and 0 <= claimer < 4 else repr(claimer)
                raise IllegalAction(f"there is no claim by {name}", "no_such_claim", {"value": name})
            if self._claims_block:
                if seat == claimer or self.claim_accepts[claimer] >> seat & 1:
                    raise IllegalAction(f"{who} cannot answer this claim", "cannot_answer_claim", {"seat": seat})
            elif isinstance(action, AcceptClaim):
                if seat == claimer:
                    raise IllegalAction(f"{who} cannot accept its own claim", "own_claim", {"seat": seat})
                if self.claim_accepts[claimer] >> seat & 1:
                    raise IllegalAction(
                        f"{who} already accepted {SEAT_NAMES[claimer]}'s claim",
                        "already_accepted",
                        {"seat": seat, "claimer": claimer},
                    )
            return
        raise IllegalAction(f"unknown action {action!r}", "unknown_action")

    @staticmethod
    def _check_cards(cards: object, who: str) -> None:
        if not isinstance(cards, int) or cards < 0 or cards & ~ALL_CARDS:
            raise IllegalAction(
                f"{who} sent a malformed card set {cards!r}", "malformed_cards", {"seat": SEAT_NAMES.index(who)}
            )

    def _why_illegal(self, seat: int, c: int) -> tuple[str, str, dict[str, Any]]:
        """Why ``c`` is not a legal play: the English, its reason code and the code's params."""
        hand, tc, rules = self.hands[seat], self.trick_cards, self.rules
        params: dict[str, Any] = {"seat": seat, "card": format_card(c)}
        if tc and hand & SUIT_MASKS[tc[0] // 13] and c // 13 != tc[0] // 13:
            suit = ("clubs", "diamonds", "hearts", "spades")[tc[0] // 13]
            params["suit"] = suit
            return f"must follow {suit}", "must_follow", params
        if not tc and self.trick_no == 1 and rules.two_of_clubs_leads and hand >> TWO_CLUBS & 1:
            return "the first trick must be led with 2C", "first_lead", params
        if self.trick_no == 1 and rules.first_trick_forbidden >> c & 1:
            return "no points on the first trick unless nothing else can be played", "first_trick_points", params
        if not tc and c // 13 == 2 and rules.hearts_must_be_broken and not self.hearts_broken:
            return "hearts are not broken", "hearts_not_broken", params
        if rules.charged_card_rule and self._all_charged() >> c & 1:
            return "a charged card cannot be played on the first trick of its suit", "charged_card", params
        return "not a legal play", "not_playable", params

    # ------------------------------------------------------------------ internals
    def _permutation(self, deal: int, purpose: str, n: int) -> list[int]:
        # One stream per deal and purpose: deal k is the same whatever happened before it,
        # so duplicate play (same seed, rotated seats) sees identical deals.
        return keyed_permutation(f"moonshot:{self.seed}:{deal}:{purpose}", n)

    def _public_changed(self) -> None:
        self._points = None
        self.view_cache = None

    def _rare_changed(self) -> None:
        """Totals, charges, exposures or shown hands changed: the public state, and the views'
        cache of these rarer parts (``view_rare``)."""
        self._public_changed()
        self.view_rare = None

    def _emit(self, e: Event) -> None:
        if self.record:
            self.log.append(e)

    def _start_deal(self) -> None:
        self.deal_index += 1
        d = self.deal_index
        rules = self.rules
        spec = self.deal_specs[d] if self.deal_specs is not None and d < len(self.deal_specs) else None
        if spec is not None:
            hands = list(spec.hands)
            self.deal_kind = spec.kind
            given_leader = spec.leader
        else:
            deck = self._permutation(d, "deal", 52)
            hands = [0, 0, 0, 0]
            for s in range(4):
                h = 0
                for i in range(13 * s, 13 * s + 13):
                    h |= 1 << deck[i]
                hands[s] = h
            self.deal_kind = rules.deal_kinds[d % len(rules.deal_kinds)]
            given_leader = None if rules.two_of_clubs_leads else d % 4
        scoring = rules.scoring_for(self.deal_kind)
        if scoring is not self._scoring:
            self._scoring = scoring
            self._point_cards = scoring.cards_with_points
        self.hands = hands
        self.dealt = list(hands)
        self.direction = rules.pass_direction(d)
        self.pass_offset = self.direction.offset
        self.passed = [None] * 4
        self.received = [None] * 4
        self.charged = [0, 0, 0, 0]
        self.charge_done = 0
        self.next_charger = None
        self.charge_round = 0
        self.exposed = [0, 0, 0, 0]
        self.expose_pending = 0
        self.trick_no = 0
        self.trick_cards = []
        self.trick_seats = []
        self.tricks = []
        self.played = 0
        self.led_suits = 0
        self.hearts_broken = False
        self.voids = [0, 0, 0, 0]
        self.taken = [0, 0, 0, 0]
        self.tricks_won = [0, 0, 0, 0]
        self.trick_numbers_won = [0, 0, 0, 0]
        self._taken_points = [0, 0, 0, 0]  # card points in ``taken``, counted as tricks end
        self._rare_changed()
        self.claim_blocked = [-1, -1, -1, -1]
        self.revealed = [0, 0, 0, 0]
        if rules.two_of_clubs_leads:
            self._first_leader: int | None = None
        else:
            self._first_leader = given_leader if given_leader is not None else d % 4
        self._emit(DealStarted(d, self.direction, self.deal_kind, self._first_leader))
        if self.record:
            for s in range(4):
                self.log.append(HandDealt(s, hands[s]))
        if self.direction is _KEEPER:
            self._start_charging() if rules.charging is not None else self._start_pile()
        elif self.direction is _HOLD or rules.pass_count == 0:
            self._after_passing()
        else:
            self.phase = _PASS

    def _pass(self, seat: int, cards: CardSet) -> None:
        d = self.direction
        to = seat if d is _KEEPER else (seat + self.pass_offset) % 4
        self.passed[seat] = cards
        self.hands[seat] &= ~cards
        self._emit(PassSent(seat, to, cards, cards.bit_count()))
        if any(p is None for p in self.passed):
            return
        if self.phase is _PILE:
            pooled = card_list(sum(p for p in self.passed if p is not None))
            pile = [pooled[i] for i in self._permutation(self.deal_index, "pile", len(pooled))]
            k = self.rules.pass_count
            for s in range(4):
                got = sum(1 << c for c in pile[k * s : k * s + k])
                self.received[s] = got
                self.hands[s] |= got
                self._emit(PassReceived(s, s, got, k))
            self._start_charging()
            return
        off = self.pass_offset
        for s in range(4):
            src = (s - off) % 4
            got = self.passed[src] or 0
            self.received[s] = got
            self.hands[s] |= got
            self._emit(PassReceived(s, src, got, got.bit_count()))
        self._after_passing()

    def _start_pile(self) -> None:
        self.phase = _PILE
        self.passed = [None] * 4

    def _after_passing(self) -> None:
        if self.rules.charging is not None:
            self._start_charging()
        else:
            self._after_charging()

    def _start_charging(self) -> None:
        order = self.rules.charging
        assert order is not None
        self.phase = _CHARGE
        self.charge_done = 0
        self.charge_round += 1
        self.next_charger = self.deal_index % 4 if order.in_seat_order else None
        self._emit(ChargingStarted(self.next_charger))

    def _charge(self, seat: int, cards: CardSet) -> None:
        order = self.rules.charging
        assert order is not None
        self.charged[seat] |= cards
        self._rare_changed()
        if self.next_charger is not None:
            self.next_charger = (self.next_charger + 1) % 4
        if cards:
            self.charge_done = 0 if order.chain else 1 << seat
        else:
            self.charge_done |= 1 << seat
        finished = self.charge_done == 0b1111
        if finished:
            self.next_charger = None
        self._emit(Charged(seat, cards, cards.bit_count(), order.blind, self.charge_done, self.next_charger))
        if not finished:
            return
        charges = (self.charged[0], self.charged[1], self.charged[2], self.charged[3])
        if order.blind:
            self._emit(ChargesRevealed(charges))
        self._emit(ChargingEnded(charges))
        if self.direction is _KEEPER and self.charge_round == 1 and not any(charges):
            self._start_pile()
        else:
            self._after_charging()

    def _after_charging(self) -> None:
        if self.rules.exposable:
            pending = 0
            for s in range(4):
                if self.hands[s] & self.rules.exposable:
                    pending |= 1 << s
            if pending:
                self.phase = _EXPOSE
                self.expose_pending = pending
                return
        self._start_play()

    def _expose(self, seat: int, cards: CardSet) -> None:
        self.exposed[seat] |= cards
        self._rare_changed()
        self.expose_pending &= ~(1 << seat)
        self._emit(Exposed(seat, cards))
        if not self.expose_pending:
            self._start_play()

    def _start_play(self) -> None:
        self.phase = _PLAY
        if self.rules.two_of_clubs_leads:
            leader = next(s for s in range(4) if self.hands[s] >> TWO_CLUBS & 1)
        else:
            leader = self._first_leader if self._first_leader is not None else 0
        self._start_trick(1, leader)

    def _start_trick(self, number: int, leader: int) -> None:
        self.trick_no = number
        self.leader = leader
        self.turn = leader
        self.trick_cards = []
        self.trick_seats = []
        if self.record:
            self.log.append(TrickStarted(number, leader))

    def _play(self, seat: int, c: int) -> None:
        bit = 1 << c
        hands = self.hands
        # item = item op x rather than item op= x: compiled, the latter is a generic object op
        hands[seat] = hands[seat] ^ bit
        self.played |= bit
        tc = self.trick_cards
        tc.append(c)
        self.trick_seats.append(seat)
        suit = c // 13
        led = tc[0] // 13
        if led != suit:
            voids = self.voids
            if not voids[seat] >> led & 1:
                voids[seat] = voids[seat] | 1 << led
                self.view_cache = None  # public, but no points change: _points stays
        if suit == 2 or (c == QUEEN_SPADES and self.rules.queen_breaks_hearts):
            self.hearts_broken = True
        if self.record:
            self.log.append(CardPlayed(seat, c, self.trick_no))
        n = len(tc)
        nxt = (seat + 1) & 3
        if n < 4:
            self.turn = nxt
            return
        if n == 4:
            if self.rules.nines and hands[nxt] and NINES[led] in tc:
                self.turn = nxt
                return
        elif n < 8 and hands[nxt]:
            self.turn = nxt
            return
        self._finish_trick()

    def _finish_trick(self) -> None:
        tc, ts = self.trick_cards, self.trick_seats
        led = tc[0] // 13
        won = 0
        for c in tc:
            won |= 1 << c
        # the highest card of the led suit wins; cards are suit * 13 + rank, so it is the top bit
        winner = ts[tc.index((won & SUIT_MASKS[led]).bit_length() - 1)]
        taken, tricks_won, numbers = self.taken, self.tricks_won, self.trick_numbers_won
        taken[winner] = taken[winner] | won
        tricks_won[winner] = tricks_won[winner] + 1
        numbers[winner] = numbers[winner] | 1 << self.trick_no
        self._public_changed()
        self.led_suits |= 1 << led
        pts = 0
        if won & self._point_cards:
            cp = self._scoring.card_points
            for c in tc:
                pts += cp[c]
            tp = self._taken_points
            tp[winner] = tp[winner] + pts
        e = TrickEnded(self.trick_no, winner, tuple(tc), tuple(ts), pts)
        self.tricks.append(e)
        if self.record:
            self.log.append(e)
        if self.played == ALL_CARDS or (self.rules.early_end and self._no_points_left()):
            self._end_deal(early=self.played != ALL_CARDS)
        else:
            self._start_trick(self.trick_no + 1, winner)

    def _no_points_left(self) -> bool:
        sc = self._scoring
        if sc.per_trick:
            return False
        if sc.cards_with_points & ~self.played:
            return False
        return all(n <= self.trick_no for n, _ in sc.trick_number_points)

    def _claim(self, seat: int) -> None:
        if self._claims_block:
            self.claimer = seat
        self.claiming |= 1 << seat
        self.claim_accepts[seat] = 0
        self.revealed[seat] = self.hands[seat]
        self._rare_changed()
        self._emit(ClaimMade(seat, self.hands[seat]))

    def _answer_claim(self, seat: int, claimer: int, accepted: bool) -> None:
        self._emit(ClaimAnswered(claimer, seat, accepted))
        if not accepted:  # the claim ends (the claimer's hand stays shown)
            self.claiming &= ~(1 << claimer)
            self.claim_accepts[claimer] = 0
            if self._claims_block:
                self.claimer = None
                self.claim_blocked[claimer] = self.played.bit_count()
            return
        accepts = self.claim_accepts[claimer] | 1 << seat
        self.claim_accepts[claimer] = accepts
        if accepts | (1 << claimer) != 0b1111:
            return
        rest = self.hands[0] | self.hands[1] | self.hands[2] | self.hands[3]
        for c in self.trick_cards:
            rest |= 1 << c
        self.taken[claimer] |= rest
        cp = self._scoring.card_points
        for c in card_list(rest & self._point_cards):
            self._taken_points[claimer] += cp[c]
        self._public_changed()
        # The claimer wins every trick left (the one in progress included), so per-trick and
        # trick-number scoring count them too: as many tricks as the fullest hand has cards.
        left = max(h.bit_count() for h in self.hands)
        self.tricks_won[claimer] += left
        for number in range(self.trick_no, self.trick_no + left):
            self.trick_numbers_won[claimer] |= 1 << number
        self.played |= rest
        self.hands = [0, 0, 0, 0]
        self.trick_cards, self.trick_seats = [], []
        self._emit(ClaimSucceeded(claimer, rest))
        self._end_deal(early=True)

    def _end_deal(self, early: bool) -> None:
        rules = self.rules
        if self.claiming:  # claims still open end with the hand
            self.claimer = None
            self.claiming = 0
            self.claim_accepts = [0, 0, 0, 0]
        doubled = 0
        for s in range(4):
            doubled |= self.charged[s] | self.exposed[s]
        points, moon = score_deal(rules, self.deal_kind, self.taken, self.trick_numbers_won, self.tricks_won, doubled)
        for s in range(4):
            self.totals[s] += points[s]
        self._rare_changed()
        self.last_deal_points = points
        ended = DealEnded(self.deal_index, points, tuple(self.totals), moon, tuple(self.taken), len(self.tricks), early)
        self.deals_ended.append(ended)
        self._emit(ended)
        if self._game_finished():
            best = min(self.totals) if rules.lowest_wins else max(self.totals)
            self.winners = tuple(s for s in range(4) if self.totals[s] == best)
            self.phase = _OVER
            self._emit(GameEnded(tuple(self.totals), self.winners, self.deal_index + 1))
        else:
            self._start_deal()

    def _game_finished(self) -> bool:
        rules = self.rules
        if self.deal_count is not None:
            return self.deal_index + 1 >= self.deal_count
        top = max(self.totals) if not rules.negative_scores else -min(self.totals)
        return top >= rules.score_limit if rules.limit_inclusive else top > rules.score_limit

    # ------------------------------------------------------------------ helpers
    def deal_points_so_far(self) -> list[int]:
        """Raw card/trick points each seat has taken in the current deal (no multipliers)."""
        p = self.deal_points()
        return [p[0], p[1], p[2], p[3]]

    def deal_points(self) -> tuple[int, int, int, int]:
        """:meth:`deal_points_so_far` as a tuple, computed once per change of the cards taken
        (a view is made for every decision, the cards taken change once a trick)."""
        p = self._points
        if p is None:
            p = self._count_deal_points()
            self._points = p
        return p

    def _count_deal_points(self) -> tuple[int, int, int, int]:
        sc = self._scoring
        out = []
        for s in range(4):
            # the card points were summed as the tricks ended (and a claim succeeded)
            pts = self._taken_points[s] + sc.per_trick * self.tricks_won[s]
            for number, p in sc.trick_number_points:  # Kierki's 7th and last trick
                if self.trick_numbers_won[s] >> number & 1:
                    pts += p
            out.append(pts)
        return (out[0], out[1], out[2], out[3])

    def snapshot(self) -> dict[str, object]:
        """A JSON-friendly summary (for logs and debugging, not for restoring)."""
        return {
            "variant": self.rules.name,
            "seed": self.seed,
            "phase": self.phase.value,
            "deal": self.deal_index,
            "trick": self.trick_no,
            "to_act": [SEAT_NAMES[s] for s in self.to_act()],
            "hands": {SEAT_NAMES[s]: format_cards(self.hands[s]) for s in range(4)},
            "totals": list(self.totals),
        }


def legal_plays(
    rules: Rules,
    hand: CardSet,
    trick: list[int],
    trick_no: int,
    hearts_broken: bool,
    charged: CardSet,
    led_suits: int,
) -> CardSet:
    """The cards of ``hand`` that may be played now: the one statement of the play rules.

    ``trick``: the cards played to the current trick so far, in order (empty: a lead);
    ``trick_no``: from 1; ``charged``: every charged card still counting (Turbo); ``led_suits``:
    bit ``s`` set once suit ``s`` has been led in this deal. The engine and the search bot's
    playouts (``bots/playout.py``) both ask this function.
    """
    if not trick:
        if trick_no == 1 and rules.two_of_clubs_leads and hand >> TWO_CLUBS & 1:
            return 1 << TWO_CLUBS
        legal = hand
        if rules.hearts_must_be_broken and not hearts_broken and hand & ~HEARTS_MASK:
            legal &= ~HEARTS_MASK
        if rules.charged_card_rule and charged:
            led = 0
            for s in range(4):
                if led_suits >> s & 1:
                    led |= SUIT_MASKS[s]
            unled = charged & ~led  # a charged card may not lead its suit's first trick
            if legal & ~unled:
                legal &= ~unled
    else:
        suit = trick[0] // 13
        legal = hand & SUIT_MASKS[suit]
        if legal:
            # nor follow to it, unless it is the only card of the suit held
            if rules.charged_card_rule and not led_suits >> suit & 1 and legal & (legal - 1):
                legal &= ~charged
        else:
            legal = hand
    if trick_no == 1 and rules.first_trick_forbidden:
        forbidden = rules.first_trick_forbidden
        if legal & forbidden:
            if legal & ~forbidden:
                legal &= ~forbidden
            else:
                for c in rules.first_trick_forced_order:
                    if legal >> c & 1:
                        return 1 << c
    return legal


def keyed_permutation(key: str, n: int) -> list[int]:
    """A uniformly random permutation of ``range(n)`` (``n <= 52``) determined by ``key``.

    The 512-bit BLAKE2b digest of ``key``, read as a number ``x``, drives a Fisher-Yates
    shuffle from the top: position ``i`` swaps with ``x mod (i + 1)``, then ``x`` is divided
    by ``i + 1`` (the digits of ``x`` in the factorial number system). A digest is uniform, so
    every permutation is equally likely up to ``n! / 2**512`` (below ``2**-286`` for a deck):
    no seeding of a Mersenne Twister (whose 2.5 KB state costs more than the whole shuffle) and
    no rejection loops. Tests hold the shuffle to uniformity.

    The digits are taken a few at a time: one big division by ``(i+1)·i·…·(k+1)`` (below 2**30,
    one digit of CPython's big integers, its fast path) leaves a small remainder whose digits
    are those of ``x`` itself.
    """
    x = int.from_bytes(hashlib.blake2b(key.encode()).digest(), "little")  # 64 bytes by default
    items = list(range(n))
    i = n - 1
    while i > 0:
        m = i + 1
        k = i - 1  # the chunk covers positions i down to k + 1
        while k > 0 and m * (k + 1) < _WORD:
            m *= k + 1
            k -= 1
        x, r = divmod(x, m)
        while i > k:
            j = r % (i + 1)
            r //= i + 1
            items[i], items[j] = items[j], items[i]
            i -= 1
    return items


_WORD: Final = 1 << 30  # a big integer divided by less divides one digit at a time


def replay(rules: Rules, seed: int, actions: Iterable[Action], deals: Sequence[DealSpec] | None = None) -> Game:
    """Rebuild a game from its seed and actions; raises :class:`IllegalAction` on a bad log."""
    g = Game(rules, seed, deals)
    for i, a in enumerate(actions):
        try:
            g.apply(a)
        except IllegalAction as e:
            raise IllegalAction(f"action {i} ({a!r}) does not replay: {e}", e.code, e.params) from e
    return g


__all__ = ["SEAT_NAMES", "DealSpec", "Game", "IllegalAction", "Phase", "keyed_permutation", "legal_plays", "replay"]
