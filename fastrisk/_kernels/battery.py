"""The paired-test battery, one pass per collection, ``prange`` over K collections.

For a pair of runs (x: row 0, y: row 1) over c topics and d = y - x, one serial unit
computes the sufficient statistics of every test in the battery of Urbano, Lima & Hanjalic
(SIGIR 2019): Student t (mean, sd), Wilcoxon signed-rank (W+ with average ranks, number of
non-zero differences, tie term sum(t^3 - t)), the sign test (counts above +min_diff and
below -min_diff), the shift-to-the-null bootstrap and the sign-flip permutation test of
the mean (tail counts), TRisk at extra alphas, and sign-flip tests of the ZRisk and GeoRisk
differences between the two runs (Dinçer, Macdonald & Ounis 2016, alpha = 0, where both
are functions of two linear sums, so a flip costs one extra multiply-add per topic).
p-values are formed from these outside (vectorised, scipy's distributions).
"""

from __future__ import annotations

import math

import numpy as np

from fastrisk._kernels._jit import njit, pjit, prange
from fastrisk._kernels.batch import draw_topics, flip_signs, replicate_state
from fastrisk._kernels.numerics import VARIANCE_RTOL, floored_t
from fastrisk._kernels.risk import risk_at, risk_sums

#: Columns of the statistics array returned by `battery_batch`.
MEAN, SD, WPLUS, WN, WTIES, WZERO, SPOS, SNEG, ZOBS, GOBS = range(10)
N_STATS = 10
#: Columns of the counts array (see `_battery_one`).
N_COUNTS = 14


@njit
def _wilcoxon(d, vals, pos, order):
    """W+ over non-zero |d| with average ranks; returns (W+, n non-zero, sum(t^3 - t), n zero).

    Up to 64 non-zero differences the rank of |d_i| is counted directly,
    rank_i = #{|d_j| < |d_i|} + (#{|d_j| = |d_i|} + 1) / 2, and the tie term is
    sum_i (t_i^2 - 1) = sum over tie groups of (t^3 - t): n^2 branch-free comparisons that
    vectorise, cheaper than a sort at this size. Larger n sort once.
    """
    c = d.shape[0]
    n = 0
    for i in range(c):
        if d[i] != 0.0:
            vals[n] = abs(d[i])
            pos[n] = d[i] > 0.0
            n += 1
    wplus = 0.0
    ties = 0.0
    if n <= 64:
        for i in range(n):
            v = vals[i]
            lt = 0
            eq = 0
            for j in range(n):
                lt += vals[j] < v
                eq += vals[j] == v
            ties += eq * eq - 1
            if pos[i]:
                wplus += lt + 0.5 * (eq + 1)
        return wplus, n, ties, c - n
    srt = np.argsort(vals[:n], kind="mergesort")
    for i in range(n):
        order[i] = srt[i]
    i = 0
    while i < n:
        j = i + 1
        while j < n and vals[order[j]] == vals[order[i]]:
            j += 1
        rank = 0.5 * (i + 1 + j)  # average of ranks i+1 .. j
        t = j - i
        if t > 1:
            ties += t * t * t - t
        for q in range(i, j):
            if pos[order[q]]:
                wplus += rank
        i = j
    return wplus, n, ties, c - n


@njit
def _zg(S2, A2, N, W, c):
    """ZRisk difference and GeoRisk difference (run y minus run x) at alpha = 0 from the
    sums S_y = sum y_i, A_y = sum y_i / sqrt(T_i); S_x = N - S_y, A_x = W - A_y, with
    ZRisk_k = A_k / sqrt(S_k / N) - W sqrt(S_k / N), GeoRisk_k = sqrt(S_k / c Phi(ZRisk_k / c))."""
    S1 = N - S2
    A1 = W - A2
    z1 = 0.0
    z2 = 0.0
    if N > 0.0:
        if S1 > 0.0:
            r1 = math.sqrt(S1 / N)
            z1 = A1 / r1 - W * r1
        if S2 > 0.0:
            r2 = math.sqrt(S2 / N)
            z2 = A2 / r2 - W * r2
    g1 = math.sqrt(max(S1, 0.0) / c * 0.5 * math.erfc(-(z1 / c) / math.sqrt(2.0)))
    g2 = math.sqrt(max(S2, 0.0) / c * 0.5 * math.erfc(-(z2 / c) / math.sqrt(2.0)))
    return z2 - z1, g2 - g1


