"""Stacks of collections: the leading ``batch`` dimension of every entry point.

A *stack* is K collections of the same shape: a (K, S, c) array (K collections of S systems
over c topics), a non-empty sequence of `ScoreMatrix` of one shape, or a `Stack`. Every entry
point (`fastrisk.risk`, `fastrisk.zrisk`, `fastrisk.t_test`, `fastrisk.bootstrap`,
`fastrisk.permutation_test`, `fastrisk.jackknife`) takes one wherever it takes a matrix and
returns the class it returns for one collection, every array with a leading ``batch`` axis
(``[batch, alpha, system]``; see `fastrisk.data.results`). Construction costs one vectorised
check (shape, finiteness) for the whole stack, never a pass per collection.

Two ways to the same result, chosen by the entry point:

- the batched kernels (`fastrisk._kernels.batch`, parallel over K) for what they compute: the
  linear value function against a system of the stack (a row index or a system name) —
  URisk, SE_x, SE_J, TRisk (Wang, Bennett & Collins-Thompson 2012; Dinçer, Macdonald & Ounis,
  SIGIR 2014), the paired t test, ZRisk/GeoRisk (Dinçer, Macdonald & Ounis 2016), the
  shift-to-the-null bootstrap test without an interval (``method=None``) and the sign-flip
  randomisation test; collection k of a stack resamples the streams (seed, start + k, b);
- otherwise (another baseline or value function, pairs, a user statistic, an interval, kept
  replicates, the jackknife) the one-collection path on each collection, its results stacked
  by `stack_results`; a resampling procedure gives collection k the seed
  `collection_seed` (seed, start + k), so chunks of a stack give the numbers of the whole.

``start`` (`stack`) is the global index of a chunk's first collection.

The functions ``risk``, ``t_test``, ``zrisk``, ``bootstrap`` and ``permutation_test`` of this
module and its ``Batch*Result`` classes are deprecated aliases of the entry points and their
result classes (removed in 0.2.0).
"""

from __future__ import annotations

import importlib
import numbers
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np
from scipy import special

from fastrisk._kernels import batch as _k
from fastrisk._runtime import numerics as _numerics
from fastrisk._runtime.aliases import AlphaLike, SeedLike
from fastrisk._runtime.progress import Progress
from fastrisk._runtime.rng import resolve_seed
from fastrisk._runtime.threads import limit_threads
from fastrisk._runtime.tstat import ALTERNATIVES
from fastrisk._runtime.validation import choice, non_negative_int
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.data.results import ConfidenceInterval, Result
from fastrisk.errors import AlphaInvariantWarning, InputError

#: Collections per resampling chunk (bounds the per-topic score arrays built for a chunk).
CHUNK = 1 << 15
#: The release that removes the deprecated names of this module.
REMOVED_IN = "0.2.0"


# ====================================================================== stacks
@dataclass(frozen=True)
class Stack:
    """K collections of S systems over c topics: ``values`` (K, S, c), C-contiguous float64;
    ``start``: the global index of the first collection (a chunk of a larger stack)."""

    values: np.ndarray
    systems: tuple
    topics: tuple | None
    start: int = 0

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.values.shape


def is_stack(data) -> bool:
    """True for a stack of collections: a 3-D array, a `Stack`, or a non-empty list/tuple of
    ScoreMatrix (the test each entry point uses to give its results a ``batch`` axis).

    Parameters
    ----------
    data : object
        Any input.

    Returns
    -------
    bool
        Whether ``data`` is a stack.
    """
    if type(data) is ScoreMatrix:  # the usual single-collection call: no isinstance chain
        return False
    if isinstance(data, Stack):
        return True
    if isinstance(data, np.ndarray):
        return data.ndim == 3
    return isinstance(data, (list, tuple)) and len(data) > 0 and all(isinstance(m, ScoreMatrix) for m in data)


