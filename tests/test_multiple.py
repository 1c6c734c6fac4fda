"""p-value adjustments and the randomised Tukey HSD test."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import resampling as ref

from fastrisk._runtime.rng import resolve_seed
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.errors import InputError
from fastrisk.inference.multiple import adjust_pvalues, tukey_hsd

pvals = st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=1, max_size=30)


@settings(max_examples=40, deadline=None)
@given(pvals)
def test_adjustments_match_references(p):
    np.testing.assert_allclose(adjust_pvalues(p, "holm"), ref.holm(p), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(adjust_pvalues(p, "bh"), ref.benjamini_hochberg(p), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(adjust_pvalues(p, "bonferroni"), np.minimum(1, np.array(p) * len(p)))
    np.testing.assert_array_equal(adjust_pvalues(p, "none"), p)
    holm, bonf, bh = (adjust_pvalues(p, m) for m in ("holm", "bonferroni", "bh"))
    assert np.all(np.array(p) <= holm + 1e-15) and np.all(holm <= bonf + 1e-15) and np.all(bh <= holm + 1e-12)


def test_adjust_along_an_axis():
    p = np.array([[0.01, 0.04, 0.03], [0.5, 0.001, 0.2]])
    out = adjust_pvalues(p, "holm", axis=1)
    np.testing.assert_allclose(out[0], ref.holm(p[0].tolist()))
    np.testing.assert_allclose(adjust_pvalues(p, "holm", axis=0)[:, 2], ref.holm(p[:, 2].tolist()))


@pytest.mark.parametrize("p, method, match", [
    ([0.1, 1.5], "holm", r"`pvalues` must lie in \[0, 1\]"),
    ([0.1], "fdr", r"`method` must be one of bonferroni, sidak, holm, holm-sidak, .*, none \(or a statsmodels alias"),
    (["a"], "holm", r"`pvalues` must be an array of numbers"),
])
def test_adjust_errors(p, method, match):
    with pytest.raises(InputError, match=match):
        adjust_pvalues(p, method)


def test_tukey_null_matches_reference_and_is_deterministic():
    V = np.random.default_rng(3).random((4, 6))
    a = tukey_hsd(V, replicates=60, rng=5, threads=1)
    b = tukey_hsd(V, replicates=60, rng=5, threads=2)
    np.testing.assert_array_equal(a.null_distribution, b.null_distribution)
    np.testing.assert_allclose(a.null_distribution, ref.tukey_ranges(V.tolist(), resolve_seed(a.seed).kernel, 60), rtol=0, atol=1e-15)
    m = V.mean(axis=1)
    assert a.statistic[0] == pytest.approx(m[0] - m[1])
    count = sum(1 for r in a.null_distribution if r >= abs(m[0] - m[1]))
    assert a.pvalue[0] == pytest.approx((count + 1) / 61)
    assert a.pvalue_matrix().shape == (4, 4) and a.pvalue_matrix()[1, 0] == a.pvalue[0]


def test_tukey_finds_a_clearly_better_system():
    rng = np.random.default_rng(1)
    V = rng.normal(0.3, 0.1, (5, 40))
    V[0] += 0.3
    names = [f"s{i}" for i in range(5)]
    res = tukey_hsd(ScoreMatrix(V, names, [str(t) for t in range(40)]), replicates=2000, rng=2)
    table = res.to_arrow()
    assert table.num_rows == 10 and res.system_a[0] == "s0"
    first = np.array(res.system_a) == "s0"
    assert (res.pvalue[first] < 0.01).all() and (res.pvalue[~first] > 0.01).all()
    # family-wise: Tukey p-values are never below the single comparison's randomisation p-value floor
    assert (res.pvalue >= 1 / 2001).all()


def test_tukey_errors():
    with pytest.raises(InputError, match=r"at least 2 systems"):
        tukey_hsd(np.ones((1, 5)), replicates=10)
    with pytest.raises(InputError, match=r"`replicates` must be a positive integer, got 0"):
        tukey_hsd(np.ones((3, 5)), replicates=0)


# ---------------------------------------------------------------- the family and its size m
@pytest.mark.parametrize("method", ["holm", "bonferroni", "bh", "none"])
def test_nan_entries_are_not_members_of_the_family(method):
    p = [0.01, np.nan, 0.04, 0.03]
    out = adjust_pvalues(p, method)
    assert np.isnan(out[1]) and out.m == 3 and out.method == {"bh": "fdr_bh"}.get(method, method)
    np.testing.assert_allclose(out[[0, 2, 3]], adjust_pvalues([0.01, 0.04, 0.03], method))
    grid = adjust_pvalues(np.array([[0.01, np.nan, 0.2], [0.5, 0.02, 0.03]]), method, axis=1)
    np.testing.assert_array_equal(grid.m, [2, 3])
    np.testing.assert_allclose(grid[0, [0, 2]], adjust_pvalues([0.01, 0.2], method))


def test_baseline_row_excluded_for_every_test():
    """The baseline against itself is NaN in every test and is not counted: 16 of 17."""
    import warnings

    from fastrisk import bootstrap, permutation_test, risk, t_test

    rng = np.random.default_rng(4)
    m = ScoreMatrix(rng.random((17, 12)), [f"s{i}" for i in range(17)], [str(i) for i in range(12)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = {
            "permutation": permutation_test(m, "s3", alpha=0, replicates=500, rng=1).pvalue,
            "bootstrap": bootstrap(m, "s3", alpha=0, replicates=500, rng=1, method="percentile").pvalue,
            "t": t_test(m, "s3", alpha=0).pvalue,
            "risk": risk(m, "s3", alpha=0).pvalue,
        }
    for name, p in results.items():
        assert p.shape == (1, 17), name
        assert np.isnan(p[0, 3]) and np.isfinite(np.delete(p[0], 3)).all(), name
        adjusted = adjust_pvalues(p, "holm")
        assert adjusted.m.tolist() == [16], name
        assert np.isnan(adjusted[0, 3]), name
        np.testing.assert_allclose(np.delete(adjusted[0], 3), ref.holm(np.delete(p[0], 3).tolist()), rtol=1e-12)


def test_cli_test_records_the_family_size(bench_data, capsys, tmp_path):
    import pyarrow.parquet as pq

    from fastrisk.cli import main

    out = tmp_path / "t.parquet"
    path = str(bench_data / "trec-matrices" / "web2012_err20.csv")
    assert main(["test", path, "--baseline", "run24", "--alpha", "0,5", "--method", "t", "--format", "parquet",
                 "--out", str(out)]) == 0
    table = pq.read_table(out)
    assert table.num_rows == 2 * 47 and set(table.column("family_size").to_pylist()) == {47}
    assert "run24" not in table.column("system").to_pylist()
