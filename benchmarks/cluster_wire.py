"""Benchmark: the cost of one message between cluster nodes, the checked JSON schema
(``moonshot.cluster.messages``) against the anchor, a pickle read by an allow-list unpickler (what the
nodes exchanged before).

Messages are taken from real games (the events of each decision of random ``standard`` games,
as a seat's ``seat.events`` message, and the decision requests as ``seat.request``). The anchor
pickles the same fields as a dict. For each format it prints
µs per message to encode, to decode, and the bytes per message, CPU time (``process_time``),
interleaved rounds, best of the rounds:

    python benchmarks/cluster_wire.py [--games 20] [--rounds 5]
"""

from __future__ import annotations

import argparse
import io
import os
import pickle
import time
from collections.abc import Callable
from dataclasses import fields
from typing import Any, cast

from moonshot.cluster import messages as wire
from moonshot.core.actions import action_from_dict
from moonshot.core.engine import Game
from moonshot.core.variants import find_variant
from moonshot.play.sim import play_game
from moonshot.runtime.table import TableEvent

_SAFE = frozenset({"moonshot.core.events", "moonshot.runtime.table", "moonshot.core.engine", "moonshot.core.rules"})


class _AllowList(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if module in _SAFE:
            obj = super().find_class(module, name)
            if isinstance(obj, type):
                return obj
        raise pickle.UnpicklingError(f"refused: {module}.{name}")


def pickle_encode(msg: wire.Message) -> bytes:
    plain = {"kind": msg.kind, **{f.name: getattr(msg, f.name) for f in fields(cast(Any, msg))}}
    return pickle.dumps(plain, protocol=pickle.HIGHEST_PROTOCOL)


def pickle_decode(data: bytes) -> str:
    msg = _AllowList(io.BytesIO(data)).load()
    assert isinstance(msg, dict)
    return str(msg["kind"])


def wire_decode(data: bytes) -> str:
    return wire.decode(data).kind


def messages(games: int) -> list[wire.Message]:
    rules = find_variant("standard")
    out: list[wire.Message] = []
    for seed in range(games):
        rec = play_game(rules, seed, ("random",) * 4)
        g = Game(rules, seed)
        seen = 0
        for a in rec.actions:
            g.apply(action_from_dict(a))
            evs = [TableEvent(i + 1, e) for i, e in enumerate(g.log[seen:], start=seen)]
            seen = len(g.log)
            view = [TableEvent(te.version, r) for te in evs if (r := te.event.for_viewer(0)) is not None]
            out.append(wire.Events(table="0123456789abcdef", binding="fedcba9876543210", events=view, state=None))
            if not g.over:
                seat, phase = g.to_act()[0], g.phase
                out.append(
                    wire.Request(
                        table="0123456789abcdef",
                        binding="fedcba9876543210",
                        chair=seat,
                        request=seen,
                        version=g.version,
                        phase=phase,
                        legal=0xFFFF,
                        hand=g.hands[seat],
                        trick=g.trick_no,
                        trick_cards=tuple(g.trick_cards),
                        state=None,
                    )
                )
    return out


def timed(fn: Callable[[Any], Any], items: list[Any]) -> float:
    start = time.process_time()
    for x in items:
        fn(x)
    return (time.process_time() - start) / len(items) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    msgs = messages(args.games)
    formats = {
        "pickle + allow-list (anchor)": (pickle_encode, pickle_decode),
        # to bytes, as the message goes into Redis: what the anchor's pickle gives and is measured at
        "JSON schema (messages)": (lambda m: wire.encode(m).encode(), wire_decode),
    }
    best: dict[str, list[float]] = {name: [1e9, 1e9, 0.0] for name in formats}
    for _ in range(args.rounds):
        for name, (enc, dec) in formats.items():
            data = [enc(m) for m in msgs]
            assert all(dec(d) == m.kind for d, m in zip(data, msgs))
            b = best[name]
            b[0] = min(b[0], timed(enc, msgs))
            b[1] = min(b[1], timed(dec, data))
            b[2] = sum(len(d) for d in data) / len(data)
    print(f"{len(msgs)} messages from {args.games} games; load average {os.getloadavg()[0]:.1f}")
    print(f"{'format':<30} {'encode µs':>10} {'decode µs':>10} {'bytes':>8}")
    for name, (e, d, size) in best.items():
        print(f"{name:<30} {e:>10.1f} {d:>10.1f} {size:>8.0f}")


if __name__ == "__main__":
    main()
