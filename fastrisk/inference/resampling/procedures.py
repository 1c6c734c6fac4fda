"""The public procedures: `bootstrap`, `permutation_test`, `jackknife`, `t_test`."""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import special

from fastrisk._kernels import resampling as _k
from fastrisk._kernels import risk as _k_risk
from fastrisk._runtime import numerics as _numerics
from fastrisk._runtime.resources import check_memory
from fastrisk._runtime.rng import resolve_seed
from fastrisk._runtime.threads import limit_threads, parallel
from fastrisk._runtime.tstat import COMPILED_DF, CONVENTIONS, t_pvalue
from fastrisk._runtime.validation import flag
from fastrisk.core import batch as _batch
from fastrisk.core.urisk import _HI, _LO, _linear_table, _risk_iv
from fastrisk.core.values import resolve_value
from fastrisk.data.matrix import ScoreMatrix, as_matrix, check_missing_policy, is_frame
from fastrisk.data.results import ConfidenceInterval, array
from fastrisk.errors import AlphaInvariantWarning, InputError
from fastrisk.inference.resampling._engine import (
    _WINDOW_BYTES,
    ALTERNATIVES,
    CHUNK_WORK,
    _check_resampling_memory,
    _choice,
    _chunk_rows,
    _GenericSource,
    _LinearSource,
    _positive_int,
    _progress_iv,
    _replicates_iv,
    _run,
    _statistic_iv,
    _statistic_name,
    _Stream,
    _user_statistic,
)
from fastrisk.inference.resampling._scores import _column_names, _in_convention, _oriented, _scores, _self_columns
from fastrisk.inference.resampling.results import BootstrapResult, JackknifeResult, PermutationResult, _Labelled

#: Keep the replicate arrays by default when they take at most this many bytes.
KEEP_BYTES = 256 * 2**20
#: Half-width of the streaming histograms, in (expected) standard deviations.
_HALF_WIDTH_SD = 8.0
#: Work of one chunk when a user statistic is resampled (a gather and a call per replicate;
#: see `fastrisk.inference.resampling._engine.CHUNK_WORK`).
CHUNK_WORK_STATISTIC = 2**25

METHODS = ("percentile", "basic", "bca", "studentized")
TESTS = ("shift", "t")


# ====================================================================== bootstrap
def _bootstrap_iv(replicates, method, confidence_level, alternative, test, statistic, keep_replicates):
    B = _replicates_iv(replicates)
    if method is not None:  # None: no interval (the test and the standard error only)
        _choice(method, "method", METHODS)
    _choice(alternative, "alternative", ALTERNATIVES)
    _choice(test, "test", TESTS)
    if isinstance(confidence_level, bool) or not isinstance(confidence_level, numbers.Real) \
            or not 0.0 < confidence_level < 1.0:
        raise InputError(f"`confidence_level` must be a number in (0, 1), got {confidence_level!r}")
    if keep_replicates not in (None, True, False):
        raise InputError(f"`keep_replicates` must be None, True or False, got {keep_replicates!r}")
    stat = _statistic_iv(statistic)
    if stat is not None and (method == "studentized" or test == "t"):
        raise InputError("`method='studentized'` and `test='t'` need the linear path (statistic=None): "
                         "a generic statistic has no per-replicate standard error")
    return B, stat


def _interval_probs(method, confidence_level, alternative, z0=None, a_hat=None):
    alpha = (1 - confidence_level) / 2 if alternative == "two-sided" else 1 - confidence_level
    if method == "bca":
        z = special.ndtri(np.array([alpha, 1 - alpha]))
        num = z0[:, None] + z[None, :]
        return special.ndtr(z0[:, None] + num / (1 - a_hat[:, None] * num))
    return np.array([[alpha, 1 - alpha]])


def _acceleration(dev: np.ndarray) -> np.ndarray:
    """BCa acceleration from jackknife deviations theta_(.) - theta_(i), (M, c). Cubes as
    products: NumPy's ``** 3`` goes through ``pow`` (about 0.1 us an element, 0.3 ms on 47 x 50)."""
    sq = dev * dev
    num = (sq * dev).sum(axis=-1)
    den = 6.0 * sq.sum(axis=-1) ** 1.5
    with np.errstate(divide="ignore", invalid="ignore"):
        return num / den


#: Memory for the centred scores of one block of rows in `_centred_moments`, in bytes.
_MOMENT_BLOCK_BYTES = 16 * 2**20