def stack(data, *, systems: Sequence | None = None, name: str = "data", check: bool = True,
          start: int | None = None) -> Stack:
    """A `Stack` from a (K, S, c) array or a sequence of ScoreMatrix of one shape.

    One vectorised check for the whole stack: three dimensions, at least 2 topics, finite
    values (the first bad cell is named by collection, system and topic). ``check=False``
    leaves finiteness to the caller (the risk kernels check it in their own pass).

    Parameters
    ----------
    data : (K, S, c) array_like or sequence of ScoreMatrix
        The collections.
    systems : sequence of str, optional
        System names (default: those of the matrices, or ``s0``, ``s1``, ...).
    name : str
        The argument's name in messages.
    check : bool
        Check that every value is finite.
    start : int, optional
        Global index of the first collection: collection k draws the random streams of
        collection ``start + k`` (chunks of a stack give the numbers of the whole); default
        0, or a given `Stack`'s own.

    Returns
    -------
    Stack
        The values and the system names.
    """
    if isinstance(data, Stack):
        if start is None or start == data.start:
            return data
        return Stack(data.values, data.systems, data.topics, non_negative_int(start, "start"))
    start = 0 if start is None else non_negative_int(start, "start")
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
    return Stack(values, systems, topics, start)


def _check_finite(values: np.ndarray, name: str = "data", rows=None) -> None:
    """Raise naming the first non-finite cell (of the collections ``rows``, default all)."""
    sub = values if rows is None else values[rows]
    bad = ~np.isfinite(sub)
    if bad.any():
        k, s, i = (int(j) for j in np.argwhere(bad)[0])
        kk = k if rows is None else int(np.asarray(rows)[k])
        raise InputError(f"`{name}`: score of system {s} on topic {i} of collection {kk} is {sub[k, s, i]}; "
                         f"scores must be finite ({int(bad.sum())} non-finite cell(s) in all)")


def system_row(st: Stack, baseline) -> int | None:
    """The row of ``baseline`` in every collection of ``st`` when it is a system of the stack
    (a row index or a system name), else None (a virtual baseline, a vector, a file: the
    one-collection path resolves it for each collection).

    Parameters
    ----------
    st : Stack
        The stack.
    baseline : object
        The entry point's ``baseline``.

    Returns
    -------
    int or None
        The row, or None.
    """
    if isinstance(baseline, str):
        return st.systems.index(baseline) if baseline in st.systems else None
    if isinstance(baseline, numbers.Integral) and not isinstance(baseline, bool):
        S = st.values.shape[1]
        if not -S <= baseline < S:
            raise InputError(f"`baseline` must be a system row in [0, {S}), got {baseline}")
        return int(baseline) % S
    return None


# ====================================================================== the batched kernels
def risk_arrays(st: Stack, row: int, alphas: np.ndarray, threads=None, stacklevel: int = 4):
    """FReward, FRisk ``[batch, system]`` and URisk, SE_x, SE_J, TRisk ``[batch, alpha,
    system]`` (classic convention) of every collection against row ``row``
    (`fastrisk._kernels.batch.risk_batch`); one `ZeroVarianceWarning` for the whole stack.

    Parameters
    ----------
    st : Stack
        The collections (finiteness checked here).
    row : int
        The baseline's row.
    alphas : numpy.ndarray
        The alphas.
    threads : int, optional
        Numba threads.
    stacklevel : int
        Of the warning.

    Returns
    -------
    tuple of numpy.ndarray
        freward, frisk, urisk, se, se_jack, trisk.
    """
    V = st.values
    with limit_threads(threads, V.size * len(alphas)):
        freward, frisk, urisk, se, sej, trisk, bad, zero = _k.risk_batch(V, row, np.ascontiguousarray(alphas))
    if bad.any():
        _check_finite(V, rows=np.flatnonzero(bad))
    if zero.any():  # the one numerical policy (fastrisk._runtime.numerics): one warning for the whole batch
        k = np.flatnonzero(zero)
        _numerics.warn_zero_variance([f"collection {j}" for j in k], what="systems of",
                                     where=f" against baseline {st.systems[row]!r}", stacklevel=stacklevel)
    return freward, frisk, urisk, se, sej, trisk


