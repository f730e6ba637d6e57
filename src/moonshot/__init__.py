"""moonshot: one Hearts engine, every protocol, strong bots, an RL environment."""

__version__ = "0.1.0"
