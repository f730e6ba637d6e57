"""A bot's spec (the name ratings use) is what a user types: its options, never an object's repr."""

from __future__ import annotations

import time

from moonshot.bots.registry import make_bot, spec_of
from moonshot.play.arena import ArenaConfig, arena_bot


def test_a_cpu_time_clock_is_spelled_as_the_option_that_gives_it() -> None:
    config = ArenaConfig(think_ms=30, cpu_time=True)
    bot = arena_bot("search", config, clock=time.process_time)  # what the arena hands a --cpu-time run's bots
    assert spec_of(bot) == "search --cpu-time --think-ms 30"
    assert "<" not in spec_of(bot) and "process_time" not in spec_of(bot)
    # stable: the same options in any order give the same text
    again = make_bot("search", clock=time.process_time, think_ms=30)
    assert spec_of(again) == spec_of(bot)


def test_objects_a_user_cannot_type_are_left_out() -> None:
    assert spec_of(make_bot("search", think_ms=30, clock=time.perf_counter)) == "search --think-ms 30"
    assert spec_of(make_bot("search", think_ms=30, clock=lambda: 0.0)) == "search --think-ms 30"
    assert spec_of(make_bot("pimc", simulations=50, clock=time.process_time)) == "pimc --cpu-time --simulations 50"


def test_ordinary_options_keep_their_spelling_and_order() -> None:
    bot = make_bot("search", simulations=200, prior_weight=2.0, value="off", inference=True)
    assert spec_of(bot) == "search --inference True --prior-weight 2.0 --simulations 200 --value off"
    assert spec_of(make_bot("search", think_ms=200)) == "search"  # the default is not named
    assert spec_of(make_bot("heuristic")) == "heuristic"
