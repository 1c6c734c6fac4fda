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


#: The longest tests of the slow pass (``pytest -m slow``; 25-110 s each on 2 cores, cold), by node
#: id prefix, longest first. They run before the rest so that pytest-xdist's workers end together:
#: with ``--dist worksteal`` (.ci/run) an idle worker takes the tail of the other's queue, which
#: then holds short tests; a long test left to the end of a queue ran alone for its whole length.
LONGEST_FIRST = (
    "tests/test_warmup.py::test_after_warmup_the_quickstarts_compile_nothing",
    "tests/test_simulate_risk_null.py::test_type1_names_the_hypothesis_of_every_rate_and_trisk0_is_t",
    "tests/test_simulate_select.py::test_a_risk_test_alone_runs_and_calibrates_its_null_only",
    "tests/test_simulate_calibrated.py::test_pvalues_under_a_model_at_urisk_zero_are_roughly_uniform",
    "tests/test_simulate_protocol.py::test_every_beta_binomial_margin_agrees_with_simireff_in_r",
    "tests/test_batch_dispatch.py::test_every_option_of_one_matrix_works_on_a_stack[bootstrap-statistic=_median",
    "tests/test_simulate_shared.py::test_a_killed_grid_resumes_to_the_tables_of_an_uninterrupted_run",
    "tests/test_simulate_protocol.py::test_the_power_study_never_fails_on_a_bundled_collection",
    "tests/test_faults_interrupt.py::test_ctrl_c_at_random_moments_exits_130_without_a_crash",
)


def pytest_collection_modifyitems(config, items):
    """`LONGEST_FIRST` to the front, in its order; every other test keeps its place (a stable sort)."""
    def rank(item):
        return next((i for i, p in enumerate(LONGEST_FIRST) if item.nodeid.startswith(p)), len(LONGEST_FIRST))

    items.sort(key=rank)
