"""All-baseline table kernels (Dinçer, Ounis & Macdonald, ECIR 2014): URisk/TRisk of every system against every other.

With d = r - b, n = min(d, 0) and p = max(d, 0), the risk-reward score at alpha is
x = d + alpha * n, so

    sum x   = sum d   + alpha * sum n
    sum x^2 = sum d^2 + (2 alpha + alpha^2) * sum n^2      (since d * n = n^2)

with sum d = sum n + sum p and sum d^2 = sum n^2 + sum p^2. Only four sums per unordered pair
need a pass over topics, once for all alphas, and only for the upper triangle a < b: for
the swapped pair n' = -p and p' = -n exactly, so its sums are the same numbers (negated), and
two identical systems get bit-identical rows. The pass is blocked: tiles of ``block`` x
``block`` system pairs, topics in chunks of ``topic_block`` so the chunk of the (topics x
systems) transposed matrix stays in cache; the innermost loop runs over contiguous baselines
and vectorises without fastmath (no reduction is reassociated: every pair's sums are
accumulated over topics in order).
"""

from __future__ import annotations

import math

import numpy as np

from fastrisk._kernels._jit import helper, pjit, prange, serial, stopped
from fastrisk._kernels.agreement import ranking_from_scores
from fastrisk._kernels.risk import _value  # the value kernels' value function (see with_value)

EPS = 2.220446049250313e-16  # float64 machine epsilon


@helper
def _tile_sums(VT, a0, a1, b0, b1, topic_block, sn, sn2, sp, sp2, stop):
    """Sums of n, n^2, p, p^2 of every pair (a, b), a in [a0, a1), b in [b0, b1): one tile.

    Topics are taken four at a time and added to the accumulators as ((t0 + t1) + (t2 + t3)),
    which quarters the accumulator traffic. The grouping is fixed by the topic index alone,
    so a pair and its mirror (where n and p swap roles, negated) give exactly negated sums.
    On a diagonal tile (a0 == b0) only the pairs a < b are computed. ``stop[0]`` set
    (Ctrl-C) ends the tile at the next block of topics.
    """
    c = VT.shape[0]
    na = a1 - a0
    nb = b1 - b0
    acc_n = np.zeros((na, nb))
    acc_n2 = np.zeros((na, nb))
    acc_p = np.zeros((na, nb))
    acc_p2 = np.zeros((na, nb))
    for i0 in range(0, c, topic_block):
        if stopped(stop):
            break
        i1 = min(i0 + topic_block, c)
        for q in range(na):
            a = a0 + q
            j0 = q + 1 if a0 == b0 else 0
            m = nb - j0
            an = acc_n[q, j0:]
            an2 = acc_n2[q, j0:]
            ap = acc_p[q, j0:]
            ap2 = acc_p2[q, j0:]
            bs = b0 + j0
            i = i0
            while i + 4 <= i1:
                x0 = VT[i, a]
                x1 = VT[i + 1, a]
                x2 = VT[i + 2, a]
                x3 = VT[i + 3, a]
                r0 = VT[i, bs:b1]
                r1 = VT[i + 1, bs:b1]
                r2 = VT[i + 2, bs:b1]
                r3 = VT[i + 3, bs:b1]
                for j in range(m):
                    d0 = x0 - r0[j]
                    d1 = x1 - r1[j]
                    d2 = x2 - r2[j]
                    d3 = x3 - r3[j]
                    n0 = d0 if d0 < 0.0 else 0.0
                    n1 = d1 if d1 < 0.0 else 0.0
                    n2 = d2 if d2 < 0.0 else 0.0
                    n3 = d3 if d3 < 0.0 else 0.0
                    p0 = d0 - n0
                    p1 = d1 - n1
                    p2 = d2 - n2
                    p3 = d3 - n3
                    an[j] += (n0 + n1) + (n2 + n3)
                    an2[j] += (n0 * n0 + n1 * n1) + (n2 * n2 + n3 * n3)
                    ap[j] += (p0 + p1) + (p2 + p3)
                    ap2[j] += (p0 * p0 + p1 * p1) + (p2 * p2 + p3 * p3)
                i += 4
            while i < i1:
                x0 = VT[i, a]
                r0 = VT[i, bs:b1]
                for j in range(m):
                    d0 = x0 - r0[j]
                    n0 = d0 if d0 < 0.0 else 0.0
                    p0 = d0 - n0
                    an[j] += n0
                    an2[j] += n0 * n0
                    ap[j] += p0
                    ap2[j] += p0 * p0
                i += 1
    # element loops, not slice assignments: a 2-D slice assignment compiles numba's shape-mismatch
    # message (string formatting), seconds of first-use compile for a check that cannot fail here
    for q in range(na):
        for j in range(nb):
            sn[a0 + q, b0 + j] = acc_n[q, j]
            sn2[a0 + q, b0 + j] = acc_n2[q, j]
            sp[a0 + q, b0 + j] = acc_p[q, j]
            sp2[a0 + q, b0 + j] = acc_p2[q, j]


