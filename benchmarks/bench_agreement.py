"""Rank agreement: fastrisk vs scipy.stats (Kendall, Friedman) and the ``rbo`` PyPI package.

Like with like: the ``rbo`` package's ``RankingSimilarity.rbo()`` defaults to p = 1 and
returns a truncated prefix sum, so the peer here is its ``rbo_ext(p)`` (Webber et al. eq.
32, untied lists), compared with fastrisk's ``ext`` on the same untied rankings.

Run: PYTHONPATH=$PWD python -m pytest benchmarks/bench_agreement.py --benchmark-only
"""

from __future__ import annotations

import csv
import itertools

import numpy as np
import pytest
import scipy.stats

from fastrisk.measures.agreement import friedman, kendall_tau_matrix, rbo_many, rbo_matrix

try:
    from rbo import RankingSimilarity
except ImportError:  # pragma: no cover
    RankingSimilarity = None

needs_rbo = pytest.mark.skipif(RankingSimilarity is None, reason="the rbo package is not installed")


def _untied_pairs(rng, n_pairs, universe=200, max_len=100):
    xs, ys = [], []
    for _ in range(n_pairs):
        xs.append(rng.permutation(universe)[: rng.integers(10, max_len)].tolist())
        ys.append(rng.permutation(universe)[: rng.integers(10, max_len)].tolist())
    return xs, ys


# ---------------------------------------------------------------------------- RBO pairs


@pytest.mark.benchmark(group="rbo-1000-untied-pairs")
def test_rbo_pairs_fastrisk(benchmark, rng):
    xs, ys = _untied_pairs(rng, 1000)
    rbo_many(xs, ys, p=0.9)
    benchmark(rbo_many, xs, ys, p=0.9)


@needs_rbo
@pytest.mark.benchmark(group="rbo-1000-untied-pairs")
def test_rbo_pairs_rbo_package(benchmark, rng):
    xs, ys = _untied_pairs(rng, 1000)

    def run():
        return np.array([RankingSimilarity(x, y).rbo_ext(p=0.9) for x, y in zip(xs, ys)])

    np.testing.assert_allclose(run(), rbo_many(xs, ys, p=0.9).ext, atol=1e-10)
    benchmark(run)


@pytest.mark.benchmark(group="rbo-10000-reference-vectors-3-treatments")
def test_rbo_reference_vectors_fastrisk(benchmark):
    from conftest import BENCH_DATA

    with open(BENCH_DATA / "rbo-ties" / "test.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    xs = [r["x"] for r in rows]
    ys = [r["y"] for r in rows]
    p = np.array([float(r["p"]) for r in rows])

    def run():
        return [rbo_many(xs, ys, p=p, ties=t) for t in "wab"]

    run()
    benchmark(run)


# ---------------------------------------------------------------------------- RBO matrix


def _score_rows(rng, k, n):
    return rng.random((k, n))


@pytest.mark.benchmark(group="rbo-matrix-49x49")
def test_rbo_matrix_fastrisk(benchmark, rng):
    scores = _score_rows(rng, 49, 49)
    rbo_matrix(scores, p=0.9)
    benchmark(rbo_matrix, scores, p=0.9)


@needs_rbo
@pytest.mark.benchmark(group="rbo-matrix-49x49")
def test_rbo_matrix_rbo_package(benchmark, rng):
    scores = _score_rows(rng, 49, 49)
    orders = [list(np.argsort(-row, kind="stable")) for row in scores]

    def run():
        k = len(orders)
        out = np.ones((k, k))
        for i, j in itertools.combinations(range(k), 2):
            out[i, j] = out[j, i] = RankingSimilarity(orders[i], orders[j]).rbo_ext(p=0.9)
        return out

    np.testing.assert_allclose(run(), rbo_matrix(scores, p=0.9).ext, atol=1e-10)
    benchmark(run)


# ---------------------------------------------------------------------------- Kendall


KENDALL_SIZES = [(49, 49), (100, 1000)]


def _scipy_tau_matrix(scores):
    k = scores.shape[0]
    tau = np.ones((k, k))
    pv = np.zeros((k, k))
    for i in range(k):
        for j in range(i, k):
            r = scipy.stats.kendalltau(scores[i], scores[j])
            tau[i, j] = tau[j, i] = r.statistic
            pv[i, j] = pv[j, i] = r.pvalue
    return tau, pv


@pytest.mark.parametrize(("k", "n"), KENDALL_SIZES, ids=[f"{k}x{n}" for k, n in KENDALL_SIZES])
def test_kendall_matrix_fastrisk(benchmark, rng, k, n):
    benchmark.group = f"kendall-matrix-{k}x{n}"
    scores = np.round(rng.random((k, n)), 2)  # ties
    kendall_tau_matrix(scores)
    benchmark(kendall_tau_matrix, scores)


@pytest.mark.parametrize(("k", "n"), KENDALL_SIZES, ids=[f"{k}x{n}" for k, n in KENDALL_SIZES])
def test_kendall_matrix_scipy(benchmark, rng, k, n):
    benchmark.group = f"kendall-matrix-{k}x{n}"
    scores = np.round(rng.random((k, n)), 2)
    tau, pv = _scipy_tau_matrix(scores)
    got = kendall_tau_matrix(scores)
    np.testing.assert_allclose(got.statistic, tau, atol=1e-12)
    np.testing.assert_allclose(got.pvalue, pv, rtol=1e-8, atol=1e-300)
    benchmark.pedantic(_scipy_tau_matrix, args=(scores,), rounds=3, iterations=1)


# ---------------------------------------------------------------------------- Friedman


@pytest.mark.benchmark(group="friedman-1000x1000")
def test_friedman_fastrisk(benchmark, rng):
    scores = np.round(rng.random((1000, 1000)), 3)
    friedman(scores)
    benchmark(friedman, scores)


@pytest.mark.benchmark(group="friedman-1000x1000")
def test_friedman_scipy(benchmark, rng):
    scores = np.round(rng.random((1000, 1000)), 3)
    want = scipy.stats.friedmanchisquare(*scores.T)
    assert friedman(scores).statistic == pytest.approx(want.statistic, rel=1e-10)
    benchmark(lambda: scipy.stats.friedmanchisquare(*scores.T))
