"""The paired-test battery of Urbano, Lima & Hanjalic (SIGIR 2019), batched over K pairs.

For each pair of runs (x, y) over c topics, d = y - x, one kernel pass gives every test,
and all three alternatives ('two-sided', 'less': y worse, 'greater': y better):

- ``t``: Student's paired t, t = mean(d) / (s_d / sqrt(c)), df = c - 1
  (``scipy.stats.ttest_rel(y, x)``).
- ``wilcoxon``: signed-rank test with the zero and tie handling of R's ``wilcox.test`` and
  ``scipy.stats.wilcoxon(zero_method="wilcox")``: zero differences are dropped (n = number
  of non-zero d), tied |d| get average ranks, W+ = sum of the ranks of positive d. Exact
  null distribution when n <= 50 and there are neither ties nor zeros (what both R and
  scipy do); otherwise the normal approximation z = (W+ - n(n+1)/4) / sigma with
  sigma^2 = (n(n+1)(2n+1) - sum(t^3 - t)/2) / 24 (tie-corrected), with a continuity
  correction of 0.5 if ``correction=True`` (scipy's default is False, R's is True). For
  n <= 13 with ties or zeros scipy switches to a permutation test; the battery keeps the
  normal approximation there (stated, tested).
- ``sign``: binomial test of #(d > min_diff) among the pairs with |d| > min_diff (a
  difference within ``min_diff`` is a tie and dropped; ``scipy.stats.binomtest(k, n, 0.5)``).
- ``bootstrap``: shift-to-the-null bootstrap of the mean (topics resampled from d - mean(d)),
  p = (count + 1) / (B + 1); two-sided counts |mean*| >= |mean| (Efron & Tibshirani 1993).
- ``permutation``: sign-flip randomisation test of the mean, exact over 2^c patterns when
  2^c <= B (``scipy.stats.permutation_test(permutation_type="samples")``), otherwise
  (count + 1) / (B + 1); two-sided min(1, 2 min(p_less, p_greater)) (scipy's convention).
- ``trisk@A``: TRisk of y against baseline x at alpha = A (Dinçer et al. 2014), Student t. At
  A = 0 it is the paired t test (URisk_0 is the mean difference, its standard error the t
  test's): the battery reports the t test's own statistic and p-values there, so the two are
  identical bit for bit (the risk core's TRisk_0 agrees with them to rounding).
- ``protocol="urbano2019"``: the tests exactly as the study's ``R/ir_tests.R`` and
  ``R/test.cpp`` compute them: Wilcoxon as R's ``wilcox.test`` (exact only for n < 50
  non-zero untied differences, otherwise the normal approximation *with* continuity
  correction); the bootstrap centres the B replicate means by their own mean and
  p = #(mean* >= mean) / B (one-tailed), #(|mean*| >= |mean|) / B (two-sided); the
  permutation test draws B random sign flips (never the exact enumeration), p = count / B,
  two-sided from |mean*| >= |mean|, the flipped mean summed in topic order and compared
  with R's mean of d with no tolerance (as their C++ does: on lattice-valued differences
  such as P@10's a flip equal to the observed mean counts as rounding falls); every p-value rounded to 6 decimals (``.SIGNIF``). The
  'less' tail of the bootstrap and permutation tests is not computed there (NaN). The sign
  test's ``min_diff`` is the study's 0.01 when it is not given.
- ``trisk_smooth``: TRisk with the smooth value function s(d) = 1.38426 d^3 - 0.51659 d^2 +
  0.11578 d of Benham, Moffat & Culpepper (2019) (`fastrisk.core.values`, ``value="smooth"``):
  t = mean(s(d)) / (sd(s(d)) / sqrt(c)), Student t with c - 1 df (their TRisk⁻ up to sign:
  'greater' means y better), as `fastrisk.risk(..., value="smooth")`'s ``trisk``.
- ``bootstrap_risk@A``: the shift-to-null bootstrap test of URisk_A = 0 that `fastrisk.bootstrap`
  (``test="shift"``) computes: the battery's bootstrap (same resampled topics) of
  x_i = d_i + A min(d_i, 0), p = (count + 1) / (B + 1), two-sided from |mean*| >= |mean| (with
  either protocol: the study has no such test).
- ``zrisk``, ``georisk``: sign-flip tests of ZRisk(y) - ZRisk(x) and GeoRisk(y) - GeoRisk(x)
  within the 2-system collection (Dinçer, Macdonald & Ounis 2016, alpha = 0), with the same
  sign patterns as ``permutation`` (topic totals are invariant under a flip, so both come
  from two linear sums).
- ``trisk-<inference>@A`` (opt-in: only when named in ``tests``): URisk_A = 0 by a risk
  inference of `fastrisk.core.inference` (edgeworth, johnson, hall, el-bartlett,
  bootstrap-t-symmetric, exact, bootstrap-t-double) on x_i = d_i + A min(d_i, 0), p-values those of
  `fastrisk.core.inference.pvalues` on the same pair; statistic TRisk_A. The resampling ones
  use the battery's B (resamples, orderings; the double bootstrap's R, and B second-level resamples of
  each: B²·c draws a pair) and seed, pair k the streams of its key.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import special

from fastrisk._kernels import _interrupt
from fastrisk._kernels import battery as _k
from fastrisk._kernels import crn as _crn
from fastrisk._runtime import battery_tests as _bt
from fastrisk._runtime import numerics as _numerics
from fastrisk._runtime.aliases import SeedLike
from fastrisk._runtime.ranktests import WILCOXON_EXACT_MAX
from fastrisk._runtime.ranktests import sign_p as _sign_p
from fastrisk._runtime.ranktests import wilcoxon_p_of as _wilcoxon_p
from fastrisk._runtime.rng import resolve_seed
from fastrisk._runtime.threads import limit_threads
from fastrisk.core import inference as _inference
from fastrisk.core.batch import Stack, stack
from fastrisk.data.results import Result, array, param
from fastrisk.errors import InputError

TAILS = ("two-sided", "less", "greater")
#: Shared resamples' products in float32, each replicate decided from its float32 sum unless it
#: lies within the sum's error bound of a threshold (`fastrisk._kernels.crn.boot_units32`,
#: `flip_units32`): the counts of the float64 products bit for bit. False: the float64 products
#: only (the benchmarks' peer).
SINGLE_PRODUCTS = True


@dataclass(frozen=True, repr=False)
class BatteryResult(Result):
    """Every test of the battery for K pairs: ``statistic`` ``[batch, test]`` and ``pvalue``
    ``[batch, test, tails]`` (tails: two-sided, less, greater; 'greater' means run y better)."""

    _coords: ClassVar[dict] = {"test": {"test": "tests"}, "tails": {"tails": "tails"}}

    tests: tuple = param(doc="Names of the tests (the labels of the ``test`` dim).")
    tails: tuple = param(doc="The alternatives of ``pvalue``'s last axis: two-sided, less, greater.")
    replicates: int
    seed: int | None
    min_diff: float = param(doc="Differences within ``min_diff`` are ties (the sign test drops them).")
    correction: bool = param(doc="Whether the Wilcoxon normal approximation has the 0.5 continuity correction.")
    statistic: np.ndarray = array("batch", "test")
    pvalue: np.ndarray = array("batch", "test", "tails")

    def p(self, test: str, tails: str = "two-sided") -> np.ndarray:
        """p-values (K,) of one test and alternative."""
        return self.pvalue[:, self.tests.index(test), self.tails.index(tails)]


PROTOCOLS = ("standard", "urbano2019")


def _battery_iv(data, replicates, min_diff, alphas_risk, correction, risk_tests, start):
    st = data if isinstance(data, Stack) else stack(data)
    if st.values.shape[1] != 2:
        raise InputError(f"`data` must hold pairs of runs (K, 2, c), got {st.values.shape[1]} systems per collection")
    if isinstance(replicates, bool) or not isinstance(replicates, numbers.Integral) or replicates < 0:
        raise InputError(f"`replicates` must be a non-negative integer (0: no resampling tests), got {replicates!r}")
    if not (isinstance(min_diff, numbers.Real) and min_diff >= 0 and np.isfinite(min_diff)):
        raise InputError(f"`min_diff` must be a finite number >= 0, got {min_diff!r}")
    try:
        ar = np.asarray(alphas_risk, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(f"`trisk_alpha` must be a sequence of numbers, got {alphas_risk!r}") from None
    if not np.isfinite(ar).all() or (ar < 0).any():
        raise InputError(f"`trisk_alpha` values must be finite and >= 0, got {ar.tolist()}")
    if correction not in (True, False):
        raise InputError(f"`correction` must be True or False, got {correction!r}")
    if risk_tests not in (True, False):
        raise InputError(f"`risk_tests` must be True or False, got {risk_tests!r}")
    K = st.values.shape[0]
    if isinstance(start, numbers.Integral) and not isinstance(start, bool) and start >= 0:
        keys = np.arange(int(start), int(start) + K, dtype=np.int64)
    else:
        keys = np.asarray(start) if isinstance(start, (np.ndarray, list, tuple)) else None
        if keys is None or keys.shape != (K,) or keys.dtype.kind not in "iu" or (keys < 0).any():
            raise InputError(f"`start` must be a non-negative integer or {K} non-negative integer keys, got {start!r}")
        keys = keys.astype(np.int64)
    return st, int(replicates), float(min_diff), ar, keys


def battery_test_names(trisk_alpha, tests=None) -> tuple:
    """Names of the tests of a battery with TRisk (and the bootstrap test of URisk) at ``trisk_alpha``:
    the registry's tests (`fastrisk._runtime.battery_tests.BATTERY`) in order, each family at
    every alpha; the opt-in ones (the risk inferences, ``trisk-edgeworth@A`` ...) only those named
    in ``tests`` (every one with ``tests=True``)."""
    return _bt.test_names([float(a) for a in np.asarray(trisk_alpha, float).reshape(-1)], opt_in=tests)


@dataclass(frozen=True)
class _Context:
    """The kernel's arrays of one battery call and what forming its p-values needs."""

    stats: np.ndarray
    risk: np.ndarray
    counts: np.ndarray
    B: int
    c: int
    exact: bool
    urbano: bool
    correction: bool
    #: what the risk inferences need (rule ``inference``): the pairs (K, 2, c), the alphas, the
    #: stream key of each pair, the seed of their resamples and the threads
    pairs: np.ndarray | None = None
    alphas: np.ndarray | None = None
    keys: np.ndarray | None = None
    seed: int = 0
    threads: int | None = None

    def stat(self, b, a, k=0):
        """The ``k``-th kernel statistic of record ``b`` (a family: its ``risk`` row at alpha index ``a``)."""
        return self.risk[:, _slot(b.risk), a] if b.family else self.stats[:, _slot(b.stats[k])]

    def count(self, name, a=None):
        """A counts column by name (a family's at alpha index ``a``); None if not computed."""
        j = _slot(name) + (_k.BOOT_RISK_STRIDE * a if a is not None else 0)
        return self.counts[:, j] if j < self.counts.shape[1] else None


