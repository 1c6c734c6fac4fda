"""Baseline rankings, ranking matrices, robustness figures, the Table 3 experiment and its CLI."""

from __future__ import annotations

import numpy as np
import pytest
from reference import ltr as ref

from fastrisk import ScoreMatrix, risk
from fastrisk.cli import main
from fastrisk.errors import InputError
from fastrisk.ltr import (
    baseline_scores,
    best_feature,
    letor_data,
    lightgbm_example,
    ltr_experiment,
    ranking_matrix,
    robustness,
    synthetic_letor,
    write_letor,
)


def test_baseline_scores_and_best_feature():
    d = synthetic_letor(25, (3, 12), 5, rng=4)
    np.testing.assert_array_equal(baseline_scores(d, 3), d.features[:, 2])
    means = [np.mean([ref.ndcg(list(d.features[a:b, j]), list(d.labels[a:b]), 10) for a, b in ref.queries(d.group)])
             for j in range(5)]
    assert best_feature(d) == int(np.argmax(means)) + 1
    for bad in (0, 6, 1.5, True):
        with pytest.raises(InputError, match="`feature`"):
            baseline_scores(d, bad)
    with pytest.raises(InputError, match="`data`"):
        baseline_scores(d.features, 1)


def test_ranking_matrix_matches_reference():
    d = synthetic_letor(12, (1, 9), 3, rng=9)
    d = letor_data(d.features, np.where(np.arange(d.n_documents) < d.boundaries[1], 0, d.labels), d.group,
                   qids=d.qids)  # the first query has no relevant document
    model = np.random.default_rng(0).normal(size=d.n_documents)
    m = ranking_matrix(d, {"model": model, "f1": d.features[:, 0]}, measure="nDCG@5")
    assert m.systems == ("model", "f1") and m.topics == d.qids and m.measure == "nDCG@5"
    for row, scores in enumerate((model, d.features[:, 0])):
        expected = [ref.ndcg(list(scores[a:b]), list(d.labels[a:b]), 5) for a, b in ref.queries(d.group)]
        np.testing.assert_allclose(m.values[row], expected, rtol=1e-12)
    assert m.values[0, 0] == 1.0
    with pytest.raises(InputError, match="one score per document"):
        ranking_matrix(d, {"x": model[:-1]})
    with pytest.raises(InputError, match="non-finite"):
        ranking_matrix(d, {"x": np.full(d.n_documents, np.nan)})


def test_robustness_by_hand():
    m = ScoreMatrix([[0.6, 0.3, 0.2, 0.1], [0.5, 0.5, 0.2, 0.0]], ["model", "bm25"], ["a", "b", "c", "d"])
    r = robustness(m, "bm25")
    assert r.systems == ("model",)
    assert r.wins.tolist() == [2] and r.losses.tolist() == [1] and r.big_losses.tolist() == [1]
    assert r.risk_reward[0] == pytest.approx(0.2 / 0.2)
    assert r.loss_win[0] == pytest.approx(0.5)
    assert r.mean[0] == pytest.approx(0.3)
    # the same FRisk/FReward as fastrisk.risk
    full = risk(m, "bm25", alpha=0)
    assert r.risk_reward[0] == pytest.approx(full.frisk[0] / full.freward[0])
    assert set(r.to_pandas().columns) >= {"system", "baseline", "risk_reward", "loss_win", "big_losses"}
    with pytest.raises(InputError, match="`baseline`"):
        robustness(m, "nope")


lgb = pytest.importorskip("lightgbm")


@pytest.mark.slow
def test_experiment_rows_and_determinism(tmp_path):
    train, test = lightgbm_example()
    kw = dict(baseline_feature=100, alpha=[0, 5], kinds=["urisk", "faro"], rounds=3, rng=2)
    r = ltr_experiment(train, test, **kw)
    assert r.models == ("baseline(feature 100)", "lambdarank", "urisk(alpha=5)", "faro(alpha=5)")
    assert r.kinds == ("baseline", "lambdarank", "urisk", "faro")
    np.testing.assert_array_equal(r.alphas, [0, 0, 5, 5])
    base = ranking_matrix(test, {"b": baseline_scores(test, 100)})
    assert r.ndcg10[0] == pytest.approx(base.values.mean())
    np.testing.assert_allclose(r.ndcg10, r.matrix.values.mean(1))
    rob = robustness(r.matrix, r.baseline)
    np.testing.assert_array_equal(r.big_losses[1:], rob.big_losses)
    again = ltr_experiment(train, test, **kw)
    np.testing.assert_array_equal(r.matrix.values, again.matrix.values)
    table = r.to_pandas()
    assert list(table["model"]) == list(r.models) and "risk_reward" in table and "alpha" in table
    fig = r.plot(tmp_path / "t3.png")
    assert (tmp_path / "t3.png").stat().st_size > 1000 and len(fig.axes) == 2


@pytest.mark.parametrize("kwargs, message", [
    (dict(alpha=[-1]), "`alpha`"),
    (dict(kinds=["lambdamart"]), "`kinds`"),
    (dict(rounds=0), "`rounds`"),
    (dict(baseline_feature=301), "`feature`"),
    (dict(params={"objective": "lambdarank"}), "objective"),
    (dict(threads=0), "`threads`"),
])
def test_experiment_bad_arguments(kwargs, message):
    train, test = lightgbm_example()
    with pytest.raises(InputError, match=message):
        ltr_experiment(train, test, **kwargs)


def test_cli(tmp_path, capsys):
    d = synthetic_letor(40, (4, 10), 6, rng=3)
    write_letor(d.subset(range(30)), tmp_path / "train.txt")
    write_letor(d.subset(range(30, 40)), tmp_path / "test.txt")
    out, fig = tmp_path / "t3.csv", tmp_path / "t3.png"
    rc = main(["ltr", str(tmp_path / "train.txt"), str(tmp_path / "test.txt"), "--baseline-feature", "1",
               "--alpha", "0,5", "--kinds", "urisk,saro", "--rounds", "2", "--num-leaves", "4", "--seed", "1",
               "--format", "csv", "--out", str(out), "--figure", str(fig)])
    assert rc == 0
    lines = out.read_text().splitlines()
    assert lines[0].split(",")[:3] == ["model", "kind", "alpha"]
    assert len(lines) == 1 + 4 and fig.exists()
    assert "baseline(feature 1)" in capsys.readouterr().err
    assert main(["ltr", str(tmp_path / "train.txt")]) == 2
    assert "TRAIN and TEST" in capsys.readouterr().err
    assert main(["ltr", str(tmp_path / "train.txt"), str(tmp_path / "missing.txt")]) == 2


@pytest.mark.slow
def test_table3_on_the_lightgbm_example():
    """The full experiment (α = 1, 5, 10, 20; URisk, SARO, FARO; 100 rounds): every model learns
    beyond the baseline feature on average. Whether risk-sensitivity reduces losses on this small
    set is reported by the benchmark, not asserted (50 test queries are too few)."""
    train, test = lightgbm_example()
    r = ltr_experiment(train, test, rng=1)
    assert len(r.models) == 2 + 3 * 4
    assert np.isfinite(r.risk_reward[1:]).all()
    assert (r.ndcg10[1:] > r.ndcg10[0]).all()
