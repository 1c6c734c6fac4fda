"""The meta-evaluation kernels (fastrisk._kernels.metaeval) against the plain references of
tests/reference/metaeval.py and a hand computation of Sakai (2006), on inputs small enough for
the CI pass that runs the kernels as plain Python (NUMBA_DISABLE_JIT=1). The API, CLI, sweep,
figure and thread-count tests are in tests/test_metaeval.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import metaeval as ref

from fastrisk._kernels import metaeval as K
from fastrisk._runtime.rng import resolve_seed
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.inference.metaeval import discriminative_power, swap_rates


def _matrix(S=5, c=12, seed=0, lattice=False):
    g = np.random.default_rng(seed)
    X = g.integers(0, 11, (S, c)) / 10 if lattice else g.random((S, c))
    return ScoreMatrix.from_array(X)


def test_resample_counts_are_the_reference_draws():
    B, c = 300, 13
    blocks = K.resample_counts(np.uint64(7), B, c)
    C = np.concatenate(list(blocks), axis=1)[:, :B].T
    np.testing.assert_array_equal(C, ref.resample_counts(7, B, c))
    assert (C.sum(axis=1) == c).all()


@pytest.mark.parametrize("statistic, alpha, lattice, S", [
    ("mean", 0.0, False, 5), ("mean", 0.0, True, 5), ("trisk", 1.0, False, 5), ("trisk", 5.0, True, 5),
    ("urisk", 1.0, False, 5), ("urisk", 0.0, True, 5), ("urisk", 2.0, False, 3), ("mean", 0.0, False, 6)])
def test_pairs_match_the_reference_bit_for_bit(statistic, alpha, lattice, S):
    """Same seed, same counts and the same sums in the same order: every ASL count, threshold and
    difference required equal (lattice scores as P@10's make ties at the threshold common; 6 or 15
    pairs: a last pass of the kernel with fewer pairs than it takes, four for urisk, two else)."""
    m = _matrix(S=S, c=12, seed=3, lattice=lattice)
    B, lv = 200, 0.05
    r = discriminative_power(m, statistic=statistic, alpha=alpha, replicates=B, level=lv, rng=11)
    C = ref.resample_counts(resolve_seed(r.seed).kernel, B, m.n_topics)
    X = m.values
    names = list(m.systems)
    for p, (s, b) in enumerate(zip(r.pair_system, r.pair_baseline)):
        mean, obs, count, thr, diff = ref.sakai_pair(X, names.index(s), names.index(b), alpha,
                                                     statistic != "urisk", C, 10)
        assert r.estimate[p] == mean
        assert r.observed[p] == obs
        assert r.asl[p] == count / B
        assert r.threshold[p] == thr
        assert r.difference_required[p] == diff
    assert r.estimated_difference == r.difference_required.max()
    assert r.discriminative_power == np.mean(r.asl < lv)
    S = m.n_systems
    assert len(r.asl) == (S * (S - 1) if statistic in ("urisk", "trisk") else S * (S - 1) // 2)


def _sakai_by_hand(X, C, level):
    """Sakai (SIGIR 2006) in plain NumPy, written from his Figures 1 and 3 (and MATTERS'
    discriminativePower.m, a port of his code): for every pair e < b, z = X_e - X_b,
    w = z - mean(z); each resample w*_b of the topics (C[b, i] copies of topic i); ASL = #{b :
    |t(w*_b)| >= |t(z)|} / B; the ceil(B·level)-th largest |t(w*_b)| and the |mean(w*_b)| of the
    first replicate holding it; the estimate is the largest of these over all the pairs."""
    S, c = X.shape
    B = C.shape[0]
    k = math.ceil(B * level - 1e-9)
    rows = []
    for e in range(S):
        for b in range(e + 1, S):
            z = X[e] - X[b]
            t0 = abs(z.mean() / (z.std(ddof=1) / math.sqrt(c)))
            w = z - z.mean()
            ws = [np.repeat(w, C[r].astype(int)) for r in range(B)]
            m = np.array([x.mean() for x in ws])
            t = np.abs(m / (np.array([x.std(ddof=1) for x in ws]) / math.sqrt(c)))
            asl = np.mean(t >= t0)
            crit = np.sort(t)[::-1][k - 1]
            first = np.flatnonzero(t == crit)[0]
            rows.append((asl, crit, abs(m[first])))
    asl, crit, diff = map(np.array, zip(*rows))
    return asl, crit, diff, diff.max()


@pytest.mark.parametrize("B, level", [(1000, 0.05), (200, 0.0125), (300, 0.07)])
def test_difference_required_is_sakai_2006_by_hand(B, level):
    """The ASLs, critical values and difference required (Sakai 2006, Figure 3) against a plain
    NumPy computation of his definition, including a B·level that is not a whole number (200 x
    0.0125 = 2.5: the 3rd largest) and one that floats round up (300 x 0.07 = 21.000000000000004:
    the 21st)."""
    g = np.random.default_rng(17)
    X = 0.4 + 0.1 * np.arange(6)[:, None] / 6 + 0.2 * g.standard_normal((6, 15))
    r = discriminative_power(X, replicates=B, level=level, rng=5)
    C = ref.resample_counts(resolve_seed(r.seed).kernel, B, 15)
    asl, crit, diff, est = _sakai_by_hand(X, C, level)
    np.testing.assert_array_equal(r.asl, asl)
    np.testing.assert_allclose(r.threshold, crit, rtol=1e-9)
    np.testing.assert_allclose(r.difference_required, diff, rtol=1e-9)
    assert r.estimated_difference == pytest.approx(est, rel=1e-9)
    # the rank rounds up, so "ASL < level" and "observed > threshold" are the same test
    np.testing.assert_array_equal(r.asl < level, r.observed > r.threshold)


@pytest.mark.parametrize("statistic, which", [("zrisk", 0), ("georisk", 1)])
def test_zrisk_pairs_match_the_reference(statistic, which):
    m = _matrix(S=4, c=10, seed=5)
    B = 120
    r = discriminative_power(m, statistic=statistic, alpha=1.0, replicates=B, level=0.05, rng=2)
    C = ref.resample_counts(resolve_seed(r.seed).kernel, B, m.n_topics)
    I, J = np.triu_indices(4, 1)
    out = ref.zrisk_pairs(m.values, 2.0, C, 6, which, list(zip(I, J)))
    for p, (dl, count, thr) in enumerate(out):
        assert r.estimate[p] == pytest.approx(dl, rel=1e-13, abs=1e-15)
        assert r.asl[p] == count / B
        assert r.threshold[p] == pytest.approx(thr, rel=1e-12, abs=1e-15)


def test_zrisk_observed_is_fastrisk_zrisk():
    """The whole-matrix statistics of the unresampled matrix are fastrisk.zrisk's."""
    import fastrisk

    m = _matrix(S=6, c=15, seed=8)
    z, g = K.zrisk_observed(np.ascontiguousarray(m.values), 3.0)
    zr = fastrisk.zrisk(m, alpha=2.0)
    np.testing.assert_allclose(z, np.ravel(zr.zrisk), rtol=1e-10)
    np.testing.assert_allclose(g, np.ravel(zr.georisk), rtol=1e-10)


