"""The risk inferences under two null models, per pair of runs, on the 20 bundled collections
(issue #37, item 4; docs/risk-tests.md, "Which inference, per pair").

    python docs/_scripts/inference_study.py run OUT [--pairs 10] [--trials 1000] \
        [--resampling-trials 400] [--alphas 1,2,5,10,smooth] [--sizes 10,25,50,100] \
        [--deltas 0.01,0.02,0.05|none] [--collections all] [--inferences all] [--processes 2] [--seed 1]
    python docs/_scripts/inference_study.py report OUT[,OUT2] [--level 0.05] [--delta 0.05] [--first-pairs K]
    python docs/_scripts/inference_study.py figure OUT FIGURE.svg [--values 1,5]
    python docs/_scripts/inference_study.py note OUT     # fastrisk.core.inference._MEASURED_T
    python docs/_scripts/inference_study.py shape OUT [--alpha 5]   # skewness, kurtosis of x
    python docs/_scripts/inference_study.py cost [--sizes 25,50]

``run`` writes OUT/<collection>.parquet (one per collection; an existing one is kept, so a killed
run resumes) with one row per pair, value (alpha or smooth), null, target, topics, inference,
tail and level: the rejection rate and its trials, and for the power rows the size-adjusted
power. ``report`` prints the page's Markdown tables.

Protocol, per collection (`fastrisk.data.datasets.trec_matrix`):

- **Pairs**: ``--pairs`` ordered pairs (b, e), drawn from the seed as the collection-level
  studies choose theirs (`fastrisk.simulate.nulls`, from simIReff's ``R/12-type_2.R``): the
  baseline b uniformly among the bottom 75 % of runs by mean score, e uniformly among the 10
  runs nearest to b in mean; no pair twice.
- **Values**: URisk_alpha, v(d) = d + alpha min(d, 0) (Dinçer et al. 2014), and the smooth
  value s(d) (`fastrisk.simulate.nulls.SMOOTH`); the statistic is E[v(d)].
- **Nulls** at E[v(d)] = target (0 for type I, delta for power), as `fastrisk.simulate.pair_study`
  builds them: *empirical* (the pair's topics are the population, e shifted by c so that the
  population mean of v(d + c) is the target exactly, n topics drawn with replacement) and
  *copula* (b's and e's simIReff margins and their copula fitted on the pair's topics, e's margin
  transformed by simIReff's ``effTransform`` to E[v(E - B)] = target under the fitted law).
- **Trials**: ``--trials`` draws of the largest size per (pair, value, null, target); each size
  n takes the first n topics of a draw (nested topic sets). The copula null's draws of a pair
  share their copula uniforms across values and targets (common random numbers: only e's
  calibrated margin differs); the empirical null draws each group from a stream of its own. Every inference of
  `fastrisk.INFERENCES` (``--inferences all``: all but the double bootstrap, `pair.PAIR_OPT_IN`,
  which the page runs as a supplement) gets the same draws; the resampling ones (``exact``: 100 orderings, bets
  tuned to level 0.05, valid at every level; the bootstraps: `pair.PAIR_REPLICATES`) run on the
  first ``--resampling-trials``. A draw without variation (one topic n times) counts as no
  rejection.
- **Rates**: the share of trials with p <= level, for the three tails (two-sided; greater: e
  better; less) and levels 0.01, 0.05, 0.10. **Size-adjusted power** at a level: the rejection
  rate of the test whose critical p-value is the level-quantile of the same pair's, size's and
  tail's p-values under the null (target 0, same null model), randomised at ties so that its
  rate under that null is the level exactly (Davidson & MacKinnon 1998, "Graphical methods for
  investigating the size and power of hypothesis tests").
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

LEVELS = (0.01, 0.05, 0.10)
TAILS = ("two-sided", "greater", "less")
COLLECTIONS = tuple(f"adhoc{y}_{m}" for y in (5, 6, 7, 8) for m in ("ap", "p10", "rr")) + tuple(
    f"web{y}_{m}" for y in (2010, 2011, 2012, 2013) for m in ("ndcg20", "err20"))


def _seed(*keys) -> int:
    return int(np.random.SeedSequence([int(k) for k in keys]).generate_state(1, np.uint64)[0] >> np.uint64(1))


def _value(name):
    from fastrisk.simulate.nulls import RiskNull

    return RiskNull("smooth") if name == "smooth" else RiskNull("urisk", float(name))


def _shift(d, rnull, target):
    """c with mean(v(d + c)) = target: exact for URisk (`empirical.risk_shift`), Brent for the
    smooth value (s is increasing)."""
    from scipy.optimize import brentq

    from fastrisk.simulate import empirical

    if rnull.family == "urisk":
        return empirical.risk_shift(d, rnull.alpha, target)
    return float(brentq(lambda c: rnull.value(d + c).mean() - target, -3.0, 3.0, xtol=1e-14, rtol=1e-14))


def choose_pairs(values, count, seed):
    """``count`` distinct (b, e) as the studies' rule: b among the bottom 75 % by mean, e among
    the 10 runs nearest to b in mean."""
    means = values.mean(axis=1)
    order = np.argsort(means, kind="stable")
    bottom = order[: max(1, int(np.floor(0.75 * len(order))))]
    rng = np.random.default_rng(seed)
    pairs, tries = [], 0
    while len(pairs) < count and tries < 100 * count:
        tries += 1
        b = int(rng.choice(bottom))
        others = np.array([k for k in range(len(means)) if k != b])
        near = others[np.argsort(np.abs(means[others] - means[b]), kind="stable")[:10]]
        e = int(rng.choice(near))
        if (b, e) not in pairs and np.ptp(values[e] - values[b]) > 1e-12:
            pairs.append((b, e))
    return pairs


def _flat_rows(X):
    return np.ptp(X, axis=-1) == 0


def _pvalues(X, name, bounds, reps, seed):
    """(T, 3) p-values of every tail (p = 1 where the draw has no variation)."""
    from fastrisk.core.inference import INFERENCES, pvalues

    p = pvalues(X, INFERENCES[name], bounds=bounds, alternative="all", significance=0.05,
                replicates=reps, seed=seed)
    p = np.where(np.isnan(p), 1.0, p)
    p[_flat_rows(X)] = 1.0
    return p


def _size_adjusted(p0, p1, level):
    """Randomised size-adjusted power: q the level-quantile of the null p-values p0, rejecting
    p1 < q always and p1 == q with the probability that makes the null rate exactly level."""
    q = np.sort(p0)[max(int(np.floor(level * len(p0))) - 1, 0)] if level * len(p0) >= 1 else -np.inf
    if not np.isfinite(q):
        return 0.0
    below, at = float(np.mean(p0 < q)), float(np.mean(p0 == q))
    w = 0.0 if at == 0 else min(max((level - below) / at, 0.0), 1.0)
    return float(np.mean(p1 < q) + w * np.mean(p1 == q))


class _Copula:
    """A pair's copula null under any value (`pair._CopulaNull`'s fit and calibration, with the
    smooth value too)."""

    def __init__(self, rows, measure):
        from fastrisk.simulate.pair import _CopulaNull

        self.cn = _CopulaNull(rows, measure)
        self.margins = {}

    def calibrate(self, rnull, target):
        from fastrisk.simulate.nulls import calibrate_pair

        got = calibrate_pair(self.cn.law, self.cn.e, rnull, float(target), self.cn.memo)
        self.margins[(rnull.key(target))] = None if got is None else got[0]
        return got is not None

    def uniforms(self, n, seed, trials):
        """The pair's copula uniforms (u_b, u_e) of every trial, drawn once (the copula's inverse
        h-function is most of a draw's cost) and shared by every value and target: e's margin is
        all that calibration changes."""
        from fastrisk._kernels import simulate as _k

        U = _k.trial_uniforms(int(seed), np.asarray(trials, dtype=np.int64), int(n))
        self.shape = (U.shape[0], n)
        self.u1 = np.ascontiguousarray(U[:, 0].reshape(-1))
        self.u2 = np.clip(np.asarray(self.cn.cop.hinv1(np.column_stack([self.u1, U[:, 1].reshape(-1)])),
                                     dtype=np.float64), 1e-15, 1 - 1e-15)
        self.qb = self.cn.b.quantile(self.u1).reshape(self.shape)

    def draw(self, rnull, target):
        """(T, n) values v(d) of the pair under e's margin calibrated to E[v(d)] = target."""
        return rnull.value(self.margins[rnull.key(target)].quantile(self.u2).reshape(self.shape) - self.qb)


