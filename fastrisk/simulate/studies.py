"""Error-rate studies of paired tests: Urbano, Lima & Hanjalic, "Statistical Significance
Testing in Information Retrieval: An Empirical Analysis of Type I, Type II and Type III
Errors" (SIGIR 2019), with the published protocol (``protocol="urbano2019"``, the only one).

Models (`fastrisk.simulate.fits`): per collection, the runs kept after removing
duplicates and the bottom 10 %, a simIReff margin per run and a copula (every family, MLE,
AIC) per pair, fitted once and cached. Per trial (the study's ``R/11-type_1.R`` and
``R/12-type_2.R``):

- type I (`type1`): a collection with probability proportional to its number of
  runs, two distinct runs (first, second) uniformly; n topics from the pair's copula
  (fitted for (i, j), i < j, used as is), u1 -> b and u2 -> e, *both* through the first
  run's margin;
- power (`power`) and type III (`type3`), effect ``delta``: a collection with
  probability proportional to its number of baselines that have at least one transformed
  partner, a baseline b uniformly among them, an experimental run e uniformly among its
  successful partners (`h1_pairs`); b through
  its own margin, e through its own margin transformed to mean mu_b + delta, columns of
  the copula swapped when it was fitted for (e, b).

Each risk-sensitive test (TRisk and the bootstrap test of URisk at alpha > 0, TRisk with the
smooth value function) is scored on pairs of its own null instead (`fastrisk.simulate.nulls`:
the pairs drawn as the H1 pairs above, e's margin transformed so that E[d + alpha min(d, 0)],
or E[s(d)], is 0 for type I and ``delta`` for power and type III), with its own trial streams;
every rate names its hypothesis (`hypothesis`, the ``hypothesis`` column).

Then the battery (`battery` with ``protocol="urbano2019"``:
t, Wilcoxon, sign with ties |d| <= 0.01, bootstrap, permutation, as ``R/ir_tests.R``; plus
TRisk at ``trisk_alpha``, ZRisk and GeoRisk) on d = e - b; one-tailed tests are for
H1: e > b ('greater'). Rates (the study's reduce steps): type I and power = share of trials
with p <= alpha among the trials where the test is defined (R's ``ecdf`` drops NA: a sign
test with every difference a tie); type III = share of all trials with a two-sided
p <= alpha and an observed mean difference round(mean(e - b), 6) < 0 (``R/13-type_3.R``).

Each study is a sweep (job kind ``"simulate_errors"``): one job per (collection, delta,
chunk of trials). Trial t draws its choices, topics and resamples from counter-based
streams keyed by (study seed, t): the numbers do not depend on the chunking, the executor
or the thread count. Monte-Carlo standard errors are sqrt(rate (1 - rate) / n).

With ``shared_resamples`` (common random numbers) the trials of a block of `SHARED_BLOCK`
ranks of a collection share their bootstrap resamples and sign flips, drawn from a stream
keyed by (collection, block) (`shared_block`): still independent of the chunking (a job holds
whole blocks), the executor and the thread count, but correlated within a block, so the
standard errors are between-job ones (`_between_job_se`).
"""

from __future__ import annotations

import atexit
import gc
import json
import numbers
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fastrisk._kernels import simulate as _k
from fastrisk._runtime import battery_tests as _bt
from fastrisk._runtime.aliases import SeedLike
from fastrisk._runtime.atomic import atomic_open
from fastrisk._runtime.progress import stderr_is_terminal
from fastrisk._runtime.rng import resolve_seed
from fastrisk.data.datasets import path
from fastrisk.data.results import Result, array, param
from fastrisk.errors import InputError
from fastrisk.simulate.battery import battery, battery_test_names
from fastrisk.simulate.fits import cache_fit, fit_collections, load_fit, prepare_h1, prepare_nulls
from fastrisk.simulate.measures import canonical_measure, file_stem, read_collection
from fastrisk.simulate.nulls import RiskNull
from fastrisk.simulate.options import ALPHAS, CHUNK, Execution, Sampling, TestSelection, from_keywords, renamed
from fastrisk.sweep import KINDS, Experiment, Grid, register_kind, sweep

#: Bundled collections per measure (``fastrisk.data.datasets.trec_matrix`` names; the study's data).
MEASURES = {
    "ap": ("adhoc5_ap", "adhoc6_ap", "adhoc7_ap", "adhoc8_ap"),
    "p10": ("adhoc5_p10", "adhoc6_p10", "adhoc7_p10", "adhoc8_p10"),
    "rr": ("adhoc5_rr", "adhoc6_rr", "adhoc7_rr", "adhoc8_rr"),
    "ndcg20": ("web2010_ndcg20", "web2011_ndcg20", "web2012_ndcg20", "web2013_ndcg20"),
    "err20": ("web2010_err20", "web2011_err20", "web2012_err20", "web2013_err20"),
}
#: Topic-set sizes and effect sizes of the study (``R/common.R``; its significance levels:
#: `ALPHAS`, of `fastrisk.simulate.options`).
TOPICS = (25, 50, 100)
DELTAS = tuple(np.round(np.arange(1, 11) / 100, 2))
PROTOCOLS = ("urbano2019",)
TAILS = ("one-tailed", "two-sided")


def resolve(measure=None, collections=None) -> tuple[str, tuple]:
    """(measure key, collection names) of `collections` (see `load_collections`)."""
    key, items = load_collections(measure, collections)
    return key, tuple(items)


def _bundled(name) -> bool:
    text = str(name)
    if not text or any(c in text for c in "/\\") or text.startswith("."):
        return False
    try:
        path(f"trec-matrices/{text}.csv")
    except InputError:
        return False
    return True


def load_collections(measure=None, collections=None) -> tuple[str, dict]:
    """(measure key, {name: ScoreMatrix, or None for a bundled matrix}) of ``collections``:
    bundled matrix names (``adhoc8_ap``, ``web2012_err20``), paths to score matrices in any
    format `fastrisk.read_matrix` reads (named by the path), or a mapping name -> ScoreMatrix;
    None: the study's four bundled collections of ``measure`` (AP, nDCG@20, ERR@20, P@10, RR).
    A file's measure is its own (the Parquet of ``fastrisk evaluate --matrix-out`` carries it)
    or ``measure``; every collection must hold the same measure."""
    if collections is None:
        key = canonical_measure("ap" if measure is None else measure)
        if key not in MEASURES:
            raise InputError(f"no bundled collections of {key}: pass `collections` (score-matrix files, "
                             f"e.g. written by fastrisk evaluate --matrix-out)")
        return key, {n: None for n in MEASURES[key]}
    if isinstance(collections, (str, Path)):
        collections = [collections]
    if isinstance(collections, Mapping):
        if not collections:
            raise InputError("`collections` is empty")
        labels = {canonical_measure(m.measure) for m in collections.values() if getattr(m, "measure", None)}
        if measure is None and len(labels) != 1:
            raise InputError("in-memory collections need `measure`" if not labels else
                             f"collections mix measures ({', '.join(sorted(labels))})")
        key = canonical_measure(measure) if measure is not None else labels.pop()
        if labels - {key}:
            raise InputError(f"collections hold {', '.join(sorted(labels))}, not {measure!r}")
        return key, {str(n): m for n, m in collections.items()}
    items, kinds = {}, {}
    for c in collections:
        if isinstance(c, (str, Path)) and not str(c).strip():
            continue
        name = str(c).strip()
        if _bundled(name):
            items[name], kinds[name] = None, canonical_measure(name.partition("_")[2])
        elif Path(name).exists():
            kinds[name], items[name] = read_collection(name, measure)
        else:
            raise InputError(f"collection {name!r}: no bundled file 'trec-matrices/{name}.csv' and no such "
                             f"file; a collection is a bundled matrix (adhoc5..8_ap/p10/rr, "
                             f"web2010..2013_ndcg20/err20) or a score-matrix file")
    if not items:
        raise InputError("`collections` is empty")
    names = ", ".join(items)
    if len(set(kinds.values())) > 1:
        raise InputError(f"collections {names} mix measures ({', '.join(sorted(set(kinds.values())))})")
    key = next(iter(kinds.values()))
    if measure is not None and canonical_measure(measure) != key:
        raise InputError(f"collections {names} hold {key}, not {measure!r}: give --measure {key} "
                         f"or other collections")
    return key, items


