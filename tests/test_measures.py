"""Every measure, named as ir_measures names it, equals ir_measures' own value (pytrec_eval for
trec_eval's measures, the gdeval Perl script for gdeval's) on real and generated runs."""

from __future__ import annotations

import random
import shutil
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastrisk.data.runs import Qrels, read_qrels, read_runs
from fastrisk.errors import InputError
from fastrisk.measures.metrics import TopicMismatchWarning, evaluate

ir_measures = pytest.importorskip("ir_measures")
pytest.importorskip("pytrec_eval")

TREC_EVAL = ["P@5", "P(rel=2)@10", "R@20", "R(rel=2)@50", "AP", "AP@10", "AP(rel=2)", "RR", "RR@5",
             "RR(rel=2)", "Rprec", "Rprec(rel=2)", "nDCG", "nDCG@20", "nDCG@3"]
GDEVAL = ["nDCG(dcg='exp-log2')@20", "ERR@20", "ERR@5", "nDCG(dcg='exp-log2')@5"]
needs_perl = pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval needs perl")


def write_run(path, run, tag):
    with open(path, "w") as fh:
        for t, docs in run.items():
            fh.writelines(f"{t} Q0 {d} {i + 1} {s!r} {tag}\n" for i, (d, s) in enumerate(docs.items()))


def write_qrels(path, qrels):
    with open(path, "w") as fh:
        for t, docs in qrels.items():
            fh.writelines(f"{t} 0 {d} {g}\n" for d, g in docs.items())


def ir_values(names, qrels_path, run_path):
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    return {(m.query_id, str(m.measure)): m.value
            for m in ir_measures.iter_calc([ir_measures.parse_measure(n) for n in names], qrels, run)}


def check(ev, s, want, names, tol):
    compared = 0
    for name in names:
        mat = ev[name]
        for j, t in enumerate(mat.topics):
            key = (t, str(ir_measures.parse_measure(name)))
            if key in want:
                assert mat.values[s, j] == pytest.approx(want[key], abs=tol), (name, t)
                compared += 1
    return compared


@pytest.mark.slow  # the byte scanner as plain Python takes minutes on the bundled runs
@pytest.mark.parametrize("run_name", ["indri-ql-catb.run.gz", "indri-rm-cata-filtered.run.gz"])
def test_trec_eval_measures_on_bundled_runs(bench_data, run_name):
    web = bench_data / "trec2012-web"
    path = web / "runs" / run_name
    ev = evaluate(path, web / "qrels.adhoc.txt", TREC_EVAL + ["Judged@10", "Judged@100"], no_relevant="keep")
    want = ir_values(TREC_EVAL + ["Judged@10", "Judged@100"], web / "qrels.adhoc.txt", path)
    assert check(ev, 0, want, TREC_EVAL + ["Judged@10", "Judged@100"], 1e-9) >= 17 * 45


@pytest.mark.slow  # the byte scanner as plain Python takes minutes on the bundled runs
@needs_perl
def test_gdeval_measures_on_bundled_runs(bench_data, tmp_path):
    web = bench_data / "trec2012-web"
    # gdeval rejects the spam grade -2; give it the same judgments with -2 as 0
    q = tmp_path / "qrels.txt"
    q.write_text("".join(f"{t} 0 {d} {max(int(g), 0)}\n"
                         for t, _, d, g in (ln.split() for ln in (web / "qrels.adhoc.txt").read_text().splitlines())))
    path = web / "runs" / "indri-ql-cata.run.gz"
    ev = evaluate(path, web / "qrels.adhoc.txt", GDEVAL)
    want = ir_values(GDEVAL, q, path)
    assert check(ev, 0, want, GDEVAL, 6e-6) == 4 * 50  # gdeval prints 5 decimals


