"""Log-likelihoods of the bivariate copula families VineCopula's ``BiCopSelect`` fits
(`fastrisk.simulate.copulas`): sum_i log c(a_i, b_i; parameters).

The columns (a, b) come already rotated (`fastrisk.simulate.copulas` applies
pyvinecopulib's rotation to the data); for the Gaussian and t copulas they are the normal /
Student-t scores of the data. The densities are those of VineCopula (``src/likelihood.c``)
and vinecopulib (``include/vinecopulib/bicop/*.hpp``), checked against
``pyvinecopulib.Bicop.loglik`` to ~1e-10 relative (``tests/test_copula_fits.py``):

- Gaussian (rho): -log(1 - rho^2) / 2 - (rho^2 (x^2 + y^2) - 2 rho x y) / (2 (1 - rho^2));
- t (rho, nu): lgamma((nu + 2) / 2) + lgamma(nu / 2) - 2 lgamma((nu + 1) / 2)
  - log(1 - rho^2) / 2 - (nu + 2) / 2 log(1 + (x^2 + y^2 - 2 rho x y) / (nu (1 - rho^2)))
  + (nu + 1) / 2 (log(1 + x^2 / nu) + log(1 + y^2 / nu));
- Frank, Gumbel and Joe: their closed forms (Joe 2014, "Dependence Modeling with Copulas",
  sections 4.5-4.7); Frank's denominator (1 - e^-th) - (1 - e^-th u)(1 - e^-th v) as
  e^-th u (1 - e^-th v) + e^-th v (1 - e^-th (1 - v)), two terms of one sign;
- Clayton and the BB families as Archimedean copulas C(u, v) = psi(phi(u) + phi(v)):
  log c = log psi''(t) + log(-phi'(u)) + log(-phi'(v)), t = phi(u) + phi(v), with the
  generators of Joe (2014, sections 4.6, 4.17-4.20): Clayton phi = (u^-th - 1) / th; BB1
  (u^-th - 1)^de; BB6 (-log(1 - (1 - u)^th))^de; BB7 (1 - (1 - u)^th)^-de - 1; BB8
  -log((1 - (1 - de u)^th) / (1 - (1 - de)^th));
- Tawn (psi1, psi2, theta): the extreme-value copula C = exp(-s A(w)), s = -log u - log v,
  w = -log v / s, with Pickands' A(w) = (1 - psi1) (1 - w) + (1 - psi2) w + h^(1/theta),
  h = G1 + G2, G1 = (psi1 (1 - w))^theta, G2 = (psi2 w)^theta (vinecopulib's ``TawnBicop``):
  c = C / (u v) (l_x l_y + w (1 - w) A''(w) / s) with l_x = A - w A', l_y = A + (1 - w) A',
  written without cancellation as l_x = 1 - psi1 + h^(1/theta) G1 / (h (1 - w)),
  l_y = 1 - psi2 + h^(1/theta) G2 / (h w), w (1 - w) A'' = (theta - 1) h^(1/theta) G1 G2 /
  (h^2 w (1 - w)) (the textbook form loses every digit at theta ~ 20).

Where pyvinecopulib's own densities lose digits (BB6 and BB8 near the corners of VineCopula's
box, Tawn at theta ~ 20, the Gaussian at |rho| ~ 1 on data of the other sign), these are
checked against the mixed derivative of the textbook CDF at 50 digits instead.
"""

from __future__ import annotations

import math

import numpy as np

from fastrisk._kernels._jit import njit

INDEP, GAUSSIAN, STUDENT, CLAYTON, GUMBEL, FRANK, JOE, BB1, BB6, BB7, BB8, TAWN = range(12)