#: The 0.975 quantile of the standard normal (95 % bands).
Z95 = 1.959963984540054


def wilson(p, n, z: float = Z95):
    """Wilson score interval (low, high) of proportions ``p`` over ``n`` trials."""
    p, n = np.asarray(p, dtype=np.float64), np.maximum(np.asarray(n, dtype=np.float64), 1.0)
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return np.clip(mid - half, 0, 1), np.clip(mid + half, 0, 1)


#: The study's H1 pairs each baseline with its 10 nearest runs (``R/02-margins_transform.R``).
H1_NEIGHBOURS = 10


def runs_needed(mode: str, own: bool, risk_nulls, droppable: bool = True) -> tuple[int, str]:
    """(kept runs a collection needs, what needs them) for a study ``mode`` that simulates the
    study's own pairs (``own``) and the calibrated pairs of ``risk_nulls``. Type I pairs are
    any two distinct runs (the study's ``R/11-type_1.R``: 2); H1 pairs a baseline and its
    `H1_NEIGHBOURS` nearest runs in mean (``R/02-margins_transform.R``: 11), and so do the
    risk nulls' pairs, drawn as H1 pairs (`fastrisk.simulate.nulls`). ``droppable``: the risk
    tests were not asked for by name, so leaving them out (``risk_nulls=False``) would help and
    the message says so; else it names them."""
    if mode != "type1" and own:
        return H1_NEIGHBOURS + 1, f"its H1 pairs (a baseline and its {H1_NEIGHBOURS} nearest runs in mean)"
    if risk_nulls:
        names = ", ".join(getattr(n, "name", str(n)) for n in risk_nulls) if not isinstance(risk_nulls, bool) else "own"
        hint = "; risk_nulls=False leaves them out" if droppable else ""
        return H1_NEIGHBOURS + 1, (f"the risk tests' pairs under their own null ({names}: a baseline and its "
                                   f"{H1_NEIGHBOURS} nearest runs in mean{hint})")
    return 2, "its type I pairs (two distinct runs)"


def check_runs(fits, needed: int, why: str) -> None:
    """An `InputError` naming the first collection of ``fits`` that keeps fewer than ``needed``
    runs after the study's removal rule (duplicates, then the bottom 10 % by mean), how many it
    keeps and how many it needs (``why``: what needs them, from `runs_needed`): the protocol
    cannot be followed there, and nothing is simulated."""
    for f in fits:
        if f.n_runs < needed:
            dropped = len(f.removed["duplicates"]) + len(f.removed["bottom"])
            raise InputError(f"collection {f.name!r} has too few runs: it keeps {f.n_runs} of its "
                             f"{f.n_runs + dropped} ({len(f.removed['duplicates'])} duplicate(s) and "
                             f"{len(f.removed['bottom'])} of the bottom 10 % by mean dropped, as the study does); "
                             f"the study needs at least {needed} for {why}")


#: Fits in this process by token (the cache file, or "memory:NAME:HASH" for uncached ones).
_LOADED: dict = {}


@atexit.register
def _release() -> None:
    """Free the pyvinecopulib objects before the interpreter shuts nanobind down (else it
    reports them as leaked)."""
    _LOADED.clear()
    gc.collect()


def _token(fit) -> str:
    return str(fit.path) if fit.path is not None else f"memory:{fit.name}:{fit.hash}"


def _fits(tokens) -> tuple:
    out = []
    for tok in tokens:
        if tok not in _LOADED:
            fit = None if tok.startswith("memory:") else load_fit(tok)
            if fit is None:
                raise InputError(f"fitted models {tok} are not available in this worker: fit with a cache "
                                 f"directory (cache=...) to run on other processes")
            _LOADED[tok] = fit
        out.append(_LOADED[tok])
    return tuple(out)


def _seeds(study_seed: int) -> tuple[int, int, int]:
    """Independent seeds for trial choices, topic uniforms and resampling."""
    s = np.random.SeedSequence(int(study_seed)).generate_state(3, np.uint64) >> np.uint64(1)
    return int(s[0]), int(s[1]), int(s[2])


def _weights_and_sizes(fits, mode, delta, null=None):
    if null is not None:  # pairs under a risk test's own scale (fastrisk.simulate.nulls): as H1 pairs
        h1 = [f.null_pairs(null, 0.0 if mode == "type1" else delta)[0] for f in fits]
        return [len(h) for h in h1], [sorted(h.items()) for h in h1]
    if mode == "type1":
        return [f.n_runs for f in fits], None
    h1 = [f.h1_pairs(delta)[0] for f in fits]
    return [len(h) for h in h1], [sorted(h.items()) for h in h1]


def _plan(fits, mode, delta, study_seed, trials, null=None):
    """(collection, first/baseline position, second/experimental slot) of every trial
    (``null``: a `RiskNull` whose calibrated pairs are drawn, as the study draws H1 pairs)."""
    sizes, h1 = _weights_and_sizes(fits, mode, delta, null)
    if null is not None:
        mode = "h1"
    w = np.asarray(sizes, dtype=np.float64)
    if w.sum() == 0:
        if null is not None:
            raise InputError(f"no pair of runs could be calibrated to {null.name} = {0.0 if mode == 'type1' else delta:g} "
                             f"in any collection")
        raise InputError(f"no pair of runs reaches delta = {delta:g} in any collection")
    cum = np.cumsum(w / w.sum())
    cum[-1] = 1.0
    u = _k.trial_uniforms(_seeds(study_seed)[0], np.arange(trials, dtype=np.int64), 2)
    coll = np.minimum(np.searchsorted(cum, u[:, 0, 0], side="right"), len(w) - 1)
    n = np.asarray(sizes, dtype=np.int64)[coll]
    a = np.minimum((u[:, 0, 1] * n).astype(np.int64), n - 1)
    if mode == "type1":
        b = np.minimum((u[:, 1, 0] * (n - 1)).astype(np.int64), n - 2)
        b = b + (b >= a)
        return coll, a, b, h1
    return coll, a, u[:, 1, 0], h1


