"""The one numerical policy: zero and near-zero variance, extreme scores, bounded alpha."""

from __future__ import annotations

import math
import os
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.risk import urisk_ref

from fastrisk import (
    InputError,
    ScoreMatrix,
    ZeroVarianceWarning,
    baseline_table,
    risk,
    t_test,
    zrisk,
)
from fastrisk._kernels.numerics import fma
from fastrisk._runtime.numerics import negligible_se

C = 40


def _matrix():
    """base; plus = base + 0.3 (constant up to rounding); near = plus + 1e-9 noise; other."""
    rng = np.random.default_rng(1)
    b = rng.random(C)
    rows = [b, b + 0.3, b + 0.3 + 1e-9 * rng.standard_normal(C), rng.random(C)]
    return ScoreMatrix(np.vstack(rows), ["base", "plus", "near", "other"], [str(i) for i in range(C)])


def _recorded(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    return out, [w for w in caught if issubclass(w.category, ZeroVarianceWarning)]


# ---------------------------------------------------------------- zero and near-zero variance
def test_risk_constant_and_near_constant_differences_are_infinite_with_a_warning():
    m = _matrix()
    r, caught = _recorded(lambda: risk(m, "base", alpha=[0, 1]))
    assert np.isnan(r.trisk[:, 0]).all()  # the baseline itself: 0 / 0
    assert (r.trisk[:, 1:3] == np.inf).all() and (r.standard_error[:, 1:3] == 0).all() and (r.se_jack[:, 1:3] == 0).all()
    assert (r.pvalue[:, 1:3] == 0).all() and r.rewarding[:, 1:3].all()
    assert np.isfinite(r.trisk[:, 3]).all()
    assert len(caught) == 1
    msg = str(caught[0].message)
    assert "plus, near" in msg and "'base'" in msg and "other" not in msg


def test_t_test_follows_the_same_rule_as_risk():
    m = _matrix()
    t, caught = _recorded(lambda: t_test(m, "base", alpha=[0, 1]))
    r, _ = _recorded(lambda: risk(m, "base", alpha=[0, 1]))
    np.testing.assert_allclose(t.statistic, r.trisk, rtol=1e-12)
    assert np.isnan(t.pvalue[:, 0]).all() and (t.pvalue[:, 1:3] == 0).all()
    assert len(caught) == 1 and "plus, near" in str(caught[0].message)


def test_tables_follow_the_same_rule_and_warn_for_a_list_of_baselines():
    m = _matrix()
    full, caught_full = _recorded(lambda: baseline_table(m, alpha=[0, 1]))
    listed, caught_list = _recorded(lambda: baseline_table(m, ["base"], alpha=[0, 1]))
    np.testing.assert_allclose(listed.trisk[:, :, 0], full.trisk[:, :, 0], rtol=1e-12)
    assert (full.trisk[:, 1:3, 0] == np.inf).all() and (full.trisk[:, 0, 1:3] == -np.inf).all()
    assert caught_full and "base/plus" in str(caught_full[0].message)
    assert len(caught_list) == 1 and "plus, near" in str(caught_list[0].message)


def test_ordinary_data_is_untouched_by_the_floor():
    rng = np.random.default_rng(5)
    V = rng.random((5, 30))
    m = ScoreMatrix(V, list("abcde"), [str(i) for i in range(30)])
    r, caught = _recorded(lambda: risk(m, "a", alpha=[0, 2]))
    assert not caught
    for k in range(1, 5):
        for a, alpha in enumerate([0, 2]):
            want = urisk_ref(V[k].tolist(), V[0].tolist(), alpha)
            assert r.trisk[a, k] == pytest.approx(want["urisk"] / want["se"], rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.floats(1e-300, 1e300), st.integers(2, 1000), st.floats(1e-6, 1e6))
def test_floor_only_bites_beyond_the_rounding_limit(mean, c, ratio):
    """|mean / SE| below 1e7 is never called zero; beyond 1e8 it always is."""
    assert not negligible_se(mean, mean / (ratio * 10.0), c)  # |t| <= 1e7
    assert negligible_se(mean, mean / (1e8 * max(ratio, 1.0)), c)


# ---------------------------------------------------------------- extremes
def _dyadic(S, c, seed):
    """Scores k / 64: exactly representable after any power-of-two scaling, subnormals included."""
    return np.random.default_rng(seed).integers(0, 64, (S, c)) / 64.0


@pytest.mark.parametrize("exponent", [1020, 600, -600, -1060])
def test_risk_of_extreme_scores_equals_risk_of_the_same_scores_at_unit_scale(exponent):
    V = _dyadic(4, 25, 3)
    topics = [str(i) for i in range(25)]
    scaled = ScoreMatrix(np.ldexp(V, exponent), list("abcd"), topics)
    r, caught = _recorded(lambda: risk(scaled, "a", alpha=[0, 5]))
    assert not caught
    for k in range(1, 4):
        for a, alpha in enumerate([0, 5]):
            want = urisk_ref(V[k].tolist(), V[0].tolist(), alpha)
            assert r.trisk[a, k] == pytest.approx(want["urisk"] / want["se"], rel=1e-12)
            assert r.urisk[a, k] == pytest.approx(math.ldexp(want["urisk"], exponent), rel=1e-12, abs=0)
    t, caught = _recorded(lambda: t_test(scaled, "a", alpha=[0, 5]))
    assert not caught
    np.testing.assert_allclose(t.statistic, r.trisk, rtol=1e-12)
    table, caught = _recorded(lambda: baseline_table(scaled, alpha=[0, 5]))
    np.testing.assert_allclose(table.trisk[:, :, 0], r.trisk, rtol=1e-9)


def test_scores_whose_urisk_overflows_are_a_clear_error():
    m = ScoreMatrix([[1.7e308] * 3, [-1.7e308] * 3], ["a", "b"], ["1", "2", "3"])
    with pytest.raises(InputError, match="URisk overflows"):
        risk(m, "b")


@pytest.mark.parametrize("exponent", [1000, -1040])
def test_zrisk_of_extreme_scores(exponent):
    V = _dyadic(4, 20, 7) + 1 / 64
    topics = [str(i) for i in range(20)]
    base = zrisk(ScoreMatrix(V, list("abcd"), topics), alpha=[0, 5])
    ext = zrisk(ScoreMatrix(np.ldexp(V, exponent), list("abcd"), topics), alpha=[0, 5])
    # X -> X 2^e scales every expected cell by 2^e and ZRisk by 2^(e/2)
    np.testing.assert_allclose(ext.zrisk, np.ldexp(base.zrisk, exponent // 2), rtol=1e-12)
    assert np.isfinite(ext.georisk).all() and (ext.zrisk != 0).any()


@pytest.mark.parametrize("kw, match", [
    ({"alpha": 1e154}, r"`alpha` must be at most 1e\+12"),
    ({"loss_weight": 1e200}, r"`loss_weight` must be at most"),
])
def test_alpha_is_bounded(kw, match):
    m = ScoreMatrix(_dyadic(2, 5, 1), ["a", "b"], list("12345"))
    with pytest.raises(InputError, match=match):
        risk(m, "a", **kw)
    with pytest.raises(InputError, match=match):
        zrisk(m, **kw)


def test_largest_alpha_gives_finite_numbers():
    V = _dyadic(3, 30, 2)
    m = ScoreMatrix(V, list("abc"), [str(i) for i in range(30)])
    r = risk(m, "a", alpha=1e12)
    want = urisk_ref(V[1].tolist(), V[0].tolist(), 1e12)
    assert r.trisk[0, 1] == pytest.approx(want["urisk"] / want["se"], rel=1e-9)
    assert np.isfinite(baseline_table(m, alpha=1e12).standard_error).all()


def test_per_topic_scores_that_overflow_are_a_clear_error():
    from fastrisk import bootstrap, topic_risk

    m = ScoreMatrix([[1.7e308, 1.0e308], [-1.7e308, 0.0]], ["a", "b"], ["1", "2"])
    with pytest.raises(InputError, match="overflows the range of float64"):
        topic_risk(m, "b")
    with pytest.raises(InputError, match="overflows the range of float64"):
        bootstrap(m, "b", replicates=10)


def test_topic_risk_follows_the_same_rule():
    from fastrisk import topic_risk

    m = _matrix()
    tr, caught = _recorded(lambda: topic_risk(m, "base", alpha=[0, 1]))
    assert np.isinf(tr.tr[:, 1:3]).all() and np.isnan(tr.tj[:, 1:3]).all()
    assert np.isnan(tr.tr[:, 0]).all()  # the baseline itself: 0 / 0
    assert np.isfinite(tr.tr[:, 3]).all()
    assert len(caught) == 1 and "plus, near" in str(caught[0].message)


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="plain Python has no fused multiply-add")
@settings(max_examples=200, deadline=None)
@given(st.floats(-1e150, 1e150), st.floats(-1e150, 1e150), st.floats(-1e300, 1e300))
def test_fma_rounds_once(a, b, c):
    """The kernels' fused multiply-add is a * b + c computed exactly and rounded once."""

    assert fma(a, b, c) == float(Fraction(a) * Fraction(b) + Fraction(c))


def test_fma_differs_from_two_roundings_where_it_should():
    x = 1.0 + 2.0 ** -30
    if os.environ.get("NUMBA_DISABLE_JIT") != "1":
        assert fma(x, x, -1.0) == 2.0 ** -29 + 2.0 ** -60  # x * x - 1 rounded twice loses the 2^-60
    assert x * x - 1.0 == 2.0 ** -29
