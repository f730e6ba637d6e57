"""The learned bot: packaged weights, legal play in every variant, and a reproducible training run."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")


from moonshot.bots.base import Bot  # noqa: E402
from moonshot.bots.heuristic import HeuristicBot  # noqa: E402
from moonshot.bots.learned import (  # noqa: E402
    FEATURE_NAMES,
    N_FEATURES,
    LearnedBot,
    Policy,
    card_features,
    default_policy,
    default_prior,
)
from moonshot.bots.random import RandomBot  # noqa: E402
from moonshot.bots.registry import make_bot  # noqa: E402
from moonshot.core.cards import card_list  # noqa: E402
from moonshot.core.engine import Game, Phase  # noqa: E402
from moonshot.core.rules import EndRule  # noqa: E402
from moonshot.core.variants import VARIANTS  # noqa: E402
from moonshot.core.views import seat_view  # noqa: E402
from moonshot.play.sim import play_game  # noqa: E402
from moonshot.training.learned import (  # noqa: E402
    package_weights_path,
    save_policy,
)


def test_registered_and_loads_the_packaged_weights() -> None:
    bot = make_bot("learned")
    assert isinstance(bot, LearnedBot) and isinstance(bot, Bot) and bot.name == "learned"
    path = package_weights_path()
    assert path.is_file() and path.stat().st_size < 5 * 1024 * 1024
    assert bot.policy is default_policy()  # loaded once, shared by every bot of the process
    assert bot.policy.mean.shape == (N_FEATURES,)


class _Checked:
    """Asserts that every action the wrapped bot takes is one of the view's legal actions."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.name = bot.name
        self.plays = 0

    def act(self, view, rng):  # type: ignore[no-untyped-def]
        action = self.bot.act(view, rng)
        assert action in view.legal, (view.rules.name, action)
        if view.phase is Phase.PLAY and view.legal_plays & (view.legal_plays - 1):
            self.plays += 1
        return action


@pytest.mark.parametrize("variant", ["standard", "omnibus", "trend", "turbo", "kierki", "gym", "turbo-chain"])
def test_whole_games_are_legal_in_every_variant(variant: str) -> None:
    rules = VARIANTS[variant]
    if rules.end is EndRule.SCORE:
        rules = rules.replace(score_limit=40)
    learned = _Checked(LearnedBot(everywhere=True))
    record = play_game(
        rules, 7, ("learned", "heuristic", "learned", "random"), bots=[learned, HeuristicBot(), learned, RandomBot()]
    )
    assert record.deals >= 1 and len(record.scores) == 4
    assert learned.plays > 0  # the network chose cards
    # the default bot (the heuristic's card play where the network does not play) is legal too
    plain = _Checked(LearnedBot())
    record = play_game(rules, 8, ("learned",) * 4, bots=[plain, HeuristicBot(), plain, RandomBot()])
    assert record.deals >= 1


def test_the_network_plays_only_where_it_was_measured_to_help() -> None:
    rules = default_policy().rules
    assert all(VARIANTS[v] in rules for v in ("standard", "gym", "trend")) and VARIANTS["kierki"] not in rules
    game = Game(VARIANTS["kierki"], 4)
    rng = random.Random(0)
    heuristic, learned = HeuristicBot(), LearnedBot()
    while not game.over:
        seat = game.to_act()[0]
        view = seat_view(game, seat)
        if view.phase is Phase.PLAY and view.legal_plays and not view.claimer:
            assert learned._play(view) == heuristic._play(view)
        game.apply(heuristic.act(view, rng))
        if game.deal_index > 0:
            break


def test_features_read_the_view_only() -> None:
    game = Game(VARIANTS["standard"], 3)
    rng = random.Random(0)
    bots = [HeuristicBot() for _ in range(4)]
    while game.phase is not Phase.PLAY or len(game.log) < 20:
        seat = game.to_act()[0]
        game.apply(bots[seat].act(seat_view(game, seat), rng))
    seat = game.to_act()[0]
    view = seat_view(game, seat)
    legal = card_list(view.legal_plays)
    rows = card_features(view, legal)
    assert rows.shape == (len(legal), len(FEATURE_NAMES)) and np.isfinite(rows).all()
    # the same view gives the same rows (no hidden state)
    assert np.array_equal(rows, card_features(seat_view(game, seat), legal))


