"""Training the belief network (:mod:`moonshot.bots.belief`): who held each unseen card, and the fit.

Games are the generator's (:mod:`moonshot.training.learned`: a games file of seeds and actions). Each game
is replayed on the engine, and every card decision of every seat from the second trick to the
tenth is one example: the seat's view (:func:`~moonshot.bots.belief.belief_row`), which other
seat really held each card it could not see, and which seats could have. The fit is the
cross-entropy of the true holders under the masked softmax, averaged over the unseen cards; Adam
with cosine decay, hand-written backpropagation in NumPy; the validation split is by game.
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

from moonshot.bots.belief import N_BELIEF_FEATURES, BeliefNet, belief_row, holders, masked_softmax, possible
from moonshot.bots.mlp import relu_forward, relu_grads
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

# decisions of these tricks are examples (before: nothing to read; after: little left to guess)
FIRST_TRICK, LAST_TRICK = 2, 10


@dataclass
class Examples:
    x: np.ndarray  # (n, N_BELIEF_FEATURES) float16
    y: np.ndarray  # (n, 52) int8: the other seat (0..2) that held each card, -1 if not unseen
    mask: np.ndarray  # (n, 52, 3) bool: the seats that could have held it
    game: np.ndarray  # (n,) the game each example comes from

    def __len__(self) -> int:
        return len(self.y)


def game_examples(config: GenConfig, record: dict[str, Any]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The examples of one generator game: (input, holders, possible) per card decision."""
    rules = deal_rules(find_variant(config.variant), record["index"], config.passing)
    game = Game(rules, record["seed"])
    out = []
    for d in record["actions"]:
        action = action_from_dict(d)
        if type(action) is Play and game.phase is Phase.PLAY:
            view = seat_view(game, action.seat)
            if FIRST_TRICK <= view.trick_no <= LAST_TRICK:
                out.append((belief_row(view), holders(view, list(game.hands)), possible(view) > 0))
        game.apply(action)
    if not game.over:
        raise ValueError(f"game {record['index']} does not reach the end of its deal")
    return out


def examples(config: GenConfig, records: Sequence[dict[str, Any]], offset: int = 0) -> Examples:
    """The examples of ``records``, their games numbered from ``offset``."""
    xs: list[np.ndarray] = []
    ys: list[np.ndarray] = []
    ms: list[np.ndarray] = []
    games: list[int] = []
    for gi, r in enumerate(records):
        for x, y, m in game_examples(config, r):
            xs.append(x.astype(np.float16))
            ys.append(y)
            ms.append(m)
            games.append(gi + offset)
    if not xs:
        return Examples(
            np.zeros((0, N_BELIEF_FEATURES), np.float16),
            np.zeros((0, 52), np.int8),
            np.zeros((0, 52, 3), bool),
            np.zeros(0, int),
        )
    return Examples(np.stack(xs), np.stack(ys), np.stack(ms), np.asarray(games))


def read_examples(paths: Sequence[Path]) -> Examples:
    """The examples of every game in ``paths`` (games files), the games numbered across files."""
    from moonshot.training.learned import read_games

    parts: list[Examples] = []
    offset = 0
    for path in paths:
        config, records = read_games(path)
        parts.append(examples(config, records, offset))
        offset += len(records)
    return Examples(
        np.concatenate([p.x for p in parts]),
        np.concatenate([p.y for p in parts]),
        np.concatenate([p.mask for p in parts]),
        np.concatenate([p.game for p in parts]),
    )


@dataclass(frozen=True)
class BeliefTrainConfig(TrainConfig):
    """The policy network's fit settings (:class:`moonshot.training.learned.TrainConfig`), with the belief
    network's defaults."""

    hidden: tuple[int, ...] = (256,)
    epochs: int = 6
    batch: int = 512
    lr: float = 2e-3
    validation: float = 0.05


@dataclass
class BeliefTrainResult:
    net: BeliefNet
    val_loss: float  # cross-entropy of the true holders, nats per unseen card
    uniform_val_loss: float  # the same for dealing every card uniformly over the seats that may hold it
    examples: int
    history: list[tuple[int, float, float]]  # (epoch, training loss, validation loss)


