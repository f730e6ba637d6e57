"""``moonshot train-learned``: the teacher's games, the decisions they hold, DAgger's labelled games, and a
reproducible training run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")

from click.testing import CliRunner  # noqa: E402

from moonshot.bots.learned import N_FEATURES, LearnedBot, Policy, load_policy  # noqa: E402
from moonshot.cli.main import main  # noqa: E402
from moonshot.core.actions import Play, action_from_dict  # noqa: E402
from moonshot.core.cards import card_list  # noqa: E402
from moonshot.core.engine import Game, Phase  # noqa: E402
from moonshot.core.variants import VARIANTS, find_variant  # noqa: E402
from moonshot.core.views import seat_view  # noqa: E402
from moonshot.play.arena import deal_rules  # noqa: E402
from moonshot.play.sim import play_game  # noqa: E402
from moonshot.training.learned import (  # noqa: E402
    Decisions,
    GenConfig,
    TrainConfig,
    _bot,
    decisions,
    file_sha256,
    generate,
    label_key,
    package_weights_path,
    read_games,
    save_policy,
    train,
    write_games,
)


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


# ---------------------------------------------------------------------- DAgger: a player plays, the teacher labels
def _dagger(games: int = 2, simulations: int = 8, **kw: object) -> tuple[GenConfig, list[dict[str, object]]]:
    config = GenConfig(simulations=simulations, teacher="search:prior=3", self_play=True, player="learned", **kw)
    return config, list(generate(config, games))


def _labelled_decisions(config: GenConfig, records: list[dict[str, object]]) -> list[tuple[list[int], int, int]]:
    """Replay DAgger games: each card decision with a choice, as (legal cards, card played, label)."""
    out = []
    for r in records:
        game = Game(deal_rules(find_variant(config.variant), r["index"], config.passing), r["seed"])
        for d in r["actions"]:
            action = action_from_dict(d)
            if type(action) is Play and game.phase is Phase.PLAY:
                view = seat_view(game, action.seat)
                if view.legal_plays & (view.legal_plays - 1):
                    label = r["labels"][label_key(action.seat, view.trick_no)]
                    out.append((card_list(view.legal_plays), action.card, label))
            game.apply(action)
    return out


def test_the_player_plays_and_the_teacher_labels_every_decision() -> None:
    config, records = _dagger()
    # the games are the player's: the same actions as the player alone in every seat
    alone = list(generate(GenConfig(simulations=8, teacher="learned", self_play=True), 2))
    assert [r["actions"] for r in records] == [r["actions"] for r in alone]
    seen = _labelled_decisions(config, records)  # (a decision without a label is a KeyError here)
    assert sum(len(r["labels"]) for r in records) == len(seen) > 40
    assert all(label in cards for cards, _, label in seen)
    assert any(label != played for _, played, label in seen)  # the teacher does not always agree
    # the examples are the teacher's labels, not the cards played
    data = decisions(config, records)
    assert [cards[y] for (cards, _, _), y in zip(seen, data.y.tolist())] == [label for _, _, label in seen]
    assert len(data) == len(seen)
    # the same games whatever the workers, and through a games file
    assert list(generate(config, 2, workers=2)) == records


def test_a_games_file_with_a_label_that_is_no_legal_card_is_refused(tmp_path: Path) -> None:
    config, records = _dagger(games=1)
    seen = _labelled_decisions(config, records)
    cards, _, _ = seen[0]
    key = next(iter(records[0]["labels"]))
    wrong = next(c for c in range(52) if c not in cards)
    broken = {**records[0], "labels": {**records[0]["labels"], key: wrong}}
    with pytest.raises(ValueError, match="not a legal card"):
        decisions(config, [broken])
    with pytest.raises(ValueError, match="labels must map decisions to cards"):
        decisions(config, [{**records[0], "labels": [1, 2]}])
    path = tmp_path / "broken.jsonl"
    write_games(path, config, [broken])
    result = CliRunner().invoke(main, ["train-learned", "--games-file", str(path), "-o", str(tmp_path / "w.npz")])
    assert result.exit_code == 1 and "not a legal card" in result.output, result.output


def test_decisions_join_in_order() -> None:
    config, records = _tiny_games()
    a, b = decisions(config, records[:1]), decisions(config, records[1:])
    both = Decisions.joined([a, b])
    whole = decisions(config, records)
    assert len(both) == len(a) + len(b) == len(whole)
    for field in ("x", "mask", "y", "target"):
        assert np.array_equal(getattr(both, field), getattr(whole, field))


def test_train_learned_command_dagger_round(tmp_path: Path) -> None:
    round1 = tmp_path / "round1.npz"
    round1.write_bytes(package_weights_path().read_bytes())
    first_games = tmp_path / "r1.jsonl"
    config1, records1 = _tiny_games()
    write_games(first_games, config1, records1)
    out = tmp_path / "round2.npz"
    games = tmp_path / "r2.jsonl.gz"
    args = ["train-learned", "--games", "2", "--simulations", "6", "--epochs", "1", "--hidden", "8", "--seed", "77"]
    args += ["--teacher", "search:prior=3", "--player", f"learned:network={round1}", "-o", str(out)]
    result = CliRunner().invoke(main, [*args, "--games-file", str(games), "--also", str(first_games), "-q"])
    assert result.exit_code == 0, result.output
    config, records = read_games(games)
    assert config.player == f"learned:network={round1}" and config.player_sha256 == file_sha256(round1)
    assert all(r["labels"] for r in records)
    with np.load(out) as arrays:
        meta = json.loads(str(arrays["meta"]))
    joined = len(decisions(config, records)) + len(decisions(config1, records1))
    assert meta["decisions"] == joined and meta["generator"]["player"] == config.player
    assert [(a["file"], a["games"]) for a in meta["also"]] == [("r1.jsonl", 3)]
    # the player's weights are checked like the teacher's: a changed file is refused when games are played
    changed = tmp_path / "changed.npz"
    changed.write_bytes(round1.read_bytes())
    checked = GenConfig(simulations=6, player=f"learned:network={changed}", player_sha256=file_sha256(changed))
    save_policy(load_policy(changed), changed, {"changed": True})  # another file, the same network
    with pytest.raises(ValueError, match="not the weights these games were played with"):
        list(generate(checked, 1))
    # a bad player is refused before anything is played, naming the option
    for bad, words in (("nobody", "unknown bot"), (f"learned:network={tmp_path / 'nope.npz'}", "cannot read")):
        refused = CliRunner().invoke(main, [*args[:-4], "--player", bad, "--games-file", str(tmp_path / "x.jsonl")])
        assert refused.exit_code == 2 and "--player" in refused.output and words in refused.output, refused.output
    # games of another variant do not join
    other = tmp_path / "gym.jsonl"
    gym = GenConfig(variant="gym", simulations=4)
    write_games(other, gym, list(generate(gym, 1)))
    mixed = CliRunner().invoke(
        main, ["train-learned", "--games-file", str(first_games), "--also", str(other), "-o", str(out)]
    )
    assert mixed.exit_code == 2 and "games of gym, not standard" in mixed.output, mixed.output
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("not json\n")
    bad = CliRunner().invoke(main, ["train-learned", "--games-file", str(first_games), "--also", str(garbage)])
    assert bad.exit_code == 2 and "not a moonshot.learned-games/1 file" in bad.output, bad.output