def run_collection(job):
    """Every pair of one collection: rows of the long table, written to OUT/<name>.parquet."""
    name, ci, args = job
    out = Path(args["out"]) / f"{name}.parquet"
    if out.exists():
        return name, 0.0, "kept"
    import pyarrow as pa
    import pyarrow.parquet as pq

    from fastrisk.core.inference import INFERENCES
    from fastrisk.simulate import empirical
    from fastrisk.simulate.pair import PAIR_REPLICATES, _matrix_iv

    t0 = time.process_time()
    mat, measure = _matrix_iv(name, None)
    V = np.asarray(mat.values, dtype=np.float64)
    pairs = choose_pairs(V, args["pairs"], _seed(args["seed"], ci))
    sizes, T, TR = args["sizes"], args["trials"], args["resampling_trials"]
    nmax = max(sizes)
    names = [k for k in INFERENCES if k in args["inferences"]]
    rows, notes = [], []
    for pi, (b, e) in enumerate(pairs):
        pair_rows = V[[b, e]]
        d = pair_rows[1] - pair_rows[0]
        cop = None
        try:
            cop = _Copula(pair_rows, measure)
            cop.uniforms(nmax, _seed(args["seed"], ci, pi, 1000), np.arange(T, dtype=np.int64))
        except Exception as exc:  # a failed fit: the pair keeps its empirical null
            notes.append(f"{name} pair {pi}: copula fit failed: {exc}")
            cop = None
        for vi, vname in enumerate(args["values"]):
            rnull = _value(vname)
            lo_v, hi_v = float(rnull.value(-1.0)), float(rnull.value(1.0))
            for ni, null in enumerate(("empirical", "copula")):
                p_null = {}
                for ti, target in enumerate((0.0, *args["deltas"])):
                    if null == "empirical":
                        c = _shift(d, rnull, target)
                        pop = rnull.value(d + c)
                        bounds = (float(rnull.value(c - 1.0)), float(rnull.value(1.0 + c)))
                    else:
                        if cop is None or not cop.calibrate(rnull, target):
                            notes.append(f"{name} pair {pi} {vname} copula target {target:g}: not calibrated")
                            continue
                        bounds = (lo_v, hi_v)
                    seed = _seed(args["seed"], ci, pi, vi, ni, ti)
                    idx = np.arange(T, dtype=np.int64)
                    X = empirical.draw(pop, nmax, seed, idx) if null == "empirical" else cop.draw(rnull, target)
                    for k in names:
                        spec = INFERENCES[k]
                        rt = TR if spec.resampling else T
                        reps = PAIR_REPLICATES.get(k, 0) if spec.resampling else 0
                        for n in sizes:
                            p = _pvalues(X[:rt, :n], k, bounds, reps, _seed(seed, n, list(INFERENCES).index(k)))
                            if ti == 0:
                                p_null[(k, n)] = p
                            for a, tail in enumerate(TAILS):
                                for lv in LEVELS:
                                    adj = np.nan if ti == 0 else _size_adjusted(p_null[(k, n)][:, a], p[:, a], lv) \
                                        if (k, n) in p_null else np.nan
                                    rows.append((name, measure, pi, mat.systems[b], mat.systems[e], vname, null,
                                                 target, n, k, tail, lv, float(np.mean(p[:, a] <= lv)), rt, adj))
    cols = list(zip(*rows))
    table = pa.table({k: list(v) for k, v in zip(
        ("collection", "measure", "pair", "baseline", "system", "value", "null", "target", "topics", "inference",
         "tail", "level", "rate", "trials", "adjusted"), cols)})
    cpu = time.process_time() - t0
    table = table.replace_schema_metadata({"args": json.dumps(args), "notes": json.dumps(notes),
                                           "cpu_seconds": f"{cpu:.1f}"})
    tmp = out.with_suffix(".tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, out)
    return name, cpu, f"{len(pairs)} pairs, {len(notes)} notes"


def run(argv):
    ap = argparse.ArgumentParser(prog="inference_study.py run")
    ap.add_argument("out")
    ap.add_argument("--pairs", type=int, default=10)
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--resampling-trials", type=int, default=400)
    ap.add_argument("--alphas", default="1,2,5,10,smooth")
    ap.add_argument("--sizes", default="10,25,50,100")
    ap.add_argument("--deltas", default="0.01,0.02,0.05")
    ap.add_argument("--collections", default="all")
    ap.add_argument("--inferences", default="all")
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    from fastrisk.core.inference import INFERENCES
    from fastrisk.simulate.pair import PAIR_OPT_IN

    cols = COLLECTIONS if a.collections == "all" else tuple(a.collections.split(","))
    args = {"out": a.out, "pairs": a.pairs, "trials": a.trials, "resampling_trials": min(a.resampling_trials, a.trials),
            "values": a.alphas.split(","), "sizes": [int(v) for v in a.sizes.split(",")],
            "deltas": [] if a.deltas == "none" else [float(v) for v in a.deltas.split(",")], "seed": a.seed,
            "inferences": [k for k in INFERENCES if k not in PAIR_OPT_IN] if a.inferences == "all"
            else a.inferences.split(",")}
    Path(a.out).mkdir(parents=True, exist_ok=True)
    jobs = [(c, COLLECTIONS.index(c), args) for c in cols]
    t0 = time.time()
    if a.processes > 1:
        import multiprocessing as mp

        os.environ.setdefault("NUMBA_NUM_THREADS", "1")
        with mp.get_context("spawn").Pool(a.processes) as pool:
            for name, cpu, what in pool.imap_unordered(run_collection, jobs):
                print(f"{time.time() - t0:7.0f} s  {name}: {what}, {cpu:.0f} s CPU", flush=True)
    else:
        for job in jobs:
            name, cpu, what = run_collection(job)
            print(f"{time.time() - t0:7.0f} s  {name}: {what}, {cpu:.0f} s CPU", flush=True)


def _load(out):
    """The long tables of one or more OUT directories (comma-separated: a supplementary run of
    other inferences beside the main one)."""
    import pyarrow.parquet as pq

    files = sorted(f for d in out.split(",") for f in Path(d).glob("*.parquet"))
    frames = [pq.read_table(f).to_pandas() for f in files]
    import pandas as pd

    return pd.concat(frames, ignore_index=True)


def _cell(g, level):
    r = g.rate.to_numpy()
    return f"{r.mean():.3f} / {np.mean(r > 1.5 * level):.2f} / {r.max():.2f}"


def report(argv):
    ap = argparse.ArgumentParser(prog="inference_study.py report")
    ap.add_argument("out")
    ap.add_argument("--level", type=float, default=0.05)
    ap.add_argument("--delta", type=float, default=0.05)
    ap.add_argument("--first-pairs", type=int, default=None, help="only each collection's first K pairs (the "
                                                                     "supplement's, to compare on the same pairs)")
    a = ap.parse_args(argv)
    df = _load(a.out)
    if a.first_pairs is not None:
        df = df[df.pair < a.first_pairs]
    lv = a.level
    df = df[(df.level - lv).abs() < 1e-12]
    values = sorted(set(df.value), key=lambda v: (v == "smooth", 0.0 if v == "smooth" else float(v)))
    sizes = sorted(df.topics.unique())
    from fastrisk.core.inference import INFERENCES

    infs = [k for k in INFERENCES if k in set(df.inference)]
    npairs = df.groupby("collection").pair.nunique()
    print(f"{len(npairs)} collections, {int(npairs.sum())} pairs; level {lv:g}. Cell: mean rate over pairs / share "
          f"of pairs above {1.5 * lv:g} / worst pair.\n")
    cells = [(v, n) for v in ("1", "2", "5") for n in sizes if n >= 25 and v in values]
    null0 = df[(df.target == 0) & (df["tail"] == "two-sided")]
    print(f"#### Which inference, two-sided at {lv:g}\n")
    print(f"Per value and size: the efficient inference (not `exact`) that meets both goals under both nulls "
          f"(mean within {lv:g} ± 0.01, at least 95 % of pairs at or below {1.5 * lv:g}), else the closest (the "
          "largest share at or below in its worse null, then the smaller distance of the mean). Rates: mean over pairs "
          "/ share of pairs at or below, copula · empirical null.\n")
    print("| value | topics | use | rates |\n|---|---|---|---|")
    for v in values:
        for n in (n for n in sizes if n >= 25):
            cands = []
            for k in infs:
                g = null0[(null0.inference == k) & (null0.value == v) & (null0.topics == n)]
                if k == "exact" or g.null.nunique() < 2:
                    continue
                st = {nl: (g[g.null == nl].rate.mean(), float(np.mean(g[g.null == nl].rate <= 1.5 * lv)))
                      for nl in ("copula", "empirical")}
                ok = all(abs(m - lv) <= 0.01 and sh >= 0.95 for m, sh in st.values())
                cands.append((ok, min(sh for _, sh in st.values()), -max(abs(m - lv) for m, _ in st.values()), k, st))
            if not cands:
                continue
            ok, _, _, k, st = max(cands, key=lambda c: c[:3])
            rates = " · ".join(f"{st[nl][0]:.3f} / {st[nl][1]:.2f}" for nl in ("copula", "empirical"))
            use = f"`{k}`" if ok else f"`exact` if the level must hold; else `{k}`, the closest"
            print(f"| {'s(d)' if v == 'smooth' else f'URisk_{v}'} | {n} | {use} | {rates}{' ✓' if ok else ''} |")
    print()
    for null in ("empirical", "copula"):
        print(f"#### The goals of issue #37: two-sided, {null} null\n")
        print(f"Mean rate over pairs (goal {lv - 0.01:g} to {lv + 0.01:g}) / share of pairs at or below {1.5 * lv:g} "
              "(goal 0.95); ✓ both goals met.\n")
        head = ["inference"] + [f"α = {v}, n = {n}" for v, n in cells]
        print("| " + " | ".join(head) + " |\n|" + "|".join(["---"] * len(head)) + "|")
        for k in infs:
            out = []
            for v, n in cells:
                r = null0[(null0.inference == k) & (null0.value == v) & (null0.topics == n) & (null0.null == null)].rate
                ok = abs(r.mean() - lv) <= 0.01 and np.mean(r <= 1.5 * lv) >= 0.95
                out.append(f"{r.mean():.3f} / {np.mean(r <= 1.5 * lv):.2f}{' ✓' if ok else ''}" if len(r) else "")
            print(f"| `{k}` | " + " | ".join(out) + " |")
        print()
    full = _load(a.out)
    ex = full[(full.inference == "exact") & (full.target == 0)]
    if len(ex):
        worst = ex.loc[(ex.rate - ex.level).idxmax()]
        print(f"\n`exact`, every pair, value, null, size, tail and level ({len(ex)} cells): largest rate minus level "
              f"{worst.rate - worst.level:+.4f} ({worst.collection} pair {worst.pair}, {worst.value}, {worst.null}, "
              f"n = {worst.topics}, {worst['tail']}, level {worst.level:g}: {worst.rate:.4f} of {worst.trials} "
              f"trials); cells above their level: {int((ex.rate > ex.level).sum())}.")
    def table(title, sel, cell):
        print(f"\n#### {title}\n")
        head = ["inference", "value"] + [f"n = {n}" for n in sizes]
        print("| " + " | ".join(head) + " |\n|" + "|".join(["---"] * len(head)) + "|")
        for k in infs:
            for v in values:
                g = sel[(sel.inference == k) & (sel.value == v)]
                if not g.empty:
                    cells = [cell(g[g.topics == n]) if (g.topics == n).any() else "" for n in sizes]
                    print(f"| `{k}` | {v} | " + " | ".join(cells) + " |")

    for tail in TAILS[:2]:
        for null in ("empirical", "copula"):
            table(f"Type I, {tail}, {null} null", df[(df.target == 0) & (df["tail"] == tail) & (df.null == null)],
                  lambda g: _cell(g, lv))
    for null in ("empirical", "copula"):
        sel = df[(df.target > 0) & (df["tail"] == "two-sided") & (df.null == null)]
        table(f"Power at δ = {a.delta:g}, two-sided, {null} null: raw / size-adjusted (mean over pairs)",
              sel[(sel.target - a.delta).abs() < 1e-12], lambda g: f"{g.rate.mean():.2f} / {g.adjusted.mean():.2f}")


def figure(argv):
    """Type I rate against topics, two-sided: per inference the mean over pairs (solid) and the
    95th percentile over pairs (dashed), one panel per null model and value."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fastrisk.core.inference import INFERENCES

    ap = argparse.ArgumentParser(prog="inference_study.py figure")
    ap.add_argument("out")
    ap.add_argument("svg")
    ap.add_argument("--level", type=float, default=0.05)
    ap.add_argument("--values", default="1,5")
    a = ap.parse_args(argv)
    df = _load(a.out)
    df = df[((df.level - a.level).abs() < 1e-12) & (df.target == 0) & (df["tail"] == "two-sided")]
    values = a.values.split(",")
    fig, axes = plt.subplots(2, len(values), figsize=(4.2 * len(values), 7), sharex=True, sharey=True,
                             squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, null in enumerate(("empirical", "copula")):
        for j, v in enumerate(values):
            ax = axes[i, j]
            for c, k in enumerate(k for k in INFERENCES if k in set(df.inference)):
                g = df[(df.null == null) & (df.value == v) & (df.inference == k)].groupby("topics").rate
                if not len(g):
                    continue
                col = colours[c % len(colours)]
                ax.plot(g.mean().index, g.mean().to_numpy(), "-o", ms=3, color=col, label=k)
                ax.plot(g.quantile(0.95).index, g.quantile(0.95).to_numpy(), "--", color=col, lw=0.8)
            ax.axhline(a.level, color="black", lw=0.6)
            ax.axhline(1.5 * a.level, color="grey", lw=0.6, ls=":")
            ax.set_xscale("log")
            ax.set_title(f"{null} null, {'smooth s(d)' if v == 'smooth' else f'URisk_{v}'}", fontsize=9)
            ax.set_xlabel("topics")
            ax.set_ylabel(f"type I rate at {a.level:g} (two-sided)")
    axes[0, 0].legend(fontsize=7)
    fig.suptitle("Mean over pairs (solid) and 95th percentile over pairs (dashed)", fontsize=10)
    fig.tight_layout()
    fig.savefig(a.svg)  # a .png name gives a PNG


def note(argv):
    """`fastrisk.core.inference._MEASURED_T` from the study: for t, two-sided, level 0.05, at each
    alpha >= 2 and n < 100, (mean over pairs under the copula null, under the empirical null,
    share of pairs above 0.075 under the copula null, its worst pair, pairs)."""
    ap = argparse.ArgumentParser(prog="inference_study.py note")
    ap.add_argument("out")
    a = ap.parse_args(argv)
    df = _load(a.out)
    df = df[(df.inference == "t") & (df.target == 0) & (df["tail"] == "two-sided") & ((df.level - 0.05).abs() < 1e-12)]
    print("_MEASURED_T = {")
    for v in sorted((v for v in df.value.unique() if v != "smooth" and float(v) >= 2), key=float):
        for n in sorted(n for n in df.topics.unique() if n < 100):
            c = df[(df.value == v) & (df.topics == n) & (df.null == "copula")].rate
            e = df[(df.value == v) & (df.topics == n) & (df.null == "empirical")].rate
            print(f"    ({float(v):g}, {n}): ({c.mean():.3f}, {e.mean():.3f}, {np.mean(c > 0.075):.2f}, {c.max():.2f}, "
                  f"{len(c)}),")
    print("}")


def shape(argv):
    """Skewness and kurtosis (non-excess) of x = d + alpha min(d, 0) over the observed topics of
    the study's pairs: 10th, 25th, 50th, 75th and 90th percentiles over pairs."""
    from scipy import stats

    from fastrisk.simulate.pair import _matrix_iv

    ap = argparse.ArgumentParser(prog="inference_study.py shape")
    ap.add_argument("out")
    ap.add_argument("--alpha", type=float, default=5.0)
    a = ap.parse_args(argv)
    df = _load(a.out)[["collection", "baseline", "system"]].drop_duplicates()
    sk, ku = [], []
    for name, g in df.groupby("collection"):
        mat, _ = _matrix_iv(name, None)
        systems, V = [str(s) for s in mat.systems], np.asarray(mat.values, dtype=np.float64)
        for b, e in zip(g.baseline, g.system):
            d = V[systems.index(e)] - V[systems.index(b)]
            x = d + a.alpha * np.minimum(d, 0.0)
            sk.append(stats.skew(x))
            ku.append(stats.kurtosis(x, fisher=False))
    q = (10, 25, 50, 75, 90)
    print(f"{len(sk)} pairs, alpha {a.alpha:g}: skewness {np.percentile(sk, q).round(2)}, kurtosis "
          f"{np.percentile(ku, q).round(1)} (percentiles {q})")


def cost(argv):
    """Cost per call of each inference through `fastrisk.core.inference.risk_pvalue` with its
    default replicates: one row (median of repeated calls, the Python overhead included) and
    1,000 rows, at n topics, after a warm-up call; threads as numba's default."""
    import timeit

    from fastrisk.core.inference import INFERENCES, risk_pvalue

    ap = argparse.ArgumentParser(prog="inference_study.py cost")
    ap.add_argument("--sizes", default="25,50")
    a = ap.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f}; numba threads {os.environ.get('NUMBA_NUM_THREADS', 'default')}\n")
    print("| inference | replicates | n | one row | 1,000 rows |\n|---|---|---|---|---|")
    rng = np.random.default_rng(1)
    for name, spec in INFERENCES.items():
        for n in (int(v) for v in a.sizes.split(",")):
            X = np.clip(rng.normal(0.02, 0.15, (1000, n)), -1, 1)
            X = X + 5 * np.minimum(X, 0)

            def call(x):
                return risk_pvalue(x, inference=name, score_bounds=(-6.0, 1.0), rng=1)

            call(X[:2])
            reps = max(3, min(200, int(0.2 / max(timeit.timeit(lambda: call(X[0]), number=1), 1e-6))))
            one = np.median(timeit.repeat(lambda: call(X[0]), number=1, repeat=reps))
            many = min(timeit.repeat(lambda: call(X), number=1, repeat=3))
            print(f"| `{name}` | {spec.default_replicates or '-'} | {n} | {one * 1e3:.3g} ms | {many:.3g} s |")


if __name__ == "__main__":
    cmd, rest = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else ("", [])
    {"run": run, "report": report, "figure": figure, "note": note, "shape": shape, "cost": cost}.get(cmd, lambda _: sys.exit(__doc__))(rest)
