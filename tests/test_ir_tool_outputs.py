"""Files and frames the IR tools write, read as they come (issue #20): ``trec_eval -q`` with any
measure set (padded names, ``runid``, ``num_q``, the quoted ``relstring``), PyTerrier's
per-query experiment frames and ir_measures' ``iter_calc`` metrics.

The numbers come from the real tools where they install (pytrec_eval, ir_measures) on the
bundled TREC 2012 runs and qrels; the files are written in trec_eval's own layout (its
``printf("%-22s\\t%s\\t%6.4f\\n")``, ``"%ld"`` for counts, ``'%s'`` for relstring) and the
frames in PyTerrier's columns (``name, qid, measure, value``).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fastrisk import InputError, read_matrix, risk

DATA = Path(__file__).resolve().parent.parent / "fastrisk" / "bench_data" / "trec2012-web"
RUNS = ("indri-ql-cata", "indri-rm-cata")
#: trec_eval's count measures are printed with "%ld"; relstring with quotes.
_COUNTS = {"num_ret", "num_rel", "num_rel_ret", "num_q", "num_nonrel_judged_ret"}


def _qrels():
    out: dict[str, dict[str, int]] = {}
    for line in (DATA / "qrels.adhoc.txt").read_text().splitlines():
        qid, _, doc, grade = line.split()
        out.setdefault(qid, {})[doc] = int(grade)
    return out


def _run(name):
    out: dict[str, dict[str, float]] = {}
    with gzip.open(DATA / "runs" / f"{name}.run.gz", "rt") as fh:
        for line in fh:
            qid, _, doc, _, score, _ = line.split()
            out.setdefault(qid, {})[doc] = float(score)
    return out


def _relstring(run, qrels, qid, n=10):
    ranked = sorted(run[qid].items(), key=lambda kv: (-kv[1], kv[0]))[:n]
    return "".join("-" if doc not in qrels[qid] else (">" if qrels[qid][doc] > 9 else
                                                    str(max(qrels[qid][doc], 0))) for doc, _ in ranked)


def _trec_eval_q(measures, run_name, path):
    """``trec_eval -q -m <measures>`` output of one run, values from pytrec_eval, trec_eval's layout."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = _qrels(), _run(run_name)
    per_query = pytrec_eval.RelevanceEvaluator(qrels, set(measures) - {"relstring", "runid"}).evaluate(run)

    def line(name, qid, value):
        if isinstance(value, str):
            return f"{name:<22}\t{qid}\t{value}"
        return f"{name:<22}\t{qid}\t{int(value)}" if name in _COUNTS else f"{name:<22}\t{qid}\t{value:6.4f}"

    lines = []
    for qid in sorted(per_query, key=int):
        for name, value in per_query[qid].items():
            if name != "num_q":
                lines.append(line(name, qid, value))
        if "relstring" in measures:
            lines.append(line("relstring", qid, f"'{_relstring(run, qrels, qid)}'"))
    lines.append(line("runid", "all", run_name))
    lines.append(line("num_q", "all", len(per_query)))
    first = next(iter(per_query.values()))
    for name in first:
        if name != "num_q":
            lines.append(line(name, "all", float(np.mean([q[name] for q in per_query.values()]))))
    path.write_text("\n".join(lines) + "\n")
    return per_query


ALL_TREC = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
            "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "ndcg", "ndcg_cut", "success", "set_F")
OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
            "recip_rank", "iprec_at_recall", "P")


@pytest.mark.parametrize("measures", [ALL_TREC, OFFICIAL], ids=["all_trec", "official"])
def test_trec_eval_q_output_reads_with_any_measure_set(tmp_path, measures):
    files = []
    expected = {}
    for name in RUNS:
        path = tmp_path / f"{name}.treceval"
        expected[name] = _trec_eval_q(measures, name, path)
        files.append(path)
    assert "\t'" in files[0].read_text() or "relstring" not in measures  # the quoted values are there
    m = read_matrix(files, measure="P_10")
    assert m.systems == RUNS and m.measure == "P_10"
    for k, name in enumerate(RUNS):
        for i, qid in enumerate(m.topics):
            assert m.values[k, i] == pytest.approx(expected[name][qid]["P_10"], abs=5e-5)
    # a padded name, an integer count and the name risk() then uses
    assert read_matrix(files[0], measure="num_rel_ret").values.min() >= 0
    res = risk(read_matrix(files, measure="map"), RUNS[0], alpha=[0, 5])
    assert res.systems == RUNS


