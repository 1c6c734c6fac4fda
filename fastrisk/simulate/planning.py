"""Topic-set-size planning on the fitted models of a collection: the smallest number of topics
whose simulated power reaches a target (`topics`, `TopicsResult`).

Sakai ("Topic set size design", Information Retrieval 19(3), 2016) derives the number of
topics a paired t test needs for a given power from the noncentral t distribution, with the
variance of the differences estimated from past data. Here the power at n topics is instead
*simulated*, as `fastrisk.simulate.power` measures it (Urbano, Lima & Hanjalic, SIGIR 2019:
pairs of runs drawn from the collection's fitted margins and copulas, the experimental run's
margin transformed to mean mu_b + delta), so any test of the battery can be planned for, on
any collection and measure, without assuming normal differences. On a Gaussian joint law the
simulated curve of the t test is Sakai's noncentral-t power (tests/test_simulate_topics.py).

Search (`_search`): from n = min_topics, sizes guessed on the scale of the normal
approximation of power (Phi^-1(power) linear in sqrt(n), Sakai 2016 sec. 3), growing by at
most a doubling, until the power reaches the target, then regula falsi on that scale between
the last size below and the first at or above it: the answer of doubling and bisection on any
non-decreasing curve, with about half the topics simulated. Only the planned test's group of
trials is simulated (`fastrisk.simulate.studies` ``tests=``): the study's pairs, or a risk
test's own calibrated pairs (at URisk_alpha = delta). Every size uses the same study seed and
nested topic sets: trial t draws the same collection and pair of runs at every n, and its n
topics are the first n of one draw of max_topics (as an experimenter adding topics keeps the
ones judged), so the curve is smooth in n and the search sees a monotone curve up to
Monte-Carlo error (common random numbers). The band is the 95 % Wilson score interval of each
simulated proportion.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

import numpy as np
from scipy import special

from fastrisk._runtime import battery_tests as _bt
from fastrisk._runtime.aliases import SeedLike
from fastrisk._runtime.atomic import save_figure
from fastrisk._runtime.rng import resolve_seed
from fastrisk._runtime.validation import choice, level, non_negative_int, open_unit, positive_int
from fastrisk.data.results import Result, array, param
from fastrisk.errors import InputError
from fastrisk.simulate import studies as _s
from fastrisk.simulate.battery import battery, battery_test_names
from fastrisk.simulate.options import Execution, Sampling, TestSelection, from_keywords, renamed

#: Normal quantile of the 95 % Monte-Carlo band.
Z95 = _s.Z95
wilson = _s.wilson  # the Wilson band, shared with the studies' verdicts (`StudyResult.summary`)
#: Resamples when the planned test needs them (the studies' default).
REPLICATES = 1000


@dataclass(frozen=True, repr=False)
class TopicsResult(Result):
    """Simulated power against the number of topics (``n``, ascending: every size the search
    evaluated) and the answer ``topics``: the smallest n whose power reaches ``target`` (None
    when even ``max_topics`` does not). Per n: ``power``, its Monte-Carlo ``se`` =
    sqrt(p (1 - p) / trials), the 95 % Wilson band ``low``, ``high`` and ``trials`` (the
    trials where the test is defined)."""

    _coords: ClassVar[dict] = {"n": {"n": "n"}}
    _constants: ClassVar[tuple] = ("measure", "test", "tails")

    measure: str
    test: str = param(doc="Name of the planned test of the battery.")
    tails: str = param(doc="The alternative of the planned test.")
    significance: float = param(doc="Significance level of the planned test.")
    delta: float = param(doc="The effect size the power is simulated against.")
    target: float = param(doc="The power wanted.")
    topics: int | None = param(doc="The answer: the smallest number of topics whose power reaches ``target`` (None if "
                                   "none does).")
    min_topics: int = param(doc="Smallest number of topics searched.")
    max_topics: int = param(doc="Largest number of topics searched.")
    replicates: int
    seed: int
    collections: str = param(doc="The collections whose fitted models were simulated.")
    fits: str = param(doc="Where the fitted models came from (JSON).")
    skipped: str = param(doc="Pairs whose transformation or calibration failed (JSON).")
    n: tuple = param(doc="Numbers of topics evaluated, ascending (the labels of the ``n`` dim).")
    power: np.ndarray = array("n", doc="Simulated power at each n.")
    se: np.ndarray = array("n", doc="Monte-Carlo standard error of ``power``, ``sqrt(p (1 - p) / trials)``.")
    low: np.ndarray = array("n", doc="Lower limit of the 95 % Wilson band of ``power``.")
    high: np.ndarray = array("n", doc="Upper limit of the 95 % Wilson band of ``power``.")
    trials: np.ndarray = array("n", doc="Trials at each n where the test is defined.")

    @property
    def alpha(self) -> float:
        """Deprecated spelling of `significance` (``alpha`` names the risk tests' own alpha)."""
        import warnings

        warnings.warn("TopicsResult.alpha is deprecated: use TopicsResult.significance", DeprecationWarning,
                      stacklevel=2)
        return self.significance

    @property
    def reached(self) -> bool:
        return self.topics is not None

    def summary(self) -> str:
        """One line: the answer and the power there."""
        head = f"{self.test} ({self.tails}, significance {self.significance:g}) at delta {self.delta:g} on {self.measure}"
        if self.topics is None:
            return (f"{head}: power {self.power[-1]:.3f} at {self.n[-1]} topics, below the target "
                    f"{self.target:g} (raise max_topics)")
        k = self.n.index(self.topics)
        return (f"{head}: {self.topics} topics reach power {self.target:g} (simulated {self.power[k]:.3f} "
                f"+- {self.se[k]:.3f})")

    def plot(self, path=None, *, ax=None):
        """Power against topics with its 95 % Monte-Carlo band, the target and the answer;
        saved at ``path`` (SVG, PNG or PDF by its suffix) when given. Returns the Figure."""
        from matplotlib.figure import Figure  # optional, slow to import

        fig = None
        if ax is None:
            fig = Figure(figsize=(5.2, 3.4), layout="constrained")
            ax = fig.subplots()
        n = np.asarray(self.n, dtype=np.float64)
        ax.fill_between(n, self.low, self.high, alpha=0.25, color="C0", linewidth=0,
                        label="95 % Monte-Carlo band (Wilson)")
        ax.plot(n, self.power, "o-", color="C0", markersize=3, label=f"simulated power, {self.test}")
        ax.axhline(self.target, color="0.4", linestyle="--", linewidth=0.8, label=f"target {self.target:g}")
        if self.topics is not None:
            ax.axvline(self.topics, color="C3", linestyle=":", linewidth=1.0, label=f"{self.topics} topics")
        ax.set_xlabel("topics")
        ax.set_ylabel("power")
        ax.set_ylim(0, 1.02)
        ax.set_title(f"{self.measure}: {self.test} ({self.tails}), significance {self.significance:g}, delta = {self.delta:g}",
                     fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
        fig = fig or ax.figure
        if path is not None:
            path = Path(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            save_figure(fig, path, dpi=110)
        return fig


def needs_resamples(test: str, trisk_alpha) -> bool:
    """Whether the battery computes ``test`` only with resamples (its p-value is NaN with
    ``replicates=0``): asked of the battery itself on one pair, so a new member needs nothing here."""
    pair = np.array([[[0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [0.15, 0.4, 0.25, 0.6, 0.9, 0.65]]])
    res = battery(pair, replicates=0, trisk_alpha=trisk_alpha, protocol="urbano2019", tests=[test])
    return bool(np.isnan(res.pvalue[0, res.tests.index(test)]).all())


def _topics_iv(test, significance, delta, power, tails, trials, replicates, trisk_alpha, min_topics, max_topics):
    names = battery_test_names(trisk_alpha, True)  # the opt-in risk inferences too
    if test not in names:
        raise InputError(f"`test` must be a test of the battery ({', '.join(names)}; TRisk at other alphas "
                         f"with `trisk_alpha`), got {test!r}")
    choice(tails, "tails", _s.TAILS)
    level(significance, "significance")
    open_unit(power, "power", "a target power")
    open_unit(delta, "delta", "an effect size")
    positive_int(trials, "trials")
    for name, v in (("min_topics", min_topics), ("max_topics", max_topics)):
        if positive_int(v, name) < 2:
            raise InputError(f"`{name}` must be at least 2 topics, got {v!r}")
    if min_topics > max_topics:
        raise InputError(f"`min_topics` ({min_topics}) exceeds `max_topics` ({max_topics})")
    if replicates is None:
        return REPLICATES if needs_resamples(test, trisk_alpha) else 0
    if non_negative_int(replicates, "replicates") == 0 and needs_resamples(test, trisk_alpha):
        raise InputError(f"`{test}` needs resamples: `replicates` must be positive")
    return int(replicates)


def topics(collections=None, *, measure=None, test: str = "t", significance: float = 0.05, delta: float = 0.05,
           power: float = 0.8, tails: str = "two-sided", trials: int = 10000, replicates: int | None = None,
           rng: SeedLike = None, trisk_alpha=(1.0, 5.0), min_diff: float = 0.01, min_topics: int = 2,
           max_topics: int = 1000, executor=None, chunk: int = _s.CHUNK, progress: bool | None = None,
           cache=None, ties_seed: int = 0, sampling: Sampling | None = None,
           execution: Execution | None = None, alpha: float | None = None) -> TopicsResult:
    """The smallest number of topics at which ``test`` reaches ``power`` at level ``significance``
    against an effect ``delta``, simulated on the fitted models of ``collections``.

    Power at n topics is `fastrisk.simulate.power`'s (the protocol of Urbano, Lima & Hanjalic,
    SIGIR 2019: H1 pairs whose experimental run's margin is transformed to mean mu_b + delta;
    a risk test's own pairs, calibrated to URisk_alpha = delta or E[s(d)] = delta),
    the share of ``trials`` in which the test rejects at ``significance`` (``tails``: 'two-sided', as
    in Sakai's topic set size design, or 'one-tailed', H1: e > b). The sizes searched and the
    search are described in the module docstring; every size uses the same trials (seed
    ``rng``).

    Parameters
    ----------
    collections : str, path, sequence or mapping, optional
        Bundled matrix names, score-matrix files (any format `fastrisk.read_matrix` reads; the
        Parquet of ``fastrisk evaluate --matrix-out`` names its measure) or {name: ScoreMatrix}
        (see `fastrisk.simulate.studies.load_collections`); None: the study's bundled
        collections of ``measure`` (default AP).
    measure : str, optional
        The measure, when the collections do not name it (any measure on [0, 1]).
    test : str
        A test of the battery (`fastrisk.simulate.battery`): t, wilcoxon, sign, bootstrap,
        permutation, trisk@A and bootstrap_risk@A (A in ``trisk_alpha``; at A > 0 planned on
        their own null's pairs, delta being URisk_A), trisk_smooth, zrisk, georisk.
    significance, delta, power : float
        Significance level, effect size (difference in mean score) and target power (``alpha``:
        the deprecated spelling of ``significance``; ``alpha`` names the risk tests' own alpha).
    trials : int
        Simulated pairs per size (Monte-Carlo SE <= 0.5 / sqrt(trials)).
    replicates : int, optional
        Resamples of the resampling tests (None: 1000 if ``test`` needs them, else 0).
    tails : {"two-sided", "one-tailed"}
        The alternative (one-tailed: H1 e > b).
    rng : seed, optional
        The study seed, common to every size.
    trisk_alpha : sequence of float
        The alphas of the battery's TRisk tests (``test="trisk@A"`` needs A among them).
    min_diff : float
        Sign test: a difference within this is a tie (the study's 0.01).
    min_topics, max_topics : int
        The range searched.
    executor, chunk, cache, ties_seed
        As `fastrisk.simulate.power`.
    progress : bool, optional
        Print each size's power to stderr as it is computed.
    sampling : Sampling, optional
        ``trials``, ``replicates`` and ``rng`` as one object (`fastrisk.simulate.options`, as the
        studies take it; no shared resamples here); not both it and those keywords.
    execution : Execution, optional
        ``executor``, ``chunk``, ``progress``, ``cache`` and ``ties_seed`` as one object (no
        checkpoint here).
    alpha : float, optional
        Deprecated spelling of ``significance`` (a `DeprecationWarning`).

    Returns
    -------
    TopicsResult
        The curve (``n``, ``power``, ``se``, ``low``, ``high``, ``trials``) and the answer
        ``topics`` (None when ``max_topics`` does not reach the target).

    Raises
    ------
    InputError
        A collection keeps fewer than 11 runs (`fastrisk.simulate.studies.runs_needed`: the
        study's H1 pairs, and a risk test's own pairs, are a baseline and its 10 nearest runs).
    """
    values = renamed(topics, locals(), alpha="significance")
    significance = values["significance"]
    sampling, execution = from_keywords(topics, values, only=("sampling", "execution"))
    if sampling.shared_resamples is not False:
        raise InputError("topics draws independent resamples: `sampling.shared_resamples` must be False")
    if execution.out is not None or execution.resume:
        raise InputError("topics keeps no checkpoint: `execution.out` must be None and `execution.resume` False")
    trials, replicates, rng = sampling.trials, sampling.replicates, sampling.rng
    executor, cache, ties_seed, progress = execution.executor, execution.cache, execution.ties_seed, execution.progress
    replicates = _topics_iv(test, significance, delta, power, tails, trials, replicates, trisk_alpha, min_topics,
                            max_topics)
    key, items = _s.load_collections(measure, collections)
    _s._stage(progress, f"topics: fit: the models of {len(items)} collection(s) of {key} (cached ones are read)")
    fitted = _s.fit_collections(items, key, executor=executor, cache=cache, ties_seed=ties_seed,
                                progress=progress)  # once for all n
    # the battery's TRisk only at the planned test's alpha (its trials and p-values are the same); `tests=`
    # simulates only the planned test's group of trials and calibrates only its null
    _, a = _bt.lookup(test)  # a family's test (trisk@A, bootstrap_risk@A): its alpha
    plan_alpha = [] if a is None else [a]
    rseed = resolve_seed(rng)
    seed = rseed.kernel
    points: dict[int, tuple] = {}
    meta = {}

    def at(n: int) -> float:
        if n not in points:
            _s._stage(progress, f"topics: simulate {trials} trials at n = {n} topics")
            r = _s._run(("power",), key, n, deltas=[delta], sampling=Sampling(trials, replicates, seed),
                        selection=TestSelection(tests=(test,), trisk_alpha=plan_alpha, min_diff=min_diff,
                                                  significance=[significance]),
                        execution=replace(execution, progress=False), collections=items, nested=int(max_topics),
                        fitted=fitted)["power"]  # only the test's trials (a risk test: its own null, #28)
            k, t = r.tests.index(test), r.tails.index(tails)
            rate, valid = float(r.rate[0, k, t, 0]), int(r.n[0, k, t, 0])
            points[n] = (0.0 if math.isnan(rate) else rate, valid)
            meta.update(fits=r.fits, skipped=r.skipped)
            if progress:
                print(f"topics: n = {n}: power {points[n][0]:.4f} ({valid} trials)", file=sys.stderr)
        return points[n][0]

    answer = _search(at, power, int(min_topics), int(max_topics))
    sizes = tuple(sorted(points))
    p = np.array([points[k][0] for k in sizes])
    m = np.array([points[k][1] for k in sizes], dtype=np.int64)
    low, high = wilson(p, m)
    return TopicsResult(measure=key, test=test, tails=tails, significance=float(significance), delta=float(delta),
                        target=float(power), topics=answer, min_topics=int(min_topics), max_topics=int(max_topics),
                        replicates=int(replicates), seed=int(rseed.recorded), collections=", ".join(items),
                        fits=meta["fits"], skipped=meta["skipped"], n=sizes, power=p,
                        se=np.sqrt(p * (1 - p) / np.maximum(m, 1)), low=low, high=high, trials=m)


def _guess(points, target: float) -> float | None:
    """The size at which a line through two (n, power) ``points`` reaches ``target`` on the scale
    of the normal approximation of a test's power, p(n) ~ Phi(sqrt(n) delta / sigma - z) (Sakai
    2016, sec. 3, without the t correction): Phi^-1(p) is linear in sqrt(n). None when the line
    does not rise (a flat or noisy stretch of the curve)."""
    (n1, p1), (n2, p2) = points
    y1, y2, yt = special.ndtri(np.clip([p1, p2, target], 1e-6, 1 - 1e-6))
    x1, x2 = math.sqrt(n1), math.sqrt(n2)
    if not (n2 > n1 and y2 > y1):
        return None
    return (x2 + (yt - y2) * (x2 - x1) / (y2 - y1)) ** 2


#: The growth step's overshoot of the guessed size (so that it lands just above the answer).
OVERSHOOT = 1.1


def _search(at, target: float, lo: int, hi: int) -> int | None:
    """Smallest n in [lo, hi] with at(n) >= target on a non-decreasing curve (None if at(hi) <
    target), never evaluating a size twice.

    Growth from n = lo: the next size is `OVERSHOOT` times the guess (`_guess`) through the last
    two sizes, at least n + 1 and at most 2n (2n without a guess), capped at hi, until at(n) >=
    target. Then, between the last size below the target and the first at or above it, the
    guess through those two (regula falsi on the normal-approximation scale) kept strictly
    inside them, or their midpoint after two guesses on one side (the Illinois safeguard),
    until they are adjacent. On any non-decreasing curve this is the bisection's answer; on
    power curves, whose normal approximation is near-linear, it needs a few sizes near the
    answer instead of a doubling past it and log2(answer) bisection steps."""
    seen: list[tuple[int, float]] = []

    def value(n):
        seen.append((n, at(n)))
        return seen[-1][1]

    below, n = None, lo
    while value(n) < target:
        if n >= hi:
            return None
        g = _guess(seen[-2:], target) if len(seen) > 1 else None
        step = 2 * n if g is None or not math.isfinite(g) else min(2 * n, max(n + 1, math.ceil(OVERSHOOT * g)))
        below, n = n, min(step, hi)
    if below is None:
        return n
    lo_p, hi_p, side = dict(seen)[below], dict(seen)[n], 0
    while n - below > 1:
        g = _guess([(below, lo_p), (n, hi_p)], target)
        mid = (below + n) // 2 if g is None or abs(side) >= 2 else min(n - 1, max(below + 1, round(g)))
        if value(mid) >= target:
            n, hi_p, side = mid, seen[-1][1], min(side, 0) - 1
        else:
            below, lo_p, side = mid, seen[-1][1], max(side, 0) + 1
    return n