def test_search_with_the_learned_prior_searches_only_the_top_cards() -> None:
    from moonshot.bots.prior import PriorSearchBot

    bot = make_bot("search-learned", simulations=12, top=2)
    assert isinstance(bot, PriorSearchBot)
    seen: list[int] = []

    class Spy(PriorSearchBot):
        def _choose_card(self, view, rng):  # type: ignore[no-untyped-def]
            card, value = super()._choose_card(view, rng)
            seen.append(card)
            return card, value

    spy = Spy(top=2, simulations=12)
    game = Game(VARIANTS["standard"], 9)
    rng = random.Random(1)
    others = HeuristicBot()
    while not game.over and game.deal_index == 0:
        seat = game.to_act()[0]
        view = seat_view(game, seat)
        if seat == 0 and view.phase is Phase.PLAY and view.legal_plays & (view.legal_plays - 1):
            cards = card_list(view.legal_plays)
            scores = spy.prior.scores(card_features(view, cards))
            top2 = {cards[i] for i in np.argsort(-scores, kind="stable")[:2]}
            action = spy.act(view, rng)
            assert action in view.legal and action.card in top2
        else:
            game.apply(others.act(view, rng))
            continue
        game.apply(action)
    assert seen


def test_a_network_file_per_bot(tmp_path: Path) -> None:
    from moonshot.play.arena import ArenaConfig, arena_bot

    base = default_policy()
    flipped = Policy(base.mean, base.scale, (*base.layers[:-1], (-base.layers[-1][0], -base.layers[-1][1])))
    path = tmp_path / "flipped.npz"
    save_policy(flipped, path)
    config = ArenaConfig(variant="standard", deals=1, candidate="learned", field="learned", simulations=30)
    game = Game(VARIANTS["standard"], 11)
    rng = random.Random(1)
    while True:  # the heuristic plays until a seat has six or more cards to choose from
        view = seat_view(game, game.to_act()[0])
        if game.phase is Phase.PLAY and len(card_list(view.legal_plays)) >= 6:
            break
        game.apply(HeuristicBot().act(view, rng))
    legal = card_list(view.legal_plays)
    scores = base.scores(card_features(view, legal))
    # learned: the file's network plays (here the packaged one's worst card)
    assert arena_bot("learned", config).act(view, random.Random(0)).card == legal[int(np.argmax(scores))]
    flipped_card = arena_bot(f"learned:network={path}", config).act(view, random.Random(0)).card
    assert flipped_card == legal[int(np.argmin(scores))]
    # search and pimc: the prior's three cards are their own packaged prior's (not the learned
    # bot's network), or the file's network's (here the packaged prior's worst three)
    prior = default_prior()
    assert prior is not base
    prior_scores = prior.scores(card_features(view, legal))
    flipped_prior = tmp_path / "flipped-prior.npz"
    save_policy(
        Policy(prior.mean, prior.scale, (*prior.layers[:-1], (-prior.layers[-1][0], -prior.layers[-1][1]))),
        flipped_prior,
    )
    worst = sorted(legal[k] for k in np.argsort(prior_scores)[:3])
    best = sorted(legal[k] for k in np.argsort(prior_scores)[-3:])
    for name in ("search:prior=3", "pimc:prior=3"):
        assert arena_bot(name, config)._prior_cards(view, legal) == best
        assert arena_bot(f"{name},network={flipped_prior}", config)._prior_cards(view, legal) == worst
    assert default_policy() is base and default_prior() is prior
    with pytest.raises(ValueError, match="cannot read network weights"):
        arena_bot(f"search:network={tmp_path / 'missing.npz'}", config)


def test_the_packaged_networks_by_name_and_level_5_keeps_the_one_it_was_measured_with() -> None:
    assert make_bot("learned").policy is default_policy()
    prior_bot = make_bot("learned", net="prior")
    assert prior_bot.policy is default_prior() and prior_bot.spec == "learned --net prior"
    assert make_bot("level:5").policy is default_prior()  # its ladder rows were played with it
    assert default_policy().layers[0][0].shape == (N_FEATURES, 256)  # the bot's own, wider network
    with pytest.raises(ValueError, match="unknown net"):
        make_bot("learned", net="value")
