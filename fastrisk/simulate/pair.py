"""The user's own comparison (issue #37, item 6): for one pair of runs (an experimental run e
against its baseline b), each risk inference's type I error rate at the user's number of topics
under two null models, its power at URisk_alpha = delta, the number of topics it needs for a
target power, and a one-line verdict (`pair_study`, `PairResult`).

Null models (both at URisk_alpha = target exactly: 0 for type I, delta for power):

- ``empirical``: the pair's observed topics are the population, e shifted by a constant so that
  the population URisk_alpha is the target (`fastrisk.simulate.empirical`), n topics drawn with
  replacement. No fit; any two runs.
- ``copula``: the two runs' own simIReff margins and copula (Urbano, Lima & Hanjalic 2019;
  `fastrisk.simulate.simireff.fit_margin`, `fastrisk.simulate.copulas.fit_copula`), e's margin
  transformed by simIReff's ``effTransform`` so that E[v(E - B)] = target under the fitted
  joint law (`fastrisk.simulate.nulls.calibrate_pair`), n topics sampled from it as the studies
  sample their pairs (`fastrisk.simulate.studies`).
"""

from __future__ import annotations

import json
import math
import numbers
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from fastrisk._kernels import simulate as _k
from fastrisk._runtime.progress import Progress, stderr_is_terminal
from fastrisk._runtime.rng import resolve_seed
from fastrisk.core.inference import ALTERNATIVES, INFERENCES, pvalues
from fastrisk.data.datasets import trec_matrix
from fastrisk.data.results import Result, array, param
from fastrisk.errors import InputError
from fastrisk.simulate import empirical
from fastrisk.simulate.copulas import bicop, fit_copula
from fastrisk.simulate.fits import ties_base_seed
from fastrisk.simulate.measures import canonical_measure, snap_to_support
from fastrisk.simulate.nulls import PairLaw, RiskNull, calibrate_pair
from fastrisk.simulate.simireff import fit_margin
from fastrisk.simulate.studies import load_collections, wilson

#: The null models, in the result's order.
NULLS = ("empirical", "copula")
#: Effect sizes of the power and topics columns (URisk_alpha = delta).
PAIR_DELTAS = (0.01, 0.02, 0.05)
#: Numbers of topics the topic search evaluates (with the user's own n added).
TOPIC_GRID = (10, 15, 20, 25, 30, 40, 50, 60, 80, 100, 125, 150, 200)
#: Resamples of the resampling inferences in this study (fewer than their defaults of
#: `fastrisk.core.inference.INFERENCES`: each cell runs them on thousands of trials).
PAIR_REPLICATES = {"exact": 100, "bootstrap-t-symmetric": 399, "bootstrap-t-double": 99}
#: Inferences a study runs only when named in ``inferences``: the double bootstrap draws R²·n
#: numbers a trial (99² resamples of 50 topics: about 2.5 ms), minutes in every cell.
PAIR_OPT_IN = ("bootstrap-t-double",)
#: Trials of the resampling inferences by default (a prefix of the others' trials).
RESAMPLING_TRIALS = 2000
#: Trials per chunk (one progress step).
CHUNK = 1000


