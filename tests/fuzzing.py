"""How big the protocol fuzz tests are: one knob for every codec's fuzz test.

Each codec's fuzz test (marked ``fuzz``) feeds ``FUZZ_MESSAGES`` generated and mutated messages
through the protocol. ``make test`` runs a sample (5,000 per codec); ``make fuzz`` runs the full
100,000 by setting ``MOONSHOT_FUZZ_MESSAGES``.
"""

from __future__ import annotations

import os

FUZZ_MESSAGES = int(os.environ.get("MOONSHOT_FUZZ_MESSAGES", "5000"))

__all__ = ["FUZZ_MESSAGES"]
