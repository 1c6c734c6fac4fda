"""The paired-test battery against scipy, the plain reference and its own invariants."""

from __future__ import annotations

import math

import numpy as np
import pytest
from reference import batch as ref
from reference import simulate as sref
from scipy import special, stats

from fastrisk._runtime.rng import resolve_seed
from fastrisk.errors import InputError
from fastrisk.simulate import battery

TAILS = ("two-sided", "less", "greater")


def _pairs(K=40, c=15, seed=0):
    return np.random.default_rng(seed).random((K, 2, c))


@pytest.fixture(scope="module")
def untied():
    V = _pairs()
    return V, battery(V, replicates=0)


@pytest.mark.parametrize("tails", TAILS)
def test_t_is_ttest_rel(untied, tails):
    V, res = untied
    sp = stats.ttest_rel(V[:, 1], V[:, 0], axis=-1, alternative=tails)
    np.testing.assert_allclose(res.p("t", tails), sp.pvalue, rtol=1e-10)
    np.testing.assert_allclose(res.statistic[:, 0], sp.statistic, rtol=1e-10)


@pytest.mark.parametrize("tails", TAILS)
def test_wilcoxon_is_scipys_exact_test_without_ties(untied, tails):
    V, res = untied
    d = V[:, 1] - V[:, 0]
    sp = stats.wilcoxon(d, axis=-1, alternative=tails, method="exact")
    np.testing.assert_allclose(res.p("wilcoxon", tails), sp.pvalue, rtol=1e-12)


@pytest.mark.parametrize("correction", [False, True])
@pytest.mark.parametrize("tails", TAILS)
def test_wilcoxon_with_zeros_and_ties_is_scipys_tie_corrected_normal_approximation(tails, correction):
    rng = np.random.default_rng(4)
    V = rng.integers(0, 9, size=(60, 2, 20)) / 8  # exact binary fractions: many ties and zeros
    d = V[:, 1] - V[:, 0]
    res = battery(V, replicates=0, correction=correction)
    for k in range(60):
        if not (d[k] != 0).any():
            assert np.isnan(res.p("wilcoxon", tails)[k])
            continue
        sp = stats.wilcoxon(d[k], alternative=tails, method="asymptotic", zero_method="wilcox",
                            correction=correction)
        assert res.p("wilcoxon", tails)[k] == pytest.approx(sp.pvalue, rel=1e-9)
        w, n, _ = ref.signed_rank(list(d[k]))
        assert res.statistic[k, 1] == pytest.approx(w)
        assert n == int((d[k] != 0).sum())


def test_wilcoxon_uses_the_exact_distribution_only_without_ties_or_zeros():
    x = np.arange(1.0, 11.0) / 20
    y = x + np.array([0.01, -0.02, 0.03, 0.04, -0.05, 0.06, 0.07, 0.08, -0.09, 0.1])
    V = np.stack([np.stack([x, y])])
    exact = battery(V, replicates=0).p("wilcoxon")[0]
    assert exact == pytest.approx(stats.wilcoxon(y - x, method="exact").pvalue, rel=1e-12)
    y2 = y.copy()
    y2[0] = x[0]  # one zero difference -> normal approximation, as R and scipy(n > 13)
    approx = battery(np.stack([np.stack([x, y2])]), replicates=0).p("wilcoxon")[0]
    assert approx == pytest.approx(stats.wilcoxon(y2 - x, method="asymptotic").pvalue, rel=1e-12)


@pytest.mark.parametrize("tails", TAILS)
@pytest.mark.parametrize("min_diff", [0.0, 0.05])
def test_sign_test_is_binomtest_with_small_differences_as_ties(tails, min_diff):
    V = _pairs(K=30, c=25, seed=6)
    res = battery(V, replicates=0, min_diff=min_diff)
    d = V[:, 1] - V[:, 0]
    for k in range(30):
        pos = int((d[k] > min_diff).sum())
        n = pos + int((d[k] < -min_diff).sum())
        assert res.p("sign", tails)[k] == pytest.approx(stats.binomtest(pos, n, 0.5, alternative=tails).pvalue,
                                                        rel=1e-12)


@pytest.mark.parametrize("tails", TAILS)
def test_exact_permutation_is_scipys_permutation_test(tails):
    V = _pairs(K=5, c=8, seed=8)
    res = battery(V, replicates=1000)
    assert res.replicates == 256
    for k in range(5):
        sp = stats.permutation_test((V[k, 1] - V[k, 0],), np.mean, permutation_type="samples",
                                    alternative=tails, n_resamples=np.inf)
        assert res.p("permutation", tails)[k] == pytest.approx(sp.pvalue, rel=1e-12)


@pytest.mark.parametrize(("c", "B"), [(7, 70), (40, 120), (64, 70), (65, 70), (129, 70)])
def test_random_bootstrap_and_permutation_counts_match_the_reference(c, B):
    """Replicates run in blocks of 64 and sign bits in 64-topic words: odd c, c at and past a
    word, B not a multiple of the block; every count is the one-replicate-at-a-time count."""
    V = _pairs(K=2, c=c, seed=30 + c)
    res = battery(V, replicates=B, rng=9, protocol="urbano2019")
    std = battery(V, replicates=B, rng=9)
    for k in range(2):
        sref.assert_resampled_p_values(std, res, list(V[k, 1] - V[k, 0]), k, k, B)


