"""The user's own comparison (issue #37, items 6 and 3b): `fastrisk.simulate.pair_study` and
``fastrisk simulate pair`` -- the empirical-population null's exact shift, the rates against a
plain loop, the copula null's calibration, determinism across threads, the topic search that
does not assume monotone power, a two-run matrix through the CLI, every InputError."""

from __future__ import annotations

import argparse
import json
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import pairstudy as ref

from fastrisk._runtime.rng import resolve_seed
from fastrisk.cli import main
from fastrisk.core.inference import INFERENCES
from fastrisk.data.datasets import trec_matrix
from fastrisk.data.io import write_matrix
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.errors import InputError
from fastrisk.simulate import PairResult, pair_study
from fastrisk.simulate.empirical import population, risk_shift, risk_value
from fastrisk.simulate.pair import topics_needed


def _two(i=0, j=1, topics=50, name="adhoc8_ap"):
    m = trec_matrix(name)
    mu = m.values.mean(axis=1)
    o = np.argsort(-mu, kind="stable")
    a, b = o[20 + i], o[10 + j]
    return ScoreMatrix(m.values[[a, b], :topics], ["base", "exp"], m.topics[:topics], m.measure)


# ------------------------------------------------------------------ the empirical null's shift
@pytest.mark.parametrize("alpha", [0.0, 1.0, 5.0, 10.0])
@pytest.mark.parametrize("target", [0.0, 0.02, -0.03])
def test_shift_makes_the_population_urisk_exactly_the_target(alpha, target):
    m = trec_matrix("adhoc8_ap")
    for e, b in ((3, 7), (10, 2), (40, 41)):
        d = m.values[e] - m.values[b]
        c = risk_shift(d, alpha, target)
        assert abs(risk_value(d + c, alpha).mean() - target) <= 1e-12
        assert abs(c - ref.shift_root(d, alpha, target)) <= 1e-12
        pop, c2 = population(d, alpha, target)
        assert c2 == c and abs(pop.mean() - target) <= 1e-12


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([-1.0, -0.5, -0.25, 0.0, 0.1, 0.3, 0.75, 1.0]) | st.floats(-1, 1), min_size=3,
                max_size=30),
       st.sampled_from([0.0, 0.5, 2.0, 5.0]), st.sampled_from([0.0, 0.01, 0.05]))
def test_shift_is_exact_with_ties_and_breakpoints(d, alpha, target):
    d = np.asarray(d)
    c = risk_shift(d, alpha, target)
    assert abs(risk_value(d + c, alpha).mean() - target) <= 1e-12
    assert abs(c - ref.shift_root(d, alpha, target)) <= 1e-12


# ------------------------------------------------------------------ rates against a plain loop
NAMES = ["t", "edgeworth", "johnson", "hall", "el-bartlett", "bootstrap-t-symmetric", "exact"]


def test_empirical_rates_match_a_plain_loop_with_the_same_seed():
    m = _two(topics=30)
    d = m.values[1] - m.values[0]
    alpha, n, trials, seed = 5.0, 8, 40, 11
    B = {"exact": 4, "bootstrap-t-symmetric": 9}
    r = pair_study(m, "base", "exp", alpha=alpha, topics=n, trials=trials, deltas=[0.05], inferences=NAMES,
                   nulls=["empirical"], topic_grid=[5], replicates=B, resampling_trials=None, seed=seed, level=0.1)
    assert r.grid == (5, 8)
    assert r.seed == seed
    study = resolve_seed(seed).kernel  # the study's root of the per-group seeds
    bits = {t: int(np.float64(t).view(np.uint64)) for t in (0.0, 0.05)}  # a group's keys: null, target's bits
    for k, name in enumerate(NAMES):
        reps, at = B.get(name, 0), list(INFERENCES).index(name)
        want = ref.empirical_hits(d, alpha, 0.0, n, trials, ref.derived_seed(study, 0, bits[0.0]), name,
                                  ref.derived_seed(study, 0, bits[0.0], at, n), reps, level=0.1)
        assert round(r.type1[k, 0] * trials) == want, name
        for g, size in enumerate(r.grid):  # power at delta 0.05, nested topic sets
            want = ref.empirical_hits(d, alpha, 0.05, size, trials, ref.derived_seed(study, 0, bits[0.05]), name,
                                      ref.derived_seed(study, 0, bits[0.05], at, size), reps, level=0.1)
            assert round(r.curve[k, 0, 0, g] * trials) == want, (name, size)


