"""The oracle: search that sees every card, seated by the arena only."""

from __future__ import annotations

import random

import pytest

from moonshot.bots.oracle import Blind, OracleBot
from moonshot.bots.registry import BOT_REGISTRY, UnknownBot, bot_names, check_bot_name, make_bot
from moonshot.core.actions import Pass, Play
from moonshot.core.engine import Game, Phase
from moonshot.core.variants import find_variant
from moonshot.core.views import seat_view
from moonshot.play.arena import ArenaConfig, arena_bot, deal_rules, play_deal

VARIANTS = ("standard", "gym", "trend", "turbo", "kierki", "omnibus")


def _first_card_decision(variant: str = "standard", seed: int = 3) -> Game:
    """A game of ``variant`` (no passing) at its first card decision with a choice."""
    game = Game(deal_rules(find_variant(variant), 0, passing=False), seed)
    while True:
        seat = game.to_act()[0]
        view = seat_view(game, seat)
        if view.phase is Phase.PLAY and view.legal_plays & (view.legal_plays - 1):
            return game
        game.apply(make_bot("heuristic").act(view, random.Random(0)))


def test_no_server_lobby_or_tournament_can_name_it() -> None:
    assert "oracle" not in BOT_REGISTRY
    with pytest.raises(UnknownBot):
        make_bot("oracle")  # what a server's bot seats, a tournament's entrants and the lobby load
    with pytest.raises(UnknownBot):
        check_bot_name("oracle")  # what a Trend node and --seats accept
    assert "oracle" not in bot_names()  # what the web app offers
    from moonshot.server.config import bot_factory

    with pytest.raises(ValueError):
        bot_factory("oracle")  # moonshot serve --bot oracle
    with pytest.raises(ValueError):
        bot_factory("oracle --think-ms 10")


def test_an_oracle_watching_no_game_refuses_to_play_a_card() -> None:
    game = _first_card_decision()
    view = seat_view(game, game.to_act()[0])
    bot = OracleBot(simulations=30)
    with pytest.raises(Blind):
        bot.act(view, random.Random(1))
    bot.watch(_first_card_decision(seed=4))  # another game: its hands are not this view's
    with pytest.raises(Blind):
        bot.act(view, random.Random(1))


def test_its_one_world_is_the_deal_as_it_lies() -> None:
    game = _first_card_decision()
    view = seat_view(game, game.to_act()[0])
    bot = OracleBot(simulations=30)
    bot.watch(game)
    deal = bot._card_sampler(view)
    assert deal(random.Random(0)) == list(game.hands) == deal(random.Random(9))
    action = bot.act(view, random.Random(1))
    assert isinstance(action, Play) and view.legal_plays >> action.card & 1


def test_its_pass_sees_the_hands_as_dealt_even_after_another_seat_has_passed() -> None:
    game = Game(deal_rules(find_variant("standard"), 0), 5)  # deal 0 passes left
    dealt = list(game.hands)
    bot = OracleBot(simulations=40)
    with pytest.raises(Blind):  # watching no game
        bot.act(seat_view(game, 0), random.Random(1))
    bot.watch(game)
    seen = []
    for seat in range(4):
        view = seat_view(game, seat)
        assert view.phase is Phase.PASS
        hands = bot._pass_hands(view)
        assert hands is not None
        seen.append(hands(random.Random(seat)))
        action = bot.act(view, random.Random(seat))
        assert isinstance(action, Pass) and action.cards & view.hand == action.cards
        game.apply(action)  # (the engine takes a seat's pass out of its hand at once)
    assert seen == [dealt] * 4


def test_passing_by_an_oracle_hands_it_the_watched_game() -> None:
    spec = "heuristic:pass_by=oracle:simulations=40"
    config = ArenaConfig(deals=1, candidate=spec, field="heuristic", head_to_head=True)
    bot = arena_bot(config.candidate, config)
    game = Game(deal_rules(find_variant("standard"), 0), 5)
    bot.watch(game)  # type: ignore[attr-defined]
    assert isinstance(bot.passer, OracleBot) and bot.passer._game is game  # type: ignore[attr-defined]
    a, b = play_deal(config, 0), play_deal(config, 0)
    assert a.points == b.points


@pytest.mark.parametrize("variant", VARIANTS)
def test_legal_and_deterministic_in_the_arena_in_every_variant(variant: str) -> None:
    # play_deal applies every action to the engine, which refuses an illegal one
    config = ArenaConfig(
        variant=variant, deals=1, candidate="oracle", field="search:simulations=20", simulations=20, seed=7
    )
    a = play_deal(config, 0)
    b = play_deal(config, 0)
    assert a.points == b.points and len(a.points) == 4
    assert a.moves["oracle"] > 0


def test_arena_seats_it_with_its_options_and_spec() -> None:
    config = ArenaConfig(deals=1, candidate="oracle:root=tree,worlds=1", field="search", think_ms=5)
    bot = arena_bot("oracle:root=tree,worlds=1", config)
    assert isinstance(bot, OracleBot) and bot.think_ms == 5 and bot.root == "tree"
    assert getattr(bot, "spec", "") == "oracle --root tree --think-ms 5 --worlds 1"
    # head to head with passing: its passes are search's own, its cards see the deal
    h2h = ArenaConfig(deals=1, candidate="oracle:simulations=20", field="search:simulations=20", head_to_head=True)
    assert play_deal(h2h, 1).points == play_deal(h2h, 1).points
