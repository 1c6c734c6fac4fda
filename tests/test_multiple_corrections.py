"""`adjust_pvalues`: every statsmodels ``multipletests`` correction, computed by fastrisk and
equal to statsmodels (issue #39); `AdjustedPValues.to_arrow` with the family on any axis
(issue #40)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastrisk.errors import InputError
from fastrisk.inference.multiple import CORRECTION_NAMES, adjust_pvalues, correction_name

multitest = pytest.importorskip("statsmodels.stats.multitest")

#: statsmodels' own names and aliases (its ``_alias_list`` without lfdr)
STATSMODELS = [a for group in multitest._alias_list for a in group if a not in ("lfdr", "lfdr_sl")]


def _families():
    rng = np.random.default_rng(7)
    yield rng.uniform(size=20)
    yield rng.uniform(size=1)
    yield np.array([0.01, 0.01, 0.02, 0.5, 0.5, 1.0, 0.0])  # ties, 0 and 1
    yield rng.uniform(0, 0.02, size=30)  # all rejected by the first stage
    yield np.concatenate([rng.uniform(0, 0.001, size=5), rng.uniform(0.2, 1, size=40)])
    yield rng.beta(0.3, 2, size=99)


def test_every_statsmodels_name_is_known():
    assert set(STATSMODELS) <= set(CORRECTION_NAMES)


@pytest.mark.parametrize("method", STATSMODELS)
@pytest.mark.parametrize("level", [0.05, 0.1])
def test_equal_to_statsmodels(method, level):
    for p in _families():
        with np.errstate(divide="ignore", invalid="ignore"):
            want = multitest.multipletests(p, alpha=level, method=method)[1]
        got = adjust_pvalues(p, method, level=level)
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15, err_msg=f"{method} m={p.size}")
        assert got.method == correction_name(method)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=40), st.sampled_from(sorted(set(STATSMODELS))))
def test_equal_to_statsmodels_property(p, method):
    p = np.array(p)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = multitest.multipletests(p, method=method)[1]
        got = adjust_pvalues(p, method)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_nan_is_no_member_and_axis():
    p = np.array([[0.01, np.nan, 0.2], [0.04, 0.03, np.nan], [0.5, 0.02, 0.6], [0.3, 0.8, 0.01]])
    got = adjust_pvalues(p, "fdr_by", axis=0)
    for j in range(3):
        keep = ~np.isnan(p[:, j])
        np.testing.assert_allclose(got[keep, j], multitest.multipletests(p[keep, j], method="fdr_by")[1])
        assert np.isnan(got[~keep, j]).all()
    assert got.m.tolist() == [4, 3, 3]


def test_to_arrow_family_on_axis_0_non_square():
    """Issue #40: the family along axis 0 of a 3 x 5 array: to_arrow raised (m broadcast along
    the last axis)."""
    p = np.random.default_rng(1).uniform(size=(3, 5))
    p[0, 1] = np.nan
    adj = adjust_pvalues(p, "holm", axis=0)
    table = adj.to_arrow()
    assert table.num_rows == 15
    sizes = np.array(table.column("family_size")).reshape(3, 5)
    assert sizes.tolist() == [[3, 2, 3, 3, 3]] * 3


def test_to_arrow_family_size_on_axis_0_square():
    """Issue #40: on a square array the family size of axis 0 was written along axis 1."""
    p = np.array([[0.01, np.nan], [0.02, np.nan]])  # families (columns): 2 members, 0 members
    table = adjust_pvalues(p, "bonferroni", axis=0).to_arrow()
    assert np.array(table.column("family_size")).reshape(2, 2).tolist() == [[2, 0], [2, 0]]
    last = adjust_pvalues(p, "bonferroni").to_arrow()  # rows: 1 member each
    assert np.array(last.column("family_size")).reshape(2, 2).tolist() == [[1, 1], [1, 1]]


@pytest.mark.parametrize(("kw", "match"), [
    ({"method": "tukey"}, r"`method` must be one of bonferroni, sidak, holm, .* got 'tukey'"),
    ({"method": "lfdr"}, "`method` 'lfdr' .* estimates local false discovery rates, not adjusted p-values"),
    ({"method": 3}, "`method` must be one of"),
    ({"axis": 2}, r"`axis` must be an axis of `pvalues` \(ndim 1\), got 2"),
    ({"level": 1.5}, r"`level` must be a number in \(0, 1\), got 1.5"),
])
def test_bad_arguments(kw, match):
    with pytest.raises(InputError, match=match):
        adjust_pvalues([0.1, 0.2], **kw)


def test_pyterrier_short_names():
    assert [correction_name(n) for n in ("hs", "h", "b", "s", "sh", "ho", "fdr_i", "fdr_n", "fdr_2sbh",
                                          "fdr_twostage", "BH", "Holm")] == [
        "holm-sidak", "holm", "bonferroni", "sidak", "simes-hochberg", "hommel", "fdr_bh", "fdr_by", "fdr_tsbh",
        "fdr_tsbky", "fdr_bh", "holm"]
