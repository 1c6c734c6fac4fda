"""Every public function returns a result of the one model whose long form has the documented
columns, one row per cell of its table dims, and the scalar parameters in the metadata."""

from __future__ import annotations

import json

import numpy as np
import pytest

import fastrisk
from fastrisk.data import datasets
from fastrisk.data.results import Result

MATRIX, BASELINE = datasets.trec2012_web()
SMALL = MATRIX.select(systems=MATRIX.systems[:6])
S, C = SMALL.n_systems, SMALL.n_topics
SC = SMALL.values  # (S, c)

# (name, call, documented columns, rows)
CASES = [
    ("risk", lambda: fastrisk.risk(SMALL, BASELINE, alpha=[0, 5]),
     ["alpha", "loss_weight", "system", "baseline", "convention", "value", "inference", "urisk", "standard_error",
      "se_jack", "trisk", "at_risk", "rewarding", "freward", "frisk", "ugain", "se_rmse", "pvalue"], 2 * S),
    ("risk_scores", lambda: fastrisk.risk_scores(SMALL, BASELINE, alpha=[0, 5]),
     ["alpha", "loss_weight", "system", "topic", "baseline", "x", "d"], 2 * S * C),
    ("topic_risk", lambda: fastrisk.topic_risk(SMALL, BASELINE, alpha=[0, 5]),
     ["alpha", "loss_weight", "system", "topic", "baseline", "convention", "x", "tr", "tj", "influence",
      "pseudo_value", "bias", "loss", "win"], 2 * S * C),
    ("adaptive_risk", lambda: fastrisk.adaptive_risk(SMALL, BASELINE, alpha=[5]),
     ["alpha", "loss_weight", "system", "topic", "baseline", "method", "convention", "adaptive_alpha", "weight",
      "urisk"], S * C),
    ("baseline_table", lambda: fastrisk.baseline_table(SMALL, alpha=[0, 5]),
     ["alpha", "loss_weight", "system", "baseline", "convention", "value", "inference", "urisk", "standard_error",
      "trisk", "rank", "pvalue"], 2 * S * S),
    ("zrisk", lambda: fastrisk.zrisk(SMALL, alpha=[0, 5]),
     ["alpha", "loss_weight", "system", "convention", "value", "zrisk", "georisk", "effectiveness"], 2 * S),
    ("pca", lambda: fastrisk.pca(SMALL, 2),
     ["system", "component", "score", "explained_variance", "explained_variance_ratio", "singular_value"], 2 * S),
    ("bootstrap", lambda: fastrisk.bootstrap(SMALL, BASELINE, alpha=[0, 5], replicates=200, rng=1),
     ["alpha", "loss_weight", "system", "baseline", "statistic", "urisk", "standard_error", "pvalue", "bias",
      "ci_low", "ci_high"], 2 * S),
    ("permutation_test", lambda: fastrisk.permutation_test(SMALL, BASELINE, replicates=200, rng=1),
     ["alpha", "loss_weight", "system", "baseline", "statistic", "urisk", "pvalue"], 4 * S),
    ("jackknife", lambda: fastrisk.jackknife(SMALL, BASELINE, alpha=[1]),
     ["alpha", "loss_weight", "system", "baseline", "statistic", "urisk", "standard_error", "bias"], S),
    ("t_test", lambda: fastrisk.t_test(SMALL, BASELINE, alpha=[0, 1]),
     ["alpha", "loss_weight", "system", "baseline", "statistic", "urisk", "pvalue"], 2 * S),
    ("bootstrap.qq", lambda: fastrisk.bootstrap(SMALL, BASELINE, alpha=[1], replicates=100, rng=1,
                                                keep_replicates=True).qq(points=5),
     ["alpha", "loss_weight", "system", "quantile", "probability", "theoretical", "sample"], S * 5),
    ("tukey_hsd", lambda: fastrisk.tukey_hsd(SMALL, replicates=200, rng=1),
     ["system", "baseline", "statistic", "pvalue"], S * (S - 1) // 2),
    ("rbo", lambda: fastrisk.rbo("a b c", "b a c"), ["pair", "a", "b", "ties", "ext", "min", "max", "res", "p"], 1),
    ("rbo_many", lambda: fastrisk.rbo_many(["a b", "a c"], ["b a", "c a"]),
     ["pair", "a", "b", "ties", "ext", "min", "max", "res", "p"], 2),
    ("rbo_matrix", lambda: fastrisk.rbo_matrix(SC[:3]), ["a", "b", "p", "ties", "ext", "min", "max", "res"], 9),
    ("prefix_agreement", lambda: fastrisk.prefix_agreement(SC[0], SC[1]),
     ["depth", "p", "ties", "length_a", "length_b", "ext", "min", "max", "res"], C),
    ("kendall_tau", lambda: fastrisk.kendall_tau(SC[0], SC[1]), ["statistic", "pvalue"], 1),
    ("kendall_tau_matrix", lambda: fastrisk.kendall_tau_matrix(SC[:3]), ["a", "b", "statistic", "pvalue"], 9),
    ("friedman", lambda: fastrisk.friedman(SC.T), ["item", "mean_rank", "statistic", "pvalue", "kendall_w"], S),
]


@pytest.mark.parametrize("name,call,columns,rows", CASES, ids=[c[0] for c in CASES])
def test_long_form_has_the_documented_columns(name, call, columns, rows):
    result = call()
    assert isinstance(result, Result)
    table = result.to_arrow()
    assert table.column_names == columns
    assert table.num_rows == rows
    meta = json.loads(table.schema.metadata[b"fastrisk"])
    assert meta["result"] == type(result).__name__
    assert type(result).__name__ in repr(result)
    assert "<table>" in result._repr_html_()
    assert type(result).__name__ in fastrisk.__all__


def test_statistic_columns_match_the_arrays():
    """The long form is the arrays in the one axis order (alpha outermost, then system)."""
    res = fastrisk.risk(SMALL, BASELINE, alpha=[0, 5])
    t = res.to_arrow()
    np.testing.assert_array_equal(t.column("urisk").to_numpy(), res.urisk.reshape(-1))
    np.testing.assert_array_equal(t.column("pvalue").to_numpy(), res.pvalue.reshape(-1))
    assert t.column("system").to_pylist() == list(SMALL.systems) * 2
    boot = fastrisk.bootstrap(SMALL, BASELINE, alpha=[0, 5], replicates=200, rng=1)
    low, high = boot.confidence_interval
    bt = boot.to_arrow()
    np.testing.assert_array_equal(bt.column("ci_low").to_numpy(), low.reshape(-1))
    np.testing.assert_array_equal(bt.column("ci_high").to_numpy(), high.reshape(-1))
