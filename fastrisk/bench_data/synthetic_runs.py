"""Seeded generator of TREC-like run sets for scale tests and benchmarks.

Model (all draws from ``numpy.random.default_rng(seed)``; same arguments, same data):

* each topic has a universe of ``universe`` candidate documents; a log-normally sized set of
  them (about ``relevant`` on average) is relevant with grade 1 (70 %) or 2 (30 %); the
  topic has a difficulty ``mu_t ~ U(0.4, 1.6)``;
* a document's latent evidence is ``z_d = mu_t * grade_d + N(0, 1)`` (shared by all systems,
  which is what correlates their rankings);
* systems come in ``families`` (think participating groups, each submitting several runs);
  system ``s`` of family ``f`` scores ``a_s z_d + 0.8 e_{f,d} + 0.6 e_{s,d}`` with quality
  ``a_s ~ U(0.2, 1.2)`` and Gaussian family/system noise, and returns its top ``depth``;
* the qrels are the depth-``judge_depth`` pool of all systems (TREC style, as Robust 2004's
  depth-100 pool), judged with the latent grades; relevant documents outside the pool stay
  unjudged, so pool bias is real.

Defaults give the Robust-2004 size: 110 systems x 249 topics x depth 1,000 (about 3 s and
~120 MB in memory). `generate` returns in-memory ``(RunSet, Qrels)``;
`write` writes gzip run files and a qrels file (into ``bench_data/synthetic/`` by
default, which git ignores). Usage::

    from bench_data.synthetic_runs import generate
    runs, qrels = generate(n_systems=110, n_topics=249, depth=1000, seed=2004)

    python bench_data/synthetic_runs.py --systems 20 --topics 50 --depth 100 --out DIR
    python bench_data/synthetic_runs.py --size dl --out DIR   # 350 M lines, streamed

`write_streamed` writes any size topic by topic (the TREC-DL-size set: 50 runs x 7,000
queries x 1,000 = 350 M lines) without holding the set in memory.
"""

from __future__ import annotations

import contextlib
import gzip
from pathlib import Path

import numpy as np

from fastrisk._runtime.atomic import atomic_open, write_bytes
from fastrisk.data.runs import Qrels, RunSet, encode_rankings

HERE = Path(__file__).resolve().parent


