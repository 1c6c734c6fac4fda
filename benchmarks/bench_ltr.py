"""Risk-sensitive LambdaRank: gradients per boosting round, and the cost of a custom objective in LightGBM.

Data: the seeded synthetic LETOR set in MSLR-WEB10K's shape (10,000 queries x 120 documents
x 136 features, grades 0-4; ``fastrisk.ltr.synthetic_letor``).

- group ``ltr-gradients``: one round of gradients and Hessians (LightGBM's truncation level
  30: 31 M pairs) by fastrisk's numba kernel (plain LambdaRank and URisk at alpha = 5)
  against a vectorised NumPy implementation (pair matrices per query).
- group ``ltr-round``: one LightGBM boosting round (gradients + one tree of 31 leaves) with
  the built-in ``lambdarank`` objective and with fastrisk's objectives as custom objectives.
  The issue's aim: the custom objective costs at most 2x the built-in one per round.

Run: ``pytest benchmarks/bench_ltr.py --benchmark-columns=min,median,rounds``.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import memory_budget_ok

from fastrisk import ltr

lgb = pytest.importorskip("lightgbm")

SHAPE = (10_000, 120, 136)
TRUNCATION = 30


@pytest.fixture(scope="module")
def mslr():
    q, n, f = SHAPE
    if not memory_budget_ok(q * n * f * 8 * 3):
        pytest.skip("not enough memory for the MSLR-shaped set")
    return ltr.synthetic_letor(q, n, f, rng=1)


@pytest.fixture(scope="module")
def scores(mslr):
    return np.random.default_rng(0).normal(size=mslr.n_documents)


def numpy_gradients(scores, labels, boundaries, base, alpha, k=10, sigmoid=1.0, truncation=TRUNCATION):
    """LambdaRank (LightGBM's definition, lambdarank_norm on) with the URisk swap weight, one
    query at a time with NumPy pair matrices: how one writes it without a compiler."""
    gains = 2.0 ** labels - 1.0
    grad = np.zeros_like(scores)
    hess = np.zeros_like(scores)
    for q in range(len(boundaries) - 1):
        a, b = boundaries[q], boundaries[q + 1]
        s = scores[a:b]
        order = np.argsort(-s, kind="stable")
        ss, gs = s[order], gains[a:b][order]
        n = len(s)
        disc = 1.0 / np.log2(2.0 + np.arange(n))
        ideal = np.sort(gains[a:b])[::-1]
        maxdcg = (ideal[:truncation] * disc[:truncation]).sum()
        idcg_k = (ideal[:k] * disc[:k]).sum()
        if maxdcg == 0:
            continue
        ndcg_k = (gs[:k] * disc[:k]).sum() / idcg_k
        d = ndcg_k - base[q]
        i, j = np.triu_indices(n, 1)
        keep = (i < truncation) & (gs[i] != gs[j])
        i, j = i[keep], j[keep]
        hi = np.where(gs[i] > gs[j], i, j)
        lo = np.where(gs[i] > gs[j], j, i)
        dg, ds = gs[hi] - gs[lo], ss[hi] - ss[lo]
        delta = dg * np.abs(disc[hi] - disc[lo]) / maxdcg
        if ss[0] != ss[-1]:
            delta /= 0.01 + np.abs(ds)
        dk = np.where(np.arange(n) < k, disc, 0.0)
        dm = dg * (dk[lo] - dk[hi]) / idcg_k
        low_end, high_end = np.minimum(d, d + dm), np.maximum(d, d + dm)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(dm == 0, float(d < 0), np.clip(np.minimum(high_end, 0) - low_end, 0, None) / np.abs(dm))
        w = 1.0 + alpha * share
        rho = 1.0 / (1.0 + np.exp(sigmoid * ds))
        lam = sigmoid * rho * delta
        h = sigmoid * lam * (1 - rho)
        total = 2 * lam.sum()
        f = np.log2(1 + total) / total if total > 0 else 1.0
        gq = np.zeros(n)
        hq = np.zeros(n)
        np.add.at(gq, hi, -lam * w)
        np.add.at(gq, lo, lam * w)
        np.add.at(hq, hi, h * w)
        np.add.at(hq, lo, h * w)
        grad[a:b][order] = gq * f
        hess[a:b][order] = hq * f
    return grad, hess


def _objective(mslr, kind):
    obj = ltr.objective(kind, alpha=0 if kind == "lambdarank" else 5,
                        baseline=None if kind == "lambdarank" else mslr.features[:, 0])
    obj.gradients(np.zeros(mslr.n_documents), mslr.labels, mslr.group)  # set-up and JIT compile excluded
    return obj


@pytest.mark.parametrize("kind", ["lambdarank", "urisk"])
def test_gradients_fastrisk(benchmark, mslr, scores, kind):
    benchmark.group = "ltr-gradients"
    obj = _objective(mslr, kind)
    obj.gradients(scores)
    benchmark(obj.gradients, scores)


def test_gradients_numpy(benchmark, mslr, scores):
    benchmark.group = "ltr-gradients"
    obj = _objective(mslr, "urisk")
    grad, hess = numpy_gradients(scores, mslr.labels, mslr.boundaries, obj.baseline_measure, 5.0)
    ours = obj.gradients(scores)
    np.testing.assert_allclose(grad, ours[0], rtol=1e-7, atol=1e-12)  # the peer computes the same numbers
    np.testing.assert_allclose(hess, ours[1], rtol=1e-7, atol=1e-12)
    benchmark.pedantic(numpy_gradients, args=(scores, mslr.labels, mslr.boundaries, obj.baseline_measure, 5.0),
                       rounds=2, iterations=1)


@pytest.fixture(scope="module")
def dataset(mslr):
    return lgb.Dataset(mslr.features.astype(np.float32), mslr.labels, group=mslr.group,
                       params={"verbose": -1, "max_bin": 63}).construct()


PARAMS = {"learning_rate": 0.05, "num_leaves": 31, "verbose": -1, "force_row_wise": True, "max_bin": 63}


@pytest.mark.parametrize("objective", ["builtin", "lambdarank", "urisk", "saro"])
def test_round_lightgbm(benchmark, mslr, dataset, objective):
    benchmark.group = "ltr-round"
    if objective == "builtin":
        booster = lgb.Booster({**PARAMS, "objective": "lambdarank"}, dataset)
        step = booster.update
    else:
        obj = _objective(mslr, objective)
        booster = lgb.Booster({**PARAMS, "objective": "none"}, dataset)

        def step():
            return booster.update(fobj=obj)
    step()
    step()  # past the first (and, for SARO, the adaptive) iteration
    benchmark.pedantic(step, rounds=5, iterations=1)
