"""The ``moonshot`` command line: simulate, replay, demo, variants (and, as they land, serve, bot...)."""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console
from rich.table import Table

from moonshot import __version__, one_blas_thread
from moonshot.bots.registry import UnknownBot, make_bot, parse_seats
from moonshot.cli.progress import err_console
from moonshot.cli.progress import progress_bar as _progress
from moonshot.core.actions import action_from_dict
from moonshot.core.variants import VARIANTS, UnknownVariant, find_variant
from moonshot.play.batch import (
    RAY_INSTALL,
    Backend,
    RayMissing,
    make_backend,
    plan_arena,
    plan_sim,
    prepare_shards,
    run_arena_task,
    run_sim_task,
    write_manifest,
)
from moonshot.play.sim import GameRecord, play_game, summarise, tasks, verify_record

if TYPE_CHECKING:
    pass

F = TypeVar("F", bound=Callable[..., Any])
console = Console()


class _Main(click.Group):
    """The ``moonshot`` group: the server's and the protocols' commands load only when named."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        one_blas_thread()  # first: a command's module may import NumPy as it loads
        return super().main(*args, **kwargs)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *_LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return super().get_command(ctx, cmd_name) or _lazy_command(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of ``--help`` without importing the lazy commands (that took half a
        second): their one-line help is kept beside their import path."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = []
        for name in names:
            if name in _LAZY_COMMANDS and name not in self.commands:
                rows.append((name, click.Command(name, help=_LAZY_COMMANDS[name][1]).get_short_help_str(limit)))
                continue
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def store_url_option(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--db``, checked as the server's commands check it (imported only when given)."""
    from moonshot.cli.commands import store_url_option as check

    return check(ctx, param, value)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="moonshot")
def main() -> None:
    """moonshot: one Hearts engine for every protocol, bots, a simulator and an RL environment."""


# ----------------------------------------------------------------------------- simulate
RAY_LOCAL = "local"  # what a bare `--ray` gives: start a local Ray runtime


def _backend(workers: int, ray_address: str | None) -> Backend:
    """``--workers`` / ``--ray``: a local Ray runtime gets ``--workers`` CPUs only when it was given."""
    source = click.get_current_context().get_parameter_source("workers")
    given = workers if source is click.core.ParameterSource.COMMANDLINE else None
    local = ray_address is not None and ray_address in ("", RAY_LOCAL)
    try:
        return make_backend(given if ray_address is not None else workers, "" if local else ray_address)
    except RayMissing as e:
        raise click.UsageError(str(e)) from e
    except Exception as e:  # ray.init: no cluster at that address, a bad address, ...
        if ray_address is None:
            raise
        raise click.ClickException(f"cannot start or join Ray ({ray_address or 'local'}): {e}") from e


def _ray_option(what: str) -> Callable[[F], F]:
    return click.option(
        "--ray",
        "ray_address",
        is_flag=False,
        flag_value=RAY_LOCAL,
        default=None,
        metavar="[ADDRESS]",
        help=f"Play the {what} as Ray tasks: alone, on a local Ray runtime (--workers CPUs if given, else all); "
        "with an ADDRESS (auto, HOST:PORT, ray://HOST:10001), on that cluster. Output as with --workers. "
        f"Needs {RAY_INSTALL}.",
    )


def _is_shard_dir(path: Path) -> bool:
    """``--export-decisions DIR``: a directory, or a path without a suffix, means a directory of shards."""
    return path.is_dir() or not path.suffix