def _simulate(fit, mode, first, second, h1_entry, U):
    """(T, 2, n) scores (row 0: b, row 1: e) of one (collection, pair) from uniforms U."""
    T, _, n = U.shape
    u1 = np.ascontiguousarray(U[:, 0].reshape(-1))
    if mode == "type1":
        i, j = first, second
        e_margin = b_margin = fit.margins[first]
    else:
        i, (j, shapes) = first, h1_entry
        b_margin, e_margin = fit.margins[first], fit.margins[j].with_beta(*shapes)
    lo, hi = min(i, j), max(i, j)
    u2 = fit.copula(lo, hi).hinv1(np.column_stack([u1, U[:, 1].reshape(-1)]))
    u2 = np.clip(np.asarray(u2, dtype=np.float64), 1e-15, 1 - 1e-15)
    if mode != "type1" and i > j:  # copula fitted for (e, b): swap the columns
        u1, u2 = u2, u1
    if e_margin is b_margin:  # type I: one inverse-CDF call for both rows
        return b_margin.quantile(np.concatenate([u1, u2])).reshape(2, T, n).transpose(1, 0, 2).copy()
    out = np.empty((T, 2, n))
    out[:, 0] = b_margin.quantile(u1).reshape(T, n)
    out[:, 1] = e_margin.quantile(u2).reshape(T, n)
    return out


def _errors_job(matrix, *, fits, mode, collection, study_seed, trials, lo, step, topics, delta,
                replicates, trisk_alpha, min_diff, alphas, count=None, threads=None, nested=0, null=None,
                shared=0, tests=None) -> pa.Table:
    """One sweep job: trials lo .. lo + step - 1 (among the ``count`` of collection ``collection``).
    ``nested`` > 0: a trial's topics are the first ``topics`` of its ``nested``-topic draw, so
    sizes share their topics (topic-set-size planning); 0: the study's draw of ``topics``.
    ``null``: [family, alpha] of a `RiskNull`: the trials draw its calibrated pairs (target 0
    for ``mode="type1"``, ``delta`` otherwise) and only its tests are kept (`_group_tests`).
    ``shared`` > 0: the trials of ranks j // shared alike (j: the trial's rank among the
    collection's) share their resamples (`shared_block`). ``tests``: the group's tests kept
    (None: all of them); the others are not resampled."""
    fits, only = _fits(fits), tests
    rn = None if null is None else RiskNull(null[0], float(null[1]))
    trisk_alpha = _group_alphas(trisk_alpha, rn)
    coll, a, b, h1 = _plan(fits, mode, delta, study_seed, trials, rn)
    if rn is not None:
        mode = "h1"
    mine = np.flatnonzero(coll == collection)[lo:lo + step]
    fit = fits[collection]
    _, topic_seed, resample_seed = _seeds(study_seed)
    group = _group_tests(trisk_alpha, rn, tests=only)
    tests = battery_test_names(trisk_alpha, group)  # the opt-in ones of this group: the battery's own names
    keep = [k for k, t in enumerate(tests) if t in group]
    lv = np.asarray(alphas, dtype=np.float64)
    shape = (len(keep), 2, len(lv))
    hits, valid, wrong = np.zeros(shape, np.int64), np.zeros(shape, np.int64), np.zeros(shape, np.int64)
    if len(mine):
        U = _k.trial_uniforms(topic_seed, mine.astype(np.int64), max(topics, nested))
        U = np.ascontiguousarray(U[:, :, :topics]) if nested else U
        pairs = np.empty((len(mine), 2, topics))
        if mode == "type1":
            keys = a[mine] * 100_000 + b[mine]
        else:
            base = h1[collection]
            slot = [min(int(b[t] * len(base[a[t]][1])), len(base[a[t]][1]) - 1) for t in mine]
            keys = a[mine] * 100_000 + np.asarray(slot)
        for k in np.unique(keys):
            sel = np.flatnonzero(keys == k)
            t0 = mine[sel[0]]
            if mode == "type1":
                pairs[sel] = _simulate(fit, mode, int(a[t0]), int(b[t0]), None, U[sel])
            else:
                bl, partners = base[a[t0]]
                pairs[sel] = _simulate(fit, mode, int(bl), None, partners[slot[sel[0]]], U[sel])
        P = _trial_pvalues(pairs, keep, tests, lo, mine, collection, shared, replicates=replicates, rng=resample_seed,
                           min_diff=min_diff, trisk_alpha=trisk_alpha, threads=threads, protocol="urbano2019",
                           risk_tests=rn is None)  # (T, tests, [one-tailed 'greater' (e > b), two-sided])
        ok = ~np.isnan(P)
        rej = P[..., None] <= lv
        d = pairs[:, 1] - pairs[:, 0]
        # the wrong sign (type III): of the mean difference, or of the risk test's own statistic
        neg = np.round((d if rn is None else rn.value(d)).mean(axis=1), 6) < 0
        hits = rej.sum(axis=0)
        valid = np.broadcast_to(ok.sum(axis=0)[..., None], shape).copy()
        wrong = (rej & neg[:, None, None, None]).sum(axis=0)
    tests = [tests[k] for k in keep]
    T, L = len(tests), len(lv)
    return pa.table({
        "test": np.repeat(np.array(tests, dtype=object), 2 * L).astype(str),
        "tails": np.tile(np.repeat(np.array(TAILS), L), T),
        "alpha": np.tile(lv, 2 * T),
        "hits": hits.reshape(-1), "valid": valid.reshape(-1), "wrong": wrong.reshape(-1),
        "trials": np.full(T * 2 * L, len(mine), np.int64),
    })


#: Trials that share one block of resamples with ``shared_resamples=True``.
SHARED_BLOCK = 1000


def shared_block(collection: int, rank) -> np.ndarray:
    """The stream key of the resamples shared by the trials of rank ``rank`` among collection
    ``collection``'s (an int or array; ranks already divided by the block size): 2^32 collection
    + block, so a trial's draws depend on the seed, its collection and its rank only."""
    return np.int64(collection) * 2**32 + np.asarray(rank, dtype=np.int64)


def _trial_pvalues(pairs, keep, tests, lo, mine, collection, shared, **kw):
    """p-values (T, kept tests, [one-tailed 'greater' (e > b), two-sided]) of the battery on a
    job's trials; only the kept tests are resampled. Independent draws: trial t's streams
    (key t); ``shared``: one `battery` call per block of ``shared`` ranks, on its shared draws."""
    want = [tests[k] for k in keep]
    if not shared:
        res = battery(pairs, start=mine.astype(np.int64), tests=want, **kw)
        return res.pvalue[:, keep][:, :, [2, 0]]
    P = np.empty((len(pairs), len(keep), 2))
    block = (lo + np.arange(len(pairs))) // shared
    for g in np.unique(block):
        sel = np.flatnonzero(block == g)
        res = battery(pairs[sel], start=int(shared_block(collection, g)), tests=want, shared_resamples=True, **kw)
        P[sel] = res.pvalue[:, keep][:, :, [2, 0]]
    return P


