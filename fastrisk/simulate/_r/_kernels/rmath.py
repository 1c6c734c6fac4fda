"""R's nmath ``pnorm`` and truncnorm's ``ptruncnorm`` / ``qtruncnorm`` for simIReff's truncated
normal margin (fastrisk.simulate._r.rmath), in R's order of floating-point operations.

- `pnorm`: R 4.2's ``pnorm_both`` (lower tail, not log), Cody's rational Chebyshev
  approximations (W. J. Cody 1969, Math. Comp. 23; ACM TOMS 715, 1993);
- `ptruncnorm`: truncnorm 1.0-8's C ``ptruncnorm``: (Phi(q) - Phi(a)) / (Phi(b) - Phi(a));
- `qtruncnorm`: truncnorm's ``do_qtruncnorm`` for finite a, b: a at p = 0, b at p = 1, else
  the root of ptruncnorm(x) - p by Brent's method (R's ``R_zeroin2``, netlib's zeroin: R. P.
  Brent 1973, "Algorithms for minimization without derivatives", ch. 4) with tol 0, maxit 200.
"""

from __future__ import annotations

import math

from fastrisk._kernels._jit import helper, njit

# error_model "numpy": divisions by zero give C's infinities and NaNs (0 / 0 where Phi(b) - Phi(a)
# cancels to 0), as in R, not Python's ZeroDivisionError

_EPS = 2.220446049250313e-16  # DBL_EPSILON
_1_SQRT_2PI = 0.398942280401432677939946059934  # 1 / sqrt(2 pi)
_SQRT_32 = 5.656854249492380195206754896838  # sqrt(32)
# Cody (1993), ANORM: |x| <= 0.66291, 0.66291 < |x| <= sqrt(32), |x| > sqrt(32)
_A = (2.2352520354606839287, 161.02823106855587881, 1067.6894854603709582,
      18154.981253343561249, 0.065682337918207449113)
_B = (47.20258190468824187, 976.09855173777669322, 10260.932208618978205, 45507.789335026729956)
_C = (0.39894151208813466764, 8.8831497943883759412, 93.506656132177855979, 597.27027639480026226,
      2494.5375852903726711, 6848.1904505362823326, 11602.651437647350124, 9842.7148383839780218,
      1.0765576773720192317e-8)
_D = (22.266688044328115691, 235.38790178262499861, 1519.377599407554805, 6485.558298266760755,
      18615.571640885098091, 34900.952721145977266, 38912.003286093271411, 19685.429676859990727)
_P = (0.21589853405795699, 0.1274011611602473639, 0.022235277870649807, 0.001421619193227893466,
      2.9112874951168792e-5, 0.02307344176494017303)
_Q = (1.28426009614491121, 0.468238212480865118, 0.0659881378689285515, 0.00378239633202758244,
      7.29751555083966205e-5)


@helper(error_model="numpy")
def _trunc16(v: float) -> float:
    return math.trunc(v * 16.0) / 16.0


@njit(error_model="numpy")
def pnorm(x: float) -> float:
    """R's ``pnorm(x)`` (lower tail, not log) for a standardised x, ``pnorm_both`` of R 4.2."""
    if math.isnan(x):
        return x
    y = abs(x)
    if y <= 0.67448975:
        if y > _EPS * 0.5:
            xsq = x * x
            xnum, xden = _A[4] * xsq, xsq
            for i in range(3):
                xnum = (xnum + _A[i]) * xsq
                xden = (xden + _B[i]) * xsq
        else:
            xnum = xden = 0.0
        return 0.5 + x * (xnum + _A[3]) / (xden + _B[3])
    if y <= _SQRT_32:
        xnum, xden = _C[8] * y, y
        for i in range(7):
            xnum = (xnum + _C[i]) * y
            xden = (xden + _D[i]) * y
        temp = (xnum + _C[7]) / (xden + _D[7])
        xsq = _trunc16(y)
        dl = (y - xsq) * (y + xsq)
        cum = math.exp(-xsq * xsq * 0.5) * math.exp(-dl * 0.5) * temp
        return 1.0 - cum if x > 0 else cum
    if -37.5193 < x < 8.2924:
        xsq = 1.0 / (x * x)
        xnum, xden = _P[5] * xsq, xsq
        for i in range(4):
            xnum = (xnum + _P[i]) * xsq
            xden = (xden + _Q[i]) * xsq
        temp = xsq * (xnum + _P[4]) / (xden + _Q[4])
        temp = (_1_SQRT_2PI - temp) / y
        xsq = _trunc16(x)
        dl = (x - xsq) * (x + xsq)
        cum = math.exp(-xsq * xsq * 0.5) * math.exp(-dl * 0.5) * temp
        return 1.0 - cum if x > 0 else cum
    return 1.0 if x > 0 else 0.0


