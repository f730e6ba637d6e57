"""``moonshot review``: one seat's decisions in a finished game, valued from its own view and graded.

Reads a stored game (``--db``) or a public game record (``--record FILE``: a line of ``moonshot
simulate --export``, or the JSON of ``GET /api/games/<id>``), runs :func:`moonshot.play.review.review_game`
with a progress bar, and prints a table of the decisions in grade colours and the summary, or
(``--json``) the ``moonshot-review/1`` JSON (docs/review.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from moonshot.cli.progress import progress_bar

console = Console()

GRADE_STYLE = {
    "best": "green",
    "good": "cyan",
    "inaccuracy": "yellow",
    "mistake": "dark_orange",
    "blunder": "bold red",
}


def _record_game(path: str) -> tuple[Any, int, list[Any], Any, str | None]:
    """(rules, seed, actions, deals, game id) of a public game record file (its first JSON line)."""
    from moonshot.core.variants import find_variant
    from moonshot.store import rules_named

    try:
        text = Path(path).read_text(encoding="utf-8")
        line = next((ln for ln in text.splitlines() if ln.strip()), "")
        try:
            data = json.loads(line)  # (JSON lines: the first game)
        except ValueError:
            data = json.loads(text)  # (one JSON object over several lines)
    except (OSError, ValueError) as e:
        raise click.BadParameter(f"{path}: {e}", param_hint="'--record'") from None
    if not isinstance(data, dict) or "actions" not in data or "variant" not in data:
        raise click.BadParameter(f"{path}: not a game record (no variant and actions)", param_hint="'--record'")
    if data.get("status", "finished") != "finished":
        raise click.ClickException(f"{path}: the game is {data['status']}: only a finished game can be reviewed")
    try:
        options = data.get("options") or {}
        if options:
            rules = find_variant(str(data["variant"]), **{str(k): int(v) for k, v in options.items()})
        else:
            rules = rules_named(str(data["variant"]))
        seal = data.get("deal_seal")
        if "seed" in data:
            seed = int(data["seed"])
        elif isinstance(seal, dict) and "seed" in seal:
            seed = int(seal["seed"])
        else:
            raise ValueError("the record has no seed (is the game finished?)")
        deals = None
        if isinstance(data.get("deals"), str):  # (a Kierki game file's text)
            from moonshot.protocols.kierki.gamefile import parse_game

            deals = parse_game(data["deals"])
        actions = list(data["actions"])
    except (KeyError, TypeError, ValueError) as e:
        raise click.BadParameter(f"{path}: the record cannot be read: {e}", param_hint="'--record'") from None
    game_id = data.get("id")
    return rules, seed, actions, deals, None if game_id is None else str(game_id)


def _stored_game(game_id: str, db: str | None) -> tuple[Any, int, list[Any], Any, str | None]:
    from moonshot.cli.commands import DEFAULT_DB, bad_db, load_stored
    from moonshot.store import StoreError, rules_named, sqlite_path, store_url

    try:
        url = store_url(db or DEFAULT_DB)
    except StoreError as e:
        raise bad_db(e) from None
    path = sqlite_path(url)
    if path is not None and not path.exists():
        raise click.ClickException(f"no stored game called {game_id!r}: there is no game store at {path}")
    rec = load_stored(url, game_id)
    if rec is None:
        raise click.ClickException(f"no stored game called {game_id!r} in {url}")
    if rec.status != "finished":
        raise click.ClickException(f"game {game_id} is {rec.status}: only a finished game can be reviewed")
    try:
        rules = rules_named(rec.variant)
    except KeyError as e:
        raise click.ClickException(f"game {game_id}: {e}") from None
    return rules, rec.seed, list(rec.actions), rec.deals(), game_id


def _db_option(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from moonshot.cli.commands import store_url_option

    return store_url_option(ctx, param, value)


@click.command("review")
@click.argument("game_id", required=False)
@click.option(
    "--db",
    default=None,
    callback=_db_option,
    metavar="URL",
    help="Game store URL for a GAME_ID (default: sqlite:///moonshot.db).",
)
@click.option(
    "--seat", default=0, show_default=True, type=click.IntRange(0, 3), help="The seat to review (0-3 = N E S W)."
)
@click.option(
    "--record",
    type=click.Path(exists=True, dir_okay=False),
    help="A finished game's public record instead of a stored game: a line of `moonshot simulate --export` "
    "or the JSON of GET /api/games/<id>.",
)
@click.option("--simulations", type=click.IntRange(min=1), help="Worlds dealt for each decision (default 1000).")
@click.option("--think-ms", type=click.IntRange(min=1), help="Time for each decision instead (not reproducible).")
@click.option("--seed", default=0, show_default=True, type=int, help="Seeds the sampled worlds.")
@click.option("--json", "as_json", is_flag=True, help="Print the review's JSON (moonshot-review/1).")
@click.option("--all", "every", is_flag=True, help="List every decision, not only those graded inaccuracy or worse.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def review_cmd(
    game_id: str | None,
    db: str | None,
    seat: int,
    record: str | None,
    simulations: int | None,
    think_ms: int | None,
    seed: int,
    as_json: bool,
    every: bool,
    quiet: bool,
) -> None:
    """Review one seat's decisions in a finished game, like an analysis board.

    Each decision (card, pass, Turbo charge, Trend exposure) is valued from the seat's own view
    at that moment, never the hidden hands: search's sampled worlds, every option played out on
    the same worlds. The cost of a choice is the points it gives up against the best option,
    graded inaccuracy, mistake or blunder (docs/review.md)."""
    from moonshot.play.review import NotOver, count_decisions, review_game

    if (game_id is None) == (record is None):
        raise click.UsageError("give a GAME_ID (a stored game) or --record FILE (a game's public record)")
    if simulations is not None and think_ms is not None:
        raise click.UsageError("give --simulations or --think-ms, not both")
    if record is not None:
        rules, game_seed, actions, deals, gid = _record_game(record)
        name = gid or record
    else:
        assert game_id is not None
        rules, game_seed, actions, deals, gid = _stored_game(game_id, db)
        name = game_id
    try:
        total = count_decisions(rules, game_seed, actions, seat, deals)
    except NotOver:
        raise click.ClickException(f"game {name}: the game is not over (its actions end before it does)") from None
    except Exception as e:
        raise click.ClickException(f"game {name}: the actions do not replay: {e}") from None
    with progress_bar(quiet) as progress:
        bar = progress.add_task(f"review seat {seat}", total=total, status="")

        def step(done: int, _total: int) -> None:
            progress.update(bar, completed=done)

        review = review_game(
            rules,
            game_seed,
            actions,
            seat,
            deals=deals,
            simulations=simulations,
            think_ms=think_ms,
            review_seed=seed,
            progress=step,
            game_id=gid,
        )
    data = review.to_json()
    if as_json:
        click.echo(json.dumps(data))
        return
    _print_review(data, name, every)


FLAGGED = ("inaccuracy", "mistake", "blunder")
RANKS = "23456789TJQKA"


def _compact_hand(cards: list[str]) -> str:
    """A hand grouped by suit, spades first (``S:Q5 H:T7 C:KT``): narrow enough for a terminal."""
    by_suit: dict[str, str] = {}
    for card in sorted(cards, key=lambda c: -RANKS.find(c[:-1])):
        by_suit[card[-1]] = by_suit.get(card[-1], "") + card[:-1]
    return " ".join(f"{suit}:{by_suit[suit]}" for suit in "SHDC" if suit in by_suit)


def _print_review(data: dict[str, Any], name: str, every: bool = False) -> None:
    seats = "NESW"
    shown = [d for d in data["decisions"] if every or d["grade"] in FLAGGED]
    which = "every decision" if every else "the decisions graded inaccuracy or worse (--all shows every one)"
    t = Table(title=f"game {name}: seat {data['seat']} ({seats[data['seat']]}), {data['variant']}: {which}")
    t.add_column("#", justify="right")
    t.add_column("where", no_wrap=True)
    t.add_column("hand")
    t.add_column("on the table")
    t.add_column("played", no_wrap=True)
    t.add_column("best", no_wrap=True)
    t.add_column("cost", justify="right", no_wrap=True)
    t.add_column("grade", no_wrap=True)
    for d in shown:
        style = GRADE_STYLE.get(d["grade"], "")
        table = " ".join(f"{seats[c['seat']]}:{c['card']}" for c in d["trick_cards"])
        where = f"d{d['deal'] + 1} t{d['trick']}" if d["trick"] is not None else f"d{d['deal'] + 1} {d['kind']}"
        if d["kind"] == "pass":
            table = f"passing {d['pass_direction']}"
        t.add_row(
            str(d["index"]),
            where,
            _compact_hand(d["hand"]),
            table,
            d["chosen"],
            d["best"],
            f"{d['cost']:.2f}",
            f"[{style}]{d['grade']}[/]",
        )
    console.print(t)
    s = data["summary"]
    th = data["thresholds"]
    console.print(
        f"[bold]{s['decisions']} decisions[/]: accuracy {s['accuracy']:.0%} (best or good), "
        f"{s['points_given_up']:.1f} points given up; "
        + ", ".join(f"[{GRADE_STYLE[g]}]{n} {g}[/]" for g, n in s["by_grade"].items())
    )
    console.print(
        f"grades by points given up: inaccuracy >= {th['inaccuracy']}, mistake >= {th['mistake']}, "
        f"blunder >= {th['blunder']}"
    )
    deals = Table(title="by deal")
    for col in ("deal", "decisions", "points given up", "accuracy"):
        deals.add_column(col, justify="right")
    for d in s["deals"]:
        deals.add_row(str(d["deal"] + 1), str(d["decisions"]), f"{d['points_given_up']:.2f}", f"{d['accuracy']:.0%}")
    console.print(deals)
    if s["biggest"]:
        by_index = {d["index"]: d for d in data["decisions"]}
        console.print("[bold]biggest mistakes[/]:")
        for i in s["biggest"]:
            d = by_index[i]
            where = f"deal {d['deal'] + 1}" + (f", trick {d['trick']}" if d["trick"] is not None else f", {d['kind']}")
            console.print(
                f"  #{i} {where}: played {d['chosen']}, best {d['best']} "
                f"([{GRADE_STYLE[d['grade']]}]{d['grade']}[/], {d['cost']:.2f} points)"
            )


__all__ = ["review_cmd"]
