"""The review of one decision: every option's expected points from the seat's information only.

:func:`evaluate` reads one :class:`~moonshot.core.views.SeatView` (the seat's hand, what it passed
and was passed, the cards played, the voids shown: what a bot is given) and never a hidden hand. It
is ``search``'s own estimate, made with ``search``'s machinery: worlds of the hidden cards dealt by
search's sampler for the view (:meth:`~moonshot.bots.search.SearchBot.card_sampler`, the other seats'
passes by :func:`~moonshot.bots.passing.heuristic_pass` while passing), played to the end of the deal
by search's greedy rollout (in the rules kernel once it is loaded) or valued exactly by the endgame
solver once few cards are left, and scored by the rules' own :func:`~moonshot.core.rules.score_deal`,
so every variant's moon rule, multipliers and doubling apply.

Every option is valued on the same worlds (common random numbers): the greedy rollout draws no
random numbers, so two options in one world differ only by the option, and the differences between
options (what a review grades) are far sharper than the values themselves.

An option's ``expected`` is the seat's own points for the deal at its end (what it has taken
already included; a cost, lower is better in every variant: Turbo's scores are negated), its
``moon_for``/``moon_against`` the share of worlds in which this seat / another seat shot the moon.
The cost of a choice is its expected points minus the best option's; :func:`grade` names it.

Passing has C(13,3) options: only the choice made, search's candidate passes and the heuristic pass
are valued (``complete`` False). Card play values every legal card (one card of each run of
equivalent cards is played out and lends its values to the rest), charges and exposures every
subset of the cards that may be charged or exposed.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations

from moonshot.core.actions import Action, Charge, Expose, Pass, Play
from moonshot.core.cards import ALL_CARDS, CardSet, card_list, format_card, to_set
from moonshot.core.engine import Phase
from moonshot.core.rules import MoonRule
from moonshot.core.views import SeatView

from .passing import after_passing, heuristic_pass, pass_candidates
from .playout import MOON_CARDS, Deal, greedy_policy, kernel_ready, kernel_state, start_of_play
from .sampling import sample_hands, sample_view
from .search import (
    SearchBot,
    deal_from_view,
    distinct_cards,
    score_matters,
)

# the default budget: worlds a decision (every option is played out in each). Chosen so that one
# seat's review of a whole standard game takes well under a minute on a 2-core machine with the
# rules kernel loaded (benchmarks/review.py; docs/review.md)
DEFAULT_WORLDS = 1000
# grades, in points given up against the best option (measured: docs/review.md)
BEST = 0.05
INACCURACY = 0.6
MISTAKE = 1.5
BLUNDER = 4.0
GRADES = ("best", "good", "inaccuracy", "mistake", "blunder")
# once every hand holds at most this many cards, an option is valued by the exact solver
ENDGAME_CARDS = 2

Clock = Callable[[], float]


@dataclass(frozen=True)
class OptionValue:
    """One option of a decision and what it is worth to the seat (see the module's docstring)."""

    action: Action
    label: str
    expected: float
    moon_for: float
    moon_against: float
    worlds: int

    def to_json(self) -> dict[str, object]:
        return {
            "label": self.label,
            "expected": round(self.expected, 3),
            "moon_for": round(self.moon_for, 3),
            "moon_against": round(self.moon_against, 3),
            "worlds": self.worlds,
        }


@dataclass(frozen=True)
class Evaluation:
    """Every option valued, best (lowest expected points) first."""

    kind: str  # "play" | "pass" | "charge" | "expose"
    options: list[OptionValue]
    worlds: int
    complete: bool = True
    note: str = ""

    def option(self, action: Action) -> OptionValue | None:
        """The option that is ``action`` (None: not valued, e.g. a pass outside the candidates)."""
        label = action_label(action)
        for o in self.options:
            if o.label == label:
                return o
        return None

    @property
    def best(self) -> OptionValue:
        return self.options[0]

    def cost(self, action: Action) -> float:
        """Points ``action`` gives up against the best option (>= 0)."""
        o = self.option(action)
        if o is None:
            raise KeyError(f"{action_label(action)} was not valued")
        return max(0.0, o.expected - self.best.expected)


def grade(cost: float) -> str:
    """The grade of a choice that gives up ``cost`` points against the best option."""
    if cost < BEST:
        return "best"
    if cost < INACCURACY:
        return "good"
    if cost < MISTAKE:
        return "inaccuracy"
    if cost < BLUNDER:
        return "mistake"
    return "blunder"


def cards_label(cards: CardSet) -> str:
    """Cards as the engine writes them, space-separated ("QS AH KH"; "-" for none)."""
    return " ".join(format_card(c) for c in card_list(cards)) or "-"


def action_label(action: Action) -> str:
    if isinstance(action, Play):
        return format_card(action.card)
    if isinstance(action, (Pass, Charge, Expose)):
        return cards_label(action.cards)
    return action.tag


def decision_kind(view: SeatView) -> str | None:
    """What ``view``'s seat decides now ("play", "pass", "charge", "expose"), or None: nothing the
    review values (not its turn, a claim to answer, a single legal card)."""
    ph = view.phase
    if ph is Phase.PLAY:
        if view.claimer is not None or not view.legal_plays:
            return None
        return "play"
    if ph is Phase.PASS or ph is Phase.PILE:
        return "pass" if view.rules.pass_count else None
    if ph is Phase.CHARGE:
        return "charge" if view.rules.chargeable & ~view.charged[view.seat] & view.hand else None
    if ph is Phase.EXPOSE:
        return "expose" if view.rules.exposable & view.hand else None
    return None


class _Budget:
    """Worlds to deal: ``worlds`` of them, or as many as ``think_ms`` allows (at least one)."""

    def __init__(self, worlds: int | None, think_ms: int | None, clock: Clock) -> None:
        self.worlds = worlds
        self.clock = clock
        self.deadline = clock() + think_ms / 1000.0 if think_ms is not None and worlds is None else math.inf
        self.longest = 0.0
        self.last = clock() if self.deadline < math.inf else 0.0

    def more(self, done: int) -> bool:
        if self.worlds is not None:
            return done < self.worlds
        if done == 0:
            return True
        t = self.clock()
        self.longest = max(self.longest, t - self.last)
        self.last = t
        return t + self.longest < self.deadline


def _outcome(deal: Deal, me: int, exact: bool) -> tuple[float, int]:
    """The seat's points at the end of ``deal`` played out by the greedy rollout (or, with ``exact``,
    its exact value against the other three), and who shot the moon in the greedy playout (-1:
    nobody)."""
    if kernel_ready(deal.rules.rules):
        from moonshot import kernel
        from moonshot.kernel._core import S_TAKEN

        if exact:
            value = kernel.solve(*kernel_state(deal), me, 0.0)
        rt, st = kernel_state(deal)
        if kernel.done(st):
            costs = kernel.costs(rt, st)
        else:
            costs = kernel.greedy_rollout(rt, st)
        taken = [int(st[S_TAKEN + s]) for s in range(4)]
    else:
        if exact:
            from .search import solve

            value = solve(deal, me, 0.0)
        costs = deal.finish(greedy_policy, random.Random(0))  # (greedy: draws nothing)
        taken = deal.taken
    moon = -1
    if deal.rules.rules.moon is not MoonRule.NONE:
        for s in range(4):
            if taken[s] & MOON_CARDS == MOON_CARDS:
                moon = s
    return (value if exact else float(costs[me])), moon


class _Tally:
    __slots__ = ("against", "mine", "n", "total")

    def __init__(self) -> None:
        self.total = 0.0
        self.mine = 0
        self.against = 0
        self.n = 0

    def add(self, value: float, moon: int, me: int) -> None:
        self.total += value
        self.n += 1
        if moon == me:
            self.mine += 1
        elif moon >= 0:
            self.against += 1


def _options(actions: Sequence[Action], labels: Sequence[str], tallies: Sequence[_Tally]) -> list[OptionValue]:
    out = [
        OptionValue(a, lab, t.total / t.n, t.mine / t.n, t.against / t.n, t.n)
        for a, lab, t in zip(actions, labels, tallies)
    ]
    # best first; ties keep the options' own order (cards low to high, candidates by rank)
    order = sorted(range(len(out)), key=lambda i: (round(out[i].expected, 9), i))
    return [out[i] for i in order]


def evaluate(
    view: SeatView,
    *,
    simulations: int | None = None,
    think_ms: int | None = None,
    seed: int = 0,
    candidates: int = 6,
    also: Sequence[Action] = (),
    clock: Clock | None = None,
) -> Evaluation:
    """Every option of ``view``'s decision valued from ``view`` alone (see the module's docstring).

    ``simulations``: worlds dealt (each option is played out in every one; default
    :data:`DEFAULT_WORLDS`); ``think_ms`` instead: worlds until that much time is spent (not
    reproducible). ``seed`` seeds the worlds: the same view and seed give the same evaluation.
    ``candidates``: passes valued besides the heuristic one; ``also``: actions to value whatever
    the candidates are (the pass actually made).

    The first call in a process loads the rules kernel (:func:`load_kernel`: seconds, once), so
    call it off any event loop (a worker process or thread)."""
    kind = decision_kind(view)
    if kind is None:
        raise ValueError(f"seat {view.seat} has no decision to review in phase {view.phase.value}")
    if simulations is not None and (type(simulations) is not int or simulations < 1):
        raise ValueError(f"simulations must be a whole number of at least 1, not {simulations!r}")
    if think_ms is not None and (type(think_ms) is not int or think_ms < 1):
        raise ValueError(f"think_ms must be a whole number of at least 1, not {think_ms!r}")
    if simulations is None and think_ms is None:
        simulations = DEFAULT_WORLDS
    load_kernel()
    budget = _Budget(simulations, think_ms, clock or time.perf_counter)
    rng = random.Random(seed)
    if kind == "play":
        return _evaluate_play(view, budget, rng)
    if kind == "pass":
        return _evaluate_pass(view, budget, rng, candidates, also)
    return _evaluate_doubling(view, budget, rng, kind)


def _evaluate_play(view: SeatView, budget: _Budget, rng: random.Random) -> Evaluation:
    me = view.seat
    legal = card_list(view.legal_plays)
    bot = SearchBot(simulations=1)
    sampler = bot.card_sampler(view)
    exact = max(view.cards_left) <= ENDGAME_CARDS
    base = deal_from_view(view, sampler(rng))
    # equivalent cards (same suit and points, nothing another seat may hold between them, no
    # special role) are worth the same in every world: one of each run is played out
    reps = distinct_cards(base, view.legal_plays, score_matters(base))
    rep_of: dict[int, int] = {}
    r = -1
    for c in legal:
        if c in reps:
            r = c
        rep_of[c] = r
    tallies = {c: _Tally() for c in reps}
    worlds = 0
    deal = base
    while budget.more(worlds):
        if worlds:
            deal = base.copy()
            deal.hands = sampler(rng)
        for c in reps:
            child = deal.copy()
            child.play(c)
            value, moon = _outcome(child, me, exact)
            tallies[c].add(value, moon, me)
        worlds += 1
    opts = _options(
        [Play.of(me, c) for c in legal], [format_card(c) for c in legal], [tallies[rep_of[c]] for c in legal]
    )
    note = "exact endgame: the other seats play against this seat" if exact else ""
    return Evaluation("play", opts, worlds, True, note)


def _evaluate_pass(
    view: SeatView, budget: _Budget, rng: random.Random, candidates: int, also: Sequence[Action]
) -> Evaluation:
    rules = view.rules
    me = view.seat
    hand = view.hand
    passes: list[CardSet] = []
    for p in [heuristic_pass(hand, rules), *pass_candidates(hand, rules, candidates)]:
        if p not in passes:
            passes.append(p)
    for a in also:
        if isinstance(a, Pass) and a.cards not in passes and a.cards & hand == a.cards:
            passes.append(a.cards)
    pile = view.phase is Phase.PILE
    tallies = [_Tally() for _ in passes]
    unseen = ALL_CARDS & ~hand
    worlds = 0
    while budget.more(worlds):
        hands = sample_hands(me, hand, unseen, (13, 13, 13, 13), (0, 0, 0, 0), (0, 0, 0, 0), rng)
        theirs = [heuristic_pass(hands[s], rules) if s != me else 0 for s in range(4)]
        pile_order = rng.sample(range(4 * rules.pass_count), 4 * rules.pass_count) if pile else []
        for i, mine in enumerate(passes):
            theirs[me] = mine
            after = after_passing(hands, theirs, view.direction, pile_order, rules.pass_count)
            value, moon = _outcome(start_of_play(rules, view.deal_kind, after, view.leader), me, False)
            tallies[i].add(value, moon, me)
        worlds += 1
    opts = _options([Pass(me, p) for p in passes], [cards_label(p) for p in passes], tallies)
    total = math.comb(hand.bit_count(), rules.pass_count)
    note = f"{len(passes)} of the {total} passes valued: the choice made, search's candidates and the heuristic pass"
    return Evaluation("pass", opts, worlds, False, note)


def _evaluate_doubling(view: SeatView, budget: _Budget, rng: random.Random, kind: str) -> Evaluation:
    me = view.seat
    rules = view.rules
    charging = kind == "charge"
    may = rules.chargeable & ~view.charged[me] if charging else rules.exposable
    cards = card_list(may & view.hand)
    subsets = [to_set(cs) for k in range(len(cards) + 1) for cs in combinations(cards, k)]
    base_charged = view.charged[0] | view.charged[1] | view.charged[2] | view.charged[3]
    base_doubled = base_charged | view.exposed[0] | view.exposed[1] | view.exposed[2] | view.exposed[3]
    tallies = [_Tally() for _ in subsets]
    worlds = 0
    while budget.more(worlds):
        hands = sample_view(view, rng)
        for i, sub in enumerate(subsets):
            ch = base_charged | sub if charging else base_charged
            deal = start_of_play(rules, view.deal_kind, hands[:], view.leader, base_doubled | sub, ch)
            value, moon = _outcome(deal, me, False)
            tallies[i].add(value, moon, me)
        worlds += 1
    make: Callable[[int, CardSet], Action] = Charge if charging else Expose
    opts = _options([make(me, s) for s in subsets], [cards_label(s) for s in subsets], tallies)
    return Evaluation(kind, opts, worlds, True, "")


def load_kernel() -> bool:
    """Load the rules kernel in this process (its rollouts are tens of times faster; a second or
    two, once); False where numba is missing."""
    try:
        from moonshot import kernel
    except ImportError:  # pragma: no cover - numpy is a dependency
        return False
    if not kernel.NUMBA:
        return False
    kernel.warm_up()
    return True


__all__ = [
    "BEST",
    "BLUNDER",
    "DEFAULT_WORLDS",
    "GRADES",
    "INACCURACY",
    "MISTAKE",
    "Evaluation",
    "OptionValue",
    "action_label",
    "cards_label",
    "decision_kind",
    "evaluate",
    "grade",
    "load_kernel",
]
