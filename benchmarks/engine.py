"""Random-play full deals per second: moonshot's engine vs OpenSpiel's Hearts, in one run.

Every contender plays complete single deals (pass direction drawn uniformly from none, left,
across and right as OpenSpiel's chance node does, 3-card passes, 13 tricks, scoring) with uniform
random choices under the same rules (standard: hearts must be broken, the QS does not break them,
no points on the first trick):

* moonshot: ``Game`` + ``legal_play_mask`` / ``apply`` driven from Python;
* OpenSpiel from Python: ``state.apply_action`` in a Python loop, chance outcomes drawn with
  ``random`` too;
* OpenSpiel from C++: ``pyspiel.evaluate_bots`` with uniform random bots (the whole deal in C++).

Measurements are interleaved in rounds so a machine whose load changes during the run treats
every contender alike. The table says whether moonshot ran compiled (mypyc) or as pure Python.

    python benchmarks/engine.py [--seconds 6] [--deals 200] [--rounds 6]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable

import moonshot
from moonshot.actions import Pass, Play
from moonshot.cards import card_list
from moonshot.engine import Game, Phase
from moonshot.rules import EndRule, PassDirection, Rules

try:
    import pyspiel
except ImportError:  # OpenSpiel is a dev dependency; without it only moonshot is measured
    pyspiel = None

TARGET = 1.5  # issue 2: moonshot's engine at least 1.5x OpenSpiel driven from Python
OPENSPIEL_PARAMS = {"must_break_hearts": True, "qs_breaks_hearts": False, "no_pts_on_first_trick": True}
DIRECTIONS = (PassDirection.HOLD, PassDirection.LEFT, PassDirection.ACROSS, PassDirection.RIGHT)


def moonshot_deals(n: int, rng: random.Random, record: bool = True) -> None:
    """Play ``n`` random deals with moonshot's engine (``record=False``: no event log)."""
    base = Rules(end=EndRule.DEALS, deals=1)
    rules_by_direction = [base.replace(pass_cycle=(d,)) for d in DIRECTIONS]
    random = rng.random
    play_of = Play.of
    PASS, PLAY = Phase.PASS, Phase.PLAY
    for _ in range(n):
        g = Game(rules_by_direction[int(random() * 4)], int(random() * 1e9), record=record)
        if g.phase is PASS:
            hands = g.hands
            for s in range(4):
                cards = card_list(hands[s])  # three distinct random cards of the 13
                a, b, c = cards.pop(int(random() * 13)), cards.pop(int(random() * 12)), cards[int(random() * 11)]
                g.apply(Pass(s, (1 << a) | (1 << b) | (1 << c)))
        legal_play_mask, apply = g.legal_play_mask, g.apply
        while g.phase is PLAY:
            s = g.turn
            cards = card_list(legal_play_mask(s))  # a uniform random legal card
            apply(play_of(s, cards[int(random() * len(cards))]))
        assert g.over


def moonshot_unrecorded_deals(n: int, rng: random.Random) -> None:
    """The same, with no event log (``Game(record=False)``): how self-play and search run."""
    moonshot_deals(n, rng, record=False)


def openspiel_python_deals(n: int, rng: random.Random) -> None:
    """Play ``n`` random deals with OpenSpiel, one ``apply_action`` call per step from Python."""
    game = pyspiel.load_game("hearts", OPENSPIEL_PARAMS)
    choice = rng.choice
    for _ in range(n):
        st = game.new_initial_state()
        while not st.is_terminal():
            # chance outcomes are uniform here (pass direction, then each dealt card)
            st.apply_action(choice(st.legal_actions()))
        st.returns()


def openspiel_cpp_deals(n: int, rng: random.Random) -> None:
    """Play ``n`` random deals with OpenSpiel's uniform random bots, each deal in C++."""
    game = pyspiel.load_game("hearts", OPENSPIEL_PARAMS)
    bots = [pyspiel.make_uniform_random_bot(p, rng.randrange(1 << 30)) for p in range(4)]
    evaluate = pyspiel.evaluate_bots
    for _ in range(n):
        evaluate(game.new_initial_state(), bots, rng.randrange(1 << 30))


def engine_mode() -> str:
    compiled = moonshot.compiled_modules()
    if not compiled:
        return "pure Python"
    return "compiled with mypyc: " + ", ".join(sorted(m.rsplit(".", 1)[-1] for m in compiled))


def measure(
    contenders: dict[str, Callable[[int, random.Random], None]], seconds: float, deals: int, rounds: int
) -> tuple[dict[str, float], dict[str, list[float]]]:
    """Deals per CPU second of each contender overall, and in each round."""
    played = dict.fromkeys(contenders, 0)
    spent = dict.fromkeys(contenders, 0.0)
    per_round: dict[str, list[float]] = {name: [] for name in contenders}
    for run in contenders.values():  # warm-up: imports, caches, first allocations
        run(max(1, deals // 10), random.Random(0))
    for r in range(rounds):
        for name, run in contenders.items():
            rng = random.Random(r)
            n = 0
            start = time.process_time()
            while True:
                run(deals, rng)
                n += deals
                elapsed = time.process_time() - start
                if elapsed >= seconds / rounds:
                    break
            played[name] += n
            spent[name] += elapsed
            per_round[name].append(n / elapsed)
    return {name: played[name] / spent[name] for name in contenders}, per_round


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=6.0, help="seconds per measurement (all rounds together)")
    ap.add_argument("--deals", type=int, default=200, help="deals per timed batch")
    ap.add_argument("--rounds", type=int, default=6, help="interleaved rounds per measurement")
    args = ap.parse_args(argv)

    contenders: dict[str, Callable[[int, random.Random], None]] = {
        "moonshot (Python loop)": moonshot_deals,
        "moonshot, no event log": moonshot_unrecorded_deals,
    }
    if pyspiel is not None:
        contenders["OpenSpiel (Python loop)"] = openspiel_python_deals
        contenders["OpenSpiel (C++ evaluate_bots)"] = openspiel_cpp_deals
    rates, per_round = measure(contenders, args.seconds, args.deals, args.rounds)

    ours = rates["moonshot (Python loop)"]
    print(f"moonshot engine: {engine_mode()}; Python {sys.version.split()[0]}")
    print(f"random-play full deals (passing included), {args.seconds:g} s per measurement in {args.rounds} rounds")
    print()
    fast = rates["moonshot, no event log"]
    print(f"{'engine':<32} {'deals/s':>10} {'moonshot ÷ this':>16} {'no-log moonshot ÷ this':>23}")
    print(f"{'-' * 32} {'-' * 10} {'-' * 16} {'-' * 23}")
    for name, rate in rates.items():
        print(f"{name:<32} {rate:>10,.0f} {ours / rate:>15.2f}× {fast / rate:>22.2f}×")
    if pyspiel is None:
        print("\n(open-spiel is not installed: pip install -e '.[dev]' to compare)")
        return 0
    # each round's ratio compares runs made seconds apart, so a machine whose load drifts
    # moves both sides of it alike
    ratios = sorted(
        m / o for m, o in zip(per_round["moonshot (Python loop)"], per_round["OpenSpiel (Python loop)"], strict=True)
    )
    overall = ours / rates["OpenSpiel (Python loop)"]
    verdict = "met" if overall >= TARGET else "NOT met"
    print(
        f"\ntarget: moonshot >= {TARGET:g}x OpenSpiel driven from Python: {overall:.2f}x overall"
        f" (rounds {ratios[0]:.2f}x to {ratios[-1]:.2f}x, median {statistics.median(ratios):.2f}x): {verdict}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