def test_flips_with_subnormal_half_differences_sum_the_halves():
    """Differences near the bottom of the doubles (subnormal halves): the flipped statistic is
    the sum of the halves d / 2, as one flip at a time sums it."""
    V = np.zeros((1, 2, 20))
    V[0, 1, :10] = np.linspace(0.1, 0.9, 10)
    V[0, 1, 10:15] = 3e-310
    V[0, 0, 15:] = 5e-324 * np.arange(1, 6)
    res = battery(V, replicates=100, rng=4)
    d = list(V[0, 1] - V[0, 0])
    ge, le = ref.sign_flip_counts([v / 2 for v in d], resolve_seed(res.seed).kernel, 0, 100, exact=False)
    assert res.p("permutation", "greater")[0] == (ge + 1) / 101
    assert res.p("permutation", "less")[0] == (le + 1) / 101


def test_zrisk_georisk_filter_bounds_hold_and_erfc_series_is_within_its_margin():
    """The erfc series is within ERFC_MARGIN / 20 of erfc, and the filter's ZRisk and GeoRisk
    (`_z_filter`, `_g_filter`) are within their stated bounds of `_zpair`'s and `_zg`'s, on pairs
    of runs with extreme scores (|ZRisk / c| near its bound) -- and far inside them."""
    from fastrisk._kernels import battery as kb

    v = np.linspace(-kb.SERIES_MAX, kb.SERIES_MAX, 20001)
    series = np.array([kb._erfc_series(t) for t in v])
    assert np.abs(series - special.erfc(v)).max() < kb.ERFC_MARGIN / 20
    assert max(abs(s - math.erfc(t)) for s, t in zip(series, v)) < kb.ERFC_MARGIN / 20
    rng = np.random.default_rng(41)
    slack = []
    for _ in range(2000):
        c = int(rng.integers(2, 200))
        x, y = rng.beta(*rng.choice([0.05, 1.0, 20.0], 2), size=c), rng.beta(*rng.choice([0.05, 1.0, 20.0], 2), size=c)
        T = x + y
        N, W, S2, A2 = T.sum(), np.sqrt(T).sum(), y.sum(), (y / np.sqrt(T)).sum()
        S1, z1, z2 = kb._zpair(S2, A2, N, W)
        g = kb._zg(S2, A2, N, W, c)[1]
        f1, d1 = kb._z_filter(S1, W - A2, True, 1.0 / N, W)
        f2, d2 = kb._z_filter(S2, A2, True, 1.0 / N, W)
        assert abs(f1 - z1) <= 4 * kb._U * d1 and abs(f2 - z2) <= 4 * kb._U * d2
        G1, dG1, ok1 = kb._g_filter(S1, f1, 8 * kb._U * d1, -1.0 / (c * math.sqrt(2)), 0.5 / c)
        G2, dG2, ok2 = kb._g_filter(S2, f2, 8 * kb._U * d2, -1.0 / (c * math.sqrt(2)), 0.5 / c)
        if ok1 and ok2:  # else |v| is within rounding of SERIES_MAX: `_zg_counts` evaluates exactly
            assert abs((G2 - G1) - g) <= dG1 + dG2 < 1e-6
            slack.append(abs((G2 - G1) - g) / (dG1 + dG2))
    assert len(slack) > 1900 and max(slack) < 0.5


@pytest.mark.parametrize("c", [1, 30])
def test_georisk_flip_counts_fall_back_to_erfc_where_bounds_straddle(c):
    """Thresholds placed exactly on flipped values (bounds straddle them) and c = 1 (erfc's
    argument beyond the series' range): the counts are those of `_zg` flip by flip."""
    from fastrisk._kernels import battery as kb

    rng = np.random.default_rng(42 + c)
    N, W, Sm, Am = 20.0, 25.0, 10.0, 12.5
    ah, aq = rng.normal(0, 2, 300), rng.normal(0, 2, 300)
    plain = np.array([kb._zg(Sm + t, Am + q, N, W, c) for t, q in zip(ah, aq)])
    for zup, zdown, gup, gdown in ((0.1, 0.3, plain[5, 1], plain[9, 1]), (-1.0, 1.0, -0.01, 0.02)):
        got = kb._zg_counts(ah, aq, len(ah), Sm, Am, N, W, c, zup, zdown, gup, gdown)
        want = ((plain[:, 0] >= zup).sum(), (plain[:, 0] <= zdown).sum(), (plain[:, 1] >= gup).sum(),
                (plain[:, 1] <= gdown).sum())
        assert got == want


