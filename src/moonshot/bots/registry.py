"""Every bot by name: the registry every place a bot can sit loads bots from (the simulator, the
arena, server bot seats, the RL opponents), the spec a bot is rated under, and ``--seats`` lists.

A level (``level:N``, :mod:`moonshot.bots.levels`) is accepted wherever a name is: ``make_bot``
resolves it to the level's bot and options. ``epsilon`` is an option of every bot
(:mod:`moonshot.bots.noise`), and so is ``pass_by``: another bot (or its name) makes the pass
(:mod:`moonshot.bots.composite`).

Bots are imported lazily, by ``module:Class``, so a missing optional bot never breaks the others.
"""

from __future__ import annotations

import contextlib
import shlex
import time
from collections.abc import Mapping
from importlib import import_module
from typing import Any

from moonshot.bots.base import Bot
from moonshot.bots.levels import LEVEL_PREFIX, LEVELS, Level, UnknownLevel, find_level

# name -> "module:Class"; imported lazily so a missing optional bot never breaks the others
BOT_REGISTRY: dict[str, str] = {
    "random": "moonshot.bots.random:RandomBot",
    "heuristic": "moonshot.bots.heuristic:HeuristicBot",
    "search": "moonshot.bots.search:SearchBot",
    "shooter": "moonshot.bots.shooter:ShooterBot",
    "pimc": "moonshot.bots.pimc:PimcBot",
    "learned": "moonshot.bots.learned:LearnedBot",  # NumPy
    "search-learned": "moonshot.bots.prior:PriorSearchBot",  # search over the network's top cards
    "search-defend": "moonshot.bots.search:DefendingSearchBot",  # search set up against moon shooters
    "duck": "moonshot.bots.duck:DuckBot",  # Turbo Hearts' own duck bot of the seed's era
}


class UnknownBot(ValueError):
    pass


class Unavailable(UnknownBot):
    """A bot of the registry that this installation cannot load (an extra it was not installed with)."""


def _level(name: str) -> Level:
    """The level ``level:N`` names, or :class:`UnknownBot` saying which levels there are."""
    try:
        return find_level(name)
    except UnknownLevel as e:
        raise UnknownBot(str(e)) from None


def check_bot_name(name: str) -> str:
    """``name`` if it is a registry name or an existing level (``level:N``), else :class:`UnknownBot`
    with what is known."""
    if name.startswith(LEVEL_PREFIX):
        _level(name)
    elif name not in BOT_REGISTRY:
        raise UnknownBot(f"unknown bot {name!r}; known: {', '.join(BOT_REGISTRY)}, level:N")
    return name


def bot_names() -> list[str]:
    """Bots that can be loaded here: the registry's names, then the levels (``level:1``, ...)
    whose bot can."""
    out = []
    for name in BOT_REGISTRY:
        try:
            make_bot(name)
        except UnknownBot:
            continue
        out.append(name)
    out.extend(lv.key for lv in LEVELS if lv.bot in out)
    return out


def make_bot(name: str, **options: Any) -> Bot:
    """A fresh bot by name (``random``, ``heuristic``, ...) or level (``level:3``).

    ``epsilon=p`` (any bot): each decision is the random bot's with probability ``p``.
    ``pass_by=other`` (any bot): ``other`` (a bot, or a name or level) makes the pass, this bot
    every other decision; the spec names it (``search --pass-by heuristic``)."""
    if name.startswith(LEVEL_PREFIX):
        level = _level(name)
        if options:  # a level is measured as it is: nothing may change it
            raise TypeError(f"{name} takes no options (it is {level.spec}); got {', '.join(sorted(options))}")
        leveled = make_bot(level.bot, **level.options)
        with contextlib.suppress(AttributeError):
            setattr(leveled, "level", level.number)  # noqa: B010
        return leveled
    epsilon = options.pop("epsilon", None)
    pass_by = options.pop("pass_by", None)
    target = BOT_REGISTRY.get(name)
    if target is None:
        raise UnknownBot(f"unknown bot {name!r}; known: {', '.join(BOT_REGISTRY)}")
    found = _CLASSES.get(target)
    if found is None:
        module_name, _, cls_name = target.partition(":")
        try:
            found = getattr(import_module(module_name), cls_name)
        except (ImportError, AttributeError) as e:
            raise Unavailable(f"bot {name!r} is not available in this installation ({e})") from e
        _CLASSES[target] = found
    cls: Any = found
    bot: Bot = cls(**options)
    if pass_by is not None:
        from moonshot.bots.composite import PassingBy

        passer = _passer(pass_by)
        bot = PassingBy(bot, passer)
        options = {**options, "pass_by": spec_of(passer)}
    if epsilon is not None:
        from moonshot.bots.noise import NoisyBot

        bot = NoisyBot(bot, float(epsilon))
        options = {**options, "epsilon": epsilon}
    # the name it is rated under (moonshot.play.ratings); setattr: a Bot need not declare it
    with contextlib.suppress(AttributeError):
        setattr(bot, "spec", bot_spec(name, options, cls))  # noqa: B010
    return bot


