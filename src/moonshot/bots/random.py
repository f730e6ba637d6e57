"""The uniform random bot: a legal action chosen uniformly (cards for passes, uniformly too)."""

from __future__ import annotations

import random

from moonshot.actions import AcceptClaim, Action, Claim, Pass, Play, RejectClaim
from moonshot.cards import card_list
from moonshot.engine import Phase
from moonshot.views import SeatView


class RandomBot:
    """Plays a uniformly random legal card; passes random cards; never claims."""

    name = "random"

    def act(self, view: SeatView, rng: random.Random) -> Action:
        if view.phase is Phase.PLAY and view.legal_plays:
            return Play.of(view.seat, rng.choice(card_list(view.legal_plays)))
        if view.phase in (Phase.PASS, Phase.PILE):
            chosen = rng.sample(card_list(view.hand), view.rules.pass_count)
            return Pass(view.seat, sum(1 << c for c in chosen))
        options = [a for a in view.legal if not isinstance(a, Claim)]
        if not options:
            raise ValueError(f"seat {view.seat} has nothing to do in phase {view.phase.value}")
        if view.claimer is not None:
            options = [a for a in options if isinstance(a, (AcceptClaim, RejectClaim))]
        return rng.choice(options)
