"""All-baseline tables (Dinçer, Ounis & Macdonald, ECIR 2014).

URisk and TRisk of every system against every other system as the baseline, for many alpha
in one pass: arrays indexed ``[alpha, system, baseline]``. The pass over topics computes only
three sums per unordered pair (of |d|, d|d| and d^2, d = r - b) and one per system; every alpha
and the swapped pair follow in O(1) (see `fastrisk._kernels.tables`), so the cost does not
grow with the number of alphas.

Each baseline induces a ranking of the systems: ``rank[:, b, a]`` ranks systems by URisk
against baseline ``b`` at alpha ``a`` (1 = best, i.e. largest classic URisk, whatever the
convention; the baseline itself takes part with URisk 0, unless ``exclude_self=True``, which
ranks the other S - 1 systems among themselves and gives the baseline's own cell rank NaN, as
Dinçer, Ounis & Macdonald's Table 2 ranks the runs under each baseline). Ties get the average
rank (``rank_ties="average"``, as ``scipy.stats.rankdata``) or distinct ranks in system order
(``rank_ties="ordinal"``).
"""

from __future__ import annotations

import functools
import types
import warnings
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from fastrisk._kernels import _interrupt
from fastrisk._kernels import tables as _k
from fastrisk._runtime import numerics as _numerics
from fastrisk._runtime.threads import PAIR_CELL_WORK, limit_threads, parallel
from fastrisk._runtime.tstat import CONVENTIONS, TRiskInference, t_pvalue
from fastrisk._runtime.validation import flag
from fastrisk.core import inference as _inference
from fastrisk.core.baselines import resolve_baseline
from fastrisk.core.urisk import _moments, _pvalues_against, risk
from fastrisk.core.values import resolve_value
from fastrisk.data.matrix import ScoreMatrix, as_matrix
from fastrisk.data.results import Result, array, param
from fastrisk.errors import InputError, ZeroVarianceWarning
from fastrisk.measures.agreement import _check_p, _check_ties, friedman, kendall_tau_matrix, rbo_matrix

TIES = ("average", "ordinal")
#: Tile sizes of the all-pairs pass: systems per tile side, topics per cache chunk (measured best of
#: 192-320 x 32-128 on Zen 4: longer rows of baselines per pass, fewer passes).
BLOCK = 256
TOPIC_BLOCK = 64
#: Baselines ranked together (one contiguous gather of the table's rows).
RANK_BLOCK = 16
#: The one-thread twins of the table kernels, under the parallel drivers' names.
_Serial = types.SimpleNamespace(**{name: getattr(_k, name + "_serial") for name in
                                   ("pair_sums", "table_moments", "value_table_moments", "refine_linear",
                                    "refine_value", "baseline_ranks", "value_pair_sums", "pair_sums_higher",
                                    "table_corrected_pvalues")})


