"""Log-likelihoods of the bivariate copula families VineCopula's ``BiCopSelect`` fits
(`fastrisk.simulate.copulas`): sum_i log c(a_i, b_i; parameters).

The columns (a, b) come already rotated (`fastrisk.simulate.copulas` applies
pyvinecopulib's rotation to the data); for the Gaussian and t copulas they are the normal /
Student-t scores of the data. The densities are pyvinecopulib's (the simulation's sampler),
written here from each family's CDF and checked against ``pyvinecopulib.Bicop.loglik``
within 1e-9 relative (``tests/test_copula_fits.py``):

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


#: Rows of `data`: the columns (a, b), log a, log b, log(1 - a), log(1 - b), log(-log a),
#: log(-log b), log(-log a - log b) (what the densities need of the data alone).
A, B, LA, LB, L1A, L1B, LLA, LLB, LS = range(9)


@njit(error_model="numpy")
def data(a, b):
    """The (9, n) rows the densities read (`A` ... `LS`), computed once per data set."""
    n = a.shape[0]
    d = np.empty((9, n))
    for i in range(n):
        la, lb = math.log(a[i]), math.log(b[i])
        d[A, i], d[B, i], d[LA, i], d[LB, i] = a[i], b[i], la, lb
        d[L1A, i], d[L1B, i] = math.log1p(-a[i]), math.log1p(-b[i])
        d[LLA, i], d[LLB, i], d[LS, i] = math.log(-la), math.log(-lb), math.log(-la - lb)
    return d


@njit(error_model="numpy")
def _bb1(d, i, th, de):
    au, av = math.expm1(-th * d[LA, i]), math.expm1(-th * d[LB, i])  # u^-th - 1
    lau, lav = math.log(au), math.log(av)
    t = math.exp(de * lau) + math.exp(de * lav)
    lt = math.log(t)
    w = math.exp(lt / de)
    lpsi2 = ((-1.0 / th - 2.0) * math.log1p(w) + (1.0 / de - 2.0) * lt
             + math.log(w * (1.0 + th * de) + th * (de - 1.0)) - 2.0 * math.log(th * de))
    return lpsi2 + 2.0 * math.log(de * th) + (de - 1.0) * (lau + lav) - (th + 1.0) * (d[LA, i] + d[LB, i])


@njit(error_model="numpy")
def _bb6(d, i, th, de):
    pu, pv = math.exp(th * d[L1A, i]), math.exp(th * d[L1B, i])  # (1 - u)^th
    xu, xv = -math.log1p(-pu), -math.log1p(-pv)
    lxu, lxv = math.log(xu), math.log(xv)
    t = math.exp(de * lxu) + math.exp(de * lxv)
    lt = math.log(t)
    la = lt / de
    a = math.exp(la)
    q = -math.expm1(-a)
    lpsi2 = ((1.0 / th - 1.0) * math.log(q) - a + la - 2.0 * lt - math.log(th * de * de)
             + math.log(a * (1.0 + (1.0 - 1.0 / th) * math.exp(-a) / q) + de - 1.0))
    lphi = 2.0 * math.log(de * th) + (de - 1.0) * (lxu + lxv) + (th - 1.0) * (d[L1A, i] + d[L1B, i]) + xu + xv
    return lpsi2 + lphi


@njit(error_model="numpy")
def _bb7(d, i, th, de):
    lu, lv = math.log1p(-math.exp(th * d[L1A, i])), math.log1p(-math.exp(th * d[L1B, i]))  # log(1 - (1 - u)^th)
    t = math.expm1(-de * lu) + math.expm1(-de * lv)
    l1t = math.log1p(t)
    la = -l1t / de  # log a, a = (1 + t)^(-1/de)
    q = -math.expm1(la)  # 1 - a
    lpsi2 = ((1.0 / th - 1.0) * math.log(q) + la - 2.0 * l1t - math.log(th * de * de)
             + math.log(de + 1.0 + (1.0 - 1.0 / th) * math.exp(la) / q))
    lphi = 2.0 * math.log(de * th) - (de + 1.0) * (lu + lv) + (th - 1.0) * (d[L1A, i] + d[L1B, i])
    return lpsi2 + lphi


@njit(error_model="numpy")
def _bb8(d, i, th, de, pd, leta):
    su, sv = 1.0 - de * d[A, i], 1.0 - de * d[B, i]
    lsu, lsv = math.log(su), math.log(sv)
    lgu, lgv = math.log1p(-math.exp(th * lsu)), math.log1p(-math.exp(th * lsv))
    t = -lgu - lgv + 2.0 * leta  # phi(u) + phi(v)
    r = math.exp(leta - t)  # eta e^-t
    q = pd - math.exp(leta) * math.expm1(-t)  # 1 - eta e^-t = (1 - de)^th + eta (1 - e^-t)
    lpsi2 = -math.log(th * de) + (1.0 / th - 2.0) * math.log(q) + leta - t + math.log1p(-r / th)
    return lpsi2 + 2.0 * math.log(th * de) + (th - 1.0) * (lsu + lsv) - lgu - lgv


@njit(error_model="numpy")
def _tawn(d, i, p1, p2, th, lp1, lp2):
    x, y = -d[LA, i], -d[LB, i]
    s = x + y
    w, w1 = y / s, x / s
    G1 = math.exp(th * (lp1 + d[LLA, i] - d[LS, i]))  # (psi1 (1 - w))^th
    G2 = math.exp(th * (lp2 + d[LLB, i] - d[LS, i]))  # (psi2 w)^th
    h = G1 + G2
    hr = math.exp(math.log(h) / th)
    A_ = (1.0 - p1) * w1 + (1.0 - p2) * w + hr
    lx = 1.0 - p1 + hr * (G1 / h) / w1  # A - w A'
    ly = 1.0 - p2 + hr * (G2 / h) / w  # A + (1 - w) A'
    return -s * A_ + s + math.log(lx * ly + (th - 1.0) * hr * (G1 / h) * (G2 / h) / (w * w1 * s))


@njit(error_model="numpy")
def loglik(family, d, p1, p2, p3):
    """sum_i log c(a_i, b_i) of the ``family`` (the constants above) with parameters
    (p1, p2, p3): (rho,) Gaussian; (rho, nu) t; (theta,) Clayton, Gumbel, Frank, Joe;
    (theta, delta) BB1, BB6, BB7, BB8; (psi1, psi2, theta) Tawn. ``d``: `data` of the
    rotated pseudo-observations (the Gaussian and t copulas read only its first two rows,
    which hold the data's normal or t scores). NaN or infinite where a density is 0,
    infinite or undefined (the caller floors it)."""
    n = d.shape[1]
    out = 0.0
    if family == INDEP:
        return out
    if family == GAUSSIAN:
        r2 = 1.0 - p1 * p1
        c = -0.5 * math.log(r2)
        for i in range(n):
            x, y = d[A, i], d[B, i]
            out += c - (p1 * p1 * (x * x + y * y) - 2.0 * p1 * x * y) / (2.0 * r2)
        return out
    if family == STUDENT:
        r2 = 1.0 - p1 * p1
        c = (math.lgamma(0.5 * (p2 + 2.0)) + math.lgamma(0.5 * p2) - 2.0 * math.lgamma(0.5 * (p2 + 1.0))
             - 0.5 * math.log(r2))
        for i in range(n):
            x, y = d[A, i], d[B, i]
            out += (c - 0.5 * (p2 + 2.0) * math.log1p((x * x + y * y - 2.0 * p1 * x * y) / (p2 * r2))
                    + 0.5 * (p2 + 1.0) * (math.log1p(x * x / p2) + math.log1p(y * y / p2)))
        return out
    if family == CLAYTON:
        c = math.log1p(p1)
        for i in range(n):
            lu, lv = d[LA, i], d[LB, i]
            z = math.exp(-p1 * lu) + math.exp(-p1 * lv) - 1.0
            out += c - (1.0 + p1) * (lu + lv) - (2.0 + 1.0 / p1) * math.log(z)
        return out
    if family == GUMBEL:
        for i in range(n):
            t = math.exp(p1 * d[LLA, i]) + math.exp(p1 * d[LLB, i])  # (-log u)^th + (-log v)^th
            lt = math.log(t)
            s = math.exp(lt / p1)
            out += (-s - d[LA, i] - d[LB, i] + (2.0 / p1 - 2.0) * lt + (p1 - 1.0) * (d[LLA, i] + d[LLB, i])
                    + math.log1p((p1 - 1.0) / s))
        return out
    if family == FRANK:
        if p1 == 0.0:  # the independence copula, the limit (pyvinecopulib's value)
            return out
        c = math.log(p1 * -math.expm1(-p1))
        for i in range(n):  # the denominator's two terms have one sign: no cancellation
            a, b = d[A, i], d[B, i]
            den = math.exp(-p1 * a) * math.expm1(-p1 * b) + math.exp(-p1 * b) * math.expm1(-p1 * (1.0 - b))
            out += c - p1 * (a + b) - 2.0 * math.log(abs(den))
        return out
    if family == JOE:
        for i in range(n):
            pu, pv = math.exp(p1 * d[L1A, i]), math.exp(p1 * d[L1B, i])  # (1 - u)^th
            s = pu + pv - pu * pv
            out += ((1.0 / p1 - 2.0) * math.log(s) + (p1 - 1.0) * (d[L1A, i] + d[L1B, i])
                    + math.log(p1 - 1.0 + s))
        return out
    if family == BB1:
        for i in range(n):
            out += _bb1(d, i, p1, p2)
    elif family == BB6:
        for i in range(n):
            out += _bb6(d, i, p1, p2)
    elif family == BB7:
        for i in range(n):
            out += _bb7(d, i, p1, p2)
    elif family == BB8:
        pd = math.exp(p1 * math.log1p(-p2)) if p2 < 1.0 else 0.0  # (1 - de)^th (0 at VineCopula's bound de = 1)
        leta = math.log1p(-pd)  # log eta, eta = 1 - (1 - de)^th
        for i in range(n):
            out += _bb8(d, i, p1, p2, pd, leta)
    else:
        lp1, lp2 = math.log(p1), math.log(p2)
        for i in range(n):
            out += _tawn(d, i, p1, p2, p3, lp1, lp2)
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
def loglik_at(family, ttype, d, x0, x1, floor):
    """`loglik` at VineCopula's (par, par2) magnitudes ``(x0, x1)`` (Tawn: theta, psi; type 1
    psi1 = psi, psi2 = 1, type 2 psi1 = 1, psi2 = psi), ``floor`` where not finite or below it."""
    if family == TAWN:
        v = loglik(TAWN, d, x1, 1.0, x0) if ttype == 1 else loglik(TAWN, d, 1.0, x1, x0)
    else:
        v = loglik(family, d, x0, x1, 0.0)
    return v if math.isfinite(v) and v > floor else floor


@njit(error_model="numpy")
def _step(x, lo, hi, k, up):
    """x[k] moved by R's ``ndeps`` = 1e-3, up or down, cut at the bound (``fmingr``)."""
    return min(x[k] + 1e-3, hi[k]) if up else max(x[k] - 1e-3, lo[k])


