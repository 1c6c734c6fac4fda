"""A model-calibrated TRisk (issue #37, item 2): TRisk's null distribution simulated from the
pair's own fitted joint law, shifted to the null (`calibrated_trisk`, `CalibratedTRiskResult`).

TRisk (Dinçer, Macdonald & Ounis 2014) refers T = mean(x) / (s / sqrt(n)) of the risk-reward
scores x_i = v(e_i - b_i) to Student's t with n - 1 df; at alpha >= 2 and ordinary n its level
is off because x is skewed and heavy-tailed (docs/risk-tests.md). Here the null distribution of
T is simulated instead, a parametric bootstrap test (Davison & Hinkley 1997, §4.2.3; Efron &
Tibshirani 1993, ch. 16): the model is the pair's simIReff margins and their copula fitted on
its n topics (Urbano, Lima & Hanjalic 2019; Urbano & Nagler 2018), e's margin transformed by
simIReff's ``effTransform`` so that E[v(E - B)] = 0 under the fitted law
(`fastrisk.simulate.nulls.calibrate_pair`), exactly the copula null of `fastrisk.simulate.pair`
(`CopulaNull`). The fitted margins are smooth (kernel, beta, truncated normal) where the topics
are a handful of points, so the simulated T* sees tails the topics did not.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from fastrisk._runtime.rng import resolve_seed
from fastrisk._runtime.threads import limit_threads
from fastrisk._runtime.validation import positive_int
from fastrisk.data.results import Result, array, param
from fastrisk.errors import InputError
from fastrisk.simulate.nulls import RiskNull
from fastrisk.simulate.pair import CopulaNull, _int_iv, _matrix_iv, _pair_study_iv, _stage

#: Parametric-bootstrap samples by default (Monte-Carlo SE of a p-value near 0.05: 0.005). The
#: draws cost about 90 us (Student copula) to 450 us (BB8: its inverse h-function is numerical) a
#: sample of 50 topics, so 9,999 would make a call 1.5-5 s instead of 1-2 s (fit ~0.6-0.8 s).
REPLICATES = 1999
#: Most samples `calibrated_trisk` takes.
MAX_REPLICATES = 10**7
#: Samples drawn at once (memory: 2 x 8 x n bytes each): the numbers do not depend on it.
CHUNK = 20000
#: Each draw asks for a multiple of this many samples (the extra ones dropped): pyvinecopulib's
#: vectorised inverse h-function computes the last (length mod 4) values of an array on another
#: path, 1 ulp apart, so without it the last sample's T* would depend on R.
BLOCK = 16


@dataclass(frozen=True, repr=False)
class CalibratedTRiskResult(Result):
    """TRisk of one pair of runs with its p-values from a parametric bootstrap of the pair's
    fitted, null-calibrated copula model (`calibrated_trisk`); ``summary()`` says it in a line."""

    _coords: ClassVar[dict] = {}
    _constants: ClassVar[tuple] = ("baseline", "system", "value", "alpha")
    _table: ClassVar[tuple] = ()

    measure: str = param(doc="The measure of the scores (the family of the fitted margins).")
    baseline: str = param(doc="The baseline run b.")
    system: str = param(doc="The experimental run e (d = e - b).")
    value: str = param(doc="The value function: ``linear`` (v(d) = d + alpha min(d, 0), URisk_alpha) or "
                           "``smooth`` (Benham, Moffat & Culpepper's s(d); ``alpha`` NaN).")
    alpha: float = param(doc="The risk alpha of v(d) = d + alpha min(d, 0) (NaN for the smooth value function).")
    topics: int = param(doc="The pair's number of topics n (the size of every simulated sample).")
    replicates: int = param(doc="Parametric-bootstrap samples R of n topics drawn from the calibrated model.")
    seed: int = param(doc="The seed of the samples: pass it as ``seed=`` to reproduce the result.")
    calibrated_mean: float = param(doc="e's mean after calibration (the mean effTransform was asked for), against "
                                       "its fitted margin's ``mean`` in ``model``.")
    model: str = param(doc="The null model (JSON): b's and e's fitted margin families and means, the copula "
                           "(family, rotation, parameters), and e's calibration (requested mean, E[v(E - B)] "
                           "reached, effTransform's beta parameters).")
    urisk: np.ndarray = array(doc="The observed mean of x = v(e - b) over the n topics (URisk_alpha, or E[s(d)] "
                                  "estimated).")
    statistic: np.ndarray = array(doc="TRisk T = mean(x) / (s / sqrt(n)), s the sample standard deviation of x "
                                      "(n - 1 denominator).")
    pvalue: np.ndarray = array(doc="Two-sided p-value (1 + #{|T*_r| >= |T|}) / (R + 1).")
    pvalue_greater: np.ndarray = array(doc="One-sided p-value against E[x] > 0 (e better): (1 + #{T*_r >= T}) / "
                                           "(R + 1).")
    pvalue_less: np.ndarray = array(doc="One-sided p-value against E[x] < 0 (e worse): (1 + #{T*_r <= T}) / "
                                        "(R + 1).")
    t_pvalue: np.ndarray = array(doc="TRisk's published two-sided p-value (Student's t, n - 1 df), for comparison.")
    null_distribution: np.ndarray = array("replicate", doc="T*_r of each parametric-bootstrap sample r under the "
                                                           "calibrated model (R values).")

    @property
    def name(self) -> str:
        """``TRisk_5`` (alpha = 5) or ``TRisk_s`` (the smooth value function)."""
        return "TRisk_s" if self.value == "smooth" else f"TRisk_{self.alpha:g}"

    def summary(self) -> str:
        """One line: the pair, T, the three model-calibrated p-values and Student's."""
        return (f"{self.system} against {self.baseline}: {self.name} = {float(self.statistic):.4g} over "
                f"{self.topics} topics; model-calibrated p = {float(self.pvalue):.4g} (two-sided), "
                f"{float(self.pvalue_greater):.4g} (greater: e better), {float(self.pvalue_less):.4g} (less) from "
                f"{self.replicates} samples of the fitted model at {'E[s(d)]' if self.value == 'smooth' else 'URisk'}"
                f" = 0; Student's t: p = {float(self.t_pvalue):.4g} (two-sided)")


