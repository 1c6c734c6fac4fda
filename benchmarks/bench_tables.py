"""All-baseline URisk/TRisk tables (4 alpha) and ZRisk/GeoRisk: fastrisk vs NumPy peers.

Peers, measured side by side (``benchmark.group`` per workload):

- ``numpy_typical``: what a researcher writes: for every alpha and every baseline, broadcast
  the differences of all systems, build x and take mean and standard deviation.
- ``numpy_sums``: the best NumPy: per baseline, the four sufficient sums (sum d, d^2, n, n^2
  with n = min(d, 0)) once, every alpha derived from them.
- fastrisk: the blocked upper-triangle kernel (4 sums per unordered pair, every alpha in O(1)).

At 1,000 x 10,000 the typical NumPy version takes ~18 minutes, so it is measured at
200 x 10,000 instead (its cost is linear in S^2 c A). The slow peers run one round.
Run: ``pytest benchmarks/bench_tables.py --benchmark-columns=min,mean,rounds``, or
``python benchmarks/compare.py bench_tables.py -k test_table`` to compare the ratios with
``benchmarks/recorded/``.

**How close to the limit (1,000 x 10,000 x 4 alpha, the issue-31 aim: <= 0.45 s on two cores).**
The pass over topics is S (S - 1) / 2 x c = 5.0e9 pair-topics, each seven double-precision
operations in the vectorised inner loop (d = x - r, n = min(d, 0), p = d - n, two additions
and two fused multiply-adds), 3.5e10 in all; every alpha and the mirror pair then cost O(S^2 A).
Measured (CPU time, AMD EPYC Zen 4, 2 cores): 0.23 ns per pair-topic and core, i.e. about 0.6
cycles at the 2.6 GHz nominal clock, about 12 double operations per cycle of the 16 that the
four 256-bit floating-point pipes can start (512-bit instructions run as two halves on Zen 4).
Four of the seven operations (two subtractions, two additions) run only on the two add pipes,
and min on those or the multiply pipes: (4 or 5) / (2 x 4) = 0.5 to 0.625 cycles per pair-topic
is the bound, and the kernel runs within 20 % of it. So the pass is compute-bound, not
memory-bound: a tile's accumulator row (4 x 128 doubles) stays in
L1 and its 64-topic chunk (64 KB) in L2, and the matrix is read S / 128 times. At that bound the
pass takes 5e9 x 0.6 cycles / 2 cores / 2.6 GHz = 0.58 s on two idle cores (0.48 s at the
0.5-cycle bound); the moments,
refinement check and flags add about 0.05 s. The 0.45 s aim would need fewer than six
operations per pair-topic. The tempting GEMM (sum d^2 = sum a^2 + sum b^2 - 2 sum a b as one
BLAS matrix product, 1e10 flops, ~0.15 s here) is not used: the n and p sums are still needed per
pair and topic (min(d, 0) has no product form), so it would save one FMA of seven, and its
cancellation for nearly identical systems (exactly the pairs whose TRisk is large) would lose the
digits that the refinement keeps; nor would it keep the mirror sums exact (two identical systems
must get bit-identical rows, and ties in the ranks).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import memory_budget_ok
from scipy import special

import fastrisk
from fastrisk.core.tables import baseline_table
from fastrisk.core.zrisk import zrisk

ALPHAS = np.array([0.0, 1.0, 5.0, 10.0])


def numpy_typical(V, alphas):
    """URisk and TRisk (S, S, A): per alpha, per baseline, broadcast over systems and topics."""
    S, c = V.shape
    urisk = np.empty((S, S, alphas.size))
    trisk = np.empty((S, S, alphas.size))
    for k, a in enumerate(alphas):
        for b in range(S):
            d = V - V[b]
            x = np.where(d < 0, (1 + a) * d, d)
            u = x.mean(axis=1)
            se = x.std(axis=1, ddof=1) / np.sqrt(c)
            with np.errstate(divide="ignore", invalid="ignore"):
                urisk[:, b, k], trisk[:, b, k] = u, u / se
    return urisk, trisk


def numpy_sums(V, alphas):
    """URisk and TRisk (S, S, A) from four sufficient sums per baseline, every alpha derived."""
    S, c = V.shape
    sd = np.empty((S, S))
    sd2 = np.empty((S, S))
    sn = np.empty((S, S))
    sn2 = np.empty((S, S))
    for b in range(S):
        d = V - V[b]
        n = np.minimum(d, 0.0)
        sd[:, b] = d.sum(axis=1)
        sd2[:, b] = np.einsum("ij,ij->i", d, d)
        sn[:, b] = n.sum(axis=1)
        sn2[:, b] = np.einsum("ij,ij->i", n, n)
    a = alphas[None, None, :]
    sx = sd[..., None] + a * sn[..., None]
    sx2 = sd2[..., None] + (2 * a + a * a) * sn2[..., None]
    urisk = sx / c
    se = np.sqrt(np.maximum(sx2 - sx * sx / c, 0.0) / (c - 1) / c)
    with np.errstate(divide="ignore", invalid="ignore"):
        return urisk, urisk / se


def numpy_zrisk(V, loss_weights):
    """ZRisk (S, A) and GeoRisk with NumPy (rows = systems)."""
    c = V.shape[1]
    sys_tot, top_tot = V.sum(axis=1), V.sum(axis=0)
    e = np.outer(sys_tot, top_tot) / sys_tot.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(e > 0, (V - e) / np.sqrt(e), 0.0)
    zr = np.stack([np.where(z > 0, z, w * z).sum(axis=1) for w in loss_weights], axis=1)
    return zr, np.sqrt(V.mean(axis=1)[:, None] * special.ndtr(zr / c))


def _synthetic(S, c):
    rng = np.random.default_rng(1)
    values = rng.beta(0.6, 2.0, size=(S, c))
    return fastrisk.ScoreMatrix(values, [f"s{k}" for k in range(S)], range(c))


def _trec49():
    m, base = fastrisk.data.datasets.trec2012_web("err20")
    return m.with_system("indriCASP", [base[t] for t in m.topics])


SIZES = {"trec2012-49x50": None, "synthetic-200x10000": (200, 10000), "synthetic-1000x10000": (1000, 10000)}


@pytest.fixture(params=list(SIZES), scope="module")
def matrix(request):
    shape = SIZES[request.param]
    if shape is not None and not memory_budget_ok(8 * shape[0] * shape[1] * 6 + 8 * shape[0] ** 2 * 12):
        pytest.skip("not enough memory at this size")
    return request.param, _trec49() if shape is None else _synthetic(*shape)


def _table(m):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastrisk.ZeroVarianceWarning)
        return baseline_table(m, alpha=ALPHAS)


def test_table_fastrisk(benchmark, matrix):
    name, m = matrix
    benchmark.group = f"table-{name}"
    _table(m)  # warm-up: JIT compile excluded
    benchmark.pedantic(_table, (m,), rounds=3 if m.n_systems > 100 else 20, iterations=1)


def test_table_numpy_sums(benchmark, matrix):
    name, m = matrix
    benchmark.group = f"table-{name}"
    if m.n_systems <= 200:
        ours = _table(m)
        u, t = (np.moveaxis(a, 2, 0) for a in numpy_sums(m.values, ALPHAS))  # the table's [alpha, system, baseline]
        np.testing.assert_allclose(u, ours.urisk, rtol=1e-9, atol=1e-9)
        ok = np.isfinite(ours.trisk) & (ours.standard_error > 1e-9)
        np.testing.assert_allclose(t[ok], ours.trisk[ok], rtol=1e-6)
    benchmark.pedantic(numpy_sums, (m.values, ALPHAS), rounds=1 if m.n_systems > 100 else 5, iterations=1)


def test_table_numpy_typical(benchmark, matrix):
    name, m = matrix
    if m.n_systems > 200:
        pytest.skip("~18 minutes at 1,000 x 10,000: measured at 200 x 10,000 instead")
    benchmark.group = f"table-{name}"
    u, _ = numpy_typical(m.values, ALPHAS)
    np.testing.assert_allclose(np.moveaxis(u, 2, 0), _table(m).urisk, rtol=1e-9, atol=1e-9)
    benchmark.pedantic(numpy_typical, (m.values, ALPHAS), rounds=1 if m.n_systems > 100 else 5, iterations=1)


def test_zrisk_fastrisk(benchmark, matrix):
    name, m = matrix
    benchmark.group = f"zrisk-{name}"
    zrisk(m, alpha=ALPHAS)
    benchmark(zrisk, m, alpha=ALPHAS)


def test_zrisk_numpy(benchmark, matrix):
    name, m = matrix
    benchmark.group = f"zrisk-{name}"
    z, g = numpy_zrisk(m.values, 1 + ALPHAS)
    ours = zrisk(m, alpha=ALPHAS)
    np.testing.assert_allclose(z.T, ours.zrisk, rtol=1e-9, atol=1e-9)  # results are [alpha, system]
    np.testing.assert_allclose(g.T, ours.georisk, rtol=1e-9, atol=1e-12)
    benchmark(numpy_zrisk, m.values, 1 + ALPHAS)
