"""Training the value network: positions from games files, the fit, and `moonshot train-value`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from moonshot.bots.value import load_value, position_rows
from moonshot.cli.main import main
from moonshot.play.sim import play_game
from moonshot.training.learned import GenConfig, generate, read_games, write_games
from moonshot.training.value import (
    ValueTrainConfig,
    game_positions,
    positions,
    read_positions,
    swap_minors,
    train_value,
)

CONFIG = GenConfig(teacher="learned", partner="learned", self_play=True, seed=3_000_000, simulations=1)


@pytest.fixture(scope="module")
def games(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("value") / "games.jsonl.gz"
    write_games(path, CONFIG, generate(CONFIG, 30))
    return path


def test_every_position_between_tricks_with_the_deal_s_end(games: Path) -> None:
    config, records = read_games(games)
    for r in records:
        deals, costs = game_positions(config, r)
        # after tricks 1 to 11 (after the 12th each hand holds one card: nothing left to judge)
        assert [d.trick_no for d in deals] == list(range(2, 13))
        assert all(not d.trick and not d.done for d in deals)
        assert sum(costs) in (26, 78)  # every point taken once, or a moon
        for d in deals:  # points taken stay taken (a moon turns the shooter's into 0)
            assert all(costs[s] >= d.pts[s] or sum(costs) == 78 for s in range(4))
    data = positions(config, records)
    assert len(data) == 11 * len(records)
    assert data.x.shape[1] == position_rows([deals[0]]).shape[1]
    # the targets are the final costs seen from the seat to lead, like the inputs
    first_deals, first_costs = game_positions(config, records[0])
    for j, d in enumerate(first_deals):
        assert data.y[j].tolist() == [first_costs[(d.turn + k) & 3] for k in range(4)]
        assert np.array_equal(data.x[j], position_rows([d])[0])


def test_swapping_the_minor_suits_is_an_involution_that_keeps_the_rest(games: Path) -> None:
    data = read_positions([games])
    swapped = swap_minors(data.x)
    assert np.array_equal(swap_minors(swapped), data.x)
    assert not np.array_equal(swapped, data.x)
    assert np.array_equal(swapped[:, 208:], data.x[:, 208:])
    assert np.allclose(swapped.sum(axis=1), data.x.sum(axis=1))


def test_training_fits_and_is_deterministic(games: Path) -> None:
    data = read_positions([games])
    config = ValueTrainConfig(hidden=(16,), epochs=20, batch=32)
    a = train_value(data, config)
    b = train_value(data, config)
    for (wa, ba), (wb, bb) in zip(a.net.layers, b.net.layers):
        assert np.array_equal(wa, wb) and np.array_equal(ba, bb)
    assert np.isfinite(a.val_mse) and np.isfinite(a.train_mse)
    # fitted, it beats a constant guess on the games it was trained on
    constant = float(((data.y - data.y.mean(axis=0)) ** 2).mean())
    assert a.train_mse < constant
    assert [e for e, _, _ in a.history] == list(range(1, 21))
    with pytest.raises(ValueError, match="no positions"):
        train_value(read_positions([games], limit=0), config)


def test_train_value_command_and_search_with_its_network(tmp_path: Path, games: Path) -> None:
    out = tmp_path / "v.npz"
    games_file = tmp_path / "g.jsonl.gz"
    runner = CliRunner()
    args = ["train-value", "-n", "12", "--games-file", str(games_file), "--also", str(games)]
    result = runner.invoke(main, [*args, "--hidden", "8", "--epochs", "2", "-o", str(out), "-q"])
    assert result.exit_code == 0, result.output
    assert "held out" in result.output and out.exists()
    net = load_value(out)
    assert [w.shape[1] for w, _ in net.layers] == [8, 4]
    # the games were kept, and a rerun reads them instead of playing
    assert len(read_games(games_file)[1]) == 12
    again = runner.invoke(main, [*args, "--hidden", "8", "--epochs", "2", "-o", str(tmp_path / "w.npz"), "-q"])
    assert again.exit_code == 0, again.output
    assert "reading the games" in again.output
    assert (tmp_path / "w.npz").read_bytes() == out.read_bytes()  # deterministic
    with np.load(out) as saved:  # the file says how it was made
        meta = {k[5:]: str(saved[k]) for k in saved.files if k.startswith("meta_")}
    assert meta["games_files"] == str([str(games_file), str(games)])
    assert int(meta["positions"]) > 0 and "'hidden': [8]" in meta["train"]
    assert float(meta["constant_validation_mse"]) > 0
    # the file records the rules it plays under: the training variant's and --plays-in's (trend by default)
    from moonshot.bots.tuned import fingerprint
    from moonshot.core.variants import VARIANTS

    assert {n for n, r in VARIANTS.items() if r in net.rules} == {"standard", "gym", "trend"}
    assert meta["plays_in"] == str(sorted({fingerprint(VARIANTS["standard"]), fingerprint(VARIANTS["trend"])}))
    kierki = runner.invoke(
        main, [*args, "--hidden", "8", "--epochs", "1", "--plays-in", "kierki", "-o", str(tmp_path / "k.npz")]
    )
    assert kierki.exit_code == 0, kierki.output
    assert {n for n, r in VARIANTS.items() if r in load_value(tmp_path / "k.npz").rules} == {
        "standard",
        "gym",
        "kierki",
    }
    unknown = runner.invoke(main, [*args, "--plays-in", "nosuch", "-o", str(tmp_path / "x.npz"), "-q"])
    assert unknown.exit_code == 2 and "nosuch" in unknown.output and not (tmp_path / "x.npz").exists()
    # search with it plays whole games
    from moonshot.bots.registry import make_bot
    from moonshot.core.variants import find_variant

    bots = [make_bot("search", simulations=20, value=str(out)), *[make_bot("heuristic") for _ in range(3)]]
    record = play_game(find_variant("standard"), 5, ["search", "heuristic", "heuristic", "heuristic"], bots=bots)
    assert record.deal_points and all(sum(p) in (26, 78) for p in record.deal_points)


def test_train_value_command_errors_are_clear(tmp_path: Path) -> None:
    runner = CliRunner()
    no_file = runner.invoke(main, ["train-value", "-n", "12", "-q"])
    assert no_file.exit_code != 0 and "--games-file" in no_file.output
    bad_hidden = runner.invoke(main, ["train-value", "--hidden", "a,b", "--games-file", str(tmp_path / "g.jsonl")])
    assert bad_hidden.exit_code != 0 and "128,64" in bad_hidden.output
    # the option is train-learned's too, checked the same way there
    for bad in ("0", "64,-1", ","):
        learned = runner.invoke(main, ["train-learned", "--hidden", bad, "-n", "1"])
        assert learned.exit_code == 2 and "give layer sizes like 256,128" in learned.output, learned.output
    bad_player = runner.invoke(main, ["train-value", "--player", "nobody", "--games-file", str(tmp_path / "g.jsonl")])
    assert bad_player.exit_code != 0 and "--player" in bad_player.output
    junk = tmp_path / "junk.jsonl"
    junk.write_text("not json\n")
    bad_file = runner.invoke(main, ["train-value", "--games-file", str(junk)])
    assert bad_file.exit_code != 0 and "Traceback" not in bad_file.output
    assert "cannot train on these games" in bad_file.output
    empty = tmp_path / "empty.jsonl"
    write_games(empty, CONFIG, [])
    no_games = runner.invoke(main, ["train-value", "--games-file", str(empty)])
    assert no_games.exit_code == 1 and "no positions to train on" in no_games.output, no_games.output