def _nulls(trisk_alpha) -> list:
    """The risk nulls a study calibrates for a battery with TRisk at ``trisk_alpha``, in the
    battery's order: each test's own (`fastrisk._runtime.battery_tests.null_of`), URisk_a for
    every a > 0 (trisk@a, bootstrap_risk@a) and the smooth value function (trisk_smooth). At
    a = 0, URisk_0 = E[d] = 0 holds on the study's own pairs: trisk@0 and bootstrap_risk@0 run
    there, beside the t test."""
    nulls = (_null_of(t) for t in battery_test_names(trisk_alpha))
    return list(dict.fromkeys(n for n in nulls if n is not None))


def _null_of(test: str):
    """The `RiskNull` of a battery test run under its own null (the registry's ``null``), or
    None (the study's pairs)."""
    spec = _bt.null_of(test)
    return None if spec is None else RiskNull(*spec)


def _group_alphas(trisk_alpha, null) -> list:
    """The TRisk alphas of the battery a group of trials runs: the study's on its own pairs
    (``null`` None), a URisk null's own alpha on its calibrated pairs, none on the smooth null's."""
    if null is None:
        return trisk_alpha
    return [null.alpha] if null.family == "urisk" else []


def _group_tests(trisk_alpha, null, tests=None) -> set:
    """The tests a group of trials keeps: the study's pairs (``null`` None) keep the tests
    whose null they satisfy; calibrated pairs keep the tests of that null; only those among
    ``tests`` when given."""
    return {t for t in battery_test_names(trisk_alpha, tests) if _null_of(t) == null and (tests is None or t in tests)}


def _tests_iv(tests, trisk_alpha, risk_nulls: bool):
    """``tests`` checked: None (every test) or a tuple of names of the battery with TRisk at
    ``trisk_alpha``, each run by the study (a risk test under its own null only with
    ``risk_nulls``)."""
    if tests is None:
        return None
    if isinstance(tests, str):
        tests = (tests,)
    try:
        tests = tuple(dict.fromkeys(str(t) for t in tests))
    except TypeError:
        raise InputError(f"`tests` must be a sequence of battery test names, got {tests!r}") from None
    names = battery_test_names(trisk_alpha, True)
    if not tests:
        raise InputError(f"`tests` is empty: name tests of the battery ({', '.join(names)}), or None for all")
    for t in tests:
        if t not in names:
            raise InputError(f"`tests`: {t!r} is not a test of the battery ({', '.join(names)}; TRisk at other "
                             f"alphas with `trisk_alpha`)")
        if not risk_nulls and _null_of(t) is not None:
            raise InputError(f"`tests`: {t!r} runs under its own null, which `risk_nulls=False` leaves out")
    return tests


def hypothesis(test: str, study: str) -> str:
    """The hypothesis a test's rate is measured under: on the study's pairs "same margins" (type
    I: both runs through one margin, so E[d] = 0 and URisk_0 = 0) or "mean(e) = mean(b) + delta"
    (power, type III: e's margin transformed, as the study's H1); a risk test under its own
    null "URisk_1 = 0" (type I) or at its own effect "URisk_1 = delta" (power, type III)."""
    null = _null_of(test)
    if null is None:
        return "same margins" if study == "type1" else "mean(e) = mean(b) + delta"
    return f"{null.name} = {'0' if study == 'type1' else 'delta'}"


def _group_seed(study_seed: int, null) -> int:
    """The study seed of a group of trials: the study's own for its pairs (its numbers do not
    change), an independent one per risk null."""
    if null is None:
        return int(study_seed)
    seq = np.random.SeedSequence([int(study_seed), *null.key(0.0).encode()])
    return int(seq.generate_state(1, np.uint64)[0] >> np.uint64(1))


def _register():
    if "simulate_errors" not in KINDS:
        register_kind("simulate_errors", _errors_job, seed=None, threads=True)


_register()


