"""All-baseline table kernels (SPEC §5): URisk/TRisk of every system against every other.

With d = r - b and n = min(d, 0), the risk-reward score at alpha is x = d + alpha * n, so

    sum x   = sum d   + alpha * sum n
    sum x^2 = sum d^2 + (2 alpha + alpha^2) * sum n^2      (since d * n = n^2)

Only sum n, sum n^2 and sum d^2 need a pass over topics, once for all alphas, and only for the
upper triangle a < b: for the swapped pair, n' = -max(d, 0), so sum n' = -(sum d - sum n) and
sum n'^2 = sum d^2 - sum n^2; sum d is a difference of row sums. The pass is blocked: tiles of
``block`` x ``block`` system pairs, topics in chunks of ``topic_block`` so the chunk of the
(topics x systems) transposed matrix stays in cache; the innermost loop runs over contiguous
baselines and vectorises without fastmath (no reduction is reassociated: every pair's sums
are accumulated over topics in order).
"""

from __future__ import annotations

import math

import numpy as np

from fastrisk._kernels._jit import njit, pjit, prange


@njit
def _tile_sums(VT, a0, a1, b0, b1, topic_block, sn, sn2, sd2):
    """Loss-side sums of every pair (a, b) with a in [a0, a1), b in [b0, b1): one tile."""
    c = VT.shape[0]
    na = a1 - a0
    nb = b1 - b0
    acc_n = np.zeros((na, nb))
    acc_n2 = np.zeros((na, nb))
    acc_d2 = np.zeros((na, nb))
    for i0 in range(0, c, topic_block):
        i1 = min(i0 + topic_block, c)
        for p in range(na):
            an = acc_n[p]
            an2 = acc_n2[p]
            ad2 = acc_d2[p]
            for i in range(i0, i1):
                va = VT[i, a0 + p]
                row = VT[i, b0:b1]
                for q in range(nb):
                    d = va - row[q]
                    n = d if d < 0.0 else 0.0
                    an[q] += n
                    an2[q] += n * n
                    ad2[q] += d * d
    sn[a0:a1, b0:b1] = acc_n
    sn2[a0:a1, b0:b1] = acc_n2
    sd2[a0:a1, b0:b1] = acc_d2


@pjit
def upper_pair_sums(VT, block, topic_block):
    """sum n, sum n^2, sum d^2 (S, S) for every pair on or above the diagonal's tiles.

    ``VT`` is the (c, S) transposed score matrix. Entries below the diagonal are left
    unspecified (see :func:`pair_sums`).
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
    sd2 = np.zeros((S, S))
    for t in prange(ntiles):
        a0 = tiles_a[t] * block
        b0 = tiles_b[t] * block
        _tile_sums(VT, a0, min(a0 + block, S), b0, min(b0 + block, S), topic_block, sn, sn2, sd2)
    return sn, sn2, sd2


@pjit
def pair_sums(VT, row_sums, block, topic_block):
    """sum d, sum n, sum n^2, sum d^2 (S, S) for every ordered pair (system a, baseline b)."""
    sn, sn2, sd2 = upper_pair_sums(VT, block, topic_block)
    S = VT.shape[1]
    sd = np.empty((S, S))
    for a in prange(S):
        for b in range(S):
            sd[a, b] = row_sums[a] - row_sums[b]
    for a in prange(S):
        sn[a, a] = 0.0
        sn2[a, a] = 0.0
        sd2[a, a] = 0.0
        sd[a, a] = 0.0
        for b in range(a):
            # pair (a, b) below the diagonal from pair (b, a) above it
            sn[a, b] = -(sd[b, a] - sn[b, a])
            sn2[a, b] = max(sd2[b, a] - sn2[b, a], 0.0)
            sd2[a, b] = sd2[b, a]
    return sd, sn, sn2, sd2


@pjit
def table_moments(sd, sn, sn2, sd2, alphas, c):
    """URisk, parametric SE and TRisk (S, B, A) from the pair sums, for every alpha.

    TRisk is URisk / SE; where SE = 0 it is NaN if URisk = 0 too (a system against itself),
    else an infinity of URisk's sign.
    """
    S = sd.shape[0]
    B = sd.shape[1]
    A = alphas.shape[0]
    urisk = np.empty((S, B, A))
    se = np.empty((S, B, A))
    trisk = np.empty((S, B, A))
    for a in prange(S):
        for b in range(B):
            for k in range(A):
                al = alphas[k]
                sx = sd[a, b] + al * sn[a, b]
                sx2 = sd2[a, b] + (2.0 * al + al * al) * sn2[a, b]
                var = (sx2 - sx * sx / c) / (c - 1)
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
    return urisk, se, trisk


@njit
def _rank_desc(values, order_buf, out, ordinal):
    """Ranks of ``values`` (1 = largest); ties averaged unless ``ordinal`` (then by position)."""
    n = values.shape[0]
    order = np.argsort(-values, kind="mergesort") if ordinal else np.argsort(-values)
    for j in range(n):
        order_buf[j] = order[j]
    j = 0
    while j < n:
        m = j
        while m + 1 < n and values[order_buf[m + 1]] == values[order_buf[j]]:
            m += 1
        for t in range(j, m + 1):
            out[order_buf[t]] = (t + 1.0) if ordinal else (j + m + 2) / 2.0
        j = m + 1


@pjit
def baseline_ranks(stat, ordinal):
    """Rank of every system (axis 0) under every baseline and alpha (axes 1, 2) of ``stat``."""
    S, B, A = stat.shape
    ranks = np.empty((S, B, A))
    for b in prange(B):
        col = np.empty(S)
        buf = np.empty(S, dtype=np.int64)
        out = np.empty(S)
        for k in range(A):
            for a in range(S):
                col[a] = stat[a, b, k]
            _rank_desc(col, buf, out, ordinal)
            for a in range(S):
                ranks[a, b, k] = out[a]
    return ranks
