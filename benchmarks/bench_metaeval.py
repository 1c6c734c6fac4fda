"""Meta-evaluation (issue #38): discriminative power and swap rates against vectorised NumPy.

- ``metaeval-power-100x50-B1000``: Sakai's paired bootstrap test of the 4,950 pairs of 100
  systems x 50 topics, B = 1000, against a NumPy loop over the pairs that vectorises each pair's
  bootstrap (a (B, c) gather of the pair's centred differences, its t statistics, the count and
  the B·level-th largest by ``np.partition``). Aim: >= 20x (issue: aiming at 50x).
- ``metaeval-swap-100x50-1000x5``: Voorhees & Buckley's swap counts, 1,000 splits at 5 sizes,
  against NumPy vectorised over the trials of a size (the issue's bound: <= 1 s).

Run: ``python benchmarks/compare.py benchmarks/bench_metaeval.py`` (``--record`` to store).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import side_by_side

import fastrisk

S, C, B = 100, 50, 1000
SIZES = (5, 10, 15, 20, 25)
EDGES = np.round(np.arange(0.0, 0.205, 0.01), 10)


@pytest.fixture(scope="module")
def scores():
    g = np.random.default_rng(38)
    return 0.3 + 0.1 * g.random((S, 1)) + 0.2 * g.standard_normal((S, C))


def numpy_power(X, B=B, level=0.05, seed=1):
    """Per pair: the (B, c) resampled centred differences, Sakai's |t|, the ASL and the difference
    required at the B·level-th largest |t| (vectorised over replicates, looped over pairs)."""
    g = np.random.default_rng(seed)
    S, c = X.shape
    idx = g.integers(0, c, (B, c))
    k = int(round(B * level))
    asl, diff = [], []
    for i in range(S):
        for j in range(i + 1, S):
            d = X[i] - X[j]
            w = d - d.mean()
            t0 = abs(d.mean() / (d.std(ddof=1) / np.sqrt(c)))
            ws = w[idx]
            m = ws.mean(axis=1)
            t = np.abs(m / (ws.std(axis=1, ddof=1) / np.sqrt(c)))
            asl.append(np.mean(t >= t0))
            r = np.argpartition(t, B - k)[B - k]
            diff.append(abs(m[r]))
    return np.array(asl), max(diff)


def numpy_swaps(X, sizes=SIZES, trials=1000, seed=1):
    g = np.random.default_rng(seed)
    S, c = X.shape
    I, J = np.triu_indices(S, 1)
    total = np.zeros((len(sizes), EDGES.size), np.int64)
    swaps = np.zeros_like(total)
    for z, n in enumerate(sizes):
        perm = np.argsort(g.random((trials, c)), axis=1)[:, :2 * n]
        ma = X[:, perm[:, :n]].mean(axis=2)  # (S, trials)
        mb = X[:, perm[:, n:]].mean(axis=2)
        da = ma[I] - ma[J]
        db = mb[I] - mb[J]
        k = np.searchsorted(EDGES, np.abs(da), side="right") - 1
        sw = (da * db < 0)
        total[z] = np.bincount(k.ravel(), minlength=EDGES.size)
        swaps[z] = np.bincount(k.ravel(), weights=sw.ravel(), minlength=EDGES.size)
    return total, swaps


def test_power(benchmark, scores):
    """All 4,950 pairs, B = 1000 (aim >= 20x the NumPy loop over pairs)."""
    benchmark.group = "metaeval-power-100x50-B1000"
    ours = fastrisk.discriminative_power(scores, replicates=B, rng=1)
    asl, _ = numpy_power(scores)
    # different random draws: the discriminative powers agree to Monte Carlo error
    assert abs(ours.discriminative_power - np.mean(asl < 0.05)) < 0.03
    side_by_side(benchmark, lambda: fastrisk.discriminative_power(scores, replicates=B, rng=1),
                 {"numpy": lambda: numpy_power(scores)}, blocks=7, block_seconds=0.5, aim=20.0)


def test_swaps(benchmark, scores):
    """1,000 splits at each of 5 sizes (the issue's bound: <= 1 s)."""
    benchmark.group = "metaeval-swap-100x50-1000x5"
    ours = fastrisk.swap_rates(scores, sizes=SIZES, trials=1000, bins=EDGES, rng=1)
    total, swaps = numpy_swaps(scores)
    assert (ours.total.sum(axis=1) == total.sum(axis=1)).all()
    side_by_side(benchmark, lambda: fastrisk.swap_rates(scores, sizes=SIZES, trials=1000, bins=EDGES, rng=1),
                 {"numpy": lambda: numpy_swaps(scores)}, blocks=7, block_seconds=0.5)