@dataclass(frozen=True, repr=False)
class StudyResult(Result):
    """Error rates of one study: ``rate``, ``n`` (trials the rate is over), ``se``
    ``[delta, test, tails, level]`` (tails: one-tailed (e > b), two-sided; level: the
    significance levels ``significance``; ``alpha`` is kept for the risk tests' own alpha, as in
    ``trisk@5``); ``hypotheses``: per test, the hypothesis its rate was
    measured under (`hypothesis`; the long form's ``hypothesis`` column). ``fits``: where the
    fitted models came from (JSON); ``skipped``: per delta (and per risk null and target),
    the (baseline, experimental) pairs whose transformation or calibration failed."""

    _coords: ClassVar[dict] = {"delta": {"delta": "deltas"}, "test": {"test": "tests", "hypothesis": "hypotheses"},
                               "tails": {"tails": "tails"}, "level": {"significance": "significance"}}
    _constants: ClassVar[tuple] = ("study", "measure", "topics")

    study: str = param(doc="Which study: ``type1``, ``power`` or ``type3``.")
    measure: str
    topics: int = param(doc="Number of topics of each simulated trial.")
    protocol: str = param(doc="The published protocol followed (``urbano2019``).")
    trials: int = param(doc="Trials per delta.")
    replicates: int
    seed: int
    deltas: tuple = param(doc="Effect sizes simulated (the labels of the ``delta`` dim).")
    tests: tuple = param(doc="Names of the tests (the labels of the ``test`` dim).")
    tails: tuple = param(doc="Tails of each rate: one-tailed (e > b) and two-sided.")
    significance: tuple = param(doc="Significance levels (the labels of the ``level`` dim; the long table's "
                                    "``significance`` column).")
    hypotheses: tuple = param(doc="Per test, the hypothesis its rate was measured under.")
    fits: str = param(doc="Where the fitted models came from (JSON).")
    skipped: str = param(doc="Per delta, the (baseline, experimental) pairs whose transformation or calibration failed "
                             "(JSON).")
    rate: np.ndarray = array("delta", "test", "tails", "level", doc="Error rate (type I, power or type III) of each "
                                                                    "test.")
    n: np.ndarray = array("delta", "test", "tails", "level", doc="Trials the rate is over.")
    se: np.ndarray = array("delta", "test", "tails", "level", doc="Monte-Carlo standard error of ``rate``, ``sqrt(p (1 "
                                                                  "- p) / n)``.")

    def tables(self) -> dict:
        """The study's tables (pandas), named as its output files: type I one per cell
        (rows alpha); power and type III by alpha (one per delta, rows alpha) and by delta
        (one per alpha, rows delta). Columns t1 w1 s1 b1 p1 t2 w2 s2 b2 p2 (type III: the
        two-sided ones) -- measured under the study's hypotheses -- then the risk tests, each
        header naming the hypothesis its rates were measured under (``zrisk_1 [same margins]``,
        ``trisk1_1 [URisk_1 = 0]``, ``bootstrap_risk5_2 [URisk_5 = delta]``)."""
        import pandas as pd

        cols, idx, codes = [], [], _bt.codes()
        for tail in ((1, 2) if self.study != "type3" else (2,)):
            for k, test in enumerate(self.tests):
                if test in codes:
                    cols.append(f"{codes[test]}{tail}")
                    idx.append((k, tail))
        for tail in ((1, 2) if self.study != "type3" else (2,)):
            for k, test in enumerate(self.tests):
                if test not in codes:
                    cols.append(f"{test.replace('@', '')}_{tail} [{self.hypotheses[k]}]")
                    idx.append((k, tail))
        stem = {"type1": "type_1", "power": "type_2", "type3": "type_3"}[self.study]
        cell = f"{file_stem(self.measure)}_{self.topics}"
        alphas = np.asarray(self.significance)  # the study's own layout names its levels "alpha"

        def frame(rows, first, values):
            df = pd.DataFrame({first: rows})
            for c, (k, tail) in zip(cols, idx):
                df[c] = values(k, tail - 1)
            return df

        if self.study == "type1":
            return {f"{stem}/{stem}_{cell}": frame(alphas, "alpha", lambda k, t: self.rate[0, k, t])}
        out = {}
        for d, delta in enumerate(self.deltas):
            dl = _label(delta, 2)
            out[f"{stem}_by_alpha/delta{dl}/{stem}_by_alpha_{cell}_delta{dl}"] = frame(
                alphas, "alpha", lambda k, t, d=d: self.rate[d, k, t])
        for a, alpha in enumerate(alphas):
            al = _label(alpha, 3)
            out[f"{stem}_by_delta/alpha{al}/{stem}_by_delta_{cell}_alpha{al}"] = frame(
                np.asarray(self.deltas), "delta", lambda k, t, a=a: self.rate[:, k, t, a])
        return out

    def verdicts(self, significance: float = 0.05, tails: str = "two-sided") -> list[dict]:
        """Per test, its rate at level ``significance`` (one of `significance`) and ``tails``,
        with the 95 % Wilson band of that rate over its trials (``n``; with shared resamples,
        the effective trials rate (1 - rate) / se^2 of the between-job ``se``) at every delta,
        and, for type I, the verdict: "holds its level" when the band covers ``significance``,
        "liberal" when it lies above it, "conservative" when below, "no trials" when n = 0."""
        levels = np.asarray(self.significance)
        hit = np.flatnonzero(np.isclose(levels, float(significance), rtol=0, atol=1e-12))
        if not hit.size:
            raise InputError(f"significance {significance:g} is not a level of this study "
                             f"({', '.join(f'{v:g}' for v in levels)})")
        if tails not in self.tails:
            raise InputError(f"`tails` must be one of {', '.join(self.tails)}, got {tails!r}")
        a, tl = int(hit[0]), self.tails.index(tails)
        rows = []
        for k, test in enumerate(self.tests):
            rate, n, se = self.rate[:, k, tl, a], self.n[:, k, tl, a], self.se[:, k, tl, a]
            with np.errstate(invalid="ignore", divide="ignore"):
                eff = np.where((se > 0) & np.isfinite(se), rate * (1 - rate) / se**2, n)
            low, high = wilson(np.nan_to_num(rate), eff)
            row = {"test": test, "hypothesis": self.hypotheses[k], "deltas": self.deltas, "rate": rate, "n": n,
                   "low": np.where(n > 0, low, np.nan), "high": np.where(n > 0, high, np.nan)}
            if self.study == "type1":
                row["verdict"] = ("no trials" if n[0] == 0 or np.isnan(rate[0]) else "liberal" if low[0] > significance
                                  else "conservative" if high[0] < significance else "holds its level")
            rows.append(row)
        return rows

    def summary(self, significance: float = 0.05, tails: str = "two-sided") -> str:
        """One line per test (`verdicts`): type I, its rate at ``significance`` with its 95 %
        Wilson band and whether it holds its level, is liberal or conservative; power and type
        III, its rate with its band at each delta."""
        rows = self.verdicts(significance, tails)
        what = {"type1": "type I error rate", "power": "power", "type3": "type III error rate"}[self.study]
        width = max(len(r["test"]) for r in rows)
        lines = [f"{what} at significance {significance:g} ({tails}), 95 % Wilson band over the trials"
                 + (f"; a test holds its level when the band covers {significance:g}, is liberal when the band "
                    f"lies above it, conservative when below" if self.study == "type1" else "") + ":"]
        for r in rows:
            cells = []
            for d, rate, n, lo, hi in zip(r["deltas"], r["rate"], r["n"], r["low"], r["high"]):
                at = "" if self.study == "type1" else f"delta {d:g}: "
                cells.append(f"{at}n=0" if n == 0 else f"{at}{rate:.4f} [{lo:.4f}, {hi:.4f}] n={int(n)}")
            tail = f"  {r['verdict']}" if "verdict" in r else ""
            lines.append(f"  {r['test']:<{width}}  {'; '.join(cells)}{tail}  [{r['hypothesis']}]")
        return "\n".join(lines)

    @property
    def alphas(self) -> tuple:
        """Deprecated spelling of `significance` (``alpha`` names the risk tests' own alpha)."""
        import warnings

        warnings.warn("StudyResult.alphas is deprecated: use StudyResult.significance (the significance levels; "
                      "alpha is the risk tests' own alpha)", DeprecationWarning, stacklevel=2)
        return self.significance

    def write_tables(self, directory) -> list[Path]:
        """Write `tables` as CSV files under ``directory`` (the study's layout), each atomically
        (a failure leaves no partial file)."""
        paths = []
        for name, df in self.tables().items():
            p = Path(directory) / f"{name}.csv"
            p.parent.mkdir(parents=True, exist_ok=True)
            with atomic_open(p, "w", newline="") as fh:
                df.to_csv(fh, index=False, float_format="%.6g")
            paths.append(p)
        return paths


def _label(value: float, digits: int) -> str:
    """``value`` in a table's name: with ``digits`` decimals as the study's layout has them
    (``delta0.05``, ``alpha0.050``) when that is exact, else in full (``delta0.011``), so two
    values never share a name."""
    short = f"{value:.{digits}f}"
    return short if float(short) == float(value) else repr(float(value))  # the shortest exact digits


