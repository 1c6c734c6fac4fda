"""The whole grid of Urbano, Lima & Hanjalic (SIGIR 2019): type I for every measure and
topic-set size; power and type III (one run serves both, as the study's ``R/13-type_3.R``
reads ``R/12-type_2.R``'s output) by alpha and by delta. Writes one CSV per cell in the
study's layout and file names (``type_1/type_1_ap_50.csv``, ``type_2_by_alpha/delta0.05/
type_2_by_alpha_ap_50_delta0.05.csv``, ``type_2_by_delta/alpha0.050/...``, ``type_3_...``)
and the long tables (``type_1.parquet``, ``type_2.parquet``, ``type_3.parquet``). Each
cell is a sweep checkpointed under ``DIR/checkpoints``: ``resume=True`` computes only
what is missing. A cell's seed is derived from the grid seed, the measure and the size
(`cell_seed`), so the tables do not depend on the executor, the chunking or which cells ran
before; hence ``grid --seed 1`` and ``type1 --seed 1`` differ, and each cell's line on
standard error gives its seed: ``type1``/``power``/``type3`` with that ``--seed`` (the same
measure, topics, trials and replicates) reproduce the cell.
"""

from __future__ import annotations

import hashlib
import sys
import time
from dataclasses import replace
from pathlib import Path

import numba
import numpy as np
import pyarrow as pa

from fastrisk._runtime import battery_tests as _bt
from fastrisk._runtime.atomic import write_parquet
from fastrisk._runtime.rng import resolve_seed
from fastrisk.errors import InputError
from fastrisk.simulate import studies as _s
from fastrisk.simulate.battery import battery, battery_test_names
from fastrisk.simulate.measures import canonical_measure, file_stem
from fastrisk.simulate.options import Execution, Sampling, TestSelection, from_keywords
from fastrisk.viz.figures import plot_studies

STUDIES = ("type1", "power", "type3")
PLOT_FORMATS = ("svg", "png", "pdf")
#: The paper's size (Urbano, Lima & Hanjalic 2019, ``R/common.R``): simulated trials per cell of
#: type I, per cell and effect size of power and type III (``.N1``, ``.N2``), and replicates of
#: the bootstrap and permutation tests (``.B``).
PAPER_TRIALS = {"type1": 1_667_000, "h1": 167_000}
PAPER_REPLICATES = 10**6
#: The paper's own battery (Urbano, Lima & Hanjalic 2019, ``R/ir_tests.R``): t, Wilcoxon, sign,
#: bootstrap, permutation (the registry's ``paper`` records). ZRisk, GeoRisk, TRisk and the risk
#: nulls are fastrisk's additions.
PAPER_TESTS = _bt.paper_tests()


def cell_seed(seed: int, measure: str, topics: int) -> int:
    """The study seed of the grid's cell (``measure``, ``topics``) under grid seed ``seed``:
    ``SeedSequence([seed, index of measure in MEASURES, topics])``, 63 bits (a measure outside
    the study's five: its index is 5 + 48 bits of its name's SHA-256)."""
    if measure in _s.MEASURES:
        key = list(_s.MEASURES).index(measure)
    else:
        key = len(_s.MEASURES) + int(hashlib.sha256(measure.encode()).hexdigest()[:12], 16)
    return int(np.random.SeedSequence([int(seed), key, int(topics)]).generate_state(1, np.uint64)[0] >> np.uint64(1))


