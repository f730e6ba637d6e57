"""Fast generators for protocol fuzz tests (not a test module).

Hypothesis drives each fuzz test (it draws a seed and a batch size per example, so a failure is
reproducible and reported), and these plain ``random.Random`` generators turn the seed into a
batch of hundreds of messages: far faster than drawing every byte through Hypothesis, which is
what lets ``make fuzz`` send 100,000 messages per codec in minutes.

* :func:`json_value`: a value of every JSON type: null, booleans, integers from 0 to far past
  2**63, floats, strings (odd Unicode digits, ``"--5"``, 400 digits, card-like, control bytes),
  lists and objects, nested up to a depth.
* :func:`mutate`: a valid message's bytes with some bytes flipped to structural characters, cut,
  repeated, inserted (random bytes, braces, quotes, half a UTF-8 sequence) or spliced with others.
"""

from __future__ import annotations

import random
from typing import Any

ODD_STRINGS = ["--5", "²", "٣", "５", "+-1", "0x1f", "1e9", "", " ", "NaN", "-", "9" * 400, "\x00", "\x1b[2J", "\ud7ff"]
STRUCTURAL = b'{}[]":,\\ \x00\xff0123456789-e.\r\n'


def json_value(rng: random.Random, depth: int = 3, extra: list[Any] | None = None) -> Any:
    roll = rng.random()
    if depth > 0 and roll < 0.12:
        return [json_value(rng, depth - 1, extra) for _ in range(rng.randrange(4))]
    if depth > 0 and roll < 0.2:
        return {rng.choice(["a", "type", "", "é"]): json_value(rng, depth - 1, extra) for _ in range(rng.randrange(3))}
    kind = rng.randrange(9)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.choice([0, 1, -1, 2**31, 2**53 + 1, 2**63 - 1, 2**63, -(2**63) - 1, 10**30, rng.randrange(500)])
    if kind == 3:
        return rng.choice([0.5, -1.0, 1e300, 5.0, 1e-9])
    if kind == 4:
        return rng.choice(ODD_STRINGS)
    if kind == 5:
        return "".join(chr(rng.randrange(32, 0x2FF)) for _ in range(rng.randrange(12)))
    if extra and kind >= 6:
        return rng.choice(extra)
    return rng.randrange(1000)


def mutate(rng: random.Random, data: bytes, others: list[bytes] = ()) -> bytes:  # type: ignore[assignment]
    """``data`` with one to four byte-level mutations."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(buf) + 1)
        op = rng.randrange(5)
        if op == 0 and buf:
            buf[min(i, len(buf) - 1)] = rng.choice(STRUCTURAL)
        elif op == 1:
            del buf[i : i + rng.randint(1, 20)]
        elif op == 2:
            buf[i:i] = rng.choice(
                [bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))), b"{", b"}", b'"', b"\\", b"{{{{", b"\xc3"]
            )
        elif op == 3:
            buf[i:i] = buf[i : i + rng.randint(1, 30)]
        elif others:
            buf[i:i] = rng.choice(others)
    return bytes(buf)


__all__ = ["ODD_STRINGS", "json_value", "mutate"]
