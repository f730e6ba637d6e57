"""The table runtime every protocol shares: the table actor and its seats, the lobby and matching,
per-client limits, mixed-table refusals and the tournament host."""
