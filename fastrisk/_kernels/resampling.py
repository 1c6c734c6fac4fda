"""Resampling kernels: multinomial counts, sign flips, gathers, streaming summaries.

Every replicate ``b`` draws from its own counter-based stream ``stream_state(seed, b)``, so
a replicate's numbers depend only on ``(seed, b)``: never on the thread that runs it or on
how the replicates are split into chunks. The count matrix and the gather path consume the
stream identically (`_next_topic`: Lemire's multiply-shift on the 32-bit halves of the
stream's 64-bit words), so replicate ``b`` resamples the same topics in both.
"""

from __future__ import annotations

import numpy as np

from fastrisk._kernels._jit import njit, pjit, prange
from fastrisk._kernels._random import next_below, next_u64, stream_state

_ONE = np.uint64(1)


# --------------------------------------------------------------------------- draws


_LOW32 = np.uint64(0xFFFFFFFF)
_SHIFT32 = np.uint64(32)
_TWO32 = np.uint64(1 << 32)


@njit
def _next_topic(state, bits, half, n, reject_below):
    """The next topic in {0, ..., n-1}, exactly uniform: Lemire's multiply-shift (Lemire, "Fast
    random integer generation in an interval", ACM TOMACS 2019) on 32-bit words x, the high
    then the low half of each 64-bit word of the stream: k = (x n) >> 32, rejecting the rare x
    with (x n) mod 2^32 < 2^32 mod n (``reject_below``). Two topics per SplitMix64 call, and
    no floating point. Returns ``(state, bits, half, k)``, the stream position to pass on."""
    while True:
        if half == 0:
            state, bits = next_u64(state)
            x = bits >> _SHIFT32
            half = np.int64(1)
        else:
            x = bits & _LOW32
            half = np.int64(0)
        m = x * n
        if (m & _LOW32) >= reject_below:
            return state, bits, half, np.int64(m >> _SHIFT32)


@njit
def draw_indices(seed, stream, idx):
    """Fill ``idx`` (length c) with the topics resampled by replicate ``stream``."""
    c = idx.shape[0]
    n = np.uint64(c)
    reject_below = _TWO32 % n
    state = stream_state(seed, stream)
    bits = np.uint64(0)
    half = np.int64(0)  # (not the literal 0: one compile of _next_topic, not two)
    for j in range(c):
        state, bits, half, k = _next_topic(state, bits, half, n, reject_below)
        idx[j] = k


# Drivers: one block of replicates each (rows of ``out``, see the resampling engine's
# `_linear_means`, which spreads the blocks over Python threads: serial kernels, compiled once,
# each with its row loop written in, not called: a callee compiles again inside its caller).
@njit
def multinomial_counts(seed, start, out):
    """Row ``r`` of ``out`` (n x c, float64): how often replicate ``start + r`` drew each topic
    (the topics of `draw_indices`)."""
    c = out.shape[1]
    n = np.uint64(c)
    reject_below = _TWO32 % n
    for r in range(out.shape[0]):
        row = out[r]
        for i in range(c):
            row[i] = 0.0
        state = stream_state(seed, start + r)
        bits = np.uint64(0)
        half = np.int64(0)
        for _ in range(c):
            state, bits, half, k = _next_topic(state, bits, half, n, reject_below)
            row[k] += 1.0


@njit
def sign_flips(seed, start, out):
    """Row ``r`` of ``out`` (n x c): the +-1 pattern of permutation replicate ``start + r``, 64
    fair bits per draw."""
    for r in range(out.shape[0]):
        state = stream_state(seed, start + r)
        bits = np.uint64(0)
        left = 0
        for j in range(out.shape[1]):
            if left == 0:
                state, bits = next_u64(state)
                left = 64
            out[r, j] = 1.0 if (bits & _ONE) == _ONE else -1.0
            bits = bits >> _ONE
            left -= 1


@njit
def exact_sign_flips(start, out):
    """Row ``r`` of ``out``: the signs coded by the bits of ``start + r`` (bit j set: +1)."""
    n, c = out.shape
    for r in range(n):
        code = start + r
        for j in range(c):
            out[r, j] = 1.0 if (code >> j) & 1 else -1.0