def _slot(name: str) -> int:
    """The column of a kernel slot named in the registry (`fastrisk._kernels.battery` constants)."""
    return int(getattr(_k, name))


def _mean_t(ctx, b, a):
    mean, sd = ctx.stat(b, a, 0), ctx.stat(b, a, 1)
    _, _, t, _ = _numerics.floor_standardise(mean, sd / np.sqrt(ctx.c), ctx.c)  # the one variance floor
    return t, _t_tails(t, ctx.c - 1)


def _student_t(ctx, b, a):
    t = ctx.stat(b, a)
    return t, _t_tails(t, ctx.c - 1)


def _wilcoxon(ctx, b, a):
    w, n, ties, nzero = (ctx.stats[:, _slot(s)] for s in b.stats)
    return w, _wilcoxon_p(w, n, ties, nzero, ctx.correction, WILCOXON_EXACT_MAX - ctx.urbano)


def _sign(ctx, b, a):
    kpos, kneg = (ctx.stats[:, _slot(s)] for s in b.stats)
    return kpos, _sign_p(kpos, kpos + kneg)


def _bootstrap(ctx, b, a):
    S, P, B = ctx.stat(b, a), np.full((len(ctx.stats), 3), np.nan), ctx.B
    ge, le, ab = (ctx.count(s, a) for s in b.counts)
    if B > 0 and ge is not None:
        if ctx.urbano and b.urbano_counts:  # R/test.cpp: count / B, the replicates centred by their own mean
            ge, ab = (ctx.count(s) for s in b.urbano_counts)
            P[:, 0], P[:, 2] = ab / B, ge / B
        else:
            P[:, 2] = (ge + 1.0) / (B + 1.0)
            P[:, 1] = (le + 1.0) / (B + 1.0)
            P[:, 0] = (ab + 1.0) / (B + 1.0)
    return S, P