def run_grid(studies, directory, *, measures=None, collections=None, topics=_s.TOPICS, delta=_s.DELTAS,
             trials: int | None = None, replicates: int | None = None, rng=None, trisk_alpha=(1.0, 5.0),
             min_diff: float = 0.01, executor=None, progress=None, cache=None, resume: bool = False, plot=None,
             chunk: int = _s.CHUNK, ties_seed: int = 0, plot_format: str = "svg", h1_trials: int | None = None,
             paper_size: bool = False, shared_resamples=False, workers: int | None = None,
             risk_nulls: bool = True, tests=None, sampling: Sampling | None = None,
             selection: TestSelection | None = None, execution: Execution | None = None) -> dict:
    """Run ``studies`` (type1, power, type3) over ``measures`` x ``topics``; write the tables
    under ``directory``; returns {study: [StudyResult, ...]}. ``plot``: a directory for one
    figure per study, as ``plot_format`` (svg, png or pdf). ``collections``: bundled names or
    score-matrix files (`fastrisk.simulate.studies.load_collections`) instead of the study's
    collections, one measure (``measures``: at most one, for files that do not name theirs).

    ``trials``: per type I cell (default 10,000); ``h1_trials``: per cell and effect size of
    power and type III (default ``trials``); ``replicates`` (default 1,000). ``paper_size``: the
    paper's `PAPER_TRIALS` and `PAPER_REPLICATES` for those not given. ``shared_resamples``: see
    `fastrisk.simulate.studies.type1`, as ``risk_nulls`` and ``tests`` (only these tests of the battery,
    e.g. `PAPER_TESTS`: the paper's own battery, whose trials need no ZRisk/GeoRisk flips and no risk
    nulls). Before it starts, the grid's cost is estimated (`estimate_grid`, on ``workers`` cores, for
    the tests that will run) and printed to standard error.

    ``sampling``, ``selection``, ``execution``: those options as objects
    (`fastrisk.simulate.options`; ``sampling.trials`` is ``trials``, ``execution.resume`` the
    grid's ``resume``), as `fastrisk.simulate.type1` takes them."""
    sampling, selection, execution = from_keywords(run_grid, locals())
    trials, h1_trials, replicates = paper_counts(paper_size, sampling.trials, h1_trials, sampling.replicates)
    trisk_alpha, risk_nulls, resume = selection.trisk_alpha, selection.risk_nulls, execution.resume
    tests = _s._tests_iv(selection.tests, trisk_alpha, risk_nulls)
    if plot_format not in PLOT_FORMATS:
        raise InputError(f"`plot_format` must be one of {', '.join(PLOT_FORMATS)}, got {plot_format!r}")
    studies = tuple(studies)
    bad = [s for s in studies if s not in STUDIES]
    if bad or not studies:
        raise InputError(f"grid studies must be among {', '.join(STUDIES)}, got {', '.join(studies) or 'none'}")
    if collections is not None:
        if measures is not None and len(measures) > 1:
            raise InputError(f"with `collections`, give at most one measure, got {', '.join(map(str, measures))}")
        key, items = _s.load_collections(measures[0] if measures else None, collections)
        cells = [(key, items)]
    else:
        cells = [(canonical_measure(m), None) for m in (measures or _s.MEASURES)]
    root = resolve_seed(sampling.rng).kernel
    out = Path(directory)
    ck = out / "checkpoints"
    ck.mkdir(parents=True, exist_ok=True)
    results: dict = {s: [] for s in studies}
    shared = _s.shared_size(sampling.shared_resamples, execution.chunk)
    selection = replace(selection, tests=tests)

    def cell(seed, n_trials):  # a cell's sampling: its own seed and trials
        return replace(sampling, trials=n_trials, replicates=replicates, rng=seed, shared_resamples=shared or False)

    def run_at(f):  # a cell's sweep: checkpointed at f
        return replace(execution, out=f, resume=resume and _has(f))
    h1 = tuple(s for s in ("power", "type3") if s in studies)
    est = estimate_grid(studies, len(cells), topics, len(delta), trials, h1_trials, replicates, trisk_alpha,
                        shared, workers, risk_nulls, tests)
    which = "the paper's battery" if tests is not None and set(tests) == set(PAPER_TESTS) else (
        f"tests {','.join(tests)}" if tests is not None else "the whole battery")
    nulls = " with the risk tests' own nulls" if est["groups"] > 1 else ""
    print(f"grid: {est['trials']:,} trials ({est['battery_calls']:,} battery calls{nulls}; {which}) "
          f"at {replicates:,} replicates{', shared resamples' if shared else ''}: about "
          f"{_duration(est['cpu_seconds'])} of one core's work, {_duration(est['wall_seconds'])} on "
          f"{est['workers']} core(s) (measured: {est['probe']}); checkpoints under {ck}"
          + (" (resumed)" if resume else ""), file=sys.stderr)
    for m, items in cells:
        stem = file_stem(m)
        for n in topics:
            seed = cell_seed(root, m, n)
            if "type1" in studies:
                f = ck / f"type1_{stem}_{n}.parquet"
                r = _s._run(("type1",), m, n, deltas=[0.0], sampling=cell(seed, trials), selection=selection,
                            execution=run_at(f), collections=items)["type1"]
                results["type1"].append(r)
                r.write_tables(out)
            if h1:
                f = ck / f"h1_{stem}_{n}.parquet"
                rs = _s._run(h1, m, n, deltas=list(delta), sampling=cell(seed, h1_trials), selection=selection,
                             execution=run_at(f), collections=items)
                for s in h1:
                    results[s].append(rs[s])
                    rs[s].write_tables(out)
            print(f"grid: {m} n={n} done (cell seed {seed}: type1/power/type3 --seed {seed} reproduce it)",
                  file=sys.stderr)
    stems = {"type1": "type_1", "power": "type_2", "type3": "type_3"}
    for s, rs in results.items():
        write_parquet(pa.concat_tables([r.to_arrow() for r in rs]), out / f"{stems[s]}.parquet")
    if plot:
        for s, rs in results.items():
            plot_studies(rs, Path(plot) / f"{stems[s]}.{plot_format}")
    return results