def zrisk_arrays(st: Stack, loss_weights: np.ndarray, sign: float, threads=None):
    """ZRisk, GeoRisk ``[batch, alpha, system]`` and the effectiveness ``[batch, system]`` of
    every collection (`fastrisk._kernels.batch.zrisk_batch`); negative scores are refused.

    Parameters
    ----------
    st : Stack
        The collections.
    loss_weights : numpy.ndarray
        ``1 + alpha``.
    sign : float
        -1 for the ``minus`` convention.
    threads : int, optional
        Numba threads.

    Returns
    -------
    tuple of numpy.ndarray
        zrisk, georisk, effectiveness.
    """
    V = st.values
    if (V < 0).any():
        k, s, i = (int(j) for j in np.argwhere(V < 0)[0])
        raise InputError(f"ZRisk/GeoRisk need non-negative scores; system {st.systems[s]!r} scores {V[k, s, i]} "
                         f"on topic {i} of collection {k}")
    with limit_threads(threads, V.size * len(loss_weights)):
        z, geo, eff = _k.zrisk_batch(V, np.ascontiguousarray(loss_weights), sign)
    return z.transpose(0, 2, 1), geo.transpose(0, 2, 1), eff


def _scores(V, row, a):
    """Per-topic risk-reward scores (K, A * S, c) of a chunk (`fastrisk._kernels.batch.batch_scores`)."""
    return _k.batch_scores(V, row, np.ascontiguousarray(a, dtype=np.float64))


def _chunks(st: Stack, work: float, desc: str, threads, progress, step) -> None:
    """``step(lo, hi)`` over chunks of `CHUNK` collections, with a progress bar over them."""
    K = st.shape[0]
    bar = Progress(K, progress, desc, unit="collection", work=work, delay=0 if progress else 2.0)
    try:
        with limit_threads(threads, work):
            for lo in range(0, K, CHUNK):
                hi = min(K, lo + CHUNK)
                step(lo, hi)
                bar.update(hi - lo)
    finally:
        bar.close()


def bootstrap_counts(st: Stack, row: int, alphas: np.ndarray, B: int, seed: int, threads=None, progress=None):
    """Tail counts (ge, le, |ge|) and moments (mean, SD) ``[batch, alpha, system, 3 | 2]`` of
    the replicates of URisk shifted to the null against row ``row``, and URisk ``[batch,
    alpha, system]`` (`fastrisk._kernels.batch.bootstrap_batch`; collection k draws the
    streams (seed, start + k, b)); ``progress``: a bar over the collections."""
    V = st.values
    K, S, c = V.shape
    A = len(alphas)
    counts = np.empty((K, A * S, 3), np.int64)
    moments = np.empty((K, A * S, 2))

    def step(lo, hi):
        counts[lo:hi], moments[lo:hi] = _k.bootstrap_batch(_scores(V[lo:hi], row, alphas), seed, st.start + lo, B)

    _chunks(st, K * B * c * (1 + A * S), "bootstrap", threads, progress, step)
    return counts.reshape(K, A, S, 3), moments.reshape(K, A, S, 2), urisk(st, row, alphas)


def urisk(st: Stack, row: int, alphas: np.ndarray) -> np.ndarray:
    """URisk ``[batch, alpha, system]`` against row ``row`` as `risk_arrays` computes it
    (`fastrisk._kernels.risk.risk_sums`), without its checks and warning."""
    return _k.risk_batch(st.values, row, np.ascontiguousarray(alphas, dtype=np.float64))[2]


def permutation_counts(st: Stack, row: int, B: int, exact: bool, seed: int, threads=None,
                       progress=None) -> np.ndarray:
    """Counts (ge, le) ``[batch, system, 2]`` of the sign-flip replicates of the mean
    difference from row ``row`` (`fastrisk._kernels.batch.permutation_batch`: all 2^c
    patterns when ``exact``, else B from the streams (seed, start + k, b)); ``progress``: a
    bar over the collections."""
    V = st.values
    K, S, c = V.shape
    counts = np.empty((K, S, 2), np.int64)

    def step(lo, hi):
        H = np.ascontiguousarray(V[lo:hi] - V[lo:hi, row:row + 1, :])
        counts[lo:hi] = _k.permutation_batch(H, 0 if exact else seed, st.start + lo, B, exact)

    _chunks(st, K * (2 ** c if exact else B) * c * (1 + S), "permutation", threads, progress, step)
    return counts


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
    choice(alternative, "alternative", ALTERNATIVES)  # a misspelt one gave the two-sided p
    if alternative == "greater":
        return special.stdtr(df, -t)
    if alternative == "less":
        return special.stdtr(df, t)
    return 2.0 * special.stdtr(df, -np.abs(t))


