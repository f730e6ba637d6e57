"""Shared helpers for the RL tests."""

from __future__ import annotations

import warnings

import pytest


@pytest.fixture(autouse=True)
def _quiet_heuristic_fallback() -> None:
    # opponents="heuristic" falls back to random (with a warning) until the heuristic bot lands
    warnings.filterwarnings("ignore", message="moonshot.bots.heuristic is not available")
