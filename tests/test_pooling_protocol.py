"""Pooled scoring options: Webber & Park's protocol (pooled but unjudged documents judged
non-relevant) and the ideal ranking of pooled nDCG from the pool or from every judgment."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import pooling as ref

from fastrisk.errors import InputError
from fastrisk.measures.pooling import leave_one_out, loo_adjustment, pooling_experiment, score_against_pool

FAMILIES = [("P", 5, "P@5"), ("RBP", 6, "RBP(rel=1,p=0.8)@6"), ("nDCG", 4, "nDCG(dcg='exp-log2')@4"),
            ("ERR", 5, "ERR@5")]
OPTIONS = st.sampled_from(["unjudged", "nonrelevant"]), st.sampled_from(["pool", "full"])


@settings(max_examples=60, deadline=None)
@given(st.data(), st.sampled_from(FAMILIES), st.integers(1, 6), st.sampled_from(["assumed", "condensed"]), *OPTIONS)
def test_pooled_scores_match_reference(data, fam, depth, mode, pooled_unjudged, ideal):
    family, k, name = fam
    runs, qrels = ref.runs_and_qrels(data.draw)
    rs, q = ref.build(runs, qrels)
    subset = data.draw(st.lists(st.sampled_from(rs.systems), unique=True, min_size=1))
    mat = score_against_pool(rs, q, name, pool_systems=subset, depth=depth, mode=mode,
                             pooled_unjudged=pooled_unjudged, ideal=ideal)
    for i, s in enumerate(mat.systems):
        for j, t in enumerate(mat.topics):
            want = ref.pooled_metric(runs, qrels, s, t, subset, depth, family, k, condensed=(mode == "condensed"),
                                     pooled_unjudged=pooled_unjudged, ideal=ideal)
            assert mat.values[i, j] == pytest.approx(want, abs=1e-12), (s, t)


@settings(max_examples=40, deadline=None)
@given(st.data(), st.sampled_from(FAMILIES), st.integers(1, 6), st.sampled_from(["assumed", "condensed"]), *OPTIONS)
def test_leave_one_out_true_and_unpooled_match_reference(data, fam, depth, mode, pooled_unjudged, ideal):
    family, k, name = fam
    runs, qrels = ref.runs_and_qrels(data.draw)
    rs, q = ref.build(runs, qrels)
    lo = leave_one_out(rs, q, name, depth=depth, mode=mode, pooled_unjudged=pooled_unjudged, ideal=ideal)
    assert (lo.pooled_unjudged, lo.ideal) == (pooled_unjudged, ideal)
    topics = ref.judged_topics(runs, qrels)
    cond = mode == "condensed"
    for i, s in enumerate(lo.systems):
        others = [x for x in rs.systems if x != s]
        unp = ref.mean_pooled(runs, qrels, s, topics, others, depth, family, k, condensed=cond,
                              pooled_unjudged=pooled_unjudged, ideal=ideal)
        true = sum(ref.true_metric(runs, qrels, s, t, family, k, condensed=cond, pooled_unjudged=pooled_unjudged,
                                   depth=depth) for t in topics) / len(topics)
        assert lo.unpooled[i] == pytest.approx(unp, abs=1e-12)
        assert lo.true[i] == pytest.approx(true, abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.data(), st.sampled_from(FAMILIES), *OPTIONS)
def test_loo_adjustment_matches_reference(data, fam, pooled_unjudged, ideal):
    family, k, name = fam
    runs, qrels = ref.runs_and_qrels(data.draw, min_systems=3)
    rs, q = ref.build(runs, qrels)
    new = data.draw(st.sampled_from(rs.systems))
    pooled = data.draw(st.lists(st.sampled_from([s for s in rs.systems if s != new]), unique=True, min_size=1))
    res = loo_adjustment(rs, q, name, pooled=pooled, new=new, depth=3, mode="condensed",
                         pooled_unjudged=pooled_unjudged, ideal=ideal)
    topics = ref.judged_topics(runs, qrels)
    kw = dict(condensed=True, pooled_unjudged=pooled_unjudged, ideal=ideal)
    a, deltas = ref.loo_adjustment(runs, qrels, pooled, new, topics, 3, family, k, **kw)
    assert res.adjustment == pytest.approx(a, abs=1e-12)
    assert res.deltas == pytest.approx(deltas, abs=1e-12)
    assert res.unpooled == pytest.approx(ref.mean_pooled(runs, qrels, new, topics, pooled, 3, family, k, **kw),
                                         abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.data(), st.integers(1, 6))
def test_full_ideal_keeps_unpooled_ndcg_below_true_under_assumed_irrelevance(data, depth):
    """With the topic's own ideal, a pool can only hide relevant documents, so unpooled nDCG
    never exceeds the true nDCG (with the pool's ideal it can: the ideal shrinks too)."""
    runs, qrels = ref.runs_and_qrels(data.draw)
    rs, q = ref.build(runs, qrels)
    lo = leave_one_out(rs, q, "nDCG(dcg='exp-log2')@4", depth=depth, ideal="full")
    assert np.all(lo.unpooled <= lo.true + 1e-12)


def test_protocol_by_hand():
    """One topic, qrels {d1: 1}. A ranks d2 (never judged) then d1; B ranks d3 (never judged).
    Pooled to depth 2 by A alone and scored condensed at P@1: removing d2 lifts d1 to rank 1
    (P@1 = 1); judging the pooled d2 non-relevant keeps it there (P@1 = 0). B's d3 is outside
    the pool: removed under both, so B has no document left (0)."""
    runs = {"A": {"1": ["d2", "d1"]}, "B": {"1": ["d3"]}}
    rs, q = ref.build(runs, {"1": {"d1": 1}})
    base = dict(pool_systems=["A"], depth=2, mode="condensed")
    today = score_against_pool(rs, q, "P@1", **base)
    paper = score_against_pool(rs, q, "P@1", **base, pooled_unjudged="nonrelevant")
    assert today.values.tolist() == [[1.0], [0.0]]
    assert paper.values.tolist() == [[0.0], [0.0]]
    assert paper.measure == "P@1 (pool depth 2, condensed, pooled unjudged = non-relevant)"
    assert today.measure == "P@1 (pool depth 2, condensed)"
    # the true score under the protocol: d2 is in the pool of all systems, so judged non-relevant
    lo = leave_one_out(rs, q, "P@1", depth=2, mode="condensed", pooled_unjudged="nonrelevant")
    assert lo.true.tolist() == [0.0, 0.0]
    assert leave_one_out(rs, q, "P@1", depth=2, mode="condensed").true.tolist() == [1.0, 0.0]


def test_ideal_by_hand():
    """qrels {d1: 1, d9: 1}; A ranks d1 first and is the pool. nDCG@2 from the pool's ideal is
    1 (d9 is not in the pool); from every judgment, 1 / (1 + 1/log2(3))."""
    runs = {"A": {"1": ["d1", "d2"]}, "B": {"1": ["d3"]}}
    rs, q = ref.build(runs, {"1": {"d1": 1, "d9": 1}})
    pool_ideal = score_against_pool(rs, q, "nDCG(dcg='exp-log2')@2", pool_systems=["A"], depth=2)
    full_ideal = score_against_pool(rs, q, "nDCG(dcg='exp-log2')@2", pool_systems=["A"], depth=2, ideal="full")
    assert pool_ideal.values[0, 0] == pytest.approx(1.0)
    assert full_ideal.values[0, 0] == pytest.approx(1.0 / (1.0 + 1.0 / np.log2(3.0)))


def test_defaults_are_todays_scoring():
    runs = {"A": {"1": ["d2", "d1", "d4"]}, "B": {"1": ["d3", "d1"]}}
    qrels = {"1": {"d1": 2, "d3": 0, "d5": 1}}
    rs, q = ref.build(runs, qrels)
    for mode in ("assumed", "condensed"):
        a = score_against_pool(rs, q, "nDCG(dcg='exp-log2')@3", pool_systems=["B"], depth=1, mode=mode)
        b = score_against_pool(rs, q, "nDCG(dcg='exp-log2')@3", pool_systems=["B"], depth=1, mode=mode,
                               pooled_unjudged="unjudged", ideal="pool")
        np.testing.assert_array_equal(a.values, b.values)


@pytest.fixture(scope="module")
def synthetic():
    from fastrisk.bench_data.synthetic_runs import generate

    return generate(n_systems=10, n_topics=25, depth=40, universe=300, relevant=20, judge_depth=8, seed=5)


def test_experiment_under_the_protocol_matches_reference(synthetic):
    runs, qrels = synthetic
    kw = dict(depth=10, widths=(2, 4), repeats=4, common_topics=(5,), topic_repeats=10, rng=3, mode="condensed",
              pooled_unjudged="nonrelevant")
    one = pooling_experiment(runs, qrels, "P@10", threads=1, **kw)
    two = pooling_experiment(runs, qrels, "P@10", threads=2, **kw)
    np.testing.assert_array_equal(one.unpooled, two.unpooled)
    assert (one.pooled_unjudged, one.ideal, one.mode) == ("nonrelevant", "pool", "condensed")
    today = pooling_experiment(runs, qrels, "P@10", **{**kw, "pooled_unjudged": "unjudged"})
    np.testing.assert_array_equal(today.systems, one.systems)  # same draws, other scoring
    assert not np.allclose(today.unpooled, one.unpooled)  # judge_depth 8 < pool depth 10: unjudged pooled docs
    rd = {s: {t: [runs.docid(j, int(d)) for d in runs.docs[i, j, : runs.lengths[i, j]]]
              for j, t in enumerate(runs.topics)} for i, s in enumerate(runs.systems)}
    qd = {t: dict(zip(qrels.docids[qrels.topic_slice(i)].to_pylist(), qrels.raw_grades[qrels.topic_slice(i)].tolist()))
          for i, t in enumerate(qrels.topics)}
    topics = ref.judged_topics(rd, qd)
    opts = dict(condensed=True, pooled_unjudged="nonrelevant")
    for wi, w in enumerate(kw["widths"]):
        for i in (0, 3):
            r = runs.systems[one.systems[wi, i, 0]]
            pooled = [runs.systems[x] for x in one.systems[wi, i, 1:1 + w]]
            unp = ref.mean_pooled(rd, qd, r, topics, pooled, 10, "P", 10, **opts)
            true = sum(ref.true_metric(rd, qd, r, t, "P", 10, depth=10, **opts) for t in topics) / len(topics)
            a, _ = ref.loo_adjustment(rd, qd, pooled, r, topics, 10, "P", 10, **opts)
            assert one.unpooled[wi, i] == pytest.approx(unp, abs=1e-12)
            assert one.true[wi, i] == pytest.approx(true, abs=1e-12)
            assert one.loo_adjustment[wi, i] == pytest.approx(a, abs=1e-12)


@pytest.mark.parametrize("kw, message", [
    (dict(pooled_unjudged="relevant"), "`pooled_unjudged` must be one of"),
    (dict(ideal="qrels"), "`ideal` must be one of"),
])
def test_option_errors(synthetic, kw, message):
    runs, qrels = synthetic
    with pytest.raises(InputError, match=message):
        score_against_pool(runs, qrels, "P@10", **kw)
    with pytest.raises(InputError, match=message):
        pooling_experiment(runs, qrels, "P@10", widths=(2,), repeats=2, common_topics=(5,), topic_repeats=2, rng=1,
                           **kw)


def test_cli_pool_bias_protocol_options(synthetic, tmp_path, capsys):
    from fastrisk.bench_data.synthetic_runs import write
    from fastrisk.cli import main

    runs, qrels = synthetic
    d = write(runs.select(list(range(5))), qrels, tmp_path)
    args = ["pool-bias"] + [str(d / f"sys00{i}.run.gz") for i in range(5)] + [
        "--qrels", str(d / "qrels.txt"), "--widths", "2", "--repeats", "4", "--common-topics", "5",
        "--topic-repeats", "5", "--seed", "4", "--mode", "condensed", "--format", "csv"]
    assert main(args) == 0
    today = capsys.readouterr().out
    assert main(args + ["--pooled-unjudged", "nonrelevant", "--ideal", "full"]) == 0
    paper = capsys.readouterr().out
    assert today.splitlines()[0] == paper.splitlines()[0] and today != paper
    with pytest.raises(SystemExit):
        main(args + ["--pooled-unjudged", "maybe"])
    assert "--pooled-unjudged: invalid choice" in capsys.readouterr().err
