"""Reviewing a finished game: each decision of one seat valued from that seat's view, graded, summed up.

:func:`review_game` replays ``(rules, seed, actions)`` on the engine and, at each decision of the
seat (a card with a choice of two or more, a pass, a Turbo charge, a Trend exposure), hands the
seat's :class:`~moonshot.core.views.SeatView` at that moment (what a bot is given, never the hidden
hands) to :func:`moonshot.bots.review.evaluate`. The choice made is compared with the best option:
its cost is the points it gives up, and :func:`moonshot.bots.review.grade` names it.

A :class:`GameReview` is the JSON of ``moonshot-review/1`` (docs/review.md): the decisions, each
with its options, and a summary per seat and per deal. ``accuracy`` is the share of decisions
graded ``best`` or ``good`` (a cost under the inaccuracy threshold). Forced cards and claims are
not decisions here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from moonshot.bots.review import (
    BLUNDER,
    DEFAULT_WORLDS,
    GRADES,
    INACCURACY,
    MISTAKE,
    action_label,
    decision_kind,
    evaluate,
    grade,
    load_kernel,
)
from moonshot.core.actions import Action, Charge, Expose, Pass, Play, action_from_dict
from moonshot.core.cards import card_list, format_card
from moonshot.core.engine import DealSpec, Game
from moonshot.core.rules import Rules
from moonshot.core.views import SeatView, seat_view

FORMAT = "moonshot-review/1"
BIGGEST = 5  # decisions listed as the biggest mistakes

Progress = Callable[[int, int], None]


class NotOver(ValueError):
    """The game's actions end before the game does: a game is reviewed once it is over."""


@dataclass
class DecisionReview:
    """One reviewed decision, as its JSON says (see docs/review.md)."""

    index: int
    action_index: int
    deal: int
    trick: int | None
    kind: str
    hand: list[str]
    trick_cards: list[dict[str, Any]]
    pass_direction: str | None
    chosen: str
    options: list[dict[str, Any]]
    complete: bool
    best: str
    cost: float
    grade: str
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "action_index": self.action_index,
            "deal": self.deal,
            "trick": self.trick,
            "kind": self.kind,
            "hand": list(self.hand),
            "trick_cards": [dict(t) for t in self.trick_cards],
            "pass_direction": self.pass_direction,
            "chosen": self.chosen,
            "options": [dict(o) for o in self.options],
            "complete": self.complete,
            "best": self.best,
            "cost": self.cost,
            "grade": self.grade,
            "note": self.note,
        }

    @staticmethod
    def from_json(d: dict[str, Any]) -> DecisionReview:
        return DecisionReview(
            index=int(d["index"]),
            action_index=int(d["action_index"]),
            deal=int(d["deal"]),
            trick=None if d.get("trick") is None else int(d["trick"]),
            kind=str(d["kind"]),
            hand=[str(c) for c in d["hand"]],
            trick_cards=[dict(t) for t in d.get("trick_cards", [])],
            pass_direction=d.get("pass_direction"),
            chosen=str(d["chosen"]),
            options=[dict(o) for o in d["options"]],
            complete=bool(d["complete"]),
            best=str(d["best"]),
            cost=float(d["cost"]),
            grade=str(d["grade"]),
            note=str(d.get("note", "")),
        )


def _accuracy(decisions: Sequence[DecisionReview]) -> float:
    if not decisions:
        return 1.0
    return round(sum(1 for d in decisions if d.grade in ("best", "good")) / len(decisions), 4)


