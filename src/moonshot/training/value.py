"""Training the value network (:mod:`moonshot.bots.value`): positions of played deals, and the fit.

Games are the generator's (:mod:`moonshot.training.learned`: a games file of seeds and actions); each game is
replayed on a :class:`~moonshot.bots.playout.Deal` (the search's own position type, so training
and search see the same features), and every position between two tricks before the last is one
example: its features (:func:`~moonshot.bots.value.position_rows`) and the deal's final cost of
every seat (slot order, leader first). The fit is mean squared error on costs / 26, Adam with
cosine decay, hand-written backpropagation in NumPy; the validation split is by game (positions of
one deal are never on both sides). Clubs and diamonds play the same role once the two of clubs is
gone, so every training position also counts with those two suits swapped.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from moonshot.bots.mlp import relu_forward, relu_grads
from moonshot.bots.playout import Deal
from moonshot.bots.search import deal_from_view
from moonshot.bots.value import COST_SCALE, N_VALUE_FEATURES, ValueNet, position_rows
from moonshot.core.actions import Play, action_from_dict
from moonshot.core.engine import Game, Phase
from moonshot.core.variants import find_variant
from moonshot.core.views import seat_view
from moonshot.play.arena import deal_rules
from moonshot.training.learned import (
    GenConfig,
    TrainConfig,
    adam_step,
    games_file_options,
    save_weights,
    training_options,
)


@dataclass
class Positions:
    x: np.ndarray  # (n, N_VALUE_FEATURES) float32
    y: np.ndarray  # (n, 4) final costs, slot order (leader first)
    game: np.ndarray  # (n,) the game each position comes from
    trick: np.ndarray  # (n,) tricks played before it

    def __len__(self) -> int:
        return len(self.y)


def game_positions(config: GenConfig, record: dict[str, Any]) -> tuple[list[Deal], tuple[int, ...]]:
    """The positions between tricks of one generator game (copies), and its final costs."""
    rules = deal_rules(find_variant(config.variant), record["index"], config.passing)
    game = Game(rules, record["seed"])
    deal: Deal | None = None
    out: list[Deal] = []
    for d in record["actions"]:
        action = action_from_dict(d)
        if type(action) is Play and game.phase is Phase.PLAY:
            if deal is None:  # the first card: the deal as search builds it, every hand known
                deal = deal_from_view(seat_view(game, game.turn), list(game.hands))
            deal.play(action.card)
            if not deal.trick and not deal.done and max(h.bit_count() for h in deal.hands) > 1:
                out.append(deal.copy())
        game.apply(action)
    if deal is None or not deal.done:
        raise ValueError(f"game {record['index']} does not reach the end of its deal")
    return out, deal.costs()


def positions(config: GenConfig, records: Sequence[dict[str, Any]]) -> Positions:
    """Every position between tricks of ``records`` (see the module's docstring)."""
    rows: list[np.ndarray] = []
    ys: list[list[int]] = []
    games: list[int] = []
    tricks: list[int] = []
    for gi, r in enumerate(records):
        deals, costs = game_positions(config, r)
        if not deals:
            continue
        rows.append(position_rows(deals))
        for d in deals:
            ys.append([costs[(d.turn + k) & 3] for k in range(4)])
            games.append(gi)
            tricks.append(d.trick_no - 1)
    x = np.concatenate(rows) if rows else np.zeros((0, N_VALUE_FEATURES), np.float32)
    return Positions(x, np.asarray(ys, np.float32).reshape(-1, 4), np.asarray(games), np.asarray(tricks))


def swap_minors(x: np.ndarray) -> np.ndarray:
    """``x`` with clubs and diamonds swapped in every slot's hand."""
    out = x.copy()
    for k in range(4):
        c, d = k * 52, k * 52 + 13
        out[:, c : c + 13] = x[:, d : d + 13]
        out[:, d : d + 13] = x[:, c : c + 13]
    return out


@dataclass(frozen=True)
class ValueTrainConfig(TrainConfig):
    """The policy network's fit settings (:class:`moonshot.training.learned.TrainConfig`), with the value
    network's defaults."""

    hidden: tuple[int, ...] = (128, 64)
    epochs: int = 10
    lr: float = 2e-3


@dataclass
class ValueTrainResult:
    net: ValueNet
    train_mse: float  # squared error of the costs, points^2 (each seat's cost)
    val_mse: float
    baseline_val_mse: float  # a constant guess: the training mean per slot
    examples: int
    history: list[tuple[int, float, float]]


def _mse(net: ValueNet, x: np.ndarray, y: np.ndarray) -> float:
    """The squared error of ``net``'s costs on ``x`` against ``y`` (points², in slices: no copy of
    the hidden layers of a million positions at once)."""
    if len(y) == 0:
        return float("nan")
    out = np.concatenate([net.predict(x[i : i + 4096]) for i in range(0, len(x), 4096)])
    return float(((out - y) ** 2).mean())


def train_value(
    data: Positions, config: ValueTrainConfig, progress: Callable[[int, float, float], None] | None = None
) -> ValueTrainResult:
    """Fit the value network to ``data`` (deterministic for a given ``config.seed``)."""
    if len(data) == 0:
        raise ValueError("no positions to train on")
    rng = np.random.default_rng(config.seed)
    n_games = int(data.game.max()) + 1
    val_games = set(random.Random(config.seed).sample(range(n_games), int(n_games * config.validation)))
    val = np.isin(data.game, sorted(val_games))
    x_own, y_own = data.x[~val], data.y[~val]  # (a copy each: made once, the positions are large)
    xt = np.concatenate([x_own, swap_minors(x_own)])
    yt = np.concatenate([y_own, y_own]) / COST_SCALE
    xv, yv = data.x[val], data.y[val]
    sizes = [N_VALUE_FEATURES, *config.hidden, 4]
    params: list[np.ndarray] = []
    for a, b in pairwise(sizes):
        params.append((rng.standard_normal((a, b)) * np.sqrt(2.0 / a)).astype(np.float32))
        params.append(np.zeros(b, np.float32))
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    step = 0
    batches = max(1, len(xt) // config.batch)
    total = config.epochs * batches
    history: list[tuple[int, float, float]] = []
    for epoch in range(config.epochs):
        perm = rng.permutation(len(xt))
        loss = 0.0
        for bi in range(batches):
            idx = perm[bi * config.batch : (bi + 1) * config.batch]
            out, acts = relu_forward(params, xt[idx])
            err = out - yt[idx]
            loss += float((err**2).mean())
            g = (2.0 / err.size) * err
            grads = relu_grads(params, acts, g)
            step += 1
            lr = config.lr * 0.5 * (1 + np.cos(np.pi * step / total))
            adam_step(params, grads, m, v, step, lr, config.weight_decay)
        val_mse = _mse(ValueNet(tuple(zip(params[::2], params[1::2], strict=True))), xv, yv)
        history.append((epoch + 1, loss / batches * COST_SCALE**2, val_mse))
        if progress:
            progress(epoch + 1, history[-1][1], val_mse)
    baseline = float(((yv - y_own.mean(axis=0)) ** 2).mean()) if len(yv) else float("nan")
    net = ValueNet(tuple(zip(params[::2], params[1::2], strict=True)))
    return ValueTrainResult(net, _mse(net, x_own, y_own), history[-1][2], baseline, len(data), history)


def save_value(net: ValueNet, path: Path, meta: dict[str, Any] | None = None) -> None:
    save_weights(net.to_arrays(), path, meta)


def package_value_path() -> Path:
    import moonshot.bots.data

    return Path(moonshot.bots.data.__file__).parent / "value.npz"


def read_positions(paths: Sequence[Path], limit: int | None = None) -> Positions:
    """The positions of every game in ``paths`` (games files), the games numbered across files."""
    from moonshot.training.learned import read_games

    parts: list[Positions] = []
    offset = 0
    for path in paths:
        config, records = read_games(path)
        if limit is not None:
            records = records[:limit]
        p = positions(config, records)
        p.game = p.game + offset
        offset += len(records)
        parts.append(p)
    return Positions(
        np.concatenate([p.x for p in parts]),
        np.concatenate([p.y for p in parts]),
        np.concatenate([p.game for p in parts]),
        np.concatenate([p.trick for p in parts]),
    )


# ---------------------------------------------------------------------- the command
def _train_value_cmd() -> Any:
    import click

    @click.command("train-value")
    @click.option(
        "--games",
        "-n",
        default=64_000,
        show_default=True,
        type=click.IntRange(min=10),
        help="Deals to play for the dataset (the player in all four seats).",
    )
    @click.option(
        "--player",
        default="search:simulations=100",
        show_default=True,
        help="Who plays the games, as a bot spec (in all four seats): the value learned is where "
        "deals between such players end. `search:simulations=100` plays about 17 deals a second on "
        "one core, `learned` about 300.",
    )
    @games_file_options(
        "The deals' variant (search uses a value network in standard, Gym and Trend).",
        5_000_000,
        "Deal i is dealt from seed + i (far from the arena's seeds 0.. and train-learned's).",
        "train-learned",
    )
    @training_options(hidden="128,64", epochs=10, lr=2e-3, weights="value.npz", plays_in=("trend",))
    def train_value_cmd(
        games: int,
        player: str,
        variant: str,
        seed: int,
        workers: int,
        games_file: Path | None,
        also: tuple[Path, ...],
        hidden: tuple[int, ...],
        epochs: int,
        lr: float,
        train_seed: int,
        out: Path | None,
        plays_in: tuple[str, ...],
        quiet: bool,
    ) -> None:
        """Make the value network `search` scores its playouts with: play deals, learn where they end.

        Every position between tricks of the deals is one example: the network learns each seat's
        final cost from it (`search:value=FILE` tries a file).

        The defaults are the recipe of the shipped weights: `search` at 100 playouts a move playing
        itself (about 31 minutes with --workers 2 on two cores to play the games, then a minute and
        a half to read them back and train; 3.5 GB of memory at the peak).
        Deterministic: the same options give the same games and the same weights.
        """
        from moonshot.training.learned import games_for_training, played_rules, train_with_progress, training_meta

        rules = played_rules(variant, plays_in)  # an unknown variant is an error now, before any game

        config = GenConfig(variant=variant, seed=seed, simulations=1, teacher=player, partner=player, self_play=True)
        data = games_for_training(
            games_file, also, config, games, workers, quiet, [(player, "--player")], read_positions, "positions"
        )
        tconf = ValueTrainConfig(hidden=hidden, epochs=epochs, lr=lr, seed=train_seed)
        result = train_with_progress(
            quiet,
            epochs,
            lambda loss, val: f"train {loss:.1f}  held out {val:.1f} (points²)",
            lambda report: train_value(data, tconf, report),
        )
        meta = training_meta(
            games_file,
            also,
            ("positions", len(data)),
            tconf,
            hidden,
            plays_in=rules.fingerprints(),
            validation_mse=round(result.val_mse, 3),
            constant_validation_mse=round(result.baseline_val_mse, 3),
        )
        target = out or package_value_path()
        save_value(dataclasses.replace(result.net, rules=rules), target, meta)
        click.echo(
            f"squared error of the final costs (points², per seat): train {result.train_mse:.1f}, held out "
            f"{result.val_mse:.1f} (a constant guess: {result.baseline_val_mse:.1f}); wrote {target} "
            f"({target.stat().st_size / 1024:.0f} KiB)"
        )

    return train_value_cmd


train_value_cmd = _train_value_cmd()
