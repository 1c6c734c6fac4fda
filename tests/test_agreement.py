"""Kendall's tau (pairs and matrices), the Friedman test and prefix agreement."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.agreement import kendall_tau_b

from fastrisk.errors import InputError
from fastrisk.measures.agreement import (
    friedman,
    kendall_tau,
    kendall_tau_matrix,
    prefix_agreement,
    ranking_from_scores,
    rbo,
    rbo_many,
)


def _scipy_tau(x, y):
    r = scipy.stats.kendalltau(x, y)
    return float(r.statistic), float(r.pvalue)


score_vectors = st.integers(2, 40).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 6), min_size=n, max_size=n),
        st.lists(st.integers(0, 6), min_size=n, max_size=n),
    )
)


@settings(max_examples=50, deadline=None)
@given(score_vectors)
def test_kendall_tau_matches_scipy_and_pair_counting(xy):
    x, y = (np.array(v, dtype=float) for v in xy)
    got = kendall_tau(x, y)
    stat, pvalue = _scipy_tau(x, y)
    if math.isnan(stat):
        assert math.isnan(got.statistic) and math.isnan(got.pvalue)
        assert kendall_tau_b(x, y) is None
        return
    assert got.statistic == pytest.approx(stat, abs=1e-13)
    assert got.statistic == pytest.approx(kendall_tau_b(x, y), abs=1e-13)
    assert got.pvalue == pytest.approx(pvalue, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("n", [2, 3, 10, 33, 34, 60])
def test_kendall_tau_untied_exact_and_asymptotic_pvalues(n):
    rng = np.random.default_rng(n)
    x = rng.random(n)
    for y in (x + rng.random(n), -x, x.copy(), rng.random(n)):
        got = kendall_tau(x, y)
        stat, pvalue = _scipy_tau(x, y)
        assert got.statistic == pytest.approx(stat, abs=1e-13)
        assert got.pvalue == pytest.approx(pvalue, rel=1e-9, abs=1e-300)


def test_kendall_tau_matrix_matches_pairs():
    rng = np.random.default_rng(11)
    scores = rng.integers(0, 5, size=(5, 25)).astype(float)
    scores[3] = 1.0  # a constant ranking: tau undefined
    m = kendall_tau_matrix(scores, labels=["b1", "b2", "b3", "b4", "b5"])
    for i in range(5):
        for j in range(5):
            stat, pvalue = _scipy_tau(scores[i], scores[j])
            np.testing.assert_allclose(m.statistic[i, j], stat, atol=1e-13)
            np.testing.assert_allclose(m.pvalue[i, j], pvalue, rtol=1e-9)
    assert np.isnan(m.statistic[3]).all()
    t = m.to_arrow()
    assert t.column_names == ["a", "b", "statistic", "pvalue"] and t.num_rows == 25
    assert t.column("b").to_pylist()[:3] == ["b1", "b2", "b3"]


@settings(max_examples=30, deadline=None)
@given(st.integers(3, 9).flatmap(lambda n: st.lists(
    st.lists(st.integers(0, 4), min_size=n, max_size=n), min_size=2, max_size=6)))
def test_friedman_matches_scipy(rows):
    scores = np.array(rows, dtype=float)
    got = friedman(scores)
    with np.errstate(invalid="ignore", divide="ignore"):
        want = scipy.stats.friedmanchisquare(*scores.T)
    if math.isnan(want.statistic):
        assert math.isnan(got.statistic)
        return
    assert got.statistic == pytest.approx(want.statistic, rel=1e-12, abs=1e-12)
    assert got.pvalue == pytest.approx(want.pvalue, rel=1e-10, abs=1e-15)
    k, n = scores.shape
    assert got.kendall_w == pytest.approx(got.statistic / (k * (n - 1)))
    assert got.mean_ranks.sum() == pytest.approx(n * (n + 1) / 2)


def test_friedman_perfect_concordance_and_mean_ranks():
    scores = np.tile(np.array([0.9, 0.5, 0.7, 0.1]), (6, 1))
    res = friedman(scores, items=["s1", "s2", "s3", "s4"])
    assert res.kendall_w == pytest.approx(1.0)
    np.testing.assert_allclose(res.mean_ranks, [1, 3, 2, 4])  # 1 = best
    t = res.to_arrow()
    assert t.column("item").to_pylist() == ["s1", "s2", "s3", "s4"]
    assert t.column_names == ["item", "mean_rank", "statistic", "pvalue", "kendall_w"]


def test_prefix_agreement_matches_rbo_of_prefixes():
    a = np.array([0.9, 0.1, 0.5, 0.5, 0.3, 0.7, 0.2])
    b = np.array([0.8, 0.2, 0.6, 0.1, 0.3, 0.9, 0.2])
    res = prefix_agreement(a, b, p=0.8, ties="a")
    ra = ranking_from_scores(a)
    rb = ranking_from_scores(b)
    np.testing.assert_array_equal(res.depth, np.arange(1, 8))
    for k, depth in enumerate(res.depth):
        # whole tie groups are kept: a's group (2, 3) straddles depth 3
        pa_ = _prefix(ra, depth)
        pb_ = _prefix(rb, depth)
        assert res.length_a[k] == sum(len(g) if isinstance(g, tuple) else 1 for g in pa_)
        want = rbo(pa_, pb_, p=0.8, ties="a")
        assert res.min[k] == pytest.approx(want.min, abs=1e-14)
        assert res.ext[k] == pytest.approx(want.ext, abs=1e-14)
        assert res.res[k] == pytest.approx(want.res, abs=1e-14)
    assert list(res.length_a[:4]) == [1, 2, 4, 4]
    t = res.to_arrow()
    assert t.num_rows == 7 and t.column_names == ["depth", "p", "ties", "length_a", "length_b", "ext", "min",
                                                  "max", "res"]
    assert t.column("length_a").to_pylist()[:4] == [1, 2, 4, 4] and t.column("ext").to_pylist()[6] == res.ext[6]
    sub = prefix_agreement(a, b, depths=[2, 7], p=0.8)
    np.testing.assert_allclose(sub.ext, res.ext[[1, 6]])


def _prefix(ranking, depth):
    out, n = [], 0
    for g in ranking:
        if n >= depth:
            break
        out.append(g)
        n += len(g) if isinstance(g, tuple) else 1
    return out


def test_prefix_agreement_identical_orderings_agree_fully():
    a = np.arange(10.0)
    res = prefix_agreement(a, 2 * a + 1, p=0.9)
    np.testing.assert_allclose(res.ext, 1.0)


# ---------------------------------------------------------------------------- errors


def test_kendall_errors():
    with pytest.raises(InputError, match="`a` and `b` must have the same length, got 3 and 2"):
        kendall_tau([1, 2, 3], [1, 2])
    with pytest.raises(InputError, match="Kendall's tau needs at least 2 items, got 1"):
        kendall_tau([1], [1])
    with pytest.raises(InputError, match="`b` must be finite; position 0 is nan"):
        kendall_tau([1, 2], [math.nan, 1])
    with pytest.raises(InputError, match=r"`a` must be 1-D, got shape \(1, 2\)"):
        kendall_tau([[1, 2]], [1, 2])
    with pytest.raises(InputError, match=r"`scores` needs at least 1 rows \(rankings\) and 2 columns"):
        kendall_tau_matrix([[1.0]])


def test_friedman_errors():
    with pytest.raises(InputError, match=r"`scores` needs at least 2 rows \(rankings\) and 3 columns"):
        friedman([[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(InputError, match="`items` has 2 entries for 3 items"):
        friedman([[1.0, 2.0, 3.0], [2.0, 1.0, 3.0]], items=["a", "b"])


def test_prefix_agreement_errors():
    with pytest.raises(InputError, match="`a` and `b` must score the same systems, got 3 and 2 values"):
        prefix_agreement([1, 2, 3], [1, 2])
    with pytest.raises(InputError, match=r"`depths` must lie in 1..3 \(the number of systems\), got 4"):
        prefix_agreement([1, 2, 3], [1, 2, 3], depths=[1, 4])
    with pytest.raises(InputError, match="`depths` must be a non-empty list of integers"):
        prefix_agreement([1, 2, 3], [1, 2, 3], depths=[1.5])
    with pytest.raises(InputError, match="`ties` must be one of"):
        prefix_agreement([1, 2, 3], [1, 2, 3], ties="x")


# ---------------------------------------------------------------------------- CLI


def _run(argv, capsys):
    from fastrisk.cli import main

    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def risk_table(tmp_path):
    path = tmp_path / "risk.csv"
    path.write_text("system,linear,smooth\nA,0.5,0.4\nB,0.1,0.2\nC,0.3,0.3\nD,0.3,-0.1\nE,-0.2,0.0\n")
    return path


def test_cli_two_columns_of_one_file(risk_table, capsys):
    import json

    status, out, _ = _run(["agree", str(risk_table), "--a", "linear", "--b", "smooth", "--p", "0.8",
                           "--ties", "b", "--format", "json"], capsys)
    assert status == 0
    row = json.loads(out)
    lin = np.array([0.5, 0.1, 0.3, 0.3, -0.2])
    smo = np.array([0.4, 0.2, 0.3, -0.1, 0.0])
    assert row["a"] == "linear" and row["b"] == "smooth" and row["systems"] == 5
    assert row["kendall_tau"] == pytest.approx(scipy.stats.kendalltau(lin, smo).statistic)
    want = rbo(ranking_from_scores(lin), ranking_from_scores(smo), p=0.8, ties="b")
    assert row["rbo_ext"] == pytest.approx(want.ext) and row["rbo_res"] == pytest.approx(want.res)


def test_cli_one_column_of_two_files_matches_by_system_name(tmp_path, capsys):
    import json

    one = tmp_path / "one.csv"
    two = tmp_path / "two.csv"
    one.write_text("system,urisk\nA,0.5\nB,0.1\nC,0.3\n")
    two.write_text("system,urisk\nC,0.3\nA,0.5\nB,0.1\n")  # same scores, other row order
    status, out, _ = _run(["agree", str(one), str(two), "--column", "urisk", "--format", "json"], capsys)
    row = json.loads(out)
    assert status == 0 and row["kendall_tau"] == pytest.approx(1.0) and row["rbo_ext"] == pytest.approx(1.0)


def test_cli_score_matrices_and_prefixes(bench_data, capsys):
    import io

    import pyarrow.csv as pacsv

    err = str(bench_data / "trec-matrices" / "web2012_err20.csv")
    ndcg = str(bench_data / "trec-matrices" / "web2012_ndcg20.csv")
    status, out, _ = _run(["agree", err, ndcg, "--prefixes", "1,10,48", "--format", "csv"], capsys)
    assert status == 0
    t = pacsv.read_csv(io.BytesIO(out.encode()))
    assert t.column("depth").to_pylist() == [1, 10, 48]
    assert t.column_names[-4:] == ["rbo_ext", "rbo_min", "rbo_max", "rbo_res"]
    assert all(0.0 <= v <= 1.0 for v in t.column("rbo_min").to_pylist())


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--a", "linear"], "--a and --b go together"),
        (["--a", "linear", "--b", "nope"], "no score column 'nope'; the columns are system, linear, smooth"),
        (["--a", "linear", "--b", "smooth", "--system", "run"], "no system column 'run'"),
        (["--a", "linear", "--b", "smooth", "--p", "1"], "--p \\(persistence\\) must be strictly between 0 and 1"),
        (["--a", "linear", "--b", "smooth", "--prefixes", "0"], "--prefixes depths must lie in 1..5"),
        (["--a", "linear", "--b", "smooth", "--prefixes", "x"], "--prefixes must be 'all' or comma-separated"),
        ([], "give two score columns of one file"),
    ],
)
def test_cli_errors(risk_table, capsys, extra, message):

    status, _, err = _run(["agree", str(risk_table)] + extra, capsys)
    assert status == 2 and re.search(message, err), err


def test_cli_systems_must_match_unless_common(tmp_path, capsys):
    one = tmp_path / "one.csv"
    two = tmp_path / "two.csv"
    one.write_text("system,s\nA,1\nB,2\nC,3\nX,4\n")
    two.write_text("system,s\nA,1\nB,2\nC,3\n")
    status, _, err = _run(["agree", str(one), str(two), "--column", "s"], capsys)
    assert status == 2 and "must cover the same systems (only in" in err and "X" in err
    status, out, _ = _run(["agree", str(one), str(two), "--column", "s", "--common"], capsys)
    assert status == 0 and "3" in out
    bad = tmp_path / "bad.csv"
    bad.write_text("system,s\nA,1\nA,2\nC,3\n")
    status, _, err = _run(["agree", str(bad), str(two), "--column", "s"], capsys)
    assert status == 2 and "system 'A' appears more than once (data row 2)" in err


def test_friedman_orientation():
    """blocks="rows": rows are the rankings (scipy's friedmanchisquare(*scores.T)); blocks="columns":
    columns are, as scipy's friedmanchisquare(*scores)."""
    scores = np.random.default_rng(4).random((5, 7))
    rows = friedman(scores)
    cols = friedman(scores, blocks="columns")
    assert rows.blocks == "rows" and cols.blocks == "columns"
    assert rows.statistic == pytest.approx(scipy.stats.friedmanchisquare(*scores.T).statistic, rel=1e-12)
    assert cols.statistic == pytest.approx(scipy.stats.friedmanchisquare(*scores).statistic, rel=1e-12)
    assert cols.n_rankings == 7 and len(cols.items) == 5
    assert cols.to_arrow().num_rows == 5
    with pytest.raises(InputError, match="`blocks` must be one of 'rows', 'columns'"):
        friedman(scores, blocks="both")


# ---------------------------------------------------------------------------- pair naming


def test_symmetric_pairs_are_a_and_b():
    """One rule: the two members of a symmetric pair are the parameters and columns a, b."""
    one = rbo("a b c", "b a c", labels=("linear", "smooth")).to_arrow().to_pylist()[0]
    assert (one["pair"], one["a"], one["b"]) == (0, "linear", "smooth")
    many = rbo_many(["a b", "a c"], ["b a", "c a"], labels=(["x1", "x2"], ["y1", "y2"])).to_arrow()
    assert many.column("a").to_pylist() == ["x1", "x2"] and many.column("b").to_pylist() == ["y1", "y2"]
    m = kendall_tau_matrix(np.array([[1.0, 2, 3], [3.0, 2, 1]]), labels=["p", "q"]).to_arrow()
    assert m.column_names[:2] == ["a", "b"]
    with pytest.raises(InputError, match="`labels` has 3 entries for 2 rankings"):
        rbo("a", "a", labels=("x", "y", "z"))
    with pytest.raises(InputError, match="`labels` must be two sequences"):
        rbo_many(["a"], ["a"], labels=(["x"],))


def test_pair_parameters_are_a_and_b():
    assert kendall_tau([1.0, 2, 3], [1.0, 3, 2]).statistic == pytest.approx(1 / 3)
    assert kendall_tau(a=[1.0, 2, 3], b=[1.0, 3, 2]).statistic == pytest.approx(1 / 3)
    assert rbo(a="a b c", b="b a c").ext == rbo("a b c", "b a c").ext


@pytest.mark.parametrize("name", ["kendall_pairs", "rbo_batch", "friedman_ranks"])
def test_one_thread_twins_give_the_parallel_kernels_numbers(name):
    """Small calls run the one-thread twins (``<kernel>_serial``): the same numbers, bit for bit."""
    from fastrisk._kernels import agreement as K

    rng = np.random.default_rng(11)
    table = np.round(rng.random((6, 9)), 1)  # ties within and across rows
    first, second = np.triu_indices(6, k=1)
    first, second = first.astype(np.int64), second.astype(np.int64)
    if name == "kendall_pairs":
        ranks = np.empty(table.shape, np.int64)
        K.dense_ranks_serial(table, ranks)
        outs = [np.empty((first.size, 2)) for _ in range(2)]
        args = [(ranks, first, second, out) for out in outs]
    elif name == "rbo_batch":
        ids, top, bot = (np.empty(table.shape, np.int64) for _ in range(3))
        K.rankings_from_scores_serial(table, ids, top, bot)
        offsets = np.arange(0, table.size + 1, table.shape[1], dtype=np.int64)
        outs = [np.empty((first.size, 4)) for _ in range(2)]
        args = [(ids.reshape(-1), top.reshape(-1), bot.reshape(-1), offsets, first, second, np.full(first.size, 0.9), K.TIES_A, out)
                for out in outs]
    else:
        outs = [(np.empty(table.shape), np.empty(6)) for _ in range(2)]
        args = [(table, *out) for out in outs]
    getattr(K, name)(*args[0])
    getattr(K, name + "_serial")(*args[1])
    parallel_out, serial_out = (out if isinstance(out, tuple) else (out,) for out in outs)
    for a, b in zip(parallel_out, serial_out):
        np.testing.assert_array_equal(a, b)