def _flip(ctx, b, a):
    S, P, B = ctx.stat(b, a), np.full((len(ctx.stats), 3), np.nan), ctx.B
    if B > 0:
        if ctx.urbano and b.urbano_counts:  # R/test.cpp: count / B, two-sided from |.| >=
            ge, ab = (ctx.count(s) for s in b.urbano_counts)
            P[:, 0], P[:, 2] = ab / B, ge / B
        else:
            n = 2 ** ctx.c if ctx.exact else B
            adj = 0.0 if ctx.exact else 1.0
            ge, le = (ctx.count(s, a) for s in b.counts)
            pg = (ge + adj) / (n + adj)
            pl = (le + adj) / (n + adj)
            P[:] = np.stack([np.minimum(1.0, 2 * np.minimum(pg, pl)), pl, pg], axis=-1)
    return S, P


#: The tails of a battery result, as `fastrisk.core.inference.pvalues`' alternatives.
_ALTERNATIVES = ("two-sided", "less", "greater")


def _risk_inference(ctx, b, a):
    """p-values of URisk_A = 0 by the record's inference of `fastrisk.core.inference` on
    x = d + A min(d, 0), A = the family's alpha: `fastrisk.core.inference.pvalues` itself, its
    three tails from one call. A resampling inference (bootstrap-t, the betting test's orderings) takes the
    battery's B and seed, pair k the streams of its key (``row0``: a run of consecutive keys in
    one call); NaN with B = 0. The exact test's x lies in [-(1 + A), 1] (scores in [0, 1])."""
    spec = _inference.INFERENCES[b.inference]
    K = len(ctx.stats)
    S, P = ctx.stat(b, a), np.full((K, 3), np.nan)
    if spec.resampling and ctx.B == 0:
        return S, P
    al = float(ctx.alphas[a])
    d = ctx.pairs[:, 1] - ctx.pairs[:, 0]
    x = d + al * np.minimum(d, 0.0)
    kw = dict(bounds=(-(1.0 + al), 1.0), replicates=ctx.B, seed=ctx.seed, threads=ctx.threads)
    # runs of consecutive stream keys: one call each, its first key as row0
    cuts = np.flatnonzero(np.diff(ctx.keys) != 1) + 1 if spec.resampling else np.empty(0, np.int64)
    order = [_inference.ALTERNATIVES.index(alt) for alt in _ALTERNATIVES]
    for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, K]):  # the three tails from one kernel pass
        P[lo:hi] = _inference.pvalues(x[lo:hi], spec, alternative="all", row0=int(ctx.keys[lo]), **kw)[:, order]
    return S, P