@njit(error_model="numpy")
def _bb1(u, v, th, de):
    au, av = math.expm1(-th * math.log(u)), math.expm1(-th * math.log(v))  # u^-th - 1
    t = au ** de + av ** de
    w = t ** (1.0 / de)
    lpsi2 = ((-1.0 / th - 2.0) * math.log1p(w) + (1.0 / de - 2.0) * math.log(t)
             + math.log(w * (1.0 + th * de) + th * (de - 1.0)) - 2.0 * math.log(th * de))
    return (lpsi2 + 2.0 * math.log(de * th) + (de - 1.0) * (math.log(au) + math.log(av))
            - (th + 1.0) * (math.log(u) + math.log(v)))


@njit(error_model="numpy")
def _bb6(u, v, th, de):
    ub, vb = 1.0 - u, 1.0 - v
    pu, pv = ub ** th, vb ** th
    xu, xv = -math.log1p(-pu), -math.log1p(-pv)
    t = xu ** de + xv ** de
    a = t ** (1.0 / de)
    b = math.exp(-a)
    q = -math.expm1(-a)
    lpsi2 = ((1.0 / th - 1.0) * math.log(q) - a + math.log(a) - 2.0 * math.log(t) - math.log(th * de * de)
             + math.log(a * (1.0 + (1.0 - 1.0 / th) * b / q) + de - 1.0))
    lphi = (2.0 * math.log(de * th) + (de - 1.0) * (math.log(xu) + math.log(xv))
            + (th - 1.0) * (math.log(ub) + math.log(vb)) - math.log1p(-pu) - math.log1p(-pv))
    return lpsi2 + lphi


@njit(error_model="numpy")
def _bb7(u, v, th, de):
    ub, vb = 1.0 - u, 1.0 - v
    lu, lv = math.log1p(-ub ** th), math.log1p(-vb ** th)  # log(1 - (1 - u)^th)
    t = math.expm1(-de * lu) + math.expm1(-de * lv)
    a = (1.0 + t) ** (-1.0 / de)
    q = -math.expm1(-math.log1p(t) / de)  # 1 - a
    lpsi2 = ((1.0 / th - 1.0) * math.log(q) + math.log(a) - math.log1p(t) - math.log(th * de * de * (1.0 + t))
             + math.log(de + 1.0 + (1.0 - 1.0 / th) * a / q))
    lphi = 2.0 * math.log(de * th) - (de + 1.0) * (lu + lv) + (th - 1.0) * (math.log(ub) + math.log(vb))
    return lpsi2 + lphi


@njit(error_model="numpy")
def _bb8(u, v, th, de):
    pd = math.exp(th * math.log1p(-de))  # (1 - de)^th
    leta = math.log1p(-pd)  # log eta, eta = 1 - (1 - de)^th
    su, sv = 1.0 - de * u, 1.0 - de * v
    lgu, lgv = math.log1p(-math.exp(th * math.log(su))), math.log1p(-math.exp(th * math.log(sv)))
    t = -lgu - lgv + 2.0 * leta  # phi(u) + phi(v)
    r = math.exp(leta - t)  # eta e^-t
    q = pd - math.exp(leta) * math.expm1(-t)  # 1 - eta e^-t = (1 - de)^th + eta (1 - e^-t)
    lpsi2 = -math.log(th * de) + (1.0 / th - 2.0) * math.log(q) + leta - t + math.log1p(-r / th)
    lphi = 2.0 * math.log(th * de) + (th - 1.0) * (math.log(su) + math.log(sv)) - lgu - lgv
    return lpsi2 + lphi


@njit(error_model="numpy")
def _tawn(u, v, p1, p2, th):
    x, y = -math.log(u), -math.log(v)
    s = x + y
    w = y / s
    w1 = 1.0 - w
    G1, G2 = (p1 * w1) ** th, (p2 * w) ** th
    h = G1 + G2
    hr = h ** (1.0 / th)
    A = (1.0 - p1) * w1 + (1.0 - p2) * w + hr
    lx = 1.0 - p1 + hr * (G1 / h) / w1  # A - w A'
    ly = 1.0 - p2 + hr * (G2 / h) / w  # A + (1 - w) A'
    return -s * A + s + math.log(lx * ly + (th - 1.0) * hr * (G1 / h) * (G2 / h) / (w * w1 * s))