# --------------------------------------------------------------------------- generic statistics


@pjit
def bootstrap_statistic(statistic, scores, seed, start, out):
    """Generic path: ``out[k, r] = statistic(scores[k, idx_r])`` for replicates ``start + r``.

    ``scores`` is (K, c); ``out`` is (K, n); ``statistic`` a jitted function of a 1-D array.
    """
    K, c = scores.shape
    n = out.shape[1]
    for r in prange(n):
        idx = np.empty(c, np.int64)
        buf = np.empty(c, np.float64)
        draw_indices(seed, start + r, idx)
        for k in range(K):
            for j in range(c):
                buf[j] = scores[k, idx[j]]
            out[k, r] = statistic(buf)


@pjit
def apply_statistic(statistic, scores, out):
    """``out[k] = statistic(scores[k])`` for each row of ``scores`` (K x c)."""
    for k in prange(scores.shape[0]):
        out[k] = statistic(scores[k].copy())


@pjit
def jackknife_statistic(statistic, scores, out):
    """Leave-one-topic-out values: ``out[k, i] = statistic(scores[k] without topic i)``."""
    K, c = scores.shape
    for t in prange(K * c):
        k = t // c
        i = t - k * c
        buf = np.empty(c - 1, np.float64)
        m = 0
        for j in range(c):
            if j != i:
                buf[m] = scores[k, j]
                m += 1
        out[k, i] = statistic(buf)


# --------------------------------------------------------------------------- Tukey HSD


@pjit
def tukey_range_null(scores_t, seed, start, out):
    """Randomised Tukey HSD null: per trial, permute systems within every topic independently.

    ``scores_t`` is (c topics x S systems); ``out[b]`` = max - min of the S permuted means of
    trial ``start + b`` (its own random stream, so the chunking never changes a number).
    """
    c, S = scores_t.shape
    for b in prange(out.shape[0]):
        state = stream_state(seed, start + b)
        sums = np.zeros(S)
        perm = np.empty(S, np.int64)
        for i in range(c):
            for s in range(S):
                perm[s] = s
            for s in range(S - 1, 0, -1):  # Fisher-Yates
                state, j = next_below(state, s + 1)
                tmp = perm[s]
                perm[s] = perm[j]
                perm[j] = tmp
            for s in range(S):
                sums[s] += scores_t[i, perm[s]]
        lo = sums[0]
        hi = sums[0]
        for s in range(1, S):
            if sums[s] < lo:
                lo = sums[s]
            if sums[s] > hi:
                hi = sums[s]
        out[b] = (hi - lo) / c


# --------------------------------------------------------------------------- streaming summaries


@njit
def _bin(v, lo, scale, nbins):
    """Histogram bin of ``v``: 0 below ``lo``, nbins + 1 at or above the top (and NaN)."""
    if v != v:
        return nbins + 1
    if v < lo:
        return 0
    t = (v - lo) * scale
    if t >= nbins:
        return nbins + 1
    return 1 + np.int64(t)


