"""Bootstrap, permutation (randomisation) tests and the jackknife over topics.

Every procedure works on per-topic scores: the risk-reward scores ``x_i`` of every system
against a baseline (``fastrisk.risk_scores``; URisk = mean x), the differences of every
pair of systems (``pairs=True``), or a plain array of per-topic scores. With a ``baseline``,
a bare S x c array is a matrix (systems and topics named by position, an int baseline a row),
as in :func:`fastrisk.risk`; without one, it is taken as per-topic scores as they are.

Speed. The statistics users mostly resample (mean score, mean difference, URisk at any
alpha, any value function applied per topic) are *linear* in the resampling weights: the
replicate means of every system are one BLAS product of a (B x c) matrix of multinomial
counts by the (c x K) per-topic scores, and sums of squares (for bootstrap-t) come from the
same product. Permutation tests flip signs, again a (B x c) matrix product. Any other
statistic (a jitted function of the per-topic vector) runs in a parallel gather loop that
resamples the very same topics. Replicates are processed in chunks (multiples of
:data:`BLOCK`), and summaries (standard errors, exact quantiles for the intervals,
p-values) are streamed, so a million replicates never need a million-row array.

Determinism. Replicate ``b`` draws from its own counter-based stream ``(seed, b)``: the same
seed gives the same replicates with any number of threads and in any chunking. Sums are
accumulated per block of :data:`BLOCK` replicates and the blocks are added in order, so
standard errors are bit-identical too; quantiles and p-values are exact order statistics and
counts. (The linear path relies on the BLAS product giving the same per-element results for
the same rows, which holds for a given BLAS library and build; the tests check it.)
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import numbers
import sys
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import special

from fastrisk import _numerics
from fastrisk import batch as _batch
from fastrisk._compile import compile_checked
from fastrisk._inference import CONVENTIONS
from fastrisk._kernels import resampling as _k
from fastrisk._kernels import risk as _kr
from fastrisk._random import resolve_seed
from fastrisk._resources import check_memory, format_bytes
from fastrisk._results import ConfidenceInterval, Result, array
from fastrisk._threads import BLAS_FLOP_WORK, limit_threads, parallel
from fastrisk._validation import choice, flag, positive_int
from fastrisk.errors import AlphaInvariantWarning, InputError
from fastrisk.matrix import ScoreMatrix, as_matrix, is_frame

#: Replicates per summation block; chunks are whole numbers of blocks.
BLOCK = 1024
#: Memory for one chunk of replicates (counts, products, statistics), in bytes.
CHUNK_BYTES = 128 * 2**20
#: Keep the replicate arrays by default when they take at most this many bytes.
KEEP_BYTES = 256 * 2**20
#: Memory for the windows around predicted quantiles (one-pass exact quantiles), in bytes.
_WINDOW_BYTES = 128 * 2**20
#: Replicates of the first chunk that place the windows of a multi-chunk run.
_PILOT = 32768
#: Half-width of the streaming histograms, in (expected) standard deviations.
_HALF_WIDTH_SD = 8.0
#: Work (replicates x columns x topics) of one chunk, so that Ctrl-C is seen within about a
#: second: the matrix-product path, and a user statistic (a gather and a call per replicate).
CHUNK_WORK = 2**28
CHUNK_WORK_STATISTIC = 2**25
#: Most replicates one call draws (the Monte Carlo error of a p-value p is sqrt(p (1 - p) / B):
#: 10**6 replicates already resolve p = 0.05 to about 0.0002).
MAX_REPLICATES = 10**9
#: Runs with less work than this (replicates x columns x topics) never show a progress bar.
_PROGRESS_MIN_WORK = 2e9
#: Relative tolerance for ties between a replicate and the observed statistic (as scipy).
_EPS = np.finfo(np.float64).eps * 100

METHODS = ("percentile", "basic", "bca", "studentized")
ALTERNATIVES = ("two-sided", "less", "greater")
TESTS = ("shift", "t")


# ====================================================================== results
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
    probabilities: np.ndarray = array("quantile", column="probability", default=None)
    theoretical: np.ndarray = array("quantile", default=None)
    sample: np.ndarray = array("alpha", "system", "quantile", default=None)


@dataclass(frozen=True, repr=False)
class _Labelled(Result):
    """What every result of the many-columns procedures shares: the estimate ``[alpha, system]``
    and the labels of its columns (system and baseline, or the two systems of a pair) and rows
    (alpha / loss weight, value function). Long forms have one row per (alpha, column).

    ``convention="minus"`` (Benham, Moffat & Culpepper 2019: larger is riskier) reports the
    negated estimate -theta: statistics, biases, replicates and t negated, intervals mirrored
    (-high, -low), and the test run with the alternative swapped, so that ``alternative``
    refers to the reported (negated) statistic and p-values keep their meaning."""

    _coords = {"system": {"system": "systems", "baseline": "baselines"}}
    _table = ("alpha", "system")

    systems: tuple
    baselines: tuple
    alpha: np.ndarray | None
    loss_weight: np.ndarray | None
    value: str | None
    statistic: np.ndarray = array("alpha", "system")
    convention: str = "classic"


@dataclass(frozen=True, repr=False)
class BootstrapResult(_Labelled):
    """Bootstrap over topics of every column (system vs baseline, or pair) and alpha.

    Arrays ``[alpha, system]``: A alphas (1 for value functions and plain arrays), K systems
    or pairs. ``statistic`` is the estimate on the original topics, ``bias`` mean(replicates)
    minus it, ``pvalue`` the paired bootstrap test of "statistic = 0" (replicates shifted to
    the null; ``test="t"`` studentises them as Sakai 2006 / Urbano et al. 2019),
    ``confidence_interval`` a ``(low, high)`` named tuple. ``bootstrap_distribution``
    ``[alpha, system, replicate]`` is kept when asked for (or small enough), else None.

    Long form (one row per alpha, system): ``alpha``, ``loss_weight``, ``system``,
    ``baseline``, ``statistic``, ``standard_error``, ``pvalue``, ``bias``, ``ci_low``,
    ``ci_high``.
    """

    _derived = {"ci_low": ("alpha", "system"), "ci_high": ("alpha", "system")}

    standard_error: np.ndarray = array("alpha", "system", default=None)
    confidence_interval: ConfidenceInterval | None = None
    pvalue: np.ndarray = array("alpha", "system", default=None)
    bias: np.ndarray = array("alpha", "system", default=None)
    bootstrap_distribution: np.ndarray | None = array("alpha", "system", "replicate", default=None)
    method: str = "percentile"
    confidence_level: float = 0.95
    alternative: str = "two-sided"
    test: str = "shift"
    replicates: int = 0
    seed: int = 0
    path: str = "linear"

    @property
    def ci_low(self) -> np.ndarray:
        return self.confidence_interval.low

    @property
    def ci_high(self) -> np.ndarray:
        return self.confidence_interval.high

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
    about 0, the same for every alpha (see :func:`permutation_test`); the baseline's own column
    has p-value NaN.

    Long form (one row per alpha, system): ``alpha``, ``loss_weight``, ``system``,
    ``baseline``, ``statistic``, ``pvalue``.
    """

    pvalue: np.ndarray = array("alpha", "system", default=None)
    null_distribution: np.ndarray | None = array("alpha", "system", "replicate", default=None)
    alternative: str = "two-sided"
    replicates: int = 0
    exact: bool = False
    seed: int | None = None
    null_hypothesis: str = ("the per-topic differences are symmetric about 0 (system and baseline exchangeable); "
                            "the same p-value for every alpha")


