"""Pooling workloads on a Robust-2004-size synthetic set (110 systems x 249 topics x 1,000).

Peers: a plain-Python set-based implementation (pool = set union of top-k lists, judged =
pool & qrels) and trectools' ``TrecPoolMaker`` (top-10 pools from pandas run tables; given
runs already truncated to the pool depth, which only helps it). Aims of issue 5: 20,000
leave-one-out iterations in < 5 s; the full Algorithm 3 grid (5 widths x 100 system samples
x 4 n x 200 topic samples) in < 2 s on 2 cores.

    PYTHONPATH=$PWD /work/venv/bin/python -m pytest benchmarks/bench_pooling.py --benchmark-only -q
"""

from __future__ import annotations

import numpy as np
import pytest

from fastrisk.bench_data.synthetic_runs import generate
from fastrisk.measures import pooling as P

MEASURE = "RBP(rel=1,p=0.8)@10"
DEPTH = 10


@pytest.fixture(scope="module")
def robust():
    runs, qrels = generate(n_systems=110, n_topics=249, depth=1000, seed=2004)
    ctx = P._context(runs, qrels, MEASURE, DEPTH, "assumed")
    # plain-Python view: per system, per topic, top-10 dense ids; qrels as dicts
    top = [[runs.docs[s, t, :DEPTH].tolist() for t in range(runs.n_topics)] for s in range(runs.n_systems)]
    qd = []
    for t in range(runs.n_topics):
        g = ctx.grades[runs.doc_offsets[t]:runs.doc_offsets[t + 1]]
        qd.append({int(d): int(g[d]) for d in np.flatnonzero(g >= 0)})
    return runs, qrels, ctx, top, qd


def python_loo_iteration(top, qd, topics, held, S, p=0.8, k=10):
    """One leave-one-out iteration with Python sets: pool all others, score ``held``."""
    total = 0.0
    for t in topics:
        pool = set()
        for s in range(S):
            if s != held:
                pool.update(top[s][t])
        w, score = 1 - p, 0.0
        for d in top[held][t][:k]:
            if d in pool and qd[t].get(d, 0) >= 1:
                score += w
            w *= p
        total += score
    return total / len(topics)


def test_loo_iteration_fastrisk(benchmark, robust):
    runs, _, ctx, _, _ = robust
    benchmark.group = "one leave-one-out iteration (110 x 249)"
    mask = ctx.pool.mask()
    P.leave_one_out_means(ctx, np.array([5]), mask)
    benchmark(P.leave_one_out_means, ctx, np.array([5]), mask)


def test_loo_iteration_python_sets(benchmark, robust):
    runs, _, ctx, top, qd = robust
    benchmark.group = "one leave-one-out iteration (110 x 249)"
    topics = ctx.topic_idx.tolist()
    got = benchmark.pedantic(python_loo_iteration, args=(top, qd, topics, 5, runs.n_systems), rounds=5)
    assert got == pytest.approx(P.leave_one_out_means(ctx, np.array([5]), ctx.pool.mask())[0], abs=1e-12)


def test_loo_iteration_trectools(benchmark, robust):
    pd = pytest.importorskip("pandas")
    trectools = pytest.importorskip("trectools")
    runs, _, ctx, top, _ = robust
    benchmark.group = "one leave-one-out iteration (110 x 249)"
    trec_runs = []
    for s in range(runs.n_systems):
        if s == 5:
            continue
        rows = [(runs.topics[t], "Q0", str(d), r + 1, -float(r), f"s{s}")
                for t in range(runs.n_topics) for r, d in enumerate(top[s][t])]
        tr = trectools.TrecRun()
        tr.run_data = pd.DataFrame(rows, columns=["query", "q0", "docid", "rank", "score", "system"])
        trec_runs.append(tr)
    maker = trectools.TrecPoolMaker()
    benchmark.pedantic(maker.make_pool, args=(trec_runs,), kwargs={"topX": DEPTH}, rounds=1, iterations=1)


def test_loo_20000_iterations_fastrisk(benchmark, robust):
    runs, _, ctx, _, _ = robust
    benchmark.group = "20,000 leave-one-out iterations (aim < 5 s)"
    held = np.arange(20000) % runs.n_systems
    mask = ctx.pool.mask()
    P.leave_one_out_means(ctx, held[:4], mask)
    benchmark.pedantic(P.leave_one_out_means, args=(ctx, held, mask), rounds=3)


def test_algorithm3_full_grid_fastrisk(benchmark, robust):
    runs, qrels, *_ = robust
    benchmark.group = "Algorithm 3 grid"
    P.pooling_experiment(runs, qrels, MEASURE, repeats=2, topic_repeats=2, seed=1)
    res = benchmark.pedantic(P.pooling_experiment, args=(runs, qrels, MEASURE), kwargs={"seed": 1}, rounds=3)
    assert res.adjusted_abs.shape == (5, 100, 4)


def python_algorithm3_task(top, qd, topics, S, w, ns, J, rng, p=0.8, k=10, depth=DEPTH):
    """One (width, repeat) task of Algorithm 3 with Python sets (LOO included)."""
    systems = rng.sample(range(S), w + 1)
    pooled, r = systems[:w], systems[w]

    def score(s, t, pool_systems):
        pool = set()
        for x in pool_systems:
            pool.update(top[x][t][:depth])
        wgt, sc = 1 - p, 0.0
        for d in top[s][t][:k]:
            if d in pool and qd[t].get(d, 0) >= 1:
                sc += wgt
            wgt *= p
        return sc

    def true(s, t):
        return sum((1 - p) * p ** i for i, d in enumerate(top[s][t][:k]) if qd[t].get(d, 0) >= 1)

    unp = [score(r, t, pooled) for t in topics]
    tru = [true(r, t) for t in topics]
    loo = []
    for s in pooled:
        others = [x for x in pooled if x != s] + [r]
        loo.append(sum(score(s, t, pooled) - score(s, t, others) for t in topics) / len(topics))
    N = len(topics)
    out = []
    for n in ns:
        for _ in range(J):
            pick = rng.sample(range(N), n)
            a = sum(tru[i] - unp[i] for i in pick) / n
            out.append(abs(sum(tru) / N - (sum(unp) / N + a)))
    return sum(loo), sum(out)


def test_algorithm3_one_width_python_sets(benchmark, robust):
    """Plain Python for 1/100 of the grid (one repeat per width); multiply by 100 to compare."""
    import random

    runs, _, ctx, top, qd = robust
    benchmark.group = "Algorithm 3 grid"
    topics = ctx.topic_idx.tolist()

    def grid_slice():
        rng = random.Random(1)
        for w in (2, 4, 10, 20, 40):
            python_algorithm3_task(top, qd, topics, runs.n_systems, w, (10, 20, 40, 100), 200, rng)

    benchmark.pedantic(grid_slice, rounds=1, iterations=1)
