"""R's ``fft`` (``src/appl/fft.c``: R. C. Singleton's mixed-radix FFT, "Programs for Digital
Signal Processing", IEEE 1979, as translated by R. Ihaka) for the power-of-two lengths ks and
KernSmooth use (``symconv.1d``, ``bkfe``), in R's order of floating-point operations, so that
ks's grid estimate carries R's rounding (fastrisk.simulate._r.rks).

Why bit-exactness matters here: between clusters of scores further apart than 4 bandwidths ks's
binned estimate is 0 up to the FFT's rounding (+-1e-15), and ``qkde``'s ``findInterval`` stops
when those values make ``pkde`` at the grid points decrease by one ulp -- R's ``effCont_nks``
fails there, and simIReff skips the candidate. numpy's FFT rounds differently and fails on other
runs.

The length n = 2^k is factored as ``fft_factor`` does (squares of 4 first, then 2, mirrored):
only the radix-2 and radix-4 passes and the permutation for square factors are needed (for
2^k the square-free part is at most one factor, already in place). Data are interleaved
(re, im) with stride 2 (R calls ``fft_work`` with isn = -2 forward, +2 inverse, unscaled).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import carray, cfunc, types

from fastrisk._kernels._jit import helper, njit
from fastrisk.simulate._r._kernels.rmath import qbeta, qtruncnorm

_PI_4 = 0.785398163397448309615660845820  # M_PI_4


@helper
def _factor(n, nfac):
    """fft_factor for n = 2^k: factors into nfac[1..m] (1-based), returns (m, kt)."""
    m = 0
    k = n
    while k % 16 == 0:
        m += 1
        nfac[m] = 4
        k //= 16
    if k <= 4:
        kt = m
        if k != 1:
            m += 1
            nfac[m] = k
    else:  # k == 8
        m += 1
        nfac[m] = 2
        k //= 4
        kt = m
        m += 1
        nfac[m] = k
    for j in range(kt, 0, -1):
        m += 1
        nfac[m] = nfac[j]
    return m, kt


@helper
def _advance(c1, s1, cd, sd):
    """The twiddle recurrence: rotate (c1, s1) by the pass's angle (cd = 2 sin^2(t / 2), sd = sin t)."""
    return c1 - (cd * c1 + sd * s1), (sd * c1 - cd * s1) + s1


