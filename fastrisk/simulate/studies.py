"""Error-rate studies of paired tests after Urbano, Lima & Hanjalic, "Statistical Significance
Testing in Information Retrieval: An Empirical Analysis of Type I, Type II and Type III
Errors" (SIGIR 2019).

Per trial: sample a collection of the measure (probability proportional to its number of
runs), two distinct runs a, b of it, and simulate n topics of the pair
(:class:`~fastrisk.simulate.collections.CollectionModel`): under H0 both runs through run
a's margin with the pair's copula; under H1 run b's margin shifted to mean mu_a + delta.
Then run the battery (:func:`~fastrisk.simulate.battery.battery`: t, Wilcoxon, sign,
bootstrap, permutation, TRisk at alpha_risk > 0, ZRisk and GeoRisk flip tests) and count
rejections at every significance level.

- :func:`type1`: H0 true; rate = share of trials rejected (tails two-sided, less, greater).
- :func:`power`: H1 with effect delta > 0 (run b better); rate = share rejected in the right
  direction (two-sided with the statistic on b's side, or one-sided 'greater').
- :func:`type3`: H1; rate = share of two-sided rejections in the wrong direction.

Each study is a sweep (:mod:`fastrisk.sweep`, job kind ``"simulate_errors"``): one job per
(collection, chunk of trials), so a full-size study goes to a process pool or a Dask
cluster unchanged. Trial t draws everything (collection, runs, topics, resamples) from
counter-based streams keyed by (study seed, t): the table does not depend on the number of
chunks, the executor or the thread count. Monte-Carlo standard errors are
``sqrt(rate (1 - rate) / trials)``.
"""

from __future__ import annotations

import functools
import numbers

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fastrisk._kernels import simulate as _k
from fastrisk._random import resolve_seed
from fastrisk._typing import SeedLike
from fastrisk.errors import InputError
from fastrisk.simulate.battery import battery, battery_test_names

#: Bundled collections per measure (``fastrisk.datasets.trec_matrix`` names).
MEASURES = {
    "ap": ("adhoc5_ap", "adhoc6_ap", "adhoc7_ap", "adhoc8_ap"),
    "p10": ("adhoc5_p10", "adhoc6_p10", "adhoc7_p10", "adhoc8_p10"),
    "rr": ("adhoc5_rr", "adhoc6_rr", "adhoc7_rr", "adhoc8_rr"),
    "ndcg20": ("web2010_ndcg20", "web2011_ndcg20", "web2012_ndcg20", "web2013_ndcg20"),
    "err20": ("web2010_err20", "web2011_err20", "web2012_err20", "web2013_err20"),
}
#: Significance levels of Urbano et al. (2019).
ALPHAS = tuple(np.round(np.concatenate([np.arange(1, 10) / 1000, np.arange(1, 10) / 100, [0.1]]), 3))
#: Trials per sweep job (a job is a few seconds of work at 10^4 resamples).
CHUNK = 1000


@functools.lru_cache(maxsize=32)
def _model(name: str):
    from fastrisk.datasets import trec_matrix
    from fastrisk.simulate.collections import CollectionModel

    return CollectionModel(trec_matrix(name))


@functools.lru_cache(maxsize=8)
def _n_runs(names: tuple) -> np.ndarray:
    from fastrisk.datasets import trec_matrix

    return np.array([trec_matrix(n).n_systems for n in names], dtype=np.int64)


def _seeds(study_seed: int) -> tuple[int, int, int]:
    """Independent seeds for trial choices, topic uniforms and resampling."""
    s = np.random.SeedSequence(int(study_seed)).generate_state(3, np.uint64) >> np.uint64(1)
    return int(s[0]), int(s[1]), int(s[2])


def _assignment(names: tuple, study_seed: int, trials: int):
    runs = _n_runs(names)
    cum = np.cumsum(runs / runs.sum())
    cum[-1] = 1.0
    return _k.trial_choices(_seeds(study_seed)[0], 0, trials, cum, runs)