def _passer(pass_by: Any) -> Bot:
    """The bot ``pass_by`` names: a bot as it is, a name or level made with its defaults."""
    if isinstance(pass_by, str):
        return make_bot(check_bot_name(pass_by.strip()))
    if not callable(getattr(pass_by, "act", None)):
        raise TypeError(f"pass_by must be a bot or a bot's name, got {pass_by!r}")
    passer: Bot = pass_by
    return passer


# "module:Class" -> the class, once imported (the simulator makes four bots a game)
_CLASSES: dict[str, Any] = {}

# a bot class's constructor defaults: inspect.signature parses a compiled class's text
# signature, which cost more than the rest of a game of random bots (four bots a game)
_DEFAULTS: dict[Any, dict[str, Any]] = {}


def _defaults(cls: Any) -> dict[str, Any]:
    out = _DEFAULTS.get(cls)
    if out is None:
        import inspect  # only here: a simulate run would otherwise import it at start-up

        out = {}
        with contextlib.suppress(TypeError, ValueError):
            out = {k: p.default for k, p in inspect.signature(cls).parameters.items()}
        _DEFAULTS[cls] = out
    return out


def bot_spec(name: str, options: Mapping[str, Any], cls: Any = None) -> str:
    """A bot's full name, as a user types it to ``moonshot``: the registry name, then every option
    that is set and differs from the constructor's default, sorted (``search --simulations 200``).

    Only what a user can type is named: a CPU-time clock is ``--cpu-time`` (the arena's option
    that hands it to the bots), and another object (another clock, a network given as an object)
    is left out."""
    if not options:
        return name
    defaults = _defaults(cls) if cls is not None else {}
    parts: list[tuple[str, str]] = []  # (the option's key, its text), sorted by key
    for key, value in options.items():
        if value is None or (key in defaults and defaults[key] == value):
            continue
        if key == "clock":
            if value is time.process_time:
                parts.append(("cpu_time", "--cpu-time"))
            continue
        if not isinstance(value, (str, int, float)):  # (bool is an int)
            continue
        text = str(value)
        if isinstance(value, str) and (not text or any(ch.isspace() for ch in text)):
            text = shlex.quote(text)  # a spec as a value (pass_by): one word, as a shell reads it
        parts.append((key, f"--{key.replace('_', '-')} {text}"))
    return " ".join([name, *(text for _, text in sorted(parts))])


def spec_of(bot: Bot) -> str:
    """The name ``bot`` is rated under: its spec when :func:`make_bot` made it, else its name."""
    spec = getattr(bot, "spec", None)
    return spec if isinstance(spec, str) and spec else bot.name


def parse_seats(text: str) -> tuple[str, str, str, str]:
    """``"heuristic,random"`` → four seat policies; a short list is repeated (its last name)."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names or len(names) > 4:
        raise ValueError(f"--seats needs 1 to 4 comma-separated bot names, got {text!r}")
    for n in names:
        check_bot_name(n)
    while len(names) < 4:
        names.append(names[-1])
    return (names[0], names[1], names[2], names[3])


__all__ = [
    "BOT_REGISTRY",
    "LEVEL_PREFIX",
    "Unavailable",
    "UnknownBot",
    "bot_names",
    "bot_spec",
    "check_bot_name",
    "make_bot",
    "parse_seats",
    "spec_of",
]
