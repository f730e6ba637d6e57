"""Decision datasets: play games with given policies and write one row per decision, and read them back.

:func:`write_decisions` plays ``games`` games (seeds ``seed``, ``seed + 1``, ...) and records every
decision of every seat in the ``Discrete(53)`` encoding of :mod:`moonshot.rl.decisions` (a bot's pass of
three cards is three rows, a charge is its cards then ``DONE``). The format follows the file name:
``.parquet`` (needs ``pyarrow``: the ``data`` extra) or ``.jsonl`` (one JSON object per line).

Schema (one row per decision; :data:`SCHEMA` is the same list in code):

=================  ==========================  ====================================================
column             type                        meaning
=================  ==========================  ====================================================
``game_id``        int64                       the game's number in the file (from 0)
``seed``           int64                       its seed: ``Game(rules, seed)`` deals the same cards
``rotation``       int8                        the simulator's seat rotation (duplicate play), else 0
``seat``           int8                        0..3 (N, E, S, W)
``step``           int32                       decision number within the game (all seats)
``variant``        string                      variant name
``phase``          string                      ``pass``, ``charge``, ``expose`` or ``play``
``deal``           int16                       deal index (from 0)
``observation``    fixed list<float32>[1045]   :func:`moonshot.rl.observation.encode` (named slices in
                                               :data:`moonshot.rl.observation.OBSERVATION_SLICES`)
``legal_mask``     fixed list<int8>[53]        legal actions (52 = ``DONE``)
``action``         int16                       the action taken (0..51 a card, 52 = ``DONE``)
``reward``         float32                     what the seat earned from this decision until its next
                                               one: its signed deal points on the last decision
                                               before a deal ends (better = higher), per-trick
                                               points with ``shaping="trick"``, else 0
``done``           bool                        the seat's last decision of the game
``policy``         string                      name of the policy that decided
=================  ==========================  ====================================================

:func:`read_decisions` loads a file into NumPy arrays; :func:`iter_decisions` streams it in batches.
Both also take a directory of shards (``moonshot simulate --export-decisions DIR``, one Parquet file
per task and a ``_manifest.json`` listing them in game order; see :mod:`moonshot.play.batch`).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from moonshot.bots.base import Bot
from moonshot.core.actions import AcceptClaim, Action, Charge, Claim, Expose, Pass, Play, RejectClaim
from moonshot.core.cards import card_list
from moonshot.core.engine import Game, Phase
from moonshot.core.events import DealEnded, Event, TrickEnded
from moonshot.core.rules import Rules
from moonshot.core.variants import find_variant
from moonshot.core.views import seat_view
from moonshot.rl.decisions import Decisions
from moonshot.rl.env import reward_sign
from moonshot.rl.observation import DONE, N_ACTIONS, OBS_SIZE, encode_game, mask_array
from moonshot.rl.opponents import make_bot

SCHEMA: tuple[tuple[str, str], ...] = (
    ("game_id", "int64"),
    ("seed", "int64"),
    ("rotation", "int8"),
    ("seat", "int8"),
    ("step", "int32"),
    ("variant", "string"),
    ("phase", "string"),
    ("deal", "int16"),
    ("observation", f"fixed_size_list<float32>[{OBS_SIZE}]"),
    ("legal_mask", f"fixed_size_list<int8>[{N_ACTIONS}]"),
    ("action", "int16"),
    ("reward", "float32"),
    ("done", "bool"),
    ("policy", "string"),
)
COLUMNS = tuple(name for name, _ in SCHEMA)

Policy = Callable[[dict[str, np.ndarray]], int]
"""A learned policy: ``policy({"observation": ..., "action_mask": ...}) -> action``."""
PolicySpec = str | Bot | Policy


def _expand(action: Action) -> list[int]:
    """A bot's engine action as the sequence of Discrete(53) choices that makes it."""
    if isinstance(action, Play):
        return [action.card]
    if isinstance(action, Pass):
        return card_list(action.cards)
    if isinstance(action, (Charge, Expose)):
        return [*card_list(action.cards), DONE]
    raise ValueError(f"no Discrete(53) form for {action!r}")


class _Seat:
    def __init__(self, spec: PolicySpec) -> None:
        if isinstance(spec, (str, Bot)):
            self.bot: Bot | None = make_bot(spec)
            self.policy: Policy | None = None
            self.name = self.bot.name
        else:
            self.bot = None
            self.policy = spec
            self.name = getattr(spec, "name", getattr(spec, "__name__", "policy"))
        self.queue: list[int] = []


