"""``moonshot train-learned``: the dataset and the training that make the ``learned`` bot's weights.

1. **Games** (:func:`generate`): arena-style single deals of a variant (deal ``i`` from seed
   ``seed + i``, the pass direction of deal ``i``), the teacher (a bot spec, ``search`` at a fixed
   ``--simulations`` budget, so every machine plays the same games) in all four seats
   (self-play), or in two seats across from each other with two ``heuristic`` seats, the
   teacher's seats alternating between deals. A teacher whose ``network=`` names an earlier
   round's weights makes this expert iteration. A game is stored as its seed and actions (JSON
   lines), so the features can change without playing again.
2. **Decisions** (:func:`decisions`): every game is replayed through the engine; each card play
   of a teacher seat with more than one legal card becomes one example: the feature rows of the
   legal cards (:func:`moonshot.bots.learned.card_features`, from the seat's view) and the card
   the teacher played.
3. **Training** (:func:`train`): the policy network of :mod:`moonshot.bots.learned`, softmax over
   the legal cards, cross-entropy, Adam, hand-written backpropagation in NumPy (float32), seeded:
   the same data and seed give the same weights.

The games are played in ``--workers`` processes; their order (and so the result) does not depend
on how many.
"""

# ruff: noqa: E402  (the BLAS thread count is set before NumPy is imported)
from __future__ import annotations

from moonshot import one_blas_thread

# One BLAS thread: the matrices are small, and on a busy machine BLAS threads spinning for each
# other cost ten times the work (measured: 2.6 v 53 ms CPU per batch); one thread is also what
# makes the weights the same on every run. (The commands set it before anything imports NumPy.)
one_blas_thread()

import gzip
import json
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from moonshot.bots.base import Bot
from moonshot.bots.learned import MAX_LEGAL, N_FEATURES, Policy, card_features
from moonshot.bots.registry import make_bot
from moonshot.core.actions import Play, action_from_dict, action_to_dict
from moonshot.core.cards import card_list
from moonshot.core.engine import Game, Phase
from moonshot.core.variants import find_variant
from moonshot.core.views import seat_view
from moonshot.play.arena import deal_rules
from moonshot.play.sim import play_out

DATA_FORMAT = "moonshot.learned-games/1"


@dataclass(frozen=True)
class GenConfig:
    variant: str = "standard"
    seed: int = 1_000_000  # far from the arena's seeds (0..), so evaluation deals are not trained on
    simulations: int = 100
    # the teacher's bot spec: plain "search" is the round-one teacher (TEACHER_OPTIONS); with options
    # after a colon, today's search with those ("search:network=round1.npz": expert iteration).
    # These defaults are what games files that predate these fields left out; the command's own
    # defaults are the shipped weights' recipe.
    teacher: str = "search"
    partner: str = "heuristic"
    passing: bool = True
    # the SHA-256 of the weights file the teacher's `network=` option names (checked before playing)
    network_sha256: str | None = None
    # self-play: the teacher in all four seats (every seat's decisions are examples)
    self_play: bool = False
    # DAgger: the bot whose actions are played in the teacher's seats (a bot spec; None: the
    # teacher's own). The teacher then only labels: at each card decision it says which card it
    # would play, and that card is the example's, on the states the player's own play leads to.
    player: str | None = None
    # the SHA-256 of the weights file the player's `network=` option names (checked before playing)
    player_sha256: str | None = None


def teacher_seats(index: int, self_play: bool = False) -> tuple[int, ...]:
    if self_play:
        return (0, 1, 2, 3)
    return (0, 2) if index % 2 == 0 else (1, 3)


def file_sha256(path: str | Path) -> str:
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def teacher_network(spec: str) -> str | None:
    """The weights file a teacher spec's ``network=`` option names, if any."""
    from moonshot.play.arena import bot_spec

    network = bot_spec(spec)[1].get("network")
    return None if network is None else str(network)


_BOTS: dict[tuple[str, int], Bot] = {}  # (spec, simulations) -> the bot, made once per process
# the round-one teacher's card rules, those the first weights were trained with: today's `search`
# uses a network as its prior, so the plain teacher keeps the rules it had before there was one
TEACHER_OPTIONS: dict[str, dict[str, Any]] = {"search": {"root": "flat", "prior": 0, "endgame": 3}}


