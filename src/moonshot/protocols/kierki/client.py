"""``kierki-client -h <host> -p <port> [-4|-6] -N|-E|-S|-W [-a]``: the automatic and the interactive player.

One asyncio loop reads the server; the interactive client's stdin is read by a thread that hands
each line to the loop, so commands (``cards``, ``tricks``, ``!10C``) are answered at once whatever
the network does, and the network never waits for the keyboard. What the seat knows lives in
:class:`~moonshot.protocols.kierki.auto.ClientState`; the automatic player's choice is
:func:`~moonshot.protocols.kierki.auto.choose_card`.

The automatic client prints the game report (one line per message sent or received); the
interactive one prints the spec's user texts instead. Invalid messages from the server are ignored.
Exit code 0 when the server closes the connection after a deal's scores (the game's end), 1 for a
bad invocation, a refused connection, ``BUSY`` or a game cut short.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import socket
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TextIO

from moonshot import one_blas_thread
from moonshot.bots.registry import BOT_REGISTRY, make_bot
from moonshot.core.cards import Card, CardError, CardSet, card_list, parse_card
from moonshot.protocols.kierki.auto import ClientState, choose_card
from moonshot.protocols.kierki.codec import (
    SEAT_LETTERS,
    Busy,
    CodecError,
    Deal,
    Iam,
    LineBuffer,
    Message,
    OverlongLine,
    Score,
    Taken,
    Total,
    Trick,
    Wrong,
    encode,
    format_address,
    format_cards,
    format_message,
    parse_message,
    report_line,
)

USAGE = "usage: kierki-client -h <host> -p <port> [-4|-6] -N|-E|-S|-W [-a] [--bot heuristic|search|random]"
OPTIONS_HELP = f"""{USAGE}

Takes one seat at a Kierki server's game (docs/kierki.md): interactive by default, reading your
cards from the keyboard; -a plays by itself.

  -h <host>      the server's host name or address ([::1] for IPv6 is fine)
  -p <port>      the server's port
  -4, -6         IPv4 only, IPv6 only (default: whichever the host resolves to)
  -N -E -S -W    the seat to ask for
  -a             automatic: a bot plays the seat
  --bot <name>   the automatic player's bot (default heuristic)
  --help         this text"""


class UsageError(Exception):
    pass


class HelpAsked(Exception):
    """``--help`` stood where a parameter goes: print :data:`OPTIONS_HELP` and exit 0."""


@dataclass
class ClientOptions:
    host: str
    port: int
    seat: int
    family: int = socket.AF_UNSPEC
    auto: bool = False
    bot: str = "heuristic"  # moonshot extension: --bot NAME picks the automatic player's policy


def parse_args(argv: Sequence[str]) -> ClientOptions:
    """Parameters in any order; repeated or conflicting ones: the last wins. Raises :class:`UsageError`."""
    host: str | None = None
    port: int | None = None
    seat: int | None = None
    family = socket.AF_UNSPEC
    auto = False
    bot = "heuristic"
    i = 0
    while i < len(argv):
        flag = argv[i]
        if flag == "--help":
            raise HelpAsked
        if flag == "--bot":
            if i + 1 >= len(argv):
                raise UsageError("--bot needs a bot name")
            bot = argv[i + 1]
            if bot not in BOT_REGISTRY:
                raise UsageError(f"unknown bot {bot!r}; known: {', '.join(BOT_REGISTRY)}")
            i += 2
            continue
        if flag in ("-h", "-p"):
            if i + 1 >= len(argv):
                raise UsageError(f"{flag} needs a value")
            value = argv[i + 1]
            if flag == "-h":
                if value.startswith("[") and value.endswith("]"):
                    value = value[1:-1]  # [::1], as in URLs
                if not value:
                    raise UsageError("-h needs a host name or address")
                host = value
            else:
                if not value.isdigit() or not 1 <= int(value) <= 65535:
                    raise UsageError(f"bad port {value!r}: expected a number 1..65535")
                port = int(value)
            i += 2
            continue
        if flag == "-4":
            family = socket.AF_INET
        elif flag == "-6":
            family = socket.AF_INET6
        elif flag == "-a":
            auto = True
        elif len(flag) == 2 and flag[0] == "-" and flag[1] in SEAT_LETTERS:
            seat = SEAT_LETTERS.index(flag[1])
        else:
            raise UsageError(f"unknown parameter {flag!r}")
        i += 1
    if host is None:
        raise UsageError("the server's host (-h <host>) is required")
    if port is None:
        raise UsageError("the server's port (-p <port>) is required")
    if seat is None:
        raise UsageError("a seat is required: one of -N, -E, -S, -W")
    return ClientOptions(host, port, seat, family, auto, bot)


def card_text(cards: Sequence[Card] | int) -> str:
    """Cards for the user: ``10H, 2C, QS`` (a set is listed by suit, low to high)."""
    seq = card_list(cards) if isinstance(cards, int) else list(cards)
    return ", ".join(format_cards([c]) for c in seq)


def describe(msg: Message, state: ClientState) -> str | None:
    """The spec's text for a server message (``state`` already updated with it)."""
    if isinstance(msg, Busy):
        return f"Place busy, list of busy places received: {', '.join(SEAT_LETTERS[s] for s in msg.seats)}."
    if isinstance(msg, Deal):
        return f"New deal {msg.kind}: starting place {SEAT_LETTERS[msg.leader]}, your cards: {card_text(msg.cards)}."
    if isinstance(msg, Wrong):
        return f"Wrong message received in trick {msg.number}."
    if isinstance(msg, Taken):
        return f"A trick {msg.number} is taken by {SEAT_LETTERS[msg.winner]}, cards {card_text(msg.cards)}."
    if isinstance(msg, (Score, Total)):
        head = "The scores are:" if isinstance(msg, Score) else "The total scores are:"
        return "\n".join([head] + [f"{SEAT_LETTERS[s]} | {p}" for s, p in enumerate(msg.points)])
    if isinstance(msg, Trick):
        return f"Trick: ({msg.number}) {card_text(msg.cards)}\nAvailable: {card_text(state.hand)}"
    return None


