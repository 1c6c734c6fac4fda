"""ZRisk/GeoRisk: published values (TREC 2012 Web, ERR@20), loop reference, properties, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from reference import multibase as ref

from fastrisk.core.zrisk import zrisk
from fastrisk.errors import InputError

_matrix = ref.matrix_of


@pytest.mark.parametrize("system, value, z, geo", [
    ("uogTrA44xi", "linear", 5.779, -0.414),
    ("uogTrA44xi", "smooth", 1.038, -0.399),
    ("qutwb", "linear", 8.636, -0.307),
    ("qutwb", "smooth", 0.977, -0.290),
])
def test_published_minus_values(web2012, system, value, z, geo):
    assert web2012.n_systems == 49
    kwargs = {"loss_weight": 2.0} if value == "linear" else {}
    r = zrisk(web2012, value=value, convention="minus", **kwargs)
    row = r.row(system)
    assert row["zrisk"][0] == pytest.approx(z, abs=5e-4)
    assert row["georisk"][0] == pytest.approx(geo, abs=5e-4)


def test_minus_is_negated_classic_with_alpha_hat_minus_one(web2012):
    classic = zrisk(web2012, alpha=[0.0, 1.0, 5.0])
    minus = zrisk(web2012, loss_weight=[1.0, 2.0, 6.0], convention="minus")
    np.testing.assert_allclose(minus.zrisk, -classic.zrisk, rtol=1e-12)
    np.testing.assert_allclose(minus.alpha, classic.alpha)
    assert minus.given == "loss_weight" and classic.given == "alpha"
    eff = web2012.values.mean(axis=1)
    expect = -np.sqrt(eff[None, :] * np.vectorize(ref.phi)(minus.zrisk / web2012.n_topics))
    np.testing.assert_allclose(minus.georisk, expect, rtol=1e-12)


@pytest.mark.parametrize("system, georisk_minus, classic", [("uogTrA44xi", -0.414, 0.377),
                                                            ("qutwb", -0.307, 0.268)])
def test_georisk_minus_takes_the_signs_of_benham_table_2(web2012, system, georisk_minus, classic):
    """Benham et al.'s Table 2 prints -sqrt(Eff Phi(+ZRisk⁻/c)); Phi(-ZRisk⁻/c) is the classic GeoRisk."""
    minus = zrisk(web2012, loss_weight=2.0, convention="minus").row(system)
    plain = zrisk(web2012, loss_weight=2.0).row(system)
    assert minus["georisk"][0] == pytest.approx(georisk_minus, abs=5e-4)
    assert plain["georisk"][0] == pytest.approx(classic, abs=5e-4)
    k = web2012.systems.index(system)
    eff = float(web2012.values[k].mean())
    c = web2012.n_topics
    assert minus["georisk"][0] == pytest.approx(-math.sqrt(eff * ref.phi(minus["zrisk"][0] / c)), rel=1e-12)
    assert plain["georisk"][0] == pytest.approx(math.sqrt(eff * ref.phi(-minus["zrisk"][0] / c)), rel=1e-12)


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(2, 6), st.integers(2, 7)), elements=st.floats(0.01, 1)),
       st.floats(0.0, 10.0))
def test_georisk_minus_grows_with_risk_at_fixed_effectiveness(V, alpha):
    """At one effectiveness, |GeoRisk⁻| orders systems as ZRisk⁻ does (larger = riskier); classic reverses."""
    minus = zrisk(_matrix(V), alpha=alpha, convention="minus")
    classic = zrisk(_matrix(V), alpha=alpha)
    c = V.shape[1]
    eff = V.mean(axis=1)
    for k in range(V.shape[0]):
        expect = -math.sqrt(eff[k] * ref.phi(-classic.zrisk[0, k] / c))
        assert minus.georisk[0, k] == pytest.approx(expect, rel=1e-12)
    # GeoRisk⁻^2 / Eff is Phi(ZRisk⁻/c): increasing in ZRisk⁻
    ratio = minus.georisk[0] ** 2 / eff
    order = np.argsort(minus.zrisk[0], kind="stable")
    assert np.all(np.diff(ratio[order]) >= -1e-12)