@pjit
def pair_sums(VT, block, topic_block, stop):
    """sum d, sum n, sum n^2, sum d^2 (S, S) for every ordered pair (system a, baseline b).

    ``VT`` is the (c, S) transposed score matrix. Tiles on and above the diagonal are
    computed in parallel; pairs below the diagonal are filled from their mirror. Once
    ``stop[0]`` is set (Ctrl-C, `fastrisk._kernels._interrupt`) every tile ends at its next
    block of topics and the partial sums are returned, for the caller to discard.
    """
    S = VT.shape[1]
    nblocks = (S + block - 1) // block
    ntiles = nblocks * (nblocks + 1) // 2
    tiles_a = np.empty(ntiles, dtype=np.int64)
    tiles_b = np.empty(ntiles, dtype=np.int64)
    t = 0
    for i in range(nblocks):
        for j in range(i, nblocks):
            tiles_a[t] = i
            tiles_b[t] = j
            t += 1
    sn = np.zeros((S, S))
    sn2 = np.zeros((S, S))
    sp = np.zeros((S, S))
    sp2 = np.zeros((S, S))
    for t in prange(ntiles):
        a0 = tiles_a[t] * block
        b0 = tiles_b[t] * block
        _tile_sums(VT, a0, min(a0 + block, S), b0, min(b0 + block, S), topic_block, sn, sn2, sp, sp2, stop)
    sd = np.empty((S, S))
    sd2 = np.empty((S, S))
    for a in prange(S):
        for b in range(S):
            if a < b:
                n, n2, p, p2 = sn[a, b], sn2[a, b], sp[a, b], sp2[a, b]
            elif a > b:  # the mirror pair: n' = -p, p' = -n
                n, n2, p, p2 = -sp[b, a], sp2[b, a], -sn[b, a], sn2[b, a]
            else:
                n, n2, p, p2 = 0.0, 0.0, 0.0, 0.0
            sd[a, b] = n + p
            sd2[a, b] = n2 + p2
    # second pass: the lower triangle of sn/sn2 is overwritten only after every read above
    for a in prange(S):
        sn[a, a] = 0.0
        sn2[a, a] = 0.0
        for b in range(a):
            sn[a, b] = -sp[b, a]
            sn2[a, b] = sp2[b, a]
    return sd, sn, sn2, sd2


@pjit
def table_moments(sd, sn, sn2, sd2, alphas, c, refine_ratio):
    """URisk, parametric SE and TRisk (S, B, A) from the pair sums, for every alpha, and
    ``cancelled`` (S, B, A): the cells where sum x^2 > ``refine_ratio`` * sum (x - mean)^2,
    whose one-pass variance lost digits (the caller recomputes them two-pass).

    TRisk is URisk / SE; where SE = 0 it is NaN if URisk = 0 too (a system against itself),
    else an infinity of URisk's sign (a constant difference over topics).
    """
    S = sd.shape[0]
    B = sd.shape[1]
    A = alphas.shape[0]
    urisk = np.empty((S, B, A))
    se = np.empty((S, B, A))
    trisk = np.empty((S, B, A))
    cancelled = np.zeros((S, B, A), dtype=np.bool_)
    for a in prange(S):
        for b in range(B):
            for k in range(A):
                al = alphas[k]
                sx = sd[a, b] + al * sn[a, b]
                sx2 = sd2[a, b] + (2.0 * al + al * al) * sn2[a, b]
                ss = sx2 - sx * sx / c
                cancelled[a, b, k] = refine_ratio * ss <= sx2 and sx2 > 0.0
                # below the rounding floor of the one-pass sums the variance is noise: call it 0
                # (only |TRisk| beyond ~1 / (2 sqrt(eps)) = 3e7 is affected)
                var = ss / (c - 1) if ss > 4.0 * c * EPS * sx2 else 0.0
                u = sx / c
                s = math.sqrt(var / c) if var > 0.0 else 0.0
                urisk[a, b, k] = u
                se[a, b, k] = s
                if s > 0.0:
                    trisk[a, b, k] = u / s
                elif u == 0.0:
                    trisk[a, b, k] = math.nan
                else:
                    trisk[a, b, k] = math.copysign(math.inf, u)
    return urisk, se, trisk, cancelled


