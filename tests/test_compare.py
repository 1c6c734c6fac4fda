"""`fastrisk.compare` (issue #39): PyTerrier's ``pt.Experiment`` and ranx's ``compare`` table with
risk. Checked against scipy and statsmodels, against fastrisk.risk, and against ``pt.Experiment``
itself on the bundled runs when PyTerrier is installed (it runs on result frames without Java)."""

from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.stats as ss

import fastrisk
from fastrisk.errors import InputError

multitest = pytest.importorskip("statsmodels.stats.multitest")

WEB = Path(__file__).resolve().parents[1] / "fastrisk" / "bench_data" / "trec2012-web"
RUNS = sorted((WEB / "runs").iterdir())
QRELS = WEB / "qrels.adhoc.txt"
MEASURES = ["AP", "P@10", "nDCG@20"]


def _compare(*a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fastrisk.compare(*a, **k)


@pytest.fixture(scope="module")
def result():
    return _compare(RUNS, QRELS, MEASURES, baseline=0, alpha=[0, 1, 5], correction="hs")


def test_t_test_and_holm_sidak_equal_scipy_and_statsmodels(result):
    for i, m in enumerate(MEASURES):
        V = result.values[i]
        p = np.array([ss.ttest_rel(V[s], V[0]).pvalue for s in range(1, V.shape[0])])
        np.testing.assert_allclose(result.pvalue[i, 1:, 0], p, rtol=1e-10)
        np.testing.assert_allclose(result.pvalue_adjusted[i, 1:, 0], multitest.multipletests(p, method="hs")[1],
                                   rtol=1e-10)
        assert np.isnan(result.pvalue[i, 0, 0]) and np.isnan(result.pvalue_adjusted[i, 0, 0])
        assert result.better[i, 1:, 0].tolist() == [int((V[s] > V[0]).sum()) for s in range(1, V.shape[0])]
        assert result.worse[i, 1:, 0].tolist() == [int((V[s] < V[0]).sum()) for s in range(1, V.shape[0])]
        np.testing.assert_array_equal(result.reject[i, :, 0], result.pvalue_adjusted[i, :, 0] <= 0.05)


def test_risk_columns_equal_fastrisk_risk(result):
    for i, m in enumerate(MEASURES):
        matrix = fastrisk.ScoreMatrix(result.values[i], result.systems, result.topics)
        r = fastrisk.risk(matrix, result.systems[0], alpha=[0, 1, 5])
        np.testing.assert_allclose(result.urisk[i, :, 1:, 0], r.urisk[:, 1:], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(result.trisk[i, :, 1:, 0], r.trisk[:, 1:], rtol=1e-10)
        np.testing.assert_allclose(result.trisk_pvalue[i, :, 1:, 0], r.pvalue[:, 1:], rtol=1e-9)


@pytest.mark.parametrize(("test", "ref"), [
    ("wilcoxon", lambda x, y: ss.wilcoxon(x, y).pvalue),
    ("sign", lambda x, y: ss.binomtest(int((x > y).sum()), int((x != y).sum()), 0.5).pvalue),
    (ss.ttest_rel, lambda x, y: ss.ttest_rel(x, y).pvalue),
])
def test_other_tests(test, ref):
    res = _compare(RUNS[:4], QRELS, ["AP"], baseline="indri-ql-cata", test=test, correction=None)
    b = res.systems.index("indri-ql-cata")
    V = res.values[0]
    for s in range(4):
        if s != b:
            assert res.pvalue[0, s, 0] == pytest.approx(ref(V[s], V[b]), rel=1e-10)
    np.testing.assert_array_equal(res.pvalue_adjusted, res.pvalue)


@pytest.mark.parametrize("test", ["bootstrap", "permutation"])
def test_resampling_tests_are_seeded(test):
    a = _compare(RUNS[:3], QRELS, ["AP"], test=test, replicates=2000, rng=1)
    b = _compare(RUNS[:3], QRELS, ["AP"], test=test, replicates=2000, rng=1)
    np.testing.assert_array_equal(a.pvalue, b.pvalue)
    p = a.pvalue[0, 1:, 0]
    assert ((p > 0) & (p <= 1)).all()
    t = _compare(RUNS[:3], QRELS, ["AP"]).pvalue[0, 1:, 0]
    assert np.all(np.abs(p - t) < 0.05)  # the resampled p-values of the mean are near the t test's


def test_several_baselines_and_all_pairs_share_one_family():
    res = _compare(RUNS[:4], QRELS, ["AP"], baseline=[0, "indri-ql-catb-filtered"], correction="bonferroni")
    assert res.baselines == (res.systems[0], "indri-ql-catb-filtered")
    p = res.pvalue[0]
    m = int((~np.isnan(p)).sum())
    assert m == 2 * 3
    np.testing.assert_allclose(res.pvalue_adjusted[0][~np.isnan(p)], np.minimum(1, p[~np.isnan(p)] * m))
    pairs = _compare(RUNS[:4], QRELS, ["AP"], baseline=None)
    assert pairs.baselines == pairs.systems
    assert np.isnan(np.diagonal(pairs.pvalue[0])).all() and (~np.isnan(pairs.pvalue[0])).sum() == 12


def test_perquery_layouts_and_round():
    res = _compare(RUNS[:2], QRELS, ["AP", "NumQ"], names=["x", "y"], round=3)
    pt_layout = res.perquery()
    assert pt_layout.column_names == ["name", "qid", "measure", "value"]
    assert pt_layout.num_rows == 2 * 2 * len(res.topics)
    assert res.perquery("ir_measures").column_names == ["run_id", "query_id", "measure", "value"]
    assert set(pt_layout.column("name").to_pylist()) == {"x", "y"}
    values = np.array(pt_layout.column("value"))
    np.testing.assert_array_equal(values, np.round(values, 3))
    table = res.table()
    assert table.column("NumQ").to_pylist() == [float(len(res.topics))] * 2  # a count sums
    assert table.column("AP").to_pylist() == list(np.round(res.mean[0], 3))


def test_table_layout_latex_markdown(result):
    table = result.table()
    assert table.column_names[:9] == ["name", *MEASURES, "AP +", "AP -", "AP p-value", "AP reject",
                                      "AP p-value corrected"]
    assert "AP TRisk(α=5) " not in table.column_names and "AP TRisk(α=5)" in table.column_names
    assert table.column("AP p-value").null_count == 1  # the baseline's own row
    latex = result.to_latex()
    assert "\\begin{tabular}" in latex and "TRisk$_{5}$ AP" in latex
    md = result.to_markdown()
    assert md.splitlines()[0].startswith("| # | Model | AP |")
    # superscripts: a system significantly better than the baseline carries its letter
    better = result.reject[0, :, 0] & (result.mean[0] > result.mean[0, 0])
    for s, name in enumerate(result.systems):
        line = next(ln for ln in md.splitlines() if f"| {name} |" in ln)
        assert ("ᵃ" in line.split("|")[3]) == bool(better[s])
    assert result.to_arrow().num_rows == 3 * 3 * len(result.systems)


def test_evaluation_input_from_pytrec_eval():
    runs = {"a": {"q1": {"map": 0.5}, "q2": {"map": 0.1}, "q3": {"map": 0.3}},
            "b": {"q1": {"map": 0.4}, "q2": {"map": 0.3}, "q3": {"map": 0.2}}}
    res = fastrisk.compare(fastrisk.Evaluation.from_pytrec_eval(runs), measures=["AP"], baseline="a")
    assert res.better[0, 1, 0] == 1 and res.worse[0, 1, 0] == 2
    assert res.pvalue[0, 1, 0] == pytest.approx(ss.ttest_rel([0.4, 0.3, 0.2], [0.5, 0.1, 0.3]).pvalue)


@pytest.mark.parametrize(("kw", "match"), [
    ({"test": "anova"}, "`test` must be one of t, wilcoxon, sign, bootstrap, permutation or a callable"),
    ({"correction": "tukey"}, "`correction` must be one of"),
    ({"level": 0}, r"`level` must be a number in \(0, 1\)"),
    ({"baseline": "nope"}, "`baseline` 'nope' is not a system"),
    ({"baseline": 9}, "`baseline` position 9 is out of range for 2 systems"),
    ({"baseline": [0, 0]}, "`baseline` names a system twice"),
    ({"round": "x"}, "`round` must be a number of digits"),
    ({"replicates": 0}, "`replicates` must be a positive integer"),
    ({"test": lambda x, y: 3}, r"`test` <lambda> must return \(statistic, p-value\)"),
])
def test_bad_arguments(kw, match):
    with pytest.raises(InputError, match=match):
        _compare(RUNS[:2], QRELS, ["AP"], **kw)


def test_qrels_required_and_layout_error(result):
    with pytest.raises(InputError, match="`qrels` is required unless `runs` is an Evaluation"):
        fastrisk.compare(RUNS[:2])
    with pytest.raises(InputError, match="`layout` must be 'pyterrier' or 'ir_measures'"):
        result.perquery("ranx")
    with pytest.raises(InputError, match="`baseline` must be one of the compared baselines"):
        result.table("nope")


def test_trisk_test():
    rng = np.random.default_rng(2)
    x, y = rng.uniform(size=30), rng.uniform(size=30)
    t, p = fastrisk.trisk_test(alpha=0)(x, y)
    want = ss.ttest_rel(x, y)
    assert (t, p) == pytest.approx((want.statistic, want.pvalue), rel=1e-10)
    d = x - y
    s = d + 5 * np.minimum(d, 0)
    t5, p5 = fastrisk.trisk_test(alpha=5)(x, y)
    assert t5 == pytest.approx(s.mean() / (s.std(ddof=1) / np.sqrt(30)), rel=1e-10)
    assert p5 == pytest.approx(2 * ss.t.sf(abs(t5), 29), rel=1e-9)
    with pytest.raises(InputError, match="`alpha` must be a number >= 0"):
        fastrisk.trisk_test(alpha=-1)
    with pytest.raises(InputError, match="trisk_test: needs two 1-D arrays"):
        fastrisk.trisk_test()(x, y[:3])


# ---------------------------------------------------------------------- against pt.Experiment
def _frames():
    pd = pytest.importorskip("pandas")
    frames = []
    for path in RUNS[:4]:
        rows = []
        with gzip.open(path, "rt") as fh:
            for line in fh:
                t, _, d, _, s, _ = line.split()
                rows.append((t, d, float(s)))
        frames.append(pd.DataFrame(rows, columns=["qid", "docno", "score"]))
    qrels = pd.read_csv(QRELS, sep=r"\s+", header=None, names=["qid", "it", "docno", "label"], dtype={"qid": str})
    topics = pd.DataFrame({"qid": sorted(set(qrels.qid)), "query": "x"})
    return frames, topics, qrels[["qid", "docno", "label"]]


@pytest.mark.parametrize(("test", "correction"), [("t", "hs"), ("wilcoxon", "fdr_bh")])
def test_equal_to_pt_experiment(test, correction):
    pt = pytest.importorskip("pyterrier")
    frames, topics, qrels = _frames()
    names = [p.name.split(".")[0] for p in RUNS[:4]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = pt.Experiment(frames, topics, qrels, ["map", "P_10", "num_q"], names=names, baseline=0, test=test,
                             correction=correction)
    got = _compare(frames, qrels, ["map", "P_10", "num_q"], names=names, test=test, correction=correction,
                   no_relevant="keep").table().to_pandas()
    assert list(got["name"]) == list(want["name"])
    for theirs, ours in (("map", "AP"), ("P_10", "P@10"), ("num_q", "NumQ")):
        np.testing.assert_allclose(got[ours], want[theirs], rtol=1e-10)
        if theirs == "num_q":
            continue
        for suffix in (" +", " -", " p-value", " p-value corrected"):
            np.testing.assert_allclose(got[ours + suffix].astype(float), want[theirs + suffix].astype(float),
                                       rtol=1e-9, err_msg=theirs + suffix)
        assert list(got[ours + " reject"].fillna(False)) == list(want[theirs + " reject"])


def test_trisk_test_in_pt_experiment():
    pt = pytest.importorskip("pyterrier")
    frames, topics, qrels = _frames()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = pt.Experiment(frames, topics, qrels, ["map"], baseline=0, test=fastrisk.trisk_test(alpha=5))
    res = _compare(frames, qrels, ["map"], alpha=[5], no_relevant="keep")
    np.testing.assert_allclose(table["map p-value"].astype(float)[1:], res.trisk_pvalue[0, 0, 1:, 0], rtol=1e-9)


# ---------------------------------------------------------------------- the command
def _cli(argv):
    import io
    from contextlib import redirect_stdout

    from fastrisk.cli import main

    out = io.StringIO()
    with warnings.catch_warnings(), redirect_stdout(out):
        warnings.simplefilter("ignore")
        status = main(argv)
    return status, out.getvalue()


def test_cli_compare_equals_the_function():
    status, text = _cli(["compare", *map(str, RUNS[:3]), "--qrels", str(QRELS), "--measure", "AP", "--baseline", "1",
                         "--test", "wilcoxon", "--correction", "hs", "--alpha", "0,5", "--format", "csv"])
    assert status == 0
    lines = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    header = lines[0].split(",")
    res = _compare(RUNS[:3], QRELS, ["AP"], baseline=1, test="wilcoxon", correction="hs", alpha=[0, 5])
    col = header.index("AP p-value corrected")
    got = [float(ln.split(",")[col]) if ln.split(",")[col] else np.nan for ln in lines[1:]]
    np.testing.assert_allclose(got, res.pvalue_adjusted[0, :, 0], rtol=1e-12)
    assert "AP TRisk(α=5)" in header
    status, md = _cli(["compare", *map(str, RUNS[:3]), "--qrels", str(QRELS), "--measure", "AP", "--view", "markdown"])
    assert status == 0 and md.startswith("| # | Model | AP |")


def test_cli_compare_bad_correction_is_one_line():
    import io
    from contextlib import redirect_stderr

    err = io.StringIO()
    with redirect_stderr(err):
        status, _ = _cli(["compare", str(RUNS[0]), str(RUNS[1]), "--qrels", str(QRELS), "--correction", "tukey"])
    assert status == 2 and "`correction` must be one of" in err.getvalue()