def test_trec_eval_without_a_measure_lists_the_numeric_ones(tmp_path):
    path = tmp_path / "ql.treceval"
    _trec_eval_q(ALL_TREC, RUNS[0], path)
    with pytest.raises(InputError, match="several measures") as err:
        read_matrix(path)
    assert "P_10" in str(err.value) and "map" in str(err.value)
    assert "skipped as not numeric: relstring" in str(err.value)


def test_a_non_numeric_measure_is_refused_by_name(tmp_path):
    path = tmp_path / "ql.treceval"
    _trec_eval_q(ALL_TREC, RUNS[0], path)
    with pytest.raises(InputError, match=r"measure 'relstring' is not a number per topic .*'") as err:
        read_matrix(path, measure="relstring")
    assert "line" in str(err.value) and "P_10" in str(err.value)


def test_trec_eval_output_through_the_cli(tmp_path, capsys):
    from fastrisk.cli import main

    files = []
    for name in RUNS:
        files.append(tmp_path / f"{name}.treceval")
        _trec_eval_q(ALL_TREC, name, files[-1])
    assert main(["risk", *map(str, files), "--measure", "P_10", "--baseline", RUNS[0], "--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert RUNS[1] in out


# ---------------------------------------------------------------- frames
def _pyterrier_frame():
    """``pt.Experiment(..., perquery=True)``'s layout: name, qid, measure, value."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    evaluator = pytrec_eval.RelevanceEvaluator(_qrels(), {"map", "ndcg_cut"})
    rows = []
    for name in RUNS:
        for qid, values in evaluator.evaluate(_run(name)).items():
            rows += [(name, qid, "map", values["map"]), (name, qid, "ndcg_cut_20", values["ndcg_cut_20"])]
    return pd.DataFrame(rows, columns=["name", "qid", "measure", "value"])


def test_pyterrier_per_query_frame(tmp_path):
    df = _pyterrier_frame()
    m = read_matrix(df, measure="ndcg_cut_20")
    assert set(m.systems) == set(RUNS) and m.measure == "ndcg_cut_20"
    sub = df[(df.measure == "ndcg_cut_20") & (df.name == RUNS[1])].set_index("qid")["value"]
    k = m.systems.index(RUNS[1])
    np.testing.assert_allclose(m.values[k], sub.loc[list(m.topics)].to_numpy())
    with pytest.raises(InputError, match="several measures") as err:
        read_matrix(df)
    assert "map" in str(err.value) and "ndcg_cut_20" in str(err.value)
    path = tmp_path / "perquery.csv"
    df.to_csv(path, index=False)
    assert read_matrix(path, measure="map").n_systems == len(RUNS)


def test_ir_measures_iter_calc_metrics():
    ir_measures = pytest.importorskip("ir_measures")
    measures = [ir_measures.nDCG @ 20, ir_measures.P @ 10]
    frames = []
    for name in RUNS:
        metrics = pd.DataFrame(ir_measures.iter_calc(measures, _qrels(), _run(name)))
        assert list(metrics.columns) == ["query_id", "measure", "value"]
        with pytest.raises(InputError, match="needs a column naming the system"):
            read_matrix(metrics, measure="P@10")
        frames.append(metrics.assign(run=name))
    df = pd.concat(frames)
    m = read_matrix(df, measure="nDCG@20")
    assert set(m.systems) == set(RUNS) and m.measure == "nDCG@20"
    agg = ir_measures.calc_aggregate([ir_measures.nDCG @ 20], _qrels(), _run(RUNS[0]))
    k = m.systems.index(RUNS[0])
    assert m.values[k].mean() == pytest.approx(agg[ir_measures.nDCG @ 20], rel=1e-9)
