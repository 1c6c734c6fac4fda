"""Meta-evaluation kernels: Sakai's paired bootstrap of every pair, and topic-split swap counts.

Discriminative power (Sakai, SIGIR 2006). Every pair of a collection shares one set of B
bootstrap resamples of the topics: resample r is a count vector C_r (C_ri = times topic i is
drawn), drawn once for the whole call by `fastrisk._kernels.crn.count_block` (stream
``crn.stream_base(seed, 0, 0)``, counter-based per replicate: the numbers never depend on
threads or chunks). A pair p with per-topic scores x_p (the difference d = X_e - X_b, or the
risk-reward score x = d + alpha min(d, 0)) and centred scores w_p = x_p - mean(x_p) (the shift
to the null) then needs, for every r, the two sums

    s1_pr = sum_i C_ri w_pi        s2_pr = sum_i C_ri w_pi^2

-- two rows of a GEMM-shaped product (pairs x topics) . (topics x replicates) (one row, s1,
for the unstudentized mean). `pair_stats` takes four rows at a time (two pairs' s1 and s2, or four
pairs' s1), sharing every load of the counts, through every block of replicates (the counts, c x B doubles, stay in L2; the pair's B statistics are then counted
and selected while in L1: measured a third faster at 50 topics than tiles of pairs against a
block), every sum in topic order (i = 0 .. c-1, one rounding per add, no FMA), so
a pair's statistics are the same bits whatever its tile, block or thread, and equal to a
plain loop's (tests/reference/metaeval.py).

Why pair rows and not the per-replicate Gram sums G_r = X^T diag(C_r) X: Gram sums give
sum C d^2 = Q_e + Q_b - 2 G_eb with half the multiply-adds, but lose digits when two systems
are close (d small against X), exactly the pairs whose ASL sits near the threshold; the rows
w_p and w_p^2 keep every sum in topic order on the centred scores.

ZRisk/GeoRisk over the whole matrix (Dinçer, Macdonald & Ounis, SIGIR 2016) are per-system
statistics of a resample: `zrisk_replicates` computes them for every (replicate, system) from
the resampled system totals S*_k = sum_i C_ri X_ik (the product (counts B x c) . (scores c x S))
and the topic totals T_i (a resampled topic keeps its row).

Swap rates (Voorhees & Buckley, SIGIR 2002): `swap_counts` draws, for every trial, a random
partition of the topics (a partial Fisher-Yates shuffle from the trial's own stream) into two
disjoint sets of n topics, and counts, per bin of the first set's absolute difference, the
pairs and the pairs whose difference changes sign on the second set.
"""

from __future__ import annotations

import math

import numpy as np

from fastrisk._kernels._jit import njit, pjit, prange
from fastrisk._kernels._random import next_below, stream_state
from fastrisk._kernels.crn import count_block, stream_base

#: Pairs per tile of `pair_stats` (the tile's rows pass over a block of counts kept in cache).
TILE = 64
#: Replicates per block of counts (c x NB doubles: 250 topics -> 250 KiB).
NB = 128

#: Statistics of `pair_stats`: Sakai's studentized t of the shifted resample, or the
#: unstudentized resampled mean (the shift method for URisk).
STUDENTIZED = 0
MEAN = 1


@njit
def resample_counts(seed, B, c):
    """(blocks, c, NB) counts: ``out[k, i, r]`` = times topic i is drawn in bootstrap resample
    k NB + r (0 past B), the draws of `crn.count_block` from stream ``crn.stream_base(seed, 0, 0)``."""
    blocks = (B + NB - 1) // NB
    base = stream_base(np.uint64(seed), 0, 0)
    out = np.zeros((blocks, c, NB))
    C = np.empty((c, NB))
    for k in range(blocks):
        b0 = k * NB
        n = min(NB, B - b0)
        count_block(base, np.int64(b0), n, c, C)
        for i in range(c):
            for r in range(n):
                out[k, i, r] = C[i, r]
    return out


@njit
def _rows(X, e, b, alpha, w, w2):
    """w = x - mean(x), w2 = w * w for x_i = d_i + alpha min(d_i, 0), d = X[e] - X[b]; returns
    mean(x) (summed in topic order)."""
    c = X.shape[1]
    t = 0.0
    for i in range(c):
        d = X[e, i] - X[b, i]
        x = d + alpha * d if d < 0.0 else d
        w[i] = x
        t += x
    m = t / c
    for i in range(c):
        v = w[i] - m
        w[i] = v
        w2[i] = v * v
    return m


