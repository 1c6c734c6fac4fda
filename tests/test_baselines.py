"""Virtual baselines (MEAN, MEDIAN, MAX, leave-one-out) and baseline resolution."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import fastrisk
from fastrisk import Baseline, InputError, ScoreMatrix, virtual_baseline


def naive_virtual(values, kind, rows, leave_out):
    """Loop reference: per system k, the statistic over the chosen rows (without k)."""
    reduce = {"mean": np.mean, "median": np.median, "max": np.max}[kind]
    S, c = values.shape
    if not leave_out:
        return reduce(values[rows], axis=0)[None, :]
    out = np.empty((S, c))
    for k in range(S):
        others = [r for r in rows if r != k]
        out[k] = reduce(values[others], axis=0)
    return out


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(3, 7), st.integers(1, 6)),
              elements=st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0])),
       st.sampled_from(["mean", "median", "max"]), st.booleans(), st.data())
def test_virtual_baselines_match_naive_reference(values, kind, leave_out, data):
    S = values.shape[0]
    m = ScoreMatrix(values, [f"s{k}" for k in range(S)], [f"t{i}" for i in range(values.shape[1])])
    rows = sorted(data.draw(st.sets(st.integers(0, S - 1), min_size=2)))
    got = virtual_baseline(m, kind, systems=[m.systems[r] for r in rows], leave_out=leave_out)
    np.testing.assert_allclose(got.values, naive_virtual(values, kind, rows, leave_out), rtol=1e-12, atol=1e-15)


def test_max_baseline_gives_non_positive_urisk_for_all():
    rng = np.random.default_rng(0)
    m = ScoreMatrix(rng.random((6, 30)), list("abcdef"), range(30))
    res = fastrisk.risk(m, "max", alpha=[0, 1, 5])
    assert (res.urisk <= 0).all()
    assert res.baseline == "MAX"


def test_leave_one_out_baseline_is_used_per_system():
    rng = np.random.default_rng(1)
    m = ScoreMatrix(rng.random((4, 10)), list("abcd"), range(10))
    base = virtual_baseline(m, "mean", leave_out=True)
    res = fastrisk.risk(m, base, alpha=0)
    for k in range(4):
        others = np.delete(m.values, k, axis=0).mean(axis=0)
        assert res.urisk[0, k] == pytest.approx((m.values[k] - others).mean())


def test_system_named_like_a_virtual_baseline_wins():
    m = ScoreMatrix([[0.5, 0.25], [0.125, 1.0]], ["mean", "b"], ["1", "2"])
    _, base = fastrisk.resolve_baseline(m, "mean")
    assert base.system == 0


def test_baseline_from_file_and_column(tmp_path, bench_data):
    m, _ = fastrisk.data.datasets.trec2012_web()
    path = bench_data / "trec2012-web" / "baseline-indriCASP.csv"
    _, base = fastrisk.resolve_baseline(m, str(path), column="err20")
    assert base.values.shape == (1, 50) and base.values.mean() == pytest.approx(0.19466, abs=5e-6)
    with pytest.raises(InputError, match=r"several columns \(ndcg20, err20\); pick one"):
        fastrisk.resolve_baseline(m, str(path))
    with pytest.raises(InputError, match="no column 'map'"):
        fastrisk.resolve_baseline(m, str(path), column="map")


def test_one_row_matrix_and_series_baselines():
    m = ScoreMatrix([[0.5, 0.25], [0.125, 1.0]], ["a", "b"], ["1", "2"])
    one = ScoreMatrix([[0.25, 0.25]], ["base"], ["2", "1"])
    _, base = fastrisk.resolve_baseline(m, one)
    assert base.name == "base" and base.values.tolist() == [[0.25, 0.25]]
    pd = pytest.importorskip("pandas")
    _, base = fastrisk.resolve_baseline(m, pd.Series({"1": 0.5, "2": 0.0}, name="ser"))
    assert base.name == "ser" and base.values.tolist() == [[0.5, 0.0]]


@pytest.mark.parametrize("bad,match", [
    ("median-ish", "unknown baseline"),
    ([0.1, 0.2, 0.3], r"one score per topic \(2\)"),
    ({"1": float("nan"), "2": 0.0}, "non-finite score on topic '1'"),
    (object(), "cannot use object as a baseline"),
    (Baseline("x", np.zeros((3, 2))), r"has shape \(3, 2\)"),
])
def test_bad_baselines(bad, match):
    m = ScoreMatrix([[0.5, 0.25], [0.125, 1.0]], ["a", "b"], ["1", "2"])
    with pytest.raises(InputError, match=match):
        fastrisk.resolve_baseline(m, bad)


def test_virtual_baseline_errors():
    m = ScoreMatrix([[0.5, 0.25], [0.125, 1.0]], ["a", "b"], ["1", "2"])
    with pytest.raises(InputError, match="must be one of mean, median, max"):
        virtual_baseline(m, "min")
    with pytest.raises(InputError, match="at least two systems"):
        virtual_baseline(m, "mean", systems=["a"], leave_out=True)
