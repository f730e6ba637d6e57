"""How the server's processes log: :func:`configure_logging` sends the ``moonshot`` loggers to
stderr as one ``key=value`` line a record (:class:`KeyValueFormatter`), for ``moonshot serve`` and
``moonshot trend-node``. The messages themselves are written as ``event=... key=value`` where they
are logged; this module only frames them.
"""

from __future__ import annotations

import json
import logging


class KeyValueFormatter(logging.Formatter):
    """``ts=... level=... logger=... event=...``: messages are already key=value."""

    def format(self, record: logging.LogRecord) -> str:
        base = (
            f"ts={self.formatTime(record)} level={record.levelname.lower()} logger={record.name} {record.getMessage()}"
        )
        if record.exc_info:
            base += " exc=" + json.dumps(self.formatException(record.exc_info))
        return base


def configure_logging(level: str = "info") -> None:
    """The ``moonshot`` loggers at ``level``, each record one key=value line on stderr (not passed up)."""
    handler = logging.StreamHandler()
    handler.setFormatter(KeyValueFormatter())
    root = logging.getLogger("moonshot")
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    root.propagate = False


__all__ = ["KeyValueFormatter", "configure_logging"]