def _has(path: Path) -> bool:
    return path.exists() or path.with_name(path.name + ".parts").exists()


def paper_counts(paper_size, trials, h1_trials, replicates) -> tuple[int, int, int]:
    """(type I trials, power/type III trials per delta, replicates): those given, else the
    paper's (``paper_size``) or 10,000 / ``trials`` / 1,000."""
    if paper_size not in (True, False):
        raise InputError(f"`paper_size` must be True or False, got {paper_size!r}")
    t1 = trials if trials is not None else (PAPER_TRIALS["type1"] if paper_size else 10000)
    h1 = h1_trials if h1_trials is not None else (PAPER_TRIALS["h1"] if paper_size else t1)
    b = replicates if replicates is not None else (PAPER_REPLICATES if paper_size else 1000)
    return t1, h1, b


#: One core's seconds to draw one trial's scores (copula h-inverse and margins, per battery call;
#: not probed: it needs the fits): measured on the study's AP collections at 50 topics, 0.95 ms
#: of CPU per trial of four battery calls (docs/simulation.md, "The study at its own size").
SIMULATE_SECONDS = 0.24e-3
#: Replicates of the cost probe (`trial_cost`): the cost of a trial is linear in B past a few
#: thousand, so the probe is short and scaled.
PROBE_REPLICATES = 4096


def trial_tests(trisk_alpha=(1.0, 5.0), risk_nulls: bool = True, tests=None) -> dict:
    """The battery's tests a study keeps, by group of trials: ``"main"`` (the study's pairs: t,
    Wilcoxon, sign, bootstrap, permutation, ZRisk, GeoRisk), ``"urisk@A"`` per alpha > 0 (TRisk
    and the bootstrap test of URisk_A on pairs of its own null) and ``"smooth"`` (smooth TRisk);
    with ``tests``, only those tests, and only the groups that keep one of them (the groups a
    study runs)."""
    groups: dict = {"main": []}
    for t in battery_test_names(trisk_alpha, tests):  # each test in the group of its null (the registry's)
        null = _s._null_of(t)
        if null is None or risk_nulls:
            groups.setdefault(_group_name(null), []).append(t)
    if tests is not None:
        groups = {g: [t for t in ts if t in tests] for g, ts in groups.items()}
        groups = {g: ts for g, ts in groups.items() if ts}
    return groups