@dataclass(frozen=True, repr=False)
class BaselineTable(TRiskInference, Result):
    """URisk/TRisk of every system against every baseline at every alpha.

    Arrays ``[alpha, system, baseline]``: ``urisk``, ``standard_error``, ``trisk`` (also
    ``statistic``), ``pvalue`` (two-sided, Student t with ``df`` = c - 1; computed on first
    access) and ``rank`` (see the module doc; also computed on first access: its kernels
    compile only for a call that reads it). ``urisk``/``trisk`` are negated in the
    ``minus`` convention. With every system as baseline, ``baselines == systems`` and the
    diagonal has URisk 0 and TRisk NaN (0/0).

    Long form (one row per alpha, system, baseline): ``alpha``, ``loss_weight``, ``system``,
    ``baseline``, ``convention``, ``value``, ``urisk``, ``standard_error``, ``trisk``,
    ``rank``, ``pvalue``, ``inference`` (the test of ``pvalue``: ``t``, the published TRisk, or
    another of `fastrisk.core.inference.INFERENCES`). ``level_note``: for a ``t`` table at some
    α ≥ 2 with fewer than 100 topics, the level docs/risk-tests.md measured for TRisk there and
    the option that holds it (else empty).
    """

    _constants = ("convention", "value", "inference")
    _derived = {"rank": ("alpha", "system", "baseline"), "pvalue": ("alpha", "system", "baseline")}

    systems: tuple
    baselines: tuple
    alpha: np.ndarray
    loss_weight: np.ndarray
    given: str
    value: str
    convention: str
    rank_ties: str = param(doc="How ``rank`` treats tied URisk values (as scipy.stats.rankdata's ``method``).")
    exclude_self: bool = param(doc="Whether a system is left out of the ranking under itself as the baseline.")
    n_topics: int
    df: int
    urisk: np.ndarray = array("alpha", "system", "baseline")
    standard_error: np.ndarray = array("alpha", "system", "baseline")
    trisk: np.ndarray = array("alpha", "system", "baseline")
    inference: str = param("t", doc="The inference behind ``pvalue``: a name of `fastrisk.core.inference.INFERENCES` "
                                    "(``t``: Student's t, Dinçer et al. 2014).")
    level_note: str = param("", doc="One line on the level of ``t`` where docs/risk-tests.md measured it liberal "
                                    "(α ≥ 2 with fewer than 100 topics), else empty.")
    #: its p-values when not Student's t (else computed on first use from ``trisk``)
    _pvalue: np.ndarray | None = field(default=None, repr=False, compare=False)
    #: the ranks once computed (or given, for a block of the table), else None
    _rank: np.ndarray | None = field(default=None, repr=False, compare=False)
    #: (ordinal, skip, parallel kernel, threads, work): how to compute them
    _rank_inputs: tuple = field(default=(), repr=False, compare=False)

    @property
    def rank(self) -> np.ndarray:
        """Rank of every system under every baseline and alpha ``[alpha, system, baseline]``."""
        if self._rank is None:
            ordinal, skip, parallel_kernel, threads, work = self._rank_inputs
            kernel = _k.baseline_ranks if parallel_kernel else _Serial.baseline_ranks
            urisk = -self.urisk if self.convention == "minus" else self.urisk  # ranks by URisk, whatever the sign
            with limit_threads(threads, work), _interrupt.stoppable() as stop:
                rank = kernel(urisk, ordinal, RANK_BLOCK, skip, stop)
            object.__setattr__(self, "_rank", rank)  # frozen dataclass: computed once
        return self._rank

    def agreement(self, alpha=None, *, p: float = 0.9, rbo_ties: str = "a") -> "RankAgreement":
        """How the system rankings change across baselines at one alpha (Dinçer, Ounis & Macdonald, ECIR 2014):
        Friedman's test over the B rankings, the B x B Kendall tau-b matrix and the B x B RBO
        matrix (persistence ``p``, tie treatment ``rbo_ties``; best system first). ``alpha``: one
        of the table's alphas (default: the first). Every ranking covers every system, whatever
        ``exclude_self`` (the tests need the same items in each ranking)."""

        if alpha is None:
            a = 0
        else:
            hits = np.flatnonzero(np.isclose(self.alpha, float(alpha)))
            if hits.size == 0:
                raise InputError(f"`alpha` {alpha!r} is not in the table; it has {self.alpha.tolist()}")
            a = int(hits[0])
        sign = -1.0 if self.convention == "minus" else 1.0
        scores = np.ascontiguousarray((sign * self.urisk[a]).T)  # (B, S): larger is better
        if len(self.baselines) < 2:
            raise InputError("rank agreement needs at least two baselines")
        p, rbo_ties = _check_p(p), _check_ties(rbo_ties)  # checked now, though RBO is computed on first use
        return RankAgreement(alpha=float(self.alpha[a]), baselines=self.baselines, systems=self.systems,
                             friedman=friedman(scores, items=self.systems), _scores=scores, _p=p, _rbo_ties=rbo_ties)


