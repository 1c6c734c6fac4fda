"""`fastrisk.compare` (issue #39) side by side with ``ranx.compare`` and PyTerrier's ``pt.Experiment``.

Workload: 100 synthetic runs × 250 topics, depth 100 (`fastrisk.bench_data.synthetic_runs`),
3 measures (AP, nDCG@10, P@10 = ranx's map, ndcg@10, precision@10 = trec_eval's map,
ndcg_cut_10, P_10), paired t test, Holm; fastrisk adds URisk, TRisk and p at α ∈ {0, 1, 5}.
Every side scores the runs itself from the same rankings and qrels (the peers' inputs are built
once, outside the timing: ranx ``Run``/``Qrels`` objects, PyTerrier result frames).

- ``compare-allpairs-100x250x3``: ranx compares every pair of runs (4,950 per measure); fastrisk
  with ``baseline=None`` does the same (every system a baseline, one correction family per
  measure) — the fair comparison with ``ranx.compare``.
- ``compare-baseline-100x250x3``: one baseline, as ``pt.Experiment(..., baseline=0,
  correction="holm")``; the aim is fastrisk below 1 s after warmup (``median_seconds`` in
  extra_info).

The peers take seconds per call, so they run few alternating blocks. Run:
``python benchmarks/compare.py benchmarks/bench_compare.py`` (``--record`` to store the ratios).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import side_by_side

import fastrisk
from fastrisk.bench_data.synthetic_runs import generate

S, T, DEPTH = 100, 250, 100
ALPHAS = [0, 1, 5]
OURS = ["AP", "nDCG@10", "P@10"]
RANX = ["map", "ndcg@10", "precision@10"]
TREC = ["map", "ndcg_cut_10", "P_10"]


@pytest.fixture(scope="module")
def data():
    runs, qrels = generate(S, T, DEPTH, seed=7)
    with warnings.catch_warnings():  # compile outside the timing (fastrisk warmup does the same)
        warnings.simplefilter("ignore")
        fastrisk.compare(runs, qrels, OURS, baseline=None, alpha=ALPHAS)
    return runs, qrels


def _nested(runs, qrels):
    """The rankings as {system: {topic: {doc: score}}} (score = depth - rank) and the qrels as
    {topic: {doc: grade}}; document names are the synthetic set's dense ids."""
    out = {}
    for s, name in enumerate(runs.systems):
        per = {}
        for t, topic in enumerate(runs.topics):
            n = int(runs.lengths[s, t])
            per[topic] = {str(int(d)): float(DEPTH - r) for r, d in enumerate(runs.docs[s, t, :n])}
        out[name] = per
    judged = {}
    for t, topic in enumerate(qrels.topics):
        lo, hi = qrels.topic_offsets[t], qrels.topic_offsets[t + 1]
        judged[topic] = {str(d): int(g) for d, g in zip(qrels.docids[lo:hi], qrels.grades[lo:hi])}
    return out, judged


def _ours(runs, qrels, baseline):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fastrisk.compare(runs, qrels, OURS, baseline=baseline, alpha=ALPHAS, test="t", correction="holm")


def test_compare_allpairs_vs_ranx(benchmark, data):
    ranx = pytest.importorskip("ranx")
    runs, qrels = data
    nested, judged = _nested(runs, qrels)
    r_runs = [ranx.Run(per, name=name) for name, per in nested.items()]
    r_qrels = ranx.Qrels(judged)

    def peer():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ranx.compare(r_qrels, r_runs, RANX, stat_test="student", max_p=0.05)

    # the same means on the same rankings
    report = peer()
    ours = _ours(runs, qrels, None)
    np.testing.assert_allclose([report.results[n]["map"] for n in runs.systems], ours.mean[0], rtol=1e-9)
    benchmark.group = f"compare-allpairs-{S}x{T}x3"
    side_by_side(benchmark, lambda: _ours(runs, qrels, None), {"ranx": peer}, blocks=3, block_seconds=0.0)


def test_compare_one_baseline_vs_pt_experiment(benchmark, data):
    pt = pytest.importorskip("pyterrier")
    pd = pytest.importorskip("pandas")
    runs, qrels = data
    nested, judged = _nested(runs, qrels)
    frames = [pd.DataFrame([(q, d, s) for q, per in nested[n].items() for d, s in per.items()],
                           columns=["qid", "docno", "score"]) for n in runs.systems]
    qrels_df = pd.DataFrame([(q, d, g) for q, per in judged.items() for d, g in per.items()],
                            columns=["qid", "docno", "label"])
    topics = pd.DataFrame({"qid": list(runs.topics), "query": "x"})

    def peer():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return pt.Experiment(frames, topics, qrels_df, TREC, names=list(runs.systems), baseline=0,
                                 correction="holm")

    table = peer()
    ours = _ours(runs, qrels, 0)
    np.testing.assert_allclose(table["map p-value corrected"].astype(float)[1:], ours.pvalue_adjusted[0, 1:, 0],
                               rtol=1e-8)
    benchmark.group = f"compare-baseline-{S}x{T}x3"
    side_by_side(benchmark, lambda: _ours(runs, qrels, 0), {"pyterrier": peer}, blocks=3, block_seconds=0.0)