@njit(error_model="numpy")
def studentized(s1, s2, c):
    """|t| of a sample of c values with sum s1 and sum of squares s2 (Sakai 2006:
    t = mean / (sd / sqrt(c)), sd^2 = (s2 - s1 mean) / (c - 1) clipped at 0, so the resample's
    squared deviations need no second pass); a zero standard error gives |t| = inf when the mean
    is not 0 and 0 when it is (0 / 0)."""
    m = s1 / c
    ss = max(s2 - s1 * m, 0.0)
    t = abs(m / math.sqrt(ss / (c - 1) / c))
    return t if t == t else 0.0


@njit
def _tile_sums(W, W2, q, A, n, o):
    """o[0, r] = sum_i A[i, r] W[q, i], o[1, r] = sum_i A[i, r] W2[q, i] and, when W has a row
    q + 1, o[2], o[3] the same for W[q + 1], W2[q + 1] (r < n): four rows share every load of A,
    four topics a pass (`pair_stats` passes a pair's w and w^2, or the rows q, q + 1 of every
    other row of w as W and W2: four pairs' w). Every sum in topic order, (((o + x_i w_i) +
    x_{i+1} w_{i+1}) + ...): each product rounded, then added (no FMA, no reassociation), the
    additions of a plain loop over topics."""
    c = W.shape[1]
    two = q + 1 < W.shape[0]
    q1 = q + 1 if two else q
    o0, o1, o2, o3 = o[0], o[1], o[2], o[3]
    for r in range(n):
        o0[r] = 0.0
        o1[r] = 0.0
        o2[r] = 0.0
        o3[r] = 0.0
    i = 0
    while i + 4 <= c:
        a0, a1, a2, a3 = A[i], A[i + 1], A[i + 2], A[i + 3]
        u0, u1, u2, u3 = W[q, i], W[q, i + 1], W[q, i + 2], W[q, i + 3]
        v0, v1, v2, v3 = W2[q, i], W2[q, i + 1], W2[q, i + 2], W2[q, i + 3]
        p0, p1, p2, p3 = W[q1, i], W[q1, i + 1], W[q1, i + 2], W[q1, i + 3]
        g0, g1, g2, g3 = W2[q1, i], W2[q1, i + 1], W2[q1, i + 2], W2[q1, i + 3]
        for r in range(n):
            x0, x1, x2, x3 = a0[r], a1[r], a2[r], a3[r]
            o0[r] = (((o0[r] + x0 * u0) + x1 * u1) + x2 * u2) + x3 * u3
            o1[r] = (((o1[r] + x0 * v0) + x1 * v1) + x2 * v2) + x3 * v3
            o2[r] = (((o2[r] + x0 * p0) + x1 * p1) + x2 * p2) + x3 * p3
            o3[r] = (((o3[r] + x0 * g0) + x1 * g1) + x2 * g2) + x3 * g3
        i += 4
    while i < c:
        a0 = A[i]
        u0, v0, p0, g0 = W[q, i], W2[q, i], W[q1, i], W2[q1, i]
        for r in range(n):
            x0 = a0[r]
            o0[r] = o0[r] + x0 * u0
            o1[r] = o1[r] + x0 * v0
            o2[r] = o2[r] + x0 * p0
            o3[r] = o3[r] + x0 * g0
        i += 1


@njit(error_model="numpy")
def _replicate_stats(s1, s2, n, c, kind, mq, sq, r0):
    """mq[r0 + r] = |s1[r] / c| and sq[r0 + r] the replicate's statistic: `studentized`'s |t|
    (the same operations in the same order, written as one loop of selects so that it runs on
    vectors), or |mean|."""
    cm1 = c - 1.0
    cf = 1.0 * c
    if kind == STUDENTIZED:
        for r in range(n):
            a = s1[r]
            m = a / cf
            d = s2[r] - a * m
            t = abs(m / math.sqrt((d if d > 0.0 else 0.0) / cm1 / cf))
            mq[r0 + r] = abs(m)
            sq[r0 + r] = t if t == t else 0.0
    else:
        for r in range(n):
            v = abs(s1[r] / cf)
            mq[r0 + r] = v
            sq[r0 + r] = v


