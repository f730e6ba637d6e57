"""``pass_by``, one bot's passing with another's card play, as an option of any bot: the pass is
the passer's, every other decision (cards, charges, exposure, claims) the card bot's, legal in
every variant; named in the spec; a bad passer is refused with a clear error."""

from __future__ import annotations

import random

import pytest

from moonshot.bots.composite import PASS_PHASES, PassingBy
from moonshot.bots.heuristic import HeuristicBot
from moonshot.bots.noise import NoisyBot
from moonshot.bots.random import RandomBot
from moonshot.bots.registry import UnknownBot, make_bot, spec_of
from moonshot.core.actions import Action
from moonshot.core.engine import Game
from moonshot.core.variants import VARIANTS
from moonshot.core.views import SeatView, seat_view


class Recorder:
    """A bot that plays as ``bot`` and records the phases it was asked in."""

    def __init__(self, bot: object) -> None:
        self.bot = bot
        self.name = "recorder"
        self.phases: list[object] = []

    def act(self, view: SeatView, rng: random.Random) -> Action:
        self.phases.append(view.phase)
        return self.bot.act(view, rng)  # type: ignore[attr-defined]


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_the_pass_is_the_passers_and_every_other_decision_the_card_bots(variant: str) -> None:
    game = Game(VARIANTS[variant], 11)
    bots = []
    for _ in range(4):
        cards, passer = Recorder(HeuristicBot()), Recorder(RandomBot())
        bots.append((PassingBy(cards, passer), cards, passer))  # type: ignore[arg-type]
    rngs = [random.Random(40 + s) for s in range(4)]
    passes = 0
    while not game.over and game.deal_index == 0:
        seat = game.to_act()[0]
        view = seat_view(game, seat)
        action = bots[seat][0].act(view, rngs[seat])
        assert action in view.legal
        passes += view.phase in PASS_PHASES
        game.apply(action)
    for _, cards, passer in bots:
        assert all(ph in PASS_PHASES for ph in passer.phases)
        assert not any(ph in PASS_PHASES for ph in cards.phases)
        assert cards.phases  # the card bot played the deal
    assert passes == sum(len(p.phases) for _, _, p in bots)
    if VARIANTS[variant].pass_cycle[0].offset:  # the first deal passes: the passers made them
        assert passes >= 4


def test_the_pass_equals_the_passers_own() -> None:
    game = Game(VARIANTS["standard"], 5)
    view = seat_view(game, 0)
    assert view.phase in PASS_PHASES
    combined = make_bot("heuristic", pass_by="random")
    assert combined.act(view, random.Random(3)) == RandomBot().act(view, random.Random(3))
    assert combined.act(view, random.Random(3)) != HeuristicBot().act(view, random.Random(3))


def test_the_spec_names_the_passer_and_options_still_apply() -> None:
    bot = make_bot("heuristic", pass_by="random")
    assert isinstance(bot, PassingBy) and bot.name == "heuristic"
    assert spec_of(bot) == "heuristic --pass-by random"
    passer = make_bot("search", simulations=30)
    assert spec_of(make_bot("random", pass_by=passer)) == "random --pass-by 'search --simulations 30'"
    noisy = make_bot("heuristic", pass_by="random", epsilon=0.2)
    assert isinstance(noisy, NoisyBot) and isinstance(noisy.bot, PassingBy)
    assert spec_of(noisy) == "heuristic --epsilon 0.2 --pass-by random"
    assert make_bot("search", simulations=30, pass_by="heuristic").uses_kernel  # type: ignore[attr-defined]


def test_a_bad_passer_is_refused() -> None:
    with pytest.raises(UnknownBot, match="unknown bot 'nosuch'"):
        make_bot("heuristic", pass_by="nosuch")
    with pytest.raises(TypeError, match="pass_by must be a bot or a bot's name"):
        make_bot("heuristic", pass_by=3)
    with pytest.raises(TypeError, match="takes no options"):
        make_bot("level:1", pass_by="heuristic")
