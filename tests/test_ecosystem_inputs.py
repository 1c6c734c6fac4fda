"""Inputs as PyTerrier, ir_measures, ranx, pytrec_eval and ir_datasets write them (issue #39):
measure objects and Metric tuples, ranx metric names (each mapping against ranx's own numbers),
``names=``, ranx objects and frames, pytrec_eval results, ir_datasets ids (cached and not)."""

from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import numpy as np
import pytest

from fastrisk.data.runs import read_qrels
from fastrisk.errors import InputError
from fastrisk.measures.metrics import Evaluation, evaluate, parse_measure

pd = pytest.importorskip("pandas")

WEB = Path(__file__).resolve().parents[1] / "fastrisk" / "bench_data" / "trec2012-web"
RUN_FILES = sorted((WEB / "runs").iterdir())[:2]
QRELS = WEB / "qrels.adhoc.txt"


def _qrels_dict(nonnegative=False):
    out = {}
    for line in QRELS.read_text().splitlines():
        t, _, d, g = line.split()
        out.setdefault(t, {})[d] = max(0, int(g)) if nonnegative else int(g)
    return out


def _run_dict(path, tie_free=True):
    """A bundled run as {qid: {docno: score}}; ``tie_free``: score = -rank, so that every tool
    ranks the documents alike (ranx breaks score ties in another order than trec_eval)."""
    out = {}
    with gzip.open(path, "rt") as fh:
        for line in fh:
            t, _, d, rank, score, _ = line.split()
            out.setdefault(t, {})[d] = -float(rank) if tie_free else float(score)
    return out


def _quiet(fn, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **k)


# ------------------------------------------------------------------ ir_measures objects
def test_ir_measures_objects_and_metric_tuples():
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import AP, P, nDCG

    assert parse_measure(nDCG @ 10).name == "nDCG@10"
    assert parse_measure(P(rel=2) @ 5).name == "P(rel=2)@5"
    assert parse_measure(ir_measures.Metric("q1", AP, 0.3)).name == "AP"
    ev = _quiet(evaluate, RUN_FILES, QRELS, [nDCG @ 10, AP])
    assert ev.measures == ("nDCG@10", "AP")
    one = _quiet(evaluate, RUN_FILES, QRELS, nDCG @ 10)
    np.testing.assert_array_equal(one.values[0], ev.values[0])
    as_set = _quiet(evaluate, RUN_FILES, QRELS, {nDCG @ 10, AP})
    assert set(as_set.measures) == {"nDCG@10", "AP"}
    # the value ir_measures computes, on one run
    qrels = list(ir_measures.read_trec_qrels(str(QRELS)))
    run = list(ir_measures.read_trec_run(str(RUN_FILES[0])))
    want = ir_measures.calc_aggregate([nDCG @ 10], qrels, run)[nDCG @ 10]
    got = _quiet(evaluate, RUN_FILES[0], QRELS, [nDCG @ 10], no_relevant="keep").means()["nDCG@10"][0].as_py()
    assert got == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("bad", [3, None, object(), [("nDCG", 10)]])
def test_other_measure_objects_are_input_errors(bad):
    with pytest.raises(InputError, match="`measure` must be a name such as 'nDCG@20', an ir_measures measure"):
        parse_measure(bad) if not isinstance(bad, list) else _quiet(evaluate, RUN_FILES, QRELS, bad)


def test_unknown_ir_measures_measure_is_named():
    pytest.importorskip("ir_measures")
    from ir_measures import alpha_nDCG

    with pytest.raises(InputError, match=r"measure 'alpha_nDCG@20' is not computed by fastrisk: a diversity"):
        parse_measure(alpha_nDCG @ 20)


# ------------------------------------------------------------------ ranx names
#: ranx name -> fastrisk's measure computing ranx's definition
RANX = {"precision@10": "P@10", "precision@10-l2": "P(rel=2)@10", "precision": "SetP", "recall@100": "R@100",
        "recall@20-l3": "R(rel=3)@20", "recall": "SetR", "r-precision": "Rprec", "r-precision-l2": "Rprec(rel=2)",
        "hit_rate@10": "Success@10", "hit_rate@5-l2": "Success(rel=2)@5", "mrr": "RR", "mrr@10": "RR@10",
        "map": "AP", "map@100": "AP@100", "map-l2": "AP(rel=2)", "ndcg": "nDCG", "ndcg@10": "nDCG@10",
        "ndcg_burges@10": "nDCG(dcg='exp-log2')@10"}


def test_ranx_names_parse_to_their_fastrisk_measure():
    assert {n: parse_measure(n).name for n in RANX} == RANX
    # ir_measures' own lowercase spellings keep their meaning
    assert parse_measure("rbp@10").name == "RBP(rel=1)@10"
    assert parse_measure("bpref").name == "Bpref"


