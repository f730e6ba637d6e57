"""Train a small Hearts policy on the CPU in minutes, with NumPy only.

    python examples/train_policy.py                 # defaults: about two to four minutes
    python examples/train_policy.py --quick         # a smoke run (seconds)
    python examples/train_policy.py --save policy.npz

1. **Behaviour cloning**: record the heuristic bot's decisions (``moonshot.rl.datasets``; random if the
   heuristic bot is not installed) and fit a one-hidden-layer MLP to them (masked softmax,
   cross-entropy, Adam; the backward pass is written out by hand).
2. **Self-play policy gradient**: all four seats play the current policy in the batched simulator
   (``moonshot.rl.vector.BatchedHearts``, whole deals at once); REINFORCE on each decision with the
   points the seat takes from then to the end of the deal as the return (minus a batch baseline),
   and a little entropy.

Every stage prints the policy's average points per deal as seat 0 of ``HeartsEnv`` against three
random and three heuristic opponents (lower is better; a random player takes about 6.5).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from moonshot.rl.datasets import play_decisions
from moonshot.rl.env import HeartsEnv
from moonshot.rl.observation import N_ACTIONS, OBS_SIZE
from moonshot.rl.vector import _BIT, PASS, BatchedHearts, encode_batch

warnings.filterwarnings("ignore", message="moonshot.bots.heuristic is not available")
NEG = -1e9


class MLP:
    """``obs -> relu(W1) -> logits``; Adam; the gradients by hand."""

    def __init__(self, hidden: int, rng: np.random.Generator, lr: float = 1e-3) -> None:
        self.p = {
            "W1": (rng.standard_normal((OBS_SIZE, hidden)) * np.sqrt(2.0 / OBS_SIZE)).astype(np.float32),
            "b1": np.zeros(hidden, dtype=np.float32),
            "W2": (rng.standard_normal((hidden, N_ACTIONS)) * 0.01).astype(np.float32),
            "b2": np.zeros(N_ACTIONS, dtype=np.float32),
        }
        self.m = {k: np.zeros_like(v) for k, v in self.p.items()}
        self.v = {k: np.zeros_like(v) for k, v in self.p.items()}
        self.t = 0
        self.lr = lr

    def forward(self, x: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Hidden activations and masked action probabilities."""
        h = np.maximum(x @ self.p["W1"] + self.p["b1"], 0.0)
        logits = h @ self.p["W2"] + self.p["b2"]
        logits = np.where(mask > 0, logits, NEG)
        logits -= logits.max(axis=1, keepdims=True)
        e = np.exp(logits) * (mask > 0)
        return h, e / e.sum(axis=1, keepdims=True)

    def step(self, x: np.ndarray, h: np.ndarray, g_logits: np.ndarray) -> None:
        """One Adam step given d(loss)/d(logits) (already averaged over the batch)."""
        grads = {"W2": h.T @ g_logits, "b2": g_logits.sum(axis=0)}
        dh = (g_logits @ self.p["W2"].T) * (h > 0)
        grads["W1"] = x.T @ dh
        grads["b1"] = dh.sum(axis=0)
        self.t += 1
        for k, g in grads.items():
            self.m[k] = 0.9 * self.m[k] + 0.1 * g
            self.v[k] = 0.999 * self.v[k] + 0.001 * g * g
            mhat = self.m[k] / (1 - 0.9**self.t)
            vhat = self.v[k] / (1 - 0.999**self.t)
            self.p[k] -= (self.lr * mhat / (np.sqrt(vhat) + 1e-8)).astype(np.float32)

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator, greedy: bool = True) -> np.ndarray:
        _, probs = self.forward(obs, mask)
        if greedy:
            return probs.argmax(axis=1)
        u = rng.random((probs.shape[0], 1))
        return np.minimum((probs.cumsum(axis=1) < u).sum(axis=1), N_ACTIONS - 1)


def evaluate(net: MLP, opponents: str, games: int, seed: int) -> float:
    """Average points per deal of the policy as seat 0 of HeartsEnv (greedy actions)."""
    env = HeartsEnv(variant="standard", opponents=opponents, seat=0)
    rng = np.random.default_rng(seed)
    points, deals = 0.0, 0
    for g in range(games):
        obs, info = env.reset(seed=seed + g)
        done = False
        while not done:
            a = int(net.act(obs["observation"][None], obs["action_mask"][None], rng)[0])
            obs, _, done, _, info = env.step(a)
            if "deal_points" in info:
                points += info["deal_points"][0]
                deals += 1
    return points / max(deals, 1)


def report(net: MLP, stage: str, games: int, seed: int) -> None:
    vs_random = evaluate(net, "random", games, seed)
    vs_heur = evaluate(net, "heuristic", games, seed)
    print(f"{stage:<28} points/deal vs random: {vs_random:5.2f}   vs heuristic: {vs_heur:5.2f}", flush=True)


def behaviour_cloning(net: MLP, games: int, epochs: int, seed: int, rng: np.random.Generator) -> None:
    teacher = "heuristic"
    start = time.perf_counter()
    rows = [r for g in range(games) for r in play_decisions("standard", seed + g, [teacher] * 4)]
    x = np.stack([r["observation"] for r in rows])
    m = np.stack([r["legal_mask"] for r in rows])
    a = np.array([r["action"] for r in rows])
    print(f"behaviour cloning: {len(rows)} decisions of the {teacher} bot ({time.perf_counter() - start:.1f}s)")
    for epoch in range(epochs):
        order = rng.permutation(len(a))
        loss, hits = 0.0, 0
        for i in range(0, len(a), 512):
            b = order[i : i + 512]
            h, p = net.forward(x[b], m[b])
            loss -= float(np.log(p[np.arange(len(b)), a[b]] + 1e-12).sum())
            hits += int((p.argmax(axis=1) == a[b]).sum())
            g = p.copy()
            g[np.arange(len(b)), a[b]] -= 1.0
            net.step(x[b], h, g / len(b))
        print(f"  epoch {epoch + 1}: loss {loss / len(a):.3f}  agreement with the teacher {hits / len(a):.1%}")


