"""What ``moonshot serve`` is told: :class:`ServerConfig` (every option of the server, the CLI's
flags as data) and :func:`bot_factory`, which turns its ``bot`` spec into a maker of fresh bots.

It holds values and checks the bot spec; it starts, opens and listens to nothing.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from moonshot.bots.base import Bot
from moonshot.bots.registry import Unavailable, UnknownBot, make_bot
from moonshot.play.tournament import TournamentError, parse_bot
from moonshot.protocols.sessions.codec import DEFAULT_PORT, MAX_MESSAGE
from moonshot.runtime.limits import ClientLimits
from moonshot.store import DEFAULT_URL

log = logging.getLogger("moonshot.server")


def bot_factory(spec: str) -> Callable[[], Bot]:
    """A maker of fresh bots by spec, as ratings name them (``heuristic``, ``search --simulations
    200``); a known bot this installation lacks falls back to ``random``. ``ValueError`` for an
    unknown bot or option."""
    try:
        name, options = parse_bot(spec)
    except TournamentError as e:
        raise ValueError(f"--bot: {e}") from None
    try:
        make_bot(name, **options)
    except Unavailable:  # (this bot, or the bot that passes for it: pass_by)
        log.warning("event=bot_unavailable bot=%s using=random", name)
        name, options = "random", {}
    except UnknownBot as e:  # the bot or its passer named nothing the registry has: the operator's typo
        raise ValueError(f"--bot {spec!r}: {e}") from e
    except TypeError as e:  # an option the bot does not take
        raise ValueError(f"--bot {spec!r}: {e}") from None
    return functools.partial(make_bot, name, **options)


@dataclass
class ServerConfig:
    """Every option of ``moonshot serve`` (the CLI's flags; the defaults are a test's or an embedder's)."""

    host: str = "127.0.0.1"
    sessions_port: int | None = DEFAULT_PORT  # None: Sessions disabled; 0: any free port
    db_url: str | None = DEFAULT_URL  # None: no store (nothing persisted)
    move_timeout: float = 10.0  # seconds per decision
    max_timeouts: int = 3  # timeouts in a row before a silent player is replaced by a bot
    fill_wait: float | None = 5.0  # seconds before `any` games are filled with bots
    restore_grace: float = 30.0  # seconds a restored table waits for its players before bots play
    bot: str = "heuristic"  # the bot that fills chairs and replaces players who left
    max_message: int = MAX_MESSAGE
    resync_idle: float = 5.0  # seconds of silence before half a message is dropped
    seed: int | None = None  # fixes table seeds (tests); None: random
    trend_port: int | None = None  # the Trend protocol (WebSocket); None: off, 0: any free port
    http_port: int | None = None  # Turbo HTTP + SSE and the web app (CLI default 7380); 0: any free port
    open_names: bool = False  # the seed's behaviour: the name cookie alone says who you are
    allowed_origins: tuple[str, ...] = ()  # other origins whose pages may POST (a proxy's); see turbo.guard
    # spectators of a running HTTP game see every hand (Turbo's trust model; open_names implies it)
    open_spectators: bool = False
    secret: str | None = None  # signs session cookies; None: MOONSHOT_SECRET, else kept in the store
    static_dir: Path | None = None  # the web app's files (default: moonshot/http/static)
    # a cluster of server processes (moonshot.cluster.node): None = this process alone
    redis_url: str | None = None
    cluster_prefix: str = "moonshot:"  # Redis key prefix: one cluster per prefix
    lease: float = 5.0  # seconds a table's lease outlives its owner's last renewal
    reuse_port: bool = False  # share the listening ports with other processes (SO_REUSEPORT)
    show_up: float = 30.0  # seconds a tournament waits for an external entrant before its policy plays
    kierki_port: int | None = None  # the Kierki protocol (TCP text); None: off, 0: any free port
    kierki_timeout: float = 5.0  # Kierki: seconds before TRICK is sent again, and to say IAM
    kierki_game: str | None = None  # a Kierki game file every Kierki table plays; None: the seed deals
    kierki_abandon: float | None = 600.0  # seconds a Kierki table with every seat empty is kept
    # what one client (an address, a name) may hold and ask, every protocol (docs/server.md)
    limits: ClientLimits = field(default_factory=ClientLimits)
    # worker processes (niced) that review finished games and answer hints; 0: reviews are off
    review_workers: int = 1
    review_nice: int = 19  # the review workers' niceness (0 to 19): 19 never delays a table's decision
    review_ray: str | None = None  # reviews as Ray tasks: a cluster's address, auto or local (play/review_ray.py)
    # the operator surface (/metrics, /healthz, /readyz, admin actions): (host, port), port 0 any
    # free one; None: off (the CLI's default is 127.0.0.1:9380, loopback; see server/operator.py)
    operator_address: tuple[str, int] | None = None
    operator_required: bool = True  # False (the CLI's default address): a busy address is logged, not fatal
    operator_token_file: str | None = None  # the admin actions' token; None: made at start, written beside the store
    # proxies (CIDRs) whose forwarded addresses and PROXY headers are believed; none by default
    trusted_proxies: tuple[str, ...] = ()


__all__ = ["ServerConfig", "bot_factory"]
