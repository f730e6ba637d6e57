"""The learned bot: packaged weights, legal play in every variant, and a reproducible training run."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")

from click.testing import CliRunner  # noqa: E402

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
    load_policy,
)
from moonshot.bots.random import RandomBot  # noqa: E402
from moonshot.bots.registry import make_bot  # noqa: E402
from moonshot.cli.main import main  # noqa: E402
from moonshot.core.cards import card_list  # noqa: E402
from moonshot.core.engine import Game, Phase  # noqa: E402
from moonshot.core.rules import EndRule  # noqa: E402
from moonshot.core.variants import VARIANTS  # noqa: E402
from moonshot.core.views import seat_view  # noqa: E402
from moonshot.play.sim import play_game  # noqa: E402
from moonshot.training.learned import (  # noqa: E402
    GenConfig,
    TrainConfig,
    _bot,
    decisions,
    file_sha256,
    generate,
    package_weights_path,
    read_games,
    save_policy,
    train,
    write_games,
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


def _tiny_games() -> tuple[GenConfig, list[dict[str, object]]]:
    config = GenConfig(simulations=8)
    return config, list(generate(config, 3))


def test_training_smoke_and_determinism(tmp_path: Path) -> None:
    config, records = _tiny_games()
    path = tmp_path / "games.jsonl"
    assert write_games(path, config, records) == 3
    config2, again = read_games(path)
    assert config2 == config and again == records
    data = decisions(config, records)
    assert len(data) > 20 and data.mask.any(axis=1).all()
    tconf = TrainConfig(hidden=(8,), epochs=3, seed=5)
    a = train(data, tconf)
    b = train(data, tconf)
    for (wa, ba), (wb, bb) in zip(a.policy.layers, b.policy.layers):
        assert np.array_equal(wa, wb) and np.array_equal(ba, bb)
    c = train(data, TrainConfig(hidden=(8,), epochs=3, seed=6))
    assert not np.array_equal(a.policy.layers[0][0], c.policy.layers[0][0])
    # the written weights play
    out = tmp_path / "w.npz"
    save_policy(a.policy, out)
    with np.load(out) as arrays:
        loaded = Policy.from_arrays(dict(arrays))
    assert np.allclose(loaded.scores(data.x[0]), a.policy.scores(data.x[0]))
    bot = LearnedBot(loaded)
    record = play_game(VARIANTS["standard"].replace(score_limit=30), 1, ("x",) * 4, bots=[bot] * 4)
    assert record.deals >= 1


def test_games_are_the_same_whatever_the_workers() -> None:
    config = GenConfig(simulations=4)
    assert list(generate(config, 2, workers=2)) == list(generate(config, 2, workers=1))


def test_train_learned_command(tmp_path: Path) -> None:
    out = tmp_path / "learned.npz"
    games = tmp_path / "games.jsonl"
    args = [
        "train-learned",
        "--games",
        "2",
        "--simulations",
        "8",
        "--epochs",
        "2",
        "--hidden",
        "8",
        "--games-file",
        str(games),
        "--out",
        str(out),
        "--quiet",
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "agreement with search" in result.output and out.is_file() and games.is_file()
    with np.load(out) as a:
        first = {k: a[k] for k in a.files}
    # again, from the kept games: the same weights
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "read 2 games" in result.output
    with np.load(out) as b:
        assert sorted(b.files) == sorted(first) and all(np.array_equal(first[k], b[k]) for k in b.files)
    # the file records the rules the network plays under: standard's (the training variant) and Trend's
    rules = load_policy(out).rules
    assert {n for n, r in VARIANTS.items() if r in rules} == {"standard", "gym", "trend"}
    from moonshot.bots.tuned import fingerprint

    recorded = json.loads(str(first["meta"]))["plays_in"]
    assert recorded == sorted({fingerprint(VARIANTS["standard"]), fingerprint(VARIANTS["trend"])})


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


def test_plain_search_is_the_round_one_teacher() -> None:
    from moonshot.bots.search import SearchBot

    teacher = _bot("search", 10)
    assert isinstance(teacher, SearchBot)
    # the card rules of the first network's teacher, so round one's weights stay reproducible (today's defaults use
    # a network as their prior: `search:prior=0` is today's search without one)
    assert (teacher.root, teacher.prior_top, teacher.endgame) == ("flat", 0, 3)


def _prior_config(weights: Path, simulations: int = 6) -> GenConfig:
    return GenConfig(
        simulations=simulations,
        teacher=f"search:network={weights}",
        network_sha256=file_sha256(weights),
        self_play=True,
    )


def test_self_play_with_a_prior_makes_every_seat_a_teacher(tmp_path: Path) -> None:
    weights = tmp_path / "round1.npz"
    weights.write_bytes(package_weights_path().read_bytes())
    config = _prior_config(weights)
    records = list(generate(config, 2))
    assert [r["teacher_seats"] for r in records] == [[0, 1, 2, 3]] * 2
    two_seats = decisions(GenConfig(simulations=6), list(generate(GenConfig(simulations=6), 2)))
    assert len(decisions(config, records)) > 1.5 * len(two_seats)
    # worker processes read the same network file: the same games whatever the workers
    assert list(generate(config, 2, workers=2)) == records
    # the header keeps the weights' digest, and a file written then read gives the same config
    path = tmp_path / "games.jsonl.gz"
    write_games(path, config, records)
    assert read_games(path) == (config, records)


def test_the_prior_weights_steer_the_teacher(tmp_path: Path) -> None:
    packaged = tmp_path / "a.npz"
    packaged.write_bytes(package_weights_path().read_bytes())
    other = tmp_path / "b.npz"
    base = load_policy(packaged)
    # the same network with its output negated: it ranks the cards the other way round
    flipped = Policy(base.mean, base.scale, (*base.layers[:-1], (-base.layers[-1][0], -base.layers[-1][1])))
    save_policy(flipped, other)
    a = list(generate(_prior_config(packaged), 3))
    b = list(generate(_prior_config(other), 3))
    assert a != b
    assert list(generate(_prior_config(packaged), 3)) == a  # switching back gives the first games again


def test_prior_weights_that_changed_are_refused(tmp_path: Path) -> None:
    weights = tmp_path / "w.npz"
    weights.write_bytes(package_weights_path().read_bytes())
    config = _prior_config(weights)
    save_policy(load_policy(weights), weights, {"changed": True})  # another file, the same network
    with pytest.raises(ValueError, match="not the weights these games were played with"):
        list(generate(config, 1))


def test_train_learned_command_expert_iteration(tmp_path: Path) -> None:
    weights = tmp_path / "round1.npz"
    weights.write_bytes(package_weights_path().read_bytes())
    out = tmp_path / "round2.npz"
    games = tmp_path / "games.jsonl"
    args = ["train-learned", "--games", "2", "--simulations", "6", "--epochs", "1", "--hidden", "8"]
    args += ["--teacher", f"search:network={weights}", "--self-play", "--games-file", str(games), "--out", str(out)]
    result = CliRunner().invoke(main, [*args, "-q"])
    assert result.exit_code == 0, result.output
    config, records = read_games(games)
    assert config.self_play and config.network_sha256 == file_sha256(weights)
    assert all(r["teacher_seats"] == [0, 1, 2, 3] for r in records)
    assert load_policy(out).layers[0][0].shape == (N_FEATURES, 8)
    # a teacher with options is today's search with them; plain `search` the round-one teacher
    assert _bot("search:prior=0", 6).prior_top == 0 and _bot("search:prior=0", 6).root is None
    assert _bot(f"search:network={weights}", 6).prior_top == 3
    # a bad teacher is refused before anything is played
    for bad, words in (
        (f"search:network={tmp_path / 'nope.npz'}", "cannot read network weights"),
        ("search:prior", "want key=value"),
        ("nobody", "unknown bot"),
    ):
        refused = CliRunner().invoke(main, [*args[:9], "--teacher", bad, "--out", str(tmp_path / "x.npz")])
        assert refused.exit_code == 2 and words in refused.output, refused.output


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


def test_the_command_defaults_are_the_recipe_of_the_shipped_weights() -> None:
    from moonshot.training.learned import train_learned_cmd

    with np.load(package_weights_path()) as arrays:
        meta = json.loads(str(arrays["meta"]))
    defaults = {p.name: p.default for p in train_learned_cmd.params}
    generator = meta["generator"]
    assert meta["games"] == defaults["games"]
    assert generator["teacher"] == defaults["teacher"] and generator["network_sha256"] is None
    assert (generator["simulations"], generator["self_play"], generator["seed"], generator["variant"]) == (
        defaults["simulations"],
        defaults["self_play"],
        defaults["seed"],
        defaults["variant"],
    )
    train_meta = meta["train"]
    assert (train_meta["hidden"], train_meta["epochs"], train_meta["lr"], train_meta["seed"]) == (
        [int(x) for x in defaults["hidden"].split(",")],
        defaults["epochs"],
        defaults["lr"],
        defaults["train_seed"],
    )


def test_a_bad_games_file_is_a_clear_error_not_a_traceback(tmp_path: Path) -> None:
    _, records = _tiny_games()
    header = {"format": "moonshot.learned-games/1", "simulations": 8}
    broken_game = {**records[0], "actions": [*records[0]["actions"][:5], records[0]["actions"][3]]}
    cases = {
        "garbage.jsonl": ("not json at all\n", "not a moonshot.learned-games/1 file"),
        "list.jsonl": ("[1, 2]\n", "not a moonshot.learned-games/1 file"),
        "other.jsonl": ('{"format": "something-else"}\n', "not a moonshot.learned-games/1 file"),
        "future.jsonl": (json.dumps({**header, "colour": "blue"}) + "\n", "a header this version does not know"),
        "illegal.jsonl": (json.dumps(header) + "\n" + json.dumps(broken_game) + "\n", "a game does not replay"),
    }
    for name, (text, words) in cases.items():
        path = tmp_path / name
        path.write_text(text)
        if name != "illegal.jsonl":
            with pytest.raises(ValueError, match=re.escape(words)):
                read_games(path)
        result = CliRunner().invoke(main, ["train-learned", "--games-file", str(path), "-o", str(tmp_path / "w.npz")])
        assert result.exit_code in (1, 2) and words in result.output, (name, result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit)
    not_gzip = tmp_path / "plain.jsonl.gz"
    not_gzip.write_text(json.dumps(header) + "\n")
    with pytest.raises(ValueError, match=re.escape("not a moonshot.learned-games/1 file")):
        read_games(not_gzip)


def test_the_packaged_networks_by_name_and_level_5_keeps_the_one_it_was_measured_with() -> None:
    assert make_bot("learned").policy is default_policy()
    prior_bot = make_bot("learned", net="prior")
    assert prior_bot.policy is default_prior() and prior_bot.spec == "learned --net prior"
    assert make_bot("level:5").policy is default_prior()  # its ladder rows were played with it
    assert default_policy().layers[0][0].shape == (N_FEATURES, 256)  # the bot's own, wider network
    with pytest.raises(ValueError, match="unknown net"):
        make_bot("learned", net="value")