class _Recorder:
    """Builds the rows of one game: observation and mask before each choice, rewards as they come."""

    def __init__(self, rules: Rules, seed: int, shaping: str | None, game_id: int, rotation: int = 0) -> None:
        self.rules = rules
        self.game = Game(rules, seed)
        self.dec = Decisions(self.game)
        self.shaping = shaping
        self.sign = reward_sign(rules)
        self.pending: list[dict[str, Any] | None] = [None, None, None, None]
        self.shaped = [0.0, 0.0, 0.0, 0.0]
        self.rows: list[dict[str, Any]] = []
        self.base = {"game_id": game_id, "seed": seed, "rotation": rotation, "variant": rules.name}

    def observe(self, seat: int) -> dict[str, np.ndarray]:
        return {
            "observation": encode_game(self.game, seat, self.dec.selected[seat]),
            "action_mask": mask_array(self.dec.mask(seat)),
        }

    def choose(self, seat: int, action: int, policy: str, obs: dict[str, np.ndarray] | None = None) -> None:
        """Record ``seat``'s Discrete(53) choice (with the observation it was made on) and apply it."""
        obs = obs if obs is not None else self.observe(seat)
        row = {
            **self.base,
            "seat": seat,
            "step": len(self.rows),
            "phase": self.dec.kind(seat) or "none",
            "deal": self.game.deal_index,
            "observation": obs["observation"],
            "legal_mask": obs["action_mask"],
            "action": int(action),
            "reward": 0.0,
            "done": False,
            "policy": policy,
        }
        self.pending[seat] = row
        self.rows.append(row)
        self.credit(self.dec.apply(seat, action))

    def engine(self, action: Action) -> None:
        """Apply an action that has no Discrete(53) form (claims and their answers): no row."""
        self.credit(self.game.apply(action))

    def credit(self, events: list[Event]) -> None:
        for e in events:
            if type(e) is TrickEnded and self.shaping == "trick" and e.points:
                row = self.pending[e.winner]
                if row is not None:
                    row["reward"] -= e.points
                self.shaped[e.winner] -= e.points
            elif type(e) is DealEnded:
                for s in range(4):
                    row = self.pending[s]
                    if row is not None:
                        row["reward"] += self.sign * e.points[s] - self.shaped[s]
                    self.shaped[s] = 0.0

    def finish(self) -> list[dict[str, Any]]:
        for last in self.pending:
            if last is not None:
                last["done"] = True
        return self.rows


def play_decisions(
    variant: str,
    game_seed: int,
    policies: Sequence[PolicySpec],
    shaping: str | None = None,
    max_score: int | None = None,
    game_id: int | None = None,
) -> Iterator[dict[str, Any]]:
    """Play one game and yield its decision rows in decision order (once the game is over)."""
    rules = find_variant(variant, **({"max_score": max_score} if max_score else {}))
    if len(policies) != 4:
        raise ValueError(f"need 4 policies, one per seat, got {len(policies)}")
    seats = [_Seat(p) for p in policies]
    rec = _Recorder(rules, game_seed, shaping, game_seed if game_id is None else game_id)
    game, dec = rec.game, rec.dec
    rng = random.Random(f"moonshot-data:{game_seed}")
    while not game.over:
        if game.claimer is not None:
            s = game.to_act()[0]
            bot = seats[s].bot
            rec.engine(bot.act(seat_view(game, s), rng) if bot is not None else RejectClaim(s, game.claimer))
            continue
        nxt = dec.next_seat()
        assert nxt is not None
        s = nxt
        seat = seats[s]
        if seat.bot is not None:
            if not seat.queue:
                ph = game.phase
                view = seat_view(game, s, with_legal=ph is not Phase.PASS and ph is not Phase.PILE)
                chosen = seat.bot.act(view, rng)
                if isinstance(chosen, (Claim, AcceptClaim, RejectClaim)):
                    rec.engine(chosen)
                    continue
                seat.queue = _expand(chosen)
            rec.choose(s, seat.queue.pop(0), seat.name)
        else:
            assert seat.policy is not None
            obs = rec.observe(s)
            rec.choose(s, int(seat.policy(obs)), seat.name, obs)
    yield from rec.finish()


def record_decisions(
    rules: Rules,
    seed: int,
    actions: Iterable[Action],
    policies: Sequence[str] = ("?", "?", "?", "?"),
    game_id: int = 0,
    rotation: int = 0,
    shaping: str | None = None,
) -> list[dict[str, Any]]:
    """The decision rows of a game already played: ``(rules, seed, actions)``, e.g. a simulator record.

    Each engine action becomes the choices that make it (a pass is three rows, a charge its cards and
    ``DONE``); claims and their answers are applied without rows. ``policies`` names each seat's policy.
    """
    rec = _Recorder(rules, seed, shaping, game_id, rotation)
    for action in actions:
        if isinstance(action, (Claim, AcceptClaim, RejectClaim)):
            rec.engine(action)
            continue
        for choice in _expand(action):
            rec.choose(action.seat, choice, policies[action.seat])
    if not rec.game.over:
        raise ValueError("the actions do not finish the game")
    return rec.finish()


