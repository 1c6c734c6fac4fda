"""Meta-evaluation: discriminative power, swap rates, effect sizes and topic-set-size design.

- `discriminative_power` — Sakai's paired bootstrap test of every pair of systems (SIGIR 2006),
  for the mean of a measure and for URisk, TRisk, ZRisk and GeoRisk: the ASL of every pair,
  the ASL curve, the share of pairs significant at ``level`` and the estimated difference
  required.
- `swap_rates` — Voorhees & Buckley's swap experiment (SIGIR 2002; Sanderson & Zobel, SIGIR
  2005): disjoint topic halves, how often a pair's order swaps, by the size of the difference,
  and the exponential extrapolation to larger topic sets.
- `effect_size` — the standardised mean difference of paired comparisons against a baseline
  with its percentile bootstrap confidence interval (Sakai 2014; Ihemelandu & Ekstrand 2023).
- `topic_set_size` — Sakai's closed-form topic set size design (Inf Retrieval J 2016): paired
  t test, one-way ANOVA over m systems, confidence-interval width.

Why the inference layer: these are resampling tests and resampling experiments over the risk
statistics of `fastrisk.core` (URisk/TRisk as `core.urisk` defines them, ZRisk/GeoRisk as
`core.zrisk`, recomputed on every resample), beside the other all-pairs procedure
(`multiple.tukey_hsd`), and above the layers whose definitions they reuse. They import only
the data model, the runtime (seeds, threads, memory checks, progress) and their kernels in
`fastrisk._kernels.metaeval` (the shared bootstrap counts are `fastrisk._kernels.crn`'s draws);
the tests check the per-system statistics against `fastrisk.zrisk`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pyarrow as pa

from fastrisk._kernels import metaeval as _k
from fastrisk._runtime.aliases import SeedLike
from fastrisk._runtime.progress import Progress
from fastrisk._runtime.resources import check_memory
from fastrisk._runtime.rng import resolve_seed
from fastrisk._runtime.threads import limit_threads
from fastrisk.data.matrix import ScoreMatrix, as_matrix
from fastrisk.data.results import Result, array, param
from fastrisk.errors import InputError

STATISTICS = ("mean", "urisk", "trisk", "zrisk", "georisk")
#: Pairs per kernel call of `discriminative_power`: progress is reported and Ctrl-C seen between calls.
PAIRS_PER_CALL = 8192


# ---------------------------------------------------------------------------- shared checks
def _matrix_iv(matrix, name: str = "matrix") -> ScoreMatrix:
    if isinstance(matrix, np.ndarray) and matrix.ndim == 2 and matrix.dtype.kind in "fiu":
        bad = np.argwhere(~np.isfinite(matrix))
        if bad.size:
            s, t = bad[0]
            raise InputError(f"`{name}` must be finite: system {s}, topic {t} is {matrix[s, t]}")
    m = as_matrix(matrix, name)
    if m.n_systems < 2:
        raise InputError(f"`{name}` needs at least 2 systems to compare, got {m.n_systems}")
    if m.n_topics < 2:
        raise InputError(f"`{name}` needs at least 2 topics, got {m.n_topics}")
    return m


def _int_iv(value, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise InputError(f"`{name}` must be an integer >= {low}, got {value!r}")
    return int(value)


def _prob_iv(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 < float(value) < 1.0:
        raise InputError(f"`{name}` must be a number strictly between 0 and 1, got {value!r}")
    return float(value)


# ---------------------------------------------------------------------------- discriminative power
@dataclass(frozen=True, repr=False)
class DiscriminativePowerResult(Result):
    """Sakai's paired bootstrap test of every pair (arrays ``[pair]``); ``kind`` is the
    ``statistic`` tested (mean, urisk, trisk, zrisk, georisk).

    Long form (one row per pair): ``system``, ``baseline`` (d = system - baseline), ``estimate``,
    ``observed``, ``asl``, ``threshold``, ``difference_required``.
    """

    _coords = {"pair": {"system": "pair_system", "baseline": "pair_baseline"}}
    _table = ("pair",)
    _derived = {"asl_curve": ("rank",)}

    pair_system: tuple = param(doc="The pair's system (the d = system - baseline side), one per pair.")
    pair_baseline: tuple = param(doc="The pair's baseline, one per pair.")
    systems: tuple
    kind: str = param(doc="The statistic tested: ``mean``, ``urisk``, ``trisk``, ``zrisk`` or ``georisk``.")
    alpha: float
    replicates: int
    level: float = param(doc="The significance level of the ASLs (Sakai 2006: 0.05).")
    seed: int
    discriminative_power: float = param(doc="Share of the pairs whose ASL is below ``level`` (Sakai 2006).")
    estimated_difference: float = param(doc="The difference required for significance at ``level``: the largest of the pairs' ``difference_required`` (Sakai 2006).")
    estimate: np.ndarray = array("pair", doc="The pair's observed statistic: mean(d), URisk_α = mean(x), or "
                                             "ZRisk / GeoRisk of the system minus the baseline's.")
    observed: np.ndarray = array("pair", doc="|t| of the observed sample (mean, trisk) or |estimate| (urisk, "
                                             "zrisk, georisk): what each replicate is compared with.")
    asl: np.ndarray = array("pair", doc="Achieved significance level #{b : stat*_b >= observed} / B.")
    threshold: np.ndarray = array("pair", doc="The ⌈B·level⌉-th largest replicate statistic (the critical value).")
    difference_required: np.ndarray = array("pair", doc="|mean(w*_b)| (|ΔZRisk*|, |ΔGeoRisk*|) of the replicate "
                                                        "at the threshold: Sakai's difference required.")

    @property
    def asl_curve(self) -> np.ndarray:
        """The ASLs of every pair sorted in increasing order (Sakai's ASL curve, ``[rank]``)."""
        return np.sort(self.asl)

    def summary(self) -> pa.Table:
        """One row: ``statistic``, ``alpha``, ``pairs``, ``discriminative_power``,
        ``estimated_difference``, ``replicates``, ``level``, ``seed``."""
        return pa.table({"statistic": [self.kind], "alpha": [self.alpha], "pairs": [len(self.asl)],
                         "discriminative_power": [self.discriminative_power],
                         "estimated_difference": [self.estimated_difference], "replicates": [self.replicates],
                         "level": [self.level], "seed": [self.seed]})


def _statistic_iv(statistic, alpha) -> None:
    """``statistic`` one of `STATISTICS`, ``alpha`` a finite number >= 0 (and 0 for the mean)."""
    if statistic not in STATISTICS:
        raise InputError(f"`statistic` must be one of {', '.join(STATISTICS)}, got {statistic!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not (float(alpha) >= 0.0) \
            or not math.isfinite(float(alpha)):
        raise InputError(f"`alpha` must be a finite number >= 0, got {alpha!r}")
    if statistic == "mean" and float(alpha) != 0.0:
        raise InputError("`alpha` applies to the risk statistics (urisk, trisk, zrisk, georisk), not to "
                         "statistic='mean'")


def _dp_iv(matrix, statistic, alpha, replicates, level):
    m = _matrix_iv(matrix)
    _statistic_iv(statistic, alpha)
    B = _int_iv(replicates, "replicates", 100)
    lv = _prob_iv(level, "level")
    k = _critical_rank(B, lv)
    if k is None:
        raise InputError(f"`level` x `replicates` must be at least 1 (B·level-th largest statistic), got "
                         f"{lv} x {B}")
    return m, float(alpha), B, lv, k


def _critical_rank(B: int, level: float) -> int | None:
    """k = ⌈B·level⌉, the rank (from the top) of the critical replicate statistic, or None when
    B·level < 1. Sakai's "Bα-th largest" (SIGIR 2006, Figure 3), rounded up as his code does (the
    MATTERS port of it: ``ceil(alpha * samples)``); exactly the rank at which "ASL < level" and
    "observed > k-th largest" agree: ASL < level <=> count < B·level <=> count < ⌈B·level⌉. B·level
    is taken as the decimal ``level`` reads (0.07 x 100 is 7, not 7.000000000000001)."""
    bl = B * Fraction(repr(float(level)))
    if bl < 1:
        return None
    return math.ceil(bl)


def _pairs(S: int, ordered: bool):
    if ordered:
        E, Bs = np.nonzero(~np.eye(S, dtype=bool))
        return E.astype(np.int64), Bs.astype(np.int64)
    I, J = np.triu_indices(S, 1)
    return I.astype(np.int64), J.astype(np.int64)


def discriminative_power(matrix, *, statistic: str = "mean", alpha: float = 0.0, replicates: int = 1000,
                         level: float = 0.05, rng: SeedLike = None, threads: int | None = None,
                         progress: bool | None = None) -> DiscriminativePowerResult:
    r"""Discriminative power: Sakai's paired bootstrap test of every pair of systems.

    For a pair (system e, baseline b) with per-topic scores z_i (see ``statistic``), Sakai's
    paired test (SIGIR 2006, Figure 1) shifts the sample to the null, w_i = z_i - z̄, draws B
    bootstrap resamples w*_b of the topics (one resample shared by every pair) and counts

    .. math:: \mathrm{ASL} = \#\{b : |t(w^*_b)| \ge |t(z)|\} / B, \qquad
              t(z) = \bar z / (\bar\sigma / \sqrt n),\ \bar\sigma^2 = \textstyle\sum (z_i - \bar z)^2 / (n - 1)

    (two-sided, as his Figure 1). The pair is significant when ASL < ``level``; the
    discriminative power is the share of pairs significant. The difference required (Sakai
    2006, Figure 3, "estimating the performance difference required for achieving a given
    significance level"): for every pair, significant or not, the replicate whose |t(w*_b)| is
    the Bα-th largest, α = ``level`` (the critical value, ``threshold``; k = ⌈B·level⌉ when B·level
    is not a whole number, as Sakai's code rounds it, so that a pair is significant exactly when
    its observed |t| exceeds its threshold), and that replicate's |w̄*_b| (``difference_required``,
    the shifted resample's mean difference at the border of significance); the estimate is the
    largest over all the pairs (``estimated_difference``, Sakai's conservative choice; he rounds it
    to two significant figures, fastrisk does not). Among replicates tied at the critical value,
    the lowest-numbered one is taken (the first in replicate order, as in MATTERS'
    ``discriminativePower.m``, written from Sakai's code).

    ``statistic``:

    - ``"mean"``: z = d = X_e - X_b, Sakai's test exactly; unordered pairs e < b.
    - ``"trisk"``: z = x, the risk-reward score x_i = d_i + α min(d_i, 0) (Wang et al. 2012), so
      t(z) is TRisk_α of e against b (Dinçer et al. 2014) and the test is Sakai's applied to x.
      Ordered pairs (e against b and b against e differ when α > 0). At α = 0 it is ``"mean"``.
    - ``"urisk"``: the same x, unstudentized: |mean(w*_b)| >= |URisk_α| (the shift method of
      Efron & Tibshirani 1993, §16.4, which `fastrisk.bootstrap` ``test="shift"`` uses); the
      threshold and difference required are then on URisk's scale. Ordered pairs.
    - ``"zrisk"``, ``"georisk"``: ZRisk_α and GeoRisk_α computed over the whole matrix (Dinçer,
      Macdonald & Ounis 2016: every system is a baseline of every other; `fastrisk.zrisk`), the
      pair's statistic Δ = stat_e - stat_b; every resample recomputes the statistics on the
      resampled matrix (topic totals kept, system and grand totals resampled) and the shift
      test counts |Δ*_b - Δ| >= |Δ| (no standard error exists). Unordered pairs.

    Every pair shares the B resamples of the topics (counter-based draws: the same ``rng`` gives
    the same numbers whatever ``threads``); the resampled sums are a GEMM-shaped product of the
    pairs' centred rows with the resample counts, in topic order (bit for bit the plain loop of
    ``tests/reference/metaeval.py``).

    Parameters
    ----------
    matrix : MatrixLike
        Systems x topics scores (at least 2 of each).
    statistic : {"mean", "urisk", "trisk", "zrisk", "georisk"}
        What each pair is tested on (above).
    alpha : float
        Risk aversion α >= 0 of the risk statistics (0 for ``"mean"``).
    replicates : int
        Bootstrap resamples B (at least 100; Sakai uses 1000).
    level : float
        Significance level of the discriminative power (B·level must be at least 1).
    rng : SeedLike
        The seed, recorded in the result as ``seed`` (``rng=res.seed`` reproduces ``res``).
    threads : int, optional
        Numba threads for this call.
    progress : bool, optional
        Show a progress bar (default: only for long runs on a terminal).

    Returns
    -------
    DiscriminativePowerResult
        Per pair the ASL, threshold and difference required; ``discriminative_power`` and
        ``estimated_difference``; ``asl_curve``.

    References
    ----------
    T. Sakai. Evaluating evaluation metrics based on the bootstrap. SIGIR 2006, 525-532
    (Figure 1: the paired test; Figure 3: the difference required).
    N. Ferro and G. Silvello. MATTERS, the Matlab toolkit for the evaluation of information
    retrieval systems: ``discriminativePower.m``, written from Sakai's C/shell code.
    B. Efron and R. Tibshirani. An Introduction to the Bootstrap. Chapman & Hall, 1993.
    B. T. Dinçer, C. Macdonald and I. Ounis. Hypothesis testing for the risk-sensitive
    evaluation of retrieval systems. SIGIR 2014. Risk-sensitive evaluation of retrieval
    systems: ZRisk and GeoRisk. SIGIR 2016.

    Examples
    --------
    >>> import fastrisk
    >>> m = fastrisk.datasets.trec_matrix("adhoc8_ap")
    >>> r = fastrisk.discriminative_power(m, replicates=200, rng=1)
    >>> 0.0 < r.discriminative_power < 1.0
    True
    """
    m, a, B, lv, k = _dp_iv(matrix, statistic, alpha, replicates, level)
    rseed = resolve_seed(rng)
    seed = rseed.kernel
    X = np.ascontiguousarray(m.values)
    S, c = X.shape
    ordered = statistic in ("urisk", "trisk")
    I, J = _pairs(S, ordered)
    P = I.shape[0]
    blocks = (B + _k.NB - 1) // _k.NB
    tiles_bytes = 2 * _k.TILE * B * 8 + 2 * _k.TILE * c * 8
    zbytes = 2 * B * S * 8 if statistic in ("zrisk", "georisk") else 0
    check_memory(P * (6 * 8 + 16) + blocks * c * _k.NB * 8 + 4 * tiles_bytes + zbytes,
                 f"discriminative power of {P} pairs with {B} replicates",
                 "select fewer systems (ScoreMatrix.select) or use fewer replicates")
    counts = _k.resample_counts(np.uint64(seed), B, c)
    obs = np.empty(P)
    cnt = np.empty(P, np.int64)
    thr = np.empty(P)
    dif = np.empty(P)
    est = np.empty(P)
    bar = Progress(P, progress, f"discriminative power ({statistic})", unit="pairs", work=float(P) * B * c * 4)
    try:
        with limit_threads(threads, P * B * c):
            if statistic in ("zrisk", "georisk"):
                lw = 1.0 + a
                zr = np.empty((B, S))
                gr = np.empty((B, S))
                _k.zrisk_replicates(X, lw, counts, B, zr, gr)
                z0, g0 = _k.zrisk_observed(X, lw)
                V, R = (z0, zr) if statistic == "zrisk" else (g0, gr)
                _k.pair_shift(V, R, I, J, k, obs, cnt, thr, dif, est)
                bar.update(P)
            else:
                kind = _k.STUDENTIZED if statistic in ("mean", "trisk") else _k.MEAN
                for p0 in range(0, P, PAIRS_PER_CALL):
                    p1 = min(P, p0 + PAIRS_PER_CALL)
                    _k.pair_stats(X, I[p0:p1], J[p0:p1], a, kind, counts, B, k, obs[p0:p1], cnt[p0:p1],
                                  thr[p0:p1], dif[p0:p1], est[p0:p1])
                    bar.update(p1 - p0)
    finally:
        bar.close()
    asl = cnt / B
    names = m.systems
    nm = np.array(names, dtype=object)  # one gather per side (a loop over 500k pairs took a second)
    return DiscriminativePowerResult(
        pair_system=tuple(nm[I].tolist()), pair_baseline=tuple(nm[J].tolist()), systems=tuple(names),
        kind=statistic, alpha=a, replicates=B, level=lv, seed=rseed.recorded,
        discriminative_power=float(np.mean(asl < lv)), estimated_difference=float(dif.max()),
        estimate=est, observed=obs, asl=asl, threshold=thr, difference_required=dif)


# ---------------------------------------------------------------------------- swap rates
@dataclass(frozen=True, repr=False)
class SwapRateResult(Result):
    """Swap counts by topic-set size and difference bin (arrays ``[size, bin]``).

    Long form (one row per size and bin): ``size``, ``bin`` (lower edge), ``total``, ``swaps``,
    ``rate``.
    """

    _coords = {"size": {"size": "set_sizes"}, "bin": {"bin": "edges"}}
    _table = ("size", "bin")

    set_sizes: np.ndarray = param(doc="Topic-set sizes n of the two disjoint halves (the ``size`` dim).")
    edges: np.ndarray = param(doc="Lower edge of each bin of the first half's difference (the ``bin`` dim).")
    kind: str = param(doc="The statistic compared: ``mean``, ``urisk``, ``trisk``, ``zrisk`` or ``georisk``.")
    alpha: float
    trials: int = param(doc="Random splits of the topics at each size (Voorhees & Buckley 2002).")
    relative: bool = param(doc="Bins of the relative difference (Sanderson & Zobel 2005) instead of the absolute.")
    seed: int
    total: np.ndarray = array("size", "bin", doc="Pairs whose first-half difference falls in the bin.")
    swaps: np.ndarray = array("size", "bin", doc="Of those, pairs whose difference changes sign on the "
                                                  "second half.")
    rate: np.ndarray = array("size", "bin", doc="swaps / total (NaN for an empty bin): the error rate.")
    fit_intercept: np.ndarray = array("bin", doc="a of the fit ln(rate) = a + b n (Voorhees & Buckley 2002), "
                                                  "NaN with fewer than 2 positive rates.")
    fit_slope: np.ndarray = array("bin", doc="b of the fit ln(rate) = a + b n.")

    def extrapolate(self, n) -> np.ndarray:
        """The fitted error rate exp(a + b n) of every bin at topic-set size ``n`` (``[bin]``)."""
        return np.exp(self.fit_intercept + self.fit_slope * float(n))


def _swap_iv(matrix, statistic, alpha, sizes, trials, bins, relative):
    m = _matrix_iv(matrix)
    c = m.n_topics
    if c < 4:
        raise InputError(f"`matrix` needs at least 4 topics for two disjoint halves of 2, got {c}")
    _statistic_iv(statistic, alpha)
    if relative and statistic != "mean":
        raise InputError("`relative` (Sanderson & Zobel's relative difference) applies to statistic='mean' only")
    if sizes is None:
        half = c // 2
        sizes = np.unique(np.linspace(max(2, half // 5), half, 5).round().astype(np.int64))
    else:
        try:
            sizes = np.array(sizes, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            raise InputError(f"`sizes` must be a sequence of integers, got {sizes!r}") from None
        if sizes.size == 0 or np.any(sizes != np.round(sizes)) or np.any(sizes < 2) or np.any(2 * sizes > c):
            raise InputError(f"`sizes` must be integers n with 2 <= n <= {c // 2} (two disjoint sets of n of the "
                             f"{c} topics), got {sizes.tolist()}")
        sizes = sizes.astype(np.int64)
    T = _int_iv(trials, "trials", 1)
    if bins is None:
        step, top = DEFAULT_BINS[statistic if not relative else "relative"]
        edges = np.round(np.arange(0.0, top + step / 2, step), 10)
    elif isinstance(bins, numbers.Integral) and not isinstance(bins, bool):
        if bins < 1:
            raise InputError(f"`bins` must be a positive number of bins or increasing edges, got {bins}")
        step, top = DEFAULT_BINS[statistic if not relative else "relative"]
        edges = np.linspace(0.0, top, int(bins) + 1)[:-1]
    else:
        try:
            edges = np.array(bins, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            raise InputError(f"`bins` must be an integer or increasing edges, got {bins!r}") from None
        if edges.size == 0 or not np.all(np.isfinite(edges)) or np.any(np.diff(edges) <= 0) or edges[0] < 0:
            raise InputError(f"`bins` edges must be finite, non-negative and increasing, got {edges.tolist()}")
    return m, sizes, T, edges


#: Default bins of `swap_rates` per statistic: (width, last lower edge).
DEFAULT_BINS = {"mean": (0.01, 0.2), "urisk": (0.01, 0.2), "trisk": (0.25, 5.0), "zrisk": (1.0, 20.0),
                "georisk": (0.01, 0.2), "relative": (0.05, 0.95)}
_SWAP_KIND = {"mean": 0, "urisk": 1, "trisk": 2, "zrisk": 3, "georisk": 4}


def swap_rates(matrix, *, statistic: str = "mean", alpha: float = 0.0, sizes=None, trials: int = 1000, bins=None,
               relative: bool = False, rng: SeedLike = None, threads: int | None = None) -> SwapRateResult:
    r"""Swap rates: how often two disjoint topic sets order a pair of systems differently.

    Voorhees & Buckley (SIGIR 2002): for a topic-set size n, draw two disjoint sets A and B of
    n topics (``trials`` times per size); for every pair of systems (i, j), d_A and d_B are the
    differences of their mean scores on A and on B. The pair falls in the bin of |d_A| (bin k
    holds ``edges[k] <= |d_A| < edges[k+1]``, the last bin open; V&B's bins are 0.01 wide) and
    is a swap when d_A d_B < 0. The error rate of a bin is swaps / total. With
    ``relative=True`` the bin is |d_A| / max(mean_A(i), mean_A(j)), the relative difference of
    Sanderson & Zobel (SIGIR 2005). V&B extrapolate to larger topic sets by fitting, in each
    bin, the error rate as an exponential of n:

    .. math:: \ln \mathrm{rate}_k(n) = a_k + b_k n

    (least squares over the sizes with a positive rate), so rate_k(n') = exp(a_k + b_k n')
    (`SwapRateResult.extrapolate`).

    The risk statistics swap as V&B's mean difference does, on their own scale: ``"urisk"`` /
    ``"trisk"``: URisk_α / TRisk_α of system i against baseline j on A and on B (ordered pairs,
    as in `discriminative_power`), binned by |URisk_A| / |TRisk_A|; ``"zrisk"`` / ``"georisk"``:
    the difference ZRisk_α(i) - ZRisk_α(j) (GeoRisk likewise) over the whole matrix restricted to
    A and to B (unordered pairs).

    Parameters
    ----------
    matrix : MatrixLike
        Systems x topics scores (at least 2 systems and 4 topics).
    statistic : {"mean", "urisk", "trisk", "zrisk", "georisk"}
        What is compared on the two halves.
    alpha : float
        Risk aversion α >= 0 of the risk statistics (0 for ``"mean"``).
    sizes : sequence of int, optional
        Topic-set sizes n (each at most half the topics); default: 5 sizes up to c // 2.
    trials : int
        Random splits per size.
    bins : int or sequence of float, optional
        Bin lower edges, or a number of equal bins over the default range; default (`DEFAULT_BINS`):
        0.01-wide bins from 0 to 0.2 (mean, URisk, GeoRisk), 0.25-wide to 5 (TRisk), 1-wide to
        20 (ZRisk), 0.05-wide to 0.95 with ``relative``.
    relative : bool
        Bin by the relative difference (Sanderson & Zobel 2005).
    rng : SeedLike
        The seed, recorded in the result as ``seed`` (``rng=res.seed`` reproduces ``res``).
    threads : int, optional
        Numba threads for this call.

    Returns
    -------
    SwapRateResult
        Totals, swaps and error rates per size and bin, and the fit of the extrapolation.

    References
    ----------
    E. M. Voorhees and C. Buckley. The effect of topic set size on retrieval experiment error.
    SIGIR 2002, 316-323.
    M. Sanderson and J. Zobel. Information retrieval system evaluation: effort, sensitivity,
    and reliability. SIGIR 2005, 162-169.

    Examples
    --------
    >>> import fastrisk
    >>> m = fastrisk.datasets.trec_matrix("adhoc8_ap")
    >>> r = fastrisk.swap_rates(m, sizes=[10, 25], trials=100, rng=1)
    >>> r.rate.shape
    (2, 21)
    """
    m, sz, T, edges = _swap_iv(matrix, statistic, alpha, sizes, trials, bins, relative)
    rseed = resolve_seed(rng)
    seed = rseed.kernel
    X = np.ascontiguousarray(m.values)
    S = X.shape[0]
    total = np.zeros((sz.size, edges.size), np.int64)
    swaps = np.zeros((sz.size, edges.size), np.int64)
    check_memory(sz.size * T * edges.size * 16.0, f"swap rates of {sz.size} sizes x {T} trials",
                 "use fewer trials or bins")
    with limit_threads(threads, sz.size * T * S * S):
        _k.swap_counts(X, sz, T, np.uint64(seed), edges, bool(relative), _SWAP_KIND[statistic], 1.0 + float(alpha),
                       total, swaps)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = swaps / total
    a = np.full(edges.size, np.nan)
    b = np.full(edges.size, np.nan)
    for q in range(edges.size):
        ok = np.isfinite(rate[:, q]) & (rate[:, q] > 0)
        if ok.sum() >= 2:
            b[q], a[q] = np.polyfit(sz[ok].astype(float), np.log(rate[ok, q]), 1)
    return SwapRateResult(set_sizes=sz, edges=edges, kind=statistic, alpha=float(alpha), trials=T, relative=bool(relative), seed=rseed.recorded, total=total,
                          swaps=swaps, rate=rate, fit_intercept=a, fit_slope=b)


# ---------------------------------------------------------------------------- effect size
@dataclass(frozen=True, repr=False)
class EffectSizeResult(Result):
    """Standardised mean differences against a baseline (arrays ``[system]``)."""

    _constants = ("baseline",)

    systems: tuple
    baseline: str
    replicates: int
    confidence_level: float
    seed: int
    mean_difference: np.ndarray = array("system", doc="mean(d), d = system - baseline.")
    sd: np.ndarray = array("system", doc="Sample standard deviation of d (n - 1 divisor).")
    effect_size: np.ndarray = array("system", doc="Sakai's paired effect size mean(d) / sd(d) (NaN if sd is 0).")
    low: np.ndarray = array("system", doc="Lower percentile-bootstrap confidence limit of the effect size.")
    high: np.ndarray = array("system", doc="Upper percentile-bootstrap confidence limit of the effect size.")


def _es_iv(matrix, baseline, ci, replicates):
    m = _matrix_iv(matrix)
    if not isinstance(baseline, str) or baseline not in m.systems:
        raise InputError(f"`baseline` must name a system of the matrix, got {baseline!r}")
    lv = _prob_iv(ci, "ci")
    B = _int_iv(replicates, "replicates", 100)
    return m, baseline, lv, B


def effect_size(matrix, baseline: str, *, ci: float = 0.95, replicates: int = 1000,
                rng: SeedLike = None) -> EffectSizeResult:
    r"""Standardised mean difference of every system against ``baseline``, with a bootstrap CI.

    For the paired differences d_i = X_si - X_bi over c topics, Sakai's effect size for the
    paired t test (Sakai 2014, SIGIR Forum; Sakai 2016, eq. (2)) is

    .. math:: \mathrm{ES} = \bar d / s_d, \qquad s_d^2 = \textstyle\sum (d_i - \bar d)^2 / (c - 1)

    (Cohen's d_z). Its confidence interval is the percentile bootstrap (Efron & Tibshirani
    1993, §13.3) over ``replicates`` resamples of the topics, the same resamples for every
    system (the counter-based draws of `discriminative_power`). Ihemelandu & Ekstrand (SIGIR
    2023) argue that with many topics every difference is significant and the effect size
    with its interval must carry the weight.

    Parameters
    ----------
    matrix : MatrixLike
        Systems x topics scores.
    baseline : str
        The system every other is compared with.
    ci : float
        Confidence level of the interval.
    replicates : int
        Bootstrap resamples (at least 100).
    rng : SeedLike
        The seed, recorded in the result as ``seed`` (``rng=res.seed`` reproduces ``res``).

    Returns
    -------
    EffectSizeResult
        Mean difference, standard deviation, effect size and its interval per system.

    References
    ----------
    T. Sakai. Statistical reform in information retrieval? SIGIR Forum 48(1), 2014.
    N. Ihemelandu and M. D. Ekstrand. Inference at scale: significance testing for large
    search and recommendation experiments. SIGIR 2023.
    B. Efron and R. Tibshirani. An Introduction to the Bootstrap. Chapman & Hall, 1993.

    Examples
    --------
    >>> import fastrisk
    >>> m = fastrisk.datasets.trec_matrix("adhoc8_ap")
    >>> r = fastrisk.effect_size(m, m.systems[0], replicates=200, rng=1)
    >>> bool((r.low <= r.high)[1:].all())
    True
    """
    m, base, lv, B = _es_iv(matrix, baseline, ci, replicates)
    rseed = resolve_seed(rng)
    seed = rseed.kernel
    X = m.values
    D = X - X[m.system_index(base)]
    c = D.shape[1]
    check_memory(B * (c + 4 * D.shape[0]) * 8.0, f"effect sizes with {B} replicates", "use fewer replicates")
    blocks = _k.resample_counts(np.uint64(seed), B, c)  # (blocks, c, NB)
    C = np.concatenate(list(blocks), axis=1)[:, :B].T  # (B, c)
    md = D.mean(axis=1)
    sd = D.std(axis=1, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        es = np.where(sd > 0, md / sd, np.nan)
        s1 = C @ D.T  # (B, S)
        s2 = C @ (D * D).T
        mb = s1 / c
        vb = np.maximum(s2 - s1 * mb, 0.0) / (c - 1)
        eb = mb / np.sqrt(vb)
    eb[~np.isfinite(eb)] = np.nan
    q = (1 - lv) / 2
    low = np.full(es.shape, np.nan)
    high = np.full(es.shape, np.nan)
    keep = np.isfinite(es) & np.isfinite(eb).any(axis=0)  # the baseline itself (d = 0) has no effect size
    if keep.any():
        low[keep] = np.nanquantile(eb[:, keep], q, axis=0)
        high[keep] = np.nanquantile(eb[:, keep], 1 - q, axis=0)
    return EffectSizeResult(systems=tuple(m.systems), baseline=base, replicates=B, confidence_level=lv, seed=rseed.recorded,
                            mean_difference=md, sd=sd, effect_size=es, low=low, high=high)


# ---------------------------------------------------------------------------- topic set size
@dataclass(frozen=True, repr=False)
class TopicSetSizeResult(Result):
    """Sakai's topic set size design: the smallest number of topics n that meets the requirement."""

    method: str
    alpha: float
    beta: float = param(doc="The type II error rate β of the design (power 1 - β).")
    n: int = param(doc="The smallest number of topics that meets the requirement (Sakai 2016).")
    power: float = param(doc="The power at ``n`` by the approximation the design uses (Sakai 2016).")
    exact_power: float = param(doc="The power at ``n`` from the exact noncentral t or F distribution (scipy).")
    n0: float = param(doc="Sakai's starting value of the search (the normal approximation's answer).")


def _power_t_approx(n: int, delta: float, alpha: float) -> float:
    """Sakai (2016) eq. (7): the power of the two-sided paired t test at n topics and effect
    delta, the noncentral t replaced by the normal approximation of Johnson & Welch (Nagata)."""
    from scipy import stats  # slow to import; only the topic-set-size design needs it

    phi = n - 1
    w = stats.t.ppf(1 - alpha / 2, phi)
    lam = math.sqrt(n) * delta
    den = math.sqrt(1 + w * w / (2 * phi))
    a = (w * (1 - 1 / (4 * phi)) - lam) / den
    b = (-w * (1 - 1 / (4 * phi)) - lam) / den
    return float(stats.norm.sf(a) + stats.norm.cdf(b))


def _power_t_exact(n: int, delta: float, alpha: float) -> float:
    from scipy import stats  # slow to import; only the topic-set-size design needs it

    phi = n - 1
    w = stats.t.ppf(1 - alpha / 2, phi)
    lam = math.sqrt(n) * delta
    return float(stats.nct.sf(w, phi, lam) + stats.nct.cdf(-w, phi, lam))


def _power_f_exact(n: int, m: int, Delta: float, alpha: float) -> float:
    from scipy import stats  # slow to import; only the topic-set-size design needs it

    pa, pe = m - 1, m * (n - 1)
    w = stats.f.ppf(1 - alpha, pa, pe)
    return float(stats.ncf.sf(w, pa, pe, n * Delta))


def _ci_width(n: int, sigma2: float, alpha: float) -> float:
    from scipy import stats  # slow to import; only the topic-set-size design needs it

    phi = n - 1
    ev = math.exp(math.lgamma(n / 2) - math.lgamma(phi / 2)) * math.sqrt(2 / phi)  # E(s) / sigma
    return 2 * stats.t.ppf(1 - alpha / 2, phi) * math.sqrt(sigma2 / n) * ev


def _tss_iv(method, alpha, beta, min_difference, variance, systems):
    if method not in ("paired_t", "anova", "ci"):
        raise InputError(f"`method` must be one of paired_t, anova, ci, got {method!r}")
    a = _prob_iv(alpha, "alpha")
    b = _prob_iv(beta, "beta")
    for v, name in ((min_difference, "min_difference"), (variance, "variance")):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (float(v) > 0) or not math.isfinite(v):
            raise InputError(f"`{name}` must be a positive number, got {v!r}")
    m = _int_iv(systems, "systems", 2)
    return method, a, b, float(min_difference), float(variance), m


def topic_set_size(*, method: str = "paired_t", alpha: float = 0.05, beta: float = 0.20,
                   min_difference: float, variance: float, systems: int = 2) -> TopicSetSizeResult:
    r"""Topic set size design in closed form (Sakai, Inf Retrieval J 2016).

    - ``"paired_t"`` (Sakai 2016, §3): the smallest n at which the two-sided paired t test at
      level α detects a difference ``min_difference`` (minD_t) with power 1 - β, the variance
      of the differences σ_t² = ``variance``. Effect Δ = minD_t / σ_t; the start is the normal
      approximation n₀ = ((z_{α/2} + z_β) / Δ)² + z_{α/2}² / 2 (his eq. (8)); n then grows
      (or shrinks) until the power, with the noncentral t (φ = n - 1, λ = √n Δ) replaced by
      the normal approximation he uses,

      .. math:: 1 - \beta \approx \Phi\Big(\frac{\lambda - w (1 - 1/(4\phi))}{\sqrt{1 + w^2/(2\phi)}}\Big)
                + \Phi\Big(\frac{-\lambda - w (1 - 1/(4\phi))}{\sqrt{1 + w^2/(2\phi)}}\Big),
                \quad w = t_{\alpha/2}(\phi),

      reaches 1 - β. ``exact_power`` is `scipy.stats.nct`'s power at the answer.
    - ``"anova"`` (§4): one-way ANOVA over m = ``systems`` systems, minimum detectable range
      minD between the best and the worst system, within-system variance σ² = ``variance``:
      Δ = minD² / (2σ²), λ = nΔ, the power from the noncentral F (φ_A = m - 1, φ_E = m(n - 1))
      -- computed exactly with `scipy.stats.ncf` here, where Sakai's spreadsheet uses an
      approximation (the answer can differ from his tool's by one topic).
    - ``"ci"`` (§5): the smallest n whose expected width of the 100(1-α)% confidence interval of
      the mean difference, E(W) = 2 t_{α/2}(n-1) √(σ²/n) · E(s)/σ with E(s)/σ = √(2/(n-1))
      Γ(n/2)/Γ((n-1)/2), is at most δ = ``min_difference``; start n₀ = 4 z_{α/2}² σ² / δ². ``beta``
      is not used.

    Parameters
    ----------
    method : {"paired_t", "anova", "ci"}
        The design.
    alpha : float
        Type I error rate (or 1 - the confidence level for ``"ci"``).
    beta : float
        Type II error rate (power 1 - β).
    min_difference : float
        minD_t (paired t), minD (ANOVA range) or δ (CI width).
    variance : float
        σ_t² (variance of the differences) or σ² (within-system variance).
    systems : int
        m, the systems compared (``"anova"``).

    Returns
    -------
    TopicSetSizeResult
        ``n``, its ``power`` (the design's), ``exact_power`` and the start ``n0``.

    References
    ----------
    T. Sakai. Topic set size design. Information Retrieval Journal 19(3), 256-283, 2016.
    Y. Nagata. How to Design the Sample Size (in Japanese). Asakura Shoten, 2003.

    Examples
    --------
    >>> import fastrisk
    >>> r = fastrisk.topic_set_size(min_difference=0.05, variance=0.01)
    >>> r.n >= 30 and r.power >= 0.8
    True
    """
    method, a, b, md, var, m = _tss_iv(method, alpha, beta, min_difference, variance, systems)
    from scipy import stats  # slow to import; only the topic-set-size design needs it

    za = stats.norm.ppf(1 - a / 2)
    zb = stats.norm.ppf(1 - b)
    if method == "paired_t":
        delta = md / math.sqrt(var)
        n0 = ((za + zb) / delta) ** 2 + za * za / 2

        def ok(n):
            return _power_t_approx(n, delta, a) >= 1 - b

        def pw(n):
            return _power_t_approx(n, delta, a), _power_t_exact(n, delta, a)
    elif method == "anova":
        Delta = md * md / (2 * var)
        n0 = ((za + zb) / math.sqrt(2 * Delta)) ** 2

        def ok(n):
            return _power_f_exact(n, m, Delta, a) >= 1 - b

        def pw(n):
            p = _power_f_exact(n, m, Delta, a)
            return p, p
    else:
        n0 = 4 * za * za * var / (md * md)

        def ok(n):
            return _ci_width(n, var, a) <= md

        def pw(n):
            return math.nan, math.nan
    n = max(2, int(math.ceil(n0)))
    if ok(n):
        while n > 2 and ok(n - 1):
            n -= 1
    else:
        while not ok(n):
            n += 1
            if n > 10_000_000:
                raise InputError("the design needs more than 10^7 topics: check `min_difference` and `variance`")
    p, pe = pw(n)
    return TopicSetSizeResult(method=method, alpha=a, beta=b, n=n, power=p, exact_power=pe, n0=float(n0))


__all__ = ["discriminative_power", "swap_rates", "effect_size", "topic_set_size", "DiscriminativePowerResult",
           "SwapRateResult", "EffectSizeResult", "TopicSetSizeResult"]
