"""Rank agreement kernels: RBO with ties, Kendall's tau-b, Friedman ranks.

A ranking is three parallel int64 arrays over its *flattened* positions 0..n-1:
``ids`` (dense item codes), ``top`` and ``bot`` (first and last position of the tie group
the position belongs to; ``top == bot`` for an untied item).

RBO follows Webber, Moffat and Zobel (2010) extended to ties by Corsi and Urbano (SIGIR
2024). The contribution of an item ranked in tie group [t, b] to the prefix of depth d+1
(0-based column d) is 0 before t and 1 from b on; in between it is 1 (treatment ``w``) or
the expected share (d - t + 1)/(b - t + 1) (treatments ``a`` and ``b``). Overlap X_d is the
sum over common items of the product of their two contributions; agreement A_d is X_d
normalised by the prefix sizes (``w``: mean of the two counts of items with t <= d; ``a``:
d + 1; ``b``: geometric mean of the sums of squared contributions). Depths past the shorter
ranking S use d + 1 as S's size; the upper bound lets S continue with the items of the
longer ranking L it lacks, in L's order; the extrapolation continues S with the agreement
at depth s. Everything is O(n log n + sum of tie-group sizes) per pair: no dense
item x depth matrices.
"""

from __future__ import annotations

import math

import numpy as np

from fastrisk._kernels._jit import helper, njit, pjit, prange, serial

TIES_W = 0
TIES_A = 1
TIES_B = 2


# ---------------------------------------------------------------------------- rankings


