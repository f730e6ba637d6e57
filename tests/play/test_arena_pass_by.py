"""The arena's ``pass_by=SPEC``: one bot's passing with another's card play in a seat spec. The
passer's spec runs to the end (its own options included), is made as a seat's (the run's budget
and clock reach it, a preset fixes its own), and the combined seats play legal deals."""

from __future__ import annotations

import pytest

from moonshot.bots.composite import PassingBy
from moonshot.bots.registry import UnknownBot, spec_of
from moonshot.core.variants import VARIANTS
from moonshot.play.arena import ArenaConfig, arena_bot, bot_spec, play_deal, summarise


def test_pass_by_takes_the_rest_of_the_spec() -> None:
    assert bot_spec("search:think_ms=5,pass_by=pimc:classic") == ("search", {"think_ms": 5, "pass_by": "pimc:classic"})
    assert bot_spec("heuristic:pass-by=search:think_ms=40,prior=0") == (
        "heuristic",
        {"pass_by": "search:think_ms=40,prior=0"},
    )
    assert bot_spec("heuristic:pass_by=random") == ("heuristic", {"pass_by": "random"})
    assert bot_spec("pimc:classic,pass_by=heuristic") == ("pimc", {"preset": "classic", "pass_by": "heuristic"})


def test_the_passer_is_made_as_a_seat_is() -> None:
    config = ArenaConfig(simulations=40)
    bot = arena_bot("heuristic:pass_by=search:prior=0", config)
    assert isinstance(bot, PassingBy)
    assert bot.passer.simulations == 40  # type: ignore[attr-defined]  # the run's budget reached it
    assert spec_of(bot) == "heuristic --pass-by 'search --prior 0 --simulations 40'"
    classic = arena_bot("heuristic:pass_by=pimc:classic", config)
    assert classic.passer.simulations == 9990  # type: ignore[attr-defined]  # the preset's own


@pytest.mark.parametrize(
    ("spec", "error", "text"),
    [
        ("search:pass_by=", ValueError, "pass_by needs a bot spec"),
        ("search:pass_by= ", ValueError, "pass_by needs a bot spec"),
        ("search:pass_by=nosuch", UnknownBot, "unknown bot 'nosuch'"),
        ("heuristic:pass_by=pimc:bogus", ValueError, "bad bot option 'bogus'"),
        ("heuristic:pass_by=search:nosuch=1", TypeError, "nosuch"),
    ],
)
def test_a_bad_pass_by_is_refused(spec: str, error: type[Exception], text: str) -> None:
    with pytest.raises(error, match=text):
        arena_bot(spec, ArenaConfig())


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_combined_seats_play_a_deal_head_to_head_in_every_variant(variant: str) -> None:
    config = ArenaConfig(
        variant=variant,
        deals=1,
        candidate="heuristic:pass_by=search:simulations=30",
        field="heuristic:pass_by=random",
        head_to_head=True,
        seed=7,
    )
    result = play_deal(config, 0)  # the engine refuses an illegal action
    assert len(result.points) == 2
    summary = summarise([result], config)
    assert summary.deals == 1