@dataclass(frozen=True, repr=False)
class JackknifeResult(_Labelled):
    """Leave-one-topic-out jackknife (Efron 1982; Dinçer et al. 2014): ``standard_error`` and
    ``bias`` ``[alpha, system]``; ``leave_one_out`` and ``pseudo_values`` ``[alpha, system, topic]``.

    Long form (one row per alpha, system): ``alpha``, ``loss_weight``, ``system``,
    ``baseline``, ``statistic``, ``standard_error``, ``bias``.
    """

    topics: tuple = ()
    standard_error: np.ndarray = array("alpha", "system", default=None)
    bias: np.ndarray = array("alpha", "system", default=None)
    leave_one_out: np.ndarray = array("alpha", "system", "topic", default=None)
    pseudo_values: np.ndarray = array("alpha", "system", "topic", default=None)


# ====================================================================== per-topic scores
@dataclass(frozen=True)
class _Scores:
    y: np.ndarray  # (A, K, c) per-topic scores; the statistic is computed from each row
    flipped: np.ndarray | None  # (A, K, c) the scores with the roles of system and baseline swapped
    systems: tuple
    baselines: tuple
    topics: tuple
    alpha: np.ndarray | None
    loss_weight: np.ndarray | None
    value: str | None

    def labels(self) -> dict:
        return dict(systems=self.systems, baselines=self.baselines, alpha=self.alpha,
                    loss_weight=self.loss_weight, value=self.value)


_SWAPPED = {"less": "greater", "greater": "less", "two-sided": "two-sided"}


def _oriented(alternative: str, convention: str) -> str:
    """The alternative to test on the classic statistic theta for one stated on the reported one."""
    return _SWAPPED[alternative] if convention == "minus" else alternative


def _in_convention(res, convention: str, alternative: str | None = None):
    """``res`` (computed on theta) reported in ``convention``: see :class:`_Labelled`."""
    changes = {"convention": convention}
    if alternative is not None:
        changes["alternative"] = alternative
    if convention == "minus":
        for name in ("statistic", "bias", "t", "bootstrap_distribution", "null_distribution", "leave_one_out",
                     "pseudo_values"):
            value = getattr(res, name, None)
            if value is not None:
                changes[name] = -value
        ci = getattr(res, "confidence_interval", None)
        if ci is not None:
            changes["confidence_interval"] = ConfidenceInterval(-ci.high, -ci.low)
    return dataclasses.replace(res, **changes)


def _as_scores_array(data, name="data") -> np.ndarray:
    try:
        arr = np.array(data, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"`{name}` must be a ScoreMatrix or an array of per-topic scores, "
                         f"got {type(data).__name__}") from None
    if arr.ndim not in (1, 2):
        raise InputError(f"`{name}` must be 1-D (c topics), 2-D (S systems x c topics) or a 3-D batch "
                         f"(N collections x S x c, see fastrisk.batch), got shape {arr.shape}")
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.shape[1] < 2:
        raise InputError(f"resampling needs at least 2 topics, got {arr.shape[1]}")
    if arr.shape[0] < 1:
        raise InputError(f"`{name}` has no systems")
    bad = np.argwhere(~np.isfinite(arr))
    if bad.size:
        s, t = bad[0]
        raise InputError(f"`{name}` must be finite: system {s}, topic {t} is {arr[s, t]}")
    return arr


def _value_pair(R, Bv, vf, flipped: bool):
    """x = v(R - Bv) for every alpha (A, S, c), and v(Bv - R) if ``flipped``."""
    def scores(r, b):
        if vf.is_linear:
            return _kr.linear_scores(r, b, vf.alpha)
        return _kr.value_scores(r, b, vf.func)[None]
    y = scores(R, Bv)
    _numerics.check_finite_fast(y, "a per-topic score (r - b, weighted)")
    if not flipped:
        return y, None
    full = np.ascontiguousarray(np.broadcast_to(Bv, R.shape))
    return y, scores(full, R)


def _self_columns(sc: _Scores) -> np.ndarray:
    """(K,) True for a column that compares the baseline with itself (all differences 0)."""
    return np.array([s == b for s, b in zip(sc.systems, sc.baselines)], dtype=bool)


def _without_system(y: np.ndarray, b: int) -> np.ndarray:
    """``y`` (A, S, c) without system ``b``: the rows compacted in place when ``y`` is this
    call's own contiguous array (no second copy of the scores), else a copy."""
    A, S, c = y.shape
    if not (y.flags.c_contiguous and y.flags.writeable):
        return y[:, np.arange(S) != b]
    flat = y.reshape(A * S, c)
    j = b
    for i in range(b + 1, A * S):
        if i % S != b:
            flat[j] = flat[i]
            j += 1
    return flat[:j].reshape(A, S - 1, c)


def _column_names(sc: _Scores) -> list:
    """A label per column: the system, or ``system/other`` for pairs."""
    if len(set(sc.baselines)) <= 1:
        return list(sc.systems)
    return [f"{s}/{b}" for s, b in zip(sc.systems, sc.baselines)]