def test_trisk_zrisk_and_georisk_statistics_match_the_reference():
    V = _pairs(K=4, c=12, seed=12)
    res = battery(V, replicates=64, rng=1, trisk_alpha=[1, 5])
    assert res.tests[5:9] == ("trisk@1", "trisk@5", "zrisk", "georisk")
    for k in range(4):
        for j, alpha in ((5, 1), (6, 5)):
            m, se, _ = ref.urisk_se(ref.risk_scores(V[k, 1], V[k, 0], alpha))
            assert res.statistic[k, j] == pytest.approx(m / se, rel=1e-12)
            assert res.p(f"trisk@{alpha}")[k] == pytest.approx(2 * stats.t.sf(abs(m / se), 11), rel=1e-9)
            # the bootstrap test of URisk_alpha reports the observed URisk_alpha (the kernel's)
            assert res.statistic[k, res.tests.index(f"bootstrap_risk@{alpha}")] == pytest.approx(m, rel=1e-12)
        z, g = ref.zrisk_georisk_diff(V[k, 0], V[k, 1])
        assert res.statistic[k, 7] == pytest.approx(z, rel=1e-10, abs=1e-12)
        assert res.statistic[k, 8] == pytest.approx(g, rel=1e-10, abs=1e-12)


def test_zrisk_and_georisk_flip_tests_are_exact_small_sample_tests():
    V = _pairs(K=3, c=6, seed=14)
    res = battery(V, replicates=64)  # 2^6 = 64: all patterns
    import itertools
    for k in range(3):
        x, y = V[k]
        zo, go = ref.zrisk_georisk_diff(x, y)
        zs, gs = [], []
        for s in itertools.product((False, True), repeat=6):
            xs = np.where(s, y, x)
            ys = np.where(s, x, y)
            z, g = ref.zrisk_georisk_diff(xs, ys)
            zs.append(z)
            gs.append(g)
        zs, gs = np.array(zs), np.array(gs)
        pg = np.mean(gs >= go - 1e-12)
        pl = np.mean(gs <= go + 1e-12)
        assert res.p("georisk", "greater")[k] == pytest.approx(pg)
        assert res.p("georisk")[k] == pytest.approx(min(1, 2 * min(pg, pl)))
        assert res.p("zrisk", "less")[k] == pytest.approx(np.mean(zs <= zo + 1e-12))


def test_battery_is_identical_across_threads_and_chunks():
    V = _pairs(K=12, c=30, seed=16)
    a = battery(V, replicates=500, rng=5, threads=2)
    b = battery(V, replicates=500, rng=5, threads=1)
    c = battery(V[7:], replicates=500, rng=5, start=7)
    np.testing.assert_array_equal(a.pvalue, b.pvalue)
    np.testing.assert_array_equal(a.pvalue[7:], c.pvalue)


def test_t_test_type_one_error_on_normal_data_is_nominal_within_monte_carlo_error():
    rng = np.random.default_rng(18)
    K = 20000
    V = rng.normal(size=(K, 2, 20))
    res = battery(V, replicates=0)
    for level in (0.01, 0.05, 0.1):
        for tails in TAILS:
            rate = np.mean(res.p("t", tails) <= level)
            assert abs(rate - level) < 4 * np.sqrt(level * (1 - level) / K)


def test_all_zero_differences_give_nan_rank_and_sign_p_values():
    x = np.linspace(0.1, 0.9, 10)
    res = battery(np.stack([np.stack([x, x])]), replicates=0)
    assert np.isnan(res.p("wilcoxon")[0]) and np.isnan(res.p("sign")[0]) and np.isnan(res.p("t")[0])


def test_long_form_has_test_and_tails_columns():
    res = battery(_pairs(K=2, c=6), replicates=10, rng=1)
    t = res.to_arrow()
    assert t.column_names == ["batch", "test", "tails", "statistic", "pvalue"]
    assert t.num_rows == 2 * len(res.tests) * 3


def test_bad_battery_arguments_are_named():
    V = _pairs(K=2, c=5)
    with pytest.raises(InputError, match="pairs of runs"):
        battery(np.random.default_rng(0).random((2, 3, 5)))
    with pytest.raises(InputError, match="`replicates`"):
        battery(V, replicates=-1)
    with pytest.raises(InputError, match="`min_diff`"):
        battery(V, min_diff=-0.1)
    with pytest.raises(InputError, match="`trisk_alpha`"):
        battery(V, trisk_alpha=[-1])
    with pytest.raises(InputError, match="`correction`"):
        battery(V, correction="yes")
    with pytest.raises(InputError, match="`start`"):
        battery(V, start=[1])


def test_without_risk_tests_the_other_p_values_are_unchanged():
    V = _pairs(K=5, c=30, seed=20)
    a = battery(V, replicates=200, rng=3)
    b = battery(V, replicates=200, rng=3, risk_tests=False)
    np.testing.assert_array_equal(a.pvalue[:, :7], b.pvalue[:, :7])
    np.testing.assert_array_equal(a.pvalue[:, 9:], b.pvalue[:, 9:])  # trisk_smooth, bootstrap_risk@a
    assert np.isnan(b.pvalue[:, 7:9]).all()