@main.command()
@click.option("--variant", "-v", default="standard", show_default=True, help="Rules to play (see `moonshot variants`).")
@click.option(
    "--games", "-n", default=100, show_default=True, type=click.IntRange(min=1), help="Games (seeds) to play."
)
@click.option(
    "--seats",
    default="heuristic,random,random,random",
    show_default=True,
    help="Bot per seat N,E,S,W (a shorter list repeats its last name); a level is a name: level:3.",
)
@click.option("--seed", "-s", default=0, show_default=True, type=int, help="First seed; games use seed, seed+1, ...")
@click.option("--duplicate", is_flag=True, help="Play each seed 4 times with the bots rotated through the seats.")
@click.option("--workers", "-j", default=1, show_default=True, type=click.IntRange(min=1), help="Worker processes.")
@_ray_option("games")
@click.option(
    "--per-task",
    type=click.IntRange(min=1),
    help="Seeds per task (with their 4 rotations under --duplicate), and so per decision shard "
    "[default: about 16 tasks per worker].",
)
@click.option(
    "--export",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write one JSON line per game (format: README, 'Game records').",
)
@click.option(
    "--export-decisions",
    type=click.Path(path_type=Path),
    help="Also write one row per decision (observation, legal mask, action, reward, game id, seat, ...) "
    "to FILE.parquet or FILE.jsonl, or (a path without a suffix) to a directory of Parquet shards, one "
    "per task, written by the workers, with a _manifest.json (--ray needs one); read either with "
    "moonshot.rl.datasets.read_decisions (docs/rl.md).",
)
@click.option("--max-score", type=click.IntRange(min=1), help="Score limit for variants that end at a score.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def simulate(
    variant: str,
    games: int,
    seats: str,
    seed: int,
    duplicate: bool,
    workers: int,
    ray_address: str | None,
    per_task: int | None,
    export: Path | None,
    export_decisions: Path | None,
    max_score: int | None,
    quiet: bool,
) -> None:
    """Play bot-vs-bot games and print, per policy: mean points per deal (95% CI), win rate, moons."""
    options = {"max_score": max_score} if max_score else {}
    try:
        rules = find_variant(variant, **options)
        seat_names = parse_seats(seats)
        for name in set(seat_names):
            make_bot(name)  # fail now, not in a worker, if a bot is unavailable
    except (UnknownVariant, UnknownBot, ValueError) as e:
        raise click.UsageError(str(e)) from e
    shard_dir = export_decisions if export_decisions is not None and _is_shard_dir(export_decisions) else None
    if export_decisions is not None and shard_dir is None and ray_address is not None:
        raise click.UsageError(
            f"with --ray, --export-decisions takes a directory (one Parquet shard per task), not {export_decisions}"
        )
    if shard_dir is not None:
        _check_shard_dir(shard_dir)
    decisions = _decision_writer(export_decisions) if export_decisions and shard_dir is None else None
    backend = _backend(workers, ray_address)
    plan = plan_sim(
        rules.name,
        options,
        seat_names,
        seed,
        games,
        duplicate,
        backend.parallelism,
        per_task,
        shard_dir,
        lines=export is not None,
        actions=decisions is not None,  # only the one-file decision export rebuilds games here
    )
    records: list[GameRecord] = []
    shards: list[dict[str, Any]] = []
    shard_rows = 0
    out = export.open("w", encoding="utf-8") if export else None
    start = time.perf_counter()
    deals = 0
    try:
        with _progress(quiet) as progress:
            bar = progress.add_task(f"{rules.name}", total=sum(t.games for t in plan), status="")
            for result in backend.map(run_sim_task, plan):
                if out and result.lines is not None:
                    out.writelines(line + "\n" for line in result.lines)
                for rec in result.records:
                    records.append(rec)
                    deals += rec.deals
                    if decisions is not None:
                        decisions.add(rules, rec, len(records) - 1)
                status = ""
                if decisions is not None:
                    status = f", {decisions.rows} decisions"
                if result.shard is not None:
                    shards.append(result.shard)
                    shard_rows += result.shard["rows"]
                    status = f", {shard_rows} decisions in {len(shards)} shards"
                elapsed = time.perf_counter() - start
                status = f"{deals} deals, {deals / max(elapsed, 1e-9):.0f} deals/s{status}"
                progress.update(bar, advance=len(result.records), status=status)
    except KeyboardInterrupt:
        err_console.print(f"[yellow]interrupted after {len(records)} games[/]")
    finally:
        backend.close()
        if out:
            out.close()
        if decisions is not None:
            decisions.close()
        if shard_dir is not None:
            about = {"variant": rules.name, "options": options, "seats": list(seat_names), "seed": seed}
            write_manifest(shard_dir, {**about, "duplicate": duplicate}, shards, len(shards) == len(plan))
    elapsed = time.perf_counter() - start
    _print_summary(records, rules.name, rules.negative_scores, duplicate, elapsed)
    if export:
        console.print(f"wrote {len(records)} games to {export}")
    if decisions is not None:
        console.print(f"wrote {decisions.rows} decisions of {len(records)} games to {export_decisions}")
    if shard_dir is not None:
        console.print(f"wrote {shard_rows} decisions of {len(records)} games to {len(shards)} shards in {shard_dir}")


