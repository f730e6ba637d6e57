"""Full deals per second: moonshot's engine and the paths people run vs OpenSpiel's Hearts, in one run.

Every contender plays complete single deals (pass direction drawn uniformly from none, left,
across and right as OpenSpiel's chance node does, 3-card passes, 13 tricks, scoring) with uniform
random choices under the same rules (standard: hearts must be broken, the QS does not break them,
no points on the first trick):

* moonshot: ``Game`` + ``legal_play_mask`` / ``apply`` driven from Python;
* OpenSpiel from Python: ``state.apply_action`` in a Python loop, chance outcomes drawn with
  ``random`` too;
* OpenSpiel from C++: ``pyspiel.evaluate_bots`` with uniform random bots (the whole deal in C++).

The paths people run, measured in the same rounds:

* ``sim.play_game`` with four ``random`` and with four ``heuristic`` bots (views, bots, records);
* the ``moonshot simulate`` command as a subprocess, start-up included, for a ``--cli-games`` run:
  four random bots quiet, the same with the progress bar, statistics and ``--export`` (their cost),
  four heuristic bots, and ``--workers 2`` (wall clock and CPU time);
* the arena: ``search --simulations 50`` against ``heuristic``, every seating of a deal.

Rates are deals per CPU second (the subprocesses' CPU time included, workers too); the
``--workers 2`` row also gives deals per wall second. Measurements are interleaved in rounds so a
machine whose load changes during the run treats every contender alike, and each round gives
its own ratio to OpenSpiel from Python. The table says whether moonshot ran compiled (mypyc) or
as pure Python.

    python benchmarks/engine.py [--seconds 6] [--deals 200] [--rounds 6] [--cli-games 300] [--engine-only]
"""

from __future__ import annotations

import argparse
import compileall
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import moonshot
from moonshot.core.actions import Pass, Play
from moonshot.core.cards import card_list
from moonshot.core.engine import Game, Phase
from moonshot.core.rules import EndRule, PassDirection, Rules

try:
    import pyspiel
except ImportError:  # OpenSpiel is a dev dependency; without it only moonshot is measured
    pyspiel = None

TARGET = 1.5  # the target: moonshot's engine at least 1.5x OpenSpiel driven from Python
OPENSPIEL_PARAMS = {"must_break_hearts": True, "qs_breaks_hearts": False, "no_pts_on_first_trick": True}
DIRECTIONS = (PassDirection.HOLD, PassDirection.LEFT, PassDirection.ACROSS, PassDirection.RIGHT)


def moonshot_deals(n: int, rng: random.Random, record: bool = True) -> int:
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
    return n


def moonshot_unrecorded_deals(n: int, rng: random.Random) -> int:
    """The same, with no event log (``Game(record=False)``): how self-play and search run."""
    return moonshot_deals(n, rng, record=False)


def openspiel_python_deals(n: int, rng: random.Random) -> int:
    """Play ``n`` random deals with OpenSpiel, one ``apply_action`` call per step from Python."""
    game = pyspiel.load_game("hearts", OPENSPIEL_PARAMS)
    choice = rng.choice
    for _ in range(n):
        st = game.new_initial_state()
        while not st.is_terminal():
            # chance outcomes are uniform here (pass direction, then each dealt card)
            st.apply_action(choice(st.legal_actions()))
        st.returns()
    return n


def openspiel_cpp_deals(n: int, rng: random.Random) -> int:
    """Play ``n`` random deals with OpenSpiel's uniform random bots, each deal in C++."""
    game = pyspiel.load_game("hearts", OPENSPIEL_PARAMS)
    bots = [pyspiel.make_uniform_random_bot(p, rng.randrange(1 << 30)) for p in range(4)]
    evaluate = pyspiel.evaluate_bots
    for _ in range(n):
        evaluate(game.new_initial_state(), bots, rng.randrange(1 << 30))
    return n


# ----------------------------------------------------------------------------- product paths
def play_game_deals(seats: str) -> Callable[[int, random.Random], int]:
    """``sim.play_game`` (standard, to 100 points) with ``seats`` until ``n`` deals are played."""
    from moonshot.core.variants import find_variant
    from moonshot.play.sim import play_game

    rules = find_variant("standard")
    names = seats.split(",")

    def run(n: int, rng: random.Random) -> int:
        played = 0
        while played < n:
            played += play_game(rules, rng.randrange(1 << 30), names).deals
        return played

    return run


