"""The battery's resampling tests with common random numbers: K pairs share one set of draws.

`fastrisk._kernels.battery` gives pair k its own bootstrap resamples and sign flips (streams
keyed by k). Here every pair of a batch uses the draws of one stream key: resample b is a
count vector C_b (C_bi = times topic i is drawn), flip b a sign vector F_b, drawn exactly as
the one-pair kernel draws them for that key (`_boot_block`'s two topics per 64 bits,
`_flip_words`'s bits). Each pair's resampled sums are then the rows of two matrix products,
sum(d*) = C_b . d and sum(s d) = F_b . d, computed in blocks of `NB` resamples (draws made
once per block, then a product over every pair of the batch: the work per replicate drops
from drawing c topics to c multiply-adds shared by nothing but cache lines).

Every sum runs over the topics in their order (i = 0 .. c-1, one rounding per add; F's signs
and the doubling of h = d / 2 are exact), so a pair's counts do not depend on the block, the
tile, the batch or the thread count. The statistics and their tolerances are `_battery_one`'s;
only the summation order of a bootstrap replicate differs (topic order instead of draw
order), and boot''s centre is mean_b(C_b) . d - sum(d), the replicates' own mean.
"""

from __future__ import annotations

import numpy as np

from fastrisk._kernels._jit import njit, pjit, prange, stopped
from fastrisk._kernels._random import mix64, stream_state
from fastrisk._kernels.battery import N_COUNTS, _zg, _zg_counts, pair_prep

#: Resamples per block: a block's draws (c x NB) and a tile's sums stay in cache.
NB = 512
#: Rows (pairs or their transforms) per tile of the product: one parallel work unit.
TILE = 8
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_LOW32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_ONE = np.uint64(1)