def test_ranx_names_equal_ranx_numbers_on_bundled_runs():
    ranx = pytest.importorskip("ranx")
    qd = _qrels_dict()
    qrels = ranx.Qrels(qd)
    for path in RUN_FILES:
        rd = _run_dict(path)
        ev = _quiet(evaluate, {"x": rd}, qd, list(RANX), no_relevant="keep")
        for name in RANX:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                per = ranx.evaluate(qrels, ranx.Run(rd), name, return_mean=False, make_comparable=True)
            want = dict(zip(qrels.keys(), per))
            got = dict(zip(ev.topics, ev[name].values[0]))
            assert set(got) <= set(want)
            np.testing.assert_allclose([got[t] for t in got], [want[t] for t in got], rtol=0, atol=1e-12,
                                       err_msg=f"{path.name} {name}")


def test_ranx_bpref_equals_bpref_without_negative_grades():
    ranx = pytest.importorskip("ranx")
    qd = _qrels_dict(nonnegative=True)
    rd = _run_dict(RUN_FILES[1])
    ev = _quiet(evaluate, {"x": rd}, qd, ["bpref"], no_relevant="keep")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        per = ranx.evaluate(ranx.Qrels(qd), ranx.Run(rd), "bpref", return_mean=False, make_comparable=True)
    want = dict(zip(ranx.Qrels(qd).keys(), per))
    np.testing.assert_allclose(ev["Bpref"].values[0], [want[t] for t in ev.topics], rtol=0, atol=1e-12)


@pytest.mark.parametrize(("name", "match"), [
    ("rbp.8", "ranx's rbp weights each document by its grade"),
    ("rbp.95-l2", "ranx's rbp weights each document by its grade"),
    ("hits@10", "ranx's hits is a count"),
    ("f1@10", r"ranx's f1@k \(F1 of precision and recall at k\)"),
    ("dcg@10", "ranx's dcg is not normalised"),
    ("dcg_burges@10", "ranx's dcg_burges is not normalised"),
    ("ndcg@10-l2", "ranx's ndcg at relevance level 2 removes documents"),
    ("ndcg_burges@10-l3", "ranx's ndcg_burges at relevance level 3"),
    ("bpref-l2", "ranx's bpref counts a negative grade as judged non-relevant"),
    ("hit_rate", "ranx's hit_rate needs a cutoff"),
    ("ndcg_burges", "ranx's ndcg_burges without a cutoff"),
    ("r-precision@10", "ranx's r-precision takes no cutoff"),
    ("precision@0", "the cutoff after '@' must be a positive integer"),
    ("map-l0", "the relevance level after '-l' must be a positive integer"),
])
def test_ranx_names_without_equal_are_refused(name, match):
    with pytest.raises(InputError, match=match):
        parse_measure(name)


# ------------------------------------------------------------------ names=, ranx objects and frames
def test_names_for_a_list_of_frames_and_a_runset():
    frames = []
    for path in RUN_FILES:
        rd = _run_dict(path, tie_free=False)
        frames.append(pd.DataFrame([(q, d, s) for q, per in rd.items() for d, s in per.items()],
                                   columns=["qid", "docno", "score"]))
    ev = _quiet(evaluate, frames, QRELS, ["AP"], names=["bm25", "dph"])
    assert ev.systems == ("bm25", "dph")
    plain = _quiet(evaluate, frames, QRELS, ["AP"])
    assert plain.systems == ("run0", "run1")
    np.testing.assert_array_equal(ev.values, plain.values)
    from fastrisk.data.runs import read_runs
    runs = read_runs(RUN_FILES)
    renamed = _quiet(evaluate, runs, QRELS, ["AP"], names=["a", "b"])
    assert renamed.systems == ("a", "b")
    np.testing.assert_array_equal(renamed.values, plain.values)
    with pytest.raises(InputError, match="`names` must be 2 distinct names, one per system of the RunSet"):
        evaluate(runs, QRELS, ["AP"], names=["a"])
    with pytest.raises(InputError, match="`names` has 1 entries for 2"):
        evaluate(frames, QRELS, ["AP"], names=["a"])


def test_ranx_objects_and_frames():
    ranx = pytest.importorskip("ranx")
    qd = _qrels_dict()
    rds = [_run_dict(p, tie_free=False) for p in RUN_FILES]
    ref = _quiet(evaluate, RUN_FILES, QRELS, ["AP", "nDCG@20"])
    runs = [ranx.Run(rd, name=n) for rd, n in zip(rds, ref.systems)]
    by_objects = _quiet(evaluate, runs, ranx.Qrels(qd), ["AP", "nDCG@20"])
    assert by_objects.systems == ref.systems
    np.testing.assert_array_equal(by_objects.values, ref.values)
    frames = {n: r.to_dataframe() for n, r in zip(ref.systems, runs)}
    assert list(frames[ref.systems[0]].columns) == ["q_id", "doc_id", "score"]
    by_frames = _quiet(evaluate, frames, ranx.Qrels(qd).to_dataframe(), ["AP", "nDCG@20"])
    np.testing.assert_array_equal(by_frames.values, ref.values)


