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
The pass over topics is S (S - 1) / 2 x c = 5.0e9 pair-topics; every alpha and the mirror pair
then cost O(S^2 A). Per pair-topic the kernel does five double-precision vector operations:
d = x - r, |d| (a bit mask), one addition (sum |d|) and two fused multiply-adds (sum d|d|,
sum d^2); sum d comes from the row sums and sum n, sum n^2 from n = (d - |d|) / 2 (the previous
kernel summed n, n^2, p, p^2: seven operations, four of them on the two add pipes).
Bound: Zen 4 runs 512-bit instructions as two 256-bit halves on four pipes (two add, two
multiply/FMA; the mask on any): 10 half-slots per 8 pair-topics / 4 pipes = 0.31 cycles per
pair-topic. Measured (CPU time, one thread, AMD EPYC Zen 4 at about 3.65 GHz, from a
dependent multiply-add chain): 0.138 ns = 0.50 cycles per pair-topic, 62 % of that bound
(0.223 ns before). The rest goes to the accumulators' loads and stores (three per four topics
and eight baselines; keeping them in registers needs a SIMD micro-kernel numba cannot express
without fastmath) and to the per-row loop set-up. Memory is not the limit: a tile's rows of
accumulators stay in L1 and its 64-topic chunk in L2; the matrix is read S / 256 times.
Whole table, one thread: 0.78 CPU-s (pass 0.69, moments of every alpha 0.07, the rest 0.02;
before: 1.17); on two threads 0.87 CPU-s in all, so about 0.44 s on two idle cores (the aim,
with no margin), and 0.21 s for the pass at the bound.
The tempting GEMM (sum d^2 = sum a^2 + sum b^2 - 2 sum a b) is not used: the pass needs d for
|d| and d|d| anyway, the product form cancels for nearly identical systems (the pairs whose
TRisk is large), and a BLAS product gives no guarantee that two identical rows get identical
bits (tied ranks) nor that the numbers do not depend on BLAS threads.
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


# ---------------------------------------------------------------------- corrected inferences (issue #37)
# The all-baseline table with the Edgeworth-corrected p-values (the costliest analytic correction:
# the sums of d^3, |d|^3, d^4 and d^3|d| per pair beside the table's three, in the same one pass)
# against the same table with Student's t and its p-values read (`table_corrected_t`; scipy's
# stdtr on first access, about 1 us a cell), the t table without its p-values
# (`table_corrected_t_no_pvalue`, the table's cost alone) and Hall's transformation (only the
# third-order sums): ratio peer / edgeworth, so 1 / ratio is the corrected table's relative cost. Not at
# 1,000 x 10,000 (three rounds of each would take minutes on the shared machine; the pass is the same kernel
# at every size).
#
# How close to the limit. The t table's pass costs five vector operations a pair-topic (d, |d|, one
# addition, two fused multiply-adds) and is bound by floating-point throughput. The corrected pass is the
# same kernel body (`fastrisk._kernels.tables._rows` at a literal order) over the same loaded data, plus
# q = d*d and two fused multiply-adds (d^3, |d|^3: Johnson, Hall; 8 operations) or five (+ d^4, d^3|d| and the
# product d|d|: Edgeworth; 11 operations). Each of the four sums needs at least one multiply-add a pair-topic
# and the products need q, so the pass cannot cost less than about 8/5 and 10/5 of the t pass on a
# throughput-bound core; ~1.5x and ~2x measured (CPU time, one thread, 200 x 10,000, load 3-5 on 2 cores).
# Two systems at a time (as the t pass) was tried: its fourteen accumulators stop the loop vectorising (3x
# slower), so the higher orders take one system at a time. Measured with this group (load 3.1-4.3 on 2
# cores, commit 31b880e): at 200 x 10,000 the Edgeworth table 207 ms, Hall's 158 ms, the t table 100 ms
# without its p-values and 144 ms with them (2.06x, 1.57x; 1.43x, 1.09x); at 49 x 50 2.3 ms, 2.1 ms, the t
# table 0.9 ms alone and 5.2 ms with its stdtr p-values (there the per-cell p-values, ~100 ns a cell for
# Edgeworth, dominate, not the pass).
CORRECTED_SIZES = ("trec2012-49x50", "synthetic-200x10000")


def _corrected(m, inference):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastrisk.ZeroVarianceWarning)
        table = baseline_table(m, alpha=ALPHAS, inference=inference)
        return table, table.pvalue


def _bench_corrected(benchmark, matrix, inference):
    name, m = matrix
    if name not in CORRECTED_SIZES:
        pytest.skip("the corrected table is measured at the two smaller sizes")
    benchmark.group = f"table-corrected-{name}"
    _corrected(m, inference)  # warm-up: JIT compile excluded
    benchmark.pedantic(_corrected, (m, inference), rounds=5 if m.n_systems > 100 else 30, iterations=1)


def test_table_corrected_fastrisk(benchmark, matrix):
    """The Edgeworth-corrected table (the group's "fastrisk")."""
    _bench_corrected(benchmark, matrix, "edgeworth")


def test_table_corrected_t(benchmark, matrix):
    """The same table with Student's t: ratio t / edgeworth = 1 / (the corrected table's relative cost)."""
    _bench_corrected(benchmark, matrix, "t")


def test_table_corrected_t_no_pvalue(benchmark, matrix):
    """The t table as `baseline_table` returns it, its p-values not read (they are computed on
    first access): the table's cost alone."""
    name, m = matrix
    if name not in CORRECTED_SIZES:
        pytest.skip("the corrected table is measured at the two smaller sizes")
    benchmark.group = f"table-corrected-{name}"
    _table(m)
    benchmark.pedantic(_table, (m,), rounds=5 if m.n_systems > 100 else 30, iterations=1)


def test_table_corrected_hall(benchmark, matrix):
    """Hall's transformation (third-order sums only; Johnson's costs the same)."""
    _bench_corrected(benchmark, matrix, "hall")