def _check_shard_dir(path: Path) -> None:
    try:
        import pyarrow  # noqa: F401

        import moonshot.rl.datasets  # noqa: F401
    except ImportError as e:
        raise click.UsageError(
            f"--export-decisions needs the rl and data extras: pip install 'moonshot[rl,data]' ({e})"
        ) from e
    try:
        prepare_shards(path)
    except (OSError, ValueError) as e:
        raise click.UsageError(str(e)) from e


class _DecisionExport:
    """``--export-decisions``: each finished game's decisions, rebuilt from its record (moonshot.rl)."""

    def __init__(self, path: Path) -> None:
        from moonshot.rl.datasets import DecisionWriter, record_decisions

        self._record_decisions = record_decisions
        self._writer = DecisionWriter(path)

    @property
    def rows(self) -> int:
        return self._writer.rows

    def add(self, rules: Any, rec: GameRecord, game_id: int) -> None:
        actions = [action_from_dict(a) for a in rec.actions]
        rows = self._record_decisions(rules, rec.seed, actions, rec.seats, game_id=game_id, rotation=rec.rotation)
        self._writer.write(rows)

    def close(self) -> None:
        self._writer.close()


def _decision_writer(path: Path) -> _DecisionExport:
    try:
        return _DecisionExport(path)
    except ImportError as e:
        raise click.UsageError(f"--export-decisions needs the rl extra: pip install 'moonshot[rl,data]' ({e})") from e
    except ValueError as e:
        raise click.UsageError(f"{e} (or a path without a suffix: a directory of Parquet shards)") from e
    except RuntimeError as e:
        raise click.UsageError(str(e)) from e


def _print_summary(records: list[GameRecord], variant: str, negative: bool, duplicate: bool, elapsed: float) -> None:
    stats = summarise(records)
    deals = sum(r.deals for r in records)
    better = "higher" if negative else "lower"
    table = Table(
        title=f"{variant}: {len(records)} games, {deals} deals{' (duplicate)' if duplicate else ''}, "
        f"{elapsed:.1f} s — {better} points are better"
    )
    table.add_column("policy")
    table.add_column("games", justify="right")
    table.add_column("deals", justify="right")
    table.add_column("points/deal", justify="right")
    table.add_column("95% CI", justify="right")
    table.add_column("win rate", justify="right")
    table.add_column("moons", justify="right")
    for st in sorted(stats.values(), key=lambda s: s.mean, reverse=negative):
        table.add_row(
            st.name,
            str(st.games),
            str(len(st.deal_points)),
            f"{st.mean:.3f}",
            f"± {st.ci95:.3f}",
            f"{100 * st.win_rate:.1f}%",
            str(st.moons),
        )
    console.print(table)