#: Bootstrap replicates kept per pair for the second pass of boot' (more are drawn twice).
MAX_STORED = 1 << 20


@njit
def _boot_sum(seed, k, b, c, buf_d, buf_i):
    """Sum of one bootstrap resample (replicate b of pair k) of ``buf_d``."""
    draw_topics(replicate_state(seed, k, 0, b), c, buf_i)
    t0 = 0.0  # two accumulators: the adds of a 50-topic sum need not wait on each other
    t1 = 0.0
    j = 0
    while j + 1 < c:
        t0 += buf_d[buf_i[j]]
        t1 += buf_d[buf_i[j + 1]]
        j += 2
    if j < c:
        t0 += buf_d[buf_i[j]]
    return t0 + t1


@njit
def _battery_one(x, y, seed, k, B, exact, min_diff, alphas_risk, zg, stats, trisk, counts, buf_d, buf_v, buf_p,
                 buf_o, buf_i, buf_s, buf_h, buf_q, buf_r, xmean):
    """Every statistic of the battery for one pair of runs (see the module docstring).

    counts: [boot >=, boot <=, boot |.|>=, perm >=, perm <=, zrisk >=, zrisk <=, geo >=, geo <=,
    boot' >=, boot' |.|>=, perm |.|>=, perm' >=, perm' |.|>=] (the ZRisk/GeoRisk flips only
    when ``zg``). boot' is the bootstrap of Urbano et al.'s ``R/test.cpp``
    (``testCpp_bootstrap``): the replicate means are centred by their own mean (not by the
    observed one) before the comparison. perm' (only when ``xmean`` is not NaN) is their
    ``testCpp_permutation``: the flipped mean summed in topic order in double precision and
    compared with R's mean of d (``xmean``) with no tolerance, so on lattice-valued
    differences (P@10) a flip equal to the observed mean counts or not as rounding falls.
    """
    c = x.shape[0]
    total = 0.0
    scale = 0.0
    N = 0.0
    W = 0.0
    Sm = 0.0
    Am = 0.0
    A2 = 0.0
    npos = 0
    nneg = 0
    for i in range(c):
        d = y[i] - x[i]
        buf_d[i] = d
        total += d
        scale += abs(d)
        npos += d > min_diff
        nneg += d < -min_diff
        T = x[i] + y[i]
        N += T
        h = 0.5 * d
        buf_h[i] = h
        if T > 0.0:
            rt = math.sqrt(T)
            W += rt
            buf_q[i] = h / rt
            Am += 0.5 * T / rt
            A2 += y[i] / rt
        else:
            buf_q[i] = 0.0
    mean = total / c
    ss = 0.0
    for i in range(c):
        e = buf_d[i] - mean
        ss += e * e
    stats[MEAN] = mean
    stats[SD] = math.sqrt(ss / (c - 1))
    wplus, n, ties, nzero = _wilcoxon(buf_d, buf_v, buf_p, buf_o)
    stats[WPLUS] = wplus
    stats[WN] = n
    stats[WTIES] = ties
    stats[WZERO] = nzero
    stats[SPOS] = npos
    stats[SNEG] = nneg
    # TRisk of y against x at each extra alpha, from the one risk core (_kernels/risk.risk_sums)
    if alphas_risk.shape[0]:
        gains, losses, s_ee, s_ef, s_ff, s_e, s_f = risk_sums(y, x)
        for a in range(alphas_risk.shape[0]):
            m, se, _ = risk_at(alphas_risk[a], c, gains, losses, s_ee, s_ef, s_ff, s_e, s_f)
            _, trisk[a] = floored_t(m, se, c, VARIANCE_RTOL)
    Sm = 0.5 * N
    zobs, gobs = _zg(Sm + 0.5 * total, A2, N, W, c)
    stats[ZOBS] = zobs
    stats[GOBS] = gobs
    for j in range(counts.shape[0]):
        counts[j] = 0
    if B == 0:
        return
    tol = 1e-12 * scale
    tol_zg = 1e-12 * (abs(zobs) + abs(gobs) + 1.0)
    # bootstrap: resample the centred differences d - mean; compare the replicate sum with obs
    stored = B <= buf_r.shape[0]
    rbar = 0.0
    for b in range(B):
        dstar = _boot_sum(seed, k, b, c, buf_d, buf_i) - total  # sum(d[idx]) - c * mean
        if stored:
            buf_r[b] = dstar
        rbar += dstar
        if dstar >= total - tol:
            counts[0] += 1
        if dstar <= total + tol:
            counts[1] += 1
        if abs(dstar) >= abs(total) - tol:
            counts[2] += 1
    rbar /= B
    for b in range(B):  # boot': the replicates centred by their own mean (drawn again if not stored)
        r = (buf_r[b] if stored else _boot_sum(seed, k, b, c, buf_d, buf_i) - total) - rbar
        if r >= total - tol:
            counts[9] += 1
        if abs(r) >= abs(total) - tol:
            counts[10] += 1
    # sign flips: the statistic sum(s_i h_i), and the ZRisk/GeoRisk sums of the flipped pair
    n_perm = (1 << c) if exact else B
    hobs = 0.5 * total
    for b in range(n_perm):
        if exact:
            for i in range(c):
                buf_s[i] = 1.0 if (b >> i) & 1 else -1.0
        else:
            flip_signs(replicate_state(seed, k, 1, b), c, buf_s)
        t = 0.0
        q = 0.0
        for i in range(c):
            t += buf_s[i] * buf_h[i]
            q += buf_s[i] * buf_q[i]
        if t >= hobs - tol:
            counts[3] += 1
        if t <= hobs + tol:
            counts[4] += 1
        if abs(t) >= abs(hobs) - tol:
            counts[11] += 1
        if xmean == xmean:
            xb = 0.0
            for i in range(c):
                xb += buf_s[i] * buf_d[i]
            xb /= c
            if xb >= xmean:
                counts[12] += 1
            if abs(xb) >= abs(xmean):
                counts[13] += 1
        if zg:
            zs, gs = _zg(Sm + t, Am + q, N, W, c)
            if zs >= zobs - tol_zg:
                counts[5] += 1
            if zs <= zobs + tol_zg:
                counts[6] += 1
            if gs >= gobs - tol_zg:
                counts[7] += 1
            if gs <= gobs + tol_zg:
                counts[8] += 1


