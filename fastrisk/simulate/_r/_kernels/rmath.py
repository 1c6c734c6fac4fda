"""R's nmath ``pnorm`` and truncnorm's ``ptruncnorm`` / ``qtruncnorm`` for simIReff's truncated
normal margin (fastrisk.simulate._r.rmath), in R's order of floating-point operations.

- `pnorm`: R 4.2's ``pnorm_both`` (lower tail, not log), Cody's rational Chebyshev
  approximations (W. J. Cody 1969, Math. Comp. 23; ACM TOMS 715, 1993);
- `ptruncnorm`: truncnorm 1.0-8's C ``ptruncnorm``: (Phi(q) - Phi(a)) / (Phi(b) - Phi(a));
- `qtruncnorm`: truncnorm's ``do_qtruncnorm`` for finite a, b: a at p = 0, b at p = 1, else
  the root of ptruncnorm(x) - p by Brent's method (R's ``R_zeroin2``, netlib's zeroin: R. P.
  Brent 1973, "Algorithms for minimization without derivatives", ch. 4) with tol 0, maxit 200;
- `qbeta`: the beta quantile (R's ``qbeta``, lower tail), for simIReff's effTransform
  integrals: the root of I_x(a, b) = p by Halley's method kept inside a bisection bracket
  (as Boost's ``ibeta_inv``, which scipy's ``betaincinv`` calls, refines its start), with
  the regularised incomplete beta `ibeta` of Cephes (S. L. Moshier, ``incbet.c``: the
  power series ``pseries`` and the continued fractions ``incbcf`` / ``incbd``, Abramowitz &
  Stegun 26.5.8-9), the smaller of I and 1 - I computed directly so that neither tail
  cancels. It agrees with ``scipy.special.betaincinv`` to ~1e-14 (tests/test_simulate_rks.py)
  and replaces a binding of scipy's private Cython symbol.
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


# ---------------------------------------------------------------------- the beta quantile
_MACHEP = 1.11022302462515654042e-16  # Cephes: 2^-53
_MAXGAM = 171.624376956302725
_MAXLOG = 7.09782712893383996843e2
_MINLOG = -7.451332191019412076235e2
_BIG = 4.503599627370496e15
_BIGINV = 2.22044604925031308085e-16
_MINLOG_NORMAL = -708.3964185322641  # log of the smallest normal double


@helper(error_model="numpy")
def _sum_error(a, b):
    """a + b rounded, and its rounding error (Knuth's TwoSum: a + b = s + e exactly)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@helper(error_model="numpy")
def _digamma_rough(c):
    """psi(c) for c > 0 to ~1e-6 relative (recurrence up to 6, then the asymptotic series):
    enough for the first-order rounding correction of Gamma(a + b)."""
    shift = 0.0
    while c < 6.0:
        shift -= 1.0 / c
        c += 1.0
    c2 = 1.0 / (c * c)
    return shift + math.log(c) - 0.5 / c - c2 * (1.0 / 12.0 - c2 * (1.0 / 120.0 - c2 / 252.0))


@helper(error_model="numpy")
def _lbeta(a, b):
    """log B(a, b), Gamma(a + b) corrected for the rounding e of a + b (d log Gamma = psi e)."""
    c, e = _sum_error(a, b)
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(c) - _digamma_rough(c) * e


@helper(error_model="numpy")
def _beta(a, b):
    """B(a, b): from the gamma function below Cephes' MAXGAM, else from logs. The rounding
    of a + b, multiplied by psi(a + b) in Gamma(a + b), would cost up to ~1e-14 near a + b =
    100: it is corrected to first order."""
    c, e = _sum_error(a, b)
    if c < _MAXGAM:
        return math.gamma(a) / math.gamma(c) * math.gamma(b) * (1.0 - _digamma_rough(c) * e)
    return math.exp(_lbeta(a, b))


@helper(error_model="numpy")
def _pseries(a, b, x):
    """Cephes ``pseries``: the power series of I_x(a, b), for b x <= 1 and x <= 0.95."""
    ai = 1.0 / a
    u = (1.0 - b) * x
    v = u / (a + 1.0)
    t1 = v
    t = u
    n = 2.0
    s = 0.0
    z = _MACHEP * ai
    while abs(v) > z:
        u = (n - b) * x / n
        t *= u
        v = t / (a + n)
        s += v
        n += 1.0
    s += t1
    s += ai
    u = a * math.log(x)
    if a + b < _MAXGAM and abs(u) < _MAXLOG:
        return s / _beta(a, b) * x ** a
    t = -_lbeta(a, b) + u + math.log(s)
    return 0.0 if t < _MINLOG else math.exp(t)


@helper(error_model="numpy")
def _fraction(x, k1, k2, k3, k4, k5, k6, k7, k8, d2, d6):
    """The continued fraction of Cephes' ``incbcf`` / ``incbd`` (their one loop: two terms a
    pass, rescaled by 2^52, at most 300 passes, stopped at a relative change below 3 MACHEP);
    ``d2``, ``d6``: the steps of k2 and k6 (+1, -1 in ``incbcf``; -1, +1 in ``incbd``)."""
    pkm2, qkm2, pkm1, qkm1 = 0.0, 1.0, 1.0, 1.0
    ans, r = 1.0, 1.0
    thresh = 3.0 * _MACHEP
    for _ in range(300):
        xk = -(x * k1 * k2) / (k3 * k4)
        pk = pkm1 + pkm2 * xk
        qk = qkm1 + qkm2 * xk
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        xk = (x * k5 * k6) / (k7 * k8)
        pk = pkm1 + pkm2 * xk
        qk = qkm1 + qkm2 * xk
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        if qk != 0.0:
            r = pk / qk
        if r != 0.0:
            t = abs((ans - r) / r)
            ans = r
        else:
            t = 1.0
        if t < thresh:
            break
        k1 += 1.0
        k2 += d2
        k3 += 2.0
        k4 += 2.0
        k5 += 1.0
        k6 += d6
        k7 += 2.0
        k8 += 2.0
        if abs(qk) + abs(pk) > _BIG:
            pkm2 *= _BIGINV
            pkm1 *= _BIGINV
            qkm2 *= _BIGINV
            qkm1 *= _BIGINV
        if abs(qk) < _BIGINV or abs(pk) < _BIGINV:
            pkm2 *= _BIG
            pkm1 *= _BIG
            qkm2 *= _BIG
            qkm1 *= _BIG
    return ans


@helper(error_model="numpy")
def _incbcf(a, b, x):
    """Cephes ``incbcf``: continued fraction #1 of I_x(a, b) (without its prefactor)."""
    return _fraction(x, a, a + b, a, a + 1.0, 1.0, b - 1.0, a + 1.0, a + 2.0, 1.0, -1.0)


@helper(error_model="numpy")
def _incbd(a, b, x, xc):
    """Cephes ``incbd``: continued fraction #2 of I_x(a, b) (without its prefactor), in
    z = x / (1 - x) with ``xc`` = 1 - x as given (see `_ibeta_lower`)."""
    return _fraction(x / xc, a, b - 1.0, a, a + 1.0, 1.0, a + b, a + 1.0, a + 2.0, -1.0, 1.0)


@helper(error_model="numpy")
def _ibeta_lower(a, b, x, xc, swapped):
    """I_x(a, b) for 0 < x <= a / (a + b) (``xc`` = 1 - x): Cephes ``incbet``'s branch after
    its swap. One of x, xc is the caller's exact argument, the other 1 minus it (``swapped``:
    x is): the power of the computed one goes through ``log1p`` of the exact one, since a
    rounding of 1 - x would be multiplied by its exponent (Cephes' ``pow(xc, b)``)."""
    if x * (a + b - 2.0) - (a - 1.0) < 0.0:
        w = _incbcf(a, b, x)
    else:
        w = _incbd(a, b, x, xc) / xc
    y = a * (math.log1p(-xc) if swapped else math.log(x))
    t = b * (math.log(xc) if swapped else math.log1p(-x))
    if a + b < _MAXGAM and abs(y) < _MAXLOG and abs(t) < _MAXLOG:
        px = math.exp(y) if swapped else x ** a
        pxc = xc ** b if swapped else math.exp(t)
        return pxc * px / a * w / _beta(a, b)
    y += t - _lbeta(a, b) + math.log(w / a)
    return 0.0 if y < _MINLOG else math.exp(y)


@njit(error_model="numpy")
def ibeta(a, b, x):
    """(I_x(a, b), 1 - I_x(a, b)), the regularised incomplete beta and its complement, the
    smaller of the two computed directly (Cephes ``incbet``, which swaps a, b and x, 1 - x
    above the mean a / (a + b); ``pseries`` where b x <= 1 and x <= 0.95). Its fractions
    lose up to ~3e-14 where a large parameter leads (a = 100, b = 1.05, x = 0.989)."""
    if x <= 0.0:
        return 0.0, 1.0
    if x >= 1.0:
        return 1.0, 0.0
    if b * x <= 1.0 and x <= 0.95:
        v = _pseries(a, b, x)
        return v, 1.0 - v
    xc = 1.0 - x
    if x > a / (a + b):
        if a * xc <= 1.0 and xc <= 0.95:
            v = _pseries(b, a, xc)
        else:
            v = _ibeta_lower(b, a, xc, x, True)
        return 1.0 - v, v
    v = _ibeta_lower(a, b, x, xc, False)
    return v, 1.0 - v


@helper(error_model="numpy")
def _as109_start(p, q, a, b, lbeta):
    """R's ``qbeta`` start (AS 109, Cran, Martin & Thomas 1977, after Carter 1947): a normal
    approximation where both shapes exceed 1, else the tail approximations."""
    swap = p > 0.5
    aa, pp, qq = (q, b, a) if swap else (p, a, b)
    r = math.sqrt(-2.0 * math.log(aa))
    y = r - (2.30753 + 0.27061 * r) / (1.0 + (0.99229 + 0.04481 * r) * r)
    if pp > 1.0 and qq > 1.0:
        r = (y * y - 3.0) / 6.0
        s = 1.0 / (pp + pp - 1.0)
        t = 1.0 / (qq + qq - 1.0)
        h = 2.0 / (s + t)
        w = y * math.sqrt(h + r) / h - (t - s) * (r + 5.0 / 6.0 - 2.0 / (3.0 * h))
        x = pp / (pp + qq * math.exp(w + w))
    else:
        r = qq + qq
        t = 1.0 / (9.0 * qq)
        t = r * (1.0 - t + y * math.sqrt(t)) ** 3
        if t <= 0.0:
            x = 1.0 - math.exp((math.log1p(-aa) + math.log(qq) + lbeta) / qq)
        else:
            t = (4.0 * pp + r - 2.0) / t
            x = math.exp((math.log(aa * pp) + lbeta) / pp) if t <= 1.0 else 1.0 - 2.0 / (t + 1.0)
    return 1.0 - x if swap else x


@njit(error_model="numpy")
def qbeta(p, a, b):
    """The beta(a, b) quantile: x with I_x(a, b) = p (a, b > 0; 0 at p = 0, 1 at p = 1).

    Halley steps on f(x) = I_x - p (f' the beta density, f''/f' = (a - 1)/x - (b - 1)/(1 - x)),
    each kept inside the bracket that the signs of f narrow (bisection otherwise), from R's
    start (`_as109_start`; below the normal doubles the tail's leading term x^a / (a B) is
    returned as it is); f is evaluated on the smaller tail (I - p below 1/2, (1 - p) - (1 - I)
    above) so that it does not cancel. Stops when a step is below 2^-52 of x (or of 1 - x)."""
    if not (a > 0.0 and b > 0.0) or not (0.0 <= p <= 1.0):
        return math.nan
    if p == 0.0:
        return 0.0
    if p == 1.0:
        return 1.0
    q = 1.0 - p
    lbeta = _lbeta(a, b)
    lo, hi = 0.0, 1.0
    lx = (math.log(p) + math.log(a) + lbeta) / a  # the lower tail's leading term, log x
    if lx < _MINLOG_NORMAL:  # below the normal doubles: that term is the answer
        return math.exp(lx)
    x = _as109_start(p, q, a, b, lbeta)
    if not (lo < x < hi):
        x = 0.5
    for _ in range(200):
        v, vc = ibeta(a, b, x)
        f = v - p if v <= 0.5 else q - vc
        if f == 0.0:
            return x
        if f < 0.0:
            lo = x
        else:
            hi = x
        xc = 1.0 - x
        pdf = math.exp((a - 1.0) * math.log(x) + (b - 1.0) * math.log1p(-x) - lbeta)
        tail, target = (v, p) if v <= 0.5 else (vc, q)
        if tail > 0.0 and (tail > 1e3 * target or tail < 1e-3 * target):
            # far out in a steep tail (I ~ x^a): Newton on log I against log x (log 1 - I
            # against log 1 - x above) moves by the right factor where x - f / f' would crawl
            if v <= 0.5:
                step = x * -math.expm1(-(math.log(tail) - math.log(target)) * tail / (x * pdf))
            else:
                step = -xc * -math.expm1(-(math.log(tail) - math.log(target)) * tail / (xc * pdf))
        else:
            step = f / pdf
            den = 1.0 - 0.5 * step * ((a - 1.0) / x - (b - 1.0) / xc)
            if den > 0.5:  # Halley where it does not turn the step around, else Newton
                step /= den
        if abs(step) <= 2.0 * _EPS * min(x, xc):  # converged: the last step is below 2 ulps
            return x - step
        new = x - step
        if not (lo < new < hi):  # outside the bracket: bisect it
            new = 0.5 * (lo + hi)
            if new == lo or new == hi:
                return new
        x = new
    return x
