"""The margins of Urbano, Lima & Hanjalic (SIGIR 2019): simIReff's fitted distribution of a
run's scores (`fit_margin`, `SimMargin`) and its effect-size transformation
(`SimMargin.transformed`, `h1_transforms`).

Where each choice comes from (repositories ``julian-urbano/sigir2019-statistical``, "the
study", and ``julian-urbano/simIReff``, "simIReff"):

- runs kept (`kept_runs`): the study's ``R/common.R`` ``removeDuplicates`` (a run whose
  scores are all within 1e-5 of an earlier run's is dropped) then ``removeBottom(p = .1)``
  (runs whose mean is below the 10 % quantile of the run means, R's type-7 quantile, are
  dropped; means as R's ``colMeans`` sums them, `r_col_means`), as called by ``R/01-margins.R`` and ``R/03-bicops.R``;
- margins (`fit_margin`): ``R/01-margins.R`` calls ``effContFitAndSelect(x, method =
  "AIC")`` for AP, nDCG@20 and ERR@20 and ``effDiscFitAndSelect(x, support(measure))`` for
  P@10 and RR. simIReff ``R/effFit.R``: the continuous candidates are the normal truncated
  to [0, 1] (``effCont_norm``: MLE with sigma >= 0.05 by R's L-BFGS-B on R's objective,
  skipped where R's fit or its mean / variance integrals fail, see `_norm`), the beta (``effCont_beta``: scores
  capped to [1e-6, 1 - 1e-6], MLE with shapes >= 1), a Gaussian kernel density truncated to
  [0, 1] (``effCont_nks``: ``ks::kde`` with its plug-in bandwidth ``ks::hpi`` = ``KernSmooth::dpik``, scale
  min(sd, IQR / 1.349), both binned on ks's grids and convolved by R's own FFT, then ks's
  ``dkde`` / ``pkde`` / ``qkde`` truncated by ``effContTrunc``, as R computes them
  (`fastrisk.simulate._r.rks`); effective df mean(phi_h(0) / fhat(x_i))) and Chen's beta-kernel density (``effCont_bks``: ``bde``
  ``betakernel`` with its default bandwidth b = n^(-2/5), normalised to integrate to 1,
  df mean(K_b(x_i; x_i) / fhat(x_i))); the discrete ones are the beta-binomial over the
  support index (``effDisc_bbinom``: MLE with shapes >= 1, df 2) and the discrete kernel
  smoother (``effDisc_dks``: Wang & van Ryzin's ordered kernel, least-squares
  cross-validated bandwidth as ``np::npudensbw(bwmethod = "cv.ls")`` computes it, the
  integral of fhat^2 taken over the categories observed in the run, see `lscv_bandwidth`;
  multiplied by 1, 2, 5 and 10, a multiplied bandwidth > 1 fails; the estimate normalised
  over the support; df mean((1 - bw) / f(x_i))). A candidate that
  fails is skipped (``try`` in ``effFit``). Selection (``effSelect``): the lowest
  AIC = 2 df - 2 loglik. Supports (``support()``): P@k j / k; RR 0 and 1 / k, k = 1..1000;
- effect sizes (`SimMargin.transformed`): simIReff ``R/effTransform.R``: the new CDF
  is the Beta(a, b) CDF of the old one (cummax), a, b >= 1, found by R's
  ``optim(c(1, 1), method = "L-BFGS-B", lower = c(1, 1))`` on the squared distance to the
  target mean (``factr = abs.tol^2 / eps``, abs.tol = 1e-5; the transformed mean of a
  continuous margin is ``effTransform_inner``'s, R's ``integrate`` of qeff(qbeta(p, a, b)),
  `fastrisk.simulate._r.rks.transformed_moments`); R's optimizer failing (code
  52: the iterate reaches the target before the relative-reduction test fires and the next
  line search finds no decrease in the rounding noise, ~9 % of the study's P@10 pairs)
  stops effTransform, and the study skips the pair. We run R's optimizer as R does
  (`fastrisk.simulate._r.roptim`: L-BFGS-B 2.3, R's numerical gradient). Deviation: a converged
  search whose mean misses the target by more than 0.01 (a target out of reach, where
  effTransform would return the margin as the search stalled) is a failure too;

Continuous margins are tabulated: the CDF at ``GRID + 1`` equally spaced points of [0, 1],
linear in between (sampling is exact for that representation); a margin's ``mean`` and
``variance`` are simIReff's (``$mean``, ``$var``: for the truncated normal and the Gaussian
kernel R's integrals, `SimMargin.moments`), which choose the H1 pairs and targets as in the
study.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, special, stats

from fastrisk._kernels import simulate as _k
from fastrisk.errors import InputError
from fastrisk.simulate._r import rks, rmath
from fastrisk.simulate._r.roptim import EPS, optim_lbfgsb
from fastrisk.simulate.measures import support

#: Intervals of the tabulated CDF of a continuous margin.
GRID = 4096
#: Tolerance of effTransform (simIReff's ``abs.tol``).
TRANSFORM_TOL = 1e-5
#: A transformed margin whose mean misses its target by more than this did not reach it.
UNREACHED = 0.01
#: Rounding allowed in a tabulated mean beyond its support (``SimMargin.transformed``).
_ROUNDING = 1e-9
_CAP = 1e-6  # simIReff ``cap``


@dataclass(frozen=True)
class SimMargin:
    """A simIReff margin: ``family``, its ``params``, ``df`` and ``aic``; the CDF tabulated at
    ``points`` (continuous: GRID + 1 points of [0, 1], linear in between; discrete: the
    support); ``transform`` (a, b) when it is a transformed margin; ``moments``: (mean,
    variance) as simIReff computes them where those are not the tabulated CDF's own (the
    truncated normal's and the Gaussian kernel's: R's integrals or truncnorm's formulas), else
    None. What is sampled is always the tabulated CDF."""

    family: str
    params: dict
    df: float
    aic: float
    continuous: bool
    points: np.ndarray = field(repr=False)
    cdf: np.ndarray = field(repr=False)
    transform: tuple | None = None
    moments: tuple | None = None
    rdata: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def mean(self) -> float:
        """simIReff's ``$mean`` (`moments`), else the tabulated CDF's."""
        if self.moments is not None:
            return float(self.moments[0])
        return _mean(self.points, self.cdf, self.continuous)

    @property
    def variance(self) -> float:
        """simIReff's ``$var`` (`moments`), else the tabulated CDF's (exact for it: uniform
        within each grid cell)."""
        if self.moments is not None:
            return float(self.moments[1])
        if self.continuous:
            a, b = self.points[:-1], self.points[1:]
            m2 = float(np.sum(np.diff(self.cdf) * (a * a + a * b + b * b) / 3.0))
        else:
            m2 = float(np.dot(self.points ** 2, np.diff(np.concatenate([[0.0], self.cdf]))))
        return m2 - self.mean ** 2

    def kernel_arrays(self):
        """(cdf, values, continuous) for `fastrisk._kernels.simulate.quantiles`."""
        if self.continuous:
            return (np.concatenate([[0.0], self.cdf[1:], [1.0]]),
                    np.concatenate([[0.0], 0.5 * (self.points[:-1] + self.points[1:]), [1.0]]), True)
        return np.ascontiguousarray(self.cdf), np.ascontiguousarray(self.points), False

    def quantile(self, u) -> np.ndarray:
        u = np.ascontiguousarray(np.asarray(u, dtype=np.float64).reshape(-1))
        out = np.empty_like(u)
        c, v, cont = self.kernel_arrays()
        _k.quantiles(c, v, cont, u, out)
        return out

    def with_beta(self, a: float, b: float) -> SimMargin:
        new = special.betainc(a, b, np.clip(self.cdf, 0.0, 1.0))
        new = np.maximum.accumulate(new)  # effTransform_inner: cummax
        return SimMargin(f"t({self.family})", self.params, self.df, self.aic, self.continuous, self.points, new,
                         (float(a), float(b)))

    def transformed(self, target: float) -> SimMargin | None:
        """simIReff's ``effTransform`` to expected value ``target``; None where R's
        optimizer does not converge there or stops with an error (``effTransform`` stops; the
        study's ``try`` skips the pair). Deviation: effTransform does not check a converged
        search against the target, so for a target out of reach it returns the margin where the
        search stalled; we return None when the mean misses the target by more than
        `UNREACHED` (0.01: the study's deltas never come near it -- on its 2,224 converged P@10
        transformations at delta 0.05 R's largest miss is 1.4e-4 -- while a stalled search
        misses by 0.1 or more).

        R's L-BFGS-B (`fastrisk.simulate._r.roptim.optim_lbfgsb`) from (a, b) = (1, 1), a, b >= 1,
        on the squared gap of the transformed mean to the target, ``factr = abs.tol^2 / eps``:
        for the truncated normal, beta and Gaussian-kernel margins effTransform_inner's mean,
        R's ``integrate`` of qeff(qbeta(p, a, b)) (its variance integral too: where either
        stops, R's optim stops; `fastrisk.simulate._r.rks.transformed_moments`); for the others
        `with_beta`'s mean (a discrete margin's summed in R's order, as effDisc_new).

        A target farther than `UNREACHED` outside the margin's support is None at once, without
        the search: every transformed margin's mean lies within the support, so the search could
        only end in one of the failures above (R's optimizer drives a or b up for ~300 evaluations of
        the integrals before it stalls, ~2 s a transformation on ERR@20: a study's delta beyond the
        scores' range took minutes to report that no pair reaches it)."""
        target = float(target)
        if target - float(np.max(self.points)) > UNREACHED + _ROUNDING \
                or float(np.min(self.points)) - target > UNREACHED + _ROUNDING:
            return None
        cdf = np.clip(self.cdf, 0.0, 1.0)
        points = self.points
        if not self.continuous:
            # effDisc_new's sum without the atoms of mass 0: they stay 0 under every beta CDF
            # (equal CDF values stay equal, so does their cummax), and the sum adds 0 for
            # each: the same sum to the bit, over the atoms that carry mass (RR: 1,001 -> ~50)
            keep = np.diff(cdf, prepend=0.0) > 0
            cdf, points = cdf[keep], points[keep]
        rdata = None if self.rdata is None else self.rdata.copy()

        def gap2(p):  # with_beta(a, b).mean - target, squared as R's (x - m)^2: x * x
            if rdata is not None:  # effTransform_inner's mean (and variance: both can stop R)
                d = rks.transformed_moments(rdata, p[0], p[1])[0] - target
                return d * d
            new = np.maximum.accumulate(special.betainc(p[0], p[1], cdf))
            if self.continuous:
                d = _mean(self.points, new, True) - target
            else:  # effDisc_new's sum(support * d), summed as R's sum() does (long double, in order)
                d = float(np.cumsum(points * np.diff(new, prepend=0.0), dtype=np.longdouble)[-1]) - target
            return d * d

        try:
            res = optim_lbfgsb(gap2, [1.0, 1.0], lower=[1.0, 1.0], factr=TRANSFORM_TOL * TRANSFORM_TOL / EPS)
        except ValueError:  # R's optim stops with an error (a non-finite value): so does effTransform
            return None
        if res.convergence != 0:
            return None
        out = self.with_beta(*res.par)
        return out if abs(out.mean - target) <= UNREACHED else None


def _mean(points, cdf, continuous) -> float:
    if continuous:  # int_0^1 (1 - F), F linear between grid points
        return float(np.sum((1.0 - 0.5 * (cdf[:-1] + cdf[1:])) * np.diff(points)))
    return float(np.dot(points, np.diff(np.concatenate([[0.0], cdf]))))


def _edges():
    return np.linspace(0.0, 1.0, GRID + 1)


def _cont(family, params, df, ll, cdf_edges) -> SimMargin:
    cdf = np.clip(np.asarray(cdf_edges, dtype=np.float64), 0.0, 1.0)
    cdf = np.maximum.accumulate((cdf - cdf[0]) / (cdf[-1] - cdf[0]))
    return SimMargin(family, params, float(df), float(2 * df - 2 * ll), True, _edges(), cdf)


def _with_r(m: SimMargin, moments=None) -> SimMargin:
    """``m`` with simIReff's own moments (None: the tabulated CDF's) and the data of its quantile
    function for effTransform's integrals (`fastrisk.simulate._r.rks.transformed_moments`)."""
    return dataclasses.replace(m, moments=moments, rdata=rks.rdata(m.family, m.params))


# ---------------------------------------------------------------- continuous candidates
def _norm(x, params=None):
    """effCont_norm: normal truncated to [0, 1], ``MASS::fitdistr`` with sigma >= 0.05.

    Computed as R computes it (`fastrisk.simulate._r.rmath`): the objective
    ``-sum(log(truncnorm::dtruncnorm(x, 0, 1, mu, sigma)))`` with R's ``pnorm``, truncnorm's
    density (1 / (b - a) = 1 wherever the normalising constant underflows) and R's long-double
    ``sum``, from R's ``mean`` and ``sd``, by R's own L-BFGS-B (maxit 100, central-difference
    gradient); the candidate is skipped where fitdistr stops with an error ("optimization
    failed" unless optim converged, optim's own errors, or ``solve`` of its Hessian) or where
    effCont_norm's mean / variance integrals do; its mean and variance are effCont_norm's
    (`rmath.norm_moments`: those integrals, or truncnorm's formulas). On AP,
    nDCG@20 and ERR@20 the likelihood often has no finite maximum (it keeps rising as
    mu -> -inf): the fit is chaotic there and its outcome turns on the objective's last bits
    (tests/data/rnorm_fits.csv, tests/data/simireff_margins_*)."""
    if params is None:
        mu, sd, ll = rmath.fitdistr_norm(x)
        params = {"mu": mu, "sigma": sd}
    mu, sd = params["mu"], params["sigma"]
    moments = rmath.norm_moments(mu, sd)  # where effCont_norm's integrals fail, R's try skips it
    ll = -rmath.truncnorm_nll(x, mu, sd)
    return _with_r(_cont("norm", params, 2, ll, special.ndtr((_edges() - mu) / sd)), moments)


def _beta(x, params=None):
    """effCont_beta: beta on scores capped to [1e-6, 1 - 1e-6], MLE with shapes >= 1."""
    xc = np.clip(x, _CAP, 1 - _CAP)
    if params is None:
        m, v = float(np.mean(xc)), float(np.var(xc, ddof=1))
        s0 = m * (m * (1 - m) / v - 1) if v > 0 else 1.0  # the study's start (both shapes)
        s0 = min(max(s0, 1.0), 1e3) if np.isfinite(s0) else 1.0
        lx, l1x = np.log(xc).sum(), np.log1p(-xc).sum()
        n = len(xc)

        def nll(p):
            a, b = p
            return -((a - 1) * lx + (b - 1) * l1x - n * special.betaln(a, b))

        res = optimize.minimize(nll, [s0, s0], method="L-BFGS-B", bounds=[(1.0, None), (1.0, None)])
        params = {"shape1": float(res.x[0]), "shape2": float(res.x[1])}
    a, b = params["shape1"], params["shape2"]
    ll = float(stats.beta.logpdf(xc, a, b).sum())
    return _with_r(_cont("beta", params, 2, ll, special.betainc(a, b, _edges())))


def hpi(x) -> float:
    """``ks::hpi(x)``: ``KernSmooth::dpik(x, level = 2, gridsize = 401)`` as R computes it
    (binned; `fastrisk.simulate._r.rks.dpik`)."""
    return rks.dpik(x)


def _nks(x, params=None):
    """effCont_nks: ``ks::kde`` (bandwidth ``ks::hpi``) truncated to [0, 1], as R computes it
    (`fastrisk.simulate._r.rks`: ks's binned grid estimate, ``dkde`` / ``pkde`` / ``qkde``, R's
    ``integrate``; ValueError where R stops). The tabulated CDF is the one R draws from (the
    inverse of simIReff's truncated ``qkde``: linear between ks's grid points); its atoms at 0
    and 1 (the ``cap`` of the quantile, ~1e-4 and ~1e-6) are spread over the first and last
    grid cells (F(0) = 0 and F(1) = 1, as every tabulated margin), which moves the mean by
    < 1e-7. Its ``mean`` and ``variance`` (`SimMargin.moments`) are simIReff's: R's integrals
    of the truncated qkde (``effContMean`` / ``effContVar``), which are up to 1.3e-4 / 5e-4
    off those of what R samples (``integrate``'s error on a piecewise-linear integrand)."""
    k = rks.KsMargin(x, None if params is None else params["h"])
    cdf = np.maximum.accumulate(k.sampled_cdf(_edges()))
    cdf[0], cdf[-1] = 0.0, 1.0
    return SimMargin("nks", {"h": k.h}, k.df, k.aic, True, _edges(), cdf, None, (k.mean, k.var), k.rdata())


def _bks(x, params=None):
    """effCont_bks: Chen's (1999) beta-kernel density (``bde``, bandwidth n^(-2/5)), normalised."""
    xc = np.clip(x, _CAP, 1 - _CAP)
    b = len(xc) ** -0.4 if params is None else params["b"]

    lx, l1x = np.log(xc), np.log1p(-xc)

    def dens(t):  # mean_i Beta(x_i; t / b + 1, (1 - t) / b + 1)
        t = np.asarray(t, dtype=np.float64)
        a1, b1 = t / b, (1 - t) / b
        return np.exp(a1[:, None] * lx + b1[:, None] * l1x - special.betaln(a1 + 1, b1 + 1)[:, None]).mean(axis=1)

    e = _edges()
    f = dens(e)
    cum = np.concatenate([[0.0], np.cumsum(0.5 * (f[:-1] + f[1:]) * np.diff(e))])
    total = cum[-1]
    fx = dens(xc)
    k0 = stats.beta.pdf(xc, xc / b + 1, (1 - xc) / b + 1)
    return _cont("bks", {"b": float(b)}, float(np.mean(k0 / fx)), float(np.log(fx / total).sum()), cum)


# ---------------------------------------------------------------- discrete candidates
def _match(x, sup):
    """simIReff ``matchTol``: index of the support point within 1e-4 of each score."""
    i = np.abs(sup[None, :] - x[:, None]).argmin(axis=1)
    if (np.abs(sup[i] - x) > 1e-4).any():
        bad = x[np.abs(sup[i] - x) > 1e-4][0]
        raise InputError(f"score {bad!r} is not on the measure's support")
    return i


def _disc(family, params, df, ll, sup, p) -> SimMargin:
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    return SimMargin(family, params, float(df), float(2 * df - 2 * ll), False, sup, cdf)


def _bbinom(x, sup, params=None):
    """effDisc_bbinom: beta-binomial over the support index, MLE with shapes >= 1.

    simIReff starts ``MASS::fitdistr`` (R's L-BFGS-B, shapes >= 1) at the method-of-moments
    shapes. The likelihood is flat along the shapes (RR's reach the thousands), where L-BFGS-B
    on the raw shapes stops early; we maximise over log-shapes >= 0 to tight tolerances from
    the moment start (projected into the bounds) and from (1, 1), and keep the better: within
    1e-5 of R's log-likelihood on every P@10 and RR run of the bundled collections
    (``tests/data/simireff_discrete_bbinom.csv``; the raw-shape search was up to 5.6 below)."""
    k = len(sup) - 1
    j = _match(x, sup)
    if params is None:
        m, v = float(j.mean()), float(j.var(ddof=1))
        den = k * (v / m - m - 1) + m if m > 0 else float("nan")
        s1, s2 = (k * m - v) / den, (k - m) * (k - v / m) / den
        if not (np.isfinite(s1) and np.isfinite(s2)):
            raise ValueError("no beta-binomial start")

        u, cnt = np.unique(j, return_counts=True)

        def nll(t):  # - log-likelihood up to the binomial coefficients: beta functions of the counts
            a, b = math.exp(t[0]), math.exp(t[1])
            return -float(cnt @ special.betaln(u + a, k - u + b) - len(j) * special.betaln(a, b))

        best = None
        for start in ((s1, s2), (1.0, 1.0)):
            t0 = [math.log(min(max(s, 1.0), 1e8)) for s in start]
            res = optimize.minimize(nll, t0, method="L-BFGS-B", bounds=[(0.0, None), (0.0, None)],
                                    options={"ftol": 1e-15, "gtol": 1e-10, "maxiter": 2000})
            if np.isfinite(res.fun) and (best is None or res.fun < best.fun):
                best = res
        if best is None:
            raise ValueError("beta-binomial fit failed")
        params = {"alpha": math.exp(best.x[0]), "beta": math.exp(best.x[1])}
    a, b = params["alpha"], params["beta"]
    p = stats.betabinom.pmf(np.arange(k + 1), k, a, b)
    return _disc("bbinom", params, 2, float(np.log(p[j]).sum()), sup, p)


def _wvr_density(sup_n, j, lam):
    """Wang & van Ryzin ordered-kernel estimate at every support index from observations
    ``j`` (indices): l(x, X) = 1 - lam if x = X, else (1 - lam) / 2 lam^|x - X|."""
    u, c = np.unique(j, return_counts=True)
    dist = np.abs(np.arange(sup_n)[:, None] - u[None, :])
    with np.errstate(under="ignore"):
        K = np.where(dist == 0, 1 - lam, 0.5 * (1 - lam) * lam ** dist)
    return K @ c / len(j)


@functools.lru_cache(maxsize=4096)
def _lscv(j: tuple, sup_n: int) -> float:
    j = np.asarray(j)
    n = len(j)
    seen = np.unique(j)

    def cv(lam):
        f = _wvr_density(sup_n, j, lam)
        loo = (f[j] * n - (1 - lam)) / (n - 1)
        return float(f[seen] @ f[seen] - 2 * loo.mean())

    grid = np.linspace(0.0, 1.0, 101)
    vals = [cv(g) for g in grid]
    g = int(np.argmin(vals))
    lo, hi = grid[max(g - 1, 0)], grid[min(g + 1, 100)]
    res = optimize.minimize_scalar(cv, bounds=(lo, hi), method="bounded", options={"xatol": 1e-8})
    return float(res.x) if res.fun <= vals[g] else float(grid[g])


def lscv_bandwidth(j, sup_n) -> float:
    """Least-squares cross-validated bandwidth of the ordered kernel (``np::npudensbw``,
    ``bwmethod = "cv.ls"``, ``okertype = "wangvanryzin"``): minimises
    sum_z fhat(z)^2 - 2 / n sum_i fhat_{-i}(x_i) over lambda in [0, 1] (a grid of 0.01,
    then a bounded search around its best point), with z over the values *observed* in
    ``j``, not the whole support: np's integral of fhat^2 is the ordered convolution kernel
    (``kernel_ordered_convolution`` in np's ``src/kernel.c``) summed over the categories
    that ``determine_categorical_vals`` (``src/jksum.c``) collects from the data, whatever
    the factor's levels. np searches by Powell's method from lambda = 0.5 (one start,
    ``nmulti`` = min(5, dimensions)); ours is a global search of the same objective."""
    return _lscv(tuple(int(v) for v in j), int(sup_n))


def _dks(x, sup, mult, params=None):
    """effDisc_dks(mult): discrete kernel smoother, LSCV bandwidth times ``mult``."""
    j = _match(x, sup)
    bw = (lscv_bandwidth(j, len(sup)) * mult) if params is None else params["bw"]
    if bw > 1:
        raise ValueError("(multiplied) bandwidth too large")
    d = _wvr_density(len(sup), j, bw)
    d = d / d.sum()
    return _disc(f"dks({mult})", {"bw": float(bw), "mult": mult}, float(np.mean((1 - bw) / d[j])),
                 float(np.log(d[j]).sum()), sup, d)


def _candidates(measure):
    sup = support(measure)
    if sup is None:
        return {"norm": _norm, "beta": _beta, "nks": _nks, "bks": _bks}
    out = {"bbinom": lambda x, params=None: _bbinom(x, sup, params)}
    for m in (1, 2, 5, 10):
        out[f"dks({m})"] = (lambda mm: lambda x, params=None: _dks(x, sup, mm, params))(m)
    return out


def fit_margin(scores, measure: str) -> SimMargin:
    """simIReff's effContFitAndSelect / effDiscFitAndSelect (AIC) for one run's scores.

    Parameters
    ----------
    scores : array_like
        One run's scores over topics, in [0, 1].
    measure : str
        Its measure (which family of margins: continuous or discrete).

    Returns
    -------
    SimMargin
    """
    x = np.asarray(scores, dtype=np.float64).reshape(-1)
    if x.size < 3 or not np.isfinite(x).all() or (x < 0).any() or (x > 1).any():
        raise InputError("a margin needs at least 3 finite scores in [0, 1]")
    best = None
    for fit in _candidates(measure).values():
        try:
            with np.errstate(all="ignore"):
                m = fit(x)
        except (ValueError, FloatingPointError, ZeroDivisionError, OverflowError):
            continue  # effFit: try(...), a failed candidate is skipped
        if np.isfinite(m.aic) and (best is None or m.aic < best.aic):
            best = m
    if best is None:
        raise InputError("unable to fit a margin (every candidate failed)")
    return best


def margin_from(family: str, params: dict, scores, measure: str) -> SimMargin:
    """Rebuild a fitted margin from its family and parameters (and the run's scores)."""
    x = np.asarray(scores, dtype=np.float64).reshape(-1)
    with np.errstate(all="ignore"):
        return _candidates(measure)[family](x, params=params)


def h1_transforms(margins, delta: float) -> dict:
    """The effect-size transformations of `CollectionFit.h1_pairs` for one collection's
    ``margins`` and ``delta``, as stored in the fit file: {"pairs": {baseline: [[e, a, b],
    ...]}, "failed": n} (a job of `prepare_h1`)."""
    mu = np.array([m.mean for m in margins])
    S = len(mu)
    order = np.argsort(-mu, kind="stable")
    baselines = order[round(S * 0.25):]  # R's round (half to even), as Python's
    out, failed = {}, 0
    for i in sorted(int(v) for v in baselines):
        js = [int(j) for j in np.argsort(np.abs(mu - mu[i] - delta), kind="stable") if j != i][:10]
        ok = []
        for j in js:
            t = margins[j].transformed(mu[i] + delta)
            if t is None:
                failed += 1
            else:
                ok.append([j, t.transform[0], t.transform[1]])
        if ok:
            out[str(i)] = ok
    return {"pairs": out, "failed": failed}
