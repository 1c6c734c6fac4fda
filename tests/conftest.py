"""Shared test fixtures: paths to the bundled real data."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH_DATA = ROOT / "bench_data"


@pytest.fixture(scope="session")
def bench_data() -> Path:
    return BENCH_DATA
