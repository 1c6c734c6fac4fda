"""Kernels of the numerical policy (`fastrisk._runtime.numerics`): the relative variance floor with
the ±inf/NaN rule in one pass, and the range check of results. One pass, no temporaries, so the
policy costs nothing next to the statistics it guards; and Student-t lower tails as Cephes computes
them (`t_lower_tails`, the small-call t test's p-values)."""

from __future__ import annotations

import math

import numba
import numpy as np
from llvmlite import ir
from numba.extending import intrinsic

from fastrisk._kernels._jit import helper, njit

#: Relative variance floor (see `fastrisk._runtime.numerics`): a centred sum of squares at most
#: ``VARIANCE_RTOL * c * sum x^2`` is rounding noise.
VARIANCE_RTOL = 4.0 * 2.220446049250313e-16


if numba.config.DISABLE_JIT:  # kernels run as plain Python (Python 3.11 has no math.fma)
    def fma(a, b, c):
        """a * b + c (the compiled version rounds once; here twice)."""
        return a * b + c
else:
    @intrinsic
    def _llvm_fma(typingctx, a, b, c):
        """LLVM's ``llvm.fma.f64``: a * b + c rounded once (IEEE 754 fusedMultiplyAdd)."""
        def codegen(context, builder, signature, args):
            d = ir.DoubleType()
            fn = builder.module.declare_intrinsic("llvm.fma", [d], ir.FunctionType(d, [d, d, d]))
            return builder.call(fn, args)

        return numba.types.float64(numba.types.float64, numba.types.float64, numba.types.float64), codegen

    @helper
    def fma(a, b, c):
        """a * b + c rounded once (IEEE 754 fusedMultiplyAdd; one instruction where the CPU has
        FMA). Explicit, unlike fastmath's contraction: the kernel that calls it fixes where it
        is used, so its numbers do not depend on the compiler's choices."""
        return _llvm_fma(a, b, c)


@helper
def outside(v, lo, hi):
    """True if ``v`` is not finite or a non-zero ``|v|`` lies outside [lo, hi] (`out_of_range`'s
    test of one value)."""
    a = abs(v)
    return not a <= hi or (a < lo and a != 0.0)


@njit
def floored_t(m, s, c, rtol):
    """(zero, t) for a mean ``m`` with standard error ``s`` over ``c`` topics: ``zero`` when s is 0
    or below the relative floor ``(c-1) r^2 <= rtol c ((c-1) r^2 + 1)`` with r = s / |m|; t is
    then ±inf (NaN if m is 0 too), else m / s. The one rule every kernel applies."""
    z = s == 0.0
    if not z and m != 0.0:
        r = s / abs(m)
        if r < 1.0:
            ss = (c - 1) * r * r
            z = ss <= rtol * c * (ss + 1.0)
    if z:
        return True, (math.nan if m == 0.0 else math.copysign(math.inf, m))
    return False, m / s


@njit
def floor_standardise(mean, se, other, c, rtol):
    """Flat arrays: (se, other, t, zero) by `floored_t`; where ``zero``, se and other are 0."""
    n = mean.shape[0]
    se_out = np.empty(n)
    other_out = np.empty(n)
    t = np.empty(n)
    zero = np.zeros(n, dtype=np.bool_)
    for i in range(n):
        z, t[i] = floored_t(mean[i], se[i], c, rtol)
        zero[i] = z
        se_out[i] = 0.0 if z else se[i]
        other_out[i] = 0.0 if z else other[i]
    return se_out, other_out, t, zero


@njit
def out_of_range(values, lo, hi):
    """True if a value is not finite or a non-zero magnitude lies outside [lo, hi]."""
    for i in range(values.shape[0]):
        if outside(values[i], lo, hi):
            return True
    return False


# --------------------------------------------------------------------------- Student-t p-values
#: Values per block of `t_lower_tails` (its scratch arrays; every block is computed the same way).
_T_BLOCK = 256
_T_EPS = 2.0 ** -53


@njit
def _t_central(t, df, idx, n, u, w, tz, f, out):
    """P(T <= -|t|) for |t| <= 2: Cephes' ``stdtr`` finite series (Abramowitz & Stegun 26.7.3-4),
    all ``n`` values of ``t[idx[:n]]`` advanced term by term together (the same terms as one at a
    time: the loop over values has no dependence and no branch)."""
    root_nu = math.sqrt(df)
    odd = df % 2 == 1
    for k in range(n):
        u[k] = abs(t[idx[k]]) / root_nu
        w[k] = 1.0 / (1.0 + u[k] * u[k])  # 1 / z, z = 1 + t^2 / df
        tz[k] = 1.0
        f[k] = 1.0
    j = 3 if odd else 2
    step = 0
    while j <= df - 2:
        r = (j - 1.0) / j
        for k in range(n):
            tz[k] *= r * w[k]
            f[k] += tz[k]
        j += 2
        step += 1
        if step % 8 == 0:  # Cephes stops a value once tz / f <= eps; stop when every value has
            done = True
            for k in range(n):
                done &= tz[k] <= _T_EPS * f[k]
            if done:
                break
    for k in range(n):
        if odd:
            s = math.atan(u[k])
            if df > 1:
                s += f[k] * u[k] * w[k]
            s *= 2.0 / math.pi
        else:
            s = f[k] * u[k] * math.sqrt(w[k])
        out[idx[k]] = 0.5 - 0.5 * s  # s = P(|T| < |t|) >= 0.05 here: no loss of relative accuracy


