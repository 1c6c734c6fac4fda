"""Count measures sum over topics (issue #39): NumRet, NumRel, NumRet(rel=1) and NumQ are
summed in `Evaluation.means`, `Evaluation.summary` and ``fastrisk evaluate``, as trec_eval's
``all`` line (pytrec_eval's ``compute_aggregated_measure``), ir_measures and PyTerrier do;
NumQ is the number of topics. Other measures are averaged."""

from __future__ import annotations

import gzip
import io
import warnings
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pytest

from fastrisk.cli import main
from fastrisk.measures.metrics import evaluate, parse_measure

pytrec_eval = pytest.importorskip("pytrec_eval")

WEB = Path(__file__).resolve().parents[1] / "fastrisk" / "bench_data" / "trec2012-web"
RUNS = sorted((WEB / "runs").iterdir())[:3]
QRELS = WEB / "qrels.adhoc.txt"
#: ir_measures name -> trec_eval name
COUNTS = {"NumRet": "num_ret", "NumRel": "num_rel", "NumRet(rel=1)": "num_rel_ret", "NumQ": "num_q", "AP": "map",
          "P@10": "P_10"}


def _trec_summary(run_path):
    qrels = {}
    for line in QRELS.read_text().splitlines():
        t, _, d, g = line.split()
        qrels.setdefault(t, {})[d] = int(g)
    run = {}
    with gzip.open(run_path, "rt") as fh:
        for line in fh:
            t, _, d, _, s, _ = line.split()
            run.setdefault(t, {})[d] = float(s)
    per_topic = pytrec_eval.RelevanceEvaluator(qrels, {"num_ret", "num_rel", "num_rel_ret", "num_q", "map",
                                                       "P.10"}).evaluate(run)
    return {name: pytrec_eval.compute_aggregated_measure(trec, [v[trec] for v in per_topic.values()])
            for name, trec in COUNTS.items()}


def test_counts_sum_as_pytrec_eval_summary():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = evaluate(RUNS, QRELS, list(COUNTS), no_relevant="keep")
    table = result.means().to_pylist()
    for row, path in zip(table, RUNS):
        want = _trec_summary(path)
        for name in COUNTS:
            assert row[name] == pytest.approx(want[name], rel=1e-12, abs=0), (path.name, name)
    assert {row["NumQ"] for row in table} == {float(len(result.topics))}
    assert result.summary().shape == (len(COUNTS), len(RUNS))


def test_aggregate_rule_of_each_family():
    assert [parse_measure(n).aggregate for n in ("NumRet", "NumRet(rel=2)", "num_rel_ret", "NumRel", "num_q")] \
        == ["sum"] * 5
    assert {parse_measure(n).aggregate for n in ("AP", "nDCG@20", "P@10", "Judged@10")} == {"mean"}
    m = parse_measure("NumQ")
    assert m.summarise(np.ones((2, 7)), axis=1).tolist() == [7.0, 7.0]


def test_cli_evaluate_sums_counts():
    out = io.StringIO()
    with warnings.catch_warnings(), redirect_stdout(out):
        warnings.simplefilter("ignore")
        assert main(["evaluate", str(RUNS[0]), "--qrels", str(QRELS), "--measure", "NumQ", "--measure", "NumRet",
                     "--no-relevant", "keep", "--format", "csv"]) == 0
    lines = [ln for ln in out.getvalue().splitlines() if ln and not ln.startswith("#")]
    header, row = lines[0].split(","), lines[1].split(",")
    want = _trec_summary(RUNS[0])
    assert float(row[header.index("NumQ")]) == want["NumQ"] == 50
    assert float(row[header.index("NumRet")]) == want["NumRet"]
