"""SSE fan-out: :class:`GameStream`, one game's Turbo event stream. It watches the table as a
spectator, translates the unredacted events once
(:class:`~moonshot.protocols.turbo.codec.TurboTranslator`) and fans them out to every SSE
subscriber redacted for that subscriber's seat. Game chat goes into the same stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

from moonshot.core.events import SPECTATOR
from moonshot.http.names import (
    same_name,
)
from moonshot.protocols.turbo.codec import (
    Message,
    TranslationError,
    TurboTranslator,
)
from moonshot.runtime.clock import Countdown
from moonshot.runtime.table import (
    Table,
    TableEvent,
    TableNotice,
)

log = logging.getLogger("moonshot.turbo")

PING_SECONDS = 15  # SSE keep-alive comments, so proxies and browsers keep idle streams open


CLOSE_AFTER_COMPLETE = 1.0  # seconds a stream stays open after game_complete


# ---------------------------------------------------------------- streams
class Subscriber:
    """One open SSE stream: messages waiting to be sent, as this viewer sees them."""

    __slots__ = ("name", "queue", "seat")

    def __init__(self, name: str, seat: int | None) -> None:
        self.name = name
        # a chair 0-3; SPECTATOR: not seated (only what is public); None: everything (a
        # finished game, an open-hands table, a server run with --open-spectators)
        self.seat = seat
        self.queue: asyncio.Queue[Message | None] = asyncio.Queue()


class GameStream:
    """One game's Turbo stream: the translated events and chat, and their subscribers."""

    def __init__(self, game_id: str) -> None:
        self.game_id = game_id
        self.translator: TurboTranslator | None = None
        self.messages: list[Message] = []
        self.subscribers: set[Subscriber] = set()
        self.complete = False
        self.closed = False
        # spectators see every hand live: an unrated open-hands table, or --open-spectators
        self.open = False
        # True: the hands stay hidden from spectators after the game too (a tournament's game)
        self.sealed = False
        self.chat_log: list[dict[str, Any]] = []  # {"name","message","version","sub"}: persisted
        self.countdown: Countdown | None = None  # the table's clocks, as last told (on_clock)

    def start(self, translator: TurboTranslator) -> None:
        """The game has its chairs: seat whoever subscribed while it was open, by name, so a
        player who was watching early gets the redacted stream from the first deal on."""
        self.translator = translator
        for sub in self.subscribers:
            sub.seat = self.viewer_of(sub.name)

    def viewer_of(self, name: str) -> int | None:
        """How ``name`` sees the stream: its chair, else a spectator's view, which is the whole
        game once it is over (or on an open table)."""
        seat = self.seat_of(name)
        if seat is not None:
            return seat
        return None if self.open or (self.complete and not self.sealed) else SPECTATOR

    def seat_of(self, name: str) -> int | None:
        """The chair of the person called ``name`` (None: not seated, or not started)."""
        if self.translator is None:
            return None
        for s, p in enumerate(self.translator.players):
            if p.kind == "human" and same_name(p.name, name):
                return s
        return None

    @property
    def version(self) -> int:
        return self.translator.next_version - 1 if self.translator is not None else 0

    # Spectator protocol: the table calls this in its own task
    def on_events(self, table: Table, events: Sequence[TableEvent]) -> None:
        if self.translator is None or self.closed:
            return
        try:
            new = self.translator.feed((te.version, te.event) for te in events)
        except TranslationError:
            # the game goes on; its streams end, and a new subscription says why in the log
            log.exception("event=stream_failed game=%s", self.game_id)
            self.close()
            return
        self._publish(new)

    def on_clock(self, table: Table, countdown: Countdown) -> None:
        """The table's clocks changed: every live subscriber is told the remaining seconds now
        (a ``clock`` message outside the stored stream: no id, never replayed as it was)."""
        self.countdown = countdown
        if self.closed or self.complete or not self.messages:
            return  # a clock before the game's first event waits for it: a stream opens with `sit`
        self._tell_countdown()

    def _tell_countdown(self) -> None:
        assert self.countdown is not None
        frame = LiveMessage(self.countdown.to_json(asyncio.get_running_loop().time()))
        for sub in self.subscribers:
            sub.queue.put_nowait(frame)

    def on_notice(self, table: Table, notice: TableNotice) -> None:
        """A table pause or resume: a chat line from the server in the game's stream (not stored)."""
        if not self.closed:
            self._publish([self.add_chat("moonshot", notice.text, keep=False)])

    def _merge(self, msgs: Sequence[Message]) -> None:
        """Put restored messages and chat in stream order (chat was stored with its position)."""
        self.messages.extend(msgs)
        self.messages.sort(key=lambda m: m.position)
        if any(m.data["type"] == "game_complete" for m in msgs):
            self.complete = True

    def _publish(self, new: Sequence[Message]) -> None:
        if not new:
            return
        first = not self.messages
        if self.messages and new[0].position < self.messages[-1].position:
            self._merge(new)  # a restored game's replay, around its stored chat
        else:
            self.messages.extend(new)
        for sub in self.subscribers:
            for m in new:
                sub.queue.put_nowait(m)
        if first and self.countdown is not None and not self.complete:
            self._tell_countdown()  # the clocks told before the game's first event, now after it
        if not self.complete and any(m.data["type"] == "game_complete" for m in new):
            self.complete = True
            asyncio.get_running_loop().call_later(CLOSE_AFTER_COMPLETE, self.close)

    def add_chat(self, name: str, message: str, position: tuple[int, int] | None = None, keep: bool = True) -> Message:
        """A chat message at ``position`` (default: after the last message); ``keep=False``: a
        server notice, not kept in the game's stored chat."""
        if position is None:
            version = self.version
            last = self.messages[-1] if self.messages else None
            sub = last.sub + 1 if last is not None and last.version == version else 0
            if version == 0 and last is None:
                sub = 1  # "0" itself is never an id: a fresh stream starts after it
            position = (version, sub)
        m = Message(position[0], position[1], {"type": "chat", "name": name, "message": message})
        if keep:
            self.chat_log.append({"name": name, "message": message, "version": m.version, "sub": m.sub})
        return m

    def chat(self, name: str, message: str) -> Message:
        m = self.add_chat(name, message)
        self._publish([m])
        return m

    def restore_chat(self, entries: Sequence[dict[str, Any]]) -> None:
        """Chat kept in the store, each back at its stream position."""
        restored = []
        for c in entries:
            with contextlib.suppress(KeyError, TypeError, ValueError):
                position = (int(c["version"]), int(c["sub"]))
                restored.append(self.add_chat(str(c["name"]), str(c["message"]), position))
        self._merge(restored)

    def subscribe(self, name: str, after: tuple[int, int] | None) -> Subscriber:
        sub = Subscriber(name, self.viewer_of(name))
        for m in self.messages:
            if after is None or m.position > after:
                sub.queue.put_nowait(m)
        sub.queue.put_nowait(None if self.closed else _END_REPLAY)
        if self.closed:
            return sub
        if self.countdown is not None and self.messages and not self.complete:  # the clocks now
            sub.queue.put_nowait(LiveMessage(self.countdown.to_json(asyncio.get_running_loop().time())))
        self.subscribers.add(sub)
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        self.subscribers.discard(sub)

    def close(self) -> None:
        """End every stream (the game is over, or the server stops)."""
        self.closed = True
        for sub in self.subscribers:
            sub.queue.put_nowait(None)
        self.subscribers.clear()