#: The p-value rules of the registry (`fastrisk._runtime.battery_tests.PVALUE_RULES`): rule ->
#: function (context, record, alpha index or None) -> (statistic (K,), p-values (K, 3)).
PVALUES = {"mean_t": _mean_t, "student_t": _student_t, "wilcoxon": _wilcoxon, "sign": _sign,
           "bootstrap": _bootstrap, "flip": _flip, "inference": _risk_inference}


def _pvalues(names, ar, ctx):
    """Statistics (K, T) and p-values (K, T, 3) of the tests ``names`` (`battery_test_names` of
    ``ar``) from the kernel's arrays."""
    K, T = len(ctx.stats), len(names)
    S, P = np.empty((K, T)), np.full((K, T, 3), np.nan)
    listed = set(names)  # an opt-in record's tests are there only when asked for
    members = [(b, a) for b in _bt.registry().values() for a in (range(len(ar)) if b.family else [None])
               if (f"{b.name}@{float(ar[a]):g}" if b.family else b.name) in listed]
    for j, (b, a) in enumerate(members):
        S[:, j], P[:, j] = PVALUES[b.pvalues](ctx, b, a)
    for j, (b, a) in enumerate(members):  # a family whose test at A = 0 is another test: its numbers, bit for bit
        if b.same_at_zero is not None and ar[a] == 0:
            k = names.index(b.same_at_zero)
            S[:, j], P[:, j] = S[:, k], P[:, k]
    return S, P


