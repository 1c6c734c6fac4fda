"""Per-topic metrics of the eight real TREC 2012 Web Indri runs (50 topics x 1,000 documents).

Peers measured on the same pre-parsed inputs: ir_measures (pytrec_eval backend),
pytrec_eval (the ``pytrec-eval-terrier`` wheel) and ranx. Measures common to all: nDCG@20
and P@10 (binary judgments, where every tool's definition coincides).

    PYTHONPATH=$PWD /work/venv/bin/python -m pytest benchmarks/bench_metrics.py --benchmark-only -q
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fastrisk.data.runs import Qrels, read_runs
from fastrisk.measures.metrics import evaluate

BENCH_DATA = Path(__file__).resolve().parent.parent / "bench_data"

WEB = BENCH_DATA / "trec2012-web"
GROUP = "nDCG@20 + P@10, 8 runs x 50 topics"


@pytest.fixture(scope="module")
def data():
    runs = read_runs(WEB / "runs")
    qd = {}
    for line in (WEB / "qrels.adhoc.txt").read_text().splitlines():
        if line.strip():
            t, _, d, g = line.split()
            qd.setdefault(t, {})[d] = 1 if int(g) > 0 else 0
    qrels = Qrels.from_dict(qd)
    run_dicts = {}
    for s, name in enumerate(runs.systems):
        run_dicts[name] = {t: {runs.docid(j, int(d)): float(-i) for i, d in enumerate(runs.docs[s, j, : runs.lengths[s, j]])}
                           for j, t in enumerate(runs.topics)}
    return runs, qrels, qd, run_dicts


def test_fastrisk(benchmark, data):
    runs, qrels, *_ = data
    benchmark.group = GROUP
    evaluate(runs, qrels, ["nDCG@20", "P@10"])
    benchmark(evaluate, runs, qrels, ["nDCG@20", "P@10"])


def test_fastrisk_with_err(benchmark, data):
    runs, qrels, *_ = data
    benchmark.group = GROUP + " (fastrisk alone: + ERR@20, RBP@10)"
    ms = ["nDCG@20", "P@10", "ERR@20", "RBP(rel=1,p=0.8)@10"]
    evaluate(runs, qrels, ms)
    benchmark(evaluate, runs, qrels, ms)


def test_ir_measures(benchmark, data):
    ir_measures = pytest.importorskip("ir_measures")
    _, _, qd, run_dicts = data
    benchmark.group = GROUP
    measures = [ir_measures.nDCG @ 20, ir_measures.P @ 10]

    def go():
        return [list(ir_measures.iter_calc(measures, qd, r)) for r in run_dicts.values()]

    go()
    benchmark(go)


def test_pytrec_eval(benchmark, data):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    _, _, qd, run_dicts = data
    benchmark.group = GROUP

    def go():
        ev = pytrec_eval.RelevanceEvaluator(qd, {"ndcg_cut.20", "P.10"})
        return [ev.evaluate(r) for r in run_dicts.values()]

    go()
    benchmark(go)


def test_ranx(benchmark, data):
    ranx = pytest.importorskip("ranx")
    _, _, qd, run_dicts = data
    benchmark.group = GROUP

    def go():
        q = ranx.Qrels(qd)
        return [ranx.evaluate(q, ranx.Run(r), ["ndcg@20", "precision@10"], return_mean=False)
                for r in run_dicts.values()]

    go()
    benchmark(go)


# ---------------------------------------------------------------- trec_eval's other measures (issue #30)
TREC_GROUP = "trec_eval measures (bpref, infAP, success, set_F, iprec, num_rel_ret, map -J), 8 runs x 50 topics"
TREC_FASTRISK = ["Bpref", "infAP", "Success@10", "SetF", "IPrec@0.5", "NumRet(rel=1)", "AP(judged_only=True)"]


@pytest.fixture(scope="module")
def graded(data):
    """The graded qrels as they are (-2 spam: pooled but unjudged for trec_eval), as both tools take them."""
    runs, _, _, run_dicts = data
    qd = {}
    for line in (WEB / "qrels.adhoc.txt").read_text().splitlines():
        if line.strip():
            t, _, d, g = line.split()
            qd.setdefault(t, {})[d] = int(g)
    return runs, Qrels.from_dict(qd), qd, run_dicts


def test_fastrisk_trec_measures(benchmark, graded):
    runs, qrels, *_ = graded
    benchmark.group = TREC_GROUP
    evaluate(runs, qrels, TREC_FASTRISK, no_relevant="keep")
    benchmark(evaluate, runs, qrels, TREC_FASTRISK, no_relevant="keep")


def test_pytrec_eval_trec_measures(benchmark, graded):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    _, _, qd, run_dicts = graded
    benchmark.group = TREC_GROUP

    def go():
        ev = pytrec_eval.RelevanceEvaluator(qd, {"bpref", "infAP", "success.10", "set_F", "iprec_at_recall.0.5",
                                                 "num_rel_ret"})
        judged_only = pytrec_eval.RelevanceEvaluator(qd, {"map"}, judged_docs_only_flag=True)
        return [(ev.evaluate(r), judged_only.evaluate(r)) for r in run_dicts.values()]

    go()
    benchmark(go)