@njit
def ranking_from_scores(scores, ids, top, bot):
    """Order positions of ``scores`` by decreasing score; equal scores share a tie group."""
    n = scores.size
    order = np.argsort(-scores, kind="mergesort")
    i = 0
    while i < n:
        j = i
        while j + 1 < n and scores[order[j + 1]] == scores[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ids[k] = order[k]
            top[k] = i
            bot[k] = j
        i = j + 1


@pjit
def rankings_from_scores(scores, ids, top, bot):
    """One ranking per row of the (K, n) ``scores``; outputs are (K, n) int64."""
    for k in prange(scores.shape[0]):
        ranking_from_scores(scores[k], ids[k], top[k], bot[k])


# ---------------------------------------------------------------------------- RBO


@helper
def _share(t, b, d, ties):
    """Contribution of an item tied over positions [t, b] to the prefix ending at d."""
    if d < t:
        return 0.0
    if ties == TIES_W or d >= b:
        return 1.0
    return (d - t + 1) / (b - t + 1)


@helper
def _sum_sq(top, bot, d):
    """Sum over a ranking's items of their squared share at depth d (d inside the ranking)."""
    t = top[d]
    g = bot[d] - t + 1
    k = d - t + 1
    return t + (k * k) / g


@helper
def _match(ids_s, ids_l, pos_in_l):
    """pos_in_l[i] = position in L of the item at position i of S, or -1."""
    pos_in_l[:] = -1
    # ids (dense codes, far below 2**53) sorted as float64: the one argsort instantiation the
    # rankings already compile (another dtype costs seconds more of first-use compile)
    os_ = np.argsort(ids_s.astype(np.float64), kind="mergesort")
    ol = np.argsort(ids_l.astype(np.float64), kind="mergesort")
    i = 0
    j = 0
    while i < os_.size and j < ol.size:
        a = ids_s[os_[i]]
        b = ids_l[ol[j]]
        if a == b:
            pos_in_l[os_[i]] = ol[j]
            i += 1
            j += 1
        elif a < b:
            i += 1
        else:
            j += 1


@helper
def _agreement(x, d, ties, norm_s, top_l, bot_l):
    """A_d from the overlap x at column d; ``norm_s`` is S's size term (count or sum sq)."""
    if ties == TIES_W:
        return 2.0 * x / (norm_s + (bot_l[d] + 1))
    if ties == TIES_A:
        return x / (d + 1)
    return x / math.sqrt(norm_s) / math.sqrt(_sum_sq(top_l, bot_l, d))


@njit
def rbo_pair(ids_x, top_x, bot_x, ids_y, top_y, bot_y, p, ties, out):
    """RBO of two non-empty rankings; out[:] = ext, min, max, res."""
    if ids_x.size >= ids_y.size:
        ids_s, top_s, bot_s = ids_y, top_y, bot_y
        ids_l, top_l, bot_l = ids_x, top_x, bot_x
    else:
        ids_s, top_s, bot_s = ids_x, top_x, bot_x
        ids_l, top_l, bot_l = ids_y, top_y, bot_y
    s = ids_s.size
    l = ids_l.size

    pos_in_l = np.empty(s, np.int64)
    _match(ids_s, ids_l, pos_in_l)
    in_s = np.zeros(l, np.bool_)

    # overlap X_d: ramps of tied common items explicitly, full contributions by difference
    overlap = np.zeros(l)
    steps = np.zeros(l + 1)
    n_common = 0
    for i in range(s):
        j = pos_in_l[i]
        if j < 0:
            continue
        in_s[j] = True
        n_common += 1
        ts = top_s[i]
        bs = bot_s[i]
        tl = top_l[j]
        bl = bot_l[j]
        lo = max(ts, tl)
        hi = lo if ties == TIES_W else max(bs, bl)
        for d in range(lo, hi):
            overlap[d] += _share(ts, bs, d, ties) * _share(tl, bl, d, ties)
        steps[hi] += 1.0
    run = 0.0
    for d in range(l):
        run += steps[d]
        overlap[d] += run

    # items of L missing from S, counted before each position of L
    uniq_before = np.zeros(l + 1, np.int64)
    for j in range(l):
        uniq_before[j + 1] = uniq_before[j] + (0 if in_s[j] else 1)

    f = l + s - n_common
    pw = np.empty(f + 2)
    for d in range(f + 2):
        pw[d] = p**d

    # section 1: depths 1..s
    sum_min = 0.0
    sum_max = 0.0
    sum_ext = 0.0
    a_s = 0.0
    for d in range(s):
        if ties == TIES_W:
            norm_s = float(bot_s[d] + 1)
        elif ties == TIES_B:
            norm_s = _sum_sq(top_s, bot_s, d)
        else:
            norm_s = 0.0
        a_s = _agreement(overlap[d], d, ties, norm_s, top_l, bot_l)
        w = a_s * pw[d + 1]
        sum_min += w
        sum_max += w
        sum_ext += w

    # section 2: depths s+1..l, S seen up to s
    for d in range(s, l):
        j = d - s
        if ties == TIES_W:
            unseen_max = float(j + 1)
            unseen_mean = 1.0
            norm_s = float(d + 1)
        else:
            tg = top_l[d]
            bg = bot_l[d]
            r = 1.0 if d == bg else (d - tg + 1) / (bg - tg + 1)
            lo = uniq_before[tg]
            hi = uniq_before[bg + 1]
            cnt = max(0, min(j + 1, hi) - lo)
            unseen_max = (j + 1 - cnt) + cnt * r
            unseen_mean = (lo + (hi - lo) * r) / hi
            norm_s = float(d + 1)
        x = overlap[d]
        sum_min += _agreement(x, d, ties, norm_s, top_l, bot_l) * pw[d + 1]
        sum_max += _agreement(x + unseen_max, d, ties, norm_s, top_l, bot_l) * pw[d + 1]
        x_ext = x + (j + 1) * a_s * unseen_mean
        sum_ext += _agreement(x_ext, d, ties, norm_s, top_l, bot_l) * pw[d + 1]

    # section 3: depths l+1..infinity
    xl = float(n_common)
    harmonic = 0.0
    for d in range(1, l + 1):
        harmonic += pw[d] / d
    sec_min = xl * (math.log(1.0 / (1.0 - p)) - harmonic)
    sec_max = 0.0
    for d in range(l + 1, f + 1):
        sec_max += (2.0 * d - l - s + xl) / d * pw[d]
    sec_max += pw[f + 1] / (1.0 - p)
    sec_ext = (xl + (l - s) * a_s) / l * pw[l + 1] / (1.0 - p)

    c = (1.0 - p) / p
    out[0] = c * (sum_ext + sec_ext)
    out[1] = c * (sum_min + sec_min)
    out[2] = c * (sum_max + sec_max)
    out[3] = out[2] - out[1]


@pjit
def rbo_batch(ids, top, bot, offsets, first, second, p, ties, out):
    """RBO of the pairs (first[k], second[k]) of concatenated rankings; out is (pairs, 4)."""
    for k in prange(first.size):
        a0 = offsets[first[k]]
        a1 = offsets[first[k] + 1]
        b0 = offsets[second[k]]
        b1 = offsets[second[k] + 1]
        rbo_pair(ids[a0:a1], top[a0:a1], bot[a0:a1], ids[b0:b1], top[b0:b1], bot[b0:b1],
                 p[k], ties, out[k])


@pjit
def rbo_prefixes(ids_x, top_x, bot_x, ids_y, top_y, bot_y, depths, p, ties, out, lengths):
    """RBO of the top-``depths[k]`` prefixes (whole tie groups kept); lengths is (D, 2)."""
    for k in prange(depths.size):
        m = depths[k]
        mx = bot_x[m - 1] + 1
        my = bot_y[m - 1] + 1
        lengths[k, 0] = mx
        lengths[k, 1] = my
        rbo_pair(ids_x[:mx], top_x[:mx], bot_x[:mx], ids_y[:my], top_y[:my], bot_y[:my],
                 p, ties, out[k])


# ---------------------------------------------------------------------------- Kendall


@helper
def dense_rank(x, out):
    """0-based dense ranks of x (equal values share a rank)."""
    n = x.size
    if n == 0:
        return
    order = np.argsort(x, kind="mergesort")
    r = 0
    out[order[0]] = 0
    for i in range(1, n):
        if x[order[i]] != x[order[i - 1]]:
            r += 1
        out[order[i]] = r


@pjit
def dense_ranks(x, out):
    for k in prange(x.shape[0]):
        dense_rank(x[k], out[k])


@helper
def _count_inversions(a, buf):
    """Pairs i < j with a[i] > a[j] (bottom-up merge sort; sorts a in place)."""
    n = a.size
    inv = 0
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            k = lo
            while i < mid and j < hi:
                if a[i] <= a[j]:
                    buf[k] = a[i]
                    i += 1
                else:
                    buf[k] = a[j]
                    j += 1
                    inv += mid - i
                k += 1
            while i < mid:
                buf[k] = a[i]
                i += 1
                k += 1
            while j < hi:
                buf[k] = a[j]
                j += 1
                k += 1
        for i in range(n):  # not ``a[:] = buf``: see _kernels.tables._tile_sums
            a[i] = buf[i]
        width *= 2
    return inv


@helper
def _tie_terms(counts):
    """(pairs tied, sum t(t-1)(t-2), sum t(t-1)(2t+5)) over tie-group sizes t."""
    ties = 0
    v0 = 0.0
    v1 = 0.0
    for t in counts:
        if t > 1:
            ties += t * (t - 1) // 2
            v0 += t * (t - 1.0) * (t - 2.0)
            v1 += t * (t - 1.0) * (2.0 * t + 5.0)
    return ties, v0, v1


@helper
def kendall_exact_pvalue(n, c):
    """Two-sided exact p-value of c discordant pairs among n untied items."""
    tot = n * (n - 1) // 2
    c = min(c, tot - c)
    if n <= 2:
        return 1.0
    if c == 0:
        return 2.0 / math.gamma(n + 1.0) if n < 171 else 0.0
    if c == 1:
        return 2.0 / math.gamma(n * 1.0) if n < 172 else 0.0
    if 4 * c == n * (n - 1):
        return 1.0
    # Mahonian numbers: permutations of size j with k inversions, k <= c
    counts = np.zeros(c + 1)
    counts[0] = 1.0
    counts[1] = 1.0
    cum = np.empty(c + 1)
    for j in range(3, n + 1):
        acc = 0.0
        for k in range(c + 1):
            acc += counts[k]
            cum[k] = acc
        for k in range(c + 1):
            counts[k] = cum[k] - (cum[k - j] if k >= j else 0.0)
    total = 0.0
    for k in range(c + 1):
        total += counts[k]
    return min(1.0, 2.0 * total / math.gamma(n + 1.0))


@helper
def _counting_sort(keys, idx, counts, out):
    """Stable sort of the indices ``idx`` by ``keys[idx]``; counts[v] = #keys equal to v."""
    start = np.empty(counts.size, np.int64)
    acc = 0
    for v in range(counts.size):
        start[v] = acc
        acc += counts[v]
    for i in idx:
        v = keys[i]
        out[start[v]] = i
        start[v] += 1


@njit
def kendall_pair(rx, ry, out):
    """Kendall's tau-b of dense ranks rx, ry and its two-sided p-value (scipy 'auto')."""
    n = rx.size
    cx = np.zeros(n + 1, np.int64)
    cy = np.zeros(n + 1, np.int64)
    for i in range(n):
        cx[rx[i]] += 1
        cy[ry[i]] += 1
    # order by (rx, ry): stable counting sort by ry, then by rx (dense ranks lie in 0..n-1)
    by_y = np.empty(n, np.int64)
    order = np.empty(n, np.int64)
    _counting_sort(ry, np.arange(n), cy, by_y)
    _counting_sort(rx, by_y, cx, order)
    seq = np.empty(n, np.int64)
    for i in range(n):
        seq[i] = ry[order[i]]
    # joint ties: runs of equal (rx, ry) in sorted order
    ntie = 0
    run = 1
    for i in range(1, n + 1):
        if i < n and rx[order[i]] == rx[order[i - 1]] and seq[i] == seq[i - 1]:
            run += 1
        else:
            ntie += run * (run - 1) // 2
            run = 1
    xtie, x0, x1 = _tie_terms(cx)
    ytie, y0, y1 = _tie_terms(cy)
    buf = np.empty(n, np.int64)
    dis = _count_inversions(seq, buf)
    tot = n * (n - 1) // 2
    if xtie == tot or ytie == tot:
        out[0] = np.nan
        out[1] = np.nan
        return
    con_minus_dis = tot - xtie - ytie + ntie - 2 * dis
    tau = con_minus_dis / math.sqrt(tot - xtie) / math.sqrt(tot - ytie)
    out[0] = min(1.0, max(-1.0, tau))
    if xtie == 0 and ytie == 0 and (n <= 33 or min(dis, tot - dis) <= 1):
        out[1] = kendall_exact_pvalue(n, tot - dis)
    else:
        m = n * (n - 1.0)
        var = (m * (2.0 * n + 5.0) - x1 - y1) / 18.0 + (2.0 * xtie * ytie) / m
        var += x0 * y0 / (9.0 * m * (n - 2.0))
        z = con_minus_dis / math.sqrt(var)
        out[1] = min(1.0, math.erfc(abs(z) / math.sqrt(2.0)))


@pjit
def kendall_pairs(ranks, first, second, out):
    """tau-b and p-value for the pairs of rows (first[k], second[k]); out is (pairs, 2)."""
    for k in prange(first.size):
        kendall_pair(ranks[first[k]], ranks[second[k]], out[k])


# ---------------------------------------------------------------------------- Friedman


@helper
def _average_ranks(x, out):
    """1-based ranks with ties averaged; returns sum over tie groups of t(t^2 - 1)."""
    n = x.size
    order = np.argsort(x, kind="mergesort")
    ties = 0.0
    i = 0
    while i < n:
        j = i
        while j + 1 < n and x[order[j + 1]] == x[order[i]]:
            j += 1
        r = (i + j) / 2.0 + 1.0
        for k in range(i, j + 1):
            out[order[k]] = r
        t = j - i + 1
        ties += t * (t * t - 1.0)
        i = j + 1
    return ties


@pjit
def friedman_ranks(x, ranks, ties):
    """Average ranks within each row of x (blocks); ties[k] = the row's tie term."""
    for k in prange(x.shape[0]):
        ties[k] = _average_ranks(x[k], ranks[k])


# One-thread twins (same bodies, compiled without ``parallel``) for the small calls: a few
# dozen rankings compile several times faster, and run faster, without a thread pool.
rankings_from_scores_serial = serial(rankings_from_scores)
rbo_batch_serial = serial(rbo_batch)
rbo_prefixes_serial = serial(rbo_prefixes)
dense_ranks_serial = serial(dense_ranks)
kendall_pairs_serial = serial(kendall_pairs)
friedman_ranks_serial = serial(friedman_ranks)
