"""The sign-flip permutation test is the same for every alpha: computed once, said, warned."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from reference import resampling as ref

from fastrisk import ScoreMatrix, permutation_test
from fastrisk.errors import AlphaInvariantWarning


def _matrix(c=9, seed=2):
    V = np.random.default_rng(seed).random((4, c))
    return ScoreMatrix(V, ["a", "b", "c", "base"], [str(i) for i in range(c)])


def test_alpha_above_zero_warns_and_points_to_the_risk_sensitive_tests():
    with pytest.warns(AlphaInvariantWarning, match=r"symmetric about 0.*bootstrap.*TRisk"):
        permutation_test(_matrix(), "base", alpha=[0, 1, 5], replicates=200, rng=1)


@pytest.mark.parametrize("kw", [{"alpha": 0}, {"value": "smooth"}, {}])
def test_no_warning_when_alpha_plays_no_part(kw):
    data = _matrix() if kw else np.random.default_rng(1).random((2, 9))
    with warnings.catch_warnings():
        warnings.simplefilter("error", AlphaInvariantWarning)
        permutation_test(data, "base" if kw else None, replicates=200, rng=1, **kw)


@pytest.mark.parametrize("c, replicates", [(9, 1000), (30, 999)])  # exact, then Monte Carlo
def test_one_pvalue_for_every_alpha(c, replicates):
    m = _matrix(c)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AlphaInvariantWarning)
        many = permutation_test(m, "base", alpha=[0, 1, 5, 10], replicates=replicates, rng=3)
        kept = permutation_test(m, "base", alpha=[0, 1, 5, 10], replicates=replicates, rng=3, keep_replicates=True)
    one = permutation_test(m, "base", alpha=0, replicates=replicates, rng=3)
    for a in range(4):
        np.testing.assert_array_equal(many.pvalue[a], one.pvalue[0])
        np.testing.assert_array_equal(kept.pvalue[a], one.pvalue[0])
    assert "symmetric" in many.null_hypothesis and "every alpha" in many.null_hypothesis
    # the statistic still varies with alpha, and the kept replicates are those of each alpha
    assert not np.allclose(many.statistic[0, :3], many.statistic[3, :3])
    assert kept.null_distribution.shape == (4, 4, kept.replicates)


def test_the_exact_pvalue_per_alpha_is_indeed_identical():
    """The plain reference, run separately at each alpha, agrees with the one computed value."""
    m = _matrix(8, seed=5)
    d = (m.values[0] - m.values[3]).tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AlphaInvariantWarning)
        ours = permutation_test(m, "base", alpha=[0, 0.5, 3, 20], replicates=10_000)
    assert ours.exact
    for a, alpha in enumerate([0, 0.5, 3, 20]):
        assert ours.pvalue[a, 0] == pytest.approx(ref.exact_permutation_pvalues(d, alpha)[0], abs=1e-12)