# ====================================================================== one collection at a time
def collections(st: Stack, as_scores: bool = False) -> list:
    """The collections of ``st`` as the one-collection path takes them: ScoreMatrix named by
    the stack's systems (and topics), or with ``as_scores`` (an array stack without a
    baseline: per-topic scores as they are) the plain S x c arrays.

    Parameters
    ----------
    st : Stack
        The stack.
    as_scores : bool
        Plain arrays for an array stack.

    Returns
    -------
    list
        One item per collection.
    """
    if as_scores and st.topics is None:
        return list(st.values)
    topics = st.topics if st.topics is not None else tuple(str(i) for i in range(st.values.shape[2]))
    return [ScoreMatrix(v, st.systems, topics) for v in st.values]


def collection_seed(seed: int, k: int) -> int:
    """The seed of collection ``k`` (its global index) of a stack resampled with ``seed`` on
    the one-collection path: ``resolve_seed(SeedSequence([seed, k]))``, independent streams
    per collection, the same for a chunk given ``start``.

    Parameters
    ----------
    seed : int
        The stack's resolved seed.
    k : int
        The collection's global index.

    Returns
    -------
    int
        Its seed.
    """
    return resolve_seed(np.random.SeedSequence([int(seed), int(k)])).kernel


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape \
            and bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return type(a) is type(b) and a == b


def stack_results(results: Sequence[Result], **fixed) -> Result:
    """One result of the class of ``results`` (one per collection) with a leading ``batch``
    axis on every declared array; every other field must be the same in all of them (or is
    given in ``fixed``).

    Parameters
    ----------
    results : sequence of Result
        The results of the collections, in order.
    **fixed
        Field values of the stacked result (e.g. the stack's seed).

    Returns
    -------
    Result
        Of the class of ``results[0]``.
    """
    first = results[0]
    cls = type(first)
    values = {}
    for f in fields(cls):
        if not f.init:
            continue
        if f.name in fixed:
            values[f.name] = fixed[f.name]
            continue
        items = [getattr(r, f.name) for r in results]
        if "dims" in f.metadata or isinstance(items[0], ConfidenceInterval):
            if all(v is None for v in items):
                values[f.name] = None
                continue
            shapes = {np.shape(v) for v in items}
            if any(v is None for v in items) or len(shapes) > 1:
                raise InputError(f"the collections of the stack give `{f.name}` of different shapes "
                                 f"({', '.join(sorted(map(str, shapes)))}): a result with a `batch` axis needs "
                                 "collections that keep the same topics and systems")
            if isinstance(items[0], ConfidenceInterval):
                values[f.name] = ConfidenceInterval(np.stack([v.low for v in items]),
                                                    np.stack([v.high for v in items]))
            else:
                values[f.name] = np.stack(items)
            continue
        for k, v in enumerate(items[1:], 1):
            if not _same(items[0], v):
                raise InputError(f"collection {k} of the stack gives `{f.name}` = {v!r}, collection 0 "
                                 f"{items[0]!r}: a result with a `batch` axis needs one value for every collection")
        values[f.name] = items[0]
    return cls(**values)


# ====================================================================== deprecated aliases
def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"`fastrisk.batch.{old}` is deprecated and will be removed in {REMOVED_IN}; use `{new}`: the "
                  "entry points take a stack of collections and return their one result class with a leading "
                  "`batch` axis", DeprecationWarning, stacklevel=3)


def _entry(name: str):
    # the entry points live in higher layers (core.urisk, inference.resampling): the deprecated
    # wrappers reach them through the package, as a user does
    return getattr(importlib.import_module("fastrisk"), name)


#: The removed result classes: old name -> the class a stack's result is now (a public name of fastrisk).
_RESULTS = {"BatchRiskResult": "RiskResult", "BatchTTestResult": "TTestResult", "BatchZRiskResult": "ZRiskResult",
            "BatchBootstrapResult": "BootstrapResult", "BatchPermutationResult": "PermutationResult"}