def _loss_grad(z: np.ndarray, y: np.ndarray, mask: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean cross-entropy of ``y`` under the masked softmax of ``z`` ``(n, 156)``, and its gradient."""
    n = len(z)
    p = masked_softmax(z.reshape(n, 52, 3), mask)
    valid = y >= 0
    count = max(1, int(valid.sum()))
    onehot = np.zeros_like(p)
    np.put_along_axis(onehot, np.where(valid, y, 0).astype(np.int64)[..., None], 1.0, axis=2)
    onehot *= valid[..., None]
    picked = (p * onehot).sum(axis=2)[valid]
    loss = float(-np.log(np.maximum(picked, 1e-12)).sum() / count)
    grad = ((p - onehot) * valid[..., None] / count).reshape(n, 156).astype(np.float32)
    return loss, grad


def _val_loss(params: list[np.ndarray], data: Examples, idx: np.ndarray) -> float:
    total = count = 0.0
    for i in range(0, len(idx), 4096):
        part = idx[i : i + 4096]
        z, _ = relu_forward(params, data.x[part].astype(np.float32))
        loss, _ = _loss_grad(z, data.y[part], data.mask[part])
        k = float((data.y[part] >= 0).sum())
        total += loss * k
        count += k
    return total / count if count else float("nan")


def uniform_loss(data: Examples, idx: np.ndarray) -> float:
    """The cross-entropy of dealing each card uniformly over the seats that may hold it."""
    y = data.y[idx]
    valid = y >= 0
    options = data.mask[idx].sum(axis=2)[valid]
    return float(np.log(np.maximum(options, 1)).mean()) if options.size else float("nan")


def train_belief(
    data: Examples, config: BeliefTrainConfig, progress: Callable[[int, float, float], None] | None = None
) -> BeliefTrainResult:
    """Fit the belief network to ``data`` (deterministic for a given ``config.seed``)."""
    if len(data) == 0:
        raise ValueError("no examples to train on")
    rng = np.random.default_rng(config.seed)
    n_games = int(data.game.max()) + 1
    val_games = set(random.Random(config.seed).sample(range(n_games), int(n_games * config.validation)))
    val = np.isin(data.game, sorted(val_games))
    train_idx, val_idx = np.flatnonzero(~val), np.flatnonzero(val)
    sizes = [N_BELIEF_FEATURES, *config.hidden, 156]
    params: list[np.ndarray] = []
    for a, b in pairwise(sizes):
        params.append((rng.standard_normal((a, b)) * np.sqrt(2.0 / a)).astype(np.float32))
        params.append(np.zeros(b, np.float32))
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    batches = max(1, len(train_idx) // config.batch)
    total = config.epochs * batches
    step = 0
    history: list[tuple[int, float, float]] = []
    for epoch in range(config.epochs):
        perm = rng.permutation(train_idx)
        running = 0.0
        for bi in range(batches):
            idx = np.sort(perm[bi * config.batch : (bi + 1) * config.batch])
            z, acts = relu_forward(params, data.x[idx].astype(np.float32))
            loss, g = _loss_grad(z, data.y[idx], data.mask[idx])
            running += loss
            grads = relu_grads(params, acts, g)
            step += 1
            lr = config.lr * 0.5 * (1 + np.cos(np.pi * step / total))
            adam_step(params, grads, m, v, step, lr, config.weight_decay)
        history.append((epoch + 1, running / batches, _val_loss(params, data, val_idx)))
        if progress:
            progress(*history[-1])
    net = BeliefNet(tuple(zip(params[::2], params[1::2], strict=True)))
    return BeliefTrainResult(net, history[-1][2], uniform_loss(data, val_idx), len(data), history)


def save_belief(net: BeliefNet, path: Path, meta: dict[str, Any] | None = None) -> None:
    save_weights(net.to_arrays(), path, meta)


def package_belief_path() -> Path:
    import moonshot.bots.data

    return Path(moonshot.bots.data.__file__).parent / "belief.npz"


# ---------------------------------------------------------------------- the command
def _train_belief_cmd() -> Any:
    import click

    @click.command("train-belief")
    @click.option(
        "--games",
        "-n",
        default=20_000,
        show_default=True,
        type=click.IntRange(min=10),
        help="Deals to play for the dataset.",
    )
    @click.option(
        "--player",
        default="learned",
        show_default=True,
        help="Who plays two seats of every game, as a bot spec.",
    )
    @click.option(
        "--partner",
        default="shooter",
        show_default=True,
        help="Who plays the other two (the same as --player: it plays all four). With shooters in the "
        "games the network learns what a seat going for the moon holds.",
    )
    @games_file_options(
        "The deals' variant.",
        6_000_000,
        "Deal i is dealt from seed + i (far from the arena's seeds 0.. and the other commands').",
        "train-value",
    )
    @training_options(hidden="256", epochs=6, lr=2e-3, weights="belief.npz")
    def train_belief_cmd(
        games: int,
        player: str,
        partner: str,
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
        """Make the belief network `search:belief=...` deals its worlds with: play deals, learn who held what.

        Every card decision from the second trick to the tenth is one example: the network learns,
        from what that seat saw, which other seat held each card it could not see.

        The defaults are the recipe of the shipped weights (2 minutes on the idle 2-core
        development machine, 6 with an arena running beside it; 3.4 GB of memory at the peak).
        Deterministic: the same options give the same games and the same weights.
        """
        from moonshot.training.learned import games_for_training, played_rules, train_with_progress, training_meta

        rules = played_rules(variant, plays_in)  # an unknown variant is an error now, before any game

        config = GenConfig(
            variant=variant, seed=seed, simulations=1, teacher=player, partner=partner, self_play=player == partner
        )
        players = [(player, "--player"), (partner, "--partner")]
        data = games_for_training(games_file, also, config, games, workers, quiet, players, read_examples, "examples")
        tconf = BeliefTrainConfig(hidden=hidden, epochs=epochs, lr=lr, seed=train_seed)
        result = train_with_progress(
            quiet,
            epochs,
            lambda loss, val: f"train {loss:.3f}  held out {val:.3f} (nats a card)",
            lambda report: train_belief(data, tconf, report),
        )
        meta = training_meta(
            games_file,
            also,
            ("examples", len(data)),
            tconf,
            hidden,
            plays_in=rules.fingerprints(),
            validation_loss=round(result.val_loss, 4),
            uniform_validation_loss=round(result.uniform_val_loss, 4),
        )
        target = out or package_belief_path()
        save_belief(dataclasses.replace(result.net, rules=rules), target, meta)
        click.echo(
            f"cross-entropy of the true holders (nats a card): held out {result.val_loss:.3f} (dealing "
            f"uniformly: {result.uniform_val_loss:.3f}); wrote {target} ({target.stat().st_size / 1024:.0f} KiB)"
        )

    return train_belief_cmd


train_belief_cmd = _train_belief_cmd()