@dataclass(frozen=True, repr=False)
class RankAgreement(Result):
    """Agreement of the rankings that the baselines of a `BaselineTable` induce at one
    alpha: ``friedman`` (`FriedmanResult`, with Kendall's W and each
    system's mean rank), ``kendall`` (B x B tau-b) and ``rbo`` (B x B RBO).

    Long form: one row per pair of baselines ``a`` < ``b``: ``alpha``, ``a``, ``b``,
    ``kendall_tau``, ``kendall_p``, ``rbo_ext``, ``rbo_min``, ``rbo_res``, and the Friedman
    test over all baselines repeated on each row (``friedman_chi2``, ``friedman_p``,
    ``kendall_w``).
    """

    alpha: float
    baselines: tuple
    systems: tuple
    friedman: object = param(doc="Friedman's test over the baselines' rankings (a `FriedmanResult`, with Kendall's W).")
    _scores: np.ndarray = field(repr=False, compare=False)  # (B, S), larger is better
    _p: float = 0.9
    _rbo_ties: str = "a"

    # Kendall and RBO are computed on first use: their kernels compile only for a call that
    # reads them (seconds on a fresh install, issue #20)
    @functools.cached_property
    def kendall(self):
        """B x B Kendall tau-b (`KendallTauMatrix`)."""
        return kendall_tau_matrix(self._scores, labels=self.baselines)

    @functools.cached_property
    def rbo(self):
        """B x B RBO (`RBOMatrix`)."""
        return rbo_matrix(self._scores, p=self._p, ties=self._rbo_ties, labels=self.baselines)

    def to_arrow(self, dims=None) -> pa.Table:
        a, b = np.triu_indices(len(self.baselines), k=1)
        names = np.asarray(self.baselines, dtype=object)
        return pa.table({
            "alpha": np.full(a.size, self.alpha), "a": names[a], "b": names[b],
            "kendall_tau": self.kendall.statistic[a, b], "kendall_p": self.kendall.pvalue[a, b],
            "rbo_ext": self.rbo.ext[a, b], "rbo_min": self.rbo.min[a, b], "rbo_res": self.rbo.res[a, b],
            "friedman_chi2": np.full(a.size, self.friedman.statistic),
            "friedman_p": np.full(a.size, self.friedman.pvalue),
            "kendall_w": np.full(a.size, self.friedman.kendall_w),
        })


def _table_iv(matrix, baseline, alpha, loss_weight, value, convention, rank_ties, exclude_self):
    flag(exclude_self, "exclude_self")
    if convention not in CONVENTIONS:
        raise InputError(f"`convention` must be 'classic' or 'minus', got {convention!r}")
    if rank_ties not in TIES:
        raise InputError(f"`rank_ties` must be 'average' or 'ordinal', got {rank_ties!r}")
    if matrix.n_topics < 2:
        raise InputError(f"a baseline table needs at least 2 topics to estimate a standard error; "
                         f"the matrix has {matrix.n_topics}")
    if isinstance(baseline, str) and baseline == "all":
        baselines = None
    elif isinstance(baseline, (list, tuple)):
        if not baseline:
            raise InputError("`baseline` must be 'all', one baseline or a non-empty list of baselines")
        baselines = list(baseline)
    else:
        baselines = [baseline]
    return resolve_value(value, alpha=alpha, loss_weight=loss_weight), baselines


