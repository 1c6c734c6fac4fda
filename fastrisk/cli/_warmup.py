"""Fill numba's on-disk cache ahead of first use (``fastrisk warmup``).

fastrisk's kernels are compiled on first use and cached on disk (``__pycache__`` beside the
package, or ``NUMBA_CACHE_DIR``); a fresh install therefore pays seconds of compilation on
the first call of each procedure. `warmup` runs the calls of the README quickstarts
on the bundled TREC 2012 data, a group per subprocess and as many subprocesses at once as
there are cores (numba compiles one kernel at a time per process), so that every kernel
those calls use, in the argument types they use, is compiled once and cached. Later
processes load the cached kernels in milliseconds.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import fastrisk
from fastrisk.errors import InputError


def _matrix():
    return fastrisk.read_matrix(fastrisk.data.datasets.path("trec-matrices/web2012_err20.csv"))


def _risk():
    m = _matrix()
    for alpha in ([0, 1, 5, 10], range(11)):
        fastrisk.risk(m, "run24", alpha=alpha)
    fastrisk.topic_risk(m, "run24", alpha=5)
    fastrisk.adaptive_risk(m, "run24", alpha=5, method="saro")
    fastrisk.risk(m, "run24", loss_weight=2, convention="minus")
    fastrisk.risk(m, "run24", value="smooth")
    fastrisk.risk_scores(m, "run24", value="smooth")
    fastrisk.risk(m, fastrisk.virtual_baseline(m, "mean", leave_out=True), alpha=1)
    fastrisk.risk(m, "median", value="smooth", convention="minus")
    fastrisk.zrisk(m, loss_weight=2, convention="minus")
    fastrisk.zrisk(m, value="smooth", convention="minus")
    fastrisk.risk(m, "run24", alpha=5, inference="exact")  # the betting test's kernel (--inference exact)
    fastrisk.discriminative_power(m, rng=1)  # fastrisk meta power
    fastrisk.swap_rates(m, rng=1)


def _tables():
    m = _matrix()
    t = fastrisk.baseline_table(m, alpha=[0, 1, 5, 10])
    agreement = t.agreement(alpha=5)
    agreement.kendall, agreement.rbo  # computed on first use: compile their kernels too
    fastrisk.baseline_table(m, alpha=[0, 5], exclude_self=True)
    fastrisk.baseline_table(m, value="smooth").rank  # the built-in value function's kernels are cached too
    fastrisk.pca(m, 2, extra=[fastrisk.virtual_baseline(m, k) for k in ("mean", "median", "max")])
    fastrisk.rbo("a (b c) d", ["b", "a", ("c", "e")], p=0.9, ties="a")


def _resampling():
    m = _matrix()
    boot = fastrisk.bootstrap(m, "run24", alpha=[0, 1, 5, 10], replicates=10_000, rng=1)
    boot.qq(points=100)
    fastrisk.bootstrap(m, "run24", convention="minus", exclude_self=True, rng=1)
    fastrisk.bootstrap(m, "run24", alpha=[0, 1], replicates=10_000, rng=1, method="percentile")
    perm = fastrisk.permutation_test(m, "run24", alpha=0, rng=1)
    fastrisk.adjust_pvalues(perm.pvalue, method="holm", axis=-1)
    fastrisk.t_test(m, "run24", alpha=[0, 5])


def _pooling():
    # reading and scoring the runs (the parse and measure kernels) happen here only: a group of
    # their own would compile them again beside this one, which needs them first
    runs = fastrisk.read_runs(fastrisk.data.datasets.path("trec2012-web/runs"))
    qrels = fastrisk.read_qrels(fastrisk.data.datasets.path("trec2012-web/qrels.adhoc.txt"))
    fastrisk.evaluate(runs, qrels, ["nDCG@20", "ERR@20", "AP", "P@10", "RR"])
    with warnings.catch_warnings():  # topics without a relevant document are left out, with a warning
        warnings.simplefilter("ignore")
        fastrisk.compare(runs, qrels, ["AP"], baseline="indri-rm-cata-filtered", test="wilcoxon",
                         correction="fdr_bh")
    exp = fastrisk.pooling_experiment(runs, qrels, rng=1)
    exp.mae_table()
    exp.bias_distribution()
    fastrisk.pooling_experiment(runs, qrels, mode="condensed", pooled_unjudged="nonrelevant", rng=1)


#: Groups of calls, each run in its own process, the slowest first (CPU seconds of each alone
#: with an empty cache, 2026-11-25: pooling 14.4, tables 13.7, resampling 11.0, risk 6.8), so
#: that workers taking them in this order finish together (two cores: 21 and 25 s). No two
#: groups compile the same fastrisk kernel, apart from a few one-line helpers.
GROUPS = {"pooling": _pooling, "tables": _tables, "resampling": _resampling, "risk": _risk}


def run_group(name: str) -> None:
    """Run one group of calls in this process (what each warm-up subprocess does)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        GROUPS[name]()


def warmup(jobs: int | None = None, *, groups=None, report=None) -> dict[str, float]:
    """Compile and cache the kernels of the quickstart calls; returns seconds per group.

    Parameters
    ----------
    jobs : int, optional
        Subprocesses at once (default: the number of cores).
    groups : sequence of str, optional
        Some of `GROUPS` (default: all).
    report : callable, optional
        Called with ``(group, seconds, ok)`` as each group finishes.
    """
    names = list(GROUPS) if groups is None else list(groups)
    unknown = [g for g in names if g not in GROUPS]
    if unknown:
        raise InputError(f"unknown warm-up group(s) {', '.join(unknown)}; the groups are {', '.join(GROUPS)}")
    env = {**os.environ, "FASTRISK_QUIET": "1"}

    def one(name):
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", f"from fastrisk.cli._warmup import run_group; run_group({name!r})"],
                              env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - t0
        if report is not None:
            report(name, seconds, proc.returncode == 0)
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise RuntimeError(f"warm-up group {name!r} failed: {last}")
        return seconds

    workers = max(1, min(len(names), jobs or os.cpu_count() or 1))
    with ThreadPoolExecutor(workers) as pool:
        return dict(zip(names, pool.map(one, names)))