def cli_deals(games: int, *args: str) -> Callable[[int, random.Random], int]:
    """``moonshot simulate`` as a subprocess (start-up included): ``games`` games, whatever ``n``."""

    def run(n: int, rng: random.Random) -> int:
        with tempfile.TemporaryDirectory() as tmp:
            argv = [*args]
            if "--export" in argv:
                argv[argv.index("--export") + 1] = os.path.join(tmp, "games.jsonl")
            code = "from moonshot.cli.main import main; main()"
            cmd = [sys.executable, "-c", code, "simulate", "-n", str(games), "-s", str(rng.randrange(1 << 20)), *argv]
            # the progress bar draws as on a terminal (to a pipe nobody reads but us)
            env = {**os.environ, "TTY_INTERACTIVE": "1", "FORCE_COLOR": "1", "COLUMNS": "120"}
            out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
        m = re.search(r"(\d+) games, (\d+) deals", out)
        if m is None:
            raise RuntimeError(f"no summary in the output of {' '.join(cmd)}:\n{out}")
        return int(m.group(2))

    return run


def arena_deals(simulations: int) -> Callable[[int, random.Random], int]:
    """Arena deals (each in all four seatings: 4 deals played) of ``search`` against ``heuristic``."""
    from moonshot.play.arena import ArenaConfig, play_deal

    def run(n: int, rng: random.Random) -> int:
        config = ArenaConfig(
            candidate="search", field="heuristic", simulations=simulations, seed=rng.randrange(1 << 20)
        )
        for i in range(n):
            play_deal(config, i)
        return 4 * n

    return run