def _centred_moments(y: np.ndarray, theta: np.ndarray):
    """Per row of ``y`` (M x c), with ``yc = y - theta``: the sum of squares of ``yc``, BCa's
    acceleration (`_acceleration` of the jackknife deviations ``yc / (c - 1)``), and the
    means of ``yc^2`` and ``yc^3``, computed a block of rows at a time so that no M x c
    temporary is formed (each row's reductions are the same whatever the block)."""
    M, c = y.shape
    ss, a_hat, m2, m3 = (np.empty(M) for _ in range(4))
    step = max(1, _MOMENT_BLOCK_BYTES // (8 * c))
    for lo in range(0, M, step):
        hi = min(lo + step, M)
        yc = y[lo:hi] - theta[lo:hi, None]
        sq = yc * yc
        ss[lo:hi] = sq.sum(axis=1)
        a_hat[lo:hi] = _acceleration(yc / (c - 1))
        m2[lo:hi] = sq.mean(axis=1)
        m3[lo:hi] = (sq * yc).mean(axis=1)
    return ss, a_hat, m2, m3


def _predict_windows(stream, m2, m3, c, sd, method, confidence_level, alternative, a_hat) -> None:
    """Windows around the predicted interval quantiles of a bootstrapped mean (Cornish-Fisher
    with the skewness of the resampled mean, BCa's z0 predicted as skewness / 6), so that one
    pass usually settles the exact quantiles. ``m2``, ``m3``: per-row means of the centred
    scores' squares and cubes."""
    M = m2.shape[0]
    B = stream.B
    with np.errstate(divide="ignore", invalid="ignore"):
        skew = np.where(m2 > 0, m3 / np.where(m2 > 0, m2, 1.0) ** 1.5, 0.0) / math.sqrt(c)
        probs = _interval_probs(method, confidence_level, alternative, skew / 6.0, a_hat)
        z = special.ndtri(np.broadcast_to(probs, (M, 2)))
        pred = sd[:, None] * (z + (z * z - 1.0) * skew[:, None] / 6.0)
        if method == "bca":  # the levels themselves move with the z0 the replicates give
            half = sd[:, None] * (0.3 + 30.0 / math.sqrt(B)) * np.ones((1, 2))
        else:  # fixed levels: the prediction's own error (one-term Cornish-Fisher: O(1/c) SDs) plus 6
            # standard deviations of the B-sample quantile, sqrt(p (1 - p) / B) / phi(z_p)
            p = np.broadcast_to(probs, (M, 2))
            sampling = np.sqrt(p * (1 - p) / B) * math.sqrt(2 * math.pi) * np.exp(0.5 * z * z)
            half = sd[:, None] * (0.05 + 0.5 / c + 6.0 * sampling)
        mass = np.where(sd[:, None] > 0, special.ndtr((pred + half) / sd[:, None])
                        - special.ndtr((pred - half) / sd[:, None]), 1.0)
    ok = np.isfinite(pred) & np.isfinite(mass)
    cap = np.where(ok, np.minimum(B, np.ceil(1.5 * B * np.where(ok, mass, 0) + 5 * np.sqrt(B * np.where(ok, mass, 0))
                                             + 32)), 0).astype(np.int64)
    if cap.sum() * 8 <= _WINDOW_BYTES:
        pred = pred + stream.center[:, None]
        stream.set_windows(np.where(ok, pred - half, 0.0), np.where(ok, pred + half, 0.0), cap)
        stream.predicted = True


def _over_collections(fn, st, baseline, pairs, seed=None, **options):
    """``fn`` (a procedure) on each collection of the stack ``st``, the results stacked with a
    leading ``batch`` axis; collection k resamples with `fastrisk.core.batch.collection_seed`
    (seed.kernel, start + k); the stack records ``seed.recorded`` (a `fastrisk._runtime.rng.Seed`)."""
    results = []
    for k, item in enumerate(_batch.collections(st, as_scores=baseline is None and not pairs)):
        if seed is not None:
            options["rng"] = _batch.collection_seed(seed.kernel, st.start + k)
        results.append(fn(item, baseline, pairs=pairs, **options))
    fixed = {} if seed is None else {"seed": seed.recorded if getattr(results[0], "seed", None) is not None else None}
    return _batch.stack_results(results, **fixed)


def _stack_row(st, baseline, pairs, value, alpha, loss_weight):
    """(row, value function) when the batched kernels apply: the linear value function against
    a system of the stack; else (None, None)."""
    if pairs or baseline is None:
        return None, None
    row = _batch.system_row(st, baseline)
    if row is None:
        return None, None
    vf = resolve_value(value, alpha=alpha, loss_weight=loss_weight)
    return (row, vf) if vf.is_linear else (None, None)


def _stack_columns(st, row, exclude_self, *arrays):
    """The systems of a stack's kernel result and its arrays ``[..., system]``, without the
    baseline's own column when ``exclude_self``."""
    if not exclude_self:
        return (st.systems, *arrays)
    keep = np.arange(len(st.systems)) != row
    return (tuple(s for s, k in zip(st.systems, keep) if k), *(a[..., keep] for a in arrays))


def _stack_iv(pairs, exclude_self, missing, chunk_size, progress) -> None:
    flag(pairs, "pairs")
    flag(exclude_self, "exclude_self")
    check_missing_policy(missing)
    if chunk_size is not None:
        _positive_int(chunk_size, "chunk_size")
    _progress_iv(progress)


def bootstrap(data, baseline=None, *, alpha=None, loss_weight=None, value=None, pairs: bool = False,
              convention: str = "classic", exclude_self: bool = False,
              statistic=None, replicates: int = 10000, method: str = "bca", confidence_level: float = 0.95,
              alternative: str = "two-sided", test: str = "shift", rng=None, keep_replicates: bool | None = None,
              missing: str = "raise", chunk_size: int | None = None, threads: int | None = None,
              progress: bool | None = None) -> BootstrapResult:
    """Bootstrap over topics of every system against ``baseline`` (or every pair) at once.

    ``data`` is a `ScoreMatrix` (with ``baseline`` and ``alpha`` /
    ``loss_weight`` / ``value`` as `fastrisk.risk`; the statistic is URisk), or with
    ``pairs=True`` the differences of every pair of systems (alpha applied per pair), or an
    array of per-topic scores (1-D, or S x c) used as they are when no ``baseline`` is given
    (with one, an S x c array is a matrix, as in `fastrisk.risk`).

    ``statistic=None`` resamples the mean (URisk, mean difference) by the matrix-product
    path; otherwise ``statistic`` is a numba-compilable function of the per-topic vector
    (1-D float array -> float) evaluated by a parallel gather over the same resampled topics.

    ``method``: confidence interval, ``'percentile'``, ``'basic'``, ``'bca'`` (default),
    ``'studentized'`` (bootstrap-t) or None (no interval). ``pvalue``: the paired bootstrap test of statistic = 0,
    replicates shifted to the null (``test='shift'``), or shifted and studentised
    (``test='t'``, Sakai 2006; Urbano, Lima & Hanjalic 2019), ``(count + 1) / (B + 1)``.
    ``keep_replicates``: keep the (A, K, B) replicates (default: when they fit in 256 MB);
    without them, summaries are streamed and exact. Same ``rng`` -> bit-identical results
    whatever ``threads`` and ``chunk_size``.

    ``convention="minus"`` reports URisk⁻ = -URisk (larger is riskier; see
    `BootstrapResult`); ``exclude_self=True`` leaves out the baseline compared with
    itself when the baseline is a system of the matrix (as every resampling procedure).

    Parameters
    ----------
    data : ScoreMatrix, array_like, frame or stack
        A score matrix (systems x topics), or per-topic scores used as they are; or a stack
        of K of either (a (K, S, c) array or a sequence of ScoreMatrix, see
        `fastrisk.batch.stack`).
    baseline : optional
        What `fastrisk.risk` accepts (a system, ``"mean"``/``"median"``/``"max"``, a
        vector, a file); None: ``data`` are the per-topic scores themselves.
    alpha, loss_weight : float or sequence of float, optional
        Risk aversion, ``loss_weight = 1 + alpha`` (one or many).
    value : str or callable, optional
        Value function of the per-topic difference (see `fastrisk.resolve_value`).
    pairs : bool
        Every pair of systems instead of a baseline.
    convention : {"classic", "minus"}
        ``"minus"`` reports the negated estimate (larger is riskier).
    exclude_self : bool
        Leave out the baseline compared with itself.
    statistic : callable, optional
        A numba-compilable function of the per-topic vector (default: the mean).
    replicates : int
        Number of replicates (at most 10**9).
    alternative : {"two-sided", "less", "greater"}
        The alternative hypothesis of the p-value.
    rng : int, SeedSequence or Generator, optional
        Seed; the same seed gives the same numbers for any thread count and chunking.
    method : {"percentile", "basic", "bca", "studentized"} or None
        The confidence interval; None: none (the test and the standard error only).
    confidence_level : float
        Coverage of the interval.
    test : {"shift", "t"}
        The p-value's test: shifted replicates, or shifted and studentised.
    keep_replicates : bool, optional
        Keep the replicate arrays (default: when they fit in 256 MB; for a stack, only when
        True).
    missing : {"raise", "drop", "zero"}
        Missing scores of a frame input, as `fastrisk.read_matrix`.
    chunk_size : int, optional
        Replicates per chunk (default: sized from memory and work; the batched kernel of a
        stack keeps no replicates and takes no chunks).
    threads : int, optional
        Numba threads (default: all cores).
    progress : bool, optional
        A progress bar on standard error (default: for long runs on a terminal).

    Returns
    -------
    BootstrapResult
        Arrays ``[alpha, system]`` (replicates ``[alpha, system, replicate]``). Of a stack,
        every array with a leading ``batch`` axis. The shift test without an interval
        (``method=None``) of the linear value function against a system of the stack is one
        batched kernel call, collection k drawing the streams (seed, start + k, b); any other
        call runs each collection as one matrix with the seed
        ``resolve_seed(SeedSequence([seed, start + k]))`` (see `fastrisk.batch.stack`).

    References
    ----------
    Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.

    Sakai, T. (2006). Evaluating evaluation metrics based on the bootstrap. SIGIR 2006.

    Urbano, J., Lima, H. & Hanjalic, A. (2019). Statistical significance testing in information retrieval: an
    empirical analysis of type I, type II and type III errors. SIGIR 2019.

    Examples
    --------
    >>> import fastrisk
    >>> from fastrisk.data import datasets
    >>> matrix, baseline = datasets.trec2012_web()
    >>> res = fastrisk.bootstrap(matrix, baseline, alpha=[0, 5], replicates=1000, rng=1)
    >>> k = res.systems.index('uogTrA44xi')
    >>> round(float(res.pvalue[0, k]), 3), round(float(res.ci_low[0, k]), 3), round(float(res.ci_high[0, k]), 3)
    (0.031, 0.012, 0.221)
    """
    if _batch.is_stack(data):  # K collections: every array with a leading batch axis
        return _bootstrap_of_stack(data, baseline, alpha, loss_weight, value, pairs, convention, exclude_self,
                                   statistic, replicates, method, confidence_level, alternative, test, rng,
                                   keep_replicates, missing, chunk_size, threads, progress)
    _choice(convention, "convention", CONVENTIONS)
    _choice(alternative, "alternative", ALTERNATIVES)
    given_alternative, alternative = alternative, _oriented(alternative, convention)
    B, stat = _bootstrap_iv(replicates, method, confidence_level, alternative, test, statistic, keep_replicates)
    _progress_iv(progress)
    sc = _scores(data, baseline, alpha=alpha, loss_weight=loss_weight, value=value, pairs=pairs,
                 missing=missing, flipped=False, exclude_self=exclude_self)
    rseed = resolve_seed(rng)
    seed = rseed.kernel
    A, K, c = sc.y.shape
    M = A * K
    y = np.ascontiguousarray(sc.y.reshape(M, c))
    keep = (M * B * 8 <= KEEP_BYTES) if keep_replicates is None else keep_replicates
    want_t = stat is None and (method == "studentized" or test == "t")
    per_rep = 8 * (c + M * (2 if want_t else 1) + M * (2 if want_t else 0))
    rows = _chunk_rows(B, per_rep, chunk_size, M * c, CHUNK_WORK if stat is None else CHUNK_WORK_STATISTIC)
    _check_resampling_memory("the bootstrap", M, c, B, rows, keep=keep, streams=2 if want_t else 1,
                             per_replicate_values=M * (4 if want_t else 1), avoid_keep=keep_replicates is True)
    with limit_threads(threads), _user_statistic(stat):
        if stat is None:
            theta = y.mean(axis=1)
            ss, a_hat, m2, m3 = _centred_moments(y, theta)
            finite = np.isfinite(theta) & np.isfinite(ss) & (np.isfinite(m3) if method == "bca" else True)
            if not finite.all():
                k = int(np.flatnonzero(~finite)[0])
                raise InputError(f"the per-topic scores of column {k} are too large to resample: their sum or squares"
                                 f"{' (or cubes, for BCa)' if method == 'bca' else ''} overflow float64; rescale "
                                 "them")
            sd_boot = np.sqrt(ss) / c
            se_x = np.sqrt(ss / (c - 1) / c)
            if not want_t:  # the scores are this call's own copy: scale them in place for the product
                np.divide(y, c, out=y)
            source = _LinearSource(y, seed, "multinomial", want_t, scaled=not want_t)
            path = "linear"
        else:
            theta = np.empty(M)
            _k.apply_statistic(stat, y, theta)
            if np.isnan(theta).any():
                k = int(np.flatnonzero(np.isnan(theta))[0])
                raise InputError(f"`statistic` {_statistic_name(stat)!r} returned NaN on the scores of column {k} "
                                 "themselves; it must return a number")
            loo = np.empty((M, c))
            _k.jackknife_statistic(stat, y, loo)
            dev = loo.mean(axis=1, keepdims=True) - loo
            sd_boot = np.sqrt((c - 1) / c * (dev * dev).sum(axis=1))
            a_hat = _acceleration(dev)
            source = _GenericSource(y, seed, stat, theta)
            path = "generic"
        d_stream = _Stream(M, B, _HALF_WIDTH_SD * sd_boot, theta, center=theta)
        d_stream.wants_quantiles = method not in ("studentized", None)
        d_stream.probs_of = lambda z0: np.broadcast_to(
            _interval_probs(method, confidence_level, alternative, z0, a_hat), (M, 2)).copy()
        if stat is None and method not in ("studentized", None):
            _predict_windows(d_stream, m2, m3, c, sd_boot, method, confidence_level, alternative, a_hat)
        t_stream = None
        if want_t:
            with np.errstate(divide="ignore", invalid="ignore"):
                t_obs = np.where(se_x > 0, theta / np.where(se_x > 0, se_x, 1.0), 0.0)
            t_stream = _Stream(M, B, np.full(M, _HALF_WIDTH_SD), t_obs)
            t_stream.wants_quantiles = method == "studentized"
            t_stream.probs_of = lambda z0: np.broadcast_to(
                _interval_probs("studentized", confidence_level, alternative), (M, 2)).copy()
        reps = _run(source, B, rows, [d_stream, t_stream], keep, progress, "bootstrap", want_t)

    mean_d, se = d_stream.moments()
    if method is None:
        low = high = None
    elif method == "studentized":
        qt = t_stream.quantiles()
        low, high = theta - qt[:, 1] * se_x, theta - qt[:, 0] * se_x
    else:
        qd = d_stream.quantiles()
        low, high = qd[:, 0], qd[:, 1]
        if method == "basic":
            low, high = 2 * theta - qd[:, 1], 2 * theta - qd[:, 0]
    if method is not None and alternative == "less":
        low = np.full(M, -np.inf)
    elif method is not None and alternative == "greater":
        high = np.full(M, np.inf)
    pstream = t_stream if test == "t" else d_stream
    pvalue = pstream.pvalue(alternative, symmetric_min=False)
    pvalue.reshape(A, K)[:, _self_columns(sc)] = np.nan  # the baseline against itself is no test
    shape = (A, K)
    dist = None
    if reps is not None:
        dist = reps.reshape(A, K, B)
    # the test statistic: theta for the shift test, the studentised theta / SE for test="t"
    statistic = t_obs if test == "t" else theta
    res = BootstrapResult(statistic=statistic.reshape(shape), urisk=theta.reshape(shape) if stat is None else None,
                           standard_error=se.reshape(shape),
                           confidence_interval=None if method is None else
                           ConfidenceInterval(low.reshape(shape), high.reshape(shape)),
                           pvalue=pvalue.reshape(shape), bias=mean_d.reshape(shape), bootstrap_distribution=dist,
                           method=method, confidence_level=float(confidence_level), alternative=alternative,
                           test=test, replicates=B, seed=rseed.recorded, path=path, **sc.labels())
    return _in_convention(res, convention, given_alternative)


def _bootstrap_of_stack(data, baseline, alpha, loss_weight, value, pairs, convention, exclude_self, statistic,
                        replicates, method, confidence_level, alternative, test, rng, keep_replicates, missing,
                        chunk_size, threads, progress) -> BootstrapResult:
    """`bootstrap` of a stack: the batched kernel for the shift test without an interval
    (``method=None``) of the linear value function against a system of the stack, else
    `bootstrap` of each collection, stacked."""
    _choice(convention, "convention", CONVENTIONS)
    _choice(alternative, "alternative", ALTERNATIVES)
    oriented = _oriented(alternative, convention)
    B, stat = _bootstrap_iv(replicates, method, confidence_level, oriented, test, statistic, keep_replicates)
    _stack_iv(pairs, exclude_self, missing, chunk_size, progress)
    st = _batch.stack(data)
    rseed = resolve_seed(rng)
    row, vf = _stack_row(st, baseline, pairs, value, alpha, loss_weight)
    if row is None or stat is not None or method is not None or test != "shift" or keep_replicates:
        return _over_collections(bootstrap, st, baseline, pairs, rseed, alpha=alpha, loss_weight=loss_weight,
                                 value=value, convention=convention, exclude_self=exclude_self,
                                 statistic=statistic, replicates=replicates, method=method,
                                 confidence_level=confidence_level, alternative=alternative, test=test,
                                 keep_replicates=keep_replicates, missing=missing, chunk_size=chunk_size,
                                 threads=threads, progress=progress)
    counts, moments, urisk = _batch.bootstrap_counts(st, row, vf.alpha, B, rseed.kernel, threads, progress)
    p = (counts[..., {"greater": 0, "less": 1, "two-sided": 2}[oriented]] + 1.0) / (B + 1.0)
    p[:, :, row] = np.nan  # the baseline against itself is no test (as t_test's NaN)
    systems, urisk, se, p, bias = _stack_columns(st, row, exclude_self, urisk, moments[..., 1], p,
                                                 moments[..., 0] - urisk)
    res = BootstrapResult(statistic=urisk, urisk=urisk, standard_error=se, confidence_interval=None, pvalue=p,
                          bias=bias, method=None, confidence_level=float(confidence_level), alternative=oriented,
                          test="shift", replicates=B, seed=rseed.recorded, path="linear", systems=systems,
                          baselines=(st.systems[row],) * len(systems), alpha=vf.alpha, loss_weight=vf.loss_weight,
                          value=vf.name)
    return _in_convention(res, convention, alternative)


# ====================================================================== permutation test
def permutation_test(data, baseline=None, *, alpha=None, loss_weight=None, value=None, pairs: bool = False,
                     convention: str = "classic", exclude_self: bool = False,
                     replicates: int = 10000, alternative: str = "two-sided", rng=None,
                     keep_replicates: bool | None = None, missing: str = "raise", chunk_size: int | None = None,
                     threads: int | None = None,
                     progress: bool | None = None) -> PermutationResult:
    """Paired randomisation test over topics: swap system and baseline on random topics.

    Under the null each topic's pair is exchangeable, so the per-topic score is v(d) or
    v(-d) with equal chance; the statistic (URisk, any value function) is linear in that
    choice, so all replicates of all systems are one sign-flip matrix product. All ``2^c``
    patterns are enumerated when ``2^c <= replicates`` (exact p-value, as scipy); otherwise
    ``replicates`` random patterns give ``(count + 1) / (B + 1)``. Two-sided p-values are
    ``2 min(p_less, p_greater)`` (scipy's convention).

    **What it tests.** The null is that the differences d are symmetric about 0 (system and
    baseline exchangeable on every topic), not that URisk_alpha = 0. Under sign flips
    ``URisk_alpha = (T - (2 + alpha) L) / c`` with ``T = sum |d_i|`` fixed and ``L`` the sum
    of the flipped losses, a decreasing function of L for every alpha: the permutation
    p-value is the same for every alpha. It is computed once (at the first alpha) and
    repeated; asking for alpha > 0 warns (`AlphaInvariantWarning`).
    For a risk-sensitive test of URisk_alpha = 0 use `bootstrap` (``test="t"``) or
    TRisk (`fastrisk.risk`, `t_test`). The baseline compared with itself gets
    p-value NaN (it is no member of the family; see `fastrisk.adjust_pvalues`).

    Parameters
    ----------
    data, baseline, alpha, loss_weight, value, pairs, convention, exclude_self, missing, replicates, alternative, rng, keep_replicates, chunk_size, threads, progress
        As in `bootstrap`.

    Returns
    -------
    PermutationResult
        Arrays ``[alpha, system]``. Of a stack, every array with a leading ``batch`` axis: the
        linear value function against a system of the stack without kept replicates is one
        batched kernel call (collection k draws the streams (seed, start + k, b)), any other
        call runs each collection as one matrix (seeds as in `bootstrap`).

    References
    ----------
    Smucker, M. D., Allan, J. & Carterette, B. (2007). A comparison of statistical significance tests for
    information retrieval evaluation. CIKM 2007.

    Urbano, J., Lima, H. & Hanjalic, A. (2019). Statistical significance testing in information retrieval: an
    empirical analysis of type I, type II and type III errors. SIGIR 2019.

    Examples
    --------
    >>> import fastrisk
    >>> from fastrisk.data import datasets
    >>> matrix, baseline = datasets.trec2012_web()
    >>> res = fastrisk.permutation_test(matrix, baseline, replicates=1000, rng=1)
    >>> k = res.systems.index('uogTrA44xi')
    >>> round(float(res.pvalue[0, k]), 3)
    0.022
    """
    if _batch.is_stack(data):  # K collections: every array with a leading batch axis
        return _permutation_of_stack(data, baseline, alpha, loss_weight, value, pairs, convention, exclude_self,
                                     replicates, alternative, rng, keep_replicates, missing, chunk_size, threads,
                                     progress)
    _choice(convention, "convention", CONVENTIONS)
    _choice(alternative, "alternative", ALTERNATIVES)
    given_alternative, alternative = alternative, _oriented(alternative, convention)
    B = _replicates_iv(replicates)
    _progress_iv(progress)
    if keep_replicates not in (None, True, False):
        raise InputError(f"`keep_replicates` must be None, True or False, got {keep_replicates!r}")
    sc = _scores(data, baseline, alpha=alpha, loss_weight=loss_weight, value=value, pairs=pairs,
                 missing=missing, flipped=True, exclude_self=exclude_self)
    A, K, c = sc.y.shape
    _alpha_invariant(sc.alpha)
    M = A * K
    y = sc.y.reshape(M, c)
    fl = sc.flipped.reshape(M, c)
    theta = y.mean(axis=1)
    exact = c < 63 and 2 ** c <= B
    rseed = None if exact else resolve_seed(rng)
    seed = None if rseed is None else rseed.kernel
    n = 2 ** c if exact else B
    keep = (M * n * 8 <= KEEP_BYTES) if keep_replicates is None else keep_replicates
    # The p-value needs the first alpha only (it is the same for every alpha); the replicates,
    # when kept, are those of every alpha.
    rows_used = M if keep else K
    rows = _chunk_rows(n, 8 * (c + 2 * rows_used), chunk_size, rows_used * c)
    _check_resampling_memory("the permutation test", rows_used, c, n, rows, keep=keep, streams=1,
                             per_replicate_values=2 * rows_used, avoid_keep=keep_replicates is True)
    centre = 0.5 * (y[:rows_used] + fl[:rows_used])  # per-topic score = centre + s * half, s = +-1
    half = np.ascontiguousarray(0.5 * (y[:rows_used] - fl[:rows_used]))
    with limit_threads(threads):
        source = _LinearSource(half, 0 if exact else seed, "exact" if exact else "signs")
        stream = _Stream(rows_used, n, np.ones(rows_used), half.mean(axis=1))
        stream.wants_quantiles = False
        reps = _run(source, n, rows, [stream], keep, progress, "permutation", False)
    pvalue = np.tile(stream.pvalue(alternative, symmetric_min=True, adjustment=0 if exact else 1)[:K], A)
    pvalue = pvalue.reshape(A, K)
    pvalue[:, _self_columns(sc)] = np.nan
    dist = None
    if reps is not None:
        reps += centre.mean(axis=1)[:, None]
        dist = reps.reshape(A, K, n)
    res = PermutationResult(statistic=theta.reshape(A, K), urisk=theta.reshape(A, K), pvalue=pvalue.reshape(A, K), null_distribution=dist,
                             alternative=alternative, replicates=n, exact=exact, seed=None if rseed is None else rseed.recorded,
                             **sc.labels())
    return _in_convention(res, convention, given_alternative)


def _alpha_invariant(alphas, stacklevel: int = 3) -> None:
    """The `AlphaInvariantWarning` of the permutation test, when an alpha is above 0."""
    if alphas is not None and (alphas > 0).any():
        warnings.warn(
            f"the permutation (sign-flip) test does not depend on alpha: its p-value tests that the differences "
            f"are symmetric about 0, not URisk_alpha = 0, and is the same for alpha = "
            f"{', '.join(f'{a:g}' for a in alphas)}; for a risk-sensitive test use the bootstrap test "
            "(bootstrap(..., test='t'), `fastrisk test --method bootstrap`) or TRisk (`--method t`)",
            AlphaInvariantWarning, stacklevel=stacklevel)


def _permutation_of_stack(data, baseline, alpha, loss_weight, value, pairs, convention, exclude_self, replicates,
                          alternative, rng, keep_replicates, missing, chunk_size, threads,
                          progress) -> PermutationResult:
    """`permutation_test` of a stack: the batched kernel for the linear value function against
    a system of the stack (replicates not kept), else `permutation_test` of each collection,
    stacked."""
    _choice(convention, "convention", CONVENTIONS)
    _choice(alternative, "alternative", ALTERNATIVES)
    oriented = _oriented(alternative, convention)
    B = _replicates_iv(replicates)
    if keep_replicates not in (None, True, False):
        raise InputError(f"`keep_replicates` must be None, True or False, got {keep_replicates!r}")
    _stack_iv(pairs, exclude_self, missing, chunk_size, progress)
    st = _batch.stack(data)
    K, S, c = st.shape
    exact = c < 63 and 2 ** c <= B
    rseed = None if exact else resolve_seed(rng)
    row, vf = _stack_row(st, baseline, pairs, value, alpha, loss_weight)
    if row is None or keep_replicates:
        return _over_collections(permutation_test, st, baseline, pairs, rseed, alpha=alpha,
                                 loss_weight=loss_weight, value=value, convention=convention,
                                 exclude_self=exclude_self, replicates=replicates, alternative=alternative,
                                 keep_replicates=keep_replicates, missing=missing, chunk_size=chunk_size,
                                 threads=threads, progress=progress)
    _alpha_invariant(vf.alpha, stacklevel=4)
    counts = _batch.permutation_counts(st, row, B, exact, None if rseed is None else rseed.kernel, threads, progress)
    n = 2 ** c if exact else B
    adj = 0.0 if exact else 1.0
    ge = (counts[..., 0] + adj) / (n + adj)
    le = (counts[..., 1] + adj) / (n + adj)
    p = ge if oriented == "greater" else le if oriented == "less" else np.minimum(1.0, 2 * np.minimum(ge, le))
    p[:, row] = np.nan  # the baseline against itself is no test (as t_test's NaN)
    urisk = _batch.urisk(st, row, vf.alpha)
    systems, urisk, p = _stack_columns(st, row, exclude_self, urisk,
                                       np.broadcast_to(p[:, None, :], urisk.shape).copy())
    res = PermutationResult(statistic=urisk, urisk=urisk, pvalue=p, null_distribution=None, alternative=oriented,
                            replicates=n, exact=bool(exact), seed=None if rseed is None else rseed.recorded, systems=systems,
                            baselines=(st.systems[row],) * len(systems), alpha=vf.alpha, loss_weight=vf.loss_weight,
                            value=vf.name)
    return _in_convention(res, convention, alternative)


# ====================================================================== jackknife
def jackknife(data, baseline=None, *, alpha=None, loss_weight=None, value=None, pairs: bool = False,
              convention: str = "classic", exclude_self: bool = False,
              statistic=None, missing: str = "raise", threads: int | None = None) -> JackknifeResult:
    """Leave-one-topic-out jackknife of ``statistic`` (default: the mean, in closed form).

    Dinçer, Macdonald & Ounis (SIGIR 2014): ``theta_(i)`` without topic i, ``SE_J = sqrt((c-1)/c sum (theta_(i) -
    theta_(.))^2)``, ``bias_J = (c-1)(theta_(.) - theta)``, pseudo-values ``c theta - (c-1)
    theta_(i)``. Inputs as `bootstrap`; ``statistic`` any numba-compilable function of
    the per-topic vector.

    Parameters
    ----------
    data, baseline, alpha, loss_weight, value, pairs, convention, exclude_self, missing, statistic, threads
        As in `bootstrap`.

    Returns
    -------
    JackknifeResult
        Arrays ``[alpha, system]`` (leave-one-out values ``[alpha, system, topic]``); of a
        stack, each collection's with a leading ``batch`` axis.

    References
    ----------
    Efron, B. (1982). The Jackknife, the Bootstrap and Other Resampling Plans. SIAM.

    Dinçer, B. T., Macdonald, C. & Ounis, I. (2014). Hypothesis testing for the risk-sensitive evaluation of
    retrieval systems. SIGIR 2014.

    Examples
    --------
    >>> import fastrisk
    >>> import numpy as np
    >>> from fastrisk.data import datasets
    >>> matrix, baseline = datasets.trec2012_web()
    >>> res = fastrisk.jackknife(matrix, baseline, alpha=[0, 5])
    >>> k = res.systems.index('uogTrA44xi')
    >>> print(np.round(res.standard_error[:, k], 4))
    [0.0528 0.1755]
    """
    if _batch.is_stack(data):  # K collections: each collection's jackknife, with a leading batch axis
        st = _batch.stack(data)
        return _over_collections(jackknife, st, baseline, pairs, alpha=alpha, loss_weight=loss_weight, value=value,
                                 convention=convention, exclude_self=exclude_self, statistic=statistic,
                                 missing=missing, threads=threads)
    _choice(convention, "convention", CONVENTIONS)
    stat = _statistic_iv(statistic)
    sc = _scores(data, baseline, alpha=alpha, loss_weight=loss_weight, value=value, pairs=pairs,
                 missing=missing, flipped=False, exclude_self=exclude_self)
    A, K, c = sc.y.shape
    # the leave-one-out values, the pseudo-values and one temporary of the same size
    check_memory(3 * 8.0 * A * K * c, f"the jackknife of {K:,} column(s) x {c:,} topics x {A} alpha(s)",
                 "compare with one baseline instead of every pair, or use fewer systems or alphas")
    y = np.ascontiguousarray(sc.y.reshape(A * K, c))
    if stat is None:
        theta = y.mean(axis=1)
        loo = (c * theta[:, None] - y) / (c - 1)
    else:
        theta = np.empty(A * K)
        loo = np.empty((A * K, c))
        with limit_threads(threads), _user_statistic(stat):
            _k.apply_statistic(stat, y, theta)
            _k.jackknife_statistic(stat, y, loo)
    dot = loo.mean(axis=1)
    se = np.sqrt((c - 1) / c * ((loo - dot[:, None]) ** 2).sum(axis=1))
    bias = (c - 1) * (dot - theta)
    pseudo = c * theta[:, None] - (c - 1) * loo
    res = JackknifeResult(statistic=theta.reshape(A, K), urisk=theta.reshape(A, K) if stat is None else None,
                           standard_error=se.reshape(A, K), bias=bias.reshape(A, K),
                           leave_one_out=loo.reshape(A, K, c), pseudo_values=pseudo.reshape(A, K, c),
                           topics=sc.topics, **sc.labels())
    return _in_convention(res, convention)


# ====================================================================== paired t test
@dataclass(frozen=True, repr=False)
class TTestResult(_Labelled):
    """Paired t test of mean per-topic score = 0 (TRisk/TGain with Student's t, df = c - 1);
    arrays ``[alpha, system]``: ``statistic`` the test statistic t (TRisk against a baseline),
    ``urisk`` the mean per-topic score (URisk against a baseline), ``pvalue``.

    Long form (one row per alpha, system): ``alpha``, ``loss_weight``, ``system``,
    ``baseline``, ``statistic``, ``urisk``, ``pvalue``.
    """

    pvalue: np.ndarray = array("alpha", "system", default=None)
    df: int = 0
    alternative: str = "two-sided"


_ALTERNATIVE_CODE = {"two-sided": 0, "less": 1, "greater": 2}


def _t_test_of_matrix(data, baseline, alpha, loss_weight, value, pairs, exclude_self, missing, alternative,
                      convention="classic", given_alternative=None):
    """The usual call (a ScoreMatrix, a baseline, the linear value function) from the one
    compiled pass of `fastrisk.risk`: the statistic t is its TRisk, ``urisk`` its URisk
    (the same numerical rule). None for anything else, or when the scores need rescaling.
    In the classic convention the result is built once, with ``given_alternative``."""
    if type(data) is not ScoreMatrix and baseline is not None and pairs is False \
            and (is_frame(data) or (isinstance(data, np.ndarray) and data.ndim == 2)):
        data = as_matrix(data, "data")  # as _scores takes them: a systems x topics matrix
    if not isinstance(data, ScoreMatrix) or baseline is None or data.n_topics < 2 \
            or pairs is not False or exclude_self not in (False, True) or value not in (None, "linear"):
        return None
    matrix, base, vf = _risk_iv(data, baseline, alpha, loss_weight, None, "classic", 0.05, missing)
    systems = matrix.systems
    self_row = systems.index(base.name) if base.name in systems else None  # names are unique
    p = None
    R = matrix.values
    if matrix.n_topics - 1 <= COMPILED_DF and not parallel(R.size * len(vf.alpha)):  # one serial call
        ok, stats, zero, n_zero = _k_risk.linear_t_test(
            R, base.values, vf.alpha, _numerics.VARIANCE_RTOL, _LO, _HI, -1 if self_row is None else self_row,
            _ALTERNATIVE_CODE[alternative])
        if not ok:
            return None
        mean, t, p = stats[0], stats[1], stats[2]  # (views by index: cheaper than unpacking)
    else:
        table = _linear_table(R, base.values, vf.alpha, 0.0, 1.0, None)
        if table is None:
            return None
        (mean, _, _, t), _, _, zero, n_zero, _ = table
        n_zero -= self_row is not None and bool(zero[self_row])  # as the kernel's: outside the self row
    if exclude_self and base.system is not None:  # the baseline against itself, left out
        keep = np.arange(len(systems)) != base.system
        mean, t, zero = mean[:, keep], t[:, keep], zero[keep]
        p = None if p is None else p[:, keep]
        systems = tuple(s for k, s in enumerate(systems) if k != base.system)
        self_row = None
    if self_row is not None and p is None:
        t[:, self_row] = np.nan
    if n_zero:
        _numerics.warn_zero_variance(_numerics.zero_rows(zero, systems, self_row), "system(s)",
                                     where=f" against baseline {base.name!r}", stacklevel=4)
    df = matrix.n_topics - 1
    classic = convention == "classic"
    return TTestResult._trusted(statistic=t, urisk=mean, pvalue=t_pvalue(t, df, alternative) if p is None else p, df=df,
                       alternative=given_alternative if classic else alternative, systems=systems,
                       baselines=(base.name,) * len(systems), alpha=vf.alpha, loss_weight=vf.loss_weight,
                       value=vf.name), classic


def t_test(data, baseline=None, *, alpha=None, loss_weight=None, value=None, pairs: bool = False,
           convention: str = "classic", exclude_self: bool = False,
           alternative: str = "two-sided", missing: str = "raise") -> TTestResult:
    """Paired t test of every column (as `bootstrap`'s inputs): ``t = mean / (s / sqrt(c))``.

    With a baseline this is TRisk (Dinçer et al. 2014); at alpha = 0 it equals
    ``scipy.stats.ttest_rel``. A column whose scores are constant over topics (standard error
    0 or below the relative floor of `fastrisk._runtime.numerics`) gets t = ±inf and p = 0 (t and
    p NaN where the mean is 0 too) and a `ZeroVarianceWarning` naming it, as
    `fastrisk.risk`; the baseline compared with itself gets NaN without a warning.

    Parameters
    ----------
    data, baseline, alpha, loss_weight, value, pairs, convention, exclude_self, missing, alternative
        As in `bootstrap`.

    Returns
    -------
    TTestResult
        ``statistic`` (t), ``urisk`` and ``pvalue``, ``[alpha, system]``. Of a stack, each with
        a leading ``batch`` axis (the linear value function against a system of the stack from
        one batched kernel call, any other call collection by collection).

    References
    ----------
    Student (1908). The probable error of a mean. Biometrika 6(1), 1-25.

    Dinçer, B. T., Macdonald, C. & Ounis, I. (2014). Hypothesis testing for the risk-sensitive evaluation of
    retrieval systems. SIGIR 2014.

    Examples
    --------
    >>> import fastrisk
    >>> import numpy as np
    >>> from fastrisk.data import datasets
    >>> matrix, baseline = datasets.trec2012_web()
    >>> res = fastrisk.t_test(matrix, baseline, alpha=[0, 5])
    >>> k = res.systems.index('uogTrA44xi')
    >>> print(np.round(res.statistic[:, k], 3), np.round(res.pvalue[:, k], 4))
    [ 2.244 -1.116] [0.0294 0.2697]
    """
    if _batch.is_stack(data):  # K collections: every array with a leading batch axis
        return _t_test_of_stack(data, baseline, alpha, loss_weight, value, pairs, convention, exclude_self,
                                alternative, missing)
    _choice(convention, "convention", CONVENTIONS)
    _choice(alternative, "alternative", ALTERNATIVES)
    given_alternative, alternative = alternative, _oriented(alternative, convention)
    fast = _t_test_of_matrix(data, baseline, alpha, loss_weight, value, pairs, exclude_self, missing, alternative,
                             convention, given_alternative)
    if fast is not None:
        res, done = fast
        return res if done else _in_convention(res, convention, given_alternative)
    sc = _scores(data, baseline, alpha=alpha, loss_weight=loss_weight, value=value, pairs=pairs,
                 missing=missing, flipped=False, exclude_self=exclude_self)
    c = sc.y.shape[-1]
    mean, _, t, zero = _numerics.mean_t(sc.y, "the per-topic scores")
    self_rows = _self_columns(sc)
    t[:, self_rows] = np.nan
    _numerics.warn_zero_variance(_numerics.zero_rows(zero.T & ~self_rows[:, None], _column_names(sc)),
                                 "pair(s) of systems" if pairs else "column(s)" if sc.alpha is None and
                                 not sc.baselines[0] else "system(s)",
                                 where=f" against baseline {sc.baselines[0]!r}" if not pairs and sc.baselines[0] else "")
    p = t_pvalue(t, c - 1, alternative)
    res = TTestResult(statistic=t, urisk=mean, pvalue=p, df=c - 1, alternative=alternative, **sc.labels())
    return _in_convention(res, convention, given_alternative)


def _t_test_of_stack(data, baseline, alpha, loss_weight, value, pairs, convention, exclude_self, alternative,
                     missing) -> TTestResult:
    """`t_test` of a stack: the batched kernel for the linear value function against a system
    of the stack, else `t_test` of each collection, stacked."""
    _choice(convention, "convention", CONVENTIONS)
    _choice(alternative, "alternative", ALTERNATIVES)
    _stack_iv(pairs, exclude_self, missing, None, None)
    st = _batch.stack(data, check=False)
    row, vf = _stack_row(st, baseline, pairs, value, alpha, loss_weight)
    if row is None:
        return _over_collections(t_test, st, baseline, pairs, alpha=alpha, loss_weight=loss_weight, value=value,
                                 convention=convention, exclude_self=exclude_self, alternative=alternative,
                                 missing=missing)
    oriented = _oriented(alternative, convention)
    _, _, urisk, _, _, t = _batch.risk_arrays(st, row, vf.alpha, stacklevel=5)
    df = st.shape[2] - 1
    systems, t, urisk = _stack_columns(st, row, exclude_self, t, urisk)
    res = TTestResult(statistic=t, urisk=urisk, pvalue=_batch.t_pvalue(t, df, oriented), df=df, alternative=oriented,
                      systems=systems, baselines=(st.systems[row],) * len(systems), alpha=vf.alpha,
                      loss_weight=vf.loss_weight, value=vf.name)
    return _in_convention(res, convention, alternative)
