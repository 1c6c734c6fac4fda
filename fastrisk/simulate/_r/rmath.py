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
from scipy import integrate

from fastrisk.simulate._r._kernels import rmath as _rm
from fastrisk.simulate._r._kernels.rmath import r_pnorm
from fastrisk.simulate._r.roptim import EPS, optim_lbfgsb

_LN_SQRT_2PI = 0.918938533204672741780329736406  # log(sqrt(2 pi)), Rmath.h
_1_SQRT_2PI = 0.398942280401432677939946059934  # M_1_SQRT_2PI
_DNORM_CUT = math.sqrt(-2 * math.log(2) * (-1021 + 1 - 53))  # dnorm4's underflow bound


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


def qtruncnorm(p: float, mu: float, sigma: float, a: float = 0.0, b: float = 1.0) -> float:
    """``truncnorm::qtruncnorm(p, a, b, mu, sigma)`` as its C code computes it (a, b finite)."""
    return _rm.qtruncnorm(p, a, b, mu, sigma)


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


def _r_integrate01(f, abs_tol: float, subdivisions: int) -> float:
    """R's ``integrate(f, 0, 1, abs.tol, subdivisions)``: QUADPACK's ``dqags`` (21-point
    Gauss-Kronrod, epsilon-algorithm extrapolation; scipy's ``quad`` runs the same ``qagse``),
    rel.tol = DBL_EPSILON^0.25; R stops with an error on any ``ier`` > 0."""
    res = integrate.quad(f, 0.0, 1.0, epsabs=abs_tol, epsrel=EPS ** 0.25, limit=subdivisions, full_output=1)
    if len(res) > 3:  # scipy appends the message when ier > 0
        raise ValueError(f"integrate: {res[3].splitlines()[0]}")
    return res[0]


def r_dnorm(x, sd: float = 1.0) -> np.ndarray:
    """R 4.2's ``dnorm(x, 0, sd)`` (``dnorm4``): exp(-z^2 / 2) below |z| = 5, beyond it the
    exponent split at 2^-16 for accuracy, 0 where it underflows."""
    z = np.abs(np.atleast_1d(np.asarray(x, dtype=np.float64)) / sd)
    out = np.empty_like(z)
    for i, v in enumerate(z.tolist()):
        if v < 5:
            out[i] = _1_SQRT_2PI * math.exp(-0.5 * v * v) / sd
        elif v > _DNORM_CUT:
            out[i] = 0.0
        else:
            x1 = math.ldexp(float(np.rint(math.ldexp(v, 16))), -16)
            x2 = v - x1
            out[i] = _1_SQRT_2PI / sd * (math.exp(-0.5 * x1 * x1) * math.exp((-0.5 * x2 - x1) * x2))
    return out


def _left_mean_var(a: float, mu: float, sigma: float) -> tuple[float, float]:
    """truncnorm's e_lefttruncnorm and v_lefttruncnorm (truncated below at a)."""
    al = (a - mu) / sigma
    phi, up = float(r_dnorm([al])[0]), _rm.pnorm(-al)
    lam = phi / (1.0 - _rm.pnorm(al))
    return mu + sigma * (phi / up), sigma * sigma * (1.0 - lam * (lam - al))


def norm_moments(mu: float, sigma: float) -> tuple[float, float]:
    """simIReff's ``effCont_norm`` mean and variance: when [0, 1] is not within mu -+ 6 sigma,
    integrals of truncnorm's quantile function (``effContMean`` / ``effContVar``: ``integrate``
    with abs.tol 1e-6 and 1,000 subdivisions; they stop with an error where the quantile
    function is a staircase, Phi(1) - Phi(0) cancelling as mu -> -inf: ValueError, as R
    fails), else truncnorm 1.0-8's ``etruncnorm`` / ``vtruncnorm`` (the variance by Foulley's
    (2000) three-part mixture decomposition), their formulas in linear rather than log space
    (~1e-16 apart)."""
    if 0 < mu - 6.0 * sigma or 1 > mu + 6.0 * sigma:
        e = _r_integrate01(lambda p: _rm.qtruncnorm(p, 0.0, 1.0, mu, sigma), 1e-6, 1000)
        m2 = _r_integrate01(lambda p: _rm.qtruncnorm(p, 0.0, 1.0, mu, sigma) ** 2, 1e-6, 1000)
        return e, m2 - e * e
    al, be = -mu / sigma, (1.0 - mu) / sigma
    phi_a, phi_b = (float(v) for v in r_dnorm([al, be]))
    cdf_a, cdf_b = _rm.pnorm(al), _rm.pnorm(be)
    e2 = mu + sigma * (phi_a - phi_b) / (cdf_b - cdf_a)
    e1 = mu - sigma * (phi_a / cdf_a)  # e_righttruncnorm(0)
    v1 = _left_mean_var(-0.0, -mu, sigma)[1]  # v_righttruncnorm(0) = v_lefttruncnorm(-0, -mu)
    e3, v3 = _left_mean_var(1.0, mu, sigma)
    pi1, pi2, pi3 = cdf_a, cdf_b - cdf_a, _rm.pnorm(-be)
    c1 = pi1 * (v1 + (e1 - mu) * (e1 - mu))
    c3 = pi3 * (v3 + (e3 - mu) * (e3 - mu))
    return e2, (sigma * sigma - c1 - c3) / pi2 - (e2 - mu) * (e2 - mu)


def check_norm_moments(mu: float, sigma: float) -> None:
    """The step after the fit in simIReff's ``effCont_norm`` (`norm_moments`): ValueError where
    its integrals stop with an error in R."""
    norm_moments(mu, sigma)


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


def r_quantile7(x, p: float) -> float:
    """R's ``quantile(x, p)`` (type 7): (1 - h) x[lo] + h x[hi], interpolated only when the two
    order statistics differ."""
    x = np.sort(np.asarray(x, dtype=np.float64))
    index = 1 + (len(x) - 1) * p
    lo, hi = math.floor(index), math.ceil(index)
    q = x[lo - 1]
    h = index - lo
    if index > lo and x[hi - 1] != q:
        q = (1 - h) * q + h * x[hi - 1]
    return float(q)
