"""The search bot: determinized Monte Carlo search (PIMC) over the hidden cards, every variant.

For each decision the bot repeatedly deals the cards it cannot see to the other seats in a way
consistent with everything it knows (:func:`sample_hands`: cards seen, the cards it passed,
voids shown, charges, exposures, claimed hands, hand sizes), then scores each of its options in
that world with a fast playout (:mod:`moonshot.bots.playout`) or, once few cards remain, the
exact endgame solver (:func:`solve`). The same worlds are used for every option (common random
numbers), so the comparison between options is far less noisy than the values themselves.

Options are valued by the deal's final score through :func:`moonshot.core.rules.score_deal`, so moon
shooting (a rollout shooter takes everything) and moon stopping, Trend's x4 moon, Turbo's
negation, charged/exposed doubling and each Kierki contract are all priced by the scoring table.
The objective is *relative*: the bot minimises its own cost minus the mean cost of the other
three (cost = points where lower is better), which is what a duplicate comparison rewards and what
makes charging (it doubles what the others take) worth anything.

Decisions: cards (PIMC, exact at the end; only the learned policy's best few cards in the variants
it was trained for, and one card of each run of equivalent cards), passes (the top candidates of a danger ranking, each
played out in the same sampled worlds, the other seats passing by the same ranking), Turbo
charges and Trend exposures (every subset, played out), Turbo claims (claim when taking every
remaining card beats playing on; accept when conceding them costs less than playing on).

Budget: ``simulations`` (playouts per decision) makes the bot fully deterministic given the
rng passed to :meth:`SearchBot.act`; ``think_ms`` (the default, 200 ms per decision) reads a
clock, so its results depend on the machine and its load. The clock is injectable (``clock=``)
and is the bot's only impurity; it is never read when ``simulations`` is set.
"""

from __future__ import annotations

import inspect
import math
import random
import time
from collections.abc import Callable
from itertools import combinations
from typing import Any

from moonshot.core.actions import AcceptClaim, Action, Charge, Claim, Expose, Pass, Play, RejectClaim
from moonshot.core.cards import (
    ALL_CARDS,
    TEN_CLUBS,
    CardSet,
    card_list,
    to_set,
)
from moonshot.core.engine import Phase
from moonshot.core.rules import MoonRule, score_deal
from moonshot.core.views import SeatView

from .endgame import (
    _distinct,
    _matters,
    _reply_to_trick_end,
    _to_trick_end,
    _valued,
    exact_value,
    minimax,
    relative,
    solve,
)
from .ismcts import check_tree_options
from .passing import choose_pass, pass_candidates
from .playout import (
    MOON_CARDS,
    Deal,
    DealRules,
    Policy,
    finish_costs,
    start_of_play,
    weighted_deal,
)
from .sampling import Inconsistent, quick_hands, quick_sample_view, sample_hands, sample_view
from .tuned import FAST_SAMPLER_RULES, PRIOR_WEIGHT_RULES, TIMED_PRIOR_WEIGHT_RULES, TUNED_RULES, endgame_cards

VALUE_BATCH_WORLDS = 8  # worlds whose value-network leaves go through the network in one batch

Clock = Callable[[], float]


def deal_from_view(view: SeatView, hands: list[CardSet]) -> Deal:
    """The deal in ``view`` with the hidden hands filled in by ``hands``."""
    charged = view.charged[0] | view.charged[1] | view.charged[2] | view.charged[3]
    doubled = charged | view.exposed[0] | view.exposed[1] | view.exposed[2] | view.exposed[3]
    tnw = [0, 0, 0, 0]
    for t in view.tricks:
        tnw[t.winner] |= 1 << t.trick
    if view.trick:
        turn = (view.trick[-1][0] + 1) % 4
    else:
        turn = view.leader
    return Deal(
        DealRules.of(view.rules, view.deal_kind),
        hands,
        turn=turn,
        trick_no=view.trick_no,
        trick=[c for _, c in view.trick],
        tseats=[s for s, _ in view.trick],
        played=view.played,
        led_suits=view.led_suits,
        broken=view.hearts_broken,
        taken=list(view.taken),
        tricks_won=list(view.tricks_won),
        tnw=tnw,
        charged=charged,
        doubled=doubled,
    )


def point_scale(view: SeatView) -> float:
    """The points at stake in ``view``'s deal (every card's points and every trick's, taken as
    positive): what tree values are divided by, so that one exploration constant fits every scoring."""
    sc = view.rules.scoring_for(view.deal_kind)
    return float(sum(abs(p) for p in sc.card_points) + 13 * abs(sc.per_trick)) or 1.0


# ---------------------------------------------------------------------- the bot
class Budget:
    """One decision's budget. Called after each batch (a world's playouts) with the playouts done
    so far: is the budget spent? Under ``simulations`` it counts playouts and never reads the clock.
    Under ``think_ms`` it answers yes once the next batch, as long as the longest batch so far,
    would end past the deadline (a move ends *by* the deadline, not a batch after it; on a loaded
    machine the longest batch includes the time the process was descheduled). It reads the clock
    once a batch: on a CPU clock (``--cpu-time``) a read is a system call of several µs, about a
    playout's cost."""

    __slots__ = ("clock", "deadline", "last", "limit", "longest", "start")

    def __init__(self, clock: Clock, think_ms: int | None, simulations: int | None) -> None:
        self.limit = simulations
        self.clock = clock
        self.longest = 0.0
        if simulations is None:
            assert think_ms is not None
            self.start = self.last = clock()
            self.deadline = self.start + think_ms / 1000.0
        else:
            self.start = self.last = self.deadline = 0.0

    def __call__(self, n: int) -> bool:
        if self.limit is not None:
            return n >= self.limit
        t = self.clock()
        if t - self.last > self.longest:
            self.longest = t - self.last
        self.last = t
        return t + self.longest >= self.deadline

    def lap(self) -> None:
        """Start the next batch's timing now: time spent before it (setting up the decision) still
        counts against the deadline, but is not taken for the length of a batch."""
        if self.limit is None:
            self.last = self.clock()

    def estimate(self, n: int) -> int:
        """The playouts the whole decision can afford, judged from the ``n`` done so far."""
        if self.limit is not None:
            return self.limit
        elapsed = self.clock() - self.start
        if elapsed <= 0.0:
            return n
        return max(n, int(n * (self.deadline - self.start) / elapsed))


