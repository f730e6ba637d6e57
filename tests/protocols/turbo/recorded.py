"""Fixtures written from the reference Turbo server's recorded streams (../shared/wire-examples/turbo).

For each recording: how many events it has after ``sit``, and the SHA-256 of those events as
canonical JSON lines (keys sorted, no spaces; the reference's ``seed`` field left out, since
moonshot never shows a seed). A stream that differs from the reference in any field of any
event changes the digest. Where the recordings themselves are at hand (the shared folder beside
the repository), the tests also diff event by event, to say which field differs.

The recordings come from a later Turbo server than the seed. Where that server and the seed
differ, moonshot follows the seed, and :func:`as_later_reference` rewrites moonshot's stream into
the later server's shapes before the comparison (nothing else may differ):
- others' passes: the seed's ``send_pass`` / ``recv_pass`` with ``cards: []``, the later
  server's ``hidden_send_pass`` / ``hidden_recv_pass`` with a ``count``;
- the last ``charge_status`` of a charging round: the seed's all four ``*_done: true`` (nobody
  still needs to charge), the later server's all four ``false``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

RECORDINGS: dict[str, tuple[str, int | None, int, str]] = {
    # name: (charging order, viewer seat or None for the unredacted stream, events, digest)
    "sim-classic-all": ("classic", None, 605, "4fd4df73013ffccbdc7a373150ea80d63d1308a782838abb97c69c161398058b"),
    "sim-bridge-all": ("bridge", None, 609, "ce51259426eeef193f9cde8b9b8ba4970566bbf9c4151ee9b93a0e07f3cceb63"),
    "sim-chain-all": ("chain", None, 615, "e2b1830d6e9468f75bde8addbd311a7276194c22963f49447ee805ad283b7df3"),
    "sim-classic-north-view": ("classic", 0, 605, "d1a6f8fbfbb63b3ba059c8203082e9fb1c7db7f0c75846d416a05046365288e6"),
    "sim-blind-north-view": ("blind", 0, 609, "81ec0b3887a959ea9c594a4c05ed083228b7daafc0c7024882927036344d3105"),
}

SHARED = Path(__file__).resolve().parents[4] / "shared" / "wire-examples" / "turbo"


PASS_COUNT = 3
DONE = ("north_done", "east_done", "south_done", "west_done")


def as_later_reference(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """moonshot's (seed-shaped) stream in the shapes of the later server that was recorded."""
    out = []
    for e in events:
        t = e["type"]
        if t == "send_pass" and e["cards"] == []:
            e = {"type": "hidden_send_pass", "from": e["from"], "count": PASS_COUNT}
        elif t == "recv_pass" and e["cards"] == []:
            e = {"type": "hidden_recv_pass", "to": e["to"], "count": PASS_COUNT}
        elif t == "charge_status" and all(e[k] for k in DONE):
            e = {**e, **dict.fromkeys(DONE, False)}
        out.append(e)
    return out


def canonical(events: list[dict[str, Any]]) -> list[str]:
    out = []
    for e in events:
        if e["type"] == "sit":
            continue
        # moonshot's own fields the reference does not have: the deals' commitment and reveal
        e = {k: v for k, v in e.items() if k not in ("seed", "deal_commitment", "deal_reveal")}
        out.append(json.dumps(e, sort_keys=True, separators=(",", ":")))
    return out


def digest(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def reference(name: str) -> list[str] | None:
    """The recording itself, canonical, when the shared folder is there."""
    path = SHARED / f"{name}.jsonl"
    if not path.is_file():
        return None
    return canonical([json.loads(line) for line in path.read_text().splitlines() if line.strip()])
