"""``moonshot tournament create|status|results``: run a tournament here, or on a server over HTTP.

Without ``--server`` a tournament of built-in bots is played in this process (games go to
``--db`` when given) and its results are printed and written. With ``--server URL`` the running
``moonshot serve`` plays it (external entrants need that: they connect to its ports with their
tokens); ``status`` and ``results`` ask the server, or read ``--db`` directly.
"""

from __future__ import annotations

import asyncio
import json
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table as RichTable

from moonshot.cli.commands import DB_HELP, bad_db, store_url_option
from moonshot.play.tournament import TournamentError, make_spec, standings_csv, standings_png

console = Console() if sys.stdout.isatty() else Console(width=120)  # piped: room for the standings
err_console = Console(stderr=True)


def _http(method: str, url: str, body: dict[str, Any] | None = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(
        url, data=data, method=method, headers={"Content-Type": "application/json", "Cookie": "name=moonshot-cli"}
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            raw = resp.read()
    except urllib.error.HTTPError as e:
        try:
            reason = json.loads(e.read()).get("error", str(e))
        except (ValueError, AttributeError):
            reason = str(e)
        raise click.ClickException(f"the server refused: {reason}") from None
    except (urllib.error.URLError, OSError) as e:
        raise click.ClickException(f"cannot reach {url}: {getattr(e, 'reason', e)}") from None
    return json.loads(raw)


def _server_url(server: str) -> str:
    if "://" not in server:
        server = "http://" + server
    return server.rstrip("/")


@click.group("tournament")
def tournament_cmd() -> None:
    """Duplicate tournaments between bots and external players (see docs/tournaments.md)."""


@tournament_cmd.command("create")
@click.option("--variant", "-v", default="standard", show_default=True, help="Rules to play (see `moonshot variants`).")
@click.option("--sets", "-n", default=4, show_default=True, type=click.IntRange(1, 1000), help="Duplicate deal sets.")
@click.option(
    "--deals-per-set",
    default=0,
    show_default=True,
    type=click.IntRange(0, 52),
    help="Deals in a set (0: a pass cycle).",
)
@click.option(
    "--seed",
    "-s",
    default=None,
    type=int,
    help="Deals come from this seed (replayable; default 0 for a local run). With --server: only for "
    "built-in bots alone, else the server draws a secret seed.",
)
@click.option(
    "--bot",
    "bots",
    multiple=True,
    metavar="'[NAME=]BOT [--opt V]'",
    help="A built-in entrant, e.g. 'search --think-ms 200' or a level, 'level:3' (repeat).",
)
@click.option(
    "--external", "externals", multiple=True, metavar="NAME", help="An external entrant (repeat); needs --server."
)
@click.option(
    "--filler", default="heuristic", show_default=True, help="House bot that fills a table short of four (or level:N)."
)
@click.option("--server", metavar="URL", help="Run it on this `moonshot serve` (its HTTP address).")
@click.option(
    "--db", default=None, callback=store_url_option, metavar="URL", help="Local run: store its games. " + DB_HELP
)
@click.option("--results", "results_path", type=click.Path(dir_okay=False, path_type=Path), help="Write results JSON.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path), help="Write standings CSV.")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), help="Plot the running standings (PNG).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def create_cmd(
    variant: str,
    sets: int,
    deals_per_set: int,
    seed: int | None,
    bots: tuple[str, ...],
    externals: tuple[str, ...],
    filler: str,
    server: str | None,
    db: str | None,
    results_path: Path | None,
    csv_path: Path | None,
    plot: Path | None,
    quiet: bool,
) -> None:
    """Create a tournament (and, without --server, play it here)."""
    if server is not None:
        if results_path or csv_path or plot or db:
            raise click.UsageError(
                "with --server the server plays it: --db, --results, --csv and --plot are for a local run "
                "(use `moonshot tournament results ID --server URL --csv ...` once it is done)"
            )
        body = {
            "variant": variant,
            "sets": sets,
            "deals_per_set": deals_per_set,
            "bots": list(bots),
            "externals": list(externals),
            "filler": filler,
        }
        if seed is not None:
            body["seed"] = seed
        out = _http("POST", _server_url(server) + "/api/tournaments", body)
        console.print(f"tournament [bold]{out['id']}[/] started on {server}: {out['games_total']} games")
        for name, token in out.get("tokens", {}).items():
            console.print(f"  external {name}: token [bold]{token}[/] (Sessions lobby_code, Trend token)")
        return
    if externals:
        raise click.UsageError("external entrants connect to a server: start `moonshot serve` and pass --server URL")
    try:
        spec = make_spec(variant, sets, bots, seed=seed or 0, deals_per_set=deals_per_set, filler=filler)
    except TournamentError as e:
        raise click.UsageError(str(e)) from None
    state = asyncio.run(_run_local(spec, db, quiet))
    _show(state, results_path, csv_path, plot)


async def _run_local(spec: Any, db: str | None, quiet: bool) -> dict[str, Any]:
    from moonshot.cli.progress import progress_bar as _progress
    from moonshot.runtime.table import OnBadAnswer, TablePolicy
    from moonshot.runtime.tournament import TournamentHost, full_results
    from moonshot.store import Store, StoreError, StoreRecorder

    store = recorder = None
    if db:
        try:
            store = await Store.open(db)
        except StoreError as e:
            raise bad_db(e) from None
        recorder = StoreRecorder(store)
        recorder.start()
    host = TournamentHost(policy=TablePolicy(decision_timeout=None, on_timeout=OnBadAnswer.RANDOM), recorder=recorder)
    try:
        t, _ = host.create(spec)
    except (ValueError, KeyError) as e:
        raise click.UsageError(str(e)) from None
    try:
        with _progress(quiet) as progress:
            bar = progress.add_task(f"tournament {t.id}", total=len(t.games), status="")
            assert t.task is not None
            while not t.task.done():
                await asyncio.sleep(0.2)
                progress.update(bar, completed=len(t.results), status=f"{spec.variant}")
            progress.update(bar, completed=len(t.results))
    finally:
        await host.close()
        if recorder is not None:
            await recorder.close()
        if store is not None:
            await store.close()
    if t.status != "finished":
        raise click.ClickException(f"tournament {t.id} {t.status}: {t.error}")
    return full_results(t.state())


async def _read_db(db: str, tid: str) -> dict[str, Any] | None:
    from moonshot.runtime.tournament import KEY_PREFIX
    from moonshot.store import Store, StoreError

    try:
        store = await Store.open(db, create=False)
    except StoreError as e:
        raise bad_db(e) from None
    try:
        value = await store.get_value(KEY_PREFIX + tid)
        return value if isinstance(value, dict) else None
    finally:
        await store.close()


def _fetch(tid: str, server: str | None, db: str | None, what: str) -> dict[str, Any]:
    from moonshot.runtime.tournament import full_results, summary

    if server is not None:
        path = "" if what == "status" else "/results"
        out: dict[str, Any] = _http("GET", f"{_server_url(server)}/api/tournaments/{urllib.parse.quote(tid)}{path}")
        return out
    if db is None:
        raise click.UsageError("say where the tournament is: --server URL or --db URL")
    state = asyncio.run(_read_db(db, tid))
    if state is None:
        raise click.ClickException(f"no tournament {tid} in {db}")
    return summary(state) if what == "status" else full_results(state)


def _table(data: dict[str, Any]) -> RichTable:
    st = data["standings"]
    better = "lower" if st["lower_is_better"] else "higher"
    t = RichTable(
        title=f"tournament {data['id']} ({data['variant']}, {data['status']}, "
        f"{data['games_played']}/{data['games_total']} games; {better} is better)",
        caption="moons: shot/conceded; t/o: timeouts; err: illegal or unreadable answers; "
        "absent: games not shown up for (played by the server's policy)",
    )
    for col in ("#", "entrant", "deals", "pts/deal", "95% CI", "win", "moons", "t/o", "err", "absent"):
        if col == "entrant":
            t.add_column(col, overflow="fold", min_width=12)
        else:
            t.add_column(col, justify="right", no_wrap=True)
    for r in st["entrants"]:
        m = r["mean_points_per_deal"]
        ci = f"{r['ci_low']:.1f}…{r['ci_high']:.1f}" if r["ci_low"] is not None else "-"
        t.add_row(
            str(r["rank"]),
            r["entrant"] + (" (external)" if r["kind"] == "external" else ""),
            str(r["deals"]),
            f"{m:.2f}" if m is not None else "-",
            ci,
            f"{r['win_rate']:.0%}" if r["win_rate"] is not None else "-",
            f"+{r['moons_shot']}/-{r['moons_conceded']}",
            str(r["timeouts"]),
            str(r["errors"]),
            str(r["no_shows"]),
        )
    return t


def _show(data: dict[str, Any], results_path: Path | None, csv_path: Path | None, plot: Path | None) -> None:
    console.print(_table(data))
    if results_path is not None:
        results_path.write_text(json.dumps(data, indent=1) + "\n")
        console.print(f"wrote {results_path}")
    if csv_path is not None:
        csv_path.write_text(standings_csv(data["standings"]))
        console.print(f"wrote {csv_path}")
    if plot is not None:
        try:
            plot.write_bytes(standings_png(data))
        except TournamentError as e:
            raise click.ClickException(str(e)) from None
        console.print(f"wrote {plot}")


@tournament_cmd.command("status")
@click.argument("tournament_id")
@click.option("--server", metavar="URL", help="Ask this `moonshot serve` (its HTTP address).")
@click.option("--db", default=None, callback=store_url_option, metavar="URL", help="Read this store. " + DB_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status_cmd(tournament_id: str, server: str | None, db: str | None, as_json: bool) -> None:
    """Progress and the standings so far."""
    data = _fetch(tournament_id, server, db, "status")
    if as_json:
        json.dump(data, sys.stdout, indent=1)
        print()
        return
    console.print(_table(data))


@tournament_cmd.command("results")
@click.argument("tournament_id")
@click.option("--server", metavar="URL", help="Ask this `moonshot serve` (its HTTP address).")
@click.option("--db", default=None, callback=store_url_option, metavar="URL", help="Read this store. " + DB_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the full results as JSON.")
@click.option("--results", "results_path", type=click.Path(dir_okay=False, path_type=Path), help="Write results JSON.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path), help="Write standings CSV.")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), help="Plot the running standings (PNG).")
def results_cmd(
    tournament_id: str,
    server: str | None,
    db: str | None,
    as_json: bool,
    results_path: Path | None,
    csv_path: Path | None,
    plot: Path | None,
) -> None:
    """Standings, paired differences and every game; JSON, CSV and a PNG."""
    data = _fetch(tournament_id, server, db, "results")
    if as_json:
        json.dump(data, sys.stdout, indent=1)
        print()
        return
    _show(data, results_path, csv_path, plot)
    paired = [p for p in data["standings"]["paired"] if p["difference"] is not None]
    if paired:
        t = RichTable(title="paired differences (row − column, points per deal on the same cards)")
        t.add_column("entrant")
        t.add_column("opponent")
        t.add_column("deals", justify="right")
        t.add_column("difference", justify="right")
        t.add_column("95% CI", justify="right")
        for p in paired:
            ci = f"[{p['ci_low']:+.2f}, {p['ci_high']:+.2f}]" if p["ci_low"] is not None else "-"
            t.add_row(p["entrant"], p["opponent"], str(p["deals"]), f"{p['difference']:+.2f}", ci)
        console.print(t)


__all__ = ["tournament_cmd"]