# ------------------------------------------------------------------ pytrec_eval results
def test_pytrec_eval_results_become_an_evaluation():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qd = _qrels_dict()
    evaluator = pytrec_eval.RelevanceEvaluator(qd, {"map", "P.10", "gm_map"})
    results = {p.name: evaluator.evaluate(_run_dict(p, tie_free=False)) for p in RUN_FILES}
    ev = Evaluation.from_pytrec_eval(results)
    assert ev.systems == tuple(results)
    assert set(ev.measures) == {"AP", "P@10", "gm_map"}
    mine = _quiet(evaluate, RUN_FILES, QRELS, ["AP", "P@10"], no_relevant="keep", names=list(results))
    for name in ("AP", "P@10"):
        got = ev[name]
        want = {t: mine[name].values[:, i] for i, t in enumerate(mine.topics)}
        np.testing.assert_allclose(np.stack([want[t] for t in got.topics], axis=1), got.values, rtol=0, atol=1e-12)
    listed = Evaluation.from_pytrec_eval(list(results.values()), names=["a", "b"])
    assert listed.systems == ("a", "b")
    single = Evaluation.from_pytrec_eval(results[RUN_FILES[0].name])
    assert single.systems == ("run0",)


@pytest.mark.parametrize(("bad", "match"), [
    (3, r"`results` must be pytrec_eval results"),
    ({"a": {"q1": {"map": 0.1}}, "b": {"q2": {"map": 0.2}}}, r"pytrec_eval results of 'b': topics differ"),
    ({"a": {"q1": {"map": 0.1}}, "b": {"q1": {"P_10": 0.2}}}, r"pytrec_eval results of 'b', topic 'q1': no measure 'map'"),
    ({"a": {"q1": {"map": "x"}}}, r"measure 'map': not a number"),
])
def test_pytrec_eval_results_errors(bad, match):
    with pytest.raises(InputError, match=match):
        Evaluation.from_pytrec_eval(bad)


def test_pytrec_eval_names_must_match():
    with pytest.raises(InputError, match="`names` has 2 entries for 1 runs"):
        Evaluation.from_pytrec_eval({"q1": {"map": 0.1}}, names=["a", "b"])


# ------------------------------------------------------------------ ir_datasets ids
@pytest.fixture
def local_datasets(tmp_path, monkeypatch):
    ir_datasets = pytest.importorskip("ir_datasets")
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels
    from ir_datasets.util import Cache, LocalDownload, RequestsDownload

    path = tmp_path / "tiny.qrels"
    path.write_text("q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 1\n")
    defs = {0: "not relevant", 1: "relevant", 2: "highly relevant"}
    names = {"fastrisk-test/cached": Dataset(TrecQrels(LocalDownload(str(path)), defs)),
             "fastrisk-test/uncached": Dataset(TrecQrels(Cache(RequestsDownload("https://example.invalid/q"),
                                                               str(tmp_path / "absent.qrels")), defs))}
    for name, ds in names.items():
        ir_datasets.registry.register(name, ds)
    yield names
    for name in names:
        ir_datasets.registry._registered.pop(name, None)


def test_ir_datasets_id_in_local_cache(local_datasets):
    for ident in ("fastrisk-test/cached", "irds:fastrisk-test/cached"):
        q = read_qrels(ident)
        assert q.topics == ("q1", "q2")
    runs = {"a": {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d3": 1.0}}}
    assert evaluate(runs, "irds:fastrisk-test/cached", ["P@1"]).values.tolist() == [[[1.0, 1.0]]]


def test_ir_datasets_id_not_cached_says_how_to_download(local_datasets):
    with pytest.raises(InputError, match=r"qrels 'irds:fastrisk-test/uncached': the qrels of ir_datasets' "
                                         r"'fastrisk-test/uncached' are not in ir_datasets' local cache .* "
                                         r"`ir_datasets export fastrisk-test/uncached qrels > qrels.txt`"):
        read_qrels("irds:fastrisk-test/uncached")


def test_ir_datasets_unknown_id():
    pytest.importorskip("ir_datasets")
    with pytest.raises(InputError, match=r"qrels 'irds:no-such/dataset': ir_datasets knows no dataset 'no-such/dataset'"):
        read_qrels("irds:no-such/dataset")
    with pytest.raises(InputError, match="does not exist"):
        read_qrels("no-such/dataset")
