"""All systems vs one baseline at 4 alpha: URisk + TRisk + jackknife SE.

fastrisk's fused parallel kernel against a plain vectorised NumPy implementation (the way a
researcher writes it: broadcast the alphas, compute the leave-one-out means explicitly).
Run: ``pytest benchmarks/bench_risk.py --benchmark-columns=mean,stddev,rounds``.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import memory_budget_ok

import fastrisk

ALPHAS = np.array([0.0, 1.0, 5.0, 10.0])


def numpy_risk(R, b, alphas):
    """Vectorised NumPy: x (A, S, c), URisk, SE_x, jackknife SE, TRisk."""
    c = R.shape[1]
    d = R - b
    x = np.where(d < 0, d[None] * (1 + alphas[:, None, None]), d[None])
    urisk = x.mean(axis=-1)
    se = x.std(axis=-1, ddof=1) / np.sqrt(c)
    loo = (c * urisk[..., None] - x) / (c - 1)
    se_j = np.sqrt((c - 1) / c * ((loo - loo.mean(axis=-1, keepdims=True)) ** 2).sum(axis=-1))
    return urisk, se, se_j, urisk / se


def cases():
    yield "trec2012-48x50", None
    yield "synthetic-1000x10000", (1000, 10000)


@pytest.fixture(params=list(cases()), ids=lambda p: p[0], scope="module")
def data(request):
    name, shape = request.param
    if shape is None:
        matrix, baseline = fastrisk.data.datasets.trec2012_web()
        _, base = fastrisk.resolve_baseline(matrix, baseline)
        return name, matrix, base
    if not memory_budget_ok(6 * shape[0] * shape[1] * 8 * len(ALPHAS)):
        pytest.skip("not enough memory for the NumPy peer at this size")
    rng = np.random.default_rng(1)
    values = rng.beta(0.6, 2.0, size=shape)
    matrix = fastrisk.ScoreMatrix(values, [f"s{k}" for k in range(shape[0])], range(shape[1]))
    return name, matrix, fastrisk.Baseline("b", values[:1].copy())


def test_fastrisk(benchmark, data):
    name, matrix, base = data
    benchmark.group = f"risk-{name}"
    fastrisk.risk(matrix, base, alpha=ALPHAS)  # warm-up: JIT compile excluded
    benchmark(fastrisk.risk, matrix, base, alpha=ALPHAS)


def test_numpy(benchmark, data):
    name, matrix, base = data
    benchmark.group = f"risk-{name}"
    ours = fastrisk.risk(matrix, base, alpha=ALPHAS)
    urisk, se, se_j, trisk = numpy_risk(matrix.values, base.values, ALPHAS)
    np.testing.assert_allclose(urisk, ours.urisk, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(se_j, ours.se_jack, rtol=1e-7, atol=1e-12)
    benchmark(numpy_risk, matrix.values, base.values, ALPHAS)