def __getattr__(name: str):
    if name in _RESULTS:
        _deprecated(name, f"fastrisk.{_RESULTS[name]}")
        return _entry(_RESULTS[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def risk(data, baseline=0, *, alpha: AlphaLike | None = None, loss_weight: AlphaLike | None = None,
         convention: str = "classic", significance: float = 0.05, threads: int | None = None):
    """Deprecated: ``fastrisk.risk(stack, baseline, ...)`` (removed in 0.2.0).

    Parameters
    ----------
    data, baseline, alpha, loss_weight, convention, significance, threads
        As in `fastrisk.risk`.

    Returns
    -------
    RiskResult
        With a leading ``batch`` axis.
    """
    _deprecated("risk", "fastrisk.risk")
    return _entry("risk")(stack(data, check=False), baseline, alpha=alpha, loss_weight=loss_weight,
                          convention=convention, significance=significance, threads=threads)


def t_test(data, baseline=0, *, alpha=0.0, loss_weight: AlphaLike | None = None, alternative: str = "two-sided",
           threads: int | None = None):
    """Deprecated: ``fastrisk.t_test(stack, baseline, ...)`` (removed in 0.2.0).

    Parameters
    ----------
    data, baseline, alpha, loss_weight, alternative
        As in `fastrisk.t_test` (``alpha`` 0 by default here).
    threads : int, optional
        Ignored (as `fastrisk.t_test`, which takes none).

    Returns
    -------
    TTestResult
        With a leading ``batch`` axis.
    """
    _deprecated("t_test", "fastrisk.t_test")
    return _entry("t_test")(stack(data, check=False), baseline, alpha=alpha if loss_weight is None else None,
                            loss_weight=loss_weight, alternative=alternative)


def zrisk(data, *, alpha: AlphaLike | None = None, loss_weight: AlphaLike | None = None,
          convention: str = "classic", threads: int | None = None):
    """Deprecated: ``fastrisk.zrisk(stack, ...)`` (removed in 0.2.0).

    Parameters
    ----------
    data, alpha, loss_weight, convention, threads
        As in `fastrisk.zrisk`.

    Returns
    -------
    ZRiskResult
        With a leading ``batch`` axis.
    """
    _deprecated("zrisk", "fastrisk.zrisk")
    return _entry("zrisk")(stack(data), alpha=alpha, loss_weight=loss_weight, convention=convention,
                           threads=threads)


def bootstrap(data, baseline=0, *, alpha: AlphaLike | None = None, loss_weight: AlphaLike | None = None,
              replicates: int = 10000, alternative: str = "two-sided", rng: SeedLike = None, start: int = 0,
              threads: int | None = None):
    """Deprecated: ``fastrisk.bootstrap(stack(data, start=start), baseline, method=None, ...)``
    (removed in 0.2.0).

    Parameters
    ----------
    data, baseline, alpha, loss_weight, replicates, alternative, rng, threads
        As in `fastrisk.bootstrap`.
    start : int
        As in `stack`.

    Returns
    -------
    BootstrapResult
        With a leading ``batch`` axis (no interval).
    """
    _deprecated("bootstrap", "fastrisk.bootstrap")
    return _entry("bootstrap")(stack(data, start=start), baseline, alpha=alpha, loss_weight=loss_weight,
                               replicates=replicates, alternative=alternative, rng=rng, method=None,
                               threads=threads)


def permutation_test(data, baseline=0, *, alpha: AlphaLike | None = None, loss_weight: AlphaLike | None = None,
                     replicates: int = 10000, alternative: str = "two-sided", rng: SeedLike = None, start: int = 0,
                     threads: int | None = None):
    """Deprecated: ``fastrisk.permutation_test(stack(data, start=start), baseline, ...)``
    (removed in 0.2.0).

    Parameters
    ----------
    data, baseline, alpha, loss_weight, replicates, alternative, rng, threads
        As in `fastrisk.permutation_test`.
    start : int
        As in `stack`.

    Returns
    -------
    PermutationResult
        With a leading ``batch`` axis.
    """
    _deprecated("permutation_test", "fastrisk.permutation_test")
    with warnings.catch_warnings():  # this function never warned that the test ignores alpha
        warnings.simplefilter("ignore", AlphaInvariantWarning)
        return _entry("permutation_test")(stack(data, start=start), baseline, alpha=alpha, loss_weight=loss_weight,
                                          replicates=replicates, alternative=alternative, rng=rng, threads=threads)


__all__ = [
    "Stack",
    "is_stack",
    "stack",
    "t_pvalue",
]
