"""The results of the resampling procedures."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from fastrisk.data.results import ConfidenceInterval, Result, array, param
from fastrisk.errors import InputError


@dataclass(frozen=True, repr=False)
class QQData(Result):
    """Replicates against the normal: ``theoretical`` N(0, 1) quantiles ``[quantile]`` at
    plotting positions ``probabilities``, ``sample`` the standardised replicate quantiles
    ``[alpha, system, quantile]``.

    Long form (one row per alpha, system, quantile): ``alpha``, ``loss_weight``, ``system``,
    ``quantile``, ``probability``, ``theoretical``, ``sample``.
    """

    systems: tuple
    alpha: np.ndarray | None
    loss_weight: np.ndarray | None = None
    probabilities: np.ndarray = array("quantile", column="probability", default=None, doc="Plotting positions ``(i + "
                                                                                          "0.5) / Q`` of the quantiles.")
    theoretical: np.ndarray = array("quantile", default=None, doc="N(0, 1) quantiles at ``probabilities``.")
    sample: np.ndarray = array("alpha", "system", "quantile", default=None, doc="Quantiles of the standardised "
                                                                                "replicates.")


@dataclass(frozen=True, repr=False)
class _Labelled(Result):
    """What every result of the many-columns procedures shares: ``statistic`` and ``urisk``
    ``[alpha, system]`` and the labels of its columns (system and baseline, or the two systems of a pair) and rows
    (alpha / loss weight, value function). Long forms have one row per (alpha, column).

    ``convention="minus"`` (Benham, Moffat & Culpepper 2019: larger is riskier) reports the
    negated estimate -theta: statistics, biases, replicates and t negated, intervals mirrored
    (-high, -low), and the test run with the alternative swapped, so that ``alternative``
    refers to the reported (negated) statistic and p-values keep their meaning.

    ``statistic`` is always the test statistic of the result's ``pvalue`` (scipy's meaning;
    for `JackknifeResult`, which tests nothing, the jackknifed statistic's value), ``urisk``
    the mean per-topic score (URisk against a baseline; None when a user ``statistic`` was
    resampled instead of the mean)."""

    _coords = {"system": {"system": "systems", "baseline": "baselines"}}
    _table = ("alpha", "system")

    systems: tuple
    baselines: tuple
    alpha: np.ndarray | None
    loss_weight: np.ndarray | None
    value: str | None
    statistic: np.ndarray = array("alpha", "system")
    urisk: np.ndarray | None = array("alpha", "system", default=None)
    convention: str = "classic"


@dataclass(frozen=True, repr=False)
class BootstrapResult(_Labelled):
    """Bootstrap over topics of every column (system vs baseline, or pair) and alpha.

    Arrays ``[alpha, system]``: A alphas (1 for value functions and plain arrays), K systems
    or pairs. The estimate theta is the resampled statistic on the original topics: ``urisk``
    for the default statistic (the mean), the user's ``statistic`` otherwise. ``pvalue`` is
    the paired bootstrap test of theta = 0 (replicates shifted to the null), and
    ``statistic`` its test statistic: theta itself for ``test="shift"``, the studentised
    ``theta / SE`` (``SE = s / sqrt(c)``; 0 where s = 0) for ``test="t"`` (Sakai 2006;
    Urbano, Lima & Hanjalic 2019). ``bias`` is mean(replicates) minus theta,
    ``standard_error`` the replicates' SD, ``confidence_interval`` a ``(low, high)`` named
    tuple around theta (None for ``method=None``). ``bootstrap_distribution`` ``[alpha, system, replicate]`` (replicates
    of theta) is kept when asked for (or small enough), else None.

    Long form (one row per alpha, system): ``alpha``, ``loss_weight``, ``system``,
    ``baseline``, ``statistic``, ``urisk``, ``standard_error``, ``pvalue``, ``bias``,
    ``ci_low``, ``ci_high``.
    """

    _derived = {"ci_low": ("alpha", "system"), "ci_high": ("alpha", "system")}

    standard_error: np.ndarray = array("alpha", "system", default=None,
                                       doc="Bootstrap standard error of theta (the replicates' SD).")
    confidence_interval: ConfidenceInterval | None = None
    pvalue: np.ndarray = array("alpha", "system", default=None)
    bias: np.ndarray = array("alpha", "system", default=None, doc="mean(replicates) - theta.")
    bootstrap_distribution: np.ndarray | None = array("alpha", "system", "replicate", default=None,
                                                      doc="Replicates of theta (None unless kept).")
    method: str = "percentile"
    confidence_level: float = 0.95
    alternative: str = "two-sided"
    test: str = "shift"
    replicates: int = 0
    seed: int = 0
    path: str = param("linear", doc="How the replicates were computed: ``linear`` (the mean, one pass) or ``generic`` "
                                    "(a user's statistic on each resample).")

    @property
    def ci_low(self) -> np.ndarray | None:
        """Lower confidence limit, ``confidence_interval.low`` (None without an interval)."""
        return None if self.confidence_interval is None else self.confidence_interval.low

    @property
    def ci_high(self) -> np.ndarray | None:
        """Upper confidence limit, ``confidence_interval.high`` (None without an interval)."""
        return None if self.confidence_interval is None else self.confidence_interval.high

    def qq(self, points: int | None = None) -> QQData:
        """Q-Q data of the standardised replicates against the normal (Benham et al. 2019, Fig. 3).

        ``points``: number of plotting positions (default: one per replicate).
        """
        if self.bootstrap_distribution is None:
            raise InputError("Q-Q data needs the replicates: call bootstrap(..., keep_replicates=True)")
        reps = self.bootstrap_distribution
        B = reps.shape[-1]
        Q = B if points is None else int(points)
        if Q < 1:
            raise InputError(f"`points` must be a positive integer, got {points!r}")
        p = (np.arange(Q) + 0.5) / Q
        mean = reps.mean(axis=-1, keepdims=True)
        sd = reps.std(axis=-1, ddof=1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = (reps - mean) / sd
        sample = np.sort(z, axis=-1) if Q == B else np.moveaxis(np.quantile(z, p, axis=-1), 0, -1)
        return QQData(systems=self.systems, alpha=self.alpha, loss_weight=self.loss_weight, probabilities=p,
                      theoretical=special.ndtri(p), sample=sample)


@dataclass(frozen=True, repr=False)
class PermutationResult(_Labelled):
    """Paired randomisation (sign-flip) test of every column and alpha; arrays ``[alpha, system]``.

    ``exact`` says whether all ``2^c`` sign patterns were enumerated (then ``replicates`` is
    ``2^c`` and the p-value is exact) or ``replicates`` random ones were drawn (p-value
    ``(count + 1) / (B + 1)``). ``null_distribution`` ``[alpha, system, replicate]`` or None.
    ``null_hypothesis`` says what the p-value tests: symmetry of the per-topic differences
    about 0, the same for every alpha (see `permutation_test`); the baseline's own column
    has p-value NaN.

    The test statistic is the mean per-topic score (URisk against a baseline): ``statistic``
    and ``urisk`` are the same array, and ``null_distribution`` holds its sign-flip replicates.

    Long form (one row per alpha, system): ``alpha``, ``loss_weight``, ``system``,
    ``baseline``, ``statistic``, ``urisk``, ``pvalue``.
    """

    pvalue: np.ndarray = array("alpha", "system", default=None)
    null_distribution: np.ndarray | None = array("alpha", "system", "replicate", default=None)
    alternative: str = "two-sided"
    replicates: int = 0
    exact: bool = False
    seed: int | None = None
    null_hypothesis: str = param("the per-topic differences are symmetric about 0 (system and baseline "
                                 "exchangeable); the same p-value for every alpha", doc="What the p-value tests, in words.")


@dataclass(frozen=True, repr=False)
class JackknifeResult(_Labelled):
    """Leave-one-topic-out jackknife (Efron 1982; Dinçer et al. 2014): ``standard_error`` and
    ``bias`` ``[alpha, system]``; ``leave_one_out`` and ``pseudo_values`` ``[alpha, system, topic]``.

    It tests nothing: ``statistic`` is the value of the jackknifed statistic on all topics
    (the mean by default, then also ``urisk``), as scipy's ``statistic`` argument.

    Long form (one row per alpha, system): ``alpha``, ``loss_weight``, ``system``,
    ``baseline``, ``statistic``, ``urisk``, ``standard_error``, ``bias``.
    """

    topics: tuple = ()
    standard_error: np.ndarray = array("alpha", "system", default=None, doc="Jackknife standard error SE_J.")
    bias: np.ndarray = array("alpha", "system", default=None, doc="Jackknife bias ``(c - 1)(theta_(.) - theta)``.")
    leave_one_out: np.ndarray = array("alpha", "system", "topic", default=None,
                                      doc="``theta_(i)``: the statistic without topic i.")
    pseudo_values: np.ndarray = array("alpha", "system", "topic", default=None)