@njit(error_model="numpy")
def objective(family, ttype, d, x, lo, hi, floor, g):
    """-loglik(x) (`loglik_at`) and, into ``g``, its central-difference gradient as R's
    ``optim`` computes it (``fmingr`` in R's ``src/library/stats/src/optim.c``: ndeps 1e-3,
    a step cut at the bound, divided by the two half-steps' sum) for one or two parameters."""
    two = x.shape[0] > 1
    x1 = x[1] if two else 0.0
    f = -loglik_at(family, ttype, d, x[0], x1, floor)
    up, dn = _step(x, lo, hi, 0, True), _step(x, lo, hi, 0, False)
    g[0] = (-loglik_at(family, ttype, d, up, x1, floor) + loglik_at(family, ttype, d, dn, x1, floor)) / (up - dn)
    if two:
        up, dn = _step(x, lo, hi, 1, True), _step(x, lo, hi, 1, False)
        g[1] = ((-loglik_at(family, ttype, d, x[0], up, floor) + loglik_at(family, ttype, d, x[0], dn, floor))
                / (up - dn))
    return f


@njit(error_model="numpy")
def objective_t(z, dz, rho, nu, cpsi, floor, g):
    """-loglik of the t copula at (rho, nu) and, into ``g``, its gradient, analytic as
    VineCopula's ``gr_LL`` (``BiCopDeriv(deriv = "par" / "par2", log = TRUE)``). ``z``
    (2, n): the data's t scores x = t_nu^-1(u); ``dz``: their derivatives dx/dnu; ``cpsi``:
    psi((nu + 2) / 2) / 2 + psi(nu / 2) / 2 - psi((nu + 1) / 2). With r = 1 - rho^2,
    Q = x^2 + y^2 - 2 rho x y, D = nu r + Q, per point:
    d/drho = -(nu + 1) rho / r + (nu + 2) (nu rho + x y) / D;
    d/dnu = cpsi - log(D / (nu r)) / 2 + (nu + 2) Q / (2 nu D) + (log(1 + x^2 / nu)
    + log(1 + y^2 / nu)) / 2 - (nu + 1) / 2 (x^2 / (nu (nu + x^2)) + y^2 / (nu (nu + y^2)))
    + dx/dnu ((nu + 1) x / (nu + x^2) - (nu + 2) (x - rho y) / D) + (the same in y)."""
    f = -loglik_at(STUDENT, 0, z, rho, nu, floor)
    r = 1.0 - rho * rho
    gr = gn = 0.0
    for i in range(z.shape[1]):
        x, y = z[0, i], z[1, i]
        q = x * x + y * y - 2.0 * rho * x * y
        den = nu * r + q
        gr += -(nu + 1.0) * rho / r + (nu + 2.0) * (nu * rho + x * y) / den
        gn += (cpsi - 0.5 * math.log(den / (nu * r)) + (nu + 2.0) * q / (2.0 * nu * den)
               + 0.5 * (math.log1p(x * x / nu) + math.log1p(y * y / nu))
               - 0.5 * (nu + 1.0) * (x * x / (nu * (nu + x * x)) + y * y / (nu * (nu + y * y)))
               + dz[0, i] * ((nu + 1.0) * x / (nu + x * x) - (nu + 2.0) * (x - rho * y) / den)
               + dz[1, i] * ((nu + 1.0) * y / (nu + y * y) - (nu + 2.0) * (y - rho * x) / den))
    g[0], g[1] = -gr, -gn
    return f
