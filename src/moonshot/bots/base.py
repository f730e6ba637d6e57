"""The bot interface: a pure policy from a seat's view (and a seeded RNG) to an action."""

from __future__ import annotations

import random
from typing import Protocol, runtime_checkable

from moonshot.actions import Action
from moonshot.views import SeatView


@runtime_checkable
class Bot(Protocol):
    """A policy. ``act`` must return one of ``view.legal``; it may keep no hidden global state."""

    name: str

    def act(self, view: SeatView, rng: random.Random) -> Action: ...