@njit(error_model="numpy")
def r_pnorm(q, mean, sd):
    """R's ``pnorm(q, mean, sd)``: standardised as ``pnorm5``, infinities to 0 / 1."""
    z = (q - mean) / sd
    if math.isinf(z):
        return 1.0 if z > 0 else 0.0
    return pnorm(z)


@helper(error_model="numpy")
def _ptn(q, a, b, mean, sd, c2, c3):
    if q < a:
        return 0.0
    if q > b:
        return 1.0
    return (r_pnorm(q, mean, sd) - c2) / (c3 - c2)


@njit(error_model="numpy")
def ptruncnorm(q, a, b, mean, sd):
    """truncnorm's ``ptruncnorm(q, a, b, mean, sd)``."""
    return _ptn(q, a, b, mean, sd, r_pnorm(a, mean, sd), r_pnorm(b, mean, sd))


@njit(error_model="numpy")
def qtruncnorm(p, a, b, mean, sd):
    """truncnorm's ``qtruncnorm(p, a, b, mean, sd)`` for finite a < b."""
    if p == 0.0:
        return a
    if p == 1.0:
        return b
    if p < 0.0 or p > 1.0:
        return math.nan
    c2, c3 = r_pnorm(a, mean, sd), r_pnorm(b, mean, sd)
    # Brent's zeroin (R_zeroin2) from (a, f(a)), (b, f(b)); tol 0, at most 200 iterations
    fa = _ptn(a, a, b, mean, sd, c2, c3) - p
    fb = _ptn(b, a, b, mean, sd, c2, c3) - p
    lo, hi = a, b
    c, fc = lo, fa
    if fa == 0.0:
        return lo
    if fb == 0.0:
        return hi
    x, fx = hi, fb
    for _ in range(201):
        prev_step = x - lo
        if abs(fc) < abs(fx):
            lo, x, c = x, c, x
            fa, fx, fc = fx, fc, fx
        tol_act = 2.0 * _EPS * abs(x)
        new_step = (c - x) / 2.0
        if abs(new_step) <= tol_act or fx == 0.0:
            return x
        if abs(prev_step) >= tol_act and abs(fa) > abs(fx):  # interpolation
            cb = c - x
            if lo == c:  # linear
                t1 = fx / fa
                pp = cb * t1
                qq = 1.0 - t1
            else:  # inverse quadratic
                qq = fa / fc
                t1 = fx / fc
                t2 = fx / fa
                pp = t2 * (cb * qq * (qq - t1) - (x - lo) * (t1 - 1.0))
                qq = (qq - 1.0) * (t1 - 1.0) * (t2 - 1.0)
            if pp > 0.0:
                qq = -qq
            else:
                pp = -pp
            if pp < (0.75 * cb * qq - abs(tol_act * qq) / 2.0) and pp < abs(prev_step * qq / 2.0):
                new_step = pp / qq
        if abs(new_step) < tol_act:
            new_step = tol_act if new_step > 0.0 else -tol_act
        lo, fa = x, fx
        x += new_step
        fx = _ptn(x, a, b, mean, sd, c2, c3) - p
        if (fx > 0.0 and fc > 0.0) or (fx < 0.0 and fc < 0.0):
            c, fc = lo, fa
    return x