def baseline_table(matrix: ScoreMatrix, baseline="all", *, alpha=None, loss_weight=None, value=None,
                   convention: str = "classic", rank_ties: str = "average", exclude_self: bool = False,
                   threads: int | None = None, inference: str = "t", score_bounds=(0.0, 1.0),
                   replicates: int | None = None, rng=None) -> BaselineTable:
    """URisk/TRisk of every system against every baseline, for every alpha in one pass.

    Dinçer, Ounis & Macdonald (ECIR 2014): with ``d_i = r_i - b_i`` and ``x_i = d_i`` for gains,
    ``(1 + alpha) d_i`` for losses, ``URisk = mean(x)``, ``SE = s_x / sqrt(c)`` and
    ``TRisk = URisk / SE``; each baseline ranks the systems by URisk.

    Parameters
    ----------
    matrix : ScoreMatrix
        Scores, systems x topics (at least 2 topics).
    baseline : "all", baseline or list of baselines
        ``"all"`` (default) uses every system of the matrix as a baseline (the blocked
        all-pairs kernel); otherwise one baseline or a list of them, each anything
        `fastrisk.risk` accepts (a system name, ``"mean"``/``"median"``/``"max"``, a
        vector, a file).
    alpha, loss_weight : float or sequence of float, optional
        ``alpha >= 0`` or ``loss_weight = 1 + alpha``: one number or many (default 0, 1, 5,
        10) for the linear value function.
    value : {"linear", "smooth"} or callable, optional
        Value function of the difference (then A = 1 and alpha is NaN; every ordered pair
        takes its own pass over topics, as no antisymmetry holds).
    convention : {"classic", "minus"}
        ``"minus"`` negates URisk and TRisk (larger = riskier); ranks are unchanged.
    rank_ties : {"average", "ordinal"}
        Ranks of tied systems: averaged, or distinct in system order.
    exclude_self : bool
        Leave each baseline that is a system of the matrix out of its own ranking: its rank
        is NaN and the other systems are ranked 1..S-1, as Dinçer, Ounis & Macdonald's
        Table 2 ranks the runs under each baseline. Default False: the baseline takes part
        with URisk 0. URisk, SE and TRisk are the same either way.
    threads : int, optional
        Numba threads (default: all).
    inference : str
        How ``pvalue`` tests URisk_α = 0 (two-sided): ``"t"`` (default, the published TRisk),
        ``"exact"``, ``"edgeworth"``, ``"johnson"``, ``"hall"``, ``"bootstrap-t-symmetric"``,
        ``"el-bartlett"``, ``"bootstrap-t-double"`` (see `fastrisk.core.inference.risk_pvalue`). The analytic corrections (Edgeworth,
        Johnson, Hall) of the all-baseline table come from the same one-pass kernel, with the
        sums of d³, |d|³, d⁴ and d³|d| per pair added (`fastrisk._kernels.tables.pair_sums_higher`;
        n³ = (d³ − |d|³)/2, n⁴ = (d⁴ − d³|d|)/2 for n = min(d, 0)); the others take a pass per
        baseline.
    score_bounds, replicates, rng
        As in `fastrisk.risk` (``exact``: the scores' bounds; orderings or resamples; seed).

    Returns
    -------
    BaselineTable
        Arrays ``[alpha, system, baseline]``.

    References
    ----------
    Dinçer, B. T., Ounis, I. & Macdonald, C. (2014). Tackling biased baselines in the risk-sensitive evaluation
    of retrieval systems. ECIR 2014.

    Wang, L., Bennett, P. N. & Collins-Thompson, K. (2012). Robust ranking models via risk-sensitive
    optimization. SIGIR 2012.

    Examples
    --------
    >>> import fastrisk
    >>> from fastrisk.data import datasets
    >>> matrix, baseline = datasets.trec2012_web()
    >>> table = fastrisk.baseline_table(matrix, alpha=[0, 5])
    >>> table.urisk.shape
    (2, 48, 48)
    >>> k = table.systems.index('uogTrA44xi')
    >>> round(float(table.urisk[1, k, table.baselines.index('qutwb')]), 4)
    0.0499
    >>> hall = fastrisk.baseline_table(matrix, alpha=[1, 5], inference="hall")
    >>> hall.inference, hall.pvalue.shape
    ('hall', (2, 48, 48))
    """
    matrix = as_matrix(matrix)
    vf, baselines = _table_iv(matrix, baseline, alpha, loss_weight, value, convention, rank_ties, exclude_self)
    spec, B, seed = _table_inference_iv(matrix, vf, inference, score_bounds, replicates, rng)
    c = matrix.n_topics
    work = matrix.n_systems ** 2 * c * PAIR_CELL_WORK
    k = _k if threads != 1 and parallel(work) else _Serial  # small tables: the one-thread twins
    with limit_threads(threads, work):
        if baselines is None:
            names = matrix.systems
            if vf.is_linear:
                higher = None
                if spec.name in _ANALYTIC:  # the corrections' sums in the same one pass
                    higher = _higher_sums(matrix.values, spec.name == "edgeworth", k)
                urisk, se, trisk, zero, ok = _all_pairs(matrix.values, vf.alpha, kernels=k,
                                                        sums=None if higher is None else higher[1])
                if not ok:  # squares overflowed or underflowed: rescale exactly
                    _rescale_extreme_pairs(matrix.values, vf, urisk, se, trisk)
                    zero = (se == 0).any(axis=0)
            else:
                higher = None
                urisk, se, trisk, zero, ok = _value_pairs(matrix.values, vf, kernels=k)
            if not ok:
                _numerics.check_finite_fast(urisk, "URisk")
                _numerics.check_finite_fast(se, "the standard error of URisk")
            _warn_identical(matrix.systems, zero)
        else:
            names, cols_u, cols_se, cols_t = [], [], [], []
            for b in baselines:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ZeroVarianceWarning)
                    r = risk(matrix, b, **({"alpha": vf.alpha} if vf.is_linear else {"value": value}))
                if r.systems != matrix.systems:
                    raise InputError(f"baseline {r.baseline!r} does not cover every topic of the matrix")
                names.append(r.baseline)
                cols_u.append(r.urisk)  # risk() is [alpha, system]; the table [alpha, system, baseline]
                cols_se.append(r.standard_error)
                cols_t.append(r.trisk)
                self_row = r.systems.index(r.baseline) if r.baseline in r.systems else None
                _numerics.warn_zero_variance(_numerics.zero_rows((r.standard_error == 0).T, r.systems, self_row),
                                             where=f" against baseline {r.baseline!r}")
            urisk = np.stack(cols_u, axis=2)
            se = np.stack(cols_se, axis=2)
            trisk = np.stack(cols_t, axis=2)
        skip = np.full(len(names), -1, dtype=np.int64)
        if exclude_self:
            for j, name in enumerate(names):
                if name in matrix.systems:
                    skip[j] = matrix.systems.index(name)
    pvalue = None
    if spec.name != "t":
        with limit_threads(threads, work):
            pvalue = _table_pvalues(matrix, vf, baselines, names, spec, trisk, score_bounds, B, seed, threads,
                                    higher=higher if baselines is None else None, kernels=k)
    note = _inference.t_level_note(vf.alpha, c) if spec.name == "t" and vf.is_linear else None
    sign = -1.0 if convention == "minus" else 1.0
    return BaselineTable(inference=spec.name, level_note=note or "", _pvalue=pvalue,
                         systems=matrix.systems, baselines=tuple(names), alpha=vf.alpha,
                         loss_weight=vf.loss_weight, given=vf.given, value=vf.name, convention=convention,
                         rank_ties=rank_ties, exclude_self=bool(exclude_self),
                         n_topics=c, df=c - 1, urisk=sign * urisk if sign < 0 else urisk, standard_error=se,
                         trisk=sign * trisk if sign < 0 else trisk,
                         _rank_inputs=(rank_ties == "ordinal", skip, k is _k, threads, work))


