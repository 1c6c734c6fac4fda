"""trec_eval's measures under ir_measures' names (issue #30), equal to pytrec_eval's per topic.

The reference is trec_eval itself, through pytrec_eval (the C code ir_measures' trec_eval
provider runs), called directly with the relevance level and ``-J`` (``judged_docs_only_flag``)
each measure needs. Values are compared with ``==``: fastrisk evaluates trec_eval's
floating-point expressions in trec_eval's order, so the doubles agree bit for bit.

Real runs: two of the bundled TREC 2012 Web runs (the six others were held out while the
measures were written, and agree as exactly); generated runs: ties in scores, unjudged documents,
negative grades (pooled but unjudged), runs retrieving nothing relevant, topics without a
relevant document.
"""

from __future__ import annotations

import gzip
import math
import random
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import trec_measures as trec_reference
from test_measures import write_qrels, write_run

from fastrisk.errors import InputError
from fastrisk.measures.metrics import TopicMismatchWarning, evaluate, parse_measure

pytrec_eval = pytest.importorskip("pytrec_eval")

#: ir_measures name -> (trec_eval measure, the key pytrec_eval reports, relevance level, -J)
TREC = {
    "Bpref": ("bpref", "bpref", 1, False),
    "Bpref(rel=2)": ("bpref", "bpref", 2, False),
    "infAP": ("infAP", "infAP", 1, False),
    "infAP(rel=2)": ("infAP", "infAP", 2, False),
    "Success@1": ("success.1", "success_1", 1, False),
    "Success@10": ("success.10", "success_10", 1, False),
    "Success(rel=2)@5": ("success.5", "success_5", 2, False),
    "SetP": ("set_P", "set_P", 1, False),
    "SetP(rel=2)": ("set_P", "set_P", 2, False),
    "SetP(relative=True)": ("set_relative_P", "set_relative_P", 1, False),
    "SetR": ("set_recall", "set_recall", 1, False),
    "SetR(rel=2)": ("set_recall", "set_recall", 2, False),
    "SetF": ("set_F", "set_F", 1, False),
    "SetF(beta=0.5)": ("set_F.0.5", "set_F", 1, False),
    "SetF(rel=2,beta=2)": ("set_F.2", "set_F", 2, False),
    "SetAP": ("set_map", "set_map", 1, False),
    "IPrec@0.0": ("iprec_at_recall.0", "iprec_at_recall_0.00", 1, False),
    "IPrec@0.1": ("iprec_at_recall.0.1", "iprec_at_recall_0.10", 1, False),
    "IPrec@0.5": ("iprec_at_recall.0.5", "iprec_at_recall_0.50", 1, False),
    "IPrec@0.6": ("iprec_at_recall.0.6", "iprec_at_recall_0.60", 1, False),
    "IPrec@1.0": ("iprec_at_recall.1", "iprec_at_recall_1.00", 1, False),
    "IPrec(rel=2)@0.3": ("iprec_at_recall.0.3", "iprec_at_recall_0.30", 2, False),
    "NumRet": ("num_ret", "num_ret", 1, False),
    "NumRet(rel=1)": ("num_rel_ret", "num_rel_ret", 1, False),
    "NumRet(rel=2)": ("num_rel_ret", "num_rel_ret", 2, False),
    "NumRel": ("num_rel", "num_rel", 1, False),
    "NumRel(rel=2)": ("num_rel", "num_rel", 2, False),
    "NumQ": ("num_q", "num_q", 1, False),
    "R@10": ("recall.10", "recall_10", 1, False),
    "R(rel=2)@100": ("recall.100", "recall_100", 2, False),
    "P(judged_only=True)@10": ("P.10", "P_10", 1, True),
    "AP(judged_only=True)": ("map", "map", 1, True),
    "AP(rel=2,judged_only=True)": ("map", "map", 2, True),
    "nDCG(judged_only=True)@20": ("ndcg_cut.20", "ndcg_cut_20", 1, True),
    "nDCG(judged_only=True)": ("ndcg", "ndcg", 1, True),
    "Rprec(judged_only=True)": ("Rprec", "Rprec", 1, True),
    "RR(judged_only=True)": ("recip_rank", "recip_rank", 1, True),
    "R(judged_only=True)@20": ("recall.20", "recall_20", 1, True),
    "Success(judged_only=True)@5": ("success.5", "success_5", 1, True),
    "SetP(judged_only=True)": ("set_P", "set_P", 1, True),
    "SetF(judged_only=True)": ("set_F", "set_F", 1, True),
    "SetAP(judged_only=True)": ("set_map", "set_map", 1, True),
    "IPrec(judged_only=True)@0.5": ("iprec_at_recall.0.5", "iprec_at_recall_0.50", 1, True),
}
#: trec_eval's own names for some of them (as ir_measures.parse_trec_measure reads them)
TREC_NAMES = {"bpref": "Bpref", "infAP": "infAP", "success_10": "Success@10", "success.1": "Success@1",
              "set_P": "SetP", "set_relative_P": "SetP(relative=True)", "set_recall": "SetR", "set_F": "SetF",
              "set_F_0.5": "SetF(beta=0.5)", "set_map": "SetAP", "iprec_at_recall_0.50": "IPrec@0.5",
              "iprec_at_recall.1": "IPrec@1.0", "num_ret": "NumRet", "num_rel_ret": "NumRet(rel=1)",
              "num_rel": "NumRel", "num_q": "NumQ", "recall_10": "R@10"}