@njit
def _t_tail(t, df, idx, n, x, A1, A2, B1, B2, out):
    """P(T <= -|t|) for |t| > 2: I_x(df/2, 1/2) / 2, x = df / (df + t^2), by the incomplete beta's
    continued fraction (DLMF 8.17.22; x < (a + 1) / (a + b + 2) here, where it converges fast),
    evaluated with Wallis' forward recurrences A_n / B_n (rescaled, never divided until the end),
    all values advanced together; each value is frozen once its own convergent moved by <= 4 eps
    (x = 0 stops its recurrence), so it does not depend on the other values of the block."""
    a = 0.5 * df
    root_nu = math.sqrt(df)
    for k in range(n):
        v = abs(t[idx[k]]) / root_nu
        x[k] = 1.0 / (1.0 + v * v)
        A2[k] = 0.0
        A1[k] = 1.0
        B2[k] = 1.0
        B1[k] = 1.0
    for m in range(100000):
        p = -(a + m) * (a + 0.5 + m) / ((a + 2 * m) * (a + 2 * m + 1))  # d_{2m+1} / x
        q = (m + 1) * (-0.5 - m) / ((a + 2 * m + 1) * (a + 2 * m + 2))  # d_{2m+2} / x
        for k in range(n):
            dn = p * x[k]
            A = A1[k] + dn * A2[k]
            B = B1[k] + dn * B2[k]
            dn = q * x[k]
            A2[k] = A
            B2[k] = B
            A1[k] = A + dn * A1[k]
            B1[k] = B + dn * B1[k]
        if m % 4 == 3:
            done = True
            for k in range(n):
                converged = abs(A1[k] * B2[k] - A2[k] * B1[k]) <= 4.0 * _T_EPS * abs(A1[k] * B2[k])
                if converged:
                    x[k] = 0.0  # frozen: with x = 0 the recurrences keep A1 / B1 as they are
                done &= converged
                if abs(B1[k]) > 1e100:
                    A1[k] *= 1e-100
                    A2[k] *= 1e-100
                    B1[k] *= 1e-100
                    B2[k] *= 1e-100
            if done:
                break
    log_beta = math.lgamma(a) + math.lgamma(0.5) - math.lgamma(a + 0.5)
    for k in range(n):
        v = abs(t[idx[k]]) / root_nu
        L = math.log1p(v * v)  # -log x; log(1 - x) = 2 log v - L
        front = math.exp(-a * L + math.log(v) - 0.5 * L - log_beta)  # x^a (1-x)^(1/2) / B(a, 1/2)
        out[idx[k]] = 0.5 * front * (A1[k] / B1[k]) / a


@njit
def t_lower_tails(t, df, out):
    """``out[i] = P(T <= -|t[i]|)`` for Student's t with integer ``df`` >= 1 (flat float64
    arrays): ``scipy.special.stdtr(df, -|t|)`` as Cephes computes it (Moshier; scipy's
    ``stdtr`` before it moved to Boost): the finite series for |t| <= 2, the incomplete beta
    function beyond. NaN stays NaN; |t| = inf gives 0. Values go in blocks of `_T_BLOCK`,
    each block's central and tail values advanced together (vectorisable loops)."""
    central = np.empty(_T_BLOCK, np.int64)
    tail = np.empty(_T_BLOCK, np.int64)
    s1 = np.empty(_T_BLOCK)
    s2 = np.empty(_T_BLOCK)
    s3 = np.empty(_T_BLOCK)
    s4 = np.empty(_T_BLOCK)
    s5 = np.empty(_T_BLOCK)
    N = t.shape[0]
    for start in range(0, N, _T_BLOCK):
        nc = 0
        nt = 0
        for i in range(start, min(start + _T_BLOCK, N)):
            v = abs(t[i])
            if v != v:
                out[i] = math.nan
            elif v == math.inf:
                out[i] = 0.0
            elif v <= 2.0:
                central[nc] = i
                nc += 1
            else:
                tail[nt] = i
                nt += 1
        if nc:
            _t_central(t, df, central, nc, s1, s2, s3, s4, out)
        if nt:
            _t_tail(t, df, tail, nt, s1, s2, s3, s4, s5, out)