def _check_slots(tests=None) -> None:
    """Every kernel slot a registry record names exists in `fastrisk._kernels.battery`, and every
    rule has its function (a misspelt record fails at import, not mid-study)."""
    for b in _bt.registry(tests).values():
        for name in (*b.stats, *b.counts, *b.urbano_counts, *([b.risk] if b.risk else [])):
            if not isinstance(getattr(_k, name, None), int):
                raise ValueError(f"battery test {b.name!r}: no kernel slot {name!r} in fastrisk._kernels.battery")
        if b.pvalues not in PVALUES:
            raise ValueError(f"battery test {b.name!r}: no p-value function for rule {b.pvalues!r}")
        if b.inference is not None and b.inference not in _inference.INFERENCES:
            raise ValueError(f"battery test {b.name!r}: no risk inference {b.inference!r} in "
                             "fastrisk.core.inference.INFERENCES")


_check_slots()


def battery(data, *, replicates: int = 10000, rng: SeedLike = None, min_diff: float | None = None,
            trisk_alpha=(1.0, 5.0), correction: bool | None = None, risk_tests: bool = True, start: int = 0,
            threads: int | None = None, protocol: str = "standard", tests=None,
            shared_resamples: bool = False) -> BatteryResult:
    """Run the whole battery on K pairs of runs ``data``; d = row 1 - row 0. See the module
    docstring for every test.

    Pair k draws from the streams (seed, start + k, b), so chunks of a stack give the same
    p-values as the whole, with any thread count. With ``shared_resamples`` every pair uses
    the resamples and flips of the one stream key ``start`` (common random numbers,
    `fastrisk._kernels.crn`): each pair's test is still the test above on a uniform draw of
    resamples, but the pairs' p-values are no longer independent of each other.

    Parameters
    ----------
    data : (K, 2, c) array_like or sequence of ScoreMatrix
        K pairs of runs over c topics (2-system matrices).
    replicates : int
        B for the bootstrap and the randomisation tests (0 skips them: NaN).
    rng : int, SeedSequence or Generator, optional
        Seed of the resampling streams.
    min_diff : float, optional
        The sign test's tie threshold (default 0, or the study's 0.01 with
        ``protocol="urbano2019"``).
    trisk_alpha : sequence of float
        The alphas of the TRisk tests.
    correction : bool, optional
        Wilcoxon's continuity correction in the normal approximation (default: False, or R's
        True with ``protocol="urbano2019"``).
    risk_tests : bool
        Run the ZRisk/GeoRisk flip tests (False: NaN p-values; about a third of the cost of the
        resampling).
    start : int or array_like of int
        Stream of the first pair, or one stream key per pair.
    threads : int, optional
        Numba threads (default: all cores).
    protocol : {"standard", "urbano2019"}
        The tests as scipy computes them, or exactly as the study's R code does.
    tests : sequence of str, optional
        The tests whose p-values are wanted (names of `battery_test_names`; default all): the
        resampling of a resampling test not listed (bootstrap, permutation, zrisk, georisk,
        bootstrap_risk@A) is skipped and its p-values are NaN. The opt-in tests (the risk
        inferences ``trisk-edgeworth@A``, ``trisk-johnson@A``, ``trisk-hall@A``,
        ``trisk-el-bartlett@A``, ``trisk-bootstrap-t-symmetric@A``, ``trisk-exact@A``,
        ``trisk-bootstrap-t-double@A``) are in the result only when listed here.
    shared_resamples : bool
        All K pairs share one set of B resamples and B sign flips, drawn from the streams of key
        ``start`` (an integer) as pair ``start`` draws them without the option; their sums are
        matrix products (`fastrisk._kernels.crn`), so a pair costs c multiply-adds per replicate
        instead of c draws.

    Returns
    -------
    BatteryResult
        ``statistic`` ``[batch, test]`` and ``pvalue`` ``[batch, test, tails]``.
    """
    if protocol not in PROTOCOLS:
        raise InputError(f"`protocol` must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    urbano = protocol == "urbano2019"
    if min_diff is None:
        min_diff = 0.01 if urbano else 0.0  # the study's min_d (R/ir_tests.R, test_sign)
    if correction is None:
        correction = urbano  # R's wilcox.test default
    st, B, md, ar, keys = _battery_iv(data, replicates, min_diff, trisk_alpha, correction, risk_tests, start)
    names = battery_test_names(ar, tests)
    want = _wanted(tests, battery_test_names(ar, True))
    if shared_resamples not in (True, False):
        raise InputError(f"`shared_resamples` must be True or False, got {shared_resamples!r}")
    if shared_resamples and not (isinstance(start, numbers.Integral) and not isinstance(start, bool)):
        raise InputError(f"with `shared_resamples`, `start` is the one stream key of the shared draws (an integer >= 0), "
                         f"got {start!r}")
    passes = {p for t in want for p in _bt.lookup(t)[0].passes}  # the kernel passes the wanted tests need
    boot, perm = "bootstrap" in passes, "flips" in passes
    zg = bool(risk_tests) and "risk_flips" in passes
    boot_risk = "risk_bootstrap" in passes
    V = st.values
    K, _, c = V.shape
    exact = B > 0 and c < 31 and 2 ** c <= B and not urbano
    rseed = None if (exact or B == 0) else resolve_seed(rng)
    seed = None if rseed is None else rseed.kernel
    xmean = r_mean(V[:, 1] - V[:, 0]) if urbano and B > 0 else np.empty(0)
    s0 = 0 if seed is None else seed
    with limit_threads(threads, K * (c * 8 + B * c * 3)), _interrupt.stoppable() as stop:
        stats, risk, counts = _k.battery_batch(V, s0, keys, 0 if shared_resamples else B, exact, md, ar, zg,
                                                  max(1, min(256, 2**16 // (1 + B))), xmean, boot_risk, stop,
                                                  boot, perm or zg)
        if shared_resamples:
            counts = _shared_counts(V, s0, int(start), B, exact, md, ar, zg, xmean, boot, perm or zg, boot_risk,
                                    stop)
    iseed = 0
    if B > 0 and any(_bt.lookup(t)[0].pvalues == "inference" and _bt.lookup(t)[0].resampled for t in names):
        if rseed is None:  # the permutation test's enumeration drew none; the inferences' resamples do
            rseed = resolve_seed(rng)
        iseed = rseed.kernel
    ikeys = np.full(K, int(start), np.int64) if shared_resamples else keys
    ctx = _Context(stats, risk, counts, B, c, exact, urbano, bool(correction), V, ar, ikeys, iseed, threads)
    S, P = _pvalues(names, ar, ctx)
    for j, t in enumerate(names):  # a resampling test not asked for, or the flip tests without risk_tests: NaN
        b, _ = _bt.lookup(t)
        if (b.resampled and t not in want) or ("risk_flips" in b.passes and not zg):
            P[:, j] = np.nan
    n_rep = (2 ** c if exact else B)
    if urbano:
        P = np.round(P, 6)  # the study stores p-values to .SIGNIF = 6 decimals
    return BatteryResult(tests=names, tails=TAILS, replicates=n_rep, seed=None if rseed is None else rseed.recorded, min_diff=md,
                         correction=bool(correction), statistic=S, pvalue=P)


def _shared_counts(V, seed, key, B, exact, min_diff, alphas_risk, zg, xmean, boot, perm, boot_risk, stop):
    """The counts array of `fastrisk._kernels.battery.battery_batch` (K, N_COUNTS [+ 3 A]) for the
    K pairs V, every pair drawing the resamples and flips of stream key ``key``
    (`fastrisk._kernels.crn`). ``boot``: the bootstrap of d (BOOT_*, RBOOT_*); ``perm``: the
    sign flips (PERM_*, RPERM_*, and ZRISK_*, GEO_* with ``zg``); ``boot_risk``: the bootstrap of
    URisk at each alpha (BOOT_RISK_* + 3 a). Columns not asked for stay 0."""
    K, A = V.shape[0], alphas_risk.shape[0]
    c = V.shape[2]
    counts = np.zeros((K, _k.N_COUNTS + (_k.BOOT_RISK_STRIDE * A if boot_risk else 0)), np.int64)
    if B == 0:
        return counts
    D, Q, total, tol, sc = _crn.prepare(V, min_diff, xmean)
    X, xt, xtol, dest = _crn.boot_rows(D, total, tol, alphas_risk, boot, boot_risk)
    if len(X):
        base = np.uint64(_crn.stream_base(seed, key, 0))
        rbar = np.full(len(X), np.nan)
        if boot:
            rbar[:K] = _crn.centres(_crn.count_sums(base, B, c), D, total, B)
        single = SINGLE_PRODUCTS and _crn.boot_bounds(X, xt, xtol, rbar)[3].all()
        acc = (_crn.boot_units32 if single else _crn.boot_units)(X, xt, xtol, rbar, base, B, c, stop)
        j = np.arange(len(X))
        k = np.where(j < K, j, (j - K) // max(A, 1)) if boot else j // max(A, 1)
        for q in range(3):
            counts[k, dest + q] = acc[:, q]
        if boot:
            counts[:K, _k.RBOOT_GE], counts[:K, _k.RBOOT_ABS] = acc[:K, 3], acc[:K, 4]
    if perm:
        base = np.uint64(_crn.stream_base(seed, key, 1))
        n_perm = (1 << c) if exact else B
        scale = np.abs(D).sum(axis=1)
        if SINGLE_PRODUCTS and not zg and _crn.flip_bounds(D, total, tol, scale, sc)[2].all():
            acc = _crn.flip_units32(D, total, tol, scale, sc, base, n_perm, exact, c, stop)
        else:  # ZRisk / GeoRisk need each flip's float64 sums of d and q
            m = 2 if zg else 1  # product rows: d (then q, for ZRisk / GeoRisk) of each pair
            P = np.empty((m * K, c))
            P[::m] = D
            if zg:
                P[1::m] = Q
            acc = _crn.flip_units(P, m, total, tol, sc, base, n_perm, exact, zg, c, stop)
        counts[:, [_k.PERM_GE, _k.PERM_LE, _k.PERM_ABS, _k.RPERM_GE, _k.RPERM_ABS, _k.ZRISK_GE, _k.ZRISK_LE,
                   _k.GEO_GE, _k.GEO_LE]] = acc
    return counts


def _wanted(tests, names) -> set:
    """The set of test names asked for (`battery`'s ``tests``), checked against ``names``."""
    if tests is None:
        return set(names)
    want = {tests} if isinstance(tests, str) else set(tests)
    bad = sorted(str(t) for t in want - set(names))
    if bad:
        raise InputError(f"`tests`: no test {', '.join(bad)} in this battery (its tests: {', '.join(names)})")
    return want


def r_mean(d) -> np.ndarray:
    """R's ``mean`` of each row of d: a sequential sum in extended precision divided by n,
    then corrected by the mean of the residuals (R's summary.c), rounded to double."""
    x = np.asarray(d, dtype=np.longdouble)
    n = x.shape[-1]
    s = np.cumsum(x, axis=-1)[..., -1] / n
    s = s + np.cumsum(x - s[..., None], axis=-1)[..., -1] / n
    return s.astype(np.float64)


def _t_tails(t, df):
    """(two-sided, less, greater) p-values of Student t statistics from one CDF evaluation
    each: the smaller tail stdtr(df, -|t|) directly, the larger as its complement."""
    small = special.stdtr(df, -np.abs(t))
    big = 1.0 - small
    neg = t < 0
    out = np.stack([np.minimum(1.0, 2 * small), np.where(neg, small, big), np.where(neg, big, small)], axis=-1)
    out[np.isnan(t)] = np.nan
    return out