def halving_cuts(budget: int, k: int) -> list[int]:
    """Successive halving over ``k`` options with ``budget`` playouts: after how many worlds each
    halving happens (the options still alive keep the better half of their number).

    The budget is split evenly over ceil(log2 k) rounds; a round gives each option alive the same
    number of new worlds (at least one). The last round has no cut: its options run until the
    budget is spent, and the best mean wins."""
    rounds = max(1, (k - 1).bit_length())
    per_round = budget / rounds
    cuts: list[int] = []
    alive = k
    worlds = 0
    for _ in range(rounds - 1):
        worlds += max(1, int(per_round / alive))
        cuts.append(worlds)
        alive = (alive + 1) // 2
    return cuts


ROOT_RULES = ("tree", "halving", "distinct", "flat", "ismcts")
# search's tuned defaults hold where the rules play like those they were measured under (by the
# rules' fields, not their name: moonshot.bots.tuned). Where they were measured (standard, Gym,
# Trend: TUNED_RULES) card play keeps one card per run of equivalent cards and solves exactly from
# four cards each in standard and Gym on a time budget, else two (endgame_cards); elsewhere (Turbo, Kierki,
# Omnibus, where they were not measured better) every legal card is played out and the solver
# starts at three cards each. The compiled sampler deals
# card play's worlds by default in FAST_SAMPLER_RULES (standard, Gym: in Trend two head to heads
# against the classic sampler leaned worse).
SAMPLERS = ("fast", "classic")
# the default prior_weight: the network's log-probability of a card, times this many points,
# counts against the card's mean cost; head to head at 300 playouts 0.3, 1, 2 and 4 were each
# clearly better than none in standard, 4 the most, and 4 was better in Gym and Trend too
# (docs/results.md): PRIOR_WEIGHT_RULES, every rules the shipped network plays in
PRIOR_WEIGHT = 4.0
# on a time budget in standard's rules (TIMED_PRIOR_WEIGHT_RULES) the weight is 1: there a decision
# sees hundreds of worlds, not a hundred, and against pimc:classic at 27 ms of CPU a move the weight
# 2 was better than 4 and 8, and 1 leaned better than 2 (0.22 a deal on 300 deals; a tie, 0.07, on
# 500 fresh ones), and beat pimc:classic by 0.78 over 1,000 fresh deals (docs/results.md)
TIMED_PRIOR_WEIGHT = 1.0
# what ``value`` may name besides a file: the packaged network, or none (a network applies in the
# rules its weights file records: moonshot.bots.tuned)
VALUE_NAMES = ("default", "off")