def _errors_job(matrix, *, collections, collection, study_seed, trials, lo, step, topics, delta, replicates,
                trisk_alpha, min_diff, alphas, threads=None) -> pa.Table:
    """One sweep job: trials lo .. lo + step - 1 (in trial order) of collection ``collection``;
    returns per (test, tails, alpha) the rejections with the statistic on run b's side
    (``positive``) and on run a's (``negative``), and ``trials``."""
    names = tuple(collections)
    coll, run_a, run_b = _assignment(names, study_seed, trials)
    mine = np.flatnonzero(coll == collection)[lo:lo + step]
    model = _model(names[collection])
    _, topic_seed, resample_seed = _seeds(study_seed)
    pairs = np.empty((len(mine), 2, topics))
    if len(mine):
        u = _k.trial_uniforms(topic_seed, mine.astype(np.int64), topics)
        key = run_a[mine] * 100_000 + run_b[mine]
        for k in np.unique(key):
            sel = np.flatnonzero(key == k)
            pairs[sel] = model.simulate_pair(int(run_a[mine[sel[0]]]), int(run_b[mine[sel[0]]]), u[sel],
                                             delta=float(delta))
    tests = battery_test_names(trisk_alpha)
    lv = np.asarray(alphas, dtype=np.float64)
    pos = np.zeros((len(tests), 3, len(lv)), np.int64)
    neg = np.zeros_like(pos)
    if len(mine):
        res = battery(pairs, replicates=replicates, rng=resample_seed, min_diff=min_diff, trisk_alpha=trisk_alpha,
                      start=mine.astype(np.int64), threads=threads)
        P = res.pvalue  # (T, tests, tails)
        right = (P[:, :, 2] < P[:, :, 1])[:, :, None, None]  # statistic on b's side
        rej = P[:, :, :, None] <= lv  # (T, tests, tails, levels); NaN never rejects
        pos = (rej & right).sum(axis=0)
        neg = (rej & ~right).sum(axis=0)
    T, L = len(tests), len(lv)
    return pa.table({
        "test": np.repeat(np.array(tests, dtype=object), 3 * L).astype(str),
        "tails": np.tile(np.repeat(np.array(["two-sided", "less", "greater"]), L), T),
        "alpha": np.tile(lv, 3 * T),
        "positive": pos.reshape(-1),
        "negative": neg.reshape(-1),
        "trials": np.full(T * 3 * L, len(mine), np.int64),
    })


def _register():
    from fastrisk.sweep import KINDS, register_kind

    if "simulate_errors" not in KINDS:
        register_kind("simulate_errors", _errors_job, seed=None, threads=True)


_register()