def random_collection(rnd, ties):
    topics = [str(t) for t in rnd.sample(range(1, 40), rnd.randint(1, 4))]
    docs = [f"d{i:02d}" for i in range(25)]
    run, qrels = {}, {}
    for t in topics:
        n = rnd.randint(0, 25)
        run[t] = {d: (rnd.choice([1.0, 2.0, 3.5]) if ties else round(rnd.uniform(0, 100), 6))
                  for d in rnd.sample(docs, n)}
        qrels[t] = {d: rnd.choice([-2, 0, 0, 1, 1, 2, 3, 4]) for d in rnd.sample(docs, rnd.randint(1, 25))}
        if max(qrels[t].values()) < 2:  # pytrec_eval can crash on a topic without a document at rel=2
            qrels[t][rnd.choice(docs)] = 2
    return {t: r for t, r in run.items() if r}, qrels


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), ties=st.booleans())
def test_trec_eval_measures_on_generated_runs_with_ties(tmp_path_factory, seed, ties):
    rnd = random.Random(seed)
    run, qrels = random_collection(rnd, ties)
    if not run:
        return
    tmp = tmp_path_factory.mktemp("m")
    write_run(tmp / "run.txt", run, "sys")
    write_qrels(tmp / "qrels.txt", qrels)
    # ir_measures computes Judged@k itself and RR@k with the MS MARCO script: both break score
    # ties by docid ascending, trec_eval (and fastrisk, for every measure) descending
    names = [n for n in TREC_EVAL if not (ties and n == "RR@5")] + ([] if ties else ["Judged@5", "Judged@30"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopicMismatchWarning)
        ev = evaluate(tmp / "run.txt", tmp / "qrels.txt", names, no_relevant="keep")
    want = ir_values(names, tmp / "qrels.txt", tmp / "run.txt")
    assert check(ev, 0, want, names, 1e-9) == sum(1 for (t, _) in want if t in ev.topics)


@needs_perl
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), ties=st.booleans())
def test_gdeval_measures_on_generated_runs_with_ties(tmp_path_factory, seed, ties):
    rnd = random.Random(seed)
    run, qrels = random_collection(rnd, ties)
    qrels = {t: {d: max(g, 0) for d, g in j.items()} for t, j in qrels.items()}
    run = {t: r for t, r in run.items() if t.isdigit()}
    if not run or not any(g > 0 for t in run for g in qrels[t].values()):
        return
    tmp = tmp_path_factory.mktemp("g")
    write_run(tmp / "run.txt", run, "sys")
    write_qrels(tmp / "qrels.txt", qrels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopicMismatchWarning)
        ev = evaluate(tmp / "run.txt", tmp / "qrels.txt", GDEVAL)
    want = ir_values(GDEVAL, tmp / "qrels.txt", tmp / "run.txt")
    assert check(ev, 0, want, GDEVAL, 6e-6) == len(GDEVAL) * len(ev.topics)


def test_measure_errors_and_topic_warnings(tmp_path):
    run = tmp_path / "a.run"
    run.write_text("0152 Q0 d1 1 2.0 t\n153 Q0 d2 1 1.0 t\n")
    q = tmp_path / "q.txt"
    q.write_text("152 0 d1 1\n153 0 d2 1\n")
    rs, qr = read_runs(run), read_qrels(q)
    with pytest.raises(InputError, match="`measures` must be a measure name"):
        evaluate(rs, qr, 10)
    with pytest.warns(TopicMismatchWarning, match=r"1 only in the runs \['0152'\], 1 only in the qrels \['152'\]"):
        ev = evaluate(rs, qr, "P@1")
    assert ev.topics == ("153",)
    with pytest.raises(InputError, match=r"ERR@20 \(gdeval\) is defined for grades 0\.\.4.*\['153'\]"):
        evaluate(rs, Qrels.from_dict({"153": {"d2": 5}}), "ERR@20")
    with pytest.raises(InputError, match="`no_relevant` must be 'skip' or 'keep'"):
        evaluate(rs, qr, "P@1", no_relevant="drop")
    with pytest.raises(InputError, match="names a measure twice"):
        evaluate(rs, qr, ["AP", "MAP"])


def test_evaluation_result_model(bench_data):
    web = bench_data / "trec2012-web"
    ev = evaluate(web / "runs", web / "qrels.adhoc.txt", ["AP", "nDCG@20"])
    assert ev.values.shape == (2, 8, 50)
    tab = ev.to_arrow()
    assert tab.num_rows == 2 * 8 * 50 and tab.column_names == ["measure", "system", "topic", "value"]
    means = ev.means()
    assert means.column_names == ["system", "AP", "nDCG@20"]
    assert np.allclose(means.column("AP").to_numpy(), ev["AP"].values.mean(axis=1))
    assert "Evaluation(" in repr(ev) and "measure=2" in repr(ev)
