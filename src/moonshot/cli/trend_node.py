"""``moonshot trend-node``: the Trend Hearts game node's command line (the seed's options, same
defaults and units, plus ``--host``, ``--tokens``, ``--seats``, ``--dummy-bot`` and ``--seed``).

Registered on the ``moonshot`` group in :mod:`moonshot.cli.main`; heavy imports happen inside.
"""

from __future__ import annotations

import asyncio
import sys

import click

from moonshot.cli.commands import allowed_origin_option, trusted_proxy_option
from moonshot.protocols.trend.codec import DEFAULT_PORT, VERSION


@click.command("trend-node")
@click.version_option(VERSION, "--version", prog_name="moonshot trend-node (Trend Hearts game node)")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: every interface).")
@click.option(
    "--port",
    default=DEFAULT_PORT,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port to bind on (page and WebSocket).",
)
@click.option(
    "--pass-cards-timeout",
    default=3000,
    show_default=True,
    type=click.IntRange(min=1),
    help="Timeout of the pass_cards event in milliseconds.",
)
@click.option(
    "--expose-cards-timeout",
    default=3000,
    show_default=True,
    type=click.IntRange(min=1),
    help="Timeout of the expose_cards event in milliseconds.",
)
@click.option(
    "--pick-card-timeout",
    default=1000,
    show_default=True,
    type=click.IntRange(min=1),
    help="Timeout of the pick_card event in milliseconds.",
)
@click.option(
    "--human-clock",
    default=0,
    show_default=True,
    type=click.IntRange(min=0),
    help="Seconds a person at a Human seat has a decision, then the dummy bot plays for them (0: no clock).",
)
@click.option(
    "--round-interval",
    default=2000,
    show_default=True,
    type=click.IntRange(min=0),
    help="Milliseconds between rounds (0: none).",
)
@click.option(
    "--deal-interval",
    default=2000,
    show_default=True,
    type=click.IntRange(min=0),
    help="Milliseconds between deals (0: none).",
)
@click.option(
    "--command-interval",
    default=500,
    show_default=True,
    type=click.IntRange(min=0),
    help="Milliseconds between commands, e.g. after each card (0: none).",
)
@click.option(
    "--auto-cycle",
    default=0,
    show_default=True,
    type=click.IntRange(min=0),
    help="Start the next match when four players are seated again if > 0; with 0 the node plays one match.",
)
@click.option(
    "--tokens",
    "tokens_file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="File of 'PLAYER_NUMBER TOKEN' lines: a join with another token is refused. Without it any token "
    "works, and the first one used binds the seat for the match.",
)
@click.option(
    "--seats",
    default="empty,empty,empty,empty",
    show_default=True,
    help="The four seats (playerNumber 1-4): empty (an AI joins), dummy or dummy:BOT (a moonshot bot), human.",
)
@click.option(
    "--dummy-bot",
    default="heuristic",
    show_default=True,
    help="The bot a plain 'dummy' seat is, and the one that plays for absent players (random, heuristic, search).",
)
@click.option("--seed", type=int, default=None, help="Seed for the deals and the dummies (reproducible matches).")
@allowed_origin_option
@trusted_proxy_option
@click.option(
    "--log-level",
    default="info",
    show_default=True,
    type=click.Choice(["debug", "info", "warning", "error"]),
    help="Structured key=value logs on stderr.",
)
def trend_node_cmd(
    host: str,
    port: int,
    pass_cards_timeout: int,
    expose_cards_timeout: int,
    pick_card_timeout: int,
    human_clock: int,
    round_interval: int,
    deal_interval: int,
    command_interval: int,
    auto_cycle: int,
    tokens_file: str | None,
    seats: str,
    dummy_bot: str,
    seed: int | None,
    allowed_origins: tuple[str, ...],
    trusted_proxies: tuple[str, ...],
    log_level: str,
) -> None:
    """Run a Trend Hearts game node: one table, its seat page and the Trend WebSocket on one port.

    Open http://localhost:8080/ to set each seat to Dummy, Human or Empty and start; AIs join an
    Empty seat over ws://localhost:8080/ with that seat's playerNumber. A match is 4 games of 4
    deals at rotating positions. Example: moonshot trend-node --seats empty,dummy,dummy,dummy
    --round-interval 0 --deal-interval 0 --command-interval 0
    """
    from moonshot.server.logs import configure_logging
    from moonshot.server.trend_node import NodeConfig, load_tokens, parse_seats, run_node

    try:
        settings = parse_seats(seats, dummy_bot)
        tokens = load_tokens(tokens_file) if tokens_file else None
    except (ValueError, OSError) as e:
        raise click.BadParameter(str(e)) from e
    configure_logging(log_level)
    cfg = NodeConfig(
        host=host,
        port=port,
        pass_timeout=pass_cards_timeout / 1000,
        expose_timeout=expose_cards_timeout / 1000,
        pick_timeout=pick_card_timeout / 1000,
        round_interval=round_interval / 1000,
        deal_interval=deal_interval / 1000,
        command_interval=command_interval / 1000,
        auto_cycle=auto_cycle,
        tokens=tokens,
        seats=settings,
        seed=seed,
        substitute=dummy_bot,
        human_clock=float(human_clock) or None,
        allowed_origins=allowed_origins,
        trusted_proxies=trusted_proxies,
    )
    try:
        asyncio.run(run_node(cfg, lambda line: print(line, flush=True)))
    except OSError as e:
        click.echo(f"cannot start the node: {e}", err=True)
        sys.exit(1)


__all__ = ["trend_node_cmd"]
