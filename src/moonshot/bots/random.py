"""The uniform random bot: a legal action chosen uniformly (cards for passes, uniformly too)."""

from __future__ import annotations

import random
from typing import Any

from moonshot.actions import AcceptClaim, Action, Claim, Pass, Play, RejectClaim
from moonshot.bots.heuristic import claim_is_sure
from moonshot.cards import card_list
from moonshot.engine import Phase
from moonshot.views import SeatView

try:
    from mypy_extensions import mypyc_attr
except ImportError:  # pragma: no cover - without mypy nothing is compiled, and the mark has no use

    def mypyc_attr(*attrs: str, **kwattrs: object) -> Any:  # type: ignore[misc]
        return lambda cls: cls


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled, it may still be subclassed in Python
class RandomBot:
    """Plays a uniformly random legal card; passes random cards; never claims; accepts a claim
    only when it is sure (:func:`~moonshot.bots.heuristic.claim_is_sure`): conceding at random
    would hand points away for nothing."""

    name = "random"

    def answer_claim(self, view: SeatView, claimer: int, rng: random.Random) -> bool:
        return claim_is_sure(view, claimer, view.revealed[claimer] & ~view.played)

    def act(self, view: SeatView, rng: random.Random) -> Action:
        if view.phase is Phase.PLAY and view.legal_plays:
            return Play.of(view.seat, rng.choice(card_list(view.legal_plays)))
        if view.phase in (Phase.PASS, Phase.PILE):
            chosen = rng.sample(card_list(view.hand), view.rules.pass_count)
            return Pass(view.seat, sum(1 << c for c in chosen))
        options = [a for a in view.legal if not isinstance(a, Claim)]
        if not options:
            raise ValueError(f"seat {view.seat} has nothing to do in phase {view.phase.value}")
        claimer = view.claimer
        if claimer is not None:  # a blocking claim waits for our answer
            ok = self.answer_claim(view, claimer, rng)
            return AcceptClaim(view.seat, claimer) if ok else RejectClaim(view.seat, claimer)
        return rng.choice(options)