@njit
def stream_pass1(k0, k1, values, center, obs, gamma, block, first_block, wlo, whi, cap, woffset, below, wfill,
                 wbuffer, block_sums, counts):
    """First pass over a chunk of a replicate stream (values: K x n; ``d = v - center[k]``), columns
    ``k0 <= k < k1`` (the engine spreads column ranges over Python threads).

    Per column ``k``: sums of d and d^2 per block of ``block`` replicates
    (``block_sums[first_block + j, k, :]``), so totals do not depend on the chunking; the
    counts ``[d < 0, d <= 0, d >= obs - gamma, d <= obs + gamma, |d| >= |obs| - gamma]``
    (``counts``, K x 5); and for every window ``p`` (``wlo[k, p] <= v <= whi[k, p]``, around
    a predicted quantile) the number of values below it and up to ``cap`` values inside it.
    """
    for k in range(k0, k1):  # (the column's body written in: see multinomial_counts)
        row = values[k]
        n = row.shape[0]
        m = center[k]
        o = obs[k]
        g = gamma[k]
        for start in range(0, n, block):  # sums of d and d^2 in four interleaved lanes: no add waits
            stop = min(start + block, n)  # for the one before it; the same order for any chunking
            s0 = s1 = s2 = s3 = 0.0
            q0 = q1 = q2 = q3 = 0.0
            r = start
            while r + 4 <= stop:
                d0 = row[r] - m
                d1 = row[r + 1] - m
                d2 = row[r + 2] - m
                d3 = row[r + 3] - m
                s0 += d0
                s1 += d1
                s2 += d2
                s3 += d3
                q0 += d0 * d0
                q1 += d1 * d1
                q2 += d2 * d2
                q3 += d3 * d3
                r += 4
            s = (s0 + s1) + (s2 + s3)
            ss = (q0 + q1) + (q2 + q3)
            for t in range(r, stop):
                d = row[t] - m
                s += d
                ss += d * d
            j = first_block + start // block
            block_sums[j, k, 0] = s
            block_sums[j, k, 1] = ss
        ge = o - g
        le = o + g
        a = abs(o) - g
        c0 = c1 = c2 = c3 = c4 = 0
        for r in range(n):  # branch-free counts
            d = row[r] - m
            c0 += d < 0.0
            c1 += d <= 0.0
            c2 += d >= ge
            c3 += d <= le
            c4 += abs(d) >= a
        counts[k, 0] += c0
        counts[k, 1] += c1
        counts[k, 2] += c2
        counts[k, 3] += c3
        counts[k, 4] += c4
        for p in range(wlo.shape[1]):  # per window: the count below it (a branch-free loop), then the
            lo = wlo[k, p]  # values inside it (a loop whose branch is rarely taken: a window holds a
            hi = whi[k, p]  # few percent of the values)
            nb = 0
            for r in range(n):
                nb += row[r] < lo
            below[k, p] += nb
            off = woffset[k, p]
            c = cap[k, p]
            f = wfill[k, p]
            for r in range(n):
                v = row[r]
                if v >= lo and v <= hi:
                    if f < c:
                        wbuffer[off + f] = v
                    f += 1
            wfill[k, p] = f


@njit
def stream_histogram(k0, k1, values, lo, scale, nbins, hist):
    """Histogram of columns ``k0 <= k < k1`` (values: K x n) on [lo, lo + nbins / scale),
    under/overflow bins 0 and nbins + 1."""
    for k in range(k0, k1):
        for r in range(values.shape[1]):
            hist[k, _bin(values[k, r], lo[k], scale[k], nbins)] += 1


@njit
def stream_pass2(k0, k1, values, lo, scale, nbins, target_bin, offset, fill, buffer):
    """Second pass, columns ``k0 <= k < k1``: copy the values falling in each column's target
    bins into ``buffer``. ``target_bin`` (K x T, -1 unused), ``offset`` and ``fill`` (K x T)
    say where bin ``t`` of column ``k`` goes; the order inside a bin does not matter (it is
    selected from afterwards)."""
    T = target_bin.shape[1]
    for k in range(k0, k1):
        for r in range(values.shape[1]):
            v = values[k, r]
            b = _bin(v, lo[k], scale[k], nbins)
            for t in range(T):
                if target_bin[k, t] == b:
                    buffer[offset[k, t] + fill[k, t]] = v
                    fill[k, t] += 1
                    break


@njit
def _before(a, b):
    """``a`` sorts before ``b``: the usual order, NaN after every number (as ``np.sort``)."""
    return a < b or (b != b and a == a)


