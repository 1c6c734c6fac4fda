"""Deliberately plain, set-based reference implementations for runs, metrics and pooling.

Never imports fastrisk's kernels. Runs are ``{system: {topic: [docid, ...]}}`` already in rank
order; qrels are ``{topic: {docid: grade}}`` with raw grades (negative allowed).
"""

from __future__ import annotations

import math


def order_run(lines):
    """[(docid, score)] -> docids by score descending, ties by docid descending."""
    return [d for d, _ in sorted(lines, key=lambda x: (x[1], x[0]), reverse=True)]


def grade(qrels_t, doc):
    g = qrels_t.get(doc)
    return None if g is None else max(0, g)


def metric(ranked, qrels_t, family, k, p=0.8, rel=1, residual=False, judged=None, condensed=False,
           ideal=None, judged_default=None):
    """Score of one ranking. ``judged``: optional set of judged docids (a pool) — documents
    outside it are unjudged; ``condensed`` drops unjudged documents. ``ideal``: the positive
    grades used for nDCG's ideal ranking (default: every positive judgment of the topic).
    ``judged_default``: the grade of a document in ``judged`` that the qrels do not grade
    (None: it stays unjudged)."""
    grades = []
    for d in ranked:
        g = grade(qrels_t, d)
        if judged is not None and d not in judged:
            g = None
        elif judged is not None and g is None:
            g = judged_default
        if g is None:
            if condensed:
                continue
            grades.append(None)
        else:
            grades.append(g)
    grades = grades[:k]
    grades += [0] * (k - len(grades))
    if family == "P":
        return sum(1 for g in grades if g is not None and g >= rel) / k
    if family == "RBP":
        total = 0.0
        for i, g in enumerate(grades):
            if (g is not None and g >= rel) or (residual and g is None):
                total += (1 - p) * p ** i
        return total + (p ** k if residual else 0.0)
    if family == "nDCG":
        if ideal is None:
            ideal = [max(0, g) for g in qrels_t.values() if g > 0]
        ideal = sorted(ideal, reverse=True)[:k]
        idcg = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
        if idcg == 0:
            return 0.0
        dcg = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(grades) if g)
        return dcg / idcg
    if family == "ERR":
        total, decay = 0.0, 1.0
        for i, g in enumerate(grades):
            r = (2 ** (g or 0) - 1) / 16
            total += r * decay / (i + 1)
            decay *= 1 - r
        return total
    raise ValueError(family)


def pool(runs, systems, topic, depth):
    """Set union of the top ``depth`` documents of ``systems`` for ``topic``."""
    out = set()
    for s in systems:
        out |= set(runs[s].get(topic, [])[:depth])
    return out


def pooled_metric(runs, qrels, s, topic, pool_systems, depth, family, k, condensed=False,
                  pooled_unjudged="unjudged", ideal="pool", **kw):
    """Score of ``s`` on ``topic`` when only the pool of ``pool_systems`` is judged.

    ``pooled_unjudged="nonrelevant"``: every pooled document is judged, grade 0 when the qrels
    have none (Webber & Park's protocol). ``ideal="full"``: nDCG's ideal from every positive
    judgment of the topic instead of those inside the pool."""
    qt = qrels.get(topic, {})
    pooled = pool(runs, pool_systems, topic, depth)
    if pooled_unjudged == "nonrelevant":
        judged, default = pooled, 0
    else:
        judged, default = {d for d in pooled if d in qt}, None
    ideal = None if ideal == "full" else [max(0, qt[d]) for d in judged if qt.get(d, 0) > 0]
    return metric(runs[s].get(topic, []), qt, family, k, judged=judged, condensed=condensed, ideal=ideal,
                  judged_default=default, **kw)


def true_metric(runs, qrels, s, topic, family, k, condensed=False, pooled_unjudged="unjudged", depth=None, **kw):
    """Score against every judgment; with ``pooled_unjudged="nonrelevant"`` the documents of the
    depth-``depth`` pool of all the systems that the qrels do not grade are judged non-relevant."""
    qt = qrels.get(topic, {})
    if pooled_unjudged == "nonrelevant":
        judged = set(qt) | pool(runs, list(runs), topic, depth)
        return metric(runs[s].get(topic, []), qt, family, k, judged=judged, condensed=condensed,
                      judged_default=0, **kw)
    judged = set(qt) if condensed else None
    return metric(runs[s].get(topic, []), qt, family, k, judged=judged, condensed=condensed, **kw)


def judged_topics(runs, qrels):
    topics = {t for r in runs.values() for t in r}
    return sorted(t for t in topics if any(g > 0 for g in qrels.get(t, {}).values()))


def mean_pooled(runs, qrels, s, topics, pool_systems, depth, family, k, **kw):
    return sum(pooled_metric(runs, qrels, s, t, pool_systems, depth, family, k, **kw) for t in topics) / len(topics)


def loo_adjustment(runs, qrels, pooled, new, topics, depth, family, k, **kw):
    """Algorithm 1: mean over pooled s of (score on pool(P) - score on pool(P - s + new))."""
    deltas = []
    for s in pooled:
        full = mean_pooled(runs, qrels, s, topics, pooled, depth, family, k, **kw)
        others = [x for x in pooled if x != s] + [new]
        deltas.append(full - mean_pooled(runs, qrels, s, topics, others, depth, family, k, **kw))
    return sum(deltas) / len(deltas), deltas


# ---------------------------------------------------------------------------------------
# builders and strategies shared by the tests (use fastrisk's containers, not its kernels)


def build(runs, qrels):
    """``(RunSet, Qrels)`` from the dict forms above."""
    import numpy as np

    from fastrisk.data.runs import Qrels, RunSet

    systems = sorted(runs)
    topics = sorted({t for r in runs.values() for t in r}, key=lambda x: (len(x), x))
    vocab = [sorted({d for s in systems for d in runs[s].get(t, [])}) for t in topics]
    depth = max([len(runs[s].get(t, [])) for s in systems for t in topics] + [1])
    docs = np.full((len(systems), len(topics), depth), -1, dtype=np.int64)
    for i, s in enumerate(systems):
        for j, t in enumerate(topics):
            index = {d: n for n, d in enumerate(vocab[j])}
            for r, d in enumerate(runs[s].get(t, [])):
                docs[i, j, r] = index[d]
    rs = RunSet.from_arrays(docs, None, systems, topics, vocab)
    return rs, Qrels.from_dict(qrels)


def runs_and_qrels(draw, max_systems=5, max_topics=3, universe=14, max_depth=9, min_systems=2):
    """A hypothesis ``draw``-based generator of small random runs and graded qrels."""
    from hypothesis import strategies as st

    n_sys = draw(st.integers(min_systems, max_systems))
    n_top = draw(st.integers(1, max_topics))
    topics = [str(100 + t) for t in range(n_top)]
    docs = [f"d{i:02d}" for i in range(universe)]
    runs = {}
    for s in range(n_sys):
        runs[f"s{s}"] = {}
        for t in topics:
            n = draw(st.integers(0, max_depth))
            runs[f"s{s}"][t] = draw(st.permutations(docs))[:n]
    qrels = {}
    for t in topics:
        judged = draw(st.lists(st.sampled_from(docs), unique=True, max_size=universe))
        qrels[t] = {d: draw(st.sampled_from([-2, 0, 0, 1, 1, 2, 3, 4])) for d in judged}
        if not any(g > 0 for g in qrels[t].values()):
            qrels[t][docs[0]] = 1
    return runs, qrels