@dataclass(frozen=True, repr=False)
class PairResult(Result):
    """Type I error rate, power and topics needed of each risk inference for one pair of runs
    under the empirical-population and the copula null (`pair_study`); `summary` prints one
    verdict line per inference."""

    _coords: ClassVar[dict] = {"inference": {"inference": "inferences"}, "null": {"null": "nulls"},
                               "delta": {"delta": "deltas"}, "n": {"n": "grid"}}
    _constants: ClassVar[tuple] = ("baseline", "system", "alpha", "topics", "hypothesis")
    _table: ClassVar[tuple] = ("inference", "null", "delta")
    _headline: ClassVar[str] = "power"

    measure: str | None = param(doc="The measure of the scores (the copula null's margins), or None.")
    baseline: str = param(doc="The baseline run b.")
    system: str = param(doc="The experimental run e.")
    alpha: float = param(doc="The risk alpha of URisk_alpha, v(d) = d + alpha min(d, 0).")
    topics: int = param(doc="The user's number of topics n (the type I and power columns).")
    level: float = param(doc="The significance level the rates are counted at.")
    alternative: str = param(doc="The alternative of every test (``two-sided``, ``greater``: e better, ``less``).")
    target: float = param(doc="The power the topic search looks for.")
    trials: int = param(doc="Trials per cell of the analytic inferences.")
    seed: int = param(doc="The study's seed: pass it as ``seed=`` to reproduce the result.")
    inferences: tuple = param(doc="Names of the inferences (the labels of the ``inference`` dim).")
    nulls: tuple = param(doc="The null models (the labels of the ``null`` dim): ``empirical``, ``copula``.")
    deltas: tuple = param(doc="The effect sizes URisk_alpha = delta of the power columns (the ``delta`` dim).")
    grid: tuple = param(doc="Numbers of topics of the topic search, ascending (the labels of the ``n`` dim).")
    calibration: str = param(doc="How each null was built (JSON): the empirical shifts of e by target, the copula "
                                 "null's fitted margins, copula and e's calibrated mean by target (or why it failed).")
    verdicts: tuple = param(doc="One line per inference: its level under both nulls, its power, its topics needed.")
    cell_trials: np.ndarray = array("inference", doc="Trials per cell of each inference (the resampling ones run "
                                                     "on a prefix of the trials).")
    replicates: np.ndarray = array("inference", doc="Resamples or orderings of each inference (0: analytic).")
    type1: np.ndarray = array("inference", "null", doc="Type I error rate at ``topics`` topics (URisk_alpha = 0; NaN "
                                                       "when the null could not be built).")
    type1_low: np.ndarray = array("inference", "null", doc="Lower limit of the 95 % Wilson band of ``type1``.")
    type1_high: np.ndarray = array("inference", "null", doc="Upper limit of the 95 % Wilson band of ``type1``.")
    power: np.ndarray = array("inference", "null", "delta", doc="Power at ``topics`` topics against "
                                                                "URisk_alpha = delta.")
    power_low: np.ndarray = array("inference", "null", "delta", doc="Lower limit of the 95 % Wilson band of "
                                                                    "``power``.")
    power_high: np.ndarray = array("inference", "null", "delta", doc="Upper limit of the 95 % Wilson band of "
                                                                     "``power``.")
    topics_needed: np.ndarray = array("inference", "null", "delta", doc="The smallest n of ``grid`` from which the "
                                                                        "power stays >= ``target`` at every larger n of "
                                                                        "the grid (NaN: not within the grid).")
    curve: np.ndarray = array("inference", "null", "delta", "n", doc="Power at each n of ``grid``.")

    @property
    def hypothesis(self) -> str:
        """The null each rate is scored under (a column of every table): the type I columns
        under URisk_alpha = 0, the power columns at URisk_alpha = delta."""
        return f"type I: URisk_{self.alpha:g} = 0; power: URisk_{self.alpha:g} = delta"

    def to_markdown(self, digits: int = 3) -> str:
        """One row per inference: per null its type I rate with its 95 % Wilson band, its power
        at each delta and the topics it needs (">N": not within the grid), under a caption
        naming the pair and the cell."""
        def f(v):
            return "n/a" if not np.isfinite(v) else f"{v:.{digits}f}"

        heads = ["inference"]
        for null in self.nulls:
            heads.append(f"type I ({null})")
            heads += [f"power δ={d:g} ({null})" for d in self.deltas]
            heads += [f"topics δ={d:g} ({null})" for d in self.deltas]
        lines = [f"{self.system} against {self.baseline}, URisk_{self.alpha:g}, {self.topics} topics, level "
                 f"{self.level:g} ({self.alternative}); power {self.target:g} searched over {self.grid[0]}..."
                 f"{self.grid[-1]} topics", "", "| " + " | ".join(heads) + " |", "|---" + "|--:" * (len(heads) - 1) + "|"]
        for k, name in enumerate(self.inferences):
            cells = [name]
            for j in range(len(self.nulls)):
                r = self.type1[k, j]
                cells.append(f"{f(r)} [{f(self.type1_low[k, j])}, {f(self.type1_high[k, j])}]" if np.isfinite(r)
                             else "n/a")
                cells += [f(v) for v in self.power[k, j]]
                cells += ["n/a" if not np.isfinite(r) else _fmt_n(v, self.grid) for v in self.topics_needed[k, j]]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def summary(self) -> str:
        """The verdicts, one line per inference, under a header naming the pair and the cell."""
        head = (f"{self.system} against {self.baseline}: URisk_{self.alpha:g}, {self.topics} topics, level "
                f"{self.level:g} ({self.alternative}); a rate holds its level when its 95 % Wilson band covers "
                f"{self.level:g}, is liberal when the band lies above it, conservative when below")
        width = max(len(n) for n in self.inferences)
        return "\n".join([head] + [f"  {n:<{width}}  {v}" for n, v in zip(self.inferences, self.verdicts)])