def _group_name(null) -> str:
    """A group of trials by its null: "main" (the study's pairs), "urisk@A" or the null's family."""
    if null is None:
        return "main"
    return f"urisk@{null.alpha:g}" if null.family == "urisk" else null.family


def trial_cost(topics: int, replicates: int, *, shared: int = 0, trisk_alpha=(1.0, 5.0), pairs: int = 256,
               seed: int = 0, risk_nulls: bool = True, tests=None) -> dict:
    """Seconds of one core per trial of the battery as the study runs it, by group of trials
    (`trial_tests`: only the groups and tests that run with ``tests``): ``"main"`` (the study's
    pairs: bootstrap, permutation, ZRisk and GeoRisk resampled), one ``"urisk@A"`` per alpha > 0
    (the bootstrap test of URisk_A), ``"smooth"`` (no resampling). Measured (CPU time, one
    thread) on ``pairs`` uniform pairs (``shared``: a block of ``shared`` pairs, at most 1,000,
    which share their draws as in the study) with 0 and ``min(replicates, PROBE_REPLICATES)``
    replicates, and extrapolated linearly in the replicates; the simulation of the scores
    themselves (copula and margins, `SIMULATE_SECONDS`) is not included."""
    pairs = max(pairs, min(int(shared), 1000)) if shared else pairs
    V = np.random.default_rng(seed).random((pairs, 2, topics))
    B = min(replicates, PROBE_REPLICATES)
    out = {}
    for g, want in trial_tests(trisk_alpha, risk_nulls, tests).items():
        null = _s._null_of(want[0])
        kw = dict(rng=seed, tests=want, threads=1, protocol="urbano2019",
                  trisk_alpha=_s._group_alphas(trisk_alpha, null), risk_tests=null is None)
        if shared:
            kw.update(start=0, shared_resamples=True)
        battery(V[:8], replicates=B, **kw)  # compiled and warm
        cpu = []
        for b in dict.fromkeys((0, B)):
            t = time.process_time()  # CPU seconds: one thread, so one core's work, whatever the load
            battery(V, replicates=b, **kw)
            cpu.append((time.process_time() - t) / pairs)
        out[g] = cpu[0] + (cpu[-1] - cpu[0]) * (replicates / B if B else 0.0)
    return out


def estimate_grid(studies, measures: int, topics, deltas: int, trials: int, h1_trials: int, replicates: int,
                  trisk_alpha=(1.0, 5.0), shared: int = 0, workers: int | None = None, risk_nulls: bool = True,
                  tests=None) -> dict:
    """The grid's cost from `trial_cost` probes (one per topic-set size, of the groups and tests
    that run: ``tests``, ``risk_nulls``) plus `SIMULATE_SECONDS` a battery call: trials, battery
    calls (a trial of each risk null run beside each of the study's trials), groups of trials,
    one core's seconds and wall seconds on ``workers`` cores (default: numba's thread count),
    assuming the jobs share the cores perfectly (a sweep of independent jobs; see
    docs/simulation.md)."""
    workers = int(workers or numba.get_num_threads())
    per_cell = (trials if "type1" in studies else 0) + (h1_trials * deltas if {"power", "type3"} & set(studies) else 0)
    cpu = calls = 0.0
    cost = {}
    for n in topics:
        cost = trial_cost(int(n), replicates, shared=shared, trisk_alpha=trisk_alpha, risk_nulls=risk_nulls,
                          tests=tests)
        cpu += measures * per_cell * (sum(cost.values()) + len(cost) * SIMULATE_SECONDS)
        calls += measures * per_cell * len(cost)
    probe = f"{min(replicates, PROBE_REPLICATES):,}-replicate probes on one thread, sizes {', '.join(map(str, topics))}"
    return {"trials": int(measures * per_cell * len(topics)), "battery_calls": int(calls), "cpu_seconds": cpu,
            "wall_seconds": cpu / workers, "workers": workers, "probe": probe, "groups": len(cost)}


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 3 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"