def pytrec_values(names, qrels, run):
    """{(name, topic): value} from pytrec_eval, one evaluator per (measure, level, -J)."""
    out = {}
    for name in names:
        measure, key, level, judged_only = TREC[name]
        ev = pytrec_eval.RelevanceEvaluator(qrels, {measure}, relevance_level=level,
                                            judged_docs_only_flag=judged_only)
        for topic, values in ev.evaluate(run).items():
            out[name, topic] = values[key]
    return out


def assert_equal_per_topic(ev, want, names, system=0):
    """Every (measure, topic) pytrec_eval reports equals fastrisk's value exactly; returns how many."""
    compared = 0
    for name in names:
        mat = ev[name]
        col = {t: j for j, t in enumerate(mat.topics)}
        for (n, topic), value in want.items():
            if n == name and topic in col:
                got = float(mat.values[system, col[topic]])
                if math.isnan(value):  # trec_eval's IPrec divides 0 by 0 when -J leaves no document
                    assert name.startswith("IPrec") and "judged_only" in name and got == 0.0, (name, topic, got)
                else:
                    assert got == value, (name, topic, got, value)
                compared += 1
    return compared


def test_names_round_trip_as_ir_measures_prints_them():
    ir_measures = pytest.importorskip("ir_measures")
    for name in TREC:
        assert parse_measure(name).name == name
        if "judged_only" not in name and "rel=2" not in name:
            assert str(ir_measures.parse_measure(name)) == name
    for trec, name in TREC_NAMES.items():
        assert parse_measure(trec).name == name, trec
        if "." not in trec:
            assert [str(m) for m in ir_measures.parse_trec_measure(trec)] == [name]


@pytest.mark.parametrize("text, message", [
    ("IPrec", "needs a recall level, e.g. IPrec@0.5"),
    ("IPrec@1.5", "recall level after '@' must be a number in \\[0, 1\\]"),
    ("Success", "needs a cutoff, e.g. Success@10"),
    ("Bpref@10", "takes no cutoff"),
    ("SetF(beta=-1)", "`beta` >= 0"),
    ("SetP(relative=maybe)", "`relative` True or False"),
    ("success", "stands for several measures"),
    ("iprec_at_recall", "iprec_at_recall_0.50"),
    ("nDCG(dcg='exp-log2',judged_only=True)@10", "judged_only is trec_eval's"),
    ("alpha_nDCG@20", "diversity measure: it needs subtopic"),
    ("nERR_IA@20", "diversity measure"),
])
def test_parse_errors(text, message):
    with pytest.raises(InputError, match=message):
        parse_measure(text)


def random_collection(rnd, ties):
    """Runs with ties, unjudged documents, negative grades, nothing relevant; topics without a relevant."""
    topics = [str(t) for t in rnd.sample(range(1, 40), rnd.randint(1, 5))]
    docs = [f"d{i:02d}" for i in range(30)]
    run, qrels = {}, {}
    for t in topics:
        n = rnd.randint(1, 30)
        run[t] = {d: (rnd.choice([1.0, 2.0, 3.5]) if ties else round(rnd.uniform(0, 100), 6))
                  for d in rnd.sample(docs, n)}
        kind = rnd.random()
        judged = rnd.sample(docs, rnd.randint(1, 30))
        if kind < 0.15:  # retrieves nothing relevant
            grades = {d: (rnd.choice([0, -1, -2]) if d in run[t] else rnd.choice([1, 2])) for d in judged}
        elif kind < 0.25:  # no relevant document at all
            grades = {d: rnd.choice([0, -1]) for d in judged}
        else:
            grades = {d: rnd.choice([-2, -1, 0, 0, 0, 1, 1, 2, 3]) for d in judged}
        if max(grades.values()) < 0:  # trec_eval sizes its grade counts by the largest grade: keep one >= 0
            grades[judged[0]] = 0
        qrels[t] = grades
    return run, qrels


NAMES = list(TREC)


