"""Per-topic metrics: official gdeval values, plain-Python references, ir_measures, names."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import pooling as ref

from fastrisk.data.io import read_matrix
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.data.runs import Qrels, read_qrels, read_runs
from fastrisk.errors import InputError
from fastrisk.measures.metrics import TopicMismatchWarning, evaluate, parse_measure, score_matrix_values


def test_official_gdeval_baseline_indriCASP(bench_data):
    web = bench_data / "trec2012-web"
    ev = evaluate(web / "runs" / "indri-rm-cata-filtered.run.gz", web / "qrels.adhoc.txt",
                  ["nDCG(dcg='exp-log2')@20", "ERR@20"])
    with open(web / "baseline-indriCASP.csv") as fh:
        rows = list(csv.DictReader(fh))
    nd, er = ev["nDCG(dcg='exp-log2')@20"], ev["ERR@20"]
    assert isinstance(nd, ScoreMatrix) and nd.measure == "nDCG(dcg='exp-log2')@20"
    col = {t: i for i, t in enumerate(nd.topics)}
    assert sorted(col) == sorted(r["topic"] for r in rows)
    for r in rows:
        i = col[r["topic"]]
        assert round(float(nd.values[0, i]), 5) == pytest.approx(float(r["ndcg20"]), abs=1e-12), r["topic"]
        assert round(float(er.values[0, i]), 5) == pytest.approx(float(r["err20"]), abs=1e-12), r["topic"]
    assert float(np.mean(er.values)) == pytest.approx(0.19466, abs=5e-6)


FAMILIES = [("P", {}), ("RBP", {"p": 0.8}), ("RBP", {"p": 0.5, "residual": True}), ("nDCG", {}), ("ERR", {})]


def _name(family, k, kw):
    if family == "RBP":
        extra = ",residual=True" if kw.get("residual") else ""
        return f"RBP(rel=1,p={kw['p']}{extra})@{k}"
    if family == "nDCG":
        return f"nDCG(dcg='exp-log2')@{k}"
    return f"{family}@{k}"


@settings(max_examples=40, deadline=None)
@given(st.data(), st.sampled_from(FAMILIES), st.integers(1, 7), st.booleans())
def test_metrics_match_reference(data, fam, k, condensed):
    family, kw = fam
    runs, qrels = ref.runs_and_qrels(data.draw)
    rs, q = ref.build(runs, qrels)
    got = score_matrix_values(rs, q, parse_measure(_name(family, k, kw)), condensed=condensed)
    for i, s in enumerate(rs.systems):
        for j, t in enumerate(rs.topics):
            want = ref.true_metric(runs, qrels, s, t, family, k, condensed=condensed, **kw)
            assert got[i, j] == pytest.approx(want, abs=1e-12), (s, t)


def test_evaluate_skips_topics_without_relevant_and_long_table():
    runs = {"a": {"1": ["x", "y"], "2": ["z"]}, "b": {"1": ["y"], "2": ["z"]}}
    qrels = {"1": {"y": 2, "x": -2}, "2": {"z": 0}}
    rs, q = ref.build(runs, qrels)
    with pytest.warns(TopicMismatchWarning, match=r"1 judged topics have no relevant document and are left out: \['2'\]"):
        ev = evaluate(rs, q, ["P@2", "nDCG@5"])
    assert ev.topics == ("1",)
    assert ev["P@2"].values.tolist() == [[0.5], [0.5]]
    tab = ev.to_arrow()
    assert tab.column_names == ["measure", "system", "topic", "value"]
    assert tab.num_rows == 4
    assert set(tab.column("measure").to_pylist()) == {"P@2", "nDCG@5"}
    with pytest.raises(InputError, match="no topic of the runs is judged in the qrels"):
        evaluate(rs, Qrels.from_dict({"9": {"q": 1}}), "P@1")
    kept = evaluate(rs, q, ["P@2", "nDCG@5"], no_relevant="keep")
    assert kept.topics == ("1", "2") and kept["P@2"].values[:, 1].tolist() == [0.0, 0.0]
    with pytest.raises(InputError, match="was not evaluated"):
        ev["ERR@20"]


@pytest.mark.parametrize("text, name", [
    ("nDCG@20", "nDCG@20"), ("ndcg@20", "nDCG@20"), ("ERR@20", "ERR@20"), ("P@10", "P@10"),
    ("RBP(rel=1,p=0.8)@10", "RBP(rel=1)@10"), ("RBP(p=0.95)", "RBP(rel=1,p=0.95)"),
    ("RBP(p=0.8,residual=True)@10", "RBP(rel=1,residual=True)@10"), ("P(rel=2)@5", "P(rel=2)@5"),
    ("nDCG(dcg='exp-log2')@20", "nDCG(dcg='exp-log2')@20"), ("nDCG(dcg=log2)@5", "nDCG@5"), ("nDCG", "nDCG"),
    ("AP", "AP"), ("MAP@10", "AP@10"), ("AP(rel=2)", "AP(rel=2)"), ("RR@10", "RR@10"), ("Rprec", "Rprec"),
    ("R@100", "R@100"), ("Judged@10", "Judged@10"), ("P(rel=1)@10", "P@10"),
])
def test_parse_measure_names(text, name):
    assert parse_measure(text).name == name


@pytest.mark.parametrize("text, message", [
    ("MAD@10", "unknown measure 'MAD@10'"),
    ("P", "needs a cutoff"),
    ("Rprec@10", "takes no cutoff"),
    ("nDCG(dcg='exp-log2')", "gdeval's nDCG needs a cutoff"),
    ("P@0", "cutoff after '@' must be a positive integer"),
    ("RBP(p=1.5)@10", "`p` in \\(0, 1\\)"),
    ("RBP(q=0.5)@10", "unknown parameter 'q=0.5'"),
    ("nDCG(dcg=exp)@10", "`dcg` must be 'log2'"),
    ("ERR(rel=2)@10", "allowed: none"),
    (3, "`measure` must be a name such as .nDCG@20., an ir_measures measure"),
])
def test_parse_measure_errors(text, message):
    with pytest.raises(InputError, match=message):
        parse_measure(text)


def test_agrees_with_ir_measures_on_binary_judgments(bench_data, tmp_path):
    ir_measures = pytest.importorskip("ir_measures")
    web = bench_data / "trec2012-web"
    # binary grades: trec_eval's linear nDCG gain equals gdeval's 2^g - 1
    lines = [ln.split() for ln in (web / "qrels.adhoc.txt").read_text().splitlines() if ln.strip()]
    qpath = tmp_path / "qrels.bin"
    qpath.write_text("".join(f"{t} 0 {d} {1 if int(g) > 0 else 0}\n" for t, _, d, g in lines))
    run_path = web / "runs" / "indri-ql-catb.run.gz"
    ev = evaluate(run_path, qpath, ["P@10", "nDCG@20"])
    qrels = list(ir_measures.read_trec_qrels(str(qpath)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    want = {(m.query_id, str(m.measure)): m.value
            for m in ir_measures.iter_calc([ir_measures.P @ 10, ir_measures.nDCG @ 20], qrels, run)}
    for name in ("P@10", "nDCG@20"):
        mat = ev[name]
        for i, t in enumerate(mat.topics):
            assert mat.values[0, i] == pytest.approx(want[(t, name)], abs=1e-6), (name, t)


@pytest.mark.slow  # the byte scanner as plain Python takes minutes on the bundled runs
def test_read_runs_then_evaluate_many(bench_data):
    rs = read_runs(bench_data / "trec2012-web" / "runs")
    q = read_qrels(bench_data / "trec2012-web" / "qrels.adhoc.txt")
    ev = evaluate(rs, q, "ERR@20", threads=1)
    assert ev["ERR@20"].values.shape == (8, 50)
    row = ev["ERR@20"].systems.index("indri-rm-cata-filtered")
    assert float(np.mean(ev["ERR@20"].values[row])) == pytest.approx(0.19466, abs=5e-6)


def test_cli_evaluate_long_output_and_matrix_file(bench_data, tmp_path, capsys):
    from fastrisk.cli import main

    web = bench_data / "trec2012-web"
    out = tmp_path / "m.parquet"
    status = main(["evaluate", str(web / "runs" / "indri-rm-cata-filtered.run.gz"), "--qrels",
                   str(web / "qrels.adhoc.txt"), "--measure", "ERR@20", "--format", "csv", "--matrix-out", str(out),
                   "--per-topic"])
    assert status == 0
    lines = capsys.readouterr().out.replace('"', "").splitlines()
    assert lines[0] == "measure,system,topic,value" and len(lines) == 51
    assert lines[1].startswith("ERR@20,indri,151,0.2174")
    m = read_matrix(out)
    assert m.shape == (1, 50)
    assert main(["evaluate", str(web / "runs" / "indri-rm-cata-filtered.run.gz"), "--qrels",
                 str(web / "qrels.adhoc.txt"), "--measure", "MAD"]) == 2
    assert "unknown measure 'MAD'" in capsys.readouterr().err