@njit
def _select(a, k):
    """The value of rank ``k`` (0-based) of ``a``, which is reordered: a three-way quickselect
    (many equal values, as in a bootstrap distribution, cost one pass). The same value as
    ``np.partition(a, k)[k]``; written out because numba's ``np.partition`` costs seconds of
    compile on first use."""
    lo = 0
    hi = a.shape[0] - 1
    while lo < hi:
        p = a[(lo + hi) // 2]
        lt = lo
        i = lo
        gt = hi
        while i <= gt:  # a[lo:lt] < p, a[lt:i] == p, a[gt+1:hi+1] > p
            v = a[i]
            if _before(v, p):
                a[i] = a[lt]
                a[lt] = v
                lt += 1
                i += 1
            elif _before(p, v):
                a[i] = a[gt]
                a[gt] = v
                gt -= 1
            else:
                i += 1
        if k < lt:
            hi = lt - 1
        elif k > gt:
            lo = gt + 1
        else:
            return a[k]
    return a[k]


@njit
def _rank_value(a, k):
    """The value of rank ``k`` (0-based) of ``a``, which is left as it is: the range of ``a`` cut
    into about ``n / 4`` equal buckets, one counting pass, then `_select` on the values of the
    bucket holding rank ``k`` (bucket order is value order, so its ranks are the next ones).
    Three passes without data-dependent branches instead of quickselect's mispredicted ones;
    NaN, an infinite, zero or subnormal range go to `_select` on a copy."""
    n = a.shape[0]
    if n <= 64:
        return _select(a.copy(), k)
    lo = a[0]
    hi = a[0]
    nan = 0
    for i in range(n):  # (plain comparisons: numba's min and max cost compile time)
        v = a[i]
        lo = v if v < lo else lo
        hi = v if v > hi else hi
        nan += v != v
    width = hi - lo
    nb = n // 4
    if nan > 0 or not (0.0 < width < np.inf) or not nb / width < np.inf:  # (the last: a subnormal range)
        return _select(a.copy(), k)
    scale = nb / width
    top = nb - 1
    cnt = np.empty(nb, np.int64)
    for b in range(nb):
        cnt[b] = 0
    for i in range(n):
        b = np.int64((a[i] - lo) * scale)
        cnt[b if b < top else top] += 1
    before = 0
    want = 0
    while before + cnt[want] <= k:
        before += cnt[want]
        want += 1
    part = np.empty(cnt[want])
    j = 0
    for i in range(n):
        v = a[i]
        b = np.int64((v - lo) * scale)
        if (b if b < top else top) == want:
            part[j] = v
            j += 1
    return _select(part, k - before)


@njit
def select_ranks(buffer, offset, count, slot, rank_in_bin, out):
    """Order statistics of collected bins: ``out[k, r]`` = the value of rank ``rank_in_bin[k, r]``
    within bin ``slot[k, r]`` (``buffer[offset[k, s]:][:count[k, s]]``); NaN where ``slot`` is -1."""
    K, R = slot.shape
    for k in range(K):
        for r in range(R):
            s = slot[k, r]
            if s < 0:
                out[k, r] = np.nan
            else:
                out[k, r] = _rank_value(buffer[offset[k, s]:offset[k, s] + count[k, s]], rank_in_bin[k, r])


@njit
def locate_ranks(hist, ranks, target, slot, rank_in_bin, count):
    """Find the histogram bin of every wanted order statistic (``ranks``, K x R, 0-based).

    Writes the distinct bins of row ``k`` to ``target[k, :]`` (-1 unused) with their sizes in
    ``count``, and for every rank its bin's slot and its position inside the bin.
    """
    K, nb = hist.shape
    R = ranks.shape[1]
    cum = np.empty(nb, np.int64)
    for k in range(K):
        total = 0
        for b in range(nb):
            total += hist[k, b]
            cum[b] = total
        used = 0
        for j in range(R):
            b = 0  # the first bin whose cumulative count exceeds the rank (np.searchsorted's
            top = nb  # side="right", written out: numba's costs half a second of compile)
            while b < top:
                mid = (b + top) // 2
                if cum[mid] <= ranks[k, j]:
                    b = mid + 1
                else:
                    top = mid
            s = -1
            for t in range(used):
                if target[k, t] == b:
                    s = t
                    break
            if s < 0:
                s = used
                target[k, s] = b
                count[k, s] = hist[k, b]
                used += 1
            slot[k, j] = s
            rank_in_bin[k, j] = ranks[k, j] - (cum[b] - hist[k, b])
