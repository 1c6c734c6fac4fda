"""R's arithmetic for simIReff's truncated-normal margin fit (``effCont_norm``), so that the fit
succeeds or fails exactly where R's does.

The fit is ``MASS::fitdistr(x, function(xx, mu, sigma) truncnorm::dtruncnorm(xx, 0, 1, mu,
sigma), start = list(mu = mean(x), sigma = sd(x)), lower = c(-Inf, 0.05), upper = c(Inf, Inf))``.
Where the likelihood has no finite maximum (it keeps rising as mu -> -inf) whether R's L-BFGS-B
stops turns on the objective's last bits, so each step is computed as R computes it:

- `r_mean`, `r_sd`: R's ``mean`` (long-double sum, then the mean of the residuals added back,
  ``summary.c``) and ``sd`` (``cov.c``: the same mean, then a long-double sum of squared
  deviations over n - 1);
- `pnorm`: R's ``pnorm_both`` (R 4.2), Cody's rational Chebyshev approximations (W. J. Cody
  1969, Math. Comp. 23; ACM TOMS 715, 1993) in R's order of operations;
- `truncnorm_nll`: ``-sum(log(dtruncnorm(x, 0, 1, mu, sigma)))``: truncnorm's C
  ``do_dtruncnorm`` (version 1.0-8: exp(log dnorm(z) - log(sigma (Phi(b) - Phi(a)))), density
  1 / (b - a) where that log is not finite), R's ``dnorm(log = TRUE)`` = -(log sqrt(2 pi) +
  z^2 / 2), C's exp and log (Python's math module calls the same libm), and R's ``sum``
  (sequential, in x86-64's 80-bit long double);
- `fitdistr_norm`: fitdistr's steps: ``optim`` by R's own L-BFGS-B (`optim_lbfgsb`, defaults
  factr 1e7, pgtol 0, maxit 100, ndeps 1e-3), "optimization failed" unless convergence is 0,
  then ``optimhess`` (central differences of the numerical gradient, no bounds, symmetrised)
  and ``solve`` of it (LAPACK ``dgesv``: error if exactly singular or if the reciprocal
  condition number is below DBL_EPSILON, R's ``solve.default``).
"""

from __future__ import annotations

import math

import numpy as np

from fastrisk.simulate.roptim import EPS, optim_lbfgsb

_LN_SQRT_2PI = 0.918938533204672741780329736406  # log(sqrt(2 pi)), Rmath.h
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


def _ldsum(v) -> float:
    """R's ``sum`` of doubles: sequential accumulation in long double, rounded once."""
    return float(np.cumsum(np.asarray(v, dtype=np.longdouble))[-1]) if len(v) else 0.0


def r_mean(x) -> float:
    """R's ``mean`` of a double vector (``summary.c``'s ``real_mean``)."""
    x = np.asarray(x, dtype=np.float64)
    n = np.longdouble(len(x))
    s = np.cumsum(x.astype(np.longdouble))[-1] / n
    if np.isfinite(s):
        s = s + np.cumsum(x.astype(np.longdouble) - s)[-1] / n
    return float(s)


def r_sd(x) -> float:
    """R's ``sd`` (``sqrt(var(x))``; ``cov.c``: the mean as `r_mean`, kept in long double,
    then the long-double sum of squared deviations over n - 1)."""
    x = np.asarray(x, dtype=np.float64)
    lx = x.astype(np.longdouble)
    n = np.longdouble(len(x))
    m = np.cumsum(lx)[-1] / n
    if np.isfinite(m):
        m = m + np.cumsum(lx - m)[-1] / n
    d = lx - m
    return math.sqrt(float(np.cumsum(d * d)[-1] / (n - 1)))


def _trunc16(v: float) -> float:
    return math.trunc(v * 16.0) / 16.0


def pnorm(x: float) -> float:
    """R's ``pnorm(x)`` (lower tail, not log) for a standardised x, ``pnorm_both`` of R 4.2."""
    if math.isnan(x):
        return x
    y = abs(x)
    if y <= 0.67448975:
        if y > EPS * 0.5:
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


def r_pnorm(q: float, mean: float, sd: float) -> float:
    """R's ``pnorm(q, mean, sd)``: standardise as ``pnorm5``, infinities to 0 / 1."""
    z = (q - mean) / sd
    if math.isinf(z):
        return 1.0 if z > 0 else 0.0
    return pnorm(z)


def truncnorm_nll(x, mu: float, sigma: float, a: float = 0.0, b: float = 1.0) -> float:
    """``-sum(log(truncnorm::dtruncnorm(x, a, b, mu, sigma)))`` as R computes it (x in [a, b])."""
    c3 = sigma * (r_pnorm(b, mu, sigma) - r_pnorm(a, mu, sigma))
    lc3 = math.log(c3) if c3 > 0 else (-math.inf if c3 == 0 else math.nan)
    if not math.isfinite(lc3):
        return -_ldsum([math.log(1.0 / (b - a))] * len(x))
    out = []
    for xi in x:
        z = abs((xi - mu) / sigma)
        c4 = -(_LN_SQRT_2PI + 0.5 * z * z + 0.0) if z < 2 * 1.3407807929942596e154 else -math.inf
        d = math.exp(c4 - lc3)
        out.append(math.log(d) if d > 0 else -math.inf)
    return -_ldsum(out)