def test_georisk_minus_of_a_stack_matches_each_collection(web2012):
    from fastrisk.core import batch

    V = web2012.values
    stacked = zrisk(batch.stack(np.stack([V[:10], V[10:20]])), loss_weight=[1.0, 2.0], convention="minus")
    for kk, rows in enumerate((slice(0, 10), slice(10, 20))):
        one = zrisk(_matrix(V[rows]), loss_weight=[1.0, 2.0], convention="minus")
        np.testing.assert_allclose(stacked.georisk[kk], one.georisk, rtol=1e-12)
        np.testing.assert_allclose(stacked.zrisk[kk], one.zrisk, rtol=1e-12)


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(2, 6), st.integers(1, 7)),
                  elements=st.floats(0, 1, allow_nan=False).map(lambda x: 0.0 if x < 0.2 else x)),
       st.lists(st.floats(0, 20), min_size=1, max_size=3))
def test_matches_loop_reference(V, alphas):
    r = zrisk(_matrix(V), alpha=alphas)
    for a, al in enumerate(alphas):
        z = ref.zrisk_classic(V.tolist(), ref.linear(1 + al))
        np.testing.assert_allclose(r.zrisk[a], z, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(r.georisk[a], ref.georisk(V.tolist(), z), rtol=1e-9, atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(2, 5), st.integers(1, 6)), elements=st.floats(0, 1)))
def test_smooth_matches_loop_reference(V):
    smooth = lambda x: 1.38426 * x ** 3 - 0.51659 * x ** 2 + 0.11578 * x  # noqa: E731
    r = zrisk(_matrix(V), value="smooth", convention="minus")
    z = ref.zrisk_classic(V.tolist(), smooth)
    np.testing.assert_allclose(r.zrisk[0], -np.asarray(z), rtol=1e-9, atol=1e-9)
    assert np.isnan(r.alpha).all()


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(2, 6), st.integers(2, 7)),
                  # effectiveness scores: 0 or at least 1e-6 (subnormals lose the relative precision
                  # that the sqrt(k) identity is checked to, and mean nothing as scores)
                  elements=st.just(0.0) | st.floats(1e-6, 1)),
       st.floats(0.01, 100))
def test_scaling_by_k_scales_zrisk_by_sqrt_k(V, k):
    base = zrisk(_matrix(V), alpha=[0.0, 2.0])
    scaled = zrisk(_matrix(V * k), alpha=[0.0, 2.0])
    np.testing.assert_allclose(scaled.zrisk, math.sqrt(k) * base.zrisk, rtol=1e-9, atol=1e-9)


def test_zero_expected_cells_contribute_nothing():
    V = np.array([[0.0, 0.5, 0.2], [0.0, 0.1, 0.4], [0.0, 0.0, 0.0]])  # topic t0 and system s2 all zero
    r = zrisk(_matrix(V), alpha=1.0)
    assert np.isfinite(r.zrisk).all()
    assert r.zrisk[0, 2] == 0.0 and r.georisk[0, 2] == 0.0
    # dropping the all-zero topic and system leaves every total, hence every other cell, unchanged
    z = ref.zrisk_classic(V[:2, 1:].tolist(), ref.linear(2.0))
    np.testing.assert_allclose(r.zrisk[0, :2], z, rtol=1e-12)
    assert zrisk(_matrix(np.zeros((2, 3)))).zrisk.tolist() == [[0.0] * 2] * 4


def test_custom_jitted_value_function(web2012):
    import numba

    @numba.njit
    def doubled(x):
        return 2.0 * x

    a = zrisk(web2012, value=doubled)
    b = zrisk(web2012, alpha=0.0)
    np.testing.assert_allclose(a.zrisk, 2 * b.zrisk, rtol=1e-12)
    assert a.value == "doubled"


def test_to_arrow_columns(web2012):
    t = zrisk(web2012, loss_weight=[2, 3], convention="minus").to_arrow()
    assert t.column_names == ["alpha", "loss_weight", "system", "convention", "value", "zrisk", "georisk",
                              "effectiveness"]
    assert t.num_rows == 98
    assert set(t.column("convention").to_pylist()) == {"minus"}


def test_negative_scores_rejected():
    with pytest.raises(InputError, match=r"non-negative scores.*system 's1'.*-0.5.*topic 't2'"):
        zrisk(_matrix([[0.1, 0.2, 0.3], [0.1, 0.2, -0.5]]))


def test_errors():
    m = _matrix([[0.1, 0.2], [0.3, 0.4]])
    with pytest.raises(InputError, match="`convention` must be 'classic' or 'minus'"):
        zrisk(m, convention="plus")
    with pytest.raises(InputError, match="either `alpha`"):
        zrisk(m, alpha=1, loss_weight=2)
    with pytest.raises(InputError, match="`matrix` must be a ScoreMatrix"):
        zrisk([[0.1]])
    with pytest.raises(InputError, match="linear value function only"):
        zrisk(m, value="smooth", alpha=1)