def _study_iv(topics, trials, replicates, deltas, protocol):
    if protocol not in PROTOCOLS:
        raise InputError(f"`protocol` must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    for name, v, low, high in (("topics", topics, 2, 10**6), ("trials", trials, 1, 10**12),
                               ("replicates", replicates, 0, 10**9)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not low <= v <= high:
            raise InputError(f"`{name}` must be an integer in [{low}, {high:g}], got {v!r}")
    d = np.asarray(deltas, dtype=np.float64).reshape(-1)
    if not np.isfinite(d).all() or d.size == 0:
        raise InputError(f"`delta` must be finite numbers, got {d.tolist()}")
    values, counts = np.unique(d, return_counts=True)
    if (counts > 1).any():  # a repeated delta would pool its trials twice (n doubled, SE too small)
        raise InputError(f"`delta` lists {', '.join(f'{v:g}' for v in values[counts > 1])} more than once: "
                         "give each effect size once")
    return d


def _run(modes, measure, topics, deltas, sampling: Sampling, selection: TestSelection, execution: Execution, *,
         collections=None, nested=0, fitted=None):
    """The studies ``modes`` (their first mode's trials: power and type III share them) at
    ``topics`` topics and effect sizes ``deltas``, with the options objects.
    ``selection.tests``: the battery tests to run (None: all); a group of trials (the study's own
    pairs, or one risk null's calibrated pairs) runs only if one of its tests is asked for, and
    only those tests are resampled, so its risk null alone is calibrated. A kept test's numbers
    are the same as without ``tests`` (same group seed, same trial streams)."""
    trials, replicates, rng, shared_resamples = (sampling.trials, sampling.replicates, sampling.rng,
                                                 sampling.shared_resamples)
    tests, trisk_alpha, min_diff, risk_nulls, alphas, protocol = (
        selection.tests, selection.trisk_alpha, selection.min_diff, selection.risk_nulls, selection.significance,
        selection.protocol)
    executor, chunk, progress, cache, out, resume, ties_seed = (
        execution.executor, execution.chunk, execution.progress, execution.cache, execution.out, execution.resume,
        execution.ties_seed)
    deltas = _study_iv(topics, trials, replicates, deltas, protocol)
    if risk_nulls not in (True, False):
        raise InputError(f"`risk_nulls` must be True or False, got {risk_nulls!r}")
    tests = _tests_iv(tests, trisk_alpha, risk_nulls)
    shared = shared_size(shared_resamples, chunk)
    mode = modes[0]
    key, items = load_collections(measure, collections)
    names = tuple(items)
    if fitted is None:
        _stage(progress, f"{mode}: fit: the models of {len(names)} collection(s) of {key} (cached ones are read)")
    fits = fitted or fit_collections(items, key, executor=executor, cache=cache, ties_seed=ties_seed, progress=progress)
    rseed = resolve_seed(rng)
    study_seed = rseed.kernel
    fit_list = [fits[n] for n in names]
    tokens = [_token(f) for f in fit_list]
    _LOADED.update(zip(tokens, fit_list))
    data = {n: (f"trec:{n}" if m is None else m) for n, m in items.items()}
    skipped = {}
    experiments = []
    uncalibrated: dict = {}  # risk null -> the targets no pair of runs could be calibrated to
    risk_nulls = [n for n in (_nulls(trisk_alpha) if risk_nulls else []) if _group_tests(trisk_alpha, n, tests)]
    own = bool(_group_tests(trisk_alpha, None, tests))  # the study's own pairs: only for one of their tests
    check_runs(fit_list, *runs_needed(mode, own, risk_nulls, droppable=tests is None))
    if mode != "type1" and own:
        prepare_h1(fit_list, deltas, executor=executor)  # in parallel, before the parent needs them
    # each risk test under its own null (or at its own effect): calibrated pairs (issue #28)
    if risk_nulls:
        _stage(progress, f"{mode}: calibrate: {len(risk_nulls)} risk null(s) ({', '.join(n.name for n in risk_nulls)}) "
                         f"x {len(fit_list)} collection(s) x {1 if mode == 'type1' else len(deltas)} target(s) "
                         "(cached calibrations are read)")
    prepare_nulls(fit_list, risk_nulls, [0.0] if mode == "type1" else deltas, executor=executor)
    for null in [None, *risk_nulls] if own else risk_nulls:
        seed = _group_seed(study_seed, null)
        for delta in deltas:
            if null is not None:
                target = 0.0 if mode == "type1" else float(delta)
                skipped[f"{null.name} = {target:g}"] = sum(f.null_pairs(null, target)[1] for f in fit_list)
                if not any(f.null_pairs(null, target)[0] for f in fit_list):
                    uncalibrated.setdefault(null, []).append(target)
                    continue  # no pair reaches this target: its tests' rates are NaN (n = 0), not an error
            elif mode != "type1":
                skipped[f"{delta:g}"] = sum(f.h1_pairs(delta)[1] for f in fit_list)
            coll = _plan(fit_list, mode, delta, seed, trials, null)[0]
            counts = np.bincount(coll, minlength=len(names))
            extra = {} if null is None else {"null": [null.family, null.alpha]}
            tag = "" if null is None else f"-{null.key(0.0)}"
            for g, name in enumerate(names):
                if counts[g]:
                    # an in-memory collection is labelled by its name (else by id(): no resume in another process)
                    source = data[name] if isinstance(data[name], str) else {name: data[name]}
                    experiments.append(Experiment(
                        "simulate_errors", source, name=f"{mode}-{name}-{delta:g}{tag}",
                        params={"fits": tokens,
                                "mode": "type1" if mode == "type1" else "h1", "collection": g, "study_seed": seed,
                                "trials": int(trials), "step": int(chunk), "count": int(counts[g]),
                                "topics": int(topics),
                                "replicates": int(replicates), "delta": float(delta),
                                "trisk_alpha": [float(v) for v in np.atleast_1d(trisk_alpha)],
                                "min_diff": float(min_diff), "alphas": [float(v) for v in alphas], **extra,
                                **({"nested": int(nested)} if nested else {}),
                                **({"shared": shared} if shared else {}),
                                **({"tests": list(tests)} if tests is not None else {})},
                        grid={"lo": list(range(0, int(counts[g]), int(chunk)))}))
    if not experiments:  # every test asked for runs on a risk null no pair could be calibrated to
        raise InputError(_uncalibrated_message(uncalibrated, trisk_alpha, tests, fit_list, skipped))
    for f in fit_list:
        if f._dirty:
            cache_fit(f)  # the transformations, for the workers
    grid = Grid(experiments, rng=0)
    table = _finished(out, grid) if resume else None
    if table is None:
        trials_of = ("trial", lambda job: min(job.params["step"], job.params["count"] - job.params["lo"]))
        _stage(progress, f"{mode}: simulate: {len(experiments)} group(s) of trials (collection, effect size, null) "
                         f"of {int(trials)} trials each")
        res = sweep(grid, executor=executor, progress=progress, out=out, resume=resume, progress_unit=trials_of)
        if not res.complete:
            raise InputError(f"{res.n_missing} of {res.n_jobs} simulation job(s) were lost with their workers "
                             "(a worker died or its data was lost after every retry); run again"
                             + (" with resume=True to keep the finished ones" if out is not None else ""))
        table = res.table
    failed = table.filter(pc.equal(table.column("status"), "error"))
    if failed.num_rows:
        raise InputError(f"{failed.num_rows} simulation job(s) failed: {failed.column('error')[0]}")
    meta = json.dumps({f.name: {"source": f.source, "runs": f.n_runs, "removed": f.removed, "ties_seed": f.ties_seed}
                       for f in fit_list})
    return {m: _summarise(m, key, topics, trials, replicates, rseed.recorded, deltas, trisk_alpha, alphas, table,
                          meta, json.dumps(skipped), risk_nulls, clustered=bool(shared), only=tests) for m in modes}


def _uncalibrated_message(uncalibrated, trisk_alpha, tests, fits, skipped) -> str:
    """Why a study asked only for risk tests has nothing to simulate: the tests, their null, the
    targets and how many pairs failed calibration."""
    parts = []
    for null, targets in uncalibrated.items():
        names = sorted(_group_tests(trisk_alpha, null, tests))
        failed = sum(skipped.get(f"{null.name} = {t:g}", 0) for t in targets)
        at = ", ".join(f"{null.name} = {t:g}" for t in targets)
        parts.append(f"{', '.join(names)}: no pair of runs of {', '.join(f.name for f in fits)} could be "
                     f"calibrated to its own null {at} ({failed} pair(s) tried failed: the experimental run's "
                     f"margin cannot be transformed that far)")
    return ("nothing to simulate: " + "; ".join(parts) + ". Pick another test or risk alpha (e.g. `trisk_alpha` "
            "1 or 5), or other collections")


def _stage(progress, text: str) -> None:
    """A stage line (fit, calibrate, simulate) on standard error when progress is shown
    (``progress`` True, or None on a terminal; `fastrisk._runtime.progress`)."""
    if progress or (progress is None and stderr_is_terminal()):
        print(text, file=sys.stderr, flush=True)


def shared_size(shared_resamples, chunk) -> int:
    """Trials per block of shared resamples: 0 (off) for False, `SHARED_BLOCK` for True, or the
    positive integer given; a job holds whole blocks, so ``chunk`` must be a multiple of it."""
    if shared_resamples is False or shared_resamples is None:
        return 0
    size = SHARED_BLOCK if shared_resamples is True else shared_resamples
    if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 1:
        raise InputError(f"`shared_resamples` must be True, False or a positive number of trials, got {shared_resamples!r}")
    if isinstance(chunk, numbers.Integral) and chunk % size:
        raise InputError(f"with `shared_resamples` = {int(size)} trials a block, `chunk` (trials a job) must be a "
                         f"multiple of {int(size)}, got {chunk!r}")
    return int(size)


def _finished(out, grid):
    """The table of a finished sweep at ``out`` if it holds exactly ``grid``'s jobs (a resume
    of a cell that completed), else None."""
    if out is None or not Path(out).exists() or Path(str(out) + ".parts").exists():
        return None
    import pyarrow.parquet as pq

    table = pq.read_table(out)
    want = {j.job: j.params_json for j in grid.jobs(0)}
    got = dict(zip(table.column("job").to_pylist(), table.column("params").to_pylist()))
    return table if got == want else None


def _summarise(mode, measure, topics, trials, replicates, seed, deltas, trisk_alpha, alphas, table, fits_meta,
               skipped, risk_nulls=(), clustered=False, only=None) -> StudyResult:
    tests = tuple(t for t in battery_test_names(trisk_alpha, only) if (_null_of(t) is None or _null_of(t) in risk_nulls)
                  and (only is None or t in only))
    cols = ["param_delta", "test", "tails", "alpha", "hits", "valid", "wrong", "trials"]
    df = table.select(cols + (["param_collection"] if clustered else [])).to_pandas()
    g = df.groupby(["param_delta", "test", "tails", "alpha"])[["hits", "valid", "wrong", "trials"]].sum()
    shape = (len(deltas), len(tests), 2, len(alphas))
    idx = [(float(d), t, tl, float(a)) for d in deltas for t in tests for tl in TAILS for a in alphas]
    g = g.reindex(idx, fill_value=0)
    if mode == "type3":
        num, den = g["wrong"].to_numpy(), g["trials"].to_numpy()
    else:
        num, den = g["hits"].to_numpy(), g["valid"].to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(den > 0, num / np.maximum(den, 1), np.nan).reshape(shape)
    n = den.reshape(shape)
    if mode == "type3":
        rate[:, :, 0] = np.nan  # type III is a two-sided notion
    se = np.sqrt(rate * (1 - rate) / np.maximum(n, 1))
    if clustered:  # shared resamples: trials of a job are correlated, jobs are not
        se = _between_job_se(df, idx, mode).reshape(shape)
        if mode == "type3":
            se[:, :, 0] = np.nan
    return StudyResult(study=mode, measure=measure, topics=int(topics), protocol="urbano2019", trials=int(trials),
                       replicates=int(replicates), seed=int(seed), deltas=tuple(float(d) for d in deltas),
                       tests=tests, tails=TAILS, significance=tuple(float(a) for a in alphas),
                       hypotheses=tuple(hypothesis(t, mode) for t in tests), fits=fits_meta,
                       skipped=skipped, rate=rate, n=n, se=se)


def _between_job_se(df, idx, mode) -> np.ndarray:
    """Standard errors of the ratio rates r = sum(h_j) / sum(v_j) over the jobs j of each cell of
    ``idx`` (h: hits or wrong, v: valid or trials), the jobs being independent clusters (the
    trials of a job share resamples): the linearised variance of a ratio estimator over
    clusters (Cochran 1977, sec. 6.4, stratified as in sec. 6.11) with e_j = h_j - r v_j,
    SE^2 = sum_g J_g / (J_g - 1) sum_{j in g} (e_j - mean_g e)^2 / (sum_j v_j)^2, strata g the
    collections (``param_collection``: their rates differ, the number of a collection's trials
    is nearly fixed). If a stratum has a single job, one stratum of all jobs (larger: it counts
    the collections' differences as noise). NaN with fewer than two jobs."""
    num, den = ("wrong", "trials") if mode == "type3" else ("hits", "valid")
    keys = ["param_delta", "test", "tails", "alpha"]
    with np.errstate(invalid="ignore", divide="ignore"):
        tot = df.groupby(keys)[[num, den]].transform("sum")
        e = (df[num] - tot[num] / tot[den] * df[den]).astype(np.float64)
    frame = df[keys].assign(e=e, e2=e * e, one=1.0, g=df["param_collection"] if "param_collection" in df else 0)

    def ss(f):  # sum of J / (J - 1) sum (e - mean e)^2 over the strata of a cell, and the smallest J
        n = f["one"]
        with np.errstate(invalid="ignore", divide="ignore"):
            return n / (n - 1) * (f["e2"] - f["e"] ** 2 / n), n
    strat, n = ss(frame.groupby([*keys, "g"])[["e", "e2", "one"]].sum())
    strat = strat.groupby(level=keys).sum().reindex(idx)
    small = n.groupby(level=keys).min().reindex(idx)
    pooled, J = ss(frame.groupby(keys)[["e", "e2", "one"]].sum().reindex(idx))
    var = np.where(small.to_numpy() >= 2, strat.to_numpy(), pooled.to_numpy())
    v = df.groupby(keys)[den].sum().reindex(idx).to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.sqrt(np.maximum(var, 0.0)) / v
    return np.where((J.to_numpy() >= 2) & (v > 0), se, np.nan)


def _doc(fn):
    fn.__doc__ += """

    Parameters
    ----------
    measure : str, optional
        AP, nDCG@20, ERR@20, P@10 or RR (or ap, ndcg20, err20, p10, rr; default AP): the
        study's four bundled collections of that measure, unless ``collections`` gives bundled
        matrix names or score-matrix files (any format `fastrisk.read_matrix` reads; the Parquet
        of ``fastrisk evaluate --matrix-out`` names its measure, otherwise ``measure`` does: any
        measure on [0, 1], margins by its support, see `fastrisk.simulate.measures`).
    delta : sequence of float
        The effect sizes (`power`, `type3`; `type1` simulates delta = 0).
    topics : int
        Topics of every simulated collection.
    trials : int
        Simulated pairs of runs per effect size.
    replicates : int
        Replicates of the bootstrap and permutation tests (see `battery`).
    rng : int, SeedSequence or Generator, optional
        The study's seed: trial t draws from streams keyed by (seed, t), whatever the chunking,
        the executor and the thread count.
    trisk_alpha : sequence of float
        The alphas of the battery's TRisk tests.
    min_diff : float
        The sign test's tie threshold.
    significance : sequence of float
        The significance levels at which rates are counted (the ``level`` dim; ``alphas`` is its
        deprecated spelling: ``alpha`` is the risk tests' own alpha, as in ``trisk_alpha``).
    collections : sequence of str or path-like, optional
        Bundled matrix names or score-matrix files to simulate from instead of the study's four.
    executor : optional
        As `fastrisk.sweep.sweep` (None: in-process; a process pool; a Dask client); it also
        fits the models a study misses.
    chunk : int
        Trials per sweep job.
    progress : bool, optional
        A progress bar on standard error (default: on a terminal).
    cache : str or path-like, optional
        The directory of the fitted models (default ``$FASTRISK_CACHE/simulate`` or
        ``~/.cache/fastrisk/simulate``).
    protocol : {"urbano2019"}
        The published protocol (the only one).
    out : str or path-like, optional
        A Parquet file the sweep is checkpointed to.
    resume : bool
        Resume the sweep checkpointed at ``out``.
    ties_seed : int
        Which draw of the copulas' random tie-breaking the fits use
        (`fastrisk.simulate.fits.ties_base_seed`; the paper's own draw cannot be repeated;
        other draws show how much a result depends on it).
    risk_nulls : bool
        Score TRisk and the bootstrap test of URisk at each alpha > 0 of ``trisk_alpha`` and
        TRisk with the smooth value function on pairs calibrated to their own null
        (`fastrisk.simulate.nulls`; calibrated once per collection, null and target, then
        cached with the fits); False leaves those tests out (no calibration).
    shared_resamples : bool or int
        Common random numbers: each block of `SHARED_BLOCK` (or this many) trials of a collection
        shares one set of bootstrap resamples and sign flips (`fastrisk.simulate.battery`'s
        ``shared_resamples``), whose sums are matrix products: every rate stays unbiased, the
        numbers are reproducible (their own, not those of independent draws), and ``se`` is the
        between-job standard error (`_between_job_se`). ``chunk`` must be a multiple of the block.
    tests : sequence of str, optional
        Only these tests of the battery (`fastrisk.simulate.battery.battery_test_names`; None:
        all): the study's own pairs are simulated only for one of their tests, a risk null's
        pairs (calibrated only then) only for one of its; a test's rates are the same as in the
        whole study with the same seed.
    sampling : Sampling, optional
        ``trials``, ``replicates``, ``rng`` and ``shared_resamples`` as one object
        (`fastrisk.simulate.options`; not both it and those keywords).
    selection : TestSelection, optional
        ``tests``, ``trisk_alpha``, ``min_diff``, ``risk_nulls``, ``significance`` and ``protocol`` as one
        object.
    execution : Execution, optional
        ``executor``, ``chunk``, ``progress``, ``cache``, ``out``, ``resume`` and ``ties_seed`` as
        one object.
    alphas : sequence of float, optional
        Deprecated spelling of ``significance`` (a `DeprecationWarning`).

    Returns
    -------
    StudyResult
        Rates ``[delta, test, tails, level]`` with their counts and standard errors
        (``to_arrow()``, ``tables()``).
    """
    return fn


@_doc
def type1(measure=None, *, topics: int = 50, trials: int = 10000, replicates: int = 1000, rng: SeedLike = None,
          trisk_alpha=(1.0, 5.0), min_diff: float = 0.01, significance=ALPHAS, collections=None, executor=None,
          chunk: int = CHUNK, progress: bool | None = None, cache=None, protocol: str = "urbano2019", out=None,
          resume: bool = False, ties_seed: int = 0, risk_nulls: bool = True,
          shared_resamples: bool | int = False, tests=None, sampling: Sampling | None = None,
          selection: TestSelection | None = None, execution: Execution | None = None, alphas=None) -> StudyResult:
    """Type I error rates of the battery under H0 (Urbano, Lima & Hanjalic 2019, sec. 3-4); the
    risk tests under their own null."""
    options = from_keywords(type1, renamed(type1, locals(), alphas="significance"))
    return _run(("type1",), measure, topics, [0.0], *options, collections=collections)["type1"]


@_doc
def power(measure=None, *, delta=DELTAS, topics: int = 50, trials: int = 10000, replicates: int = 1000,
          rng: SeedLike = None, trisk_alpha=(1.0, 5.0), min_diff: float = 0.01, significance=ALPHAS, collections=None,
          executor=None, chunk: int = CHUNK, progress: bool | None = None, cache=None, protocol: str = "urbano2019",
          out=None, resume: bool = False, ties_seed: int = 0, risk_nulls: bool = True,
          shared_resamples: bool | int = False, tests=None, sampling: Sampling | None = None,
          selection: TestSelection | None = None, execution: Execution | None = None, alphas=None) -> StudyResult:
    """Power (1 - type II error rate) at effect sizes ``delta``: the share of trials in which a
    test rejects H0 (two-sided: in either direction, as the study's ``R/12-type_2.R``); for the
    risk tests, on pairs whose own statistic is ``delta`` (URisk_alpha = delta, E[s(d)] = delta)."""
    options = from_keywords(power, renamed(power, locals(), alphas="significance"))
    return _run(("power",), measure, topics, delta, *options, collections=collections)["power"]


@_doc
def type3(measure=None, *, delta=DELTAS, topics: int = 50, trials: int = 10000, replicates: int = 1000,
          rng: SeedLike = None, trisk_alpha=(1.0, 5.0), min_diff: float = 0.01, significance=ALPHAS, collections=None,
          executor=None, chunk: int = CHUNK, progress: bool | None = None, cache=None, protocol: str = "urbano2019",
          out=None, resume: bool = False, ties_seed: int = 0, risk_nulls: bool = True,
          shared_resamples: bool | int = False, tests=None, sampling: Sampling | None = None,
          selection: TestSelection | None = None, execution: Execution | None = None, alphas=None) -> StudyResult:
    """Type III error rates: the share of trials under H1 (effect ``delta``) in which a
    two-sided test rejects while the observed mean difference (a risk test: its own observed
    statistic) has the wrong sign. The same simulations as `power` for the same seed."""
    options = from_keywords(type3, renamed(type3, locals(), alphas="significance"))
    return _run(("type3",), measure, topics, delta, *options, collections=collections)["type3"]
