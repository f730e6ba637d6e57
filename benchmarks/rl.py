"""RL throughput: moonshot's environments against OpenSpiel's hearts, in one run, on one core.

    python benchmarks/rl.py [--seconds 2] [--rounds 3] [--batch 8192] [--no-jit-cost]

Rows (each the best of ``--rounds`` interleaved rounds, so a busy machine hurts both sides alike):

* env steps/s — moonshot ``HeartsEnv`` (standard, random opponents, random legal actions from the
  mask; one step = one learner decision, with the bots' moves, observation and mask), the AEC env
  (one step = one seat's decision), the batched ``HeartsVectorEnv`` (steps x games; its loops
  compiled by numba and the same loops as plain Python, the same results either way), and OpenSpiel's
  hearts through its Python API: random legal actions only, and with the information-state tensor an
  RL step needs (OpenSpiel's hearts has no observation tensor).
* full deals/s — ``BatchedHearts.play_random_deals`` (four random seats, passing included; numba
  and plain Python) against ``pyspiel.evaluate_bots`` with four uniform random bots (the C++ loop;
  chance nodes included).
* numba's first-call cost: a fresh process imports the kernels and makes one call each, once with an
  empty cache directory (compiling) and once more with that cache (``cache=True``: later runs).

The numba rows need numba (the ``rl`` extra: ``pip install -e '.[rl]'``); without numba they are skipped.
Targets: single env >= OpenSpiel through Python; batched deals/s >= 10x OpenSpiel's C++ loop.
Rates are per CPU second of this one process (``time.process_time``; OMP/BLAS threads set to 1 and
numba's kernels are single-threaded, so that is one core), which a busy machine disturbs less than
wall time; the first-call costs are wall time.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import moonshot

moonshot.one_blas_thread()  # as the moonshot command does, before NumPy loads (small matrices)

import numpy as np

from moonshot.rl.aec import raw_env
from moonshot.rl.env import HeartsEnv
from moonshot.rl.vector import HAVE_NUMBA, BatchedHearts, HeartsVectorEnv


def rate(work: Callable[[], int], seconds: float) -> float:
    """Units of work per CPU second of this process: ``work`` returns how many units one call did."""
    done = 0
    start = time.process_time()
    while True:
        done += work()
        elapsed = time.process_time() - start
        if elapsed >= seconds:
            return done / elapsed


def single_env() -> Callable[[], int]:
    env = HeartsEnv(variant="standard", opponents="random")
    rng = random.Random(0)  # the same cheap choice as the OpenSpiel loop's
    state = {"obs": env.reset(seed=0)[0]}

    def work() -> int:
        obs = state["obs"]
        for _ in range(200):
            legal = np.flatnonzero(obs["action_mask"])
            obs, _, done, _, _ = env.step(int(legal[rng.randrange(len(legal))]))
            if done:
                obs, _ = env.reset()
        state["obs"] = obs
        return 200

    return work


def aec() -> Callable[[], int]:
    env = raw_env(variant="standard")
    env.reset(seed=0)
    rng = random.Random(0)

    def work() -> int:
        for _ in range(200):
            if all(env.terminations.values()):
                env.reset()
            legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
            env.step(int(legal[rng.randrange(len(legal))]))
        return 200

    return work


def vector_env(n: int, backend: str) -> Callable[[], int]:
    env = HeartsVectorEnv(num_envs=n, backend=backend)
    rng = np.random.default_rng(0)
    state = {"obs": env.reset(seed=0)[0]}

    def work() -> int:
        obs = state["obs"]
        for _ in range(20):
            mask = obs["action_mask"]
            actions = np.argmax(rng.random(mask.shape) * mask, axis=1)
            obs, *_ = env.step(actions)
        state["obs"] = obs
        return 20 * n

    return work


def batched_deals(n: int, backend: str) -> Callable[[], int]:
    core = BatchedHearts(n, backend=backend)
    rng = np.random.default_rng(0)

    def work() -> int:
        core.play_random_deals(rng, n)
        return n

    return work


def openspiel_python(with_obs: bool) -> Callable[[], int]:
    import pyspiel

    game = pyspiel.load_game("hearts")
    rng = random.Random(0)

    def work() -> int:
        steps = 0
        for _ in range(5):
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes, probs = zip(*state.chance_outcomes())
                    state.apply_action(rng.choices(outcomes, probs)[0])
                else:
                    if with_obs:
                        state.information_state_tensor()
                    state.apply_action(rng.choice(state.legal_actions()))
                    steps += 1
        return steps

    return work


def openspiel_cpp() -> Callable[[], int]:
    import pyspiel

    game = pyspiel.load_game("hearts")
    bots = [pyspiel.make_uniform_random_bot(p, 1000 + p) for p in range(4)]
    counter = {"seed": 0}

    def work() -> int:
        for _ in range(50):
            counter["seed"] += 1
            pyspiel.evaluate_bots(game.new_initial_state(), bots, counter["seed"])
        return 50

    return work


_FIRST_CALL = """
import time
t0 = time.perf_counter()
import numpy as np
from moonshot.rl.vector import BatchedHearts, HeartsVectorEnv
t1 = time.perf_counter()
BatchedHearts(64, backend="numba").play_random_deals(np.random.default_rng(0), 64)
t2 = time.perf_counter()
env = HeartsVectorEnv(num_envs=8, backend="numba")
obs, _ = env.reset(seed=0)
env.step(np.argmax(obs["action_mask"], axis=1))
t3 = time.perf_counter()
print(f"{t1 - t0:.2f} {t2 - t1:.2f} {t3 - t2:.2f}")
"""


def jit_cost() -> None:
    """numba's first calls in fresh processes: with an empty cache directory, then with that cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        for label in ("cold (compiles, empty cache)", "warm (from the on-disk cache)"):
            out = subprocess.run(
                [sys.executable, "-c", _FIRST_CALL], env=env, capture_output=True, text=True, check=True
            ).stdout.split()
            imp, deals, step = (float(x) for x in out)
            print(
                f"  {label:<30} import {imp:5.2f} s, first play_random_deals {deals:6.2f} s,"
                f" first env step {step:6.2f} s"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0, help="CPU seconds of one measurement")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (best one counts)")
    parser.add_argument("--batch", type=int, default=8192, help="games per batch for the batched simulator")
    parser.add_argument("--vector-envs", type=int, default=1024, help="sub-environments of the vector env")
    parser.add_argument("--no-jit-cost", action="store_true", help="skip measuring numba's first-call cost")
    args = parser.parse_args()
    if not HAVE_NUMBA:
        print("(numba is not installed: pip install -e '.[rl]'; the numba rows are skipped)")
    try:
        import pyspiel  # noqa: F401

        have_openspiel = True
    except ImportError:
        have_openspiel = False
        print("(OpenSpiel is not installed: pip install open-spiel; its rows are skipped)")

    backends = ("numba", "python") if HAVE_NUMBA else ("python",)
    label = {"numba": "numba", "python": "plain Python"}  # (backend="python": the loops uncompiled)
    rows: dict[str, Callable[[], int]] = {
        "moonshot HeartsEnv (single)": single_env(),
        "moonshot AEC env (per seat decision)": aec(),
    }
    for b in backends:
        rows[f"moonshot HeartsVectorEnv x{args.vector_envs}, {label[b]}"] = vector_env(args.vector_envs, b)
    for b in backends:
        rows[f"moonshot BatchedHearts x{args.batch}, {label[b]} (deals)"] = batched_deals(args.batch, b)
    if have_openspiel:
        rows["OpenSpiel hearts, Python, random actions"] = openspiel_python(False)
        rows["OpenSpiel hearts, Python, + info-state tensor"] = openspiel_python(True)
        rows["OpenSpiel evaluate_bots C++ (deals)"] = openspiel_cpp()
    best = dict.fromkeys(rows, 0.0)
    for r in range(args.rounds):
        for name, work in rows.items():
            best[name] = max(best[name], rate(work, args.seconds))
        print(f"round {r + 1}/{args.rounds} done", flush=True)

    print()
    print("load average at the end: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"{'measurement':<52} {'per second':>14}")
    print("-" * 67)
    for name, value in best.items():
        unit = "deals" if "(deals)" in name else "steps"
        print(f"{name:<52} {value:>14,.0f} {unit}")
    if HAVE_NUMBA and not args.no_jit_cost:
        print()
        print("numba first call (fresh processes)")
        jit_cost()
    if not have_openspiel:
        return
    single = best["moonshot HeartsEnv (single)"]
    os_raw = best["OpenSpiel hearts, Python, random actions"]
    os_obs = best["OpenSpiel hearts, Python, + info-state tensor"]
    cpp = best["OpenSpiel evaluate_bots C++ (deals)"]
    print()
    print("ratios")
    print(f"  single env / OpenSpiel Python (with info state):   {single / os_obs:6.2f}x  (target >= 1)")
    print(f"  single env / OpenSpiel Python (actions only):      {single / os_raw:6.2f}x")
    for b in backends:
        deals = best[f"moonshot BatchedHearts x{args.batch}, {label[b]} (deals)"]
        verdict = "met" if deals / cpp >= 10 else "NOT met"
        print(f"  batched deals ({label[b]}) / OpenSpiel C++: {deals / cpp:6.2f}x  (target >= 10: {verdict})")
    if HAVE_NUMBA:
        v = f"moonshot HeartsVectorEnv x{args.vector_envs}"
        ratio = best[v + ", numba"] / best[v + ", plain Python"]
        print(f"  HeartsVectorEnv steps, numba / plain Python:       {ratio:6.2f}x")


if __name__ == "__main__":
    main()
