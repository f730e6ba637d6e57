"""The server's command-line commands: ``moonshot serve``, ``moonshot bot``, ``moonshot games``
and ``moonshot replay GAME_ID`` (registered on the ``moonshot`` group in :mod:`moonshot.cli.main`).

Heavy imports (asyncio servers, SQLAlchemy) happen inside the commands so ``moonshot --help``
stays fast.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.table import Table as RichTable

from moonshot.core.fairness import FORMAT, verify

if TYPE_CHECKING:
    from moonshot.runtime.limits import ClientLimits

console = Console()

DEFAULT_DB = "sqlite+aiosqlite:///moonshot.db"
DB_HELP = (
    "Game store URL: sqlite:///FILE (sqlite:////abs/path) or postgresql://USER@HOST[:PORT]/DB "
    "(the async drivers aiosqlite / asyncpg are used; the +aiosqlite / +asyncpg forms work too)."
)


def origins_option(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    """``--allowed-origin``: each an ``http(s)://HOST[:PORT]`` origin, normalised."""
    from moonshot.http.origin import normalise_origin

    try:
        return tuple(normalise_origin(v) for v in value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


ALLOWED_ORIGIN_HELP = (
    "An origin (https://HOST[:PORT]) besides the server's own whose pages may send state-changing requests "
    "(POST), for a deployment behind a proxy that rewrites Host; repeatable. Others are refused with 403."
)

# ``--allowed-origin``, on every command that serves the web app's HTTP routes
allowed_origin_option = click.option(
    "--allowed-origin",
    "allowed_origins",
    multiple=True,
    metavar="ORIGIN",
    callback=origins_option,
    help=ALLOWED_ORIGIN_HELP,
)


def proxies_option(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    """``--trusted-proxy``: each value an address or a network, checked at parse time."""
    from moonshot.runtime.clients import parse_cidr

    try:
        return tuple(str(parse_cidr(v)) for v in value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


# ``--trusted-proxy``, on every command that listens for clients (docs/server.md#behind-a-proxy)
trusted_proxy_option = click.option(
    "--trusted-proxy",
    "trusted_proxies",
    multiple=True,
    metavar="CIDR",
    callback=proxies_option,
    help="A reverse proxy or load balancer (an address or a network, e.g. 10.0.0.0/8 or ::1) whose word on "
    "who its client is is believed: X-Forwarded-For/Forwarded and X-Forwarded-Proto on HTTP and WebSocket "
    "requests; on Sessions and Kierki its connections must start with a PROXY protocol header (v1 or v2). "
    "Repeatable; none by default (then those headers are ignored, from loopback too).",
)


def store_url_option(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--db``: the URL a person types, checked and turned into its async-driver form at parse
    time (scheme, driver), so a bad one is a usage error, not a traceback."""
    if value is None:
        return None
    from moonshot.store import StoreError, store_url

    try:
        return store_url(value)
    except StoreError as e:
        raise click.BadParameter(str(e), ctx, param) from None


def operator_address_option(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, int] | None:
    """``--operator-address HOST:PORT`` (or ``none``) as (host, port) or None."""
    from moonshot.server.operator import parse_operator_address

    try:
        return parse_operator_address(value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


def bad_db(e: Exception) -> click.BadParameter:
    """What opening the store found (unreachable server, unwritable file): a ``--db`` usage error."""
    return click.BadParameter(str(e), param_hint="'--db'")


@click.command("serve")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address every protocol listens on (0.0.0.0 or :: to be reachable from other machines).",
)
@click.option(
    "--sessions-port",
    default=40405,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="TCP port of the Sessions protocol (JSON; 0 = any free port).",
)
@click.option("--no-sessions", is_flag=True, help="Do not serve the Sessions protocol.")
@click.option(
    "--trend-port",
    default=None,
    type=click.IntRange(0, 65535),
    help="Serve the Trend protocol (WebSocket, ws://HOST:PORT/) on the shared tables; off by default (0: any port). "
    "With --workers or --redis, every process serves it and players meet, rejoin and are adopted across them.",
)
@click.option(
    "--kierki-port",
    default=None,
    type=click.IntRange(0, 65535),
    help="Serve the Kierki protocol (TCP text, IAM<seat>) on the shared tables; off by default (0: any port).",
)
@click.option(
    "--kierki-timeout",
    default=5.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Kierki: seconds to say IAM, and between TRICK repeats to a silent seat (the spec's -t).",
)
@click.option(
    "--kierki-game",
    default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="Kierki: a game file (the spec's -f format) every Kierki table plays; default: each table's seed deals "
    "the seven contracts.",
)
@click.option(
    "--kierki-abandon",
    default=600.0,
    show_default=True,
    type=float,
    help="Kierki: seconds a table whose four seats are all empty is kept before it is given up (negative: forever).",
)
@click.option(
    "--http-port",
    default=7380,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="HTTP port of Turbo Hearts (HTTP + SSE) and the web app (0 = any free port).",
)
@click.option("--no-http", is_flag=True, help="Do not serve Turbo Hearts over HTTP, nor the web app.")
@click.option(
    "--open-names",
    is_flag=True,
    help="Trust the name cookie alone, as Turbo Hearts does "
    "(default: a name is bound to the browser that first used it).",
)
@allowed_origin_option
@trusted_proxy_option
@click.option(
    "--open-spectators",
    is_flag=True,
    help="Anyone not seated sees every hand of a running HTTP game, as Turbo Hearts shows it "
    "(default: only what is public until the game ends; --open-names implies it).",
)
@click.option(
    "--secret",
    default=None,
    envvar="MOONSHOT_SECRET",
    help="Key signing the HTTP session cookies (env MOONSHOT_SECRET; default: one kept in the store).",
)
@click.option("--db", default=DEFAULT_DB, show_default=True, callback=store_url_option, metavar="URL", help=DB_HELP)
@click.option("--no-db", is_flag=True, help="Keep nothing: games are not stored and cannot be restored.")
@click.option("--move-timeout", default=10.0, show_default=True, type=float, help="Seconds a player has per decision.")
@click.option(
    "--max-timeouts",
    default=3,
    show_default=True,
    type=click.IntRange(min=1),
    help="Timeouts in a row before a silent player's chair goes to a bot.",
)
@click.option(
    "--fill-wait",
    default=5.0,
    show_default=True,
    type=float,
    help="Seconds before `any` games are filled with bots (negative: never).",
)
@click.option(
    "--restore-grace",
    default=30.0,
    show_default=True,
    type=float,
    help="After a restart, seconds a restored game waits before bots play its absent players.",
)
@click.option(
    "--show-up",
    default=30.0,
    show_default=True,
    type=click.FloatRange(min=0),
    help="Seconds a tournament waits for an external entrant before the server's policy plays its chair.",
)
@click.option(
    "--bot",
    default="heuristic",
    show_default=True,
    help="Bot filling chairs (Sessions' `any` games, players who left), with its options: heuristic, random, "
    "search, 'search --think-ms 100', or a level: level:1 (weakest) to level:6 (docs/bots.md).",
)
@click.option(
    "--review-workers",
    default=1,
    show_default=True,
    type=click.IntRange(min=0),
    help="Worker processes (at the lowest CPU priority) that review finished games and answer practice "
    "games' hints over HTTP; 0 turns reviews and hints off (the API answers 503). See docs/review.md.",
)
@click.option(
    "--review-nice",
    default=19,
    show_default=True,
    type=click.IntRange(0, 19),
    help="The review workers' CPU niceness: 19, the lowest priority, never delays a table; lower it on a "
    "host that keeps CPU for reviews, where hints must answer even when the tables keep every core busy.",
)
@click.option(
    "--review-ray",
    default=None,
    metavar="ADDRESS|auto|local",
    help="Run reviews and hints as Ray tasks (the `ray` extra) instead of worker processes: a cluster's "
    "ADDRESS, auto (the cluster this machine is part of) or local (a Ray runtime of this machine's CPUs); "
    "--review-workers still bounds the tasks in flight. Off by default. See docs/review.md.",
)
@click.option("--seed", type=int, default=None, help="Seed for table seeds (reproducible runs); default random.")
@click.option(
    "--log-level",
    default="info",
    show_default=True,
    type=click.Choice(["debug", "info", "warning", "error"]),
    help="Structured key=value logs on stderr.",
)
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(min=1),
    help="Server processes sharing every port (SO_REUSEPORT); more than 1 needs --redis and PostgreSQL or --no-db.",
)
@click.option(
    "--redis",
    "redis_url",
    default=None,
    metavar="URL",
    help="Join a cluster through Redis (redis://HOST:6379/0): Sessions, Trend and Kierki players on any process "
    "or host meet at one table, HTTP requests for a game reach the process hosting it; a dead process's games "
    "are adopted by the others. Needs moonshot[scale].",
)
@click.option(
    "--cluster-prefix", default="moonshot:", show_default=True, help="Redis key prefix: one cluster per prefix."
)
@click.option(
    "--lease",
    default=5.0,
    show_default=True,
    type=click.FloatRange(min=0.5),
    help="Seconds before another process adopts the tables of one that stopped answering (--redis).",
)
@click.option(
    "--limit",
    "limits",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a per-client limit (repeatable), e.g. --limit streams_per_name=4; every key and default "
    "is in docs/server.md.",
)
@click.option(
    "--limits-file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help='A JSON object of per-client limits ({"streams_per_name": 4}); --limit overrides it.',
)
@click.option(
    "--operator-address",
    default="127.0.0.1:9380",
    show_default=True,
    metavar="HOST:PORT|none",
    callback=operator_address_option,
    help="Where the operator surface listens: /metrics (Prometheus), /healthz, /readyz and admin actions. "
    "Loopback by default; it is never on a public port unless you point it there. 'none' turns it off. "
    "With --workers, worker i listens on PORT+i.",
)
@click.option(
    "--operator-token-file",
    default=None,
    type=click.Path(dir_okay=False),
    help="A file (mode 0600) holding the operator token that admin actions ask for. Default: a new "
    "token each start, written 0600 beside the SQLite store (else in the working directory) as "
    "moonshot.operator-token, where `moonshot admin` finds it.",
)
@click.option("--reuse-port", is_flag=True, hidden=True, help="Bind with SO_REUSEPORT (set for --workers children).")
@click.option(
    "--operator-optional",
    is_flag=True,
    hidden=True,
    help="A busy operator address is logged, not fatal (set for --workers children of a default address).",
)
def serve_cmd(
    host: str,
    sessions_port: int,
    no_sessions: bool,
    trend_port: int | None,
    kierki_port: int | None,
    kierki_timeout: float,
    kierki_game: str | None,
    kierki_abandon: float,
    http_port: int,
    no_http: bool,
    open_names: bool,
    allowed_origins: tuple[str, ...],
    trusted_proxies: tuple[str, ...],
    open_spectators: bool,
    secret: str | None,
    db: str,
    no_db: bool,
    move_timeout: float,
    max_timeouts: int,
    fill_wait: float,
    restore_grace: float,
    show_up: float,
    bot: str,
    seed: int | None,
    log_level: str,
    workers: int,
    redis_url: str | None,
    cluster_prefix: str,
    lease: float,
    limits: tuple[str, ...],
    limits_file: str | None,
    operator_address: tuple[str, int] | None,
    operator_token_file: str | None,
    reuse_port: bool,
    operator_optional: bool,
    review_workers: int,
    review_nice: int,
    review_ray: str | None,
) -> None:
    """Run the moonshot server: every protocol on its port, one event loop, games stored in --db.

    SIGINT/SIGTERM stop it gracefully: games in progress stay in the store and are restored the
    next time the server starts with the same --db.

    With --redis, this process is one node of a cluster (see docs/scaling.md); --workers N starts
    N such processes on the same ports (Sessions, HTTP, Trend and Kierki on all of them).
    """
    from moonshot.cluster.node import ClusterError
    from moonshot.server.admin import TokenFileError
    from moonshot.server.app import serve
    from moonshot.server.config import ServerConfig
    from moonshot.server.logs import configure_logging
    from moonshot.store import StoreError

    source = click.get_current_context().get_parameter_source("operator_address")
    operator_explicit = source is not click.core.ParameterSource.DEFAULT
    if workers > 1:
        if not redis_url:
            raise click.BadParameter("more than one worker needs --redis (where they meet)", param_hint="'--workers'")
        if not no_db and db.startswith("sqlite"):
            raise click.BadParameter(
                "several workers share the game store: use PostgreSQL (--db postgresql://USER@HOST/DB) or --no-db",
                param_hint="'--workers'",
            )
        if sessions_port == 0 and not no_sessions:
            raise click.BadParameter("workers share one port: give --sessions-port a number", param_hint="'--workers'")
        if http_port == 0 and not no_http:
            raise click.BadParameter("workers share one port: give --http-port a number", param_hint="'--workers'")
        if kierki_port == 0:
            raise click.BadParameter("workers share one port: give --kierki-port a number", param_hint="'--workers'")
        if trend_port == 0:
            raise click.BadParameter("workers share one port: give --trend-port a number", param_hint="'--workers'")
        sys.exit(_supervise(workers, sys.argv[1:], operator_address, operator_explicit))

    if kierki_game is not None:
        from moonshot.protocols.kierki.gamefile import GameFileError, load_game_in_order

        try:
            load_game_in_order(kierki_game)
        except GameFileError as e:
            raise click.BadParameter(f"{kierki_game}: {e}", param_hint="'--kierki-game'") from None
    client_limits = parse_limits(limits, limits_file)
    configure_logging(log_level)
    cfg = ServerConfig(
        host=host,
        sessions_port=None if no_sessions else sessions_port,
        http_port=None if no_http else http_port,
        open_names=open_names,
        allowed_origins=allowed_origins,
        trusted_proxies=trusted_proxies,
        open_spectators=open_spectators or open_names,
        secret=secret,
        db_url=None if no_db else db,
        move_timeout=move_timeout,
        max_timeouts=max_timeouts,
        fill_wait=None if fill_wait < 0 else fill_wait,
        restore_grace=restore_grace,
        show_up=show_up,
        bot=bot,
        seed=seed,
        trend_port=trend_port,
        kierki_port=kierki_port,
        kierki_timeout=kierki_timeout,
        kierki_game=kierki_game,
        kierki_abandon=None if kierki_abandon < 0 else kierki_abandon,
        redis_url=redis_url,
        cluster_prefix=cluster_prefix,
        lease=lease,
        reuse_port=reuse_port,
        review_workers=review_workers,
        review_nice=review_nice,
        review_ray=review_ray,
        limits=client_limits,
        operator_address=operator_address,
        operator_token_file=operator_token_file,
        # the default address may be another server's on this machine: then this one runs without
        operator_required=operator_explicit and not operator_optional,
    )
    try:
        asyncio.run(serve(cfg, lambda line: print(line, flush=True)))
    except StoreError as e:
        raise bad_db(e) from None
    except ClusterError as e:
        raise click.BadParameter(str(e), param_hint="'--redis'") from None
    except TokenFileError as e:
        raise click.BadParameter(str(e), param_hint="'--operator-token-file'") from None
    except OSError as e:
        console.print(f"[red]cannot start: {e}[/]")
        sys.exit(1)
    except ValueError as e:
        console.print(f"[red]{e}[/]")
        sys.exit(2)


def parse_limits(settings: tuple[str, ...], path: str | None = None) -> ClientLimits:
    """The per-client limits: the defaults, then ``path`` (a JSON object), then ``KEY=VALUE`` s."""
    from moonshot.runtime.limits import ClientLimits

    given: dict[str, str] = {}
    if path is not None:
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            raise click.BadParameter(f"{path}: {e}", param_hint="'--limits-file'") from None
        if not isinstance(data, dict):
            raise click.BadParameter(f"{path}: not a JSON object", param_hint="'--limits-file'")
        given.update({str(k): str(v) for k, v in data.items()})
    for item in settings:
        key, eq, value = item.partition("=")
        if not eq:
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="'--limit'")
        given[key] = value
    try:
        return ClientLimits().with_settings(given)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="'--limit'") from None


def _worker_argv(
    argv: list[str], index: int, operator: tuple[str, int] | None = None, explicit: bool = True
) -> list[str]:
    """A worker's command line: ``serve`` with the same options, one process, shared ports;
    Sessions, HTTP, Trend and Kierki on every worker. Each worker's operator surface has its own
    port (``operator``'s port + ``index``), so each one's metrics can be scraped; where the
    operator address was the default (``explicit`` False), a worker that finds its port busy runs
    without one, as a single server does, rather than dying and being restarted for ever."""
    drop = {"--workers", "-j", "--operator-address"}
    out: list[str] = []
    it = iter(argv)
    for a in it:
        name = a.split("=", 1)[0]
        if name in drop:
            if "=" not in a:
                next(it, None)  # its value
            continue
        out.append(a)
    out += ["--workers", "1", "--reuse-port"]
    if operator is None:
        out += ["--operator-address", "none"]
    else:
        host, port = operator
        shown = f"[{host}]" if ":" in host else host
        out += ["--operator-address", f"{shown}:{port + index if port else 0}"]
        if not explicit:
            out.append("--operator-optional")
    return out


def _die_with_parent() -> None:
    """In a worker, before exec: SIGTERM when the supervisor dies, however it dies (Linux)."""
    import ctypes
    import signal

    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG


def _supervise(
    workers: int, argv: list[str], operator: tuple[str, int] | None = None, operator_explicit: bool = True
) -> int:
    """Run ``workers`` server processes; restart one that dies (the others adopt its games in
    the meantime); SIGINT/SIGTERM stop them all. Returns the exit status."""
    import signal
    import subprocess
    import time

    if argv and argv[0] == "serve":
        argv = argv[1:]
    cmd = [sys.executable, "-m", "moonshot.cli.main", "serve"]
    procs: list[subprocess.Popen[bytes]] = []
    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    for i in range(workers):
        procs.append(
            subprocess.Popen(cmd + _worker_argv(argv, i, operator, operator_explicit), preexec_fn=_die_with_parent)
        )
        if i == 0:
            time.sleep(1.0)  # the first creates the store's tables and the HTTP secret alone
    print(f"moonshot: {workers} workers (pids {' '.join(str(p.pid) for p in procs)}) share the ports", flush=True)
    while not stopping:
        time.sleep(0.2)
        for i, p in enumerate(procs):
            rc = p.poll()
            if rc is not None and not stopping:
                print(f"moonshot: worker {i} (pid {p.pid}) exited with {rc}; starting another", flush=True)
                procs[i] = subprocess.Popen(
                    cmd + _worker_argv(argv, i, operator, operator_explicit), preexec_fn=_die_with_parent
                )
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    status = 0
    for p in procs:
        try:
            status = max(status, abs(p.wait(30)))
        except subprocess.TimeoutExpired:
            p.kill()
            status = 1
    return status


def _host_port(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise click.BadParameter(f"expected HOST:PORT, got {text!r}")
    return host, int(port)


@click.command("bot")
@click.option("--connect", "address", default="127.0.0.1:40405", show_default=True, help="Server HOST:PORT.")
@click.option(
    "--policy", default="heuristic", show_default=True, help="Bot policy (heuristic, random, search, level:3)."
)
@click.option("--sessions", default=4, show_default=True, type=click.IntRange(min=1), help="Games at once.")
@click.option("--games", default=10, show_default=True, type=click.IntRange(min=1), help="Games to play in all.")
@click.option(
    "--game-type",
    default="any",
    show_default=True,
    type=click.Choice(["any", "bots_only", "humans_only"]),
    help="Which games to ask for.",
)
@click.option("--lobby-code", default=None, help="Play only with sessions that give the same code.")
@click.option("--tag", default=None, help="Player tag (default: moonshot_<policy>).")
@click.option("--seed", type=int, default=None, help="Seed for the bot's choices.")
def bot_cmd(
    address: str,
    policy: str,
    sessions: int,
    games: int,
    game_type: str,
    lobby_code: str | None,
    tag: str | None,
    seed: int | None,
) -> None:
    """Play GAMES games of the Sessions protocol with a moonshot bot, SESSIONS at a time on one connection."""
    import random

    from moonshot.bots.registry import UnknownBot, make_bot
    from moonshot.protocols.sessions.client import BotPlayer, Client, GameResult

    host, port = _host_port(address)
    try:
        make_bot(policy)
    except UnknownBot as e:
        raise click.BadParameter(str(e), param_hint="--policy") from e
    rng = random.Random(seed)

    def player() -> BotPlayer:
        p = BotPlayer(make_bot(policy), random.Random(rng.getrandbits(32)))
        if tag:
            p.name = tag
        return p

    async def run() -> list[GameResult]:
        client = await Client.connect(host, port)
        async with client:
            return await client.play_games(
                player, sessions=sessions, games=games, game_type=game_type, lobby_code=lobby_code
            )

    try:
        results = asyncio.run(run())
    except (OSError, ConnectionError) as e:
        console.print(f"[red]cannot play on {address}: {e}[/]")
        sys.exit(1)
    _print_results(results, policy)


def _print_results(results: list[Any], policy: str) -> None:
    t = RichTable(title=f"moonshot bot ({policy}) — Sessions protocol")
    for col in ("games", "mean points", "wins", "win rate", "server-chosen moves"):
        t.add_column(col, justify="right")
    n = len(results)
    mean = statistics.fmean(r.my_score for r in results) if results else 0.0
    wins = sum(1 for r in results if r.won)
    forced = sum(r.server_moves for r in results)
    t.add_row(str(n), f"{mean:.1f}", str(wins), f"{wins / n:.0%}" if n else "-", str(forced))
    console.print(t)


@click.command("games")
@click.option("--db", default=DEFAULT_DB, show_default=True, callback=store_url_option, metavar="URL", help=DB_HELP)
@click.option(
    "--status",
    default="finished",
    show_default=True,
    type=click.Choice(["finished", "running", "failed", "aborted", "all"]),
    help="Which games to list.",
)
@click.option("--limit", default=50, show_default=True, type=click.IntRange(min=1))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line instead of a table.")
def games_cmd(db: str, status: str, limit: int, as_json: bool) -> None:
    """List stored games (newest first)."""
    from moonshot.store import Store, StoreError

    async def fetch() -> list[dict[str, Any]]:
        store = await Store.open(db, create=False)
        try:
            return await store.list_games(None if status == "all" else status, limit)
        finally:
            await store.close()

    try:
        rows = asyncio.run(fetch())
    except StoreError as e:
        raise bad_db(e) from None
    if as_json:
        for r in rows:
            print(json.dumps(r, default=str))
        return
    t = RichTable(title=f"{len(rows)} {status} games in {db}")
    for col in ("id", "created", "status", "variant", "players", "totals", "winners"):
        t.add_column(col)
    for r in rows:
        t.add_row(
            r["id"],
            str(r["created_at"])[:19],
            r["status"],
            r["variant"],
            ", ".join(p.get("name", "?") for p in r["players"]),
            " ".join(str(x) for x in r["totals"] or []),
            " ".join(str(x) for x in r["winners"] or []),
        )
    console.print(t)


def load_stored(url: str, game_id: str) -> Any:
    """The stored record of ``game_id`` (None: no such game); a store that cannot be opened is a
    usage error that says why."""
    from moonshot.protocols.kierki.gamefile import parse_game
    from moonshot.store import Store, StoreError, register_game_file_parser

    register_game_file_parser(parse_game)  # records that keep a Kierki game file's text

    async def load() -> Any:
        store = await Store.open(url, create=False)
        try:
            return await store.load(game_id)
        finally:
            await store.close()

    try:
        return asyncio.run(load())
    except StoreError as e:
        raise bad_db(e) from None


def replay_stored(game_id: str, db: str | None, quiet: bool) -> int:
    """Rebuild a stored game from its actions and check it against the stored result; exit code."""
    from moonshot.store import StoreError, sqlite_path, store_url

    try:
        url = store_url(db or DEFAULT_DB)
    except StoreError as e:
        raise bad_db(e) from None
    path = sqlite_path(url)
    if path is not None and not path.exists():
        # SOURCE may be a mistyped file name as well: no store is not a --db mistake here
        console.print(f"[red]no file and no stored game called {game_id!r} (there is no game store at {path})[/]")
        return 1

    rec = load_stored(url, game_id)
    if rec is None:
        console.print(f"[red]no file and no stored game called {game_id!r} in {url}[/]")
        return 1
    try:
        game = rec.rebuild()
    except Exception as e:
        console.print(f"[red]game {game_id}: the stored actions do not replay: {e}[/]")
        return 1
    totals = list(game.totals)
    if rec.status == "finished":
        if not game.over or totals != list(rec.totals or []):
            console.print(f"[red]game {game_id}: MISMATCH — replay gives {totals}, the store says {rec.totals}[/]")
            return 1
        console.print(
            f"game {game_id}: ok — {len(rec.actions)} actions replay to totals {totals}, winners {rec.winners}"
        )
    else:
        console.print(
            f"game {game_id}: {rec.status}, {len(rec.actions)} actions replay cleanly "
            f"(deal {game.deal_index + 1}, trick {game.trick_no}, totals {totals})"
        )
    if not quiet:
        names = [p.get("name", "?") for p in rec.players]
        forced = sum(rec.forced)
        console.print(f"  players: {', '.join(names)}; server-chosen actions: {forced}")
    return 0


def _hands_option(texts: Sequence[str]) -> list[tuple[int, int, int]]:
    """``DEAL:SEAT:CARDS`` (``0:2:2C 3C ... AS``, seats 0-3 = N E S W) -> (deal, seat, card mask)."""
    from moonshot.core.cards import CardError, parse_card_set

    out = []
    for text in texts:
        deal, _, rest = text.partition(":")
        seat, _, cards = rest.partition(":")
        try:
            out.append((int(deal), int(seat), parse_card_set(cards.split())))
        except (ValueError, CardError) as e:
            raise click.BadParameter(f"{text!r}: {e} (use DEAL:SEAT:CARDS)", param_hint="'--hand'") from None
    return out


def verify_record(data: dict[str, Any], commitment: str | None, hands: Sequence[tuple[int, int, int]]) -> list[str]:
    """Check a finished game's public record (``GET /api/games/<id>``) against its commitment."""
    from moonshot.core.actions import action_from_dict
    from moonshot.protocols.kierki.gamefile import parse_game
    from moonshot.store import deal_from_json, rules_named

    seal = data.get("deal_seal")
    if not isinstance(seal, dict) or data.get("status") != "finished":
        return ["the record has no revealed deal seal (is the game finished?)"]
    if seal.get("format") != FORMAT:
        return [f"unknown commitment format {seal.get('format')!r} (this moonshot knows {FORMAT})"]
    published = str(seal.get("commitment"))
    problems = []
    if commitment is not None and commitment.strip().lower() != published:
        problems.append(f"the record's commitment {published} is not the one you saw ({commitment})")
    try:
        rules = rules_named(str(data["variant"]))
        actions = [action_from_dict(a) for a in data.get("actions", [])]
        deals = parse_game(data["deals"]) if isinstance(data.get("deals"), str) else None
        if isinstance(data.get("fixed_deals"), list):  # the fixed deals as data (moonshot store export)
            deals = [deal_from_json(d) for d in data["fixed_deals"]]
        seed = int(seal["seed"])
    except (KeyError, TypeError, ValueError) as e:
        return [*problems, f"the record cannot be read: {e}"]
    game_id = str(seal.get("game_id", data.get("id")))
    return problems + verify(
        rules, game_id, published, seed, str(seal.get("salt")), actions, deals, data.get("totals"), hands
    )


def verify_stored(
    game_id: str, db: str | None, commitment: str | None, hands: Sequence[tuple[int, int, int]]
) -> list[str]:
    """Check a finished stored game against the commitment it published when it started."""
    from moonshot.store import StoreError, store_url

    try:
        url = store_url(db or DEFAULT_DB)
    except StoreError as e:
        raise bad_db(e) from None

    rec = load_stored(url, game_id)
    if rec is None:
        return [f"no stored game called {game_id!r} in {url}"]
    if rec.status != "finished":
        return [f"game {game_id} is {rec.status}: its seed is revealed only when it is finished"]
    published = rec.meta.get("deal_commitment")
    salt = rec.meta.get("deal_salt")
    if not isinstance(published, str) or not isinstance(salt, str):
        return [f"game {game_id} was stored without a commitment (before games were sealed)"]
    problems = []
    if commitment is not None and commitment.strip().lower() != published:
        problems.append(f"the stored commitment {published} is not the one you saw ({commitment})")
    deals = rec.deals()
    return problems + verify(
        rules_for_record(rec.variant), rec.id, published, rec.seed, salt, rec.actions, deals, rec.totals, hands
    )


def rules_for_record(name: str) -> Any:
    from moonshot.store import rules_named

    return rules_named(name)


@click.command("verify")
@click.argument("game_id", required=False)
@click.option(
    "--record",
    type=click.Path(exists=True, dir_okay=False),
    help="A finished game's public record: the JSON of GET /api/games/<id>, checked without the store.",
)
@click.option("--commitment", default=None, help="The commitment you saw when the game started (hex).")
@click.option(
    "--hand",
    "hands",
    multiple=True,
    metavar="DEAL:SEAT:CARDS",
    help="A hand you were dealt (deal from 0, seat 0-3 = N E S W): it must be what the seed dealt.",
)
@click.option("--db", default=None, callback=store_url_option, metavar="URL", help=DB_HELP)
def verify_cmd(
    game_id: str | None, record: str | None, commitment: str | None, hands: tuple[str, ...], db: str | None
) -> None:
    """Check a finished game's deals and result against the commitment it published at its start.

    The revealed seed and salt must hash to the commitment, every card played must have been in
    its seat's hand as the seed dealt it, and the replay must reach the recorded totals."""
    if (game_id is None) == (record is None):
        raise click.UsageError("give a GAME_ID (a stored game) or --record FILE (a game's public record)")
    seen = _hands_option(hands)
    if record is not None:
        try:
            data = json.loads(Path(record).read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise click.BadParameter(f"{record}: {e}", param_hint="'--record'") from None
        if not isinstance(data, dict):
            raise click.BadParameter(f"{record}: not a game record", param_hint="'--record'")
        problems = verify_record(data, commitment, seen)
        name = str(data.get("id", record))
    else:
        assert game_id is not None
        problems = verify_stored(game_id, db, commitment, seen)
        name = game_id
    if problems:
        for p in problems:
            console.print(f"[red]game {name}: {p}[/]")
        console.print(f"[red]game {name}: NOT VERIFIED[/]")
        sys.exit(1)
    console.print(f"game {name}: verified — the deals are the committed ones and the result replays")


__all__ = [
    "DB_HELP",
    "bot_cmd",
    "games_cmd",
    "replay_stored",
    "serve_cmd",
    "store_url_option",
    "verify_cmd",
    "verify_record",
    "verify_stored",
]
