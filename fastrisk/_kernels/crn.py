"""The battery's resampling tests with common random numbers: K pairs share one set of draws.

`fastrisk._kernels.battery` gives pair k its own bootstrap resamples and sign flips (streams
keyed by k). Here every pair of a batch uses the draws of one stream key: resample b is a
count vector C_b (C_bi = times topic i is drawn), flip b a sign vector F_b, drawn exactly as
the one-pair kernel draws them for that key (`_boot_block`'s two topics per 64 bits,
`_flip_words`'s bits). Each pair's resampled sums are then the rows of two matrix products,
sum(d*) = C_b . d and sum(s d) = F_b . d, computed in blocks of `block_size` (c) resamples (draws made
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
from fastrisk._kernels.battery import _GOLDEN, _LOW32, _ONE, _S32, N_COUNTS, _zg, _zg_counts, pair_prep

#: Bytes of a block's draws and a tile's sums ((c + TILE) x nb doubles), kept in a core's L2
#: cache: nb = `block_size` (c) resamples a block. The blocking decides no number (integer counts;
#: each replicate's sum runs over the topics in order whatever its block).
BLOCK_BYTES = 13 << 14


@njit
def block_size(c):
    """Resamples per block for c topics: BLOCK_BYTES / (8 (c + TILE)), a multiple of 64 in [64, 512]."""
    return max(64, min(512, (BLOCK_BYTES // (8 * (c + TILE))) // 64 * 64))
#: Rows (pairs or their transforms) per tile of the product: a work unit draws its blocks once
#: for TILE rows (c / 2 draws a resample against c multiply-adds a row).
TILE = 32
#: Parallel work units aimed at (tiles x ranges of blocks): one parallel region per call, so a
#: busy machine's descheduled thread delays it once, not at every block.
UNITS = 32


@njit
def stream_base(seed, key, tag):
    """The base stream of key ``key`` for the bootstrap (``tag`` 0) or the sign flips (1), as
    `fastrisk._kernels.battery._battery_one` derives it for pair key ``key``."""
    return stream_state(np.uint64(seed), np.uint64(2 * key + tag))


@njit
def count_block(base, b0, n, c, C):
    """``C[i, r]`` = times topic i is drawn in bootstrap resample ``b0 + r`` (r < n), the draws
    of `fastrisk._kernels.battery._boot_block` from stream ``stream_state(base, b0 + r)``:
    two topics per 64 bits (Lemire's multiply-shift on each half), the odd one of the last
    pair unused when c is odd. The random words of a pair of draws are made for the whole
    block at once (the loop over r vectorises, as in `_boot_block`), then counted."""
    cc = np.uint64(c)
    for i in range(c):
        for r in range(n):
            C[i, r] = 0.0
    st = np.empty(n, np.uint64)
    lo = np.empty(n, np.int64)
    hi = np.empty(n, np.int64)
    for r in range(n):
        st[r] = stream_state(base, np.uint64(b0 + r))
    for m in range((c + 1) // 2):
        for r in range(n):
            z = st[r] + _GOLDEN
            st[r] = z
            z = mix64(z)
            lo[r] = np.int64(((z & _LOW32) * cc) >> _S32)
            hi[r] = np.int64(((z >> _S32) * cc) >> _S32)
        for r in range(n):
            C[lo[r], r] += 1.0
        if 2 * m + 1 < c:
            for r in range(n):
                C[hi[r], r] += 1.0


@njit
def sign_block(base, b0, n, c, exact, F):
    """``F[i, r]`` = the sign (+1.0 / -1.0) of topic i in flip ``b0 + r`` (r < n), the bits of
    `fastrisk._kernels.battery._flip_words` (stream ``stream_state(base, b0 + r)``, or pattern
    b0 + r with ``exact``): the block's words of topics 64 w .. 64 w + 63 made at once, then
    spread a topic at a time (both loops over r vectorise)."""
    st = np.empty(n, np.uint64)
    word = np.empty(n, np.uint64)
    for r in range(n):
        st[r] = stream_state(base, np.uint64(b0 + r))
    for w in range((c + 63) >> 6):
        for r in range(n):
            z = st[r] + _GOLDEN
            st[r] = z
            word[r] = np.uint64(b0 + r) if exact else mix64(z)
        for i in range(64 * w, min(c, 64 * w + 64)):
            f = F[i]
            sh = np.uint64(i & 63)
            for r in range(n):
                f[r] = 1.0 if (word[r] >> sh) & _ONE else -1.0


@pjit
def count_sums(base, B, c):
    """sum_b C_b over the B resamples of stream ``base`` (`count_block`'s draws), in ranges of
    blocks summed after (integer-valued: exact in any order)."""
    nb = block_size(c)
    blocks = (B + nb - 1) // nb
    split = _layout(1, 1, blocks)[1]
    part = np.zeros((split, c))
    for s in prange(split):
        C = np.empty((c, nb))
        for blk in range(s * blocks // split, (s + 1) * blocks // split):
            b0 = blk * nb
            n = min(nb, B - b0)
            count_block(base, b0, n, c, C)
            for i in range(c):
                t = 0.0
                for r in range(n):
                    t += C[i, r]
                part[s, i] += t
    out = np.zeros(c)
    for s in range(split):
        for i in range(c):
            out[i] += part[s, i]
    return out


@njit
def _product(M, j0, j1, A, n, out):
    """``out[j - j0, r]`` = sum_i A[i, r] M[j, i] for rows j0 <= j < j1, r < n, each sum in
    topic order (i = 0 .. c-1, a product rounded then added: no FMA, no reassociation).

    Vectorised across the replicates r (contiguous in A and out): four rows share each load
    of A[i, r], and four topics go through one pass over r, so an output element is loaded
    and stored once per four topics, (((o + x_i w_i) + x_{i+1} w_{i+1}) + ...) -- the same
    additions in the same order as one topic a pass. On one core of the development machine
    (AMD EPYC Zen 4) this runs at 0.043 ns a multiply-add at 50 topics, against 0.038 ns for
    OpenBLAS's ``dgemm`` on the same shapes (`benchmarks/bench_simulate.py`, ``crn-product``);
    four topics and four rows a pass measured faster than eight topics and two rows."""
    c = M.shape[1]
    for j in range(j1 - j0):
        for r in range(n):
            out[j, r] = 0.0
    j = j0
    while j + 4 <= j1:
        o0, o1, o2, o3 = out[j - j0], out[j - j0 + 1], out[j - j0 + 2], out[j - j0 + 3]
        i = 0
        while i + 4 <= c:
            a0, a1, a2, a3 = A[i], A[i + 1], A[i + 2], A[i + 3]
            w00, w01, w02, w03 = M[j, i], M[j, i + 1], M[j, i + 2], M[j, i + 3]
            w10, w11, w12, w13 = M[j + 1, i], M[j + 1, i + 1], M[j + 1, i + 2], M[j + 1, i + 3]
            w20, w21, w22, w23 = M[j + 2, i], M[j + 2, i + 1], M[j + 2, i + 2], M[j + 2, i + 3]
            w30, w31, w32, w33 = M[j + 3, i], M[j + 3, i + 1], M[j + 3, i + 2], M[j + 3, i + 3]
            for r in range(n):
                x0, x1, x2, x3 = a0[r], a1[r], a2[r], a3[r]
                o0[r] = (((o0[r] + x0 * w00) + x1 * w01) + x2 * w02) + x3 * w03
                o1[r] = (((o1[r] + x0 * w10) + x1 * w11) + x2 * w12) + x3 * w13
                o2[r] = (((o2[r] + x0 * w20) + x1 * w21) + x2 * w22) + x3 * w23
                o3[r] = (((o3[r] + x0 * w30) + x1 * w31) + x2 * w32) + x3 * w33
            i += 4
        while i < c:
            a = A[i]
            v0, v1, v2, v3 = M[j, i], M[j + 1, i], M[j + 2, i], M[j + 3, i]
            for r in range(n):
                x = a[r]
                o0[r] += x * v0
                o1[r] += x * v1
                o2[r] += x * v2
                o3[r] += x * v3
            i += 1
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
def prepare(V, min_diff, xmean):
    """Per pair of V (K, 2, c) (`fastrisk._kernels.battery.pair_prep`): d (K, c), q (K, c),
    sum d (K,), the tolerance 1e-12 sum |d| (K,) and (K, 8) [S_m, A_m, N, W, ZRisk and GeoRisk
    differences observed, their tolerance, ``xmean`` (NaN when empty)]."""
    K = V.shape[0]
    c = V.shape[2]
    raw = xmean.shape[0] > 0
    D = np.empty((K, c))
    Hb = np.empty((K, c))
    Q = np.empty((K, c))
    total = np.empty(K)
    tol = np.empty(K)
    sc = np.empty((K, 8))
    for k in prange(K):
        t, s, N, W, Am, A2, _, _ = pair_prep(V[k, 0], V[k, 1], min_diff, D[k], Hb[k], Q[k])
        total[k] = t
        tol[k] = 1e-12 * s
        zobs, gobs = _zg(0.5 * N + 0.5 * t, A2, N, W, c)
        sc[k, 0], sc[k, 1], sc[k, 2], sc[k, 3] = 0.5 * N, Am, N, W
        sc[k, 4], sc[k, 5], sc[k, 6] = zobs, gobs, 1e-12 * (abs(zobs) + abs(gobs) + 1.0)
        sc[k, 7] = xmean[k] if raw else np.nan
    return D, Q, total, tol, sc


@njit
def boot_rows(D, total, tol, alphas_risk, boot, boot_risk):
    """The rows the bootstrap resamples: d of each pair (with ``boot``), then x = d + alpha
    min(d, 0) of each pair and alpha (``boot_risk``); returns the rows, their sums, their
    tolerances 1e-12 sum |x| and the first counts column of each (0, or N_COUNTS + 3 a)."""
    K, c = D.shape
    A = alphas_risk.shape[0]
    nd = K if boot else 0
    rows = nd + (K * A if boot_risk else 0)
    X = np.empty((rows, c))
    xt = np.empty(rows)
    xtol = np.empty(rows)
    dest = np.zeros(rows, np.int64)
    for k in range(nd):
        X[k] = D[k]
        xt[k] = total[k]
        xtol[k] = tol[k]
    for q in range(rows - nd):
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
    return X, xt, xtol, dest


@njit
def centres(cs, D, total, B):
    """boot''s centre of each pair: mean_b(C_b) . d - sum(d) = (sum_b C_b) . d / B - sum(d), the
    replicates' own mean (``cs`` = `count_sums`), summed in topic order."""
    K, c = D.shape
    out = np.empty(K)
    for k in range(K):
        s = 0.0
        for i in range(c):
            s += cs[i] * D[k, i]
        out[k] = s / B - total[k]
    return out


@njit
def _layout(items, tile, blocks):
    """(tiles, split, per): the parallel work units of ``items`` rows (or pairs) and ``blocks``
    blocks of resamples, about `UNITS` of them: the blocks cut into ``split`` ranges, the items
    into ``tiles`` tiles of ``per``. Ranges of blocks come first, so that a block is drawn once
    for as many items as possible (one tile of all of them once there are `UNITS` blocks; a
    tile is at least ``tile`` items). A function of the sizes only: counts are integer sums, so
    any layout gives the same numbers."""
    split = max(1, min(blocks, UNITS))
    tiles = max(1, min((items + tile - 1) // tile, (UNITS + split - 1) // split))
    per = max(1, (items + tiles - 1) // tiles)
    return (items + per - 1) // per, split, per


@njit
def _sum_units(part, rows, per, split):
    """The counts (rows, q) of the work units' ``part`` (units, per, q): unit u holds rows
    (u // split) per .. + per - 1 over one range of blocks (integer sums: exact in any order)."""
    acc = np.zeros((rows, part.shape[2]), np.int64)
    for u in range(part.shape[0]):
        r0 = (u // split) * per
        for j in range(r0, min(rows, r0 + per)):
            for q in range(part.shape[2]):
                acc[j, q] += part[u, j - r0, q]
    return acc


@pjit
def boot_units(X, xt, xtol, rbar, base, B, c, stop):
    """Bootstrap counts (rows, 5) of `_tally_boot` for every row of ``X``: work units of a tile
    of rows x a range of blocks of `block_size` (c) resamples (`_layout`), each drawing a block
    once (`count_block`) and multiplying it by its rows `TILE` at a time (`_product`); the
    units' integer counts are summed after."""
    rows = X.shape[0]
    nb = block_size(c)
    blocks = (B + nb - 1) // nb
    tiles, split, per = _layout(rows, TILE, blocks)
    part = np.zeros((tiles * split, per, 5), np.int64)
    for u in prange(tiles * split):
        t, s = u // split, u % split
        C = np.empty((c, nb))
        buf = np.empty((TILE, nb))
        for blk in range(s * blocks // split, (s + 1) * blocks // split):
            if stopped(stop):
                break
            b0 = blk * nb
            n = min(nb, B - b0)
            count_block(base, b0, n, c, C)
            for j0 in range(t * per, min(rows, (t + 1) * per), TILE):
                j1 = min(rows, (t + 1) * per, j0 + TILE)
                _product(X, j0, j1, C, n, buf)
                for j in range(j0, j1):
                    _tally_boot(buf[j - j0], n, xt[j], xtol[j], rbar[j], part[u, j - t * per])
    return _sum_units(part, rows, per, split)


@njit
def _tally_flips(ax, aq, n, k, total, tol, sc, zg, c, acc):
    """Add to ``acc`` pair k's sign-flip counts of flips r < n (``ax``: sum s_i d_i, halved here
    to sum s_i h_i exactly; ``aq``: sum s_i q_i): [perm >=, <=, |.|>=, perm' >=, |.|>=, zrisk >=,
    <=, geo >=, <=] -- `_battery_one`'s tests."""
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
    acc[0] += n3
    acc[1] += n4
    acc[2] += n11
    acc[3] += n12
    acc[4] += n13
    if zg:
        tz = sc[k, 6]
        z5, z6, z7, z8 = _zg_counts(ax, aq, n, sc[k, 0], sc[k, 1], sc[k, 2], sc[k, 3], c,
                                    sc[k, 4] - tz, sc[k, 4] + tz, sc[k, 5] - tz, sc[k, 5] + tz)
        acc[5] += z5
        acc[6] += z6
        acc[7] += z7
        acc[8] += z8


@pjit
def flip_units(P, m, total, tol, sc, base, n_perm, exact, zg, c, stop):
    """Sign-flip counts (K, 9) of `_tally_flips` for every pair, rows of ``P`` d (and q with
    ``zg``, m = 2), in units as `boot_units` (a tile holds whole pairs)."""
    K = P.shape[0] // m
    nb = block_size(c)
    blocks = (n_perm + nb - 1) // nb
    tiles, split, per = _layout(K, TILE // m, blocks)
    part = np.zeros((tiles * split, per, 9), np.int64)
    for u in prange(tiles * split):
        t, s = u // split, u % split
        F = np.empty((c, nb))
        buf = np.empty((TILE, nb))
        for blk in range(s * blocks // split, (s + 1) * blocks // split):
            if stopped(stop):
                break
            b0 = blk * nb
            n = min(nb, n_perm - b0)
            sign_block(base, b0, n, c, exact, F)
            for k0 in range(t * per, min(K, (t + 1) * per), TILE // m):
                k1 = min(K, (t + 1) * per, k0 + TILE // m)
                _product(P, m * k0, m * k1, F, n, buf)
                for k in range(k0, k1):
                    _tally_flips(buf[m * (k - k0)], buf[m * (k - k0) + m - 1], n, k, total, tol, sc, zg, c,
                                 part[u, k - t * per])
    return _sum_units(part, K, per, split)


# ------------------------------------------------------------------ float32 products, filtered
#: Largest c max|x| for which a row goes through the float32 products (no overflow, and the
#: error bounds below hold); larger rows, or any non-finite value, take the float64 products.
SINGLE_MAX = 1e30


@njit
def block_size32(c):
    """Resamples per block of the float32 products: twice `block_size` (c), the same bytes."""
    return 2 * block_size(c)


@njit
def _product8(M, j0, j1, A, n, out):
    """`_product` for the float32 filter: ``out[j - j0, r]`` = sum_i A[i, r] M[j, i] (j0 <= j < j1,
    r < n) with eight rows and four topics a pass over r (twice `_product`'s rows: float32
    has twice the lanes a register), the rows past a multiple of eight by `_product`. The order
    of the sum is irrelevant here (its error bound, `_margin`, holds for any order): this block
    measured 0.021-0.023 ns a multiply-add on one core against 0.028-0.032 for four rows."""
    c = M.shape[1]
    j = j0
    while j + 8 <= j1:
        o0, o1, o2, o3 = out[j - j0], out[j - j0 + 1], out[j - j0 + 2], out[j - j0 + 3]
        o4, o5, o6, o7 = out[j - j0 + 4], out[j - j0 + 5], out[j - j0 + 6], out[j - j0 + 7]
        for r in range(n):
            o0[r] = o1[r] = o2[r] = o3[r] = o4[r] = o5[r] = o6[r] = o7[r] = 0.0
        i = 0
        while i + 4 <= c:
            a0, a1, a2, a3 = A[i], A[i + 1], A[i + 2], A[i + 3]
            w00, w01, w02, w03 = M[j, i], M[j, i + 1], M[j, i + 2], M[j, i + 3]
            w10, w11, w12, w13 = M[j + 1, i], M[j + 1, i + 1], M[j + 1, i + 2], M[j + 1, i + 3]
            w20, w21, w22, w23 = M[j + 2, i], M[j + 2, i + 1], M[j + 2, i + 2], M[j + 2, i + 3]
            w30, w31, w32, w33 = M[j + 3, i], M[j + 3, i + 1], M[j + 3, i + 2], M[j + 3, i + 3]
            w40, w41, w42, w43 = M[j + 4, i], M[j + 4, i + 1], M[j + 4, i + 2], M[j + 4, i + 3]
            w50, w51, w52, w53 = M[j + 5, i], M[j + 5, i + 1], M[j + 5, i + 2], M[j + 5, i + 3]
            w60, w61, w62, w63 = M[j + 6, i], M[j + 6, i + 1], M[j + 6, i + 2], M[j + 6, i + 3]
            w70, w71, w72, w73 = M[j + 7, i], M[j + 7, i + 1], M[j + 7, i + 2], M[j + 7, i + 3]
            for r in range(n):
                x0, x1, x2, x3 = a0[r], a1[r], a2[r], a3[r]
                o0[r] = (((o0[r] + x0 * w00) + x1 * w01) + x2 * w02) + x3 * w03
                o1[r] = (((o1[r] + x0 * w10) + x1 * w11) + x2 * w12) + x3 * w13
                o2[r] = (((o2[r] + x0 * w20) + x1 * w21) + x2 * w22) + x3 * w23
                o3[r] = (((o3[r] + x0 * w30) + x1 * w31) + x2 * w32) + x3 * w33
                o4[r] = (((o4[r] + x0 * w40) + x1 * w41) + x2 * w42) + x3 * w43
                o5[r] = (((o5[r] + x0 * w50) + x1 * w51) + x2 * w52) + x3 * w53
                o6[r] = (((o6[r] + x0 * w60) + x1 * w61) + x2 * w62) + x3 * w63
                o7[r] = (((o7[r] + x0 * w70) + x1 * w71) + x2 * w72) + x3 * w73
            i += 4
        while i < c:
            a = A[i]
            v0, v1, v2, v3 = M[j, i], M[j + 1, i], M[j + 2, i], M[j + 3, i]
            v4, v5, v6, v7 = M[j + 4, i], M[j + 5, i], M[j + 6, i], M[j + 7, i]
            for r in range(n):
                x = a[r]
                o0[r] += x * v0
                o1[r] += x * v1
                o2[r] += x * v2
                o3[r] += x * v3
                o4[r] += x * v4
                o5[r] += x * v5
                o6[r] += x * v6
                o7[r] += x * v7
            i += 1
        j += 8
    if j < j1:
        _product(M, j, j1, A, n, out[j - j0:])


@njit
def _margin(c, terms, mag):
    """Half-width of the interval around a threshold ``centre`` within which a replicate's
    float32 sum does not decide a test: the float32 sum of c terms v_i (each rounded to float32
    first) is within (c + 1) 2^-24 sum |v_i| of the exact one and the float64 topic-order sum
    within c 2^-53 sum |v_i| (Higham 2002, eq. 4.4), ``terms`` >= sum |v_i|; a threshold's true
    boundary is a few float64 ulps of the magnitudes in its formula (``mag`` >= their sum) from
    the centre computed, and rounding the centre to float32 moves it by 2^-24 of it. Twice the
    sum of these, plus c 2^-140 for float32's subnormal range."""
    return 2.0 * ((c + 2) * 2.0 ** -24 * terms + 2.0 ** -22 * mag) + c * 2.0 ** -140


@njit
def _hull(centres, terms, mag, c, L, H, q):
    """``L[q]``, ``H[q]``: float32 values with L <= x - e and x + e <= H for every threshold x of
    ``centres`` (NaN: none), e = `_margin` of each: twice the margin around each, rounded to the
    nearest float32. A replicate sum outside [L, H] decides every test of these thresholds."""
    lo = np.inf
    hi = -np.inf
    for x in centres:
        if x == x:
            e = _margin(c, terms, mag + abs(x))
            lo = min(lo, x - 2.0 * e)
            hi = max(hi, x + 2.0 * e)
    L[q] = np.float32(lo)
    H[q] = np.float32(hi)


@njit
def boot_bounds(X, xt, xtol, rbar):
    """Per row j of the bootstrap (`boot_units`'s ``X``, ``xt``, ``xtol``, ``rbar``), four float32
    intervals (L, H) (rows, 4) that hold the thresholds of `_tally_boot`'s tests in the domain
    of the replicate sum s (u = s - total, up/down = total -/+ tol, far = |total| - tol):
    u >= up, u <= down and u >= far (total >= 0; u <= -far if not) at s ~ 2 total (interval
    0), the other side of |u| >= far at s ~ 0 (1); boot''s u - rbar >= up and one side of
    |u - rbar| >= far at s ~ 2 total + rbar (2), its other side at s ~ rbar (3). Each test is
    monotone in s (rounded differences are), its boundary within a few ulps of the centre.
    The intervals 0 and 1 (2 and 3) are at least 2 e wide, e >= 2 (c + 2) 2^-24 c max |x| >
    1e-12 sum |x| = tol, so they never leave room for a sum above one and below the other
    (total >= 0: L1 <= tol - 2 e < -tol + 2 e <= H0), which `_tally_boot32` relies on.
    ``pos``: total >= 0; ``ok[j]``: the row may use float32."""
    rows, c = X.shape
    L = np.empty((rows, 4), np.float32)
    H = np.empty((rows, 4), np.float32)
    pos = np.empty(rows, np.bool_)
    ok = np.empty(rows, np.bool_)
    for j in range(rows):
        big = 0.0
        for i in range(c):
            big = max(big, abs(X[j, i]))
        t, tol = xt[j], xtol[j]
        centred = rbar[j] == rbar[j]
        rb = rbar[j] if centred else 0.0
        ok[j] = c * big <= SINGLE_MAX and abs(t) <= SINGLE_MAX and abs(rb) <= SINGLE_MAX
        terms = c * big  # sum_i C_bi |x_i| <= c max |x_i|
        far = abs(t) - tol
        mag = abs(t) + abs(rb) + abs(tol) + abs(far)
        p = t >= 0.0
        pos[j] = p
        near, other = (t + far, t - far) if p else (t - far, t + far)
        _hull((t + (t - tol), t + (t + tol), near), terms, mag, c, L[j], H[j], 0)
        _hull((other, other, other), terms, mag, c, L[j], H[j], 1)
        if centred:
            near, other = ((t + rb) + far, (t + rb) - far) if p else ((t + rb) - far, (t + rb) + far)
            _hull(((t + rb) + (t - tol), near, near), terms, mag, c, L[j], H[j], 2)
            _hull((other, other, other), terms, mag, c, L[j], H[j], 3)
        else:
            L[j, 2], H[j, 2], L[j, 3], H[j, 3] = L[j, 0], H[j, 0], L[j, 1], H[j, 1]
    return L, H, pos, ok


@njit(inline="always")  # in the replicate loop, which it must not stop from vectorising
def _inside(s, L, H):
    return (s >= L) & (s <= H)


@njit
def _tally_boot32(s32, n, L, H, pos, centred, X, j, C, total, tol, rbar, flags, acc):
    """`_tally_boot`'s counts of row j from the float32 replicate sums ``s32[:n]`` and
    `boot_bounds`'s intervals ``L``, ``H`` of the row. A sum outside the intervals decides every
    test: u >= up iff s > H0 (g), u <= down iff not g, |u| >= far iff g or s < L1 (total >= 0;
    s > H1 or not g otherwise), and boot''s the same with intervals 2 and 3, so the first loop
    counts g, the other side and the sums inside (``flags``: uint8, a multiple of 8 long, zero
    past n). Those (about one in a thousand; many more on lattice-valued scores), found eight
    flags a word, are summed again as the float64 product sums them (topic order, counts
    ``C``) and tested exactly. Equal to `_tally_boot` on the float64 sums, bit for bit."""
    L0, L1, L2, L3 = L[0], L[1], L[2], L[3]
    H0, H1, H2, H3 = H[0], H[1], H[2], H[3]
    sg = np.float32(1.0) if pos else np.float32(-1.0)  # the other side: sg s < sg bound, exact
    b1 = L1 if pos else -H1
    b3 = L3 if pos else -H3
    g0 = o1 = g2 = o3 = und = 0
    for r in range(n):
        x = s32[r]
        u = _inside(x, L0, H0) | _inside(x, L1, H1)
        g0 += x > H0
        o1 += sg * x < b1
        und += u
        flags[r] = u
    if centred:
        for r in range(n):
            x = s32[r]
            u = _inside(x, L2, H2) | _inside(x, L3, H3)
            g2 += x > H2
            o3 += sg * x < b3
            und += u
            flags[r] |= u
    e0 = e1 = e2 = e9 = e10 = nu = 0
    if und:
        up, down, far = total - tol, total + tol, abs(total) - tol
        c = X.shape[1]
        words = flags.view(np.uint64)
        for w in range((n + 7) >> 3):
            if words[w] == 0:
                continue
            for r in range(8 * w, min(n, 8 * w + 8)):
                if not flags[r]:
                    continue
                nu += 1
                x = s32[r]
                g0 -= x > H0
                o1 -= sg * x < b1
                g2 -= x > H2
                o3 -= sg * x < b3
                v = 0.0
                for i in range(c):
                    v += np.float64(C[i, r]) * X[j, i]
                v = v - total
                e0 += v >= up
                e1 += v <= down
                e2 += abs(v) >= far
                y = v - rbar
                e9 += y >= up
                e10 += abs(y) >= far
    dec = n - nu
    acc[0] += g0 + e0
    acc[1] += dec - g0 + e1
    acc[2] += (g0 + o1 if pos else o1 + dec - g0) + e2
    if centred:
        acc[3] += g2 + e9
        acc[4] += (g2 + o3 if pos else o3 + dec - g2) + e10


@pjit
def boot_units32(X, xt, xtol, rbar, base, B, c, stop):
    """`boot_units`'s counts (rows, 5), bit for bit, from float32 products: a block of counts
    times float32 rows runs about 1.5 times as fast as in float64 (twice the lanes), and each
    replicate is decided from its float32 sum unless that sum falls within the error bound
    (`_margin`) of a threshold, when it is summed again in float64 in topic order
    (`_tally_boot32`). Rows must pass `boot_bounds`'s ``ok``."""
    rows = X.shape[0]
    nb = block_size32(c)
    blocks = (B + nb - 1) // nb
    tiles, split, per = _layout(rows, TILE, blocks)
    L, H, pos, _ = boot_bounds(X, xt, xtol, rbar)
    X32 = X.astype(np.float32)
    part = np.zeros((tiles * split, per, 5), np.int64)
    for u in prange(tiles * split):
        t, s = u // split, u % split
        C = np.empty((c, nb), np.float32)
        buf = np.empty((TILE, nb), np.float32)
        flags = np.zeros((nb + 7) // 8 * 8, np.uint8)
        for blk in range(s * blocks // split, (s + 1) * blocks // split):
            if stopped(stop):
                break
            b0 = blk * nb
            n = min(nb, B - b0)
            count_block(base, b0, n, c, C)
            for j0 in range(t * per, min(rows, (t + 1) * per), TILE):
                j1 = min(rows, (t + 1) * per, j0 + TILE)
                _product8(X32, j0, j1, C, n, buf)
                for j in range(j0, j1):
                    _tally_boot32(buf[j - j0], n, L[j], H[j], pos[j], rbar[j] == rbar[j], X, j, C, xt[j], xtol[j],
                                  rbar[j], flags, part[u, j - t * per])
    return _sum_units(part, rows, per, split)


@njit
def flip_bounds(D, total, tol, scale, sc):
    """Per pair, two float32 intervals (L, H) (K, 2) that hold the thresholds of `_tally_flips`'s
    tests without ZRisk/GeoRisk in the domain of a = sum s_i d_i (h = a / 2, the flipped mean
    a / c): h >= up, h <= down and the mean >= xm at a ~ total (interval 0), |h| >= far and
    |mean| >= |xm| at |a| ~ |total| (1); ``scale``: sum |d| (bounds |a|). ``ok``: the pair may
    use float32."""
    K, c = D.shape
    L = np.empty((K, 2), np.float32)
    H = np.empty((K, 2), np.float32)
    ok = np.empty(K, np.bool_)
    for k in range(K):
        hobs = 0.5 * total[k]
        xm = sc[k, 7]
        xc, xa = (xm * c, abs(xm) * c) if xm == xm else (np.nan, np.nan)
        ok[k] = scale[k] <= SINGLE_MAX and not abs(xm) * c > SINGLE_MAX
        mag = abs(total[k]) + tol[k] + (abs(xm) * c if xm == xm else 0.0)
        _hull((2.0 * (hobs - tol[k]), 2.0 * (hobs + tol[k]), xc), scale[k], mag, c, L[k], H[k], 0)
        _hull((2.0 * (abs(hobs) - tol[k]), xa, xa), scale[k], mag, c, L[k], H[k], 1)
    return L, H, ok


@njit
def _tally_flips32(a32, n, L, H, raw, D, k, F, total, tol, xm, flags, acc):
    """`_tally_flips`'s counts of pair k (without ZRisk/GeoRisk) from the float32 sums ``a32[:n]``
    and `flip_bounds`'s intervals, as `_tally_boot32`: outside them, h >= up iff a > H0 (g),
    h <= down iff not g, the mean >= xm iff g, |h| >= far and |mean| >= |xm| iff |a| > H1; the
    flips inside are summed again in float64 (signs ``F``) and tested exactly."""
    L0, L1, H0, H1 = L[0], L[1], H[0], H[1]
    g = m = und = 0
    for r in range(n):
        x = a32[r]
        ax = abs(x)
        u = _inside(x, L0, H0) | _inside(ax, L1, H1)
        g += x > H0
        m += ax > H1
        und += u
        flags[r] = u
    e3 = e4 = e11 = e12 = e13 = nu = 0
    if und:
        c = D.shape[1]
        hobs = 0.5 * total
        up, down, far = hobs - tol, hobs + tol, abs(hobs) - tol
        words = flags.view(np.uint64)
        for w in range((n + 7) >> 3):
            if words[w] == 0:
                continue
            for r in range(8 * w, min(n, 8 * w + 8)):
                if not flags[r]:
                    continue
                nu += 1
                g -= a32[r] > H0
                m -= abs(a32[r]) > H1
                v = 0.0
                for i in range(c):
                    v += np.float64(F[i, r]) * D[k, i]
                h = 0.5 * v
                e3 += h >= up
                e4 += h <= down
                e11 += abs(h) >= far
                xb = 2.0 * h / c
                e12 += xb >= xm
                e13 += abs(xb) >= abs(xm)
    acc[0] += g + e3
    acc[1] += n - nu - g + e4
    acc[2] += m + e11
    if raw:
        acc[3] += g + e12
        acc[4] += m + e13


@pjit
def flip_units32(D, total, tol, scale, sc, base, n_perm, exact, c, stop):
    """`flip_units`'s counts (K, 9) without ZRisk/GeoRisk (columns 5-8 zero), bit for bit, from
    float32 products as `boot_units32` (`_tally_flips32`). Pairs must pass `flip_bounds`'s ``ok``."""
    K = D.shape[0]
    nb = block_size32(c)
    blocks = (n_perm + nb - 1) // nb
    tiles, split, per = _layout(K, TILE, blocks)
    L, H, _ = flip_bounds(D, total, tol, scale, sc)
    D32 = D.astype(np.float32)
    part = np.zeros((tiles * split, per, 9), np.int64)
    for u in prange(tiles * split):
        t, s = u // split, u % split
        F = np.empty((c, nb), np.float32)
        buf = np.empty((TILE, nb), np.float32)
        flags = np.zeros((nb + 7) // 8 * 8, np.uint8)
        for blk in range(s * blocks // split, (s + 1) * blocks // split):
            if stopped(stop):
                break
            b0 = blk * nb
            n = min(nb, n_perm - b0)
            sign_block(base, b0, n, c, exact, F)
            for k0 in range(t * per, min(K, (t + 1) * per), TILE):
                k1 = min(K, (t + 1) * per, k0 + TILE)
                _product8(D32, k0, k1, F, n, buf)
                for k in range(k0, k1):
                    _tally_flips32(buf[k - k0], n, L[k], H[k], sc[k, 7] == sc[k, 7], D, k, F, total[k], tol[k],
                                   sc[k, 7], flags, part[u, k - t * per])
    return _sum_units(part, K, per, split)