def self_play_batch(net: MLP, deals: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Play ``deals`` whole deals with the policy in every seat; return decisions and their returns."""
    core = BatchedHearts(deals)
    idx = np.arange(deals)
    core.totals[:] = 0
    core.deal_index[:] = rng.integers(0, 4, deals)
    core.start_deals(idx, BatchedHearts.shuffled_hands(rng, deals))
    xs, ms, acts, games, seats, before = [], [], [], [], [], []

    def decide(sub: np.ndarray, seat: int, selected: np.ndarray, legal: np.ndarray) -> np.ndarray:
        obs = encode_batch(core, sub, seat, selected)
        mask = np.unpackbits(legal.view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")[:, :N_ACTIONS]
        choice = net.act(obs, mask, rng, greedy=False)
        xs.append(obs)
        ms.append(mask)
        acts.append(choice)
        games.append(sub)
        seats.append(np.full(sub.size, seat))
        before.append(core.deal_points(sub)[:, seat])
        return choice

    passing = idx[core.phase == PASS]
    if passing.size:
        chosen = np.zeros((deals, 4), dtype=np.uint64)
        for _ in range(3):
            for s in range(4):
                legal = core.hands[passing, s] & ~chosen[passing, s]
                c = decide(passing, s, chosen[:, s], legal)
                chosen[passing, s] |= _BIT[c]
        core.pass_cards(passing, chosen[passing])
    none = np.zeros(deals, dtype=np.uint64)
    for _ in range(52):
        cards = np.zeros(deals, dtype=np.int64)
        for s in range(4):
            sub = idx[core.turn == s]
            if sub.size:
                cards[sub] = decide(sub, s, none, core.legal(sub))
        core.play(idx, cards)
    g, s = np.concatenate(games), np.concatenate(seats)
    # reward to go: the points the seat takes from this decision on (what it could still change)
    returns = -(core.last_points[g, s] - np.concatenate(before)).astype(np.float32)
    return np.concatenate(xs), np.concatenate(ms), np.concatenate(acts), returns


def policy_gradient(net: MLP, iterations: int, deals: int, rng: np.random.Generator, entropy: float = 0.01) -> None:
    for it in range(iterations):
        x, m, a, ret = self_play_batch(net, deals, rng)
        entropies = []
        adv = (ret - ret.mean()) / (ret.std() + 1e-6)
        for i in range(0, len(a), 4096):
            b = slice(i, i + 4096)
            h, p = net.forward(x[b], m[b])
            n = len(a[b])
            onehot = np.zeros_like(p)
            onehot[np.arange(n), a[b]] = 1.0
            # d(-A log p_a)/dlogits = -A (onehot - p); d(-beta H)/dlogits = beta p (log p + H)
            logp = np.log(p + 1e-12) * (m[b] > 0)
            ent = -(p * logp).sum(axis=1, keepdims=True)
            g = -adv[b, None] * (onehot - p) + entropy * p * (logp + ent)
            entropies.append(float(ent.sum()))
            net.step(x[b], h, g / len(a))
        if (it + 1) % 10 == 0 or it == 0:
            # points average 6.5 in self-play (the four seats share 26), so show the policy's entropy
            print(f"  self-play iteration {it + 1}/{iterations}: policy entropy {sum(entropies) / len(a):.3f} nats")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bc-games", type=int, default=60, help="games of teacher decisions to clone")
    parser.add_argument("--bc-epochs", type=int, default=4)
    parser.add_argument("--pg-iterations", type=int, default=40, help="self-play policy-gradient iterations")
    parser.add_argument("--pg-deals", type=int, default=256, help="deals per self-play iteration")
    parser.add_argument("--pg-lr", type=float, default=5e-4, help="Adam step size for self-play")
    parser.add_argument("--eval-games", type=int, default=12, help="games per evaluation")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="a tiny run to check that everything works")
    parser.add_argument("--save", help="write the trained weights to this .npz file")
    args = parser.parse_args()
    if args.quick:
        args.bc_games, args.bc_epochs, args.pg_iterations, args.pg_deals, args.eval_games = 2, 1, 2, 16, 1
    rng = np.random.default_rng(args.seed)
    net = MLP(args.hidden, rng)
    start = time.perf_counter()
    report(net, "untrained (near random)", args.eval_games, 10_000)
    behaviour_cloning(net, args.bc_games, args.bc_epochs, args.seed, rng)
    report(net, "after behaviour cloning", args.eval_games, 10_000)
    net.lr = args.pg_lr
    for stage in range(2):
        policy_gradient(net, args.pg_iterations // 2, args.pg_deals, rng)
        report(net, f"after self-play part {stage + 1}", args.eval_games, 10_000)
    print(f"done in {time.perf_counter() - start:.0f}s")
    if args.save:
        np.savez(args.save, **net.p)
        print(f"weights written to {args.save}")


if __name__ == "__main__":
    main()