# ----------------------------------------------------------------------------- arena
@main.command()
@click.option("--variant", "-v", default="standard", show_default=True, help="Rules to play (see `moonshot variants`).")
@click.option("--deals", "-n", default=100, show_default=True, type=click.IntRange(min=1), help="Duplicate deals.")
@click.option(
    "--candidate",
    default="search",
    show_default=True,
    help="The bot under test; options may follow a colon: search:rollout=alert,inference=false; "
    "a level: level:3 (its own options: no budget reaches it); another bot's passing, last: "
    "heuristic:pass_by=pimc:classic.",
)
@click.option("--field", "field_", default="heuristic", show_default=True, help="The bot in the other seats.")
@click.option("--think-ms", type=click.IntRange(min=1), help="Time per decision for search bots (ms).")
@click.option(
    "--simulations", type=click.IntRange(min=1), help="Playouts per decision for search bots (deterministic)."
)
@click.option(
    "--worlds",
    type=click.IntRange(min=1),
    help="Sampled worlds per decision for bots that grow a tree in each (pimc, search:root=tree).",
)
@click.option("--no-passing", is_flag=True, help="Play every deal as dealt (no passing).")
@click.option(
    "--cpu-time",
    is_flag=True,
    help="--think-ms counts each process's CPU time (equal CPU on a loaded machine); ms/move is then CPU time too.",
)
@click.option("--workers", "-j", default=1, show_default=True, type=click.IntRange(min=1), help="Worker processes.")
@_ray_option("deals")
@click.option("--per-task", default=1, show_default=True, type=click.IntRange(min=1), help="Deals per task.")
@click.option("--seed", "-s", default=0, show_default=True, type=int, help="Deal i is shuffled from seed + i.")
@click.option("--results", type=click.Path(dir_okay=False, path_type=Path), help="Write the results as JSON.")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), help="Plot the running difference (PNG).")
@click.option("--head-to-head", nargs=2, metavar="A B", help="Play A v B, 2 seats each, in both seatings.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def arena(
    variant: str,
    deals: int,
    candidate: str,
    field_: str,
    think_ms: int | None,
    simulations: int | None,
    worlds: int | None,
    no_passing: bool,
    cpu_time: bool,
    workers: int,
    ray_address: str | None,
    per_task: int,
    seed: int,
    results: Path | None,
    plot: Path | None,
    head_to_head: tuple[str, str] | None,
    quiet: bool,
) -> None:
    """Duplicate deals, candidate in every seat against the field: paired difference with its 95% CI."""
    from moonshot.play.arena import ArenaConfig, arena_bot, results_json, running_difference, summarise

    a, b = head_to_head if head_to_head else (candidate, field_)
    config = ArenaConfig(
        variant, deals, a, b, seed, bool(head_to_head), think_ms, simulations, not no_passing, worlds, cpu_time
    )
    if a == b:
        other = a + ("," if ":" in a else ":")  # options end with a comma, a bare name with a colon
        hint = f"write one as {other!r} to tell them apart"
        raise click.UsageError(f"the candidate and the field are both {a!r}: {hint}")
    try:
        rules = find_variant(variant)
        for name in (a, b):
            arena_bot(name, config)
    except (UnknownVariant, UnknownBot, ValueError, TypeError) as e:
        raise click.UsageError(str(e)) from e
    if plot is not None:
        try:
            import matplotlib  # noqa: F401
        except ImportError as e:
            raise click.UsageError("--plot needs matplotlib: pip install 'moonshot[plot]'") from e
    done: list[Any] = []
    backend = _backend(workers, ray_address)
    try:
        with _progress(quiet) as progress:
            bar = progress.add_task(f"{rules.name}: {a} v {b}", total=deals, status="")
            for chunk in backend.map(run_arena_task, plan_arena(config, per_task)):
                done.extend(chunk)
                _, m, lo, hi = running_difference(done, a)[-1]
                ci = f" [{lo:+.2f}, {hi:+.2f}]" if len(done) > 1 else ""
                progress.update(bar, advance=len(chunk), status=f"diff {m:+.2f}{ci}")
    except KeyboardInterrupt:
        err_console.print(f"[yellow]interrupted after {len(done)} deals[/]")
    finally:
        backend.close()
    if not done:
        raise click.ClickException("no deal finished")
    summary = summarise(done, config)
    better = "higher" if summary.higher_is_better else "lower"
    mode = "head to head, 2 v 2 in both seatings" if head_to_head else f"{a} in each seat v three {b}"
    table = Table(title=f"{rules.name}: {summary.deals} duplicate deals, {mode} — {better} points are better")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row(f"{a} points/deal", f"{summary.candidate_mean:.3f}")
    table.add_row(f"{b} points/deal", f"{summary.field_mean:.3f}")
    table.add_row(f"paired difference ({a} − {b})", f"{summary.difference:+.3f}")
    table.add_row("95% CI", f"[{summary.ci_low:+.3f}, {summary.ci_high:+.3f}]")
    table.add_row(f"{a} best score at the table", f"{100 * summary.lowest_rate:.1f}%")
    table.add_row(f"moons shot by {a}", str(summary.moons_shot))
    table.add_row(f"moons conceded to {b}", str(summary.moons_conceded))
    for name, ms in summary.ms_per_move.items():
        table.add_row(f"{name} {'CPU ' if config.cpu_time else ''}ms/move", f"{ms:.1f}")
    console.print(table)
    if results is not None:
        results.write_text(json.dumps(results_json(config, summary, done), indent=1), encoding="utf-8")
        console.print(f"wrote {results}")
    if plot is not None:
        _arena_plot(plot, running_difference(done, a), f"{rules.name}: {a} − {b} per deal")
        console.print(f"wrote {plot}")


