"""Play Gym Hearts through moonshot's event API, as the seed's ``run_example.py`` does.

    python examples/run_example.py            # you play Kazuma on stdin, three random players
    python examples/run_example.py --random   # four random players (non-interactive)

Every event is printed; the game runs to ``GameOver``.
"""

from __future__ import annotations

import argparse

from moonshot.rl import EventEnv, HumanPlayer, RandomPlayer

NAMES = ["Kazuma", "Aqua", "Megumin", "Darkness"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--random", action="store_true", help="four random players (no input needed)")
    parser.add_argument("--max-score", type=int, default=100, help="game over when a total exceeds this")
    parser.add_argument("--seed", type=int, default=None, help="seed for the deals and the random players")
    args = parser.parse_args()

    players: list[HumanPlayer | RandomPlayer] = []
    for i, name in enumerate(NAMES):
        seed = None if args.seed is None else args.seed + i + 1
        players.append(RandomPlayer(name, seed=seed, print_info=True) if args.random or i else HumanPlayer(name))
    env = EventEnv(NAMES, max_score=args.max_score, seed=args.seed)

    print("*** Hearts Start ***\n")
    event = env.reset()
    while event is not None:
        action = None
        if event["broadcast"]:
            for p in players:
                p.act(event)
        else:
            name = event["data"]["playerName"]
            action = next(p for p in players if p.name == name).act(event)
        if event["event_name"] == "GameOver":
            print("\n*** Game Over ***")
            break
        event, _reward, _done, info = env.step(action)
        if info.get("error"):
            print(info["error"])


if __name__ == "__main__":
    main()
