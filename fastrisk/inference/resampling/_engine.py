"""The resampling engine: argument checks, chunk sizing, the progress bar, the streamed
summaries (standard errors, exact quantiles in predicted windows, p-value counts) and the
replicate sources (the linear BLAS-product path and the generic gather path) that
`fastrisk.inference.resampling.procedures` drives. See `fastrisk.inference.resampling` for the design."""

from __future__ import annotations

import contextlib
import functools
import math
import threading

import numba
import numpy as np
from scipy import special

from fastrisk._kernels import resampling as _k
from fastrisk._kernels._jit import helper_threads
from fastrisk._runtime.compile import compile_checked
from fastrisk._runtime.progress import Progress
from fastrisk._runtime.resources import check_memory, format_bytes
from fastrisk._runtime.threads import blas_threads, parallel
from fastrisk._runtime.validation import choice, positive_int, replicates
from fastrisk.errors import InputError

#: Replicates per summation block; chunks are whole numbers of blocks.
BLOCK = 1024
#: Memory for one chunk of replicates (counts, products, statistics), in bytes.
CHUNK_BYTES = 128 * 2**20
#: Memory for one thread's draws (counts or signs of `_draw_rows` replicates x c topics), in bytes.
DRAW_BYTES = 32 * 2**20


def _draw_rows(c: int) -> int:
    """Replicates whose draws a thread holds at once: a whole `BLOCK` up to 4,096 topics, fewer
    (at least one) beyond, so a thread's buffer stays within `DRAW_BYTES` whatever the topics.
    A function of ``c`` only: the numbers do not depend on the thread count."""
    return max(1, min(BLOCK, DRAW_BYTES // (8 * max(int(c), 1))))
#: Memory for the windows around predicted quantiles (one-pass exact quantiles), in bytes.
_WINDOW_BYTES = 128 * 2**20
#: Replicates of the first chunk that place the windows of a multi-chunk run.
_PILOT = 32768
#: Work (replicates x columns x topics) of one chunk, so that Ctrl-C is seen within about a
#: second: the matrix-product path, and a user statistic (a gather and a call per replicate).
CHUNK_WORK = 2**28
#: Relative tolerance for ties between a replicate and the observed statistic (as scipy).
_EPS = np.finfo(np.float64).eps * 100

ALTERNATIVES = ("two-sided", "less", "greater")


# ====================================================================== validation helpers
_positive_int = positive_int
_choice = choice


_replicates_iv = replicates


def _check_resampling_memory(what: str, M: int, c: int, B: int, rows: int, *, keep: bool, streams: int,
                             per_replicate_values: int, avoid_keep: bool) -> None:
    """Refuse, before allocating, a run whose arrays exceed the available memory: the kept
    replicates (8 M B bytes per stream kept), one chunk of ``rows`` replicates
    (``per_replicate_values`` values per replicate), each thread's draws (`_draw_rows` x c),
    the block sums of every stream and the per-topic scores (8 M c)."""
    kept = 8.0 * M * B * (streams if keep else 0)
    chunk = 8.0 * rows * per_replicate_values + 8.0 * numba.get_num_threads() * _draw_rows(c) * c
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
    `InputError` naming the statistic."""
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
    """Replicates per chunk: a whole number of blocks within `CHUNK_BYTES` of memory and,
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


# ====================================================================== threads
def _spread(task, items, work: float) -> None:
    """``task(item)`` for every item, on numba's thread count of Python threads (the calling
    thread one of them) when ``work`` element-operations are worth it, else on this thread.
    The threads take the next item as they come free, so a thread the machine holds up costs
    its current item, not a fixed share; ``task`` must write only its item's outputs (every
    number is then the same whatever thread computes it)."""
    items = list(items)
    workers = min(len(items), numba.get_num_threads() if parallel(work) else 1)
    if workers < 2:
        for item in items:
            task(item)
        return
    queue = iter(items)  # next() on a list iterator is atomic under the GIL
    stop = []

    def drain() -> None:
        for item in queue:
            if stop:
                return
            task(item)

    futures = [helper_threads(workers - 1).submit(drain) for _ in range(workers - 1)]
    try:
        drain()
    except BaseException:  # Ctrl-C (seen between items) or an error: the others stop at their next item
        stop.append(True)
        raise
    for future in futures:
        future.result()




def _column_ranges(K: int, n: int):
    """Ranges of the K columns of a chunk of n replicates for `_spread`: about 2^17 values
    each (a kernel call per range), at most K."""
    step = max(1, min(K, (1 << 17) // max(n, 1)))
    return [(k, min(k + step, K)) for k in range(0, K, step)]


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
        self.predicted = False  # windows set from a prediction (no pilot needed)
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
        args = (values, self.center, self.obs, self.gamma, BLOCK, start // BLOCK, self.wlo, self.whi, self.cap,
                self.woffset, self.below, self.wfill, self.wbuffer, self.block_sums, self.counts)
        _spread(lambda ks: _k.stream_pass1(*ks, *args), _column_ranges(*values.shape), values.size)

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

    def from_windows(self, probs: np.ndarray, kept=None) -> bool:
        """Exact quantiles ``probs`` (M, P) from the windows, if every order statistic is inside its
        window (window p serves probs[:, p]); with ``kept`` (the M x B replicates), an order
        statistic outside its window is selected from its column's replicates instead."""
        if self.cap.shape[1] != probs.shape[1]:
            return False
        r_lo, r_hi, t = _linear_ranks(self.B, probs)
        inside = (self.wfill <= self.cap) & (self.below <= r_lo) & (r_hi < self.below + self.wfill)
        finite = np.isfinite(probs)
        missed = finite & ~inside
        if missed.any() and kept is None:
            return False
        P = probs.shape[1]
        out = np.empty((self.M, 2 * P))
        slot = np.concatenate([np.arange(P)] * 2)[None, :].repeat(self.M, axis=0)
        slot[~np.tile(finite & inside, 2)] = -1
        rank = np.concatenate([r_lo - self.below, r_hi - self.below], axis=1)
        _k.select_ranks(self.wbuffer, self.woffset, np.minimum(self.wfill, self.cap), slot, rank, out)
        if missed.any():  # a few columns whose prediction was off: from their replicates
            rows = np.flatnonzero(missed.any(axis=1))
            both = np.tile(missed, 2)[rows]
            sel = np.full(both.shape, -1, np.int64)
            sel[both] = 0
            got = np.empty(both.shape)
            _k.select_ranks(np.ascontiguousarray(kept[rows]).reshape(-1), (np.arange(rows.size) * self.B)[:, None],
                            np.full((rows.size, 1), self.B), sel,
                            np.ascontiguousarray(np.concatenate([r_lo, r_hi], axis=1)[rows]), got)
            out[rows] = np.where(both, got, out[rows])
        self._quantiles = _lerp(out[:, :P], out[:, P:], t)
        return True

    # ------------------------------------------------------------------ exact fallback
    def histogram_pass(self, values: np.ndarray) -> None:
        if not hasattr(self, "hist"):
            self.hist = np.zeros((self.M, self.nbins + 2), np.int64)
        _spread(lambda ks: _k.stream_histogram(*ks, values, self.lo, self.scale, self.nbins, self.hist),
                _column_ranges(*values.shape), values.size)

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
        _spread(lambda ks: _k.stream_pass2(*ks, values, self.lo, self.scale, self.nbins, self.target, self.offset,
                                           self.fill, self.buffer), _column_ranges(*values.shape), values.size)

    def quantiles(self) -> np.ndarray:
        if self._quantiles is not None:
            return self._quantiles
        out = np.empty(self.slot.shape)
        _k.select_ranks(self.buffer, self.offset, self.count, self.slot, self.rank_in_bin, out)
        return _lerp(out[:, :self.P], out[:, self.P:], self.gamma_q)


# ====================================================================== replicate sources
def _linear_means(fill, Z: np.ndarray, start: int, n: int, c: int, out=None) -> np.ndarray:
    """``out[:, r] = Z @ w_(start + r)`` for ``r < n``, the draws ``w`` of a replicate (counts,
    signs) written by ``fill(first, W)`` into the rows of ``W``: a block of `BLOCK` replicates at
    a time (blocks start at multiples of `BLOCK` counted from replicate 0, as chunks do), the
    block's draws (in cache, one buffer per thread of `_draw_rows` replicates, never a B x c
    matrix) times ``Z`` by single-threaded BLAS calls writing straight into ``out``. The blocks are spread over numba's
    thread count of Python threads (the draw kernels and BLAS release the GIL) when the draws
    are worth it. Each element is one dot product of a row of Z and a row of a block, the same
    call whatever thread runs it, so the numbers do not depend on the thread count or chunking."""
    if out is None:
        out = np.empty((Z.shape[0], n))
    rows = _draw_rows(c)

    def block(lo: int) -> None:
        hi = min(lo + BLOCK, n)
        w = buffers.get(threading.get_ident())
        if w is None:
            w = buffers[threading.get_ident()] = np.empty((rows, c))
        for a in range(lo, hi, rows):  # one pass when c <= 4,096; bounded draws beyond
            b = min(a + rows, hi)
            fill(start + a, w[:b - a])
            np.matmul(Z, w[:b - a].T, out=out[:, a:b])

    buffers: dict = {}
    with blas_threads(1):
        _spread(block, range(0, n, BLOCK), n * c)
    return out


class _LinearSource:
    """Linear statistics: the replicate means ``W @ y^T / c`` of every column, BLAS products
    of blocks of W (n x c: multinomial counts, sign flips or the exact sign patterns; see
    `_linear_means`). ``studentized`` adds the second moments about the estimate (same
    product), for bootstrap-t."""

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
        if kind == "multinomial":
            self.fill = functools.partial(_k.multinomial_counts, seed)
        elif kind == "signs":
            self.fill = functools.partial(_k.sign_flips, seed)
        else:
            self.fill = _k.exact_sign_flips

    def chunk(self, start: int, stop: int, out=None):
        P = _linear_means(self.fill, self.Z, start, stop - start, self.c, None if self.studentized else out)
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
    bar = Progress(B, progress, desc, unit="rep", work=work, delay=0 if progress else 2.0)
    kept = [np.empty((M, B)) if keep else None, np.empty((M, B)) if keep and want_t else None]
    try:
        for start, stop in chunks:
            target = kept[0][:, start:stop] if keep and stop - start == B else None
            vals = source.chunk(start, stop, target)
            for st, v in zip(streams, vals):
                if st is not None:
                    # predicted windows replace the pilot when the replicates are kept (a miss
                    # then costs two passes over them, less than the pilot's selections)
                    if start == 0 and B >= 2 * _PILOT and st.wants_quantiles and not (keep and st.predicted):
                        st.pilot(v)
                    st.pass1(start, v)
            if keep:
                for store, v in zip(kept, vals):
                    if store is not None and v is not target:
                        store[:, start:stop] = v
            bar.update(stop - start)
        todo = [i for i, st in enumerate(streams) if st is not None and st.wants_quantiles
                and not st.from_windows(st.probs_of(st.z0()), kept[i])]
        if todo:
            bar.close()
            bar = Progress(2 * B, progress, desc + " (exact quantiles)", unit="rep", work=2 * work,
                           delay=0 if progress else 2.0)

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