_END_REPLAY = Message(0, 0, {"type": "end_replay"})


class LiveMessage(Message):
    """A message for the subscribers of the moment, the same for every viewer, sent without an
    SSE id (so ``Last-Event-ID`` never moves to it) and never kept in the stream (a clock)."""

    __slots__ = ()

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(0, 0, data)

    def sse_frame(self, seat: int | None) -> bytes | None:
        return b"data: " + json.dumps(self.data, separators=(",", ":")).encode() + b"\r\n\r\n"


END_REPLAY_FRAME = b'data: {"type":"end_replay"}\r\n\r\n'  # no id: it does not move Last-Event-ID


async def stream_events(stream: GameStream, sub: Subscriber) -> AsyncIterator[bytes]:
    """A subscriber's SSE body. Whatever is queued when the stream wakes goes out as one write
    (a replay, or a play with its play_status), each frame encoded once for all its viewers."""
    replaying = True
    try:
        while True:
            item = await sub.queue.get()
            parts: list[bytes] = []
            while True:
                if item is None:
                    if replaying:
                        parts.append(END_REPLAY_FRAME)
                    if parts:
                        yield b"".join(parts)
                    return
                if item is _END_REPLAY:
                    replaying = False
                    parts.append(END_REPLAY_FRAME)
                else:
                    frame = item.sse_frame(sub.seat)
                    if frame is not None:
                        parts.append(frame)
                if sub.queue.empty():
                    break
                item = sub.queue.get_nowait()
            if parts:
                yield b"".join(parts)
    finally:
        stream.unsubscribe(sub)


__all__ = ["CLOSE_AFTER_COMPLETE", "END_REPLAY_FRAME", "PING_SECONDS", "GameStream", "Subscriber", "stream_events"]