class _Writer:
    def __init__(self, path: Path, batch_rows: int = 4096) -> None:
        self.path = path
        self.batch_rows = batch_rows
        self.rows: list[dict[str, Any]] = []
        self.count = 0
        suffix = path.suffix.lower()
        if suffix not in (".parquet", ".jsonl"):
            raise ValueError(f"unknown dataset format {path.suffix!r}: use .parquet or .jsonl")
        self.parquet = suffix == ".parquet"
        self._pq_writer: Any = None
        self._fh: Any = None
        if self.parquet:
            try:
                import pyarrow  # noqa: F401
            except ImportError as e:  # pragma: no cover - depends on the environment
                raise RuntimeError("writing Parquet needs pyarrow: pip install 'moonshot[data]'") from e
        else:
            self._fh = path.open("w", encoding="utf-8")

    def add(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        self.count += 1
        if len(self.rows) >= self.batch_rows:
            self.flush()

    def flush(self) -> None:
        if not self.rows:
            return
        if self.parquet:
            import pyarrow.parquet as pq

            table = _to_arrow(self.rows)
            if self._pq_writer is None:
                self._pq_writer = pq.ParquetWriter(str(self.path), table.schema, compression="zstd")
            self._pq_writer.write_table(table)
        else:
            for r in self.rows:
                out = dict(r)
                out["observation"] = [float(x) for x in r["observation"]]
                out["legal_mask"] = [int(x) for x in r["legal_mask"]]
                self._fh.write(json.dumps(out, separators=(",", ":")) + "\n")
        self.rows = []

    def close(self) -> None:
        self.flush()
        if self._pq_writer is not None:
            self._pq_writer.close()
        elif self.parquet:  # no rows at all: still write a valid, empty file
            import pyarrow.parquet as pq

            pq.write_table(_arrow_schema().empty_table(), str(self.path))
        if self._fh is not None:
            self._fh.close()


def _arrow_schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            ("game_id", pa.int64()),
            ("seed", pa.int64()),
            ("rotation", pa.int8()),
            ("seat", pa.int8()),
            ("step", pa.int32()),
            ("variant", pa.string()),
            ("phase", pa.string()),
            ("deal", pa.int16()),
            ("observation", pa.list_(pa.float32(), OBS_SIZE)),
            ("legal_mask", pa.list_(pa.int8(), N_ACTIONS)),
            ("action", pa.int16()),
            ("reward", pa.float32()),
            ("done", pa.bool_()),
            ("policy", pa.string()),
        ]
    )


def _to_arrow(rows: list[dict[str, Any]]) -> Any:
    import pyarrow as pa

    schema = _arrow_schema()
    obs = np.stack([r["observation"] for r in rows]).astype(np.float32).reshape(-1)
    mask = np.stack([r["legal_mask"] for r in rows]).astype(np.int8).reshape(-1)
    cols: dict[str, Any] = {}
    for name, _ in SCHEMA:
        if name == "observation":
            cols[name] = pa.FixedSizeListArray.from_arrays(pa.array(obs), OBS_SIZE)
        elif name == "legal_mask":
            cols[name] = pa.FixedSizeListArray.from_arrays(pa.array(mask), N_ACTIONS)
        else:
            cols[name] = pa.array([r[name] for r in rows], type=schema.field(name).type)
    return pa.table(cols, schema=schema)