def evaluate_generated(tmp, seed, ties, names):
    """``(evaluation, run, qrels)`` of `random_collection`'s run, written to files and read back."""
    run, qrels = random_collection(random.Random(seed), ties)
    write_run(tmp / "run.txt", run, "sys")
    write_qrels(tmp / "qrels.txt", qrels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopicMismatchWarning)
        return evaluate(tmp / "run.txt", tmp / "qrels.txt", names, no_relevant="keep"), run, qrels


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), ties=st.booleans())
def test_generated_runs_equal_pytrec_eval_exactly(tmp_path_factory, seed, ties):
    ev, run, qrels = evaluate_generated(tmp_path_factory.mktemp("t"), seed, ties, NAMES)
    want = pytrec_values(NAMES, qrels, run)
    assert assert_equal_per_topic(ev, want, NAMES) == len(want) == len(NAMES) * len(run)


@pytest.mark.slow  # the byte scanner as plain Python takes minutes on the bundled runs
@pytest.mark.parametrize("run_name", ["indri-rm-catb", "indri-ql-catb-filtered"])
def test_bundled_runs_equal_pytrec_eval_exactly(bench_data, run_name):
    web = bench_data / "trec2012-web"
    path = web / "runs" / f"{run_name}.run.gz"
    ev = evaluate(path, web / "qrels.adhoc.txt", NAMES, no_relevant="keep")
    want = pytrec_values(NAMES, *read_plain(path, web / "qrels.adhoc.txt"))
    assert assert_equal_per_topic(ev, want, NAMES) == len(NAMES) * 50


def read_plain(run_path, qrels_path):
    """``(qrels, run)`` as pytrec_eval takes them, read line by line."""
    run, qrels = {}, {}
    with gzip.open(run_path, "rt") as fh:
        for line in fh:
            qid, _, doc, _, score, _ = line.split()
            run.setdefault(qid, {})[doc] = float(score)
    for line in qrels_path.read_text().splitlines():
        qid, _, doc, grade = line.split()
        qrels.setdefault(qid, {})[doc] = int(grade)
    return qrels, run


def test_cli_evaluate_trec_measures_on_bundled_data(bench_data, capsys):
    from fastrisk.cli import main

    web = bench_data / "trec2012-web"
    path = web / "runs" / "indri-rm-catb.run.gz"
    args = ["evaluate", str(path), "--qrels", str(web / "qrels.adhoc.txt"), "--measure", "Bpref", "--measure", "infAP",
            "--measure", "Success@10", "--measure", "set_F_0.5", "--format", "csv", "--per-topic"]
    assert main(args) == 0
    lines = capsys.readouterr().out.replace('"', "").splitlines()
    assert lines[0] == "measure,system,topic,value" and len(lines) == 1 + 4 * 50
    want = pytrec_values(["Bpref", "infAP", "Success@10", "SetF(beta=0.5)"], *read_plain(path, web / "qrels.adhoc.txt"))
    for line in lines[1:]:
        measure, _, topic, value = line.split(",")
        assert float(value) == pytest.approx(want[measure, topic], abs=1e-15), (measure, topic)
    assert main(args[:-3] + ["--measure", "alpha_nDCG@20"]) == 2
    assert "not computed by fastrisk: a diversity measure" in capsys.readouterr().err


#: ir_measures name -> (reference measure, keyword arguments)
PLAIN = {
    "Bpref": ("bpref", {}), "Bpref(rel=2)": ("bpref", {"rel": 2}), "infAP": ("infAP", {}),
    "infAP(rel=2)": ("infAP", {"rel": 2}), "Success@3": ("success", {"k": 3}), "SetP": ("set_P", {}),
    "SetP(relative=True)": ("set_relative_P", {}), "SetR(rel=2)": ("set_recall", {"rel": 2}),
    "SetF(beta=0.25)": ("set_F", {"beta": 0.25}), "SetAP": ("set_map", {}), "IPrec@0.0": ("iprec", {}),
    "IPrec@0.7": ("iprec", {"recall": 0.7}), "NumRet": ("num_ret", {}), "NumRet(rel=2)": ("num_rel_ret", {"rel": 2}),
    "NumRel": ("num_rel", {}), "P(judged_only=True)@4": ("P", {"k": 4, "judged_only": True}),
    "AP(judged_only=True)": ("AP", {"judged_only": True}),
    "SetF(judged_only=True)": ("set_F", {"judged_only": True}),
    "IPrec(rel=2,judged_only=True)@0.5": ("iprec", {"rel": 2, "recall": 0.5, "judged_only": True}),
}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), ties=st.booleans())
def test_generated_runs_equal_the_plain_reference(tmp_path_factory, seed, ties):
    ev, run, qrels = evaluate_generated(tmp_path_factory.mktemp("r"), seed, ties, list(PLAIN))
    for name, (plain, kw) in PLAIN.items():
        mat = ev[name]
        for j, t in enumerate(mat.topics):
            ranking = [d for d, _ in sorted(run[t].items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]
            want = trec_reference.measure(plain, ranking, qrels[t], **kw)
            assert mat.values[0, j] == pytest.approx(want, abs=1e-12), (name, t)
