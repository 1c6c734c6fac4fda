"""The model-calibrated TRisk (issue #37, item 2): `fastrisk.simulate.calibrated_trisk` and
``fastrisk simulate calibrated`` -- T and the three p-values against plain loops over the same
draws, p in (0, 1], the same numbers whatever the threads, the recorded seed, the smooth value
function, every InputError, the CLI, and the level of the test when its model is the truth."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fastrisk._runtime.rng import resolve_seed
from fastrisk.cli import main
from fastrisk.data.datasets import trec_matrix
from fastrisk.data.io import write_matrix
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.errors import InputError
from fastrisk.simulate import CalibratedTRiskResult, calibrated_trisk
from fastrisk.simulate.calibrated import bootstrap_pvalues
from fastrisk.simulate.measures import canonical_measure
from fastrisk.simulate.pair import CopulaNull

pytest.importorskip("pyvinecopulib")


def _two(a=30, b=12, topics=50, name="adhoc8_ap"):
    """Two runs of ``name`` (by rank of their mean) as a two-run matrix ``base``, ``exp``."""
    m = trec_matrix(name)
    o = np.argsort(-m.values.mean(axis=1), kind="stable")
    return ScoreMatrix(m.values[[o[a], o[b]], :topics], ["base", "exp"], m.topics[:topics], m.measure)


def _plain_trisk(x) -> float:
    """T = mean / (s / sqrt(n)) by loops (s with n - 1)."""
    n = len(x)
    mean = 0.0
    for v in x:
        mean += v
    mean /= n
    ss = 0.0
    for v in x:
        ss += (v - mean) ** 2
    s = math.sqrt(ss / (n - 1))
    if s == 0.0:
        return 0.0 if mean == 0.0 else math.copysign(math.inf, mean)
    return mean / (s / math.sqrt(n))


def _plain_value(d, alpha):
    return [v + alpha * min(v, 0.0) for v in d]


# ------------------------------------------------------------------ T and p against plain loops
@pytest.mark.parametrize("alpha", [1.0, 5.0])
def test_statistic_and_pvalues_against_plain_loops_on_the_same_draws(alpha):
    m = _two()
    R = 299
    res = calibrated_trisk(m, "base", "exp", alpha=alpha, replicates=R, seed=11)
    assert isinstance(res, CalibratedTRiskResult)
    d = (m.values[1] - m.values[0]).tolist()
    T = _plain_trisk(_plain_value(d, alpha))
    assert float(res.statistic) == pytest.approx(T, rel=1e-12)
    assert float(res.urisk) == pytest.approx(np.mean(_plain_value(d, alpha)), abs=1e-15)
    assert float(res.t_pvalue) == pytest.approx(stats.ttest_1samp(_plain_value(d, alpha), 0.0).pvalue, rel=1e-9)
    # the same null model, calibrated and drawn outside the function: the streams (seed, r)
    cn = CopulaNull(m.values, canonical_measure(m.measure))
    cal = cn.calibrate(alpha, 0.0)
    assert cal["mean_e"] == res.calibrated_mean and json.loads(res.model)["calibration"]["mean_e"] == cal["mean_e"]
    X = cn.draw(alpha, 0.0, m.values.shape[1], resolve_seed(11).kernel, np.arange(R))
    Tstar = [_plain_trisk(list(row)) for row in X]
    np.testing.assert_allclose(res.null_distribution, Tstar, rtol=1e-12, atol=1e-12)
    two = greater = less = 1
    for t in res.null_distribution:  # counted on the function's own T* (the comparison above: same T*)
        two += abs(t) >= abs(float(res.statistic))
        greater += t >= float(res.statistic)
        less += t <= float(res.statistic)
    assert (float(res.pvalue), float(res.pvalue_greater), float(res.pvalue_less)) == (two / (R + 1), greater / (R + 1),
                                                                                      less / (R + 1))


def test_pvalues_are_in_zero_one_and_the_tails_add_up():
    res = calibrated_trisk(_two(a=20, b=18), "base", "exp", alpha=5, replicates=199, seed=3)
    for p in (res.pvalue, res.pvalue_greater, res.pvalue_less):
        assert 0 < float(p) <= 1 and float(p) >= 1 / 200
    ties = int(np.count_nonzero(res.null_distribution == float(res.statistic)))
    assert float(res.pvalue_greater + res.pvalue_less) == pytest.approx((201 + ties) / 200)
    # the two-sided p is at least each one-sided tail's share of the extreme side
    assert float(res.pvalue) >= min(float(res.pvalue_greater), float(res.pvalue_less)) - 1 / 200


def test_bootstrap_pvalues_count_ties_and_infinities():
    null = np.array([-np.inf, -2.0, -1.0, 0.0, 1.0, 1.0, 2.0, np.inf])
    assert bootstrap_pvalues(1.0, null) == (8 / 9, 5 / 9, 7 / 9)
    assert bootstrap_pvalues(-3.0, null) == (3 / 9, 8 / 9, 2 / 9)


def test_a_sample_without_variation_has_a_defined_statistic():
    from fastrisk.simulate.calibrated import trisk_statistics

    T = trisk_statistics(np.array([[0.0, 0.0, 0.0], [0.2, 0.2, 0.2], [-0.1, -0.1, -0.1], [0.1, 0.2, 0.3]]))
    assert T[0] == 0 and T[1] == np.inf and T[2] == -np.inf and T[3] == pytest.approx(0.2 / (0.1 / math.sqrt(3)))


# ------------------------------------------------------------------ determinism and the seed
def test_the_same_result_whatever_the_threads_and_chunks(monkeypatch):
    import fastrisk.simulate.calibrated as calibrated

    m = _two(topics=40)
    a = calibrated_trisk(m, "base", "exp", alpha=5, replicates=1200, seed=5, threads=1)
    b = calibrated_trisk(m, "base", "exp", alpha=5, replicates=1200, seed=5, threads=2)
    monkeypatch.setattr(calibrated, "CHUNK", 500)
    c = calibrated_trisk(m, "base", "exp", alpha=5, replicates=1200, seed=5, threads=2)  # three chunks
    for other in (b, c):
        np.testing.assert_array_equal(a.null_distribution, other.null_distribution)
        assert (a.pvalue, a.pvalue_greater, a.pvalue_less) == (other.pvalue, other.pvalue_greater, other.pvalue_less)


def test_the_recorded_seed_reproduces_the_result_and_a_fresh_one_differs():
    m = _two(topics=30)
    res = calibrated_trisk(m, "base", "exp", alpha=2, replicates=99, seed=None)
    again = calibrated_trisk(m, "base", "exp", alpha=2, replicates=99, seed=res.seed)
    np.testing.assert_array_equal(res.null_distribution, again.null_distribution)
    other = calibrated_trisk(m, "base", "exp", alpha=2, replicates=99, seed=res.seed + 1)
    assert not np.array_equal(res.null_distribution, other.null_distribution)
    # the first R samples of a longer run are the shorter run's (sample r: stream (seed, r))
    longer = calibrated_trisk(m, "base", "exp", alpha=2, replicates=150, seed=res.seed)
    np.testing.assert_array_equal(longer.null_distribution[:99], res.null_distribution)


def test_the_result_as_a_table_and_a_line():
    res = calibrated_trisk(_two(), "base", "exp", alpha=5, replicates=99, seed=2)
    df = res.to_pandas()
    assert len(df) == 1 and list(df.columns) == ["baseline", "system", "value", "alpha", "urisk", "statistic",
                                                 "pvalue", "pvalue_greater", "pvalue_less", "t_pvalue"]
    meta = json.loads(res.to_arrow().schema.metadata[b"fastrisk"])
    assert meta["seed"] == 2 and meta["replicates"] == 99 and meta["topics"] == 50 and meta["measure"] == "ap"
    model = json.loads(res.model)
    assert {"b", "e", "copula", "null", "calibration"} <= set(model) and model["null"] == "URisk_5"
    assert abs(model["calibration"]["urisk"]) <= 1e-4  # E[v(E - B)] of the calibrated model
    assert res.to_pandas(("replicate",))["null_distribution"].size == 99
    line = res.summary()
    assert line.startswith("exp against base: TRisk_5 = ") and "(two-sided)" in line and "99 samples" in line


def test_the_smooth_value_function():
    m = _two()
    res = calibrated_trisk(m, "base", "exp", alpha="smooth", replicates=99, seed=4)
    d = m.values[1] - m.values[0]
    s = 1.38426 * d ** 3 - 0.51659 * d ** 2 + 0.11578 * d
    assert float(res.statistic) == pytest.approx(_plain_trisk(list(s)), rel=1e-12)
    assert res.value == "smooth" and np.isnan(res.alpha) and res.name == "TRisk_s"
    assert json.loads(res.model)["null"] == "URisk_s"


def test_the_examples_pair_on_the_bundled_matrix_by_name():
    a = calibrated_trisk("adhoc8_ap", "run10", "run20", replicates=49, seed=1)
    b = calibrated_trisk(trec_matrix("adhoc8_ap"), "run10", "run20", replicates=49, seed=1)
    assert a.measure == b.measure == "ap" and a.pvalue == b.pvalue and a.alpha == 5.0


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("kw, match", [
    (dict(system="nope"), r"`system` 'nope' is not a run of the matrix \(its runs: base, exp\)"),
    (dict(baseline="gone"), r"`baseline` 'gone' is not a run of the matrix"),
    (dict(system="base"), r"`baseline` and `system` are both 'base'"),
    (dict(alpha=-1.0), r"`alpha` must be a finite number >= 0, got -1.0"),
    (dict(alpha=float("inf")), r"`alpha` must be a finite number >= 0"),
    (dict(alpha="cubic"), r"`alpha` must be a finite number >= 0 or 'smooth'"),
    (dict(replicates=0), r"`replicates` must be an integer in \[1"),
    (dict(replicates=2.5), r"`replicates` must be an integer in \[1"),
    (dict(matrix=3), r"`matrix` must be a ScoreMatrix, a score-matrix file or a bundled matrix name"),
    (dict(seed=-1), r"`seed` must be an integer seed in \[0, 2\*\*63 - 1\]"),
    (dict(threads=0), r"`threads` must be a positive integer, got 0"),
])
def test_bad_input_is_named(kw, match):
    base = dict(matrix=_two(topics=20), baseline="base", system="exp", replicates=9)
    base.update(kw)
    with pytest.raises(InputError, match=match):
        calibrated_trisk(base.pop("matrix"), base.pop("baseline"), base.pop("system"), **base)


def test_identical_runs_too_few_topics_bounds_and_measure():
    m = _two(topics=20)
    same = ScoreMatrix(m.values[[0, 0]], ["base", "exp"], m.topics, m.measure)
    with pytest.raises(InputError, match="runs 'base' and 'exp' score the same on every topic"):
        calibrated_trisk(same, "base", "exp")
    shifted = ScoreMatrix(np.vstack([m.values[0] * 0.5, m.values[0] * 0.5 + 0.25]), ["base", "exp"], m.topics,
                          m.measure)
    with pytest.raises(InputError, match="run 'exp' differs from 'base' by 0.25 on every topic"):
        calibrated_trisk(shifted, "base", "exp")
    short = ScoreMatrix(m.values[:, :2], ["base", "exp"], m.topics[:2], m.measure)
    with pytest.raises(InputError, match=r"the matrix has 2 topic\(s\): a calibrated TRisk needs at least 3"):
        calibrated_trisk(short, "base", "exp")
    V = m.values.copy()
    V[1, 3] = 1.5
    with pytest.raises(InputError, match=r"assumes scores in \[0, 1\]; run 'exp' scores 1.5"):
        calibrated_trisk(ScoreMatrix(V, ["base", "exp"], m.topics, m.measure), "base", "exp")
    V[1, 3] = np.nan
    with pytest.raises(InputError, match="score of system 'exp' on topic .* is nan; scores must be finite"):
        calibrated_trisk(ScoreMatrix(V, ["base", "exp"], m.topics, m.measure), "base", "exp")
    with pytest.raises(InputError, match="calibrated_trisk needs the measure of the scores"):
        calibrated_trisk(ScoreMatrix(m.values, ["base", "exp"], m.topics, None), "base", "exp")


def test_a_model_that_cannot_be_calibrated_names_the_pair_and_why(monkeypatch):
    import fastrisk.simulate.pair as pair

    monkeypatch.setattr(pair, "calibrate_pair", lambda *a, **k: None)
    with pytest.raises(InputError, match=r"the null model of 'exp' against 'base' cannot be calibrated to URisk_5 = 0: "
                                         r"simIReff's effTransform cannot move e's margin that far \(fitted: b "):
        calibrated_trisk(_two(topics=20), "base", "exp", alpha=5, replicates=9, seed=1)


# ------------------------------------------------------------------ the CLI
def test_the_cli_on_a_two_run_matrix(tmp_path, capsys):
    path = tmp_path / "two.parquet"
    write_matrix(_two(topics=40), path)
    out = tmp_path / "cal.csv"
    assert main(["simulate", "calibrated", str(path), "--baseline", "base", "--system", "exp", "--alpha", "5",
                 "--replicates", "199", "--format", "csv", "--out", str(out), "--header"]) == 0
    err = capsys.readouterr().err
    df = pd.read_csv(out, comment="#")
    assert len(df) == 1 and df.loc[0, "system"] == "exp" and 0 < df.loc[0, "pvalue"] <= 1
    seed = int(err.split("fastrisk simulate calibrated: seed ")[1].split()[0])
    assert f"# seed: {seed}" in out.read_text()
    assert "calibrated: fit: simIReff margins" in err and "exp against base: TRisk_5 = " in err
    res = calibrated_trisk(_two(topics=40), "base", "exp", alpha=5, replicates=199, seed=seed)
    assert df.loc[0, "pvalue"] == pytest.approx(float(res.pvalue))
    # --seed N: no announcement, the same table
    out2 = tmp_path / "cal2.csv"
    assert main(["simulate", "calibrated", str(path), "--baseline", "base", "--system", "exp", "--replicates", "199",
                 "--seed", str(seed), "--format", "csv", "--out", str(out2), "--quiet", "--alpha", "smooth"]) == 0
    err = capsys.readouterr().err
    assert "seed" not in err and "TRisk_s" in err
    assert pd.read_csv(out2, comment="#").loc[0, "value"] == "smooth"


def test_cli_errors_name_the_options(tmp_path, capsys):
    path = tmp_path / "two.parquet"
    write_matrix(_two(topics=20), path)
    assert main(["simulate", "calibrated", str(path), "--system", "exp"]) == 2
    assert "simulate calibrated needs --baseline B and --system E" in capsys.readouterr().err
    assert main(["simulate", "calibrated", str(path), str(path), "--baseline", "base", "--system", "exp"]) == 2
    assert "simulate calibrated takes one score-matrix file" in capsys.readouterr().err
    assert main(["simulate", "calibrated", str(path), "--baseline", "base", "--system", "exp", "--cache", "x"]) == 2
    assert "--processes, --scheduler and --cache are not options of it" in capsys.readouterr().err
    assert main(["simulate", "calibrated", str(path), "--baseline", "base", "--system", "exp", "--trials", "5"]) == 2
    assert "--trials: not options of simulate calibrated" in capsys.readouterr().err
    assert main(["simulate", "calibrated", str(path), "--baseline", "base", "--system", "exp", "--replicates",
                 "0"]) == 2
    assert "--replicates must be an integer in [1" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # argparse's own error
        main(["simulate", "calibrated", str(path), "--baseline", "base", "--system", "exp", "--alpha", "x"])
    assert "must be a number (or smooth)" in capsys.readouterr().err
    assert main(["simulate", "type1", str(path), "--alpha", "smooth"]) == 2
    assert "--alpha smooth is an option of simulate calibrated" in capsys.readouterr().err
    assert main(["simulate", "calibrated", str(path), "--baseline", "base", "--system", "exp", "--seed", "-2"]) == 2
    assert "--seed must be a non-negative integer" in capsys.readouterr().err


# ------------------------------------------------------------------ the level when the model is the truth
def _model_samples(cn: CopulaNull, n: int, seed: int, trials: int) -> np.ndarray:
    """(trials, 2, n) scores (b, e) drawn from the calibrated model (as `CopulaNull.draw` draws
    them, kept as scores so that each trial can be fitted again)."""
    from fastrisk._kernels import simulate as _k

    U = _k.trial_uniforms(seed, np.arange(trials, dtype=np.int64), n)
    u1 = U[:, 0].reshape(-1)
    u2 = np.clip(np.asarray(cn.cop.hinv1(np.column_stack([u1, U[:, 1].reshape(-1)]))), 1e-15, 1 - 1e-15)
    b = cn.b.quantile(u1).reshape(trials, n)
    e = cn.margins[0.0].quantile(u2).reshape(trials, n)
    return np.stack([b, e], axis=1)


def test_pvalues_of_the_true_model_are_uniform():
    """When the model is the truth and known (no refit), T's rank among the R + 1 is uniform:
    the rejection rate of p <= level is level up to Monte-Carlo error (400 samples: SE 0.015)."""
    m = _two(a=25, b=15)
    cn = CopulaNull(m.values, "ap")
    cn.calibrate(5.0, 0.0)
    n, K, R = 25, 400, 399
    data = cn.draw(5.0, 0.0, n, 101, np.arange(K))
    null = np.array([_plain_trisk(list(r)) for r in cn.draw(5.0, 0.0, n, 202, np.arange(R))])
    p = np.array([bootstrap_pvalues(_plain_trisk(list(x)), null)[0] for x in data])
    for level in (0.1, 0.25, 0.5):
        assert abs(np.mean(p <= level) - level) <= 4 * math.sqrt(level * (1 - level) / K)


@pytest.mark.slow
def test_pvalues_under_a_model_at_urisk_zero_are_roughly_uniform():
    """Samples of 25 topics from a calibrated model (URisk_5 = 0 exactly), each tested by
    `calibrated_trisk` (which fits its own model on the 25 topics): the p-values' share below
    0.25 and 0.5 within 4 binomial SEs of the level (60 samples)."""
    m = _two(a=25, b=15)
    cn = CopulaNull(m.values, "ap")
    cn.calibrate(5.0, 0.0)
    n, K = 25, 60
    S = _model_samples(cn, n, 7, K)
    names = ["base", "exp"]
    p = []
    for k in range(K):
        sm = ScoreMatrix(S[k], names, [str(i) for i in range(n)], "AP")
        try:
            p.append(float(calibrated_trisk(sm, "base", "exp", alpha=5, replicates=199, seed=k).pvalue))
        except InputError:  # a sample whose own model cannot be calibrated: not counted
            continue
    p = np.asarray(p)
    assert len(p) >= 50
    for level in (0.25, 0.5):
        assert abs(np.mean(p <= level) - level) <= 4 * math.sqrt(level * (1 - level) / len(p))