@dataclass
class GameReview:
    """One seat's review of one game (``to_json``: the ``moonshot-review/1`` JSON)."""

    seat: int
    variant: str
    budget: dict[str, Any]
    decisions: list[DecisionReview]
    game_id: str | None = None
    thresholds: dict[str, float] = field(
        default_factory=lambda: {"inaccuracy": INACCURACY, "mistake": MISTAKE, "blunder": BLUNDER}
    )

    def summary(self) -> dict[str, Any]:
        ds = self.decisions
        by_grade = {g: 0 for g in GRADES}
        for d in ds:
            by_grade[d.grade] = by_grade.get(d.grade, 0) + 1
        graded = [d for d in ds if d.grade in ("inaccuracy", "mistake", "blunder")]
        biggest = [d.index for d in sorted(graded, key=lambda d: (-d.cost, d.index))[:BIGGEST]]
        deals = []
        for deal in sorted({d.deal for d in ds}):
            mine = [d for d in ds if d.deal == deal]
            deals.append(
                {
                    "deal": deal,
                    "decisions": len(mine),
                    "points_given_up": round(sum(d.cost for d in mine), 3),
                    "accuracy": _accuracy(mine),
                }
            )
        return {
            "decisions": len(ds),
            "points_given_up": round(sum(d.cost for d in ds), 3),
            "accuracy": _accuracy(ds),
            "by_grade": by_grade,
            "biggest": biggest,
            "deals": deals,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "game_id": self.game_id,
            "seat": self.seat,
            "variant": self.variant,
            "budget": dict(self.budget),
            "thresholds": dict(self.thresholds),
            "decisions": [d.to_json() for d in self.decisions],
            "summary": self.summary(),
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> GameReview:
        if data.get("format") != FORMAT:
            raise ValueError(f"not a game review (format {data.get('format')!r}, this moonshot reads {FORMAT})")
        return GameReview(
            seat=int(data["seat"]),
            variant=str(data["variant"]),
            budget=dict(data["budget"]),
            decisions=[DecisionReview.from_json(d) for d in data["decisions"]],
            game_id=data.get("game_id"),
            thresholds={str(k): float(v) for k, v in data["thresholds"].items()},
        )


def _actions(actions: Sequence[Action | dict[str, Any]]) -> list[Action]:
    return [a if isinstance(a, Action) else action_from_dict(a) for a in actions]


def _reviewed(view: SeatView, action: Action) -> bool:
    """Whether ``action`` by ``view``'s seat is a decision the review values."""
    kind = decision_kind(view)
    if kind == "play":
        return isinstance(action, Play) and bool(view.legal_plays & (view.legal_plays - 1))
    if kind == "pass":
        return isinstance(action, Pass)
    if kind == "charge":
        return isinstance(action, Charge)
    if kind == "expose":
        return isinstance(action, Expose)
    return False


def _decisions(
    rules: Rules, seed: int, actions: Sequence[Action | dict[str, Any]], seat: int, deals: Sequence[DealSpec] | None
) -> list[tuple[int, int, SeatView, Action]]:
    """Replay the game: (action index, deal, the seat's view, its action) at each of its decisions.
    Raises :class:`NotOver` when the actions end before the game does."""
    if not 0 <= seat < 4:
        raise ValueError(f"seat must be 0-3, not {seat!r}")
    game = Game(rules, seed, deals, record=False)
    out = []
    for i, a in enumerate(_actions(actions)):
        if a.seat == seat and seat in game.to_act():
            view = seat_view(game, seat)
            if _reviewed(view, a):
                out.append((i, game.deal_index, view, a))
        game.apply(a)
    if not game.over:
        raise NotOver("the game is not over")
    return out


def count_decisions(
    rules: Rules,
    seed: int,
    actions: Sequence[Action | dict[str, Any]],
    seat: int,
    deals: Sequence[DealSpec] | None = None,
) -> int:
    """How many decisions :func:`review_game` will value (for a progress bar's total)."""
    return len(_decisions(rules, seed, actions, seat, deals))


def review_game(
    rules: Rules,
    seed: int,
    actions: Sequence[Action | dict[str, Any]],
    seat: int,
    *,
    deals: Sequence[DealSpec] | None = None,
    simulations: int | None = None,
    think_ms: int | None = None,
    review_seed: int = 0,
    progress: Progress | None = None,
    game_id: str | None = None,
) -> GameReview:
    """Review each decision of ``seat`` in the finished game ``(rules, seed, actions)`` from its
    own view (see the module's docstring). ``simulations``: worlds a decision (default
    :data:`~moonshot.bots.review.DEFAULT_WORLDS`), or ``think_ms`` a decision instead (not
    reproducible); ``review_seed`` seeds the worlds (decision ``i`` of the game's actions gets
    its own seed from it, so one decision's review does not depend on the others'). ``progress``
    is called with (done, total) after each decision. Raises :class:`NotOver` for a game that is
    not over, ValueError for actions that do not replay."""
    found = _decisions(rules, seed, actions, seat, deals)
    if simulations is None and think_ms is None:
        simulations = DEFAULT_WORLDS
    load_kernel()
    total = len(found)
    if progress is not None:
        progress(0, total)
    out: list[DecisionReview] = []
    for n, (i, deal, view, action) in enumerate(found):
        ev = evaluate(
            view,
            simulations=simulations,
            think_ms=think_ms if simulations is None else None,
            seed=decision_seed(review_seed, i),
            also=(action,),
        )
        chosen = ev.option(action)
        assert chosen is not None  # (the action made is always valued)
        cost = round(max(0.0, chosen.expected - ev.best.expected), 3)
        out.append(
            DecisionReview(
                index=n,
                action_index=i,
                deal=deal,
                trick=view.trick_no if ev.kind == "play" else None,
                kind=ev.kind,
                hand=[format_card(c) for c in card_list(view.hand)],
                trick_cards=[{"seat": s, "card": format_card(c)} for s, c in view.trick],
                pass_direction=view.direction.value if ev.kind == "pass" else None,
                chosen=action_label(action),
                options=[o.to_json() for o in ev.options],
                complete=ev.complete,
                best=ev.best.label,
                cost=cost,
                grade=grade(cost),
                note=ev.note,
            )
        )
        if progress is not None:
            progress(n + 1, total)
    budget = {"simulations": simulations, "think_ms": think_ms if simulations is None else None, "seed": review_seed}
    return GameReview(seat, rules.name, budget, out, game_id)


def decision_seed(review_seed: int, action_index: int) -> int:
    """The worlds' seed of the decision at ``action_index`` (public: it reveals nothing)."""
    return review_seed * 1_000_003 + action_index


__all__ = [
    "FORMAT",
    "DecisionReview",
    "GameReview",
    "NotOver",
    "count_decisions",
    "decision_seed",
    "review_game",
]