def _status(rate, low, high, level) -> str:
    if not np.isfinite(rate):
        return "not built"
    return "liberal" if low > level else "conservative" if high < level else "holds its level"


def _fmt_n(v, grid) -> str:
    return f">{grid[-1]}" if not np.isfinite(v) else f"{int(v)}"


def verdict(k: int, res: dict, nulls, deltas, grid, level: float, target: float, topics: int) -> str:
    """The one line of inference ``k``: its level under each null (Wilson band against
    ``level``), its power at ``topics`` topics at each delta, the topics it needs per delta."""
    groups: dict = {}
    for j, null in enumerate(nulls):
        r, lo, hi = res["type1"][k, j], res["type1_low"][k, j], res["type1_high"][k, j]
        st = _status(r, lo, hi, level)
        text = f"{null} null" if st == "not built" else f"{r:.3f} [{lo:.3f}, {hi:.3f}] under the {null} null"
        groups.setdefault(st, []).append(text)
    order = ("liberal", "conservative", "holds its level", "not built")
    parts = [f"{st}: {', '.join(groups[st])}" for st in order if st in groups]
    built = [j for j in range(len(nulls)) if np.isfinite(res["type1"][k, j])]
    ds = ", ".join(f"{d:g}" for d in deltas)
    pw, tn = res["power"], res["topics_needed"]
    powers = "; ".join(", ".join(f"{pw[k, j, i]:.2f}" for i in range(len(deltas))) + f" ({nulls[j]})" for j in built)
    needs = "; ".join(", ".join(_fmt_n(tn[k, j, i], grid) for i in range(len(deltas))) + f" ({nulls[j]})"
                      for j in built)
    line = "; ".join(parts)
    if built:
        line += f"; power at {topics} topics for delta = {ds}: {powers}; topics for power {target:g}: {needs}"
        if "liberal" in groups:
            line += " (power inflated by the liberal level)"
    return line


def topics_needed(curve: np.ndarray, grid, target: float) -> np.ndarray:
    """Per row of ``curve`` (power over ``grid``, last axis): the smallest n of the grid from
    which the power stays >= ``target`` at every larger n of the grid (NaN: the last point is
    below). Power need not grow with n (a liberal test's falls as its excess shrinks), so the
    first n that reaches the target is not the answer when a larger one falls below it."""
    ok = curve >= target
    tail = np.flip(np.logical_and.accumulate(np.flip(ok, axis=-1), axis=-1), axis=-1)  # ok from here on
    first = np.argmax(tail, axis=-1)
    g = np.asarray(grid, dtype=np.float64)
    return np.where(tail.any(axis=-1), g[first], np.nan)


def _seed(study_seed: int, *keys) -> int:
    """A seed of its own for each group of trials and each inference and size: NumPy's
    SeedSequence of (study seed, keys), its first word >> 1."""
    seq = np.random.SeedSequence([int(study_seed), *[int(k) for k in keys]])
    return int(seq.generate_state(1, np.uint64)[0] >> np.uint64(1))


def group_keys(null: str, target: float) -> tuple[int, int]:
    """The seed keys of the trials of ``null`` at ``target``: the null's place in `NULLS` and the
    target's bits, so that a group's draws do not depend on which other nulls and effect sizes
    the study runs."""
    return NULLS.index(null), int(np.float64(target).view(np.uint64))


def _int_iv(name, v, low, high=10**12):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not low <= v <= high:
        raise InputError(f"`{name}` must be an integer in [{low}, {high:g}], got {v!r}")
    return int(v)


