"""URisk, TRisk and exploratory per-topic risk of every system against one baseline.

Formulas: d_i = r_i - b_i; x_i = d_i if d_i >= 0 else (1 + alpha) d_i;
URisk = mean(x) (Wang, Bennett & Collins-Thompson 2012); TRisk = URisk / SE with
SE_x = s_x / sqrt(c) and the jackknife SE_J (Dinçer, Macdonald & Ounis, SIGIR 2014);
p-values from Student's t with c - 1 degrees of freedom. ``convention="minus"`` reports
URisk⁻ = -URisk and TRisk⁻ = -TRisk (larger = riskier; Benham, Moffat & Culpepper 2019).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import special

from fastrisk._kernels import risk as _k
from fastrisk._runtime import numerics as _numerics
from fastrisk._runtime.aliases import AlphaLike, BaselineLike, MatrixLike
from fastrisk._runtime.rng import resolve_seed
from fastrisk._runtime.threads import limit_threads, run
from fastrisk._runtime.tstat import CONVENTIONS, TRiskInference, t_critical
from fastrisk._runtime.tstat import sign as _sign
from fastrisk._runtime.validation import choice, level
from fastrisk.core import batch as _batch
from fastrisk.core import inference as _inference
from fastrisk.core.baselines import Baseline, resolve_baseline
from fastrisk.core.values import DEFAULT_ALPHAS, ValueFunction, resolve_value
from fastrisk.data.matrix import as_matrix, check_missing_policy
from fastrisk.data.results import Result, array, param
from fastrisk.errors import InputError

#: Results whose magnitudes leave this range are recomputed on rescaled scores (see _moments).
_LO, _HI = 2.0 ** -_numerics.SAFE_EXPONENT, 2.0 ** _numerics.SAFE_EXPONENT


@dataclass(frozen=True, repr=False)
class RiskScores(Result):
    """Per-topic risk-reward scores of every system against a baseline.

    Long form (one row per alpha, system, topic): ``alpha``, ``loss_weight``, ``system``,
    ``topic``, ``baseline``, ``x`` (x_i, classic convention) and ``d`` (d_i = r_i - b_i).
    """

    _constants = ("baseline",)

    systems: tuple
    topics: tuple
    alpha: np.ndarray
    loss_weight: np.ndarray
    baseline: str
    value: str
    baseline_system: int | None
    x: np.ndarray = array("alpha", "system", "topic", doc="Per-topic risk-reward score x_i (the value function of d_i; "
                                                          "linear: ``d + alpha min(d, 0)``), classic convention.")
    d: np.ndarray = array("system", "topic", doc="Per-topic difference from the baseline, ``d_i = r_i - b_i``.")


@dataclass(frozen=True, repr=False)
class RiskResult(TRiskInference, Result):
    """URisk/TRisk of every system at every alpha against one baseline.

    Arrays ``[alpha, system]``: ``urisk``, ``standard_error`` (SE_x),
    ``se_jack`` (SE_J), ``trisk`` (also ``statistic``), ``pvalue`` (two-sided, Student t,
    ``df`` = c - 1), ``at_risk`` / ``rewarding`` (TRisk beyond ∓ ``critical_t`` at level
    ``significance``). ``[system]``: ``freward``, ``frisk``, ``ugain``. ``[alpha]``:
    ``se_rmse``, the RMSE between SE_x and SE_J over systems (the agreement diagnostic). In
    the ``minus`` convention ``urisk``/``trisk`` are negated; ``at_risk`` always means
    significantly worse than the baseline.

    Long form (one row per alpha, system): ``alpha``, ``loss_weight``, ``system``,
    ``baseline``, ``convention``, ``value``, ``urisk``, ``standard_error``, ``se_jack``, ``trisk``,
    ``at_risk``, ``rewarding``, ``freward``, ``frisk``, ``ugain``, ``se_rmse``, ``pvalue``,
    ``inference`` (the test of ``pvalue``: ``t``, the published TRisk, or another of
    `fastrisk.core.inference.INFERENCES`; then ``at_risk``/``rewarding`` are p <= significance
    with URisk's sign).
    """

    _constants = ("baseline", "convention", "value", "inference")
    _derived = {"pvalue": ("alpha", "system")}

    systems: tuple
    baseline: str
    alpha: np.ndarray
    loss_weight: np.ndarray
    given: str
    convention: str
    value: str
    n_topics: int
    df: int
    significance: float
    critical_t: float
    urisk: np.ndarray = array("alpha", "system")
    standard_error: np.ndarray = array("alpha", "system")
    se_jack: np.ndarray = array("alpha", "system")
    trisk: np.ndarray = array("alpha", "system")
    at_risk: np.ndarray = array("alpha", "system")
    rewarding: np.ndarray = array("alpha", "system")
    freward: np.ndarray = array("system")
    frisk: np.ndarray = array("system")
    ugain: np.ndarray = array("system", doc="UGain: ``freward - frisk``, the mean difference from the baseline (Wang, "
                                            "Bennett & Collins-Thompson 2012).")
    se_rmse: np.ndarray = array("alpha", doc="RMSE of ``standard_error - se_jack`` over the systems: how far SE_x and "
                                             "SE_J disagree.")
    inference: str = param("t", doc="The inference behind ``pvalue``, ``at_risk`` and ``rewarding``: a name of "
                                    "`fastrisk.core.inference.INFERENCES` (``t``: Student's t, Dinçer et al. 2014).")
    #: its p-values when not Student's t (else computed on first use from ``trisk``)
    _pvalue: np.ndarray | None = field(default=None, repr=False, compare=False)

    def row(self, system: str) -> dict:
        """Every number for one system as a dict of arrays over alpha."""
        k = self.systems.index(system)
        return {name: getattr(self, name)[..., k] for name in
                ("urisk", "standard_error", "se_jack", "trisk", "pvalue", "at_risk", "rewarding")}


@dataclass(frozen=True, repr=False)
class TopicRiskResult(Result):
    """Exploratory per-topic risk (Dinçer, Macdonald & Ounis 2014, eqs. 21-23).

    Arrays ``[alpha, system, topic]``: ``x`` (signed by the convention), ``tr`` (TR_i = x_i /
    s_x), ``tj`` (TJ_i = influence_i / (sqrt(c) SE_J)), ``influence`` ((c-1)(theta -
    theta_(i))), ``pseudo_values`` (column ``pseudo_value``), significance flags
    ``loss`` / ``win`` (beyond ∓ ``critical_t``, judged on TR_i); ``bias`` ``[alpha, system]``.

    Long form (one row per alpha, system, topic): ``alpha``, ``loss_weight``, ``system``,
    ``topic``, ``baseline``, ``convention``, ``x``, ``tr``, ``tj``, ``influence``,
    ``pseudo_value``, ``bias``, ``loss``, ``win``.
    """

    _constants = ("baseline", "convention")

    systems: tuple
    topics: tuple
    baseline: str
    alpha: np.ndarray
    loss_weight: np.ndarray
    convention: str
    value: str
    df: int
    significance: float
    critical_t: float
    x: np.ndarray = array("alpha", "system", "topic", doc="Per-topic risk-reward score x_i, signed by the convention.")
    tr: np.ndarray = array("alpha", "system", "topic", doc="TR_i = x_i / s_x: the topic's standardised score (Dinçer, "
                                                           "Macdonald & Ounis 2014, eq. 21).")
    tj: np.ndarray = array("alpha", "system", "topic", doc="TJ_i = influence_i / (sqrt(c) SE_J): the topic's "
                                                           "standardised jackknife influence (eq. 23).")
    influence: np.ndarray = array("alpha", "system", "topic", doc="Jackknife influence of the topic, ``(c - 1)(theta - "
                                                                  "theta_(i))``.")
    pseudo_values: np.ndarray = array("alpha", "system", "topic", column="pseudo_value")
    bias: np.ndarray = array("alpha", "system")
    loss: np.ndarray = array("alpha", "system", "topic", doc="The topic is a significant loss: TR_i below "
                                                             "``-critical_t``.")
    win: np.ndarray = array("alpha", "system", "topic", doc="The topic is a significant win: TR_i above ``critical_t``.")


@dataclass(frozen=True, repr=False)
class AdaptiveRiskResult(Result):
    """Adaptive risk weights (Dinçer et al. 2014): alpha'_i = [1 - Φ(TR_i)] alpha.

    ``adaptive_alpha`` and ``weights`` ``[alpha, system, topic]`` (column ``weight``): the
    per-topic multipliers 1 + alpha'_i that ``method`` applies (SARO: losses only, 1
    elsewhere; FARO: every topic); ``urisk`` ``[alpha, system]``: the adaptive URisk
    mean(weight_i * d_i), signed by the convention.

    Long form (one row per alpha, system, topic): ``alpha``, ``loss_weight``, ``system``,
    ``topic``, ``baseline``, ``method``, ``convention``, ``adaptive_alpha``, ``weight``,
    ``urisk``.
    """

    _constants = ("baseline", "method", "convention")

    systems: tuple
    topics: tuple
    baseline: str
    method: str
    alpha: np.ndarray
    loss_weight: np.ndarray
    convention: str
    adaptive_alpha: np.ndarray = array("alpha", "system", "topic", doc="Per-topic risk aversion alpha'_i = [1 - "
                                                                       "Phi(TR_i)] alpha (Dinçer et al. 2014).")
    weights: np.ndarray = array("alpha", "system", "topic", column="weight", doc="Per-topic multiplier 1 + alpha'_i "
                                                                                 "that ``method`` applies (SARO: losses"
                                                                                 " only, 1 elsewhere; FARO: every "
                                                                                 "topic).")
    urisk: np.ndarray = array("alpha", "system")


# ---------------------------------------------------------------------- validation
def _risk_iv(matrix, baseline, alpha, loss_weight, value, convention, significance, missing):
    matrix = as_matrix(matrix)
    choice(convention, "convention", CONVENTIONS)
    level(significance, "significance")
    vf = resolve_value(value, alpha=alpha, loss_weight=loss_weight)
    matrix, base = resolve_baseline(matrix, baseline, missing=missing)
    if matrix.n_topics < 2:
        raise InputError(f"risk needs at least 2 topics to estimate a standard error; the matrix has "
                         f"{matrix.n_topics} ({', '.join(matrix.topics)})")
    return matrix, base, vf


# ---------------------------------------------------------------------- public API
def risk_scores(matrix: MatrixLike, baseline: BaselineLike, *, alpha: AlphaLike | None = None,
                loss_weight: AlphaLike | None = None, value=None, missing: str = "raise",
                threads: int | None = None) -> RiskScores:
    """Per-topic risk-reward scores x_i ``[alpha, system, topic]`` of every system against ``baseline``.

    x_i = d_i for wins, (1 + α) d_i for losses, d_i = r_i − b_i (Wang, Bennett &
    Collins-Thompson, SIGIR 2012): the linear statistic behind URisk, ``x.mean(-1)`` is URisk
    (classic convention).

    Parameters
    ----------
    matrix : MatrixLike
        Per-topic scores, systems × topics (higher is better).
    baseline : BaselineLike
        A system of the matrix, ``"mean"``/``"median"``/``"max"``, a file, a mapping topic ->
        score or a `Baseline` (see `fastrisk.resolve_baseline`).
    alpha : AlphaLike, optional
        Risk sensitivity α ≥ 0, one or many (default 0, 1, 5, 10); a loss counts 1 + α times.
    loss_weight : AlphaLike, optional
        The loss weight α̂ = 1 + α instead of ``alpha`` (Benham, Moffat & Culpepper 2019);
        never both.
    value : {"linear", "smooth"} or callable, optional
        The value function of the difference d = r − b: linear (default, with α), Benham et
        al.'s smooth cubic, or any scalar function (compiled with numba).
    missing : {"raise", "drop", "zero"}
        Topics the baseline lacks: an error, left out, or scored 0.
    threads : int, optional
        Numba threads for this call (default: all cores; small jobs run on one).

    Returns
    -------
    RiskScores
        ``x`` ``[alpha, system, topic]`` and the differences ``d`` ``[system, topic]``.

    References
    ----------
    Wang, L., Bennett, P. N. & Collins-Thompson, K. (2012). Robust ranking models via risk-sensitive
    optimization. SIGIR 2012.

    Dinçer, B. T., Macdonald, C. & Ounis, I. (2014). Hypothesis testing for the risk-sensitive evaluation of
    retrieval systems. SIGIR 2014.

    Examples
    --------
    >>> import fastrisk
    >>> import numpy as np
    >>> from fastrisk.data import datasets
    >>> matrix, baseline = datasets.trec2012_web()
    >>> scores = fastrisk.risk_scores(matrix, baseline, alpha=[0, 5])
    >>> scores.x.shape
    (2, 48, 50)
    >>> k = scores.systems.index('uogTrA44xi')
    >>> print(np.round(scores.x[:, k, :3], 4))
    [[0.1583 0.1348 0.0387]
     [0.1583 0.1348 0.0387]]
    """
    matrix, base, vf = _risk_iv(matrix, baseline, alpha, loss_weight, value, "classic", 0.05, missing)
    X = value_scores(matrix.values, base.values, vf, threads)
    _numerics.check_finite_fast(X, "a risk-reward score (r - b, weighted)")
    return RiskScores(systems=matrix.systems, topics=matrix.topics, alpha=vf.alpha, loss_weight=vf.loss_weight,
                      baseline=base.name, value=vf.name, baseline_system=base.system, x=X, d=matrix.values - base.values)


def value_scores(R: np.ndarray, B: np.ndarray, vf: ValueFunction, threads=None) -> np.ndarray:
    """x = v(R - B) ``[alpha, system, topic]`` (one alpha for a non-linear ``vf``); small jobs
    on the kernels' serial twins. ``R`` and ``B`` go to the kernels read-only, as a matrix's
    values are: a writable copy (a resampled or reduced matrix) would compile every kernel
    a second time for writable arrays (issue #20)."""
    R, B = _numerics.read_only(R), _numerics.read_only(B)
    if vf.is_linear:
        return run(_k.linear_scores, _k.linear_scores_serial, R.size * len(vf.alpha), threads, R, B, vf.alpha)
    return run(vf.kernel(_k.value_scores), vf.kernel(_k.value_scores_serial), R.size, threads, R, B)[None]


def risk(matrix: MatrixLike, baseline: BaselineLike, *, alpha: AlphaLike | None = None,
         loss_weight: AlphaLike | None = None, value=None, convention: str = "classic",
         significance: float = 0.05, missing: str = "raise", threads: int | None = None,
         inference: str = "t", score_bounds=(0.0, 1.0), replicates: int | None = None,
         rng=None) -> RiskResult:
    """URisk, TRisk (parametric and jackknife SE) and p-values of every system vs ``baseline``.

    URisk_α = mean_i x_i (Wang, Bennett & Collins-Thompson, SIGIR 2012); TRisk = URisk / SE_x,
    SE_x = s_x / √c, two-sided p from Student's t with c − 1 degrees of freedom; SE_J the
    jackknife standard error (Dinçer, Macdonald & Ounis, SIGIR 2014). A system whose
    risk-reward scores are constant over topics (a standard error of 0, or below the relative
    floor ``(c-1) SE^2 <= 4 c eps ((c-1) SE^2 + URisk^2)`` that rounding leaves, e.g. a
    system equal to its baseline plus a constant) gets SE 0, TRisk ±inf (NaN if URisk is 0
    too) and a `ZeroVarianceWarning` naming it (never the baseline itself).

    Parameters
    ----------
    matrix : MatrixLike or stack
        Per-topic scores, systems × topics (higher is better), or a stack of K collections
        (a (K, S, c) array or a sequence of ScoreMatrix, see `fastrisk.batch.stack`).
    baseline : BaselineLike
        A system of the matrix, ``"mean"``/``"median"``/``"max"``, a file, a mapping topic ->
        score or a `Baseline` (see `fastrisk.resolve_baseline`).
    alpha : AlphaLike, optional
        Risk sensitivity α ≥ 0, one or many (default 0, 1, 5, 10); a loss counts 1 + α times.
    loss_weight : AlphaLike, optional
        The loss weight α̂ = 1 + α instead of ``alpha`` (Benham, Moffat & Culpepper 2019);
        never both.
    value : {"linear", "smooth"} or callable, optional
        The value function of the difference d = r − b: linear (default, with α), Benham et
        al.'s smooth cubic, or any scalar function (compiled with numba).
    convention : {"classic", "minus"}
        ``"minus"`` negates URisk/TRisk so that larger is riskier (Benham et al. 2019).
    significance : float
        Two-sided level of the flags and of ``critical_t`` (default 0.05).
    missing : {"raise", "drop", "zero"}
        Topics the baseline lacks: an error, left out, or scored 0.
    threads : int, optional
        Numba threads for this call (default: all cores; small jobs run on one).
    inference : str
        How ``pvalue`` (and the flags) test URisk_α = 0: ``"t"`` (default, the published
        TRisk), ``"exact"`` (valid for every distribution and number of topics), ``"edgeworth"``,
        ``"johnson"``, ``"hall"``, ``"bootstrap-t-symmetric"``, ``"el-bartlett"`` or ``"bootstrap-t-double"`` (see
        `fastrisk.core.inference.risk_pvalue` and `fastrisk.core.inference.INFERENCES`). Not ``t``: at least
        3 topics, and no system identical to the baseline on every topic.
    score_bounds : (float, float)
        Bounds of the scores (default (0, 1)) that ``inference="exact"`` assumes: then
        x_i ∈ [−(1 + α)w, w], w = high − low (linear value function only).
    replicates : int, optional
        Orderings (``exact``, default 1,000) or resamples (``bootstrap-t-symmetric``, 2,000;
        ``bootstrap-t-double``: 499 first-level ones, each resampled 499 times).
    rng : int, SeedSequence or Generator, optional
        Seed of those draws (counter-based: the same p-values whatever the threads).

    Returns
    -------
    RiskResult
        ``urisk``, ``standard_error``, ``se_jack``, ``trisk`` (``statistic``), ``pvalue``,
        ``at_risk``, ``rewarding`` ``[alpha, system]``; ``to_markdown()`` / ``to_latex()``
        give the system × α publication table. Of a stack: every array with a leading
        ``batch`` axis (``[batch, alpha, system]``); against a system of the stack with the
        linear value function, from one batched kernel call (one `ZeroVarianceWarning` for
        the stack), else collection by collection.

    References
    ----------
    Wang, L., Bennett, P. N. & Collins-Thompson, K. (2012). Robust ranking models via risk-sensitive
    optimization. SIGIR 2012.

    Dinçer, B. T., Macdonald, C. & Ounis, I. (2014). Hypothesis testing for the risk-sensitive evaluation of
    retrieval systems. SIGIR 2014.

    Examples
    --------
    >>> import fastrisk
    >>> m, b = fastrisk.data.datasets.trec2012_web("err20")
    >>> res = fastrisk.risk(m, b, alpha=[0, 5])
    >>> round(float(res.trisk[0, res.systems.index("uogTrA44xi")]), 4)
    2.244
    """
    if _batch.is_stack(matrix):  # K collections: every array with a leading batch axis
        return _risk_of_stack(matrix, baseline, alpha, loss_weight, value, convention, significance, missing,
                              threads, inference, score_bounds, replicates, rng)
    matrix, base, vf = _risk_iv(matrix, baseline, alpha, loss_weight, value, convention, significance, missing)
    spec, B, seed = _inference_options_iv(inference, replicates, rng, matrix, base, vf, score_bounds)
    c = matrix.n_topics
    df = c - 1
    crit = t_critical(significance, df)
    sign = _sign(convention)
    table = _linear_table(matrix.values, base.values, vf.alpha, crit, sign, threads) if vf.is_linear else None
    if table is not None:  # the usual case: one compiled call computes every array of the result
        (urisk, se, sej, trisk), (at_risk, rewarding), (freward, frisk, ugain), zero, n_zero, se_rmse = table
    else:  # a non-linear value function, or scores extreme enough to need rescaling
        freward, frisk, urisk, se, sej, trisk, se_rmse = _moments(matrix.values, base.values, vf, threads)
        zero = (se == 0).any(axis=1)
        n_zero = zero.sum()
        urisk, se, sej, trisk = (np.ascontiguousarray(v.T) for v in (urisk, se, sej, trisk))  # [alpha, system]
        at_risk, rewarding = trisk < -crit, trisk > crit
        urisk, trisk, ugain = sign * urisk, sign * trisk, freward - frisk
    pvalue = None
    if spec.name != "t":
        pvalue = _risk_pvalues(matrix, base, vf, spec, score_bounds, significance, B, seed, threads)
        if base.system is not None:
            pvalue[:, base.system] = np.nan  # the baseline against itself: no test, as TRisk's 0/0
        better = sign * urisk > 0
        at_risk, rewarding = (pvalue <= significance) & (sign * urisk < 0), (pvalue <= significance) & better
    if n_zero > (base.system is not None):
        _numerics.warn_zero_variance(_numerics.zero_rows(zero, matrix.systems, base.system),
                                     where=f" against baseline {base.name!r}")
    return RiskResult._trusted(
        systems=matrix.systems, baseline=base.name, alpha=vf.alpha, loss_weight=vf.loss_weight, given=vf.given,
        convention=convention, value=vf.name, n_topics=c, df=df, significance=float(significance),
        critical_t=crit, freward=freward, frisk=frisk, ugain=ugain, urisk=urisk,
        standard_error=se, se_jack=sej, trisk=trisk, at_risk=at_risk, rewarding=rewarding, se_rmse=se_rmse,
        inference=spec.name, _pvalue=pvalue,
    )


def _risk_of_stack(data, baseline, alpha, loss_weight, value, convention, significance, missing, threads,
                   inference="t", score_bounds=(0.0, 1.0), replicates=None, rng=None):
    """`risk` of a stack: the batched kernel against a system of the stack with the linear value
    function and Student's t, else `risk` of each collection, stacked (collection k's resampling
    inference seeded as `fastrisk.batch.stack` says: ``SeedSequence([seed, start + k])``)."""
    choice(convention, "convention", CONVENTIONS)
    level(significance, "significance")
    check_missing_policy(missing)
    st = _batch.stack(data, check=False)
    row = _batch.system_row(st, baseline)
    vf = resolve_value(value, alpha=alpha, loss_weight=loss_weight)
    default_t = inference == "t" and replicates is None and rng is None
    if row is None or not vf.is_linear or not default_t:
        seed = None if rng is None else resolve_seed(rng).kernel
        return _batch.stack_results([
            risk(m, baseline, alpha=alpha, loss_weight=loss_weight, value=value, convention=convention,
                 significance=significance, missing=missing, threads=threads, inference=inference,
                 score_bounds=score_bounds, replicates=replicates,
                 rng=None if seed is None else _batch.collection_seed(seed, st.start + k))
            for k, m in enumerate(_batch.collections(st))])
    freward, frisk, urisk, se, sej, trisk = _batch.risk_arrays(st, row, vf.alpha, threads, stacklevel=5)
    c = st.shape[2]
    crit = t_critical(significance, c - 1)
    at_risk, rewarding = trisk < -crit, trisk > crit
    if convention == "minus":
        urisk, trisk = -urisk, -trisk
    # the RMSE between SE_x and SE_J over systems, summed in system order as the one-matrix kernel
    # (`fastrisk._kernels.risk.linear_risk_table`): one pass per system, no (K, A, S) temporary
    S = st.shape[1]
    d = se[..., 0] - sej[..., 0]
    acc = d * d
    for j in range(1, S):
        d = se[..., j] - sej[..., j]
        acc += d * d
    return RiskResult._trusted(
        systems=st.systems, baseline=st.systems[row], alpha=vf.alpha, loss_weight=vf.loss_weight, given=vf.given,
        convention=convention, value=vf.name, n_topics=c, df=c - 1, significance=float(significance),
        critical_t=crit, freward=freward, frisk=frisk, ugain=freward - frisk, urisk=urisk,
        standard_error=se, se_jack=sej, trisk=trisk, at_risk=at_risk, rewarding=rewarding,
        se_rmse=np.sqrt(acc / S),
    )


def _inference_options_iv(inference, replicates, rng, matrix, base, vf, score_bounds):
    """The inference's registry entry, replicates and seed; for one other than ``t``: at least 3
    topics, no system identical to the baseline, and (``exact``) scores within the bounds."""
    spec, B, seed = _inference._matrix_inference_iv(inference, replicates, rng, matrix.n_topics)
    if spec.name == "t":
        return spec, B, seed
    same = np.flatnonzero((matrix.values == base.values).all(axis=1))
    same = [matrix.systems[k] for k in same if k != base.system]
    if same:
        raise InputError(f"system {same[0]!r} is identical to baseline {base.name!r} on every topic (all d = 0): "
                         f"inference={spec.name!r} has no test of a pair without differences")
    if spec.name == "exact":
        if not vf.is_linear:
            raise InputError("inference='exact' needs the linear value function (x = d + α·min(d, 0)), whose bounds "
                             f"follow from `score_bounds`; got value={vf.name!r}")
        lo, hi = _inference._bounds_iv(score_bounds)
        _inference.check_scores_within(matrix.values, lo, hi, matrix.systems, "system", matrix.topics)
        _inference.check_scores_within(base.values, lo, hi, [base.name], "baseline", matrix.topics)
    return spec, B, seed


def _risk_pvalues(matrix, base, vf, spec, score_bounds, significance, B, seed, threads):
    """Two-sided p-values ``[alpha, system]`` of URisk_α = 0 by ``spec`` (not ``t``)."""
    return _pvalues_against(matrix.values, base.values, vf, spec, score_bounds, significance, B, seed, threads)


def _pvalues_against(R, B_values, vf, spec, score_bounds, significance, B, seed, threads, row0=0):
    """`_risk_pvalues` on arrays: systems ``R`` against the baseline scores ``B_values``; the
    draws of system k from streams (k + ``row0``)·B + b."""
    X = value_scores(R, B_values, vf, threads)  # [alpha, system, topic], classic
    if not spec.resampling:
        return _inference.pvalues(X, spec, threads=threads)
    # one call an alpha: system k draws the same orderings / resamples at every alpha
    w = float(score_bounds[1]) - float(score_bounds[0])
    return np.stack([_inference.pvalues(X[a], spec, bounds=(-(1.0 + float(al)) * w, w), significance=significance,
                                        replicates=B, seed=seed, threads=threads, row0=row0)
                     for a, al in enumerate(vf.alpha)])


def _linear_table(R: np.ndarray, B: np.ndarray, alphas: np.ndarray, crit: float, sign: float, threads):
    """Every array of a linear `RiskResult` from one kernel call, or None when the
    scores need rescaling."""
    out = run(_k.linear_risk_table, _k.linear_risk_table_serial, R.size * len(alphas), threads,
              R, B, alphas, _numerics.VARIANCE_RTOL, _LO, _HI, crit, sign)
    return out[1:] if out[0] else None


def _moments(R: np.ndarray, B: np.ndarray, vf: ValueFunction, threads=None):
    """FReward, FRisk, URisk, SE_x, SE_J and TRisk under the numerical policy of
    `fastrisk._runtime.numerics`: standard errors below the relative variance floor are 0 and
    TRisk is then ±inf (NaN where URisk is 0); a system whose scores (or its baseline's) are
    so large that squares overflow, or so small that they underflow, is rescaled by its own
    exact power of two (linear value function): the others' numbers are untouched."""
    c = R.shape[1]

    def kernel(R, B):
        if vf.is_linear:
            with limit_threads(threads, R.size * len(vf.alpha)):
                return _k.linear_risk(R, B, vf.alpha)
        return run(vf.kernel(_k.value_risk), vf.kernel(_k.value_risk_serial), R.size, threads, R, B)

    out = list(kernel(R, B))
    ks = None
    suspect = _numerics.out_of_range(out[2], out[3])  # URisk (alpha 0 = FReward - FRisk) and SE
    if vf.is_linear and suspect:  # rescale the extreme systems, each by its own exact power of two
        ks = _numerics.row_exponents(R, B)
        for k in np.unique(ks[ks != 0]):
            rows = np.flatnonzero(ks == k)
            part = kernel(np.ldexp(R[rows], k), np.ldexp(B if B.shape[0] == 1 else B[rows], k))
            for whole, p in zip(out, part):
                whole[rows] = p
        ks = ks if ks.any() else None
    freward, frisk, urisk, se, sej = out
    se, sej, trisk, _ = _numerics.floor_standardise(urisk, se, c, sej)
    if ks is not None:
        with np.errstate(over="ignore", under="ignore"):  # an overflow is reported just below
            freward, frisk = np.ldexp(freward, -ks), np.ldexp(frisk, -ks)
            urisk, se, sej = (np.ldexp(a, -ks[:, None]) for a in (urisk, se, sej))
            se_rmse = _numerics.rms(se - sej, axis=0)
    else:
        se_rmse = np.sqrt(np.mean((se - sej) ** 2, axis=0))
    if suspect:  # otherwise out_of_range found every result finite
        _numerics.check_finite((urisk, se, freward, frisk),
                               ("URisk", "the standard error of URisk", "FReward", "FRisk"))
    return freward, frisk, urisk, se, sej, trisk, se_rmse


def topic_risk(matrix: MatrixLike, baseline: BaselineLike, *, alpha: AlphaLike | None = None,
               loss_weight: AlphaLike | None = None, value=None, convention: str = "classic",
               significance: float = 0.05, missing: str = "raise", threads: int | None = None) -> TopicRiskResult:
    """Exploratory per-topic risk TR_i and TJ_i (Dinçer, Macdonald & Ounis, SIGIR 2014, eqs. 21-23).

    A topic is a significant loss when TR_i < -t(significance/2, c-1) and a significant win
    when TR_i > +t; ``loss``/``win`` keep that meaning in either convention. A system whose
    scores are constant over topics (as in `risk`) gets TR_i = ±inf (NaN where x_i is 0),
    TJ_i = NaN and a `ZeroVarianceWarning` naming it.

    TR_i = x_i / s_x (eq. 21); TJ_i = influence_i / (√c SE_J), influence_i = (c − 1)(θ̂ − θ_(i))
    with θ_(i) URisk without topic i (eq. 23, on the scale of TR_i as the paper's Fig. 2).

    Parameters
    ----------
    matrix : MatrixLike
        Per-topic scores, systems × topics (higher is better).
    baseline : BaselineLike
        A system of the matrix, ``"mean"``/``"median"``/``"max"``, a file, a mapping topic ->
        score or a `Baseline` (see `fastrisk.resolve_baseline`).
    alpha : AlphaLike, optional
        Risk sensitivity α ≥ 0, one or many (default 0, 1, 5, 10); a loss counts 1 + α times.
    loss_weight : AlphaLike, optional
        The loss weight α̂ = 1 + α instead of ``alpha`` (Benham, Moffat & Culpepper 2019);
        never both.
    value : {"linear", "smooth"} or callable, optional
        The value function of the difference d = r − b: linear (default, with α), Benham et
        al.'s smooth cubic, or any scalar function (compiled with numba).
    convention : {"classic", "minus"}
        ``"minus"`` negates URisk/TRisk so that larger is riskier (Benham et al. 2019).
    significance : float
        Two-sided level of the flags and of ``critical_t`` (default 0.05).
    missing : {"raise", "drop", "zero"}
        Topics the baseline lacks: an error, left out, or scored 0.
    threads : int, optional
        Numba threads for this call (default: all cores; small jobs run on one).

    Returns
    -------
    TopicRiskResult
        ``x``, ``tr``, ``tj``, ``influence``, ``pseudo_values``, ``loss``, ``win``
        ``[alpha, system, topic]`` and the jackknife ``bias`` ``[alpha, system]``.

    References
    ----------
    Dinçer, B. T., Macdonald, C. & Ounis, I. (2014). Hypothesis testing for the risk-sensitive evaluation of
    retrieval systems. SIGIR 2014.

    Examples
    --------
    >>> import fastrisk
    >>> import numpy as np
    >>> from fastrisk.data import datasets
    >>> matrix, baseline = datasets.trec2012_web()
    >>> res = fastrisk.topic_risk(matrix, baseline, alpha=5)
    >>> k = res.systems.index('uogTrA44xi')
    >>> int(res.loss[0, k].sum()), int(res.win[0, k].sum())
    (4, 0)
    >>> print(np.round(res.tr[0, k, :4], 3))
    [0.127 0.109 0.031 0.742]
    """
    matrix, base, vf = _risk_iv(matrix, baseline, alpha, loss_weight, value, convention, significance, missing)
    df = matrix.n_topics - 1
    crit = t_critical(significance, df)
    s = _sign(convention)
    if vf.is_linear:  # the usual case: one compiled call
        ok, x, arrays, flags, stats, n_zero = _topic_table(matrix, base, vf, s, crit, threads, True)
        if ok:
            if n_zero:
                _numerics.warn_zero_variance(
                    _numerics.zero_rows((stats[_k.TOPIC_ZERO] != 0.0).any(axis=0), matrix.systems, base.system),
                    where=f" against baseline {base.name!r}")
            return TopicRiskResult._trusted(
                systems=matrix.systems, topics=matrix.topics, baseline=base.name, alpha=vf.alpha,
                loss_weight=vf.loss_weight, convention=convention, value=vf.name, df=df,
                significance=float(significance), critical_t=crit, x=x, tr=arrays[0], tj=arrays[1],
                influence=arrays[2], pseudo_values=arrays[3], bias=stats[_k.TOPIC_BIAS], loss=flags[0],
                win=flags[1])
    scores = risk_scores(matrix, base, alpha=alpha, loss_weight=loss_weight, value=value,
                         missing=missing, threads=threads)
    with limit_threads(threads, scores.x.size):
        tr, tj, influence, pseudo, bias = _k.topic_risk(scores.x)
    _, _, _, zero = _numerics.mean_t(scores.x, "a risk-reward score")
    if zero.any():
        # constant scores (up to rounding): TR_i = x_i / 0 is ±inf (NaN where x_i is 0); the
        # influences are 0 up to rounding, so TJ_i = 0 / 0 is NaN
        z = zero[..., None]
        tr = np.where(z, _numerics.standardise(scores.x, np.zeros_like(scores.x)), tr)
        tj = np.where(z, np.nan, tj)
        _numerics.warn_zero_variance(_numerics.zero_rows(zero.any(axis=0), scores.systems, scores.baseline_system),
                                     where=f" against baseline {scores.baseline!r}")
    return TopicRiskResult(
        systems=scores.systems, topics=scores.topics, baseline=scores.baseline, alpha=scores.alpha,
        loss_weight=scores.loss_weight, convention=convention, value=scores.value, df=df,
        significance=float(significance), critical_t=crit, x=s * scores.x, tr=s * tr, tj=s * tj,
        influence=s * influence, pseudo_values=s * pseudo, bias=s * bias, loss=tr < -crit, win=tr > crit,
    )


def _topic_table(matrix, base, vf, sign: float, crit: float, threads, jackknife: bool):
    """`fastrisk._kernels.risk.linear_topic_risk_table` on a validated matrix and baseline."""
    R = matrix.values
    return run(_k.linear_topic_risk_table, _k.linear_topic_risk_table_serial, R.size * len(vf.alpha), threads,
               R, base.values, vf.alpha, sign, crit, _numerics.VARIANCE_RTOL, _LO, _HI, jackknife)


def adaptive_risk(matrix: MatrixLike, baseline: BaselineLike, *, alpha: AlphaLike | None = None,
                  loss_weight: AlphaLike | None = None, method: str = "saro", convention: str = "classic",
                  missing: str = "raise", threads: int | None = None) -> AdaptiveRiskResult:
    """SARO/FARO adaptive risk weights alpha'_i = [1 - Φ(TR_i)] alpha (Dinçer et al. 2014).

    TR_i is the exploratory risk of topic i at the same alpha (Dinçer, Macdonald & Ounis,
    SIGIR 2014, section 6). SARO applies 1 + alpha'_i to the losses (d_i < 0) only; FARO to
    every topic.

    Parameters
    ----------
    matrix : MatrixLike
        Per-topic scores, systems × topics (higher is better).
    baseline : BaselineLike
        A system of the matrix, ``"mean"``/``"median"``/``"max"``, a file, a mapping topic ->
        score or a `Baseline` (see `fastrisk.resolve_baseline`).
    alpha : AlphaLike, optional
        Risk sensitivity α ≥ 0, one or many (default 0, 1, 5, 10); a loss counts 1 + α times.
    loss_weight : AlphaLike, optional
        The loss weight α̂ = 1 + α instead of ``alpha`` (Benham, Moffat & Culpepper 2019);
        never both.
    method : {"saro", "faro"}
        Adaptive weights on the losses only (SARO) or on every topic (FARO).
    convention : {"classic", "minus"}
        ``"minus"`` negates URisk/TRisk so that larger is riskier (Benham et al. 2019).
    missing : {"raise", "drop", "zero"}
        Topics the baseline lacks: an error, left out, or scored 0.
    threads : int, optional
        Numba threads for this call (default: all cores; small jobs run on one).

    Returns
    -------
    AdaptiveRiskResult
        ``adaptive_alpha`` and ``weights`` ``[alpha, system, topic]``, the adaptive ``urisk``
        ``[alpha, system]``.

    References
    ----------
    Dinçer, B. T., Macdonald, C. & Ounis, I. (2014). Hypothesis testing for the risk-sensitive evaluation of
    retrieval systems. SIGIR 2014.

    Examples
    --------
    >>> import fastrisk
    >>> from fastrisk.data import datasets
    >>> matrix, baseline = datasets.trec2012_web()
    >>> res = fastrisk.adaptive_risk(matrix, baseline, alpha=5, method='saro')
    >>> round(float(res.urisk[0, res.systems.index('uogTrA44xi')]), 4)
    -0.1861
    """
    if method not in ("saro", "faro"):
        raise InputError(f"`method` must be 'saro' or 'faro', got {method!r}")
    choice(convention, "convention", CONVENTIONS)
    matrix, base, vf = _risk_iv(matrix, baseline, alpha, loss_weight, None, convention, 0.05, missing)
    ok, _, arrays = _topic_table(matrix, base, vf, 1.0, 0.0, threads, False)[:3]  # TR_i, classic sign
    if ok:
        tr = arrays[0]
    else:  # scores extreme enough to need rescaling (TR_i is scale-free)
        scores = risk_scores(matrix, base, alpha=alpha, loss_weight=loss_weight, threads=threads)
        with limit_threads(threads, scores.x.size):
            tr = _k.topic_risk(scores.x)[0]
    tr = np.nan_to_num(tr, nan=0.0)
    adaptive = (1.0 - special.ndtr(tr)) * vf.alpha[:, None, None]
    d = (matrix.values - base.values)[None]
    weights = 1.0 + adaptive if method == "faro" else np.where(d < 0, 1.0 + adaptive, 1.0)
    urisk = (weights * d).mean(axis=-1)
    return AdaptiveRiskResult(
        systems=matrix.systems, topics=matrix.topics, baseline=base.name, method=method,
        alpha=vf.alpha, loss_weight=vf.loss_weight, convention=convention,
        adaptive_alpha=adaptive, weights=weights, urisk=_sign(convention) * urisk,
    )


__all__ = ["risk", "topic_risk", "adaptive_risk", "risk_scores", "RiskResult", "TopicRiskResult",
           "AdaptiveRiskResult", "RiskScores", "Baseline", "DEFAULT_ALPHAS", "ValueFunction"]
