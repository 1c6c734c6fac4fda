"""Small calls at the user's scale: one 48 x 50 TREC 2012 matrix, 4 alphas, result object included.

Each fastrisk call against the plain vectorised NumPy of the same arithmetic, timed in
alternating blocks in one session (``conftest.side_by_side``): ``extra_info`` holds the
medians, the ratio NumPy / fastrisk (aim >= 5, issue #31; 3 in issue #20) and the load average.
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
from fastrisk._runtime.tstat import t_critical


def numpy_scores(R, B, alphas):
    """x = d, or (1 + alpha) d for a loss, [alpha, system, topic]."""
    d = R - B
    return np.where(d < 0, d[None] * (1 + alphas[:, None, None]), d[None])


def numpy_topic_risk(R, B, alphas, crit):
    """Per-topic TR_i, TJ_i, influences, pseudo-values, bias and the loss/win flags, vectorised."""
    c = R.shape[1]
    x = numpy_scores(R, B, alphas)
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
    m, b = fastrisk.data.datasets.trec2012_web()
    _, base = fastrisk.resolve_baseline(m, b)
    return m, base


def numpy_t_test(R, B, alphas):
    """Paired t of every system at every alpha with its two-sided p-value, vectorised."""
    c = R.shape[1]
    x = numpy_scores(R, B, alphas)
    t = x.mean(axis=-1) / (x.std(axis=-1, ddof=1) / np.sqrt(c))
    return t, 2 * special.stdtr(c - 1, -np.abs(t))



#: name -> (fastrisk call, NumPy peer, what to compare: (fastrisk result, peer output) -> arrays)
CASES = {
    "risk": (lambda m, b, crit: fastrisk.risk(m, b, alpha=ALPHAS),
             lambda m, b, crit: numpy_risk(m.values, b.values, ALPHAS),
             lambda ours, peer: (ours.trisk, peer[3])),
    "zrisk": (lambda m, b, crit: fastrisk.zrisk(m, loss_weight=1.0 + ALPHAS),
              lambda m, b, crit: numpy_zrisk(m.values, 1.0 + ALPHAS),
              lambda ours, peer: (ours.zrisk, peer[0].T)),
    "topic_risk": (lambda m, b, crit: fastrisk.topic_risk(m, b, alpha=ALPHAS),
                   lambda m, b, crit: numpy_topic_risk(m.values, b.values, ALPHAS, crit),
                   lambda ours, peer: (np.stack([ours.tr, ours.tj, ours.influence, ours.pseudo_values]),
                                       np.stack(peer[1:5]))),
    "t_test": (lambda m, b, crit: fastrisk.t_test(m, b, alpha=ALPHAS),
               lambda m, b, crit: numpy_t_test(m.values, b.values, ALPHAS),
               lambda ours, peer: (ours.statistic, peer[0])),
}


@pytest.mark.parametrize("name", list(CASES))
def test_small_call(benchmark, trec, name):
    """One call of fastrisk (result object included) against the NumPy of the same arithmetic (aim >= 5)."""
    m, base = trec
    ours, peer, compare = CASES[name]
    crit = t_critical(0.05, m.n_topics - 1)
    benchmark.group = f"small-{name}-48x50x4"
    np.testing.assert_allclose(*compare(ours(m, base, crit), peer(m, base, crit)), rtol=1e-9, atol=1e-12)
    side_by_side(benchmark, lambda: ours(m, base, crit), {"numpy": lambda: peer(m, base, crit)},
                 aim=5.0)