class SearchBot:
    """Determinized Monte Carlo search with fast playouts and an exact endgame.

    ``think_ms``: time per decision (default 200 ms; machine-dependent results). ``simulations``:
    playouts per decision instead (deterministic; the clock is then never read). ``rollout``: the
    playout policy (``heuristic``/``greedy``, ``noisy``, ``random``). ``endgame``: solve exactly
    once every hand has at most this many cards (default: :func:`~moonshot.bots.tuned.endgame_cards`:
    on a time budget 4 in standard and Gym, else 2 there and in Trend, 3 elsewhere).
    ``others_weight``: the objective is own cost minus this times the others' mean cost (1: the
    duplicate difference; 0: own points only).
    ``inference``: sample with what the play says beyond voids (:mod:`moonshot.bots.inference`).
    ``rollout`` may also be ``alert`` or ``guard`` (moon-aware, :mod:`moonshot.bots.moon`).

    The root decision rule for cards (``root``; default ``distinct`` in :data:`~moonshot.bots.tuned.TUNED_RULES`,
    ``flat`` elsewhere): ``distinct`` plays out one card of
    each run of equivalent cards (same suit and points, every card between them mine or gone, no
    special role: they have the same value in every world), each on every world; ``flat`` plays
    out every legal card (the rule before); ``halving`` is ``distinct`` with successive halving
    (:func:`halving_cuts`: the worse half of the cards alive is dropped after each round of worlds);
    ``tree`` grows a UCT tree in each of ``worlds`` sampled worlds (default 20) over the
    ``distinct`` cards, every seat choosing by UCB1 (constant ``exploration``, default 0.7) on its
    own relative cost (``others_weight`` 1), as ``pimc`` does (:mod:`moonshot.bots.tree`);
    ``tree_distinct`` (default off) lets the tree's nodes below the root expand one card of each
    run of equivalent cards too (judged in the world, where every hand is known); ``per_world=K``
    (default 0: ``worlds`` worlds) deals more worlds as the budget allows, one for every K
    iterations it can afford (estimated after the first round). ``tree`` is not the default: at
    20 ms a move it was not shown better than ``distinct`` against ``pimc`` (docs/results.md).
    ``ismcts`` grows one tree that every sampled world shares (:mod:`moonshot.bots.ismcts`);
    ``puct=C`` (default 0, off) chooses at its every node by PUCT with constant C and the policy
    network's prior for the seat to play (uniform where the network does not play);
    with it, ``leaf_batch=K`` (default 1) values K leaves a network call (virtual loss) and
    ``tree_exact`` (default off) values a leaf by the exact solver once no hand holds more than
    ``endgame`` cards. Not the default (docs/search.md, "Why more time buys little").
    ``pass_value``: how a candidate pass is valued in each sampled world (:mod:`moonshot.bots.passing`):
    ``playout`` (the default) plays the deal out to its end; ``network`` plays the first trick
    and then asks the value network where the deal ends (playouts where there is none: ``value=off``,
    rules it does not play).
    ``moon``: the moon model of card decisions (default ``off``; ``model``: a seat that alone has
    taken moon cards is dealt shooting hands more often, and where it holds one it shoots in the
    playouts while this seat defends; ``field``: also any other seat that can shoot does so in the
    playouts; :mod:`moonshot.bots.moon`). Not the default: at 20 ms a move it conceded more moons.
    ``moon_penalty`` (default 0): in a decision where another seat alone has taken moon cards, a
    playout in which another seat shoots the moon costs this much more than its score.
    ``prior``: where the rules play like those the prior network's weights file records
    (``prior.npz``, a policy network like the ``learned`` bot's; :mod:`moonshot.bots.tuned`: standard, Gym, Trend for
    the shipped one), only the network's ``prior`` best cards are
    played out, so the same budget buys more worlds for each; 0 turns it off. ``network=PATH``:
    the prior is the network in that weights file (``moonshot train-learned --out``) instead of
    the packaged one, so two networks can meet in the arena. ``prior_weight=W``: the card chosen
    is the one with the lowest mean cost minus W times the network's log-probability of it (among
    the cards played out): the network's judgement counts beside the playouts', not only in which
    cards are played out. Default :data:`PRIOR_WEIGHT` (4 points) in
    :data:`~moonshot.bots.tuned.PRIOR_WEIGHT_RULES` where ``prior`` is on (1 point,
    :data:`TIMED_PRIOR_WEIGHT`, on a time budget in standard's rules), 0 (the choice by the
    playouts alone) elsewhere; it does not apply to ``root=tree``.
    ``value``: the value network (:mod:`moonshot.bots.value`) as the leaf evaluator of the card
    playouts in the rules its weights file records: each playout stops at the end of the trick under way and
    the network's expected final costs of the position stand for the rest of the deal
    (None, the default: the packaged network where ``prior`` is on, so ``prior=0`` is still the
    search without any network; ``default``: the packaged network; a path: the network in that
    file, ``moonshot train-value --out``; ``off``: playouts to the end, the search
    before the value network). Leaves where the seat to lead holds fewer than ``value_cards`` cards (default 4) are
    played out to the end as before; ``value_mix=A`` (default 1) values a leaf A times the
    network's estimate plus 1 - A times a playout from it. Not used by ``root=tree``;
    ``moon_penalty`` counts only in the playouts that reach the deal's end.
    ``value_guard=N`` (default 0, off): in a card decision where another seat alone has taken at
    least N moon cards, the value network is not used (playouts to the end, where the greedy
    players shoot and stop moons: the network's own playouts never shoot).
    ``reply`` (default off): where the value network values the playouts, the other seats' cards
    in the trick under way are not the greedy player's: each seat to play takes the card with its
    own lowest relative cost by the network (the rest of the trick played greedily, one network
    call a seat for every root card of the world), so a root card is valued against the replies
    the network expects, at about half the worlds for the same CPU.
    ``lookahead=N`` (default 0, off): where the value network values the playouts, ``N`` more
    tricks are played first, each seat choosing its card by the network (``lookahead_by=self``:
    only this seat; :mod:`moonshot.bots.lookahead`). Not the default: in sampled worlds it was
    worse (docs/search.md, "Why more time buys little").
    ``belief`` (default None, off): in the rules its weights file records every unseen card of a
    card decision's worlds is placed by the odds of the belief network (:mod:`moonshot.bots.belief`:
    who holds it, read from the play so far; ``default``: the packaged network, a path: the one in
    that file, ``moonshot train-belief --out``), dealt by the compiled
    :func:`~moonshot.bots.playout.weighted_deal`. Not the default: not shown better at equal CPU
    (docs/results.md).
    ``sampler`` (card play): ``fast`` deals the worlds with the compiled :func:`quick_sample_view`,
    ``classic`` with :func:`sample_view` (the same distribution, another random stream); default
    ``fast`` in :data:`~moonshot.bots.tuned.FAST_SAMPLER_RULES` (standard, Gym), ``classic`` elsewhere (Trend, Turbo,
    Kierki, Omnibus).
    """

    name = "search"
    # its greedy rollouts and exact endgame run in the rules kernel once the process has loaded it
    # (with the same values): a server loads it in a worker thread when it first seats such a bot
    # (about 180 MB of numba and LLVM, worth it only for them: runtime.table.BotSeat), the arena
    # before its deals; making a bot never loads it (on a server's loop a load would stall every table)
    uses_kernel = True
    slow = True  # it thinks for think_ms per move: servers run it off their event loop

    def __init__(
        self,
        think_ms: int | None = 200,
        simulations: int | None = None,
        rollout: str = "heuristic",
        endgame: int | None = None,
        pass_candidates: int = 10,
        others_weight: float = 1.0,
        clock: Clock | None = None,
        inference: bool = False,
        root: str | None = None,
        prior: int = 3,
        moon: str = "off",
        moon_penalty: float = 0.0,
        sampler: str | None = None,
        worlds: int = 20,
        exploration: float = 0.7,
        tree_distinct: bool = False,
        per_world: int = 0,
        network: str | None = None,
        prior_weight: float | None = None,
        value: str | None = None,
        value_mix: float = 1.0,
        value_cards: int = 4,
        belief: str | None = None,
        value_guard: int = 0,
        reply: bool = False,
        lookahead: int = 0,
        lookahead_by: str = "all",
        puct: float = 0.0,
        leaf_batch: int = 1,
        tree_exact: bool = False,
        pass_value: str = "playout",
    ) -> None:
        from .moon import MOON_MODELS, SEARCH_POLICIES

        if rollout not in SEARCH_POLICIES:
            raise ValueError(f"unknown rollout policy {rollout!r}; known: {', '.join(SEARCH_POLICIES)}")
        if simulations is None and think_ms is None:
            raise ValueError("give think_ms or simulations")
        # (a spec typed by a user, ``serve --bot 'search --think-ms x'``, fails here, not at the first card)
        for option, given in (("think_ms", think_ms), ("simulations", simulations)):
            if given is not None and (type(given) is not int or given < 1):
                raise ValueError(f"{option} must be a whole number of at least 1, not {given!r}")
        if clock is not None and not callable(clock):
            raise ValueError(f"clock must be a function returning seconds, not {clock!r}")
        if root is not None and root not in ROOT_RULES:
            raise ValueError(f"unknown root rule {root!r}; known: {', '.join(ROOT_RULES)}")
        self.root = root
        if moon not in MOON_MODELS:
            raise ValueError(f"unknown moon model {moon!r}; known: {', '.join(MOON_MODELS)}")
        self.moon = moon
        self.moon_penalty = moon_penalty
        if sampler is not None and sampler not in SAMPLERS:
            raise ValueError(f"unknown sampler {sampler!r}; known: {', '.join(SAMPLERS)}")
        self.sampler = sampler
        if worlds < 1:
            raise ValueError("worlds must be at least 1")
        self.worlds = worlds
        self.exploration = exploration
        self.tree_distinct = tree_distinct
        if per_world < 0:
            raise ValueError("per_world must be 0 (a fixed number of worlds) or the iterations a world")
        self.per_world = per_world
        if prior < 0:
            raise ValueError("prior must be 0 (off) or the number of cards to search")
        self.prior_top = prior
        if prior_weight is not None and not (
            isinstance(prior_weight, (int, float))
            and not isinstance(prior_weight, bool)
            and 0 <= prior_weight < math.inf
        ):  # (a NaN or an infinite weight would make the choice arbitrary: refused like a negative one)
            raise ValueError(f"prior_weight must be 0 (off) or a positive number of points, not {prior_weight!r}")
        self.prior_weight = prior_weight
        self.network = network
        if network is not None:
            from .learned import policy_file

            policy_file(network)  # a missing or foreign file is an error now, not at the first card
        self.value = value
        if value is not None and value not in VALUE_NAMES:
            from .value import value_file

            value_file(value)  # a missing or foreign file is an error now, not at the first card
        if not (isinstance(value_mix, (int, float)) and not isinstance(value_mix, bool) and 0 < value_mix <= 1):
            raise ValueError(f"value_mix must be a number in (0, 1], not {value_mix!r}")
        self.value_mix = float(value_mix)
        if value_cards < 2:
            raise ValueError("value_cards must be at least 2")
        self.value_cards = value_cards
        if value_guard < 0:
            raise ValueError("value_guard must be 0 (off) or a number of moon cards")
        self.value_guard = value_guard
        if not isinstance(reply, bool):
            raise ValueError(f"reply must be true or false, not {reply!r}")
        self.reply = reply
        if type(lookahead) is not int or lookahead < 0:
            raise ValueError(f"lookahead must be 0 (off) or a number of tricks, not {lookahead!r}")
        self.lookahead = lookahead  # (moonshot.bots.lookahead)
        if lookahead_by not in ("all", "self"):
            raise ValueError(f"lookahead_by must be all or self, not {lookahead_by!r}")
        self.lookahead_by = lookahead_by
        check_tree_options(root, puct, leaf_batch, tree_exact)
        self.puct = float(puct)  # (moonshot.bots.ismcts.grow_puct_tree)
        self.leaf_batch = leaf_batch
        self.tree_exact = tree_exact
        if pass_value not in ("playout", "network"):
            raise ValueError(f"unknown pass_value {pass_value!r}; known: playout, network")
        self.pass_value = pass_value
        self.belief = belief
        if belief is not None and belief != "default":
            from .belief import belief_file

            belief_file(belief)  # a missing or foreign file is an error now, not at the first card
        self.think_ms = think_ms
        self.simulations = simulations
        self.rollout = rollout
        self.policy: Policy = SEARCH_POLICIES[rollout]
        self.inference = inference
        self.endgame = endgame
        self.n_pass_candidates = pass_candidates
        self.others_weight = others_weight
        self.clock: Clock = clock if clock is not None else time.perf_counter
        # the last decision's trees (pimc, root=tree), freed by the next decision inside its own
        # budget: freeing thousands of nodes takes milliseconds, which past a deadline made every
        # tree decision late
        self._spent_trees: list[object] = []

    # ------------------------------------------------------------------ budget
    def _budget(self) -> Budget:
        """The decision's budget (see :class:`Budget`); the last decision's trees are freed in it."""
        budget = Budget(self.clock, self.think_ms, self.simulations)
        if self._spent_trees:
            self._spent_trees.clear()
            budget.lap()  # (counted against the deadline, not taken for a batch's length)
        return budget

    def _moon_penalty(self, view: SeatView) -> float:
        """What a playout in which another seat shoots the moon costs on top of its score: the
        ``moon_penalty`` option in a decision where another seat alone has taken moon cards, else 0."""
        if not self.moon_penalty:
            return 0.0
        from .moon import threat_of

        return self.moon_penalty if threat_of(view) >= 0 else 0.0

    def _moon_threat(self, view: SeatView) -> int:
        """The seat the moon model watches in this card decision (-1: none, or the model is off)."""
        if self.moon == "off":
            return -1
        from .moon import threat_of

        return threat_of(view)

    def _card_policy(self, view: SeatView) -> Policy:
        """The rollout policy for ``view``'s card decision (a seat-aware rollout is built for it)."""
        from .moon import SEAT_POLICIES, model_policy, open_to

        me = view.seat
        if self.moon == "field" and view.rules.moon is not MoonRule.NONE:
            threats = [s for s in range(4) if s != me and open_to(view.taken, s)]
            if threats:
                return model_policy(me, threats)
        x = self._moon_threat(view)
        if x >= 0:
            return model_policy(me, [x])
        factory = SEAT_POLICIES.get(self.rollout)
        return factory(me) if factory is not None else self.policy

    def card_sampler(self, view: SeatView) -> Callable[[random.Random], list[CardSet]]:
        """The worlds this bot deals for ``view``'s card decision (what the game review deals too)."""
        return self._card_sampler(view)

    def _card_sampler(self, view: SeatView) -> Callable[[random.Random], list[CardSet]]:
        """The worlds for a card decision: :meth:`_sampler`'s, leaning towards a moon threat's shooting hands."""
        base = self._sampler(view)
        x = self._moon_threat(view)
        if x < 0:
            return base
        from .moon import threat_sampler

        return threat_sampler(view, x, base)

    def _sampler(self, view: SeatView) -> Callable[[random.Random], list[CardSet]]:
        """Deals of the hidden cards for ``view``: with ``inference``, weighed by what the play says;
        with ``belief``, every unseen card placed by the belief network's odds (``inference``'s on
        top) by the compiled :func:`~moonshot.bots.playout.weighted_deal`; else
        :func:`quick_sample_view` (``sampler="fast"``, the default in
        :data:`~moonshot.bots.tuned.FAST_SAMPLER_RULES`) or :func:`sample_view` (``"classic"``). (With ``inference``
        and the fast sampler, the cards the evidence does not place are dealt by the compiled
        sampler.)"""
        fast = self.sampler == "fast" or (self.sampler is None and view.rules in FAST_SAMPLER_RULES)
        net = self._belief_net(view)
        if not self.inference and net is None:
            return (lambda rng: quick_sample_view(view, rng)) if fast else (lambda rng: sample_view(view, rng))
        from .inference import infer, sample_inferred

        if net is None:
            facts = infer(view)
            return lambda rng: sample_inferred(view, facts, rng, fast)
        from .belief import deal_weights, possible

        evidence = infer(view) if self.inference else None
        factors = evidence.soft if evidence is not None else None
        voids = list(evidence.voids if evidence is not None else view.voids)
        mask = possible(view)
        weights = deal_weights(view, net.probs(view, mask), mask, factors)
        me, hand, unseen = view.seat, view.hand, view.unseen
        counts, known = list(view.cards_left), list(view.known_cards)

        def deal(rng: random.Random) -> list[CardSet]:
            hands = weighted_deal(me, hand, unseen, counts, known, voids, weights, rng)
            if hands is None:  # (a position the weighted dealer finds no deal for: the plain sampler's)
                return sample_hands(me, hand, unseen, counts, known, voids, rng)
            return hands

        return deal

    def _belief_net(self, view: SeatView) -> Any:
        """The belief network that deals this card decision's worlds (None: none, the default), in
        the rules its weights file records only."""
        if self.belief is None or view.phase is not Phase.PLAY:
            return None
        from .belief import belief_file, default_belief

        net = default_belief() if self.belief == "default" else belief_file(self.belief)
        return net if view.rules in net.rules else None

    # ------------------------------------------------------------------ act
    def act(self, view: SeatView, rng: random.Random) -> Action:
        ph = view.phase
        seat = view.seat
        if ph is Phase.PLAY:
            claimer = view.claimer
            if claimer is not None:  # a blocking claim: play waits for our answer
                ok = self.answer_claim(view, claimer, rng)
                return AcceptClaim(seat, claimer) if ok else RejectClaim(seat, claimer)
            # a claim turned down is not made again before playing a card: under concurrent
            # claims the engine would allow it at once, and the same answers would follow
            can_claim = (
                view.revealed[seat] != view.hand
                and any(isinstance(a, Claim) for a in view.legal)
                and _claim_may_pay(view)
            )
            if not can_claim and view.legal_plays & (view.legal_plays - 1) == 0:
                return Play.of(seat, view.legal_plays.bit_length() - 1)
            card, value = self._choose_card(view, rng)
            if can_claim and self._should_claim(view, value):
                return Claim(seat)
            return Play.of(seat, card)
        if ph is Phase.PASS or ph is Phase.PILE:
            return Pass(seat, self._choose_pass(view, rng))
        if ph is Phase.CHARGE:
            return Charge(seat, self._choose_doubling(view, rng, view.rules.chargeable & ~view.charged[seat]))
        if ph is Phase.EXPOSE:
            return Expose(seat, self._choose_doubling(view, rng, view.rules.exposable))
        raise ValueError(f"seat {seat} has nothing to do in phase {ph.value}")

    # ------------------------------------------------------------------ cards
    def _choose_card(self, view: SeatView, rng: random.Random) -> tuple[int, float]:
        me = view.seat
        legal = view.legal_plays
        spent = self._budget()
        endgame = self.endgame
        if endgame is None:
            endgame = endgame_cards(view.rules, timed=self.simulations is None)
        exact = max(view.cards_left) <= endgame
        policy = self._card_policy(view)
        penalty = self._moon_penalty(view)
        w = self.others_weight
        sampler = self._card_sampler(view)
        timed = self.simulations is None
        base = deal_from_view(view, sampler(rng))
        deal = base
        root = self.root
        if root is None:
            root = "distinct" if view.rules in TUNED_RULES else "flat"
        if root == "flat":
            cards = card_list(legal)
        else:
            # equivalent cards (same suit and points, nothing that another seat may hold between
            # them, no special role) have the same value in every world: keep the lowest of each run
            cards = _distinct(deal, legal, _matters(deal))
        bonus: list[float] | None = None
        weight = 0.0 if root in ("tree", "ismcts") else self._prior_weight(view)  # (trees choose by their own visits)
        if len(cards) > 1 and (weight or (self.prior_top and len(cards) > self.prior_top)):
            cards, bonus = self._with_prior(view, cards, weight)
        spent.lap()
        if root == "tree" and not exact and len(cards) > 1:
            return self._grow_trees(view, base, cards, sampler, policy, penalty, spent, rng)
        if root == "ismcts" and not exact and len(cards) > 1 and self.puct:
            return self._grow_puct_tree(view, base, cards, sampler, policy, spent, endgame, rng)
        if root == "ismcts" and not exact and len(cards) > 1:  # (one tree the worlds share: bots/ismcts.py)
            from .ismcts import grow_shared_tree

            net = self._value_net(view)
            return grow_shared_tree(
                cards,
                base,
                sampler,
                policy,
                spent,
                self.exploration,
                rng,
                point_scale(view),
                net,
                self.value_cards,
                _matters(base),
                self._spent_trees,
            )
        k = len(cards)
        totals = [0.0] * k
        alive = list(range(k))
        cuts: list[int] = []
        if root == "halving" and k > 2 and not timed:
            assert self.simulations is not None
            cuts = halving_cuts(self.simulations, k)
        worlds = 0
        done = 0
        net = None if exact else self._value_net(view)
        mix = self.value_mix
        # The value network's leaves are valued a few worlds at a time (one NumPy batch for all
        # of them: a call's fixed cost is most of a small batch's), and each world's values then
        # added to the totals in world order, so the sums are those of one world at a time. A mix
        # with playouts draws random numbers while valuing, so it values each world at once.
        per_batch = VALUE_BATCH_WORLDS if mix >= 1.0 else 1
        pending: list[tuple[list[int], list[float], list[tuple[int, Deal]]]] = []

        def flush() -> None:
            if not pending:
                return
            from .value import leaf_costs

            costs = leaf_costs(net, [c for _, _, leaves in pending for _, c in leaves]) if net is not None else []
            at = 0
            for cards_in, vals, leaves in pending:
                for i, child in leaves:
                    v = relative(costs[at], me, w)
                    at += 1
                    if mix < 1.0:
                        v = mix * v + (1.0 - mix) * relative(finish_costs(child, policy, rng), me, w)
                    vals[i] = v
                for i in cards_in:
                    totals[i] += vals[i]
            pending.clear()

        replies = self.reply and net is not None
        deep = self.lookahead if net is not None else 0  # (more tricks by the network's choices)
        matters = _matters(base) if replies or deep else 0
        while True:
            # (the clock is read once a world, by ``spent``: a CPU clock's read costs about as
            # much as a playout to the trick's end, and the budget already stops a world early)
            values = [0.0] * k
            leaves: list[tuple[int, Deal]] = []
            if replies or deep:
                # the other seats' cards of this trick chosen by the network, every root card's
                # children a level at a time (one network call a level)
                kids: dict[int, Deal] = {}
                for i in alive:
                    kids[i] = child = deal.copy()
                    child.play(cards[i])
                if replies:
                    _reply_to_trick_end(list(kids.values()), net, policy, rng, w, self.value_cards, matters)
                else:
                    for child in kids.values():
                        _to_trick_end(child, policy, rng)
                if deep:
                    from .lookahead import next_tricks

                    by = me if self.lookahead_by == "self" else -1
                    next_tricks(list(kids.values()), deep, net, policy, rng, w, self.value_cards, matters, by)
            for i in alive:
                if replies or deep:
                    child = kids[i]
                else:
                    child = deal.copy()
                    child.play(cards[i])
                if exact:
                    values[i] = exact_value(child, me, w)
                    continue
                if net is not None:
                    if not (replies or deep):
                        _to_trick_end(child, policy, rng)
                    if _valued(child, self.value_cards):
                        leaves.append((i, child))  # (valued with the batch's other leaves, below)
                        continue
                if penalty:
                    values[i] = relative(child.finish(policy, rng), me, w)
                    if _moon_by_other(child, me):
                        values[i] += penalty
                else:
                    values[i] = relative(finish_costs(child, policy, rng), me, w)
            pending.append((alive, values, leaves))
            if len(pending) >= per_batch:
                flush()
            worlds += 1
            done += len(alive)
            if len(cards) == 1 and worlds >= 8:
                break
            if root == "halving" and timed and worlds == 1 and k > 2:
                # the playouts this decision can afford, estimated from the first world's time
                cuts = halving_cuts(spent.estimate(done), k)
            if cuts and worlds >= cuts[0]:
                flush()
            while cuts and worlds >= cuts[0]:
                cuts.pop(0)
                # every option still alive has seen the same worlds: keep the better half
                alive = sorted(alive, key=lambda i: (totals[i], i))
                alive = sorted(alive[: (len(alive) + 1) // 2])
            if spent(done):
                break
            # (the same deal as deal_from_view(view, hands): only the hidden hands differ)
            deal = base.copy()
            deal.hands = sampler(rng)
        flush()
        if bonus is not None:
            # the network's log-probability, weighted, against the playouts' mean (a PUCT-like
            # prior on the decision itself, not only on which cards are played out)
            best = min(alive, key=lambda i: (totals[i] / worlds - bonus[i], i))
        else:
            best = min(alive, key=lambda i: (totals[i], i))
        return cards[best], totals[best] / worlds

    def _grow_trees(
        self,
        view: SeatView,
        first: Deal,
        cards: list[int],
        sampler: Callable[[random.Random], list[CardSet]],
        policy: Policy,
        penalty: float,
        spent: Budget,
        rng: random.Random,
    ) -> tuple[int, float]:
        """``root=tree``: a UCT tree in each of ``worlds`` sampled worlds over ``cards`` (the
        first world is ``first``; :func:`moonshot.bots.tree.grow_trees`)."""
        from .tree import grow_trees

        me = view.seat
        pending = [first]

        def world(rng: random.Random) -> Deal:
            if pending:
                return pending.pop()
            d = first.copy()
            d.hands = sampler(rng)
            return d

        moon = (lambda d: penalty if _moon_by_other(d, me) else 0.0) if penalty else None
        choices = None
        if self.tree_distinct:
            matters = _matters(first)
            choices = lambda d: to_set(_distinct(d, d.legal(), matters))  # noqa: E731
        return grow_trees(
            cards,
            world,
            policy,
            spent,
            self._tree_worlds(len(cards)),
            self.exploration,
            rng,
            point_scale(view),
            moon,
            choices,
            self.per_world,
            spent.estimate,
            self._spent_trees,
        )

    def _grow_puct_tree(
        self,
        view: SeatView,
        base: Deal,
        cards: list[int],
        sampler: Callable[[random.Random], list[CardSet]],
        policy: Policy,
        spent: Budget,
        endgame: int,
        rng: random.Random,
    ) -> tuple[int, float]:
        """``root=ismcts`` with ``puct``: the shared tree with the policy network's prior at every
        node where the network plays (:func:`moonshot.bots.ismcts.grow_puct_tree`)."""
        from .ismcts import grow_puct_tree, network_prior

        prior = None
        root_logits = self._prior_scores(view, cards)
        if root_logits is not None:
            from .learned import default_prior, policy_file

            prior = network_prior(view, policy_file(self.network) if self.network is not None else default_prior())
        return grow_puct_tree(
            cards,
            root_logits,
            base,
            sampler,
            policy,
            spent,
            self.puct,
            rng,
            point_scale(view),
            self._value_net(view),
            self.value_cards,
            _matters(base),
            view.voids,
            prior,
            self.leaf_batch,
            endgame if self.tree_exact else 0,
            self._spent_trees,
        )

    def _tree_worlds(self, n_cards: int) -> int:
        """How many worlds the trees grow over ``n_cards`` root cards: ``worlds``, and under a
        playout budget no more than give each root card one playout in each."""
        if self.simulations is None:
            return self.worlds
        return max(1, min(self.worlds, self.simulations // max(1, n_cards)))

    def _value_net(self, view: SeatView) -> Any:
        """The value network that scores this decision's playouts at the end of the current trick
        (None: the playouts run to the end of the deal). By default the packaged one in
        the rules its weights file records, where the prior is on; ``value=off`` never, ``value=PATH`` that file's."""
        value = self.value
        if value == "off" or self._guarded(view):
            return None
        if value is None:  # the default: the packaged network where the prior is on (prior=0: no network)
            if not self.prior_top:
                return None
            value = "default"
        try:
            from .value import default_value, value_file
        except ImportError:  # pragma: no cover - NumPy is a dependency; without it, playouts to the end
            return None
        net = default_value() if value == "default" else value_file(value)
        return net if view.rules in net.rules else None

    def _guarded(self, view: SeatView) -> bool:
        """``value_guard``: another seat alone has taken at least that many moon cards (where the
        rules have a moon), so this decision's playouts run to the deal's end, where the greedy
        players shoot and stop moons (the value network's playouts never shoot)."""
        if not self.value_guard:
            return False
        from .moon import MOON_CARDS, threat_of

        x = threat_of(view)
        return x >= 0 and (view.taken[x] & MOON_CARDS).bit_count() >= self.value_guard

    def _prior_weight(self, view: SeatView) -> float:
        """The ``prior_weight`` of this decision: the option, or by default :data:`PRIOR_WEIGHT`
        in :data:`~moonshot.bots.tuned.PRIOR_WEIGHT_RULES` where the prior is on (on a time budget
        :data:`TIMED_PRIOR_WEIGHT` in :data:`~moonshot.bots.tuned.TIMED_PRIOR_WEIGHT_RULES`), and 0
        elsewhere (so ``prior=0`` is still the search without the network)."""
        if self.prior_weight is not None:
            return self.prior_weight
        if not self.prior_top or view.rules not in PRIOR_WEIGHT_RULES:
            return 0.0
        if self.simulations is None and view.rules in TIMED_PRIOR_WEIGHT_RULES:
            return TIMED_PRIOR_WEIGHT
        return PRIOR_WEIGHT

    def _prior_scores(self, view: SeatView, cards: list[int]) -> dict[int, float] | None:
        """The learned policy's score (a logit) of each of ``cards`` (the cards a world is played
        out with); None where the network does not play (rules its weights file does not record, no NumPy).

        The network scores every legal card; a card left out of ``cards`` as equivalent to a lower
        one lends its score to that one (each card scores its run's best)."""
        try:
            from .learned import card_features, default_prior, policy_file
        except ImportError:  # pragma: no cover - NumPy is a dependency; without it, no prior
            return None
        policy = policy_file(self.network) if self.network is not None else default_prior()
        if view.rules not in policy.rules:
            return None
        legal = card_list(view.legal_plays)
        scores = policy.scores(card_features(view, legal))
        keep = set(cards)
        rep = -1
        best: dict[int, float] = {}
        for c, score in zip(legal, scores.tolist()):
            if c in keep:
                rep = c  # (a card dropped as equivalent follows the card kept for its run)
            if rep >= 0 and score > best.get(rep, -1e30):
                best[rep] = score
        return best

    def _prior_top(self, scores: dict[int, float]) -> list[int]:
        """The ``prior`` best-scored cards, in card order."""
        return sorted(sorted(scores, key=lambda c: (-scores[c], c))[: self.prior_top])

    def _prior_cards(self, view: SeatView, cards: list[int]) -> list[int]:
        """The learned policy's ``prior`` best of ``cards``, in card order; all of ``cards`` where
        the network does not play."""
        scores = self._prior_scores(view, cards)
        return cards if scores is None else self._prior_top(scores)

    def _with_prior(self, view: SeatView, cards: list[int], weight: float) -> tuple[list[int], list[float] | None]:
        """``cards`` cut to the ``prior`` best (if more), and with a ``weight`` each one's bonus:
        ``weight`` times the network's log-probability of it among the cards kept (else None)."""
        scores = self._prior_scores(view, cards)
        if scores is None:
            return cards, None
        if self.prior_top and len(cards) > self.prior_top:
            cards = self._prior_top(scores)
        if not weight:
            return cards, None
        top = max(scores[c] for c in cards)
        norm = top + math.log(sum(math.exp(scores[c] - top) for c in cards))
        return cards, [weight * (scores[c] - norm) for c in cards]

    def _should_claim(self, view: SeatView, value: float) -> bool:
        """Claim when taking every remaining card is worth more than the best play."""
        me = view.seat
        rest = ALL_CARDS & ~view.played
        for _, c in view.trick:
            rest |= 1 << c
        taken = list(view.taken)
        taken[me] |= rest
        claimed = _claim_costs(view, taken)
        v = relative(claimed, me, self.others_weight)
        if v < value - 0.5:
            return True
        # a claim that changes nothing (no points left) just ends the deal sooner
        sc = view.rules.scoring_for(view.deal_kind)
        # (value is an average over worlds: equal costs may differ in the last bits)
        return not rest & sc.cards_with_points and not sc.per_trick and v <= value + 1e-9

    def answer_claim(self, view: SeatView, claimer: int, rng: random.Random) -> bool:
        """Accept when conceding every remaining card to the claimer costs no more than playing on."""
        me = view.seat
        rest = ALL_CARDS & ~view.played
        for _, c in view.trick:
            rest |= 1 << c
        taken = list(view.taken)
        taken[claimer] |= rest
        conceded = relative(_claim_costs(view, taken), me, self.others_weight)
        spent = self._budget()
        total = 0.0
        n = 0
        sampler = self._sampler(view)
        while n == 0 or not spent(n):
            deal = deal_from_view(view, sampler(rng))
            total += relative(self._finish(deal, rng), me, self.others_weight)
            n += 1
        return conceded <= total / n + 0.25

    def _finish(self, deal: Deal, rng: random.Random) -> tuple[int, ...]:
        """One playout of ``deal`` to its end with the rollout policy (passing, doubling and
        claims): the costs per seat."""
        return finish_costs(deal, self.policy, rng)

    # ------------------------------------------------------------------ passing
    def _choose_pass(self, view: SeatView, rng: random.Random) -> CardSet:
        candidates = pass_candidates(view.hand, view.rules, self.n_pass_candidates)
        if len(candidates) == 1:
            return candidates[0]
        net = self._value_net(view) if self.pass_value == "network" else None
        deal = self._pass_hands(view)
        return choose_pass(
            view, candidates, self._budget(), self._finish, rng, self.others_weight, net, self.policy, deal
        )

    def _pass_hands(self, view: SeatView) -> Callable[[random.Random], list[CardSet]] | None:
        """How a pass decision deals its worlds' four hands (None: the unseen cards dealt uniformly)."""
        return None

    # ------------------------------------------------------------------ charging / exposing
    def _choose_doubling(self, view: SeatView, rng: random.Random, options: CardSet) -> CardSet:
        """Which of ``options`` to charge (Turbo) or expose (Trend): every subset, played out."""
        opts = card_list(options & view.hand)
        if not opts:
            return 0
        subsets = [to_set(cs) for k in range(len(opts) + 1) for cs in combinations(opts, k)]
        me = view.seat
        rules = view.rules
        spent = self._budget()
        totals = [0.0] * len(subsets)
        worlds = 0
        done = 0
        base_charged = view.charged[0] | view.charged[1] | view.charged[2] | view.charged[3]
        base_doubled = base_charged | view.exposed[0] | view.exposed[1] | view.exposed[2] | view.exposed[3]
        charging = view.phase is Phase.CHARGE
        while worlds == 0 or not spent(done):
            # (Turbo's keeper hand charges before its pile: the hands are played as dealt)
            hands = sample_view(view, rng)
            for i, sub in enumerate(subsets):
                ch = base_charged | sub if charging else base_charged
                deal = start_of_play(rules, view.deal_kind, hands[:], view.leader, base_doubled | sub, ch)
                totals[i] += relative(self._finish(deal, rng), me, self.others_weight)
            worlds += 1
            done += len(subsets)
        # doubling raises the stakes: only do it when the playouts say it pays (ties: fewer cards)
        best = min(range(len(subsets)), key=lambda i: (totals[i] / worlds + 0.1 * subsets[i].bit_count(), i))
        return subsets[best]


# search-defend's defaults where they differ from search's (DefendingSearchBot)
DEFENCE: dict[str, Any] = {
    "moon": "field",
    "moon_penalty": 300.0,
    "value": "off",
    "prior": 6,
    "prior_weight": 2.0,
    "belief": "default",
    "inference": True,
}


class DefendingSearchBot(SearchBot):
    """``search`` set up for a field that goes for the moon (``search-defend``).

    Its defaults differ from ``search``'s in the seven options of :data:`DEFENCE`, each of which
    may still be given: ``moon="field"`` (in the playouts every other seat whose sampled hand can
    shoot does, from the first trick), ``moon_penalty=300`` (where another seat alone has taken
    moon cards, a playout that ends in another seat's moon costs 300 points more), ``value="off"``
    (playouts to the deal's end: the value network stops them at the trick's end, before any moon
    shows), ``prior=6`` and ``prior_weight=2`` (the network, trained where nobody shoots from the
    first trick, cuts less and votes less against the card that stops a moon), ``belief="default"``
    and ``inference=True`` (the worlds dealt by what the play says, shooting hands included).
    Against three ``shooter`` it concedes about half the moons ``search`` does (45% at 200
    playouts a move) and scores no worse against them; in ordinary play it loses about 1.4 points
    a deal to ``search`` (docs/search.md), and against three ``pimc`` it concedes
    fewer moons too (42% of ``search``'s at 20 ms, 71% at 50 playouts) but scores 0.85 a deal
    worse than ``search`` at 20 ms: moon defence pays only
    against a weak field that shoots, so it is a bot of its own, not ``search``'s default.
    """

    name = "search-defend"

    def __init__(self, **options: Any) -> None:
        super().__init__(**{**DEFENCE, **options})


# its signature is search's with DEFENCE's defaults: what the arena, the servers and the
# ratings read to learn which options it takes (a budget, a clock) and which were changed
_SIG = inspect.signature(SearchBot)
DefendingSearchBot.__signature__ = _SIG.replace(  # type: ignore[attr-defined]
    parameters=[p.replace(default=DEFENCE.get(p.name, p.default)) for p in _SIG.parameters.values()]
)


def _moon_by_other(deal: Deal, me: int) -> bool:
    """Another seat than ``me`` took every heart and the queen of spades in ``deal``."""
    return any(s != me and deal.taken[s] & MOON_CARDS == MOON_CARDS for s in range(4))


def _claim_may_pay(view: SeatView) -> bool:
    """Whether claiming could beat playing on: a moon is still open to this seat (nobody else has
    taken a moon card), or nothing left can change the score (a claim just ends the deal)."""
    me = view.seat
    others = 0
    for s in range(4):
        if s != me:
            others |= view.taken[s]
    if not others & MOON_CARDS:
        return True
    sc = view.rules.scoring_for(view.deal_kind)
    rest = ALL_CARDS & ~view.played
    for _, c in view.trick:
        rest |= 1 << c
    matters = sc.cards_with_points | (1 << TEN_CLUBS if view.rules.ten_of_clubs_multiplier != 1 else 0)
    return not sc.per_trick and not rest & matters


def _claim_costs(view: SeatView, taken: list[CardSet]) -> tuple[int, ...]:
    rules = view.rules
    tnw = [0, 0, 0, 0]
    for t in view.tricks:
        tnw[t.winner] |= 1 << t.trick
    doubled = 0
    for s in range(4):
        doubled |= view.charged[s] | view.exposed[s]
    scores, _ = score_deal(rules, view.deal_kind, taken, tnw, view.tricks_won, doubled)
    if rules.negative_scores:
        return tuple(-x for x in scores)
    return scores


# the helpers the game review (bots/review.py) values options with, under public names
distinct_cards = _distinct
score_matters = _matters

__all__ = [
    "DEFENCE",
    "Budget",
    "DefendingSearchBot",
    "Inconsistent",
    "SearchBot",
    "deal_from_view",
    "distinct_cards",
    "minimax",
    "quick_hands",
    "quick_sample_view",
    "relative",
    "sample_hands",
    "sample_view",
    "score_matters",
    "solve",
]
