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

The resampling runs in blocks of `R` replicates whose inner loops run over the block, so
they vectorise (64-bit multiplies of the SplitMix64 draws, masked adds of the sign flips):
replicate b still draws from its own stream (seed, pair, b) and sums its topics in their
order, so every count is the one-replicate-at-a-time count, whatever the threads or blocks.
ZRisk's and GeoRisk's exact evaluation (divisions, erfc) is made only for the flips that a
cheaper evaluation with a proven error bound (`_zg_counts`) does not settle.
"""

from __future__ import annotations

import math

import numpy as np

from fastrisk._kernels._jit import njit, pjit, prange, stopped
from fastrisk._kernels._random import mix64, stream_state
from fastrisk._kernels.numerics import VARIANCE_RTOL, floored_t
from fastrisk._kernels.risk import risk_at, risk_sums, smooth_value, value_moments

#: Columns of the statistics array returned by `battery_batch` (TSMOOTH: TRisk with the smooth
#: value function s(d) of Benham, Moffat & Culpepper 2019).
MEAN, SD, WPLUS, WN, WTIES, WZERO, SPOS, SNEG, ZOBS, GOBS, TSMOOTH = range(11)
N_STATS = 11
#: Rows of the risk array (URisk_alpha and TRisk_alpha of y against x, one column per alpha).
URISK, TRISK = range(2)
#: Columns of the counts array (see `_battery_one`): the shift-to-null bootstrap of d [>=, <=,
#: |.| >=], the sign flips of d [>=, <=], of ZRisk and of GeoRisk [>=, <=], the study's bootstrap
#: (R/test.cpp: replicates centred by their own mean) [>=, |.| >=], the flips' |.| >=, the study's
#: permutation (R's mean, no tolerance) [>=, |.| >=]. The names are the battery registry's slots
#: (`fastrisk._runtime.battery_tests`).
(BOOT_GE, BOOT_LE, BOOT_ABS, PERM_GE, PERM_LE, ZRISK_GE, ZRISK_LE, GEO_GE, GEO_LE, RBOOT_GE, RBOOT_ABS, PERM_ABS,
 RPERM_GE, RPERM_ABS) = range(14)
N_COUNTS = 14
#: The bootstrap tests of URisk_alpha add three columns per alpha after these (`battery_batch`'s
#: ``boot_risk``): [>=, <=, |.| >=] of alpha a at BOOT_RISK_GE + BOOT_RISK_STRIDE a.
BOOT_RISK_GE, BOOT_RISK_LE, BOOT_RISK_ABS = N_COUNTS, N_COUNTS + 1, N_COUNTS + 2
BOOT_RISK_STRIDE = 3


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


_SQRT2 = math.sqrt(2.0)


@njit(error_model="numpy")
def _zpair(S2, A2, N, W):
    """(S_x, ZRisk_x, ZRisk_y) at alpha = 0 from the sums S_y = sum y_i, A_y = sum
    y_i / sqrt(T_i); S_x = N - S_y, A_x = W - A_y, ZRisk_k = A_k / sqrt(S_k / N) - W sqrt(S_k / N)."""
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
    return S1, z1, z2


@njit(error_model="numpy")
def _erfc_arg(z, c):
    """v with Phi(z / c) = erfc(v) / 2."""
    return -(z / c) / _SQRT2


@njit(error_model="numpy")
def _geo(S, c, e):
    """GeoRisk sqrt(S / c Phi(z / c)) of a run with score sum S, given e = erfc(`_erfc_arg`(z, c))."""
    return math.sqrt(max(S, 0.0) / c * 0.5 * e)


@njit(error_model="numpy")
def _zg(S2, A2, N, W, c):
    """ZRisk difference and GeoRisk difference (run y minus run x) at alpha = 0 (`_zpair`,
    `_geo`)."""
    S1, z1, z2 = _zpair(S2, A2, N, W)
    return z2 - z1, _geo(S2, c, math.erfc(_erfc_arg(z2, c))) - _geo(S1, c, math.erfc(_erfc_arg(z1, c)))


#: erf(v) = v sum_n ERF_SERIES[n] v^2n (Maclaurin: 2 / sqrt(pi) (-1)^n / (n! (2n + 1))); up to
#: n = 11 the terms left out are below 1e-10 for |v| <= SERIES_MAX (alternating, decreasing).
#: |ZRisk_k| <= sum_i sqrt(T_i) <= c sqrt(2), so erfc's argument never leaves [-1, 1].
ERF_SERIES = tuple(2.0 / math.sqrt(math.pi) * (-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(12))
SERIES_MAX = 1.0
#: Bound on |erfc(v) - (1 - series)| for |v| <= SERIES_MAX with the rounding of both sides: the
#: series is within ~1e-10 of erf and libm's erfc within an ulp or so of the true value
#: (tests/test_battery.py checks both on a dense grid), so 1e-8 leaves a wide margin. A filter's
#: margin: wider only sends more flips (about 1e-5 of them) to the exact evaluation.
ERFC_MARGIN = 1e-8


@njit(error_model="numpy", inline="always")  # too long for LLVM to inline: the loop would not vectorise
def _erfc_series(v):
    """1 - erf(v) from `ERF_SERIES` (Horner in v^2), within ``ERFC_MARGIN`` of erfc(v)."""
    C = ERF_SERIES
    u = v * v
    p = C[11]
    p = p * u + C[10]
    p = p * u + C[9]
    p = p * u + C[8]
    p = p * u + C[7]
    p = p * u + C[6]
    p = p * u + C[5]
    p = p * u + C[4]
    p = p * u + C[3]
    p = p * u + C[2]
    p = p * u + C[1]
    p = p * u + C[0]
    return 1.0 - v * p


#: Twice float64's unit roundoff: the rounding of one operation, with room.
_U = 2.0 ** -52
#: 1 / erfc(SERIES_MAX) rounded up: erfc(v) >= erfc(1) = 0.1573 for |v| <= SERIES_MAX, so a
#: relative change of erfc is at most this times the absolute one.
_INV_ERFC_MIN = 6.36


@njit(error_model="numpy", inline="always")  # too long for LLVM to inline: the loop would not vectorise
def _z_filter(S, A, ok, iN, W):
    """(z, d): ZRisk of a run with sums S, A as `_zpair` computes it (0 unless ``ok``: N > 0 and
    S > 0) but with S * (1 / N) for S / N, and d = |A / r| + |W r|: the two differ by at most
    4 _U d (S / N to within 2 u, r within 2 u, A / r and W r within 3 u, the difference u |z|)."""
    r = math.sqrt((S if ok else 1.0) * iN)
    a = A / r
    b = W * r
    return (a - b) if ok else 0.0, (abs(a) + abs(b)) if ok else 0.0


@njit(error_model="numpy", inline="always")  # too long for LLVM to inline: the loop would not vectorise
def _g_filter(S, z, dz, kappa, hc):
    """(G, dG, ok): GeoRisk sqrt(S / c Phi(z / c)) of a run with score sum S and ZRisk z (within
    dz of `_zpair`'s) as `_geo` computes it, but with erfc's series at v = z kappa
    (kappa = -1 / (c sqrt 2)) and S * (0.5 / c); |G - `_geo`| <= dG: v is within |kappa| dz +
    2 _U |v| of `_erfc_arg`'s, erfc moves by at most 2 / sqrt(pi) < 1.2 times that, the series
    is within ERFC_MARGIN of erfc, a relative change of erfc (>= erfc(1)) halves under the
    square root, and both square roots carry 3 _U of rounding. ``ok``: |v| (and `_zg`'s v) within
    SERIES_MAX."""
    v = z * kappa
    dv = abs(kappa) * dz * 1.01 + 2.0 * _U * abs(v)
    ok = abs(v) + dv <= SERIES_MAX
    e = _erfc_series(min(max(v, -SERIES_MAX), SERIES_MAX))  # clamped: e > 0 even when not ok
    G = math.sqrt(max(S, 0.0) * hc * e)
    rho = _INV_ERFC_MIN * (ERFC_MARGIN + 1.2 * dv) + 6.0 * _U
    return G, G * rho * 1.01, ok


#: Bootstrap replicates kept per pair for the second pass of boot' (more are drawn twice).
MAX_STORED = 1 << 20


#: Replicates computed side by side. A block's replicates are independent, so their random
#: draws and sums vectorise across replicates (the inner loops run over r), while each
#: replicate's own sum keeps its topic order: the numbers are those of one replicate at a time.
R = 64
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_LOW32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_ONE = np.uint64(1)


@njit
def workspace(c):
    """Buffers of `_battery_one`'s resampling blocks for pairs of c topics: random states,
    the even and odd topic draws of a bootstrap block, sign words of a flip block, sums."""
    h = c // 2 + 1
    return (np.empty(R, np.uint64), np.empty((h, R), np.uint32), np.empty((h, R), np.uint32),
            np.empty(((c + 63) >> 6, R), np.uint64), np.empty((4, R)))


@njit
def _boot_block(base, b0, c, d, st, lo, hi, out):
    """``out[r]`` = sum of bootstrap resample ``b0 + r`` of ``d`` (r < R). Resample b draws
    from the stream ``stream_state(base, b)`` as `fastrisk._kernels.batch.draw_topics` does
    (two topics per 64 random bits, Lemire's multiply-shift on each 32-bit half: draws 2m
    and 2m + 1 in ``lo[m]`` and ``hi[m]``) and is summed as `_boot_sum` always summed it: the
    even draws in one accumulator, the odd ones in another, then their sum. The draws of the
    block are made first (integer work that vectorises over r), then summed."""
    n = st.shape[0]
    cc = np.uint64(c)
    for r in range(n):
        st[r] = stream_state(base, np.uint64(b0 + r))
    for m in range((c + 1) // 2):
        a = lo[m]
        b = hi[m]
        for r in range(n):
            z = st[r] + _GOLDEN
            st[r] = z
            z = mix64(z)
            a[r] = np.uint32(((z & _LOW32) * cc) >> _S32)
            b[r] = np.uint32(((z >> _S32) * cc) >> _S32)
    h = c // 2
    for r in range(n):
        t0 = 0.0
        t1 = 0.0
        for m in range(h):
            t0 += d[lo[m, r]]
            t1 += d[hi[m, r]]
        if c % 2:
            t0 += d[lo[h, r]]
        out[r] = t0 + t1


@njit
def _flip_words(base, b0, exact, W):
    """Sign bits of flips ``b0 .. b0 + R - 1``: ``W[w, r]`` holds the signs of topics
    64 w .. 64 w + 63 of flip b0 + r (bit set: +1), the successive draws of the stream
    ``stream_state(base, b)`` as `fastrisk._kernels.batch.flip_signs` reads them; with
    ``exact``, flip b is pattern b (bit i: topic i)."""
    for r in range(W.shape[1]):
        if exact:
            W[0, r] = np.uint64(b0 + r)
        else:
            z = stream_state(base, np.uint64(b0 + r))
            for w in range(W.shape[0]):
                z = z + _GOLDEN
                W[w, r] = mix64(z)


@njit
def _flip_sums(W, c, d, h, q, ad, ah, aq):
    """``ad[r]``, ``ah[r]``, ``aq[r]`` = sums over topics i, in order, of s_ri d_i, s_ri h_i,
    s_ri q_i, with s_ri = +1 where bit i of flip r is set in ``W`` (see `_flip_words`), else
    -1: the adds of sum(s_i * v_i) one flip at a time, for the R flips of a block at once."""
    n = ad.shape[0]
    for r in range(n):
        ad[r] = 0.0
        ah[r] = 0.0
        aq[r] = 0.0
    for i in range(c):
        mask = _ONE << np.uint64(i & 63)
        row = W[i >> 6]
        di, hi, qi = d[i], h[i], q[i]
        for r in range(n):
            plus = (row[r] & mask) != 0
            ad[r] += di if plus else -di
            ah[r] += hi if plus else -hi
            aq[r] += qi if plus else -qi


@njit(error_model="numpy", inline="always")  # too long for LLVM to inline: the loop would not vectorise
def _zg_sure(S2, A2, N, W, pos, iN, kappa, hc, zlo, zhi, glo, ghi):
    """(sure, zs > zhi, zs < zlo, gs > ghi, gs < glo) of a flip with sums S2, A2: the filter's ZRisk
    and GeoRisk differences (`_z_filter`, `_g_filter`), their bounds widened by the differences'
    own rounding; ``sure``: both lie beyond their bound from every threshold (NaN or inf: not)."""
    S1 = N - S2
    z1, d1 = _z_filter(S1, W - A2, pos & (S1 > 0.0), iN, W)
    z2, d2 = _z_filter(S2, A2, pos & (S2 > 0.0), iN, W)
    zs = z2 - z1
    dzs = 10.0 * _U * (d1 + d2)
    G1, dG1, ok1 = _g_filter(S1, z1, 8.0 * _U * d1, kappa, hc)
    G2, dG2, ok2 = _g_filter(S2, z2, 8.0 * _U * d2, kappa, hc)
    gs = G2 - G1
    dgs = 1.01 * (dG1 + dG2) + 2.0 * _U * (G1 + G2)
    zg, zl, gg, gl = zs > zhi + dzs, zs < zlo - dzs, gs > ghi + dgs, gs < glo - dgs
    return ok1 & ok2 & (zg | zl) & (gg | gl), zg, zl, gg, gl


@njit(error_model="numpy")
def _zg_counts(ah, aq, n, Sm, Am, N, W, c, zup, zdown, gup, gdown):
    """The ZRisk / GeoRisk tail counts of flips r < n (t = ``ah[r]``, q = ``aq[r]``):
    #{zs >= zup}, #{zs <= zdown}, #{gs >= gup}, #{gs <= gdown} of `_zg`, bit for bit.

    A first loop (no call, so it vectorises) evaluates both differences without a division
    but A / r and with erfc's series (`_z_filter`, `_g_filter`): each within a proven bound of
    `_zg`'s value, so a flip whose value lies farther than the bound from every threshold is
    counted from it (`_zg_sure`). The others (within ~1e-15 relative of a ZRisk threshold, ~1e-7
    of a GeoRisk one, erfc's series being within 1e-8: about one flip in 10^5, and exact ties) are
    evaluated exactly (`_zpair`, `_zg`'s erfc) in a second loop."""
    n5 = n6 = n7 = n8 = und = 0
    pos = N > 0.0
    iN = 1.0 / N if pos else 1.0
    kappa = -1.0 / (c * _SQRT2)
    hc = 0.5 / c
    zlo, zhi = min(zup, zdown), max(zup, zdown)
    glo, ghi = min(gup, gdown), max(gup, gdown)
    for r in range(n):
        sure, zg, zl, gg, gl = _zg_sure(Sm + ah[r], Am + aq[r], N, W, pos, iN, kappa, hc, zlo, zhi, glo, ghi)
        n5 += sure & zg
        n6 += sure & zl
        n7 += sure & gg
        n8 += sure & gl
        und += not sure
    if und:
        for r in range(n):
            S2 = Sm + ah[r]
            A2 = Am + aq[r]
            if _zg_sure(S2, A2, N, W, pos, iN, kappa, hc, zlo, zhi, glo, ghi)[0]:
                continue
            _, e1, e2 = _zpair(S2, A2, N, W)
            ze = e2 - e1
            ge = _zg(S2, A2, N, W, c)[1]
            n5 += ze >= zup
            n6 += ze <= zdown
            n7 += ge >= gup
            n8 += ge <= gdown
    return n5, n6, n7, n8


@njit
def _boot_counts(base, B, c, d, alpha, x, st, lo, hi, blk, counts, j):
    """The shift-to-null bootstrap counts of the mean of x_i = d_i + alpha min(d_i, 0) into
    ``counts[j:j + 3]`` ([>=, <=, |.|>=] of sum(x*) - sum(x) against sum(x), the tolerance of
    `_battery_one`'s bootstrap of d), drawing the same resamples (`_boot_block`, stream ``base``)."""
    total = 0.0
    scale = 0.0
    for i in range(c):
        v = d[i] + alpha * min(d[i], 0.0)
        x[i] = v
        total += v
        scale += abs(v)
    tol = 1e-12 * scale
    up = total - tol
    down = total + tol
    far = abs(total) - tol
    n0 = n1 = n2 = 0
    for b0 in range(0, B, R):
        _boot_block(base, b0, c, x, st, lo, hi, blk)
        n = min(R, B - b0)
        for r in range(n):
            u = blk[r] - total
            n0 += u >= up
            n1 += u <= down
            n2 += abs(u) >= far
    counts[j], counts[j + 1], counts[j + 2] = n0, n1, n2


@njit
def pair_prep(x, y, min_diff, buf_d, buf_h, buf_q):
    """The sums of a pair (x, y) that every test of `_battery_one` starts from: d = y - x into
    ``buf_d``, h = d / 2 into ``buf_h`` and q_i = h_i / sqrt(T_i) (T_i = x_i + y_i; 0 where
    T_i = 0) into ``buf_q``; returns (sum d, sum |d|, N = sum T, W = sum sqrt(T_i),
    A_m = sum (T_i / 2) / sqrt(T_i), A_y = sum y_i / sqrt(T_i), #(d > min_diff), #(d < -min_diff)),
    every sum in topic order."""
    c = x.shape[0]
    total = 0.0
    scale = 0.0
    N = 0.0
    W = 0.0
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
    return total, scale, N, W, Am, A2, npos, nneg


@njit
def _battery_one(x, y, seed, k, B, exact, min_diff, alphas_risk, zg, stats, risk, counts, buf_d, buf_v, buf_p,
                 buf_o, buf_h, buf_q, buf_r, ws, xmean, boot_risk, zero, boot=True, perm=True):
    """Every statistic of the battery for one pair of runs (see the module docstring).

    counts: [boot >=, boot <=, boot |.|>=, perm >=, perm <=, zrisk >=, zrisk <=, geo >=, geo <=,
    boot' >=, boot' |.|>=, perm |.|>=, perm' >=, perm' |.|>=] (the ZRisk/GeoRisk flips only
    when ``zg``). boot' is the bootstrap of Urbano et al.'s ``R/test.cpp``
    (``testCpp_bootstrap``): the replicate means are centred by their own mean (not by the
    observed one) before the comparison. perm' (only when ``xmean`` is not NaN) is their
    ``testCpp_permutation``: the flipped mean summed in topic order in double precision and
    compared with R's mean of d (``xmean``) with no tolerance, so on lattice-valued
    differences (P@10) a flip equal to the observed mean counts or not as rounding falls.

    With ``boot_risk``, columns N_COUNTS + 3 a .. + 2 hold [>=, <=, |.|>=] of the shift-to-null
    bootstrap of URisk at ``alphas_risk[a]``: the bootstrap above (same resampled topics, same
    `_boot_block`) applied to x_i = d_i + alpha min(d_i, 0) instead of d_i, as
    `fastrisk.bootstrap` (``test="shift"``) tests URisk_alpha = 0. ``zero``: c zeros (read only).
    ``boot`` / ``perm`` False: the bootstrap of d / the sign flips are skipped (their counts 0).
    """
    c = x.shape[0]
    total, scale, N, W, Am, A2, npos, nneg = pair_prep(x, y, min_diff, buf_d, buf_h, buf_q)
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
            risk[URISK, a] = m
            _, risk[TRISK, a] = floored_t(m, se, c, VARIANCE_RTOL)
    # TRisk with the smooth value function: the moments of s(d_i) (`value_moments`, as every value path)
    for i in range(c):
        buf_v[i] = smooth_value(buf_d[i])
    m, se, _ = value_moments(buf_v, zero)
    _, stats[TSMOOTH] = floored_t(m, se, c, VARIANCE_RTOL)
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
    st, lo, hi, words, f = ws
    blk, ax, ah, aq = f[0], f[1], f[2], f[3]
    # bootstrap: resample the centred differences d - mean; compare the replicate sum with obs
    stored = B <= buf_r.shape[0]
    base = stream_state(seed, np.uint64(2 * k))  # replicate b: stream (this, b), tag 0
    up = total - tol
    down = total + tol
    far = abs(total) - tol
    rbar = 0.0
    n0 = n1 = n2 = 0
    for b0 in range(0, B if boot else 0, R):
        _boot_block(base, b0, c, buf_d, st, lo, hi, blk)
        n = min(R, B - b0)
        for r in range(n):
            blk[r] -= total  # sum(d[idx]) - c * mean
            rbar += blk[r]
        for r in range(n):
            n0 += blk[r] >= up
            n1 += blk[r] <= down
            n2 += abs(blk[r]) >= far
        if stored:  # element loops: a slice copy compiles numba's shape-error formatting
            for r in range(n):
                buf_r[b0 + r] = blk[r]
    rbar /= B
    n9 = n10 = 0
    for b0 in range(0, B if boot else 0, R):  # boot': the replicates centred by their own mean (drawn again if not stored)
        n = min(R, B - b0)
        if stored:
            for r in range(n):
                blk[r] = buf_r[b0 + r]
        else:
            _boot_block(base, b0, c, buf_d, st, lo, hi, blk)
            for r in range(n):
                blk[r] -= total
        for r in range(n):
            u = blk[r] - rbar
            n9 += u >= up
            n10 += abs(u) >= far
    counts[BOOT_GE], counts[BOOT_LE], counts[BOOT_ABS], counts[RBOOT_GE], counts[RBOOT_ABS] = n0, n1, n2, n9, n10
    if boot_risk:
        for a in range(alphas_risk.shape[0]):
            _boot_counts(base, B, c, buf_d, alphas_risk[a], buf_v, st, lo, hi, blk, counts,
                         BOOT_RISK_GE + BOOT_RISK_STRIDE * a)
    # sign flips: the statistic t = sum(s_i h_i), the study's flipped sum of d, and the
    # ZRisk/GeoRisk sums of the flipped pair
    n_perm = ((1 << c) if exact else B) if perm else 0
    hobs = 0.5 * total
    up = hobs - tol
    down = hobs + tol
    far = abs(hobs) - tol
    raw = xmean == xmean
    xfar = abs(xmean)
    zup = zobs - tol_zg
    zdown = zobs + tol_zg
    gup = gobs - tol_zg
    gdown = gobs + tol_zg
    n3 = n4 = n5 = n6 = n7 = n8 = n11 = n12 = n13 = 0
    base = stream_state(seed, np.uint64(2 * k + 1))  # tag 1
    for b0 in range(0, n_perm, R):
        _flip_words(base, b0, exact, words)
        _flip_sums(words, c, buf_d, buf_h, buf_q, ax, ah, aq)
        n = min(R, n_perm - b0)
        for r in range(n):
            t = ah[r]
            n3 += t >= up
            n4 += t <= down
            n11 += abs(t) >= far
        if raw:
            for r in range(n):
                xb = ax[r] / c
                n12 += xb >= xmean
                n13 += abs(xb) >= xfar
        if zg:
            z5, z6, z7, z8 = _zg_counts(ah, aq, n, Sm, Am, N, W, c, zup, zdown, gup, gdown)
            n5 += z5
            n6 += z6
            n7 += z7
            n8 += z8
    counts[PERM_GE], counts[PERM_LE], counts[PERM_ABS], counts[RPERM_GE], counts[RPERM_ABS] = n3, n4, n11, n12, n13
    counts[ZRISK_GE], counts[ZRISK_LE], counts[GEO_GE], counts[GEO_LE] = n5, n6, n7, n8


@pjit
def battery_batch(V, seed, keys, B, exact, min_diff, alphas_risk, zg, chunk, xmean, boot_risk, stop, boot=True,
                  perm=True):
    """The battery over K pairs V (K, 2, c); pair k draws from the streams of key ``keys[k]``.
    ``xmean``: R's mean of each pair's d for the perm' counts (an empty array: none).
    ``boot_risk``: also the bootstrap tests of URisk at each of ``alphas_risk``; ``boot``,
    ``perm``: the bootstrap of d, the sign flips (False: skipped, counts 0).

    Returns stats (K, N_STATS), risk (K, 2, A) (URisk and TRisk of y against x at each of
    ``alphas_risk``) and counts (K, N_COUNTS) (see `_battery_one`).
    ``chunk`` collections share one set of buffers (a scheduling unit; results do not depend on it).
    Once ``stop[0]`` is set (Ctrl-C, `fastrisk._kernels._interrupt`) the remaining pairs are
    skipped; the caller discards the partial results.
    """
    K = V.shape[0]
    c = V.shape[2]
    A = alphas_risk.shape[0]
    stats = np.empty((K, N_STATS))
    risk = np.empty((K, 2, A))
    counts = np.empty((K, N_COUNTS + (BOOT_RISK_STRIDE * A if boot_risk else 0)), np.int64)
    n_chunks = (K + chunk - 1) // chunk
    raw = xmean.shape[0] > 0
    for q in prange(n_chunks):  # buffers once per chunk of collections, not per collection
        buf_d = np.empty(c)
        buf_v = np.empty(c)
        buf_p = np.empty(c, np.bool_)
        buf_o = np.empty(c, np.int64)
        buf_h = np.empty(c)
        buf_q = np.empty(c)
        buf_r = np.empty(max(min(B, MAX_STORED), 1))
        ws = workspace(c)
        zero = np.zeros(c)
        for k in range(q * chunk, min(K, (q + 1) * chunk)):
            if stopped(stop):
                break
            _battery_one(V[k, 0], V[k, 1], seed, keys[k], B, exact, min_diff, alphas_risk, zg, stats[k], risk[k],
                         counts[k], buf_d, buf_v, buf_p, buf_o, buf_h, buf_q, buf_r, ws,
                         xmean[k] if raw else np.nan, boot_risk, zero, boot, perm)
    return stats, risk, counts


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


@njit
def rank_sign_stats(D, out):
    """The Wilcoxon and sign statistics of every row of differences ``D`` (R, c) into ``out``
    (R, `N_STATS`): W+ (average ranks), the number of non-zero differences, the tie term
    sum(t^3 - t) and the number of zeros (`_wilcoxon`), and the counts of d > 0 and d < 0; the
    other columns are left as they are. A NaN row gives NaN statistics."""
    R, c = D.shape
    vals = np.empty(c)
    pos = np.empty(c, dtype=np.bool_)
    order = np.empty(c, dtype=np.int64)
    for r in range(R):
        d = D[r]
        bad = False
        for i in range(c):
            if d[i] != d[i]:
                bad = True
        if bad:
            for j in (WPLUS, WN, WTIES, WZERO, SPOS, SNEG):
                out[r, j] = np.nan
            continue
        w, n, ties, nz = _wilcoxon(d, vals, pos, order)
        above = 0
        below = 0
        for i in range(c):
            above += d[i] > 0.0
            below += d[i] < 0.0
        out[r, WPLUS] = w
        out[r, WN] = n
        out[r, WTIES] = ties
        out[r, WZERO] = nz
        out[r, SPOS] = above
        out[r, SNEG] = below
