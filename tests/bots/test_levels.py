"""The levels table: monotone in what was measured, ``level:N`` resolves to its row's bot, an
unknown level is a clear error, and every level plays every variant."""

from __future__ import annotations

import itertools
import random

import pytest

from moonshot.bots.levels import LEVELS, UnknownLevel, find_level, level
from moonshot.bots.registry import UnknownBot, bot_names, check_bot_name, make_bot, parse_seats, spec_of
from moonshot.core.engine import Game
from moonshot.core.variants import VARIANTS
from moonshot.core.views import seat_view


def test_the_ladder_has_six_levels_numbered_from_one_with_distinct_names_and_specs() -> None:
    assert len(LEVELS) >= 6
    assert [lv.number for lv in LEVELS] == list(range(1, len(LEVELS) + 1))
    assert len({lv.name for lv in LEVELS}) == len(LEVELS)
    assert len({lv.spec for lv in LEVELS}) == len(LEVELS)
    assert LEVELS[0].spec == "random" and LEVELS[-1].bot == "search"


def test_each_level_is_measured_stronger_than_the_one_below() -> None:
    """Neighbours at least 0.5 points a deal apart over at least 1,000 duplicate deals (the
    difference is this level minus the one below; lower is better), the interval clear of zero."""
    assert LEVELS[0].arena is None
    for lv in LEVELS[1:]:
        a = lv.arena
        assert a is not None, f"{lv.key} has no arena row against {lv.number - 1}"
        assert a.low <= a.difference <= a.high
        assert a.difference <= -0.5, f"{lv.key}: {a.difference} a deal is not 0.5 better than the level below"
        assert a.high < 0, f"{lv.key}: the interval {a.low, a.high} reaches zero"
        assert f"level:{lv.number} level:{lv.number - 1}" in a.command
        if lv is not LEVELS[-1]:  # the top's run may be cut short (docs/bots.md says how far it got)
            assert a.deals >= 1000


def test_ratings_and_cost_are_monotone() -> None:
    """The ratings rise with the levels: each level's mu is above every level two or more below
    it, and never below its neighbour's by more than their sigma (OpenSkill sees places, not
    margins: levels 4 and 5 are a tie there, docs/bots.md); the cost never falls."""
    for below, above in itertools.pairwise(LEVELS):
        assert above.mu > below.mu - max(above.sigma, below.sigma), f"{above.key}'s rating is below {below.key}'s"
        assert below.cpu_ms <= above.cpu_ms or below.bot == above.bot  # a noisier copy may cost more
    for lv in LEVELS:
        for lower in (low for low in LEVELS if low.number <= lv.number - 2):
            assert lower.mu < lv.mu and lower.ordinal < lv.ordinal, f"{lv.key} is not rated above {lower.key}"
    assert LEVELS[-1].mu == max(lv.mu for lv in LEVELS) and LEVELS[0].mu == min(lv.mu for lv in LEVELS)
    for lv in LEVELS:
        assert 0 < lv.sigma < 25 / 3, f"{lv.key}: no measured rating"
        assert lv.cpu_ms > 0, f"{lv.key}: no measured cost"
        assert lv.decisions_per_core_s == pytest.approx(1000 / lv.cpu_ms)


def test_level_n_resolves_to_the_row_s_bot_under_the_row_s_spec() -> None:
    for lv in LEVELS:
        bot = make_bot(lv.key)
        assert spec_of(bot) == lv.spec  # rated as the bot it is
        if hasattr(bot, "__dict__"):  # a compiled bot (random) takes no new attributes
            assert getattr(bot, "level", None) == lv.number
        assert find_level(lv.key) is lv is level(lv.number)
        assert check_bot_name(lv.key) == lv.key
    assert spec_of(make_bot("level:2")) == "heuristic --epsilon 0.5"


def test_an_unknown_level_is_a_clear_error() -> None:
    for bad in ("level:0", f"level:{len(LEVELS) + 1}", "level:x", "level:", "level:-1", "level:2.5"):
        with pytest.raises(UnknownBot) as err:  # every caller that makes a bot answers it
            make_bot(bad)
        text = str(err.value)
        assert "unknown level" in text and "level:1 Beginner" in text, text
        with pytest.raises(UnknownLevel):
            find_level(bad)
        with pytest.raises(UnknownBot):
            parse_seats(f"{bad},random")
    with pytest.raises(UnknownBot, match="level:N"):
        check_bot_name("levels")


def test_a_level_takes_no_options() -> None:
    with pytest.raises(TypeError, match="level:6 takes no options"):
        make_bot("level:6", think_ms=5)


def test_the_loadable_bots_list_the_levels_after_the_registry_names() -> None:
    names = bot_names()
    keys = [lv.key for lv in LEVELS]
    assert names[-len(keys) :] == keys
    assert parse_seats("level:1,level:3") == ("level:1", "level:3", "level:3", "level:3")


def test_levels_json_carries_name_rating_and_cost() -> None:
    j = LEVELS[2].to_json()
    assert j["key"] == "level:3" and j["name"] == LEVELS[2].name and j["spec"] == LEVELS[2].spec
    assert j["mu"] == round(LEVELS[2].mu, 2) and j["cpu_ms"] == LEVELS[2].cpu_ms


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_level_plays_every_variant(variant: str) -> None:
    """Rules are data: each level's bot plays any variant. The cheap levels play a whole game's
    first deal; the search level makes its first decision (a deal costs it seconds)."""
    rules = VARIANTS[variant]
    for lv in LEVELS:
        game = Game(rules, 7)
        bots = [make_bot(lv.key) for _ in range(4)]
        rngs = [random.Random(s) for s in range(4)]
        budget = 400 if lv.cpu_ms < 1 else 1
        for _ in range(budget):
            if game.over or game.deal_index > 0:
                break
            seat = game.to_act()[0]
            view = seat_view(game, seat)
            action = bots[seat].act(view, rngs[seat])
            assert action in view.legal
            game.apply(action)