def _table_inference_iv(matrix, vf, inference, score_bounds, replicates, rng):
    """The inference of a table and its checks (`fastrisk.core.urisk._inference_options_iv`
    for every pair): at least 3 topics, scores within the bounds. Two identical systems (all
    d = 0) get p NaN, as TRisk's 0/0, and the table's `ZeroVarianceWarning` names them."""
    spec, B, seed = _inference._matrix_inference_iv(inference, replicates, rng, matrix.n_topics)
    if spec.name == "t":
        return spec, B, seed
    if spec.name == "exact":
        if not vf.is_linear:
            raise InputError("inference='exact' needs the linear value function (x = d + α·min(d, 0)), whose bounds "
                             f"follow from `score_bounds`; got value={vf.name!r}")
        lo, hi = _inference._bounds_iv(score_bounds)
        _inference.check_scores_within(matrix.values, lo, hi, matrix.systems, "system", matrix.topics)
    return spec, B, seed


#: The corrections the all-baseline table computes from its one-pass sums (kernel codes).
_ANALYTIC = {"edgeworth": 1, "johnson": 2, "hall": 3}


def _higher_sums(values, fourth: bool, kernels):
    """`fastrisk._kernels.tables.pair_sums_higher` of the matrix: (its 7 sums and row sums, the
    (|d|, d|d|, d², row, mag) tuple `_all_pairs` takes in place of `pair_sums`')."""
    values = _numerics.read_only(np.ascontiguousarray(values, dtype=np.float64))
    with _interrupt.stoppable() as stop:
        sums, row, mag = kernels.pair_sums_higher(values, BLOCK, TOPIC_BLOCK, fourth, stop)
    return (sums, row), (sums[0], sums[1], sums[2], row, mag)


