"""Bootstrap, permutation test and jackknife: kernels against plain references, scipy
agreement, determinism, coverage and error messages."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import resampling as ref
from scipy import stats

from fastrisk._kernels import resampling as K
from fastrisk._kernels._jit import njit
from fastrisk._runtime.rng import resolve_seed
from fastrisk.data.io import read_matrix
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.errors import InputError
from fastrisk.inference.resampling import bootstrap, jackknife, permutation_test, t_test
from fastrisk.inference.resampling._engine import _Stream


@njit
def mean_statistic(x):
    """The arithmetic mean, as a jitted statistic (to compare the gather and matrix paths)."""
    s = 0.0
    for v in x:
        s += v
    return s / x.shape[0]


SETTINGS = settings(max_examples=25, deadline=None)


@pytest.fixture(scope="module")
def small():
    return np.random.default_rng(7).normal(0.05, 0.3, (3, 12))


@pytest.fixture(scope="module")
def trec(bench_data):
    matrix = read_matrix(bench_data / "trec-matrices" / "web2012_err20.csv")
    matrix = ScoreMatrix(matrix.values, matrix.systems, [str(t) for t in range(151, 201)])
    base = read_matrix(bench_data / "trec2012-web" / "baseline-indriCASP.csv")
    return matrix, dict(zip(base.topics, base.scores_of("err20")))


# ---------------------------------------------------------------------- kernels vs reference
def test_counts_and_indices_follow_the_reference_stream():
    c, seed = 9, 12345
    W = np.empty((5, c))
    K.multinomial_counts(seed, 3, W)
    idx = np.empty(c, np.int64)
    for r in range(5):
        drawn = ref.resampled_topics(seed, 3 + r, c)
        K.draw_indices(seed, 3 + r, idx)
        assert idx.tolist() == drawn
        assert W[r].tolist() == np.bincount(drawn, minlength=c).astype(float).tolist()


def test_topic_draws_reject_as_lemire_when_the_range_does_not_divide_2_32():
    """The rejection step of the multiply-shift, on a range where it rejects about half the
    words (n = 2^31 + 1: 2^32 mod n = 2^31 - 1), against the reference, and the uniformity of
    the topics a replicate draws (chi-square over 200,000 draws of c = 7)."""
    from fastrisk._kernels._random import stream_state

    n, seed = (1 << 31) + 1, 77
    state, bits, half = stream_state(seed, 5), 0, 0
    got = []
    for _ in range(40):  # (the position comes back as Python ints: passed on as uint64 again)
        state, bits, half, k = K._next_topic(np.uint64(state), np.uint64(bits), half, np.uint64(n),
                                             np.uint64((1 << 32) % n))
        got.append(int(k))
    assert got == ref.topics_below(seed, 5, n, 40)
    W = np.empty((200_000 // 7, 7))
    K.multinomial_counts(3, 0, W)
    assert stats.chisquare(W.sum(axis=0)).pvalue > 1e-4


def test_sign_flips_follow_the_reference_stream():
    c, seed = 70, 99  # more than 64 topics: two draws per replicate
    F = np.empty((4, c))
    K.sign_flips(seed, 10, F)
    for r in range(4):
        assert F[r].tolist() == ref.signs(seed, 10 + r, c)
    E = np.empty((8, 3))
    K.exact_sign_flips(0, E)
    assert {tuple(row) for row in E.tolist()} == {(a, b, c) for a in (-1.0, 1.0) for b in (-1.0, 1.0)
                                                 for c in (-1.0, 1.0)}


def test_drivers_give_the_same_numbers_however_the_work_is_split():
    """The engine hands blocks of replicates and ranges of columns to its threads: any split
    gives the numbers of one call over everything."""
    a, b = np.empty((300, 7)), np.empty((300, 7))
    K.multinomial_counts(4, 0, a)
    K.multinomial_counts(4, 0, b[:100])
    K.multinomial_counts(4, 100, b[100:])
    np.testing.assert_array_equal(a, b)
    K.sign_flips(4, 9, a)
    K.sign_flips(4, 9, b[:150])
    K.sign_flips(4, 159, b[150:])
    np.testing.assert_array_equal(a, b)
    v = np.random.default_rng(0).normal(0, 1, (5, 2500))
    outs = []
    for ranges in ([(0, 5)], [(0, 2), (2, 3), (3, 5)]):
        s = _Stream(5, 2500, np.ones(5), np.full(5, 0.1))
        s.set_windows(np.full((5, 2), -0.5), np.full((5, 2), 0.5), np.full((5, 2), 2500))
        s.hist = np.zeros((5, s.nbins + 2), np.int64)
        for k0, k1 in ranges:
            K.stream_pass1(k0, k1, v, s.center, s.obs, s.gamma, 1024, 0, s.wlo, s.whi, s.cap, s.woffset, s.below,
                           s.wfill, s.wbuffer, s.block_sums, s.counts)
            K.stream_histogram(k0, k1, v, s.lo, s.scale, s.nbins, s.hist)
        s.prepare(np.tile([0.05, 0.95], (5, 1)))
        for k0, k1 in reversed(ranges):
            K.stream_pass2(k0, k1, v, s.lo, s.scale, s.nbins, s.target, s.offset, s.fill, s.buffer)
        inside = [np.sort(s.wbuffer[o:o + f]) for o, f in zip(s.woffset.ravel(), s.wfill.ravel())]
        outs.append((s.hist, s.counts, s.block_sums, s.below, s.wfill, np.concatenate(inside), s.quantiles()))
    for x, y in zip(*outs):
        np.testing.assert_array_equal(x, y)
    _, counts, sums, below, wfill, _, _ = outs[0]  # and they are the counts and sums they claim to be
    d = v - 0.0
    np.testing.assert_array_equal(counts[:, 0], (d < 0).sum(axis=1))
    np.testing.assert_array_equal(counts[:, 4], (np.abs(d) >= 0.1 - s.gamma[:, None]).sum(axis=1))
    np.testing.assert_allclose(sums.sum(axis=0)[:, 0], d.sum(axis=1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sums.sum(axis=0)[:, 1], (d * d).sum(axis=1), rtol=1e-12)
    np.testing.assert_array_equal(below[:, 0], (v < -0.5).sum(axis=1))
    np.testing.assert_array_equal(wfill[:, 1], ((v >= -0.5) & (v <= 0.5)).sum(axis=1))


def test_matrix_path_equals_gather_path_replicate_by_replicate(small):
    fast = bootstrap(small, replicates=300, rng=5, keep_replicates=True, method="percentile")
    gather = bootstrap(small, replicates=300, rng=5, keep_replicates=True, method="percentile",
                       statistic=mean_statistic)
    assert fast.path == "linear" and gather.path == "generic"
    np.testing.assert_allclose(fast.bootstrap_distribution, gather.bootstrap_distribution, rtol=0, atol=1e-14)
    expected = ref.bootstrap_statistics(small.tolist(), resolve_seed(fast.seed).kernel, 300)
    np.testing.assert_allclose(fast.bootstrap_distribution[0], expected, rtol=0, atol=1e-14)


def test_generic_statistic_matches_reference(small):
    def trimmed(x):
        s = np.sort(x)
        return s[1:-1].mean()

    res = bootstrap(small, replicates=50, rng=3, statistic=trimmed, keep_replicates=True, method="percentile")
    expected = ref.bootstrap_statistics(small.tolist(), resolve_seed(res.seed).kernel, 50,
                                        statistic=lambda v: float(np.mean(sorted(v)[1:-1])))
    np.testing.assert_allclose(res.bootstrap_distribution[0], expected, rtol=1e-12)


def _exact_quantiles(v, probs, windows=None):
    """Quantiles of the rows of ``v`` through a _Stream, in chunks of 1024 (windows, then fallback)."""
    M, B = v.shape
    s = _Stream(M, B, np.linspace(0.5, 1.0, M), np.linspace(-0.2, 0.1, M))
    if windows is not None:
        s.set_windows(*windows)
    for start in range(0, B, 1024):
        s.pass1(start, np.ascontiguousarray(v[:, start:start + 1024]))
    if s.from_windows(probs):
        return s.quantiles(), True
    for start in range(0, B, 1024):
        s.histogram_pass(np.ascontiguousarray(v[:, start:start + 1024]))
    s.prepare(probs)
    for start in range(0, B, 1024):
        s.pass2(np.ascontiguousarray(v[:, start:start + 1024]))
    return s.quantiles(), False


@SETTINGS
@given(st.integers(1, 3000), st.sampled_from([0.0, 0.001, 0.025, 0.3, 0.5, 0.975, 1.0]),
       st.sampled_from(["normal", "ties", "wide"]), st.integers(0, 2**32), st.booleans())
def test_streamed_quantiles_are_exact_order_statistics(B, q, kind, seed, windows):
    rng = np.random.default_rng(seed)
    if kind == "normal":
        v = rng.normal(0, 1, (2, B))
    elif kind == "ties":
        v = rng.integers(-3, 4, (2, B)).astype(float)
    else:  # far outside the histogram range
        v = rng.standard_cauchy((2, B)) * 100
    probs = np.array([[q, 1 - q], [q, 0.5]])
    win = None
    if windows:  # windows around the true quantiles: the one-pass path
        want = np.array([[np.quantile(v[0], q), np.quantile(v[0], 1 - q)], [np.quantile(v[1], q), np.quantile(v[1], 0.5)]])
        win = (want - 0.3, want + 0.3, np.full((2, 2), B))
    got, one_pass = _exact_quantiles(v, probs, win)
    if not windows or (kind == "normal" and B >= 1000 and q not in (0.001,)):
        # (at q = 0.001 of a few thousand draws the tail window may hold too few values to
        # place both order statistics, and the exact second pass is the documented fallback)
        assert one_pass == windows
    want = np.array([[np.quantile(v[0], q), np.quantile(v[0], 1 - q)], [np.quantile(v[1], q), np.quantile(v[1], 0.5)]])
    np.testing.assert_array_equal(got, want)
    assert abs(got[0, 0] - ref.quantile_linear(v[0].tolist(), q)) <= 1e-12 * max(1.0, abs(got[0, 0]))


def test_windows_that_miss_or_overflow_fall_back_to_the_exact_path():
    v = np.random.default_rng(1).normal(0, 1, (1, 5000))
    probs = np.array([[0.025, 0.975]])
    want = np.quantile(v[0], [0.025, 0.975])
    miss = (np.array([[0.5, 0.6]]), np.array([[0.7, 0.8]]), np.array([[5000, 5000]]))
    small_cap = (np.array([[-3.0, 1.0]]), np.array([[-1.0, 3.0]]), np.array([[10, 10]]))
    for win in (miss, small_cap):
        got, one_pass = _exact_quantiles(v, probs, win)
        assert not one_pass
        np.testing.assert_array_equal(got[0], want)


def test_a_window_that_misses_is_settled_from_the_kept_replicates():
    """With the replicates kept, an order statistic outside its window (a column whose
    prediction was off) is selected from its column: no second pass over the others."""
    v = np.random.default_rng(2).normal(0, 1, (3, 5000))
    probs = np.tile([0.025, 0.975], (3, 1))
    want = np.quantile(v, [0.025, 0.975], axis=1).T
    wlo, whi = want - 0.2, want + 0.2
    wlo[1, 0], whi[1, 0] = 0.5, 0.7  # column 1's lower window misses; column 2's upper one overflows
    cap = np.full((3, 2), 5000)
    cap[2, 1] = 10
    s = _Stream(3, 5000, np.ones(3), np.zeros(3))
    s.set_windows(wlo, whi, cap)
    s.pass1(0, v)
    assert not s.from_windows(probs)
    assert s.from_windows(probs, v)
    np.testing.assert_array_equal(s.quantiles(), want)


@pytest.mark.parametrize("pilot", [None, 1024])
def test_bootstrap_quantiles_equal_numpy_on_the_kept_replicates(pilot, monkeypatch):
    if pilot is not None:  # place the windows from the first 1024 replicates (the predicted windows
        # of the mean, which make the pilot unnecessary, switched off)
        from fastrisk.inference.resampling import _engine, procedures

        monkeypatch.setattr(_engine, "_PILOT", pilot)
        monkeypatch.setattr(procedures, "_predict_windows", lambda *args: None)
    x = np.random.default_rng(2).gamma(1.0, 0.2, (3, 25))
    for method in ("percentile", "bca", "studentized"):
        res = bootstrap(x, replicates=4000, rng=3, method=method, keep_replicates=True)
        reps = res.bootstrap_distribution[0]
        if method == "percentile":  # exactly numpy's quantiles of the replicates, at the levels the
            level = (1 - 0.95) / 2  # interval uses (as scipy's: 0.025000000000000022, not 0.025)
            np.testing.assert_array_equal(res.confidence_interval.low[0], np.quantile(reps, level, axis=1))
            np.testing.assert_array_equal(res.confidence_interval.high[0], np.quantile(reps, 1 - level, axis=1))
        for chunk_size in (None, 1024):  # one chunk or four
            streamed = bootstrap(x, replicates=4000, rng=3, method=method, keep_replicates=False,
                                 chunk_size=chunk_size)
            np.testing.assert_array_equal(streamed.confidence_interval.low, res.confidence_interval.low)
            np.testing.assert_array_equal(streamed.confidence_interval.high, res.confidence_interval.high)


# ---------------------------------------------------------------------- determinism
def test_same_seed_same_numbers_any_chunking_threads_or_keep(small):
    rows = np.random.default_rng(1).normal(0, 1, (4, 20))
    args = dict(replicates=3000, rng=11, method="bca", test="t")
    a = bootstrap(rows, chunk_size=1024, threads=1, keep_replicates=True, **args)
    b = bootstrap(rows, threads=2, keep_replicates=False, **args)
    c = bootstrap(rows, chunk_size=2048, threads=2, keep_replicates=True, **args)
    for r in (b, c):
        for name in ("statistic", "standard_error", "pvalue", "bias"):
            np.testing.assert_array_equal(getattr(a, name), getattr(r, name))
        np.testing.assert_array_equal(a.confidence_interval.low, r.confidence_interval.low)
        np.testing.assert_array_equal(a.confidence_interval.high, r.confidence_interval.high)
    np.testing.assert_array_equal(a.bootstrap_distribution, c.bootstrap_distribution)
    p1 = permutation_test(rows, replicates=3000, rng=4, chunk_size=1024, threads=1)
    p2 = permutation_test(rows, replicates=3000, rng=4, threads=2)
    np.testing.assert_array_equal(p1.pvalue, p2.pvalue)
    assert bootstrap(rows, replicates=200, rng=1).seed == bootstrap(rows, replicates=200, rng=1).seed
    assert not np.array_equal(bootstrap(rows, replicates=200, rng=1, keep_replicates=True).bootstrap_distribution,
                              bootstrap(rows, replicates=200, rng=2, keep_replicates=True).bootstrap_distribution)


@pytest.mark.slow  # compiles the generic path at two thread counts: ~13 s
def test_generic_path_is_deterministic_across_threads(small):
    def med(x):
        return np.median(x)

    a = bootstrap(small, replicates=500, rng=2, statistic=med, threads=1, chunk_size=1024)
    b = bootstrap(small, replicates=500, rng=2, statistic=med, threads=2)
    np.testing.assert_array_equal(a.confidence_interval.low, b.confidence_interval.low)
    np.testing.assert_array_equal(a.standard_error, b.standard_error)


# ---------------------------------------------------------------------- agreement with scipy
@pytest.mark.parametrize("method", ["percentile", "basic", "bca"])
def test_intervals_agree_with_scipy_bootstrap(method):
    x = np.random.default_rng(3).gamma(2.0, 0.1, (2, 40))
    ours = bootstrap(x, replicates=20000, rng=1, method=method)
    theirs = stats.bootstrap((x,), np.mean, axis=-1, n_resamples=20000, method=method, rng=0)
    se = theirs.standard_error
    np.testing.assert_allclose(ours.standard_error[0], se, rtol=0.05)
    np.testing.assert_allclose(ours.confidence_interval.low[0], theirs.confidence_interval.low, atol=0.1 * se.max())
    np.testing.assert_allclose(ours.confidence_interval.high[0], theirs.confidence_interval.high, atol=0.1 * se.max())


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_exact_permutation_equals_scipy_and_reference(alternative):
    rng = np.random.default_rng(8)
    r, b = rng.random(8), rng.random(8)
    m = ScoreMatrix(np.vstack([r, b]), ["r", "b"], [str(i) for i in range(8)])
    ours = permutation_test(m, "b", alpha=[0.0, 1.0], replicates=1000, alternative=alternative)
    assert ours.exact and ours.replicates == 256 and ours.seed is None
    for a, alpha in enumerate([0.0, 1.0]):
        def urisk(x, y, axis=-1, alpha=alpha):
            d = x - y
            return np.where(d < 0, d * (1 + alpha), d).mean(axis=axis)

        theirs = stats.permutation_test((r, b), urisk, permutation_type="samples", alternative=alternative,
                                        n_resamples=np.inf)
        assert ours.pvalue[a, 0] == pytest.approx(theirs.pvalue, abs=1e-12)
        assert ours.statistic[a, 0] == pytest.approx(theirs.statistic, abs=1e-12)
        two, less, greater = ref.exact_permutation_pvalues((r - b).tolist(), alpha)
        want = {"two-sided": two, "less": less, "greater": greater}[alternative]
        assert ours.pvalue[a, 0] == pytest.approx(want, abs=1e-12)
    assert np.isnan(ours.pvalue[0, 1])  # the baseline against itself is no member of the family


def test_monte_carlo_permutation_agrees_with_scipy_and_ttest():
    rng = np.random.default_rng(4)
    d = rng.normal(0.15, 0.5, (3, 30))
    ours = permutation_test(d, replicates=20000, rng=3)
    assert not ours.exact and ours.replicates == 20000
    for k in range(3):
        theirs = stats.permutation_test((d[k],), np.mean, permutation_type="samples", n_resamples=20000, rng=1)
        assert ours.pvalue[0, k] == pytest.approx(theirs.pvalue, abs=0.015)
        assert ours.pvalue[0, k] == pytest.approx(stats.ttest_1samp(d[k], 0).pvalue, abs=0.03)
    # a Monte Carlo p-value is never zero
    huge = np.full((1, 80), 1.0) + rng.random(80) * 0.01
    assert permutation_test(huge, replicates=99, rng=1, alternative="greater").pvalue[0, 0] == pytest.approx(1 / 100)
    assert permutation_test(huge, replicates=99, rng=1).pvalue[0, 0] == pytest.approx(2 / 100)  # 2 min(less, greater)


def test_bootstrap_t_test_agrees_with_ttest_rel():
    rng = np.random.default_rng(5)
    r = rng.normal(0.5, 0.2, (4, 40))
    b = r - rng.normal([[0.0], [0.05], [0.08], [0.2]], 0.2, (4, 40))
    res = bootstrap(r - b, replicates=20000, rng=9, test="t", method="studentized")
    for k in range(4):
        t = stats.ttest_rel(r[k], b[k])
        assert res.pvalue[0, k] == pytest.approx(t.pvalue, abs=0.03)
        ci = t.confidence_interval()
        se = res.standard_error[0, k]
        assert res.confidence_interval.low[0, k] == pytest.approx(ci.low, abs=0.25 * se)
        assert res.confidence_interval.high[0, k] == pytest.approx(ci.high, abs=0.25 * se)


def test_one_sided_pvalues_and_intervals():
    d = np.random.default_rng(6).normal(0.3, 0.5, (1, 25))
    less = bootstrap(d, replicates=4000, rng=2, alternative="less")
    greater = bootstrap(d, replicates=4000, rng=2, alternative="greater")
    assert np.isneginf(less.confidence_interval.low).all() and np.isposinf(greater.confidence_interval.high).all()
    assert greater.pvalue[0, 0] < 0.05 < less.pvalue[0, 0]


def test_interval_coverage_on_normal_data():
    rng = np.random.default_rng(2024)
    x = rng.normal(1.0, 2.0, (300, 30))
    for method in ("percentile", "bca", "studentized"):
        res = bootstrap(x, replicates=1000, rng=1, method=method, confidence_level=0.9)
        covered = (res.confidence_interval.low[0] <= 1.0) & (1.0 <= res.confidence_interval.high[0])
        assert 0.84 <= covered.mean() <= 0.95, (method, covered.mean())


# ---------------------------------------------------------------------- matrices, pairs, risk
def test_matrix_and_baseline_give_urisk(trec):
    from fastrisk.core.urisk import risk

    matrix, base = trec
    res = bootstrap(matrix, base, alpha=[0, 1], replicates=2000, rng=1)
    rk = risk(matrix, base, alpha=[0, 1])
    np.testing.assert_allclose(res.statistic, rk.urisk, rtol=1e-12, atol=1e-15)
    assert res.systems == matrix.systems and res.baselines[0] == "baseline"
    assert res.standard_error.shape == (2, matrix.n_systems)
    # the bootstrap SE of a mean is about sqrt((c-1)/c) times the parametric SE
    np.testing.assert_allclose(res.standard_error, rk.standard_error, rtol=0.1)
    table = res.to_arrow()
    assert table.num_rows == 2 * matrix.n_systems
    assert set(table.column_names) >= {"system", "alpha", "statistic", "ci_low", "ci_high", "pvalue"}


def test_pairs_mode(small):
    res = bootstrap(small, pairs=True, alpha=[0, 2], replicates=500, rng=1, keep_replicates=True)
    assert res.systems == ("0", "0", "1") and res.baselines == ("1", "2", "2")
    m = small.mean(axis=1)
    np.testing.assert_allclose(res.statistic[0], [m[0] - m[1], m[0] - m[2], m[1] - m[2]], atol=1e-14)
    d = small[0] - small[1]
    assert res.statistic[1, 0] == pytest.approx(np.where(d < 0, 3 * d, d).mean())
    perm = permutation_test(small, pairs=True, alpha=0, replicates=5000)
    assert perm.exact and perm.pvalue.shape == (1, 3)


def test_jackknife_closed_form_generic_and_reference(small, trec):
    closed = jackknife(small)
    generic = jackknife(small, statistic=mean_statistic)
    np.testing.assert_allclose(closed.standard_error, generic.standard_error, rtol=1e-12)
    np.testing.assert_allclose(closed.pseudo_values, generic.pseudo_values, atol=1e-12)
    np.testing.assert_allclose(closed.standard_error[0], small.std(axis=1, ddof=1) / np.sqrt(12), rtol=1e-12)

    def med(x):
        return np.median(x)

    res = jackknife(small, statistic=med)
    for k in range(3):
        theta, se, bias, loo, pseudo = ref.jackknife(small[k].tolist(), lambda v: float(np.median(v)))
        assert res.statistic[0, k] == pytest.approx(theta)
        assert res.standard_error[0, k] == pytest.approx(se)
        assert res.bias[0, k] == pytest.approx(bias, abs=1e-12)
        np.testing.assert_allclose(res.leave_one_out[0, k], loo)
        np.testing.assert_allclose(res.pseudo_values[0, k], pseudo)
    matrix, base = trec
    j = jackknife(matrix, base, alpha=[0, 1])
    k = matrix.systems.index("run24")  # uogTrA44xi, Dinçer et al. 2014, Table 1
    assert j.standard_error[0, k] == pytest.approx(0.0528, abs=5e-5)
    assert j.standard_error[1, k] == pytest.approx(0.0739, abs=5e-5)


def test_qq_data(small):
    res = bootstrap(small, replicates=400, rng=1, keep_replicates=True)
    qq = res.qq()
    assert qq.sample.shape == (1, 3, 400) and qq.theoretical.shape == (400,)
    assert np.all(np.diff(qq.sample, axis=-1) >= 0)
    thin = res.qq(points=50)
    assert thin.sample.shape == (1, 3, 50)
    assert abs(thin.theoretical[25] + thin.theoretical[24]) < 1e-12
    assert qq.to_arrow().num_rows == 3 * 400


def test_progress_goes_to_stderr(small, capsys):
    pytest.importorskip("tqdm")
    bootstrap(small, replicates=100, rng=1, progress=True)
    assert "bootstrap" in capsys.readouterr().err
    bootstrap(small, replicates=100, rng=1, progress=False)
    assert capsys.readouterr().err == ""


# ---------------------------------------------------------------------- errors
@pytest.mark.parametrize("kwargs, match", [
    (dict(replicates=0), r"`replicates` must be a positive integer, got 0"),
    (dict(replicates=2.5), r"`replicates` must be a positive integer"),
    (dict(method="normal"), r"`method` must be one of"),
    (dict(alternative="both"), r"`alternative` must be one of"),
    (dict(test="z"), r"`test` must be one of"),
    (dict(confidence_level=1.0), r"`confidence_level` must be a number in \(0, 1\)"),
    (dict(keep_replicates="yes"), r"`keep_replicates` must be None, True or False"),
    (dict(chunk_size=0), r"`chunk_size` must be a positive integer"),
    (dict(alpha=1), r"apply to a matrix with a `baseline` or to pairs=True"),
    (dict(statistic=3), r"`statistic` must be a function"),
    (dict(statistic=lambda x: x.nonexistent_attr), r"could not be compiled by numba"),
    (dict(statistic=np.median), r"must be a Python function numba can compile"),
    (dict(statistic=lambda x: np.median(x), method="studentized"), r"need the linear path"),
    (dict(threads=0), r"`threads` must be a positive integer"),
    (dict(rng=-1), r"integer seed in \[0, 2\*\*63 - 1\], got -1"),
    (dict(rng=2**63), r"integer seed in \[0, 2\*\*63 - 1\]"),
])
def test_bootstrap_errors(small, kwargs, match):
    with pytest.raises(InputError, match=match):
        bootstrap(small, **{"replicates": 10, **kwargs})


def test_data_errors(small):
    with pytest.raises(InputError, match=r"at least 2 topics, got 1"):
        bootstrap(np.ones((2, 1)), replicates=10)
    bad = small.copy()
    bad[1, 4] = np.nan
    with pytest.raises(InputError, match=r"must be finite: system 1, topic 4 is nan"):
        bootstrap(bad, replicates=10)
    with pytest.raises(InputError, match=r"1-D \(c topics\), 2-D .* or a 3-D batch"):
        bootstrap(np.ones((2, 2, 2, 2)), replicates=10)
    with pytest.raises(InputError, match=r"ScoreMatrix or an array"):
        bootstrap("text", replicates=10)
    with pytest.raises(InputError, match=r"`baseline` must be None with pairs=True"):
        bootstrap(small, "0", pairs=True, replicates=10)
    with pytest.raises(InputError, match=r"pairs=True needs at least 2 systems"):
        permutation_test(small[:1], pairs=True, replicates=10)
    with pytest.raises(InputError, match=r"`pairs` must be True or False"):
        jackknife(small, pairs="yes")
    with pytest.raises(InputError, match=r"Q-Q data needs the replicates"):
        bootstrap(small, replicates=10, keep_replicates=False).qq()
    m = ScoreMatrix(small, ["a", "b", "c"], [str(i) for i in range(12)])
    with pytest.raises(InputError, match=r"`baseline` is required"):
        bootstrap(m, replicates=10)
    with pytest.raises(InputError, match=r"`replicates` must be a positive integer"):
        permutation_test(small, replicates=-5)


# ---------------------------------------------------------------------- t test and CLI
def test_t_test_equals_ttest_rel(small):
    from fastrisk.inference.resampling import t_test

    b = small[0]
    m = ScoreMatrix(small, ["a", "b", "c"], [str(i) for i in range(12)])
    res = t_test(m, "a", alpha=0)
    for k in (1, 2):
        want = stats.ttest_rel(small[k], b)
        assert res.statistic[0, k] == pytest.approx(want.statistic)
        assert res.pvalue[0, k] == pytest.approx(want.pvalue)
    assert np.isnan(res.pvalue[0, 0])  # the baseline against itself
    less = t_test(m, "a", alpha=0, alternative="less")
    assert less.pvalue[0, 1] == pytest.approx(stats.ttest_rel(small[1], b, alternative="less").pvalue)


@pytest.fixture
def matrix_file(tmp_path, small):
    path = tmp_path / "m.csv"
    path.write_text("system,topic,score\n" + "".join(
        f"s{k},{t},{small[k, t]}\n" for k in range(3) for t in range(12)))
    return str(path)


def test_cli_bootstrap(matrix_file, capsys):
    from fastrisk.cli import main

    assert main(["bootstrap", matrix_file, "--baseline", "s0", "--alpha", "0,1", "--replicates", "500",
                 "--seed", "1", "--format", "csv", "--no-progress"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].replace('"', "").startswith("alpha,loss_weight,system,baseline") and len(out) == 1 + 2 * 2  # s0 vs s0 dropped
    assert main(["bootstrap", matrix_file, "--baseline", "s0", "--alpha", "0", "--replicates", "500",
                 "--seed", "1", "--format", "csv", "--no-progress"]) == 0
    again = capsys.readouterr().out.splitlines()
    assert again[1] == out[1]  # same seed, same numbers


@pytest.mark.parametrize("method", ["t", "bootstrap", "permutation"])
def test_cli_test(matrix_file, capsys, method):
    from fastrisk.cli import main

    assert main(["test", matrix_file, "--baseline", "s0", "--method", method, "--correction", "holm",
                 "--replicates", "300", "--seed", "2", "--format", "json", "--no-progress"]) == 0
    import json

    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["system"] for r in rows] == ["s1", "s2"]
    assert all(r["pvalue_adjusted"] >= r["pvalue"] for r in rows)


@pytest.mark.parametrize("correction", ["hs", "hommel", "fdr_by", "fdr_tsbky"])
def test_cli_test_takes_every_statsmodels_correction(matrix_file, capsys, correction):
    """`fastrisk test --correction` takes the names `fastrisk compare` and PyTerrier take (statsmodels'
    multipletests names and aliases), the level-dependent ones at ``--level``."""
    import json

    from statsmodels.stats.multitest import multipletests

    from fastrisk.cli import main

    assert main(["test", matrix_file, "--baseline", "s0", "--alpha", "0", "--correction", correction,
                 "--level", "0.1", "--format", "json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    p = np.array([r["pvalue"] for r in rows])
    want = multipletests(p, alpha=0.1, method=correction)[1]
    np.testing.assert_allclose([r["pvalue_adjusted"] for r in rows], want, rtol=1e-12)


def test_cli_test_refuses_an_unknown_correction_before_any_work(matrix_file, capsys):
    from fastrisk.cli import main

    assert main(["test", matrix_file, "--baseline", "s0", "--method", "bootstrap", "--correction", "tukey",
                 "--replicates", "100000000"]) == 2
    err = capsys.readouterr().err
    assert "`--correction` must be one of bonferroni" in err and "got 'tukey'" in err, err


def test_cli_tukey_and_errors(matrix_file, capsys):
    from fastrisk.cli import main

    assert main(["test", matrix_file, "--method", "tukey", "--replicates", "200", "--seed", "1"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1 + 3
    assert main(["bootstrap", matrix_file, "--replicates", "10"]) == 2
    assert "--baseline is required" in capsys.readouterr().err
    assert main(["bootstrap", matrix_file, "--baseline", "s0", "--replicates", "0"]) == 2
    assert "`replicates` must be a positive integer, got 0" in capsys.readouterr().err
    assert main(["test", matrix_file, "--baseline", "s0", "--pairs"]) == 2
    assert "drop --baseline" in capsys.readouterr().err


def test_smooth_value_function_bootstrap_and_exact_permutation():
    from fastrisk.core.urisk import risk

    rng = np.random.default_rng(12)
    V = rng.random((3, 9))
    m = ScoreMatrix(V, ["a", "b", "c"], [str(i) for i in range(9)])
    res = bootstrap(m, "c", value="smooth", replicates=300, rng=1)
    np.testing.assert_allclose(res.statistic[0], risk(m, "c", value="smooth").urisk[0], rtol=1e-12)
    perm = permutation_test(m, "c", value="smooth", replicates=1000)
    assert perm.exact and res.value == perm.value == "smooth"

    def s(x):
        return 1.38426 * x ** 3 - 0.51659 * x ** 2 + 0.11578 * x

    for k in range(2):
        theirs = stats.permutation_test((V[k], V[2]), lambda u, w, axis: s(u - w).mean(axis=axis),
                                        permutation_type="samples", n_resamples=np.inf)
        assert perm.pvalue[0, k] == pytest.approx(theirs.pvalue, abs=1e-12)


@pytest.mark.slow
def test_large_bootstrap_bit_identical_whatever_the_thread_count():
    """A product big enough to be split over threads (>= 5e8 flops) gives the same bits with
    1 or 2 threads: BLAS always runs single-threaded and the split is over replicate columns."""
    import fastrisk

    m, b = fastrisk.data.datasets.trec2012_web()
    kwargs = dict(alpha=[0, 5], replicates=120_000, rng=7, keep_replicates=True)
    one = fastrisk.bootstrap(m, b, threads=1, **kwargs)
    two = fastrisk.bootstrap(m, b, threads=2, **kwargs)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):  # e.g. a sweep worker, or OMP_NUM_THREADS=1
        capped = fastrisk.bootstrap(m, b, threads=2, **kwargs)
    for other in (two, capped):
        np.testing.assert_array_equal(one.replicates, other.replicates)
        np.testing.assert_array_equal(one.confidence_interval.low, other.confidence_interval.low)
        np.testing.assert_array_equal(one.bias, other.bias)


def test_minus_convention_negates_mirrors_and_swaps_the_alternative(trec):
    matrix, base = trec
    kw = dict(alpha=[0, 5], replicates=400, rng=3)
    for alternative in ("less", "greater", "two-sided"):
        classic = bootstrap(matrix, base, method="percentile", alternative=alternative, **kw)
        swapped = {"less": "greater", "greater": "less"}.get(alternative, alternative)
        minus = bootstrap(matrix, base, method="percentile", alternative=swapped, convention="minus", **kw)
        np.testing.assert_array_equal(minus.statistic, -classic.statistic)
        np.testing.assert_array_equal(minus.bias, -classic.bias)
        np.testing.assert_array_equal(minus.standard_error, classic.standard_error)
        low, high = minus.confidence_interval
        np.testing.assert_array_equal(low, -classic.confidence_interval.high)
        np.testing.assert_array_equal(high, -classic.confidence_interval.low)
        np.testing.assert_array_equal(minus.pvalue, classic.pvalue)
        assert minus.alternative == swapped and minus.convention == "minus"
        assert minus.to_arrow().schema.metadata[b"fastrisk"].find(b'"convention": "minus"') >= 0
    perm = permutation_test(matrix, base, alternative="less", replicates=300, rng=1)
    perm_minus = permutation_test(matrix, base, alternative="greater", replicates=300, rng=1, convention="minus")
    np.testing.assert_array_equal(perm_minus.pvalue, perm.pvalue)
    np.testing.assert_array_equal(perm_minus.statistic, -perm.statistic)
    t = t_test(matrix, base, alternative="greater")
    t_minus = t_test(matrix, base, alternative="less", convention="minus")
    np.testing.assert_array_equal(t_minus.statistic, -t.statistic)
    np.testing.assert_array_equal(t_minus.urisk, -t.urisk)
    np.testing.assert_array_equal(t_minus.pvalue, t.pvalue)
    jk, jk_minus = jackknife(matrix, base), jackknife(matrix, base, convention="minus")
    np.testing.assert_array_equal(jk_minus.pseudo_values, -jk.pseudo_values)
    np.testing.assert_array_equal(jk_minus.standard_error, jk.standard_error)
    with pytest.raises(InputError, match="`convention` must be one of"):
        t_test(matrix, base, convention="plus")


def test_exclude_self_drops_the_baseline_against_itself():
    V = np.random.default_rng(5).random((4, 10))
    m = ScoreMatrix(V, ["a", "b", "c", "d"], [str(i) for i in range(10)])
    full = t_test(m, "b")
    res = t_test(m, "b", exclude_self=True)
    assert res.systems == ("a", "c", "d") and res.baselines == ("b",) * 3
    np.testing.assert_array_equal(res.statistic, full.statistic[:, [0, 2, 3]])
    boot = bootstrap(m, "b", exclude_self=True, replicates=100, rng=1)
    assert boot.to_arrow().column("system").to_pylist()[:4] == ["a", "c", "d", "a"]  # alpha outermost
    assert bootstrap(m, "mean", exclude_self=True, replicates=100, rng=1).systems == m.systems  # virtual: no self
    with pytest.raises(InputError, match="`exclude_self` must be True or False"):
        jackknife(m, "b", exclude_self=1)


def test_a_bare_array_with_a_baseline_is_a_matrix(trec):
    matrix, _ = trec
    values = np.array(matrix.values)
    for run in (lambda d, b: bootstrap(d, b, alpha=[0, 5], replicates=200, rng=3),
                lambda d, b: permutation_test(d, b, replicates=200, rng=3),
                lambda d, b: jackknife(d, b, alpha=[0, 5]),
                lambda d, b: t_test(d, b)):
        named, bare = run(matrix, matrix.systems[2]), run(values, 2)
        np.testing.assert_array_equal(bare.statistic, named.statistic)
        np.testing.assert_array_equal(bare.pvalue if hasattr(bare, "pvalue") else bare.standard_error,
                                      named.pvalue if hasattr(named, "pvalue") else named.standard_error)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(-3, 3).map(float), st.floats(allow_nan=True, allow_infinity=True, width=32)),
                min_size=1, max_size=60), st.data())
def test_select_is_numpys_partition(values, data):
    """The hand-written quickselect of the quantile pass gives np.partition's value of every
    rank: ties (many equal values), infinities, NaN (sorted last), -0.0 beside 0.0."""
    a = np.asarray(values, dtype=np.float64)
    k = data.draw(st.integers(0, a.size - 1))
    expected = np.partition(a, k)[k]
    got = K._select(a.copy(), k)
    assert got == expected or (np.isnan(got) and np.isnan(expected))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.integers(-3, 3).map(float), st.floats(-1e6, 1e6), st.floats(allow_nan=True,
                                                                                       allow_infinity=True)),
                min_size=60, max_size=400), st.data())
def test_bucketed_selection_is_numpys_partition(values, data):
    """The windows' selection (buckets over the range, then quickselect in one bucket) gives
    np.partition's value of every rank and leaves its input as it was: ties, a huge range, a
    range of a few ulps, infinities, NaN and a subnormal range (which take the quickselect)."""
    a = np.asarray(values, dtype=np.float64)
    shape = data.draw(st.sampled_from(["as drawn", "few ulps", "subnormal"]))
    if shape != "as drawn":  # a range of a few ulps of 1, or of 0 (a subnormal range)
        ulps = np.round(np.nan_to_num(a, posinf=1, neginf=2) % 4)
        a = 1.0 + np.spacing(1.0) * ulps if shape == "few ulps" else 5e-324 * ulps
    k = data.draw(st.integers(0, a.size - 1))
    before = a.copy()
    got = K._rank_value(a, k)
    expected = np.partition(a, k)[k]
    assert got == expected or (np.isnan(got) and np.isnan(expected))
    np.testing.assert_array_equal(a, before)


def test_spread_runs_every_item_once_and_raises_a_task_error():
    """The engine's thread spreader: every item exactly once whatever thread takes it, and an
    error raised by a task reaches the caller (the other threads stop at their next item)."""
    import threading

    from fastrisk._runtime.threads import limit_threads
    from fastrisk.inference.resampling._engine import _spread

    seen, lock = [], threading.Lock()

    def task(i):
        with lock:
            seen.append(i)

    with limit_threads(2):
        _spread(task, range(200), 1e9)
        assert sorted(seen) == list(range(200))

        def failing(i):
            if i == 3:
                raise ValueError("task 3")

        with pytest.raises(ValueError, match="task 3"):
            _spread(failing, range(50), 1e9)


def test_bootstrap_without_an_interval_is_the_same_test():
    """``method=None`` (what a stack's batched kernel computes) skips the interval only: the
    test, the standard error and the bias are those of any method with the same seed."""
    m = ScoreMatrix(np.random.default_rng(4).random((3, 20)), ["a", "b", "c"], [str(i) for i in range(20)])
    none = bootstrap(m, "a", alpha=[0, 1], replicates=500, rng=2, method=None)
    bca = bootstrap(m, "a", alpha=[0, 1], replicates=500, rng=2)
    assert none.confidence_interval is None and none.method is None and none.ci_low is None
    for name in ("statistic", "pvalue", "standard_error", "bias"):
        np.testing.assert_array_equal(getattr(none, name), getattr(bca, name))
    assert "ci_low" not in none.to_arrow().column_names
    with pytest.raises(InputError, match="`method`"):
        bootstrap(m, "a", replicates=50, method="none")
