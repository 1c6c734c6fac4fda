"""Batched risk and tests: K independent collections in one kernel call, parallel over K.

A *stack* is K collections of the same shape: a (K, S, c) array (K collections of S systems
over c topics) or a sequence of `ScoreMatrix` of one shape. Construction
costs one vectorised check (shape, finiteness) for the whole stack, never a pass per
collection, so a million 2 x 50 collections cost what their arithmetic costs.

Every result has a leading ``batch`` axis (``[batch, alpha, system]``):

- `risk`: URisk, SE_x, jackknife SE_J, TRisk and its Student-t p-value of every system
  against a baseline row (Wang, Bennett & Collins-Thompson 2012; Dinçer, Macdonald & Ounis,
  SIGIR 2014);
- `t_test`: the paired t test (TRisk at alpha = 0 is the t statistic);
- `zrisk`: ZRisk and GeoRisk within each collection (Dinçer, Macdonald & Ounis 2016);
- `bootstrap`, `permutation_test`: the shift-to-the-null bootstrap test and the
  sign-flip randomisation test of URisk.

Randomness is counter-based per (seed, collection, replicate): the same ``rng`` gives the
same numbers whatever the thread count and however the stack is split (``start=`` gives the
global index of a chunk's first collection).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import special

from fastrisk._kernels import batch as _k
from fastrisk._runtime import numerics as _numerics
from fastrisk._runtime.aliases import AlphaLike, SeedLike
from fastrisk._runtime.rng import resolve_seed
from fastrisk._runtime.threads import limit_threads
from fastrisk._runtime.validation import choice, non_negative_int, replicates
from fastrisk.core.values import resolve_alphas
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.data.results import Result, array, deprecated_alias
from fastrisk.errors import InputError

ALTERNATIVES = ("two-sided", "less", "greater")
CONVENTIONS = ("classic", "minus")
#: Collections per resampling chunk (bounds the per-topic score arrays built for a chunk).
CHUNK = 1 << 15


# ====================================================================== stacks
@dataclass(frozen=True)
class Stack:
    """K collections of S systems over c topics: ``values`` (K, S, c), C-contiguous float64."""

    values: np.ndarray
    systems: tuple
    topics: tuple | None

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.values.shape


def is_stack(data) -> bool:
    """True for what the batched functions take: a 3-D array, a `Stack`, or a non-empty
    list/tuple of ScoreMatrix (the test the single-collection API uses to dispatch here).

    Parameters
    ----------
    data : object
        Any input.

    Returns
    -------
    bool
        Whether the batched functions take it.
    """
    if type(data) is ScoreMatrix:  # the usual single-collection call: no isinstance chain
        return False
    if isinstance(data, Stack):
        return True
    if isinstance(data, np.ndarray):
        return data.ndim == 3
    return isinstance(data, (list, tuple)) and len(data) > 0 and all(isinstance(m, ScoreMatrix) for m in data)


def refuse_options(fn: str, **options) -> None:
    """Refuse, by name, an option of the single-collection ``fn`` that a stack does not take
    (``options``: name -> (given value, allowed values)); the stack path is `fastrisk.core.batch`."""
    for name, (given, allowed) in options.items():
        if not any(given is a or (isinstance(a, (str, float)) and not isinstance(given, bool) and given == a)
                   for a in allowed):
            raise InputError(f"{fn}() of a stack of collections (fastrisk.core.batch) takes no `{name}={given!r}`; "
                             f"allowed: {', '.join(map(repr, allowed))}")


def stack(data, *, systems: Sequence | None = None, name: str = "data", check: bool = True) -> Stack:
    """A `Stack` from a (K, S, c) array or a sequence of ScoreMatrix of one shape.

    One vectorised check for the whole stack: three dimensions, at least 2 topics, finite
    values (the first bad cell is named by collection, system and topic). ``check=False``
    leaves finiteness to the caller (the risk kernels check it in their own pass).

    Parameters
    ----------
    data : (K, S, c) array_like or sequence of ScoreMatrix
        The collections.
    systems : sequence of str, optional
        System names (default: those of the matrices, or positions).
    name : str
        The argument's name in messages.
    check : bool
        Check that every value is finite.

    Returns
    -------
    Stack
        The values and the system names.
    """
    if isinstance(data, Stack):
        return data
    topics = None
    if isinstance(data, ScoreMatrix):
        data = [data]
    if isinstance(data, (list, tuple)) and data and all(isinstance(m, ScoreMatrix) for m in data):
        first = data[0]
        for k, m in enumerate(data):
            if m.shape != first.shape:
                raise InputError(f"`{name}`: collection {k} has shape {m.shape}, collection 0 has {first.shape}; "
                                 "a stack needs collections of one shape")
        systems = first.systems if systems is None else systems
        topics = first.topics
        values = np.stack([m.values for m in data])  # each ScoreMatrix is already validated
    else:
        try:
            values = np.ascontiguousarray(data, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InputError(f"`{name}` must be a (K, S, c) array of scores or a sequence of ScoreMatrix: {exc}") \
                from None
        if values.ndim != 3:
            raise InputError(f"`{name}` must have 3 dimensions (collection, system, topic), got shape {values.shape}")
        if check:
            _check_finite(values, name)
    K, S, c = values.shape
    if K < 1 or S < 1:
        raise InputError(f"`{name}` must hold at least one collection of one system, got shape {values.shape}")
    if c < 2:
        raise InputError(f"`{name}`: at least 2 topics are needed to estimate a standard error, got {c}")
    if systems is None:
        systems = tuple(f"s{j}" for j in range(S))
    systems = tuple(str(s) for s in systems)
    if len(systems) != S:
        raise InputError(f"`systems` names {len(systems)} systems, the stack has {S}")
    return Stack(values, systems, topics)


def _check_finite(values: np.ndarray, name: str = "data", rows=None) -> None:
    """Raise naming the first non-finite cell (of the collections ``rows``, default all)."""
    sub = values if rows is None else values[rows]
    bad = ~np.isfinite(sub)
    if bad.any():
        k, s, i = (int(j) for j in np.argwhere(bad)[0])
        kk = k if rows is None else int(np.asarray(rows)[k])
        raise InputError(f"`{name}`: score of system {s} on topic {i} of collection {kk} is {sub[k, s, i]}; "
                         f"scores must be finite ({int(bad.sum())} non-finite cell(s) in all)")


def _baseline_row(st: Stack, baseline) -> int:
    if isinstance(baseline, str):
        if baseline not in st.systems:
            raise InputError(f"`baseline` {baseline!r} is not a system of the stack ({', '.join(st.systems[:10])})")
        return st.systems.index(baseline)
    if isinstance(baseline, numbers.Integral) and not isinstance(baseline, bool):
        S = st.values.shape[1]
        if not -S <= baseline < S:
            raise InputError(f"`baseline` must be a system row in [0, {S}), got {baseline}")
        return int(baseline) % S
    raise InputError(f"`baseline` must be a system name or row index, got {type(baseline).__name__}")


_choice = choice
_replicates_iv = replicates


def _start_iv(start) -> int:
    return non_negative_int(start, "start")


def t_pvalue(t, df, alternative: str):
    """p-value of Student's t statistic ``t`` with ``df`` degrees of freedom.

    Parameters
    ----------
    t : array_like
        The t statistics.
    df : int
        Degrees of freedom.
    alternative : {"two-sided", "less", "greater"}
        The alternative hypothesis.

    Returns
    -------
    numpy.ndarray
        The p-values.
    """
    _choice(alternative, "alternative", ALTERNATIVES)  # a misspelt one gave the two-sided p
    if alternative == "greater":
        return special.stdtr(df, -t)
    if alternative == "less":
        return special.stdtr(df, t)
    return 2.0 * special.stdtr(df, -np.abs(t))


# ====================================================================== results
@dataclass(frozen=True, repr=False)
class BatchRiskResult(Result):
    """URisk/TRisk of every system of K collections against a baseline row: arrays
    ``[batch, alpha, system]``; TRisk's two-sided Student-t ``pvalue`` (df = c - 1);
    ``at_risk`` / ``rewarding``: significantly worse / better than the baseline at level
    ``significance`` (|TRisk| beyond ``critical_t``), in either convention."""

    systems: tuple
    alpha: np.ndarray
    loss_weight: np.ndarray
    baseline: str
    convention: str
    df: int
    significance: float
    critical_t: float
    urisk: np.ndarray = array("batch", "alpha", "system")
    standard_error: np.ndarray = array("batch", "alpha", "system")
    se_jack: np.ndarray = array("batch", "alpha", "system")
    trisk: np.ndarray = array("batch", "alpha", "system")
    freward: np.ndarray = array("batch", "system")
    frisk: np.ndarray = array("batch", "system")
    _constants: ClassVar[tuple] = ("baseline",)
    _derived: ClassVar[dict] = {"pvalue": ("batch", "alpha", "system"), "at_risk": ("batch", "alpha", "system"),
                                "rewarding": ("batch", "alpha", "system")}

    @property
    def statistic(self) -> np.ndarray:
        return self.trisk

    @property
    def pvalue(self) -> np.ndarray:
        return t_pvalue(self.trisk, self.df, "two-sided")

    @property
    def at_risk(self) -> np.ndarray:
        sign = -1.0 if self.convention == "minus" else 1.0
        return sign * self.trisk < -self.critical_t

    @property
    def rewarding(self) -> np.ndarray:
        sign = -1.0 if self.convention == "minus" else 1.0
        return sign * self.trisk > self.critical_t


@dataclass(frozen=True, repr=False)
class BatchTTestResult(Result):
    """Paired t test per collection and system: ``statistic`` t, ``pvalue``, ``urisk``
    (the mean per-topic score, URisk at alpha), ``[batch, alpha, system]``."""

    systems: tuple
    alpha: np.ndarray
    loss_weight: np.ndarray
    baseline: str
    alternative: str
    df: int
    statistic: np.ndarray = array("batch", "alpha", "system")
    pvalue: np.ndarray = array("batch", "alpha", "system")
    urisk: np.ndarray = array("batch", "alpha", "system")


@dataclass(frozen=True, repr=False)
class BatchZRiskResult(Result):
    """ZRisk and GeoRisk ``[batch, alpha, system]`` within each collection; ``effectiveness``
    ``[batch, system]`` is the mean score. ZRisk has no p-value: no ``statistic`` (a deprecated
    alias of ``zrisk`` for one release)."""

    _headline: ClassVar[str] = "zrisk"

    systems: tuple
    alpha: np.ndarray
    loss_weight: np.ndarray
    convention: str
    zrisk: np.ndarray = array("batch", "alpha", "system")
    georisk: np.ndarray = array("batch", "alpha", "system")
    effectiveness: np.ndarray = array("batch", "system")

    statistic = deprecated_alias("statistic", "zrisk")


@dataclass(frozen=True, repr=False)
class BatchBootstrapResult(Result):
    """Bootstrap test of URisk = 0 per collection, alpha and system (replicates shifted to the
    null, p = (count + 1) / (B + 1)); ``standard_error`` is the bootstrap SD of URisk. The
    test statistic is URisk itself: ``statistic`` and ``urisk`` are the same array."""

    systems: tuple
    alpha: np.ndarray
    loss_weight: np.ndarray
    baseline: str
    alternative: str
    replicates: int
    seed: int
    statistic: np.ndarray = array("batch", "alpha", "system")
    urisk: np.ndarray = array("batch", "alpha", "system")
    standard_error: np.ndarray = array("batch", "alpha", "system", doc="Bootstrap standard deviation of URisk.")
    pvalue: np.ndarray = array("batch", "alpha", "system")


@dataclass(frozen=True, repr=False)
class BatchPermutationResult(Result):
    """Sign-flip randomisation test per collection, alpha and system: ``statistic`` URisk (the
    test statistic, also ``urisk``), ``pvalue`` (scipy's conventions: exact over 2^c patterns when 2^c <= replicates, else
    (count + 1) / (B + 1); two-sided = min(1, 2 min(p_less, p_greater)))."""

    systems: tuple
    alpha: np.ndarray
    loss_weight: np.ndarray
    baseline: str
    alternative: str
    replicates: int
    exact: bool
    seed: int | None
    statistic: np.ndarray = array("batch", "alpha", "system")
    urisk: np.ndarray = array("batch", "alpha", "system")
    pvalue: np.ndarray = array("batch", "alpha", "system")


# ====================================================================== risk, t, zrisk
def _risk_iv(data, baseline, alpha, loss_weight, convention, check=True):
    st = stack(data, check=check)
    row = _baseline_row(st, baseline)
    a, lw, _ = resolve_alphas(alpha, loss_weight)
    _choice(convention, "convention", CONVENTIONS)
    return st, row, a, lw


def _risk_arrays(st: Stack, row: int, a: np.ndarray, threads):
    V = st.values
    with limit_threads(threads, V.size * len(a)):
        freward, frisk, urisk, se, sej, trisk, bad, zero = _k.risk_batch(V, row, a)
    if bad.any():
        _check_finite(V, rows=np.flatnonzero(bad))
    if zero.any():  # the one numerical policy (fastrisk._runtime.numerics): one warning for the whole batch
        k = np.flatnonzero(zero)
        _numerics.warn_zero_variance([f"collection {j}" for j in k], what="systems of",
                                     where=f" against baseline {st.systems[row]!r}", stacklevel=4)
    return freward, frisk, urisk, se, sej, trisk


def risk(data, baseline=0, *, alpha: AlphaLike | None = None, loss_weight: AlphaLike | None = None,
         convention: str = "classic", significance: float = 0.05, threads: int | None = None) -> BatchRiskResult:
    """URisk, SE_x, SE_J and TRisk of every system of every collection vs ``baseline``.

    ``data``: a (K, S, c) array or a sequence of ScoreMatrix; ``baseline``: the row (or
    system name) of the baseline in every collection. x_i = d_i, or (1 + alpha) d_i for
    losses; URisk = mean(x), TRisk = URisk / (s_x / sqrt(c)), ±inf (NaN if URisk = 0) at zero
    SE. ``convention="minus"`` negates URisk and TRisk (Benham, Moffat & Culpepper 2019).
    Arrays are ``[batch, alpha, system]``.

    Parameters
    ----------
    data, baseline, alpha, loss_weight, threads
        As in `bootstrap`.
    convention : {"classic", "minus"}
        ``"minus"`` negates URisk and TRisk.
    significance : float
        Two-sided level of the at-risk and rewarding flags.

    Returns
    -------
    BatchRiskResult
        Arrays ``[batch, alpha, system]``.
    """
    st, row, a, lw = _risk_iv(data, baseline, alpha, loss_weight, convention, check=False)
    if isinstance(significance, bool) or not (isinstance(significance, numbers.Real) and 0.0 < significance < 1.0):
        raise InputError(f"`significance` must be a level in (0, 1), got {significance!r}")
    freward, frisk, urisk, se, sej, trisk = _risk_arrays(st, row, a, threads)
    sign = -1.0 if convention == "minus" else 1.0
    df = st.shape[2] - 1
    return BatchRiskResult(systems=st.systems, alpha=a, loss_weight=lw, baseline=st.systems[row],
                           convention=convention, df=df, significance=float(significance),
                           critical_t=float(special.stdtrit(df, 1.0 - significance / 2)), urisk=sign * urisk,
                           standard_error=se, se_jack=sej, trisk=sign * trisk, freward=freward, frisk=frisk)


def t_test(data, baseline=0, *, alpha=0.0, loss_weight: AlphaLike | None = None, alternative: str = "two-sided",
           threads: int | None = None) -> BatchTTestResult:
    """Paired t test of every system against ``baseline`` in every collection.

    t = mean(x) / (s_x / sqrt(c)), df = c - 1; at alpha = 0 (default) x = r - b and this is
    ``scipy.stats.ttest_rel(r, b, axis=-1)``; at alpha > 0 it is TRisk. Zero variance: t = ±inf
    (NaN when the mean is 0 too).

    Parameters
    ----------
    data, baseline, alpha, loss_weight, alternative, threads
        As in `bootstrap`.

    Returns
    -------
    BatchTTestResult
        ``statistic`` (t), ``urisk`` and ``pvalue``, ``[batch, alpha, system]``.
    """
    st, row, a, lw = _risk_iv(data, baseline, alpha if loss_weight is None else None, loss_weight, "classic",
                              check=False)
    _choice(alternative, "alternative", ALTERNATIVES)
    _, _, urisk, _, _, t = _risk_arrays(st, row, a, threads)
    df = st.shape[2] - 1
    return BatchTTestResult(systems=st.systems, alpha=a, loss_weight=lw, baseline=st.systems[row],
                            alternative=alternative, df=df, statistic=t, pvalue=t_pvalue(t, df, alternative),
                            urisk=urisk)


def zrisk(data, *, alpha: AlphaLike | None = None, loss_weight: AlphaLike | None = None,
          convention: str = "classic", threads: int | None = None) -> BatchZRiskResult:
    """ZRisk and GeoRisk of every system within each collection (Dinçer et al. 2016).

    e_ik = T_i S_k / N, z_ik = (X[i,k] - e_ik) / sqrt(e_ik) (0 where e_ik = 0),
    ZRisk = sum_{z>0} z + (1 + alpha) sum_{z<0} z, GeoRisk = sqrt(mean X[., k] Phi(ZRisk / c)).
    Scores must be non-negative.

    Parameters
    ----------
    data : (K, S, c) array_like, Stack or sequence of ScoreMatrix
        K collections of S systems x c topics (non-negative).
    alpha, loss_weight : float or sequence of float, optional
        Risk aversion, ``loss_weight = 1 + alpha``.
    convention : {"classic", "minus"}
        ``"minus"`` gives ZRisk- = -ZRisk and GeoRisk-.
    threads : int, optional
        Numba threads (default: all cores).

    Returns
    -------
    BatchZRiskResult
        Arrays ``[batch, alpha, system]``.
    """
    st = stack(data)
    a, lw, _ = resolve_alphas(alpha, loss_weight)
    _choice(convention, "convention", CONVENTIONS)
    V = st.values
    if (V < 0).any():
        k, s, i = (int(j) for j in np.argwhere(V < 0)[0])
        raise InputError(f"ZRisk/GeoRisk need non-negative scores; system {st.systems[s]!r} scores {V[k, s, i]} "
                         f"on topic {i} of collection {k}")
    with limit_threads(threads, V.size * len(a)):
        z, geo, eff = _k.zrisk_batch(V, lw, -1.0 if convention == "minus" else 1.0)
    return BatchZRiskResult(systems=st.systems, alpha=a, loss_weight=lw, convention=convention,
                            zrisk=z.transpose(0, 2, 1), georisk=geo.transpose(0, 2, 1), effectiveness=eff)


# ====================================================================== resampling
def _scores(V, row, a):
    """Per-topic risk-reward scores (K, A * S, c) of a chunk (`fastrisk._kernels.batch.batch_scores`)."""
    return _k.batch_scores(V, row, np.ascontiguousarray(a, dtype=np.float64))


def bootstrap(data, baseline=0, *, alpha: AlphaLike | None = None, loss_weight: AlphaLike | None = None,
              replicates: int = 10000, alternative: str = "two-sided", rng: SeedLike = None, start: int = 0,
              threads: int | None = None) -> BatchBootstrapResult:
    """Bootstrap test of URisk = 0 for every system of every collection (topics resampled).

    Replicate means are shifted to the null (d* = mean* - URisk) and compared with URisk:
    p = (#{d* >= URisk} + 1) / (B + 1) ('greater'), #{d* <= URisk} ('less'),
    #{|d*| >= |URisk|} ('two-sided'); Efron & Tibshirani (1993), Urbano et al. (2019).
    Collection k uses the streams (seed, start + k, b): chunks of a stack give the same
    numbers as the whole.

    Parameters
    ----------
    data : (K, S, c) array_like, Stack or sequence of ScoreMatrix
        K collections of S systems x c topics.
    baseline : int or str
        The row (or system name) of the baseline in every collection.
    alpha, loss_weight : float or sequence of float, optional
        Risk aversion, ``loss_weight = 1 + alpha``.
    replicates : int
        Number of replicates (at most 10**9).
    alternative : {"two-sided", "less", "greater"}
        The alternative hypothesis.
    rng : int, SeedSequence or Generator, optional
        Seed; the same seed gives the same numbers for any thread count.
    start : int
        Stream of the first collection (chunks of a stack give the numbers of the whole).
    threads : int, optional
        Numba threads (default: all cores).

    Returns
    -------
    BatchBootstrapResult
        Arrays ``[batch, alpha, system]``.
    """
    st, row, a, lw = _risk_iv(data, baseline, alpha, loss_weight, "classic")
    B = _replicates_iv(replicates)
    _choice(alternative, "alternative", ALTERNATIVES)
    start = _start_iv(start)
    seed = resolve_seed(rng)
    V = st.values
    K, S, c = V.shape
    A = len(a)
    counts = np.empty((K, A * S, 3), np.int64)
    moments = np.empty((K, A * S, 2))
    with limit_threads(threads, K * B * c * (1 + A * S)):
        for lo in range(0, K, CHUNK):
            hi = min(K, lo + CHUNK)
            counts[lo:hi], moments[lo:hi] = _k.bootstrap_batch(_scores(V[lo:hi], row, a), seed, start + lo, B)
    col = {"greater": 0, "less": 1, "two-sided": 2}[alternative]
    p = (counts[..., col] + 1.0) / (B + 1.0)
    p.reshape(K, A, S)[:, :, row] = np.nan  # the baseline against itself is no test (as t_test's NaN)
    urisk = _scores_mean(V, row, a)
    shape = (K, A, S)
    return BatchBootstrapResult(systems=st.systems, alpha=a, loss_weight=lw, baseline=st.systems[row],
                                alternative=alternative, replicates=B, seed=seed, statistic=urisk, urisk=urisk,
                                standard_error=moments[..., 1].reshape(shape), pvalue=p.reshape(shape))


def _scores_mean(V, row, a):
    """URisk (K, A, S) as this module's `risk` and `fastrisk.risk` compute it (`fastrisk._kernels.risk.risk_sums`)."""
    return _k.risk_batch(V, row, np.ascontiguousarray(a, dtype=np.float64))[2]


def permutation_test(data, baseline=0, *, alpha: AlphaLike | None = None, loss_weight: AlphaLike | None = None,
                     replicates: int = 10000, alternative: str = "two-sided", rng: SeedLike = None, start: int = 0,
                     threads: int | None = None) -> BatchPermutationResult:
    """Paired sign-flip (randomisation) test of URisk for every system of every collection.

    Under the null each topic's pair is exchangeable: the per-topic score is v(d_i) or
    v(-d_i) with equal chance. For the linear value function v(d) - v(-d) = (2 + alpha) d
    and v(d) + v(-d) = -alpha |d|, so the replicate URisk is a constant plus a positive
    multiple of sum(s_i d_i): the test (its p-value) is the same at every alpha and is run
    once per system. Exact over all 2^c patterns when 2^c <= replicates (as
    ``scipy.stats.permutation_test``), else (count + 1) / (B + 1); two-sided
    min(1, 2 min(p_less, p_greater)).

    Parameters
    ----------
    data, baseline, alpha, loss_weight, replicates, alternative, rng, start, threads
        As in `bootstrap`.

    Returns
    -------
    BatchPermutationResult
        Arrays ``[batch, alpha, system]``.
    """
    st, row, a, lw = _risk_iv(data, baseline, alpha, loss_weight, "classic")
    B = _replicates_iv(replicates)
    _choice(alternative, "alternative", ALTERNATIVES)
    start = _start_iv(start)
    V = st.values
    K, S, c = V.shape
    exact = c < 31 and 2 ** c <= B
    seed = None if exact else resolve_seed(rng)
    n = 2 ** c if exact else B
    counts = np.empty((K, S, 2), np.int64)
    with limit_threads(threads, K * n * c * (1 + S)):
        for lo in range(0, K, CHUNK):
            hi = min(K, lo + CHUNK)
            H = np.ascontiguousarray(V[lo:hi] - V[lo:hi, row:row + 1, :])
            counts[lo:hi] = _k.permutation_batch(H, 0 if exact else seed, start + lo, B, exact)
    adj = 0.0 if exact else 1.0
    ge = (counts[..., 0] + adj) / (n + adj)
    le = (counts[..., 1] + adj) / (n + adj)
    p = ge if alternative == "greater" else le if alternative == "less" else np.minimum(1.0, 2 * np.minimum(ge, le))
    p[:, row] = np.nan  # the baseline against itself is no test (as t_test's NaN)
    return BatchPermutationResult(systems=st.systems, alpha=a, loss_weight=lw, baseline=st.systems[row],
                                  alternative=alternative, replicates=n, exact=bool(exact), seed=seed,
                                  statistic=(urisk := _scores_mean(V, row, a)), urisk=urisk,
                                  pvalue=np.broadcast_to(p[:, None, :], (K, len(a), S)).copy())


__all__ = [
    "BatchBootstrapResult",
    "BatchPermutationResult",
    "BatchRiskResult",
    "BatchTTestResult",
    "BatchZRiskResult",
    "Stack",
    "bootstrap",
    "is_stack",
    "permutation_test",
    "risk",
    "stack",
    "t_pvalue",
    "t_test",
    "zrisk",
]