def cpu_clock() -> float:
    """CPU seconds of this process and of its finished children (and theirs: pool workers)."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def engine_mode() -> str:
    compiled = moonshot.compiled_modules()
    if not compiled:
        return "pure Python"
    return "compiled with mypyc: " + ", ".join(sorted(m.rsplit(".", 1)[-1] for m in compiled))


def measure(
    contenders: dict[str, tuple[Callable[[int, random.Random], int], int]], seconds: float, rounds: int
) -> tuple[dict[str, float], dict[str, list[float]], dict[str, float]]:
    """Deals per CPU second of each contender overall and in each round, and per wall second.

    ``contenders``: name -> (run, batch): ``run(batch, rng)`` plays at least ``batch`` deals and
    says how many. A contender runs batches until its share of a round is spent (at least one).
    """
    played = dict.fromkeys(contenders, 0)
    spent = dict.fromkeys(contenders, 0.0)
    wall = dict.fromkeys(contenders, 0.0)
    per_round: dict[str, list[float]] = {name: [] for name in contenders}
    for run, batch in contenders.values():  # warm-up: imports, caches, first allocations
        if batch > 1:
            run(max(1, batch // 10), random.Random(0))
    for r in range(rounds):
        for name, (run, batch) in contenders.items():
            rng = random.Random(r)
            n = 0
            start, wall_start = cpu_clock(), time.perf_counter()
            while True:
                n += run(batch, rng)
                elapsed = cpu_clock() - start
                if elapsed >= seconds / rounds:
                    break
            played[name] += n
            spent[name] += elapsed
            wall[name] += time.perf_counter() - wall_start
            per_round[name].append(n / elapsed)
    rates = {name: played[name] / spent[name] for name in contenders}
    return rates, per_round, {name: played[name] / wall[name] for name in contenders}


# (row, anchor row, the least ratio to reach): the targets for the paths people run
TARGETS = [
    ("simulate CLI, 4 random (-q)", "OpenSpiel (Python loop)", 3.0),
    ("simulate CLI, 4 heuristic (-q)", "OpenSpiel (Python loop)", 1.5),
]


def _ratios(per_round: dict[str, list[float]], row: str, anchor: str) -> str:
    rs = sorted(a / b for a, b in zip(per_round[row], per_round[anchor], strict=True))
    return f"rounds {rs[0]:.2f}x to {rs[-1]:.2f}x, median {statistics.median(rs):.2f}x"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=6.0, help="seconds per measurement (all rounds together)")
    ap.add_argument("--deals", type=int, default=200, help="deals per timed batch")
    ap.add_argument("--rounds", type=int, default=6, help="interleaved rounds per measurement")
    ap.add_argument("--cli-games", type=int, default=300, help="games per `moonshot simulate` run")
    ap.add_argument("--arena-simulations", type=int, default=50, help="the search bot's playouts per decision")
    ap.add_argument("--engine-only", action="store_true", help="only the bare engine loops (the engine target's table)")
    args = ap.parse_args(argv)

    d = args.deals
    contenders: dict[str, tuple[Callable[[int, random.Random], int], int]] = {
        "moonshot (Python loop)": (moonshot_deals, d),
        "moonshot, no event log": (moonshot_unrecorded_deals, d),
    }
    if pyspiel is not None:
        contenders["OpenSpiel (Python loop)"] = (openspiel_python_deals, d)
        contenders["OpenSpiel (C++ evaluate_bots)"] = (openspiel_cpp_deals, d)
    if not args.engine_only:
        g = args.cli_games
        random4, heuristic4 = "random,random,random,random", "heuristic,heuristic,heuristic,heuristic"
        contenders["sim.play_game, 4 random"] = (play_game_deals(random4), d)
        contenders["sim.play_game, 4 heuristic"] = (play_game_deals(heuristic4), max(1, d // 4))
        contenders["simulate CLI, 4 random (-q)"] = (cli_deals(g, "--seats", random4, "-q"), 1)
        contenders["simulate CLI, 4 random, bar+stats+export"] = (cli_deals(g, "--seats", random4, "--export", "-"), 1)
        contenders["simulate CLI, 4 random, --workers 2"] = (cli_deals(g, "--seats", random4, "-q", "-j", "2"), 1)
        contenders["simulate CLI, 4 heuristic (-q)"] = (cli_deals(g, "--seats", heuristic4, "-q"), 1)
        contenders[f"arena, search --simulations {args.arena_simulations}"] = (
            arena_deals(args.arena_simulations),
            1,
        )
    if not args.engine_only:
        # The CLI rows start a fresh Python each run: read the package's modules from bytecode,
        # as an installed moonshot does (pip writes it; a first run writes it too), even where
        # PYTHONDONTWRITEBYTECODE is set, which would make every run compile the sources again.
        compileall.compile_dir(os.path.dirname(moonshot.__file__), quiet=1)
    rates, per_round, wall_rates = measure(contenders, args.seconds, args.rounds)

    ours = rates["moonshot (Python loop)"]
    print(f"moonshot engine: {engine_mode()}; Python {sys.version.split()[0]}; {os.cpu_count()} CPUs")
    print(
        f"full deals (passing included), {args.seconds:g} s per measurement in {args.rounds} rounds;"
        " deals per CPU second"
    )
    print()
    spiel = rates.get("OpenSpiel (Python loop)")
    fast = rates["moonshot, no event log"]
    print(f"{'engine / path':<42} {'deals/s':>10} {'÷ moonshot loop':>16} {'÷ OpenSpiel Python':>19}")
    print(f"{'-' * 42} {'-' * 10} {'-' * 16} {'-' * 19}")
    for name, rate in rates.items():
        vs_spiel = f"{rate / spiel:>18.2f}×" if spiel else f"{'':>19}"
        print(f"{name:<42} {rate:>10,.0f} {rate / ours:>15.2f}× {vs_spiel}")
    if pyspiel is None:
        print("\n(open-spiel is not installed: pip install -e '.[dev]' to compare)")
        return 0
    print(
        f"\nno-log engine loop vs OpenSpiel from C++: {fast / rates['OpenSpiel (C++ evaluate_bots)']:.2f}x;"
        f" engine loop vs OpenSpiel from Python: {ours / spiel:.2f}x"
        f" ({_ratios(per_round, 'moonshot (Python loop)', 'OpenSpiel (Python loop)')})"
    )
    overall = ours / spiel
    verdict = "met" if overall >= TARGET else "NOT met"
    print(f"target: engine loop >= {TARGET:g}x OpenSpiel driven from Python: {overall:.2f}x: {verdict}")
    if args.engine_only:
        return 0
    for row, anchor, want in TARGETS:
        got = rates[row] / rates[anchor]
        verdict = "met" if got >= want else "NOT met"
        print(f"target: {row} >= {want:g}x {anchor}: {got:.2f}x ({_ratios(per_round, row, anchor)}): {verdict}")
    quiet, full = "simulate CLI, 4 random (-q)", "simulate CLI, 4 random, bar+stats+export"
    cost = rates[quiet] / rates[full] - 1
    costs = sorted(100 * (q / f - 1) for q, f in zip(per_round[quiet], per_round[full], strict=True))
    print(
        f"target: progress bar + statistics + --export cost < 10% of a run: {100 * cost:.1f}%"
        f" (rounds {costs[0]:.1f}% to {costs[-1]:.1f}%): {'met' if cost < 0.10 else 'NOT met'}"
    )
    two = "simulate CLI, 4 random, --workers 2"
    wall_gain = wall_rates[two] / wall_rates[quiet]
    cpu_scaling = 2 * rates[two] / rates[quiet]
    print(
        f"target: --workers 2 >= 1.8x one worker (wall clock): {wall_gain:.2f}x: "
        f"{'met' if wall_gain >= 1.8 else 'NOT met'} (on {os.cpu_count()} CPUs shared with other jobs; by CPU time two"
        f" workers would give {cpu_scaling:.2f}x on two idle cores)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
