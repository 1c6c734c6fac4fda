"""Sweep throughput: jobs/s of one grid in-process, in a 2-worker process pool and on a
2-worker Dask LocalCluster, against the plain loop of the same public API calls (the
per-job overhead of the sweep machinery).

The workload is a bootstrap sweep when ``fastrisk.inference.resampling`` is available (``bootstrap``
kind), else a risk sweep. Run with
``PYTHONPATH=$PWD python -m pytest benchmarks/bench_sweep.py --benchmark-only``.
"""

from __future__ import annotations

import pytest

from fastrisk.sweep import KINDS, Grid, local_client, process_pool, sweep
from fastrisk.sweep.data import _load

BOOTSTRAP = "bootstrap" in KINDS
DATA = ["trec:web2010_err20", "trec:web2011_err20", "trec:web2012_err20", "trec:web2013_err20",
        "trec:adhoc5_ap", "trec:adhoc6_ap", "trec:adhoc7_ap", "trec:adhoc8_ap"]


def _grid() -> Grid:
    if BOOTSTRAP:
        spec = {"kind": "bootstrap", "data": DATA, "params": {"replicates": 10000, "method": "percentile"},
                "grid": {"baseline": ["mean", "median", "max"], "alpha": [0, 1, 5]}}
    else:
        spec = {"kind": "risk", "data": DATA,
                "grid": {"baseline": ["mean", "median", "max"], "alpha": [0, 1, 5, 10],
                         "convention": ["classic", "minus"]}}
    return Grid.from_dict({"sweep": {"seed": 1}, "experiment": [spec]})


GRID = _grid()
N_JOBS = len(GRID)
GROUP = f"{'bootstrap' if BOOTSTRAP else 'risk'} sweep, {N_JOBS} jobs"


def _loop():
    """The same jobs as plain calls in this process (no batching, tables, checkpoints), with
    one BLAS thread as the sweep uses, so the difference is the sweep's overhead."""
    from fastrisk._runtime.threads import blas_threads

    kind = KINDS[GRID.experiments[0].kind]
    with blas_threads(1):
        for job in GRID.jobs():
            kind(_cached(job.data), job.params, job.seed, None)


_MATRICES: dict = {}


def _cached(spec):
    if spec not in _MATRICES:
        _MATRICES[spec] = _load(spec, "matrix")
    return _MATRICES[spec]


def _run(benchmark, fn):
    fn()  # warm-up: JIT, data loading, worker start-up
    benchmark.group = GROUP
    benchmark.pedantic(fn, rounds=3, iterations=1)
    mean = benchmark.stats.stats.mean
    benchmark.extra_info["jobs_per_s"] = N_JOBS / mean
    benchmark.extra_info["ms_per_job"] = 1e3 * mean / N_JOBS


def test_plain_loop(benchmark):
    _run(benchmark, _loop)


def test_sweep_in_process(benchmark):
    _run(benchmark, lambda: sweep(GRID, progress=False))


def test_sweep_in_process_one_job_per_batch(benchmark):
    _run(benchmark, lambda: sweep(GRID, progress=False, batch_seconds=0, max_batch=1))


def test_sweep_process_pool_2(benchmark):
    with process_pool(2) as pool:
        _run(benchmark, lambda: sweep(GRID, executor=pool, progress=False))


@pytest.fixture(scope="module")
def client():
    pytest.importorskip("distributed")
    with local_client(2, silence_logs=50) as c:
        yield c


def test_sweep_dask_local_cluster_2(benchmark, client):
    _run(benchmark, lambda: sweep(GRID, executor=client, progress=False))


def test_sweep_dask_one_job_per_task(benchmark, client):
    _run(benchmark, lambda: sweep(GRID, executor=client, progress=False, batch_seconds=0, max_batch=1))