@helper
def _rotation(kk, jc, dr, rad):
    """cos and sin of the twiddle angle recomputed every 32 steps: ((kk - 1) / jc) dr rad."""
    s = ((kk - 1) // jc) * dr * rad
    return math.cos(s), math.sin(s)


@helper
def _passes(z, n, isn, nfac):
    """The radix-2 / radix-4 passes of fftmx on z (1-based interleaved: a[k] = z[k],
    b[k] = z[k + 1]); returns jc (the stride the permutation starts from)."""
    inc = 2
    nt = inc * n
    ks = nt
    rad = _PI_4 if isn > 0 else -_PI_4
    kspan = ks
    nn = nt - inc
    jc = ks // n
    klim = 32 * jc
    i = 0
    # state machine over fftmx's labels
    START, L60, L70, L80, L120, L130, L140, L150, L170, L200, FIN = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10
    state = START
    dr = cd = sd = c1 = s1 = c2 = s2 = c3 = s3 = 0.0
    kk = k1 = k2 = k3 = mm = 0
    while state != FIN:
        if state == START:
            dr = (8.0 * jc) / kspan
            cd = math.sin(0.5 * dr * rad)
            cd = 2.0 * cd * cd
            sd = math.sin(dr * rad)
            kk = 1
            i += 1
            if nfac[i] == 2:
                kspan //= 2
                k1 = kspan + 2
                while True:
                    while True:
                        k2 = kk + kspan
                        ak = z[k2]
                        bk = z[k2 + 1]
                        z[k2] = z[kk] - ak
                        z[k2 + 1] = z[kk + 1] - bk
                        z[kk] += ak
                        z[kk + 1] += bk
                        kk = k2 + kspan
                        if kk > nn:
                            break
                    kk -= nn
                    if kk > jc:
                        break
                state = FIN if kk > kspan else L60
            else:  # factor 4
                kspan //= 4
                state = L120
        elif state == L60:
            c1 = 1.0 - cd
            s1 = sd
            mm = min(k1 // 2, klim)
            state = L80
        elif state == L70:
            c1, s1 = _advance(c1, s1, cd, sd)
            state = L80
        elif state == L80:
            while True:
                k2 = kk + kspan
                ak = z[kk] - z[k2]
                bk = z[kk + 1] - z[k2 + 1]
                z[kk] += z[k2]
                z[kk + 1] += z[k2 + 1]
                z[k2] = c1 * ak - s1 * bk
                z[k2 + 1] = s1 * ak + c1 * bk
                kk = k2 + kspan
                if kk >= nt:
                    break
            k2 = kk - nt
            c1 = -c1
            kk = k1 - k2
            if kk > k2:
                continue
            kk += jc
            if kk <= mm:
                state = L70
            elif kk >= k2:
                k1 = k1 + inc + inc
                kk = (k1 - kspan) // 2 + jc
                state = L60 if kk <= jc + jc else START
            else:
                c1, s1 = _rotation(kk, jc, dr, rad)
                mm = min(k1 // 2, mm + klim)
        elif state == L120:
            c1 = 1.0
            s1 = 0.0
            mm = min(kspan, klim)
            state = L150
        elif state == L130:
            c1, s1 = _advance(c1, s1, cd, sd)
            state = L140
        elif state == L140:
            c2 = c1 * c1 - s1 * s1
            s2 = c1 * s1 * 2.0
            c3 = c2 * c1 - s2 * s1
            s3 = c2 * s1 + s2 * c1
            state = L150
        elif state == L150:
            k1 = kk + kspan
            k2 = k1 + kspan
            k3 = k2 + kspan
            akp = z[kk] + z[k2]
            akm = z[kk] - z[k2]
            ajp = z[k1] + z[k3]
            ajm = z[k1] - z[k3]
            z[kk] = akp + ajp
            ajp = akp - ajp
            bkp = z[kk + 1] + z[k2 + 1]
            bkm = z[kk + 1] - z[k2 + 1]
            bjp = z[k1 + 1] + z[k3 + 1]
            bjm = z[k1 + 1] - z[k3 + 1]
            z[kk + 1] = bkp + bjp
            bjp = bkp - bjp
            if isn < 0:
                akp = akm + bjm
                akm = akm - bjm
                bkp = bkm - ajm
                bkm = bkm + ajm
            else:
                akp = akm - bjm
                akm = akm + bjm
                bkp = bkm + ajm
                bkm = bkm - ajm
            if s1 != 0.0:
                z[k1] = akp * c1 - bkp * s1
                z[k1 + 1] = akp * s1 + bkp * c1
                z[k2] = ajp * c2 - bjp * s2
                z[k2 + 1] = ajp * s2 + bjp * c2
                z[k3] = akm * c3 - bkm * s3
                z[k3 + 1] = akm * s3 + bkm * c3
            else:
                z[k1] = akp
                z[k1 + 1] = bkp
                z[k2] = ajp
                z[k2 + 1] = bjp
                z[k3] = akm
                z[k3 + 1] = bkm
            kk = k3 + kspan
            if kk > nt:
                state = L170
        elif state == L170:
            kk = kk - nt + jc
            if kk <= mm:
                state = L130
            elif kk < kspan:
                state = L200
            else:
                kk = kk - kspan + inc
                if kk <= jc:
                    state = L120
                elif kspan == jc:
                    state = FIN
                else:
                    state = START
        else:  # L200
            c1, s1 = _rotation(kk, jc, dr, rad)
            mm = min(kspan, mm + klim)
            state = L140
    return jc


@helper
def _permute(z, n, m, kt, jc, nfac):
    """fftmx's permutation for square factors, single-variate case (swaps only)."""
    inc = 2
    ks = inc * n
    if kt == 0:
        return
    npv = np.zeros(2 * m + 4, dtype=np.int64)
    npv[1] = ks
    k = kt + kt + 1
    if m < k:
        k -= 1
    npv[k + 1] = jc
    j = 1
    while j < k:
        npv[j + 1] = npv[j] // nfac[j]
        npv[k] = npv[k + 1] * nfac[j]
        j += 1
        k -= 1
    kspan = npv[2]
    kk = jc + 1
    k2 = kspan + 1
    j = 1
    swap = True
    while True:
        if swap:  # L370
            while True:
                t = z[kk]
                z[kk] = z[k2]
                z[k2] = t
                t = z[kk + 1]
                z[kk + 1] = z[k2 + 1]
                z[k2 + 1] = t
                kk += inc
                k2 += kspan
                if k2 >= ks:
                    break
        # L380
        while True:
            k2 -= npv[j]
            j += 1
            k2 += npv[j + 1]
            if k2 <= npv[j]:
                break
        j = 1
        swap = False
        while True:
            if kk < k2:
                swap = True
                break
            kk += inc
            k2 += kspan
            if k2 >= ks:
                break
        if swap:
            continue
        if kk >= ks:
            return


@njit
def r_fft(re, im, inverse):
    """R's ``fft(z, inverse)`` of z = re + i im, len(z) a power of two (else ValueError):
    (real, imaginary) parts, unscaled."""
    n = re.shape[0]
    if n < 1 or (n & (n - 1)) != 0:
        raise ValueError("r_fft: the length must be a power of two")
    z = np.zeros(2 * n + 2)
    for t in range(n):
        z[2 * t + 1] = re[t]
        z[2 * t + 2] = im[t]
    if n > 1:
        nfac = np.zeros(32, dtype=np.int64)
        m, kt = _factor(n, nfac)
        jc = _passes(z, n, 2 if inverse else -2, nfac)
        _permute(z, n, m, kt, jc, nfac)
    out_re = np.empty(n)
    out_im = np.empty(n)
    for t in range(n):
        out_re[t] = z[2 * t + 1]
        out_im[t] = z[2 * t + 2]
    return out_re, out_im


# ---------------------------------------------------------------- effTransform's integrand
# simIReff's effTransform_inner: qfun(p) = qeff(qbeta(p, a, b)), integrated by R's integrate
# (QUADPACK's dqags, which scipy runs too and calls once per point): a C-callable integrand so
# that those calls do not go through Python. Its data (one float64 array, `user`): [length, kind,
# a, b, power, ...]: kind 0 nks (F0, F1, M, ks's grid points, qkde's probabilities there), 1 norm
# (mu, sigma), 2 beta (shape1, shape2); power 1 (effContMean) or 2 (effContVar).
@helper
def _qkde_trunc(u, f0, f1, m, pts, cum):
    """simIReff's truncated ks quantile: cap(qkde(u (F1 - F0) + F0), 0, 1)."""
    p = u * (f1 - f0) + f0
    lo, hi = 0, m  # findInterval: number of cum <= p
    while lo < hi:
        mid = (lo + hi) // 2
        if cum[mid] <= p:
            lo = mid + 1
        else:
            hi = mid
    i = lo
    if i == 0:
        q = pts[0]
    elif i >= m:
        q = pts[m - 1]
    else:
        alpha = (p - cum[i]) / (cum[i - 1] - cum[i])
        q = pts[i - 1] * alpha + pts[i] * (1 - alpha)
    return min(1.0, max(0.0, q))


@njit
def qkde_trunc(u, f0, f1, pts, cum):
    """`_qkde_trunc` at every probability of ``u`` (ks's grid ``pts``, qkde's probabilities
    ``cum`` there)."""
    out = np.empty(len(u))
    for k in range(len(u)):
        out[k] = _qkde_trunc(u[k], f0, f1, len(pts), pts, cum)
    return out


#: Slots probed for a probability in `transformed_quantile`'s memo before it gives up on it.
_PROBES = 32


@helper
def _qfun(p, data):
    """qeff(qbeta(p, a, b)) for `transformed_quantile`."""
    v = qbeta(p, data[2], data[3])
    kind = int(data[1])
    if kind == 0:
        m = int(data[7])
        return _qkde_trunc(v, data[5], data[6], m, data[8:8 + m], data[8 + m:8 + 2 * m])
    if kind == 1:
        return qtruncnorm(v, 0.0, 1.0, data[5], data[6])
    return qbeta(v, data[5], data[6])


@functools.cache
def transformed_quantile():
    """The C callback qfun(p)^power for scipy's quad (a LowLevelCallable, data in ``user``),
    compiled on first use. R's ``qbeta`` is `fastrisk.simulate._r._kernels.rmath.qbeta` (scipy's
    ``betaincinv`` to ~1e-14, a port: no private scipy symbol).

    ``user``: the margin's data (``user[0]`` its length n; a, b at 2, 3, the power at 4), then a
    memo of qfun: its generation at n, its number of slots c at n + 1, the count of qfun's
    evaluations at n + 2 (incremented here: what the integrals cost), then c slots (p, qfun(p),
    generation). A slot of another generation is empty, so one increment of ``user[n]`` empties
    the memo (`fastrisk.simulate._r.rks.transformed_moments` does it for each (a, b): the mean
    and the variance integrals of one (a, b) evaluate qfun at mostly the same p). A p is looked
    up at its hash and the next `_PROBES` slots (exact equality); where it is not found and no
    slot is free, qfun is computed and not kept. Every value is qfun's own, computed once:
    the integrals are the same to the bit with or without the memo."""

    @cfunc(types.float64(types.intc, types.CPointer(types.float64), types.CPointer(types.float64)))
    def f(n, xx, user):
        size = int(user[0])
        slots = int(user[size + 1])
        data = carray(user, (size + 3 + 3 * slots,))
        p = xx[0]
        gen = data[size]
        q = math.nan
        found = False
        free = -1
        if slots > 0:
            h = int(p * 2654435761.0) % slots
            for _ in range(min(_PROBES, slots)):
                at = size + 3 + 3 * h
                if data[at + 2] != gen:
                    free = at
                    break
                if data[at] == p:
                    q = data[at + 1]
                    found = True
                    break
                h = (h + 1) % slots
        if not found:
            q = _qfun(p, data)
            data[size + 2] += 1.0
            if free >= 0:
                data[free], data[free + 1], data[free + 2] = p, q, gen
        return q if data[4] == 1.0 else q * q

    return f
