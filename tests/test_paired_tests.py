"""`fastrisk.wilcoxon_test` and `fastrisk.sign_test` (issue #39): p-values equal to
``scipy.stats.wilcoxon`` and ``scipy.stats.binomtest``; the kernel's statistics against a plain
rank computation; the risk scores x at alpha > 0."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as ss
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import ranktests as reference

import fastrisk
from fastrisk._kernels import battery as _k
from fastrisk.errors import InputError

ALTS = ("two-sided", "less", "greater")


def _matrix(V):
    return fastrisk.ScoreMatrix(V, tuple(f"s{i}" for i in range(V.shape[0])), tuple(f"t{j}" for j in range(V.shape[1])))


def _cases():
    rng = np.random.default_rng(3)
    yield rng.uniform(size=(4, 30))  # exact, no ties
    yield rng.uniform(size=(3, 50))  # exact at the largest n
    V = np.round(rng.uniform(size=(5, 80)), 1)  # ties and zeros: the normal approximation
    yield V
    yield rng.uniform(size=(3, 200))  # no ties, n > 50: normal


@pytest.mark.parametrize("alternative", ALTS)
def test_wilcoxon_equals_scipy(alternative):
    for V in _cases():
        for correction in (False, True):
            res = fastrisk.wilcoxon_test(_matrix(V), "s0", alpha=0, alternative=alternative, correction=correction)
            for i in range(1, V.shape[0]):
                want = ss.wilcoxon(V[i], V[0], alternative=alternative, correction=correction)
                assert res.pvalue[0, i] == pytest.approx(want.pvalue, rel=1e-12, abs=1e-300)
                assert res.statistic[0, i] == want.statistic
            assert np.isnan(res.pvalue[0, 0])


@pytest.mark.parametrize("alternative", ALTS)
def test_sign_equals_binomtest(alternative):
    for V in _cases():
        res = fastrisk.sign_test(_matrix(V), "s0", alpha=0, alternative=alternative)
        for i in range(1, V.shape[0]):
            d = V[i] - V[0]
            k, n = int((d > 0).sum()), int((d != 0).sum())
            assert res.pvalue[0, i] == pytest.approx(ss.binomtest(k, n, 0.5, alternative=alternative).pvalue,
                                                     rel=1e-12)
            assert res.statistic[0, i] == k and res.n[0, i] == n


def test_risk_scores_at_alpha():
    V = np.random.default_rng(5).uniform(size=(3, 40))
    res = fastrisk.wilcoxon_test(_matrix(V), "s0", alpha=[0, 5])
    d = V[2] - V[0]
    x = d + 5 * np.minimum(d, 0)
    assert res.pvalue[1, 2] == pytest.approx(ss.wilcoxon(x).pvalue, rel=1e-12)
    assert res.urisk[1, 2] == pytest.approx(x.mean())
    sg = fastrisk.sign_test(_matrix(V), "s0", alpha=[0, 5])
    np.testing.assert_array_equal(sg.pvalue[0], sg.pvalue[1])  # alpha never changes a sign


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-4, 4), min_size=1, max_size=90))
def test_kernel_statistics_against_plain_ranks(d):
    d = np.array(d, dtype=np.float64)
    out = np.zeros((1, _k.N_STATS))
    _k.rank_sign_stats(d[None], out)
    ref = reference.signed_rank_stats(d)
    assert out[0, _k.WPLUS] == ref["wplus"]
    assert (out[0, _k.WN], out[0, _k.WTIES], out[0, _k.WZERO]) == (ref["n"], ref["ties"], ref["zeros"])
    assert (out[0, _k.SPOS], out[0, _k.SNEG]) == (ref["above"], ref["below"])


def test_all_equal_gives_nan():
    V = np.ones((2, 10))
    assert np.isnan(fastrisk.sign_test(_matrix(V), "s0", alpha=0).pvalue).all()
    assert np.isnan(fastrisk.wilcoxon_test(_matrix(V), "s0", alpha=0).pvalue).all()


def test_long_form():
    V = np.random.default_rng(1).uniform(size=(3, 12))
    table = fastrisk.wilcoxon_test(_matrix(V), "s0", alpha=[0, 1]).to_arrow()
    assert {"alpha", "system", "baseline", "statistic", "pvalue", "n", "urisk"} <= set(table.column_names)
    assert table.num_rows == 6


@pytest.mark.parametrize(("fn", "kw", "match"), [
    (fastrisk.wilcoxon_test, {"alternative": "bigger"}, "`alternative` must be one of"),
    (fastrisk.wilcoxon_test, {"correction": "yes"}, "`correction` must be"),
    (fastrisk.sign_test, {"alternative": 2}, "`alternative` must be one of"),
])
def test_bad_arguments(fn, kw, match):
    with pytest.raises(InputError, match=match):
        fn(_matrix(np.random.default_rng(0).uniform(size=(2, 5))), "s0", **kw)