def test_mean_is_trisk_at_alpha_zero_and_symmetric():
    """TRisk at α = 0 is the paired t: its ordered pairs are the mean's pairs, both ways, same ASL."""
    m = _matrix(S=5, c=20, seed=9)
    a = discriminative_power(m, statistic="mean", replicates=200, rng=3)
    t = discriminative_power(m, statistic="trisk", alpha=0.0, replicates=200, rng=3)
    got = dict(zip(zip(t.pair_system, t.pair_baseline), t.asl))
    for s, b, v in zip(a.pair_system, a.pair_baseline, a.asl):
        assert got[(s, b)] == v and got[(b, s)] == v


def test_identical_systems_and_constant_offsets():
    """d = 0 everywhere: ASL 1; d a non-zero constant: ASL 0 (no resample reaches |t| = inf)."""
    X = np.array([[0.1, 0.5, 0.3, 0.9], [0.1, 0.5, 0.3, 0.9], [0.35, 0.75, 0.55, 1.15]])
    r = discriminative_power(X, replicates=100, rng=0)
    assert r.asl[0] == 1.0
    assert r.asl[1] < 0.05 and r.asl[2] < 0.05


@settings(max_examples=15, deadline=None)
@given(st.integers(3, 6), st.integers(4, 9), st.integers(0, 2**31))
def test_asl_is_a_probability_and_threshold_separates(S, c, seed):
    """Property: 0 <= ASL <= 1; a pair is significant (count < B·level) exactly when its observed
    statistic exceeds the B·level-th largest replicate statistic."""
    g = np.random.default_rng(seed)
    r = discriminative_power(g.random((S, c)), replicates=100, level=0.05, rng=seed)
    assert ((r.asl >= 0) & (r.asl <= 1)).all()
    sig = r.asl < 0.05
    np.testing.assert_array_equal(sig, r.observed > r.threshold)


