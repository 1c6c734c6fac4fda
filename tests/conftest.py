"""Shared test fixtures (the bundled real data) and the hypothesis profiles.

``CI=true`` selects the ``ci`` profile: derandomised (the same examples on every run, so CI
never fails on a lucky draw) and without deadlines (shared runners are slow and noisy).
Locally the ``dev`` profile explores new random examples each run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent
BENCH_DATA = ROOT / "bench_data"

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") == "true" else "dev"))


@pytest.fixture(scope="session")
def bench_data() -> Path:
    return BENCH_DATA


@pytest.fixture(scope="session")
def web2012():
    """The 49 TREC 2012 Web runs' ERR@20 matrix of the ECIR/SIGIR 2014 papers (topics 151-200)."""
    from reference import multibase as ref

    return ref.web2012_49()


@pytest.fixture(scope="session")
def trec():
    """(matrix, indriCASP baseline) of the bundled TREC 2012 Web ERR@20 data."""
    from fastrisk.data.datasets import trec2012_web

    return trec2012_web("err20")
