"""Shared fixtures for the pytest-benchmark suites."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

BENCH_DATA = Path(__file__).resolve().parent.parent / "bench_data"


@pytest.fixture
def rng():
    return np.random.default_rng(20121)


def memory_budget_ok(nbytes: int, fraction: float = 0.25) -> bool:
    """True if an allocation of ``nbytes`` fits in ``fraction`` of the available memory."""
    try:
        import os

        avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return True
    return nbytes <= fraction * avail