@njit
def _kth_heap(stat, size, k):
    """The k-th largest of stat[:size] (1-based k <= size): one pass keeping the k largest in a
    min-heap."""
    heap = np.empty(k)
    for r in range(k):
        heap[r] = stat[r]
    heap.sort()  # a sorted array is a min-heap
    for r in range(k, size):
        v = stat[r]
        if v > heap[0]:
            heap[0] = v  # sift down
            j = 0
            while True:
                a = 2 * j + 1
                if a >= k:
                    break
                b = a + 1
                if b < k and heap[b] < heap[a]:
                    a = b
                if heap[a] < heap[j]:
                    t = heap[a]
                    heap[a] = heap[j]
                    heap[j] = t
                    j = a
                else:
                    break
    return heap[0]


@njit
def _select(stat, size, k):
    """(value, replicate) of the k-th largest of stat[:size] (1-based k <= size), the lowest
    replicate among equal values. A pivot g from a strided sample (its (k/8 + 4)-th largest of
    every 8th value, most often just below the answer) keeps only the values >= g, whose k-th
    largest is the answer when at least k are kept (else `_kth_heap` over all): the same value
    either way."""
    v = -1.0
    if size >= 256 and k + 8 <= size // 8:
        m = size // 8
        samp = np.empty(m)
        for i in range(m):
            samp[i] = stat[8 * i]
        samp.sort()
        g = samp[m - (k // 8 + 4)]
        keep = np.empty(size)
        n = 0
        for r in range(size):
            x = stat[r]
            if x >= g:
                keep[n] = x
                n += 1
        if n >= k:
            top = keep[:n]
            top.sort()
            v = top[n - k]
    if v < 0.0:
        v = _kth_heap(stat, size, k)
    for r in range(size):
        if stat[r] == v:
            return v, r
    return v, 0


#: `pair_stats`' pivot for the next pair: this fraction of the last pair's threshold (in standard
#: errors), about 1.7-1.8 times k values kept at the studentized 95th percentile.
HINT = 0.85


@njit
def _count_select(stat, size, k, t0, g, keep, idx):
    """(#{r : stat[r] >= t0}, k-th largest of stat[:size], its lowest replicate): `_select`'s value
    and replicate (stat never NaN; keep and idx hold size + 1). The count is one pass on its own
    (it runs on vectors); a second, branch-free pass keeps the values >= g (a pivot guessed from the
    pair before; g <= 0 or inf: none) with their replicates; when at least k are kept, their k-th
    largest (a partition of the few kept) is the answer and the first kept replicate holding it the
    lowest overall (every replicate >= g is kept, in order), else `_select` over all."""
    cnt = 0
    for r in range(size):
        cnt += stat[r] >= t0
    if g > 0.0 and g < math.inf:
        n = 0
        for r in range(size):
            x = stat[r]
            keep[n] = x
            idx[n] = r
            n += x >= g
        if n >= k:
            v = np.partition(keep[:n], n - k)[n - k]
            for j in range(n):
                if keep[j] == v:
                    return cnt, v, idx[j]
    v, r = _select(stat, size, k)
    return cnt, v, r


@pjit(error_model="numpy")
def pair_stats(X, I, J, alpha, kind, counts, B, k, t_obs, count, thresh, diff, mean):
    """Sakai's paired bootstrap test of pairs p (system X[I[p]] against baseline X[J[p]]).

    Per pair: ``mean[p]`` = mean(x); ``t_obs[p]`` = |t(x)| (``kind`` STUDENTIZED) or |mean(x)|
    (MEAN); ``count[p]`` = #{r : stat_r >= t_obs[p]} with stat_r = |t(w*_r)| or |mean(w*_r)|;
    ``thresh[p]`` the k-th largest stat_r and ``diff[p]`` = |mean(w*_r)| at that replicate (the
    lowest r among equals): Sakai's estimate of the difference required. ``counts`` from
    `resample_counts`."""
    P = I.shape[0]
    c = X.shape[1]
    tiles = (P + TILE - 1) // TILE
    blocks = counts.shape[0]
    for tl in prange(tiles):
        p0 = tl * TILE
        p1 = min(P, p0 + TILE)
        m = p1 - p0
        # four zero rows past the tile's pairs: a pass may read them (its sums then unused)
        W = np.zeros((m + 4, c))
        W2 = np.zeros((m + 4, c))
        scale = np.empty(m)
        for q in range(m):
            p = p0 + q
            mean[p] = _rows(X, I[p], J[p], alpha, W[q], W2[q])
            s2 = 0.0
            for i in range(c):
                s2 += W2[q, i]
            # the observed statistic: mean(x) over its standard error from the centred sum
            mu = mean[p]
            se = math.sqrt(s2 / (c - 1) / c)
            scale[q] = 1.0 if kind == STUDENTIZED else se
            if kind == STUDENTIZED:
                t = abs(mu / se)
                t_obs[p] = t if t == t else 0.0
            else:
                t_obs[p] = abs(mu)
        # every pass of `_tile_sums` makes four rows of sums through every block of counts (the
        # counts, c x B doubles, stay in L2): two pairs' sum of w and of w^2 (studentized), or four
        # pairs' sum of w (the mean needs no squares); their B statistics are then counted and
        # selected while in L1
        if kind == STUDENTIZED:
            per = 2
            Ra = W[0::1]
            Rb = W2[0::1]
        else:
            per = 4
            Ra = W[0::2]
            Rb = W[1::2]
        st = np.empty((4, B))
        mm = np.empty((4, B))
        o = np.empty((4, NB))
        keep = np.empty(B + 1)
        idx = np.empty(B + 1, np.int64)
        ratio = 0.0  # the next pair's pivot over its standard error (0: none yet)
        for q in range(0, m, per):
            nh = min(per, m - q)
            for blk in range(blocks):
                r0 = blk * NB
                n = min(NB, B - r0)
                _tile_sums(Ra, Rb, q // (per // 2), counts[blk], n, o)
                for h in range(nh):
                    if kind == STUDENTIZED:
                        _replicate_stats(o[2 * h], o[2 * h + 1], n, c, kind, mm[h], st[h], r0)
                    else:
                        _replicate_stats(o[h], o[h], n, c, kind, mm[h], st[h], r0)
            for h in range(nh):
                p = p0 + q + h
                t0 = t_obs[p]
                cnt, v, rr = _count_select(st[h], B, k, t0, ratio * scale[q + h], keep, idx)
                count[p] = cnt
                thresh[p] = v
                diff[p] = mm[h, rr]
                if v > 0.0 and v < math.inf and scale[q + h] > 0.0:
                    ratio = HINT * v / scale[q + h]


@njit
def zrisk_system(X, T, cnt, Sk, N, lw, c):
    """(ZRisk, GeoRisk) of row X of a matrix whose topic totals are T, for the resample with
    counts cnt (cnt_i copies of topic i), system total Sk = sum_i cnt_i X_i and grand total N:
    z_i = (X_i - e_i) / sqrt(e_i), e_i = T_i Sk / N (z_i = 0 where e_i = 0), ZRisk = sum_i cnt_i
    (z_i if z_i >= 0 else lw z_i), GeoRisk = sqrt(Sk / c Phi(ZRisk / c)) (Dinçer et al. 2016),
    c the number of topics of the resample (sum of cnt)."""
    z = 0.0
    for i in range(X.shape[0]):
        if cnt[i] == 0.0:
            continue
        e = T[i] * Sk / N if N > 0.0 else 0.0
        if e > 0.0:
            v = (X[i] - e) / math.sqrt(e)
            z += cnt[i] * (v if v >= 0.0 else lw * v)
    phi = 0.5 * math.erfc(-(z / c) / math.sqrt(2.0))
    return z, math.sqrt(max(Sk, 0.0) / c * phi)


@njit
def topic_totals(X):
    """T_i = sum_s X_si, in system order."""
    S, c = X.shape
    T = np.zeros(c)
    for s in range(S):
        for i in range(c):
            T[i] += X[s, i]
    return T


@njit
def zrisk_systems(X, T, cnt, n, lw, z, g):
    """z[s], g[s]: ZRisk and GeoRisk (`zrisk_system`) of every system s of X over the whole
    matrix resampled with topic counts cnt (n topics in all): S*_s = sum_i cnt_i X_si in topic
    order, N* = sum_s S*_s in system order, the topic totals T of the original matrix."""
    S, c = X.shape
    tot = np.empty(S)
    for s in range(S):
        t = 0.0
        for i in range(c):
            t += cnt[i] * X[s, i]
        tot[s] = t
    N = 0.0
    for s in range(S):
        N += tot[s]
    for s in range(S):
        z[s], g[s] = zrisk_system(X[s], T, cnt, tot[s], N, lw, n)


@pjit
def zrisk_replicates(X, lw, counts, B, zr, gr):
    """``zr[r, s]``, ``gr[r, s]``: ZRisk and GeoRisk of system s (rows of X, S x c) over the whole
    matrix in bootstrap resample r (`resample_counts`, `zrisk_systems`)."""
    c = X.shape[1]
    T = topic_totals(X)
    for r in prange(B):
        blk = r // NB
        j = r - blk * NB
        cnt = np.empty(c)
        for i in range(c):
            cnt[i] = counts[blk, i, j]
        zrisk_systems(X, T, cnt, c, lw, zr[r], gr[r])


@njit
def zrisk_observed(X, lw):
    """(ZRisk, GeoRisk) of every system over the whole matrix: `zrisk_systems` with every topic
    counted once."""
    S, c = X.shape
    z = np.empty(S)
    g = np.empty(S)
    zrisk_systems(X, topic_totals(X), np.ones(c), c, lw, z, g)
    return z, g


@pjit
def pair_shift(V, R, I, J, k, t_obs, count, thresh, diff, delta):
    """The shift test of a difference of per-system statistics (ZRisk, GeoRisk): for pair p,
    delta = V[I] - V[J], delta*_r = R[r, I] - R[r, J]; ``count[p]`` = #{r : |delta*_r - delta| >=
    |delta|}, ``thresh[p]`` = ``diff[p]`` the k-th largest |delta*_r - delta|."""
    P = I.shape[0]
    B = R.shape[0]
    for p in prange(P):
        a = I[p]
        b = J[p]
        dl = V[a] - V[b]
        delta[p] = dl
        t0 = abs(dl)
        t_obs[p] = t0
        st = np.empty(B)
        for r in range(B):
            st[r] = abs((R[r, a] - R[r, b]) - dl)
        # no pivot (g = 0): the count and `_select`, no kept values
        count[p], v, _ = _count_select(st, B, k, t0, 0.0, st[:0], I[:0])
        thresh[p] = v
        diff[p] = v


@njit
def split_topics(seed, trial, c, m, out):
    """out[:m] = the first m of a random permutation of 0 .. c-1 (a partial Fisher-Yates shuffle,
    position j swapped with a uniform j .. c-1), from stream ``stream_state(seed, trial)``."""
    perm = np.arange(c)
    st = stream_state(np.uint64(seed), np.uint64(trial))
    for j in range(m):
        st, u = next_below(st, np.int64(c - j))
        q = j + u
        tmp = perm[j]
        perm[j] = perm[q]
        perm[q] = tmp
        out[j] = perm[j]


#: Statistics of `swap_counts`.
SWAP_MEAN, SWAP_URISK, SWAP_TRISK, SWAP_ZRISK, SWAP_GEORISK = 0, 1, 2, 3, 4


@njit(error_model="numpy")
def _pair_value(X, e, b, sel, off, n, lw, kind):
    """URisk_alpha (kind SWAP_URISK) or TRisk_alpha (SWAP_TRISK) of X[e] against X[b] over topics
    sel[off:off + n]: x = d if d >= 0 else lw d, summed in draw order; TRisk = mean / (sd / sqrt(n))
    with the two-pass sd (0 if mean and sd are 0, +-inf if only sd is)."""
    t = 0.0
    for q in range(n):
        d = X[e, sel[off + q]] - X[b, sel[off + q]]
        t += d if d >= 0.0 else lw * d
    m = t / n
    if kind == SWAP_URISK:
        return m
    ss = 0.0
    for q in range(n):
        d = X[e, sel[off + q]] - X[b, sel[off + q]]
        v = (d if d >= 0.0 else lw * d) - m
        ss += v * v
    tt = m / math.sqrt(ss / (n - 1) / n)
    return tt if tt == tt else 0.0


@njit
def _system_values(X, T, sel, off, n, lw, kind, out):
    """Per system over topics sel[off:off + n]: the mean (SWAP_MEAN), or ZRisk / GeoRisk over the
    whole matrix restricted to those topics (topic totals T of every system, system totals and the
    grand total over the n topics)."""
    S, c = X.shape
    if kind == SWAP_MEAN:
        for s in range(S):
            a = 0.0
            for q in range(n):
                a += X[s, sel[off + q]]
            out[s] = a / n
        return
    cnt = np.zeros(c)
    for q in range(n):
        cnt[sel[off + q]] = 1.0
    other = np.empty(S)
    if kind == SWAP_ZRISK:
        zrisk_systems(X, T, cnt, n, lw, out, other)
    else:
        zrisk_systems(X, T, cnt, n, lw, other, out)


@njit
def _bin(v, edges, e0, scale):
    """The bin of v: the last k with edges[k] <= v (-1 below edges[0]), guessed as for equal bins,
    then corrected exactly."""
    K = edges.shape[0]
    if not v >= e0:
        return -1
    k = min(K - 1, np.int64((v - e0) * scale))
    while k + 1 < K and v >= edges[k + 1]:
        k += 1
    while v < edges[k]:
        k -= 1
    return k


@pjit(error_model="numpy")
def swap_counts(X, sizes, trials, seed, edges, relative, kind, lw, total, swaps):
    """Voorhees & Buckley's swap experiment. For size n = sizes[z] and trial t (stream z trials + t):
    two disjoint topic sets A (the first n of the partition) and B (the next n). Per pair, the
    statistic on A and on B: for SWAP_MEAN, SWAP_ZRISK, SWAP_GEORISK the difference of the two
    systems' values (means summed in draw order, `_system_values`), pairs i < j; for SWAP_URISK,
    SWAP_TRISK the pair's own URisk / TRisk of i against baseline j (`_pair_value`), ordered pairs
    i != j. The pair falls in the bin of |v_A| (or |v_A| / max(mean_A(X_i), mean_A(X_j)) with
    ``relative``, Sanderson & Zobel 2005; SWAP_MEAN only) among ``edges`` (bin k: edges[k] <= v <
    edges[k + 1], the last bin open); ``total[z, k]`` counts the pairs, ``swaps[z, k]`` those
    with v_A v_B < 0."""
    S, c = X.shape
    Z = sizes.shape[0]
    K = edges.shape[0]
    units = Z * trials
    tot_u = np.zeros((units, K), np.int64)
    swp_u = np.zeros((units, K), np.int64)
    e0 = edges[0]
    scale = (K - 1) / (edges[K - 1] - e0) if K > 1 else 0.0
    T = topic_totals(X)
    per_pair = kind == SWAP_URISK or kind == SWAP_TRISK
    for u in prange(units):
        n = sizes[u // trials]
        sel = np.empty(2 * n, np.int64)
        split_topics(seed, u, c, 2 * n, sel)
        ma = np.empty(S)
        mb = np.empty(S)
        if per_pair:
            for i in range(S):
                for j in range(S):
                    if i == j:
                        continue
                    va = _pair_value(X, i, j, sel, 0, n, lw, kind)
                    vb = _pair_value(X, i, j, sel, n, n, lw, kind)
                    k = _bin(abs(va), edges, e0, scale)
                    if k >= 0:
                        tot_u[u, k] += 1
                        swp_u[u, k] += va * vb < 0.0
            continue
        _system_values(X, T, sel, 0, n, lw, kind, ma)
        _system_values(X, T, sel, n, n, lw, kind, mb)
        for i in range(S - 1):
            for j in range(i + 1, S):
                da = ma[i] - ma[j]
                db = mb[i] - mb[j]
                v = abs(da)
                if relative:
                    top = max(ma[i], ma[j])
                    v = v / top if top > 0.0 else 0.0
                k = _bin(v, edges, e0, scale)
                if k >= 0:
                    tot_u[u, k] += 1
                    swp_u[u, k] += da * db < 0.0
    for u in range(units):
        z = u // trials
        for q in range(K):
            total[z, q] += tot_u[u, q]
            swaps[z, q] += swp_u[u, q]