class DecisionWriter:
    """Rows to a ``.parquet`` or ``.jsonl`` file, in row groups (use as a context manager)."""

    def __init__(self, path: str | Path) -> None:
        self._w = _Writer(Path(path))

    @property
    def rows(self) -> int:
        return self._w.count

    def write(self, rows: Iterable[dict[str, Any]]) -> None:
        for r in rows:
            self._w.add(r)

    def close(self) -> None:
        self._w.close()

    def __enter__(self) -> DecisionWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_decisions(
    path: str | Path,
    games: int,
    policies: PolicySpec | Sequence[PolicySpec] = "heuristic",
    variant: str = "standard",
    seed: int = 0,
    shaping: str | None = None,
    max_score: int | None = None,
    progress: bool | Callable[[int], None] = True,
) -> int:
    """Play ``games`` games and write their decisions to ``path`` (``.parquet`` or ``.jsonl``); returns rows.

    ``policies``: one spec for all four seats or four specs (bot names, bot objects, or callables
    taking ``{"observation", "action_mask"}`` and returning an action). ``progress``: show a rich
    progress bar (True), nothing (False), or call a function with the number of games finished.
    """
    specs: list[PolicySpec]
    if isinstance(policies, (str, Bot)) or callable(policies):
        specs = [policies] * 4
    else:
        specs = list(policies)
    writer = _Writer(Path(path))
    bar: Any = None
    task: Any = None
    if progress is True:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        bar = Progress(
            TextColumn("decisions"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("games  {task.fields[rows]} rows"),
            TimeRemainingColumn(),
        )
        bar.start()
        task = bar.add_task("decisions", total=games, rows=0)
    try:
        for i in range(games):
            for row in play_decisions(variant, seed + i, specs, shaping, max_score, game_id=i):
                writer.add(row)
            if bar is not None:
                bar.update(task, advance=1, rows=writer.count)
            elif callable(progress):
                progress(i + 1)
    finally:
        writer.close()
        if bar is not None:
            bar.stop()
    return writer.count


def shard_files(path: str | Path) -> list[Path]:
    """The shards of a decision directory in game order: as its ``_manifest.json`` lists them (the
    complete shards of a run, written by ``simulate --export-decisions DIR``), else every ``.parquet``
    and ``.jsonl`` file in name order (names starting with ``.`` or ``_`` are skipped, as pyarrow does)."""
    p = Path(path)
    manifest = p / "_manifest.json"
    if manifest.is_file():
        data = json.loads(manifest.read_text(encoding="utf-8"))
        return [p / str(s["file"]) for s in data.get("shards", [])]
    return sorted(
        f
        for f in p.iterdir()
        if f.is_file() and f.suffix.lower() in (".parquet", ".jsonl") and not f.name.startswith((".", "_"))
    )


def iter_decisions(path: str | Path, batch_rows: int = 65536) -> Iterator[dict[str, np.ndarray]]:
    """Stream a decision file (or a directory of shards) as dicts of NumPy arrays of at most ``batch_rows`` rows."""
    p = Path(path)
    if p.is_dir():
        for shard in shard_files(p):
            yield from iter_decisions(shard, batch_rows)
        return
    if p.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(str(p))
        for batch in pf.iter_batches(batch_size=batch_rows):
            yield _from_arrow(batch)
        return
    rows: list[dict[str, Any]] = []
    with p.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rows.append(json.loads(line))
                if len(rows) >= batch_rows:
                    yield _from_rows(rows)
                    rows = []
    if rows:
        yield _from_rows(rows)


def read_decisions(path: str | Path) -> dict[str, np.ndarray]:
    """A whole decision file (or directory of shards, in game order) as NumPy arrays: ``observation``
    ``(N, 1045)`` float32, ``legal_mask`` ``(N, 53)`` int8, and one ``(N,)`` array per other column."""
    parts = list(iter_decisions(path))
    if not parts:
        return _empty()
    return {k: np.concatenate([p[k] for p in parts]) for k in COLUMNS}


_DTYPES = {
    "game_id": np.int64,
    "seed": np.int64,
    "rotation": np.int8,
    "seat": np.int8,
    "step": np.int32,
    "deal": np.int16,
    "action": np.int16,
    "reward": np.float32,
    "done": np.bool_,
}


def _empty() -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {k: np.zeros(0, dtype=t) for k, t in _DTYPES.items()}
    out["observation"] = np.zeros((0, OBS_SIZE), dtype=np.float32)
    out["legal_mask"] = np.zeros((0, N_ACTIONS), dtype=np.int8)
    for k in ("variant", "phase", "policy"):
        out[k] = np.zeros(0, dtype=object)
    return out


def _from_arrow(batch: Any) -> dict[str, np.ndarray]:
    n = batch.num_rows
    out: dict[str, np.ndarray] = {}
    for name in COLUMNS:
        col = batch.column(batch.schema.get_field_index(name))
        if name == "observation":
            out[name] = col.values.to_numpy(zero_copy_only=False).reshape(n, OBS_SIZE).astype(np.float32)
        elif name == "legal_mask":
            out[name] = col.values.to_numpy(zero_copy_only=False).reshape(n, N_ACTIONS).astype(np.int8)
        elif name in _DTYPES:
            out[name] = col.to_numpy(zero_copy_only=False).astype(_DTYPES[name])
        else:
            out[name] = np.array(col.to_pylist(), dtype=object)
    return out


def _from_rows(rows: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for name in COLUMNS:
        if name == "observation":
            out[name] = np.array([r[name] for r in rows], dtype=np.float32).reshape(len(rows), OBS_SIZE)
        elif name == "legal_mask":
            out[name] = np.array([r[name] for r in rows], dtype=np.int8).reshape(len(rows), N_ACTIONS)
        elif name in _DTYPES:
            out[name] = np.array([r[name] for r in rows], dtype=_DTYPES[name])
        else:
            out[name] = np.array([r[name] for r in rows], dtype=object)
    return out


__all__ = [
    "COLUMNS",
    "SCHEMA",
    "DecisionWriter",
    "Policy",
    "iter_decisions",
    "play_decisions",
    "read_decisions",
    "record_decisions",
    "shard_files",
    "write_decisions",
]