@pjit
def battery_batch(V, seed, keys, B, exact, min_diff, alphas_risk, zg, chunk, xmean):
    """The battery over K pairs V (K, 2, c); pair k draws from the streams of key ``keys[k]``.
    ``xmean``: R's mean of each pair's d for the perm' counts (an empty array: none).

    Returns stats (K, N_STATS), trisk (K, A) and counts (K, N_COUNTS) (see `_battery_one`).
    ``chunk`` collections share one set of buffers (a scheduling unit; results do not depend on it).
    """
    K = V.shape[0]
    c = V.shape[2]
    A = alphas_risk.shape[0]
    stats = np.empty((K, N_STATS))
    trisk = np.empty((K, A))
    counts = np.empty((K, N_COUNTS), np.int64)
    n_chunks = (K + chunk - 1) // chunk
    raw = xmean.shape[0] > 0
    for q in prange(n_chunks):  # buffers once per chunk of collections, not per collection
        buf_d = np.empty(c)
        buf_v = np.empty(c)
        buf_p = np.empty(c, np.bool_)
        buf_o = np.empty(c, np.int64)
        buf_i = np.empty(c, np.int64)
        buf_s = np.empty(c)
        buf_h = np.empty(c)
        buf_q = np.empty(c)
        buf_r = np.empty(max(min(B, MAX_STORED), 1))
        for k in range(q * chunk, min(K, (q + 1) * chunk)):
            _battery_one(V[k, 0], V[k, 1], seed, keys[k], B, exact, min_diff, alphas_risk, zg, stats[k], trisk[k],
                         counts[k], buf_d, buf_v, buf_p, buf_o, buf_i, buf_s, buf_h, buf_q, buf_r,
                         xmean[k] if raw else np.nan)
    return stats, trisk, counts


@njit
def wilcoxon_cdf_table(n_max):
    """P(W+ <= w) for n = 0..n_max non-zero untied differences (rows), w = 0..n(n+1)/2.

    Counts of subsets of {1..n} with sum w by the usual recursion; exact in float64 up to
    n = 50 (2^50 < 2^53). Unused cells of a row are 1."""
    top = n_max * (n_max + 1) // 2
    out = np.ones((n_max + 1, top + 1))
    counts = np.zeros(top + 1)
    counts[0] = 1.0
    for n in range(1, n_max + 1):
        for w in range(n * (n + 1) // 2, n - 1, -1):
            counts[w] += counts[w - n]
        total = 2.0 ** n
        acc = 0.0
        for w in range(n * (n + 1) // 2 + 1):
            acc += counts[w]
            out[n, w] = acc / total
    return out
