"""Pools, pooled scoring, score adjustment and the resampling experiment."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import pooling as ref

from fastrisk.errors import InputError
from fastrisk.measures.pooling import (
    build_pool,
    common_topic_adjustment,
    leave_one_out,
    loo_adjustment,
    pooling_experiment,
    score_against_pool,
)

FAMILIES = [("P", 5, "P@5"), ("RBP", 6, "RBP(rel=1,p=0.8)@6"), ("nDCG", 4, "nDCG(dcg='exp-log2')@4"), ("ERR", 5, "ERR@5")]


@settings(max_examples=30, deadline=None)
@given(st.data(), st.integers(1, 6))
def test_pool_documents_match_set_union(data, depth):
    runs, qrels = ref.runs_and_qrels(data.draw, max_systems=70, max_topics=2, max_depth=5)
    rs, _ = ref.build(runs, qrels)
    subset = data.draw(st.lists(st.sampled_from(rs.systems), unique=True, min_size=1))
    pool = build_pool(rs, depth)
    assert pool.n_words == (rs.n_systems + 63) // 64
    for t in rs.topics:
        assert set(pool.documents(t, subset)) == ref.pool(runs, subset, t, depth)


@settings(max_examples=40, deadline=None)
@given(st.data(), st.sampled_from(FAMILIES), st.integers(1, 6), st.sampled_from(["assumed", "condensed"]))
def test_pooled_scores_match_reference(data, fam, depth, mode):
    family, k, name = fam
    runs, qrels = ref.runs_and_qrels(data.draw)
    rs, q = ref.build(runs, qrels)
    subset = data.draw(st.lists(st.sampled_from(rs.systems), unique=True, min_size=1))
    mat = score_against_pool(rs, q, name, pool_systems=subset, depth=depth, mode=mode)
    assert mat.topics == tuple(ref.judged_topics(runs, qrels))
    for i, s in enumerate(mat.systems):
        for j, t in enumerate(mat.topics):
            want = ref.pooled_metric(runs, qrels, s, t, subset, depth, family, k, condensed=(mode == "condensed"))
            assert mat.values[i, j] == pytest.approx(want, abs=1e-12), (s, t)


@settings(max_examples=30, deadline=None)
@given(st.data(), st.sampled_from([f for f in FAMILIES if f[0] != "nDCG"]), st.integers(1, 6))
def test_unpooled_never_exceeds_true_under_assumed_irrelevance(data, fam, depth):
    family, k, name = fam
    runs, qrels = ref.runs_and_qrels(data.draw)
    rs, q = ref.build(runs, qrels)
    lo = leave_one_out(rs, q, name, depth=depth)
    assert np.all(lo.unpooled <= lo.true + 1e-12)
    # and agrees with the set-based leave-one-out
    topics = ref.judged_topics(runs, qrels)
    for i, s in enumerate(lo.systems):
        others = [x for x in rs.systems if x != s]
        want = ref.mean_pooled(runs, qrels, s, topics, others, depth, family, k)
        assert lo.unpooled[i] == pytest.approx(want, abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.data(), st.sampled_from(FAMILIES), st.sampled_from(["assumed", "condensed"]))
def test_loo_adjustment_matches_reference(data, fam, mode):
    family, k, name = fam
    runs, qrels = ref.runs_and_qrels(data.draw, min_systems=3)
    rs, q = ref.build(runs, qrels)
    new = data.draw(st.sampled_from(rs.systems))
    pooled = data.draw(st.lists(st.sampled_from([s for s in rs.systems if s != new]), unique=True, min_size=1))
    res = loo_adjustment(rs, q, name, pooled=pooled, new=new, depth=3, mode=mode)
    topics = ref.judged_topics(runs, qrels)
    cond = mode == "condensed"
    a, deltas = ref.loo_adjustment(runs, qrels, pooled, new, topics, 3, family, k, condensed=cond)
    assert res.adjustment == pytest.approx(a, abs=1e-12)
    assert res.deltas == pytest.approx(deltas, abs=1e-12)
    unp = ref.mean_pooled(runs, qrels, new, topics, pooled, 3, family, k, condensed=cond)
    assert res.unpooled == pytest.approx(unp, abs=1e-12)
    assert res.estimate == pytest.approx(unp + a, abs=1e-12)


def test_common_topic_adjustment_formulas():
    unpooled = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    true_common = np.array([0.3, 0.3, 0.9])
    res = common_topic_adjustment(unpooled, true_common, [0, 2, 5])
    d = true_common - unpooled[[0, 2, 5]]
    assert res.adjustment == pytest.approx(d.mean())
    assert res.estimate == pytest.approx(unpooled.mean() + d.mean())
    assert res.variance == pytest.approx((6 - 3) / 6 * d.var(ddof=1) / 3)
    assert res.standard_error == pytest.approx(np.sqrt(res.variance))
    assert res.accurate == (d.mean() ** 2 > res.variance)
    mask = np.zeros(6, bool)
    mask[[0, 2, 5]] = True
    assert common_topic_adjustment(unpooled, true_common, mask) == res


@pytest.mark.parametrize("args, message", [
    (([0.1], [0.2], [0]), "at least 2 finite"),
    (([0.1, 0.2, 0.3], [0.2, 0.3], [0, 0]), "distinct topic positions"),
    (([0.1, 0.2, 0.3], [0.2, 0.3], [0, 5]), "distinct topic positions in 0..2"),
    (([0.1, 0.2, 0.3], [0.2], [0, 1]), "`true_common` must hold 2 finite scores"),
    (([0.1, 0.2, 0.3], [0.2, 0.3], [True, False]), "boolean `common` must have length 3"),
])
def test_common_topic_adjustment_errors(args, message):
    with pytest.raises(InputError, match=message):
        common_topic_adjustment(*args)


@pytest.fixture(scope="module")
def synthetic():
    from fastrisk.bench_data.synthetic_runs import generate

    return generate(n_systems=12, n_topics=30, depth=40, universe=300, relevant=20, judge_depth=20, seed=7)


def test_experiment_reproduces_reference_and_is_thread_independent(synthetic):
    runs, qrels = synthetic
    kw = dict(depth=5, widths=(2, 5), repeats=6, common_topics=(5, 10), topic_repeats=20, rng=11)
    one = pooling_experiment(runs, qrels, "RBP(rel=1,p=0.8)@10", threads=1, **kw)
    two = pooling_experiment(runs, qrels, "RBP(rel=1,p=0.8)@10", threads=2, **kw)
    for field in ("systems", "true", "unpooled", "loo_adjustment", "adjusted_abs", "mixed_abs", "accurate"):
        np.testing.assert_array_equal(getattr(one, field), getattr(two, field))
    assert one.seed == two.seed
    other = pooling_experiment(runs, qrels, "RBP(rel=1,p=0.8)@10", **{**kw, "rng": 12})
    assert not np.array_equal(one.systems, other.systems)
    # every (width, repeat) agrees with the set-based reference for its sampled systems
    rd = {s: {t: [runs.docid(j, int(d)) for d in runs.docs[i, j, : runs.lengths[i, j]]]
              for j, t in enumerate(runs.topics)} for i, s in enumerate(runs.systems)}
    qd = {t: dict(zip(qrels.docids[qrels.topic_slice(i)].to_pylist(), qrels.raw_grades[qrels.topic_slice(i)].tolist()))
          for i, t in enumerate(qrels.topics)}
    topics = ref.judged_topics(rd, qd)
    assert one.n_topics == len(topics)
    for wi, w in enumerate(kw["widths"]):
        for i in range(0, kw["repeats"], 3):
            r = runs.systems[one.systems[wi, i, 0]]
            pooled = [runs.systems[x] for x in one.systems[wi, i, 1:1 + w]]
            assert r not in pooled and len(set(pooled)) == w
            unp = ref.mean_pooled(rd, qd, r, topics, pooled, 5, "RBP", 10)
            true = sum(ref.true_metric(rd, qd, r, t, "RBP", 10) for t in topics) / len(topics)
            a, _ = ref.loo_adjustment(rd, qd, pooled, r, topics, 5, "RBP", 10)
            assert one.unpooled[wi, i] == pytest.approx(unp, abs=1e-12)
            assert one.true[wi, i] == pytest.approx(true, abs=1e-12)
            assert one.loo_adjustment[wi, i] == pytest.approx(a, abs=1e-12)
    tab = one.mae_long()
    assert tab.column_names == ["width", "n", "estimator", "mae"]
    assert tab.num_rows == 2 * (2 + 2 * 2)
    cells = one.to_arrow()
    assert cells.column_names == ["width", "repeat", "n", "true", "unpooled", "loo_adjustment", "adjusted_abs",
                                  "mixed_abs", "adjusted_err", "adjusted_sq", "variance_estimate", "accurate", "bias"]
    assert cells.num_rows == 2 * 6 * 2
    row = cells.to_pylist()[1 * 6 * 2 + 3 * 2 + 1]  # width 5, repeat 3, n 10
    assert (row["width"], row["repeat"], row["n"]) == (5, 3, 10)
    assert row["mixed_abs"] == one.mixed_abs[1, 3, 1] and row["bias"] == one.bias[1, 3]
    assert one.mae_table().column_names == ["width", "unadjusted", "leave-one-out", "mixed n=5", "mixed n=10",
                                            "adjusted n=5", "adjusted n=10"]
    bd = one.bias_distribution().to_pandas()
    assert np.all(bd["q1"] <= bd["median"]) and np.all(bd["median"] <= bd["q3"])


def test_common_topic_estimator_unbiased_and_error_shrinks(synthetic):
    runs, qrels = synthetic
    N = 30
    res = pooling_experiment(runs, qrels, "P@10", depth=3, widths=(2,), repeats=4, common_topics=(3, 10, 25),
                             topic_repeats=4000, rng=3)
    # mean signed error over the draws is ~0 (unbiased), its spread matches eq. 3
    theory = res.variance_estimate  # E[s_a^2] = sigma_a^2, so the mean eq. 7 estimate -> eq. 3
    sd_of_mean = np.sqrt(theory / 4000)
    assert np.all(np.abs(res.adjusted_err) <= 5 * sd_of_mean + 1e-12)
    ratio = res.adjusted_sq / np.where(theory > 0, theory, 1)
    assert np.all(np.abs(ratio[theory > 0] - 1) < 0.15)
    # the error shrinks like sqrt((N - n) / (n N))
    scale = np.sqrt([(N - n) / (n * N) for n in (3, 10, 25)])
    rms = np.sqrt(res.adjusted_sq.mean(axis=(0, 1)))
    assert np.allclose(rms / rms[0], scale / scale[0], rtol=0.15)


@pytest.mark.parametrize("kw, message", [
    (dict(widths=(2, 12)), "need at least 13 systems"),
    (dict(common_topics=(5, 31)), "exceed the 30 judged topics"),
    (dict(common_topics=(1,)), "`common_topics` values must be in >= 2"),
    (dict(repeats=0), "`repeats` must be a positive integer, got 0"),
    (dict(topic_repeats=1.5), "`topic_repeats` must be a positive integer"),
    (dict(mode="shrunk"), "`mode` must be one of assumed, condensed"),
    (dict(depth=0), "`depth` must be a positive integer, got 0"),
    (dict(rng=-1), r"integer seed in \[0, 2\*\*63 - 1\]"),
    (dict(threads=0), "`threads` must be a positive integer"),
])
def test_experiment_errors(synthetic, kw, message):
    runs, qrels = synthetic
    base = dict(widths=(2,), repeats=2, common_topics=(5,), topic_repeats=2, rng=1)
    with pytest.raises(InputError, match=message):
        pooling_experiment(runs, qrels, "P@10", **{**base, **kw})


def test_adjustment_argument_errors(synthetic):
    runs, qrels = synthetic
    with pytest.raises(InputError, match="must not be one of the `pooled` systems"):
        loo_adjustment(runs, qrels, "P@10", pooled=["sys000", "sys001"], new="sys001")
    with pytest.raises(InputError, match="unknown system 'nope'"):
        score_against_pool(runs, qrels, "P@10", pool_systems=["nope"])
    with pytest.raises(InputError, match="`pool_systems` names a system twice"):
        score_against_pool(runs, qrels, "P@10", pool_systems=["sys000", "sys000"])


def test_cli_pool_bias(synthetic, tmp_path, capsys):
    from fastrisk.bench_data.synthetic_runs import write
    from fastrisk.cli import main

    runs, qrels = synthetic
    d = write(runs.select(list(range(6))), qrels, tmp_path)
    args = ["pool-bias", str(d / "sys000.run.gz"), str(d / "sys001.run.gz"), str(d / "sys002.run.gz"),
            str(d / "sys003.run.gz"), "--qrels", str(d / "qrels.txt"), "--widths", "1,2", "--repeats", "5",
            "--common-topics", "5,10", "--topic-repeats", "10", "--seed", "4", "--format", "csv"]
    assert main(args) == 0
    out = capsys.readouterr().out.replace('"', "").splitlines()
    assert out[0] == "width,unadjusted,leave-one-out,mixed n=5,mixed n=10,adjusted n=5,adjusted n=10"
    assert len(out) == 3
    assert main(args + ["--report", "bias"]) == 0
    assert capsys.readouterr().out.replace('"', "").startswith("width,mean,min,q1,median,q3,max")
    assert main(args[:-4] + ["--widths", "2,x"]) == 2
    assert "--widths must be comma-separated" in capsys.readouterr().err
    assert main(args[:-4] + ["--widths", "2.5"]) == 2
    assert "--widths must be comma-separated" in capsys.readouterr().err


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-1, 4), max_size=40))
def test_few_values_sort_is_a_descending_sort(grades):
    from fastrisk._kernels.pooling import sort_desc_few_values

    x = np.asarray(grades, dtype=np.int8)
    sort_desc_few_values(x)
    np.testing.assert_array_equal(x, np.sort(np.asarray(grades, dtype=np.int8))[::-1])


def test_strided_drivers_give_the_same_scores_on_any_number_of_threads(synthetic):
    from fastrisk._kernels._jit import run_strided
    from fastrisk._kernels.metrics import score_all
    from fastrisk.measures.metrics import judgments, parse_measure, score_matrix_values, topic_normalisers

    runs, qrels = synthetic
    measure = parse_measure("nDCG@10")
    j, judged = judgments(runs, qrels, measure)
    code, p, rel, maxg, residual = measure.kernel_args()
    norm = topic_normalisers(j, judged, measure, 10)
    expected = score_matrix_values(runs, qrels, measure)  # one thread: a small job
    assert expected.any()
    for n in (2, 3):
        out = np.full((runs.n_systems, runs.n_topics), np.nan)
        run_strided(score_all, n, runs.docs, runs.lengths, runs.doc_offsets, j.grades, norm, code, 10, p, rel,
                    maxg, residual, 0, out)
        np.testing.assert_array_equal(out, expected)
