"""The trec_eval measures in the pooling-bias engine (issue #30).

A run scored against the pool of some systems (`score_against_pool`, ``ideal="pool"``) is
scored as trec_eval scores it against the qrels *restricted to that pool*: documents outside
the pool are absent from the qrels (nonpool), R and bpref's N count the judgments inside the
pool. The pool is rebuilt here in plain Python (each pooled system's top ``depth`` by score
descending, document id descending) and the restricted qrels go to pytrec_eval.
"""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_measures import write_qrels, write_run
from test_trec_measures import pytrec_values, random_collection

from fastrisk.data.runs import read_qrels, read_runs
from fastrisk.errors import InputError, TopicMismatchWarning
from fastrisk.measures.pooling import pooling_comparison, pooling_experiment, score_against_pool

pytest.importorskip("pytrec_eval")

POOLED = ["Bpref", "Bpref(rel=2)", "infAP", "AP(judged_only=True)", "P(judged_only=True)@10",
          "nDCG(judged_only=True)@20", "SetF", "IPrec@0.5", "Success@10", "NumRel", "R(rel=2)@100"]


def ranked(docs):
    return [d for d, _ in sorted(docs.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]


def pool_qrels(runs, qrels, pooled, depth):
    """The judgments of the documents in the top ``depth`` of the ``pooled`` systems (topics
    left without a grade >= 0 are dropped: trec_eval sizes its grade counts by the largest
    grade, and pytrec_eval then crashes now and then)."""
    out = {}
    for t, judged in qrels.items():
        pool = {d for s in pooled for d in ranked(runs[s].get(t, {}))[:depth]}
        out[t] = {d: g for d, g in judged.items() if d in pool}
    return {t: j for t, j in out.items() if j and max(j.values()) >= 0}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), ties=st.booleans(), depth=st.integers(1, 12))
def test_scores_against_a_pool_equal_trec_eval_on_the_pool_qrels(tmp_path_factory, seed, ties, depth):
    rnd = random.Random(seed)
    base, qrels = random_collection(rnd, ties)
    runs = {"s0": base}
    for s in ("s1", "s2", "s3"):  # other systems over the same topics
        runs[s] = {}
        for t in base:
            docs = sorted(qrels[t]) + [f"x{i}" for i in range(8)]
            runs[s][t] = {d: (rnd.choice([1.0, 2.0]) if ties else rnd.uniform(0, 9))
                          for d in rnd.sample(docs, rnd.randint(1, len(docs)))}
    tmp = tmp_path_factory.mktemp("p")
    for s, run in runs.items():
        write_run(tmp / f"{s}.txt", run, s)
    write_qrels(tmp / "qrels.txt", qrels)
    rs = read_runs([tmp / f"{s}.txt" for s in runs])
    q = read_qrels(tmp / "qrels.txt")
    pooled = rnd.sample(sorted(runs), rnd.randint(1, 3))
    restricted = pool_qrels(runs, qrels, pooled, depth)
    for name in POOLED:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TopicMismatchWarning)
            try:
                got = score_against_pool(rs, q, name, pool_systems=pooled, depth=depth)
            except InputError as err:  # no topic with a relevant document
                assert "no topic of the runs has a positive judgment" in str(err)
                return
        for i, s in enumerate(got.systems):
            want = pytrec_values([name], restricted, runs[s])
            for j, t in enumerate(got.topics):
                value = want.get((name, t), 0.0)  # nothing judged inside the pool: R = 0, every measure 0
                if t not in restricted:
                    assert name == "NumQ" or got.values[i, j] == 0.0, (name, s, t)
                    continue
                assert got.values[i, j] == (0.0 if np.isnan(value) else value), (name, s, t)


@pytest.fixture(scope="module")
def web3(bench_data):
    web = bench_data / "trec2012-web"
    names = ["indri-ql-cata", "indri-rm-catb", "indri-ql-catb-filtered", "indri-rm-cata-filtered"]
    return read_runs([web / "runs" / f"{n}.run.gz" for n in names]), read_qrels(web / "qrels.adhoc.txt")


def test_comparison_draws_are_shared_and_each_measure_is_its_own_experiment(web3):
    runs, qrels = web3
    kw = dict(depth=5, widths=(1, 2), repeats=6, common_topics=(5, 10), topic_repeats=8, rng=3)
    cmp = pooling_comparison(runs, qrels, ["AP", "Bpref", "infAP", "AP(judged_only=True)"], **kw)
    assert cmp.measures == ("AP", "Bpref", "infAP", "AP(judged_only=True)")
    for name in cmp.measures:
        one = pooling_experiment(runs, qrels, name, **kw)
        got = cmp[name]
        np.testing.assert_array_equal(got.systems, one.systems)  # the same draws for every measure
        for field in ("true", "unpooled", "loo_adjustment", "adjusted_abs", "mixed_abs", "accurate"):
            np.testing.assert_array_equal(getattr(got, field), getattr(one, field))
        assert got.mae_table().equals(one.mae_table())
    mae = cmp.mae_table()
    assert mae.column_names[:3] == ["measure", "width", "unadjusted"]
    assert mae.column("measure").to_pylist() == [m for m in cmp.measures for _ in (1, 2)]
    bias = cmp.bias_distribution()
    assert bias.column_names == ["measure", "width", "mean", "min", "q1", "median", "q3", "max"]
    assert cmp.mae_long().num_rows == 4 * 2 * (2 + 2 * 2)
    # bpref and infAP differ from AP: they skip the documents outside the pool
    assert not np.array_equal(cmp["Bpref"].unpooled, cmp["AP"].unpooled)
    with pytest.raises(InputError, match="was not in the comparison"):
        cmp["P@10"]
    with pytest.raises(InputError, match="each once"):
        pooling_comparison(runs, qrels, ["AP", "map"], **kw)


def test_cli_pool_bias_compares_measures(bench_data, capsys):
    from fastrisk.cli import main

    web = bench_data / "trec2012-web"
    runs = [str(web / "runs" / f"{n}.run.gz") for n in ("indri-ql-cata", "indri-rm-catb", "indri-ql-catb-filtered")]
    args = ["pool-bias", *runs, "--qrels", str(web / "qrels.adhoc.txt"), "--widths", "1,2", "--repeats", "4",
            "--common-topics", "10", "--topic-repeats", "5", "--seed", "2", "--format", "csv"]
    assert main(args + ["--measure", "Bpref"]) == 0
    out = capsys.readouterr().out.replace('"', "").splitlines()
    assert out[0] == "width,unadjusted,leave-one-out,mixed n=10,adjusted n=10" and len(out) == 3
    assert main(args + ["--measure", "AP", "--measure", "Bpref", "--measure", "infAP", "--report", "bias"]) == 0
    out = capsys.readouterr().out.replace('"', "").splitlines()
    assert out[0] == "measure,width,mean,min,q1,median,q3,max"
    assert [line.split(",")[0] for line in out[1:]] == ["AP", "AP", "Bpref", "Bpref", "infAP", "infAP"]
    assert main(args + ["--measure", "alpha_nDCG@20"]) == 2
    assert "diversity measure" in capsys.readouterr().err