@njit(error_model="numpy")
def loglik(family, a, b, p1, p2, p3):
    """sum_i log c(a_i, b_i) of the ``family`` (the constants above) with parameters
    (p1, p2, p3): (rho,) Gaussian; (rho, nu) t; (theta,) Clayton, Gumbel, Frank, Joe;
    (theta, delta) BB1, BB6, BB7, BB8; (psi1, psi2, theta) Tawn. ``a``, ``b``: the rotated
    pseudo-observations (their normal or t scores for the Gaussian and t copulas). NaN or
    infinite where a density is 0, infinite or undefined (the caller floors it)."""
    n = a.shape[0]
    out = 0.0
    if family == INDEP:
        return out
    if family == GAUSSIAN:
        r2 = 1.0 - p1 * p1
        c = -0.5 * math.log(r2)
        for i in range(n):
            x, y = a[i], b[i]
            out += c - (p1 * p1 * (x * x + y * y) - 2.0 * p1 * x * y) / (2.0 * r2)
        return out
    if family == STUDENT:
        r2 = 1.0 - p1 * p1
        c = (math.lgamma(0.5 * (p2 + 2.0)) + math.lgamma(0.5 * p2) - 2.0 * math.lgamma(0.5 * (p2 + 1.0))
             - 0.5 * math.log(r2))
        for i in range(n):
            x, y = a[i], b[i]
            out += (c - 0.5 * (p2 + 2.0) * math.log1p((x * x + y * y - 2.0 * p1 * x * y) / (p2 * r2))
                    + 0.5 * (p2 + 1.0) * (math.log1p(x * x / p2) + math.log1p(y * y / p2)))
        return out
    if family == CLAYTON:
        c = math.log1p(p1)
        for i in range(n):
            lu, lv = math.log(a[i]), math.log(b[i])
            z = math.exp(-p1 * lu) + math.exp(-p1 * lv) - 1.0
            out += c - (1.0 + p1) * (lu + lv) - (2.0 + 1.0 / p1) * math.log(z)
        return out
    if family == GUMBEL:
        for i in range(n):
            x, y = -math.log(a[i]), -math.log(b[i])
            t = x ** p1 + y ** p1
            s = t ** (1.0 / p1)
            out += (-s + x + y + (2.0 / p1 - 2.0) * math.log(t) + (p1 - 1.0) * (math.log(x) + math.log(y))
                    + math.log1p((p1 - 1.0) / s))
        return out
    if family == FRANK:
        if p1 == 0.0:  # the independence copula, the limit (pyvinecopulib's value)
            return out
        c = math.log(p1 * -math.expm1(-p1))
        for i in range(n):  # the denominator's two terms have one sign: no cancellation
            d = math.exp(-p1 * a[i]) * math.expm1(-p1 * b[i]) + math.exp(-p1 * b[i]) * math.expm1(-p1 * (1.0 - b[i]))
            out += c - p1 * (a[i] + b[i]) - 2.0 * math.log(abs(d))
        return out
    if family == JOE:
        for i in range(n):
            ub, vb = 1.0 - a[i], 1.0 - b[i]
            pu, pv = ub ** p1, vb ** p1
            s = pu + pv - pu * pv
            out += (1.0 / p1 - 2.0) * math.log(s) + (p1 - 1.0) * (math.log(ub) + math.log(vb)) + math.log(p1 - 1.0 + s)
        return out
    for i in range(n):
        if family == BB1:
            out += _bb1(a[i], b[i], p1, p2)
        elif family == BB6:
            out += _bb6(a[i], b[i], p1, p2)
        elif family == BB7:
            out += _bb7(a[i], b[i], p1, p2)
        elif family == BB8:
            out += _bb8(a[i], b[i], p1, p2)
        else:
            out += _tawn(a[i], b[i], p1, p2, p3)
    return out


