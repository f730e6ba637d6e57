"""The pure core: cards, rules, variants, actions, events, the engine, seat views and deal fairness.

No I/O, no clocks, no global randomness; checked with ``mypy --strict``. Nothing here imports
anything else of moonshot.
"""