def _bot(spec: str, simulations: int, network_sha256: str | None = None) -> Bot:
    """The generator's bot for a spec (``name`` or ``name:key=value,...``); search bots play
    ``simulations`` playouts a decision. Plain ``search`` (or ``pimc``) is the round-one teacher
    (:data:`TEACHER_OPTIONS`); with options, today's bot with those. ``network_sha256`` (optional)
    must be the digest of the file the spec's ``network=`` names."""
    from moonshot.play.arena import bot_spec

    key = (spec, simulations)
    if key not in _BOTS:
        name, options = bot_spec(spec)
        # checked when the bot is made, which is when it reads the file (once per process)
        if network_sha256 is not None:
            network = options.get("network")
            if network is None or file_sha256(str(network)) != network_sha256:
                raise ValueError(f"{network}: not the weights these games were played with (SHA-256 differs)")
        if name in ("search", "pimc"):
            _BOTS[key] = make_bot(name, **{"simulations": simulations, **(options or TEACHER_OPTIONS.get(name, {}))})
        else:
            _BOTS[key] = make_bot(name, **options)
    return _BOTS[key]


def label_key(seat: int, trick_no: int) -> str:
    """Which card decision of a deal a label is for: the seat, and the trick (each seat plays one card a trick)."""
    return f"{seat}:{trick_no}"


class Labelled:
    """A seat that plays ``player``'s actions while ``teacher`` labels its card decisions.

    At each card play with more than one legal card the teacher is asked what it would play (it
    searches as if it held the seat; its card is not played), and that card goes into ``labels``
    under :func:`label_key`. The action played is the player's, whatever the decision.
    """

    def __init__(self, player: Bot, teacher: Bot, labels: dict[str, int]) -> None:
        self.player = player
        self.teacher = teacher
        self.labels = labels
        self.name = player.name

    def act(self, view: Any, rng: random.Random) -> Any:
        legal = view.legal_plays
        if view.phase is Phase.PLAY and legal & (legal - 1):
            said = self.teacher.act(view, rng)
            if type(said) is Play:
                self.labels[label_key(view.seat, view.trick_no)] = said.card
        return self.player.act(view, rng)


def play_game(config: GenConfig, index: int) -> dict[str, Any]:
    """Play generator game ``index``: the teacher in two seats (all four in self-play), the partner
    bot in the others; with a ``player``, the player plays the teacher's seats and the teacher
    labels them (the record's ``labels``)."""
    rules = deal_rules(find_variant(config.variant), index, config.passing)
    seed = config.seed + index
    teach = teacher_seats(index, config.self_play)
    teacher = _bot(config.teacher, config.simulations, config.network_sha256)
    labels: dict[str, int] = {}
    seat_bot: Bot = teacher
    if config.player is not None:
        seat_bot = Labelled(_bot(config.player, config.simulations, config.player_sha256), teacher, labels)
    players = [seat_bot if s in teach else _bot(config.partner, config.simulations) for s in range(4)]
    rngs = [random.Random(f"moonshot-learned:{seed}:{s}") for s in range(4)]
    game = Game(rules, seed)
    play_out(game, players, rngs)
    record: dict[str, Any] = {
        "index": index,
        "seed": seed,
        "teacher_seats": list(teach),
        "actions": [action_to_dict(a) for a in game.actions],
    }
    if config.player is not None:
        record["labels"] = labels
    return record


def _play_many(args: tuple[GenConfig, list[int]]) -> list[dict[str, Any]]:
    config, indices = args
    return [play_game(config, i) for i in indices]


def generate(
    config: GenConfig, games: int, workers: int = 1, progress: Callable[[int], None] | None = None
) -> Iterator[dict[str, Any]]:
    """Yield ``games`` generator games in index order (``progress(n)`` after each chunk of ``n``)."""
    chunk = 2
    plan = [(config, list(range(i, min(games, i + chunk)))) for i in range(0, games, chunk)]
    if workers <= 1:
        for task in plan:
            out = _play_many(task)
            yield from out
            if progress:
                progress(len(out))
        return
    with ProcessPoolExecutor(workers) as pool:
        for out in pool.map(_play_many, plan):
            yield from out
            if progress:
                progress(len(out))


def _open(path: Path, mode: str) -> Any:
    return gzip.open(path, mode, encoding="utf-8") if path.suffix == ".gz" else open(path, mode, encoding="utf-8")