@njit(error_model="numpy")
def rotated(u, rotation):
    """pyvinecopulib's rotation of the data (n, 2) -> columns (a, b): 0: (u1, u2); 90:
    (u2, 1 - u1); 180: (1 - u1, 1 - u2); 270: (1 - u2, u1)."""
    n = u.shape[0]
    out = np.empty((2, n))
    for i in range(n):
        u1, u2 = u[i, 0], u[i, 1]
        if rotation == 90:
            out[0, i], out[1, i] = u2, 1.0 - u1
        elif rotation == 180:
            out[0, i], out[1, i] = 1.0 - u1, 1.0 - u2
        elif rotation == 270:
            out[0, i], out[1, i] = 1.0 - u2, u1
        else:
            out[0, i], out[1, i] = u1, u2
    return out


@njit(error_model="numpy")
def _floored(family, ttype, a, b, x0, x1, floor):
    """`loglik` at VineCopula's (par, par2) magnitudes ``(x0, x1)`` (Tawn: theta, psi; type 1
    psi1 = psi, psi2 = 1, type 2 psi1 = 1, psi2 = psi), ``floor`` where not finite or below it."""
    if family == TAWN:
        v = loglik(TAWN, a, b, x1, 1.0, x0) if ttype == 1 else loglik(TAWN, a, b, 1.0, x1, x0)
    else:
        v = loglik(family, a, b, x0, x1, 0.0)
    return v if math.isfinite(v) and v > floor else floor


@njit(error_model="numpy")
def _step(x, lo, hi, k, up):
    """x[k] moved by R's ``ndeps`` = 1e-3, up or down, cut at the bound (``fmingr``)."""
    return min(x[k] + 1e-3, hi[k]) if up else max(x[k] - 1e-3, lo[k])


@njit(error_model="numpy")
def objective(family, ttype, a, b, x, lo, hi, floor, g):
    """-loglik(x) (`_floored`) and, into ``g``, its central-difference gradient as R's
    ``optim`` computes it (``fmingr`` in R's ``src/library/stats/src/optim.c``: ndeps 1e-3,
    a step cut at the bound, divided by the two half-steps' sum) for one or two parameters."""
    two = x.shape[0] > 1
    x1 = x[1] if two else 0.0
    f = -_floored(family, ttype, a, b, x[0], x1, floor)
    up, dn = _step(x, lo, hi, 0, True), _step(x, lo, hi, 0, False)
    g[0] = (-_floored(family, ttype, a, b, up, x1, floor) + _floored(family, ttype, a, b, dn, x1, floor)) / (up - dn)
    if two:
        up, dn = _step(x, lo, hi, 1, True), _step(x, lo, hi, 1, False)
        g[1] = ((-_floored(family, ttype, a, b, x[0], up, floor) + _floored(family, ttype, a, b, x[0], dn, floor))
                / (up - dn))
    return f


@njit(error_model="numpy")
def objective_t(z, x, lo, hi, floor, g):
    """`objective` of the t copula at (rho, nu) = ``x``: ``z`` (3, 2, n) holds the data's
    t scores at nu and at nu's two difference steps (`_step`), computed by the caller."""
    rho, nu = x[0], x[1]
    f = -_floored(STUDENT, 0, z[0, 0], z[0, 1], rho, nu, floor)
    up, dn = _step(x, lo, hi, 0, True), _step(x, lo, hi, 0, False)
    g[0] = (-_floored(STUDENT, 0, z[0, 0], z[0, 1], up, nu, floor)
            + _floored(STUDENT, 0, z[0, 0], z[0, 1], dn, nu, floor)) / (up - dn)
    up, dn = _step(x, lo, hi, 1, True), _step(x, lo, hi, 1, False)
    g[1] = (-_floored(STUDENT, 0, z[1, 0], z[1, 1], rho, up, floor)
            + _floored(STUDENT, 0, z[2, 0], z[2, 1], rho, dn, floor)) / (up - dn)
    return f