@pytest.mark.parametrize("statistic, alpha, relative, bins", [
    ("mean", 0.0, False, [0.0, 0.05, 0.1, 0.3]), ("mean", 0.0, True, [0.0, 0.05, 0.1, 0.3]),
    ("urisk", 1.0, False, [0.0, 0.05, 0.1, 0.3]), ("trisk", 5.0, False, [0.0, 0.5, 1.0, 2.5]),
    ("zrisk", 1.0, False, [0.0, 0.5, 1.0, 2.0]), ("georisk", 5.0, False, [0.0, 0.02, 0.05, 0.1])])
def test_swap_counts_match_the_reference(statistic, alpha, relative, bins):
    m = _matrix(S=5, c=14, seed=4)
    r = swap_rates(m, statistic=statistic, alpha=alpha, sizes=[2, 4, 7], trials=25, bins=bins, relative=relative,
                   rng=6)
    total, swaps = ref.swap_counts(m.values, [2, 4, 7], 25, resolve_seed(r.seed).kernel, bins, relative, statistic, 1.0 + alpha)
    np.testing.assert_array_equal(r.total, total)
    np.testing.assert_array_equal(r.swaps, swaps)
    pairs = 20 if statistic in ("urisk", "trisk") else 10
    assert (r.total.sum(axis=1) == 25 * pairs).all()


@settings(max_examples=60, deadline=None)
@given(st.integers(100, 2000), st.integers(1, 120), st.integers(0, 2**31), st.booleans())
def test_select_is_the_kth_largest_lowest_replicate(size, k, seed, ties):
    """Both paths of the selection (the sampled pivot and the heap) give the k-th largest value
    and the lowest replicate holding it, as a full sort does."""
    g = np.random.default_rng(seed)
    x = (g.integers(0, 20, size) / 4.0) if ties else np.abs(g.standard_t(5, size))
    k = min(k, size)
    v, r = K._select(x, size, k)
    want, wr = ref._kth(x, k)
    assert v == want and r == wr


@settings(max_examples=60, deadline=None)
@given(st.integers(100, 1500), st.integers(1, 120), st.integers(0, 2**31), st.booleans(),
       st.sampled_from(["none", "below", "above", "max"]), st.floats(0.0, 3.0))
def test_count_select_both_paths_are_the_full_sort(size, k, seed, ties, pivot, t0):
    """`_count_select` (the pair's count and critical value) on every path against a full sort:
    no pivot (g = 0: `_select`), a pivot below the k-th largest (at least k kept: the partition of
    the kept values), and pivots above it or above every value (fewer than k kept: the fallback to
    `_select`), with ties (lattice values) and without."""
    g = np.random.default_rng(seed)
    x = (g.integers(0, 20, size) / 4.0) if ties else np.abs(g.standard_t(5, size))
    k = min(k, size)
    want, wr = ref._kth(x, k)
    piv = {"none": 0.0, "below": 0.9 * want, "above": want + 0.1, "max": x.max() + 1.0}[pivot]
    kept = int(np.sum(x >= piv))
    if pivot == "below" and want > 0:
        assert kept >= k  # the main path: the k-th largest of the kept values
    if pivot in ("above", "max"):
        assert kept < k  # the fallback: `_select` over all
    keep = np.full(size + 1, np.nan)
    idx = np.full(size + 1, -1, np.int64)
    cnt, v, r = K._count_select(x, size, k, t0, piv, keep, idx)
    assert cnt == int(np.sum(x >= t0))
    assert v == want and r == wr


def test_count_select_fallback_matches_the_main_path():
    """The same statistics through the fallback (a pivot above every value: nothing kept) and
    through the main path (a pivot just below the critical value) give the same answers."""
    g = np.random.default_rng(4)
    for _ in range(50):
        x = np.abs(g.standard_t(4, 1000))
        want = np.sort(x)[::-1][49]
        keep = np.empty(1001)
        idx = np.empty(1001, np.int64)
        main = K._count_select(x, 1000, 50, 2.0, 0.85 * want, keep, idx)
        fall = K._count_select(x, 1000, 50, 2.0, x.max() * 2, keep, idx)
        assert main == fall and main[1] == want
