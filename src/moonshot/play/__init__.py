"""Playing many games: self-play and the bot registry (``sim``), arenas, batch work, the duplicate
tournament schedule and ratings. Pure of the network; above the bots, below the table runtime."""