def _matrix_iv(matrix, measure):
    """(ScoreMatrix, measure key or None) of ``matrix``: a ScoreMatrix, a score-matrix file or a
    bundled matrix name."""
    if hasattr(matrix, "values") and hasattr(matrix, "systems"):
        own = measure if measure is not None else getattr(matrix, "measure", None)
        return matrix, (canonical_measure(own) if own is not None else None)
    if not isinstance(matrix, (str, Path)):
        raise InputError(f"`matrix` must be a ScoreMatrix, a score-matrix file or a bundled matrix name, got "
                         f"{type(matrix).__name__}")
    key, items = load_collections(measure, [matrix])
    name, mat = next(iter(items.items()))
    return (trec_matrix(name) if mat is None else mat), key


def _pair_study_iv(matrix, baseline, system, alpha, topics, trials, deltas, inferences, level, power, topic_grid,
                   alternative, replicates, resampling_trials, measure, nulls):
    mat, key = _matrix_iv(matrix, measure)
    systems = [str(s) for s in mat.systems]
    for what, name in (("baseline", baseline), ("system", system)):
        if str(name) not in systems:
            shown = ", ".join(systems[:10]) + (", ..." if len(systems) > 10 else "")
            raise InputError(f"`{what}` {name!r} is not a run of the matrix (its runs: {shown})")
    if str(baseline) == str(system):
        raise InputError(f"`baseline` and `system` are both {system!r}: name two different runs")
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not (math.isfinite(alpha) and alpha >= 0):
        raise InputError(f"`alpha` must be a finite number >= 0, got {alpha!r}")
    topics = _int_iv("topics", topics, 3, 10**6)
    trials = _int_iv("trials", trials, 1)
    resampling_trials = trials if resampling_trials is None else _int_iv("resampling_trials", resampling_trials, 1)
    resampling_trials = min(resampling_trials, trials)
    try:
        d = np.asarray(deltas, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(f"`deltas` must be numbers, got {deltas!r}") from None
    if d.size == 0 or not np.isfinite(d).all() or (d == 0).any() or len(np.unique(d)) != d.size:
        raise InputError(f"`deltas` must be distinct finite non-zero numbers, got {d.tolist()}")
    for name, v in (("level", level), ("power", power)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0 < v < 1:
            raise InputError(f"`{name}` must be in (0, 1), got {v!r}")
    if alternative not in ALTERNATIVES:
        raise InputError(f"`alternative` must be one of {', '.join(ALTERNATIVES)}, got {alternative!r}")
    names = tuple(k for k in INFERENCES if k not in PAIR_OPT_IN) if inferences is None else (
        (inferences,) if isinstance(inferences, str) else tuple(dict.fromkeys(map(str, inferences))))
    if not names:
        raise InputError("`inferences` is empty: name inferences of fastrisk.INFERENCES, or None for all")
    for n in names:
        if n not in INFERENCES:
            raise InputError(f"`inferences`: {n!r} is not a risk inference ({', '.join(INFERENCES)})")
    nulls = (nulls,) if isinstance(nulls, str) else tuple(dict.fromkeys(map(str, nulls)))
    if not nulls or any(n not in NULLS for n in nulls):
        raise InputError(f"`nulls` must name some of {', '.join(NULLS)}, got {nulls!r}")
    nulls = tuple(n for n in NULLS if n in nulls)
    grid = sorted({_int_iv("topic_grid", int(v) if isinstance(v, np.integer) else v, 3, 10**6)
                   for v in (TOPIC_GRID if topic_grid is None else topic_grid)} | {topics})
    reps = dict(PAIR_REPLICATES)
    if replicates is not None:
        if isinstance(replicates, dict):
            for k, v in replicates.items():
                if k not in reps:
                    raise InputError(f"`replicates`: {k!r} is not a resampling inference ({', '.join(reps)})")
                reps[k] = _int_iv(f"replicates[{k!r}]", v, 1, 10**9)
        else:
            v = _int_iv("replicates", replicates, 1, 10**9)
            reps = {k: v for k in reps}
    V = np.asarray(mat.values, dtype=np.float64)
    rows = V[[systems.index(str(baseline)), systems.index(str(system))]]
    if rows.shape[1] < 3:
        raise InputError(f"the matrix has {rows.shape[1]} topic(s): a pair study needs at least 3")
    if not np.isfinite(rows).all():
        r, i = (int(v) for v in np.argwhere(~np.isfinite(rows))[0])
        raise InputError(f"run {(baseline, system)[r]!r} has no finite score on topic {mat.topics[i]!r}")
    if (rows[0] == rows[1]).all():
        raise InputError(f"runs {baseline!r} and {system!r} score the same on every topic (identical runs): there "
                         "is no difference to test")
    diff = rows[1] - rows[0]
    if np.ptp(diff) <= 1e-12:
        raise InputError(f"run {system!r} differs from {baseline!r} by {float(diff[0]):g} on every topic: without "
                         "variation in d = e - b no inference has a test (every resample is the same)")
    if "exact" in names or "copula" in nulls:
        bad = (rows < 0) | (rows > 1)
        if bad.any():
            r, i = (int(v) for v in np.argwhere(bad)[0])
            why = "inference 'exact'" if "exact" in names else "the copula null (simIReff margins)"
            raise InputError(f"{why} assumes scores in [0, 1]; run {(baseline, system)[r]!r} scores "
                             f"{float(rows[r, i])!r} on topic {mat.topics[i]!r}")
    if "copula" in nulls and key is None:
        raise InputError("the copula null needs the measure of the scores (its margins' family): give `measure` "
                         "(e.g. AP, nDCG@10, P@10), or nulls=('empirical',)")
    return (mat, key, rows, float(alpha), topics, trials, tuple(float(v) for v in d), names, float(level),
            float(power), tuple(grid), reps, resampling_trials, nulls)


def _stage(progress, text: str) -> None:
    if progress or (progress is None and stderr_is_terminal()):
        print(text, file=sys.stderr, flush=True)


class CopulaNull:
    """The copula null of one pair: b's and e's simIReff margins and their copula, fitted on
    the pair's scores; e's margin calibrated per target (`calibrate`), then sampled."""

    def __init__(self, rows, measure: str, ties_seed: int = 0):
        vals = snap_to_support(rows, measure)
        self.b = fit_margin(vals[0], measure)
        self.e = fit_margin(vals[1], measure)
        self.spec = fit_copula(vals[0], vals[1], seed=ties_base_seed(vals, measure, ties_seed))
        self.cop = bicop(self.spec)
        self.law = PairLaw(self.b, self.cop, b_first=True)
        self.memo = {"moments": {}}
        self.margins = {}

    def calibrate(self, alpha: float, target: float, null: RiskNull | None = None) -> dict:
        """e's margin transformed so that E[v(E - B)] = target (``null``: v; default URisk_alpha)."""
        null = RiskNull("urisk", alpha) if null is None else null
        got = calibrate_pair(self.law, self.e, null, float(target), self.memo)
        if got is None:
            return {"target": target, "failed": "simIReff's effTransform cannot move e's margin that far"}
        margin, mu, val, _ = got
        self.margins[target] = margin
        return {"target": target, "mean_e": mu, "urisk": val, "transform": list(margin.transform or ())}

    def draw(self, alpha: float, target: float, n: int, seed: int, trials: np.ndarray) -> np.ndarray:
        """(T, n) risk-reward scores from trials' streams (seed, t) (`_k.trial_uniforms`)."""
        U = _k.trial_uniforms(int(seed), np.asarray(trials, dtype=np.int64), int(n))
        T = U.shape[0]
        u1 = np.ascontiguousarray(U[:, 0].reshape(-1))
        u2 = self.cop.hinv1(np.column_stack([u1, U[:, 1].reshape(-1)]))
        u2 = np.clip(np.asarray(u2, dtype=np.float64), 1e-15, 1 - 1e-15)
        d = self.margins[target].quantile(u2).reshape(T, n) - self.b.quantile(u1).reshape(T, n)
        return empirical.risk_value(d, alpha)

    def describe(self) -> dict:
        return {"b": {"family": self.b.family, "mean": self.b.mean}, "e": {"family": self.e.family, "mean": self.e.mean},
                "copula": {"family": self.spec["family"], "rotation": self.spec["rotation"],
                           "parameters": self.spec["parameters"]}}


def _t_critical(n: int, level: float, alternative: str) -> float:
    from scipy import stats  # slow to import

    return float(stats.t.ppf(1.0 - (level / 2 if alternative == "two-sided" else level), n - 1))


def _rejections(X, spec, bounds, alternative, level, B, seed, threads, row0):
    """Rejections (bool per row) of ``spec`` at ``level``; a row without variation (every draw
    one topic's score) has no test and is counted as no rejection, as is a NaN p-value. ``t``:
    the event p <= level as T against Student's critical value (|T| >= t_{1 - level/2, n - 1}
    two-sided), without the p-values' incomplete beta function (20 times the cost)."""
    flat = np.ptp(X, axis=-1) == 0
    if spec.name == "t":
        n = X.shape[-1]
        with np.errstate(divide="ignore", invalid="ignore"):
            T = X.mean(axis=-1) / (X.std(axis=-1, ddof=1) / math.sqrt(n))
        crit = _t_critical(n, level, alternative)
        stat = np.abs(T) if alternative == "two-sided" else T if alternative == "greater" else -T
        return (stat >= crit) & ~flat
    p = pvalues(X, spec, bounds=bounds, alternative=alternative, significance=level, replicates=B, seed=seed,
                threads=threads, row0=row0)
    return (p <= level) & ~flat


def pair_study(matrix, baseline, system, *, alpha: float = 5.0, topics: int = 50, trials: int = 10000,
               deltas=PAIR_DELTAS, inferences=None, level: float = 0.05, power: float = 0.8, topic_grid=None,
               alternative: str = "two-sided", replicates=None, resampling_trials: int | None = RESAMPLING_TRIALS,
               measure: str | None = None, nulls=NULLS, seed=None, threads: int | None = None,
               ties_seed: int = 0, progress: bool | None = None) -> PairResult:
    """Is a risk inference valid for this comparison, and how many topics does it need? For one
    pair of runs (``system`` e against ``baseline`` b) and each risk inference of
    `fastrisk.core.inference.INFERENCES`: its type I error rate at ``topics`` topics under two
    null models, its power at URisk_alpha = delta, the topics it needs for power ``power``, and
    a one-line verdict.

    The statistic is URisk_alpha = E[x], x = d + alpha min(d, 0), d = e - b (Dinçer, Macdonald &
    Ounis 2014). Both nulls set URisk_alpha to a target exactly (0 for the type I rate, delta
    for power):

    - **empirical** (no fit, any two runs): the pair's N observed topics are the population, e
      shifted by the constant c that solves (1/N) sum_i v(d_i + c) = target exactly
      (`fastrisk.simulate.empirical.risk_shift`: piecewise linear and increasing in c), n topics
      drawn with replacement. The exact test is given the bounds of the shifted law,
      [v(c - 1), v(1 + c)].
    - **copula**: b's and e's simIReff margins and their copula fitted on the pair's topics
      (Urbano, Lima & Hanjalic 2019), e's margin transformed by simIReff's ``effTransform`` so
      that E[v(E - B)] = target under the fitted joint law (`fastrisk.simulate.nulls`), n
      topics sampled as the studies sample their pairs. The exact test's bounds:
      (-(1 + alpha), 1). Where no transform of e reaches the target, that null's rates are NaN
      and the calibration says why.

    A test rejects when p <= ``level`` (two-sided: in either direction, as the studies count
    power); a trial whose n draws have no variation (one topic drawn n times) has no test and
    counts as no rejection. Rates carry 95 % Wilson bands
    (`fastrisk.simulate.studies.wilson`): the verdict calls an inference *liberal* under a null
    when the band lies above ``level``, *conservative* when below, else it *holds its level*.

    **Topics needed.** Power is evaluated at every n of ``topic_grid`` (plus ``topics``) on
    nested topic sets (trial t's first m draws are its draws at m topics). The answer is the
    smallest n of the grid *from which the power stays >= ``power`` at every larger n of the
    grid*: power is not assumed to grow with n (a liberal test's simulated power can fall as its
    excess shrinks, docs/risk-tests.md), so the first n that reaches the target is not taken
    when a larger one falls below it; NaN (">" the grid's last n in the verdict) when the last
    point is below the target.

    Trial t of each (null, target) draws from its counter-based stream (`_kernels._random`),
    its resamples from streams keyed by t: the same numbers whatever ``threads`` and chunking,
    and an inference's rates under a null at a target do not depend on which other inferences,
    nulls and deltas are run (their seeds are keyed by name and value, `group_keys`).

    Parameters
    ----------
    matrix : ScoreMatrix, str or path-like
        The runs' scores (systems x topics), a score-matrix file (any format
        `fastrisk.read_matrix` reads) or a bundled matrix name; any number of runs >= 2.
    baseline, system : str
        The baseline b and the experimental run e, by name.
    alpha : float
        The risk alpha (>= 0).
    topics : int
        The user's number of topics n (>= 3).
    trials : int
        Trials per cell of the analytic inferences.
    deltas : sequence of float
        URisk_alpha = delta of the power columns (default 0.01, 0.02, 0.05).
    inferences : sequence of str, optional
        Names of `INFERENCES` (default all but `PAIR_OPT_IN`, the double bootstrap).
    level : float
        Significance level.
    power : float
        The power the topic search looks for (default 0.8).
    topic_grid : sequence of int, optional
        The n of the topic search (default `TOPIC_GRID`); ``topics`` is always added.
    alternative : {"two-sided", "greater", "less"}
        The alternative of every test.
    replicates : int or dict, optional
        Orderings of ``exact`` and resamples of ``bootstrap-t-symmetric`` (default
        `PAIR_REPLICATES`: 100 and 399, as docs/_scripts/inference_study.py; ``bootstrap-t-double``: 99
        first-level resamples, each resampled 99 times), one int for all or a dict by name.
    resampling_trials : int, optional
        Trials per cell of the resampling inferences (default 2,000, the first of the
        ``trials``; None: ``trials``): at 10^4 trials, 13 sizes and 8 cells their cost would be
        minutes, not seconds.
    measure : str, optional
        The measure of the scores (the copula null's margins: continuous or on a lattice);
        default the matrix's own.
    nulls : sequence of {"empirical", "copula"}
        The null models (default both).
    seed : int, SeedSequence or Generator, optional
        The study's seed (None: fresh entropy, recorded in the result).
    threads : int, optional
        Numba threads of the inferences (default all cores).
    ties_seed : int
        The copula fit's draw of random tie-breaking (`fastrisk.simulate.fits.ties_base_seed`).
    progress : bool, optional
        Stage lines and a progress bar on standard error (default: on a terminal).

    Returns
    -------
    PairResult
        ``type1[inference, null]``, ``power[inference, null, delta]``,
        ``topics_needed[inference, null, delta]``, ``curve[inference, null, delta, n]``, with
        Wilson bands; ``summary()``: one verdict line per inference.

    References
    ----------
    Dinçer, B. T., Macdonald, C. & Ounis, I. (2014). Hypothesis testing for the risk-sensitive
    evaluation of retrieval systems. SIGIR 2014. Urbano, J., Lima, H. & Hanjalic, A. (2019).
    Statistical significance testing in information retrieval: an empirical analysis of type I,
    type II and type III errors. SIGIR 2019. Wilson, E. B. (1927). Probable inference, the law
    of succession, and statistical inference. JASA 22, 209-212.

    Examples
    --------
    >>> import fastrisk
    >>> from fastrisk.simulate import pair_study
    >>> m = fastrisk.data.datasets.trec_matrix("adhoc8_ap")
    >>> r = pair_study(m, "run1", "run2", alpha=5, topics=25, trials=200, inferences=["t", "exact"],
    ...                nulls=["empirical"], topic_grid=[10, 50], seed=1)
    >>> r.type1.shape, r.power.shape, r.grid
    ((2, 1), (2, 1, 3), (10, 25, 50))
    >>> r.verdicts[0].split(":")[0] in ("liberal", "conservative", "holds its level")
    True
    """
    (mat, key, rows, alpha, n, trials, deltas, names, level, target, grid, reps, rtrials,
     nulls) = _pair_study_iv(matrix, baseline, system, alpha, topics, trials, deltas, inferences, level, power,
                             topic_grid, alternative, replicates, resampling_trials, measure, nulls)
    rseed = resolve_seed(seed, name="seed")
    study_seed = rseed.kernel
    d = rows[1] - rows[0]
    specs = [INFERENCES[k] for k in names]
    order = [list(INFERENCES).index(k) for k in names]  # seed keys: an inference's numbers whatever the others
    B = [reps.get(s.name, 0) if s.resampling else 0 for s in specs]
    cell_trials = np.array([rtrials if s.resampling else trials for s in specs], dtype=np.int64)
    targets = (0.0, *deltas)
    calib: dict = {}
    builders = {}
    if "empirical" in nulls:
        pops = {t: empirical.population(d, alpha, t) for t in targets}
        calib["empirical"] = {f"{t:g}": {"shift": c, "urisk": float(p.mean())} for t, (p, c) in pops.items()}
        builders["empirical"] = pops
    if "copula" in nulls:
        _stage(progress, f"pair: fit: simIReff margins and the copula of {system} and {baseline} ({key}); "
                         f"calibrate e to URisk_{alpha:g} = {', '.join(f'{t:g}' for t in targets)}")
        cn = CopulaNull(rows, key, ties_seed)
        calib["copula"] = {**cn.describe(), "targets": [cn.calibrate(alpha, t) for t in targets]}
        builders["copula"] = cn
    S, J, D, G = len(specs), len(nulls), len(deltas), len(grid)
    hits1 = np.zeros((S, J))
    hitsG = np.zeros((S, J, D, G))
    built = np.zeros((J, len(targets)), dtype=bool)
    nmax = grid[-1]
    groups = [(j, ti) for j in range(J) for ti in range(len(targets))]
    bar = Progress(len(groups) * trials, progress, "pair: simulate", unit="trials", delay=1.0)
    _stage(progress, f"pair: simulate: {len(groups)} group(s) (null, target) of {trials} trials, "
                     f"{', '.join(names)}")
    try:
        for j, ti in groups:
            null, t = nulls[j], targets[ti]
            if null == "copula" and t not in builders["copula"].margins:
                bar.update(trials)
                continue
            built[j, ti] = True
            keys = group_keys(null, t)
            draw_seed = _seed(study_seed, *keys)
            if null == "empirical":
                pop, c = builders["empirical"][t]
                bounds = (float(empirical.risk_value(c - 1.0, alpha)), float(empirical.risk_value(1.0 + c, alpha)))
            else:
                bounds = (-(1.0 + alpha), 1.0)
            sizes = (n,) if ti == 0 else grid
            for lo in range(0, trials, CHUNK):
                idx = np.arange(lo, min(lo + CHUNK, trials), dtype=np.int64)
                m = n if ti == 0 else nmax
                X = (empirical.draw(pop, m, draw_seed, idx) if null == "empirical"
                     else builders["copula"].draw(alpha, t, m, draw_seed, idx))
                for k, spec in enumerate(specs):
                    rows_k = int(min(len(idx), max(cell_trials[k] - lo, 0)))
                    if rows_k == 0:
                        continue
                    for g, size in enumerate(sizes):
                        rej = _rejections(X[:rows_k, :size], spec, bounds, alternative, level, B[k],
                                          _seed(study_seed, *keys, order[k], size), threads, lo)
                        if ti == 0:
                            hits1[k, j] += rej.sum()
                        else:
                            hitsG[k, j, ti - 1, g] += rej.sum()
                bar.update(len(idx))
    finally:
        bar.close()
    nt = cell_trials.astype(np.float64)
    with np.errstate(invalid="ignore"):
        type1 = np.where(built[None, :, 0], hits1 / nt[:, None], np.nan)
        curve = np.where(built[None, :, 1:, None], hitsG / nt[:, None, None, None], np.nan)
    lo1, hi1 = wilson(np.nan_to_num(type1), nt[:, None])
    at = grid.index(n)
    pw = curve[..., at]
    plo, phi = wilson(np.nan_to_num(pw), nt[:, None, None])
    res = {"type1": type1, "type1_low": np.where(np.isnan(type1), np.nan, lo1),
           "type1_high": np.where(np.isnan(type1), np.nan, hi1), "power": pw,
           "power_low": np.where(np.isnan(pw), np.nan, plo), "power_high": np.where(np.isnan(pw), np.nan, phi),
           "topics_needed": np.where(np.isnan(curve[..., 0]), np.nan, topics_needed(curve, grid, target)),
           "curve": curve}
    verdicts = tuple(verdict(k, res, nulls, deltas, grid, level, target, n) for k in range(S))
    return PairResult(measure=key, baseline=str(baseline), system=str(system), alpha=alpha, topics=n, level=level,
                      alternative=alternative, target=target, trials=trials, seed=rseed.recorded, inferences=names,
                      nulls=nulls, deltas=deltas, grid=grid, calibration=json.dumps(calib), verdicts=verdicts,
                      cell_trials=cell_trials, replicates=np.asarray(B, dtype=np.int64), **res)


__all__ = ["NULLS", "PAIR_DELTAS", "PairResult", "TOPIC_GRID", "pair_study", "topics_needed"]