def _arena_plot(path: Path, running: list[tuple[int, float, float, float]], title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [n for n, *_ in running]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.plot(xs, [m for _, m, _, _ in running], label="mean paired difference")
    ax.fill_between(xs, [lo for *_, lo, _ in running], [hi for *_, hi in running], alpha=0.25, label="95% CI")
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.set_xlabel("deals")
    ax.set_ylabel("points per deal")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# ----------------------------------------------------------------------------- replay
@main.command("replay")
@click.argument("source")
@click.option("--quiet", "-q", is_flag=True, help="Only print failures and the summary.")
@click.option(
    "--db",
    default=None,
    callback=store_url_option,
    metavar="URL",
    help="Game store URL for a GAME_ID: sqlite:///FILE or postgresql://USER@HOST/DB (default: sqlite:///moonshot.db).",
)
def replay_cmd(source: str, quiet: bool, db: str | None) -> None:
    """Replay and verify games: every game of an exported JSON-lines FILE, or one stored GAME_ID.

    SOURCE is a file when one exists at that path, else the id of a game in the store (`moonshot games`).
    """
    if not Path(source).is_file():
        from moonshot.cli.commands import replay_stored

        sys.exit(replay_stored(source, db, quiet))
    ok = bad = 0
    with Path(source).open(encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as e:
                bad += 1
                console.print(f"[red]line {number}: not JSON ({e})[/]")
                continue
            result = verify_record(data, number)
            if result.ok:
                ok += 1
                if not quiet:
                    console.print(f"line {number}: ok — {result.message}")
            else:
                bad += 1
                console.print(f"[red]line {number}: MISMATCH — {result.message}[/]")
    console.print(f"{ok} games verified, {bad} failed")
    if bad or not ok:
        sys.exit(1)


# ----------------------------------------------------------------------------- variants / demo
@main.command()
def variants() -> None:
    """List the rule variants."""
    table = Table(title="variants")
    table.add_column("name")
    table.add_column("rules")
    for name, rules in VARIANTS.items():
        table.add_row(name, rules.description)
    console.print(table)


@main.command()
@click.option("--games", "-n", default=50, show_default=True, type=click.IntRange(min=1))
def demo(games: int) -> None:
    """A short tour: one narrated deal, then a duplicate simulation of heuristic vs random."""
    from moonshot.core.cards import format_cards
    from moonshot.core.engine import Game
    from moonshot.core.events import DealEnded, PassSent, TrickEnded
    from moonshot.core.views import seat_view

    names = ("N", "E", "S", "W")
    seats = ("heuristic", "random", "random", "random")
    try:
        bots = [make_bot(n) for n in seats]
    except UnknownBot:
        seats = ("random", "random", "random", "random")
        bots = [make_bot(n) for n in seats]
    console.rule("[bold]moonshot demo: one deal of standard Hearts")
    console.print("Seats: " + ", ".join(f"{names[i]}={seats[i]}" for i in range(4)))
    game = Game(find_variant("standard"), seed=7)
    rngs = [random.Random(i) for i in range(4)]
    for s in range(4):
        console.print(f"  {names[s]} holds {' '.join(format_cards(game.hands[s]))}")
    while game.deal_index == 0 and not game.over:
        seat = game.to_act()[0]
        for e in game.apply(bots[seat].act(seat_view(game, seat), rngs[seat])):
            if isinstance(e, PassSent):
                console.print(f"  {names[e.seat]} passes {' '.join(format_cards(e.cards or 0))} to {names[e.to]}")
            elif isinstance(e, TrickEnded):
                cards = " ".join(f"{names[s]}:{c}" for s, c in zip(e.seats, format_cards(e.cards)))
                console.print(f"  trick {e.trick:2}: {cards}  → {names[e.winner]} takes {e.points} pts")
            elif isinstance(e, DealEnded):
                console.print(f"  deal over: points {dict(zip(names, e.points))}, moon: {e.moon}")
    console.rule(f"[bold]{games} seeds × 4 rotations, heuristic vs three random")
    rules = find_variant("standard")
    records = []
    start = time.perf_counter()
    with _progress(False) as progress:
        bar = progress.add_task("standard", total=games * 4, status="")
        for seed, rotation in tasks(range(games), True):
            records.append(play_game(rules, seed, seats, rotation))
            progress.update(bar, advance=1)
    _print_summary(records, "standard", False, True, time.perf_counter() - start)
    console.print("Next: `moonshot simulate --help`, `moonshot variants`, and the README.")


# ----------------------------------------------------------------------------- the compiled core
@main.command("compile")
@click.option("--if-stale", is_flag=True, help="Do nothing when the last build matches the sources.")
@click.option("--optional", is_flag=True, help="If the build fails, warn and leave moonshot in pure Python (exit 0).")
@click.option("--clean", "remove", is_flag=True, help="Remove the compiled modules: back to pure Python.")
def compile_cmd(if_stale: bool, optional: bool, remove: bool) -> None:
    """Compile the engine's hot core with mypyc (about 4x the pure-Python speed).

    Builds cards, rules, actions, events and engine into extension modules beside their sources
    (about 15 s). moonshot uses them only while every source is unchanged since the build, and
    never with MOONSHOT_PURE_PYTHON=1. `make serve` and `make test` run `moonshot compile
    --if-stale --optional`. Needs the `fast` extra (mypy), a C compiler and the Python headers.
    """
    from moonshot.cli import compile_core

    where = compile_core.PACKAGE
    if remove:
        compile_core.clean()
        click.echo(f"removed the compiled core from {where}: moonshot runs as pure Python")
        return
    if if_stale and compile_core.up_to_date():
        click.echo("the compiled core is up to date")
        return
    start = time.perf_counter()
    try:
        with console.status("compiling the core with mypyc"):
            compile_core.build()
    except compile_core.CompileError as e:
        if not optional:
            raise click.ClickException(f"could not compile the core: {e}") from e
        click.echo(
            f"warning: could not compile the core: {e}\nmoonshot runs as pure Python (its engine about 4x slower)",
            err=True,
        )
        return
    click.echo(
        f"compiled {', '.join(compile_core.MODULES)} with mypyc into {where} in {time.perf_counter() - start:.0f} s"
    )


# ----------------------------------------------------------------------------- server, bots, stored games
# Loaded when named (or listed by --help): they bring asyncio, the store and the protocols, which a
# `moonshot simulate` run would otherwise import at every start.
# Each with its one-line help for `moonshot --help` (a test checks it is the command's own).
_LAZY_COMMANDS = {
    "serve": (
        "moonshot.cli.commands:serve_cmd",
        "Run the moonshot server: every protocol on its port, one event loop, games stored in --db.",
    ),
    "bot": (
        "moonshot.cli.commands:bot_cmd",
        "Play GAMES games of the Sessions protocol with a moonshot bot, SESSIONS at a time on one connection.",
    ),
    "games": ("moonshot.cli.commands:games_cmd", "List stored games (newest first)."),
    "admin": (
        "moonshot.cli.admin:admin_cmd",
        "Operator controls on a running server: tables, close, ban, mute, notice, drain.",
    ),
    "store": (
        "moonshot.cli.store:store_cmd",
        'Back up, restore and export the game store (docs/server.md, "Backups and exports").',
    ),
    "verify": (
        "moonshot.cli.commands:verify_cmd",
        "Check a finished game's deals and result against the commitment it published at its start.",
    ),
    "trend-node": (
        "moonshot.cli.trend_node:trend_node_cmd",
        "Run a Trend Hearts game node: one table, its seat page and the Trend WebSocket on one port.",
    ),
    "tournament": (
        "moonshot.cli.tournament:tournament_cmd",
        "Duplicate tournaments between bots and external players (see docs/tournaments.md).",
    ),
    "ratings": (
        "moonshot.cli.ratings:ratings_cmd",
        "The OpenSkill leaderboard: ordinal (mu - 3 sigma), mu, sigma and games, per variant.",
    ),
    "review": (
        "moonshot.cli.review:review_cmd",
        "Review one seat's decisions in a finished game, like an analysis board.",
    ),
    "names": (
        "moonshot.cli.names:names_cmd",
        "People's names on the web side, each bound to one browser (docs/security.md#names).",
    ),
    "train-learned": (
        "moonshot.training.learned:train_learned_cmd",
        "Make the `learned` bot's weights: play deals with a teacher (search), imitate its card play.",
    ),
    "train-belief": (
        "moonshot.training.belief:train_belief_cmd",
        "Make the belief network `search:belief=...` deals its worlds with: play deals, learn who held what.",
    ),
    "train-value": (
        "moonshot.training.value:train_value_cmd",
        "Make the value network `search` scores its playouts with: play deals, learn where they end.",
    ),
}


def _lazy_command(name: str) -> click.Command | None:
    from importlib import import_module

    entry = _LAZY_COMMANDS.get(name)
    if entry is None:
        return None
    module, _, attr = entry[0].partition(":")
    command: click.Command = getattr(import_module(module), attr)
    return command


if __name__ == "__main__":  # pragma: no cover
    main()