def write_games(path: Path, config: GenConfig, records: Iterable[dict[str, Any]]) -> int:
    """Write games as JSON lines (gzip when the name ends in ``.gz``), one line as each arrives (an
    interrupted run keeps the games it finished, in a plain ``.jsonl``); returns how many."""
    header = {"format": DATA_FORMAT, **asdict(config)}
    n = 0
    with _open(path, "wt") as f:
        f.write(json.dumps(header) + "\n")
        for r in records:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
            f.flush()
            n += 1
    return n


def read_games(path: Path) -> tuple[GenConfig, list[dict[str, Any]]]:
    """The generator's settings and games from a file :func:`write_games` wrote (``ValueError``
    saying what is wrong with any other file)."""
    with _open(path, "rt") as f:
        try:
            header = json.loads(f.readline())
        except (ValueError, OSError) as e:  # not JSON, not UTF-8, not gzip
            raise ValueError(f"{path}: not a {DATA_FORMAT} file ({e})") from e
        if not isinstance(header, dict) or header.pop("format", None) != DATA_FORMAT:
            raise ValueError(f"{path}: not a {DATA_FORMAT} file")
        try:
            config = GenConfig(**header)
        except TypeError as e:
            raise ValueError(f"{path}: a header this version does not know ({e})") from e
        records = []
        for line in f:
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                break  # the last line of an interrupted run
        return config, records


@dataclass
class Decisions:
    """Padded examples: ``x[i, :n[i]]`` are the legal cards' rows, ``y[i]`` the teacher's card index,
    ``target[i]`` the cards equivalent to it (:func:`equivalent`)."""

    x: np.ndarray  # (N, MAX_LEGAL, N_FEATURES) float32
    mask: np.ndarray  # (N, MAX_LEGAL) bool
    y: np.ndarray  # (N,) int64
    target: np.ndarray  # (N, MAX_LEGAL) bool

    def __len__(self) -> int:
        return len(self.y)

    @classmethod
    def joined(cls, parts: Sequence[Decisions]) -> Decisions:
        """The examples of ``parts``, one after another (DAgger's aggregate of every round's games)."""
        return cls(
            np.concatenate([p.x for p in parts]),
            np.concatenate([p.mask for p in parts]),
            np.concatenate([p.y for p in parts]),
            np.concatenate([p.target for p in parts]),
        )


def equivalent(cards: Sequence[int], chosen: int, live: int) -> list[bool]:
    """Which of ``cards`` (my legal cards) play exactly like ``chosen``: the same suit and no ``live``
    card (held by another seat, or on the current trick) ranked between them. The teacher's pick
    among such cards is a coin toss, so all of them count as its choice."""
    out = []
    for c in cards:
        if c // 13 != chosen // 13:
            out.append(False)
            continue
        lo, hi = min(c, chosen), max(c, chosen)
        between = ((1 << hi) - 1) & ~((2 << lo) - 1)
        out.append(not live & between)
    return out


def decisions(config: GenConfig, records: Sequence[dict[str, Any]]) -> Decisions:
    """Replay the games and collect the teacher's card decisions (more than one legal card)."""
    xs: list[np.ndarray] = []
    ys: list[int] = []
    targets: list[list[bool]] = []
    base = find_variant(config.variant)
    for r in records:
        rules = deal_rules(base, r["index"], config.passing)
        game = Game(rules, r["seed"])
        teach = set(r["teacher_seats"])
        labels: dict[str, int] | None = r.get("labels")  # a player's games: the teacher's cards
        if labels is not None and not isinstance(labels, dict):
            raise ValueError(f"game {r['index']}: labels must map decisions to cards")
        for d in r["actions"]:
            action = action_from_dict(d)
            if type(action) is Play and action.seat in teach and game.phase is Phase.PLAY:
                view = seat_view(game, action.seat)
                legal = view.legal_plays
                label = action.card if labels is None else labels.get(label_key(action.seat, view.trick_no))
                if legal & (legal - 1) and label is not None:
                    if not legal >> label & 1:
                        raise ValueError(f"game {r['index']}: the label {label} is not a legal card")
                    cards = card_list(legal)
                    xs.append(card_features(view, cards))
                    ys.append(cards.index(label))
                    live = view.unseen | sum(1 << c for _, c in view.trick)
                    targets.append(equivalent(cards, label, live))
            game.apply(action)
    n = len(ys)
    x = np.zeros((n, MAX_LEGAL, N_FEATURES), dtype=np.float32)
    mask = np.zeros((n, MAX_LEGAL), dtype=bool)
    target = np.zeros((n, MAX_LEGAL), dtype=bool)
    for i, rows in enumerate(xs):
        x[i, : len(rows)] = rows
        mask[i, : len(rows)] = True
        target[i, : len(rows)] = targets[i]
    return Decisions(x, mask, np.asarray(ys, dtype=np.int64), target)