def _table_pvalues(matrix, vf, baselines, names, spec, trisk, score_bounds, B, seed, threads, higher=None,
                   kernels=_k):
    """Two-sided p-values ``[alpha, system, baseline]`` by ``spec`` (not ``t``)."""
    c = matrix.n_topics
    if higher is not None:
        values = matrix.values
        sums, row = higher[0]
        p = kernels.table_corrected_pvalues(sums, row, vf.alpha, float(c), _ANALYTIC[spec.name],
                                            _numerics.VARIANCE_RTOL)
        if spec.name == "johnson":
            p = t_pvalue(p, c - 1)
        p[:, sums[0] + sums[0].T == 0.0] = np.nan  # identical systems (all d = 0) and the diagonal: 0/0
        # cells whose one-pass variance may have lost digits (|TRisk| near REFINE_RATIO's bound):
        # recomputed from their differences, as `fastrisk.risk` would
        with np.errstate(invalid="ignore"):
            redo = np.argwhere(np.abs(trisk) >= 0.5 * np.sqrt(REFINE_RATIO * (c - 1)))
        redo = redo[(redo[:, 1] != redo[:, 2]) & np.isfinite(trisk[tuple(redo.T)])]  # ±inf: constant d, exact
        if len(redo):
            d = values[redo[:, 1]] - values[redo[:, 2]]
            x = d + vf.alpha[redo[:, 0]][:, None] * np.minimum(d, 0.0)
            p[redo[:, 0], redo[:, 1], redo[:, 2]] = _inference.pvalues(x, spec, threads=threads)
        return p
    cols = []
    for j, b in enumerate(names if baselines is None else baselines):
        bvals = matrix.values[j:j + 1] if baselines is None else None
        if bvals is None:
            _, base = resolve_baseline(matrix, b)
            bvals = base.values
        col = _pvalues_against(matrix.values, bvals, vf, spec, score_bounds, 0.05, B, seed, threads,
                               row0=j * matrix.n_systems)
        col[:, (matrix.values == bvals).all(axis=1)] = np.nan  # identical to the baseline (the diagonal): 0/0
        cols.append(col)
    return np.stack(cols, axis=2)


def _all_pairs(values: np.ndarray, alphas: np.ndarray, block: int = BLOCK, topic_block: int = TOPIC_BLOCK,
               kernels=_k, sums=None):
    """URisk, SE and TRisk ``[alpha, system, baseline]`` of every system against every system
    (classic convention), the (S, S) mask of pairs with a zero SE at some alpha, and whether
    every result is in range (else the caller rescales).

    The one-pass sums give sum (x - mean)^2 = sum x^2 - (sum x)^2 / c, which cancels when the
    differences are nearly constant (|TRisk| large): its relative error is about eps * (sum
    x^2) / (sum (x - mean)^2). Cells where that ratio exceeds `REFINE_RATIO` (|TRisk|
    beyond about 10 sqrt(c - 1)) are recomputed as `fastrisk.risk` computes them (centred
    sums, `fastrisk._kernels.tables.refine_linear`), and equal `risk`'s there. Elsewhere
    sum d = (row sum a) - (row sum b) and sum n^2 = (sum d^2 - sum d|d|) / 2 carry absolute
    errors of a few eps times the scores' and d^2's magnitudes: URisk and SE agree with the
    two-pass values to about 1e-13 of mean |x| and relative (TREC 2012 Web, and correlated
    synthetic runs, at alpha up to 30; `risk` itself: about 1e-15).
    """
    values = _numerics.read_only(np.ascontiguousarray(values, dtype=np.float64))
    if sums is None:  # else given: `pair_sums_higher`'s, the same numbers
        with _interrupt.stoppable() as stop:
            sums = kernels.pair_sums(values, block, topic_block, stop)
    alphas = np.ascontiguousarray(alphas, dtype=np.float64)
    c = values.shape[1]
    urisk, se, trisk, cancelled, zero, ok = kernels.table_moments(*sums, alphas, c, _numerics.VARIANCE_RTOL,
                                                                  REFINE_RATIO, _numerics.LO, _numerics.HI)
    del sums
    if _refine(kernels.refine_linear, cancelled, values, alphas, urisk, se, trisk):
        zero = (se == 0).any(axis=0)
    return urisk, se, trisk, zero, ok


