"""The copulas of Urbano, Lima & Hanjalic (SIGIR 2019), as VineCopula's ``BiCopSelect`` fits
them (repositories ``julian-urbano/sigir2019-statistical``, "the study", and VineCopula 2.1.8):

- copulas (`fit_copula`): ``R/03-bicops.R``: ``pobs(x, ties.method = "random")`` of
  runs (i, j), i < j (the study's draw of those ties, on forked workers, cannot be repeated;
  ours is seeded from the scores and ``ties_seed``, `ties_base_seed`), then ``BiCopSelect(u1, u2, selectioncrit = "AIC")`` with its defaults
  (VineCopula, ``R/BiCopSelect.R``, ``R/BiCopEst.R``, ``R/BiCop.R``): the independence
  copula and every family of ``posfams`` (empirical Kendall's tau > 0) or ``negfams`` (< 0)
  with their rotations -- Gaussian, t, Clayton, Gumbel, Frank, Joe, BB1, BB6, BB7, BB8 and
  the two-parameter Tawn types 1 and 2 (`VC_FAMILIES`) -- each by maximum likelihood in the
  bounds of ``MLE_intern`` / ``MLE_intern_Tawn`` (`VC_BOUNDS`, `_fit_family`), the lowest
  AIC = -2 loglik + 2 k wins (`select_copula`). Before fitting, ``BiCopSelect``'s default
  ``presel = TRUE`` swaps ``todo_fams`` for ``todo_fams_presel`` (`preselect`): the
  families whose tail asymmetry contradicts the data's are not fitted. Sampling is
  ``pyvinecopulib``'s; the log-likelihoods maximised are fastrisk's kernels
  (`fastrisk._kernels.copulas`), pyvinecopulib's densities (Tawn type 1 is its Tawn with
  psi2 = 1, type 2 with psi1 = 1). Deviation: parameters beyond what ``pyvinecopulib``
  represents (Clayton > 28, Gumbel > 50, Frank |theta| > 35, Joe > 30: Frank's binds from
  |tau| ~ 0.89, the others above 0.93; 11 of the 52,538 bundled pairs, always toward weaker
  dependence) are capped there; the others are listed in `_fit_family`.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import scipy
from scipy import optimize, special
from scipy.optimize import _lbfgsb

from fastrisk._kernels import copulas as _k
from fastrisk._runtime.extras import require
from fastrisk.measures.agreement import kendall_tau as _tau_b
from fastrisk.simulate.collections import pseudo_observations


def pobs(x, y, seed: int) -> np.ndarray:
    """(n, 2) pseudo-observations rank / (n + 1), ties broken at random (``pobs(ties.method = "random")``)."""
    return pseudo_observations(x, y, seed)


#: VineCopula's family codes (``allfams``, ``R/BiCop.R``) -> (pyvinecopulib family, rotation,
#: Tawn type or 0). Type 1 Tawn (104, ...) is pyvinecopulib's Tawn with psi2 = 1, type 2
#: (204, ...) with psi1 = 1 (``src/likelihood.c`` calls ``TawnPDF(u, v, theta, par2, 1)``
#: for 104 and ``(theta, 1, par2)`` for 204; the densities agree to 1e-5, see the tests).
#: Rotations: 1x = 180, 2x = 90, 3x = 270 degrees.
VC_FAMILIES = {
    0: ("indep", 0, 0), 1: ("gaussian", 0, 0), 2: ("student", 0, 0), 5: ("frank", 0, 0),
    **{b + 10 * k: (name, r, 0) for b, name in ((3, "clayton"), (4, "gumbel"), (6, "joe"), (7, "bb1"),
                                              (8, "bb6"), (9, "bb7"), (10, "bb8"))
       for k, r in enumerate((0, 180, 90, 270))},
    **{100 * t + 4 + 10 * k: ("tawn", r, t) for t in (1, 2) for k, r in enumerate((0, 180, 90, 270))},
}
#: ``posfams`` and ``negfams`` (``R/BiCop.R``): the families BiCopSelect fits when the
#: empirical Kendall's tau is positive / negative (``todo_fams``), with the independence copula.
VC_POSITIVE = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 14, 16, 17, 18, 19, 20, 104, 114, 204, 214)
VC_NEGATIVE = (0, 1, 2, 5, 23, 24, 26, 27, 28, 29, 30, 33, 34, 36, 37, 38, 39, 40, 124, 134, 224, 234)
#: VineCopula's families with more dependence near one corner (u, v) of the unit square
#: (``R/BiCop.R``: ``fams11``, ``fams00``, ``fams10``, ``fams01``), in its order: the
#: candidates `preselect` keeps when the data's dependence leans to that corner.
VC_CORNER = {
    (1, 1): (13, 4, 6, 7, 17, 8, 9, 19, 10, 104, 204),
    (0, 0): (3, 14, 16, 7, 17, 18, 9, 19, 20, 114, 214),
    (1, 0): (23, 34, 36, 27, 37, 38, 29, 39, 40, 134, 234),
    (0, 1): (33, 24, 26, 27, 37, 28, 29, 39, 30, 124, 224),
}
#: Bounds of |parameter| in VineCopula's ``MLE_intern`` (``R/BiCopEst.R``): one-parameter
#: families by ``optimize`` on the interval; (theta, delta) of the BB families (``max.BB``
#: defaults BB1 (5, 6), BB6 (6, 6), BB7 (5, 6), BB8 (6, 1) and the lower bounds there), the t
#: copula's (rho, nu) with ``max.df = 30``, by L-BFGS-B.
VC_BOUNDS = {
    "gaussian": ((-0.9999, 0.9999),), "clayton": ((1e-4, 100.0),), "gumbel": ((1.0001, 100.0),),
    "frank": ((-100.0, 100.0),), "joe": ((1.0001, 50.0),),
    "student": ((-0.9999, 0.9999), (2.0001, 30.0)),
    "bb1": ((0.001, 5.0), (1.001, 6.0)), "bb6": ((1.001, 6.0), (1.001, 6.0)),
    "bb7": ((1.001, 5.0), (0.001, 6.0)), "bb8": ((1.001, 6.0), (0.001, 1.0)),
}


def kendall_tau(u) -> float:
    """Kendall's tau-b of the two columns (VineCopula's ``fasttau``, Knight's algorithm):
    `fastrisk.kendall_tau`, ``scipy.stats.kendalltau``'s formula bit for bit (the same integer
    counts, then ``(con - dis) / sqrt(tot - xtie) / sqrt(tot - ytie)``) without its overhead."""
    return _tau_b(u[:, 0], u[:, 1]).statistic


@functools.lru_cache(maxsize=None)
def _pv_bounds(family: str):
    pv = require("pyvinecopulib", what="a simulation")

    c = pv.Bicop(family=getattr(pv.BicopFamily, family))
    return c.parameters_lower_bounds.reshape(-1), c.parameters_upper_bounds.reshape(-1)


def _bounds(family: str, tau: float) -> tuple:
    """VineCopula's bounds of (|par|, |par2|) intersected with what pyvinecopulib represents
    (it caps Clayton at 28, Gumbel at 50, Frank at 35, Joe at 30 and BB7's delta below at
    0.01: the only place where a VineCopula fit can differ: Frank from |tau| ~ 0.89, the others
    above 0.93)."""
    lo, hi = _pv_bounds(family)
    if family == "tawn":  # MLE_intern_Tawn: theta in [1.001, 20], psi in tau - 0.1 .. tau + 0.2
        t = abs(tau)
        vc = ((1.001, 20.0), (max(t - 0.1, 1e-4), min(t + 0.2, 0.99)))
        lo, hi = lo[::-1][:2], hi[::-1][:2]  # (theta, psi) against pyvinecopulib's (.., psi, theta)
    else:
        vc = VC_BOUNDS[family]
    return tuple((max(a, float(b)), min(c, float(d))) for (a, c), b, d in zip(vc, lo, hi))


def _params(family: str, ttype: int, x) -> np.ndarray:
    """pyvinecopulib's parameter column from VineCopula's (par, par2) magnitudes."""
    if family == "tawn":
        theta, psi = x
        return np.array([[psi], [1.0], [theta]]) if ttype == 1 else np.array([[1.0], [psi], [theta]])
    return np.asarray(x, dtype=np.float64).reshape(-1, 1)


#: The kernels' family constants (`fastrisk._kernels.copulas`).
_KERNEL = {"gaussian": _k.GAUSSIAN, "student": _k.STUDENT, "clayton": _k.CLAYTON, "gumbel": _k.GUMBEL,
           "frank": _k.FRANK, "joe": _k.JOE, "bb1": _k.BB1, "bb6": _k.BB6, "bb7": _k.BB7, "bb8": _k.BB8, "tawn": _k.TAWN}


#: Step of the central difference dx/dnu of the t scores (`_LogLik.fg`).
_T_STEP = 1e-4


class _LogLik:
    """The log-likelihood of VineCopula's (par, par2) magnitudes ``x`` on ``u`` (n, 2), called
    as ``ll(x)``, and `fg`, what `_r_lbfgsb` minimises, in one compiled call."""

    def __init__(self, u, family: str, rotation: int, ttype: int):
        a, b = _k.rotated(np.ascontiguousarray(u, dtype=np.float64), int(rotation))
        self.family, self.ttype = _KERNEL[family], int(ttype)
        self.floor = -1e10 if family == "student" else -1e250
        self.ab, self._scores = np.stack((a, b)), {}
        if family == "student":  # pseudo-observations: both columns hold the same n values
            self._values, self._at = np.unique(self.ab, return_inverse=True)
            self._at = self._at.reshape(self.ab.shape)
        self.d = special.ndtri(self.ab) if family == "gaussian" else None if family == "student" else _k.data(a, b)

    def _t_scores(self, nu: float):
        z = self._scores.get(nu)
        if z is None:
            if len(self._scores) > 8:
                self._scores.clear()
            z = self._scores[nu] = special.stdtrit(nu, self._values)[self._at]
        return z

    def __call__(self, x, floor: float | None = None) -> float:
        x0, x1 = float(x[0]), float(x[1]) if len(x) > 1 else 0.0
        d = self._t_scores(x1) if self.family == _k.STUDENT else self.d
        return _k.loglik_at(self.family, self.ttype, d, x0, x1, self.floor if floor is None else floor)

    def fg(self, x, lo, hi):
        """(-ll(x), its gradient): ``fg`` of `_r_lbfgsb`, compiled. R's central differences
        (`fastrisk._kernels.copulas.objective`) but for the t copula, whose gradient is
        analytic as VineCopula's ``gr_LL`` (`fastrisk._kernels.copulas.objective_t`), the
        scores' dx/dnu a central difference of ``stdtrit`` (step `_T_STEP`: ~1e-9 relative,
        ``stdtrit`` being accurate to ~1e-15). Quantiles only at the data's distinct values
        (the two columns of pseudo-observations hold the same n ranks: half the work)."""
        g = np.empty(len(x))
        if self.family == _k.STUDENT:
            rho, nu = float(x[0]), float(x[1])
            z = special.stdtrit(np.array([[nu], [nu + _T_STEP], [nu - _T_STEP]]), self._values)[:, self._at]
            cpsi = 0.5 * special.psi(0.5 * (nu + 2.0)) + 0.5 * special.psi(0.5 * nu) - special.psi(0.5 * (nu + 1.0))
            return _k.objective_t(z[0], (z[1] - z[2]) / (2.0 * _T_STEP), rho, nu, cpsi, self.floor, g), g
        return _k.objective(self.family, self.ttype, self.d, x, lo, hi, self.floor, g), g


def _loglik_fn(u, family: str, rotation: int, ttype: int) -> _LogLik:
    """The log-likelihood of VineCopula's (par, par2) magnitudes on ``u`` (n, 2): the compiled
    density sums of `fastrisk._kernels.copulas` (pyvinecopulib's densities, ~1e-13 apart
    here), on the data rotated as pyvinecopulib rotates it (the Gaussian and t copulas on
    the normal / t scores ``ndtri(u)``, ``stdtrit(nu, u)``). A value that is not finite or
    below -1e250 is -1e250 (``t_LL`` of ``MLE_intern`` in VineCopula's ``R/BiCopEst.R``;
    -1e10 for its t copula)."""
    return _LogLik(u, family, rotation, ttype)


_R_TOL = np.finfo(float).eps ** 0.25  # R's optimize(tol = .Machine$double.eps^0.25)


def _brent(f, lo: float, hi: float, xatol: float, maxiter: int = 500) -> tuple[float, float]:
    """(x, f(x)) at the minimum of ``f`` on [lo, hi]: ``scipy.optimize.minimize_scalar(f,
    bounds=(lo, hi), method="bounded", options={"xatol": xatol})``, i.e. scipy's
    ``_minimize_scalar_bounded`` (Brent's fmin, the algorithm of R's ``optimize``), its
    arithmetic operation for operation, without the wrapper's ~0.2 ms a call (the same numbers
    bit for bit for finite ``f``: tested against scipy)."""
    sqrt_eps = math.sqrt(2.2e-16)
    golden_mean = 0.5 * (3.0 - math.sqrt(5.0))
    a, b = lo, hi
    fulc = a + golden_mean * (b - a)
    nfc, xf = fulc, fulc
    rat = e = 0.0
    fx = f(xf)
    num = 1
    ffulc = fnfc = fx
    xm = 0.5 * (a + b)
    tol1 = sqrt_eps * abs(xf) + xatol / 3.0
    tol2 = 2.0 * tol1
    while abs(xf - xm) > (tol2 - 0.5 * (b - a)):
        golden = True
        if abs(e) > tol1:  # a parabolic step?
            golden = False
            r = (xf - nfc) * (fx - ffulc)
            q = (xf - fulc) * (fx - fnfc)
            p = (xf - fulc) * q - (xf - nfc) * r
            q = 2.0 * (q - r)
            if q > 0.0:
                p = -p
            q = abs(q)
            r = e
            e = rat
            if abs(p) < abs(0.5 * q * r) and p > q * (a - xf) and p < q * (b - xf):
                rat = (p + 0.0) / q
                x = xf + rat
                if (x - a) < tol2 or (b - x) < tol2:
                    rat = tol1 * _sign1(xm - xf)
            else:
                golden = True
        if golden:
            e = (a - xf) if xf >= xm else (b - xf)
            rat = golden_mean * e
        x = xf + _sign1(rat) * max(abs(rat), tol1)
        fu = f(x)
        num += 1
        if fu <= fx:
            if x >= xf:
                a = xf
            else:
                b = xf
            fulc, ffulc = nfc, fnfc
            nfc, fnfc = xf, fx
            xf, fx = x, fu
        else:
            if x < xf:
                a = x
            else:
                b = x
            if fu <= fnfc or nfc == xf:
                fulc, ffulc = nfc, fnfc
                nfc, fnfc = x, fu
            elif fu <= ffulc or fulc == xf or fulc == nfc:
                fulc, ffulc = x, fu
        xm = 0.5 * (a + b)
        tol1 = sqrt_eps * abs(xf) + xatol / 3.0
        tol2 = 2.0 * tol1
        if num >= maxiter:
            break
    return float(xf), float(fx)


def _sign1(v: float) -> float:
    """``np.sign(v) + (v == 0)``: 1 for v >= 0, -1 below (scipy's step direction)."""
    return -1.0 if v < 0 else 1.0


#: scipy >= 1.15 drives its C L-BFGS-B (``_lbfgsb.setulb``, integer task codes) from Python;
#: `_r_lbfgsb` runs that loop itself there (older scipy: through ``optimize.minimize``).
_SETULB_DIRECT = tuple(int(p) for p in scipy.__version__.split(".")[:2]) >= (1, 15)


def _r_lbfgsb(ll, start, bounds, *, maxit: int = 500):
    """R's ``optim(start, ll, method = "L-BFGS-B", lower, upper, control = list(fnscale = -1,
    maxit = maxit))``: R's defaults (lmm = 5, factr = 1e7, pgtol = 0) and its central-difference
    gradient (ndeps = 1e-3, steps shortened at the bounds), maximising ``ll``, by scipy's
    L-BFGS-B. With scipy >= 1.15 the loop of ``scipy.optimize._lbfgsb_py._minimize_lbfgsb``
    is run here, call for call (same ``setulb`` calls, same evaluations, the same result bit
    for bit: tested against ``optimize.minimize``), without its ~0.3 ms of wrapping a call;
    its ``maxfun`` = 15,000 cannot bind (at most 20 line-search steps a iteration)."""
    lo = np.array([v[0] for v in bounds], dtype=np.float64)
    hi = np.array([v[1] for v in bounds], dtype=np.float64)
    compiled = getattr(ll, "fg", None)

    def fg(x):
        if compiled is not None:
            return compiled(x, lo, hi)
        f = -ll(x)
        g = np.empty(len(x))
        for k in range(len(x)):
            up, dn = x.copy(), x.copy()
            up[k] = min(x[k] + 1e-3, hi[k])
            dn[k] = max(x[k] - 1e-3, lo[k])
            g[k] = (-ll(up) + ll(dn)) / (up[k] - dn[k])
        return f, g

    x0 = np.clip(np.asarray(start, dtype=np.float64), lo, hi)
    if not _SETULB_DIRECT:
        res = optimize.minimize(fg, x0, jac=True, method="L-BFGS-B", bounds=list(zip(lo, hi)),
                                options={"maxiter": maxit, "maxcor": 5, "ftol": 1e7 * np.finfo(float).eps,
                                         "gtol": 0.0})
        return -float(res.fun), tuple(float(v) for v in res.x)
    n, m = len(x0), 5
    x = x0.copy()
    nbd = np.full(n, 2, np.int32)  # both bounds finite
    f, g = np.array(0.0), np.zeros(n)
    wa = np.zeros(2 * m * n + 5 * n + 11 * m * m + 8 * m)
    iwa = np.zeros(3 * n, np.int32)
    task, ln_task, lsave = np.zeros(2, np.int32), np.zeros(2, np.int32), np.zeros(4, np.int32)
    isave, dsave = np.zeros(44, np.int32), np.zeros(29)
    factr = 1e7 * np.finfo(float).eps / np.finfo(float).eps  # scipy's ftol / eps
    iterations = 0
    while True:
        _lbfgsb.setulb(m, x, lo, hi, nbd, f, g, factr, 0.0, wa, iwa, task, lsave, isave, dsave, 20, ln_task)
        if task[0] == 3:  # f and g wanted at x
            f, g = fg(x.copy())
        elif task[0] == 1:  # a new iterate
            iterations += 1
            if iterations >= maxit:
                task[0], task[1] = 5, 504
        else:
            break
    return -float(f), tuple(float(v) for v in x)


#: ``BiCopEst.intern``'s starting (par, par2) magnitudes for ``method = "mle"`` (VineCopula
#: ``R/BiCopEst.R``): BB1 (0.5, 1.5), BB6 (1.5, 1.5), BB7 and BB8 (1.5, 0.5), the negatives
#: for the 90 and 270 degree rotations (the t copula's is computed, `_fit_family`).
_START = {"bb1": (0.5, 1.5), "bb6": (1.5, 1.5), "bb7": (1.5, 0.5), "bb8": (1.5, 0.5)}


def _fit_family(u, code: int, tau: float):
    """VineCopula's ``BiCopEst.intern(method = "mle", se = FALSE)`` for one family code
    (``R/BiCopEst.R``, ``BiCopSelect``'s default ``se = FALSE``): (loglik, VineCopula
    parameter magnitudes) in ``MLE_intern``'s bounds (`_bounds`), on the compiled
    log-likelihoods (`_loglik_fn`).

    - one-parameter families: ``optimize(t_LL, interval = c(low, up), maximum = TRUE)``,
      Brent's fmin (`_brent`, tolerance ``.Machine$double.eps^0.25``);
    - BB1, BB6, BB7, BB8 and rotations: ``optim(start, t_LL, method = "L-BFGS-B", lower, up,
      control = list(fnscale = -1, maxit = 500))`` from `_START` (`_r_lbfgsb`: R's lmm 5,
      factr 1e7, pgtol 0, central differences with ndeps 1e-3);
    - t: ``optim(c(rho0, nu0), t_LL, gr_LL, ..., lower = c(-0.9999, 2.0001), upper =
      c(0.9999, max.df = 30))``, the same settings with the analytic gradient (`_LogLik.fg`:
      R's differences there stall on the ridge rho ~ 1 of near-identical runs), from
      ``BiCopEst.intern``'s start: rho0 = sin(tau pi / 2) and nu0 the maximum of the
      log-likelihood in nu at rho0 (``MLE_intern(..., cor.fixed = TRUE)``: ``optimize(t_LL,
      maximum = TRUE, interval = c(2.0001, max.df))``, Brent's fmin, its floor -10^250);
    - Tawn types 1 and 2 (``MLE_intern_Tawn``): `_r_lbfgsb` from theta = 1 + 6 |tau|,
      psi = min(|tau| + 0.1, 0.999) in theta [1.001, 20], psi [max(|tau| - 0.1, 1e-4),
      min(|tau| + 0.2, 0.99)].

    Documented deviations: the rotated families' negative parameters are optimised as
    magnitudes (the box and the start mirrored: the same path in exact arithmetic); the t
    scores' derivative in nu inside that gradient is a difference of quantiles; R's
    L-BFGS-B is version 2.3, `_r_lbfgsb` scipy's 3.0 (`fastrisk.simulate._r.roptim` has
    R's own, pure Python and too slow for 60,000 fits); bounds beyond what pyvinecopulib
    represents are cut to its own (`_bounds`)."""
    family, rotation, ttype = VC_FAMILIES[code]
    if family == "indep":
        return 0.0, ()
    b = _bounds(family, tau)
    ll = _loglik_fn(u, family, rotation, ttype)
    if family == "tawn":
        return _r_lbfgsb(ll, (1 + 6 * abs(tau), min(abs(tau) + 0.1, 0.999)), b)
    if len(b) == 1:  # optimize(t_LL, interval = c(low, up), maximum = TRUE): Brent's fmin
        x, f = _brent(lambda p: -ll((p,)), *b[0], _R_TOL)
        return -f, (x,)
    if family == "student":
        rho = math.sin(tau * math.pi / 2)
        start = (rho, _brent(lambda nu: -ll((rho, nu), floor=-1e250), *b[1], _R_TOL)[0])
    else:
        start = _START[family]
    return _r_lbfgsb(ll, start, b)


def corner_correlations(u, tau: float) -> tuple[float, float]:
    """The asymmetry indices of VineCopula's ``todo_fams_presel``: on the normal scores
    z = Phi^-1(u), Pearson's correlation of the points in the two quadrants along the
    direction of dependence, (upper right z1 > 0 and z2 > 0, lower left z1 < 0 and z2 < 0)
    when ``tau`` > 0, (lower right z1 > 0 and z2 < 0, upper left z1 < 0 and z2 > 0)
    otherwise; NaN for a quadrant with fewer than two points."""
    z = special.ndtri(np.asarray(u, dtype=np.float64))  # stats.norm.ppf's own computation, bit for bit
    s1, s2 = (1, 1) if tau > 0 else (1, -1)
    out = []
    for sign in (1, -1):
        q = z[(sign * s1 * z[:, 0] > 0) & (sign * s2 * z[:, 1] > 0)]
        out.append(float(np.corrcoef(q[:, 0], q[:, 1])[0, 1]) if len(q) > 1 else math.nan)
    return out[0], out[1]


def preselect(u, tau: float) -> tuple:
    """The family codes ``BiCopSelect(presel = TRUE)`` fits: VineCopula's ``todo_fams_presel``
    (``R/preprocessors.R``; read in the fork ``larryleihua/VineCopula``, commit 13fceb2, the
    copy of the upstream file that holds it; ``R/BiCopSelect.R`` upstream swaps it in for
    ``todo_fams`` when ``presel``, its default, and ``R/03-bicops.R`` keeps the default).

    With positive ``tau`` and the `corner_correlations` (c11, c00), d = c11 - c00:
    d > 0.3 keeps the independence copula, the t copula and the families with more
    dependence near (1, 1) (`VC_CORNER`); 0.05 < d <= 0.3 those, the Gaussian, Frank and
    the survival BB8 (code 20); d < -0.3 and -0.3 <= d < -0.05 the same towards (0, 0)
    (with BB8, code 10); |d| <= 0.05 every positive family (``posfams``). With negative
    ``tau``, d = c10 - c01 (there a stronger dependence makes a quadrant's c more negative):
    d < -0.3 / -0.05 lean to (1, 0) (the extra code 30), d > 0.3 / 0.05 to (0, 1) (code 40),
    else ``negfams``. ``tau`` = 0: every family. Codes in VineCopula's order (its
    ``which.min`` keeps the first on ties). A quadrant with fewer than two points (c NaN;
    R's ``if`` would stop there; none of the AP and nDCG@20 pairs) keeps ``todo_fams``'s set."""
    if tau == 0:
        return tuple(sorted(VC_FAMILIES))
    pos = tau > 0
    c1, c2 = corner_correlations(u, tau)
    d = c1 - c2
    if not math.isfinite(d) or abs(d) <= 0.05:
        return VC_POSITIVE if pos else VC_NEGATIVE
    # the corner the dependence leans to, and the BB8 rotation kept beside it
    if pos:
        corner, bb8 = ((1, 1), 20) if d > 0 else ((0, 0), 10)
    else:
        corner, bb8 = ((1, 0), 30) if d < 0 else ((0, 1), 40)
    if abs(d) > 0.3:
        return (0, 2) + VC_CORNER[corner]
    return (0, 1, 2, 5, bb8) + VC_CORNER[corner]


def select_copula(u) -> dict:
    """VineCopula's ``BiCopSelect(u1, u2, selectioncrit = "AIC")`` on pseudo-observations
    ``u`` (n, 2): the families `preselect` keeps for the empirical tau (a subset of the
    independence copula and ``posfams`` or ``negfams``), each by `_fit_family`, the lowest
    AIC = -2 loglik + 2 k (k = 0, 1 or 2) wins (the first on ties, in VineCopula's order)."""
    tau = kendall_tau(u)
    codes = preselect(u, tau)
    best = None
    for code in codes:
        ll, par = _fit_family(u, code, tau)
        aic = -2 * ll + 2 * len(par)
        if best is None or aic < best[0]:
            best = (aic, code, par, ll)
    aic, code, par, ll = best
    family, rotation, ttype = VC_FAMILIES[code]
    params = [] if family == "indep" else _params(family, ttype, par).reshape(-1).tolist()
    return {"family": family, "rotation": rotation if family != "indep" else 0, "parameters": params,
            "vinecopula": code, "loglik": ll, "aic": aic}


def fit_copula(x, y, *, seed: int = 0) -> dict:
    """The copula of runs (x, y): `select_copula` on `pobs`.

    Parameters
    ----------
    x, y : array_like
        The two runs' scores over the same topics.
    seed : int
        Seed of the random tie-breaking of the pseudo-observations.

    Returns
    -------
    dict
        ``family``, ``rotation``, ``parameters`` (pyvinecopulib's), ``vinecopula`` (the family
        code), ``loglik``, ``aic``.
    """
    return select_copula(pobs(np.asarray(x), np.asarray(y), seed))


def bicop(spec: dict):
    """A ``pyvinecopulib.Bicop`` from `fit_copula`'s dict."""
    pv = require("pyvinecopulib", what="a simulation")

    par = np.asarray(spec["parameters"], dtype=np.float64).reshape(-1, 1)
    fam = getattr(pv.BicopFamily, spec["family"])
    if fam == pv.BicopFamily.indep:
        return pv.Bicop(family=fam)
    return pv.Bicop(family=fam, rotation=int(spec["rotation"]), parameters=par)