def test_resampling_inferences_run_on_a_prefix_of_the_trials():
    m = _two()
    kw = dict(alpha=5, topics=20, deltas=[0.02], inferences=["t", "bootstrap-t-symmetric"], nulls=["empirical"],
              topic_grid=[10], replicates=49, seed=3)
    r = pair_study(m, "base", "exp", trials=300, resampling_trials=100, **kw)
    assert r.cell_trials.tolist() == [300, 100] and r.replicates.tolist() == [0, 49]
    full = pair_study(m, "base", "exp", trials=100, resampling_trials=None, **kw)
    np.testing.assert_array_equal(r.type1[1], full.type1[1])
    np.testing.assert_array_equal(r.curve[1], full.curve[1])


def test_an_inference_s_numbers_do_not_depend_on_the_others_run():
    m = _two()
    kw = dict(alpha=5, topics=20, trials=80, topic_grid=[10, 40], replicates=19, seed=9)
    full = pair_study(m, "base", "exp", deltas=[0.01, 0.05], inferences=["t", "exact", "hall"], **kw)
    part = pair_study(m, "base", "exp", deltas=[0.05], inferences=["hall", "exact"], **kw)
    np.testing.assert_array_equal(part.type1, full.type1[[2, 1]])
    np.testing.assert_array_equal(part.curve[:, :, 0], full.curve[[2, 1]][:, :, 1])
    empirical_only = pair_study(m, "base", "exp", deltas=[0.05], inferences=["hall"], nulls=["empirical"], **kw)
    np.testing.assert_array_equal(empirical_only.curve[0, 0, 0], full.curve[2, 0, 1])


def test_the_same_numbers_whatever_the_threads():
    m = _two()
    kw = dict(alpha=5, topics=20, trials=150, deltas=[0.02], inferences=["t", "exact", "bootstrap-t-symmetric",
                                                                         "el-bartlett"],
              nulls=["empirical"], topic_grid=[10, 40], replicates=19, seed=5)
    one = pair_study(m, "base", "exp", threads=1, **kw)
    two = pair_study(m, "base", "exp", threads=2, **kw)
    for f in ("type1", "power", "curve", "topics_needed"):
        np.testing.assert_array_equal(getattr(one, f), getattr(two, f))
    assert one.verdicts == two.verdicts


# ------------------------------------------------------------------ the topic search
def test_topics_needed_does_not_assume_monotone_power():
    grid = (10, 20, 30, 40, 50)
    curve = np.array([[0.5, 0.85, 0.7, 0.82, 0.9],  # reaches 0.8 at 20, falls back, stays from 40
                      [0.81, 0.82, 0.83, 0.9, 0.95],
                      [0.1, 0.2, 0.9, 0.3, 0.5],  # last point below: not reached
                      [0.1, 0.2, 0.3, 0.5, 0.8]])
    got = topics_needed(curve, grid, 0.8)
    np.testing.assert_array_equal(got, [40.0, 10.0, np.nan, 50.0])


# ------------------------------------------------------------------ the copula null
@pytest.fixture(scope="module")
def copula_result():
    pytest.importorskip("pyvinecopulib")
    return pair_study(_two(), "base", "exp", alpha=5, topics=25, trials=300, deltas=[0.02, 0.05],
                      inferences=["t", "johnson"], topic_grid=[10, 50], seed=7)