def trisk_statistics(X: np.ndarray) -> np.ndarray:
    """T = mean(x) / (s / sqrt(n)) of each row of ``X`` (topics on the last axis). A row
    without variation has s = 0: T = 0 when its mean is 0 too, else +-inf (its sign)."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[-1]
    m = X.mean(axis=-1)
    s = X.std(axis=-1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        T = m / (s / math.sqrt(n))
    flat = np.ptp(X, axis=-1) == 0  # (s of equal values can be 1e-17, not 0)
    return np.where(flat, np.where(m == 0, 0.0, np.copysign(np.inf, m)), T)


def bootstrap_pvalues(T: float, null: np.ndarray) -> tuple[float, float, float]:
    """(two-sided, greater, less) p-values of T against R simulated T*: (1 + #{|T*| >= |T|}) /
    (R + 1), (1 + #{T* >= T}) / (R + 1), (1 + #{T* <= T}) / (R + 1): the Monte Carlo p-value of
    Davison & Hinkley (1997, §4.2.1), the observed sample counted among the R + 1."""
    R = null.size
    return ((1 + int(np.count_nonzero(np.abs(null) >= abs(T)))) / (R + 1),
            (1 + int(np.count_nonzero(null >= T))) / (R + 1), (1 + int(np.count_nonzero(null <= T))) / (R + 1))


def _calibrated_trisk_iv(matrix, baseline, system, alpha, replicates, measure, threads):
    mat, key = _matrix_iv(matrix, measure)
    if isinstance(alpha, str):
        if alpha != "smooth":
            raise InputError(f"`alpha` must be a finite number >= 0 or 'smooth' (the smooth value function), got "
                             f"{alpha!r}")
        null, alpha_iv = RiskNull("smooth"), 0.0
    else:
        null, alpha_iv = None, alpha  # checked by _pair_study_iv
    n = len(mat.topics)
    if n < 3:
        raise InputError(f"the matrix has {n} topic(s): a calibrated TRisk needs at least 3 (T has n - 1 df)")
    if key is None:
        raise InputError("calibrated_trisk needs the measure of the scores (the family of its fitted margins): give "
                         "`measure` (e.g. AP, nDCG@10, P@10)")
    # the checks of a pair study's copula null: the runs, alpha, finite scores in [0, 1], a difference that varies
    mat, key, rows, alpha_iv = _pair_study_iv(mat, baseline, system, alpha_iv, n, 1, (1.0,), ("t",), 0.05, 0.8, (n,),
                                              "two-sided", None, None, key, ("copula",))[:4]
    if null is None:
        null = RiskNull("urisk", float(alpha_iv))
    R = _int_iv("replicates", int(replicates) if isinstance(replicates, np.integer) else replicates, 1,
                MAX_REPLICATES)
    if threads is not None:
        positive_int(threads, "threads")
    return mat, key, rows, null, R


def calibrated_trisk(matrix, baseline, system, *, alpha: float | str = 5.0, replicates: int = REPLICATES,
                     measure: str | None = None, seed=None, threads: int | None = None, ties_seed: int = 0,
                     progress: bool | None = None) -> CalibratedTRiskResult:
    """TRisk of ``system`` against ``baseline`` with its null distribution simulated from the
    pair's own fitted margins and copula, calibrated to URisk_alpha = 0: a parametric bootstrap
    test that sees tails the topics did not.

    With d_i = e_i - b_i over the pair's n topics and x_i = v(d_i), v(d) = d + alpha min(d, 0)
    (URisk_alpha; Dinçer, Macdonald & Ounis 2014), the statistic is TRisk

        T = mean(x) / (s / sqrt(n)),   s^2 = sum (x_i - mean(x))^2 / (n - 1).

    TRisk's published p-value refers T to Student's t (``t_pvalue``), whose level is off when x
    is skewed and heavy-tailed (at alpha >= 2 and ordinary n, docs/risk-tests.md). Here T's null
    distribution is simulated from a model of the pair instead (Davison & Hinkley 1997, §4.2;
    Efron & Tibshirani 1993, ch. 16):

    1. **fit**: b's and e's simIReff margins (Urbano, Lima & Hanjalic 2019;
       `fastrisk.simulate.fit_margin`, by the measure's support) and their copula (VineCopula's
       ``BiCopSelect``, `fastrisk.simulate.fit_copula`; Urbano & Nagler 2018) on the n topics;
    2. **calibrate**: e's margin transformed by simIReff's ``effTransform`` to the mean at
       which E[v(E - B)] = 0 under the fitted joint law (`fastrisk.simulate.nulls`: the
       expectation by quadrature, Newton steps on the requested mean), so H0: URisk_alpha = 0
       holds in the model;
    3. **simulate**: R samples of n topics (u_1, u_2 from the counter-based stream (seed, r),
       b = F_b^-1(u_1), e = F_e^-1(h^-1(u_2 | u_1)), the copula's inverse h-function), each
       sample's x*_r and its T*_r;
    4. **p-values** (the observed sample counted among the R + 1):
       two-sided p = (1 + #{|T*_r| >= |T|}) / (R + 1), greater (e better)
       p = (1 + #{T*_r >= T}) / (R + 1), less p = (1 + #{T*_r <= T}) / (R + 1).

    A sample without variation (possible with discrete margins and few topics) has T* = 0 when
    its mean is 0, else +-inf. ``alpha="smooth"``: v = s(d) = 1.38426 d^3 - 0.51659 d^2 +
    0.11578 d (Benham, Moffat & Culpepper 2019) and H0: E[s(d)] = 0, calibrated the same way.

    The p-value is exact for the fitted model; for the pair's true law it is as good as the
    model (a parametric bootstrap: its error is that of the fit, which uses the same n topics).
    Sample r depends on (seed, r) alone: the same result whatever ``threads``.

    Parameters
    ----------
    matrix : ScoreMatrix, str or path-like
        The runs' scores (systems x topics, in [0, 1]), a score-matrix file (any format
        `fastrisk.read_matrix` reads) or a bundled matrix name; any number of runs >= 2.
    baseline, system : str
        The baseline b and the experimental run e, by name.
    alpha : float or "smooth"
        The risk alpha (>= 0; default 5), or ``"smooth"`` for the smooth value function.
    replicates : int
        Parametric-bootstrap samples R (default 1,999; Monte-Carlo SE of a p-value near 0.05:
        sqrt(0.05 * 0.95 / R) = 0.005).
    measure : str, optional
        The measure of the scores (the margins' family: continuous or on a lattice); default
        the matrix's own.
    seed : int, SeedSequence or Generator, optional
        Seed of the samples (None: fresh entropy, recorded in the result: ``seed=res.seed``
        reproduces it).
    threads : int, optional
        Numba threads of the draws (default: all cores); the numbers do not depend on it.
    ties_seed : int
        The copula fit's draw of random tie-breaking (`fastrisk.simulate.fits.ties_base_seed`).
    progress : bool, optional
        A line per stage (fit, simulate) on standard error (default: on a terminal).

    Returns
    -------
    CalibratedTRiskResult
        ``statistic`` (T), ``pvalue`` (two-sided), ``pvalue_greater``, ``pvalue_less``,
        ``t_pvalue`` (Student's), ``null_distribution`` (the R values T*), ``model`` (JSON)
        and ``seed``; one row by ``to_pandas()``; ``summary()``.

    Raises
    ------
    InputError
        An unknown or identical run, fewer than 3 topics, alpha < 0, scores outside [0, 1] or
        not finite, d = e - b without variation, no measure; or a model that cannot be
        calibrated (no effTransform of e's margin reaches URisk_alpha = 0).

    References
    ----------
    Davison, A. C. & Hinkley, D. V. (1997). Bootstrap Methods and their Application, §4.2
    (parametric bootstrap tests). Cambridge University Press. Efron, B. & Tibshirani, R. J.
    (1993). An Introduction to the Bootstrap, ch. 16 (hypothesis testing with the bootstrap).
    Chapman & Hall. Dinçer, B. T., Macdonald, C. & Ounis, I. (2014). Hypothesis testing for the
    risk-sensitive evaluation of retrieval systems. SIGIR 2014. Urbano, J. & Nagler, T. (2018).
    Stochastic simulation of test collections: evaluation scores. SIGIR 2018. Urbano, J., Lima,
    H. & Hanjalic, A. (2019). Statistical significance testing in information retrieval: an
    empirical analysis of type I, type II and type III errors. SIGIR 2019. Benham, R., Moffat,
    A. & Culpepper, J. S. (2019). On the pluses and minuses of risk. AIRS 2019.

    Examples
    --------
    TREC-8 ad hoc (AP, 50 topics), run20 against run10 at alpha = 5: Student's t puts TRisk at
    p = 0.071; the pair's own model says a T this far below 0 is rarer than that (its T* are
    skewed to the right: samples that miss the rare large losses have a high mean and a small s),
    and one this far from 0 in either direction is more common:

    >>> from fastrisk.data.datasets import trec_matrix
    >>> from fastrisk.simulate import calibrated_trisk
    >>> res = calibrated_trisk(trec_matrix("adhoc8_ap"), "run10", "run20", alpha=5, replicates=999, seed=1)
    >>> res.name, round(float(res.statistic), 3), round(float(res.t_pvalue), 3)
    ('TRisk_5', -1.843, 0.071)
    >>> float(res.pvalue), float(res.pvalue_greater), float(res.pvalue_less)
    (0.118, 0.989, 0.012)
    >>> again = calibrated_trisk(trec_matrix("adhoc8_ap"), "run10", "run20", alpha=5, replicates=999, seed=res.seed)
    >>> bool(again.pvalue == res.pvalue)
    True
    """
    mat, key, rows, null, R = _calibrated_trisk_iv(matrix, baseline, system, alpha, replicates, measure, threads)
    rseed = resolve_seed(seed, name="seed")
    n = rows.shape[1]
    x = null.value(rows[1] - rows[0])
    T = float(trisk_statistics(x))
    _stage(progress, f"calibrated: fit: simIReff margins and the copula of {system} and {baseline} ({key}); "
                     f"calibrate e to {null.name} = 0")
    cn = CopulaNull(rows, key, ties_seed)
    cal = cn.calibrate(null.alpha, 0.0, null)
    if "failed" in cal:
        need = (f" ({null.name} = 0 needs e's mean gain over b to be {1 + null.alpha:g} times its mean loss, "
                "E[max(d, 0)] = (1 + alpha) E[max(-d, 0)])" if null.family == "urisk" else "")
        raise InputError(f"the null model of {system!r} against {baseline!r} cannot be calibrated to {null.name} = 0: "
                         f"{cal['failed']} (fitted: b {cn.b.family}, mean {cn.b.mean:.4f}; e {cn.e.family}, mean "
                         f"{cn.e.mean:.4f}; copula {cn.spec['family']}); the observed {null.name} is "
                         f"{float(x.mean()):.4f}{need}: a smaller alpha, or an inference that fits no model "
                         "(fastrisk.INFERENCES), can test this pair")
    _stage(progress, f"calibrated: simulate: {R} samples of {n} topics")
    Tstar = np.empty(R)
    with limit_threads(threads, work=2 * R * n):
        for lo in range(0, R, CHUNK):
            hi = min(lo + CHUNK, R)
            idx = np.arange(lo, hi + (-(hi - lo) % BLOCK), dtype=np.int64)
            d = cn.draw(0.0, 0.0, n, rseed.kernel, idx)[:hi - lo]  # v at alpha = 0: d itself
            Tstar[lo:hi] = trisk_statistics(null.value(d))
    two, greater, less = bootstrap_pvalues(T, Tstar)
    from scipy import stats  # slow to import

    model = {**cn.describe(), "null": null.name, "calibration": cal}
    return CalibratedTRiskResult(
        measure=key, baseline=str(baseline), system=str(system), value="smooth" if null.family == "smooth" else "linear",
        alpha=float("nan") if null.family == "smooth" else float(null.alpha), topics=n, replicates=R,
        seed=rseed.recorded, calibrated_mean=float(cal["mean_e"]), model=json.dumps(model), urisk=np.float64(x.mean()),
        statistic=np.float64(T), pvalue=np.float64(two), pvalue_greater=np.float64(greater),
        pvalue_less=np.float64(less), t_pvalue=np.float64(2 * stats.t.sf(abs(T), n - 1)), null_distribution=Tstar)


__all__ = ["CalibratedTRiskResult", "calibrated_trisk"]