def _study_iv(measure, topics, trials, replicates, deltas, collections):
    if collections is None:
        if measure not in MEASURES:
            raise InputError(f"`measure` must be one of {', '.join(MEASURES)}, got {measure!r}")
        collections = MEASURES[measure]
    else:
        from fastrisk.datasets import path

        collections = tuple(collections)
        for n in collections:
            path(f"trec-matrices/{n}.csv")  # raises InputError naming an unknown matrix
    for name, v, low in (("topics", topics, 2), ("trials", trials, 1), ("replicates", replicates, 0)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < low:
            raise InputError(f"`{name}` must be an integer >= {low}, got {v!r}")
    d = np.asarray(deltas, dtype=np.float64).reshape(-1)
    if not np.isfinite(d).all():
        raise InputError(f"`delta` must be finite, got {d.tolist()}")
    return collections, d


def _run(mode, measure, topics, trials, replicates, deltas, rng, trisk_alpha, min_diff, alphas, collections,
         executor, chunk, progress):
    from fastrisk.sweep import Experiment, Grid, sweep

    collections, deltas = _study_iv(measure, topics, trials, replicates, deltas, collections)
    study_seed = resolve_seed(rng)
    coll, _, _ = _assignment(tuple(collections), study_seed, trials)
    counts = np.bincount(coll, minlength=len(collections))
    experiments = []
    for g, name in enumerate(collections):
        if counts[g] == 0:
            continue
        experiments.append(Experiment(
            "simulate_errors", f"trec:{name}", name=f"{mode}-{name}",
            params={"collections": list(collections), "collection": g, "study_seed": study_seed,
                    "trials": int(trials), "step": int(chunk), "topics": int(topics), "replicates": int(replicates),
                    "trisk_alpha": [float(a) for a in np.atleast_1d(trisk_alpha)], "min_diff": float(min_diff),
                    "alphas": [float(a) for a in alphas]},
            grid={"delta": [float(x) for x in deltas], "lo": list(range(0, int(counts[g]), int(chunk)))}))
    res = sweep(Grid(experiments, rng=0), executor=executor, progress=progress)
    table = res.to_arrow()
    failed = table.filter(pc.equal(table.column("status"), "error"))
    if failed.num_rows:
        raise InputError(f"{failed.num_rows} simulation job(s) failed: {failed.column('error')[0]}")
    return _summarise(mode, _label(measure, collections), topics, table)


def _label(measure, collections) -> str:
    """The ``measure`` column: the measure name, or that of the given collections' matrices."""
    if tuple(collections) == MEASURES.get(measure):
        return measure
    suffixes = {n.partition("_")[2] for n in collections}
    return suffixes.pop() if len(suffixes) == 1 else ",".join(collections)


def _summarise(mode, measure, topics, table: pa.Table) -> pa.Table:
    df = table.select(["param_delta", "test", "tails", "alpha", "positive", "negative", "trials"]).to_pandas()
    g = df.groupby(["param_delta", "test", "tails", "alpha"], sort=False, as_index=False)[
        ["positive", "negative", "trials"]].sum()
    if mode == "type1":
        g["hits"] = g["positive"] + g["negative"]
    elif mode == "power":
        g = g[g["tails"] != "less"].copy()
        g["hits"] = np.where(g["tails"] == "two-sided", g["positive"], g["positive"] + g["negative"])
    else:
        g = g[g["tails"] == "two-sided"].copy()
        g["hits"] = g["negative"]
    rate = g["hits"] / g["trials"]
    out = {"measure": [str(measure)] * len(g), "topics": np.full(len(g), int(topics))}
    if mode != "type1":
        out["delta"] = g["param_delta"].to_numpy()
    out.update({"test": g["test"].to_numpy().astype(str), "tails": g["tails"].to_numpy().astype(str),
                "alpha": g["alpha"].to_numpy(), "rate": rate.to_numpy(), "trials": g["trials"].to_numpy(),
                "se": np.sqrt(rate * (1 - rate) / g["trials"]).to_numpy()})
    return pa.table(out)


def type1(measure: str = "ap", *, topics: int = 50, trials: int = 10000, replicates: int = 1000, rng: SeedLike = None,
          trisk_alpha=(1.0, 5.0), min_diff: float = 0.0, alphas=ALPHAS, collections=None, executor=None,
          chunk: int = CHUNK, progress: bool | None = None) -> pa.Table:
    """Type I error rates of the battery under H0 (Urbano, Lima & Hanjalic 2019).

    Returns an Arrow table ``measure, topics, test, tails, alpha, rate, trials, se`` (one row
    per test, tail and significance level). ``measure`` picks the bundled collections
    (:data:`MEASURES`) unless ``collections`` names bundled matrices; ``executor``: as
    :func:`fastrisk.sweep.sweep` (None: in-process; a process pool; a Dask client).
    """
    return _run("type1", measure, topics, trials, replicates, [0.0], rng, trisk_alpha, min_diff, alphas,
                collections, executor, chunk, progress)


def power(measure: str = "ap", *, delta=(0.01, 0.02, 0.05, 0.1), topics: int = 50, trials: int = 10000,
          replicates: int = 1000, rng: SeedLike = None, trisk_alpha=(1.0, 5.0), min_diff: float = 0.0, alphas=ALPHAS,
          collections=None, executor=None, chunk: int = CHUNK, progress: bool | None = None) -> pa.Table:
    """Power (1 - type II error rate) at effect sizes ``delta``: the share of trials in which a
    test rejects in the right direction (two-sided, or one-sided 'greater'). Table as
    :func:`type1` with a ``delta`` column."""
    return _run("power", measure, topics, trials, replicates, delta, rng, trisk_alpha, min_diff, alphas,
                collections, executor, chunk, progress)


def type3(measure: str = "ap", *, delta=(0.01, 0.02, 0.05, 0.1), topics: int = 50, trials: int = 10000,
          replicates: int = 1000, rng: SeedLike = None, trisk_alpha=(1.0, 5.0), min_diff: float = 0.0, alphas=ALPHAS,
          collections=None, executor=None, chunk: int = CHUNK, progress: bool | None = None) -> pa.Table:
    """Type III error rates: the share of trials under H1 (effect ``delta``) in which a
    two-sided test rejects with the statistic on the wrong side. Same simulations as
    :func:`power` for the same seed."""
    return _run("type3", measure, topics, trials, replicates, delta, rng, trisk_alpha, min_diff, alphas,
                collections, executor, chunk, progress)