def test_the_copula_null_is_calibrated_to_each_target(copula_result):
    r = copula_result
    assert isinstance(r, PairResult) and r.nulls == ("empirical", "copula")
    cal = json.loads(r.calibration)
    for doc, t in zip(cal["copula"]["targets"], (0.0, 0.02, 0.05)):
        assert doc["target"] == t and abs(doc["urisk"] - t) <= 1e-4  # nulls.TOL
    for t, doc in cal["empirical"].items():
        assert abs(doc["urisk"] - float(t)) <= 1e-12
    assert np.isfinite(r.type1).all() and np.isfinite(r.power).all()
    assert ((r.type1_low <= r.type1) & (r.type1 <= r.type1_high)).all()


def test_the_result_tables_and_verdicts(copula_result):
    r = copula_result
    df = r.to_pandas()
    assert list(df[["inference", "null", "delta"]].drop_duplicates().shape) == [2 * 2 * 2, 3]
    assert {"type1", "type1_low", "power", "topics_needed", "baseline", "system"} <= set(df.columns)
    curve = r.to_pandas(("inference", "null", "delta", "n"))
    assert len(curve) == 2 * 2 * 2 * 3 and sorted(curve["n"].unique()) == [10, 25, 50]
    md = r.to_markdown().splitlines()
    assert md[0].startswith("exp against base, URisk_5, 25 topics") and len(md) == 4 + 2
    assert md[2].startswith("| inference | type I (empirical) | power δ=0.02 (empirical)")
    assert md[4].startswith("| t | ") and md[4].count("|") == 1 + 2 * (1 + 2 + 2) + 1
    assert len(r.verdicts) == 2 and all("under the empirical null" in v and "copula" in v for v in r.verdicts)
    assert "exp against base: URisk_5, 25 topics" in r.summary()