def _scores(data, baseline, *, alpha, loss_weight, value, pairs, missing, flipped, exclude_self=False) -> _Scores:
    """Resolve the public inputs into per-topic scores (validation included)."""
    from fastrisk.baselines import resolve_baseline
    from fastrisk.values import resolve_value

    flag(pairs, "pairs")
    flag(exclude_self, "exclude_self")
    if is_frame(data) or (baseline is not None and not pairs and isinstance(data, np.ndarray) and data.ndim == 2):
        data = as_matrix(data, "data")  # with a baseline, a bare 2-D array is a systems x topics matrix
    if pairs:
        if baseline is not None:
            raise InputError("`baseline` must be None with pairs=True (every system is compared with every other)")
        if isinstance(data, ScoreMatrix):
            V, names, topics = data.values, data.systems, data.topics
        else:
            V = _as_scores_array(data)
            names, topics = tuple(str(i) for i in range(V.shape[0])), tuple(str(i) for i in range(V.shape[1]))
        if V.shape[0] < 2:
            raise InputError(f"pairs=True needs at least 2 systems, got {V.shape[0]}")
        if V.shape[1] < 2:
            raise InputError(f"resampling needs at least 2 topics, got {V.shape[1]}")
        vf = resolve_value(value, alpha=alpha, loss_weight=loss_weight)
        P = V.shape[0] * (V.shape[0] - 1) // 2
        A = len(vf.alpha) if vf.is_linear else 1
        check_memory(8.0 * A * P * V.shape[1] * (3 if flipped else 2),
                     f"the per-topic differences of {P:,} pairs of systems x {V.shape[1]:,} topics x {A} alpha(s)",
                     "compare with one baseline instead of every pair, or use fewer systems or alphas")
        I, J = np.triu_indices(V.shape[0], 1)
        y, fl = _value_pair(np.ascontiguousarray(V[I]), np.ascontiguousarray(V[J]), vf, flipped)
        return _Scores(y, fl, tuple(names[i] for i in I), tuple(names[j] for j in J), tuple(topics),
                       vf.alpha if vf.is_linear else None, vf.loss_weight if vf.is_linear else None, vf.name)
    if isinstance(data, ScoreMatrix):
        if baseline is None:
            raise InputError("`baseline` is required with a ScoreMatrix (or use pairs=True)")
        vf = resolve_value(value, alpha=alpha, loss_weight=loss_weight)
        matrix, base = resolve_baseline(data, baseline, missing=missing)
        if matrix.n_topics < 2:
            raise InputError(f"resampling needs at least 2 topics, got {matrix.n_topics}")
        y, fl = _value_pair(matrix.values, base.values, vf, flipped)
        systems = matrix.systems
        if exclude_self and base.system is not None:  # the baseline against itself: zero differences
            y, fl = _without_system(y, base.system), (_without_system(fl, base.system) if fl is not None else None)
            systems = tuple(s for k, s in enumerate(systems) if k != base.system)
        return _Scores(y, fl, systems, (base.name,) * len(systems), matrix.topics,
                       vf.alpha if vf.is_linear else None, vf.loss_weight if vf.is_linear else None, vf.name)
    if baseline is not None or alpha is not None or loss_weight is not None or value is not None:
        raise InputError("`alpha`, `loss_weight` and `value` apply to a matrix with a `baseline` or to pairs=True; "
                         "an array without a baseline is taken as per-topic scores (e.g. risk-reward scores x) "
                         "as they are")
    arr = _as_scores_array(data)
    y = arr[None]
    labels = tuple(str(i) for i in range(arr.shape[0]))
    return _Scores(y, -y if flipped else None, labels, ("",) * len(labels),
                   tuple(str(i) for i in range(arr.shape[1])), None, None, None)


# ====================================================================== validation helpers
_positive_int = positive_int
_choice = choice


def _replicates_iv(replicates) -> int:
    """``replicates`` as a positive int no larger than :data:`MAX_REPLICATES`."""
    B = _positive_int(replicates, "replicates")
    if B > MAX_REPLICATES:
        raise InputError(f"`replicates` must be at most {MAX_REPLICATES:,} (10**9), got {B:,}: the Monte Carlo "
                         "error of a p-value p is sqrt(p (1 - p) / B), so 10**6 replicates already resolve "
                         "p = 0.05 to about 0.0002")
    return B


