"""``moonshot ratings``: the leaderboard kept in the game store (``--rebuild`` rates every stored
game again, in finish order; ``--arena`` rates arena runs' games instead, in memory). Registered on
the ``moonshot`` group in :mod:`moonshot.cli.main`."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import click
from rich.table import Table as RichTable

from moonshot.cli.commands import DB_HELP, DEFAULT_DB, bad_db, console, store_url_option


@click.command("ratings")
@click.option("--db", default=DEFAULT_DB, show_default=True, callback=store_url_option, metavar="URL", help=DB_HELP)
@click.option(
    "--variant", "-v", default=None, help="Only this variant's leaderboard (Turbo's charging rules share `turbo`)."
)
@click.option("--limit", "-n", default=20, show_default=True, type=click.IntRange(min=1), help="Players per variant.")
@click.option("--player", default=None, help="List this player's rated games instead (needs --variant).")
@click.option("--bot", "is_bot", is_flag=True, help="With --player: the moonshot bot of that spec, not a person.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line instead of tables.")
@click.option(
    "--rebuild",
    is_flag=True,
    help="Forget the ratings and rate every finished game again, in finish order (safe while servers run).",
)
@click.option(
    "--arena",
    "arena_files",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    metavar="FILE",
    help="Rate the games of these `moonshot arena --results` files instead of the store (repeat; nothing "
    "is stored): each seating of each deal is a game, the bots rated by their arena specs. How the "
    "bot levels were rated (docs/bots.md).",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def ratings_cmd(
    db: str,
    variant: str | None,
    limit: int,
    player: str | None,
    is_bot: bool,
    as_json: bool,
    rebuild: bool,
    arena_files: tuple[str, ...],
    quiet: bool,
) -> None:
    """The OpenSkill leaderboard: ordinal (mu - 3 sigma), mu, sigma and games, per variant.

    Every game the server finishes is rated, whatever its protocol; moonshot's own bots are rated
    under their spec (`heuristic`, `search --simulations 200`), everyone else under their name.
    With --arena, the games of arena runs are rated instead, in memory.
    """
    from moonshot.store import Store, StoreError

    if arena_files:
        if player is not None or rebuild:
            raise click.UsageError("--arena rates arena files alone: no --player or --rebuild with it")
        _print_board(_arena_board(arena_files, variant, limit), variant, as_json)
        return
    if player is not None and variant is None:
        raise click.UsageError("--player needs --variant (a player has one rating per variant)")

    async def run() -> tuple[int | None, Any]:
        store = await Store.open(db, create=False)
        try:
            rated = None
            if rebuild:
                rated = await _rebuild(store, quiet or as_json)
            if player is not None:
                assert variant is not None
                return rated, await store.player_games(variant, player, is_bot, limit)
            return rated, await store.leaderboard(variant, limit)
        finally:
            await store.close()

    try:
        rated, result = asyncio.run(run())
    except StoreError as e:
        raise bad_db(e) from None
    if rated is not None and not as_json:
        console.print(f"rebuilt the ratings: {rated} finished games rated, in the order they finished")
    if player is not None:
        _print_games(result, player, is_bot, variant or "", as_json)
    else:
        _print_board(result, variant, as_json)


async def _rebuild(store: Any, quiet: bool) -> int:
    from moonshot.cli.progress import progress_bar as _progress

    with _progress(quiet) as progress:
        task = progress.add_task("rating", total=None, status="")

        def step(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        rated: int = await store.rebuild_ratings(step)
        return rated


def _arena_board(files: tuple[str, ...], variant: str | None, limit: int) -> dict[str, list[dict[str, Any]]]:
    from moonshot.play.ratings import arena_ledger

    runs = []
    for path in files:
        try:
            with open(path, encoding="utf-8") as f:
                runs.append(json.load(f))
        except (OSError, ValueError) as e:
            raise click.BadParameter(f"cannot read {path}: {e}", param_hint="--arena") from None
    try:
        ledger = arena_ledger(runs)
    except (ValueError, KeyError, TypeError) as e:
        raise click.BadParameter(f"{e}", param_hint="--arena") from None
    pools = sorted({v for v, _ in ledger.ratings})
    board: dict[str, list[dict[str, Any]]] = {}
    for pool in pools:
        if variant is not None and pool != variant:
            continue
        rows = ledger.leaderboard(pool)[:limit]
        board[pool] = [
            {"rank": i, "player": p.name, "bot": p.bot, "ordinal": r.ordinal, "mu": r.mu}
            | {"sigma": r.sigma, "games": r.games}
            for i, (p, r) in enumerate(rows, 1)
        ]
    return board


def _print_board(board: dict[str, list[dict[str, Any]]], variant: str | None, as_json: bool) -> None:
    if as_json:
        for pool, rows in board.items():
            for r in rows:
                print(json.dumps({"variant": pool, **r}))
        return
    if not board:
        which = f" for {variant}" if variant else ""
        console.print(f"no rated games{which} yet: ratings appear as games on the server finish")
        return
    for pool, rows in board.items():
        t = RichTable(title=f"{pool}: top {len(rows)} by ordinal (mu - 3 sigma)")
        for col, just in (("#", "right"), ("player", "left"), ("ordinal", "right"), ("mu", "right")):
            t.add_column(col, justify=just)  # type: ignore[arg-type]
        t.add_column("sigma", justify="right")
        t.add_column("games", justify="right")
        for r in rows:
            name = f"{r['player']} [dim](bot)[/]" if r["bot"] else r["player"]
            t.add_row(
                str(r["rank"]), name, f"{r['ordinal']:.2f}", f"{r['mu']:.2f}", f"{r['sigma']:.2f}", str(r["games"])
            )
        console.print(t)


def _print_games(games: list[dict[str, Any]], player: str, is_bot: bool, variant: str, as_json: bool) -> None:
    if as_json:
        for g in games:
            print(json.dumps(g))
        return
    who = f"{player} (bot)" if is_bot else player
    if not games:
        console.print(f"no rated {variant} games for {who}")
        return
    t = RichTable(title=f"{who}: last {len(games)} rated {variant} games (replay: moonshot replay GAME_ID)")
    for col in ("game", "finished", "rank", "total", "players", "ordinal change", "mu", "sigma"):
        t.add_column(col)
    for g in games:
        t.add_row(
            g["game_id"],
            (g["finished"] or "")[:19],
            str(g["rank"]),
            str(g["total"]),
            ", ".join(f"{p['name']} (bot)" if p["bot"] else p["name"] for p in g["players"]),
            f"{g['change']:+.2f}",
            f"{g['mu']:.2f}",
            f"{g['sigma']:.2f}",
        )
    console.print(t)


__all__ = ["ratings_cmd"]
