"""Simulation-study workloads: many small collections, the test battery, the type I study.

Batched TRisk (URisk, SE_x, SE_J, TRisk: `fastrisk.risk` of a stack) over K simulated 2 x 50 collections against
vectorised NumPy (the same four arrays, like ``bench_risk.numpy_risk`` with a leading K axis)
and against a loop of today's per-collection calls (``ScoreMatrix`` + ``fastrisk.risk``,
measured on 1,000 collections: compare per-collection times). The battery (t, Wilcoxon,
sign; 0 resamples) against ``scipy.stats.ttest_rel(axis=-1)`` + ``wilcoxon(axis=-1)`` + a
vectorised binomial sign test; the resampling tests (bootstrap + permutation at B = 1,000)
against a per-collection loop of ``fastrisk.bootstrap`` + ``fastrisk.permutation_test``.
The study's battery (``protocol="urbano2019"``, 10^4 resamples: t, Wilcoxon, sign, centred
bootstrap, permutation, TRisk, ZRisk/GeoRisk flips) against the same battery in plain
NumPy/SciPy (vectorised over the resamples of each pair). The type I study end to end at a
size that fits a benchmark run (per-trial cost reported in ``extra_info``; extrapolate
linearly: every trial is independent).

The study's trial at the paper's resamples (group ``study-trial-<topics>-B<B>``): the battery
as a study trial on the study's pairs runs it (bootstrap, permutation, ZRisk and GeoRisk
resampled) with shared resamples (common random numbers, ``shared_resamples=True``) side by
side with independent draws, on two threads; ``ms_per_trial`` of both in ``extra_info``; the
same for the paper's own battery (t, Wilcoxon, sign, bootstrap, permutation: group
``study-trial-paper-<topics>-B<B>``). The product behind the shared resamples (group
``crn-product-<topics>``): `fastrisk._kernels.crn._product` (topic-order sums) against
``np.matmul`` (OpenBLAS ``dgemm``) on the same shapes, one thread each; ``ns_per_madd`` of both;
the float32 product of the filter against ``sgemm`` (group ``crn-product32-<topics>``). The
shared trial with float32 products and the float64 products side by side (group
``study-trial-crn-<battery>-<topics>-B<B>``).

Run: ``pytest benchmarks/bench_simulate.py --benchmark-columns=min,median,rounds``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import memory_budget_ok, side_by_side
from scipy import special, stats

import fastrisk
from fastrisk.simulate import battery, type1

SIZES = {"1e5": 100_000, "1e6": 1_000_000}
LOOP = 1000


def _pairs(K, c=50):
    rng = np.random.default_rng(12)
    x = rng.beta(0.6, 2.0, size=(K, 1, c))
    y = np.clip(x + rng.normal(0, 0.1, size=(K, 1, c)), 0, 1)
    return np.ascontiguousarray(np.concatenate([x, y], axis=1))


@pytest.fixture(params=list(SIZES), scope="module")
def stack(request):
    K = SIZES[request.param]
    if not memory_budget_ok(K * 100 * 8 * 4):  # the stack and the NumPy peer's temporaries
        pytest.skip("not enough memory for this size")
    return request.param, _pairs(K)


def numpy_trisk(V, alpha=5.0):
    """URisk, SE_x, jackknife SE and TRisk of run 1 vs run 0 for every collection."""
    c = V.shape[-1]
    d = V[:, 1] - V[:, 0]
    x = np.where(d < 0, (1 + alpha) * d, d)
    urisk = x.mean(axis=-1)
    se = x.std(axis=-1, ddof=1) / np.sqrt(c)
    loo = (c * urisk[:, None] - x) / (c - 1)
    se_j = np.sqrt((c - 1) / c * ((loo - loo.mean(axis=-1, keepdims=True)) ** 2).sum(axis=-1))
    return urisk, se, se_j, urisk / se


def test_trisk_fastrisk_batch(benchmark, stack):
    name, V = stack
    benchmark.group = f"trisk-2x50-{name}"
    fastrisk.risk(V[:10], 0, alpha=5)
    res = benchmark(fastrisk.risk, V, 0, alpha=5)
    benchmark.extra_info["ns_per_collection"] = benchmark.stats.stats.median / len(V) * 1e9
    u, se, sej, t = numpy_trisk(V)
    np.testing.assert_allclose(res.trisk[:, 0, 1], t, rtol=1e-9)
    np.testing.assert_allclose(res.se_jack[:, 0, 1], sej, rtol=1e-7)


def test_trisk_numpy(benchmark, stack):
    name, V = stack
    benchmark.group = f"trisk-2x50-{name}"
    benchmark(numpy_trisk, V)
    benchmark.extra_info["ns_per_collection"] = benchmark.stats.stats.median / len(V) * 1e9


def _loop_risk(V):
    topics = [str(i) for i in range(V.shape[-1])]
    for k in range(V.shape[0]):
        m = fastrisk.ScoreMatrix(V[k], ["base", "run"], topics)
        fastrisk.risk(m, "base", alpha=5)


def test_trisk_per_collection_loop(benchmark):
    V = _pairs(LOOP)
    benchmark.group = "trisk-2x50-loop-of-1000"
    _loop_risk(V[:2])
    benchmark.pedantic(_loop_risk, args=(V,), rounds=3, iterations=1)
    benchmark.extra_info["ns_per_collection"] = benchmark.stats.stats.median / LOOP * 1e9


def test_trisk_batch_on_the_loop_size(benchmark):
    V = _pairs(LOOP)
    benchmark.group = "trisk-2x50-loop-of-1000"
    fastrisk.risk(V[:2], 0, alpha=5)
    benchmark(fastrisk.risk, V, 0, alpha=5)
    benchmark.extra_info["ns_per_collection"] = benchmark.stats.stats.median / LOOP * 1e9


def scipy_battery(V):
    """t, Wilcoxon and sign test p-values (two-sided) of every collection, vectorised scipy."""
    d = V[:, 1] - V[:, 0]
    pt = stats.ttest_rel(V[:, 1], V[:, 0], axis=-1).pvalue
    pw = stats.wilcoxon(d, axis=-1).pvalue
    k = (d > 0).sum(axis=-1)
    n = k + (d < 0).sum(axis=-1)
    ps = np.minimum(1.0, 2 * np.minimum(special.bdtr(k, n, 0.5), special.bdtrc(k - 1, n, 0.5)))
    return pt, pw, ps


def test_battery_fastrisk(benchmark, stack):
    name, V = stack
    benchmark.group = f"battery-t-wilcoxon-sign-{name}"
    battery(V[:10], replicates=0)
    res = benchmark.pedantic(battery, args=(V,), kwargs={"replicates": 0}, rounds=3 if len(V) < 10**6 else 1,
                             iterations=1)
    benchmark.extra_info["ns_per_collection"] = benchmark.stats.stats.median / len(V) * 1e9
    pt, _, ps = scipy_battery(V[:1000])
    np.testing.assert_allclose(res.p("t")[:1000], pt, rtol=1e-9)
    np.testing.assert_allclose(res.p("sign")[:1000], ps, rtol=1e-9)


def test_battery_scipy(benchmark, stack):
    name, V = stack
    benchmark.group = f"battery-t-wilcoxon-sign-{name}"
    benchmark.pedantic(scipy_battery, args=(V,), rounds=3 if len(V) < 10**6 else 1, iterations=1)
    benchmark.extra_info["ns_per_collection"] = benchmark.stats.stats.median / len(V) * 1e9


B = 1000


def test_resampling_battery_fastrisk(benchmark):
    V = _pairs(LOOP)
    benchmark.group = "bootstrap+permutation-B1000-1000-collections"
    battery(V[:2], replicates=10, rng=1)
    benchmark.pedantic(battery, args=(V,), kwargs={"replicates": B, "rng": 1}, rounds=3, iterations=1)
    benchmark.extra_info["us_per_collection"] = benchmark.stats.stats.median / LOOP * 1e6


def _loop_resampling(V):
    topics = [str(i) for i in range(V.shape[-1])]
    for k in range(V.shape[0]):
        m = fastrisk.ScoreMatrix(V[k], ["base", "run"], topics)
        fastrisk.bootstrap(m, "base", alpha=0, replicates=B, method="percentile", rng=k)
        fastrisk.permutation_test(m, "base", alpha=0, replicates=B, rng=k)


def test_resampling_per_collection_loop(benchmark):
    V = _pairs(100)
    benchmark.group = "bootstrap+permutation-B1000-1000-collections"
    _loop_resampling(V[:2])
    benchmark.pedantic(_loop_resampling, args=(V,), rounds=3, iterations=1)
    benchmark.extra_info["us_per_collection"] = benchmark.stats.stats.median / 100 * 1e6
    benchmark.extra_info["note"] = "100 collections; compare us_per_collection"


RESAMPLES = 10_000
STUDY_PAIRS = 40


def _zg_numpy(S2, A2, N, W, c):
    """ZRisk and GeoRisk differences (y - x) of 2-run collections from S_y and A_y (vectorised)."""
    S1, A1 = N - S2, W - A2
    with np.errstate(divide="ignore", invalid="ignore"):
        r1, r2 = np.sqrt(S1 / N), np.sqrt(S2 / N)
        z1 = np.where(S1 > 0, A1 / r1 - W * r1, 0.0)
        z2 = np.where(S2 > 0, A2 / r2 - W * r2, 0.0)
    g1 = np.sqrt(np.maximum(S1, 0) / c * special.ndtr(z1 / c))
    g2 = np.sqrt(np.maximum(S2, 0) / c * special.ndtr(z2 / c))
    return z2 - z1, g2 - g1


def numpy_study_battery(V, B=RESAMPLES, seed=0):
    """Two-sided p-values of the study's battery (protocol urbano2019) for each pair, plain
    NumPy/SciPy: t, Wilcoxon (R's wilcox.test), sign (ties |d| <= 0.01), TRisk at 1 and 5
    vectorised over pairs; per pair, the bootstrap centred by the replicates' mean (a B x c
    index matrix), the permutation test and the ZRisk/GeoRisk flips (one B x c sign matrix,
    matrix products). The same work as `battery(..., protocol="urbano2019")`, other streams."""
    rng = np.random.default_rng(seed)
    K, _, c = V.shape
    d = V[:, 1] - V[:, 0]
    out = np.empty((K, 8))
    out[:, 0] = stats.ttest_rel(V[:, 1], V[:, 0], axis=-1).pvalue
    out[:, 1] = stats.wilcoxon(d, axis=-1, correction=True, method="exact" if c < 50 else "approx").pvalue
    k = (d > 0.01).sum(axis=-1)
    n = k + (d < -0.01).sum(axis=-1)
    out[:, 2] = np.minimum(1.0, 2 * np.minimum(special.bdtr(k, n, 0.5), special.bdtrc(k - 1, n, 0.5)))
    for j, alpha in ((3, 1.0), (4, 5.0)):
        out[:, j] = 2 * stats.t.sf(np.abs(numpy_trisk(V, alpha)[3]), c - 1)
    for q in range(K):
        x, y = V[q]
        m = d[q].mean()
        means = d[q][rng.integers(0, c, size=(B, c))].mean(axis=1)
        out[q, 5] = np.mean(np.abs(means - means.mean()) >= abs(m))
        s = np.where(rng.integers(0, 2, size=(B, c), dtype=np.uint8), 1.0, -1.0)
        out[q, 6] = np.mean(np.abs(s @ d[q] / c) >= abs(m))
        T = x + y
        rt = np.sqrt(T)
        N, W = T.sum(), rt.sum()
        zo, go = _zg_numpy(y.sum(), (y / rt).sum(), N, W, c)
        zs, gs = _zg_numpy(0.5 * N + s @ (0.5 * d[q]), (0.5 * T / rt).sum() + s @ (0.5 * d[q] / rt), N, W, c)
        out[q, 7] = min(1.0, 2 * min(np.mean(gs >= go), np.mean(gs <= go)))
    return out


def _study_pairs():
    return _pairs(STUDY_PAIRS)


def test_study_battery_fastrisk(benchmark):
    """The study's battery at 10^4 resamples on 40 pairs of 50 topics (the per-trial cost of a
    type I study once the scores are drawn); ``ms_per_pair`` in ``extra_info``."""
    V = _study_pairs()
    benchmark.group = "study-battery-B10000-40-pairs-of-50"
    battery(V[:2], replicates=100, rng=1, protocol="urbano2019")
    res = benchmark.pedantic(battery, args=(V,), kwargs={"replicates": RESAMPLES, "rng": 1, "protocol": "urbano2019"},
                             rounds=5, iterations=1)
    benchmark.extra_info["ms_per_pair"] = benchmark.stats.stats.median / len(V) * 1e3
    ref = numpy_study_battery(V[:8])
    np.testing.assert_allclose(res.p("t")[:8], ref[:, 0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(res.p("bootstrap")[:8], ref[:, 5], atol=0.03)  # other streams: Monte-Carlo error
    np.testing.assert_allclose(res.p("permutation")[:8], ref[:, 6], atol=0.03)


def test_study_battery_numpy(benchmark):
    V = _study_pairs()
    benchmark.group = "study-battery-B10000-40-pairs-of-50"
    numpy_study_battery(V[:1], B=100)
    benchmark.pedantic(numpy_study_battery, args=(V,), rounds=3, iterations=1)
    benchmark.extra_info["ms_per_pair"] = benchmark.stats.stats.median / len(V) * 1e3


TRIALS, REPS = 2000, RESAMPLES
SMALL = ["web2013_err20"]  # the smallest bundled collection (34 runs; 30 kept, 435 pairs)


def test_type1_study_end_to_end(benchmark, tmp_path):
    """The published protocol, ERR@20 of web2013, 50 topics, fitted models from the cache: the
    first call fits them (and warms the JIT), the measured call runs the study alone."""
    benchmark.group = "type1-study"
    kw = {"collections": SMALL, "topics": 50, "progress": False, "cache": tmp_path}
    type1("err20", trials=200, replicates=10, rng=0, **kw)
    benchmark.pedantic(type1, args=("err20",), kwargs={"trials": TRIALS, "replicates": REPS, "rng": 1, **kw},
                       rounds=1, iterations=1)
    per_trial = benchmark.stats.stats.median / TRIALS
    benchmark.extra_info["ms_per_trial"] = per_trial * 1e3


def test_fit_one_collection(benchmark, tmp_path):
    """Margins of every kept run and the copula of every pair (all families, MLE, AIC) of the
    smallest bundled collection, in-process (the cost per pair is in ``extra_info``)."""
    from fastrisk.simulate.fits import fit_collections

    benchmark.group = "simulate-fit"
    fit = benchmark.pedantic(fit_collections, args=(SMALL,), kwargs={"cache": tmp_path, "refit": True}, rounds=1,
                             iterations=1)[SMALL[0]]
    benchmark.extra_info["ms_per_pair"] = benchmark.stats.stats.median / len(fit.copulas) * 1e3


def _pyvinecopulib_loglik(u, family, rotation, ttype):
    """The log-likelihood through ``pyvinecopulib.Bicop.loglik``, its parameters set at each
    call (the path before the compiled kernels, with VineCopula's floors); it has no compiled
    ``fg``, so `_r_lbfgsb` differences it in Python, as before."""
    import pyvinecopulib as pv  # optional dependency (the simulation extra)

    from fastrisk.simulate import copulas

    cop = pv.Bicop(family=getattr(pv.BicopFamily, family), rotation=rotation)
    default = -1e10 if family == "student" else -1e250

    def ll(x, floor=None):
        floor = default if floor is None else floor
        try:
            cop.parameters = copulas._params(family, ttype, x)
            v = cop.loglik(u)
        except (ValueError, RuntimeError):
            return floor
        return v if math.isfinite(v) and v > floor else floor
    return ll


def test_fit_pairs_side_by_side(benchmark):
    """40 copula selections (``BiCopSelect`` by AIC) of web2013_err20's pairs, in-process: the
    compiled log-likelihoods (`fastrisk._kernels.copulas`) against the same procedure (the
    same starts, Brent and L-BFGS-B) on pyvinecopulib's ``Bicop.loglik``. The models before
    issue #31 item 4 (pyvinecopulib's own MLE for the t and BB families) cost 12.3 ms a pair
    of adhoc8_ap in-process; the whole bundled set: ``fastrisk simulate fit --processes 2``
    (docs/simulation.md)."""
    from fastrisk.data.datasets import trec_matrix
    from fastrisk.simulate import copulas, fits
    from fastrisk.simulate.measures import kept_runs

    v = np.asarray(trec_matrix(SMALL[0]).values, dtype=np.float64)
    kept, _ = kept_runs(v)
    V, seed = v[kept], fits.ties_base_seed(v, "err20")
    pairs = [(i, j) for i in range(len(kept)) for j in range(i + 1, len(kept))][::11][:40]
    benchmark.group = "simulate-fit-40-pairs"

    def through_pyvinecopulib():
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(copulas, "_loglik_fn", _pyvinecopulib_loglik)
            return fits._fit_pairs(V, pairs, seed)

    new, peer = fits._fit_pairs(V, pairs, seed), through_pyvinecopulib()
    same = sum(new[k]["vinecopula"] == peer[k]["vinecopula"] for k in new)
    assert same >= 0.9 * len(pairs)  # the same densities to ~1e-9: paths apart by rounding only
    ratios = side_by_side(benchmark, lambda: fits._fit_pairs(V, pairs, seed),
                          {"pyvinecopulib_loglik": through_pyvinecopulib}, blocks=7, block_seconds=0.5)
    benchmark.extra_info["ms_per_pair"] = benchmark.stats.stats.median / len(pairs) * 1e3
    assert ratios["pyvinecopulib_loglik"] > 0


#: The study's trial costs: (replicates, pairs a call with shared resamples, pairs a call with
#: independent draws) by size. Shared: the study's blocks of 1,000 trials share their draws (256
#: at 10^6, to keep a call near a second); independent draws cost the same per trial whatever
#: the pairs.
TRIAL_SIZES = {"1e4": (10**4, 1000, 256), "1e5": (10**5, 1000, 64), "1e6": (10**6, 256, 16)}
TRIAL_AIMS = {"1e5": 1.0, "1e6": 4.0}  # ms a trial on two cores with shared resamples (issue #31)


def _trial_battery(size, topics, tests):
    """(B, shared pairs, independent pairs, battery keywords) of a study trial benchmark."""
    from fastrisk.simulate.grid import PAPER_TESTS, trial_tests

    B, T, Ti = TRIAL_SIZES[size]
    want = trial_tests()["main"] if tests == "full" else list(PAPER_TESTS)
    return B, _pairs(T, topics), _pairs(Ti, topics), dict(replicates=B, rng=1, protocol="urbano2019", tests=want,
                                                            threads=2)


@pytest.mark.parametrize("tests", ["full", "paper"])
@pytest.mark.parametrize("topics", [25, 50, 100])
@pytest.mark.parametrize("size", list(TRIAL_SIZES))
def test_study_trial_shared_vs_independent(benchmark, size, topics, tests):
    """One trial of the study on its own pairs (the battery's tests that a trial keeps there:
    t, Wilcoxon, sign, bootstrap, permutation, ZRisk, GeoRisk; or the paper's five),
    ``protocol="urbano2019"``, two threads: shared resamples (ours, on a block of the study's
    trials) against independent draws (fewer pairs a call: the same cost per trial), alternating
    blocks; ``ms_per_trial`` of both and their ratio per trial in ``extra_info``."""
    B, V, Vi, kw = _trial_battery(size, topics, tests)

    def shared():
        return battery(V, start=0, shared_resamples=True, **kw)

    def independent():
        return battery(Vi, **kw)

    benchmark.group = f"study-trial-{topics}-B{size}" if tests == "full" else f"study-trial-paper-{topics}-B{size}"
    battery(V[:2], replicates=100, rng=1, protocol="urbano2019", shared_resamples=True)  # compiled
    side_by_side(benchmark, shared, {"independent": independent}, blocks=3 if B >= 10**6 else 5, block_seconds=0.0,
                 aim=TRIAL_AIMS.get(size))
    med = benchmark.extra_info["median_seconds"]
    ms = {"shared": med["fastrisk"] / len(V) * 1e3, "independent": med["independent"] / len(Vi) * 1e3}
    benchmark.extra_info["ms_per_trial"] = ms
    ratio = ms["independent"] / ms["shared"]  # per trial: the two calls score different numbers of pairs
    benchmark.extra_info["ratio_independent_over_shared"] = ratio
    benchmark.extra_info["ratio_peer_over_fastrisk"] = {"independent": ratio}


@pytest.mark.parametrize("tests", ["full", "paper"])
@pytest.mark.parametrize("topics", [25, 50, 100])
@pytest.mark.parametrize("size", ["1e5", "1e6"])
def test_study_trial_float32_vs_float64_products(benchmark, size, topics, tests):
    """The shared resamples' trial as above with its products in float32 and each replicate
    decided from its float32 sum where the error bound allows (ours, the default) against the
    float64 products (``SINGLE_PRODUCTS = False``, the code before): the same counts bit for bit,
    checked here; ``ms_per_trial`` of both in ``extra_info``."""
    import importlib

    module = importlib.import_module("fastrisk.simulate.battery")
    B, V, _, kw = _trial_battery(size, topics, tests)

    def single():
        return battery(V, start=0, shared_resamples=True, **kw)

    def double():
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(module, "SINGLE_PRODUCTS", False)
            return battery(V, start=0, shared_resamples=True, **kw)

    benchmark.group = f"study-trial-crn-{tests}-{topics}-B{size}"
    np.testing.assert_array_equal(single().pvalue, double().pvalue)
    side_by_side(benchmark, single, {"float64": double}, blocks=3 if B >= 10**6 else 5, block_seconds=0.0,
                 aim=TRIAL_AIMS.get(size))
    med = benchmark.extra_info["median_seconds"]
    benchmark.extra_info["ms_per_trial"] = {k: v / len(V) * 1e3 for k, v in med.items()}


def _product_vs_blas(benchmark, topics, dtype):
    """`_product` (float64) or `_product8` (float32) on 32 rows x a block of resamples, as a work
    unit computes them, against ``np.matmul`` (OpenBLAS ``dgemm`` / ``sgemm``), one thread each;
    ``ns_per_madd`` of both in ``extra_info``."""
    from fastrisk._kernels import crn
    from fastrisk._runtime.threads import blas_threads

    single = dtype == np.float32
    nb, rows = int(crn.block_size32(topics) if single else crn.block_size(topics)), crn.TILE
    g = np.random.default_rng(0)
    M = g.standard_normal((rows, topics)).astype(dtype)
    A = g.integers(0, 3, (topics, nb)).astype(dtype)
    out, out2 = np.empty((rows, nb), dtype), np.empty((rows, nb), dtype)
    kernel = crn._product8 if single else crn._product

    def ours():
        kernel(M, 0, rows, A, nb, out)

    def blas():
        np.matmul(M, A, out=out2)

    peer = "sgemm" if single else "dgemm"
    benchmark.group = f"crn-product32-{topics}" if single else f"crn-product-{topics}"
    with blas_threads(1):
        side_by_side(benchmark, ours, {peer: blas}, blocks=21, block_seconds=0.02)
    np.testing.assert_allclose(out, out2, rtol=1e-4 if single else 1e-12, atol=1e-3 if single else 1e-9)
    med = benchmark.extra_info["median_seconds"]
    benchmark.extra_info["ns_per_madd"] = {k: v / (rows * nb * topics) * 1e9 for k, v in med.items()}


@pytest.mark.parametrize("topics", [25, 50, 100])
def test_crn_product_vs_dgemm(benchmark, topics):
    """The shared resamples' product (32 rows x a block of `block_size` resamples, as a work
    unit computes it) by `fastrisk._kernels.crn._product` (each sum in topic order, no FMA)
    against ``np.matmul`` (OpenBLAS dgemm, one thread) on the same arrays."""
    _product_vs_blas(benchmark, topics, np.float64)


@pytest.mark.parametrize("topics", [25, 50, 100])
def test_crn_product32_vs_sgemm(benchmark, topics):
    """The float32 product of the shared resamples' filter (32 rows x a block of `block_size32`
    resamples) by `fastrisk._kernels.crn._product8` (eight rows and four topics a pass) against
    ``np.matmul`` in float32 (OpenBLAS ``sgemm``, one thread) on the same arrays."""
    _product_vs_blas(benchmark, topics, np.float32)