def _gradient_free(fn, x, ndeps: float) -> list:
    """R's ``fmingr`` without bounds (as ``optimhess`` calls it)."""
    p, g = list(x), []
    for i in range(len(x)):
        eps = ndeps
        p[i] = x[i] + eps
        v1 = fn(p)
        p[i] = x[i] - eps
        v2 = fn(p)
        gi = (v1 - v2) / (2 * eps)
        if not math.isfinite(gi):
            raise ValueError(f"non-finite finite-difference value [{i + 1}]")
        g.append(gi)
        p[i] = x[i]
    return g


def r_optimhess(fn, par, ndeps: float = 1e-3) -> list:
    """R's ``optimhess(par, fn)`` (``optim(hessian = TRUE)``): central differences of the
    numerical gradient, then symmetrised as (H + H') / 2."""
    n = len(par)
    dpar = list(par)
    h = [[0.0] * n for _ in range(n)]
    for i in range(n):
        dpar[i] = dpar[i] + ndeps
        df1 = _gradient_free(fn, dpar, ndeps)
        dpar[i] = dpar[i] - 2 * ndeps
        df2 = _gradient_free(fn, dpar, ndeps)
        for j in range(n):
            h[i][j] = (df1[j] - df2[j]) / (2 * ndeps)
        dpar[i] = dpar[i] + ndeps
    for i in range(n):
        for j in range(i):
            t = 0.5 * (h[i][j] + h[j][i])
            h[i][j] = h[j][i] = t
    return h


def r_solve2(h) -> list:
    """R's ``solve(h)`` for a 2 x 2 matrix: LAPACK ``dgesv`` (LU with partial pivoting); errors
    as ``La_solve``: exactly singular, or the reciprocal 1-norm condition number below
    DBL_EPSILON ("system is computationally singular")."""
    (a, b), (c, d) = h
    if not all(math.isfinite(v) for v in (a, b, c, d)):
        raise ValueError("non-finite Hessian")
    if abs(c) > abs(a):
        (a, b), (c, d) = (c, d), (a, b)
        swap = True
    else:
        swap = False
    if a == 0.0:
        raise ValueError("Lapack routine dgesv: system is exactly singular: U[1,1] = 0")
    l21 = c / a
    u22 = d - l21 * b
    if u22 == 0.0:
        raise ValueError("Lapack routine dgesv: system is exactly singular: U[2,2] = 0")
    # inverse of P' L U, columns of the identity
    inv = [[0.0, 0.0], [0.0, 0.0]]
    for k in range(2):
        e = [1.0 if r == k else 0.0 for r in range(2)]
        if swap:
            e = [e[1], e[0]]
        y2 = e[1] - l21 * e[0]
        x2 = y2 / u22
        x1 = (e[0] - b * x2) / a
        inv[0][k], inv[1][k] = x1, x2
    anorm = max(abs(h[0][0]) + abs(h[1][0]), abs(h[0][1]) + abs(h[1][1]))
    inorm = max(abs(inv[0][0]) + abs(inv[1][0]), abs(inv[0][1]) + abs(inv[1][1]))
    rcond = 1.0 / (anorm * inorm) if anorm > 0 and inorm > 0 else 0.0
    if rcond < EPS:
        raise ValueError(f"system is computationally singular: reciprocal condition number = {rcond:g}")
    return inv


def optim_norm(x, lower_sigma: float = 0.05):
    """fitdistr's ``optim`` call for simIReff's truncated normal: R's L-BFGS-B from (mean(x),
    sd(x)), sigma >= ``lower_sigma``; the `OptimResult` (ValueError where optim itself errors)."""
    x = [float(v) for v in x]
    return optim_lbfgsb(lambda p: truncnorm_nll(x, p[0], p[1]), [r_mean(x), r_sd(x)],
                        [-math.inf, lower_sigma], [math.inf, math.inf])


def fitdistr_norm(x, lower_sigma: float = 0.05):
    """simIReff's ``effCont_norm`` fit as R runs it: (mu, sigma, loglik), or ValueError where R
    stops with an error (optim's, fitdistr's "optimization failed", or solve's)."""
    x = [float(v) for v in x]

    def fn(p):
        return truncnorm_nll(x, p[0], p[1])

    res = optim_norm(x, lower_sigma)
    if res.convergence > 0:
        raise ValueError("optimization failed")
    r_solve2(r_optimhess(fn, list(res.par)))
    return res.par[0], res.par[1], -res.value