@njit
def count_block(base, b0, n, c, C):
    """``C[i, r]`` = times topic i is drawn in bootstrap resample ``b0 + r`` (r < n), the draws
    of `fastrisk._kernels.battery._boot_block` from stream ``stream_state(base, b0 + r)``:
    two topics per 64 bits (Lemire's multiply-shift on each half), the odd one of the last
    pair unused when c is odd."""
    cc = np.uint64(c)
    for i in range(c):
        for r in range(n):
            C[i, r] = 0.0
    for r in range(n):
        st = stream_state(base, np.uint64(b0 + r))
        for m in range((c + 1) // 2):
            st = st + _GOLDEN
            z = mix64(st)
            C[np.int64(((z & _LOW32) * cc) >> _S32), r] += 1.0
            if 2 * m + 1 < c:
                C[np.int64(((z >> _S32) * cc) >> _S32), r] += 1.0


@njit
def sign_block(base, b0, n, c, exact, F):
    """``F[i, r]`` = the sign (+1.0 / -1.0) of topic i in flip ``b0 + r`` (r < n), the bits of
    `fastrisk._kernels.battery._flip_words` (stream ``stream_state(base, b0 + r)``, or pattern
    b0 + r with ``exact``)."""
    for r in range(n):
        z = stream_state(base, np.uint64(b0 + r))
        word = np.uint64(b0 + r)
        for i in range(c):
            if (i & 63) == 0 and not exact:
                z = z + _GOLDEN
                word = mix64(z)
            F[i, r] = 1.0 if (word >> np.uint64(i & 63)) & _ONE else -1.0


@njit
def count_sums(base, B, c):
    """sum_b C_b over the B resamples of stream ``base`` (`count_block`'s draws)."""
    C = np.empty((c, NB))
    out = np.zeros(c)
    for b0 in range(0, B, NB):
        n = min(NB, B - b0)
        count_block(base, b0, n, c, C)
        for i in range(c):
            s = 0.0
            for r in range(n):
                s += C[i, r]
            out[i] += s
    return out


@njit
def _product(M, j0, j1, A, n, out):
    """``out[j - j0, r]`` = sum_i A[i, r] M[j, i] for rows j0 <= j < j1, r < n, each sum in
    topic order. Rows go four at a time so each A[i, r] is loaded once for four multiply-adds."""
    c = M.shape[1]
    for j in range(j1 - j0):
        for r in range(n):
            out[j, r] = 0.0
    j = j0
    while j + 4 <= j1:
        o0, o1, o2, o3 = out[j - j0], out[j - j0 + 1], out[j - j0 + 2], out[j - j0 + 3]
        for i in range(c):
            v0, v1, v2, v3 = M[j, i], M[j + 1, i], M[j + 2, i], M[j + 3, i]
            a = A[i]
            for r in range(n):
                x = a[r]
                o0[r] += x * v0
                o1[r] += x * v1
                o2[r] += x * v2
                o3[r] += x * v3
        j += 4
    while j < j1:
        o = out[j - j0]
        for i in range(c):
            v = M[j, i]
            a = A[i]
            for r in range(n):
                o[r] += a[r] * v
        j += 1


@njit
def _tally_boot(s, n, total, tol, rbar, acc):
    """Add to ``acc`` the shift-to-null bootstrap counts of replicate sums ``s[:n]`` (u = s - total):
    [u >= total - tol, u <= total + tol, |u| >= |total| - tol] and, unless ``rbar`` is NaN,
    boot' (u - rbar >= total - tol, |u - rbar| >= |total| - tol) -- `_battery_one`'s tests."""
    up = total - tol
    down = total + tol
    far = abs(total) - tol
    n0 = n1 = n2 = n9 = n10 = 0
    for r in range(n):
        u = s[r] - total
        n0 += u >= up
        n1 += u <= down
        n2 += abs(u) >= far
    if rbar == rbar:
        for r in range(n):
            u = (s[r] - total) - rbar
            n9 += u >= up
            n10 += abs(u) >= far
    acc[0] += n0
    acc[1] += n1
    acc[2] += n2
    acc[3] += n9
    acc[4] += n10


@pjit
def shared_counts(V, seed, key, B, exact, min_diff, alphas_risk, zg, xmean, boot, perm, boot_risk, stop):
    """The counts array of `fastrisk._kernels.battery.battery_batch` (K, N_COUNTS [+ 3 A]) for the
    K pairs V (K, 2, c), every pair drawing the resamples and flips of stream key ``key``.

    ``boot``: the bootstrap of d (columns 0-2, 9-10); ``perm``: the sign flips (3, 4, 11-13, and
    5-8 with ``zg``); ``boot_risk``: the bootstrap of x = d + alpha min(d, 0) at each of
    ``alphas_risk`` (N_COUNTS + 3 a ..). Columns not asked for stay 0. ``xmean``: R's mean of
    each d for perm' (empty: not counted). Once ``stop[0]`` is set the blocks left are skipped.
    """
    K = V.shape[0]
    c = V.shape[2]
    A = alphas_risk.shape[0]
    counts = np.zeros((K, N_COUNTS + (3 * A if boot_risk else 0)), np.int64)
    raw = xmean.shape[0] > 0
    D = np.empty((K, c))
    Hb = np.empty((K, c))
    Q = np.empty((K, c))
    total = np.empty(K)
    tol = np.empty(K)
    sc = np.empty((K, 8))  # Sm, Am, N, W, zobs, gobs, tol_zg, xmean
    for k in prange(K):
        t, s, N, W, Am, A2, _, _ = pair_prep(V[k, 0], V[k, 1], min_diff, D[k], Hb[k], Q[k])
        total[k] = t
        tol[k] = 1e-12 * s
        zobs, gobs = _zg(0.5 * N + 0.5 * t, A2, N, W, c)
        sc[k, 0], sc[k, 1], sc[k, 2], sc[k, 3] = 0.5 * N, Am, N, W
        sc[k, 4], sc[k, 5], sc[k, 6] = zobs, gobs, 1e-12 * (abs(zobs) + abs(gobs) + 1.0)
        sc[k, 7] = xmean[k] if raw else np.nan
    if B == 0:
        return counts
    # the bootstrap rows: d of each pair (boot), then x = d + alpha min(d, 0) per alpha (boot_risk)
    nd = K if boot else 0
    nx = K * A if boot_risk else 0
    rows = nd + nx
    if rows:
        base = stream_state(seed, np.uint64(2 * key))
        X = np.empty((rows, c))
        xt = np.empty(rows)
        xtol = np.empty(rows)
        rbar = np.full(rows, np.nan)
        dest = np.empty(rows, np.int64)  # first counts column of the row
        for k in range(nd):
            X[k] = D[k]
            xt[k] = total[k]
            xtol[k] = tol[k]
            dest[k] = 0
        for q in range(nx):
            k, a = q // A, q % A
            s = 0.0
            sa = 0.0
            for i in range(c):
                v = D[k, i] + alphas_risk[a] * min(D[k, i], 0.0)
                X[nd + q, i] = v
                s += v
                sa += abs(v)
            xt[nd + q] = s
            xtol[nd + q] = 1e-12 * sa
            dest[nd + q] = N_COUNTS + 3 * a
        if boot:  # boot': the replicates' own mean, mean_b(C_b) . d - sum(d)
            cs = count_sums(base, B, c)
            for k in range(nd):
                s = 0.0
                for i in range(c):
                    s += cs[i] * D[k, i]
                rbar[k] = s / B - total[k]
        n_tiles = (rows + TILE - 1) // TILE
        buf = np.empty((n_tiles, TILE, NB))
        acc = np.zeros((rows, 5), np.int64)
        C = np.empty((c, NB))
        for b0 in range(0, B, NB):
            if stopped(stop):
                break
            n = min(NB, B - b0)
            count_block(base, b0, n, c, C)
            for t in prange(n_tiles):
                j0 = t * TILE
                j1 = min(rows, j0 + TILE)
                _product(X, j0, j1, C, n, buf[t])
                for j in range(j0, j1):
                    _tally_boot(buf[t, j - j0], n, xt[j], xtol[j], rbar[j], acc[j])
        for j in range(rows):
            k = j if j < nd else (j - nd) // A
            c0 = dest[j]
            counts[k, c0], counts[k, c0 + 1], counts[k, c0 + 2] = acc[j, 0], acc[j, 1], acc[j, 2]
            if j < nd:
                counts[k, 9], counts[k, 10] = acc[j, 3], acc[j, 4]
    if perm:
        n_perm = (1 << c) if exact else B
        base = stream_state(seed, np.uint64(2 * key + 1))
        # product rows: d (then q, for ZRisk / GeoRisk) of each pair; a tile holds TILE // m pairs
        m = 2 if zg else 1
        P = np.empty((m * K, c))
        for k in range(K):
            P[m * k] = D[k]
            if zg:
                P[m * k + 1] = Q[k]
        half = TILE // m
        n_tiles = (K + half - 1) // half
        buf = np.empty((n_tiles, TILE, NB))
        acc = np.zeros((K, 9), np.int64)
        F = np.empty((c, NB))
        for b0 in range(0, n_perm, NB):
            if stopped(stop):
                break
            n = min(NB, n_perm - b0)
            sign_block(base, b0, n, c, exact, F)
            for t in prange(n_tiles):
                k0 = t * half
                k1 = min(K, k0 + half)
                _product(P, m * k0, m * k1, F, n, buf[t])
                for k in range(k0, k1):
                    ax = buf[t, m * (k - k0)]
                    aq = buf[t, m * (k - k0) + m - 1]  # q's sums (with zg)
                    hobs = 0.5 * total[k]
                    up = hobs - tol[k]
                    down = hobs + tol[k]
                    far = abs(hobs) - tol[k]
                    xm = sc[k, 7]
                    n3 = n4 = n11 = n12 = n13 = 0
                    for r in range(n):
                        ax[r] *= 0.5  # = sum s_i h_i exactly (h = d / 2)
                        h = ax[r]
                        n3 += h >= up
                        n4 += h <= down
                        n11 += abs(h) >= far
                    if xm == xm:
                        xf = abs(xm)
                        for r in range(n):
                            xb = 2.0 * ax[r] / c
                            n12 += xb >= xm
                            n13 += abs(xb) >= xf
                    acc[k, 0] += n3
                    acc[k, 1] += n4
                    acc[k, 2] += n11
                    acc[k, 3] += n12
                    acc[k, 4] += n13
                    if zg:
                        tz = sc[k, 6]
                        z5, z6, z7, z8 = _zg_counts(ax, aq, n, sc[k, 0], sc[k, 1], sc[k, 2], sc[k, 3], c,
                                                    sc[k, 4] - tz, sc[k, 4] + tz, sc[k, 5] - tz, sc[k, 5] + tz)
                        acc[k, 5] += z5
                        acc[k, 6] += z6
                        acc[k, 7] += z7
                        acc[k, 8] += z8
        for k in range(K):
            counts[k, 3], counts[k, 4], counts[k, 11], counts[k, 12], counts[k, 13] = (
                acc[k, 0], acc[k, 1], acc[k, 2], acc[k, 3], acc[k, 4])
            counts[k, 5], counts[k, 6], counts[k, 7], counts[k, 8] = acc[k, 5], acc[k, 6], acc[k, 7], acc[k, 8]
    return counts