def _check_resampling_memory(what: str, M: int, c: int, B: int, rows: int, *, keep: bool, streams: int,
                             per_replicate_values: int, avoid_keep: bool) -> None:
    """Refuse, before allocating, a run whose arrays exceed the available memory: the kept
    replicates (8 M B bytes per stream kept), one chunk of ``rows`` replicates (their draws and
    ``per_replicate_values`` values per replicate), the block sums of every stream and the
    per-topic scores (8 M c)."""
    kept = 8.0 * M * B * (streams if keep else 0)
    chunk = 8.0 * rows * (c + per_replicate_values)
    sums = 16.0 * M * -(-B // BLOCK) * streams
    total = kept + chunk + sums + 8.0 * M * c
    if keep and avoid_keep:
        avoid = (f"keep_replicates=False streams the summaries without the {format_bytes(kept)} of replicates "
                 "(the CLI never keeps them); or use fewer replicates")
    else:
        avoid = ("use fewer columns (a baseline instead of every pair, fewer systems or alphas) or fewer "
                 "replicates")
    check_memory(total, f"{what} of {M:,} column(s) x {c:,} topics with {B:,} replicates", avoid)


def _statistic_name(stat) -> str:
    return getattr(getattr(stat, "py_func", stat), "__name__", repr(stat))


def _progress_iv(progress) -> None:
    if not (progress is None or isinstance(progress, (bool, np.bool_))):
        raise InputError(f"`progress` must be None (a bar on a terminal for long runs), True or False, got "
                         f"{progress!r}")


@contextlib.contextmanager
def _user_statistic(stat):
    """Errors raised by a user statistic inside a kernel (an out-of-range index under bounds
    checking, an exception it raises; a parallel loop reports them as SystemError) become an
    :class:`InputError` naming the statistic."""
    try:
        yield
    except (KeyboardInterrupt, MemoryError, InputError):
        raise
    except Exception as exc:  # noqa: BLE001 - whatever the user's code raised, typed by numba or not
        if stat is None:
            raise
        cause = exc
        while isinstance(cause, SystemError) and (cause.__cause__ or cause.__context__) is not None:
            cause = cause.__cause__ or cause.__context__
        detail = str(cause).strip().splitlines()
        detail = f"{type(cause).__name__}: {detail[0]}" if detail else type(cause).__name__
        raise InputError(f"`statistic` {_statistic_name(stat)!r} failed on the resampled topics ({detail}); it must return a "
                         "number for any 1-D float array of the per-topic scores (the jackknife passes c - 1 "
                         "of them), indexing relative to x.shape[0]") from None


def _statistic_iv(statistic):
    """A numba dispatcher for ``statistic`` (None stays None), checked on a small vector."""
    if statistic is None:
        return None
    if not callable(statistic):
        raise InputError(f"`statistic` must be a function of a 1-D array, got {type(statistic).__name__}")
    return compile_checked(statistic, np.array([0.25, 0.5, 1.0]), what="`statistic`", argument="a 1-D float array")


def _chunk_rows(B: int, per_replicate_bytes: int, chunk_size, work_per_replicate: int = 0,
                chunk_work: int = CHUNK_WORK) -> int:
    """Replicates per chunk: a whole number of blocks within :data:`CHUNK_BYTES` of memory and,
    so that a chunk takes about a second at most, ``chunk_work`` of work."""
    if chunk_size is None:
        n = CHUNK_BYTES // max(per_replicate_bytes, 1)
        if work_per_replicate:
            n = min(n, chunk_work // work_per_replicate)
        n = max(BLOCK, n // BLOCK * BLOCK)  # within the bounds, but at least one block
    else:
        n = _positive_int(chunk_size, "chunk_size")
        n = max(BLOCK, -(-n // BLOCK) * BLOCK)
    return min(n, -(-B // BLOCK) * BLOCK)


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced by an object without isatty, or closed
        return False


class _Progress:
    """tqdm on stderr if installed: ``True`` always; ``None`` only when stderr is a terminal
    and the run is long (shown after 2 s), never into a log file or a pipe."""

    def __init__(self, total: int, progress, desc: str, work: float = np.inf):
        self.bar = None
        if progress is False or (progress is None and (work < _PROGRESS_MIN_WORK or not _stderr_is_terminal())):
            return
        try:
            from tqdm.auto import tqdm
        except ImportError:
            return
        self.bar = tqdm(total=total, desc=desc, unit="rep", file=sys.stderr, leave=False,
                        delay=0 if progress else 2.0)

    def update(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


# ====================================================================== streaming summaries
def _linear_ranks(B: int, probs: np.ndarray):
    """Order statistics (0-based ranks) and weights of NumPy's 'linear' quantiles ``probs``."""
    q = np.where(np.isfinite(probs), probs, 0.5)
    virtual = (B - 1) * q  # numpy's 'linear' virtual index
    prev = np.floor(virtual)
    r_lo = np.clip(prev, 0, B - 1).astype(np.int64)
    r_hi = np.clip(prev + 1, 0, B - 1).astype(np.int64)
    r_lo[virtual >= B - 1] = B - 1
    t = virtual - prev
    r_hi = np.where(t == 0, r_lo, r_hi)  # a weight of 0 needs only the lower order statistic
    return r_lo, r_hi, t


def _lerp(a, b, t):
    """numpy's _lerp, so that quantiles equal ``np.quantile`` bit for bit."""
    diff = b - a
    return np.where(t >= 0.5, b - diff * (1 - t), a + diff * t)


class _Stream:
    """Exact summaries of a stream of replicate values (M columns, B replicates).

    Sums, p-value and z0 counts are of ``d = value - center`` (the estimate, so that ``d``
    is the replicate shifted to the null); quantiles are of the values themselves. The first pass accumulates block sums (mean, SE) and tail counts (p-values, BCa z0), and,
    when windows around predicted quantiles are given, the values inside them with the count
    below: if every wanted order statistic lands in its window, the quantiles are exact after
    one pass. Otherwise (or without windows) a histogram pass on ``[-half_width, half_width]``
    finds the bins holding the order statistics and a collection pass gathers their values,
    which are sorted to read exact quantiles.
    """

    def __init__(self, M: int, B: int, half_width: np.ndarray, obs: np.ndarray, center=None):
        hw = np.where(np.isfinite(half_width) & (half_width > 0), half_width, 1.0)
        self.M, self.B = M, B
        self.center = np.zeros(M) if center is None else np.ascontiguousarray(center, dtype=np.float64)
        self.nbins = int(min(4096, max(64, 4 * math.sqrt(B)), max(16, 2**23 // max(M, 1))))
        self.lo = self.center - hw
        self.scale = self.nbins / (2.0 * hw)
        self.obs = np.ascontiguousarray(obs, dtype=np.float64)
        self.gamma = np.abs(self.obs) * _EPS
        self.block_sums = np.zeros((-(-B // BLOCK), M, 2))
        self.counts = np.zeros((M, 5), np.int64)
        self.wants_quantiles = False
        self.set_windows(np.zeros((M, 0)), np.zeros((M, 0)), np.zeros((M, 0), np.int64))
        self._quantiles = None

    # ------------------------------------------------------------------ first pass
    def set_windows(self, wlo: np.ndarray, whi: np.ndarray, cap: np.ndarray) -> None:
        self.wlo, self.whi = np.ascontiguousarray(wlo), np.ascontiguousarray(whi)
        self.cap = np.ascontiguousarray(cap, dtype=np.int64)
        self.woffset = (np.cumsum(self.cap.reshape(-1)) - self.cap.reshape(-1)).reshape(self.cap.shape)
        self.below = np.zeros(self.cap.shape, np.int64)
        self.wfill = np.zeros(self.cap.shape, np.int64)
        self.wbuffer = np.empty(int(self.cap.sum()))

    def pilot(self, values: np.ndarray) -> None:
        """Windows from the first replicates: around each wanted probability p (at BCa's z0
        estimated there), the pilot's order statistics at ranks n p -+ (6 binomial standard
        deviations + the shift a z0 error of 4 / sqrt(n) would cause), so the final order
        statistics fall inside with overwhelming probability whatever the distribution's shape."""
        values = values[:, :_PILOT]
        M, n = values.shape
        ref = self.center[:, None]
        z0 = special.ndtri(((values < ref).sum(axis=1) + (values <= ref).sum(axis=1)) / (2.0 * n))
        probs = self.probs_of(z0)
        if not np.isfinite(probs).all():
            return
        shifted = self.probs_of(z0 + 4.0 / math.sqrt(n)) - probs
        margin = 6.0 * np.sqrt(n * probs * (1 - probs)) + n * np.abs(shifted) + 8
        k_lo = np.floor(n * probs - margin).astype(np.int64)
        k_hi = np.ceil(n * probs + margin).astype(np.int64)
        lo = np.full(probs.shape, -np.inf)
        hi = np.full(probs.shape, np.inf)
        for k in range(M):
            kth = np.unique(np.clip(np.concatenate([k_lo[k], k_hi[k]]), 0, n - 1))
            part = np.partition(values[k], kth)
            inner_lo, inner_hi = k_lo[k] >= 0, k_hi[k] <= n - 1
            lo[k, inner_lo] = part[k_lo[k][inner_lo]]
            hi[k, inner_hi] = part[k_hi[k][inner_hi]]
        frac = (np.minimum(k_hi, n) - np.maximum(k_lo, 0)) / n
        cap = np.minimum(self.B, np.ceil(self.B * frac * 1.5 + 10 * np.sqrt(self.B * frac) + 64)).astype(np.int64)
        if cap.sum() * 8 <= _WINDOW_BYTES:
            self.set_windows(lo, hi, cap)

    def pass1(self, start: int, values: np.ndarray) -> None:
        kernel = _k.stream_pass1_serial if not parallel(values.size) else _k.stream_pass1
        kernel(values, self.center, self.obs, self.gamma, BLOCK, start // BLOCK, self.wlo, self.whi, self.cap, self.woffset,
               self.below, self.wfill, self.wbuffer, self.block_sums, self.counts)

    def moments(self):
        s = self.block_sums.sum(axis=0)
        mean = s[:, 0] / self.B
        if self.B > 1:
            var = np.maximum(s[:, 1] - s[:, 0] * mean, 0.0) / (self.B - 1)
        else:
            var = np.full_like(mean, np.nan)
        return mean, np.sqrt(var)

    def pvalue(self, alternative: str, *, symmetric_min: bool, adjustment: int = 1) -> np.ndarray:
        ge, le, absge = self.counts[:, 2], self.counts[:, 3], self.counts[:, 4]
        denom = self.B + adjustment
        if alternative == "greater":
            return (ge + adjustment) / denom
        if alternative == "less":
            return (le + adjustment) / denom
        if symmetric_min:  # scipy's permutation_test convention
            return np.minimum(1.0, 2 * np.minimum(ge + adjustment, le + adjustment) / denom)
        return (absge + adjustment) / denom

    def z0(self) -> np.ndarray:
        return special.ndtri((self.counts[:, 0] + self.counts[:, 1]) / (2.0 * self.B))

    def from_windows(self, probs: np.ndarray) -> bool:
        """Exact quantiles ``probs`` (M, P) from the windows, if every order statistic is inside its
        window (window p serves probs[:, p])."""
        if self.cap.shape[1] != probs.shape[1]:
            return False
        r_lo, r_hi, t = _linear_ranks(self.B, probs)
        inside = (self.wfill <= self.cap) & (self.below <= r_lo) & (r_hi < self.below + self.wfill)
        if not inside[np.isfinite(probs)].all():
            return False
        out = np.empty((self.M, 2 * probs.shape[1]))
        slot = np.concatenate([np.arange(probs.shape[1])] * 2)[None, :].repeat(self.M, axis=0)
        slot[~np.isfinite(np.concatenate([probs, probs], axis=1))] = -1
        rank = np.concatenate([r_lo - self.below, r_hi - self.below], axis=1)
        _k.select_ranks(self.wbuffer, self.woffset, np.minimum(self.wfill, self.cap), slot, rank, out)
        P = probs.shape[1]
        self._quantiles = _lerp(out[:, :P], out[:, P:], t)
        return True

    # ------------------------------------------------------------------ exact fallback
    def histogram_pass(self, values: np.ndarray) -> None:
        if not hasattr(self, "hist"):
            self.hist = np.zeros((self.M, self.nbins + 2), np.int64)
        kernel = _k.stream_histogram_serial if not parallel(values.size) else _k.stream_histogram
        kernel(values, self.lo, self.scale, self.nbins, self.hist)

    def prepare(self, probs: np.ndarray) -> None:
        """Ask for the quantiles ``probs`` (M, P), NumPy's 'linear' method, after the histogram pass."""
        M, P = probs.shape
        r_lo, r_hi, self.gamma_q = _linear_ranks(self.B, probs)
        ranks = np.ascontiguousarray(np.concatenate([r_lo, r_hi], axis=1))  # (M, 2P)
        T = 2 * P
        target = np.full((M, T), -1, np.int64)
        slot = np.empty((M, T), np.int64)
        self.rank_in_bin = np.empty((M, T), np.int64)
        count = np.zeros((M, T), np.int64)
        _k.locate_ranks(self.hist, ranks, target, slot, self.rank_in_bin, count)
        self.offset = (np.cumsum(count.reshape(-1)) - count.reshape(-1)).reshape(M, T)
        self.count = count
        self.target = target
        ok = np.isfinite(probs)
        self.slot = np.where(np.concatenate([ok, ok], axis=1), slot, -1)
        self.fill = np.zeros((M, T), np.int64)
        self.buffer = np.empty(int(count.sum()))
        self.P = P

    def pass2(self, values: np.ndarray) -> None:
        kernel = _k.stream_pass2_serial if not parallel(values.size) else _k.stream_pass2
        kernel(values, self.lo, self.scale, self.nbins, self.target, self.offset, self.fill, self.buffer)

    def quantiles(self) -> np.ndarray:
        if self._quantiles is not None:
            return self._quantiles
        out = np.empty(self.slot.shape)
        _k.select_ranks(self.buffer, self.offset, self.count, self.slot, self.rank_in_bin, out)
        return _lerp(out[:, :self.P], out[:, self.P:], self.gamma_q)


# ====================================================================== replicate sources
_BLAS_CONTROLLER = []
#: Replicate columns are split for parallel products at multiples of this many replicates.
_SPLIT_ALIGN = 1024


def _one_blas_thread():
    """BLAS limited to one thread: every element of a product then has one summation order,
    whatever the machine's or the caller's thread count (threadpoolctl)."""
    if not _BLAS_CONTROLLER:
        from threadpoolctl import ThreadpoolController

        _BLAS_CONTROLLER.append(ThreadpoolController())
    return _BLAS_CONTROLLER[0].limit(limits=1, user_api="blas")


def _product(Z: np.ndarray, W: np.ndarray, out=None) -> np.ndarray:
    """``Z @ W.T`` with single-threaded BLAS calls; large products are split over replicate
    columns (at multiples of 1024) and run on numba's thread count of Python threads, NumPy
    releasing the GIL. Each element is one dot product of a row of Z and a row of W, so the
    numbers do not depend on how many threads run or where the columns are split."""
    import numba

    n = W.shape[0]
    if out is None:
        out = np.empty((Z.shape[0], n))
    workers = numba.get_num_threads()
    with _one_blas_thread():
        if workers < 2 or not parallel(Z.shape[0] * Z.shape[1] * n * BLAS_FLOP_WORK) or n < 2 * _SPLIT_ALIGN:
            np.matmul(Z, W.T, out=out)
            return out
        step = -(-n // workers)
        step = -(-step // _SPLIT_ALIGN) * _SPLIT_ALIGN
        bounds = [(lo, min(lo + step, n)) for lo in range(0, n, step)]
        from concurrent.futures import ThreadPoolExecutor

        def part(bound):
            lo, hi = bound
            out[:, lo:hi] = Z @ W[lo:hi].T

        with ThreadPoolExecutor(len(bounds)) as pool:
            list(pool.map(part, bounds))
    return out


class _LinearSource:
    """Linear statistics: the replicate means ``W @ y^T / c`` of every column, one BLAS product,
    with W (n x c) multinomial counts, sign flips or the exact sign patterns. ``studentized``
    adds the second moments about the estimate (same product), for bootstrap-t."""

    def __init__(self, y: np.ndarray, seed: int, kind: str, studentized: bool = False, scaled: bool = False):
        self.M, self.c = y.shape
        self.seed, self.kind, self.studentized = seed, kind, studentized
        if scaled:  # y is already y / c
            self.Z = y
        elif studentized:
            self.theta = y.mean(axis=1)
            yc = y - self.theta[:, None]
            self.Z = np.ascontiguousarray(np.vstack([y, yc * yc]) / self.c)
        else:
            self.Z = np.ascontiguousarray(y / self.c)

    def chunk(self, start: int, stop: int, out=None):
        W = np.empty((stop - start, self.c))
        serial = not parallel(W.size)
        if self.kind == "multinomial":
            (_k.multinomial_counts_serial if serial else _k.multinomial_counts)(self.seed, start, W)
        elif self.kind == "signs":
            (_k.sign_flips_serial if serial else _k.sign_flips)(self.seed, start, W)
        else:
            _k.exact_sign_flips(start, W)
        P = _product(self.Z, W, None if self.studentized else out)
        means = P[:self.M]
        if not self.studentized:
            return means, None
        if out is not None:
            out[...] = means
        delta = means - self.theta[:, None]
        var = np.maximum(P[self.M:] - delta * delta, 0.0) * (self.c / (self.c - 1.0))
        se = np.sqrt(var / self.c)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = delta / se
        t[np.isnan(t)] = 0.0
        return means, t


class _GenericSource:
    """Any jitted statistic: ``delta = statistic(y[idx_b]) - statistic(y)`` by the gather kernel."""

    def __init__(self, y: np.ndarray, seed: int, statistic, theta: np.ndarray):
        self.y, self.seed, self.statistic, self.theta = y, seed, statistic, theta
        self.M, self.c = y.shape

    def chunk(self, start: int, stop: int, out=None):
        if out is None:
            out = np.empty((self.M, stop - start))
        _k.bootstrap_statistic(self.statistic, self.y, self.seed, start, out)
        bad = np.isnan(out)
        if bad.any():
            k, r = (int(i[0]) for i in np.nonzero(bad))
            raise InputError(f"`statistic` {_statistic_name(self.statistic)!r} returned NaN on bootstrap replicate "
                             f"{start + r} of column {k} ({int(bad.sum())} NaN value(s) in replicates {start}-"
                             f"{stop - 1}); quantiles, standard errors and p-values are undefined with NaN "
                             "replicates: make it return a number for every resample of the topics")
        return out, None


def _run(source, B: int, rows: int, streams, keep: bool, progress, desc: str, want_t: bool):
    """First pass over all chunks (keeping the replicates if asked); then, for streams whose
    quantiles the windows did not settle, a histogram pass and a collection pass."""
    chunks = [(s, min(s + rows, B)) for s in range(0, B, rows)]
    M = source.M
    work = B * M * source.c
    bar = _Progress(B, progress, desc, work=work)
    kept = [np.empty((M, B)) if keep else None, np.empty((M, B)) if keep and want_t else None]
    try:
        for start, stop in chunks:
            target = kept[0][:, start:stop] if keep and stop - start == B else None
            vals = source.chunk(start, stop, target)
            for st, v in zip(streams, vals):
                if st is not None:
                    if start == 0 and B >= 2 * _PILOT and st.wants_quantiles:
                        st.pilot(v)
                    st.pass1(start, v)
            if keep:
                for store, v in zip(kept, vals):
                    if store is not None and v is not target:
                        store[:, start:stop] = v
            bar.update(stop - start)
        todo = [i for i, st in enumerate(streams) if st is not None and st.wants_quantiles
                and not st.from_windows(st.probs_of(st.z0()))]
        if todo:
            bar.close()
            bar = _Progress(2 * B, progress, desc + " (exact quantiles)", work=2 * work)

            def passes():
                if keep:
                    yield 0, B, kept
                else:
                    for start, stop in chunks:
                        yield start, stop, source.chunk(start, stop)
            for start, stop, vals in passes():
                for i in todo:
                    streams[i].histogram_pass(vals[i])
                bar.update(stop - start)
            for i in todo:
                streams[i].prepare(streams[i].probs_of(streams[i].z0()))
            for start, stop, vals in passes():
                for i in todo:
                    streams[i].pass2(vals[i])
                bar.update(stop - start)
    finally:
        bar.close()
    return kept[0]


# ====================================================================== bootstrap
def _bootstrap_iv(replicates, method, confidence_level, alternative, test, statistic, keep_replicates):
    B = _replicates_iv(replicates)
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
    """BCa acceleration from jackknife deviations theta_(.) - theta_(i), (M, c)."""
    num = (dev ** 3).sum(axis=-1)
    den = 6.0 * (dev ** 2).sum(axis=-1) ** 1.5
    with np.errstate(divide="ignore", invalid="ignore"):
        return num / den


#: Memory for the centred scores of one block of rows in :func:`_centred_moments`, in bytes.
_MOMENT_BLOCK_BYTES = 16 * 2**20


def _centred_moments(y: np.ndarray, theta: np.ndarray):
    """Per row of ``y`` (M x c), with ``yc = y - theta``: the sum of squares of ``yc``, BCa's
    acceleration (:func:`_acceleration` of the jackknife deviations ``yc / (c - 1)``), and the
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
        m3[lo:hi] = (yc ** 3).mean(axis=1)
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
        half = sd[:, None] * ((0.3 if method == "bca" else 0.15) + 30.0 / math.sqrt(B)) * np.ones((1, 2))
        mass = np.where(sd[:, None] > 0, special.ndtr((pred + half) / sd[:, None])
                        - special.ndtr((pred - half) / sd[:, None]), 1.0)
    ok = np.isfinite(pred) & np.isfinite(mass)
    cap = np.where(ok, np.minimum(B, np.ceil(1.5 * B * np.where(ok, mass, 0) + 5 * np.sqrt(B * np.where(ok, mass, 0))
                                             + 32)), 0).astype(np.int64)
    if cap.sum() * 8 <= _WINDOW_BYTES:
        pred = pred + stream.center[:, None]
        stream.set_windows(np.where(ok, pred - half, 0.0), np.where(ok, pred + half, 0.0), cap)


def bootstrap(data, baseline=None, *, alpha=None, loss_weight=None, value=None, pairs: bool = False,
              convention: str = "classic", exclude_self: bool = False,
              statistic=None, replicates: int = 10000, method: str = "bca", confidence_level: float = 0.95,
              alternative: str = "two-sided", test: str = "shift", rng=None, keep_replicates: bool | None = None,
              missing: str = "raise", chunk_size: int | None = None, threads: int | None = None,
              progress: bool | None = None) -> BootstrapResult:
    """Bootstrap over topics of every system against ``baseline`` (or every pair) at once.

    ``data`` is a :class:`~fastrisk.ScoreMatrix` (with ``baseline`` and ``alpha`` /
    ``loss_weight`` / ``value`` as :func:`fastrisk.risk`; the statistic is URisk), or with
    ``pairs=True`` the differences of every pair of systems (alpha applied per pair), or an
    array of per-topic scores (1-D, or S x c) used as they are when no ``baseline`` is given
    (with one, an S x c array is a matrix, as in :func:`fastrisk.risk`).

    ``statistic=None`` resamples the mean (URisk, mean difference) by the matrix-product
    path; otherwise ``statistic`` is a numba-compilable function of the per-topic vector
    (1-D float array -> float) evaluated by a parallel gather over the same resampled topics.

    ``method``: confidence interval, ``'percentile'``, ``'basic'``, ``'bca'`` (default) or
    ``'studentized'`` (bootstrap-t). ``pvalue``: the paired bootstrap test of statistic = 0,
    replicates shifted to the null (``test='shift'``), or shifted and studentised
    (``test='t'``, Sakai 2006; Urbano, Lima & Hanjalic 2019), ``(count + 1) / (B + 1)``.
    ``keep_replicates``: keep the (A, K, B) replicates (default: when they fit in 256 MB);
    without them, summaries are streamed and exact. Same ``rng`` -> bit-identical results
    whatever ``threads`` and ``chunk_size``.

    ``convention="minus"`` reports URisk⁻ = -URisk (larger is riskier; see
    :class:`BootstrapResult`); ``exclude_self=True`` leaves out the baseline compared with
    itself when the baseline is a system of the matrix (as every resampling procedure).
    """
    if _batch.is_stack(data):  # K collections in one kernel call: results [batch, alpha, system]
        _batch.refuse_options("bootstrap", value=(value, (None, "linear")), pairs=(pairs, (False,)), convention=(convention, ("classic",)),
                               exclude_self=(exclude_self, (False,)), missing=(missing, ("raise",)),
                              statistic=(statistic, (None,)), test=(test, ("shift",)))
        return _batch.bootstrap(data, 0 if baseline is None else baseline, alpha=alpha, loss_weight=loss_weight,
                                replicates=replicates, alternative=alternative, rng=rng, threads=threads)
    _choice(convention, "convention", CONVENTIONS)
    _choice(alternative, "alternative", ALTERNATIVES)
    given_alternative, alternative = alternative, _oriented(alternative, convention)
    B, stat = _bootstrap_iv(replicates, method, confidence_level, alternative, test, statistic, keep_replicates)
    _progress_iv(progress)
    sc = _scores(data, baseline, alpha=alpha, loss_weight=loss_weight, value=value, pairs=pairs,
                 missing=missing, flipped=False, exclude_self=exclude_self)
    seed = resolve_seed(rng)
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
        d_stream.wants_quantiles = method != "studentized"
        d_stream.probs_of = lambda z0: np.broadcast_to(
            _interval_probs(method, confidence_level, alternative, z0, a_hat), (M, 2)).copy()
        if stat is None and method != "studentized":
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
    if method == "studentized":
        qt = t_stream.quantiles()
        low, high = theta - qt[:, 1] * se_x, theta - qt[:, 0] * se_x
    else:
        qd = d_stream.quantiles()
        low, high = qd[:, 0], qd[:, 1]
        if method == "basic":
            low, high = 2 * theta - qd[:, 1], 2 * theta - qd[:, 0]
    if alternative == "less":
        low = np.full(M, -np.inf)
    elif alternative == "greater":
        high = np.full(M, np.inf)
    pstream = t_stream if test == "t" else d_stream
    pvalue = pstream.pvalue(alternative, symmetric_min=False)
    pvalue.reshape(A, K)[:, _self_columns(sc)] = np.nan  # the baseline against itself is no test
    shape = (A, K)
    dist = None
    if reps is not None:
        dist = reps.reshape(A, K, B)
    res = BootstrapResult(statistic=theta.reshape(shape), standard_error=se.reshape(shape),
                           confidence_interval=ConfidenceInterval(low.reshape(shape), high.reshape(shape)),
                           pvalue=pvalue.reshape(shape), bias=mean_d.reshape(shape), bootstrap_distribution=dist,
                           method=method, confidence_level=float(confidence_level), alternative=alternative,
                           test=test, replicates=B, seed=seed, path=path, **sc.labels())
    return _in_convention(res, convention, given_alternative)


# ====================================================================== permutation test
def permutation_test(data, baseline=None, *, alpha=None, loss_weight=None, value=None, pairs: bool = False,
                     convention: str = "classic", exclude_self: bool = False,
                     replicates: int = 10000, alternative: str = "two-sided", rng=None,
                     keep_replicates: bool | None = None, missing: str = "raise", chunk_size: int | None = None,
                     threads: int | None = None, progress: bool | None = None) -> PermutationResult:
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
    repeated; asking for alpha > 0 warns (:class:`~fastrisk.errors.AlphaInvariantWarning`).
    For a risk-sensitive test of URisk_alpha = 0 use :func:`bootstrap` (``test="t"``) or
    TRisk (:func:`fastrisk.risk`, :func:`t_test`). The baseline compared with itself gets
    p-value NaN (it is no member of the family; see :func:`fastrisk.adjust_pvalues`).
    """
    if _batch.is_stack(data):  # K collections in one kernel call: results [batch, alpha, system]
        _batch.refuse_options("permutation_test", value=(value, (None, "linear")), pairs=(pairs, (False,)), convention=(convention, ("classic",)),
                               exclude_self=(exclude_self, (False,)), missing=(missing, ("raise",)))
        return _batch.permutation_test(data, 0 if baseline is None else baseline, alpha=alpha,
                                       loss_weight=loss_weight, replicates=replicates, alternative=alternative,
                                       rng=rng, threads=threads)
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
    if sc.alpha is not None and (sc.alpha > 0).any():
        warnings.warn(
            f"the permutation (sign-flip) test does not depend on alpha: its p-value tests that the differences "
            f"are symmetric about 0, not URisk_alpha = 0, and is the same for alpha = "
            f"{', '.join(f'{a:g}' for a in sc.alpha)}; for a risk-sensitive test use the bootstrap test "
            "(bootstrap(..., test='t'), `fastrisk test --method bootstrap`) or TRisk (`--method t`)",
            AlphaInvariantWarning, stacklevel=2)
    M = A * K
    y = sc.y.reshape(M, c)
    fl = sc.flipped.reshape(M, c)
    theta = y.mean(axis=1)
    exact = c < 63 and 2 ** c <= B
    seed = None if exact else resolve_seed(rng)
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
    res = PermutationResult(statistic=theta.reshape(A, K), pvalue=pvalue.reshape(A, K), null_distribution=dist,
                             alternative=alternative, replicates=n, exact=exact, seed=seed, **sc.labels())
    return _in_convention(res, convention, given_alternative)


# ====================================================================== jackknife
def jackknife(data, baseline=None, *, alpha=None, loss_weight=None, value=None, pairs: bool = False,
              convention: str = "classic", exclude_self: bool = False,
              statistic=None, missing: str = "raise", threads: int | None = None) -> JackknifeResult:
    """Leave-one-topic-out jackknife of ``statistic`` (default: the mean, in closed form).

    Dinçer, Macdonald & Ounis (SIGIR 2014): ``theta_(i)`` without topic i, ``SE_J = sqrt((c-1)/c sum (theta_(i) -
    theta_(.))^2)``, ``bias_J = (c-1)(theta_(.) - theta)``, pseudo-values ``c theta - (c-1)
    theta_(i)``. Inputs as :func:`bootstrap`; ``statistic`` any numba-compilable function of
    the per-topic vector.
    """
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
    res = JackknifeResult(statistic=theta.reshape(A, K), standard_error=se.reshape(A, K), bias=bias.reshape(A, K),
                           leave_one_out=loo.reshape(A, K, c), pseudo_values=pseudo.reshape(A, K, c),
                           topics=sc.topics, **sc.labels())
    return _in_convention(res, convention)


# ====================================================================== paired t test
@dataclass(frozen=True, repr=False)
class TTestResult(_Labelled):
    """Paired t test of mean per-topic score = 0 (TRisk/TGain with Student's t, df = c - 1);
    arrays ``[alpha, system]``: ``statistic`` the mean (URisk), ``t``, ``pvalue``.

    Long form (one row per alpha, system): ``alpha``, ``loss_weight``, ``system``,
    ``baseline``, ``statistic``, ``t``, ``pvalue``.
    """

    t: np.ndarray = array("alpha", "system", default=None)
    pvalue: np.ndarray = array("alpha", "system", default=None)
    df: int = 0
    alternative: str = "two-sided"


def t_test(data, baseline=None, *, alpha=None, loss_weight=None, value=None, pairs: bool = False,
           convention: str = "classic", exclude_self: bool = False,
           alternative: str = "two-sided", missing: str = "raise") -> TTestResult:
    """Paired t test of every column (as :func:`bootstrap`'s inputs): ``t = mean / (s / sqrt(c))``.

    With a baseline this is TRisk (Dinçer et al. 2014); at alpha = 0 it equals
    ``scipy.stats.ttest_rel``. A column whose scores are constant over topics (standard error
    0 or below the relative floor of :mod:`fastrisk._numerics`) gets t = ±inf and p = 0 (t and
    p NaN where the mean is 0 too) and a :class:`~fastrisk.ZeroVarianceWarning` naming it, as
    :func:`fastrisk.risk`; the baseline compared with itself gets NaN without a warning.
    """
    if _batch.is_stack(data):  # K collections in one kernel call: results [batch, alpha, system]
        _batch.refuse_options("t_test", value=(value, (None, "linear")), pairs=(pairs, (False,)), convention=(convention, ("classic",)),
                               exclude_self=(exclude_self, (False,)), missing=(missing, ("raise",)))
        given = {} if alpha is None else {"alpha": alpha}
        return _batch.t_test(data, 0 if baseline is None else baseline, loss_weight=loss_weight,
                             alternative=alternative, **given)
    _choice(convention, "convention", CONVENTIONS)
    _choice(alternative, "alternative", ALTERNATIVES)
    given_alternative, alternative = alternative, _oriented(alternative, convention)
    from scipy import stats

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
    if alternative == "two-sided":
        p = 2 * stats.t.sf(np.abs(t), c - 1)
    elif alternative == "greater":
        p = stats.t.sf(t, c - 1)
    else:
        p = stats.t.cdf(t, c - 1)
    res = TTestResult(statistic=mean, t=t, pvalue=p, df=c - 1, alternative=alternative, **sc.labels())
    return _in_convention(res, convention, given_alternative)
