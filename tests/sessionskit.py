"""Not a test module: Sessions players the tests of a running server share.

``from sessionskit import Slow`` works from any test because pytest puts ``tests/`` on the path.
"""

from __future__ import annotations

import asyncio

from moonshot.protocols.sessions.client import RandomPlayer, View


class Slow(RandomPlayer):
    """Random cards at a human-ish pace (``delay`` seconds before each card), so that a game is
    still under way when the test acts on the server (kills it, drains it, bans a player)."""

    def __init__(self, delay: float = 0.01) -> None:
        super().__init__()
        self.delay = delay

    async def play(self, view: View) -> str:  # type: ignore[override]
        await asyncio.sleep(self.delay)
        card = super().play(view)
        assert card is not None
        return card
