"""Small calls at the user's scale: one 48 x 50 TREC 2012 matrix, 4 alphas, result object included.

Each fastrisk call against the plain vectorised NumPy of the same arithmetic, timed in
alternating blocks in one session (``conftest.side_by_side``): ``extra_info`` holds the
medians, the ratio NumPy / fastrisk (aim >= 3, issue #20) and the load average.
Run: ``pytest benchmarks/bench_small.py --benchmark-columns=median,rounds``.
"""

from __future__ import annotations

import numpy as np
import pytest
from bench_risk import ALPHAS, numpy_risk
from bench_tables import numpy_zrisk
from conftest import side_by_side
from scipy import special

import fastrisk
from fastrisk._inference import t_critical


def numpy_topic_risk(R, B, alphas, crit):
    """Per-topic TR_i, TJ_i, influences, pseudo-values, bias and the loss/win flags, vectorised."""
    c = R.shape[1]
    d = R - B
    x = np.where(d < 0, d[None] * (1 + alphas[:, None, None]), d[None])
    mean = x.mean(axis=-1, keepdims=True)
    sd = x.std(axis=-1, ddof=1, keepdims=True)
    loo = (c * mean - x) / (c - 1)
    influence = (c - 1) * (mean - loo)
    pseudo = c * mean - (c - 1) * loo
    loo_mean = loo.mean(axis=-1, keepdims=True)
    jsd = np.sqrt((c - 1) / c * ((loo - loo_mean) ** 2).sum(axis=-1, keepdims=True)) * np.sqrt(c)
    tr = x / sd
    return x, tr, influence / jsd, influence, pseudo, (c - 1) * (loo_mean - mean)[..., 0], tr < -crit, tr > crit


@pytest.fixture(scope="module")
def trec():
    m, b = fastrisk.datasets.trec2012_web()
    _, base = fastrisk.resolve_baseline(m, b)
    return m, base


def test_risk_small(benchmark, trec):
    m, base = trec
    benchmark.group = "small-risk-48x50x4"
    ours = fastrisk.risk(m, base, alpha=ALPHAS)
    np.testing.assert_allclose(numpy_risk(m.values, base.values, ALPHAS)[3], ours.trisk, rtol=1e-9)
    side_by_side(benchmark, lambda: fastrisk.risk(m, base, alpha=ALPHAS),
                 {"numpy": lambda: numpy_risk(m.values, base.values, ALPHAS)}, aim=3.0)


def test_zrisk_small(benchmark, trec):
    m, _ = trec
    benchmark.group = "small-zrisk-48x50x4"
    lw = 1.0 + ALPHAS
    ours = fastrisk.zrisk(m, loss_weight=lw)
    np.testing.assert_allclose(numpy_zrisk(m.values, lw)[0].T, ours.zrisk, rtol=1e-9)
    side_by_side(benchmark, lambda: fastrisk.zrisk(m, loss_weight=lw),
                 {"numpy": lambda: numpy_zrisk(m.values, lw)}, aim=3.0)


def test_topic_risk_small(benchmark, trec):
    m, base = trec
    benchmark.group = "small-topic-risk-48x50x4"
    crit = t_critical(0.05, m.n_topics - 1)
    ours = fastrisk.topic_risk(m, base, alpha=ALPHAS)
    np.testing.assert_allclose(numpy_topic_risk(m.values, base.values, ALPHAS, crit)[1], ours.tr, rtol=1e-9)
    side_by_side(benchmark, lambda: fastrisk.topic_risk(m, base, alpha=ALPHAS),
                 {"numpy": lambda: numpy_topic_risk(m.values, base.values, ALPHAS, crit)}, aim=3.0)


def numpy_t_test(R, B, alphas):
    """Paired t of every system at every alpha with its two-sided p-value, vectorised."""
    c = R.shape[1]
    d = R - B
    x = np.where(d < 0, d[None] * (1 + alphas[:, None, None]), d[None])
    t = x.mean(axis=-1) / (x.std(axis=-1, ddof=1) / np.sqrt(c))
    return t, 2 * special.stdtr(c - 1, -np.abs(t))


def test_t_test_small(benchmark, trec):
    m, base = trec
    benchmark.group = "small-t-test-48x50x4"
    ours = fastrisk.t_test(m, base, alpha=ALPHAS)
    np.testing.assert_allclose(numpy_t_test(m.values, base.values, ALPHAS)[0], ours.t, rtol=1e-9)
    side_by_side(benchmark, lambda: fastrisk.t_test(m, base, alpha=ALPHAS),
                 {"numpy": lambda: numpy_t_test(m.values, base.values, ALPHAS)}, aim=3.0)