HELP = "Commands: !<card> plays a card (e.g. !10C), 'cards' lists your hand, 'tricks' lists the tricks you took."


class KierkiClient:
    """One client connection; ``run`` returns the exit code."""

    def __init__(self, opts: ClientOptions, out: TextIO | None = None) -> None:
        self.opts = opts
        self.out = out if out is not None else sys.stdout
        self.state = ClientState(opts.seat)
        self.writer: asyncio.StreamWriter | None = None
        self.local = self.peer = "?"
        self.tried: CardSet = 0
        self.last_sent: Card | None = None
        self.in_flight = 0  # cards sent for this trick that the server has not answered with WRONG
        self.busy = False
        self.bot = make_bot(opts.bot)
        self.bot_rng = random.Random(f"kierki-client:{opts.seat}")

    # ------------------------------------------------------------------ output
    def _print(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def _send(self, msg: Message) -> None:
        if self.writer is None or self.writer.is_closing():
            return
        self.writer.write(encode(msg))
        if self.opts.auto:
            self._print(report_line(self.local, self.peer, datetime.now(), format_message(msg)))

    # ------------------------------------------------------------------ run
    async def run(self, commands: asyncio.Queue[str | None] | None = None) -> int:
        try:
            reader, writer = await asyncio.open_connection(self.opts.host, self.opts.port, family=self.opts.family)
        except (OSError, UnicodeError) as e:
            self._print(f"kierki-client: cannot connect to {self.opts.host} port {self.opts.port}: {e}")
            return 1
        self.writer = writer
        self.local = format_address(writer.get_extra_info("sockname"))
        self.peer = format_address(writer.get_extra_info("peername"))
        self._send(Iam(self.opts.seat))
        cmd_task = asyncio.create_task(self._commands(commands)) if commands is not None else None
        buffer = LineBuffer()
        try:
            while True:
                try:
                    data = await reader.read(65536)
                except (ConnectionError, OSError):
                    break
                if not data:
                    break
                for line in buffer.feed(data):
                    self._on_line(line)
        finally:
            if cmd_task is not None:
                cmd_task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await cmd_task
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
        ok = self.state.finished and self.state.deals_seen > 0 and not self.busy
        if not ok and not self.opts.auto:
            self._print("The server closed the connection before the game ended.")
        return 0 if ok else 1

    def _on_line(self, line: str | OverlongLine) -> None:
        if isinstance(line, OverlongLine):
            if self.opts.auto:
                self._print(
                    report_line(self.peer, self.local, datetime.now(), f"{line.head}... ({line.length}+ bytes)")
                )
            return
        if self.opts.auto:
            self._print(report_line(self.peer, self.local, datetime.now(), line))
        try:
            msg = parse_message(line)
        except CodecError:
            return  # the spec: the client ignores invalid messages from the server
        if isinstance(msg, Iam):
            return
        if isinstance(msg, Busy):
            self.busy = True
        if isinstance(msg, Trick) and msg.number != self.state.prompt:
            self.tried = 0
        self.state.on_message(msg)
        if self.opts.auto:
            self._auto(msg)
        else:
            text = describe(msg, self.state)
            if text is not None:
                self._print(text)

    # ------------------------------------------------------------------ automatic play
    def _auto(self, msg: Message) -> None:
        if isinstance(msg, (Taken, Deal)):
            self.in_flight = 0
        if isinstance(msg, Trick):
            # every TRICK is answered, a repeated one too: a server may have dropped a late answer
            self._choose_and_play()
        elif isinstance(msg, Wrong) and self.in_flight > 0:
            self.in_flight -= 1
            # a WRONG answers our oldest unanswered card; retry only when it was the last one sent
            # (an extra answer to a repeated TRICK draws a WRONG too, and must not start a cascade)
            if self.in_flight == 0 and self.state.prompt == msg.number and self.last_sent is not None:
                self.tried |= 1 << self.last_sent
                if self.state.hand & ~self.tried:
                    self._choose_and_play()

    def _choose_and_play(self) -> None:
        view = self.state.seat_view()
        if not view.hand:
            return  # asked to play with no cards left: the server is confused; nothing sensible to send
        try:
            c = choose_card(view, self.tried, self.bot, self.bot_rng)
        except Exception:  # a policy bug must not end the game for this seat: play the lowest card
            pool = view.legal_plays & ~self.tried or view.hand
            c = (pool & -pool).bit_length() - 1
        self._play(c)

    def _play(self, c: Card) -> None:
        self.last_sent = c
        self.in_flight += 1
        self._send(Trick(self.state.prompt or self.state.trick_no or 1, (c,)))

    # ------------------------------------------------------------------ interactive commands
    async def _commands(self, commands: asyncio.Queue[str | None]) -> None:
        while True:
            line = await commands.get()
            if line is None:
                return
            self.command(line)

    def command(self, line: str) -> None:
        text = line.strip()
        if not text:
            return
        if text == "cards":
            self._print(card_text(self.state.hand))
        elif text == "tricks":
            for t in self.state.my_tricks():
                self._print(card_text(t.cards))
        elif text.startswith("!"):
            try:
                c = parse_card(text[1:])
            except CardError:
                self._print(f"Not a card: {text[1:]!r}. {HELP}")
                return
            if not self.state.hand >> c & 1:
                self._print(f"You do not hold {format_cards([c])}; sending it anyway.")
            elif self.state.prompt is None:
                self._print("Nobody asked you to play yet; sending it anyway.")
            self._play(c)
        else:
            self._print(f"Unknown command {text!r}. {HELP}")


def _stdin_reader(loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[str | None], stream: TextIO) -> None:
    put: Callable[[str | None], None] = queue.put_nowait
    try:
        for line in stream:
            loop.call_soon_threadsafe(put, line)
    except (OSError, ValueError):
        pass
    with contextlib.suppress(RuntimeError):  # the loop may be gone already
        loop.call_soon_threadsafe(put, None)


async def run_client(opts: ClientOptions, stdin: TextIO | None = None, out: TextIO | None = None) -> int:
    client = KierkiClient(opts, out)
    queue: asyncio.Queue[str | None] | None = None
    if not opts.auto:
        queue = asyncio.Queue()
        loop = asyncio.get_running_loop()
        src = stdin if stdin is not None else sys.stdin
        threading.Thread(target=_stdin_reader, args=(loop, queue, src), daemon=True, name="stdin").start()
    return await client.run(queue)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        opts = parse_args(args)
    except HelpAsked:
        print(OPTIONS_HELP, flush=True)
        return 0
    except UsageError as e:
        print(f"kierki-client: {e}\n{USAGE}", flush=True)
        return 1
    try:
        return asyncio.run(run_client(opts))
    except KeyboardInterrupt:
        return 1


def entry() -> None:
    one_blas_thread()  # its bots' networks: small matrices (see moonshot.one_blas_thread)
    code = main()
    sys.stdout.flush()
    # the stdin thread may sit in a blocking read; leave without waiting for it
    os._exit(code)


if __name__ == "__main__":
    entry()