def _value_pairs(values: np.ndarray, vf, kernels=_k):
    """`_all_pairs` for a value function: every ordered pair's one-pass sums, and the cells whose
    variance cancelled recomputed as `fastrisk.risk` with that value function computes them
    (`fastrisk._kernels.tables.refine_value`)."""
    values = _numerics.read_only(np.ascontiguousarray(values, dtype=np.float64))
    with _interrupt.stoppable() as stop:
        sx, sx2 = vf.kernel(kernels.value_pair_sums)(values, stop)
    c = values.shape[1]
    urisk, se, trisk, cancelled, zero, ok = kernels.value_table_moments(
        sx, sx2, c, _numerics.VARIANCE_RTOL, REFINE_RATIO, _numerics.LO, _numerics.HI)
    if _refine(vf.kernel(kernels.refine_value), cancelled, values, None, urisk, se, trisk):
        zero = (se == 0).any(axis=0)
    return urisk, se, trisk, zero, ok


#: One-pass sums are replaced by the two-pass variance where sum x^2 exceeds this many times
#: sum (x - mean)^2 (two or more digits of the one-pass difference cancelled).
REFINE_RATIO = 100.0


def _refine(kernel, cancelled, values, alphas, urisk, se, trisk) -> bool:
    """Recompute, in place, the off-diagonal cells flagged ``cancelled``; True if there were any."""
    cells = np.argwhere(cancelled)
    cells = np.ascontiguousarray(cells[cells[:, 1] != cells[:, 2]], dtype=np.int64)
    if not len(cells):
        return False
    args = (values, cells) if alphas is None else (values, cells, alphas)
    kernel(*args, _numerics.VARIANCE_RTOL, urisk, se, trisk)
    return True


def _rescale_extreme_pairs(values, vf, urisk, se, trisk) -> None:
    """Recompute, in place, every pair involving a system whose own magnitude is extreme
    (`fastrisk._runtime.numerics.row_exponents`), each pair scaled by the exact power of two
    of its larger row: the pairs of ordinary systems keep their numbers, whatever one
    system's scores. Column e (systems against baseline e) is `risk` against row e;
    row e (e against every baseline) is the same on negated scores (d = e - b)."""
    extreme = np.flatnonzero(_numerics.row_exponents(values, np.zeros((1, 1))))
    for e in extreme:
        for sign, cells in ((1.0, (slice(None), slice(None), e)), (-1.0, (slice(None), e, slice(None)))):
            _, _, u, s, _, t, _ = _moments(sign * values, sign * values[e:e + 1], vf)  # [system, alpha]
            urisk[cells], se[cells], trisk[cells] = u.T, s.T, t.T


def _warn_identical(systems, zero) -> None:
    """The one `ZeroVarianceWarning` of a table, naming the pairs (S, S mask ``zero``) once."""
    zero = np.argwhere(zero)
    zero = zero[zero[:, 0] < zero[:, 1]]
    _numerics.warn_zero_variance([f"{systems[a]}/{systems[b]}" for a, b in zero], f"{len(zero)} pair(s) of systems",
                                 stacklevel=4)