@helper
def _rank_desc(values, ids, top, bot, out, ordinal):
    """Ranks of ``values`` (1 = largest); ties averaged unless ``ordinal`` (then by position)."""
    ranking_from_scores(values, ids, top, bot)
    for k in range(values.shape[0]):
        out[ids[k]] = (k + 1.0) if ordinal else (top[k] + bot[k] + 2) / 2.0


@pjit
def baseline_ranks(stat, ordinal, bblock, skip, stop):
    """Rank of every system (axis 1) under every baseline (axis 2) and alpha (axis 0) of
    ``stat`` (A, S, B), in the same layout (the table's final one: no copy to reorder).

    ``skip[b]`` is the system left out of baseline ``b``'s ranking (its rank is NaN and the
    others are ranked among themselves, 1..S-1), or -1 to rank every system. Baselines are
    taken ``bblock`` at a time so the gather reads rows of ``stat`` contiguously. Blocks
    are skipped once ``stop[0]`` is set (Ctrl-C; the caller discards the partial ranks).
    """
    A, S, B = stat.shape
    ranks = np.empty((A, S, B))
    nblocks = (B + bblock - 1) // bblock
    for t in prange(nblocks):
        if stopped(stop):
            continue
        b0 = t * bblock
        nb = min(b0 + bblock, B) - b0
        cols = np.empty((nb, A, S))
        out = np.empty((nb, A, S))
        ids = np.empty(S, dtype=np.int64)
        top = np.empty(S, dtype=np.int64)
        bot = np.empty(S, dtype=np.int64)
        part = np.empty(S)
        part_out = np.empty(S)
        for k in range(A):
            for a in range(S):
                for j in range(nb):
                    cols[j, k, a] = stat[k, a, b0 + j]
        for j in range(nb):
            s = skip[b0 + j]
            for k in range(A):
                if s < 0:
                    _rank_desc(cols[j, k], ids, top, bot, out[j, k], ordinal)
                    continue
                m = 0
                for a in range(S):
                    if a != s:
                        part[m] = cols[j, k, a]
                        m += 1
                _rank_desc(part[:m], ids[:m], top[:m], bot[:m], part_out[:m], ordinal)
                m = 0
                for a in range(S):
                    if a == s:
                        out[j, k, a] = np.nan
                    else:
                        out[j, k, a] = part_out[m]
                        m += 1
        for k in range(A):
            for a in range(S):
                for j in range(nb):
                    ranks[k, a, b0 + j] = out[j, k, a]
    return ranks


@pjit
def value_pair_sums(V, stop):
    """sum x and sum x^2 (S, S) of x_i = _value(V[a, i] - V[b, i]) for every ordered pair.

    For a non-linear value function (the jitted scalar ``_value``, see
    `fastrisk._kernels._jit.with_value`): no antisymmetry to exploit,
    every ordered pair is one pass over the two contiguous rows of ``V`` (S, c). Rows are
    skipped once ``stop[0]`` is set (Ctrl-C; the caller discards the partial sums).
    """
    S, c = V.shape
    sx = np.empty((S, S))
    sx2 = np.empty((S, S))
    for a in prange(S):
        if stopped(stop):
            continue
        for b in range(S):
            acc = 0.0
            acc2 = 0.0
            for i in range(c):
                x = _value(V[a, i] - V[b, i])
                acc += x
                acc2 += x * x
            sx[a, b] = acc
            sx2[a, b] = acc2
    return sx, sx2


# One-thread twins (same bodies, compiled without ``parallel``): tables of a few dozen systems
# use them, which compile several times faster than the parallel drivers on first use.
pair_sums_serial = serial(pair_sums)
table_moments_serial = serial(table_moments)
baseline_ranks_serial = serial(baseline_ranks)
value_pair_sums_serial = serial(value_pair_sums)