# ------------------------------------------------------------------ the CLI on a two-run matrix
def test_a_two_run_matrix_through_the_cli(tmp_path, capsys):
    pytest.importorskip("pyvinecopulib")
    path = tmp_path / "two.parquet"
    write_matrix(_two(topics=40), path)
    out = tmp_path / "pair.csv"
    code = main(["simulate", "pair", str(path), "--baseline", "base", "--system", "exp", "--alpha", "5", "--topics",
                 "20", "--trials", "200", "--inferences", "t,hall", "--topic-grid", "10,30", "--seed", "1",
                 "--format", "csv", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0
    df = pd.read_csv(out, comment="#")
    assert set(df["inference"]) == {"t", "hall"} and set(df["null"]) == {"empirical", "copula"}
    assert "pair: fit: simIReff margins" in err and "pair: simulate" in err
    assert "exp against base: URisk_5, 20 topics" in err and err.count("under the") >= 2


def test_cli_errors_name_the_options(tmp_path, capsys):
    path = tmp_path / "two.parquet"
    write_matrix(_two(topics=20), path)
    assert main(["simulate", "pair", str(path), "--system", "exp"]) == 2
    assert "needs --baseline B and --system E" in capsys.readouterr().err
    assert main(["simulate", "type1", str(path), "--baseline", "base"]) == 2
    assert "options of simulate pair" in capsys.readouterr().err
    assert main(["simulate", "pair", str(path), str(path), "--baseline", "base", "--system", "exp"]) == 2
    assert "takes one score-matrix file" in capsys.readouterr().err
    assert main(["simulate", "pair", str(path), "--baseline", "base", "--system", "exp", "--processes", "2"]) == 2
    assert "--processes, --scheduler and --cache are not options of it" in capsys.readouterr().err


# ------------------------------------------------------------------ bad input
def _bad(**kw):
    base = dict(matrix=_two(topics=20), baseline="base", system="exp", trials=10, nulls=["empirical"],
                inferences=["t"], topic_grid=[5])
    base.update(kw)
    return pair_study(base.pop("matrix"), base.pop("baseline"), base.pop("system"), **base)


@pytest.mark.parametrize("kw, match", [
    (dict(system="nope"), r"`system` 'nope' is not a run of the matrix \(its runs: base, exp\)"),
    (dict(baseline="gone"), r"`baseline` 'gone' is not a run of the matrix"),
    (dict(system="base"), r"`baseline` and `system` are both 'base'"),
    (dict(topics=2), r"`topics` must be an integer in \[3"),
    (dict(alpha=-1.0), r"`alpha` must be a finite number >= 0, got -1.0"),
    (dict(alpha=float("nan")), r"`alpha` must be a finite number >= 0"),
    (dict(trials=0), r"`trials` must be an integer in \[1"),
    (dict(deltas=[0.0]), r"`deltas` must be distinct finite non-zero numbers"),
    (dict(deltas=[0.01, 0.01]), r"`deltas` must be distinct finite non-zero numbers"),
    (dict(level=1.5), r"`level` must be in \(0, 1\)"),
    (dict(power=0), r"`power` must be in \(0, 1\)"),
    (dict(alternative="both"), r"`alternative` must be one of two-sided, greater, less"),
    (dict(inferences=["z"]), r"`inferences`: 'z' is not a risk inference"),
    (dict(inferences=[]), r"`inferences` is empty"),
    (dict(nulls=["bayes"]), r"`nulls` must name some of empirical, copula"),
    (dict(topic_grid=[2]), r"`topic_grid` must be an integer in \[3"),
    (dict(replicates={"t": 5}), r"`replicates`: 't' is not a resampling inference"),
    (dict(replicates=0), r"`replicates` must be an integer in \[1"),
    (dict(matrix=3), r"`matrix` must be a ScoreMatrix, a score-matrix file or a bundled matrix name"),
])
def test_bad_input_is_named(kw, match):
    with pytest.raises(InputError, match=match):
        _bad(**kw)


def test_identical_runs_too_few_topics_and_scores_out_of_bounds():
    m = _two(topics=20)
    same = ScoreMatrix(m.values[[0, 0]], ["base", "exp"], m.topics, m.measure)
    with pytest.raises(InputError, match="runs 'base' and 'exp' score the same on every topic"):
        _bad(matrix=same)
    shifted = ScoreMatrix(np.vstack([m.values[0] * 0.5, m.values[0] * 0.5 + 0.25]), ["base", "exp"], m.topics,
                          m.measure)
    with pytest.raises(InputError, match="run 'exp' differs from 'base' by 0.25 on every topic: without variation"):
        _bad(matrix=shifted)
    short = ScoreMatrix(m.values[:, :2], ["base", "exp"], m.topics[:2], m.measure)
    with pytest.raises(InputError, match="the matrix has 2 topic\\(s\\): a pair study needs at least 3"):
        _bad(matrix=short)
    V = m.values.copy()
    V[1, 3] = 1.5
    wide = ScoreMatrix(V, ["base", "exp"], m.topics, None)
    with pytest.raises(InputError, match=f"inference 'exact' assumes scores in \\[0, 1\\]; run 'exp' scores 1.5 on "
                                         f"topic '{m.topics[3]}'"):
        _bad(matrix=wide, inferences=["t", "exact"])
    with pytest.raises(InputError, match="the copula null \\(simIReff margins\\) assumes scores in \\[0, 1\\]"):
        _bad(matrix=wide, nulls=["copula"])
    _bad(matrix=wide)  # the empirical null and t assume no bounds
    with pytest.raises(InputError, match="the copula null needs the measure of the scores"):
        _bad(matrix=ScoreMatrix(m.values, ["base", "exp"], m.topics, None), nulls=["copula"])


def test_a_copula_null_that_cannot_be_calibrated_is_reported_not_raised(monkeypatch):
    pytest.importorskip("pyvinecopulib")
    import fastrisk.simulate.pair as pair

    monkeypatch.setattr(pair, "calibrate_pair", lambda *a, **k: None)
    r = pair_study(_two(), "base", "exp", alpha=5, topics=20, trials=50, deltas=[0.02], inferences=["t"],
                   topic_grid=[10], seed=2)
    assert np.isfinite(r.type1[0, 0]) and np.isnan(r.type1[0, 1]) and np.isnan(r.power[0, 1]).all()
    assert np.isnan(r.topics_needed[0, 1]).all() and np.isnan(r.type1_low[0, 1])
    assert "not built: copula null" in r.verdicts[0] and "(copula)" not in r.verdicts[0]
    assert all("failed" in t for t in json.loads(r.calibration)["copula"]["targets"])
    assert "n/a" in r.to_markdown()


# ------------------------------------------------------------------ too few runs: the pairs instead (stretch)
@pytest.mark.slow
def test_type1_on_a_three_run_collection_runs_its_pairs_instead(tmp_path, capsys):
    pytest.importorskip("pyvinecopulib")
    m = trec_matrix("web2013_err20")
    path = tmp_path / "three.parquet"
    write_matrix(ScoreMatrix(m.values[:3, :20], m.systems[:3], m.topics[:20], m.measure), path)
    out = tmp_path / "pairs.csv"
    code = main(["simulate", "type1", str(path), "--topics", "10", "--trials", "60", "--trisk-alpha", "5", "--seed",
                 "1", "--quiet", "--format", "csv", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert f"collection {str(path)!r} keeps 2 of its 3 runs; the collection-level protocol needs at least 11" in err
    assert "Running the pair-level study instead" in err and "for each of its 3 pair(s) of runs" in err
    df = pd.read_csv(out)
    assert len(df[["baseline", "system"]].drop_duplicates()) == 3 and set(df["alpha"]) == {5}
    assert set(df["null"]) == {"empirical", "copula"} and err.count("against") == 3
    mu = dict(zip(m.systems[:3], m.values[:3, :20].mean(axis=1)))
    assert all(mu[b] <= mu[e] for b, e in zip(df["baseline"], df["system"]))  # the lower mean as the baseline


@pytest.mark.slow
def test_power_on_a_two_run_collection_runs_its_pair_and_topics_with_a_test_still_refuses(tmp_path, capsys):
    pytest.importorskip("pyvinecopulib")
    path = tmp_path / "two.parquet"
    write_matrix(_two(topics=30), path)
    out = tmp_path / "pair.csv"
    code = main(["simulate", "power", str(path), "--topics", "10", "--trials", "40", "--trisk-alpha", "1",
                 "--delta", "0.05", "--seed", "2", "--quiet", "--format", "csv", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert re.search(r"keeps \d of its 2 runs; the collection-level protocol needs at least 11", err)
    assert "for each of its 1 pair(s) of runs" in err
    df = pd.read_csv(out)
    assert set(df["delta"]) == {0.05} and set(df["alpha"]) == {1} and len(df) == 7 * 2
    # a test named by the user is not a risk inference of the pair study: refused as before
    assert main(["simulate", "topics", str(path), "--test", "trisk@5", "--trials", "10", "--quiet"]) == 2
    assert re.search(r"too few runs|a fit needs a systems x topics matrix with >= 3 systems", capsys.readouterr().err)


def test_which_collections_run_their_pairs_instead(tmp_path):
    from fastrisk.cli.simulate import _too_few_runs

    path = tmp_path / "two.parquet"
    write_matrix(_two(topics=30), path)

    def args(study, **kw):
        return argparse.Namespace(study=study, measure=None, no_risk_nulls=kw.get("no_risk_nulls", False))

    got = _too_few_runs(args("power"), str(path))
    assert got is not None and got[0] == str(path) and got[4] == 11 and "H1 pairs" in got[5]
    assert _too_few_runs(args("type1", no_risk_nulls=True), str(path)) is None or got[3] < 2
    assert _too_few_runs(args("type1"), "adhoc8_ap") is None  # 129 runs: the collection-level protocol