# ---------------------------------------------------------------------- the network
@dataclass(frozen=True)
class TrainConfig:
    hidden: tuple[int, ...] = (64, 32)
    epochs: int = 30
    batch: int = 256
    lr: float = 3e-3
    weight_decay: float = 1e-4
    seed: int = 0
    validation: float = 0.1


@dataclass
class TrainResult:
    policy: Policy
    train_agreement: float
    val_agreement: float
    heuristic_val_agreement: float
    examples: int
    history: list[tuple[int, float, float]]  # (epoch, train loss, validation agreement)


def _forward(params: list[np.ndarray], rows: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Scores ``(R,)`` of packed card rows ``(R, F)``, and the hidden activations (for backpropagation)."""
    acts = [rows]
    h = rows
    n_layers = len(params) // 2
    for i in range(n_layers):
        h = h @ params[2 * i] + params[2 * i + 1]
        if i < n_layers - 1:
            h = np.tanh(h)
            acts.append(h)
    return h[:, 0], acts


def adam_step(
    params: list[np.ndarray],
    grads: list[np.ndarray],
    m: list[np.ndarray],
    v: list[np.ndarray],
    step: int,
    lr: float,
    weight_decay: float,
    b1: float = 0.9,
    b2: float = 0.999,
) -> None:
    """One Adam update of ``params`` (weights and biases alternating; weight decay on the weights),
    in place; ``m`` and ``v`` are the moment estimates, ``step`` counts from 1."""
    for j, g in enumerate(grads):
        if j % 2 == 0:
            g = g + weight_decay * params[j]
        m[j] = b1 * m[j] + (1 - b1) * g
        v[j] = b2 * v[j] + (1 - b2) * g * g
        mh = m[j] / (1 - b1**step)
        vh = v[j] / (1 - b2**step)
        params[j] -= (lr * mh / (np.sqrt(vh) + 1e-8)).astype(np.float32)


def _padded(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    out = np.full(mask.shape, -np.inf, dtype=scores.dtype)
    out[mask] = scores
    return out


def _loss_grad(
    params: list[np.ndarray], xn: np.ndarray, mask: np.ndarray, target: np.ndarray
) -> tuple[float, list[np.ndarray]]:
    """Cross-entropy of the teacher's choice: ``-log`` of the probability of its set of equivalent cards.

    Only the legal cards' rows go through the network (``xn[mask]``); the softmax is per decision.
    """
    rows = xn[mask]
    scores, acts = _forward(params, rows)
    s = _padded(scores, mask)
    s = s - s.max(axis=1, keepdims=True)
    e = np.exp(s)
    p = e / e.sum(axis=1, keepdims=True)
    b = len(target)
    pt = (p * target).sum(axis=1)
    loss = float(-np.log(pt + 1e-12).mean())
    q = p * target / (pt[:, None] + 1e-12)
    d = (p - q) / b
    grads: list[np.ndarray] = [np.zeros_like(w) for w in params]
    n_layers = len(params) // 2
    g = d[mask][:, None]  # (R, 1)
    for i in reversed(range(n_layers)):
        a = acts[i]  # the input of layer i
        grads[2 * i] = a.T @ g
        grads[2 * i + 1] = g.sum(axis=0)
        if i > 0:
            g = (g @ params[2 * i].T) * (1.0 - acts[i] ** 2)
    return loss, grads


def _agreement(params: list[np.ndarray], xn: np.ndarray, mask: np.ndarray, target: np.ndarray) -> float:
    """How often the network's card is the teacher's (or one equivalent to it)."""
    if len(target) == 0:
        return float("nan")
    scores, _ = _forward(params, xn[mask])
    pick = _padded(scores, mask).argmax(axis=1)
    return float(target[np.arange(len(target)), pick].mean())


def train(
    data: Decisions, config: TrainConfig, progress: Callable[[int, float, float], None] | None = None
) -> TrainResult:
    """Fit the policy network to ``data`` (deterministic for a given ``config.seed``)."""
    rng = np.random.default_rng(config.seed)
    n = len(data)
    if n == 0:
        raise ValueError("no decisions to train on")
    order = rng.permutation(n)
    n_val = int(n * config.validation)
    val, tr = order[:n_val], order[n_val:]
    rows = data.x[data.mask].astype(np.float64)
    mean = rows.mean(axis=0)
    std = rows.std(axis=0)
    scale = np.where(std > 1e-6, 1.0 / np.maximum(std, 1e-6), 0.0)
    xn = ((data.x - mean) * scale * data.mask[..., None]).astype(np.float32)
    sizes = [N_FEATURES, *config.hidden, 1]
    params: list[np.ndarray] = []
    for i in range(len(sizes) - 1):
        bound = np.sqrt(6.0 / (sizes[i] + sizes[i + 1]))
        params.append(rng.uniform(-bound, bound, size=(sizes[i], sizes[i + 1])).astype(np.float32))
        params.append(np.zeros(sizes[i + 1], dtype=np.float32))
    m = [np.zeros_like(q) for q in params]
    v = [np.zeros_like(q) for q in params]
    step = 0
    history: list[tuple[int, float, float]] = []
    for epoch in range(config.epochs):
        perm = tr[rng.permutation(len(tr))]
        losses = []
        lr = config.lr * (0.5 * (1 + np.cos(np.pi * epoch / config.epochs)))  # cosine decay
        for start in range(0, len(perm), config.batch):
            idx = perm[start : start + config.batch]
            loss, grads = _loss_grad(params, xn[idx], data.mask[idx], data.target[idx])
            losses.append(loss)
            step += 1
            adam_step(params, grads, m, v, step, lr, config.weight_decay)
        val_acc = _agreement(params, xn[val], data.mask[val], data.target[val])
        mean_loss = float(np.mean(losses)) if losses else float("nan")
        history.append((epoch + 1, mean_loss, val_acc))
        if progress:
            progress(epoch + 1, mean_loss, val_acc)
    best_col = 6  # h_best: the heuristic's own choice
    h_pick = np.where(data.mask[val], data.x[val, :, best_col], -1).argmax(axis=1) if n_val else np.zeros(0)
    layers = tuple(
        (params[2 * i].astype(np.float32), params[2 * i + 1].astype(np.float32)) for i in range(len(params) // 2)
    )
    policy = Policy(mean.astype(np.float32), scale.astype(np.float32), layers)
    return TrainResult(
        policy=policy,
        train_agreement=_agreement(params, xn[tr], data.mask[tr], data.target[tr]),
        val_agreement=history[-1][2] if history else float("nan"),
        heuristic_val_agreement=float(data.target[val][np.arange(n_val), h_pick].mean()) if n_val else float("nan"),
        examples=n,
        history=history,
    )


def save_policy(policy: Policy, path: Path, meta: dict[str, Any] | None = None) -> None:
    arrays = policy.to_arrays()
    arrays["meta"] = np.array(json.dumps(meta or {}, sort_keys=True))
    with open(path, "wb") as f:
        np.savez_compressed(f, **arrays)


def package_weights_path() -> Path:
    import moonshot.bots.data

    return Path(moonshot.bots.data.__file__).parent / "learned.npz"


__all__ = [
    "Decisions",
    "GenConfig",
    "TrainConfig",
    "TrainResult",
    "decisions",
    "generate",
    "package_weights_path",
    "play_game",
    "read_games",
    "save_policy",
    "train",
    "write_games",
]


# ---------------------------------------------------------------------- the command
def save_weights(arrays: dict[str, Any], path: Path, meta: dict[str, Any] | None = None) -> None:
    """Write a network's arrays (its ``to_arrays()``) to ``path`` as a compressed ``.npz``, with
    ``meta`` (how it was made) as text entries ``meta_<key>``."""
    arrays = dict(arrays)
    for k, val in (meta or {}).items():
        arrays[f"meta_{k}"] = np.array(str(val))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        np.savez_compressed(f, **arrays)


def games_for_training(
    games_file: Path | None,
    also: Sequence[Path],
    config: GenConfig,
    games: int,
    workers: int,
    quiet: bool,
    players: Sequence[tuple[str, str]],
    read: Callable[[list[Path]], Any],
    noun: str,
) -> Any:
    """What ``train-value`` and ``train-belief`` train on: ``read`` of ``games_file`` and ``also``.

    An existing ``games_file`` is read as it is (whoever played it, which is said); otherwise
    ``games`` deals are played with ``config`` into it first, after checking each bot spec of
    ``players`` (``(spec, option)`` pairs: a bad spec is that option's error, not a worker's
    traceback). A file that is not a games file, and one with no ``noun`` in it, are clear errors.
    """
    import time

    import click

    from moonshot.cli.progress import err_console
    from moonshot.cli.progress import progress_bar as _progress

    start = time.perf_counter()
    options = [hint for _, hint in players]
    if games_file is not None and games_file.exists():  # (read once, below)
        makers = ", ".join(["--games", *options[:-1]]) + f" and {options[-1]}"
        err_console.print(f"reading the games of {games_file} (all of them, whoever played: {makers} make new files)")
    else:
        if games_file is None:
            raise click.UsageError("give --games-file: the games are kept there (and read back from it)")
        for spec, hint in players:
            try:  # a bad spec is an error now, not in a worker process
                _bot(spec, 1)
            except ValueError as e:
                raise click.BadParameter(str(e), param_hint=hint) from e
        who = config.teacher if config.self_play else f"{config.teacher} and {config.partner}"
        with _progress(quiet) as progress:
            bar = progress.add_task(f"{config.variant}: {who} games", total=games, status="")
            write_games(games_file, config, generate(config, games, workers, lambda n: progress.update(bar, advance=n)))
    paths = [games_file, *also]
    try:
        data = read(paths)
    except (ValueError, KeyError, TypeError) as e:  # not a games file, or a game that does not replay
        raise click.ClickException(f"cannot train on these games: {e}") from e
    if not len(data):
        raise click.ClickException(f"no {noun} to train on in {', '.join(map(str, paths))}")
    err_console.print(f"{len(data)} {noun} ({time.perf_counter() - start:.0f} s)")
    return data


def train_with_progress(
    quiet: bool,
    epochs: int,
    status: Callable[[float, float], str],
    fit: Callable[[Callable[[int, float, float], None]], Any],
) -> Any:
    """Run ``fit(report)`` (``train_value``, ``train_belief``) under a progress bar of ``epochs``
    whose status line is ``status(train_loss, held_out_loss)`` after each epoch; its result."""
    from moonshot.cli.progress import progress_bar as _progress

    with _progress(quiet) as progress:
        bar = progress.add_task("training", total=epochs, status="")

        def report(epoch: int, loss: float, val: float) -> None:
            progress.update(bar, completed=epoch, status=status(loss, val))

        return fit(report)


def training_meta(
    games_file: Path | None,
    also: Sequence[Path],
    examples: tuple[str, int],
    train_config: Any,
    hidden: Sequence[int],
    **results: Any,
) -> dict[str, Any]:
    """What a weights file records of how it was made: the games files, ``examples`` (a name and
    a count), the training options (a dataclass, with ``hidden``), and the ``results``."""
    return {
        "games_files": [str(p) for p in (games_file, *also)],
        examples[0]: examples[1],
        "train": {**asdict(train_config), "hidden": list(hidden)},
        **results,
    }


def _stacked(options: Sequence[Callable[[Any], Any]]) -> Callable[[Any], Any]:
    """One decorator of click ``options``, the first listed first in ``--help``."""

    def apply(command: Any) -> Any:
        for option in reversed(options):
            command = option(command)
        return command

    return apply


def games_file_options(variant_help: str, seed: int, seed_help: str, also_example: str) -> Callable[[Any], Any]:
    """The options ``train-value`` and ``train-belief`` share about their games (the variant, the
    seeds, where the games are kept, other games files), with each command's own defaults."""
    import click

    options = [
        click.option("--variant", "-v", default="standard", show_default=True, help=variant_help),
        click.option("--seed", default=seed, show_default=True, type=int, help=seed_help),
        click.option(
            "--games-file",
            type=click.Path(dir_okay=False, path_type=Path),
            default=None,
            help="Required: keep the games here (.jsonl or .jsonl.gz); read them from it if it exists.",
        ),
        click.option(
            "--also",
            type=click.Path(dir_okay=False, exists=True, path_type=Path),
            multiple=True,
            help=f"Another games file to train on as well ({also_example}'s --games-file, say); repeatable.",
        ),
    ]

    return _stacked(options)


def training_options(
    hidden: str, epochs: int, lr: float, weights: str, plays_in: tuple[str, ...] = ()
) -> Callable[[Any], Any]:
    """The options ``train-learned``, ``train-value`` and ``train-belief`` share (processes, the network's shape, the
    fit, where the weights go, the rules it plays under), with each command's own defaults."""
    import click

    def sizes(ctx: click.Context, param: click.Parameter, text: str) -> tuple[int, ...]:
        try:
            out = tuple(int(x) for x in text.split(",") if x.strip())
        except ValueError:
            out = ()
        if not out or min(out) < 1:
            raise click.BadParameter(f"{text!r}: give layer sizes like {hidden}")
        return out

    options = [
        click.option(
            "--workers",
            "-w",
            default=1,
            show_default=True,
            type=click.IntRange(min=1),
            help="Processes playing the games (the result does not depend on it).",
        ),
        click.option("--hidden", default=hidden, show_default=True, callback=sizes, help="Hidden layer sizes."),
        click.option("--epochs", default=epochs, show_default=True, type=click.IntRange(min=1)),
        click.option("--lr", default=lr, show_default=True, type=float),
        click.option("--train-seed", default=0, show_default=True, type=int, help="Initialisation and shuffling."),
        click.option(
            "--out",
            "-o",
            type=click.Path(dir_okay=False, path_type=Path),
            default=None,
            help=f"Where to write the weights [default: the package's moonshot/bots/data/{weights}].",
        ),
        click.option(
            "--plays-in",
            multiple=True,
            default=plays_in,
            show_default=True,
            help="A variant whose rules the weights file records as ones the network plays under, besides "
            "the training variant's (after measuring it there); repeatable. Bots use a network wherever a "
            "game's rules play like one of those it records, whatever they are called.",
        ),
        click.option("--quiet", "-q", is_flag=True, help="No progress bars."),
    ]

    return _stacked(options)


def played_rules(variant: str, plays_in: Sequence[str]) -> Any:
    """The rules a network trained on ``variant`` deals plays under: those, and each of ``plays_in``'s
    (a :class:`moonshot.bots.tuned.RulesSet`, by the rules' fields; ``click.BadParameter`` for an
    unknown variant)."""
    import click

    from moonshot.bots.tuned import RulesSet
    from moonshot.core.variants import UnknownVariant

    try:
        return RulesSet.of(*(find_variant(v) for v in (variant, *plays_in)))
    except UnknownVariant as e:
        raise click.BadParameter(str(e), param_hint="--plays-in") from e


def _train_learned_cmd() -> Any:
    import time

    import click

    @click.command("train-learned")
    @click.option(
        "--games",
        "-n",
        default=8000,
        show_default=True,
        type=click.IntRange(min=1),
        help="Deals to play for the dataset (the teacher in four seats each; two with --no-self-play).",
    )
    @click.option(
        "--simulations",
        default=300,
        show_default=True,
        type=click.IntRange(min=1),
        help="The teacher's playouts per decision (a fixed budget: the same games on any machine).",
    )
    @click.option(
        "--teacher",
        default="search:prior=3",
        show_default=True,
        help="The bot to imitate, as a bot spec: today's search with the options given, e.g. "
        "`search:prior=3` (today's search with its packaged prior: expert iteration, the shipped "
        "weights' teacher), `search:prior=0` (no network: the prior's teacher) or "
        "`search:network=round1.npz` (a search guided by another network). Plain `search` is the "
        "round-one teacher (root=flat, prior=0, endgame=3).",
    )
    @click.option(
        "--self-play/--no-self-play",
        default=True,
        show_default=True,
        help="The teacher in all four seats (every seat's card plays are examples), or in two seats "
        "across from each other with two heuristic seats.",
    )
    @click.option(
        "--player",
        default=None,
        help="DAgger: the bot that plays the teacher's seats, as a bot spec (an earlier round's network, "
        "`learned:network=round1.npz`); the teacher only labels each card decision with the card it "
        "would play, on the states the player's own play reaches. Join the earlier rounds' games "
        "with --also. [default: the teacher plays]",
    )
    @click.option("--variant", "-v", default="standard", show_default=True)
    @click.option(
        "--seed",
        default=4_000_000,
        show_default=True,
        type=int,
        help="Deal i is dealt from seed + i (far from the arena's seeds 0..).",
    )
    @click.option(
        "--games-file",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="Keep the games here (.jsonl or .jsonl.gz); read them from it if it exists.",
    )
    @click.option(
        "--also",
        type=click.Path(dir_okay=False, exists=True, path_type=Path),
        multiple=True,
        help="Another games file to train on as well (an earlier round's --games-file); repeatable.",
    )
    @training_options(hidden="256,128", epochs=30, lr=3e-3, weights="learned.npz", plays_in=("trend",))
    def train_learned_cmd(
        games: int,
        simulations: int,
        teacher: str,
        self_play: bool,
        player: str | None,
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
        """Make the `learned` bot's weights: play deals with a teacher (search), imitate its card play.

        The defaults are the recipe of the shipped weights (`-w 2`: about 25 minutes on two cores).
        Deterministic: the same options give the same games and the same weights.
        """
        from moonshot.cli.progress import err_console
        from moonshot.cli.progress import progress_bar as _progress

        start = time.perf_counter()
        played_rules(variant, plays_in)  # an unknown variant is an error now, before any game
        if games_file is not None and games_file.exists():
            try:
                config, records = read_games(games_file)
            except ValueError as e:
                raise click.BadParameter(str(e), param_hint="--games-file") from e
            records = records[:games]
            err_console.print(f"read {len(records)} games from {games_file}")
        else:
            checked: dict[str, str | None] = {}
            for spec, hint in ((teacher, "--teacher"), (player, "--player")):
                if spec is None:
                    continue
                try:  # a bad spec or weights file is an error now, not in a worker process
                    checked[hint] = teacher_network(spec)
                    _bot(spec, simulations)
                except ValueError as e:  # an unknown bot (UnknownBot) too
                    raise click.BadParameter(str(e), param_hint=hint) from e
            network, player_network = checked["--teacher"], checked.get("--player")
            config = GenConfig(
                variant=variant,
                seed=seed,
                simulations=simulations,
                teacher=teacher,
                network_sha256=file_sha256(network) if network is not None else None,
                self_play=self_play,
                player=player,
                player_sha256=file_sha256(player_network) if player_network is not None else None,
            )
            with _progress(quiet) as progress:
                who = teacher if player is None else f"{player} labelled by {teacher}"
                bar = progress.add_task(f"{variant}: {who} games", total=games, status="")
                stream = generate(config, games, workers, lambda n: progress.update(bar, advance=n))
                if games_file is not None:
                    records = []

                    def keep() -> Iterator[dict[str, Any]]:
                        for r in stream:
                            records.append(r)
                            yield r

                    write_games(games_file, config, keep())
                else:
                    records = list(stream)
        try:
            data = decisions(config, records)
        except (ValueError, KeyError, TypeError) as e:  # a game that does not replay (IllegalAction too)
            raise click.ClickException(f"{games_file}: a game does not replay: {e!r}") from e
        err_console.print(
            f"{len(records)} games, {len(data)} decisions of the teacher ({time.perf_counter() - start:.0f} s)"
        )
        also_meta = []
        if also:
            parts = [data]
            for path in also:
                try:
                    other_config, other_records = read_games(path)
                except ValueError as e:
                    raise click.BadParameter(str(e), param_hint="--also") from e
                if other_config.variant != config.variant:
                    raise click.BadParameter(
                        f"{path}: games of {other_config.variant}, not {config.variant}", param_hint="--also"
                    )
                try:
                    parts.append(decisions(other_config, other_records))
                except (ValueError, KeyError, TypeError) as e:
                    raise click.ClickException(f"{path}: a game does not replay: {e!r}") from e
                also_meta.append({"file": path.name, "games": len(other_records), "generator": asdict(other_config)})
                err_console.print(f"{path}: {len(other_records)} games, {len(parts[-1])} decisions")
            data = Decisions.joined(parts)
        tconf = TrainConfig(hidden=hidden, epochs=epochs, lr=lr, seed=train_seed)
        with _progress(quiet) as progress:
            bar = progress.add_task("training", total=epochs, status="")

            def report(epoch: int, loss: float, acc: float) -> None:
                progress.update(bar, completed=epoch, status=f"loss {loss:.3f}  agreement {acc:.1%}")

            result = train(data, tconf, report)
        meta = {
            "games": len(records),
            "decisions": len(data),
            "generator": asdict(config),
            "also": also_meta,
            "train": {**asdict(tconf), "hidden": list(hidden)},
            "validation_agreement": round(result.val_agreement, 4),
            "heuristic_validation_agreement": round(result.heuristic_val_agreement, 4),
        }
        target = out or package_weights_path()
        rules = played_rules(config.variant, plays_in)
        meta["plays_in"] = rules.fingerprints()
        save_policy(replace(result.policy, rules=rules), target, meta)
        click.echo(
            f"agreement with {config.teacher}: train {result.train_agreement:.1%}, held out "
            f"{result.val_agreement:.1%} (the heuristic's own choice: {result.heuristic_val_agreement:.1%}); "
            f"wrote {target} ({target.stat().st_size / 1024:.0f} KiB)"
        )

    return train_learned_cmd


train_learned_cmd = _train_learned_cmd()