def _simulate(n_systems, n_topics, depth, universe, relevant, families, seed):
    rng = np.random.default_rng(seed)
    n_fam = max(1, min(families, n_systems))
    family = np.sort(rng.integers(0, n_fam, n_systems))
    quality = rng.uniform(0.2, 1.2, n_systems).astype(np.float32)
    docs = np.empty((n_systems, n_topics, depth), dtype=np.int32)
    grades = np.zeros((n_topics, universe), dtype=np.int8)
    for t in range(n_topics):
        n_rel = int(min(universe // 4, max(3, rng.lognormal(np.log(relevant), 0.6))))
        rel_docs = rng.choice(universe, n_rel, replace=False)
        grades[t, rel_docs] = np.where(rng.random(n_rel) < 0.3, 2, 1)
        mu = rng.uniform(0.4, 1.6)
        z = (mu * grades[t] + rng.standard_normal(universe, dtype=np.float32)).astype(np.float32)
        fam_noise = rng.standard_normal((n_fam, universe), dtype=np.float32)
        scores = quality[:, None] * z[None, :] + 0.8 * fam_noise[family] \
            + 0.6 * rng.standard_normal((n_systems, universe), dtype=np.float32)
        top = np.argpartition(-scores, depth - 1, axis=1)[:, :depth]
        order = np.argsort(-np.take_along_axis(scores, top, axis=1), axis=1, kind="stable")
        docs[:, t, :] = np.take_along_axis(top, order, axis=1)
    return docs, grades


def generate(n_systems=110, n_topics=249, depth=1000, *, universe=None, relevant=70, families=None,
             judge_depth=100, seed=2004):
    """In-memory synthetic ``(RunSet, Qrels)``; document names are their dense ids."""
    universe = universe or max(4 * depth, 2000)
    families = families or max(1, n_systems // 4)
    raw, grades = _simulate(n_systems, n_topics, depth, universe, relevant, families, seed)
    lengths = np.full((n_systems, n_topics), depth, dtype=np.int32)
    dense, offsets, best_rank, ranked = encode_rankings(raw, lengths)
    systems = tuple(f"sys{s:03d}" for s in range(n_systems))
    topics = tuple(str(301 + t) for t in range(n_topics))
    runs = RunSet(systems, topics, dense, lengths, offsets, best_rank, None, ())
    judged = {}
    for t in range(n_topics):
        n_judged = int(np.searchsorted(best_rank[offsets[t]:offsets[t + 1]], judge_depth))
        original = ranked[t][:n_judged]
        judged[topics[t]] = dict(zip(map(str, range(n_judged)), grades[t, original].tolist()))
    return runs, Qrels.from_dict(judged)


def write(runs, qrels, out_dir=None):
    """Write ``runs`` as gzip TREC run files and ``qrels`` as ``qrels.txt`` into ``out_dir``."""
    out = Path(out_dir) if out_dir is not None else HERE / "synthetic"
    out.mkdir(parents=True, exist_ok=True)
    for s, name in enumerate(runs.systems):
        lines = []
        for t, topic in enumerate(runs.topics):
            n = int(runs.lengths[s, t])
            for i in range(n):
                lines.append(f"{topic} Q0 {runs.docid(t, int(runs.docs[s, t, i]))} {i + 1} {-(i + 1)} {name}\n")
        write_bytes(out / f"{name}.run.gz", gzip.compress("".join(lines).encode(), compresslevel=1))
    with atomic_open(out / "qrels.txt", "w") as fh:
        tab = qrels.to_arrow().to_pylist()
        fh.write("".join(f"{r['topic']} 0 {r['docid']} {r['grade']}\n" for r in tab))
    return out


#: Named sizes: Robust 2004 (110 runs x 249 topics x 1,000) and TREC Deep Learning scale
#: (50 runs x 7,000 queries x 1,000 = 350 M lines).
SIZES = {"robust": (110, 249, 1000), "dl": (50, 7000, 1000)}


def write_streamed(out_dir, n_systems=110, n_topics=249, depth=1000, *, universe=None, relevant=70,
                   families=None, judge_depth=100, seed=2004, compresslevel=1, first_topic=1,
                   progress=None):
    """Write a synthetic set topic by topic, never holding more than one topic in memory.

    Same model as `generate` (drawn topic by topic, so the numbers differ from
    ``generate``'s for the same seed); document names are ``D<topic>-<id>``. Writes
    ``<system>.run.gz`` for every system and ``qrels.txt`` (the depth-``judge_depth`` pool,
    judged with the latent grades) into ``out_dir``; returns the number of run lines written.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    universe = universe or max(4 * depth, 2000)
    families = families or max(1, n_systems // 4)
    rng = np.random.default_rng(seed)
    n_fam = max(1, min(families, n_systems))
    family = np.sort(rng.integers(0, n_fam, n_systems))
    quality = rng.uniform(0.2, 1.2, n_systems).astype(np.float32)
    names = [f"sys{s:03d}" for s in range(n_systems)]
    ranks = np.arange(1, depth + 1)
    lines = 0
    with contextlib.ExitStack() as stack:
        handles = [stack.enter_context(gzip.GzipFile(fileobj=stack.enter_context(atomic_open(out / f"{n}.run.gz", "wb")),
                                                     mode="wb", compresslevel=compresslevel))
                   for n in names]
        with atomic_open(out / "qrels.txt", "w") as qf:
            for t in range(n_topics):
                topic = str(first_topic + t)
                grades = np.zeros(universe, np.int8)
                n_rel = int(min(universe // 4, max(3, rng.lognormal(np.log(relevant), 0.6))))
                grades[rng.choice(universe, n_rel, replace=False)] = np.where(rng.random(n_rel) < 0.3, 2, 1)
                z = (rng.uniform(0.4, 1.6) * grades + rng.standard_normal(universe, dtype=np.float32)).astype(np.float32)
                fam_noise = rng.standard_normal((n_fam, universe), dtype=np.float32)
                scores = quality[:, None] * z[None, :] + 0.8 * fam_noise[family] \
                    + 0.6 * rng.standard_normal((n_systems, universe), dtype=np.float32)
                top = np.argpartition(-scores, depth - 1, axis=1)[:, :depth]
                order = np.argsort(-np.take_along_axis(scores, top, axis=1), axis=1, kind="stable")
                top = np.take_along_axis(top, order, axis=1)
                top_scores = np.take_along_axis(scores, top, axis=1)
                prefix = f"{topic} Q0 D{topic}-"
                for s in range(n_systems):
                    body = "\n".join(f"{prefix}{d} {r} {v:.6f} {names[s]}"
                                      for d, r, v in zip(top[s].tolist(), ranks.tolist(), top_scores[s].tolist()))
                    handles[s].write((body + "\n").encode())
                lines += n_systems * depth
                pool = np.unique(top[:, :judge_depth])
                qf.write("".join(f"{topic} 0 D{topic}-{d} {grades[d]}\n" for d in pool.tolist()))
                if progress is not None:
                    progress(t + 1, lines)
    return lines


if __name__ == "__main__":  # pragma: no cover
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=sorted(SIZES), help="a named size (overrides --systems/--topics/--depth)")
    ap.add_argument("--systems", type=int, default=110)
    ap.add_argument("--topics", type=int, default=249)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=2004)
    ap.add_argument("--out", default=None)
    ap.add_argument("--streamed", action="store_true", help="write topic by topic (any size, little memory)")
    a = ap.parse_args()
    if a.size:
        a.systems, a.topics, a.depth = SIZES[a.size]
    if a.streamed or a.size == "dl":
        print(write_streamed(a.out or HERE / "synthetic", a.systems, a.topics, a.depth, seed=a.seed), "lines")
    else:
        r, q = generate(a.systems, a.topics, a.depth, seed=a.seed)
        print(write(r, q, a.out))
